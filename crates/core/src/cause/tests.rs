use super::*;
use jiff::tz::TimeZone;

fn stop(exit: Exit, output: &str) -> Stop {
    stop_of("claude", exit, output, false)
}

fn stop_of(agent: &str, exit: Exit, output: &str, oom_killed: bool) -> Stop {
    let death = Death {
        exit,
        output,
        oom_killed,
        at: 1_800_000_000_000,
    };
    let no_session = vec!["No conversation found with session ID".to_string()];
    decide(
        &death,
        &CauseWords::builtin(agent),
        &no_session,
        &Policy::default(),
        &TimeZone::UTC,
        jiff::tz::db(),
    )
}

#[test]
fn each_cause_is_told_by_what_the_cli_printed() {
    let cases = [
        (
            Exit::Code(1),
            "You've hit your session limit · resets 3:45pm",
            Cause::UsageLimit,
        ),
        (
            Exit::Code(1),
            "Invalid API key · Please run /login",
            Cause::Auth,
        ),
        (
            Exit::Code(1),
            "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}",
            Cause::Overloaded,
        ),
        (
            Exit::Code(1),
            "API Error: Connection error. (ECONNREFUSED)",
            Cause::Network,
        ),
        (
            Exit::Code(134),
            "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
            Cause::OutOfMemory,
        ),
        (
            Exit::Code(1),
            "No conversation found with session ID: 0b0e…",
            Cause::ResumeRejected,
        ),
        (
            Exit::Code(1),
            "TypeError: Cannot read properties of undefined (reading 'x')\n    at foo (cli.js:1:2)",
            Cause::Crash,
        ),
        // As claude 2.1.197 prints them in -p mode (stdout, exit 1).
        (
            Exit::Code(1),
            "Invalid API key · Fix external API key",
            Cause::Auth,
        ),
        (
            Exit::Code(1),
            "Not logged in · Please run /login",
            Cause::Auth,
        ),
        (
            Exit::Code(1),
            "Failed to authenticate. API Error: 401 Invalid bearer token",
            Cause::Auth,
        ),
        (
            Exit::Code(1),
            "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.",
            Cause::Overloaded,
        ),
        (
            Exit::Code(1),
            "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later.",
            Cause::Overloaded,
        ),
        (
            Exit::Code(1),
            "API Error: Unable to connect to API (ConnectionRefused)",
            Cause::Network,
        ),
        (
            Exit::Code(1),
            "You've hit your weekly limit · resets Dec 7, 7:23pm (UTC)",
            Cause::UsageLimit,
        ),
        (Exit::Code(1), "bye", Cause::Unknown),
        (Exit::Code(143), "Invalid API key", Cause::Deliberate),
        (Exit::Signal(15), "", Cause::Deliberate),
        (
            Exit::Code(0),
            "JavaScript heap out of memory",
            Cause::Deliberate,
        ),
        (Exit::Signal(11), "", Cause::Crash),
        (Exit::Code(139), "", Cause::Crash),
        (Exit::Signal(9), "", Cause::Unknown),
        (Exit::Unknown, "", Cause::Unknown),
    ];
    for (exit, output, want) in cases {
        assert_eq!(stop(exit, output).cause, want, "{exit:?} {output:?}");
    }
}

#[test]
fn the_deciding_line_is_the_evidence() {
    let s = stop(
        Exit::Code(1),
        "  working…\n  Invalid API key · Please run /login  \n\n",
    );
    assert_eq!(
        s.evidence,
        vec![
            "process exited (code 1)".to_string(),
            "Invalid API key · Please run /login".to_string()
        ]
    );
    let d = stop(Exit::Code(143), "");
    assert_eq!(
        d.evidence,
        vec!["process exited (code 143): exit 143 (SIGTERM) is a deliberate stop".to_string()]
    );
}

#[test]
fn the_last_words_decide_between_causes() {
    // It retried through a connection error, then its key was refused: auth.
    let out = "API Error: Connection error.\nretrying…\nInvalid API key · Please run /login";
    assert_eq!(stop(Exit::Code(1), out).cause, Cause::Auth);
    // A stack trace under an older overload message is still the overload, not a crash:
    // only the causes' own words outrank a generic error line.
    let out = "API Error: 529 Overloaded\nError: giving up\n    at main (cli.js:9:9)";
    assert_eq!(stop(Exit::Code(1), out).cause, Cause::Overloaded);
}

#[test]
fn a_sigkill_is_out_of_memory_only_when_the_oom_killer_says_so() {
    assert_eq!(
        stop_of("claude", Exit::Signal(9), "", true).cause,
        Cause::OutOfMemory
    );
    assert_eq!(
        stop_of("claude", Exit::Code(137), "", true).cause,
        Cause::OutOfMemory
    );
    assert_eq!(
        stop_of("claude", Exit::Code(1), "", true).cause,
        Cause::Unknown
    );
}

#[test]
fn a_usage_limit_carries_its_reset() {
    // 1_800_000_000_000 is 2027-01-15T08:00:00Z.
    let s = stop(Exit::Code(1), "5-hour limit reached ∙ resets 3pm");
    assert_eq!(s.cause, Cause::UsageLimit);
    assert_eq!(s.resets_at, Some(1_800_000_000_000 + 7 * 3_600_000));
    assert_eq!(
        s.label(1_800_000_000_000, &TimeZone::UTC),
        "usage limit · resets 15:00"
    );
    // Seen days before its reset: the date says which day.
    assert_eq!(
        s.label(1_800_000_000_000 - 3 * 86_400_000, &TimeZone::UTC),
        "usage limit · resets Jan 15 15:00"
    );
    let none = stop(Exit::Code(1), "You've hit your usage limit");
    assert_eq!((none.cause, none.resets_at), (Cause::UsageLimit, None));
    assert_eq!(none.label(0, &TimeZone::UTC), "usage limit");
}

#[test]
fn codexs_own_words_are_known() {
    // codex 0.171 `exec` (stderr, exit 1).
    let limit = "ERROR: You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 9:38 PM.";
    let s = stop_of("codex", Exit::Code(1), limit, false);
    assert_eq!(s.cause, Cause::UsageLimit);
    assert!(s.resets_at.is_some());
    let cases = [
        (
            "ERROR: exceeded retry limit, last status: 429 Too Many Requests, request id: x",
            Cause::Overloaded,
        ),
        (
            "ERROR: unexpected status 401 Unauthorized: bad key, url: http://x",
            Cause::Auth,
        ),
        (
            "ERROR: We’re currently experiencing high demand, which may cause temporary errors.",
            Cause::Overloaded,
        ),
    ];
    for (out, want) in cases {
        assert_eq!(
            stop_of("codex", Exit::Code(1), out, false).cause,
            want,
            "{out}"
        );
    }
}

#[test]
fn kinds_have_their_own_words_and_the_config_adds_more() {
    let codex = "■ Your access token could not be refreshed. Please log out and sign in again.";
    assert_eq!(
        stop_of("codex", Exit::Code(1), codex, false).cause,
        Cause::Auth
    );
    assert_eq!(
        stop_of("aider", Exit::Code(1), codex, false).cause,
        Cause::Unknown
    );
    let more = CauseWords {
        network: vec!["proxy said no".into()],
        ..Default::default()
    };
    let words = CauseWords::builtin("aider").extended(&more);
    let death = Death {
        exit: Exit::Code(1),
        output: "the proxy said no",
        oom_killed: false,
        at: 0,
    };
    let s = decide(
        &death,
        &words,
        &[],
        &Policy::default(),
        &TimeZone::UTC,
        jiff::tz::db(),
    );
    assert_eq!(s.cause, Cause::Network);
}

#[test]
fn the_option_value_round_trips() {
    let s = Stop {
        cause: Cause::UsageLimit,
        evidence: vec!["exit".into(), "resets 3pm\tnow".into()],
        resets_at: Some(42),
    };
    let back = Stop::parse(&s.value()).unwrap();
    assert_eq!(back.cause, Cause::UsageLimit);
    assert_eq!(back.resets_at, Some(42));
    assert_eq!(back.evidence, vec!["resets 3pm now".to_string()]);
    assert_eq!(
        Stop::parse("auth - ").unwrap().evidence,
        Vec::<String>::new()
    );
    for junk in ["", "bogus - x", "auth x y"] {
        assert_eq!(Stop::parse(junk), None, "{junk}");
    }
}

#[test]
fn a_limit_on_a_live_screen_is_found() {
    let w = CauseWords::builtin("claude");
    let screen = "> hello\n  ⎿  You've hit your session limit · resets 3:45pm\n\n> \n";
    assert_eq!(
        w.limit_on(screen).as_deref(),
        Some("⎿  You've hit your session limit · resets 3:45pm")
    );
    assert_eq!(w.limit_on("> hello\n"), None);
}

#[test]
fn an_old_banner_above_a_reply_is_no_limit_now_and_a_wrapped_one_is_joined() {
    let w = CauseWords::builtin("claude");
    // Continued (by hand, by agentwatch): the banner is history.
    let went_on = "❯ hello\n  ⎿ \u{a0}You've hit your session limit · resets 7:55pm (UTC)\n\n❯ continue\n● Hi from stub.\n\n❯ \n";
    assert_eq!(w.limit_on(went_on), None);
    let working = "  ⎿ \u{a0}You've hit your session limit · resets 7:55pm (UTC)\n❯ continue\n✻ Cogitating… (2s · esc to interrupt)\n";
    assert_eq!(w.limit_on(working), None);
    // As claude 2.1.197 shows a limit: the turn's summary, the input box (empty, or with a
    // draft), the footer with its effort hint.
    let rule = "─".repeat(40);
    let at_limit = format!("❯ hello\n  ⎿ \u{a0}You've hit your session limit · resets 7:55pm (UTC)\n\n✻ Worked for 0s\n\n{rule}\n❯ \n{rule}\n  ? for shortcuts · ← for agents        ● high · /effort\n");
    assert!(w.limit_on(&at_limit).is_some());
    let draft = at_limit.replace("❯ \n", "❯ half a thought\n");
    assert!(w.limit_on(&draft).is_some());
    // Its menu and input box below it are still the limit.
    let menu = "  ⎿ \u{a0}You've hit your session limit · resets 7:55pm (UTC)\n\n❯ /rate-limit-options\n  What do you want to do?\n  ❯ 1. Stop and wait for limit to reset\n";
    assert!(w.limit_on(menu).is_some());
    // claude 2.1.197 in a 44-column pane.
    let narrow = "❯ hello\n  ⎿  You've hit your session limit · resets\n     8:12pm (UTC)\n\n❯ \n";
    let line = w.limit_on(narrow).unwrap();
    assert!(line.ends_with("· resets 8:12pm (UTC)"), "{line}");
}
