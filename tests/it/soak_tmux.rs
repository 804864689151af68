//! A soak of the control-mode connection while a real client attaches, detaches and resizes
//! (tmux 3.3a's server once crashed with `ignore-size` under such traffic): the server
//! lives, agentwatch keeps seeing every pane and a death in the middle gets its banner.
//! Runs on whichever tmux is under test (`AGENTWATCH_TEST_TMUX`, see tests/common).

use crate::support;
use std::time::{Duration, Instant};

use crate::support::{TmuxServer, WAIT};
use agentwatch::core::card::Life;
use agentwatch::core::pane::{Exit, PaneId};
use agentwatch::run::look_once;

#[tokio::test]
async fn control_mode_survives_a_client_attaching_detaching_and_resizing() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let steady: Vec<String> = (0..4).map(|_| server.new_window(&["claude"])).collect();
    let tmux = support::tmux_program();
    let tmux = tmux.to_string_lossy().into_owned();
    let sock = server.socket.display().to_string();
    // A real client on a real terminal: a pane of a second private server.
    let client = server.start_ui(
        100,
        30,
        &[tmux.as_str(), "-S", sock.as_str(), "attach", "-t", "main"],
    );
    let (mut state, _) = server.supervisor(&[60]);
    let client_tmux = agentwatch::adapters::tmux::client::Tmux::new(
        server.socket.clone(),
        Duration::from_secs(5),
    )
    .with_env(server.env_pairs())
    .with_control_mode(true);
    let io = agentwatch::run::Io::new(agentwatch::adapters::poll::Prober::new(client_tmux), None)
        .with_stores(server.stores());
    let tmux_pid = server.server_pid().unwrap();
    let ordinary = || {
        let out = server.tmux(&["list-clients", "-F", "#{client_control_mode}"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l == "0")
    };
    support::wait_until("a real client is attached", *WAIT, ordinary);
    let start = Instant::now();
    let mut looks = 0;
    let mut round = 0u16;
    let doomed = {
        server.write_plan("default", "sleep 3000\nexit 3\n");
        server.new_window(&["gemini"])
    };
    while start.elapsed() < Duration::from_secs(8) {
        round += 1;
        // Resize the client's terminal, switch its size policy, detach and attach again.
        client.resize(60 + round % 80, 15 + round % 30);
        let policy = if round % 2 == 0 {
            "largest"
        } else {
            "smallest"
        };
        server.tmux(&["set", "-g", "window-size", policy]);
        if round % 5 == 0 {
            // Detach every ordinary client (agentwatch's control client stays), then attach
            // a new one in the same terminal.
            server.tmux(&["detach-client", "-a", "-t", "main"]);
            server.tmux(&["detach-client", "-s", "main"]);
            client.tmux(&[
                "respawn-pane",
                "-k",
                "-t",
                &client.pane,
                &tmux,
                "-S",
                &sock,
                "attach",
                "-t",
                "main",
            ]);
        }
        look_once(&mut state, &io).await;
        looks += 1;
        let seen = state
            .cards
            .iter()
            .filter(|c| steady.contains(&c.pane.id.to_string()))
            .count();
        assert_eq!(seen, steady.len(), "round {round}: every pane is seen");
        // Not a wait: the pace of the traffic, for the soak's 8 s (the thing under test).
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The server answers, as itself: its pid in /proc alone could be a zombie (a crashed
    // server that nothing has reaped yet).
    let answer = server.tmux(&["display-message", "-p", "#{pid}"]);
    assert!(
        answer.status.success()
            && String::from_utf8_lossy(&answer.stdout).trim() == tmux_pid.to_string(),
        "the tmux server survived {round} rounds: {}",
        String::from_utf8_lossy(&answer.stderr)
    );
    let attached = support::poll_until(*WAIT, ordinary);
    assert!(
        attached,
        "the client never attached again; its pane ({:?}):\n{}",
        client.exit(),
        client.screen()
    );
    // The death in the middle of it all has its banner.
    let id = PaneId::parse(&doomed).unwrap();
    let life = state.cards.iter().find(|c| c.pane.id == id).map(|c| c.life);
    assert_eq!(life, Some(Life::Dead(Exit::Code(3))), "after {looks} looks");
}
