//! The scriptable surface against real tmux: status (table, JSON, exit codes, `--all`), events
//! (follow sees a death that happens after it started), doctor, completions and man (its KEYS
//! from the key table), and the on_death hook and the bell.

use crate::support;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{TmuxServer, WAIT};

fn aw(server: &TmuxServer, args: &[&str]) -> std::process::Output {
    let mut cmd = server.agentwatch();
    let home = server.dir.path().to_string_lossy().into_owned();
    cmd.env("XDG_STATE_HOME", format!("{home}/state"))
        .env("XDG_DATA_HOME", format!("{home}/data"))
        .env("XDG_CONFIG_HOME", format!("{home}/config"))
        .env("HOME", &home)
        .arg("-S")
        .arg(&server.socket)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn status_json_lists_live_dead_and_finished_agents_and_exits_1_when_one_is_dead() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan("claude", "hang\n");
    server.write_plan("codex", "exit 3\n");
    server.write_plan("gemini", "exit 0\n");
    let live = server.new_window(&[
        "claude",
        "--session-id",
        "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11",
    ]);
    let dead = server.new_window(&["codex"]);
    let done = server.new_window(&["gemini"]);
    server.wait_pane_exit(&dead, *WAIT);
    server.wait_pane_exit(&done, *WAIT);
    let out = aw(&server, &["status", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 3);
    let row = |p: &str| rows.iter().find(|r| r["pane_id"] == p).unwrap().clone();
    let keys = [
        "pane_id",
        "target",
        "window_name",
        "agent",
        "state",
        "exit_code",
        "signal",
        "session_id",
        "cwd",
        "attempts",
        "died_at",
    ];
    for r in &rows {
        let obj = r.as_object().unwrap();
        for k in keys {
            assert!(obj.contains_key(k), "{k} missing in {r}");
        }
    }
    // Quiet, with no prompt and no `esc to interrupt` on its screen: at its input box.
    assert_eq!(row(&live)["state"], "idle");
    assert_eq!(
        row(&live)["session_id"],
        "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11"
    );
    assert_eq!(row(&live)["died_at"], serde_json::Value::Null);
    assert_eq!(row(&dead)["state"], "exited");
    assert_eq!(row(&dead)["exit_code"], 3);
    assert_eq!(row(&dead)["agent"], "codex");
    assert!(row(&dead)["died_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(row(&done)["state"], "finished");
    assert_eq!(row(&done)["exit_code"], 0);

    let table = aw(&server, &["status"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.starts_with("PANE"), "{text}");
    assert!(
        text.contains("exited") && text.contains("finished") && text.contains("idle"),
        "{text}"
    );
    // status is read-only: it set nothing on the panes.
    assert_eq!(server.pane_field(&live, "#{@agentwatch_agent}"), "");

    server.tmux_ok(&["kill-pane", "-t", &dead]);
    assert_eq!(
        aw(&server, &["status"]).status.code(),
        Some(0),
        "nothing dead any more"
    );
    server.tmux_ok(&["kill-server"]);
    let out = aw(&server, &["status"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no tmux server running on"), "{err}");
}

/// A server that is exiting still takes a connection and closes it at once (tmux's
/// `server_accept` after `kill-server`); its client says "server exited unexpectedly". CI
/// caught `status` right after a `kill-server` saying that as an unknown tmux failure.
#[test]
fn a_server_that_closes_the_connection_as_it_exits_is_no_server() {
    let server = TmuxServer::start();
    server.tmux_ok(&["kill-server"]);
    let _ = std::fs::remove_file(&server.socket);
    let listener = std::os::unix::net::UnixListener::bind(&server.socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = done.clone();
    let closer = std::thread::spawn(move || {
        let mut taken = 0;
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            match listener.accept() {
                Ok((conn, _)) => {
                    drop(conn);
                    taken += 1;
                }
                // Not a wait: the pace of this accept loop, which must also see `stop`.
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        taken
    });
    let out = aw(&server, &["status"]);
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no tmux server running on"), "{err}");
    let _ = std::fs::remove_file(&server.socket);
    assert!(closer.join().unwrap() >= 1, "status never connected");
}

#[test]
fn status_all_lists_plain_panes_wherever_all_is_written_and_their_deaths_exit_0() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan("claude", "hang\n");
    let agent = server.new_window(&["claude"]);
    let shell = server.new_window(&["sh"]);
    let gone = server.new_window(&["sh", "-c", "exit 3"]);
    server.wait_pane_exit(&gone, *WAIT);
    let ids = |out: &std::process::Output| -> Vec<String> {
        let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        rows.iter()
            .map(|r| r["pane_id"].as_str().unwrap().to_string())
            .collect()
    };
    let only_agents = aw(&server, &["status", "--json"]);
    assert_eq!(ids(&only_agents), vec![agent.clone()]);
    for args in [["status", "--all", "--json"], ["--all", "status", "--json"]] {
        let out = aw(&server, &args);
        // A dead pane with no agent is no crash: exit 0.
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        let row = |p: &str| {
            rows.iter()
                .find(|r| r["pane_id"] == p)
                .unwrap_or_else(|| panic!("{args:?}: no row for {p}: {rows:?}"))
                .clone()
        };
        assert_eq!(row(&shell)["agent"], serde_json::Value::Null, "{args:?}");
        assert_eq!(row(&shell)["state"], "running", "{args:?}");
        assert_eq!(row(&shell)["command"], "sh", "{args:?}");
        assert_eq!(row(&gone)["state"], "exited", "{args:?}");
        assert_eq!(row(&gone)["exit_code"], 3, "{args:?}");
        assert_eq!(row(&agent)["agent"], "claude", "{args:?}");
        assert_eq!(row(&agent)["command"], "claude", "{args:?}");
    }
    let table = aw(&server, &["status", "--all"]);
    let text = String::from_utf8_lossy(&table.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{shell} ")))
        .unwrap();
    assert!(line.contains(" -  ") && line.contains("running"), "{text}");
}

#[test]
fn status_into_a_pipe_nobody_reads_still_exits_with_its_code() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan("codex", "exit 3\n");
    let dead = server.new_window(&["codex"]);
    server.wait_pane_exit(&dead, *WAIT);
    // `agentwatch status --json | true`: the reader is gone before the command writes.
    let into_nothing = |args: &[&str]| {
        let mut child = server
            .agentwatch_command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        (out.status.code(), err)
    };
    let (code, err) = into_nothing(&["status", "--json"]);
    assert_eq!(code, Some(1), "{err}");

    // Every other command that prints, the same way: its work done, its code kept.
    let before = server.tmux_ok(&["list-panes", "-a", "-F", "#{pane_id}"]);
    let (code, err) = into_nothing(&["spawn", "claude", "--cwd", "/tmp"]);
    assert_eq!(code, Some(0), "{err}");
    let after = server.tmux_ok(&["list-panes", "-a", "-F", "#{pane_id}"]);
    assert_eq!(after.lines().count(), before.lines().count() + 1, "{after}");
    let (code, err) = into_nothing(&["doctor"]);
    assert!(matches!(code, Some(0) | Some(1)), "{code:?} {err}");
    for args in [
        &["shell-init", "bash"][..],
        &["man"],
        &["man", "status"],
        &["completions", "bash"],
    ] {
        let (code, err) = into_nothing(args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
}

/// One journal for every server: `-S` shows that server's events (and the hosts'), and
/// without it another server's events say which server they are from.
#[test]
fn events_with_a_server_named_show_its_own_and_without_name_the_others() {
    let server = TmuxServer::start();
    let home = server.dir.path().to_string_lossy().into_owned();
    let here = server.socket.to_string_lossy().into_owned();
    let journal = format!("{home}/state/agentwatch/journal.jsonl");
    std::fs::create_dir_all(format!("{home}/state/agentwatch")).unwrap();
    let line = |pane: &str, server: Option<&str>, host: Option<&str>| {
        let mut v = serde_json::json!({"ts": 1_800_000_000_000u64, "event": "died", "pane": pane});
        if let Some(s) = server {
            v["server"] = s.into();
        }
        if let Some(h) = host {
            v["host"] = h.into();
        }
        format!("{v}\n")
    };
    std::fs::write(
        &journal,
        [
            line("%1", Some(&here), None),
            line("%2", Some("/tmp/elsewhere/nope.sock"), None),
            line("%3", None, Some("box")),
        ]
        .concat(),
    )
    .unwrap();
    let out = aw(&server, &["events"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("  %1"), "{text}");
    assert!(text.contains("box %3"), "{text}");
    assert!(!text.contains("%2"), "another server's: {text}");
    let json = aw(&server, &["events", "--json"]);
    assert_eq!(String::from_utf8_lossy(&json.stdout).lines().count(), 2);
    // Without -S: every server's, the other one named.
    let mut cmd = server.agentwatch();
    let all = cmd
        .env("XDG_STATE_HOME", format!("{home}/state"))
        .env("HOME", &home)
        .arg("events")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&all.stdout);
    assert!(text.contains("on /tmp/elsewhere/nope.sock  %2"), "{text}");
    assert!(text.contains(&format!("on {here}  %1")), "{text}");
}

#[test]
fn events_follow_sees_a_death_after_it_started_and_the_hook_gets_json_once() {
    let server = TmuxServer::start();
    server.write_plan("claude", "wait go\nexit 1\n");
    let pane = server.new_window(&["claude"]);
    let home = server.dir.path().to_string_lossy().into_owned();
    let hook_out = format!("{home}/hook.jsonl");
    let hook = server.dir.path().join("hook.sh");
    std::fs::write(&hook, format!("#!/bin/sh\ncat >> '{hook_out}'\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cfg = server.dir.path().join("cfg.toml");
    std::fs::write(
        &cfg,
        format!(
            "[notify]\non_death = [\"{}\"]\n[auto_resume]\nenabled = false\n",
            hook.display()
        ),
    )
    .unwrap();

    let mut follow = server.agentwatch();
    let mut follow = follow
        .env("XDG_STATE_HOME", format!("{home}/state"))
        .args(["events", "--follow", "--json"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let sock = server.socket.to_string_lossy().into_owned();
    let ui = server.start_ui_env(
        100,
        30,
        &[
            ("XDG_STATE_HOME", &format!("{home}/state")),
            ("XDG_DATA_HOME", &format!("{home}/data")),
        ],
        &[
            env!("CARGO_BIN_EXE_agentwatch"),
            "-S",
            &sock,
            "-c",
            cfg.to_str().unwrap(),
        ],
    );
    ui.wait_for_text("● running", *WAIT);
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    ui.wait_for_text("process exited (code 1)", *WAIT);

    // The death, after what the agent was doing (working, idle) as it happened.
    let mut lines = BufReader::new(follow.stdout.take().unwrap()).lines();
    let ev = loop {
        let line = lines.next().unwrap().unwrap();
        let ev: serde_json::Value = serde_json::from_str(&line).unwrap();
        if !["working", "waiting", "idle"].contains(&ev["event"].as_str().unwrap_or_default()) {
            break ev;
        }
    };
    assert_eq!(ev["event"], "died");
    assert_eq!(ev["pane"], pane);
    assert_eq!(ev["exit_code"], 1);
    let _ = follow.kill();
    let _ = follow.wait();

    support::wait_until("the hook ran", *WAIT, || {
        std::fs::read_to_string(&hook_out).is_ok_and(|t| t.lines().count() == 1)
    });
    // A span, not a wait: nothing marks the end of "never a second time".
    support::holds_for("the hook ran once", Duration::from_millis(1500), || {
        std::fs::read_to_string(&hook_out).is_ok_and(|t| t.lines().count() == 1)
    });
    let got = std::fs::read_to_string(&hook_out).unwrap();
    assert_eq!(got.lines().count(), 1, "once per death: {got}");
    let ev: serde_json::Value = serde_json::from_str(got.trim()).unwrap();
    assert_eq!(ev["event"], "died");
    assert_eq!(ev["agent"], "claude");
    // The bell rang in the terminal agentwatch runs in.
    assert_eq!(
        ui.tmux_ok(&[
            "display-message",
            "-p",
            "-t",
            &ui.pane,
            "#{window_bell_flag}"
        ])
        .trim(),
        "1"
    );

    let human = aw(&server, &["events", "--since", "1h"]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("died") && text.contains("process exited (code 1)"),
        "{text}"
    );
    let bad = aw(&server, &["events", "--since", "soon"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn doctor_on_a_healthy_server_and_on_a_missing_one() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let out = aw(&server, &["spawn", "claude"]);
    assert!(out.status.success());
    let out = aw(&server, &["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("✔ server: reachable at"), "{text}");
    assert!(text.contains("✔ agents: 1 agent pane found"), "{text}");
    assert!(text.contains("✔ exit-empty: off"), "{text}");
    assert!(text.contains("✔ transport: control mode works"), "{text}");
    assert!(
        text.contains("✔ agent claude:") && text.contains("(claude 0.0.0 (fake agent))"),
        "{text}"
    );
    assert!(
        text.contains("! shell integration: not installed") && text.contains("fix: add to ~/."),
        "{text}"
    );
    // Nothing failed, but warnings were given: not "all good".
    let warnings = text.lines().filter(|l| l.starts_with("! ")).count();
    let counted = if warnings == 1 {
        "1 warning".to_string()
    } else {
        format!("{warnings} warnings")
    };
    assert!(
        text.ends_with(&format!("works; {counted} above (!) worth a look\n")),
        "{text}"
    );

    server.tmux_ok(&["kill-server"]);
    // kill-server returns before the server has finished exiting.
    server.wait_until("the server is gone", *WAIT, || {
        String::from_utf8_lossy(&server.tmux(&["list-sessions"]).stderr)
            .contains("no server running")
    });
    let out = aw(&server, &["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("✖ server: no tmux server running on"),
        "{text}"
    );
    assert!(text.contains("fix: start tmux"), "{text}");
}

#[test]
fn doctor_says_plainly_that_an_agent_missing_from_path_is_not_installed() {
    let server = TmuxServer::start();
    // PATH with tmux and claude only: every other agent is missing, whatever this machine has.
    let only = server.dir.path().join("only");
    std::fs::create_dir_all(&only).unwrap();
    let tmux = support::tmux_program();
    let tmux = agentwatch::adapters::which::find_program(&tmux.to_string_lossy()).unwrap();
    std::os::unix::fs::symlink(tmux, only.join("tmux")).unwrap();
    std::os::unix::fs::symlink(support::fake_agent_path(), only.join("claude")).unwrap();
    let mut cmd = server.agentwatch_command(&["doctor"]);
    let home = server.dir.path().to_string_lossy().into_owned();
    cmd.env("PATH", &only)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", format!("{home}/config"));
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "nothing to fix: {text}");
    assert!(
        text.contains("✔ agent claude: ") && text.contains("(claude 0.0.0 (fake agent))"),
        "{text}"
    );
    let config = agentwatch::config::Config::default();
    let agents = config.agents();
    let missing: Vec<_> = agents.all().iter().filter(|d| d.name != "claude").collect();
    assert!(missing.len() >= 5, "{missing:?}");
    for def in missing {
        let line = format!(
            "- agent {}: not installed ({} not found on PATH)\n",
            def.name, def.start[0]
        );
        assert!(text.contains(&line), "{line:?} missing:\n{text}");
    }
}

#[test]
fn completions_and_the_man_page_are_printed() {
    // agentwatch prints each shell's completion script itself: no shell is run here, so
    // none needs to be installed (the snippets run in real shells in shell_tmux.rs).
    let home = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = support::agentwatch_in(home.path())
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("agentwatch") && text.contains("spawn"),
            "{shell}"
        );
    }
    let out = support::agentwatch_in(home.path())
        .arg("man")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(".TH agentwatch") && text.contains("socket\\-path"),
        "{text}"
    );
}

/// Text as it stands in the man page's roff: `\\` doubled, `-` escaped, `'` as the
/// apostrophe string, and every character past ASCII as groff's `\[uXXXX]`.
fn roff_text(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '-' => out.push_str("\\-"),
            '\'' => out.push_str("\\*(Aq"),
            c if c.is_ascii() => out.push(c),
            c => out.push_str(&format!("\\[u{:04X}]", u32::from(c))),
        }
    }
    out
}

/// The main page names agentwatch-status(1) and the others; `agentwatch man status` is that
/// page, with the command's own options, and a command that is not one is said with the list.
#[test]
fn each_command_named_in_the_man_page_has_a_page_of_its_own() {
    let home = tempfile::tempdir().unwrap();
    let man = |args: &[&str]| {
        support::agentwatch_in(home.path())
            .arg("man")
            .args(args)
            .output()
            .unwrap()
    };
    let main = String::from_utf8(man(&[]).stdout).unwrap();
    let cmd = <agentwatch::cli::Cli as clap::CommandFactory>::command();
    let names: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect();
    assert!(names.len() >= 8, "{names:?}");
    for name in &names {
        assert!(
            main.contains(&format!("agentwatch\\-{}(1)", name.replace('-', "\\-"))),
            "{name} not named in the main page"
        );
        let out = man(&[name]);
        let page = String::from_utf8(out.stdout).unwrap();
        assert!(out.status.success(), "{name}");
        assert!(
            page.contains(&format!(".TH agentwatch-{name} 1")),
            "{name}:\n{page}"
        );
        assert!(page.contains(".SH SYNOPSIS\n"), "{name}:\n{page}");
        assert!(page.contains("\\fBagentwatch\\fR(1)"), "{name}:\n{page}");
    }
    let status = String::from_utf8(man(&["status"]).stdout).unwrap();
    assert!(status.contains("\\fB\\-\\-json\\fR"), "{status}");
    let spawn = String::from_utf8(man(&["spawn"]).stdout).unwrap();
    assert!(spawn.contains("\\-\\-host"), "{spawn}");
    let out = man(&["nope"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no command \"nope\": the commands are ") && err.contains("status"),
        "{err}"
    );
}

#[test]
fn the_man_page_has_keys_files_environment_and_exit_status_with_every_key_of_the_table() {
    let home = tempfile::tempdir().unwrap();
    let out = support::agentwatch_in(home.path())
        .arg("man")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for section in [
        ".SH KEYS\n",
        ".SH \"EXIT STATUS\"\n",
        ".SH ENVIRONMENT\n",
        ".SH FILES\n",
    ] {
        assert!(text.contains(section), "{section} missing:\n{text}");
    }
    // Every row of the one key table, however many there are by now.
    use agentwatch::core::keymap::{GRID, LOST, PEEK};
    for b in GRID.iter().chain(PEEK).chain(LOST) {
        let row = format!("\\fB{}\\fR\n{}\n", roff_text(b.label), roff_text(b.help));
        assert!(text.contains(&row), "key {:?} missing:\n{text}", b.label);
    }
    for file in ["config.toml", "journal.jsonl", "agentwatch.log", "crashes/"] {
        assert!(text.contains(file), "{file} missing");
    }
    for var in [
        "AGENTWATCH_CONFIG",
        "NO_COLOR",
        "TMUX",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
    ] {
        assert!(
            text.contains(&format!("\\fB{}\\fR", roff_text(var))),
            "{var} missing"
        );
    }
    // troff reads its input as Latin-1 unless preconv runs first: the page is ASCII.
    assert!(text.is_ascii());
}

#[test]
fn the_dashboard_and_the_demo_without_a_terminal_say_what_to_run_and_start_nothing() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let pane = server.new_window(&["claude"]);
    let tmp = server.dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    for args in [&[][..], &["demo"][..]] {
        // Standard output a pipe, as from cron or `agentwatch | less`.
        let out = server
            .agentwatch_command(args)
            .env("TMPDIR", &tmp)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("needs a terminal")
                && err.contains("agentwatch status")
                && err.contains("agentwatch daemon")
                && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "nothing drawn into the pipe");
    }
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "the demo made no directory and started no server"
    );
    assert_eq!(
        server.pane_field(&pane, "#{@agentwatch_state}"),
        "",
        "the dashboard touched no pane"
    );
}

#[test]
fn spawn_refuses_a_target_tmux_cannot_address_before_starting_anything() {
    let server = TmuxServer::start();
    let before = server.tmux_ok(&["list-panes", "-a", "-F", "#{pane_id}"]);
    let out = aw(&server, &["spawn", "claude", "--target", "a:b.c"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--target \"a:b.c\""), "{err}");
    assert!(out.stdout.is_empty());
    let after = server.tmux_ok(&["list-panes", "-a", "-F", "#{pane_id}"]);
    assert_eq!(before, after, "nothing was started");
    assert!(server.log_entries().is_empty());
}

/// A 64 KiB tmpfs at `dir`, full; `None` (with a printed notice) where mounting is not
/// allowed.
fn full_disk(dir: &std::path::Path) -> Option<()> {
    std::fs::create_dir_all(dir).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(dir)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("notice: skipped: cannot mount a small tmpfs here (needs root)");
        return None;
    }
    std::fs::create_dir_all(dir.join("state/agentwatch")).unwrap();
    // Fill it: the write fails once no block is left.
    let _ = std::fs::write(dir.join("fill"), vec![0u8; 128 * 1024]);
    Some(())
}

#[test]
fn on_a_full_disk_doctor_fails_the_journal_and_a_cut_append_does_not_lose_the_next() {
    let server = TmuxServer::start();
    let disk = server.dir.path().join("full");
    if full_disk(&disk).is_none() {
        return;
    }
    let mut cmd = server.agentwatch();
    let out = cmd
        .env("XDG_STATE_HOME", disk.join("state"))
        .arg("-S")
        .arg(&server.socket)
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let journal_line = text
        .lines()
        .find(|l| l.contains(" journal: "))
        .unwrap_or_default();
    // Checked before unmounting, so that a failure still cleans up.
    let journal = disk.join("state/agentwatch/journal.jsonl");
    let e = agentwatch::core::msg::Event {
        ts: 1,
        event: "died".into(),
        pane: "%1".into(),
        ..Default::default()
    };
    let failed = agentwatch::adapters::store::journal::append(&journal, &e).is_err();
    let _ = std::fs::remove_file(disk.join("fill"));
    let after = agentwatch::adapters::store::journal::append(&journal, &e);
    let read = agentwatch::adapters::store::journal::read(&journal);
    let probes: Vec<_> = std::fs::read_dir(disk.join("state/agentwatch"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with(".doctor"))
        .collect();
    let _ = Command::new("umount").arg(&disk).status();
    assert!(journal_line.starts_with("✖ journal"), "{text}");
    assert!(
        journal_line.contains("No space left on device"),
        "{journal_line}"
    );
    assert!(probes.is_empty(), "doctor cleans up its probe: {probes:?}");
    assert!(failed, "an append to a full disk fails (and is said)");
    after.unwrap();
    assert_eq!(read, vec![e], "the event after the failed one is kept");
}

#[test]
fn a_death_journaled_after_a_cut_line_is_in_events_and_printed_without_raw_escapes() {
    let server = TmuxServer::start();
    let home = server.dir.path().to_string_lossy().into_owned();
    let journal = std::path::PathBuf::from(format!("{home}/state/agentwatch/journal.jsonl"));
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    // The last write before was cut mid-line (a crash, a full disk).
    std::fs::write(&journal, b"{\"ts\":1,\"event\":\"resumed\",\"pa").unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let died = agentwatch::core::msg::Event {
        ts: now,
        event: "died".into(),
        pane: "%4".into(),
        target: Some("s\u{1b}]0;pwned\u{7}:0.0".into()),
        detail: Some("process exited (code 1)".into()),
        exit_code: Some(1),
        ..Default::default()
    };
    agentwatch::adapters::store::journal::append(&journal, &died).unwrap();
    let out = aw(&server, &["events", "--since", "1h"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("died") && text.contains("%4"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
}
