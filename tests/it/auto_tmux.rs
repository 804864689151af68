//! Auto-resume against a real tmux server: a crash loop is resumed exactly max_attempts
//! times with the same id and then left dead with the gave-up notice; a clean exit is never
//! resumed; restarting agentwatch mid-backoff does not reset the count.

use std::time::{Duration, Instant};

use crate::support::TmuxServer;
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

/// Looks every 100 ms until `done` or the deadline.
async fn watch_until(state: &mut State, io: &Io, secs: u64, mut done: impl FnMut(&State) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        look_once(state, io).await;
        if done(state) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
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
    watch_until(&mut state, &io, 30, |s| {
        s.cards.iter().any(|c| c.pane.id.to_string() == pane) && gave_up(s, &pane)
    })
    .await;
    assert!(gave_up(&state, &pane), "{:?}", card(&state, &pane).auto);
    // Stays given up: nothing else is started.
    watch_until(&mut state, &io, 2, |_| false).await;
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
    watch_until(&mut state, &io, 5, |_| false).await;
    assert!(card(&state, &pane).life.is_finished());
    assert_eq!(server.log_entries_for(&pane).len(), 1);
}

#[tokio::test]
async fn restarting_agentwatch_mid_backoff_does_not_reset_the_count() {
    let server = TmuxServer::start();
    server.write_plan("claude", "sleep 150\nexit 1\n");
    let pane = server.spawn_agent("claude");
    // The first agentwatch resumes once, then is stopped while attempt 2 waits (3 s).
    {
        let (mut state, io) = watcher(&server, &[1, 3]);
        watch_until(&mut state, &io, 20, |s| {
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
    watch_until(&mut state, &io, 30, |s| gave_up(s, &pane)).await;
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
    watch_until(&mut state, &io, 20, |_| failed(&server).is_some()).await;
    let ev = failed(&server).expect("an attempt failed");
    assert_eq!(
        ev.detail.as_deref(),
        Some("claude is not on agentwatch's PATH, which the pane gets")
    );
    assert_eq!(server.log_entries_for(&pane).len(), 1, "nothing ran");
    std::fs::rename(&aside, &installed).unwrap();
    watch_until(&mut state, &io, 20, |_| {
        server.log_entries_for(&pane).len() == 2
    })
    .await;
    let runs = server.log_entries_for(&pane);
    assert_eq!(runs.len(), 2, "{:?}", card(&state, &pane).auto);
    assert_eq!(runs[1]["argv"], serde_json::json!(["--resume", id]));
}
