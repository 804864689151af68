//! No resume storms. Several agents of one server dying within a short window usually
//! share one cause (the network, an account limit, the OOM killer) that resuming them all
//! at once repeats: real agent CLIs are large node processes that all log in at start. Such
//! a mass death is resumed one agent first (the canary) and, once it has stayed up, the
//! rest a few at a time. A canary that dies again holds the rest, and says why.

use std::collections::HashMap;

use super::*;
use crate::settings::Pacing;

/// A mass death on one server, being resumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wave {
    /// How many agents it took.
    pub dead: usize,
    /// The resumes started, in order, and when (the first is the canary).
    pub started: Vec<(PaneId, Millis)>,
    /// Why the rest wait for the user, once they do.
    pub held: Option<String>,
}

impl Wave {
    /// What the header says of it.
    pub fn describe(&self, pacing: &Pacing) -> String {
        let agents = crate::text::counted(self.dead, "agent", "agents");
        match &self.held {
            Some(_) => format!("mass death: {agents}, the rest wait: the first resumed died again"),
            None if self.started.is_empty() => {
                format!("mass death: {agents}, resuming one first")
            }
            None => format!("mass death: {agents}, resuming {} at a time", pacing.burst),
        }
    }
}

/// The waves under way, by server.
pub type Waves = HashMap<ServerId, Wave>;

impl State {
    /// Resumes of `server` may start now: how many more. Starts a wave when enough of its
    /// agents died close together, ends it when none is left to resume.
    pub(super) fn resumes_allowed(
        &mut self,
        server: ServerId,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) -> usize {
        let pacing = self.supervision.pacing.clone();
        let waiting: Vec<&Card> = self
            .cards
            .iter()
            .filter(|c| c.pane.id.server() == server && matches!(c.auto, Auto::Scheduled { .. }))
            .collect();
        let in_flight = self
            .cards
            .iter()
            .any(|c| c.pane.id.server() == server && matches!(c.auto, Auto::Resuming { .. }));
        if waiting.is_empty() && !in_flight {
            self.supervision.waves.remove(&server);
            return usize::MAX;
        }
        if !self.supervision.waves.contains_key(&server) {
            // Deaths judged within the window of the latest one.
            let latest = waiting.iter().filter_map(|c| c.seen_dead_at).max();
            let close = waiting
                .iter()
                .filter(|c| {
                    matches!((c.seen_dead_at, latest), (Some(d), Some(l))
                        if l.saturating_sub(d) <= pacing.mass_window_secs * 1000)
                })
                .count();
            if close < pacing.mass_deaths as usize {
                return usize::MAX;
            }
            let wave = Wave {
                dead: close,
                started: Vec::new(),
                held: None,
            };
            if self.supervision.supervising {
                fx.push(Effect::Journal(crate::msg::Event {
                    ts: now,
                    event: "mass_death".into(),
                    server: server.is_local().then(|| self.servers.socket.clone()),
                    host: self
                        .servers
                        .get(server)
                        .and_then(|s| s.name.clone()),
                    detail: Some(format!(
                        "{} died within {} s: resuming one first, then {} at a time every {} s once it stayed up {} s",
                        crate::text::counted(close, "agent", "agents"),
                        pacing.mass_window_secs,
                        pacing.burst,
                        pacing.stagger_secs,
                        pacing.canary_secs
                    )),
                    ..Default::default()
                }));
            }
            self.supervision.waves.insert(server, wave);
        }
        let waiting_ids: Vec<PaneId> = waiting.iter().map(|c| c.pane.id).collect();
        let cards = &self.cards;
        let Some(wave) = self.supervision.waves.get_mut(&server) else {
            return usize::MAX;
        };
        let joined = waiting_ids
            .iter()
            .filter(|id| !wave.started.iter().any(|(p, _)| p == *id))
            .count();
        wave.dead = wave.dead.max(joined + wave.started.len());
        if wave.started.is_empty() {
            return 1;
        }
        let card = |id: PaneId| cards.iter().find(|c| c.pane.id == id);
        // Stayed up: a resumed agent of this wave running for the canary's time.
        let up = wave.started.iter().any(|&(id, _)| {
            card(id).is_some_and(|c| {
                c.life == Life::Running
                    && c.started_at
                        .is_some_and(|s| now.saturating_sub(s) >= pacing.canary_secs * 1000)
            })
        });
        if !up {
            let canary = wave.started[0].0;
            let died_again = card(canary).is_some_and(|c| c.life.is_dead() && c.relaunch.is_none())
                && wave.started.len() == 1;
            if died_again && wave.held.is_none() {
                let why = format!(
                    "mass death: the first agent resumed ({canary}) died again: the others wait (r resumes one)"
                );
                wave.held = Some(why.clone());
                if self.supervision.supervising {
                    fx.push(Effect::Journal(crate::msg::Event {
                        ts: now,
                        event: "mass_death".into(),
                        server: server.is_local().then(|| self.servers.socket.clone()),
                        pane: canary.to_string(),
                        detail: Some(why),
                        ..Default::default()
                    }));
                }
            }
            return 0;
        }
        wave.held = None;
        let stagger = pacing.stagger_secs * 1000;
        let recent = wave
            .started
            .iter()
            .skip(1)
            .filter(|&&(_, at)| now.saturating_sub(at) < stagger)
            .count();
        (pacing.burst as usize).saturating_sub(recent)
    }

    /// A resume of card `i` started in its server's wave, if one is under way.
    pub(super) fn resume_started(&mut self, i: usize, now: Millis) {
        let id = self.cards[i].pane.id;
        if let Some(w) = self.supervision.waves.get_mut(&id.server()) {
            if !w.started.iter().any(|&(p, _)| p == id) {
                w.started.push((id, now));
            }
        }
    }

    /// Whether card `i`'s resume was started in its wave already (a canary's next attempt
    /// is its own policy's, not held by the wave).
    pub(super) fn in_wave(&self, i: usize) -> bool {
        let id = self.cards[i].pane.id;
        self.supervision
            .waves
            .get(&id.server())
            .is_some_and(|w| w.started.iter().any(|&(p, _)| p == id))
    }

    /// The wave a card waits in, for its line: `None` when it does not wait.
    pub fn waits_in_wave(&self, card: &Card) -> Option<&Wave> {
        let wave = self.supervision.waves.get(&card.pane.id.server())?;
        let waits = matches!(card.auto, Auto::Scheduled { due, .. } if due <= self.now)
            && !wave.started.iter().any(|&(p, _)| p == card.pane.id);
        waits.then_some(wave)
    }
}
