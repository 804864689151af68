//! A pane's records belong to its occupant (see [`crate::occupant`]): when another hand puts
//! another process in the pane, or another agent run at its prompt, the old occupant's
//! records are dropped and the new one's derived afresh; a relaunch uses only the records
//! of the occupant that died.

use super::*;
use crate::occupant::{Recorded, RECORDS, RUN_RECORDS};

impl State {
    /// The pane as its occupant's, and its card from the last look unless the occupant was
    /// replaced (then the card starts anew). Every instance drops the old records from its
    /// view at once; the supervisor also drops them on the pane (`writes`) and journals
    /// `replaced` for an agent that was there at the last look.
    pub(super) fn take_occupant(
        &self,
        mut pane: Pane,
        prev: Option<Card>,
        now: Millis,
        writes: &mut Vec<(PaneId, Opt, String)>,
        fx: &mut Vec<Effect>,
    ) -> (Pane, Option<Card>) {
        let old_pid = match Recorded::parse(&pane.opts.occupant) {
            // agentwatch started what runs there: its records are the new occupant's.
            Some(Recorded::Next) => return (pane, prev),
            Some(Recorded::At { pane: pid, .. }) => Some(pid),
            // Not recorded (an older agentwatch, or a pane seen for the first time): the
            // records on the pane are taken as its occupant's, and it is adopted.
            None => None,
        };
        let replaced = matches!((old_pid, pane.pid), (Some(old), Some(new)) if old != new);
        if !replaced {
            return (pane, prev);
        }
        for opt in RECORDS {
            pane.opts.set(opt, String::new());
        }
        if !self.supervision.supervising {
            return (pane, None);
        }
        writes.extend(RECORDS.map(|opt| (pane.id, opt, String::new())));
        if let Some(c) = prev.as_ref().filter(|c| c.agent.is_some()) {
            let mut ev = self.event(c, "replaced", now);
            let was = match c.life {
                Life::Running => "running",
                _ => "dead",
            };
            let new = crate::agent::program_name(&pane.current_command);
            ev.detail = Some(format!(
                "{} ({was}, pid {}) replaced by {new} (pid {}) by another hand than agentwatch's",
                c.agent.as_deref().unwrap_or("agent"),
                c.occupant_pid().map_or("?".into(), |p| p.to_string()),
                pane.pid.map_or("?".into(), |p| p.to_string()),
            ));
            fx.push(Effect::Journal(ev));
        }
        (pane, None)
    }

    /// A new agent run at a prompt (or under a wrapper) that another hand started: the last
    /// run's id and arguments are not this one's.
    pub(super) fn take_run(&self, card: &mut Card, writes: &mut Vec<(PaneId, Opt, String)>) {
        let Some(Recorded::At {
            pane: pane_pid,
            run: Some(run),
        }) = Recorded::parse(&card.pane.opts.occupant)
        else {
            return;
        };
        let now_run = card.launcher.as_ref().and_then(|l| l.fg_pid);
        let new_run = card.life == Life::Running
            && card.pane.pid == Some(pane_pid)
            && now_run.is_some_and(|r| r != run);
        if !new_run {
            return;
        }
        for opt in RUN_RECORDS {
            card.pane.opts.set(opt, String::new());
            if self.supervision.supervising {
                writes.push((card.pane.id, opt, String::new()));
            }
        }
        card.argv_id = None;
        card.no_session = None;
    }

    /// The occupant to record on the pane, when it is to be written: the supervisor adopts
    /// what runs there now (after a relaunch of its own, or the first time it sees it). An
    /// agent run at a prompt is adopted while it runs (before, the last run is still there).
    pub(super) fn occupant_write(&self, card: &Card) -> Option<String> {
        if !self.supervision.supervising || card.agent.is_none() {
            return None;
        }
        let pane = card.pane.pid?;
        let run = card.launcher.as_ref().and_then(|l| l.fg_pid);
        if card.launcher.is_some() && card.life != Life::Running {
            return None;
        }
        // Compared as read, formatted only when it differs (every card, every poll).
        let said = Recorded::parse(&card.pane.opts.occupant);
        (said != Some(Recorded::At { pane, run })).then(|| Recorded::format(pane, run))
    }
}
