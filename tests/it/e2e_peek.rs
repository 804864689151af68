//! End to end: peek at a dead pane's 5000 coloured lines, the crash record after a relaunch,
//! closing a dead pane, and the jump to a pane.

use crate::support;

use crate::support::{TmuxServer, UiServer, WAIT};

fn ui(server: &TmuxServer, extra: &[(&str, &str)]) -> UiServer {
    let home = server.dir.path().to_string_lossy().into_owned();
    let (data, state) = (format!("{home}/data"), format!("{home}/state"));
    let cfg = server.dir.path().join("no-auto.toml");
    std::fs::write(&cfg, "[auto_resume]\nenabled = false\n").unwrap();
    let sock = server.socket.to_string_lossy().into_owned();
    let mut env = vec![
        ("XDG_DATA_HOME", data.as_str()),
        ("XDG_STATE_HOME", state.as_str()),
    ];
    env.extend_from_slice(extra);
    server.start_ui_env(
        100,
        30,
        &env,
        &[
            env!("CARGO_BIN_EXE_agentwatch"),
            "-S",
            &sock,
            "-c",
            cfg.to_str().unwrap(),
        ],
    )
}

#[test]
fn peek_shows_the_last_words_and_g_the_first_retained_line_and_the_record_survives_r() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan(
        "claude",
        "print 5000\nsleep 300\nsay \x1b[1;31mFATAL: out of memory\x1b[0m\nsleep 100\nexit 1\n---\nsay back\nhang\n",
    );
    let pane = server.new_window(&[
        "claude",
        "--session-id",
        "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11",
    ]);
    server.wait_pane_exit(&pane, *WAIT);
    let first_retained = server
        .capture_all(&pane)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap()
        .to_string();
    assert!(first_retained.starts_with("line "), "{first_retained}");
    assert_ne!(
        first_retained, "line 1",
        "tmux's history limit drops the oldest lines"
    );

    let ui = ui(&server, &[]);
    ui.wait_for_text("process exited (code 1)", *WAIT);
    ui.send_keys(&["p"]);
    // The card's preview shows the last words too: wait for the peek view's own title.
    let screen = ui.wait_for("the peek view with the last words", *WAIT, |s| {
        s.lines()
            .next()
            .is_some_and(|l| l.starts_with(" claude · "))
            && s.contains("FATAL: out of memory")
            && !s.contains("reading the pane's output")
    });
    let rows: Vec<&str> = screen.lines().collect();
    assert!(
        rows[0].contains("claude") && rows[0].contains("process exited (code 1)"),
        "{}",
        rows[0]
    );
    assert!(
        rows[rows.len() - 2].contains("FATAL: out of memory"),
        "last words at the bottom:\n{screen}"
    );
    assert!(rows[rows.len() - 3].contains("line 5000"), "{screen}");
    let ansi = ui.screen_ansi();
    let fatal = ansi.lines().find(|l| l.contains("FATAL")).unwrap();
    assert!(
        fatal.contains("31m") || fatal.contains("38;5;1m") || fatal.contains("91m"),
        "red kept: {fatal:?}"
    );

    ui.send_keys(&["g"]);
    let screen = ui.wait_for(&format!("{first_retained} at the top"), *WAIT, |s| {
        s.lines()
            .nth(1)
            .is_some_and(|l| l.trim_end() == first_retained)
    });
    assert!(screen.contains("lines 1-"), "{screen}");

    ui.send_keys(&["/"]);
    ui.send_text("line 4999");
    ui.send_keys(&["Enter"]);
    ui.wait_for_text("1 line matches \"line 4999\"", *WAIT);

    // Back to the grid, relaunch, and the crash record holds the last line.
    ui.send_keys(&["Escape"]);
    // The grid's footer (the peek view's has no filter).
    ui.wait_for_text("r relaunch  s start  / filter", *WAIT);
    ui.send_keys(&["r"]);
    ui.wait_for_text("resumed 0e6a1c1e", *WAIT);
    let dir = server.dir.path().join("data/agentwatch/crashes");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1);
    let record = std::fs::read_to_string(files[0].path()).unwrap();
    assert!(record.contains("FATAL: out of memory") && record.contains("line 5000"));
    ui.wait_for_text("previous: exit 1", *WAIT);
    // The record is one [ away in the peek view.
    ui.send_keys(&["p"]);
    ui.wait_for_text("live snapshot at", *WAIT);
    ui.send_keys(&["["]);
    let screen = ui.wait_for_text("crash record 1/1: process exited (code 1)", *WAIT);
    assert!(screen.contains("FATAL: out of memory"), "{screen}");
    ui.send_keys(&["]"]);
    ui.wait_for_text("live snapshot at", *WAIT);
}

#[test]
fn x_closes_a_dead_pane_only_after_a_second_x_and_never_a_live_one() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan("codex", "exit 2\n");
    server.write_plan("claude", "hang\n");
    let live = server.new_window(&["claude"]);
    let dead = server.new_window(&["codex"]);
    server.wait_pane_exit(&dead, *WAIT);
    let ui = ui(&server, &[]);
    ui.wait_for_text("process exited (code 2)", *WAIT);
    // What needs you first: the dead pane is the first card, the live one below it.
    ui.send_keys(&["j", "x"]);
    ui.wait_for_text("still running: x only closes dead panes", *WAIT);
    assert!(server.pane_exists(&live));
    ui.send_keys(&["k", "x"]);
    ui.wait_for_text(&format!("press x again to close {dead}"), *WAIT);
    assert!(server.pane_exists(&dead));
    ui.send_keys(&["x"]);
    support::wait_until("the dead pane is closed", *WAIT, || {
        !server.pane_exists(&dead)
    });
    assert!(server.pane_exists(&live));
    let screen = ui.wait_for("the card is gone", *WAIT, |s| !s.contains("codex ·"));
    assert!(screen.contains("1 running · 0 dead"), "{screen}");
}

#[test]
fn g_outside_the_server_shows_the_attach_command_and_inside_switches_the_client() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let pane = server.new_window(&["claude"]);
    let ui = ui(&server, &[]);
    ui.wait_for_text("● running", *WAIT);
    ui.send_keys(&["g"]);
    let screen = ui.wait_for_text("outside tmux: tmux -S", *WAIT);
    assert!(screen.contains("attach -t main:1.0"), "{screen}");
    drop(ui);

    // Inside: agentwatch runs in a pane of the watched server, with a client attached.
    let sock = server.socket.to_string_lossy().into_owned();
    let cfg = server.dir.path().join("no-auto.toml");
    let watch = server.tmux_ok(&[
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "--",
        env!("CARGO_BIN_EXE_agentwatch"),
        "-S",
        &sock,
        "-c",
        cfg.to_str().unwrap(),
    ]);
    let watch = watch.trim().to_string();
    // A client attached to the agents' server, itself shown in a pane of a third server.
    let viewer = server.start_ui(
        100,
        30,
        &["tmux", "-S", &sock, "attach", "-t", &format!("main:{}", 2)],
    );
    if !support::poll_until(*WAIT, || viewer.screen().contains("● running")) {
        panic!(
            "DEBUG viewer blank; agentwatch pane:\n{}\nclients: {}\nwindows: {}",
            server.capture(&watch),
            server.tmux_ok(&["list-clients", "-F", "#{client_tty} #{client_control_mode} #{session_name}:#{window_index} #{client_width}x#{client_height}"]),
            server.tmux_ok(&["list-windows", "-F", "#{window_index} #{window_width}x#{window_height} #{window_active}"])
        );
    }
    server.tmux_ok(&["select-pane", "-t", &watch]);
    server.tmux_ok(&["send-keys", "-t", &watch, "g"]);
    support::wait_until("the client shows the agent's window", *WAIT, || {
        server
            .tmux_ok(&[
                "list-clients",
                "-F",
                "#{client_session}:#{window_index}.#{pane_index} #{pane_id}",
            ])
            .contains(&pane)
    });
}
