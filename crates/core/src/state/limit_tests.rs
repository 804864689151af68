//! A live agent at its usage limit: `limited` with its reset, looked at again once the
//! reset passed, and `continue` typed once after it where asked.

use super::*;
use crate::attention::Doing;
use crate::testkit::{pane, state, T0};

/// T0 is 2026-05-28 20:26:40 UTC; the tests' zone is UTC.
const LIMIT: &str = "> fix the tests\n  ⎿  You've hit your session limit · resets 8:29pm\n\n> \n";
const RESET: Millis = T0 + 140_000;
const MARGIN: Millis = 60_000;

/// One poll of a claude on %1 (pid `pid`) whose window last wrote at 100 s, every look at
/// its screen answered with `screen`; all the effects.
fn poll(s: &mut State, pid: u32, screen: &str, now: Millis) -> Vec<Effect> {
    poll_wrote(s, pid, screen, 100, "", now)
}

/// [`poll`] with the window's output time `wrote` and the pane's `@agentwatch_paused`.
fn poll_wrote(
    s: &mut State,
    pid: u32,
    screen: &str,
    wrote: u64,
    paused: &str,
    now: Millis,
) -> Vec<Effect> {
    let mut p = pane(1, 1, "claude");
    p.pid = Some(pid);
    p.opts.paused = paused.into();
    let mut o = crate::testkit::obs(vec![p]);
    o.activity.insert(PaneId(1), wrote);
    s.update(Msg::Tick, now);
    let mut fx = s.update(Msg::polled(Ok(o)), now);
    let mut i = 0;
    while i < fx.len() {
        if let Effect::LookAtScreens(ids) = &fx[i] {
            let screens = ids.iter().map(|id| (*id, screen.to_string())).collect();
            let more = s.update(Msg::Looked(Ok(screens)), now);
            fx.extend(more);
        }
        i += 1;
    }
    fx
}

fn typed(fx: &[Effect]) -> Vec<String> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Type { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn journaled<'a>(fx: &'a [Effect], kind: &str) -> Option<&'a crate::msg::Event> {
    fx.iter().find_map(|e| match e {
        Effect::Journal(ev) if ev.event == kind => Some(ev),
        _ => None,
    })
}

/// Polls every 5 s over `[from, to]`; all the effects.
fn polls(s: &mut State, pid: u32, screen: &str, from: Millis, to: Millis) -> Vec<Effect> {
    let mut fx = Vec::new();
    let mut t = from;
    while t <= to {
        fx.extend(poll(s, pid, screen, t));
        t += 5_000;
    }
    fx
}

#[test]
fn a_limit_banner_on_a_live_screen_is_limited_with_its_reset() {
    let mut s = state((120, 40));
    let fx = poll(&mut s, 1001, LIMIT, T0);
    assert_eq!(
        s.cards[0].attention.state().map(|(d, _)| d),
        Some(Doing::Limited)
    );
    assert_eq!(s.cards[0].state_word(), "limited");
    assert_eq!(s.limit_resets(&s.cards[0]), Some(RESET));
    assert_eq!(s.counts().limited, 1);
    assert_eq!(s.counts().waiting, 0, "a limit is not a prompt");
    let ev = journaled(&fx, "limited").expect("the edge is journaled");
    assert_eq!(ev.cause.as_deref(), Some("usage_limit"));
    assert_eq!(ev.resets_at, Some(RESET));
    assert!(ev.detail.as_deref().unwrap_or("").contains("session limit"));
    // Nothing is typed when auto-continue is off (the default).
    let fx = polls(&mut s, 1001, LIMIT, T0 + 5_000, RESET + 10 * MARGIN);
    assert!(typed(&fx).is_empty());
}

#[test]
fn the_limit_beats_the_agents_own_idle_word() {
    let mut a = crate::attention::Attention::default();
    a.file_says(
        Some(1),
        Some(crate::attention::Report::new(
            Doing::Idle,
            crate::attention::Told::File,
            "idle",
        )),
    );
    assert!(a.screen_tells(), "an idle agent's screen is read");
    a.looked_at(
        Some(crate::attention::Report::new(
            Doing::Limited,
            crate::attention::Told::Screen,
            "You've hit your session limit · resets 8:29pm",
        )),
        None,
    );
    assert_eq!(a.decide().map(|v| v.doing), Some(Doing::Limited));
}

#[test]
fn with_auto_continue_on_it_is_typed_once_after_the_reset_and_margin_and_not_before() {
    let mut s = state((120, 40));
    s.supervision.continue_on = true;
    let before = polls(&mut s, 1001, LIMIT, T0, RESET + MARGIN - 1_000);
    assert!(
        typed(&before).is_empty(),
        "nothing before the reset plus the margin"
    );
    let fx = polls(&mut s, 1001, LIMIT, RESET + MARGIN, RESET + MARGIN + 4_000);
    assert_eq!(typed(&fx), ["continue"]);
    let ev = journaled(&fx, "continued").expect("journaled");
    assert_eq!(ev.resets_at, Some(RESET));
    // At most once per limit, however long the banner stays.
    let after = polls(
        &mut s,
        1001,
        LIMIT,
        RESET + MARGIN + 5_000,
        RESET + 20 * MARGIN,
    );
    assert!(typed(&after).is_empty());
}

#[test]
fn nothing_is_typed_into_an_agent_that_went_on_by_itself_or_another_process() {
    // By the time of the reset its screen no longer shows the limit.
    let mut s = state((120, 40));
    s.supervision.continue_on = true;
    polls(&mut s, 1001, LIMIT, T0, RESET + MARGIN - 1_000);
    let fx = polls(&mut s, 1001, "> \n", RESET + MARGIN, RESET + 5 * MARGIN);
    assert!(typed(&fx).is_empty());
    assert_ne!(s.cards[0].state_word(), "limited");
    // Another process in the pane shows a limit: not the agent that was told of.
    let mut s = state((120, 40));
    s.supervision.continue_on = true;
    polls(&mut s, 1001, LIMIT, T0, RESET + MARGIN - 1_000);
    let fx = polls(&mut s, 2002, LIMIT, RESET + MARGIN, RESET + 5 * MARGIN);
    assert!(typed(&fx).is_empty(), "{:?}", typed(&fx));
}

#[test]
fn c_switches_continue_at_reset_for_one_agent_and_it_is_kept_on_the_pane() {
    let mut s = state((120, 40));
    polls(&mut s, 1001, LIMIT, T0, T0 + 5_000);
    let fx = s.update(Msg::Action(crate::msg::Action::ToggleContinue), T0 + 6_000);
    assert!(s.continues(&s.cards[0]));
    let wrote = fx.iter().any(|e| {
        matches!(e, Effect::SetOptions(sets)
            if sets.iter().any(|(_, o, v)| *o == crate::pane::Opt::Paused && v == "continue"))
    });
    assert!(wrote, "{fx:?}");
    let fx = polls(&mut s, 1001, LIMIT, RESET + MARGIN, RESET + MARGIN + 4_000);
    assert_eq!(typed(&fx), ["continue"]);
    // And back off.
    s.update(
        Msg::Action(crate::msg::Action::ToggleContinue),
        RESET + MARGIN + 5_000,
    );
    assert!(!s.continues(&s.cards[0]));
    assert_eq!(
        crate::supervisor::Budget::from_options("", "", "", "1 nocontinue"),
        crate::supervisor::Budget {
            paused: true,
            continues: Some(false),
            ..Default::default()
        }
    );
}

#[test]
fn a_limit_whose_reset_passed_is_looked_at_again() {
    let mut s = state((120, 40));
    polls(&mut s, 1001, LIMIT, T0, T0 + 5_000);
    // Before the reset: quiet, looked at once, not again.
    let fx = polls(&mut s, 1001, LIMIT, T0 + 10_000, RESET - 5_000);
    assert!(!fx.iter().any(|e| matches!(e, Effect::LookAtScreens(_))));
    // After it: looked at again (every 30 s while it stays).
    let fx = polls(&mut s, 1001, LIMIT, RESET + 5_000, RESET + 40_000);
    assert!(fx.iter().any(|e| matches!(e, Effect::LookAtScreens(_))));
    // The banner went: no longer limited.
    polls(&mut s, 1001, "> \n", RESET + 45_000, RESET + 80_000);
    assert_eq!(s.counts().limited, 0);
}

#[test]
fn claudes_limit_menu_is_dismissed_before_continue_is_typed() {
    // claude 2.1.197 opens `/rate-limit-options` under its banner.
    let menu = "  ⎿ \u{a0}You've hit your session limit · resets 8:29pm\n\n❯ /rate-limit-options\n  What do you want to do?\n\n  ❯ 1. Stop and wait for limit to reset\n    2. Upgrade your plan\n\n  Enter to confirm · Esc to cancel\n";
    let mut s = state((120, 40));
    s.supervision.continue_on = true;
    polls(&mut s, 1001, menu, T0, RESET + MARGIN - 1_000);
    assert_eq!(s.counts().limited, 1, "limited, not waiting at the menu");
    assert_eq!(s.counts().waiting, 0);
    let fx = polls(&mut s, 1001, menu, RESET + MARGIN, RESET + MARGIN + 4_000);
    let dismissed: Vec<bool> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Type { dismiss, .. } => Some(*dismiss),
            _ => None,
        })
        .collect();
    assert_eq!(dismissed, [true]);
}

#[test]
fn a_limit_continued_once_is_not_continued_again_by_the_next_supervisor() {
    let mut s = state((120, 40));
    s.supervision.continue_on = true;
    polls(&mut s, 1001, LIMIT, T0, RESET + MARGIN - 1_000);
    let fx = polls(&mut s, 1001, LIMIT, RESET + MARGIN, RESET + MARGIN + 4_000);
    assert_eq!(typed(&fx), ["continue"]);
    let kept = fx.iter().find_map(|e| match e {
        Effect::SetOptions(sets) => sets
            .iter()
            .find(|(_, o, _)| *o == crate::pane::Opt::Paused)
            .map(|(_, _, v)| v.clone()),
        _ => None,
    });
    assert_eq!(kept, Some(format!("continued={RESET}")));
    // A supervisor started later finds the limit's banner still up, and the mark.
    let mut next = state((120, 40));
    next.supervision.continue_on = true;
    let mut fx = Vec::new();
    let mut t = RESET + MARGIN + 10_000;
    while t < RESET + 5 * MARGIN {
        fx.extend(poll_wrote(
            &mut next,
            1001,
            LIMIT,
            100,
            &format!("continued={RESET}"),
            t,
        ));
        t += 5_000;
    }
    assert_eq!(next.counts().limited, 1);
    assert!(typed(&fx).is_empty(), "{:?}", typed(&fx));
}

#[test]
fn output_at_a_limit_is_read_on_screen_not_taken_for_work() {
    let mut s = state((120, 40));
    let mut fx = poll(&mut s, 1001, LIMIT, T0);
    // Its footer redrawn, twice: the screen still shows the limit.
    fx.extend(poll_wrote(&mut s, 1001, LIMIT, 101, "", T0 + 5_000));
    assert_eq!(s.counts().limited, 1, "held while its screen is read");
    fx.extend(poll_wrote(&mut s, 1001, LIMIT, 102, "", T0 + 10_000));
    assert_eq!(s.counts().limited, 1);
    let edges: Vec<&str> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Journal(ev) => Some(ev.event.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(edges, ["limited"], "no working/limited flutter");
    // It went on: a reply below the banner.
    let went_on = format!("{LIMIT}❯ continue\n● On it.\n");
    poll_wrote(&mut s, 1001, &went_on, 103, "", T0 + 15_000);
    assert_eq!(s.counts().limited, 0);
}
