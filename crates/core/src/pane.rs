//! Domain nouns: a pane id, one tmux pane row, and how a dead pane exited.

use std::fmt;

/// Which tmux server: the local one (the socket agentwatch was started on), or the one of a
/// configured host (`[[hosts]]`, `--ssh`), by its place in that list from 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ServerId {
    #[default]
    Local,
    Host(u8),
}

impl ServerId {
    pub fn is_local(self) -> bool {
        self == ServerId::Local
    }

    /// Its place among the configured hosts, for another host's server.
    pub fn host_index(self) -> Option<usize> {
        match self {
            ServerId::Local => None,
            ServerId::Host(i) => Some(usize::from(i)),
        }
    }

    /// The server of the `i`-th configured host.
    pub fn host(i: usize) -> ServerId {
        ServerId::Host(u8::try_from(i).unwrap_or(u8::MAX))
    }

    /// The bits that say it in a [`PaneId`]: 0 for the local server, 1 and up for the hosts.
    fn bits(self) -> u32 {
        match self {
            ServerId::Local => 0,
            ServerId::Host(i) => u32::from(i) + 1,
        }
    }
}

/// A tmux pane id (`%N`). Stable for the pane's life and kept across `respawn-pane`.
///
/// Pane ids are unique within one tmux server only: with servers on other hosts watched
/// too, the top bits say which server ([`ServerId`]) and the low 24 the pane number there.
/// It is shown, and given to tmux as a target, as its own server knows it: `%N`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PaneId(pub u32);

/// Bits of a [`PaneId`] that hold the pane number on its server.
const NUMBER_BITS: u32 = 24;
const NUMBER_MASK: u32 = (1 << NUMBER_BITS) - 1;

impl PaneId {
    /// Parses `%12` (a pane of the local server).
    pub fn parse(s: &str) -> Option<PaneId> {
        let n: u32 = s.strip_prefix('%')?.parse().ok()?;
        (n <= NUMBER_MASK).then_some(PaneId(n))
    }

    /// Pane `%number` of `server`.
    pub fn on(server: ServerId, number: u32) -> PaneId {
        PaneId(server.bits() << NUMBER_BITS | (number & NUMBER_MASK))
    }

    /// Which server the pane is on.
    pub fn server(self) -> ServerId {
        match self.0 >> NUMBER_BITS {
            0 => ServerId::Local,
            n => ServerId::Host(u8::try_from(n - 1).unwrap_or(u8::MAX)),
        }
    }

    /// Its number on its own server.
    pub fn number(self) -> u32 {
        self.0 & NUMBER_MASK
    }
}

impl fmt::Display for PaneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.number())
    }
}

/// How a process ended, as far as anybody can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    Unknown,
}

impl Exit {
    /// The one wording used everywhere: card, peek, status and journal.
    pub fn describe(&self) -> String {
        match *self {
            Exit::Code(c) => format!("process exited (code {c})"),
            Exit::Signal(s) => match signal_name(s) {
                Some(name) => format!("killed by signal {s} ({name})"),
                None => format!("killed by signal {s}"),
            },
            Exit::Unknown => "process exited (code unknown)".to_string(),
        }
    }

    /// Short form for tight places (`exit 1`, `SIGKILL`, `exit ?`).
    pub fn short(&self) -> String {
        match *self {
            Exit::Code(c) => format!("exit {c}"),
            Exit::Signal(s) => signal_name(s)
                .map(str::to_string)
                .unwrap_or_else(|| format!("signal {s}")),
            Exit::Unknown => "exit ?".to_string(),
        }
    }

    /// A clean exit (code 0): the agent finished, nothing crashed.
    pub fn is_clean(&self) -> bool {
        matches!(self, Exit::Code(0))
    }
}

/// Linux signal names by number (the numbers tmux reports in `pane_dead_signal`).
pub fn signal_name(n: i32) -> Option<&'static str> {
    Some(match n {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        16 => "SIGSTKFLT",
        17 => "SIGCHLD",
        18 => "SIGCONT",
        19 => "SIGSTOP",
        20 => "SIGTSTP",
        21 => "SIGTTIN",
        22 => "SIGTTOU",
        23 => "SIGURG",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        26 => "SIGVTALRM",
        27 => "SIGPROF",
        28 => "SIGWINCH",
        29 => "SIGIO",
        30 => "SIGPWR",
        31 => "SIGSYS",
        _ => return None,
    })
}

/// Signal number for a name such as `TERM`, `SIGTERM` or `15`.
pub fn signal_number(name: &str) -> Option<i32> {
    if let Ok(n) = name.parse::<i32>() {
        return signal_name(n).map(|_| n);
    }
    let upper = name.to_ascii_uppercase();
    let full = if upper.starts_with("SIG") {
        upper
    } else {
        format!("SIG{upper}")
    };
    (1..=31).find(|&n| signal_name(n) == Some(full.as_str()))
}

/// A process below a pane's own process, in its terminal's foreground process group: where a
/// wrapper, a `bash -c`, a launcher or a shell runs the agent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Proc {
    pub pid: u32,
    pub ppid: u32,
    /// The kernel's name for it (`comm`): the executable's, or a script's, basename.
    pub comm: String,
    pub argv: Vec<String>,
    /// Start time, epoch ms, where `/proc` tells it.
    pub start: Option<crate::time::Millis>,
}

/// A live pane's processes as last read: its own process's argv and its foreground tree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcTree {
    /// The pane's own process's argv (empty when unreadable).
    pub own: Vec<String>,
    /// Its descendants in the terminal's foreground process group, breadth first.
    pub below: Vec<Proc>,
    /// Its children outside that group: a job stopped with Ctrl-Z, or sent to the
    /// background, is still alive.
    pub background: Vec<u32>,
}

/// A pane option agentwatch writes (and, but for `remain-on-exit`, reads back): its own
/// `@agentwatch_*` options, which outlive a respawn and agentwatch itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Opt {
    /// tmux's `remain-on-exit`: the pane stays, with its output, when its process ends.
    RemainOnExit,
    /// `@agentwatch_agent`: the agent kind recorded on the pane.
    Agent,
    /// `@agentwatch_cwd`: the working directory recorded while alive.
    Cwd,
    /// `@agentwatch_session_id`: the agent session id recorded on the pane.
    SessionId,
    /// `@agentwatch_args`: extra arguments from `agentwatch spawn -- ARGS` (JSON list).
    Args,
    /// `@agentwatch_attempts`: auto-resume attempts since the last healthy run or manual relaunch.
    Attempts,
    /// `@agentwatch_resumes`: when the recent auto-resumes ran (epoch ms, comma-separated), for the hourly cap.
    Resumes,
    /// `@agentwatch_next`: when the scheduled auto-resume is due (epoch ms).
    Next,
    /// `@agentwatch_paused`: auto-resume is off for this pane (`a`).
    Paused,
    /// `@agentwatch_previous`: the death before the last relaunch (`exit 1|<ms>`).
    Previous,
    /// `@agentwatch_last_status`: `<status> <epoch s>` from the shell integration.
    LastStatus,
    /// `@agentwatch_exited`: when the agent a pane's process ran was seen to exit (ms), and the pane's pid then.
    Exited,
    /// `@agentwatch_judged`: `<death> <verdict>`, the supervisor's verdict on the pane's last death (see `crate::judged`).
    Judged,
    /// `@agentwatch_state`: what the supervisor last said the agent does, for status lines.
    State,
    /// `@agentwatch_occupant`: the process the other records are about (see
    /// [`crate::occupant`]).
    Occupant,
    /// The supervisor's word on what a live agent does, with since when and what told (see
    /// [`crate::attention::Verdict`]): what `status` reports, and where a dashboard opened
    /// later dates what it sees. Read through `@agentwatch_verdict_fmt`, which names where
    /// the server keeps it (a hidden environment variable: a `set-option` per edge costs
    /// the tmux server a pass over every window).
    Verdict,
}

impl Opt {
    /// Every option agentwatch reads back, in the order of the listing's fields.
    pub const READ: [Opt; 15] = [
        Opt::Agent,
        Opt::Cwd,
        Opt::SessionId,
        Opt::Args,
        Opt::Attempts,
        Opt::Resumes,
        Opt::Next,
        Opt::Paused,
        Opt::Previous,
        Opt::LastStatus,
        Opt::Exited,
        Opt::Judged,
        Opt::State,
        Opt::Occupant,
        Opt::Verdict,
    ];

    /// Its name in tmux.
    pub fn name(self) -> &'static str {
        match self {
            Opt::RemainOnExit => "remain-on-exit",
            Opt::Agent => "@agentwatch_agent",
            Opt::Cwd => "@agentwatch_cwd",
            Opt::SessionId => "@agentwatch_session_id",
            Opt::Args => "@agentwatch_args",
            Opt::Attempts => "@agentwatch_attempts",
            Opt::Resumes => "@agentwatch_resumes",
            Opt::Next => "@agentwatch_next",
            Opt::Paused => "@agentwatch_paused",
            Opt::Previous => "@agentwatch_previous",
            Opt::LastStatus => "@agentwatch_last_status",
            Opt::Exited => "@agentwatch_exited",
            Opt::Judged => "@agentwatch_judged",
            Opt::State => "@agentwatch_state",
            Opt::Occupant => "@agentwatch_occupant",
            Opt::Verdict => "@agentwatch_verdict_fmt",
        }
    }

    pub fn parse(name: &str) -> Option<Opt> {
        [Opt::RemainOnExit]
            .into_iter()
            .chain(Opt::READ)
            .find(|o| o.name() == name)
    }
}

/// The values of agentwatch's own options on one pane, as last read (empty where unset).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PaneOptions {
    /// `@agentwatch_agent`: the agent kind recorded on the pane.
    pub agent: String,
    /// `@agentwatch_cwd`: the working directory recorded while alive.
    pub cwd: String,
    /// `@agentwatch_session_id`: the agent session id recorded on the pane.
    pub session_id: String,
    /// `@agentwatch_args`: extra arguments from `agentwatch spawn -- ARGS` (JSON list).
    pub args: String,
    /// `@agentwatch_attempts`: auto-resume attempts since the last healthy run or manual relaunch.
    pub attempts: String,
    /// `@agentwatch_resumes`: when the recent auto-resumes ran (epoch ms, comma-separated), for the hourly cap.
    pub resumes: String,
    /// `@agentwatch_next`: when the scheduled auto-resume is due (epoch ms).
    pub next: String,
    /// `@agentwatch_paused`: auto-resume is off for this pane (`a`).
    pub paused: String,
    /// `@agentwatch_previous`: the death before the last relaunch (`exit 1|<ms>`).
    pub previous: String,
    /// `@agentwatch_last_status`: `<status> <epoch s>` from the shell integration.
    pub last_status: String,
    /// `@agentwatch_exited`: when the agent a pane's process ran was seen to exit (ms), and the pane's pid then.
    pub exited: String,
    /// `@agentwatch_judged`: `<death> <verdict>`, the supervisor's verdict on the pane's last death (see `crate::judged`).
    pub judged: String,
    /// `@agentwatch_state`: what the supervisor last said the agent does, for status lines.
    pub state: String,
    /// `@agentwatch_occupant`: the process the other records are about.
    pub occupant: String,
    /// The supervisor's word on what a live agent does (through `@agentwatch_verdict_fmt`).
    pub verdict: String,
}

impl PaneOptions {
    pub fn get(&self, opt: Opt) -> &str {
        match opt {
            Opt::RemainOnExit => "",
            Opt::Agent => &self.agent,
            Opt::Cwd => &self.cwd,
            Opt::SessionId => &self.session_id,
            Opt::Args => &self.args,
            Opt::Attempts => &self.attempts,
            Opt::Resumes => &self.resumes,
            Opt::Next => &self.next,
            Opt::Paused => &self.paused,
            Opt::Previous => &self.previous,
            Opt::LastStatus => &self.last_status,
            Opt::Exited => &self.exited,
            Opt::Judged => &self.judged,
            Opt::State => &self.state,
            Opt::Occupant => &self.occupant,
            Opt::Verdict => &self.verdict,
        }
    }

    pub fn set(&mut self, opt: Opt, value: String) {
        match opt {
            Opt::RemainOnExit => {}
            Opt::Agent => self.agent = value,
            Opt::Cwd => self.cwd = value,
            Opt::SessionId => self.session_id = value,
            Opt::Args => self.args = value,
            Opt::Attempts => self.attempts = value,
            Opt::Resumes => self.resumes = value,
            Opt::Next => self.next = value,
            Opt::Paused => self.paused = value,
            Opt::Previous => self.previous = value,
            Opt::LastStatus => self.last_status = value,
            Opt::Exited => self.exited = value,
            Opt::Judged => self.judged = value,
            Opt::State => self.state = value,
            Opt::Occupant => self.occupant = value,
            Opt::Verdict => self.verdict = value,
        }
    }
}

/// One row of `list-panes -a`: everything agentwatch knows about a pane at one instant.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pane {
    pub id: PaneId,
    pub session: String,
    pub window_index: u32,
    pub window_name: String,
    pub pane_index: u32,
    pub dead: bool,
    /// `pane_dead_status`: exit code of a normal exit.
    pub dead_status: Option<i32>,
    /// `pane_dead_signal` (tmux 3.3+): the signal number of a death by signal.
    pub dead_signal: Option<i32>,
    /// `pane_dead_time` (tmux 3.3+), epoch seconds.
    pub dead_time: Option<u64>,
    pub pid: Option<u32>,
    pub current_command: String,
    /// tmux's quoted copy of the argv it spawned.
    pub start_command: String,
    pub current_path: String,
    pub start_path: String,
    pub remain_on_exit: bool,
    pub window_activity: u64,
    pub history_size: u64,
    pub cursor: (u32, u32),
    /// agentwatch's own options on the pane, as last read.
    pub opts: PaneOptions,
    /// `@pane_status` and `@pane_wait_reason`: a hook plugin's word on what the agent does.
    pub hook_status: String,
    pub hook_reason: String,
}

impl Pane {
    /// Takes in a pane option as written (by agentwatch): the fields that hold options
    /// agentwatch reads; others are none of its business.
    pub fn set_option(&mut self, name: &str, value: String) {
        match Opt::parse(name) {
            Some(Opt::RemainOnExit) => {
                self.remain_on_exit = matches!(value.as_str(), "on" | "failed" | "key")
            }
            Some(opt) => self.opts.set(opt, value),
            None => {}
        }
    }

    /// `@agentwatch_exited`, `<ms> <pane pid>`: when the agent its process ran was seen to
    /// end, if that mark is about this pane process (a respawned pane's is not).
    /// The agent's pid in `@agentwatch_exited` (`<ms> <pane pid> <agent pid>`).
    pub fn exited_agent(&self) -> Option<u32> {
        self.exited_mark()?;
        self.opts.exited.split_whitespace().nth(2)?.parse().ok()
    }

    pub fn exited_mark(&self) -> Option<crate::time::Millis> {
        let mut f = self.opts.exited.split_whitespace();
        let at = f.next()?.parse().ok()?;
        match (f.next().map(str::parse::<u32>), self.pid) {
            (Some(Ok(pid)), Some(now)) if pid != now => None,
            _ => Some(at),
        }
    }

    /// The budget options as one string, to notice when they change.
    /// Whether `said` is what [`Pane::budget_opts`] would make, without making it.
    /// Every card, every poll: the lengths first, and no comparison of empty values (most
    /// are), which made it most of the dashboard's `memcmp` at 1000 panes.
    pub fn budget_is(&self, said: &str) -> bool {
        let o = &self.opts;
        let parts = [&o.attempts, &o.resumes, &o.next, &o.paused];
        if said.len() != parts.iter().map(|p| p.len()).sum::<usize>() + parts.len() - 1 {
            return false;
        }
        let said = said.as_bytes();
        let mut at = 0;
        for (k, v) in parts.into_iter().enumerate() {
            if k > 0 {
                if said[at] != b'|' {
                    return false;
                }
                at += 1;
            }
            if !v.is_empty() && &said[at..at + v.len()] != v.as_bytes() {
                return false;
            }
            at += v.len();
        }
        true
    }

    pub fn budget_opts(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.opts.attempts, self.opts.resumes, self.opts.next, self.opts.paused
        )
    }

    /// `session:window.pane`.
    pub fn target(&self) -> String {
        format!("{}:{}.{}", self.session, self.window_index, self.pane_index)
    }

    /// How the pane's process ended; `None` while it is alive or the status is not yet known.
    pub fn exit(&self) -> Option<Exit> {
        if !self.dead {
            return None;
        }
        match (self.dead_status, self.dead_signal) {
            (_, Some(sig)) => Some(Exit::Signal(sig)),
            (Some(code), None) => Some(Exit::Code(code)),
            (None, None) => None,
        }
    }

    /// The best known working directory: live path, else recorded, else start path.
    pub fn cwd(&self) -> &str {
        [&self.current_path, &self.opts.cwd, &self.start_path]
            .into_iter()
            .find(|s| !s.is_empty())
            .map(String::as_str)
            .unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_wording_is_exact() {
        assert_eq!(Exit::Code(3).describe(), "process exited (code 3)");
        assert_eq!(Exit::Signal(9).describe(), "killed by signal 9 (SIGKILL)");
        assert_eq!(Exit::Unknown.describe(), "process exited (code unknown)");
        assert_eq!(Exit::Signal(64).describe(), "killed by signal 64");
    }

    #[test]
    fn signal_names_round_trip() {
        assert_eq!(signal_number("TERM"), Some(15));
        assert_eq!(signal_number("sigint"), Some(2));
        assert_eq!(signal_number("9"), Some(9));
        assert_eq!(signal_number("BOGUS"), None);
    }

    #[test]
    fn a_dead_pane_with_neither_status_nor_signal_has_no_exit_yet() {
        let p = Pane {
            dead: true,
            ..Pane::default()
        };
        assert_eq!(p.exit(), None);
    }
}

/// What one poll saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    pub panes: Vec<Pane>,
    /// The tmux server's pid (`#{pid}`), for the lost-SIGCHLD kick.
    pub server_pid: Option<u32>,
    /// The server option `@agentwatch_auto` (`off`: `A` turned auto-resume off everywhere).
    pub auto_all: String,
    /// Records that did not have the expected shape and were skipped.
    pub malformed: usize,
}

#[cfg(test)]
mod budget_tests {
    use super::Pane;

    #[test]
    fn the_budget_is_compared_as_it_would_be_written() {
        let mut p = Pane::default();
        for (a, r, n, z) in [
            ("1", "", "123", "on"),
            ("x|y", "", "", "|"),
            ("", "", "", ""),
        ] {
            p.opts.attempts = a.into();
            p.opts.resumes = r.into();
            p.opts.next = n.into();
            p.opts.paused = z.into();
            let written = p.budget_opts();
            assert!(p.budget_is(&written), "{written}");
            for other in ["1||123|on|", "1||123|o", "", "|||", "x|y|||", "1||123|on "] {
                assert_eq!(
                    p.budget_is(other),
                    other == written,
                    "{other:?} vs {written:?}"
                );
            }
        }
    }
}

#[cfg(test)]
mod pane_id_tests {
    use super::{PaneId, ServerId};

    #[test]
    fn a_pane_of_another_host_is_another_pane_shown_by_its_own_number() {
        let here = PaneId::parse("%3").unwrap();
        let there = PaneId::on(ServerId::Host(1), 3);
        assert_ne!(here, there);
        assert_eq!(
            (here.server(), there.server()),
            (ServerId::Local, ServerId::Host(1))
        );
        assert_eq!(
            PaneId::on(ServerId::Host(254), 1).server(),
            ServerId::Host(254)
        );
        assert_eq!(there.to_string(), "%3");
        assert_eq!(there.number(), 3);
        // A number that does not fit is refused, never folded onto another pane.
        assert_eq!(PaneId::parse("%16777216"), None);
        assert_eq!(
            PaneId::parse("%16777215").map(PaneId::number),
            Some(16_777_215)
        );
    }

    #[test]
    fn the_budget_is_said_exactly_as_it_would_be_made() {
        let values = ["", "1", "2", "1|", "1796431701321", "x"];
        let said = [
            "",
            "|||",
            "1|||",
            "|1||",
            "1|2||",
            "1||||",
            "1|2|1796431701321|",
            "x|x|x|x",
            "|||x",
            "1|2",
            "1|2|||",
            "||||",
        ];
        for a in values {
            for r in values {
                for n in ["", "1796431701321"] {
                    for p in ["", "1"] {
                        let mut pane = super::Pane::default();
                        pane.opts.attempts = a.into();
                        pane.opts.resumes = r.into();
                        pane.opts.next = n.into();
                        pane.opts.paused = p.into();
                        let made = pane.budget_opts();
                        assert!(pane.budget_is(&made), "{made}");
                        for s in said {
                            assert_eq!(pane.budget_is(s), s == made, "{s:?} against {made:?}");
                        }
                    }
                }
            }
        }
    }
}
