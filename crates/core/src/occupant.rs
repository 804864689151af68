//! Whose records a pane's options are. What agentwatch records for a relaunch (the kind,
//! the session id, the extra arguments, the directory) belongs to one occupant: the pane's
//! process, and at a shell prompt or under a wrapper the agent's run below it. It is kept
//! on the pane as `@agentwatch_occupant`: `<pane pid>` or `<pane pid> <run pid>`, or `next`
//! when agentwatch itself started what runs next (a relaunch, a spawn, a recreate). When
//! another hand changes the occupant (`respawn-pane -k`, a new command at the prompt), the
//! old records are dropped and the new occupant's derived afresh.

use crate::pane::Opt;

/// What `@agentwatch_occupant` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// agentwatch started what runs next: its records are the next occupant's.
    Next,
    /// The pane's process, and the agent's run below it where that is another process.
    At { pane: u32, run: Option<u32> },
}

/// The marker agentwatch writes when it starts what runs in a pane.
pub const NEXT: &str = "next";

impl Recorded {
    /// `None`: nothing recorded, or nothing readable (an older agentwatch).
    pub fn parse(s: &str) -> Option<Recorded> {
        let s = s.trim();
        if s == NEXT {
            return Some(Recorded::Next);
        }
        let mut words = s.split_whitespace();
        let pane = words.next()?.parse().ok()?;
        let run = match words.next() {
            Some(w) => Some(w.parse().ok()?),
            None => None,
        };
        Some(Recorded::At { pane, run })
    }

    pub fn format(pane: u32, run: Option<u32>) -> String {
        match run {
            Some(run) => format!("{pane} {run}"),
            None => pane.to_string(),
        }
    }
}

/// The options that are an occupant's records, dropped when another occupant takes the
/// pane: the kind, the directory, the session id, the extra arguments, the death before the
/// last relaunch, the verdict on a death, the exit of a run, and the auto-resume count (the
/// switch, `a`, is the pane's and stays).
pub const RECORDS: [Opt; 9] = [
    Opt::Agent,
    Opt::Cwd,
    Opt::SessionId,
    Opt::Args,
    Opt::Previous,
    Opt::Judged,
    Opt::Exited,
    Opt::Attempts,
    Opt::Next,
];

/// The records of one run of an agent at a prompt (or under a wrapper): a new run drops
/// them, not the pane's.
pub const RUN_RECORDS: [Opt; 3] = [Opt::SessionId, Opt::Args, Opt::Judged];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_occupant_reads_back_as_written_and_nothing_else_is_one() {
        assert_eq!(Recorded::parse("next"), Some(Recorded::Next));
        assert_eq!(
            Recorded::parse(&Recorded::format(12, None)),
            Some(Recorded::At {
                pane: 12,
                run: None
            })
        );
        assert_eq!(
            Recorded::parse(&Recorded::format(12, Some(40))),
            Some(Recorded::At {
                pane: 12,
                run: Some(40)
            })
        );
        for junk in ["", "x", "12 y", "-3"] {
            assert_eq!(Recorded::parse(junk), None, "{junk:?}");
        }
    }
}
