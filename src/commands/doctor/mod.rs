//! `agentwatch doctor`: checks what agentwatch depends on and says how to fix what is wrong.

use std::path::Path;
use std::time::Duration;

use crate::adapters::tmux::client::{Tmux, TmuxError, TmuxVersion};
use crate::config::Config;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Ok,
    /// Neither good nor bad, only so: an agent that is not installed.
    Info,
    Warn,
    Fail,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub level: Level,
    pub what: String,
    pub detail: String,
    pub fix: Option<String>,
}

impl Check {
    fn new(level: Level, what: &str, detail: impl Into<String>, fix: Option<String>) -> Check {
        Check {
            level,
            what: what.to_string(),
            detail: detail.into(),
            fix,
        }
    }

    pub fn line(&self) -> String {
        let mark = match self.level {
            Level::Ok => "✔",
            Level::Info => "-",
            Level::Warn => "!",
            Level::Fail => "✖",
        };
        let mut s = format!("{mark} {}: {}", self.what, self.detail);
        if let Some(fix) = &self.fix {
            s.push_str(&format!("\n    fix: {fix}"));
        }
        s
    }
}

/// What doctor knows besides tmux: where the config came from (or why it failed).
pub struct Context<'a> {
    pub config: Result<(&'a Config, Option<&'a Path>), &'a crate::config::ConfigError>,
    pub state_dir: Option<std::path::PathBuf>,
    /// Where crash records are kept.
    pub crash_dir: Option<std::path::PathBuf>,
    pub home: Option<std::path::PathBuf>,
    pub shell: Option<String>,
}

pub async fn run(tmux: &Tmux, ctx: &Context<'_>) -> Vec<Check> {
    let mut out = Vec::new();
    // tmux itself.
    match tmux.version().await {
        Ok(v) => out.push(version_check(v)),
        Err(TmuxError::NotInstalled) => {
            out.push(Check::new(
                Level::Fail,
                "tmux",
                not_installed("tmux"),
                Some("install tmux 3.3 or newer (apt-get install tmux, brew install tmux)".into()),
            ));
            return out;
        }
        Err(e) => out.push(Check::new(Level::Fail, "tmux", e.to_string(), None)),
    }
    // The server and its panes.
    let socket = tmux.socket().display().to_string();
    let listing = match tmux.list_panes().await {
        Ok(l) => {
            out.push(Check::new(
                Level::Ok,
                "server",
                format!("reachable at {socket} ({} panes)", l.panes.len()),
                None,
            ));
            Some(l)
        }
        Err(TmuxError::NoServer { .. }) => {
            out.push(Check::new(
                Level::Fail,
                "server",
                format!("no tmux server running on {socket}"),
                Some(
                    "start tmux, or point agentwatch at your server with -L NAME or -S PATH".into(),
                ),
            ));
            None
        }
        Err(e) => {
            out.push(Check::new(
                Level::Fail,
                "server",
                format!("{socket}: {e}"),
                None,
            ));
            None
        }
    };
    out.push(supervision_check(tmux, listing.is_some()).await);
    if let Some(l) = &listing {
        let agents = ctx
            .config
            .as_ref()
            .ok()
            .map(|(c, _)| c.agents())
            .unwrap_or_default();
        let agent_panes: Vec<_> = l
            .panes
            .iter()
            .filter(|p| agents.recognise(p, None).is_some())
            .collect();
        out.push(Check::new(
            if agent_panes.is_empty() {
                Level::Warn
            } else {
                Level::Ok
            },
            "agents",
            format!(
                "{} found",
                crate::core::text::counted(agent_panes.len(), "agent pane", "agent panes")
            ),
            agent_panes.is_empty().then(|| {
                "start one: agentwatch spawn claude (or type claude in a tmux pane)".to_string()
            }),
        ));
        let unretained: Vec<String> = agent_panes
            .iter()
            .filter(|p| !p.dead && !p.remain_on_exit)
            .map(|p| p.id.to_string())
            .collect();
        out.push(if unretained.is_empty() {
            Check::new(Level::Ok, "remain-on-exit", "on for every live agent pane", None)
        } else {
            Check::new(
                Level::Warn,
                "remain-on-exit",
                format!("off for {} (their output is lost when they die)", unretained.join(", ")),
                Some("leave agentwatch running (it sets it), or: tmux set-option -p -t %N remain-on-exit on".into()),
            )
        });
        let exit_empty = tmux
            .run(["show-options", "-s", "-v", "exit-empty"])
            .await
            .map(|o| String::from_utf8_lossy(&o).trim().to_string())
            .unwrap_or_default();
        out.push(if exit_empty == "off" {
            Check::new(
                Level::Ok,
                "exit-empty",
                "off (the server outlives its last session)",
                None,
            )
        } else {
            Check::new(
                Level::Warn,
                "exit-empty",
                format!(
                    "{} (the server exits when its last session closes)",
                    if exit_empty.is_empty() {
                        "on"
                    } else {
                        &exit_empty
                    }
                ),
                Some("tmux set-option -s exit-empty off (agentwatch spawn does this)".into()),
            )
        });
        let desktop = ctx.config.as_ref().is_ok_and(|(c, _)| c.notify.desktop);
        if desktop && crate::adapters::which::find_program("notify-send").is_none() {
            let passthrough = tmux
                .run(["show-options", "-g", "-v", "allow-passthrough"])
                .await
                .map(|o| String::from_utf8_lossy(&o).trim().to_string())
                .unwrap_or_default();
            out.push(passthrough_check(&passthrough));
        }
        out.push(transport_check(tmux, ctx).await);
        let hooked = l.panes.iter().any(|p| !p.opts.last_status.is_empty());
        out.push(shell_check(ctx, hooked));
    } else {
        out.push(shell_check(ctx, false));
    }
    // Agent CLIs.
    if let Ok((config, _)) = &ctx.config {
        for def in config.agents().all() {
            let Some(program) = def.start.first() else {
                continue;
            };
            let found = match crate::adapters::which::find_program(program) {
                Some(path) => {
                    let version = program_version(&path).await;
                    Some((path, version))
                }
                None => None,
            };
            out.push(agent_check(&def.name, program, found));
        }
    }
    // agentwatch's own agent hooks, where installed.
    for agent in [
        crate::commands::hooks::HookAgent::Claude,
        crate::commands::hooks::HookAgent::Codex,
    ] {
        let what = format!("{} hooks", agent.name());
        match crate::commands::hooks::check(agent) {
            None => {}
            Some(ok @ crate::commands::hooks::HookCheck::Installed(_)) => {
                out.push(Check::new(Level::Ok, &what, ok.to_string(), None))
            }
            Some(dangling) => out.push(Check::new(
                Level::Warn,
                &what,
                dangling.to_string(),
                Some(format!(
                    "agentwatch hooks install {} (updates them to this agentwatch)",
                    agent.name()
                )),
            )),
        }
    }
    // Config, journal.
    out.push(match &ctx.config {
        Ok((_, Some(path))) => Check::new(
            Level::Ok,
            "config",
            format!("{} is valid", path.display()),
            None,
        ),
        Ok((_, None)) => Check::new(
            Level::Ok,
            "config",
            "no config file: defaults (see config.example.toml)",
            None,
        ),
        Err(e) => Check::new(
            Level::Fail,
            "config",
            e.to_string(),
            Some("fix the key named above, or move the file away to use defaults".into()),
        ),
    });
    // The webhook, where one is set: curl sends it.
    if let Ok((config, _)) = &ctx.config {
        if !config.notify.webhook.is_empty() {
            out.push(webhook_check(
                &config.notify.webhook,
                crate::adapters::which::find_program("curl"),
            ));
        }
    }
    match &ctx.state_dir {
        Some(dir) => {
            out.push(store_check("journal", &dir.join("journal.jsonl"), false));
            out.push(store_check("roster", &dir.join("lost-agents.json"), false));
        }
        None => out.push(Check::new(
            Level::Warn,
            "journal",
            "no home directory: no journal, log or roster",
            Some("set HOME".into()),
        )),
    }
    if let Some(dir) = &ctx.crash_dir {
        out.push(store_check("crash records", dir, true));
    }
    out
}

/// One of agentwatch's own files (or, `dir`, a directory of them): tried as it will be
/// written, not only its directory (a path that is a directory, a file not ours to write).
fn store_check(what: &str, path: &Path, dir: bool) -> Check {
    let fix = |s: &str| Some(s.to_string());
    let result = (|| -> std::io::Result<()> {
        if dir {
            return writable(path);
        }
        if let Some(parent) = path.parent() {
            writable(parent)?;
        }
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => Err(std::io::Error::other(
                "it is not a regular file (a directory?), so it cannot be written",
            )),
            Ok(_) => std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map(drop),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    })();
    match result {
        Ok(()) => Check::new(
            Level::Ok,
            what,
            format!("{} is writable", path.display()),
            None,
        ),
        Err(e) => Check::new(
            Level::Fail,
            what,
            format!("{}: {e}", path.display()),
            if std::fs::metadata(path).is_ok_and(|m| !dir && m.is_dir()) {
                fix("move the directory away: agentwatch keeps a file there")
            } else {
                fix("make it writable (and free some space), or set XDG_STATE_HOME / XDG_DATA_HOME")
            },
        ),
    }
}

/// Whether `[notify] webhook` can be sent: curl, found or not (the URL shown as its scheme
/// and host only).
fn webhook_check(url: &str, curl: Option<std::path::PathBuf>) -> Check {
    let to = crate::adapters::webhook::sender::shown(url);
    match curl {
        Some(path) => Check::new(
            Level::Ok,
            "webhook",
            format!("{to}, sent through {}", path.display()),
            None,
        ),
        None => Check::new(
            Level::Warn,
            "webhook",
            format!("{to} cannot be sent: {}", not_installed("curl")),
            Some(
                "install curl to send [notify] webhook notifications (apt-get install curl, brew install curl)"
                    .into(),
            ),
        ),
    }
}

/// What doctor says of a program it cannot find: the same words for tmux and every agent.
fn not_installed(program: &str) -> String {
    if program.contains('/') {
        format!("not installed ({program} is not an executable file)")
    } else {
        format!("not installed ({program} not found on PATH)")
    }
}

/// One agent's CLI: where it is and its version, or plainly not installed (a mark of its
/// own, neither ✔ nor a warning: an agent you do not use is nothing to fix).
fn agent_check(name: &str, program: &str, found: Option<(std::path::PathBuf, String)>) -> Check {
    let what = format!("agent {name}");
    match found {
        Some((path, version)) => Check::new(
            Level::Ok,
            &what,
            format!("{} {version}", path.display()),
            None,
        ),
        None => Check::new(Level::Info, &what, not_installed(program), None),
    }
}

/// Desktop notifications without `notify-send` are terminal sequences (OSC 9/777): from a
/// dashboard inside tmux they reach the terminal only through tmux's passthrough.
fn passthrough_check(value: &str) -> Check {
    if matches!(value, "on" | "all") {
        Check::new(
            Level::Ok,
            "notifications",
            format!("allow-passthrough is {value}: desktop notifications reach your terminal"),
            None,
        )
    } else {
        Check::new(
            Level::Warn,
            "notifications",
            format!(
                "allow-passthrough is {}: from inside tmux, desktop notifications (OSC 9/777) \
                 never reach your terminal (and notify-send is not installed)",
                if value.is_empty() { "off" } else { value }
            ),
            Some("tmux set-option -g allow-passthrough on (in ~/.tmux.conf too)".into()),
        )
    }
}

/// Who supervises the server (auto-resume, journal, notifications), and since when: the
/// claim in the server, which every instance on every path to it reads; this path's daemon
/// lock when the server cannot be asked.
async fn supervision_check(tmux: &Tmux, reachable: bool) -> Check {
    use crate::core::lease::Claim;
    let tz = crate::run::time_zone();
    let since = |ms| crate::core::time::local(ms, &tz);
    let fix = Some(
        "run `agentwatch daemon --detach`, or keep it always on (docs/guide/daemon.md: a tmux.conf line or a systemd user unit)"
            .to_string(),
    );
    let now = crate::run::Clock::start().now();
    let claim = match reachable {
        true => crate::run::elector::look(tmux, now).await.ok(),
        false => None,
    };
    match claim {
        Some(Claim::Held(l)) if l.daemon => Check::new(
            Level::Ok,
            "supervision",
            format!(
                "daemon {} supervises this server since {}",
                l.pid,
                since(l.since)
            ),
            None,
        ),
        Some(Claim::Held(l)) => Check::new(
            Level::Warn,
            "supervision",
            format!(
                "no daemon: the dashboard with pid {} supervises, but only while it is open",
                l.pid
            ),
            fix,
        ),
        Some(Claim::Lapsed { lease, ago }) => {
            let fix = if crate::run::elector::runs_here(&lease) {
                format!(
                    "`kill -CONT {}` if you stopped it; else `agentwatch daemon --stop` (or kill {}) and start it again; any dashboard you open takes over within seconds",
                    lease.pid, lease.pid
                )
            } else {
                "open a dashboard or run `agentwatch daemon --detach`: either takes the server over within seconds".into()
            };
            Check::new(
                Level::Fail,
                "supervision",
                format!(
                    "{} (stopped, hung or gone without letting go): a crash now is neither resumed nor journaled",
                    Claim::Lapsed { lease, ago }
                        .why_unsupervised()
                        .unwrap_or_default()
                ),
                Some(fix),
            )
        }
        Some(Claim::Free) => Check::new(
            Level::Warn,
            "supervision",
            "no daemon and no dashboard: a crash now is neither resumed nor journaled",
            fix,
        ),
        None => {
            use crate::adapters::store::lock::{self, ServerLocks};
            let locks = ServerLocks::new(&lock::lock_dir(), tmux.socket());
            match lock::holder(&locks.daemon) {
                Ok(Some(d)) => Check::new(
                    Level::Ok,
                    "supervision",
                    format!(
                        "daemon {} runs for this server since {} (it waits for the server)",
                        d.pid,
                        since(d.since)
                    ),
                    None,
                ),
                Ok(None) => Check::new(
                    Level::Warn,
                    "supervision",
                    "no daemon runs for this server",
                    fix,
                ),
                Err(e) => Check::new(
                    Level::Warn,
                    "supervision",
                    format!(
                        "cannot read the daemon's lock in {}: {e}",
                        lock::lock_dir().display()
                    ),
                    Some("point TMUX_TMPDIR at a directory of yours".into()),
                ),
            }
        }
    }
}

/// Whether the dashboard will poll over control mode: tries it, as the dashboard would.
async fn transport_check(tmux: &Tmux, ctx: &Context<'_>) -> Check {
    let wanted = ctx
        .config
        .as_ref()
        .map(|(c, _)| c.control_mode)
        .unwrap_or(true);
    if !wanted {
        return Check::new(
            Level::Ok,
            "transport",
            "fork+exec (control_mode = false in the config)",
            None,
        );
    }
    let probe = tmux.clone().with_control_mode(true);
    let _ = probe.list_panes().await;
    match probe.transport().await {
        crate::adapters::tmux::client::Transport::Control => Check::new(
            Level::Ok,
            "transport",
            "control mode works: the dashboard polls without starting a process per tick",
            None,
        ),
        crate::adapters::tmux::client::Transport::Exec => Check::new(
            Level::Warn,
            "transport",
            "control mode unavailable: the dashboard falls back to one tmux process per call",
            Some("see the log (~/.local/state/agentwatch/agentwatch.log) for why".into()),
        ),
    }
}

fn version_check(v: TmuxVersion) -> Check {
    let three = |minor| TmuxVersion { major: 3, minor };
    if v < three(1) {
        Check::new(
            Level::Fail,
            "tmux",
            format!("{v}: too old (needs 3.1 for pane options)"),
            Some("upgrade tmux".into()),
        )
    } else if v < three(3) {
        Check::new(
            Level::Warn,
            "tmux",
            format!("{v}: signal deaths and death times unknown (3.3+)"),
            Some("upgrade tmux to 3.3 or newer".into()),
        )
    } else if v < three(6) {
        Check::new(
            Level::Ok,
            "tmux",
            format!("{v} (exit statuses are sometimes lost before 3.6: agentwatch recovers them)"),
            None,
        )
    } else {
        Check::new(Level::Ok, "tmux", v.to_string(), None)
    }
}

fn shell_check(ctx: &Context<'_>, hooked_pane: bool) -> Check {
    let rc = ctx.home.as_ref().and_then(|home| {
        [
            ".bashrc",
            ".zshrc",
            ".config/fish/config.fish",
            ".bash_profile",
            ".zshenv",
        ]
        .iter()
        .map(|f| home.join(f))
        .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("agentwatch shell-init")))
    });
    let shell = ctx
        .shell
        .as_deref()
        .and_then(|s| s.rsplit('/').next())
        .unwrap_or("bash");
    let shell = if ["bash", "zsh", "fish"].contains(&shell) {
        shell
    } else {
        "bash"
    };
    match (rc, hooked_pane) {
        (Some(p), _) => Check::new(
            Level::Ok,
            "shell integration",
            format!("installed in {}", p.display()),
            None,
        ),
        (None, true) => Check::new(
            Level::Ok,
            "shell integration",
            "a pane publishes its exit statuses",
            None,
        ),
        (None, false) => Check::new(
            Level::Warn,
            "shell integration",
            "not installed: agents typed at a prompt show `code unknown` when they exit",
            Some(if shell == "fish" {
                "add to ~/.config/fish/config.fish: agentwatch shell-init fish | source".to_string()
            } else {
                format!("add to ~/.{shell}rc: eval \"$(agentwatch shell-init {shell})\"")
            }),
        ),
    }
}

/// A real write (4 KiB, synced): an empty file is created even on a full disk.
fn writable(dir: &Path) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&probe)?;
        f.write_all(&[b'x'; 4096])?;
        f.sync_all()
    })();
    let _ = std::fs::remove_file(&probe);
    written
}

/// `<program> --version`, first line, within 3 s; never hangs doctor.
async fn program_version(path: &Path) -> String {
    let mut cmd = tokio::process::Command::new(path);
    cmd.arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let Ok(child) = cmd.spawn() else {
        return "(--version failed)".into();
    };
    match tokio::time::timeout(Duration::from_secs(3), child.wait_with_output()).await {
        Ok(Ok(out)) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .map(|l| format!("({})", l.trim()))
            .unwrap_or_default(),
        _ => "(--version did not answer in 3 s)".into(),
    }
}

/// One host of `[[hosts]]` (or `--ssh`): ssh gets in without asking for a password, tmux
/// there is recent enough, and a control-mode connection can be made to its server.
pub async fn host_checks(host: &crate::config::Host) -> Vec<Check> {
    let what = format!("host {}", host.name);
    let dest = &host.ssh;
    let tmux = crate::run::remote_tmux(host);
    let v = match tmux.version().await {
        Ok(v) => v,
        Err(TmuxError::Unreachable { detail, .. }) => {
            return vec![Check::new(
                Level::Fail,
                &what,
                format!("ssh {dest} does not get in without a prompt ({detail})"),
                Some(format!(
                    "make `ssh -o BatchMode=yes {dest} true` work: a key in ssh-agent or an IdentityFile in ~/.ssh/config"
                )),
            )]
        }
        Err(e) => {
            return vec![Check::new(
                Level::Fail,
                &what,
                format!("ssh gets in, but tmux there does not answer ({e})"),
                Some(format!(
                    "install tmux 3.3 or newer on {dest}, or give its path as tmux = \"...\" in [[hosts]]"
                )),
            )]
        }
    };
    let mut version = version_check(v);
    version.what = format!("{what}: tmux");
    let mut out = vec![
        Check::new(
            Level::Ok,
            &what,
            format!("ssh {dest} gets in without a prompt"),
            None,
        ),
        version,
    ];
    // Over its connection, as the dashboard asks it.
    let probe = tmux;
    let listed = probe.list_panes().await;
    out.push(match (listed, probe.transport().await) {
        (Ok(l), crate::adapters::tmux::client::Transport::Control) => Check::new(
            Level::Ok,
            &format!("{what}: control mode"),
            format!(
                "works over ssh: one connection, no process per tick ({} panes)",
                l.panes.len()
            ),
            None,
        ),
        (Err(TmuxError::NoServer { socket }), _) => Check::new(
            Level::Warn,
            &format!("{what}: server"),
            format!("no tmux server running there on {}", socket.display()),
            Some(format!(
                "start one on {dest} (or name it with socket_name / socket_path in [[hosts]])"
            )),
        ),
        (Err(e), _) => Check::new(Level::Fail, &format!("{what}: server"), e.to_string(), None),
        (Ok(_), _) => Check::new(
            Level::Warn,
            &format!("{what}: control mode"),
            "unavailable: that host is polled with an ssh process per call",
            Some("see the log (~/.local/state/agentwatch/agentwatch.log) for why".into()),
        ),
    });
    out
}

/// `agentwatch doctor` from the command line: every check printed, exit 1 if one failed.
pub async fn cli(cli: &crate::cli::Cli) -> std::process::ExitCode {
    let loaded = crate::config::load(cli.config.as_deref());
    let tmux = Tmux::new(
        crate::adapters::tmux::server::resolve_socket(&cli.server()),
        Duration::from_secs(3),
    );
    let ctx = Context {
        config: match &loaded {
            Ok((c, p)) => Ok((c, p.as_deref())),
            Err(e) => Err(e),
        },
        state_dir: crate::adapters::store::state_dir(),
        crash_dir: crate::adapters::respawn::default_crash_dir(),
        home: std::env::var_os("HOME").map(std::path::PathBuf::from),
        shell: std::env::var("SHELL").ok(),
    };
    let mut checks = run(&tmux, &ctx).await;
    let mut with_ssh = loaded.as_ref().map(|(c, _)| c.clone()).unwrap_or_default();
    if let Err(e) = with_ssh.add_ssh(&cli.ssh) {
        checks.push(Check::new(Level::Fail, "hosts", e.to_string(), None));
    }
    for h in &with_ssh.hosts {
        checks.extend(host_checks(h).await);
    }
    let mut text: String = checks.iter().map(|c| c.line() + "\n").collect();
    let failed = checks.iter().filter(|c| c.level == Level::Fail).count();
    let warned = checks.iter().filter(|c| c.level == Level::Warn).count();
    if failed == 0 && warned == 0 {
        text.push_str("all good\n");
    } else if failed == 0 {
        text.push_str(&format!(
            "works; {} above (!) worth a look\n",
            crate::core::text::counted(warned, "warning", "warnings")
        ));
    } else {
        text.push_str(&format!(
            "{} to fix\n",
            crate::core::text::counted(failed, "problem", "problems")
        ));
    }
    super::say(&text);
    if failed == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    }
}

#[cfg(test)]
mod tests;
