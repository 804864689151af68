//! The supervisor's claim kept in the tmux server (issue 27): one daemon per server by
//! whatever path it is reached, whatever happens to the lock files; a daemon that stops
//! answering loses the server to a dashboard, which says so; a dashboard whose terminal goes
//! away leaves at once, without a panic, and lets go of its claim.

use std::time::{Duration, Instant};

use crate::support::daemon::{doctor, status_of, Daemon};
use crate::support::{TmuxServer, LONG, WAIT};

fn config(server: &TmuxServer) -> std::path::PathBuf {
    let cfg = server.dir.path().join("cfg.toml");
    std::fs::write(
        &cfg,
        "[auto_resume]\nbackoff_secs = [1]\n[notify]\nbell = false\n",
    )
    .unwrap();
    cfg
}

/// The claim as the server holds it.
fn lease(server: &TmuxServer) -> String {
    server
        .tmux_ok(&["display-message", "-p", "#{@agentwatch_lease}"])
        .trim()
        .to_string()
}

#[test]
fn a_daemon_on_a_symlinked_or_hard_linked_path_to_a_supervised_server_exits_1_naming_the_first() {
    let server = TmuxServer::start();
    let cfg = config(&server);
    let first = Daemon::start(&server, &cfg);
    let soft = server.dir.path().join("soft.sock");
    std::os::unix::fs::symlink(&server.socket, &soft).unwrap();
    let hard = server.dir.path().join("hard.sock");
    std::fs::hard_link(&server.socket, &hard).unwrap();
    for path in [&soft, &hard] {
        let start = Instant::now();
        let mut cmd = server.agentwatch();
        let out = cmd
            .arg("-S")
            .arg(path)
            .args(["-c", cfg.to_str().unwrap(), "daemon"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {err}", path.display());
        assert!(
            err.contains("another daemon already supervises this server")
                && err.contains(&format!("pid {}", first.pid())),
            "{err}"
        );
        // Said at once: one election, not a wait for anything.
        assert!(start.elapsed() < Duration::from_secs(10), "{err}");
    }
    assert!(
        lease(&server).starts_with(&format!("{}:", first.pid())),
        "{}",
        lease(&server)
    );
    let (status, _) = first.stop();
    assert!(status.success());
}

#[test]
fn deleting_the_lock_files_does_not_let_a_second_daemon_start_and_stop_still_finds_the_first() {
    let server = TmuxServer::start();
    let cfg = config(&server);
    let c = cfg.to_str().unwrap();
    let first = Daemon::start(&server, &cfg);
    // A temp-file cleaner: every lock file of this test's TMUX_TMPDIR is gone.
    // SAFETY: getuid has no preconditions.
    let locks = server
        .dir
        .path()
        .join(format!("agentwatch-{}", unsafe { libc::getuid() }));
    let mut removed = 0;
    for e in std::fs::read_dir(&locks).unwrap().flatten() {
        std::fs::remove_file(e.path()).unwrap();
        removed += 1;
    }
    assert!(removed > 0, "the daemon's lock was there to delete");
    // --detach names the running one and starts none.
    let out = server
        .agentwatch_command(&["-c", c, "daemon", "--detach"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        first.pid().to_string(),
        "{err}"
    );
    // A second daemon in the foreground refuses.
    let out = server
        .agentwatch_command(&["-c", c, "daemon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // doctor still names it.
    assert!(
        status_of(&server, &cfg).contains(&format!("✔ supervision: daemon {}", first.pid())),
        "{}",
        status_of(&server, &cfg)
    );
    // --stop finds it by its claim.
    let out = server
        .agentwatch_command(&["daemon", "--stop"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("stopped daemon {}", first.pid()),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // It let go of its claim on the way out.
    assert_eq!(lease(&server), "");
    drop(first);
}

#[test]
fn a_stopped_daemons_dead_agent_is_resumed_by_a_dashboard_that_says_why() {
    let server = TmuxServer::start();
    server.write_plan("claude", "wait go\nexit 1\n---\nsleep 300\nexit 0\n");
    let cfg = config(&server);
    let pane = server.spawn_agent("claude");
    let daemon = Daemon::start(&server, &cfg);
    daemon.signal("STOP");
    // With nobody answering, doctor and status say so, once the claim has run out.
    server.wait_until("doctor says nobody supervises", *LONG, || {
        doctor(&server).contains(&format!(
            "✖ supervision: nobody supervises this server: daemon {} stopped answering",
            daemon.pid()
        ))
    });
    let ui = server.start_agentwatch(160, 30, &[], &["-c", cfg.to_str().unwrap()]);
    let screen = ui.wait_for_text(&format!("daemon {} stopped answering", daemon.pid()), *WAIT);
    assert!(screen.contains("supervising here"), "{screen}");
    // The agent dies: the dashboard resumes it, its session id kept, within 15 s.
    let died = Instant::now();
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    server.wait_until("the dashboard resumes it", *LONG, || {
        server.log_entries_for(&pane).len() >= 2
    });
    let took = died.elapsed();
    let runs = server.log_entries_for(&pane);
    assert_eq!(runs[1]["argv"][0], "--resume", "{runs:#?}");
    assert_eq!(runs[1]["argv"][1], runs[0]["argv"][1], "{runs:#?}");
    assert!(
        took < crate::support::scaled(Duration::from_secs(15)),
        "resumed {took:?} after the death"
    );
    // The daemon comes back: it takes the server back, and the dashboard says so.
    daemon.signal("CONT");
    ui.wait_for_text(&format!("supervised by daemon {}", daemon.pid()), *LONG);
    let (status, _) = daemon.stop();
    assert!(status.success());
}

#[test]
fn a_dashboard_whose_terminal_goes_away_leaves_at_once_without_a_panic_and_lets_go() {
    let server = TmuxServer::start();
    let cfg = config(&server);
    server.spawn_agent("claude");
    let (_, state) = server.xdg();
    let log_dir = std::path::Path::new(&state).join("agentwatch");
    std::fs::create_dir_all(&log_dir).unwrap();
    // Its log cannot be written either (a full disk): no failure to log may hang it.
    for full in [false, true] {
        let log = log_dir.join("agentwatch.log");
        let _ = std::fs::remove_file(&log);
        if full {
            std::os::unix::fs::symlink("/dev/full", &log).unwrap();
        }
        let ui = server.start_agentwatch(120, 30, &[], &["-c", cfg.to_str().unwrap()]);
        ui.wait_for_text("● running", *WAIT);
        server.wait_until("the dashboard holds the server", *WAIT, || {
            !lease(&server).is_empty()
        });
        let pid = ui.program_pid();
        // Its terminal goes away: the server it runs in is killed.
        ui.tmux_ok(&["kill-server"]);
        let gone = Instant::now();
        crate::support::wait_until("the dashboard exits", *WAIT, || {
            !crate::support::pid_alive(pid)
        });
        assert!(
            gone.elapsed() < crate::support::scaled(Duration::from_secs(3)),
            "it took {:?}",
            gone.elapsed()
        );
        assert_eq!(lease(&server), "", "it let go of the server");
        if !full {
            let text = std::fs::read_to_string(&log).unwrap();
            assert!(!text.contains("panic"), "{text}");
            assert!(text.contains("left with the terminal gone"), "{text}");
        }
        drop(ui);
    }
}
