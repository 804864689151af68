//! Colours that carry meaning: alarm (a crash), finished (a clean exit), running, waiting,
//! stale. Two palettes, for dark and light terminals (`[theme] name`), each role settable
//! (`[theme.colors]`). With `NO_COLOR` set, meaning is carried by modifiers (reverse,
//! bold, dim) alone.

use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};

use crate::core::settings::{ThemeConfig, ThemeName};

/// The colour of each role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    /// The background of a crash's banner (its text is `alarm_text`), and crashed borders.
    pub alarm: Color,
    pub alarm_text: Color,
    pub finished: Color,
    pub running: Color,
    pub idle: Color,
    pub waiting: Color,
    pub stale: Color,
    /// Secondary text: directories, ids, output.
    pub dim: Color,
    pub border: Color,
    /// The background of the list's selected line.
    pub selection: Color,
    pub header: Color,
    pub header_text: Color,
    pub key: Color,
    pub notice: Color,
}

impl Palette {
    /// For a dark terminal: the terminal's own 16 colours.
    pub const DARK: Palette = Palette {
        alarm: Color::Red,
        alarm_text: Color::White,
        finished: Color::Green,
        running: Color::Green,
        idle: Color::Cyan,
        waiting: Color::Yellow,
        stale: Color::DarkGray,
        dim: Color::Gray,
        border: Color::DarkGray,
        selection: Color::DarkGray,
        header: Color::Gray,
        header_text: Color::Black,
        key: Color::Cyan,
        notice: Color::Yellow,
    };

    /// For a light terminal: no yellow or light grey text on white, darker greens and
    /// cyans, a light selection.
    pub const LIGHT: Palette = Palette {
        alarm: Color::Red,
        alarm_text: Color::White,
        finished: Color::Indexed(28),
        running: Color::Indexed(28),
        idle: Color::Indexed(25),
        waiting: Color::Indexed(130),
        stale: Color::Indexed(246),
        dim: Color::Indexed(240),
        border: Color::Indexed(248),
        selection: Color::Indexed(252),
        header: Color::Indexed(252),
        header_text: Color::Black,
        key: Color::Indexed(25),
        notice: Color::Indexed(130),
    };

    /// The roles `[theme.colors]` may set, by name.
    pub const ROLES: [&'static str; 14] = [
        "alarm",
        "alarm_text",
        "finished",
        "running",
        "idle",
        "waiting",
        "stale",
        "dim",
        "border",
        "selection",
        "header",
        "header_text",
        "key",
        "notice",
    ];

    fn role(&mut self, name: &str) -> Option<&mut Color> {
        Some(match name {
            "alarm" => &mut self.alarm,
            "alarm_text" => &mut self.alarm_text,
            "finished" => &mut self.finished,
            "running" => &mut self.running,
            "idle" => &mut self.idle,
            "waiting" => &mut self.waiting,
            "stale" => &mut self.stale,
            "dim" => &mut self.dim,
            "border" => &mut self.border,
            "selection" => &mut self.selection,
            "header" => &mut self.header,
            "header_text" => &mut self.header_text,
            "key" => &mut self.key,
            "notice" => &mut self.notice,
            _ => return None,
        })
    }

    /// The palette `[theme]` asks for, or what is wrong with it (the key, and the fix).
    pub fn of(cfg: &ThemeConfig) -> Result<Palette, (String, String)> {
        let mut p = match cfg.name {
            ThemeName::Dark => Palette::DARK,
            ThemeName::Light => Palette::LIGHT,
        };
        for (name, value) in &cfg.colors {
            let Some(slot) = p.role(name) else {
                return Err((
                    name.clone(),
                    format!(
                        "no such colour role; the roles are {}",
                        Palette::ROLES.join(", ")
                    ),
                ));
            };
            *slot = Color::from_str(value.trim()).map_err(|_| {
                (
                    name.clone(),
                    format!(
                        "{value:?} is not a colour: use a name (red, lightblue, darkgray…), \
                         \"#rrggbb\", or a 256-colour index (\"130\")"
                    ),
                )
            })?;
        }
        Ok(p)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
    pub pal: Palette,
}

impl Theme {
    /// The configured palette; colour unless `NO_COLOR` is set to anything non-empty
    /// (no-color.org). The config was checked when read: a bad colour is the default's.
    pub fn from_env(cfg: &ThemeConfig) -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            pal: Palette::of(cfg).unwrap_or(Palette::DARK),
        }
    }

    /// The dark palette, in colour or not (tests).
    pub fn dark(color: bool) -> Theme {
        Theme {
            color,
            pal: Palette::DARK,
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
                .fg(self.pal.alarm_text)
                .bg(self.pal.alarm)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )
    }

    /// A clean exit: quiet, never the alarm colour.
    pub fn finished(&self) -> Style {
        self.pick(Style::new().fg(self.pal.finished), Style::new())
    }

    pub fn running(&self) -> Style {
        self.pick(Style::new().fg(self.pal.running), Style::new())
    }

    /// A live agent whose turn is over, at its input box: calm, not green.
    pub fn idle(&self) -> Style {
        self.pick(Style::new().fg(self.pal.idle), Style::new())
    }

    /// An agent waiting for its user: needs attention, not an alarm.
    pub fn waiting(&self) -> Style {
        self.pick(
            Style::new()
                .fg(self.pal.waiting)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// Known state that may be out of date (tmux not answering).
    pub fn stale(&self) -> Style {
        self.pick(
            Style::new().fg(self.pal.stale),
            Style::new().add_modifier(Modifier::DIM),
        )
    }

    pub fn dim(&self) -> Style {
        self.pick(
            Style::new().fg(self.pal.dim),
            Style::new().add_modifier(Modifier::DIM),
        )
    }

    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn selected_border(&self) -> Style {
        self.pick(
            Style::new().fg(self.pal.key).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// The selected line of the list (a `▶` marks it too, for any terminal).
    pub fn selected_row(&self) -> Style {
        self.pick(
            Style::new()
                .bg(self.pal.selection)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::REVERSED),
        )
    }

    pub fn border(&self) -> Style {
        self.pick(Style::new().fg(self.pal.border), Style::new())
    }

    /// The border of an agent that waits for its user.
    pub fn waiting_border(&self) -> Style {
        self.pick(Style::new().fg(self.pal.waiting), Style::new())
    }

    pub fn alarm_border(&self) -> Style {
        self.pick(Style::new().fg(self.pal.alarm), Style::new())
    }

    pub fn header(&self) -> Style {
        self.pick(
            Style::new().fg(self.pal.header_text).bg(self.pal.header),
            Style::new().add_modifier(Modifier::REVERSED),
        )
    }

    pub fn key(&self) -> Style {
        self.pick(
            Style::new().fg(self.pal.key).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    pub fn notice(&self) -> Style {
        self.pick(
            Style::new().fg(self.pal.notice),
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
