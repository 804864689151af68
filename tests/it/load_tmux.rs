//! Load: 40 agent panes in 8 sessions, 8 of them dying in the same instant. Every death
//! gets its banner and exactly one resume, and the screen answers keys meanwhile.
//! (`bench/load.sh` runs the full size: 200 panes, 40 sessions, 20 deaths.)

use crate::support;
use std::time::{Duration, Instant};

use crate::support::{TmuxServer, LONG, WAIT};

const PANES: usize = 40;
const SESSIONS: usize = 8;
const DYING: usize = 8;

#[test]
fn a_burst_of_deaths_is_all_banners_and_exactly_one_resume_each() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let sock = server.socket.to_string_lossy().into_owned();
    let mut panes = Vec::new();
    for i in 0..PANES {
        let mut cmd = server.agentwatch();
        let out = cmd
            .args([
                "-S",
                &sock,
                "spawn",
                "claude",
                "--target",
                &format!("s{}", i % SESSIONS),
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        panes.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    let dying: Vec<&String> = panes.iter().step_by(PANES / DYING).collect();
    for p in &dying {
        // Run 0 was started before this plan existed; run 1 waits and dies; run 2 is the resume.
        server.write_plan(p, "hang\n---\nwait go\nexit 1\n---\nsay resumed\nhang\n");
    }
    // Restart them so they read their own plan.
    for p in &dying {
        server.tmux_ok(&["respawn-pane", "-k", "-t", p]);
    }
    let home = server.dir.path().to_string_lossy().into_owned();
    let (data, state) = (format!("{home}/data"), format!("{home}/state"));
    let cfg = server.dir.path().join("fast.toml");
    std::fs::write(&cfg, "[auto_resume]\nbackoff_secs = [1]\n").unwrap();
    let ui = server.start_ui_env(
        200,
        50,
        &[("XDG_DATA_HOME", &data), ("XDG_STATE_HOME", &state)],
        &[
            env!("CARGO_BIN_EXE_agentwatch"),
            "-S",
            &sock,
            "-c",
            cfg.to_str().unwrap(),
        ],
    );
    ui.wait_for_text(&format!("{PANES} running"), *WAIT);

    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    // Keys answer at once while the burst is handled (3 s is the promise under test, not a
    // wait: never scaled).
    let t = Instant::now();
    ui.send_keys(&["?"]);
    ui.wait_for_text("keys · Esc or ? closes", Duration::from_secs(3));
    let help_ms = t.elapsed().as_millis();
    ui.send_keys(&["Escape"]);

    support::wait_until("every dying agent resumed", *LONG, || {
        dying.iter().all(|p| server.log_entries_for(p).len() >= 3)
    });
    // Room for a doubled relaunch to show up: a span, not a wait.
    support::holds_for(
        "no agent runs more often than it should",
        Duration::from_secs(2),
        || {
            let log = server.log_entries();
            panes.iter().all(|p| {
                let want = if dying.contains(&p) { 3 } else { 1 };
                log.iter().filter(|e| e["pane"] == p.as_str()).count() <= want
            })
        },
    );
    for p in &panes {
        let want = if dying.contains(&p) { 3 } else { 1 };
        assert_eq!(server.log_entries_for(p).len(), want, "{p}");
    }
    let journal = agentwatch::adapters::store::journal::read(
        &std::path::Path::new(&state).join("agentwatch/journal.jsonl"),
    );
    let count = |kind: &str| journal.iter().filter(|e| e.event == kind).count();
    assert_eq!(count("died"), DYING, "every death seen");
    assert_eq!(count("resumed"), DYING, "every death resumed once");
    ui.wait_for_text(&format!("{PANES} running · 0 dead"), *WAIT);
    eprintln!("help opened in {help_ms} ms during the burst");
}
