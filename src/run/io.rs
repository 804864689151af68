//! Effects carried out: the core asks, the adapters act, the answer comes back as a message.

use std::path::PathBuf;
use std::sync::Arc;

use super::clock::Clock;
use crate::adapters::poll::Prober;
use crate::adapters::respawn;
use crate::adapters::tmux::client::{kick_server, Tmux};
use crate::adapters::tmux::clients;
use crate::core::errors::{JumpError, OutputError, RecreateError, StoreError};
use crate::core::msg::{Effect, Msg};
use crate::core::pane::{Opt, PaneId, ServerId};
use crate::core::peek_model::PeekRecord;
use crate::core::time::Millis;

/// Lines of a dead pane read to tell why it stopped (a usage limit, a login, a crash...).
pub const TAIL_LINES: u32 = 40;

/// How long after a death is seen its last lines are read (see [`Io::settled_tail`]).
const TAIL_SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

/// What effects need: the poller (and its tmux handle) and where crash records go.
pub struct Io {
    pub prober: Prober,
    /// The pollers of other hosts' servers, in the order of `[[hosts]]` (host 1 first).
    pub remotes: Vec<Prober>,
    pub crash_dir: Option<PathBuf>,
    /// Crash record caps: count and total bytes.
    pub crash_cap: (usize, u64),
    pub journal: Option<PathBuf>,
    /// Where the roster of agents lost with a server is kept.
    pub roster: Option<PathBuf>,
    /// How deaths are announced; `None`: not at all (one-shot commands, tests).
    pub notify: Option<crate::config::Notify>,
    /// The sender of `[notify] webhook`, started with the first announcement it sends.
    webhook: std::sync::OnceLock<crate::adapters::webhook::Webhook>,
    pub clock: Clock,
    /// Who supervises the server; `None`: this instance does, alone.
    pub elector: Option<super::elector::Elector>,
    /// Where the agents keep their sessions (claude's, codex's, gemini's folders).
    pub stores: crate::adapters::discover::Dirs,
    /// The agents' own files followed for what they spend.
    spend: Arc<crate::adapters::spend::Follower>,
    /// The agent kinds a new agent (`s`) is started as; `None`: none is started here.
    agents: Option<crate::core::agent::Agents>,
    /// When a heard pane's start or stop last woke the loop.
    heard_at: std::sync::Arc<std::sync::Mutex<tokio::time::Instant>>,
}

/// The least time between two polls woken by heard panes' starts and stops. Each poll goes
/// over every card, and pauses the panes that began to write in one command for all of
/// them: at 300 panes, 100 of them churning (bench/pair.py, side by side), 200 ms against
/// 100 saved agentwatch and tmux 0.9 points of a core, and 300 against 200 another 0.4-1.0,
/// for waits journaled p50 / p95 495 / 702 ms after the prompt (467 / 620 at 200 ms;
/// bench/churn.sh), none missed.
const HEARD_GAP: std::time::Duration = std::time::Duration::from_millis(300);

impl Io {
    pub fn new(prober: Prober, crash_dir: Option<PathBuf>) -> Io {
        Io {
            prober,
            remotes: Vec::new(),
            crash_dir,
            crash_cap: (200, 100 << 20),
            journal: None,
            roster: None,
            notify: None,
            webhook: std::sync::OnceLock::new(),
            clock: Clock::start(),
            elector: None,
            stores: Default::default(),
            spend: Default::default(),
            agents: None,
            heard_at: std::sync::Arc::new(std::sync::Mutex::new(tokio::time::Instant::now())),
        }
    }

    /// Starts the agent asked for with `s`, as `agentwatch spawn` does; its pane, or why
    /// not in the words `spawn` uses.
    async fn start(&self, ask: crate::core::msg::StartAsk) -> Result<PaneId, String> {
        let Some(agents) = &self.agents else {
            return Err("agents are not started from here".into());
        };
        let req = crate::commands::spawn::Request {
            remote: false,
            agent: ask.agent,
            cwd: Some(PathBuf::from(ask.dir)),
            name: ask.name,
            session: ask.session,
            args: Vec::new(),
        };
        let id = crate::commands::spawn::spawn(self.tmux(), &req, agents)
            .await
            .map_err(|e| e.form_words())?;
        PaneId::parse(&id).ok_or_else(|| format!("tmux answered {id:?}, not a pane id"))
    }

    /// The agents' session folders, when not where their environment says (tests).
    pub fn with_stores(mut self, stores: crate::adapters::discover::Dirs) -> Io {
        self.stores = stores;
        self
    }

    pub fn with_crash_cap(mut self, records: &crate::config::CrashRecords) -> Io {
        self.crash_cap = (records.keep, records.max_total_mb << 20);
        self
    }

    pub fn with_notify(mut self, notify: crate::config::Notify) -> Io {
        self.notify = Some(notify);
        self
    }

    pub fn with_elector(mut self, elector: super::elector::Elector) -> Io {
        self.elector = Some(elector);
        self
    }

    pub fn with_roster(mut self, path: Option<PathBuf>) -> Io {
        self.roster = path;
        self
    }

    /// Agents are started here (`s`), as these kinds.
    pub fn with_agents(mut self, agents: crate::core::agent::Agents) -> Io {
        self.agents = Some(agents);
        self
    }

    pub fn with_journal(mut self, path: Option<PathBuf>) -> Io {
        self.journal = path;
        self
    }

    /// Where the agents' spend tallies are kept between runs (see `adapters::spend`).
    pub fn with_spend_cache(mut self, dir: Option<PathBuf>) -> Io {
        self.spend = Arc::new(crate::adapters::spend::Follower::with_cache(dir));
        self
    }

    /// Other hosts' servers, polled beside the local one.
    pub fn with_remotes(mut self, remotes: Vec<Prober>) -> Io {
        self.remotes = remotes;
        self
    }

    pub fn tmux(&self) -> &Tmux {
        self.prober.tmux()
    }

    /// Gives up the claim on the server, if this instance holds it (it is quitting), and
    /// sends what the webhook has gathered.
    pub async fn release(&self) {
        if let Some(e) = &self.elector {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(1), e.release(self.tmux()))
                .await;
        }
        let forget = std::iter::once(&self.prober)
            .chain(self.remotes.iter())
            .map(|p| p.tmux().forget_record());
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(1),
            futures_util::future::join_all(forget),
        )
        .await;
        if let Some(w) = self.webhook.get() {
            w.finish(std::time::Duration::from_secs(2)).await;
        }
    }

    /// The server a pane is on.
    fn tmux_of(&self, pane: PaneId) -> &Tmux {
        self.prober_of(pane.server()).tmux()
    }

    fn prober_of(&self, server: ServerId) -> &Prober {
        server
            .host_index()
            .and_then(|i| self.remotes.get(i))
            .unwrap_or(&self.prober)
    }

    /// Screens of panes, each with its lines of history and read from its own server, by
    /// the pane ids the core knows.
    async fn screens(
        &self,
        panes: &[(PaneId, usize)],
    ) -> Result<std::collections::HashMap<PaneId, String>, crate::core::errors::TmuxError> {
        let mut out = std::collections::HashMap::new();
        let mut first_err = None;
        // Each server at once: a slow host adds its own wait, not the sum.
        let mut groups: Vec<(ServerId, Vec<(PaneId, u32)>)> = Vec::new();
        for &(id, lines) in panes {
            let ask = (id, u32::try_from(lines).unwrap_or(u32::MAX));
            match groups.iter_mut().find(|(h, _)| *h == id.server()) {
                Some((_, asks)) => asks.push(ask),
                None => groups.push((id.server(), vec![ask])),
            }
        }
        let asks = groups.iter().map(|(host, asks)| async move {
            (
                *host,
                self.prober_of(*host).tmux().capture_screens(asks).await,
            )
        });
        for (host, r) in futures_util::future::join_all(asks).await {
            match r {
                Ok(map) => out.extend(map.into_iter().map(|(id, s)| (PaneId::on(host, id.0), s))),
                Err(e) => first_err = first_err.or(Some(e)),
            }
        }
        match (out.is_empty(), first_err) {
            (true, Some(e)) => Err(e),
            _ => Ok(out),
        }
    }

    /// Switches the client agentwatch is shown on to `pane`.
    async fn jump(
        &self,
        pane: crate::core::pane::PaneId,
        viewer: &crate::core::msg::Viewer,
    ) -> Result<(), JumpError> {
        let clients = clients::list(self.tmux(), None).await?;
        let tty = crate::core::viewer::showing(&clients, viewer)?;
        Ok(clients::switch(self.tmux(), &tty, pane).await?)
    }

    /// A dead pane's last lines, read a moment after its death was seen: tmux can mark a
    /// pane dead before it has read the last of its output (seen: node's heap message
    /// missing from an agent that aborted half a second after it started).
    async fn settled_tail(&self, pane: PaneId) -> Option<Vec<u8>> {
        tokio::time::sleep(TAIL_SETTLE).await;
        self.tmux_of(pane).capture_tail(pane, TAIL_LINES).await.ok()
    }

    /// Carries out one effect and returns the message that answers it, if any.
    pub async fn answer(&self, effect: Effect) -> Option<Msg> {
        Some(match effect {
            Effect::Poll { server, hot, whole } => {
                let result = match server.host_index() {
                    None => self.prober.observe_hot(&hot, whole).await,
                    Some(i) => {
                        let hot: Vec<PaneId> = hot.iter().map(|id| PaneId(id.number())).collect();
                        match self.remotes.get(i) {
                            Some(p) => p.observe_hot(&hot, whole).await.map(|o| on_host(server, o)),
                            None => Err(crate::core::errors::TmuxError::Failed {
                                detail: format!("no host {i}"),
                            }),
                        }
                    }
                };
                Msg::Polled {
                    server,
                    result: result.map(Box::new),
                }
            }
            Effect::Kick {
                server: ServerId::Local,
                pid,
            } => {
                if let Some(pid) = pid {
                    if let Err(e) = kick_server(pid) {
                        tracing::warn!("SIGCHLD to tmux server {pid} failed: {e}");
                    }
                }
                return None;
            }
            Effect::Kick { server, .. } => {
                if let Err(e) = self.prober_of(server).tmux().kick_itself().await {
                    tracing::warn!("SIGCHLD to the tmux server of {server:?} failed: {e}");
                }
                return None;
            }
            Effect::Attend { often, hear } => {
                self.prober.attend(often, &hear);
                return None;
            }
            // A few lines of history too: a dying pane scrolls its screen up a line.
            Effect::CaptureScreens { panes } => Msg::Screens(self.screens(&panes).await),
            // The screen alone: a prompt answered and cleared away is in the history.
            Effect::LookAtScreens(ids) => {
                let panes: Vec<(PaneId, usize)> = ids.into_iter().map(|id| (id, 0)).collect();
                Msg::Looked(self.screens(&panes).await)
            }
            Effect::SetOptions(mut sets) => {
                // Protect first: every new pane's output outlives it before anything else.
                sets.sort_by_key(|(_, opt, _)| *opt != Opt::RemainOnExit);
                let sets: Vec<(PaneId, Opt, String)> = sets;
                let mut failed = None;
                let mut landed = Vec::new();
                let mut servers: Vec<ServerId> = sets.iter().map(|s| s.0.server()).collect();
                servers.sort_unstable();
                servers.dedup();
                for host in servers {
                    let mine: Vec<_> = sets
                        .iter()
                        .filter(|s| s.0.server() == host)
                        .cloned()
                        .collect();
                    let prober = self.prober_of(host);
                    let named: Vec<(PaneId, String, String)> = mine
                        .iter()
                        .map(|(id, opt, v)| (*id, opt.name().to_string(), v.clone()))
                        .collect();
                    let each = prober.tmux().set_pane_options(&named).await;
                    let (set, bad): (Vec<_>, Vec<_>) =
                        mine.into_iter().zip(each).partition(|(_, r)| r.is_ok());
                    let set: Vec<(PaneId, Opt, String)> = set.into_iter().map(|(s, _)| s).collect();
                    let here: Vec<(PaneId, String, String)> = set
                        .iter()
                        .map(|(id, k, v)| (PaneId(id.number()), k.name().to_string(), v.clone()))
                        .collect();
                    prober.wrote(&here);
                    landed.extend(set);
                    failed = failed.or(bad.into_iter().next().map(|(_, r)| r));
                }
                let result = failed.unwrap_or(Ok(()));
                if let Err(e) = &result {
                    tracing::info!("setting pane options: {e}");
                }
                Msg::OptionsSet { landed, result }
            }
            Effect::Relaunch { plan, meta } => {
                let pane = plan.pane;
                let result = respawn::relaunch(
                    self.tmux_of(pane),
                    plan,
                    &meta,
                    self.crash_dir.as_deref(),
                    &self.stores,
                    self.clock.now(),
                )
                .await;
                if let Some(dir) = self.crash_dir.clone() {
                    let (keep, max) = self.crash_cap;
                    let _ = tokio::task::spawn_blocking(move || {
                        crate::adapters::store::crash_records::prune(&dir, keep, max)
                    })
                    .await;
                }
                match &result {
                    Ok(p) => tracing::info!("{pane}: relaunched with {:?} in {}", p.argv, p.cwd),
                    Err(e) => tracing::warn!("{pane}: relaunch failed: {e}"),
                }
                Msg::Relaunched { pane, result }
            }
            Effect::Log(line) => {
                match line.level {
                    crate::core::msg::Level::Debug => tracing::debug!("{}", line.text),
                    crate::core::msg::Level::Info => tracing::info!("{}", line.text),
                    crate::core::msg::Level::Warn => tracing::warn!("{}", line.text),
                }
                return None;
            }
            Effect::Journal(event) => {
                // The journal is the record; the log echoes it only when asked (an agent at
                // work journals an edge every few seconds, and the log is never rotated).
                tracing::debug!("{} {} {:?}", event.event, event.pane, event.detail);
                let path = self.journal.as_ref()?;
                let result = crate::adapters::store::journal::append(path, &event).map_err(|e| {
                    tracing::warn!("journal {}: {e}", path.display());
                    StoreError {
                        what: "journal",
                        path: path.clone(),
                        reason: e.to_string(),
                    }
                });
                Msg::Stored {
                    what: "journal",
                    result,
                }
            }
            Effect::Notify { events, bell_only } => {
                if let Some(cfg) = &self.notify {
                    // The supervisor's alone (every dashboard would POST the same death), and
                    // about every pane: a phone is not looking at any.
                    if !bell_only && !cfg.webhook.is_empty() {
                        self.webhook
                            .get_or_init(|| {
                                crate::adapters::webhook::Webhook::start(
                                    cfg.webhook.clone(),
                                    std::time::Duration::from_secs(cfg.webhook_collapse_secs),
                                )
                            })
                            .send(&events);
                    }
                    let cfg = if bell_only {
                        &crate::config::Notify {
                            bell: cfg.bell,
                            desktop: false,
                            on_death: Vec::new(),
                            webhook: String::new(),
                            webhook_collapse_secs: 0,
                        }
                    } else {
                        cfg
                    };
                    let looking = if cfg.bell || cfg.desktop {
                        clients::list(self.tmux(), None)
                            .await
                            .map(|c| crate::core::viewer::looked_at(&c))
                            .unwrap_or_default()
                    } else {
                        Default::default()
                    };
                    crate::adapters::notify::announce(cfg, &events, &looking).await;
                }
                return None;
            }
            Effect::Elect => Msg::Elected(match &self.elector {
                Some(e) => e.elect(self.tmux(), self.clock.now()).await,
                None => crate::core::msg::Election {
                    mine: true,
                    by: None,
                    took_over: None,
                },
            }),
            Effect::ReadJournal { since } => {
                let path = self.journal.clone();
                let events = tokio::task::spawn_blocking(move || {
                    path.map(|p| crate::adapters::store::journal::read(&p))
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|e| e.ts >= since)
                        .collect()
                })
                .await
                .unwrap_or_default();
                Msg::JournalRead(events)
            }
            Effect::SetServerOption { name, value } => {
                if let Err(e) = self.tmux().set_server_option(&name, &value).await {
                    tracing::warn!("set-option -s {name}: {e}");
                }
                return None;
            }
            Effect::LoadRoster => Msg::RosterLoaded(self.roster.as_deref().and_then(|p| {
                crate::adapters::store::roster::load(p, &self.tmux().socket().display().to_string())
            })),
            Effect::SaveRoster(roster) => {
                let path = self.roster.as_ref()?;
                let socket = self.tmux().socket().display().to_string();
                let result = crate::adapters::store::roster::save(path, &socket, roster.as_ref())
                    .map_err(|e| {
                        tracing::warn!("saving {}: {e}", path.display());
                        StoreError {
                            what: "roster",
                            path: path.clone(),
                            reason: e.to_string(),
                        }
                    });
                Msg::Stored {
                    what: "roster",
                    result,
                }
            }
            Effect::Start(ask) => Msg::Started(self.start(ask).await),
            Effect::Recreate(plans) => {
                let mut results = Vec::new();
                for p in plans {
                    let cwd = std::path::Path::new(&p.cwd);
                    // The agent's own registry of live sessions (claude's), where it is kept.
                    let held_by = match (p.agent(), p.session_id()) {
                        (Some(agent), Some(id)) => {
                            let (agent, id, dirs) =
                                (agent.to_string(), id.to_string(), self.stores.clone());
                            tokio::task::spawn_blocking(move || {
                                crate::adapters::discover::live_elsewhere_in(
                                    &agent,
                                    &id,
                                    &[],
                                    &dirs,
                                )
                            })
                            .await
                            .ok()
                            .flatten()
                        }
                        _ => None,
                    };
                    let r = match crate::core::relaunch::may_recreate(
                        &p,
                        Some(cwd.is_dir()),
                        held_by,
                    ) {
                        Ok(()) => crate::adapters::tmux::window::open_window(
                            self.tmux(),
                            &p.session,
                            &p.window_name,
                            cwd,
                            &p.argv,
                            &p.options,
                        )
                        .await
                        .map_err(RecreateError::from),
                        Err(e) => Err(e),
                    };
                    tracing::info!("recreating {}: {r:?}", p.target);
                    results.push((p.target, r));
                }
                Msg::Recreated(results)
            }
            Effect::CaptureOutput(pane) => {
                let result = match self.tmux_of(pane).capture_history(pane).await {
                    Ok(bytes) => {
                        // Parsing a long history is real work: keep it off the loop.
                        tokio::task::spawn_blocking(move || {
                            Arc::new(crate::adapters::ansi::parse(&bytes))
                        })
                        .await
                        .map_err(|e| OutputError::Parse(e.to_string()))
                    }
                    Err(e) => Err(e.into()),
                };
                Msg::Output { pane, result }
            }
            Effect::ReadTail(pane, ask) => Msg::Tail {
                pane,
                text: self
                    .settled_tail(pane)
                    .await
                    .map(|b| String::from_utf8_lossy(&b).into_owned()),
                oom_killed: pane.server() == ServerId::Local && self.prober.oom_killed(),
                record: match ask {
                    Some(ask) => {
                        let (follower, dirs) = (Arc::clone(&self.spend), self.stores.clone());
                        tokio::task::spawn_blocking(move || follower.errors_of(&ask, &dirs))
                            .await
                            .unwrap_or_default()
                    }
                    None => Vec::new(),
                },
            },
            Effect::LoadRecords {
                pane,
                host,
                session_id,
            } => {
                let dir = self.crash_dir.clone();
                let records = tokio::task::spawn_blocking(move || {
                    dir.map(|d| {
                        crate::adapters::store::crash_records::for_pane(
                            &d,
                            pane,
                            host.as_deref(),
                            session_id.as_deref(),
                        )
                    })
                    .unwrap_or_default()
                    .into_iter()
                    .map(|record| {
                        let text = Arc::new(crate::adapters::ansi::parse(record.output.as_bytes()));
                        Arc::new(PeekRecord { record, text })
                    })
                    .collect()
                })
                .await
                .unwrap_or_default();
                Msg::Records { pane, records }
            }
            Effect::EndOrphans { pane, procs } => {
                let result = self.prober.end_orphans(&procs).await;
                match &result {
                    Ok(()) => tracing::info!("{pane}: ended what its last run left running"),
                    Err(e) => tracing::warn!("{pane}: could not end its orphans: {e}"),
                }
                Msg::OrphansEnded { pane, result }
            }
            Effect::ReadSpend(asks) => {
                let (follower, dirs) = (Arc::clone(&self.spend), self.stores.clone());
                let read = tokio::task::spawn_blocking(move || follower.read(&asks, &dirs))
                    .await
                    .unwrap_or_default();
                Msg::Spent(read)
            }
            Effect::Type {
                pane,
                text,
                dismiss,
            } => {
                // The text as keys (`-l`: literally, never a key name), then Enter; Escape
                // first where a menu covers the prompt.
                let id = pane.to_string();
                let tmux = self.tmux_of(pane);
                if dismiss {
                    if let Err(e) = tmux.run(["send-keys", "-t", &id, "Escape"]).await {
                        tracing::warn!("Escape into {id} failed: {e}");
                    }
                    // claude 2.1.197 drops keys that come as its menu closes (seen: the
                    // text lost with no pause, typed with 50 ms or more).
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                }
                let typed = match tmux.run(["send-keys", "-t", &id, "-l", "--", &text]).await {
                    Ok(_) => tmux
                        .run(["send-keys", "-t", &id, "Enter"])
                        .await
                        .map(|_| ()),
                    Err(e) => Err(e),
                };
                if let Err(e) = typed {
                    tracing::warn!("typing `{text}` into {id} failed: {e}");
                }
                return None;
            }
            Effect::KillPane(pane) => {
                let result = self.tmux_of(pane).kill_pane(pane).await;
                Msg::Closed { pane, result }
            }
            Effect::Jump { pane, viewer } => Msg::Jumped {
                pane,
                result: self.jump(pane, &viewer).await,
            },
            Effect::Discover(req) => {
                let pane = req.pane;
                let found = respawn::discover(self.tmux(), &req, &self.stores).await;
                Msg::Discovered { pane, found }
            }
        })
    }
}

/// A look at another host's server, its pane ids made that host's.
pub fn on_host(
    host: ServerId,
    mut obs: crate::core::msg::Observation,
) -> crate::core::msg::Observation {
    use std::collections::HashMap;
    fn rehost<V>(host: ServerId, map: HashMap<PaneId, V>) -> HashMap<PaneId, V> {
        map.into_iter()
            .map(|(id, v)| (PaneId::on(host, id.0), v))
            .collect()
    }
    for p in &mut obs.listing.panes {
        p.id = PaneId::on(host, p.id.0);
    }
    obs.activity = rehost(host, obs.activity);
    obs.started = rehost(host, obs.started);
    obs.comm = rehost(host, obs.comm);
    obs.foreground = rehost(host, obs.foreground);
    obs.tree = Arc::new(rehost(
        host,
        obs.tree
            .iter()
            .map(|(id, t)| (*id, Arc::clone(t)))
            .collect(),
    ));
    // The server's pid is another machine's: never signalled from here (the core asks
    // that server to signal itself), only compared, to tell a restarted server.
    obs
}

/// What the loop needs of the outside world: effects carried out, and the clock. [`Io`] is
/// the real one; tests give a fake.
pub trait Answer: Send + Sync + 'static {
    fn answer(&self, effect: Effect) -> impl std::future::Future<Output = Option<Msg>> + Send;
    fn now(&self) -> Millis;
    /// Resolves when something changed that is worth a poll before the next tick.
    fn woken(&self) -> impl std::future::Future<Output = ()> + Send;
}

impl Answer for Io {
    fn answer(&self, effect: Effect) -> impl std::future::Future<Output = Option<Msg>> + Send {
        Io::answer(self, effect)
    }

    fn now(&self) -> Millis {
        self.clock.now()
    }

    fn woken(&self) -> impl std::future::Future<Output = ()> + Send {
        // Any server's news: the local one's, or another host's.
        let all: Vec<_> = std::iter::once(&self.prober)
            .chain(&self.remotes)
            .map(|p| std::sync::Arc::clone(p.tmux().notices()))
            .collect();
        let heard = std::sync::Arc::clone(self.prober.tmux().notices());
        let last = std::sync::Arc::clone(&self.heard_at);
        async move {
            let waits = all.iter().map(|n| Box::pin(n.wake.notified()));
            // A heard pane's start or stop: at most one poll per HEARD_GAP for them all.
            let gap = async {
                let since = *last.lock().unwrap_or_else(|e| e.into_inner());
                tokio::time::sleep_until(since + HEARD_GAP).await;
                heard.heard.notified().await;
                *last.lock().unwrap_or_else(|e| e.into_inner()) = tokio::time::Instant::now();
            };
            tokio::select! {
                _ = futures_util::future::select_all(waits) => {}
                () = gap => {}
            }
        }
    }
}
