//! How much the processes writing to a pane's terminal wrote (`/proc/PID/io`'s `wchar`):
//! an agent at work is sampled by this count, its output not copied over control mode at
//! all (see `poll::hear`). Reads, decides nothing.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// At most this many processes are looked at below one pane (a pane running a build may
/// have hundreds; the agent and its wrapper are near the top).
const LIMIT: usize = 64;
/// At most this many of a pane's writers are counted (each an open file while its pane is
/// sampled): the agent and its launcher come first.
pub(crate) const COUNTED: usize = 8;

/// The processes of a pane that write to its terminal: its own process, and those below it
/// whose standard output is the pane's terminal (an agent under a wrapper or a
/// shell, codex's binary under its node launcher). A tool an agent runs into a pipe, or a
/// server writing a log file, is not one of them: what those write would say nothing of
/// the agent. Empty where `/proc` does not tell (another user's processes, no terminal).
/// `below`: the processes below it as the poll last walked them (its foreground tree), if
/// known; else they are walked here.
pub(crate) fn terminal_writers(pane_pid: u32, below: Option<&[u32]>) -> Vec<u32> {
    let Some(tty) = terminal_of(pane_pid) else {
        return Vec::new();
    };
    if let Some(below) = below {
        return std::iter::once(pane_pid)
            .chain(below.iter().copied().take(LIMIT - 1))
            .filter(|&pid| writes_to(pid, &tty))
            .collect();
    }
    let mut writers = Vec::new();
    let mut todo = vec![pane_pid];
    let mut seen = 0;
    while let Some(pid) = todo.pop() {
        seen += 1;
        if seen > LIMIT {
            break;
        }
        if writes_to(pid, &tty) {
            writers.push(pid);
        }
        todo.extend(children(pid));
    }
    writers
}

/// What some processes wrote so far: bytes (`wchar`) and write calls (`syscw`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Written {
    pub(crate) bytes: u64,
    pub(crate) calls: u64,
}

/// The `/proc/PID/io` of some processes, opened once and read again each slice (a read at
/// offset 0 makes the kernel say it anew): no path is looked up again, nothing allocated.
/// Each says what it wrote since its own last read, so a process that ends or joins changes
/// nothing of the others' sums. A process that ended reads as nothing; its pid reused since
/// is not read (the file is the old process's).
#[derive(Debug)]
pub(crate) struct Counter {
    files: Vec<Arc<CountFile>>,
}

/// One process's count: its file, and what it had written when last read.
#[derive(Debug)]
struct CountFile {
    pid: u32,
    file: std::fs::File,
    last: Mutex<Option<Written>>,
}

impl CountFile {
    fn open(pid: u32) -> Option<Arc<CountFile>> {
        let file = std::fs::File::open(format!("/proc/{pid}/io")).ok()?;
        let f = CountFile {
            pid,
            file,
            last: Mutex::new(None),
        };
        // Read once: what it writes from now on is counted.
        f.since()?;
        Some(Arc::new(f))
    }

    /// Its process is still there (its pid may since be another's: that one is opened
    /// anew). Nothing is counted.
    fn alive(&self) -> bool {
        use std::os::unix::fs::FileExt;
        self.file.read_at(&mut [0u8; 512], 0).is_ok()
    }

    /// What it wrote since its last read; `None` when it is gone.
    fn since(&self) -> Option<Written> {
        use std::os::unix::fs::FileExt;
        // `/proc/PID/io` is seven lines of at most 30 bytes.
        let mut buf = [0u8; 512];
        let n = self.file.read_at(&mut buf, 0).ok()?;
        let now = parse_io(std::str::from_utf8(&buf[..n]).ok()?)?;
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let before = last.replace(now).unwrap_or(now);
        Some(Written {
            bytes: now.bytes.saturating_sub(before.bytes),
            calls: now.calls.saturating_sub(before.calls),
        })
    }
}

impl Counter {
    /// The counts of `pids`, those already counted by `old` kept as they are (their next read
    /// still says what they wrote since their last), the others from now on; `None` when
    /// none of them can be read.
    pub(crate) fn reopen(old: Option<&Counter>, pids: &[u32]) -> Option<Counter> {
        let files: Vec<Arc<CountFile>> = pids
            .iter()
            .take(COUNTED)
            .filter_map(|&pid| {
                old.and_then(|o| o.files.iter().find(|f| f.pid == pid && f.alive()).cloned())
                    .or_else(|| CountFile::open(pid))
            })
            .collect();
        (!files.is_empty()).then_some(Counter { files })
    }

    /// How many processes it counts (an open file each).
    pub(crate) fn len(&self) -> usize {
        self.files.len()
    }

    /// What they wrote since their last read, all of them together (to any file: the
    /// terminal, and an idle claude's 8-byte eventfd writes); `None` when none of them is
    /// there any more.
    pub(crate) fn since(&self) -> Option<Written> {
        self.files
            .iter()
            .filter_map(|f| f.since())
            .fold(None, |sum: Option<Written>, w| {
                let s = sum.unwrap_or_default();
                Some(Written {
                    bytes: s.bytes + w.bytes,
                    calls: s.calls + w.calls,
                })
            })
    }
}

/// The `wchar:` and `syscw:` lines of a `/proc/PID/io`.
fn parse_io(io: &str) -> Option<Written> {
    let field = |name: &str| {
        io.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|n| n.trim().parse().ok())
    };
    Some(Written {
        bytes: field("wchar:")?,
        calls: field("syscw:")?,
    })
}

/// The terminal a pane's own process was started on (tmux gives it the pane's terminal as
/// its standard input, output and error).
fn terminal_of(pid: u32) -> Option<PathBuf> {
    (0..3).find_map(|fd| {
        std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
            .ok()
            .filter(|p| p.starts_with("/dev/pts") || p.starts_with("/dev/tty"))
    })
}

/// Its standard output is `tty` (its standard error alone is not enough: a tool an agent
/// runs into a pipe often keeps the terminal as its standard error, and says nothing there).
fn writes_to(pid: u32, tty: &Path) -> bool {
    std::fs::read_link(format!("/proc/{pid}/fd/1")).is_ok_and(|p| p.as_path() == tty)
}

/// The children of every thread of `pid` (a process started by a worker thread is listed
/// under that thread only).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bytes_and_calls_written_are_read_from_their_lines() {
        let io = "rchar: 1200\nwchar: 345\nsyscr: 9\nsyscw: 7\nread_bytes: 0\n";
        assert_eq!(
            parse_io(io),
            Some(Written {
                bytes: 345,
                calls: 7
            })
        );
        assert_eq!(parse_io("rchar: 1\nwchar: 2\n"), None);
    }

    #[test]
    fn a_process_on_a_pipe_is_no_terminal_writer_and_its_count_still_reads() {
        // This test's process: its output is not a terminal under `cargo test` in CI, and
        // where it is, it is its own; either way its count can be read.
        let me = std::process::id();
        let counter = Counter::reopen(None, &[me]).unwrap();
        let path = std::env::temp_dir().join(format!("aw-writes-{me}"));
        std::fs::write(&path, [0u8; 4096]).unwrap();
        let since = counter.since().unwrap();
        assert!(
            since.bytes >= 4096 && since.calls >= 1,
            "read anew from the same file: {since:?}"
        );
        // Kept when opened again with another process beside it: what it wrote since its
        // last read is still counted (opened anew, it would be counted from then on).
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::fs::write(&path, [0u8; 100]).unwrap();
        let again = Counter::reopen(Some(&counter), &[me, child.id()]).unwrap();
        assert_eq!(again.files.len(), 2);
        let since = again.since().unwrap();
        assert!(since.bytes >= 100, "{since:?}");
        let _ = std::fs::remove_file(&path);
        assert!(
            Counter::reopen(None, &[u32::MAX]).is_none(),
            "no such process"
        );
        assert!(!writes_to(child.id(), Path::new("/dev/pts/0")));
        let _ = child.kill();
        let _ = child.wait();
    }
}
