//! A persistent tmux control-mode connection (`tmux -C attach -f no-output,ignore-size`):
//! one client process for the life of the connection, commands written as lines, replies
//! read as `%begin … %end|%error` blocks, byte for byte (output may be non-UTF-8). Steady
//! polling over it starts no process at all. Only commands sent by this client (flags 1) are
//! matched, in order; everything else (notifications) is ignored.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::client::TmuxError;

/// One block's content, or the error text of an `%error` block.
pub type Block = Result<Vec<u8>, String>;

struct Request {
    line: String,
    reply: oneshot::Sender<Block>,
}

/// A live control-mode connection. Dropping it ends the client.
pub struct Control {
    tx: mpsc::UnboundedSender<Request>,
    alive: Arc<AtomicBool>,
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
    pub async fn connect(
        program: &std::ffi::OsStr,
        socket: &Path,
        session: &str,
        envs: &[(std::ffi::OsString, std::ffi::OsString)],
        timeout: Duration,
    ) -> Result<Control, TmuxError> {
        let mut child = tokio::process::Command::new(program)
            .arg("-u")
            .arg("-S")
            .arg(socket)
            .args(["-C", "attach", "-t", session, "-f", "no-output,ignore-size"])
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .envs(envs.iter().map(|(k, v)| (k, v)))
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
                if line.starts_with(b"%session-changed") {
                    return Some(());
                }
                if line.starts_with(b"%exit") {
                    return None;
                }
            }
        };
        match tokio::time::timeout(timeout, ready).await {
            Ok(Some(())) => {}
            Ok(None) => {
                return Err(TmuxError::Failed {
                    detail: "control mode: the client exited while attaching".into(),
                })
            }
            Err(_) => return Err(TmuxError::TimedOut { after: timeout }),
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let alive = Arc::new(AtomicBool::new(true));
        tokio::spawn(pump(child, stdin, reader, rx, Arc::clone(&alive)));
        Ok(Control { tx, alive })
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// Sends one command line (one command: one block back) and waits for its block.
    pub async fn run(&self, args: &[&str], timeout: Duration) -> Result<Block, TmuxError> {
        let mut line = String::new();
        for a in args {
            let q = quote(a).ok_or_else(|| TmuxError::Failed {
                detail: "control mode: an argument has a newline".into(),
            })?;
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&q);
        }
        line.push('\n');
        let (reply, rx) = oneshot::channel();
        self.tx.send(Request { line, reply }).map_err(|_| dead())?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(block)) => Ok(block),
            Ok(Err(_)) => Err(dead()),
            Err(_) => {
                // Wedged: this connection is done for.
                self.alive.store(false, Ordering::SeqCst);
                Err(TmuxError::TimedOut { after: timeout })
            }
        }
    }
}

fn dead() -> TmuxError {
    TmuxError::Failed {
        detail: "control mode connection closed".into(),
    }
}

/// Owns the client: writes requests, matches blocks to them in order.
async fn pump(
    mut child: tokio::process::Child,
    mut stdin: tokio::process::ChildStdin,
    mut reader: BufReader<tokio::process::ChildStdout>,
    mut rx: mpsc::UnboundedReceiver<Request>,
    alive: Arc<AtomicBool>,
) {
    let mut waiting: VecDeque<oneshot::Sender<Block>> = VecDeque::new();
    let mut line = Vec::new();
    // Inside a block of ours: its content so far.
    let mut block: Option<Vec<u8>> = None;
    let mut ours = false;
    // The command number of the open block: only `%end`/`%error` with it closes it (a
    // captured line that happens to start with "%end" does not).
    let mut number: Vec<u8> = Vec::new();
    loop {
        tokio::select! {
            req = rx.recv() => {
                let Some(req) = req else { break };
                if stdin.write_all(req.line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
                waiting.push_back(req.reply);
            }
            n = reader.read_until(b'\n', &mut line) => {
                match n {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let text = line.strip_suffix(b"\n").unwrap_or(&line);
                if let Some(content) = block.as_mut() {
                    let closes = |tag: &[u8]| {
                        text.starts_with(tag)
                            && text.split(|&b| b == b' ').nth(2) == Some(number.as_slice())
                    };
                    let end = closes(b"%end ");
                    let error = closes(b"%error ");
                    if end || error {
                        let content = std::mem::take(content);
                        block = None;
                        if ours {
                            if let Some(reply) = waiting.pop_front() {
                                let _ = reply.send(if error {
                                    Err(String::from_utf8_lossy(&content).trim().to_string())
                                } else {
                                    Ok(content)
                                });
                            }
                        }
                    } else {
                        content.extend_from_slice(&line);
                    }
                } else if text.starts_with(b"%begin ") {
                    // `%begin <time> <number> <flags>`: flags 1 means this client sent it.
                    let f: Vec<&[u8]> = text.split(|&b| b == b' ').collect();
                    ours = f.get(3) == Some(&&b"1"[..]);
                    number = f.get(2).map(|n| n.to_vec()).unwrap_or_default();
                    block = Some(Vec::new());
                } else if text.starts_with(b"%exit") {
                    break;
                }
                line.clear();
            }
        }
    }
    alive.store(false, Ordering::SeqCst);
    let _ = child.start_kill();
    // Pending requests see their sender dropped: "connection closed".
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_quoted_for_tmux() {
        assert_eq!(quote("a b").as_deref(), Some("'a b'"));
        assert_eq!(quote("it's").as_deref(), Some(r"'it'\''s'"));
        assert_eq!(
            quote("\u{1e}#{pane_id};").as_deref(),
            Some("'\u{1e}#{pane_id};'")
        );
        assert_eq!(quote("a\nb"), None);
    }
}
