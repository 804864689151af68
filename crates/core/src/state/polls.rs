//! Polling the servers: one poll under way per server, what each reads whole, and what
//! its answer or silence means.

use super::*;

impl State {
    /// The local server is not answering.
    pub fn is_stale(&self) -> bool {
        self.servers.local().is_down()
    }

    /// Asks for a poll of `server` unless one is under way; then, with `again`, it is
    /// polled again as soon as that one answers. Each server is polled on its own, so a slow
    /// or unreachable one holds up nobody.
    pub(super) fn poll(&mut self, server: ServerId, again: bool, fx: &mut Vec<Effect>) {
        let Some(s) = self.servers.get_mut(server) else {
            return;
        };
        if s.poll_in_flight {
            s.poll_again |= again;
            return;
        }
        s.poll_in_flight = true;
        let hot = self.hot(server);
        let whole = self.remake(server);
        fx.push(Effect::Poll { server, hot, whole });
    }

    /// Whether the next look at `server` must hand over its panes even if none changed:
    /// before its first look, when what its cards are made by changed here, and while a
    /// death's exit status is awaited (each look counts towards giving up on it).
    fn remake(&mut self, server: ServerId) -> bool {
        let reading = self
            .cards
            .iter()
            .any(|c| c.pane.id.server() == server && c.life == Life::Reading);
        let Some(s) = self.servers.get_mut(server) else {
            return true;
        };
        std::mem::take(&mut s.remake) || s.listed.is_none() || reading
    }

    /// The cards of every server are made anew from their panes at their next looks.
    pub(super) fn remake_all(&mut self) {
        for id in self.servers.ids() {
            if let Some(s) = self.servers.get_mut(id) {
                s.remake = true;
            }
        }
    }

    /// Polls every server: the local one as the tick does (a poll under way is enough),
    /// the others as soon as they answer.
    pub(super) fn poll_all(&mut self, local_again: bool, fx: &mut Vec<Effect>) {
        for server in self.servers.ids() {
            self.poll(server, local_again || !server.is_local(), fx);
        }
    }

    /// The panes of `server` to read whole this poll: the deaths being handled (a status
    /// still to read, a resume due or under way, a relaunch's first seconds) every time,
    /// and the cards on screen once a second (their previews follow output, cursor and names
    /// no faster) but for agents heard quiet since before their last read (see [`settled`]).
    /// Every question wakes a tmux server of 1000 panes for a pass over all of them.
    pub(super) fn hot(&mut self, server: ServerId) -> Vec<PaneId> {
        // The cards may have changed since the last message (this look's deaths).
        self.refilter();
        let read_at = self.servers.get(server).map_or(0, |s| s.screen_read_at);
        let due = self.now.saturating_sub(read_at) >= SCREEN_READ_MS;
        let on_screen: Vec<usize> = if self.headless || !due {
            Vec::new()
        } else if self.geometry().list && server.is_local() {
            let page: Vec<usize> = self.visible().collect();
            let n = page.len().max(1);
            let from = self.reads.list_read_from % n;
            self.reads.list_read_from = from + LIST_READ_AT_ONCE;
            (0..LIST_READ_AT_ONCE.min(page.len()))
                .map(|k| page[(from + k) % n])
                .chain(self.selected_index())
                .collect()
        } else if self.geometry().list {
            // Another host's lines in the list: its selected line only; the others' last
            // lines follow what the brief listing says changed.
            self.selected_index().into_iter().collect()
        } else {
            self.visible().collect()
        };
        let Some(s) = self.servers.get_mut(server) else {
            return Vec::new();
        };
        if on_screen
            .iter()
            .any(|&i| self.cards[i].pane.id.server() == server)
        {
            s.screen_read_at = self.now;
        }
        let reread = std::mem::take(&mut s.reread);
        let whole_at = &mut self.reads.whole_at;
        if whole_at.len() > 2 * self.cards.len() + 64 {
            let known: std::collections::HashSet<PaneId> =
                self.cards.iter().map(|c| c.pane.id).collect();
            whole_at.retain(|id, _| known.contains(id));
        }
        let hot: Vec<PaneId> = self
            .cards
            .iter()
            .enumerate()
            .filter(|(i, c)| {
                c.pane.id.server() == server
                    && (reread.contains(&c.pane.id)
                        || handling(c)
                        || (on_screen.contains(i) && !settled(c, whole_at.get(&c.pane.id))))
            })
            .map(|(_, c)| c.pane.id)
            .collect();
        for id in &hot {
            whole_at.insert(*id, self.now);
        }
        hot
    }

    /// Whether a card's state may be out of date: its server is not answering.
    pub fn card_stale(&self, card: &Card) -> bool {
        self.servers
            .get(card.pane.id.server())
            .is_some_and(ServerPoll::is_down)
    }

    /// The name of the host a card's pane is on; `None` for the local server.
    pub fn host_name(&self, card: &Card) -> Option<&str> {
        self.servers
            .get(card.pane.id.server())
            .and_then(|s| s.name.as_deref())
    }

    /// The answer to a poll of `server`.
    pub(super) fn polled(
        &mut self,
        server: ServerId,
        result: Result<Observation, TmuxError>,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        let Some(s) = self.servers.get_mut(server) else {
            return;
        };
        s.poll_in_flight = false;
        match (server, result) {
            (ServerId::Local, Ok(obs)) => {
                s.link = Link::Up;
                self.absorb(server, obs, now, fx);
            }
            (ServerId::Local, Err(e)) => {
                s.poll_again = false;
                self.server_failed(&e, now, fx);
                self.servers.local_mut().link = Link::Down(e);
            }
            (ServerId::Host(_), Ok(obs)) => {
                let name = s.name.clone().unwrap_or_default();
                if let Some(since) = s.down_since.take() {
                    fx.push(Effect::Log(Log::info(format!(
                        "{name}: answering again (down since {since})"
                    ))));
                }
                s.link = Link::Up;
                let pid = obs.listing.server_pid;
                let restarted = matches!((s.server_pid, pid), (Some(a), Some(b)) if a != b);
                s.server_pid = pid.or(s.server_pid);
                if restarted {
                    self.forget_host(server, "its tmux server was started again", now, fx);
                }
                self.absorb(server, obs, now, fx);
            }
            (ServerId::Host(_), Err(e)) => {
                if s.down_since.is_none() {
                    let name = s.name.as_deref().unwrap_or_default();
                    fx.push(Effect::Log(Log::warn(format!("{name}: {e}"))));
                }
                s.down_since.get_or_insert(now);
                let gone = matches!(e, TmuxError::NoServer { .. });
                s.link = Link::Down(e);
                // The host answers, its server is gone: so are its panes.
                if gone {
                    s.server_pid = None;
                    self.forget_host(server, "its tmux server is gone", now, fx);
                }
            }
        }
        let again = self
            .servers
            .get_mut(server)
            .is_some_and(|s| std::mem::take(&mut s.poll_again));
        if again {
            self.poll(server, false, fx);
        }
    }

    /// Another host's server went (or was started again): its cards go, never handed to the
    /// new server's panes that reuse their ids. Journaled once, by the supervisor, as the
    /// local server's loss is.
    pub(super) fn forget_host(
        &mut self,
        server: ServerId,
        why: &str,
        now: Millis,
        fx: &mut Vec<Effect>,
    ) {
        let lost = self
            .cards
            .iter()
            .filter(|c| c.pane.id.server() == server && c.agent.is_some())
            .count();
        self.cards.retain(|c| c.pane.id.server() != server);
        self.overlays.closing.retain(|id| id.server() != server);
        if self
            .peek
            .as_ref()
            .is_some_and(|p| p.pane.server() == server)
        {
            self.peek = None;
        }
        let Some(s) = self.servers.get_mut(server) else {
            return;
        };
        s.listed = Some(std::collections::HashSet::new());
        let name = s.name.clone().unwrap_or_default();
        let lost_words = crate::text::counted(lost, "agent", "agents");
        fx.push(Effect::Log(Log::warn(format!(
            "{name}: {why}: {lost_words} lost"
        ))));
        if self.supervision.supervising && lost > 0 {
            fx.push(Effect::Journal(crate::msg::Event {
                ts: now,
                event: "server_gone".into(),
                host: Some(name),
                detail: Some(format!("{why}: {lost_words} lost")),
                ..Default::default()
            }));
        }
    }
}

/// A card on screen that has nothing new to be read whole for: a live agent heard as it
/// writes (its output counted in `/proc` or copied by tmux, to the millisecond) that has not
/// worked since [`SETTLED_MS`] before its last whole read, with no hook's word. What its
/// record holds changes with output (cursor, history, output time), or is told otherwise:
/// a rename (the control connection), a new process (the kernel), a death (a pidfd), a
/// supervisor's verdict (written within a second of the output's stop). The rest (a path
/// changed without a byte written, an option set by hand) waits for the full listing.
/// Every question wakes a tmux server of 1000 panes for a pass over all of them (4 ms).
fn settled(c: &Card, whole_at: Option<&Millis>) -> bool {
    let a = &c.attention;
    c.agent.is_some()
        && c.life == Life::Running
        && a.heard
        && a.working_since.is_none()
        && a.hook.is_none()
        && c.pane.hook_status.is_empty()
        && whole_at
            .is_some_and(|&at| a.output.map_or(0, |(t, _)| t).saturating_add(SETTLED_MS) <= at)
}
