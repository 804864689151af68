//! The poller: what tmux says about the panes (asked as [`crate::adapters::mirror`] plans,
//! so that a quiet server of a thousand panes is asked one line a tick), then what the
//! panes' processes are. Two pollers share the question to tmux and part ways after it: on
//! this machine the processes are read from `/proc` ([`local`]); on another host they are
//! asked of that machine over ssh, and its times moved onto this clock ([`remote`]). What
//! wakes the loop between polls is in [`signals`]. Does I/O, decides nothing.

mod hear;
mod local;
mod remote;
mod signals;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::adapters::claude_state::ClaudeStates;
use crate::adapters::mirror::{Ask, Mirror};
use crate::adapters::procs::local::{boot_time_ms, ProcInfo};
use crate::adapters::procs::tree::Trees;
use crate::adapters::tmux::client::{Tmux, TmuxError};
use crate::adapters::tmux::format::parse_batch;
use crate::core::msg::Observation;
use crate::core::pane::PaneId;
use crate::core::time::Millis;

use remote::RemoteState;
use signals::Signs;

pub struct Prober {
    tmux: Tmux,
    boot_ms: Option<Millis>,
    ticks_per_sec: u64,
    /// Process start times and names by pid: neither changes for a pid's life.
    procs: Mutex<HashMap<u32, ProcInfo>>,
    /// Each live pane's foreground tree, and when the last full look at `/proc` was.
    trees: Mutex<Trees>,
    /// Programs that hand the terminal to jobs of their own (the configured shells).
    shells: Vec<String>,
    /// tmux's panes as last told, and what to ask next.
    mirror: Mutex<Mirror>,
    /// Signs of change between polls that tmux does not report.
    signs: Mutex<Signs>,
    /// The task that wakes the loop when a watched process ends, started with the first poll.
    waker: std::sync::OnceLock<()>,
    /// The last question to tmux failed.
    failing: std::sync::atomic::AtomicBool,
    /// claude's per-process state files.
    claude: Mutex<ClaudeStates>,
    /// Another host's panes' processes, as last told, and the question under way.
    remote: Arc<Mutex<RemoteState>>,
    /// How far another host's clock is ahead of this one's, and when that was measured.
    skew: Mutex<Option<(std::time::Instant, i64)>>,
    /// When the last clock question went unanswered.
    skew_failed: Mutex<Option<std::time::Instant>>,
    /// The core wants agents' output times often (see
    /// [`Heard::attending`](crate::adapters::mirror::Heard::attending)).
    attending: std::sync::atomic::AtomicBool,
    /// Which panes' output is heard as it happens (see [`hear`]).
    hearing: Arc<Mutex<hear::Hearing>>,
    /// What the last look handed over, to tell a look that found nothing new.
    handed: Mutex<Option<Handed>>,
    /// The panes' own processes as last gathered.
    pane_procs: Mutex<PaneProcs>,
    /// The OOM killer's count for the tmux server's cgroup when last read (`None`: not
    /// readable), once the baseline was read.
    oom: Mutex<Option<Option<u64>>>,
}

/// The names and starts of the panes' own processes as last gathered, and when.
#[derive(Default)]
struct PaneProcs {
    /// The mirror's count of what tmux told at the time.
    told: Option<u64>,
    /// A process then was young, read anew or a launcher (read every look): gathered again
    /// at the next look.
    restless: bool,
    comm: HashMap<PaneId, String>,
    started: HashMap<PaneId, Millis>,
}

/// What a look handed over, to be compared with the next: the mirror's count of what tmux
/// told, and the trees by address (the walker hands out the same map while none changed).
struct Handed {
    told: u64,
    tree: Arc<HashMap<PaneId, Arc<crate::core::pane::ProcTree>>>,
}

/// How often every pane's tree is looked at again, changed or not: an agent started later
/// by a wrapper that keeps its process group (`bash -c 'sleep 5; claude'`) shows no other
/// sign.
const SWEEP: std::time::Duration = std::time::Duration::from_secs(10);
/// How long after its tree last changed a pane is looked at again when a process starts
/// below it (a launcher downloading its agent, a wrapper about to start one); after that a
/// new process shows at the next sweep, or sooner when one of the pane's processes ends.
const YOUNG: std::time::Duration = std::time::Duration::from_secs(30);

impl Prober {
    pub fn new(tmux: Tmux) -> Prober {
        // SAFETY: sysconf has no preconditions.
        let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        Prober {
            tmux,
            boot_ms: boot_time_ms(),
            ticks_per_sec: u64::try_from(tck).ok().filter(|&t| t > 0).unwrap_or(100),
            procs: Mutex::new(HashMap::new()),
            trees: Mutex::new(Trees::default()),
            shells: crate::config::Config::default().shells,
            mirror: Mutex::new(Mirror::default()),
            signs: Mutex::new(Signs::default()),
            waker: std::sync::OnceLock::new(),
            failing: std::sync::atomic::AtomicBool::new(false),
            claude: Mutex::new(ClaudeStates::new(None)),
            remote: Arc::new(Mutex::new(RemoteState::default())),
            skew: Mutex::new(None),
            skew_failed: Mutex::new(None),
            attending: std::sync::atomic::AtomicBool::new(true),
            hearing: Arc::new(Mutex::new(hear::Hearing::default())),
            handed: Mutex::new(None),
            pane_procs: Mutex::new(PaneProcs::default()),
            oom: Mutex::new(None),
        }
    }

    /// Whether the kernel's OOM killer killed a process in the tmux server's cgroup (where
    /// the agents run) since the last call, or the first look; false where it cannot be read
    /// (another host, cgroup v1). Read when a death's cause is decided.
    pub fn oom_killed(&self) -> bool {
        let Some(pid) = self.server_pid().filter(|_| !self.is_remote()) else {
            return false;
        };
        let now = crate::adapters::procs::oom::oom_kills(pid);
        let mut seen = lock(&self.oom);
        let risen = matches!((*seen, now), (Some(Some(before)), Some(n)) if n > before);
        *seen = Some(now);
        risen
    }

    fn server_pid(&self) -> Option<u32> {
        lock(&self.mirror).server_pid()
    }

    /// The OOM killer's count as the baseline, once the server's pid is known.
    fn note_oom_baseline(&self) {
        if self.is_remote() || lock(&self.oom).is_some() {
            return;
        }
        if let Some(pid) = self.server_pid() {
            *lock(&self.oom) = Some(crate::adapters::procs::oom::oom_kills(pid));
        }
    }

    /// The shells, as configured: only a pane whose process is one (or that runs processes
    /// of its own) can get a new foreground job without tmux noticing, so only those are
    /// swept.
    pub fn with_shells(mut self, shells: &[String]) -> Prober {
        self.shells = shells.to_vec();
        self
    }

    /// claude's folder, where its per-process state files are (else `$CLAUDE_CONFIG_DIR`,
    /// else `~/.claude`): a test's own.
    pub fn with_claude_dir(self, dir: std::path::PathBuf) -> Prober {
        *lock(&self.claude) = ClaudeStates::new(Some(dir));
        self
    }

    pub fn tmux(&self) -> &Tmux {
        &self.tmux
    }

    /// Whether agents' output times are wanted every 2 s (some agent that is not heard works
    /// or waits), or every 10 s will do; and which panes' output to hear as it happens.
    pub fn attend(&self, often: bool, hear: &[PaneId]) {
        self.attending
            .store(often, std::sync::atomic::Ordering::SeqCst);
        lock(&self.hearing).want(hear);
    }

    /// Options agentwatch wrote to panes: known from now on without asking tmux.
    pub fn wrote(&self, sets: &[(PaneId, String, String)]) {
        lock(&self.mirror).wrote(sets);
    }

    /// One look at every pane, as of now.
    /// For a one-shot look (`status`): another host's processes are asked and waited for,
    /// not left to a later poll.
    pub async fn observe(&self) -> Result<Observation, TmuxError> {
        self.observe_with(&[], true, true).await
    }

    /// One poll. `hot`: panes the core wants read whole this time (cards on screen, deaths
    /// being handled); the others are read whole when something says they changed.
    /// `whole`: the panes are handed over even if nothing changed since the last look
    /// (else such a look is [`Observation::same`], with no panes).
    pub async fn observe_hot(&self, hot: &[PaneId], whole: bool) -> Result<Observation, TmuxError> {
        self.observe_with(hot, false, whole).await
    }

    /// tmux is asked alike wherever its server is; then the panes' processes are read from
    /// this machine's `/proc` ([`Self::local_procs`]) or asked of another host
    /// ([`Self::remote_procs`]).
    /// `settle`: wait for the answer about another host's processes asked by this poll.
    async fn observe_with(
        &self,
        hot: &[PaneId],
        settle: bool,
        whole: bool,
    ) -> Result<Observation, TmuxError> {
        let remote = self.is_remote();
        if !remote {
            self.start_waker();
        }
        let now = std::time::Instant::now();
        let heard = if remote {
            self.heard_remote()
        } else {
            self.heard()
        };
        self.note_oom_baseline();
        let mut ask = lock(&self.mirror).ask(now, &heard, hot);
        // After a failure every poll asks, until tmux answers again: a quiet poll must not
        // say from memory that a server is there.
        ask.head |= self.failing.load(std::sync::atomic::Ordering::SeqCst);
        // Nothing to ask (a quiet poll): the server is not woken at all.
        let out = if ask.is_empty() {
            Vec::new()
        } else {
            let r = self.tmux.ask(&ask.commands()).await;
            self.failing
                .store(r.is_err(), std::sync::atomic::Ordering::SeqCst);
            r?
        };
        let more = lock(&self.mirror).take(&ask, parse_batch(&out), now);
        if ask.brief || ask.full {
            let panes = lock(&self.mirror).panes();
            self.tmux.forget_gone_verdicts(&panes, ask.full).await;
        }
        if !remote {
            self.first_children();
        }
        let more_ids = more.clone();
        if !more.is_empty() {
            let ask = Ask {
                fetch: more,
                ..Ask::default()
            };
            let out = self.tmux.ask(&ask.commands()).await?;
            lock(&self.mirror).take_more(&ask.fetch, parse_batch(&out));
        }
        let (panes, head, told) = {
            let mut mirror = lock(&self.mirror);
            // A death tmux has not caught up with, or whose status it lost: look again soon,
            // whatever the tick.
            if let Some(after) = mirror.look_again_in() {
                let notices = Arc::clone(self.tmux.notices());
                tokio::spawn(async move {
                    tokio::time::sleep(after).await;
                    notices.wake.notify_one();
                });
            }
            (mirror.panes(), mirror.head(), mirror.told())
        };
        // When each live pane's window last had output, where read this poll (all of them
        // with a brief or full listing, else those read whole): no news is no news. The core
        // knows which are agents (a one-shot `status` sees panes never marked as such).
        let fresh =
            |id: &PaneId| ask.brief || ask.full || ask.fetch.contains(id) || more_ids.contains(id);
        // Panes heard as they write (this server's only: another host's output would come
        // over ssh), and a wake-up for when the last of them to write will have stopped.
        let hearing = if remote {
            hear::HeardPanes::default()
        } else {
            // The processes below each pane as the last walk found them: its writers are
            // looked for among those, not walked for again (with no lock held).
            let todo = {
                let trees = lock(&self.trees);
                hear::changed(&self.hearing, &panes, |id, pid| {
                    let tree = trees.by_pane.get(&id).filter(|t| t.pane_pid == pid)?;
                    Some(&tree.procs.below[..])
                })
            };
            hear::count(&self.tmux, &self.hearing, todo);
            let young = |p: &crate::core::pane::Pane| {
                p.pid
                    .and_then(|pid| crate::adapters::procs::local::age(pid, self.ticks_per_sec))
                    .is_some_and(|age| age < hear::HEAR_AFTER)
            };
            hear::heard(&self.tmux, &self.hearing, &panes, young).await
        };
        let now_ms = lock(&self.hearing).now_ms();
        if let Some(at) = hear::wake_at(&self.hearing, &hearing, now_ms) {
            let notices = Arc::clone(self.tmux.notices());
            let after = at.saturating_sub(now_ms) + 5;
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(after)).await;
                notices.heard.notify_one();
            });
        }
        let obs = Observation {
            activity: panes
                .iter()
                .filter(|p| !p.dead && fresh(&p.id) && !hearing.last.contains_key(&p.id))
                .map(|p| (p.id, p.window_activity))
                .collect(),
            heard: hearing.last,
            stopped: hearing.stopped,
            ..Observation::default()
        };
        if remote {
            let listing = crate::core::pane::Listing {
                panes: panes.to_vec(),
                ..head
            };
            return Ok(self.remote_procs(obs, listing, settle).await);
        }
        let mut obs = self.local_procs(obs, &panes, told, &heard.ended, now);
        // Nothing new since the last look: nothing told of the panes but what agentwatch
        // wrote (its core knows), no process read anew, the same trees and no orphan. The
        // core's cards stand; it hears only output and files.
        let mut handed = lock(&self.handed);
        // How many answers of tmux may have changed panes since the last look, when nothing
        // else did (the same trees, no orphan).
        let told_since = handed
            .as_ref()
            .filter(|h| !whole && obs.orphans.is_empty() && Arc::ptr_eq(&h.tree, &obs.tree))
            .map(|h| told.saturating_sub(h.told));
        let same = told_since == Some(0) && obs.foreground.is_empty();
        // Only the panes read whole may have changed (the cards on screen once a second, the
        // deaths being handled): nothing else told since the last look (one answer, and
        // neither listing), every one of them still there, no other process read anew, the
        // same trees. The core makes only their cards anew.
        let fetched: std::collections::HashSet<PaneId> = ask.fetch.iter().copied().collect();
        let only: Vec<crate::core::pane::Pane> = if told_since == Some(1)
            && !ask.full
            && !ask.brief
            && more_ids.is_empty()
            && obs.foreground.keys().all(|id| fetched.contains(id))
        {
            panes
                .iter()
                .filter(|p| fetched.contains(&p.id))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        let partial = !only.is_empty() && only.len() == fetched.len();
        obs.listing = if same {
            obs.same = true;
            obs.comm.clear();
            obs.started.clear();
            head
        } else if partial {
            obs.partial = true;
            self.fill_procs(&mut obs);
            crate::core::pane::Listing {
                panes: only,
                ..head
            }
        } else {
            self.fill_procs(&mut obs);
            crate::core::pane::Listing {
                panes: panes.to_vec(),
                ..head
            }
        };
        *handed = Some(Handed {
            told,
            tree: Arc::clone(&obs.tree),
        });
        Ok(obs)
    }

    /// The server is on another host (reached over ssh).
    pub fn is_remote(&self) -> bool {
        !matches!(
            self.tmux.reach(),
            crate::adapters::tmux::reach::Reach::Local
        )
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
