//! The log file: `$XDG_STATE_HOME/agentwatch/agentwatch.log` (tracing). Nothing is ever
//! written to the terminal while the dashboard runs.

use std::path::PathBuf;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// Starts logging to the log file; `AGENTWATCH_LOG` sets the filter (default `info`).
/// Returns the log path, or `None` when it could not be opened (agentwatch runs anyway).
pub fn init() -> Option<PathBuf> {
    let dir = crate::adapters::store::state_dir()?;
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join("agentwatch.log");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ok()?;
    let filter =
        EnvFilter::try_from_env("AGENTWATCH_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(file))
        .try_init()
        .ok()?;
    Some(path)
}
