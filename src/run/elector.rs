//! The election of a server's supervisor, carried out with the locks: a daemon, when one
//! runs, supervises; otherwise the first dashboard to take the supervisor lock does, and
//! the next one takes it within a tick of the first one quitting or dying.

use std::sync::Mutex;

use crate::adapters::store::lock::{self, Held, ServerLocks};
use crate::core::msg::{Election, Supervisor};

pub struct Elector {
    locks: ServerLocks,
    me: Supervisor,
    held: Mutex<Option<Held>>,
    /// The last failure, logged once (a lock dir that cannot be made, say).
    failed: Mutex<Option<String>>,
}

impl Elector {
    pub fn new(locks: ServerLocks, me: Supervisor) -> Elector {
        Elector {
            locks,
            me,
            held: Mutex::new(None),
            failed: Mutex::new(None),
        }
    }

    /// The elector of the server at `socket`, for this process.
    pub fn for_server(
        socket: &std::path::Path,
        daemon: bool,
        now: crate::core::time::Millis,
    ) -> Elector {
        Elector::new(
            ServerLocks::new(&lock::lock_dir(), socket),
            Supervisor {
                pid: std::process::id(),
                daemon,
                since: now,
            },
        )
    }

    pub fn locks(&self) -> &ServerLocks {
        &self.locks
    }

    /// Looks (and takes the supervisor lock when it is free and no daemon runs). Never
    /// blocks: both are a syscall or two.
    pub fn elect(&self) -> Election {
        let Ok(mut held) = self.held.lock() else {
            return self.alone("the election lock was poisoned");
        };
        if !self.me.daemon {
            match lock::holder(&self.locks.daemon) {
                Ok(Some(daemon)) => {
                    // A daemon supervises: give the lock up so that it can take it.
                    *held = None;
                    return Election {
                        mine: false,
                        by: Some(daemon),
                    };
                }
                Ok(None) => {}
                Err(e) => return self.alone(&format!("{}: {e}", self.locks.daemon.display())),
            }
        }
        if held.is_none() {
            match lock::try_hold(&self.locks.supervisor, &self.me) {
                Ok(h) => *held = h,
                Err(e) => return self.alone(&format!("{}: {e}", self.locks.supervisor.display())),
            }
        }
        if held.is_some() {
            return Election {
                mine: true,
                by: Some(self.me),
            };
        }
        Election {
            mine: false,
            by: lock::holder(&self.locks.supervisor).ok().flatten(),
        }
    }

    /// Locks cannot be had: supervise alone rather than let deaths go unsupervised.
    fn alone(&self, why: &str) -> Election {
        if let Ok(mut f) = self.failed.lock() {
            if f.as_deref() != Some(why) {
                tracing::warn!("supervisor election: {why}; supervising without a lock");
                *f = Some(why.to_string());
            }
        }
        Election {
            mine: true,
            by: Some(self.me),
        }
    }
}
