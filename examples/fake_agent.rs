//! Stand-in for AI agent CLIs (claude, codex, gemini, aider) used by the
//! integration tests. It logs its invocation and then runs a scripted "plan".
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let name = args
        .first()
        .map(|a| {
            Path::new(a)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| a.clone())
        })
        .unwrap_or_else(|| "fake_agent".to_string());
    // Like the real CLIs: `--version` answers at once and is not a run.
    if args.len() == 2 && args[1] == "--version" {
        println!("{name} 0.0.0 (fake agent)");
        return;
    }
    let pane = std::env::var("TMUX_PANE").ok();
    let dir = std::env::var_os("FAKE_AGENT_DIR").map(PathBuf::from);

    let mut run = 0usize;
    if let Some(dir) = &dir {
        run = log_start(dir, &name, &args[1.min(args.len())..], pane.as_deref());
    }

    let plan = dir
        .as_ref()
        .and_then(|d| read_plan(d, &name, pane.as_deref()))
        .unwrap_or_else(|| "hang".to_string());
    let sections: Vec<Vec<&str>> = plan
        .split('\n')
        .collect::<Vec<_>>()
        .split(|l| l.trim() == "---")
        .map(|s| s.to_vec())
        .collect();
    let section = &sections[run.min(sections.len() - 1)];
    let base = dir.unwrap_or_else(|| PathBuf::from("."));
    for line in section {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (cmd, arg) = line.split_once(' ').unwrap_or((line, ""));
        let arg = arg.trim();
        match cmd {
            "say" => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{arg}");
                let _ = out.flush();
            }
            "print" => {
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                for i in 1..=num(arg) {
                    let _ = writeln!(out, "\x1b[{}mline {i}\x1b[0m", 31 + (i - 1) % 6);
                }
                let _ = out.flush();
            }
            "sleep" => std::thread::sleep(Duration::from_millis(num(arg))),
            "wait" => {
                let p = base.join(arg);
                while !p.exists() {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            "exit" => std::process::exit(num(arg) as i32),
            "signal" => {
                let _ = std::process::Command::new("kill")
                    .arg(format!("-{}", num(arg)))
                    .arg(std::process::id().to_string())
                    .status();
                hang();
            }
            "hang" => hang(),
            "touch" => {
                let _ = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(base.join(arg));
            }
            "codex-exit-line" => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "To continue this session, run codex resume {arg}");
                let _ = out.flush();
            }
            _ => {
                eprintln!("fake_agent: unknown plan command: {line}");
                std::process::exit(99);
            }
        }
    }
    std::process::exit(0);
}

fn num(s: &str) -> u64 {
    s.parse().unwrap_or_else(|_| {
        eprintln!("fake_agent: bad number: {s:?}");
        std::process::exit(99)
    })
}

fn hang() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Appends the start record to `log.jsonl`; returns the run number for this pane.
fn log_start(dir: &Path, name: &str, argv: &[String], pane: Option<&str>) -> usize {
    let _ = std::fs::create_dir_all(dir);
    let log = dir.join("log.jsonl");
    let pane_value = serde_json::json!(pane);
    let run = std::fs::File::open(&log)
        .map(|f| {
            BufReader::new(f)
                .lines()
                .map_while(Result::ok)
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(&l).ok())
                .filter(|v| v.get("pane") == Some(&pane_value))
                .count()
        })
        .unwrap_or(0);
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let entry = serde_json::json!({
        "name": name,
        "argv": argv,
        "cwd": cwd,
        "pid": std::process::id(),
        "pane": pane_value,
        "run": run,
    });
    let line = format!("{entry}\n");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
    {
        let _ = f.write_all(line.as_bytes());
    }
    run
}

fn read_plan(dir: &Path, name: &str, pane: Option<&str>) -> Option<String> {
    let mut candidates = Vec::new();
    if let Some(p) = pane {
        candidates.push(dir.join(format!("{}.plan", p.trim_start_matches('%'))));
    }
    candidates.push(dir.join(format!("{name}.plan")));
    candidates.push(dir.join("default.plan"));
    candidates
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
}
