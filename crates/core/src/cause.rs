//! Why an agent stopped: a cause for every death, decided from its exit status, the output
//! it left (screen and history) and what the machine told (the OOM killer), with the lines
//! that decided it. The words that decide each cause are data per agent kind (built in from
//! what the CLIs print, extended in the config), as the `waiting` lines are. Pure.

use serde::Deserialize;

use crate::pane::Exit;
use crate::supervisor::Policy;
use crate::time::Millis;

mod reset;

pub use reset::resets_at;

/// Why an agent stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// The account's usage limit: waits for its reset.
    UsageLimit,
    /// The login expired or the key is invalid: only its user can fix it.
    Auth,
    /// The API was overloaded or failed (429/529/5xx after the CLI's own retries).
    Overloaded,
    /// The API could not be reached.
    Network,
    /// The process ran out of memory (node's heap, or the kernel's OOM killer).
    OutOfMemory,
    /// Asked to resume a session, it said it has none by that id.
    ResumeRejected,
    /// Stopped on purpose: a clean exit, `/exit`, SIGTERM, SIGINT, SIGHUP.
    Deliberate,
    /// Anything else that left an error or a stack trace, or a crashing signal.
    Crash,
    /// Nothing says why.
    Unknown,
}

impl Cause {
    pub const ALL: [Cause; 9] = [
        Cause::UsageLimit,
        Cause::Auth,
        Cause::Overloaded,
        Cause::Network,
        Cause::OutOfMemory,
        Cause::ResumeRejected,
        Cause::Deliberate,
        Cause::Crash,
        Cause::Unknown,
    ];

    /// Its name in `status --json`, the journal and the crash record.
    pub fn word(self) -> &'static str {
        match self {
            Cause::UsageLimit => "usage_limit",
            Cause::Auth => "auth",
            Cause::Overloaded => "overloaded",
            Cause::Network => "network",
            Cause::OutOfMemory => "out_of_memory",
            Cause::ResumeRejected => "resume_rejected",
            Cause::Deliberate => "deliberate",
            Cause::Crash => "crash",
            Cause::Unknown => "unknown",
        }
    }

    pub fn parse(word: &str) -> Option<Cause> {
        Cause::ALL.into_iter().find(|c| c.word() == word)
    }

    /// In words on a card: `✖ usage limit`, `✖ login needed`.
    pub fn label(self) -> &'static str {
        match self {
            Cause::UsageLimit => "usage limit",
            Cause::Auth => "login needed",
            Cause::Overloaded => "API overloaded",
            Cause::Network => "network error",
            Cause::OutOfMemory => "out of memory",
            Cause::ResumeRejected => "resume rejected",
            Cause::Deliberate => "stopped on purpose",
            Cause::Crash => "crash",
            Cause::Unknown => "cause unknown",
        }
    }

    /// Says more than the exit does, so that a short place (a list row) names it instead:
    /// a crash or an unknown cause is said by its exit.
    pub fn is_telling(self) -> bool {
        !matches!(self, Cause::Crash | Cause::Unknown)
    }

    /// Waiting and trying again can fix it, but a crowd trying at once makes it worse.
    pub fn is_transient(self) -> bool {
        matches!(self, Cause::Overloaded | Cause::Network)
    }
}

/// The lines that decide each cause for one agent kind: a line of the output that contains
/// one of them (ASCII case ignored) decides. `resume_rejected` is the kind's `no_session`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CauseWords {
    pub usage_limit: Vec<String>,
    pub auth: Vec<String>,
    pub overloaded: Vec<String>,
    pub network: Vec<String>,
    pub out_of_memory: Vec<String>,
    pub crash: Vec<String>,
    /// A menu the agent opens over its limit banner, dismissed (Escape) before `continue`
    /// is typed: claude's `/rate-limit-options` (`1. Stop and wait for limit to reset`).
    pub limit_menu: Vec<String>,
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

impl CauseWords {
    /// What every CLI can print (node's, the OS's, the HTTP errors'), and each kind's own
    /// words (from what was seen of the CLIs and their trackers: `docs/guide/causes.md`).
    pub fn builtin(agent: &str) -> CauseWords {
        let mut w = CauseWords {
            // claude 2.1.197 prints the banner as `You've hit your <session|weekly|Opus|
            // Sonnet|usage> limit · resets 9:23pm (UTC)`, or `You've hit your limit`; its
            // renderer takes the other prefixes below for the same banner.
            usage_limit: words(&[
                "You've hit your",
                "You've reached your",
                "You're out of usage credits",
                "You're out of extra usage",
                "Your org is out of usage",
                "usage limit reached",
                "limit reached ∙ resets",
                "limit reached · resets",
            ]),
            auth: words(&[
                "Invalid API key",
                "Please run /login",
                "Not logged in",
                "Failed to authenticate",
                "OAuth token revoked",
                "OAuth token has expired",
                "does not have access to Claude",
                "authentication_error",
                "401 Unauthorized",
                "invalid x-api-key",
            ]),
            overloaded: words(&[
                "overloaded_error",
                "Overloaded",
                "API Error: 429",
                "API Error: 500",
                "API Error: 502",
                "API Error: 503",
                "API Error: 504",
                "API Error: 529",
                "429 Too Many Requests",
                "503 Service Unavailable",
                "rate_limit_error",
                "Internal server error",
                "Request rejected (429)",
                "Server is temporarily limiting requests",
                "This is a server-side issue",
                "experiencing high demand",
            ]),
            network: words(&[
                "Unable to connect to API",
                "Connection to the API was lost",
                "Request timed out",
                "Connection error",
                "ECONNREFUSED",
                "ECONNRESET",
                "ENOTFOUND",
                "ETIMEDOUT",
                "EAI_AGAIN",
                "getaddrinfo",
                "fetch failed",
                "error sending request",
                "stream disconnected before completion",
                "Network is unreachable",
            ]),
            out_of_memory: words(&[
                "JavaScript heap out of memory",
                "Reached heap limit",
                "MemoryError",
                "Cannot allocate memory",
                "memory allocation of",
                "Out of memory",
            ]),
            limit_menu: words(&["Stop and wait for limit to reset"]),
            crash: words(&[
                "Error:",
                "error:",
                "panicked at",
                "Traceback (most recent call last)",
                "Segmentation fault",
                "Unhandled",
                "Uncaught",
                "core dumped",
                "FATAL",
                "Exception",
            ]),
        };
        let (limit, auth): (&[&str], &[&str]) = match agent {
            // codex 0.171 (`codex exec`, stderr): `You’ve hit your usage limit. Upgrade to
            // Pro (...) or try again at 9:38 PM.` (a typographic apostrophe).
            "codex" => (
                &["You’ve hit your usage limit", "usage_limit_reached"],
                &[
                    "Your access token could not be refreshed",
                    "Please log in again",
                    "codex login",
                ],
            ),
            "gemini" => (
                &[
                    "Usage limit reached for all",
                    "exhausted your daily quota",
                    "Quota exceeded for quota metric",
                ],
                &["API key not valid", "Please set an Auth method"],
            ),
            _ => (&[], &[]),
        };
        w.usage_limit.extend(words(limit));
        w.auth.extend(words(auth));
        w
    }

    /// These words with `more` added (the config's `[agents.NAME.causes]`).
    pub fn extended(mut self, more: &CauseWords) -> CauseWords {
        for (to, from) in [
            (&mut self.usage_limit, &more.usage_limit),
            (&mut self.auth, &more.auth),
            (&mut self.overloaded, &more.overloaded),
            (&mut self.network, &more.network),
            (&mut self.out_of_memory, &more.out_of_memory),
            (&mut self.crash, &more.crash),
            (&mut self.limit_menu, &more.limit_menu),
        ] {
            to.extend(from.iter().filter(|w| !w.trim().is_empty()).cloned());
        }
        self
    }

    /// Whether `screen` shows a menu over the limit banner (see `limit_menu`).
    pub fn menu_on(&self, screen: &str) -> bool {
        screen.lines().any(|l| has_any(l, &self.limit_menu))
    }

    /// The line of `screen` that says the agent sits at a usage limit now: the bottom-most
    /// banner, unless the agent went on after it (a message of its user or a reply below
    /// it: the banner is an old one still on screen). A banner the agent wrapped (`·
    /// resets` / `8:12pm (UTC)` on the next line, in a narrow pane) is joined.
    pub fn limit_on(&self, screen: &str) -> Option<String> {
        let lines: Vec<&str> = screen.lines().collect();
        let at = lines.iter().rposition(|l| has_any(l, &self.usage_limit))?;
        if went_on(&lines[at..]) {
            return None;
        }
        let mut line = lines[at].trim().to_string();
        // Its continuation: indented deeper, not a new item.
        for next in &lines[at + 1..] {
            let t = next.trim();
            let indented = next.len() - next.trim_start().len() >= 3;
            if t.is_empty() || !indented || t.starts_with(['❯', '>', '╭', '│', '─']) {
                break;
            }
            line.push(' ');
            line.push_str(t);
        }
        Some(line)
    }
}

/// Whether the lines below a limit banner (`lines[0]`) show the conversation going on:
/// claude 2.1.197 draws a reply as `● …`, a message sent as `❯ …` outside its input box
/// (which sits between two `───` rules); its menu (`❯ /rate-limit-options`), the turn's
/// summary (`✻ Worked for 0s`), an empty or drafted input box, a menu's option and the
/// footer do not.
fn went_on(lines: &[&str]) -> bool {
    lines.windows(2).any(|w| {
        let (above, line) = (w[0].trim_start(), w[1].trim_start());
        if line.starts_with(['●', '⏺']) {
            return true;
        }
        let Some(sent) = line.strip_prefix('❯') else {
            return false;
        };
        let sent = sent.trim();
        // A menu's chosen option (`❯ 1. Stop and wait for limit to reset`).
        let option = sent
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        !sent.is_empty()
            && !option
            && !sent.starts_with("/rate-limit-options")
            && !above.starts_with('─')
    })
}

/// Whether `line` holds one of `words`, ASCII case ignored.
fn has_any(line: &str, words: &[String]) -> bool {
    words.iter().any(|w| !w.is_empty() && contains_ci(line, w))
}

fn contains_ci(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.len() <= h.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// A cause with its evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    pub cause: Cause,
    /// What decided it: the exit, and the lines of its output that said so.
    pub evidence: Vec<String>,
    /// For a usage limit: when it resets, where the output says.
    pub resets_at: Option<Millis>,
}

impl Stop {
    fn new(cause: Cause, evidence: Vec<String>) -> Stop {
        Stop {
            cause,
            evidence,
            resets_at: None,
        }
    }

    /// `usage limit · resets 15:45` (`Dec 7 15:45` past a day from `now`), `login
    /// needed`: the cause as a card says it.
    pub fn label(&self, now: Millis, tz: &jiff::tz::TimeZone) -> String {
        match (self.cause, self.resets_at) {
            (Cause::UsageLimit, Some(at)) => {
                format!(
                    "usage limit · resets {}",
                    crate::time::clock_or_date(at, now, tz)
                )
            }
            (c, _) => c.label().to_string(),
        }
    }

    /// The pane option's value (`@agentwatch_cause`): `<cause> <resets ms or -> <line>`,
    /// for `status` and other instances.
    pub fn value(&self) -> String {
        let line = self.evidence.last().map(String::as_str).unwrap_or("");
        format!(
            "{} {} {}",
            self.cause.word(),
            self.resets_at.map_or("-".to_string(), |t| t.to_string()),
            line.split_whitespace().collect::<Vec<_>>().join(" ")
        )
    }

    pub fn parse(value: &str) -> Option<Stop> {
        let mut f = value.trim().splitn(3, ' ');
        let cause = Cause::parse(f.next()?)?;
        let resets_at = match f.next()? {
            "-" => None,
            t => Some(t.parse().ok()?),
        };
        let line = f.next().unwrap_or("").trim();
        Some(Stop {
            cause,
            evidence: if line.is_empty() {
                Vec::new()
            } else {
                vec![line.to_string()]
            },
            resets_at,
        })
    }
}

/// What is known of one death, to decide its cause from.
pub struct Death<'a> {
    pub exit: Exit,
    /// Its last lines (the screen it left and the history above), plain text.
    pub output: &'a str,
    /// The kernel's OOM killer killed something in the agent's cgroup since the last look.
    pub oom_killed: bool,
    /// When it died (or was seen dead): a reset time without a date is the next one after.
    pub at: Millis,
}

/// Decides why an agent stopped. Stopped on purpose (a clean exit, the policy's deliberate
/// codes and signals) first; then the bottom-most line of its output that names a cause
/// (the last words before it died decide); then a crashing signal or any error line; else
/// unknown.
pub fn decide(
    death: &Death,
    words: &CauseWords,
    no_session: &[String],
    policy: &Policy,
    tz: &jiff::tz::TimeZone,
    zones: &jiff::tz::TimeZoneDatabase,
) -> Stop {
    if let Some(stop) = by_exit(death.exit, policy) {
        return stop;
    }
    let exit = death.exit.describe();
    let lines: Vec<&str> = death
        .output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let specific: [(Cause, &[String]); 6] = [
        (Cause::OutOfMemory, &words.out_of_memory),
        (Cause::ResumeRejected, no_session),
        (Cause::UsageLimit, &words.usage_limit),
        (Cause::Auth, &words.auth),
        (Cause::Overloaded, &words.overloaded),
        (Cause::Network, &words.network),
    ];
    for line in lines.iter().rev() {
        if let Some((cause, _)) = specific.iter().find(|(_, w)| has_any(line, w)) {
            let mut stop = Stop::new(*cause, vec![exit, line.to_string()]);
            if *cause == Cause::UsageLimit {
                stop.resets_at = resets_at(line, death.at, tz, zones);
            }
            return stop;
        }
    }
    let killed = matches!(death.exit, Exit::Signal(9) | Exit::Code(137));
    if killed && death.oom_killed {
        return Stop::new(
            Cause::OutOfMemory,
            vec![
                exit,
                "the kernel's OOM killer killed a process of its cgroup".into(),
            ],
        );
    }
    let error = lines.iter().rev().find(|l| has_any(l, &words.crash));
    let crash_signal = match death.exit {
        Exit::Signal(s) => is_crash_signal(s),
        Exit::Code(c) => c > 128 && is_crash_signal(c - 128),
        Exit::Unknown => false,
    };
    match (error, crash_signal) {
        (Some(line), _) => Stop::new(Cause::Crash, vec![exit, line.to_string()]),
        (None, true) => Stop::new(Cause::Crash, vec![exit]),
        (None, false) => Stop::new(Cause::Unknown, vec![exit]),
    }
}

/// The cause where the exit alone tells it (a deliberate stop): no output need be read.
/// The policy's own rule ([`crate::supervisor::deliberate`]), so that the cause and the
/// verdict never disagree.
pub fn by_exit(exit: Exit, policy: &Policy) -> Option<Stop> {
    let what = match exit {
        Exit::Code(0) => "a clean exit".to_string(),
        _ => format!(
            "{} is a deliberate stop",
            crate::supervisor::deliberate(exit, policy)?
        ),
    };
    Some(Stop::new(
        Cause::Deliberate,
        vec![format!("{}: {what}", exit.describe())],
    ))
}

/// SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSYS: the program broke.
fn is_crash_signal(s: i32) -> bool {
    matches!(s, 3 | 4 | 5 | 6 | 7 | 8 | 11 | 31)
}

#[cfg(test)]
mod tests;
