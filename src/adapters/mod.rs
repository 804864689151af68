//! The outside world, deciding nothing: each adapter carries out what the core asked for
//! and reports what it found.

/// Output with colour escapes as the core's styled lines.
pub mod ansi;
/// claude's own word on what it does: its per-process state files, watched with inotify.
pub mod claude_state;
/// Read-only lookups of an agent's session id in its own records (claude, codex, gemini).
pub mod discover;
/// Which processes ended, asked of the kernel once a tick (pidfds in one epoll set).
pub mod exits;
/// What is known of tmux's panes between polls, and what each poll asks.
pub mod mirror;
/// Announcing deaths: bell, desktop notification, hook.
pub mod notify;
/// The poller: asks tmux, then the panes' processes (`/proc` here, ssh on another host).
pub mod poll;
/// Facts about processes: `/proc`, foreground trees, another host's processes, clock skew.
pub(crate) mod procs;
/// Carrying out a relaunch: capture, crash record, respawn-pane (or typing at a prompt).
pub mod respawn;
/// Following the agents' own files for the tokens and context they spend.
pub mod spend;
/// agentwatch's own files: journal, crash records, roster of lost agents.
pub mod store;
/// tmux: the async client, control mode, the listing format.
pub mod tmux;
/// Webhooks: every announcement POSTed as JSON through curl, a burst as one POST.
pub mod webhook;
/// Finding programs on PATH.
pub mod which;

/// This machine's clock, epoch ms.
pub fn wall_ms() -> crate::core::time::Millis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as crate::core::time::Millis)
        .unwrap_or(0)
}

/// This machine's name (`gethostname`); empty if it cannot be read.
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    if rc == 0 {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        String::new()
    }
}
