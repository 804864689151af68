//! `agentwatch daemon` against real tmux servers: supervision with no dashboard open, one
//! daemon per server, dashboards beside it, restarts in the middle of a countdown, a tmux
//! server that goes away and comes back, `--detach` and `--stop`.

use crate::support;
use std::time::{Duration, Instant};

use crate::support::daemon::{status_of, Daemon};
use crate::support::{TmuxServer, LONG};

fn config(server: &TmuxServer, backoff: &str) -> std::path::PathBuf {
    let cfg = server.dir.path().join("cfg.toml");
    std::fs::write(
        &cfg,
        format!("[auto_resume]\nbackoff_secs = {backoff}\n[notify]\nbell = false\n"),
    )
    .unwrap();
    cfg
}

/// Waits until `pane` has run `n` times, checks for a while longer that it runs no more,
/// and returns its runs.
fn runs_settled(server: &TmuxServer, pane: &str, n: usize) -> Vec<serde_json::Value> {
    support::wait_until(&format!("{pane} ran {n} times"), *LONG, || {
        server.log_entries_for(pane).len() >= n
    });
    // A span, not a wait: long enough for a wrongly doubled resume (backoff 1 s) to show.
    support::holds_for(
        &format!("{pane} runs no more than {n} times"),
        Duration::from_secs(3),
        || server.log_entries_for(pane).len() <= n,
    );
    server.log_entries_for(pane)
}

/// Whether a `run-shell` job of the tmux server `server_pid` (a child of it) still runs with
/// `word` on its command line.
fn job_runs(server_pid: u32, word: &str) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten().any(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        ppid == Some(server_pid)
            && std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(word))
    })
}

#[test]
fn with_no_dashboard_the_daemon_resumes_a_crash_loop_with_its_session_id_and_gives_up() {
    let server = TmuxServer::start();
    server.write_plan("claude", "sleep 300\nexit 1\n");
    let cfg = config(&server, "[1]");
    let pane = server.spawn_agent("claude");
    let daemon = Daemon::start(&server, &cfg);
    let runs = runs_settled(&server, &pane, 4);
    assert_eq!(runs.len(), 4, "1 run + exactly 3 resumes: {runs:#?}");
    let id = runs[0]["argv"][1].as_str().unwrap().to_string();
    assert_eq!(runs[0]["argv"][0], "--session-id");
    for run in &runs[1..] {
        assert_eq!(run["argv"], serde_json::json!(["--resume", id]), "{run}");
    }
    server.wait_until("gave_up is journaled", *LONG, || {
        server.journal_count("gave_up", Some(&pane)) == 1
    });
    assert_eq!(server.journal_count("died", Some(&pane)), 4);
    assert_eq!(server.journal_count("resumed", Some(&pane)), 3);

    // A second daemon for the same server refuses at once and names the first (5 s is the
    // promise under test, not a wait: never scaled).
    let start = Instant::now();
    let out = server
        .agentwatch_command(&["-c", cfg.to_str().unwrap(), "daemon"])
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("another daemon already supervises")
            && err.contains(&format!("pid {}", daemon.pid())),
        "{err}"
    );
    // The dashboard beside it says who supervises.
    let ui = server.start_agentwatch(120, 30, &[], &["-c", cfg.to_str().unwrap()]);
    ui.wait_for_text(&format!("supervised by daemon {}", daemon.pid()), *LONG);
    // It tells what the daemon did while no dashboard was open.
    let screen = ui.wait_for_text("died 4 times before this dashboard opened", *LONG);
    assert!(
        screen.contains("auto-resume gave up") && screen.contains("1 gave up"),
        "{screen}"
    );
    let (status, err) = daemon.stop();
    assert!(status.success(), "SIGTERM ends it cleanly: {status} {err}");
    assert!(
        err.contains("stopped"),
        "it logs to stderr in the foreground: {err}"
    );
}

#[test]
fn a_daemon_and_two_dashboards_resume_twenty_crash_loops_exactly_once_each_time() {
    let server = TmuxServer::start();
    server.write_plan("claude", "sleep 500\nexit 1\n");
    // Exactly once each time, not the pace of a mass death (crash loops never stay up, so a
    // mass death of them would wait for the user): no wave here.
    let cfg = server.dir.path().join("cfg.toml");
    std::fs::write(
        &cfg,
        "[auto_resume]\nbackoff_secs = [1]\nmass_deaths = 100\n[notify]\nbell = false\n",
    )
    .unwrap();
    let c = cfg.to_str().unwrap();
    let d1 = server.start_agentwatch_named("ui1", 120, 40, &[], &["-c", c]);
    let daemon = Daemon::start(&server, &cfg);
    let d2 = server.start_agentwatch_named("ui2", 80, 24, &[], &["-c", c]);
    let who = format!("supervised by daemon {}", daemon.pid());
    d1.wait_for_text(&who, *LONG);
    d2.wait_for_text(&who, *LONG);
    let panes: Vec<String> = (0..20).map(|_| server.spawn_agent("claude")).collect();
    let runs = |p: &String, log: &[serde_json::Value]| {
        log.iter().filter(|e| e["pane"] == p.as_str()).count()
    };
    support::wait_until("every pane ran 4 times", *LONG, || {
        let log = server.log_entries();
        panes.iter().all(|p| runs(p, &log) >= 4)
    });
    // A span, not a wait: long enough for a wrongly doubled resume (backoff 1 s) to show.
    support::holds_for(
        "no pane runs more than 4 times",
        Duration::from_secs(3),
        || {
            let log = server.log_entries();
            panes.iter().all(|p| runs(p, &log) <= 4)
        },
    );
    for pane in &panes {
        let runs = server.log_entries_for(pane);
        assert_eq!(runs.len(), 4, "{pane}: 1 run + 3 resumes, never doubled");
    }
    server.wait_until("every give-up is journaled", *LONG, || {
        server.journal_count("gave_up", None) == 20
    });
    // Every death came before its pane's give-up; a span, not a wait, for a doubled event.
    support::holds_for("nothing is journaled twice", Duration::from_secs(2), || {
        [
            ("died", 80),
            ("resumed", 60),
            ("scheduled", 60),
            ("gave_up", 20),
        ]
        .iter()
        .all(|(kind, most)| server.journal_count(kind, None) <= *most)
    });
    assert_eq!(
        server.journal_count("died", None),
        80,
        "{}",
        server.journal()
    );
    assert_eq!(server.journal_count("resumed", None), 60);
    assert_eq!(server.journal_count("scheduled", None), 60);
    assert_eq!(server.journal_count("gave_up", None), 20);
    for ui in [&d1, &d2] {
        ui.wait_for_text("20 gave up", *LONG);
    }
}

fn restart_during_a_countdown(how: &str) {
    let server = TmuxServer::start();
    // Dies once; the resumed run stays up.
    server.write_plan("claude", "sleep 300\nexit 1\n---\nhang\n");
    let cfg = config(&server, "[5]");
    let c = cfg.to_str().unwrap();
    let pane = server.spawn_agent("claude");
    let ui = server.start_agentwatch(120, 30, &[], &["-c", c]);
    ui.wait_for_text("auto-resume 1/3 in", *LONG);
    match how {
        "kill" => {
            let pid = ui.program_pid();
            std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .unwrap();
        }
        _ => ui.send_keys(&["q"]),
    }
    ui.wait_exit(*LONG);
    // Started again well within the countdown: it takes the resume over.
    let again = server.start_agentwatch_named("ui2", 120, 30, &[], &["-c", c]);
    again.wait_for_text("auto-resume 1/3 in", *LONG);
    let runs = runs_settled(&server, &pane, 2);
    assert_eq!(runs.len(), 2, "resumed exactly once: {runs:#?}");
    assert_eq!(runs[1]["argv"][0], "--resume");
    assert_eq!(server.journal_count("died", Some(&pane)), 1);
    assert_eq!(server.journal_count("scheduled", Some(&pane)), 1);
    assert_eq!(server.journal_count("resumed", Some(&pane)), 1);
    again.wait_for_text("resumed (attempt 1/3)", *LONG);
}

#[test]
fn a_dashboard_killed_during_a_countdown_is_taken_over_by_the_next_one() {
    restart_during_a_countdown("kill");
}

#[test]
fn a_dashboard_quit_during_a_countdown_is_taken_over_by_the_next_one() {
    restart_during_a_countdown("q");
}

#[test]
fn the_daemon_survives_its_tmux_server_going_away_and_supervises_the_next_one() {
    let server = TmuxServer::start();
    // Runs are counted across servers: the first hangs, the next (on the new server)
    // crashes once, the resumed one hangs.
    server.write_plan("claude", "hang\n---\nsleep 300\nexit 1\n---\nhang\n");
    let cfg = config(&server, "[1]");
    let first = server.spawn_agent("claude");
    server.wait_log(&first, 1);
    let daemon = Daemon::start(&server, &cfg);
    server.wait_until("the daemon protects the agent pane", *LONG, || {
        server.pane_field(&first, "#{remain-on-exit}") == "on"
    });
    server.tmux_ok(&["kill-server"]);
    server.wait_until("one server_gone line", *LONG, || {
        server.journal_count("server_gone", None) == 1
    });
    // A new server on the same socket: the daemon finds it, never recreating the lost agent.
    server.tmux_ok(&["new-session", "-d", "-s", "main", "sleep", "100000"]);
    // Pane ids start again on a new server: count only the runs from here on.
    let before = server.log_entries().len();
    let pane = server.spawn_agent("claude");
    server.wait_until("the new agent is resumed", *LONG, || {
        server.log_entries().len() >= before + 2
    });
    // A span, not a wait: long enough for a wrongly doubled resume (backoff 1 s) to show.
    support::holds_for(
        "the new agent runs no more than twice",
        Duration::from_secs(3),
        || server.log_entries().len() <= before + 2,
    );
    let runs: Vec<_> = server.log_entries().split_off(before);
    assert_eq!(runs.len(), 2, "{runs:#?}");
    assert!(runs.iter().all(|r| r["pane"] == pane.as_str()));
    assert_eq!(runs[1]["argv"][0], "--resume");
    let windows = server.tmux_ok(&["list-panes", "-a", "-F", "#{pane_id}"]);
    assert_eq!(windows.lines().count(), 2, "nothing recreated: {windows}");
    assert_eq!(server.journal_count("server_gone", None), 1);
    let (status, _) = daemon.stop();
    assert!(status.success());
}

#[test]
fn detach_starts_one_daemon_in_the_background_and_stop_ends_it() {
    let server = TmuxServer::start();
    let cfg = config(&server, "[1]");
    let c = cfg.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["-c", c, "daemon"];
        all.extend_from_slice(args);
        let out = server.agentwatch_command(&all).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, pid, err) = run(&["--detach"]);
    assert_eq!(code, Some(0), "{err}");
    let pid: u32 = pid.parse().expect("it prints the pid");
    assert!(support::pid_alive(pid), "the daemon runs");
    assert!(status_of(&server, &cfg).contains(&format!("daemon {pid}")));
    // Again: the one that runs is named, none is added (a tmux.conf line may run twice).
    let (code, again, err) = run(&["--detach"]);
    assert_eq!((code, again), (Some(0), pid.to_string()), "{err}");
    let (code, out, err) = run(&["--stop"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, format!("stopped daemon {pid}"));
    server.wait_until("the daemon is gone", *LONG, || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(true)
    });
    let (code, _, err) = run(&["--stop"]);
    assert_eq!(code, Some(0));
    assert!(err.contains("nothing to stop"), "{err}");
    assert!(!status_of(&server, &cfg).contains(&format!("daemon {pid}")));
}

#[test]
fn the_tmux_conf_line_from_the_readme_starts_one_daemon_for_its_server() {
    let server = TmuxServer::start();
    let cfg = config(&server, "[1]");
    for (k, v) in server.agentwatch_env() {
        server.tmux_ok(&["set-environment", "-g", &k, &v]);
    }
    // The guide's line (docs/guide/daemon.md), with this build's binary for `agentwatch`.
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/daemon.md"),
    )
    .unwrap();
    let line = guide
        .lines()
        .find(|l| l.starts_with("run-shell -b 'agentwatch daemon --detach"))
        .expect("the guide's tmux.conf line");
    let conf = server.dir.path().join("daemon.conf");
    std::fs::write(
        &conf,
        format!(
            "{}\n",
            line.replace(
                "'agentwatch ",
                &format!("'{} ", env!("CARGO_BIN_EXE_agentwatch"))
            )
        ),
    )
    .unwrap();
    let conf = conf.to_str().unwrap();
    server.tmux_ok(&["source-file", conf]);
    let mut line = String::new();
    server.wait_until("a daemon supervises", *LONG, || {
        line = status_of(&server, &cfg);
        line.contains("✔ supervision: daemon ") && !line.contains("daemon 0 ")
    });
    // Sourced again (a config reload): still one daemon, the same one, once the second
    // `--detach` is over (tmux has forked the job by the time source-file returns).
    server.tmux_ok(&["source-file", conf]);
    let tmux_pid = server.server_pid().unwrap();
    server.wait_until("the second --detach is over", *LONG, || {
        !job_runs(tmux_pid, "--detach")
    });
    assert_eq!(status_of(&server, &cfg), line);
    // Nothing was shown in a pane: a job's output would put it in view mode (and, before
    // tmux 3.7, can crash the server while the daemon's control client attaches).
    assert_eq!(
        server
            .tmux_ok(&["display-message", "-p", "#{pane_in_mode}"])
            .trim(),
        "0"
    );
    server.agentwatch_ok(&["daemon", "--stop"]);
}
