//! What each agent spends, read from its own files on a real tmux: a claude transcript
//! whose messages are split over lines sharing one `message.id` (and a subagent's
//! sidechain), followed as it grows; a codex rollout's `token_count`.

use std::io::Write;
use std::time::Duration;

use crate::support::{TmuxServer, LONG};

/// claude's project folder name for `cwd`.
fn slug(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// One assistant line of message `id` (claude writes one per content block, each with a
/// full copy of the usage).
fn assistant(id: &str, sidechain: bool, u: (u64, u64, u64, u64)) -> String {
    format!(
        r#"{{"type":"assistant","isSidechain":{sidechain},"requestId":"req_{id}","message":{{"id":"{id}","model":"claude-opus-4-8","role":"assistant","content":[{{"type":"text","text":"…"}}],"usage":{{"input_tokens":{},"output_tokens":{},"cache_read_input_tokens":{},"cache_creation_input_tokens":{}}}}}}}"#,
        u.0, u.1, u.2, u.3
    ) + "\n"
}

#[test]
fn a_claude_transcript_is_counted_once_per_message_and_followed_as_it_grows() {
    let server = TmuxServer::start();
    let store = server.agent_store("claude");
    server.write_plan("claude", "hang\n");
    let pane = server.spawn_agent("claude");
    let id = server.pane_field(&pane, "#{@agentwatch_session_id}");
    let cwd = server.pane_field(&pane, "#{pane_current_path}");
    let real = std::fs::canonicalize(&cwd).unwrap();
    let folder = store.join("projects").join(slug(real.to_str().unwrap()));
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join(format!("{id}.jsonl"));
    let mut text =
        String::from(r#"{"type":"user","message":{"role":"user","content":"fix the tests"}}"#)
            + "\n";
    for _ in 0..3 {
        text += &assistant("msg_1", false, (12, 300, 20_000, 4_000));
    }
    text += &assistant("msg_side", true, (3, 40, 900, 0));
    text += &assistant("msg_2", false, (8, 120, 24_000, 600));
    text += &assistant("msg_2", false, (8, 150, 24_000, 600));
    std::fs::write(&path, text).unwrap();

    let r = server.status_row(&pane);
    assert_eq!(
        r["tokens"],
        serde_json::json!({
            "input": 12 + 3 + 8,
            "output": 300 + 40 + 150,
            "cache_read": 20_000 + 900 + 24_000,
            "cache_creation": 4_000 + 600,
        }),
        "{r}"
    );
    // The newest main-chain message, not the subagent's.
    assert_eq!(
        r["context"],
        serde_json::json!({"used": 8 + 24_000 + 600, "window": 200_000, "percent": 12}),
        "{r}"
    );
    assert_eq!(r["model"], "claude-opus-4-8");

    // The dashboard shows it, and a message appended shows within 3 s.
    let ui = server.start_agentwatch(120, 30, &[], &[]);
    ui.wait_for_text("ctx 12% · 50k tok", *LONG);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(assistant("msg_3", false, (10, 500, 150_000, 20_000)).as_bytes())
        .unwrap();
    drop(f);
    let start = std::time::Instant::now();
    ui.wait_for_text("ctx 85% · 220k tok", *LONG);
    assert!(
        start.elapsed() < crate::support::scaled(Duration::from_secs(3)),
        "seen after {:?}",
        start.elapsed()
    );
    let r = server.status_row(&pane);
    assert_eq!(r["context"]["percent"], 85, "{r}");
}

#[test]
fn a_codex_rollout_gives_its_totals_context_window_and_limits() {
    let server = TmuxServer::start();
    server.write_plan("codex", "hang\n");
    let pane = server.new_window(&["codex"]);
    let id = "0199e2a4-5b6c-7d8e-9f01-23456789abcd";
    server.tmux_ok(&[
        "set-option",
        "-p",
        "-t",
        &pane,
        "@agentwatch_session_id",
        id,
    ]);
    let day = server.dir.path().join("codex/sessions/2026/12/04");
    std::fs::create_dir_all(&day).unwrap();
    let ev = |total: u64, last: u64| {
        format!(
            r#"{{"timestamp":"2026-12-04T10:00:00.000Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total},"cached_input_tokens":{},"output_tokens":900,"reasoning_output_tokens":300,"total_tokens":{}}},"last_token_usage":{{"input_tokens":{last},"cached_input_tokens":0,"output_tokens":100,"reasoning_output_tokens":0,"total_tokens":{}}},"model_context_window":272000}},"rate_limits":{{"primary":{{"used_percent":7.0,"window_minutes":300,"resets_at":1796419394}},"secondary":null}}}}}}"#,
            total / 4,
            total + 900,
            last + 100
        ) + "\n"
    };
    std::fs::write(
        day.join(format!("rollout-2026-12-04T10-00-00-{id}.jsonl")),
        ev(40_000, 20_000) + &ev(100_000, 54_300),
    )
    .unwrap();
    let r = server.status_row(&pane);
    assert_eq!(
        r["tokens"],
        serde_json::json!({"input": 75_000, "output": 900, "cache_read": 25_000, "cache_creation": 0}),
        "{r}"
    );
    assert_eq!(
        r["context"],
        serde_json::json!({"used": 54_400, "window": 272_000, "percent": 20}),
        "{r}"
    );
    assert_eq!(r["limits"][0]["used_percent"], 7.0, "{r}");
    assert_eq!(
        r["limits"][0]["resets_at"], "2026-12-04T21:23:14.000Z",
        "{r}"
    );
}
