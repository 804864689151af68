//! Knowing when an agent needs its user (issue 17), against a real tmux: an agent that
//! stops at a permission prompt is `waiting for input` on its card, in the header and in
//! `status --json`, journaled and kept in `@agentwatch_state` once per edge, and is not
//! once it writes again after the prompt is answered.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::TmuxServer;

const WAIT: Duration = Duration::from_secs(20);

fn status_row(server: &TmuxServer, pane: &str) -> serde_json::Value {
    let out = server
        .agentwatch_command(&["status", "--json"])
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    rows.into_iter()
        .find(|r| r["pane_id"] == pane)
        .unwrap_or_else(|| panic!("{pane} is not in status --json"))
}

#[test]
fn a_permission_prompt_is_waiting_for_input_until_it_is_answered() {
    let server = TmuxServer::start();
    // As claude does: some work, a permission prompt, then (answered) the screen redrawn
    // and more work.
    server.write_plan(
        "claude",
        "print 20\nsay ╭─ Bash command: rm -rf build\nsay │ Do you want to proceed?\n\
         say │ ❯ 1. Yes   2. No\nwait answered\nclear\nsay Running rm -rf build…\n\
         print 5\nhang\n",
    );
    // Another agent, quiet with nothing for its user on screen (its own plan, written
    // before it starts).
    server.write_plan("codex", "print 3\nhang\n");
    let busy = server.new_window(&["codex"]);
    let pane = server.new_window(&["claude"]);
    let ui = server.start_agentwatch(120, 40, &[], &[]);
    let screen = ui.wait_for_text("waiting for input", WAIT);
    assert!(screen.contains("(1 waiting)"), "{screen}");
    assert!(screen.contains("Do you want to proceed?"), "{screen}");
    let row = status_row(&server, &pane);
    assert_eq!(row["state"], "waiting", "{row}");
    assert_eq!(row["waiting_for"], "Do you want to proceed?", "{row}");
    assert!(row["since"].is_string(), "{row}");
    // Journaled once by the supervisor (this dashboard), and on the pane for status lines.
    server.wait_until("the edge is journaled", WAIT, || {
        server.journal_count("waiting", Some(&pane)) == 1
    });
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_state}"), "waiting");
    // The other agent, quiet with nothing for its user on screen, is just running.
    assert_eq!(status_row(&server, &busy)["state"], "running");
    // Answered: it writes again, and waits no more.
    std::fs::write(server.agent_dir.join("answered"), "").unwrap();
    let screen = ui.wait_for("the wait to end", WAIT, |s| {
        !s.contains("waiting for input") && !s.contains("waiting)")
    });
    assert!(screen.contains("2 running"), "{screen}");
    assert_eq!(status_row(&server, &pane)["state"], "running");
    server.wait_until("the end of the wait is journaled", WAIT, || {
        server.journal_count("working", Some(&pane)) == 1
    });
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_state}"), "running");
    assert_eq!(server.journal_count("waiting", Some(&pane)), 1);
    assert_eq!(server.journal_count("waiting", Some(&busy)), 0);
}
