//! Stand-in for AI agent CLIs (claude, codex, gemini, aider) used by the
//! integration tests. It logs its invocation and then runs a scripted "plan".
//!
//! Named `claude`, `gemini` or `opencode` it keeps their session rules as measured on the
//! real CLIs (claude 2.1.197, gemini 0.61.0, opencode 1.18.33), so that the suite needs no
//! network:
//! - claude turns SIGTERM and SIGHUP into exit codes 143 and 129. With its config folder
//!   present (`$CLAUDE_CONFIG_DIR`, else `~/.claude`), a session is resumable only once it
//!   got a first message (plan line `message`: the transcript
//!   `projects/<slug of the cwd>/<id>.jsonl` with its `mode` and `permission-mode` lines, a
//!   `user` and an `assistant` line): `--resume <id>` of a transcript without a message
//!   prints `No conversation found with session ID: <id>` and exits 1, `--session-id <id>`
//!   of any transcript prints `Error: Session ID <id> is already in use.` and exits 1. Plan
//!   line `slash-exit` is /exit typed at its input box: a session that never got a message
//!   leaves a transcript of its two mode lines only (2.1.197 and 2.1.332 alike), one that
//!   did prints `Resume this session with:` and `claude --resume <id>`; both exit 0. A
//!   never-messaged session ended otherwise (Ctrl-C twice, a crash) leaves no transcript.
//! - gemini, with `${GEMINI_CLI_HOME:-~}/.gemini` present, writes its chat at start and
//!   takes a message into it; `--resume <id>` of a chat without a message exits 42 (`Error
//!   resuming session: No previous sessions found for this project.`), `--session-id` of an
//!   id it has seen exits 42, and `--resume latest` or an index is not an id: it warns and
//!   starts a fresh session.
//! - codex, with `$CODEX_HOME` present: `codex resume <id>` of a session it has no rollout
//!   file of exits 1 with one of its two "no such session" answers (see `codex_start`).
//! - opencode `-s <id>` of a session not in `$FAKE_AGENT_DIR/opencode/sessions/` prints
//!   `Error: Session not found: <id>` and exits 1; plan line `opencode-exit-line <id>` prints
//!   what it prints on Ctrl-C (`Session   <title>`, `Continue  opencode -s <id>`).
//!
//! - Like claude 2.1.197 (`strace`: one 8-byte write to an eventfd a second while it
//!   waits, nothing else), it writes 8 bytes a second off its terminal (to `/dev/null`) all
//!   its life: what its processes wrote is not all work on its screen.
//! - Why claude stops, as claude 2.1.197 says it (measured against a stub model server on
//!   loopback): plan line `claude-limit MINUTES` draws its interactive usage-limit banner
//!   (`  ⎿  You've hit your session limit · resets 9:23pm (UTC)`, the reset MINUTES on, up to
//!   the whole minute, in the local zone) with its `/rate-limit-options` menu, stays alive,
//!   and logs each line typed into it (`typed-<pane>.jsonl`; the reset in
//!   `limit-<pane>.json`); `claude-error auth|login|overloaded|network|limit` prints what
//!   `claude -p` prints for a refused key, no login, a 529, a refused connection or a limit
//!   with no reset, and exits 1 (interactively claude never exits on these); `node-oom`
//!   prints node's heap exhaustion and aborts (SIGABRT).
//!
//! Plan line `churn MIN MAX [SPIN_MS]` (seconds, decimals allowed) is for benchmarks
//! (bench/churn.py): forever, phases of a random length in [MIN, MAX] (seeded from the pid and
//! the clock) alternate, starting with a working one. Working: the screen is cleared and
//! claude's spinner line (`✻ Working… (12s · esc to interrupt)`) redrawn every SPIN_MS
//! (default 100) ms. Waiting: the
//! screen is cleared, a claude permission prompt (`Do you want to proceed?`) drawn, and
//! nothing more written until the phase ends. Each phase's start is appended as one line
//! `{"pane":"%N","phase":"working"|"waiting","at_ms":<epoch ms>}` to
//! `$FAKE_AGENT_DIR/churn.jsonl`, stamped right after its first bytes were written and
//! flushed. A busy-looking pane that stays silent needs no plan line of its own: `say ✻
//! Working… (3s · esc to interrupt)` then `hang`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

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
    std::thread::spawn(|| {
        let Ok(mut null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
            return;
        };
        loop {
            std::thread::sleep(Duration::from_secs(1));
            let _ = null.write_all(&[1, 0, 0, 0, 0, 0, 0, 0]);
        }
    });
    // The real agent process a launcher started (`child`): it runs until it is ended.
    if std::env::var_os("FAKE_AGENT_CHILD").is_some() {
        hang();
    }
    let pane = std::env::var("TMUX_PANE").ok();
    let dir = std::env::var_os("FAKE_AGENT_DIR").map(PathBuf::from);

    let mut run = 0usize;
    if let Some(dir) = &dir {
        run = log_start(dir, &name, &args[1.min(args.len())..], pane.as_deref());
    }
    let session = Session::start(&name, &args, dir.as_deref());

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
            "exit" => {
                remove_state_file();
                std::process::exit(num(arg) as i32)
            }
            "signal" => {
                let _ = std::process::Command::new("kill")
                    .arg(format!("-{}", num(arg)))
                    .arg(std::process::id().to_string())
                    .status();
                hang();
            }
            "hang" => hang(),
            // As the codex and gemini npm launchers do: the real agent runs as a child in the
            // launcher's process group, and the launcher waits for it. SIGKILL of the launcher
            // leaves the child running with another parent (an orphan, seen on codex 0.171 and
            // gemini 0.61); SIGTERM is passed on (codex) and both end.
            "child" => {
                let exe = std::env::current_exe().unwrap();
                let mut cmd = std::process::Command::new(exe);
                use std::os::unix::process::CommandExt;
                cmd.arg0(&args[0])
                    .args(&args[1..])
                    .env("FAKE_AGENT_CHILD", "1");
                let child = cmd.spawn().unwrap();
                let _ = CHILD.set(child.id());
                // SAFETY: the handler only calls kill and _exit.
                unsafe {
                    libc::signal(
                        libc::SIGTERM,
                        pass_on_signal as *const () as libc::sighandler_t,
                    );
                }
                let mut child = child;
                let status = child.wait().unwrap();
                remove_state_file();
                std::process::exit(status.code().unwrap_or(1));
            }
            "touch" => {
                let _ = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(base.join(arg));
            }
            "message" => session.message(),
            "slash-exit" => {
                session.slash_exit();
                remove_state_file();
                std::process::exit(0);
            }
            "session-as" => {
                let _ = SESSION_AS.set(arg.to_string());
            }
            // claude's own state file, as claude 2.1.197 keeps it: `state busy`,
            // `state waiting permission prompt`, `state idle`.
            "state" => claude_state(arg),
            // As an agent's UI does when a prompt is answered: the screen is redrawn.
            "clear" => {
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "\x1b[H\x1b[2J");
                let _ = out.flush();
            }
            // A screen the real CLI drew, as captured (`capture-pane -p`): drawn whole from
            // the top, as a full-screen UI draws it.
            "screen" => {
                let text = std::fs::read_to_string(arg).unwrap_or_else(|e| {
                    eprintln!("fake_agent: screen {arg}: {e}");
                    std::process::exit(99)
                });
                let lines: Vec<&str> = text.trim_end_matches('\n').split('\n').collect();
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "\x1b[H\x1b[2J{}", lines.join("\r\n"));
                let _ = out.flush();
            }
            // opencode 1.18.33 on Ctrl-C: its session's title and how to continue it.
            "opencode-exit-line" => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "  Session   a conversation");
                let _ = writeln!(out, "  Continue  opencode -s {arg}");
                let _ = out.flush();
            }
            "churn" => {
                let mut it = arg.split_whitespace().map(|w| {
                    w.parse::<f64>().unwrap_or_else(|_| {
                        eprintln!("fake_agent: bad number: {w:?}");
                        std::process::exit(99)
                    })
                });
                let (min, max) = (it.next().unwrap_or(3.0), it.next().unwrap_or(7.0));
                let spin = Duration::from_secs_f64(it.next().unwrap_or(100.0).max(1.0) / 1000.0);
                churn(
                    &base,
                    pane.as_deref().unwrap_or(""),
                    min,
                    max.max(min),
                    spin,
                );
            }
            // claude 2.1.197 at a usage limit, interactively: the banner under the last prompt,
            // its `/rate-limit-options` menu below, alive. The reset is MINUTES from now,
            // up to the next whole minute, in the local zone, written as claude writes it.
            // Then every line typed into it is logged; `continue` clears the banner.
            "claude-limit" => claude_limit(&base, pane.as_deref().unwrap_or(""), num(arg)),
            // claude 2.1.197 in -p mode: an API error as it prints it, then exit 1.
            "claude-error" => {
                let text = match arg {
                    "auth" => "Invalid API key · Fix external API key",
                    "login" => "Not logged in · Please run /login",
                    "overloaded" => "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check https://status.claude.com.",
                    "network" => "API Error: Unable to connect to API (ConnectionRefused)",
                    "limit" => "You've hit your session limit",
                    other => {
                        eprintln!("fake_agent: no claude error {other:?}");
                        std::process::exit(99)
                    }
                };
                println!("{text}");
                remove_state_file();
                std::process::exit(1);
            }
            // node's heap exhausted, as node 20 reports it (stderr), then SIGABRT.
            "node-oom" => {
                eprintln!();
                eprintln!("<--- Last few GCs --->");
                eprintln!();
                eprintln!("[4242:0x7f0000000000]   612345 ms: Mark-Compact 4046.2 (4133.1) -> 4031.0 (4134.8) MB, 1923.21 / 0.00 ms  (average mu = 0.101, current mu = 0.020) allocation failure; scavenge might not succeed");
                eprintln!();
                eprintln!("<--- JS stacktrace --->");
                eprintln!();
                eprintln!("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory");
                eprintln!("----- Native stack trace -----");
                eprintln!();
                std::process::abort();
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
    remove_state_file();
    std::process::exit(0);
}

/// The state file written by the plan's `state` lines, removed when claude exits (as the
/// real one does on exit and SIGTERM; SIGKILL leaves it behind).
static STATE_FILE: std::sync::OnceLock<std::ffi::CString> = std::sync::OnceLock::new();

/// The session the state file names instead of the one on the command line (plan line
/// `session-as <id>`): an agent that came up under another id than it was asked to resume.
static SESSION_AS: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Writes `<claude dir>/sessions/<pid>.json` with `status` (and `waitingFor`), in the real
/// claude's fields: the file appears once claude is past its trust prompt and is rewritten in
/// place on every change.
fn claude_state(arg: &str) {
    let (status, waiting_for) = arg.split_once(' ').unwrap_or((arg, ""));
    let config = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude")))
        .unwrap();
    let dir = config.join("sessions");
    let _ = std::fs::create_dir_all(&dir);
    let pid = std::process::id();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let proc_start = stat[stat.rfind(')').unwrap() + 2..]
        .split(' ')
        .nth(19)
        .unwrap()
        .to_string();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let cwd = std::env::current_dir().unwrap_or_default();
    // The session it runs: the one it was started or resumed with, else a new one.
    let args: Vec<String> = std::env::args().collect();
    let session_id = SESSION_AS
        .get()
        .cloned()
        .or_else(|| flag(&args, &["--session-id"]))
        .or_else(|| flag(&args, &["--resume", "-r"]))
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let mut v = serde_json::json!({
        "pid": pid,
        "sessionId": session_id,
        "cwd": cwd,
        "startedAt": now,
        "procStart": proc_start,
        "version": "2.1.197",
        "kind": "interactive",
        "entrypoint": "cli",
        "status": status,
        "updatedAt": now,
        "statusUpdatedAt": now,
    });
    if !waiting_for.is_empty() {
        v["waitingFor"] = serde_json::Value::from(waiting_for);
    }
    let path = dir.join(format!("{pid}.json"));
    std::fs::write(&path, v.to_string()).unwrap();
    use std::os::unix::ffi::OsStrExt;
    let _ = STATE_FILE.set(std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap());
}

fn remove_state_file() {
    if let Some(p) = STATE_FILE.get() {
        // SAFETY: a NUL-terminated path.
        unsafe { libc::unlink(p.as_ptr()) };
    }
}

fn num(s: &str) -> u64 {
    s.parse().unwrap_or_else(|_| {
        eprintln!("fake_agent: bad number: {s:?}");
        std::process::exit(99)
    })
}

/// See the plan line `claude-limit`. The reset it printed is kept in
/// `limit-<pane>.json` (`resets_at_ms`), and each line typed into it in `typed-<pane>.jsonl`
/// (`{"at_ms", "line"}`), for the tests.
fn claude_limit(base: &Path, pane: &str, minutes: u64) -> ! {
    let now = jiff::ZonedDateTime::now();
    let secs = now.timestamp().as_second() + 60 * minutes as i64;
    let reset = jiff::Timestamp::from_second((secs + 59) / 60 * 60)
        .unwrap()
        .to_zoned_datetime(now.time_zone().clone());
    let (h, m) = (reset.hour(), reset.minute());
    let half = if h < 12 { "am" } else { "pm" };
    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
    let clock = if m == 0 {
        format!("{h12}{half}")
    } else {
        format!("{h12}:{m:02}{half}")
    };
    let zone = now.time_zone().iana_name().unwrap_or("UTC").to_string();
    let key = pane.trim_start_matches('%');
    let _ = std::fs::write(
        base.join(format!("limit-{key}.json")),
        serde_json::json!({ "resets_at_ms": reset.timestamp().as_millisecond() }).to_string(),
    );
    {
        let mut out = std::io::stdout().lock();
        let _ = write!(
            out,
            "\x1b[H\x1b[2J❯ fix the flaky tests\r\n  ⎿ \u{a0}You've hit your session limit · resets {clock} ({zone})\r\n\r\n❯ /rate-limit-options\r\n  What do you want to do?\r\n\r\n  ❯ 1. Stop and wait for limit to reset\r\n    2. Upgrade your plan\r\n\r\n  Enter to confirm · Esc to cancel\r\n"
        );
        let _ = out.flush();
    }
    let typed = base.join(format!("typed-{key}.jsonl"));
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { hang() };
        let line: String = line.chars().filter(|c| !c.is_control()).collect();
        let record = serde_json::json!({
            "at_ms": jiff::Timestamp::now().as_millisecond(),
            "line": line,
        });
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&typed)
        {
            let _ = writeln!(f, "{record}");
        }
        if line == "continue" {
            let mut out = std::io::stdout().lock();
            let _ = write!(
                out,
                "\x1b[H\x1b[2J❯ continue\r\n\r\n✻ Working… (2s · esc to interrupt)\r\n"
            );
            let _ = out.flush();
        }
    }
    hang()
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

/// What an agent's own session store says, as far as the fake keeps one.
enum Session {
    None,
    /// A claude transcript, and the config folder holds it.
    Claude(PathBuf),
    /// A gemini chat file.
    Gemini(PathBuf),
}

impl Session {
    /// Applies the agent's start-up rules: exits as the real CLI would when they fail.
    fn start(name: &str, args: &[String], agent_dir: Option<&Path>) -> Session {
        match name {
            "claude" => claude_start(args),
            "gemini" => gemini_start(args),
            "codex" => {
                codex_start(args);
                Session::None
            }
            "opencode" => {
                if let Some(id) = flag(args, &["-s", "--session"]) {
                    let known =
                        agent_dir.is_some_and(|d| d.join("opencode/sessions").join(&id).exists());
                    if !known {
                        fail(1, &format!("Error: Session not found: {id}"));
                    }
                }
                Session::None
            }
            _ => Session::None,
        }
    }

    /// The user's first message: the session becomes resumable.
    fn message(&self) {
        match self {
            Session::None => {}
            Session::Claude(path) => {
                claude_mode_lines(path);
                let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
                let id = claude_id(path);
                let _ = writeln!(
                    f,
                    "{{\"parentUuid\":null,\"isSidechain\":false,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"hello\"}},\"sessionId\":\"{id}\"}}"
                );
                let _ = writeln!(
                    f,
                    "{{\"isSidechain\":false,\"type\":\"assistant\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"hi\"}}]}},\"sessionId\":\"{id}\"}}"
                );
            }
            Session::Gemini(path) => {
                let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
                let _ = writeln!(
                    f,
                    "{{\"type\":\"user\",\"content\":[{{\"text\":\"hello\"}}]}}"
                );
            }
        }
    }
}

impl Session {
    /// /exit typed at claude's input box: a session that never got a message is left with
    /// its mode lines only; one that did names its resume command.
    fn slash_exit(&self) {
        if let Session::Claude(path) = self {
            let messaged = std::fs::metadata(path).is_ok();
            claude_mode_lines(path);
            if messaged {
                println!(
                    "Resume this session with:\nclaude --resume {}",
                    claude_id(path)
                );
            }
        }
    }
}

/// claude's first two transcript lines, written once (2.1.197: `"permissionMode":"default"`).
fn claude_mode_lines(path: &Path) {
    if path.exists() {
        return;
    }
    let _ = std::fs::create_dir_all(path.parent().unwrap());
    let id = claude_id(path);
    let _ = std::fs::write(
        path,
        format!(
            "{{\"type\":\"mode\",\"mode\":\"normal\",\"sessionId\":\"{id}\"}}\n{{\"type\":\"permission-mode\",\"permissionMode\":\"default\",\"sessionId\":\"{id}\"}}\n"
        ),
    );
}

/// The session id a transcript is named after.
fn claude_id(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Prints the CLI's own words and exits with its code. The real CLIs exit about 0.1 ms after
/// writing them, and tmux 3.3a drops bytes it had not read when it reaps a pane's process
/// (TMUX.md), so a user sometimes never sees them; agentwatch then treats the death as an
/// ordinary crash (covered without tmux in `supervision_tests`). Here the fake lingers so
/// that the tests of what agentwatch does with the words see them every time.
fn fail(code: i32, words: &str) -> ! {
    println!("{words}");
    let _ = std::io::stdout().flush();
    std::thread::sleep(Duration::from_millis(200));
    std::process::exit(code)
}

/// The value of the first of `names` in `args` (`--x v` or `--x=v`).
fn flag(args: &[String], names: &[&str]) -> Option<String> {
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        for n in names {
            if a == n {
                return it.next().cloned();
            }
            if let Some(v) = a.strip_prefix(&format!("{n}=")) {
                return Some(v.to_string());
            }
        }
    }
    None
}

/// The launcher's child (plan line `child`), for a signal handler to pass a signal on to.
static CHILD: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

extern "C" fn pass_on_signal(sig: libc::c_int) {
    if let Some(&pid) = CHILD.get() {
        // SAFETY: kill and _exit are async-signal-safe.
        unsafe { libc::kill(pid as libc::pid_t, sig) };
    }
    // SAFETY: as above.
    unsafe { libc::_exit(128 + sig) }
}

extern "C" fn exit_on_signal(sig: libc::c_int) {
    remove_state_file();
    // SAFETY: _exit is async-signal-safe.
    unsafe { libc::_exit(128 + sig) }
}

fn claude_start(args: &[String]) -> Session {
    // claude handles SIGTERM and SIGHUP and exits with 128+N.
    // SAFETY: the handler only calls _exit.
    unsafe {
        libc::signal(
            libc::SIGTERM,
            exit_on_signal as *const () as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGHUP,
            exit_on_signal as *const () as libc::sighandler_t,
        );
    }
    let config = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude")));
    let Some(config) = config.filter(|c| c.is_dir()) else {
        return Session::None;
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let slug: String = cwd
        .to_string_lossy()
        .encode_utf16()
        .map(|u| {
            char::from_u32(u32::from(u))
                .filter(char::is_ascii_alphanumeric)
                .unwrap_or('-')
        })
        .collect();
    let transcript = |id: &str| {
        config
            .join("projects")
            .join(&slug)
            .join(format!("{id}.jsonl"))
    };
    if let Some(id) = flag(args, &["--resume", "-r"]) {
        let t = transcript(&id);
        let messaged = std::fs::read_to_string(&t).is_ok_and(|text| {
            text.lines().any(|l| {
                serde_json::from_str::<serde_json::Value>(l)
                    .ok()
                    .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned))
                    .is_some_and(|t| t == "user" || t == "assistant")
            })
        });
        if !messaged {
            fail(
                1,
                &format!("No conversation found with session ID: {id}\n\nResume this session with:\nclaude --resume {id}"),
            );
        }
        return Session::Claude(t);
    }
    if let Some(id) = flag(args, &["--session-id"]) {
        if !agentwatch::core::agent::is_uuid(&id) {
            fail(1, "Error: Invalid session ID. Must be a valid UUID.");
        }
        let t = transcript(&id);
        if t.exists() {
            fail(1, &format!("Error: Session ID {id} is already in use."));
        }
        return Session::Claude(t);
    }
    Session::Claude(transcript(&uuid::Uuid::new_v4().to_string()))
}

/// codex 0.171.0's resume rules, kept only with its home present (`$CODEX_HOME`): `codex
/// resume <id>` of a session with no rollout file says `ERROR: No saved session found with
/// ID <id>. …`; one its state lists (here: `threads/<id>` in the home, for its SQLite row)
/// whose rollout is gone fails at bootstrap with `… no rollout found for thread id <id>
/// (code -32600)`; both exit 1.
fn codex_start(args: &[String]) {
    let Some(home) = std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|h| h.is_dir())
    else {
        return;
    };
    if args.get(1).map(String::as_str) != Some("resume") {
        return;
    }
    let Some(id) = args.get(2).filter(|a| !a.starts_with('-')) else {
        return;
    };
    let rollout = find_file(&home.join("sessions"), &format!("-{id}.jsonl"));
    if rollout.is_some() {
        return;
    }
    if home.join("threads").join(id).exists() {
        fail(
            1,
            &format!("Error: Failed to resume session from {}/sessions/2026/12/02/rollout-2026-12-02T05-56-23-{id}.jsonl: thread/resume failed during TUI bootstrap: thread/resume failed: no rollout found for thread id {id} (code -32600)", home.display()),
        );
    }
    fail(
        1,
        &format!("ERROR: No saved session found with ID {id}. Run `codex resume` without an ID to choose from existing sessions."),
    );
}

/// A file under `dir` (any depth) whose name ends with `suffix`.
fn find_file(dir: &Path, suffix: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(f) = find_file(&p, suffix) {
                return Some(f);
            }
        } else if p.to_string_lossy().ends_with(suffix) {
            return Some(p);
        }
    }
    None
}

fn gemini_start(args: &[String]) -> Session {
    let home = std::env::var_os("GEMINI_CLI_HOME")
        .filter(|v| !v.is_empty())
        .or_else(|| std::env::var_os("HOME"))
        .map(|h| PathBuf::from(h).join(".gemini"));
    let Some(home) = home.filter(|h| h.is_dir()) else {
        return Session::None;
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let cwd = cwd.to_string_lossy().into_owned();
    let slug: String = Path::new(&cwd)
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let slug = if slug.is_empty() {
        "project".to_string()
    } else {
        slug
    };
    let chats = home.join("tmp").join(&slug).join("chats");
    let _ = std::fs::create_dir_all(&chats);
    let _ = std::fs::write(
        home.join("projects.json"),
        serde_json::json!({ "projects": { cwd.clone(): slug } }).to_string(),
    );
    let _ = std::fs::write(home.join("tmp").join(&slug).join(".project_root"), &cwd);
    let chat_of = |id: &str| -> Option<PathBuf> {
        let short = id.get(..8)?;
        std::fs::read_dir(&chats)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(&format!("-{short}.jsonl")))
                    && std::fs::read_to_string(p).is_ok_and(|t| t.contains(id))
            })
    };
    let mut id = uuid::Uuid::new_v4().to_string();
    if let Some(want) = flag(args, &["--resume", "-r"]) {
        if want == "latest" || want.bytes().all(|b| b.is_ascii_digit()) {
            // Not an id: gemini warns and goes on as a fresh session.
            println!("No previous sessions found for this project.");
        } else {
            let resumable = chat_of(&want)
                .and_then(|p| std::fs::read_to_string(p).ok())
                .is_some_and(|t| t.contains("\"type\":\"user\""));
            if !resumable {
                fail(
                    42,
                    "Error resuming session: No previous sessions found for this project.",
                );
            }
            id = want;
        }
    } else if let Some(want) = flag(args, &["--session-id"]) {
        if chat_of(&want).is_some() {
            fail(
                42,
                &format!("Error starting session: Session ID \"{want}\" already exists. Use --resume to resume it, or provide a different ID."),
            );
        }
        id = want;
    }
    // Interactive gemini writes its chat at start, before any message.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let path = chats.join(format!("session-{now}-{}.jsonl", &id[..8.min(id.len())]));
    let _ = std::fs::write(
        &path,
        format!("{{\"sessionId\":\"{id}\",\"kind\":\"main\"}}\n"),
    );
    Session::Gemini(path)
}

/// Plan line `churn MIN MAX`: working and waiting phases, alternating forever, each start
/// recorded in `churn.jsonl` (see the file's doc comment).
fn churn(dir: &Path, pane: &str, min: f64, max: f64, spin: Duration) -> ! {
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    // xorshift64, seeded from the pid and the clock (never zero).
    let mut x = (u64::from(std::process::id()) << 32) ^ nanos ^ 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let truth = dir.join("churn.jsonl");
    let record = |phase: &str| {
        let line = format!(
            "{{\"pane\":\"{pane}\",\"phase\":\"{phase}\",\"at_ms\":{}}}\n",
            now_ms()
        );
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&truth)
        {
            // One write per line: the panes' appends never interleave.
            let _ = f.write_all(line.as_bytes());
        }
    };
    const SPINNER: [&str; 6] = ["·", "✢", "✳", "✶", "✻", "✽"];
    let mut out = std::io::stdout().lock();
    let mut frame = 0usize;
    loop {
        // Working: the spinner line redrawn every `spin`, output flowing all the time.
        let start = std::time::Instant::now();
        let len = Duration::from_secs_f64(min + (max - min) * next());
        let _ = write!(out, "\x1b[2J\x1b[H● Running the tests…\r\n\r\n");
        let mut first = true;
        while start.elapsed() < len {
            let _ = write!(
                out,
                "\r\x1b[2K{} Working… ({}s · esc to interrupt)",
                SPINNER[frame % SPINNER.len()],
                start.elapsed().as_secs()
            );
            let _ = out.flush();
            frame += 1;
            if first {
                record("working");
                first = false;
            }
            let left = len.saturating_sub(start.elapsed());
            std::thread::sleep(left.min(spin));
        }
        // Waiting: claude's permission prompt, then silence.
        let len = Duration::from_secs_f64(min + (max - min) * next());
        let _ = write!(
            out,
            "\x1b[2J\x1b[H\
             ╭──────────────────────────────────────────────────────────────╮\r\n\
             │ Bash command                                                 │\r\n\
             │                                                              │\r\n\
             │   ls -la                                                     │\r\n\
             │   List the files                                             │\r\n\
             │                                                              │\r\n\
             │ Do you want to proceed?                                      │\r\n\
             │ ❯ 1. Yes                                                     │\r\n\
             │   2. No, and tell Claude what to do differently (esc)        │\r\n\
             ╰──────────────────────────────────────────────────────────────╯\r\n"
        );
        let _ = out.flush();
        let start = std::time::Instant::now();
        record("waiting");
        std::thread::sleep(len.saturating_sub(start.elapsed()));
    }
}
