//! The poller: one `list-panes -a`, then what `/proc` says about the panes' processes
//! (start times, and the argv of a launcher's foreground process). Does I/O, decides nothing.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::agent::{is_launcher, program_name};
use crate::msg::{Millis, Observation};
use crate::tmux::client::{Tmux, TmuxError};

pub struct Prober {
    tmux: Tmux,
    boot_ms: Option<Millis>,
    ticks_per_sec: u64,
    /// Process start times by pid: a pid's start time never changes.
    starts: Mutex<HashMap<u32, Millis>>,
}

impl Prober {
    pub fn new(tmux: Tmux) -> Prober {
        // SAFETY: sysconf has no preconditions.
        let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        Prober {
            tmux,
            boot_ms: boot_time_ms(),
            ticks_per_sec: u64::try_from(tck).ok().filter(|&t| t > 0).unwrap_or(100),
            starts: Mutex::new(HashMap::new()),
        }
    }

    pub fn tmux(&self) -> &Tmux {
        &self.tmux
    }

    pub async fn observe(&self) -> Result<Observation, TmuxError> {
        let listing = self.tmux.list_panes().await?;
        let mut obs = Observation::default();
        let mut starts = self.starts.lock().unwrap_or_else(|e| e.into_inner());
        let mut seen = Vec::with_capacity(listing.panes.len());
        for pane in &listing.panes {
            let (false, Some(pid)) = (pane.dead, pane.pid) else {
                continue;
            };
            seen.push(pid);
            let stat =
                if is_launcher(program_name(&pane.current_command)) || !starts.contains_key(&pid) {
                    read_stat(pid)
                } else {
                    None
                };
            if let Some(boot) = self.boot_ms {
                if let Some(&t) = starts.get(&pid) {
                    obs.started.insert(pane.id, t);
                } else if let Some(st) = &stat {
                    let t = boot + st.start_ticks * 1000 / self.ticks_per_sec;
                    starts.insert(pid, t);
                    obs.started.insert(pane.id, t);
                }
            }
            if is_launcher(program_name(&pane.current_command)) {
                if let Some(argv) = stat.and_then(|s| s.tpgid).and_then(read_cmdline) {
                    obs.foreground.insert(pane.id, argv);
                }
            }
        }
        starts.retain(|pid, _| seen.contains(pid));
        drop(starts);
        obs.listing = listing;
        Ok(obs)
    }
}

struct Stat {
    /// Foreground process group of the controlling terminal; none without a terminal.
    tpgid: Option<u32>,
    start_ticks: u64,
}

/// Fields of `/proc/<pid>/stat` after the `(comm)`, which may itself hold spaces and `)`.
fn read_stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state): tpgid is field 8, starttime field 22.
    Some(Stat {
        tpgid: f
            .get(5)?
            .parse::<i64>()
            .ok()
            .and_then(|t| u32::try_from(t).ok())
            .filter(|&t| t > 0),
        start_ticks: f.get(19)?.parse().ok()?,
    })
}

/// The argv of a process, lossily decoded.
pub fn read_cmdline(pid: u32) -> Option<Vec<String>> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let argv: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    (!argv.is_empty()).then_some(argv)
}

fn boot_time_ms() -> Option<Millis> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("btime "))?;
    line[6..].trim().parse::<u64>().ok().map(|s| s * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_a_hostile_comm_parses() {
        let s = "123 (we ird) name)) S 1 123 123 34816 4242 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100";
        let st = parse_stat(s).unwrap();
        assert_eq!(st.tpgid, Some(4242));
        assert_eq!(st.start_ticks, 98765);
    }

    #[test]
    fn our_own_process_is_readable() {
        let me = std::process::id();
        assert!(read_stat(me).is_some());
        assert!(read_cmdline(me).is_some_and(|a| !a.is_empty()));
    }
}
