//! Hearing panes' output as it happens: control mode's `%output`, flowing for the panes the
//! core wants heard (live agents with no state file of their own) and paused for every
//! other pane, with `refresh-client -A '%N:continue|pause'` (tmux 3.2+). Not `on|off`: before
//! tmux 3.7, `off` keeps the pane's queued output, and a later `on` makes the server read
//! it after it is gone (a crash, seen on 3.3a; fixed by tmux's cae229cad); `pause` discards
//! it. The connection attaches with `no-output`; that flag is dropped once (nothing is
//! queued under it, so the drop frees nothing in use), in the same command that pauses
//! every other pane of its session, once a pane is wanted. tmux sends `%output` only for panes in the
//! session the connection is attached to: a pane elsewhere is not heard, and the core reads
//! its window's output time instead. A quiet pane costs nothing: tmux tells of a byte when
//! there is one, and nothing is asked.
//!
//! A pane at work writes all the time (a spinner redrawn every 50-200 ms), and every
//! `%output` costs the tmux server a turn of its loop, whatever its size (it polls every
//! pane's terminal each turn: ~150 us at 300 panes; tmux 3.3a's `control.c`). So once a pane
//! is heard writing (its first bytes wake the loop) it is paused, and sampled by what the
//! processes on its terminal wrote (`/proc/PID/io`, every 250 ms, nothing asked of tmux): a slice of
//! 250 ms with next to nothing written ([`QUIET_BYTES`], [`QUIET_CALLS`]) is its stop, and
//! it is heard whole again. A stop is then known within about half a second, and a hundred
//! agents at work cost the server nothing to hear. A pane whose processes `/proc` does not
//! tell of is heard whole.

use std::collections::{HashMap, HashSet};

use crate::adapters::procs::writes::{Counter, Written};
use crate::adapters::tmux::client::Tmux;
use crate::adapters::tmux::control::Output;
use crate::core::attention::QUIET_HEARD_MS;
use crate::core::pane::{Pane, PaneId};
use crate::core::time::Millis;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the connection was told, and what the core wants.
#[derive(Debug)]
pub(super) struct Hearing {
    /// The panes (by number, on this server) the core wants heard.
    want: HashSet<u32>,
    /// The connection, and the session it is attached to (`$id`), the rest is about.
    serial: u64,
    session: String,
    /// Output on (`true`) or off, as told to that connection, by pane number.
    told: HashMap<u32, bool>,
    /// `no-output` dropped on that connection.
    flowing: bool,
    /// The earliest time a wake-up is already set for (epoch ms).
    armed: Millis,
    /// Panes at work, paused and sampled by what their terminal's writers wrote, as of
    /// when (see above); on as far as `told` says.
    counts: HashMap<u32, Count>,
    /// Panes whose count was quiet (their stop), and the last instant they were counted at
    /// work: their stop is known, and a wait dates from then, until they write again.
    quiet: HashMap<u32, tokio::time::Instant>,
    /// The sampler task is started.
    sampling: bool,
    /// The connection whose tmux refused `refresh-client -A` (before 3.2): not asked again.
    refused: u64,
    /// Epoch milliseconds at an instant: heard instants (monotonic, as the loop's clock is)
    /// become the core's epoch milliseconds from it, so a wall clock stepped (NTP, a
    /// suspend) never makes a pane look as if it wrote in the future or long ago.
    epoch: (Millis, tokio::time::Instant),
}

impl Default for Hearing {
    fn default() -> Hearing {
        Hearing {
            want: HashSet::new(),
            serial: 0,
            session: String::new(),
            told: HashMap::new(),
            flowing: false,
            armed: 0,
            counts: HashMap::new(),
            quiet: HashMap::new(),
            sampling: false,
            refused: 0,
            epoch: (crate::adapters::wall_ms(), tokio::time::Instant::now()),
        }
    }
}

impl Hearing {
    /// The pump is told which panes are sampled (their first byte in a window wakes
    /// nobody).
    fn share_sampled(&self, tmux: &Tmux, serial: u64) {
        let mut out = output(tmux);
        let same = out.sampled.len() == self.counts.len()
            && self.counts.keys().all(|n| out.sampled.contains(n));
        if out.serial == serial && !same {
            out.sampled = self.counts.keys().copied().collect();
        }
    }

    /// Whether pane `n` is sampled (paused, its count read each slice).
    fn sampled(&self, n: u32) -> bool {
        self.counts.contains_key(&n)
    }

    pub(super) fn want(&mut self, hear: &[PaneId]) {
        self.want = hear.iter().map(|id| id.number()).collect();
    }

    /// A monotonic instant as epoch milliseconds.
    fn ms(&self, at: tokio::time::Instant) -> Millis {
        let (ms, then) = self.epoch;
        ms + at.saturating_duration_since(then).as_millis() as Millis
    }

    pub(super) fn now_ms(&self) -> Millis {
        self.ms(tokio::time::Instant::now())
    }

    /// The `-A` words that make the connection's on/off match what is wanted, for the
    /// live panes of its session (`$id`, named `name` now); forgets panes that are gone.
    /// Another connection, or the same one moved to another session, starts from nothing.
    fn orders(
        &mut self,
        serial: u64,
        (id, name): (&str, &str),
        panes: &[Pane],
    ) -> Vec<(u32, bool)> {
        if self.serial != serial || self.session != id {
            self.serial = serial;
            self.session = id.to_string();
            self.told.clear();
            self.counts.clear();
            self.quiet.clear();
            self.flowing = false;
        }
        let mine: Vec<u32> = panes
            .iter()
            .filter(|p| p.session == name && !p.dead)
            .map(|p| p.id.number())
            .collect();
        let live: HashSet<u32> = mine.iter().copied().collect();
        self.told.retain(|n, _| live.contains(n));
        let want = &self.want;
        self.counts
            .retain(|n, _| live.contains(n) && want.contains(n));
        self.quiet
            .retain(|n, _| live.contains(n) && want.contains(n));
        // Nothing wanted in its session: `no-output` stays, and nothing is said.
        if !self.flowing && !mine.iter().any(|n| self.want.contains(n)) {
            return Vec::new();
        }
        mine.into_iter()
            .map(|n| (n, self.want.contains(&n)))
            .filter(|(n, on)| self.told.get(n) != Some(on))
            .collect()
    }
}

fn output(tmux: &Tmux) -> std::sync::MutexGuard<'_, Output> {
    tmux.notices()
        .output
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Brings the connection's on/off in line with what the core wants, and says when each
/// heard pane last wrote (`None`: not since it was turned on), and which of them are known
/// to have stopped ([`HeardPanes`]). Empty without a control connection: then nothing is heard,
/// and the core reads output times.
/// `below`: the processes below a pane's own, as the poll last walked them.
pub(super) async fn heard(
    tmux: &Tmux,
    hearing: &Arc<Mutex<Hearing>>,
    panes: &[Pane],
    below: impl Fn(PaneId, u32) -> Option<Vec<u32>>,
) -> HeardPanes {
    let Some(serial) = tmux.hearing().await else {
        return HeardPanes::default();
    };
    if super::lock(hearing).refused == serial {
        return HeardPanes::default();
    }
    // The session it is attached to now, as tmux said (by id: a rename or a move to
    // another session is followed), and the panes tmux paused for it (it was not
    // reading): their output flows again.
    let (session, paused) = {
        let mut out = output(tmux);
        match (&out.session, out.serial == serial) {
            (Some(s), true) => (s.clone(), out.paused.drain().collect::<Vec<u32>>()),
            _ => return HeardPanes::default(),
        }
    };
    let (orders, writing) = {
        let mut h = super::lock(hearing);
        let orders = h.orders(serial, (&session.0, &session.1), panes);
        // Writing: sampled from now on (its first bytes woke the loop; the rest is counted).
        let now = tokio::time::Instant::now();
        let out = output(tmux);
        let writing: Vec<u32> = h
            .told
            .iter()
            .filter(|(n, on)| **on && !h.sampled(**n))
            .filter(|(n, _)| {
                out.last
                    .get(n)
                    .is_some_and(|&t| now.duration_since(t) < QUIET)
            })
            .map(|(&n, _)| n)
            .take(MAX_SAMPLED.saturating_sub(h.counts.len()))
            .collect();
        (orders, writing)
    };
    // Sampled only where what its terminal's writers wrote can be read (`/proc` read with no
    // lock held).
    let counted: Vec<(u32, Count)> = if writing.is_empty() {
        Vec::new()
    } else {
        let pids: HashMap<u32, (PaneId, u32)> = panes
            .iter()
            .filter_map(|p| Some((p.id.number(), (p.id, p.pid?))))
            .collect();
        writing
            .iter()
            .filter_map(|&n| {
                let (id, pid) = *pids.get(&n)?;
                Some((n, Count::of(pid, below(id, pid).as_deref())?))
            })
            .collect()
    };
    let sample: Vec<u32> = counted.iter().map(|(n, _)| *n).collect();
    let (flowing, resume) = {
        let mut h = super::lock(hearing);
        if !sample.is_empty() && !h.sampling {
            h.sampling = true;
            tokio::spawn(sampler(tmux.clone(), Arc::clone(hearing)));
        }
        // Of the panes tmux said it paused, the ones to flow (it paused them for not being
        // read); the rest were paused on request.
        let resume: Vec<u32> = paused
            .iter()
            .copied()
            .filter(|n| h.told.get(n) == Some(&true) && !h.sampled(*n))
            .filter(|n| !orders.iter().any(|(o, _)| o == n))
            .collect();
        (h.flowing, resume)
    };
    if !orders.is_empty() || !resume.is_empty() || !sample.is_empty() {
        let mut words: Vec<String> = vec!["refresh-client".into()];
        if !flowing {
            // Applied before the `-A` words of the same command (which must come after it:
            // changing `no-output` resets every pane's on and off): no byte of a pane that
            // is to be off gets through.
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
        for n in &sample {
            words.push("-A".into());
            words.push(format!("%{n}:pause"));
        }
        let command: Vec<&str> = words.iter().map(String::as_str).collect();
        match tmux.to_control(&[&command]).await {
            Some(Ok(blocks)) if blocks.iter().all(Result::is_ok) => {
                let mut h = super::lock(hearing);
                if h.serial == serial && h.session == session.0 {
                    h.flowing = true;
                    h.told.extend(orders);
                    h.counts.extend(counted);
                }
                h.share_sampled(tmux, serial);
            }
            Some(Ok(blocks)) => {
                // tmux passes over a pane that is gone: a refusal is of the command itself (a
                // tmux before 3.2 has no `-A`). Nothing is heard over this connection.
                tracing::warn!("hearing output refused by tmux: {blocks:?}; output times instead");
                super::lock(hearing).refused = serial;
            }
            failed => {
                // The connection failed or timed out: told again at the next poll, the
                // paused ones too.
                tracing::debug!("hearing: refresh-client: {failed:?}");
                let mut out = output(tmux);
                if out.serial == serial {
                    out.paused.extend(resume);
                }
            }
        }
    }
    let mut h = super::lock(hearing);
    if h.serial != serial {
        return HeardPanes::default();
    }
    let mut out = output(tmux);
    if out.serial != serial {
        return HeardPanes::default();
    }
    // Panes gone, or turned off: forgotten. A quiet one that wrote again: no longer,
    // unless what it wrote is still to be counted (a burst is not yet work).
    out.last.retain(|n, _| h.told.get(n) == Some(&true));
    let last = &out.last;
    let Hearing { quiet, counts, .. } = &mut *h;
    quiet.retain(|n, at| {
        counts.get(n).is_some_and(|c| !c.judged) || last.get(n).is_none_or(|byte| byte <= at)
    });
    // A sampled pane: when it was last counted at work. A quiet one: the same, and its
    // stop is known; so too for one quiet before whose new burst is not counted yet (codex
    // at its approval prompt redraws once a second: not work, and said as nothing).
    let mut heard = HeardPanes::default();
    for (&n, _) in h.told.iter().filter(|(_, on)| **on) {
        let at = match (h.counts.get(&n), h.quiet.get(&n)) {
            (Some(c), Some(&at)) if !c.judged => {
                heard.stopped.insert(PaneId(n));
                Some(at)
            }
            (Some(c), _) => Some(c.at),
            (None, Some(&at)) => {
                heard.stopped.insert(PaneId(n));
                Some(at)
            }
            (None, None) => out.last.get(&n).copied(),
        };
        heard.last.insert(PaneId(n), at.map(|at| h.ms(at)));
    }
    heard
}

/// What hearing tells of the heard panes.
#[derive(Debug, Default)]
pub(super) struct HeardPanes {
    /// When each last wrote, as far as known (epoch ms; `None`: not since it was turned on).
    pub(super) last: HashMap<PaneId, Option<Millis>>,
    /// The ones whose stop is known: their count was quiet.
    pub(super) stopped: std::collections::HashSet<PaneId>,
}

const QUIET: Duration = Duration::from_millis(QUIET_HEARD_MS);
/// At most this many panes are sampled at once (each keeps its writers' counts open); the
/// ones beyond are heard whole.
const MAX_SAMPLED: usize = 400;
/// A sampled pane's count is read this often.
const SLICE: Duration = Duration::from_millis(250);
/// A pane just sampled is first read this soon: whether its first bytes were work or a
/// redraw is told quickly (a short slice taken for quiet only has its screen read).
const FIRST: Duration = Duration::from_millis(100);
/// Less than this written in a slice, in fewer than [`QUIET_CALLS`] writes, is a stop.
/// Measured on claude 2.1.197 (a stub model server on loopback, 250 ms slices): at work, its
/// spinner writes 47-1700 bytes in 1-17 writes a slice, and 16 bytes in 2 writes at the
/// least; at its permission prompt, 0, 8, 16 or 24 bytes in as many 8-byte eventfd writes.
/// codex 0.171.0 at work writes 78 bytes in 3 writes a slice at the least; at its approval
/// prompt nothing in three slices of four (55-63 bytes once a second): one quiet slice
/// is a stop.
/// A slice of a working agent under both only makes it heard whole until its next byte.
pub(crate) const QUIET_BYTES: u64 = 40;
pub(crate) const QUIET_CALLS: u64 = 4;

/// A sampled pane's terminal writers, and what they had written when last read.
#[derive(Debug)]
struct Count {
    writers: Arc<Counter>,
    wrote: Written,
    at: tokio::time::Instant,
    /// Counted at work once at least: a first burst is not work until then.
    judged: bool,
}

impl Count {
    /// The count of the processes writing to the terminal of the pane whose process is
    /// `pid` (those `below` it as last walked, if known); `None` where `/proc` does not tell.
    fn of(pid: u32, below: Option<&[u32]>) -> Option<Count> {
        let writers = crate::adapters::procs::writes::terminal_writers(pid, below);
        let writers = Counter::open(&writers)?;
        let wrote = writers.read()?;
        Some(Count {
            writers: Arc::new(writers),
            wrote,
            at: tokio::time::Instant::now(),
            judged: false,
        })
    }
}

/// Reads every sampled pane's count each [`SLICE`]: one that wrote next to nothing in its
/// last slice (or whose writers are all gone) has stopped: the loop is woken to continue it
/// (heard whole) and look at it. Ends when none is sampled.
async fn sampler(tmux: Tmux, hearing: Arc<Mutex<Hearing>>) {
    loop {
        tokio::time::sleep(SLICE).await;
        let (serial, due) = {
            let mut h = super::lock(&hearing);
            if h.counts.is_empty() {
                h.sampling = false;
                return;
            }
            let now = tokio::time::Instant::now();
            let due: Vec<(u32, Arc<Counter>)> = h
                .counts
                .iter()
                .filter(|(_, c)| now.duration_since(c.at) >= if c.judged { SLICE } else { FIRST })
                .map(|(&n, c)| (n, Arc::clone(&c.writers)))
                .collect();
            (h.serial, due)
        };
        let read: Vec<(u32, Option<Written>)> = due
            .into_iter()
            .map(|(n, writers)| (n, writers.read()))
            .collect();
        let (stopped, started): (Vec<u32>, bool) = {
            let mut h = super::lock(&hearing);
            if h.serial != serial {
                continue;
            }
            let now = tokio::time::Instant::now();
            let (stopped, started) = judge(&mut h.counts, &read, now);
            for &(n, at) in &stopped {
                h.quiet.insert(n, at);
            }
            // At work: its stop before is no longer news.
            for n in &started {
                h.quiet.remove(n);
            }
            h.share_sampled(&tmux, serial);
            let stopped = stopped
                .into_iter()
                .map(|(n, _)| n)
                .filter(|n| h.told.get(n) == Some(&true))
                .collect();
            (stopped, !started.is_empty())
        };
        if stopped.is_empty() {
            if started {
                tmux.notices().heard.notify_one();
            }
            continue;
        }
        // Continued by the poll this wakes, as a pane tmux paused is: in the same command
        // as the panes it pauses, one wake-up of the server for both.
        {
            let mut out = output(&tmux);
            if out.serial == serial {
                out.paused.extend(stopped);
            }
        }
        tmux.notices().heard.notify_one();
    }
}

/// After a slice: the panes read that wrote less than [`QUIET_BYTES`] in fewer than
/// [`QUIET_CALLS`] writes since their count was last read (or could not be read, or whose
/// count went back: a writer gone) have stopped, and are no longer counted: each with the
/// last instant it was counted at work. The others' counts are as read now; those counted
/// at work for the first time (their burst was work) are said too.
fn judge(
    counts: &mut HashMap<u32, Count>,
    read: &[(u32, Option<Written>)],
    now: tokio::time::Instant,
) -> (Vec<(u32, tokio::time::Instant)>, Vec<u32>) {
    let mut stopped = Vec::new();
    let mut started = Vec::new();
    for &(n, wrote) in read {
        let Some(c) = counts.get_mut(&n) else {
            continue;
        };
        match wrote {
            Some(w)
                if w.bytes >= c.wrote.bytes
                    && w.calls >= c.wrote.calls
                    && (w.bytes - c.wrote.bytes >= QUIET_BYTES
                        || w.calls - c.wrote.calls >= QUIET_CALLS) =>
            {
                c.wrote = w;
                c.at = now;
                if !c.judged {
                    c.judged = true;
                    started.push(n);
                }
            }
            _ => {
                stopped.push((n, c.at));
                counts.remove(&n);
            }
        }
    }
    (stopped, started)
}

/// When the loop is next to be woken to see a heard pane's output stop (half a second
/// after its last byte), unless a wake-up is already set for then or sooner.
pub(super) fn wake_at(hearing: &Mutex<Hearing>, heard: &HeardPanes, now: Millis) -> Option<Millis> {
    // In slots of 100 ms: a hundred agents stopping at different instants wake the loop a
    // few times, not a hundred.
    const SLOT: Millis = 100;
    let mut h = super::lock(hearing);
    // A sampled pane's stop is told by the sampler; a quiet one's is known.
    let due = heard
        .last
        .iter()
        .filter(|(id, _)| !h.sampled(id.number()) && !heard.stopped.contains(id))
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
mod tests {
    use super::*;

    fn w(bytes: u64, calls: u64) -> Written {
        Written { bytes, calls }
    }

    fn count(wrote: Written, at: tokio::time::Instant) -> Count {
        Count {
            writers: Arc::new(Counter::open(&[std::process::id()]).unwrap()),
            wrote,
            at,
            judged: false,
        }
    }

    #[test]
    fn a_slice_with_less_than_a_spinner_line_written_is_a_stop() {
        let then = tokio::time::Instant::now();
        let now = then + SLICE;
        let mut counts: HashMap<u32, Count> =
            (1..=7).map(|n| (n, count(w(1_000, 10), then))).collect();
        let read = [
            // One frame of claude's spinner (47 bytes, one write): at work.
            (1, Some(w(1_047, 11))),
            // claude at its permission prompt (three 8-byte eventfd writes): stopped.
            (2, Some(w(1_024, 13))),
            // Nothing: stopped.
            (3, Some(w(1_000, 10))),
            // Its writers are gone: stopped (and looked at).
            (4, None),
            // A writer gone, the sums lower: stopped.
            (5, Some(w(900, 20))),
            // A few bytes at a time, many times: at work.
            (6, Some(w(1_012, 10 + QUIET_CALLS))),
            // Not counted: not made up.
            (8, Some(w(0, 0))),
        ];
        let (mut stopped, started) = judge(&mut counts, &read, now);
        stopped.sort_unstable();
        assert_eq!(
            started.len(),
            2,
            "counted at work for the first time: 1 and 6"
        );
        assert_eq!(
            stopped,
            [(2, then), (3, then), (4, then), (5, then)],
            "each with when it was last counted at work"
        );
        assert!(!counts.contains_key(&8));
        assert_eq!(counts[&1].wrote, w(1_047, 11));
        assert_eq!(counts[&1].at, now);
        assert_eq!(counts[&6].at, now);
        assert_eq!(counts[&7].at, then, "not read: as it was");
        assert_eq!(counts.len(), 3);
    }
}
