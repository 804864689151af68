//! The selection and the grid's keys: which cards the filter shows, moving through them,
//! and keeping the selected card on screen.

use super::*;

impl State {
    pub fn selected_index(&self) -> Option<usize> {
        let id = self.grid.selected?;
        self.cards.iter().position(|c| c.pane.id == id)
    }

    /// How the shown cards are laid out now.
    pub fn geometry(&self) -> Geometry {
        geometry(
            self.size.0,
            self.size.1,
            self.grid.shown.len(),
            self.grid.mode,
        )
    }

    /// The positions in [`State::shown`] of the cards on screen.
    pub fn page(&self) -> std::ops::Range<usize> {
        let g = self.geometry();
        let n = self.grid.shown.len();
        let start = (self.grid.scroll * g.cols).min(n);
        start..(start + g.per_page()).min(n)
    }

    /// Indices of the cards on screen, in screen order.
    pub fn visible(&self) -> impl Iterator<Item = usize> + '_ {
        self.grid.shown[self.page()].iter().copied()
    }

    /// Where the selected card is among those shown.
    pub fn selected_pos(&self) -> Option<usize> {
        let i = self.selected_index()?;
        self.grid.shown.iter().position(|&j| j == i)
    }

    /// Which cards the filter lets through, in order; the selection moves to the first of
    /// them when its card is filtered out.
    pub(super) fn refilter(&mut self) {
        let words: Vec<String> = self
            .grid
            .filter
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        self.grid.shown.clear();
        let home = self.grid.home.as_deref();
        let mut shown = std::mem::take(&mut self.grid.shown);
        shown.extend(
            self.cards
                .iter()
                .enumerate()
                .filter(|(_, c)| {
                    let host = self.host_name(c);
                    words.iter().all(|w| c.matches(w, home, host))
                })
                .map(|(i, _)| i),
        );
        self.grid.shown = shown;
        // An agent just started here is the choice once it shows.
        if let Some(id) = self.grid.want {
            if self.grid.shown.iter().any(|&i| self.cards[i].pane.id == id) {
                self.grid.selected = Some(id);
                self.grid.want = None;
                self.choose_selected();
            }
        }
        // The card chosen before the filter hid it comes back with it.
        if let Some(id) = self.grid.hidden_choice {
            if self.grid.shown.iter().any(|&i| self.cards[i].pane.id == id) {
                self.grid.selected = Some(id);
                self.grid.hidden_choice = None;
            } else if !self.cards.iter().any(|c| c.pane.id == id) {
                self.grid.hidden_choice = None;
            }
        }
        if self.selected_pos().is_none() && self.grid.chosen && self.grid.hidden_choice.is_none() {
            self.grid.hidden_choice = self.grid.selected;
        }
        if !self.grid.chosen || self.selected_pos().is_none() {
            self.grid.selected = self.grid.shown.first().map(|&i| self.cards[i].pane.id);
        }
        // The first looks decide who needs the user most (a screen read shows a prompt
        // a few hundred ms after the panes are listed); from then on the selection is the
        // user's to move.
        if self.grid.selected.is_some() {
            let first = *self.grid.first_shown.get_or_insert(self.now);
            if self.now.saturating_sub(first) >= SELECTION_SETTLE_MS {
                self.grid.chosen = true;
            }
        }
    }

    pub(super) fn act(&mut self, a: Action, now: Millis, fx: &mut Vec<Effect>) {
        if self.overlays.show_help {
            // A help taller than the terminal scrolls, within its lines.
            let total = crate::help::lines(self, self.size.0).len();
            let page = crate::help::shown(total, self.size.1).max(1);
            let end = total - page.min(total);
            let s = self.overlays.help_scroll.min(end);
            self.overlays.help_scroll = match a {
                Action::Help | Action::Back => {
                    self.overlays.show_help = false;
                    s
                }
                Action::Quit => {
                    self.quit = true;
                    s
                }
                Action::Down => s + 1,
                Action::Up => s.saturating_sub(1),
                Action::PageDown => s + page,
                Action::PageUp => s.saturating_sub(page),
                Action::First => 0,
                Action::Last => end,
                _ => s,
            }
            .min(end);
            return;
        }
        if self.peek.is_some() {
            self.peek_act(a, now, fx);
            return;
        }
        if self.lost_view() {
            self.lost_act(a, fx);
            return;
        }
        let g = self.geometry();
        let n = self.grid.shown.len();
        let cur = self.selected_pos();
        let target = match (a, cur) {
            (Action::Quit, _) => {
                self.quit = true;
                return;
            }
            (Action::Help, _) => {
                self.open_help();
                return;
            }
            (Action::Back, _) => {
                // Esc clears the filter.
                self.grid.filter.clear();
                return;
            }
            (Action::Start, _) => {
                self.open_start();
                return;
            }
            (Action::Filter, _) => {
                self.grid.filter_typing = true;
                return;
            }
            (Action::SwitchView, _) => {
                // The other view, and it stays: a filter that changes how many cards fit
                // must not flip it back.
                self.grid.mode = if g.list { Mode::Cards } else { Mode::List };
                self.grid.scroll = 0;
                return;
            }
            (
                Action::ToggleAuto
                | Action::CancelAuto
                | Action::ToggleAutoAll
                | Action::ToggleContinue,
                _,
            ) => {
                self.end_story();
                self.auto_key(a, now, fx);
                return;
            }
            (Action::Relaunch | Action::RelaunchFresh, _) => {
                self.end_story();
                self.relaunch(a == Action::RelaunchFresh, now, fx);
                return;
            }
            (Action::Peek | Action::Close | Action::Jump, _) => {
                self.grid_extra(a, now, fx);
                return;
            }
            (Action::NextNeed, cur) => {
                let needs = |c: &Card| {
                    c.agent.is_some() && (c.is_alarm() || c.attention.is(Doing::Waiting))
                };
                let start = cur.map_or(0, |i| i + 1);
                match (0..n)
                    .map(|k| (start + k) % n)
                    .find(|&j| needs(&self.cards[self.grid.shown[j]]))
                {
                    Some(j) => j,
                    None => {
                        if let Some(i) = self.selected_index() {
                            self.cards[i].notice = Some(Notice::info(
                                "no agent needs you: none is dead or waiting for input",
                                Some(now + NOTICE_MS),
                            ));
                        }
                        return;
                    }
                }
            }
            (
                Action::Search
                | Action::Next
                | Action::Prev
                | Action::Older
                | Action::Newer
                | Action::Refresh
                | Action::RecreateAll
                | Action::Forget
                | Action::Yes
                | Action::No,
                _,
            ) => return,
            (_, None) => 0,
            (Action::Up, Some(i)) => i.saturating_sub(g.cols),
            (Action::Down, Some(i)) if i + g.cols < n => i + g.cols,
            (Action::Down, Some(i)) => i,
            (Action::Left, Some(i)) => i.saturating_sub(1),
            (Action::Right, Some(i)) => (i + 1).min(n.saturating_sub(1)),
            (Action::PageUp, Some(i)) => i.saturating_sub(g.per_page()),
            (Action::PageDown, Some(i)) => (i + g.per_page()).min(n.saturating_sub(1)),
            (Action::First, _) => 0,
            (Action::Last, _) => n.saturating_sub(1),
        };
        self.select_pos(target);
    }

    /// The selection once its card has gone: the card that took its place (the first at or
    /// after its session, window and pane), else the last; with no place known, the first.
    pub(super) fn select_in_place_of(&mut self, place: Option<(String, u32, u32)>) {
        self.grid.selected = match place {
            Some(pos) => self
                .cards
                .iter()
                .find(|c| {
                    (&c.pane.session, c.pane.window_index, c.pane.pane_index)
                        >= (&pos.0, pos.1, pos.2)
                })
                .or(self.cards.last())
                .map(|c| c.pane.id),
            None => self.cards.first().map(|c| c.pane.id),
        };
    }

    /// Selects the `pos`-th card shown: the user chose it.
    pub(super) fn select_pos(&mut self, pos: usize) {
        if let Some(&i) = self.grid.shown.get(pos) {
            self.grid.selected = Some(self.cards[i].pane.id);
            self.choose_selected();
        }
    }

    pub(super) fn open_help(&mut self) {
        self.overlays.show_help = true;
        self.overlays.help_scroll = 0;
    }

    /// The selected card is the user's choice now (moved to, or acted on): a card the
    /// filter hid earlier is no longer chosen again when the filter clears.
    pub(super) fn choose_selected(&mut self) {
        self.grid.chosen = true;
        self.grid.hidden_choice = None;
    }

    pub(super) fn keep_selection_visible(&mut self) {
        let g = self.geometry();
        let total_rows = self.grid.shown.len().div_ceil(g.cols);
        let Some(i) = self.selected_pos() else {
            self.grid.scroll = self.grid.scroll.min(total_rows.saturating_sub(g.rows));
            return;
        };
        let row = i / g.cols;
        if row < self.grid.scroll {
            self.grid.scroll = row;
        } else if row >= self.grid.scroll + g.rows {
            self.grid.scroll = row + 1 - g.rows;
        }
        self.grid.scroll = self.grid.scroll.min(total_rows.saturating_sub(g.rows));
    }
}
