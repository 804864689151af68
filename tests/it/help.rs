//! `--help` and `-h` of agentwatch and of every command (hidden ones too: they print help)
//! fit in 80 columns where no terminal says how wide it is, and wrap to a narrower one.

use std::process::Stdio;

use clap::CommandFactory;
use unicode_width::UnicodeWidthStr;

/// Every command as its words after `agentwatch`: `[]` for agentwatch itself, `["status"]`,
/// ..., as clap knows them (a command added later is checked too).
fn command_paths() -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands() {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            walk(sub, p, out);
        }
        out.push(path);
    }
    let mut out = Vec::new();
    walk(&agentwatch::cli::Cli::command(), Vec::new(), &mut out);
    out
}

/// The help printed into a pipe, with no terminal on stdin, stdout or stderr (clap asks
/// all three for a width), and `$COLUMNS` as given.
fn help(path: &[String], flag: &str, columns: Option<&str>) -> String {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = crate::support::agentwatch_in(home.path());
    cmd.args(path).arg(flag).stdin(Stdio::null());
    match columns {
        Some(c) => cmd.env("COLUMNS", c),
        None => cmd.env_remove("COLUMNS"),
    };
    let out = cmd.output().unwrap();
    let shown = format!("agentwatch {} {flag}", path.join(" "));
    assert!(
        out.status.success(),
        "{shown}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Usage: agentwatch"), "{shown}: {text}");
    text
}

/// Lines wider than `width` display columns, each with its width and where it was printed.
fn too_wide(text: &str, width: usize, shown: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.width() > width)
        .map(|l| format!("{shown}: {} columns: {l}", l.width()))
        .collect()
}

#[test]
fn every_help_fits_in_80_columns_when_not_on_a_terminal() {
    let paths = command_paths();
    assert!(
        paths.iter().any(|p| p == &["hook"]) && paths.iter().any(|p| p == &["status"]),
        "{paths:?}"
    );
    let mut wide = Vec::new();
    for path in &paths {
        for flag in ["-h", "--help"] {
            // No $COLUMNS: clap would take 100. A wide $COLUMNS: clap would take it.
            for columns in [None, Some("200"), Some("80")] {
                let text = help(path, flag, columns);
                let shown = format!("agentwatch {} {flag} (COLUMNS={columns:?})", path.join(" "));
                wide.extend(too_wide(&text, 80, &shown));
            }
        }
    }
    assert!(
        wide.is_empty(),
        "help lines wider than 80 columns:\n{}",
        wide.join("\n")
    );
}

#[test]
fn help_wraps_to_a_narrower_terminal() {
    // With no terminal to ask, clap takes $COLUMNS as the terminal's width.
    let mut wide = Vec::new();
    for path in command_paths() {
        for flag in ["-h", "--help"] {
            let text = help(&path, flag, Some("60"));
            let shown = format!("agentwatch {} {flag} (COLUMNS=60)", path.join(" "));
            wide.extend(too_wide(&text, 60, &shown));
        }
    }
    assert!(
        wide.is_empty(),
        "help lines wider than a 60-column terminal:\n{}",
        wide.join("\n")
    );
}

#[test]
fn the_help_says_that_agentwatch_with_no_command_opens_the_dashboard() {
    for flag in ["-h", "--help"] {
        let text = help(&[], flag, None);
        assert!(
            text.contains("Usage: agentwatch [OPTIONS]            open the dashboard\n"),
            "{flag}: {text}"
        );
    }
    let text = help(&[], "--help", None);
    assert!(
        text.contains("Run `agentwatch` with no command to open the dashboard"),
        "{text}"
    );
}

/// The README's key tables are the key table: every row, word for word.
#[test]
fn the_readme_lists_every_key() {
    use agentwatch::core::keymap::{GRID, LOST, PEEK};
    let readme = include_str!("../../README.md");
    for b in GRID.iter().chain(PEEK.iter()).chain(LOST.iter()) {
        let row = format!("| `{}` | {} |", b.label, b.help);
        assert!(readme.contains(&row), "README lacks the row: {row}");
    }
}
