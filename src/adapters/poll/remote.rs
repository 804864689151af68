//! The remote poller's half: another host's panes' processes, asked of that machine over
//! ssh in a task of its own (a slow answer never holds up the poll), kept between polls,
//! and its times moved onto this machine's clock by the skew its tmux server shows.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::{lock, Prober, SWEEP, YOUNG};
use crate::adapters::procs::local::SETTLE_MS;
use crate::adapters::procs::remote::{ask_procs, Asked, RemotePane};
use crate::adapters::procs::skew::{clock_skew, in_step, settle, shift_ms};
use crate::core::msg::Observation;
use crate::core::pane::{Listing, PaneId};

impl Prober {
    /// The panes' processes, as another host last told of them, by this machine's clock.
    /// `settle`: wait for the answer to a question asked now.
    pub(super) async fn remote_procs(
        &self,
        mut obs: Observation,
        listing: Listing,
        settle: bool,
    ) -> Observation {
        // Its processes are another machine's: nothing of this one's /proc is about
        // them. They are asked of that machine when a pane's process or current
        // command changes (see `remote_ask`).
        // Its times are by its clock: moved onto this machine's, so that a death there
        // is dated, a run there measured and an output dated as they are here.
        let skew = self.remote_skew().await;
        let mut trees = HashMap::new();
        if let Some(ask) = self.remote_ask(&listing) {
            if settle {
                ask.await;
            } else {
                tokio::spawn(ask);
            }
        }
        for (id, p, fresh) in self.remote_known(&listing) {
            if let Some(t) = p.start {
                obs.started.insert(id, shift_ms(t, skew));
            }
            if !p.comm.is_empty() {
                obs.comm.insert(id, p.comm.clone());
            }
            // The pane process's argv, once when it is read (it may name a session id
            // the start command does not), as for a pane here.
            if fresh && !p.tree.own.is_empty() {
                obs.foreground.insert(id, p.tree.own.clone());
            }
            let tree = if skew == 0 {
                Arc::clone(&p.tree)
            } else {
                let mut tree = (*p.tree).clone();
                for proc in &mut tree.below {
                    proc.start = proc.start.map(|t| shift_ms(t, skew));
                }
                Arc::new(tree)
            };
            trees.insert(id, tree);
        }
        obs.tree = Arc::new(trees);
        obs.listing = listing;
        // In whole seconds, as tmux gives them (the skew is whole seconds too).
        let secs = |t: u64| shift_ms(t.saturating_mul(1000), skew) / 1000;
        for p in &mut obs.listing.panes {
            p.dead_time = p.dead_time.map(secs);
        }
        for t in obs.activity.values_mut() {
            *t = secs(*t);
        }
        obs
    }

    /// Another host's live panes' processes: the pane process's name, start and argv, and
    /// the processes of its terminal's foreground group below it (an agent typed at a shell
    /// prompt there, or started by a wrapper), by that machine's clock, as last told. Asked
    /// there for the panes whose process or current command changed (again while their
    /// processes are too young to trust), and at the host's sweep for the shells' panes
    /// whose window had output, all in one ssh exec, in a task of its own: a slow answer
    /// never holds up the poll (and the death it would see); the answer wakes the loop.
    /// Unknown when it cannot be asked. The question, when one is to be asked now.
    fn remote_ask(
        &self,
        listing: &crate::core::pane::Listing,
    ) -> Option<impl std::future::Future<Output = ()> + Send + 'static> {
        let live: Vec<&crate::core::pane::Pane> = listing
            .panes
            .iter()
            .filter(|p| !p.dead && p.pid.is_some())
            .collect();
        let now = std::time::Instant::now();
        let mut state = lock(&self.remote);
        if state.server != listing.server_pid {
            // Another server there: its panes reuse the old ids (and, in a container, the
            // pids): nothing told of the old one stands, nor an answer about it under way.
            state.panes.clear();
            state.server = listing.server_pid;
        }
        let ids: HashSet<PaneId> = live.iter().map(|p| p.id).collect();
        state.panes.retain(|id, _| ids.contains(id));
        if !state.asking && !state.no_proc {
            // Once per sweep for the host, not per pane: shells' panes with output since,
            // and what did not answer, are asked together.
            let sweep = state.swept.is_none_or(|t| now.duration_since(t) >= SWEEP);
            let stale: Vec<Stated> = live
                .iter()
                .filter(|p| {
                    state.panes.get(&p.id).is_none_or(|k| {
                        let since = |t: Option<std::time::Instant>| {
                            t.map_or(std::time::Duration::MAX, |t| now.duration_since(t))
                        };
                        Some(k.pid) != p.pid
                            || k.current_command != p.current_command
                            // Too young to trust when told (it may still exec, or move to a
                            // group of its own): asked again a little later, while the
                            // pane's change is recent.
                            || (k.young
                                && since(k.asked_at).as_millis() >= u128::from(SETTLE_MS)
                                && since(k.changed_at) < YOUNG)
                            // The machine did not answer: asked again at the sweep.
                            || (k.unanswered && sweep)
                            // A shell's pane whose window had output since: a script typed
                            // at its prompt (or ended there) may leave the current command
                            // the shell's name.
                            || (sweep
                                && p.window_activity != k.activity
                                && crate::core::launcher::is_shell(&k.comm, &self.shells))
                    })
                })
                .filter_map(|p| {
                    Some(Stated {
                        id: p.id,
                        pid: p.pid?,
                        current_command: p.current_command.clone(),
                        activity: p.window_activity,
                    })
                })
                .collect();
            if let (false, crate::adapters::tmux::reach::Reach::Ssh(host)) =
                (stale.is_empty(), self.tmux.reach())
            {
                if sweep {
                    state.swept = Some(now);
                }
                let asking = Asking::start(&self.remote, &mut state);
                return Some(ask_and_tell(
                    host.clone(),
                    stale,
                    listing.server_pid,
                    Arc::clone(&self.remote),
                    Arc::clone(self.tmux.notices()),
                    asking,
                ));
            }
        }
        None
    }

    /// Another host's live panes' processes as last told, each with whether it was told
    /// since the last poll.
    fn remote_known(
        &self,
        listing: &crate::core::pane::Listing,
    ) -> Vec<(PaneId, RemotePane, bool)> {
        let mut state = lock(&self.remote);
        listing
            .panes
            .iter()
            .filter(|p| !p.dead && p.pid.is_some())
            .filter_map(|p| {
                // What was told of the pane's previous process is not about this one (a
                // respawn, or an answer still under way).
                let k = state
                    .panes
                    .get_mut(&p.id)
                    .filter(|k| Some(k.pid) == p.pid)?;
                let fresh = std::mem::take(&mut k.fresh);
                Some((p.id, k.clone(), fresh))
            })
            .collect()
    }

    /// How far the host's clock is ahead of this one's (ms, negative when behind), asked of
    /// its tmux server (`display-message -p %s`: its time, in whole seconds) over the
    /// control connection every few minutes. Within 2 s it is taken as none: a reading in
    /// whole seconds cannot tell that from the time the question took.
    async fn remote_skew(&self) -> i64 {
        const AGAIN: std::time::Duration = std::time::Duration::from_secs(300);
        /// After a question that got no answer: not asked at every poll meanwhile.
        const RETRY: std::time::Duration = std::time::Duration::from_secs(30);
        if let Some((at, skew)) = *lock(&self.skew) {
            if at.elapsed() < AGAIN {
                return in_step(skew);
            }
        }
        if lock(&self.skew_failed).is_some_and(|at| at.elapsed() < RETRY) {
            return lock(&self.skew).map_or(0, |(_, k)| in_step(k));
        }
        let before = crate::adapters::wall_ms();
        let asked = self.tmux.run(["display-message", "-p", "%s"]).await;
        let after = crate::adapters::wall_ms();
        let theirs = asked
            .ok()
            .and_then(|out| String::from_utf8_lossy(&out).trim().parse::<u64>().ok());
        let mut known = lock(&self.skew);
        match theirs {
            Some(secs) => {
                let was = known.map(|(_, k)| k);
                let settled = settle(was, clock_skew(secs, before, after), after - before);
                let skew = in_step(settled);
                if in_step(was.unwrap_or(0)) != skew {
                    if skew == 0 {
                        tracing::info!("host clock in step with this one's again");
                    } else {
                        tracing::warn!(
                            "host clock {} s {} this one's: its times are moved onto this clock",
                            skew.unsigned_abs() / 1000,
                            if skew > 0 { "ahead of" } else { "behind" }
                        );
                    }
                }
                *known = Some((std::time::Instant::now(), settled));
                *lock(&self.skew_failed) = None;
                skew
            }
            // Asked again after a while; until then, what was known.
            None => {
                *lock(&self.skew_failed) = Some(std::time::Instant::now());
                known.map_or(0, |(_, k)| in_step(k))
            }
        }
    }
}

/// What is known of another host's processes, and whether a question is under way.
#[derive(Default)]
pub(super) struct RemoteState {
    panes: HashMap<PaneId, RemotePane>,
    /// The server (its pid) they are about.
    server: Option<u32>,
    /// The last sweep of its shells' panes.
    swept: Option<std::time::Instant>,
    asking: bool,
    /// That host has no Linux `/proc`: its processes are not asked for again.
    no_proc: bool,
}

/// A question under way to another host: over however it ends (answered, dropped before
/// or while it runs, or a panic), so that a later poll may ask again.
struct Asking(Arc<Mutex<RemoteState>>);

impl Asking {
    /// Marks a question under way in `state` (already locked as `locked`).
    fn start(state: &Arc<Mutex<RemoteState>>, locked: &mut RemoteState) -> Asking {
        locked.asking = true;
        Asking(Arc::clone(state))
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        lock(&self.0).asking = false;
    }
}

/// A pane to ask about, as the poll saw it.
struct Stated {
    id: PaneId,
    pid: u32,
    current_command: String,
    activity: u64,
}

/// Asks `host` about the `stale` panes of its server `server` and keeps the answer in
/// `state` (unless that server is gone meanwhile); then wakes the loop.
async fn ask_and_tell(
    host: crate::adapters::tmux::reach::SshServer,
    stale: Vec<Stated>,
    server: Option<u32>,
    state: Arc<Mutex<RemoteState>>,
    notices: Arc<crate::adapters::tmux::control::Notices>,
    over: Asking,
) {
    let pids: Vec<u32> = stale.iter().map(|p| p.pid).collect();
    let mut found = ask_procs(&host, &pids).await;
    let now = std::time::Instant::now();
    drop(over);
    let mut state = lock(&state);
    if let Asked::NoProc = found {
        tracing::warn!(
            "{}: no Linux /proc there: its panes' processes stay unknown",
            host.dest
        );
        state.no_proc = true;
    }
    if state.server != server {
        return;
    }
    for p in stale {
        let prev = state.panes.get(&p.id).filter(|k| k.pid == p.pid);
        let changed = prev.is_none_or(|k| k.current_command != p.current_command);
        let read = match &mut found {
            Asked::Told(f) => f.pane(p.pid),
            // What was known of this process stands until it is answered for.
            Asked::Unanswered => RemotePane {
                unanswered: true,
                young: false,
                ..prev.cloned().unwrap_or_default()
            },
            Asked::NoProc => RemotePane::default(),
        };
        let changed_at = match prev {
            Some(k) if !changed => k.changed_at,
            _ => Some(now),
        };
        state.panes.insert(
            p.id,
            RemotePane {
                pid: p.pid,
                current_command: p.current_command,
                activity: p.activity,
                asked_at: Some(now),
                changed_at,
                fresh: true,
                ..read
            },
        );
    }
    drop(state);
    notices.wake.notify_one();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::tmux::client::Tmux;

    #[test]
    fn a_pane_is_never_told_what_was_asked_of_its_previous_process() {
        let tmux = Tmux::over_ssh(
            crate::adapters::tmux::reach::SshServer {
                dest: "box".into(),
                ssh_args: Vec::new(),
                tmux: "tmux".into(),
                socket_name: None,
                socket_path: None,
            },
            std::time::Duration::from_secs(1),
        );
        let prober = Prober::new(tmux);
        let pane = |pid: u32| crate::core::pane::Pane {
            id: PaneId(1),
            pid: Some(pid),
            ..Default::default()
        };
        lock(&prober.remote).panes.insert(
            PaneId(1),
            RemotePane {
                pid: 10,
                comm: "claude".into(),
                fresh: true,
                ..RemotePane::default()
            },
        );
        let listing = |pid: u32| crate::core::pane::Listing {
            panes: vec![pane(pid)],
            ..Default::default()
        };
        // Respawned (pid 11), its answer still under way: nothing, not the old claude.
        assert!(prober.remote_known(&listing(11)).is_empty());
        let told = prober.remote_known(&listing(10));
        assert_eq!(told.len(), 1);
        assert_eq!((told[0].1.comm.as_str(), told[0].2), ("claude", true));
        // Told once: the next poll has nothing new.
        assert!(!prober.remote_known(&listing(10))[0].2);
    }

    #[test]
    fn a_question_under_way_is_over_however_it_ends() {
        let state = Arc::new(Mutex::new(RemoteState::default()));
        let asking = Asking::start(&state, &mut lock(&state));
        assert!(lock(&state).asking);
        // A future dropped before it ran (or mid-way) drops its guard with it.
        drop(asking);
        assert!(!lock(&state).asking);
    }
}
