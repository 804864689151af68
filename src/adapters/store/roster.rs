//! The roster of agents lost with a tmux server: what is needed to bring each back with its
//! resume command. Kept in the XDG state dir (`lost-agents.json`, one entry per socket),
//! written to a temp file and renamed, so a crash never leaves half a file.

use std::path::{Path, PathBuf};

pub use crate::core::roster::{LostAgent, Roster};

pub fn default_path() -> Option<PathBuf> {
    super::state_dir().map(|d| d.join("lost-agents.json"))
}

fn read_all(path: &Path) -> Vec<Roster> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    match serde_json::from_str(&text) {
        Ok(all) => all,
        Err(e) => {
            tracing::warn!("ignoring unreadable {}: {e}", path.display());
            Vec::new()
        }
    }
}

/// The roster saved for this socket, if any.
pub fn load(path: &Path, socket: &str) -> Option<Roster> {
    read_all(path).into_iter().find(|r| r.socket == socket)
}

/// Saves (or with `None`, forgets) this socket's roster, keeping the others.
pub fn save(path: &Path, socket: &str, roster: Option<&Roster>) -> std::io::Result<()> {
    let mut all: Vec<Roster> = read_all(path)
        .into_iter()
        .filter(|r| r.socket != socket)
        .collect();
    all.extend(roster.cloned());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(&all)?)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roster(socket: &str) -> Roster {
        Roster {
            socket: socket.into(),
            lost_at: 1,
            agents: vec![LostAgent {
                agent: "claude".into(),
                pane: "%1".into(),
                target: "work:1.0".into(),
                session: "work".into(),
                window_name: "api".into(),
                session_id: Some("0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into()),
                cwd: "/home/u".into(),
                args: vec![],
                state: "running".into(),
            }],
        }
    }

    #[test]
    fn rosters_are_kept_per_socket_and_survive_a_corrupt_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lost-agents.json");
        save(&path, "/a", Some(&roster("/a"))).unwrap();
        save(&path, "/b", Some(&roster("/b"))).unwrap();
        assert_eq!(load(&path, "/a"), Some(roster("/a")));
        save(&path, "/a", None).unwrap();
        assert_eq!(load(&path, "/a"), None);
        assert_eq!(load(&path, "/b"), Some(roster("/b")));
        std::fs::write(&path, b"[{\"socket\": \"/b\", \"lost_").unwrap();
        assert_eq!(load(&path, "/b"), None);
        save(&path, "/c", Some(&roster("/c"))).unwrap();
        assert_eq!(load(&path, "/c"), Some(roster("/c")));
    }
}
