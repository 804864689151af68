//! `agentwatch spawn`: start an agent in a new tmux window with everything agentwatch needs
//! to resume it later recorded on the pane, on the same tmux command line (race-free: an
//! agent that dies at once still leaves a dead pane). Does I/O.

use std::path::PathBuf;

use crate::adapters::tmux::client::{Tmux, TmuxError};
use crate::adapters::tmux::window::open_window;
use crate::adapters::which::find_program;
use crate::core::agent::{fill, AgentDef, Agents};
use crate::core::pane::Opt;
use crate::core::resume::ARGS_OPTION;

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct Request {
    /// On another host: its directories are not checked from here, and its PATH is asked of
    /// it (tmux's PATH there, with one ssh).
    pub remote: bool,
    pub agent: String,
    pub cwd: Option<PathBuf>,
    pub name: Option<String>,
    pub session: String,
    pub args: Vec<String>,
}

/// Why an agent was not started. Each names the thing and the fix.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("{flag} {name:?}: {why}")]
    BadName {
        flag: &'static str,
        name: String,
        why: &'static str,
    },
    #[error("unknown agent kind {kind:?}: known kinds are {known}; add [agents.{kind}] to the config for a new one")]
    UnknownKind { kind: String, known: String },
    #[error("{program} not found on PATH: install {kind}, or set start = [\"/path/to/{program}\", ...] in [agents.{kind}]")]
    NotInstalled { program: String, kind: String },
    #[error("{program} is not on the PATH of tmux there: install {kind} there, or set start = [\"/path/to/{program}\", ...] in [agents.{kind}]")]
    NotInstalledThere { program: String, kind: String },
    #[error("--host needs --cwd /a/directory/there (an absolute path on that host)")]
    NoCwdThere,
    #[error("cannot read the current directory: {0}")]
    CurrentDir(std::io::Error),
    #[error("--cwd {}: no such directory", .0.display())]
    NoSuchDir(PathBuf),
    #[error("the extra arguments cannot be recorded on the pane: {0}")]
    Args(serde_json::Error),
    #[error(transparent)]
    Tmux(#[from] TmuxError),
}

/// A checked request: the kind, the directory, the argv, and the pane options to set.
pub type Prepared = (AgentDef, PathBuf, Vec<String>, Vec<(Opt, String)>);

/// Checks the request and builds the argv and pane options. Every error is one line that
/// names the thing and the fix.
pub fn prepare(req: &Request, agents: &Agents, new_id: &str) -> Result<Prepared, SpawnError> {
    // Checked before anything starts: tmux would start the agent and then fail to address
    // the window, leaving a pane with nothing recorded on it.
    check_name("--target", &req.session, true)?;
    if let Some(name) = &req.name {
        check_name("--name", name, false)?;
    }
    let def = agents
        .get(&req.agent)
        .cloned()
        .ok_or_else(|| SpawnError::UnknownKind {
            kind: req.agent.clone(),
            known: agents
                .all()
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let program = def.start.first().cloned().unwrap_or_default();
    if !req.remote && find_program(&program).is_none() {
        return Err(SpawnError::NotInstalled {
            program,
            kind: def.name,
        });
    }
    let cwd = match (&req.cwd, req.remote) {
        (Some(d), true) if d.is_absolute() => d.clone(),
        (_, true) => return Err(SpawnError::NoCwdThere),
        (Some(d), false) => d.clone(),
        (None, false) => std::env::current_dir().map_err(SpawnError::CurrentDir)?,
    };
    let cwd = if req.remote {
        cwd
    } else {
        std::fs::canonicalize(&cwd)
            .ok()
            .filter(|d| d.is_dir())
            .ok_or(SpawnError::NoSuchDir(cwd))?
    };
    let id = def.start_takes_id().then(|| new_id.to_string());
    let mut argv = fill(&def.start, id.as_deref());
    argv.extend(req.args.iter().cloned());
    let mut options = vec![
        (Opt::RemainOnExit, "on".to_string()),
        (Opt::Agent, def.name.clone()),
        (Opt::Cwd, cwd.to_string_lossy().into_owned()),
        (Opt::Occupant, crate::core::occupant::NEXT.to_string()),
    ];
    if let Some(id) = id {
        options.push((Opt::SessionId, id));
    }
    if !req.args.is_empty() {
        let json = serde_json::to_string(&req.args).map_err(SpawnError::Args)?;
        options.push((ARGS_OPTION, json));
    }
    Ok((def, cwd, argv, options))
}

/// A session (`target`) or window name tmux can be addressed by and that shows as typed: not
/// empty, no control characters, and for a session none of the target separators `:` `.`.
fn check_name(flag: &'static str, name: &str, session: bool) -> Result<(), SpawnError> {
    let bad = |why| {
        Err(SpawnError::BadName {
            flag,
            name: crate::core::text::printable(name),
            why,
        })
    };
    if name.trim().is_empty() {
        return bad("a name cannot be empty");
    }
    if name.chars().any(char::is_control) {
        return bad("a name cannot hold control characters (shown as ?)");
    }
    if session && name.contains([':', '.']) {
        return bad(
            "tmux reads ':' and '.' in a session name as window and pane; use a name without them",
        );
    }
    Ok(())
}

impl SpawnError {
    /// The error in the words of the dashboard's start form (`s`), whose lines are named
    /// `directory`, `window name` and `tmux session`, not by `spawn`'s flags.
    pub fn form_words(&self) -> String {
        match self {
            SpawnError::NoSuchDir(d) => format!("directory {}: no such directory", d.display()),
            SpawnError::BadName { flag, name, why } => {
                let line = match *flag {
                    "--name" => "window name",
                    "--target" => "tmux session",
                    other => other,
                };
                format!("{line} {name:?}: {why}")
            }
            e => e.to_string(),
        }
    }
}

/// Starts the window; returns the new pane id (`%N`).
pub async fn spawn(tmux: &Tmux, req: &Request, agents: &Agents) -> Result<String, SpawnError> {
    let new_id = uuid::Uuid::new_v4().to_string();
    let (def, cwd, argv, options) = prepare(req, agents, &new_id)?;
    // There, tmux would fail to exec it and show the new pane dead with exit 1.
    let program = argv.first().map_or("", String::as_str);
    if req.remote
        && crate::adapters::respawn::found_there(tmux, &format!("={}", req.session), &argv).await
            == Some(false)
    {
        return Err(SpawnError::NotInstalledThere {
            program: program.to_string(),
            kind: def.name,
        });
    }
    let name = req.name.clone().unwrap_or_else(|| def.name.clone());
    Ok(open_window(tmux, &req.session, &name, &cwd, &argv, &options).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(agent: &str) -> Request {
        Request {
            remote: false,
            agent: agent.into(),
            cwd: Some(PathBuf::from("/")),
            name: None,
            session: "agents".into(),
            args: vec![],
        }
    }

    #[test]
    fn an_unknown_kind_names_the_known_ones_and_the_fix() {
        let e = prepare(&req("klaude"), &Agents::default(), "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown agent kind \"klaude\""), "{e}");
        assert!(e.contains("claude, codex"), "{e}");
    }

    #[test]
    fn a_missing_program_and_a_missing_directory_are_refused() {
        let mut defs = crate::core::agent::builtin();
        defs[0].start = vec!["definitely-not-installed-xyz".into()];
        let e = prepare(&req("claude"), &Agents::new(defs), "x")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("definitely-not-installed-xyz not found on PATH"),
            "{e}"
        );

        let mut defs = crate::core::agent::builtin();
        defs[0].start = vec!["sh".into(), "--session-id".into(), "{session_id}".into()];
        let mut r = req("claude");
        r.cwd = Some(PathBuf::from("/no/such/dir"));
        let e = prepare(&r, &Agents::new(defs), "x")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "--cwd /no/such/dir: no such directory");
    }

    #[test]
    fn the_id_goes_into_the_argv_and_the_options_and_extra_args_are_kept() {
        let mut defs = crate::core::agent::builtin();
        defs[0].start = vec!["sh".into(), "--session-id".into(), "{session_id}".into()];
        let mut r = req("claude");
        r.args = vec!["--model".into(), "x y".into()];
        let (_, cwd, argv, opts) = prepare(&r, &Agents::new(defs), "ID-1").unwrap();
        assert_eq!(cwd, PathBuf::from("/"));
        assert_eq!(argv, ["sh", "--session-id", "ID-1", "--model", "x y"]);
        assert!(opts.contains(&(Opt::SessionId, "ID-1".into())));
        assert!(opts.contains(&(ARGS_OPTION, r#"["--model","x y"]"#.into())));
        assert_eq!(opts[0], (Opt::RemainOnExit, "on".into()));
    }

    #[test]
    fn the_start_form_is_told_in_its_own_words_not_spawns_flags() {
        let mut defs = crate::core::agent::builtin();
        defs[0].start = vec!["sh".into()];
        let agents = Agents::new(defs);
        let mut r = req("claude");
        r.session = "a:b".into();
        assert!(prepare(&r, &agents, "x")
            .unwrap_err()
            .form_words()
            .starts_with("tmux session \"a:b\": tmux reads"));
        let mut r = req("claude");
        r.cwd = Some("/no/such/dir/here".into());
        assert_eq!(
            prepare(&r, &agents, "x").unwrap_err().form_words(),
            "directory /no/such/dir/here: no such directory"
        );
    }

    #[test]
    fn names_tmux_cannot_address_are_refused_before_anything_starts() {
        let mut defs = crate::core::agent::builtin();
        defs[0].start = vec!["sh".into()];
        let agents = Agents::new(defs);
        for (session, name, want) in [
            ("a:b.c", None, "--target \"a:b.c\": tmux reads ':' and '.'"),
            ("w.1", None, "--target \"w.1\": tmux reads"),
            ("", None, "--target \"\": a name cannot be empty"),
            (
                "ok",
                Some("x\u{1b}[2Jy"),
                "--name \"x?[2Jy\": a name cannot hold control",
            ),
            (
                "ok",
                Some("a\nb"),
                "--name \"a?b\": a name cannot hold control",
            ),
        ] {
            let mut r = req("claude");
            r.session = session.into();
            r.name = name.map(str::to_string);
            let e = prepare(&r, &agents, "x").unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
            assert!(!e.chars().any(char::is_control), "{e:?}");
        }
        let mut r = req("claude");
        r.name = Some("api: v2.1".into());
        assert!(
            prepare(&r, &agents, "x").is_ok(),
            "a window name may hold ':' and '.'"
        );
    }
}
