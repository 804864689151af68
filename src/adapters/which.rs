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

/// The program's path in the directories of `paths` (a PATH value).
pub fn find_in(program: &str, paths: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(paths)
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
