//! The lifecycle journal: one JSON object per line (`journal.jsonl` in the XDG state dir),
//! appended with a single write per event so concurrent writers never interleave a line.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::core::msg::Event;

/// `$XDG_STATE_HOME/agentwatch/journal.jsonl`.
pub fn default_path() -> Option<PathBuf> {
    super::state_dir().map(|d| d.join("journal.jsonl"))
}

/// Past this size the journal is moved aside to `journal.jsonl.1` (replacing the one there)
/// and a new one begun: what agents do is journaled at every turn, and the journal is read
/// whole at start.
pub const ROTATE_BYTES: u64 = 8 * 1024 * 1024;

/// The journal before the current one.
pub fn older(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".1");
    PathBuf::from(p)
}

pub fn append(path: &Path, event: &Event) -> std::io::Result<()> {
    append_capped(path, event, ROTATE_BYTES)
}

fn append_capped(path: &Path, event: &Event, cap: u64) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if std::fs::metadata(path).is_ok_and(|m| m.len() >= cap) {
        std::fs::rename(path, older(path))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)?;
    // A line cut short (a crash mid-write, a full disk) must not swallow this event: it
    // starts on a line of its own.
    let len = f.metadata()?.len();
    let mut last = [b'\n'];
    if len > 0 {
        use std::os::unix::fs::FileExt;
        f.read_exact_at(&mut last, len - 1)?;
    }
    let mut line = Vec::with_capacity(256);
    if last[0] != b'\n' {
        line.push(b'\n');
    }
    serde_json::to_writer(&mut line, event)?;
    line.push(b'\n');
    // One write: appends from two processes never interleave inside a line.
    f.write_all(&line)
}

/// Every readable event, of the journal before this one too; a corrupt or truncated line is
/// skipped with a warning in the log.
pub fn read(path: &Path) -> Vec<Event> {
    let mut events = read_one(&older(path));
    events.extend(read_one(path));
    events
}

/// The readable events of one journal file.
pub fn read_one(path: &Path) -> Vec<Event> {
    let Ok(text) = std::fs::read(path) else {
        return Vec::new();
    };
    String::from_utf8_lossy(&text)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| match serde_json::from_str(l) {
            Ok(e) => Some(e),
            Err(e) => {
                tracing::warn!("skipping a bad journal line in {}: {e}", path.display());
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_journal_is_moved_aside_once_and_both_are_read_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let ev = |ts| Event {
            ts,
            event: "idle".into(),
            pane: "%1".into(),
            ..Event::default()
        };
        for ts in 1..=3 {
            append_capped(&path, &ev(ts), 60).unwrap();
        }
        assert!(older(&path).exists());
        let ts: Vec<u64> = read(&path).iter().map(|e| e.ts).collect();
        assert_eq!(ts, [1, 2, 3]);
        for ts in 4..=9 {
            append_capped(&path, &ev(ts), 60).unwrap();
        }
        let ts: Vec<u64> = read(&path).iter().map(|e| e.ts).collect();
        assert!(
            ts.ends_with(&[8, 9]) && ts.windows(2).all(|w| w[0] < w[1]),
            "{ts:?}"
        );
        assert!(std::fs::metadata(&path).unwrap().len() < 200);
    }

    #[test]
    fn events_round_trip_and_bad_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j/journal.jsonl");
        let e = Event {
            ts: 1,
            event: "died".into(),
            pane: "%1".into(),
            exit_code: Some(1),
            ..Event::default()
        };
        append(&path, &e).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"ts\": 2, \"event\": trunc\n")
            .unwrap();
        append(&path, &e).unwrap();
        assert_eq!(read(&path), vec![e.clone(), e]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(r#"{"ts":1,"event":"died","pane":"%1","exit_code":1}"#),
            "{text}"
        );
    }

    #[test]
    fn an_event_after_a_line_cut_short_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let died = Event {
            ts: 7,
            event: "died".into(),
            pane: "%3".into(),
            exit_code: Some(1),
            ..Event::default()
        };
        // The last write was cut mid-line (a crash, a full disk): no newline at the end.
        std::fs::write(&path, b"{\"ts\":5,\"event\":\"resumed\",\"pa").unwrap();
        append(&path, &died).unwrap();
        assert_eq!(read(&path), vec![died.clone()]);
        append(&path, &died).unwrap();
        assert_eq!(read(&path), vec![died.clone(), died]);
    }
}
