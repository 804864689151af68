//! Hearing agents' output as it happens, for the panes the core wants heard (live agents
//! with no state file of their own), at no cost to the tmux server.
//!
//! On this machine a pane is counted, not heard through tmux: what the processes writing
//! to its terminal wrote (`/proc/PID/io`'s `wchar` and `syscw`, files kept open and read
//! again at offset 0, 1-3 us a read) is read every [`SLICE`], whatever session the pane is
//! in. A slice with next to nothing written ([`QUIET_BYTES`], [`QUIET_CALLS`]) is a stop,
//! known within a slice; a slice with more after a stop is a burst, and work only if it
//! goes on ([`FIRST`] later, or a slice later for many small writes; codex at its approval
//! prompt redraws once a second: not work, though its screen is read again). A pane quiet
//! for [`LONG`] is read every [`SLOW`] ([`SLOWER`] after [`LONGER`]), and every slice
//! again from its first bytes. Nothing is asked of tmux and nothing copied: the control
//! connection keeps `no-output`. Measured (bench/RESULTS.md): each `%output` and each
//! command costs the tmux server a turn of its loop (a `poll` of every pane's terminal,
//! ~0.4 ms at 300 panes), and a control client without `no-output` costs it a point of a
//! core where 100 agents churn, so hearing through tmux cost more than all the reads of
//! `/proc`; and a pane whose output is copied is not read by tmux while its output waits
//! to be sent, so an agent that died then lost its last lines.
//!
//! A wanted pane whose writers `/proc` does not tell of (its process's standard streams are
//! not the terminal, it is another user's) is heard through control mode's `%output`,
//! turned on for it and paused for every other pane of the connection's session with
//! `refresh-client -A '%N:continue|pause'` (tmux 3.2+). Not `on|off`: before tmux 3.7,
//! `off` keeps the pane's queued output, and a later `on` makes the server read it after it
//! is gone (a crash, seen on 3.3a; fixed by tmux's cae229cad); `pause` discards it. The
//! connection attaches with `no-output`; that flag is dropped once (nothing is queued
//! under it, so the drop frees nothing in use), in the same command that pauses every
//! other pane of its session, once such a pane is wanted. tmux sends `%output` only for
//! panes in the session the connection is attached to: a pane elsewhere is not heard, and
//! the core reads its window's output time instead. Such a pane's stop is half a second
//! without a byte.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::adapters::procs::writes::{terminal_writers, Counter, Written, COUNTED};
use crate::adapters::tmux::client::Tmux;
use crate::adapters::tmux::control::Output;
use crate::core::attention::QUIET_HEARD_MS;
use crate::core::pane::{Pane, PaneId, Proc};
use crate::core::time::Millis;

/// What is counted, what the connection was told, and what the core wants.
#[derive(Debug)]
pub(super) struct Hearing {
    /// The panes (by number, on this server) the core wants heard.
    want: HashSet<u32>,
    /// The wanted panes counted, by number (see above).
    counts: HashMap<u32, Count>,
    /// Wanted panes not counted: not tried again until their process or the processes
    /// below it change, or (short of files) there is room.
    uncounted: HashMap<u32, Uncounted>,
    /// The files the counts keep open, and how many they may (a share of the process's
    /// limit: the rest are for tmux and everything else).
    files: usize,
    budget: usize,
    /// The sampler task is started.
    sampling: bool,
    /// The polls so far: a count the last did not see is of a pane gone or not wanted.
    polls: u64,
    /// The connection `%output` flows over, and the session it is attached to (`$id`).
    serial: u64,
    session: String,
    /// Output on (`true`) or off, as told to that connection, by pane number.
    told: HashMap<u32, bool>,
    /// `no-output` dropped on that connection.
    flowing: bool,
    /// The earliest time a wake-up is already set for (epoch ms).
    armed: Millis,
    /// The connection whose tmux refused `refresh-client -A` (before 3.2): not asked again.
    refused: u64,
    /// Epoch milliseconds at an instant: heard instants (monotonic, as the loop's clock is)
    /// become the core's epoch milliseconds from it, so a wall clock stepped (NTP, a
    /// suspend) never makes a pane look as if it wrote in the future or long ago.
    epoch: (Millis, Instant),
}

impl Default for Hearing {
    fn default() -> Hearing {
        Hearing {
            want: HashSet::new(),
            counts: HashMap::new(),
            uncounted: HashMap::new(),
            files: 0,
            budget: file_budget(),
            sampling: false,
            polls: 0,
            serial: 0,
            session: String::new(),
            told: HashMap::new(),
            flowing: false,
            armed: 0,
            refused: 0,
            epoch: (crate::adapters::wall_ms(), Instant::now()),
        }
    }
}

/// How many files the counts may keep open: a quarter of this process's limit (raised to
/// its hard limit at start).
fn file_budget() -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
    if ok {
        usize::try_from(lim.rlim_cur / 4).unwrap_or(usize::MAX)
    } else {
        256
    }
}

impl Hearing {
    pub(super) fn want(&mut self, hear: &[PaneId]) {
        self.want = hear.iter().map(|id| id.number()).collect();
    }

    /// A monotonic instant as epoch milliseconds.
    fn ms(&self, at: Instant) -> Millis {
        let (ms, then) = self.epoch;
        ms + at.saturating_duration_since(then).as_millis() as Millis
    }

    pub(super) fn now_ms(&self) -> Millis {
        self.ms(Instant::now())
    }

    /// Wanted, and heard through `%output`: not counted, and not `young` (see
    /// [`HEAR_AFTER`]).
    fn to_hear(&self, p: &Pane, young: &(dyn Fn(&Pane) -> bool + Sync)) -> bool {
        let n = p.id.number();
        self.want.contains(&n) && !self.counts.contains_key(&n) && !young(p)
    }

    /// The `-A` words that make the connection's on/off match what is to be heard through
    /// it, for the live panes of its session (`$id`, named `name` now); forgets panes that
    /// are gone. Another connection, or the same one moved to another session, starts from
    /// nothing.
    fn orders(
        &mut self,
        serial: u64,
        (id, name): (&str, &str),
        panes: &[Pane],
        young: &(dyn Fn(&Pane) -> bool + Sync),
    ) -> Vec<(u32, bool)> {
        if self.serial != serial || self.session != id {
            self.serial = serial;
            self.session = id.to_string();
            self.told.clear();
            self.flowing = false;
        }
        // Nothing to hear through it, nor ever was: `no-output` stays, and nothing is said
        // (the common case: every wanted pane is counted).
        if !self.flowing && self.want.iter().all(|n| self.counts.contains_key(n)) {
            return Vec::new();
        }
        let mine: Vec<&Pane> = panes
            .iter()
            .filter(|p| p.session == name && !p.dead)
            .collect();
        let live: HashSet<u32> = mine.iter().map(|p| p.id.number()).collect();
        self.told.retain(|n, _| live.contains(n));
        if !self.flowing && !mine.iter().any(|p| self.to_hear(p, young)) {
            return Vec::new();
        }
        mine.into_iter()
            .map(|p| (p.id.number(), self.to_hear(p, young)))
            .filter(|(n, on)| self.told.get(n) != Some(on))
            .collect()
    }
}

/// A wanted pane not counted, and what it was tried with.
#[derive(Debug)]
struct Uncounted {
    pid: u32,
    below: Vec<u32>,
    /// For want of files, not because `/proc` does not tell.
    short: bool,
}

fn output(tmux: &Tmux) -> std::sync::MutexGuard<'_, Output> {
    tmux.notices()
        .output
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// A wanted pane to count anew: its number, its process, the processes below it, and its
/// count as it was (kept for the processes still there).
pub(super) struct Todo {
    n: u32,
    pid: u32,
    below: Vec<u32>,
    old: Option<Arc<Counter>>,
}

/// Which wanted live panes of this machine are to be counted anew: not counted yet, or
/// their process or the processes below it (`below`, as the poll last walked them) changed
/// since; forgets the counts of panes gone or no longer wanted. Cheap: nothing is read.
pub(super) fn changed<'a>(
    hearing: &Mutex<Hearing>,
    panes: &[Pane],
    below: impl Fn(PaneId, u32) -> Option<&'a [Proc]>,
) -> Vec<Todo> {
    let mut h = super::lock(hearing);
    if h.want.is_empty() && h.counts.is_empty() {
        h.uncounted.clear();
        return Vec::new();
    }
    h.polls += 1;
    let room = h.budget > h.files;
    let Hearing {
        want,
        counts,
        uncounted,
        polls,
        files,
        ..
    } = &mut *h;
    let mut todo = Vec::new();
    for p in panes {
        let n = p.id.number();
        let Some(pid) = p.pid.filter(|_| !p.dead && want.contains(&n)) else {
            continue;
        };
        let procs = below(p.id, pid).unwrap_or(&[]);
        let same = |was: u32, pids: &[u32]| {
            was == pid
                && pids.len() == procs.len()
                && procs.iter().zip(pids).all(|(a, b)| a.pid == *b)
        };
        let old = match counts.get_mut(&n) {
            Some(c) => {
                c.seen = *polls;
                if same(c.pid, &c.below) {
                    continue;
                }
                Some(Arc::clone(&c.writers))
            }
            None => {
                if uncounted
                    .get(&n)
                    .is_some_and(|u| same(u.pid, &u.below) && !(u.short && room))
                {
                    continue;
                }
                None
            }
        };
        todo.push(Todo {
            n,
            pid,
            below: procs.iter().map(|p| p.pid).collect(),
            old,
        });
    }
    counts.retain(|_, c| {
        let keep = c.seen == *polls;
        if !keep {
            *files = files.saturating_sub(c.writers.len());
        }
        keep
    });
    uncounted.retain(|n, _| want.contains(n));
    todo
}

/// Counts the panes of `todo` (see [`changed`]): their writers looked for and opened with
/// no lock held, as many as a share of the file limit allows (a pane already counted keeps
/// its count when there is no room for more). A pane whose writers `/proc` does not tell
/// of is left to `%output` (see [`listen`]).
pub(super) fn count(tmux: &Tmux, hearing: &Arc<Mutex<Hearing>>, todo: Vec<Todo>) {
    if todo.is_empty() {
        return;
    }
    let mut room = {
        let h = super::lock(hearing);
        h.budget.saturating_sub(h.files)
    };
    let now = Instant::now();
    let opened: Vec<(Todo, Result<Counter, bool>)> = todo
        .into_iter()
        .map(|t| {
            let writers = terminal_writers(t.pid, Some(&t.below));
            let kept = t.old.as_ref().map_or(0, |o| o.len());
            let counter = if writers.len().min(COUNTED) <= room + kept {
                Counter::reopen(t.old.as_deref(), &writers).ok_or(false)
            } else {
                // No room: short of files, not uncountable.
                Err(true)
            };
            if let Ok(c) = &counter {
                room = (room + kept).saturating_sub(c.len());
            }
            (t, counter)
        })
        .collect();
    let mut h = super::lock(hearing);
    let poll = h.polls;
    for (t, counter) in opened {
        let was = h.counts.get(&t.n).map_or(0, |c| c.writers.len());
        match counter {
            Ok(writers) => {
                h.files = (h.files + writers.len()).saturating_sub(was);
                h.uncounted.remove(&t.n);
                let writers = Arc::new(writers);
                match h.counts.get_mut(&t.n) {
                    Some(c) => {
                        c.pid = t.pid;
                        c.below = t.below;
                        c.writers = writers;
                    }
                    None => {
                        let c = Count::new(t.pid, t.below, writers, poll, now);
                        h.counts.insert(t.n, c);
                    }
                }
            }
            // Short of files, and counted already: its count as it is.
            Err(true) if was > 0 => {}
            Err(short) => {
                h.files = h.files.saturating_sub(was);
                h.counts.remove(&t.n);
                let u = Uncounted {
                    pid: t.pid,
                    below: t.below,
                    short,
                };
                h.uncounted.insert(t.n, u);
            }
        }
    }
    if !h.counts.is_empty() && !h.sampling {
        h.sampling = true;
        tokio::spawn(sampler(tmux.clone(), Arc::downgrade(hearing)));
    }
}

/// Brings the connection's on/off in line for the wanted panes that are not counted, and
/// says when each heard pane last wrote (`None`: not since counting began or its output was
/// turned on), and which of them are known to have stopped ([`HeardPanes`]). Without a
/// control connection only the counted ones are heard, and the core reads the others'
/// output times. `young`: whether a pane's process started less than [`HEAR_AFTER`] ago.
pub(super) async fn heard(
    tmux: &Tmux,
    hearing: &Arc<Mutex<Hearing>>,
    panes: &[Pane],
    young: impl Fn(&Pane) -> bool + Sync,
) -> HeardPanes {
    let serial = listen(tmux, hearing, panes, &young).await;
    let h = super::lock(hearing);
    let mut heard = HeardPanes::default();
    // A counted pane: when it was last counted at work; its stop is known.
    for (&n, c) in &h.counts {
        if !c.working {
            heard.stopped.insert(PaneId(n));
        }
        heard.last.insert(PaneId(n), c.at.map(|at| h.ms(at)));
    }
    let Some(serial) = serial.filter(|&s| s == h.serial) else {
        return heard;
    };
    let mut out = output(tmux);
    if out.serial != serial {
        return heard;
    }
    // Panes gone, or turned off: forgotten.
    out.last.retain(|n, _| h.told.get(n) == Some(&true));
    for (&n, _) in h
        .told
        .iter()
        .filter(|(n, on)| **on && !h.counts.contains_key(n))
    {
        heard
            .last
            .insert(PaneId(n), out.last.get(&n).map(|&t| h.ms(t)));
    }
    heard
}

/// `%output` on for the wanted panes not counted, paused for every other pane of the
/// connection's session (once one is wanted), and on again for those tmux paused for not
/// being read; the connection's number if there is one to hear over.
async fn listen(
    tmux: &Tmux,
    hearing: &Arc<Mutex<Hearing>>,
    panes: &[Pane],
    young: &(dyn Fn(&Pane) -> bool + Sync),
) -> Option<u64> {
    let serial = tmux.hearing().await?;
    if super::lock(hearing).refused == serial {
        return None;
    }
    // The session it is attached to now, as tmux said (by id: a rename or a move to
    // another session is followed), and the panes tmux paused for it (it was not
    // reading): their output flows again.
    let (session, paused) = {
        let mut out = output(tmux);
        match (&out.session, out.serial == serial) {
            (Some(s), true) => (s.clone(), out.paused.drain().collect::<Vec<u32>>()),
            _ => return None,
        }
    };
    let (orders, resume, flowing) = {
        let mut h = super::lock(hearing);
        let orders = h.orders(serial, (&session.0, &session.1), panes, young);
        // Of the panes tmux said it paused, the ones to flow (it paused them for not being
        // read); the rest were paused on request.
        let resume: Vec<u32> = paused
            .iter()
            .copied()
            .filter(|n| h.told.get(n) == Some(&true) && !h.counts.contains_key(n))
            .filter(|n| !orders.iter().any(|(o, _)| o == n))
            .collect();
        (orders, resume, h.flowing)
    };
    if orders.is_empty() && resume.is_empty() {
        return Some(serial);
    }
    let mut words: Vec<String> = vec!["refresh-client".into()];
    if !flowing {
        // Applied before the `-A` words of the same command (which must come after it:
        // changing `no-output` resets every pane's on and off): no byte of a pane that is
        // to be off gets through.
        words.extend(["-f".into(), "!no-output".into()]);
    }
    for (n, on) in &orders {
        words.push("-A".into());
        words.push(format!("%{n}:{}", if *on { "continue" } else { "pause" }));
    }
    for n in &resume {
        words.push("-A".into());
        words.push(format!("%{n}:continue"));
    }
    let command: Vec<&str> = words.iter().map(String::as_str).collect();
    match tmux.to_control(&[&command]).await {
        Some(Ok(blocks)) if blocks.iter().all(Result::is_ok) => {
            let mut h = super::lock(hearing);
            if h.serial == serial && h.session == session.0 {
                h.flowing = true;
                h.told.extend(orders);
            }
        }
        Some(Ok(blocks)) => {
            // tmux passes over a pane that is gone: a refusal is of the command itself (a
            // tmux before 3.2 has no `-A`). Nothing is heard over this connection.
            tracing::warn!("hearing output refused by tmux: {blocks:?}; output times instead");
            super::lock(hearing).refused = serial;
            return None;
        }
        failed => {
            // The connection failed or timed out: told again at the next poll, the paused
            // ones too.
            tracing::debug!("hearing: refresh-client: {failed:?}");
            let mut out = output(tmux);
            if out.serial == serial {
                out.paused.extend(resume);
            }
        }
    }
    Some(serial)
}

/// What hearing tells of the heard panes.
#[derive(Debug, Default)]
pub(super) struct HeardPanes {
    /// When each last wrote, as far as known (epoch ms; `None`: not since it was turned on).
    pub(super) last: HashMap<PaneId, Option<Millis>>,
    /// The ones whose stop is known: their count was quiet.
    pub(super) stopped: std::collections::HashSet<PaneId>,
}

/// How long after its start a pane's output is first copied through `%output` (before, its
/// window's output time is read): tmux (3.3a-3.5a) stops reading a pane whose output it
/// copies to a control client with 512 bytes or more still to send
/// (`server_client_check_pane_buffer`) till the next turn of its loop, and a death in
/// between ends the pane without the rest of what it wrote being read (measured: 2 starts
/// in 25 lost claude's `Invalid API key`, none with its output not copied). An agent that
/// dies in its first seconds (a refused key, a heap exhausted at start) says why in its
/// last lines. A counted pane is not copied (but for a new pane, between its first bytes and
/// the poll that pauses it, in a session whose output flows for a pane not counted): it is
/// counted from its first look.
pub(super) const HEAR_AFTER: Duration = Duration::from_secs(3);

/// A counted pane's count is read this often.
const SLICE: Duration = Duration::from_millis(250);
/// A pane quiet this long is read every [`SLOW`], and one quiet [`LONGER`] every [`SLOWER`]:
/// a thousand agents idle for hours cost 250 reads a second (a read of `/proc/PID/io` costs
/// 3-4 us of the kernel's time when it is not in its caches: a third of a point of a core
/// for a thousand a second). An agent answered after a minute's wait is seen at work up to
/// four seconds later; its next wait, as soon as ever. What a slow read counts is weighed over its window ([`busy`]).
const LONG: Duration = Duration::from_secs(10);
const SLOW: Duration = Duration::from_secs(1);
const LONGER: Duration = Duration::from_secs(60);
const SLOWER: Duration = Duration::from_secs(4);
/// Counts due this soon are read at this tick: one wake-up for all.
const SLACK: Duration = Duration::from_millis(50);
/// A burst is read again this soon: whether it goes on is told quickly.
const FIRST: Duration = Duration::from_millis(100);
/// The most an idle agent writes in a slice (claude's three 8-byte eventfd writes): in a
/// window shorter than a slice, more than next to nothing is more than this.
const NOISE_BYTES: u64 = 24;
/// Less than this written in a slice, in fewer than [`QUIET_CALLS`] writes, is a stop.
/// Measured on claude 2.1.197 (a stub model server on loopback, 250 ms slices): at work, its
/// spinner writes 47-1700 bytes in 1-17 writes a slice, and 16 bytes in 2 writes at the
/// least; at its permission prompt, 0, 8, 16 or 24 bytes in as many 8-byte eventfd writes.
/// codex 0.171.0 at work writes 78 bytes in 3 writes a slice at the least; at its approval
/// prompt nothing in three slices of four (55-63 bytes once a second): one quiet slice
/// is a stop.
/// A slice of a working agent under both only makes it stopped until its next slice.
pub(crate) const QUIET_BYTES: u64 = 40;
pub(crate) const QUIET_CALLS: u64 = 4;

/// Whether `w`, written over `window`, is more than next to nothing: [`QUIET_BYTES`] or
/// [`QUIET_CALLS`] a slice, at that rate (a slow read spans four slices); in a window shorter
/// than a slice, more than an idle agent writes in one too.
fn busy(w: Written, window: Duration) -> bool {
    let (ms, slice) = (window.as_millis().max(1) as u64, SLICE.as_millis() as u64);
    let at_rate = |per_slice: u64| (per_slice * ms + slice / 2) / slice;
    w.bytes >= at_rate(QUIET_BYTES).max(NOISE_BYTES + 1)
        || w.calls >= at_rate(QUIET_CALLS).max(QUIET_CALLS)
}

/// A burst after a stop: when it was counted, and what was written since, over how many
/// reads.
#[derive(Debug, Clone, Copy)]
struct Burst {
    at: Instant,
    since: Written,
    reads: u8,
}

impl Burst {
    fn at(at: Instant) -> Burst {
        Burst {
            at,
            since: Written::default(),
            reads: 0,
        }
    }
}

/// How many slices `window` spans, rounded.
fn slices(window: Duration) -> u64 {
    let (ms, slice) = (window.as_millis() as u64, SLICE.as_millis() as u64);
    ((ms + slice / 2) / slice).max(1)
}

/// A counted pane: its terminal's writers, and what was counted of them.
#[derive(Debug)]
struct Count {
    /// The pane's process and the processes below it the writers were found among.
    pid: u32,
    below: Vec<u32>,
    writers: Arc<Counter>,
    /// The last poll that saw it wanted.
    seen: u64,
    /// When it was last read (or opened).
    read_at: Instant,
    /// Its last slice was at work.
    working: bool,
    /// The last instant it was counted at work (`None`: not since counting began).
    at: Option<Instant>,
    /// More than next to nothing was counted after a stop: work if what follows it is more
    /// than next to nothing too, a tenth of a second of it or else a slice's.
    burst: Option<Burst>,
    /// Since when it is not at work, and whether that is [`LONG`] (read every [`SLOW`]).
    quiet_since: Instant,
    slow: bool,
}

impl Count {
    fn new(pid: u32, below: Vec<u32>, writers: Arc<Counter>, seen: u64, now: Instant) -> Count {
        Count {
            pid,
            below,
            writers,
            seen,
            read_at: now,
            working: false,
            at: None,
            burst: None,
            quiet_since: now,
            slow: false,
        }
    }

    /// When it is next to be read.
    fn due(&self) -> Instant {
        self.read_at
            + if let Some(b) = self.burst {
                return b.at + if b.reads == 0 { FIRST } else { SLICE };
            } else if self.slow && self.read_at.duration_since(self.quiet_since) >= LONGER {
                SLOWER
            } else if self.slow {
                SLOW
            } else {
                SLICE
            }
    }

    /// Takes in what its writers wrote since its last read (`None`: they are all gone), read
    /// at `now`; says whether what is known of it changed: it stopped, its work began, or a
    /// burst was not work (its screen may have changed all the same). What was written is
    /// weighed by how long it was written over ([`busy`]).
    fn judge(&mut self, wrote: Option<Written>, now: Instant) -> bool {
        let window = now.saturating_duration_since(self.read_at);
        self.read_at = now;
        let busy_over = |over: Duration| wrote.is_some_and(|w| busy(w, over));
        if self.working {
            if busy_over(window) {
                self.at = Some(now);
                return false;
            }
            self.working = false;
            self.quiet_since = now;
            return true;
        }
        if let Some(mut b) = self.burst.take() {
            let span = now.saturating_duration_since(b.at);
            if let Some(w) = wrote {
                b.since.bytes += w.bytes;
                b.since.calls += w.calls;
            }
            b.reads += 1;
            if wrote.is_some() && busy(b.since, span) {
                self.working = true;
                self.at = Some(now);
                return true;
            }
            if wrote.is_some() && b.reads == 1 && span + SLACK < SLICE {
                // Not yet a tenth's worth: a slice of it tells (many small writes).
                self.burst = Some(b);
                return false;
            }
            // A redraw, not work: dated, so that its screen is read again.
            self.at = Some(b.at);
            return true;
        }
        if self.slow {
            if busy_over(window) {
                // Written after a long quiet: a burst.
                self.slow = false;
                self.burst = Some(Burst::at(now));
            } else if wrote.is_some_and(|w| w.bytes > NOISE_BYTES * slices(window)) {
                // A little, more than an idle agent writes in as long (its eventfd writes):
                // read every slice again, which tells.
                self.slow = false;
            }
            return false;
        }
        if busy_over(window) {
            self.burst = Some(Burst::at(now));
        } else {
            self.slow = now.duration_since(self.quiet_since) >= LONG;
        }
        false
    }
}

/// Reads each counted pane's count when due ([`Count::due`]): on every [`SLICE`] tick, all of
/// them as of the tick (a slow batch of reads does not push the next out of step), and a
/// burst [`FIRST`] after it. The loop is woken when what is known of one changed. Ends when
/// none is counted, or the poller is gone.
async fn sampler(tmux: Tmux, hearing: std::sync::Weak<Mutex<Hearing>>) {
    let mut tick = Instant::now() + SLICE;
    loop {
        let now = {
            let Some(hearing) = hearing.upgrade() else {
                return;
            };
            let h = super::lock(&hearing);
            h.counts
                .values()
                .filter(|c| c.burst.is_some())
                .map(Count::due)
                .fold(tick, Instant::min)
        };
        tokio::time::sleep_until(now).await;
        if now + SLACK >= tick {
            tick += SLICE;
            if tick <= Instant::now() {
                // Asleep (a suspended machine, a starved process): no catching up.
                tick = Instant::now() + SLICE;
            }
        }
        let Some(hearing) = hearing.upgrade() else {
            return;
        };
        let due: Vec<(u32, Arc<Counter>)> = {
            let mut h = super::lock(&hearing);
            if h.counts.is_empty() {
                h.sampling = false;
                return;
            }
            h.counts
                .iter()
                .filter(|(_, c)| c.due() <= now + SLACK)
                .map(|(&n, c)| (n, Arc::clone(&c.writers)))
                .collect()
        };
        if due.is_empty() {
            continue;
        }
        // Read with no lock held.
        let read: Vec<(u32, Option<Written>)> =
            due.into_iter().map(|(n, w)| (n, w.since())).collect();
        let changed = {
            let mut h = super::lock(&hearing);
            let mut changed = false;
            for (n, wrote) in read {
                if let Some(c) = h.counts.get_mut(&n) {
                    changed |= c.judge(wrote, now);
                }
            }
            changed
        };
        if changed {
            tmux.notices().heard.notify_one();
        }
    }
}

/// When the loop is next to be woken to see a pane heard through `%output` stop (half a
/// second after its last byte), unless a wake-up is already set for then or sooner.
pub(super) fn wake_at(hearing: &Mutex<Hearing>, heard: &HeardPanes, now: Millis) -> Option<Millis> {
    // In slots of 100 ms: a hundred agents stopping at different instants wake the loop a
    // few times, not a hundred.
    const SLOT: Millis = 100;
    let mut h = super::lock(hearing);
    // A counted pane's stop is told by the sampler.
    let due = heard
        .last
        .iter()
        .filter(|(id, _)| !h.counts.contains_key(&id.number()) && !heard.stopped.contains(id))
        .filter_map(|(_, t)| *t)
        .map(|t| (t + QUIET_HEARD_MS).div_ceil(SLOT) * SLOT)
        .filter(|&d| d > now)
        .min()?;
    if h.armed > now && h.armed <= due {
        return None;
    }
    h.armed = due;
    Some(due)
}

#[cfg(test)]
mod tests;
