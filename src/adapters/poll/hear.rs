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
//! A pane at work writes all the time (a spinner redrawn every 50-200 ms), and every byte of
//! it copied to this client costs tmux about half of what drawing it did. So once a pane has
//! written for a second without a stop it is only sampled: paused, and flowing for 150 ms
//! every 500 ms (two `refresh-client` commands for all of them); a window without a byte is its
//! stop, and it is heard whole again. A stop is then known within about 650 ms, for a
//! quarter of the bytes.

use std::collections::{HashMap, HashSet};

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
    /// Panes at work, heard only in sampling windows (see above); on as far as `told`
    /// says.
    sampled: HashSet<u32>,
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
            sampled: HashSet::new(),
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
        if out.serial == serial && out.sampled != self.sampled {
            out.sampled = self.sampled.clone();
        }
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
            self.sampled.clear();
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
        self.sampled
            .retain(|n| live.contains(n) && want.contains(n));
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
/// heard pane last wrote (`None`: not since it was turned on). Empty without a control
/// connection: then nothing is heard, and the core reads output times.
pub(super) async fn heard(
    tmux: &Tmux,
    hearing: &Arc<Mutex<Hearing>>,
    panes: &[Pane],
) -> HashMap<PaneId, Option<Millis>> {
    let Some(serial) = tmux.hearing().await else {
        return HashMap::new();
    };
    if super::lock(hearing).refused == serial {
        return HashMap::new();
    }
    // The session it is attached to now, as tmux said (by id: a rename or a move to
    // another session is followed), and the panes tmux paused for it (it was not
    // reading): their output flows again.
    let (session, paused) = {
        let mut out = output(tmux);
        match (&out.session, out.serial == serial) {
            (Some(s), true) => (s.clone(), out.paused.drain().collect::<Vec<u32>>()),
            _ => return HashMap::new(),
        }
    };
    let (orders, flowing, sample, resume) = {
        let mut h = super::lock(hearing);
        let orders = h.orders(serial, (&session.0, &session.1), panes);
        // Writing for a second without a stop: sampled from now on.
        let now = tokio::time::Instant::now();
        let out = output(tmux);
        let sample: Vec<u32> = h
            .told
            .iter()
            .filter(|(n, on)| **on && !h.sampled.contains(n))
            .filter(|(n, _)| {
                let recent = out
                    .last
                    .get(n)
                    .is_some_and(|&t| now.duration_since(t) < QUIET);
                let long = out
                    .writing
                    .get(n)
                    .is_some_and(|&t| now.duration_since(t) >= SAMPLE_AFTER);
                recent && long
            })
            .map(|(&n, _)| n)
            .collect();
        drop(out);
        if !sample.is_empty() && !h.sampling {
            h.sampling = true;
            tokio::spawn(sampler(tmux.clone(), Arc::clone(hearing)));
        }
        // Of the panes tmux said it paused, the ones to flow (it paused them for not being
        // read); the rest were paused on request.
        let resume: Vec<u32> = paused
            .iter()
            .copied()
            .filter(|n| h.told.get(n) == Some(&true) && !h.sampled.contains(n))
            .filter(|n| !orders.iter().any(|(o, _)| o == n))
            .collect();
        (orders, h.flowing, sample, resume)
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
                    h.sampled.extend(sample);
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
    let h = super::lock(hearing);
    if h.serial != serial {
        return HashMap::new();
    }
    let mut out = output(tmux);
    if out.serial != serial {
        return HashMap::new();
    }
    // Panes gone, or turned off: forgotten.
    out.last.retain(|n, _| h.told.get(n) == Some(&true));
    let told = &h.told;
    out.writing.retain(|n, _| told.get(n) == Some(&true));
    // A sampled pane wrote in its last window (else it would be heard whole again): at work
    // as of now.
    let now = h.now_ms();
    h.told
        .iter()
        .filter(|(_, on)| **on)
        .map(|(&n, _)| {
            let last = if h.sampled.contains(&n) {
                Some(now)
            } else {
                out.last.get(&n).map(|&at| h.ms(at))
            };
            (PaneId(n), last)
        })
        .collect()
}

const QUIET: Duration = Duration::from_millis(QUIET_HEARD_MS);
/// How long a pane writes without a stop before it is only sampled.
const SAMPLE_AFTER: Duration = Duration::from_secs(1);
/// Every so often, the sampled panes are on for a window.
const SAMPLE_EVERY: Duration = Duration::from_millis(500);
const WINDOW: Duration = Duration::from_millis(150);

/// Turns the sampled panes on for a window every [`SAMPLE_EVERY`]: one that wrote in it is
/// off again till the next; one that did not has stopped, and stays on (heard whole), and
/// the loop is woken to look at it.
async fn sampler(tmux: Tmux, hearing: Arc<Mutex<Hearing>>) {
    loop {
        tokio::time::sleep(SAMPLE_EVERY - WINDOW).await;
        let (serial, panes) = {
            let h = super::lock(&hearing);
            (h.serial, h.sampled.iter().copied().collect::<Vec<u32>>())
        };
        if panes.is_empty() || tmux.hearing().await != Some(serial) {
            continue;
        }
        let start = tokio::time::Instant::now();
        if !matches!(refresh(&tmux, &panes, "continue").await, Some(Ok(_))) {
            continue;
        }
        tokio::time::sleep(WINDOW).await;
        let wrote: HashSet<u32> = {
            let out = output(&tmux);
            panes
                .iter()
                .copied()
                .filter(|n| out.last.get(n).is_some_and(|&t| t >= start))
                .collect()
        };
        // Off again: the ones still at work; and any the core no longer wants heard.
        let off: HashSet<u32> = {
            let mut h = super::lock(&hearing);
            if h.serial != serial {
                continue;
            }
            close_window(&mut h.sampled, &panes, &wrote);
            h.share_sampled(&tmux, serial);
            panes
                .iter()
                .copied()
                .filter(|n| h.sampled.contains(n) || h.told.get(n) != Some(&true))
                .collect()
        };
        if !off.is_empty() {
            let _ = refresh(&tmux, &off.iter().copied().collect::<Vec<_>>(), "pause").await;
        }
        if panes.iter().any(|n| !wrote.contains(n)) {
            tmux.notices().heard.notify_one();
        }
    }
}

/// After a sampling window over `window`: its panes that wrote stay sampled, the others are
/// heard whole again. A pane the poll began to sample while the window was open was not in
/// it, and is paused: it stays sampled (dropped, nobody would continue it again, and it
/// would never be heard again: a bench at 30 panes found a tenth of them so).
fn close_window(sampled: &mut HashSet<u32>, window: &[u32], wrote: &HashSet<u32>) {
    sampled.retain(|n| wrote.contains(n) || !window.contains(n));
}

/// One `refresh-client` saying `what` (`continue`, `pause`) of each of `panes`.
async fn refresh(
    tmux: &Tmux,
    panes: &[u32],
    what: &str,
) -> Option<
    Result<Vec<crate::adapters::tmux::control::Block>, crate::adapters::tmux::client::TmuxError>,
> {
    let mut words: Vec<String> = vec!["refresh-client".into()];
    for &n in panes {
        words.push("-A".into());
        words.push(format!("%{n}:{what}"));
    }
    let command: Vec<&str> = words.iter().map(String::as_str).collect();
    tmux.to_control(&[&command]).await
}

/// When the loop is next to be woken to see a heard pane's output stop (half a second
/// after its last byte), unless a wake-up is already set for then or sooner.
pub(super) fn wake_at(
    hearing: &Mutex<Hearing>,
    heard: &HashMap<PaneId, Option<Millis>>,
    now: Millis,
) -> Option<Millis> {
    // In slots of 100 ms: a hundred agents stopping at different instants wake the loop a
    // few times, not a hundred.
    const SLOT: Millis = 100;
    let mut h = super::lock(hearing);
    // A sampled pane's stop is told by the sampler.
    let due = heard
        .iter()
        .filter(|(id, _)| !h.sampled.contains(&id.number()))
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

    #[test]
    fn a_window_decides_only_for_its_own_panes() {
        let mut sampled: HashSet<u32> = [1, 2, 3].into();
        // %3 was paused for sampling while the window over %1 and %2 was open.
        close_window(&mut sampled, &[1, 2], &[1].into());
        assert_eq!(
            sampled,
            [1, 3].into(),
            "%2 stopped; %3 waits for its window"
        );
    }
}
