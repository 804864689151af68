//! The one loop both front ends share: one channel, the clock read once per message,
//! `update`, effects run as tasks that answer on the channel (so a slow tmux never blocks a
//! key), then the front end shows the state. The dashboard draws it; the daemon shows
//! nothing.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use ratatui::backend::Backend;
use ratatui::Terminal;
use tokio::sync::mpsc;

use super::io::Answer;
use crate::core::msg::{Effect, Msg};
use crate::core::pane::ServerId;
use crate::core::state::State;
use crate::ui::{Look, Screen};

/// Set by the panic hook: a task panicked and the terminal is already restored, so the
/// loop must stop drawing and leave.
pub static PANICKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What a loop shows the user after each message.
pub trait Frontend {
    fn show(&mut self, state: &State, resized: bool) -> color_eyre::Result<()>;
}

/// No screen at all: the daemon.
pub struct Screenless;

impl Frontend for Screenless {
    fn show(&mut self, _: &State, _: bool) -> color_eyre::Result<()> {
        Ok(())
    }
}

/// A terminal, drawn only when what it would show changed.
pub struct Drawn<'a, B: Backend> {
    pub terminal: &'a mut Terminal<B>,
    pub look: &'a Look,
    drawn: Option<u64>,
}

impl<'a, B: Backend> Drawn<'a, B> {
    pub fn new(terminal: &'a mut Terminal<B>, look: &'a Look) -> Self {
        Drawn {
            terminal,
            look,
            drawn: None,
        }
    }
}

impl<B> Frontend for Drawn<'_, B>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
{
    fn show(&mut self, state: &State, resized: bool) -> color_eyre::Result<()> {
        // Draw only what changed: a poll that changed nothing costs no render.
        let fp = state.fingerprint();
        if self.drawn != Some(fp) || resized {
            let look = self.look;
            self.terminal
                .draw(|f| f.render_widget(Screen { state, look }, f.area()))?;
            self.drawn = Some(fp);
        }
        Ok(())
    }
}

/// Runs the dashboard until the user quits. `input` yields messages from the terminal
/// (keys, resizes); effects run as tasks that answer on an internal channel.
pub async fn run<B, I, A>(
    terminal: &mut Terminal<B>,
    state: &mut State,
    look: &Look,
    io: Arc<A>,
    tick: Duration,
    input: I,
) -> color_eyre::Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    I: Stream<Item = Msg> + Unpin,
    A: Answer,
{
    drive(&mut Drawn::new(terminal, look), state, io, tick, input).await
}

/// Runs the loop until the state says quit. `input` yields messages from outside (keys,
/// resizes, signals).
pub async fn drive<F, I, A>(
    front: &mut F,
    state: &mut State,
    io: Arc<A>,
    tick: Duration,
    mut input: I,
) -> color_eyre::Result<()>
where
    F: Frontend,
    I: Stream<Item = Msg> + Unpin,
    A: Answer,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    let mut ticker = tokio::time::interval(tick);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut resized = false;
    let mut shown_at = tokio::time::Instant::now();
    loop {
        let msg = tokio::select! {
            biased;
            Some(m) = input.next() => m,
            Some(m) = rx.recv() => m,
            _ = ticker.tick() => Msg::Tick,
            () = io.woken() => Msg::Wake,
        };
        resized |= matches!(msg, Msg::Resize { .. });
        let effects = state.update(msg, io.now());
        for effect in effects {
            if let Effect::Kick {
                server: ServerId::Local,
                ..
            }
            | Effect::Journal(_)
            | Effect::Log(_) = effect
            {
                // Synchronous and instant: keep them in order (a kick before the poll after it).
                // Their answer (a journal line that could not be written) still comes back.
                if let Some(m) = io.answer(effect).await {
                    let _ = tx.send(m);
                }
                continue;
            }
            let (io, tx) = (Arc::clone(&io), tx.clone());
            tokio::spawn(async move {
                if let Some(m) = io.answer(effect).await {
                    let _ = tx.send(m);
                }
            });
        }
        if state.quit {
            return Ok(());
        }
        if PANICKED.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(color_eyre::eyre::eyre!(
                "agentwatch hit a bug (a panic, reported above) and stopped"
            ));
        }
        // Shown once the answers that came in together are all taken in (a tick's poll,
        // election and reads answer within a millisecond of each other, and each look at
        // the state goes over every card), and at least once a frame while they pour in.
        if rx.is_empty() || shown_at.elapsed() >= FRAME {
            front.show(state, resized)?;
            resized = false;
            shown_at = tokio::time::Instant::now();
        }
    }
}

/// The longest a stream of answers holds back the screen.
const FRAME: Duration = Duration::from_millis(50);
