//! The clock, read only by the loops and handed to the core as `now`.

use crate::core::msg::Millis;

/// Wall-clock time that advances with tokio's clock (so paused-time tests work).
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    wall0: Millis,
    mono0: tokio::time::Instant,
}

impl Clock {
    pub fn start() -> Clock {
        let wall0 = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as Millis)
            .unwrap_or(0);
        Clock {
            wall0,
            mono0: tokio::time::Instant::now(),
        }
    }

    pub fn now(&self) -> Millis {
        self.wall0 + self.mono0.elapsed().as_millis() as Millis
    }
}

/// The local time zone's offset from UTC in seconds, right now.
pub fn utc_offset() -> i64 {
    // SAFETY: time(NULL) and localtime_r with valid pointers have no other preconditions.
    unsafe {
        let t = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            0
        } else {
            tm.tm_gmtoff
        }
    }
}
