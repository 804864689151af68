//! The poller: one `list-panes -a`, then what `/proc` says about the panes' processes
//! (start times, and the argv of a launcher's foreground process). Does I/O, decides nothing.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::adapters::tmux::client::{Tmux, TmuxError};
use crate::core::agent::{is_launcher, program_name};
use crate::core::msg::{Millis, Observation};

pub struct Prober {
    tmux: Tmux,
    boot_ms: Option<Millis>,
    ticks_per_sec: u64,
    /// Process start times and names by pid: neither changes for a pid's life.
    procs: Mutex<HashMap<u32, ProcInfo>>,
}

impl Prober {
    pub fn new(tmux: Tmux) -> Prober {
        // SAFETY: sysconf has no preconditions.
        let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        Prober {
            tmux,
            boot_ms: boot_time_ms(),
            ticks_per_sec: u64::try_from(tck).ok().filter(|&t| t > 0).unwrap_or(100),
            procs: Mutex::new(HashMap::new()),
        }
    }

    pub fn tmux(&self) -> &Tmux {
        &self.tmux
    }

    pub async fn observe(&self) -> Result<Observation, TmuxError> {
        let listing = self.tmux.list_panes().await?;
        let mut obs = Observation::default();
        let mut cache = self.procs.lock().unwrap_or_else(|e| e.into_inner());
        let mut seen = std::collections::HashSet::new();
        for pane in &listing.panes {
            let (false, Some(pid)) = (pane.dead, pane.pid) else {
                continue;
            };
            seen.insert(pid);
            let new_process = !cache.contains_key(&pid);
            let Some(info) = self.info(&mut cache, pid) else {
                continue;
            };
            obs.comm.insert(pane.id, info.comm.clone());
            let current = program_name(&pane.current_command);
            let launcher = is_launcher(current);
            // Something other than the pane's own process is in the foreground (an agent
            // typed at a shell prompt, say): find out what, from its process group leader.
            let hosted = current != info.comm;
            let mut started = info.start;
            if hosted {
                let fg = read_stat(pid).and_then(|s| s.tpgid).filter(|&fg| fg != pid);
                if let Some(fg) = fg {
                    seen.insert(fg);
                    if let Some(fi) = self.info(&mut cache, fg) {
                        started = fi.start;
                    }
                    obs.fg_pid.insert(pane.id, fg);
                    if let Some(argv) = read_cmdline(fg) {
                        obs.foreground.insert(pane.id, argv);
                    }
                }
            } else if launcher || new_process {
                // A launcher's script is read every poll (it names the agent); any other
                // pane process once, when it is new (its argv may name a session id that
                // the start command does not, as after `exec claude --session-id X`).
                if let Some(argv) = read_cmdline(pid) {
                    obs.foreground.insert(pane.id, argv);
                }
            }
            if let Some(t) = started {
                obs.started.insert(pane.id, t);
            }
        }
        cache.retain(|pid, _| seen.contains(pid));
        drop(cache);
        obs.listing = listing;
        Ok(obs)
    }

    /// Start time and name of a process, cached by pid (neither changes for a pid's life).
    fn info(&self, cache: &mut HashMap<u32, ProcInfo>, pid: u32) -> Option<ProcInfo> {
        if let Some(i) = cache.get(&pid) {
            return Some(i.clone());
        }
        let st = read_stat(pid)?;
        let info = ProcInfo {
            start: self
                .boot_ms
                .map(|boot| boot + st.start_ticks * 1000 / self.ticks_per_sec),
            comm: st.comm,
        };
        cache.insert(pid, info.clone());
        Some(info)
    }
}

#[derive(Debug, Clone)]
struct ProcInfo {
    start: Option<Millis>,
    comm: String,
}

struct Stat {
    /// The process name (`comm`), e.g. `bash`.
    comm: String,
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
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest = &text[close + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state): tpgid is field 8, starttime field 22.
    Some(Stat {
        comm,
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
