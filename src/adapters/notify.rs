//! Announcing deaths: the terminal bell, a desktop notification, a hook command. Does I/O.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use crate::config::Notify;
use crate::core::msg::Event;

/// The title and body of one notification for a batch of events (a storm is one summary).
pub fn summary(events: &[Event]) -> (String, String) {
    let line = |e: &Event| {
        format!(
            "{} {}: {}",
            e.agent.as_deref().unwrap_or("agent"),
            e.target.as_deref().unwrap_or(&e.pane),
            match e.event.as_str() {
                "gave_up" => "auto-resume gave up".to_string(),
                _ => e.detail.clone().unwrap_or_else(|| e.event.clone()),
            }
        )
    };
    match events {
        [one] => (
            if one.event == "gave_up" {
                "agentwatch: auto-resume gave up".into()
            } else {
                "agentwatch: an agent died".into()
            },
            line(one),
        ),
        many => {
            let mut body: Vec<String> = many.iter().take(5).map(line).collect();
            if many.len() > 5 {
                body.push(format!("and {} more", many.len() - 5));
            }
            (
                format!("agentwatch: {} agents need you", many.len()),
                body.join("\n"),
            )
        }
    }
}

/// Announces a batch of events as configured: one bell, one desktop notification, and the
/// hook once per event with the event as JSON on its stdin.
pub async fn announce(cfg: &Notify, events: &[Event]) {
    if events.is_empty() {
        return;
    }
    let (title, body) = summary(events);
    if cfg.bell {
        let mut out = std::io::stdout();
        let _ = out.write_all(b"\x07").and_then(|_| out.flush());
    }
    if cfg.desktop {
        desktop(&title, &body).await;
    }
    if let Some((program, args)) = cfg.on_death.split_first() {
        for e in events {
            if let Err(err) = hook(program, args, e).await {
                tracing::warn!("on_death hook {program}: {err}");
            }
        }
    }
}

async fn desktop(title: &str, body: &str) {
    if let Some(path) = crate::adapters::which::find_program("notify-send") {
        let status = tokio::process::Command::new(path)
            .args(["--app-name=agentwatch", title, body])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .status();
        if tokio::time::timeout(Duration::from_secs(5), status)
            .await
            .is_ok()
        {
            return;
        }
    }
    // Terminals that understand them show these (urxvt, kitty, foot, iTerm2, WezTerm...).
    let clean = |s: &str| s.replace(['\x07', '\x1b', ';', '\n'], " ");
    let mut out = std::io::stdout();
    let _ = write!(
        out,
        "\x1b]777;notify;{};{}\x07\x1b]9;{}\x07",
        clean(title),
        clean(body),
        clean(body)
    );
    let _ = out.flush();
}

async fn hook(program: &str, args: &[String], e: &Event) -> std::io::Result<()> {
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        let mut json = serde_json::to_vec(e)?;
        json.push(b'\n');
        stdin.write_all(&json).await?;
    }
    match tokio::time::timeout(Duration::from_secs(30), child.wait()).await {
        Ok(status) => status.map(|_| ()),
        Err(_) => Err(std::io::Error::other("did not finish in 30 s; killed")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: &str, pane: &str) -> Event {
        Event {
            event: kind.into(),
            pane: pane.into(),
            target: Some(format!("work:{pane}")),
            agent: Some("claude".into()),
            detail: Some("process exited (code 1)".into()),
            ..Event::default()
        }
    }

    #[test]
    fn one_death_is_named_and_a_storm_is_one_summary() {
        let (t, b) = summary(&[ev("died", "%1")]);
        assert_eq!(t, "agentwatch: an agent died");
        assert_eq!(b, "claude work:%1: process exited (code 1)");
        let many: Vec<Event> = (0..8).map(|i| ev("died", &format!("%{i}"))).collect();
        let (t, b) = summary(&many);
        assert_eq!(t, "agentwatch: 8 agents need you");
        assert_eq!(b.lines().count(), 6);
        assert!(b.ends_with("and 3 more"));
    }
}
