//! The form that starts a new agent (`s`): its kind, directory, window name and session.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::Look;
use crate::core::state::start::{Field, StartForm};
use crate::core::text::{fit, fit_left, tilde, wrap};

pub fn render(form: &StartForm, look: &Look, area: Rect, buf: &mut Buffer) {
    let t = &look.theme;
    let w = area.width.min(72);
    let inner = usize::from(w.saturating_sub(2));
    let label_w = 14;
    let value_w = inner.saturating_sub(label_w + 3);
    let mut lines = Vec::new();
    for f in Field::ALL {
        let here = f == form.field;
        let value = match f {
            Field::Kind => format!("◀ {} ▶", form.kind()),
            Field::Dir => fit_left(
                &tilde(&form.dir, look.home.as_deref()),
                value_w.saturating_sub(1),
            ),
            // Cut at the start: typing goes on at its end.
            _ => fit_left(form.value(f), value_w.saturating_sub(1)),
        };
        let cursor = if here && f != Field::Kind { "█" } else { "" };
        let style = if here { t.key() } else { Style::new() };
        lines.push(Line::from(vec![
            Span::styled(if here { " ▶ " } else { "   " }, t.key()),
            Span::styled(format!("{:<label_w$}", f.label()), t.dim()),
            Span::styled(value, style),
            Span::styled(cursor, t.dim()),
        ]));
    }
    lines.push(Line::raw(""));
    if form.busy {
        lines.push(Line::styled(" starting…", t.notice()));
    } else if let Some(e) = &form.error {
        for l in wrap(&format!("✖ {e}"), inner.saturating_sub(2)) {
            lines.push(Line::styled(format!(" {l}"), t.alarm()));
        }
    }
    lines.push(Line::styled(
        fit(
            " Tab/↓↑ line · ←/→ kind · ^u clears · Enter starts · Esc cancels",
            inner,
        ),
        t.dim(),
    ));
    let rect = super::centered(area, w, lines.len() as u16 + 2);
    Clear.render(rect, buf);
    let title = fit(" start an agent (as agentwatch spawn) ", inner);
    Paragraph::new(lines)
        .block(
            Block::new()
                .borders(Borders::ALL)
                .border_style(t.selected_border())
                .title(title),
        )
        .render(rect, buf);
}
