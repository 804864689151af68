//! Why agents stop, against a real tmux and fake claudes that print what claude 2.1.197
//! prints: a usage limit (alive, `limited`, continued once after its reset), a login that
//! failed (not resumed), node's heap exhausted (one attempt), an overloaded API, and the
//! cause in `status --json`, `explain` and the journal.

use std::time::Duration;

use crate::support::daemon::Daemon;
use crate::support::{self, TmuxServer, LONG};

fn config(server: &TmuxServer, extra: &str) -> std::path::PathBuf {
    let cfg = server.dir.path().join("cfg.toml");
    std::fs::write(
        &cfg,
        format!("[auto_resume]\nbackoff_secs = [1]\nslow_backoff_secs = [2]\n[notify]\nbell = false\n{extra}"),
    )
    .unwrap();
    cfg
}

/// Every line typed into the fake's limit screen: (when, what).
fn typed(server: &TmuxServer, pane: &str) -> Vec<(u64, String)> {
    let path = server
        .agent_dir
        .join(format!("typed-{}.jsonl", pane.trim_start_matches('%')));
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| {
            (
                v["at_ms"].as_u64().unwrap_or(0),
                v["line"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn a_claude_at_its_usage_limit_is_limited_and_told_to_continue_once_after_the_reset() {
    let server = TmuxServer::start();
    // A reset 60-119 s away: time for the dashboard to show the limit before it passes (a
    // reset at the next whole minute can be a second away).
    server.write_plan("claude", "claude-limit 1\n");
    let cfg = config(
        &server,
        "[auto_continue]\nenabled = true\nmargin_secs = 2\n",
    );
    let pane = server.spawn_agent("claude");
    let limit_file = server
        .agent_dir
        .join(format!("limit-{}.json", pane.trim_start_matches('%')));
    server.wait_until("the banner is drawn", *LONG, || limit_file.exists());
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&limit_file).unwrap()).unwrap();
    let reset_ms = want["resets_at_ms"].as_u64().unwrap();
    let _daemon = Daemon::start(&server, &cfg);
    let mut seen = serde_json::Value::Null;
    server.wait_until("status says limited", *LONG, || {
        seen = server.status_row(&pane);
        seen["state"] == "limited"
    });
    assert_eq!(seen["cause"], "usage_limit", "{seen}");
    let rfc = seen["resets_at"].as_str().expect("resets_at").to_string();
    let at: jiff::Timestamp = rfc.parse().unwrap();
    assert_eq!(at.as_millisecond() as u64, reset_ms, "{seen}");
    // The dashboard beside the daemon shows it with its reset.
    let ui = server.start_agentwatch(120, 30, &[], &["-c", cfg.to_str().unwrap()]);
    let screen = ui.wait_for_text("⏸ usage limit · resets", *LONG);
    assert!(screen.contains("at a usage limit"), "{screen}");
    // Nothing typed before the reset and its margin; `continue` once after.
    server.wait_until("continue is typed", Duration::from_secs(150), || {
        !typed(&server, &pane).is_empty()
    });
    let lines = typed(&server, &pane);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].1, "continue");
    assert!(
        lines[0].0 >= reset_ms + 2_000,
        "typed at {} before reset {reset_ms} + 2 s",
        lines[0].0
    );
    support::holds_for("it is typed once", Duration::from_secs(4), || {
        typed(&server, &pane).len() == 1
    });
    assert_eq!(server.journal_count("limited", Some(&pane)), 1);
    assert_eq!(server.journal_count("continued", Some(&pane)), 1);
    server.wait_until("working again", *LONG, || {
        server.status_row(&pane)["state"] != "limited"
    });
}

#[test]
fn a_claude_whose_key_is_refused_is_not_resumed_and_says_what_to_run() {
    let server = TmuxServer::start();
    server.write_plan("claude", "claude-error auth\n");
    let cfg = config(&server, "");
    let _daemon = Daemon::start(&server, &cfg);
    let pane = server.spawn_agent("claude");
    let mut seen = serde_json::Value::Null;
    server.wait_until("status says why", *LONG, || {
        seen = server.status_row(&pane);
        seen["cause"] == "auth"
    });
    assert!(
        seen["evidence"].as_array().is_some_and(|e| e
            .iter()
            .any(|l| l == "Invalid API key · Fix external API key")),
        "{seen}"
    );
    server.wait_until("the verdict is kept", *LONG, || {
        server.status_row(&pane)["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("login needed: run /login"))
    });
    support::holds_for("it is not resumed", Duration::from_secs(4), || {
        let starts = server.log_entries_for(&pane).len();
        if starts != 1 {
            eprintln!("started {starts} times; the journal:\n{}", server.journal());
        }
        starts == 1
    });
    let died = server.journal();
    assert!(died.contains("\"cause\":\"auth\""), "{died}");
    // explain says what decided it.
    let out = server.agentwatch_ok(&["explain", &pane]);
    assert!(out.contains("why: login needed (auth)"), "{out}");
    assert!(
        out.contains("Invalid API key · Fix external API key"),
        "{out}"
    );
}

#[test]
fn a_node_heap_out_of_memory_gets_one_attempt_then_holds() {
    let server = TmuxServer::start();
    server.write_plan("claude", "node-oom\n");
    let cfg = config(&server, "");
    let _daemon = Daemon::start(&server, &cfg);
    let pane = server.spawn_agent("claude");
    support::wait_until("it ran twice", *LONG, || {
        server.log_entries_for(&pane).len() >= 2
    });
    let mut seen = serde_json::Value::Null;
    server.wait_until("held for out of memory", *LONG, || {
        seen = server.status_row(&pane);
        seen["reason"]
            .as_str()
            .is_some_and(|r| r.contains("out of memory again"))
    });
    assert_eq!(seen["cause"], "out_of_memory", "{seen}");
    assert_eq!(seen["signal"], 6, "node aborts: {seen}");
    let runs = server.log_entries_for(&pane).len();
    assert_eq!(runs, 2, "{}", server.journal());
    support::holds_for("one attempt only", Duration::from_secs(4), || {
        server.log_entries_for(&pane).len() == 2
    });
}

#[test]
fn one_shot_status_tells_each_cause_with_no_supervisor() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    let cases = [
        ("claude-error overloaded", "overloaded"),
        ("claude-error network", "network"),
        ("claude-error limit", "usage_limit"),
        // Under a shell, node's SIGABRT is exit 134.
        (
            "say FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\nexit 134",
            "out_of_memory",
        ),
        ("say Error: boom\nsay     at main (cli.js:1:1)\nexit 1", "crash"),
        ("exit 2", "unknown"),
        ("signal 15", "deliberate"),
    ];
    let mut panes = Vec::new();
    for (plan, cause) in cases {
        // One plan at a time: the fake reads it as it starts.
        server.write_plan("claude", &format!("{plan}\n"));
        let pane = server.new_window(&["claude"]);
        server.wait_pane_exit(&pane, *LONG);
        panes.push((pane, cause));
    }
    let rows = server.status_rows();
    for (pane, cause) in panes {
        let r = rows.iter().find(|r| r["pane_id"] == pane.as_str()).unwrap();
        assert_eq!(r["cause"], cause, "{r}");
    }
}
