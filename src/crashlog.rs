//! Crash records: a dead pane's whole output (colours included) and what is known about its
//! death, one JSON file per death, written to a temp file and renamed so that a record is
//! never half-written.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::msg::{CrashMeta, Millis};
use crate::resume::Plan;

/// One crash record on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashRecord {
    pub agent: String,
    pub pane: String,
    pub target: String,
    pub session_id: Option<String>,
    pub cwd: String,
    /// `process exited (code 1)` and the like.
    pub exit: String,
    pub died_at: Option<Millis>,
    pub started_at: Option<Millis>,
    pub saved_at: Millis,
    /// The retained output with its colour escapes.
    pub output: String,
}

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
            .filter(|s| s != crate::agent::SESSION_ID),
        cwd: plan.cwd.clone(),
        exit: meta.exit.clone(),
        died_at: meta.died_at,
        started_at: meta.started_at,
        saved_at: now,
        output: String::from_utf8_lossy(output).into_owned(),
    };
    let name = format!("{now}-{}-{}.json", plan.pane.0, plan.agent);
    let path = dir.join(&name);
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut f = std::fs::File::create(&tmp)?;
    serde_json::to_writer(&mut f, &record)?;
    f.write_all(b"\n")?;
    f.sync_all()?;
    std::fs::rename(&tmp, &path)?;
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
