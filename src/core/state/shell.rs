//! Shell-hosted agents, as decisions of the core.

use super::*;
use crate::core::prompt::{self, STATUS_GRACE_MS};

impl State {
    /// The card of a live pane whose own process is a shell, or `None` when it hosts no
    /// agent (and `--all` is off). `marks` collects the `@agentwatch_exited` writes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn shell_card(
        &self,
        prev: Option<Card>,
        pane: Pane,
        comm: &str,
        fg_pid: Option<u32>,
        fg: Option<&[String]>,
        started: Option<Millis>,
        now: Millis,
        marks: &mut Vec<(PaneId, String, String)>,
    ) -> Option<Card> {
        let name = comm.trim_start_matches('-');
        let original = pane.clone();
        let had_exit_mark = !pane.opt_exited.is_empty();
        let v = prompt::view(&self.agents, name, prev.as_ref(), pane, fg_pid, fg, now);
        if v.kind.is_none() {
            // A plain shell: shown only with --all, as it is.
            return self
                .show_all
                .then(|| observe(prev, original, None, started, now));
        }
        let id = v.pane.id;
        let integration = !v.pane.opt_last_status.is_empty();
        let mut card = observe(prev, v.pane, v.kind, started, now);
        card.shell = Some(v.host);
        if v.idle {
            card.life = Life::Idle;
            card.died_at = None;
        }
        if card.life == Life::Reading {
            let waiting = integration
                && card
                    .died_at
                    .is_some_and(|d| now.saturating_sub(d) < STATUS_GRACE_MS);
            if !waiting {
                card.life = Life::Dead(Exit::Unknown);
            }
        }
        if v.exited_now {
            marks.push((id, "@agentwatch_exited".into(), now.to_string()));
        }
        if v.running && had_exit_mark {
            marks.push((id, "@agentwatch_exited".into(), String::new()));
        }
        Some(card)
    }
}
