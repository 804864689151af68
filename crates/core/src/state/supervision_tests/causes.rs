//! The policy by cause, through the simulated server: a usage limit waits for its reset, a
//! login is the user's, out of memory gets one attempt, an overloaded API backs off longer
//! and one agent goes first.

use super::*;
use crate::cause::Cause;

/// T0 is 2026-05-28 20:26:40 UTC; the tests' zone is UTC.
const LIMIT: &str = "You've hit your session limit · resets 8:29pm";
/// 20:29 that day.
const RESET: Millis = T0 + 140_000;
const MARGIN: Millis = 60_000;

fn supervisor_with(tail: &str) -> (World, State) {
    let mut w = World::new();
    w.tail = tail.to_string();
    let s = instance(true);
    (w, s)
}

/// Looks every 500 ms over `[from, to]`.
fn looks(w: &mut World, s: &mut State, from: Millis, to: Millis) {
    let mut t = from;
    while t <= to {
        w.look(s, t);
        t += 500;
    }
}

#[test]
fn a_usage_limit_is_resumed_at_its_reset_plus_the_margin_and_costs_no_attempt() {
    let (mut w, mut s) = supervisor_with(LIMIT);
    w.look(&mut s, T0);
    w.kill(1);
    w.look(&mut s, T0 + 500);
    let stop = s.cards[0].stop.clone().expect("decided");
    assert_eq!(
        (stop.cause, stop.resets_at),
        (Cause::UsageLimit, Some(RESET))
    );
    assert_eq!(
        s.cards[0].auto,
        Auto::Scheduled {
            attempt: 1,
            due: RESET + MARGIN
        }
    );
    let died = w.journal.iter().find(|e| e.event == "died").unwrap();
    assert_eq!(died.cause.as_deref(), Some("usage_limit"));
    assert_eq!(died.resets_at, Some(RESET));
    // Nothing before the reset and its margin, however long the backoff was.
    looks(&mut w, &mut s, T0 + 1_000, RESET + MARGIN - 500);
    assert_eq!(w.relaunches, 0);
    looks(&mut w, &mut s, RESET + MARGIN, RESET + MARGIN + 500);
    assert_eq!(w.relaunches, 1);
    assert_eq!(
        s.cards[0].budget.attempts, 0,
        "waiting was the cure, not a retry"
    );
    assert!(s.cards[0].budget.recent.is_empty());
}

#[test]
fn a_usage_limit_with_no_reset_said_is_held_and_says_so() {
    let (mut w, mut s) = supervisor_with("You've hit your usage limit");
    w.look(&mut s, T0);
    w.kill(1);
    looks(&mut w, &mut s, T0 + 500, T0 + 60_000);
    assert_eq!(w.relaunches, 0);
    assert_eq!(s.cards[0].auto, Auto::Held(Hold::Cause(Cause::UsageLimit)));
}

#[test]
fn a_login_needed_is_not_resumed_and_the_card_says_what_to_run() {
    let (mut w, mut s) = supervisor_with("Invalid API key · Please run /login\n");
    w.look(&mut s, T0);
    w.kill(1);
    looks(&mut w, &mut s, T0 + 500, T0 + 120_000);
    assert_eq!(w.relaunches, 0);
    let held = Hold::Cause(Cause::Auth);
    assert_eq!(s.cards[0].auto, Auto::Held(held.clone()));
    assert_eq!(
        held.reason("claude").as_deref(),
        Some("login needed: run /login in it (or claude /login), then r resumes it")
    );
    let not = w.journal.iter().find(|e| e.event == "not_resumed").unwrap();
    assert_eq!(not.cause.as_deref(), Some("auth"));
    // Kept on the pane: a supervisor started later picks the verdict up as it is.
    let mut next = instance(true);
    w.look(&mut next, T0 + 121_000);
    assert_eq!(next.cards[0].auto, Auto::Held(held));
}

#[test]
fn out_of_memory_gets_one_attempt_then_holds() {
    let (mut w, mut s) = supervisor_with(
        "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n",
    );
    w.look(&mut s, T0);
    crash_loop(&mut w, &mut s, T0 + 500, T0 + 60_000);
    assert_eq!(w.relaunches, 1, "{:?}", w.argvs);
    assert_eq!(s.cards[0].auto, Auto::Held(Hold::Cause(Cause::OutOfMemory)));
}

#[test]
fn an_overloaded_api_backs_off_longer() {
    let (mut w, mut s) = supervisor_with("API Error: 529 {\"type\":\"overloaded_error\"}\n");
    w.look(&mut s, T0);
    w.kill(1);
    w.look(&mut s, T0 + 500);
    assert_eq!(
        s.cards[0].auto,
        Auto::Scheduled {
            attempt: 1,
            due: T0 + 500 + 30_000
        }
    );
}

#[test]
fn of_several_agents_stopped_by_a_network_error_one_goes_first() {
    let (mut w, mut s) = supervisor_with("API Error: Connection error.\n");
    let mut second = pane(2, 2, "claude");
    second.opts.session_id = "1e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into();
    w.panes.push(second);
    w.look(&mut s, T0);
    for p in &mut w.panes {
        p.dead = true;
        p.dead_status = Some(1);
    }
    // Due at T0 + 30.5 s; the first goes then, the other once it ran 10 s (the canary time).
    looks(&mut w, &mut s, T0 + 500, T0 + 31_000);
    assert_eq!(w.relaunches, 1, "{:?}", w.relaunched);
    let waits = s
        .cards
        .iter()
        .find_map(|c| s.waits_for_first(c))
        .expect("the other says why it waits");
    assert!(
        waits.contains("to come back first (network error)"),
        "{waits}"
    );
    looks(&mut w, &mut s, T0 + 31_500, T0 + 40_000);
    assert_eq!(w.relaunches, 1, "{:?}", w.relaunched);
    looks(&mut w, &mut s, T0 + 40_500, T0 + 42_000);
    assert_eq!(w.relaunches, 2, "{:?}", w.relaunched);
}

#[test]
fn a_deliberate_stop_needs_no_output_read() {
    let (mut w, mut s) = supervisor_with("Invalid API key");
    w.look(&mut s, T0);
    w.kill(143);
    let fx = {
        let fx = s.update(Msg::Tick, T0 + 500);
        w.apply(&mut s, fx.clone(), T0 + 500);
        let more = s.update(Msg::polled(Ok(w.obs())), T0 + 500);
        let asked = more.iter().any(|e| matches!(e, Effect::ReadTail(..)));
        w.apply(&mut s, more, T0 + 500);
        asked
    };
    assert!(!fx, "no capture for a deliberate stop");
    assert_eq!(
        s.cards[0].stop.as_ref().map(|s| s.cause),
        Some(Cause::Deliberate)
    );
}

#[test]
fn a_stop_on_purpose_is_journaled_and_not_announced_a_crash_is_both() {
    for (code, announced) in [(143, false), (1, true)] {
        let (mut w, mut s) = supervisor_with("");
        w.look(&mut s, T0);
        w.kill(code);
        let mut notified = Vec::new();
        for t in [T0 + 500, T0 + 1_000] {
            let fx = s.update(Msg::Tick, t);
            w.apply(&mut s, fx, t);
            let fx = s.update(Msg::polled(Ok(w.obs())), t);
            notified.extend(fx.iter().filter_map(|e| match e {
                Effect::Notify { events, .. } => Some(events.len()),
                _ => None,
            }));
            w.apply(&mut s, fx, t);
        }
        assert_eq!(
            w.journal.iter().filter(|e| e.event == "died").count(),
            1,
            "exit {code}"
        );
        assert_eq!(!notified.is_empty(), announced, "exit {code}: {notified:?}");
    }
}

#[test]
fn the_agents_own_record_tells_a_cause_its_screen_does_not() {
    // Its pane shows nothing useful; its transcript ends with the refused key.
    let (mut w, mut s) = supervisor_with("bye\n");
    w.record = vec!["Invalid API key · Fix external API key".into()];
    w.look(&mut s, T0);
    w.kill(1);
    looks(&mut w, &mut s, T0 + 500, T0 + 10_000);
    let stop = s.cards[0].stop.clone().expect("decided");
    assert_eq!(stop.cause, Cause::Auth);
    assert_eq!(
        stop.evidence.last().map(String::as_str),
        Some("its own record: Invalid API key · Fix external API key")
    );
    assert_eq!(w.relaunches, 0);
    // What the pane shows last still decides over an older record.
    let (mut w, mut s) =
        supervisor_with("API Error: Unable to connect to API (ConnectionRefused)\n");
    w.record = vec!["API Error: 529 Overloaded".into()];
    w.look(&mut s, T0);
    w.kill(1);
    w.look(&mut s, T0 + 500);
    assert_eq!(
        s.cards[0].stop.as_ref().map(|s| s.cause),
        Some(Cause::Network)
    );
}
