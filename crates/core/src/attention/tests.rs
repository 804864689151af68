use super::*;

#[test]
fn the_agents_own_word_decides_else_a_prompt_beats_the_output() {
    let file = |status: &str, waiting_for: Option<&str>| AgentFile {
        status: status.into(),
        waiting_for: waiting_for.map(str::to_string),
        ..Default::default()
    };
    let mut a = Attention {
        file: file("busy", None).report(),
        working_since: Some(1),
        screen: Some(Report::new(
            Doing::Waiting,
            Told::Screen,
            "Do you want to proceed?",
        )),
        ..Default::default()
    };
    // The screen's match is old text: claude itself says it works.
    assert_eq!(
        a.decide().map(|v| (v.doing, v.told)),
        Some((Doing::Working, Told::File))
    );
    a.file = file("waiting", Some("permission prompt")).report();
    let v = a.decide().unwrap();
    assert_eq!(
        (v.doing, v.told, v.why.as_str()),
        (Doing::Waiting, Told::File, "permission prompt")
    );
    a.file = file("shell", None).report();
    assert_eq!(a.decide().map(|v| v.doing), Some(Doing::Idle));
    a.file = file("compacting", None).report();
    assert!(a.file.is_none(), "a word it does not know says nothing");
    let v = a.decide().unwrap();
    assert_eq!((v.doing, v.told), (Doing::Waiting, Told::Screen));
    a.screen = None;
    assert_eq!(a.decide().map(|v| v.told), Some(Told::Output));
}

#[test]
fn a_hooks_wait_is_overtaken_by_output_well_after_it_not_by_the_prompt_drawing_itself() {
    let mut a = Attention::default();
    a.saw_output(100, 1_000);
    a.hook_says("waiting", "Claude needs your permission to use Bash", 1_000);
    a.saw_output(101, 1_500);
    assert_eq!(a.decide().map(|v| v.doing), Some(Doing::Waiting));
    assert_eq!(
        a.decide().map(|v| v.why).as_deref(),
        Some("Claude needs your permission to use Bash")
    );
    a.saw_output(102, 9_000);
    assert_eq!(a.decide().map(|v| v.doing), Some(Doing::Working));
    // A new word from the hook counts again.
    a.hook_says("idle", "", 10_000);
    assert_eq!(a.decide().map(|v| v.doing), Some(Doing::Idle));
    a.hook_says("", "", 11_000);
    assert!(a.hook.is_none());
}

#[test]
fn a_verdict_is_one_line_that_reads_back_as_written() {
    let v = Verdict {
        doing: Doing::Waiting,
        since: 1_796_194_514_699,
        told: Told::Screen,
        why: "Do you want to proceed?\tnow\n".into(),
        asked: None,
    };
    assert_eq!(
        v.value(),
        "waiting 1796194514699 screen Do you want to proceed? now"
    );
    let back = Verdict::parse(&v.value()).unwrap();
    assert_eq!(
        (back.doing, back.since, back.told, back.why.as_str()),
        (v.doing, v.since, v.told, "Do you want to proceed? now")
    );
    assert_eq!(
        Verdict::parse("idle 5 file").map(|v| v.why),
        Some(String::new())
    );
    let report = Report::new(
        Doing::Waiting,
        Told::Screen,
        "Do you want to proceed?\tnow\n",
    );
    assert!(
        back.says(&report, v.since, None),
        "what it was written from"
    );
    assert!(!back.says(&report, v.since + 1, None));
    // What the prompt asks, after a tab; an older value without one reads as asking
    // nothing.
    let asks = Verdict {
        asked: Some("Bash command · rm -rf build/\n".into()),
        ..v.clone()
    };
    assert!(asks.value().ends_with("now\tBash command · rm -rf build/"));
    let back = Verdict::parse(&asks.value()).unwrap();
    assert_eq!(back.asked.as_deref(), Some("Bash command · rm -rf build/"));
    assert_eq!(back.why, "Do you want to proceed? now");
    assert!(back.says(&report, v.since, Some("Bash command · rm -rf build/\n")));
    assert!(
        !back.says(&report, v.since, None),
        "a change of what it asks is news"
    );
    for bad in ["", "dead 5 screen x", "idle x screen", "idle 5 psychic x"] {
        assert_eq!(Verdict::parse(bad), None, "{bad}");
    }
}

#[test]
fn an_unknown_hook_word_says_nothing() {
    assert_eq!(hook_doing("Waiting"), Some(Doing::Waiting));
    assert_eq!(hook_doing("done"), Some(Doing::Idle));
    assert_eq!(hook_doing("compacting?"), None);
    let mut a = Attention::default();
    a.hook_says("compacting?", "", 0);
    assert_eq!(a.decide(), None);
}

#[test]
fn settle_reports_edges_only_and_dates_a_quiet_wait_from_when_the_output_stopped() {
    // tmux's output times are epoch seconds; the core's clock epoch milliseconds.
    const T: Millis = 1_780_000_000_000;
    let secs = |ms: Millis| ms / 1000;
    let mut a = Attention::default();
    a.saw_output(secs(T), T + 500);
    a.saw_output(secs(T + 1_000), T + 1_000);
    assert_eq!(
        a.settle(T + 1_000, None).flatten().map(|v| v.doing),
        Some(Doing::Working)
    );
    assert_eq!(
        a.settle(T + 1_200, None),
        None,
        "no edge while it stays working"
    );
    assert!(a.saw_output(secs(T + 1_000), T + 3_500), "quiet: look");
    assert_eq!(
        a.settle(T + 3_500, None),
        None,
        "held till its screen is read"
    );
    assert_eq!(a.state(), Some((Doing::Working, T + 1_000)));
    a.looked_at(
        Some(Report::new(
            Doing::Waiting,
            Told::Screen,
            "Do you want to proceed?",
        )),
        None,
    );
    assert_eq!(
        a.settle(T + 3_600, None).flatten().map(|v| v.doing),
        Some(Doing::Waiting)
    );
    assert_eq!(
        a.state(),
        Some((Doing::Waiting, T + 1_000)),
        "since its window's last output"
    );
    assert_eq!(a.waiting_for(), Some("Do you want to proceed?"));
    a.looked_at(
        Some(Report::new(
            Doing::Waiting,
            Told::Screen,
            "Enter to confirm · Esc to cancel",
        )),
        None,
    );
    assert_eq!(
        a.settle(T + 3_700, None),
        None,
        "another line, the same wait"
    );
    assert_eq!(a.state(), Some((Doing::Waiting, T + 1_000)));
    assert_eq!(a.waiting_for(), Some("Enter to confirm · Esc to cancel"));
    // Seen for the first time, quiet for an hour: waiting since then, not since now.
    let mut b = Attention::default();
    assert!(b.saw_output(secs(T), T + 3_600_000));
    b.looked_at(Some(Report::new(Doing::Waiting, Told::Screen, "?")), None);
    b.settle(T + 3_600_000, None);
    assert_eq!(b.state(), Some((Doing::Waiting, T)));
    // ... but not before the agent started: the window was there before it.
    let mut c = Attention::default();
    c.saw_output(secs(T), T + 3_600_000);
    c.looked_at(Some(Report::new(Doing::Idle, Told::Screen, "-")), None);
    c.settle(T + 3_600_000, Some(T + 600_000));
    assert_eq!(c.state(), Some((Doing::Idle, T + 600_000)));
}

#[test]
fn an_agent_first_seen_while_writing_is_looked_at_again_once_it_is_quiet() {
    let t = 1_800_000_000_000u64;
    let secs = t / 1000;
    let mut a = Attention::default();
    // Its window wrote this very second: looked at now (a one-shot status needs a
    // word), and again once quiet, for the rest of that second went unseen.
    assert!(a.saw_output(secs, t + 200));
    a.looked_at(
        Some(Report::new(
            Doing::Idle,
            Told::Screen,
            "no `esc` on its screen",
        )),
        None,
    );
    assert!(!a.saw_output(secs, t + 1_000));
    assert!(a.saw_output(secs, t + 2_300), "quiet now: looked at again");
    a.looked_at(
        Some(Report::new(
            Doing::Working,
            Told::Screen,
            "esc to interrupt",
        )),
        None,
    );
    assert!(!a.saw_output(secs, t + 5_000), "once");
    assert_eq!(a.decide().map(|v| v.doing), Some(Doing::Working));

    // Quiet for long when first seen: one look is enough.
    let mut b = Attention::default();
    assert!(b.saw_output(secs - 60, t));
    b.looked_at(None, None);
    assert!(!b.saw_output(secs - 60, t + 10_000));
}

#[test]
fn a_state_the_agents_own_file_tells_dates_from_when_the_file_says() {
    let t = 1_800_000_000_000u64;
    let file = |status: &str, at: Millis| AgentFile {
        status: status.into(),
        updated_at: Some(at),
        ..AgentFile::default()
    };
    let mut a = Attention::default();
    a.file_says(Some(7), file("busy", t - 14_000).report());
    a.settle(t, Some(t - 60_000));
    assert_eq!(a.state(), Some((Doing::Working, t - 14_000)));
    // Not before the agent began, not in the future.
    let mut b = Attention::default();
    b.file_says(Some(7), file("idle", t - 14_000).report());
    b.settle(t, Some(t - 5_000));
    assert_eq!(b.state(), Some((Doing::Idle, t - 5_000)));
    let mut c = Attention::default();
    c.file_says(Some(7), file("waiting", t + 9_000).report());
    c.settle(t, None);
    assert_eq!(c.state(), Some((Doing::Waiting, t)));
}

#[test]
fn a_prompt_says_what_it_asks_from_the_lines_above_its_question() {
    let boxed = "\
some earlier output
╭──────────────────────────────────────╮
│ Bash command                         │
│                                      │
│   rm -rf build/                      │
│   Remove the build directory         │
│                                      │
│ Do you want to proceed?              │
│ ❯ 1. Yes                             │
╰──────────────────────────────────────╯";
    assert_eq!(
        super::asked(boxed, "Do you want to proceed?").as_deref(),
        Some("Bash command · rm -rf build/ · Remove the build directory")
    );
    // A rule above the dialog, as newer versions draw it; nothing above the rule counts.
    let ruled =
        "old line\n────────────\n Edit file\n  src/main.rs\n\n Do you want to proceed?\n ❯ 1. Yes";
    assert_eq!(
        super::asked(ruled, "Do you want to proceed?").as_deref(),
        Some("Edit file · src/main.rs")
    );
    // Nothing above it, or no such question: nothing said.
    assert_eq!(
        super::asked(
            "╭──╮\n│ Do you want to proceed? │",
            "Do you want to proceed?"
        ),
        None
    );
    assert_eq!(super::asked("a\nb", "Do you want to proceed?"), None);
    // codex says it under its question, above its choices (its 80x24 screen as captured).
    let codex =
        include_str!("../../../../tests/fixtures/screens/codex-0.171.0-approval-exec-80x24.txt");
    assert_eq!(
        super::asked(codex, "Would you like to run the following command?").as_deref(),
        Some(
            "Environment: local · Reason: Touch a file outside the workspace · $ touch \
             /tmp/aw/codex/ran-it2"
        )
    );
}
