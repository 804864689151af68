//! A crash record as data: a dead pane's output and what is known of its death.

use serde::{Deserialize, Serialize};

use crate::core::msg::Millis;

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
    /// The retained output with its colour escapes.
    pub output: String,
}
