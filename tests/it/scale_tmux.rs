//! A cost flat in the number of panes (issue 16), against a real tmux: a death is journaled
//! long before the next tick (the kernel's word through a pidfd wakes the poll), a pane
//! opened where no notice reports it is protected without waiting for the listing's net (a
//! new child of the server), and a quiet server is asked almost nothing.

use crate::support;
use std::time::{Duration, Instant};

use crate::support::daemon::Daemon;
use crate::support::{calls, tmux_wrapper, TmuxServer, WAIT};

fn config(server: &TmuxServer, extra: &str) -> std::path::PathBuf {
    let cfg = server.dir.path().join("cfg.toml");
    std::fs::write(
        &cfg,
        format!("{extra}\n[auto_resume]\nenabled = false\n[notify]\nbell = false\n"),
    )
    .unwrap();
    cfg
}

fn protected(server: &TmuxServer, pane: &str) -> bool {
    server.pane_field_opt(pane, "#{remain-on-exit}").as_deref() == Some("on")
}

#[test]
fn a_death_is_journaled_long_before_the_next_tick() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let pane = server.new_window(&["claude"]);
    let pid = server.wait_log(&pane, 1)[0]["pid"].as_u64().unwrap();
    // One tick every 20 s: only a wake-up can see the death sooner.
    let cfg = config(&server, "tick_ms = 20000");
    let _daemon = Daemon::start(&server, &cfg);
    support::wait_until("the pane is protected", *WAIT, || protected(&server, &pane));
    // The first tick's poll is over; the next is 20 s away.
    std::thread::sleep(Duration::from_millis(500));
    let killed = Instant::now();
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    support::wait_until("the death is journaled", *WAIT, || {
        server.journal_count("died", Some(&pane)) == 1
    });
    let took = killed.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "seen after {took:?}: at a tick, not when the process ended"
    );
    assert!(
        server.journal().contains("\"signal\":9"),
        "{}",
        server.journal()
    );
}

#[test]
fn a_pane_split_in_a_session_no_notice_reports_is_protected_at_once() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    server.new_window(&["claude"]);
    // A session of its own, made before agentwatch attaches (to the first session, `main`):
    // a split in it sends the control client no notice.
    server.tmux_ok(&["new-session", "-d", "-s", "zz", "--", "sleep", "100000"]);
    let _daemon = Daemon::start(&server, &config(&server, ""));
    std::thread::sleep(Duration::from_secs(1));
    let split = Instant::now();
    let pane = server.tmux_ok(&[
        "split-window",
        "-d",
        "-t",
        "zz:",
        "-P",
        "-F",
        "#{pane_id}",
        "--",
        "claude",
    ]);
    let pane = pane.trim().to_string();
    support::wait_until("the new pane is protected", *WAIT, || {
        protected(&server, &pane)
    });
    let took = split.elapsed();
    // The brief listing's net runs every 10 s: this was the server's new child.
    assert!(took < Duration::from_secs(4), "protected after {took:?}");
}

#[test]
fn a_quiet_server_is_asked_almost_nothing() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let panes: Vec<String> = (0..20).map(|_| server.new_window(&["claude"])).collect();
    // One process per call, so that every question is counted.
    let (path, log) = tmux_wrapper(&server);
    let cfg = config(&server, "control_mode = false");
    let _daemon = Daemon::start_env(&server, &cfg, &[("PATH", &path)]);
    support::wait_until("every pane is protected", *WAIT, || {
        panes.iter().all(|p| protected(&server, p))
    });
    // Settled: each agent's screen read once, when first seen quiet (is it waiting?), and
    // once more 2 s later if it was first seen in the second its window wrote.
    std::thread::sleep(Duration::from_secs(5));
    let before = calls(&log).len();
    // Eight ticks: a full listing of every pane each time, before.
    std::thread::sleep(Duration::from_secs(4));
    let during: Vec<String> = calls(&log)[before..].to_vec();
    // Without a control connection to tell of new windows, a brief listing (id, pid, dead)
    // comes with the head, every 2 s; nothing reads a pane whole.
    assert!(
        (1..=3).contains(&during.len()),
        "the head (and the brief listing) every 2 s, nothing else: {during:#?}"
    );
    assert!(
        during
            .iter()
            .all(|c| !c.contains("pane_current_command") && !c.contains("-t %")),
        "a quiet server was asked more than its head and a brief listing: {during:#?}"
    );
}

#[test]
fn a_live_agent_pane_closed_is_journaled_gone_at_once_and_nothing_is_called_unreadable() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let pane = server.new_window(&["claude"]);
    let cfg = config(&server, "tick_ms = 20000");
    let _daemon = Daemon::start(&server, &cfg);
    support::wait_until("the pane is protected", *WAIT, || protected(&server, &pane));
    std::thread::sleep(Duration::from_millis(500));
    let closed = Instant::now();
    server.tmux_ok(&["kill-pane", "-t", &pane]);
    support::wait_until("the closed pane is journaled", *WAIT, || {
        server.journal_count("gone", Some(&pane)) == 1
    });
    let took = closed.elapsed();
    assert!(took < Duration::from_secs(5), "journaled after {took:?}");
    let log = std::fs::read_to_string(format!("{}/agentwatch/agentwatch.log", server.xdg().1))
        .unwrap_or_default();
    assert!(!log.contains("did not parse"), "{log}");
}
