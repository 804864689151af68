//! The three vocabularies of the loop: what the user wants (`Action`), what happened
//! (`Msg`), and what I/O the core asks for (`Effect`).

use std::collections::HashMap;
use std::sync::Arc;

use crate::peek_model::{PeekRecord, PeekText};
use crate::roster::Roster;

use crate::errors::{JumpError, OutputError, RecreateError, StoreError, TmuxError};
use crate::pane::Listing;
use crate::pane::{Opt, PaneId, ServerId};
use crate::resume::{Failure, Plan};
use crate::time::Millis;

/// A user intent, from the one key table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    First,
    Last,
    Help,
    /// `r`: relaunch the selected dead pane, resuming its session.
    Relaunch,
    /// `R`: deliberately start the selected dead pane's agent fresh.
    RelaunchFresh,
    /// `a`: turn auto-resume off or on for the selected pane.
    ToggleAuto,
    /// `c`: cancel the selected pane's pending auto-resume.
    CancelAuto,
    /// `A`: turn auto-resume off or on for every pane.
    ToggleAutoAll,
    /// `C`: type `continue` into the selected agent at its usage limit's reset, or not.
    ToggleContinue,
    /// `R` on the lost-server screen: recreate every lost agent (asks first).
    RecreateAll,
    /// `d` on the lost-server screen: forget the lost agents for good (asks first).
    Forget,
    /// `y` / `n`: answer a question.
    Yes,
    No,
    /// `p`: open the peek view on the selected pane.
    Peek,
    /// `s`: start a new agent (kind, directory, name), as `spawn` does.
    Start,
    /// `n`/Tab: select the next agent that needs its user.
    NextNeed,
    /// `x`: close a dead pane (asks once).
    Close,
    /// `g`/Enter: go to the pane in tmux.
    Jump,
    /// Peek: start a search.
    Search,
    /// Peek: next / previous match.
    Next,
    Prev,
    /// Peek: older / newer crash record.
    Older,
    Newer,
    /// Peek: a new snapshot of the pane.
    Refresh,
    /// `/` on the grid: type a filter.
    Filter,
    /// `v`: the list instead of cards, or cards instead of the list.
    SwitchView,
    /// Esc: close whatever overlay is open.
    Back,
    Quit,
}

/// Who supervises a tmux server: the one instance that judges deaths, runs auto-resumes,
/// journals them and announces them. Chosen by a lock the kernel releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Supervisor {
    pub pid: u32,
    /// A daemon (`agentwatch daemon`), not a dashboard.
    pub daemon: bool,
    /// Since when (epoch ms).
    pub since: Millis,
}

/// The answer to [`Effect::Elect`]: whether this instance supervises now, and who does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Election {
    pub mine: bool,
    /// The supervisor, when known (this instance, a daemon, another dashboard).
    pub by: Option<Supervisor>,
    /// This instance took the claim over from one that stopped renewing it: which, and when
    /// it last renewed it.
    pub took_over: Option<(Supervisor, Millis)>,
}

/// What the poller saw: the tmux listing plus what `/proc` says about the panes' processes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observation {
    pub listing: Listing,
    /// argv of the foreground process: every poll for a launcher or a process other than
    /// the pane's own; once, when it is new, for the pane's own process.
    pub foreground: HashMap<PaneId, Vec<String>>,
    /// Start time (epoch ms) of each pane's process (or of its foreground process, when
    /// that is another one), where `/proc` knows it.
    pub started: HashMap<PaneId, Millis>,
    /// The name of each live pane's own process (`bash`, `claude`).
    pub comm: HashMap<PaneId, String>,
    /// Each live pane's own argv and foreground process tree below its own process
    /// (breadth first): the descendants in the terminal's foreground process group. Re-read only when the pane's
    /// process or current command changes, one of them ends, or on a slow sweep.
    pub tree: Arc<HashMap<PaneId, Arc<crate::pane::ProcTree>>>,
    /// When each agent pane's window last had output (tmux's `window_activity`, epoch
    /// seconds), for the panes read this poll: changing, the agent is working.
    pub activity: HashMap<PaneId, u64>,
    /// The panes whose output is heard as it happens (control mode's `%output`), each with
    /// when it last wrote (epoch ms; `None`: nothing since hearing began). These need no
    /// output times: a pane's output is known to the millisecond, and its stop within half
    /// a second.
    pub heard: HashMap<PaneId, Option<Millis>>,
    /// Heard panes whose stop is already known where they are (what their processes wrote,
    /// counted quiet for a slice): no half second to wait before their screen is looked at;
    /// their time in `heard` is the last they were known to write.
    pub stopped: std::collections::HashSet<PaneId>,
    /// Agents' own state files by the pid they are about (claude's `sessions/<pid>.json`).
    pub agent_files: Arc<HashMap<u32, crate::attention::AgentFile>>,
    /// Processes of a pane's agent run that outlived it outside the pane (reparented away
    /// from its tree, still on its terminal), while they run: a launcher killed with
    /// SIGKILL leaves codex's or gemini's real process so.
    pub orphans: HashMap<PaneId, Vec<crate::pane::Proc>>,
    /// Nothing changed since the last look at this server (the same panes, records and
    /// processes): the listing has no panes, and the cards stand as they are; only output,
    /// output times and agents' files are news. Never when the poll asked for `whole`.
    pub same: bool,
    /// Only the panes read whole this look changed since the last (nothing else told, no
    /// other process read anew): the listing holds those only, and the other cards stand.
    /// Never when the poll asked for `whole`.
    pub partial: bool,
}

/// Something that happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    Tick,
    /// Something changed (a process ended, a window came): poll now, not at the next tick.
    Wake,
    /// The screens of agents that stopped writing, to tell whether they wait for input.
    Looked(Result<HashMap<PaneId, String>, TmuxError>),
    /// A key press, translated by the key table of the view it lands in.
    Key(crate::input::Key),
    /// A click or a turn of the wheel, where the terminal reports them.
    Mouse(crate::input::Mouse),
    Action(Action),
    Resize {
        width: u16,
        height: u16,
    },
    /// The answer to [`Effect::Poll`]: a look at one server, its pane ids already of that
    /// server ([`PaneId::on`]). Boxed: a look is large, and every other message small.
    Polled {
        server: ServerId,
        result: Result<Box<Observation>, TmuxError>,
    },
    Screens(Result<HashMap<PaneId, String>, TmuxError>),
    OptionsSet {
        /// The options that were set.
        landed: Vec<(PaneId, crate::pane::Opt, String)>,
        /// The first failure, if any was not.
        result: Result<(), TmuxError>,
    },
    /// A relaunch finished: the plan as carried out (with its final session id), or why not.
    Relaunched {
        pane: PaneId,
        result: Result<Plan, Failure>,
    },
    /// A pane's whole retained output, parsed, for the peek view.
    Output {
        pane: PaneId,
        result: Result<Arc<PeekText>, OutputError>,
    },
    /// A pane's crash records, newest first.
    Records {
        pane: PaneId,
        records: Vec<Arc<PeekRecord>>,
    },
    /// `kill-pane` finished.
    Closed {
        pane: PaneId,
        result: Result<(), TmuxError>,
    },
    /// A pane's orphans were ended, or why not (what the system said).
    OrphansEnded {
        pane: PaneId,
        result: Result<(), String>,
    },
    /// The jump to a pane in tmux finished.
    Jumped {
        pane: PaneId,
        result: Result<(), JumpError>,
    },
    /// The roster saved by an earlier run, for this socket.
    RosterLoaded(Option<Roster>),
    /// The agent asked for with `s` started (its pane), or why not.
    Started(Result<PaneId, String>),
    /// The lost agents were recreated: per target, the new pane id or why not.
    Recreated(Vec<(String, Result<String, RecreateError>)>),
    /// Who supervises the server now.
    Elected(Election),
    /// Recent journal events, read once at start: what happened while this instance was
    /// not watching.
    JournalRead(Vec<Event>),
    /// A session id lookup in the agent's own records finished.
    Discovered {
        pane: PaneId,
        found: Option<(String, &'static str)>,
    },
    /// One of agentwatch's own files was written (`what`: `journal`, `roster`), or could
    /// not be (a full disk, its path a directory).
    Stored {
        what: &'static str,
        result: Result<(), StoreError>,
    },
    /// The last lines a dead pane printed (`None`: they could not be read).
    /// What the agents' files say they spent (the ones that could be read).
    Spent(Vec<(PaneId, crate::spend::Spend)>),
    Tail {
        pane: PaneId,
        text: Option<String>,
        /// The kernel's OOM killer killed a process of the agents' cgroup since the last
        /// death was read (where that can be read: this machine's cgroup v2).
        oom_killed: bool,
        /// The errors its agent's own file ends with, oldest first (claude's
        /// `isApiErrorMessage` lines, codex's error events).
        record: Vec<String>,
    },
}

impl Msg {
    /// The answer to a poll of the local server.
    pub fn polled(result: Result<Observation, TmuxError>) -> Msg {
        Msg::Polled {
            server: ServerId::Local,
            result: result.map(Box::new),
        }
    }
}

/// A new agent to start from the dashboard (`s`), as `agentwatch spawn` starts one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartAsk {
    pub agent: String,
    /// The directory, `~` read as the home directory.
    pub dir: String,
    /// `None`: the kind's name.
    pub name: Option<String>,
    pub session: String,
}

/// One lost agent to bring back: where, and with what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recreate {
    pub target: String,
    pub session: String,
    pub window_name: String,
    pub cwd: String,
    pub argv: Vec<String>,
    pub options: Vec<(Opt, String)>,
}

impl Recreate {
    /// The agent kind and session id it is recreated with, as its options say.
    pub fn agent(&self) -> Option<&str> {
        self.option(Opt::Agent)
    }

    pub fn session_id(&self) -> Option<&str> {
        self.option(Opt::SessionId)
    }

    fn option(&self, opt: Opt) -> Option<&str> {
        self.options
            .iter()
            .find(|(o, _)| *o == opt)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }
}

/// What a crash record says about the death, besides the output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CrashMeta {
    pub target: String,
    /// The host whose server the pane is on; `None`: this machine's.
    pub host: Option<String>,
    pub exit: String,
    /// `exit 1`, `SIGKILL`: for the card's "previous:" line.
    pub exit_short: String,
    pub died_at: Option<Millis>,
    pub started_at: Option<Millis>,
    /// The auto-resume this death followed (see [`crate::crash::CrashRecord::attempt`]).
    pub attempt: Option<u32>,
    /// Why it stopped (`crate::cause::Cause::word`), and what said so.
    pub cause: Option<String>,
    pub evidence: Vec<String>,
}

/// A session id lookup: what the agent's records are searched by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoverRequest {
    pub pane: PaneId,
    pub agent: String,
    pub cwd: String,
    pub pids: Vec<u32>,
    pub started_at: Option<Millis>,
    pub died_at: Option<Millis>,
    pub dead: bool,
    /// The pane was started with a resume command (`codex resume --last`): its session
    /// file may be an old one, so only exact evidence (the exit line) counts.
    pub resumed: bool,
}

/// How much a log line matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// What happens all the time (an agent's every edge between work and a prompt): the
    /// journal keeps it; the log has it with `AGENTWATCH_LOG=debug`.
    Debug,
    Info,
    Warn,
}

/// A line for the log file: the core says what is worth logging, the loop writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    pub level: Level,
    pub text: String,
}

impl Log {
    pub fn debug(text: impl Into<String>) -> Log {
        Log {
            level: Level::Debug,
            text: text.into(),
        }
    }

    pub fn info(text: impl Into<String>) -> Log {
        Log {
            level: Level::Info,
            text: text.into(),
        }
    }

    pub fn warn(text: impl Into<String>) -> Log {
        Log {
            level: Level::Warn,
            text: text.into(),
        }
    }
}

/// I/O the core asks the loop to perform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Write a line to the log file; answers nothing.
    Log(Log),
    /// Look at a server's panes (tmux, plus `/proc` where it is this machine's), reading
    /// the `hot` ones whole whatever else says they changed (cards on screen, deaths being
    /// handled); answers [`Msg::Polled`].
    Poll {
        server: ServerId,
        hot: Vec<PaneId>,
        /// The panes are wanted even if nothing changed (else such a look is
        /// [`Observation::same`]).
        whole: bool,
    },
    /// Read the visible screens of these agent panes (they stopped writing: is a prompt for
    /// their user on screen?); answers [`Msg::Looked`].
    LookAtScreens(Vec<PaneId>),
    /// For the local server's poller: whether agents' output times are wanted often (an
    /// agent works or waits with no state file of its own, and its output is not heard) or
    /// now and then will do; and the panes whose output to hear as it happens (live agents
    /// with no state file of their own). Answers nothing.
    Attend { often: bool, hear: Vec<PaneId> },
    /// Send SIGCHLD to a tmux server (the lost exit status workaround): here to `pid`;
    /// another host's server is asked to signal itself (`run-shell`), over its connection.
    /// Answers nothing.
    Kick { server: ServerId, pid: Option<u32> },
    /// Capture the visible screens of these panes, each with this many lines of history
    /// above it, in one call; answers [`Msg::Screens`].
    CaptureScreens { panes: Vec<(PaneId, usize)> },
    /// Set pane options in one call; answers [`Msg::OptionsSet`].
    SetOptions(Vec<(PaneId, Opt, String)>),
    /// Capture the dead pane's output into a crash record, then respawn it (never `-k`);
    /// answers [`Msg::Relaunched`].
    Relaunch { plan: Plan, meta: CrashMeta },
    /// Look for a session id in the agent's own records; answers [`Msg::Discovered`].
    Discover(DiscoverRequest),
    /// Append one event to the journal.
    Journal(Event),
    /// Announce deaths: one effect per look, however many deaths. The supervisor announces
    /// them every way configured (bell, desktop, hook); a dashboard beside it only rings its
    /// own terminal's bell (`bell_only`).
    Notify { events: Vec<Event>, bell_only: bool },
    /// Find out who supervises the server (and become the supervisor if nobody does);
    /// answers [`Msg::Elected`].
    Elect,
    /// Read the journal's recent events; answers [`Msg::JournalRead`].
    ReadJournal { since: Millis },
    /// Set a server option (`set-option -s`): settings every instance shares, like `A`.
    SetServerOption { name: String, value: String },
    /// Capture a pane's whole history with colours; answers [`Msg::Output`].
    CaptureOutput(PaneId),
    /// Read a dead pane's last lines, plain, and, where given, the error lines at the end
    /// of its agent's own file (claude's transcript, codex's rollout); answers [`Msg::Tail`].
    ReadTail(PaneId, Option<crate::state::SpendAsk>),
    /// Read what the agents' own files grew by; answers [`Msg::Spent`].
    ReadSpend(Vec<crate::state::SpendAsk>),
    /// Type `text` into a live pane, then Enter (`continue` at a usage limit's reset);
    /// `dismiss`: Escape first, to close a menu over the banner.
    Type {
        pane: PaneId,
        text: String,
        dismiss: bool,
    },
    /// Read a pane's crash records; answers [`Msg::Records`].
    LoadRecords {
        pane: PaneId,
        /// The host whose server the pane is on; `None`: this machine's.
        host: Option<String>,
        session_id: Option<String>,
    },
    /// Read the roster of agents lost with this server; answers [`Msg::RosterLoaded`].
    LoadRoster,
    /// Save (or, with `None`, forget) the roster of agents lost with this server.
    SaveRoster(Option<Roster>),
    /// Start a new agent in a window of its own; answers [`Msg::Started`].
    Start(StartAsk),
    /// Open a window per agent with its resume command; answers [`Msg::Recreated`].
    Recreate(Vec<Recreate>),
    /// `kill-pane` a dead pane; answers [`Msg::Closed`].
    KillPane(PaneId),
    /// End the processes a pane's last run left running outside it (each named by pid and
    /// start time, so that a pid reused since is left alone): SIGTERM, then SIGKILL for
    /// one still there after a few seconds; answers [`Msg::OrphansEnded`].
    EndOrphans {
        pane: PaneId,
        procs: Vec<(u32, Option<Millis>)>,
    },
    /// Show the pane in the tmux client agentwatch is shown on; answers [`Msg::Jumped`].
    Jump { pane: PaneId, viewer: Viewer },
}

pub use crate::viewer::Viewer;

/// One lifecycle event, as written to the journal (one JSON object per line).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Event {
    /// Epoch milliseconds.
    pub ts: Millis,
    /// `died`, `scheduled`, `resumed`, `resume_failed`, `gave_up`, `cancelled`, `relaunched`,
    /// `gone`; what a live agent does: `working`, `waiting`, `idle`.
    pub event: String,
    pub pane: String,
    /// The tmux server's socket: pane ids are only unique within one server.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub server: Option<String>,
    /// The host (`[[hosts]]` name) whose server the pane is on; absent: this machine's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub signal: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub attempt: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<String>,
    /// Why it stopped (`usage_limit`, `auth`, ...: see `crate::cause`), once known; for a
    /// `limited` edge, `usage_limit`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cause: Option<String>,
    /// When a usage limit resets (epoch ms), where the agent said.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resets_at: Option<Millis>,
}
