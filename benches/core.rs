//! `cargo bench`: the costs that run every tick or every keystroke.
//! Targets (issue 9): parse of 1000 panes < 1 ms; full render of 200 cards < 2 ms;
//! peek of 50 000 lines opens fast and a page renders well inside a frame.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use agentwatch::adapters::tmux::format::{parse_listing, FIELDS};
use agentwatch::config::Config;
use agentwatch::core::msg::{Action, Msg, Observation};
use agentwatch::core::state::State;
use agentwatch::ui::{Look, Screen};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn main() {
    divan::main();
}

const T0: u64 = 1_780_000_000_000;

/// `list-panes` output as tmux prints it, for `n` agent panes (a third of them dead).
fn listing(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let dead = i % 3 == 0;
        let fields: Vec<String> = FIELDS
            .iter()
            .map(|f| match *f {
                "pane_id" => format!("%{i}"),
                "session_name" => format!("proj{}", i / 5),
                "window_index" => (i % 5).to_string(),
                "window_name" => "claude".into(),
                "pane_index" => "0".into(),
                "pane_dead" => u8::from(dead).to_string(),
                "pane_dead_status" if dead => "1".into(),
                "pane_dead_time" if dead => "1780000000".into(),
                "pane_pid" => (10_000 + i).to_string(),
                "pid" => "4242".into(),
                "pane_current_command" => "claude".into(),
                "pane_start_command" => {
                    "claude --session-id 0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into()
                }
                "pane_current_path" if !dead => format!("/home/u/src/project-{i}"),
                "pane_start_path" => "/home/u".into(),
                "remain-on-exit" => "on".into(),
                "@agentwatch_agent" => "claude".into(),
                "@agentwatch_cwd" => format!("/home/u/src/project-{i}"),
                "@agentwatch_session_id" => "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into(),
                _ => String::new(),
            })
            .collect();
        let m = agentwatch::adapters::tmux::format::Marks::ours();
        out.push(m.record);
        out.extend_from_slice(m.nonce.as_bytes());
        out.extend_from_slice(
            fields
                .join(&format!("{}{}", char::from(m.field), m.nonce))
                .as_bytes(),
        );
        out.push(b'\n');
    }
    out
}

#[divan::bench(args = [10, 100, 1000])]
fn parse_list_panes(bencher: divan::Bencher, n: usize) {
    let out = listing(n);
    bencher.bench(|| parse_listing(divan::black_box(&out)));
}

fn observation(n: usize) -> Observation {
    Observation {
        listing: parse_listing(&listing(n)),
        ..Observation::default()
    }
}

#[divan::bench(args = [100, 1000])]
fn core_update_snapshot(bencher: divan::Bencher, n: usize) {
    let obs = observation(n);
    let mut state = State::new(&Config::default(), false, "s".into(), (200, 50));
    state.update(Msg::polled(Ok(obs.clone())), T0);
    let mut t = T0;
    bencher.bench_local(|| {
        t += 500;
        state.update(Msg::Tick, t);
        state.update(Msg::polled(Ok(obs.clone())), t)
    });
}

#[divan::bench]
fn render_200_cards(bencher: divan::Bencher) {
    let mut state = State::new(&Config::default(), false, "s".into(), (400, 200));
    state.update(Msg::polled(Ok(observation(200))), T0);
    let look = Look::plain();
    let mut term = Terminal::new(TestBackend::new(400, 200)).unwrap();
    bencher.bench_local(|| {
        term.draw(|f| {
            f.render_widget(
                Screen {
                    state: &state,
                    look: &look,
                },
                f.area(),
            )
        })
        .unwrap();
    });
}

fn history(lines: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..lines {
        out.extend_from_slice(
            format!("\x1b[3{}m● step {i}\x1b[0m: edited src/module_{i}.rs (+12 -3) \x1b[2mthinking…\x1b[0m\n", i % 7)
                .as_bytes(),
        );
    }
    out
}

#[divan::bench]
fn peek_parse_50k_lines(bencher: divan::Bencher) {
    let out = history(50_000);
    bencher.bench(|| agentwatch::adapters::ansi::parse(divan::black_box(&out)));
}

#[divan::bench]
fn peek_render_page_of_50k(bencher: divan::Bencher) {
    let text = Arc::new(agentwatch::adapters::ansi::parse(&history(50_000)));
    let mut state = State::new(&Config::default(), false, "s".into(), (200, 50));
    state.update(Msg::polled(Ok(observation(1))), T0);
    state.update(Msg::Action(Action::Peek), T0);
    state.update(
        Msg::Output {
            pane: agentwatch::core::pane::PaneId(0),
            result: Ok(text),
        },
        T0,
    );
    let look = Look::plain();
    let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();
    let mut up = true;
    bencher.bench_local(|| {
        // Scroll a page each frame, as a user holding PgUp would.
        state.update(
            Msg::Action(if up { Action::PageUp } else { Action::PageDown }),
            T0,
        );
        up = !up;
        term.draw(|f| {
            f.render_widget(
                Screen {
                    state: &state,
                    look: &look,
                },
                f.area(),
            )
        })
        .unwrap();
    });
}
