//! Builders for unit tests: synthetic panes, observations and states.

use crate::msg::{Msg, Observation};
use crate::pane::Listing;
use crate::pane::{Pane, PaneId};
use crate::settings::Config;
use crate::state::State;
use crate::time::Millis;

pub const T0: Millis = 1_780_000_000_000;

pub fn pane(id: u32, window: u32, cmd: &str) -> Pane {
    Pane {
        id: PaneId(id),
        session: "work".into(),
        window_index: window,
        window_name: format!("w{window}"),
        pane_index: 0,
        pid: Some(1000 + id),
        current_command: cmd.into(),
        start_command: cmd.into(),
        current_path: format!("/home/u/src/proj{id}"),
        start_path: "/home/u".into(),
        remain_on_exit: true,
        ..Pane::default()
    }
}

pub fn dead(mut p: Pane, status: Option<i32>, signal: Option<i32>) -> Pane {
    p.dead = true;
    p.dead_status = status;
    p.dead_signal = signal;
    p.current_path.clear();
    p
}

pub fn obs(panes: Vec<Pane>) -> Observation {
    Observation {
        listing: Listing {
            panes,
            server_pid: Some(4242),
            malformed: 0,
            auto_all: String::new(),
        },
        ..Observation::default()
    }
}

/// A state in tmux's order: the tests about other things place cards by pane; the attention
/// order has tests of its own.
pub fn state(size: (u16, u16)) -> State {
    let mut s = State::new(
        &Config::default(),
        false,
        "/tmp/tmux-1000/default".into(),
        size,
    );
    s.grid.order = crate::settings::Order::Tmux;
    s
}

/// Feeds a tick and a poll answer, as the loop would; a dead pane's last lines, asked for
/// to tell why it stopped, are answered as empty (what a test wants read, it answers with
/// [`poll_with_tail`]). The effects of the answers follow the poll's.
pub fn poll(s: &mut State, panes: Vec<Pane>, now: Millis) -> Vec<crate::msg::Effect> {
    poll_with_tail(s, panes, "", now)
}

/// [`poll`], answering every dead pane's last lines with `tail`.
pub fn poll_with_tail(
    s: &mut State,
    panes: Vec<Pane>,
    tail: &str,
    now: Millis,
) -> Vec<crate::msg::Effect> {
    s.update(Msg::Tick, now);
    let fx = s.update(Msg::polled(Ok(obs(panes))), now);
    answer_tails(s, fx, tail, now)
}

/// `fx` followed by what answering each dead pane's last lines with `tail` (as the loop
/// would) gave.
pub fn answer_tails(
    s: &mut State,
    mut fx: Vec<crate::msg::Effect>,
    tail: &str,
    now: Millis,
) -> Vec<crate::msg::Effect> {
    let mut i = 0;
    while i < fx.len() {
        if let crate::msg::Effect::ReadTail(pane, _) = fx[i] {
            let more = s.update(
                Msg::Tail {
                    pane,
                    text: Some(tail.to_string()),
                    oom_killed: false,
                    record: Vec::new(),
                },
                now,
            );
            fx.extend(more);
        }
        i += 1;
    }
    fx
}
