use ratatui::backend::TestBackend;
use ratatui::style::Color;
use ratatui::Terminal;

use super::{Look, Screen};
use crate::core::msg::{Action, Msg};
use crate::core::pane::{PaneId, ServerId};
use crate::core::state::State;
use crate::core::testkit::*;

/// A server with one of everything: running, crashed, killed, finished, unknown.
fn fleet(size: (u16, u16)) -> State {
    let mut s = state(size);
    // Cards, as the card tests expect; the list has its own tests.
    s.grid.mode = crate::core::layout::Mode::Cards;
    let mut o = obs(vec![
        pane(1, 0, "claude"),
        pane(2, 1, "codex"),
        pane(3, 2, "gemini"),
        pane(4, 3, "aider"),
        pane(5, 4, "claude"),
    ]);
    for (i, p) in o.listing.panes.iter_mut().enumerate() {
        p.window_name = ["api", "web", "docs", "infra", "night shift"][i].into();
        p.opts.session_id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into();
    }
    o.listing.panes[3].opts.session_id.clear();
    // The SIGKILLed gemini has spent its auto-resume budget already.
    o.listing.panes[2].opts.attempts = "3".into();
    for i in 1..=5 {
        o.started.insert(PaneId(i), T0 - 3_600_000 * u64::from(i));
    }
    // gemini's last run was short: no healthy refill.
    o.started.insert(PaneId(3), T0 + 30_000);
    s.update(Msg::Tick, T0);
    s.update(Msg::polled(Ok(o.clone())), T0);
    let mut panes = o.listing.panes.clone();
    panes[1] = dead(panes[1].clone(), Some(1), None);
    panes[2] = dead(panes[2].clone(), None, Some(9));
    panes[3] = dead(panes[3].clone(), Some(0), None);
    panes[4] = dead(panes[4].clone(), None, None);
    for p in &mut panes[1..] {
        p.dead_time = Some((T0 + 60_000) / 1000);
        p.opts.cwd = format!("/home/u/src/proj{}", p.id.0);
    }
    let mut o2 = o.clone();
    o2.listing.panes = panes;
    // Four polls: the lost status of pane 5 is kicked until it is given up as unknown.
    for k in 0..4 {
        let at = T0 + 60_000 + 500 * k;
        let fx = s.update(Msg::polled(Ok(o2.clone())), at);
        crate::core::testkit::answer_tails(&mut s, fx, "", at);
    }
    let screens = [
        (
            1,
            "Thinking about the migration…\n\n> Fixing tests in api/handlers.rs\n",
        ),
        (
            2,
            "running cargo test\nerror[E0432]: unresolved import\n\nPane is dead (status 1)\n",
        ),
        (3, "Loading context\n"),
        (4, "Applied edit to README.md\nCommit 3f2a1b\n"),
    ];
    s.update(
        Msg::Screens(Ok(screens
            .iter()
            .map(|(i, t)| (PaneId(*i), t.to_string()))
            .collect())),
        T0 + 61_000,
    );
    s
}

fn render(s: &State, w: u16, h: u16, look: &Look) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(Screen { state: s, look }, f.area()))
        .unwrap();
    t
}

/// The row of the buffer whose text contains `needle`, and the column where it starts.
fn find(t: &Terminal<TestBackend>, needle: &str) -> Option<(u16, u16)> {
    let buf = t.backend().buffer();
    for y in 0..buf.area.height {
        let row: String = (0..buf.area.width)
            .map(|x| buf[(x, y)].symbol().to_string())
            .collect();
        if let Some(byte) = row.find(needle) {
            return Some((row[..byte].chars().count() as u16, y));
        }
    }
    None
}

#[test]
fn grid_at_80x24() {
    let s = fleet((80, 24));
    insta::assert_snapshot!(render(&s, 80, 24, &Look::plain()).backend());
}

#[test]
fn grid_at_80x24_scrolled_to_the_crash() {
    let mut s = fleet((80, 24));
    s.update(Msg::Action(Action::Down), s.now);
    s.update(Msg::Action(Action::Down), s.now);
    insta::assert_snapshot!(render(&s, 80, 24, &Look::plain()).backend());
}

#[test]
fn grid_at_200x50() {
    let s = fleet((200, 50));
    insta::assert_snapshot!(render(&s, 200, 50, &Look::plain()).backend());
}

#[test]
fn help_overlay() {
    let mut s = fleet((80, 24));
    s.update(Msg::Action(Action::Help), s.now);
    insta::assert_snapshot!(render(&s, 80, 24, &Look::plain()).backend());
}

/// At 40x12 most of the help is below the fold: it scrolls, and says where it is.
#[test]
fn a_help_taller_than_the_terminal_scrolls_and_says_where_it_is() {
    let mut s = fleet((40, 12));
    s.update(Msg::Action(Action::Help), s.now);
    let bottom = |s: &State| {
        let t = render(s, 40, 12, &Look::plain());
        let text = format!("{:?}", t.backend());
        text.lines()
            .find(|l| l.contains("↓↑/jk scroll"))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no scroll line:\n{text}"))
    };
    assert!(bottom(&s).contains("lines 1-9 of "), "{}", bottom(&s));
    let drawn = s.fingerprint();
    s.update(Msg::Action(Action::Down), s.now);
    assert!(bottom(&s).contains("lines 2-10 of "), "{}", bottom(&s));
    assert_ne!(s.fingerprint(), drawn, "a scroll is drawn");
    // The end is the end, however far it is asked.
    s.update(Msg::Action(Action::Last), s.now);
    let last = bottom(&s);
    let total: usize = last
        .split(" of ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap();
    assert!(last.contains(&format!("-{total} of {total}")), "{last}");
    // Past the end is the end: one key up shows the line above, at once.
    s.update(Msg::Action(Action::Down), s.now);
    s.update(Msg::Action(Action::Up), s.now);
    assert!(
        bottom(&s).contains(&format!("-{} of {total}", total - 1)),
        "{}",
        bottom(&s)
    );
    // Opened again, from the top.
    s.update(Msg::Action(Action::Back), s.now);
    s.update(Msg::Action(Action::Help), s.now);
    assert!(bottom(&s).contains("lines 1-9 of "), "{}", bottom(&s));
}

#[test]
fn help_says_the_auto_resume_policy_of_the_live_config_for_the_selected_agent() {
    let mut config = crate::config::Config::default();
    config.auto_resume.backoff_secs = vec![5, 7];
    config.auto_resume.max_attempts = 2;
    let toml = "[agents.codex.auto_resume]\nmax_attempts = 9\n";
    let over: crate::config::Config = toml::from_str(toml).unwrap();
    config.agents = over.agents;
    let mut s = State::new(&config, false, "/tmp/s".into(), (80, 30));
    poll(&mut s, vec![pane(1, 0, "claude"), pane(2, 1, "codex")], T0);
    s.update(Msg::Action(Action::Help), T0);
    let t = render(&s, 80, 30, &Look::plain());
    assert!(find(&t, "after 5s, 7s, at most 2 times").is_some());
    // The codex card has a policy of its own.
    s.update(Msg::Action(Action::Help), T0);
    s.update(Msg::Action(Action::Down), T0);
    s.update(Msg::Action(Action::Help), T0);
    let t = render(&s, 80, 30, &Look::plain());
    assert!(find(&t, "after 5s, 7s, at most 9 times").is_some());
}

#[test]
fn the_crash_banner_uses_the_alarm_style_and_a_finished_card_does_not() {
    let s = fleet((200, 50));
    let t = render(&s, 200, 50, &Look::plain());
    let buf = t.backend().buffer();
    for crash in [
        "process exited (code 1)",
        "killed by signal 9 (SIGKILL)",
        "process exited (code unknown)",
    ] {
        let (x, y) = find(&t, crash).unwrap_or_else(|| panic!("{crash} not on screen"));
        assert_eq!(buf[(x, y)].bg, Color::Red, "{crash}");
        assert_eq!(buf[(x, y)].fg, Color::White, "{crash}");
    }
    let (x, y) = find(&t, "process exited (code 0)").unwrap();
    assert_ne!(buf[(x, y)].bg, Color::Red);
    assert_eq!(buf[(x, y)].fg, Color::Green);
    // The header is alarming while an agent is dead.
    assert_eq!(buf[(0, 0)].bg, Color::Red);
}

#[test]
fn no_color_keeps_the_banner_loud_without_colour() {
    let s = fleet((200, 50));
    let look = Look {
        theme: super::theme::Theme::dark(false),
        ..Look::plain()
    };
    let t = render(&s, 200, 50, &look);
    let buf = t.backend().buffer();
    let (x, y) = find(&t, "process exited (code 1)").unwrap();
    assert_eq!(buf[(x, y)].bg, Color::Reset);
    assert!(buf[(x, y)]
        .modifier
        .contains(ratatui::style::Modifier::REVERSED));
    for y in 0..50 {
        for x in 0..200 {
            assert!(matches!(buf[(x, y)].fg, Color::Reset), "colour at {x},{y}");
        }
    }
}

#[test]
fn the_header_is_calm_when_nothing_is_dead() {
    let mut s = state((80, 24));
    poll(&mut s, vec![pane(1, 0, "claude")], T0);
    let t = render(&s, 80, 24, &Look::plain());
    assert_ne!(t.backend().buffer()[(0, 0)].bg, Color::Red);
}

#[test]
fn an_empty_server_says_how_to_start() {
    let mut s = state((80, 24));
    poll(&mut s, vec![pane(1, 0, "vim")], T0);
    insta::assert_snapshot!(render(&s, 80, 24, &Look::plain()).backend());
}

#[test]
fn tiny_and_odd_sizes_render_without_panicking() {
    let s = fleet((20, 5));
    for (w, h) in [(20, 5), (1, 1), (0, 0), (10, 2), (300, 3), (33, 100)] {
        let mut s = s.clone();
        s.size = (w, h);
        let _ = render(&s, w.max(1), h.max(1), &Look::plain());
    }
    insta::assert_snapshot!(render(&s, 20, 5, &Look::plain()).backend());
}

mod peek {
    use super::*;
    use crate::core::input::{Key, KeyCode};
    use crate::core::peek_model::PeekText;
    use std::sync::Arc;

    fn output() -> Arc<PeekText> {
        let mut out = String::new();
        for i in 1..=200 {
            out.push_str(&format!("\x1b[3{}mline {i}\x1b[0m plain tail\n", 1 + i % 6));
        }
        out.push_str("\x1b[1;31mError: rate limited, giving up\x1b[0m\n");
        Arc::new(crate::adapters::ansi::parse(out.as_bytes()))
    }

    fn peeking() -> State {
        let mut s = fleet((80, 24));
        s.update(Msg::Action(Action::Down), s.now);
        s.update(Msg::Action(Action::Peek), s.now);
        s.update(
            Msg::Output {
                pane: PaneId(2),
                result: Ok(output()),
            },
            s.now,
        );
        s
    }

    fn key(s: &mut State, c: KeyCode) {
        s.update(Msg::Key(Key::new(c)), s.now);
    }

    #[test]
    fn peek_opens_at_the_bottom_with_the_last_words_in_colour() {
        let s = peeking();
        let t = render(&s, 80, 24, &Look::plain());
        insta::assert_snapshot!(t.backend());
        let (x, y) = find(&t, "Error: rate limited").unwrap();
        assert_eq!(y, 22, "the last line sits just above the footer");
        assert_eq!(t.backend().buffer()[(x, y)].fg, Color::Red);
        let (x, y) = find(&t, "line 200").unwrap();
        assert_eq!(
            t.backend().buffer()[(x, y)].fg,
            Color::Yellow,
            "SGR 33 kept"
        );
    }

    #[test]
    fn peek_top_after_g() {
        let mut s = peeking();
        key(&mut s, KeyCode::Char('g'));
        let t = render(&s, 80, 24, &Look::plain());
        insta::assert_snapshot!(t.backend());
        assert_eq!(find(&t, "line 1 ").map(|p| p.1), Some(1));
    }

    #[test]
    fn peek_search_highlights_the_hit() {
        let mut s = peeking();
        key(&mut s, KeyCode::Char('g'));
        key(&mut s, KeyCode::Char('/'));
        for c in "line 15".chars() {
            key(&mut s, KeyCode::Char(c));
        }
        let typing = render(&s, 80, 24, &Look::plain());
        assert!(
            find(&typing, "/line 15").is_some(),
            "the search is shown as typed"
        );
        key(&mut s, KeyCode::Enter);
        key(&mut s, KeyCode::Char('n'));
        let t = render(&s, 80, 24, &Look::plain());
        insta::assert_snapshot!(t.backend());
        let (x, y) = find(&t, "line 150").unwrap();
        let cell = &t.backend().buffer()[(x, y)];
        assert!(
            cell.modifier.contains(ratatui::style::Modifier::REVERSED),
            "the hit is highlighted"
        );
        assert!(
            cell.modifier.contains(ratatui::style::Modifier::BOLD),
            "the current hit is bold"
        );
    }

    #[test]
    fn esc_and_q_go_back_to_the_grid_and_ctrl_c_quits() {
        let mut s = peeking();
        key(&mut s, KeyCode::Esc);
        assert!(s.peek.is_none());
        s.update(Msg::Action(Action::Peek), s.now);
        key(&mut s, KeyCode::Char('q'));
        assert!(s.peek.is_none() && !s.quit);
    }
}

#[test]
fn an_older_record_asked_for_before_the_records_are_read_is_shown_when_they_are() {
    let mut s = fleet((80, 24));
    s.update(Msg::Action(Action::Down), s.now);
    s.update(Msg::Action(Action::Peek), s.now);
    s.update(Msg::Action(Action::Older), s.now);
    let record = crate::core::crash::CrashRecord {
        agent: "codex".into(),
        pane: "%2".into(),
        target: "work:1.0".into(),
        session_id: None,
        cwd: "/w".into(),
        exit: "process exited (code 1)".into(),
        died_at: Some(T0),
        started_at: None,
        uptime_ms: None,
        saved_at: T0,
        attempt: None,
        host: None,
        cause: None,
        evidence: Vec::new(),
        output: "the old last words\n".into(),
    };
    s.update(
        Msg::Records {
            pane: PaneId(2),
            records: vec![shown(record)],
        },
        s.now,
    );
    let p = s.peek.as_ref().unwrap();
    assert_eq!(p.source, crate::core::peek_model::Shown::Record(0));
    assert_eq!(p.text.as_ref().unwrap().plain, ["the old last words"]);
    // The live capture arriving later does not take the screen back.
    s.update(
        Msg::Output {
            pane: PaneId(2),
            result: Ok(std::sync::Arc::new(crate::adapters::ansi::parse(b"live\n"))),
        },
        s.now,
    );
    assert_eq!(
        s.peek.as_ref().unwrap().text.as_ref().unwrap().plain,
        ["the old last words"]
    );
}

#[test]
fn beside_a_daemon_the_header_names_it_and_a_gave_up_card_tells_what_happened_meanwhile() {
    let mut s = fleet((120, 30));
    s.supervision.supervising = false;
    s.supervision.supervisor = Some(crate::core::msg::Supervisor {
        pid: 12345,
        daemon: true,
        since: T0,
    });
    s.cards[2].notice = Some(crate::core::card::Notice::story(
        "died 4 times before this dashboard opened, last 03:57 (SIGKILL); auto-resume gave up 03:57",
        None,
    ));
    let t = render(&s, 120, 30, &Look::plain());
    let screen: String = format!("{:?}", t.backend());
    assert!(find(&t, "supervised by daemon 12345").is_some(), "{screen}");
    assert!(
        find(&t, "auto-resume gave up 03:57: press r to relaunch").is_some(),
        "{screen}"
    );
    insta::assert_snapshot!(t.backend());
}

#[test]
fn a_dashboard_that_took_over_from_a_hung_daemon_says_so_in_alarm_even_at_80_columns() {
    let mut s = fleet((160, 30));
    let daemon = crate::core::msg::Supervisor {
        pid: 4242,
        daemon: true,
        since: T0 - 60_000,
    };
    s.update(
        Msg::Elected(crate::core::msg::Election {
            mine: true,
            by: None,
            took_over: Some((daemon, s.now - 12_000)),
        }),
        s.now,
    );
    let t = render(&s, 160, 30, &Look::plain());
    assert!(
        find(
            &t,
            "daemon 4242 stopped answering 12s ago; supervising here"
        )
        .is_some(),
        "{:?}",
        t.backend()
    );
    // At 80 columns, whole (the counts give up their details for it).
    let t = render(&s, 80, 24, &Look::plain());
    assert!(
        find(&t, "daemon 4242 not answering; supervising here").is_some(),
        "{:?}",
        t.backend()
    );
    // Once another instance holds the claim again (the daemon came back), it is not said.
    s.update(
        Msg::Elected(crate::core::msg::Election {
            mine: false,
            by: Some(daemon),
            took_over: None,
        }),
        s.now,
    );
    let t = render(&s, 160, 30, &Look::plain());
    assert!(find(&t, "stopped answering").is_none());
}

#[test]
fn a_held_resume_says_why_over_an_earlier_attempts_notice() {
    use crate::core::card::{Auto, Notice};
    use crate::core::supervisor::Hold;
    let mut s = fleet((80, 24));
    let i = s.cards.iter().position(|c| c.life.is_dead()).unwrap();
    let id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
    let now = s.now;
    s.cards[i].notice = Some(Notice::info("resumed (attempt 1/3)", Some(now + 30_000)));
    for (hold, words) in [
        (
            Hold::NoSession(id.into()),
            "resume failed: claude has no session 0e6a1c1e: R starts a fresh session".to_string(),
        ),
        (
            Hold::Refused("directory /w/gone no longer exists".into()),
            "not auto-resumed: directory /w/gone no longer exists".to_string(),
        ),
    ] {
        s.cards[i].agent = Some("claude".into());
        s.cards[i].auto = Auto::Held(hold);
        let t = render(&s, 120, 40, &Look::plain());
        assert!(find(&t, &words).is_some(), "{words}\n{:?}", t.backend());
        assert!(find(&t, "resumed (attempt 1/3)").is_none());
    }
}

/// A key pressed on a held card (x, r refused) answers on it: the hold's words come back
/// when the answer's time is over. Before, the hold hid it and the key seemed to do nothing.
#[test]
fn the_answer_to_a_key_shows_over_a_holds_words_while_it_lasts() {
    use crate::core::card::{Auto, Notice};
    use crate::core::supervisor::Hold;
    let mut s = fleet((80, 24));
    let i = s.cards.iter().position(|c| c.life.is_dead()).unwrap();
    let now = s.now;
    s.cards[i].agent = Some("claude".into());
    s.cards[i].auto = Auto::Held(Hold::GaveUp {
        attempts: 3,
        hourly: false,
    });
    let held = "auto-resume gave up after 3 attempts: press r to relaunch";
    let answer = "press x again to close %9 and its retained output";
    s.cards[i].notice = Some(Notice::alarm(answer, Some(now + 3_000)).answering());
    let t = render(&s, 120, 40, &Look::plain());
    assert!(find(&t, answer).is_some(), "{:?}", t.backend());
    assert!(find(&t, held).is_none());
    s.now = now + 3_000;
    let t = render(&s, 120, 40, &Look::plain());
    assert!(find(&t, held).is_some(), "{:?}", t.backend());
    assert!(find(&t, answer).is_none());
}

#[test]
fn a_malformed_recorded_id_is_said_on_the_card_before_r_is_pressed() {
    use crate::core::card::Auto;
    let mut s = fleet((80, 24));
    let i = s.cards.iter().position(|c| c.life.is_dead()).unwrap();
    s.cards[i].agent = Some("claude".into());
    s.cards[i].pane.opts.session_id = "`id`".into();
    s.cards[i].auto = Auto::Idle;
    s.cards[i].notice = None;
    let t = render(&s, 200, 50, &Look::plain());
    let words = "session id \"`id`\" does not look like a claude id";
    assert!(find(&t, words).is_some(), "{:?}", t.backend());
}

#[test]
fn skipped_pane_records_are_said_in_the_header() {
    let mut s = fleet((120, 30));
    s.servers.local_mut().malformed = 2;
    let t = render(&s, 120, 30, &Look::plain());
    assert!(find(&t, "2 unreadable pane records skipped (see log)").is_some());
}

#[test]
fn a_journal_that_cannot_be_written_is_said_in_the_header_until_a_write_succeeds() {
    let mut s = fleet((160, 30));
    let e = crate::core::errors::StoreError {
        what: "journal",
        path: "/s/journal.jsonl".into(),
        reason: "No space left on device (os error 28)".into(),
    };
    s.update(
        Msg::Stored {
            what: "journal",
            result: Err(e),
        },
        s.now,
    );
    let t = render(&s, 160, 30, &Look::plain());
    assert!(
        find(
            &t,
            "journal /s/journal.jsonl not written: No space left on device"
        )
        .is_some(),
        "{:?}",
        t.backend()
    );
    // At 80 columns: what failed and why, before anything else the header says.
    let t = render(&s, 80, 24, &Look::plain());
    assert!(
        find(&t, "journal not written: No space left").is_some(),
        "{:?}",
        t.backend()
    );
    // Another file's failure is its own, and a journal write that succeeds clears only it.
    let roster = crate::core::errors::StoreError {
        what: "roster",
        path: "/s/roster.json".into(),
        reason: "Is a directory (os error 21)".into(),
    };
    s.update(
        Msg::Stored {
            what: "roster",
            result: Err(roster),
        },
        s.now,
    );
    s.update(
        Msg::Stored {
            what: "journal",
            result: Ok(()),
        },
        s.now,
    );
    let t = render(&s, 160, 30, &Look::plain());
    assert!(find(&t, "journal").is_none(), "{:?}", t.backend());
    assert!(find(&t, "roster /s/roster.json not written").is_some());
}

/// Every view, as a user sees it at 80x24 and at 40x12 (issue 18): the grid's cards and
/// list, the filter typed and kept, the empty screens, help, peek (live and a crash
/// record) and the lost-server screen.
mod views {
    use super::*;
    use crate::core::input::{Button, Key, KeyCode, Mouse, MouseKind};
    use crate::core::layout::Mode;
    use crate::core::roster::{LostAgent, Roster};
    use std::sync::Arc;

    const SIZES: [(u16, u16); 2] = [(80, 24), (40, 12)];

    fn key(s: &mut State, c: KeyCode) {
        s.update(Msg::Key(Key::new(c)), s.now);
    }

    fn typed(s: &mut State, text: &str) {
        for c in text.chars() {
            key(s, KeyCode::Char(c));
        }
    }

    /// Twelve agents of every kind and state, with a Japanese window name and a long one.
    pub fn twelve(size: (u16, u16)) -> State {
        let mut s = state(size);
        let kinds = [
            "claude", "codex", "gemini", "opencode", "aider", "amp", "claude", "codex", "claude",
            "gemini", "claude", "codex",
        ];
        let names = [
            "api",
            "web",
            "文書の整理と翻訳",
            "infra",
            "docs",
            "night shift",
            "migrations-and-a-very-long-window-name",
            "billing",
            "search",
            "mobile",
            "auth",
            "etl",
        ];
        let panes: Vec<_> = (1..=12u32)
            .map(|i| {
                let k = (i - 1) as usize;
                let mut p = pane(i, i, kinds[k]);
                p.window_name = names[k].into();
                p.current_path = format!(
                    "/home/u/src/{}",
                    [
                        "api", "web", "docs-jp", "infra", "docs", "nightly", "db", "billing",
                        "search", "mobile", "auth", "etl"
                    ][k]
                );
                if i % 3 != 0 {
                    p.opts.session_id = format!("{i:08x}-4f7b-4a43-9d55-3f1f1b7f0a11");
                }
                p
            })
            .collect();
        let mut o = obs(panes.clone());
        for i in 1..=12 {
            o.started.insert(PaneId(i), T0 - 600_000 * u64::from(i));
        }
        s.update(Msg::Tick, T0);
        s.update(Msg::polled(Ok(o.clone())), T0);
        let mut o2 = o.clone();
        o2.listing.panes[1] = dead(panes[1].clone(), Some(1), None);
        o2.listing.panes[4] = dead(panes[4].clone(), None, Some(9));
        o2.listing.panes[7] = dead(panes[7].clone(), Some(0), None);
        for p in &mut o2.listing.panes {
            p.dead_time = Some((T0 + 60_000) / 1000);
        }
        let fx = s.update(Msg::polled(Ok(o2)), T0 + 60_000);
        crate::core::testkit::answer_tails(&mut s, fx, "", T0 + 60_000);
        s.update(
            Msg::Screens(Ok((1..=12u32)
                .map(|i| {
                    (
                        PaneId(i),
                        format!("step {i} of the plan: editing src/{i}.rs\n"),
                    )
                })
                .collect())),
            T0 + 61_000,
        );
        s
    }

    fn lost(size: (u16, u16)) -> State {
        let mut s = state(size);
        s.update(Msg::Tick, T0);
        let agents = (1..=3)
            .map(|i| LostAgent {
                agent: "claude".into(),
                pane: format!("%{i}"),
                target: format!("work:{i}.0"),
                session: "work".into(),
                window_name: format!("w{i}"),
                session_id: Some(format!("{i:08x}-4f7b-4a43-9d55-3f1f1b7f0a11")),
                cwd: format!("/home/u/src/proj{i}"),
                args: Vec::new(),
                state: "running".into(),
            })
            .collect();
        s.update(
            Msg::RosterLoaded(Some(Roster {
                socket: s.servers.socket.clone(),
                lost_at: T0 - 60_000,
                agents,
            })),
            T0,
        );
        s
    }

    fn peeking(size: (u16, u16), older: bool) -> State {
        let mut s = twelve(size);
        // The dead codex.
        s.update(Msg::Action(Action::NextNeed), s.now);
        s.update(Msg::Action(Action::Peek), s.now);
        let pane = s.peek.as_ref().map(|p| p.pane).unwrap_or(PaneId(0));
        s.update(
            Msg::Output {
                pane,
                result: Ok(Arc::new(crate::adapters::ansi::parse(
                    b"\x1b[1mcargo test\x1b[0m\nerror[E0432]: unresolved import\n\x1b[31mError: rate limited\x1b[0m\n",
                ))),
            },
            s.now,
        );
        let record = crate::core::crash::CrashRecord {
            agent: "codex".into(),
            pane: pane.to_string(),
            target: "work:2.0".into(),
            session_id: None,
            cwd: "/home/u/src/web".into(),
            exit: "killed by signal 9 (SIGKILL)".into(),
            died_at: Some(T0 - 3_600_000),
            started_at: None,
            uptime_ms: None,
            saved_at: T0,
            attempt: Some(1),
            host: None,
            cause: None,
            evidence: Vec::new(),
            output: "an older run\nit was killed\n".into(),
        };
        s.update(
            Msg::Records {
                pane,
                records: vec![shown(record)],
            },
            s.now,
        );
        if older {
            s.update(Msg::Action(Action::Older), s.now);
        }
        s
    }

    fn all_views(size: (u16, u16)) -> Vec<(&'static str, State)> {
        let mut v = Vec::new();
        v.push(("cards", {
            let mut s = fleet(size);
            s.update(Msg::Tick, s.now);
            s
        }));
        v.push(("list", twelve(size)));
        v.push(("filter_typing", {
            let mut s = twelve(size);
            key(&mut s, KeyCode::Char('/'));
            typed(&mut s, "cod");
            s
        }));
        v.push(("filter_kept", {
            let mut s = twelve(size);
            key(&mut s, KeyCode::Char('/'));
            typed(&mut s, "api");
            key(&mut s, KeyCode::Enter);
            s
        }));
        v.push(("filter_nothing", {
            let mut s = twelve(size);
            key(&mut s, KeyCode::Char('/'));
            typed(&mut s, "zzz");
            key(&mut s, KeyCode::Enter);
            s
        }));
        v.push(("no_agents", {
            let mut s = state(size);
            poll(&mut s, vec![pane(1, 0, "bash")], T0);
            s
        }));
        v.push(("no_server", {
            let mut s = state(size);
            s.update(Msg::Tick, T0);
            s.update(
                Msg::polled(Err(crate::core::errors::TmuxError::NoServer {
                    socket: s.servers.socket.clone().into(),
                })),
                T0,
            );
            s
        }));
        v.push(("help", {
            let mut s = twelve(size);
            key(&mut s, KeyCode::Char('?'));
            s
        }));
        v.push(("peek_live", peeking(size, false)));
        v.push(("peek_record", peeking(size, true)));
        v.push(("peek_search", {
            let mut s = peeking(size, false);
            key(&mut s, KeyCode::Char('/'));
            typed(&mut s, "error");
            s
        }));
        v.push(("peek_found", {
            let mut s = peeking(size, false);
            key(&mut s, KeyCode::Char('/'));
            typed(&mut s, "error");
            key(&mut s, KeyCode::Enter);
            s
        }));
        v.push(("peek_help", {
            let mut s = peeking(size, true);
            key(&mut s, KeyCode::Char('?'));
            s
        }));
        v.push(("start", {
            let mut s = twelve(size);
            key(&mut s, KeyCode::Char('s'));
            key(&mut s, KeyCode::Tab);
            key(&mut s, KeyCode::Tab);
            typed(&mut s, "review");
            s
        }));
        v.push(("start_refused", {
            let mut s = twelve(size);
            key(&mut s, KeyCode::Char('s'));
            key(&mut s, KeyCode::Enter);
            s.update(
                Msg::Started(Err("claude not found on PATH: install claude, or set start = [\"/path/to/claude\", ...] in [agents.claude]".into())),
                s.now,
            );
            s
        }));
        v.push(("lost", lost(size)));
        v.push(("lost_unrecreatable", {
            // No agent has a session id: R is not offered.
            let mut s = lost(size);
            if let Some(r) = s.lost.roster.as_mut() {
                for a in &mut r.agents {
                    a.session_id = None;
                }
            }
            s
        }));
        v.push(("lost_recreated", {
            // All three back: said as done, not as "0 agents lost".
            let mut s = lost(size);
            let results = (1..=3)
                .map(|i| (format!("work:{i}.0"), Ok(format!("%{}", 10 + i))))
                .collect();
            s.update(Msg::Recreated(results), T0 + 1_000);
            s
        }));
        v
    }

    /// The columns a row of the screen takes in a terminal: a wide character is drawn in
    /// two cells, and one that starts in the last cell would spill over the edge.
    fn overflow(t: &Terminal<TestBackend>) -> Option<String> {
        let buf = t.backend().buffer();
        for y in 0..buf.area.height {
            let mut x = 0;
            while x < buf.area.width {
                let sym = buf[(x, y)].symbol();
                let w = crate::core::text::width(sym).max(1) as u16;
                if x + w > buf.area.width {
                    return Some(format!("row {y}: {sym:?} at column {x} spills over"));
                }
                x += w;
            }
        }
        None
    }

    /// A row as the terminal shows it: a wide character once, not with the cell it covers.
    fn row(t: &Terminal<TestBackend>, y: u16) -> String {
        let buf = t.backend().buffer();
        let mut out = String::new();
        let mut x = 0;
        while x < buf.area.width {
            let sym = buf[(x, y)].symbol();
            out.push_str(sym);
            x += crate::core::text::width(sym).max(1) as u16;
        }
        out
    }

    #[test]
    fn every_view_at_80x24_and_40x12() {
        for (w, h) in SIZES {
            for (name, mut s) in all_views((w, h)) {
                s.size = (w, h);
                s.update(
                    Msg::Resize {
                        width: w,
                        height: h,
                    },
                    s.now,
                );
                let t = render(&s, w, h, &Look::plain());
                assert_eq!(overflow(&t), None, "{name} at {w}x{h}");
                insta::assert_snapshot!(format!("{name}_{w}x{h}"), t.backend());
            }
        }
    }

    #[test]
    fn twelve_agents_at_80x24_are_all_on_one_screen() {
        let s = twelve((80, 24));
        assert!(s.geometry().list, "the list, since twelve cards do not fit");
        let t = render(&s, 80, 24, &Look::plain());
        for i in 1..=12 {
            assert!(
                find(&t, &format!("work:{i}.0 ")).is_some(),
                "agent {i} is shown"
            );
        }
        // The deaths in their short words, and the selected one's banner in full.
        assert!(find(&t, "✖ exit 1").is_some());
        assert!(find(&t, "✖ SIGKILL").is_some());
        assert!(find(&t, "✔ finished").is_some());
        // v: cards, two a screen, and back.
        let mut s = s;
        key(&mut s, KeyCode::Char('v'));
        assert!(!s.geometry().list);
        assert_eq!(s.page().len(), 2);
        key(&mut s, KeyCode::Char('v'));
        assert!(s.geometry().list);
    }

    #[test]
    fn slash_api_leaves_the_matching_agent_and_esc_brings_all_back() {
        let mut s = twelve((80, 24));
        key(&mut s, KeyCode::Char('/'));
        typed(&mut s, "api");
        assert!(s.grid.filter_typing);
        let names = |s: &State| -> Vec<String> {
            s.grid
                .shown
                .iter()
                .map(|&i| s.cards[i].pane.window_name.clone())
                .collect()
        };
        assert_eq!(names(&s), vec!["api"]);
        assert_eq!(
            s.grid.selected,
            Some(PaneId(1)),
            "the selection follows the filter"
        );
        // Enter keeps it and gives the keys back: j moves, q would quit.
        key(&mut s, KeyCode::Enter);
        assert!(!s.grid.filter_typing);
        assert_eq!(names(&s), vec!["api"]);
        let t = render(&s, 80, 24, &Look::plain());
        assert!(find(&t, "1 of 12 shown").is_some());
        assert!(
            find(&t, "dead off screen or filtered out").is_some(),
            "a death the filter hides is said"
        );
        key(&mut s, KeyCode::Esc);
        assert_eq!(s.grid.shown.len(), 12);
        // State words and several words at once.
        key(&mut s, KeyCode::Char('/'));
        typed(&mut s, "dead");
        assert_eq!(
            names(&s),
            vec!["web", "docs"],
            "a finished agent is not dead"
        );
        key(&mut s, KeyCode::Backspace);
        key(&mut s, KeyCode::Backspace);
        key(&mut s, KeyCode::Backspace);
        key(&mut s, KeyCode::Backspace);
        typed(&mut s, "codex web");
        assert_eq!(names(&s), vec!["web"]);
        key(&mut s, KeyCode::Esc);
        assert!(!s.grid.filter_typing && s.grid.filter.is_empty() && s.grid.shown.len() == 12);
    }

    /// Two local agents and two on the host `box`, one of them dead.
    fn with_a_host(size: (u16, u16)) -> State {
        let mut config = crate::config::Config::default();
        config.hosts = vec![crate::config::Host::ad_hoc("box")];
        let mut s = State::new(&config, false, "/tmp/tmux-1000/default".into(), size);
        s.grid.order = crate::config::Order::Tmux;
        s.update(Msg::Tick, T0);
        s.update(
            Msg::polled(Ok(obs(vec![pane(1, 1, "claude"), pane(2, 2, "codex")]))),
            T0,
        );
        let mut there = vec![pane(1, 1, "claude"), pane(2, 2, "gemini")];
        there[1] = dead(there[1].clone(), Some(1), None);
        there[1].dead_time = Some(T0 / 1000);
        for p in &mut there {
            p.id = PaneId::on(ServerId::Host(0), p.id.0);
        }
        let mut o = obs(there);
        o.listing.server_pid = None;
        s.update(
            Msg::Polled {
                server: ServerId::Host(0),
                result: Ok(Box::new(o)),
            },
            T0 + 1_000,
        );
        s
    }

    #[test]
    fn a_hosts_agents_are_named_by_it_and_its_silence_is_bannered() {
        let s = with_a_host((80, 24));
        assert!(s.geometry().list);
        let t = render(&s, 80, 24, &Look::plain());
        insta::assert_snapshot!("hosts_list_80x24", t.backend());
        assert!(find(&t, " host ").is_some(), "a host column");
        assert!(find(&t, "box ").is_some() && find(&t, "local ").is_some());
        let mut cards = s.clone();
        cards.grid.mode = Mode::Cards;
        cards.update(Msg::Tick, cards.now);
        let t = render(&cards, 80, 24, &Look::plain());
        assert!(find(&t, "claude · work:1.0 w1 · %1").is_some());
        // The host gone: its banner, its cards stale, the local ones not.
        let mut down = s.clone();
        down.update(Msg::Tick, T0 + 2_000);
        down.update(
            Msg::Polled {
                server: ServerId::Host(0),
                result: Err(crate::core::errors::TmuxError::Unreachable {
                    host: "box".into(),
                    detail: "Connection refused".into(),
                }),
            },
            T0 + 2_000,
        );
        down.grid.mode = Mode::Cards;
        down.update(
            Msg::Resize {
                width: 120,
                height: 50,
            },
            T0 + 2_000,
        );
        let t = render(&down, 120, 50, &Look::plain());
        insta::assert_snapshot!("hosts_down_120x50", t.backend());
        assert!(find(&t, "box: unreachable since").is_some());
        assert!(find(&t, "claude · box work:1.0").is_some());
        let stale = (0..50)
            .map(|y| row(&t, y))
            .filter(|l| l.contains("(stale)"))
            .count();
        assert_eq!(stale, 2, "the host's two cards, not the local ones");
        // `/box` leaves the host's agents.
        let mut f = s.clone();
        key(&mut f, KeyCode::Char('/'));
        typed(&mut f, "box");
        assert_eq!(f.grid.shown.len(), 2);
    }

    #[test]
    fn the_filter_matches_the_words_on_screen() {
        let mut s = twelve((80, 24));
        s.grid.home = Some("/home/u".into());
        let shown = |s: &mut State, f: &str| -> Vec<u32> {
            s.grid.filter = f.into();
            s.update(Msg::Tick, s.now);
            s.grid.shown.iter().map(|&i| s.cards[i].pane.id.0).collect()
        };
        // Every live agent is running, as the header counts them; the dead are not.
        assert_eq!(shown(&mut s, "running"), vec![1, 3, 4, 6, 7, 9, 10, 11, 12]);
        assert_eq!(shown(&mut s, "sigkill"), vec![5]);
        assert_eq!(shown(&mut s, "dead"), vec![2, 5]);
        assert_eq!(shown(&mut s, "dead exit"), vec![2]);
        assert_eq!(shown(&mut s, "finished"), vec![8]);
        // The directory as shown, and the agent's session id as shown.
        assert_eq!(shown(&mut s, "~/src/api"), vec![1]);
        assert_eq!(shown(&mut s, "0000000b"), vec![11]);
        assert_eq!(shown(&mut s, "文書"), vec![3]);
        assert_eq!(
            shown(&mut s, "CODEX"),
            vec![2, 8, 12],
            "case does not matter"
        );
    }

    #[test]
    fn a_chosen_card_the_filter_hid_is_chosen_again_when_it_clears() {
        let mut s = twelve((80, 24));
        for _ in 0..3 {
            key(&mut s, KeyCode::Down);
        }
        assert_eq!(s.grid.selected, Some(PaneId(4)));
        key(&mut s, KeyCode::Char('/'));
        typed(&mut s, "api");
        assert_eq!(s.grid.selected, Some(PaneId(1)));
        key(&mut s, KeyCode::Esc);
        assert_eq!(s.grid.selected, Some(PaneId(4)));
        // Chosen anew under the filter: that choice stays.
        key(&mut s, KeyCode::Char('/'));
        typed(&mut s, "codex");
        key(&mut s, KeyCode::Enter);
        key(&mut s, KeyCode::Char('j'));
        assert_eq!(s.grid.selected, Some(PaneId(8)));
        key(&mut s, KeyCode::Esc);
        assert_eq!(s.grid.selected, Some(PaneId(8)));
        // Acted on under the filter (here x on a live one): that card is the choice too,
        // so Esc and then Enter go to the card just worked on.
        key(&mut s, KeyCode::Char('/'));
        typed(&mut s, "api");
        key(&mut s, KeyCode::Enter);
        assert_eq!(s.grid.selected, Some(PaneId(1)));
        key(&mut s, KeyCode::Char('x'));
        key(&mut s, KeyCode::Esc);
        assert_eq!(s.grid.selected, Some(PaneId(1)));
    }

    #[test]
    fn s_starts_an_agent_like_the_selected_one_and_selects_it_once_it_shows() {
        let mut s = twelve((80, 24));
        let sel = s.selected_index().unwrap();
        let (kind, dir) = (
            s.cards[sel].agent.clone().unwrap(),
            s.cards[sel].pane.cwd().to_string(),
        );
        key(&mut s, KeyCode::Char('s'));
        let form = s.start.as_ref().expect("the form is open");
        assert_eq!(
            (form.kind(), form.dir.as_str()),
            (kind.as_str(), dir.as_str())
        );
        // Another kind, a name; keys go to the form, not the grid (q does not quit).
        key(&mut s, KeyCode::Right);
        let other = s.start.as_ref().unwrap().kind().to_string();
        assert_ne!(other, kind);
        key(&mut s, KeyCode::Tab);
        key(&mut s, KeyCode::Tab);
        typed(&mut s, "q review");
        assert!(!s.quit);
        let fx = s.update(Msg::Key(Key::new(KeyCode::Enter)), s.now);
        let ask = fx
            .iter()
            .find_map(|e| match e {
                crate::core::msg::Effect::Start(a) => Some(a.clone()),
                _ => None,
            })
            .expect("a start asked for");
        assert_eq!(ask.agent, other);
        assert_eq!(ask.dir, dir);
        assert_eq!(ask.name.as_deref(), Some("q review"));
        assert_eq!(ask.session, "agents");
        // Refused: said on the form, which stays to be mended.
        s.update(Msg::Started(Err("no such directory".into())), s.now);
        assert_eq!(
            s.start.as_ref().and_then(|f| f.error.as_deref()),
            Some("no such directory")
        );
        // Started: the form closes, and the new pane is selected once a poll shows it.
        key(&mut s, KeyCode::Enter);
        s.update(Msg::Started(Ok(PaneId(99))), s.now);
        assert!(s.start.is_none());
        let mut panes: Vec<_> = s.cards.iter().map(|c| c.pane.clone()).collect();
        panes.push(pane(99, 99, "claude"));
        let at = s.now + 1_000;
        s.update(Msg::Tick, at);
        s.update(Msg::polled(Ok(obs(panes))), at);
        assert_eq!(s.grid.selected, Some(PaneId(99)));
        // No directory is refused on the form; `~` is the home directory.
        s.grid.home = Some("/home/u".into());
        key(&mut s, KeyCode::Char('s'));
        key(&mut s, KeyCode::Tab);
        s.update(
            Msg::Key(Key {
                code: KeyCode::Char('u'),
                ctrl: true,
            }),
            s.now,
        );
        let fx = s.update(Msg::Key(Key::new(KeyCode::Enter)), s.now);
        assert!(!fx
            .iter()
            .any(|e| matches!(e, crate::core::msg::Effect::Start(_))));
        let said = s.start.as_ref().and_then(|f| f.error.clone());
        assert!(said.is_some_and(|e| e.starts_with("directory: give one")));
        typed(&mut s, "~/src/x");
        let fx = s.update(Msg::Key(Key::new(KeyCode::Enter)), s.now);
        let dir = fx.iter().find_map(|e| match e {
            crate::core::msg::Effect::Start(a) => Some(a.dir.clone()),
            _ => None,
        });
        assert_eq!(dir.as_deref(), Some("/home/u/src/x"));
        s.update(Msg::Started(Err("no".into())), s.now);
        // Esc closes it unstarted.
        key(&mut s, KeyCode::Esc);
        assert!(s.start.is_none());
    }

    #[test]
    fn v_switches_the_view_and_a_filter_does_not_flip_it_back() {
        let mut s = twelve((80, 24));
        assert_eq!(s.grid.mode, Mode::Auto);
        key(&mut s, KeyCode::Char('v'));
        assert_eq!(s.grid.mode, Mode::Cards);
        key(&mut s, KeyCode::Char('v'));
        assert_eq!(s.grid.mode, Mode::List);
        // Two agents left by the filter would fit as cards: the list stays, as asked.
        key(&mut s, KeyCode::Char('/'));
        typed(&mut s, "api");
        key(&mut s, KeyCode::Enter);
        assert!(s.geometry().list);
    }

    #[test]
    fn the_list_reads_its_lines_in_turns_not_all_every_second() {
        let mut s = state((80, 24));
        let panes: Vec<_> = (1..=40).map(|i| pane(i, i, "claude")).collect();
        let mut seen = std::collections::HashSet::new();
        for k in 0..4u64 {
            let at = T0 + k * 1_100;
            s.update(Msg::Tick, at);
            let fx = s.update(Msg::polled(Ok(obs(panes.clone()))), at);
            let _ = fx;
            let fx = s.update(Msg::Tick, at + 600);
            for e in fx {
                if let crate::core::msg::Effect::Poll { hot, .. } = e {
                    assert!(
                        hot.len() <= crate::core::state::LIST_READ_AT_ONCE + 1,
                        "{hot:?}"
                    );
                    seen.extend(hot);
                }
            }
        }
        let on_screen: Vec<PaneId> = s.visible().map(|i| s.cards[i].pane.id).collect();
        assert_eq!(on_screen.len(), 20);
        assert!(
            on_screen.iter().all(|p| seen.contains(p)),
            "every line read in turn"
        );
    }

    #[test]
    fn the_lists_column_names_are_cut_at_their_end_whatever_the_width() {
        for w in 40..=120 {
            let mut s = twelve((w, 24));
            s.update(
                Msg::Resize {
                    width: w,
                    height: 24,
                },
                s.now,
            );
            let t = render(&s, w, 24, &Look::plain());
            let names = row(&t, 1);
            assert!(!names.contains(" …"), "at {w}: {names}");
        }
    }

    #[test]
    fn the_list_never_panics_however_small() {
        let s = twelve((80, 24));
        for (w, h) in [(80, 1), (80, 2), (80, 3), (80, 4), (1, 1), (5, 3), (300, 5)] {
            let mut s = s.clone();
            s.update(
                Msg::Resize {
                    width: w,
                    height: h,
                },
                s.now,
            );
            let _ = render(&s, w, h, &Look::plain());
        }
    }

    #[test]
    fn the_header_says_auto_resume_is_off_whole_at_80_columns() {
        let mut s = twelve((80, 24));
        key(&mut s, KeyCode::Char('A'));
        let t = render(&s, 80, 24, &Look::plain());
        let header = row(&t, 0);
        assert!(header.contains("auto-resume off (A)"), "{header}");
        assert!(
            header.contains("2 dead"),
            "the counts stay, shorter: {header}"
        );
    }

    #[test]
    fn help_says_auto_resume_is_off_once_a_turned_it_off() {
        let mut s = twelve((80, 30));
        key(&mut s, KeyCode::Char('A'));
        key(&mut s, KeyCode::Char('?'));
        let t = render(&s, 80, 30, &Look::plain());
        assert!(find(&t, "Auto-resume is off for every agent").is_some());
    }

    #[test]
    fn a_click_selects_a_double_click_peeks_and_the_wheel_moves() {
        let mut s = twelve((80, 24));
        let click = |s: &mut State, row: u16, at: u64| {
            s.update(
                Msg::Mouse(Mouse {
                    kind: MouseKind::Press(Button::Left),
                    column: 10,
                    row,
                }),
                at,
            );
        };
        let now = s.now;
        // Row 2 is the first agent (under the header and the column names).
        click(&mut s, 6, now);
        assert_eq!(s.grid.selected, Some(PaneId(5)));
        assert!(s.peek.is_none());
        click(&mut s, 6, now + 300);
        assert_eq!(
            s.peek.as_ref().map(|p| p.pane),
            Some(PaneId(5)),
            "double click peeks"
        );
        key(&mut s, KeyCode::Esc);
        // Two clicks far apart in time are two clicks.
        click(&mut s, 3, now + 1_000);
        click(&mut s, 3, now + 2_000);
        assert!(s.peek.is_none());
        assert_eq!(s.grid.selected, Some(PaneId(2)));
        s.update(
            Msg::Mouse(Mouse {
                kind: MouseKind::ScrollDown,
                column: 0,
                row: 0,
            }),
            now + 3_000,
        );
        assert_eq!(s.grid.selected, Some(PaneId(3)));
        // The header is no agent.
        click(&mut s, 0, now + 4_000);
        assert_eq!(s.grid.selected, Some(PaneId(3)));
    }

    #[test]
    fn a_japanese_window_name_never_pushes_out_the_pane_id_or_runs_into_the_id() {
        let mut s = twelve((40, 12));
        s.grid.mode = Mode::Cards;
        s.update(Msg::Action(Action::Down), s.now);
        s.update(Msg::Action(Action::Down), s.now);
        let t = render(&s, 40, 12, &Look::plain());
        assert_eq!(overflow(&t), None);
        let (_, y) = find(&t, "%3").expect("the pane id stays in the title");
        let title = row(&t, y);
        assert!(title.contains("work:3.0 文書"), "{title}");
        // The directory and the session id keep a space between them.
        let (_, y) = find(&t, "docs-jp").expect("directory shown");
        let line = row(&t, y);
        assert!(!line.contains("jpid") && !line.contains("jp0"), "{line}");
    }

    #[test]
    fn the_footer_shows_only_keys_that_work_now() {
        let mut s = twelve((120, 30));
        let footer = |s: &State| {
            let t = render(s, 120, 30, &Look::plain());
            (0..120)
                .map(|x| t.backend().buffer()[(x, 29)].symbol().to_string())
                .collect::<String>()
        };
        // A running agent is selected: nothing to relaunch.
        assert!(!footer(&s).contains("relaunch"), "{}", footer(&s));
        s.update(Msg::Action(Action::NextNeed), s.now);
        assert!(footer(&s).contains("r relaunch"), "{}", footer(&s));
        assert!(!footer(&s).contains("R fresh"), "{}", footer(&s));
        // A dead agent without a session id: r would refuse, R starts it fresh.
        let i = s.selected_index().unwrap();
        let kept = std::mem::take(&mut s.cards[i].pane.opts.session_id);
        s.cards[i].pane.start_command = s.cards[i].agent.clone().unwrap_or_default();
        assert!(
            footer(&s).contains("R fresh") && !footer(&s).contains("r relaunch"),
            "{}",
            footer(&s)
        );
        s.cards[i].pane.opts.session_id = kept;
        // Peek on the live pane: no `]`, and no n/N before a search.
        s.update(Msg::Action(Action::Peek), s.now);
        let f = footer(&s);
        assert!(!f.contains("] newer") && !f.contains("n next"), "{f}");
        s.update(
            Msg::Records {
                pane: s.peek.as_ref().map(|p| p.pane).unwrap_or(PaneId(0)),
                records: Vec::new(),
            },
            s.now,
        );
        assert!(!footer(&s).contains("[ older"), "no record: {}", footer(&s));
        assert!(footer(&s).contains("? help") && footer(&s).contains("Esc/q back"));
        // Over the help, only what closes it or quits.
        s.update(Msg::Action(Action::Back), s.now);
        s.update(Msg::Action(Action::Help), s.now);
        let f = footer(&s);
        assert!(f.contains("? close") && f.contains("q quit"), "{f}");
        assert!(!f.contains("p peek") && !f.contains("/ filter"), "{f}");
    }
}

/// A crash record as the loop hands it to the peek view: with its output parsed.
fn shown(
    record: crate::core::crash::CrashRecord,
) -> std::sync::Arc<crate::core::peek_model::PeekRecord> {
    let text = std::sync::Arc::new(crate::adapters::ansi::parse(record.output.as_bytes()));
    std::sync::Arc::new(crate::core::peek_model::PeekRecord { record, text })
}

/// Agents stopped for different causes, and one alive at its usage limit.
fn causes(size: (u16, u16), mode: crate::core::layout::Mode) -> State {
    let mut s = state(size);
    s.grid.mode = mode;
    let mut panes: Vec<_> = (1..=5u32).map(|i| pane(i, i, "claude")).collect();
    for p in &mut panes {
        p.opts.session_id = format!("{:08x}-4f7b-4a43-9d55-3f1f1b7f0a11", p.id.0);
    }
    let mut o = obs(panes.clone());
    o.activity.insert(PaneId(5), T0 / 1000 - 30);
    s.update(Msg::Tick, T0);
    s.update(Msg::polled(Ok(o.clone())), T0);
    let tails = [
        (1, Some(1), None, "Invalid API key · Fix external API key"),
        (
            2,
            Some(1),
            None,
            "API Error: 529 Overloaded. This is a server-side issue",
        ),
        (
            3,
            None,
            Some(6),
            "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
        ),
        (
            4,
            Some(1),
            None,
            "You've hit your session limit · resets 9pm (UTC)",
        ),
    ];
    let mut o2 = o.clone();
    for (i, code, sig, _) in tails {
        let k = (i - 1) as usize;
        o2.listing.panes[k] = dead(panes[k].clone(), code, sig);
        o2.listing.panes[k].dead_time = Some(T0 / 1000 + 60);
    }
    let now = T0 + 61_000;
    s.update(Msg::Tick, now);
    let fx = s.update(Msg::polled(Ok(o2.clone())), now);
    for e in fx {
        if let crate::core::msg::Effect::ReadTail(pane, _) = e {
            let text = tails
                .iter()
                .find(|t| PaneId(t.0) == pane)
                .map(|t| t.3.to_string());
            s.update(
                Msg::Tail {
                    pane,
                    text,
                    oom_killed: false,
                    record: Vec::new(),
                },
                now,
            );
        }
    }
    s.update(
        Msg::Looked(Ok([(
            PaneId(5),
            "> go on\n  ⎿ \u{a0}You've hit your session limit · resets 9pm (UTC)\n".to_string(),
        )]
        .into())),
        now,
    );
    s.update(Msg::Tick, now + 1_000);
    s
}

#[test]
fn each_cause_and_a_usage_limit_are_said_on_cards_and_rows() {
    use crate::core::layout::Mode;
    for (w, h) in [(80, 24), (160, 45)] {
        let s = causes((w, h), Mode::List);
        let t = render(&s, w, h, &Look::plain());
        for want in [
            "✖ login needed",
            "✖ API overloaded",
            "✖ out of memory",
            "✖ limit till 21:00",
            "⏸ limited till 21:00",
            "(1 at a usage limit)",
        ] {
            assert!(
                find(&t, want).is_some(),
                "{want} at {w}x{h}:\n{:?}",
                t.backend()
            );
        }
        insta::assert_snapshot!(format!("causes_list_{w}x{h}"), t.backend());
        // With a column of what they spent beside: the state is still whole (the other
        // columns give way).
        let mut s = causes((w, h), Mode::List);
        for c in &mut s.cards {
            c.spend = Some(crate::core::spend::Spend {
                tokens: crate::core::spend::Tokens {
                    output: 2_300_000,
                    ..Default::default()
                },
                context: Some(116_000),
                model: Some("claude-opus-4-8".into()),
                ..Default::default()
            });
        }
        let t = render(&s, w, h, &Look::plain());
        for want in [
            "✖ login needed",
            "✖ limit till 21:00",
            "⏸ limited till 21:00",
            "58% 2.3M",
        ] {
            assert!(
                find(&t, want).is_some(),
                "{want} at {w}x{h}:\n{:?}",
                t.backend()
            );
        }
        let s = causes((w, h), Mode::Cards);
        let t = render(&s, w, h, &Look::plain());
        insta::assert_snapshot!(format!("causes_cards_{w}x{h}"), t.backend());
    }
}

#[test]
fn what_agents_spent_is_on_their_cards_and_rows_and_a_full_context_is_marked() {
    use crate::core::layout::Mode;
    use crate::core::spend::{Spend, Tokens};
    for mode in [Mode::Cards, Mode::List] {
        let mut s = state((80, 24));
        s.grid.mode = mode;
        poll(&mut s, vec![pane(1, 1, "claude"), pane(2, 2, "codex")], T0);
        s.cards[0].pane.opts.session_id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into();
        s.cards[0].spend = Some(Spend {
            tokens: Tokens {
                input: 1_000,
                output: 200_000,
                cache_read: 1_000_000,
                cache_creation: 30_000,
            },
            context: Some(180_000),
            model: Some("claude-opus-4-8".into()),
            ..Spend::default()
        });
        s.cards[1].spend = Some(Spend {
            tokens: Tokens {
                input: 60_000,
                ..Tokens::default()
            },
            context: Some(54_400),
            window: Some(272_000),
            ..Spend::default()
        });
        let t = render(&s, 80, 24, &Look::plain());
        let (a, b) = match mode {
            Mode::List => ("90% 1.2M", "20% 60k"),
            _ => ("ctx 90% · 1.2M tok", "ctx 20% · 60k tok"),
        };
        let shown = find(&t, a).unwrap_or_else(|| panic!("{:?}", t.backend()));
        assert!(find(&t, b).is_some(), "{:?}", t.backend());
        // Over the 85 % threshold: marked in the waiting colour, not the dim one.
        let look = Look::plain();
        let cell = &t.backend().buffer()[shown];
        assert_eq!(Some(cell.fg), look.theme.waiting().fg, "{mode:?}");
        insta::assert_snapshot!(format!("spend_{mode:?}_80x24"), t.backend());
    }
}

#[test]
fn a_stop_on_purpose_is_drawn_calm_not_as_an_alarm() {
    let mut s = state((80, 24));
    s.grid.mode = crate::core::layout::Mode::Cards;
    poll(&mut s, vec![pane(1, 1, "claude")], T0);
    let mut p = pane(1, 1, "claude");
    p = dead(p, Some(143), None);
    p.dead_time = Some(T0 / 1000 + 5);
    poll(&mut s, vec![p], T0 + 6_000);
    let t = render(&s, 80, 24, &Look::plain());
    let at = find(&t, "■ stopped on purpose · process exited (code 143)")
        .unwrap_or_else(|| panic!("{:?}", t.backend()));
    let buf = t.backend().buffer();
    let look = Look::plain();
    assert_eq!(
        Some(buf[at].fg),
        look.theme.finished().fg,
        "the finished colour"
    );
    // The header is not the alarm's: nothing crashed.
    assert_ne!(buf[(0, 0)].bg, look.theme.alarm().bg.unwrap_or_default());
    assert!(
        find(&t, "0 dead · 0 finished · 1 stopped").is_some(),
        "{:?}",
        t.backend()
    );
    insta::assert_snapshot!(t.backend());
}

/// Each row's text, then its runs of style (`x..x fg/bg +modifiers`), for a snapshot of
/// what the colours are as well as the words.
fn styled(t: &Terminal<TestBackend>) -> String {
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let text: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        out.push_str(&format!("{text}\n"));
        let mut x = 0;
        let mut runs = Vec::new();
        while x < buf.area.width {
            let c = &buf[(x, y)];
            let key = (c.fg, c.bg, c.modifier);
            let start = x;
            while x < buf.area.width && {
                let d = &buf[(x, y)];
                (d.fg, d.bg, d.modifier) == key
            } {
                x += 1;
            }
            if key
                != (
                    Color::Reset,
                    Color::Reset,
                    ratatui::style::Modifier::empty(),
                )
            {
                runs.push(format!("{start}..{x} {:?}/{:?} {:?}", key.0, key.1, key.2));
            }
        }
        if !runs.is_empty() {
            out.push_str(&format!("    {}\n", runs.join(" · ")));
        }
    }
    out
}

#[test]
fn a_light_theme_has_no_light_grey_or_yellow_text_and_its_colours_are_settable() {
    let light = crate::core::settings::ThemeConfig {
        name: crate::core::settings::ThemeName::Light,
        colors: [("waiting".to_string(), "#875f00".to_string())].into(),
    };
    let look = Look {
        theme: super::theme::Theme {
            color: true,
            pal: super::theme::Palette::of(&light).unwrap(),
        },
        ..Look::plain()
    };
    for (w, h) in [(80, 24), (160, 45)] {
        let mut s = fleet((w, h));
        s.grid.mode = crate::core::layout::Mode::List;
        let t = render(&s, w, h, &look);
        let buf = t.backend().buffer();
        for y in 0..h {
            for x in 0..w {
                let c = &buf[(x, y)];
                // Unreadable on white: light grey, yellow, white on no background.
                let bad = matches!(c.fg, Color::Gray | Color::Yellow | Color::LightYellow)
                    || (c.fg == Color::White && c.bg == Color::Reset);
                assert!(
                    !bad,
                    "{:?} on {:?} at {x},{y}: {:?}",
                    c.fg,
                    c.bg,
                    c.symbol()
                );
            }
        }
        insta::assert_snapshot!(format!("light_list_{w}x{h}"), styled(&t));
    }
    // Set in the config: a role's colour, checked when read.
    let bad = crate::core::settings::ThemeConfig {
        colors: [("waitng".to_string(), "red".to_string())].into(),
        ..Default::default()
    };
    let (key, why) = super::theme::Palette::of(&bad).unwrap_err();
    assert_eq!(key, "waitng");
    assert!(why.contains("the roles are alarm"), "{why}");
    let bad = crate::core::settings::ThemeConfig {
        colors: [("dim".to_string(), "greyish".to_string())].into(),
        ..Default::default()
    };
    assert!(super::theme::Palette::of(&bad)
        .unwrap_err()
        .1
        .contains("is not a colour"));
}

/// Nine agents in every state that matters for "who needs me, and what happens next",
/// in the attention order: waiting at a prompt, crashed with no id, gave up, resuming,
/// idle, working, not known, finished, stopped on purpose.
fn attention_scene(size: (u16, u16)) -> State {
    let mut s = state(size);
    s.grid.order = crate::core::settings::Order::Attention;
    let kinds = [
        "claude", "codex", "gemini", "aider", "claude", "claude", "claude", "opencode", "claude",
    ];
    let names = [
        "api", "web", "docs", "infra", "review", "nightly", "search", "mobile", "auth",
    ];
    let mut o = obs(kinds
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let mut p = pane(i as u32 + 1, i as u32, k);
            p.window_name = names[i].into();
            p.opts.agent = k.to_string();
            p.opts.session_id = format!("{:08x}-4f7b-4a43-9d55-3f1f1b7f0a11", i + 1);
            p
        })
        .collect());
    // The crashed claude in `auth` never had its id recorded.
    o.listing.panes[8].opts.session_id.clear();
    // gemini spent its budget already.
    o.listing.panes[2].opts.attempts = "3".into();
    for i in 1..=9u32 {
        o.started.insert(PaneId(i), T0 - 600_000 * u64::from(i));
        o.activity.insert(PaneId(i), T0 / 1000 - 30);
    }
    o.started.insert(PaneId(3), T0 + 30_000);
    s.update(Msg::Tick, T0);
    s.update(Msg::polled(Ok(o.clone())), T0);
    let mut panes = o.listing.panes.clone();
    panes[1] = dead(panes[1].clone(), Some(1), None);
    panes[2] = dead(panes[2].clone(), None, Some(9));
    panes[3] = dead(panes[3].clone(), Some(0), None);
    panes[5] = dead(panes[5].clone(), None, Some(15));
    panes[8] = dead(panes[8].clone(), Some(1), None);
    for p in panes.iter_mut().filter(|p| p.dead) {
        p.dead_time = Some((T0 + 60_000) / 1000);
        p.opts.cwd = format!("/home/u/src/proj{}", p.id.0);
    }
    let mut o2 = o.clone();
    o2.listing.panes = panes;
    let at = T0 + 60_000;
    let fx = s.update(Msg::polled(Ok(o2)), at);
    crate::core::testkit::answer_tails(&mut s, fx, "", at);
    let prompt = "╭────────────────────────────────╮\n│ Bash command                   │\n│                                │\n│   rm -rf build/                │\n│   Remove the build directory   │\n│                                │\n│ Do you want to proceed?        │\n│ ❯ 1. Yes                       │\n│   2. No                        │\n╰────────────────────────────────╯";
    let screens: Vec<(u32, &str)> = vec![
        (1, "⠋ Working… (12s · esc to interrupt)"),
        (5, prompt),
        (7, "> "),
        (8, "opencode ready"),
    ];
    let map = || -> std::collections::HashMap<PaneId, String> {
        screens
            .iter()
            .map(|(i, t)| (PaneId(*i), t.to_string()))
            .collect()
    };
    s.update(Msg::Looked(Ok(map())), at + 100);
    s.update(Msg::Screens(Ok(map())), at + 100);
    s.update(Msg::Tick, at + 1_000);
    s
}

#[test]
fn the_attention_order_and_every_rows_next_step_at_80x24_and_160x45() {
    for (w, h) in [(80, 24), (160, 45)] {
        let mut s = attention_scene((w, h));
        insta::assert_snapshot!(
            format!("attention_{w}x{h}"),
            render(&s, w, h, &Look::plain()).backend()
        );
        // The prompt selected: its preview says what it asks, and where the list has a
        // column for it, so does its row.
        s.grid.selected = Some(PaneId(5));
        insta::assert_snapshot!(
            format!("attention_waiting_{w}x{h}"),
            render(&s, w, h, &Look::plain()).backend()
        );
        // codex resumed: out of the dead group at once, with the working ones.
        let at = s.now + 2_000;
        let mut panes: Vec<_> = s.cards.iter().map(|c| c.pane.clone()).collect();
        let codex = panes.iter_mut().find(|p| p.id == PaneId(2)).unwrap();
        *codex = pane(2, 1, "codex");
        codex.window_name = "web".into();
        codex.pid = Some(7777);
        s.update(Msg::Tick, at);
        s.update(Msg::polled(Ok(obs(panes))), at);
        let order: Vec<u32> = s.cards.iter().map(|c| c.pane.id.0).collect();
        let codex_at = order.iter().position(|&i| i == 2).unwrap();
        let finished_at = order.iter().position(|&i| i == 4).unwrap();
        let waiting_at = order.iter().position(|&i| i == 5).unwrap();
        assert!(codex_at > waiting_at && codex_at < finished_at, "{order:?}");
        insta::assert_snapshot!(
            format!("attention_resumed_{w}x{h}"),
            render(&s, w, h, &Look::plain()).backend()
        );
    }
}
