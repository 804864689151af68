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

/// Whether agentwatch's first look at `pane` is over: the listing that found it (it is
/// protected) and the reading of its screen (what it does is journaled).
fn looked_at(server: &TmuxServer, pane: &str) -> bool {
    protected(server, pane)
        && ["idle", "working", "waiting"]
            .iter()
            .any(|kind| server.journal_count(kind, Some(pane)) > 0)
}

/// Whether a logged tmux call reads more than the head and the brief listing: a full
/// listing, or a pane's screen or fields.
fn reads_panes(call: &str) -> bool {
    call.contains("pane_current_command") || call.contains("-t %")
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
    // The first tick's look is over; the next is 20 s away.
    support::wait_until("the first look at the pane is over", *WAIT, || {
        looked_at(&server, &pane)
    });
    let killed = Instant::now();
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    support::wait_until("the death is journaled", *WAIT, || {
        server.journal_count("died", Some(&pane)) == 1
    });
    let took = killed.elapsed();
    // The promise (long before the next tick, 20 s away), not a wait: never scaled.
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
    let first = server.new_window(&["claude"]);
    // A session of its own, made before agentwatch attaches (to the first session, `main`):
    // a split in it sends the control client no notice.
    server.tmux_ok(&["new-session", "-d", "-s", "zz", "--", "sleep", "100000"]);
    let _daemon = Daemon::start(&server, &config(&server, ""));
    // Split after the first look, whose listing would find any pane.
    support::wait_until("the first look at the agent is over", *WAIT, || {
        looked_at(&server, &first)
    });
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
    // The brief listing's net runs every 10 s: this was the server's new child. (The
    // promise, not a wait: never scaled.)
    assert!(took < Duration::from_secs(4), "protected after {took:?}");
}

#[test]
fn a_quiet_server_is_asked_almost_nothing() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let panes: Vec<String> = (0..20).map(|_| server.new_window(&["claude"])).collect();
    for p in &panes {
        server.wait_log(p, 1);
    }
    // A screen first seen within 2 s of its window's last output is read once more 2 s
    // later, at whichever listing comes next (attention's recheck, which the core's tests
    // cover): up to 5 s after the first look, at a moment no wait here could tell. So the
    // agents' output is 2 s old before agentwatch first looks, and no screen is read twice.
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    support::wait_until("the agents' output is 2 s old", *WAIT, || {
        panes.iter().all(|p| {
            let written: u64 = server.pane_field(p, "#{window_activity}").parse().unwrap();
            now_ms() >= (written + 2) * 1000
        })
    });
    // One process per call, so that every question is counted.
    let (path, log) = tmux_wrapper(&server);
    let cfg = config(&server, "control_mode = false");
    let _daemon = Daemon::start_env(&server, &cfg, &[("PATH", &path)]);
    // Settled: each agent's screen read once, when first seen quiet (is it waiting?), what
    // it does written on its pane, and its fields read afresh while that was judged; those
    // reads are over once none has come for a few ticks (scaled: a loaded machine ticks
    // late).
    support::wait_until("every pane is protected and judged", *WAIT, || {
        panes.iter().all(|p| {
            protected(&server, p) && !server.pane_field(p, "#{@agentwatch_state}").is_empty()
        })
    });
    let quiet = support::scaled(Duration::from_millis(1500));
    let (mut reads, mut since) = (usize::MAX, Instant::now());
    support::wait_until("no pane is read for a few ticks", *WAIT, || {
        let now = calls(&log).iter().filter(|c| reads_panes(c)).count();
        if now != reads {
            (reads, since) = (now, Instant::now());
        }
        since.elapsed() >= quiet
    });
    let before = calls(&log).len();
    // Eight ticks (a full listing of every pane each time, before): a span, not a wait.
    // Without a control connection to tell of new windows, a brief listing (id, pid, dead)
    // comes with the head, every 2 s; nothing reads a pane whole.
    // The supervisor's claim is renewed every 2 s besides: counted apart.
    let claim = |c: &String| c.contains("@agentwatch_lease");
    let during = || -> Vec<String> {
        calls(&log)[before..]
            .iter()
            .filter(|c| !claim(c))
            .cloned()
            .collect()
    };
    let renewals = || calls(&log)[before..].iter().filter(|c| claim(c)).count();
    support::holds_for(
        "a quiet server is asked its head and a brief listing, and its claim renewed, every 2 s, nothing else",
        Duration::from_secs(4),
        || {
            let during = during();
            let quiet =
                during.len() <= 3 && !during.iter().any(|c| reads_panes(c)) && renewals() <= 3;
            if !quiet {
                eprintln!("asked of a quiet server: {during:#?}, {} renewals", renewals());
            }
            quiet
        },
    );
    let during = during();
    assert!(
        (1..=3).contains(&during.len()),
        "the head (and the brief listing) every 2 s, nothing else: {during:#?}"
    );
    assert!(
        (1..=3).contains(&renewals()),
        "the claim renewed every 2 s: {}",
        renewals()
    );
}

#[test]
fn a_live_agent_pane_closed_is_journaled_gone_at_once_and_nothing_is_called_unreadable() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let pane = server.new_window(&["claude"]);
    let cfg = config(&server, "tick_ms = 20000");
    let _daemon = Daemon::start(&server, &cfg);
    // The first tick's look is over; the next is 20 s away.
    support::wait_until("the first look at the pane is over", *WAIT, || {
        looked_at(&server, &pane)
    });
    let closed = Instant::now();
    server.tmux_ok(&["kill-pane", "-t", &pane]);
    support::wait_until("the closed pane is journaled", *WAIT, || {
        server.journal_count("gone", Some(&pane)) == 1
    });
    let took = closed.elapsed();
    // The promise (long before the next tick, 20 s away), not a wait: never scaled.
    assert!(took < Duration::from_secs(5), "journaled after {took:?}");
    let log = std::fs::read_to_string(format!("{}/agentwatch/agentwatch.log", server.xdg().1))
        .unwrap_or_default();
    assert!(!log.contains("did not parse"), "{log}");
}
