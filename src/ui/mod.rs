//! Drawing: borrows `&State`, decides nothing, changes nothing.

pub mod card;
pub mod help;
pub mod list;
pub mod lost;
pub mod peek;
pub mod start;
pub mod theme;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::core::keymap;
use crate::core::state::{Link, State};
use crate::core::text;
use card::CardCtx;
use theme::Theme;

/// What drawing needs besides the state: nothing here changes while running.
#[derive(Debug, Clone)]
pub struct Look {
    pub theme: Theme,
    pub home: Option<String>,
    pub tz: jiff::tz::TimeZone,
}

impl Look {
    /// Plain settings for tests: colour on, no home, UTC.
    pub fn plain() -> Look {
        Look {
            theme: Theme::dark(true),
            home: None,
            tz: jiff::tz::TimeZone::UTC,
        }
    }
}

/// The whole screen.
pub struct Screen<'a> {
    pub state: &'a State,
    pub look: &'a Look,
}

impl Widget for Screen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let state = self.state;
        let full_screen = if let Some(p) = &state.peek {
            peek::render(state, p, self.look, area, buf);
            true
        } else if state.lost_view() {
            lost::render(state, self.look, area, buf);
            true
        } else {
            false
        };
        if !full_screen {
            let header = Rect { height: 1, ..area };
            render_header(state, self.look, header, buf);
            if area.height >= 3 {
                let footer = Rect {
                    y: area.bottom() - 1,
                    height: 1,
                    ..area
                };
                render_footer(state, self.look, footer, buf);
            }
            let body = Rect {
                y: area.y + 1,
                height: area
                    .height
                    .saturating_sub(if area.height >= 3 { 2 } else { 1 }),
                ..area
            };
            if state.grid.shown.is_empty() {
                render_empty(state, self.look, body, buf);
            } else if state.geometry().list {
                list::render(state, self.look, area, buf);
                render_pane(state, self.look, area, buf);
            } else {
                render_grid(state, self.look, area, buf);
            }
        }
        if let (Some(form), false) = (&state.start, full_screen) {
            start::render(form, self.look, area, buf);
        }
        if state.overlays.show_help {
            help::render(self.look, state, area, buf);
        }
    }
}

/// Said in the header while auto-resume is off for every agent.
const AUTO_OFF: &str = " · auto-resume off (A)";

fn render_header(state: &State, look: &Look, area: Rect, buf: &mut Buffer) {
    let t = &look.theme;
    let c = state.counts();
    let alarm = c.dead > 0;
    let base = if alarm { t.alarm() } else { t.header() };
    buf.set_style(area, base);
    let mut spans = vec![Span::styled(
        " agentwatch ",
        base.add_modifier(ratatui::style::Modifier::BOLD),
    )];
    let st = |s: String| Span::styled(s, base);
    spans.push(st(format!(" {} running", c.running)));
    if c.waiting > 0 {
        spans.push(Span::styled(
            format!(" ({} waiting)", c.waiting),
            if alarm { base } else { t.waiting() },
        ));
    }
    if c.limited > 0 {
        spans.push(Span::styled(
            format!(" ({} at a usage limit)", c.limited),
            if alarm { base } else { t.waiting() },
        ));
    }
    // Resuming and gave-up agents are dead ones: said in brackets, never counted twice.
    let mut of_dead = Vec::new();
    if c.resuming > 0 {
        of_dead.push(format!("{} resuming", c.resuming));
    }
    if c.gave_up > 0 {
        of_dead.push(format!("{} gave up", c.gave_up));
    }
    // What goes wrong with supervision itself, in the alarm style: the rest of the header
    // may be cut at 80 columns, these must not be (the counts give up their details first).
    let alarms = supervision_alarms(state);
    let w = |s: &str| text::width(s);
    let counts_full = format!(
        " · {} dead ({}) · {} finished",
        c.dead,
        of_dead.join(", "),
        c.finished
    );
    let room = usize::from(area.width);
    // What the header says after the counts that must not be cut either: auto-resume off,
    // tmux not answering.
    let musts = usize::from(!state.supervision.auto_on) * w(AUTO_OFF)
        + match &state.servers.local().link {
            Link::Down(e) => w(&e.to_string()) + 3,
            _ => 0,
        };
    let terse = (!alarms.is_empty() || musts > 0)
        && spans.iter().map(|s| w(&s.content)).sum::<usize>()
            + w(&counts_full)
            + alarms.iter().map(|(_, short)| w(short)).sum::<usize>()
            + musts
            > room;
    if of_dead.is_empty() || terse {
        spans.push(st(format!(" · {} dead", c.dead)));
    } else {
        spans.push(st(format!(" · {} dead ({})", c.dead, of_dead.join(", "))));
    }
    if !terse {
        spans.push(st(format!(" · {} finished", c.finished)));
        if c.stopped > 0 {
            spans.push(st(format!(" · {} stopped", c.stopped)));
        }
    }
    for (long, short) in alarms {
        // In full when it fits (a file's path), else what failed and why.
        let fits = spans.iter().map(|s| w(&s.content)).sum::<usize>() + w(&long) <= room;
        spans.push(Span::styled(if fits { long } else { short }, t.alarm()));
    }
    if !state.grid.filter.is_empty() {
        spans.push(st(format!(
            " · {} of {} shown",
            state.grid.shown.len(),
            state.cards.len()
        )));
    }
    if !state.supervision.auto_on {
        spans.push(st(AUTO_OFF.into()));
    }
    for wave in state.supervision.waves.values() {
        spans.push(st(format!(
            " · {}",
            wave.describe(&state.supervision.pacing)
        )));
    }
    let malformed = state.servers.local().malformed;
    if malformed > 0 {
        // Never silently fewer panes than tmux has.
        spans.push(st(format!(
            " · {} unreadable pane record{} skipped (see log)",
            malformed,
            if malformed == 1 { "" } else { "s" }
        )));
    }
    match &state.servers.local().link {
        Link::Connecting => spans.push(st(" · connecting to tmux…".into())),
        Link::Up => {}
        Link::Down(e) => spans.push(st(format!(" · {e}"))),
    }
    // One banner per host that does not answer, in the alarm style.
    for (_, r) in state.servers.hosts() {
        let name = r.name.as_deref().unwrap_or_default();
        match (&r.link, r.down_since) {
            (Link::Down(e), Some(since)) => {
                let why = match e {
                    crate::core::errors::TmuxError::Unreachable { .. } => "unreachable".into(),
                    e => e.to_string(),
                };
                spans.push(Span::styled(
                    format!(
                        " · {name}: {why} since {}, retrying",
                        crate::core::time::clock(since, &look.tz)
                    ),
                    t.alarm(),
                ));
            }
            (Link::Connecting, _) => spans.push(st(format!(" · {name}: connecting…"))),
            _ => {}
        }
    }
    let used = |spans: &[Span]| -> usize { spans.iter().map(|s| text::width(&s.content)).sum() };
    if !state.supervision.supervising {
        // Who supervises: said in full when it fits, else as short as it can be said.
        let long = format!(
            " · supervised by {}",
            crate::core::state::supervisor_name(state.supervision.supervisor.as_ref())
        );
        let short = match state.supervision.supervisor {
            Some(s) if s.daemon => format!(" · daemon {}", s.pid),
            Some(s) => format!(" · supervisor pid {}", s.pid),
            None => " · supervised elsewhere".to_string(),
        };
        let fits = used(&spans) + text::width(&long) <= usize::from(area.width);
        spans.push(st(if fits { long } else { short }));
    }
    let left = used(&spans);
    let sock = format!("{} ", state.servers.socket);
    let room = usize::from(area.width).saturating_sub(left + 2);
    if room >= 20 {
        let sock = text::fit_left(&sock, room);
        let pad = room - text::width(&sock);
        spans.push(Span::styled(format!(" {}{sock}", " ".repeat(pad)), base));
    }
    line_fit(spans, area.width).render(area, buf);
}

/// What goes wrong with supervision itself, each said in full and short: a supervisor that
/// stopped answering (taken over here), a file of agentwatch's own that cannot be written.
fn supervision_alarms(state: &State) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let (true, Some((from, at))) = (state.supervision.supervising, state.supervision.took_over) {
        let who = match from.daemon {
            true => format!("daemon {}", from.pid),
            false => format!("dashboard {}", from.pid),
        };
        let ago = text::duration(state.now.saturating_sub(at));
        out.push((
            format!(" · {who} stopped answering {ago} ago; supervising here"),
            format!(" · {who} not answering; supervising here"),
        ));
    }
    for e in state.supervision.store_errors.values() {
        out.push((
            format!(" · {}", text::printable(&e.to_string())),
            format!(" · {} not written: {}", e.what, text::printable(&e.reason)),
        ));
    }
    out
}

/// The spans cut to `width` columns, by display width, with `…` where a cut falls.
pub fn line_fit(spans: Vec<Span<'_>>, width: u16) -> Line<'_> {
    let mut room = usize::from(width);
    let mut out = Vec::with_capacity(spans.len());
    for s in spans {
        if room == 0 {
            break;
        }
        let w = text::width(&s.content);
        if w <= room {
            room -= w;
            out.push(s);
        } else {
            out.push(Span::styled(text::fit(&s.content, room), s.style));
            break;
        }
    }
    Line::from(out)
}

fn render_footer(state: &State, look: &Look, area: Rect, buf: &mut Buffer) {
    let t = &look.theme;
    let w = usize::from(area.width);
    let mut lead: Vec<Span> = Vec::new();
    if state.grid.filter_typing {
        lead.push(Span::styled("/", t.key()));
        lead.push(Span::raw(text::printable(&state.grid.filter)));
        lead.push(Span::styled("█", t.dim()));
        lead.push(Span::styled(
            format!(
                "  {} of {} · Enter keeps · Esc clears",
                state.grid.shown.len(),
                state.cards.len()
            ),
            t.dim(),
        ));
        line_fit(lead, area.width).render(area, buf);
        return;
    }
    if !state.grid.filter.is_empty() {
        // A long filter leaves room for the keys.
        lead.push(Span::styled(
            format!(
                "filter \"{}\" ",
                text::fit(&state.grid.filter, (w / 3).saturating_sub(10).max(3))
            ),
            t.notice(),
        ));
        lead.push(Span::styled("Esc", t.key()));
        lead.push(Span::raw(" clears  "));
    }
    let used: usize = lead.iter().map(|s| text::width(&s.content)).sum();
    lead.extend(footer_spans(
        state,
        look,
        keymap::View::Grid,
        w.saturating_sub(used),
    ));
    line_fit(lead, area.width).render(area, buf);
}

/// The keys that work now in a view, from the key table, as many as fit in `room`
/// columns; `?` (all the keys) is always among them.
pub fn footer_spans(
    state: &State,
    look: &Look,
    view: keymap::View,
    room: usize,
) -> Vec<Span<'static>> {
    let t = &look.theme;
    let list = state.geometry().list;
    let items: Vec<(&str, &str)> = keymap::footer_items(view, |a| state.applies(a))
        .into_iter()
        .map(|(key, what)| match (key, what) {
            // `v` says where it goes.
            ("v", _) => (key, if list { "cards" } else { "list" }),
            ("?", _) if state.overlays.show_help => (key, "close"),
            _ => (key, what),
        })
        .collect();
    // `?` (every key) and the way out are always there.
    let always = |k: &str| matches!(k, "?" | "q" | "Esc/q");
    let cost = |(k, w): &(&str, &str)| text::width(k) + 1 + text::width(w) + 2;
    let mut budget = room.saturating_sub(
        items
            .iter()
            .filter(|(k, _)| always(k))
            .map(cost)
            .sum::<usize>(),
    );
    let mut keep = vec![false; items.len()];
    for (i, item) in items.iter().enumerate() {
        if always(item.0) {
            keep[i] = true;
        } else if cost(item) <= budget {
            budget -= cost(item);
            keep[i] = true;
        } else {
            // In order of importance: once one does not fit, the rest are left out too.
            budget = 0;
        }
    }
    let mut spans = Vec::new();
    for (item, _) in items.iter().zip(&keep).filter(|(_, k)| **k) {
        if !spans.is_empty() {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(item.0.to_string(), t.key()));
        spans.push(Span::raw(format!(" {}", item.1)));
    }
    spans
}

fn render_empty(state: &State, look: &Look, area: Rect, buf: &mut Buffer) {
    let other = "Another server: agentwatch -L NAME or -S PATH (the socket `tmux -L NAME` or `tmux -S PATH` uses).";
    let msg = match &state.servers.local().link {
        _ if !state.cards.is_empty() => format!(
            "No agent matches the filter {:?} (kind, window, session, directory or state).\nEsc clears it.",
            text::printable(&state.grid.filter)
        ),
        Link::Connecting => format!(
            "Connecting to the tmux server at {}…",
            state.servers.socket
        ),
        Link::Down(e) => format!(
            "{e}.\nagentwatch keeps polling: agents show up here as soon as a server runs there (start one with `tmux`).\n{other}\n`agentwatch demo` shows what it looks like, on a server of its own."
        ),
        Link::Up if state.grid.show_all => "The tmux server has no panes.".to_string(),
        Link::Up => format!(
            "No agent panes on {}.\nStart an agent (claude, codex, gemini, opencode, aider, cursor-agent, amp) in a tmux pane, or run `agentwatch spawn claude`.\n`agentwatch demo` shows what it looks like, with fake agents on a server of its own.\n{other}\n`agentwatch --all` shows every pane.",
            state.servers.socket
        ),
    };
    Paragraph::new(msg)
        .style(look.theme.dim())
        .wrap(Wrap { trim: true })
        .render(
            Rect {
                x: area.x + 1,
                y: area.y + 1,
                width: area.width.saturating_sub(2),
                height: area.height.saturating_sub(1),
            },
            buf,
        );
}

/// Everything a card needs of the state besides itself.
pub fn card_ctx<'a>(state: &'a State, look: &'a Look, i: usize) -> CardCtx<'a> {
    let card = &state.cards[i];
    let policy = state.policy(card.agent.as_deref());
    CardCtx {
        theme: look.theme,
        now: state.now,
        selected: state.selected_index() == Some(i),
        stale: state.card_stale(card),
        home: look.home.as_deref(),
        tz: &look.tz,
        lacks_id: crate::core::resume::lacks_id(card, &state.agents),
        relaunch: relaunch_words(card, state),
        max_attempts: policy.max_attempts,
        max_per_hour: policy.max_per_hour,
        host: state.host_name(card),
        waits: state
            .waits_in_wave(card)
            .map(|w| {
                if w.held.is_some() {
                    "waits: the first resumed died again (r resumes it now)".to_string()
                } else {
                    "waits its turn (mass death)".to_string()
                }
            })
            .or_else(|| state.waits_for_first(card)),
        limit_margin: state.supervision.continue_margin_ms,
        resets: state.limit_resets(card),
        continues: state.continues(card),
        spend: state.spent(card).map(|s| (s.words(), s.full)),
    }
}

/// A box `w` wide and `h` tall (at most the area's height) in the middle of `area`, for an
/// overlay.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let (w, h) = (w.min(area.width), h.min(area.height));
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// The list's preview pane: the selected agent's card, with as much of its screen as fits.
fn render_pane(state: &State, look: &Look, area: Rect, buf: &mut Buffer) {
    let (Some(p), Some(i)) = (state.geometry().pane, state.selected_index()) else {
        return;
    };
    if !state.grid.shown.contains(&i) {
        return;
    }
    let rect = Rect {
        x: area.x + p.x,
        y: area.y + p.y,
        width: p.w.min(area.width.saturating_sub(p.x)),
        height: p.h.min(area.height.saturating_sub(p.y + 1)),
    };
    let ctx = CardCtx {
        // Its border is its state's, not the selection's: the list's row is selected.
        selected: false,
        ..card_ctx(state, look, i)
    };
    card::render(&state.cards[i], &ctx, rect, buf);
}

fn render_grid(state: &State, look: &Look, area: Rect, buf: &mut Buffer) {
    let g = state.geometry();
    for (slot, i) in state.visible().enumerate() {
        let Some(cell) = g.cell(area.width, area.height, slot) else {
            break;
        };
        card::render(
            &state.cards[i],
            &card_ctx(state, look, i),
            Rect {
                x: area.x + cell.x,
                y: area.y + cell.y,
                width: cell.w,
                height: cell.h,
            },
            buf,
        );
    }
    // Say there is more, on the bottom border, rather than hide it.
    let bottom = area.y + (g.top() + g.rows as u16 * g.card_h).min(area.height.saturating_sub(1));
    more_note(state, look, area, bottom.saturating_sub(1), buf);
}

/// `3 above · 5 below` at the right of row `y`, in the alarm style when a dead agent is
/// among those off screen (or hidden by the filter): a crash must not go unnoticed.
/// Returns the columns it took at the right of `area`.
pub fn more_note(state: &State, look: &Look, area: Rect, y: u16, buf: &mut Buffer) -> u16 {
    let page = state.page();
    let above = page.start;
    let below = state.grid.shown.len() - page.end;
    let dead = |c: &crate::core::card::Card| c.agent.is_some() && c.is_alarm();
    let dead_off = state.cards.iter().filter(|c| dead(c)).count()
        - state.visible().filter(|&i| dead(&state.cards[i])).count();
    let filtered = state.cards.len() - state.grid.shown.len();
    if above + below + dead_off == 0 || area.width <= 20 {
        return 0;
    }
    let mut parts = Vec::new();
    if above > 0 {
        parts.push(format!("{above} above"));
    }
    if below > 0 {
        parts.push(format!("{below} below"));
    }
    if dead_off > 0 {
        parts.push(if filtered > 0 {
            format!("{dead_off} dead off screen or filtered out")
        } else {
            format!("{dead_off} dead off screen")
        });
    }
    let note = text::fit(
        &format!(" {} ", parts.join(" · ")),
        usize::from(area.width.saturating_sub(4)),
    );
    let style = if dead_off > 0 {
        look.theme.alarm()
    } else {
        look.theme.dim()
    };
    let x = area.right().saturating_sub(text::width(&note) as u16 + 2);
    buf.set_string(x, y, note, style);
    area.right() - x
}

#[cfg(test)]
mod tests;

/// For a dead agent its pane's process ran (a wrapper, a launcher, a `bash -c`): what `r`
/// will run, or why not. Said only for those: elsewhere it is the agent's usual resume.
fn relaunch_words(card: &crate::core::card::Card, state: &State) -> Option<String> {
    // A recorded id that is not this agent's: said before `r` is pressed, whoever
    // supervises and whether auto-resume is on or not.
    let def = card.agent.as_deref().and_then(|k| state.agents.get(k));
    if let (true, Some(def)) = (card.life.is_dead(), def) {
        if let Err(crate::core::resume::Refusal(why)) =
            crate::core::resume::known_session_id(card, def)
        {
            return Some(why);
        }
    }
    let host = card.launcher.as_ref().filter(|h| !h.prompt)?;
    if !card.life.is_dead() {
        return None;
    }
    Some(
        match crate::core::resume::plan(card, &state.agents, false, "") {
            Ok(plan) => format!(
                "r runs: {}",
                plan.argv
                    .iter()
                    .map(|w| crate::core::words::shell_quote(w))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            Err(crate::core::resume::Refusal(why)) if host.alive => why,
            Err(_) => return None,
        },
    )
}
