//! agentwatch's own files (journal, roster, crash records) that cannot be written: said in
//! the dashboard's header until they can be, and by doctor, which tries each as it will be
//! written.

use crate::support::daemon::doctor;
use crate::support::{TmuxServer, WAIT};

#[test]
fn a_journal_path_that_is_a_directory_is_said_in_the_header_and_by_doctor() {
    let server = TmuxServer::start();
    server.write_plan("claude", "wait go\nexit 1\n");
    let cfg = server.dir.path().join("cfg.toml");
    std::fs::write(
        &cfg,
        "[auto_resume]\nbackoff_secs = [1]\n[notify]\nbell = false\n",
    )
    .unwrap();
    let (_, state) = server.xdg();
    let journal = std::path::Path::new(&state).join("agentwatch/journal.jsonl");
    std::fs::create_dir_all(&journal).unwrap();
    let report = doctor(&server);
    assert!(
        report.contains(&format!(
            "✖ journal: {}: it is not a regular file",
            journal.display()
        )),
        "{report}"
    );
    server.spawn_agent("claude");
    let ui = server.start_agentwatch(160, 30, &[], &["-c", cfg.to_str().unwrap()]);
    ui.wait_for_text("● running", *WAIT);
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    let screen = ui.wait_for_text("not written", *WAIT);
    let header = screen.lines().next().unwrap_or_default();
    assert!(
        header.contains("journal") && header.contains("Is a directory"),
        "{screen}"
    );
    // At 80 columns too.
    ui.resize(80, 24);
    let screen = ui.wait_for_text("journal not written", *WAIT);
    assert!(
        screen
            .lines()
            .next()
            .unwrap_or_default()
            .contains("Is a directory"),
        "{screen}"
    );
}
