//! End to end, what agentwatch does when tmux goes wrong: no server yet, the server killed
//! with agents on it (and brought back with one key), a hung server, an old tmux.

use crate::support;
use std::time::Duration;

use crate::support::{TmuxServer, WAIT};

fn env_dirs(server: &TmuxServer) -> (String, String) {
    server.xdg()
}

fn no_auto(server: &TmuxServer) -> String {
    let cfg = server.dir.path().join("no-auto.toml");
    std::fs::write(&cfg, "[auto_resume]\nenabled = false\n").unwrap();
    cfg.to_string_lossy().into_owned()
}

#[test]
fn no_server_is_said_with_the_socket_and_a_new_server_is_picked_up() {
    let server = TmuxServer::start();
    let later = server.dir.path().join("later.sock");
    let later_s = later.to_string_lossy().into_owned();
    let (data, state) = env_dirs(&server);
    let ui = server.start_ui_env(
        100,
        30,
        &[("XDG_DATA_HOME", &data), ("XDG_STATE_HOME", &state)],
        &[env!("CARGO_BIN_EXE_agentwatch"), "-S", &later_s],
    );
    ui.wait_for_text(&format!("no tmux server running on {later_s}"), *WAIT);
    ui.wait_for_text("agentwatch keeps polling", *WAIT);
    server.write_plan("claude", "hang\n");
    let mut cmd = std::process::Command::new(support::tmux_program());
    server.env_for_child(&mut cmd);
    let ok = cmd
        .args([
            "-S",
            &later_s,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "late",
            "--",
            "claude",
        ])
        .status()
        .unwrap();
    assert!(ok.success());
    let screen = ui.wait_for_text("● running", *WAIT);
    assert!(screen.contains("claude · late:0.0"), "{screen}");
    let mut kill = std::process::Command::new(support::tmux_program());
    server.env_for_child(&mut kill);
    kill.args(["-S", &later_s, "kill-server"]).status().unwrap();
}

#[test]
fn a_killed_server_is_one_banner_that_survives_a_restart_and_r_brings_the_agents_back() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    server.write_plan("codex", "hang\n");
    let work = server.dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let w = work.to_string_lossy().into_owned();
    let sock = server.socket.to_string_lossy().into_owned();
    let spawn = |args: &[&str]| {
        let mut cmd = server.agentwatch();
        let out = cmd
            .args(["-S", &sock, "spawn"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let a = spawn(&["claude", "--cwd", &w, "--name", "api"]);
    let b = spawn(&[
        "claude", "--cwd", &w, "--name", "web", "--", "--model", "opus",
    ]);
    let _c = server.new_window(&["codex"]); // codex has no id yet: cannot be resumed
    let id_a = server.pane_field(&a, "#{@agentwatch_session_id}");
    let id_b = server.pane_field(&b, "#{@agentwatch_session_id}");
    let (data, state) = env_dirs(&server);
    let cfg = no_auto(&server);
    let env = [
        ("XDG_DATA_HOME", data.as_str()),
        ("XDG_STATE_HOME", state.as_str()),
    ];
    let argv = [env!("CARGO_BIN_EXE_agentwatch"), "-S", &sock, "-c", &cfg];
    let ui = server.start_ui_env(120, 30, &env, &argv);
    ui.wait_for_text("3 running", *WAIT);

    server.tmux_ok(&["kill-server"]);
    let screen = ui.wait_for_text("tmux server gone: 3 agents lost, 2 can be recreated", *WAIT);
    assert!(screen.contains(&format!("id {}", &id_a[..8])), "{screen}");
    assert!(
        screen.contains("agents:1.0") && screen.contains("no session id"),
        "{screen}"
    );
    let journal = std::fs::read_to_string(format!("{state}/agentwatch/journal.jsonl")).unwrap();
    assert_eq!(journal.matches("server_gone").count(), 1, "{journal}");

    // The roster outlives agentwatch.
    ui.send_keys(&["q"]);
    ui.wait_exit(*WAIT);
    drop(ui);
    let ui = server.start_ui_env(120, 30, &env, &argv);
    ui.wait_for_text("tmux server gone: 3 agents lost, 2 can be recreated", *WAIT);
    ui.send_keys(&["R"]);
    ui.wait_for_text("Recreate 2 agents on", *WAIT);
    ui.send_keys(&["y"]);
    let screen = ui.wait_for_text("back as %", *WAIT);
    assert!(screen.contains("no session id: not recreated"), "{screen}");
    // The new server runs both claudes, resuming their own sessions in their directory.
    support::wait_until("both resumed", *WAIT, || {
        server
            .log_entries()
            .iter()
            .filter(|e| e["argv"][0] == "--resume")
            .count()
            == 2
    });
    let resumed: Vec<_> = server
        .log_entries()
        .into_iter()
        .filter(|e| e["argv"][0] == "--resume")
        .collect();
    let canon = std::fs::canonicalize(&work).unwrap();
    for e in &resumed {
        assert_eq!(e["cwd"].as_str().unwrap(), canon.to_str().unwrap());
    }
    let argvs: Vec<String> = resumed.iter().map(|e| e["argv"].to_string()).collect();
    assert!(
        argvs.contains(&serde_json::json!(["--resume", id_a]).to_string()),
        "{argvs:?}"
    );
    assert!(
        argvs.contains(&serde_json::json!(["--resume", id_b, "--model", "opus"]).to_string()),
        "{argvs:?}"
    );
    let windows = server.tmux_ok(&["list-windows", "-a", "-F", "#{session_name}:#{window_name}"]);
    assert!(
        windows.contains("agents:api") && windows.contains("agents:web"),
        "{windows}"
    );
    // The codex that could not be recreated is still listed; the user deals with it and
    // forgets the list: it is not shown again, not even at the next start.
    ui.wait_for_text("1 agent lost, none can be recreated", *WAIT);
    ui.send_keys(&["d"]);
    ui.wait_for_text("Forget this list for good", *WAIT);
    ui.send_keys(&["y"]);
    ui.wait_for("the grid", *WAIT, |s| !s.contains("tmux server gone"));
    ui.send_keys(&["q"]);
    ui.wait_exit(*WAIT);
    drop(ui);
    let ui = server.start_ui_env(120, 30, &env, &argv);
    let screen = ui.wait_for_text("running", *WAIT);
    assert!(!screen.contains("tmux server gone"), "{screen}");
}

#[test]
fn a_hung_server_never_freezes_the_keys_and_never_piles_up_tmux_calls() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    server.new_window(&["claude"]);
    let ui = server.start_agentwatch(100, 30, &[], &[]);
    ui.wait_for_text("● running", *WAIT);
    let tmux_pid = server.server_pid().unwrap();
    let aw_pid: u32 = ui
        .tmux_ok(&["display-message", "-p", "-t", &ui.pane, "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    // SIGSTOP the agents' server: every tmux call to it now hangs.
    assert!(std::process::Command::new("kill")
        .args(["-STOP", &tmux_pid.to_string()])
        .status()
        .unwrap()
        .success());
    let result = std::panic::catch_unwind(|| {
        let screen = ui.wait_for_text("tmux not responding", *WAIT);
        assert!(screen.contains("(stale)"), "cards marked stale: {screen}");
        // Keys still work at once: help opens and closes, selection moves. These bounds
        // (2 s, and 3 s to quit) are what is promised, not waits: never scaled.
        ui.send_keys(&["?"]);
        ui.wait_for_text("keys · Esc or ? closes", Duration::from_secs(2));
        ui.send_keys(&["Escape"]);
        ui.wait_for("help closed", Duration::from_secs(2), |s| {
            !s.contains("keys · Esc")
        });
        // Never more than one tmux call of each kind in flight: count agentwatch's children
        // for 2 s (a span, not a wait).
        support::holds_for(
            "agentwatch has at most 2 tmux children at once",
            Duration::from_secs(2),
            || tmux_children(aw_pid) <= 2,
        );
        ui.send_keys(&["q"]);
        assert_eq!(
            ui.wait_exit(Duration::from_secs(3)),
            "status 0",
            "quits at once"
        );
    });
    std::process::Command::new("kill")
        .args(["-CONT", &tmux_pid.to_string()])
        .status()
        .unwrap();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// How many `tmux` processes are children of `pid`.
fn tmux_children(pid: u32) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            let close = stat.rfind(')').unwrap_or(0);
            let comm = stat
                .get(stat.find('(').unwrap_or(0) + 1..close)
                .unwrap_or("");
            let ppid = stat[close + 1..].split_whitespace().nth(1).unwrap_or("");
            comm == "tmux" && ppid == pid.to_string()
        })
        .count()
}

#[test]
fn a_tmux_older_than_3_1_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("tmux");
    std::fs::write(&fake, "#!/bin/sh\necho 'tmux 2.9a'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap()
    );
    let out = crate::support::agentwatch_in(dir.path())
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tmux 2.9 is too old: agentwatch needs tmux 3.1 or newer"),
        "{err}"
    );
}

#[test]
fn a_panic_restores_the_terminal_prints_a_report_and_logs_the_details() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    server.new_window(&["claude"]);
    let (_, state) = env_dirs(&server);
    let env = [
        ("AGENTWATCH_DEBUG_PANIC_AFTER_MS", "1500"),
        ("RUST_BACKTRACE", "0"),
        ("RUST_LIB_BACKTRACE", "0"),
    ];
    let ui = server.start_agentwatch(100, 30, &env, &[]);
    ui.wait_for_text("● running", *WAIT);
    let exit = ui.wait_exit(*WAIT);
    assert_ne!(exit, "status 0");
    let screen = ui.screen();
    assert!(
        screen.contains("a panic on purpose"),
        "the report is shown: {screen}"
    );
    assert!(screen.contains("details in"), "{screen}");
    assert_eq!(
        ui.tmux_ok(&["display-message", "-p", "-t", &ui.pane, "#{alternate_on}"])
            .trim(),
        "0",
        "left the alternate screen"
    );
    let log = std::fs::read_to_string(format!("{state}/agentwatch/agentwatch.log")).unwrap();
    assert!(
        log.contains("panic:") && log.contains("a panic on purpose"),
        "{log}"
    );
}

#[test]
fn tiny_terminals_and_resizes_never_break_it() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan("claude", "exit 1\n");
    server.new_window(&["claude"]);
    let ui = server.start_agentwatch(20, 5, &[], &["-c", &no_auto(&server)]);
    ui.wait_for_text("✖", *WAIT);
    for (w, h) in [(10, 3), (80, 24), (1, 1), (200, 60), (33, 7), (80, 24)] {
        ui.resize(w, h);
        // Not a wait: the pace of a user's resizes is the thing under test.
        std::thread::sleep(Duration::from_millis(150));
    }
    let screen = ui.wait_for_text("process exited", *WAIT);
    assert!(screen.contains("1 dead"), "{screen}");
    ui.send_keys(&["q"]);
    assert_eq!(ui.wait_exit(*WAIT), "status 0");
}

#[test]
fn sigterm_and_sigquit_quit_and_restore_the_terminal() {
    for sig in ["-TERM", "-QUIT"] {
        let server = TmuxServer::start();
        server.write_plan("claude", "hang\n");
        server.new_window(&["claude"]);
        // Under a shell that lives on, so that the terminal state after agentwatch is
        // what the user would get back (tmux hides the cursor of a dead pane itself).
        let own = server.agentwatch_env();
        let env: Vec<(&str, &str)> = own.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let script = format!(
            "'{}' -S '{}'; echo EXITED=$?; sleep 600",
            env!("CARGO_BIN_EXE_agentwatch"),
            server.socket.display()
        );
        let ui = server.start_ui_named("ui", 100, 30, &env, &["sh", "-c", &script]);
        ui.wait_for_text("● running", *WAIT);
        let shell = ui.program_pid().to_string();
        let out = std::process::Command::new("pgrep")
            .args(["-P", &shell])
            .output()
            .unwrap();
        let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(!pid.is_empty(), "agentwatch runs under the shell");
        assert!(std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
            .success());
        ui.wait_for_text("EXITED=0", *WAIT);
        let screen = ui.tmux_ok(&[
            "display-message",
            "-p",
            "-t",
            &ui.pane,
            "#{alternate_on} #{cursor_flag}",
        ]);
        assert_eq!(
            screen.trim(),
            "0 1",
            "{sig}: alternate screen off, cursor shown"
        );
    }
}
