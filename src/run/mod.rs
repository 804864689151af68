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
/// The terminal's keys and mouse in the core's terms.
pub mod input;
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

/// The pollers of the configured hosts' servers (`[[hosts]]`, `--ssh`), in order: each
/// over one ssh process carrying a tmux control-mode client (whatever `control_mode` says:
/// the alternative would be an ssh login per call), polled on its own.
pub fn remote_probers(config: &crate::config::Config) -> Vec<crate::adapters::poll::Prober> {
    config
        .hosts
        .iter()
        .map(|h| crate::adapters::poll::Prober::new(remote_tmux(h)).with_shells(&config.shells))
        .collect()
}

/// The tmux server of a `[[hosts]]` entry, reached over ssh.
pub fn remote_tmux(host: &crate::config::Host) -> crate::adapters::tmux::client::Tmux {
    crate::adapters::tmux::client::Tmux::over_ssh(
        crate::adapters::tmux::reach::SshServer::of(host),
        REMOTE_TIMEOUT,
    )
}

/// How long another host's server has to answer (a round trip over ssh, and at first the
/// connection itself).
pub const REMOTE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
