//! Which tmux server: as the user said it (`-L`, `-S`, `$TMUX`), and the socket path tmux
//! itself would use for that.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Which tmux server to talk to, as the user said it (tmux's own `-L`/`-S`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerChoice {
    /// `$TMUX` if set, else the default socket: the server tmux itself would use.
    Default,
    Name(String),
    Path(PathBuf),
}

/// `$TMUX` as tmux sets it in its panes and popups: `socket,server pid,session id number`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxEnv {
    pub socket: PathBuf,
    /// The session it was set for, as tmux names it (`$3`); none in a job of no session.
    pub session: Option<String>,
}

impl TmuxEnv {
    pub fn parse(value: &str) -> Option<TmuxEnv> {
        let mut f = value.split(',');
        let socket = f.next().filter(|s| !s.is_empty())?;
        let session = f.nth(1).and_then(|n| n.parse::<u32>().ok());
        Some(TmuxEnv {
            socket: PathBuf::from(socket),
            session: session.map(|n| format!("${n}")),
        })
    }

    /// This process's `$TMUX`, when it is set (it runs inside tmux).
    pub fn current() -> Option<TmuxEnv> {
        TmuxEnv::parse(&std::env::var("TMUX").ok()?)
    }
}

/// A socket path as one server is known by, however it was written (`./a.sock`, a
/// symlink): resolved where the socket exists, else made absolute as written.
pub fn socket_identity(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    })
}

/// The socket path tmux would use for this choice (tmux's own rules).
pub fn resolve_socket(choice: &ServerChoice) -> PathBuf {
    let dir = || {
        let base = std::env::var_os("TMUX_TMPDIR")
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| OsString::from("/tmp"));
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        Path::new(&base).join(format!("tmux-{uid}"))
    };
    match choice {
        ServerChoice::Path(p) => p.clone(),
        ServerChoice::Name(n) => dir().join(n),
        ServerChoice::Default => match TmuxEnv::current() {
            Some(env) => env.socket,
            None => dir().join("default"),
        },
    }
}
