//! Relaunch and session id discovery, as decisions of the core.

use super::*;

impl State {
    /// The plan to relaunch card `i`, or why not: [`resume::plan`], and never a session
    /// another live pane holds (one writer per session), on any watched server.
    pub(super) fn plan_relaunch(&self, i: usize, fresh: bool) -> Result<resume::Plan, Refusal> {
        let plan = resume::plan(&self.cards[i], &self.agents, fresh, SESSION_ID)?;
        if let Some(why) = self.session_elsewhere(&self.cards[i], &plan) {
            return Err(why);
        }
        Ok(plan)
    }

    /// Another live card holding the session a plan would run: the same conversation must
    /// never be written by two agents at once. An agent whose resume reconnects to a
    /// session its own server holds (codex) is let through.
    fn session_elsewhere(&self, card: &Card, plan: &resume::Plan) -> Option<Refusal> {
        let id = plan.session_id.as_ref().filter(|_| !plan.fresh)?;
        if plan.reconnects {
            return None;
        }
        let def = self.agents.get(&plan.agent)?;
        let other = self.cards.iter().find(|c| {
            c.pane.id != card.pane.id
                && c.life == Life::Running
                && c.agent.as_deref() == Some(plan.agent.as_str())
                && resume::known_session_id(c, def).ok().flatten().as_ref() == Some(id)
        })?;
        let place = match self.host_name(other) {
            Some(host) => format!("{} on {host}", other.pane.target()),
            None => other.pane.target(),
        };
        Some(Refusal(format!(
            "session {} is also open in {} ({place}): end that one, then r",
            short_id(id),
            other.pane.id
        )))
    }

    pub(super) fn relaunch(&mut self, fresh: bool, now: Millis, fx: &mut Vec<Effect>) {
        let Some(i) = self.selected_index() else {
            return;
        };
        self.choose_selected();
        let card = &self.cards[i];
        if card.relaunch.is_some() {
            return;
        }
        let planned = self.plan_relaunch(i, fresh);
        let meta = self.crash_meta(i);
        let card = &mut self.cards[i];
        match planned {
            Ok(plan) => {
                // The user took over: a pending auto-resume is dropped, the count restarts.
                crate::supervisor::on_manual(&mut card.budget);
                card.auto = Auto::Idle;
                card.relaunch = Some(Relaunch::Manual);
                let sets = card
                    .budget
                    .to_options()
                    .into_iter()
                    .map(|(k, v)| (card.pane.id, k, v))
                    .collect();
                fx.push(Effect::SetOptions(sets));
                card.notice = Some(Notice::info(
                    if fresh {
                        "starting fresh…"
                    } else {
                        "relaunching…"
                    },
                    None,
                ));
                fx.push(Effect::Relaunch { plan, meta });
            }
            Err(Refusal(why)) => {
                card.notice = Some(Notice::alarm(why, Some(now + NOTICE_MS)).answering());
            }
        }
    }

    pub(super) fn relaunched(
        &mut self,
        pane: PaneId,
        result: Result<resume::Plan, resume::Failure>,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        let Some(i) = self.cards.iter().position(|c| c.pane.id == pane) else {
            return;
        };
        let asked = self.cards[i].relaunch.take();
        // Its crash record was saved first, or could not be.
        match &result {
            Err(resume::Failure {
                unsaved: Some(e), ..
            }) => self.stored("crash record", Err(e.clone())),
            Ok(_) => self.stored("crash record", Ok(())),
            Err(_) => {}
        }
        if let Ok(plan) = &result {
            let card = &mut self.cards[i];
            match &plan.session_id {
                Some(id) => card.pane.opts.session_id = id.clone(),
                // The adapter cleared it on the pane with the respawn.
                None if plan.fresh => {
                    card.pane.opts.session_id.clear();
                    card.argv_id = None;
                }
                None => {}
            }
            // A resume by id that dies soon after is read for the agent's "no such session".
            card.resumed = match (&plan.session_id, plan.fresh || plan.again) {
                (Some(id), false) => Some(Resumed {
                    id: id.clone(),
                    at: now,
                    checked: false,
                }),
                _ => None,
            };
            if plan.again {
                card.no_session = None;
            }
        }
        if let Some(Relaunch::Auto { attempt }) = asked {
            self.auto_relaunched(i, attempt, &result, now, fx);
            return;
        }
        let mut ev = self.event(&self.cards[i], "relaunched", now);
        if let Err(e) = &result {
            ev.event = "relaunch_failed".into();
            ev.detail = Some(e.why.clone());
        } else if let Ok(plan) = &result {
            ev.detail = Some(relaunch_detail(plan));
        }
        fx.push(Effect::Journal(ev));
        let lasting = match &result {
            Err(e) if e.lasting && self.cards[i].pane.dead => Some(e.why.clone()),
            _ => None,
        };
        let card = &mut self.cards[i];
        card.notice = Some(match result {
            Ok(plan) => {
                if let Some(id) = &plan.session_id {
                    card.pane.opts.session_id = id.clone();
                }
                let text = match (&plan.session_id, plan.fresh) {
                    (Some(id), true) => format!("started fresh: new session {}", short_id(id)),
                    (None, true) => "started fresh".to_string(),
                    (Some(id), false) if plan.again => again_words(&plan.agent, id),
                    (Some(id), false) if plan.held_by.is_some() => reconnect_words(&plan, id),
                    (Some(id), false) => format!("resumed {}", short_id(id)),
                    (None, false) => format!("relaunched: {}", plan.argv.join(" ")),
                };
                Notice::info(text, Some(now + NOTICE_MS))
            }
            Err(e) => Notice::alarm(format!("relaunch failed: {e}"), Some(now + NOTICE_MS)),
        });
        if let Some(why) = lasting {
            // Not a flash: the reason stays until the cause is fixed (then `r`) or the
            // pane dies again.
            self.cards[i].auto = Auto::Held(crate::supervisor::Hold::Refused(why));
            self.save_judged(i, fx);
        }
    }

    /// A resumed agent that says which session it runs (claude's registry) within
    /// [`VERIFY_MS`]: the one asked for, or the resume failed: it came up under another id.
    /// That is said on the card and journaled by whoever relaunched it, and the session it
    /// does run is recorded on the pane: its next relaunch resumes what ran, never the same
    /// argv again.
    pub(super) fn check_resumes(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        for i in 0..self.cards.len() {
            let card = &mut self.cards[i];
            let Some(r) = card.resumed.as_mut().filter(|r| !r.checked) else {
                continue;
            };
            if card.life != Life::Running {
                continue;
            }
            if now.saturating_sub(r.at) > VERIFY_MS {
                r.checked = true;
                continue;
            }
            let Some(said) = card.said_id.clone() else {
                continue;
            };
            r.checked = true;
            if said == r.id {
                continue;
            }
            let want = r.id.clone();
            let agent = card.agent.clone().unwrap_or_else(|| "the agent".into());
            card.notice = Some(Notice::alarm(
                format!(
                    "resume failed: {agent} came up as session {}, not {}; the card follows {}",
                    short_id(&said),
                    short_id(&want),
                    short_id(&said)
                ),
                Some(now + NOTICE_MS),
            ));
            card.pane.opts.session_id = said.clone();
            let pane = card.pane.id;
            let mut ev = self.event(&self.cards[i], "resume_failed", now);
            ev.detail = Some(format!(
                "{agent} came up as session {said}, not the {want} it was asked to resume"
            ));
            fx.push(Effect::Journal(ev));
            fx.push(Effect::SetOptions(vec![(pane, Opt::SessionId, said)]));
        }
    }

    /// The last lines of a dead pane: why it stopped is decided from them (and, for one
    /// that died soon after a resume by id, whether it said it has no such session). It is
    /// judged once they are in.
    pub(super) fn tail_read(
        &mut self,
        pane: PaneId,
        text: Option<String>,
        oom_killed: bool,
        record: &[String],
        fx: &mut Vec<Effect>,
    ) {
        let Some(i) = self.cards.iter().position(|c| c.pane.id == pane) else {
            return;
        };
        let now = self.now;
        let policy = self.policy(self.cards[i].agent.as_deref()).clone();
        let card = &mut self.cards[i];
        let def = card.agent.as_deref().and_then(|k| self.agents.get(k));
        let text = text.unwrap_or_default();
        if let (Some(def), Some(r), Some(died)) = (def, card.resumed.as_ref(), card.died_at) {
            let soon = died.saturating_sub(r.at) <= RESUME_GRACE_MS;
            if soon && def.says_no_session(&text) {
                fx.push(Effect::Log(Log::info(format!(
                    "{pane}: {} has no session {}",
                    def.name, r.id
                ))));
                card.no_session = Some(r.id.clone());
            }
        }
        card.resumed = None;
        let Life::Dead(exit) = card.life else {
            // Alive again before its last lines came: nothing to decide.
            card.stop_asked = false;
            return;
        };
        let builtin;
        let (words, no_session) = match def {
            Some(d) => (&d.causes, d.no_session.as_slice()),
            None => {
                builtin = crate::cause::CauseWords::builtin("");
                (&builtin, &[][..])
            }
        };
        // Its own file's errors come first: what the pane shows last is its last word.
        let output = if record.is_empty() {
            text
        } else {
            let mut o: String = record
                .iter()
                .map(|l| format!("its own record: {}\n", l.replace('\n', " ")))
                .collect();
            o.push_str(&text);
            o
        };
        let death = crate::cause::Death {
            exit,
            output: &output,
            oom_killed,
            at: card.died_at.or(card.seen_dead_at).unwrap_or(now),
        };
        let stop = crate::cause::decide(&death, words, no_session, &policy, &self.tz, &self.zones);
        fx.push(Effect::Log(Log::info(format!(
            "{pane}: stopped for {}: {}",
            stop.cause.word(),
            stop.evidence.join(" · ")
        ))));
        card.stop = Some(stop);
        // Judged now, not at the next look.
        if self.supervision.supervising && self.cards[i].judged != crate::card::Judged::Done {
            self.judge(i, exit, now, fx);
        }
    }

    pub(super) fn discovered(
        &mut self,
        pane: PaneId,
        found: Option<(String, &'static str)>,
        fx: &mut Vec<Effect>,
    ) {
        self.reads.discover_in_flight = false;
        let Some(card) = self.cards.iter_mut().find(|c| c.pane.id == pane) else {
            return;
        };
        let (Some((id, source)), Some(def)) = (
            found,
            card.agent.as_deref().and_then(|k| self.agents.get(k)),
        ) else {
            return;
        };
        if !def.id.accepts(&id) || !card.pane.opts.session_id.is_empty() {
            return;
        }
        fx.push(Effect::Log(Log::info(format!(
            "{}: session id {id} found in {source}",
            card.pane.id
        ))));
        card.pane.opts.session_id = id.clone();
        fx.push(Effect::SetOptions(vec![(pane, Opt::SessionId, id)]));
    }

    /// One session id lookup at a time: for a dead agent that lacks an id (once per death),
    /// or a live one now and then (Claude's registry exists only while it runs).
    pub(super) fn want_discovery(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        if self.reads.discover_in_flight {
            return;
        }
        let agents = &self.agents;
        // Only agents of this machine: their records are in folders here.
        let due = self.cards.iter_mut().find(|c| {
            c.pane.id.server().is_local()
                && resume::lacks_id(c, agents)
                && if c.pane.dead {
                    !c.discovered_dead && c.life != Life::Reading
                } else {
                    c.discovered_at
                        .is_none_or(|t| now.saturating_sub(t) >= DISCOVER_LIVE_MS)
                }
        });
        let Some(card) = due else {
            return;
        };
        card.discovered_at = Some(now);
        card.discovered_dead = card.pane.dead;
        self.reads.discover_in_flight = true;
        fx.push(Effect::Discover(DiscoverRequest {
            pane: card.pane.id,
            agent: card.agent.clone().unwrap_or_default(),
            cwd: card.pane.cwd().to_string(),
            pids: card
                .pane
                .pid
                .into_iter()
                .chain(card.launcher.as_ref().and_then(|h| h.fg_pid))
                .collect(),
            started_at: card.started_at,
            died_at: card.died_at,
            dead: card.pane.dead,
            resumed: command_words(&card.pane.start_command)
                .iter()
                .any(|w| w == "resume" || w.starts_with("--resume")),
        }));
    }
}

/// The journal's word for a relaunch carried out.
pub(super) fn relaunch_detail(plan: &resume::Plan) -> String {
    if plan.fresh {
        "fresh".into()
    } else if plan.again {
        "started again under the same id (the agent kept no record of it)".into()
    } else {
        "resume".into()
    }
}

/// What the card says when a resume reconnected to a session a live process still held.
pub(super) fn reconnect_words(plan: &resume::Plan, id: &str) -> String {
    format!(
        "reconnected to {} {}: its background process (pid {}) held it",
        plan.agent,
        short_id(id),
        plan.held_by.unwrap_or_default()
    )
}

/// What the card says when a session was started again under its own id.
pub(super) fn again_words(agent: &str, id: &str) -> String {
    format!(
        "{agent} has no record of {}: started it again",
        short_id(id)
    )
}

#[cfg(test)]
mod tests {
    /// A card line holds 76 columns at 80: what a relaunch says must fit whole.
    #[test]
    fn relaunch_words_fit_an_80_column_card() {
        let id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
        let again = format!("{} (attempt 3/3)", super::again_words("claude", id));
        assert!(again.chars().count() <= 76, "{again}");
    }
}
