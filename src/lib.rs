//! agentwatch: a terminal dashboard for AI coding agents running in tmux panes.
//!
//! The folders say which side of the line each file is on:
//! - [`core`]: pure decisions and nouns; no tokio, no processes, no files.
//! - [`adapters`]: the outside world (tmux, `/proc`, files, other agents' stores,
//!   notifications), deciding nothing.
//! - [`run`]: the loops that wire the core to the adapters, for both front ends.
//! - [`ui`]: drawing only, from a borrowed `&State`.
//! - [`commands`]: one-shot subcommands.

/// The outside world: tmux, `/proc`, files, other agents' stores, notifications.
pub mod adapters;
/// Command-line definitions.
pub mod cli;
/// One-shot subcommands: status, events, doctor, spawn, demo.
pub mod commands;
/// The config file: defaults, validation, errors with file/line/column/key.
pub mod config;
/// The pure core (the `agentwatch-core` crate): nouns, vocabulary, policy and
/// `State::update(msg, now) -> effects`.
pub use agentwatch_core as core;
/// The loops: effects carried out, the clock read, the dashboard and the daemon.
pub mod run;
/// Drawing.
pub mod ui;
