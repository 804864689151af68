//! The kernel's OOM killer, as cgroup v2 counts it: `oom_kill` in the `memory.events` of
//! a process's cgroup (hierarchical: kills in the cgroups below count too). Read once per
//! death of an agent of this machine, to tell a SIGKILL by the OOM killer from any other.

use std::path::Path;

/// How many processes the OOM killer killed in `pid`'s cgroup (and below) so far; `None`
/// where that cannot be read (cgroup v1, no memory controller, the process gone).
pub fn oom_kills(pid: u32) -> Option<u64> {
    oom_kills_in(Path::new("/"), pid)
}

/// [`oom_kills`] with `/proc` and `/sys` under `root` (for tests).
fn oom_kills_in(root: &Path, pid: u32) -> Option<u64> {
    let cgroup = std::fs::read_to_string(root.join(format!("proc/{pid}/cgroup"))).ok()?;
    // cgroup v2's single line: `0::/user.slice/...`.
    let path = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let events = root
        .join("sys/fs/cgroup")
        .join(path.trim().trim_start_matches('/'))
        .join("memory.events");
    let text = std::fs::read_to_string(events).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_is_read_from_the_processes_cgroup() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::create_dir_all(r.join("proc/42")).unwrap();
        std::fs::write(r.join("proc/42/cgroup"), "0::/user.slice/tmux-1.scope\n").unwrap();
        let dir = r.join("sys/fs/cgroup/user.slice/tmux-1.scope");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("memory.events"),
            "low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\noom_group_kill 0\n",
        )
        .unwrap();
        assert_eq!(oom_kills_in(r, 42), Some(2));
        // No such process, or a cgroup v1 line only: not known.
        assert_eq!(oom_kills_in(r, 43), None);
        std::fs::write(r.join("proc/42/cgroup"), "4:memory:/user.slice\n").unwrap();
        assert_eq!(oom_kills_in(r, 42), None);
    }
}
