//! The source tree's rules, checked: the core crate depends on nothing that does I/O and
//! names no file, process, network or clock, and no adapter reaches back into the loops, the
//! screen or the commands.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The code of a file without its test module (tests may do what the code may not).
fn non_test_code(path: &Path) -> String {
    if path.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(path).expect("read source");
    match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

fn violations(folder: &str, forbidden: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(folder);
    let mut found = Vec::new();
    for file in rust_files(&root) {
        found.extend(lines_naming(&file, &non_test_code(&file), forbidden));
    }
    found
}

/// The lines of `code` (from `file`) that name one of `words`, comments aside.
fn lines_naming(file: &Path, code: &str, words: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for word in words {
            if line.contains(word) {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    found
}

/// The core crate's own source, tests included.
fn core_sources() -> Vec<PathBuf> {
    let files = rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/src"));
    assert!(files.len() > 10, "the core crate's source is where it was");
    files
}

#[test]
fn the_core_crate_depends_on_no_runtime_terminal_logging_or_os_crate() {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-p",
            "agentwatch-core",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--manifest-path",
        ])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(crates.contains(&"agentwatch-core"), "{tree}");
    for banned in [
        "tokio",
        "crossterm",
        "ratatui",
        "tracing",
        "libc",
        "toml",
        "ansi-to-tui",
    ] {
        assert!(
            !crates
                .iter()
                .any(|c| *c == banned || c.starts_with(&format!("{banned}-"))),
            "the core crate depends on {banned}:\n{tree}"
        );
    }
}

#[test]
fn the_core_names_no_file_process_network_or_clock_in_any_line_tests_included() {
    let mut bad = Vec::new();
    for file in core_sources() {
        let code = std::fs::read_to_string(&file).expect("read source");
        bad.extend(lines_naming(
            &file,
            &code,
            &[
                "std::fs",
                "std::process",
                "std::net",
                "std::env",
                "std::thread",
                "SystemTime::now",
                "Instant::now",
                "Timestamp::now",
                "Zoned::now",
                "TimeZone::system",
            ],
        ));
    }
    let lib = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/src/lib.rs"),
    )
    .expect("read the core's lib.rs");
    assert!(
        lib.contains("#![forbid(unsafe_code)]"),
        "the core crate forbids unsafe code"
    );
    assert!(
        bad.is_empty(),
        "the core must stay pure:\n{}",
        bad.join("\n")
    );
}

#[test]
fn adapters_and_the_screen_never_reach_into_the_loops_or_the_commands() {
    for folder in ["adapters", "ui"] {
        let bad = violations(folder, &["crate::run", "crate::commands"]);
        assert!(bad.is_empty(), "{folder} reaches back:\n{}", bad.join("\n"));
    }
    let bad = violations("ui", &["crate::adapters", "tokio"]);
    assert!(bad.is_empty(), "ui only draws:\n{}", bad.join("\n"));
}

/// Whether a file holds tests only: a `tests.rs`, a `*_tests.rs`, or a file under a
/// `tests/` folder.
fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    name.as_deref() == Some("tests.rs")
        || name.is_some_and(|n| n.ends_with("_tests.rs"))
        || path.components().any(|c| c.as_os_str() == "tests")
}

#[test]
fn no_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    for dir in ["src", "crates/core/src"] {
        for file in rust_files(&root.join(dir)) {
            if is_test_file(&file) {
                continue;
            }
            let lines = std::fs::read_to_string(&file)
                .expect("read source")
                .lines()
                .count();
            if lines > 800 {
                long.push(format!("{}: {lines} lines", file.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "split these by job (tests may go to a tests.rs beside them):\n{}",
        long.join("\n")
    );
}

/// Every run of agentwatch from a test has HOME and the XDG dirs in the test's temp dir, so
/// no journal line or log of a test lands in the user's own: the binary is only started
/// through the helpers that set them (`TmuxServer::agentwatch`, `support::agentwatch_in`),
/// or inside a test server's pane, whose environment has them from the server.
#[test]
fn tests_start_agentwatch_only_with_private_home_and_xdg_dirs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut bare = Vec::new();
    for file in rust_files(&root) {
        let text = std::fs::read_to_string(&file).expect("read test");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.contains("Command::new(env!(\"CARGO_BIN_EXE_agentwatch\"))") {
                continue;
            }
            // In the helpers: the private dirs are set on the very next line.
            let next = lines.get(i + 1).copied().unwrap_or_default();
            let helper = file.ends_with("support/mod.rs")
                && (next.contains("env_for_child") || next.contains("private_home"));
            if !helper {
                bare.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        bare.is_empty(),
        "start agentwatch with server.agentwatch() or support::agentwatch_in(dir):\n{}",
        bare.join("\n")
    );
}
