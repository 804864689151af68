//! The real event loop with tokio's paused clock and a fake outside world: a crash
//! schedules exactly one respawn, after the backoff, and a key is handled while a slow
//! poll is still out.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwatch::adapters::tmux::format::Listing;
use agentwatch::config::Config;
use agentwatch::core::msg::{Action, Effect, Msg, Observation};
use agentwatch::core::pane::{Pane, PaneId};
use agentwatch::core::state::State;
use agentwatch::core::time::Millis;
use agentwatch::run::{run, Answer, Clock};
use agentwatch::ui::Look;
use futures_util::StreamExt;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

const ID: &str = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";

struct Fake {
    clock: Clock,
    start: Millis,
    /// The agent dies this long after the start...
    dies_after: Millis,
    /// ...and each poll takes this long to answer.
    poll_delay: Duration,
    relaunched_at: Mutex<Vec<Millis>>,
}

impl Fake {
    fn pane(&self) -> Pane {
        let dead = self.relaunched_at.lock().unwrap().is_empty()
            && self.clock.now() >= self.start + self.dies_after;
        Pane {
            id: PaneId(1),
            session: "s".into(),
            current_command: "claude".into(),
            start_command: "claude".into(),
            current_path: if dead { String::new() } else { "/tmp".into() },
            opts: agentwatch::core::pane::PaneOptions {
                cwd: "/tmp".into(),
                agent: "claude".into(),
                session_id: ID.into(),
                ..Default::default()
            },
            remain_on_exit: true,
            dead,
            dead_status: dead.then_some(1),
            ..Pane::default()
        }
    }
}

impl Answer for Fake {
    async fn answer(&self, effect: Effect) -> Option<Msg> {
        match effect {
            Effect::Poll { .. } => {
                // On tokio's paused clock: the poll's delay is an input, no real time passes.
                tokio::time::sleep(self.poll_delay).await;
                let listing = Listing {
                    panes: vec![self.pane()],
                    server_pid: Some(1),
                    malformed: 0,
                    auto_all: String::new(),
                };
                Some(Msg::polled(Ok(Observation {
                    listing,
                    ..Observation::default()
                })))
            }
            Effect::Relaunch { plan, .. } => {
                self.relaunched_at
                    .lock()
                    .unwrap()
                    .push(self.clock.now() - self.start);
                Some(Msg::Relaunched {
                    pane: plan.pane,
                    result: Ok(plan),
                })
            }
            Effect::SetOptions(landed) => Some(Msg::OptionsSet {
                landed,
                result: Ok(()),
            }),
            Effect::CaptureScreens { .. } => Some(Msg::Screens(Ok(Default::default()))),
            Effect::LookAtScreens(_) => Some(Msg::Looked(Ok(Default::default()))),
            Effect::Discover(r) => Some(Msg::Discovered {
                pane: r.pane,
                found: None,
            }),
            Effect::ReadTail(pane, _) => Some(Msg::Tail {
                pane,
                text: None,
                oom_killed: false,
                record: Vec::new(),
            }),
            Effect::Log(_)
            | Effect::Kick { .. }
            | Effect::Journal(_)
            | Effect::CaptureOutput(_)
            | Effect::LoadRecords { .. }
            | Effect::KillPane(_)
            | Effect::EndOrphans { .. }
            | Effect::Jump { .. }
            | Effect::LoadRoster
            | Effect::SaveRoster(_)
            | Effect::Recreate(_)
            | Effect::Start(_)
            | Effect::Notify { .. }
            | Effect::Elect
            | Effect::ReadJournal { .. }
            | Effect::SetServerOption { .. }
            | Effect::Attend { .. }
            | Effect::Type { .. }
            | Effect::ReadSpend(_) => None,
        }
    }

    fn now(&self) -> Millis {
        self.clock.now()
    }

    async fn woken(&self) {
        std::future::pending().await
    }
}

fn quit_after(after: Duration) -> impl futures_util::Stream<Item = Msg> + Unpin {
    Box::pin(
        futures_util::stream::once(async move {
            // On tokio's paused clock, as above: no real time passes.
            tokio::time::sleep(after).await;
            Msg::Action(Action::Quit)
        })
        .chain(futures_util::stream::pending()),
    )
}

#[tokio::test(start_paused = true)]
async fn a_crash_schedules_exactly_one_respawn_after_the_backoff() {
    let clock = Clock::start();
    let fake = Arc::new(Fake {
        clock,
        start: clock.now(),
        dies_after: 1_000,
        poll_delay: Duration::from_millis(5),
        relaunched_at: Mutex::new(Vec::new()),
    });
    let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let mut state = State::new(&Config::default(), false, "x".into(), (80, 24));
    let tick = Duration::from_millis(500);
    run(
        &mut term,
        &mut state,
        &Look::plain(),
        Arc::clone(&fake),
        tick,
        quit_after(Duration::from_secs(60)),
    )
    .await
    .unwrap();
    let at = fake.relaunched_at.lock().unwrap().clone();
    assert_eq!(at.len(), 1, "{at:?}");
    // Seen dead at the first tick after 1 s; due 2 s later; run on the tick that follows.
    assert!(
        (3_000..=3_600).contains(&at[0]),
        "relaunched at {} ms",
        at[0]
    );
    assert_eq!(state.cards[0].budget.attempts, 1);
}

#[tokio::test(start_paused = true)]
async fn keys_are_handled_while_a_poll_hangs() {
    let clock = Clock::start();
    let fake = Arc::new(Fake {
        clock,
        start: clock.now(),
        dies_after: u64::MAX / 2,
        poll_delay: Duration::from_secs(3600),
        relaunched_at: Mutex::new(Vec::new()),
    });
    let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let mut state = State::new(&Config::default(), false, "x".into(), (80, 24));
    let started = tokio::time::Instant::now();
    run(
        &mut term,
        &mut state,
        &Look::plain(),
        fake,
        Duration::from_millis(500),
        quit_after(Duration::from_millis(700)),
    )
    .await
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "quit waited for the poll"
    );
}

/// Answers every effect of a tick at once (no time passes): the poll, the election, the
/// first tick's roster and journal reads.
struct Instant(Fake);

impl Answer for Instant {
    async fn answer(&self, effect: Effect) -> Option<Msg> {
        match effect {
            Effect::Elect => Some(Msg::Elected(agentwatch::core::msg::Election {
                mine: true,
                by: None,
                took_over: None,
            })),
            Effect::LoadRoster => Some(Msg::RosterLoaded(None)),
            Effect::ReadJournal { .. } => Some(Msg::JournalRead(Vec::new())),
            Effect::Poll { .. } => Some(Msg::polled(Ok(Observation {
                listing: Listing {
                    panes: vec![self.0.pane()],
                    server_pid: Some(1),
                    malformed: 0,
                    auto_all: String::new(),
                },
                ..Observation::default()
            }))),
            other => self.0.answer(other).await,
        }
    }

    fn now(&self) -> Millis {
        self.0.now()
    }

    async fn woken(&self) {
        std::future::pending().await
    }
}

/// What was shown: the number of cards at each showing.
#[derive(Default)]
struct Counted(Vec<usize>);

impl agentwatch::run::event_loop::Frontend for Counted {
    fn show(&mut self, state: &State, _: bool) -> color_eyre::Result<()> {
        self.0.push(state.cards.len());
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn answers_that_come_in_together_are_shown_once() {
    let clock = Clock::start();
    let fake = Arc::new(Instant(Fake {
        clock,
        start: clock.now(),
        dies_after: u64::MAX / 2,
        poll_delay: Duration::ZERO,
        relaunched_at: Mutex::new(Vec::new()),
    }));
    let mut state = State::new(&Config::default(), false, "x".into(), (80, 24));
    state.supervision.elect = true;
    let mut shown = Counted::default();
    let ticks = 20;
    agentwatch::run::event_loop::drive(
        &mut shown,
        &mut state,
        fake,
        Duration::from_millis(500),
        quit_after(Duration::from_millis(500 * ticks - 250)),
    )
    .await
    .unwrap();
    // Each tick is shown, and its answers (a poll and an election, and what the poll's
    // answer asks at once) once more: not once each.
    let n = shown.0.len();
    assert!(
        (ticks as usize..=2 * ticks as usize + 2).contains(&n),
        "shown {n} times in {ticks} ticks"
    );
    assert_eq!(shown.0.last(), Some(&1), "the last answer is on screen");
}

/// Heard panes' starts and stops wake the loop at most three times a second, however many
/// agents start and stop: each poll goes over every card, and pauses the panes that began
/// to write in one command for all of them (a tmux of 300 panes pays for each).
#[tokio::test(start_paused = true)]
async fn starts_and_stops_heard_wake_the_loop_three_times_a_second_at_most() {
    use agentwatch::adapters::poll::Prober;
    use agentwatch::adapters::tmux::client::Tmux;
    use agentwatch::run::Io;
    let dir = tempfile::tempdir().unwrap();
    let tmux = Tmux::new(dir.path().join("none.sock"), Duration::from_secs(1));
    let notices = Arc::clone(tmux.notices());
    let io = Io::new(Prober::new(tmux), None);
    // A hundred agents: a start or a stop every 20 ms.
    let told = tokio::spawn(async move {
        loop {
            notices.heard.notify_one();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    let end = tokio::time::Instant::now() + Duration::from_secs(2);
    let mut polls = 0;
    loop {
        tokio::select! {
            () = Answer::woken(&io) => polls += 1,
            () = tokio::time::sleep_until(end) => break,
        }
    }
    told.abort();
    assert!((6..=8).contains(&polls), "{polls} polls in 2 s");
}
