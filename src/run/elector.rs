//! The election of a server's supervisor, carried out with the lease in the server
//! (`core::lease`): the instance holding it supervises; a daemon takes it from a dashboard;
//! one that stops renewing it loses it within seconds, to whichever instance looks next. The
//! lease is read and written over the poller's own tmux connection; a claim is taken with a
//! compare-and-swap in the server (`set-option -F` with a condition), then read back.

use std::sync::Mutex;

use crate::adapters::tmux::client::Tmux;
use crate::core::lease::{self, Claim, Lease, Step};
use crate::core::msg::{Election, Supervisor};
use crate::core::time::Millis;

pub struct Elector {
    me: Lease,
    /// The last election: answered again until the claim is due to be looked at (every
    /// [`lease::RENEW_MS`]), and kept while tmux cannot be asked.
    memo: Mutex<Option<Memo>>,
    /// The claim last read, and since when (by this clock) it has read so: a claim seen
    /// unchanged for the lease's time is lost whatever its holder's clock says.
    seen: Mutex<Option<(String, Millis)>>,
    /// The last failure, logged once.
    failed: Mutex<Option<String>>,
}

#[derive(Clone)]
struct Memo {
    at: Millis,
    election: Election,
    /// The claim as this instance last wrote it, while it holds it.
    wrote: Option<String>,
}

impl Elector {
    pub fn new(me: Supervisor) -> Elector {
        let host = this_host();
        Elector {
            me: Lease {
                pid: me.pid,
                host,
                nonce: uuid::Uuid::new_v4().simple().to_string()[..12].to_string(),
                daemon: me.daemon,
                since: me.since,
                renewed: me.since,
            },
            memo: Mutex::new(None),
            seen: Mutex::new(None),
            failed: Mutex::new(None),
        }
    }

    /// The elector of this process.
    pub fn for_me(daemon: bool, now: Millis) -> Elector {
        Elector::new(Supervisor {
            pid: std::process::id(),
            daemon,
            since: now,
        })
    }

    /// Who supervises. One round trip to the server every [`lease::RENEW_MS`] at most,
    /// over the poller's connection: the holder renews its claim with a compare-and-swap
    /// that reads it back; any other instance reads it, and takes it (a second round trip)
    /// only when it is free, run out, or a daemon's to take from a dashboard.
    pub async fn elect(&self, tmux: &Tmux, now: Millis) -> Election {
        let memo = self.memo.lock().ok().and_then(|m| m.clone());
        if let Some(m) = memo
            .as_ref()
            .filter(|m| now.saturating_sub(m.at) < lease::RENEW_MS)
        {
            return Election {
                took_over: None,
                ..m.election.clone()
            };
        }
        // After the first election, its questions can wait for the poll's next one and go
        // in the same write: a tmux server of 1000 panes walks them all at each wake-up.
        let ride = memo.as_ref().map(|_| RIDE);
        let mut raw = None;
        if let Some(old) = memo.and_then(|m| m.wrote) {
            let since = Lease::parse(&old).map_or(self.me.since, |l| l.since);
            let new = Lease {
                since,
                renewed: now,
                ..self.me.clone()
            };
            match swap(tmux, &old, &new.format(), ride).await {
                Ok(held) if held == new.format() => {
                    let e = Election {
                        mine: true,
                        by: Some(supervisor(&new)),
                        took_over: None,
                    };
                    return self.remember(now, e, Some(held));
                }
                // Not ours any more: who holds it is judged below, as any instance would.
                Ok(held) => raw = Some(held),
                Err(e) => return self.unasked(&e.to_string()),
            }
        }
        let raw = match raw {
            Some(r) => r,
            None => match ask(tmux, &[reading()], ride).await {
                Ok(r) => r,
                Err(e) => return self.unasked(&e.to_string()),
            },
        };
        let holder = Lease::parse(&raw);
        let unchanged = self.unchanged_for(&raw, now);
        let lost = holder
            .as_ref()
            .is_some_and(|l| self.is_gone(l) || unchanged >= lease::TTL_MS);
        let (e, wrote) = match lease::step(&self.me, now, &raw, lost) {
            Step::Keep => (
                Election {
                    mine: true,
                    by: holder.as_ref().map(supervisor),
                    took_over: None,
                },
                Some(raw.clone()),
            ),
            Step::Defer(l) => (
                Election {
                    mine: false,
                    by: Some(supervisor(&l)),
                    took_over: None,
                },
                None,
            ),
            Step::Write { old, new } => match swap(tmux, &old, &new.format(), None).await {
                Ok(held) if held == new.format() => (
                    Election {
                        mine: true,
                        by: Some(supervisor(&new)),
                        // Taken from another instance that stopped renewing (or is gone).
                        took_over: holder
                            .filter(|l| l.nonce != new.nonce)
                            .map(|l| (supervisor(&l), l.renewed)),
                    },
                    Some(held),
                ),
                // Another instance wrote first: it holds the claim now.
                Ok(held) => (
                    Election {
                        mine: false,
                        by: Lease::parse(&held).as_ref().map(supervisor),
                        took_over: None,
                    },
                    None,
                ),
                Err(e) => return self.unasked(&e.to_string()),
            },
        };
        self.remember(now, e, wrote)
    }

    fn remember(&self, now: Millis, election: Election, wrote: Option<String>) -> Election {
        if let Ok(mut memo) = self.memo.lock() {
            *memo = Some(Memo {
                at: now,
                election: election.clone(),
                wrote,
            });
        }
        election
    }

    /// Gives the lease up (this instance is quitting): the next one takes over at once.
    pub async fn release(&self, tmux: &Tmux) {
        if let Ok(raw) = read(tmux).await {
            if Lease::parse(&raw).is_some_and(|l| l.nonce == self.me.nonce) {
                let _ = swap(tmux, &raw, "", None).await;
            }
        }
        if let Ok(mut memo) = self.memo.lock() {
            *memo = None;
        }
    }

    /// How long (by this clock) the claim has read `raw`.
    fn unchanged_for(&self, raw: &str, now: Millis) -> Millis {
        let Ok(mut seen) = self.seen.lock() else {
            return 0;
        };
        match &*seen {
            Some((was, at)) if was == raw => now.saturating_sub(*at),
            _ => {
                *seen = Some((raw.to_string(), now));
                0
            }
        }
    }

    /// A holder on this machine whose process is gone: its claim needs no waiting out.
    fn is_gone(&self, l: &Lease) -> bool {
        l.pid != self.me.pid && gone(l)
    }

    /// tmux could not be asked: the last answer stands (a server that does not answer has
    /// nothing to supervise meanwhile), said once in the log.
    fn unasked(&self, why: &str) -> Election {
        if let Ok(mut f) = self.failed.lock() {
            if f.as_deref() != Some(why) {
                tracing::warn!("supervisor election: {why}");
                *f = Some(why.to_string());
            }
        }
        self.memo
            .lock()
            .ok()
            .and_then(|m| m.clone())
            .map(|m| Election {
                took_over: None,
                ..m.election
            })
            .unwrap_or(Election {
                mine: false,
                by: None,
                took_over: None,
            })
    }
}

/// The claim on the server, for one who only looks (`status`, `doctor`, `daemon --stop`).
pub async fn look(
    tmux: &Tmux,
    now: Millis,
) -> Result<Claim, crate::adapters::tmux::client::TmuxError> {
    let raw = read(tmux).await?;
    let gone = Lease::parse(&raw).is_some_and(|l| gone(&l));
    Ok(Claim::read(&raw, now, gone))
}

/// This machine's name, as a lease names it.
fn this_host() -> String {
    lease::plain(&crate::adapters::host_name())
}

/// The holder runs on this machine and its process is gone.
fn gone(l: &Lease) -> bool {
    l.host == this_host() && !alive(l.pid)
}

/// The holder runs on this machine, and still does.
pub fn runs_here(l: &Lease) -> bool {
    l.host == this_host() && alive(l.pid)
}

pub fn supervisor(l: &Lease) -> Supervisor {
    Supervisor {
        pid: l.pid,
        daemon: l.daemon,
        since: l.since,
    }
}

/// `display-message -p` of the lease: what the server holds.
fn reading() -> Vec<String> {
    vec![
        "display-message".into(),
        "-p".into(),
        format!("#{{{}}}", lease::OPTION),
    ]
}

/// The lease as the server holds it (empty when none). Over the control connection, as
/// the polls are: no process per look.
pub async fn read(tmux: &Tmux) -> Result<String, crate::adapters::tmux::client::TmuxError> {
    ask(tmux, &[reading()], None).await
}

/// How long a renewal or a read of the claim may wait for another question to go with:
/// the poll asks a server at least every 2 s (its head), and a claim renewed up to this
/// late is still well within [`lease::TTL_MS`] (its renewal time is when it was asked, up
/// to this long before it is written: a claim may look older than it is, never younger).
const RIDE: std::time::Duration = std::time::Duration::from_millis(lease::RENEW_MS);

/// What `commands` print, trimmed: at once, or riding with the next other question within
/// `ride`.
async fn ask(
    tmux: &Tmux,
    commands: &[Vec<String>],
    ride: Option<std::time::Duration>,
) -> Result<String, crate::adapters::tmux::client::TmuxError> {
    let out = match ride {
        Some(within) => tmux.ask_riding(commands, within).await?,
        None => tmux.ask(commands).await?,
    };
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

/// Writes `new` in place of `old` only if the server still holds `old`, in one command the
/// server runs alone, and reads it back in the same round trip: what the server holds
/// after (`new` if the write won).
async fn swap(
    tmux: &Tmux,
    old: &str,
    new: &str,
    ride: Option<std::time::Duration>,
) -> Result<String, crate::adapters::tmux::client::TmuxError> {
    let opt = lease::OPTION;
    let plain = |s: &str| !s.contains(['#', '{', '}', ',', '\n', '\'', '"', '\\']);
    let set: Vec<String> = if plain(old) {
        let value = format!("#{{?#{{==:#{{{opt}}},{old}}},{new},#{{{opt}}}}}");
        vec![
            "set-option".into(),
            "-s".into(),
            "-F".into(),
            opt.into(),
            value,
        ]
    } else {
        // Not a lease of ours (set by hand?): it cannot be compared in a format.
        vec!["set-option".into(), "-s".into(), opt.into(), new.into()]
    };
    ask(tmux, &[set, reading()], ride).await
}

fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
