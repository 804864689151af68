//! Agents alive at a usage limit (`limited`): when the limit resets (read from the line that
//! says so), a look again at the screen once that time passed, and, where asked,
//! `continue` typed once after the reset if the same agent still shows the limit.

use super::*;

/// How often a limit whose reset passed is looked at again while its banner stays up.
const RECHECK_MS: Millis = 30_000;

/// What is kept of a live agent's current limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// The agent process that showed it: only that one is told to continue.
    pub pid: Option<u32>,
    /// When its screen was last looked at again after the reset.
    pub checked_at: Millis,
    /// A look was asked to confirm the limit before `continue` is typed.
    pub confirming: bool,
}

impl State {
    /// When the limit a live agent sits at resets, from the line that says so, read as of
    /// when the limit was first seen (every instance reads the same).
    pub fn limit_resets(&self, card: &Card) -> Option<Millis> {
        match &card.attention.now {
            Some((v, since)) if v.doing == Doing::Limited && card.life == Life::Running => {
                crate::cause::resets_at(&v.why, *since, &self.tz, &self.zones)
            }
            _ => None,
        }
    }

    /// Whether `continue` is typed into this agent at its limit's reset: `[auto_continue]`,
    /// or the agent's own switch (`C`).
    pub fn continues(&self, card: &Card) -> bool {
        card.budget
            .continues
            .unwrap_or(self.supervision.continue_on)
    }

    /// On every look: each live agent's limit followed.
    pub(super) fn watch_limits(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        let margin = self.supervision.continue_margin_ms;
        for i in 0..self.cards.len() {
            let reset = self.limit_resets(&self.cards[i]);
            let continues = self.continues(&self.cards[i]);
            let card = &mut self.cards[i];
            if !(card.life == Life::Running && card.attention.is(Doing::Limited)) {
                card.limit = None;
                continue;
            }
            let pid = card.occupant_pid();
            let limit = card.limit.get_or_insert(Limit {
                pid,
                checked_at: now,
                confirming: false,
            });
            let Some(reset) = reset else {
                continue;
            };
            // The reset passed: is the banner still up? Its screen says, not the clock.
            if now > reset && now.saturating_sub(limit.checked_at) >= RECHECK_MS {
                limit.checked_at = now;
                card.attention.look_again();
            }
            let id = card.pane.id;
            if self.supervision.supervising
                && continues
                && now >= reset.saturating_add(margin)
                && !limit.confirming
                && card.budget.continued != Some(reset)
            {
                limit.confirming = true;
                fx.push(Effect::LookAtScreens(vec![id]));
            }
        }
    }

    /// A limited agent's screen read just before `continue` would be typed: typed once, if
    /// the same agent process is in the pane and its screen still shows the limit.
    pub(super) fn confirm_continue(
        &mut self,
        screens: &HashMap<PaneId, String>,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        for i in 0..self.cards.len() {
            let card = &self.cards[i];
            let (Some(limit), Some(screen)) = (&card.limit, screens.get(&card.pane.id)) else {
                continue;
            };
            if !limit.confirming {
                continue;
            }
            let Some(reset) = self.limit_resets(card) else {
                continue;
            };
            let def = card.agent.as_deref().and_then(|k| self.agents.get(k));
            let shown = def.and_then(|d| d.causes.limit_on(screen));
            let dismiss = def.is_some_and(|d| d.causes.menu_on(screen));
            let same = limit.pid.is_some() && limit.pid == card.occupant_pid();
            let id = card.pane.id;
            let text = self.supervision.continue_text.clone();
            let at = crate::time::clock(reset, &self.tz);
            let mut ev = self.event(card, "continued", now);
            ev.cause = Some(Cause::UsageLimit.word().into());
            ev.resets_at = Some(reset);
            let card = &mut self.cards[i];
            if let Some(l) = card.limit.as_mut() {
                l.confirming = false;
            }
            // Kept on the pane: not again for this limit, whoever supervises next.
            card.budget.continued = Some(reset);
            self.save_budget(i, fx);
            let card = &mut self.cards[i];
            match (shown, same) {
                (Some(_), true) => {
                    ev.detail = Some(format!("typed `{text}` after the limit reset at {at}"));
                    card.notice = Some(Notice::info(
                        format!("continued: typed `{text}` (the limit reset at {at})"),
                        Some(now + NOTICE_MS),
                    ));
                    fx.push(Effect::Type {
                        pane: id,
                        text,
                        dismiss,
                    });
                    fx.push(Effect::Journal(ev));
                }
                (None, _) => fx.push(Effect::Log(Log::info(format!(
                    "{id}: its limit is gone from its screen: it went on by itself, nothing typed"
                )))),
                (Some(_), false) => fx.push(Effect::Log(Log::info(format!(
                    "{id}: another process shows the limit now: nothing typed"
                )))),
            }
        }
    }
}

use crate::cause::Cause;
