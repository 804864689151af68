//! A death's verdict, kept on its pane (`@agentwatch_judged`: `<death> <verdict>`), so that
//! whoever supervises next (a restarted dashboard, a daemon taking over) knows the death was
//! judged and journaled already and picks up where the last one stopped, and so that every
//! dashboard shows what the supervisor decided.

use crate::card::{Auto, Card};
use crate::supervisor::{Budget, Hold};

/// The pane option that holds the verdict.
pub const OPTION: crate::pane::Opt = crate::pane::Opt::Judged;

/// Shell-hosted deaths are keyed by time; instances see the prompt come back up to a tick
/// apart, and a restarted one reads the time back from the pane.
const SHELL_SLACK_SECS: u64 = 10;

/// What tells this death from every other death of the pane: the dead pane's process
/// (`p<pid>`); for an agent whose pane lives on (typed at a prompt, under a `bash -c`), the
/// agent's own process (`a<pid>`), or when that is unknown, when it ended (`s<secs>`).
pub fn death_key(card: &Card) -> Option<String> {
    if let Some(h) = card.launcher.as_ref().filter(|h| h.alive) {
        if let Some(pid) = h.fg_pid {
            return Some(format!("a{pid}"));
        }
        return card.died_at.map(|t| format!("s{}", t / 1000));
    }
    card.pane
        .pid
        .map(|p| format!("p{p}"))
        .or_else(|| card.died_at.map(|t| format!("t{}", t / 1000)))
}

/// Whether two death keys name the same death.
pub fn same_death(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let secs = |k: &str| k.strip_prefix('s').and_then(|t| t.parse::<u64>().ok());
    matches!((secs(a), secs(b)), (Some(x), Some(y)) if x.abs_diff(y) <= SHELL_SLACK_SECS)
}

/// The option's value for a verdict; `None` when there is nothing worth keeping.
pub fn text(key: &str, auto: &Auto) -> Option<String> {
    let verdict = match auto {
        Auto::Idle => return None,
        Auto::Scheduled { .. } => "scheduled".to_string(),
        // Being carried out: if the supervisor dies before the pane runs again, whoever
        // supervises next carries it out (the attempt is counted once).
        Auto::Resuming { attempt } => format!("resuming {attempt}"),
        Auto::Cancelled => "cancelled".to_string(),
        Auto::Held(Hold::Off) => "off".to_string(),
        Auto::Held(Hold::NoSessionId) => "no_id".to_string(),
        Auto::Held(Hold::Unwatched) => "unwatched".to_string(),
        Auto::Held(Hold::Deliberate(what)) => format!("deliberate {what}"),
        Auto::Held(Hold::NoSession(id)) => format!("no_session {}", one_line(id)),
        Auto::Held(Hold::Refused(why)) => format!("refused {}", one_line(why)),
        Auto::Held(Hold::Cause(c)) => format!("cause {}", c.word()),
        Auto::Held(Hold::GaveUp {
            attempts,
            hourly: false,
        }) => format!("gave_up {attempts}"),
        Auto::Held(Hold::GaveUp {
            attempts,
            hourly: true,
        }) => format!("gave_up_hourly {attempts}"),
    };
    Some(format!("{key} {verdict}"))
}

/// Reads the option: the death it is about, and the verdict as the card shows it. A
/// scheduled resume is pending only while the budget still has its due time. Anything
/// unreadable is `None`: judged again, never guessed at.
pub fn parse(value: &str, budget: &Budget) -> Option<(String, Auto)> {
    let (key, verdict) = value.trim().split_once(' ')?;
    let (word, rest) = verdict.split_once(' ').unwrap_or((verdict, ""));
    let count = || rest.trim().parse::<u32>().ok();
    let auto = match word {
        "scheduled" => match budget.next_due {
            Some(due) => Auto::Scheduled {
                attempt: budget.attempts + 1,
                due,
            },
            None => Auto::Idle,
        },
        "resuming" => Auto::Resuming { attempt: count()? },
        "cancelled" => Auto::Cancelled,
        "off" => Auto::Held(Hold::Off),
        "no_id" => Auto::Held(Hold::NoSessionId),
        "unwatched" => Auto::Held(Hold::Unwatched),
        "deliberate" if !rest.is_empty() => Auto::Held(Hold::Deliberate(rest.to_string())),
        "no_session" if !rest.is_empty() => Auto::Held(Hold::NoSession(rest.to_string())),
        "refused" if !rest.is_empty() => Auto::Held(Hold::Refused(rest.to_string())),
        "cause" => Auto::Held(Hold::Cause(crate::cause::Cause::parse(rest.trim())?)),
        "gave_up" => Auto::Held(Hold::GaveUp {
            attempts: count()?,
            hourly: false,
        }),
        "gave_up_hourly" => Auto::Held(Hold::GaveUp {
            attempts: count()?,
            hourly: true,
        }),
        _ => return None,
    };
    Some((key.to_string(), auto))
}

/// Words kept in a pane option stay on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The verdict kept on the card's pane for its current death, if there is one.
pub fn on_pane(card: &Card) -> Option<Auto> {
    let key = death_key(card)?;
    let (judged, auto) = parse(&card.pane.opts.judged, &card.budget)?;
    same_death(&judged, &key).then_some(auto)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(attempts: u32, next: Option<u64>) -> Budget {
        Budget {
            attempts,
            next_due: next,
            ..Budget::default()
        }
    }

    #[test]
    fn every_verdict_reads_back_as_it_was_written() {
        let b = budget(2, Some(9_000));
        for auto in [
            Auto::Scheduled {
                attempt: 3,
                due: 9_000,
            },
            Auto::Resuming { attempt: 2 },
            Auto::Cancelled,
            Auto::Held(Hold::Off),
            Auto::Held(Hold::NoSessionId),
            Auto::Held(Hold::Unwatched),
            Auto::Held(Hold::Deliberate("exit 130".into())),
            Auto::Held(Hold::Deliberate("exit 143 (SIGTERM)".into())),
            Auto::Held(Hold::NoSession(
                "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into(),
            )),
            Auto::Held(Hold::Refused(
                "directory /home/u/my proj no longer exists".into(),
            )),
            Auto::Held(Hold::GaveUp {
                attempts: 3,
                hourly: false,
            }),
            Auto::Held(Hold::GaveUp {
                attempts: 2,
                hourly: true,
            }),
        ] {
            let t = text("p42", &auto).unwrap();
            assert_eq!(parse(&t, &b), Some(("p42".into(), auto)), "{t}");
        }
        assert_eq!(text("p42", &Auto::Idle), None);
    }

    #[test]
    fn a_scheduled_resume_that_ran_or_was_dropped_is_no_longer_pending() {
        assert_eq!(
            parse("p42 scheduled", &budget(1, None)),
            Some(("p42".into(), Auto::Idle))
        );
    }

    #[test]
    fn garbage_is_judged_again_never_guessed() {
        for junk in ["", "p42", "p42 maybe", "p42 gave_up x", "p42 deliberate"] {
            assert_eq!(parse(junk, &budget(0, None)), None, "{junk:?}");
        }
    }

    #[test]
    fn shell_deaths_seen_a_moment_apart_are_the_same_death() {
        assert!(same_death("s100", "s104"));
        assert!(!same_death("s100", "s130"));
        assert!(!same_death("p100", "p101"));
        assert!(same_death("p100", "p100"));
    }
}
