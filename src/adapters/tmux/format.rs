//! The one `list-panes -a -F` format agentwatch polls with, and its pure parser.
//!
//! Each record starts with RS (0x1e) and its fields are separated by US (0x1f): control
//! bytes that tmux never puts in names it sanitises and that no sane path contains. A newline
//! inside a field (tmux does not escape paths) therefore cannot split a record, and every
//! record is checked for its exact field count: a record that does not fit is counted and
//! skipped, never guessed at.

pub use crate::core::pane::Listing;
use crate::core::pane::{Pane, PaneId};

const RS: u8 = 0x1e;
const US: u8 = 0x1f;

/// The fields, in order. Keep in step with [`parse_row`].
pub const FIELDS: &[&str] = &[
    "pane_id",
    "session_name",
    "window_index",
    "window_name",
    "pane_index",
    "pane_dead",
    "pane_dead_status",
    "pane_dead_signal",
    "pane_dead_time",
    "pane_pid",
    "pid",
    "pane_current_command",
    "pane_start_command",
    "pane_current_path",
    "pane_start_path",
    "remain-on-exit",
    "window_activity",
    "history_size",
    "cursor_x",
    "cursor_y",
    "@agentwatch_agent",
    "@agentwatch_cwd",
    "@agentwatch_session_id",
    "@agentwatch_args",
    "@agentwatch_attempts",
    "@agentwatch_resumes",
    "@agentwatch_next",
    "@agentwatch_paused",
    "@agentwatch_previous",
    "@agentwatch_last_status",
    "@agentwatch_exited",
    "@agentwatch_judged",
    // A server option: the same on every row.
    "@agentwatch_auto",
];

/// The `-F` argument for `list-panes -a`.
pub fn list_panes_format() -> String {
    let mut f = String::from("\u{1e}");
    for (i, name) in FIELDS.iter().enumerate() {
        if i > 0 {
            f.push('\u{1f}');
        }
        f.push_str("#{");
        f.push_str(name);
        f.push('}');
    }
    f
}

/// Parses `list-panes -a -F <list_panes_format()>` output. Never fails: bad records are
/// counted in [`Listing::malformed`]. Non-UTF-8 bytes are replaced, never trusted.
pub fn parse_listing(out: &[u8]) -> Listing {
    let mut listing = Listing::default();
    for record in records(out) {
        let fields: Vec<&[u8]> = record.split(|&b| b == US).collect();
        match parse_row(&fields) {
            Some((pane, server_pid, auto_all)) => {
                if listing.server_pid.is_none() {
                    listing.server_pid = server_pid;
                    listing.auto_all = auto_all;
                }
                listing.panes.push(pane);
            }
            None => listing.malformed += 1,
        }
    }
    listing
}

/// Splits output into records: each begins with RS; the newline tmux adds after each
/// record is dropped. Bytes before the first RS are not a record.
fn records(out: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut parts = out.split(|&b| b == RS);
    parts.next();
    parts.map(|r| r.strip_suffix(b"\n").unwrap_or(r))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn num<T: std::str::FromStr>(b: &[u8]) -> Option<T> {
    std::str::from_utf8(b).ok()?.trim().parse().ok()
}

fn parse_row(f: &[&[u8]]) -> Option<(Pane, Option<u32>, String)> {
    if f.len() != FIELDS.len() {
        return None;
    }
    let id = PaneId::parse(std::str::from_utf8(f[0]).ok()?)?;
    let pane = Pane {
        id,
        session: text(f[1]),
        window_index: num(f[2])?,
        window_name: text(f[3]),
        pane_index: num(f[4])?,
        dead: match f[5] {
            b"1" => true,
            b"0" => false,
            _ => return None,
        },
        dead_status: num(f[6]),
        dead_signal: num(f[7]),
        dead_time: num(f[8]),
        pid: num(f[9]),
        current_command: text(f[11]),
        start_command: text(f[12]),
        current_path: undeleted(text(f[13])),
        start_path: text(f[14]),
        remain_on_exit: matches!(f[15], b"on" | b"failed" | b"key"),
        window_activity: num(f[16]).unwrap_or(0),
        history_size: num(f[17]).unwrap_or(0),
        cursor: (num(f[18]).unwrap_or(0), num(f[19]).unwrap_or(0)),
        opt_agent: text(f[20]),
        opt_cwd: text(f[21]),
        opt_session_id: text(f[22]),
        opt_args: text(f[23]),
        opt_attempts: text(f[24]),
        opt_resumes: text(f[25]),
        opt_next: text(f[26]),
        opt_paused: text(f[27]),
        opt_previous: text(f[28]),
        opt_last_status: text(f[29]),
        opt_exited: text(f[30]),
        opt_judged: text(f[31]),
    };
    Some((pane, num(f[10]), text(f[32])))
}

/// The directory a process works in, as it was named: the kernel appends ` (deleted)` to the
/// path of a directory removed under it, which would otherwise be recorded as the place to
/// relaunch in (and then reported as missing under a name it never had).
fn undeleted(path: String) -> String {
    match path.strip_suffix(" (deleted)") {
        Some(p) if p.starts_with('/') => p.to_string(),
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(fields: &[&str]) -> Vec<u8> {
        let mut v = vec![RS];
        v.extend_from_slice(fields.join("\u{1f}").as_bytes());
        v.push(b'\n');
        v
    }

    #[test]
    fn format_names_every_field_once() {
        let f = list_panes_format();
        assert_eq!(f.matches("#{").count(), FIELDS.len());
        assert!(f.starts_with('\u{1e}'));
    }

    #[test]
    fn a_record_with_a_missing_or_extra_field_is_skipped_and_counted() {
        let mut out = row(&["%1", "s"]);
        let mut extra = vec!["x"; FIELDS.len() + 1];
        extra[0] = "%2";
        out.extend(row(&extra));
        let l = parse_listing(&out);
        assert!(l.panes.is_empty());
        assert_eq!(l.malformed, 2);
    }

    #[test]
    fn a_removed_working_directory_keeps_its_name() {
        assert_eq!(undeleted("/w/proj (deleted)".into()), "/w/proj");
        assert_eq!(undeleted("/w/proj".into()), "/w/proj");
        assert_eq!(undeleted(" (deleted)".into()), " (deleted)");
    }

    #[test]
    fn garbage_never_panics() {
        for junk in [
            &b""[..],
            b"\n",
            b"\x1e",
            b"\x1e\x1f\x1f\n\xff\xfe",
            b"%1\x1f",
        ] {
            let _ = parse_listing(junk);
        }
    }
}
