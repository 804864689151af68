//! The tmux servers watched, local and other hosts' alike: how each answers, and its polls.

use std::collections::HashSet;

use crate::errors::TmuxError;
use crate::pane::{PaneId, ServerId};
use crate::time::Millis;

/// How a tmux server answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// No answer yet.
    Connecting,
    Up,
    /// The last poll failed; the cards keep their last known state, marked stale.
    Down(TmuxError),
}

/// One tmux server as the core knows it, and its polls: at most one in flight.
#[derive(Debug, Clone)]
pub struct ServerPoll {
    /// The host's name (`[[hosts]]`); `None` for the local server.
    pub name: Option<String>,
    pub link: Link,
    /// Since when it has not answered: its banner says so.
    pub down_since: Option<Millis>,
    /// Records of its last listing that did not parse.
    pub malformed: usize,
    pub(super) poll_in_flight: bool,
    /// Asked for while a poll was under way: poll again when it answers.
    pub(super) poll_again: bool,
    /// Its panes at its last look (for deaths born while watched); `None` before the first.
    pub(super) listed: Option<HashSet<PaneId>>,
    /// When its cards on screen were last read whole.
    pub(super) screen_read_at: Millis,
    /// Its tmux server's pid: another pid is another server, whose panes reuse the old
    /// one's ids.
    pub(super) server_pid: Option<u32>,
    /// Its panes whose screens were just read: their whole records (a hook's pane options
    /// with them) are read at its next poll. The brief listing of every pane carries no
    /// options: two option lookups made it 40 % dearer for tmux at 1000 panes.
    pub(super) reread: HashSet<PaneId>,
    /// Its cards must be made anew from its panes at the next look, changed or not: what
    /// they are made by changed here (this instance began or ceased to supervise).
    pub(super) remake: bool,
}

impl ServerPoll {
    fn new(name: Option<String>) -> ServerPoll {
        ServerPoll {
            name,
            link: Link::Connecting,
            down_since: None,
            malformed: 0,
            poll_in_flight: false,
            poll_again: false,
            listed: None,
            screen_read_at: 0,
            server_pid: None,
            reread: HashSet::new(),
            remake: false,
        }
    }

    pub fn is_down(&self) -> bool {
        matches!(self.link, Link::Down(_))
    }
}

/// Every server watched: the local one first, then each configured host in order.
#[derive(Debug, Clone)]
pub struct Servers {
    /// The local server's socket, for the header, messages and the journal.
    pub socket: String,
    all: Vec<ServerPoll>,
}

impl Servers {
    pub(super) fn new(socket: String, hosts: impl IntoIterator<Item = String>) -> Servers {
        let mut all = vec![ServerPoll::new(None)];
        all.extend(hosts.into_iter().map(|name| ServerPoll::new(Some(name))));
        Servers { socket, all }
    }

    fn index(id: ServerId) -> usize {
        id.host_index().map_or(0, |i| i + 1)
    }

    pub fn local(&self) -> &ServerPoll {
        &self.all[0]
    }

    pub fn local_mut(&mut self) -> &mut ServerPoll {
        &mut self.all[0]
    }

    pub fn get(&self, id: ServerId) -> Option<&ServerPoll> {
        self.all.get(Self::index(id))
    }

    pub(super) fn get_mut(&mut self, id: ServerId) -> Option<&mut ServerPoll> {
        self.all.get_mut(Self::index(id))
    }

    /// Every server, the local one first.
    pub fn ids(&self) -> impl Iterator<Item = ServerId> + 'static {
        (0..self.all.len()).map(|i| match i {
            0 => ServerId::Local,
            i => ServerId::host(i - 1),
        })
    }

    /// The other hosts' servers, in the order of `[[hosts]]`.
    pub fn hosts(&self) -> impl Iterator<Item = (ServerId, &ServerPoll)> {
        self.all[1..]
            .iter()
            .enumerate()
            .map(|(i, s)| (ServerId::host(i), s))
    }
}
