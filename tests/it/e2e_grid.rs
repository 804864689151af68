//! End to end: the real agentwatch binary in a pane of a second private tmux server,
//! watching the first one, read back with capture-pane as a person would see it.

use std::time::Duration;

use crate::support::{TmuxServer, WAIT};

fn agentwatch() -> &'static str {
    env!("CARGO_BIN_EXE_agentwatch")
}

#[test]
fn a_crash_shows_its_banner_with_the_exit_code_within_a_second_or_so() {
    let server = TmuxServer::start();
    server.write_plan(
        "claude",
        "say thinking hard\nwait go\nsay fatal: out of tokens\nsleep 100\nexit 3\n",
    );
    let pane = server.new_window(&["claude"]);
    let sock = server.socket.to_string_lossy().into_owned();
    let ui = server.start_ui(100, 30, &[agentwatch(), "-S", &sock]);
    let screen = ui.wait_for_text("● running", *WAIT);
    assert!(
        screen.contains("claude · main:1.0 ") && screen.contains(&format!(" · {pane} ")),
        "{screen}"
    );
    assert!(screen.contains("1 running · 0 dead"), "{screen}");

    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    // Why first: its last words hold an error line (`fatal:`), so it is a crash.
    let screen = ui.wait_for_text("✖ crash · process exited (code 3)", *WAIT);
    assert!(screen.contains("0 running · 1 dead"), "{screen}");
    let screen = ui.wait_for_text("fatal: out of tokens", *WAIT);
    // The banner is in the alarm colours (white on red).
    let ansi = ui.screen_ansi();
    let line = ansi
        .lines()
        .find(|l| l.contains("process exited (code 3)"))
        .unwrap();
    assert!(
        line.contains("\x1b[1m") || line.contains(";1m"),
        "banner is bold: {line:?}"
    );
    assert!(
        line.contains("41m") || line.contains("48;5;1m"),
        "banner is on red: {line:?}\n{screen}"
    );

    // Help opens at once and closes; q quits and leaves the terminal usable.
    ui.send_keys(&["?"]);
    ui.wait_for_text("keys · Esc or ? closes", *WAIT);
    ui.send_keys(&["Escape"]);
    ui.wait_for("help closed", *WAIT, |s| !s.contains("keys · Esc"));
    ui.send_keys(&["q"]);
    assert_eq!(ui.wait_exit(*WAIT), "status 0");
}

#[test]
fn at_80x24_a_killed_agent_and_a_finished_one_are_both_readable() {
    let server = TmuxServer::start();
    server.write_plan("codex", "wait go\nsignal 9\n");
    server.write_plan("gemini", "wait go\nexit 0\n");
    server.new_window(&["codex"]);
    server.new_window(&["gemini"]);
    let sock = server.socket.to_string_lossy().into_owned();
    let ui = server.start_ui(80, 24, &[agentwatch(), "-S", &sock]);
    ui.wait_for_text("2 running", *WAIT);
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    let screen = ui.wait_for_text("killed by signal 9 (SIGKILL)", *WAIT);
    let screen = if screen.contains("process exited (code 0)") {
        screen
    } else {
        ui.wait_for_text("process exited (code 0)", *WAIT)
    };
    assert!(screen.contains("1 dead · 1 finished"), "{screen}");
    assert!(screen.lines().count() <= 24);
}

#[test]
fn a_bad_config_is_a_one_line_error_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "tick_ms = 500\nretain_ded = true\n").unwrap();
    let out = std::process::Command::new(agentwatch())
        .arg("-c")
        .arg(&cfg)
        .arg("-S")
        .arg(dir.path().join("none.sock"))
        .env_remove("TMUX")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}:2:1: retain_ded: unknown field `retain_ded`",
            cfg.display()
        )),
        "{err}"
    );
}

#[test]
fn the_readme_popup_binding_opens_the_dashboard_over_a_window_on_the_same_server() {
    let server = TmuxServer::start();
    // The popup runs in the server's environment: the test's XDG dirs, never the user's.
    for (k, v) in server.agentwatch_env() {
        server.tmux_ok(&["set-environment", "-g", &k, &v]);
    }
    // A server started from a pane (of another server, or of itself) keeps that pane's
    // $TMUX_PANE in its global environment, and hands it to every popup: not where
    // agentwatch is.
    server.tmux_ok(&["set-environment", "-g", "TMUX_PANE", "%0"]);
    server.write_plan("claude", "hang\n");
    let pane = server.new_window(&["claude"]);
    // The README's line, with this build's binary for `agentwatch`.
    server.tmux_ok(&[
        "bind-key",
        "A",
        "display-popup",
        "-E",
        "-w",
        "90%",
        "-h",
        "90%",
        agentwatch(),
    ]);
    // A person's terminal: a client attached to the agents' server, in a pane of the second.
    let sock = server.socket.to_string_lossy().into_owned();
    let ui = server.start_ui(
        100,
        30,
        &["tmux", "-S", &sock, "attach-session", "-t", "main:0"],
    );
    ui.wait_for("the client to attach", *WAIT, |s| !s.trim().is_empty());
    ui.send_keys(&["C-b", "A"]);
    // No -L or -S: the popup's $TMUX names the server it is drawn on.
    let screen = ui.wait_for_text("● running", *WAIT);
    assert!(
        screen.contains(&format!(" · {pane} ")) && screen.contains(&sock),
        "{screen}"
    );
    // q quits agentwatch, and -E closes the popup with it.
    ui.send_keys(&["q"]);
    ui.wait_for("the popup to close", *WAIT, |s| !s.contains("● running"));
    // What the person's client shows (agentwatch's own control client shows nothing).
    let shown = || {
        let out = server.tmux_ok(&["list-clients", "-F", "#{?client_control_mode,,#{pane_id}}"]);
        out.lines()
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_ne!(shown(), pane, "the client still shows its own window");

    // g in the popup (which has no pane of its own): the client that opened it goes to the
    // agent's pane, and the popup, which would hide it, closes.
    ui.send_keys(&["C-b", "A"]);
    ui.wait_for_text("● running", *WAIT);
    ui.send_keys(&["g"]);
    let screen = ui.wait_for("the popup to close", *WAIT, |s| !s.contains("● running"));
    assert!(!screen.contains("could not go"), "{screen}");
    assert_eq!(shown(), pane);
}

/// Nothing redraws a dead pane: a window made smaller pushes its top lines, here the last
/// words, into tmux's history. The card keeps showing them.
#[test]
fn a_dead_agents_last_words_stay_on_its_card_after_its_window_shrinks() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan(
        "claude",
        "say line one\nsay Error: 529 Overloaded\nsleep 300\nexit 1\n",
    );
    let pane = server.new_window(&["claude"]);
    server.wait_pane_exit(&pane, *WAIT);
    let sock = server.socket.to_string_lossy().into_owned();
    let ui = server.start_ui(100, 30, &[agentwatch(), "-S", &sock]);
    ui.wait_for_text("Error: 529 Overloaded", *WAIT);
    server.tmux_ok(&["resize-window", "-t", &pane, "-x", "120", "-y", "12"]);
    assert_ne!(
        server.pane_field(&pane, "#{history_size}"),
        "0",
        "the words went into the history"
    );
    // Read again (its history changed) a tick or two later, and the words kept all along: a
    // span, not a wait, as nothing marks the read that could lose them.
    crate::support::holds_for(
        "the card shows the last words",
        Duration::from_secs(3),
        || ui.settled_screen().contains("Error: 529 Overloaded"),
    );
    let screen = ui.wait_for_text("process exited (code 1)", *WAIT);
    assert!(screen.contains("Error: 529 Overloaded"), "{screen}");
}
