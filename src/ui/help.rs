//! The help overlay: the core's help lines (`core::help`), styled, inside their border.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::Look;
use crate::core::help::{self, Tone};
use crate::core::state::State;
use crate::core::text::fit;

/// The help of the view shown, scrolled as far as the core keeps it.
pub fn render(look: &Look, state: &State, area: Rect, buf: &mut Buffer) {
    let t = &look.theme;
    // A sliver of the screen left at each side is a glitch, not a frame: the whole width
    // then.
    let w = match area.width.min(help::MAX_WIDTH) {
        w if area.width - w < 4 => area.width,
        w => w,
    };
    let text_w = help::text_width(area.width);
    let all = help::lines(state, area.width);
    let total = all.len();
    let shown = help::shown(total, area.height);
    let from = state.overlays.help_scroll.min(total - shown);
    let mut lines: Vec<Line> = all
        .into_iter()
        .skip(from)
        .take(shown)
        .map(|l| {
            let style = match l.tone {
                Tone::Plain => Style::new(),
                Tone::Alarm => t.alarm(),
                Tone::Finished => t.finished(),
                Tone::Waiting => t.waiting(),
            };
            Line::from(vec![
                Span::styled(l.key, t.key()),
                Span::styled(l.text, style),
            ])
        })
        .collect();
    // What does not fit scrolls, and the last line says where it is and how: never cut
    // silently.
    if shown < total && shown > 0 {
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
    }
    let rect = super::centered(area, w, lines.len() as u16 + 2);
    Clear.render(rect, buf);
    let title = fit(" keys · Esc or ? closes ", usize::from(w.saturating_sub(2)));
    Paragraph::new(lines)
        .block(Block::new().borders(Borders::ALL).title(title))
        .render(rect, buf);
}
