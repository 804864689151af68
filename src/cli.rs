//! Command-line definitions (clap).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::adapters::tmux::server::ServerChoice;

/// What `--help` says before the options: the dashboard is what `agentwatch` alone opens.
const LONG_ABOUT: &str = concat!(
    env!("CARGO_PKG_DESCRIPTION"),
    "\n\n",
    "Run `agentwatch` with no command to open the dashboard on the tmux server you are in \
     ($TMUX, else the default server; -L or -S picks another). The commands below are \
     one-shot: each does its job, prints and exits."
);

/// The usage line, with the two ways to run agentwatch told apart.
const USAGE: &str = "agentwatch [OPTIONS]            open the dashboard
       agentwatch [OPTIONS] <COMMAND>  run one command";

/// The heading of the options every command takes, before or after its name.
const GLOBAL: &str = "Global options";

/// `shell-init --help`: the rc lines, one to a line so that none is wrapped in two.
const SHELL_INIT_LONG: &str =
    "Print the shell integration for your rc file: it tells agentwatch the \
exit code of an agent you start from the prompt. Add one line to your shell's rc file:

  ~/.bashrc                    eval \"$(agentwatch shell-init bash)\"
  ~/.zshrc                     eval \"$(agentwatch shell-init zsh)\"
  ~/.config/fish/config.fish   agentwatch shell-init fish | source";

/// Help is wrapped to the terminal, never wider than 80 columns: when stdout is not a
/// terminal clap falls back to `$COLUMNS`, else 100, and the cap holds that to 80 too.
#[derive(Debug, Parser)]
#[command(
    name = "agentwatch",
    version,
    about,
    long_about = LONG_ABOUT,
    override_usage = USAGE,
    max_term_width = 80
)]
pub struct Cli {
    /// The tmux server with this socket name (as tmux -L).
    #[arg(
        short = 'L',
        long = "socket-name",
        value_name = "NAME",
        global = true,
        conflicts_with = "socket_path",
        help_heading = GLOBAL
    )]
    pub socket_name: Option<String>,

    /// The tmux server at this socket path (as tmux -S).
    #[arg(
        short = 'S',
        long = "socket-path",
        value_name = "PATH",
        global = true,
        help_heading = GLOBAL
    )]
    pub socket_path: Option<PathBuf>,

    /// Config file (default: $AGENTWATCH_CONFIG, else ~/.config/agentwatch/config.toml).
    #[arg(
        short = 'c',
        long = "config",
        value_name = "FILE",
        global = true,
        help_heading = GLOBAL
    )]
    pub config: Option<PathBuf>,

    /// Show every pane, not only agents' (status takes it too).
    #[arg(long)]
    pub all: bool,

    /// Watch the tmux server on this host too, reached with ssh (repeatable; beside the
    /// config's [[hosts]]).
    #[arg(long = "ssh", value_name = "DEST", global = true, help_heading = GLOBAL)]
    pub ssh: Vec<String>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start an agent in a new tmux window (session `agents` by default) with a session id
    /// agentwatch chose and recorded, so `r` can resume it; prints the new pane id.
    Spawn(SpawnArgs),
    /// Supervise the server with no terminal open: the dashboard's whole supervision
    /// (auto-resume, journal, notifications), one daemon per tmux server. Logs to the log
    /// file (and stderr when in the foreground); SIGTERM or SIGINT stop it.
    Daemon(DaemonArgs),
    /// One look at the agents, as a table or JSON (`--json`); exit code 0 when no agent is
    /// dead, 1 when one is, 2 on error. For status lines and scripts.
    Status {
        /// An array of objects (schema in docs/guide/scripting.md).
        #[arg(long)]
        json: bool,
        /// Every pane, not only agents' (a plain shell too); the same as `agentwatch --all
        /// status`.
        #[arg(long)]
        all: bool,
    },
    /// What a pane's agent does (working, waiting for input, idle), which source decided it
    /// and why, and what every other source says.
    Explain {
        /// The pane: %N, or a target like main:2.0.
        pane: String,
    },
    /// The lifecycle journal: deaths, resumes, give-ups, relaunches, lost servers. With
    /// -S or -L, only that server's events and the hosts'; without, every server's, each
    /// other server named.
    Events {
        /// Keep printing new events as they happen.
        #[arg(long, short)]
        follow: bool,
        /// One JSON object per line (NDJSON), as stored.
        #[arg(long)]
        json: bool,
        /// Only events newer than this: 90s, 10m, 2h, 1d.
        #[arg(long, value_name = "DURATION")]
        since: Option<String>,
    },
    /// Check tmux, the server, the agents, the config and the shell integration, and say how
    /// to fix what is wrong.
    Doctor,
    /// A private tmux server with simulated agents that crash in different ways, and the
    /// dashboard on it; removed when you quit. No real agent needed.
    Demo,
    /// Add agentwatch's hooks to claude's settings.json or codex's hooks.json (shows the
    /// change), or remove exactly those: the agent then tells agentwatch itself when it
    /// works, waits for you or is idle.
    Hooks {
        #[arg(value_enum)]
        action: HooksAction,
        #[arg(value_enum)]
        agent: crate::commands::hooks::HookAgent,
        /// Show the change and write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Run by an agent's hook: reads the event's JSON on stdin and writes what the agent
    /// does into its pane's options.
    #[command(hide = true)]
    Hook {
        #[arg(value_enum)]
        agent: crate::commands::hooks::HookAgent,
        /// The hook event's name, as the agent calls it (Stop, Notification, ...).
        event: String,
    },
    /// Print shell completions: bash, zsh, fish, elvish, powershell.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff); with a command, its own page, agentwatch-COMMAND(1).
    Man {
        /// The command whose page to print (status, spawn, daemon, ...).
        command: Option<String>,
    },
    /// Print the shell integration for your rc file: it tells agentwatch the exit code of an
    /// agent you start from the prompt.
    #[command(long_about = SHELL_INIT_LONG)]
    ShellInit {
        #[arg(value_enum)]
        shell: ShellKind,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HooksAction {
    Install,
    Uninstall,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShellKind {
    Bash,
    Zsh,
    Fish,
}

impl ShellKind {
    /// The snippet, shipped in `assets/shell/`.
    pub fn snippet(self) -> &'static str {
        match self {
            ShellKind::Bash => include_str!("../assets/shell/agentwatch.bash"),
            ShellKind::Zsh => include_str!("../assets/shell/agentwatch.zsh"),
            ShellKind::Fish => include_str!("../assets/shell/agentwatch.fish"),
        }
    }
}

#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Start it in the background and print its pid (if one already runs for this server,
    /// print that one's pid).
    #[arg(long, conflicts_with = "stop")]
    pub detach: bool,
    /// Stop the daemon of this server.
    #[arg(long)]
    pub stop: bool,
}

#[derive(Debug, Args)]
pub struct SpawnArgs {
    /// The agent kind: claude, codex, gemini, opencode, aider, cursor-agent, amp, or one from
    /// the config.
    pub agent: String,
    /// Working directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Window name (default: the agent kind).
    #[arg(long)]
    pub name: Option<String>,
    /// tmux session to create the window in (created if missing).
    #[arg(long, value_name = "SESSION", default_value = "agents")]
    pub target: String,
    /// Start it on this host of [[hosts]] (or --ssh), in its tmux server; --cwd is then a
    /// directory there.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Extra arguments for the agent, after `--`; kept for relaunches.
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

impl Cli {
    pub fn server(&self) -> ServerChoice {
        match (&self.socket_path, &self.socket_name) {
            (Some(p), _) => ServerChoice::Path(p.clone()),
            (None, Some(n)) => ServerChoice::Name(n.clone()),
            (None, None) => ServerChoice::Default,
        }
    }
}
