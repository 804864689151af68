//! The log file: `$XDG_STATE_HOME/agentwatch/agentwatch.log` (tracing). Nothing is ever
//! written to the terminal while the dashboard runs; the daemon in the foreground also
//! logs to stderr. A log that cannot be written (a full disk, a terminal gone from under
//! stderr) loses its lines and nothing else: no error of its own is raised or printed, so
//! that no failure to log can end in a panic that logs again.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};

use tracing_subscriber::fmt::writer::MakeWriterExt;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

/// A handle of the log file of its own, for the panic hook: it writes there directly, never
/// through tracing (whose writer the panicking thread may hold).
static PANIC_LOG: OnceLock<Mutex<File>> = OnceLock::new();

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
    if let Ok(own) = file.try_clone() {
        let _ = PANIC_LOG.set(Mutex::new(own));
    }
    let filter =
        EnvFilter::try_from_env("AGENTWATCH_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let pid = std::process::id();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_target(false);
    let file = Quiet(Mutex::new(file));
    let installed = if stderr {
        builder
            .with_writer(file.and(Quiet(Mutex::new(std::io::stderr()))))
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

/// Writes `text` to the log file from the panic hook: straight to the file, never blocking
/// on a lock another frame of the same thread may hold, every error ignored.
pub fn panic_line(text: &str) {
    let Some(log) = PANIC_LOG.get() else {
        return;
    };
    if let Ok(mut f) = log.try_lock() {
        let _ = writeln!(f, "panic (pid {}): {text}", std::process::id());
    }
}

/// A writer whose failures are swallowed: tracing-subscriber reports a failed write on
/// stderr, which panics when stderr is a terminal that is gone.
struct Quiet<W: Write>(Mutex<W>);

struct QuietGuard<'a, W: Write>(MutexGuard<'a, W>);

impl<'a, W: Write + 'a> MakeWriter<'a> for Quiet<W> {
    type Writer = QuietGuard<'a, W>;

    fn make_writer(&'a self) -> Self::Writer {
        QuietGuard(
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

impl<W: Write> Write for QuietGuard<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = self.0.write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = self.0.flush();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Broken;

    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from_raw_os_error(libc::EIO))
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Err(std::io::Error::from_raw_os_error(libc::EIO))
        }
    }

    #[test]
    fn a_log_that_cannot_be_written_reports_nothing_to_tracing() {
        let quiet = Quiet(Mutex::new(Broken));
        let mut w = quiet.make_writer();
        assert_eq!(w.write(b"line\n").unwrap(), 5);
        assert!(w.flush().is_ok());
    }
}
