use super::*;
use crate::pane::PaneId;

fn live() -> Pane {
    Pane {
        id: PaneId(1),
        ..Pane::default()
    }
}

fn dead(status: Option<i32>, signal: Option<i32>) -> Pane {
    Pane {
        dead: true,
        dead_status: status,
        dead_signal: signal,
        ..live()
    }
}

#[test]
fn a_live_pane_that_exits_3_dies_with_code_3_at_the_time_seen() {
    let c = observe(None, live(), None, Some(1_000), 5_000);
    assert_eq!(c.life, Life::Running);
    assert_eq!(c.started_at, Some(1_000));
    let c = observe(Some(c.clone()), dead(Some(3), None), None, None, 9_000);
    assert_eq!(c.life, Life::Dead(Exit::Code(3)));
    assert!(c.life.is_alarm());
    assert_eq!(c.died_at, Some(9_000));
}

#[test]
fn tmux_death_time_wins_over_the_time_seen() {
    let c = observe(None, live(), None, None, 5_000);
    let mut p = dead(None, Some(9));
    p.dead_time = Some(7);
    let c = observe(Some(c.clone()), p, None, None, 9_000);
    assert_eq!(c.life, Life::Dead(Exit::Signal(9)));
    assert_eq!(c.died_at, Some(7_000));
}

#[test]
fn what_needs_you_ranks_above_what_acts_on_its_own_above_the_calm() {
    let agent = |p: Pane| Card {
        agent: Some("claude".into()),
        ..observe(None, p, None, None, 1)
    };
    let doing = |d: Doing| {
        let mut c = agent(live());
        c.attention.now = Some((
            crate::attention::Report::new(d, crate::attention::Told::Screen, ""),
            1,
        ));
        c
    };
    let crashed = agent(dead(Some(1), None));
    let gave_up = Card {
        auto: Auto::Held(crate::supervisor::Hold::GaveUp {
            attempts: 3,
            hourly: false,
        }),
        ..crashed.clone()
    };
    let resuming = Card {
        auto: Auto::Scheduled {
            attempt: 1,
            due: 5_000,
        },
        ..crashed.clone()
    };
    let finished = agent(dead(Some(0), None));
    let rank = |c: &Card| c.rank(false);
    assert_eq!(rank(&crashed), Rank::NeedsYou as u8);
    assert_eq!(rank(&gave_up), Rank::NeedsYou as u8);
    assert_eq!(rank(&doing(Doing::Waiting)), Rank::NeedsYou as u8);
    assert_eq!(
        rank(&doing(Doing::Limited)),
        Rank::NeedsYou as u8,
        "its reset passed"
    );
    assert_eq!(doing(Doing::Limited).rank(true), Rank::AboutToAct as u8);
    assert_eq!(rank(&resuming), Rank::AboutToAct as u8);
    assert_eq!(rank(&doing(Doing::Idle)), Rank::Idle as u8);
    assert_eq!(rank(&doing(Doing::Working)), Rank::Working as u8);
    assert_eq!(rank(&finished), Rank::Calm as u8);
    assert!(rank(&gave_up) < rank(&finished) && rank(&doing(Doing::Waiting)) < rank(&finished));
}

#[test]
fn a_rank_moves_down_at_once_out_of_death_but_slowly_between_live_states() {
    let mut c = Card {
        agent: Some("claude".into()),
        ..observe(None, dead(Some(1), None), None, None, 1)
    };
    c.settle_rank(c.rank(false), 1_000);
    assert_eq!(c.order.0, Rank::NeedsYou as u8);
    // Resumed: scheduled, then running (working), each at once.
    c.auto = Auto::Resuming { attempt: 1 };
    c.settle_rank(c.rank(false), 2_000);
    assert_eq!(c.order.0, Rank::AboutToAct as u8);
    c.life = Life::Running;
    c.auto = Auto::Idle;
    c.settle_rank(c.rank(false), 3_000);
    assert_eq!(
        c.order.0,
        Rank::Working as u8,
        "out of the dead group at once"
    );
    // Waiting, then working again: held at the waiting rank for a while.
    c.attention.now = Some((
        crate::attention::Report::new(Doing::Waiting, crate::attention::Told::Screen, ""),
        4_000,
    ));
    c.settle_rank(c.rank(false), 4_000);
    assert_eq!(c.order.0, Rank::NeedsYou as u8);
    c.attention.now = Some((
        crate::attention::Report::new(Doing::Working, crate::attention::Told::Screen, ""),
        5_000,
    ));
    c.settle_rank(c.rank(false), 5_000);
    assert_eq!(
        c.order.0,
        Rank::NeedsYou as u8,
        "no jump on a short burst of work"
    );
    c.settle_rank(c.rank(false), 5_000 + ORDER_SETTLE_MS);
    assert_eq!(c.order.0, Rank::Working as u8);
}

#[test]
fn a_clean_exit_is_finished_not_alarming() {
    let c = observe(None, dead(Some(0), None), None, None, 1);
    assert!(c.life.is_finished());
    assert!(!c.life.is_alarm());
}

#[test]
fn empty_status_is_read_until_the_kicks_run_out_then_unknown() {
    let mut c = observe(None, live(), None, None, 0);
    for k in 0..MAX_KICKS {
        c = observe(Some(c.clone()), dead(None, None), None, None, 10);
        assert_eq!(c.life, Life::Reading, "kick {k}");
        c.kicks += 1;
    }
    let c = observe(Some(c.clone()), dead(None, None), None, None, 20);
    assert_eq!(c.life, Life::Dead(Exit::Unknown));
    assert!(c.life.is_alarm());
    assert_eq!(
        c.died_at,
        Some(10),
        "death time is when it was first seen dead"
    );
}

#[test]
fn a_kick_that_works_shows_the_real_code() {
    let mut c = observe(None, dead(None, None), None, None, 0);
    c.kicks = 1;
    let c = observe(Some(c.clone()), dead(Some(1), None), None, None, 5);
    assert_eq!(c.life, Life::Dead(Exit::Code(1)));
}

#[test]
fn a_start_nothing_tells_of_is_unknown_unless_it_was_seen() {
    // Another host's agent, first seen running: since when, nobody says.
    let p = crate::testkit::pane(1, 0, "claude");
    let c = observe(None, p.clone(), Some("claude".into()), None, 5_000);
    assert!(c.start_unknown);
    assert_eq!(c.started_at, Some(5_000));
    // Dead, then running again: its start was seen.
    let mut dead = p.clone();
    dead.dead = true;
    dead.dead_status = Some(1);
    let c = observe(Some(c), dead, None, None, 6_000);
    let c = observe(Some(c), p.clone(), None, None, 7_000);
    assert!(!c.start_unknown);
    assert_eq!(c.started_at, Some(7_000));
    // Told by /proc: known.
    let c = observe(None, p, Some("claude".into()), Some(1_000), 8_000);
    assert!(!c.start_unknown);
}

#[test]
fn a_respawned_pane_runs_again_with_a_fresh_clock() {
    let c = observe(None, live(), None, Some(0), 0);
    let c = observe(Some(c.clone()), dead(Some(1), None), None, None, 10);
    let c = observe(Some(c.clone()), live(), None, Some(20), 20);
    assert_eq!(c.life, Life::Running);
    assert_eq!(c.started_at, Some(20));
    assert_eq!(c.died_at, None);
}

#[test]
fn a_respawn_that_crashed_between_two_polls_is_a_new_death() {
    let c = observe(None, live(), None, Some(0), 0);
    let mut d1 = dead(Some(1), None);
    d1.pid = Some(10);
    let c = observe(Some(c.clone()), d1, None, None, 10);
    let mut c2 = c.clone();
    c2.judged = Judged::Done;
    let mut d2 = dead(Some(1), None);
    d2.pid = Some(11);
    let c3 = observe(Some(c2.clone()), d2, None, None, 20);
    assert_eq!(c3.judged, Judged::Due, "judged again");
    assert!(c3.seen_alive);
    assert_eq!(c3.died_at, Some(20));
}

#[test]
fn a_pane_dead_before_we_started_has_no_invented_death_time() {
    let c = observe(None, dead(Some(1), None), None, None, 10);
    assert_eq!(c.died_at, None);
}
