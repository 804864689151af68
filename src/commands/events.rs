//! `agentwatch events`: the journal, human-readable or as NDJSON, optionally followed.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::tz::TimeZone;

use crate::adapters::tmux::server::socket_identity;
use crate::core::msg::Event;
use crate::core::time::Millis;

/// Which server's events are shown, and which one goes without saying.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// `-S`/`-L` given: that server's events only (and other hosts', named by host).
    pub only: bool,
    /// The server asked of (the default one without `-S`/`-L`): its events are not
    /// labelled; another's say which server they are from, pane ids being per server.
    /// As [`socket_identity`] gives it.
    here: PathBuf,
}

impl Scope {
    /// `here`: the socket path of the server asked of, as written.
    pub fn new(here: &Path, only: bool) -> Scope {
        Scope {
            only,
            here: socket_identity(here),
        }
    }

    /// Whether an event's server (a socket as journaled) is this one.
    fn is_here(&self, server: &str) -> bool {
        Path::new(server) == self.here || socket_identity(Path::new(server)) == self.here
    }

    fn keeps(&self, e: &Event) -> bool {
        match &e.server {
            Some(server) if self.only && e.host.is_none() => self.is_here(server),
            _ => true,
        }
    }

    /// `on SOCKET` for an event of another server than this one.
    fn label(&self, e: &Event) -> Option<String> {
        let server = e.server.as_deref()?;
        (e.host.is_none() && !self.is_here(server)).then(|| format!("on {server}"))
    }
}

/// One event as a line for people; another server's than the scope's says which.
pub fn human(e: &Event, tz: &TimeZone, scope: &Scope) -> String {
    let when = crate::core::time::local(e.ts, tz);
    let mut parts = vec![format!("{when}  {:<13}", e.event)];
    if let Some(on) = scope.label(e) {
        parts.push(on);
    }
    // Another host's pane: named by its host (`box %3`), pane ids being per server.
    match (&e.host, e.pane.is_empty()) {
        (Some(h), false) => parts.push(format!("{h} {}", e.pane)),
        (Some(h), true) => parts.push(h.clone()),
        (None, false) => parts.push(e.pane.clone()),
        (None, true) => {}
    }
    if let Some(t) = &e.target {
        parts.push(t.clone());
    }
    if let Some(a) = &e.agent {
        parts.push(a.clone());
    }
    if let Some(s) = &e.session_id {
        parts.push(format!("session {}", s.chars().take(8).collect::<String>()));
    }
    if let Some(a) = e.attempt {
        parts.push(format!("attempt {a}"));
    }
    let exit = match (e.exit_code, e.signal) {
        (Some(c), _) => Some(crate::core::pane::Exit::Code(c).describe()),
        (_, Some(s)) => Some(crate::core::pane::Exit::Signal(s).describe()),
        _ => None,
    };
    if let Some(x) = exit {
        parts.push(x);
    }
    if let Some(d) = &e.detail {
        if Some(d) != parts.last() {
            parts.push(d.clone());
        }
    }
    // What a pane says goes to a terminal: no raw escapes, no line split in an event.
    crate::core::text::printable(&parts.join("  "))
}

fn print(
    out: &mut impl Write,
    e: &Event,
    json: bool,
    tz: &TimeZone,
    scope: &Scope,
) -> std::io::Result<()> {
    if !scope.keeps(e) {
        return Ok(());
    }
    if json {
        writeln!(out, "{}", serde_json::to_string(e).unwrap_or_default())
    } else {
        writeln!(out, "{}", human(e, tz, scope))
    }
}

/// Prints the journal's events newer than `since`, then, with `follow`, new ones as they
/// are appended (the file may not exist yet, or be replaced).
pub fn run(
    path: &Path,
    since: Option<Millis>,
    follow: bool,
    json: bool,
    tz: &TimeZone,
    scope: &Scope,
    now: Millis,
) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let cutoff = since.map(|s| now.saturating_sub(s)).unwrap_or(0);
    // The journal before the current one first (moved aside when it grew full).
    for e in
        crate::adapters::store::journal::read_one(&crate::adapters::store::journal::older(path))
            .into_iter()
            .filter(|e| e.ts >= cutoff)
    {
        print(&mut out, &e, json, tz, scope)?;
    }
    let mut offset = 0u64;
    let mut pending = String::new();
    loop {
        if let Ok(mut f) = std::fs::File::open(path) {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            if len < offset {
                offset = 0; // replaced or truncated: start over
                pending.clear();
            }
            f.seek(SeekFrom::Start(offset))?;
            let mut buf = Vec::new();
            f.read_to_end(&mut buf)?;
            offset += buf.len() as u64;
            pending.push_str(&String::from_utf8_lossy(&buf));
            while let Some(nl) = pending.find('\n') {
                let line: String = pending.drain(..=nl).collect();
                match serde_json::from_str::<Event>(line.trim()) {
                    Ok(e) if e.ts >= cutoff => print(&mut out, &e, json, tz, scope)?,
                    Ok(_) => {}
                    Err(_) if line.trim().is_empty() => {}
                    Err(e) => tracing::warn!("skipping a bad journal line: {e}"),
                }
            }
            out.flush()?;
        }
        if !follow {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_for_people_prints_no_raw_control_bytes() {
        let e = Event {
            ts: 1,
            event: "died".into(),
            pane: "%1".into(),
            target: Some("s\u{1b}]0;x\u{7}:0.0".into()),
            session_id: Some("\u{1b}[2Jabcdef".into()),
            detail: Some("line\nbreak \u{1b}[31mred".into()),
            ..Event::default()
        };
        let line = human(&e, &TimeZone::UTC, &Scope::default());
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.contains("line?break ?[31mred"), "{line:?}");
    }

    #[test]
    fn another_hosts_event_names_its_host_before_the_pane() {
        let e = Event {
            ts: 1,
            event: "died".into(),
            pane: "%3".into(),
            host: Some("box".into()),
            ..Event::default()
        };
        assert!(human(&e, &TimeZone::UTC, &Scope::default()).contains("died           box %3"));
    }

    #[test]
    fn with_a_server_named_only_its_events_and_other_hosts_are_shown_and_others_are_labelled() {
        let ev = |server: Option<&str>, host: Option<&str>| Event {
            ts: 1,
            event: "died".into(),
            pane: "%0".into(),
            server: server.map(str::to_string),
            host: host.map(str::to_string),
            ..Event::default()
        };
        let here = ev(Some("/tmp/a/agents.sock"), None);
        let other = ev(Some("/tmp/a/nope.sock"), None);
        let host = ev(None, Some("box"));
        let old = ev(None, None);
        let only = Scope::new(Path::new("/tmp/a/agents.sock"), true);
        assert!(only.keeps(&here) && only.keeps(&host) && only.keeps(&old));
        assert!(!only.keeps(&other));
        let all = Scope::new(Path::new("/tmp/tmux-0/default"), false);
        assert!(all.keeps(&other));
        let line = human(&other, &TimeZone::UTC, &all);
        assert!(
            line.contains("died           on /tmp/a/nope.sock  %0"),
            "{line}"
        );
        assert!(!human(&here, &TimeZone::UTC, &only).contains(" on "));
        assert!(!human(&host, &TimeZone::UTC, &all).contains(" on "));
    }
}
