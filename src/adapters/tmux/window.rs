//! Opening a window for an agent: the session (and server) created if missing, the pane's
//! options set on the same command line, so a fast death still leaves a dead pane.

use std::path::Path;

use super::client::{Tmux, TmuxError};
use crate::core::pane::Opt;
use crate::core::words;

/// The directory of a server's socket, made where it is tmux's own (`tmux-<uid>`, private)
/// and missing (a fresh machine, after a reboot): tmux makes it only for a server it names
/// itself, not for one given with `-S`, as agentwatch gives it.
fn socket_dir(socket: &Path) -> Result<(), TmuxError> {
    use std::os::unix::fs::DirBuilderExt;
    let Some(dir) = socket.parent() else {
        return Ok(());
    };
    // SAFETY: getuid has no preconditions and cannot fail.
    let own = format!("tmux-{}", unsafe { libc::getuid() });
    if dir.exists() || dir.file_name().is_none_or(|n| n != own.as_str()) {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(dir)
        .or_else(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Ok(()),
            _ => Err(e),
        })
        .map_err(|e| TmuxError::Failed {
            detail: format!("cannot create {} for tmux's socket: {e}", dir.display()),
        })
}

/// Opens a window running `argv` (session created, with the server, if missing) and sets
/// `options` on its pane in the same tmux call; returns the pane id.
pub async fn open_window(
    tmux: &Tmux,
    session: &str,
    name: &str,
    cwd: &Path,
    argv: &[String],
    options: &[(Opt, String)],
) -> Result<String, TmuxError> {
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
                .await?;
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
                k.name().to_string(),
                words::arg(v),
            ]);
        }
        let creates = !exists && !tmux.remote();
        let ran = if creates {
            socket_dir(tmux.socket())?;
            tmux.exec_said(&args, tmux.timeout()).await
        } else {
            tmux.run(&args).await.map(|out| (out, String::new()))
        };
        match ran {
            Ok((out, said)) => {
                let id = String::from_utf8_lossy(&out)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string();
                // tmux exits 0 when it could not create its server ("error creating …"):
                // the pane is confirmed, or tmux's words are the error.
                let there = id.starts_with('%')
                    && tmux
                        .run(["display-message", "-p", "-t", &id, "#{pane_id}"])
                        .await
                        .is_ok_and(|o| String::from_utf8_lossy(&o).trim() == id);
                if !there {
                    return Err(TmuxError::Failed {
                        detail: if said.is_empty() {
                            format!("tmux started no window (it printed {id:?})")
                        } else {
                            said
                        },
                    });
                }
                return Ok(id);
            }
            // Another spawn took the index or created the session first: try again.
            Err(TmuxError::Failed { detail })
                if detail.contains("in use") || detail.contains("duplicate session") =>
            {
                continue
            }
            Err(e) => return Err(e),
        }
    }
    Err(TmuxError::Failed {
        detail: "could not create the window: the session kept changing under us; try again".into(),
    })
}
