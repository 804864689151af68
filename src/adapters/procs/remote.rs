//! Another host's processes, asked of it in one ssh exec: a shell script there reads its
//! `/proc` and sends stat lines and argv back, which are read into the same table as this
//! machine's. Nothing of this machine's `/proc` is about them.

use std::collections::HashMap;
use std::sync::Arc;

use crate::adapters::procs::local::{
    argv_of, btime_ms, parse_stat, Known, ProcTable, Stat, SETTLE_MS,
};
use crate::core::pane::ProcTree;
use crate::core::time::Millis;

/// [`foreground_group`](super::local::foreground_group) of a process on another host, asked
/// there (one ssh exec).
pub(crate) async fn remote_foreground_group(
    host: &crate::adapters::tmux::reach::SshServer,
    pid: u32,
) -> Option<u32> {
    let out = host
        .run_script(
            &format!("read -r s < /proc/{pid}/stat && printf %s \"$s\""),
            REMOTE_ASK,
        )
        .await
        .ok()?;
    parse_stat(&String::from_utf8_lossy(&out))?.tpgid
}

/// What was asked of another host about one of its panes.
#[derive(Debug, Clone, Default)]
pub(crate) struct RemotePane {
    pub(crate) pid: u32,
    pub(crate) current_command: String,
    /// The pane process's name (`bash`, `claude`); empty when it could not be read.
    pub(crate) comm: String,
    /// Its start, epoch ms by that machine's clock.
    pub(crate) start: Option<Millis>,
    /// Its argv, its foreground tree and its background jobs.
    pub(crate) tree: Arc<ProcTree>,
    /// A process in it was too young to trust (it may still exec): asked again.
    pub(crate) young: bool,
    /// The window's last output when it was asked, and when that was.
    pub(crate) activity: u64,
    pub(crate) asked_at: Option<std::time::Instant>,
    /// When its process or current command last changed.
    pub(crate) changed_at: Option<std::time::Instant>,
    /// The machine did not answer then.
    pub(crate) unanswered: bool,
    /// Told since the last poll took it.
    pub(crate) fresh: bool,
}

/// What asking another host about its processes gave.
pub(crate) enum Asked {
    Told(Box<RemoteProcs>),
    /// ssh failed, or timed out: asked again later.
    Unanswered,
    /// The script ran there, and found no Linux `/proc` (no `btime` line of `/proc/stat`).
    NoProc,
}

/// Another host's answer about its panes' processes.
pub(crate) struct RemoteProcs {
    boot: Option<Millis>,
    tck: u64,
    /// The panes' own processes, by pid.
    panes: HashMap<u32, Stat>,
    /// The table of the processes in their terminals' foreground groups.
    table: ProcTable,
    argv: HashMap<u32, Vec<String>>,
    /// How long that machine has been up when it answered (ms): the age of its processes.
    uptime: Option<Millis>,
}

impl RemoteProcs {
    /// What is known of the pane whose process is `pid`.
    pub(crate) fn pane(&mut self, pid: u32) -> RemotePane {
        let Some((comm, tpgid, ticks)) = self
            .panes
            .get(&pid)
            .map(|st| (st.comm.clone(), st.tpgid, st.start_ticks))
        else {
            return RemotePane::default();
        };
        // Every process in it came with its argv: nothing is read from this machine.
        let (below, young) = self.table.foreground_tree(pid, tpgid);
        let background = self.table.background_children(pid, tpgid);
        let start = self.boot.map(|b| b + ticks * 1000 / self.tck);
        let age = self
            .uptime
            .map(|up| up.saturating_sub(ticks * 1000 / self.tck));
        RemotePane {
            pid,
            current_command: String::new(),
            comm,
            start,
            tree: Arc::new(ProcTree {
                own: self.argv.get(&pid).cloned().unwrap_or_default(),
                below,
                background,
            }),
            young: young || age.is_none_or(|a| a <= SETTLE_MS),
            ..RemotePane::default()
        }
    }
}

/// How long a question to another host about its processes may take.
const REMOTE_ASK: std::time::Duration = std::time::Duration::from_secs(5);

/// The first line of the answer of [`procs_script`].
const PROCS_MARK: &str = "aw-procs";

/// The script [`ask_procs`] runs there. No backslash, quote or newline: it passes through
/// the login shell there as one word (reach::SshServer::shell). `printf %s` (not `echo`)
/// writes stat lines, whose process names may hold backslashes.
fn procs_script(pids: &[u32]) -> String {
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    format!(
        "echo {PROCS_MARK}; grep ^btime /proc/stat; getconf CLK_TCK 2>/dev/null || echo 100; \
         read -r u i < /proc/uptime && echo U $u; P=\" {pids} \"; G=\" \"; \
         for p in $P; do read -r s < /proc/$p/stat || continue; printf \"P %s\" \"$s\"; echo; \
         echo A $p $(od -An -v -tx1 /proc/$p/cmdline); r=${{s##*) }}; set -- $r; \
         [ \"$6\" -gt 0 ] 2>/dev/null && G=\"$G$6 \"; done; \
         for f in /proc/[0-9]*/stat; do read -r s < $f 2>/dev/null || continue; \
         r=${{s##*) }}; set -- $r; q=${{f#/proc/}}; q=${{q%/stat}}; \
         case \"$G\" in *\" $3 \"*) printf \"S %s\" \"$s\"; echo; \
         echo A $q $(od -An -v -tx1 /proc/$q/cmdline);; \
         *) case \"$P\" in *\" $2 \"*) printf \"B %s\" \"$s\"; echo;; esac;; esac; done",
        pids = list.join(" ")
    )
}

/// Asks another host, in one ssh exec, for its boot time and clock ticks, the stat line
/// and argv of each of `pids` (panes' processes), and the stat lines and argv of every
/// process in their terminals' foreground groups. Only shell builtins walk its `/proc`;
/// `od` runs once per process whose argv is sent (hex: argv words may hold any byte).
pub(crate) async fn ask_procs(
    host: &crate::adapters::tmux::reach::SshServer,
    pids: &[u32],
) -> Asked {
    let out = match host.run_script(&procs_script(pids), REMOTE_ASK).await {
        Ok(out) => out,
        Err(why) => {
            tracing::info!("{}: processes not read ({why})", host.dest);
            return Asked::Unanswered;
        }
    };
    let text = String::from_utf8_lossy(&out);
    // From the script's first line on: whatever a login script there printed before it is
    // not ours. Without that line the script did not run.
    let Some(from) = text.lines().position(|l| l == PROCS_MARK) else {
        return Asked::Unanswered;
    };
    let answer: Vec<&str> = text.lines().skip(from + 1).collect();
    if !answer.iter().any(|l| l.starts_with("btime ")) {
        return Asked::NoProc;
    }
    parse_procs(&answer.join("\n")).map_or(Asked::Unanswered, |p| Asked::Told(Box::new(p)))
}

/// The answer of [`procs_script`] after its first line: `btime N`, the clock ticks per
/// second, `U <uptime s>`, then `P <stat line>` for each pane process, `S <stat line>` for
/// each process of a foreground group, `B <stat line>` for each other child of a pane
/// process (a background job), and `A <pid> <argv bytes in hex>` for each P and S.
fn parse_procs(text: &str) -> Option<RemoteProcs> {
    let mut boot = None;
    let mut tck = None;
    let mut uptime = None;
    let mut panes = HashMap::new();
    let mut table = ProcTable::default();
    let mut argv = HashMap::new();
    let mut members = Vec::new();
    let pid_of = |l: &str| l.split_whitespace().next()?.parse::<u32>().ok();
    for line in text.lines() {
        if let Some(b) = btime_ms(line) {
            boot = Some(b);
        } else if let Some(u) = line.strip_prefix("U ") {
            // `12345.67`: seconds, to the hundredth.
            uptime = u
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|u| u.is_finite() && *u >= 0.0)
                .map(|u| (u * 1000.0) as Millis);
        } else if let Some(l) = line.strip_prefix("P ") {
            if let (Some(pid), Some(st)) = (pid_of(l), parse_stat(l)) {
                panes.insert(pid, st);
            }
        } else if let Some((l, background)) = line
            .strip_prefix("S ")
            .map(|l| (l, false))
            .or_else(|| line.strip_prefix("B ").map(|l| (l, true)))
        {
            if let (Some(pid), Some(st)) = (pid_of(l), parse_stat(l)) {
                members.push((pid, st, background));
            }
        } else if let Some(l) = line.strip_prefix("A ") {
            let mut words = l.split_whitespace();
            let Some(pid) = words.next().and_then(|w| w.parse::<u32>().ok()) else {
                continue;
            };
            let bytes: Vec<u8> = words
                .filter_map(|h| u8::from_str_radix(h, 16).ok())
                .collect();
            argv.insert(pid, argv_of(&bytes));
        } else if tck.is_none() {
            tck = line.trim().parse::<u64>().ok().filter(|&t| t > 0);
        }
    }
    let tck = tck?;
    for (pid, st, background) in members {
        let since_boot = st.start_ticks * 1000 / tck;
        table.known.insert(
            pid,
            Known {
                pass: 0,
                settled: uptime.is_some_and(|u| u.saturating_sub(since_boot) > SETTLE_MS),
                start_ms: boot.map(|b| b + since_boot),
                st,
                ended: false,
                // Every process comes with its argv (a background job's is not asked for):
                // nothing is ever read from this machine's /proc for it.
                argv: Some(if background {
                    Vec::new()
                } else {
                    argv.get(&pid).cloned().unwrap_or_default()
                }),
            },
        );
    }
    table.index_children();
    Some(RemoteProcs {
        boot,
        tck,
        panes,
        table,
        argv,
        uptime,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// argv as the host sends it: its bytes in hex, as `od -An -v -tx1` writes them.
    fn hex(words: &[&str]) -> String {
        words
            .iter()
            .flat_map(|w| w.bytes().chain([0]))
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn another_hosts_panes_are_read_by_its_own_boot_time_ticks_and_foreground_groups() {
        // Pane 42: a bash whose foreground group (50) holds claude (50) and its child (51),
        // beside a background job (60, its own group). Pane 43: a hostile name, no group.
        // That machine: booted at 1_780_000_000, up 100 s; 100 ticks a second.
        let text = format!(
            "btime 1780000000\n100\nU 100.00\n\
             P 42 (bash) S 1 42 42 34816 50 0 0 0 0 0 0 0 0 0 20 0 1 0 500 1000 100\n\
             A 42 {bash}\n\
             P 43 (we ird) x) S 1 43 43 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1234 1000 100\n\
             A 43 {weird}\n\
             S 50 (claude) S 42 50 42 34816 50 0 0 0 0 0 0 0 0 0 20 0 1 0 2000 1000 100\n\
             A 50 {claude}\n\
             S 51 (node) S 50 50 42 34816 50 0 0 0 0 0 0 0 0 0 20 0 1 0 9950 1000 100\n\
             A 51 {node}\n\
             B 60 (sleep) T 42 60 42 34816 50 0 0 0 0 0 0 0 0 0 20 0 1 0 3000 1000 100\n",
            bash = hex(&["-bash"]),
            weird = hex(&["we ird) x)", "line\nbreak"]),
            claude = hex(&["claude", "--session-id", "0e6a1c1e"]),
            node = hex(&["node", "x.js"]),
        );
        let mut procs = parse_procs(&text).unwrap();
        let bash = procs.pane(42);
        assert_eq!(bash.comm, "bash");
        assert_eq!(bash.start, Some(1_780_000_005_000));
        assert_eq!(bash.tree.own, vec!["-bash"]);
        let below: Vec<(u32, &str)> = bash
            .tree
            .below
            .iter()
            .map(|p| (p.pid, p.comm.as_str()))
            .collect();
        assert_eq!(below, vec![(50, "claude"), (51, "node")]);
        assert_eq!(bash.tree.background, vec![60]);
        assert_eq!(
            bash.tree.below[0].argv,
            vec!["claude", "--session-id", "0e6a1c1e"]
        );
        assert_eq!(bash.tree.below[0].start, Some(1_780_000_020_000));
        // Node started half a second before the answer: too young to trust, asked again.
        assert!(bash.young);
        let weird = procs.pane(43);
        assert_eq!(weird.comm, "we ird) x");
        assert_eq!(weird.start, Some(1_780_000_012_340));
        assert_eq!(weird.tree.own, vec!["we ird) x)", "line\nbreak"]);
        assert!(weird.tree.below.is_empty() && weird.tree.background.is_empty());
        assert!(!weird.young);
        // A process that was gone when asked: nothing is known, nothing guessed.
        let gone = procs.pane(44);
        assert!(gone.comm.is_empty() && gone.start.is_none() && gone.tree.own.is_empty());
        // No clock ticks: no answer at all.
        assert!(parse_procs("btime 1\n").is_none());
        assert!(parse_procs("").is_none());
        // No boot time: no start times, the rest as told; no uptime: young, asked again.
        let mut no_boot = parse_procs(
            "100\nP 42 (bash) S 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 500 1000 100\n",
        )
        .unwrap();
        let p = no_boot.pane(42);
        assert_eq!((p.comm.as_str(), p.start, p.young), ("bash", None, true));
    }

    #[test]
    fn the_script_asked_of_another_host_passes_through_its_login_shell() {
        let script = procs_script(&[1, 42]);
        assert!(!script.contains(['\\', '\'', '\n']), "{script}");
        assert!(script.starts_with("echo aw-procs;"), "{script}");
        assert!(script.contains("P=\" 1 42 \""), "{script}");
    }
}
