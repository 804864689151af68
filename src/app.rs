//! The only loop: one channel, the clock read once per message, `update`, effects run,
//! the screen drawn. Effects run as tasks that answer on the channel, so a slow tmux never
//! blocks a key.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use ratatui::backend::Backend;
use ratatui::Terminal;
use tokio::sync::mpsc;

use crate::msg::{Effect, Millis, Msg};
use crate::probe::Prober;
use crate::state::State;
use crate::tmux::client::kick_server;
use crate::ui::{Look, Screen};

/// Wall-clock time that advances with tokio's clock (so paused-time tests work).
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    wall0: Millis,
    mono0: tokio::time::Instant,
}

impl Clock {
    pub fn start() -> Clock {
        let wall0 = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as Millis)
            .unwrap_or(0);
        Clock {
            wall0,
            mono0: tokio::time::Instant::now(),
        }
    }

    pub fn now(&self) -> Millis {
        self.wall0 + self.mono0.elapsed().as_millis() as Millis
    }
}

/// The local time zone's offset from UTC in seconds, right now.
pub fn utc_offset() -> i64 {
    // SAFETY: time(NULL) and localtime_r with valid pointers have no other preconditions.
    unsafe {
        let t = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            0
        } else {
            tm.tm_gmtoff
        }
    }
}

/// Runs the dashboard until the user quits. `input` yields messages from the terminal
/// (keys, resizes); effects answer on an internal channel.
pub async fn run<B, I>(
    terminal: &mut Terminal<B>,
    state: &mut State,
    look: &Look,
    prober: Arc<Prober>,
    tick: Duration,
    mut input: I,
) -> color_eyre::Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    I: Stream<Item = Msg> + Unpin,
{
    let clock = Clock::start();
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    let mut ticker = tokio::time::interval(tick);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        let msg = tokio::select! {
            biased;
            Some(m) = input.next() => m,
            Some(m) = rx.recv() => m,
            _ = ticker.tick() => Msg::Tick,
        };
        let effects = state.update(msg, clock.now());
        for effect in effects {
            perform(effect, &prober, &tx);
        }
        if state.quit {
            return Ok(());
        }
        terminal.draw(|f| f.render_widget(Screen { state, look }, f.area()))?;
    }
}

fn perform(effect: Effect, prober: &Arc<Prober>, tx: &mpsc::UnboundedSender<Msg>) {
    let tx = tx.clone();
    match effect {
        Effect::Poll => {
            let p = Arc::clone(prober);
            tokio::spawn(async move {
                let _ = tx.send(Msg::Polled(p.observe().await));
            });
        }
        Effect::KickServer(pid) => {
            if let Err(e) = kick_server(pid) {
                tracing::warn!("SIGCHLD to tmux server {pid} failed: {e}");
            }
        }
        Effect::CaptureScreens(ids) => {
            let tmux = prober.tmux().clone();
            tokio::spawn(async move {
                let _ = tx.send(Msg::Screens(tmux.capture_screens(&ids).await));
            });
        }
        Effect::SetOptions(sets) => {
            let tmux = prober.tmux().clone();
            tokio::spawn(async move {
                let r = tmux.set_pane_options(&sets).await;
                if let Err(e) = &r {
                    tracing::info!("setting pane options: {e}");
                }
                let _ = tx.send(Msg::OptionsSet(r));
            });
        }
    }
}

/// Runs effects one after another, awaiting each answer and feeding it back, until the core
/// asks for nothing more (or `max_rounds` is reached). For one-shot commands and tests:
/// the same core and adapter as the dashboard, without a terminal.
pub async fn settle(
    state: &mut State,
    prober: &Prober,
    clock: &Clock,
    first: Vec<Effect>,
    max_rounds: usize,
) {
    let mut queue: std::collections::VecDeque<Effect> = first.into();
    let mut rounds = 0;
    while let Some(effect) = queue.pop_front() {
        rounds += 1;
        if rounds > max_rounds {
            break;
        }
        let answer = match effect {
            Effect::Poll => Msg::Polled(prober.observe().await),
            Effect::KickServer(pid) => {
                if let Err(e) = kick_server(pid) {
                    tracing::warn!("SIGCHLD to tmux server {pid} failed: {e}");
                }
                continue;
            }
            Effect::CaptureScreens(ids) => Msg::Screens(prober.tmux().capture_screens(&ids).await),
            Effect::SetOptions(sets) => {
                Msg::OptionsSet(prober.tmux().set_pane_options(&sets).await)
            }
        };
        queue.extend(state.update(answer, clock.now()));
    }
}

/// One complete look at the server: a tick and everything it leads to.
pub async fn look_once(state: &mut State, prober: &Prober, clock: &Clock) {
    let first = state.update(Msg::Tick, clock.now());
    settle(state, prober, clock, first, 64).await;
}
