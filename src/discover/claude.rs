//! Claude Code: its live registry `sessions/<pid>.json`, else the one transcript
//! `projects/<slug>/<id>.jsonl` written during the pane's run.

use std::path::Path;

use serde_json::Value;

use super::{lines, only, read_head, Budget, Query, Source, Window, SLACK_BEFORE};
use crate::agent::is_uuid;

/// Transcript lines looked at for the `cwd` check.
const CWD_LINES: usize = 50;

pub(super) fn find(q: &Query, dir: &Path, budget: &mut Budget) -> Option<(String, Source)> {
    let registered = registry(q, dir);
    if !registered.is_empty() {
        return only(registered).map(|id| (id, Source::ClaudeRegistry));
    }
    transcript(q, dir, budget).map(|id| (id, Source::ClaudeTranscript))
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
        let cwd_ok = v
            .get("cwd")
            .is_none_or(|c| c.as_str() == Some(q.cwd.as_str()));
        let pid_ok = v
            .get("pid")
            .is_none_or(|p| p.as_u64() == Some(u64::from(pid)));
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
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    let start = stat.as_deref().and_then(|s| {
        let after_name = &s[s.rfind(')')? + 1..];
        after_name.split_whitespace().nth(19).map(str::to_owned)
    });
    start.is_none_or(|start| start == recorded)
}

/// The only transcript in the cwd's project folder written during the run and naming the cwd.
fn transcript(q: &Query, dir: &Path, budget: &mut Budget) -> Option<String> {
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

/// Claude's project folder name: every char but ASCII letters and digits becomes `-` (one per
/// UTF-16 unit, as JavaScript's replace does), e.g. `/home/u/my proj` -> `-home-u-my-proj`.
pub(super) fn slug(cwd: &str) -> String {
    let mut out = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::{discover, put};
    use super::*;
    use crate::msg::Millis;

    const SID: &str = "7f3c1e2a-9b4d-4c8e-a1f0-3d5b6c7e8f90";
    const OTHER: &str = "11111111-2222-4333-8444-555555555555";
    const REGISTRY: &str = include_str!("../../tests/fixtures/discover/claude/sessions/48213.json");
    const TRANSCRIPT: &str = include_str!(
        "../../tests/fixtures/discover/claude/projects/-home-u-my-proj/7f3c1e2a-9b4d-4c8e-a1f0-3d5b6c7e8f90.jsonl"
    );
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

    fn project(dir: &Path) -> PathBuf {
        dir.join("projects/-home-u-my-proj")
    }

    fn transcript(dir: &Path, id: &str, mtime: Millis) {
        let body = TRANSCRIPT.replace(SID, id);
        put(
            &project(dir).join(format!("{id}.jsonl")),
            body.as_bytes(),
            mtime,
        );
    }

    #[test]
    fn slug_matches_claude() {
        assert_eq!(slug(CWD), "-home-u-my-proj");
        assert_eq!(slug("/a/é😀.x_y"), "-a-----x-y");
    }

    #[test]
    fn registry_names_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sessions/48213.json");
        put(&file, REGISTRY.as_bytes(), T0);
        let mut q = query(dir.path());
        q.pids = vec![7, 48213];
        assert_eq!(discover(&q), Some((SID.into(), Source::ClaudeRegistry)));
        // Started long after the record was written: a stale record under a reused pid.
        q.started_at = Some(T0 + 10 * MIN);
        assert_eq!(discover(&q), None);
        q.started_at = Some(T0);
        q.cwd = "/elsewhere".into();
        assert_eq!(discover(&q), None);
        q.cwd = CWD.into();
        put(&file, REGISTRY.replace("48213", "48214").as_bytes(), T0);
        assert_eq!(discover(&q), None, "record of another pid");
        put(&file, br#"{"sessionId":"not-a-uuid"}"#, T0);
        assert_eq!(discover(&q), None);
    }

    #[test]
    fn registry_checks_the_kernel_start_time() {
        let dir = tempfile::tempdir().unwrap();
        let pid = std::process::id();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let start = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .nth(19)
            .unwrap();
        let mut q = query(dir.path());
        q.pids = vec![pid];
        let file = dir.path().join(format!("sessions/{pid}.json"));
        let rec = |ps: &str| format!(r#"{{"pid":{pid},"sessionId":"{SID}","procStart":"{ps}"}}"#);
        put(&file, rec(start).as_bytes(), T0);
        assert_eq!(discover(&q), Some((SID.into(), Source::ClaudeRegistry)));
        put(&file, rec("1").as_bytes(), T0);
        assert_eq!(discover(&q), None);
    }

    #[test]
    fn two_registry_ids_are_ambiguous() {
        let dir = tempfile::tempdir().unwrap();
        put(
            &dir.path().join("sessions/1.json"),
            format!(r#"{{"sessionId":"{SID}"}}"#).as_bytes(),
            T0,
        );
        put(
            &dir.path().join("sessions/2.json"),
            format!(r#"{{"sessionId":"{OTHER}"}}"#).as_bytes(),
            T0,
        );
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
        assert_eq!(discover(&q), Some((SID.into(), Source::ClaudeTranscript)));
        q.pids = vec![99]; // no registry file: falls back to transcripts
        assert_eq!(discover(&q), Some((SID.into(), Source::ClaudeTranscript)));
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
        assert_eq!(
            discover(&query(dir.path())),
            Some((SID.into(), Source::ClaudeTranscript))
        );
    }

    #[test]
    fn a_transcript_of_another_cwd_with_the_same_slug_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let body = TRANSCRIPT.replace(CWD, "/home/u/my-proj");
        put(
            &project(dir.path()).join(format!("{SID}.jsonl")),
            body.as_bytes(),
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
        put(
            &project(dir.path()).join(format!("{SID}.jsonl")),
            line.as_bytes(),
            T0 + MIN,
        );
        assert_eq!(
            discover(&query(dir.path())),
            Some((SID.into(), Source::ClaudeTranscript))
        );
    }

    #[test]
    fn garbage_files_are_skipped_without_panic() {
        let dir = tempfile::tempdir().unwrap();
        let p = project(dir.path());
        let junk = [
            "22222222-2222-4222-8222-222222222222",
            "33333333-3333-4333-8333-333333333333",
        ];
        put(
            &p.join(format!("{}.jsonl", junk[0])),
            b"\xff\xfe\x00{\"cwd\":\n\x80",
            T0 + MIN,
        );
        put(
            &p.join(format!("{}.jsonl", junk[1])),
            br#"{"cwd":"/home/u/my proj""#,
            T0 + MIN,
        );
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
        assert_eq!(discover(&q), Some((SID.into(), Source::ClaudeTranscript)));
    }
}
