//! The pure core: `State::update(msg, now) -> effects`. Decides everything; does no I/O and
//! never reads the clock.

use std::collections::HashMap;
use std::sync::Arc;

use crate::agent::{Agents, Route, SESSION_ID};
use crate::attention::{AgentFile, Attention, Doing, Report};
use crate::card::{observe, Auto, Card, Judged, Life, Notice, Relaunch, Resumed};
use crate::errors::TmuxError;
use crate::launcher::PaneProcess;
use crate::layout::{geometry, Geometry, Mode};
use crate::msg::{
    Action, CrashMeta, DiscoverRequest, Effect, Election, Log, Msg, Observation, Supervisor,
};
use crate::pane::{Exit, Opt, Pane, PaneId, ProcTree, ServerId};
use crate::resume::{self, Refusal};
use crate::settings::{Config, Order};
use crate::supervisor::Policy;
use crate::text::short_id;
use crate::time::Millis;
use crate::words::command_words;

/// A preview is refreshed at most this often per card.
pub const PREVIEW_MIN_INTERVAL_MS: Millis = 1_000;
/// History read above a dead pane's screen for its preview. Nothing redraws a dead pane: a
/// window made smaller (another client attached, a resize) pushes its top lines, often the
/// last words, into the history, and a screen that was mostly blank shows nothing.
pub const DEAD_PREVIEW_HISTORY: usize = 200;
/// The preview signature of a screen asked for and not given: no pane has it, so the next
/// look after the interval asks again.
const UNANSWERED: (u64, u64, (u32, u32), bool) = (u64::MAX, u64::MAX, (u32::MAX, u32::MAX), true);
/// How often the cards on screen are read whole (their previews change no faster).
pub const SCREEN_READ_MS: Millis = PREVIEW_MIN_INTERVAL_MS;
/// Lines of the list read whole per second, in turn (with the selected one always): a
/// line shows the last line of output, which need not be fresher than a few seconds, and
/// fifty lines read every second would cost tmux more than the cards ever did.
pub const LIST_READ_AT_ONCE: usize = 12;
/// A card on screen whose agent is heard and has not worked since this long before its last
/// whole read is not read whole again until it works (see `polls::settled`): long enough
/// for a supervisor's verdict on its stop to be written.
pub const SETTLED_MS: Millis = 5_000;
/// Two clicks on one card this close together are a double click.
pub const DOUBLE_CLICK_MS: Millis = 500;
/// How long after the first cards are shown the selection follows the first of them
/// (what needs the user most, as the first looks tell); then it moves only by a key.
pub const SELECTION_SETTLE_MS: Millis = 2_000;
/// How long a relaunch result or refusal stays on the card.
pub const NOTICE_MS: Millis = 30_000;
/// How long after a resume by id the agent's word on the session it runs is awaited.
pub const VERIFY_MS: Millis = 10_000;
/// A death this soon after a resume by id may be the agent saying it has no such session.
pub const RESUME_GRACE_MS: Millis = 15_000;
/// How often a live agent without a session id is looked up in its own records.
pub const DISCOVER_LIVE_MS: Millis = 15_000;
/// How far back the journal is read at start, to tell what happened meanwhile.
pub const STORY_MS: Millis = 24 * 3_600_000;
/// How long that story stays on a card.
pub const STORY_NOTICE_MS: Millis = 600_000;

/// The most screens read in one look.
const LOOK_AT_ONCE: usize = 200;

/// A pane's next wait is announced only this long after its last one.
pub const NOTIFY_AGAIN_MS: Millis = 30_000;

#[derive(Debug, Clone)]
pub struct State {
    pub agents: Agents,
    /// The servers watched: the local one, and other hosts' beside it.
    pub servers: Servers,
    pub retain_dead: bool,
    pub cards: Vec<Card>,
    pub grid: Grid,
    pub overlays: Overlays,
    pub(super) reads: Reads,
    pub supervision: Supervision,
    pub story: Story,
    pub lost: Lost,
    pub size: (u16, u16),
    pub quit: bool,
    /// The time of the last message, for relative times on screen.
    pub now: Millis,
    /// Shell names: panes running one host agents typed at their prompt.
    pub shells: Vec<String>,
    /// No screen (the daemon): no previews are fetched.
    pub headless: bool,
    /// The local time zone, for clock times in notices (UTC until the loop sets it).
    pub tz: jiff::tz::TimeZone,
    /// Context windows by model, and the share that marks a full context.
    pub context: crate::settings::Context,
    /// The time zones by name, for a reset time an agent prints in another zone (none until
    /// the loop hands in the system's).
    pub zones: jiff::tz::TimeZoneDatabase,
    /// What the local poller was last told of output times (see [`Effect::Attend`]).
    attending: Option<(bool, Vec<PaneId>)>,
    /// The peek view, when open.
    pub peek: Option<crate::peek_model::Peek>,
    /// The form that starts a new agent (`s`), while open.
    pub start: Option<start::StartForm>,
    /// agentwatch's own pane, when it runs inside the watched server (for `g`).
    pub client: Option<crate::msg::Viewer>,
    /// It runs inside another tmux server than the one it watches: `g` cannot switch
    /// there, and an `attach` typed here would nest one tmux in another.
    pub in_other_tmux: bool,
}

/// Counts for the header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub running: usize,
    /// Running, and waiting for their user (a prompt on screen).
    pub waiting: usize,
    /// Running, at a usage limit.
    pub limited: usize,
    pub dead: usize,
    pub finished: usize,
    /// Dead and waiting for (or under) an auto-resume.
    pub resuming: usize,
    /// Dead, and auto-resume gave up.
    pub gave_up: usize,
    /// Stopped on purpose (SIGTERM, Ctrl-C, a deliberate exit code): not dead, not finished.
    pub stopped: usize,
}

impl State {
    pub fn new(config: &Config, show_all: bool, socket: String, size: (u16, u16)) -> State {
        State {
            agents: config.agents(),
            servers: Servers::new(socket, config.hosts.iter().map(|h| h.name.clone())),
            retain_dead: config.retain_dead,
            cards: Vec::new(),
            grid: Grid::new(config.view, config.order, show_all || config.show_all_panes),
            overlays: Overlays::default(),
            reads: Reads::default(),
            supervision: Supervision {
                elect: false,
                supervising: true,
                supervisor: None,
                took_over: None,
                elect_in_flight: false,
                auto_on: true,
                auto_seen: None,
                auto_wrote: None,
                notes: Vec::new(),
                waits_told: HashMap::new(),
                verdicts: HashMap::new(),
                states: HashMap::new(),
                store_errors: Default::default(),
                policies: config
                    .agents()
                    .all()
                    .iter()
                    .map(|d| {
                        let over = config
                            .agents
                            .get(&d.name)
                            .and_then(|a| a.auto_resume.as_ref());
                        (d.name.clone(), Policy::resolve(&config.auto_resume, over))
                    })
                    .collect(),
                default_policy: Policy::resolve(&config.auto_resume, None),
                pacing: config.auto_resume.pacing(),
                waves: Default::default(),
                continue_margin_ms: config.auto_continue.margin_secs.saturating_mul(1000),
                continue_on: config.auto_continue.enabled,
                continue_text: config.auto_continue.text.clone(),
                continue_flipped: Default::default(),
                firsts: Default::default(),
            },
            story: Story::default(),
            lost: Lost::default(),
            size,
            quit: false,
            now: 0,
            shells: config.shells.clone(),
            headless: false,
            tz: jiff::tz::TimeZone::UTC,
            zones: jiff::tz::TimeZoneDatabase::none(),
            context: config.context.clone(),
            attending: None,
            peek: None,
            start: None,
            client: None,
            in_other_tmux: false,
        }
    }

    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for card in self.cards.iter().filter(|c| c.agent.is_some()) {
            match card.life {
                Life::Running => {
                    c.running += 1;
                    c.waiting += usize::from(card.attention.is(Doing::Waiting));
                    c.limited += usize::from(card.attention.is(Doing::Limited));
                }
                Life::Idle => {}
                l if l.is_finished() => c.finished += 1,
                _ if card.stopped_on_purpose() => c.stopped += 1,
                _ => c.dead += 1,
            }
            match card.auto {
                Auto::Scheduled { .. } | Auto::Resuming { .. } if card.life.is_dead() => {
                    c.resuming += 1
                }
                Auto::Held(crate::supervisor::Hold::GaveUp { .. }) if card.life.is_dead() => {
                    c.gave_up += 1
                }
                _ => {}
            }
        }
        c
    }

    pub fn update(&mut self, msg: Msg, now: Millis) -> Vec<Effect> {
        self.now = now;
        let mut fx = Vec::new();
        match msg {
            Msg::Tick => {
                if !self.lost.roster_asked {
                    self.lost.roster_asked = true;
                    fx.push(Effect::LoadRoster);
                }
                if self.supervision.elect && !self.supervision.elect_in_flight {
                    self.supervision.elect_in_flight = true;
                    fx.push(Effect::Elect);
                }
                if let (false, Some(started), false) =
                    (self.story.journal_asked, self.story.started, self.headless)
                {
                    self.story.journal_asked = true;
                    fx.push(Effect::ReadJournal {
                        since: started.saturating_sub(STORY_MS),
                    });
                }
                self.run_due(now, &mut fx);
                self.release_recreates(now, &mut fx);
                self.ask_spend(now, &mut fx);
                self.poll_all(false, &mut fx);
            }
            Msg::Looked(result) => self.looked(result, now, &mut fx),
            Msg::Spent(read) => self.spend_read(read),
            Msg::Wake => self.poll_all(true, &mut fx),
            Msg::Key(ev) => self.key(ev, now, &mut fx),
            Msg::Mouse(ev) => self.mouse(ev, now, &mut fx),
            Msg::Action(a) => self.act(a, now, &mut fx),
            Msg::Resize { width, height } => {
                self.size = (width, height);
                let h = self.peek_height();
                if let Some(p) = self.peek.as_mut() {
                    p.set_height(h);
                }
            }
            Msg::Output { pane, result } => self.output_read(pane, result),
            Msg::Records { pane, records } => self.records(pane, records),
            Msg::Closed { pane, result } => self.closed(pane, result, now),
            Msg::OrphansEnded { pane, result } => self.orphans_ended(pane, result, now),
            Msg::Jumped { pane, result } => self.jumped(pane, result, now),
            Msg::Polled { server, result } => self.polled(server, result.map(|o| *o), now, &mut fx),
            Msg::RosterLoaded(r) => self.roster_loaded(r),
            Msg::Recreated(results) => self.recreated(results, &mut fx),
            Msg::Started(result) => self.started(result),
            Msg::Screens(result) => {
                let pending = std::mem::take(&mut self.reads.capture_pending);
                match result {
                    Ok(map) => {
                        // The list's preview pane shows more of the selected agent.
                        for card in &mut self.cards {
                            match map.get(&card.pane.id) {
                                Some(text) => {
                                    card.preview =
                                        last_lines(text, self.reads.lines_for(card.pane.id));
                                }
                                // Asked and not answered (its group failed, or the pane
                                // went): asked again, after the usual interval.
                                None if pending.contains(&card.pane.id) => {
                                    card.preview_sig = Some(UNANSWERED);
                                }
                                None => {}
                            }
                        }
                    }
                    Err(_) => {
                        for card in self
                            .cards
                            .iter_mut()
                            .filter(|c| pending.contains(&c.pane.id))
                        {
                            card.preview_sig = None;
                        }
                    }
                }
            }
            Msg::OptionsSet { landed, result } => {
                self.reads.options_in_flight = false;
                self.wrote_on_cards(&landed);
                // Some writes may not have landed: the verdicts and states are written
                // again (the other options are, as the cards do not show them).
                if result.is_err() {
                    self.supervision.forget_said();
                    self.reads.records_at = None;
                }
            }
            Msg::Relaunched { pane, result } => self.relaunched(pane, result, now, &mut fx),
            Msg::Tail {
                pane,
                text,
                oom_killed,
                record,
            } => self.tail_read(pane, text, oom_killed, &record, &mut fx),
            Msg::Stored { what, result } => self.stored(what, result),
            Msg::Discovered { pane, found } => self.discovered(pane, found, &mut fx),
            Msg::Elected(e) => self.elected(e, &mut fx),
            Msg::JournalRead(events) => {
                self.story.past_events = Some(events);
                if self.servers.local().link == Link::Up {
                    self.tell_story();
                }
            }
        }
        self.refilter();
        self.keep_selection_visible();
        self.want_previews(now, &mut fx);
        fx
    }
}

/// A death being handled: its status still to read, a resume due or under way, a
/// relaunch's first seconds. Such a pane is read whole at every poll.
fn handling(c: &Card) -> bool {
    c.life == Life::Reading
        || c.relaunch.is_some()
        || c.resumed.is_some()
        || matches!(c.auto, Auto::Scheduled { .. } | Auto::Resuming { .. })
}

/// The last `n` lines that say something of a captured screen: blank lines and tmux's own
/// "Pane is dead" line dropped, trailing spaces trimmed.
pub fn last_lines(screen: &str, n: usize) -> Vec<String> {
    let lines: Vec<&str> = screen
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !l.starts_with("Pane is dead"))
        .collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].iter().map(|s| s.to_string()).collect()
}

mod absorb;
mod attend;
mod auto;
mod parts;
mod polls;
mod previews;
mod select;
mod servers;
pub use parts::{Grid, Lost, Overlays, Reads, Story, Supervision};
pub use servers::{Link, ServerPoll, Servers};
mod grid;
mod limits;
mod spend;
pub use limits::Limit;
pub use spend::{SpendAsk, Spent, SPEND_EVERY_MS};
pub mod start;
mod story;
pub use story::{story, supervisor_name};
mod launcher;
mod lost;
mod occupancy;
mod pacing;
pub use pacing::Wave;
#[cfg(test)]
mod limit_tests;
mod peek;
mod relaunch;
#[cfg(test)]
mod supervision_tests;
#[cfg(test)]
mod tests;

impl State {
    /// A hash of everything the screen shows. The loop draws only when it changes (the
    /// clock is in it by the second, for "running for 45s"), so an idle dashboard redraws
    /// about once a second, not on every poll.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = crate::quick_hash::QuickHasher::default();
        (self.now / 1000).hash(&mut h);
        (
            self.size,
            self.grid.selected,
            self.grid.scroll,
            self.overlays.show_help,
            self.overlays.help_scroll,
            self.supervision.auto_on,
        )
            .hash(&mut h);
        (
            self.grid.mode,
            &self.grid.filter,
            self.grid.filter_typing,
            self.grid.shown.len(),
        )
            .hash(&mut h);
        (
            &self.supervision.store_errors,
            self.servers.local().malformed,
        )
            .hash(&mut h);
        (
            self.lost.confirm,
            self.lost.hidden,
            self.lost.forget,
            self.lost.results.len(),
        )
            .hash(&mut h);
        (self.supervision.supervising, self.supervision.supervisor).hash(&mut h);
        self.lost
            .roster
            .as_ref()
            .map(|l| l.agents.len())
            .hash(&mut h);
        match &self.servers.local().link {
            Link::Connecting => 0u8.hash(&mut h),
            Link::Up => 1u8.hash(&mut h),
            Link::Down(e) => e.to_string().hash(&mut h),
        }
        if let Some(p) = &self.peek {
            (p.top, p.height, &p.typing, &p.query, p.hit, &p.error).hash(&mut h);
            p.text
                .as_ref()
                .map(|t| (t.len(), std::sync::Arc::as_ptr(t) as usize))
                .hash(&mut h);
            (p.records.len(), p.records_loaded).hash(&mut h);
            matches!(p.source, crate::peek_model::Shown::Live { .. }).hash(&mut h);
        }
        for c in &self.cards {
            let p = &c.pane;
            (
                p.id,
                &p.window_name,
                &p.session,
                p.window_index,
                p.pane_index,
            )
                .hash(&mut h);
            (
                &p.opts.session_id,
                &p.current_path,
                &p.opts.cwd,
                &p.opts.previous,
            )
                .hash(&mut h);
            (
                c.life,
                c.started_at,
                c.died_at,
                &c.notice,
                &c.auto,
                c.relaunch,
            )
                .hash(&mut h);
            (c.budget.paused, c.budget.attempts, &c.preview, &c.agent).hash(&mut h);
            (c.state_word(), c.attention.state().map(|(_, since)| since)).hash(&mut h);
        }
        h.finish()
    }
}
