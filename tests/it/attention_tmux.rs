//! Knowing when an agent needs its user (issue 17), against a real tmux: an agent that
//! stops at a permission prompt is `waiting for input` on its card, in the header and in
//! `status --json`, journaled and kept in `@agentwatch_state` once per edge, and is not
//! once it writes again after the prompt is answered.

use crate::support::{TmuxServer, LONG, WAIT};

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
    // and more work: its spinner line drawn every 100 ms for a second (a single burst
    // would be a redraw, not work), then its output in place of it.
    let spinning = "say ✻ Running rm -rf build… (esc to interrupt)\nsleep 100\n".repeat(10);
    server.write_plan(
        "claude",
        &format!(
            "print 20\nsay ╭─ Bash command: rm -rf build\nsay │ Do you want to proceed?\n\
             say │ ❯ 1. Yes   2. No\nwait answered\nclear\n{spinning}clear\nprint 5\nhang\n"
        ),
    );
    // Another agent, quiet with nothing for its user on screen (its own plan, written
    // before it starts).
    server.write_plan("codex", "print 3\nhang\n");
    let busy = server.new_window(&["codex"]);
    let pane = server.new_window(&["claude"]);
    // Both drawn before agentwatch looks (a loaded machine starts them slowly).
    server.wait_until("the prompt is drawn", *WAIT, || {
        server.capture(&pane).contains("Do you want to proceed?")
            && server.capture(&busy).contains("line 3")
    });
    let ui = server.start_agentwatch(120, 40, &[], &[]);
    let screen = ui.wait_for_text("waiting for input", *WAIT);
    assert!(screen.contains("(1 waiting)"), "{screen}");
    assert!(screen.contains("Do you want to proceed?"), "{screen}");
    let row = status_row(&server, &pane);
    assert_eq!(row["state"], "waiting", "{row}");
    assert_eq!(row["waiting_for"], "Do you want to proceed?", "{row}");
    assert!(row["since"].is_string(), "{row}");
    // Journaled once by the supervisor (this dashboard), and on the pane for status lines.
    server.wait_until("the edge is journaled", *WAIT, || {
        server.journal_count("waiting", Some(&pane)) == 1
    });
    server.wait_until("the pane option follows", *WAIT, || {
        server.pane_field(&pane, "#{@agentwatch_state}") == "waiting"
    });
    // The other agent, quiet with neither a prompt nor its working line on screen, is idle
    // at its input box.
    assert_eq!(status_row(&server, &busy)["state"], "idle");
    // Answered: it writes again, and waits no more. tmux keeps a window's output time in
    // whole seconds, so output in the very second of the prompt cannot be told from it (no
    // person answers that fast; the test would): the answer waits for the clock to leave it.
    let prompted: u64 = server
        .pane_field(&pane, "#{window_activity}")
        .parse()
        .unwrap();
    server.wait_until("the second of the prompt is over", *WAIT, || {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        now.as_secs() > prompted
    });
    std::fs::write(server.agent_dir.join("answered"), "").unwrap();
    let screen = ui.wait_for("the wait to end", *WAIT, |s| {
        !s.contains("waiting for input") && !s.contains("waiting)")
    });
    assert!(screen.contains("2 running"), "{screen}");
    server.wait_until("the end of the wait is journaled", *WAIT, || {
        server.journal_count("working", Some(&pane)) == 1
    });
    // Its output over, it is idle at its input box.
    server.wait_until("idle", *WAIT, || {
        status_row(&server, &pane)["state"] == "idle"
            && server.pane_field(&pane, "#{@agentwatch_state}") == "idle"
    });
    assert_eq!(server.journal_count("waiting", Some(&pane)), 1);
    assert_eq!(server.journal_count("waiting", Some(&busy)), 0);
}

#[test]
fn claudes_own_state_file_says_working_waiting_and_idle_with_what_it_waits_for() {
    let server = TmuxServer::start();
    server.write_plan(
        "claude",
        "state busy\nprint 3\nwait asked\nstate waiting permission prompt\n\
         wait answered\nstate idle\nhang\n",
    );
    let pane = server.new_window(&["claude"]);
    server.wait_until("claude wrote its file", *WAIT, || {
        std::fs::read_dir(server.dir.path().join("claude/sessions"))
            .is_ok_and(|mut d| d.next().is_some())
    });
    let ui = server.start_agentwatch(120, 40, &[], &[]);
    server.wait_until("working, from its own file", *WAIT, || {
        let row = status_row(&server, &pane);
        row["state"] == "working" && row["told"] == "file"
    });
    std::fs::write(server.agent_dir.join("asked"), "").unwrap();
    // No output at all: the file alone says it (and wakes agentwatch: no tick to wait for).
    let screen = ui.wait_for_text("waiting for input", *WAIT);
    assert!(screen.contains("· permission prompt"), "{screen}");
    assert!(screen.contains("(1 waiting)"), "{screen}");
    let row = status_row(&server, &pane);
    assert_eq!(
        (&row["state"], &row["waiting_for"], &row["told"]),
        (
            &serde_json::json!("waiting"),
            &serde_json::json!("permission prompt"),
            &serde_json::json!("file")
        ),
        "{row}"
    );
    // explain names the source that decided and what the others say.
    let out = server
        .agentwatch_command(&["explain", &pane])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("now: waiting for input since")
            && text.contains("told by the agent's own state file: permission prompt"),
        "{text}"
    );
    assert!(
        text.contains(
            "1. the agent's own state file   waiting: permission prompt (claude's sessions/"
        ),
        "{text}"
    );
    assert!(
        text.contains("2. a hook's pane option         nothing: @pane_status is not set"),
        "{text}"
    );
    assert!(
        text.contains("4. its screen                   idle:"),
        "{text}"
    );
    let out = server
        .agentwatch_command(&["explain", "%99"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no pane %99 on this server"));
    std::fs::write(server.agent_dir.join("answered"), "").unwrap();
    ui.wait_for_text("· idle", *WAIT);
    assert_eq!(status_row(&server, &pane)["state"], "idle");
    // Each edge journaled once: working, waiting, idle. (Before the fake wrote its file, a
    // first look at its quiet screen may have said idle already: a machine under load starts
    // it slowly.)
    server.wait_until("each edge journaled once", *WAIT, || {
        let edges: Vec<String> = server
            .journal()
            .lines()
            .filter(|l| l.contains(&format!("\"pane\":\"{pane}\"")))
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|e| e["event"].as_str().map(str::to_string))
            .filter(|e| ["working", "waiting", "idle"].contains(&e.as_str()))
            .collect();
        let from_file = edges
            .iter()
            .skip_while(|e| *e == "idle")
            .map(String::as_str)
            .collect::<Vec<_>>();
        // The first, working, is journaled only if this dashboard was already elected to
        // supervise when it first saw the agent (under load the election can come later).
        from_file == ["working", "waiting", "idle"] || from_file == ["waiting", "idle"]
    });
}

#[test]
fn a_hook_plugins_pane_options_say_what_the_agent_does_until_they_are_unset() {
    let server = TmuxServer::start();
    server.write_plan("codex", "print 3\nhang\n");
    let pane = server.new_window(&["codex"]);
    server.wait_until("idle from its screen", *WAIT, || {
        status_row(&server, &pane)["state"] == "idle"
    });
    // As tmux-agent-sidebar's Notification hook writes them.
    server.tmux_ok(&["set-option", "-p", "-t", &pane, "@pane_status", "waiting"]);
    server.tmux_ok(&[
        "set-option",
        "-p",
        "-t",
        &pane,
        "@pane_wait_reason",
        "permission_prompt",
    ]);
    let row = status_row(&server, &pane);
    assert_eq!(row["state"], "waiting", "{row}");
    assert_eq!(row["waiting_for"], "permission_prompt", "{row}");
    assert_eq!(row["told"], "hook", "{row}");
    server.tmux_ok(&["set-option", "-p", "-t", &pane, "@pane_status", "running"]);
    let row = status_row(&server, &pane);
    assert_eq!(
        (&row["state"], &row["told"]),
        (&serde_json::json!("working"), &serde_json::json!("hook"))
    );
    // A word it does not know, or none: the screen decides again.
    server.tmux_ok(&["set-option", "-p", "-t", &pane, "@pane_status", "pondering"]);
    assert_eq!(status_row(&server, &pane)["state"], "idle");
    server.tmux_ok(&["set-option", "-p", "-u", "-t", &pane, "@pane_status"]);
    assert_eq!(status_row(&server, &pane)["state"], "idle");
}

/// `agentwatch hook AGENT EVENT` as an agent's hook runs it: the event's JSON on stdin, the
/// agent's environment (for claude, `$TMUX` and `$TMUX_PANE` of its pane).
fn run_hook(server: &TmuxServer, agent: &str, event: &str, pane: Option<&str>, json: &str) {
    use std::io::Write;
    let mut cmd = server.agentwatch();
    cmd.env("TMUX", server.tmux_env_value());
    match pane {
        Some(p) => cmd.env("TMUX_PANE", p),
        None => cmd.env_remove("TMUX_PANE"),
    };
    let mut child = cmd
        .args(["hook", agent, event])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json.as_bytes())
        .unwrap();
    assert!(
        child.wait().unwrap().success(),
        "a hook never fails its agent"
    );
}

#[test]
fn agentwatchs_own_hooks_install_run_and_uninstall() {
    let server = TmuxServer::start();
    // Installed into claude's settings, beside what the user has there.
    let settings = server.agent_store("claude").join("settings.json");
    let user = "{\n  \"model\": \"opus\"\n}\n";
    std::fs::write(&settings, user).unwrap();
    let out = server
        .agentwatch_command(&["hooks", "install", "claude"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("+ ") && said.contains("hook claude Notification"),
        "{said}"
    );
    let text = std::fs::read_to_string(&settings).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let command = v["hooks"]["Notification"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(command.ends_with(" hook claude Notification"), "{command}");

    // The hook, run as claude runs it, tells agentwatch the agent waits.
    server.write_plan("claude", "print 3\nhang\n");
    let pane = server.new_window(&["claude"]);
    run_hook(
        &server,
        "claude",
        "Notification",
        Some(&pane),
        r#"{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}"#,
    );
    let row = status_row(&server, &pane);
    assert_eq!(
        (&row["state"], &row["waiting_for"], &row["told"]),
        (
            &serde_json::json!("waiting"),
            &serde_json::json!("Claude needs your permission to use Bash"),
            &serde_json::json!("hook")
        ),
        "{row}"
    );
    run_hook(&server, "claude", "Stop", Some(&pane), "{}");
    let row = status_row(&server, &pane);
    assert_eq!(
        (&row["state"], &row["told"]),
        (&serde_json::json!("idle"), &serde_json::json!("hook"))
    );
    run_hook(&server, "claude", "SessionEnd", Some(&pane), "{}");
    assert_eq!(server.pane_field(&pane, "#{@pane_status}"), "");

    // codex's hooks run in its background server, whose $TMUX_PANE may be another pane's:
    // the session id agentwatch recorded on the pane finds it.
    server.write_plan("codex", "print 3\nhang\n");
    let codex = server.new_window(&["codex"]);
    let id = "5f0c2a7e-7d0b-4b7e-9a51-3c1b2d4e5f60";
    server.tmux_ok(&[
        "set-option",
        "-p",
        "-t",
        &codex,
        "@agentwatch_session_id",
        id,
    ]);
    run_hook(
        &server,
        "codex",
        "PermissionRequest",
        Some(&pane),
        &format!(r#"{{"session_id":"{id}","tool_name":"shell"}}"#),
    );
    assert_eq!(server.pane_field(&codex, "#{@pane_status}"), "waiting");
    assert_eq!(
        server.pane_field(&pane, "#{@pane_status}"),
        "",
        "not the pane in $TMUX_PANE"
    );

    // Uninstalled: exactly what was added is gone.
    let out = server
        .agentwatch_command(&["hooks", "uninstall", "claude"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), user);
}

/// The real CLIs' first-run dialogs, drawn as captured at 80x24 (issue 28, point 3): each
/// agent waits for its user, named by the dialog's question, even where that question sits
/// 13 lines above the bottom (gemini's folder trust).
#[test]
fn the_real_first_run_dialogs_at_80x24_are_waiting_for_input() {
    let server = TmuxServer::start();
    let screens = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/screens");
    let mut panes = Vec::new();
    for (agent, file, question) in [
        (
            "codex",
            "codex-0.171.0-trust-gitrepo-80x24.txt",
            "Trust this folder?",
        ),
        (
            "gemini",
            "gemini-0.61.0-trust-80x24.txt",
            "Do you trust the files in this folder?",
        ),
        (
            "claude",
            "claude-2.1.332-trust-80x24.txt",
            "Quick safety check: Is this a project you created or one you trust?",
        ),
    ] {
        server.write_plan(
            agent,
            &format!("screen {}\nhang\n", screens.join(file).display()),
        );
        let pane = server.new_window(&[agent]);
        server.tmux_ok(&["resize-window", "-t", &pane, "-x", "80", "-y", "24"]);
        server.wait_until("the dialog is drawn", *WAIT, || {
            server.capture(&pane).contains(question)
        });
        panes.push((pane, question));
    }
    for (pane, question) in panes {
        let row = status_row(&server, &pane);
        assert_eq!(row["state"], "waiting", "{row}");
        assert_eq!(row["waiting_for"], question, "{row}");
    }
}

#[test]
fn a_one_shot_status_with_no_supervisor_reads_every_screen_not_the_first_two_hundred() {
    let server = TmuxServer::start();
    server.write_plan("claude", "say │ Do you want to proceed?\nhang\n");
    let panes: Vec<String> = (0..230).map(|_| server.new_window(&["claude"])).collect();
    server.wait_until("every prompt is drawn", *LONG, || {
        panes
            .iter()
            .all(|p| server.capture(p).contains("Do you want to proceed?"))
    });
    let rows = server.status_rows();
    let states: std::collections::BTreeMap<String, usize> =
        rows.iter().fold(Default::default(), |mut m, r| {
            *m.entry(r["state"].as_str().unwrap_or("?").to_string())
                .or_default() += 1;
            m
        });
    assert_eq!(
        states,
        [("waiting".to_string(), 230)].into(),
        "every agent's screen read"
    );
}

#[test]
fn with_a_supervisor_status_says_what_it_decided_and_since_when() {
    let server = TmuxServer::start();
    // claude 2.1.197's permission prompt: a rule, what it asks, the question.
    let ran = server.dir.path().join("ran");
    server.write_plan(
        "claude",
        &format!(
            "print 3\nsay ────────────────────────\nsay Bash command\nsay\n\
             say rm -rf build/ #(touch {})\nsay Remove the build directory\nsay\n\
             say Do you want to proceed?\nsay ❯ 1. Yes\nsay 3. No\nhang\n",
            ran.display()
        ),
    );
    let pane = server.new_window(&["claude"]);
    let _ui = server.start_agentwatch(120, 40, &[], &[]);
    server.wait_until("the supervisor's verdict is on the pane", *WAIT, || {
        server
            .pane_field(&pane, "#{E:@agentwatch_verdict_fmt}")
            .starts_with("waiting ")
    });
    let verdict = server.pane_field(&pane, "#{E:@agentwatch_verdict_fmt}");
    // Kept in a hidden variable of the server's environment that the pane option names:
    // no set-option per edge (each makes tmux redo every window's size and redraw every
    // client), and kept out of what the server starts.
    let var = format!("AGENTWATCH_VERDICT_{}", &pane[1..]);
    assert_eq!(
        server.pane_field(&pane, "#{@agentwatch_verdict_fmt}"),
        format!("#{{{var}}}")
    );
    assert_eq!(
        server
            .tmux_ok(&["show-environment", "-g", "-h", &var])
            .trim(),
        format!("{var}={verdict}")
    );
    let shell = server.new_window(&["sh", "-c", "env; sleep 60"]);
    server.wait_until("a new pane's environment", *WAIT, || {
        server.capture(&shell).contains("TMUX_PANE=")
    });
    assert!(!server.capture(&shell).contains("AGENTWATCH_VERDICT"));
    // What the prompt asks is text: its `#(...)` is never run as a format's job.
    assert!(verdict.contains("#(touch "), "{verdict}");
    assert!(!server.dir.path().join("ran").exists());
    let since: u64 = verdict.split(' ').nth(1).unwrap().parse().unwrap();
    let told = verdict.split(' ').nth(2).unwrap().to_string();
    let want = agentwatch::core::time::rfc3339(since, &jiff::tz::TimeZone::UTC);
    // Any reader, any time later: the same word, the same since, the same source.
    for _ in 0..2 {
        let row = status_row(&server, &pane);
        assert_eq!(row["state"], "waiting", "{row}");
        assert_eq!(row["since"], want.as_str(), "{row} / {verdict}");
        assert_eq!(row["told"], told.as_str(), "{row}");
        assert_eq!(row["waiting_for"], "Do you want to proceed?", "{row}");
        assert_eq!(
            row["asks"],
            format!(
                "Bash command · rm -rf build/ #(touch {}) · Remove the build directory",
                ran.display()
            )
            .as_str(),
            "{row}"
        );
        std::thread::sleep(std::time::Duration::from_millis(1_100));
    }
    // The pane gone, its variable goes too.
    server.tmux_ok(&["kill-pane", "-t", &pane]);
    server.wait_until("its verdict unset", *WAIT, || {
        !String::from_utf8_lossy(&server.tmux(&["show-environment", "-g", "-h"]).stdout)
            .contains(&var)
    });
}

#[test]
fn a_dashboard_opened_later_says_the_same_age_as_the_supervisor() {
    let server = TmuxServer::start();
    // Working, its spinner redrawn, for half a minute.
    server.write_plan("claude", "churn 30 30\n");
    let pane = server.new_window(&["claude"]);
    let first = server.start_agentwatch(120, 40, &[], &[]);
    first.wait_for_text("· working", *WAIT);
    server.wait_until("the supervisor's verdict is on the pane", *WAIT, || {
        server
            .pane_field(&pane, "#{E:@agentwatch_verdict_fmt}")
            .starts_with("working ")
    });
    std::thread::sleep(std::time::Duration::from_secs(6));
    // A second dashboard, beside the first: the work began 6 s ago for it too.
    let second = server.start_agentwatch_named("ui2", 120, 40, &[], &[]);
    let age = |screen: &str| -> Option<u64> {
        let at = screen.find("· working ")? + "· working ".len();
        screen[at..].split('s').next()?.trim().parse().ok()
    };
    let screen = second.wait_for("its age", *WAIT, |s| age(s).is_some());
    let (later, then) = (age(&screen).unwrap(), age(&first.screen()).unwrap_or(0));
    assert!(
        later >= 5,
        "the second dashboard says working {later}s:\n{screen}"
    );
    assert!(later.abs_diff(then) <= 2, "{later}s against {then}s");
}
