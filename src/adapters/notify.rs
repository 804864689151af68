//! Announcing deaths (and agents that wait for their user): the terminal bell, a desktop
//! notification, a hook command (deaths only). Does I/O.

use std::collections::HashSet;
use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use crate::config::Notify;
use crate::core::msg::Event;

/// Who an event is about, as a notification names it: `claude work:1.0`.
pub fn who(e: &Event) -> String {
    format!(
        "{} {}",
        e.agent.as_deref().unwrap_or("agent"),
        e.target.as_deref().unwrap_or(&e.pane)
    )
}

/// What happened, as a notification says it: `login needed · process exited (code 1)`,
/// `waiting for input: Do you want to proceed?`.
pub fn what(e: &Event) -> String {
    match e.event.as_str() {
        "gave_up" => "auto-resume gave up".to_string(),
        "waiting" => format!("waiting for input: {}", e.detail.as_deref().unwrap_or("")),
        "limited" => format!("at its usage limit: {}", e.detail.as_deref().unwrap_or("")),
        _ => {
            let what = e.detail.clone().unwrap_or_else(|| e.event.clone());
            // Why first, where it says more than the exit.
            match e
                .cause
                .as_deref()
                .and_then(crate::core::cause::Cause::parse)
                .filter(|c| c.is_telling())
            {
                Some(c) => format!("{} · {what}", c.label()),
                None => what,
            }
        }
    }
}

/// One event's line: `claude work:1.0: process exited (code 1)`.
pub fn line(e: &Event) -> String {
    format!("{}: {}", who(e), what(e))
}

/// The title and body of one notification for a batch of events (a storm is one summary).
pub fn summary(events: &[Event]) -> (String, String) {
    match events {
        [one] => (
            match one.event.as_str() {
                "gave_up" => "agentwatch: auto-resume gave up".into(),
                "waiting" => "agentwatch: an agent waits for you".into(),
                "limited" => "agentwatch: an agent hit its usage limit".into(),
                _ => "agentwatch: an agent died".into(),
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

/// Announces a batch of events as configured: one bell, one desktop notification (neither
/// for a pane its user is `looking` at, in a focused tmux client), and the hook once per
/// death with the event as JSON on its stdin.
pub async fn announce(cfg: &Notify, events: &[Event], looking: &HashSet<String>) {
    let unseen = unseen(events, looking);
    if !unseen.is_empty() {
        let (title, body) = summary(&unseen);
        if cfg.bell {
            let mut out = std::io::stdout();
            let _ = out.write_all(b"\x07").and_then(|_| out.flush());
        }
        if cfg.desktop {
            desktop(&title, &body).await;
        }
    }
    if let Some((program, args)) = cfg.on_death.split_first() {
        for e in events.iter().filter(|e| e.event != "waiting") {
            if let Err(err) = hook(program, args, e).await {
                tracing::warn!("on_death hook {program}: {err}");
            }
        }
    }
}

/// The events about panes nobody is looking at.
fn unseen(events: &[Event], looking: &HashSet<String>) -> Vec<Event> {
    events
        .iter()
        // A local client shows local panes: another host's `%3` is not this one's.
        .filter(|e| e.host.is_some() || !looking.contains(&e.pane))
        .cloned()
        .collect()
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
    let seq = format!(
        "\x1b]777;notify;{};{}\x07\x1b]9;{}\x07",
        clean(title),
        clean(body),
        clean(body)
    );
    let inside_tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
    let mut out = std::io::stdout();
    let _ = out.write_all(passthrough(&seq, inside_tmux).as_bytes());
    let _ = out.flush();
}

/// A terminal sequence as it must be written to reach the terminal outside tmux: wrapped in
/// tmux's passthrough (`ESC P tmux; … ESC \`, every ESC inside doubled), which tmux passes
/// on when `allow-passthrough` is on; as it is otherwise.
fn passthrough(seq: &str, inside_tmux: bool) -> String {
    if !inside_tmux {
        return seq.to_string();
    }
    format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b"))
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

    #[test]
    fn a_notification_inside_tmux_is_wrapped_for_its_passthrough() {
        let seq = "\x1b]9;hi\x07";
        assert_eq!(passthrough(seq, false), seq);
        assert_eq!(passthrough(seq, true), "\x1bPtmux;\x1b\x1b]9;hi\x07\x1b\\");
    }

    #[test]
    fn a_death_says_why_and_a_limit_is_no_death() {
        let mut e = ev("died", "%1");
        e.cause = Some("auth".into());
        assert_eq!(
            summary(&[e]).1,
            "claude work:%1: login needed · process exited (code 1)"
        );
        let mut l = ev("limited", "%2");
        l.detail = Some("You've hit your session limit · resets 3pm".into());
        let (title, body) = summary(&[l]);
        assert_eq!(title, "agentwatch: an agent hit its usage limit");
        assert!(body.ends_with("at its usage limit: You've hit your session limit · resets 3pm"));
    }

    #[test]
    fn an_agent_waiting_is_announced_as_such() {
        let e = Event {
            event: "waiting".into(),
            pane: "%3".into(),
            agent: Some("claude".into()),
            target: Some("w:1.0".into()),
            detail: Some("Do you want to proceed?".into()),
            ..Event::default()
        };
        let (title, body) = summary(std::slice::from_ref(&e));
        assert_eq!(title, "agentwatch: an agent waits for you");
        assert_eq!(
            body,
            "claude w:1.0: waiting for input: Do you want to proceed?"
        );
    }

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
    fn nothing_is_announced_for_the_pane_in_a_focused_client_only_for_the_others() {
        let looking = HashSet::from(["%1".to_string()]);
        let events = [ev("waiting", "%1"), ev("died", "%2"), ev("waiting", "%3")];
        let unseen: Vec<String> = unseen(&events, &looking)
            .into_iter()
            .map(|e| e.pane)
            .collect();
        assert_eq!(unseen, ["%2", "%3"]);
        // Another host's %1 is not the local %1 the user looks at.
        let there = Event {
            host: Some("box".into()),
            ..ev("died", "%1")
        };
        assert_eq!(unseen_of(&[there], &looking), 1);
    }

    fn unseen_of(events: &[Event], looking: &HashSet<String>) -> usize {
        unseen(events, looking).len()
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
