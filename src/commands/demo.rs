//! `agentwatch demo`: the dashboard on a private tmux server running five simulated agents
//! that work, crash, get killed, finish and crash-loop, so a newcomer can see banners and
//! auto-resume without any real agent installed.
//!
//! Nothing of the user's is touched: the agents are one shell script
//! (`assets/demo/agent.sh`) installed as `claude`, `codex`, `gemini` and `aider` in a temp
//! directory put first on PATH; the tmux server (`-f /dev/null`, its own socket), the config,
//! the crash records, journal and log (`XDG_DATA_HOME`, `XDG_STATE_HOME`) and the agents'
//! own records (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`) all live in that directory. When the
//! dashboard quits, that server alone is killed and the directory removed, on every path
//! out (errors, Ctrl-C during setup, SIGHUP/SIGTERM: they are passed on to the dashboard).
//! Does I/O, synchronously (std::process).

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The simulated agent, installed under each kind's name.
const AGENT_SH: &str = include_str!("../../assets/demo/agent.sh");

/// The tmux session the agents run in.
pub const SESSION: &str = "demo";

/// The demo's windows: (agent kind, window name, what happens). The script picks its
/// scenario from the window name.
pub const SCENARIOS: &[(&str, &str, &str)] = &[
    (
        "claude",
        "api",
        "API error 529 after ~8 s (exit 1); auto-resumed with claude --resume <id>",
    ),
    (
        "codex",
        "web",
        "JavaScript heap out of memory after ~12 s, killed by SIGKILL; auto-resumed",
    ),
    (
        "gemini",
        "docs",
        "finishes its task after ~6 s (exit 0): a clean exit, never resumed",
    ),
    (
        "claude",
        "flaky",
        "ECONNRESET (exit 1) on every run: auto-resume gives up after 3 tries",
    ),
    ("aider", "infra", "works steadily, never crashes"),
];

/// The kinds the script is installed as.
const KINDS: &[&str] = &["claude", "codex", "gemini", "aider"];

/// The demo's config: quick retries so the crash loop plays out in about half a minute,
/// for the transient causes (an overloaded API, a network error) too, which otherwise wait
/// 30 s, 2 and 5 minutes.
const CONFIG: &str = "[auto_resume]\nbackoff_secs = [2, 5, 10]\nslow_backoff_secs = [4, 8, 12]\n";

/// How long one tmux or `agentwatch spawn` call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Sockets longer than this do not fit in `sun_path` everywhere (104 bytes on macOS).
const MAX_SOCKET_PATH: usize = 100;

/// Runs the demo: returns when the dashboard exits. `agentwatch` is the path of the
/// running binary (`std::env::current_exe()`).
pub fn run(agentwatch: &Path) -> Result<ExitStatus, DemoError> {
    let _signals = Signals::catch();
    let mut demo = Demo::create()?;
    let result = demo.play(agentwatch);
    let failed = !matches!(&result, Ok(s) if s.success()) && !STOP.load(Ordering::SeqCst);
    let kept_log = if failed { demo.keep_log() } else { None };
    for problem in demo.clean_up() {
        crate::tell!("agentwatch demo: {problem}");
    }
    if let Some(log) = kept_log {
        crate::tell!(
            "agentwatch demo: the dashboard's log is kept in {}",
            log.display()
        );
    }
    if let Ok(status) = &result {
        if status.success() {
            super::say(
                "agentwatch demo: done; its tmux server and temp files are gone.\n\
                 Your own agents: `agentwatch spawn claude` (or codex, gemini, ...) in\n\
                 tmux starts one so it can be resumed; `agentwatch` watches them.\n",
            );
        }
    }
    result
}

/// The demo's temp directory and tmux server; cleaned up when dropped.
struct Demo {
    dir: PathBuf,
    socket: PathBuf,
    server_started: bool,
    server_pid: Option<libc::pid_t>,
    cleaned: bool,
}

impl Demo {
    /// Makes the temp directory (0700, new: never an existing one).
    fn create() -> Result<Demo, DemoError> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        // Short: the socket path is shown in the header and in attach commands.
        let name = format!("aw-demo-{}-{}", std::process::id(), &id[..8]);
        let mut base = std::env::temp_dir();
        let fits = |b: &Path| b.join(&name).join("demo.sock").as_os_str().len() <= MAX_SOCKET_PATH;
        if !fits(&base) && fits(Path::new("/tmp")) {
            base = PathBuf::from("/tmp");
        }
        let dir = base.join(name);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| {
                DemoError::io(format!("create the demo directory {}", dir.display()), e)
            })?;
        Ok(Demo {
            socket: dir.join("demo.sock"),
            dir,
            server_started: false,
            server_pid: None,
            cleaned: false,
        })
    }

    fn play(&mut self, agentwatch: &Path) -> Result<ExitStatus, DemoError> {
        self.install()?;
        interrupted()?;
        self.start_server()?;
        for (kind, name, _) in SCENARIOS {
            interrupted()?;
            self.spawn(agentwatch, kind, name)?;
        }
        interrupted()?;
        self.dashboard(agentwatch)
    }

    fn bin(&self) -> PathBuf {
        self.dir.join("bin")
    }

    fn config(&self) -> PathBuf {
        self.dir.join("demo.toml")
    }

    /// The script under every kind's name, the config, the project directories.
    fn install(&self) -> Result<(), DemoError> {
        let mkdir = |d: &Path| {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(d)
                .map_err(|e| DemoError::io(format!("create {}", d.display()), e))
        };
        mkdir(&self.bin())?;
        for kind in KINDS {
            write_file(&self.bin().join(kind), AGENT_SH, 0o755)?;
        }
        write_file(&self.config(), CONFIG, 0o600)?;
        for (_, name, _) in SCENARIOS {
            mkdir(&self.dir.join("projects").join(name))?;
        }
        Ok(())
    }

    /// The environment of every program the demo starts (and so of the tmux server and the
    /// agents in it): the fake agents first on PATH, no link to the user's tmux, config,
    /// agent records or agentwatch state.
    fn env(&self, cmd: &mut Command) {
        let mut path = OsString::from(self.bin());
        if let Some(p) = std::env::var_os("PATH").filter(|p| !p.is_empty()) {
            path.push(":");
            path.push(p);
        }
        cmd.env("PATH", path)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env_remove("AGENTWATCH_CONFIG")
            .env_remove("DEMO_SCENARIO")
            .env("CODEX_HOME", self.dir.join("codex"))
            .env("CLAUDE_CONFIG_DIR", self.dir.join("claude"))
            .env("XDG_DATA_HOME", self.dir.join("data"))
            .env("XDG_STATE_HOME", self.dir.join("state"));
    }

    fn tmux(&self) -> Command {
        let mut cmd = Command::new("tmux");
        self.env(&mut cmd);
        cmd.arg("-S").arg(&self.socket);
        cmd
    }

    /// Starts the private server (no user config) and reads its pid.
    fn start_server(&mut self) -> Result<(), DemoError> {
        let mut cmd = Command::new("tmux");
        self.env(&mut cmd);
        cmd.args(["-f", "/dev/null", "-S"]).arg(&self.socket).args([
            "start-server",
            ";",
            "set-option",
            "-s",
            "exit-empty",
            "off",
        ]);
        self.server_started = true;
        call(cmd, "start the demo's tmux server").map_err(|e| match e {
            DemoError::Call {
                why: CallFailure::NotFound(_),
                ..
            } => DemoError::NoTmux,
            e => e,
        })?;
        let mut cmd = self.tmux();
        cmd.args(["display-message", "-p", "#{pid}"]);
        let out = call(cmd, "read the demo server's pid")?;
        self.server_pid = out.trim().parse().ok().filter(|&p: &libc::pid_t| p > 1);
        Ok(())
    }

    /// `agentwatch spawn`, with the demo's config (a user's [agents.claude] start path must
    /// not start their real agent).
    fn spawn(&self, agentwatch: &Path, kind: &str, name: &str) -> Result<(), DemoError> {
        let mut cmd = Command::new(agentwatch);
        self.env(&mut cmd);
        cmd.arg("-S")
            .arg(&self.socket)
            .arg("-c")
            .arg(self.config())
            .args(["spawn", kind, "--target", SESSION, "--name", name, "--cwd"])
            .arg(self.dir.join("projects").join(name));
        call(cmd, &format!("start the simulated {kind} ({name})")).map(|_| ())
    }

    /// The dashboard, in this terminal; signals that reach us are passed on to it.
    fn dashboard(&self, agentwatch: &Path) -> Result<ExitStatus, DemoError> {
        let mut cmd = Command::new(agentwatch);
        self.env(&mut cmd);
        cmd.arg("-S").arg(&self.socket).arg("-c").arg(self.config());
        let terminal = Terminal::save();
        let mut child = cmd
            .spawn()
            .map_err(|e| DemoError::io(format!("start {}", agentwatch.display()), e))?;
        CHILD.store(
            libc::pid_t::try_from(child.id()).unwrap_or(0),
            Ordering::SeqCst,
        );
        let status = child.wait();
        CHILD.store(0, Ordering::SeqCst);
        let status = status.map_err(DemoError::Lost)?;
        // Killed by a signal, it could not put the terminal back: do it for it.
        if status.signal().is_some() {
            terminal.restore();
        }
        Ok(status)
    }

    /// On failure: copies the dashboard's log out of the directory about to go.
    fn keep_log(&self) -> Option<PathBuf> {
        let log = self.dir.join("state/agentwatch/agentwatch.log");
        let kept = std::env::temp_dir().join(format!("agentwatch-demo-{}.log", std::process::id()));
        let size = std::fs::metadata(&log).ok()?.len();
        (size > 0 && std::fs::copy(&log, &kept).is_ok()).then_some(kept)
    }

    /// Kills the demo server (only it) and removes the directory. Returns what went wrong.
    fn clean_up(&mut self) -> Vec<String> {
        if self.cleaned {
            return Vec::new();
        }
        self.cleaned = true;
        let mut problems = Vec::new();
        if self.server_started {
            let mut cmd = self.tmux();
            cmd.arg("kill-server");
            // It may be gone already (that is fine): only the pid check below matters.
            _ = call(cmd, "stop the demo's tmux server");
            if let Some(pid) = self.server_pid {
                let deadline = Instant::now() + Duration::from_secs(2);
                while self.is_our_server(pid) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
                if self.is_our_server(pid) {
                    // SAFETY: kill has no memory preconditions; the pid is the demo server's.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            if e.kind() != std::io::ErrorKind::NotFound {
                problems.push(format!("could not remove {}: {e}", self.dir.display()));
            }
        }
        problems
    }

    /// Whether `pid` still runs and is the demo's server. Where /proc exists the process
    /// must name the demo socket on its command line, so a recycled pid is never killed.
    fn is_our_server(&self, pid: libc::pid_t) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            return false;
        }
        let proc = Path::new("/proc");
        if !proc.is_dir() {
            return true;
        }
        let mut cmdline = Vec::new();
        let read = std::fs::File::open(proc.join(pid.to_string()).join("cmdline"))
            .and_then(|mut f| f.read_to_end(&mut cmdline));
        let sock = self.socket.as_os_str().as_encoded_bytes();
        read.is_ok() && cmdline.windows(sock.len()).any(|w| w == sock)
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        for problem in self.clean_up() {
            crate::tell!("agentwatch demo: {problem}");
        }
    }
}

fn write_file(path: &Path, text: &str, mode: u32) -> Result<(), DemoError> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| DemoError::io(format!("write {}", path.display()), e))
}

/// Why the demo could not run. Each says what it was doing.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("cannot {what}: {error}")]
    Io { what: String, error: std::io::Error },
    #[error("cannot {what}: {why}")]
    Call { what: String, why: CallFailure },
    #[error("tmux is not installed (not found on PATH): the demo needs it, e.g. `apt-get install tmux` or `brew install tmux`")]
    NoTmux,
    #[error("lost the dashboard: {0}")]
    Lost(std::io::Error),
    #[error("interrupted: the demo was stopped")]
    Interrupted,
}

impl DemoError {
    fn io(what: String, error: std::io::Error) -> DemoError {
        DemoError::Io { what, error }
    }
}

/// Why a short command the demo runs failed.
#[derive(Debug, thiserror::Error)]
pub enum CallFailure {
    #[error("{0} not found")]
    NotFound(String),
    #[error("{program}: {error}")]
    Start {
        program: String,
        error: std::io::Error,
    },
    #[error("{program} gave no answer in {secs} s")]
    NoAnswer { program: String, secs: u64 },
    #[error("{0}")]
    Wait(std::io::Error),
    #[error("{program} failed ({status})")]
    Failed { program: String, status: ExitStatus },
    /// What it said on stderr.
    #[error("{0}")]
    Said(String),
}

/// Runs a short command (stdin null, output captured) with a timeout; its stdout, or an
/// error naming what it was for and what it said.
fn call(mut cmd: Command, what: &str) -> Result<String, DemoError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let failed = |why| DemoError::Call {
        what: what.to_string(),
        why,
    };
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            failed(match e.kind() {
                std::io::ErrorKind::NotFound => CallFailure::NotFound(program.clone()),
                _ => CallFailure::Start {
                    program: program.clone(),
                    error: e,
                },
            })
        })?;
    let deadline = Instant::now() + CALL_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                _ = child.kill();
                _ = child.wait();
                return Err(failed(CallFailure::NoAnswer {
                    program,
                    secs: CALL_TIMEOUT.as_secs(),
                }));
            }
            Err(e) => return Err(failed(CallFailure::Wait(e))),
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| failed(CallFailure::Wait(e)))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
    Err(failed(if said.is_empty() {
        CallFailure::Failed {
            program,
            status: out.status,
        }
    } else {
        CallFailure::Said(said)
    }))
}

/// The terminal's modes before the dashboard started, if stdin is a terminal.
struct Terminal(Option<libc::termios>);

impl Terminal {
    fn save() -> Terminal {
        // SAFETY: isatty and tcgetattr only read; a zeroed termios is a valid buffer.
        unsafe {
            if libc::isatty(libc::STDIN_FILENO) != 1 {
                return Terminal(None);
            }
            let mut t: libc::termios = std::mem::zeroed();
            Terminal((libc::tcgetattr(libc::STDIN_FILENO, &mut t) == 0).then_some(t))
        }
    }

    /// The saved modes back, out of the alternate screen, the cursor shown.
    fn restore(&self) {
        use std::io::Write;
        let Some(t) = &self.0 else {
            return;
        };
        // SAFETY: t is a termios tcgetattr filled in.
        unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t) };
        let mut out = std::io::stdout();
        // Mouse reporting off too (the dashboard turns it on): a shell left with it on
        // fills with escape codes at every move.
        _ = out.write_all(
            b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l\x1b[?1049l\x1b[?25h\r\n",
        );
        _ = out.flush();
    }
}

/// The dashboard's pid while it runs (0 otherwise): signals are passed on to it.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// Set by a signal: the setup stops, and the demo cleans up.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(child, sig) };
    }
}

fn interrupted() -> Result<(), DemoError> {
    if STOP.load(Ordering::SeqCst) {
        Err(DemoError::Interrupted)
    } else {
        Ok(())
    }
}

/// SIGHUP, SIGINT and SIGTERM caught while the demo runs (so it always cleans up), the old
/// handlers back when dropped. Children start with the default handlers (exec resets them).
struct Signals(Vec<(libc::c_int, libc::sigaction)>);

impl Signals {
    fn catch() -> Signals {
        STOP.store(false, Ordering::SeqCst);
        let mut old = Vec::new();
        for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM] {
            // SAFETY: zeroed sigaction structs are valid; the handler only does
            // async-signal-safe work (atomics and kill).
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                act.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut act.sa_mask);
                let mut prev: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &act, &mut prev) == 0 {
                    old.push((sig, prev));
                }
            }
        }
        Signals(old)
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for (sig, prev) in &self.0 {
            // SAFETY: restores a disposition sigaction gave us.
            unsafe { libc::sigaction(*sig, prev, std::ptr::null_mut()) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_script_is_valid_posix_sh() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.sh");
        std::fs::write(&path, AGENT_SH).unwrap();
        let out = Command::new("sh").arg("-n").arg(&path).output().unwrap();
        assert!(
            out.status.success(),
            "sh -n: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn every_window_has_its_scenario_in_the_script_and_a_known_kind() {
        for (kind, name, _) in SCENARIOS {
            assert!(KINDS.contains(kind), "{kind}");
            assert!(
                AGENT_SH.contains(&format!("\n    {name}) scenario=")),
                "no scenario for window {name} in agent.sh"
            );
            assert!(crate::core::agent::builtin()
                .iter()
                .any(|d| d.name == *kind));
        }
    }

    #[test]
    fn the_config_parses() {
        let c = crate::config::parse(CONFIG, Path::new("demo.toml")).unwrap();
        assert_eq!(c.auto_resume.backoff_secs, [2, 5, 10]);
        assert_eq!(c.auto_resume.slow_backoff_secs, [4, 8, 12]);
    }
}
