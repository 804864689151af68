//! What wakes the poll loop, and what changed between polls that tmux does not report:
//! the ends of the panes' processes (pidfds, see [`crate::adapters::exits`]), new children
//! of the tmux server, the control connection's notices, a shell's new foreground job, and
//! writes to the agents' own state files. These signs decide what the next poll asks tmux.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::{lock, Prober};
use crate::adapters::mirror::Heard;
use crate::adapters::procs::local::{foreground_group, last_pid, server_children};
use crate::core::pane::PaneId;

/// What the poller watches between polls, besides tmux.
#[derive(Default)]
pub(super) struct Signs {
    /// The tmux server's children at the last look: a new one is a new pane (or a respawn,
    /// or a job of the server's), in any session.
    children: Option<HashSet<u32>>,
    /// The server they are the children of.
    server: Option<u32>,
    /// The newest pid on the machine at the last look: unchanged, nothing was started.
    newest: Option<u64>,
    /// Panes whose own process is a shell: its pid and its terminal's foreground group as
    /// last read. A command typed at the prompt changes the group and nothing tmux reports.
    shells: HashMap<PaneId, (u32, Option<u32>)>,
}

impl Prober {
    /// What the control connection to another host's server heard since the last poll:
    /// all there is to hear of it (its processes are not this machine's).
    pub(super) fn heard_remote(&self) -> Heard {
        Heard {
            // No kernel here tells of its processes' ends: its panes are listed briefly
            // every 2 s (whatever its agents do), so a death there is seen within that.
            watched: false,
            ..self.notices_heard()
        }
    }

    /// What the control connection heard since the last poll: the server's shape or names
    /// changed.
    fn notices_heard(&self) -> Heard {
        let notices = self.tmux.notices();
        Heard {
            shape: notices
                .shape
                .swap(false, std::sync::atomic::Ordering::SeqCst),
            names: notices
                .names
                .swap(false, std::sync::atomic::Ordering::SeqCst),
            ..Heard::default()
        }
    }

    /// What changed since the last poll without tmux answering a question: processes that
    /// ended, new children of the server, notices on the control connection, a shell's
    /// foreground job.
    pub(super) fn heard(&self) -> Heard {
        let notices = self.tmux.notices();
        let mut heard = self.notices_heard();
        {
            let mut trees = lock(&self.trees);
            heard.ended = trees.exits.ended();
            if !heard.ended.is_empty() {
                heard.touched.extend(
                    trees
                        .by_pane
                        .iter()
                        .filter(|(_, t)| t.procs.below.iter().any(|p| heard.ended.contains(&p.pid)))
                        .map(|(id, _)| *id),
                );
            }
        }
        let server = lock(&self.mirror).server_pid();
        let mut signs = lock(&self.signs);
        // Nothing started on the machine since the last look: no new pane, no new job.
        let newest = last_pid();
        let born = newest.is_none() || newest != signs.newest;
        signs.newest = newest;
        if born || server != signs.server {
            signs.server = server;
            let kids = server.and_then(server_children);
            heard.shape |= match (&kids, &signs.children) {
                (Some(kids), Some(old)) => kids.iter().any(|k| !old.contains(k)),
                _ => false,
            };
            signs.children = kids;
        }
        // A pane whose process ends before the server's children are read leaves no trace
        // there: only the control connection's notice of its window tells of it.
        heard.attending = self.attending.load(std::sync::atomic::Ordering::SeqCst);
        heard.watched = signs.children.is_some()
            && notices.listening.load(std::sync::atomic::Ordering::SeqCst)
            && lock(&self.trees).exits.epoll_fd().is_some();
        // A process started somewhere: a shell may have a new foreground job.
        if born {
            for (id, (pid, fg)) in signs.shells.iter_mut() {
                let now_fg = foreground_group(*pid);
                if now_fg != *fg {
                    *fg = now_fg;
                    heard.touched.push(*id);
                }
            }
        }
        heard
    }

    /// The server's children read at once when none were read yet (or the server is new):
    /// right after the listing that made its pid known, so that a pane split a moment later,
    /// in a session that sends no notice, is new to them (read at the next poll instead, it
    /// was taken as known, and found only by the 10 s net).
    pub(super) fn first_children(&self) {
        let server = lock(&self.mirror).server_pid();
        let mut signs = lock(&self.signs);
        if let (Some(pid), true) = (server, signs.children.is_none() || server != signs.server) {
            signs.server = server;
            signs.children = server_children(pid);
        }
    }

    /// Each shell pane's foreground group as last read (a command typed at its prompt
    /// changes it: its tree is walked again, even when tmux's current command stays the
    /// shell's name, as it does for a script run from the prompt).
    pub(super) fn shell_groups(&self) -> HashMap<PaneId, (u32, Option<u32>)> {
        lock(&self.signs).shells.clone()
    }

    /// Keeps the list of panes whose own process is a shell, with their foreground group.
    pub(super) fn note_shells(
        &self,
        panes: &[crate::core::pane::Pane],
        comm: &HashMap<PaneId, String>,
    ) {
        let mut signs = lock(&self.signs);
        let old = std::mem::take(&mut signs.shells);
        // One pass: a shell pane keeps its foreground group as last read while its process
        // stays the same; a new one has it read now.
        signs.shells = panes
            .iter()
            .filter(|p| !p.dead)
            .filter_map(|p| {
                let (pid, c) = (p.pid?, comm.get(&p.id)?);
                if !crate::core::launcher::is_shell(c, &self.shells) {
                    return None;
                }
                let fg = match old.get(&p.id) {
                    Some(&(was, fg)) if was == pid => fg,
                    _ => foreground_group(pid),
                };
                Some((p.id, (pid, fg)))
            })
            .collect();
    }

    /// The agents' own state files; once they are watched, a write wakes the loop.
    pub(super) fn agent_files(
        &self,
        now: std::time::Instant,
    ) -> Arc<HashMap<u32, crate::core::attention::AgentFile>> {
        let mut claude = lock(&self.claude);
        let files = claude.current(now);
        if !claude.waking {
            let fd = claude.fd().and_then(|fd| fd.try_clone_to_owned().ok());
            if let (Some(fd), Ok(_)) = (fd, tokio::runtime::Handle::try_current()) {
                claude.waking = true;
                wake_on_readable(fd, Arc::clone(self.tmux.notices()));
            }
        }
        files
    }

    /// Starts, once, the task that wakes the loop when a watched process ends.
    pub(super) fn start_waker(&self) {
        self.waker.get_or_init(|| {
            let fd = lock(&self.trees)
                .exits
                .epoll_fd()
                .and_then(|fd| fd.try_clone_to_owned().ok());
            let (Some(fd), Ok(_)) = (fd, tokio::runtime::Handle::try_current()) else {
                return;
            };
            wake_on_readable(fd, Arc::clone(self.tmux.notices()));
        });
    }
}

/// A task that wakes the loop each time `fd` (a duplicate of ours: the epoll set of ended
/// processes, or the inotify watch of state files) becomes readable; the poll reads it.
fn wake_on_readable(
    fd: std::os::fd::OwnedFd,
    notices: Arc<crate::adapters::tmux::control::Notices>,
) {
    // SAFETY: `fd` is a descriptor of our own (a duplicate), moved into the AsyncFd, which
    // alone closes it.
    let registered = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
    };
    let Ok(afd) = registered else {
        return;
    };
    tokio::spawn(async move {
        loop {
            let Ok(mut ready) = afd.readable().await else {
                return;
            };
            ready.clear_ready();
            notices.wake.notify_one();
        }
    });
}
