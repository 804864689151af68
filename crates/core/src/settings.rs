//! The settings, as data: what the config file holds once parsed and checked (the parsing,
//! with its errors naming file, line and key, is the binary's `config` module). Defaults
//! here are the documented ones (`config.example.toml`).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::agent::{self, AgentDef, Agents, IdShape, SESSION_ID};

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// How often tmux is polled, in milliseconds.
    pub tick_ms: u64,
    /// Set `remain-on-exit on` on agent panes so a dead agent's output stays readable.
    pub retain_dead: bool,
    /// Show every pane, not only agents (like `--all`).
    pub show_all_panes: bool,
    /// The order of the cards: `attention` (dead, waiting, idle, working; each in tmux's
    /// order) or `tmux` (session, window, pane).
    pub order: Order,
    /// `auto` (cards when they all fit, else one line per agent), `cards` or `list`; `v`
    /// switches while running.
    pub view: crate::layout::Mode,
    /// Clicks select, a double click peeks, the wheel scrolls. Off, the terminal keeps its
    /// own selection of text without Shift.
    pub mouse: bool,
    /// Shells: a pane whose own process is one of these hosts agents typed at its prompt.
    pub shells: Vec<String>,
    /// Poll over a persistent tmux control-mode client (no process per tick); it falls back
    /// to one `tmux` process per call whenever the connection fails.
    pub control_mode: bool,
    /// Agent kinds: overrides of the built-ins and new kinds.
    pub agents: BTreeMap<String, AgentConfig>,
    pub auto_resume: AutoResume,
    /// `[auto_continue]`: type `continue` into an agent waiting at a usage limit once it
    /// resets.
    pub auto_continue: AutoContinue,
    pub crash_records: CrashRecords,
    /// `[context]`: context windows by model, and when a context counts as full.
    pub context: Context,
    pub notify: Notify,
    /// `[theme]`: the colours, for a dark or a light terminal, each settable.
    pub theme: ThemeConfig,
    /// `[[hosts]]`: tmux servers on other machines, reached with ssh, watched beside the
    /// local one.
    pub hosts: Vec<Host>,
}

/// Hosts watched at once, besides the local server.
pub const MAX_HOSTS: usize = 32;

impl Config {
    /// `--ssh DEST`: hosts beside those of `[[hosts]]`, named by their destination (one
    /// named so already is not added twice). An error names the flag and what is wrong.
    pub fn add_ssh(&mut self, dests: &[String]) -> Result<(), SshFlagError> {
        for dest in dests {
            let host = Host::ad_hoc(dest);
            if let Some(why) = host.problem() {
                return Err(SshFlagError::Bad {
                    dest: dest.clone(),
                    why,
                });
            }
            if !self.hosts.iter().any(|h| h.name == host.name) {
                self.hosts.push(host);
            }
        }
        if self.hosts.len() > MAX_HOSTS {
            return Err(SshFlagError::TooMany(self.hosts.len()));
        }
        Ok(())
    }
}

/// A `--ssh` that cannot be watched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SshFlagError {
    #[error("--ssh {dest}: {why}")]
    Bad { dest: String, why: String },
    #[error("{0} hosts: at most {MAX_HOSTS} (drop some --ssh or [[hosts]])")]
    TooMany(usize),
}

/// `[[hosts]]`: a tmux server on another machine, reached with `ssh` alone (nothing of
/// agentwatch runs there).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// How cards, rows and events name it.
    pub name: String,
    /// The destination as `ssh` takes it: the user's `~/.ssh/config`, keys and agent apply.
    pub ssh: String,
    /// The tmux server there, as `tmux -L` names it; default: its default server.
    #[serde(default)]
    pub socket_name: Option<String>,
    /// The tmux server there, as `tmux -S` names it.
    #[serde(default)]
    pub socket_path: Option<String>,
    /// The tmux program there.
    #[serde(default = "default_remote_tmux")]
    pub tmux: String,
    /// More arguments for `ssh`, before the destination (`["-J", "jump"]`).
    #[serde(default)]
    pub ssh_args: Vec<String>,
}

fn default_remote_tmux() -> String {
    "tmux".into()
}

impl Host {
    /// An ad hoc host (`--ssh DEST`): named by its destination.
    pub fn ad_hoc(dest: &str) -> Host {
        Host {
            name: dest.to_string(),
            ssh: dest.to_string(),
            socket_name: None,
            socket_path: None,
            tmux: default_remote_tmux(),
            ssh_args: Vec::new(),
        }
    }

    /// What is wrong with it, if anything.
    pub fn problem(&self) -> Option<String> {
        if self.name.is_empty()
            || self.name.len() > 40
            || self
                .name
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        {
            return Some(format!(
                "name {:?} must be 1 to 40 characters, without spaces",
                self.name
            ));
        }
        if self.socket_name.is_some() && self.socket_path.is_some() {
            return Some("give socket_name or socket_path, not both".into());
        }
        if self.tmux.is_empty() {
            return Some("tmux (the program there) must not be empty".into());
        }
        // These go through the remote login shell (sh, bash, zsh or fish): no word quoting
        // can carry a backslash or a quote through all of them alike.
        for (key, v) in [
            ("tmux", Some(&self.tmux)),
            ("socket_name", self.socket_name.as_ref()),
            ("socket_path", self.socket_path.as_ref()),
        ] {
            if v.is_some_and(|v| v.contains(['\\', '\'', '\n'])) {
                return Some(format!(
                    "{key} {v:?} holds a backslash, a quote or a newline, which cannot pass safely through the remote shell: rename it"
                ));
            }
        }
        dest_problem(&self.ssh)
    }
}

/// Why `dest` is no ssh destination: one ssh would take for an option, or several words.
pub fn dest_problem(dest: &str) -> Option<String> {
    (dest.is_empty() || dest.starts_with('-') || dest.contains(char::is_whitespace)).then(|| {
        format!(
            "{dest:?} is not an ssh destination (write it as `ssh` takes it: host, user@host or ssh://host:port)"
        )
    })
}

/// The order of the cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// What needs its user first: dead, waiting, idle, working; a card moves down only once
    /// its calmer state held for 10 s, so the grid does not jump.
    #[default]
    Attention,
    /// tmux's order: session, window, pane.
    Tmux,
}

/// `[notify]`: how a death (or auto-resume giving up) is announced.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Notify {
    /// Ring the terminal bell once.
    pub bell: bool,
    /// A desktop notification: notify-send where present, else OSC 777/9 to the terminal.
    pub desktop: bool,
    /// A command (argv, never a shell string) run once per death with the event as JSON on
    /// its stdin, e.g. ["/home/me/bin/page-me"].
    pub on_death: Vec<String>,
    /// An http:// or https:// address each announcement is POSTed to as JSON (through
    /// curl, by the supervising instance only); empty: none.
    pub webhook: String,
    /// How long after an event others are gathered into the same POST, in seconds.
    pub webhook_collapse_secs: u64,
}

/// The longest `webhook_collapse_secs`: news held back longer is late news.
pub const MAX_COLLAPSE_SECS: u64 = 300;

impl Default for Notify {
    fn default() -> Self {
        Notify {
            bell: true,
            desktop: false,
            on_death: Vec::new(),
            webhook: String::new(),
            webhook_collapse_secs: 3,
        }
    }
}

/// `[theme]`: `name` picks the colours for a dark or a light terminal; `colors` sets any
/// role's colour over them (`waiting = "#d78700"`, `dim = "245"`, `alarm = "red"`). The
/// names are checked by the binary, which knows colours.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ThemeConfig {
    pub name: ThemeName,
    pub colors: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ThemeName {
    #[default]
    Dark,
    Light,
}

impl Notify {
    /// What is wrong with `webhook`, if anything (an empty one is no webhook).
    pub fn webhook_problem(&self) -> Option<String> {
        let url = self.webhook.as_str();
        if url.is_empty() {
            return None;
        }
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Some(
                "a URL holds no spaces, tabs, line breaks or control characters: write a space as %20"
                    .into(),
            );
        }
        let lower = url.to_ascii_lowercase();
        let Some(rest) = ["https://", "http://"]
            .iter()
            .find_map(|scheme| lower.strip_prefix(scheme))
        else {
            return Some(format!(
                "{url:?} is not an http:// or https:// URL: give the whole address, e.g. webhook = \"https://ntfy.sh/my-topic\""
            ));
        };
        if rest.is_empty() || rest.starts_with(['/', '?', '#']) {
            return Some(format!(
                "{url:?} names no host: give the whole address, e.g. webhook = \"https://ntfy.sh/my-topic\""
            ));
        }
        None
    }
}

/// `[crash_records]`: how many dead panes' outputs are kept, at most.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CrashRecords {
    /// Records kept (newest first).
    pub keep: usize,
    /// Total size of all records, in MiB.
    pub max_total_mb: u64,
}

impl Default for CrashRecords {
    fn default() -> Self {
        CrashRecords {
            keep: 200,
            max_total_mb: 100,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            tick_ms: 500,
            retain_dead: true,
            show_all_panes: false,
            order: Order::Attention,
            view: crate::layout::Mode::Auto,
            mouse: true,
            control_mode: true,
            shells: [
                "bash", "zsh", "fish", "sh", "dash", "ksh", "mksh", "tcsh", "csh",
            ]
            .map(String::from)
            .to_vec(),
            agents: BTreeMap::new(),
            auto_resume: AutoResume::default(),
            auto_continue: AutoContinue::default(),
            crash_records: CrashRecords::default(),
            context: Context::default(),
            notify: Notify::default(),
            theme: ThemeConfig::default(),
            hosts: Vec::new(),
        }
    }
}

/// One `[agents.NAME]` table. Every field is optional: for a built-in kind only what is
/// given overrides it; a new kind defaults `match` and `start` to its name.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    #[serde(rename = "match")]
    pub matches: Option<Vec<String>>,
    pub start: Option<Vec<String>>,
    pub resume: Option<Vec<String>>,
    pub id: Option<IdShape>,
    /// Wrapper programs or scripts that run this agent and pass their arguments through.
    pub wrappers: Option<Vec<String>>,
    /// Words the agent prints when asked to resume a session it has no record of.
    pub no_session: Option<Vec<String>>,
    /// The agent starts a session again under an id it keeps no record of.
    pub start_again: Option<bool>,
    /// Lines on its screen that mean it waits for its user.
    pub waiting: Option<Vec<String>>,
    /// Lines on its screen while it works; with them, a quiet screen with neither is idle.
    pub working: Option<Vec<String>>,
    /// Lines that tell why it stopped, added to the built-in ones
    /// (`[agents.NAME.causes] auth = ["..."]`).
    pub causes: Option<crate::cause::CauseWords>,
    pub auto_resume: Option<AutoResumeOverride>,
}

/// `[auto_resume]`: the bounded auto-resume policy.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AutoResume {
    pub enabled: bool,
    pub max_attempts: u32,
    pub backoff_secs: Vec<u64>,
    pub healthy_after_secs: u64,
    pub max_per_hour: u32,
    pub never_exit_codes: Vec<i32>,
    pub never_signals: Vec<String>,
    /// The backoff for an agent that stopped at an overloaded API or a network error:
    /// longer than `backoff_secs`, since retrying soon makes a busy API busier.
    pub slow_backoff_secs: Vec<u64>,
    /// A mass death: at least this many agents of one server dead within
    /// [`MASS_WINDOW_SECS`] of each other.
    pub mass_deaths: u32,
    /// In a mass death, one agent is resumed first; the rest once it stayed up this long.
    pub canary_secs: u64,
    /// Then this many at a time...
    pub burst: u32,
    /// ...every this many seconds.
    pub stagger_secs: u64,
}

/// Deaths this close together count towards a mass death.
pub const MASS_WINDOW_SECS: u64 = 10;

impl Default for AutoResume {
    fn default() -> Self {
        AutoResume {
            enabled: true,
            max_attempts: 3,
            backoff_secs: vec![2, 10, 30],
            healthy_after_secs: 60,
            max_per_hour: 6,
            never_exit_codes: vec![0, 130],
            never_signals: vec!["HUP".into(), "INT".into(), "TERM".into()],
            slow_backoff_secs: vec![30, 120, 300],
            mass_deaths: 3,
            canary_secs: 10,
            burst: 4,
            stagger_secs: 5,
        }
    }
}

/// How a mass death on one server is resumed (see `state::pacing`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pacing {
    pub mass_deaths: u32,
    pub mass_window_secs: u64,
    pub canary_secs: u64,
    pub burst: u32,
    pub stagger_secs: u64,
}

impl AutoResume {
    pub fn pacing(&self) -> Pacing {
        Pacing {
            mass_deaths: self.mass_deaths,
            mass_window_secs: MASS_WINDOW_SECS,
            canary_secs: self.canary_secs,
            burst: self.burst,
            stagger_secs: self.stagger_secs,
        }
    }
}

/// `[agents.NAME.auto_resume]`: any field overrides the global one for that kind.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoResumeOverride {
    pub enabled: Option<bool>,
    pub max_attempts: Option<u32>,
    pub backoff_secs: Option<Vec<u64>>,
    pub healthy_after_secs: Option<u64>,
    pub max_per_hour: Option<u32>,
    pub never_exit_codes: Option<Vec<i32>>,
    pub never_signals: Option<Vec<String>>,
    pub slow_backoff_secs: Option<Vec<u64>>,
}

/// `[context]`: the context window of each model whose agent's record does not say it
/// (codex's does), by model name prefix; and the share of it that marks a card.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Context {
    pub threshold_percent: u64,
    pub windows: BTreeMap<String, u64>,
}

impl Default for Context {
    fn default() -> Self {
        Context {
            threshold_percent: 85,
            // Anthropic's models take 200k tokens unless run with a larger window; a
            // larger one is the user's to set (`"claude-opus-4-8" = 1000000`).
            windows: [("claude-".to_string(), 200_000)].into(),
        }
    }
}

/// `[auto_continue]`: an agent alive at a usage limit is told to go on once it resets.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AutoContinue {
    /// Off by default: typing into an agent is the user's call (`C` switches it for one).
    pub enabled: bool,
    /// Waited after the reset time the agent printed, for clocks that disagree.
    pub margin_secs: u64,
    /// What is typed, followed by Enter.
    pub text: String,
}

impl Default for AutoContinue {
    fn default() -> Self {
        AutoContinue {
            enabled: false,
            margin_secs: 60,
            text: "continue".into(),
        }
    }
}

/// A kind from its config table over the built-in of the same name, if any.
pub fn resolve_agent(name: &str, a: &AgentConfig, base: Option<&AgentDef>) -> AgentDef {
    let is_new = base.is_none();
    let base = base.cloned().unwrap_or_else(|| AgentDef {
        name: name.to_string(),
        matches: vec![name.to_string()],
        start: vec![name.to_string()],
        resume: Vec::new(),
        id: IdShape::Token,
        wrappers: Vec::new(),
        no_session: Vec::new(),
        start_again: false,
        resume_reconnects: false,
        waiting: Vec::new(),
        working: Vec::new(),
        causes: crate::cause::CauseWords::builtin(name),
    });
    let resume = a.resume.clone().unwrap_or(base.resume);
    // A new kind whose resume argv names no id is one without ids (like aider).
    let inferred = if is_new && !resume.iter().any(|w| w.contains(SESSION_ID)) {
        IdShape::None
    } else {
        base.id
    };
    let id = a.id.unwrap_or(inferred);
    AgentDef {
        name: name.to_string(),
        matches: a.matches.clone().unwrap_or(base.matches),
        start: a.start.clone().unwrap_or(base.start),
        resume,
        id,
        wrappers: a.wrappers.clone().unwrap_or(base.wrappers),
        no_session: a.no_session.clone().unwrap_or(base.no_session),
        start_again: a.start_again.unwrap_or(base.start_again),
        resume_reconnects: base.resume_reconnects,
        waiting: a.waiting.clone().unwrap_or(base.waiting),
        working: a.working.clone().unwrap_or(base.working),
        causes: match &a.causes {
            Some(more) => base.causes.extended(more),
            None => base.causes,
        },
    }
}

impl Config {
    /// The agent table: built-ins overridden and extended by `[agents.*]`.
    pub fn agents(&self) -> Agents {
        let mut defs = agent::builtin();
        for (name, a) in &self.agents {
            match defs.iter_mut().find(|d| &d.name == name) {
                Some(d) => *d = resolve_agent(name, a, Some(d)),
                None => defs.push(resolve_agent(name, a, None)),
            }
        }
        Agents::new(defs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(url: &str) -> Option<String> {
        Notify {
            webhook: url.into(),
            ..Notify::default()
        }
        .webhook_problem()
    }

    #[test]
    fn a_webhook_is_a_whole_http_or_https_address_or_nothing() {
        for ok in [
            "",
            "https://ntfy.sh/my-topic",
            "http://127.0.0.1:8080/hook",
            "HTTPS://hooks.slack.com/services/T0/B0/x",
            "https://ntfy.sh/t?tpl=yes&m={{.text}}",
        ] {
            assert_eq!(hook(ok), None, "{ok}");
        }
        let no_scheme = hook("ntfy.sh/my-topic").unwrap_or_default();
        assert!(
            no_scheme.contains("not an http:// or https:// URL"),
            "{no_scheme}"
        );
        assert!(
            no_scheme.contains("https://ntfy.sh/my-topic"),
            "{no_scheme}"
        );
        assert!(hook("ftp://host/x").is_some());
        assert!(hook("file:///etc/passwd").is_some());
        let no_host = hook("https://").unwrap_or_default();
        assert!(no_host.contains("names no host"), "{no_host}");
        assert!(hook("http:///path").is_some());
        for bad in [
            "https://ntfy.sh/my topic",
            "https://ntfy.sh/x\n",
            "https://ntfy.sh/\tx",
            "https://ntfy.sh/x\u{7f}",
        ] {
            let why = hook(bad).unwrap_or_default();
            assert!(why.contains("no spaces"), "{bad:?}: {why}");
        }
    }
}
