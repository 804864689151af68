//! Colours that carry meaning: alarm (a crash), finished (a clean exit), running, stale.
//! With `NO_COLOR` set, meaning is carried by modifiers (reverse, bold, dim) alone.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set to anything non-empty (no-color.org).
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn pick(&self, color: Style, plain: Style) -> Style {
        if self.color {
            color
        } else {
            plain
        }
    }

    /// The loud banner of a crashed agent.
    pub fn alarm(&self) -> Style {
        self.pick(
            Style::new()
                .fg(Color::White)
                .bg(Color::Red)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )
    }

    /// A clean exit: quiet, never the alarm colour.
    pub fn finished(&self) -> Style {
        self.pick(Style::new().fg(Color::Green), Style::new())
    }

    pub fn running(&self) -> Style {
        self.pick(Style::new().fg(Color::Green), Style::new())
    }

    /// A live agent whose turn is over, at its input box: calm, not green.
    pub fn idle(&self) -> Style {
        self.pick(Style::new().fg(Color::Cyan), Style::new())
    }

    /// An agent waiting for its user: needs attention, not an alarm.
    pub fn waiting(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// Known state that may be out of date (tmux not answering).
    pub fn stale(&self) -> Style {
        self.pick(
            Style::new().fg(Color::DarkGray),
            Style::new().add_modifier(Modifier::DIM),
        )
    }

    pub fn dim(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Gray),
            Style::new().add_modifier(Modifier::DIM),
        )
    }

    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn selected_border(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// The selected line of the list (a `▶` marks it too, for any terminal).
    pub fn selected_row(&self) -> Style {
        self.pick(
            Style::new()
                .bg(Color::DarkGray)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::REVERSED),
        )
    }

    pub fn border(&self) -> Style {
        self.pick(Style::new().fg(Color::DarkGray), Style::new())
    }

    /// The border of an agent that waits for its user.
    pub fn waiting_border(&self) -> Style {
        self.pick(Style::new().fg(Color::Yellow), Style::new())
    }

    pub fn alarm_border(&self) -> Style {
        self.pick(Style::new().fg(Color::Red), Style::new())
    }

    pub fn header(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Black).bg(Color::Gray),
            Style::new().add_modifier(Modifier::REVERSED),
        )
    }

    pub fn key(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    pub fn notice(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow),
            Style::new().add_modifier(Modifier::ITALIC),
        )
    }
}

/// A styled line of the core's in ratatui's terms, for drawing.
pub fn line(l: &crate::core::styled::Line) -> ratatui::text::Line<'static> {
    ratatui::text::Line::from(
        l.spans
            .iter()
            .map(|s| ratatui::text::Span::styled(s.text.clone(), style(s.style)))
            .collect::<Vec<_>>(),
    )
}

fn style(s: crate::core::styled::Style) -> Style {
    let mut out = Style::default()
        .add_modifier(Modifier::from_bits_truncate(s.add.0))
        .remove_modifier(Modifier::from_bits_truncate(s.sub.0));
    out.fg = s.fg.map(color);
    out.bg = s.bg.map(color);
    out
}

fn color(c: crate::core::styled::Color) -> Color {
    use crate::core::styled::Color as C;
    match c {
        C::Reset => Color::Reset,
        C::Black => Color::Black,
        C::Red => Color::Red,
        C::Green => Color::Green,
        C::Yellow => Color::Yellow,
        C::Blue => Color::Blue,
        C::Magenta => Color::Magenta,
        C::Cyan => Color::Cyan,
        C::Gray => Color::Gray,
        C::DarkGray => Color::DarkGray,
        C::LightRed => Color::LightRed,
        C::LightGreen => Color::LightGreen,
        C::LightYellow => Color::LightYellow,
        C::LightBlue => Color::LightBlue,
        C::LightMagenta => Color::LightMagenta,
        C::LightCyan => Color::LightCyan,
        C::White => Color::White,
        C::Rgb(r, g, b) => Color::Rgb(r, g, b),
        C::Indexed(i) => Color::Indexed(i),
    }
}
