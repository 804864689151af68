//! The foreground process trees below the panes' own processes: where a wrapper or a shell
//! runs the agent. Walked in the process table ([`ProcTable`]), only the terminal's
//! foreground group, cut at a depth and a size; another host's trees are walked the same
//! way in the table its answer gives.

use std::collections::HashMap;
use std::sync::Arc;

use crate::adapters::exits::ExitWatch;
use crate::adapters::procs::local::{read_cmdline, read_stat, ProcTable};
use crate::core::pane::{PaneId, Proc, ProcTree};
use crate::core::time::Millis;

/// A tree deeper or larger than this is cut: a pane's agent is near its top.
const TREE_DEPTH: usize = 6;
const TREE_PROCS: usize = 64;

#[derive(Default)]
pub(crate) struct Trees {
    pub(crate) by_pane: HashMap<PaneId, Tree>,
    pub(crate) swept: Option<std::time::Instant>,
    pub(crate) table: ProcTable,
    /// The newest pid at the last look (`/proc/loadavg`).
    pub(crate) newest: Option<u64>,
    /// The processes below the panes' own, whose end means a pane's tree changed.
    pub(crate) exits: ExitWatch,
    /// The trees as last handed out.
    pub(crate) shared: TreeMap,
    /// What each pane's agent runs left running outside it, while it runs.
    pub(crate) orphans: HashMap<PaneId, Vec<Orphan>>,
}

/// A process of a pane's tree that outlived its place there: reparented away (its parent
/// ended), still on the pane's terminal.
#[derive(Debug, Clone)]
pub(crate) struct Orphan {
    pub(crate) proc: Proc,
    /// Its start, as `/proc` counts it: a pid reused since is another process.
    pub(crate) ticks: u64,
}

impl Orphan {
    /// Still the same process, still running.
    pub(crate) fn runs(&self) -> bool {
        read_stat(self.proc.pid).is_some_and(|s| s.start_ticks == self.ticks)
    }
}

/// Each live pane's foreground tree, shared with the core without a copy.
pub(crate) type TreeMap = Arc<HashMap<PaneId, Arc<ProcTree>>>;

/// A pane to look at again this tick.
#[derive(Clone, Copy)]
pub(crate) struct Stale<'a> {
    pub(crate) id: PaneId,
    pub(crate) pid: u32,
    pub(crate) current_command: &'a str,
    /// Its process or current command changed: its own argv is read again.
    pub(crate) changed: bool,
}

pub(crate) struct Tree {
    pub(crate) pane_pid: u32,
    pub(crate) current_command: String,
    /// The terminal's foreground process group, as last read.
    pub(crate) fg: Option<u32>,
    /// When the processes in it last changed.
    pub(crate) changed_at: std::time::Instant,
    /// A process in it is so young that it may still exec or change its group: look again.
    pub(crate) unsettled: bool,
    pub(crate) procs: Arc<ProcTree>,
    /// The pane's terminal (`tty_nr` of its process).
    pub(crate) tty: Option<u32>,
}

impl Trees {
    /// One pass over `/proc`, then the trees of the `stale` panes, and of the `busy` ones a
    /// new process started below, walked again. Start times are dated by the boot time
    /// `boot_ms` and `tck` clock ticks a second.
    pub(crate) fn walk<'a>(
        &mut self,
        boot_ms: Option<Millis>,
        tck: u64,
        mut stale: Vec<Stale<'a>>,
        busy: &[Stale<'a>],
        sweep: bool,
        now: std::time::Instant,
    ) {
        let Trees {
            by_pane,
            table,
            orphans,
            ..
        } = self;
        let new = table.refresh(boot_ms, tck);
        // The processes on each terminal, once for the whole walk.
        let mut on_tty: HashMap<u32, Vec<u32>> = HashMap::new();
        for (pid, k) in &table.known {
            if let (Some(t), false) = (k.st.tty, k.ended) {
                on_tty.entry(t).or_default().push(*pid);
            }
        }
        // Every ancestor of a new process: a busy pane whose process is one of them has a
        // new process below it.
        let mut above = std::collections::HashSet::new();
        for pid in new {
            let mut p = pid;
            for _ in 0..TREE_DEPTH + 2 {
                match table.known.get(&p).map(|k| k.st.ppid) {
                    Some(pp) if pp > 1 && above.insert(pp) => p = pp,
                    _ => break,
                }
            }
        }
        stale.extend(busy.iter().filter(|b| above.contains(&b.pid)).copied());
        for look in &stale {
            let (id, pid, changed) = (look.id, look.pid, look.changed);
            let old = by_pane.get(&id).filter(|t| t.pane_pid == pid);
            let (own, fg, tty) = match old {
                // Swept: the argv stands, the foreground group is read again (a script
                // typed at a prompt leaves the current command `bash`).
                Some(t) if !changed && sweep => {
                    let st = read_stat(pid);
                    (
                        t.procs.own.clone(),
                        st.as_ref().and_then(|s| s.tpgid).or(t.fg),
                        st.and_then(|s| s.tty).or(t.tty),
                    )
                }
                Some(t) if !changed => (t.procs.own.clone(), t.fg, t.tty),
                _ => {
                    let st = read_stat(pid);
                    (
                        read_cmdline(pid).unwrap_or_default(),
                        st.as_ref().and_then(|s| s.tpgid),
                        st.and_then(|s| s.tty),
                    )
                }
            };
            let (below, unsettled) = table.foreground_tree(pid, fg);
            // A process on the pane's terminal that is not the pane's process's own (nor its
            // descendant's): the launcher that started it was killed and it runs on with
            // another parent. Told without history, so a one-shot look sees it too.
            if let Some(tty) = tty {
                orphans.remove(&id);
                let on = on_tty.get(&tty).map(Vec::as_slice).unwrap_or_default();
                for p in table.strays(pid, on) {
                    let ticks = table.known.get(&p.pid).map_or(0, |k| k.st.start_ticks);
                    add_orphan(orphans, id, p, ticks);
                }
            }
            let background = table.background_children(pid, fg);
            let same = old.is_some_and(|t| {
                t.procs.below.len() == below.len()
                    && t.procs
                        .below
                        .iter()
                        .zip(&below)
                        .all(|(a, b)| a.pid == b.pid)
            });
            let changed_at = match old {
                Some(t) if same => t.changed_at,
                _ => now,
            };
            by_pane.insert(
                id,
                Tree {
                    pane_pid: pid,
                    current_command: look.current_command.to_string(),
                    fg,
                    changed_at,
                    unsettled,
                    procs: Arc::new(ProcTree {
                        own,
                        below,
                        background,
                    }),
                    tty,
                },
            );
        }
    }
}

/// Adds `p` to the pane's orphans, once.
pub(crate) fn add_orphan(
    orphans: &mut HashMap<PaneId, Vec<Orphan>>,
    id: PaneId,
    p: Proc,
    ticks: u64,
) {
    let list = orphans.entry(id).or_default();
    if !list.iter().any(|o| o.proc.pid == p.pid) {
        list.push(Orphan { proc: p, ticks });
    }
}

impl ProcTable {
    /// Of the processes `on` a terminal, those that do not descend from `root` (the pane's
    /// own process, the terminal's session leader): left behind by a process that ended.
    pub(crate) fn strays(&mut self, root: u32, on: &[u32]) -> Vec<Proc> {
        let descends = |known: &HashMap<u32, crate::adapters::procs::local::Known>, pid: u32| {
            let mut p = pid;
            for _ in 0..32 {
                if p == root {
                    return true;
                }
                match known.get(&p).map(|k| k.st.ppid) {
                    Some(pp) if pp > 1 => p = pp,
                    _ => return false,
                }
            }
            false
        };
        let pids: Vec<u32> = on
            .iter()
            .copied()
            .filter(|pid| {
                self.known.get(pid).is_some_and(|k| k.settled) && !descends(&self.known, *pid)
            })
            .collect();
        let mut out = Vec::new();
        for pid in pids {
            let Some(k) = self.known.get_mut(&pid) else {
                continue;
            };
            let argv = k
                .argv
                .get_or_insert_with(|| read_cmdline(pid).unwrap_or_default())
                .clone();
            out.push(Proc {
                pid,
                ppid: k.st.ppid,
                comm: k.st.comm.clone(),
                argv,
                start: k.start_ms,
            });
        }
        out.sort_by_key(|p| p.pid);
        out
    }

    /// The children of `root` outside its terminal's foreground process group.
    pub(crate) fn background_children(&self, root: u32, fg: Option<u32>) -> Vec<u32> {
        self.children
            .get(&root)
            .into_iter()
            .flatten()
            .filter(|kid| self.known.get(kid).is_some_and(|k| Some(k.st.pgrp) != fg))
            .copied()
            .collect()
    }

    /// The descendants of `root` in its terminal's foreground process group `fg`, breadth
    /// first, with their argv; and whether one of them is still too young to trust.
    pub(crate) fn foreground_tree(&mut self, root: u32, fg: Option<u32>) -> (Vec<Proc>, bool) {
        let Some(fg) = fg else {
            return (Vec::new(), false);
        };
        let mut out = Vec::new();
        let mut unsettled = false;
        let mut level = vec![root];
        'walk: for _ in 0..TREE_DEPTH {
            let mut next = Vec::new();
            for pid in level {
                let kids = self.children.get(&pid).cloned().unwrap_or_default();
                for kid in kids {
                    let Some(k) = self.known.get_mut(&kid) else {
                        continue;
                    };
                    // Background jobs (and their children) are not the pane's foreground;
                    // an ended process is not there any more.
                    if k.st.pgrp != fg || k.ended {
                        continue;
                    }
                    if out.len() >= TREE_PROCS {
                        break 'walk;
                    }
                    unsettled |= !k.settled;
                    let argv = k
                        .argv
                        .get_or_insert_with(|| read_cmdline(kid).unwrap_or_default())
                        .clone();
                    out.push(Proc {
                        pid: kid,
                        ppid: pid,
                        comm: k.st.comm.clone(),
                        argv,
                        start: k.start_ms,
                    });
                    next.push(kid);
                }
            }
            if next.is_empty() {
                break;
            }
            level = next;
        }
        (out, unsettled)
    }
}
