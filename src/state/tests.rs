use super::*;
use crate::msg::{Action, Effect, Msg};
use crate::pane::Exit;
use crate::testkit::*;

#[test]
fn a_tick_polls_once_and_never_piles_up_while_a_poll_is_in_flight() {
    let mut s = state((80, 24));
    assert_eq!(s.update(Msg::Tick, T0), vec![Effect::Poll]);
    assert_eq!(s.update(Msg::Tick, T0 + 500), vec![]);
    assert_eq!(s.update(Msg::Tick, T0 + 1000), vec![]);
    s.update(Msg::Polled(Ok(obs(vec![]))), T0 + 1100);
    assert_eq!(s.update(Msg::Tick, T0 + 1500), vec![Effect::Poll]);
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
        &crate::config::Config::default(),
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
            dead: 0,
            finished: 0
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
            running: 0,
            dead: 1,
            finished: 1
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
    assert!(fx.contains(&Effect::KickServer(4242)), "{fx:?}");
    assert!(fx.contains(&Effect::Poll));
    assert_eq!(s.cards[0].life, Life::Reading);
    // The re-poll after the kick shows the code.
    let fx = s.update(
        Msg::Polled(Ok(obs(vec![dead(pane(1, 0, "claude"), Some(1), None)]))),
        T0 + 520,
    );
    assert!(!fx.contains(&Effect::KickServer(4242)));
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
                Msg::Polled(Ok(obs(vec![dead(pane(1, 0, "claude"), None, None)]))),
                T0 + 500 * i,
            );
            kicks += fx
                .iter()
                .filter(|e| matches!(e, Effect::KickServer(_)))
                .count();
        }
    }
    assert_eq!(kicks, usize::from(crate::watch::MAX_KICKS));
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
    let names: Vec<&str> = sets.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "remain-on-exit",
            "@agentwatch_agent",
            "@agentwatch_cwd",
            "@agentwatch_session_id"
        ]
    );
    assert!(
        sets.iter().all(|(id, _, _)| *id == PaneId(1)),
        "never touches the non-agent pane"
    );
    assert_eq!(sets[3].2, "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11");
}

#[test]
fn retain_dead_false_leaves_remain_on_exit_alone_and_a_bad_id_is_never_recorded() {
    let config = crate::config::Config {
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
            Effect::SetOptions(v) => Some(v.iter().map(|(_, k, _)| k.clone()).collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(!sets.contains(&"remain-on-exit".to_string()));
    assert!(!sets.contains(&"@agentwatch_session_id".to_string()));
}

#[test]
fn previews_are_fetched_for_cards_on_screen_only_and_not_every_tick() {
    let mut s = state((80, 24)); // two cards per screen
    let panes: Vec<_> = (1..=5).map(|i| pane(i, i, "claude")).collect();
    let fx = poll(&mut s, panes.clone(), T0);
    assert!(
        fx.contains(&Effect::CaptureScreens(vec![PaneId(1), PaneId(2)])),
        "{fx:?}"
    );
    s.update(Msg::Screens(Ok(Default::default())), T0 + 10);
    // Nothing changed: no new capture.
    let fx = poll(&mut s, panes.clone(), T0 + 5_000);
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::CaptureScreens(_))),
        "{fx:?}"
    );
    // Output in pane 2: captured again, once the interval has passed.
    let mut changed = panes.clone();
    changed[1].history_size = 7;
    let fx = poll(&mut s, changed, T0 + 6_000);
    assert!(
        fx.contains(&Effect::CaptureScreens(vec![PaneId(2)])),
        "{fx:?}"
    );
}

#[test]
fn previews_keep_the_last_lines_without_the_dead_pane_line() {
    let screen = "one\ntwo\nthree   \n\nPane is dead (status 1, Sun Nov 29 22:35:16 2026)\n\n\n";
    assert_eq!(last_lines(screen, 2), vec!["two", "three"]);
}

#[test]
fn selection_moves_and_scrolls_to_stay_visible() {
    let mut s = state((80, 24));
    poll(&mut s, (1..=5).map(|i| pane(i, i, "claude")).collect(), T0);
    assert_eq!(s.selected, Some(PaneId(1)));
    for _ in 0..3 {
        s.update(Msg::Action(Action::Down), T0);
    }
    assert_eq!(s.selected, Some(PaneId(4)));
    assert_eq!(s.visible(), 2..4);
    s.update(Msg::Action(Action::First), T0);
    assert_eq!(s.visible(), 0..2);
    s.update(Msg::Action(Action::Last), T0);
    assert_eq!(s.selected, Some(PaneId(5)));
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
    assert_eq!(s.selected, Some(PaneId(2)));
    // Its pane vanished: the next one in order takes the selection.
    poll(
        &mut s,
        vec![pane(9, 0, "codex"), pane(1, 1, "claude")],
        T0 + 1000,
    );
    assert_eq!(s.selected, Some(PaneId(1)));
}

#[test]
fn a_failed_poll_keeps_the_cards_and_marks_them_stale() {
    let mut s = state((80, 24));
    poll(&mut s, vec![pane(1, 1, "claude")], T0);
    s.update(Msg::Tick, T0 + 500);
    s.update(
        Msg::Polled(Err(TmuxError::TimedOut {
            after: std::time::Duration::from_secs(2),
        })),
        T0 + 2500,
    );
    assert_eq!(s.cards.len(), 1);
    assert!(s.is_stale());
    assert_eq!(s.update(Msg::Tick, T0 + 3000), vec![Effect::Poll]);
}

#[test]
fn help_opens_and_closes_and_quit_works_from_it() {
    let mut s = state((80, 24));
    s.update(Msg::Action(Action::Help), T0);
    assert!(s.show_help);
    s.update(Msg::Action(Action::Back), T0);
    assert!(!s.show_help);
    s.update(Msg::Action(Action::Help), T0);
    s.update(Msg::Action(Action::Quit), T0);
    assert!(s.quit);
}
