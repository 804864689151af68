//! Effects run one after another until the core asks for nothing more: for one-shot
//! commands and tests, the same core and adapters as the loops, without a loop.

use super::io::Io;
use crate::core::msg::{Effect, Msg};
use crate::core::state::State;

/// Runs effects one after another, awaiting each answer and feeding it back, until the core
/// asks for nothing more (or `max_rounds` is reached). For one-shot commands and tests:
/// the same core and adapter as the dashboard, without a terminal.
pub async fn settle(state: &mut State, io: &Io, first: Vec<Effect>, max_rounds: usize) {
    let mut queue: std::collections::VecDeque<Effect> = first.into();
    let mut rounds = 0;
    while let Some(effect) = queue.pop_front() {
        rounds += 1;
        if rounds > max_rounds {
            break;
        }
        if let Some(answer) = io.answer(effect).await {
            queue.extend(state.update(answer, io.clock.now()));
        }
    }
}

/// One complete look at the server: a tick and everything it leads to.
pub async fn look_once(state: &mut State, io: &Io) {
    let first = state.update(Msg::Tick, io.clock.now());
    settle(state, io, first, 64).await;
}

/// Sends one message (a key's action, say) and settles what it leads to.
pub async fn send(state: &mut State, io: &Io, msg: Msg) {
    let first = state.update(msg, io.clock.now());
    settle(state, io, first, 64).await;
}
