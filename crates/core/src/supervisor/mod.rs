//! The auto-resume policy, as pure data and verdicts: which deaths are resumed, after what
//! delay, how many times, and when the budget refills. No I/O, no clock: `now` is given.

use crate::cause::{Cause, Stop};
use crate::pane::{signal_name, signal_number, Exit, Opt};
use crate::settings::{AutoResume, AutoResumeOverride};
use crate::time::Millis;

const HOUR_MS: Millis = 3_600_000;

/// The policy for one agent kind (global `[auto_resume]` with the kind's overrides).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub enabled: bool,
    pub max_attempts: u32,
    pub backoff_secs: Vec<u64>,
    pub healthy_after_secs: u64,
    pub max_per_hour: u32,
    pub never_exit_codes: Vec<i32>,
    pub never_signals: Vec<i32>,
    pub slow_backoff_secs: Vec<u64>,
}

impl Policy {
    pub fn resolve(global: &AutoResume, over: Option<&AutoResumeOverride>) -> Policy {
        let o = over.cloned().unwrap_or_default();
        let signals = o
            .never_signals
            .unwrap_or_else(|| global.never_signals.clone());
        Policy {
            enabled: o.enabled.unwrap_or(global.enabled),
            max_attempts: o.max_attempts.unwrap_or(global.max_attempts),
            backoff_secs: o
                .backoff_secs
                .unwrap_or_else(|| global.backoff_secs.clone()),
            healthy_after_secs: o.healthy_after_secs.unwrap_or(global.healthy_after_secs),
            max_per_hour: o.max_per_hour.unwrap_or(global.max_per_hour),
            never_exit_codes: o
                .never_exit_codes
                .unwrap_or_else(|| global.never_exit_codes.clone()),
            never_signals: signals.iter().filter_map(|s| signal_number(s)).collect(),
            slow_backoff_secs: o
                .slow_backoff_secs
                .unwrap_or_else(|| global.slow_backoff_secs.clone()),
        }
    }

    /// Delay before attempt `n` (1-based); the last value repeats.
    pub fn backoff_ms(&self, attempt: u32) -> Millis {
        nth_secs(&self.backoff_secs, attempt, 2)
    }

    /// The same after an overloaded API or a network error.
    pub fn slow_backoff_ms(&self, attempt: u32) -> Millis {
        nth_secs(&self.slow_backoff_secs, attempt, 30)
    }

    pub fn healthy_ms(&self) -> Millis {
        self.healthy_after_secs.saturating_mul(1000)
    }
}

/// Value `n` (1-based; the last repeats) of a list of seconds, in ms.
fn nth_secs(list: &[u64], n: u32, default: u64) -> Millis {
    let i = (n.saturating_sub(1) as usize).min(list.len().saturating_sub(1));
    list.get(i).copied().unwrap_or(default).saturating_mul(1000)
}

impl Default for Policy {
    fn default() -> Self {
        Policy::resolve(&AutoResume::default(), None)
    }
}

/// What is left of a pane's auto-resume budget. Kept in pane options so that restarting
/// agentwatch neither refills nor loses it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Budget {
    /// Auto-resumes since the last healthy run.
    pub attempts: u32,
    /// When each auto-resume of the last hour happened (the flap breaker).
    pub recent: Vec<Millis>,
    /// A scheduled resume: when it is due.
    pub next_due: Option<Millis>,
    /// The user turned auto-resume off for this pane.
    pub paused: bool,
    /// Continue at a usage limit's reset, switched for this pane with `C` against
    /// `[auto_continue] enabled` (`None`: as configured). Kept in `@agentwatch_paused` as
    /// a second word (`continue`, `nocontinue`), so that every instance reads it.
    pub continues: Option<bool>,
    /// The reset of the last usage limit `continue` was typed at (`continued=<ms>` in the
    /// same option): never twice for one limit, whoever supervises next.
    pub continued: Option<Millis>,
}

impl Budget {
    /// Folds in what another instance may have written: the larger count and history win.
    pub fn merge(&mut self, other: &Budget) {
        self.attempts = self.attempts.max(other.attempts);
        for t in &other.recent {
            if !self.recent.contains(t) {
                self.recent.push(*t);
            }
        }
        self.recent.sort_unstable();
        self.paused = self.paused || other.paused;
        self.continues = self.continues.or(other.continues);
        self.continued = self.continued.max(other.continued);
    }

    /// Reads the pane options (`@agentwatch_attempts`, `@agentwatch_resumes`,
    /// `@agentwatch_next`, `@agentwatch_paused`); anything unreadable counts as absent.
    pub fn from_options(attempts: &str, resumes: &str, next: &str, paused: &str) -> Budget {
        Budget {
            attempts: attempts.trim().parse().unwrap_or(0),
            recent: resumes
                .split(',')
                .filter_map(|t| t.trim().parse().ok())
                .collect(),
            next_due: next.trim().parse().ok(),
            paused: paused.split_whitespace().any(|w| w == "1"),
            continues: paused.split_whitespace().find_map(|w| match w {
                "continue" => Some(true),
                "nocontinue" => Some(false),
                _ => None,
            }),
            continued: paused
                .split_whitespace()
                .find_map(|w| w.strip_prefix("continued=")?.parse().ok()),
        }
    }

    /// The options that store this budget.
    pub fn to_options(&self) -> Vec<(Opt, String)> {
        let recent: Vec<String> = self.recent.iter().map(|t| t.to_string()).collect();
        vec![
            (Opt::Attempts, self.attempts.to_string()),
            (Opt::Resumes, recent.join(",")),
            (
                Opt::Next,
                self.next_due.map(|t| t.to_string()).unwrap_or_default(),
            ),
            (Opt::Paused, {
                let continued = self.continued.map(|t| format!("continued={t}"));
                let words: Vec<&str> = [
                    self.paused.then_some("1"),
                    self.continues
                        .map(|c| if c { "continue" } else { "nocontinue" }),
                    continued.as_deref(),
                ]
                .into_iter()
                .flatten()
                .collect();
                words.join(" ")
            }),
        ]
    }

    fn forget_old(&mut self, now: Millis) {
        self.recent.retain(|&t| now.saturating_sub(t) < HOUR_MS);
    }
}

/// Why a death is left alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Hold {
    /// Auto-resume is off (globally, for the kind, or for the pane).
    Off,
    /// The exit was deliberate or clean (`exit 0`, `exit 130`, SIGTERM...).
    Deliberate(String),
    /// Resuming needs a session id and none is known: never a silent fresh start.
    NoSessionId,
    /// The budget is spent: `attempts` used, or the hourly breaker tripped.
    GaveUp { attempts: u32, hourly: bool },
    /// It died while no agentwatch watched: an old death is the user's to relaunch.
    Unwatched,
    /// The relaunch resumed a session the agent has no record of (it said so), and the
    /// agent cannot be started again under that id: running the same argv again would fail
    /// the same way.
    NoSession(String),
    /// The relaunch was refused for a cause that waiting will not remove (the directory is
    /// gone, the crash record cannot be written): the reason, kept until the next death.
    Refused(String),
    /// Why it stopped is not fixed by resuming: a login needed, a usage limit with no
    /// reset said, out of memory again after a resume, a session the agent refused.
    Cause(Cause),
}

impl Hold {
    /// Why the death is not (or no longer) resumed, in the words of the card, `status` and
    /// the journal; `None` for the holds the card words on its own (`Off`, `GaveUp`).
    pub fn reason(&self, agent: &str) -> Option<String> {
        Some(match self {
            Hold::Deliberate(what) => format!("not auto-resumed: {what} is a deliberate stop"),
            Hold::NoSessionId => crate::resume::no_id_words(agent),
            Hold::Unwatched => {
                "not auto-resumed: it died while no agentwatch was watching (r resumes it)".into()
            }
            Hold::NoSession(id) => crate::resume::no_session_words(agent, id),
            Hold::Refused(why) => format!("not auto-resumed: {why}"),
            Hold::Cause(c) => cause_words(*c, agent),
            Hold::Off | Hold::GaveUp { .. } => return None,
        })
    }
}

/// Why a cause holds the resume, and what the user can do.
fn cause_words(cause: Cause, agent: &str) -> String {
    match cause {
        Cause::Auth => {
            let how = match agent {
                "claude" => "run /login in it (or claude /login)",
                "codex" => "run codex login",
                "gemini" => "run /auth in it",
                _ => "log in again",
            };
            format!("login needed: {how}, then r resumes it")
        }
        Cause::UsageLimit => {
            "not auto-resumed: usage limit with no reset time said (r resumes it)".into()
        }
        Cause::OutOfMemory => {
            "not auto-resumed: out of memory again after a resume (r resumes it)".into()
        }
        Cause::ResumeRejected => {
            format!("not auto-resumed: {agent} refused to resume the session (R starts it fresh)")
        }
        c => format!("not auto-resumed: {}", c.label()),
    }
}

/// The verdict on a death.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Resume with attempt number `attempt`, due at `due`.
    Resume {
        attempt: u32,
        due: Millis,
    },
    Hold(Hold),
}

/// What decides a verdict besides the budget: why it stopped, and the margin after a usage
/// limit's reset.
#[derive(Debug, Clone, Copy, Default)]
pub struct Why<'a> {
    pub stop: Option<&'a Stop>,
    pub margin_ms: Millis,
}

/// Judges a death. `run_ms` is how long the process ran (if known); `can_resume` is false
/// when resuming would need a session id that is not known. Updates the budget: a healthy
/// run refills it, a scheduled resume is recorded in `next_due`.
///
/// By cause: a usage limit is resumed at its reset plus the margin and costs no attempt; a
/// login needed is held; an overloaded API or a network error backs off longer; out of
/// memory gets one attempt.
#[allow(clippy::too_many_arguments)]
pub fn on_death(
    policy: &Policy,
    global_on: bool,
    budget: &mut Budget,
    exit: Exit,
    run_ms: Option<Millis>,
    can_resume: bool,
    now: Millis,
    why: Why,
) -> Verdict {
    budget.forget_old(now);
    if run_ms.is_some_and(|r| r >= policy.healthy_ms()) {
        budget.attempts = 0;
    }
    budget.next_due = None;
    if let Some(what) = deliberate(exit, policy) {
        return Verdict::Hold(Hold::Deliberate(what));
    }
    if !policy.enabled || !global_on || budget.paused {
        return Verdict::Hold(Hold::Off);
    }
    if !can_resume {
        return Verdict::Hold(Hold::NoSessionId);
    }
    let cause = why.stop.map(|s| s.cause);
    match (cause, why.stop.and_then(|s| s.resets_at)) {
        (Some(Cause::Auth), _) => return Verdict::Hold(Hold::Cause(Cause::Auth)),
        (Some(Cause::UsageLimit), None) => return Verdict::Hold(Hold::Cause(Cause::UsageLimit)),
        // Not before the reset, whatever the budget: waiting is the cure, and it costs no
        // attempt (the attempt shown is the one it would be). Judged again after the reset
        // (the resume failed), it is an ordinary death.
        (Some(Cause::UsageLimit), Some(reset)) if reset.saturating_add(why.margin_ms) > now => {
            let due = reset.saturating_add(why.margin_ms);
            budget.next_due = Some(due);
            return Verdict::Resume {
                attempt: budget.attempts + 1,
                due,
            };
        }
        (Some(Cause::UsageLimit), Some(_)) => {}
        (Some(Cause::OutOfMemory), _) if budget.attempts >= 1 => {
            return Verdict::Hold(Hold::Cause(Cause::OutOfMemory))
        }
        _ => {}
    }
    if budget.attempts >= policy.max_attempts {
        return Verdict::Hold(Hold::GaveUp {
            attempts: budget.attempts,
            hourly: false,
        });
    }
    if budget.recent.len() as u32 >= policy.max_per_hour {
        return Verdict::Hold(Hold::GaveUp {
            attempts: budget.attempts,
            hourly: true,
        });
    }
    let attempt = budget.attempts + 1;
    let backoff = if cause.is_some_and(Cause::is_transient) {
        policy.slow_backoff_ms(attempt)
    } else {
        policy.backoff_ms(attempt)
    };
    let due = now.saturating_add(backoff);
    budget.next_due = Some(due);
    Verdict::Resume { attempt, due }
}

/// What makes `exit` a deliberate stop under `policy`, in short (`exit 0`, `exit 130`,
/// `SIGTERM`, `exit 143 (SIGTERM)`); `None` when it is not one. A program that handles
/// SIGTERM or SIGHUP and exits with 128+N (claude does) was stopped as deliberately as one
/// the signal killed.
pub fn deliberate(exit: Exit, policy: &Policy) -> Option<String> {
    match exit {
        Exit::Code(c) if policy.never_exit_codes.contains(&c) || c == 0 => {
            Some(format!("exit {c}"))
        }
        Exit::Signal(s) if policy.never_signals.contains(&s) => Some(exit.short()),
        Exit::Code(c) if c > 128 && policy.never_signals.contains(&(c - 128)) => {
            let name = signal_name(c - 128).unwrap_or("a signal");
            Some(format!("exit {c} ({name})"))
        }
        _ => None,
    }
}

/// Records that a resume at a usage limit's reset is carried out now: it costs no attempt
/// and does not count towards the hourly breaker (waiting was the cure, not a retry). The
/// number it goes by is the attempt it would have been.
pub fn on_free_resume(budget: &mut Budget) -> u32 {
    budget.next_due = None;
    budget.attempts + 1
}

/// Records that a scheduled resume is being carried out now.
pub fn on_resume(budget: &mut Budget, now: Millis) -> u32 {
    budget.forget_old(now);
    budget.attempts += 1;
    budget.recent.push(now);
    budget.next_due = None;
    budget.attempts
}

/// A manual relaunch (`r`/`R`): the user took over, so the count starts again.
pub fn on_manual(budget: &mut Budget) {
    budget.attempts = 0;
    budget.next_due = None;
}

/// A pane that has run healthily since its last start gets its budget back.
pub fn refill_if_healthy(policy: &Policy, budget: &mut Budget, run_ms: Millis) -> bool {
    if budget.attempts > 0 && run_ms >= policy.healthy_ms() {
        budget.attempts = 0;
        return true;
    }
    false
}

#[cfg(test)]
mod tests;
