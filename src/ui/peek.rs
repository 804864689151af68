//! The peek view: a pane's whole output, colours included, with a title that says what it
//! is (live snapshot or crash record) and how the agent ended.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::card::{clock, status_line};
use super::Look;
use crate::core::peek_model::{Peek, Shown};
use crate::core::state::State;
use crate::core::text::{fit, short_id, width};

pub fn render(state: &State, peek: &Peek, look: &Look, area: Rect, buf: &mut Buffer) {
    let t = &look.theme;
    let at = state.cards.iter().position(|c| c.pane.id == peek.pane);
    let card = at.map(|i| &state.cards[i]);
    let w = usize::from(area.width);
    // Title: agent, target, state and banner, session id, what is shown.
    let (state_text, style) = match (card, &peek.source) {
        (_, Shown::Record(i)) => match peek.records.get(*i) {
            Some(r) => (
                format!(
                    "crash record {}/{}: {}",
                    i + 1,
                    peek.records.len(),
                    r.record
                        .describe(&look.tz, state.policy(Some(&r.record.agent)).max_attempts)
                ),
                t.alarm(),
            ),
            None => ("crash record".into(), t.alarm()),
        },
        (Some(c), Shown::Live { captured_at }) => {
            // Its banner in its card's words.
            let ctx = super::card_ctx(state, look, at.unwrap_or_default());
            let (s, st) = status_line(c, &ctx);
            let what = if c.pane.dead {
                " · retained output".to_string()
            } else {
                format!(
                    " · live snapshot at {} (s refreshes)",
                    clock(*captured_at, &look.tz)
                )
            };
            (format!("{s}{what}"), st)
        }
        (None, _) => ("pane gone".into(), t.stale()),
    };
    let who = match card {
        Some(c) => {
            let id = if c.pane.opts.session_id.is_empty() {
                "no session id".to_string()
            } else {
                format!("session {}", short_id(&c.pane.opts.session_id))
            };
            let short = format!(
                " {} · {}{} · {} ",
                c.agent.as_deref().unwrap_or("pane"),
                state
                    .host_name(c)
                    .map_or(String::new(), |h| format!("{h} ")),
                c.pane.target(),
                c.pane.id
            );
            // The session id gives way first: what is shown, and how it ended, says more.
            if width(&short) + 1 + width(&id) + 2 + width(&state_text) <= w {
                format!("{short}· {id} ")
            } else {
                short
            }
        }
        None => format!(" {} ", peek.pane),
    };
    let title = Rect { height: 1, ..area };
    buf.set_style(title, style);
    let who = fit(&who, w);
    let line = Line::from(vec![
        Span::styled(who.clone(), style.add_modifier(Modifier::BOLD)),
        Span::styled(
            fit(&format!(" {state_text}"), w.saturating_sub(width(&who))),
            style,
        ),
    ]);
    line.render(title, buf);

    let body = Rect {
        y: area.y + 1,
        height: area.height.saturating_sub(2),
        ..area
    };
    match (&peek.text, &peek.error) {
        (_, Some(e)) if peek.text.is_none() => {
            buf.set_string(body.x + 1, body.y, fit(e, w.saturating_sub(2)), t.alarm());
        }
        (None, _) => {
            buf.set_string(body.x + 1, body.y, "reading the pane's output…", t.dim());
        }
        (Some(text), _) => {
            let current = peek.current();
            let needle = peek.query.clone().unwrap_or_default();
            for (row, idx) in (peek.top..text.len())
                .take(usize::from(body.height))
                .enumerate()
            {
                let y = body.y + row as u16;
                let r = Rect {
                    y,
                    height: 1,
                    ..body
                };
                super::theme::line(&text.lines[idx]).render(r, buf);
                if !needle.is_empty() && peek.matches.binary_search(&idx).is_ok() {
                    highlight(buf, r, &text.plain[idx], &needle, current == Some(idx));
                }
            }
            if text.is_empty() {
                buf.set_string(body.x + 1, body.y, "(no output retained)", t.dim());
            }
        }
    }

    // Footer: the search being typed, a message, or the keys and where we are.
    let footer = Rect {
        y: area.bottom().saturating_sub(1),
        height: 1,
        ..area
    };
    if footer.y <= title.y {
        return;
    }
    if let Some(typed) = &peek.typing {
        Line::from(vec![
            Span::styled("/", t.key()),
            Span::raw(typed.clone()),
            Span::styled("█", t.dim()),
        ])
        .render(footer, buf);
        return;
    }
    let total = peek.text.as_ref().map_or(0, |t| t.len());
    let pos = if total == 0 {
        String::new()
    } else {
        let bottom = (peek.top + usize::from(body.height)).min(total);
        format!(" lines {}-{bottom} of {total}", peek.top + 1)
    };
    let search = match (&peek.query, peek.matches.len()) {
        (Some(q), 0) => format!(" · no match for {q:?}"),
        (Some(q), 1) => format!(" · 1 line matches {q:?}"),
        (Some(q), n) => format!(" · {n} lines match {q:?}"),
        _ => String::new(),
    };
    let note = peek
        .error
        .as_ref()
        .filter(|_| peek.text.is_some())
        .map(|e| format!(" · {e}"))
        .unwrap_or_default();
    // Where we are and what was found come first; the keys fill what is left.
    // Room is kept for `?` and the way back.
    let status = format!(
        "{}  ",
        fit(
            &format!("{pos}{search}{note}"),
            w.saturating_sub(24).max(10)
        )
    );
    let used = width(&status);
    let mut spans = vec![Span::styled(status, t.dim())];
    spans.extend(super::footer_spans(
        state,
        look,
        crate::core::keymap::View::Peek,
        w.saturating_sub(used),
    ));
    super::line_fit(spans, area.width).render(footer, buf);
}

/// Reverse-video on each occurrence of the needle in a line (the current match bold too).
fn highlight(buf: &mut Buffer, r: Rect, plain: &str, needle: &str, current: bool) {
    let smart = needle.chars().any(char::is_uppercase);
    let (hay, pat) = if smart {
        (plain.to_string(), needle.to_string())
    } else {
        (plain.to_lowercase(), needle.to_lowercase())
    };
    let mut style = Style::new().add_modifier(Modifier::REVERSED);
    if current {
        style = style.add_modifier(Modifier::BOLD);
    }
    let mut from = 0;
    while let Some(pos) = hay[from..].find(&pat) {
        // Columns, not characters: a wide character before the match takes two.
        let start = width(&hay[..from + pos]);
        let len = width(&pat);
        for x in start..start + len {
            if x < usize::from(r.width) {
                let cell = &mut buf[(r.x + x as u16, r.y)];
                cell.set_style(style);
            }
        }
        from += pos + pat.len().max(1);
        if from >= hay.len() {
            break;
        }
    }
}
