//! Following the agents' own files for what they spend (claude's transcript, codex's
//! rollout): each file is found once, then read from the offset last read, and only when
//! it grew (one `stat` per file per ask). What the bytes say is the core's `spend::Tally`.
//!
//! Where the tally got to is kept in `$XDG_STATE_HOME/agentwatch/spend/` (when a file is
//! first read, then every [`SAVE_EVERY`] while it grows), so that a one-shot `status`,
//! a restarted dashboard or the daemon reads only what a file grew by since, not a long
//! transcript again from its start.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::adapters::discover::Dirs;
use crate::core::pane::PaneId;
use crate::core::spend::{Kind, Spend, Tally};
use crate::core::state::SpendAsk;

/// At most this much is read per ask, all files together: three hundred long transcripts
/// seen for the first time (15 GB) are read over a minute of asks of well under a second
/// each, never in one long stall; their numbers show as each is read to its end.
const READ_PER_ASK: u64 = 512 << 20;

/// How much is read and taken in at a time.
const CHUNK: usize = 1 << 20;

/// A file not found is looked for again after this many asks.
const MISS_RETRY: u32 = 15;

/// How often a followed file's tally is kept while it grows.
const SAVE_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// The files followed, by agent kind and session id.
#[derive(Default)]
pub struct Follower {
    files: Mutex<HashMap<(Kind, String), Followed>>,
    /// Where tallies are kept between runs; `None`: not kept.
    cache: Option<PathBuf>,
}

#[derive(Default)]
struct Followed {
    path: Option<PathBuf>,
    /// Asks since the file was last looked for in vain.
    missed: u32,
    offset: u64,
    tally: Tally,
    /// When its tally was last kept, and the offset it was kept at.
    saved: Option<(std::time::Instant, u64)>,
    /// It was read to its end once (a long file is read over several asks at first).
    whole: bool,
}

/// A tally as kept: the file it is about and how far it was read.
#[derive(serde::Serialize, serde::Deserialize)]
struct Kept {
    path: PathBuf,
    offset: u64,
    tally: Tally,
}

impl Follower {
    /// A follower that keeps its tallies in `dir` (`$XDG_STATE_HOME/agentwatch/spend`).
    pub fn with_cache(dir: Option<PathBuf>) -> Follower {
        Follower {
            files: Mutex::default(),
            cache: dir,
        }
    }

    /// Where this run keeps tallies: `$XDG_STATE_HOME/agentwatch/spend`.
    pub fn default_cache() -> Option<PathBuf> {
        crate::adapters::store::state_dir().map(|d| d.join("spend"))
    }

    fn kept_path(&self, kind: Kind, id: &str) -> Option<PathBuf> {
        let kind = match kind {
            Kind::Claude => "claude",
            Kind::Codex => "codex",
        };
        // Ids are checked to the agent's shape before they are asked about; a stray
        // separator would still not leave the folder.
        let id: String = id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Some(self.cache.as_ref()?.join(format!("{kind}-{id}.json")))
    }

    /// The tally kept for this file, if it is about it and the file has not shrunk since.
    fn load(&self, kind: Kind, id: &str, path: &Path, f: &mut Followed) {
        let Some(kept) = self.kept_path(kind, id) else {
            return;
        };
        let Ok(text) = std::fs::read(&kept) else {
            return;
        };
        let Ok(k) = serde_json::from_slice::<Kept>(&text) else {
            return;
        };
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if k.path == path && k.offset <= len {
            f.offset = k.offset;
            f.tally = k.tally;
            f.saved = Some((std::time::Instant::now(), k.offset));
        }
    }

    /// Keeps the tally where it got to: at once the first time and when the file is first
    /// read to its end, else when it moved on and was not kept for [`SAVE_EVERY`] (an agent
    /// at work appends every few seconds). Written whole and renamed: never half a file.
    fn save(&self, kind: Kind, id: &str, f: &mut Followed, reached_end: bool) {
        let (Some(kept), Some(path)) = (self.kept_path(kind, id), f.path.clone()) else {
            return;
        };
        let due = match f.saved {
            None => true,
            Some((at, offset)) => offset != f.offset && (reached_end || at.elapsed() >= SAVE_EVERY),
        };
        if !due {
            return;
        }
        let k = Kept {
            path,
            offset: f.offset,
            tally: f.tally.clone(),
        };
        let Ok(text) = serde_json::to_vec(&k) else {
            return;
        };
        // Its own temp name: a dashboard, the daemon and a status may keep the same tally.
        let tmp = kept.with_extension(format!("json.{}.tmp", std::process::id()));
        let written = kept
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&tmp, &text))
            .and_then(|()| std::fs::rename(&tmp, &kept));
        if written.is_ok() {
            f.saved = Some((std::time::Instant::now(), f.offset));
        } else {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    /// The errors the agent's own file ends with (see [`errors_in`]): the file this
    /// follower follows already, else looked for. Blocking: run it off the loop.
    pub fn errors_of(&self, ask: &SpendAsk, dirs: &Dirs) -> Vec<String> {
        let known = self
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(ask.kind, ask.session_id.clone()))
            .and_then(|f| f.path.clone());
        match known.or_else(|| locate(ask, dirs)) {
            Some(path) => errors_in(&path, ask.kind),
            None => Vec::new(),
        }
    }

    /// What each asked agent's file says now. Blocking: run it off the loop.
    pub fn read(&self, asks: &[SpendAsk], dirs: &Dirs) -> Vec<(PaneId, Spend)> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        let mut budget = READ_PER_ASK;
        for ask in asks {
            let f = files.entry((ask.kind, ask.session_id.clone())).or_default();
            if f.path.is_none() {
                if f.missed > 0 && f.missed < MISS_RETRY {
                    f.missed += 1;
                    continue;
                }
                f.path = locate(ask, dirs);
                match f.path.clone() {
                    None => {
                        f.missed = 1;
                        continue;
                    }
                    Some(p) => self.load(ask.kind, &ask.session_id, &p, f),
                }
            }
            let Some(path) = f.path.clone() else {
                continue;
            };
            match grow(f, ask.kind, &path, &mut budget) {
                // Read to its end: its numbers are whole.
                Ok(true) => {
                    let reached_end = !std::mem::replace(&mut f.whole, true);
                    self.save(ask.kind, &ask.session_id, f, reached_end);
                    out.push((ask.pane, f.tally.spend().clone()));
                }
                // Part read: said once it is all read, never as a part.
                Ok(false) => self.save(ask.kind, &ask.session_id, f, false),
                Err(_) => {
                    // Gone (or unreadable): looked for again later.
                    *f = Followed::default();
                    f.missed = 1;
                }
            }
        }
        // Files of sessions no longer asked about are dropped.
        let asked: std::collections::HashSet<(Kind, &str)> = asks
            .iter()
            .map(|a| (a.kind, a.session_id.as_str()))
            .collect();
        files.retain(|(k, id), _| asked.contains(&(*k, id.as_str())));
        out
    }
}

/// Reads what `path` grew by since the last read into its tally, within `budget` bytes; a
/// file that shrank (a new file under the name) is read again from the start. Whether it
/// was read to its end.
fn grow(f: &mut Followed, kind: Kind, path: &Path, budget: &mut u64) -> std::io::Result<bool> {
    let len = std::fs::metadata(path)?.len();
    if len < f.offset {
        f.offset = 0;
        f.tally = Tally::default();
    }
    if len == f.offset {
        return Ok(true);
    }
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(f.offset))?;
    let mut left = (len - f.offset).min(*budget);
    *budget -= left;
    // A megabyte at a time: the memory of a read does not grow with the file (and a few
    // lines appended cost a few kilobytes, not a megabyte zeroed).
    let mut buf = vec![0u8; usize::try_from(left).unwrap_or(CHUNK).min(CHUNK)];
    while left > 0 {
        let want = usize::try_from(left).unwrap_or(CHUNK).min(CHUNK);
        let n = file.read(&mut buf[..want])?;
        if n == 0 {
            break;
        }
        f.tally.feed(kind, &buf[..n]);
        f.offset += n as u64;
        left -= n as u64;
    }
    Ok(f.offset >= len)
}

/// How much of the end of an agent's file is read for the errors it ended with.
const ERRORS_TAIL: u64 = 64 << 10;

/// The errors an agent's own file ends with, oldest first (at most three): claude's
/// `isApiErrorMessage` lines (`You've hit your session limit · resets 9:23pm (UTC)`, `Invalid
/// API key · Fix external API key`), codex's `error` events and failed turns. Nothing where
/// the file is not found or ends with none.
fn errors_in(path: &Path, kind: Kind) -> Vec<String> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if file
        .seek(SeekFrom::Start(len.saturating_sub(ERRORS_TAIL)))
        .is_err()
    {
        return Vec::new();
    }
    let mut buf = Vec::new();
    if file.take(ERRORS_TAIL).read_to_end(&mut buf).is_err() {
        return Vec::new();
    }
    let mut out: Vec<String> = buf
        .split(|&b| b == b'\n')
        .filter_map(|line| error_in(kind, line))
        .collect();
    let keep = out.len().saturating_sub(3);
    out.drain(..keep);
    out
}

/// The error one line of an agent's file carries, if any.
fn error_in(kind: Kind, line: &[u8]) -> Option<String> {
    let has = |w: &[u8]| line.windows(w.len()).any(|x| x == w);
    match kind {
        Kind::Claude if has(b"\"isApiErrorMessage\":true") => {
            let v: serde_json::Value = serde_json::from_slice(line).ok()?;
            let text: Vec<&str> = v
                .pointer("/message/content")?
                .as_array()?
                .iter()
                .filter_map(|c| c.get("text")?.as_str())
                .collect();
            (!text.is_empty()).then(|| text.join(" "))
        }
        Kind::Codex if has(b"\"error\"") => {
            let v: serde_json::Value = serde_json::from_slice(line).ok()?;
            let p = v.get("payload")?;
            let msg = match p.get("type")?.as_str()? {
                "error" | "stream_error" => p.get("message")?.as_str()?,
                _ => p.pointer("/error/message")?.as_str()?,
            };
            Some(msg.to_string())
        }
        _ => None,
    }
}

/// Where the agent keeps session `id`: claude `projects/<slug of its directory>/<id>.jsonl`
/// (else any project folder's, for an agent that changed directory); codex
/// `sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl`, newest days first.
fn locate(ask: &SpendAsk, dirs: &Dirs) -> Option<PathBuf> {
    let name = format!("{}.jsonl", ask.session_id);
    match ask.kind {
        Kind::Claude => {
            let projects = dirs.claude_dir()?.join("projects");
            let real = std::fs::canonicalize(&ask.cwd)
                .ok()
                .and_then(|p| p.to_str().map(str::to_owned))
                .unwrap_or_else(|| ask.cwd.clone());
            let direct = projects
                .join(crate::adapters::discover::claude::slug(&real))
                .join(&name);
            if direct.is_file() {
                return Some(direct);
            }
            std::fs::read_dir(&projects)
                .ok()?
                .flatten()
                .map(|e| e.path().join(&name))
                .find(|p| p.is_file())
        }
        Kind::Codex => {
            let sessions = dirs.codex_dir()?.join("sessions");
            let suffix = format!("-{name}");
            for year in newest_first(&sessions) {
                for month in newest_first(&year) {
                    for day in newest_first(&month) {
                        let found = std::fs::read_dir(&day).ok().and_then(|d| {
                            d.flatten().map(|e| e.path()).find(|p| {
                                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                                    n.starts_with("rollout-") && n.ends_with(&suffix)
                                })
                            })
                        });
                        if found.is_some() {
                            return found;
                        }
                    }
                }
            }
            None
        }
    }
}

/// The folders in `dir`, by name, last first (dated folders: newest first).
fn newest_first(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.reverse();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(kind: Kind, id: &str, cwd: &str) -> SpendAsk {
        SpendAsk {
            pane: PaneId(1),
            kind,
            session_id: id.into(),
            cwd: cwd.into(),
        }
    }

    const LINE: &str = r#"{"type":"assistant","isSidechain":false,"message":{"id":"m1","model":"claude-opus-4-8","usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}}}"#;

    #[test]
    fn a_transcript_is_found_read_and_followed_as_it_grows() {
        let home = tempfile::tempdir().unwrap();
        let cwd = home.path().join("proj");
        std::fs::create_dir_all(&cwd).unwrap();
        let claude = home.path().join(".claude");
        let real = std::fs::canonicalize(&cwd).unwrap();
        let folder = claude
            .join("projects")
            .join(crate::adapters::discover::claude::slug(
                real.to_str().unwrap(),
            ));
        std::fs::create_dir_all(&folder).unwrap();
        let id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
        let path = folder.join(format!("{id}.jsonl"));
        std::fs::write(&path, format!("{LINE}\n{LINE}\n")).unwrap();
        let dirs = Dirs {
            claude: Some(claude),
            ..Dirs::default()
        };
        let f = Follower::default();
        let a = [ask(Kind::Claude, id, cwd.to_str().unwrap())];
        let got = f.read(&a, &dirs);
        assert_eq!(got[0].1.tokens.total(), 10, "one message, two lines");
        // Appended: only the new bytes are read.
        use std::io::Write;
        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(w, "{}", LINE.replace("m1", "m2")).unwrap();
        let got = f.read(&a, &dirs);
        assert_eq!(got[0].1.tokens.total(), 20);
        // Written anew, shorter: read from the start.
        std::fs::write(&path, format!("{}\n", LINE.replace("m1", "m3"))).unwrap();
        let got = f.read(&a, &dirs);
        assert_eq!(got[0].1.tokens.total(), 10);
    }

    #[test]
    fn a_rollout_is_found_in_its_dated_folder() {
        let home = tempfile::tempdir().unwrap();
        let codex = home.path().join(".codex");
        let id = "0199e2a4-5b6c-7d8e-9f01-23456789abcd";
        let day = codex.join("sessions/2026/12/04");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::create_dir_all(codex.join("sessions/2026/11/30")).unwrap();
        let ev = r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":7,"total_tokens":107},"last_token_usage":{"input_tokens":50,"output_tokens":7,"total_tokens":57},"model_context_window":1000}}}"#;
        std::fs::write(
            day.join(format!("rollout-2026-12-04T10-00-00-{id}.jsonl")),
            format!("{ev}\n"),
        )
        .unwrap();
        let dirs = Dirs {
            codex: Some(codex),
            ..Dirs::default()
        };
        let got = Follower::default().read(&[ask(Kind::Codex, id, "/")], &dirs);
        let s = &got[0].1;
        assert_eq!(
            (s.tokens.input, s.tokens.cache_read, s.tokens.output),
            (60, 40, 7)
        );
        assert_eq!(s.percent(None), Some(5));
    }

    #[test]
    fn the_errors_a_file_ends_with_are_its_own_record_of_why() {
        let home = tempfile::tempdir().unwrap();
        let folder = home.path().join("projects/-w");
        std::fs::create_dir_all(&folder).unwrap();
        let id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
        // As claude 2.1.197 writes an API error: a made-up assistant line.
        let err = |t: &str| {
            format!(
                r#"{{"type":"assistant","isSidechain":false,"message":{{"model":"<synthetic>","content":[{{"type":"text","text":"{t}"}}]}},"error":"rate_limit","isApiErrorMessage":true,"apiErrorStatus":429}}"#
            )
        };
        std::fs::write(
            folder.join(format!("{id}.jsonl")),
            format!(
                "{LINE}\n{}\n{LINE}\n{}\n",
                err("API Error: 529 Overloaded"),
                err("You've hit your session limit · resets 9:23pm (UTC)")
            ),
        )
        .unwrap();
        let dirs = Dirs {
            claude: Some(home.path().to_path_buf()),
            ..Dirs::default()
        };
        assert_eq!(
            Follower::default().errors_of(&ask(Kind::Claude, id, "/w"), &dirs),
            [
                "API Error: 529 Overloaded",
                "You've hit your session limit · resets 9:23pm (UTC)"
            ]
        );
        // codex 0.171's failed turn.
        let codex = home.path().join(".codex");
        let day = codex.join("sessions/2026/12/04");
        std::fs::create_dir_all(&day).unwrap();
        let cid = "0199e2a4-5b6c-7d8e-9f01-23456789abcd";
        std::fs::write(
            day.join(format!("rollout-2026-12-04T10-00-00-{cid}.jsonl")),
            "{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_complete\",\"last_agent_message\":null,\"error\":{\"message\":\"You’ve hit your usage limit. try again at 9:38 PM.\",\"codex_error_info\":\"usage_limit_exceeded\"}}}\n",
        )
        .unwrap();
        let dirs = Dirs {
            codex: Some(codex),
            ..Dirs::default()
        };
        assert_eq!(
            Follower::default().errors_of(&ask(Kind::Codex, cid, "/"), &dirs),
            ["You’ve hit your usage limit. try again at 9:38 PM."]
        );
    }

    #[test]
    fn a_kept_tally_is_taken_up_where_it_stopped() {
        let home = tempfile::tempdir().unwrap();
        let folder = home.path().join("projects/-w");
        std::fs::create_dir_all(&folder).unwrap();
        let id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
        let path = folder.join(format!("{id}.jsonl"));
        std::fs::write(&path, format!("{LINE}\n{LINE}\n")).unwrap();
        let dirs = Dirs {
            claude: Some(home.path().to_path_buf()),
            ..Dirs::default()
        };
        let cache = home.path().join("state/spend");
        let a = [ask(Kind::Claude, id, "/w")];
        let first = Follower::with_cache(Some(cache.clone()));
        assert_eq!(first.read(&a, &dirs)[0].1.tokens.total(), 10);
        assert!(cache.join(format!("claude-{id}.json")).is_file());
        // The file grows; a new follower (a one-shot status) reads only what it grew by:
        // the kept tally's ids tell m1's copy from a new message.
        use std::io::Write;
        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(w, "{LINE}").unwrap();
        writeln!(w, "{}", LINE.replace("m1", "m2")).unwrap();
        let first_len = std::fs::metadata(&path).unwrap().len();
        let second = Follower::with_cache(Some(cache.clone()));
        assert_eq!(second.read(&a, &dirs)[0].1.tokens.total(), 20);
        // Read to its end by this follower: kept there.
        let kept = || -> Kept {
            serde_json::from_slice(&std::fs::read(cache.join(format!("claude-{id}.json"))).unwrap())
                .unwrap()
        };
        assert_eq!(kept().offset, first_len);
        // Then kept again only after SAVE_EVERY: an agent at work is not written out each ask.
        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(w, "{}", LINE.replace("m1", "m9")).unwrap();
        assert_eq!(second.read(&a, &dirs)[0].1.tokens.total(), 30);
        assert_eq!(kept().offset, first_len);
        // A file written anew under the name (shorter): read from its start.
        std::fs::write(&path, format!("{}\n", LINE.replace("m1", "m3"))).unwrap();
        let third = Follower::with_cache(Some(cache));
        assert_eq!(third.read(&a, &dirs)[0].1.tokens.total(), 10);
    }

    #[test]
    fn a_file_not_there_yet_is_not_looked_for_on_every_ask() {
        let home = tempfile::tempdir().unwrap();
        let dirs = Dirs {
            claude: Some(home.path().to_path_buf()),
            ..Dirs::default()
        };
        let f = Follower::default();
        let a = [ask(Kind::Claude, "nope", "/nowhere")];
        for _ in 0..3 {
            assert!(f.read(&a, &dirs).is_empty());
        }
        let files = f.files.lock().unwrap();
        assert_eq!(files.values().next().map(|x| x.missed), Some(3));
    }
}
