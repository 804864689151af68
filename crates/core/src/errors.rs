//! Typed failures of the outside world, as the core sees them.

use std::path::PathBuf;
use std::time::Duration;

/// Why a tmux call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TmuxError {
    /// The `tmux` program is not on PATH.
    NotInstalled,
    /// Nothing listens on the socket.
    NoServer { socket: PathBuf },
    /// The target pane does not exist (any more).
    NoSuchPane { detail: String },
    /// tmux did not answer in time; the child was killed.
    TimedOut { after: Duration },
    /// tmux answered with an error.
    Failed { detail: String },
    /// ssh could not reach the host (or was not let in): ssh's own last words.
    Unreachable { host: String, detail: String },
}

impl std::fmt::Display for TmuxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TmuxError::NotInstalled => write!(f, "tmux is not installed (not found on PATH)"),
            TmuxError::NoServer { socket } => {
                write!(f, "no tmux server running on {}", socket.display())
            }
            TmuxError::NoSuchPane { detail } => write!(f, "pane gone: {detail}"),
            TmuxError::TimedOut { after } => {
                write!(
                    f,
                    "tmux not responding (no answer in {} ms)",
                    after.as_millis()
                )
            }
            TmuxError::Failed { detail } => write!(f, "tmux: {detail}"),
            TmuxError::Unreachable { host, detail } => {
                write!(f, "{host}: unreachable ({detail})")
            }
        }
    }
}

impl std::error::Error for TmuxError {}
