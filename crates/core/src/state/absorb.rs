//! A look at a server folded into the cards: each pane routed (an agent, a launcher, an
//! agent typed at a prompt), its card made anew from the last one, deaths born while
//! watched, lost exit statuses kicked for, panes gone while their agent ran; and what
//! tmux forgets at death written on the panes while they live.

use super::*;

/// Every card's records are compared with its pane's options at least this often.
const RECORDS_EVERY_MS: Millis = 2_000;

impl State {
    /// Folds a look at one server into the cards: that server's cards are made anew from
    /// it, the others' are left as they are.
    pub(super) fn absorb(
        &mut self,
        srv: ServerId,
        mut obs: Observation,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        let activity = std::mem::take(&mut obs.activity);
        let heard = std::mem::take(&mut obs.heard);
        let stopped = std::mem::take(&mut obs.stopped);
        let files = std::mem::take(&mut obs.agent_files);
        let trees = Arc::clone(&obs.tree);
        let server_pid = obs.listing.server_pid;
        let auto_all = std::mem::take(&mut obs.listing.auto_all);
        let mut marks = Vec::new();
        let known = self.servers.get(srv).is_some_and(|s| s.listed.is_some());
        if (obs.same || obs.partial) && !known {
            // Never asked for so; a listing of some panes or none is not to be taken as
            // every other pane gone.
            if let Some(s) = self.servers.get_mut(srv) {
                s.remake = true;
            }
            return;
        }
        // Nothing changed since the last look (most looks while agents work, one for each
        // output heard): the cards stand; made again, they would be the same. A partial look
        // makes only its panes' cards anew.
        if !obs.same {
            self.remake_cards(srv, obs, now, &mut marks, fx);
        }
        let written = super::attend::Written {
            times: &activity,
            heard: &heard,
            stopped: &stopped,
        };
        self.after_look(
            srv, server_pid, &auto_all, marks, written, &files, &trees, now, fx,
        );
    }

    /// That server's cards made anew from its panes.
    fn remake_cards(
        &mut self,
        srv: ServerId,
        mut obs: Observation,
        now: Millis,
        marks: &mut Vec<(PaneId, Opt, String)>,
        fx: &mut Vec<Effect>,
    ) {
        self.reads.records_at = None;
        let mut orphans = std::mem::take(&mut obs.orphans);
        let malformed = self.servers.get(srv).map_or(0, |s| s.malformed);
        if obs.listing.malformed != malformed {
            if obs.listing.malformed > 0 {
                fx.push(Effect::Log(Log::warn(format!(
                    "{} pane record(s) in tmux's listing did not parse and were skipped",
                    obs.listing.malformed
                ))));
            } else {
                fx.push(Effect::Log(Log::info("every pane record parses again")));
            }
        }
        if let Some(s) = self.servers.get_mut(srv) {
            s.malformed = obs.listing.malformed;
        }
        // A partial look: only its panes' cards are made anew, the others stand.
        let partial = obs.partial;
        let listed: std::collections::HashSet<PaneId> =
            obs.listing.panes.iter().map(|p| p.id).collect();
        // A partial look (the cards on screen, read whole once a second) makes its few
        // cards anew where they stand: the others are neither moved nor sorted again (a
        // card is 1.5 KB; a thousand moved and sorted each second was a tenth of the
        // dashboard's time).
        let mut places: HashMap<PaneId, usize> = HashMap::new();
        let (mut old, others): (HashMap<PaneId, Card>, Vec<Card>) = if partial {
            let mut old = HashMap::new();
            for (i, c) in self.cards.iter_mut().enumerate() {
                if c.pane.id.server() == srv && listed.contains(&c.pane.id) {
                    places.insert(c.pane.id, i);
                    let vacant = observe(None, crate::pane::Pane::default(), None, None, 0);
                    old.insert(c.pane.id, std::mem::replace(c, vacant));
                }
            }
            (old, Vec::new())
        } else {
            let (mine, others): (Vec<Card>, Vec<Card>) = std::mem::take(&mut self.cards)
                .into_iter()
                .partition(|c| c.pane.id.server() == srv);
            (mine.into_iter().map(|c| (c.pane.id, c)).collect(), others)
        };
        let selected_pos = self
            .grid
            .selected
            .and_then(|id| old.get(&id).map(Card::place));
        let mut cards = Vec::with_capacity(obs.listing.panes.len());
        if !partial {
            self.overlays
                .closing
                .retain(|id| id.server() != srv || listed.contains(id));
        }
        for pane in obs.listing.panes {
            if self.overlays.closing.contains(&pane.id) {
                continue;
            }
            let fg = obs.foreground.get(&pane.id).map(Vec::as_slice);
            let comm = obs.comm.get(&pane.id).map(String::as_str).unwrap_or("");
            let procs = obs.tree.get(&pane.id);
            let tree = procs.map(|t| t.below.as_slice()).unwrap_or(&[]);
            let own = fg.or_else(|| procs.map(|t| t.own.as_slice()).filter(|a| !a.is_empty()));
            let prev = old.remove(&pane.id);
            let (pane, prev) = self.take_occupant(pane, prev, now, marks, fx);
            let host = prev.as_ref().and_then(|c| c.launcher.as_ref());
            let before = crate::agent::Before {
                hosted: host.is_some_and(|h| h.alive) || pane.exited_mark().is_some(),
                prompt: host.is_none_or(|h| h.prompt),
            };
            let routed =
                crate::agent::route(&self.agents, &self.shells, &pane, comm, own, tree, before);
            if let Route::Hosted {
                prompt,
                agent,
                kind,
            } = routed
            {
                let hosting = PaneProcess {
                    name: comm.trim_start_matches('-'),
                    prompt,
                    argv: own,
                    kind: kind.map(|d| d.name.as_str()),
                    background: procs.map(|t| t.background.as_slice()).unwrap_or(&[]),
                };
                let started = obs.started.get(&pane.id).copied();
                if let Some(mut card) =
                    self.host_card(prev, pane, &hosting, agent, started, now, marks)
                {
                    self.take_run(&mut card, marks);
                    cards.push(card);
                }
                continue;
            }
            let agent = self.agents.recognise(&pane, own).map(|d| d.name.clone());
            if agent.is_none()
                && !self.grid.show_all
                && prev.as_ref().is_none_or(|c| c.agent.is_none())
            {
                continue;
            }
            let started = obs.started.get(&pane.id).copied();
            // A pane that was not there at the last look was born while we watched, however
            // quickly it died: its death is news, not an old one.
            let listed = self.servers.get(srv).and_then(|s| s.listed.as_ref());
            let born = listed.is_some_and(|l| !l.contains(&pane.id));
            let mut card = observe(prev, pane, agent, started, now);
            if born && card.pane.dead && !card.seen_alive {
                card.seen_alive = true;
                card.died_at = card.died_at.or(Some(now));
            }
            if card.pane.dead {
                // The pane died after (or with) the agent its process hosted: the host is
                // gone, nothing can be typed there, and tmux has the pane's status.
                if let Some(h) = card.launcher.as_mut() {
                    h.alive = false;
                    h.prompt = false;
                }
            }
            if let Some(argv) = obs.foreground.get(&card.pane.id) {
                let kind = card.agent.as_deref().unwrap_or_default();
                card.argv_id = crate::agent::session_id_from_argv(kind, argv).or(card.argv_id);
            }
            cards.push(card);
        }
        // Only agents count: a job a user sent off with `(cmd &)` also outlives its
        // parent on the pane's terminal, and is not the agent's.
        for card in &mut cards {
            card.orphans = orphans
                .remove(&card.pane.id)
                .unwrap_or_default()
                .into_iter()
                .filter(|p| self.agents.by_proc(p).is_some())
                .collect();
        }
        if partial {
            // Back in their places; a card no longer made (its pane is not an agent's now)
            // leaves its place, a new one joins (and is sorted in below).
            let mut fresh = Vec::new();
            for card in cards {
                match places.remove(&card.pane.id) {
                    Some(i) => self.cards[i] = card,
                    None => fresh.push(card),
                }
            }
            if !places.is_empty() {
                let vacated: std::collections::HashSet<usize> = places.into_values().collect();
                let mut i = 0;
                self.cards.retain(|_| {
                    i += 1;
                    !vacated.contains(&(i - 1))
                });
            }
            self.cards.extend(fresh);
        } else {
            cards.extend(others);
            self.cards = cards;
        }
        self.sort_cards();
        if self.supervision.waits_told.len() > self.cards.len() {
            let ids: std::collections::HashSet<PaneId> =
                self.cards.iter().map(|c| c.pane.id).collect();
            self.supervision.waits_told.retain(|id, _| ids.contains(id));
        }
        if let (false, Some(s)) = (partial, self.servers.get_mut(srv)) {
            s.listed = Some(listed);
        }
        // Agent panes that vanished while their agent ran: never silence. (Not when a
        // record did not parse: that pane may still be there; a partial look lists only
        // panes that are.)
        if self.supervision.supervising && obs.listing.malformed == 0 && !partial {
            let mut gone: Vec<Card> = old
                .into_values()
                .filter(|c| c.agent.is_some() && !c.pane.dead && c.life == Life::Running)
                .collect();
            gone.sort_by_key(|c| c.pane.id.0);
            for c in gone {
                let mut ev = self.event(&c, "gone", now);
                ev.detail = Some(if c.pane.remain_on_exit {
                    "the pane was closed while its agent ran".into()
                } else {
                    "the pane closed before agentwatch could keep it (remain-on-exit): its exit and output are lost".into()
                });
                fx.push(Effect::Log(Log::warn(format!(
                    "{}: {}",
                    c.pane.id,
                    ev.detail.as_deref().unwrap_or_default()
                ))));
                fx.push(Effect::Journal(ev));
            }
        }

        // Keep the selection on the same pane, or the one that took its place.
        if self.selected_index().is_none() {
            self.select_in_place_of(selected_pos);
        }
    }

    /// What follows every look at a server, whether its cards were made anew or stand:
    /// kicks for lost exit statuses, what its agents do, what supervision does about it,
    /// and the one write of what this look found (`marks`) and what is recorded now.
    #[allow(clippy::too_many_arguments)]
    fn after_look(
        &mut self,
        srv: ServerId,
        server_pid: Option<u32>,
        auto_all: &str,
        marks: Vec<(PaneId, Opt, String)>,
        written: super::attend::Written<'_>,
        files: &HashMap<u32, crate::attention::AgentFile>,
        trees: &HashMap<PaneId, Arc<crate::pane::ProcTree>>,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        // Lost SIGCHLD: kick the server and look again at once (another host's server is
        // asked to signal itself).
        let due: Vec<usize> = (0..self.cards.len())
            .filter(|&i| self.cards[i].pane.id.server() == srv && self.cards[i].kick_due(now))
            .collect();
        let kick = match (srv, server_pid) {
            (ServerId::Local, None) => None,
            (server, pid) => Some(Effect::Kick { server, pid }),
        };
        if let (false, Some(kick)) = (due.is_empty(), kick) {
            for i in due {
                self.cards[i].kicks += 1;
                self.cards[i].kicked_at = Some(now);
            }
            fx.push(kick);
            match srv {
                ServerId::Local => self.poll(srv, false, fx),
                host => {
                    if let Some(s) = self.servers.get_mut(host) {
                        s.poll_again = true;
                    }
                }
            }
        }

        if srv.is_local() {
            self.follow_server_auto(auto_all);
        }
        self.attend(srv, written, files, trees, now, fx);
        self.check_resumes(now, fx);
        self.want_discovery(now, fx);
        self.supervise(now, fx);
        self.watch_limits(now, fx);
        self.tell_story();
        self.prune_lost(fx);
        if !self.supervision.notes.is_empty() {
            fx.push(Effect::Notify {
                events: std::mem::take(&mut self.supervision.notes),
                bell_only: !self.supervision.supervising,
            });
        }
        // One write, in order: what this look found (exit marks, an occupant's records
        // dropped) first, then what is recorded of the panes now, which may set the same
        // options anew.
        let mut sets = marks;
        if !self.reads.options_in_flight {
            // The records are due after cards were made anew, and every 2 s as a net; in
            // between only what agents do changes (most looks, one per output heard).
            let records = self
                .reads
                .records_at
                .is_none_or(|t| now.saturating_sub(t) >= RECORDS_EVERY_MS);
            if records {
                self.reads.records_at = Some(now);
            }
            let writes = self.option_writes(records);
            self.supervision.said(&self.cards, &writes);
            if !writes.is_empty() {
                self.reads.options_in_flight = true;
                sets.extend(writes);
            }
        }
        if !sets.is_empty() {
            fx.push(Effect::SetOptions(sets));
        }
    }

    /// What tmux forgets at death, recorded while the agent pane is alive; and
    /// remain-on-exit so its output outlives it. Without `records`, only what the agents do
    /// (the supervisor's state word and verdict): nothing else of a card changes in a look
    /// that learnt nothing.
    pub(super) fn option_writes(&self, records: bool) -> Vec<(PaneId, Opt, String)> {
        let mut sets = Vec::new();
        for card in &self.cards {
            let Some(kind) = &card.agent else {
                continue;
            };
            // A server that does not answer is written to when it does.
            if !card.pane.id.server().is_local() && self.card_stale(card) {
                continue;
            }
            let p = &card.pane;
            let mut set = |k: Opt, v: &str| sets.push((p.id, k, v.to_string()));
            // The id named on the command line is worth recording even on a dead pane (only
            // for kinds that have ids: no command line is parsed every poll for nothing).
            let def = self
                .agents
                .get(kind)
                .filter(|d| records && d.id != crate::agent::IdShape::None);
            if let (true, Some(def)) = (p.opts.session_id.is_empty(), def) {
                if let Some(id) = resume::named_session_id(card).filter(|id| def.id.accepts(id)) {
                    set(Opt::SessionId, &id);
                }
            }
            // What the agent does, for tmux status lines: by the supervisor only (dashboards
            // beside it would race it).
            if self.supervision.supervising {
                let word = card.state_word();
                let said = self.supervision.states.get(&p.id).map(String::as_str);
                if said.unwrap_or(p.opts.state.as_str()) != word {
                    set(Opt::State, word);
                }
                // Compared as decided, formatted only when it changed (every card, every
                // poll).
                // What a prompt asks, kept with the verdict for `status` (only while it
                // waits).
                let asked = card.attention.asks();
                let now = card
                    .attention
                    .now
                    .as_ref()
                    .filter(|_| card.life == Life::Running);
                match (now, self.supervision.verdicts.get(&p.id)) {
                    (Some((r, t)), said) if said.is_none_or(|v| !v.says(r, *t, asked)) => {
                        set(
                            Opt::Verdict,
                            &crate::attention::Verdict::of(r, *t, asked).value(),
                        );
                    }
                    (None, Some(_)) => set(Opt::Verdict, ""),
                    _ => {}
                }
            }
            if p.dead || !records {
                continue;
            }
            // Not for a shell typed at: its pane ends when the user ends the shell.
            if self.retain_dead
                && !p.remain_on_exit
                && card.launcher.as_ref().is_none_or(|h| !h.prompt)
            {
                set(Opt::RemainOnExit, "on");
            }
            if &p.opts.agent != kind {
                set(Opt::Agent, kind);
            }
            if let Some(occupant) = self.occupant_write(card) {
                set(Opt::Occupant, &occupant);
            }
            if !p.current_path.is_empty() && p.current_path != p.opts.cwd {
                set(Opt::Cwd, &p.current_path);
            }
        }
        sets
    }

    /// Options that landed on the panes, written on the cards as the poller's picture of
    /// tmux takes them: a look that learns nothing new leaves the cards as they are, and
    /// they must show what was written, or it would be written again on every look. Not
    /// the state word (see [`Supervision::states`](super::Supervision)).
    pub(super) fn wrote_on_cards(&mut self, landed: &[(PaneId, Opt, String)]) {
        if landed.is_empty() {
            return;
        }
        let at: HashMap<PaneId, usize> = (self.cards.iter().enumerate())
            .map(|(i, c)| (c.pane.id, i))
            .collect();
        for (id, opt, value) in landed.iter().filter(|(_, o, _)| *o != Opt::State) {
            if let Some(&i) = at.get(id) {
                self.cards[i].pane.set_option(opt.name(), value.clone());
            }
        }
    }
}
