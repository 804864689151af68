//! Output with colour escapes turned into the core's styled lines (ansi-to-tui parses, this
//! maps its ratatui types onto [`crate::core::styled`]'s).

use ansi_to_tui::IntoText;
use ratatui::style::{Color as TuiColor, Style as TuiStyle};

use crate::core::peek_model::PeekText;
use crate::core::styled::{Attrs, Color, Line, Span, Style};

/// Parses output with SGR colour escapes. Bytes that are not valid escapes or UTF-8 are
/// shown as they are (replacement characters), never dropped silently.
pub fn parse(bytes: &[u8]) -> PeekText {
    // Trailing blank lines (the unused bottom of a screen) carry nothing.
    let mut end = bytes.len();
    while end > 0 && matches!(bytes[end - 1], b'\n' | b' ' | b'\r') {
        end -= 1;
    }
    let bytes = &bytes[..end];
    let lines = match bytes.into_text() {
        Ok(text) => text
            .lines
            .into_iter()
            .map(|l| Line {
                spans: l
                    .spans
                    .into_iter()
                    .map(|s| Span {
                        text: s.content.into_owned(),
                        style: style(s.style),
                    })
                    .collect(),
            })
            .collect(),
        Err(_) => String::from_utf8_lossy(bytes)
            .lines()
            .map(Line::raw)
            .collect(),
    };
    PeekText::new(lines)
}

fn style(s: TuiStyle) -> Style {
    Style {
        fg: s.fg.map(color),
        bg: s.bg.map(color),
        add: Attrs(s.add_modifier.bits()),
        sub: Attrs(s.sub_modifier.bits()),
    }
}

fn color(c: TuiColor) -> Color {
    match c {
        TuiColor::Reset => Color::Reset,
        TuiColor::Black => Color::Black,
        TuiColor::Red => Color::Red,
        TuiColor::Green => Color::Green,
        TuiColor::Yellow => Color::Yellow,
        TuiColor::Blue => Color::Blue,
        TuiColor::Magenta => Color::Magenta,
        TuiColor::Cyan => Color::Cyan,
        TuiColor::Gray => Color::Gray,
        TuiColor::DarkGray => Color::DarkGray,
        TuiColor::LightRed => Color::LightRed,
        TuiColor::LightGreen => Color::LightGreen,
        TuiColor::LightYellow => Color::LightYellow,
        TuiColor::LightBlue => Color::LightBlue,
        TuiColor::LightMagenta => Color::LightMagenta,
        TuiColor::LightCyan => Color::LightCyan,
        TuiColor::White => Color::White,
        TuiColor::Rgb(r, g, b) => Color::Rgb(r, g, b),
        TuiColor::Indexed(i) => Color::Indexed(i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_survive_and_escapes_do_not_reach_the_text() {
        let t = parse(b"\x1b[31mline 1\x1b[0m\n\x1b[1;38;5;208mline 2\x1b[0m plain\n\n\n");
        assert_eq!(t.plain, ["line 1", "line 2 plain"]);
        assert_eq!(t.lines[0].spans[0].style.fg, Some(Color::Red));
        let bold = t.lines[1].spans[0].style;
        assert_eq!(bold.fg, Some(Color::Indexed(208)));
        assert!(bold.add.contains(Attrs::BOLD));
    }

    #[test]
    fn tmux_s_dead_line_is_not_the_agents() {
        let t = parse(b"bye\n\nPane is dead (status 1, Tue Dec  1 03:57:00 2026)\n");
        assert_eq!(t.plain, ["bye"]);
    }

    #[test]
    fn garbage_bytes_never_panic() {
        for junk in [
            &b"\x1b[38;5;999m\xff\xfe\x1b[\n"[..],
            b"\x1b",
            b"",
            b"\n\n\n",
        ] {
            let _ = parse(junk);
        }
    }
}
