//! The loops: they read the clock, hand `now` and what happened to the core, and carry out
//! the effects it asks for with the adapters. Two front ends share them: the dashboard
//! ([`tui`]) and the daemon.

/// The clock and the local time zone.
pub mod clock;
/// The daemon front end: supervision with no screen.
pub mod daemon;
/// Who supervises the server, by the locks.
pub mod elector;
/// The loop both front ends share.
pub mod event_loop;
/// Effects carried out with the adapters.
pub mod io;
/// Log file setup (tracing).
pub mod logging;
/// Effects settled one by one, for one-shot commands and tests.
pub mod settle;
/// The dashboard: terminal set-up, keys and signals, the loop with a screen.
pub mod tui;

pub use clock::{time_zone, Clock};
pub use event_loop::{run, PANICKED};
pub use io::{Answer, Io};
pub use settle::{look_once, send, settle};
