//! The one `list-panes -a -F` format agentwatch polls with, and its pure parser.
//!
//! Each record starts with `^` and its fields are separated by `~`, each followed by a nonce
//! this process drew at random. tmux 3.3a escapes none of the free-text fields (paths,
//! option values; window names it escapes), and 3.5a escapes their control bytes but not a
//! newline, nor `^` or `~`: so a mark byte in a value is just a byte of the value, and a value
//! cannot forge a record or a field without knowing the nonce. (Control bytes as marks,
//! as before, are escaped by 3.5a in the format itself.) A newline inside a field cannot
//! split a record either. Every record is checked for its exact field count and a pane id
//! seen twice is refused: what does not fit is counted and skipped, never guessed at.

pub use crate::core::pane::Listing;
use crate::core::pane::{Pane, PaneId, PaneOptions};

/// What separates records and fields: a byte each, followed by the nonce.
#[derive(Debug, Clone, Copy)]
pub struct Marks<'a> {
    pub record: u8,
    pub field: u8,
    pub nonce: &'a str,
}

impl Marks<'static> {
    /// The marks this process polls with.
    pub fn ours() -> Marks<'static> {
        Marks {
            record: b'^',
            field: b'~',
            nonce: nonce(),
        }
    }
}

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
    "@agentwatch_state",
    "@agentwatch_occupant",
    // The supervisor's verdict: the option names a variable of the server's environment
    // (see `super::verdicts`), read through it.
    "E:@agentwatch_verdict_fmt",
    // Hook plugins' words on what the agent does (tmux-agent-sidebar and others).
    "@pane_status",
    "@pane_wait_reason",
    // A server option: the same on every row.
    "@agentwatch_auto",
];

/// This process's nonce: 6 letters and digits (62^6, about 5.7e10 values), drawn once.
/// Nothing in them means anything to a tmux format, and they keep the listing short: every
/// field carries them.
pub fn nonce() -> &'static str {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    static NONCE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NONCE.get_or_init(|| {
        let random = uuid::Uuid::new_v4().as_u128();
        (0..6)
            .map(|i| char::from(ALPHABET[((random >> (i * 8)) % 62) as usize]))
            .collect()
    })
}

/// The `-F` argument for `list-panes -a`.
pub fn list_panes_format() -> String {
    format_with(Marks::ours())
}

/// The server option that holds this process's whole-record format ([`list_panes_format`]),
/// set in the same batch as the panes asked one by one: each of them then names it
/// (`#{E:@agentwatch_record_<nonce>}`, 40 bytes) instead of carrying the format (900
/// bytes). The tmux server reads a control client's commands 4 KB at a time (libevent's
/// largest read), and every wake-up of a server costs it a walk over all its panes
/// (1.3-1.6 ms at 1000 panes: it polls every pane's terminal): 13 whole records took it 5
/// wake-ups, now 2. The name
/// carries this process's nonce, so no other instance's format is ever used; it is unset when
/// this process quits. The nonce is then in the server, where a process that can read it
/// could as well set any option of its own.
pub fn record_option() -> String {
    format!("@agentwatch_record_{}", nonce())
}

/// A whole record of the target pane, through [`record_option`].
pub fn record_ref() -> String {
    format!("#{{E:{}}}", record_option())
}

/// The format with `marks` (printable ones: tmux 3.5a escapes control bytes).
pub fn format_with(marks: Marks) -> String {
    fields_format(FIELDS, marks)
}

/// A record of `names`, marked with `marks`.
fn fields_format(names: &[&str], marks: Marks) -> String {
    let mut f = format!("{}{}", char::from(marks.record), marks.nonce);
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            f.push(char::from(marks.field));
            f.push_str(marks.nonce);
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
    parse_with(out, Marks::ours())
}

/// Parses output of [`format_with`] `marks`.
pub fn parse_with(out: &[u8], marks: Marks) -> Listing {
    let mut listing = Listing::default();
    let mut seen = std::collections::HashSet::new();
    let nonce = marks.nonce.as_bytes();
    // Bytes before the first mark are not a record; tmux ends each with a newline. Records
    // are taken one at a time, each split while it is still in the cache.
    for record in Marked::new(out, marks.record, nonce).skip(1) {
        let record = record.strip_suffix(b"\n").unwrap_or(record);
        let fields = fields(record, marks.field, nonce);
        match parse_row(&fields) {
            Some((pane, server_pid, auto_all)) if seen.insert(pane.id) => {
                if listing.server_pid.is_none() {
                    listing.server_pid = server_pid;
                    listing.auto_all = auto_all;
                }
                listing.panes.push(pane);
            }
            _ => listing.malformed += 1,
        }
    }
    listing
}

/// The fields of the brief listing: what a pane's birth, respawn or death changes, and when
/// its window last had output. Cheap for tmux to produce (no `/proc` reads, no option
/// lookups: two made it 40 % dearer at 1000 panes), so it can list every pane. A hook's
/// pane options come with whole records: of a pane whose screen was just read (its output
/// stopped), of the cards on screen, and in the full listing.
pub const BRIEF: &[&str] = &["pane_id", "pane_pid", "pane_dead", "window_activity"];

/// The head of every poll: the server's pid (for the lost-SIGCHLD kick) and the server option
/// `@agentwatch_auto`. One line, whatever the number of panes.
pub const HEAD: &[&str] = &["pid", "@agentwatch_auto"];

/// A pane as the brief listing tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Brief {
    pub id: PaneId,
    pub pid: Option<u32>,
    pub dead: bool,
    /// `window_activity`: epoch seconds of the window's last output.
    pub activity: u64,
}

/// What one poll's commands printed, told apart by their field counts (a value cannot forge
/// a mark, so the count is exact).
#[derive(Debug, Default)]
pub struct Batch {
    /// The server's pid and `@agentwatch_auto`, if the head was asked.
    pub head: Option<(Option<u32>, String)>,
    pub brief: Vec<Brief>,
    /// Whole records, of a full listing or of panes asked one by one.
    pub panes: Vec<Pane>,
    pub malformed: usize,
}

/// A format of `names` with this process's marks (as [`format_with`] for the full one).
pub fn format_of(names: &[&str]) -> String {
    fields_format(names, Marks::ours())
}

/// Parses the output of a poll's commands: any mix of [`HEAD`], [`BRIEF`] and full records.
pub fn parse_batch(out: &[u8]) -> Batch {
    let marks = Marks::ours();
    let nonce = marks.nonce.as_bytes();
    let mut batch = Batch::default();
    let (mut seen, mut seen_brief) = (
        std::collections::HashSet::new(),
        std::collections::HashSet::new(),
    );
    for record in Marked::new(out, marks.record, nonce).skip(1) {
        let record = record.strip_suffix(b"\n").unwrap_or(record);
        let f = fields(record, marks.field, nonce);
        if f.len() == HEAD.len() {
            batch.head = Some((num(f[0]), text(f[1])));
            continue;
        }
        if f.len() == BRIEF.len() {
            let brief = (|| {
                Some(Brief {
                    id: PaneId::parse(std::str::from_utf8(f[0]).ok()?)?,
                    pid: num(f[1]),
                    dead: match f[2] {
                        b"1" => true,
                        b"0" => false,
                        _ => return None,
                    },
                    activity: num(f[3]).unwrap_or(0),
                })
            })();
            match brief {
                Some(b) if seen_brief.insert(b.id) => batch.brief.push(b),
                _ => batch.malformed += 1,
            }
            continue;
        }
        // `display-message -t %N` of a pane that is gone prints the format with every pane
        // field empty: not an unreadable record, no record at all.
        if f.len() == FIELDS.len() && f[0].is_empty() {
            continue;
        }
        match parse_row(&f) {
            Some((pane, server_pid, auto_all)) if seen.insert(pane.id) => {
                if batch.head.is_none() {
                    batch.head = Some((server_pid, auto_all));
                }
                batch.panes.push(pane);
            }
            _ => batch.malformed += 1,
        }
    }
    batch
}

/// A record's fields. Fast when no value holds the mark byte (split at every one, each piece
/// after the first starting with the nonce); else split at the marks only.
fn fields<'a>(record: &'a [u8], mark: u8, nonce: &[u8]) -> Vec<&'a [u8]> {
    let mut pieces: Vec<&[u8]> = record.split(|&b| b == mark).collect();
    let plain = pieces[1..].iter().all(|p| p.starts_with(nonce));
    if !plain {
        return Marked::new(record, mark, nonce).collect();
    }
    for p in &mut pieces[1..] {
        *p = &p[nonce.len()..];
    }
    pieces
}

/// The pieces of `bytes` between marks (a `mark` byte followed by `nonce`), lazily.
struct Marked<'a, 'n> {
    bytes: &'a [u8],
    mark: u8,
    nonce: &'n [u8],
    /// Where the next piece starts; `None` once the last piece was given.
    start: Option<usize>,
}

impl<'a, 'n> Marked<'a, 'n> {
    fn new(bytes: &'a [u8], mark: u8, nonce: &'n [u8]) -> Self {
        Marked {
            bytes,
            mark,
            nonce,
            start: Some(0),
        }
    }
}

impl<'a> Iterator for Marked<'a, '_> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.start?;
        let mut from = start;
        while let Some(at) = memchr::memchr(self.mark, &self.bytes[from..]).map(|i| from + i) {
            if self.bytes[at + 1..].starts_with(self.nonce) {
                self.start = Some(at + 1 + self.nonce.len());
                return Some(&self.bytes[start..at]);
            }
            from = at + 1;
        }
        self.start = None;
        Some(&self.bytes[start..])
    }
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
        opts: PaneOptions {
            agent: text(f[20]),
            cwd: text(f[21]),
            session_id: text(f[22]),
            args: text(f[23]),
            attempts: text(f[24]),
            resumes: text(f[25]),
            next: text(f[26]),
            paused: text(f[27]),
            previous: text(f[28]),
            last_status: text(f[29]),
            exited: text(f[30]),
            judged: text(f[31]),
            state: text(f[32]),
            occupant: text(f[33]),
            verdict: text(f[34]),
        },
        hook_status: text(f[35]),
        hook_reason: text(f[36]),
    };
    Some((pane, num(f[10]), text(f[37])))
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
    use crate::core::pane::Opt;

    #[test]
    fn the_listing_asks_for_every_option_agentwatch_reads_in_the_order_it_parses_them() {
        let asked: Vec<&str> = FIELDS[20..35]
            .iter()
            .map(|f| f.strip_prefix("E:").unwrap_or(f))
            .collect();
        let read: Vec<&str> = Opt::READ.iter().map(|o| o.name()).collect();
        assert_eq!(asked, read);
        assert_eq!(FIELDS[15], Opt::RemainOnExit.name());
    }

    use super::*;

    fn row(fields: &[&str]) -> Vec<u8> {
        let m = Marks::ours();
        let mut v = vec![m.record];
        v.extend_from_slice(m.nonce.as_bytes());
        v.extend_from_slice(
            fields
                .join(&format!("{}{}", char::from(m.field), m.nonce))
                .as_bytes(),
        );
        v.push(b'\n');
        v
    }

    #[test]
    fn format_names_every_field_once() {
        let f = list_panes_format();
        assert_eq!(f.matches("#{").count(), FIELDS.len());
        assert!(f.starts_with(&format!("^{}#{{pane_id}}~{}", nonce(), nonce())));
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

    /// A well-formed row for pane `%id`, with `free` in every free-text field.
    fn hostile_row(id: u32, free: &str) -> Vec<u8> {
        let id = format!("%{id}");
        let fields: Vec<&str> = FIELDS
            .iter()
            .map(|f| match *f {
                "pane_id" => id.as_str(),
                "window_index" | "pane_index" | "pane_dead" | "history_size" => "0",
                "cursor_x" | "cursor_y" | "window_activity" | "pane_pid" | "pid" => "7",
                "pane_dead_status" | "pane_dead_signal" | "pane_dead_time" => "",
                "remain-on-exit" => "on",
                _ => free,
            })
            .collect();
        row(&fields)
    }

    #[test]
    fn no_byte_in_a_free_text_field_hides_or_forges_a_pane() {
        let mut bytes: Vec<String> = (0u8..0x20)
            .chain([0x7f])
            .map(|b| (b as char).to_string())
            .collect();
        // A whole forged record and a forged field, with bare marks.
        bytes.push("x\u{1e}%9\u{1f}evil\u{1f}0\u{1f}w".to_string());
        bytes.push("\u{1f}\u{1f}\u{1f}".into());
        bytes.push("x^%9~evil~0~w".to_string());
        bytes.push("~~~^^".into());
        for (k, b) in bytes.iter().enumerate() {
            let free = format!("a{b}z");
            let mut out = hostile_row(1, &free);
            out.extend(hostile_row(2, "plain"));
            let l = parse_listing(&out);
            assert_eq!(l.malformed, 0, "byte {k}: {free:?}");
            let ids: Vec<u32> = l.panes.iter().map(|p| p.id.0).collect();
            assert_eq!(ids, [1, 2], "byte {k}: {free:?}");
            let p = &l.panes[0];
            for v in [
                &p.window_name,
                &p.session,
                &p.current_path,
                &p.opts.session_id,
                &p.opts.judged,
            ] {
                assert_eq!(v, &free, "byte {k}");
            }
        }
        // Invalid UTF-8 is replaced, the pane kept.
        let mut out = hostile_row(1, "ok");
        let at = out.windows(2).position(|w| w == b"ok").unwrap();
        out.splice(at..at + 2, [0xff, 0xc3]);
        let l = parse_listing(&out);
        assert_eq!((l.panes.len(), l.malformed), (1, 0));
        assert!(
            l.panes[0].session.contains('\u{fffd}'),
            "{:?}",
            l.panes[0].session
        );
    }

    #[test]
    fn a_poll_s_mixed_output_is_told_apart_by_field_count() {
        let m = Marks::ours();
        let sep = format!("{}{}", char::from(m.field), m.nonce);
        let rec =
            |fields: &[&str]| format!("{}{}{}\n", char::from(m.record), m.nonce, fields.join(&sep));
        let mut out = rec(&["4242", "off"]).into_bytes();
        out.extend(rec(&["%1", "100", "0", "1796000000"]).bytes());
        out.extend(rec(&["%2", "", "1", ""]).bytes());
        // A brief record of a pane with a hostile value cannot exist (no free text), but a
        // full record with marks in its values stays one full record.
        out.extend(hostile_row(2, "a~b^c"));
        out.extend(rec(&["%3", "7", "maybe", "0"]).bytes());
        let b = parse_batch(&out);
        assert_eq!(b.head, Some((Some(4242), "off".to_string())));
        assert_eq!(
            b.brief,
            [
                Brief {
                    id: PaneId(1),
                    pid: Some(100),
                    dead: false,
                    activity: 1796000000,
                },
                Brief {
                    id: PaneId(2),
                    pid: None,
                    dead: true,
                    ..Brief::default()
                },
            ]
        );
        assert_eq!(b.panes.len(), 1);
        assert_eq!(b.panes[0].window_name, "a~b^c");
        assert_eq!(b.malformed, 1, "the brief record with a bad dead flag");
        // A pane asked for by id that is gone: tmux prints the format with its fields empty.
        let gone = rec(&vec![""; FIELDS.len()]);
        let b = parse_batch(gone.as_bytes());
        assert_eq!((b.panes.len(), b.malformed), (0, 0));
        assert!(format_of(BRIEF).starts_with(&format!("^{}#{{pane_id}}~{}", nonce(), nonce())));
    }

    #[test]
    fn a_pane_listed_twice_is_refused_and_counted() {
        let mut out = hostile_row(3, "first");
        out.extend(hostile_row(3, "second"));
        let l = parse_listing(&out);
        assert_eq!(l.panes.len(), 1);
        assert_eq!(l.panes[0].window_name, "first");
        assert_eq!(l.malformed, 1);
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
