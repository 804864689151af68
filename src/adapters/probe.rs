//! The poller: what tmux says about the panes (asked as [`crate::adapters::mirror`] plans,
//! so that a quiet server of a thousand panes is asked one line a tick), then what `/proc`
//! says about their processes (start times, names, argv, and each pane's foreground process
//! tree, where a wrapper or a shell runs the agent). The kernel tells of ended processes
//! through pidfds and the control connection of new windows, and both wake the loop at
//! once. Does I/O, decides nothing.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use crate::adapters::claude_state::ClaudeStates;
use crate::adapters::exits::ExitWatch;
use crate::adapters::mirror::{Ask, Heard, Mirror};
use crate::adapters::tmux::client::{Tmux, TmuxError};
use crate::adapters::tmux::format::parse_batch;
use crate::core::agent::{is_launcher, program_name};
use crate::core::msg::Observation;
use crate::core::pane::{PaneId, Proc, ProcTree};
use crate::core::time::Millis;

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
    /// The core wants agents' output times often (see [`Heard::attending`]).
    attending: std::sync::atomic::AtomicBool,
}

/// What the poller watches between polls, besides tmux.
#[derive(Default)]
struct Signs {
    /// The tmux server's children at the last look: a new one is a new pane (or a respawn,
    /// or a job of the server's), in any session.
    children: Option<HashSet<u32>>,
    /// The server they are the children of.
    server: Option<u32>,
    /// The newest pid on the machine at the last look: unchanged, nothing was started.
    newest: Option<u64>,
    /// Panes whose own process is a shell: its pid and its terminal's foreground group as
    /// last read. A command typed at the prompt changes the group and nothing tmux reports.
    shells: HashMap<PaneId, (u32, Option<u32>)>,
}

/// How often every pane's tree is looked at again, changed or not: an agent started later
/// by a wrapper that keeps its process group (`bash -c 'sleep 5; claude'`) shows no other
/// sign.
const SWEEP: std::time::Duration = std::time::Duration::from_secs(10);
/// How long after its tree last changed a pane is looked at again when a process starts
/// below it (a launcher downloading its agent, a wrapper about to start one); after that a
/// new process shows at the next sweep, or sooner when one of the pane's processes ends.
const YOUNG: std::time::Duration = std::time::Duration::from_secs(30);
/// A tree deeper or larger than this is cut: a pane's agent is near its top.
const TREE_DEPTH: usize = 6;
const TREE_PROCS: usize = 64;

#[derive(Default)]
struct Trees {
    by_pane: HashMap<PaneId, Tree>,
    swept: Option<std::time::Instant>,
    table: ProcTable,
    /// The newest pid at the last look (`/proc/loadavg`).
    newest: Option<u64>,
    /// The processes below the panes' own, whose end means a pane's tree changed.
    exits: ExitWatch,
    /// The trees as last handed out.
    shared: TreeMap,
}

/// Each live pane's foreground tree, shared with the core without a copy.
pub type TreeMap = Arc<HashMap<PaneId, Arc<ProcTree>>>;

/// A pane to look at again this tick.
#[derive(Clone, Copy)]
struct Stale<'a> {
    id: PaneId,
    pid: u32,
    current_command: &'a str,
    /// Its process or current command changed: its own argv is read again.
    changed: bool,
}

struct Tree {
    pane_pid: u32,
    current_command: String,
    /// The terminal's foreground process group, as last read.
    fg: Option<u32>,
    /// When the processes in it last changed.
    changed_at: std::time::Instant,
    /// A process in it is so young that it may still exec or change its group: look again.
    unsettled: bool,
    procs: Arc<ProcTree>,
}

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
        }
    }

    /// The shells, as configured: only a pane whose process is one (or that runs processes
    /// of its own) can get a new foreground job without tmux noticing, so only those are
    /// swept.
    pub fn with_shells(mut self, shells: &[String]) -> Prober {
        self.shells = shells.to_vec();
        self
    }

    pub fn tmux(&self) -> &Tmux {
        &self.tmux
    }

    /// Whether agents' output times are wanted every 2 s (some agent works or waits), or
    /// every 10 s will do.
    pub fn attend(&self, often: bool) {
        self.attending
            .store(often, std::sync::atomic::Ordering::SeqCst);
    }

    /// Options agentwatch wrote to panes: known from now on without asking tmux.
    pub fn wrote(&self, sets: &[(PaneId, String, String)]) {
        lock(&self.mirror).wrote(sets);
    }

    /// One look at every pane, as of now.
    /// For a one-shot look (`status`): another host's processes are asked and waited for,
    /// not left to a later poll.
    pub async fn observe(&self) -> Result<Observation, TmuxError> {
        self.observe_with(&[], true).await
    }

    /// One poll. `hot`: panes the core wants read whole this time (cards on screen, deaths
    /// being handled); the others are read whole when something says they changed.
    pub async fn observe_hot(&self, hot: &[PaneId]) -> Result<Observation, TmuxError> {
        self.observe_with(hot, false).await
    }

    /// `settle`: wait for the answer about another host's processes asked by this poll.
    async fn observe_with(&self, hot: &[PaneId], settle: bool) -> Result<Observation, TmuxError> {
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
        let more_ids = more.clone();
        if !more.is_empty() {
            let ask = Ask {
                fetch: more,
                ..Ask::default()
            };
            let out = self.tmux.ask(&ask.commands()).await?;
            lock(&self.mirror).take_more(&ask.fetch, parse_batch(&out));
        }
        let listing = {
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
            mirror.listing()
        };
        // When each live pane's window last had output, where read this poll (all of them
        // with a brief or full listing, else those read whole): no news is no news. The core
        // knows which are agents (a one-shot `status` sees panes never marked as such).
        let fresh =
            |id: &PaneId| ask.brief || ask.full || ask.fetch.contains(id) || more_ids.contains(id);
        let mut obs = Observation {
            activity: listing
                .panes
                .iter()
                .filter(|p| !p.dead && fresh(&p.id))
                .map(|p| (p.id, p.window_activity))
                .collect(),
            ..Observation::default()
        };
        if remote {
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
            return Ok(obs);
        }
        let mut cache = self.procs.lock().unwrap_or_else(|e| e.into_inner());
        let mut seen = std::collections::HashSet::new();
        for pane in &listing.panes {
            let (false, Some(pid)) = (pane.dead, pane.pid) else {
                continue;
            };
            seen.insert(pid);
            let new_process = !cache.contains_key(&pid);
            let Some(info) = self.info(&mut cache, pid) else {
                continue;
            };
            obs.comm.insert(pane.id, info.comm.clone());
            let launcher = is_launcher(program_name(&pane.current_command));
            if launcher || new_process {
                // A launcher's script is read every poll (it names the agent); any other
                // pane process once, when it is new (its argv may name a session id that
                // the start command does not, as after `exec claude --session-id X`, and
                // says whether a shell is interactive).
                if let Some(argv) = read_cmdline(pid) {
                    obs.foreground.insert(pane.id, argv);
                }
            }
            if let Some(t) = info.start {
                obs.started.insert(pane.id, t);
            }
        }
        cache.retain(|pid, _| seen.contains(pid));
        drop(cache);
        self.note_shells(&listing.panes, &obs.comm);
        obs.tree = self.trees(&listing.panes, &obs.comm, &heard.ended);
        obs.listing = listing;
        obs.agent_files = self.agent_files(now);
        Ok(obs)
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
        let before = super::wall_ms();
        let asked = self.tmux.run(["display-message", "-p", "%s"]).await;
        let after = super::wall_ms();
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

    /// The server is on another host (reached over ssh).
    pub fn is_remote(&self) -> bool {
        !matches!(
            self.tmux.reach(),
            crate::adapters::tmux::reach::Reach::Local
        )
    }

    /// What the control connection to another host's server heard since the last poll:
    /// all there is to hear of it (its processes are not this machine's).
    fn heard_remote(&self) -> Heard {
        Heard {
            // No kernel here tells of its processes' ends: its panes are listed briefly
            // every 2 s (whatever its agents do), so a death there is seen within that.
            watched: false,
            ..self.notices_heard()
        }
    }

    /// What the control connection heard since the last poll: the server's shape or names
    /// changed.
    fn notices_heard(&self) -> Heard {
        let notices = self.tmux.notices();
        Heard {
            shape: notices
                .shape
                .swap(false, std::sync::atomic::Ordering::SeqCst),
            names: notices
                .names
                .swap(false, std::sync::atomic::Ordering::SeqCst),
            ..Heard::default()
        }
    }

    /// What changed since the last poll without tmux answering a question: processes that
    /// ended, new children of the server, notices on the control connection, a shell's
    /// foreground job.
    fn heard(&self) -> Heard {
        let notices = self.tmux.notices();
        let mut heard = self.notices_heard();
        {
            let mut trees = lock(&self.trees);
            heard.ended = trees.exits.ended();
            if !heard.ended.is_empty() {
                heard.touched.extend(
                    trees
                        .by_pane
                        .iter()
                        .filter(|(_, t)| t.procs.below.iter().any(|p| heard.ended.contains(&p.pid)))
                        .map(|(id, _)| *id),
                );
            }
        }
        let server = lock(&self.mirror).server_pid();
        let mut signs = lock(&self.signs);
        // Nothing started on the machine since the last look: no new pane, no new job.
        let newest = last_pid();
        let born = newest.is_none() || newest != signs.newest;
        signs.newest = newest;
        if born || server != signs.server {
            signs.server = server;
            let kids = server.and_then(server_children);
            heard.shape |= match (&kids, &signs.children) {
                (Some(kids), Some(old)) => kids.iter().any(|k| !old.contains(k)),
                _ => false,
            };
            signs.children = kids;
        }
        // A pane whose process ends before the server's children are read leaves no trace
        // there: only the control connection's notice of its window tells of it.
        heard.attending = self.attending.load(std::sync::atomic::Ordering::SeqCst);
        heard.watched = signs.children.is_some()
            && notices.listening.load(std::sync::atomic::Ordering::SeqCst)
            && lock(&self.trees).exits.epoll_fd().is_some();
        // A process started somewhere: a shell may have a new foreground job.
        if born {
            for (id, (pid, fg)) in signs.shells.iter_mut() {
                let now_fg = foreground_group(*pid);
                if now_fg != *fg {
                    *fg = now_fg;
                    heard.touched.push(*id);
                }
            }
        }
        heard
    }

    /// Keeps the list of panes whose own process is a shell, with their foreground group.
    fn note_shells(&self, panes: &[crate::core::pane::Pane], comm: &HashMap<PaneId, String>) {
        let mut signs = lock(&self.signs);
        let old = std::mem::take(&mut signs.shells);
        // One pass: a shell pane keeps its foreground group as last read while its process
        // stays the same; a new one has it read now.
        signs.shells = panes
            .iter()
            .filter(|p| !p.dead)
            .filter_map(|p| {
                let (pid, c) = (p.pid?, comm.get(&p.id)?);
                if !crate::core::launcher::is_shell(c, &self.shells) {
                    return None;
                }
                let fg = match old.get(&p.id) {
                    Some(&(was, fg)) if was == pid => fg,
                    _ => foreground_group(pid),
                };
                Some((p.id, (pid, fg)))
            })
            .collect();
    }

    /// The agents' own state files; once they are watched, a write wakes the loop.
    fn agent_files(
        &self,
        now: std::time::Instant,
    ) -> Arc<HashMap<u32, crate::core::attention::AgentFile>> {
        let mut claude = lock(&self.claude);
        let files = claude.current(now);
        if !claude.waking {
            let fd = claude.fd().and_then(|fd| fd.try_clone_to_owned().ok());
            if let (Some(fd), Ok(_)) = (fd, tokio::runtime::Handle::try_current()) {
                claude.waking = true;
                wake_on_readable(fd, Arc::clone(self.tmux.notices()));
            }
        }
        files
    }

    /// Starts, once, the task that wakes the loop when a watched process ends.
    fn start_waker(&self) {
        self.waker.get_or_init(|| {
            let fd = lock(&self.trees)
                .exits
                .epoll_fd()
                .and_then(|fd| fd.try_clone_to_owned().ok());
            let (Some(fd), Ok(_)) = (fd, tokio::runtime::Handle::try_current()) else {
                return;
            };
            wake_on_readable(fd, Arc::clone(self.tmux.notices()));
        });
    }

    /// The foreground tree of every live pane: looked at again for panes whose process or
    /// current command changed, for panes with processes below their own when a process
    /// started or one of theirs ended, and on a slow sweep; one pass over `/proc` serves
    /// every pane that needs it, and reads only the processes it has not read before. When
    /// nothing changed, the map of the last look is handed out again, not rebuilt.
    fn trees(
        &self,
        panes: &[crate::core::pane::Pane],
        comm: &HashMap<PaneId, String>,
        gone: &HashSet<u32>,
    ) -> TreeMap {
        let mut trees = lock(&self.trees);
        let now = std::time::Instant::now();
        let sweep = trees.swept.is_none_or(|t| now.duration_since(t) >= SWEEP);
        if sweep {
            trees.swept = Some(now);
        }
        // A changed pane's own process is read again; a swept one that did not change keeps
        // its argv and has its foreground group read again; a busy one keeps both.
        let mut stale: Vec<Stale> = Vec::new();
        // Panes with processes below their own (a wrapper's agent, a shell's job, an
        // `npm exec` that will start one): their children come and go without tmux
        // noticing. Looked at again when one of their processes ended, or while their tree
        // is young when a process started on the machine below them.
        let mut busy: Vec<Stale> = Vec::new();
        for &pid in gone {
            if let Some(k) = trees.table.known.get_mut(&pid) {
                k.ended = true;
            }
        }
        let mut live = 0;
        for p in panes.iter().filter(|p| !p.dead) {
            let Some(pid) = p.pid else { continue };
            live += 1;
            let known = trees.by_pane.get(&p.id);
            let changed =
                known.is_none_or(|t| t.pane_pid != pid || t.current_command != p.current_command);
            // Swept: a shell (a script typed at its prompt leaves the current command the
            // shell's name) or a pane with processes below its own. A pane whose process is
            // the agent itself, with nothing below, has nothing to find.
            let swept = sweep
                && (known
                    .is_some_and(|t| !t.procs.below.is_empty() || !t.procs.background.is_empty())
                    || comm
                        .get(&p.id)
                        .is_some_and(|c| crate::core::launcher::is_shell(c, &self.shells)));
            let look = Stale {
                id: p.id,
                pid,
                current_command: &p.current_command,
                changed,
            };
            if changed || swept || known.is_some_and(|t| t.unsettled) {
                stale.push(look);
            } else if let Some(t) = known.filter(|t| !t.procs.below.is_empty()) {
                if t.procs.below.iter().any(|p| gone.contains(&p.pid)) {
                    stale.push(look);
                } else if now.duration_since(t.changed_at) < YOUNG {
                    busy.push(look);
                }
            }
        }
        // The newest pid on the machine: unchanged, no process was started since.
        let born = !busy.is_empty() && {
            let newest = last_pid();
            let born = newest.is_none() || newest != trees.newest;
            trees.newest = newest;
            born
        };
        if stale.is_empty() && !born && live == trees.by_pane.len() {
            // The same panes, none changed: the same trees.
            return Arc::clone(&trees.shared);
        }
        if !stale.is_empty() || born {
            self.walk(&mut trees, stale, &busy, sweep, now);
        }
        let ids: std::collections::HashSet<PaneId> = panes
            .iter()
            .filter(|p| !p.dead && p.pid.is_some())
            .map(|p| p.id)
            .collect();
        trees.by_pane.retain(|id, _| ids.contains(id));
        // The panes' own processes and those below them: the kernel says when one ends.
        let watched: HashSet<u32> = trees
            .by_pane
            .values()
            .flat_map(|t| t.procs.below.iter().map(|p| p.pid))
            .chain(panes.iter().filter(|p| !p.dead).filter_map(|p| p.pid))
            .collect();
        trees.exits.set(&watched);
        trees.shared = Arc::new(
            trees
                .by_pane
                .iter()
                .map(|(id, t)| (*id, Arc::clone(&t.procs)))
                .collect(),
        );
        Arc::clone(&trees.shared)
    }

    /// One pass over `/proc`, then the trees of the `stale` panes, and of the `busy` ones a
    /// new process started below, walked again.
    fn walk<'a>(
        &self,
        trees: &mut Trees,
        mut stale: Vec<Stale<'a>>,
        busy: &[Stale<'a>],
        sweep: bool,
        now: std::time::Instant,
    ) {
        let Trees { by_pane, table, .. } = trees;
        let new = table.refresh(self.boot_ms, self.ticks_per_sec);
        // Every ancestor of a new process: a busy pane whose process is one of them has a
        // new process below it.
        let mut above = std::collections::HashSet::new();
        for pid in new {
            let mut p = pid;
            for _ in 0..TREE_DEPTH + 2 {
                match table.known.get(&p).map(|k| k.st.ppid) {
                    Some(pp) if pp > 1 && above.insert(pp) => p = pp,
                    _ => break,
                }
            }
        }
        stale.extend(busy.iter().filter(|b| above.contains(&b.pid)).copied());
        for look in &stale {
            let (id, pid, changed) = (look.id, look.pid, look.changed);
            let old = by_pane.get(&id).filter(|t| t.pane_pid == pid);
            let (own, fg) = match old {
                // Swept: the argv stands, the foreground group is read again (a script
                // typed at a prompt leaves the current command `bash`).
                Some(t) if !changed && sweep => (
                    t.procs.own.clone(),
                    read_stat(pid).and_then(|s| s.tpgid).or(t.fg),
                ),
                Some(t) if !changed => (t.procs.own.clone(), t.fg),
                _ => (
                    read_cmdline(pid).unwrap_or_default(),
                    read_stat(pid).and_then(|s| s.tpgid),
                ),
            };
            let (below, unsettled) = table.foreground_tree(pid, fg);
            let background = table.background_children(pid, fg);
            let same = old.is_some_and(|t| {
                t.procs.below.len() == below.len()
                    && t.procs
                        .below
                        .iter()
                        .zip(&below)
                        .all(|(a, b)| a.pid == b.pid)
            });
            let changed_at = match old {
                Some(t) if same => t.changed_at,
                _ => now,
            };
            by_pane.insert(
                id,
                Tree {
                    pane_pid: pid,
                    current_command: look.current_command.to_string(),
                    fg,
                    changed_at,
                    unsettled,
                    procs: Arc::new(ProcTree {
                        own,
                        below,
                        background,
                    }),
                },
            );
        }
    }

    /// Start time and name of a process, cached by pid (neither changes for a pid's life).
    fn info(&self, cache: &mut HashMap<u32, ProcInfo>, pid: u32) -> Option<ProcInfo> {
        if let Some(i) = cache.get(&pid) {
            return Some(i.clone());
        }
        let st = read_stat(pid)?;
        let info = ProcInfo {
            start: self
                .boot_ms
                .map(|boot| boot + st.start_ticks * 1000 / self.ticks_per_sec),
            comm: st.comm,
        };
        cache.insert(pid, info.clone());
        Some(info)
    }
}

/// A task that wakes the loop each time `fd` (a duplicate of ours: the epoll set of ended
/// processes, or the inotify watch of state files) becomes readable; the poll reads it.
fn wake_on_readable(
    fd: std::os::fd::OwnedFd,
    notices: Arc<crate::adapters::tmux::control::Notices>,
) {
    // SAFETY: `fd` is a descriptor of our own (a duplicate), moved into the AsyncFd, which
    // alone closes it.
    let registered = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
    };
    let Ok(afd) = registered else {
        return;
    };
    tokio::spawn(async move {
        loop {
            let Ok(mut ready) = afd.readable().await else {
                return;
            };
            ready.clear_ready();
            notices.wake.notify_one();
        }
    });
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The children of the tmux server's process (`/proc/PID/task/PID/children`): one read, a
/// few kilobytes for a thousand panes. `None` where the kernel does not offer it.
fn server_children(server: u32) -> Option<HashSet<u32>> {
    let text = std::fs::read_to_string(format!("/proc/{server}/task/{server}/children")).ok()?;
    Some(
        text.split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect(),
    )
}

/// The most recently started pid on the machine: the last field of `/proc/loadavg`.
fn last_pid() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().nth(4)?.parse().ok()
}

/// How long after its start a process may still exec or move to its own process group (a
/// shell's job does, right after fork): until then what was read of it is read again.
const SETTLE_MS: Millis = 2_000;

/// Every process's parent, process group, name and argv, kept between passes: a pass over
/// `/proc` lists the pids (one directory read) and reads only those it does not know yet,
/// or knew too young.
#[derive(Default)]
struct ProcTable {
    pass: u64,
    known: HashMap<u32, Known>,
    children: HashMap<u32, Vec<u32>>,
}

struct Known {
    /// The pass over `/proc` that last saw it.
    pass: u64,
    st: Stat,
    start_ms: Option<Millis>,
    settled: bool,
    /// It ended (the exit watch said so) and may linger as a zombie until reaped: no
    /// longer part of any tree.
    ended: bool,
    argv: Option<Vec<String>>,
}

impl ProcTable {
    /// Reads what is new in `/proc`; returns the pids it had not seen before.
    fn refresh(&mut self, boot_ms: Option<Millis>, tck: u64) -> Vec<u32> {
        let mut new = Vec::new();
        let now_ms = super::wall_ms();
        self.pass = self.pass.wrapping_add(1);
        let pass = self.pass;
        let before = self.known.len();
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                let Some(pid) = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.parse::<u32>().ok())
                else {
                    continue;
                };
                if let Some(k) = self.known.get_mut(&pid).filter(|k| k.settled) {
                    k.pass = pass;
                    continue;
                }
                let Some(st) = read_stat(pid) else {
                    self.known.remove(&pid);
                    continue;
                };
                if !self.known.contains_key(&pid) {
                    new.push(pid);
                }
                let start_ms = boot_ms.map(|b| b + st.start_ticks * 1000 / tck);
                // A pid reused since, or read again while young: its argv is read again too.
                let prev = self
                    .known
                    .remove(&pid)
                    .filter(|k| k.st.start_ticks == st.start_ticks);
                let ended = prev.as_ref().is_some_and(|k| k.ended);
                let argv = prev.filter(|k| k.settled).and_then(|k| k.argv);
                self.known.insert(
                    pid,
                    Known {
                        ended,
                        settled: start_ms.is_some_and(|s| now_ms.saturating_sub(s) > SETTLE_MS),
                        pass,
                        st,
                        start_ms,
                        argv,
                    },
                );
            }
        }
        self.known.retain(|_, k| k.pass == pass);
        // The same processes as before (nothing new, nothing gone): the map stands.
        if new.is_empty() && self.known.len() == before {
            return new;
        }
        self.index_children();
        new
    }

    /// Each known process's children, in pid order, from the parents they name.
    fn index_children(&mut self) {
        self.children.clear();
        for (&pid, k) in &self.known {
            self.children.entry(k.st.ppid).or_default().push(pid);
        }
        for kids in self.children.values_mut() {
            kids.sort_unstable();
        }
    }

    /// The children of `root` outside its terminal's foreground process group.
    fn background_children(&self, root: u32, fg: Option<u32>) -> Vec<u32> {
        self.children
            .get(&root)
            .into_iter()
            .flatten()
            .filter(|kid| self.known.get(kid).is_some_and(|k| Some(k.st.pgrp) != fg))
            .copied()
            .collect()
    }

    /// The descendants of `root` in its terminal's foreground process group `fg`, breadth
    /// first, with their argv; and whether one of them is still too young to trust.
    fn foreground_tree(&mut self, root: u32, fg: Option<u32>) -> (Vec<Proc>, bool) {
        let Some(fg) = fg else {
            return (Vec::new(), false);
        };
        let mut out = Vec::new();
        let mut unsettled = false;
        let mut level = vec![root];
        'walk: for _ in 0..TREE_DEPTH {
            let mut next = Vec::new();
            for pid in level {
                let kids = self.children.get(&pid).cloned().unwrap_or_default();
                for kid in kids {
                    let Some(k) = self.known.get_mut(&kid) else {
                        continue;
                    };
                    // Background jobs (and their children) are not the pane's foreground;
                    // an ended process is not there any more.
                    if k.st.pgrp != fg || k.ended {
                        continue;
                    }
                    if out.len() >= TREE_PROCS {
                        break 'walk;
                    }
                    unsettled |= !k.settled;
                    let argv = k
                        .argv
                        .get_or_insert_with(|| read_cmdline(kid).unwrap_or_default())
                        .clone();
                    out.push(Proc {
                        pid: kid,
                        ppid: pid,
                        comm: k.st.comm.clone(),
                        argv,
                        start: k.start_ms,
                    });
                    next.push(kid);
                }
            }
            if next.is_empty() {
                break;
            }
            level = next;
        }
        (out, unsettled)
    }
}

#[derive(Debug, Clone)]
struct ProcInfo {
    start: Option<Millis>,
    comm: String,
}

struct Stat {
    /// The process name (`comm`), e.g. `bash`.
    comm: String,
    ppid: u32,
    pgrp: u32,
    /// Foreground process group of the controlling terminal; none without a terminal.
    tpgid: Option<u32>,
    start_ticks: u64,
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot.
pub fn start_ticks(pid: u32) -> Option<u64> {
    read_stat(pid).map(|s| s.start_ticks)
}

/// Fields of `/proc/<pid>/stat` after the `(comm)`, which may itself hold spaces and `)`.
fn read_stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest = &text[close + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state): tpgid is field 8, starttime field 22.
    Some(Stat {
        comm,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        tpgid: f
            .get(5)?
            .parse::<i64>()
            .ok()
            .and_then(|t| u32::try_from(t).ok())
            .filter(|&t| t > 0),
        start_ticks: f.get(19)?.parse().ok()?,
    })
}

/// The argv of a process, lossily decoded.
pub fn read_cmdline(pid: u32) -> Option<Vec<String>> {
    read_cmdline_raw(pid)
}

/// The foreground process group of the terminal of `pid`, where `/proc` tells it.
pub fn foreground_group(pid: u32) -> Option<u32> {
    read_stat(pid)?.tpgid
}

/// [`foreground_group`] of a process on another host, asked there (one ssh exec).
pub async fn remote_foreground_group(
    host: &crate::adapters::tmux::reach::SshServer,
    pid: u32,
) -> Option<u32> {
    let out = host
        .run_script(
            &format!("read -r s < /proc/{pid}/stat && printf %s \"$s\""),
            REMOTE_ASK,
        )
        .await
        .ok()?;
    parse_stat(&String::from_utf8_lossy(&out))?.tpgid
}

fn read_cmdline_raw(pid: u32) -> Option<Vec<String>> {
    let argv = argv_of(&std::fs::read(format!("/proc/{pid}/cmdline")).ok()?);
    (!argv.is_empty()).then_some(argv)
}

/// The words of a `/proc/PID/cmdline` (NUL-separated), lossily decoded.
fn argv_of(raw: &[u8]) -> Vec<String> {
    raw.split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// How far a clock that read `theirs` (whole epoch seconds) between `before` and `after`
/// (this clock, ms) is ahead of this one, in whole seconds (as ms).
fn clock_skew(theirs: u64, before: Millis, after: Millis) -> i64 {
    // Their second began at `theirs`: its middle is the best guess of their instant.
    let Some(theirs) = theirs
        .checked_mul(1000)
        .and_then(|t| i64::try_from(t.saturating_add(500)).ok())
    else {
        return 0;
    };
    let ours = ((before + after) / 2) as i64;
    ((theirs - ours) as f64 / 1000.0).round() as i64 * 1000
}

/// The skew acted on: none within 2 s, which a whole second read over a round trip cannot
/// tell apart from none.
fn in_step(skew: i64) -> i64 {
    if skew.abs() <= 2000 {
        0
    } else {
        skew
    }
}

/// The skew to go on with: the one known, unless the new reading differs from it by more
/// than the reading's own uncertainty (a second, and half the question's round trip). A
/// skew that wobbled from reading to reading would move a death's time between polls.
fn settle(known: Option<i64>, read: i64, round_trip: Millis) -> i64 {
    match known {
        Some(k) if (read - k).abs() <= 1000 + (round_trip / 2) as i64 => k,
        _ => read,
    }
}

/// A time by another host's clock, on this one's.
fn shift_ms(t: Millis, skew: i64) -> Millis {
    (t as i64 - skew).max(0) as Millis
}

/// What was asked of another host about one of its panes.
#[derive(Debug, Clone, Default)]
struct RemotePane {
    pid: u32,
    current_command: String,
    /// The pane process's name (`bash`, `claude`); empty when it could not be read.
    comm: String,
    /// Its start, epoch ms by that machine's clock.
    start: Option<Millis>,
    /// Its argv, its foreground tree and its background jobs.
    tree: Arc<ProcTree>,
    /// A process in it was too young to trust (it may still exec): asked again.
    young: bool,
    /// The window's last output when it was asked, and when that was.
    activity: u64,
    asked_at: Option<std::time::Instant>,
    /// When its process or current command last changed.
    changed_at: Option<std::time::Instant>,
    /// The machine did not answer then.
    unanswered: bool,
    /// Told since the last poll took it.
    fresh: bool,
}

/// What is known of another host's processes, and whether a question is under way.
#[derive(Default)]
struct RemoteState {
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

/// What asking another host about its processes gave.
enum Asked {
    Told(Box<RemoteProcs>),
    /// ssh failed, or timed out: asked again later.
    Unanswered,
    /// The script ran there, and found no Linux `/proc` (no `btime` line of `/proc/stat`).
    NoProc,
}

/// Another host's answer about its panes' processes.
struct RemoteProcs {
    boot: Option<Millis>,
    tck: u64,
    /// The panes' own processes, by pid.
    panes: HashMap<u32, Stat>,
    /// The table of the processes in their terminals' foreground groups.
    table: ProcTable,
    argv: HashMap<u32, Vec<String>>,
    /// How long that machine has been up when it answered (ms): the age of its processes.
    uptime: Option<Millis>,
}

impl RemoteProcs {
    /// What is known of the pane whose process is `pid`.
    fn pane(&mut self, pid: u32) -> RemotePane {
        let Some((comm, tpgid, ticks)) = self
            .panes
            .get(&pid)
            .map(|st| (st.comm.clone(), st.tpgid, st.start_ticks))
        else {
            return RemotePane::default();
        };
        // Every process in it came with its argv: nothing is read from this machine.
        let (below, young) = self.table.foreground_tree(pid, tpgid);
        let background = self.table.background_children(pid, tpgid);
        let start = self.boot.map(|b| b + ticks * 1000 / self.tck);
        let age = self
            .uptime
            .map(|up| up.saturating_sub(ticks * 1000 / self.tck));
        RemotePane {
            pid,
            current_command: String::new(),
            comm,
            start,
            tree: Arc::new(ProcTree {
                own: self.argv.get(&pid).cloned().unwrap_or_default(),
                below,
                background,
            }),
            young: young || age.is_none_or(|a| a <= SETTLE_MS),
            ..RemotePane::default()
        }
    }
}

/// How long a question to another host about its processes may take.
const REMOTE_ASK: std::time::Duration = std::time::Duration::from_secs(5);

/// The first line of the answer of [`procs_script`].
const PROCS_MARK: &str = "aw-procs";

/// The script [`ask_procs`] runs there. No backslash, quote or newline: it passes through
/// the login shell there as one word (reach::SshServer::shell). `printf %s` (not `echo`)
/// writes stat lines, whose process names may hold backslashes.
fn procs_script(pids: &[u32]) -> String {
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    format!(
        "echo {PROCS_MARK}; grep ^btime /proc/stat; getconf CLK_TCK 2>/dev/null || echo 100; \
         read -r u i < /proc/uptime && echo U $u; P=\" {pids} \"; G=\" \"; \
         for p in $P; do read -r s < /proc/$p/stat || continue; printf \"P %s\" \"$s\"; echo; \
         echo A $p $(od -An -v -tx1 /proc/$p/cmdline); r=${{s##*) }}; set -- $r; \
         [ \"$6\" -gt 0 ] 2>/dev/null && G=\"$G$6 \"; done; \
         for f in /proc/[0-9]*/stat; do read -r s < $f 2>/dev/null || continue; \
         r=${{s##*) }}; set -- $r; q=${{f#/proc/}}; q=${{q%/stat}}; \
         case \"$G\" in *\" $3 \"*) printf \"S %s\" \"$s\"; echo; \
         echo A $q $(od -An -v -tx1 /proc/$q/cmdline);; \
         *) case \"$P\" in *\" $2 \"*) printf \"B %s\" \"$s\"; echo;; esac;; esac; done",
        pids = list.join(" ")
    )
}

/// Asks another host, in one ssh exec, for its boot time and clock ticks, the stat line
/// and argv of each of `pids` (panes' processes), and the stat lines and argv of every
/// process in their terminals' foreground groups. Only shell builtins walk its `/proc`;
/// `od` runs once per process whose argv is sent (hex: argv words may hold any byte).
async fn ask_procs(host: &crate::adapters::tmux::reach::SshServer, pids: &[u32]) -> Asked {
    let out = match host.run_script(&procs_script(pids), REMOTE_ASK).await {
        Ok(out) => out,
        Err(why) => {
            tracing::info!("{}: processes not read ({why})", host.dest);
            return Asked::Unanswered;
        }
    };
    let text = String::from_utf8_lossy(&out);
    // From the script's first line on: whatever a login script there printed before it is
    // not ours. Without that line the script did not run.
    let Some(from) = text.lines().position(|l| l == PROCS_MARK) else {
        return Asked::Unanswered;
    };
    let answer: Vec<&str> = text.lines().skip(from + 1).collect();
    if !answer.iter().any(|l| l.starts_with("btime ")) {
        return Asked::NoProc;
    }
    parse_procs(&answer.join("\n")).map_or(Asked::Unanswered, |p| Asked::Told(Box::new(p)))
}

/// The answer of [`procs_script`] after its first line: `btime N`, the clock ticks per
/// second, `U <uptime s>`, then `P <stat line>` for each pane process, `S <stat line>` for
/// each process of a foreground group, `B <stat line>` for each other child of a pane
/// process (a background job), and `A <pid> <argv bytes in hex>` for each P and S.
fn parse_procs(text: &str) -> Option<RemoteProcs> {
    let mut boot = None;
    let mut tck = None;
    let mut uptime = None;
    let mut panes = HashMap::new();
    let mut table = ProcTable::default();
    let mut argv = HashMap::new();
    let mut members = Vec::new();
    let pid_of = |l: &str| l.split_whitespace().next()?.parse::<u32>().ok();
    for line in text.lines() {
        if let Some(b) = btime_ms(line) {
            boot = Some(b);
        } else if let Some(u) = line.strip_prefix("U ") {
            // `12345.67`: seconds, to the hundredth.
            uptime = u
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|u| u.is_finite() && *u >= 0.0)
                .map(|u| (u * 1000.0) as Millis);
        } else if let Some(l) = line.strip_prefix("P ") {
            if let (Some(pid), Some(st)) = (pid_of(l), parse_stat(l)) {
                panes.insert(pid, st);
            }
        } else if let Some((l, background)) = line
            .strip_prefix("S ")
            .map(|l| (l, false))
            .or_else(|| line.strip_prefix("B ").map(|l| (l, true)))
        {
            if let (Some(pid), Some(st)) = (pid_of(l), parse_stat(l)) {
                members.push((pid, st, background));
            }
        } else if let Some(l) = line.strip_prefix("A ") {
            let mut words = l.split_whitespace();
            let Some(pid) = words.next().and_then(|w| w.parse::<u32>().ok()) else {
                continue;
            };
            let bytes: Vec<u8> = words
                .filter_map(|h| u8::from_str_radix(h, 16).ok())
                .collect();
            argv.insert(pid, argv_of(&bytes));
        } else if tck.is_none() {
            tck = line.trim().parse::<u64>().ok().filter(|&t| t > 0);
        }
    }
    let tck = tck?;
    for (pid, st, background) in members {
        let since_boot = st.start_ticks * 1000 / tck;
        table.known.insert(
            pid,
            Known {
                pass: 0,
                settled: uptime.is_some_and(|u| u.saturating_sub(since_boot) > SETTLE_MS),
                start_ms: boot.map(|b| b + since_boot),
                st,
                ended: false,
                // Every process comes with its argv (a background job's is not asked for):
                // nothing is ever read from this machine's /proc for it.
                argv: Some(if background {
                    Vec::new()
                } else {
                    argv.get(&pid).cloned().unwrap_or_default()
                }),
            },
        );
    }
    table.index_children();
    Some(RemoteProcs {
        boot,
        tck,
        panes,
        table,
        argv,
        uptime,
    })
}

fn boot_time_ms() -> Option<Millis> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    text.lines().find_map(btime_ms)
}

/// `btime N` of `/proc/stat`: the boot time, epoch ms.
fn btime_ms(line: &str) -> Option<Millis> {
    line.strip_prefix("btime ")?
        .trim()
        .parse::<u64>()
        .ok()
        .map(|s| s * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_clock_is_ahead_or_behind_by_whole_seconds_and_within_two_it_is_in_step() {
        // This clock, ms.
        let t = 1_796_000_000_000;
        // Their second 1_796_000_000 is [t, t + 1000): in step, whatever the round trip.
        assert_eq!(in_step(clock_skew(1_796_000_000, t, t + 40)), 0);
        assert_eq!(in_step(clock_skew(1_796_000_001, t + 900, t + 950)), 0);
        assert_eq!(in_step(clock_skew(1_795_999_999, t + 100, t + 300)), 0);
        assert_eq!(in_step(clock_skew(1_796_000_002, t, t + 40)), 0);
        // An hour ahead and ten minutes behind, in whole seconds.
        assert_eq!(clock_skew(1_796_003_600, t, t + 40), 3_600_000);
        assert_eq!(clock_skew(1_795_999_400, t, t + 40), -600_000);
        assert_eq!(in_step(clock_skew(1_796_000_005, t, t + 40)), 5_000);
        assert_eq!(clock_skew(u64::MAX, t, t + 40), 0);
        // Readings that wobble within their uncertainty keep the skew known (a host 2.5 s
        // off reads 2 s and 3 s in turn, and must not flip in and out of step); a real
        // change, or a first reading, is taken.
        assert_eq!(settle(None, 3_600_000, 40), 3_600_000);
        assert_eq!(settle(Some(3_600_000), 3_601_000, 40), 3_600_000);
        assert_eq!(settle(Some(3_600_000), 3_599_000, 40), 3_600_000);
        assert_eq!(settle(Some(3_600_000), 3_605_000, 40), 3_605_000);
        assert_eq!(in_step(settle(Some(3_000), 2_000, 40)), 3_000);
        assert_eq!(settle(Some(30_000), 0, 40), 0);
        // A slow answer widens what is taken as the same.
        assert_eq!(settle(Some(3_000), 5_000, 2_400), 3_000);
        assert_eq!(shift_ms(t + 3_600_000, 3_600_000), t);
        assert_eq!(shift_ms(t, -600_000), t + 600_000);
        assert_eq!(shift_ms(5, 3_600_000), 0);
    }

    /// argv as the host sends it: its bytes in hex, as `od -An -v -tx1` writes them.
    fn hex(words: &[&str]) -> String {
        words
            .iter()
            .flat_map(|w| w.bytes().chain([0]))
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn another_hosts_panes_are_read_by_its_own_boot_time_ticks_and_foreground_groups() {
        // Pane 42: a bash whose foreground group (50) holds claude (50) and its child (51),
        // beside a background job (60, its own group). Pane 43: a hostile name, no group.
        // That machine: booted at 1_780_000_000, up 100 s; 100 ticks a second.
        let text = format!(
            "btime 1780000000\n100\nU 100.00\n\
             P 42 (bash) S 1 42 42 34816 50 0 0 0 0 0 0 0 0 0 20 0 1 0 500 1000 100\n\
             A 42 {bash}\n\
             P 43 (we ird) x) S 1 43 43 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1234 1000 100\n\
             A 43 {weird}\n\
             S 50 (claude) S 42 50 42 34816 50 0 0 0 0 0 0 0 0 0 20 0 1 0 2000 1000 100\n\
             A 50 {claude}\n\
             S 51 (node) S 50 50 42 34816 50 0 0 0 0 0 0 0 0 0 20 0 1 0 9950 1000 100\n\
             A 51 {node}\n\
             B 60 (sleep) T 42 60 42 34816 50 0 0 0 0 0 0 0 0 0 20 0 1 0 3000 1000 100\n",
            bash = hex(&["-bash"]),
            weird = hex(&["we ird) x)", "line\nbreak"]),
            claude = hex(&["claude", "--session-id", "0e6a1c1e"]),
            node = hex(&["node", "x.js"]),
        );
        let mut procs = parse_procs(&text).unwrap();
        let bash = procs.pane(42);
        assert_eq!(bash.comm, "bash");
        assert_eq!(bash.start, Some(1_780_000_005_000));
        assert_eq!(bash.tree.own, vec!["-bash"]);
        let below: Vec<(u32, &str)> = bash
            .tree
            .below
            .iter()
            .map(|p| (p.pid, p.comm.as_str()))
            .collect();
        assert_eq!(below, vec![(50, "claude"), (51, "node")]);
        assert_eq!(bash.tree.background, vec![60]);
        assert_eq!(
            bash.tree.below[0].argv,
            vec!["claude", "--session-id", "0e6a1c1e"]
        );
        assert_eq!(bash.tree.below[0].start, Some(1_780_000_020_000));
        // Node started half a second before the answer: too young to trust, asked again.
        assert!(bash.young);
        let weird = procs.pane(43);
        assert_eq!(weird.comm, "we ird) x");
        assert_eq!(weird.start, Some(1_780_000_012_340));
        assert_eq!(weird.tree.own, vec!["we ird) x)", "line\nbreak"]);
        assert!(weird.tree.below.is_empty() && weird.tree.background.is_empty());
        assert!(!weird.young);
        // A process that was gone when asked: nothing is known, nothing guessed.
        let gone = procs.pane(44);
        assert!(gone.comm.is_empty() && gone.start.is_none() && gone.tree.own.is_empty());
        // No clock ticks: no answer at all.
        assert!(parse_procs("btime 1\n").is_none());
        assert!(parse_procs("").is_none());
        // No boot time: no start times, the rest as told; no uptime: young, asked again.
        let mut no_boot = parse_procs(
            "100\nP 42 (bash) S 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 500 1000 100\n",
        )
        .unwrap();
        let p = no_boot.pane(42);
        assert_eq!((p.comm.as_str(), p.start, p.young), ("bash", None, true));
    }

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

    #[test]
    fn the_script_asked_of_another_host_passes_through_its_login_shell() {
        let script = procs_script(&[1, 42]);
        assert!(!script.contains(['\\', '\'', '\n']), "{script}");
        assert!(script.starts_with("echo aw-procs;"), "{script}");
        assert!(script.contains("P=\" 1 42 \""), "{script}");
    }

    #[test]
    fn stat_with_a_hostile_comm_parses() {
        let s = "123 (we ird) name)) S 1 123 123 34816 4242 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100";
        let st = parse_stat(s).unwrap();
        assert_eq!(st.tpgid, Some(4242));
        assert_eq!(st.comm, "we ird) name)");
        assert_eq!(st.start_ticks, 98765);
    }

    #[test]
    fn our_own_process_is_readable() {
        let me = std::process::id();
        assert!(read_stat(me).is_some());
        assert!(read_cmdline(me).is_some_and(|a| !a.is_empty()));
    }
}
