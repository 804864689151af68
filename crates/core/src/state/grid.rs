//! The grid's own input: the filter typed after `/`, and the mouse.

use super::*;
use crate::input::{Button, Key, KeyCode, Mouse, MouseKind};
use crate::keymap::View;
use crate::peek_model::Shown;

impl State {
    /// A key while the filter is typed. Returns false when it is not for the filter.
    pub(super) fn filter_key(&mut self, ev: &Key, now: Millis, fx: &mut Vec<Effect>) -> bool {
        if !self.grid.filter_typing || self.view() != View::Grid || self.overlays.show_help {
            return false;
        }
        let ctrl = ev.ctrl;
        match ev.code {
            // Enter keeps the filter and gives the keys back to the grid.
            KeyCode::Enter => self.grid.filter_typing = false,
            KeyCode::Esc => {
                self.grid.filter_typing = false;
                self.grid.filter.clear();
            }
            KeyCode::Char('c') if ctrl => {
                self.grid.filter_typing = false;
                self.grid.filter.clear();
            }
            KeyCode::Char('u') if ctrl => self.grid.filter.clear(),
            KeyCode::Backspace => {
                self.grid.filter.pop();
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => self.grid.filter.push(c),
            // Moving while typing: the selection goes through what is left.
            KeyCode::Up => self.act(Action::Up, now, fx),
            KeyCode::Down => self.act(Action::Down, now, fx),
            KeyCode::PageUp => self.act(Action::PageUp, now, fx),
            KeyCode::PageDown => self.act(Action::PageDown, now, fx),
            KeyCode::Home => self.act(Action::First, now, fx),
            KeyCode::End => self.act(Action::Last, now, fx),
            KeyCode::Tab => self.act(Action::NextNeed, now, fx),
            _ => {}
        }
        true
    }

    /// A click selects the card under it, a second click on it soon after peeks, the wheel
    /// moves the selection (or scrolls the peek view).
    pub(super) fn mouse(&mut self, ev: Mouse, now: Millis, fx: &mut Vec<Effect>) {
        if self.overlays.show_help {
            if let MouseKind::Press(_) = ev.kind {
                self.overlays.show_help = false;
            }
            return;
        }
        let view = self.view();
        match (view, ev.kind) {
            (View::Peek, MouseKind::ScrollUp) => {
                if let Some(p) = self.peek.as_mut() {
                    p.scroll(-3);
                }
            }
            (View::Peek, MouseKind::ScrollDown) => {
                if let Some(p) = self.peek.as_mut() {
                    p.scroll(3);
                }
            }
            (View::Grid, MouseKind::ScrollUp) => self.act(Action::Up, now, fx),
            (View::Grid, MouseKind::ScrollDown) => self.act(Action::Down, now, fx),
            (View::Grid, MouseKind::Press(Button::Left)) => {
                // A click ends typing (the filter stays): the keys are the grid's again.
                self.grid.filter_typing = false;
                let g = self.geometry();
                let Some(slot) = g.slot_at(self.size.0, self.size.1, ev.column, ev.row) else {
                    return;
                };
                let pos = self.page().start + slot;
                let Some(&i) = self.grid.shown.get(pos) else {
                    return;
                };
                let id = self.cards[i].pane.id;
                let again = self
                    .grid
                    .last_click
                    .is_some_and(|(p, t)| p == id && now.saturating_sub(t) <= DOUBLE_CLICK_MS);
                self.select_pos(pos);
                if again {
                    self.grid.last_click = None;
                    self.act(Action::Peek, now, fx);
                } else {
                    self.grid.last_click = Some((id, now));
                }
            }
            _ => {}
        }
    }
}

impl State {
    /// The footer's relaunch key for a dead card: `r` where it resumes; `R` where only a
    /// fresh start would run (no session id); `r` again where both refuse (its refusal says
    /// why).
    fn relaunch_key(&self, card: &Card) -> Action {
        let plans = |fresh| {
            crate::resume::plan(card, &self.agents, fresh, crate::agent::SESSION_ID).is_ok()
        };
        if !plans(false) && plans(true) {
            Action::RelaunchFresh
        } else {
            Action::Relaunch
        }
    }

    /// Whether some lost agent can be recreated (R has something to do).
    pub(super) fn can_recreate(&self) -> bool {
        self.lost
            .roster
            .as_ref()
            .is_some_and(|l| l.recreatable(&self.agents) > 0)
    }

    /// Whether a key's action does something now, in the view shown: the footer shows
    /// only those (`]` only on a crash record, `n`/`N` only with matches, `r` only for a
    /// dead agent).
    pub fn applies(&self, a: Action) -> bool {
        // Over the help, only the keys that close it or quit do anything.
        if self.overlays.show_help {
            return matches!(a, Action::Help | Action::Back | Action::Quit);
        }
        match self.view() {
            View::Peek => {
                let Some(p) = &self.peek else {
                    return false;
                };
                let card = self.cards.iter().find(|c| c.pane.id == p.pane);
                let dead = card.is_some_and(|c| c.life.is_dead());
                match a {
                    Action::Next | Action::Prev => !p.matches.is_empty(),
                    Action::Older => match p.source {
                        Shown::Live { .. } => !p.records_loaded || !p.records.is_empty(),
                        Shown::Record(i) => i + 1 < p.records.len(),
                    },
                    Action::Newer => matches!(p.source, Shown::Record(_)),
                    Action::Refresh => !dead && matches!(p.source, Shown::Live { .. }),
                    Action::Relaunch | Action::RelaunchFresh => {
                        dead && card.is_some_and(|c| self.relaunch_key(c) == a)
                    }
                    _ => true,
                }
            }
            View::Lost => {
                let asking = self.lost.confirm || self.lost.forget;
                match a {
                    // y and n answer a question; R only when there is one to recreate.
                    Action::Yes | Action::No => asking,
                    Action::RecreateAll => !asking && self.can_recreate(),
                    Action::Forget => !asking,
                    _ => true,
                }
            }
            View::Grid => {
                let card = self.selected_index().map(|i| &self.cards[i]);
                let dead = card.is_some_and(|c| c.life.is_dead() && c.agent.is_some());
                match a {
                    Action::NextNeed => self.grid.shown.iter().any(|&i| {
                        let c = &self.cards[i];
                        c.agent.is_some() && (c.is_alarm() || c.attention.is(Doing::Waiting))
                    }),
                    // r where it resumes; where it would refuse (no session id), R.
                    Action::Relaunch | Action::RelaunchFresh => {
                        dead && card.is_some_and(|c| self.relaunch_key(c) == a)
                    }
                    Action::Close => dead,
                    Action::CancelAuto => {
                        card.is_some_and(|c| matches!(c.auto, Auto::Scheduled { .. }))
                    }
                    Action::Peek | Action::Jump | Action::ToggleAuto | Action::ToggleContinue => {
                        card.is_some()
                    }
                    Action::SwitchView => !self.grid.shown.is_empty(),
                    Action::Filter => !self.cards.is_empty(),
                    _ => true,
                }
            }
        }
    }
}
