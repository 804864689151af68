//! What each agent spends: its own file (claude's transcript, codex's rollout) is asked for
//! what was appended every [`SPEND_EVERY_MS`], and the totals kept on its card.

use super::*;
use crate::spend::{Kind, Spend};

/// How often the agents' files are asked for what they grew by: a message appended shows
/// within 3 s with room to spare (one `stat` per file: 0.2 ms at 300 agents).
pub const SPEND_EVERY_MS: Millis = 1_000;

/// One agent's file to follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpendAsk {
    pub pane: PaneId,
    pub kind: Kind,
    pub session_id: String,
    /// Where it works: claude files its transcript by its directory.
    pub cwd: String,
}

impl State {
    /// On a tick: the agents whose files say what they spend, asked for what was appended
    /// since the last read (one read in flight at a time).
    pub(super) fn ask_spend(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        if self.reads.spend_in_flight
            || self
                .reads
                .spend_at
                .is_some_and(|t| now.saturating_sub(t) < SPEND_EVERY_MS)
        {
            return;
        }
        let asks: Vec<SpendAsk> = self
            .cards
            .iter()
            .filter_map(|c| self.spend_ask(c))
            .collect();
        if asks.is_empty() {
            return;
        }
        self.reads.spend_at = Some(now);
        self.reads.spend_in_flight = true;
        fx.push(Effect::ReadSpend(asks));
    }

    /// The agent's own file of a card, where one is kept and its session id is known (on the
    /// pane, on its command line, or, for a claude started by hand with none, in claude's
    /// own registry of its processes): this machine's claude and codex.
    pub(super) fn spend_ask(&self, c: &Card) -> Option<SpendAsk> {
        if !c.pane.id.server().is_local() {
            return None;
        }
        let agent = c.agent.as_deref()?;
        let kind = match agent {
            "claude" => Kind::Claude,
            "codex" => Kind::Codex,
            _ => return None,
        };
        let def = self.agents.get(agent)?;
        let id = crate::resume::known_session_id(c, def)
            .ok()
            .flatten()
            .or_else(|| c.said_id.clone().filter(|id| def.id.accepts(id)))?;
        Some(SpendAsk {
            pane: c.pane.id,
            kind,
            session_id: id,
            cwd: c.pane.cwd().to_string(),
        })
    }

    /// What the agents' files said.
    pub(super) fn spend_read(&mut self, read: Vec<(PaneId, Spend)>) {
        self.reads.spend_in_flight = false;
        for (pane, spend) in read {
            if let Some(c) = self.cards.iter_mut().find(|c| c.pane.id == pane) {
                c.spend = Some(spend);
            }
        }
    }

    /// The context window of an agent's model, where its record does not say: the config's
    /// table (`[context] windows`), longest matching prefix first.
    pub fn context_window(&self, spend: &Spend) -> Option<u64> {
        if spend.window.is_some() {
            return spend.window;
        }
        let model = spend.model.as_deref()?;
        self.context
            .windows
            .iter()
            .filter(|(prefix, _)| model.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, w)| *w)
    }

    /// What a card says an agent spent: its tokens, its context and the share of its window
    /// where known, and whether that is over the threshold. `None` where its file said
    /// nothing.
    pub fn spent(&self, card: &Card) -> Option<Spent> {
        let s = card.spend.as_ref()?;
        let total = s.tokens.total();
        if total == 0 && s.context.is_none() {
            return None;
        }
        let percent = s.percent(self.context_window(s));
        Some(Spent {
            total,
            context: s.context,
            percent,
            full: percent.is_some_and(|p| p >= self.context.threshold_percent),
        })
    }
}

/// An agent's spend as shown: see [`State::spent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spent {
    pub total: u64,
    pub context: Option<u64>,
    pub percent: Option<u64>,
    /// The context is over `[context] threshold_percent`.
    pub full: bool,
}

impl Spent {
    /// `ctx 63% · 1.2M tok` (a card), `ctx 180k · 1.2M tok` where the window is not known.
    pub fn words(&self) -> String {
        let tok = format!("{} tok", crate::spend::short(self.total));
        match (self.percent, self.context) {
            (Some(p), _) => format!("ctx {p}% · {tok}"),
            (None, Some(c)) => format!("ctx {} · {tok}", crate::spend::short(c)),
            (None, None) => tok,
        }
    }

    /// `63% 1.2M`, `1.2M` (a list's column).
    pub fn short(&self) -> String {
        let tok = crate::spend::short(self.total);
        match self.percent {
            Some(p) => format!("{p}% {tok}"),
            None => tok,
        }
    }
}
