//! agentwatch: a terminal dashboard for AI coding agents running in tmux panes.

/// Agent kinds: recognition, start/resume argv, session id shapes.
pub mod agent;
/// The dashboard's event loop: the only place that reads the clock and runs effects.
pub mod app;
/// Command-line definitions.
pub mod cli;
/// The config file: defaults, validation, errors with file/line/column/key.
pub mod config;
/// Crash records: a dead pane's output and death, one JSON file each.
pub mod crashlog;
/// `agentwatch demo`: simulated agents on a private server, and the dashboard on it.
pub mod demo;
/// Read-only lookups of an agent's session id (claude, codex) for a dead pane.
pub mod discover;
/// `agentwatch doctor`: checks, each with a fix.
pub mod doctor;
/// `agentwatch events`: the journal printed and followed.
pub mod events;
/// The lifecycle journal (JSONL in the XDG state dir).
pub mod journal;
/// The one key table.
pub mod keymap;
/// Log file setup (tracing).
pub mod logging;
/// Action, Msg and Effect: the vocabularies of the loop.
pub mod msg;
/// Announcing deaths: bell, desktop notification, hook.
pub mod notify;
/// Domain nouns: pane ids, pane rows, exits.
pub mod pane;
/// The peek view's model: parsed output, scrolling, search.
pub mod peek;
/// The poller: list-panes plus /proc.
pub mod probe;
/// Carrying out a relaunch (capture, crash record, respawn-pane).
pub mod relaunch;
/// Pure relaunch planning: argv, directory and session id, or why not.
pub mod resume;
/// The roster of agents lost with a tmux server, on disk.
pub mod roster;
/// Agents typed at a shell prompt: the pane as the core should see it.
pub mod shell;
/// `agentwatch spawn`: start an agent with its session id and directory recorded.
pub mod spawn;
/// The pure core: State::update(msg, now) -> effects.
pub mod state;
/// `agentwatch status`: one read-only look, as a table or JSON.
pub mod status;
/// The pure auto-resume policy: verdicts on deaths, budgets, backoff.
pub mod supervisor;
#[cfg(test)]
mod testkit;
/// Dates and durations without a date crate.
pub mod timefmt;
/// tmux: formats, words and the async client.
pub mod tmux;
/// Drawing.
pub mod ui;
/// Pure lifecycle tracking of one pane.
pub mod watch;
