//! What each live agent does (working, waiting for its user, idle), from its own file, a
//! hook, its output and a look at its screen; each edge announced and journaled, and the
//! attention order kept.

use super::*;

/// When the agents' panes wrote, as this poll read it: their windows' output times (tmux's,
/// whole seconds), and the panes heard as they write.
pub(super) struct Written<'a> {
    pub times: &'a HashMap<PaneId, u64>,
    pub heard: &'a HashMap<PaneId, Option<Millis>>,
    /// Heard panes known to have stopped (see [`crate::msg::Observation::stopped`]).
    pub stopped: &'a std::collections::HashSet<PaneId>,
}

impl State {
    /// What each live agent does: its window's output time and a hook's pane options as
    /// read this poll, and the screen of one whose output stopped, read once until it
    /// writes again.
    /// What the look at server `srv` tells of its live agents (its files, hooks and output
    /// times are about its cards only; another server's are told by its own look).
    pub(super) fn attend(
        &mut self,
        srv: ServerId,
        written: Written<'_>,
        files: &HashMap<u32, AgentFile>,
        trees: &HashMap<PaneId, Arc<ProcTree>>,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        let mut look = Vec::new();
        for card in &mut self.cards {
            if card.pane.id.server() != srv {
                continue;
            }
            if card.agent.is_none() || card.life != Life::Running {
                if *card.attention != Attention::default() {
                    *card.attention = Attention::default();
                }
                continue;
            }
            let a = &mut card.attention;
            // The agent's own file, about the pane's process or one in its foreground.
            let below = trees
                .get(&card.pane.id)
                .map(|t| &t.below[..])
                .unwrap_or(&[]);
            let file = card
                .pane
                .pid
                .into_iter()
                .chain(below.iter().map(|p| p.pid))
                .find_map(|pid| files.get(&pid).map(|f| (pid, f)));
            a.file_says(file.map(|(pid, _)| pid), file.and_then(|(_, f)| f.report()));
            card.said_id = file.and_then(|(_, f)| f.session_id.clone());
            a.hook_says(&card.pane.hook_status, &card.pane.hook_reason, now);
            match written.heard.get(&card.pane.id) {
                Some(&last) => {
                    a.heard_output(last, now, written.stopped.contains(&card.pane.id));
                }
                None => {
                    a.unheard();
                    if let Some(&output) = written.times.get(&card.pane.id) {
                        a.saw_output(output, now);
                    }
                }
            }
            // Due whether or not this poll read its output time; its own word needs no look
            // at its screen.
            if a.look_due() && a.screen_tells() && !self.reads.look_in_flight {
                look.push(card.pane.id);
            }
        }
        self.settle_attention(now, fx);
        // A few screens at a time: a thousand quiet agents seen at once are read over a few
        // polls, not held in memory together (the rest are still due at the next poll).
        look.truncate(LOOK_AT_ONCE);
        if !look.is_empty() {
            self.reads.look_in_flight = true;
            fx.push(Effect::LookAtScreens(look));
        }
    }

    /// Every live agent whose screen is due a look (not only the few a poll asks for at
    /// once): a one-shot look reads them all.
    pub fn looks_due(&self) -> Vec<PaneId> {
        self.cards
            .iter()
            .filter(|c| {
                c.agent.is_some()
                    && c.life == Life::Running
                    && c.attention.screen_tells()
                    && c.attention.look_due()
            })
            .map(|c| c.pane.id)
            .collect()
    }

    /// Decides again what each live agent does; each edge is announced (into waiting) and
    /// journaled; the cards take their places in the order.
    pub(super) fn settle_attention(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        let mut edges = Vec::new();
        // Beside a live supervisor, its verdicts date what both see.
        let beside = !self.supervision.supervising && self.supervision.supervisor.is_some();
        for card in &mut self.cards {
            let first = card.attention.now.is_none();
            if let Some(edge) = card.attention.settle(now, card.started_at) {
                fx.push(Effect::Log(Log::debug(format!(
                    "{}: {}",
                    card.pane.id,
                    edge.as_ref().map_or("not known".to_string(), |v| format!(
                        "{} ({}: {})",
                        v.doing.word(),
                        v.told.describe(),
                        v.why
                    ))
                ))));
                edges.push((card.pane.id, edge, first));
            }
            if beside && card.life == Life::Running && !card.pane.opts.verdict.is_empty() {
                card.attention
                    .date_from(&card.pane.opts.verdict, card.started_at);
            }
        }
        for (id, edge, first) in edges {
            self.attention_edge(id, edge, first, now, fx);
        }
        // Of the local server (the word goes to its poller; other hosts are listed every
        // 2 s): a live agent with no state file of its own is heard, its output as it
        // happens. Output times are wanted often while one that is not heard (no control
        // connection, or in a session it is not attached to) works or waits (to see it stop,
        // or its prompt answered), or is not read yet.
        let mut often = false;
        let mut hear = Vec::new();
        for c in &self.cards {
            if !(c.pane.id.server().is_local()
                && c.agent.is_some()
                && c.life == Life::Running
                && c.attention.file.is_none())
            {
                continue;
            }
            hear.push(c.pane.id);
            let a = &c.attention;
            often |= !a.heard
                && (a.output.is_none()
                    || !a.looked
                    || a.recheck.is_some()
                    || matches!(a.state(), Some((Doing::Working | Doing::Waiting, _))));
        }
        hear.sort_unstable();
        let told = self.attending.as_ref();
        if told.is_none_or(|(o, h)| *o != often || *h != hear) {
            self.attending = Some((often, hear.clone()));
            fx.push(Effect::Attend { often, hear });
        }
        self.reorder(now);
    }

    /// An agent began working, waiting or idling (or it can no longer be told): announced
    /// by every instance when it waits (the bell of a dashboard that does not supervise),
    /// journaled by the supervising instance only (one line per edge, however many
    /// dashboards are open).
    /// `first`: nothing was known of the agent before (it was just seen, or agentwatch just
    /// started).
    pub(super) fn attention_edge(
        &mut self,
        id: PaneId,
        edge: Option<Report>,
        first: bool,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        let Some(v) = edge else {
            return;
        };
        let Some(card) = self.cards.iter().find(|c| c.pane.id == id) else {
            return;
        };
        let mut ev = self.event(card, v.doing.word(), now);
        ev.detail = Some(v.why.clone());
        if v.doing == Doing::Limited {
            ev.cause = Some(crate::cause::Cause::UsageLimit.word().into());
            ev.resets_at = self.limit_resets(card);
        }
        // What the pane option already says, of an agent just seen, is where things stood
        // when this instance started (the supervisor before it wrote it): no news.
        let known = card.pane.opts.state == v.doing.word();
        // Once per wait, and not again for a pane that asked within NOTIFY_AGAIN_MS: an
        // agent asking one question after another while its user answers them is one call.
        if matches!(v.doing, Doing::Waiting | Doing::Limited) && !(first && known) {
            let last = self.supervision.waits_told.insert(id, now);
            if last.is_none_or(|t| now.saturating_sub(t) >= NOTIFY_AGAIN_MS) {
                self.supervision.notes.push(ev.clone());
            }
        }
        // Not again what the pane option already says of an agent just seen: a supervisor
        // that starts again (or takes over) finds the agents as the last one left them, and
        // that is no edge. Later the option lags the edges (written a poll after, read back
        // later still): every later edge is news.
        if self.supervision.supervising && !(first && known) {
            fx.push(Effect::Journal(ev));
        }
    }

    pub(super) fn looked(
        &mut self,
        result: Result<HashMap<PaneId, String>, TmuxError>,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        self.reads.look_in_flight = false;
        let Ok(screens) = result else {
            return;
        };
        self.confirm_continue(&screens, now, fx);
        for card in &mut self.cards {
            let Some(screen) = screens.get(&card.pane.id) else {
                continue;
            };
            let def = card.agent.as_deref().and_then(|k| self.agents.get(k));
            let says = def.and_then(|d| d.screen_says(screen));
            let asked = says
                .as_ref()
                .filter(|r| r.doing == Doing::Waiting)
                .and_then(|r| crate::attention::asked(screen, &r.why));
            card.attention.looked_at(says, asked);
            // A hook's pane options, where a hook writes them, are read with the screen's
            // news. A pane where none was ever seen is asked nothing more: its hook options
            // would show at the next full listing (every 15 s, a minute with 1000 panes), and reading a record whole
            // after every look made most looks at churning agents cost a pass over all.
            let hooked = !card.pane.hook_status.is_empty() || card.attention.hook.is_some();
            if let (true, Some(s)) = (hooked, self.servers.get_mut(card.pane.id.server())) {
                s.reread.insert(card.pane.id);
            }
        }
        self.settle_attention(now, fx);
    }

    /// Each card's place in the attention order settled at `now`, and the cards sorted.
    pub(super) fn reorder(&mut self, now: Millis) {
        for i in 0..self.cards.len() {
            let pending = self.limit_resets(&self.cards[i]).is_some_and(|t| t > now);
            let want = self.cards[i].rank(pending);
            self.cards[i].settle_rank(want, now);
        }
        // The selection follows in refilter, at the end of the update.
        self.sort_cards();
    }

    /// What needs its user first (dead, waiting, idle, working), each rank in tmux's order
    /// (session, window, pane); or tmux's order alone, as configured.
    pub(super) fn sort_cards(&mut self) {
        let attention = self.grid.order == Order::Attention;
        // The local server's panes first, then each host's, in the order of [[hosts]].
        fn key(c: &Card, attention: bool) -> (u8, ServerId, &str, u32, u32) {
            (
                if attention { c.order.0 } else { 0 },
                c.pane.id.server(),
                &c.pane.session,
                c.pane.window_index,
                c.pane.pane_index,
            )
        }
        // Mostly in order already: checked first, for a sort moves whole cards.
        if !self
            .cards
            .is_sorted_by(|a, b| key(a, attention) <= key(b, attention))
        {
            self.cards
                .sort_by(|a, b| key(a, attention).cmp(&key(b, attention)));
        }
    }
}
