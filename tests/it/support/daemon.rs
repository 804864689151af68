//! `agentwatch daemon` started by a test, stopped by pid.
#![allow(dead_code)]

use std::io::Read;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::TmuxServer;

const WAIT: Duration = Duration::from_secs(30);

/// A daemon started by a test, stopped by pid when dropped.
pub struct Daemon {
    child: Child,
}

impl Daemon {
    pub fn start(server: &TmuxServer, config: &std::path::Path) -> Daemon {
        Daemon::start_env(server, config, &[])
    }

    /// With extra environment (a `PATH` with a logging `tmux` first, say).
    pub fn start_env(
        server: &TmuxServer,
        config: &std::path::Path,
        env: &[(&str, &str)],
    ) -> Daemon {
        let child = server
            .agentwatch_command(&["-c", config.to_str().unwrap(), "daemon"])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the daemon");
        let d = Daemon { child };
        let pid = d.pid();
        super::wait_until("the daemon holds its lock", WAIT, || {
            status_of(server, config).contains(&format!("daemon {pid}"))
        });
        d
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, sig: &str) {
        std::process::Command::new("kill")
            .args(["-s", sig, &self.pid().to_string()])
            .status()
            .unwrap();
    }

    /// SIGTERM, then the exit status and what it wrote to stderr.
    pub fn stop(mut self) -> (std::process::ExitStatus, String) {
        self.signal("TERM");
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                return (status, err);
            }
            assert!(start.elapsed() < WAIT, "the daemon ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `agentwatch doctor`'s line about the daemon.
pub fn status_of(server: &TmuxServer, config: &std::path::Path) -> String {
    let out = server
        .agentwatch_command(&["-c", config.to_str().unwrap(), "doctor"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.contains("daemon"))
        .unwrap_or_default()
        .to_string()
}
