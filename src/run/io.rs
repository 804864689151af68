//! Effects carried out: the core asks, the adapters act, the answer comes back as a message.

use std::path::PathBuf;
use std::sync::Arc;

use super::clock::Clock;
use crate::adapters::probe::Prober;
use crate::adapters::respawn;
use crate::adapters::tmux::client::{kick_server, Tmux};
use crate::core::msg::{Effect, Millis, Msg};
use crate::core::peek_model::PeekText;

/// Lines of a dead pane read to tell a failed resume ("no such session") from a crash.
const TAIL_LINES: u32 = 40;

/// What effects need: the poller (and its tmux handle) and where crash records go.
pub struct Io {
    pub prober: Prober,
    pub crash_dir: Option<PathBuf>,
    /// Crash record caps: count and total bytes.
    pub crash_cap: (usize, u64),
    pub journal: Option<PathBuf>,
    /// Where the roster of agents lost with a server is kept.
    pub roster: Option<PathBuf>,
    /// How deaths are announced; `None`: not at all (one-shot commands, tests).
    pub notify: Option<crate::config::Notify>,
    pub clock: Clock,
    /// Who supervises the server; `None`: this instance does, alone.
    pub elector: Option<super::elector::Elector>,
    /// Where the agents keep their sessions (claude's, codex's, gemini's folders).
    pub stores: crate::adapters::discover::Dirs,
}

impl Io {
    pub fn new(prober: Prober, crash_dir: Option<PathBuf>) -> Io {
        Io {
            prober,
            crash_dir,
            crash_cap: (200, 100 << 20),
            journal: None,
            roster: None,
            notify: None,
            clock: Clock::start(),
            elector: None,
            stores: Default::default(),
        }
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

    pub fn with_journal(mut self, path: Option<PathBuf>) -> Io {
        self.journal = path;
        self
    }

    pub fn tmux(&self) -> &Tmux {
        self.prober.tmux()
    }

    /// Switches the client that shows agentwatch's own pane (`from`) to `pane`.
    async fn jump(&self, pane: crate::core::pane::PaneId, from: &str) -> Result<(), String> {
        let out = self
            .tmux()
            .run([
                "list-clients",
                "-F",
                "#{pane_id} #{client_activity} #{client_tty} #{client_control_mode}",
            ])
            .await
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out);
        // The client looking at agentwatch's pane (the most recently active one).
        let tty = text
            .lines()
            // Control-mode clients (agentwatch's own among them) show nothing to anyone.
            .filter(|l| !l.ends_with(" 1"))
            .filter_map(|l| {
                let mut f = l.split(' ');
                Some((f.next()?, f.next()?.parse::<u64>().unwrap_or(0), f.next()?))
            })
            .filter(|(p, _, _)| *p == from)
            .max_by_key(|(_, activity, _)| *activity)
            .map(|(_, _, tty)| tty.to_string())
            .ok_or("no tmux client is showing agentwatch's pane")?;
        let t = pane.to_string();
        self.tmux()
            .run([
                "switch-client",
                "-c",
                &tty,
                "-t",
                &t,
                ";",
                "select-window",
                "-t",
                &t,
                ";",
                "select-pane",
                "-t",
                &t,
            ])
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Carries out one effect and returns the message that answers it, if any.
    pub async fn answer(&self, effect: Effect) -> Option<Msg> {
        Some(match effect {
            Effect::Poll(hot) => Msg::Polled(self.prober.observe_hot(&hot).await),
            Effect::Attend(often) => {
                self.prober.attend(often);
                return None;
            }
            Effect::KickServer(pid) => {
                if let Err(e) = kick_server(pid) {
                    tracing::warn!("SIGCHLD to tmux server {pid} failed: {e}");
                }
                return None;
            }
            // A few lines of history too: a dying pane scrolls its screen up a line.
            Effect::CaptureScreens { panes, lines } => {
                Msg::Screens(self.tmux().capture_screens(&panes, lines as u32).await)
            }
            // The screen alone: a prompt answered and cleared away is in the history.
            Effect::LookAtScreens(ids) => Msg::Looked(self.tmux().capture_screens(&ids, 0).await),
            Effect::SetOptions(mut sets) => {
                // Protect first: every new pane's output outlives it before anything else.
                sets.sort_by_key(|(_, name, _)| name != "remain-on-exit");
                let each = self.tmux().set_pane_options(&sets).await;
                let (set, failed): (Vec<_>, Vec<_>) =
                    sets.into_iter().zip(each).partition(|(_, r)| r.is_ok());
                let set: Vec<_> = set.into_iter().map(|(s, _)| s).collect();
                self.prober.wrote(&set);
                let r = failed.into_iter().next().map_or(Ok(()), |(_, r)| r);
                if let Err(e) = &r {
                    tracing::info!("setting pane options: {e}");
                }
                Msg::OptionsSet(r)
            }
            Effect::Relaunch { plan, meta } => {
                let pane = plan.pane;
                let result = respawn::relaunch(
                    self.tmux(),
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
            Effect::Journal(event) => {
                tracing::info!("{} {} {:?}", event.event, event.pane, event.detail);
                let path = self.journal.as_ref()?;
                let result = crate::adapters::store::journal::append(path, &event).map_err(|e| {
                    tracing::warn!("journal {}: {e}", path.display());
                    format!("journal {} not written: {e}", path.display())
                });
                Msg::Journaled(result)
            }
            Effect::Notify { events, bell_only } => {
                if let Some(cfg) = &self.notify {
                    let cfg = if bell_only {
                        &crate::config::Notify {
                            bell: cfg.bell,
                            desktop: false,
                            on_death: Vec::new(),
                        }
                    } else {
                        cfg
                    };
                    let looking = if cfg.bell || cfg.desktop {
                        self.tmux()
                            .run([
                                "list-clients",
                                "-F",
                                crate::adapters::notify::CLIENTS_FORMAT,
                            ])
                            .await
                            .map(|out| {
                                crate::adapters::notify::looked_at(&String::from_utf8_lossy(&out))
                            })
                            .unwrap_or_default()
                    } else {
                        Default::default()
                    };
                    crate::adapters::notify::announce(cfg, &events, &looking).await;
                }
                return None;
            }
            Effect::Elect => Msg::Elected(match &self.elector {
                Some(e) => e.elect(),
                None => crate::core::msg::Election {
                    mine: true,
                    by: None,
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
                if let Err(e) = self.tmux().run(["set-option", "-s", &name, &value]).await {
                    tracing::warn!("set-option -s {name}: {e}");
                }
                return None;
            }
            Effect::LoadRoster => Msg::RosterLoaded(self.roster.as_deref().and_then(|p| {
                crate::adapters::store::roster::load(p, &self.tmux().socket().display().to_string())
            })),
            Effect::SaveRoster(roster) => {
                if let Some(path) = &self.roster {
                    let socket = self.tmux().socket().display().to_string();
                    if let Err(e) =
                        crate::adapters::store::roster::save(path, &socket, roster.as_ref())
                    {
                        tracing::warn!("saving {}: {e}", path.display());
                    }
                }
                return None;
            }
            Effect::Recreate(plans) => {
                let mut results = Vec::new();
                for p in plans {
                    let cwd = std::path::Path::new(&p.cwd);
                    let r = if cwd.is_dir() {
                        crate::adapters::tmux::window::open_window(
                            self.tmux(),
                            &p.session,
                            &p.window_name,
                            cwd,
                            &p.argv,
                            &p.options,
                        )
                        .await
                    } else {
                        Err(format!("directory {} no longer exists", p.cwd))
                    };
                    tracing::info!("recreating {}: {r:?}", p.target);
                    results.push((p.target, r));
                }
                Msg::Recreated(results)
            }
            Effect::CaptureHistory(pane) => {
                let result = match self.tmux().capture_history(pane).await {
                    Ok(bytes) => {
                        // Parsing a long history is real work: keep it off the loop.
                        tokio::task::spawn_blocking(move || Arc::new(PeekText::from_ansi(&bytes)))
                            .await
                            .map_err(|e| e.to_string())
                    }
                    Err(e) => Err(e.to_string()),
                };
                Msg::History { pane, result }
            }
            Effect::ReadTail(pane) => Msg::Tail {
                pane,
                text: self
                    .tmux()
                    .capture_tail(pane, TAIL_LINES)
                    .await
                    .ok()
                    .map(|b| String::from_utf8_lossy(&b).into_owned()),
            },
            Effect::LoadRecords { pane, session_id } => {
                let dir = self.crash_dir.clone();
                let records = tokio::task::spawn_blocking(move || {
                    dir.map(|d| {
                        crate::adapters::store::crash_records::for_pane(
                            &d,
                            pane,
                            session_id.as_deref(),
                        )
                    })
                    .unwrap_or_default()
                })
                .await
                .unwrap_or_default();
                Msg::Records { pane, records }
            }
            Effect::KillPane(pane) => {
                let target = pane.to_string();
                let result = self
                    .tmux()
                    .run(["kill-pane", "-t", &target])
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string());
                Msg::Closed { pane, result }
            }
            Effect::Jump { pane, client } => Msg::Jumped {
                pane,
                result: self.jump(pane, &client).await,
            },
            Effect::Discover(req) => {
                let pane = req.pane;
                let found = respawn::discover(self.tmux(), &req, &self.stores).await;
                Msg::Discovered { pane, found }
            }
        })
    }
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
        let notices = std::sync::Arc::clone(self.tmux().notices());
        async move { notices.wake.notified().await }
    }
}
