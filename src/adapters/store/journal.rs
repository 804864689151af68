//! The lifecycle journal: one JSON object per line (`journal.jsonl` in the XDG state dir),
//! appended with a single write per event so concurrent writers never interleave a line.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::core::msg::Event;

/// `$XDG_STATE_HOME/agentwatch/journal.jsonl`.
pub fn default_path() -> Option<PathBuf> {
    super::state_dir().map(|d| d.join("journal.jsonl"))
}

pub fn append(path: &Path, event: &Event) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
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

/// Every readable event; a corrupt or truncated line is skipped with a warning in the log.
pub fn read(path: &Path) -> Vec<Event> {
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
