//! Relaunch and session id discovery, as decisions of the core.

use super::*;

impl State {
    pub(super) fn relaunch(&mut self, fresh: bool, now: Millis, fx: &mut Vec<Effect>) {
        let Some(i) = self.selected_index() else {
            return;
        };
        let card = &self.cards[i];
        if card.relaunching {
            return;
        }
        let planned = resume::plan(card, &self.agents, fresh, SESSION_ID);
        let meta = self.crash_meta(i);
        let card = &mut self.cards[i];
        match planned {
            Ok(plan) => {
                // The user took over: a pending auto-resume is dropped, the count restarts.
                crate::core::supervisor::on_manual(&mut card.budget);
                card.auto = Auto::Idle;
                card.relaunching = true;
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
                card.notice = Some(Notice::alarm(why, Some(now + NOTICE_MS)));
            }
        }
    }

    pub(super) fn relaunched(
        &mut self,
        pane: PaneId,
        result: Result<resume::Plan, String>,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        let Some(i) = self.cards.iter().position(|c| c.pane.id == pane) else {
            return;
        };
        self.cards[i].relaunching = false;
        if let Ok(plan) = &result {
            if let Some(id) = &plan.session_id {
                self.cards[i].pane.opt_session_id = id.clone();
            }
        }
        if let Some(attempt) = self.cards[i].auto_in_flight.take() {
            self.auto_relaunched(i, attempt, &result, now, fx);
            return;
        }
        let mut ev = self.event(&self.cards[i], "relaunched", now);
        if let Err(e) = &result {
            ev.event = "relaunch_failed".into();
            ev.detail = Some(e.clone());
        } else if let Ok(plan) = &result {
            ev.detail = Some(if plan.fresh {
                "fresh".into()
            } else {
                "resume".into()
            });
        }
        fx.push(Effect::Journal(ev));
        let card = &mut self.cards[i];
        card.notice = Some(match result {
            Ok(plan) => {
                if let Some(id) = &plan.session_id {
                    card.pane.opt_session_id = id.clone();
                }
                let text = match (&plan.session_id, plan.fresh) {
                    (Some(id), true) => format!("started fresh: new session {}", short_id(id)),
                    (None, true) => "started fresh".to_string(),
                    (Some(id), false) => format!("resumed {}", short_id(id)),
                    (None, false) => format!("relaunched: {}", plan.argv.join(" ")),
                };
                Notice::info(text, Some(now + NOTICE_MS))
            }
            Err(e) => Notice::alarm(format!("relaunch failed: {e}"), Some(now + NOTICE_MS)),
        });
    }

    pub(super) fn discovered(
        &mut self,
        pane: PaneId,
        found: Option<(String, &'static str)>,
        fx: &mut Vec<Effect>,
    ) {
        self.discover_in_flight = false;
        let Some(card) = self.cards.iter_mut().find(|c| c.pane.id == pane) else {
            return;
        };
        let (Some((id, source)), Some(def)) = (
            found,
            card.agent.as_deref().and_then(|k| self.agents.get(k)),
        ) else {
            return;
        };
        if !def.id.accepts(&id) || !card.pane.opt_session_id.is_empty() {
            return;
        }
        tracing::info!("{}: session id {id} found in {source}", card.pane.id);
        card.pane.opt_session_id = id.clone();
        fx.push(Effect::SetOptions(vec![(
            pane,
            "@agentwatch_session_id".into(),
            id,
        )]));
    }

    /// One session id lookup at a time: for a dead agent that lacks an id (once per death),
    /// or a live one now and then (Claude's registry exists only while it runs).
    pub(super) fn want_discovery(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        if self.discover_in_flight {
            return;
        }
        let agents = &self.agents;
        let due = self.cards.iter_mut().find(|c| {
            resume::lacks_id(c, agents)
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
        self.discover_in_flight = true;
        fx.push(Effect::Discover(DiscoverRequest {
            pane: card.pane.id,
            agent: card.agent.clone().unwrap_or_default(),
            cwd: card.pane.cwd().to_string(),
            pids: card
                .pane
                .pid
                .into_iter()
                .chain(card.shell.as_ref().and_then(|h| h.fg_pid))
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
