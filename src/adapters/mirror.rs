//! What agentwatch knows of tmux's panes between polls, and what each poll asks tmux so
//! that the cost of a tick does not grow with the number of panes.
//!
//! Asking tmux about every pane costs its server about 10 ms per 1000 panes even for two
//! fields, and five times that with the command, the paths and the options. So a poll asks:
//! - one line, the head: the server's pid and `@agentwatch_auto`, with anything else asked
//!   and on its own every 2 s (every wake-up of a server of 1000 panes costs it a pass over
//!   all of them, so a quiet poll asks nothing at all);
//! - whole records only of the panes that need them: the ones the core looks at (cards on
//!   screen, deaths being handled), and the ones that just changed (their process ended, as
//!   the kernel says through a pidfd; new, respawned or dead in a brief listing) for a few
//!   seconds after;
//! - a brief listing of every pane (id, pid, dead) when the server's shape changed (a
//!   control-mode notice, a new child of the server's process) and every few seconds anyway,
//!   as the net under lost events;
//! - a full listing now and then, for what changes without any of those signs (names,
//!   paths, options set by others), and at the start.
//!
//! Pure bookkeeping: the poller does the I/O.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::adapters::tmux::format::{self, Batch};
use crate::core::pane::{Listing, Pane, PaneId};

/// A brief listing at least this often, whatever was heard...
pub const BRIEF_EVERY: Duration = Duration::from_secs(2);
/// ... or this often where the kernel tells of every pane process's end (pidfds) and of
/// every new one (the server's children), and the control connection of new windows, and no
/// live agent is attended to (its window's output time is in the brief listing): then it is
/// only the net under those.
pub const BRIEF_EVERY_WATCHED: Duration = Duration::from_secs(10);
/// A full listing at least this often...
pub const FULL_EVERY: Duration = Duration::from_secs(15);
/// ... for every this many panes: a full listing costs the tmux server about 55 µs a pane
/// (55 ms for 1000, three quarters of what agentwatch cost it in all with 1000 quiet agents),
/// so it is spaced with the panes' number and costs the same each minute however many there
/// are: every 15 s up to 250 panes, every minute at 1000.
pub const FULL_PER_PANES: usize = 250;
/// The head on its own at least this often (the auto-resume switch set by another instance;
/// a poll with cards to read, as with a resume due, asks it anyway).
pub const HEAD_EVERY: Duration = Duration::from_secs(2);
/// A rename asks for a full listing, but not more often than this.
const FULL_AFTER_RENAME: Duration = Duration::from_secs(2);
/// How long a pane that changed is read whole on every poll: a shell's prompt hook writes
/// the exit status a moment after the agent ended; a dying pane's status comes a moment
/// after its process ended.
pub const WARM: Duration = Duration::from_secs(5);

/// How soon a pane whose process ended is looked at again, while tmux does not show it
/// dead yet (it does within milliseconds: it reads the terminal's end, then reaps).
pub const DEATH_RECHECK: Duration = Duration::from_millis(20);
/// How soon a dead pane without an exit status is looked at again (tmux missed the SIGCHLD:
/// the core sends one on each look, spaced like this).
pub const STATUS_RECHECK: Duration = Duration::from_millis(crate::core::card::KICK_SPACING_MS);

/// What changed since the last poll, as the kernel and the control connection said.
#[derive(Debug, Default)]
pub struct Heard {
    /// Processes that ended (pane processes and processes below them).
    pub ended: HashSet<u32>,
    /// Panes whose tree changed under them (a process below ended, a shell's foreground
    /// job changed).
    pub touched: Vec<PaneId>,
    /// Panes or windows came or went.
    pub shape: bool,
    /// A window or session was renamed.
    pub names: bool,
    /// The kernel tells of every pane process's end and of every new one, and the control
    /// connection of new windows.
    pub watched: bool,
    /// Some agent's output time is wanted often: one works or waits, and has no state file
    /// of its own to say so (the core's word; until it has spoken, yes).
    pub attending: bool,
}

/// What one poll asks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ask {
    /// The server's pid and `@agentwatch_auto`.
    pub head: bool,
    pub full: bool,
    pub brief: bool,
    pub fetch: Vec<PaneId>,
}

impl Ask {
    fn full() -> Ask {
        Ask {
            head: true,
            full: true,
            ..Ask::default()
        }
    }

    /// Whether it asks tmux anything at all.
    pub fn is_empty(&self) -> bool {
        self.commands().is_empty()
    }

    /// The tmux commands for it, in order.
    pub fn commands(&self) -> Vec<Vec<String>> {
        let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let mut c = Vec::new();
        if self.head || self.full {
            c.push(s(&[
                "display-message",
                "-p",
                &format::format_of(format::HEAD),
            ]));
        }
        if self.full {
            c.push(s(&["list-panes", "-a", "-F", &format::list_panes_format()]));
            return c;
        }
        if self.brief {
            c.push(s(&[
                "list-panes",
                "-a",
                "-F",
                &format::format_of(format::BRIEF),
            ]));
        }
        if !self.fetch.is_empty() {
            c.push(s(&[
                "set-option",
                "-s",
                &format::record_option(),
                &format::list_panes_format(),
            ]));
        }
        let whole = format::record_ref();
        for id in &self.fetch {
            c.push(s(&["display-message", "-p", "-t", &id.to_string(), &whole]));
        }
        c
    }
}

#[derive(Debug, Default)]
pub struct Mirror {
    /// The panes in tmux's order, as last listed or fetched.
    order: Vec<PaneId>,
    panes: HashMap<PaneId, Pane>,
    server_pid: Option<u32>,
    auto_all: String,
    /// Records skipped by the last full listing (and since, by fetches).
    malformed: usize,
    full_at: Option<Instant>,
    brief_at: Option<Instant>,
    head_at: Option<Instant>,
    /// Panes read whole on every poll until then.
    warm: HashMap<PaneId, Instant>,
    /// A rename was heard and the names were not read since.
    renamed: bool,
    /// Panes whose process ended that tmux does not show dead yet.
    dying: HashSet<PaneId>,
    /// The panes in order as last handed out, until one of them changes.
    shared: Option<std::sync::Arc<Vec<Pane>>>,
    /// Counts what tmux told that may have changed a pane (not what agentwatch wrote: its
    /// core knows that already).
    told: u64,
}

impl Mirror {
    /// What to ask now. `hot`: the panes the core wants fresh on every poll.
    pub fn ask(&mut self, now: Instant, heard: &Heard, hot: &[PaneId]) -> Ask {
        let since = |t: Option<Instant>| t.map_or(Duration::MAX, |t| now.duration_since(t));
        self.renamed |= heard.names;
        let full = self.full_at.is_none()
            || since(self.full_at) >= self.full_every()
            || (self.renamed && since(self.full_at) >= FULL_AFTER_RENAME);
        for (id, p) in &self.panes {
            if !p.dead && p.pid.is_some_and(|pid| heard.ended.contains(&pid)) {
                self.warm.insert(*id, now + WARM);
                self.dying.insert(*id);
            }
        }
        for id in &heard.touched {
            self.warm.insert(*id, now + WARM);
        }
        self.warm.retain(|_, until| *until > now);
        self.dying.retain(|id| self.warm.contains_key(id));
        if full {
            return Ask::full();
        }
        // Agents that work or wait are attended to: their windows' output times, every 2 s,
        // tell when they stop (and a prompt may wait for their user) or write again (the
        // prompt was answered). Idle ones are looked at every 10 s: a user who types at one
        // is at its pane.
        let every = if heard.watched && !heard.attending {
            BRIEF_EVERY_WATCHED
        } else {
            BRIEF_EVERY
        };
        let brief = heard.shape || since(self.brief_at) >= every;
        let mut fetch: Vec<PaneId> = self
            .order
            .iter()
            .filter(|id| hot.contains(id) || self.warm.contains_key(id))
            .copied()
            .collect();
        fetch.dedup();
        // Many at once (a burst of deaths): one full listing is cheaper than many fetches.
        if fetch.len() > (self.order.len() / 4).max(32) {
            return Ask::full();
        }
        let head = brief || !fetch.is_empty() || since(self.head_at) >= HEAD_EVERY;
        Ask {
            head,
            full: false,
            brief,
            fetch,
        }
    }

    /// How often the full listing is asked for (see [`FULL_PER_PANES`]).
    pub fn full_every(&self) -> Duration {
        let per = u32::try_from(self.panes.len().div_ceil(FULL_PER_PANES)).unwrap_or(u32::MAX);
        FULL_EVERY * per.max(1)
    }

    /// Takes in what tmux answered to `ask`. Returns the panes the brief listing showed to be
    /// new or changed that were not read whole yet: ask for them before the listing is used.
    pub fn take(&mut self, ask: &Ask, batch: Batch, now: Instant) -> Vec<PaneId> {
        // The head alone changes no pane. Panes read one by one are written into the list
        // handed out (below); a listing makes it anew.
        if ask.full || ask.brief || !ask.fetch.is_empty() {
            if ask.full || ask.brief {
                self.shared = None;
            }
            self.told += 1;
        }
        if let Some((pid, auto)) = batch.head {
            self.server_pid = pid;
            self.auto_all = auto;
            self.head_at = Some(now);
        }
        if ask.full {
            let old = std::mem::take(&mut self.panes);
            self.order = batch.panes.iter().map(|p| p.id).collect();
            for p in batch.panes {
                let changed = old
                    .get(&p.id)
                    .is_none_or(|o| o.pid != p.pid || o.dead != p.dead);
                if changed && self.full_at.is_some() {
                    self.warm.insert(p.id, now + WARM);
                }
                self.panes.insert(p.id, p);
            }
            self.malformed = batch.malformed;
            self.renamed = false;
            self.full_at = Some(now);
            self.brief_at = Some(now);
            return Vec::new();
        }
        let fetched: HashSet<PaneId> = batch.panes.iter().map(|p| p.id).collect();
        // Asked for and not there: the pane is gone (unless its record could not be read).
        if batch.malformed == 0 {
            for id in ask.fetch.iter().filter(|id| !fetched.contains(id)) {
                if self.panes.remove(id).is_some() {
                    self.shared = None;
                }
            }
        }
        self.malformed = self.malformed.max(batch.malformed);
        for p in batch.panes {
            if self.panes.insert(p.id, p).is_none() {
                self.shared = None;
            }
        }
        // Only panes read whole changed: they are written into the list in place (it is no
        // longer shared once a poll is over) instead of making it anew from every pane (a
        // dashboard reads the cards on screen every second: 1000 clones each time).
        if !ask.full && !ask.brief && !fetched.is_empty() {
            if let Some(list) = self.shared.as_mut() {
                for p in std::sync::Arc::make_mut(list)
                    .iter_mut()
                    .filter(|p| fetched.contains(&p.id))
                {
                    if let Some(new) = self.panes.get(&p.id) {
                        p.clone_from(new);
                    }
                }
            }
        }
        let mut more = Vec::new();
        if ask.brief {
            self.brief_at = Some(now);
            let listed: HashSet<PaneId> = batch.brief.iter().map(|b| b.id).collect();
            self.panes.retain(|id, _| listed.contains(id));
            self.warm.retain(|id, _| listed.contains(id));
            for b in &batch.brief {
                if let Some(p) = self.panes.get_mut(&b.id) {
                    p.window_activity = p.window_activity.max(b.activity);
                }
                let stale = match self.panes.get(&b.id) {
                    None => true,
                    Some(p) => (p.pid != b.pid || p.dead != b.dead) && !fetched.contains(&b.id),
                };
                if stale {
                    self.warm.insert(b.id, now + WARM);
                    more.push(b.id);
                }
            }
            self.order = batch.brief.iter().map(|b| b.id).collect();
        }
        self.order
            .retain(|id| self.panes.contains_key(id) || more.contains(id));
        more
    }

    /// Takes in the whole records asked for after a brief listing (see [`Mirror::take`]).
    pub fn take_more(&mut self, asked: &[PaneId], batch: Batch) {
        let ask = Ask {
            fetch: asked.to_vec(),
            ..Ask::default()
        };
        let _ = self.take(&ask, batch, Instant::now());
    }

    /// Takes in options agentwatch wrote: tmux holds them now, and the next poll must not
    /// see the old values and write them again.
    pub fn wrote(&mut self, sets: &[(PaneId, String, String)]) {
        for (id, name, value) in sets {
            if let Some(p) = self.panes.get_mut(id) {
                p.set_option(name, value.clone());
                // The list handed out is written in place (it is no longer shared once a
                // poll is over), not made again from every pane.
                if let Some(p) = self
                    .shared
                    .as_mut()
                    .and_then(|l| std::sync::Arc::make_mut(l).iter_mut().find(|p| p.id == *id))
                {
                    p.set_option(name, value.clone());
                }
            }
        }
    }

    /// The panes as tmux last told them, in its order, with the head (the poller takes the
    /// shared [`Mirror::panes`] and [`Mirror::head`] apart).
    #[cfg(test)]
    pub fn listing(&mut self) -> Listing {
        Listing {
            panes: self.panes().to_vec(),
            ..self.head()
        }
    }

    /// The panes as tmux last told them, in its order: the same list (one
    /// [`Arc`](std::sync::Arc)) until one of them changes, so that a poll that learnt
    /// nothing does not copy them.
    pub fn panes(&mut self) -> std::sync::Arc<Vec<Pane>> {
        let (order, panes) = (&self.order, &self.panes);
        std::sync::Arc::clone(self.shared.get_or_insert_with(|| {
            std::sync::Arc::new(
                order
                    .iter()
                    .filter_map(|id| panes.get(id).cloned())
                    .collect(),
            )
        }))
    }

    /// Counts the answers of tmux that may have changed a pane: the same count, nothing
    /// was told since but what agentwatch wrote.
    pub fn told(&self) -> u64 {
        self.told
    }

    /// The listing's head: the server's pid, its auto-resume switch, the records skipped;
    /// no panes.
    pub fn head(&self) -> Listing {
        Listing {
            panes: Vec::new(),
            server_pid: self.server_pid,
            auto_all: self.auto_all.clone(),
            malformed: self.malformed,
        }
    }

    /// Whether a pane's process ended and tmux does not show the pane dead yet: the poller
    /// looks again soon rather than at the next tick.
    pub fn awaiting_death(&mut self) -> bool {
        let panes = &self.panes;
        self.dying
            .retain(|id| panes.get(id).is_some_and(|p| !p.dead));
        !self.dying.is_empty()
    }

    /// How soon to look again without waiting for the tick, if at all: at once while tmux
    /// has not caught up with a process's end; at the pace of the lost-SIGCHLD kicks while a
    /// pane that just died has no exit status (the core kicks the server on each look).
    pub fn look_again_in(&mut self) -> Option<Duration> {
        if self.awaiting_death() {
            return Some(DEATH_RECHECK);
        }
        let panes = &self.panes;
        self.warm
            .keys()
            .filter_map(|id| panes.get(id))
            .any(|p| p.dead && p.dead_status.is_none() && p.dead_signal.is_none())
            .then_some(STATUS_RECHECK)
    }

    pub fn server_pid(&self) -> Option<u32> {
        self.server_pid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::tmux::format::Brief;

    fn pane(id: u32, pid: u32) -> Pane {
        Pane {
            id: PaneId(id),
            pid: Some(pid),
            current_command: "claude".into(),
            ..Pane::default()
        }
    }

    fn full(m: &mut Mirror, panes: Vec<Pane>, now: Instant) {
        let ask = m.ask(now, &Heard::default(), &[]);
        assert!(ask.full);
        let batch = Batch {
            head: Some((Some(1), String::new())),
            panes,
            ..Batch::default()
        };
        assert!(m.take(&ask, batch, now).is_empty());
    }

    fn ids(l: &Listing) -> Vec<u32> {
        l.panes.iter().map(|p| p.id.0).collect()
    }

    #[test]
    fn a_quiet_server_is_asked_nothing_most_polls() {
        let t0 = Instant::now();
        let mut m = Mirror::default();
        full(&mut m, (1..=1000).map(|i| pane(i, 100 + i)).collect(), t0);
        // Nothing at all, most polls; the head on its own now and then.
        let ask = m.ask(t0 + Duration::from_millis(500), &Heard::default(), &[]);
        assert_eq!(ask, Ask::default());
        assert!(ask.is_empty());
        let watched = Heard {
            watched: true,
            ..Heard::default()
        };
        let ask = m.ask(t0 + HEAD_EVERY, &watched, &[]);
        assert!(ask.head && !ask.brief && !ask.full && ask.fetch.is_empty());
        assert_eq!(ask.commands().len(), 1, "the head only");
        // With a card to read, the head comes along.
        m.take(
            &ask,
            Batch {
                head: Some((Some(1), String::new())),
                ..Batch::default()
            },
            t0 + HEAD_EVERY,
        );
        let ask = m.ask(t0 + HEAD_EVERY, &Heard::default(), &[PaneId(7)]);
        assert!(ask.head && ask.fetch.contains(&PaneId(7)));
        assert_eq!(m.listing().panes.len(), 1000);
        // The net: a brief listing every BRIEF_EVERY, a full one every FULL_EVERY per 250
        // panes (a minute for 1000: it costs the server 55 µs a pane).
        assert!(m.ask(t0 + BRIEF_EVERY, &Heard::default(), &[]).brief);
        assert!(!m.ask(t0 + FULL_EVERY * 3, &Heard::default(), &[]).full);
        assert!(m.ask(t0 + FULL_EVERY * 4, &Heard::default(), &[]).full);
        let mut few = Mirror::default();
        full(&mut few, (1..=250).map(|i| pane(i, 100 + i)).collect(), t0);
        assert!(few.ask(t0 + FULL_EVERY, &Heard::default(), &[]).full);
        // Less often where the kernel tells of births and deaths.
        let mut m = Mirror::default();
        full(&mut m, vec![pane(1, 101)], t0);
        let watched = Heard {
            watched: true,
            ..Heard::default()
        };
        assert!(!m.ask(t0 + BRIEF_EVERY, &watched, &[]).brief);
        assert!(m.ask(t0 + BRIEF_EVERY_WATCHED, &watched, &[]).brief);
    }

    #[test]
    fn a_pane_whose_process_ended_is_read_whole_until_it_settles() {
        let t0 = Instant::now();
        let mut m = Mirror::default();
        full(&mut m, vec![pane(1, 101), pane(2, 102)], t0);
        let heard = Heard {
            ended: HashSet::from([102]),
            ..Heard::default()
        };
        let t1 = t0 + Duration::from_millis(100);
        let ask = m.ask(t1, &heard, &[]);
        assert_eq!(ask.fetch, [PaneId(2)]);
        assert!(!ask.brief && !ask.full);
        // tmux has not marked it dead yet: look again soon.
        let batch = Batch {
            panes: vec![pane(2, 102)],
            ..Batch::default()
        };
        assert!(m.take(&ask, batch, t1).is_empty());
        assert!(m.awaiting_death());
        assert_eq!(m.look_again_in(), Some(DEATH_RECHECK));
        // Still read whole on the next polls, though nothing more was heard.
        let ask = m.ask(t1 + Duration::from_millis(30), &Heard::default(), &[]);
        assert_eq!(ask.fetch, [PaneId(2)]);
        let mut dead = pane(2, 102);
        dead.dead = true;
        dead.dead_signal = Some(9);
        let batch = Batch {
            panes: vec![dead],
            ..Batch::default()
        };
        m.take(&ask, batch, t1);
        assert!(!m.awaiting_death());
        assert_eq!(m.look_again_in(), None, "dead, with its signal");
        assert!(m.listing().panes[1].dead);
        // After WARM, no more.
        let later = m.ask(t1 + WARM + Duration::from_millis(1), &Heard::default(), &[]);
        assert!(later.fetch.is_empty());
    }

    #[test]
    fn the_brief_listing_finds_new_respawned_and_closed_panes_in_tmux_order() {
        let t0 = Instant::now();
        let mut m = Mirror::default();
        full(&mut m, vec![pane(1, 101), pane(2, 102), pane(3, 103)], t0);
        let heard = Heard {
            shape: true,
            ..Heard::default()
        };
        let t1 = t0 + Duration::from_millis(500);
        let ask = m.ask(t1, &heard, &[PaneId(1)]);
        assert!(ask.brief);
        assert_eq!(ask.fetch, [PaneId(1)]);
        let b = |id, pid, dead| Brief {
            id: PaneId(id),
            pid: Some(pid),
            dead,
            ..Brief::default()
        };
        // %2 closed, %3 respawned with a new process, %4 new, between %1 and %3.
        let batch = Batch {
            brief: vec![b(1, 101, false), b(4, 104, false), b(3, 203, false)],
            panes: vec![pane(1, 101)],
            ..Batch::default()
        };
        let more = m.take(&ask, batch, t1);
        assert_eq!(more, [PaneId(4), PaneId(3)]);
        m.take_more(
            &more,
            Batch {
                panes: vec![pane(4, 104), pane(3, 203)],
                ..Batch::default()
            },
        );
        let l = m.listing();
        assert_eq!(ids(&l), [1, 4, 3]);
        assert_eq!(l.panes[2].pid, Some(203));
        // Both stay warm for a while.
        let ask = m.ask(t1 + Duration::from_millis(500), &Heard::default(), &[]);
        assert_eq!(ask.fetch, [PaneId(4), PaneId(3)]);
    }

    #[test]
    fn a_pane_asked_for_and_not_answered_is_gone_unless_its_record_was_unreadable() {
        let t0 = Instant::now();
        let mut m = Mirror::default();
        full(&mut m, vec![pane(1, 101), pane(2, 102)], t0);
        let ask = m.ask(t0, &Heard::default(), &[PaneId(1), PaneId(2)]);
        let unreadable = Batch {
            malformed: 1,
            panes: vec![pane(2, 102)],
            ..Batch::default()
        };
        m.take(&ask, unreadable, t0);
        assert_eq!(ids(&m.listing()), [1, 2]);
        assert_eq!(m.listing().malformed, 1);
        m.take(
            &ask,
            Batch {
                panes: vec![pane(2, 102)],
                ..Batch::default()
            },
            t0,
        );
        assert_eq!(ids(&m.listing()), [2]);
    }

    #[test]
    fn options_written_are_known_without_asking() {
        let t0 = Instant::now();
        let mut m = Mirror::default();
        full(&mut m, vec![pane(1, 101)], t0);
        m.wrote(&[
            (PaneId(1), "remain-on-exit".into(), "on".into()),
            (PaneId(1), "@agentwatch_cwd".into(), "/w".into()),
            (PaneId(9), "@agentwatch_cwd".into(), "/gone".into()),
        ]);
        let l = m.listing();
        assert!(l.panes[0].remain_on_exit);
        assert_eq!(l.panes[0].opts.cwd, "/w");
        assert_eq!(l.panes.len(), 1);
    }

    #[test]
    fn a_death_whose_status_tmux_lost_is_looked_at_at_the_pace_of_the_kicks() {
        let t0 = Instant::now();
        let mut m = Mirror::default();
        full(&mut m, vec![pane(1, 101)], t0);
        let heard = Heard {
            ended: HashSet::from([101]),
            ..Heard::default()
        };
        let ask = m.ask(t0, &heard, &[]);
        let mut dead = pane(1, 101);
        dead.dead = true;
        let batch = Batch {
            panes: vec![dead],
            ..Batch::default()
        };
        m.take(&ask, batch, t0);
        assert_eq!(m.look_again_in(), Some(STATUS_RECHECK));
    }

    #[test]
    fn a_burst_of_changes_is_one_full_listing() {
        let t0 = Instant::now();
        let mut m = Mirror::default();
        full(&mut m, (1..=400).map(|i| pane(i, 100 + i)).collect(), t0);
        let heard = Heard {
            ended: (101..=300).collect(),
            ..Heard::default()
        };
        let ask = m.ask(t0 + Duration::from_millis(100), &heard, &[]);
        assert!(ask.full);
        assert_eq!(ask.commands().len(), 2);
    }

    #[test]
    fn a_rename_asks_for_the_names_but_not_on_every_poll() {
        let t0 = Instant::now();
        let mut m = Mirror::default();
        full(&mut m, vec![pane(1, 101)], t0);
        let heard = Heard {
            names: true,
            ..Heard::default()
        };
        assert!(!m.ask(t0 + Duration::from_millis(500), &heard, &[]).full);
        // Remembered, though heard once.
        assert!(m.ask(t0 + FULL_AFTER_RENAME, &Heard::default(), &[]).full);
    }

    #[test]
    fn the_cards_on_screen_are_read_in_one_read_of_the_server() {
        // The tmux server reads a control client's input 4 KB at a time (libevent's
        // largest read), a wake-up of a server of 1000 panes each: a dashboard's read of
        // the 12 rows on screen and the selected card, with the head and a brief listing,
        // is one.
        let ask = Ask {
            head: true,
            brief: true,
            fetch: (1..=13).map(|n| PaneId(n + 1000)).collect(),
            ..Ask::default()
        };
        let bytes: usize = ask
            .commands()
            .iter()
            .map(|c| {
                c.iter()
                    .map(|a| crate::adapters::tmux::control::quote(a).unwrap().len() + 1)
                    .sum::<usize>()
            })
            .sum();
        assert!(bytes < 4096, "{bytes} bytes");
        // Each read names the format, held in this process's option set just before.
        let c = ask.commands();
        let set = c.iter().position(|c| c[0] == "set-option").unwrap();
        assert_eq!(c[set][2], format::record_option());
        assert!(c[set + 1..]
            .iter()
            .all(|c| c[0] == "display-message" && c[4] == format::record_ref()));
        assert_eq!(c.len(), set + 1 + 13);
    }

    #[test]
    fn panes_read_one_by_one_are_written_into_the_list_handed_out() {
        let t0 = Instant::now();
        let mut m = Mirror::default();
        full(&mut m, (1..=3).map(|i| pane(i, 100 + i)).collect(), t0);
        let before = m.panes();
        drop(before);
        let fetch = |m: &mut Mirror, panes: Vec<Pane>| {
            let ask = Ask {
                fetch: vec![PaneId(2), PaneId(3)],
                ..Ask::default()
            };
            let batch = Batch {
                panes,
                ..Batch::default()
            };
            m.take(&ask, batch, t0);
        };
        let mut two = pane(2, 102);
        two.current_command = "bash".into();
        fetch(&mut m, vec![two, pane(3, 103)]);
        let after = m.panes();
        assert_eq!(
            ids(&Listing {
                panes: after.to_vec(),
                ..Listing::default()
            }),
            [1, 2, 3]
        );
        assert_eq!(after[1].current_command, "bash");
        drop(after);
        // One asked for and not there: gone from the list too.
        fetch(&mut m, vec![pane(2, 102)]);
        let l = m.listing();
        assert_eq!(ids(&l), [1, 2]);
        assert_eq!(l.panes[1].current_command, "claude");
    }
}
