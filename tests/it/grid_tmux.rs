//! The grid's core against a real tmux server on a private socket: deaths by exit code, by
//! signal, a clean exit, and remain-on-exit set by agentwatch itself (not by the test).

use crate::support;
use std::time::Duration;

use crate::support::{TmuxServer, WAIT};
use agentwatch::adapters::poll::Prober;
use agentwatch::adapters::tmux::client::Tmux;
use agentwatch::config::Config;
use agentwatch::core::card::Life;
use agentwatch::core::pane::{Exit, PaneId};
use agentwatch::core::state::State;
use agentwatch::run::{look_once, Io};

const ID: &str = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";

fn watcher(server: &TmuxServer) -> (State, Io) {
    let tmux =
        Tmux::new(server.socket.clone(), Duration::from_secs(5)).with_env(server.env_pairs());
    let state = State::new(
        &Config::default(),
        false,
        server.socket.display().to_string(),
        (200, 50),
    );
    let crashes = server.dir.path().join("crashes");
    (
        state,
        Io::new(Prober::new(tmux), Some(crashes)).with_stores(server.stores()),
    )
}

fn life(state: &State, pane: &str) -> Option<Life> {
    let id = PaneId::parse(pane)?;
    state.cards.iter().find(|c| c.pane.id == id).map(|c| c.life)
}

#[tokio::test]
async fn exits_signals_and_clean_finishes_are_told_apart_and_retained_by_agentwatch() {
    let server = TmuxServer::start();
    let work = server.dir.path().join("work dir");
    std::fs::create_dir_all(&work).unwrap();
    server.write_plan(
        "claude",
        "say started\nwait go\nsay last words\nsleep 100\nexit 3\n",
    );
    server.write_plan("codex", "wait go\nsignal 9\n");
    server.write_plan("gemini", "wait go\nexit 0\n");
    let crash = server.new_window_in(&work, &["claude", "--session-id", ID]);
    let killed = server.new_window(&["codex"]);
    let clean = server.new_window(&["gemini"]);
    let other = server.new_window(&["sleep", "100000"]);

    let (mut state, io) = watcher(&server);
    // agentwatch sees them alive and sets remain-on-exit itself.
    support::look_until(&mut state, &io, *WAIT, |_| {
        [&crash, &killed, &clean]
            .iter()
            .all(|p| server.pane_field(p, "#{remain-on-exit}") == "on")
            && server.pane_field(&crash, "#{@agentwatch_cwd}") == work.to_string_lossy()
    })
    .await;
    for p in [&crash, &killed, &clean] {
        assert_eq!(server.pane_field(p, "#{remain-on-exit}"), "on", "{p}");
        assert_eq!(life(&state, p), Some(Life::Running), "{p}");
    }
    assert_eq!(server.pane_field(&crash, "#{@agentwatch_agent}"), "claude");
    assert_eq!(server.pane_field(&crash, "#{@agentwatch_session_id}"), ID);
    assert_eq!(
        server.pane_field(&crash, "#{@agentwatch_cwd}"),
        work.to_string_lossy()
    );
    // The pane that is not an agent is neither shown nor touched.
    assert_eq!(life(&state, &other), None);
    assert_eq!(server.pane_field(&other, "#{remain-on-exit}"), "off");
    assert_eq!(server.pane_field(&other, "#{@agentwatch_agent}"), "");

    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    let lives_of = |s: &State| -> Vec<Option<Life>> {
        [&crash, &killed, &clean]
            .iter()
            .map(|p| life(s, p))
            .collect()
    };
    support::look_until(&mut state, &io, *WAIT, |s| {
        lives_of(s).iter().all(|l| matches!(l, Some(Life::Dead(_))))
    })
    .await;
    let lives = lives_of(&state);
    assert_eq!(
        lives,
        vec![
            Some(Life::Dead(Exit::Code(3))),
            Some(Life::Dead(Exit::Signal(9))),
            Some(Life::Dead(Exit::Code(0)))
        ]
    );
    assert_eq!(state.counts().dead, 2);
    assert_eq!(state.counts().finished, 1);
    // The dead pane was retained (by agentwatch's remain-on-exit) with its last words.
    assert_eq!(server.pane_field(&crash, "#{pane_dead}"), "1");
    look_once(&mut state, &io).await;
    let card = state
        .cards
        .iter()
        .find(|c| c.pane.id.to_string() == crash)
        .unwrap();
    assert_eq!(
        card.pane.cwd(),
        work.to_string_lossy(),
        "the recorded cwd outlives the pane"
    );
    assert!(card.died_at.is_some());
}

#[tokio::test]
async fn retain_dead_false_never_sets_remain_on_exit() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let p = server.new_window(&["claude"]);
    let tmux =
        Tmux::new(server.socket.clone(), Duration::from_secs(5)).with_env(server.env_pairs());
    let config = Config {
        retain_dead: false,
        ..Config::default()
    };
    let mut state = State::new(&config, false, String::new(), (200, 50));
    let io = Io::new(Prober::new(tmux), None).with_stores(server.stores());
    for _ in 0..3 {
        look_once(&mut state, &io).await;
    }
    assert_eq!(life(&state, &p), Some(Life::Running));
    assert_eq!(server.pane_field(&p, "#{@agentwatch_agent}"), "claude");
    assert_eq!(server.pane_field(&p, "#{remain-on-exit}"), "off");
}

#[tokio::test]
async fn no_server_is_an_error_state_not_a_crash_and_a_new_server_is_picked_up() {
    let server = TmuxServer::start();
    let sock = server.dir.path().join("later.sock");
    let tmux = Tmux::new(sock.clone(), Duration::from_secs(5));
    let mut state = State::new(&Config::default(), false, String::new(), (80, 24));
    let io = Io::new(Prober::new(tmux), None).with_stores(server.stores());
    look_once(&mut state, &io).await;
    assert!(matches!(
        state.servers.local().link,
        agentwatch::core::state::Link::Down(
            agentwatch::adapters::tmux::client::TmuxError::NoServer { .. }
        )
    ));
    server.write_plan("claude", "hang\n");
    let sock_s = sock.to_string_lossy().into_owned();
    let start = |args: &[&str]| {
        let mut cmd = std::process::Command::new(support::tmux_program());
        server.env_for_child(&mut cmd);
        cmd.args(["-S", &sock_s, "-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap()
    };
    assert!(start(&["new-session", "-d", "-s", "late", "--", "claude"])
        .status
        .success());
    look_once(&mut state, &io).await;
    start(&["kill-server"]);
    assert_eq!(
        state.servers.local().link,
        agentwatch::core::state::Link::Up
    );
    assert_eq!(state.cards.len(), 1);
    assert_eq!(state.cards[0].agent.as_deref(), Some("claude"));
}

#[tokio::test]
async fn separator_bytes_in_names_paths_and_options_neither_hide_nor_forge_a_pane() {
    let server = TmuxServer::start();
    server.write_plan("claude", "sleep 1500\nexit 1\n");
    let pane = server.new_window(&["claude", "--session-id", ID]);
    // Every free-text field tmux does not escape, holding the listing's separator bytes and
    // a would-be forged record of a live pane.
    let forged = "x\u{1e}%0\u{1f}main\u{1f}0\u{1f}w\u{1f}0\u{1f}1 ^%0~main~0~w~0~1";
    server.tmux_ok(&["rename-window", "-t", &pane, "a\u{1f}b\u{1e}c"]);
    server.tmux_ok(&[
        "set-option",
        "-p",
        "-t",
        &pane,
        "@agentwatch_judged",
        forged,
    ]);
    server.tmux_ok(&[
        "set-option",
        "-p",
        "-t",
        &pane,
        "@agentwatch_previous",
        "\u{1f}\u{1f}",
    ]);
    let (mut state, io) = watcher(&server);
    look_once(&mut state, &io).await;
    assert_eq!(state.servers.local().malformed, 0);
    let named = state
        .cards
        .iter()
        .find(|c| c.pane.id.to_string() == pane)
        .expect("the pane is on the grid");
    // tmux shows control bytes in a window name as octal escapes; 3.3a keeps them raw in an
    // option value, 3.5a escapes them there too.
    assert!(
        named.pane.window_name.starts_with('a'),
        "{:?}",
        named.pane.window_name
    );
    let escaped = forged.replace('\u{1e}', "\\036").replace('\u{1f}', "\\037");
    assert!(
        named.pane.opts.judged == forged || named.pane.opts.judged == escaped,
        "{:?}",
        named.pane.opts.judged
    );
    // Its death gets its banner; the pane the forged record names stays alive.
    let dead = support::look_until(&mut state, &io, *WAIT, |s| {
        life(s, &pane) == Some(Life::Dead(Exit::Code(1)))
    })
    .await;
    assert!(dead, "{:?}", life(&state, &pane));
    assert_ne!(life(&state, "%0"), Some(Life::Dead(Exit::Code(1))));
    let ids: Vec<String> = state.cards.iter().map(|c| c.pane.id.to_string()).collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(ids.len(), unique.len(), "{ids:?}");
}
