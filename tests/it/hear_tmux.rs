//! Hearing agents' output as it happens (issue 29), against a real tmux server: the panes
//! the core wants heard are counted (what their terminals' writers wrote, in `/proc`), in
//! any session, and not a byte is copied over control mode; a pane whose writers `/proc`
//! does not tell of gets control mode's `%output` instead, and every other pane of the
//! connection's session is paused before a byte of it flows.

use std::time::Duration;

use crate::support::{TmuxServer, WAIT};
use agentwatch::adapters::poll::Prober;
use agentwatch::adapters::tmux::client::Tmux;
use agentwatch::core::pane::PaneId;

/// A line of 48 bytes every 100 ms: work, by its count.
const WRITES: &str =
    "while :; do echo 01234567890123456789012345678901234567890123456; sleep 0.1; done";
/// codex at work, at the least it was measured to write: 78 bytes in 3 writes a quarter
/// second.
const CODEX_AT_LEAST: &str = "while :; do echo 0123456789012345678901234; sleep 0.083; done";
/// A byte at a time, every 40 ms or so: work by its writes over a quarter second (six), though
/// a tenth of a second never holds four.
const SMALL_WRITES: &str = "while :; do printf x; sleep 0.04; done";
/// The same, written to the terminal through a file of its own, its standard streams
/// elsewhere: `/proc` cannot tell what it writes to the terminal. (The terminal stays open:
/// tmux ends a pane whose terminal no process has open.)
const TTY_WRITES: &str = "exec 3<>/dev/tty </dev/null >/dev/null 2>&1; \
    while :; do echo 01234567890123456789012345678901234567890123456 >&3; sleep 0.1; done";

fn id(pane: &str) -> PaneId {
    PaneId::parse(pane).unwrap()
}

/// A poller of `server` over control mode that wants `panes` heard.
fn hearing(server: &TmuxServer, panes: &[&str]) -> Prober {
    let tmux = Tmux::new(server.socket.clone(), Duration::from_secs(5))
        .with_env(server.env_pairs())
        .with_control_mode(true);
    let prober = Prober::new(tmux);
    let ids: Vec<PaneId> = panes.iter().map(|p| id(p)).collect();
    prober.attend(false, &ids);
    prober
}

/// A pane in a new session `name`, running `script`.
fn elsewhere(server: &TmuxServer, name: &str, script: &str) -> String {
    server
        .tmux_ok(&[
            "new-session",
            "-d",
            "-s",
            name,
            "-P",
            "-F",
            "#{pane_id}",
            "--",
            "sh",
            "-c",
            script,
        ])
        .trim()
        .to_string()
}

/// Polls `prober` until `pane` is heard at work, its last work under a second ago.
async fn heard_at_work(prober: &Prober, pane: &str) -> agentwatch::core::msg::Observation {
    let end = std::time::Instant::now() + *WAIT;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let obs = prober.observe_hot(&[], true).await.unwrap();
        if let Some(Some(t)) = obs.heard.get(&id(pane)) {
            let now = agentwatch::adapters::wall_ms();
            if !obs.stopped.contains(&id(pane)) && now.saturating_sub(*t) < 1_000 {
                return obs;
            }
        }
        assert!(
            std::time::Instant::now() < end,
            "{pane} is never heard at work: {:?}",
            obs.heard
        );
    }
}

fn copied(prober: &Prober) -> std::collections::HashMap<u32, tokio::time::Instant> {
    prober.tmux().notices().output.lock().unwrap().last.clone()
}

#[tokio::test]
async fn the_wanted_panes_are_counted_in_any_session_and_not_a_byte_is_copied() {
    let server = TmuxServer::start();
    let wanted = server.new_window(&["sh", "-c", WRITES]);
    let slow = server.new_window(&["sh", "-c", CODEX_AT_LEAST]);
    let small = server.new_window(&["sh", "-c", SMALL_WRITES]);
    let quiet = server.new_window(&["sleep", "1000"]);
    let other = server.new_window(&["sh", "-c", WRITES]);
    // The same, wanted, in a session the connection is not attached to.
    let far = elsewhere(&server, "zz", WRITES);
    let prober = hearing(&server, &[&wanted, &slow, &small, &quiet, &far]);
    let obs = prober.observe_hot(&[], true).await.unwrap();
    assert_eq!(
        obs.heard.get(&id(&wanted)),
        Some(&None),
        "counted from now on: nothing of before"
    );
    heard_at_work(&prober, &wanted).await;
    heard_at_work(&prober, &slow).await;
    heard_at_work(&prober, &small).await;
    let obs = heard_at_work(&prober, &far).await;
    assert_eq!(
        obs.heard.get(&id(&quiet)),
        Some(&None),
        "counted, and silent"
    );
    assert!(obs.stopped.contains(&id(&quiet)), "its quiet is known");
    assert!(!obs.heard.contains_key(&id(&other)), "not wanted");
    // Not a byte reached the connection: it kept `no-output`.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = prober.observe_hot(&[], true).await.unwrap();
    assert!(copied(&prober).is_empty(), "{:?}", copied(&prober));
    let flags = server.tmux_ok(&["list-clients", "-F", "#{client_flags}"]);
    assert!(
        flags.contains("control-mode") && flags.contains("no-output"),
        "{flags}"
    );
    // Wanted no more: not said to be heard.
    prober.attend(false, &[]);
    let obs = prober.observe_hot(&[], true).await.unwrap();
    assert!(obs.heard.is_empty(), "{:?}", obs.heard);
}

#[tokio::test]
async fn a_pane_proc_cannot_count_is_heard_through_tmux_and_no_other_pane_flows() {
    let server = TmuxServer::start();
    let made = std::time::Instant::now();
    let wanted = server.new_window(&["sh", "-c", TTY_WRITES]);
    let other = server.new_window(&["sh", "-c", WRITES]);
    // Counted: flows no more than the one not wanted.
    let counted = server.new_window(&["sh", "-c", WRITES]);
    // Not countable either, in another session: cannot be heard.
    let far = elsewhere(&server, "zz", TTY_WRITES);
    let prober = hearing(&server, &[&wanted, &counted, &far]);
    // Turned on by a poll from its fourth second (a death before would lose its last lines
    // to tmux's backpressure, see `poll::hear`): heard from then on, nothing of before.
    let end = std::time::Instant::now() + *WAIT;
    loop {
        let asked = agentwatch::adapters::wall_ms();
        let obs = prober.observe_hot(&[], true).await.unwrap();
        let age = made.elapsed();
        let heard = obs.heard.get(&id(&wanted));
        assert!(
            heard.is_none() || age >= Duration::from_secs(3),
            "copied in its first seconds: {age:?}"
        );
        match heard {
            Some(None) => break,
            Some(Some(t)) => {
                assert!(*t + 50 >= asked, "a byte from before it was on: {t}");
                break;
            }
            None => assert!(
                std::time::Instant::now() < end,
                "never heard: {:?}",
                obs.heard
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let obs = heard_at_work(&prober, &wanted).await;
    assert!(
        !obs.heard.contains_key(&id(&far)),
        "another session's pane cannot be heard"
    );
    assert!(!obs.heard.contains_key(&id(&other)), "not wanted");
    heard_at_work(&prober, &counted).await;
    // Not a byte of the other panes reached the connection.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let output = copied(&prober);
    assert!(output.contains_key(&id(&wanted).number()));
    for pane in [&other, &counted] {
        assert!(
            !output.contains_key(&id(pane).number()),
            "{pane}'s output was off from the first: {output:?}"
        );
    }
    let flags = server.tmux_ok(&["list-clients", "-F", "#{client_flags}"]);
    assert!(
        flags.contains("control-mode") && !flags.contains("no-output"),
        "{flags}"
    );
    // Wanted no more: off again, and not said to be heard.
    prober.attend(false, &[]);
    let obs = prober.observe_hot(&[], true).await.unwrap();
    assert!(obs.heard.is_empty(), "{:?}", obs.heard);
}

#[tokio::test]
async fn a_pane_at_work_is_counted_not_copied_and_its_stop_is_heard_through_the_noise() {
    let server = TmuxServer::start();
    let stop = server.dir.path().join("stopped");
    // Writes every 20 ms for a few seconds (long enough to be counted at work), then only 8
    // bytes to /dev/null every 300 ms (an idle claude writes to an eventfd every second),
    // while a child of its writes all the time into a pipe (a tool it runs): neither is work
    // on its terminal.
    let script = format!(
        "(while :; do echo y; sleep 0.05; done) | cat > /dev/null &
         i=0; while [ $i -lt 200 ]; do echo x; sleep 0.02; i=$((i+1)); done
         : > {stop}
         while :; do printf 12345678 > /dev/null; sleep 0.3; done",
        stop = stop.display()
    );
    let pane = server.new_window(&["sh", "-c", &script]);
    let prober = hearing(&server, &[&pane]);
    let end = std::time::Instant::now() + *WAIT;
    // Counted at work while it writes, not a byte of it copied to the connection.
    let mut at_work = false;
    while !stop.exists() {
        assert!(std::time::Instant::now() < end, "it never stops writing");
        let obs = prober.observe_hot(&[], true).await.unwrap();
        if !stop.exists() && !obs.stopped.contains(&id(&pane)) {
            at_work |= obs.heard.get(&id(&pane)).is_some_and(Option::is_some);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(at_work, "never counted at work");
    assert!(copied(&prober).is_empty(), "{:?}", copied(&prober));
    let stopped = agentwatch::adapters::wall_ms();
    // Its stop is heard: the last byte heard stays, half a second old and more.
    let end = std::time::Instant::now() + *WAIT;
    let last = loop {
        assert!(std::time::Instant::now() < end, "its stop is never heard");
        tokio::time::sleep(Duration::from_millis(100)).await;
        let obs = prober.observe_hot(&[], true).await.unwrap();
        if obs.stopped.contains(&id(&pane)) {
            break obs.heard[&id(&pane)].expect("when it was last at work");
        }
    };
    // Dated from when it was last counted at work: after it was seen writing (the test
    // looks for its stop once a second), not from its first bytes seconds before.
    assert!(
        last <= stopped + 100 && last + 1_600 >= stopped,
        "its last work at {last}, its stop seen at {stopped}"
    );
    // No wake-up invents more, and the noise is not heard as work.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let again = prober.observe_hot(&[], true).await.unwrap();
    assert_eq!(again.heard[&id(&pane)], Some(last), "quiet stays quiet");
}

#[tokio::test]
async fn a_look_that_learnt_nothing_hands_over_no_panes_and_still_hears_output() {
    let server = TmuxServer::start();
    // Writes a line of 48 bytes every 200 ms with no process started per line (a process
    // started below a pane is news of its own): bash's `read -t` is a builtin.
    let pane = server.new_window(&[
        "bash",
        "-c",
        "while :; do echo 01234567890123456789012345678901234567890123456; read -t 0.2 <> /dev/null; done",
    ]);
    let prober = hearing(&server, &[&pane]);
    let first = prober.observe_hot(&[], false).await.unwrap();
    assert!(!first.same, "the first look tells the panes");
    assert!(first.listing.panes.iter().any(|p| p.id == id(&pane)));
    // Quiet looks: nothing new of the panes, output still heard as it happens.
    let end = std::time::Instant::now() + *WAIT;
    loop {
        assert!(
            std::time::Instant::now() < end,
            "every look tells the panes"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let obs = prober.observe_hot(&[], false).await.unwrap();
        if obs.same {
            assert!(obs.listing.panes.is_empty());
            assert!(obs.listing.server_pid.is_some(), "the head is told");
            if let (Some(Some(t)), false) =
                (obs.heard.get(&id(&pane)), obs.stopped.contains(&id(&pane)))
            {
                let now = agentwatch::adapters::wall_ms();
                assert!(now.saturating_sub(*t) < 1_000, "heard at {t}, now {now}");
                break;
            }
        }
    }
    // One pane read whole (a card on screen): that pane only, the others stand.
    let quiet = server.new_window(&["sleep", "1000"]);
    let end = std::time::Instant::now() + *WAIT;
    while !prober
        .observe_hot(&[], false)
        .await
        .unwrap()
        .listing
        .panes
        .iter()
        .any(|p| p.id == id(&quiet))
    {
        assert!(
            std::time::Instant::now() < end,
            "the new pane is never told"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let end = std::time::Instant::now() + *WAIT;
    loop {
        assert!(std::time::Instant::now() < end, "never a partial look");
        tokio::time::sleep(Duration::from_millis(100)).await;
        let obs = prober.observe_hot(&[id(&quiet)], false).await.unwrap();
        if obs.partial {
            let ids: Vec<PaneId> = obs.listing.panes.iter().map(|p| p.id).collect();
            assert_eq!(ids, [id(&quiet)]);
            break;
        }
    }
    // Asked for the panes: told, changed or not.
    let whole = prober.observe_hot(&[], true).await.unwrap();
    assert!(!whole.same);
    assert!(whole.listing.panes.iter().any(|p| p.id == id(&pane)));
    // A new pane: the next look that sees it tells the panes.
    let new = server.new_window(&["sleep", "1000"]);
    let end = std::time::Instant::now() + *WAIT;
    loop {
        assert!(
            std::time::Instant::now() < end,
            "the new pane is never told"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let obs = prober.observe_hot(&[], false).await.unwrap();
        if obs.listing.panes.iter().any(|p| p.id == id(&new)) {
            assert!(!obs.same);
            break;
        }
    }
}

#[tokio::test]
async fn a_redraw_after_a_stop_is_not_work_and_work_after_it_is() {
    let server = TmuxServer::start();
    let dir = server.dir.path();
    let (stop, again) = (dir.join("stopped"), dir.join("again"));
    // At work, then quiet but for a 60-byte redraw once a second (codex at its approval
    // prompt does so), then at work again.
    let script = format!(
        "i=0; while [ $i -lt 150 ]; do echo x; sleep 0.02; i=$((i+1)); done
         : > {stop}
         j=0; while [ $j -lt 4 ]; do
           printf '\\0337%s\\0338' 012345678901234567890123456789012345678901234567890123456789
           sleep 1; j=$((j+1))
         done
         : > {again}
         while :; do echo y; sleep 0.02; done",
        stop = stop.display(),
        again = again.display()
    );
    let pane = server.new_window(&["sh", "-c", &script]);
    let prober = hearing(&server, &[&pane]);
    let end = std::time::Instant::now() + *WAIT;
    // Its stop is known...
    loop {
        assert!(std::time::Instant::now() < end, "its stop is never known");
        tokio::time::sleep(Duration::from_millis(100)).await;
        let obs = prober.observe_hot(&[], true).await.unwrap();
        if stop.exists() && obs.stopped.contains(&id(&pane)) {
            break;
        }
    }
    // ...and stays known through the redraws: never said to be at work.
    let mut polls = 0;
    while !again.exists() {
        assert!(std::time::Instant::now() < end, "it never works again");
        tokio::time::sleep(Duration::from_millis(100)).await;
        let obs = prober.observe_hot(&[], true).await.unwrap();
        if again.exists() {
            break;
        }
        polls += 1;
        assert!(
            obs.stopped.contains(&id(&pane)),
            "a redraw taken for work: {:?}",
            obs.heard.get(&id(&pane))
        );
    }
    assert!(polls >= 20, "the redraws were watched: {polls} polls");
    // At work again: said so within a second or so.
    let back = agentwatch::adapters::wall_ms();
    loop {
        assert!(
            std::time::Instant::now() < end,
            "its work is never heard again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let obs = prober.observe_hot(&[], true).await.unwrap();
        if !obs.stopped.contains(&id(&pane)) {
            if let Some(Some(t)) = obs.heard.get(&id(&pane)) {
                if *t >= back {
                    break;
                }
            }
        }
    }
    let took = agentwatch::adapters::wall_ms().saturating_sub(back);
    assert!(took <= 2_500, "its work heard {took} ms after it began");
}

#[tokio::test]
async fn work_after_a_long_quiet_is_heard_within_a_second_or_so() {
    let server = TmuxServer::start();
    let go = server.dir.path().join("go");
    // Quiet, but for an idle claude's eventfd writes (8 bytes to /dev/null every 300 ms), until
    // told to go; then at work.
    let script = format!(
        "while [ ! -e {go} ]; do printf 12345678 > /dev/null; sleep 0.3; done
         while :; do echo 01234567890123456789012345678901234567890123456; sleep 0.05; done",
        go = go.display()
    );
    let pane = server.new_window(&["sh", "-c", &script]);
    let prober = hearing(&server, &[&pane]);
    // Twelve seconds quiet (read once a second from its tenth, and then only when the tmux
    // server read anything): stopped all along, never taken for work.
    let end = std::time::Instant::now() + Duration::from_secs(12);
    while std::time::Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let obs = prober.observe_hot(&[], true).await.unwrap();
        assert!(obs.stopped.contains(&id(&pane)), "{:?}", obs.heard);
    }
    std::fs::write(&go, "").unwrap();
    let began = std::time::Instant::now();
    heard_at_work(&prober, &pane).await;
    assert!(
        began.elapsed() < Duration::from_millis(2_500),
        "{:?}",
        began.elapsed()
    );
}
