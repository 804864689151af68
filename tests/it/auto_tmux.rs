//! Auto-resume against a real tmux server: a crash loop is resumed exactly max_attempts
//! times with the same id and then left dead with the gave-up notice; a clean exit is never
//! resumed; restarting agentwatch mid-backoff does not reset the count.

use std::time::Duration;

use crate::support::{self, TmuxServer, LONG, WAIT};
use agentwatch::core::card::{Auto, Card};
use agentwatch::core::pane::PaneId;
use agentwatch::core::state::State;
use agentwatch::core::supervisor::Hold;
use agentwatch::run::{look_once, Io};

fn watcher(server: &TmuxServer, backoff: &[u64]) -> (State, Io) {
    server.supervisor(backoff)
}

fn card<'a>(state: &'a State, pane: &str) -> &'a Card {
    let id = PaneId::parse(pane).unwrap();
    state.cards.iter().find(|c| c.pane.id == id).unwrap()
}

fn gave_up(state: &State, pane: &str) -> bool {
    matches!(
        card(state, pane).auto,
        Auto::Held(Hold::GaveUp { attempts: 3, .. })
    )
}

fn journal_events(server: &TmuxServer) -> Vec<String> {
    agentwatch::adapters::store::journal::read(&server.dir.path().join("journal.jsonl"))
        .into_iter()
        .map(|e| e.event)
        .collect()
}

#[tokio::test]
async fn a_crash_loop_is_resumed_exactly_three_times_with_the_same_id_then_given_up() {
    let server = TmuxServer::start();
    // It crashes a moment after every start, resumed or not.
    server.write_plan("claude", "say up\nsleep 150\nexit 1\n");
    let pane = server.spawn_agent("claude");
    let (mut state, io) = watcher(&server, &[1]);
    support::look_until(&mut state, &io, *LONG, |s| {
        s.cards.iter().any(|c| c.pane.id.to_string() == pane) && gave_up(s, &pane)
    })
    .await;
    assert!(gave_up(&state, &pane), "{:?}", card(&state, &pane).auto);
    // Stays given up: nothing else is started (a span, not a wait: room for a wrong fifth
    // run after the 1 s backoff).
    support::looks_hold(
        &mut state,
        &io,
        "nothing is started after the give-up",
        Duration::from_secs(2),
        |_| server.log_entries_for(&pane).len() <= 4,
    )
    .await;
    let runs = server.log_entries_for(&pane);
    assert_eq!(runs.len(), 4, "the first run and exactly 3 resumes");
    let id = runs[0]["argv"][1].as_str().unwrap().to_string();
    for run in &runs[1..] {
        assert_eq!(run["argv"], serde_json::json!(["--resume", id]));
    }
    let ev = journal_events(&server);
    assert_eq!(ev.iter().filter(|e| *e == "resumed").count(), 3, "{ev:?}");
    assert_eq!(ev.iter().filter(|e| *e == "gave_up").count(), 1, "{ev:?}");
    assert_eq!(ev.iter().filter(|e| *e == "died").count(), 4, "{ev:?}");
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_attempts}"), "3");
}

#[tokio::test]
async fn a_clean_exit_is_never_resumed() {
    let server = TmuxServer::start();
    server.write_plan("gemini", "sleep 200\nexit 0\n");
    let pane = server.spawn_agent("gemini");
    let (mut state, io) = watcher(&server, &[1]);
    support::look_until(&mut state, &io, *WAIT, |s| {
        s.cards
            .iter()
            .any(|c| c.pane.id.to_string() == pane && c.life.is_finished())
    })
    .await;
    assert!(card(&state, &pane).life.is_finished());
    // A span, not a wait: long past the 1 s backoff a resume would come after.
    support::looks_hold(
        &mut state,
        &io,
        "the clean exit is not resumed",
        Duration::from_secs(5),
        |_| server.log_entries_for(&pane).len() == 1,
    )
    .await;
    assert!(card(&state, &pane).life.is_finished());
}

#[tokio::test]
async fn restarting_agentwatch_mid_backoff_does_not_reset_the_count() {
    let server = TmuxServer::start();
    server.write_plan("claude", "sleep 150\nexit 1\n");
    let pane = server.spawn_agent("claude");
    // The first agentwatch resumes once, then is stopped while attempt 2 waits (3 s).
    {
        let (mut state, io) = watcher(&server, &[1, 3]);
        support::look_until(&mut state, &io, *WAIT, |s| {
            matches!(card(s, &pane).auto, Auto::Scheduled { attempt: 2, .. })
        })
        .await;
        assert!(matches!(
            card(&state, &pane).auto,
            Auto::Scheduled { attempt: 2, .. }
        ));
    }
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_attempts}"), "1");
    assert!(!server.pane_field(&pane, "#{@agentwatch_next}").is_empty());
    // A new agentwatch takes the pending resume up and gives up after the third.
    let (mut state, io) = watcher(&server, &[1, 3]);
    look_once(&mut state, &io).await;
    assert!(matches!(
        card(&state, &pane).auto,
        Auto::Scheduled { attempt: 2, .. }
    ));
    support::look_until(&mut state, &io, *LONG, |s| gave_up(s, &pane)).await;
    assert!(gave_up(&state, &pane), "{:?}", card(&state, &pane).auto);
    assert_eq!(
        server.log_entries_for(&pane).len(),
        4,
        "1 run + 3 resumes in all"
    );
}

/// An upgrade that replaced the agent under it, and crashed it, may be half done when the
/// first attempt comes: that attempt says why and starts nothing, and a later one resumes.
#[tokio::test]
async fn an_attempt_while_the_program_is_gone_says_why_and_a_later_one_resumes() {
    let server = TmuxServer::start();
    server.write_plan("claude", "say up\nsleep 300\nexit 1\n---\nsay back\nhang\n");
    let pane = server.spawn_agent("claude");
    let first = server.wait_log(&pane, 1);
    let id = first[0]["argv"][1].as_str().unwrap().to_string();
    let (installed, aside) = (
        server.bin_dir.join("claude"),
        server.dir.path().join("claude-aside"),
    );
    std::fs::rename(&installed, &aside).unwrap();
    let (mut state, io) = watcher(&server, &[1]);
    let failed = |server: &TmuxServer| {
        agentwatch::adapters::store::journal::read(&server.dir.path().join("journal.jsonl"))
            .into_iter()
            .find(|e| e.event == "resume_failed")
    };
    support::look_until(&mut state, &io, *WAIT, |_| failed(&server).is_some()).await;
    let ev = failed(&server).expect("an attempt failed");
    assert_eq!(
        ev.detail.as_deref(),
        Some("claude is not on agentwatch's PATH, which the pane gets")
    );
    assert_eq!(server.log_entries_for(&pane).len(), 1, "nothing ran");
    std::fs::rename(&aside, &installed).unwrap();
    support::look_until(&mut state, &io, *WAIT, |_| {
        server.log_entries_for(&pane).len() == 2
    })
    .await;
    let runs = server.log_entries_for(&pane);
    assert_eq!(runs.len(), 2, "{:?}", card(&state, &pane).auto);
    assert_eq!(runs[1]["argv"], serde_json::json!(["--resume", id]));
}
