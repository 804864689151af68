//! How a tmux server is reached: on this machine, or on another through `ssh` alone.
//!
//! Over ssh nothing of agentwatch runs remotely: `ssh -T DEST tmux …` carries tmux's own
//! command line (and its control mode) both ways. ssh passes its command to the remote
//! user's shell as one string, so every word is quoted for that shell here, built from a
//! vector; nothing from a config or a remote host is ever given to a local shell.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Stdio;

use crate::core::words::shell_quote;

/// A tmux server on another host, reached with `ssh`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshServer {
    /// What `ssh` is given as the destination (`box`, `me@box`, `ssh://box:2222`): the
    /// user's `~/.ssh/config`, keys and agent apply.
    pub dest: String,
    /// More arguments for `ssh`, before the destination (`-F FILE`, `-J jump`).
    pub ssh_args: Vec<String>,
    /// The tmux program there.
    pub tmux: String,
    /// `-L NAME` there.
    pub socket_name: Option<String>,
    /// `-S PATH` there.
    pub socket_path: Option<String>,
}

/// Where tmux runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// This machine: `tmux -S <socket>`.
    Local,
    /// Another: `ssh … DEST tmux …`.
    Ssh(SshServer),
}

/// The `ssh` options every connection gets: never a password prompt (a dashboard cannot
/// answer one; keys or an agent must do), and a dead link noticed in seconds, not hours.
const SSH_OPTIONS: [&str; 8] = [
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=5",
    "-o",
    "ServerAliveInterval=5",
    "-o",
    "ServerAliveCountMax=2",
];

impl SshServer {
    /// The server of a `[[hosts]]` entry.
    pub fn of(host: &crate::config::Host) -> SshServer {
        SshServer {
            dest: host.ssh.clone(),
            ssh_args: host.ssh_args.clone(),
            tmux: host.tmux.clone(),
            socket_name: host.socket_name.clone(),
            socket_path: host.socket_path.clone(),
        }
    }

    /// The remote command line: the tmux program, the server, then `args`, each word
    /// quoted for the remote shell.
    pub fn remote_command<S: AsRef<OsStr>>(&self, args: &[S]) -> String {
        let mut words: Vec<String> = vec![self.tmux.clone(), "-u".into()];
        if let Some(path) = &self.socket_path {
            words.extend(["-S".into(), path.clone()]);
        } else if let Some(name) = &self.socket_name {
            words.extend(["-L".into(), name.clone()]);
        }
        words.extend(
            args.iter()
                .map(|a| a.as_ref().to_string_lossy().into_owned()),
        );
        words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `ssh` to it, up to the destination: the user's arguments first (ssh keeps the first
    /// value of an option, so theirs win over these defaults), `--` (the destination is
    /// never an option), and no terminal to ask anything of.
    fn ssh(&self) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new("ssh");
        cmd.arg("-T")
            .args(&self.ssh_args)
            .args(SSH_OPTIONS)
            .arg("--")
            .arg(&self.dest)
            .stdin(Stdio::null());
        cmd
    }
}

impl Reach {
    /// A command that runs tmux with `args` against the server: the tmux program with
    /// `-u -S socket` here, `ssh` there. stdin, stdout and stderr are the caller's to set.
    pub fn command<S: AsRef<OsStr>>(
        &self,
        program: &OsStr,
        socket: &PathBuf,
        envs: &[(OsString, OsString)],
        args: &[S],
    ) -> tokio::process::Command {
        match self {
            Reach::Local => {
                let mut cmd = tokio::process::Command::new(program);
                cmd.arg("-u")
                    .arg("-S")
                    .arg(socket)
                    .args(args)
                    .env_remove("TMUX")
                    // tmux reads TMUX_PANE to find "the current client" too; agentwatch
                    // names every target itself.
                    .env_remove("TMUX_PANE")
                    .envs(envs.iter().map(|(k, v)| (k, v)));
                cmd
            }
            Reach::Ssh(s) => {
                let mut cmd = s.ssh();
                cmd.arg(s.remote_command(args))
                    .env_remove("TMUX")
                    .env_remove("TMUX_PANE");
                cmd
            }
        }
    }
}

impl SshServer {
    /// `sh -c SCRIPT` run there, over a new ssh process (not the control connection: tmux's
    /// `run-shell` shows its output in a pane, it does not answer it). For what only that
    /// machine's `/proc` knows, asked rarely. The script must hold no backslash and no single
    /// quote (it passes through the remote login shell, which may be fish).
    pub fn shell(&self, script: &str) -> Option<tokio::process::Command> {
        if script.contains(['\\', '\'', '\n']) {
            return None;
        }
        let mut cmd = self.ssh();
        cmd.arg(format!("sh -c '{script}'"));
        Some(cmd)
    }
}

impl SshServer {
    /// Runs `script` there ([`SshServer::shell`]) and gives its output: whatever the script's
    /// own status (its last test's), as long as ssh itself got through within `timeout`
    /// (ssh's failure is 255, said in its last line of stderr; killed by a signal, no code).
    pub async fn run_script(
        &self,
        script: &str,
        timeout: std::time::Duration,
    ) -> Result<Vec<u8>, ScriptError> {
        let mut cmd = self.shell(script).ok_or(ScriptError::Unquotable)?;
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        match tokio::time::timeout(timeout, cmd.output()).await {
            Ok(Ok(o)) if o.status.code().is_some_and(|c| c != 255) => Ok(o.stdout),
            // ssh's own failure, in its words (the host, the key, the login).
            Ok(Ok(o)) => Err(ScriptError::Ssh(
                ssh_failure(o.status.code(), &o.stderr)
                    .unwrap_or_else(|| format!("ssh exited {}", o.status)),
            )),
            Ok(Err(e)) => Err(ScriptError::NotStarted(e.to_string())),
            Err(_) => Err(ScriptError::NoAnswer(timeout.as_secs())),
        }
    }
}

/// Why a script could not be run on another host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    #[error("a script with a quote, backslash or newline")]
    Unquotable,
    /// ssh's own words.
    #[error("{0}")]
    Ssh(String),
    #[error("ssh did not start: {0}")]
    NotStarted(String),
    #[error("no answer in {0} s")]
    NoAnswer(u64),
}

/// ssh's own failures (it exits 255): the host could not be reached or would not let us
/// in. Its last line of stderr says why.
pub fn ssh_failure(code: Option<i32>, stderr: &[u8]) -> Option<String> {
    if code != Some(255) {
        return None;
    }
    let text = String::from_utf8_lossy(stderr);
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("ssh failed")
        .trim();
    Some(crate::core::text::printable(last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> SshServer {
        SshServer {
            dest: "box".into(),
            ssh_args: vec!["-F".into(), "/tmp/cfg".into()],
            tmux: "tmux".into(),
            socket_name: None,
            socket_path: Some("/tmp/my sock".into()),
        }
    }

    #[test]
    fn every_remote_word_is_quoted_for_the_remote_shell() {
        let h = host();
        assert_eq!(
            h.remote_command(&["display", "-p", "#{pane_id}; $(rm -rf ~)"]),
            "tmux -u -S '/tmp/my sock' display -p '#{pane_id}; $(rm -rf ~)'"
        );
        let cmd =
            Reach::Ssh(h).command(OsStr::new("tmux"), &PathBuf::from("/unused"), &[], &["-V"]);
        let argv: Vec<String> = cmd
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(argv[0], "-T");
        assert_eq!(&argv[1..3], ["-F", "/tmp/cfg"], "the user's arguments win");
        assert!(argv.contains(&"BatchMode=yes".to_string()));
        let dest = argv.iter().position(|a| a == "box").unwrap();
        assert_eq!(argv[dest - 1], "--");
        assert_eq!(argv[dest + 1], "tmux -u -S '/tmp/my sock' -V");
        assert_eq!(argv.len(), dest + 2);
    }

    #[test]
    fn a_destination_that_ssh_would_take_for_an_option_is_refused() {
        let check = crate::config::dest_problem;
        assert!(check(&host().dest).is_none());
        assert!(check("-oProxyCommand=touch /tmp/x")
            .unwrap()
            .contains("not an ssh destination"));
        assert!(check("a b").is_some());
        assert!(check("").is_some());
    }

    #[test]
    fn ssh_failures_are_told_by_its_exit_code() {
        assert_eq!(
            ssh_failure(
                Some(255),
                b"Warning: x\nssh: connect to host box port 22: Connection refused\n"
            ),
            Some("ssh: connect to host box port 22: Connection refused".into())
        );
        assert_eq!(ssh_failure(Some(1), b"no server running"), None);
    }
}
