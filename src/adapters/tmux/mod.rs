//! Everything that talks tmux: the listing format, control mode and the async client.

pub mod client;
pub mod clients;
pub mod control;
pub mod format;
pub mod panes;
pub mod reach;
pub mod server;
pub mod verdicts;
pub mod window;
