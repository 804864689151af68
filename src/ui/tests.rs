use ratatui::backend::TestBackend;
use ratatui::style::Color;
use ratatui::Terminal;

use super::{Look, Screen};
use crate::core::msg::{Action, Msg};
use crate::core::pane::PaneId;
use crate::core::state::State;
use crate::testkit::*;

/// A server with one of everything: running, crashed, killed, finished, unknown.
fn fleet(size: (u16, u16)) -> State {
    let mut s = state(size);
    let mut o = obs(vec![
        pane(1, 0, "claude"),
        pane(2, 1, "codex"),
        pane(3, 2, "gemini"),
        pane(4, 3, "aider"),
        pane(5, 4, "claude"),
    ]);
    for (i, p) in o.listing.panes.iter_mut().enumerate() {
        p.window_name = ["api", "web", "docs", "infra", "night shift"][i].into();
        p.opt_session_id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into();
    }
    o.listing.panes[3].opt_session_id.clear();
    // The SIGKILLed gemini has spent its auto-resume budget already.
    o.listing.panes[2].opt_attempts = "3".into();
    for i in 1..=5 {
        o.started.insert(PaneId(i), T0 - 3_600_000 * u64::from(i));
    }
    // gemini's last run was short: no healthy refill.
    o.started.insert(PaneId(3), T0 + 30_000);
    s.update(Msg::Tick, T0);
    s.update(Msg::Polled(Ok(o.clone())), T0);
    let mut panes = o.listing.panes.clone();
    panes[1] = dead(panes[1].clone(), Some(1), None);
    panes[2] = dead(panes[2].clone(), None, Some(9));
    panes[3] = dead(panes[3].clone(), Some(0), None);
    panes[4] = dead(panes[4].clone(), None, None);
    for p in &mut panes[1..] {
        p.dead_time = Some((T0 + 60_000) / 1000);
        p.opt_cwd = format!("/home/u/src/proj{}", p.id.0);
    }
    let mut o2 = o.clone();
    o2.listing.panes = panes;
    // Four polls: the lost status of pane 5 is kicked until it is given up as unknown.
    for k in 0..4 {
        s.update(Msg::Polled(Ok(o2.clone())), T0 + 60_000 + 500 * k);
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
        theme: super::theme::Theme { color: false },
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
    use crate::core::peek_model::PeekText;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use std::sync::Arc;

    fn output() -> Arc<PeekText> {
        let mut out = String::new();
        for i in 1..=200 {
            out.push_str(&format!("\x1b[3{}mline {i}\x1b[0m plain tail\n", 1 + i % 6));
        }
        out.push_str("\x1b[1;31mError: rate limited, giving up\x1b[0m\n");
        Arc::new(PeekText::from_ansi(out.as_bytes()))
    }

    fn peeking() -> State {
        let mut s = fleet((80, 24));
        s.update(Msg::Action(Action::Down), s.now);
        s.update(Msg::Action(Action::Peek), s.now);
        s.update(
            Msg::History {
                pane: PaneId(2),
                result: Ok(output()),
            },
            s.now,
        );
        s
    }

    fn key(s: &mut State, c: KeyCode) {
        s.update(Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)), s.now);
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
        output: "the old last words\n".into(),
    };
    s.update(
        Msg::Records {
            pane: PaneId(2),
            records: vec![std::sync::Arc::new(record)],
        },
        s.now,
    );
    let p = s.peek.as_ref().unwrap();
    assert_eq!(p.source, crate::core::peek_model::Source::Record(0));
    assert_eq!(p.text.as_ref().unwrap().plain, ["the old last words"]);
    // The live capture arriving later does not take the screen back.
    s.update(
        Msg::History {
            pane: PaneId(2),
            result: Ok(std::sync::Arc::new(
                crate::core::peek_model::PeekText::from_ansi(b"live\n"),
            )),
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
    s.supervising = false;
    s.supervisor = Some(crate::core::msg::Supervisor {
        pid: 12345,
        daemon: true,
        since: T0,
    });
    s.cards[2].notice = Some(crate::core::watch::Notice::story(
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
fn a_held_resume_says_why_over_an_earlier_attempts_notice() {
    use crate::core::supervisor::Hold;
    use crate::core::watch::{Auto, Notice};
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

#[test]
fn a_malformed_recorded_id_is_said_on_the_card_before_r_is_pressed() {
    use crate::core::watch::Auto;
    let mut s = fleet((80, 24));
    let i = s.cards.iter().position(|c| c.life.is_dead()).unwrap();
    s.cards[i].agent = Some("claude".into());
    s.cards[i].pane.opt_session_id = "`id`".into();
    s.cards[i].auto = Auto::Idle;
    s.cards[i].notice = None;
    let t = render(&s, 200, 50, &Look::plain());
    let words = "session id \"`id`\" does not look like a claude id";
    assert!(find(&t, words).is_some(), "{:?}", t.backend());
}

#[test]
fn skipped_pane_records_are_said_in_the_header() {
    let mut s = fleet((120, 30));
    s.malformed = 2;
    let t = render(&s, 120, 30, &Look::plain());
    assert!(find(&t, "2 unreadable pane records skipped (see log)").is_some());
}

#[test]
fn a_journal_that_cannot_be_written_is_said_in_the_header_until_a_write_succeeds() {
    let mut s = fleet((160, 30));
    let e = "journal /s/journal.jsonl not written: No space left on device (os error 28)";
    s.update(Msg::Journaled(Err(e.into())), s.now);
    let t = render(&s, 160, 30, &Look::plain());
    assert!(
        find(&t, "No space left on device").is_some(),
        "{:?}",
        t.backend()
    );
    s.update(Msg::Journaled(Ok(())), s.now);
    let t = render(&s, 160, 30, &Look::plain());
    assert!(find(&t, "not written").is_none());
}
