//! A tmux server that went away while watched: one banner listing what was lost, and one
//! key (with a question) to bring every lost agent back with its resume command.

use super::*;
use crate::agent::fill;
use crate::errors::RecreateError;
use crate::msg::{Event, Recreate};
use crate::roster::{LostAgent, Roster};

impl State {
    /// The first failed poll after a good one: was the server lost with agents on it?
    pub(super) fn server_failed(&mut self, e: &TmuxError, now: Millis, fx: &mut Vec<Effect>) {
        let was_up = self.servers.local().link == Link::Up;
        if !(was_up && matches!(e, TmuxError::NoServer { .. })) {
            return;
        }
        let agents: Vec<LostAgent> = self
            .cards
            .iter()
            .filter(|c| c.agent.is_some() && c.pane.id.server().is_local())
            .map(|c| LostAgent {
                agent: c.agent.clone().unwrap_or_default(),
                pane: c.pane.id.to_string(),
                target: c.pane.target(),
                session: c.pane.session.clone(),
                window_name: c.pane.window_name.clone(),
                session_id: resume_id(c, &self.agents),
                cwd: [&c.pane.opts.cwd, &c.pane.current_path, &c.pane.start_path]
                    .into_iter()
                    .find(|s| !s.is_empty())
                    .cloned()
                    .unwrap_or_default(),
                args: serde_json::from_str(&c.pane.opts.args).unwrap_or_default(),
                state: match c.life {
                    Life::Dead(e) => e.describe(),
                    Life::Running => "running".into(),
                    Life::Idle => "at the shell prompt".into(),
                    Life::Reading => Exit::Unknown.describe(),
                },
            })
            .collect();
        // The local server's cards go; other hosts' stay.
        self.cards.retain(|c| !c.pane.id.server().is_local());
        self.overlays.closing.retain(|id| !id.server().is_local());
        // The next server's panes are all new, whatever their ids.
        self.servers.local_mut().listed = Some(std::collections::HashSet::new());
        self.peek = None;
        if agents.is_empty() {
            return;
        }
        // One line in the journal, from the supervisor only.
        if self.supervision.supervising {
            fx.push(Effect::Journal(Event {
                ts: now,
                event: "server_gone".into(),
                pane: String::new(),
                server: Some(self.servers.socket.clone()),
                detail: Some(format!(
                    "{} lost",
                    crate::text::counted(agents.len(), "agent", "agents")
                )),
                ..Event::default()
            }));
        }
        let roster = Roster {
            socket: self.servers.socket.clone(),
            lost_at: now,
            agents,
        };
        fx.push(Effect::SaveRoster(Some(roster.clone())));
        self.lost.roster = Some(roster);
        self.lost.results.clear();
    }

    pub(super) fn roster_loaded(&mut self, roster: Option<Roster>) {
        if self.lost.roster.is_none() {
            self.lost.roster = roster.filter(|r| !r.agents.is_empty());
        }
    }

    /// Lost agents that are back (their session id is on a live pane again) leave the list.
    pub(super) fn prune_lost(&mut self, fx: &mut Vec<Effect>) {
        let Some(lost) = self.lost.roster.as_mut() else {
            return;
        };
        let back: Vec<&str> = self
            .cards
            .iter()
            .filter(|c| !c.pane.opts.session_id.is_empty() && c.life == Life::Running)
            .map(|c| c.pane.opts.session_id.as_str())
            .collect();
        let before = lost.agents.len();
        lost.agents
            .retain(|a| a.session_id.as_deref().is_none_or(|id| !back.contains(&id)));
        if lost.agents.len() != before {
            if lost.agents.is_empty() {
                self.lost.roster = None;
                fx.push(Effect::SaveRoster(None));
            } else {
                fx.push(Effect::SaveRoster(Some(lost.clone())));
            }
        }
    }

    pub(super) fn lost_act(&mut self, a: Action, fx: &mut Vec<Effect>) {
        match a {
            // Nothing to ask about when none can be recreated (the banner says so).
            Action::RecreateAll | Action::RelaunchFresh if self.can_recreate() => {
                self.lost.confirm = true;
                self.lost.forget = false;
            }
            Action::Forget => {
                self.lost.forget = true;
                self.lost.confirm = false;
            }
            Action::Yes if self.lost.forget => {
                // Dealt with: not shown again, here or at the next start.
                self.lost.forget = false;
                self.lost.roster = None;
                self.lost.results.clear();
                fx.push(Effect::SaveRoster(None));
            }
            Action::Yes if self.lost.confirm => {
                self.lost.confirm = false;
                let plans = self.recreate_plans();
                self.send_recreates(plans, fx);
            }
            Action::No => {
                self.lost.confirm = false;
                self.lost.forget = false;
            }
            Action::Back if self.lost.confirm || self.lost.forget => {
                self.lost.confirm = false;
                self.lost.forget = false;
            }
            Action::Back => self.lost.hidden = true,
            Action::Quit => self.quit = true,
            Action::Help => self.open_help(),
            _ => {}
        }
    }

    /// The windows to open: each lost agent's resume command in its directory. An agent
    /// whose resume needs an id it does not have is left out (never a silent fresh start).
    fn recreate_plans(&mut self) -> Vec<Recreate> {
        let Some(lost) = &self.lost.roster else {
            return Vec::new();
        };
        let mut plans = Vec::new();
        let mut skipped = Vec::new();
        for a in &lost.agents {
            let Some(def) = self.agents.get(&a.agent) else {
                skipped.push((
                    a.target.clone(),
                    Err(RecreateError::UnknownKind(a.agent.clone())),
                ));
                continue;
            };
            let id = a.session_id.clone().filter(|id| def.id.accepts(id));
            // One writer per session: not while a live pane of another server runs it.
            if let Some(held) = id.as_ref().and_then(|id| {
                self.cards.iter().find(|c| {
                    c.life == Life::Running
                        && c.agent.as_deref() == Some(def.name.as_str())
                        && resume::known_session_id(c, def).ok().flatten().as_ref() == Some(id)
                })
            }) {
                skipped.push((
                    a.target.clone(),
                    Err(RecreateError::OpenElsewhere {
                        id: short_id(id.as_deref().unwrap_or_default()).to_string(),
                        place: format!("in {} ({})", held.pane.id, held.pane.target()),
                    }),
                ));
                continue;
            }
            let argv = match (def.resume.is_empty(), def.resume_needs_id(), &id) {
                (true, _, _) => {
                    skipped.push((
                        a.target.clone(),
                        Err(RecreateError::NoResume(def.name.clone())),
                    ));
                    continue;
                }
                (false, true, None) => {
                    skipped.push((a.target.clone(), Err(RecreateError::NoSessionId)));
                    continue;
                }
                _ => {
                    let mut v = fill(&def.resume, id.as_deref());
                    v.extend(a.args.iter().cloned());
                    v
                }
            };
            let mut options = vec![
                (Opt::RemainOnExit, "on".to_string()),
                (Opt::Agent, def.name.clone()),
                (Opt::Cwd, a.cwd.clone()),
                (Opt::Occupant, crate::occupant::NEXT.to_string()),
            ];
            if let Some(id) = id {
                options.push((Opt::SessionId, id));
            }
            if !a.args.is_empty() {
                options.push((
                    resume::ARGS_OPTION,
                    serde_json::to_string(&a.args).unwrap_or_default(),
                ));
            }
            plans.push(Recreate {
                target: a.target.clone(),
                session: a.session.clone(),
                window_name: a.window_name.clone(),
                cwd: a.cwd.clone(),
                argv,
                options,
            });
        }
        self.lost.results = skipped;
        plans
    }

    pub(super) fn recreated(
        &mut self,
        results: Vec<(String, Result<String, RecreateError>)>,
        fx: &mut Vec<Effect>,
    ) {
        let Some(lost) = self.lost.roster.as_mut() else {
            return;
        };
        // The first of a paced recreate: its pane is watched; if it did not open, the next
        // one goes first.
        if let Some((target, pane)) = self.lost.canary.as_mut() {
            match results.iter().find(|(t, _)| t == target) {
                Some((_, Ok(id))) => *pane = Some(id.clone()),
                Some((_, Err(_))) if !self.lost.queue.is_empty() => {
                    let next = self.lost.queue.remove(0);
                    *target = next.target.clone();
                    *pane = None;
                    fx.push(Effect::Recreate(vec![next]));
                }
                _ => {}
            }
        }
        let done: Vec<&String> = results
            .iter()
            .filter(|(_, r)| r.is_ok())
            .map(|(t, _)| t)
            .collect();
        lost.agents.retain(|a| !done.contains(&&a.target));
        self.lost.results.extend(results);
        if lost.agents.is_empty() {
            fx.push(Effect::SaveRoster(None));
        } else {
            fx.push(Effect::SaveRoster(Some(lost.clone())));
        }
    }
}

impl State {
    /// Opens the lost agents' windows: all at once when they are few, else one first and,
    /// once it stayed up, the rest at the pace of a mass death.
    fn send_recreates(&mut self, mut plans: Vec<Recreate>, fx: &mut Vec<Effect>) {
        if plans.is_empty() {
            return;
        }
        if plans.len() < self.supervision.pacing.mass_deaths as usize {
            fx.push(Effect::Recreate(plans));
            return;
        }
        let first = plans.remove(0);
        self.lost.canary = Some((first.target.clone(), None));
        self.lost.queue = plans;
        self.lost.batch_at = self.now;
        fx.push(Effect::Recreate(vec![first]));
    }

    /// On every tick: the next batch of a paced recreate, once the first stayed up; a
    /// first that died again holds the rest, and says why.
    pub(super) fn release_recreates(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        if self.lost.queue.is_empty() {
            return;
        }
        let pacing = &self.supervision.pacing;
        let Some((_, Some(pane))) = &self.lost.canary else {
            return;
        };
        let card = PaneId::parse(pane).and_then(|id| self.cards.iter().find(|c| c.pane.id == id));
        let up = card.is_some_and(|c| {
            c.life == Life::Running
                && c.started_at
                    .is_some_and(|s| now.saturating_sub(s) >= pacing.canary_secs * 1000)
        });
        if card.is_some_and(|c| c.life.is_dead()) {
            let why = format!("the first recreated ({pane}) died again: R recreates the rest");
            let held: Vec<(String, Result<String, RecreateError>)> =
                std::mem::take(&mut self.lost.queue)
                    .into_iter()
                    .map(|p| (p.target, Err(RecreateError::Waits(why.clone()))))
                    .collect();
            self.lost.results.extend(held);
            self.lost.canary = None;
            return;
        }
        if !up || now.saturating_sub(self.lost.batch_at) < pacing.stagger_secs * 1000 {
            return;
        }
        let n = (pacing.burst as usize).min(self.lost.queue.len());
        let batch: Vec<Recreate> = self.lost.queue.drain(..n).collect();
        self.lost.batch_at = now;
        fx.push(Effect::Recreate(batch));
    }
}

impl Roster {
    /// How many of the lost agents can be recreated: a resume command, and an id when the
    /// resume needs one.
    pub fn recreatable(&self, agents: &Agents) -> usize {
        self.agents
            .iter()
            .filter(|a| {
                agents.get(&a.agent).is_some_and(|def| {
                    !def.resume.is_empty()
                        && (!def.resume_needs_id()
                            || a.session_id.as_deref().is_some_and(|id| def.id.accepts(id)))
                })
            })
            .count()
    }
}

/// The session id a card's agent would resume with, if known and valid.
fn resume_id(card: &Card, agents: &Agents) -> Option<String> {
    let def = agents.get(card.agent.as_deref()?)?;
    resume::known_session_id(card, def).ok().flatten()
}
