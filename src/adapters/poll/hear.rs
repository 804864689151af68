//! Hearing panes' output as it happens: control mode's `%output`, turned on for the panes
//! the core wants heard (live agents with no state file of their own) and off for every
//! other pane, with `refresh-client -A '%N:on|off'` (tmux 3.2+). The connection attaches
//! with `no-output`; that flag is dropped, in the same command that turns every other pane
//! of its session off, once a pane is wanted. tmux sends `%output` only for panes in the
//! session the connection is attached to: a pane elsewhere is not heard, and the core reads
//! its window's output time instead. A quiet pane costs nothing: tmux tells of a byte when
//! there is one, and nothing is asked.

use std::collections::{HashMap, HashSet};

use crate::adapters::tmux::client::Tmux;
use crate::core::attention::QUIET_HEARD_MS;
use crate::core::pane::{Listing, PaneId};
use crate::core::time::Millis;

/// What the connection was told, and what the core wants.
#[derive(Debug, Default)]
pub(super) struct Hearing {
    /// The panes (by number, on this server) the core wants heard.
    want: HashSet<u32>,
    /// The connection the rest is about.
    serial: u64,
    /// Output on (`true`) or off, as told to that connection, by pane number.
    told: HashMap<u32, bool>,
    /// `no-output` dropped on that connection.
    flowing: bool,
    /// The earliest time a wake-up is already set for (epoch ms).
    armed: Millis,
}

impl Hearing {
    pub(super) fn want(&mut self, hear: &[PaneId]) {
        self.want = hear.iter().map(|id| id.number()).collect();
    }

    /// The `-A` words that make the connection's on/off match what is wanted, for the
    /// live panes of its session (`session` as given to `attach -t`, `=name`); forgets
    /// panes that are gone.
    fn orders(&mut self, serial: u64, session: &str, listing: &Listing) -> Vec<(u32, bool)> {
        if self.serial != serial {
            self.serial = serial;
            self.told.clear();
            self.flowing = false;
        }
        let name = session.strip_prefix('=').unwrap_or(session);
        let mine: Vec<u32> = listing
            .panes
            .iter()
            .filter(|p| p.session == name && !p.dead)
            .map(|p| p.id.number())
            .collect();
        let live: HashSet<u32> = mine.iter().copied().collect();
        self.told.retain(|n, _| live.contains(n));
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

/// Brings the connection's on/off in line with what the core wants, and says when each
/// heard pane last wrote (`None`: not since it was turned on). Empty without a control
/// connection: then nothing is heard, and the core reads output times.
pub(super) async fn heard(
    tmux: &Tmux,
    hearing: &std::sync::Mutex<Hearing>,
    listing: &Listing,
) -> HashMap<PaneId, Option<Millis>> {
    let Some((serial, session)) = tmux.hearing().await else {
        return HashMap::new();
    };
    let (orders, flowing) = {
        let mut h = super::lock(hearing);
        let orders = h.orders(serial, &session, listing);
        (orders, h.flowing)
    };
    // Panes tmux paused for this client (it was not reading): their output flows again.
    let paused: Vec<u32> = {
        let mut out = tmux
            .notices()
            .output
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if out.serial == serial {
            out.paused.drain().collect()
        } else {
            Vec::new()
        }
    };
    if !orders.is_empty() || !paused.is_empty() {
        let mut words: Vec<String> = vec!["refresh-client".into()];
        if !flowing {
            // Applied before the `-A` words of the same command: no byte of a pane that
            // is to be off gets through.
            words.extend(["-f".into(), "!no-output".into()]);
        }
        for (n, on) in &orders {
            words.push("-A".into());
            words.push(format!("%{n}:{}", if *on { "on" } else { "off" }));
        }
        for n in &paused {
            words.push("-A".into());
            words.push(format!("%{n}:continue"));
        }
        let command: Vec<&str> = words.iter().map(String::as_str).collect();
        match tmux.to_control(&[&command]).await {
            Some(Ok(blocks)) if blocks.iter().all(Result::is_ok) => {
                let mut h = super::lock(hearing);
                if h.serial == serial {
                    h.flowing = true;
                    h.told.extend(orders);
                }
            }
            Some(Ok(blocks)) => {
                // tmux passes over a pane that is gone; a refusal is something else (a tmux
                // before 3.2 has no `-A`): told again at the next poll.
                tracing::debug!("hearing: refresh-client refused: {blocks:?}");
            }
            Some(Err(e)) => tracing::debug!("hearing: {e}"),
            None => {}
        }
    }
    let h = super::lock(hearing);
    if h.serial != serial {
        return HashMap::new();
    }
    let out = tmux
        .notices()
        .output
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let same = out.serial == serial;
    h.told
        .iter()
        .filter(|(_, on)| **on)
        .map(|(&n, _)| {
            let last = same.then(|| out.last.get(&n).copied()).flatten();
            (PaneId(n), last)
        })
        .collect()
}

/// When the loop is next to be woken to see a heard pane's output stop (half a second
/// after its last byte), unless a wake-up is already set for then or sooner.
pub(super) fn wake_at(
    hearing: &std::sync::Mutex<Hearing>,
    heard: &HashMap<PaneId, Option<Millis>>,
    now: Millis,
) -> Option<Millis> {
    let due = heard
        .values()
        .flatten()
        .map(|t| t + QUIET_HEARD_MS)
        .filter(|&d| d > now)
        .min()?;
    let mut h = super::lock(hearing);
    if h.armed > now && h.armed <= due {
        return None;
    }
    h.armed = due;
    Some(due)
}
