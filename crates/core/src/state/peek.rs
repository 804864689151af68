//! The peek view, closing dead panes and jumping to a pane, as decisions of the core.

use std::sync::Arc;

use super::*;
use crate::input::{Key, KeyCode};
use crate::keymap::{self, View};
use crate::peek_model::{Peek, Shown};

/// How long the `x` confirmation waits for the second `x`.
pub const CONFIRM_MS: Millis = 5_000;

impl State {
    pub fn view(&self) -> View {
        if self.peek.is_some() {
            View::Peek
        } else if self.lost_view() {
            View::Lost
        } else {
            View::Grid
        }
    }

    /// The lost-server screen is up.
    pub fn lost_view(&self) -> bool {
        self.lost.roster.is_some() && !self.lost.hidden
    }

    /// Lines the peek view has for output (title and footer take one each).
    pub fn peek_height(&self) -> usize {
        usize::from(self.size.1.saturating_sub(2)).max(1)
    }

    pub(super) fn key(&mut self, ev: Key, now: Millis, fx: &mut Vec<Effect>) {
        if self.start.is_some() {
            self.start_key(&ev, fx);
            return;
        }
        if let Some(p) = self.peek.as_mut() {
            if let Some(typed) = p.typing.as_mut() {
                match ev.code {
                    KeyCode::Enter => {
                        let q = std::mem::take(typed);
                        p.typing = None;
                        p.search(q);
                    }
                    KeyCode::Esc => p.typing = None,
                    KeyCode::Backspace => {
                        typed.pop();
                    }
                    KeyCode::Char('c') if ev.ctrl => p.typing = None,
                    KeyCode::Char(c) => typed.push(c),
                    _ => {}
                }
                return;
            }
        }
        if self.filter_key(&ev, now, fx) {
            return;
        }
        if let Some(a) = keymap::action_for(self.view(), &ev) {
            self.act(a, now, fx);
        }
    }

    /// Grid actions that lead out of the grid: peek, close, jump.
    pub(super) fn grid_extra(&mut self, a: Action, now: Millis, fx: &mut Vec<Effect>) {
        let Some(i) = self.selected_index() else {
            return;
        };
        self.choose_selected();
        let id = self.cards[i].pane.id;
        match a {
            Action::Peek => self.open_peek(i, now, fx),
            Action::Close if self.cards[i].pane.dead && !self.cards[i].orphans.is_empty() => {
                // What its last run left running outside the pane goes first (the pane
                // stays: r relaunches there once nothing else runs the agent).
                let card = &mut self.cards[i];
                let words = crate::resume::orphans_words(card).unwrap_or_default();
                if self
                    .overlays
                    .confirm_close
                    .is_some_and(|(p, t)| p == id && now.saturating_sub(t) < CONFIRM_MS)
                {
                    self.overlays.confirm_close = None;
                    card.notice = Some(Notice::info("ending it…", None).answering());
                    fx.push(Effect::EndOrphans {
                        pane: id,
                        procs: card.orphans.iter().map(|p| (p.pid, p.start)).collect(),
                    });
                } else {
                    self.overlays.confirm_close = Some((id, now));
                    card.notice = Some(
                        Notice::alarm(
                            format!("{words}: press x again to end it (SIGTERM, then SIGKILL)"),
                            Some(now + CONFIRM_MS),
                        )
                        .answering(),
                    );
                }
            }
            Action::Close => {
                let card = &mut self.cards[i];
                if !card.pane.dead {
                    card.notice = Some(
                        Notice::alarm(
                            "still running: x only closes dead panes",
                            Some(now + NOTICE_MS),
                        )
                        .answering(),
                    );
                } else if self
                    .overlays
                    .confirm_close
                    .is_some_and(|(p, t)| p == id && now.saturating_sub(t) < CONFIRM_MS)
                {
                    self.overlays.confirm_close = None;
                    card.notice = Some(Notice::info("closing…", None).answering());
                    fx.push(Effect::KillPane(id));
                } else {
                    self.overlays.confirm_close = Some((id, now));
                    card.notice = Some(
                        Notice::alarm(
                            format!("press x again to close {id} and its retained output"),
                            Some(now + CONFIRM_MS),
                        )
                        .answering(),
                    );
                }
            }
            Action::Jump if !id.server().is_local() => {
                let host = self.host_name(&self.cards[i]).unwrap_or("?").to_string();
                let target = crate::words::shell_quote(&self.cards[i].pane.target());
                self.cards[i].notice = Some(
                    Notice::info(
                        format!("on host {host}: ssh -t {host} tmux attach -t {target} (its ssh destination as [[hosts]] says)"),
                        Some(now + 4 * NOTICE_MS),
                    )
                    .answering(),
                );
            }
            Action::Jump => {
                let card = &mut self.cards[i];
                match &self.client {
                    Some(viewer) => fx.push(Effect::Jump {
                        pane: id,
                        viewer: viewer.clone(),
                    }),
                    None => {
                        let attach = format!(
                            "tmux -S {} attach -t {}",
                            crate::words::shell_quote(&self.servers.socket),
                            crate::words::shell_quote(&card.pane.target())
                        );
                        let words = if self.in_other_tmux {
                            format!("this is another tmux server: from a terminal outside tmux, {attach}")
                        } else {
                            format!("outside tmux: {attach}")
                        };
                        card.notice = Some(Notice::answering(Notice::info(
                            words,
                            Some(now + 4 * NOTICE_MS),
                        )));
                    }
                }
            }
            _ => {}
        }
    }

    fn open_peek(&mut self, i: usize, now: Millis, fx: &mut Vec<Effect>) {
        let card = &self.cards[i];
        let id = card.pane.id;
        self.peek = Some(Peek::new(id, self.peek_height(), now));
        fx.push(Effect::CaptureOutput(id));
        fx.push(Effect::LoadRecords {
            pane: id,
            host: self.host_name(card).map(str::to_string),
            session_id: (!card.pane.opts.session_id.is_empty())
                .then(|| card.pane.opts.session_id.clone()),
        });
    }

    pub(super) fn peek_act(&mut self, a: Action, now: Millis, fx: &mut Vec<Effect>) {
        let Some(p) = self.peek.as_mut() else {
            return;
        };
        match a {
            Action::Up => p.scroll(-1),
            Action::Down => p.scroll(1),
            Action::PageUp => p.page(false),
            Action::PageDown => p.page(true),
            Action::First => p.first(),
            Action::Last => p.bottom(),
            Action::Search => p.typing = Some(String::new()),
            Action::Next => p.next(false),
            Action::Prev => p.prev(),
            Action::Older if !p.records_loaded => p.want_older = true,
            Action::Older if !p.older() => {
                p.error = Some("no older crash record for this pane".into());
            }
            Action::Newer => {
                p.newer();
            }
            Action::Refresh => {
                p.go_live(now);
                fx.push(Effect::CaptureOutput(p.pane));
            }
            Action::Relaunch | Action::RelaunchFresh => {
                let pane = p.pane;
                self.grid.selected = Some(pane);
                self.grid.chosen = true;
                self.grid.hidden_choice = None;
                self.relaunch(a == Action::RelaunchFresh, now, fx);
                // Leave the view on the grid card, where the outcome is shown.
                self.peek = None;
            }
            Action::Back => self.peek = None,
            Action::Quit => self.quit = true,
            Action::Help => self.open_help(),
            _ => {}
        }
    }

    pub(super) fn output_read(
        &mut self,
        pane: PaneId,
        result: Result<Arc<crate::peek_model::PeekText>, crate::errors::OutputError>,
    ) {
        let Some(p) = self.peek.as_mut().filter(|p| p.pane == pane) else {
            return;
        };
        match result {
            Ok(text) => {
                p.live = Some(Arc::clone(&text));
                // A record asked for (or shown) meanwhile stays on screen.
                if matches!(p.source, Shown::Live { .. }) && !p.want_older {
                    p.show(text);
                }
            }
            Err(e) => p.error = Some(e.to_string()),
        }
    }

    pub(super) fn records(
        &mut self,
        pane: PaneId,
        records: Vec<Arc<crate::peek_model::PeekRecord>>,
    ) {
        if let Some(p) = self.peek.as_mut().filter(|p| p.pane == pane) {
            p.records = records;
            p.records_loaded = true;
            if std::mem::take(&mut p.want_older) && !p.older() {
                if let Some(live) = p.live.clone() {
                    p.show(live);
                }
                p.error = Some("no older crash record for this pane".into());
            }
        }
    }

    /// The orphans of a pane's last run were ended, or could not be.
    pub(super) fn orphans_ended(&mut self, pane: PaneId, result: Result<(), String>, now: Millis) {
        let Some(card) = self.cards.iter_mut().find(|c| c.pane.id == pane) else {
            return;
        };
        card.notice = Some(
            match result {
                Ok(()) => {
                    // Gone: the next look confirms it; meanwhile r is not refused for it.
                    card.orphans.clear();
                    Notice::info(
                        "ended what its last run left running: r relaunches",
                        Some(now + 4 * NOTICE_MS),
                    )
                }
                Err(e) => {
                    Notice::alarm(format!("could not end it: {e}"), Some(now + 4 * NOTICE_MS))
                }
            }
            .answering(),
        );
    }

    pub(super) fn closed(&mut self, pane: PaneId, result: Result<(), TmuxError>, now: Millis) {
        match result {
            // Gone at once, not at the next poll: closing a server's last pane ends the
            // server (tmux's `exit-empty`), and a card still there would be counted lost.
            Ok(()) => {
                // A listing taken before the close is not to bring it back.
                self.overlays.closing.insert(pane);
                let place = self
                    .cards
                    .iter()
                    .find(|c| c.pane.id == pane)
                    .map(Card::place);
                self.cards.retain(|c| c.pane.id != pane);
                // The selection moves as when a poll sees its card go.
                if self.grid.selected == Some(pane) {
                    self.select_in_place_of(place);
                }
            }
            Err(e) => {
                if let Some(card) = self.cards.iter_mut().find(|c| c.pane.id == pane) {
                    card.notice = Some(
                        Notice::alarm(format!("could not close: {e}"), Some(now + NOTICE_MS))
                            .answering(),
                    );
                }
            }
        }
    }

    pub(super) fn jumped(
        &mut self,
        pane: PaneId,
        result: Result<(), crate::errors::JumpError>,
        now: Millis,
    ) {
        match result {
            // A popup would hide the pane the client now shows: done, as the user asked.
            Ok(()) if matches!(self.client, Some(crate::msg::Viewer::Popup { .. })) => {
                self.quit = true;
            }
            Ok(()) => {}
            Err(e) => {
                if let Some(card) = self.cards.iter_mut().find(|c| c.pane.id == pane) {
                    card.notice = Some(
                        Notice::alarm(
                            format!("could not go to the pane: {e}"),
                            Some(now + NOTICE_MS),
                        )
                        .answering(),
                    );
                }
            }
        }
    }
}
