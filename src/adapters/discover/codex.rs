//! Codex: the exit line it leaves in the dead pane's output, else the one rollout file
//! `sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl` written during the pane's run.

use std::path::{Path, PathBuf};

use super::{lines, only, read_head, Allowance, Query, Source, Window};
use crate::core::agent::is_uuid;
use crate::core::time::Millis;

const DAY: Millis = 86_400_000;
const RESUME: &str = "codex resume";

pub(super) fn find(
    q: &Query,
    dir: Option<&Path>,
    budget: &mut Allowance,
) -> Option<(String, Source)> {
    if let Some(id) = q.output.as_deref().and_then(exit_line) {
        return Some((id, Source::CodexExitLine));
    }
    rollout(q, dir?, budget).map(|id| (id, Source::CodexRollout))
}

/// The process holding codex's writer lock on session `id` (its background server keeps a
/// session loaded, and its work running, after the pane that started it died): the
/// `flock` on `thread-writer-locks/<id>.lock`, as `/proc/locks` (`locks`) lists it.
pub(super) fn holder(dir: &Path, id: &str, locks: &str) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let meta =
        std::fs::metadata(dir.join("thread-writer-locks").join(format!("{id}.lock"))).ok()?;
    let (ino, dev) = (meta.ino(), meta.dev());
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    locks.lines().find_map(|line| {
        // `1: FLOCK  ADVISORY  WRITE 31597 fe:00:10051939 0 EOF`
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(1) != Some(&"FLOCK") {
            return None;
        }
        let mut at = f.get(5)?.split(':');
        let maj = u32::from_str_radix(at.next()?, 16).ok()?;
        let min = u32::from_str_radix(at.next()?, 16).ok()?;
        let inode: u64 = at.next()?.parse().ok()?;
        let pid: u32 = f.get(4)?.parse().ok()?;
        (inode == ino && maj == major && min == minor).then_some(pid)
    })
}

/// The id of the last `codex resume <uuid>` in the output (codex prints `To continue this
/// session, run codex resume <id>` on exit). Anything but a UUID after it is ignored.
fn exit_line(output: &str) -> Option<String> {
    let text = strip_ansi(output);
    let word_start =
        |i: usize| !text[..i].ends_with(|c: char| c.is_alphanumeric() || "-_/".contains(c));
    text.match_indices(RESUME)
        .filter(|(i, _)| word_start(*i))
        .filter_map(|(i, _)| id_after(&text[i + RESUME.len()..]))
        .last()
}

/// A UUID after blanks (at most one line break), itself possibly broken by one line wrap.
fn id_after(rest: &str) -> Option<String> {
    let body = rest.trim_start_matches([' ', '\t', '\r', '\n']);
    let gap = &rest[..rest.len() - body.len()];
    if gap.is_empty() || gap.matches('\n').count() > 1 {
        return None;
    }
    let run = |s: &str| s.find(|c: char| !(c.is_ascii_hexdigit() || c == '-'));
    let (mut id, mut tail) = body.split_at(run(body).unwrap_or(body.len()));
    let joined;
    if let Some(next) = tail.strip_prefix('\n').filter(|_| id.len() < 36) {
        let (more, after) = next.split_at(run(next).unwrap_or(next.len()));
        joined = format!("{id}{more}");
        (id, tail) = (&joined, after);
    }
    let ends = !tail.starts_with(|c: char| c.is_alphanumeric() || c == '_');
    (ends && is_uuid(id)).then(|| id.to_owned())
}

/// Drops ANSI escape sequences: CSI (`ESC [ … final`), strings (OSC/DCS/… up to BEL or
/// ESC), charset designations and other two-character escapes.
pub(super) fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('[') => _ = it.find(|c| ('\x40'..='\x7e').contains(c)),
            Some(']' | 'P' | '_' | '^' | 'X') => {
                _ = it.find(|&c| c == '\x07' || c == '\x1b');
                _ = it.next_if_eq(&'\\');
            }
            Some('(' | ')' | '*' | '+' | '#' | '%') => _ = it.next(),
            _ => {}
        }
    }
    out
}

/// The only rollout in the day folders of the run whose mtime falls in the run and whose
/// `session_meta` names the cwd. Needs the start: without it the folders are unknown.
fn rollout(q: &Query, dir: &Path, budget: &mut Allowance) -> Option<String> {
    let window = Window::of(q)?;
    // Codex names its day folders in local time: widen the UTC dates by a day each side.
    let lo = day_key(q.started_at?.saturating_sub(DAY));
    let hi = q
        .died_at
        .map_or(i64::MAX, |t| day_key(t.saturating_add(DAY)));
    let overlaps = |first: i64, last: i64| last >= lo && first <= hi;
    let mut found = Vec::new();
    for (y, year) in dated(budget, &dir.join("sessions"), 4)? {
        if !overlaps(y * 10_000 + 101, y * 10_000 + 1231) {
            continue;
        }
        for (m, month) in dated(budget, &year, 2)? {
            let ym = y * 10_000 + m * 100;
            if !overlaps(ym + 1, ym + 31) {
                continue;
            }
            for (d, day) in dated(budget, &month, 2)? {
                if overlaps(ym + d, ym + d) {
                    for file in budget.list(&day)? {
                        found.extend(candidate(&file, q, &window));
                    }
                }
            }
        }
    }
    only(found)
}

/// The subdirectories of `dir` named by exactly `digits` digits, with their number.
fn dated(budget: &mut Allowance, dir: &Path, digits: usize) -> Option<Vec<(i64, PathBuf)>> {
    let numbered = |p: PathBuf| {
        let name = p.file_name()?.to_str()?;
        let ok = name.len() == digits && name.bytes().all(|b| b.is_ascii_digit());
        let n = name.parse().ok().filter(|_| ok)?;
        p.is_dir().then_some((n, p))
    };
    Some(budget.list(dir)?.into_iter().filter_map(numbered).collect())
}

fn candidate(path: &Path, q: &Query, window: &Window) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_prefix("rollout-")?.strip_suffix(".jsonl")?;
    let (ts, id) = stem.split_at_checked(stem.len().checked_sub(36)?)?;
    if !ts.ends_with('-') || !is_uuid(id) || !window.holds(path) {
        return None;
    }
    let head = read_head(path)?;
    let first = lines(&head, 1).into_iter().next()?;
    let meta = first.field(&["type"]).as_deref() == Some("session_meta")
        && first
            .field(&["payload", "id"])
            .is_some_and(|v| v.eq_ignore_ascii_case(id))
        && first.field(&["payload", "cwd"]).as_deref() == Some(q.cwd.as_str());
    meta.then(|| id.to_owned())
}

/// The UTC date of an instant as `yyyymmdd` (civil-from-days, proleptic Gregorian).
fn day_key(t: Millis) -> i64 {
    let z = (t / DAY) as i64 + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    y * 10_000 + m * 100 + d
}

#[cfg(test)]
mod tests {
    use super::super::{discover, put};
    use super::*;

    const CID: &str = "0199e2a4-5b6c-7d8e-9f01-23456789abcd";
    const OTHER: &str = "0199e2a4-0000-7000-8000-000000000000";
    const ROLLOUT: &str = include_str!(
        "../../../tests/fixtures/discover/codex/sessions/2025/10/14/rollout-2025-10-14T11-30-12-0199e2a4-5b6c-7d8e-9f01-23456789abcd.jsonl"
    );
    const EXIT: &str = include_str!("../../../tests/fixtures/discover/codex/exit-output.txt");
    const CWD: &str = "/home/u/my proj";
    const T0: Millis = 1_760_434_200_000; // 2025-10-14T09:30:00Z
    const MIN: Millis = 60_000;
    const D14: &str = "2025/10/14";

    fn query(dir: &Path) -> Query {
        Query {
            agent: "codex".into(),
            cwd: CWD.into(),
            started_at: Some(T0),
            died_at: Some(T0 + 10 * MIN),
            codex_dir: Some(dir.into()),
            ..Query::default()
        }
    }

    fn rollout_at(dir: &Path, day: &str, id: &str, body: &str, mtime: Millis) {
        let name = format!("sessions/{day}/rollout-2025-10-14T11-30-12-{id}.jsonl");
        put(&dir.join(name), body.replace(CID, id).as_bytes(), mtime);
    }

    fn rollout() -> Option<(String, Source)> {
        Some((CID.into(), Source::CodexRollout))
    }

    #[test]
    fn day_keys() {
        assert_eq!(day_key(0), 19_700_101);
        assert_eq!(day_key(T0), 20_251_014);
        assert_eq!(day_key(951_868_799_999), 20_000_229);
        assert_eq!(day_key(951_868_800_000), 20_000_301);
    }

    #[test]
    fn the_exit_line_names_the_session() {
        let q = Query {
            agent: "codex".into(),
            cwd: CWD.into(),
            output: Some(EXIT.into()),
            ..Query::default()
        };
        assert_eq!(discover(&q), Some((CID.into(), Source::CodexExitLine)));
        let styled = format!("run \x1b[36mcodex resume\x1b[0m \x1b[1m{CID}\x1b[22m.\x1b]8;;\x07\n");
        assert_eq!(exit_line(&styled).as_deref(), Some(CID));
        let wrapped = format!("run codex resume {}\n{}\n", &CID[..20], &CID[20..]);
        assert_eq!(exit_line(&wrapped).as_deref(), Some(CID));
        let two = format!("codex resume {OTHER}\n...\ncodex resume {CID}\ncodex resume --last\n");
        assert_eq!(exit_line(&two).as_deref(), Some(CID), "the last id wins");
    }

    #[test]
    fn codex_0_171_exit_words_name_the_session() {
        let text = format!(
            "Disconnected from this task. Any running work continues.\nTo reconnect, run:\n  codex resume {CID}\nStop the current turn: run codex agents, select this task, and press x.\n"
        );
        assert_eq!(exit_line(&text).as_deref(), Some(CID));
    }

    #[test]
    fn the_process_holding_the_writer_lock_holds_the_session() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let dirs = super::super::Dirs {
            codex: Some(dir.path().to_path_buf()),
            ..Default::default()
        };
        let live = || super::super::live_elsewhere_in("codex", CID, &[], &dirs);
        assert_eq!(live(), None, "no lock file");
        let path = dir.path().join(format!("thread-writer-locks/{CID}.lock"));
        put(&path, b"", T0);
        assert_eq!(live(), None, "nobody holds it");
        // This test process plays codex's background server.
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: flock on an open fd.
        assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
        assert_eq!(live(), Some(std::process::id()));
        assert_eq!(
            super::super::live_elsewhere_in("codex", CID, &[std::process::id()], &dirs),
            None
        );
        drop(file);
        // Released, once a child another test thread forked meanwhile (holding a copy of
        // the descriptor, and so the lock, until its exec) has let go of it too.
        let released = (0..200).any(|_| {
            live().is_none() || {
                std::thread::sleep(std::time::Duration::from_millis(10));
                false
            }
        });
        assert!(released, "released");
        // A lock line of another file (another inode) is not this session's.
        assert_eq!(
            holder(
                dir.path(),
                CID,
                "1: FLOCK  ADVISORY  WRITE 77 fe:00:1 0 EOF\n"
            ),
            None
        );
    }

    #[test]
    fn anything_but_a_uuid_after_codex_resume_is_ignored() {
        for text in [
            "codex resume --last",
            "codex resume 0199e2a4-5b6c-7d8e-9f01",
            &format!("codex resume {CID}ff"),
            &format!("codex resume {CID}x"),
            &format!("codex resume\n\n{CID}"),
            &format!("mycodex resume {CID}"),
            &format!("codex resume{CID}"),
            "codex resume \x1b[31",
        ] {
            assert_eq!(exit_line(text), None, "{text:?}");
        }
    }

    #[test]
    fn the_one_rollout_of_the_run_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = ROLLOUT.replace(CWD, "/elsewhere");
        rollout_at(dir.path(), D14, CID, ROLLOUT, T0 + MIN);
        rollout_at(dir.path(), D14, OTHER, &elsewhere, T0 + MIN);
        let mut q = query(dir.path());
        assert_eq!(discover(&q), rollout());
        q.output = Some("codex resume --last\n".into()); // no id in the output
        assert_eq!(discover(&q), rollout());
        q.died_at = None; // alive: open-ended
        assert_eq!(discover(&q), rollout());
        q.started_at = None; // day folders unknown
        assert_eq!(discover(&q), None);
    }

    #[test]
    fn two_rollouts_or_one_outside_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let q = query(dir.path());
        rollout_at(dir.path(), D14, CID, ROLLOUT, T0 - 3_000);
        assert_eq!(discover(&q), None, "written before the run");
        rollout_at(dir.path(), D14, CID, ROLLOUT, T0 + MIN);
        assert_eq!(discover(&q), rollout());
        // The previous UTC day may be today's local day: it is searched too.
        rollout_at(dir.path(), "2025/10/13", OTHER, ROLLOUT, T0 + 2 * MIN);
        assert_eq!(discover(&q), None, "ambiguous");
    }

    #[test]
    fn a_huge_session_meta_is_read_up_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let big = format!(r#""base_instructions":{{"text":"{}"}}"#, "y".repeat(99_999));
        let body = ROLLOUT.replacen(r#""instructions":null"#, &big, 1);
        rollout_at(dir.path(), D14, CID, &body, T0 + MIN);
        assert_eq!(discover(&query(dir.path())), rollout());
    }

    #[test]
    fn garbage_is_skipped_without_panic() {
        let dir = tempfile::tempdir().unwrap();
        let s = dir.path().join("sessions");
        for (name, body) in [
            (
                "14/rollout-2025-10-14T11-30-12-22222222-2222-4222-8222-222222222222.jsonl",
                &b"\xff\x00\n"[..],
            ),
            (
                "14/rollout-x-33333333-3333-4333-8333-333333333333.jsonl",
                b"{\"type\":\"session_meta\"",
            ),
            ("14/rollout-.jsonl", ROLLOUT.as_bytes()),
            ("14/rollout-é.jsonl", ROLLOUT.as_bytes()),
            ("x1/f", b""),
            ("../13", b"not a dir"),
            ("../../../99999/01/01/f", b""),
        ] {
            put(&s.join("2025/10").join(name), body, T0 + MIN);
        }
        std::fs::create_dir_all(s.join(format!("2025/10/15/rollout-a-{CID}.jsonl"))).unwrap();
        let mut q = query(dir.path());
        q.output = Some("\x1b\x1b[\x1b]codex resume \u{7}\x1b(".into());
        assert_eq!(discover(&q), None);
        rollout_at(dir.path(), D14, CID, ROLLOUT, T0 + MIN);
        assert_eq!(discover(&q), rollout());
    }
}
