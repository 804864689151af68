//! `agentwatch daemon` started by a test, stopped by pid.
#![allow(dead_code)]

use std::io::Read;
use std::process::{Child, Stdio};

use super::{TmuxServer, LONG};

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
        super::wait_until("the daemon holds its lock", *LONG, || {
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
        let mut status = None;
        super::wait_until("the daemon ends on SIGTERM", *LONG, || {
            status = self.child.try_wait().unwrap();
            status.is_some()
        });
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        (status.expect("it exited"), err)
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
pub fn status_of(server: &TmuxServer, _config: &std::path::Path) -> String {
    doctor(server)
        .lines()
        .find(|l| l.contains("daemon"))
        .unwrap_or_default()
        .to_string()
}

/// `agentwatch doctor`'s report. Its own config, with no control-mode probe: tmux before
/// 3.7 can crash when a control client leaves (doctor's probe) while another attaches (a
/// daemon starting), and this is asked in loops while daemons start.
pub fn doctor(server: &TmuxServer) -> String {
    let own = server.dir.path().join("doctor.toml");
    std::fs::write(&own, "control_mode = false\n").unwrap();
    let out = server
        .agentwatch_command(&["-c", own.to_str().unwrap(), "doctor"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}
