//! Several instances on one server, through a simulated tmux that keeps pane options: one
//! supervises, the others show what it decided and reach it through the panes.

use super::*;
use crate::card::Auto;
use crate::msg::{Election, Event, Supervisor};
use crate::supervisor::Hold;
use crate::testkit::{pane, T0};

const ID: &str = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
const DAEMON: Supervisor = Supervisor {
    pid: 4000,
    daemon: true,
    since: T0,
};

/// A tmux server as far as the core can tell: panes with their options, a server option.
struct World {
    panes: Vec<Pane>,
    auto_all: String,
    next_pid: u32,
    relaunches: usize,
    journal: Vec<Event>,
    /// What each relaunch ran.
    argvs: Vec<Vec<String>>,
    /// What a dead pane shows at its end, and the errors its agent's own file ends with.
    tail: String,
    record: Vec<String>,
    /// Agents' own state files by pid (claude's registry).
    files: HashMap<u32, crate::attention::AgentFile>,
    /// Which pane each relaunch was of, and when.
    relaunched: Vec<(PaneId, Millis)>,
}

impl World {
    fn new() -> World {
        let mut p = pane(1, 1, "claude");
        p.opts.session_id = ID.into();
        World {
            panes: vec![p],
            auto_all: String::new(),
            next_pid: 2000,
            relaunches: 0,
            journal: Vec::new(),
            argvs: Vec::new(),
            tail: String::new(),
            record: Vec::new(),
            files: HashMap::new(),
            relaunched: Vec::new(),
        }
    }

    fn kill(&mut self, code: i32) {
        let p = &mut self.panes[0];
        p.dead = true;
        p.dead_status = Some(code);
        p.current_path.clear();
    }

    fn obs(&self) -> Observation {
        let mut o = crate::testkit::obs(self.panes.clone());
        o.listing.auto_all = self.auto_all.clone();
        o.agent_files = std::sync::Arc::new(self.files.clone());
        o
    }

    /// Carries out what the core asked for; answers are fed back at once.
    fn apply(&mut self, s: &mut State, fx: Vec<Effect>, now: Millis) {
        let mut queue = fx;
        while let Some(e) = queue.pop() {
            let answer = match e {
                Effect::SetOptions(sets) => {
                    let mut landed = Vec::new();
                    for (id, k, v) in sets {
                        if let Some(p) = self.panes.iter_mut().find(|p| p.id == id) {
                            p.set_option(k.name(), v.clone());
                            landed.push((id, k, v));
                        }
                    }
                    Some(Msg::OptionsSet {
                        landed,
                        result: Ok(()),
                    })
                }
                Effect::SetServerOption { value, .. } => {
                    self.auto_all = value;
                    None
                }
                Effect::Journal(ev) => {
                    self.journal.push(ev);
                    None
                }
                Effect::ReadTail(pane, _) => Some(Msg::Tail {
                    pane,
                    text: Some(self.tail.clone()),
                    oom_killed: false,
                    record: self.record.clone(),
                }),
                Effect::Relaunch { plan, .. } => {
                    self.relaunches += 1;
                    self.argvs.push(plan.argv.clone());
                    self.relaunched.push((plan.pane, now));
                    let Some(p) = self.panes.iter_mut().find(|p| p.id == plan.pane) else {
                        continue;
                    };
                    p.dead = false;
                    p.dead_status = None;
                    // As the adapter does in the respawn's own tmux call.
                    p.opts.occupant = crate::occupant::NEXT.into();
                    p.pid = Some(self.next_pid);
                    self.next_pid += 1;
                    Some(Msg::Relaunched {
                        pane: p.id,
                        result: Ok(plan),
                    })
                }
                _ => None,
            };
            if let Some(m) = answer {
                queue.extend(s.update(m, now));
            }
        }
    }

    /// One tick of one instance: its effects land before the next instance looks.
    /// Looks every 500 ms from `from` until a relaunch (10 s at most); returns the time of
    /// the next look.
    fn look_till_relaunched(&mut self, s: &mut State, from: Millis) -> Millis {
        let mut t = from;
        while self.relaunches == 0 && t <= from + 10_000 {
            self.look(s, t);
            t += 500;
        }
        t
    }

    fn look(&mut self, s: &mut State, now: Millis) {
        let fx = s.update(Msg::Tick, now);
        self.apply(s, fx, now);
        let fx = s.update(Msg::polled(Ok(self.obs())), now);
        self.apply(s, fx, now);
    }

    fn count(&self, kind: &str) -> usize {
        self.journal.iter().filter(|e| e.event == kind).count()
    }
}

/// An instance that takes part in the election, as the dashboard and the daemon do.
fn instance(supervises: bool) -> State {
    let mut s = crate::testkit::state((120, 40));
    s.supervision.elect = true;
    s.supervision.supervising = false;
    s.story.started = Some(T0);
    s.update(
        Msg::Elected(Election {
            mine: supervises,
            by: Some(DAEMON),
            took_over: None,
        }),
        T0,
    );
    s
}

/// Ticks both instances every 500 ms over `[from, to]`.
fn both(w: &mut World, a: &mut State, b: &mut State, from: Millis, to: Millis) {
    let mut t = from;
    while t <= to {
        w.look(a, t);
        w.look(b, t + 1);
        t += 500;
    }
}

#[test]
fn beside_the_supervisor_a_dashboard_shows_its_countdown_and_never_journals_or_resumes() {
    let (mut w, mut sup, mut dash) = (World::new(), instance(true), instance(false));
    both(&mut w, &mut sup, &mut dash, T0, T0 + 500);
    w.kill(1);
    both(&mut w, &mut sup, &mut dash, T0 + 1_000, T0 + 1_000);
    let scheduled = Auto::Scheduled {
        attempt: 1,
        due: T0 + 3_000,
    };
    assert_eq!(sup.cards[0].auto, scheduled);
    assert_eq!(dash.cards[0].auto, scheduled, "the dashboard mirrors it");
    both(&mut w, &mut sup, &mut dash, T0 + 1_500, T0 + 4_000);
    assert_eq!(w.relaunches, 1);
    assert_eq!(
        (w.count("died"), w.count("scheduled"), w.count("resumed")),
        (1, 1, 1)
    );
    assert!(w.journal.iter().all(|e| e.server.is_some()));
}

#[test]
fn a_crash_loop_under_a_supervisor_and_two_dashboards_is_resumed_exactly_cap_times() {
    let mut w = World::new();
    let (mut sup, mut d1, mut d2) = (instance(true), instance(false), instance(false));
    let mut t = T0;
    for _ in 0..200 {
        w.look(&mut d1, t);
        w.look(&mut sup, t + 1);
        w.look(&mut d2, t + 2);
        // It dies as soon as it runs.
        if !w.panes[0].dead {
            w.kill(1);
        }
        t += 500;
    }
    assert_eq!(w.relaunches, 3);
    assert_eq!(w.count("died"), 4);
    assert_eq!(w.count("gave_up"), 1);
    for s in [&sup, &d1, &d2] {
        assert!(
            matches!(
                s.cards[0].auto,
                Auto::Held(Hold::GaveUp { attempts: 3, .. })
            ),
            "{:?}",
            s.cards[0].auto
        );
        assert_eq!(s.counts().gave_up, 1);
    }
}

#[test]
fn a_new_supervisor_takes_over_a_pending_resume_and_runs_it_once_at_its_time() {
    let (mut w, mut old) = (World::new(), instance(true));
    w.look(&mut old, T0);
    w.kill(1);
    w.look(&mut old, T0 + 500);
    assert!(matches!(old.cards[0].auto, Auto::Scheduled { .. }));
    // The supervisor is killed (or quits) mid-countdown; another starts a tick later and
    // wins the election.
    drop(old);
    let mut new = instance(true);
    w.look(&mut new, T0 + 1_000);
    assert_eq!(
        new.cards[0].auto,
        Auto::Scheduled {
            attempt: 1,
            due: T0 + 2_500
        }
    );
    let mut t = T0 + 1_500;
    while t <= T0 + 6_000 {
        w.look(&mut new, t);
        t += 500;
    }
    assert_eq!(w.relaunches, 1);
    assert_eq!(w.count("died"), 1, "the death was journaled once, before");
    assert_eq!(w.count("resumed"), 1);
}

#[test]
fn a_dashboard_that_wins_the_election_later_takes_over_what_it_showed() {
    let (mut w, mut sup, mut dash) = (World::new(), instance(true), instance(false));
    both(&mut w, &mut sup, &mut dash, T0, T0 + 500);
    w.kill(1);
    both(&mut w, &mut sup, &mut dash, T0 + 1_000, T0 + 1_000);
    drop(sup);
    dash.update(
        Msg::Elected(Election {
            mine: true,
            by: None,
            took_over: None,
        }),
        T0 + 1_200,
    );
    let mut t = T0 + 1_500;
    while t <= T0 + 5_000 {
        w.look(&mut dash, t);
        t += 500;
    }
    assert_eq!(w.relaunches, 1);
    assert_eq!((w.count("died"), w.count("resumed")), (1, 1));
}

#[test]
fn gave_up_survives_a_restart_in_the_header_and_on_the_card() {
    let mut w = World::new();
    w.panes[0].opts.attempts = "3".into();
    let mut s = instance(true);
    w.look(&mut s, T0);
    w.kill(1);
    w.look(&mut s, T0 + 500);
    assert_eq!(s.counts().gave_up, 1);
    for supervises in [true, false] {
        let mut again = instance(supervises);
        w.look(&mut again, T0 + 60_000);
        assert_eq!(again.counts().gave_up, 1, "supervising: {supervises}");
        assert!(matches!(
            again.cards[0].auto,
            Auto::Held(Hold::GaveUp { attempts: 3, .. })
        ));
    }
    assert_eq!(w.count("gave_up"), 1);
}

#[test]
fn keys_pressed_beside_the_supervisor_reach_it_through_the_panes() {
    // c: the pending resume is dropped by the supervisor too.
    let (mut w, mut sup, mut dash) = (World::new(), instance(true), instance(false));
    both(&mut w, &mut sup, &mut dash, T0, T0 + 500);
    w.kill(1);
    both(&mut w, &mut sup, &mut dash, T0 + 1_000, T0 + 1_000);
    let fx = dash.update(Msg::Action(Action::CancelAuto), T0 + 1_100);
    w.apply(&mut dash, fx, T0 + 1_100);
    both(&mut w, &mut sup, &mut dash, T0 + 1_500, T0 + 40_000);
    assert_eq!(w.relaunches, 0);
    assert_eq!(sup.cards[0].auto, Auto::Cancelled);
    assert_eq!(w.count("cancelled"), 1);

    // a: paused on the pane, so the next death is not resumed.
    let (mut w, mut sup, mut dash) = (World::new(), instance(true), instance(false));
    both(&mut w, &mut sup, &mut dash, T0, T0 + 500);
    let fx = dash.update(Msg::Action(Action::ToggleAuto), T0 + 600);
    w.apply(&mut dash, fx, T0 + 600);
    both(&mut w, &mut sup, &mut dash, T0 + 1_000, T0 + 1_000);
    w.kill(1);
    both(&mut w, &mut sup, &mut dash, T0 + 1_500, T0 + 40_000);
    assert_eq!(w.relaunches, 0);
    assert!(sup.cards[0].budget.paused);

    // A: a server option every instance follows.
    let (mut w, mut sup, mut dash) = (World::new(), instance(true), instance(false));
    both(&mut w, &mut sup, &mut dash, T0, T0 + 500);
    let fx = dash.update(Msg::Action(Action::ToggleAutoAll), T0 + 600);
    w.apply(&mut dash, fx, T0 + 600);
    both(&mut w, &mut sup, &mut dash, T0 + 1_000, T0 + 1_000);
    assert!(!sup.supervision.auto_on && !dash.supervision.auto_on);
    w.kill(1);
    both(&mut w, &mut sup, &mut dash, T0 + 1_500, T0 + 40_000);
    assert_eq!(w.relaunches, 0);
    let fx = sup.update(Msg::Action(Action::ToggleAutoAll), T0 + 41_000);
    w.apply(&mut sup, fx, T0 + 41_000);
    both(&mut w, &mut sup, &mut dash, T0 + 41_500, T0 + 41_500);
    assert!(sup.supervision.auto_on && dash.supervision.auto_on);
}

#[test]
fn a_death_nobody_watched_is_journaled_once_and_left_to_the_user() {
    let mut w = World::new();
    w.kill(1);
    w.panes[0].dead_time = Some(T0 / 1000 - 3_600);
    for _ in 0..2 {
        // Two starts in a row: the second finds the verdict on the pane.
        let mut s = instance(true);
        let mut t = T0;
        while t <= T0 + 60_000 {
            w.look(&mut s, t);
            t += 500;
        }
        assert_eq!(s.cards[0].auto, Auto::Held(Hold::Unwatched));
    }
    assert_eq!(w.relaunches, 0);
    assert_eq!(w.count("died"), 1);
    let died = &w.journal[0];
    assert_eq!(died.ts, T0 - 3_600_000, "stamped with tmux's time of death");
    assert_eq!(
        died.detail.as_deref(),
        Some("process exited (code 1) (while no agentwatch was watching)")
    );
}

#[test]
fn a_dashboard_that_yields_to_a_daemon_stops_supervising_and_says_who_does() {
    let (mut w, mut dash) = (World::new(), instance(true));
    w.look(&mut dash, T0);
    dash.update(
        Msg::Elected(Election {
            mine: false,
            by: Some(DAEMON),
            took_over: None,
        }),
        T0 + 100,
    );
    assert!(!dash.supervision.supervising);
    assert_eq!(dash.supervision.supervisor, Some(DAEMON));
    w.kill(1);
    w.look(&mut dash, T0 + 500);
    assert_eq!(w.count("died"), 0, "the daemon journals it");
    // The bell still rings in this dashboard's own terminal, and only the bell.
    let fx = {
        let mut s = instance(false);
        let mut w2 = World::new();
        w2.look(&mut s, T0);
        w2.kill(1);
        s.update(Msg::Tick, T0 + 500);
        s.update(Msg::polled(Ok(w2.obs())), T0 + 500)
    };
    assert!(fx.iter().any(|e| matches!(
        e,
        Effect::Notify {
            bell_only: true,
            ..
        }
    )));
}

#[test]
fn a_dashboard_started_later_tells_what_happened_to_each_agent_meanwhile() {
    let mut w = World::new();
    let mut s = instance(false);
    let socket = s.servers.socket.clone();
    let ev = |ts: Millis, kind: &str, attempt: Option<u32>| Event {
        ts,
        event: kind.into(),
        pane: "%1".into(),
        server: Some(socket.clone()),
        session_id: Some(ID.into()),
        exit_code: Some(1),
        attempt,
        ..Event::default()
    };
    let at = |h: u64, m: u64| T0 / 86_400_000 * 86_400_000 + (h * 60 + m) * 60_000;
    let mut other_server = ev(at(3, 50), "died", None);
    other_server.server = Some("/tmp/other.sock".into());
    let events = vec![
        other_server,
        ev(at(3, 57), "died", None),
        ev(at(3, 57), "scheduled", Some(1)),
        ev(at(3, 57) + 2_000, "resumed", Some(1)),
    ];
    s.story.started = Some(at(9, 0));
    s.update(Msg::JournalRead(events), at(9, 0));
    w.look(&mut s, at(9, 0));
    let notice = s.cards[0].notice.as_ref().map(|n| n.text.as_str());
    assert_eq!(
        notice,
        Some("died 03:57 (exit 1) before this dashboard opened; resumed 03:57 (attempt 1/3)")
    );
}

#[test]
fn an_agent_born_and_dead_between_two_looks_is_a_death_seen_not_an_old_one() {
    let (mut w, mut s) = (World::new(), instance(true));
    w.panes.clear();
    w.look(&mut s, T0);
    let mut p = pane(1, 1, "claude");
    p.opts.session_id = ID.into();
    w.panes.push(p);
    w.kill(1);
    let mut t = T0 + 500;
    while t <= T0 + 4_000 {
        w.look(&mut s, t);
        t += 500;
    }
    assert_eq!(w.relaunches, 1);
    assert_eq!(w.count("died"), 1);

    // The same after the server went away and a new one came up (pane ids start again).
    let mut w2 = World::new();
    w2.look(&mut s, t);
    s.update(
        Msg::polled(Err(TmuxError::NoServer {
            socket: "/tmp/s".into(),
        })),
        t + 500,
    );
    w2.kill(1);
    w2.look(&mut s, t + 1_000);
    assert!(
        matches!(s.cards[0].auto, Auto::Scheduled { .. }),
        "{:?}",
        s.cards[0]
    );
}

#[test]
fn the_story_of_what_happened_meanwhile_ends_with_a_key_or_the_next_death() {
    let mut w = World::new();
    let mut s = instance(false);
    let story = |s: &State| s.cards[0].notice.as_ref().is_some_and(|n| n.story);
    let died = Event {
        ts: T0 - 60_000,
        event: "died".into(),
        pane: "%1".into(),
        server: Some(s.servers.socket.clone()),
        exit_code: Some(1),
        ..Event::default()
    };
    s.update(Msg::JournalRead(vec![died.clone()]), T0);
    w.look(&mut s, T0);
    assert!(story(&s));
    s.update(Msg::Action(Action::ToggleAuto), T0 + 100);
    assert!(!story(&s), "a key on the card ends it");

    let mut s = instance(false);
    s.update(Msg::JournalRead(vec![died]), T0);
    w.look(&mut s, T0);
    assert!(story(&s));
    w.kill(1);
    w.look(&mut s, T0 + 500);
    assert!(!story(&s), "a new death ends it");
}

#[test]
fn an_agent_resumed_directly_after_it_ran_under_a_wrapper_dies_as_a_new_death() {
    use crate::pane::{Proc, ProcTree};
    let (mut w, mut s) = (World::new(), instance(true));
    let look = |w: &World, s: &mut State, t: Millis, comm: &str, own: &[&str], below: Vec<Proc>| {
        let mut o = w.obs();
        let id = w.panes[0].id;
        if !w.panes[0].dead {
            o.comm.insert(id, comm.to_string());
            std::sync::Arc::make_mut(&mut o.tree).insert(
                id,
                std::sync::Arc::new(ProcTree {
                    own: own.iter().map(|a| a.to_string()).collect(),
                    below,
                    ..Default::default()
                }),
            );
        }
        let mut fx = s.update(Msg::Tick, t);
        fx.extend(s.update(Msg::polled(Ok(o)), t));
        fx
    };
    let claude = Proc {
        pid: 1500,
        ppid: 1001,
        comm: "claude".into(),
        argv: vec!["claude".into(), "--session-id".into(), ID.into()],
        start: None,
    };
    let cc = ["/bin/bash", "/home/u/bin/cc", "--session-id", ID];
    w.panes[0].current_command = "bash".into();
    let fx = look(&w, &mut s, T0, "cc", &cc, vec![claude.clone()]);
    w.apply(&mut s, fx, T0);
    assert_eq!(s.cards[0].life, Life::Running);
    // claude ends; the wrapper passes its status on a moment later.
    let fx = look(&w, &mut s, T0 + 500, "cc", &cc, vec![]);
    w.apply(&mut s, fx, T0 + 500);
    w.kill(1);
    let mut t = T0 + 1_000;
    while w.relaunches == 0 && t < T0 + 10_000 {
        let fx = look(&w, &mut s, t, "cc", &cc, vec![]);
        w.apply(&mut s, fx, t);
        t += 500;
    }
    assert_eq!(w.relaunches, 1);
    // The resumed run (through the wrapper) dies too, before anyone looked: a new death,
    // judged and journaled, and resumed in its turn.
    w.kill(1);
    let mut end = t + 500;
    while w.relaunches == 1 && end < t + 30_000 {
        let fx = look(&w, &mut s, end, "cc", &cc, vec![]);
        w.apply(&mut s, fx, end);
        end += 500;
    }
    assert_eq!(w.count("died"), 2, "{:#?}", w.journal);
    assert_eq!(w.relaunches, 2);
    // That run lives: the old exit mark (of the first wrapper process) says nothing of it.
    let fx = look(&w, &mut s, end + 500, "cc", &cc, vec![claude]);
    w.apply(&mut s, fx, end + 500);
    assert_eq!(s.cards[0].life, Life::Running);
    assert_eq!(w.count("died"), 2);
}

#[test]
fn a_crash_loop_at_a_shell_prompt_is_a_new_death_each_time_and_journaled_once_each() {
    use crate::pane::{Proc, ProcTree};
    let (mut w, mut s) = (World::new(), instance(true));
    w.panes[0].current_command = "bash".into();
    let look = |w: &World, s: &mut State, t: Millis, agent: Option<u32>| {
        let mut o = w.obs();
        let id = w.panes[0].id;
        o.comm.insert(id, "bash".into());
        let below = agent
            .map(|pid| Proc {
                pid,
                ppid: 1001,
                comm: "claude".into(),
                argv: vec!["claude".into(), "--resume".into(), ID.into()],
                start: None,
            })
            .into_iter()
            .collect();
        std::sync::Arc::make_mut(&mut o.tree).insert(
            id,
            std::sync::Arc::new(ProcTree {
                own: vec!["-bash".into()],
                below,
                ..Default::default()
            }),
        );
        let mut fx = s.update(Msg::Tick, t);
        fx.extend(s.update(Msg::polled(Ok(o)), t));
        fx
    };
    // Three runs, each dying 3 s after it started: within seconds of each other.
    let mut t = T0;
    for pid in [1500, 1600, 1700] {
        let fx = look(&w, &mut s, t, Some(pid));
        w.apply(&mut s, fx, t);
        let fx = look(&w, &mut s, t + 3_000, None);
        w.apply(&mut s, fx, t + 3_000);
        t += 3_500;
    }
    assert_eq!(w.count("died"), 3, "{:#?}", w.journal);
    assert_eq!(w.count("scheduled"), 3);
}

/// A crash whose first resume is due at T0 + 3 s: everything but the relaunch itself has
/// been carried out (its options written).
fn first_resume_due() -> (World, State) {
    let (mut w, mut s) = (World::new(), instance(true));
    w.look(&mut s, T0);
    w.kill(1);
    for t in [T0 + 500, T0 + 1_000, T0 + 1_500, T0 + 2_000] {
        w.look(&mut s, t);
    }
    let fx: Vec<Effect> = s
        .update(Msg::Tick, T0 + 3_000)
        .into_iter()
        .filter(|e| !matches!(e, Effect::Relaunch { .. } | Effect::Poll { .. }))
        .collect();
    w.apply(&mut s, fx, T0 + 3_000);
    (w, s)
}

/// A crash whose first resume, due at T0 + 3 s, fails with `failure` (answered at 3.1 s).
fn first_resume_fails(failure: crate::resume::Failure) -> (World, State) {
    let (mut w, mut s) = first_resume_due();
    let fx = s.update(
        Msg::Relaunched {
            pane: PaneId(1),
            result: Err(failure),
        },
        T0 + 3_100,
    );
    w.apply(&mut s, fx, T0 + 3_100);
    (w, s)
}

#[test]
fn a_failed_resume_is_not_a_second_death_in_the_journal() {
    // tmux went away for a moment: worth another attempt.
    let (mut w, mut s) = first_resume_fails("tmux: server exited unexpectedly".into());
    w.look(&mut s, T0 + 3_500);
    assert_eq!(w.count("died"), 1, "{:#?}", w.journal);
    assert_eq!(w.count("resume_failed"), 1);
    assert!(matches!(
        s.cards[0].auto,
        Auto::Scheduled { attempt: 2, .. }
    ));
}

/// Ticks one instance every 500 ms over `[from, to]`, killing the agent as soon as it runs.
fn crash_loop(w: &mut World, s: &mut State, from: Millis, to: Millis) {
    let mut t = from;
    while t <= to {
        w.look(s, t);
        if !w.panes[0].dead {
            w.kill(1);
        }
        t += 500;
    }
}

#[test]
fn a_resume_claude_answers_with_no_such_session_starts_the_same_id_again() {
    let (mut w, mut s) = (World::new(), instance(true));
    w.tail = format!("No conversation found with session ID: {ID}\n");
    w.look(&mut s, T0);
    crash_loop(&mut w, &mut s, T0 + 500, T0 + 60_000);
    let resume: Vec<String> = ["claude", "--resume", ID].map(String::from).to_vec();
    let again: Vec<String> = ["claude", "--session-id", ID].map(String::from).to_vec();
    // The first relaunch resumes; claude says it has no such session; from then on the
    // same id is started again, never resumed (a start that dies is resumed as a crash).
    assert_eq!(w.argvs.first(), Some(&resume), "{:?}", w.argvs);
    assert_eq!(w.argvs.get(1), Some(&again), "{:?}", w.argvs);
    assert_eq!(w.relaunches, 3, "the budget still bounds it");
    let detail = |e: &Event| e.detail.clone().unwrap_or_default();
    assert!(
        w.journal
            .iter()
            .any(|e| e.event == "resumed" && detail(e).contains("started again")),
        "{:#?}",
        w.journal
    );
}

#[test]
fn a_resume_the_agent_has_no_session_for_is_not_repeated_and_the_card_says_why() {
    let (mut w, mut s) = (World::new(), instance(true));
    w.panes[0] = pane(1, 1, "opencode");
    w.panes[0].opts.session_id = "ses_dcee8e322fferoOTCq05rLS6Ah".into();
    w.tail = "Error: Session not found: ses_dcee8e322fferoOTCq05rLS6Ah\n".into();
    w.look(&mut s, T0);
    crash_loop(&mut w, &mut s, T0 + 500, T0 + 60_000);
    assert_eq!(w.relaunches, 1, "{:?}", w.argvs);
    let want = Hold::NoSession("ses_dcee8e322fferoOTCq05rLS6Ah".into());
    assert_eq!(s.cards[0].auto, Auto::Held(want.clone()));
    assert_eq!(
        want.reason("opencode").as_deref(),
        Some("resume failed: opencode has no session ses_dcee: R starts a fresh session")
    );
    assert!(w.journal.iter().any(|e| e.event == "resume_failed"
        && e.detail
            .as_deref()
            .is_some_and(|d| d.contains("no session"))));
    // Kept on the pane: a dashboard beside the supervisor shows the same.
    let mut d = instance(false);
    w.look(&mut d, T0 + 60_500);
    assert_eq!(d.cards[0].auto, Auto::Held(want));
    // `r` does not run what is known to fail either; `R` starts fresh.
    let card = &s.cards[0];
    assert!(resume::plan(card, &s.agents, false, SESSION_ID).is_err());
    assert!(resume::plan(card, &s.agents, true, SESSION_ID).is_ok());
}

#[test]
fn a_quick_death_after_a_resume_without_those_words_is_a_crash_like_any_other() {
    let (mut w, mut s) = (World::new(), instance(true));
    w.tail = "Error: rate limited\n".into();
    w.look(&mut s, T0);
    crash_loop(&mut w, &mut s, T0 + 500, T0 + 60_000);
    let resume: Vec<String> = ["claude", "--resume", ID].map(String::from).to_vec();
    assert_eq!(w.argvs, vec![resume; 3]);
    assert!(matches!(
        s.cards[0].auto,
        Auto::Held(Hold::GaveUp { attempts: 3, .. })
    ));
}

#[test]
fn a_lasting_cause_keeps_its_reason_and_does_not_burn_the_budget() {
    let why = "directory /home/u/gone no longer exists";
    let (mut w, mut s) = first_resume_fails(crate::resume::Failure::lasting(why));
    // Minutes later: still the reason, no further attempt, the attempt given back.
    for k in 0..240 {
        w.look(&mut s, T0 + 3_500 + k * 500);
    }
    let want = Auto::Held(Hold::Refused(why.into()));
    assert_eq!(s.cards[0].auto, want);
    assert_eq!(s.cards[0].budget.attempts, 0);
    assert_eq!(w.relaunches, 0);
    assert_eq!(w.count("resume_failed"), 1);
    assert_eq!(w.count("gave_up"), 0);
    let reason = Hold::Refused(why.into()).reason("claude");
    assert_eq!(
        reason.as_deref(),
        Some("not auto-resumed: directory /home/u/gone no longer exists")
    );
    // A dashboard started now reads it from the pane.
    let mut d = instance(false);
    w.look(&mut d, T0 + 200_000);
    assert_eq!(d.cards[0].auto, want);
}

#[test]
fn a_manual_relaunch_refused_for_a_lasting_cause_keeps_its_reason_on_the_card() {
    let (mut w, mut s) = (World::new(), instance(true));
    s.supervision.auto_on = false;
    w.look(&mut s, T0);
    w.kill(1);
    w.look(&mut s, T0 + 500);
    let fx = s.update(Msg::Action(Action::Relaunch), T0 + 600);
    assert!(fx.iter().any(|e| matches!(e, Effect::Relaunch { .. })));
    let why = "could not save the crash record in /x (No space left on device (os error 28)): relaunch refused so its output is not lost";
    let fx = s.update(
        Msg::Relaunched {
            pane: PaneId(1),
            result: Err(crate::resume::Failure::lasting(why)),
        },
        T0 + 700,
    );
    w.apply(&mut s, fx, T0 + 700);
    // Long after the notice would have faded: still said, and kept on the pane.
    w.look(&mut s, T0 + 120_000);
    assert_eq!(s.cards[0].auto, Auto::Held(Hold::Refused(why.into())));
    let mut d = instance(false);
    w.look(&mut d, T0 + 120_500);
    assert_eq!(d.cards[0].auto, Auto::Held(Hold::Refused(why.into())));
}

#[test]
fn c_beside_the_supervisor_is_taken_up_when_it_writes_what_the_supervisor_wrote_before() {
    // The supervisor's last two budget writes: the manual relaunch (`0|||`), then the
    // schedule of the next death (`0||<due>|`). Cancelling writes `0|||` again: that is
    // the dashboard's edit, not the supervisor's older write still in flight.
    let (mut w, mut sup, mut dash) = (World::new(), instance(true), instance(false));
    sup.supervision.auto_on = false;
    both(&mut w, &mut sup, &mut dash, T0, T0 + 500);
    w.kill(1);
    both(&mut w, &mut sup, &mut dash, T0 + 1_000, T0 + 1_000);
    let fx = sup.update(Msg::Action(Action::Relaunch), T0 + 1_100);
    w.apply(&mut sup, fx, T0 + 1_100);
    assert_eq!(w.relaunches, 1);
    sup.supervision.auto_on = true;
    both(&mut w, &mut sup, &mut dash, T0 + 1_500, T0 + 2_000);
    w.kill(1);
    // A death this soon after a resume is judged once its last lines are read.
    both(&mut w, &mut sup, &mut dash, T0 + 2_500, T0 + 3_000);
    assert!(
        matches!(sup.cards[0].auto, Auto::Scheduled { .. }),
        "{:?}",
        sup.cards[0].auto
    );
    assert!(
        matches!(dash.cards[0].auto, Auto::Scheduled { .. }),
        "{:?}",
        dash.cards[0].auto
    );
    let fx = dash.update(Msg::Action(Action::CancelAuto), T0 + 3_200);
    w.apply(&mut dash, fx, T0 + 3_200);
    both(&mut w, &mut sup, &mut dash, T0 + 3_500, T0 + 40_000);
    assert_eq!(w.relaunches, 1, "the cancelled resume ran: {:?}", w.argvs);
    assert_eq!(sup.cards[0].auto, Auto::Cancelled);
}

#[test]
fn a_malformed_recorded_id_is_said_at_the_death_not_when_r_is_pressed() {
    let (mut w, mut s) = (World::new(), instance(true));
    w.panes[0].opts.session_id = "$(touch /tmp/pwned)".into();
    w.look(&mut s, T0);
    w.kill(1);
    for k in 1..20 {
        w.look(&mut s, T0 + k * 500);
    }
    let why = "session id \"$(touch /tmp/pwned)\" does not look like a claude id: relaunch refused";
    assert_eq!(s.cards[0].auto, Auto::Held(Hold::Refused(why.into())));
    assert_eq!(w.relaunches, 0);
    assert_eq!(
        Hold::Refused(why.into()).reason("claude").as_deref(),
        Some(format!("not auto-resumed: {why}").as_str())
    );
}

#[test]
fn a_supervisor_killed_while_it_resumes_leaves_the_resume_to_the_next_one() {
    // The resume is due: its options are written, then the supervisor is killed before
    // the relaunch happens.
    let (mut w, s) = first_resume_due();
    assert_eq!(w.relaunches, 0);
    drop(s);
    // The next supervisor (a restarted dashboard, the daemon) carries it out, once, as
    // attempt 1.
    let mut next = instance(true);
    for k in 0..20 {
        w.look(&mut next, T0 + 4_000 + k * 500);
    }
    assert_eq!(w.relaunches, 1, "{:?}", w.argvs);
    assert_eq!(w.panes[0].opts.attempts, "1");
    assert_eq!(w.count("died"), 1, "judged once: {:#?}", w.journal);
}

#[test]
fn an_agent_pane_that_vanishes_while_its_agent_runs_is_journaled_never_silence() {
    let (mut w, mut s) = (World::new(), instance(true));
    w.look(&mut s, T0);
    w.look(&mut s, T0 + 500);
    // Gone before remain-on-exit could be set: the write asked for never lands.
    w.panes[0].remain_on_exit = false;
    let fx = s.update(Msg::polled(Ok(w.obs())), T0 + 900);
    assert!(fx.iter().any(|e| matches!(e, Effect::SetOptions(sets)
        if sets.iter().any(|(_, k, v)| *k == Opt::RemainOnExit && v == "on"))));
    w.panes.clear();
    w.look(&mut s, T0 + 1_000);
    assert_eq!(w.count("gone"), 1, "{:#?}", w.journal);
    let ev = w.journal.iter().find(|e| e.event == "gone").unwrap();
    assert_eq!(ev.pane, "%1");
    assert!(ev
        .detail
        .as_deref()
        .unwrap()
        .contains("its exit and output are lost"));
    // Beside the supervisor nothing is journaled twice.
    let (mut w, mut sup, mut dash) = (World::new(), instance(true), instance(false));
    both(&mut w, &mut sup, &mut dash, T0, T0 + 500);
    w.panes.clear();
    both(&mut w, &mut sup, &mut dash, T0 + 1_000, T0 + 1_000);
    assert_eq!(w.count("gone"), 1);
}

#[test]
fn codex_put_in_a_claude_pane_by_another_hand_is_its_own_agent_never_claude_resumed() {
    let (mut w, mut s) = (World::new(), instance(true));
    w.panes[0].start_command = format!("claude --session-id {ID}");
    w.look(&mut s, T0);
    assert_eq!(w.panes[0].opts.occupant, "1001", "adopted at first sight");
    // `respawn-pane -k -t %1 codex`: another process in the pane, its options kept.
    let p = &mut w.panes[0];
    p.pid = Some(3000);
    p.current_command = "codex".into();
    p.start_command = "codex".into();
    w.look(&mut s, T0 + 500);
    assert_eq!(s.cards[0].agent.as_deref(), Some("codex"));
    assert_eq!(
        w.panes[0].opts.session_id, "",
        "claude's id dropped from the pane"
    );
    assert_eq!(w.panes[0].opts.agent, "codex");
    assert_eq!(w.panes[0].opts.occupant, "3000");
    let replaced: Vec<&Event> = w.journal.iter().filter(|e| e.event == "replaced").collect();
    assert_eq!(replaced.len(), 1);
    assert_eq!(
        replaced[0].detail.as_deref(),
        Some(
            "claude (running, pid 1001) replaced by codex (pid 3000) by another hand than agentwatch's"
        )
    );
    assert_eq!(w.count("died"), 0, "nothing died");
    // codex exits 1: a codex death, with no id to resume; never claude's argv.
    w.kill(1);
    let mut t = T0 + 1_000;
    while t <= T0 + 60_000 {
        w.look(&mut s, t);
        t += 500;
    }
    assert_eq!(w.relaunches, 0, "{:?}", w.argvs);
    let died: Vec<&Event> = w.journal.iter().filter(|e| e.event == "died").collect();
    assert_eq!(died.len(), 1);
    assert_eq!(died[0].agent.as_deref(), Some("codex"));
    assert_eq!(died[0].session_id, None);
    assert_eq!(s.cards[0].auto, Auto::Held(Hold::NoSessionId));
}

#[test]
fn agentwatchs_own_resume_keeps_the_records_and_is_no_replacement() {
    let (mut w, mut s) = (World::new(), instance(true));
    w.look(&mut s, T0);
    w.kill(1);
    let t = w.look_till_relaunched(&mut s, T0 + 500);
    assert_eq!(w.relaunches, 1);
    w.look(&mut s, t);
    assert_eq!(w.panes[0].opts.session_id, ID, "the resumed session's");
    assert_eq!(
        w.panes[0].opts.occupant, "2000",
        "the relaunched process adopted"
    );
    assert_eq!(w.count("replaced"), 0);
}

#[test]
fn a_session_another_live_pane_holds_is_never_resumed_a_second_time() {
    let (mut w, mut s) = (World::new(), instance(true));
    let mut twin = pane(2, 2, "claude");
    twin.opts.session_id = ID.into();
    w.panes.push(twin);
    w.look(&mut s, T0);
    w.kill(1);
    let mut t = T0 + 500;
    while t <= T0 + 20_000 {
        w.look(&mut s, t);
        t += 500;
    }
    assert_eq!(w.relaunches, 0, "{:?}", w.argvs);
    let why = "session 0e6a1c1e is also open in %2 (work:2.0): end that one, then r";
    assert_eq!(s.cards[0].auto, Auto::Held(Hold::Refused(why.into())));
    assert!(w
        .journal
        .iter()
        .any(|e| e.event == "resume_failed" && e.detail.as_deref() == Some(why)));
    // r says the same, and runs nothing.
    s.grid.selected = Some(PaneId(1));
    let fx = s.update(Msg::Action(Action::Relaunch), t);
    w.apply(&mut s, fx, t);
    assert_eq!(w.relaunches, 0);
    assert_eq!(
        s.cards[0].notice.as_ref().map(|n| n.text.as_str()),
        Some(why)
    );
    // The other one ended: r resumes it.
    w.panes[1].dead = true;
    w.panes[1].dead_status = Some(0);
    w.look(&mut s, t + 500);
    s.grid.selected = Some(PaneId(1));
    let fx = s.update(Msg::Action(Action::Relaunch), t + 600);
    w.apply(&mut s, fx, t + 600);
    assert_eq!(w.relaunches, 1);
}

#[test]
fn a_resume_that_comes_up_under_another_id_is_said_and_the_pane_follows_what_runs() {
    let (mut w, mut s) = (World::new(), instance(true));
    w.look(&mut s, T0);
    w.kill(1);
    let t = w.look_till_relaunched(&mut s, T0 + 500);
    assert_eq!(w.relaunches, 1);
    const OTHER: &str = "99999999-2222-4333-8444-555555555555";
    let pid = w.panes[0].pid.unwrap();
    w.files.insert(
        pid,
        crate::attention::AgentFile {
            status: "idle".into(),
            session_id: Some(OTHER.into()),
            ..Default::default()
        },
    );
    w.look(&mut s, t);
    let failed: Vec<&Event> = w
        .journal
        .iter()
        .filter(|e| e.event == "resume_failed")
        .collect();
    assert_eq!(failed.len(), 1, "{:?}", w.journal);
    assert_eq!(
        failed[0].detail.as_deref(),
        Some(
            "claude came up as session 99999999-2222-4333-8444-555555555555, not the 0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11 it was asked to resume"
        )
    );
    assert_eq!(
        w.panes[0].opts.session_id, OTHER,
        "the pane follows what runs"
    );
    let notice = s.cards[0].notice.as_ref().map(|n| n.text.clone());
    assert_eq!(
        notice.as_deref(),
        Some("resume failed: claude came up as session 99999999, not 0e6a1c1e; the card follows 99999999")
    );
    // Said once; its next death resumes what ran, never the same argv again.
    w.look(&mut s, t + 500);
    assert_eq!(w.count("resume_failed"), 1);
    w.kill(1);
    let mut t = t + 1_000;
    while w.relaunches == 1 && t <= T0 + 60_000 {
        w.look(&mut s, t);
        t += 500;
    }
    assert_eq!(w.argvs[1], ["claude", "--resume", OTHER]);
}

/// A world of `n` claude panes, each with its own session id.
fn crowd(n: u32) -> World {
    let mut w = World::new();
    w.panes = (1..=n)
        .map(|i| {
            let mut p = pane(i, i, "claude");
            p.opts.session_id = format!("0e6a1c1e-4f7b-4a43-9d55-{:012}", i);
            p
        })
        .collect();
    w
}

fn kill_all(w: &mut World) {
    for p in &mut w.panes {
        p.dead = true;
        p.dead_status = Some(1);
        p.current_path.clear();
    }
}

#[test]
fn a_mass_death_is_resumed_one_first_then_a_few_at_a_time_never_all_at_once() {
    let (mut w, mut s) = (crowd(20), instance(true));
    w.look(&mut s, T0);
    kill_all(&mut w);
    let mut t = T0 + 500;
    while t <= T0 + 180_000 {
        w.look(&mut s, t);
        t += 500;
    }
    assert_eq!(w.relaunches, 20, "every one, in the end");
    let within = |from: Millis, to: Millis| {
        w.relaunched
            .iter()
            .filter(|(_, at)| *at >= from && *at < to)
            .count()
    };
    assert_eq!(within(T0, T0 + 10_000), 1, "{:?}", w.relaunched);
    let first = w.relaunched[0].1;
    assert_eq!(
        within(first + 1, first + 10_000),
        0,
        "the rest wait for the first to stay up"
    );
    for window in w.relaunched[1..].windows(5) {
        assert!(
            window[4].1 - window[0].1 >= 5_000,
            "never more than 4 in 5 s: {:?}",
            window
        );
    }
    let mass: Vec<&Event> = w
        .journal
        .iter()
        .filter(|e| e.event == "mass_death")
        .collect();
    assert_eq!(mass.len(), 1, "journaled once");
    assert_eq!(
        mass[0].detail.as_deref(),
        Some("20 agents died within 10 s: resuming one first, then 4 at a time every 5 s once it stayed up 10 s")
    );
}

#[test]
fn a_first_resumed_that_dies_again_holds_the_others_and_says_why() {
    let (mut w, mut s) = (crowd(6), instance(true));
    w.look(&mut s, T0);
    kill_all(&mut w);
    let mut t = w.look_till_relaunched(&mut s, T0 + 500);
    let canary = w.relaunched[0].0;
    // It dies again at once.
    w.look(&mut s, t);
    let p = w.panes.iter_mut().find(|p| p.id == canary).unwrap();
    p.dead = true;
    p.dead_status = Some(1);
    let end = t + 8_000;
    while t <= end {
        w.look(&mut s, t);
        t += 500;
    }
    assert!(
        w.relaunched.iter().all(|(p, _)| *p == canary),
        "only the first, by its own policy: {:?}",
        w.relaunched
    );
    let held: Vec<&Event> = w
        .journal
        .iter()
        .filter(|e| e.event == "mass_death" && e.pane == canary.to_string())
        .collect();
    assert_eq!(held.len(), 1, "{:?}", w.journal);
    let wave = s.supervision.waves.get(&ServerId::Local).unwrap();
    assert!(wave
        .held
        .as_deref()
        .is_some_and(|h| h.contains("died again")));
    assert_eq!(
        wave.describe(&s.supervision.pacing),
        "mass death: 6 agents, the rest wait: the first resumed died again"
    );
}

#[test]
fn a_daemon_that_finds_another_daemon_holding_the_server_leaves_and_a_dashboard_does_not() {
    // A second daemon (started on another path to the server while this one was stopped).
    let mut d = instance(true);
    d.headless = true;
    let fx = d.update(
        Msg::Elected(Election {
            mine: false,
            by: Some(DAEMON),
            took_over: None,
        }),
        T0 + 100,
    );
    assert!(d.quit, "two daemons would only race");
    assert!(fx
        .iter()
        .any(|e| matches!(e, Effect::Log(l) if l.text.contains("this daemon stops"))));
    // A dashboard yields to it and stays open.
    let mut dash = instance(true);
    dash.update(
        Msg::Elected(Election {
            mine: false,
            by: Some(DAEMON),
            took_over: None,
        }),
        T0 + 100,
    );
    assert!(!dash.quit);
}

#[test]
fn taking_over_from_a_supervisor_that_stopped_answering_is_logged_with_how_long_ago() {
    let mut dash = instance(false);
    let fx = dash.update(
        Msg::Elected(Election {
            mine: true,
            by: None,
            took_over: Some((DAEMON, T0 - 12_000)),
        }),
        T0,
    );
    assert!(dash.supervision.supervising);
    assert!(
        fx.iter().any(|e| matches!(e, Effect::Log(l)
            if l.text == format!("daemon {} stopped answering 12s ago: supervising here", DAEMON.pid))),
        "{fx:?}"
    );
}

/// Why it stopped, and what follows from it.
mod causes;
