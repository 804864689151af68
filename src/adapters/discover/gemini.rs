//! Gemini CLI (0.61): a session's chat is
//! `${GEMINI_CLI_HOME:-~}/.gemini/tmp/<project>/chats/session-<time>-<first 8 of id>.jsonl`
//! (older ones `.json`), its first line naming the whole `sessionId`. `<project>` is what
//! `.gemini/projects.json` maps the working directory to (`{"projects": {"/abs": "slug"}}`),
//! else the folder whose `.project_root` file holds the directory.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{lines, only, read_head, Allowance, Query, Source, Window};
use crate::core::agent::is_uuid;

/// The session of the only chat in the directory's project written during the pane's run.
pub(super) fn find(q: &Query, dir: &Path, budget: &mut Allowance) -> Option<(String, Source)> {
    let window = Window::of(q)?;
    let project = project(dir, &q.cwd, budget)?;
    let mut found = Vec::new();
    for path in budget.list(&project.join("chats"))? {
        if window.holds(&path) {
            found.extend(session_of(&path));
        }
    }
    // A resumed chat has a twin with the same id: one session all the same.
    only(found).map(|id| (id, Source::GeminiChat))
}

/// The project folder gemini uses for `cwd`.
fn project(dir: &Path, cwd: &str, budget: &mut Allowance) -> Option<PathBuf> {
    let tmp = dir.join("tmp");
    let mapped = read_head(&dir.join("projects.json"))
        .and_then(|h| serde_json::from_slice::<Value>(&h.bytes).ok())
        .and_then(|v| v.get("projects")?.get(cwd)?.as_str().map(str::to_owned))
        .filter(|slug| !slug.is_empty() && !slug.contains('/') && slug != "." && slug != "..");
    if let Some(slug) = mapped {
        return Some(tmp.join(slug));
    }
    let owned = budget.list(&tmp)?.into_iter().filter(|p| {
        std::fs::read_to_string(p.join(".project_root")).is_ok_and(|r| r.trim_end() == cwd)
    });
    let mut owned: Vec<PathBuf> = owned.collect();
    (owned.len() == 1).then(|| owned.pop()).flatten()
}

/// The session a chat file belongs to: its first line's `sessionId`, when the file's name
/// agrees (`session-…-<first 8 of the id>.jsonl`).
fn session_of(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = name
        .strip_suffix(".jsonl")
        .or_else(|| name.strip_suffix(".json"))?;
    let short = stem.strip_prefix("session-")?.rsplit('-').next()?;
    let head = read_head(path)?;
    let id = lines(&head, 1).first()?.field(&["sessionId"])?;
    (is_uuid(&id) && id.get(..8) == Some(short)).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::super::{discover, put};
    use super::*;
    use crate::core::time::Millis;

    const SID: &str = "6eaf8ba7-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
    const OTHER: &str = "3017e8ab-0000-4000-8000-000000000001";
    const CWD: &str = "/tmp/gproj";
    const T0: Millis = 1_796_119_200_000;
    const MIN: Millis = 60_000;

    fn query(dir: &Path) -> Query {
        Query {
            agent: "gemini".into(),
            cwd: CWD.into(),
            started_at: Some(T0),
            died_at: Some(T0 + 10 * MIN),
            gemini_dir: Some(dir.to_path_buf()),
            ..Query::default()
        }
    }

    fn chat(dir: &Path, project: &str, id: &str, time: &str, mtime: Millis) {
        let name = format!("session-{time}-{}.jsonl", &id[..8]);
        let body = format!(
            "{{\"sessionId\":\"{id}\",\"projectHash\":\"28d6\",\"kind\":\"main\"}}\n{{\"$set\":{{}}}}\n"
        );
        put(
            &dir.join("tmp").join(project).join("chats").join(name),
            body.as_bytes(),
            mtime,
        );
    }

    fn map(dir: &Path, slug: &str) {
        let body = format!("{{\"projects\":{{\"{CWD}\":\"{slug}\"}}}}");
        put(&dir.join("projects.json"), body.as_bytes(), T0);
    }

    #[test]
    fn the_one_chat_of_the_run_names_the_session() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        map(dir, "gproj");
        chat(dir, "gproj", SID, "2026-12-01T10-06", T0 + MIN);
        // Its twin from a resume, and a chat of another project: the same one session.
        chat(dir, "gproj", SID, "2026-12-01T10-08", T0 + 2 * MIN);
        chat(dir, "other", OTHER, "2026-12-01T10-07", T0 + MIN);
        assert_eq!(
            discover(&query(dir)),
            Some((SID.to_string(), Source::GeminiChat))
        );
        // Two sessions in the run: not a guess.
        chat(dir, "gproj", OTHER, "2026-12-01T10-09", T0 + 3 * MIN);
        assert_eq!(discover(&query(dir)), None);
    }

    #[test]
    fn the_project_is_found_by_its_root_file_without_the_map() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        chat(dir, "gproj-1", SID, "2026-12-01T10-06", T0 + MIN);
        put(&dir.join("tmp/gproj-1/.project_root"), CWD.as_bytes(), T0);
        assert_eq!(
            discover(&query(dir)),
            Some((SID.to_string(), Source::GeminiChat))
        );
    }

    #[test]
    fn chats_outside_the_run_or_misnamed_or_garbage_are_ignored() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        map(dir, "gproj");
        chat(dir, "gproj", SID, "2026-12-01T09-00", T0 - 60 * MIN);
        // The name's short id disagrees with the line.
        put(
            &dir.join("tmp/gproj/chats/session-2026-12-01T10-06-ffffffff.jsonl"),
            format!("{{\"sessionId\":\"{OTHER}\"}}\n").as_bytes(),
            T0 + MIN,
        );
        put(
            &dir.join("tmp/gproj/chats/session-2026-12-01T10-07-3017e8ab.jsonl"),
            b"\xff\xfe not json",
            T0 + MIN,
        );
        assert_eq!(discover(&query(dir)), None);
    }

    #[test]
    fn a_hostile_project_name_in_the_map_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        map(dir, "../../etc");
        assert_eq!(discover(&query(dir)), None);
    }
}
