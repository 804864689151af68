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
        let Trees { by_pane, table, .. } = self;
        let new = table.refresh(boot_ms, tck);
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
            let (own, fg) = match old {
                // Swept: the argv stands, the foreground group is read again (a script
                // typed at a prompt leaves the current command `bash`).
                Some(t) if !changed && sweep => (
                    t.procs.own.clone(),
                    read_stat(pid).and_then(|s| s.tpgid).or(t.fg),
                ),
                Some(t) if !changed => (t.procs.own.clone(), t.fg),
                _ => (
                    read_cmdline(pid).unwrap_or_default(),
                    read_stat(pid).and_then(|s| s.tpgid),
                ),
            };
            let (below, unsettled) = table.foreground_tree(pid, fg);
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
                },
            );
        }
    }
}

impl ProcTable {
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
