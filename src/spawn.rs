//! `agentwatch spawn`: start an agent in a new tmux window with everything agentwatch needs
//! to resume it later recorded on the pane, on the same tmux command line (race-free: an
//! agent that dies at once still leaves a dead pane). Does I/O.

use std::path::{Path, PathBuf};

use crate::agent::{fill, AgentDef, Agents};
use crate::resume::ARGS_OPTION;
use crate::tmux::client::{Tmux, TmuxError};
use crate::tmux::words;

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct Request {
    pub agent: String,
    pub cwd: Option<PathBuf>,
    pub name: Option<String>,
    pub session: String,
    pub args: Vec<String>,
}

/// A checked request: the kind, the directory, the argv, and the pane options to set.
pub type Prepared = (AgentDef, PathBuf, Vec<String>, Vec<(String, String)>);

/// Checks the request and builds the argv and pane options. Every error is one line that
/// names the thing and the fix.
pub fn prepare(req: &Request, agents: &Agents, new_id: &str) -> Result<Prepared, String> {
    let def = agents.get(&req.agent).cloned().ok_or_else(|| {
        let known: Vec<&str> = agents.all().iter().map(|d| d.name.as_str()).collect();
        format!(
            "unknown agent kind {:?}: known kinds are {}; add [agents.{}] to the config for a new one",
            req.agent,
            known.join(", "),
            req.agent
        )
    })?;
    let program = def.start.first().cloned().unwrap_or_default();
    if find_program(&program).is_none() {
        return Err(format!(
            "{program} not found on PATH: install {}, or set start = [\"/path/to/{program}\", ...] in [agents.{}]",
            def.name, def.name
        ));
    }
    let cwd = match &req.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .ok()
        .filter(|d| d.is_dir())
        .ok_or_else(|| format!("--cwd {}: no such directory", cwd.display()))?;
    let id = def.start_takes_id().then(|| new_id.to_string());
    let mut argv = fill(&def.start, id.as_deref());
    argv.extend(req.args.iter().cloned());
    let mut options = vec![
        ("remain-on-exit".to_string(), "on".to_string()),
        ("@agentwatch_agent".to_string(), def.name.clone()),
        (
            "@agentwatch_cwd".to_string(),
            cwd.to_string_lossy().into_owned(),
        ),
    ];
    if let Some(id) = id {
        options.push(("@agentwatch_session_id".to_string(), id));
    }
    if !req.args.is_empty() {
        let json = serde_json::to_string(&req.args).map_err(|e| e.to_string())?;
        options.push((ARGS_OPTION.to_string(), json));
    }
    Ok((def, cwd, argv, options))
}

/// Starts the window; returns the new pane id (`%N`).
pub async fn spawn(tmux: &Tmux, req: &Request, agents: &Agents) -> Result<String, String> {
    let new_id = uuid::Uuid::new_v4().to_string();
    let (def, cwd, argv, options) = prepare(req, agents, &new_id)?;
    let name = req.name.clone().unwrap_or_else(|| def.name.clone());
    open_window(tmux, &req.session, &name, &cwd, &argv, &options).await
}

/// Opens a window running `argv` (session created, with the server, if missing) and sets
/// `options` on its pane in the same tmux call; returns the pane id.
pub async fn open_window(
    tmux: &Tmux,
    session: &str,
    name: &str,
    cwd: &Path,
    argv: &[String],
    options: &[(String, String)],
) -> Result<String, String> {
    for _ in 0..5 {
        let exists = tmux
            .run(["has-session", "-t", &format!("={session}")])
            .await
            .is_ok();
        let (mut args, target) = if exists {
            let out = tmux
                .run([
                    "list-windows",
                    "-t",
                    &format!("={session}"),
                    "-F",
                    "#{window_index}",
                ])
                .await
                .map_err(|e| e.to_string())?;
            let next = String::from_utf8_lossy(&out)
                .lines()
                .filter_map(|l| l.trim().parse::<u32>().ok())
                .max()
                .map_or(0, |m| m + 1);
            let target = format!("={session}:{next}");
            (
                vec![
                    "new-window".to_string(),
                    "-d".into(),
                    "-t".into(),
                    target.clone(),
                ],
                target,
            )
        } else {
            let args = [
                "start-server",
                ";",
                "set-option",
                "-s",
                "exit-empty",
                "off",
                ";",
                "new-session",
                "-d",
                "-s",
            ];
            let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            v.push(words::arg(session));
            (v, format!("={session}:"))
        };
        args.extend([
            "-n".into(),
            words::arg(&words::format_literal(name)),
            "-c".into(),
            words::arg(&words::format_literal(&cwd.to_string_lossy())),
            "-P".into(),
            "-F".into(),
            "#{pane_id}".into(),
            "--".into(),
        ]);
        args.extend(argv.iter().map(|w| words::arg(w)));
        for (k, v) in options {
            args.extend([
                ";".into(),
                "set-option".into(),
                "-p".into(),
                "-t".into(),
                target.clone(),
                k.clone(),
                words::arg(v),
            ]);
        }
        match tmux.run(&args).await {
            Ok(out) => {
                let id = String::from_utf8_lossy(&out)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string();
                return Ok(id);
            }
            // Another spawn took the index or created the session first: try again.
            Err(TmuxError::Failed { detail })
                if detail.contains("in use") || detail.contains("duplicate session") =>
            {
                continue
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Err("could not create the window: the session kept changing under us; try again".into())
}

/// The program's path via PATH (or itself, if it contains a slash and exists).
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let p = Path::new(program);
        return is_executable(p).then(|| p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| is_executable(p))
    })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(agent: &str) -> Request {
        Request {
            agent: agent.into(),
            cwd: Some(PathBuf::from("/")),
            name: None,
            session: "agents".into(),
            args: vec![],
        }
    }

    #[test]
    fn an_unknown_kind_names_the_known_ones_and_the_fix() {
        let e = prepare(&req("klaude"), &Agents::default(), "x").unwrap_err();
        assert!(e.contains("unknown agent kind \"klaude\""), "{e}");
        assert!(e.contains("claude, codex"), "{e}");
    }

    #[test]
    fn a_missing_program_and_a_missing_directory_are_refused() {
        let mut defs = crate::agent::builtin();
        defs[0].start = vec!["definitely-not-installed-xyz".into()];
        let e = prepare(&req("claude"), &Agents::new(defs), "x").unwrap_err();
        assert!(
            e.starts_with("definitely-not-installed-xyz not found on PATH"),
            "{e}"
        );

        let mut defs = crate::agent::builtin();
        defs[0].start = vec!["sh".into(), "--session-id".into(), "{session_id}".into()];
        let mut r = req("claude");
        r.cwd = Some(PathBuf::from("/no/such/dir"));
        let e = prepare(&r, &Agents::new(defs), "x").unwrap_err();
        assert_eq!(e, "--cwd /no/such/dir: no such directory");
    }

    #[test]
    fn the_id_goes_into_the_argv_and_the_options_and_extra_args_are_kept() {
        let mut defs = crate::agent::builtin();
        defs[0].start = vec!["sh".into(), "--session-id".into(), "{session_id}".into()];
        let mut r = req("claude");
        r.args = vec!["--model".into(), "x y".into()];
        let (_, cwd, argv, opts) = prepare(&r, &Agents::new(defs), "ID-1").unwrap();
        assert_eq!(cwd, PathBuf::from("/"));
        assert_eq!(argv, ["sh", "--session-id", "ID-1", "--model", "x y"]);
        assert!(opts.contains(&("@agentwatch_session_id".into(), "ID-1".into())));
        assert!(opts.contains(&(ARGS_OPTION.into(), r#"["--model","x y"]"#.into())));
        assert_eq!(opts[0], ("remain-on-exit".into(), "on".into()));
    }
}
