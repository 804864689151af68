//! Sanity checks for the shared tmux / fake agent test harness.

use crate::support;
use crate::support::{TmuxServer, WAIT};
use std::time::Duration;

fn wait_dead(srv: &TmuxServer, pane: &str, runs: usize) -> String {
    srv.wait_until(&format!("{pane} started {runs} time(s)"), *WAIT, || {
        srv.log_entries_for(pane).len() >= runs
    });
    srv.wait_pane_exit(pane, *WAIT)
}

#[test]
fn dead_pane_keeps_exit_status_and_log_records_invocation() {
    let srv = TmuxServer::start();
    srv.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    // tmux 3.3a can drop output written in the instant before the process exits (see the
    // README): a short pause lets it read the greeting first.
    srv.write_plan(
        "claude",
        "# greet then fail\nsay hello\nsleep 100\n\nexit 3\n",
    );
    let cwd = tempfile::tempdir().unwrap();
    let pane = srv.new_window_in(cwd.path(), &["claude", "--resume", "abc def"]);
    assert!(pane.starts_with('%'), "pane id {pane:?}");

    assert_eq!(wait_dead(&srv, &pane, 1), "status 3");
    assert_eq!(srv.pane_field(&pane, "#{pane_dead_status}"), "3");
    assert!(srv.capture_all(&pane).contains("hello"));

    let log = srv.log_entries();
    assert_eq!(log.len(), 1, "{log:?}");
    let e = &log[0];
    assert_eq!(e["name"], "claude");
    assert_eq!(e["argv"], serde_json::json!(["--resume", "abc def"]));
    assert_eq!(e["pane"], pane.as_str());
    assert_eq!(e["run"], 0);
    assert!(e["pid"].as_u64().unwrap() > 0);
    let expected_cwd = cwd.path().canonicalize().unwrap();
    assert_eq!(e["cwd"], expected_cwd.to_string_lossy().as_ref());
    assert!(!srv.pane_exists("%999"));
}

#[test]
fn respawn_runs_next_plan_section() {
    let srv = TmuxServer::start();
    srv.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    srv.write_plan(
        "codex",
        "say first run\nsleep 100\nexit 1\n---\nsay second run\ncodex-exit-line 0199-abc\nsleep 100\nexit 2\n---\nsignal 9\n",
    );
    let pane = srv.new_window(&["codex"]);
    assert_eq!(wait_dead(&srv, &pane, 1), "status 1");

    srv.tmux_ok(&["respawn-pane", "-t", &pane]);
    assert_eq!(wait_dead(&srv, &pane, 2), "status 2");
    let runs: Vec<_> = srv
        .log_entries_for(&pane)
        .iter()
        .map(|e| e["run"].as_u64().unwrap())
        .collect();
    assert_eq!(runs, [0, 1]);
    let screen = srv.capture_all(&pane);
    assert!(
        screen.contains("To continue this session, run codex resume 0199-abc"),
        "{screen}"
    );
    assert!(screen.contains("second run"), "{screen}");

    // Later runs reuse the last section.
    srv.tmux_ok(&["respawn-pane", "-t", &pane]);
    assert_eq!(wait_dead(&srv, &pane, 3), "signal 9");
    srv.tmux_ok(&["respawn-pane", "-t", &pane]);
    assert_eq!(wait_dead(&srv, &pane, 4), "signal 9");
    assert_eq!(srv.log_entries_for(&pane)[3]["run"], 3);
}

#[test]
fn print_produces_coloured_output() {
    let srv = TmuxServer::start();
    let pane = srv.new_window(&["gemini"]);
    srv.write_plan(&pane, "wait go\nprint 5000\nhang\n");
    // The pane-specific plan wins over the name and default plans.
    srv.write_plan("default", "exit 7\n");
    srv.tmux_ok(&["respawn-pane", "-k", "-t", &pane]);
    std::fs::write(srv.agent_dir.join("go"), "").unwrap();
    srv.wait_until("line 5000 is on screen", *WAIT, || {
        srv.capture(&pane).contains("line 5000")
    });
    let ansi = srv.capture_ansi(&pane);
    // 5000 - 1 = 4999 ≡ 1 (mod 6) → colour 32.
    assert!(ansi.contains("\x1b[32mline 5000"), "{ansi:?}");
    assert!(ansi.contains("\x1b[31mline 4999"), "{ansi:?}");
    assert_eq!(srv.pane_field(&pane, "#{pane_dead}"), "0");
}

#[test]
fn ui_server_runs_program_and_servers_die_on_drop() {
    let srv = TmuxServer::start();
    let tmux_env = srv.tmux_env_value();
    // A pause after its last words, as the fake agents make: tmux 3.3a can lose what a
    // process writes in the instant before it exits (a loaded run lost "got:abc").
    let script =
        "printf 'tmux=[%s] pane=[%s]\\nsize=%s\\n' \"$TMUX\" \"$TMUX_PANE\" \"$(stty size)\"; \
                  read line; echo got:$line; sleep 0.3; exit 4";
    let ui = srv.start_ui_env(60, 12, &[("TMUX", &tmux_env)], &["sh", "-c", script]);
    let screen = ui.wait_for_text("size=12 60", *WAIT);
    assert!(
        screen.contains(&format!("tmux=[{tmux_env}] pane=[]")),
        "{screen}"
    );
    ui.send_text("abc");
    ui.send_keys(&["Enter"]);
    ui.wait_for_text("got:abc", *WAIT);
    assert_eq!(ui.wait_exit(*WAIT), "status 4");
    assert_eq!(ui.exit().as_deref(), Some("status 4"));

    let ui_pid: u32 = ui
        .tmux_ok(&["display-message", "-p", "#{pid}"])
        .trim()
        .parse()
        .unwrap();
    let pid = srv.server_pid().unwrap();
    drop(ui);
    drop(srv);
    support::wait_until("private servers exited", *WAIT, || {
        !support::pid_alive(pid) && !support::pid_alive(ui_pid)
    });
}

#[test]
fn the_slowdown_factor_is_a_positive_number_and_one_when_empty() {
    assert_eq!(support::parse_slowdown(""), Some(1.0));
    assert_eq!(support::parse_slowdown("3"), Some(3.0));
    assert_eq!(support::parse_slowdown(" 1.5 "), Some(1.5));
    for bad in ["0", "-2", "fast", "inf", "NaN", "1e9", "3x"] {
        assert_eq!(support::parse_slowdown(bad), None, "{bad:?}");
    }
}

/// The span is long; the third look fails, so it panics then, not at the span's end.
#[test]
#[should_panic(expected = "it no longer held that the count stays below 3")]
fn holds_for_fails_at_the_first_moment_its_condition_does_not_hold() {
    let mut n = 0;
    support::holds_for("the count stays below 3", Duration::from_secs(600), || {
        n += 1;
        n < 3
    });
}
