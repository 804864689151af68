//! Agents lost with a tmux server, as data: what is needed to bring each back.

use serde::{Deserialize, Serialize};

use crate::time::Millis;

/// One agent that was on the server when it went away.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LostAgent {
    pub agent: String,
    pub pane: String,
    pub target: String,
    pub session: String,
    pub window_name: String,
    pub session_id: Option<String>,
    pub cwd: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// How it was doing when the server went (`running`, `process exited (code 1)`...).
    pub state: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Roster {
    pub socket: String,
    pub lost_at: Millis,
    pub agents: Vec<LostAgent>,
}
