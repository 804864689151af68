//! What a live agent is doing, as far as can be told: working, waiting for its user, or idle
//! at its input box. Each source that can tell is kept apart, and the most exact one that
//! says something decides; when none does, it is not known and not said. Pure.
//!
//! The sources, most exact first:
//! - the agent's own word: claude's per-process file (`~/.claude/sessions/<pid>.json`,
//!   `status` idle or busy);
//! - a hook's word: the pane options agent hook plugins write (`@pane_status`,
//!   `@pane_wait_reason`), agentwatch's own hooks among them;
//! - the window's output (tmux's `window_activity`): changing, the agent is working;
//! - its screen once the output stopped: a prompt for its user (waiting), the line it shows
//!   while it works (working), or, for a kind whose working line is known, neither (idle).
//!
//! The agent's own word decides when there is one (claude says `waiting` itself, with what
//! for); otherwise a prompt for its user from a hook or on its screen beats the rest.

use crate::time::Millis;

/// How long an agent's window has no output before its screen is looked at, where the
/// output is known from tmux's window output time (whole seconds, read every 2 s).
pub const QUIET_MS: Millis = 2_000;

/// The same where the pane's output is heard as it happens (control mode's `%output`): an
/// agent at work redraws its spinner several times a second (claude, codex and gemini every
/// 50-200 ms), so half a second without a byte is a stop.
pub const QUIET_HEARD_MS: Millis = 500;

/// A window's output time older than this is not taken as the start of a wait.
const PLAUSIBLE_MS: Millis = 30 * 24 * 3_600_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Doing {
    Working,
    /// A permission prompt, a question, a trust or login dialog: it waits for its user.
    Waiting,
    /// Its turn is over; it sits at its input box.
    Idle,
    /// Alive at its account's usage limit: it can do nothing until the limit resets.
    Limited,
}

impl Doing {
    pub fn word(self) -> &'static str {
        match self {
            Doing::Working => "working",
            Doing::Waiting => "waiting",
            Doing::Idle => "idle",
            Doing::Limited => "limited",
        }
    }
}

/// Which source told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Told {
    /// The agent's own state file.
    File,
    /// A pane option written by a hook.
    Hook,
    /// The window's output time.
    Output,
    /// A look at its screen.
    Screen,
}

impl Told {
    pub fn word(self) -> &'static str {
        match self {
            Told::File => "file",
            Told::Hook => "hook",
            Told::Output => "output",
            Told::Screen => "screen",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Told::File => "the agent's own state file",
            Told::Hook => "a hook's pane option",
            Told::Output => "the window's output",
            Told::Screen => "its screen",
        }
    }
}

/// One source's word: what the agent does, and the line or value that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub doing: Doing,
    pub told: Told,
    pub why: String,
    /// When the source says this began, where it says (claude's `updatedAt`).
    pub at: Option<Millis>,
}

impl Report {
    pub fn new(doing: Doing, told: Told, why: impl Into<String>) -> Report {
        Report {
            doing,
            told,
            why: why.into(),
            at: None,
        }
    }

    pub fn since(mut self, at: Option<Millis>) -> Report {
        self.at = at;
        self
    }
}

/// The supervisor's word on what a live agent does, kept with its pane (read through
/// `@agentwatch_verdict_fmt`, beside the bare word of `@agentwatch_state` that status lines
/// show) so that a one-shot `status` reports what the supervisor decided, since when it
/// did, rather than deciding again from one look: `<word> <since ms> <told> <why>`, and
/// after a tab what a prompt asks (see [`asked`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub doing: Doing,
    pub since: Millis,
    pub told: Told,
    pub why: String,
    /// What the prompt it waits at asks.
    pub asked: Option<String>,
}

impl Verdict {
    pub fn of(report: &Report, since: Millis, asked: Option<&str>) -> Verdict {
        Verdict {
            doing: report.doing,
            since,
            told: report.told,
            why: report.why.clone(),
            asked: asked.map(str::to_string),
        }
    }

    /// Whether it says what `report` since `since` says, asking `asked` (as written: the
    /// line's control characters are spaces).
    pub fn says(&self, report: &Report, since: Millis, asked: Option<&str>) -> bool {
        self.doing == report.doing
            && self.since == since
            && self.told == report.told
            && one_line(&report.why).eq(self.why.chars())
            && match (&self.asked, asked) {
                (Some(a), Some(b)) => one_line(b).eq(a.chars()),
                (None, None) => true,
                _ => false,
            }
    }

    /// The option's value: one line, control characters of the lines it quotes made
    /// spaces; what a prompt asks after a tab.
    pub fn value(&self) -> String {
        let mut v = format!(
            "{} {} {} {}",
            self.doing.word(),
            self.since,
            self.told.word(),
            one_line(&self.why).collect::<String>()
        );
        if let Some(a) = &self.asked {
            v.push('\t');
            v.extend(one_line(a));
        }
        v
    }

    /// What it says and since when, read without copying its words (every card, every
    /// settle, beside a supervisor).
    pub fn doing_since(value: &str) -> Option<(Doing, Millis)> {
        let mut f = value.splitn(3, ' ');
        let doing = match f.next()? {
            "working" => Doing::Working,
            "waiting" => Doing::Waiting,
            "idle" => Doing::Idle,
            "limited" => Doing::Limited,
            _ => return None,
        };
        Some((doing, f.next()?.parse().ok()?))
    }

    pub fn parse(value: &str) -> Option<Verdict> {
        let (doing, since) = Verdict::doing_since(value)?;
        let mut f = value.splitn(4, ' ').skip(2);
        let told = match f.next()? {
            "file" => Told::File,
            "hook" => Told::Hook,
            "output" => Told::Output,
            "screen" => Told::Screen,
            _ => return None,
        };
        let rest = f.next().unwrap_or_default();
        let (why, asked) = match rest.split_once('\t') {
            Some((why, asked)) => (why, Some(asked.to_string()).filter(|a| !a.is_empty())),
            None => (rest, None),
        };
        Some(Verdict {
            doing,
            since,
            told,
            why: why.to_string(),
            asked,
        })
    }
}

/// What a prompt asks, from the lines next to its `question` on the `screen`: below it, up
/// to its choices, where it says it there (codex: `Environment: local · Reason: … · $ touch
/// …` under `Would you like to run the following command?`), else above it (claude's `Bash
/// command · ls -la · List the files` above `Do you want to proceed?`). Up to the dialog's
/// edge (a box corner or a rule), blank lines and borders left out, at most four lines from
/// the eight there; `None` when nothing stands there.
pub fn asked(screen: &str, question: &str) -> Option<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines.iter().rposition(|l| l.contains(question))?;
    let below = dialog_lines(lines[at + 1..].iter(), true);
    let out = if below.is_empty() {
        let mut above = dialog_lines(lines[..at].iter().rev(), false);
        above.reverse();
        above
    } else {
        below
    };
    (!out.is_empty()).then(|| out.join(" · "))
}

/// Up to four non-blank lines of a dialog, in the order given, up to its edge (a box corner
/// or a rule) or, `below` its question, its first choice (`› 1. Yes`, `❯ 1. Yes`).
fn dialog_lines<'a>(lines: impl Iterator<Item = &'a &'a str>, below: bool) -> Vec<String> {
    const BORDERS: &[char] = &['│', '┃', '║', '|'];
    let mut out = Vec::new();
    for l in lines.take(8) {
        let t = l.trim();
        let rule = t.chars().count() >= 3 && t.chars().all(|c| "─━═-╌┄".contains(c));
        let corner = ['╭', '┌', '╔', '┏', '╰', '└', '╚', '┗'];
        if rule || t.starts_with(corner) {
            break;
        }
        let inner = t.trim_matches(BORDERS).trim();
        if inner.is_empty() {
            continue;
        }
        let choice = inner.trim_start_matches(['›', '❯', '>', '●', '○', ' ']);
        let numbered = choice
            .split_once('.')
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if below && numbered {
            break;
        }
        out.push(one_line(inner).collect::<String>());
        if out.len() == 4 {
            break;
        }
    }
    out
}

/// A line as one line: trimmed, control characters made spaces.
fn one_line(why: &str) -> impl Iterator<Item = char> + '_ {
    why.trim_matches(|c: char| c.is_whitespace() || c.is_control())
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
}

/// A hook's pane options as last read, and whether the window's output has since overtaken
/// a `waiting` it said (answered prompts are not always followed by another hook call).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HookWord {
    pub status: String,
    pub reason: String,
    pub seen_at: Millis,
    pub overtaken: bool,
}

/// The word of a hook plugin's `@pane_status` value, when it is one this knows. Plugins in
/// use write `running`, `waiting`, `idle`, `background`, `error` (tmux-agent-sidebar, and
/// agentwatch's own hooks), `running`, `needs-input`, `done` (agentgrid), and the like.
pub fn hook_doing(status: &str) -> Option<Doing> {
    let s = status.trim().to_ascii_lowercase();
    Some(match s.as_str() {
        "working" | "running" | "busy" | "thinking" | "active" => Doing::Working,
        "waiting" | "wait" | "needs-input" | "needs_input" | "input" | "attention"
        | "permission" | "blocked" | "asking" => Doing::Waiting,
        // tmux-agent-sidebar: `background` (its turn over, a background shell runs) and
        // `error` (the turn failed, e.g. StopFailure); the agent sits at its input box.
        "idle" | "done" | "ready" | "finished" | "complete" | "completed" | "stopped"
        | "background" | "error" => Doing::Idle,
        _ => return None,
    })
}

/// The word of claude's `status` field in its per-process file (claude 2.1.197 writes
/// `busy`, `waiting` with `waitingFor`, `idle`, and `shell`: idle with a background shell
/// task alive).
pub fn file_doing(status: &str) -> Option<Doing> {
    match status {
        "busy" => Some(Doing::Working),
        "idle" | "shell" => Some(Doing::Idle),
        "waiting" => Some(Doing::Waiting),
        _ => None,
    }
}

/// An agent's own state file, as read (claude's `sessions/<pid>.json`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgentFile {
    pub status: String,
    /// `waitingFor`, while it waits (`permission prompt`, `dialog open`, `input needed`).
    pub waiting_for: Option<String>,
    /// `updatedAt`, epoch ms.
    pub updated_at: Option<Millis>,
    /// `procStart`: the kernel's start time of the process it is about.
    pub proc_start: Option<String>,
    /// `sessionId`: the session the process runs, by the agent's own word.
    pub session_id: Option<String>,
}

impl AgentFile {
    pub fn report(&self) -> Option<Report> {
        let doing = file_doing(&self.status)?;
        let why = match (&self.waiting_for, self.status.as_str()) {
            (Some(w), _) if doing == Doing::Waiting => w.clone(),
            (_, "shell") => "idle, a background shell task runs".to_string(),
            _ => format!("status {}", self.status),
        };
        Some(Report::new(doing, Told::File, why).since(self.updated_at))
    }
}

/// What a live agent is doing: each source's last word, and what was decided from them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Attention {
    /// Its window's output time at the last look, and when that last changed (0: not seen
    /// changing).
    pub output: Option<(u64, Millis)>,
    /// When the current stretch of output began.
    pub working_since: Option<Millis>,
    /// Its screen was looked at since the output stopped.
    pub looked: bool,
    /// What the last look at its screen said.
    pub screen: Option<Report>,
    /// What the prompt it waits at asks, as its screen showed it (see [`asked`]).
    pub asked: Option<String>,
    /// What the agent's own state file says, and the pid it is about.
    pub file: Option<Report>,
    pub file_pid: Option<u32>,
    /// What a hook's pane options say.
    pub hook: Option<HookWord>,
    /// What was decided, and since when.
    pub now: Option<(Report, Millis)>,
    /// A source's word changed since the last decision (an unchanged card costs nothing to
    /// settle: this runs for every card on every poll).
    pub changed: bool,
    /// First seen while its window had just written (when): tmux's output time is whole
    /// seconds, so more output within that second would go unseen, and the first look may
    /// have caught the screen half drawn. Looked at once more when it has been quiet.
    pub recheck: Option<Millis>,
    /// `output` holds when its pane last wrote, to the millisecond, as heard (control mode's
    /// `%output`), not tmux's window output time in seconds.
    pub heard: bool,
}

impl Attention {
    /// Beside a live supervisor: the state it decided too dates from when it did (its
    /// `verdict` on the pane), when that is earlier and about this run (`start`), so every
    /// dashboard says the same age (one opened later does not start at 0 s). A verdict
    /// is read only while its supervisor lives: one left by a supervisor that quit is old.
    pub fn date_from(&mut self, verdict: &str, start: Option<Millis>) {
        let Some((r, since)) = self.now.as_mut() else {
            return;
        };
        if let Some((doing, at)) = Verdict::doing_since(verdict) {
            if doing == r.doing && at < *since && at >= start.unwrap_or(0) {
                *since = at;
            }
        }
    }

    /// The decided state and since when; `None` when it cannot be told.
    pub fn state(&self) -> Option<(Doing, Millis)> {
        self.now.as_ref().map(|(v, t)| (v.doing, *t))
    }

    pub fn is(&self, doing: Doing) -> bool {
        self.state().is_some_and(|(d, _)| d == doing)
    }

    /// The line or value behind a wait, while it waits.
    pub fn waiting_for(&self) -> Option<&str> {
        match &self.now {
            Some((v, _)) if v.doing == Doing::Waiting => Some(&v.why),
            _ => None,
        }
    }

    /// What the prompt it waits at asks (see [`asked`]), while it waits.
    pub fn asks(&self) -> Option<&str> {
        self.asked.as_deref().filter(|_| self.is(Doing::Waiting))
    }

    /// Whether its screen is due a look: its output stopped (or is known and has not been
    /// seen to change) and it was not looked at since.
    pub fn look_due(&self) -> bool {
        self.output.is_some() && self.working_since.is_none() && !self.looked
    }

    /// Whether its screen tells more than its own file: there is none, or it says the turn
    /// ended or a dialog is open (a usage limit, and claude's menu over it, show only on
    /// the screen).
    pub fn screen_tells(&self) -> bool {
        self.file
            .as_ref()
            .is_none_or(|f| matches!(f.doing, Doing::Idle | Doing::Waiting))
    }

    /// Looks at its screen again at the next quiet poll (a limit whose reset passed: is its
    /// banner still up?).
    pub fn look_again(&mut self) {
        self.looked = false;
    }

    /// Takes in the window's output time at `now`; says whether the screen should be looked
    /// at now ([`Attention::look_due`]).
    pub fn saw_output(&mut self, at: u64, now: Millis) -> bool {
        match self.output {
            Some((old, _)) if old != at && self.is(Doing::Limited) => {
                self.output = Some((at, now));
                self.redraw_at_limit();
            }
            Some((old, _)) if old != at => {
                self.recheck = None;
                self.output = Some((at, now));
                self.changed |= self.working_since.is_none() || self.screen.is_some();
                self.working_since.get_or_insert(now);
                self.looked = false;
                self.screen = None;
                self.overtake_hook(now);
            }
            Some((_, at)) => {
                if now.saturating_sub(at) >= QUIET_MS && self.working_since.is_some() {
                    self.working_since = None;
                    self.changed = true;
                }
                if let Some(first) = self.recheck {
                    if now.saturating_sub(first) >= QUIET_MS {
                        self.recheck = None;
                        self.looked = false;
                    }
                }
            }
            // First sight: whether it is writing is not known yet; its screen says the rest.
            None => {
                self.output = Some((at, 0));
                self.changed = true;
                // Missed only if the look comes within the second of that output; a second
                // more of slack for a host's clock, moved in whole seconds.
                let written = at.saturating_mul(1000);
                self.recheck = (written <= now && now - written < 2_000).then_some(now);
            }
        }
        self.look_due()
    }

    /// Takes in when its pane last wrote, heard as it happened (`None`: not since hearing
    /// began), at `now`; says whether the screen should be looked at now. Exact where
    /// [`Attention::saw_output`] has whole seconds: the output stops when half a second
    /// passes without a byte ([`QUIET_HEARD_MS`]), or at once where its stop is known
    /// (`stopped`: what its processes wrote was counted quiet), and a wait dates from the
    /// last byte.
    pub fn heard_output(&mut self, last: Option<Millis>, now: Millis, stopped: bool) -> bool {
        if !self.heard {
            // Heard from now on: what was read of seconds says nothing of this.
            self.heard = true;
            self.output = None;
            self.working_since = None;
            self.recheck = None;
        }
        // Nothing heard since hearing began: no news where a byte was heard before (a new
        // connection hears from scratch), else none yet.
        let at = last.or(self.output.map(|(t, _)| t)).unwrap_or(0);
        match self.output {
            Some((old, _)) if old != at && self.is(Doing::Limited) => {
                self.output = Some((at, at));
                self.redraw_at_limit();
            }
            Some((old, _)) if old != at => {
                self.output = Some((at, at));
                self.changed |= self.working_since.is_none() || self.screen.is_some();
                self.working_since.get_or_insert(at.min(now));
                self.looked = false;
                self.screen = None;
                self.overtake_hook(now);
                if stopped {
                    // It wrote since the last poll, and has stopped since.
                    self.working_since = None;
                    self.changed = true;
                }
            }
            Some((at, _)) => {
                let quiet = stopped || now.saturating_sub(at) >= QUIET_HEARD_MS;
                if quiet && self.working_since.is_some() {
                    self.working_since = None;
                    self.changed = true;
                }
            }
            // First heard: writing now, or its screen says the rest.
            None => {
                self.output = Some((at, at));
                self.changed = true;
                if !stopped && last.is_some_and(|t| now.saturating_sub(t) < QUIET_HEARD_MS) {
                    self.working_since = Some(at.min(now));
                }
            }
        }
        self.look_due()
    }

    /// An agent at its limit wrote (a hint cleared, its menu closed, or it went on): its
    /// screen says which, read at once; it stays `limited` until then (no working ->
    /// limited flutter for a footer redrawn).
    fn redraw_at_limit(&mut self) {
        self.recheck = None;
        self.working_since = None;
        self.looked = false;
        self.screen = None;
        self.changed = true;
    }

    /// No longer heard: output times are tmux's seconds again, from the next read.
    pub fn unheard(&mut self) {
        if self.heard {
            self.heard = false;
            self.output = None;
            self.working_since = None;
            self.recheck = None;
            self.changed = true;
        }
    }

    /// A wait a hook told of, answered: the agent writes again well after it.
    fn overtake_hook(&mut self, now: Millis) {
        if let Some(h) = self.hook.as_mut() {
            if !h.overtaken
                && hook_doing(&h.status) == Some(Doing::Waiting)
                && now.saturating_sub(h.seen_at) >= QUIET_MS
            {
                h.overtaken = true;
                self.changed = true;
            }
        }
    }

    /// Takes in what its screen said.
    pub fn looked_at(&mut self, screen: Option<Report>, asked: Option<String>) {
        self.looked = true;
        self.screen = screen;
        self.asked = asked;
        self.changed = true;
    }

    /// Takes in the agent's own state file's word, and the pid it is about.
    pub fn file_says(&mut self, pid: Option<u32>, file: Option<Report>) {
        if self.file != file || self.file_pid != pid {
            self.file = file;
            self.file_pid = pid;
            self.changed = true;
        }
    }

    /// Takes in a hook's pane options (empty: none set).
    pub fn hook_says(&mut self, status: &str, reason: &str, now: Millis) {
        if status.is_empty() {
            self.changed |= self.hook.take().is_some();
            return;
        }
        match &mut self.hook {
            Some(h) if h.status == status => {
                if h.reason != reason {
                    h.reason = reason.to_string();
                    self.changed = true;
                }
            }
            _ => {
                self.changed = true;
                self.hook = Some(HookWord {
                    status: status.to_string(),
                    reason: reason.to_string(),
                    seen_at: now,
                    overtaken: false,
                })
            }
        }
    }

    /// The hook's word as a verdict, unless the output overtook it.
    pub fn hook_report(&self) -> Option<Report> {
        let h = self.hook.as_ref().filter(|h| !h.overtaken)?;
        let doing = hook_doing(&h.status)?;
        let why = if h.reason.is_empty() {
            format!("@pane_status {}", h.status)
        } else {
            h.reason.clone()
        };
        Some(Report::new(doing, Told::Hook, why))
    }

    /// Each source's word, most exact first (what `explain` prints).
    pub fn words(&self) -> Vec<Report> {
        // Said as it was learnt: a byte heard as it was written, or tmux's output time of
        // the pane's window (seconds, and the window's, not the pane's).
        let why = if self.heard {
            "its output is heard"
        } else {
            "its window has output"
        };
        let output = self
            .working_since
            .map(|_| Report::new(Doing::Working, Told::Output, why));
        [
            self.file.clone(),
            self.hook_report(),
            output,
            self.screen.clone(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// What the sources say together: a usage limit on its screen (the agent's own file
    /// says only that its turn ended); the agent's own word; else a prompt for its user from
    /// a hook or on screen; else the most exact source's word.
    pub fn decide(&self) -> Option<Report> {
        if let Some(v) = self.screen.as_ref().filter(|v| v.doing == Doing::Limited) {
            return Some(v.clone());
        }
        if let Some(v) = &self.file {
            return Some(v.clone());
        }
        let words = self.words();
        words
            .iter()
            .find(|v| v.doing == Doing::Waiting)
            .or_else(|| words.first())
            .cloned()
    }

    /// Decides again at `now`; returns the decision when what the agent does changed (an
    /// edge: `Some(None)` when it is no longer known). A new spell dates from `start` (the
    /// agent's) at the earliest: a window's output time may be older than the agent in it.
    pub fn settle(&mut self, now: Millis, start: Option<Millis>) -> Option<Option<Report>> {
        if !self.changed {
            return None;
        }
        // The output stopped and its screen is still to be read: what it shows decides, so
        // the state holds till then (no working -> unknown -> waiting flutter).
        if (self.file.is_none() || self.is(Doing::Limited)) && self.look_due() {
            return None;
        }
        self.changed = false;
        let new = self.decide();
        let old = self.now.as_ref().map(|(v, _)| v.doing);
        match new {
            Some(v) if Some(v.doing) == old => {
                // Same state, maybe another line: kept, the time it began too.
                if let Some((cur, _)) = self.now.as_mut() {
                    *cur = v;
                }
                None
            }
            Some(v) => {
                // A wait or an idle spell seen on a quiet screen began when the output stopped:
                // the window's last output time (tmux's, whole seconds) where it is plausible
                // (not in the future, not over 30 days old), else when the output was seen to
                // change.
                let heard = self.heard;
                let quiet = self.output.and_then(|(secs, seen)| {
                    // Heard: the last byte's time itself (0: none heard yet).
                    if heard {
                        return Some(secs).filter(|&t| t > 0 && t <= now);
                    }
                    let at = secs.saturating_mul(1000);
                    if at <= now && at.saturating_add(PLAUSIBLE_MS) >= now {
                        Some(at)
                    } else {
                        Some(seen).filter(|&s| s > 0)
                    }
                });
                let since = match (v.doing, v.told) {
                    (Doing::Waiting | Doing::Idle | Doing::Limited, Told::Screen) => {
                        quiet.unwrap_or(now)
                    }
                    // The agent's own file dates its word (a `status` run later says the
                    // same `since` as the dashboard that saw the edge).
                    (_, Told::File) => v.at.filter(|&t| t <= now).unwrap_or(now),
                    _ => now,
                };
                let since = since.max(start.unwrap_or(0)).min(now);
                self.now = Some((v.clone(), since));
                Some(Some(v))
            }
            None if old.is_some() => {
                self.now = None;
                Some(None)
            }
            None => None,
        }
    }
}

#[cfg(test)]
mod tests;
