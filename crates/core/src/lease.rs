//! The supervisor's claim on a tmux server, kept in the server itself: a server option
//! naming the instance that supervises, renewed every couple of seconds. Every path to one
//! server (a symlink, a hard link, another machine's view of it) finds the same claim, and
//! no file cleaner can delete it. One that stops renewing (hung, stopped, its terminal gone)
//! loses it within [`TTL_MS`]; a daemon takes it over from a dashboard; a claim is taken
//! with a compare-and-swap in the server, so two instances never both win.

use crate::time::Millis;

/// The server option that holds the claim.
pub const OPTION: &str = "@agentwatch_lease";
/// A claim not renewed for this long is lost.
pub const TTL_MS: Millis = 8_000;
/// How often the holder renews it.
pub const RENEW_MS: Millis = 2_000;

/// One instance's claim, as the server holds it: `pid:host:nonce:d|u:since:renewed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub pid: u32,
    /// The machine it runs on (letters, digits, `.`, `-`, `_` only).
    pub host: String,
    /// Drawn at the instance's start: another process under a reused pid is another one.
    pub nonce: String,
    /// A daemon (`agentwatch daemon`), not a dashboard.
    pub daemon: bool,
    /// When it began supervising, and when it last renewed (its clock, epoch ms).
    pub since: Millis,
    pub renewed: Millis,
}

impl Lease {
    pub fn parse(s: &str) -> Option<Lease> {
        let f: Vec<&str> = s.trim().split(':').collect();
        let [pid, host, nonce, kind, since, renewed] = f.as_slice() else {
            return None;
        };
        Some(Lease {
            pid: pid.parse().ok()?,
            host: host.to_string(),
            nonce: nonce.to_string(),
            daemon: match *kind {
                "d" => true,
                "u" => false,
                _ => return None,
            },
            since: since.parse().ok()?,
            renewed: renewed.parse().ok()?,
        })
    }

    /// The option's value: only characters that are plain in a tmux format.
    pub fn format(&self) -> String {
        format!(
            "{}:{}:{}:{}:{}:{}",
            self.pid,
            plain(&self.host),
            plain(&self.nonce),
            if self.daemon { "d" } else { "u" },
            self.since,
            self.renewed
        )
    }

    pub fn expired(&self, now: Millis) -> bool {
        now >= self.renewed + TTL_MS
    }

    fn is(&self, me: &Lease) -> bool {
        self.pid == me.pid && self.host == plain(&me.host) && self.nonce == plain(&me.nonce)
    }

    /// What the header and `doctor` call it.
    pub fn who(&self) -> String {
        match self.daemon {
            true => format!("daemon {}", self.pid),
            false => format!("a dashboard (pid {})", self.pid),
        }
    }
}

/// A name kept to letters, digits, `.`, `-` and `_` (anything else is `_`).
pub fn plain(s: &str) -> String {
    let p: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if p.is_empty() {
        "_".into()
    } else {
        p
    }
}

/// What to do about the claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// It is ours and fresh: supervise.
    Keep,
    /// Write ours in place of `old` (the value read, compared in the server): a renewal, or
    /// taking it over. Supervise only if the write is read back.
    Write { old: String, new: Lease },
    /// Another instance holds it: supervise nothing.
    Defer(Lease),
}

/// The step for `me` (its lease as it would write it now), given the value read from the
/// server and whether its holder is known to be lost: gone (on this machine, its pid is not
/// alive), or seen not renewing it for [`TTL_MS`] by the looker's own clock (the holder's
/// may differ).
pub fn step(me: &Lease, now: Millis, raw: &str, holder_lost: bool) -> Step {
    let write = |renewed_since: Millis| Step::Write {
        old: raw.to_string(),
        new: Lease {
            since: renewed_since,
            renewed: now,
            ..me.clone()
        },
    };
    match Lease::parse(raw) {
        Some(l) if l.is(me) => {
            if now.saturating_sub(l.renewed) >= RENEW_MS {
                write(l.since)
            } else {
                Step::Keep
            }
        }
        // Held, renewed, its holder there: a daemon is let take it from a dashboard.
        Some(l) if !l.expired(now) && !holder_lost && (l.daemon || !me.daemon) => Step::Defer(l),
        _ => write(now),
    }
}

/// The claim as one who only looks sees it (`status`, `doctor`): nobody's, held, or lapsed
/// (its holder stopped renewing it: stopped, hung, or gone without letting go).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    Free,
    Held(Lease),
    Lapsed {
        lease: Lease,
        /// Since its last renewal, by the looker's clock.
        ago: Millis,
    },
}

impl Claim {
    /// `raw`: the option's value; `gone`: its holder is known not to run any more.
    pub fn read(raw: &str, now: Millis, gone: bool) -> Claim {
        match Lease::parse(raw) {
            None => Claim::Free,
            Some(l) if l.expired(now) || gone => Claim::Lapsed {
                ago: now.saturating_sub(l.renewed),
                lease: l,
            },
            Some(l) => Claim::Held(l),
        }
    }

    /// Who supervises: a holder with a fresh claim.
    pub fn holder(&self) -> Option<&Lease> {
        match self {
            Claim::Held(l) => Some(l),
            _ => None,
        }
    }

    /// Why nobody supervises (`None` when somebody does), in the words the header, `status`
    /// and `doctor` share.
    pub fn why_unsupervised(&self) -> Option<String> {
        match self {
            Claim::Held(_) => None,
            Claim::Free => Some("nobody supervises this server (no daemon, no dashboard)".into()),
            Claim::Lapsed { lease, ago } => Some(format!(
                "nobody supervises this server: {} stopped answering {} ago",
                lease.who(),
                crate::text::duration(*ago)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(pid: u32, daemon: bool, renewed: Millis) -> Lease {
        Lease {
            pid,
            host: "box".into(),
            nonce: format!("n{pid}"),
            daemon,
            since: 1_000,
            renewed,
        }
    }

    #[test]
    fn a_lease_reads_back_as_written_and_names_only_plain_characters() {
        let l = Lease {
            host: "my host,}#".into(),
            ..lease(42, true, 5_000)
        };
        let text = l.format();
        assert_eq!(text, "42:my_host___:n42:d:1000:5000");
        let back = Lease::parse(&text).unwrap();
        assert_eq!((back.pid, back.daemon, back.renewed), (42, true, 5_000));
        for junk in ["", "x", "1:a:b:q:1:2", "1:a:b:d:1"] {
            assert_eq!(Lease::parse(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn ones_own_fresh_lease_is_kept_and_renewed_every_two_seconds() {
        let me = lease(1, false, 10_000);
        let raw = me.format();
        assert_eq!(step(&me, 11_000, &raw, false), Step::Keep);
        let Step::Write { old, new } = step(&me, 12_000, &raw, false) else {
            panic!("a renewal");
        };
        assert_eq!((old, new.renewed, new.since), (raw, 12_000, 1_000));
    }

    #[test]
    fn anothers_fresh_lease_is_deferred_to_and_an_expired_or_orphaned_one_taken() {
        let me = lease(1, false, 0);
        let other = lease(2, true, 10_000);
        assert_eq!(
            step(&me, 10_000 + TTL_MS - 1, &other.format(), false),
            Step::Defer(other.clone())
        );
        assert!(matches!(
            step(&me, 10_000 + TTL_MS, &other.format(), false),
            Step::Write { .. }
        ));
        assert!(matches!(
            step(&me, 10_500, &other.format(), true),
            Step::Write { .. }
        ));
        assert!(matches!(step(&me, 10_500, "", false), Step::Write { .. }));
    }

    #[test]
    fn a_daemon_takes_the_lease_from_a_dashboard_but_never_the_other_way() {
        let daemon = lease(1, true, 0);
        let dashboard = lease(2, false, 10_000);
        assert!(matches!(
            step(&daemon, 10_500, &dashboard.format(), false),
            Step::Write { .. }
        ));
        let held = lease(1, true, 10_000);
        assert_eq!(
            step(&dashboard, 10_500, &held.format(), false),
            Step::Defer(held.clone())
        );
        // A second daemon (another path to the same server) defers to the first.
        let second = lease(3, true, 0);
        assert_eq!(
            step(&second, 10_500, &held.format(), false),
            Step::Defer(held)
        );
    }

    #[test]
    fn a_looker_tells_a_held_claim_from_a_lapsed_one_and_says_why_nobody_supervises() {
        let l = lease(7, true, 10_000);
        assert_eq!(Claim::read("", 10_000, false), Claim::Free);
        assert_eq!(Claim::read(&l.format(), 12_000, false).holder(), Some(&l));
        let lapsed = Claim::read(&l.format(), 10_000 + 25_000, false);
        assert_eq!(lapsed.holder(), None);
        assert_eq!(
            lapsed.why_unsupervised().unwrap(),
            "nobody supervises this server: daemon 7 stopped answering 25s ago"
        );
        // Gone without letting go: lapsed however fresh its last renewal.
        assert!(matches!(
            Claim::read(&l.format(), 10_500, true),
            Claim::Lapsed { ago: 500, .. }
        ));
    }
}
