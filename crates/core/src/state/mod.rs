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
/// Two clicks on one card this close together are a double click.
pub const DOUBLE_CLICK_MS: Millis = 500;
/// How long a relaunch result or refusal stays on the card.
pub const NOTICE_MS: Millis = 30_000;
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
    /// What the local poller was last told of output times (see [`Effect::Attend`]).
    attending: Option<bool>,
    /// The peek view, when open.
    pub peek: Option<crate::peek_model::Peek>,
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
    pub dead: usize,
    pub finished: usize,
    /// Dead and waiting for (or under) an auto-resume.
    pub resuming: usize,
    /// Dead, and auto-resume gave up.
    pub gave_up: usize,
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
                elect_in_flight: false,
                auto_on: true,
                auto_seen: None,
                auto_wrote: None,
                notes: Vec::new(),
                waits_told: HashMap::new(),
                journal_error: None,
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
            },
            story: Story::default(),
            lost: Lost::default(),
            size,
            quit: false,
            now: 0,
            shells: config.shells.clone(),
            headless: false,
            tz: jiff::tz::TimeZone::UTC,
            attending: None,
            peek: None,
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
                }
                Life::Idle => {}
                l if l.is_finished() => c.finished += 1,
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

    pub fn selected_index(&self) -> Option<usize> {
        let id = self.grid.selected?;
        self.cards.iter().position(|c| c.pane.id == id)
    }

    /// How the shown cards are laid out now.
    pub fn geometry(&self) -> Geometry {
        geometry(
            self.size.0,
            self.size.1,
            self.grid.shown.len(),
            self.grid.mode,
        )
    }

    /// The positions in [`State::shown`] of the cards on screen.
    pub fn page(&self) -> std::ops::Range<usize> {
        let g = self.geometry();
        let n = self.grid.shown.len();
        let start = (self.grid.scroll * g.cols).min(n);
        start..(start + g.per_page()).min(n)
    }

    /// Indices of the cards on screen, in screen order.
    pub fn visible(&self) -> impl Iterator<Item = usize> + '_ {
        self.grid.shown[self.page()].iter().copied()
    }

    /// Where the selected card is among those shown.
    pub fn selected_pos(&self) -> Option<usize> {
        let i = self.selected_index()?;
        self.grid.shown.iter().position(|&j| j == i)
    }

    /// Which cards the filter lets through, in order; the selection moves to the first of
    /// them when its card is filtered out.
    fn refilter(&mut self) {
        let words: Vec<String> = self
            .grid
            .filter
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        self.grid.shown.clear();
        let home = self.grid.home.as_deref();
        let mut shown = std::mem::take(&mut self.grid.shown);
        shown.extend(
            self.cards
                .iter()
                .enumerate()
                .filter(|(_, c)| {
                    let host = self.host_name(c);
                    words.iter().all(|w| c.matches(w, home, host))
                })
                .map(|(i, _)| i),
        );
        self.grid.shown = shown;
        // The card chosen before the filter hid it comes back with it.
        if let Some(id) = self.grid.hidden_choice {
            if self.grid.shown.iter().any(|&i| self.cards[i].pane.id == id) {
                self.grid.selected = Some(id);
                self.grid.hidden_choice = None;
            } else if !self.cards.iter().any(|c| c.pane.id == id) {
                self.grid.hidden_choice = None;
            }
        }
        if self.selected_pos().is_none() && self.grid.chosen && self.grid.hidden_choice.is_none() {
            self.grid.hidden_choice = self.grid.selected;
        }
        if !self.grid.chosen || self.selected_pos().is_none() {
            self.grid.selected = self.grid.shown.first().map(|&i| self.cards[i].pane.id);
        }
    }

    /// The local server is not answering.
    pub fn is_stale(&self) -> bool {
        self.servers.local().is_down()
    }

    /// Asks for a poll of `server` unless one is under way; then, with `again`, it is
    /// polled again as soon as that one answers. Each server is polled on its own, so a slow
    /// or unreachable one holds up nobody.
    fn poll(&mut self, server: ServerId, again: bool, fx: &mut Vec<Effect>) {
        let Some(s) = self.servers.get_mut(server) else {
            return;
        };
        if s.poll_in_flight {
            s.poll_again |= again;
            return;
        }
        s.poll_in_flight = true;
        let hot = self.hot(server);
        fx.push(Effect::Poll { server, hot });
    }

    /// Polls every server: the local one as the tick does (a poll under way is enough),
    /// the others as soon as they answer.
    fn poll_all(&mut self, local_again: bool, fx: &mut Vec<Effect>) {
        for server in self.servers.ids() {
            self.poll(server, local_again || !server.is_local(), fx);
        }
    }

    /// The panes of `server` to read whole this poll: the deaths being handled (a status
    /// still to read, a resume due or under way, a relaunch's first seconds) every time,
    /// and the cards on screen once a second (their previews follow output, cursor and names
    /// no faster). Every question wakes a tmux server of 1000 panes for a pass over all of
    /// them.
    fn hot(&mut self, server: ServerId) -> Vec<PaneId> {
        // The cards may have changed since the last message (this look's deaths).
        self.refilter();
        let read_at = self.servers.get(server).map_or(0, |s| s.screen_read_at);
        let due = self.now.saturating_sub(read_at) >= SCREEN_READ_MS;
        let on_screen: Vec<usize> = if self.headless || !due {
            Vec::new()
        } else if self.geometry().list && server.is_local() {
            let page: Vec<usize> = self.visible().collect();
            let n = page.len().max(1);
            let from = self.reads.list_read_from % n;
            self.reads.list_read_from = from + LIST_READ_AT_ONCE;
            (0..LIST_READ_AT_ONCE.min(page.len()))
                .map(|k| page[(from + k) % n])
                .chain(self.selected_index())
                .collect()
        } else if self.geometry().list {
            // Another host's lines in the list: its selected line only; the others' last
            // lines follow what the brief listing says changed.
            self.selected_index().into_iter().collect()
        } else {
            self.visible().collect()
        };
        let Some(s) = self.servers.get_mut(server) else {
            return Vec::new();
        };
        if on_screen
            .iter()
            .any(|&i| self.cards[i].pane.id.server() == server)
        {
            s.screen_read_at = self.now;
        }
        let reread = std::mem::take(&mut s.reread);
        self.cards
            .iter()
            .enumerate()
            .filter(|(i, c)| {
                c.pane.id.server() == server
                    && (on_screen.contains(i) || reread.contains(&c.pane.id) || handling(c))
            })
            .map(|(_, c)| c.pane.id)
            .collect()
    }

    /// Whether a card's state may be out of date: its server is not answering.
    pub fn card_stale(&self, card: &Card) -> bool {
        self.servers
            .get(card.pane.id.server())
            .is_some_and(ServerPoll::is_down)
    }

    /// The name of the host a card's pane is on; `None` for the local server.
    pub fn host_name(&self, card: &Card) -> Option<&str> {
        self.servers
            .get(card.pane.id.server())
            .and_then(|s| s.name.as_deref())
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
                self.poll_all(false, &mut fx);
            }
            Msg::Looked(result) => self.looked(result, now, &mut fx),
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
            Msg::Jumped { pane, result } => self.jumped(pane, result, now),
            Msg::Polled { server, result } => self.polled(server, result, now, &mut fx),
            Msg::RosterLoaded(r) => self.roster_loaded(r),
            Msg::Recreated(results) => self.recreated(results, &mut fx),
            Msg::Screens(result) => {
                let pending = std::mem::take(&mut self.reads.capture_pending);
                match result {
                    Ok(map) => {
                        for card in &mut self.cards {
                            match map.get(&card.pane.id) {
                                Some(text) => {
                                    card.preview = last_lines(text, self.reads.preview_lines);
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
            Msg::OptionsSet(_) => self.reads.options_in_flight = false,
            Msg::Relaunched { pane, result } => self.relaunched(pane, result, now, &mut fx),
            Msg::Tail { pane, text } => self.tail_read(pane, text, &mut fx),
            Msg::Journaled(result) => self.supervision.journal_error = result.err(),
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

    /// The answer to a poll of `server`.
    fn polled(
        &mut self,
        server: ServerId,
        result: Result<Observation, TmuxError>,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        let Some(s) = self.servers.get_mut(server) else {
            return;
        };
        s.poll_in_flight = false;
        match (server, result) {
            (ServerId::Local, Ok(obs)) => {
                s.link = Link::Up;
                self.absorb(server, obs, now, fx);
            }
            (ServerId::Local, Err(e)) => {
                s.poll_again = false;
                self.server_failed(&e, now, fx);
                self.servers.local_mut().link = Link::Down(e);
            }
            (ServerId::Host(_), Ok(obs)) => {
                let name = s.name.clone().unwrap_or_default();
                if let Some(since) = s.down_since.take() {
                    fx.push(Effect::Log(Log::info(format!(
                        "{name}: answering again (down since {since})"
                    ))));
                }
                s.link = Link::Up;
                let pid = obs.listing.server_pid;
                let restarted = matches!((s.server_pid, pid), (Some(a), Some(b)) if a != b);
                s.server_pid = pid.or(s.server_pid);
                if restarted {
                    self.forget_host(server, "its tmux server was started again", now, fx);
                }
                self.absorb(server, obs, now, fx);
            }
            (ServerId::Host(_), Err(e)) => {
                if s.down_since.is_none() {
                    let name = s.name.as_deref().unwrap_or_default();
                    fx.push(Effect::Log(Log::warn(format!("{name}: {e}"))));
                }
                s.down_since.get_or_insert(now);
                let gone = matches!(e, TmuxError::NoServer { .. });
                s.link = Link::Down(e);
                // The host answers, its server is gone: so are its panes.
                if gone {
                    s.server_pid = None;
                    self.forget_host(server, "its tmux server is gone", now, fx);
                }
            }
        }
        let again = self
            .servers
            .get_mut(server)
            .is_some_and(|s| std::mem::take(&mut s.poll_again));
        if again {
            self.poll(server, false, fx);
        }
    }

    /// Another host's server went (or was started again): its cards go, never handed to the
    /// new server's panes that reuse their ids. Journaled once, by the supervisor, as the
    /// local server's loss is.
    fn forget_host(&mut self, server: ServerId, why: &str, now: Millis, fx: &mut Vec<Effect>) {
        let lost = self
            .cards
            .iter()
            .filter(|c| c.pane.id.server() == server && c.agent.is_some())
            .count();
        self.cards.retain(|c| c.pane.id.server() != server);
        self.overlays.closing.retain(|id| id.server() != server);
        if self
            .peek
            .as_ref()
            .is_some_and(|p| p.pane.server() == server)
        {
            self.peek = None;
        }
        let Some(s) = self.servers.get_mut(server) else {
            return;
        };
        s.listed = Some(std::collections::HashSet::new());
        let name = s.name.clone().unwrap_or_default();
        let lost_words = crate::text::counted(lost, "agent", "agents");
        fx.push(Effect::Log(Log::warn(format!(
            "{name}: {why}: {lost_words} lost"
        ))));
        if self.supervision.supervising && lost > 0 {
            fx.push(Effect::Journal(crate::msg::Event {
                ts: now,
                event: "server_gone".into(),
                host: Some(name),
                detail: Some(format!("{why}: {lost_words} lost")),
                ..Default::default()
            }));
        }
    }

    /// Folds a look at one server into the cards: that server's cards are made anew from
    /// it, the others' are left as they are.
    fn absorb(&mut self, srv: ServerId, mut obs: Observation, now: Millis, fx: &mut Vec<Effect>) {
        let activity = std::mem::take(&mut obs.activity);
        let files = std::mem::take(&mut obs.agent_files);
        let trees = Arc::clone(&obs.tree);
        let malformed = self.servers.get(srv).map_or(0, |s| s.malformed);
        if obs.listing.malformed != malformed {
            if obs.listing.malformed > 0 {
                fx.push(Effect::Log(Log::warn(format!(
                    "{} pane record(s) in tmux's listing did not parse and were skipped",
                    obs.listing.malformed
                ))));
            } else {
                fx.push(Effect::Log(Log::info("every pane record parses again")));
            }
        }
        if let Some(s) = self.servers.get_mut(srv) {
            s.malformed = obs.listing.malformed;
        }
        let (mine, others): (Vec<Card>, Vec<Card>) = std::mem::take(&mut self.cards)
            .into_iter()
            .partition(|c| c.pane.id.server() == srv);
        let mut old: HashMap<PaneId, Card> = mine.into_iter().map(|c| (c.pane.id, c)).collect();
        let selected_pos = self
            .grid
            .selected
            .and_then(|id| old.get(&id).map(Card::place));
        let listed: std::collections::HashSet<PaneId> =
            obs.listing.panes.iter().map(|p| p.id).collect();
        let mut cards = Vec::with_capacity(obs.listing.panes.len());
        let mut marks = Vec::new();
        self.overlays
            .closing
            .retain(|id| id.server() != srv || listed.contains(id));
        for pane in obs.listing.panes {
            if self.overlays.closing.contains(&pane.id) {
                continue;
            }
            let fg = obs.foreground.get(&pane.id).map(Vec::as_slice);
            let comm = obs.comm.get(&pane.id).map(String::as_str).unwrap_or("");
            let procs = obs.tree.get(&pane.id);
            let tree = procs.map(|t| t.below.as_slice()).unwrap_or(&[]);
            let own = fg.or_else(|| procs.map(|t| t.own.as_slice()).filter(|a| !a.is_empty()));
            let prev = old.remove(&pane.id);
            let host = prev.as_ref().and_then(|c| c.launcher.as_ref());
            let before = crate::agent::Before {
                hosted: host.is_some_and(|h| h.alive) || pane.exited_mark().is_some(),
                prompt: host.is_none_or(|h| h.prompt),
            };
            let routed =
                crate::agent::route(&self.agents, &self.shells, &pane, comm, own, tree, before);
            if let Route::Hosted {
                prompt,
                agent,
                kind,
            } = routed
            {
                let hosting = PaneProcess {
                    name: comm.trim_start_matches('-'),
                    prompt,
                    argv: own,
                    kind: kind.map(|d| d.name.as_str()),
                    background: procs.map(|t| t.background.as_slice()).unwrap_or(&[]),
                };
                let started = obs.started.get(&pane.id).copied();
                if let Some(card) =
                    self.host_card(prev, pane, &hosting, agent, started, now, &mut marks)
                {
                    cards.push(card);
                }
                continue;
            }
            let agent = self.agents.recognise(&pane, own).map(|d| d.name.clone());
            if agent.is_none()
                && !self.grid.show_all
                && prev.as_ref().is_none_or(|c| c.agent.is_none())
            {
                continue;
            }
            let started = obs.started.get(&pane.id).copied();
            // A pane that was not there at the last look was born while we watched, however
            // quickly it died: its death is news, not an old one.
            let listed = self.servers.get(srv).and_then(|s| s.listed.as_ref());
            let born = listed.is_some_and(|l| !l.contains(&pane.id));
            let mut card = observe(prev, pane, agent, started, now);
            if born && card.pane.dead && !card.seen_alive {
                card.seen_alive = true;
                card.died_at = card.died_at.or(Some(now));
            }
            if card.pane.dead {
                // The pane died after (or with) the agent its process hosted: the host is
                // gone, nothing can be typed there, and tmux has the pane's status.
                if let Some(h) = card.launcher.as_mut() {
                    h.alive = false;
                    h.prompt = false;
                }
            }
            if let Some(argv) = obs.foreground.get(&card.pane.id) {
                let kind = card.agent.as_deref().unwrap_or_default();
                card.argv_id = crate::agent::session_id_from_argv(kind, argv).or(card.argv_id);
            }
            cards.push(card);
        }
        cards.extend(others);
        self.cards = cards;
        self.sort_cards();
        if self.supervision.waits_told.len() > self.cards.len() {
            let ids: std::collections::HashSet<PaneId> =
                self.cards.iter().map(|c| c.pane.id).collect();
            self.supervision.waits_told.retain(|id, _| ids.contains(id));
        }
        if let Some(s) = self.servers.get_mut(srv) {
            s.listed = Some(listed);
        }
        // Agent panes that vanished while their agent ran: never silence. (Not when a
        // record did not parse: that pane may still be there.)
        if self.supervision.supervising && obs.listing.malformed == 0 {
            let mut gone: Vec<Card> = old
                .into_values()
                .filter(|c| c.agent.is_some() && !c.pane.dead && c.life == Life::Running)
                .collect();
            gone.sort_by_key(|c| c.pane.id.0);
            for c in gone {
                let mut ev = self.event(&c, "gone", now);
                ev.detail = Some(if c.pane.remain_on_exit {
                    "the pane was closed while its agent ran".into()
                } else {
                    "the pane closed before agentwatch could keep it (remain-on-exit): its exit and output are lost".into()
                });
                fx.push(Effect::Log(Log::warn(format!(
                    "{}: {}",
                    c.pane.id,
                    ev.detail.as_deref().unwrap_or_default()
                ))));
                fx.push(Effect::Journal(ev));
            }
        }
        if !marks.is_empty() {
            fx.push(Effect::SetOptions(marks));
        }

        // Keep the selection on the same pane, or the one that took its place.
        if self.selected_index().is_none() {
            self.select_in_place_of(selected_pos);
        }

        // Lost SIGCHLD: kick the server and look again at once (another host's server is
        // asked to signal itself).
        let due: Vec<usize> = (0..self.cards.len())
            .filter(|&i| self.cards[i].pane.id.server() == srv && self.cards[i].kick_due(now))
            .collect();
        let kick = match (srv, obs.listing.server_pid) {
            (ServerId::Local, None) => None,
            (server, pid) => Some(Effect::Kick { server, pid }),
        };
        if let (false, Some(kick)) = (due.is_empty(), kick) {
            for i in due {
                self.cards[i].kicks += 1;
                self.cards[i].kicked_at = Some(now);
            }
            fx.push(kick);
            match srv {
                ServerId::Local => self.poll(srv, false, fx),
                host => {
                    if let Some(s) = self.servers.get_mut(host) {
                        s.poll_again = true;
                    }
                }
            }
        }

        if srv.is_local() {
            self.follow_server_auto(&obs.listing.auto_all);
        }
        self.attend(srv, &activity, &files, &trees, now, fx);
        self.want_discovery(now, fx);
        self.supervise(now, fx);
        self.tell_story();
        self.prune_lost(fx);
        if !self.supervision.notes.is_empty() {
            fx.push(Effect::Notify {
                events: std::mem::take(&mut self.supervision.notes),
                bell_only: !self.supervision.supervising,
            });
        }
        if !self.reads.options_in_flight {
            let sets = self.option_writes();
            if !sets.is_empty() {
                self.reads.options_in_flight = true;
                fx.push(Effect::SetOptions(sets));
            }
        }
    }

    /// What tmux forgets at death, recorded while the agent pane is alive; and
    /// remain-on-exit so its output outlives it.
    fn option_writes(&self) -> Vec<(PaneId, Opt, String)> {
        let mut sets = Vec::new();
        for card in &self.cards {
            let Some(kind) = &card.agent else {
                continue;
            };
            // A server that does not answer is written to when it does.
            if !card.pane.id.server().is_local() && self.card_stale(card) {
                continue;
            }
            let p = &card.pane;
            let mut set = |k: Opt, v: &str| sets.push((p.id, k, v.to_string()));
            // The id named on the command line is worth recording even on a dead pane (only
            // for kinds that have ids: no command line is parsed every poll for nothing).
            let def = self
                .agents
                .get(kind)
                .filter(|d| d.id != crate::agent::IdShape::None);
            if let (true, Some(def)) = (p.opts.session_id.is_empty(), def) {
                if let Some(id) = resume::named_session_id(card).filter(|id| def.id.accepts(id)) {
                    set(Opt::SessionId, &id);
                }
            }
            // What the agent does, for tmux status lines: by the supervisor only (dashboards
            // beside it would race it).
            if self.supervision.supervising {
                let word = card.state_word();
                if p.opts.state != word {
                    set(Opt::State, word);
                }
            }
            if p.dead {
                continue;
            }
            // Not for a shell typed at: its pane ends when the user ends the shell.
            if self.retain_dead
                && !p.remain_on_exit
                && card.launcher.as_ref().is_none_or(|h| !h.prompt)
            {
                set(Opt::RemainOnExit, "on");
            }
            if &p.opts.agent != kind {
                set(Opt::Agent, kind);
            }
            if !p.current_path.is_empty() && p.current_path != p.opts.cwd {
                set(Opt::Cwd, &p.current_path);
            }
        }
        sets
    }

    /// What each live agent does: its window's output time and a hook's pane options as
    /// read this poll, and the screen of one whose output stopped, read once until it
    /// writes again.
    /// What the look at server `srv` tells of its live agents (its files, hooks and output
    /// times are about its cards only; another server's are told by its own look).
    fn attend(
        &mut self,
        srv: ServerId,
        activity: &HashMap<PaneId, u64>,
        files: &HashMap<u32, AgentFile>,
        trees: &HashMap<PaneId, Arc<ProcTree>>,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        let mut look = Vec::new();
        for card in &mut self.cards {
            if card.pane.id.server() != srv {
                continue;
            }
            if card.agent.is_none() || card.life != Life::Running {
                if *card.attention != Attention::default() {
                    *card.attention = Attention::default();
                }
                continue;
            }
            let a = &mut card.attention;
            // The agent's own file, about the pane's process or one in its foreground.
            let below = trees
                .get(&card.pane.id)
                .map(|t| &t.below[..])
                .unwrap_or(&[]);
            let file = card
                .pane
                .pid
                .into_iter()
                .chain(below.iter().map(|p| p.pid))
                .find_map(|pid| files.get(&pid).map(|f| (pid, f)));
            a.file_says(file.map(|(pid, _)| pid), file.and_then(|(_, f)| f.report()));
            a.hook_says(&card.pane.hook_status, &card.pane.hook_reason, now);
            if let Some(&output) = activity.get(&card.pane.id) {
                a.saw_output(output, now);
            }
            // Due whether or not this poll read its output time; its own word needs no look
            // at its screen.
            if a.look_due() && a.file.is_none() && !self.reads.look_in_flight {
                look.push(card.pane.id);
            }
        }
        self.settle_attention(now, fx);
        // A few screens at a time: a thousand quiet agents seen at once are read over a few
        // polls, not held in memory together (the rest are still due at the next poll).
        look.truncate(LOOK_AT_ONCE);
        if !look.is_empty() {
            self.reads.look_in_flight = true;
            fx.push(Effect::LookAtScreens(look));
        }
    }

    /// Decides again what each live agent does; each edge is announced (into waiting) and
    /// journaled; the cards take their places in the order.
    fn settle_attention(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        let mut edges = Vec::new();
        for card in &mut self.cards {
            let first = card.attention.now.is_none();
            if let Some(edge) = card.attention.settle(now, card.started_at) {
                fx.push(Effect::Log(Log::info(format!(
                    "{}: {}",
                    card.pane.id,
                    edge.as_ref().map_or("not known".to_string(), |v| format!(
                        "{} ({}: {})",
                        v.doing.word(),
                        v.told.describe(),
                        v.why
                    ))
                ))));
                edges.push((card.pane.id, edge, first));
            }
        }
        for (id, edge, first) in edges {
            self.attention_edge(id, edge, first, now, fx);
        }
        // Output times are wanted often while an agent works or waits (to see it stop, or
        // its prompt answered) with no state file of its own, or is not read yet. Of the
        // local server: the word goes to its poller; other hosts are listed every 2 s.
        let often = self.cards.iter().any(|c| {
            c.pane.id.server().is_local()
                && c.agent.is_some()
                && c.life == Life::Running
                && c.attention.file.is_none()
                && (c.attention.output.is_none()
                    || !c.attention.looked
                    || c.attention.recheck.is_some()
                    || matches!(
                        c.attention.state(),
                        Some((Doing::Working | Doing::Waiting, _))
                    ))
        });
        if self.attending != Some(often) {
            self.attending = Some(often);
            fx.push(Effect::Attend(often));
        }
        self.reorder(now);
    }

    /// An agent began working, waiting or idling (or it can no longer be told): announced
    /// by every instance when it waits (the bell of a dashboard that does not supervise),
    /// journaled by the supervising instance only (one line per edge, however many
    /// dashboards are open).
    /// `first`: nothing was known of the agent before (it was just seen, or agentwatch just
    /// started).
    fn attention_edge(
        &mut self,
        id: PaneId,
        edge: Option<Report>,
        first: bool,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        let Some(v) = edge else {
            return;
        };
        let Some(card) = self.cards.iter().find(|c| c.pane.id == id) else {
            return;
        };
        let mut ev = self.event(card, v.doing.word(), now);
        ev.detail = Some(v.why.clone());
        // What the pane option already says, of an agent just seen, is where things stood
        // when this instance started (the supervisor before it wrote it): no news.
        let known = card.pane.opts.state == v.doing.word();
        // Once per wait, and not again for a pane that asked within NOTIFY_AGAIN_MS: an
        // agent asking one question after another while its user answers them is one call.
        if v.doing == Doing::Waiting && !(first && known) {
            let last = self.supervision.waits_told.insert(id, now);
            if last.is_none_or(|t| now.saturating_sub(t) >= NOTIFY_AGAIN_MS) {
                self.supervision.notes.push(ev.clone());
            }
        }
        // Not again what the pane option already says: a supervisor that starts again (or
        // takes over) finds the agents as the last one left them, and that is no edge.
        if self.supervision.supervising && !known {
            fx.push(Effect::Journal(ev));
        }
    }

    fn looked(
        &mut self,
        result: Result<HashMap<PaneId, String>, TmuxError>,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        self.reads.look_in_flight = false;
        let Ok(screens) = result else {
            return;
        };
        for card in &mut self.cards {
            let Some(screen) = screens.get(&card.pane.id) else {
                continue;
            };
            let def = card.agent.as_deref().and_then(|k| self.agents.get(k));
            card.attention
                .looked_at(def.and_then(|d| d.screen_says(screen)));
            if let Some(s) = self.servers.get_mut(card.pane.id.server()) {
                s.reread.insert(card.pane.id);
            }
        }
        self.settle_attention(now, fx);
    }

    /// Each card's place in the attention order settled at `now`, and the cards sorted.
    fn reorder(&mut self, now: Millis) {
        for card in &mut self.cards {
            card.settle_rank(now);
        }
        // The selection follows in refilter, at the end of the update.
        self.sort_cards();
    }

    /// What needs its user first (dead, waiting, idle, working), each rank in tmux's order
    /// (session, window, pane); or tmux's order alone, as configured.
    fn sort_cards(&mut self) {
        let attention = self.grid.order == Order::Attention;
        // The local server's panes first, then each host's, in the order of [[hosts]].
        fn key(c: &Card, attention: bool) -> (u8, ServerId, &str, u32, u32) {
            (
                if attention { c.order.0 } else { 0 },
                c.pane.id.server(),
                &c.pane.session,
                c.pane.window_index,
                c.pane.pane_index,
            )
        }
        // Mostly in order already: checked first, for a sort moves whole cards.
        if !self
            .cards
            .is_sorted_by(|a, b| key(a, attention) <= key(b, attention))
        {
            self.cards
                .sort_by(|a, b| key(a, attention).cmp(&key(b, attention)));
        }
    }

    fn want_previews(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        if !self.reads.capture_pending.is_empty() || self.headless {
            return;
        }
        // Taller cards (or the list's one line) want another number of lines: read again.
        let lines = self.geometry().preview_lines();
        if lines != self.reads.preview_lines {
            self.reads.preview_lines = lines;
            for card in &mut self.cards {
                card.preview_sig = None;
            }
        }
        let mut ids = Vec::new();
        let page = self.page();
        for &i in &self.grid.shown[page] {
            // A server that does not answer has no screens to give.
            if self.card_stale(&self.cards[i]) {
                continue;
            }
            let card = &mut self.cards[i];
            let sig = card.signature();
            let due = card.preview_sig.is_none()
                || (card.preview_sig != Some(sig)
                    && now.saturating_sub(card.preview_at) >= PREVIEW_MIN_INTERVAL_MS);
            if due {
                card.preview_sig = Some(sig);
                card.preview_at = now;
                let history = if card.pane.dead {
                    lines + DEAD_PREVIEW_HISTORY
                } else {
                    lines
                };
                ids.push((card.pane.id, history));
            }
        }
        if !ids.is_empty() {
            self.reads.capture_pending = ids.iter().map(|(id, _)| *id).collect();
            fx.push(Effect::CaptureScreens { panes: ids });
        }
    }

    fn act(&mut self, a: Action, now: Millis, fx: &mut Vec<Effect>) {
        if self.overlays.show_help {
            // A help taller than the terminal scrolls, within its lines.
            let total = crate::help::lines(self, self.size.0).len();
            let page = crate::help::shown(total, self.size.1).max(1);
            let end = total - page.min(total);
            let s = self.overlays.help_scroll.min(end);
            self.overlays.help_scroll = match a {
                Action::Help | Action::Back => {
                    self.overlays.show_help = false;
                    s
                }
                Action::Quit => {
                    self.quit = true;
                    s
                }
                Action::Down => s + 1,
                Action::Up => s.saturating_sub(1),
                Action::PageDown => s + page,
                Action::PageUp => s.saturating_sub(page),
                Action::First => 0,
                Action::Last => end,
                _ => s,
            }
            .min(end);
            return;
        }
        if self.peek.is_some() {
            self.peek_act(a, now, fx);
            return;
        }
        if self.lost_view() {
            self.lost_act(a, fx);
            return;
        }
        let g = self.geometry();
        let n = self.grid.shown.len();
        let cur = self.selected_pos();
        let target = match (a, cur) {
            (Action::Quit, _) => {
                self.quit = true;
                return;
            }
            (Action::Help, _) => {
                self.open_help();
                return;
            }
            (Action::Back, _) => {
                // Esc clears the filter.
                self.grid.filter.clear();
                return;
            }
            (Action::Filter, _) => {
                self.grid.filter_typing = true;
                return;
            }
            (Action::SwitchView, _) => {
                // The other view; and when that is what the automatic choice would be,
                // the automatic choice again (so `v` twice gives it back).
                let want_list = !g.list;
                let auto = geometry(self.size.0, self.size.1, n, Mode::Auto).list;
                self.grid.mode = match (want_list, auto == want_list) {
                    (_, true) => Mode::Auto,
                    (true, false) => Mode::List,
                    (false, false) => Mode::Cards,
                };
                self.grid.scroll = 0;
                return;
            }
            (Action::ToggleAuto | Action::CancelAuto | Action::ToggleAutoAll, _) => {
                self.end_story();
                self.auto_key(a, now, fx);
                return;
            }
            (Action::Relaunch | Action::RelaunchFresh, _) => {
                self.end_story();
                self.relaunch(a == Action::RelaunchFresh, now, fx);
                return;
            }
            (Action::Peek | Action::Close | Action::Jump, _) => {
                self.grid_extra(a, now, fx);
                return;
            }
            (Action::NextNeed, cur) => {
                let needs = |c: &Card| {
                    c.agent.is_some() && (c.life.is_alarm() || c.attention.is(Doing::Waiting))
                };
                let start = cur.map_or(0, |i| i + 1);
                match (0..n)
                    .map(|k| (start + k) % n)
                    .find(|&j| needs(&self.cards[self.grid.shown[j]]))
                {
                    Some(j) => j,
                    None => {
                        if let Some(i) = self.selected_index() {
                            self.cards[i].notice = Some(Notice::info(
                                "no agent needs you: none is dead or waiting for input",
                                Some(now + NOTICE_MS),
                            ));
                        }
                        return;
                    }
                }
            }
            (
                Action::Search
                | Action::Next
                | Action::Prev
                | Action::Older
                | Action::Newer
                | Action::Refresh
                | Action::RecreateAll
                | Action::Forget
                | Action::Yes
                | Action::No,
                _,
            ) => return,
            (_, None) => 0,
            (Action::Up, Some(i)) => i.saturating_sub(g.cols),
            (Action::Down, Some(i)) if i + g.cols < n => i + g.cols,
            (Action::Down, Some(i)) => i,
            (Action::Left, Some(i)) => i.saturating_sub(1),
            (Action::Right, Some(i)) => (i + 1).min(n.saturating_sub(1)),
            (Action::PageUp, Some(i)) => i.saturating_sub(g.per_page()),
            (Action::PageDown, Some(i)) => (i + g.per_page()).min(n.saturating_sub(1)),
            (Action::First, _) => 0,
            (Action::Last, _) => n.saturating_sub(1),
        };
        self.select_pos(target);
    }

    /// The selection once its card has gone: the card that took its place (the first at or
    /// after its session, window and pane), else the last; with no place known, the first.
    pub(super) fn select_in_place_of(&mut self, place: Option<(String, u32, u32)>) {
        self.grid.selected = match place {
            Some(pos) => self
                .cards
                .iter()
                .find(|c| {
                    (&c.pane.session, c.pane.window_index, c.pane.pane_index)
                        >= (&pos.0, pos.1, pos.2)
                })
                .or(self.cards.last())
                .map(|c| c.pane.id),
            None => self.cards.first().map(|c| c.pane.id),
        };
    }

    /// Selects the `pos`-th card shown: the user chose it.
    fn select_pos(&mut self, pos: usize) {
        if let Some(&i) = self.grid.shown.get(pos) {
            self.grid.selected = Some(self.cards[i].pane.id);
            self.choose_selected();
        }
    }

    pub(super) fn open_help(&mut self) {
        self.overlays.show_help = true;
        self.overlays.help_scroll = 0;
    }

    /// The selected card is the user's choice now (moved to, or acted on): a card the
    /// filter hid earlier is no longer chosen again when the filter clears.
    fn choose_selected(&mut self) {
        self.grid.chosen = true;
        self.grid.hidden_choice = None;
    }

    fn keep_selection_visible(&mut self) {
        let g = self.geometry();
        let total_rows = self.grid.shown.len().div_ceil(g.cols);
        let Some(i) = self.selected_pos() else {
            self.grid.scroll = self.grid.scroll.min(total_rows.saturating_sub(g.rows));
            return;
        };
        let row = i / g.cols;
        if row < self.grid.scroll {
            self.grid.scroll = row;
        } else if row >= self.grid.scroll + g.rows {
            self.grid.scroll = row + 1 - g.rows;
        }
        self.grid.scroll = self.grid.scroll.min(total_rows.saturating_sub(g.rows));
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

mod auto;
mod parts;
mod servers;
pub use parts::{Grid, Lost, Overlays, Reads, Story, Supervision};
pub use servers::{Link, ServerPoll, Servers};
mod grid;
mod story;
pub use story::{story, supervisor_name};
mod launcher;
mod lost;
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
        let mut h = std::collections::hash_map::DefaultHasher::new();
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
            &self.supervision.journal_error,
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
