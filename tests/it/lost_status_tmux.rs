//! tmux < 3.6 sometimes misses a pane's SIGCHLD: the pane is dead with no status. Many
//! quick deaths in a row make it happen (about 1 respawn in 7 here); agentwatch must still
//! show every one with its real code (it kicks the server with SIGCHLD and looks again),
//! never "running" and never "unknown".

use std::time::Duration;

use crate::support::{self, TmuxServer, WAIT};
use agentwatch::adapters::poll::Prober;
use agentwatch::adapters::tmux::client::Tmux;
use agentwatch::config::Config;
use agentwatch::core::card::Life;
use agentwatch::core::pane::{Exit, PaneId};
use agentwatch::core::state::State;
use agentwatch::run::Io;

#[tokio::test]
async fn every_quick_death_is_shown_with_its_real_code() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    let rounds = 30;
    let plan: Vec<String> = (1..=rounds).map(|i| format!("exit {}\n", 10 + i)).collect();
    server.write_plan("claude", &plan.join("---\n"));
    let mut config = Config::default();
    config.auto_resume.enabled = false;
    let tmux =
        Tmux::new(server.socket.clone(), Duration::from_secs(5)).with_env(server.env_pairs());
    let mut state = State::new(&config, false, String::new(), (200, 50));
    let io = Io::new(Prober::new(tmux), None).with_stores(server.stores());
    let pane = server.new_window(&["claude"]);
    let id = PaneId::parse(&pane).unwrap();
    let mut lost_seen = 0;
    for round in 1..=rounds {
        let want = Life::Dead(Exit::Code(10 + round));
        // Was the status lost this time? (Look before agentwatch does; do not kick.)
        let mut fields = String::new();
        support::wait_until(&format!("round {round}: the pane died"), *WAIT, || {
            fields = server.pane_field(&pane, "#{pane_dead}|#{pane_dead_status}");
            fields.starts_with("1|")
        });
        if fields == "1|" {
            lost_seen += 1;
        }
        let life_of = |s: &State| s.cards.iter().find(|c| c.pane.id == id).map(|c| c.life);
        let shown = support::look_until(&mut state, &io, *WAIT, |s| {
            let life = life_of(s);
            assert!(
                !matches!(life, Some(Life::Dead(Exit::Unknown))),
                "round {round}: shown as unknown"
            );
            life == Some(want)
        })
        .await;
        assert!(shown, "round {round}: stuck at {:?}", life_of(&state));
        if round < rounds {
            server.tmux_ok(&["respawn-pane", "-t", &pane, "--", "claude"]);
        }
    }
    eprintln!("tmux lost the exit status {lost_seen} times in {rounds} deaths");
}
