//! Shared helpers for integration tests: private tmux servers and the
//! `fake_agent` example binary that stands in for real agent CLIs, and the waits they all
//! use, every deadline scaled by one slowdown factor (`AGENTWATCH_TEST_SLOWDOWN`).
#![allow(dead_code)]

pub mod daemon;
pub mod sshd;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The variable that holds the slowdown factor.
const SLOWDOWN_VAR: &str = "AGENTWATCH_TEST_SLOWDOWN";

/// How much slower than an idle developer machine this one runs the tests:
/// `AGENTWATCH_TEST_SLOWDOWN`, a positive number (1 when unset or empty; say 3 on a slow or
/// loaded CI box). Every deadline a test waits for is multiplied by it ([`scaled`], [`WAIT`],
/// [`LONG`]). A wait still ends as soon as its condition holds, so a larger factor costs
/// time only when a test is about to fail. A value that is not a positive number panics,
/// naming the variable and what it takes, rather than running with some other factor.
pub fn slowdown() -> f64 {
    let raw = match std::env::var(SLOWDOWN_VAR) {
        Ok(v) => v,
        Err(std::env::VarError::NotPresent) => return 1.0,
        Err(e) => panic!("{SLOWDOWN_VAR} takes a positive number (e.g. 3), not {e}"),
    };
    parse_slowdown(&raw).unwrap_or_else(|| {
        panic!(
            "{SLOWDOWN_VAR} takes a positive number, the factor every test deadline is \
             multiplied by (1 by default, e.g. 3 on a slow machine; at most 1000), not {raw:?}"
        )
    })
}

/// The factor `raw` says (1 for an empty one); `None` unless it is a positive number. At
/// most a thousand, which already makes a slow wait last 17 hours, so that no deadline
/// overflows.
pub fn parse_slowdown(raw: &str) -> Option<f64> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Some(1.0);
    }
    raw.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite() && *f > 0.0 && *f <= 1000.0)
}

/// `d` multiplied by the slowdown factor ([`slowdown`]): the deadline of a wait that has no
/// named one ([`WAIT`], [`LONG`]), e.g. the time one attempt of a retried step gets.
pub fn scaled(d: Duration) -> Duration {
    d.mul_f64(slowdown())
}

/// A deadline scaled by the slowdown factor when it is first read (a `static` cannot read
/// the environment when it is made); `*WAIT` is the scaled `Duration`. Not a `LazyLock`:
/// that would remember a bad factor's panic as poison, and every test but the first would
/// fail saying so instead of naming the variable.
pub struct Scaled {
    base: Duration,
    value: OnceLock<Duration>,
}

impl Scaled {
    const fn new(base: Duration) -> Scaled {
        Scaled {
            base,
            value: OnceLock::new(),
        }
    }
}

impl std::ops::Deref for Scaled {
    type Target = Duration;

    fn deref(&self) -> &Duration {
        self.value.get_or_init(|| scaled(self.base))
    }
}

/// The deadline of an ordinary wait: a screen that shows a change, a pane that dies, an
/// agent that starts or logs, a file that appears, a command that answers. 20 s (the
/// longest any test gave such a wait), times the slowdown factor.
pub static WAIT: Scaled = Scaled::new(Duration::from_secs(20));

/// The deadline of a slow wait: a crash loop played out across its backoffs, a daemon's
/// work, sshd coming back, a sweep that runs every 10 s. 60 s, times the slowdown factor.
pub static LONG: Scaled = Scaled::new(Duration::from_secs(60));

/// How often the waits below look again.
const POLL: Duration = Duration::from_millis(25);

/// How long after a capture of the dashboard a second one must agree with it for the screen
/// to count as settled ([`UiServer::wait_for`]).
const SETTLE: Duration = Duration::from_millis(40);

/// How often [`look_until`] and [`looks_hold`] have an in-process agentwatch look (each
/// look is a round of tmux calls).
const LOOK: Duration = Duration::from_millis(50);

/// Names under which `fake_agent` is symlinked into the test `bin/` dir.
pub const AGENT_NAMES: &[&str] = &["claude", "codex", "gemini", "aider", "opencode"];

/// Path of the built `fake_agent` example. `cargo test` builds examples by
/// default; when a filtered run (`cargo test --test x`) did not, we try once
/// to build it ourselves before giving up.
pub fn fake_agent_path() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let path = Path::new(env!("CARGO_BIN_EXE_agentwatch"))
        .parent()
        .expect("binary has a parent dir")
        .join("examples")
        .join("fake_agent");
    if !path.exists() {
        BUILT.get_or_init(|| {
            let _ = Command::new(env!("CARGO"))
                .args([
                    "build",
                    "--quiet",
                    "--example",
                    "fake_agent",
                    "--manifest-path",
                ])
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
                .status();
        });
    }
    if !path.exists() {
        panic!(
            "fake agent binary not found at {}; run `cargo build --examples` first \
             (plain `cargo test` builds it automatically)",
            path.display()
        );
    }
    path
}

/// Polls `f` every 25 ms until it returns true or `timeout` passes; says which. `timeout`
/// is a deadline: give it [`WAIT`], [`LONG`] or a [`scaled`] one.
pub fn poll_until<F: FnMut() -> bool>(timeout: Duration, f: F) -> bool {
    poll_every(POLL, timeout, f)
}

/// Like [`poll_until`], looking every `every`: for a check that is itself costly (a command
/// run over ssh), which would load a small machine if it ran back to back.
pub fn poll_every<F: FnMut() -> bool>(every: Duration, timeout: Duration, mut f: F) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if f() {
            return true;
        }
        std::thread::sleep(every);
    }
    f()
}

/// Polls `f` every 25 ms until it returns true; panics after `timeout` (a deadline: give it
/// [`WAIT`], [`LONG`] or a [`scaled`] one).
pub fn wait_until<F: FnMut() -> bool>(what: &str, timeout: Duration, mut f: F) {
    let start = Instant::now();
    loop {
        if f() {
            return;
        }
        if start.elapsed() > timeout {
            panic!("timed out after {timeout:?} waiting until {what}");
        }
        std::thread::sleep(POLL);
    }
}

/// Checks `cond` every 25 ms for the whole of `span`; panics at the first moment it fails.
///
/// This is for what must *not* happen within a span ("no second resume within 3 s", "the
/// card keeps its last words"): that is no condition to wait on, since nothing marks the
/// end of "never", so the span is spent in full, where a wait would end early. The span is
/// not scaled by the slowdown factor: it is no timeout, and what it gives room to is the
/// product's own clock (a 1 s backoff, a tick); on a slow machine a wrong event could come
/// after the span and go unseen, but a right run never fails for it.
pub fn holds_for<F: FnMut() -> bool>(what: &str, span: Duration, mut cond: F) {
    let start = Instant::now();
    loop {
        if !cond() {
            panic!(
                "{:?} into a span of {span:?}, it no longer held that {what}",
                start.elapsed()
            );
        }
        if start.elapsed() >= span {
            return;
        }
        std::thread::sleep(POLL);
    }
}

/// Test environment shared by every tmux invocation and child process:
/// no inherited `TMUX`, `bin/` first on `PATH`, `FAKE_AGENT_DIR`, UTF-8 locale,
/// and `TMUX_TMPDIR` inside the temp dir so a stray socket-less `tmux` call can
/// never reach the user's real server. The agents' own stores (claude's, codex's,
/// gemini's) are in the temp dir too: agentwatch reads them, and never the user's; they do
/// not exist until a test makes them (`TmuxServer::agent_store`). HOME and the XDG dirs are
/// the temp dir's ([`private_home`]), so nothing a test starts writes to the user's.
fn apply_env(cmd: &mut Command, dir: &Path, bin_dir: &Path, agent_dir: &Path) {
    private_home(cmd, dir);
    let mut paths = vec![bin_dir.to_path_buf()];
    if let Some(old) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&old));
    }
    let path: OsString = std::env::join_paths(paths).expect("PATH joins");
    cmd.env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env("PATH", path)
        .env("FAKE_AGENT_DIR", agent_dir)
        .env("LANG", "C.UTF-8")
        .env("TMUX_TMPDIR", dir)
        .env("CLAUDE_CONFIG_DIR", dir.join("claude"))
        .env("CODEX_HOME", dir.join("codex"))
        .env("GEMINI_CLI_HOME", dir.join("gemini-home"));
}

/// HOME (`<dir>/home`) and the XDG config, data, state and cache dirs (`<dir>/config`,
/// `data`, `state`, `cache`) inside `dir`: agentwatch's journal, log, roster and crash
/// records, and anything else a program started by a test keeps, stay in the test's dir.
pub fn private_home(cmd: &mut Command, dir: &Path) {
    let home = dir.join("home");
    let _ = std::fs::create_dir_all(&home);
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("AGENTWATCH_CONFIG");
}

/// The agentwatch binary for a run with no test server: no inherited `TMUX`, HOME and XDG
/// dirs in `dir` (a temp dir the caller keeps).
pub fn agentwatch_in(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentwatch"));
    private_home(&mut cmd, dir);
    cmd.env_remove("TMUX").env_remove("TMUX_PANE");
    cmd
}

/// The tmux under test: `$AGENTWATCH_TEST_TMUX` (a path, e.g. tmux 3.5a unpacked beside the
/// system's 3.3a, as `.ci/run` does), else `tmux` from PATH. Every test server, client and
/// agentwatch under test runs it (it is linked into each test's `bin/`, first on PATH).
pub fn tmux_program() -> OsString {
    std::env::var_os("AGENTWATCH_TEST_TMUX")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "tmux".into())
}

fn tmux_command(socket: &Path, dir: &Path, bin_dir: &Path, agent_dir: &Path) -> Command {
    let mut cmd = Command::new(tmux_program());
    apply_env(&mut cmd, dir, bin_dir, agent_dir);
    cmd.arg("-S").arg(socket);
    cmd
}

/// Whether `pid` runs: it is in /proc and not a zombie (an exited process nothing has reaped
/// yet; a container's init can take its time), so that a wait for a server's exit ends when
/// it exits.
pub fn pid_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            != Some("Z")
    })
}

/// `kill-server` on exactly this socket, then SIGKILL exactly `pid` if it
/// still looks like a tmux process after a short grace period (scaled: a loaded machine
/// takes longer to let a server exit).
fn kill_private_server(mut tmux: Command, pid: Option<u32>) {
    let _ = tmux.arg("kill-server").output();
    let Some(pid) = pid else { return };
    let deadline = Instant::now() + scaled(Duration::from_millis(500));
    while pid_alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if pid_alive(pid) && comm.trim().starts_with("tmux") {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
}

const EXIT_FMT: &str = "#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}";

fn nudge_reaper(pid: Option<u32>) {
    if let Some(pid) = pid {
        let _ = Command::new("kill")
            .args(["-s", "CHLD", &pid.to_string()])
            .status();
    }
}

/// Polls `fields()` (an `EXIT_FMT` expansion) until the pane has a known exit.
fn wait_exit(
    what: &str,
    timeout: Duration,
    server_pid: Option<u32>,
    mut fields: impl FnMut() -> Option<String>,
    screen: impl FnOnce() -> String,
) -> String {
    let start = Instant::now();
    let mut dead_since: Option<Instant> = None;
    loop {
        let f = fields();
        if let Some(exit) = f.as_deref().and_then(parse_exit) {
            return exit;
        }
        if f.as_deref().is_some_and(|f| f.starts_with("1|")) {
            let since = *dead_since.get_or_insert_with(Instant::now);
            if since.elapsed() > Duration::from_millis(100) {
                nudge_reaper(server_pid);
                dead_since = Some(Instant::now());
            }
        }
        if start.elapsed() > timeout {
            panic!(
                "timed out after {timeout:?} waiting for {what} to exit; \
                 dead|status|signal = {f:?}; screen:\n{}",
                screen()
            );
        }
        std::thread::sleep(POLL);
    }
}

/// Parses `dead|status|signal` into `status N` / `signal N`.
fn parse_exit(fields: &str) -> Option<String> {
    let mut it = fields.trim().split('|');
    let (dead, status, signal) = (it.next()?, it.next()?, it.next()?);
    match (dead, status, signal) {
        ("1", s, _) if !s.is_empty() => Some(format!("status {s}")),
        ("1", _, s) if !s.is_empty() => Some(format!("signal {s}")),
        _ => None,
    }
}

fn stdout_ok(out: Output, args: &[&str]) -> String {
    if !out.status.success() {
        panic!(
            "tmux {args:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A private tmux server on `<dir>/tmux.sock` with session `main`.
pub struct TmuxServer {
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub agent_dir: PathBuf,
    pub bin_dir: PathBuf,
    server_pid: Option<u32>,
}

impl TmuxServer {
    pub fn start() -> TmuxServer {
        let agent = fake_agent_path();
        let dir = tempfile::Builder::new()
            .prefix("aw-test")
            .tempdir()
            .expect("tempdir");
        let bin_dir = dir.path().join("bin");
        let agent_dir = dir.path().join("agents");
        std::fs::create_dir_all(&bin_dir).expect("create bin dir");
        std::fs::create_dir_all(&agent_dir).expect("create agents dir");
        for name in AGENT_NAMES {
            std::os::unix::fs::symlink(&agent, bin_dir.join(name)).expect("symlink agent");
        }
        if let Some(tmux) = std::env::var_os("AGENTWATCH_TEST_TMUX").filter(|p| !p.is_empty()) {
            std::os::unix::fs::symlink(&tmux, bin_dir.join("tmux")).expect("symlink tmux");
        }
        let conf = dir.path().join("tmux.conf");
        std::fs::write(&conf, "").expect("write tmux.conf");
        let mut server = TmuxServer {
            socket: dir.path().join("tmux.sock"),
            dir,
            agent_dir,
            bin_dir,
            server_pid: None,
        };
        let conf = conf.to_string_lossy().into_owned();
        server.tmux_ok(&[
            "-f",
            &conf,
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "200",
            "-y",
            "50",
            "--",
            "sleep",
            "100000",
        ]);
        server.tmux_ok(&["set-option", "-s", "exit-empty", "off"]);
        let pid = server.tmux_ok(&["display-message", "-p", "#{pid}"]);
        server.server_pid = pid.trim().parse().ok();
        server
    }

    /// Pid of the tmux server process.
    pub fn server_pid(&self) -> Option<u32> {
        self.server_pid
    }

    /// Value a client inside this server would see in `$TMUX`.
    pub fn tmux_env_value(&self) -> String {
        format!(
            "{},{},0",
            self.socket.display(),
            self.server_pid.unwrap_or(0)
        )
    }

    fn command(&self, socket: &Path) -> Command {
        tmux_command(socket, self.dir.path(), &self.bin_dir, &self.agent_dir)
    }

    /// The test environment as pairs, for in-process tmux clients
    /// (`Tmux::with_env`): PATH with `bin/` first, FAKE_AGENT_DIR, LANG, TMUX_TMPDIR.
    pub fn env_pairs(&self) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        let mut cmd = Command::new("true");
        self.env_for_child(&mut cmd);
        cmd.get_envs()
            .filter_map(|(k, v)| v.map(|v| (k.to_os_string(), v.to_os_string())))
            .collect()
    }

    /// Sets the test environment on `cmd` (e.g. the agentwatch binary).
    pub fn env_for_child(&self, cmd: &mut Command) {
        apply_env(cmd, self.dir.path(), &self.bin_dir, &self.agent_dir);
    }

    pub fn tmux(&self, args: &[&str]) -> Output {
        self.command(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }

    pub fn tmux_ok(&self, args: &[&str]) -> String {
        stdout_ok(self.tmux(args), args)
    }

    /// Detached window in session `main` running `argv`; returns e.g. `%3`.
    pub fn new_window(&self, argv: &[&str]) -> String {
        self.new_window_args(&[], argv)
    }

    pub fn new_window_in(&self, cwd: &Path, argv: &[&str]) -> String {
        let cwd = cwd.to_string_lossy();
        self.new_window_args(&["-c", &cwd], argv)
    }

    fn new_window_args(&self, extra: &[&str], argv: &[&str]) -> String {
        let mut args = vec!["new-window", "-d", "-t", "main:", "-P", "-F", "#{pane_id}"];
        args.extend_from_slice(extra);
        args.push("--");
        args.extend_from_slice(argv);
        self.tmux_ok(&args).trim().to_string()
    }

    /// Writes `agents/<key>.plan`; `key` is a pane id (`%3`), agent name or `default`.
    pub fn write_plan(&self, key: &str, plan: &str) {
        let file = self
            .agent_dir
            .join(format!("{}.plan", key.trim_start_matches('%')));
        std::fs::write(file, plan).expect("write plan");
    }

    /// Parsed lines of `agents/log.jsonl` (one per fake agent start). A last line without
    /// its newline is one an agent is still writing (a read can see an append half done,
    /// where the line crosses a page): it is not counted until it is whole.
    pub fn log_entries(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.agent_dir.join("log.jsonl"))
            .unwrap_or_default()
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n') && !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("valid log line"))
            .collect()
    }

    /// Log entries whose `pane` is `pane` (e.g. `%3`).
    pub fn log_entries_for(&self, pane: &str) -> Vec<serde_json::Value> {
        self.log_entries()
            .into_iter()
            .filter(|e| e["pane"] == pane)
            .collect()
    }

    /// The log entries of a pane once there are `n` of them (an agent logs a moment after
    /// tmux shows it running); panics after [`WAIT`].
    pub fn wait_log(&self, pane: &str, n: usize) -> Vec<serde_json::Value> {
        wait_until(&format!("{pane} has {n} log entries"), *WAIT, || {
            self.log_entries_for(pane).len() >= n
        });
        self.log_entries_for(pane)
    }

    pub fn wait_until<F: FnMut() -> bool>(&self, what: &str, timeout: Duration, f: F) {
        wait_until(what, timeout, f)
    }

    pub fn capture(&self, pane: &str) -> String {
        self.tmux_ok(&["capture-pane", "-p", "-t", pane])
    }

    /// Visible screen plus scrollback (`capture-pane -S -`). Use this for dead
    /// panes: tmux 3.3a scrolls the screen up one line when it prints
    /// "Pane is dead", pushing the first line into history.
    pub fn capture_all(&self, pane: &str) -> String {
        self.tmux_ok(&["capture-pane", "-p", "-S", "-", "-t", pane])
    }

    /// Like `capture` but with SGR escapes (`capture-pane -e`).
    pub fn capture_ansi(&self, pane: &str) -> String {
        self.tmux_ok(&["capture-pane", "-p", "-e", "-t", pane])
    }

    /// A format (e.g. `#{pane_dead_status}`) for `pane`, or None if it does not exist.
    pub fn pane_field_opt(&self, pane: &str, fmt: &str) -> Option<String> {
        let out = self.tmux(&["list-panes", "-a", "-F", &format!("#{{pane_id}} {fmt}")]);
        if !out.status.success() {
            return None;
        }
        let prefix = format!("{pane} ");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
    }

    /// Like `pane_field_opt`, panicking if the pane does not exist.
    pub fn pane_field(&self, pane: &str, fmt: &str) -> String {
        self.pane_field_opt(pane, fmt)
            .unwrap_or_else(|| panic!("pane {pane} does not exist"))
    }

    /// `Some("status N")` or `Some("signal N")` once `pane` is dead and tmux
    /// has reaped its process (`pane_dead` can turn 1 before the status is known).
    pub fn pane_exit(&self, pane: &str) -> Option<String> {
        parse_exit(&self.pane_field_opt(pane, EXIT_FMT)?)
    }

    /// Waits until `pane` is dead with a known status; returns `pane_exit`.
    ///
    /// tmux < 3.5 sometimes loses the SIGCHLD of a pane process (tmux issue
    /// #2679): the pane shows dead but `pane_dead_status` stays empty and the
    /// process stays a zombie until some other child exits. While the pane is
    /// dead without a status we nudge our private server with SIGCHLD.
    pub fn wait_pane_exit(&self, pane: &str, timeout: Duration) -> String {
        wait_exit(
            &format!("pane {pane}"),
            timeout,
            self.server_pid,
            || self.pane_field_opt(pane, EXIT_FMT),
            || self.capture_all(pane),
        )
    }

    /// Sends SIGCHLD to this private server so it reaps exited pane processes
    /// (works around the lost-SIGCHLD bug of tmux < 3.5).
    pub fn nudge_reaper(&self) {
        nudge_reaper(self.server_pid);
    }

    pub fn pane_exists(&self, pane: &str) -> bool {
        self.pane_field_opt(pane, "").is_some()
    }

    /// The data and state dirs (XDG_DATA_HOME, XDG_STATE_HOME) of the agentwatch under test:
    /// inside the temp dir, never the user's.
    pub fn xdg(&self) -> (String, String) {
        let home = self.dir.path().to_string_lossy().into_owned();
        (format!("{home}/data"), format!("{home}/state"))
    }

    /// The environment of an agentwatch under test: XDG data and state dirs in the temp
    /// dir (its locks are there too, under TMUX_TMPDIR).
    pub fn agentwatch_env(&self) -> Vec<(String, String)> {
        let (data, state) = self.xdg();
        vec![
            ("XDG_DATA_HOME".into(), data),
            ("XDG_STATE_HOME".into(), state),
        ]
    }

    /// The agents' stores of this test (as the environment of its processes names them),
    /// for an agentwatch run inside the test process.
    pub fn stores(&self) -> agentwatch::adapters::discover::Dirs {
        let d = self.dir.path();
        agentwatch::adapters::discover::Dirs {
            claude: Some(d.join("claude")),
            codex: Some(d.join("codex")),
            gemini: Some(d.join("gemini-home/.gemini")),
        }
    }

    /// An agentwatch inside the test process that supervises this server (auto-resume with
    /// `backoff`), its crash records and journal in the temp dir.
    pub fn supervisor(
        &self,
        backoff: &[u64],
    ) -> (agentwatch::core::state::State, agentwatch::run::Io) {
        let mut config = agentwatch::config::Config::default();
        config.auto_resume.backoff_secs = backoff.to_vec();
        self.supervisor_with(config)
    }

    /// The same, with a config of the test's own.
    pub fn supervisor_with(
        &self,
        config: agentwatch::config::Config,
    ) -> (agentwatch::core::state::State, agentwatch::run::Io) {
        let tmux = agentwatch::adapters::tmux::client::Tmux::new(
            self.socket.clone(),
            Duration::from_secs(5),
        )
        .with_env(self.env_pairs());
        let state = agentwatch::core::state::State::new(&config, false, String::new(), (200, 50));
        let io = agentwatch::run::Io::new(
            agentwatch::adapters::poll::Prober::new(tmux)
                .with_claude_dir(self.dir.path().join("claude")),
            Some(self.dir.path().join("crashes")),
        )
        .with_stores(self.stores())
        .with_journal(Some(self.dir.path().join("journal.jsonl")));
        (state, io)
    }

    /// Creates an agent's own store in the temp dir and returns it: from then on the fake
    /// agent keeps that agent's session rules (see `examples/fake_agent.rs`). `claude`:
    /// `$CLAUDE_CONFIG_DIR`; `gemini`: `$GEMINI_CLI_HOME/.gemini`.
    pub fn agent_store(&self, agent: &str) -> PathBuf {
        let dir = match agent {
            "claude" => self.dir.path().join("claude"),
            "gemini" => self.dir.path().join("gemini-home/.gemini"),
            other => panic!("no store for {other}"),
        };
        std::fs::create_dir_all(&dir).expect("create the agent's store");
        dir
    }

    /// `agentwatch status --json`'s rows.
    pub fn status_rows(&self) -> Vec<serde_json::Value> {
        let out = self
            .agentwatch_command(&["status", "--json"])
            .output()
            .expect("agentwatch status runs");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
    }

    /// `agentwatch status --json`'s row of `pane`, or `null`.
    pub fn status_row(&self, pane: &str) -> serde_json::Value {
        self.status_rows()
            .into_iter()
            .find(|r| r["pane_id"] == pane)
            .unwrap_or(serde_json::Value::Null)
    }

    /// The journal the agentwatch under test writes.
    pub fn journal(&self) -> String {
        std::fs::read_to_string(format!("{}/agentwatch/journal.jsonl", self.xdg().1))
            .unwrap_or_default()
    }

    /// How many journal lines are `kind` events (of `pane`, when given).
    pub fn journal_count(&self, kind: &str, pane: Option<&str>) -> usize {
        self.journal()
            .lines()
            .filter(|l| l.contains(&format!("\"event\":\"{kind}\"")))
            .filter(|l| pane.is_none_or(|p| l.contains(&format!("\"pane\":\"{p}\""))))
            .count()
    }

    /// `agentwatch -S <socket> spawn <agent>`; returns the new pane id.
    pub fn spawn_agent(&self, agent: &str) -> String {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentwatch"));
        self.env_for_child(&mut cmd);
        let out = cmd
            .arg("-S")
            .arg(&self.socket)
            .args(["spawn", agent])
            .output()
            .expect("run agentwatch spawn");
        assert!(
            out.status.success(),
            "spawn: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The real agentwatch binary with this server's test environment (private HOME and XDG
    /// dirs among it), no arguments yet.
    pub fn agentwatch(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentwatch"));
        self.env_for_child(&mut cmd);
        cmd
    }

    /// The real agentwatch binary with this server's test environment, `-S <socket>` and
    /// `args`, not yet started.
    pub fn agentwatch_command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentwatch"));
        self.env_for_child(&mut cmd);
        for (k, v) in self.agentwatch_env() {
            cmd.env(k, v);
        }
        cmd.arg("-S").arg(&self.socket).args(args);
        cmd
    }

    /// Runs [`TmuxServer::agentwatch_command`] to its end; it must succeed. Its stdout.
    pub fn agentwatch_ok(&self, args: &[&str]) -> String {
        let out = self
            .agentwatch_command(args)
            .output()
            .expect("agentwatch runs");
        if !out.status.success() {
            panic!(
                "agentwatch {args:?} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The real agentwatch binary watching this server (`-S <socket>` and `args`), in a
    /// second private server sized `width` x `height`, with its XDG dirs in the temp dir.
    pub fn start_agentwatch(
        &self,
        width: u16,
        height: u16,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> UiServer {
        self.start_agentwatch_named("ui", width, height, env, args)
    }

    /// Like `start_agentwatch`, in a UI server of its own named `name` (for a second
    /// dashboard beside the first).
    pub fn start_agentwatch_named(
        &self,
        name: &str,
        width: u16,
        height: u16,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> UiServer {
        let own = self.agentwatch_env();
        let sock = self.socket.to_string_lossy().into_owned();
        let mut all_env: Vec<(&str, &str)> =
            own.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        all_env.extend_from_slice(env);
        let mut argv = vec![env!("CARGO_BIN_EXE_agentwatch"), "-S", sock.as_str()];
        argv.extend_from_slice(args);
        self.start_ui_named(name, width, height, &all_env, &argv)
    }

    /// Runs `argv` as the single pane of a second private server (`<dir>/ui.sock`),
    /// sized `width` x `height`. `TMUX`/`TMUX_PANE` are unset inside the pane.
    pub fn start_ui(&self, width: u16, height: u16, argv: &[&str]) -> UiServer {
        self.start_ui_env(width, height, &[], argv)
    }

    /// Like `start_ui`, with extra `NAME=value` environment for the program
    /// (e.g. `("TMUX", &server.tmux_env_value())` to look like it runs inside
    /// the agents' server).
    pub fn start_ui_env(
        &self,
        width: u16,
        height: u16,
        env: &[(&str, &str)],
        argv: &[&str],
    ) -> UiServer {
        self.start_ui_named("ui", width, height, env, argv)
    }

    /// Like `start_ui_env`, on a UI server named `name` (`<dir>/<name>.sock`).
    pub fn start_ui_named(
        &self,
        name: &str,
        width: u16,
        height: u16,
        env: &[(&str, &str)],
        argv: &[&str],
    ) -> UiServer {
        let socket = self.dir.path().join(format!("{name}.sock"));
        let conf = self.dir.path().join(format!("{name}.conf"));
        std::fs::write(
            &conf,
            "set -s exit-empty off\nset -g remain-on-exit on\nset -g status off\n\
             set -g default-terminal tmux-256color\nset -s escape-time 0\n",
        )
        .expect("write ui.conf");
        let (w, h) = (width.to_string(), height.to_string());
        let conf = conf.to_string_lossy().into_owned();
        let assigns: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut args = vec![
            "-f",
            &conf,
            "new-session",
            "-d",
            "-s",
            "ui",
            "-x",
            &w,
            "-y",
            &h,
            "-P",
            "-F",
            "#{pane_id}",
            "--",
            "env",
            "-u",
            "TMUX",
            "-u",
            "TMUX_PANE",
        ];
        args.extend(assigns.iter().map(String::as_str));
        args.extend_from_slice(argv);
        let mut ui = UiServer {
            socket,
            env_dirs: [
                self.dir.path().to_path_buf(),
                self.bin_dir.clone(),
                self.agent_dir.clone(),
            ],
            pane: String::new(),
            server_pid: None,
        };
        ui.pane = ui.tmux_ok(&args).trim().to_string();
        let pid = ui.tmux_ok(&["display-message", "-p", "#{pid}"]);
        ui.server_pid = pid.trim().parse().ok();
        ui
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        kill_private_server(self.command(&self.socket), self.server_pid);
    }
}

/// A server a test had agentwatch start on `socket` (inside the test's dir), asked with the
/// test's environment and killed, by its pid, when dropped.
pub struct StartedServer<'a> {
    server: &'a TmuxServer,
    pub socket: PathBuf,
}

impl TmuxServer {
    /// The server agentwatch is to start on `socket`, to be asked and killed afterwards.
    pub fn started_on(&self, socket: PathBuf) -> StartedServer<'_> {
        assert!(
            socket.starts_with(self.dir.path()),
            "only a socket of this test"
        );
        StartedServer {
            server: self,
            socket,
        }
    }
}

impl StartedServer<'_> {
    pub fn tmux(&self, args: &[&str]) -> Output {
        self.server
            .command(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }
}

impl Drop for StartedServer<'_> {
    fn drop(&mut self) {
        let pid = self
            .tmux(&["display-message", "-p", "#{pid}"])
            .stdout
            .as_slice()
            .to_vec();
        let pid = String::from_utf8_lossy(&pid).trim().parse().ok();
        if pid.is_some() {
            kill_private_server(self.server.command(&self.socket), pid);
        }
    }
}

/// A second private tmux server whose single pane runs the program under test.
pub struct UiServer {
    pub socket: PathBuf,
    pub pane: String,
    env_dirs: [PathBuf; 3],
    server_pid: Option<u32>,
}

impl UiServer {
    fn cmd(&self) -> Command {
        let [dir, bin_dir, agent_dir] = &self.env_dirs;
        tmux_command(&self.socket, dir, bin_dir, agent_dir)
    }

    pub fn tmux(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().expect("run tmux")
    }

    pub fn tmux_ok(&self, args: &[&str]) -> String {
        stdout_ok(self.tmux(args), args)
    }

    /// tmux key names, e.g. `["j", "Enter", "C-c"]`.
    pub fn send_keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.pane];
        args.extend_from_slice(keys);
        self.tmux_ok(&args);
    }

    /// Types `text` literally (`send-keys -l`).
    pub fn send_text(&self, text: &str) {
        self.tmux_ok(&["send-keys", "-t", &self.pane, "-l", text]);
    }

    /// Pid of the program under test (the pane's process: `env` execs it).
    pub fn program_pid(&self) -> u32 {
        self.tmux_ok(&["display-message", "-p", "-t", &self.pane, "#{pane_pid}"])
            .trim()
            .parse()
            .expect("pane pid")
    }

    pub fn screen(&self) -> String {
        self.tmux_ok(&["capture-pane", "-p", "-t", &self.pane])
    }

    /// The screen once two captures 40 ms apart agree, as [`UiServer::wait_for`] takes it
    /// (a capture can land in a frame tmux is still parsing); the last capture if it never
    /// settles in ten tries. For checks that have no wait around them, as in
    /// [`holds_for`].
    pub fn settled_screen(&self) -> String {
        let mut screen = self.screen();
        for _ in 0..10 {
            std::thread::sleep(SETTLE);
            let again = self.screen();
            if again == screen {
                break;
            }
            screen = again;
        }
        screen
    }

    pub fn screen_ansi(&self) -> String {
        self.tmux_ok(&["capture-pane", "-p", "-e", "-t", &self.pane])
    }

    pub fn resize(&self, width: u16, height: u16) {
        let (w, h) = (width.to_string(), height.to_string());
        self.tmux_ok(&["resize-window", "-t", "ui:", "-x", &w, "-y", &h]);
    }

    /// `Some("status N")` / `Some("signal N")` once the program has exited
    /// (the pane stays thanks to remain-on-exit).
    pub fn exit(&self) -> Option<String> {
        parse_exit(&self.tmux_ok(&["display-message", "-p", "-t", &self.pane, EXIT_FMT]))
    }

    /// Waits for the program to exit; returns `status N` or `signal N`.
    pub fn wait_exit(&self, timeout: Duration) -> String {
        wait_exit(
            "ui program",
            timeout,
            self.server_pid,
            || {
                let out = self.tmux(&["display-message", "-p", "-t", &self.pane, EXIT_FMT]);
                out.status
                    .success()
                    .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
            },
            || self.screen(),
        )
    }

    /// Polls the screen until it contains `text`; returns that screen.
    pub fn wait_for_text(&self, text: &str, timeout: Duration) -> String {
        self.wait_for(&format!("{text:?}"), timeout, |s| s.contains(text))
    }

    /// Polls the screen until `pred(screen)` holds on a settled screen; returns that screen.
    ///
    /// A capture can land while tmux is still parsing a frame (it reads the pty in chunks), so
    /// its top can be the new frame and its bottom the old one. A screen counts only when a
    /// second capture a moment later is the same: a frame in flight is done within
    /// milliseconds, while the dashboard's own changes (ages, ticks) come a second apart.
    pub fn wait_for<F: FnMut(&str) -> bool>(
        &self,
        what: &str,
        timeout: Duration,
        mut pred: F,
    ) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                std::thread::sleep(SETTLE);
                // Never settled in time: the last one that held is the best there is.
                if self.screen() == screen || start.elapsed() > timeout {
                    return screen;
                }
                continue;
            }
            if start.elapsed() > timeout {
                panic!("timed out after {timeout:?} waiting for {what}; last screen:\n{screen}");
            }
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for UiServer {
    fn drop(&mut self) {
        kill_private_server(self.cmd(), self.server_pid);
    }
}

/// A `tmux` on PATH that logs its argv, then runs the real one.
pub fn tmux_wrapper(server: &TmuxServer) -> (String, std::path::PathBuf) {
    // The tmux under test: AGENTWATCH_TEST_TMUX, else the one on PATH.
    let real = match std::env::var("AGENTWATCH_TEST_TMUX") {
        Ok(p) if !p.is_empty() => p,
        _ => String::from_utf8(
            Command::new("sh")
                .args(["-c", "command -v tmux"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
        .trim()
        .to_string(),
    };
    let dir = server.dir.path().join("wrap");
    std::fs::create_dir_all(&dir).unwrap();
    let log = server.dir.path().join("tmux-calls.log");
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{real}' \"$@\"\n",
        log.display()
    );
    std::fs::write(dir.join("tmux"), script).unwrap();
    std::fs::set_permissions(
        dir.join("tmux"),
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
    )
    .unwrap();
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap());
    (path, log)
}

pub fn calls(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The argv a fake agent recorded in one entry of its log.
#[allow(dead_code)]
pub fn argv(entry: &serde_json::Value) -> Vec<String> {
    entry["argv"]
        .as_array()
        .expect("argv is an array")
        .iter()
        .map(|v| v.as_str().expect("argv words are strings").to_string())
        .collect()
}

/// Looks (`look_once`) every 50 ms until `done` holds or `timeout` passes; says which. For
/// an agentwatch run inside the test process, which acts only when it looks. `timeout` is a
/// deadline: give it [`WAIT`], [`LONG`] or a [`scaled`] one.
pub async fn look_until(
    state: &mut agentwatch::core::state::State,
    io: &agentwatch::run::Io,
    timeout: Duration,
    mut done: impl FnMut(&agentwatch::core::state::State) -> bool,
) -> bool {
    let start = Instant::now();
    loop {
        agentwatch::run::look_once(state, io).await;
        if done(state) {
            return true;
        }
        if start.elapsed() >= timeout {
            return false;
        }
        tokio::time::sleep(LOOK).await;
    }
}

/// [`holds_for`] for an agentwatch run inside the test process: it looks every 50 ms for
/// the whole of `span` (it acts only when it looks), and panics after the first look that
/// leaves `cond` false. The span is not scaled, as [`holds_for`] says why.
pub async fn looks_hold(
    state: &mut agentwatch::core::state::State,
    io: &agentwatch::run::Io,
    what: &str,
    span: Duration,
    mut cond: impl FnMut(&agentwatch::core::state::State) -> bool,
) {
    let start = Instant::now();
    loop {
        agentwatch::run::look_once(state, io).await;
        if !cond(state) {
            panic!(
                "{:?} into a span of {span:?}, it no longer held that {what}",
                start.elapsed()
            );
        }
        if start.elapsed() >= span {
            return;
        }
        tokio::time::sleep(LOOK).await;
    }
}

/// Selects `pane` and presses `action` on it, settling what follows (as a key would).
pub async fn press(
    state: &mut agentwatch::core::state::State,
    io: &agentwatch::run::Io,
    pane: &str,
    action: agentwatch::core::msg::Action,
) {
    state.grid.selected = agentwatch::core::pane::PaneId::parse(pane);
    agentwatch::run::send(state, io, agentwatch::core::msg::Msg::Action(action)).await;
}
