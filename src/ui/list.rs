//! The list: one line per agent, so that every agent that needs its user is on one screen
//! (twenty at 80x24). Columns give way by importance as the terminal narrows; the selected
//! agent's own words (its banner and notice, as its card says them) are on the line under
//! the list.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::card::{next_step, notice, status_line};
use super::{card_ctx, line_fit, more_note, Look};
use crate::core::attention::Doing;
use crate::core::card::{Card, Life};
use crate::core::cause::Cause;
use crate::core::state::State;
use crate::core::text::{duration, fit_left, pad, short_id, tilde, width};
use crate::core::time::Millis;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    State,
    Next,
    Host,
    Kind,
    Target,
    Window,
    Age,
    Dir,
    Session,
    Spent,
    Last,
}

impl Col {
    const SHOWN: [Col; 11] = [
        Col::State,
        Col::Next,
        Col::Host,
        Col::Kind,
        Col::Target,
        Col::Window,
        Col::Age,
        Col::Dir,
        Col::Session,
        Col::Spent,
        Col::Last,
    ];
    /// Who gives way last: the state first, the last line of output first to go.
    const BY_IMPORTANCE: [Col; 11] = [
        Col::State,
        Col::Next,
        Col::Host,
        Col::Target,
        Col::Kind,
        Col::Age,
        Col::Spent,
        Col::Dir,
        Col::Window,
        Col::Session,
        Col::Last,
    ];

    fn name(self) -> &'static str {
        match self {
            Col::State => "state",
            Col::Next => "next",
            Col::Host => "host",
            Col::Kind => "kind",
            Col::Target => "target",
            Col::Window => "window",
            Col::Age => "for",
            Col::Dir => "directory",
            Col::Session => "session",
            Col::Spent => "spent",
            Col::Last => "last line",
        }
    }
}

/// The state column: a symbol and a word, the exit in its short form for a death.
fn state_cell(card: &Card, state: &State, look: &Look) -> (String, Style) {
    let t = &look.theme;
    match card.life {
        Life::Dead(e) if e.is_clean() => ("✔ finished".into(), t.finished()),
        Life::Dead(_) if card.stopped_on_purpose() => ("■ stopped".into(), t.finished()),
        // Why, where it says more than the exit; short enough for 80 columns.
        Life::Dead(e) => match card.stop.as_ref().filter(|s| s.cause.is_telling()) {
            Some(s) => match (s.cause, s.resets_at) {
                (Cause::UsageLimit, Some(at)) => (
                    format!(
                        "✖ limit till {}",
                        crate::core::time::clock_or_date(at, state.now, &look.tz)
                    ),
                    t.alarm(),
                ),
                (c, _) => (format!("✖ {}", c.label()), t.alarm()),
            },
            None => (format!("✖ {}", e.short()), t.alarm()),
        },
        Life::Reading => ("✖ exit …".into(), t.alarm()),
        Life::Idle => ("○ at prompt".into(), t.dim()),
        Life::Running => match card.attention.state() {
            Some((Doing::Waiting, _)) => ("◆ waiting".into(), t.waiting()),
            Some((Doing::Idle, _)) => ("● idle".into(), t.idle()),
            Some((Doing::Limited, _)) => match state.limit_resets(card) {
                Some(at) => (
                    format!(
                        "⏸ limited till {}",
                        crate::core::time::clock_or_date(at, state.now, &look.tz)
                    ),
                    t.waiting(),
                ),
                None => ("⏸ limited".into(), t.waiting()),
            },
            Some((Doing::Working, _)) => ("● working".into(), t.running()),
            None => ("● running".into(), t.running()),
        },
    }
}

/// How long it has been what it is: dead, waiting, idle, working, or running.
fn age(card: &Card, now: Millis) -> String {
    let since = match card.life {
        Life::Dead(_) | Life::Reading => card.died_at,
        Life::Running => card
            .attention
            .state()
            .map(|(_, since)| since)
            .or(card.known_start()),
        Life::Idle => None,
    };
    since.map_or(String::new(), |t| duration(now.saturating_sub(t)))
}

/// Columns that fit in `w`, with their widths, in screen order.
fn columns(state: &State, look: &Look, w: usize) -> Vec<(Col, usize)> {
    let widest = |f: &dyn Fn(&Card) -> usize, cap: usize| {
        state
            .grid
            .shown
            .iter()
            .map(|&i| f(&state.cards[i]))
            .max()
            .unwrap_or(0)
            .clamp(4, cap)
    };
    let want = |c: Col| -> (usize, usize) {
        // (fewest columns it is shown in, most it takes)
        match c {
            // Why it stopped, or when its limit resets: whole, before any other column
            // (the others give way first).
            Col::State => {
                let n = widest(&|c| width(&state_cell(c, state, look).0), 20).max(11);
                (n, n)
            }
            Col::Next => {
                // Whole, key hint included, or not at all.
                let n = state
                    .grid
                    .shown
                    .iter()
                    .map(|&i| width(&next_cell(i, state, look).0))
                    .max()
                    .unwrap_or(0)
                    .clamp(4, 22);
                (n, n)
            }
            Col::Host => (
                5,
                widest(&|c| width(state.host_name(c).unwrap_or("local")), 12),
            ),
            Col::Kind => {
                // Whole: `clau…` tells less than no column.
                let n = widest(&|c| width(c.agent.as_deref().unwrap_or("pane")), 8);
                (n, n)
            }
            Col::Target => {
                let t = widest(&|c| width(&c.pane.target()), 16);
                (t.min(8), t)
            }
            Col::Window => (6, widest(&|c| width(&c.pane.window_name), 14)),
            Col::Age => (6, 6),
            Col::Dir => (
                8,
                widest(&|c| width(&tilde(c.pane.cwd(), look.home.as_deref())), 32),
            ),
            Col::Session => (8, 8),
            Col::Spent => {
                // Whole or not at all: a cut number misleads.
                let n = widest(&|c| width(&spent_cell(c, state)), 12);
                (n, n)
            }
            Col::Last => (10, usize::MAX),
        }
    };
    // The margin with the selection mark, and a space before each column. Each column's
    // wants are worked out once: some pass over every card shown.
    let mut used = 1;
    let mut chosen: Vec<(Col, usize, usize)> = Vec::new();
    for col in Col::BY_IMPORTANCE {
        // A column of hosts only where there are other hosts.
        if col == Col::Host && state.servers.hosts().next().is_none() {
            continue;
        }
        // What happens next only where something will (or is asked of the user).
        if col == Col::Next
            && !state
                .grid
                .shown
                .iter()
                .any(|&i| !next_cell(i, state, look).0.is_empty())
        {
            continue;
        }
        // What agents spent only where some agent's file says.
        if col == Col::Spent
            && !state
                .grid
                .shown
                .iter()
                .any(|&i| !spent_cell(&state.cards[i], state).is_empty())
        {
            continue;
        }
        // Never narrower than its name: `spe…` over a column tells nothing.
        let (min, most) = want(col);
        let name = width(col.name());
        let (min, most) = (min.max(name), most.max(name));
        if used + min < w {
            used += min + 1;
            chosen.push((col, min, most));
        }
    }
    // What is left widens them, in order of importance, up to what each wants.
    let mut left = w.saturating_sub(used);
    for (_, cw, most) in chosen.iter_mut() {
        let more = most.saturating_sub(*cw).min(left);
        *cw += more;
        left -= more;
    }
    Col::SHOWN
        .iter()
        .filter_map(|c| {
            chosen
                .iter()
                .find(|(k, _, _)| k == c)
                .map(|&(k, cw, _)| (k, cw))
        })
        .collect()
}

/// `63% 1.2M`, `1.2M`: the context's share (where its window is known) and the tokens.
fn spent_cell(card: &Card, state: &State) -> String {
    state.spent(card).map_or(String::new(), |s| s.short())
}

/// What happens next to card `i` (see [`next_step`]).
fn next_cell(i: usize, state: &State, look: &Look) -> (String, Style) {
    let card = &state.cards[i];
    // Most cards, looked at cheaply: a live agent not at a limit has no next step.
    let may = card.relaunch.is_some()
        || (card.life.is_dead() && !card.life.is_finished())
        || card.attention.is(crate::core::attention::Doing::Limited);
    if card.agent.is_none() || !may {
        return (String::new(), Style::new());
    }
    next_step(card, &card_ctx(state, look, i)).unwrap_or_default()
}

/// One cell of a line; `chosen`: the line is the selected one.
fn cell(i: usize, col: Col, state: &State, look: &Look, chosen: bool) -> (String, Style) {
    let t = &look.theme;
    let card = &state.cards[i];
    let p = &card.pane;
    match col {
        Col::State => state_cell(card, state, look),
        Col::Next => next_cell(i, state, look),
        Col::Host => match state.host_name(card) {
            Some(h) => (h.to_string(), t.title()),
            None => ("local".to_string(), t.dim()),
        },
        Col::Kind => (
            card.agent.as_deref().unwrap_or("pane").to_string(),
            t.title(),
        ),
        Col::Target => (p.target(), Style::new()),
        Col::Window => (p.window_name.clone(), Style::new()),
        Col::Age => (age(card, state.now), Style::new()),
        Col::Dir => (tilde(p.cwd(), look.home.as_deref()), t.dim()),
        Col::Session if !p.opts.session_id.is_empty() => (short_id(&p.opts.session_id), t.dim()),
        // Said, not left blank, when its resume needs one.
        Col::Session if crate::core::resume::lacks_id(card, &state.agents) => {
            ("no id".into(), t.notice())
        }
        Col::Session => (String::new(), t.dim()),
        Col::Spent => {
            let full = state.spent(card).is_some_and(|s| s.full);
            (
                spent_cell(card, state),
                if full { t.waiting() } else { t.dim() },
            )
        }
        // What a prompt asks, where it waits at one; else its last words (a dialog's
        // border says nothing).
        Col::Last => match card.attention.asks() {
            Some(asked) => (format!("asks: {asked}"), t.waiting()),
            _ => (
                card.preview
                    .iter()
                    .rev()
                    .find(|l| l.chars().any(char::is_alphanumeric))
                    .cloned()
                    .unwrap_or_default(),
                if chosen { Style::new() } else { t.dim() },
            ),
        },
    }
}

pub fn render(state: &State, look: &Look, area: Rect, buf: &mut Buffer) {
    let t = &look.theme;
    // The header, the column names, a line: below that the header alone says what it can.
    if area.height < 3 {
        return;
    }
    let g = state.geometry();
    // Beside the preview pane, the list ends where it begins.
    let area = match g.pane {
        Some(p) if p.x > 0 => Rect {
            width: p.x.min(area.width),
            ..area
        },
        _ => area,
    };
    let w = usize::from(area.width);
    let cols = columns(state, look, w);
    // A directory and a target are cut at their start: their ends tell them apart.
    let fit_col = |col: Col, s: &str, cw: usize| match col {
        Col::Dir | Col::Target => pad(&fit_left(s, cw), cw),
        _ => pad(s, cw),
    };
    // The names of the columns.
    let mut names = vec![Span::raw(" ")];
    for (col, cw) in &cols {
        names.push(Span::styled(
            format!("{} ", pad(col.name(), *cw)),
            t.dim().add_modifier(Modifier::BOLD),
        ));
    }
    // Scrolled or hiding a death: said at the right of the names, which give way to it.
    let note = more_note(state, look, area, area.y + 1, buf);
    let room = area.width.saturating_sub(note);
    buf.set_line(area.x, area.y + 1, &line_fit(names, room), room);

    let selected = state.selected_index();
    for (slot, i) in state.visible().enumerate() {
        let Some(c) = g.cell(area.width, area.height, slot) else {
            break;
        };
        let card = &state.cards[i];
        let chosen = selected == Some(i);
        let stale = state.card_stale(card);
        let mut spans = vec![Span::raw(if chosen { "▶" } else { " " })];
        for (col, cw) in &cols {
            let (text, mut style) = cell(i, *col, state, look, chosen);
            if stale {
                style = t.stale();
            }
            spans.push(Span::styled(fit_col(*col, &text, *cw), style));
            spans.push(Span::raw(" "));
        }
        let y = area.y + c.y;
        if chosen {
            buf.set_style(
                Rect {
                    x: area.x,
                    y,
                    width: area.width,
                    height: 1,
                },
                t.selected_row(),
            );
        }
        buf.set_line(area.x, y, &line_fit(spans, area.width), area.width);
    }

    // The selected agent in its card's own words: the banner, then its notice (its card
    // says them where the preview pane shows it).
    let detail_y = area.y + g.top() + g.rows as u16;
    if detail_y + 1 >= area.bottom() || g.pane.is_some() {
        return;
    }
    if let Some(i) = selected.filter(|i| state.grid.shown.contains(i)) {
        let ctx = card_ctx(state, look, i);
        let card = &state.cards[i];
        let (status, style) = status_line(card, &ctx);
        let mut spans = vec![Span::styled(format!(" {status}"), style)];
        if let Some((text, alarm)) = notice(card, &ctx) {
            // The notice whole, with its key hint: the row above says the state already,
            // so the banner gives way when both do not fit.
            if width(&status) + width(&text) + 4 > w {
                spans = vec![Span::raw(" ")];
            } else {
                spans.push(Span::raw(" · "));
            }
            spans.push(Span::styled(
                crate::core::text::fit_keep_end(&text, w.saturating_sub(2)),
                if alarm { t.alarm() } else { t.notice() },
            ));
        }
        let line = line_fit(spans, area.width);
        buf.set_line(area.x, detail_y, &line, area.width);
    }
}
