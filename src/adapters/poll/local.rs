//! The local poller's half: what this machine's `/proc` says of the panes' processes
//! (start times, names, argv, and each pane's foreground process tree, where a wrapper or
//! a shell runs the agent), read again only where something says it changed.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::{lock, PaneProcs, Prober, SWEEP, YOUNG};
use crate::adapters::procs::local::{last_pid, read_cmdline, read_stat, ProcInfo};
use crate::adapters::procs::tree::{Stale, TreeMap};
use crate::core::agent::{is_launcher, program_name};
use crate::core::msg::Observation;
use crate::core::pane::PaneId;
use crate::core::time::Millis;

impl Prober {
    /// The panes' processes, read from this machine's `/proc`: each pane process's name and
    /// start (cached by pid), its argv when it is new or a launcher, the foreground trees,
    /// and the agents' state files. `told`: the mirror's count of what tmux told (see
    /// [`Mirror::told`](crate::adapters::mirror::Mirror::told)): the same as at the last
    /// look, with no process young, read anew or a launcher then, the panes' own processes
    /// are as they were, and their names and starts are not gathered again (`comm` and
    /// `started` are left empty; [`Self::fill_procs`] fills them if they are wanted).
    pub(super) fn local_procs(
        &self,
        mut obs: Observation,
        panes: &[crate::core::pane::Pane],
        told: u64,
        ended: &HashSet<u32>,
        now: std::time::Instant,
    ) -> Observation {
        let mut known = lock(&self.pane_procs);
        if known.told == Some(told) && !known.restless {
            obs.tree = self.trees(panes, &known.comm, ended);
            drop(known);
            obs.orphans = self.orphans();
            obs.agent_files = self.agent_files(now);
            return obs;
        }
        let mut restless = false;
        let mut cache = self.procs.lock().unwrap_or_else(|e| e.into_inner());
        let mut seen = std::collections::HashSet::new();
        for pane in panes {
            let (false, Some(pid)) = (pane.dead, pane.pid) else {
                continue;
            };
            seen.insert(pid);
            // New, so young that it may not have exec'd yet (a look between tmux's fork and
            // its exec sees `tmux: server`), or since tmux's current command changed (it
            // may have exec'd another program: `bash -c 'claude; sleep 9'` becomes the
            // sleep): its name and argv are read (again).
            let new_process = cache
                .get(&pid)
                .is_none_or(|i| i.young() || i.command != pane.current_command);
            let Some(info) = self.info(&mut cache, pid, &pane.current_command, new_process) else {
                restless = true;
                continue;
            };
            obs.comm.insert(pane.id, info.comm.clone());
            let launcher = is_launcher(program_name(&pane.current_command));
            restless |= launcher || new_process;
            if launcher || new_process {
                // A launcher's script is read every poll (it names the agent); any other
                // pane process once, when it is new (its argv may name a session id that
                // the start command does not, as after `exec claude --session-id X`, and
                // says whether a shell is interactive).
                if let Some(argv) = read_cmdline(pid) {
                    obs.foreground.insert(pane.id, argv);
                }
            }
            if let Some(t) = info.start {
                obs.started.insert(pane.id, t);
            }
        }
        cache.retain(|pid, _| seen.contains(pid));
        drop(cache);
        self.note_shells(panes, &obs.comm);
        obs.tree = self.trees(panes, &obs.comm, ended);
        obs.orphans = self.orphans();
        obs.agent_files = self.agent_files(now);
        *known = PaneProcs {
            told: Some(told),
            restless,
            comm: obs.comm.clone(),
            started: obs.started.clone(),
        };
        obs
    }

    /// The names and starts of the panes' own processes, as last gathered, where
    /// [`Self::local_procs`] left them out.
    pub(super) fn fill_procs(&self, obs: &mut Observation) {
        if obs.comm.is_empty() {
            let known = lock(&self.pane_procs);
            obs.comm.clone_from(&known.comm);
            obs.started.clone_from(&known.started);
        }
    }

    /// The foreground tree of every live pane: looked at again for panes whose process or
    /// current command changed, for panes with processes below their own when a process
    /// started or one of theirs ended, and on a slow sweep; one pass over `/proc` serves
    /// every pane that needs it, and reads only the processes it has not read before. When
    /// nothing changed, the map of the last look is handed out again, not rebuilt.
    fn trees(
        &self,
        panes: &[crate::core::pane::Pane],
        comm: &HashMap<PaneId, String>,
        gone: &HashSet<u32>,
    ) -> TreeMap {
        let mut trees = lock(&self.trees);
        let now = std::time::Instant::now();
        let sweep = trees.swept.is_none_or(|t| now.duration_since(t) >= SWEEP);
        if sweep {
            trees.swept = Some(now);
        }
        // A changed pane's own process is read again; a swept one that did not change keeps
        // its argv and has its foreground group read again; a busy one keeps both.
        let mut stale: Vec<Stale> = Vec::new();
        // Panes with processes below their own (a wrapper's agent, a shell's job, an
        // `npm exec` that will start one): their children come and go without tmux
        // noticing. Looked at again when one of their processes ended, or while their tree
        // is young when a process started on the machine below them.
        let mut busy: Vec<Stale> = Vec::new();
        for &pid in gone {
            if let Some(k) = trees.table.known.get_mut(&pid) {
                k.ended = true;
            }
        }
        let mut live = 0;
        let shells = self.shell_groups();
        for p in panes.iter().filter(|p| !p.dead) {
            let Some(pid) = p.pid else { continue };
            live += 1;
            let known = trees.by_pane.get(&p.id);
            // A shell whose terminal has another foreground group than its tree was walked
            // with: a command was typed at its prompt, or ended (a script leaves tmux's
            // current command the shell's name, so nothing else would tell).
            let moved = shells
                .get(&p.id)
                .is_some_and(|&(shell, fg)| shell == pid && known.is_some_and(|t| t.fg != fg));
            let changed = moved
                || known
                    .is_none_or(|t| t.pane_pid != pid || t.current_command != p.current_command);
            // Swept: a shell (a script typed at its prompt leaves the current command the
            // shell's name) or a pane with processes below its own. A pane whose process is
            // the agent itself, with nothing below, has nothing to find.
            let swept = sweep
                && (known
                    .is_some_and(|t| !t.procs.below.is_empty() || !t.procs.background.is_empty())
                    || comm
                        .get(&p.id)
                        .is_some_and(|c| crate::core::launcher::is_shell(c, &self.shells)));
            let look = Stale {
                id: p.id,
                pid,
                current_command: &p.current_command,
                changed,
            };
            if changed || swept || known.is_some_and(|t| t.unsettled) {
                stale.push(look);
            } else if let Some(t) = known.filter(|t| !t.procs.below.is_empty()) {
                if t.procs.below.iter().any(|p| gone.contains(&p.pid)) {
                    stale.push(look);
                } else if now.duration_since(t.changed_at) < YOUNG {
                    busy.push(look);
                }
            }
        }
        // The newest pid on the machine: unchanged, no process was started since.
        let born = !busy.is_empty() && {
            let newest = last_pid();
            let born = newest.is_none() || newest != trees.newest;
            trees.newest = newest;
            born
        };
        // Orphans are kept while they run, of panes that are still there (one read each).
        if !trees.orphans.is_empty() {
            let listed: HashSet<PaneId> = panes.iter().map(|p| p.id).collect();
            trees.orphans.retain(|id, list| {
                list.retain(crate::adapters::procs::tree::Orphan::runs);
                listed.contains(id) && !list.is_empty()
            });
        }
        if stale.is_empty() && !born && live == trees.by_pane.len() {
            // The same panes, none changed: the same trees.
            return Arc::clone(&trees.shared);
        }
        if !stale.is_empty() || born {
            trees.walk(self.boot_ms, self.ticks_per_sec, stale, &busy, sweep, now);
        }
        let ids: std::collections::HashSet<PaneId> = panes
            .iter()
            .filter(|p| !p.dead && p.pid.is_some())
            .map(|p| p.id)
            .collect();
        // A pane whose own process ended (a launcher killed): what ran below it and runs on,
        // on its terminal, is an orphan.
        let ended: Vec<PaneId> = trees
            .by_pane
            .keys()
            .filter(|id| !ids.contains(id))
            .copied()
            .collect();
        for id in ended {
            let Some(t) = trees.by_pane.remove(&id) else {
                continue;
            };
            for p in &t.procs.below {
                let Some(st) = read_stat(p.pid) else { continue };
                let start = self
                    .boot_ms
                    .map(|b| b + st.start_ticks * 1000 / self.ticks_per_sec);
                if start == p.start && t.tty.is_some() && st.tty == t.tty {
                    crate::adapters::procs::tree::add_orphan(
                        &mut trees.orphans,
                        id,
                        p.clone(),
                        st.start_ticks,
                    );
                }
            }
        }
        // The panes' own processes, those below them and the orphans: the kernel says when
        // one ends.
        let watched: HashSet<u32> = trees
            .by_pane
            .values()
            .flat_map(|t| t.procs.below.iter().map(|p| p.pid))
            .chain(panes.iter().filter(|p| !p.dead).filter_map(|p| p.pid))
            .chain(trees.orphans.values().flatten().map(|o| o.proc.pid))
            .collect();
        trees.exits.set(&watched);
        trees.shared = Arc::new(
            trees
                .by_pane
                .iter()
                .map(|(id, t)| (*id, Arc::clone(&t.procs)))
                .collect(),
        );
        Arc::clone(&trees.shared)
    }

    /// Ends processes a pane's last run left running outside it: each only if it is still
    /// the process that was seen (its pid and start time), SIGTERM first, SIGKILL for one
    /// still there after 3 s. Err: what the system said, or that one would not end.
    pub async fn end_orphans(&self, procs: &[(u32, Option<Millis>)]) -> Result<(), String> {
        let same = |pid: u32, start: Option<Millis>| {
            read_stat(pid).is_some_and(|st| {
                self.boot_ms
                    .map(|b| b + st.start_ticks * 1000 / self.ticks_per_sec)
                    == start
            })
        };
        let signal = |pid: u32, sig: libc::c_int| -> Result<(), String> {
            let Ok(p) = libc::pid_t::try_from(pid) else {
                return Ok(());
            };
            // SAFETY: kill with a positive pid and a valid signal.
            match unsafe { libc::kill(p, sig) } {
                0 => Ok(()),
                _ => match std::io::Error::last_os_error() {
                    e if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
                    e => Err(format!("pid {pid}: {e}")),
                },
            }
        };
        let running = |procs: &[(u32, Option<Millis>)]| -> Vec<(u32, Option<Millis>)> {
            procs.iter().copied().filter(|&(p, s)| same(p, s)).collect()
        };
        for &(pid, _) in &running(procs) {
            signal(pid, libc::SIGTERM)?;
        }
        for sig in [None, Some(libc::SIGKILL)] {
            if let Some(sig) = sig {
                for &(pid, _) in &running(procs) {
                    signal(pid, sig)?;
                }
            }
            for _ in 0..30 {
                if running(procs).is_empty() {
                    return Ok(());
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
        let left: Vec<String> = running(procs).iter().map(|(p, _)| p.to_string()).collect();
        Err(format!(
            "pid {} would not end, even on SIGKILL",
            left.join(", ")
        ))
    }

    /// What each pane's agent runs left running outside it, as the core takes it.
    fn orphans(&self) -> HashMap<PaneId, Vec<crate::core::pane::Proc>> {
        lock(&self.trees)
            .orphans
            .iter()
            .map(|(id, list)| (*id, list.iter().map(|o| o.proc.clone()).collect()))
            .collect()
    }

    /// Start time and name of a process, cached by pid and read again when `again` (its
    /// name changes when it execs); `command` is tmux's current command of its pane then.
    fn info(
        &self,
        cache: &mut HashMap<u32, ProcInfo>,
        pid: u32,
        command: &str,
        again: bool,
    ) -> Option<ProcInfo> {
        if let Some(i) = cache.get(&pid).filter(|_| !again) {
            return Some(i.clone());
        }
        let st = read_stat(pid)?;
        let info = ProcInfo {
            start: self
                .boot_ms
                .map(|boot| boot + st.start_ticks * 1000 / self.ticks_per_sec),
            comm: st.comm,
            command: command.to_string(),
        };
        cache.insert(pid, info.clone());
        Some(info)
    }
}
