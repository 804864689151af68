//! A persistent tmux control-mode connection (`tmux -C attach -f no-output,pause-after=2`,
//! panes' output turned on one by one where it is to be heard; not
//! `ignore-size`, which crashed the tmux 3.3a server, a NULL dereference, in about one run in
//! four of `tests/e2e_peek.rs`; a control client that never sets a size does not size
//! windows anyway):
//! one client process for the life of the connection, commands written as lines, replies
//! read as `%begin … %end|%error` blocks, byte for byte (output may be non-UTF-8). Steady
//! polling over it starts no process at all. Only commands sent by this client (flags 1) are
//! matched, in order. Of the notifications, those that say the server's shape changed
//! (windows, sessions, layouts, names) are passed on as [`Notices`]; the rest are ignored.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::client::TmuxError;

/// One block's content, or what an `%error` block said.
pub type Block = Result<Vec<u8>, ErrorBlock>;

/// The words of an `%error` block: tmux refused the command (the client tells what they
/// mean, see `Tmux::failed`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ErrorBlock(pub String);

/// A line sent, and how many blocks it answers with: one per command, up to and including
/// the first that fails (tmux skips the rest of the line; a line that does not parse
/// answers with one error). Replies are matched by that count, so a command that runs
/// others (`if-shell`, `source-file`, an alias of several) answers with more blocks and
/// must not be sent.
struct Request {
    /// One or more lines, each ending in a newline.
    line: String,
    /// The blocks they give back: one a line, or one a command of a `a ; b` line.
    commands: usize,
    /// A `a ; b ; c` line: tmux stops at the first command that fails, and its block is
    /// the last.
    list: bool,
    /// Held until another request is written, to go in the same write, or until then at
    /// the latest (see [`Control::ride_many`]).
    ride: Option<tokio::time::Instant>,
    reply: oneshot::Sender<Vec<Block>>,
}

/// A request whose blocks are being read.
struct Pending {
    commands: usize,
    list: bool,
    blocks: Vec<Block>,
    reply: oneshot::Sender<Vec<Block>>,
}

/// What the server said happened outside any reply, for the poller: set by the connection,
/// taken by the next poll. `wake` is told at once, so a poll need not wait for its tick.
#[derive(Debug, Default)]
pub struct Notices {
    /// Windows, panes or sessions came or went (or a layout changed): list the panes.
    pub shape: AtomicBool,
    /// A window or session was renamed: read the names again.
    pub names: AtomicBool,
    /// A control connection is up, so the notices above are being heard at all.
    pub listening: AtomicBool,
    pub wake: tokio::sync::Notify,
    /// A heard pane started or stopped writing: worth a poll, but not more than a few a
    /// second (a hundred agents at work start and stop many times a second together, and
    /// each poll goes over every card), unlike `wake` (a death, a new window).
    pub heard: tokio::sync::Notify,
    /// When each pane last wrote, heard as `%output` (for the panes whose output is on).
    pub output: std::sync::Mutex<Output>,
    /// Writes made to tmux over control connections so far: each is a wake-up of the
    /// server (requests queued together share one).
    pub writes: std::sync::atomic::AtomicU64,
}

/// When each pane last wrote, as one connection heard it (by pane number), and the session
/// it is attached to.
#[derive(Debug, Default)]
pub struct Output {
    /// The connection this is about ([`Control::serial`]).
    pub serial: u64,
    /// A monotonic instant, as the loop's clock is: a wall clock stepped (NTP, a suspend)
    /// does not make a pane look as if it wrote in the future.
    pub last: std::collections::HashMap<u32, tokio::time::Instant>,
    /// The session it is attached to, `$id` and name, as tmux last said
    /// (`%session-changed`, `%session-renamed`): `%output` comes for its panes only.
    pub session: Option<(String, String)>,
    /// Panes tmux said it paused (`%pause`): on request, or because their output waited
    /// unread past `pause-after` (then they are to be continued).
    pub paused: std::collections::HashSet<u32>,
}

/// Each connection's number, for what was told to one to be told again to the next.
static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Notices {
    fn heard(&self, notice: Change) {
        match notice {
            Change::Shape => self.shape.store(true, Ordering::SeqCst),
            Change::Names => self.names.store(true, Ordering::SeqCst),
        }
        self.wake.notify_one();
    }

    /// Pane `%pane` wrote, heard by connection `serial`: the loop is woken when it starts to
    /// write after a stop, not for every byte of a spinner.
    fn wrote(&self, serial: u64, pane: u32, paused: bool) {
        let now = tokio::time::Instant::now();
        let quiet = std::time::Duration::from_millis(crate::core::attention::QUIET_HEARD_MS);
        let mut out = self.for_connection(serial);
        if paused {
            // Not a byte: tmux paused it, on request (a pane counted, not heard: no
            // wake-up for that), or for it was not read (continued at the next
            // poll, a tick away at most).
            out.paused.insert(pane);
            return;
        }
        let before = out.last.insert(pane, now);
        let start = before.is_none_or(|t| now.duration_since(t) >= quiet);
        drop(out);
        if start {
            self.heard.notify_one();
        }
    }

    /// The connection is attached to session `id` (`$3`) named `name`.
    fn attached(&self, serial: u64, id: &str, name: &str) {
        self.for_connection(serial).session = Some((id.to_string(), name.to_string()));
    }

    /// Session `id` is now named `name`.
    fn renamed(&self, serial: u64, id: &str, name: &str) {
        let mut out = self.for_connection(serial);
        if let Some(s) = out.session.as_mut().filter(|(i, _)| i == id) {
            s.1 = name.to_string();
        }
    }

    /// What is heard, reset for connection `serial` if it was about another.
    fn for_connection(&self, serial: u64) -> std::sync::MutexGuard<'_, Output> {
        let mut out = self.output.lock().unwrap_or_else(|e| e.into_inner());
        if out.serial != serial {
            *out = Output {
                serial,
                ..Output::default()
            };
        }
        out
    }
}

/// A live control-mode connection. Dropping it ends the client.
pub struct Control {
    tx: mpsc::UnboundedSender<Request>,
    alive: Arc<AtomicBool>,
    /// This connection's number: panes' output is paused and continued per connection.
    serial: u64,
}

/// Quotes one argument for tmux's command parser: single quotes, `'` as `'\''`.
/// `None` for what cannot go on one line (a newline ends the command).
pub fn quote(arg: &str) -> Option<String> {
    if arg.contains(['\n', '\r']) {
        return None;
    }
    Some(format!("'{}'", arg.replace('\'', r"'\''")))
}

impl Control {
    /// Attaches to `session` and waits until the client is ready (`%session-changed`).
    /// `reach` says how tmux is started: here, or over ssh.
    pub async fn connect(
        reach: &super::reach::Reach,
        program: &std::ffi::OsStr,
        socket: &std::path::PathBuf,
        session: &str,
        envs: &[(std::ffi::OsString, std::ffi::OsString)],
        timeout: Duration,
        notices: Arc<Notices>,
    ) -> Result<Control, TmuxError> {
        let mut child = reach
            .command(
                program,
                socket,
                envs,
                // No pane's output until some is turned on (see `poll::hear`); output
                // left unread for 2 s (this process stopped, say) is paused, not kept.
                &[
                    "-C",
                    "attach",
                    "-t",
                    session,
                    "-f",
                    "no-output,pause-after=2",
                ],
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| TmuxError::Failed {
                detail: format!("control mode: {e}"),
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(TmuxError::Failed {
                detail: "control mode: no pipes".into(),
            });
        };
        let mut reader = BufReader::new(stdout);
        // Wait for the client to be attached before sending anything.
        let ready = async {
            let mut line = Vec::new();
            loop {
                line.clear();
                if reader.read_until(b'\n', &mut line).await.ok()? == 0 {
                    return None;
                }
                if let Some(Completed::Attached(id, name)) = Parser::default().line(&line) {
                    return Some((id, name));
                }
                if line.starts_with(b"%exit") {
                    return None;
                }
            }
        };
        let attached = match tokio::time::timeout(timeout, ready).await {
            Ok(Some(session)) => session,
            Ok(None) => {
                return Err(TmuxError::Failed {
                    detail: "control mode: the client exited while attaching".into(),
                })
            }
            Err(_) => return Err(TmuxError::TimedOut { after: timeout }),
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let alive = Arc::new(AtomicBool::new(true));
        let serial = SERIAL.fetch_add(1, Ordering::SeqCst);
        notices.attached(serial, &attached.0, &attached.1);
        let pumped = pump(stdin, reader, rx, Arc::clone(&alive), notices, serial);
        tokio::spawn(async move {
            pumped.await;
            let _ = child.start_kill();
        });
        Ok(Control { tx, alive, serial })
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// Sends one command line (one command: one block back) and waits for its block.
    pub async fn run(&self, args: &[&str], timeout: Duration) -> Result<Block, TmuxError> {
        let mut blocks = self.run_many(&[args], timeout).await?;
        blocks.pop().ok_or_else(dead)
    }

    /// Sends several commands, one line each, in one write, and waits for their blocks: one
    /// round trip and one wake-up of the server for the lot, however many there are (a
    /// command that fails stops none of the others). `timeout` is for the whole batch.
    pub async fn run_many<S: AsRef<str>>(
        &self,
        commands: &[&[S]],
        timeout: Duration,
    ) -> Result<Vec<Block>, TmuxError> {
        self.send_lines(commands, None, timeout).await
    }

    /// [`Control::run_many`], sent with the next request of another caller (one write, one
    /// wake-up of the server for both), or alone once `within` has passed: for a question
    /// that can wait a little (a lease renewed every 2 s) on a server asked every few
    /// seconds anyway. `timeout` runs from the write.
    pub async fn ride_many<S: AsRef<str>>(
        &self,
        commands: &[&[S]],
        within: Duration,
        timeout: Duration,
    ) -> Result<Vec<Block>, TmuxError> {
        self.send_lines(commands, Some(within), timeout).await
    }

    /// One line per command, riding within `ride` if given; their blocks.
    async fn send_lines<S: AsRef<str>>(
        &self,
        commands: &[&[S]],
        ride: Option<Duration>,
        timeout: Duration,
    ) -> Result<Vec<Block>, TmuxError> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        let until = ride.map(|within| tokio::time::Instant::now() + within);
        let wait = self.send(lines(commands)?, commands.len(), false, until)?;
        self.wait(vec![wait], ride.unwrap_or_default() + timeout)
            .await
    }

    /// Sends the commands as one line, `a ; b ; c`, as a tmux command line runs them: queued
    /// together, so nothing of another client's runs between them (a pane that dies at once
    /// still gets the options set after it is made), and stopping at the first that fails.
    /// Their blocks, up to and including that one.
    pub async fn run_list<S: AsRef<str>>(
        &self,
        commands: &[&[S]],
        timeout: Duration,
    ) -> Result<Vec<Block>, TmuxError> {
        // An empty line would be taken as a request to detach.
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        let mut line = Vec::with_capacity(commands.len());
        for args in commands {
            line.push(command_line(args)?);
        }
        let wait = self.send(
            format!("{}\n", line.join(" ; ")),
            commands.len(),
            true,
            None,
        )?;
        self.wait(vec![wait], timeout).await
    }

    fn send(
        &self,
        line: String,
        commands: usize,
        list: bool,
        ride: Option<tokio::time::Instant>,
    ) -> Result<oneshot::Receiver<Vec<Block>>, TmuxError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Request {
                line,
                commands,
                list,
                ride,
                reply,
            })
            .map_err(|_| dead())?;
        Ok(rx)
    }

    /// The blocks of every line sent, in order; `timeout` is for the whole lot.
    async fn wait(
        &self,
        waits: Vec<oneshot::Receiver<Vec<Block>>>,
        timeout: Duration,
    ) -> Result<Vec<Block>, TmuxError> {
        let all = async {
            let mut blocks = Vec::with_capacity(waits.len());
            for rx in waits {
                blocks.extend(rx.await.map_err(|_| dead())?);
            }
            Ok(blocks)
        };
        match tokio::time::timeout(timeout, all).await {
            Ok(r) => r,
            Err(_) => {
                // Wedged: this connection is done for.
                self.alive.store(false, Ordering::SeqCst);
                Err(TmuxError::TimedOut { after: timeout })
            }
        }
    }
}

/// One command as quoted arguments, for a line; an argument with a newline cannot go on one.
fn command_line<S: AsRef<str>>(args: &[S]) -> Result<String, TmuxError> {
    let mut line = String::new();
    for a in args {
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&quote(a.as_ref()).ok_or_else(|| TmuxError::Failed {
            detail: "control mode: an argument has a newline".into(),
        })?);
    }
    Ok(line)
}

fn dead() -> TmuxError {
    TmuxError::Failed {
        detail: "control mode connection closed".into(),
    }
}

/// What a line of control-mode output completes.
#[derive(Debug, PartialEq, Eq)]
enum Completed {
    /// A block of a command this client sent, complete.
    Block(Block),
    /// The client is told to go (`%exit`).
    Exit,
    /// A notification that matters to the poller.
    Change(Change),
    /// A pane wrote (`%output %N …`, `%extended-output %N …`).
    Output(u32),
    /// tmux paused a pane's output for this client (`%pause %N`): it wrote.
    Paused(u32),
    /// The client is attached to session `$id` named so (`%session-changed $id name`).
    Attached(String, String),
    /// Session `$id` was renamed (`%session-renamed $id name`).
    SessionRenamed(String, String),
}

/// The notifications that say the panes may have changed without a pane dying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Shape,
    Names,
}

/// What a notification line means to the poller, if anything. Windows in sessions this
/// client is not attached to come as `%unlinked-window-*`; splits and closed panes in other
/// sessions are not reported at all (the poller's other sources cover them).
fn notice(text: &[u8]) -> Option<Change> {
    let tag = text.split(|&b| b == b' ').next()?;
    match tag {
        b"%window-add"
        | b"%window-close"
        | b"%unlinked-window-add"
        | b"%unlinked-window-close"
        | b"%sessions-changed"
        | b"%layout-change" => Some(Change::Shape),
        b"%window-renamed" | b"%unlinked-window-renamed" | b"%session-renamed" => {
            Some(Change::Names)
        }
        _ => None,
    }
}

/// The pure, byte-level reader of control-mode output, one line at a time.
#[derive(Debug, Default)]
struct Parser {
    /// Inside a block: its content so far, whether this client sent the command, and the
    /// command number (only `%end`/`%error` with the same number closes the block, so a
    /// captured line that happens to start with "%end" does not).
    open: Option<(Vec<u8>, bool, Vec<u8>)>,
}

impl Parser {
    fn line(&mut self, line: &[u8]) -> Option<Completed> {
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let fields =
            |t: &[u8]| -> Vec<Vec<u8>> { t.split(|&b| b == b' ').map(<[u8]>::to_vec).collect() };
        if let Some((content, ours, number)) = self.open.as_mut() {
            let f = fields(text);
            let tag = f.first().map(Vec::as_slice);
            let closes = matches!(tag, Some(b"%end") | Some(b"%error")) && f.get(2) == Some(number);
            if !closes {
                content.extend_from_slice(line);
                return None;
            }
            let (content, ours) = (std::mem::take(content), *ours);
            self.open = None;
            if !ours {
                return None;
            }
            return Some(Completed::Block(if tag == Some(b"%error") {
                Err(ErrorBlock(
                    String::from_utf8_lossy(&content).trim().to_string(),
                ))
            } else {
                Ok(content)
            }));
        }
        // The most frequent line by far, while panes' output is on: looked at first.
        let pane = |rest: &[u8]| -> Option<u32> {
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
        };
        if let Some(rest) = text
            .strip_prefix(b"%extended-output %")
            .or_else(|| text.strip_prefix(b"%output %"))
        {
            return pane(rest).map(Completed::Output);
        }
        if let Some(rest) = text.strip_prefix(b"%pause %") {
            return pane(rest).map(Completed::Paused);
        }
        // `$id name`: the name may hold spaces.
        let session = |rest: &[u8]| -> Option<(String, String)> {
            let rest = String::from_utf8_lossy(rest);
            let (id, name) = rest.split_once(' ')?;
            id.starts_with('$')
                .then(|| (id.to_string(), name.to_string()))
        };
        if let Some(rest) = text.strip_prefix(b"%session-changed ") {
            return session(rest).map(|(i, n)| Completed::Attached(i, n));
        }
        if let Some(rest) = text.strip_prefix(b"%session-renamed ") {
            return session(rest).map(|(i, n)| Completed::SessionRenamed(i, n));
        }
        if text.starts_with(b"%begin ") {
            // `%begin <time> <number> <flags>`: flags 1 means this client sent it.
            let f = fields(text);
            let ours = f.get(3).map(Vec::as_slice) == Some(b"1");
            self.open = Some((Vec::new(), ours, f.get(2).cloned().unwrap_or_default()));
        } else if text.starts_with(b"%exit") {
            return Some(Completed::Exit);
        } else if let Some(n) = notice(text) {
            return Some(Completed::Change(n));
        }
        None
    }
}

/// One line per command.
fn lines<S: AsRef<str>>(commands: &[&[S]]) -> Result<String, TmuxError> {
    let mut lines = String::new();
    for args in commands {
        lines.push_str(&command_line(args)?);
        lines.push('\n');
    }
    Ok(lines)
}

/// Writes `reqs` in one write and queues them for their blocks, in order; false if the
/// client is gone.
async fn send(
    stdin: &mut (impl tokio::io::AsyncWrite + Unpin),
    reqs: Vec<Request>,
    waiting: &mut VecDeque<Pending>,
    notices: &Notices,
) -> bool {
    let out: String = reqs.iter().map(|r| r.line.as_str()).collect();
    if stdin.write_all(out.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
        return false;
    }
    notices.writes.fetch_add(1, Ordering::Relaxed);
    for r in reqs {
        waiting.push_back(Pending {
            commands: r.commands,
            list: r.list,
            blocks: Vec::with_capacity(r.commands),
            reply: r.reply,
        });
    }
    true
}

/// Until `at`; never, for `None` (the branch is off then).
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Owns the client: writes requests, matches blocks to them in order.
async fn pump(
    mut stdin: impl tokio::io::AsyncWrite + Unpin,
    mut reader: impl tokio::io::AsyncBufRead + Unpin,
    mut rx: mpsc::UnboundedReceiver<Request>,
    alive: Arc<AtomicBool>,
    notices: Arc<Notices>,
    serial: u64,
) {
    let mut waiting: VecDeque<Pending> = VecDeque::new();
    let mut line = Vec::new();
    // Inside a block of ours: its content so far.
    let mut parser = Parser::default();
    // Requests that ride with the next write (see `Request::ride`), in order.
    let mut riders: Vec<Request> = Vec::new();
    loop {
        let due = riders.iter().filter_map(|r| r.ride).min();
        tokio::select! {
            req = rx.recv() => {
                let Some(req) = req else { break };
                // Every request queued now goes in one write: tmux reads it at one wake-up
                // and runs its lines in one pass, and each wake-up of a server costs it a
                // walk over all its panes (4 ms at 1000 panes, against 0.1 ms for a short
                // command in a batch). Riders go with the first that does not ride.
                let mut reqs = vec![req];
                while let Ok(more) = rx.try_recv() {
                    reqs.push(more);
                }
                let (ride, now): (Vec<Request>, Vec<Request>) =
                    reqs.into_iter().partition(|r| r.ride.is_some());
                riders.extend(ride);
                if now.is_empty() {
                    continue;
                }
                let reqs: Vec<Request> = now.into_iter().chain(riders.drain(..)).collect();
                if !send(&mut stdin, reqs, &mut waiting, &notices).await {
                    break;
                }
            }
            () = sleep_until(due), if due.is_some() => {
                if !send(&mut stdin, std::mem::take(&mut riders), &mut waiting, &notices).await {
                    break;
                }
            }
            n = reader.read_until(b'\n', &mut line) => {
                match n {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let event = parser.line(&line);
                line.clear();
                match event {
                    Some(Completed::Block(block)) => {
                        if let Some(front) = waiting.front_mut() {
                            let failed = block.is_err();
                            front.blocks.push(block);
                            if (failed && front.list) || front.blocks.len() >= front.commands {
                                if let Some(done) = waiting.pop_front() {
                                    let _ = done.reply.send(done.blocks);
                                }
                            }
                        }
                    }
                    Some(Completed::Exit) => break,
                    Some(Completed::Change(n)) => notices.heard(n),
                    Some(Completed::Output(pane)) => notices.wrote(serial, pane, false),
                    Some(Completed::Paused(pane)) => notices.wrote(serial, pane, true),
                    // Moved to another session (its own was destroyed): what was turned
                    // on and off was about the other one's panes.
                    Some(Completed::Attached(id, name)) => {
                        notices.attached(serial, &id, &name);
                        notices.heard(Change::Shape);
                    }
                    Some(Completed::SessionRenamed(id, name)) => {
                        notices.renamed(serial, &id, &name);
                        notices.heard(Change::Names);
                    }
                    None => {}
                }
            }
        }
    }
    alive.store(false, Ordering::SeqCst);
    // Pending requests see their sender dropped: "connection closed".
}

#[cfg(test)]
mod tests;
