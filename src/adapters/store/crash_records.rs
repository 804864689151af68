//! Crash records: a dead pane's whole output (colours included) and what is known about its
//! death, one JSON file per death, written to a temp file and renamed so that a record is
//! never half-written.

use std::io::Write;
use std::path::{Path, PathBuf};

pub use crate::core::crash::CrashRecord;
use crate::core::msg::CrashMeta;
use crate::core::resume::Plan;
use crate::core::time::Millis;

/// Saves a record; returns its path.
pub fn save(
    dir: &Path,
    plan: &Plan,
    meta: &CrashMeta,
    output: &[u8],
    now: Millis,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let record = CrashRecord {
        agent: plan.agent.clone(),
        pane: plan.pane.to_string(),
        target: meta.target.clone(),
        session_id: plan
            .session_id
            .clone()
            .filter(|s| s != crate::core::agent::SESSION_ID),
        cwd: plan.cwd.clone(),
        exit: meta.exit.clone(),
        died_at: meta.died_at,
        started_at: meta.started_at,
        uptime_ms: match (meta.started_at, meta.died_at) {
            (Some(s), Some(d)) => Some(d.saturating_sub(s)),
            _ => None,
        },
        saved_at: now,
        attempt: meta.attempt,
        host: meta.host.clone(),
        cause: meta.cause.clone(),
        evidence: meta.evidence.clone(),
        output: String::from_utf8_lossy(output).into_owned(),
    };
    let name = format!("{now}-{}-{}.json", plan.pane.0, plan.agent);
    let path = dir.join(&name);
    let tmp = dir.join(format!(".{name}.tmp"));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        serde_json::to_writer(&mut f, &record)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    })();
    if written.is_err() {
        // A full disk leaves no half-written temp file behind.
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    Ok(path)
}

/// Reads every record in `dir`, newest first; unreadable files are skipped (and logged).
pub fn load_all(dir: &Path) -> Vec<(PathBuf, CrashRecord)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, CrashRecord)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            match serde_json::from_str(&text) {
                Ok(r) => Some((p, r)),
                Err(e) => {
                    tracing::warn!("skipping unreadable crash record {}: {e}", p.display());
                    None
                }
            }
        })
        .collect();
    out.sort_by_key(|(_, r)| std::cmp::Reverse(r.saved_at));
    out
}

/// The records of one pane, newest first: same pane id, and the same session id when both
/// are known (pane ids repeat across tmux servers).
pub fn for_pane(
    dir: &Path,
    pane: crate::core::pane::PaneId,
    host: Option<&str>,
    session_id: Option<&str>,
) -> Vec<CrashRecord> {
    let id = pane.to_string();
    load_all(dir)
        .into_iter()
        .map(|(_, r)| r)
        .filter(|r| r.pane == id && r.host.as_deref() == host)
        .filter(|r| match (session_id, r.session_id.as_deref()) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        })
        .collect()
}

/// Deletes the oldest records beyond `keep` records or `max_bytes` in all; returns how many
/// were deleted. Half-written temp files older than an hour go too.
pub fn prune(dir: &Path, keep: usize, max_bytes: u64) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut files: Vec<(PathBuf, u64, std::time::SystemTime)> = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let Ok(meta) = e.metadata() else { continue };
        let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.ends_with(".tmp") {
            if modified.elapsed().is_ok_and(|age| age.as_secs() > 3600) {
                let _ = std::fs::remove_file(&path);
            }
            continue;
        }
        if name.ends_with(".json") {
            files.push((path, meta.len(), modified));
        }
    }
    // Newest first: the file name starts with the save time in ms; ties by mtime.
    files.sort_by(|a, b| b.0.file_name().cmp(&a.0.file_name()).then(b.2.cmp(&a.2)));
    let mut total = 0u64;
    let mut deleted = 0;
    for (i, (path, len, _)) in files.iter().enumerate() {
        total += len;
        if (i >= keep || (total > max_bytes && i > 0)) && std::fs::remove_file(path).is_ok() {
            deleted += 1;
        }
    }
    deleted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::pane::PaneId;

    fn plan() -> Plan {
        Plan {
            pane: PaneId(3),
            agent: "claude".into(),
            argv: vec![],
            cwd: "/w".into(),
            session_id: Some("abc".into()),
            fresh: false,
            again: false,
            unrecorded: None,
            reconnects: false,
            held_by: None,
            shell: None,
            dead_pid: None,
        }
    }

    #[test]
    fn pruning_keeps_the_newest_records_within_the_count_and_size_caps() {
        let dir = tempfile::tempdir().unwrap();
        let meta = CrashMeta::default();
        for t in 1..=10u64 {
            save(dir.path(), &plan(), &meta, &vec![b'x'; 1000], 1_000 + t).unwrap();
        }
        assert_eq!(prune(dir.path(), 4, u64::MAX), 6);
        let saved: Vec<Millis> = load_all(dir.path())
            .iter()
            .map(|(_, r)| r.saved_at)
            .collect();
        assert_eq!(saved, [1010, 1009, 1008, 1007]);
        // Each record is a bit over 1000 bytes: a 2500-byte cap keeps two.
        assert_eq!(prune(dir.path(), 100, 2_500), 2);
        let saved: Vec<Millis> = load_all(dir.path())
            .iter()
            .map(|(_, r)| r.saved_at)
            .collect();
        assert_eq!(saved, [1010, 1009]);
        // The newest record is kept even when it alone is over the size cap.
        assert_eq!(prune(dir.path(), 100, 10), 1);
        assert_eq!(load_all(dir.path()).len(), 1);
    }

    #[test]
    fn corrupt_and_truncated_records_are_skipped_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        save(dir.path(), &plan(), &CrashMeta::default(), b"last words", 5).unwrap();
        std::fs::write(dir.path().join("1-1-x.json"), b"{\"agent\": \"cl").unwrap();
        std::fs::write(dir.path().join("2-1-x.json"), [0xff, 0xfe]).unwrap();
        let all = load_all(dir.path());
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].1.output, "last words");
        assert_eq!(for_pane(dir.path(), PaneId(3), None, Some("abc")).len(), 1);
        assert_eq!(
            for_pane(dir.path(), PaneId(3), None, Some("other")).len(),
            0
        );
        assert_eq!(for_pane(dir.path(), PaneId(4), None, None).len(), 0);
        // The same pane number on another host's server is another pane.
        assert_eq!(for_pane(dir.path(), PaneId(3), Some("box"), None).len(), 0);
    }

    #[test]
    fn a_record_keeps_the_auto_resume_its_death_followed() {
        let dir = tempfile::tempdir().unwrap();
        let meta = CrashMeta {
            attempt: Some(2),
            ..CrashMeta::default()
        };
        save(dir.path(), &plan(), &meta, b"last words", 5).unwrap();
        assert_eq!(load_all(dir.path())[0].1.attempt, Some(2));
    }

    #[test]
    fn a_record_that_cannot_be_written_leaves_no_temp_file_behind() {
        let dir = tempfile::tempdir().unwrap();
        // Its final name is taken by a directory: the last step fails, as a full disk
        // would fail an earlier one.
        std::fs::create_dir(dir.path().join("5-3-claude.json")).unwrap();
        let e = save(dir.path(), &plan(), &CrashMeta::default(), b"last words", 5);
        assert!(e.is_err());
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["5-3-claude.json"], "no .tmp left");
    }
}
