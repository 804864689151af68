//! Pure lifecycle tracking: the previous card of a pane plus its new tmux row gives the new
//! card. Decides running / dead / finished, when it died, and whether the exit status is
//! still being read (the lost-SIGCHLD case).

use crate::attention::{Attention, Doing};
use crate::pane::{Exit, Pane};
use crate::supervisor::{Budget, Hold};
use crate::time::Millis;

/// How many SIGCHLD kicks are tried before an empty status is shown as unknown.
pub const MAX_KICKS: u8 = 3;
/// Kicks are spaced so that tmux has time to reap between them.
pub const KICK_SPACING_MS: Millis = 250;

/// What a pane is doing, as shown on its card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Life {
    Running,
    /// A shell prompt whose agent is not running, with no exit of it known: nothing to say.
    Idle,
    /// Dead, status not read yet: the server is being kicked (lost SIGCHLD).
    Reading,
    /// Dead with a known or given-up-on exit.
    Dead(Exit),
}

impl Life {
    /// A death that should alarm: anything but a clean exit or a live pane.
    pub fn is_alarm(self) -> bool {
        match self {
            Life::Dead(e) => !e.is_clean(),
            Life::Reading => true,
            Life::Running | Life::Idle => false,
        }
    }

    pub fn is_finished(self) -> bool {
        matches!(self, Life::Dead(e) if e.is_clean())
    }

    pub fn is_dead(self) -> bool {
        matches!(self, Life::Dead(_) | Life::Reading)
    }
}

/// One watched pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    pub pane: Pane,
    /// The agent kind, if the pane is an agent.
    pub agent: Option<String>,
    pub life: Life,
    /// When its current process started (from /proc), or when we first saw it alive.
    pub started_at: Option<Millis>,
    /// `started_at` is only when it was first seen alive, not when it started: nothing told
    /// (another host's `/proc` is not read), and it was not seen to start. "Running for" is
    /// then not said.
    pub start_unknown: bool,
    /// When it died (tmux's `pane_dead_time`, else when we first saw it dead).
    pub died_at: Option<Millis>,
    /// When agentwatch first saw this death (the banner went up then).
    pub seen_dead_at: Option<Millis>,
    /// Whether we saw it alive: a pane dead since before agentwatch started has no `started_at`.
    pub seen_alive: bool,
    pub kicks: u8,
    pub kicked_at: Option<Millis>,
    /// Last lines of output (preview), and the pane signature when they were read.
    pub preview: Vec<String>,
    pub preview_sig: Option<(u64, u64, (u32, u32), bool)>,
    pub preview_at: Millis,
    /// A line of news shown on the card (relaunch progress, refusals).
    pub notice: Option<Notice>,
    /// A relaunch of this pane under way, and who asked for it.
    pub relaunch: Option<Relaunch>,
    /// The death (when it was first seen: `seen_dead_at`, which a more exact `died_at` read
    /// later does not change) a crash record was last made of, and the auto-resume it
    /// followed (see [`crate::crash::CrashRecord::attempt`]): a relaunch tried again
    /// after a failed one records the same death, and must not count the failed try.
    pub recorded: Option<(Millis, u32)>,
    /// When a session id lookup last ran for this pane, and whether it was for this death.
    pub discovered_at: Option<Millis>,
    pub discovered_dead: bool,
    /// Auto-resume: the pane's budget and where it stands.
    pub budget: Budget,
    pub auto: Auto,
    /// Whether this death has been judged by the auto-resume policy (as a dashboard beside
    /// the supervisor: announced).
    pub judged: Judged,
    /// The budget options as last read from the pane: a change is another instance's edit
    /// (a relaunch, `a`, `c`) and is taken up.
    pub seen_opts: String,
    /// The budget options as this instance last wrote them.
    pub wrote_opts: String,
    /// The write before that one, until the latest is seen on the pane: two writes can be
    /// in flight (a resume counted, then given back when the relaunch was refused), and the
    /// pane may show the older for a look. Once the latest landed, a value equal to the
    /// older one is another instance's edit (`c` beside the supervisor).
    pub wrote_before: String,
    /// For an agent typed at a shell prompt: the shell, and what runs in its foreground.
    pub launcher: Option<Launcher>,
    /// A session id named in the pane process's own argv (read once per process).
    pub argv_id: Option<String>,
    /// A session id this agent said it has no record of, the last time it was asked to
    /// resume it (`No conversation found with session ID`): not resumed again.
    pub no_session: Option<String>,
    /// The last relaunch that resumed a session by id: a death soon after is looked at for
    /// the agent's "no such session" words.
    pub resumed: Option<Resumed>,
    /// Why its current death happened, once its last lines were read (see
    /// [`crate::cause`]); `stop_asked`: they are being read.
    pub stop: Option<crate::cause::Stop>,
    pub stop_asked: bool,
    /// The usage limit a live agent sits at (see `state::limits`).
    pub limit: Option<crate::state::Limit>,
    /// What it spent, as its own file says (see `crate::spend`).
    pub spend: Option<crate::spend::Spend>,
    /// The session the live agent runs, by its own word (claude's registry file).
    pub said_id: Option<String>,
    /// Processes of its last run that outlived it outside the pane (a launcher killed, its
    /// agent left running with another parent, still on the pane's terminal): relaunching
    /// would start a second one. This machine's panes only.
    pub orphans: Vec<crate::pane::Proc>,
    /// What the live agent is doing, as far as can be told.
    /// Boxed: every card is moved on every poll, and this is a sixth of its size.
    pub attention: Box<Attention>,
    /// Its place in the attention order: the rank it is shown at, and a calmer rank it has
    /// wanted since when (it moves down only once that held for [`ORDER_SETTLE_MS`]).
    pub order: (u8, Option<(u8, Millis)>),
    /// The rank it is shown at was a live agent's: only between a live agent's states is a
    /// calmer rank held back.
    pub order_live: bool,
}

impl Card {
    /// Ended on purpose: a clean exit, or a stop its cause says was deliberate (SIGTERM,
    /// Ctrl-C, `/exit`): a calm state, never an alarm.
    pub fn stopped_on_purpose(&self) -> bool {
        self.life.is_finished()
            || (self.life.is_dead()
                && self
                    .stop
                    .as_ref()
                    .is_some_and(|s| s.cause == crate::cause::Cause::Deliberate))
    }

    /// A death that should alarm: not a live pane, not a stop on purpose.
    pub fn is_alarm(&self) -> bool {
        self.life.is_alarm() && !self.stopped_on_purpose()
    }

    /// Its death was at a usage limit and it is resumed at its reset (plus `margin`, give or
    /// take five minutes): at no attempt's cost. Later (a resume that failed, tried again),
    /// attempts count as for any death, so that nothing retries for ever.
    pub fn at_limit_reset(&self, now: Millis, margin: Millis) -> bool {
        const SLACK_MS: Millis = 300_000;
        self.stop.as_ref().is_some_and(|s| {
            s.cause == crate::cause::Cause::UsageLimit
                && s.resets_at
                    .is_some_and(|t| now <= t.saturating_add(margin).saturating_add(SLACK_MS))
        })
    }
}

/// How long a card's calmer state must hold before it moves down the attention order: an
/// agent that works between two prompts does not make the grid jump.
pub const ORDER_SETTLE_MS: Millis = 10_000;

/// The attention order's tiers, most in need of its user first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Rank {
    /// Needs you now: waiting at a prompt, at a usage limit that has passed (or says no
    /// reset), dead and not being resumed (crashed and held, gave up, no id).
    NeedsYou = 0,
    /// Something happens next on its own: a resume scheduled or under way, a limit that
    /// resets later.
    AboutToAct = 1,
    /// Alive, its turn over, at its input box.
    Idle = 2,
    /// Alive and working, or doing what cannot be told.
    Working = 3,
    /// Finished, stopped on purpose, or its shell is back at its prompt.
    Calm = 4,
    /// Not an agent.
    Other = 5,
}

/// The pane's own process, when it launched the agent: a shell it was typed at, a wrapper
/// script, a launcher (`npm`, `node`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Launcher {
    /// The launcher's name (`bash`, `zsh`, `cc`, `npm`...).
    pub name: String,
    /// An interactive shell: a command can be typed at its prompt.
    pub prompt: bool,
    /// The launcher still runs; false once the pane itself has died.
    pub alive: bool,
    /// The launcher's argv, when read: what a relaunch runs again for a wrapper that passes
    /// its arguments through.
    pub argv: Vec<String>,
    /// When the agent was last seen in the foreground.
    pub agent_seen_at: Option<Millis>,
    /// When this run of the agent was first seen, and the shell's published status then
    /// (the status of the command before it, which is not the agent's).
    pub first_seen: Option<Millis>,
    pub status_before: String,
    /// The agent's process and argv: while it runs, and of its last run after.
    pub fg_pid: Option<u32>,
    pub fg_argv: Vec<String>,
}

/// A relaunch under way: asked by the user (`r`, `R`), or auto-resume attempt N. The card's
/// [`Auto::Resuming`] tells every instance, through the pane, that a resume runs; this is
/// the asking instance's own record, which the answer is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Relaunch {
    Manual,
    Auto { attempt: u32 },
}

/// Where a death stands with the auto-resume policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Judged {
    /// Not judged yet.
    #[default]
    Due,
    /// To be judged again, whatever its pane says: an auto-resume of it failed (the death
    /// was journaled and announced once already).
    Again,
    Done,
}

/// A relaunch that resumed a session by id: which, and when (a quick death after it is
/// read for the agent's "no such session").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resumed {
    pub id: String,
    pub at: Millis,
    /// The resumed agent said which session it runs (right or wrong): checked.
    pub checked: bool,
}

/// Where a pane stands with auto-resume.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub enum Auto {
    #[default]
    Idle,
    /// A resume is due at `due`.
    Scheduled { attempt: u32, due: Millis },
    /// A resume is under way.
    Resuming { attempt: u32 },
    /// The policy leaves this death alone.
    Held(Hold),
    /// The user cancelled the pending resume.
    Cancelled,
}

/// A line of news on a card.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Notice {
    pub text: String,
    /// Shown in the alarm style (a refusal or a failure).
    pub alarm: bool,
    /// Hidden after this instant; `None` keeps it until replaced.
    pub until: Option<Millis>,
    /// What happened before this instance started (from the journal): shown even beside
    /// a verdict, which it explains.
    pub story: bool,
    /// The answer to a key just pressed on this card: shown over what the card says of
    /// its state (a hold, a missing id) while it lasts, else the key seems to do nothing.
    pub answer: bool,
}

impl Notice {
    pub fn info(text: impl Into<String>, until: Option<Millis>) -> Notice {
        Notice {
            text: text.into(),
            alarm: false,
            until,
            story: false,
            answer: false,
        }
    }

    pub fn alarm(text: impl Into<String>, until: Option<Millis>) -> Notice {
        Notice {
            text: text.into(),
            alarm: true,
            until,
            story: false,
            answer: false,
        }
    }

    /// This notice as the answer to a key ([`Notice::answer`]).
    pub fn answering(mut self) -> Notice {
        self.answer = true;
        self
    }

    pub fn story(text: impl Into<String>, until: Option<Millis>) -> Notice {
        Notice {
            story: true,
            ..Notice::info(text, until)
        }
    }

    pub fn live(&self, now: Millis) -> bool {
        self.until.is_none_or(|u| now < u)
    }
}

impl Card {
    /// Where its pane sits: session, window and pane index.
    pub fn place(&self) -> (String, u32, u32) {
        (
            self.pane.session.clone(),
            self.pane.window_index,
            self.pane.pane_index,
        )
    }

    /// Where it belongs in the attention order (see [`Rank`]). `limit_pending`: the usage
    /// limit it sits at resets later (nothing to do for it till then).
    pub fn rank(&self, limit_pending: bool) -> u8 {
        if self.agent.is_none() {
            return Rank::Other as u8;
        }
        (match self.life {
            // Stopped on purpose: below every live agent, with the shells whose agent ended.
            Life::Dead(_) | Life::Reading if self.stopped_on_purpose() => Rank::Calm,
            Life::Dead(_) | Life::Reading
                if self.relaunch.is_some()
                    || matches!(self.auto, Auto::Scheduled { .. } | Auto::Resuming { .. }) =>
            {
                Rank::AboutToAct
            }
            Life::Dead(_) | Life::Reading => Rank::NeedsYou,
            Life::Idle => Rank::Calm,
            Life::Running => match self.attention.state() {
                Some((Doing::Waiting, _)) => Rank::NeedsYou,
                Some((Doing::Limited, _)) if limit_pending => Rank::AboutToAct,
                Some((Doing::Limited, _)) => Rank::NeedsYou,
                Some((Doing::Idle, _)) => Rank::Idle,
                _ => Rank::Working,
            },
        }) as u8
    }

    /// Takes in its rank `want` at `now`: up at once, down once the calmer rank held,
    /// between live states only (an agent working between two prompts does not make the
    /// grid jump); out of the dead group, or into a calm stop, at once (a resumed agent is
    /// no longer dead).
    pub fn settle_rank(&mut self, want: u8, now: Millis) {
        let (shown, calmer) = self.order;
        let at_once = !self.order_live || self.life != Life::Running;
        self.order_live = self.life == Life::Running;
        self.order = if want <= shown || shown == u8::MAX || at_once {
            (want, None)
        } else {
            match calmer {
                Some((r, since)) if r == want => {
                    if now.saturating_sub(since) >= ORDER_SETTLE_MS {
                        (want, None)
                    } else {
                        (shown, calmer)
                    }
                }
                _ => (shown, Some((want, now))),
            }
        };
    }

    /// One word for what the agent is (the pane option `@agentwatch_state`): `working`,
    /// `waiting`, `idle` or `running` (alive, doing what cannot be told), `dead`,
    /// `finished` (exit 0), `not_running` (its shell is at its prompt).
    pub fn state_word(&self) -> &'static str {
        match self.life {
            Life::Running => self.attention.state().map_or("running", |(d, _)| d.word()),
            Life::Idle => "not_running",
            Life::Dead(e) if e.is_clean() => "finished",
            Life::Dead(_) | Life::Reading => "dead",
        }
    }

    /// The process the pane's records are about: the agent's run below a launcher, else
    /// the pane's own process.
    pub fn occupant_pid(&self) -> Option<u32> {
        self.launcher
            .as_ref()
            .and_then(|l| l.fg_pid)
            .or(self.pane.pid)
    }

    /// When its process started, when that is known (not only when it was first seen).
    pub fn known_start(&self) -> Option<Millis> {
        self.started_at.filter(|_| !self.start_unknown)
    }

    /// Whether a word of the filter (lower case) is in what the card shows: its kind,
    /// window, tmux session, target, pane id, directory (as shown, `~/src`, or whole),
    /// agent session id, or state in the words the screen uses: `dead` and its exit
    /// (`exit 1`, `sigkill`), `finished`, `running` (every live agent, as the header counts
    /// them) and what it does (`working`, `waiting`, `idle`), `at prompt`.
    pub fn matches(&self, word: &str, home: Option<&str>, host: Option<&str>) -> bool {
        let p = &self.pane;
        let has = |s: &str| {
            if s.is_ascii() {
                // Most are: no lower-case copy made.
                s.as_bytes()
                    .windows(word.len().max(1))
                    .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
                    || word.is_empty()
            } else {
                s.to_lowercase().contains(word)
            }
        };
        let state = match self.life {
            Life::Running => {
                has("running") || self.attention.state().is_some_and(|(d, _)| has(d.word()))
            }
            Life::Idle => has("at prompt"),
            Life::Dead(e) if e.is_clean() => has("finished") || has("exit 0"),
            Life::Dead(e) => has("dead") || has(&e.short()),
            Life::Reading => has("dead"),
        };
        state
            || has(self.agent.as_deref().unwrap_or("pane"))
            || has(&p.window_name)
            || has(&p.session)
            || has(&p.target())
            || has(&p.id.to_string())
            || has(p.cwd())
            || has(&crate::text::tilde(p.cwd(), home))
            || has(&p.opts.session_id)
            || has(host.unwrap_or("local"))
    }

    /// Whether the server should be kicked now for this card's lost exit status.
    pub fn kick_due(&self, now: Millis) -> bool {
        // A shell-hosted agent's status comes from the shell, not from tmux.
        self.life == Life::Reading
            && self.launcher.as_ref().is_none_or(|h| !h.alive)
            && self
                .kicked_at
                .is_none_or(|t| now.saturating_sub(t) >= KICK_SPACING_MS)
    }

    /// What would make a new preview worth fetching: output, scrolling, cursor, death.
    pub fn signature(&self) -> (u64, u64, (u32, u32), bool) {
        let p = &self.pane;
        (p.window_activity, p.history_size, p.cursor, p.dead)
    }
}

/// Folds a new row into the previous card (if any). `started` is the process start time
/// from /proc when known.
pub fn observe(
    prev: Option<Card>,
    pane: Pane,
    agent: Option<String>,
    started: Option<Millis>,
    now: Millis,
) -> Card {
    // A dead pane that is alive again, or dead again with another process (respawned and
    // crashed between two polls), is a new run.
    let respawned = prev.as_ref().is_some_and(|c| {
        c.pane.dead && (!pane.dead || (pane.pid.is_some() && pane.pid != c.pane.pid))
    });
    // A new run or a new death: what happened before it is no longer the story to tell.
    let died = prev.as_ref().is_some_and(|c| !c.pane.dead && pane.dead) || (respawned && pane.dead);
    let news = respawned || died;
    // The previous card is moved, not copied: this runs for every pane on every poll.
    let mut card = match prev {
        Some(c) if !respawned => Card {
            pane,
            agent: agent.or(c.agent),
            ..c
        },
        Some(c) => Card {
            pane,
            agent: agent.or(c.agent),
            life: Life::Running,
            started_at: None,
            start_unknown: false,
            died_at: None,
            seen_dead_at: None,
            seen_alive: false,
            kicks: 0,
            kicked_at: None,
            preview: Vec::new(),
            preview_sig: None,
            preview_at: c.preview_at,
            notice: c.notice,
            relaunch: c.relaunch,
            recorded: c.recorded,
            // A pane respawned after it died runs what tmux started, not its old launcher.
            launcher: c.launcher.filter(|h| h.alive),
            argv_id: None,
            // Relaunches land before the poll that sees them: what they said carries over.
            no_session: c.no_session,
            resumed: c.resumed,
            stop: None,
            stop_asked: false,
            limit: None,
            spend: None,
            said_id: None,
            orphans: c.orphans,
            attention: Box::default(),
            order: c.order,
            order_live: c.order_live,
            discovered_at: None,
            discovered_dead: false,
            budget: c.budget,
            auto: match c.auto {
                Auto::Resuming { attempt } => Auto::Resuming { attempt },
                _ => Auto::Idle,
            },
            judged: Judged::Due,
            seen_opts: c.seen_opts,
            wrote_opts: c.wrote_opts,
            wrote_before: c.wrote_before,
        },
        None => Card {
            seen_opts: pane.budget_opts(),
            wrote_opts: String::new(),
            wrote_before: String::new(),
            budget: Budget::from_options(
                &pane.opts.attempts,
                &pane.opts.resumes,
                &pane.opts.next,
                &pane.opts.paused,
            ),
            pane,
            agent,
            life: Life::Running,
            started_at: None,
            start_unknown: false,
            died_at: None,
            seen_dead_at: None,
            seen_alive: false,
            kicks: 0,
            kicked_at: None,
            preview: Vec::new(),
            preview_sig: None,
            preview_at: 0,
            notice: None,
            relaunch: None,
            recorded: None,
            launcher: None,
            argv_id: None,
            no_session: None,
            resumed: None,
            stop: None,
            stop_asked: false,
            limit: None,
            spend: None,
            said_id: None,
            orphans: Vec::new(),
            attention: Box::default(),
            order: (u8::MAX, None),
            order_live: false,
            discovered_at: None,
            discovered_dead: false,
            auto: Auto::Idle,
            judged: Judged::Due,
        },
    };
    // A death also ends the good news of the run before it ("resumed 03ff8cff").
    if card
        .notice
        .as_ref()
        .is_some_and(|n| (news && n.story) || (died && !n.alarm))
    {
        card.notice = None;
    }
    if !card.pane.dead {
        let was = card.life;
        card.life = Life::Running;
        card.seen_alive = true;
        card.died_at = None;
        card.seen_dead_at = None;
        card.kicks = 0;
        card.kicked_at = None;
        // Seen dead before, it was seen to start (a relaunch); else, with nothing told,
        // only that it runs.
        let witnessed = respawned || matches!(was, Life::Dead(_) | Life::Reading);
        match started {
            Some(t) => {
                card.started_at = Some(t);
                card.start_unknown = false;
            }
            None if witnessed => {
                card.started_at = Some(now);
                card.start_unknown = false;
            }
            None if card.started_at.is_none() => {
                card.started_at = Some(now);
                card.start_unknown = true;
            }
            None => {}
        }
        return card;
    }
    if respawned {
        // It ran, however briefly: this death is a new one.
        card.seen_alive = true;
    }
    card.seen_dead_at = card.seen_dead_at.or(Some(now));
    if card.died_at.is_none() || card.pane.dead_time.is_some() {
        card.died_at = card
            .pane
            .dead_time
            .map(|s| s * 1000)
            .or(card.died_at)
            .or(if card.seen_alive { Some(now) } else { None });
    }
    card.life = match card.pane.exit() {
        Some(exit) => Life::Dead(exit),
        None if card.kicks >= MAX_KICKS => Life::Dead(Exit::Unknown),
        None => Life::Reading,
    };
    card
}

#[cfg(test)]
mod tests;
