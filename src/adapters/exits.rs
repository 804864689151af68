//! Which of a set of processes ended, asked of the kernel once per tick: one pidfd per
//! process in one epoll set, so the cost of a tick does not grow with the number of
//! processes below the panes. Where pidfds are missing (kernels before 5.3, seccomp), each
//! process is asked with `kill(pid, 0)` instead.

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub struct ExitWatch {
    /// None when the kernel has no epoll or pidfds: every pid is asked in turn.
    epoll: Option<OwnedFd>,
    fds: HashMap<u32, OwnedFd>,
    /// Watched without a pidfd (it could not be opened).
    asked: HashSet<u32>,
}

impl Default for ExitWatch {
    fn default() -> Self {
        Self::new()
    }
}

impl ExitWatch {
    pub fn new() -> ExitWatch {
        // SAFETY: epoll_create1 takes only flags; a valid fd it returns is ours to own.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        ExitWatch {
            // SAFETY: fd was just returned by the kernel and is owned by nothing else.
            epoll: (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) }),
            fds: HashMap::new(),
            asked: HashSet::new(),
        }
    }

    /// The epoll set, readable when a watched process ended (none on the fallback).
    pub fn epoll_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.epoll.as_ref().map(|fd| fd.as_fd())
    }

    /// Watch exactly `pids`: start on the new ones, stop on the rest.
    pub fn set(&mut self, pids: &HashSet<u32>) {
        self.fds.retain(|pid, _| pids.contains(pid));
        self.asked.retain(|pid| pids.contains(pid));
        for &pid in pids {
            if self.fds.contains_key(&pid) || self.asked.contains(&pid) {
                continue;
            }
            match self.open(pid) {
                Some(fd) => {
                    self.fds.insert(pid, fd);
                }
                None => {
                    self.asked.insert(pid);
                }
            }
        }
    }

    /// The watched processes that ended (a zombie has ended), no longer watched from now.
    pub fn ended(&mut self) -> HashSet<u32> {
        let mut out: HashSet<u32> = self.asked.iter().copied().filter(|&p| !alive(p)).collect();
        if let Some(ep) = &self.epoll {
            if !self.fds.is_empty() {
                let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
                loop {
                    // SAFETY: the buffer holds `events.len()` entries; timeout 0 never blocks.
                    let n = unsafe {
                        libc::epoll_wait(
                            ep.as_raw_fd(),
                            events.as_mut_ptr(),
                            events.len() as i32,
                            0,
                        )
                    };
                    let Ok(n) = usize::try_from(n) else { break };
                    for e in &events[..n] {
                        let pid = e.u64 as u32;
                        // Closing the pidfd takes it out of the epoll set too.
                        self.fds.remove(&pid);
                        out.insert(pid);
                    }
                    if n < events.len() {
                        break;
                    }
                }
            }
        }
        self.asked.retain(|p| !out.contains(p));
        out
    }

    fn open(&self, pid: u32) -> Option<OwnedFd> {
        let ep = self.epoll.as_ref()?;
        let raw = libc::pid_t::try_from(pid).ok()?;
        // SAFETY: pidfd_open takes a pid and flags; a valid fd it returns is ours to own.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, raw, 0) };
        let fd = i32::try_from(fd).ok().filter(|&f| f >= 0)?;
        // SAFETY: fd was just returned by the kernel and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: u64::from(pid),
        };
        // SAFETY: both fds are open; ev lives across the call.
        let r = unsafe {
            libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd.as_raw_fd(), &mut ev)
        };
        (r == 0).then_some(fd)
    }
}

/// Whether a process still exists (`kill` counts a zombie as existing: the fallback learns
/// of an end only when the parent reaps it).
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; no signal is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait_for_end(w: &mut ExitWatch, pid: u32) -> bool {
        for _ in 0..200 {
            if w.ended().contains(&pid) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn a_watched_child_that_ends_is_reported_once() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let pid = child.id();
        let mut w = ExitWatch::new();
        w.set(&HashSet::from([pid]));
        assert!(w.ended().is_empty(), "a running process has not ended");
        child.kill().expect("kill our own child");
        // Not reaped yet: a zombie has ended all the same.
        assert!(
            wait_for_end(&mut w, pid),
            "the end of {pid} was never reported"
        );
        assert!(
            w.ended().is_empty(),
            "reported once, then no longer watched"
        );
        child.wait().expect("reap");
    }

    #[test]
    fn unwatched_processes_are_not_reported() {
        let mut a = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let mut w = ExitWatch::new();
        w.set(&HashSet::from([a.id()]));
        w.set(&HashSet::new());
        a.kill().expect("kill our own child");
        a.wait().expect("reap");
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(w.ended().is_empty());
    }

    #[test]
    fn a_pid_that_is_gone_already_is_reported_ended() {
        let mut a = std::process::Command::new("true")
            .spawn()
            .expect("true runs");
        let pid = a.id();
        a.wait().expect("reap");
        let mut w = ExitWatch::new();
        w.set(&HashSet::from([pid]));
        assert!(wait_for_end(&mut w, pid));
    }
}
