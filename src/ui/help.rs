//! The help overlay: every key from the one key table, and what the banners mean.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use super::Look;
use crate::keymap;

pub fn render(look: &Look, area: Rect, buf: &mut Buffer) {
    let t = &look.theme;
    let mut lines: Vec<Line> = keymap::GRID
        .iter()
        .map(|b| {
            Line::from(vec![
                Span::styled(format!(" {:<9}", b.label), t.key()),
                Span::raw(b.help),
            ])
        })
        .collect();
    lines.push(Line::raw(""));
    lines.push(Line::from(Span::styled(
        " ✖ red banner: the agent crashed (exit code or signal shown)",
        t.alarm(),
    )));
    lines.push(Line::from(Span::styled(
        " ✔ green line: the agent finished cleanly (exit code 0)",
        t.finished(),
    )));
    lines.push(Line::raw(
        " (stale): tmux is not answering; the last known state is shown",
    ));
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
        .wrap(Wrap { trim: false })
        .block(
            Block::new()
                .borders(Borders::ALL)
                .title(" keys · Esc or ? closes "),
        )
        .render(rect, buf);
}
