//! What this machine's `/proc` says of a process: its stat line (name, parent, group, the
//! terminal's foreground group, start), its argv, and the table of every process that the
//! trees are walked in, read again only where a process is new or too young to trust.

use std::collections::{HashMap, HashSet};

use crate::core::time::Millis;

/// The children of the tmux server's process (`/proc/PID/task/PID/children`): one read, a
/// few kilobytes for a thousand panes. `None` where the kernel does not offer it.
pub(crate) fn server_children(server: u32) -> Option<HashSet<u32>> {
    let text = std::fs::read_to_string(format!("/proc/{server}/task/{server}/children")).ok()?;
    Some(
        text.split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect(),
    )
}

/// The most recently started pid on the machine: the last field of `/proc/loadavg`.
pub(crate) fn last_pid() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().nth(4)?.parse().ok()
}

/// How long after its start a process may still exec or move to its own process group (a
/// shell's job does, right after fork): until then what was read of it is read again.
pub(crate) const SETTLE_MS: Millis = 2_000;

/// Every process's parent, process group, name and argv, kept between passes: a pass over
/// `/proc` lists the pids (one directory read) and reads only those it does not know yet,
/// or knew too young.
#[derive(Default)]
pub(crate) struct ProcTable {
    pass: u64,
    pub(crate) known: HashMap<u32, Known>,
    pub(crate) children: HashMap<u32, Vec<u32>>,
}

pub(crate) struct Known {
    /// The pass over `/proc` that last saw it.
    pub(crate) pass: u64,
    pub(crate) st: Stat,
    pub(crate) start_ms: Option<Millis>,
    pub(crate) settled: bool,
    /// It ended (the exit watch said so) and may linger as a zombie until reaped: no
    /// longer part of any tree.
    pub(crate) ended: bool,
    pub(crate) argv: Option<Vec<String>>,
}

impl ProcTable {
    /// Reads what is new in `/proc`; returns the pids it had not seen before.
    pub(crate) fn refresh(&mut self, boot_ms: Option<Millis>, tck: u64) -> Vec<u32> {
        let mut new = Vec::new();
        let now_ms = crate::adapters::wall_ms();
        self.pass = self.pass.wrapping_add(1);
        let pass = self.pass;
        let before = self.known.len();
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                let Some(pid) = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.parse::<u32>().ok())
                else {
                    continue;
                };
                if let Some(k) = self.known.get_mut(&pid).filter(|k| k.settled) {
                    k.pass = pass;
                    continue;
                }
                let Some(st) = read_stat(pid) else {
                    self.known.remove(&pid);
                    continue;
                };
                if !self.known.contains_key(&pid) {
                    new.push(pid);
                }
                let start_ms = boot_ms.map(|b| b + st.start_ticks * 1000 / tck);
                // A pid reused since, or read again while young: its argv is read again too.
                let prev = self
                    .known
                    .remove(&pid)
                    .filter(|k| k.st.start_ticks == st.start_ticks);
                let ended = prev.as_ref().is_some_and(|k| k.ended);
                let argv = prev.filter(|k| k.settled).and_then(|k| k.argv);
                self.known.insert(
                    pid,
                    Known {
                        ended,
                        settled: start_ms.is_some_and(|s| now_ms.saturating_sub(s) > SETTLE_MS),
                        pass,
                        st,
                        start_ms,
                        argv,
                    },
                );
            }
        }
        self.known.retain(|_, k| k.pass == pass);
        // The same processes as before (nothing new, nothing gone): the map stands.
        if new.is_empty() && self.known.len() == before {
            return new;
        }
        self.index_children();
        new
    }

    /// Each known process's children, in pid order, from the parents they name.
    pub(crate) fn index_children(&mut self) {
        self.children.clear();
        for (&pid, k) in &self.known {
            self.children.entry(k.st.ppid).or_default().push(pid);
        }
        for kids in self.children.values_mut() {
            kids.sort_unstable();
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct ProcInfo {
    pub(crate) start: Option<Millis>,
    pub(crate) comm: String,
    /// tmux's current command of its pane when it was read.
    pub(crate) command: String,
}

impl ProcInfo {
    /// Started so recently that it may still exec (its name and argv may yet change); one
    /// whose start is not known counts as settled.
    pub(crate) fn young(&self) -> bool {
        self.start
            .is_some_and(|s| crate::adapters::wall_ms().saturating_sub(s) <= SETTLE_MS)
    }
}

pub(crate) struct Stat {
    /// The process name (`comm`), e.g. `bash`.
    pub(crate) comm: String,
    pub(crate) ppid: u32,
    pub(crate) pgrp: u32,
    /// Foreground process group of the controlling terminal; none without a terminal.
    pub(crate) tpgid: Option<u32>,
    /// The controlling terminal (`tty_nr`); none (0) for a daemon.
    pub(crate) tty: Option<u32>,
    pub(crate) start_ticks: u64,
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot.
pub(crate) fn start_ticks(pid: u32) -> Option<u64> {
    read_stat(pid).map(|s| s.start_ticks)
}

/// How long ago process `pid` started, `tck` clock ticks a second: counted on the clock its
/// start is (time since boot, suspends included), exact to the tick, whatever the wall
/// clock did since boot (the boot time `/proc/stat` gives is in whole seconds).
pub(crate) fn age(pid: u32, tck: u64) -> Option<std::time::Duration> {
    let ticks = start_ticks(pid)?;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the struct it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) } != 0 {
        return None;
    }
    let now = std::time::Duration::new(
        u64::try_from(ts.tv_sec).ok()?,
        u32::try_from(ts.tv_nsec).ok()?,
    );
    let start = std::time::Duration::from_millis(ticks.saturating_mul(1000) / tck.max(1));
    Some(now.saturating_sub(start))
}

/// Fields of `/proc/<pid>/stat` after the `(comm)`, which may itself hold spaces and `)`.
pub(crate) fn read_stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

pub(crate) fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest = &text[close + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state): tpgid is field 8, starttime field 22.
    Some(Stat {
        comm,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        tpgid: f
            .get(5)?
            .parse::<i64>()
            .ok()
            .and_then(|t| u32::try_from(t).ok())
            .filter(|&t| t > 0),
        tty: f.get(4)?.parse::<u32>().ok().filter(|&t| t != 0),
        start_ticks: f.get(19)?.parse().ok()?,
    })
}

/// The argv of a process, lossily decoded.
pub(crate) fn read_cmdline(pid: u32) -> Option<Vec<String>> {
    read_cmdline_raw(pid)
}

/// The foreground process group of the terminal of `pid`, where `/proc` tells it.
pub(crate) fn foreground_group(pid: u32) -> Option<u32> {
    read_stat(pid)?.tpgid
}

fn read_cmdline_raw(pid: u32) -> Option<Vec<String>> {
    let argv = argv_of(&std::fs::read(format!("/proc/{pid}/cmdline")).ok()?);
    (!argv.is_empty()).then_some(argv)
}

/// The words of a `/proc/PID/cmdline` (NUL-separated), lossily decoded.
pub(crate) fn argv_of(raw: &[u8]) -> Vec<String> {
    raw.split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

pub(crate) fn boot_time_ms() -> Option<Millis> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    text.lines().find_map(btime_ms)
}

/// `btime N` of `/proc/stat`: the boot time, epoch ms.
pub(crate) fn btime_ms(line: &str) -> Option<Millis> {
    line.strip_prefix("btime ")?
        .trim()
        .parse::<u64>()
        .ok()
        .map(|s| s * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_just_started_is_a_few_milliseconds_old() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let age = age(child.id(), 100).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert!(age < std::time::Duration::from_millis(500), "{age:?}");
        let me = super::age(std::process::id(), 100).unwrap();
        assert!(me >= age, "this test's process is older: {me:?}");
    }

    #[test]
    fn stat_with_a_hostile_comm_parses() {
        let s = "123 (we ird) name)) S 1 123 123 34816 4242 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100";
        let st = parse_stat(s).unwrap();
        assert_eq!(st.tpgid, Some(4242));
        assert_eq!(st.comm, "we ird) name)");
        assert_eq!(st.start_ticks, 98765);
    }

    #[test]
    fn our_own_process_is_readable() {
        let me = std::process::id();
        assert!(read_stat(me).is_some());
        assert!(read_cmdline(me).is_some_and(|a| !a.is_empty()));
    }
}
