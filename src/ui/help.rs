//! The help overlay: every key of the view shown, from the one key table, what the banners
//! mean, and the auto-resume policy as the config has it, wrapped inside its border.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::Look;
use crate::core::keymap;
use crate::core::msg::Action;
use crate::core::state::State;
use crate::core::text::{fit, wrap};

/// Columns of the key column.
const KEY_W: usize = 9;

/// The help of the view shown; the auto-resume policy is the selected agent's (`kind`).
pub fn render(look: &Look, state: &State, kind: Option<&str>, area: Rect, buf: &mut Buffer) {
    let t = &look.theme;
    let view = state.view();
    let policy = state.policy(kind);
    let w = area.width.min(78);
    let text_w = usize::from(w.saturating_sub(2)).saturating_sub(1);
    let mut lines: Vec<Line> = Vec::new();
    // One entry: its key in the key column, its words wrapped beside it.
    let mut entry = |key: &str, style: Style, words: &str| {
        let key_w = if key.is_empty() { 0 } else { KEY_W };
        let room = text_w.saturating_sub(key_w).max(8);
        for (k, l) in wrap(words, room).into_iter().enumerate() {
            let key = if k == 0 { key } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!(" {key:<key_w$}", key = fit(key, key_w)), t.key()),
                Span::styled(l, style),
            ]));
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
        entry("", Style::new(), &format!("{moves}  {what}"));
    }
    for b in keymap::table(view).iter().filter(|b| !is_move(b.action)) {
        entry(b.label, Style::new(), b.help);
    }
    entry(
        "",
        t.alarm(),
        "✖ the agent crashed (its exit code or signal)",
    );
    entry(
        "",
        t.finished(),
        "✔ the agent finished cleanly (exit code 0)",
    );
    entry(
        "",
        t.waiting(),
        "◆ the agent waits for your input (a prompt or question)",
    );
    entry(
        "",
        Style::new(),
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
        let words = if !state.auto_on {
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
        entry("", Style::new(), &words);
    }
    // What does not fit scrolls, and the last line says where it is and how: never cut
    // silently.
    let room = usize::from(area.height.saturating_sub(2));
    if lines.len() > room && room > 1 {
        let shown = room - 1;
        let total = lines.len();
        let from = state.help_scroll.min(total - shown);
        lines.drain(..from);
        lines.truncate(shown);
        lines.push(Line::styled(
            fit(
                &format!(
                    " lines {}-{} of {total}: ↓↑/jk scroll",
                    from + 1,
                    from + shown
                ),
                text_w + 1,
            ),
            t.dim(),
        ));
    } else if lines.len() > room {
        lines.truncate(room);
    }
    let h = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    Clear.render(rect, buf);
    let title = fit(" keys · Esc or ? closes ", usize::from(w.saturating_sub(2)));
    Paragraph::new(lines)
        .block(Block::new().borders(Borders::ALL).title(title))
        .render(rect, buf);
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
