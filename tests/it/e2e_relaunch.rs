//! End to end: the real binary in a second tmux server; `r` pressed with send-keys resumes
//! the same session, including an id found only in codex's exit line.

use crate::support::argv;

use std::time::Duration;

use crate::support::{TmuxServer, WAIT};

const ID: &str = "0199a213-81c0-7800-8aa1-bbab2a035a53";

/// A config with auto-resume off: these tests press r themselves.
fn no_auto(server: &TmuxServer) -> String {
    let path = server.dir.path().join("no-auto.toml");
    std::fs::write(&path, "[auto_resume]\nenabled = false\n").unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn r_resumes_a_crashed_codex_with_the_id_from_its_exit_line() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan(
        "codex",
        &format!("say working\nwait go\ncodex-exit-line {ID}\nsleep 100\nexit 1\n---\nsay back again\nhang\n"),
    );
    let pane = server.new_window(&["codex"]);
    let home = server.dir.path().to_string_lossy().into_owned();
    let codex_home = format!("{home}/codex-home");
    let (data, _) = server.xdg();
    let ui = server.start_agentwatch(
        100,
        30,
        &[("CODEX_HOME", &codex_home)],
        &["-c", &no_auto(&server)],
    );
    ui.wait_for_text("● running", *WAIT);
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    ui.wait_for_text("process exited (code 1)", *WAIT);
    // The id is found in the dead pane's output and recorded on the pane.
    ui.wait_for_text(&format!("id {}", &ID[..8]), *WAIT);
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_session_id}"), ID);

    ui.send_keys(&["r"]);
    ui.wait_for_text(&format!("resumed {}", &ID[..8]), *WAIT);
    ui.wait_for_text("● running", *WAIT);
    let runs = server.wait_log(&pane, 2);
    assert_eq!(runs.len(), 2);
    assert_eq!(argv(&runs[1]), ["resume", ID]);
    // The crash record is under the XDG data dir and holds the last words.
    let dir = std::path::Path::new(&data).join("agentwatch/crashes");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "{dir:?}");
    let text = std::fs::read_to_string(files[0].path()).unwrap();
    assert!(text.contains("codex resume"), "{text}");
    ui.send_keys(&["q"]);
    assert_eq!(ui.wait_exit(*WAIT), "status 0");
}

#[test]
fn r_on_a_claude_without_an_id_says_so_and_starts_nothing() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan("claude", "wait go\nexit 1\n---\nhang\n");
    let pane = server.new_window(&["claude"]);
    let claude = format!("{}/claude-config", server.dir.path().display());
    let ui = server.start_agentwatch(
        80,
        24,
        &[("CLAUDE_CONFIG_DIR", &claude)],
        &["-c", &no_auto(&server)],
    );
    ui.wait_for_text("● running", *WAIT);
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    ui.wait_for_text("no session id: R starts a fresh session", *WAIT);
    ui.send_keys(&["r"]);
    // A span, not a wait: nothing marks the end of "r starts nothing".
    crate::support::holds_for("r starts nothing", Duration::from_millis(600), || {
        server.log_entries_for(&pane).len() == 1
    });
    assert_eq!(
        server.log_entries_for(&pane).len(),
        1,
        "r never starts anything without an id"
    );
    assert_eq!(server.pane_field(&pane, "#{pane_dead}"), "1");
    ui.send_keys(&["R"]);
    ui.wait_for_text("started fresh: new session", *WAIT);
    assert_eq!(argv(&server.wait_log(&pane, 2)[1])[0], "--session-id");
}

#[test]
fn s_starts_a_new_agent_from_the_dashboard_where_the_selected_one_works() {
    let server = TmuxServer::start();
    server.write_plan("claude", "say ready\nhang\n");
    let first = server.new_window(&["claude"]);
    // tmux 3.5a says a new pane's directory only once it has read it.
    server.wait_until("the first pane's directory", *WAIT, || {
        !server.pane_field(&first, "#{pane_current_path}").is_empty()
    });
    let dir = server.pane_field(&first, "#{pane_current_path}");
    let ui = server.start_agentwatch(100, 30, &[], &["-c", &no_auto(&server)]);
    ui.wait_for_text("● running", *WAIT);
    ui.send_keys(&["s"]);
    ui.wait_for_text("start an agent", *WAIT);
    // The window's name, then Enter.
    ui.send_keys(&["Tab", "Tab"]);
    ui.send_text("second");
    ui.send_keys(&["Enter"]);
    // A window of its own in the session spawn uses, with what resuming it needs recorded.
    let deadline = std::time::Instant::now() + *WAIT;
    let pane = loop {
        let out = server.tmux_ok(&[
            "list-panes",
            "-a",
            "-F",
            "#{session_name} #{window_name} #{pane_id}",
        ]);
        if let Some(l) = out.lines().find(|l| l.starts_with("agents second ")) {
            break l.rsplit(' ').next().unwrap().to_string();
        }
        assert!(std::time::Instant::now() < deadline, "no new window: {out}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_agent}"), "claude");
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_cwd}"), dir);
    let id = server.pane_field(&pane, "#{@agentwatch_session_id}");
    let runs = server.wait_log(&pane, 1);
    assert_eq!(argv(&runs[0]), ["--session-id", id.as_str()]);
    // It shows, selected (its card is the one drawn thick), and the form is gone.
    ui.wait_for(&format!("{pane} selected"), *WAIT, |screen| {
        !screen.contains("start an agent")
            && screen
                .lines()
                .any(|l| l.starts_with('┏') && l.contains(&format!("· {pane}")))
    });
    ui.send_keys(&["q"]);
    assert_eq!(ui.wait_exit(*WAIT), "status 0");
}
