//! The clock, read only by the loops and handed to the core as `now`.

use crate::core::time::Millis;

/// Wall-clock time that advances with tokio's clock (so paused-time tests work).
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    wall0: Millis,
    mono0: tokio::time::Instant,
}

impl Clock {
    pub fn start() -> Clock {
        Clock {
            wall0: crate::adapters::wall_ms(),
            mono0: tokio::time::Instant::now(),
        }
    }

    pub fn now(&self) -> Millis {
        self.wall0 + self.mono0.elapsed().as_millis() as Millis
    }
}

/// The local time zone, read once at start: its rules, not one offset, so that each clock
/// time shown is converted at the offset in force at that instant (a daylight-saving change
/// while running, or between a death and now, is honoured). jiff's `TimeZone::system()`
/// honours `TZ` first (`TZ=Europe/Berlin`, a TZif path or a POSIX rule such as
/// `CET-1CEST,M3.5.0,M10.5.0/3`), else reads `/etc/localtime`; when neither gives a zone it
/// falls back to one that behaves like UTC. Cheap to clone (shared inside).
pub fn time_zone() -> jiff::tz::TimeZone {
    jiff::tz::TimeZone::system()
}
