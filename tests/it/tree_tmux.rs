//! Agents anywhere in a pane's process tree, in real private tmux servers: an agent that is
//! itself a bash script, a wrapper that runs the agent as a child and passes its status and
//! arguments on, an agent under `bash -c` that ends while the shell lives on, `nice`, and
//! the dashboard and `status --json` agreeing on what runs.

use std::time::Duration;

use crate::support::{TmuxServer, WAIT};

const ID: &str = "5b0c7a52-6f43-4c2e-9d1a-0f3e8b7c6d5e";

fn script(server: &TmuxServer, name: &str, body: &str) {
    let path = server.bin_dir.join(name);
    std::fs::write(&path, body).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn config(server: &TmuxServer) -> String {
    let cfg = server.dir.path().join("cfg.toml");
    std::fs::write(
        &cfg,
        "[auto_resume]\nenabled = false\n[notify]\nbell = false\n\
         [agents.scripted]\nmatch = [\"scripted\"]\nresume = [\"scripted\"]\n",
    )
    .unwrap();
    cfg.to_string_lossy().into_owned()
}

fn status_json(server: &TmuxServer, cfg: &str) -> Vec<serde_json::Value> {
    let out = server
        .agentwatch_command(&["-c", cfg, "status", "--json"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "status --json: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A row's state, `running` for any live one (working, waiting, idle or not known: what the
/// agent does is not what these tests are about).
fn state_of(rows: &[serde_json::Value], pane: &str) -> String {
    rows.iter()
        .find(|r| r["pane_id"] == pane)
        .map(|r| live_as_running(r["state"].as_str().unwrap_or_default()).to_string())
        .unwrap_or_else(|| format!("no row for {pane} in {rows:#?}"))
}

fn live_as_running(state: &str) -> &str {
    match state {
        "working" | "waiting" | "idle" => "running",
        s => s,
    }
}

/// The header's `N running`.
fn running_on_screen(screen: &str) -> Option<usize> {
    let head = screen.lines().next()?;
    let i = head.find(" running")?;
    head[..i].split_whitespace().last()?.parse().ok()
}

#[test]
fn agents_run_by_scripts_wrappers_and_bash_c_get_cards_and_banners() {
    let server = TmuxServer::start();
    let cfg = config(&server);
    // An agent that is itself a bash script (its process is `bash`, via env).
    script(
        &server,
        "scripted",
        "#!/usr/bin/env bash\necho scripted agent working\nsleep 4\nexit 3\n",
    );
    // A wrapper that runs claude as a child, passes its arguments and its status on.
    script(
        &server,
        "cc",
        "#!/bin/bash\nclaude --dangerously-skip-permissions \"$@\"\nexit $?\n",
    );
    server.write_plan("claude", "say working\nwait go\nexit 4\n---\nhang\n");
    server.write_plan("codex", "say codex working\nwait go\nexit 1\n---\nhang\n");
    let scripted = server.new_window(&["scripted"]);
    let wrapped = server.new_window(&["cc", "--session-id", ID]);
    // codex under bash -c: the shell lives on after it.
    let bash_c = server.new_window(&["bash", "-c", "codex; echo codex is done; sleep 100000"]);
    // nice execs the agent; the pane's process becomes it.
    let niced = server.new_window(&["nice", "-n", "5", "gemini"]);
    server.write_plan("gemini", "hang\n");
    // A wrapper that execs the agent, and an npx-like launcher that, like `npm exec`, takes
    // a while (here 3 s, longer than a new process stays unsettled) before it runs the
    // agent through a `sh -c` child.
    script(&server, "ccx", "#!/bin/bash\nexec claude \"$@\"\n");
    script(
        &server,
        "npx",
        "#!/bin/sh\n# like npm exec: fetch, then the package's bin through sh -c, as a child\nsleep 3\nsh -c 'claude --from-npx; echo npx saw $?'\nexit 4\n",
    );
    let exec_wrapped = server.new_window(&["ccx"]);
    let npx = server.new_window(&["npx", "@anthropic-ai/claude-code"]);
    let agents = [
        (&scripted, "scripted"),
        (&wrapped, "claude"),
        (&bash_c, "codex"),
        (&niced, "gemini"),
        (&exec_wrapped, "claude"),
        (&npx, "claude"),
    ];

    let ui = server.start_agentwatch(160, 50, &[], &["-c", &cfg]);
    let screen = ui.wait_for("six running agents", *WAIT, |s| {
        running_on_screen(s) == Some(6)
    });
    for (pane, kind) in agents {
        assert!(
            screen.contains(&format!("{kind} · main:")) && screen.contains(pane.as_str()),
            "{kind} {pane}:\n{screen}"
        );
    }
    // One classification: status says the same.
    let rows = status_json(&server, &cfg);
    let running = rows
        .iter()
        .filter(|r| live_as_running(r["state"].as_str().unwrap_or_default()) == "running")
        .count();
    assert_eq!(running, 6, "{rows:#?}");
    for (pane, kind) in agents {
        assert_eq!(state_of(&rows, pane), "running");
        let row = rows.iter().find(|r| r["pane_id"] == pane.as_str()).unwrap();
        assert_eq!(row["agent"], kind);
    }

    // The script agent ends with 3; the wrapped claude with 4, passed on by its wrapper;
    // codex ends while its bash -c lives on.
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    ui.wait_for("one agent left running", *WAIT, |s| {
        running_on_screen(s) == Some(1)
            && s.contains("process exited (code 3)")
            && s.contains("process exited (code 4)")
            && s.contains("process exited (code unknown)")
    });
    assert!(server.pane_exists(&bash_c), "bash -c lives on");
    assert_eq!(server.pane_field(&bash_c, "#{pane_dead}"), "0");
    let rows = status_json(&server, &cfg);
    assert_eq!(state_of(&rows, &scripted), "exited");
    assert_eq!(state_of(&rows, &wrapped), "exited");
    assert_eq!(state_of(&rows, &bash_c), "unknown");
    assert_eq!(state_of(&rows, &niced), "running");
    let code = |pane: &str| {
        rows.iter()
            .find(|r| r["pane_id"] == pane)
            .map(|r| r["exit_code"].clone())
    };
    assert_eq!(code(&scripted), Some(serde_json::json!(3)));
    assert_eq!(code(&wrapped), Some(serde_json::json!(4)));
    assert_eq!(code(&bash_c), Some(serde_json::Value::Null));
    // Exec'd: the pane died with claude's own 4. Under npx: npx's exit, 4, is the pane's.
    assert_eq!(code(&exec_wrapped), Some(serde_json::json!(4)));
    assert_eq!(code(&npx), Some(serde_json::json!(4)));
    let on_screen = running_on_screen(&ui.screen()).unwrap();
    assert_eq!(
        rows.iter()
            .filter(|r| live_as_running(r["state"].as_str().unwrap_or_default()) == "running")
            .count(),
        on_screen
    );
}

#[test]
fn a_wrapper_that_passes_its_arguments_is_run_again_to_resume() {
    let server = TmuxServer::start();
    let cfg = config(&server);
    script(
        &server,
        "cc",
        "#!/bin/bash\nclaude --dangerously-skip-permissions \"$@\"\nexit $?\n",
    );
    server.write_plan("claude", "say working\nsleep 1500\nexit 1\n---\nhang\n");
    let pane = server.new_window(&["cc", "--session-id", ID]);
    let ui = server.start_agentwatch(120, 40, &[], &["-c", &cfg]);
    let wrapper = server.bin_dir.join("cc");
    let screen = ui.wait_for_text("process exited (code 1)", *WAIT);
    let expect = format!(
        "r runs: /bin/bash {} --resume {}",
        wrapper.display(),
        &ID[..8]
    );
    assert!(
        screen.contains(&expect),
        "the card says what r runs:\n{screen}"
    );
    ui.send_keys(&["r"]);
    let runs = server.wait_log(&pane, 2);
    assert_eq!(
        runs[1]["argv"],
        serde_json::json!(["--dangerously-skip-permissions", "--resume", ID]),
        "claude resumed through its wrapper"
    );
}

#[test]
fn an_agent_that_ended_under_a_living_bash_c_is_not_relaunched_over_it() {
    let server = TmuxServer::start();
    let cfg = config(&server);
    server.write_plan("claude", "sleep 1000\nexit 2\n");
    let pane = server.new_window(&[
        "bash",
        "-c",
        &format!("claude --session-id {ID}; sleep 100000"),
    ]);
    let ui = server.start_agentwatch(140, 40, &[], &["-c", &cfg]);
    ui.wait_for_text("process exited (code unknown)", *WAIT);
    // `bash -c` exec'd its last command: the sleep is what runs in the pane now.
    let screen = ui.wait_for_text("claude ended, but sleep still runs in the pane", *WAIT);
    ui.send_keys(&["r"]);
    // A span, not a wait: nothing marks the end of "r starts nothing".
    crate::support::holds_for("r starts nothing", Duration::from_secs(1), || {
        server.log_entries_for(&pane).len() == 1
    });
    assert_eq!(server.log_entries_for(&pane).len(), 1, "{screen}");
}
