//! One-shot subcommands: each runs, prints and exits.

/// `agentwatch demo`: simulated agents on a private server, and the dashboard on it.
pub mod demo;
/// `agentwatch doctor`: checks, each with a fix.
pub mod doctor;
/// `agentwatch events`: the journal printed and followed.
pub mod events;
/// `agentwatch explain %N`: which source decided what a pane's agent does, and why.
pub mod explain;
/// `agentwatch hooks install|uninstall`: agentwatch's own agent hooks, and the command they run.
pub mod hooks;
/// `agentwatch man`: the man page, its KEYS from the key table.
pub mod man;
/// `agentwatch spawn`: start an agent with its session id and directory recorded.
pub mod spawn;
/// `agentwatch status`: one read-only look, as a table or JSON.
pub mod status;
