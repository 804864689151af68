//! The help overlay: every key from the one key table, and what the banners mean.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::Look;
use crate::core::keymap;
use crate::core::msg::Action;
use crate::core::supervisor::Policy;

pub fn render(look: &Look, view: keymap::View, policy: &Policy, area: Rect, buf: &mut Buffer) {
    let t = &look.theme;
    // Movement keys share one line; every other key has its own.
    let moves = keymap::table(view)
        .iter()
        .filter(|b| is_move(b.action))
        .map(|b| b.label)
        .collect::<Vec<_>>()
        .join(" ");
    let mut lines: Vec<Line> = vec![Line::from(vec![
        Span::styled(format!(" {moves}"), t.key()),
        Span::raw(match view {
            keymap::View::Grid => "  move, page, first, last",
            keymap::View::Peek => "  scroll, page, top, bottom",
            keymap::View::Lost => "",
        }),
    ])];
    lines.extend(
        keymap::table(view)
            .iter()
            .filter(|b| !is_move(b.action))
            .map(|b| {
                Line::from(vec![
                    Span::styled(format!(" {:<9}", b.label), t.key()),
                    Span::raw(b.help),
                ])
            }),
    );
    lines.push(Line::from(Span::styled(
        " ✖ red banner: the agent crashed (exit code or signal shown)",
        t.alarm(),
    )));
    lines.push(Line::from(Span::styled(
        " ✔ green line: the agent finished cleanly (exit code 0)",
        t.finished(),
    )));
    lines.push(Line::from(Span::styled(
        " ◆ yellow: the agent waits for your input (a prompt or question)",
        t.waiting(),
    )));
    lines.push(Line::raw(
        " (stale): tmux is not answering; the last known state is shown",
    ));
    if view == keymap::View::Grid {
        let delays: Vec<String> = policy
            .backoff_secs
            .iter()
            .map(|s| format!("{s}s"))
            .collect();
        lines.push(Line::raw(if policy.enabled {
            format!(
                " Auto-resume: after {}, at most {} times; a run",
                delays.join(", "),
                policy.max_attempts
            )
        } else {
            " Auto-resume is off in the config ([auto_resume] enabled = false)".to_string()
        }));
        lines.push(Line::raw(format!(
            " of {}s refills it. See [auto_resume] in the config.",
            policy.healthy_after_secs
        )));
    }
    let w = area.width.min(72);
    let h = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .block(
            Block::new()
                .borders(Borders::ALL)
                .title(" keys · Esc or ? closes "),
        )
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
