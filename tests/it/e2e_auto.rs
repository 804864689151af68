//! End to end: auto-resume's inline notices on the real screen.

use crate::support::{TmuxServer, WAIT};

#[test]
fn the_countdown_then_the_resumed_notice_then_the_gave_up_banner_appear_on_screen() {
    let server = TmuxServer::start();
    server.write_plan(
        "claude",
        "say hello\nwait go\nexit 1\n---\nsay again\nsleep 300\nexit 1\n",
    );
    server.spawn_agent("claude");
    let cfg = server.dir.path().join("cfg.toml");
    std::fs::write(&cfg, "[auto_resume]\nbackoff_secs = [2, 1]\n").unwrap();
    let home = server.dir.path().to_string_lossy().into_owned();
    let (data, state) = (format!("{home}/data"), format!("{home}/state"));
    let sock = server.socket.to_string_lossy().into_owned();
    let ui = server.start_ui_env(
        100,
        30,
        &[("XDG_DATA_HOME", &data), ("XDG_STATE_HOME", &state)],
        &[
            env!("CARGO_BIN_EXE_agentwatch"),
            "-S",
            &sock,
            "-c",
            cfg.to_str().unwrap(),
        ],
    );
    ui.wait_for_text("● running", *WAIT);
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    let screen = ui.wait_for_text("exit 1 · auto-resume 1/3 in", *WAIT);
    assert!(screen.contains("1 resuming"), "{screen}");
    ui.wait_for_text("resumed (attempt 1/3)", *WAIT);
    let screen = ui.wait_for_text(
        "auto-resume gave up after 3 attempts: press r to relaunch",
        *WAIT,
    );
    assert!(screen.contains("process exited (code 1)"), "{screen}");
    assert!(screen.contains("1 gave up"), "{screen}");
    // The journal is under the XDG state dir.
    let journal = std::fs::read_to_string(format!("{state}/agentwatch/journal.jsonl")).unwrap();
    assert_eq!(
        journal
            .lines()
            .filter(|l| l.contains("\"event\":\"resumed\""))
            .count(),
        3
    );
}
