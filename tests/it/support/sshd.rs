//! A real `sshd` on loopback for the tests of hosts reached over ssh: its own host key, a
//! client key, `authorized_keys` and an ssh client config, all in a temp dir; nothing of
//! the user's `~/.ssh` is read or written. Debian's `openssh-server` (`.ci/run` installs
//! it); a test skips with a notice where it is missing.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const SSHD: &str = "/usr/sbin/sshd";

pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    /// `ssh -F <this>`: the client config naming the host `aw-test`.
    pub client_config: PathBuf,
    child: Option<Child>,
}

/// The host name the client config gives this sshd.
pub const HOST: &str = "aw-test";

/// Whether a real sshd can be run here; if not, why (printed as the skip notice).
pub fn missing() -> Option<String> {
    for p in [SSHD, "/usr/bin/ssh", "/usr/bin/ssh-keygen"] {
        if !Path::new(p).exists() {
            let why = format!("{p} is missing (apt-get install openssh-server openssh-client)");
            if std::env::var_os("CI").is_some() {
                panic!("{why}: .ci/run installs it");
            }
            return Some(why);
        }
    }
    None
}

fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("ssh-keygen")
        .success();
    assert!(ok, "ssh-keygen {}", path.display());
}

fn user() -> String {
    // SAFETY: getuid has no preconditions; getpwuid's result is read before any other call.
    unsafe {
        let pw = libc::getpwuid(libc::getuid());
        assert!(!pw.is_null(), "no passwd entry for this user");
        std::ffi::CStr::from_ptr((*pw).pw_name)
            .to_string_lossy()
            .into_owned()
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Sshd {
    pub fn start() -> Sshd {
        let dir = tempfile::Builder::new()
            .prefix("aw-sshd")
            .tempdir()
            .expect("tempdir");
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("client_key"));
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).expect("keys");
        let port = free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
             PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPidFile none\n\
             AcceptEnv LANG\nLogLevel ERROR\n",
            d = d.display()
        );
        std::fs::write(d.join("sshd_config"), config).expect("sshd_config");
        let client = format!(
            "Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {d}/client_key\n  IdentitiesOnly yes\n\
             \x20 UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking accept-new\n  LogLevel ERROR\n",
            user = user(),
            d = d.display()
        );
        let client_config = d.join("ssh_config");
        std::fs::write(&client_config, client).expect("ssh_config");
        // sshd run as root wants its privilege separation directory (a service start
        // makes it; a fresh container has none).
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 && !Path::new("/run/sshd").exists() {
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        let mut s = Sshd {
            dir,
            port,
            client_config,
            child: None,
        };
        s.run();
        s
    }

    /// Starts sshd (again) on the same port and waits until it answers.
    pub fn run(&mut self) {
        assert!(self.child.is_none(), "sshd already running");
        let d = self.dir.path();
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(d.join("sshd.log")).expect("sshd log"))
            .spawn()
            .expect("start sshd");
        self.child = Some(child);
        // Every 50 ms, not 25: each look past the port is a whole ssh login.
        let answered = super::poll_every(Duration::from_millis(50), *super::WAIT, || {
            std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() && self.ssh_ok(&["true"])
        });
        assert!(
            answered,
            "sshd did not start: {}",
            std::fs::read_to_string(d.join("sshd.log")).unwrap_or_default()
        );
    }

    /// `ssh -F <config> aw-test <words...>` ran and exited 0.
    pub fn ssh_ok(&self, words: &[&str]) -> bool {
        Command::new("ssh")
            .arg("-F")
            .arg(&self.client_config)
            .args(["-o", "BatchMode=yes", HOST])
            .args(words)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// The ssh arguments that reach this sshd as [`HOST`].
    pub fn ssh_args(&self) -> Vec<String> {
        vec![
            "-F".into(),
            self.client_config.to_string_lossy().into_owned(),
        ]
    }

    /// Kills the listener and every session it started (its children, found by their
    /// parent pid): the host is gone, as when sshd dies or the machine drops off the net.
    pub fn kill(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id();
        let sessions = children_of(pid);
        let _ = child.kill();
        let _ = child.wait();
        for p in sessions {
            // SAFETY: kill(2) on a pid we started (a session of our sshd).
            unsafe { libc::kill(p as libc::pid_t, libc::SIGKILL) };
        }
    }
}

/// The pids whose parent is `pid`, and theirs (sshd's per-connection processes).
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(parent) = todo.pop() {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            break;
        };
        for e in entries.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u32>().ok());
            // Only sshd's own: a remote command it ran (tmux's client) ends with them.
            let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
            if ppid == Some(parent) && comm.trim() == "sshd" {
                out.push(p);
                todo.push(p);
            }
        }
    }
    out
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.kill();
    }
}
