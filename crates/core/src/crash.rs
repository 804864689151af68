//! A crash record as data: a dead pane's output and what is known of its death.

use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use crate::time;
use crate::time::Millis;

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
    /// How long it ran before it died, when known.
    #[serde(default)]
    pub uptime_ms: Option<Millis>,
    pub saved_at: Millis,
    /// The auto-resume this death followed: `N` when the process that died was started by
    /// auto-resume attempt N (counted since the last healthy run or manual relaunch, as
    /// the card's `attempt N/M`), 0 when it was not (a first crash). Absent in records
    /// saved before it was kept.
    #[serde(default)]
    pub attempt: Option<u32>,
    /// The host (`[[hosts]]` name) whose server the pane was on; absent: this machine's.
    /// Pane ids are only unique within one server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Why it stopped (`usage_limit`, `auth`, ...), and the lines that said so. Absent in
    /// records saved before causes were told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// The retained output with its colour escapes.
    pub output: String,
}

impl CrashRecord {
    /// How it ended, when to the second (two deaths of one minute are told apart) and the
    /// auto-resume it followed: `process exited (code 1) at 03:57:12 · after auto-resume
    /// 1/3`. A first crash, or a record that does not say, names no auto-resume.
    pub fn describe(&self, tz: &TimeZone, max_attempts: u32) -> String {
        let mut out = self.exit.clone();
        if let Some(c) = self
            .cause
            .as_deref()
            .and_then(crate::cause::Cause::parse)
            .filter(|c| *c != crate::cause::Cause::Unknown)
        {
            out.push_str(&format!(" ({})", c.label()));
        }
        if let Some(d) = self.died_at {
            out.push_str(&format!(" at {}", time::clock_secs(d, tz)));
        }
        match self.attempt {
            Some(n) if n > 0 && n <= max_attempts => {
                out.push_str(&format!(" · after auto-resume {n}/{max_attempts}"));
            }
            // The limit was lowered since: the count alone.
            Some(n) if n > 0 => out.push_str(&format!(" · after auto-resume {n}")),
            _ => {}
        }
        out
    }
}

/// A record of a claude on `%1` that exited with code 1, holding `output` (for tests).
#[cfg(test)]
pub fn sample(output: &str) -> CrashRecord {
    CrashRecord {
        agent: "claude".into(),
        pane: "%1".into(),
        target: "work:1.0".into(),
        session_id: None,
        cwd: "/w".into(),
        exit: "process exited (code 1)".into(),
        died_at: None,
        started_at: None,
        uptime_ms: None,
        saved_at: 0,
        attempt: None,
        host: None,
        cause: None,
        evidence: Vec::new(),
        output: output.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(died_at: Option<Millis>, attempt: Option<u32>) -> CrashRecord {
        CrashRecord {
            died_at,
            attempt,
            ..sample("")
        }
    }

    #[test]
    fn a_record_says_its_death_to_the_second_and_the_auto_resume_it_followed() {
        let utc = TimeZone::UTC;
        // 2026-11-29T03:57:12Z and 03:57:48Z: the same minute, told apart.
        let (a, b) = (1_795_924_632_000, 1_795_924_668_000);
        assert_eq!(
            record(Some(a), Some(1)).describe(&utc, 3),
            "process exited (code 1) at 03:57:12 · after auto-resume 1/3"
        );
        assert_eq!(
            record(Some(b), Some(0)).describe(&utc, 3),
            "process exited (code 1) at 03:57:48",
            "a first crash names no auto-resume"
        );
        assert_eq!(
            record(None, None).describe(&utc, 3),
            "process exited (code 1)"
        );
        assert_eq!(
            record(Some(a), Some(5)).describe(&utc, 3),
            "process exited (code 1) at 03:57:12 · after auto-resume 5"
        );
    }

    #[test]
    fn a_record_saved_before_the_attempt_was_kept_still_loads() {
        let old = r#"{"agent":"claude","pane":"%1","target":"w:1.0","session_id":null,"cwd":"/w","exit":"process exited (code 1)","died_at":5,"started_at":null,"saved_at":6,"output":"x"}"#;
        let r: CrashRecord = serde_json::from_str(old).unwrap();
        assert_eq!((r.attempt, r.uptime_ms), (None, None));
    }
}
