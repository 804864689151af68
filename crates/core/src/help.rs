//! The help's lines as text: every key of the view shown, from the one key table, what the
//! banners mean, and the auto-resume policy as the config has it, wrapped to a width. The
//! UI styles and draws them; the core knows how many there are, so it keeps the scroll
//! within them.

use crate::keymap;
use crate::msg::Action;
use crate::state::State;
use crate::text::{fit, wrap};

/// Columns of the key column.
const KEY_W: usize = 9;

/// The widest the help's box gets.
pub const MAX_WIDTH: u16 = 78;

/// What a line's words are drawn as: a key's words, or a legend in its banner's colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    Alarm,
    Finished,
    Waiting,
}

/// One line of the help: the key (padded to the key column, or empty on a continuation
/// and for legends) and its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpLine {
    pub key: String,
    pub tone: Tone,
    pub text: String,
}

/// The room for words inside a box `width` columns wide (its border and a space).
pub fn text_width(width: u16) -> usize {
    usize::from(width.min(MAX_WIDTH).saturating_sub(2)).saturating_sub(1)
}

/// The help of the view shown for a terminal `width` columns wide; the auto-resume policy
/// is the selected agent's.
pub fn lines(state: &State, width: u16) -> Vec<HelpLine> {
    let kind = state
        .selected_index()
        .and_then(|i| state.cards[i].agent.as_deref());
    let view = state.view();
    let policy = state.policy(kind);
    let text_w = text_width(width);
    let mut lines = Vec::new();
    // One entry: its key in the key column, its words wrapped beside it.
    let mut entry = |key: &str, tone: Tone, words: &str| {
        let key_w = if key.is_empty() { 0 } else { KEY_W };
        let room = text_w.saturating_sub(key_w).max(8);
        for (k, l) in wrap(words, room).into_iter().enumerate() {
            let key = if k == 0 { key } else { "" };
            lines.push(HelpLine {
                key: format!(" {key:<key_w$}", key = fit(key, key_w)),
                tone,
                text: l,
            });
        }
    };
    // Movement keys share one entry; every other key has its own.
    let moves = keymap::table(view)
        .iter()
        .filter(|b| is_move(b.action))
        .map(|b| b.label)
        .collect::<Vec<_>>()
        .join(" ");
    if !moves.is_empty() {
        let what = match view {
            keymap::View::Grid => "move, page, first, last",
            keymap::View::Peek => "scroll, page, top, bottom",
            keymap::View::Lost => "",
        };
        entry("", Tone::Plain, &format!("{moves}  {what}"));
    }
    for b in keymap::table(view).iter().filter(|b| !is_move(b.action)) {
        entry(b.label, Tone::Plain, b.help);
    }
    entry(
        "",
        Tone::Alarm,
        "✖ the agent crashed (its exit code or signal)",
    );
    entry(
        "",
        Tone::Finished,
        "✔ the agent finished cleanly (exit code 0)",
    );
    entry(
        "",
        Tone::Waiting,
        "◆ the agent waits for your input (a prompt or question)",
    );
    entry(
        "",
        Tone::Plain,
        "(stale) tmux is not answering; the last known state is shown",
    );
    if view == keymap::View::Grid {
        let delays: Vec<String> = policy
            .backoff_secs
            .iter()
            .map(|s| format!("{s}s"))
            .collect();
        let of = match kind {
            Some(k) if state.has_own_policy(k) => format!(" of {k}"),
            _ => String::new(),
        };
        let words = if !state.supervision.auto_on {
            "Auto-resume is off for every agent until A turns it on.".to_string()
        } else if policy.enabled {
            format!(
                "Auto-resume{of}: after {}, at most {} times, {} an hour; a run of {}s refills it ([auto_resume] in the config).",
                delays.join(", "),
                policy.max_attempts,
                policy.max_per_hour,
                policy.healthy_after_secs
            )
        } else {
            format!("Auto-resume{of} is off in the config ([auto_resume] enabled = false).")
        };
        entry("", Tone::Plain, &words);
    }
    lines
}

/// How many of `total` lines a terminal `height` rows tall shows at once (its border, and a
/// line that says where it is when they do not all fit).
pub fn shown(total: usize, height: u16) -> usize {
    let room = usize::from(height.saturating_sub(2));
    if total > room {
        room.saturating_sub(1)
    } else {
        total
    }
}

fn is_move(a: Action) -> bool {
    matches!(
        a,
        Action::Up
            | Action::Down
            | Action::Left
            | Action::Right
            | Action::PageUp
            | Action::PageDown
            | Action::First
            | Action::Last
    )
}
