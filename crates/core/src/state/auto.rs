//! Auto-resume, as decisions of the core. One instance supervises a server (the one the
//! election chose): it judges each death once, runs due resumes on the tick, refills budgets
//! after healthy runs, journals every step and keeps each verdict on its pane. Every other
//! instance shows those verdicts and answers keys by editing the pane's options, which the
//! supervisor takes up at its next look.

use super::*;
use crate::card::{Auto, Judged, Relaunch};
use crate::cause;
use crate::judged;
use crate::msg::Event;
use crate::supervisor::{self, Budget, Hold, Policy, Verdict};

impl State {
    pub fn policy(&self, agent: Option<&str>) -> &Policy {
        agent
            .and_then(|a| self.supervision.policies.get(a))
            .unwrap_or(&self.supervision.default_policy)
    }

    /// Whether an agent kind's auto-resume differs from everybody's (an override in the
    /// config).
    pub fn has_own_policy(&self, agent: &str) -> bool {
        self.supervision
            .policies
            .get(agent)
            .is_some_and(|p| *p != self.supervision.default_policy)
    }

    /// A journal event about a card.
    pub(super) fn event(&self, card: &Card, kind: &str, now: Millis) -> Event {
        // Why its current death happened, once known.
        let stop = card.stop.as_ref().filter(|_| card.life.is_dead());
        let (exit_code, signal) = match card.life {
            Life::Dead(Exit::Code(c)) => (Some(c), None),
            Life::Dead(Exit::Signal(s)) => (None, Some(s)),
            _ => (None, None),
        };
        Event {
            ts: now,
            event: kind.to_string(),
            pane: card.pane.id.to_string(),
            server: self
                .host_name(card)
                .is_none()
                .then(|| self.servers.socket.clone()),
            host: self.host_name(card).map(str::to_string),
            target: Some(card.pane.target()),
            agent: card.agent.clone(),
            session_id: (!card.pane.opts.session_id.is_empty())
                .then(|| card.pane.opts.session_id.clone()),
            exit_code,
            signal,
            cause: stop.map(|s| s.cause.word().to_string()),
            resets_at: stop.and_then(|s| s.resets_at),
            ..Event::default()
        }
    }

    pub(super) fn save_budget(&mut self, i: usize, fx: &mut Vec<Effect>) {
        let c = &mut self.cards[i];
        let opts = c.budget.to_options();
        // What the pane will say once this lands: our own edit, not another instance's.
        let wrote = opts
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join("|");
        c.wrote_before = std::mem::replace(&mut c.wrote_opts, wrote);
        let sets = opts.into_iter().map(|(k, v)| (c.pane.id, k, v)).collect();
        fx.push(Effect::SetOptions(sets));
    }

    /// Keeps the card's verdict on its pane, for whoever supervises next and for every
    /// dashboard.
    pub(super) fn save_judged(&self, i: usize, fx: &mut Vec<Effect>) {
        let c = &self.cards[i];
        if let Some(text) = judged::death_key(c).and_then(|k| judged::text(&k, &c.auto)) {
            fx.push(Effect::SetOptions(vec![(c.pane.id, judged::OPTION, text)]));
        }
    }

    /// After every poll: as the supervisor, take up other instances' edits, judge new
    /// deaths and refill healthy budgets; beside it, show what it decided.
    pub(super) fn supervise(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        for i in 0..self.cards.len() {
            let card = &self.cards[i];
            if card.agent.is_none() {
                continue;
            }
            if card.life.is_dead() {
                if card.stop.is_none() {
                    self.await_stop(i, fx);
                }
            } else if card.stop.is_some() || card.stop_asked {
                // Alive again at a prompt: the cause was the last death's.
                self.cards[i].stop = None;
                self.cards[i].stop_asked = false;
            }
            if !self.supervision.supervising {
                self.mirror(i, now);
                continue;
            }
            self.take_up_edits(i);
            let card = &self.cards[i];
            match card.life {
                Life::Running => self.maybe_refill(i, now, fx),
                Life::Dead(exit) if card.judged != Judged::Done => self.judge(i, exit, now, fx),
                _ => {}
            }
        }
    }

    /// The budget options changed on the pane, and not by us: another instance relaunched
    /// the pane, paused it (`a`) or cancelled its resume (`c`). The pane is the truth.
    fn take_up_edits(&mut self, i: usize) {
        let c = &mut self.cards[i];
        // `c` beside us says so in the verdict too: unmistakable even when the budget it
        // wrote equals one the pane showed before our own last write.
        if matches!(c.auto, Auto::Scheduled { .. }) && judged::on_pane(c) == Some(Auto::Cancelled) {
            c.auto = Auto::Cancelled;
            c.budget.next_due = None;
        }
        // Compared as they stand, made into one string only when they changed (every
        // card, every poll).
        if c.pane.budget_is(&c.wrote_opts) {
            // Our latest write landed: nothing older of ours can still be in flight.
            c.wrote_before.clear();
            if c.seen_opts != c.wrote_opts {
                c.seen_opts.clone_from(&c.wrote_opts);
            }
            return;
        }
        if c.pane.budget_is(&c.seen_opts) {
            return;
        }
        c.seen_opts = c.pane.budget_opts();
        if !c.wrote_before.is_empty() && c.seen_opts == c.wrote_before {
            return;
        }
        let p = &c.pane;
        c.budget = Budget::from_options(
            &p.opts.attempts,
            &p.opts.resumes,
            &p.opts.next,
            &p.opts.paused,
        );
        if let Auto::Scheduled { .. } = c.auto {
            if c.budget.paused {
                c.auto = Auto::Held(Hold::Off);
            } else if c.budget.next_due.is_none() {
                c.auto = Auto::Cancelled;
            }
        }
    }

    /// Beside the supervisor: the card shows the supervisor's verdict and budget, read from
    /// the pane; a new death rings this dashboard's bell (the supervisor does the rest).
    fn mirror(&mut self, i: usize, now: Millis) {
        let c = &mut self.cards[i];
        let p = &c.pane;
        c.budget = Budget::from_options(
            &p.opts.attempts,
            &p.opts.resumes,
            &p.opts.next,
            &p.opts.paused,
        );
        c.seen_opts = p.budget_opts();
        if c.relaunch.is_some() {
            return;
        }
        if !c.life.is_dead() {
            c.auto = Auto::Idle;
            return;
        }
        c.auto = judged::on_pane(c).unwrap_or_default();
        if let (false, Life::Dead(exit)) = (c.judged == Judged::Done, c.life) {
            c.judged = Judged::Done;
            if c.seen_alive && !c.stopped_on_purpose() {
                let mut ev = self.event(&self.cards[i], "died", now);
                ev.detail = Some(exit.describe());
                self.supervision.notes.push(ev);
            }
        }
    }

    fn maybe_refill(&mut self, i: usize, now: Millis, fx: &mut Vec<Effect>) {
        // Nothing to refill (most cards, every poll): no policy looked up.
        if self.cards[i].budget.attempts == 0 {
            return;
        }
        let policy = self.policy(self.cards[i].agent.as_deref()).clone();
        let card = &mut self.cards[i];
        let Some(start) = card.started_at else {
            return;
        };
        if supervisor::refill_if_healthy(&policy, &mut card.budget, now.saturating_sub(start)) {
            card.notice = Some(Notice::info(
                format!(
                    "ran {}s healthy: auto-resume budget back to 0/{}",
                    policy.healthy_after_secs, policy.max_attempts
                ),
                Some(now + NOTICE_MS),
            ));
            self.save_budget(i, fx);
        }
    }

    /// Judges card `i`'s death, once why it stopped is known (it asks first).
    pub(super) fn judge(&mut self, i: usize, exit: Exit, now: Millis, fx: &mut Vec<Effect>) {
        if self.await_stop(i, fx) {
            return;
        }
        let rejudge = std::mem::replace(&mut self.cards[i].judged, Judged::Done) == Judged::Again;
        if let (false, Some(auto)) = (rejudge, judged::on_pane(&self.cards[i])) {
            // Judged and journaled before: by the supervisor before us, or by us before a
            // restart. Pick up where it stopped (a pending resume counts down under us).
            let card = &mut self.cards[i];
            card.auto = auto;
            if let Auto::Resuming { attempt } = card.auto {
                // The supervisor stopped while carrying this resume out, and the pane never
                // ran again: carry it out now, as the same attempt (its count is undone,
                // to be counted again when it runs).
                if card.budget.attempts >= attempt {
                    card.budget.attempts = attempt.saturating_sub(1);
                    card.budget.recent.pop();
                }
                card.auto = Auto::Scheduled { attempt, due: now };
                card.budget.next_due = Some(now);
                self.save_budget(i, fx);
            }
            return;
        }
        let policy = self.policy(self.cards[i].agent.as_deref()).clone();
        let unresumable = resume::unresumable(&self.cards[i], &self.agents);
        let can_resume = resume::plan(&self.cards[i], &self.agents, false, SESSION_ID).is_ok();
        // A recorded id that is not an id of this agent: said at once, not when `r` is
        // pressed.
        let bad_id = self.cards[i]
            .agent
            .as_deref()
            .and_then(|k| self.agents.get(k))
            .and_then(|def| resume::known_session_id(&self.cards[i], def).err());
        let card = &self.cards[i];
        if !card.seen_alive {
            // Dead before any supervisor looked. A resume an older agentwatch scheduled in
            // the pane's options is taken up; any other old death is the user's to relaunch.
            if let (Some(due), true) = (
                card.budget.next_due,
                can_resume && self.supervision.auto_on && !card.budget.paused,
            ) {
                let attempt = card.budget.attempts + 1;
                self.cards[i].auto = Auto::Scheduled { attempt, due };
                return;
            }
            let mut ev = self.event(card, "died", card.died_at.unwrap_or(now));
            ev.detail = Some(format!(
                "{} (while no agentwatch was watching)",
                exit.describe()
            ));
            fx.push(Effect::Journal(ev));
            // Kept on the pane even for a clean exit: the next start must not journal it
            // again.
            self.cards[i].auto = if exit.is_clean() {
                Auto::Held(Hold::Deliberate(exit.short()))
            } else {
                Auto::Held(Hold::Unwatched)
            };
            self.save_judged(i, fx);
            return;
        }
        // Stamped when the death was first seen (the banner went up), not when its exit
        // status was finally read.
        // Judged again after a failed resume: the death was journaled and announced once.
        if !rejudge {
            let mut ev = self.event(card, "died", card.seen_dead_at.unwrap_or(now));
            ev.detail = Some(exit.describe());
            // A clean exit or a stop on purpose (the user's own Ctrl-C, a SIGTERM) is
            // journaled, never announced: nobody needs to hear of what they did.
            if !card.stopped_on_purpose() {
                self.supervision.notes.push(ev.clone());
            }
            fx.push(Effect::Journal(ev));
        }
        let run_ms = match (card.started_at, card.died_at) {
            (Some(s), Some(d)) => Some(d.saturating_sub(s)),
            _ => None,
        };
        let auto_on = self.supervision.auto_on;
        let margin_ms = self.supervision.continue_margin_ms;
        let card = &mut self.cards[i];
        let why = supervisor::Why {
            stop: card.stop.as_ref(),
            margin_ms,
        };
        let mut verdict = supervisor::on_death(
            &policy,
            auto_on,
            &mut card.budget,
            exit,
            run_ms,
            can_resume || unresumable.is_some(),
            now,
            why,
        );
        if let (Some(id), Verdict::Resume { .. }) = (unresumable, &verdict) {
            // It said it has no such session: the same argv would fail the same way.
            card.budget.next_due = None;
            verdict = Verdict::Hold(Hold::NoSession(id));
        }
        if let (Some(Refusal(why)), Verdict::Hold(Hold::NoSessionId)) = (bad_id, &verdict) {
            verdict = Verdict::Hold(Hold::Refused(why));
        }
        let (kind, attempt, detail) = match &verdict {
            Verdict::Resume { attempt, due } => {
                card.auto = Auto::Scheduled {
                    attempt: *attempt,
                    due: *due,
                };
                (
                    "scheduled",
                    Some(*attempt),
                    Some(format!("in {} ms", due - now)),
                )
            }
            Verdict::Hold(h) => {
                card.auto = Auto::Held(h.clone());
                match h {
                    Hold::GaveUp { attempts, hourly } => (
                        "gave_up",
                        Some(*attempts),
                        Some(if *hourly {
                            "hourly limit".into()
                        } else {
                            "attempts spent".into()
                        }),
                    ),
                    Hold::NoSession(id) => {
                        ("resume_failed", None, Some(format!("no session {id}")))
                    }
                    // Why a crash was left alone, in the card's words.
                    Hold::Deliberate(_) | Hold::NoSessionId | Hold::Cause(_)
                        if !exit.is_clean() =>
                    {
                        (
                            "not_resumed",
                            None,
                            h.reason(card.agent.as_deref().unwrap_or("the agent")),
                        )
                    }
                    _ => ("", None, None),
                }
            }
        };
        if !kind.is_empty() {
            let mut ev = self.event(&self.cards[i], kind, now);
            ev.attempt = attempt;
            ev.detail = detail;
            if kind == "gave_up" {
                self.supervision.notes.push(ev.clone());
            }
            fx.push(Effect::Journal(ev));
        }
        self.save_budget(i, fx);
        self.save_judged(i, fx);
    }

    /// Why card `i` died, decided before it is judged: from its exit alone where that says
    /// (a deliberate stop), else from its last lines, read first (one capture per death).
    /// True while they are awaited.
    pub(super) fn await_stop(&mut self, i: usize, fx: &mut Vec<Effect>) -> bool {
        let card = &self.cards[i];
        if card.stop.is_some() {
            return false;
        }
        if card.stop_asked {
            return true;
        }
        let Life::Dead(exit) = card.life else {
            return false;
        };
        if let Some(stop) = cause::by_exit(exit, self.policy(card.agent.as_deref())) {
            self.cards[i].stop = Some(stop);
            return false;
        }
        self.cards[i].stop_asked = true;
        let pane = self.cards[i].pane.id;
        let record = self.spend_ask(&self.cards[i]);
        fx.push(Effect::ReadTail(pane, record));
        true
    }

    /// On every tick: carry out the resumes that are due, at the pace a mass death allows
    /// on their server. One failure never stops the rest.
    pub(super) fn run_due(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        if !self.supervision.supervising {
            return;
        }
        let mut allowed: HashMap<ServerId, usize> = HashMap::new();
        for i in 0..self.cards.len() {
            let Auto::Scheduled { due, .. } = self.cards[i].auto else {
                continue;
            };
            if due > now || self.cards[i].relaunch.is_some() || self.card_stale(&self.cards[i]) {
                continue;
            }
            // Turned off since it was scheduled (here or, through the panes, elsewhere).
            if !self.supervision.auto_on || self.cards[i].budget.paused {
                self.cards[i].auto = Auto::Held(Hold::Off);
                continue;
            }
            // A resume already started in a mass death goes on by its own policy.
            if !self.in_wave(i) {
                let server = self.cards[i].pane.id.server();
                let left = match allowed.get(&server) {
                    Some(&n) => n,
                    None => self.resumes_allowed(server, now, fx),
                };
                if left == 0 {
                    allowed.insert(server, 0);
                    continue;
                }
                // usize::MAX: no wave, no limit.
                let after = if left == usize::MAX { left } else { left - 1 };
                allowed.insert(server, after);
            }
            if !self.goes_first(i, now) {
                continue;
            }
            match self.plan_relaunch(i, false) {
                Ok(plan) => {
                    self.resume_started(i, now);
                    let meta = self.crash_meta(i);
                    let margin = self.supervision.continue_margin_ms;
                    let card = &mut self.cards[i];
                    let attempt = if card.at_limit_reset(now, margin) {
                        supervisor::on_free_resume(&mut card.budget)
                    } else {
                        supervisor::on_resume(&mut card.budget, now)
                    };
                    card.auto = Auto::Resuming { attempt };
                    card.relaunch = Some(Relaunch::Auto { attempt });
                    // Said on the pane before the relaunch starts: a supervisor killed in
                    // the middle of it leaves the resume to the next one, not lost.
                    self.save_budget(i, fx);
                    self.save_judged(i, fx);
                    fx.push(Effect::Relaunch { plan, meta });
                }
                Err(Refusal(why)) => {
                    // Kept on the card (and the pane) until the next death, not flashed.
                    self.cards[i].auto = Auto::Held(Hold::Refused(why.clone()));
                    let mut ev = self.event(&self.cards[i], "resume_failed", now);
                    ev.detail = Some(why);
                    fx.push(Effect::Journal(ev));
                    self.save_judged(i, fx);
                }
            }
        }
    }

    /// The answer to an automatic relaunch.
    pub(super) fn auto_relaunched(
        &mut self,
        i: usize,
        attempt: u32,
        result: &Result<resume::Plan, resume::Failure>,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        let max = self.policy(self.cards[i].agent.as_deref()).max_attempts;
        let margin = self.supervision.continue_margin_ms;
        let card = &mut self.cards[i];
        let free = card.at_limit_reset(now, margin);
        if matches!(card.auto, Auto::Resuming { .. }) {
            card.auto = Auto::Idle;
        }
        let (kind, detail) = match result {
            Ok(plan) => {
                let text = match &plan.session_id {
                    Some(id) if plan.again => format!(
                        "{} (attempt {attempt}/{max})",
                        super::relaunch::again_words(&plan.agent, id)
                    ),
                    Some(id) if plan.held_by.is_some() => {
                        super::relaunch::reconnect_words(plan, id)
                    }
                    _ if free => "resumed after the usage limit's reset".into(),
                    _ => format!("resumed (attempt {attempt}/{max})"),
                };
                card.notice = Some(Notice::info(text, Some(now + NOTICE_MS)));
                (
                    "resumed",
                    plan.again.then(|| super::relaunch::relaunch_detail(plan)),
                )
            }
            Err(e) if e.why.contains("alive again") => {
                card.notice = Some(Notice::info(
                    "resumed by another agentwatch",
                    Some(now + NOTICE_MS),
                ));
                ("", None)
            }
            Err(e) if e.lasting => {
                // Nothing ran, and waiting will not help: the attempt is given back, the
                // reason stays on the card until the next death (or `r` after a fix).
                if !free {
                    card.budget.attempts = card.budget.attempts.saturating_sub(1);
                    card.budget.recent.pop();
                }
                card.auto = Auto::Held(Hold::Refused(e.why.clone()));
                ("resume_failed", Some(e.why.clone()))
            }
            Err(e) => {
                card.notice = Some(Notice::alarm(
                    format!("auto-resume attempt {attempt}/{max} failed: {e}"),
                    Some(now + NOTICE_MS),
                ));
                // Still dead: judge again, so the next attempt (or giving up) follows.
                card.judged = Judged::Again;
                ("resume_failed", Some(e.why.clone()))
            }
        };
        if !kind.is_empty() {
            let mut ev = self.event(&self.cards[i], kind, now);
            ev.attempt = Some(attempt);
            ev.detail = detail;
            fx.push(Effect::Journal(ev));
        }
        if result.as_ref().is_err_and(|e| e.lasting) {
            self.save_budget(i, fx);
            self.save_judged(i, fx);
        }
    }

    /// After an overloaded API or a network error, one agent per server and cause is
    /// resumed first; the others of that cause wait until it has run for the mass death's
    /// canary time (or is gone): a crowd retrying at once keeps the API busy.
    fn goes_first(&mut self, i: usize, now: Millis) -> bool {
        let card = &self.cards[i];
        let Some(cause) = card
            .stop
            .as_ref()
            .map(|s| s.cause)
            .filter(|c| c.is_transient())
        else {
            return true;
        };
        let key = (card.pane.id.server(), cause);
        let me = card.pane.id;
        let proof = self.supervision.pacing.canary_secs.saturating_mul(1000);
        if let Some(&(first, since)) = self.supervision.firsts.get(&key) {
            if first == me {
                self.supervision.firsts.insert(key, (me, now));
                return true;
            }
            let first_card = self.cards.iter().find(|c| c.pane.id == first);
            let proven = match first_card {
                None => true,
                Some(c) => {
                    c.life == Life::Running
                        && c.relaunch.is_none()
                        && now.saturating_sub(since) >= proof
                }
            };
            if !proven {
                return false;
            }
        }
        self.supervision.firsts.insert(key, (me, now));
        true
    }

    /// The pane card `i`'s resume waits for, after an overloaded API or a network error.
    pub fn waits_for_first(&self, card: &Card) -> Option<String> {
        let cause = card
            .stop
            .as_ref()
            .map(|s| s.cause)
            .filter(|c| c.is_transient())?;
        if !matches!(card.auto, Auto::Scheduled { due, .. } if due <= self.now) {
            return None;
        }
        let &(first, _) = self
            .supervision
            .firsts
            .get(&(card.pane.id.server(), cause))?;
        (first != card.pane.id)
            .then(|| format!("waits for {first} to come back first ({})", cause.label()))
    }

    /// What the crash record of card `i`'s death says, besides its output. The auto-resume
    /// the death followed is the budget's count before this relaunch counts itself (a
    /// healthy run or a manual relaunch set it back to 0); a relaunch tried again after a
    /// failed one records the same death with the number its first record had.
    pub(super) fn crash_meta(&mut self, i: usize) -> CrashMeta {
        let host = self.host_name(&self.cards[i]).map(str::to_string);
        let card = &mut self.cards[i];
        let attempt = match (card.recorded, card.seen_dead_at) {
            (Some((of, n)), Some(seen)) if of == seen => n,
            _ => card.budget.attempts,
        };
        card.recorded = card.seen_dead_at.map(|seen| (seen, attempt));
        CrashMeta {
            host,
            attempt: Some(attempt),
            target: card.pane.target(),
            exit: match card.life {
                Life::Dead(e) => e.describe(),
                _ => Exit::Unknown.describe(),
            },
            exit_short: match card.life {
                Life::Dead(e) => e.short(),
                _ => Exit::Unknown.short(),
            },
            died_at: card.died_at,
            started_at: card.started_at,
            cause: card.stop.as_ref().map(|s| s.cause.word().to_string()),
            evidence: card
                .stop
                .as_ref()
                .map(|s| s.evidence.clone())
                .unwrap_or_default(),
        }
    }

    /// `a`, `c`, `A`.
    pub(super) fn auto_key(&mut self, a: Action, now: Millis, fx: &mut Vec<Effect>) {
        if a == Action::ToggleAutoAll {
            self.supervision.auto_on = !self.supervision.auto_on;
            // A server option, so that every instance (and the supervisor) follows it.
            let value = if self.supervision.auto_on { "" } else { "off" }.to_string();
            self.supervision.auto_wrote = Some(value.clone());
            fx.push(Effect::SetServerOption {
                name: "@agentwatch_auto".into(),
                value,
            });
            if !self.supervision.auto_on {
                for i in 0..self.cards.len() {
                    self.cancel(i, now, fx);
                }
            }
            return;
        }
        let Some(i) = self.selected_index() else {
            return;
        };
        if self.cards[i].agent.is_none() {
            return;
        }
        match a {
            Action::CancelAuto if !self.cancel(i, now, fx) => {
                self.cards[i].notice = Some(Notice::info(
                    "no auto-resume pending",
                    Some(now + NOTICE_MS),
                ));
            }
            Action::ToggleAuto => {
                let paused = !self.cards[i].budget.paused;
                self.cards[i].budget.paused = paused;
                if paused {
                    self.cancel(i, now, fx);
                }
                self.cards[i].notice = Some(Notice::info(
                    if paused {
                        "auto-resume off for this pane (a turns it back on)"
                    } else {
                        "auto-resume on for this pane"
                    },
                    Some(now + NOTICE_MS),
                ));
                self.save_budget(i, fx);
            }
            Action::ToggleContinue => {
                let on = !self.continues(&self.cards[i]);
                let card = &mut self.cards[i];
                card.budget.continues = Some(on);
                card.notice = Some(Notice::info(
                    if on {
                        "continue at reset on: `continue` is typed once its usage limit resets"
                    } else {
                        "continue at reset off for this agent (C turns it back on)"
                    },
                    Some(now + NOTICE_MS),
                ));
                self.save_budget(i, fx);
            }
            _ => {}
        }
    }

    /// Cancels a pending resume; true if there was one.
    fn cancel(&mut self, i: usize, now: Millis, fx: &mut Vec<Effect>) -> bool {
        let Auto::Scheduled { attempt, .. } = self.cards[i].auto else {
            return false;
        };
        let card = &mut self.cards[i];
        card.auto = Auto::Cancelled;
        card.budget.next_due = None;
        let mut ev = self.event(&self.cards[i], "cancelled", now);
        ev.attempt = Some(attempt);
        fx.push(Effect::Journal(ev));
        self.save_budget(i, fx);
        self.save_judged(i, fx);
        true
    }
}
