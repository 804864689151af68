//! The lost-server screen: one loud banner for a tmux server that went away with agents on
//! it, what was lost, and how to bring it back.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::card::clock;
use super::Look;
use crate::core::state::{Link, State};
use crate::core::text::short_id;
use crate::core::text::{fit, fit_left, tilde};

pub fn render(state: &State, look: &Look, area: Rect, buf: &mut Buffer) {
    let Some(lost) = &state.lost.roster else {
        return;
    };
    let t = &look.theme;
    let w = usize::from(area.width);
    let n = lost.agents.len();
    let can = lost.recreatable(&state.agents);
    let recreated = state.lost.results.iter().filter(|(_, r)| r.is_ok()).count();
    let banner = if n == 0 {
        // All of them back: no alarm left to raise.
        let text = format!(
            " ✔ tmux server gone at {}: {} recreated on {}",
            clock(lost.lost_at, &look.tz),
            crate::core::text::counted(recreated, "agent", "agents"),
            state.servers.socket,
        );
        Line::from(Span::styled(crate::core::text::pad(&text, w), t.finished()))
    } else {
        Line::from(Span::styled(
            crate::core::text::pad(
                &format!(
                    " ✖ tmux server gone: {} lost, {} · {} at {}",
                    crate::core::text::counted(n, "agent", "agents"),
                    match can {
                        _ if can == n => "each can be recreated".to_string(),
                        0 => "none can be recreated".to_string(),
                        _ => format!("{can} can be recreated"),
                    },
                    state.servers.socket,
                    clock(lost.lost_at, &look.tz)
                ),
                w,
            ),
            t.alarm(),
        ))
    };
    let mut lines = vec![banner];
    let now = match &state.servers.local().link {
        Link::Up => "A tmux server runs there again.".to_string(),
        Link::Down(e) => format!("Now: {e}."),
        Link::Connecting => String::new(),
    };
    if n > 0 {
        lines.push(Line::raw(fit(
            &format!(" {now} Their session ids and directories were recorded:"),
            w,
        )));
    }
    lines.push(Line::raw(""));
    for a in &lost.agents {
        let id = match &a.session_id {
            Some(id) => format!("id {}", short_id(id)),
            None => "no session id".to_string(),
        };
        let row = format!(
            " {:<12} {:<16} {:<13} {:<28} {}",
            fit(&a.agent, 12),
            fit(&a.target, 16),
            id,
            fit_left(&tilde(&a.cwd, look.home.as_deref()), 28),
            a.state
        );
        lines.push(Line::raw(fit(&row, w)));
    }
    if !state.lost.results.is_empty() {
        lines.push(Line::raw(""));
        for (target, r) in &state.lost.results {
            let (text, style) = match r {
                Ok(pane) => (format!(" ✔ {target}: back as {pane}"), t.finished()),
                Err(e) => (format!(" ✖ {target}: {e}"), t.notice()),
            };
            lines.push(Line::from(Span::styled(fit(&text, w), style)));
        }
    }
    lines.push(Line::raw(""));
    if state.lost.forget {
        lines.push(Line::from(Span::styled(
            fit(
                " Forget this list for good (it will not be shown again)? y/n",
                w,
            ),
            t.alarm(),
        )));
    } else if state.lost.confirm {
        lines.push(Line::from(Span::styled(
            fit(
                &format!(
                    " Recreate {can} agent{} on {} with their resume commands? y/n",
                    if can == 1 { "" } else { "s" },
                    state.servers.socket
                ),
                w,
            ),
            t.alarm(),
        )));
    } else {
        // Offered only where it would recreate one.
        if can > 0 {
            lines.push(Line::raw(fit(
                " R recreates every agent that has a session id, each resuming its own session in its own directory.",
                w,
            )));
        }
        lines.push(Line::raw(fit(
            " d forgets this list once you have dealt with it; Esc goes to the grid for now.",
            w,
        )));
    }
    let body = Rect {
        height: area.height.saturating_sub(1),
        ..area
    };
    Paragraph::new(lines).render(body, buf);
    if area.height >= 2 {
        let footer = Rect {
            y: area.bottom() - 1,
            height: 1,
            ..area
        };
        Line::from(super::footer_spans(
            state,
            look,
            crate::core::keymap::View::Lost,
            w,
        ))
        .render(footer, buf);
    }
}
