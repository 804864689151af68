use super::*;
use crate::attention::Doing;
use crate::msg::{Action, Effect, Msg};
use crate::pane::Exit;
use crate::testkit::*;

#[test]
fn a_tick_polls_once_and_never_piles_up_while_a_poll_is_in_flight() {
    let mut s = state((80, 24));
    assert_eq!(
        s.update(Msg::Tick, T0),
        vec![
            Effect::LoadRoster,
            Effect::Poll {
                server: ServerId::Local,
                hot: vec![],
                whole: true,
            }
        ]
    );
    assert_eq!(s.update(Msg::Tick, T0 + 500), vec![]);
    assert_eq!(s.update(Msg::Tick, T0 + 1000), vec![]);
    s.update(Msg::polled(Ok(obs(vec![]))), T0 + 1100);
    assert_eq!(
        s.update(Msg::Tick, T0 + 1500),
        vec![Effect::Poll {
            server: ServerId::Local,
            hot: vec![],
            whole: false,
        }]
    );
}

#[test]
fn only_agent_panes_become_cards_unless_all_is_asked() {
    let mut s = state((80, 24));
    poll(
        &mut s,
        vec![pane(1, 0, "claude"), pane(2, 1, "vim"), pane(3, 2, "codex")],
        T0,
    );
    let kinds: Vec<_> = s.cards.iter().map(|c| c.agent.clone()).collect();
    assert_eq!(kinds, vec![Some("claude".into()), Some("codex".into())]);

    let mut all = State::new(
        &crate::settings::Config::default(),
        true,
        "x".into(),
        (80, 24),
    );
    poll(&mut all, vec![pane(1, 0, "claude"), pane(2, 1, "vim")], T0);
    assert_eq!(all.cards.len(), 2);
}

#[test]
fn a_death_is_seen_with_its_code_and_counted() {
    let mut s = state((80, 24));
    poll(&mut s, vec![pane(1, 0, "claude"), pane(2, 1, "codex")], T0);
    assert_eq!(
        s.counts(),
        Counts {
            running: 2,
            ..Counts::default()
        }
    );
    poll(
        &mut s,
        vec![
            dead(pane(1, 0, "claude"), Some(3), None),
            dead(pane(2, 1, "codex"), Some(0), None),
        ],
        T0 + 500,
    );
    assert_eq!(s.cards[0].life, Life::Dead(Exit::Code(3)));
    assert_eq!(s.cards[0].died_at, Some(T0 + 500));
    assert_eq!(
        s.counts(),
        Counts {
            dead: 1,
            finished: 1,
            ..Counts::default()
        }
    );
}

#[test]
fn a_dead_pane_without_status_kicks_the_server_and_looks_again() {
    let mut s = state((80, 24));
    poll(&mut s, vec![pane(1, 0, "claude")], T0);
    let fx = poll(
        &mut s,
        vec![dead(pane(1, 0, "claude"), None, None)],
        T0 + 500,
    );
    assert!(
        fx.contains(&Effect::Kick {
            server: ServerId::Local,
            pid: Some(4242)
        }),
        "{fx:?}"
    );
    assert!(fx.contains(&Effect::Poll {
        server: ServerId::Local,
        hot: vec![PaneId(1)],
        whole: true,
    }));
    assert_eq!(s.cards[0].life, Life::Reading);
    // The re-poll after the kick shows the code.
    let fx = s.update(
        Msg::polled(Ok(obs(vec![dead(pane(1, 0, "claude"), Some(1), None)]))),
        T0 + 520,
    );
    assert!(!fx.contains(&Effect::Kick {
        server: ServerId::Local,
        pid: Some(4242)
    }));
    assert_eq!(s.cards[0].life, Life::Dead(Exit::Code(1)));
}

#[test]
fn an_exit_status_that_stays_empty_is_shown_as_unknown_after_the_kicks() {
    let mut s = state((80, 24));
    poll(&mut s, vec![pane(1, 0, "claude")], T0);
    let mut kicks = 0;
    for i in 0..10 {
        // Two polls in the same instant (the re-poll right after a kick) kick only once.
        for _ in 0..2 {
            let fx = s.update(
                Msg::polled(Ok(obs(vec![dead(pane(1, 0, "claude"), None, None)]))),
                T0 + 500 * i,
            );
            kicks += fx
                .iter()
                .filter(|e| {
                    matches!(
                        e,
                        Effect::Kick {
                            server: ServerId::Local,
                            ..
                        }
                    )
                })
                .count();
        }
    }
    assert_eq!(kicks, usize::from(crate::card::MAX_KICKS));
    assert_eq!(s.cards[0].life, Life::Dead(Exit::Unknown));
}

#[test]
fn live_agent_panes_get_remain_on_exit_and_their_cwd_and_id_recorded() {
    let mut s = state((80, 24));
    let mut p = pane(1, 0, "claude");
    p.remain_on_exit = false;
    p.start_command = "claude --session-id 0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into();
    let fx = poll(&mut s, vec![p, pane(2, 1, "vim")], T0);
    let Some(Effect::SetOptions(sets)) = fx.iter().find(|e| matches!(e, Effect::SetOptions(_)))
    else {
        panic!("no option writes in {fx:?}");
    };
    let names: Vec<&str> = sets.iter().map(|(_, k, _)| k.name()).collect();
    assert_eq!(
        names,
        vec![
            "@agentwatch_session_id",
            "@agentwatch_state",
            "remain-on-exit",
            "@agentwatch_agent",
            "@agentwatch_occupant",
            "@agentwatch_cwd",
        ]
    );
    assert!(
        sets.iter().all(|(id, _, _)| *id == PaneId(1)),
        "never touches the non-agent pane"
    );
    assert_eq!(sets[0].2, "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11");
}

#[test]
fn retain_dead_false_leaves_remain_on_exit_alone_and_a_bad_id_is_never_recorded() {
    let config = crate::settings::Config {
        retain_dead: false,
        ..Default::default()
    };
    let mut s = State::new(&config, false, "x".into(), (80, 24));
    let mut p = pane(1, 0, "claude");
    p.remain_on_exit = false;
    p.start_command = "claude --resume '$(rm -rf ~)'".into();
    let fx = poll(&mut s, vec![p], T0);
    let sets: Vec<String> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::SetOptions(v) => Some(
                v.iter()
                    .map(|(_, k, _)| k.name().to_string())
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(!sets.contains(&"remain-on-exit".to_string()));
    assert!(!sets.contains(&"@agentwatch_session_id".to_string()));
}

#[test]
fn previews_are_fetched_for_cards_on_screen_only_and_not_every_tick() {
    let mut s = state((80, 24));
    s.grid.mode = Mode::Cards; // two cards per screen
    let panes: Vec<_> = (1..=5).map(|i| pane(i, i, "claude")).collect();
    let fx = poll(&mut s, panes.clone(), T0);
    let capture = |panes: Vec<PaneId>| Effect::CaptureScreens {
        panes: panes.into_iter().map(|p| (p, 8)).collect(),
    };
    assert!(fx.contains(&capture(vec![PaneId(1), PaneId(2)])), "{fx:?}");
    let answer: HashMap<PaneId, String> = [(PaneId(1), "one".into()), (PaneId(2), "two".into())]
        .into_iter()
        .collect();
    s.update(Msg::Screens(Ok(answer)), T0 + 10);
    // Nothing changed: no new capture.
    let fx = poll(&mut s, panes.clone(), T0 + 5_000);
    assert!(
        !fx.iter()
            .any(|e| matches!(e, Effect::CaptureScreens { .. })),
        "{fx:?}"
    );
    // Output in pane 2: captured again, once the interval has passed.
    let mut changed = panes.clone();
    changed[1].history_size = 7;
    let fx = poll(&mut s, changed, T0 + 6_000);
    assert!(fx.contains(&capture(vec![PaneId(2)])), "{fx:?}");
    // A screen asked for and not in the answer (its capture failed): asked again, after
    // the interval (a pane that went is not asked for in a loop).
    let fx = s.update(Msg::Screens(Ok(HashMap::new())), T0 + 6_010);
    assert!(!fx
        .iter()
        .any(|e| matches!(e, Effect::CaptureScreens { .. })));
    let fx = s.update(Msg::Tick, T0 + 7_100);
    assert!(fx.contains(&capture(vec![PaneId(2)])), "{fx:?}");
}

#[test]
fn previews_keep_the_last_lines_without_the_dead_pane_line() {
    let screen = "one\ntwo\nthree   \n\nPane is dead (status 1, Sun Nov 29 22:35:16 2026)\n\n\n";
    assert_eq!(last_lines(screen, 2), vec!["two", "three"]);
}

#[test]
fn selection_moves_and_scrolls_to_stay_visible() {
    let mut s = state((80, 24));
    s.grid.mode = Mode::Cards;
    poll(&mut s, (1..=5).map(|i| pane(i, i, "claude")).collect(), T0);
    assert_eq!(s.grid.selected, Some(PaneId(1)));
    for _ in 0..3 {
        s.update(Msg::Action(Action::Down), T0);
    }
    assert_eq!(s.grid.selected, Some(PaneId(4)));
    assert_eq!(s.page(), 2..4);
    s.update(Msg::Action(Action::First), T0);
    assert_eq!(s.page(), 0..2);
    s.update(Msg::Action(Action::Last), T0);
    assert_eq!(s.grid.selected, Some(PaneId(5)));
}

#[test]
fn the_selection_stays_on_its_pane_when_others_come_and_go() {
    let mut s = state((80, 24));
    poll(&mut s, vec![pane(1, 1, "claude"), pane(2, 2, "claude")], T0);
    s.update(Msg::Action(Action::Down), T0);
    poll(
        &mut s,
        vec![
            pane(9, 0, "codex"),
            pane(1, 1, "claude"),
            pane(2, 2, "claude"),
        ],
        T0 + 500,
    );
    assert_eq!(s.grid.selected, Some(PaneId(2)));
    // Its pane vanished: the next one in order takes the selection.
    poll(
        &mut s,
        vec![pane(9, 0, "codex"), pane(1, 1, "claude")],
        T0 + 1000,
    );
    assert_eq!(s.grid.selected, Some(PaneId(1)));
}

#[test]
fn a_failed_poll_keeps_the_cards_and_marks_them_stale() {
    let mut s = state((80, 24));
    poll(&mut s, vec![pane(1, 1, "claude")], T0);
    s.update(Msg::Tick, T0 + 500);
    s.update(
        Msg::polled(Err(TmuxError::TimedOut {
            after: std::time::Duration::from_secs(2),
        })),
        T0 + 2500,
    );
    assert_eq!(s.cards.len(), 1);
    assert!(s.is_stale());
    assert_eq!(
        s.update(Msg::Tick, T0 + 3000),
        vec![Effect::Poll {
            server: ServerId::Local,
            hot: vec![PaneId(1)],
            whole: false,
        }]
    );
}

#[test]
fn a_wake_polls_at_once_or_right_after_the_poll_under_way() {
    let mut s = state((80, 24));
    poll(&mut s, vec![pane(1, 1, "claude")], T0);
    // Nothing under way: at once.
    assert!(matches!(
        s.update(Msg::Wake, T0 + 100)[..],
        [Effect::Poll { .. }]
    ));
    // Under way: not twice at once, but again as soon as it answers.
    assert!(s.update(Msg::Wake, T0 + 120).is_empty());
    let fx = s.update(Msg::polled(Ok(obs(vec![pane(1, 1, "claude")]))), T0 + 130);
    assert!(
        fx.iter().any(|e| matches!(e, Effect::Poll { .. })),
        "{fx:?}"
    );
    // And only once.
    let fx = s.update(Msg::polled(Ok(obs(vec![pane(1, 1, "claude")]))), T0 + 140);
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Poll { .. })),
        "{fx:?}"
    );
}

#[test]
fn the_panes_read_whole_are_the_deaths_being_handled_and_once_a_second_those_on_screen() {
    // 80x24 shows one card row; the dead pane's status is still being read (lost SIGCHLD).
    let panes = || {
        vec![
            pane(1, 1, "claude"),
            pane(2, 2, "claude"),
            pane(3, 3, "claude"),
            dead(pane(4, 4, "claude"), None, None),
        ]
    };
    // Ticks every 100 ms for 3 s, each poll answered at once: the panes each poll read.
    let run = |s: &mut State| {
        let mut polls: Vec<(Millis, Vec<PaneId>)> = Vec::new();
        for k in 0..30 {
            let t = T0 + k * 100;
            let mut queue = s.update(Msg::Tick, t);
            while let Some(e) = queue.pop() {
                if let Effect::Poll { hot, .. } = e {
                    polls.push((t, hot));
                    queue.extend(s.update(Msg::polled(Ok(obs(panes()))), t));
                }
            }
        }
        polls
    };
    let mut s = state((80, 24));
    s.grid.mode = Mode::Cards;
    let polls = run(&mut s);
    let on_screen: Vec<PaneId> = s.visible().map(|i| s.cards[i].pane.id).collect();
    assert!(!on_screen.is_empty() && !on_screen.contains(&PaneId(3)));
    assert!(polls.len() >= 20, "{polls:?}");
    // The death on every poll while its status is being read (the first has no cards yet);
    // once given up on, no more. %3, off screen and alive, never.
    let reading = |t: Millis| t > T0 && t <= T0 + 500;
    let done = |t: Millis| t >= T0 + 1_500;
    assert!(
        polls
            .iter()
            .filter(|(t, _)| reading(*t))
            .all(|(_, h)| h.contains(&PaneId(4))),
        "{polls:?}"
    );
    assert!(
        polls
            .iter()
            .filter(|(t, _)| done(*t))
            .all(|(_, h)| !h.contains(&PaneId(4))),
        "{polls:?}"
    );
    assert!(
        polls.iter().all(|(_, h)| !h.contains(&PaneId(3))),
        "{polls:?}"
    );
    // The screen about once a second, not on every poll.
    let reads: Vec<Millis> = polls
        .iter()
        .filter(|(_, h)| on_screen.iter().all(|id| h.contains(id)))
        .map(|(t, _)| *t)
        .collect();
    assert!((2..=4).contains(&reads.len()), "{reads:?}");
    assert!(
        reads.windows(2).all(|w| w[1] - w[0] >= SCREEN_READ_MS),
        "{reads:?}"
    );
    // Headless: no screen, only the death.
    let mut d = state((80, 24));
    d.headless = true;
    let polls = run(&mut d);
    assert!(
        polls
            .iter()
            .filter(|(t, _)| reading(*t))
            .all(|(_, h)| h == &[PaneId(4)]),
        "{polls:?}"
    );
    assert!(
        polls.iter().all(|(_, h)| !h.contains(&PaneId(1))),
        "{polls:?}"
    );
}

#[test]
fn a_heard_agent_on_screen_is_not_read_whole_while_it_does_not_work() {
    // Three agents on screen, all heard: %1 stopped at T0 and writes again at T0 + 8 s; %2
    // works all along; %3 stopped too, but a hook's word is on its pane (a hook may change
    // it without a byte of output).
    let mut hooked = pane(3, 3, "claude");
    hooked.hook_status = "idle".into();
    let panes = move || vec![pane(1, 1, "claude"), pane(2, 2, "claude"), hooked.clone()];
    let again = T0 + 8_000;
    let look = |t: Millis| {
        let mut o = obs(panes());
        let one = if t >= again { t } else { T0 };
        o.heard = [
            (PaneId(1), Some(one)),
            (PaneId(2), Some(t)),
            (PaneId(3), Some(T0)),
        ]
        .into_iter()
        .collect();
        if t < again {
            o.stopped.insert(PaneId(1));
        }
        o.stopped.insert(PaneId(3));
        o
    };
    let mut s = state((160, 45));
    s.grid.mode = Mode::Cards;
    let mut polls: Vec<(Millis, Vec<PaneId>)> = Vec::new();
    for k in 0..120 {
        let t = T0 + k * 100;
        let mut queue = s.update(Msg::Tick, t);
        while let Some(e) = queue.pop() {
            if let Effect::Poll { hot, .. } = e {
                polls.push((t, hot));
                queue.extend(s.update(Msg::polled(Ok(look(t))), t));
            }
        }
    }
    let on_screen: Vec<PaneId> = s.visible().map(|i| s.cards[i].pane.id).collect();
    assert!(
        (1..=3).all(|n| on_screen.contains(&PaneId(n))),
        "{on_screen:?}"
    );
    let read = |id: u32, from: Millis, to: Millis| -> Vec<Millis> {
        polls
            .iter()
            .filter(|(t, h)| (from..to).contains(t) && h.contains(&PaneId(id)))
            .map(|(t, _)| *t)
            .collect()
    };
    // %1: read whole once a second until a read SETTLED_MS after its last work, then not
    // while it is quiet, then again once it works.
    let quiet = read(1, T0, again);
    assert!(!quiet.is_empty(), "{polls:?}");
    assert!(
        quiet.iter().all(|&t| t <= T0 + SETTLED_MS + SCREEN_READ_MS),
        "{quiet:?}"
    );
    assert!(read(1, T0 + SETTLED_MS + SCREEN_READ_MS + 1, again).is_empty());
    let after = read(1, again, T0 + 12_000);
    assert!(after.len() >= 3, "{after:?}");
    assert!(after[0] <= again + SCREEN_READ_MS, "{after:?}");
    // %2 at work, and %3 with a hook's word: once a second all along.
    for id in [2, 3] {
        let reads = read(id, T0, T0 + 12_000);
        assert!(reads.len() >= 10, "%{id}: {reads:?}");
    }
}

#[test]
fn g_switches_the_viewer_and_quits_a_popup_once_it_is_there() {
    use crate::msg::Viewer;
    let jump = |viewer: Option<Viewer>, result: Result<(), crate::errors::JumpError>| {
        let mut s = state((80, 24));
        s.client = viewer;
        poll(&mut s, vec![pane(1, 0, "claude")], T0);
        let fx = s.update(Msg::Action(Action::Jump), T0 + 10);
        let asked = fx.iter().find_map(|e| match e {
            Effect::Jump { pane, viewer } => Some((*pane, viewer.clone())),
            _ => None,
        });
        if let Some((pane, _)) = asked {
            s.update(Msg::Jumped { pane, result }, T0 + 20);
        }
        (asked, s)
    };
    // In a pane: the client showing it switches, and agentwatch stays.
    let (asked, s) = jump(Some(Viewer::Pane("%9".into())), Ok(()));
    assert_eq!(asked.unwrap().1, Viewer::Pane("%9".into()));
    assert!(!s.quit);
    // In a popup: once the client is there, the popup would hide it: agentwatch quits.
    let popup = Viewer::Popup {
        session: "$0".into(),
        client: Some("/dev/pts/3".into()),
    };
    let (asked, s) = jump(Some(popup.clone()), Ok(()));
    assert_eq!(asked.unwrap().1, popup);
    assert!(s.quit);
    // A switch that failed says why, and quits nothing.
    let gone = crate::viewer::NoViewer::NoClientOnSession("$0".into());
    let (_, s) = jump(Some(popup), Err(gone.into()));
    assert!(!s.quit);
    let notice = s.cards[0].notice.as_ref().unwrap();
    assert!(notice
        .text
        .contains("could not go to the pane: no tmux client is attached"));
    // Outside tmux: the command to type.
    let (asked, s) = jump(None, Ok(()));
    assert!(asked.is_none());
    assert!(s.cards[0]
        .notice
        .as_ref()
        .unwrap()
        .text
        .contains("outside tmux: tmux -S"));
    // Inside another tmux server: an attach typed there would nest one tmux in another.
    let mut s = state((80, 24));
    s.in_other_tmux = true;
    poll(&mut s, vec![pane(1, 0, "claude")], T0);
    s.update(Msg::Action(Action::Jump), T0 + 10);
    let text = &s.cards[0].notice.as_ref().unwrap().text;
    assert!(
        text.starts_with("this is another tmux server: from a terminal outside tmux, tmux -S"),
        "{text}"
    );
}

#[test]
fn help_opens_and_closes_and_quit_works_from_it() {
    let mut s = state((80, 24));
    s.update(Msg::Action(Action::Help), T0);
    assert!(s.overlays.show_help);
    s.update(Msg::Action(Action::Back), T0);
    assert!(!s.overlays.show_help);
    s.update(Msg::Action(Action::Help), T0);
    s.update(Msg::Action(Action::Quit), T0);
    assert!(s.quit);
}

mod auto {
    use super::*;
    use crate::card::Auto;

    const ID: &str = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";

    fn claude(id: u32) -> crate::pane::Pane {
        let mut p = pane(id, id, "claude");
        p.opts.session_id = ID.into();
        p
    }

    fn relaunches(fx: &[Effect]) -> usize {
        fx.iter()
            .filter(|e| matches!(e, Effect::Relaunch { .. }))
            .count()
    }

    fn journal(fx: &[Effect]) -> Vec<String> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::Journal(ev) => Some(ev.event.clone()),
                _ => None,
            })
            .collect()
    }

    /// Ticks every 500 ms from `from` to `to`, answering polls with `panes`; returns all effects.
    fn run(
        s: &mut State,
        panes: &[crate::pane::Pane],
        from: Millis,
        to: Millis,
    ) -> Vec<(Millis, Effect)> {
        let mut out = Vec::new();
        let mut t = from;
        while t <= to {
            for e in s.update(Msg::Tick, t) {
                out.push((t, e));
            }
            let fx = s.update(Msg::polled(Ok(obs(panes.to_vec()))), t);
            for e in crate::testkit::answer_tails(s, fx, "", t) {
                out.push((t, e));
            }
            t += 500;
        }
        out
    }

    #[test]
    fn a_crash_schedules_one_resume_after_the_backoff_and_journals_each_step() {
        let mut s = state((80, 24));
        poll(&mut s, vec![claude(1)], T0);
        let dead_p = dead(claude(1), Some(1), None);
        let fx = poll(&mut s, vec![dead_p.clone()], T0 + 500);
        assert_eq!(journal(&fx), ["died", "scheduled"]);
        assert_eq!(
            s.cards[0].auto,
            Auto::Scheduled {
                attempt: 1,
                due: T0 + 2_500
            }
        );
        assert_eq!(s.counts().resuming, 1);
        let fx = run(
            &mut s,
            std::slice::from_ref(&dead_p),
            T0 + 1_000,
            T0 + 4_000,
        );
        let when: Vec<Millis> = fx
            .iter()
            .filter(|(_, e)| matches!(e, Effect::Relaunch { .. }))
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(when, [T0 + 2_500], "exactly one relaunch, when due");
        let Some((_, Effect::Relaunch { plan, .. })) = fx
            .iter()
            .find(|(_, e)| matches!(e, Effect::Relaunch { .. }))
        else {
            unreachable!()
        };
        assert_eq!(plan.argv, ["claude", "--resume", ID]);
        let fx = s.update(
            Msg::Relaunched {
                pane: PaneId(1),
                result: Ok(plan.clone()),
            },
            T0 + 4_100,
        );
        assert_eq!(journal(&fx), ["resumed"]);
        assert_eq!(
            s.cards[0].notice.as_ref().map(|n| n.text.as_str()),
            Some("resumed (attempt 1/3)")
        );
        assert_eq!(s.cards[0].budget.attempts, 1);
    }

    #[test]
    fn a_crash_loop_gives_up_after_three_attempts_with_a_loud_notice() {
        let mut s = state((80, 24));
        let mut t = T0;
        poll(&mut s, vec![claude(1)], t);
        let mut relaunched = 0;
        let mut events = Vec::new();
        for _ in 0..5 {
            t += 1_000;
            events.extend(journal(&poll(
                &mut s,
                vec![dead(claude(1), Some(1), None)],
                t,
            )));
            for (_, e) in run(&mut s, &[dead(claude(1), Some(1), None)], t, t + 31_000) {
                match e {
                    Effect::Relaunch { plan, .. } => {
                        relaunched += 1;
                        let fx = s.update(
                            Msg::Relaunched {
                                pane: PaneId(1),
                                result: Ok(plan),
                            },
                            t,
                        );
                        events.extend(journal(&fx));
                    }
                    Effect::Journal(ev) => events.push(ev.event),
                    _ => {}
                }
            }
            t += 32_000;
            poll(&mut s, vec![claude(1)], t); // back alive, briefly
        }
        assert_eq!(relaunched, 3);
        assert_eq!(
            events.iter().filter(|e| *e == "gave_up").count(),
            2,
            "{events:?}"
        );
        assert_eq!(s.cards[0].auto, Auto::Idle, "alive again at the end");
        poll(&mut s, vec![dead(claude(1), Some(1), None)], t + 1_000);
        assert!(matches!(
            s.cards[0].auto,
            Auto::Held(crate::supervisor::Hold::GaveUp { attempts: 3, .. })
        ));
        assert_eq!(s.counts().gave_up, 1);
    }

    #[test]
    fn clean_exits_missing_ids_and_deaths_before_startup_are_never_resumed() {
        let mut s = state((80, 24));
        let no_id = pane(2, 2, "claude");
        poll(&mut s, vec![claude(1), no_id.clone(), claude(3)], T0);
        let panes = vec![
            dead(claude(1), Some(0), None),
            dead(no_id, Some(1), None),
            dead(claude(3), None, Some(15)),
        ];
        let fx = run(&mut s, &panes, T0 + 500, T0 + 60_000);
        assert_eq!(
            fx.iter()
                .filter(|(_, e)| matches!(e, Effect::Relaunch { .. }))
                .count(),
            0
        );

        let mut fresh = state((80, 24));
        let fx = run(
            &mut fresh,
            &[dead(claude(1), Some(1), None)],
            T0,
            T0 + 60_000,
        );
        assert_eq!(
            fx.iter()
                .filter(|(_, e)| matches!(e, Effect::Relaunch { .. }))
                .count(),
            0,
            "died before we looked"
        );
    }

    #[test]
    fn a_restart_mid_backoff_keeps_the_count_and_the_due_time() {
        let mut p = dead(claude(1), Some(1), None);
        p.opts.attempts = "1".into();
        p.opts.next = (T0 + 5_000).to_string();
        let mut s = state((80, 24));
        let fx = run(&mut s, &[p.clone()], T0, T0 + 4_500);
        assert_eq!(
            relaunches(&fx.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>()),
            0
        );
        assert_eq!(
            s.cards[0].auto,
            Auto::Scheduled {
                attempt: 2,
                due: T0 + 5_000
            }
        );
        let fx: Vec<Effect> = run(&mut s, &[p], T0 + 5_000, T0 + 5_000)
            .into_iter()
            .map(|(_, e)| e)
            .collect();
        assert_eq!(relaunches(&fx), 1);
        assert_eq!(s.cards[0].budget.attempts, 2);
    }

    #[test]
    fn c_cancels_a_pane_a_pauses_it_and_capital_a_pauses_all() {
        let mut s = state((80, 24));
        poll(&mut s, vec![claude(1), claude(2)], T0);
        poll(
            &mut s,
            vec![dead(claude(1), Some(1), None), claude(2)],
            T0 + 500,
        );
        let fx = s.update(Msg::Action(Action::CancelAuto), T0 + 600);
        assert_eq!(journal(&fx), ["cancelled"]);
        assert_eq!(s.cards[0].auto, Auto::Cancelled);
        let fx = run(
            &mut s,
            &[dead(claude(1), Some(1), None), claude(2)],
            T0 + 1_000,
            T0 + 40_000,
        );
        assert!(fx
            .iter()
            .all(|(_, e)| !matches!(e, Effect::Relaunch { .. })));

        s.update(Msg::Action(Action::Down), T0);
        s.update(Msg::Action(Action::ToggleAuto), T0);
        assert!(s.cards[1].budget.paused);
        let fx = run(
            &mut s,
            &[
                dead(claude(1), Some(1), None),
                dead(claude(2), Some(1), None),
            ],
            T0 + 41_000,
            T0 + 80_000,
        );
        assert!(fx
            .iter()
            .all(|(_, e)| !matches!(e, Effect::Relaunch { .. })));

        let mut s = state((80, 24));
        s.update(Msg::Action(Action::ToggleAutoAll), T0);
        assert!(!s.supervision.auto_on);
        poll(&mut s, vec![claude(1)], T0);
        let fx = run(
            &mut s,
            &[dead(claude(1), Some(1), None)],
            T0 + 500,
            T0 + 40_000,
        );
        assert!(fx
            .iter()
            .all(|(_, e)| !matches!(e, Effect::Relaunch { .. })));
    }

    #[test]
    fn a_manual_relaunch_drops_the_pending_resume_and_resets_the_count() {
        let mut s = state((80, 24));
        poll(&mut s, vec![claude(1)], T0);
        poll(&mut s, vec![dead(claude(1), Some(1), None)], T0 + 500);
        s.cards[0].budget.attempts = 2;
        let fx = s.update(Msg::Action(Action::Relaunch), T0 + 600);
        assert_eq!(relaunches(&fx), 1);
        assert_eq!(s.cards[0].auto, Auto::Idle);
        assert_eq!(s.cards[0].budget.attempts, 0);
        let fx = run(
            &mut s,
            &[dead(claude(1), Some(1), None)],
            T0 + 1_000,
            T0 + 5_000,
        );
        assert!(
            fx.iter()
                .all(|(_, e)| !matches!(e, Effect::Relaunch { .. })),
            "no second relaunch"
        );
    }

    #[test]
    fn a_failed_resume_is_shown_and_judged_again_and_never_stops_the_others() {
        let mut s = state((80, 24));
        poll(&mut s, vec![claude(1), claude(2)], T0);
        let panes = vec![
            dead(claude(1), Some(1), None),
            dead(claude(2), Some(1), None),
        ];
        poll(&mut s, panes.clone(), T0 + 500);
        let fx: Vec<Effect> = run(&mut s, &panes, T0 + 2_500, T0 + 2_500)
            .into_iter()
            .map(|(_, e)| e)
            .collect();
        assert_eq!(relaunches(&fx), 2);
        let fx = s.update(
            Msg::Relaunched {
                pane: PaneId(1),
                result: Err("directory /x no longer exists".into()),
            },
            T0 + 2_600,
        );
        assert_eq!(journal(&fx), ["resume_failed"]);
        assert!(s.cards[0]
            .notice
            .as_ref()
            .is_some_and(|n| n.alarm && n.text.contains("attempt 1/3 failed")));
        // The next poll schedules attempt 2 for the failed pane.
        poll(&mut s, panes, T0 + 3_000);
        assert!(matches!(
            s.cards[0].auto,
            Auto::Scheduled { attempt: 2, .. }
        ));
    }

    /// The relaunches in `fx`: each plan, and the auto-resume its crash record says the
    /// death followed.
    fn records(fx: &[(Millis, Effect)]) -> Vec<(crate::resume::Plan, Option<u32>)> {
        fx.iter()
            .filter_map(|(_, e)| match e {
                Effect::Relaunch { plan, meta } => Some((plan.clone(), meta.attempt)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_crash_record_names_the_auto_resume_its_death_followed_and_a_retry_does_not_recount() {
        let mut s = state((80, 24));
        poll(&mut s, vec![claude(1)], T0);
        let dead_p = dead(claude(1), Some(1), None);
        poll(&mut s, vec![dead_p.clone()], T0 + 500);
        let fx = run(
            &mut s,
            std::slice::from_ref(&dead_p),
            T0 + 1_000,
            T0 + 3_000,
        );
        let r = records(&fx);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].1, Some(0), "a first crash followed no auto-resume");
        s.update(
            Msg::Relaunched {
                pane: PaneId(1),
                result: Ok(r[0].0.clone()),
            },
            T0 + 3_100,
        );
        // Auto-resume 1 runs for a while (not a quick "no such session" death), far from
        // healthy, and dies.
        poll(&mut s, vec![claude(1)], T0 + 4_000);
        poll(&mut s, vec![dead_p.clone()], T0 + 24_000);
        let fx = run(
            &mut s,
            std::slice::from_ref(&dead_p),
            T0 + 24_500,
            T0 + 40_000,
        );
        let r = records(&fx);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].1, Some(1), "died after auto-resume 1");
        // Auto-resume 2 fails before anything ran (tmux said no): the same death is
        // recorded again by attempt 3, and still followed auto-resume 1.
        s.update(
            Msg::Relaunched {
                pane: PaneId(1),
                result: Err("respawn-pane failed: no space".into()),
            },
            T0 + 40_100,
        );
        let fx = run(
            &mut s,
            std::slice::from_ref(&dead_p),
            T0 + 40_500,
            T0 + 100_000,
        );
        let r = records(&fx);
        assert_eq!(r.len(), 1, "attempt 3 relaunches");
        assert_eq!(r[0].1, Some(1), "the failed try is not counted as a run");
        assert_eq!(s.cards[0].budget.attempts, 3);
    }
}

mod lost {
    use super::*;
    use crate::errors::TmuxError;

    fn gone() -> Msg {
        Msg::polled(Err(TmuxError::NoServer {
            socket: "/tmp/x".into(),
        }))
    }

    #[test]
    fn the_lost_screen_offers_r_only_with_one_to_recreate_and_y_n_only_when_asking() {
        for (with_id, offered) in [(true, true), (false, false)] {
            let mut s = state((80, 24));
            let mut a = pane(1, 1, "claude");
            if with_id {
                a.opts.session_id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into();
            }
            poll(&mut s, vec![a], T0);
            s.update(Msg::Tick, T0 + 500);
            s.update(gone(), T0 + 600);
            assert_eq!(s.view(), crate::keymap::View::Lost);
            assert_eq!(s.applies(Action::RecreateAll), offered);
            assert!(!s.applies(Action::Yes) && !s.applies(Action::No));
            s.update(Msg::Action(Action::RecreateAll), T0 + 700);
            // Asked only when there is one to recreate; then y and n answer.
            assert_eq!(s.applies(Action::Yes), offered);
            assert_eq!(s.applies(Action::No), offered);
        }
    }

    #[test]
    fn after_x_closes_a_card_its_neighbour_is_selected_and_a_failed_close_keeps_it() {
        let mut s = state((80, 24));
        let panes = vec![
            dead(pane(1, 1, "claude"), Some(1), None),
            dead(pane(2, 2, "claude"), Some(1), None),
            dead(pane(3, 3, "claude"), Some(1), None),
        ];
        poll(&mut s, panes.clone(), T0);
        s.grid.selected = Some(PaneId(2));
        for t in [T0 + 100, T0 + 200] {
            s.update(Msg::Action(Action::Close), t);
        }
        let closed = |result| Msg::Closed {
            pane: PaneId(2),
            result,
        };
        s.update(closed(Ok(())), T0 + 300);
        assert_eq!(
            s.grid.selected,
            Some(PaneId(3)),
            "the next one, not the top"
        );
        // A close that failed: the pane is listed, and its card kept.
        s.grid.selected = Some(PaneId(1));
        for t in [T0 + 400, T0 + 500] {
            s.update(Msg::Action(Action::Close), t);
        }
        s.update(
            Msg::Closed {
                pane: PaneId(1),
                result: Err(TmuxError::NoSuchPane {
                    detail: "can't find pane: %1".into(),
                }),
            },
            T0 + 600,
        );
        s.update(Msg::Tick, T0 + 700);
        poll(&mut s, vec![panes[0].clone(), panes[2].clone()], T0 + 800);
        assert_eq!(s.cards.len(), 2);
    }

    /// tmux's `exit-empty`: closing a server's last pane ends the server, before the next
    /// poll could see the pane gone.
    #[test]
    fn closing_the_last_pane_with_x_is_no_loss_when_the_server_then_exits() {
        let mut s = state((80, 24));
        poll(&mut s, vec![dead(pane(1, 1, "claude"), Some(1), None)], T0);
        s.grid.selected = Some(PaneId(1));
        s.update(Msg::Action(Action::Close), T0 + 100);
        let fx = s.update(Msg::Action(Action::Close), T0 + 200);
        assert!(fx.contains(&Effect::KillPane(PaneId(1))), "{fx:?}");
        s.update(
            Msg::Closed {
                pane: PaneId(1),
                result: Ok(()),
            },
            T0 + 300,
        );
        assert!(s.cards.is_empty());
        // A listing taken before the close, answered after it: the card stays gone.
        s.update(Msg::Tick, T0 + 400);
        poll(
            &mut s,
            vec![dead(pane(1, 1, "claude"), Some(1), None)],
            T0 + 500,
        );
        assert!(s.cards.is_empty(), "{:?}", s.cards.len());
        s.update(Msg::Tick, T0 + 1000);
        let fx = s.update(gone(), T0 + 1100);
        assert!(s.lost.roster.is_none(), "{:?}", s.lost.roster);
        assert!(
            !fx.iter()
                .any(|e| matches!(e, Effect::Journal(ev) if ev.event == "server_gone")),
            "{fx:?}"
        );
    }

    #[test]
    fn a_server_that_goes_away_is_one_banner_with_a_roster_saved() {
        let mut s = state((80, 24));
        let mut a = pane(1, 1, "claude");
        a.opts.session_id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into();
        a.opts.cwd = "/w/a".into();
        a.opts.args = r#"["--model","x"]"#.into();
        let b = pane(2, 2, "claude"); // no session id
        poll(&mut s, vec![a, b, pane(3, 3, "vim")], T0);
        s.update(Msg::Tick, T0 + 500);
        let fx = s.update(gone(), T0 + 600);
        let lost = s.lost.roster.clone().unwrap();
        assert_eq!(lost.agents.len(), 2, "agents only");
        assert!(s.cards.is_empty());
        assert_eq!(s.view(), crate::keymap::View::Lost);
        let journal: Vec<_> = fx
            .iter()
            .filter_map(|e| match e {
                Effect::Journal(ev) => Some(ev.event.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(journal, ["server_gone"], "one event, not one per pane");
        assert!(fx.contains(&Effect::SaveRoster(Some(lost.clone()))));
        // Further failures add nothing.
        s.update(Msg::Tick, T0 + 1000);
        assert!(s.update(gone(), T0 + 1100).is_empty());

        // R asks; y recreates the one with an id; the other is said to be left out.
        assert!(s.update(Msg::Action(Action::RecreateAll), T0).is_empty());
        assert!(s.lost.confirm);
        let fx = s.update(Msg::Action(Action::Yes), T0);
        let Some(Effect::Recreate(plans)) = fx.first() else {
            panic!("{fx:?}")
        };
        assert_eq!(plans.len(), 1);
        assert_eq!(
            plans[0].argv,
            [
                "claude",
                "--resume",
                "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11",
                "--model",
                "x"
            ]
        );
        assert_eq!(plans[0].cwd, "/w/a");
        assert!(s.lost.results[0]
            .1
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("no session id"));
        let fx = s.update(
            Msg::Recreated(vec![("work:1.0".into(), Ok("%7".into()))]),
            T0,
        );
        assert_eq!(
            s.lost.roster.as_ref().unwrap().agents.len(),
            1,
            "the one without an id stays listed"
        );
        assert!(matches!(fx.first(), Some(Effect::SaveRoster(Some(_)))));
    }

    #[test]
    fn many_lost_agents_are_recreated_one_first_then_a_few_at_a_time() {
        let mut s = state((80, 24));
        let panes: Vec<Pane> = (1..=7)
            .map(|i| {
                let mut p = pane(i, i, "claude");
                p.opts.session_id = format!("0e6a1c1e-4f7b-4a43-9d55-{i:012}");
                p
            })
            .collect();
        poll(&mut s, panes, T0);
        s.update(Msg::Tick, T0 + 500);
        s.update(gone(), T0 + 600);
        s.update(Msg::Action(Action::RecreateAll), T0 + 700);
        let recreates = |fx: &[Effect]| -> Vec<String> {
            fx.iter()
                .filter_map(|e| match e {
                    Effect::Recreate(p) => Some(p.iter().map(|r| r.target.clone())),
                    _ => None,
                })
                .flatten()
                .collect()
        };
        let fx = s.update(Msg::Action(Action::Yes), T0 + 800);
        assert_eq!(recreates(&fx), ["work:1.0"], "one first");
        s.update(
            Msg::Recreated(vec![("work:1.0".into(), Ok("%20".into()))]),
            T0 + 900,
        );
        // The new server, with the first one up: nothing more until it stayed up 10 s.
        let up = pane(20, 1, "claude");
        let mut opened = Vec::new();
        let mut t = T0 + 1_000;
        while t <= T0 + 40_000 {
            let fx = s.update(Msg::Tick, t);
            opened.extend(recreates(&fx).into_iter().map(|x| (t, x)));
            s.update(Msg::polled(Ok(obs(vec![up.clone()]))), t);
            t += 500;
        }
        assert_eq!(opened.len(), 6, "{opened:?}");
        assert!(
            opened[0].0 >= T0 + 11_000,
            "after the first stayed up: {opened:?}"
        );
        assert_eq!(
            opened.iter().filter(|(t, _)| *t == opened[0].0).count(),
            4,
            "a burst of 4"
        );
        assert!(opened[4].0 >= opened[0].0 + 5_000, "then 5 s later");
    }

    #[test]
    fn a_first_recreated_that_dies_holds_the_rest_and_says_why() {
        let mut s = state((80, 24));
        let panes: Vec<Pane> = (1..=4)
            .map(|i| {
                let mut p = pane(i, i, "claude");
                p.opts.session_id = format!("0e6a1c1e-4f7b-4a43-9d55-{i:012}");
                p
            })
            .collect();
        poll(&mut s, panes, T0);
        s.update(Msg::Tick, T0 + 500);
        s.update(gone(), T0 + 600);
        s.update(Msg::Action(Action::RecreateAll), T0 + 700);
        s.update(Msg::Action(Action::Yes), T0 + 800);
        s.update(
            Msg::Recreated(vec![("work:1.0".into(), Ok("%20".into()))]),
            T0 + 900,
        );
        let up = pane(20, 1, "claude");
        poll(&mut s, vec![up.clone()], T0 + 1_000);
        let down = dead(up, Some(1), None);
        let mut t = T0 + 1_500;
        while t <= T0 + 30_000 {
            let fx = s.update(Msg::Tick, t);
            assert!(
                !fx.iter().any(|e| matches!(e, Effect::Recreate(_))),
                "nothing more at {t}"
            );
            s.update(Msg::polled(Ok(obs(vec![down.clone()]))), t);
            t += 500;
        }
        let waits: Vec<String> = s
            .lost
            .results
            .iter()
            .filter_map(|(_, r)| r.as_ref().err().map(|e| e.to_string()))
            .collect();
        assert_eq!(waits.len(), 3, "{waits:?}");
        assert!(
            waits[0].contains("the first recreated (%20) died again"),
            "{waits:?}"
        );
    }

    #[test]
    fn a_timeout_is_not_a_lost_server_and_a_roster_from_disk_shows_until_its_agents_are_back() {
        let mut s = state((80, 24));
        poll(&mut s, vec![pane(1, 1, "claude")], T0);
        s.update(Msg::Tick, T0 + 500);
        s.update(
            Msg::polled(Err(TmuxError::TimedOut {
                after: std::time::Duration::from_secs(2),
            })),
            T0 + 600,
        );
        assert!(s.lost.roster.is_none());
        assert_eq!(s.cards.len(), 1, "stale, not gone");

        let mut s = state((80, 24));
        let fx = s.update(Msg::Tick, T0);
        assert!(fx.contains(&Effect::LoadRoster));
        let roster = crate::roster::Roster {
            socket: s.servers.socket.clone(),
            lost_at: T0,
            agents: vec![crate::roster::LostAgent {
                agent: "claude".into(),
                pane: "%1".into(),
                target: "work:1.0".into(),
                session: "work".into(),
                window_name: "w".into(),
                session_id: Some("0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into()),
                cwd: "/w".into(),
                args: vec![],
                state: "running".into(),
            }],
        };
        s.update(Msg::RosterLoaded(Some(roster)), T0);
        assert!(s.lost_view());
        let mut back = pane(4, 1, "claude");
        back.opts.session_id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into();
        let fx = s.update(Msg::polled(Ok(obs(vec![back]))), T0 + 100);
        assert!(s.lost.roster.is_none(), "its agent is back");
        assert!(fx.contains(&Effect::SaveRoster(None)));
    }
}

#[test]
fn the_fingerprint_changes_only_when_the_screen_would() {
    let mut s = state((80, 24));
    poll(&mut s, vec![pane(1, 1, "claude")], T0);
    let a = s.fingerprint();
    poll(&mut s, vec![pane(1, 1, "claude")], T0 + 300);
    assert_eq!(s.fingerprint(), a, "same second, same panes: no redraw");
    poll(
        &mut s,
        vec![dead(pane(1, 1, "claude"), Some(1), None)],
        T0 + 400,
    );
    assert_ne!(s.fingerprint(), a, "a death redraws");
    let b = s.fingerprint();
    s.update(Msg::Tick, T0 + 1_200);
    assert_ne!(s.fingerprint(), b, "a new second redraws (relative times)");
}

#[test]
fn an_id_in_the_processs_own_argv_is_recorded_when_the_start_command_has_none() {
    let mut s = state((80, 24));
    let mut p = pane(1, 1, "claude");
    p.start_command =
        r#"bash -c ". env.sh; exec claude --session-id 0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11""#
            .into();
    let mut o = obs(vec![p.clone()]);
    let argv: Vec<String> = [
        "claude",
        "--session-id",
        "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11",
    ]
    .map(String::from)
    .to_vec();
    o.foreground.insert(PaneId(1), argv);
    s.update(Msg::Tick, T0);
    let fx = s.update(Msg::polled(Ok(o)), T0);
    let wrote = fx.iter().any(|e| {
        matches!(e, Effect::SetOptions(v) if v.iter().any(|(_, k, v)| k.name() == "@agentwatch_session_id" && v.starts_with("0e6a1c1e")))
    });
    assert!(wrote, "{fx:?}");
    // Later polls (argv read only once per process) keep knowing it.
    s.update(
        Msg::OptionsSet {
            landed: vec![],
            result: Ok(()),
        },
        T0,
    );
    poll(&mut s, vec![p], T0 + 500);
    assert_eq!(
        s.cards[0].argv_id.as_deref(),
        Some("0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11")
    );
}

/// A poll whose agent pane %1's window last had output at `at` (any changing value).
fn output(s: &mut State, at: u64, now: Millis) -> Vec<Effect> {
    let mut p = pane(1, 1, "claude");
    p.opts.agent = "claude".into();
    let mut o = obs(vec![p]);
    o.activity.insert(PaneId(1), at);
    s.update(Msg::Tick, now);
    s.update(Msg::polled(Ok(o)), now)
}

fn looks(fx: &[Effect]) -> Vec<PaneId> {
    fx.iter()
        .find_map(|e| match e {
            Effect::LookAtScreens(ids) => Some(ids.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn an_agent_that_stops_writing_with_a_prompt_on_screen_waits_for_input_until_it_writes_again() {
    let mut s = state((120, 40));
    let prompt = "╭─\n│ Bash command: rm -rf build\n│ Do you want to proceed?\n│ ❯ 1. Yes\n";
    // First sight: its screen is looked at once.
    assert_eq!(looks(&output(&mut s, 100, T0)), [PaneId(1)]);
    s.update(
        Msg::Looked(Ok([(PaneId(1), "> ".to_string())].into())),
        T0 + 10,
    );
    assert_eq!(
        s.cards[0].attention.state(),
        Some((Doing::Idle, T0 + 10)),
        "quiet, no prompt and no `esc to interrupt` on screen: at its input box"
    );
    assert!(
        looks(&output(&mut s, 100, T0 + 500)).is_empty(),
        "looked at once only"
    );
    // Writing: working, and nothing looked at.
    assert!(looks(&output(&mut s, 5_000, T0 + 1_000)).is_empty());
    assert_eq!(
        s.cards[0].attention.state(),
        Some((Doing::Working, T0 + 1_000))
    );
    assert!(looks(&output(&mut s, 9_000, T0 + 1_500)).is_empty());
    // Quiet for QUIET_MS: its screen is read, the prompt found.
    assert!(looks(&output(&mut s, 9_000, T0 + 2_000)).is_empty());
    let fx = output(&mut s, 9_000, T0 + 3_500);
    assert_eq!(looks(&fx), [PaneId(1)]);
    s.update(
        Msg::Looked(Ok([(PaneId(1), prompt.to_string())].into())),
        T0 + 3_510,
    );
    assert_eq!(
        s.cards[0].attention.waiting_for(),
        Some("Do you want to proceed?")
    );
    assert_eq!(
        s.cards[0].attention.state(),
        Some((Doing::Waiting, T0 + 1_500))
    );
    assert_eq!(s.counts().waiting, 1);
    // Still quiet: not looked at again, still waiting.
    assert!(looks(&output(&mut s, 9_000, T0 + 10_000)).is_empty());
    assert_eq!(s.counts().waiting, 1);
    // Answered: it writes, and no longer waits.
    output(&mut s, 9_500, T0 + 11_000);
    assert_eq!(s.counts().waiting, 0);
    assert_eq!(
        s.cards[0].attention.state(),
        Some((Doing::Working, T0 + 11_000))
    );
}

#[test]
fn a_prompt_anywhere_on_the_visible_screen_is_waiting_and_the_question_names_it() {
    let def = crate::agent::builtin()
        .into_iter()
        .find(|d| d.name == "claude")
        .unwrap();
    // A dialog whose question sits 20 lines above its last line (issue 28: gemini's trust
    // dialog at 80x24 put it past the 12 lines read).
    let mut screen = String::from("Do you want to proceed?\n");
    for i in 0..20 {
        screen.push_str(&format!("line {i}\n"));
    }
    assert_eq!(
        def.waiting_on(&screen).as_deref(),
        Some("Do you want to proceed?")
    );
    // With the generic confirm line under it, the question still names it.
    screen.push_str("Enter to confirm · Esc to cancel\n\n\n");
    assert_eq!(
        def.waiting_on(&screen).as_deref(),
        Some("Do you want to proceed?")
    );
    assert_eq!(
        def.waiting_on("a question of its own\nEnter to confirm · Esc to cancel\n")
            .as_deref(),
        Some("Enter to confirm · Esc to cancel")
    );
    assert_eq!(def.waiting_on("line 1\nline 2\n"), None);
}

#[test]
fn a_dead_agent_waits_for_nothing() {
    let mut s = state((120, 40));
    output(&mut s, 100, T0);
    s.update(
        Msg::Looked(Ok(
            [(PaneId(1), "Do you want to proceed?".to_string())].into()
        )),
        T0 + 10,
    );
    assert_eq!(s.counts().waiting, 1);
    let mut p = dead(pane(1, 1, "claude"), Some(1), None);
    p.opts.agent = "claude".into();
    poll(&mut s, vec![p], T0 + 500);
    assert_eq!(s.counts().waiting, 0);
    assert_eq!(s.cards[0].attention.state(), None);
}

#[test]
fn the_supervisor_journals_each_edge_once_and_keeps_the_pane_option() {
    let journaled = |fx: &[Effect]| -> Vec<(String, Option<String>)> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::Journal(ev) => Some((ev.event.clone(), ev.detail.clone())),
                _ => None,
            })
            .collect()
    };
    let state_opt = |fx: &[Effect]| -> Option<String> {
        fx.iter().find_map(|e| match e {
            Effect::SetOptions(v) => v
                .iter()
                .find(|(_, k, _)| k.name() == "@agentwatch_state")
                .map(|(_, _, v)| v.clone()),
            _ => None,
        })
    };
    for supervising in [true, false] {
        let mut s = state((120, 40));
        s.supervision.supervising = supervising;
        output(&mut s, 100, T0);
        let prompt = || {
            Msg::Looked(Ok(
                [(PaneId(1), "Do you want to proceed?".to_string())].into()
            ))
        };
        let fx = s.update(prompt(), T0 + 10);
        let want = supervising.then(|| {
            (
                "waiting".to_string(),
                Some("Do you want to proceed?".to_string()),
            )
        });
        assert_eq!(journaled(&fx), want.into_iter().collect::<Vec<_>>());
        // Announced once, at the next poll, by every instance (a bell where it does not
        // supervise); the pane option follows at that poll.
        let notified = |fx: &[Effect]| -> Vec<String> {
            fx.iter()
                .filter_map(|e| match e {
                    Effect::Notify { events, .. } => Some(events.iter().map(|e| e.event.clone())),
                    _ => None,
                })
                .flatten()
                .collect()
        };
        s.update(
            Msg::OptionsSet {
                landed: vec![],
                result: Ok(()),
            },
            T0 + 12,
        );
        let fx = output(&mut s, 100, T0 + 15);
        assert_eq!(notified(&fx), ["waiting"]);
        assert_eq!(state_opt(&fx), supervising.then(|| "waiting".to_string()));
        // Looked at again, still waiting: no second edge.
        assert!(journaled(&s.update(prompt(), T0 + 20)).is_empty());
        assert!(notified(&output(&mut s, 100, T0 + 25)).is_empty());
        s.update(
            Msg::OptionsSet {
                landed: vec![],
                result: Ok(()),
            },
            T0 + 30,
        );
        let fx = output(&mut s, 200, T0 + 1_000);
        let want = supervising.then(|| {
            (
                "working".to_string(),
                Some("its window has output".to_string()),
            )
        });
        assert_eq!(journaled(&fx), want.into_iter().collect::<Vec<_>>());
        assert_eq!(state_opt(&fx), supervising.then(|| "working".to_string()));
        assert!(notified(&fx).is_empty(), "only a wait is announced");
    }
}

/// The events journaled by these effects.
fn journaled(fx: &[Effect]) -> Vec<String> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Journal(ev) => Some(ev.event.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn an_edge_back_to_what_the_pane_option_still_says_is_journaled_all_the_same() {
    // The option is written a poll after an edge, and read back later still: work that
    // resumes 0.3 s after a wait finds the option saying `working` from before the wait.
    let poll = |s: &mut State, at: u64, now: Millis| {
        let mut p = pane(1, 1, "claude");
        p.opts.agent = "claude".into();
        p.opts.state = "working".into();
        let mut o = obs(vec![p]);
        o.activity.insert(PaneId(1), at);
        s.update(Msg::Tick, now);
        s.update(Msg::polled(Ok(o)), now)
    };
    let mut s = state((120, 40));
    s.supervision.supervising = true;
    poll(&mut s, 100, T0);
    let working = Msg::Looked(Ok([(PaneId(1), "esc to interrupt".to_string())].into()));
    // Where the supervisor before left it: no news.
    assert!(journaled(&s.update(working, T0 + 10)).is_empty());
    poll(&mut s, 100, T0 + 3_000);
    let prompt = Msg::Looked(Ok(
        [(PaneId(1), "Do you want to proceed?".to_string())].into()
    ));
    let fx = s.update(prompt, T0 + 3_010);
    assert_eq!(journaled(&fx), ["waiting"]);
    // The journal keeps the edge; the log has it only when asked for (it is never
    // rotated, and a busy agent has an edge every few seconds).
    let logged: Vec<_> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Log(l) if l.text.contains("waiting") => Some(l.level),
            _ => None,
        })
        .collect();
    assert_eq!(logged, [crate::msg::Level::Debug]);
    assert_eq!(journaled(&poll(&mut s, 200, T0 + 3_300)), ["working"]);
}

#[test]
fn what_an_instance_saw_before_it_was_elected_is_journaled_once_it_supervises() {
    // A dashboard's first look finds the agent at a prompt a moment before the election
    // makes it the supervisor: nobody journaled that wait.
    let elected = |s: &mut State, at: Millis| {
        s.update(
            Msg::Elected(crate::msg::Election {
                mine: true,
                by: None,
                took_over: None,
            }),
            at,
        )
    };
    for option in ["", "working", "waiting"] {
        let mut s = state((120, 40));
        s.supervision.supervising = false;
        let mut p = pane(1, 1, "claude");
        p.opts.agent = "claude".into();
        p.opts.state = option.into();
        let mut o = obs(vec![p]);
        o.activity.insert(PaneId(1), 100);
        s.update(Msg::Tick, T0);
        s.update(Msg::polled(Ok(o)), T0);
        let prompt = Msg::Looked(Ok(
            [(PaneId(1), "Do you want to proceed?".to_string())].into()
        ));
        assert!(
            journaled(&s.update(prompt, T0 + 10)).is_empty(),
            "not yet its job"
        );
        let fx = elected(&mut s, T0 + 20);
        // Where the supervisor before left it (the option says so): no news.
        let want: &[&str] = if option == "waiting" {
            &[]
        } else {
            &["waiting"]
        };
        assert_eq!(journaled(&fx), want, "the option said {option:?}");
        // Once: elected again, or looked at again, it is no edge.
        assert!(journaled(&elected(&mut s, T0 + 30)).is_empty());
    }
}

/// Four claude panes, %1..%4, polled at `now` with `activity` as their windows' output
/// times; %2 is dead when `dead2`.
fn four(s: &mut State, activity: [u64; 4], dead2: bool, now: Millis) -> Vec<Effect> {
    let panes: Vec<Pane> = (1..=4)
        .map(|i| {
            let mut p = pane(i, i, "claude");
            p.opts.agent = "claude".into();
            if i == 2 && dead2 {
                p = dead(p, Some(1), None);
            }
            p
        })
        .collect();
    let mut o = obs(panes);
    for (i, a) in activity.iter().enumerate() {
        o.activity.insert(PaneId(i as u32 + 1), *a);
    }
    s.update(Msg::Tick, now);
    s.update(Msg::polled(Ok(o)), now)
}

fn order(s: &State) -> Vec<u32> {
    s.cards.iter().map(|c| c.pane.id.0).collect()
}

#[test]
fn what_needs_you_comes_first_and_a_card_moves_down_only_once_its_calm_held() {
    let mut s = state((200, 60));
    s.grid.order = crate::settings::Order::Attention;
    four(&mut s, [1, 1, 1, 1], false, T0);
    let screens = |w: &str| -> Msg {
        Msg::Looked(Ok((1..=4)
            .map(|i| {
                let text = match i {
                    3 => "Do you want to proceed?",
                    _ => w,
                };
                (PaneId(i), text.to_string())
            })
            .collect()))
    };
    s.update(screens("> "), T0 + 10);
    // Waiting, then idle (in tmux's order).
    assert_eq!(order(&s), [3, 1, 2, 4]);
    assert_eq!(
        s.grid.selected,
        Some(PaneId(3)),
        "not chosen: the first card"
    );
    // %2 dies: first at once, beside the prompt (both need the user), and selected while
    // the first looks settle.
    four(&mut s, [1, 1, 1, 1], true, T0 + 500);
    assert_eq!(order(&s), [2, 3, 1, 4]);
    assert_eq!(s.grid.selected, Some(PaneId(2)));
    // Chosen by a key: the selection follows that pane wherever it moves.
    s.update(Msg::Action(Action::Right), T0 + 600);
    s.update(Msg::Action(Action::Right), T0 + 600);
    assert_eq!(s.grid.selected, Some(PaneId(1)));
    // %1 starts working: it keeps its place for a while, then moves down.
    four(&mut s, [5, 1, 1, 1], true, T0 + 1_000);
    four(&mut s, [6, 1, 1, 1], true, T0 + 2_000);
    assert_eq!(order(&s), [2, 3, 1, 4], "no jump on a short burst of work");
    four(
        &mut s,
        [7, 1, 1, 1],
        true,
        T0 + 1_000 + crate::card::ORDER_SETTLE_MS,
    );
    assert_eq!(order(&s), [2, 3, 4, 1], "working for 10 s: below the idle");
    assert_eq!(s.grid.selected, Some(PaneId(1)), "the chosen card, moved");
}

#[test]
fn a_dashboard_opened_later_dates_what_it_sees_from_the_supervisors_verdict() {
    // The supervisor saw %1 wait from T0; this dashboard starts a minute later.
    let later = T0 + 60_000;
    let verdict = crate::attention::Verdict {
        doing: Doing::Waiting,
        since: T0,
        told: crate::attention::Told::Screen,
        why: "Do you want to proceed?".into(),
        asked: None,
    };
    let look = |s: &mut State, verdict: &str, at: Millis| {
        let mut p = pane(1, 1, "claude");
        p.opts.agent = "claude".into();
        p.opts.verdict = verdict.to_string();
        let mut o = obs(vec![p]);
        o.started.insert(PaneId(1), T0 - 600_000);
        // Its window's output time says nothing plausible: only the verdict dates it.
        o.activity.insert(PaneId(1), 1);
        s.update(Msg::Tick, at);
        s.update(Msg::polled(Ok(o)), at);
        s.update(
            Msg::Looked(Ok(
                [(PaneId(1), "│ Do you want to proceed? │".to_string())].into()
            )),
            at + 10,
        );
        s.cards[0].attention.state()
    };
    // Beside a live supervisor (a daemon).
    let beside = || {
        let mut s = state((120, 40));
        s.update(
            Msg::Elected(crate::msg::Election {
                mine: false,
                by: Some(crate::msg::Supervisor {
                    pid: 77,
                    daemon: true,
                    since: T0 - 900_000,
                }),
                took_over: None,
            }),
            later,
        );
        s
    };
    let mut s = beside();
    assert_eq!(
        look(&mut s, &verdict.value(), later),
        Some((Doing::Waiting, T0)),
        "the same age as the supervisor's dashboard"
    );
    // A verdict left by a supervisor that quit is old news: not taken with none alive.
    let mut s = state((120, 40));
    assert_eq!(
        look(&mut s, &verdict.value(), later),
        Some((Doing::Waiting, later + 10))
    );
    // A verdict about an earlier run of the pane, or another state, is not taken.
    let mut s = beside();
    let old = crate::attention::Verdict {
        since: T0 - 700_000,
        ..verdict.clone()
    };
    assert_ne!(
        look(&mut s, &old.value(), later).map(|(_, t)| t),
        Some(T0 - 700_000)
    );
    let mut s = beside();
    let working = crate::attention::Verdict {
        doing: Doing::Working,
        ..verdict
    };
    assert_ne!(
        look(&mut s, &working.value(), later).map(|(_, t)| t),
        Some(T0)
    );
}

#[test]
fn the_selection_stays_on_its_agent_once_the_first_looks_settled_until_a_key_moves_it() {
    let mut s = state((200, 60));
    s.grid.order = crate::settings::Order::Attention;
    four(&mut s, [1, 1, 1, 1], false, T0);
    assert_eq!(s.grid.selected, Some(PaneId(1)), "the first card at first");
    // Seconds later %3 dies: it goes first, but the selection stays where the user reads.
    let later = T0 + crate::state::SELECTION_SETTLE_MS;
    four(&mut s, [1, 1, 1, 1], false, later);
    let panes: Vec<Pane> = (1..=4)
        .map(|i| {
            let p = pane(i, i, "claude");
            if i == 3 {
                dead(p, Some(1), None)
            } else {
                p
            }
        })
        .collect();
    poll(&mut s, panes, later + 1_000);
    assert_eq!(order(&s)[0], 3, "the death first");
    assert_eq!(s.grid.selected, Some(PaneId(1)), "no key moved it");
    // A key moves it.
    s.update(Msg::Action(Action::First), later + 1_100);
    assert_eq!(s.grid.selected, Some(PaneId(3)));
}

#[test]
fn n_selects_the_next_agent_that_needs_you_in_turn_and_says_when_none_does() {
    let mut s = state((200, 60));
    four(&mut s, [1, 1, 1, 1], true, T0);
    s.update(
        Msg::Looked(Ok(
            [(PaneId(4), "Do you want to proceed?".to_string())].into()
        )),
        T0 + 10,
    );
    assert_eq!(s.grid.selected, Some(PaneId(1)));
    s.update(Msg::Action(Action::NextNeed), T0 + 20);
    assert_eq!(s.grid.selected, Some(PaneId(2)), "the dead one");
    s.update(Msg::Action(Action::NextNeed), T0 + 30);
    assert_eq!(s.grid.selected, Some(PaneId(4)), "the waiting one");
    s.update(Msg::Action(Action::NextNeed), T0 + 40);
    assert_eq!(s.grid.selected, Some(PaneId(2)), "round again");
    // Nothing needs you: said, and the selection stays.
    let mut s = state((200, 60));
    four(&mut s, [1, 1, 1, 1], false, T0);
    s.update(Msg::Action(Action::NextNeed), T0 + 20);
    assert_eq!(s.grid.selected, Some(PaneId(1)));
    assert!(s.cards[0]
        .notice
        .as_ref()
        .is_some_and(|n| n.text.contains("no agent needs you")));
}

#[test]
fn a_pane_that_asks_again_soon_after_is_announced_once() {
    let notified = |fx: &[Effect]| -> usize {
        fx.iter()
            .filter_map(|e| match e {
                Effect::Notify { events, .. } => Some(events.len()),
                _ => None,
            })
            .sum()
    };
    let prompt = || {
        Msg::Looked(Ok(
            [(PaneId(1), "Do you want to proceed?".to_string())].into()
        ))
    };
    let mut s = state((120, 40));
    output(&mut s, 100, T0);
    s.update(prompt(), T0 + 10);
    assert_eq!(notified(&output(&mut s, 100, T0 + 20)), 1);
    // Answered, and another question 5 s later: the user is at it; no second call.
    output(&mut s, 200, T0 + 1_000);
    let fx = output(&mut s, 200, T0 + 5_000);
    assert_eq!(looks(&fx), [PaneId(1)]);
    s.update(prompt(), T0 + 5_010);
    assert_eq!(s.counts().waiting, 1, "still shown as waiting");
    assert_eq!(notified(&output(&mut s, 200, T0 + 5_020)), 0);
    // A wait well after the last call is announced again.
    output(&mut s, 300, T0 + 40_000);
    let fx = output(&mut s, 300, T0 + 43_000);
    assert_eq!(looks(&fx), [PaneId(1)]);
    s.update(prompt(), T0 + 43_010);
    assert_eq!(notified(&output(&mut s, 300, T0 + 43_020)), 1);
}

#[test]
fn output_times_are_wanted_often_only_while_an_agent_works_or_waits() {
    let attend = |fx: &[Effect]| {
        fx.iter().find_map(|e| match e {
            Effect::Attend { often, hear } => {
                assert_eq!(hear, &[PaneId(1)], "a live agent with no file is heard");
                Some(*often)
            }
            _ => None,
        })
    };
    let mut s = state((120, 40));
    // Not read yet: often.
    assert_eq!(attend(&output(&mut s, 100, T0)), Some(true));
    // Idle at its input box: now and then will do.
    let fx = s.update(
        Msg::Looked(Ok([(PaneId(1), "> ".to_string())].into())),
        T0 + 10,
    );
    assert_eq!(attend(&fx), Some(false));
    assert_eq!(attend(&output(&mut s, 100, T0 + 500)), None, "said once");
    // It writes: often again, till it is idle or waits and is seen to.
    assert_eq!(attend(&output(&mut s, 200, T0 + 1_000)), Some(true));
    output(&mut s, 200, T0 + 3_500);
    let fx = s.update(
        Msg::Looked(Ok(
            [(PaneId(1), "Do you want to proceed?".to_string())].into()
        )),
        T0 + 3_510,
    );
    assert_eq!(
        attend(&fx),
        None,
        "waiting: still often, to see it answered"
    );
}

#[test]
fn an_agent_is_heard_from_its_first_look_whatever_its_age() {
    // Started a second before it is seen: heard at once (the poller knows what tmux would
    // lose if it copied a young agent's output, and does not copy it).
    let mut p = pane(1, 1, "claude");
    p.opts.agent = "claude".into();
    let mut o = obs(vec![p]);
    o.started.insert(PaneId(1), T0 - 1_000);
    o.activity.insert(PaneId(1), 100);
    let mut s = state((120, 40));
    s.update(Msg::Tick, T0);
    let fx = s.update(Msg::polled(Ok(o)), T0);
    let hear = fx.iter().find_map(|e| match e {
        Effect::Attend { hear, .. } => Some(hear.clone()),
        _ => None,
    });
    assert_eq!(hear, Some(vec![PaneId(1)]));
}

/// A poll in which agent pane %1's output is heard: it last wrote at `last`.
fn heard(s: &mut State, last: Option<Millis>, now: Millis) -> Vec<Effect> {
    heard_as(s, last, now, false)
}

/// The same, `stopped`: its stop is known where it is (its writes counted quiet).
fn heard_as(s: &mut State, last: Option<Millis>, now: Millis, stopped: bool) -> Vec<Effect> {
    let mut p = pane(1, 1, "claude");
    p.opts.agent = "claude".into();
    let mut o = obs(vec![p]);
    o.heard.insert(PaneId(1), last);
    if stopped {
        o.stopped.insert(PaneId(1));
    }
    // A listing may carry the window's output time too: the heard time decides.
    o.activity.insert(PaneId(1), now / 1000);
    s.update(Msg::Tick, now);
    s.update(Msg::polled(Ok(o)), now)
}

#[test]
fn a_heard_agent_is_looked_at_half_a_second_after_its_last_byte_and_waits_from_it() {
    let mut s = state((120, 40));
    s.supervision.supervising = true;
    let attend = |fx: &[Effect]| {
        fx.iter().find_map(|e| match e {
            Effect::Attend { often, hear } => Some((*often, hear.clone())),
            _ => None,
        })
    };
    // Writing as it is first heard: working, and no need of output times.
    let fx = heard(&mut s, Some(T0 - 100), T0);
    assert!(looks(&fx).is_empty());
    assert_eq!(journaled(&fx), ["working"]);
    assert_eq!(attend(&fx), Some((false, vec![PaneId(1)])));
    heard(&mut s, Some(T0 + 300), T0 + 400);
    // 400 ms after its last byte: still at work; at 500 its screen is read.
    assert!(looks(&heard(&mut s, Some(T0 + 300), T0 + 700)).is_empty());
    assert_eq!(looks(&heard(&mut s, Some(T0 + 300), T0 + 800)), [PaneId(1)]);
    let prompt = Msg::Looked(Ok(
        [(PaneId(1), "Do you want to proceed?".to_string())].into()
    ));
    assert_eq!(journaled(&s.update(prompt, T0 + 810)), ["waiting"]);
    assert_eq!(
        s.cards[0].attention.state(),
        Some((Doing::Waiting, T0 + 300)),
        "since its last byte, to the millisecond"
    );
    // The supervisor keeps its verdict on the pane for `status`, once per change.
    let verdict = |fx: &[Effect]| -> Vec<String> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::SetOptions(v) => Some(v),
                _ => None,
            })
            .flatten()
            .filter(|(_, k, _)| *k == Opt::Verdict)
            .map(|(_, _, v)| v.clone())
            .collect()
    };
    s.update(
        Msg::OptionsSet {
            landed: vec![],
            result: Ok(()),
        },
        T0 + 820,
    );
    assert_eq!(
        verdict(&heard(&mut s, Some(T0 + 300), T0 + 900)),
        [format!(
            "waiting {} screen Do you want to proceed?",
            T0 + 300
        )]
    );
    s.update(
        Msg::OptionsSet {
            landed: vec![],
            result: Ok(()),
        },
        T0 + 920,
    );
    // Quiet: nothing asked again, nothing written again.
    let fx = heard(&mut s, Some(T0 + 300), T0 + 5_000);
    assert!(looks(&fx).is_empty());
    assert!(verdict(&fx).is_empty());
    // A byte: working at once, said as heard (not as the window's output time).
    let fx = heard(&mut s, Some(T0 + 5_100), T0 + 5_150);
    assert_eq!(journaled(&fx), ["working"]);
    let detail = fx.iter().find_map(|e| match e {
        Effect::Journal(ev) => ev.detail.clone(),
        _ => None,
    });
    assert_eq!(detail.as_deref(), Some("its output is heard"));
    // A new connection has heard nothing yet: no news, not a new byte; quiet in time.
    assert!(journaled(&heard(&mut s, None, T0 + 5_300)).is_empty());
    assert_eq!(looks(&heard(&mut s, None, T0 + 5_700)), [PaneId(1)]);
    // No longer heard (the connection fell back): tmux's output times again, often.
    let mut p = pane(1, 1, "claude");
    p.opts.agent = "claude".into();
    let mut o = obs(vec![p]);
    o.activity.insert(PaneId(1), (T0 + 5_000) / 1000);
    s.update(Msg::Tick, T0 + 6_000);
    let fx = s.update(Msg::polled(Ok(o)), T0 + 6_000);
    assert!(!s.cards[0].attention.heard);
    assert_eq!(attend(&fx).map(|(often, _)| often), Some(true));
}

#[test]
fn an_agent_whose_stop_is_known_is_looked_at_at_once_and_waits_from_its_last_count() {
    let mut s = state((120, 40));
    s.supervision.supervising = true;
    assert_eq!(journaled(&heard(&mut s, Some(T0 - 100), T0)), ["working"]);
    // Counted at work till T0 + 250; at T0 + 500 a quiet count: its screen is read at once,
    // not half a second after T0 + 250.
    assert!(looks(&heard(&mut s, Some(T0 + 250), T0 + 300)).is_empty());
    assert!(looks(&heard(&mut s, Some(T0 + 250), T0 + 510)).is_empty());
    assert_eq!(
        looks(&heard_as(&mut s, Some(T0 + 250), T0 + 520, true)),
        [PaneId(1)]
    );
    let prompt = Msg::Looked(Ok(
        [(PaneId(1), "Do you want to proceed?".to_string())].into()
    ));
    assert_eq!(journaled(&s.update(prompt, T0 + 530)), ["waiting"]);
    assert_eq!(
        s.cards[0].attention.state(),
        Some((Doing::Waiting, T0 + 250)),
        "since it was last counted at work"
    );
    // At work again, counted, and stopped between two polls: looked at at once too.
    assert_eq!(
        journaled(&heard(&mut s, Some(T0 + 3_000), T0 + 3_050)),
        ["working"]
    );
    assert_eq!(
        looks(&heard_as(&mut s, Some(T0 + 3_250), T0 + 3_300, true)),
        [PaneId(1)]
    );
}

/// A poll that learnt nothing new of the panes (`same`): no panes, %1's output heard.
fn heard_same(s: &mut State, last: Option<Millis>, now: Millis) -> Vec<Effect> {
    let mut o = obs(vec![]);
    o.same = true;
    o.heard.insert(PaneId(1), last);
    s.update(Msg::Tick, now);
    s.update(Msg::polled(Ok(o)), now)
}

#[test]
fn a_look_that_learnt_nothing_keeps_the_cards_and_hears_their_output() {
    let whole = |fx: &[Effect]| {
        fx.iter().find_map(|e| match e {
            Effect::Poll { whole, .. } => Some(*whole),
            _ => None,
        })
    };
    let mut s = state((120, 40));
    s.supervision.supervising = true;
    // The first look must hand over the panes.
    assert_eq!(whole(&s.update(Msg::Tick, T0 - 10)), Some(true));
    s.update(Msg::polled(Ok(obs(vec![]))), T0 - 10);
    heard(&mut s, Some(T0 - 100), T0);
    let card = s.cards[0].clone();
    // Nothing new: the card stands, its output is news.
    let fx = heard_same(&mut s, Some(T0 + 300), T0 + 400);
    assert_eq!(s.cards.len(), 1, "{fx:?}");
    assert_eq!(s.cards[0].pane, card.pane);
    assert!(
        !journaled(&fx).contains(&"gone".to_string()),
        "no pane is gone"
    );
    assert_eq!(
        looks(&heard_same(&mut s, Some(T0 + 300), T0 + 800)),
        [PaneId(1)]
    );
    assert_eq!(
        journaled(&s.update(
            Msg::Looked(Ok(
                [(PaneId(1), "Do you want to proceed?".to_string())].into()
            )),
            T0 + 810
        )),
        ["waiting"]
    );
    assert_eq!(
        journaled(&heard_same(&mut s, Some(T0 + 900), T0 + 950)),
        ["working"],
        "a byte heard in a look that learnt nothing else"
    );
    // A new supervisor makes its cards anew.
    s.update(
        Msg::Elected(crate::msg::Election {
            mine: false,
            by: None,
            took_over: None,
        }),
        T0 + 1_000,
    );
    assert_eq!(whole(&s.update(Msg::Tick, T0 + 1_500)), Some(true));
}

#[test]
fn what_landed_is_not_written_again_and_what_failed_is() {
    let written = |fx: &[Effect]| -> Vec<(PaneId, Opt, String)> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::SetOptions(v) => Some(v.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    };
    let same = |s: &mut State, now: Millis| {
        let mut o = obs(vec![]);
        o.same = true;
        s.update(Msg::Tick, now);
        s.update(Msg::polled(Ok(o)), now)
    };
    for lands in [true, false] {
        let mut s = state((120, 40));
        s.supervision.supervising = true;
        let mut p = pane(1, 1, "claude");
        p.remain_on_exit = false;
        s.update(Msg::Tick, T0);
        let sets = written(&s.update(Msg::polled(Ok(obs(vec![p]))), T0));
        assert!(
            sets.iter().any(|(_, k, _)| *k == Opt::RemainOnExit)
                && sets.iter().any(|(_, k, _)| *k == Opt::Agent)
                && sets.iter().any(|(_, k, _)| *k == Opt::State),
            "{sets:?}"
        );
        let answer = if lands {
            Msg::OptionsSet {
                landed: sets.clone(),
                result: Ok(()),
            }
        } else {
            Msg::OptionsSet {
                landed: vec![],
                result: Err(TmuxError::TimedOut {
                    after: std::time::Duration::from_secs(2),
                }),
            }
        };
        s.update(answer, T0 + 5);
        // Past the 2 s within which every card's records are compared again.
        let again = written(&same(&mut s, T0 + 2_500));
        if lands {
            assert_eq!(again, [], "landed: the cards show it");
            assert!(s.cards[0].pane.remain_on_exit);
            assert_eq!(s.cards[0].pane.opts.agent, "claude");
        } else {
            let mut again = again;
            again.sort_by_key(|(_, k, _)| *k as u8);
            let mut sets = sets;
            sets.sort_by_key(|(_, k, _)| *k as u8);
            assert_eq!(again, sets, "failed: written again");
        }
    }
}

#[test]
fn a_look_that_learnt_nothing_compares_the_records_only_every_two_seconds() {
    let remain = |fx: &[Effect]| {
        fx.iter().any(|e| {
            matches!(e, Effect::SetOptions(v) if v.iter().any(|(_, k, _)| *k == Opt::RemainOnExit))
        })
    };
    let same = |s: &mut State, now: Millis| {
        let mut o = obs(vec![]);
        o.same = true;
        s.update(Msg::Tick, now);
        s.update(Msg::polled(Ok(o)), now)
    };
    let mut s = state((120, 40));
    s.supervision.supervising = true;
    let mut p = pane(1, 1, "claude");
    p.remain_on_exit = false;
    s.update(Msg::Tick, T0);
    assert!(remain(&s.update(Msg::polled(Ok(obs(vec![p]))), T0)));
    // Answered, but tmux still says off (another hand turned it off again, say).
    s.update(
        Msg::OptionsSet {
            landed: vec![],
            result: Ok(()),
        },
        T0 + 5,
    );
    assert!(!remain(&same(&mut s, T0 + 500)), "only what agents do");
    assert!(!remain(&same(&mut s, T0 + 1_900)));
    assert!(remain(&same(&mut s, T0 + 2_000)), "the net");
}

#[test]
fn a_partial_look_makes_only_its_panes_cards_anew() {
    let mut s = state((120, 40));
    s.supervision.supervising = true;
    poll(&mut s, vec![pane(1, 1, "claude"), pane(2, 2, "claude")], T0);
    let two = s.cards.iter().find(|c| c.pane.id == PaneId(2)).cloned();
    // %1 died, and only it was read whole.
    let mut o = obs(vec![dead(pane(1, 1, "claude"), Some(1), None)]);
    o.partial = true;
    s.update(Msg::Tick, T0 + 500);
    let fx = s.update(Msg::polled(Ok(o)), T0 + 500);
    assert_eq!(s.cards.len(), 2, "{fx:?}");
    let one = s.cards.iter().find(|c| c.pane.id == PaneId(1)).unwrap();
    assert!(matches!(one.life, Life::Dead(_)), "{:?}", one.life);
    assert_eq!(
        s.cards
            .iter()
            .find(|c| c.pane.id == PaneId(2))
            .map(|c| &c.pane),
        two.as_ref().map(|c| &c.pane)
    );
    assert!(!journaled(&fx).contains(&"gone".to_string()), "%2 stands");
}

#[test]
fn a_partial_look_remakes_its_cards_in_place_and_keeps_the_order() {
    let mut s = state((120, 40));
    let ids = |s: &State| s.cards.iter().map(|c| c.pane.id.0).collect::<Vec<_>>();
    poll(&mut s, (1..=5).map(|i| pane(i, i, "claude")).collect(), T0);
    assert_eq!(ids(&s), [1, 2, 3, 4, 5]);
    let before: Vec<Card> = s.cards.clone();
    // %3 renamed, %4 being closed, %6 new in window 0: read whole, the others not.
    s.overlays.closing.insert(PaneId(4));
    let mut renamed = pane(3, 3, "claude");
    renamed.window_name = "renamed".into();
    let mut o = obs(vec![renamed, pane(4, 4, "claude"), pane(6, 0, "claude")]);
    o.partial = true;
    s.update(Msg::Tick, T0 + 500);
    s.update(Msg::polled(Ok(o)), T0 + 500);
    assert_eq!(ids(&s), [6, 1, 2, 3, 5], "sorted as a full look would be");
    let card = |id: u32| s.cards.iter().find(|c| c.pane.id == PaneId(id)).unwrap();
    assert_eq!(card(3).pane.window_name, "renamed");
    for (id, was) in [(1, &before[0]), (2, &before[1]), (5, &before[4])] {
        assert_eq!(&card(id).pane, &was.pane, "%{id} stands as it was");
        assert_eq!(card(id).started_at, was.started_at);
    }
    assert_eq!(
        card(3).started_at,
        before[2].started_at,
        "made anew from its card"
    );
    assert!(
        s.cards.iter().all(|c| c.pane.id != PaneId::default()),
        "no vacant card left"
    );
    // Once a second: the list is not built anew (nor its thousand cards moved).
    let list = s.cards.as_ptr();
    let mut o = obs(vec![pane(3, 3, "claude")]);
    o.partial = true;
    s.update(Msg::Tick, T0 + 1_000);
    s.update(Msg::polled(Ok(o)), T0 + 1_000);
    assert_eq!(ids(&s), [6, 1, 2, 3, 5]);
    let three = s.cards.iter().find(|c| c.pane.id == PaneId(3)).unwrap();
    assert_eq!(three.pane.window_name, "w3");
    assert!(std::ptr::eq(s.cards.as_ptr(), list), "remade in place");
}

#[test]
fn a_screen_read_asks_for_the_hooked_panes_records_only() {
    let mut s = state((120, 40));
    s.headless = true;
    let mut hooked = pane(1, 1, "claude");
    hooked.hook_status = "working".into();
    s.update(Msg::Tick, T0);
    s.update(Msg::polled(Ok(obs(vec![hooked, pane(2, 2, "claude")]))), T0);
    s.update(
        Msg::Looked(Ok([
            (PaneId(1), "esc to interrupt".to_string()),
            (PaneId(2), "esc to interrupt".to_string()),
        ]
        .into())),
        T0 + 10,
    );
    let hot = s
        .update(Msg::Tick, T0 + 500)
        .into_iter()
        .find_map(|e| match e {
            Effect::Poll { hot, .. } => Some(hot),
            _ => None,
        });
    assert_eq!(hot, Some(vec![PaneId(1)]));
}

#[test]
fn a_look_that_learnt_nothing_is_not_taken_for_every_pane_gone() {
    let mut s = state((120, 40));
    s.supervision.supervising = true;
    s.update(Msg::Tick, T0);
    let mut o = obs(vec![]);
    o.same = true;
    let fx = s.update(Msg::polled(Ok(o)), T0);
    assert!(journaled(&fx).is_empty());
    let fx = s.update(Msg::Tick, T0 + 500);
    assert!(fx.contains(&Effect::Poll {
        server: ServerId::Local,
        hot: vec![],
        whole: true
    }));
    // A dead pane whose exit status is awaited: every look hands over its panes (each
    // counts towards giving up on it).
    let mut p = pane(1, 1, "claude");
    p.dead = true;
    let mut fx = s.update(Msg::polled(Ok(obs(vec![p]))), T0 + 500);
    assert_eq!(s.cards[0].life, Life::Reading);
    fx.extend(s.update(Msg::Tick, T0 + 1_000));
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Poll { whole: true, .. })),
        "{fx:?}"
    );
}

#[test]
fn many_quiet_agents_seen_at_once_are_looked_at_two_hundred_at_a_time_poll_after_poll() {
    let mut s = state((120, 40));
    let panes = || -> Observation {
        let mut o = obs((1..=250)
            .map(|i| {
                let mut p = pane(i, i, "claude");
                p.opts.agent = "claude".into();
                p
            })
            .collect());
        for i in 1..=250 {
            o.activity.insert(PaneId(i), 100);
        }
        o
    };
    s.update(Msg::Tick, T0);
    let first = looks(&s.update(Msg::polled(Ok(panes())), T0));
    assert_eq!(first.len(), 200);
    let screens =
        |ids: &[PaneId]| Msg::Looked(Ok(ids.iter().map(|id| (*id, "> ".to_string())).collect()));
    s.update(screens(&first), T0 + 10);
    // The next poll reads no output times (a quiet poll): the rest are looked at anyway.
    s.update(Msg::Tick, T0 + 500);
    let second = looks(&s.update(Msg::polled(Ok(obs(panes().listing.panes))), T0 + 500));
    assert_eq!(second.len(), 50);
    assert!(second.iter().all(|id| !first.contains(id)));
}

#[test]
fn a_supervisor_that_starts_again_finds_a_wait_the_last_one_told_and_says_nothing_new() {
    let mut s = state((120, 40));
    s.supervision.supervising = true;
    let mut p = pane(1, 1, "claude");
    p.opts.agent = "claude".into();
    p.opts.state = "waiting".into();
    let mut o = obs(vec![p]);
    o.activity.insert(PaneId(1), 100);
    s.update(Msg::Tick, T0);
    s.update(Msg::polled(Ok(o)), T0);
    let fx = s.update(
        Msg::Looked(Ok(
            [(PaneId(1), "Do you want to proceed?".to_string())].into()
        )),
        T0 + 10,
    );
    assert!(s.cards[0].attention.is(Doing::Waiting));
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Journal(_))),
        "not journaled again: {fx:?}"
    );
    assert_eq!(s.counts().waiting, 1);
    let fx = output(&mut s, 100, T0 + 500);
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Notify { .. })),
        "not announced again: {fx:?}"
    );
}

mod hosts {
    use super::*;
    use crate::errors::TmuxError;

    /// A state watching the local server and one host, `box`.
    fn with_box() -> State {
        let config = crate::settings::Config {
            hosts: vec![crate::settings::Host::ad_hoc("box")],
            ..Default::default()
        };
        let mut s = State::new(&config, false, "/tmp/s".into(), (120, 40));
        s.grid.order = crate::settings::Order::Tmux;
        s
    }

    fn remote_obs(panes: Vec<Pane>) -> Msg {
        remote_obs_of(None, panes)
    }

    fn remote_obs_of(server_pid: Option<u32>, panes: Vec<Pane>) -> Msg {
        let mut o = obs(panes
            .into_iter()
            .map(|mut p| {
                p.id = PaneId::on(ServerId::Host(0), p.id.0);
                p
            })
            .collect());
        o.listing.server_pid = server_pid;
        Msg::Polled {
            server: ServerId::Host(0),
            result: Ok(Box::new(o)),
        }
    }

    #[test]
    fn a_server_started_again_there_never_hands_its_old_cards_to_new_panes() {
        let mut s = with_box();
        s.update(Msg::Tick, T0);
        s.update(Msg::polled(Ok(obs(vec![pane(1, 0, "claude")]))), T0);
        let mut agent = pane(1, 0, "claude");
        agent.opts.session_id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into();
        s.update(remote_obs_of(Some(100), vec![agent]), T0);
        assert_eq!(s.cards.len(), 2);
        // Rebooted: pane %1 there is now a plain shell.
        s.update(Msg::Tick, T0 + 1_000);
        let fx = s.update(
            remote_obs_of(Some(200), vec![pane(1, 0, "zsh")]),
            T0 + 1_000,
        );
        assert_eq!(
            s.cards.len(),
            1,
            "the shell is no agent, and no old card lives on"
        );
        assert_eq!(s.cards[0].pane.id.server(), ServerId::Local);
        assert!(fx.iter().any(|e| matches!(e, Effect::Journal(ev)
            if ev.event == "server_gone" && ev.host.as_deref() == Some("box"))));
        // Its server gone while the host answers: the same.
        s.update(
            remote_obs_of(Some(200), vec![pane(2, 0, "codex")]),
            T0 + 2_000,
        );
        assert_eq!(s.cards.len(), 2);
        s.update(
            Msg::Polled {
                server: ServerId::Host(0),
                result: Err(TmuxError::NoServer {
                    socket: "/tmp/x".into(),
                }),
            },
            T0 + 3_000,
        );
        assert_eq!(s.cards.len(), 1);
    }

    #[test]
    fn a_death_while_the_host_was_unreachable_is_dated_when_it_happened_not_now() {
        let mut s = with_box();
        s.update(Msg::Tick, T0);
        s.update(Msg::polled(Ok(obs(vec![]))), T0);
        let mut p = pane(4, 0, "claude");
        s.update(remote_obs(vec![p.clone()]), T0);
        s.update(
            Msg::Polled {
                server: ServerId::Host(0),
                result: Err(TmuxError::Unreachable {
                    host: "box".into(),
                    detail: "timed out".into(),
                }),
            },
            T0 + 1_000,
        );
        // Back ten minutes later: it died two minutes after the host went quiet.
        p.dead = true;
        p.dead_status = Some(1);
        p.dead_time = Some((T0 + 120_000) / 1000);
        s.update(remote_obs(vec![p]), T0 + 600_000);
        let c = &s.cards[0];
        assert_eq!(c.life, Life::Dead(Exit::Code(1)));
        assert_eq!(c.died_at, Some(T0 + 120_000));
    }

    #[test]
    fn a_look_at_one_server_says_nothing_of_another_servers_agents() {
        let mut s = with_box();
        s.update(Msg::Tick, T0);
        let local = pane(1, 0, "claude");
        let mut o = obs(vec![local.clone()]);
        let mut files = HashMap::new();
        files.insert(
            local.pid.unwrap(),
            crate::attention::AgentFile {
                status: "waiting".into(),
                waiting_for: Some("permission prompt".into()),
                updated_at: None,
                proc_start: None,
                session_id: None,
            },
        );
        o.agent_files = Arc::new(files);
        s.update(Msg::polled(Ok(o)), T0);
        assert!(s.cards[0].attention.is(Doing::Waiting));
        // The host's look has no files: the local agent still waits.
        for k in 1..5 {
            s.update(Msg::Tick, T0 + k * 500);
            s.update(remote_obs(vec![pane(1, 0, "codex")]), T0 + k * 500);
        }
        let here = s
            .cards
            .iter()
            .find(|c| c.pane.id.server() == ServerId::Local)
            .unwrap();
        assert!(here.attention.is(Doing::Waiting));
    }

    #[test]
    fn each_server_is_polled_on_its_own_and_its_look_replaces_only_its_own_cards() {
        let mut s = with_box();
        let fx = s.update(Msg::Tick, T0);
        assert!(fx.contains(&Effect::Poll {
            server: ServerId::Local,
            hot: vec![],
            whole: true,
        }));
        assert!(fx.contains(&Effect::Poll {
            server: ServerId::Host(0),
            hot: vec![],
            whole: true,
        }));
        s.update(Msg::polled(Ok(obs(vec![pane(1, 0, "claude")]))), T0);
        s.update(remote_obs(vec![pane(1, 0, "codex")]), T0);
        assert_eq!(s.cards.len(), 2, "%1 here and %1 there are two panes");
        // The next local look has no pane: the host's card stays.
        s.update(Msg::polled(Ok(obs(vec![]))), T0 + 500);
        assert_eq!(s.cards.len(), 1);
        assert_eq!(s.cards[0].pane.id, PaneId::on(ServerId::Host(0), 1));
        assert_eq!(s.host_name(&s.cards[0]), Some("box"));
        // A poll still under way is not asked again; asked once it answers.
        let fx = s.update(Msg::Tick, T0 + 1_000);
        assert!(fx.iter().any(|e| matches!(
            e,
            Effect::Poll {
                server: ServerId::Host(0),
                ..
            }
        )));
        let fx = s.update(Msg::Tick, T0 + 1_500);
        assert!(!fx.iter().any(|e| matches!(
            e,
            Effect::Poll {
                server: ServerId::Host(_),
                ..
            }
        )));
    }

    #[test]
    fn a_host_that_does_not_answer_is_stale_alone_and_keeps_its_cards_and_its_first_silence() {
        let mut s = with_box();
        s.update(Msg::Tick, T0);
        s.update(Msg::polled(Ok(obs(vec![pane(1, 0, "claude")]))), T0);
        s.update(remote_obs(vec![pane(2, 0, "claude")]), T0);
        let gone = TmuxError::Unreachable {
            host: "box".into(),
            detail: "Connection refused".into(),
        };
        for k in 1..4 {
            s.update(Msg::Tick, T0 + k * 1_000);
            s.update(
                Msg::Polled {
                    server: ServerId::Host(0),
                    result: Err(gone.clone()),
                },
                T0 + k * 1_000,
            );
        }
        assert_eq!(
            s.servers.get(ServerId::Host(0)).unwrap().down_since,
            Some(T0 + 1_000),
            "since the first"
        );
        let there = s
            .cards
            .iter()
            .find(|c| c.pane.id.server() == ServerId::Host(0))
            .unwrap();
        let here = s
            .cards
            .iter()
            .find(|c| c.pane.id.server() == ServerId::Local)
            .unwrap();
        assert!(s.card_stale(there) && !s.card_stale(here));
        assert_eq!(s.cards.len(), 2);
        s.update(remote_obs(vec![pane(2, 0, "claude")]), T0 + 5_000);
        assert_eq!(s.servers.get(ServerId::Host(0)).unwrap().down_since, None);
        assert!(!s.card_stale(&s.cards[1]));
    }

    #[test]
    fn a_remote_death_is_journaled_with_its_host_kicked_there_and_never_looked_up_here() {
        let mut s = with_box();
        s.update(Msg::Tick, T0);
        s.update(Msg::polled(Ok(obs(vec![]))), T0);
        let mut p = pane(3, 0, "claude");
        s.update(remote_obs(vec![p.clone()]), T0);
        // Dead, its status lost (tmux < 3.6): that server is asked to signal itself.
        p.dead = true;
        let mut fx = Vec::new();
        for k in 1..4 {
            s.update(Msg::Tick, T0 + k * 600);
            fx.extend(s.update(remote_obs(vec![p.clone()]), T0 + k * 600));
        }
        assert!(
            fx.iter().any(|e| matches!(
                e,
                Effect::Kick {
                    server: ServerId::Host(0),
                    ..
                }
            )),
            "{fx:?}"
        );
        assert!(!fx.iter().any(|e| matches!(
            e,
            Effect::Kick {
                server: ServerId::Local,
                ..
            }
        )));
        // Its id is not searched for in this machine's agent folders.
        assert!(!fx.iter().any(|e| matches!(e, Effect::Discover(_))));
        p.dead_status = Some(1);
        p.dead_time = Some(T0 / 1000 + 2);
        let fx = s.update(remote_obs(vec![p.clone()]), T0 + 3_000);
        let fx = crate::testkit::answer_tails(&mut s, fx, "", T0 + 3_000);
        let died = fx
            .iter()
            .find_map(|e| match e {
                Effect::Journal(ev) if ev.event == "died" => Some(ev.clone()),
                _ => None,
            })
            .expect("journaled");
        assert_eq!(died.host.as_deref(), Some("box"));
        assert_eq!(died.server, None);
        assert_eq!(died.pane, "%3");
    }
}

#[test]
fn a_claude_started_by_hand_is_followed_by_the_id_its_own_registry_gives() {
    let mut s = state((120, 40));
    poll(&mut s, vec![pane(1, 1, "claude")], T0);
    let asks = |s: &mut State, now| {
        s.update(Msg::Tick, now)
            .into_iter()
            .find_map(|e| match e {
                Effect::ReadSpend(a) => Some(a),
                _ => None,
            })
            .unwrap_or_default()
    };
    // No id on the pane or its command line: nothing to follow.
    assert!(asks(&mut s, T0 + 3_000).is_empty());
    s.cards[0].said_id = Some("0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into());
    let a = asks(&mut s, T0 + 6_000);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].session_id, "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11");
    // Its answer goes on the card; the next ask waits SPEND_EVERY_MS.
    s.update(
        Msg::Spent(vec![(PaneId(1), crate::spend::Spend::default())]),
        T0 + 6_100,
    );
    assert!(s.cards[0].spend.is_some());
    let every = crate::state::SPEND_EVERY_MS;
    assert!(asks(&mut s, T0 + 6_000 + every - 100).is_empty());
    assert_eq!(asks(&mut s, T0 + 6_000 + every).len(), 1);
}

#[test]
fn a_stop_on_purpose_is_calm_and_below_the_agents_that_need_you() {
    let mut s = crate::testkit::state((120, 40));
    s.grid.order = crate::settings::Order::Attention;
    let panes = vec![
        pane(1, 1, "claude"),
        pane(2, 2, "claude"),
        pane(3, 3, "claude"),
    ];
    poll(&mut s, panes.clone(), T0);
    // %1 stopped with SIGTERM (claude exits 143), %2 finished, %3 waits at a prompt.
    let mut later = panes.clone();
    later[0] = dead(later[0].clone(), Some(143), None);
    later[1] = dead(later[1].clone(), Some(0), None);
    let fx = s.update(Msg::Tick, T0 + 1_000);
    drop(fx);
    let fx = s.update(Msg::polled(Ok(obs(later))), T0 + 1_000);
    crate::testkit::answer_tails(&mut s, fx, "", T0 + 1_000);
    s.update(
        Msg::Looked(Ok(
            [(PaneId(3), "│ Do you want to proceed?\n".to_string())].into()
        )),
        T0 + 1_100,
    );
    let by_pane = |s: &State, n: u32| {
        s.cards
            .iter()
            .find(|c| c.pane.id == PaneId(n))
            .unwrap()
            .clone()
    };
    let stopped = by_pane(&s, 1);
    assert!(stopped.stopped_on_purpose() && !stopped.is_alarm());
    assert!(by_pane(&s, 2).stopped_on_purpose());
    let c = s.counts();
    assert_eq!((c.dead, c.finished, c.stopped), (0, 1, 1));
    // The waiting agent comes first; the stops after it.
    assert_eq!(
        s.cards[0].pane.id,
        PaneId(3),
        "{:?}",
        s.cards.iter().map(|c| c.pane.id).collect::<Vec<_>>()
    );
    // `n` goes to what needs you: the prompt, never a stop on purpose.
    s.update(Msg::Action(crate::msg::Action::NextNeed), T0 + 2_000);
    assert_eq!(
        s.selected_index().map(|i| s.cards[i].pane.id),
        Some(PaneId(3))
    );
    s.update(Msg::Action(crate::msg::Action::NextNeed), T0 + 2_000);
    assert_eq!(
        s.selected_index().map(|i| s.cards[i].pane.id),
        Some(PaneId(3))
    );
}

#[test]
fn a_resumed_agent_leaves_the_dead_group_at_once() {
    let mut s = crate::testkit::state((120, 40));
    s.grid.order = crate::settings::Order::Attention;
    let panes = vec![pane(1, 1, "claude"), pane(2, 2, "claude")];
    poll(&mut s, panes.clone(), T0);
    let mut dead_one = panes.clone();
    dead_one[1] = dead(dead_one[1].clone(), Some(1), None);
    poll(&mut s, dead_one, T0 + 1_000);
    assert_eq!(s.cards[0].pane.id, PaneId(2), "the crash first");
    // Running again (resumed): it ranks as what it does now, not 10 s later.
    let mut back = panes.clone();
    back[1].pid = Some(4242);
    poll(&mut s, back, T0 + 2_000);
    let order: Vec<PaneId> = s.cards.iter().map(|c| c.pane.id).collect();
    assert_eq!(order, [PaneId(1), PaneId(2)]);
    assert_eq!(s.cards[1].order.0, s.cards[1].rank(false));
}

#[test]
fn the_list_keeps_as_many_lines_of_the_selected_agent_as_its_preview_pane_shows() {
    let mut s = state((120, 40));
    s.grid.mode = crate::layout::Mode::List;
    let panes: Vec<Pane> = (1..=5).map(|i| pane(i, i, "claude")).collect();
    poll(&mut s, panes, T0);
    let rows = s
        .geometry()
        .pane_lines()
        .expect("a preview pane under the list");
    let text: String = (1..=60).map(|n| format!("line {n}\n")).collect();
    s.update(
        Msg::Screens(Ok((1..=5).map(|i| (PaneId(i), text.clone())).collect())),
        T0 + 10,
    );
    let sel = s.selected_index().unwrap();
    assert_eq!(
        s.cards[sel].preview.len(),
        rows,
        "as many as its card shows"
    );
    let other = (0..5).find(|&i| i != sel).unwrap();
    assert_eq!(s.cards[other].preview.len(), crate::layout::LIST_PREVIEW);
}
