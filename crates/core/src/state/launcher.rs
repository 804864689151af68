//! Agents run by the pane's own process (a shell's prompt, a wrapper, a launcher), as
//! decisions of the core.

use super::*;
use crate::launcher::{self, PaneProcess, STATUS_GRACE_MS};
use crate::pane::Proc;

impl State {
    /// The card of a live pane whose own process hosts the agent, or `None` when no agent
    /// runs or ran there (and `--all` is off). `marks` collects the `@agentwatch_exited`
    /// writes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn host_card(
        &self,
        prev: Option<Card>,
        pane: Pane,
        process: &PaneProcess<'_>,
        agent: Option<&Proc>,
        started: Option<Millis>,
        now: Millis,
        marks: &mut Vec<(PaneId, Opt, String)>,
    ) -> Option<Card> {
        let original = pane.clone();
        let had_exit_mark = !pane.opts.exited.is_empty();
        let v = launcher::view(&self.agents, process, prev.as_ref(), pane, agent, now);
        if v.kind.is_none() {
            // A plain shell or program: shown only with --all, as it is.
            return self
                .grid
                .show_all
                .then(|| observe(prev, original, None, started, now));
        }
        let id = v.pane.id;
        // Only a shell at its prompt publishes an exit status (with the integration); a
        // wrapper's status is the pane's, if the pane dies with the agent.
        let status_coming = if process.prompt {
            !v.pane.opts.last_status.is_empty()
        } else {
            true
        };
        let started = agent.and_then(|p| p.start).or(started);
        let mut card = observe(prev, v.pane, v.kind, started, now);
        card.launcher = Some(v.launcher);
        if v.idle {
            card.life = Life::Idle;
            card.died_at = None;
        }
        if card.life == Life::Reading {
            let waiting = status_coming
                && card
                    .died_at
                    .is_some_and(|d| now.saturating_sub(d) < STATUS_GRACE_MS);
            if !waiting {
                card.life = Life::Dead(Exit::Unknown);
            }
        }
        if v.exited_now {
            let pids = match (original.pid, card.launcher.as_ref().and_then(|h| h.fg_pid)) {
                (Some(p), Some(a)) => format!(" {p} {a}"),
                (Some(p), None) => format!(" {p}"),
                _ => String::new(),
            };
            marks.push((id, Opt::Exited, format!("{now}{pids}")));
        }
        if v.running && had_exit_mark {
            marks.push((id, Opt::Exited, String::new()));
        }
        Some(card)
    }
}
