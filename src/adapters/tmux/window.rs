//! Opening a window for an agent: the session (and server) created if missing, the pane's
//! options set on the same command line, so a fast death still leaves a dead pane.

use std::path::Path;

use super::client::{Tmux, TmuxError};
use crate::core::pane::Opt;
use crate::core::words;

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
            Err(e) => return Err(e),
        }
    }
    Err(TmuxError::Failed {
        detail: "could not create the window: the session kept changing under us; try again".into(),
    })
}
