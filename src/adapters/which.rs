//! Finding a program on PATH.

use std::path::{Path, PathBuf};

/// The program's path via PATH (or itself, if it contains a slash and exists).
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let p = Path::new(program);
        return is_executable(p).then(|| p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| find_in(program, &paths))
}

/// The program's path in the directories of `paths` (a PATH value), relative entries
/// taken from this process's directory.
pub fn find_in(program: &str, paths: &std::ffi::OsStr) -> Option<PathBuf> {
    find_in_from(program, paths, Path::new(""))
}

/// [`find_in`] as `execvp` in `cwd` looks: an empty or relative entry of `paths` (`.`,
/// `node_modules/.bin`) is a directory under `cwd`.
pub fn find_in_from(program: &str, paths: &std::ffi::OsStr, cwd: &Path) -> Option<PathBuf> {
    std::env::split_paths(paths)
        .map(|d| cwd.join(d).join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn empty_and_relative_path_entries_are_looked_up_under_the_given_directory() {
        let dir = std::env::temp_dir().join(format!("aw-which-{}", std::process::id()));
        let bin = dir.join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        for p in [bin.join("agent"), dir.join("here")] {
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = std::ffi::OsStr::new("/nonexistent:node_modules/.bin");
        assert_eq!(find_in_from("agent", path, &dir), Some(bin.join("agent")));
        assert_eq!(find_in_from("agent", path, Path::new("/")), None);
        // An empty entry is the directory itself.
        let empty = std::ffi::OsStr::new("/nonexistent::/also-not");
        assert_eq!(find_in_from("here", empty, &dir), Some(dir.join("here")));
        assert_eq!(
            find_in_from("here", std::ffi::OsStr::new("/usr/bin"), &dir),
            None
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
