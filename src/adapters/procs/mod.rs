//! Facts about processes, with no poller behind them: this machine's `/proc`, the
//! foreground process trees below the panes, another host's processes asked over ssh, and
//! the skew of that host's clock. Reads, decides nothing; the poller
//! ([`crate::adapters::poll`]) keeps what it learns between polls.

/// This machine's `/proc`: stat lines, argv, the table of every process.
pub(crate) mod local;
/// The kernel's OOM killer's count for a process's cgroup.
pub(crate) mod oom;
/// Another host's processes, asked in one ssh exec.
pub(crate) mod remote;
/// Another host's clock, ahead or behind this one's, in whole seconds.
pub(crate) mod skew;
/// Each pane's foreground process tree, walked from the process table.
pub(crate) mod tree;
/// How much the processes writing to a pane's terminal wrote.
pub(crate) mod writes;
