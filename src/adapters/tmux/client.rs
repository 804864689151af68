//! The thin async tmux adapter: one `tmux` process per call over `tokio::process`, argv
//! only (never a shell string), stdin null, a timeout, killed if dropped, typed errors.
//! It decides nothing.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

pub use crate::core::errors::TmuxError;

/// A handle on one tmux server. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Tmux {
    socket: PathBuf,
    timeout: Duration,
    program: OsString,
    envs: Vec<(OsString, OsString)>,
    /// The control-mode connection and its supervision, shared by clones.
    control: Arc<tokio::sync::Mutex<Slot>>,
    /// What the control-mode connection heard the server say, for the poller.
    notices: Arc<super::control::Notices>,
    /// Here, or over ssh.
    reach: super::reach::Reach,
    /// Where this process wrote the supervisor's verdicts on this server.
    pub(super) verdicts: Arc<std::sync::Mutex<super::verdicts::Written>>,
}

/// Which transport the polls use right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A persistent control-mode client: no process per call.
    Control,
    /// One `tmux` process per call (the fallback, or by choice).
    Exec,
}

#[derive(Debug)]
struct Slot {
    enabled: bool,
    /// Shared with the calls under way on it: the slot is locked only to find or make the
    /// connection, so calls of other tasks go out while one waits for its answer.
    conn: Option<Arc<super::control::Control>>,
    /// Why the last connection failed (another host's calls say it while they wait).
    last_error: Option<TmuxError>,
    /// No new connection before this (backoff after a failure).
    not_before: Option<tokio::time::Instant>,
    backoff: Duration,
}

impl std::fmt::Debug for super::control::Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Control {{ alive: {} }}", self.is_alive())
    }
}

const BACKOFF_MIN: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// Time allowed per command of a batch, over the call's own timeout.
const BATCH_PER_COMMAND: Duration = Duration::from_millis(5);

impl Tmux {
    pub fn new(socket: PathBuf, timeout: Duration) -> Tmux {
        Tmux {
            socket,
            timeout,
            program: OsString::from("tmux"),
            envs: Vec::new(),
            control: Arc::new(tokio::sync::Mutex::new(Slot {
                enabled: false,
                conn: None,
                last_error: None,
                not_before: None,
                backoff: BACKOFF_MIN,
            })),
            notices: Arc::default(),
            verdicts: Arc::default(),
            reach: super::reach::Reach::Local,
        }
    }

    /// A tmux server on another host, reached with `ssh` (see [`super::reach`]). Its
    /// "socket" is the remote one, when named, for messages.
    pub fn over_ssh(server: super::reach::SshServer, timeout: Duration) -> Tmux {
        let mut t = Tmux::new(
            PathBuf::from(
                server
                    .socket_path
                    .clone()
                    .or_else(|| server.socket_name.clone())
                    .unwrap_or_else(|| "default".into()),
            ),
            timeout,
        );
        t.reach = super::reach::Reach::Ssh(server);
        // Over the connection only: a process per call would be an ssh login per call, and
        // what it started would get sshd's bare PATH.
        t.with_control_mode(true)
    }

    /// Another host's server is asked over its connection only: while there is none, a
    /// call fails at once with why (no ssh per call), and it is tried again with backoff.
    pub fn remote(&self) -> bool {
        matches!(self.reach, super::reach::Reach::Ssh(_))
    }

    fn no_connection(&self, slot: &Slot) -> TmuxError {
        slot.last_error
            .clone()
            .unwrap_or_else(|| TmuxError::Failed {
                detail: "no control-mode connection yet".into(),
            })
    }

    /// How the server is reached.
    pub fn reach(&self) -> &super::reach::Reach {
        &self.reach
    }

    /// What the server said happened (shape, names), and a wake-up when it says something.
    pub fn notices(&self) -> &Arc<super::control::Notices> {
        &self.notices
    }

    /// Use a control-mode connection for polls and captures when one can be had (falling
    /// back to one process per call whenever it fails, and retrying with backoff).
    pub fn with_control_mode(self, on: bool) -> Tmux {
        if let Ok(mut slot) = self.control.try_lock() {
            slot.enabled = on;
        }
        self
    }

    /// The transport the last call could use.
    pub async fn transport(&self) -> Transport {
        let slot = self.control.lock().await;
        match &slot.conn {
            Some(c) if c.is_alive() => Transport::Control,
            _ => Transport::Exec,
        }
    }

    /// The live control connection's number, where there is one: panes' output can be heard
    /// over it (the session it is attached to is in [`Tmux::notices`]).
    pub async fn hearing(&self) -> Option<u64> {
        let slot = self.control.lock().await;
        slot.conn
            .as_ref()
            .filter(|c| c.is_alive())
            .map(|c| c.serial())
    }

    /// Commands for the control connection itself (`refresh-client`), sent over it and
    /// never as a process; `None`: no connection.
    pub async fn to_control<S: AsRef<str>>(
        &self,
        commands: &[&[S]],
    ) -> Option<Result<Vec<super::control::Block>, TmuxError>> {
        self.via_control_many(commands).await
    }

    /// Runs one command over the control connection, if there is one (or one can be made
    /// now). `None`: use a process for this call.
    pub(super) async fn via_control(&self, args: &[&str]) -> Option<Result<Vec<u8>, TmuxError>> {
        let mut blocks = match self.via_control_many(&[args]).await? {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        Some(blocks.pop()?.map_err(|e| self.failed(e.0.as_bytes())))
    }

    /// Several commands over the control connection in one round trip: each answers with
    /// its own block (`Err` holding tmux's words for one that failed). `None`: no control
    /// connection, use a process.
    pub(super) async fn via_control_many<S: AsRef<str>>(
        &self,
        commands: &[&[S]],
    ) -> Option<Result<Vec<super::control::Block>, TmuxError>> {
        self.via_control_as(commands, Lines::Each).await
    }

    /// [`Tmux::via_control_many`], riding with the next other request within `within`.
    pub(super) async fn via_control_riding<S: AsRef<str>>(
        &self,
        commands: &[&[S]],
        within: Duration,
    ) -> Option<Result<Vec<super::control::Block>, TmuxError>> {
        self.via_control_as(commands, Lines::Ride(within)).await
    }

    /// [`Tmux::via_control_many`], the commands sent as one line or one line each.
    async fn via_control_as<S: AsRef<str>>(
        &self,
        commands: &[&[S]],
        lines: Lines,
    ) -> Option<Result<Vec<super::control::Block>, TmuxError>> {
        let conn = match self.connection().await? {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        // Not under the slot's lock: calls of other tasks go out while this one waits for
        // its answer, and those queued at the same moment share one write (one wake-up of
        // the server, which walks all its panes at each).
        // A big batch (options for a thousand new panes) gets time in proportion.
        let timeout = self.timeout + BATCH_PER_COMMAND * commands.len() as u32;
        let sent = match lines {
            Lines::Each => conn.run_many(commands, timeout).await,
            Lines::One => conn.run_list(commands, timeout).await,
            Lines::Ride(within) => conn.ride_many(commands, within, timeout).await,
        };
        match sent {
            Ok(blocks) => Some(Ok(blocks)),
            Err(e) => {
                let mut slot = self.control.lock().await;
                // Another call on it may have given it up already (and made a new one).
                if slot.conn.as_ref().is_some_and(|c| Arc::ptr_eq(c, &conn)) {
                    slot.conn = None;
                    self.retry_later(&mut slot, &format!("control mode failed ({e})"));
                    if self.remote() {
                        slot.not_before = None;
                        slot.last_error = Some(e.clone());
                    }
                }
                self.remote().then_some(Err(e))
            }
        }
    }

    /// The live control connection, made now if there is none and none failed lately.
    /// `None`: use a process for this call; `Some(Err)`: another host that cannot be
    /// reached now (its calls say why rather than start a process each).
    async fn connection(&self) -> Option<Result<Arc<super::control::Control>, TmuxError>> {
        let mut slot = self.control.lock().await;
        if !slot.enabled {
            return None;
        }
        if slot.conn.as_ref().is_some_and(|c| !c.is_alive()) {
            slot.conn = None;
            self.retry_later(&mut slot, "the control-mode connection closed");
            if self.remote() {
                // Connected again at once: that says why it closed (the host went, or only
                // the connection did); a failure then backs off.
                slot.not_before = None;
            }
        }
        if slot.conn.is_none() {
            if slot
                .not_before
                .is_some_and(|t| tokio::time::Instant::now() < t)
            {
                return self.remote().then(|| Err(self.no_connection(&slot)));
            }
            match self.connect().await {
                Ok(c) => {
                    tracing::info!("transport: control mode ({})", self.socket.display());
                    slot.conn = Some(Arc::new(c));
                    slot.backoff = BACKOFF_MIN;
                    slot.not_before = None;
                    // What changed while there was no connection was not heard.
                    self.notices
                        .shape
                        .store(true, std::sync::atomic::Ordering::SeqCst);
                    self.notices
                        .listening
                        .store(true, std::sync::atomic::Ordering::SeqCst);
                }
                Err(e) => {
                    self.retry_later(&mut slot, &format!("no control-mode connection: {e}"));
                    if self.remote() {
                        slot.last_error = Some(e.clone());
                        return Some(Err(e));
                    }
                    return None;
                }
            }
        }
        slot.conn.as_ref().map(|c| Ok(Arc::clone(c)))
    }

    /// What tmux's error words mean. A pane or window that is not there any more means the
    /// server's shape changed: the next poll lists the panes.
    pub(super) fn failed(&self, stderr: &[u8]) -> TmuxError {
        let e = classify(&self.socket, stderr);
        if matches!(e, TmuxError::NoSuchPane { .. }) {
            self.notices
                .shape
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        e
    }

    fn retry_later(&self, slot: &mut Slot, why: &str) {
        self.notices
            .listening
            .store(false, std::sync::atomic::Ordering::SeqCst);
        tracing::warn!(
            "transport: fork+exec ({why}); retrying control mode in {:?}",
            slot.backoff
        );
        slot.not_before = Some(tokio::time::Instant::now() + slot.backoff);
        slot.backoff = (slot.backoff * 2).min(BACKOFF_MAX);
    }

    async fn connect(&self) -> Result<super::control::Control, TmuxError> {
        // Over ssh by its id (`$3`): a name is the server's data, and there it would pass
        // through the remote shell. Here by its exact name, as the connection always has.
        let remote = self.remote();
        let format = if remote {
            "#{session_id}"
        } else {
            "#{session_name}"
        };
        let out = self
            .exec_for(["list-sessions", "-F", format], self.timeout)
            .await?;
        let text = String::from_utf8_lossy(&out);
        let first = text.lines().next().filter(|s| {
            !remote || (s.starts_with('$') && s[1..].bytes().all(|b| b.is_ascii_digit()))
        });
        let Some(first) = first else {
            return Err(TmuxError::Failed {
                detail: "no session to attach a control client to".into(),
            });
        };
        let session = if remote {
            first.to_string()
        } else {
            format!("={first}")
        };
        // Attaching here takes milliseconds; over ssh the connection is made first.
        let timeout = match self.reach {
            super::reach::Reach::Local => self.timeout.min(Duration::from_secs(2)),
            super::reach::Reach::Ssh(_) => self.timeout,
        };
        super::control::Control::connect(
            &self.reach,
            &self.program,
            &self.socket,
            &session,
            &self.envs,
            timeout,
            Arc::clone(&self.notices),
        )
        .await
    }

    /// Environment for every tmux client started. A respawn or a new window gets the
    /// client's PATH (tmux copies it), so this also sets what relaunched agents find.
    pub fn with_env(mut self, envs: Vec<(OsString, OsString)>) -> Tmux {
        // The tmux found on that PATH, as a shell with it would run (a spawned process
        // looks its program up on the parent's PATH, not the one given to it).
        if let Some((_, path)) = envs.iter().find(|(k, _)| k == "PATH") {
            if let Some(tmux) = crate::adapters::which::find_in("tmux", path) {
                self.program = tmux.into_os_string();
            }
        }
        self.envs = envs;
        self
    }

    /// The PATH the tmux processes run here get (this process's, unless given one): the PATH
    /// of a pane that one of them creates or respawns.
    pub fn client_path(&self) -> Option<OsString> {
        self.envs
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os("PATH"))
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs `tmux -u -S <socket> <args...>` and returns its stdout.
    pub async fn run<I, S>(&self, args: I) -> Result<Vec<u8>, TmuxError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_for(args, self.timeout).await
    }

    /// Like [`Tmux::run`] with its own timeout. Another host's server is asked over its
    /// control connection when there is one: no ssh process per call, and what it starts
    /// gets its session's environment (a client started over ssh would give a respawned
    /// agent sshd's bare PATH, where the agent is not found).
    pub async fn run_for<I, S>(&self, args: I, timeout: Duration) -> Result<Vec<u8>, TmuxError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<S> = args.into_iter().collect();
        if let super::reach::Reach::Ssh(_) = self.reach {
            // A word ending in `;` is written `x\;` for tmux's argv (else it ends a
            // command); over the connection every word is quoted, so the `;` is plain.
            let words: Vec<String> = args
                .iter()
                .map(|a| {
                    let w = a.as_ref().to_string_lossy();
                    match w.strip_suffix("\\;") {
                        Some(head) if !head.is_empty() => format!("{head};"),
                        _ => w.into_owned(),
                    }
                })
                .collect();
            // `a ; b` on one line, as tmux's own command line: run together, stopping at the
            // first failure (a `set-option` after a refused `respawn-pane` must not run),
            // and a window that dies at once still gets its options before it can close.
            let commands: Vec<&[String]> = words
                .split(|w| w == ";")
                .filter(|c| !c.is_empty())
                .collect();
            let blocks = match self.via_control_as(&commands, Lines::One).await {
                Some(r) => r?,
                None => return self.exec_for(args, timeout).await,
            };
            let mut out = Vec::new();
            for block in blocks {
                match block {
                    Ok(bytes) => out.extend(bytes),
                    Err(e) => return Err(self.failed(e.0.as_bytes())),
                }
            }
            return Ok(out);
        }
        self.exec_for(args, timeout).await
    }

    /// Runs tmux as a process (over ssh for another host): never the control connection.
    async fn exec_for<I, S>(&self, args: I, timeout: Duration) -> Result<Vec<u8>, TmuxError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.exec_said(args, timeout).await.map(|(out, _)| out)
    }

    /// Runs tmux as a process and returns its stdout and what it said on stderr: a tmux
    /// that could not create its server's socket says so there and still exits 0.
    pub async fn exec_said<I, S>(
        &self,
        args: I,
        timeout: Duration,
    ) -> Result<(Vec<u8>, String), TmuxError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<S> = args.into_iter().collect();
        let mut cmd = self
            .reach
            .command(&self.program, &self.socket, &self.envs, &args);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => TmuxError::NotInstalled,
            _ => TmuxError::Failed {
                detail: format!("could not start tmux: {e}"),
            },
        })?;
        let out = match tokio::time::timeout(timeout, child.wait_with_output()).await {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => {
                return Err(TmuxError::Failed {
                    detail: format!("waiting for tmux: {e}"),
                })
            }
            Err(_) => return Err(TmuxError::TimedOut { after: timeout }),
        };
        if out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Ok((out.stdout, said));
        }
        if let (super::reach::Reach::Ssh(s), Some(detail)) = (
            &self.reach,
            super::reach::ssh_failure(out.status.code(), &out.stderr),
        ) {
            return Err(TmuxError::Unreachable {
                host: s.dest.clone(),
                detail,
            });
        }
        Err(self.failed(&out.stderr))
    }

    /// `tmux -V`, parsed.
    pub async fn version(&self) -> Result<TmuxVersion, TmuxError> {
        let out = self.exec_for(["-V"], self.timeout).await?;
        TmuxVersion::parse(&String::from_utf8_lossy(&out)).ok_or_else(|| TmuxError::Failed {
            detail: format!(
                "could not read the tmux version from {:?}",
                String::from_utf8_lossy(&out).trim()
            ),
        })
    }
}

/// How commands go over the control connection: a line each (each answers whatever the
/// others do), or all on one line (run together, stopping at the first failure).
#[derive(Clone, Copy)]
enum Lines {
    Each,
    One,
    /// One line each, riding with the next other request within this long.
    Ride(Duration),
}

/// Sends SIGCHLD to the tmux server so that it reaps a child whose exit it missed (tmux
/// < 3.6 with libutempter loses SIGCHLD; see TMUX.md). Harmless otherwise.
pub fn kick_server(server_pid: u32) -> std::io::Result<()> {
    let pid = libc::pid_t::try_from(server_pid)
        .map_err(|_| std::io::Error::other("server pid out of range"))?;
    // SAFETY: kill(2) with a valid signal number has no memory-safety preconditions.
    let rc = unsafe { libc::kill(pid, libc::SIGCHLD) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn classify(socket: &Path, stderr: &[u8]) -> TmuxError {
    let msg = String::from_utf8_lossy(stderr).trim().to_string();
    // "server exited unexpectedly": the server took the connection and closed it, which a
    // server does while it exits (server_accept after kill-server) or when it dies; "server
    // exited": it told the client it is shutting down. Either way there is no server to
    // ask: the next call gets "no server running".
    if msg.contains("no server running")
        || msg.contains("error connecting to")
        || msg.contains("server exited")
    {
        TmuxError::NoServer {
            socket: socket.to_path_buf(),
        }
    } else if msg.contains("can't find pane") || msg.contains("can't find window") {
        TmuxError::NoSuchPane { detail: msg }
    } else {
        TmuxError::Failed { detail: msg }
    }
}

/// A tmux version such as 3.3a.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TmuxVersion {
    pub major: u32,
    pub minor: u32,
}

impl TmuxVersion {
    /// Parses `tmux 3.3a`, `tmux next-3.6`, `tmux 3.6-rc`, `tmux master`.
    pub fn parse(s: &str) -> Option<TmuxVersion> {
        let v = s.trim().strip_prefix("tmux ")?;
        if v.starts_with("master") || v.starts_with("openbsd") {
            return Some(TmuxVersion {
                major: 99,
                minor: 0,
            });
        }
        let v = v.strip_prefix("next-").unwrap_or(v);
        let (major, rest) = v.split_once('.')?;
        let minor: String = rest.chars().take_while(char::is_ascii_digit).collect();
        Some(TmuxVersion {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        })
    }
}

impl std::fmt::Display for TmuxVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse() {
        assert_eq!(
            TmuxVersion::parse("tmux 3.3a\n"),
            Some(TmuxVersion { major: 3, minor: 3 })
        );
        assert_eq!(
            TmuxVersion::parse("tmux next-3.6"),
            Some(TmuxVersion { major: 3, minor: 6 })
        );
        assert_eq!(TmuxVersion::parse("screen 4"), None);
    }

    #[test]
    fn stderr_is_classified() {
        let s = Path::new("/x");
        assert!(matches!(
            classify(s, b"no server running on /x"),
            TmuxError::NoServer { .. }
        ));
        assert!(matches!(
            classify(s, b"server exited unexpectedly"),
            TmuxError::NoServer { .. }
        ));
        assert!(matches!(
            classify(s, b"server exited"),
            TmuxError::NoServer { .. }
        ));
        assert!(matches!(
            classify(s, b"can't find pane: %9"),
            TmuxError::NoSuchPane { .. }
        ));
    }
}
