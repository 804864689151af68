//! Claude Code: its live registry `sessions/<pid>.json`, else the one transcript
//! `projects/<slug>/<id>.jsonl` written during the pane's run.

use std::path::Path;

use serde_json::Value;

use super::{lines, only, read_head, Allowance, Query, Source, Window, SLACK_BEFORE};
use crate::core::agent::is_uuid;
use crate::core::relaunch::Record;

/// Transcript lines looked at for the `cwd` check.
const CWD_LINES: usize = 50;

pub(super) fn find(q: &Query, dir: &Path, budget: &mut Allowance) -> Option<(String, Source)> {
    let registered = registry(q, dir);
    if !registered.is_empty() {
        return only(registered).map(|id| (id, Source::ClaudeRegistry));
    }
    transcript(q, dir, budget).map(|id| (id, Source::ClaudeTranscript))
}

/// What claude keeps of session `id` where `claude --resume` run in `cwd` looks (claude
/// 2.1: `projects/<slug of the real cwd>/<id>.jsonl`), which is also where `claude
/// --session-id` finds an id "already in use": a transcript with a message (a `user` or
/// `assistant` line) is resumable; one without (claude's `mode` and `permission-mode` lines,
/// written when a session that never got a message ends with /exit) is neither resumable
/// nor free to start again. `None` when claude's folder does not exist or cannot be read.
pub(super) fn recorded(dir: &Path, cwd: &str, id: &str) -> Option<Record> {
    let real = std::fs::canonicalize(cwd)
        .ok()
        .and_then(|p| p.to_str().map(str::to_owned))
        .unwrap_or_else(|| cwd.to_owned());
    let folder = dir.join("projects").join(slug(&real));
    match std::fs::File::open(folder.join(format!("{id}.jsonl"))) {
        Ok(f) => holds_message(f).map(|m| if m { Record::Message } else { Record::Empty }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            dir.is_dir().then_some(Record::Absent)
        }
        Err(_) => None,
    }
}

/// How much of a transcript is read for its first message: a conversation's first user
/// line comes within its first few lines, so a file this long with none cannot be told.
const MESSAGE_SCAN_BYTES: u64 = 4 << 20;

/// Whether a transcript holds a message: a line whose `type` is `user` or `assistant`.
/// `None` when it cannot be read, or none turns up in its first [`MESSAGE_SCAN_BYTES`].
fn holds_message(f: std::fs::File) -> Option<bool> {
    use std::io::{BufRead, Read};
    let mut read = 0u64;
    let mut reader = std::io::BufReader::new(f.take(MESSAGE_SCAN_BYTES));
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).ok()?;
        if n == 0 {
            break;
        }
        read += n as u64;
        // Parsed only where the word is: most lines of a long transcript are not looked at.
        let maybe = memchr::memmem::find(&line, b"\"user\"").is_some()
            || memchr::memmem::find(&line, b"\"assistant\"").is_some();
        if maybe {
            let kind = serde_json::from_slice::<Value>(&line)
                .ok()
                .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned));
            if matches!(kind.as_deref(), Some("user" | "assistant")) {
                return Some(true);
            }
        }
    }
    (read < MESSAGE_SCAN_BYTES).then_some(false)
}

/// A running claude, not one of `not`, whose registry file names session `id`.
pub(super) fn live(dir: &Path, id: &str, not: &[u32], budget: &mut Allowance) -> Option<u32> {
    for path in budget.list(&dir.join("sessions"))? {
        let pid = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse::<u32>().ok());
        let Some(pid) = pid.filter(|p| !not.contains(p)) else {
            continue;
        };
        let Some(v) = read_head(&path).and_then(|h| serde_json::from_slice::<Value>(&h.bytes).ok())
        else {
            continue;
        };
        // A file left by a claude that was killed names a pid that is gone, or reused by
        // another process (its start time differs).
        let named = v.get("sessionId").and_then(Value::as_str) == Some(id);
        if named
            && crate::adapters::claude_state::proc_start(pid).is_some()
            && same_process(pid, v.get("procStart"))
        {
            return Some(pid);
        }
    }
    None
}

/// Ids named by the registry files of `q.pids` that agree with the query.
fn registry(q: &Query, dir: &Path) -> Vec<String> {
    let mut ids = Vec::new();
    for &pid in &q.pids {
        let Some(head) = read_head(&dir.join("sessions").join(format!("{pid}.json"))) else {
            continue;
        };
        let Ok(v) = serde_json::from_slice::<Value>(&head.bytes) else {
            continue;
        };
        let Some(id) = v.get("sessionId").and_then(Value::as_str) else {
            continue;
        };
        let absent_or = |key: &str, want: Value| v.get(key).is_none_or(|got| *got == want);
        let cwd_ok = absent_or("cwd", Value::from(q.cwd.as_str()));
        let pid_ok = absent_or("pid", Value::from(pid));
        // A record from before this pane's process started is a stale one under a reused pid.
        let fresh = match (v.get("startedAt").and_then(Value::as_u64), q.started_at) {
            (Some(at), Some(start)) => at.saturating_add(SLACK_BEFORE) >= start,
            _ => true,
        };
        if cwd_ok && pid_ok && fresh && same_process(pid, v.get("procStart")) && is_uuid(id) {
            ids.push(id.to_owned());
        }
    }
    ids
}

/// False when the record's kernel start time names another process than the live `pid`.
fn same_process(pid: u32, recorded: Option<&Value>) -> bool {
    let recorded = match recorded {
        None => return true,
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return false,
    };
    crate::adapters::claude_state::proc_start(pid).is_none_or(|start| start == recorded)
}

/// The only transcript in the cwd's project folder written during the run and naming the cwd.
fn transcript(q: &Query, dir: &Path, budget: &mut Allowance) -> Option<String> {
    let window = Window::of(q)?;
    let mut found = Vec::new();
    for path in budget.list(&dir.join("projects").join(slug(&q.cwd)))? {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let Some(id) = name.strip_suffix(".jsonl").filter(|id| is_uuid(id)) else {
            continue;
        };
        if window.holds(&path) && names_cwd(&path, &q.cwd) {
            found.push(id.to_owned());
        }
    }
    only(found)
}

fn names_cwd(path: &Path, cwd: &str) -> bool {
    let Some(head) = read_head(path) else {
        return false;
    };
    lines(&head, CWD_LINES)
        .iter()
        .any(|line| line.field(&["cwd"]).as_deref() == Some(cwd))
}

/// Claude's project folder name: every UTF-16 unit but ASCII letters and digits becomes `-`
/// (`/home/u/my proj` -> `-home-u-my-proj`); past 200 chars it is cut and suffixed with a
/// base-36 hash of the cwd, as Claude Code 2.1 does.
pub(crate) fn slug(cwd: &str) -> String {
    let mut out = String::with_capacity(cwd.len());
    let mut hash = 0i32;
    for unit in cwd.encode_utf16() {
        hash = hash.wrapping_mul(31).wrapping_add(i32::from(unit));
        let c = char::from_u32(u32::from(unit)).filter(char::is_ascii_alphanumeric);
        out.push(c.unwrap_or('-'));
    }
    if out.len() > 200 {
        let (mut n, mut digits) = (hash.unsigned_abs(), Vec::new());
        while n > 0 || digits.is_empty() {
            digits.extend(char::from_digit(n % 36, 36));
            n /= 36;
        }
        out.truncate(200);
        out.push('-');
        out.extend(digits.iter().rev());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{discover, put};
    use super::*;
    use crate::adapters::claude_state::proc_start;
    use crate::core::time::Millis;

    const SID: &str = "7f3c1e2a-9b4d-4c8e-a1f0-3d5b6c7e8f90";
    const OTHER: &str = "11111111-2222-4333-8444-555555555555";
    const REGISTRY: &str =
        include_str!("../../../tests/fixtures/discover/claude/sessions/48213.json");
    const TRANSCRIPT: &str = include_str!(
        "../../../tests/fixtures/discover/claude/projects/-home-u-my-proj/7f3c1e2a-9b4d-4c8e-a1f0-3d5b6c7e8f90.jsonl"
    );
    const MODE_ONLY: &str =
        include_str!("../../../tests/fixtures/discover/claude/never-messaged-slash-exit.jsonl");
    const CWD: &str = "/home/u/my proj";
    const T0: Millis = 1_760_434_200_000; // 2025-10-14T09:30:00Z
    const MIN: Millis = 60_000;

    fn query(dir: &Path) -> Query {
        Query {
            agent: "claude".into(),
            cwd: CWD.into(),
            started_at: Some(T0),
            died_at: Some(T0 + 10 * MIN),
            claude_dir: Some(dir.into()),
            ..Query::default()
        }
    }

    fn write(dir: &Path, id: &str, body: impl AsRef<[u8]>, mtime: Millis) {
        let path = dir.join(format!("projects/-home-u-my-proj/{id}.jsonl"));
        put(&path, body.as_ref(), mtime);
    }

    fn transcript(dir: &Path, id: &str, mtime: Millis) {
        write(dir, id, TRANSCRIPT.replace(SID, id), mtime);
    }

    fn by_transcript() -> Option<(String, Source)> {
        Some((SID.into(), Source::ClaudeTranscript))
    }

    #[test]
    fn a_session_is_recorded_when_its_transcript_exists_in_any_project() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(".claude");
        let ask = |id: &str| {
            super::super::recorded_in(
                "claude",
                CWD,
                id,
                &super::super::Dirs {
                    claude: Some(dir.clone()),
                    ..Default::default()
                },
            )
        };
        // No claude folder: claude never ran here as far as can be told.
        assert_eq!(ask(SID), None);
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(ask(SID), Some(Record::Absent), "a folder without projects");
        transcript(&dir, SID, T0);
        assert_eq!(ask(SID), Some(Record::Message));
        assert_eq!(
            ask(OTHER),
            Some(Record::Absent),
            "a session that never got a message"
        );
        // Under another project's folder: `claude --resume` in this one does not find it.
        put(
            &dir.join("projects")
                .join("-elsewhere")
                .join(format!("{OTHER}.jsonl")),
            b"{}\n",
            T0,
        );
        assert_eq!(ask(OTHER), Some(Record::Absent));
        // Empty, or only claude's mode lines (a session ended with /exit before its first
        // message): claude resumes only a transcript with a message, and will not start the
        // id again either.
        write(&dir, OTHER, b"", T0);
        assert_eq!(ask(OTHER), Some(Record::Empty));
        write(&dir, OTHER, MODE_ONLY.replace(SID, OTHER), T0);
        assert_eq!(ask(OTHER), Some(Record::Empty));
        assert_eq!(ask("latest"), None, "not an id");
    }

    #[test]
    fn slug_matches_claude() {
        assert_eq!(slug(CWD), "-home-u-my-proj");
        assert_eq!(slug("/a/é😀.x_y"), "-a-----x-y");
        let long = slug(&format!("/home/u/{}é😀", "deep/".repeat(50)));
        assert_eq!((long.len(), &long[190..]), (207, "ep-deep-de-ewyzkh"));
    }

    #[test]
    fn registry_names_the_session() {
        let dir = tempfile::tempdir().unwrap();
        // The fixture, made this test process's own record (pid and kernel start time).
        let pid = std::process::id();
        let file = dir.path().join(format!("sessions/{pid}.json"));
        let start = format!(r#""procStart":"{}""#, proc_start(pid).unwrap());
        let record = REGISTRY
            .replace(r#""procStart":"1234567""#, &start)
            .replace(r#""pid":48213"#, &format!(r#""pid":{pid}"#));
        put(&file, record.as_bytes(), T0);
        let mut q = query(dir.path());
        q.pids = vec![7, pid];
        assert_eq!(discover(&q), Some((SID.into(), Source::ClaudeRegistry)));
        // Started long after the record was written: a stale record under a reused pid.
        q.started_at = Some(T0 + 10 * MIN);
        assert_eq!(discover(&q), None);
        q.started_at = Some(T0);
        q.cwd = "/elsewhere".into();
        assert_eq!(discover(&q), None);
        q.cwd = CWD.into();
        put(&file, REGISTRY.as_bytes(), T0); // names pid 48213
        assert_eq!(discover(&q), None, "record of another pid");
        let reused = record.replace(&start, r#""procStart":"1""#);
        put(&file, reused.as_bytes(), T0);
        assert_eq!(discover(&q), None, "another process under the same pid");
        put(&file, br#"{"sessionId":"not-a-uuid"}"#, T0);
        assert_eq!(discover(&q), None);
    }

    #[test]
    fn a_session_open_in_a_running_claude_is_live_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = super::super::Dirs {
            claude: Some(dir.path().to_path_buf()),
            ..Default::default()
        };
        let live = |not: &[u32]| super::super::live_elsewhere_in("claude", SID, not, &dirs);
        assert_eq!(live(&[]), None, "no registry at all");
        // This test process plays the running claude.
        let pid = std::process::id();
        let start = format!(r#""procStart":"{}""#, proc_start(pid).unwrap());
        let record = REGISTRY
            .replace(r#""procStart":"1234567""#, &start)
            .replace(r#""pid":48213"#, &format!(r#""pid":{pid}"#));
        let file = dir.path().join(format!("sessions/{pid}.json"));
        put(&file, record.as_bytes(), T0);
        assert_eq!(live(&[]), Some(pid));
        assert_eq!(live(&[pid]), None, "the pane's own process does not count");
        assert_eq!(
            super::super::live_elsewhere_in("claude", OTHER, &[], &dirs),
            None
        );
        // Left by a claude that was killed: its pid now runs something else.
        put(
            &file,
            record.replace(&start, r#""procStart":"1""#).as_bytes(),
            T0,
        );
        assert_eq!(live(&[]), None);
    }

    #[test]
    fn two_registry_ids_are_ambiguous() {
        let dir = tempfile::tempdir().unwrap();
        for (pid, id) in [(1, SID), (2, OTHER)] {
            let rec = format!(r#"{{"sessionId":"{id}"}}"#);
            put(
                &dir.path().join(format!("sessions/{pid}.json")),
                rec.as_bytes(),
                T0,
            );
        }
        transcript(dir.path(), SID, T0 + MIN);
        let mut q = query(dir.path());
        q.pids = vec![1, 2];
        assert_eq!(discover(&q), None);
    }

    #[test]
    fn the_one_transcript_of_the_run_is_found() {
        let dir = tempfile::tempdir().unwrap();
        transcript(dir.path(), SID, T0 + MIN);
        transcript(dir.path(), OTHER, T0 - MIN); // before the run: ignored
        let mut q = query(dir.path());
        assert_eq!(discover(&q), by_transcript());
        q.pids = vec![99]; // no registry file: falls back to transcripts
        assert_eq!(discover(&q), by_transcript());
        q.started_at = None; // only the death is known: lower bound open
        assert_eq!(discover(&q), None, "the older transcript now fits too");
        q.died_at = None;
        assert_eq!(discover(&q), None, "no window at all: no transcript lookup");
    }

    #[test]
    fn two_transcripts_in_the_window_are_ambiguous() {
        let dir = tempfile::tempdir().unwrap();
        transcript(dir.path(), SID, T0 + MIN);
        transcript(dir.path(), OTHER, T0 + 2 * MIN);
        assert_eq!(discover(&query(dir.path())), None);
    }

    #[test]
    fn transcripts_outside_the_window_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        transcript(dir.path(), SID, T0 - 3_000);
        transcript(dir.path(), OTHER, T0 + 10 * MIN + 6_000);
        assert_eq!(discover(&query(dir.path())), None);
        transcript(dir.path(), SID, T0 - 1_000); // within the 2 s slack
        assert_eq!(discover(&query(dir.path())), by_transcript());
    }

    #[test]
    fn a_transcript_of_another_cwd_with_the_same_slug_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            SID,
            TRANSCRIPT.replace(CWD, "/home/u/my-proj"),
            T0 + MIN,
        );
        assert_eq!(discover(&query(dir.path())), None);
    }

    #[test]
    fn a_huge_first_line_is_read_up_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let line = format!(
            r#"{{"parentUuid":null,"cwd":"{CWD}","sessionId":"{SID}","type":"user","message":{{"role":"user","content":"{}"}}}}"#,
            "x".repeat(200_000)
        );
        write(dir.path(), SID, line, T0 + MIN);
        assert_eq!(discover(&query(dir.path())), by_transcript());
    }

    #[test]
    fn garbage_files_are_skipped_without_panic() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("projects/-home-u-my-proj");
        let junk = "22222222-2222-4222-8222-222222222222";
        write(dir.path(), junk, b"\xff\xfe\x00{\"cwd\":\n\x80", T0 + MIN);
        let truncated = "33333333-3333-4333-8333-333333333333";
        let cut = br#"{"cwd":"/home/u/my proj""#;
        write(dir.path(), truncated, cut, T0 + MIN);
        put(&p.join("agent-1234.jsonl"), TRANSCRIPT.as_bytes(), T0 + MIN);
        put(&p.join("notes.txt"), TRANSCRIPT.as_bytes(), T0 + MIN);
        std::fs::create_dir_all(p.join("44444444-4444-4444-8444-444444444444.jsonl")).unwrap();
        let fifo =
            std::ffi::CString::new(p.join(format!("{OTHER}.jsonl")).to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        put(&dir.path().join("sessions/5.json"), b"\x00\x01garbage", T0);
        let mut q = query(dir.path());
        q.pids = vec![5];
        q.died_at = None; // open-ended, so the fresh FIFO is in the window and gets looked at
        assert_eq!(discover(&q), None);
        transcript(dir.path(), SID, T0 + MIN);
        assert_eq!(discover(&q), by_transcript());
    }
}
