//! Typed failures of the outside world, as the core sees them.

use std::path::PathBuf;
use std::time::Duration;

/// Why a tmux call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TmuxError {
    /// The `tmux` program is not on PATH.
    #[error("tmux is not installed (not found on PATH)")]
    NotInstalled,
    /// Nothing listens on the socket.
    #[error("no tmux server running on {}", socket.display())]
    NoServer { socket: PathBuf },
    /// The target pane does not exist (any more).
    #[error("pane gone: {detail}")]
    NoSuchPane { detail: String },
    /// tmux did not answer in time; the child was killed.
    #[error("tmux not responding (no answer in {} ms)", after.as_millis())]
    TimedOut { after: Duration },
    /// tmux answered with an error.
    #[error("tmux: {detail}")]
    Failed { detail: String },
    /// ssh could not reach the host (or was not let in): ssh's own last words.
    #[error("{host}: unreachable ({detail})")]
    Unreachable { host: String, detail: String },
}

/// Why one of agentwatch's own files (the journal, the roster, a crash record) could not be
/// written.
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
#[error("{what} {} not written: {reason}", path.display())]
pub struct StoreError {
    /// `journal`, `roster`, `crash record`.
    pub what: &'static str,
    pub path: PathBuf,
    /// What the system said.
    pub reason: String,
}

/// Why a pane's whole output could not be shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    #[error(transparent)]
    Tmux(#[from] TmuxError),
    /// Parsing it stopped (a bug): what the runtime said.
    #[error("its output could not be parsed: {0}")]
    Parse(String),
}

/// Why `g` could not take the user to a pane.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JumpError {
    #[error(transparent)]
    Tmux(#[from] TmuxError),
    #[error(transparent)]
    NoViewer(#[from] crate::viewer::NoViewer),
}

/// Why a lost agent's window could not be opened again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecreateError {
    #[error("unknown agent kind {0}")]
    UnknownKind(String),
    #[error("no resume command for {0}")]
    NoResume(String),
    #[error("no session id: not recreated (never a fresh start)")]
    NoSessionId,
    /// The session runs elsewhere (a pane of another server, or a process its agent
    /// registered): recreating it would run it twice.
    #[error("session {id} is also open {place}: not recreated")]
    OpenElsewhere { id: String, place: String },
    #[error("directory {0} no longer exists")]
    DirGone(String),
    /// Recreated at a pace, this one waits: why.
    #[error("waits: {0}")]
    Waits(String),
    #[error(transparent)]
    Tmux(#[from] TmuxError),
    /// tmux opened no pane that could be told apart (it printed no pane id).
    #[error("tmux said nothing of the new pane: {0}")]
    NoPane(String),
}
