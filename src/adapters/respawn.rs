//! Carrying out a relaunch: gather the facts the core decides on (`core::relaunch`),
//! capture the dead pane's whole output into a crash record, then `respawn-pane` without
//! `-k` (tmux refuses a live pane, so two relaunchers can never both win) or type at the
//! prompt. Does I/O, decides nothing.

use std::path::{Path, PathBuf};

use crate::adapters::discover::Dirs;
use crate::adapters::tmux::client::{Tmux, TmuxError};
use crate::core::agent::SESSION_ID;
use crate::core::msg::{CrashMeta, DiscoverRequest};
use crate::core::pane::Opt;
use crate::core::relaunch::{self, Facts, How, PaneNow, Program};
use crate::core::resume::{Failure, Plan};
use crate::core::time::Millis;
use crate::core::words;

/// Where crash records go: `$XDG_DATA_HOME/agentwatch/crashes`.
pub fn default_crash_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "agentwatch").map(|d| d.data_dir().join("crashes"))
}

/// Relaunches per `plan`: gathers what the core decides on (the directory, the program, a
/// live process holding the session, the agent's records, the pane now), has the core
/// decide, then saves the crash record and respawns (or types at the prompt). Returns the
/// plan as carried out (a fresh start's new id filled in, or the session started again
/// under its id when the agent keeps no record of it).
pub async fn relaunch(
    tmux: &Tmux,
    mut plan: Plan,
    meta: &CrashMeta,
    crash_dir: Option<&Path>,
    stores: &Dirs,
    now: Millis,
) -> Result<Plan, Failure> {
    if plan.session_id.as_deref() == Some(SESSION_ID) {
        let id = uuid::Uuid::new_v4().to_string();
        plan.argv = crate::core::agent::fill(&plan.argv, Some(&id));
        plan.session_id = Some(id);
    }
    let facts = facts(tmux, &plan, stores).await?;
    let (plan, how) = relaunch::decide(plan, &facts)?;
    // Saved only now: a relaunch refused leaves the dead pane and its output as they are
    // (each refused r would otherwise add a record of the same death).
    let output = tmux.capture_history(plan.pane).await.map_err(|e| match e {
        TmuxError::NoSuchPane { .. } => Failure::lasting("the pane is gone"),
        e => Failure::from(format!("could not read its output first: {e}")),
    })?;
    if let Some(dir) = crash_dir {
        crate::adapters::store::crash_records::save(dir, &plan, meta, &output, now).map_err(|e| {
            Failure {
                unsaved: Some(crate::core::errors::StoreError {
                    what: "crash record",
                    path: dir.to_path_buf(),
                    reason: e.to_string(),
                }),
                ..Failure::lasting(format!(
                    "could not save the crash record in {} ({e}): relaunch refused so its output is not lost",
                    dir.display()
                ))
            }
        })?;
    }
    let mut args = match &how {
        How::Respawn => respawn_args(&plan),
        How::Type(line) => type_args(&plan, line),
    };
    record_args(&mut args, &plan, meta);
    match tmux.run(&args).await {
        Ok(_) => Ok(plan),
        Err(e) => Err(relaunch::failed(&e)),
    }
}

/// What the core decides a relaunch on, asked where it would run. Another host's files and
/// processes are not this machine's: there only tmux is asked.
async fn facts(tmux: &Tmux, plan: &Plan, stores: &Dirs) -> Result<Facts, Failure> {
    let here = !tmux.remote();
    let mut facts = Facts {
        remote: !here,
        dir_exists: here.then(|| Path::new(&plan.cwd).is_dir()),
        ..Facts::default()
    };
    if facts.dir_exists == Some(false) {
        return Ok(facts);
    }
    if plan.shell.is_none() {
        facts.program = program(tmux, plan).await;
    }
    if let (Some(id), false, true) = (plan.session_id.clone(), plan.fresh, here) {
        let (agent, not) = (
            plan.agent.clone(),
            plan.dead_pid.into_iter().collect::<Vec<_>>(),
        );
        let dirs = stores.clone();
        facts.held_by = tokio::task::spawn_blocking(move || {
            crate::adapters::discover::live_elsewhere_in(&agent, &id, &not, &dirs)
        })
        .await
        .ok()
        .flatten();
    }
    if let (Some(_), Some(id), true) = (&plan.unrecorded, &plan.session_id, here) {
        let (agent, cwd, id) = (plan.agent.clone(), plan.cwd.clone(), id.clone());
        let dirs = stores.clone();
        facts.recorded = tokio::task::spawn_blocking(move || {
            crate::adapters::discover::recorded_in(&agent, &cwd, &id, &dirs)
        })
        .await
        .ok()
        .flatten();
    }
    facts.pane = pane_now(tmux, plan).await?;
    Ok(facts)
}

/// The pane as it is now (`None`: gone), with its terminal's foreground group for a shell
/// prompt to type at.
async fn pane_now(tmux: &Tmux, plan: &Plan) -> Result<Option<PaneNow>, Failure> {
    let f = match pane_fields(
        tmux,
        plan,
        &[
            "pane_pid",
            "pane_dead",
            "pane_current_command",
            "pane_current_path",
        ],
    )
    .await
    {
        Ok(f) => f,
        Err(None) => return Ok(None),
        Err(Some(e)) => return Err(Failure::from(format!("could not read the pane: {e}"))),
    };
    let [pid, dead, command, path] = f.as_slice() else {
        return Ok(None);
    };
    let pid = pid.trim().parse::<u32>().ok();
    let foreground = match (&plan.shell, pid) {
        // On another host, its /proc is asked there: this machine's pid of that number is
        // another process.
        (Some(_), Some(pid)) => match tmux.reach() {
            crate::adapters::tmux::reach::Reach::Local => {
                crate::adapters::procs::local::foreground_group(pid)
            }
            crate::adapters::tmux::reach::Reach::Ssh(host) => {
                crate::adapters::procs::remote::remote_foreground_group(host, pid).await
            }
        },
        _ => None,
    };
    Ok(Some(PaneNow {
        pid,
        dead: dead == "1",
        current_command: command.clone(),
        current_path: path.clone(),
        foreground,
    }))
}

/// Whether tmux would find the plan's program: `None` when that cannot be told.
///
/// Where tmux looks: here, agentwatch's own PATH, since a `respawn-pane` run by a client
/// that is not attached (ours) gives the pane that client's PATH; there, the PATH of the
/// pane's session, since the command goes over the control connection, an attached client
/// (tmux then keeps the session's environment). A name with `/` is a path from the pane's
/// directory. One word is run by the pane's shell: not asked.
async fn program(tmux: &Tmux, plan: &Plan) -> Option<Program> {
    let [program, _, ..] = plan.argv.as_slice() else {
        return None;
    };
    match tmux.reach() {
        crate::adapters::tmux::reach::Reach::Local => {
            let cwd = Path::new(&plan.cwd);
            let path = program.contains('/');
            let found = if path {
                crate::adapters::which::find_program(&cwd.join(program).to_string_lossy())
            } else {
                crate::adapters::which::find_in_from(program, &tmux.client_path()?, cwd)
            };
            Some(match (found, path) {
                (Some(_), _) => Program::Found,
                (None, true) => Program::NotExecutable,
                (None, false) => Program::NotOnPath,
            })
        }
        crate::adapters::tmux::reach::Reach::Ssh(_) => {
            let found = found_there(tmux, &plan.pane.to_string(), &plan.argv).await?;
            Some(if found {
                Program::Found
            } else {
                Program::NotOnPath
            })
        }
    }
}

/// Whether tmux on another host would find `program` for a pane it starts in `target`'s
/// session (a session or pane; a session not there yet has the global environment), over
/// the control connection: the PATH of that session, then that machine asked with one ssh.
/// `None` when that cannot be told: one word (run by the pane's shell, whose startup files
/// may add to PATH), a relative path, words that would need quoting, no answer.
pub async fn found_there(tmux: &Tmux, target: &str, argv: &[String]) -> Option<bool> {
    let crate::adapters::tmux::reach::Reach::Ssh(host) = tmux.reach() else {
        return None;
    };
    let [program, _, ..] = argv else {
        return None;
    };
    if program.contains('/') && !program.starts_with('/') {
        return None;
    }
    let path = session_path(tmux, target).await?;
    let script = program_script(&path, program)?;
    let out = host.run_script(&script, REMOTE_CHECK).await.ok()?;
    match String::from_utf8_lossy(&out).trim() {
        "found" => Some(true),
        "missing" => Some(false),
        _ => None,
    }
}

/// A script that prints `found` or `missing`: whether `program` is an executable on `path`
/// (or is one, given as a path) on the machine that runs it. `None` where the words would
/// need quoting: [`SshServer::run_script`] takes no quotes, and a guess is worse than none.
///
/// [`SshServer::run_script`]: crate::adapters::tmux::reach::SshServer::run_script
fn program_script(path: &str, program: &str) -> Option<String> {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+,".contains(c))
    };
    // `=` and `~` are left out too: a shell expands `~` after `:` in an assignment, and
    // execvp does not. An empty or relative entry is a directory under the pane's
    // directory for execvp, and under the login's for this script: not told.
    if !plain(path)
        || !plain(program)
        || program.starts_with('-')
        || path.split(':').any(|d| !d.starts_with('/'))
    {
        return None;
    }
    Some(format!(
        "PATH={path}; if command -v {program} >/dev/null 2>&1; then echo found; else echo missing; fi"
    ))
}

/// How long a host may take to say whether a program is there.
const REMOTE_CHECK: std::time::Duration = std::time::Duration::from_secs(5);

/// The PATH a pane started in `target`'s session gets from its server when the command
/// comes from an attached client: the session's own value, else the global one, else
/// tmux's default.
async fn session_path(tmux: &Tmux, target: &str) -> Option<String> {
    let value = |out: Vec<u8>| {
        let text = String::from_utf8_lossy(&out);
        let line = text.trim_end_matches('\n');
        // `-PATH`: removed at this level, so the pane gets none from it.
        (line != "-PATH").then(|| line.strip_prefix("PATH=").map(str::to_string))
    };
    match tmux.run(["show-environment", "-t", target, "PATH"]).await {
        Ok(out) => match value(out) {
            Some(path) => return path,
            None => return Some(DEFAULT_PATH.to_string()),
        },
        // Not set in the session: the global value.
        Err(TmuxError::Failed { detail }) if detail.contains("unknown variable") => {}
        // A session that spawn is about to make gets the global environment; a pane that
        // is gone is the relaunch's to say.
        Err(TmuxError::Failed { detail } | TmuxError::NoSuchPane { detail })
            if !target.starts_with('%')
                && (detail.contains("can't find session")
                    || detail.contains("no such session")) => {}
        Err(_) => return None,
    }
    match tmux.run(["show-environment", "-g", "PATH"]).await {
        Ok(out) => value(out).map(|p| p.unwrap_or_else(|| DEFAULT_PATH.to_string())),
        Err(TmuxError::Failed { detail }) if detail.contains("unknown variable") => {
            Some(DEFAULT_PATH.to_string())
        }
        Err(_) => None,
    }
}

/// tmux's PATH for a pane whose environment has none (`_PATH_DEFPATH`).
const DEFAULT_PATH: &str = "/usr/bin:/bin";

/// Fields of the plan's pane, read now (`display-message` prints an empty line for a missing
/// pane, so the pane id is asked for too and checked): `Err(None)` when the pane is gone,
/// `Err(Some(why))` when tmux could not be asked.
async fn pane_fields(
    tmux: &Tmux,
    plan: &Plan,
    names: &[&str],
) -> Result<Vec<String>, Option<String>> {
    let pane = plan.pane.to_string();
    // A printable mark with this process's nonce: a path may hold anything, and tmux 3.5a
    // escapes control bytes in the format itself.
    let marks = crate::adapters::tmux::format::Marks::ours();
    let sep = format!("{}{}", char::from(marks.field), marks.nonce);
    let mut format = String::from("#{pane_id}");
    for n in names {
        format.push_str(&format!("{sep}#{{{n}}}"));
    }
    let out = tmux
        .run(["display-message", "-p", "-t", &pane, &format])
        .await
        .map_err(|e| match e {
            TmuxError::NoSuchPane { .. } => None,
            e => Some(e.to_string()),
        })?;
    let text = String::from_utf8_lossy(&out);
    let mut f = text.trim_end_matches('\n').split(sep.as_str());
    if f.next() != Some(pane.as_str()) {
        // Gone: the next poll lists the panes, whatever told it so far (with no control
        // connection, nothing else says a dead pane was killed).
        tmux.notices()
            .shape
            .store(true, std::sync::atomic::Ordering::SeqCst);
        return Err(None);
    }
    Ok(f.map(str::to_string).collect())
}

/// `respawn-pane` without `-k`, in the recorded directory, with the argv.
fn respawn_args(plan: &Plan) -> Vec<String> {
    let pane = plan.pane.to_string();
    let mut args: Vec<String> = vec![
        "respawn-pane".into(),
        "-t".into(),
        pane.clone(),
        "-c".into(),
        words::arg(&words::format_literal(&plan.cwd)),
        "--".into(),
    ];
    args.extend(plan.argv.iter().map(|w| words::arg(w)));
    args
}

/// For an agent typed at a shell prompt: `send-keys` the command line the core built.
fn type_args(plan: &Plan, line: &str) -> Vec<String> {
    let pane = plan.pane.to_string();
    vec![
        "send-keys".into(),
        "-t".into(),
        pane.clone(),
        "-l".into(),
        "--".into(),
        words::arg(line),
        ";".into(),
        "send-keys".into(),
        "-t".into(),
        pane,
        "Enter".into(),
    ]
}

/// Records on the pane, in the same tmux call, how the previous run ended and the session id.
fn record_args(args: &mut Vec<String>, plan: &Plan, meta: &CrashMeta) {
    let previous = format!(
        "{}|{}",
        meta.exit_short,
        meta.died_at.map(|t| t.to_string()).unwrap_or_default()
    );
    // What runs next is agentwatch's: the records are its (see core::occupant).
    let mut sets = vec![
        (Opt::Previous, previous),
        (Opt::Occupant, crate::core::occupant::NEXT.to_string()),
    ];
    match &plan.session_id {
        Some(id) => sets.push((Opt::SessionId, id.clone())),
        // A fresh start of an agent that takes no id of ours (codex): the old session is
        // not its; its own is found in its records once it has one.
        None if plan.fresh => sets.push((Opt::SessionId, String::new())),
        None => {}
    }
    for (name, value) in sets {
        args.extend([
            ";".into(),
            "set-option".into(),
            "-p".into(),
            "-t".into(),
            plan.pane.to_string(),
            name.name().into(),
            words::arg(&value),
        ]);
    }
}

/// Looks for a session id in the agent's own records (and, for a dead codex pane, its
/// exit line in the retained output).
pub async fn discover(
    tmux: &Tmux,
    req: &DiscoverRequest,
    stores: &Dirs,
) -> Option<(String, &'static str)> {
    // The agents that print their session's id when they exit.
    let output = if req.dead && matches!(req.agent.as_str(), "codex" | "opencode") {
        tmux.capture_history(req.pane)
            .await
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    } else {
        None
    };
    let query = crate::adapters::discover::Query {
        agent: req.agent.clone(),
        cwd: req.cwd.clone(),
        pids: req.pids.clone(),
        // Without a start time the codex rollout lookup is skipped: a resumed codex keeps
        // writing an old rollout file, and a new one in the same directory is not its own.
        started_at: if req.resumed && req.agent == "codex" {
            None
        } else {
            req.started_at
        },
        died_at: req.died_at,
        output,
        claude_dir: stores.claude.clone(),
        codex_dir: stores.codex.clone(),
        gemini_dir: stores.gemini.clone(),
    };
    let found = tokio::task::spawn_blocking(move || crate::adapters::discover::discover(&query))
        .await
        .ok()
        .flatten();
    found.map(|(id, source)| (id, source.describe()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_question_runs_the_lookup_a_pane_would_and_refuses_words_that_need_quotes() {
        let script = program_script("/home/me/.local/bin:/usr/bin", "claude").unwrap();
        let run = |path: &str, program: &str| {
            let script = program_script(path, program).unwrap();
            let out = std::process::Command::new("sh")
                .args(["-c", &script])
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        assert!(script.starts_with("PATH=/home/me/.local/bin:/usr/bin; "));
        assert_eq!(run("/usr/bin:/bin", "sh"), "found");
        assert_eq!(run("/nonexistent", "sh"), "missing");
        assert_eq!(run("/nonexistent", "/bin/sh"), "found");
        assert_eq!(run("/usr/bin:/bin", "/nonexistent/claude"), "missing");
        for (path, program) in [
            ("/usr/bin", "clau'de"),
            ("/usr/bin", "claude;rm"),
            ("/usr/bin", "$(id)"),
            ("/usr/bin", "-v"),
            ("/my dir/bin", "claude"),
            ("~/bin:/usr/bin", "claude"),
            ("/usr/bin", ""),
            ("/usr/bin::/bin", "claude"),
            ("node_modules/.bin:/usr/bin", "claude"),
            (".:/usr/bin", "claude"),
        ] {
            assert_eq!(program_script(path, program), None, "{path} {program}");
        }
    }
}
