//! Drawing: borrows `&State`, decides nothing, changes nothing.

pub mod card;
pub mod help;
pub mod lost;
pub mod peek;
pub mod theme;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::core::keymap;
use crate::core::state::{Server, State};
use crate::core::{layout, text};
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
            theme: Theme { color: true },
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
        let full_screen = if let Some(p) = &self.state.peek {
            peek::render(self.state, p, self.look, area, buf);
            true
        } else if self.state.lost_view() {
            lost::render(self.state, self.look, area, buf);
            true
        } else {
            false
        };
        if full_screen {
            if self.state.show_help {
                let policy = self.state.policy(None);
                help::render(self.look, self.state.view(), policy, area, buf);
            }
            return;
        }
        let header = Rect { height: 1, ..area };
        render_header(self.state, self.look, header, buf);
        if area.height >= 3 {
            let footer = Rect {
                y: area.bottom() - 1,
                height: 1,
                ..area
            };
            render_footer(self.look, footer, buf);
        }
        let body = Rect {
            y: area.y + 1,
            height: area
                .height
                .saturating_sub(if area.height >= 3 { 2 } else { 1 }),
            ..area
        };
        if self.state.cards.is_empty() {
            render_empty(self.state, self.look, body, buf);
        } else {
            render_grid(self.state, self.look, body, buf);
        }
        if self.state.show_help {
            help::render(
                self.look,
                self.state.view(),
                self.state.policy(None),
                area,
                buf,
            );
        }
    }
}

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
    // Resuming and gave-up agents are dead ones: said in brackets, never counted twice.
    let mut of_dead = Vec::new();
    if c.resuming > 0 {
        of_dead.push(format!("{} resuming", c.resuming));
    }
    if c.gave_up > 0 {
        of_dead.push(format!("{} gave up", c.gave_up));
    }
    if of_dead.is_empty() {
        spans.push(st(format!(" · {} dead", c.dead)));
    } else {
        spans.push(st(format!(" · {} dead ({})", c.dead, of_dead.join(", "))));
    }
    spans.push(st(format!(" · {} finished", c.finished)));
    if !state.auto_on {
        spans.push(st(" · auto-resume off (A)".into()));
    }
    if let Some(e) = &state.journal_error {
        spans.push(st(format!(" · {}", text::printable(e))));
    }
    if state.malformed > 0 {
        // Never silently fewer panes than tmux has.
        spans.push(st(format!(
            " · {} unreadable pane record{} skipped (see log)",
            state.malformed,
            if state.malformed == 1 { "" } else { "s" }
        )));
    }
    match &state.server {
        Server::Connecting => spans.push(st(" · connecting to tmux…".into())),
        Server::Up => {}
        Server::Down(e) => spans.push(st(format!(" · {e}"))),
    }
    if !state.supervising {
        // Who supervises: said in full when it fits, else as short as it can be said.
        let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
        let long = format!(
            " · supervised by {}",
            crate::core::state::supervisor_name(state.supervisor.as_ref())
        );
        let short = match state.supervisor {
            Some(s) if s.daemon => format!(" · daemon {}", s.pid),
            Some(s) => format!(" · supervisor pid {}", s.pid),
            None => " · supervised elsewhere".to_string(),
        };
        let fits = used + long.chars().count() <= usize::from(area.width);
        spans.push(st(if fits { long } else { short }));
    }
    let left: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let sock = format!("{} ", state.socket);
    let room = usize::from(area.width).saturating_sub(left + 2);
    if room >= 20 {
        spans.push(Span::styled(
            format!(" {:>room$}", text::fit_left(&sock, room)),
            base,
        ));
    }
    Line::from(spans).render(area, buf);
}

fn render_footer(look: &Look, area: Rect, buf: &mut Buffer) {
    Line::from(footer_spans(look, keymap::View::Grid)).render(area, buf);
}

/// The main keys of a view, from the key table.
pub fn footer_spans(look: &Look, view: keymap::View) -> Vec<Span<'static>> {
    let t = &look.theme;
    let mut spans = Vec::new();
    for (i, (key, what)) in keymap::footer_items(view).into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(key, t.key()));
        spans.push(Span::raw(format!(" {what}")));
    }
    spans
}

fn render_empty(state: &State, look: &Look, area: Rect, buf: &mut Buffer) {
    let msg = match &state.server {
        Server::Connecting => format!("Connecting to the tmux server at {}…", state.socket),
        Server::Down(e) => format!("{e}.\nagentwatch keeps polling: agents show up here as soon as a server runs there (start one with `tmux`, or pick another with -L NAME or -S PATH)."),
        Server::Up if state.show_all => "The tmux server has no panes.".to_string(),
        Server::Up => format!(
            "No agent panes on {}.\nStart an agent (claude, codex, gemini, opencode, aider, cursor-agent, amp) in a tmux pane, or run `agentwatch spawn claude`. `agentwatch --all` shows every pane.",
            state.socket
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

fn render_grid(state: &State, look: &Look, area: Rect, buf: &mut Buffer) {
    let g = layout::geometry(area.width, area.height + layout::CHROME_H);
    let col_w = area.width / g.cols as u16;
    let selected = state.selected_index();
    for (slot, i) in state.visible().enumerate() {
        let (row, col) = (slot / g.cols, slot % g.cols);
        let x = area.x + col as u16 * col_w;
        let w = if col + 1 == g.cols {
            area.right() - x
        } else {
            col_w
        };
        let y = area.y + row as u16 * g.card_h;
        let h = g.card_h.min(area.bottom().saturating_sub(y));
        if h == 0 {
            break;
        }
        let ctx = CardCtx {
            theme: look.theme,
            now: state.now,
            selected: selected == Some(i),
            stale: state.is_stale(),
            home: look.home.as_deref(),
            tz: &look.tz,
            lacks_id: crate::core::resume::lacks_id(&state.cards[i], &state.agents),
            relaunch: relaunch_words(&state.cards[i], state),
            max_attempts: state.policy(state.cards[i].agent.as_deref()).max_attempts,
            max_per_hour: state.policy(state.cards[i].agent.as_deref()).max_per_hour,
        };
        card::render(
            &state.cards[i],
            &ctx,
            Rect {
                x,
                y,
                width: w,
                height: h,
            },
            buf,
        );
    }
    // Say there is more, on the bottom border, rather than hide it.
    let visible = state.visible();
    let hidden_below = state.cards.len() - visible.end;
    let hidden_above = visible.start;
    if hidden_above + hidden_below > 0 && area.width > 20 {
        // A crash off screen must not go unnoticed: say so, in the alarm style.
        let dead_off = state
            .cards
            .iter()
            .enumerate()
            .filter(|(i, c)| !visible.contains(i) && c.life.is_alarm())
            .count();
        let (note, style) = if dead_off > 0 {
            (
                format!(
                    " {hidden_above} above · {hidden_below} below · {dead_off} dead off screen "
                ),
                look.theme.alarm(),
            )
        } else {
            (
                format!(" {hidden_above} above · {hidden_below} below "),
                look.theme.dim(),
            )
        };
        let x = area.right().saturating_sub(note.chars().count() as u16 + 2);
        let y = area.y
            + (g.rows as u16 * g.card_h)
                .min(area.height)
                .saturating_sub(1);
        buf.set_string(x, y, note, style);
    }
}

#[cfg(test)]
mod tests;

/// For a dead agent its pane's process ran (a wrapper, a launcher, a `bash -c`): what `r`
/// will run, or why not. Said only for those: elsewhere it is the agent's usual resume.
fn relaunch_words(card: &crate::core::watch::Card, state: &State) -> Option<String> {
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
    let host = card.shell.as_ref().filter(|h| !h.prompt)?;
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
