//! Two agentwatch instances on one server, both with auto-resume on, against one crash
//! loop: every death is resumed exactly once, and the loop is resumed exactly
//! max_attempts times in all.

use std::time::{Duration, Instant};

use crate::support::{TmuxServer, LONG};
use agentwatch::adapters::poll::Prober;
use agentwatch::adapters::tmux::client::Tmux;
use agentwatch::config::Config;
use agentwatch::core::card::Auto;
use agentwatch::core::pane::PaneId;
use agentwatch::core::state::State;
use agentwatch::core::supervisor::Hold;
use agentwatch::run::elector::Elector;
use agentwatch::run::{look_once, Io};

fn instance(server: &TmuxServer, name: &str) -> (State, Io) {
    let mut config = Config::default();
    config.auto_resume.backoff_secs = vec![1];
    let tmux =
        Tmux::new(server.socket.clone(), Duration::from_secs(5)).with_env(server.env_pairs());
    let mut state = State::new(&config, false, String::new(), (200, 50));
    // Both take part in the election, as two dashboards do: one supervises at a time.
    state.supervision.elect = true;
    state.supervision.supervising = false;
    // Two instances of this one process, each with a claim of its own (a nonce of its own).
    let io = Io::new(Prober::new(tmux), Some(server.dir.path().join(name)))
        .with_stores(server.stores())
        .with_journal(Some(server.dir.path().join("journal.jsonl")))
        .with_elector(Elector::for_me(false, 0));
    (state, io)
}

#[tokio::test]
async fn two_instances_never_relaunch_a_death_twice() {
    let server = TmuxServer::start();
    // It dies at once, every time: a relaunch of one death can meet the next one.
    server.write_plan("claude", "sleep 500\nexit 1\n---\nexit 1\n");
    let pane = server.spawn_agent("claude");
    let id = PaneId::parse(&pane).unwrap();
    let (mut a, io_a) = instance(&server, "a");
    let (mut b, io_b) = instance(&server, "b");
    let gave_up = |s: &State| {
        s.cards
            .iter()
            .any(|c| c.pane.id == id && matches!(c.auto, Auto::Held(Hold::GaveUp { .. })))
    };
    let end = Instant::now() + *LONG;
    while Instant::now() < end && !(gave_up(&a) && gave_up(&b)) {
        // Interleaved, as two terminals would run them: the pauses are their paces, the
        // loop's end is the wait.
        look_once(&mut a, &io_a).await;
        tokio::time::sleep(Duration::from_millis(40)).await;
        look_once(&mut b, &io_b).await;
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    // Let any straggler act: twenty more rounds (a span, not a wait: nothing marks
    // "never"), in none of which a fifth run may start.
    for round in 0..20 {
        look_once(&mut a, &io_a).await;
        look_once(&mut b, &io_b).await;
        let runs = server.log_entries_for(&pane).len();
        assert!(runs <= 4, "round {round} of the span: {runs} runs");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let runs = server.log_entries_for(&pane);
    assert_eq!(
        runs.len(),
        4,
        "1 run + exactly 3 resumes, whoever did them: {runs:#?}"
    );
    assert!(gave_up(&a) && gave_up(&b), "both show that it gave up");
    // One supervisor at a time: every death, resume and give-up journaled exactly once.
    let journal = std::fs::read_to_string(server.dir.path().join("journal.jsonl")).unwrap();
    let count = |kind: &str| {
        journal
            .lines()
            .filter(|l| l.contains(&format!("\"event\":\"{kind}\"")))
            .count()
    };
    assert_eq!(count("died"), 4, "{journal}");
    assert_eq!(count("resumed"), 3, "{journal}");
    assert_eq!(count("gave_up"), 1, "{journal}");
}
