//! A pane's records belong to what runs in it (issue 26), against a real tmux server: an
//! agent put in a pane by another hand (`respawn-pane -k`) is its own agent, never resumed
//! as the one before it; at a shell prompt, the last run's session id is the one resumed.

use std::time::{Duration, Instant};

use crate::support::{self, argv, TmuxServer};
use agentwatch::config::Config;
use agentwatch::core::card::{Auto, Card, Life};
use agentwatch::core::msg::Action;
use agentwatch::core::pane::PaneId;
use agentwatch::core::state::State;
use agentwatch::core::supervisor::Hold;
use agentwatch::run::{look_once, Io};

const A: &str = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
const B: &str = "7d3f0c2e-1111-4a43-9d55-3f1f1b7f0a22";

fn card<'a>(state: &'a State, pane: &str) -> Option<&'a Card> {
    let id = PaneId::parse(pane).unwrap();
    state.cards.iter().find(|c| c.pane.id == id)
}

/// Looks every 100 ms until `done`; panics after 20 s with the cards.
async fn until(state: &mut State, io: &Io, what: &str, mut done: impl FnMut(&State) -> bool) {
    let end = Instant::now() + Duration::from_secs(20);
    while Instant::now() < end {
        look_once(state, io).await;
        if done(state) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "timed out waiting until {what}: {:?}",
        state
            .cards
            .iter()
            .map(|c| (c.pane.id, &c.agent, c.life, &c.auto))
            .collect::<Vec<_>>()
    );
}

fn journal(server: &TmuxServer) -> Vec<agentwatch::core::msg::Event> {
    agentwatch::adapters::store::journal::read(&server.dir.path().join("journal.jsonl"))
}

#[tokio::test]
async fn a_codex_respawned_over_a_claude_by_hand_is_its_own_agent_never_claude_resumed() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    server.write_plan("codex", "wait go\nexit 1\n");
    let pane = server.new_window(&["claude", "--session-id", A]);
    let (mut state, io) = server.supervisor(&[1]);
    until(&mut state, &io, "claude's occupant is recorded", |_| {
        !server
            .pane_field(&pane, "#{@agentwatch_occupant}")
            .is_empty()
    })
    .await;
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_session_id}"), A);
    server.tmux_ok(&["respawn-pane", "-k", "-t", &pane, "codex"]);
    until(&mut state, &io, "the card is codex's", |s| {
        card(s, &pane).is_some_and(|c| c.agent.as_deref() == Some("codex"))
    })
    .await;
    until(&mut state, &io, "claude's id is gone from the pane", |_| {
        server
            .pane_field(&pane, "#{@agentwatch_session_id}")
            .is_empty()
    })
    .await;
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    until(&mut state, &io, "codex's death is judged", |s| {
        card(s, &pane).is_some_and(|c| c.life.is_dead() && matches!(c.auto, Auto::Held(_)))
    })
    .await;
    assert_eq!(
        card(&state, &pane).map(|c| c.auto.clone()),
        Some(Auto::Held(Hold::NoSessionId)),
        "no id of codex's own: nothing to resume"
    );
    // Over the backoff and more: nothing relaunched, and never claude's argv.
    let end = Instant::now() + Duration::from_secs(3);
    while Instant::now() < end {
        look_once(&mut state, &io).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let runs: Vec<(String, Vec<String>)> = server
        .log_entries_for(&pane)
        .iter()
        .map(|e| (e["name"].as_str().unwrap_or_default().to_string(), argv(e)))
        .collect();
    assert_eq!(
        runs,
        [
            (
                "claude".to_string(),
                vec!["--session-id".to_string(), A.to_string()]
            ),
            ("codex".to_string(), vec![]),
        ]
    );
    let events = journal(&server);
    let replaced: Vec<_> = events.iter().filter(|e| e.event == "replaced").collect();
    assert_eq!(replaced.len(), 1, "{events:?}");
    let detail = replaced[0].detail.clone().unwrap_or_default();
    assert!(detail.starts_with("claude (running, pid "), "{detail}");
    // tmux runs a one-word command through its default shell, which execs codex: a look
    // in between sees the shell, under the pid codex then has.
    assert!(
        ["codex", "bash", "sh", "dash"]
            .iter()
            .any(|p| detail.contains(&format!("replaced by {p} (pid"))),
        "{detail}"
    );
    let died: Vec<_> = events.iter().filter(|e| e.event == "died").collect();
    assert_eq!(died.len(), 1, "{events:?}");
    assert_eq!(died[0].agent.as_deref(), Some("codex"));
    assert_eq!(died[0].session_id, None);
}

#[tokio::test]
async fn at_a_prompt_the_last_runs_session_is_the_one_resumed() {
    let server = TmuxServer::start();
    // Run 0 ends by itself; run 1 crashes; run 2 is the resume.
    server.write_plan(
        "claude",
        "wait first\nexit 0\n---\nwait second\nexit 1\n---\nhang\n",
    );
    let pane = server.new_window(&["bash", "--norc", "--noprofile"]);
    let mut config = Config::default();
    config.auto_resume.backoff_secs = vec![1];
    let (mut state, io) = server.supervisor_with(config);
    let typed = |line: &str| {
        server.tmux_ok(&["send-keys", "-t", &pane, "-l", line]);
        server.tmux_ok(&["send-keys", "-t", &pane, "Enter"]);
    };
    let running = |s: &State| card(s, &pane).is_some_and(|c| c.life == Life::Running);
    typed(&format!("claude --session-id {A}"));
    until(&mut state, &io, "the first run", running).await;
    until(&mut state, &io, "A is recorded", |_| {
        server.pane_field(&pane, "#{@agentwatch_session_id}") == A
    })
    .await;
    std::fs::write(server.agent_dir.join("first"), "").unwrap();
    until(&mut state, &io, "the first run ended", |s| !running(s)).await;
    typed(&format!("claude --session-id {B}"));
    until(&mut state, &io, "the second run", running).await;
    until(&mut state, &io, "B is recorded", |_| {
        server.pane_field(&pane, "#{@agentwatch_session_id}") == B
    })
    .await;
    std::fs::write(server.agent_dir.join("second"), "").unwrap();
    until(&mut state, &io, "the resume typed", |_| {
        server.log_entries_for(&pane).len() >= 3
    })
    .await;
    let runs = server.log_entries_for(&pane);
    assert_eq!(
        argv(&runs[2]),
        ["--resume", B],
        "the run that died, not the first"
    );
}

#[tokio::test]
async fn respawn_k_over_an_agent_at_a_prompt_is_a_replacement_not_an_exit() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let pane = server.new_window(&["bash", "--norc", "--noprofile"]);
    let (mut state, io) = server.supervisor(&[1]);
    server.tmux_ok(&[
        "send-keys",
        "-t",
        &pane,
        "-l",
        &format!("claude --session-id {A}"),
    ]);
    server.tmux_ok(&["send-keys", "-t", &pane, "Enter"]);
    until(&mut state, &io, "the agent runs at the prompt", |s| {
        card(s, &pane).is_some_and(|c| c.life == Life::Running)
    })
    .await;
    until(&mut state, &io, "its occupant is recorded", |_| {
        server
            .pane_field(&pane, "#{@agentwatch_occupant}")
            .contains(' ')
    })
    .await;
    server.tmux_ok(&[
        "respawn-pane",
        "-k",
        "-t",
        &pane,
        "bash",
        "--norc",
        "--noprofile",
    ]);
    until(&mut state, &io, "the replacement is journaled", |_| {
        journal(&server).iter().any(|e| e.event == "replaced")
    })
    .await;
    for _ in 0..10 {
        look_once(&mut state, &io).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let events = journal(&server);
    assert!(
        !events.iter().any(|e| e.event == "died"),
        "no exit: the agent was replaced: {events:?}"
    );
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_session_id}"), "");
}

#[tokio::test]
async fn a_session_another_live_pane_holds_is_not_resumed_while_that_one_lives() {
    let server = TmuxServer::start();
    server.write_plan("claude", "wait go\nexit 1\n");
    let dying = server.new_window(&["claude", "--session-id", A]);
    // The same session, open in another pane that stays. Its agent starts only once its own
    // plan is there: started before, it would take claude's plan and end with the first.
    let keeper = server.new_window(&[
        "sh",
        "-c",
        &format!(
            "until [ -e \"$FAKE_AGENT_DIR/${{TMUX_PANE#%}}.plan\" ]; do sleep 0.05; done; \
             FAKE=1 exec claude --session-id {A}"
        ),
    ]);
    server.write_plan(&keeper, "hang\n");
    let (mut state, io) = server.supervisor(&[1]);
    until(&mut state, &io, "both run, their session known", |s| {
        [&dying, &keeper].iter().all(|p| {
            card(s, p).is_some_and(|c| c.life == Life::Running)
                && server.pane_field(p, "#{@agentwatch_session_id}") == A
        })
    })
    .await;
    // Only the first has the plan that ends; the other hangs.
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    let why = format!(
        "session 0e6a1c1e is also open in {keeper} (main:{}.0): end that one, then r",
        server.pane_field(&keeper, "#{window_index}")
    );
    until(&mut state, &io, "the resume is refused", |s| {
        card(s, &dying).is_some_and(|c| c.auto == Auto::Held(Hold::Refused(why.clone())))
    })
    .await;
    assert_eq!(
        server.log_entries_for(&dying).len(),
        1,
        "nothing relaunched"
    );
    assert!(journal(&server)
        .iter()
        .any(|e| e.event == "resume_failed" && e.detail.as_deref() == Some(why.as_str())));
}

#[tokio::test]
async fn a_resume_that_comes_up_under_another_id_is_said_and_not_repeated() {
    let server = TmuxServer::start();
    server.agent_store("claude");
    const OTHER: &str = "99999999-2222-4333-8444-555555555555";
    // Crashes; the resume comes up as another session, and stays up.
    server.write_plan(
        "claude",
        &format!("message\nwait go\nexit 1\n---\nsession-as {OTHER}\nstate idle\nhang\n"),
    );
    let pane = server.new_window(&["claude", "--session-id", A]);
    let (mut state, io) = server.supervisor(&[1]);
    until(&mut state, &io, "it runs", |s| {
        card(s, &pane).is_some_and(|c| c.life == Life::Running)
    })
    .await;
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    until(&mut state, &io, "the failed resume is journaled", |_| {
        journal(&server).iter().any(|e| e.event == "resume_failed")
    })
    .await;
    let events = journal(&server);
    let failed = events.iter().find(|e| e.event == "resume_failed").unwrap();
    assert_eq!(
        failed.detail.as_deref(),
        Some(
            format!("claude came up as session {OTHER}, not the {A} it was asked to resume")
                .as_str()
        )
    );
    let text = card(&state, &pane)
        .and_then(|c| c.notice.as_ref())
        .map(|n| n.text.clone())
        .unwrap_or_default();
    assert!(
        text.starts_with("resume failed: claude came up as session 99999999"),
        "{text}"
    );
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_session_id}"), OTHER);
    // Not repeated: the one relaunch, and no other.
    for _ in 0..20 {
        look_once(&mut state, &io).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let runs = server.log_entries_for(&pane);
    assert_eq!(runs.len(), 2);
    assert_eq!(argv(&runs[1]), ["--resume", A]);
    assert_eq!(
        journal(&server)
            .iter()
            .filter(|e| e.event == "resume_failed")
            .count(),
        1
    );
}

/// The fake agents' start times (ms since the epoch, as the log's order and the test's clock
/// see them) are not logged: each start is timed here, as the log grows.
#[tokio::test]
async fn fifty_agents_killed_at_once_are_resumed_a_few_at_a_time_and_all_within_3_minutes() {
    let server = TmuxServer::start();
    // The first run hangs until killed; a resume hangs too.
    server.write_plan("claude", "hang\n");
    let ids: Vec<String> = (0..50)
        .map(|i| format!("0e6a1c1e-4f7b-4a43-9d55-{i:012}"))
        .collect();
    let panes: Vec<String> = ids
        .iter()
        .map(|id| server.new_window(&["claude", "--session-id", id]))
        .collect();
    let (mut state, io) = server.supervisor_with(Config::default());
    until(&mut state, &io, "all 50 run", |s| {
        s.cards.iter().filter(|c| c.life == Life::Running).count() == 50
    })
    .await;
    let pids: Vec<String> = server
        .log_entries()
        .iter()
        .map(|e| e["pid"].as_u64().unwrap().to_string())
        .collect();
    assert_eq!(pids.len(), 50);
    let killed = Instant::now();
    let mut kill = std::process::Command::new("kill");
    kill.arg("-9").args(&pids);
    assert!(kill.status().unwrap().success());
    let mut seen = 50;
    let mut starts: Vec<Duration> = Vec::new();
    while starts.len() < 50 && killed.elapsed() < Duration::from_secs(180) {
        look_once(&mut state, &io).await;
        let n = server.log_entries().len();
        for _ in seen..n {
            starts.push(killed.elapsed());
        }
        seen = n;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        starts.len(),
        50,
        "every one resumed within 3 minutes: {starts:?}"
    );
    let first_10s = starts
        .iter()
        .filter(|t| **t < Duration::from_secs(10))
        .count();
    assert!(first_10s <= 10, "{first_10s} in the first 10 s: {starts:?}");
    // Each with its own session, once.
    for (pane, id) in panes.iter().zip(&ids) {
        let runs = server.log_entries_for(pane);
        assert_eq!(runs.len(), 2, "{pane}");
        assert_eq!(argv(&runs[1]), ["--resume", id.as_str()]);
    }
    let mass: Vec<_> = journal(&server)
        .into_iter()
        .filter(|e| e.event == "mass_death")
        .collect();
    assert_eq!(mass.len(), 1, "journaled once: {mass:?}");
}

#[tokio::test]
async fn r_fresh_on_a_codex_drops_the_old_session_so_a_later_r_never_resumes_it() {
    let server = TmuxServer::start();
    server.write_plan("codex", "wait go\nexit 1\n---\nhang\n");
    let pane = server.new_window(&["codex", "resume", A]);
    let mut config = Config::default();
    config.auto_resume.enabled = false;
    let (mut state, io) = server.supervisor_with(config);
    until(&mut state, &io, "its id is recorded", |_| {
        server.pane_field(&pane, "#{@agentwatch_session_id}") == A
    })
    .await;
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    until(&mut state, &io, "it died", |s| {
        card(s, &pane).is_some_and(|c| c.life.is_dead())
    })
    .await;
    support::press(&mut state, &io, &pane, Action::RelaunchFresh).await;
    let runs = server.wait_log(&pane, 2);
    assert!(
        argv(&runs[1]).is_empty(),
        "a fresh codex: {:?}",
        argv(&runs[1])
    );
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_session_id}"), "");
}
