//! `agentwatch status`: one look at the agents, for status lines and scripts. The same
//! core and adapter as the dashboard, read-only: it changes nothing on the server.

use serde::Serialize;

use crate::adapters::poll::Prober;
use crate::adapters::tmux::client::{kick_server, TmuxError};
use crate::config::Config;
use crate::core::attention::{Doing, Told, Verdict};
use crate::core::card::{Auto, Card, Life};
use crate::core::lease::Claim;
use crate::core::msg::{Effect, Msg};
use crate::core::pane::{Exit, PaneId, ServerId};
use crate::core::state::State;
use crate::core::supervisor::Hold;
use crate::run::Clock;

/// Screens read in one round trip.
const LOOK_AT_ONCE: usize = 200;

/// One agent, as `status --json` prints it. The schema is stable: fields are only added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub pane_id: String,
    /// The host (`[[hosts]]` name) whose server the pane is on; `null`: this machine's.
    pub host: Option<String>,
    pub target: String,
    pub window_name: String,
    /// The agent kind; `None` (JSON `null`) for a pane with no agent, listed only with
    /// `--all`.
    pub agent: Option<String>,
    /// The pane's foreground program as tmux names it (`pane_current_command`): what a pane
    /// with no agent runs.
    pub command: String,
    /// Alive: `working`, `waiting` (a prompt for its user), `idle` (its turn over, at its
    /// input box), `limited` (at its usage limit, see `resets_at`) or `running` (what it
    /// does cannot be told). Dead: `exited`, `killed`,
    /// `finished`, `resuming`, `gave_up`, `unknown`. `not_running`: a shell prompt whose
    /// agent is not running.
    pub state: &'static str,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub session_id: Option<String>,
    pub cwd: String,
    pub attempts: u32,
    /// RFC 3339, UTC.
    pub died_at: Option<String>,
    /// Why a dead agent is not resumed, in the card's words (`not auto-resumed: exit 143
    /// (SIGTERM) is a deliberate stop`, `not auto-resumed: directory /x no longer exists`).
    pub reason: Option<String>,
    /// For `waiting`: the line on its screen (or a hook's reason) that says so (`Do you want
    /// to proceed?`).
    pub waiting_for: Option<String>,
    /// For `waiting`: what its prompt asks, from the lines above its question (`Bash
    /// command · rm -rf build/ · Remove the build directory`), where its screen shows it.
    pub asks: Option<String>,
    /// Why a dead agent stopped: `usage_limit`, `auth`, `overloaded`, `network`,
    /// `out_of_memory`, `resume_rejected`, `deliberate`, `crash` or `unknown` (`null` while
    /// alive, or not read yet). A live agent at a limit (`limited`): `usage_limit`.
    pub cause: Option<&'static str>,
    /// What decided the cause: the exit, and the lines of its output that said so (for
    /// `limited`, the limit's line on its screen).
    pub evidence: Vec<String>,
    /// For a usage limit: when it resets, as the agent said (RFC 3339, UTC).
    pub resets_at: Option<String>,
    /// What it spent, from its own file (claude's transcript, codex's rollout): each
    /// message counted once. `null` where nothing can be read.
    pub tokens: Option<crate::core::spend::Tokens>,
    /// The context it holds now, its window where known, and the share of it.
    pub context: Option<ContextOut>,
    /// The model of its newest message, where its file says.
    pub model: Option<String>,
    /// Its account's rate-limit windows, where its file says (codex).
    pub limits: Vec<LimitOut>,
    /// For `working`, `waiting` and `idle`: since when, as far as agentwatch saw (RFC 3339,
    /// UTC).
    pub since: Option<String>,
    /// For `working`, `waiting` and `idle`: what told (`file`, `hook`, `output`, `screen`).
    pub told: Option<&'static str>,
    /// The process the pane's records are about (the agent's run at a prompt or under a
    /// wrapper, else the pane's process): its pid and, where known, when it started.
    pub occupant: Option<Occupant>,
}

/// The context in use, as `status --json` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextOut {
    pub used: u64,
    pub window: Option<u64>,
    pub percent: Option<u64>,
}

/// One rate-limit window, as `status --json` gives it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LimitOut {
    pub name: String,
    pub used_percent: f64,
    pub window_minutes: Option<u64>,
    /// RFC 3339, UTC.
    pub resets_at: Option<String>,
}

impl Eq for LimitOut {}

/// An agent's process, as `status --json` names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Occupant {
    pub pid: u32,
    /// RFC 3339, UTC; `null` when not known (a process seen only running).
    pub started_at: Option<String>,
}

impl Row {
    /// A crashed agent: what makes `status` exit 1. A pane with no agent never is.
    pub fn is_dead(&self) -> bool {
        self.agent.is_some() && self.ended_badly()
    }

    /// Dead other than by a clean exit, or with an exit status not known.
    fn ended_badly(&self) -> bool {
        matches!(
            self.state,
            "exited" | "killed" | "resuming" | "gave_up" | "unknown"
        )
    }
}

/// A pane with no agent (listed with `--all`): running, or dead as tmux tells it; no
/// supervision words (`resuming`, `gave_up`), which are about agents only.
fn plain_word(card: &Card) -> &'static str {
    match card.life {
        Life::Running | Life::Idle => "running",
        Life::Dead(Exit::Code(0)) => "finished",
        Life::Dead(Exit::Code(_)) => "exited",
        Life::Dead(Exit::Signal(_)) => "killed",
        Life::Dead(Exit::Unknown) | Life::Reading => "unknown",
    }
}

fn state_word(card: &Card, max_attempts: u32) -> &'static str {
    let pending = matches!(card.auto, Auto::Scheduled { .. } | Auto::Resuming { .. })
        || (card.life.is_dead() && card.budget.next_due.is_some());
    match card.life {
        Life::Running => card.state_word(),
        Life::Idle => "not_running",
        Life::Dead(Exit::Code(0)) => "finished",
        _ if pending => "resuming",
        _ if matches!(card.auto, Auto::Held(Hold::GaveUp { .. }))
            || card.budget.attempts >= max_attempts =>
        {
            "gave_up"
        }
        Life::Dead(Exit::Code(_)) => "exited",
        Life::Dead(Exit::Signal(_)) => "killed",
        Life::Dead(Exit::Unknown) | Life::Reading => "unknown",
    }
}

/// One look at the agents, as `status` prints it.
pub struct Snapshot {
    pub rows: Vec<Row>,
    /// Hosts that could not be asked, and why.
    pub down: Vec<(String, TmuxError)>,
    /// Why nobody supervises the server, when nobody does (from the claim in the server,
    /// which the dashboards and the daemon keep): its dead agents are not resumed.
    pub unsupervised: Option<Claim>,
}

/// Looks once (kicking the server for lost exit statuses, as the dashboard does).
/// `all`: every pane, not only agents'.
pub async fn snapshot(
    config: &Config,
    prober: &Prober,
    remotes: &[Prober],
    all: bool,
) -> Result<Snapshot, TmuxError> {
    let now = Clock::start().now();
    let claim = crate::run::elector::look(prober.tmux(), now).await.ok();
    let supervised = claim.as_ref().is_none_or(|c| c.holder().is_some());
    // What the live supervisor decided each agent does, and since when: reported as it is
    // (every reader says the same), not decided again from one look at the screens.
    let held = claim.as_ref().is_some_and(|c| c.holder().is_some());
    let mut state = look_as(config, prober, remotes, all, supervised, held).await?;
    for c in &mut state.cards {
        if let Some(v) = verdict(c, held) {
            take_verdict(c, &v);
        }
    }
    let down = state
        .servers
        .hosts()
        .filter_map(|(_, r)| match &r.link {
            crate::core::state::Link::Down(e) => {
                Some((r.name.clone().unwrap_or_default(), e.clone()))
            }
            _ => None,
        })
        .collect();
    let mut rows = rows(&state, all);
    let unsupervised = claim.filter(|c| c.holder().is_none());
    if let Some(why) = unsupervised.as_ref().and_then(Claim::why_unsupervised) {
        // A dead agent nobody will resume: why, where no other reason is given.
        for r in rows.iter_mut().filter(|r| r.is_dead() && r.host.is_none()) {
            r.reason
                .get_or_insert_with(|| format!("not resumed: {why}"));
        }
    }
    Ok(Snapshot {
        rows,
        down,
        unsupervised,
    })
}

/// The live supervisor's verdict on a pane of this server (through
/// `@agentwatch_verdict_fmt`, read with the pane's other options), where one `held` the claim.
fn verdict(card: &Card, held: bool) -> Option<Verdict> {
    if !held || !card.pane.id.server().is_local() {
        return None;
    }
    Verdict::parse(&card.pane.opts.verdict)
}

/// Whether the supervisor's verdict on a live agent is taken: where the pane option
/// `@agentwatch_state` says the same word (both are written together; a verdict left by a
/// supervisor that is gone says another word, or is not about a live agent).
fn accepted(card: &Card, v: &Verdict) -> bool {
    card.life == Life::Running && card.pane.opts.state == v.doing.word()
}

/// A live agent's state as the supervisor decided it. A `working` verdict gives way to a
/// prompt this look found on its screen: the supervisor says so half a second after the
/// agent stops writing, and this reader may come in between.
fn take_verdict(card: &mut Card, v: &Verdict) {
    if !accepted(card, v) {
        return;
    }
    let prompt = card
        .attention
        .now
        .as_ref()
        .is_some_and(|(r, _)| r.doing == Doing::Waiting && r.told == Told::Screen);
    if v.doing == Doing::Working && prompt {
        return;
    }
    let report = crate::core::attention::Report::new(v.doing, v.told, v.why.clone());
    card.attention.now = Some((report, v.since));
    card.attention.asked = v.asked.clone();
}

/// The core's state after one look: every pane read, the screens of agents seen for the
/// first time read (all of them, or those the supervisor has no verdict on), lost exit
/// statuses kicked for (a few rounds at most).
/// `all`: every pane is a card, not only agents'.
pub async fn look(
    config: &Config,
    prober: &Prober,
    remotes: &[Prober],
    all: bool,
) -> Result<State, TmuxError> {
    look_as(config, prober, remotes, all, true, false).await
}

/// [`look`], judging deaths as the supervisor would (`supervised`), or as nobody does.
async fn look_as(
    config: &Config,
    prober: &Prober,
    remotes: &[Prober],
    all: bool,
    supervised: bool,
    held: bool,
) -> Result<State, TmuxError> {
    let clock = Clock::start();
    let mut state = State::new(
        config,
        all,
        prober.tmux().socket().display().to_string(),
        (200, 50),
    );
    state.supervision.supervising = supervised;
    state.tz = crate::run::time_zone();
    state.zones = jiff::tz::db().clone();
    // Where the dashboard or daemon got to in each file: only what it grew by is read.
    let follower = crate::adapters::spend::Follower::with_cache(
        crate::adapters::spend::Follower::default_cache(),
    );
    for round in 0..6 {
        let obs = prober.observe().await?;
        let now = clock.now();
        state.update(Msg::Tick, now);
        let fx = state.update(Msg::polled(Ok(obs)), now);
        // What each agent spent, once the cards are known: its own file, read whole.
        if round == 0 {
            let asks = state
                .update(Msg::Tick, now)
                .into_iter()
                .find_map(|e| match e {
                    Effect::ReadSpend(asks) => Some(asks),
                    _ => None,
                });
            if let Some(asks) = asks {
                let dirs = crate::adapters::discover::Dirs::default();
                let read = follower.read(&asks, &dirs);
                state.update(Msg::Spent(read), now);
            }
        }
        // Why each dead agent stopped: its last lines, read as the supervisor reads them.
        for e in &fx {
            if let Effect::ReadTail(pane, ask) = e {
                let text = prober
                    .tmux()
                    .capture_tail(*pane, crate::run::io::TAIL_LINES)
                    .await
                    .ok()
                    .map(|b| String::from_utf8_lossy(&b).into_owned());
                state.update(
                    Msg::Tail {
                        pane: *pane,
                        text,
                        oom_killed: false,
                        record: ask
                            .as_ref()
                            .map(|a| {
                                follower.errors_of(a, &crate::adapters::discover::Dirs::default())
                            })
                            .unwrap_or_default(),
                    },
                    now,
                );
            }
        }
        let kick = fx.iter().find_map(|e| match e {
            Effect::Kick {
                server: ServerId::Local,
                pid,
            } => *pid,
            _ => None,
        });
        // Agents seen for the first time: is a prompt for their user on screen? Every one
        // of them (a poll asks for a few hundred at a time), but for those the supervisor
        // has a verdict on.
        if fx.iter().any(|e| matches!(e, Effect::LookAtScreens(_))) {
            // Those it says wait or idle; those it says work are read for a new prompt.
            let settled = |id: &PaneId| {
                let card = state.cards.iter().find(|c| c.pane.id == *id);
                card.and_then(|c| Some((c, verdict(c, held)?)))
                    .is_some_and(|(c, v)| accepted(c, &v) && v.doing != Doing::Working)
            };
            let due: Vec<PaneId> = state
                .looks_due()
                .into_iter()
                .filter(|id| !settled(id))
                .collect();
            for ids in due.chunks(LOOK_AT_ONCE) {
                let asks: Vec<_> = ids.iter().map(|id| (*id, 0)).collect();
                let screens = prober.tmux().capture_screens(&asks).await;
                state.update(Msg::Looked(screens), now);
            }
        }
        let reading = state.cards.iter().any(|c| c.life == Life::Reading);
        if !reading || round == 5 {
            break;
        }
        if let Some(pid) = kick {
            let _ = kick_server(pid);
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    // Other hosts' servers, once each: what their tmux says (a lost status there stays
    // unknown), or why they could not be asked.
    // All at once: a host that does not answer adds its own wait, not the sum.
    let looks = remotes.iter().enumerate().map(|(i, p)| async move {
        let server = ServerId::host(i);
        (
            server,
            p.observe()
                .await
                .map(|o| crate::run::io::on_host(server, o)),
        )
    });
    for (server, result) in futures_util::future::join_all(looks).await {
        let now = clock.now();
        state.update(
            Msg::Polled {
                server,
                result: result.map(Box::new),
            },
            now,
        );
    }
    Ok(state)
}

/// The cards as rows: agents', and with `all` every pane's (not the config's
/// `show_all_panes`, which is the dashboard's: a script's output does not change with it).
fn rows(state: &State, all: bool) -> Vec<Row> {
    state
        .cards
        .iter()
        .filter(|c| c.agent.is_some() || all)
        .map(|c| {
            let max = state.policy(c.agent.as_deref()).max_attempts;
            let (exit_code, signal) = match c.life {
                Life::Dead(Exit::Code(n)) => (Some(n), None),
                Life::Dead(Exit::Signal(n)) => (None, Some(n)),
                _ => (None, None),
            };
            Row {
                pane_id: c.pane.id.to_string(),
                host: state.host_name(c).map(str::to_string),
                target: c.pane.target(),
                window_name: c.pane.window_name.clone(),
                agent: c.agent.clone(),
                command: c.pane.current_command.clone(),
                state: if c.agent.is_some() {
                    state_word(c, max)
                } else {
                    plain_word(c)
                },
                exit_code,
                signal,
                session_id: c
                    .agent
                    .as_deref()
                    .and_then(|a| state.agents.get(a))
                    .and_then(|def| crate::core::resume::known_session_id(c, def).ok().flatten()),
                cwd: c.pane.cwd().to_string(),
                attempts: c.budget.attempts,
                died_at: c
                    .died_at
                    .filter(|_| c.life.is_dead())
                    .map(|t| crate::core::time::rfc3339(t, &jiff::tz::TimeZone::UTC)),
                reason: match &c.auto {
                    _ if c.life.is_dead() && !c.orphans.is_empty() => {
                        crate::core::resume::orphans_words(c)
                            .map(|w| format!("not relaunched: {w}"))
                    }
                    Auto::Held(h) if c.life.is_dead() => {
                        h.reason(c.agent.as_deref().unwrap_or("the agent"))
                    }
                    _ => None,
                },
                waiting_for: c
                    .attention
                    .waiting_for()
                    .filter(|_| c.life == Life::Running)
                    .map(str::to_string),
                asks: c
                    .attention
                    .asks()
                    .filter(|_| c.life == Life::Running)
                    .map(str::to_string),
                cause: stop_of(c).map(|s| s.cause.word()).or_else(|| {
                    (c.life == Life::Running && c.attention.is(Doing::Limited))
                        .then_some(crate::core::cause::Cause::UsageLimit.word())
                }),
                evidence: match (stop_of(c), &c.attention.now) {
                    (Some(s), _) => s.evidence.clone(),
                    (None, Some((v, _))) if v.doing == Doing::Limited => vec![v.why.clone()],
                    _ => Vec::new(),
                },
                resets_at: stop_of(c)
                    .and_then(|s| s.resets_at)
                    .or_else(|| state.limit_resets(c))
                    .map(|t| crate::core::time::rfc3339(t, &jiff::tz::TimeZone::UTC)),
                tokens: c.spend.as_ref().map(|s| s.tokens),
                context: c.spend.as_ref().and_then(|s| {
                    let window = state.context_window(s);
                    Some(ContextOut {
                        used: s.context?,
                        window,
                        percent: s.percent(window),
                    })
                }),
                model: c.spend.as_ref().and_then(|s| s.model.clone()),
                limits: c
                    .spend
                    .as_ref()
                    .map(|s| {
                        s.limits
                            .iter()
                            .map(|w| LimitOut {
                                name: w.name.clone(),
                                used_percent: w.used_percent,
                                window_minutes: w.window_minutes,
                                resets_at: w.resets_at.map(|t| {
                                    crate::core::time::rfc3339(t, &jiff::tz::TimeZone::UTC)
                                }),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                since: c
                    .attention
                    .state()
                    .filter(|_| c.life == Life::Running)
                    .map(|(_, t)| crate::core::time::rfc3339(t, &jiff::tz::TimeZone::UTC)),
                told: c
                    .attention
                    .now
                    .as_ref()
                    .filter(|_| c.life == Life::Running)
                    .map(|(v, _)| v.told.word()),
                occupant: c.occupant_pid().map(|pid| Occupant {
                    pid,
                    started_at: c
                        .known_start()
                        .map(|t| crate::core::time::rfc3339(t, &jiff::tz::TimeZone::UTC)),
                }),
            }
        })
        .collect()
}

/// Why a dead agent stopped, once known.
fn stop_of(card: &Card) -> Option<&crate::core::cause::Stop> {
    card.stop.as_ref().filter(|_| card.life.is_dead())
}

/// The aligned text table.
pub fn table(rows: &[Row]) -> String {
    let header = [
        "PANE", "TARGET", "AGENT", "STATE", "EXIT", "SESSION", "ATTEMPTS", "CWD",
    ];
    // Another host's pane: its target says where (`box:main:1.0` would read as a session).
    let target = |r: &Row| match &r.host {
        Some(h) => format!("{h}/{}", r.target),
        None => r.target.clone(),
    };
    let mut lines: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for r in rows {
        let exit = match (r.exit_code, r.signal) {
            (Some(c), _) => c.to_string(),
            (_, Some(s)) => {
                crate::core::pane::signal_name(s).map_or(format!("signal {s}"), str::to_string)
            }
            _ if r.ended_badly() => "?".into(),
            _ => "-".into(),
        };
        let row = [
            r.pane_id.clone(),
            target(r),
            r.agent.clone().unwrap_or_else(|| "-".into()),
            r.state.to_string(),
            exit,
            r.session_id
                .as_deref()
                .map_or("-".into(), |s| s.chars().take(8).collect()),
            r.attempts.to_string(),
            r.cwd.clone(),
        ];
        // What a pane says goes to a terminal: no raw escapes, no line split in a row.
        lines.push(
            row.iter()
                .map(|c| crate::core::text::printable(c))
                .collect(),
        );
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for l in &lines {
        let cells: Vec<String> = l
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i + 1 == l.len() {
                    c.clone()
                } else {
                    format!("{c:<w$}", w = widths[i])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_prints_no_raw_control_bytes_and_one_line_per_agent() {
        let hostile = "/w/\u{1b}]0;pwned\u{7}x\ny\u{1b}[2J\u{9b}z";
        let row = Row {
            pane_id: "%1".into(),
            host: None,
            target: "s\u{1b}[31m:0.0".into(),
            window_name: "w".into(),
            agent: Some("claude".into()),
            command: "claude".into(),
            state: "exited",
            exit_code: Some(1),
            signal: None,
            session_id: Some("\u{7}\u{1b}abcdefgh".into()),
            cwd: hostile.into(),
            attempts: 0,
            died_at: None,
            reason: None,
            waiting_for: Some("\u{1b}]0;x\u{7}Do you want to proceed?".into()),
            asks: None,
            cause: None,
            evidence: Vec::new(),
            resets_at: None,
            tokens: None,
            context: None,
            model: None,
            limits: Vec::new(),
            since: None,
            told: None,
            occupant: None,
        };
        let out = table(std::slice::from_ref(&row));
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
        assert_eq!(out.lines().count(), 2, "{out:?}");
        assert!(out.contains("/w/?]0;pwned?x?y?[2J?z"), "{out:?}");
        // JSON stays exact.
        let json = serde_json::to_string(&row).unwrap();
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["cwd"], hostile);
    }
}
