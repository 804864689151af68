//! The source tree's rules, checked: the pure core imports nothing that does I/O, and no
//! adapter reaches back into the loops, the screen or the commands.

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
        for (n, line) in non_test_code(&file).lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for word in forbidden {
                if line.contains(word) {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    found
}

#[test]
fn the_core_does_no_io_and_imports_no_adapter_loop_screen_or_command() {
    let bad = violations(
        "core",
        &[
            "crate::adapters",
            "crate::run",
            "crate::ui",
            "crate::commands",
            "tokio",
            "std::process",
            "std::fs",
            "std::net",
            "SystemTime::now",
            "Instant::now",
            "Timestamp::now",
            "Zoned::now",
            "TimeZone::system",
        ],
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
