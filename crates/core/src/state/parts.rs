//! The parts of [`State`](super::State), each owning its own fields: what the grid shows and
//! where the selection is, what lies over it, the screens being read, the supervision of the
//! server, the story of what happened before this instance, and the agents lost with a
//! server.

use std::collections::{HashMap, HashSet};

use crate::layout::Mode;
use crate::msg::{Event, Supervisor};
use crate::pane::{Opt, PaneId};
use crate::roster::Roster;
use crate::settings::Order;
use crate::supervisor::Policy;
use crate::time::Millis;

/// The grid: which cards are shown, in which order and view, and which one is selected.
#[derive(Debug, Clone)]
pub struct Grid {
    pub selected: Option<PaneId>,
    /// The user chose the selected card (a key moved it), or the first look has settled:
    /// the selection follows that pane wherever the order moves it, and never moves by
    /// itself (a key acts on the agent the user reads). Until then it stays on the first
    /// card, what needs the user most.
    pub chosen: bool,
    /// When the first cards were shown: the selection settles on the first of them
    /// [`SELECTION_SETTLE_MS`] later.
    pub(super) first_shown: Option<Millis>,
    /// First visible row of cards.
    pub scroll: usize,
    /// Cards, list, or whichever fits (`v` switches).
    pub mode: Mode,
    /// How the cards are ordered: what needs its user first, or tmux's order.
    pub order: Order,
    /// Every pane, not only agents.
    pub show_all: bool,
    /// What `/` typed: only the cards it matches are shown (see [`crate::card::Card::matches`]).
    pub filter: String,
    /// The filter is being typed: keys go to it.
    pub filter_typing: bool,
    /// The indices of the cards shown, in order: those the filter matches.
    pub shown: Vec<usize>,
    /// The user's home, to match a filter such as `~/src` against directories.
    pub home: Option<String>,
    /// A chosen card the filter hid: chosen again when the filter lets it through.
    pub(super) hidden_choice: Option<PaneId>,
    /// An agent just started here: selected as soon as it shows.
    pub(super) want: Option<PaneId>,
    /// The last click: on which pane, when (for a double click).
    pub(super) last_click: Option<(PaneId, Millis)>,
}

impl Grid {
    pub(super) fn new(mode: Mode, order: Order, show_all: bool) -> Grid {
        Grid {
            selected: None,
            chosen: false,
            first_shown: None,
            want: None,
            scroll: 0,
            mode,
            order,
            show_all,
            filter: String::new(),
            filter_typing: false,
            shown: Vec::new(),
            home: None,
            hidden_choice: None,
            last_click: None,
        }
    }
}

/// What lies over the grid, or waits for a second key: the help, a pending `x`.
#[derive(Debug, Clone, Default)]
pub struct Overlays {
    pub show_help: bool,
    /// How far the help is scrolled (kept within it when drawn).
    pub help_scroll: usize,
    /// A pending `x`: which pane, asked when.
    pub confirm_close: Option<(PaneId, Millis)>,
    /// Panes being closed with `x`: a listing taken before the close is not to bring their
    /// cards back (nor count them lost if the server then exits). Forgotten once a listing
    /// no longer has them, or their server goes.
    pub(super) closing: HashSet<PaneId>,
}

/// Screens and records being read, and writes under way: at most one of each at a time.
#[derive(Debug, Clone)]
pub struct Reads {
    /// Screens of quiet agents are being read.
    pub(super) look_in_flight: bool,
    /// The cards whose previews are being captured.
    pub(super) capture_pending: Vec<PaneId>,
    /// Output lines each card's preview was last read for.
    pub(super) preview_lines: usize,
    /// The list's preview pane as last read for: its lines, and the agent selected.
    pub(super) pane: Option<(usize, PaneId)>,
    /// Where in the list the next read of lines on screen starts.
    pub(super) list_read_from: usize,
    pub(super) options_in_flight: bool,
    /// When every card's records were last compared with its pane's options (see
    /// [`State::option_writes`](super::State)); `None`: due at the next look.
    pub(super) records_at: Option<Millis>,
    pub(super) discover_in_flight: bool,
    /// The agents' files are being read for what they spend; when they were last asked.
    pub(super) spend_in_flight: bool,
    pub(super) spend_at: Option<Millis>,
    /// When each card on screen was last asked for whole (see [`SETTLED_MS`](super::SETTLED_MS)).
    pub(super) whole_at: HashMap<PaneId, Millis>,
}

impl Reads {
    /// Output lines kept of pane `id`'s screen: the preview pane's for the agent it shows,
    /// else a card's or a list line's.
    pub(super) fn lines_for(&self, id: PaneId) -> usize {
        match self.pane {
            Some((n, shown)) if shown == id => n.max(self.preview_lines),
            _ => self.preview_lines,
        }
    }
}

impl Default for Reads {
    fn default() -> Reads {
        Reads {
            look_in_flight: false,
            capture_pending: Vec::new(),
            preview_lines: crate::layout::MIN_PREVIEW,
            pane: None,
            list_read_from: 0,
            options_in_flight: false,
            records_at: None,
            discover_in_flight: false,
            spend_in_flight: false,
            spend_at: None,
            whole_at: HashMap::new(),
        }
    }
}

/// Who supervises the server, and what supervising it keeps: the auto-resume policies and
/// switch, the announcements of this look, the journal's health.
#[derive(Debug, Clone)]
pub struct Supervision {
    /// Take part in the election of the server's supervisor (the dashboard and the daemon
    /// do); when false this instance supervises on its own (tests, one-shot looks).
    pub elect: bool,
    /// This instance supervises the server now: judges deaths, runs auto-resumes, journals
    /// and announces them. Beside another supervisor it shows what that one decided.
    pub supervising: bool,
    /// Who supervises, when known (for the header).
    pub supervisor: Option<Supervisor>,
    /// The supervisor this instance took over from when it stopped answering, and since
    /// when it had not (for the header).
    pub took_over: Option<(Supervisor, Millis)>,
    pub(super) elect_in_flight: bool,
    /// Auto-resume for every pane (`A` toggles).
    pub auto_on: bool,
    /// The server option `@agentwatch_auto` as last read, and as this instance last wrote
    /// it: a change by another instance (its `A`) is taken up.
    pub(super) auto_seen: Option<String>,
    pub(super) auto_wrote: Option<String>,
    /// Deaths and give-ups of this look, announced together at its end.
    pub(super) notes: Vec<Event>,
    /// When each pane's last wait was announced.
    pub(super) waits_told: HashMap<PaneId, Millis>,
    /// The verdict this instance last wrote on each pane ([`Opt::Verdict`], which is not
    /// read back).
    pub(super) verdicts: HashMap<PaneId, crate::attention::Verdict>,
    /// The state word this instance last wrote on each pane (`@agentwatch_state`): the
    /// card keeps the word it found there, which tells a new supervisor where its
    /// predecessor left the agent.
    pub(super) states: HashMap<PaneId, String>,
    /// Why the last write of each of agentwatch's own files (`journal`, `roster`, `crash
    /// record`) failed, until one succeeds: said in the header.
    pub store_errors: std::collections::BTreeMap<&'static str, crate::errors::StoreError>,
    pub(super) policies: HashMap<String, Policy>,
    pub(super) default_policy: Policy,
    /// After a usage limit's reset, how long before a dead agent is resumed or a live one
    /// told to continue (`[auto_continue] margin_secs`).
    pub continue_margin_ms: Millis,
    /// `[auto_continue]`: on for every agent, and what is typed.
    pub continue_on: bool,
    pub continue_text: String,
    /// Agents whose auto-continue `u` switched against the setting.
    pub continue_flipped: std::collections::HashSet<PaneId>,
    /// For an overloaded API or a network error, one agent per server and cause goes
    /// first: which, and when its resume started.
    pub firsts: HashMap<(crate::pane::ServerId, crate::cause::Cause), (PaneId, Millis)>,
    /// How mass deaths are resumed, and the ones under way.
    pub pacing: crate::settings::Pacing,
    pub waves: super::pacing::Waves,
}

/// What happened while no instance watched, told on the cards it is about.
#[derive(Debug, Clone, Default)]
pub struct Story {
    /// When this instance started (epoch ms), for what happened before it.
    pub started: Option<Millis>,
    /// Journal events read at start, until the cards they are about have been seen.
    pub(super) past_events: Option<Vec<Event>>,
    pub(super) journal_asked: bool,
}

/// Agents lost with the tmux server, until they are recreated or forgotten, and the screen
/// that says so.
#[derive(Debug, Clone, Default)]
pub struct Lost {
    pub roster: Option<Roster>,
    /// The lost-server screen asks "recreate them all?".
    pub confirm: bool,
    /// The lost-server screen was put aside with Esc.
    pub hidden: bool,
    /// `d` on the lost-server screen asked to forget the list: awaiting y/n.
    pub forget: bool,
    /// What recreating did, per target.
    pub results: Vec<(String, Result<String, crate::errors::RecreateError>)>,
    /// The roster on disk has been asked for.
    pub(super) roster_asked: bool,
    /// Recreated at a pace (see `state::pacing`): those still to open, the first one
    /// opened (its target, its new pane once known) and when the last batch went.
    pub(super) queue: Vec<crate::msg::Recreate>,
    pub(super) canary: Option<(String, Option<String>)>,
    pub(super) batch_at: Millis,
}

impl Supervision {
    /// Keeps the verdicts and state words among `writes` as said (compared with, not read
    /// back); forgets those of panes that have no card.
    pub(super) fn said(&mut self, cards: &[crate::card::Card], writes: &[(PaneId, Opt, String)]) {
        if self.verdicts.len() > cards.len() || self.states.len() > cards.len() {
            let ids: HashSet<PaneId> = cards.iter().map(|c| c.pane.id).collect();
            self.verdicts.retain(|id, _| ids.contains(id));
            self.states.retain(|id, _| ids.contains(id));
        }
        for (id, opt, v) in writes {
            if *opt == Opt::State {
                self.states.insert(*id, v.clone());
            } else if *opt == Opt::Verdict {
                match crate::attention::Verdict::parse(v) {
                    Some(v) => self.verdicts.insert(*id, v),
                    None => self.verdicts.remove(id),
                };
            }
        }
    }

    /// What this instance wrote may not be on the panes (a write failed, or another
    /// supervisor wrote since): the verdicts and state words are written anew.
    pub(super) fn forget_said(&mut self) {
        self.verdicts.clear();
        self.states.clear();
    }
}
