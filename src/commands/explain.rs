//! `agentwatch explain %N`: what agentwatch says a pane's agent does, which source decided
//! it and why, and what every other source says: the same core and adapters as the
//! dashboard, one read-only look.

use jiff::tz::TimeZone;

use crate::adapters::poll::Prober;
use crate::config::Config;
use crate::core::attention::{Attention, Doing, Report, Told, QUIET_MS};
use crate::core::card::{Card, Life};
use crate::core::state::State;
use crate::core::text::duration;
use crate::core::time::clock;
use crate::core::time::Millis;

/// Why a pane could not be explained.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    #[error(transparent)]
    Tmux(#[from] crate::adapters::tmux::client::TmuxError),
    #[error("no pane {0} on this server: name one as %N (`agentwatch status` lists the agents' panes, `tmux list-panes -a` every pane)")]
    NoPane(String),
}

/// Looks once and explains `pane` (`%3`, or a target `main:2.0`).
pub async fn run(
    config: &Config,
    prober: &Prober,
    pane: &str,
    now: Millis,
    tz: &TimeZone,
) -> Result<String, ExplainError> {
    let state = crate::commands::status::look(config, prober, &[], true).await?;
    let card = find(&state, pane)?;
    // Its screen as it is now, whichever source decided (the dashboard reads it only when
    // its output stopped and nothing more exact spoke).
    let screen = if card.agent.is_some() && card.life == Life::Running {
        prober
            .tmux()
            .capture_screens(&[(card.pane.id, 0)])
            .await
            .ok()
            .and_then(|mut s| s.remove(&card.pane.id))
    } else {
        None
    };
    Ok(explain(&state, card, screen.as_deref(), now, tz))
}

fn find<'a>(state: &'a State, pane: &str) -> Result<&'a Card, ExplainError> {
    let want = pane.trim();
    let want = if want.chars().all(|c| c.is_ascii_digit()) && !want.is_empty() {
        format!("%{want}")
    } else {
        want.to_string()
    };
    state
        .cards
        .iter()
        .find(|c| c.pane.id.to_string() == want || c.pane.target() == want)
        .ok_or_else(|| ExplainError::NoPane(pane.to_string()))
}

/// The explanation, as printed.
pub fn explain(
    state: &State,
    card: &Card,
    screen: Option<&str>,
    now: Millis,
    tz: &TimeZone,
) -> String {
    let p = &card.pane;
    let mut out = format!("{} · {} · window {}\n", p.id, p.target(), p.window_name);
    let Some(kind) = card.agent.as_deref() else {
        out.push_str(&format!(
            "not an agent: it runs `{}`. Agents are told by their program (claude, codex, gemini, opencode, aider, cursor-agent, amp, and [agents.*] in the config); a wrapper is named with `wrappers`.\n",
            p.current_command
        ));
        return out;
    };
    out.push_str(&format!("agent: {kind}\n"));
    match card.life {
        Life::Running => {}
        Life::Idle => {
            out.push_str(
                "its shell is at its prompt: the agent is not running, so it does nothing.\n",
            );
            return out;
        }
        Life::Reading | Life::Dead(_) => {
            let exit = match card.life {
                Life::Dead(e) => e.describe(),
                _ => "process exited (code unknown)".to_string(),
            };
            out.push_str(&format!("dead: {exit}.\n"));
            out.push_str(&why_it_stopped(card, now, tz));
            out.push_str("What an agent does is told only while it runs.\n");
            return out;
        }
    }
    let a = &card.attention;
    match &a.now {
        Some((v, since)) => out.push_str(&format!(
            "now: {} since {} ({}), told by {}: {}\n",
            said(v.doing),
            clock(*since, tz),
            duration(now.saturating_sub(*since)),
            v.told.describe(),
            v.why
        )),
        None => out.push_str("now: running; what it does cannot be told (no source says)\n"),
    }
    out.push_str("\nwhat each source says, most exact first:\n");
    let line =
        |n: usize, told: Told, says: String| format!("  {n}. {:<28} {says}\n", told.describe());
    out.push_str(&line(1, Told::File, file_says(a, kind)));
    out.push_str(&line(2, Told::Hook, hook_says(a, p)));
    out.push_str(&line(
        3,
        Told::Output,
        output_says(p.window_activity, now, tz),
    ));
    let def = state.agents.get(kind);
    let screen_word = screen.and_then(|s| def.and_then(|d| d.screen_says(s)));
    out.push_str(&line(
        4,
        Told::Screen,
        match (&screen_word, screen, def) {
            (_, None, _) => "not read".to_string(),
            (Some(v), _, _) => format!("{}: {}", v.doing.word(), v.why),
            (None, Some(_), Some(d)) if d.waiting.is_empty() && d.working.is_empty() => format!(
                "nothing: {kind} has no `waiting` or `working` lines (set them under [agents.{kind}])"
            ),
            (None, Some(_), _) => format!(
                "nothing: none of {kind}'s waiting lines at the bottom, and no working lines to tell idle"
            ),
        },
    ));
    out.push_str(
        "\nthe rule: the agent's own word decides when there is one; else a prompt for its user\n\
         from a hook or on its screen; else the most exact source that says something.\n",
    );
    if !p.opts.state.is_empty() {
        out.push_str(&format!(
            "the pane option @agentwatch_state (kept by the supervisor): {}\n",
            p.opts.state
        ));
    }
    out
}

/// Why a dead agent stopped, the lines that decided it, and what follows from it.
fn why_it_stopped(card: &Card, now: Millis, tz: &TimeZone) -> String {
    let Some(stop) = &card.stop else {
        return "why: not known (its last lines could not be read)\n".to_string();
    };
    let mut out = format!("why: {} ({})\n", stop.label(now, tz), stop.cause.word());
    if let Some(t) = stop.resets_at {
        out.push_str(&format!(
            "  the limit resets at {} ({})\n",
            crate::core::time::local(t, tz),
            crate::ui::card::until(t, now)
        ));
    }
    out.push_str("  decided by:\n");
    for line in &stop.evidence {
        out.push_str(&format!("    {line}\n"));
    }
    if stop.evidence.len() < 2 && stop.cause != crate::core::cause::Cause::Deliberate {
        out.push_str(
            "    (no line of its last output names a cause; the words are listed under [agents.NAME.causes] in the docs)\n",
        );
    }
    let agent = card.agent.as_deref().unwrap_or("the agent");
    let next = match &card.auto {
        crate::core::card::Auto::Held(h) => h.reason(agent),
        crate::core::card::Auto::Scheduled { due, .. } => Some(format!(
            "an auto-resume is due at {} ({})",
            clock(*due, tz),
            crate::ui::card::until(*due, now)
        )),
        _ => None,
    };
    if let Some(n) = next {
        out.push_str(&format!("  next: {n}\n"));
    }
    out
}

fn said(d: Doing) -> &'static str {
    match d {
        Doing::Waiting => "waiting for input",
        Doing::Idle => "idle at its input box",
        Doing::Limited => "at its usage limit",
        Doing::Working => "working",
    }
}

fn file_says(a: &Attention, kind: &str) -> String {
    match (&a.file, a.file_pid) {
        (Some(v), Some(pid)) => format!("{}: {} (claude's sessions/{pid}.json)", v.doing.word(), v.why),
        (Some(v), None) => format!("{}: {}", v.doing.word(), v.why),
        (None, Some(pid)) => format!("a status it does not know (claude's sessions/{pid}.json)"),
        (None, None) if kind == "claude" => {
            "nothing: no sessions/<pid>.json for its process (claude writes it once past its trust prompt)".to_string()
        }
        (None, None) => format!("nothing: {kind} keeps no state file agentwatch reads"),
    }
}

fn hook_says(a: &Attention, p: &crate::core::pane::Pane) -> String {
    if p.hook_status.is_empty() {
        return "nothing: @pane_status is not set (`agentwatch hooks install claude|codex` sets it)".to_string();
    }
    match (a.hook_report(), &a.hook) {
        (Some(Report { doing, why, .. }), _) => {
            format!("{}: {why} (@pane_status {})", doing.word(), p.hook_status)
        }
        (None, Some(h)) if h.overtaken => format!(
            "overtaken: @pane_status {} was set, and the window wrote well after it",
            p.hook_status
        ),
        _ => format!("a word it does not know: @pane_status {:?}", p.hook_status),
    }
}

fn output_says(activity: u64, now: Millis, tz: &TimeZone) -> String {
    if activity == 0 {
        return "not known".to_string();
    }
    let at = activity.saturating_mul(1000);
    let ago = now.saturating_sub(at);
    if ago < QUIET_MS {
        format!("working: output {} ago", duration(ago))
    } else {
        format!(
            "quiet: last output at {} ({} ago)",
            clock(at, tz),
            duration(ago)
        )
    }
}
