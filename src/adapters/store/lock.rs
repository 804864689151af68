//! Locks the kernel releases: whether a daemon runs for a tmux server's path (who
//! supervises the server is its claim in the server, `core::lease`). Open-file-description locks (`F_OFD_SETLK`): held while the holder's file stays
//! open, released when it exits or dies however it dies, so nothing stale ever blocks the
//! next one. A lock can be tested without taking it (`F_OFD_GETLK`), so looking never
//! disturbs a holder. The holder writes `<pid> <role> <since ms>` into its file so that
//! others can name it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::core::msg::Supervisor;
use crate::core::time::Millis;

#[cfg(target_os = "linux")]
const SETLK: libc::c_int = libc::F_OFD_SETLK;
#[cfg(target_os = "linux")]
const GETLK: libc::c_int = libc::F_OFD_GETLK;
// Elsewhere: classic record locks (per process, which is all separate processes need).
#[cfg(not(target_os = "linux"))]
const SETLK: libc::c_int = libc::F_SETLK;
#[cfg(not(target_os = "linux"))]
const GETLK: libc::c_int = libc::F_GETLK;

/// Where the locks live: `${TMUX_TMPDIR:-/tmp}/agentwatch-<uid>`, beside tmux's own socket
/// directory and created private like it. The same base as tmux's, not `XDG_RUNTIME_DIR`:
/// a daemon started by systemd and a dashboard in a terminal must find the same locks
/// whatever else their environments say.
pub fn lock_dir() -> PathBuf {
    let base = std::env::var_os("TMUX_TMPDIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    // SAFETY: getuid has no preconditions and cannot fail.
    base.join(format!("agentwatch-{}", unsafe { libc::getuid() }))
}

/// The lock files of one tmux server's path: the daemon's (the fast path to one daemon per
/// server; the claim in the server is the one every path finds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLocks {
    pub daemon: PathBuf,
}

impl ServerLocks {
    /// The locks for the server at `socket`, in `dir`. The name carries the socket's file
    /// name (to be readable) and a hash of its whole path (to be unique).
    pub fn new(dir: &Path, socket: &Path) -> ServerLocks {
        // The directory, not the socket: a socket comes and goes with its server, and the
        // name must not change with it.
        let canonical = match (socket.parent(), socket.file_name()) {
            (Some(dir), Some(name)) => std::fs::canonicalize(dir)
                .map(|d| d.join(name))
                .unwrap_or_else(|_| socket.to_path_buf()),
            _ => socket.to_path_buf(),
        };
        let text = canonical.to_string_lossy();
        // FNV-1a: stable across runs and builds (std's hasher is not).
        let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        let name: String = socket
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(40)
            .collect();
        let base = format!("{name}-{hash:016x}");
        ServerLocks {
            daemon: dir.join(format!("{base}.daemon.lock")),
        }
    }
}

/// A lock this process holds; dropping it releases the lock.
#[derive(Debug)]
pub struct Held {
    _file: File,
}

fn flock(kind: libc::c_short) -> libc::flock {
    // SAFETY: flock is plain old data; all-zero is a valid value.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl
}

fn open(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            // A shared temp dir: refuse one that someone else made for us.
            let meta = std::fs::metadata(dir)?;
            // SAFETY: getuid has no preconditions and cannot fail.
            let me = unsafe { libc::getuid() };
            if meta.uid() != me {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!("{} belongs to another user", dir.display()),
                ));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir)?;
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Takes the lock at `path` if nobody holds it, and writes `who` into it. `Ok(None)`: it
/// is held by another (a process, or another open file in this one).
pub fn try_hold(path: &Path, who: &Supervisor) -> std::io::Result<Option<Held>> {
    let mut file = open(path)?;
    let fl = flock(libc::F_WRLCK as libc::c_short);
    // SAFETY: a valid fd and a valid flock struct for the duration of the call.
    let r = unsafe { libc::fcntl(file.as_raw_fd(), SETLK, &fl) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EACCES) => Ok(None),
            _ => Err(e),
        };
    }
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(
        format!(
            "{} {} {}\n",
            who.pid,
            if who.daemon { "daemon" } else { "dashboard" },
            who.since
        )
        .as_bytes(),
    )?;
    file.flush()?;
    Ok(Some(Held { _file: file }))
}

/// Who holds the lock at `path` right now, if anyone. Tests the lock without taking it.
/// A holder that has not written its line yet is named with pid 0.
pub fn holder(path: &Path) -> std::io::Result<Option<Supervisor>> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    // A read lock is what would conflict with the holder's write lock.
    let mut fl = flock(libc::F_RDLCK as libc::c_short);
    // SAFETY: a valid fd and a valid, writable flock struct for the duration of the call.
    let r = unsafe { libc::fcntl(file.as_raw_fd(), GETLK, &mut fl) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if fl.l_type == libc::F_UNLCK as libc::c_short {
        return Ok(None);
    }
    // The holder writes its line just after taking the lock: give it a moment.
    let mut text = String::new();
    for _ in 0..3 {
        text.clear();
        let _ = file.rewind();
        let _ = file.read_to_string(&mut text);
        if parse(&text).is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    Ok(Some(parse(&text).unwrap_or(Supervisor {
        pid: 0,
        daemon: path.to_string_lossy().ends_with(".daemon.lock"),
        since: 0,
    })))
}

fn parse(text: &str) -> Option<Supervisor> {
    let mut f = text.split_whitespace();
    let pid = f.next()?.parse().ok()?;
    let daemon = f.next()? == "daemon";
    let since: Millis = f.next()?.parse().ok()?;
    Some(Supervisor { pid, daemon, since })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(pid: u32, daemon: bool) -> Supervisor {
        Supervisor {
            pid,
            daemon,
            since: 1_700_000_000_000,
        }
    }

    #[test]
    fn a_held_lock_refuses_a_second_holder_names_the_first_and_frees_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("x.daemon.lock");
        assert_eq!(holder(&path).unwrap(), None);
        let first = try_hold(&path, &who(41, true)).unwrap().expect("free");
        assert!(try_hold(&path, &who(42, true)).unwrap().is_none());
        assert_eq!(holder(&path).unwrap(), Some(who(41, true)));
        drop(first);
        assert_eq!(holder(&path).unwrap(), None);
        let second = try_hold(&path, &who(42, false))
            .unwrap()
            .expect("free again");
        assert_eq!(holder(&path).unwrap(), Some(who(42, false)));
        drop(second);
    }

    #[test]
    fn looking_at_a_lock_never_takes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("y.daemon.lock");
        let held = try_hold(&path, &who(7, false)).unwrap().expect("free");
        for _ in 0..3 {
            assert!(holder(&path).unwrap().is_some());
        }
        drop(held);
        // Nobody holds it, though it was looked at while held.
        assert!(try_hold(&path, &who(8, false)).unwrap().is_some());
    }

    #[test]
    fn every_server_has_its_own_locks_named_after_its_socket() {
        let a = ServerLocks::new(Path::new("/run"), Path::new("/tmp/tmux-0/default"));
        let b = ServerLocks::new(Path::new("/run"), Path::new("/tmp/other/default"));
        assert_ne!(a, b);
        let name = a.daemon.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("default-") && name.ends_with(".daemon.lock"),
            "{name}"
        );
    }

    #[test]
    fn a_garbled_holder_line_is_named_with_pid_zero() {
        assert_eq!(parse("junk"), None);
        assert_eq!(
            parse("12 daemon 5\n"),
            Some(Supervisor {
                pid: 12,
                daemon: true,
                since: 5
            })
        );
    }
}
