//! Who supervises, and what happened while this instance was not watching: the election's
//! answers, the shared `A` switch, and the journal's story of each card told once at start.

use super::*;
use crate::errors::StoreError;
use crate::msg::Event;
use crate::time;
use jiff::tz::TimeZone;

impl State {
    /// The election answered. A new supervisor takes over every dead card: judged again
    /// against the verdict on its pane, so a pending resume counts down under it.
    pub(super) fn elected(&mut self, e: Election, fx: &mut Vec<Effect>) {
        self.supervision.elect_in_flight = false;
        let was = self.supervision.supervising;
        self.supervision.supervising = e.mine;
        if e.mine != was {
            // What is on the panes was written by another supervisor: written anew. Cards
            // are made differently by a supervisor (it clears a replaced agent's records).
            self.supervision.forget_said();
            self.remake_all();
        }
        self.supervision.supervisor = e.by;
        if !e.mine {
            self.supervision.took_over = None;
        }
        if let Some((from, at)) = e.took_over {
            fx.push(Effect::Log(Log::warn(format!(
                "{} stopped answering {} ago: supervising here",
                supervisor_name(Some(&from)),
                crate::text::duration(self.now.saturating_sub(at))
            ))));
            self.supervision.took_over = Some((from, at));
        }
        if let (true, false, Some(by)) = (self.headless, e.mine, e.by) {
            if by.daemon {
                // Another daemon holds the server (started on another path to it while this
                // one was stopped, say): two would only race; this one leaves.
                fx.push(Effect::Log(Log::warn(format!(
                    "daemon {} supervises this server: this daemon stops",
                    by.pid
                ))));
                self.quit = true;
            }
        }
        if self.supervision.supervising && !was {
            fx.push(Effect::Log(Log::info("supervising the server now")));
            for c in self.cards.iter_mut().filter(|c| c.life.is_dead()) {
                if c.judged == Judged::Done {
                    c.judged = Judged::Due;
                }
            }
            // What this instance saw agents do before it supervised, and no supervisor
            // said (their pane option says another word): news, journaled now. What the
            // option says is where the supervisor before left them.
            let found: Vec<(PaneId, crate::attention::Report)> = self
                .cards
                .iter()
                .filter(|c| c.life == Life::Running)
                .filter_map(|c| {
                    let (r, _) = c.attention.now.as_ref()?;
                    (c.pane.opts.state != r.doing.word()).then(|| (c.pane.id, r.clone()))
                })
                .collect();
            for (id, report) in found {
                self.attention_edge(id, Some(report), false, self.now, fx);
            }
        } else if was && !self.supervision.supervising {
            fx.push(Effect::Log(Log::info(format!(
                "{} supervises the server now",
                supervisor_name(e.by.as_ref())
            ))));
        }
    }

    /// One of agentwatch's own files was written, or could not be: kept until it can be.
    pub(super) fn stored(&mut self, what: &'static str, result: Result<(), StoreError>) {
        match result {
            Ok(()) => {
                self.supervision.store_errors.remove(what);
            }
            Err(e) => {
                self.supervision.store_errors.insert(what, e);
            }
        }
    }

    /// `A` pressed in another instance: the server option changed, and not by us. Until
    /// our own write has landed, the server's old value is no news.
    pub(super) fn follow_server_auto(&mut self, value: &str) {
        if let Some(wrote) = &self.supervision.auto_wrote {
            if wrote == value {
                self.supervision.auto_wrote = None;
                self.supervision.auto_seen = Some(value.to_string());
            }
            return;
        }
        if self.supervision.auto_seen.as_deref() != Some(value) {
            self.supervision.auto_seen = Some(value.to_string());
            self.supervision.auto_on = value != "off";
        }
    }

    /// Tells each card, once, what the journal says happened to its pane before this
    /// instance started: the last death and what was done about it.
    pub(super) fn tell_story(&mut self) {
        let Some(events) = self.story.past_events.take() else {
            return;
        };
        let started = self.story.started.unwrap_or(self.now);
        for i in 0..self.cards.len() {
            let card = &self.cards[i];
            let Some(kind) = card.agent.as_deref() else {
                continue;
            };
            let max = self.policy(Some(kind)).max_attempts;
            let pane = card.pane.id.to_string();
            let mine: Vec<&Event> = events
                .iter()
                .filter(|e| e.pane == pane && e.ts < started)
                .filter(|e| e.server.as_deref() == Some(self.servers.socket.as_str()))
                .filter(
                    |e| match (&e.session_id, card.pane.opts.session_id.as_str()) {
                        (Some(id), ours) if !ours.is_empty() => id == ours,
                        _ => true,
                    },
                )
                .collect();
            if let Some(text) = story(&mine, max, &self.tz) {
                if self.cards[i].notice.is_none() {
                    self.cards[i].notice =
                        Some(Notice::story(text, Some(self.now + STORY_NOTICE_MS)));
                }
            }
        }
    }
}

impl State {
    /// The user acts on the selected card: what happened before is no longer its news.
    pub(super) fn end_story(&mut self) {
        if let Some(i) = self.selected_index() {
            if self.cards[i].notice.as_ref().is_some_and(|n| n.story) {
                self.cards[i].notice = None;
            }
        }
    }
}

/// `daemon 12345`, `another dashboard (pid 678)`.
pub fn supervisor_name(s: Option<&Supervisor>) -> String {
    match s {
        Some(s) if s.daemon => format!("daemon {}", s.pid),
        Some(s) => format!("another dashboard (pid {})", s.pid),
        None => "another agentwatch".to_string(),
    }
}

/// The story of one pane's last death from its journal events (oldest first):
/// `died 03:57 (exit 1) before this dashboard opened; resumed 03:57 (attempt 1/3)`.
pub fn story(events: &[&Event], max_attempts: u32, tz: &TimeZone) -> Option<String> {
    let deaths = events.iter().filter(|e| e.event == "died").count();
    let last = events.iter().rposition(|e| e.event == "died")?;
    let at = |e: &Event| time::clock(e.ts, tz);
    let died = events[last];
    let exit = match (died.exit_code, died.signal) {
        (Some(c), _) => Exit::Code(c).short(),
        (None, Some(s)) => Exit::Signal(s).short(),
        _ => Exit::Unknown.short(),
    };
    let mut parts = vec![if deaths > 1 {
        format!(
            "died {deaths} times before this dashboard opened, last {} ({exit})",
            at(died)
        )
    } else {
        format!("died {} ({exit}) before this dashboard opened", at(died))
    }];
    for e in &events[last + 1..] {
        let n = e.attempt.unwrap_or(0);
        parts.push(match e.event.as_str() {
            "resumed" => format!("resumed {} (attempt {n}/{max_attempts})", at(e)),
            "resume_failed" => format!("auto-resume failed {}", at(e)),
            "not_resumed" => format!("not auto-resumed {}", at(e)),
            "gave_up" => format!("auto-resume gave up {}", at(e)),
            "cancelled" => format!("auto-resume cancelled {}", at(e)),
            "relaunched" => format!("relaunched {}", at(e)),
            _ => continue,
        });
    }
    Some(parts.join("; "))
}
