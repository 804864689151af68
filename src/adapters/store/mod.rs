//! agentwatch's own files: the journal, crash records, the roster of lost agents, locks.

/// Crash records on disk: saved, listed and pruned.
pub mod crash_records;
/// The lifecycle journal (JSONL in the XDG state dir).
pub mod journal;
/// Locks the kernel releases: who supervises a server, whether a daemon runs.
pub mod lock;
/// The roster of agents lost with a tmux server, on disk.
pub mod roster;

use std::path::PathBuf;

/// The state directory (`~/.local/state/agentwatch`), for the log and the journal.
pub fn state_dir() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "agentwatch")?;
    Some(
        dirs.state_dir()
            .map(|d| d.to_path_buf())
            .unwrap_or_else(|| dirs.data_local_dir().to_path_buf()),
    )
}
