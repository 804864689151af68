use super::*;

const T: Millis = 1_000_000_000;

fn p() -> Policy {
    Policy::default()
}

fn die(b: &mut Budget, exit: Exit, run_ms: Millis, now: Millis) -> Verdict {
    on_death(&p(), true, b, exit, Some(run_ms), true, now, Why::default())
}

#[test]
fn the_backoff_schedule_is_2_10_30_and_the_last_value_repeats() {
    let mut pol = p();
    assert_eq!(
        [1, 2, 3].map(|a| pol.backoff_ms(a)),
        [2_000, 10_000, 30_000]
    );
    pol.max_attempts = 5;
    assert_eq!(pol.backoff_ms(5), 30_000);
}

#[test]
fn a_crash_loop_is_resumed_three_times_then_given_up_on() {
    let mut b = Budget::default();
    let mut now = T;
    for attempt in 1..=3 {
        let v = die(&mut b, Exit::Code(1), 1_000, now);
        let due = now + p().backoff_ms(attempt);
        assert_eq!(v, Verdict::Resume { attempt, due });
        assert_eq!(b.next_due, Some(due));
        now = due;
        assert_eq!(on_resume(&mut b, now), attempt);
        now += 1_000;
    }
    assert_eq!(
        die(&mut b, Exit::Code(1), 1_000, now),
        Verdict::Hold(Hold::GaveUp {
            attempts: 3,
            hourly: false
        })
    );
    assert_eq!(b.next_due, None);
}

#[test]
fn a_healthy_run_refills_the_budget() {
    let mut b = Budget {
        attempts: 3,
        ..Budget::default()
    };
    assert!(matches!(
        die(&mut b, Exit::Code(1), 60_000, T),
        Verdict::Resume { attempt: 1, .. }
    ));
    let mut b = Budget {
        attempts: 3,
        ..Budget::default()
    };
    assert!(matches!(
        die(&mut b, Exit::Code(1), 59_999, T),
        Verdict::Hold(Hold::GaveUp { .. })
    ));
    let mut b = Budget {
        attempts: 2,
        ..Budget::default()
    };
    assert!(refill_if_healthy(&p(), &mut b, 60_000));
    assert_eq!(b.attempts, 0);
    assert!(
        !refill_if_healthy(&p(), &mut b, 120_000),
        "nothing to refill"
    );
}

#[test]
fn the_hourly_flap_breaker_holds_even_across_healthy_resets() {
    let mut b = Budget::default();
    let mut now = T;
    for _ in 0..6 {
        // Each run is healthy, so attempts reset; the hourly count does not.
        assert!(matches!(
            die(&mut b, Exit::Code(1), 61_000, now),
            Verdict::Resume { attempt: 1, .. }
        ));
        on_resume(&mut b, now);
        now += 61_000;
    }
    assert_eq!(
        die(&mut b, Exit::Code(1), 61_000, now),
        Verdict::Hold(Hold::GaveUp {
            attempts: 0,
            hourly: true
        })
    );
    // An hour after the first resume, the breaker lets one through again.
    assert!(matches!(
        die(&mut b, Exit::Code(1), 61_000, T + HOUR_MS),
        Verdict::Resume { .. }
    ));
}

#[test]
fn deliberate_and_clean_exits_are_never_resumed() {
    for exit in [
        Exit::Code(0),
        Exit::Code(130),
        Exit::Signal(1),
        Exit::Signal(2),
        Exit::Signal(15),
    ] {
        let mut b = Budget::default();
        assert!(
            matches!(
                die(&mut b, exit, 1_000, T),
                Verdict::Hold(Hold::Deliberate(_))
            ),
            "{exit:?}"
        );
    }
    for exit in [
        Exit::Code(1),
        Exit::Code(137),
        Exit::Signal(9),
        Exit::Signal(11),
        Exit::Unknown,
    ] {
        let mut b = Budget::default();
        assert!(
            matches!(die(&mut b, exit, 1_000, T), Verdict::Resume { .. }),
            "{exit:?}"
        );
    }
}

#[test]
fn an_exit_of_128_plus_a_deliberate_signal_is_deliberate_and_says_which() {
    // claude handles SIGTERM and SIGHUP and exits 143 / 129 itself.
    for (code, words) in [(143, "exit 143 (SIGTERM)"), (129, "exit 129 (SIGHUP)")] {
        let mut b = Budget::default();
        assert_eq!(
            die(&mut b, Exit::Code(code), 1_000, T),
            Verdict::Hold(Hold::Deliberate(words.into()))
        );
    }
    // SIGKILL is not deliberate by default: 137 is resumed, and so is a code past 128+31.
    for code in [137, 139, 200, 255] {
        let mut b = Budget::default();
        assert!(
            matches!(
                die(&mut b, Exit::Code(code), 1_000, T),
                Verdict::Resume { .. }
            ),
            "{code}"
        );
    }
    // With SIGKILL configured as deliberate, 137 is too.
    let global = AutoResume {
        never_signals: vec!["KILL".into()],
        ..AutoResume::default()
    };
    let pol = Policy::resolve(&global, None);
    assert_eq!(
        on_death(
            &pol,
            true,
            &mut Budget::default(),
            Exit::Code(137),
            None,
            true,
            T,
            Why::default()
        ),
        Verdict::Hold(Hold::Deliberate("exit 137 (SIGKILL)".into()))
    );
}

#[test]
fn configured_exclusions_and_switches_hold() {
    let global = AutoResume {
        never_exit_codes: vec![0, 2],
        never_signals: vec!["KILL".into()],
        ..AutoResume::default()
    };
    let pol = Policy::resolve(&global, None);
    let mut b = Budget::default();
    assert!(matches!(
        on_death(
            &pol,
            true,
            &mut b,
            Exit::Code(2),
            None,
            true,
            T,
            Why::default()
        ),
        Verdict::Hold(Hold::Deliberate(_))
    ));
    assert!(matches!(
        on_death(
            &pol,
            true,
            &mut b,
            Exit::Signal(9),
            None,
            true,
            T,
            Why::default()
        ),
        Verdict::Hold(Hold::Deliberate(_))
    ));
    assert!(matches!(
        on_death(
            &pol,
            true,
            &mut b,
            Exit::Signal(15),
            None,
            true,
            T,
            Why::default()
        ),
        Verdict::Resume { .. }
    ));
    let over = AutoResumeOverride {
        enabled: Some(false),
        ..Default::default()
    };
    let off = Policy::resolve(&AutoResume::default(), Some(&over));
    assert_eq!(
        on_death(
            &off,
            true,
            &mut Budget::default(),
            Exit::Code(1),
            None,
            true,
            T,
            Why::default()
        ),
        Verdict::Hold(Hold::Off)
    );
    assert_eq!(
        on_death(
            &p(),
            false,
            &mut Budget::default(),
            Exit::Code(1),
            None,
            true,
            T,
            Why::default()
        ),
        Verdict::Hold(Hold::Off)
    );
    let mut paused = Budget {
        paused: true,
        ..Budget::default()
    };
    assert_eq!(
        on_death(
            &p(),
            true,
            &mut paused,
            Exit::Code(1),
            None,
            true,
            T,
            Why::default()
        ),
        Verdict::Hold(Hold::Off)
    );
}

#[test]
fn unknown_status_is_resumed_but_a_missing_id_never_is() {
    let mut b = Budget::default();
    assert!(matches!(
        on_death(
            &p(),
            true,
            &mut b,
            Exit::Unknown,
            None,
            true,
            T,
            Why::default()
        ),
        Verdict::Resume { .. }
    ));
    let mut b = Budget::default();
    assert_eq!(
        on_death(
            &p(),
            true,
            &mut b,
            Exit::Code(1),
            None,
            false,
            T,
            Why::default()
        ),
        Verdict::Hold(Hold::NoSessionId)
    );
}

#[test]
fn a_manual_relaunch_resets_the_count() {
    let mut b = Budget {
        attempts: 3,
        next_due: Some(T),
        ..Budget::default()
    };
    on_manual(&mut b);
    assert_eq!((b.attempts, b.next_due), (0, None));
}

#[test]
fn the_budget_round_trips_through_pane_options_and_ignores_junk() {
    let b = Budget {
        attempts: 2,
        recent: vec![T, T + 5],
        next_due: Some(T + 9),
        paused: true,
        continues: Some(true),
        continued: Some(T + 7),
    };
    let o = b.to_options();
    let get = |k: &str| {
        o.iter()
            .find(|(n, _)| n.name() == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    let back = Budget::from_options(
        get("@agentwatch_attempts"),
        get("@agentwatch_resumes"),
        get("@agentwatch_next"),
        get("@agentwatch_paused"),
    );
    assert_eq!(back, b);
    assert_eq!(
        Budget::from_options("x", "1,,y,2", "-3", "yes"),
        Budget {
            recent: vec![1, 2],
            ..Budget::default()
        }
    );
}
