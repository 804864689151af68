//! The list-panes parser against output recorded from a real tmux 3.3a server
//! (tests/fixtures/list-panes-tmux-3.3a.bin): a live pane with agentwatch options, an exit
//! code, a signal, a window name and path with quotes, `#{}`, unicode, a tab and a newline,
//! and a pane whose exit status tmux lost (the lost-SIGCHLD bug, caught in the recording).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use agentwatch::pane::{Exit, PaneId};
use agentwatch::tmux::format::parse_listing;
use agentwatch::tmux::words::command_words;

const RECORDED: &[u8] = include_bytes!("fixtures/list-panes-tmux-3.3a.bin");

#[test]
fn every_recorded_pane_parses_with_nothing_malformed() {
    let l = parse_listing(RECORDED);
    assert_eq!(l.malformed, 0);
    assert_eq!(l.panes.len(), 5);
    assert!(l.server_pid.is_some());
}

#[test]
fn a_live_pane_and_its_agentwatch_options() {
    let l = parse_listing(RECORDED);
    let p = &l.panes[0];
    assert_eq!(p.id, PaneId(0));
    assert_eq!(p.target(), "main:0.0");
    assert!(!p.dead);
    assert_eq!(p.exit(), None);
    assert_eq!(p.current_command, "sleep");
    assert_eq!(p.opt_agent, "claude");
    assert_eq!(p.opt_cwd, "/home/u/a b;");
    assert_eq!(p.opt_args, r#"["--model","x y"]"#);
    assert!(p.remain_on_exit);
}

#[test]
fn exit_code_and_signal() {
    let l = parse_listing(RECORDED);
    assert_eq!(l.panes[1].exit(), Some(Exit::Code(3)));
    assert_eq!(l.panes[1].window_name, "exit 3");
    assert!(l.panes[1].dead_time.is_some());
    assert_eq!(
        l.panes[1].current_path, "",
        "tmux forgets the path of a dead pane"
    );
    assert_eq!(l.panes[2].exit(), Some(Exit::Signal(9)));
    assert_eq!(
        l.panes[2].exit().map(|e| e.describe()).as_deref(),
        Some("killed by signal 9 (SIGKILL)")
    );
    assert_eq!(
        command_words(&l.panes[2].start_command),
        ["sh", "-c", "kill -9 $$"]
    );
}

#[test]
fn hostile_names_and_paths_survive_intact() {
    let l = parse_listing(RECORDED);
    let p = &l.panes[3];
    assert_eq!(p.window_name, "we \"ird\" #{pane_id} ünï\ttab");
    assert!(
        p.start_path
            .ends_with("/dir with \"quotes\" #{x} ünï\nline"),
        "{:?}",
        p.start_path
    );
    assert_eq!(
        command_words(&p.start_command),
        ["sleep", "1000", "it's", "x;"]
    );
}

#[test]
fn a_lost_exit_status_is_dead_without_an_exit_never_running() {
    let l = parse_listing(RECORDED);
    let p = &l.panes[4];
    assert!(p.dead);
    assert_eq!(
        (p.dead_status, p.dead_signal, p.dead_time),
        (None, None, None)
    );
    assert_eq!(p.exit(), None);
    assert_eq!(
        command_words(&p.start_command),
        ["claude-not-installed", "--resume", "1234"]
    );
}

#[test]
fn any_truncation_of_the_recording_never_panics_and_never_invents_panes() {
    for cut in 0..RECORDED.len() {
        let l = parse_listing(&RECORDED[..cut]);
        assert!(l.panes.len() <= 5);
    }
}
