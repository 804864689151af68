//! The log file: `$XDG_STATE_HOME/agentwatch/agentwatch.log` (tracing). Nothing is ever
//! written to the terminal while the dashboard runs; the daemon in the foreground also
//! logs to stderr.

use std::path::PathBuf;
use std::sync::Mutex;

use tracing_subscriber::fmt::writer::MakeWriterExt;
use tracing_subscriber::EnvFilter;

/// Starts logging to the log file; `AGENTWATCH_LOG` sets the filter (default `info`).
/// Returns the log path, or `None` when it could not be opened (agentwatch runs anyway).
pub fn init() -> Option<PathBuf> {
    init_with(false)
}

/// Like [`init`]; with `stderr`, every line goes to stderr as well (the daemon in the
/// foreground). Its first line names the process: a daemon and dashboards share the file.
pub fn init_with(stderr: bool) -> Option<PathBuf> {
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
    let pid = std::process::id();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_target(false);
    let file = Mutex::new(file);
    let installed = if stderr {
        builder
            .with_writer(file.and(std::io::stderr))
            .try_init()
            .is_ok()
    } else {
        builder.with_writer(file).try_init().is_ok()
    };
    if !installed {
        return None;
    }
    tracing::info!("agentwatch pid {pid} logging");
    Some(path)
}
