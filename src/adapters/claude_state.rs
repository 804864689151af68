//! claude's own word on what each running claude does: its per-process file
//! `<claude dir>/sessions/<pid>.json` (`status` idle/busy, `updatedAt`, `procStart`). The
//! directory is watched with inotify, so a file is read only when it was written, and the
//! loop is woken then; where inotify cannot watch it (the directory is not there yet), the
//! watch is tried again at most every few seconds. Does I/O, decides nothing.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::core::attention::AgentFile;

/// How often a directory that could not be watched is tried again.
const RETRY: Duration = Duration::from_secs(5);
/// A file larger than this is not claude's small record.
const MAX_BYTES: u64 = 64 * 1024;

pub struct ClaudeStates {
    dir: PathBuf,
    inotify: Option<OwnedFd>,
    tried_at: Option<Instant>,
    /// When the records were last checked against the processes they name.
    checked_at: Option<Instant>,
    /// Every readable record, by pid.
    files: Arc<HashMap<u32, AgentFile>>,
    /// The fd was handed to the waker.
    pub(crate) waking: bool,
}

impl ClaudeStates {
    /// Watches `<claude dir>/sessions` (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub fn new(claude_dir: Option<PathBuf>) -> ClaudeStates {
        let dir = claude_dir
            .or_else(|| {
                std::env::var_os("CLAUDE_CONFIG_DIR")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().join(".claude")))
            .unwrap_or_default()
            .join("sessions");
        ClaudeStates {
            dir,
            inotify: None,
            tried_at: None,
            checked_at: None,
            files: Arc::new(HashMap::new()),
            waking: false,
        }
    }

    /// The inotify descriptor, readable when a record was written (once watching).
    pub fn fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.inotify.as_ref().map(|fd| fd.as_fd())
    }

    /// Every record as of now: the whole directory read when the watch begins, then only the
    /// files written since.
    pub fn current(&mut self, now: Instant) -> Arc<HashMap<u32, AgentFile>> {
        if self.inotify.is_none() {
            if self.tried_at.is_some_and(|t| now.duration_since(t) < RETRY) {
                return Arc::clone(&self.files);
            }
            self.tried_at = Some(now);
            self.inotify = watch(&self.dir);
            // Watching or not, the directory is read whole: without a watch, at this pace.
            self.files = Arc::new(read_all(&self.dir));
            self.checked_at = Some(now);
            return Arc::clone(&self.files);
        }
        let Some(changed) = self.inotify.as_ref().map(drain) else {
            return Arc::clone(&self.files);
        };
        match changed {
            Changes::Names(names) if names.is_empty() => {}
            Changes::Names(names) => {
                let files = Arc::make_mut(&mut self.files);
                for name in names {
                    let Some(pid) = pid_of(&name) else { continue };
                    match read_one(&self.dir.join(&name), pid) {
                        Some(f) => files.insert(pid, f),
                        None => files.remove(&pid),
                    };
                }
            }
            // The queue overflowed or the directory went: start again.
            Changes::Lost => {
                self.inotify = None;
                self.waking = false;
                self.tried_at = None;
                return self.current(now);
            }
        }
        // A claude killed by SIGKILL leaves its record behind: once its pid is another
        // process's, or nobody's, the record is dropped (checked at the retry pace).
        if self
            .checked_at
            .is_none_or(|t| now.duration_since(t) >= RETRY)
        {
            self.checked_at = Some(now);
            let alive = |pid: u32, f: &AgentFile| {
                let start = proc_start(pid);
                start.is_some() && (f.proc_start.is_none() || start == f.proc_start)
            };
            if self.files.iter().any(|(pid, f)| !alive(*pid, f)) {
                Arc::make_mut(&mut self.files).retain(|pid, f| alive(*pid, f));
            }
        }
        Arc::clone(&self.files)
    }
}

enum Changes {
    Names(Vec<String>),
    Lost,
}

fn watch(dir: &Path) -> Option<OwnedFd> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: inotify_init1 takes only flags; a valid fd it returns is ours to own.
    let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: fd was just returned by the kernel and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mask = libc::IN_CLOSE_WRITE
        | libc::IN_MOVED_TO
        | libc::IN_DELETE
        | libc::IN_MOVED_FROM
        | libc::IN_DELETE_SELF
        | libc::IN_MOVE_SELF
        | libc::IN_ONLYDIR;
    // SAFETY: fd is a live inotify descriptor and path a NUL-terminated string.
    let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), mask) };
    (wd >= 0).then_some(fd)
}

/// The names written, moved or removed since the last drain.
fn drain(fd: &OwnedFd) -> Changes {
    let mut names = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        // SAFETY: buf is a writable buffer of the length given.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        let mut at = 0usize;
        let n = n as usize;
        let head = std::mem::size_of::<libc::inotify_event>();
        while at + head <= n {
            // SAFETY: the kernel wrote whole events; read_unaligned copes with the alignment.
            let ev: libc::inotify_event =
                unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
            let len = ev.len as usize;
            let gone =
                libc::IN_Q_OVERFLOW | libc::IN_IGNORED | libc::IN_DELETE_SELF | libc::IN_MOVE_SELF;
            if ev.mask & gone != 0 {
                return Changes::Lost;
            }
            let name = &buf[(at + head).min(n)..(at + head + len).min(n)];
            let name = name.split(|&b| b == 0).next().unwrap_or_default();
            if !name.is_empty() {
                names.push(String::from_utf8_lossy(name).into_owned());
            }
            at += head + len;
        }
    }
    names.sort();
    names.dedup();
    Changes::Names(names)
}

fn pid_of(name: &str) -> Option<u32> {
    name.strip_suffix(".json")?.parse().ok()
}

fn read_all(dir: &Path) -> HashMap<u32, AgentFile> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return HashMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid = pid_of(e.file_name().to_str()?)?;
            Some((pid, read_one(&e.path(), pid)?))
        })
        .collect()
}

/// One record, if it is readable and about the process now under its pid.
fn read_one(path: &Path, pid: u32) -> Option<AgentFile> {
    use std::io::Read;
    let mut text = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_BYTES)
        .read_to_end(&mut text)
        .ok()?;
    let file = parse(&text)?;
    // A record left by a process that ended, or by an older one under a reused pid, is not
    // this process's word.
    let start = proc_start(pid)?;
    if file.proc_start.as_deref().is_some_and(|s| s != start) {
        return None;
    }
    Some(file)
}

/// The fields agentwatch reads from one record.
pub fn parse(text: &[u8]) -> Option<AgentFile> {
    let v: Value = serde_json::from_slice(text).ok()?;
    let status = v.get("status")?.as_str()?.to_string();
    Some(AgentFile {
        status,
        waiting_for: v
            .get("waitingFor")
            .and_then(Value::as_str)
            .map(str::to_string),
        updated_at: v.get("updatedAt").and_then(Value::as_u64),
        proc_start: match v.get("procStart") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        },
        session_id: v
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// Field 22 of `/proc/<pid>/stat` (the process start time in clock ticks since boot), as
/// claude writes it in `procStart`: read by the poller's own parser of that file.
pub(crate) fn proc_start(pid: u32) -> Option<String> {
    crate::adapters::procs::local::start_ticks(pid).map(|t| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_read_when_written_and_forgotten_when_removed_or_not_this_process() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        std::fs::create_dir(&sessions).unwrap();
        let me = std::process::id();
        let start = proc_start(me).unwrap();
        let body = |status: &str, start: &str| {
            format!(
                r#"{{"pid":{me},"sessionId":"x","status":"{status}","updatedAt":1796000000000,"procStart":"{start}"}}"#
            )
        };
        std::fs::write(sessions.join(format!("{me}.json")), body("idle", &start)).unwrap();
        let mut s = ClaudeStates::new(Some(home.path().to_path_buf()));
        let t0 = Instant::now();
        let files = s.current(t0);
        assert!(s.fd().is_some(), "watching");
        assert_eq!(files.get(&me).map(|f| f.status.as_str()), Some("idle"));
        // A write's close is told when the last copy of its descriptor closes: a child
        // another test thread forked meanwhile holds one until its exec. So each change is
        // waited for a little.
        let mut says = |want: Option<&str>| {
            (0..200).any(|_| {
                s.current(t0).get(&me).map(|f| f.status.as_str()) == want || {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    false
                }
            })
        };
        // Written again: read again, without a stat of anything else.
        std::fs::write(sessions.join(format!("{me}.json")), body("busy", &start)).unwrap();
        assert!(says(Some("busy")));
        // Another process's record under this pid (its start time differs): not this one's.
        std::fs::write(sessions.join(format!("{me}.json")), body("idle", "1")).unwrap();
        assert!(says(None));
        std::fs::write(sessions.join(format!("{me}.json")), body("idle", &start)).unwrap();
        assert!(says(Some("idle")));
        std::fs::remove_file(sessions.join(format!("{me}.json"))).unwrap();
        assert!(says(None));
        // Junk never panics.
        std::fs::write(sessions.join("12.json"), b"{\"status\": 3").unwrap();
        std::fs::write(sessions.join("notes.txt"), b"x").unwrap();
        assert!(s.current(t0).is_empty());
    }

    #[test]
    fn a_record_left_by_a_killed_claude_is_dropped_once_its_process_is_gone() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        std::fs::create_dir(&sessions).unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        let start = proc_start(pid).unwrap();
        std::fs::write(
            sessions.join(format!("{pid}.json")),
            format!(r#"{{"status":"busy","procStart":"{start}"}}"#),
        )
        .unwrap();
        let mut s = ClaudeStates::new(Some(home.path().to_path_buf()));
        let t0 = Instant::now();
        assert!(s.current(t0).contains_key(&pid));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            s.current(t0 + Duration::from_secs(1)).contains_key(&pid),
            "not checked yet"
        );
        assert!(!s.current(t0 + RETRY).contains_key(&pid));
    }

    #[test]
    fn a_directory_made_later_is_watched_once_it_is_there() {
        let home = tempfile::tempdir().unwrap();
        let mut s = ClaudeStates::new(Some(home.path().to_path_buf()));
        let t0 = Instant::now();
        assert!(s.current(t0).is_empty());
        assert!(s.fd().is_none());
        std::fs::create_dir(home.path().join("sessions")).unwrap();
        let me = std::process::id();
        std::fs::write(
            home.path().join(format!("sessions/{me}.json")),
            r#"{"status":"busy"}"#,
        )
        .unwrap();
        assert!(
            s.current(t0 + Duration::from_secs(1)).is_empty(),
            "not tried again yet"
        );
        let files = s.current(t0 + RETRY);
        assert!(s.fd().is_some());
        assert_eq!(files.get(&me).map(|f| f.status.as_str()), Some("busy"));
    }
}
