//! The cards' previews: the last lines of the panes on screen, read when they changed, at
//! most once a second each.

use super::*;

impl State {
    pub(super) fn want_previews(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        if !self.reads.capture_pending.is_empty() || self.headless {
            return;
        }
        // Taller cards (or the list's one line) want another number of lines: read again.
        let lines = self.geometry().preview_lines();
        if lines != self.reads.preview_lines {
            self.reads.preview_lines = lines;
            for card in &mut self.cards {
                card.preview_sig = None;
            }
        }
        // The list's preview pane shows the selected agent's card: more of its screen.
        let pane = self.geometry().pane_lines().zip(self.grid.selected);
        if pane != self.reads.pane {
            if let Some(c) =
                pane.and_then(|(_, id)| self.cards.iter_mut().find(|c| c.pane.id == id))
            {
                c.preview_sig = None;
            }
            self.reads.pane = pane;
        }
        let mut ids = Vec::new();
        let page = self.page();
        for &i in &self.grid.shown[page] {
            // A server that does not answer has no screens to give.
            if self.card_stale(&self.cards[i]) {
                continue;
            }
            let card = &mut self.cards[i];
            let sig = card.signature();
            let due = card.preview_sig.is_none()
                || (card.preview_sig != Some(sig)
                    && now.saturating_sub(card.preview_at) >= PREVIEW_MIN_INTERVAL_MS);
            if due {
                card.preview_sig = Some(sig);
                card.preview_at = now;
                let lines = self.reads.lines_for(card.pane.id);
                let history = if card.pane.dead {
                    lines + DEAD_PREVIEW_HISTORY
                } else {
                    lines
                };
                ids.push((card.pane.id, history));
            }
        }
        if !ids.is_empty() {
            self.reads.capture_pending = ids.iter().map(|(id, _)| *id).collect();
            fx.push(Effect::CaptureScreens { panes: ids });
        }
    }
}
