//! Everything that talks tmux: pure formats and words, and the async client that runs it.

pub mod client;
pub mod control;
pub mod format;
pub mod words;
