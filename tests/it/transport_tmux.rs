//! The control-mode transport: steady polling starts no tmux process; when the control
//! client dies agentwatch keeps working over fork+exec at once and reconnects with backoff,
//! never in a storm. tmux calls are counted with a logging `tmux` wrapper first on PATH.

use crate::support;
use std::time::{Duration, Instant};

use crate::support::{calls, tmux_wrapper as wrapper, TmuxServer, WAIT};

fn start(server: &TmuxServer, extra: &[(&str, &str)]) -> (support::UiServer, std::path::PathBuf) {
    let (path, log) = wrapper(server);
    let home = server.dir.path().to_string_lossy().into_owned();
    let (data, state) = (format!("{home}/data"), format!("{home}/state"));
    let sock = server.socket.to_string_lossy().into_owned();
    let mut env = vec![
        ("XDG_DATA_HOME", data.as_str()),
        ("XDG_STATE_HOME", state.as_str()),
        ("PATH", path.as_str()),
    ];
    env.extend_from_slice(extra);
    let ui = server.start_ui_env(
        100,
        30,
        &env,
        &[
            "env",
            &format!("PATH={path}"),
            env!("CARGO_BIN_EXE_agentwatch"),
            "-S",
            &sock,
        ],
    );
    (ui, log)
}

#[test]
fn steady_polling_over_control_mode_starts_no_tmux_process() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    server.new_window(&["claude"]);
    let (ui, log) = start(&server, &[]);
    ui.wait_for_text("● running", *WAIT);
    // Steady once its control client is attached: from then on every call goes over it
    // (option writes, previews).
    support::wait_until("agentwatch's control client is attached", *WAIT, || {
        server
            .tmux_ok(&["list-clients", "-F", "#{client_control_mode}"])
            .lines()
            .any(|l| l == "1")
    });
    let before = calls(&log).len();
    // Six ticks: a span, not a wait, in none of which a tmux process may start.
    support::holds_for("no tmux process starts", Duration::from_secs(3), || {
        let during = calls(&log)[before..].to_vec();
        if !during.is_empty() {
            eprintln!("tmux processes started in steady state: {during:?}");
        }
        during.is_empty()
    });
    let all = calls(&log);
    assert_eq!(
        all.iter().filter(|c| c.contains("-C attach")).count(),
        1,
        "{all:?}"
    );
}

#[test]
fn a_dead_control_client_falls_back_at_once_and_reconnects_with_backoff() {
    let server = TmuxServer::start();
    server.write_plan("claude", "wait go\nexit 4\n");
    server.new_window(&["claude"]);
    let (ui, log) = start(&server, &[("AGENTWATCH_LOG", "info")]);
    ui.wait_for_text("● running", *WAIT);
    // Kill the control client (a client of our private server) every time it comes back.
    let kill_control = || {
        let out = server.tmux_ok(&["list-clients", "-F", "#{client_control_mode} #{client_pid}"]);
        for l in out.lines() {
            if let Some(pid) = l.strip_prefix("1 ") {
                std::process::Command::new("kill")
                    .args(["-9", pid])
                    .status()
                    .unwrap();
            }
        }
    };
    kill_control();
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    // Still watching: the death is seen over fork+exec.
    ui.wait_for_text("process exited (code 4)", *WAIT);
    // Not a wait: the fault under test, a connection killed every 500 ms for 6 s (the
    // bounds below count the attempts that 1-2-4 s backoff allows in that time).
    for _ in 0..12 {
        kill_control();
        std::thread::sleep(Duration::from_millis(500));
    }
    let attaches = calls(&log)
        .iter()
        .filter(|c| c.contains("-C attach"))
        .count();
    // 6 s of a killed connection: 1 s, 2 s, 4 s backoff allow about 3 more attempts, not 12.
    assert!((2..=5).contains(&attaches), "{attaches} attaches");
    let home = server.dir.path().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(format!("{home}/state/agentwatch/agentwatch.log")).unwrap();
    assert!(text.contains("transport: fork+exec"), "{text}");
    assert!(text.contains("transport: control mode"), "{text}");
}

/// `a ; b ; c` on one control-mode line: one reply each, up to and including the first
/// that fails (tmux skips the rest of the line), and the replies of later lines stay
/// matched to their own commands.
#[tokio::test]
async fn a_command_list_is_one_line_that_stops_at_the_first_failure_and_keeps_replies_in_order() {
    use agentwatch::adapters::tmux::control::{Control, Notices};
    use agentwatch::adapters::tmux::reach::Reach;
    let server = TmuxServer::start();
    let session = server
        .tmux_ok(&["display-message", "-p", "#{session_name}"])
        .trim()
        .to_string();
    let env = server.env_pairs();
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v)
        .unwrap();
    let tmux = agentwatch::adapters::which::find_in("tmux", path).unwrap();
    let control = Control::connect(
        &Reach::Local,
        tmux.as_os_str(),
        &server.socket,
        &session,
        &env,
        *WAIT,
        std::sync::Arc::new(Notices::default()),
    )
    .await
    .unwrap();
    let say = |w: &'static str| vec!["display-message", "-p", w];
    let ok = control
        .run_list(&[&say("a")[..], &say("b")[..]], *WAIT)
        .await
        .unwrap();
    assert_eq!(ok, [Ok(b"a\n".to_vec()), Ok(b"b\n".to_vec())]);

    let failed = control
        .run_list(
            &[
                &say("a")[..],
                &["set-option", "-p", "-t", "%99", "@x", "1"][..],
                &["set-option", "-g", "@ran", "yes"][..],
            ],
            *WAIT,
        )
        .await
        .unwrap();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert_eq!(failed[0], Ok(b"a\n".to_vec()));
    assert!(
        failed[1].as_ref().is_err_and(|e| e.0.contains("%99")),
        "{failed:?}"
    );
    // A line that does not parse answers with one error.
    let unparsed = control
        .run_list(&[&["no-such-command"][..], &say("c")[..]], *WAIT)
        .await
        .unwrap();
    assert_eq!(unparsed.len(), 1, "{unparsed:?}");
    assert!(unparsed[0].is_err());
    // Later lines: each its own reply, and what followed the failure never ran.
    let next = control
        .run_many(
            &[&say("next")[..], &["show-options", "-gqv", "@ran"][..]],
            *WAIT,
        )
        .await
        .unwrap();
    assert_eq!(next, [Ok(b"next\n".to_vec()), Ok(Vec::new())]);
}

#[test]
fn the_cards_on_screen_are_read_through_a_format_kept_in_the_server_and_gone_after_quitting() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let pane = server.new_window(&["claude"]);
    let (ui, _) = start(&server, &[]);
    ui.wait_for_text("● running", *WAIT);
    // The dashboard reads its card once a second by naming its format, kept in a server
    // option of its own: a hook's word that only a whole record carries reaches the card.
    let records = || {
        server
            .tmux_ok(&["show-options", "-s"])
            .lines()
            .filter(|l| l.starts_with("@agentwatch_record_"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    support::wait_until("the record format is in the server", *WAIT, || {
        records().len() == 1
    });
    assert!(records()[0].contains("#{pane_id}"), "{:?}", records());
    server.tmux_ok(&["set-option", "-p", "-t", &pane, "@pane_status", "waiting"]);
    ui.wait_for_text("waiting", *WAIT);
    ui.send_keys(&["q"]);
    ui.wait_exit(*WAIT);
    assert_eq!(records(), Vec::<String>::new(), "unset on the way out");
}

/// Two tasks that ask at the same moment share one write, so the server wakes once for both
/// (a wake-up walks all its panes): a call waiting for its answer does not hold the
/// connection, and each still gets its own answer.
#[tokio::test]
async fn asks_made_at_once_by_two_tasks_share_one_write_and_get_their_own_answers() {
    use std::sync::atomic::Ordering;
    let server = TmuxServer::start();
    let tmux = control_client(&server);
    // Connected by the first call.
    assert_eq!(tmux.ask(&say("first")).await.unwrap(), b"first\n");
    let before = tmux.notices().writes.load(Ordering::SeqCst);
    assert!(before >= 1, "the first call went over control mode");
    let (say_a, say_b) = (say("a"), say("b"));
    let (a, b) = tokio::join!(tmux.ask(&say_a), tmux.ask(&say_b));
    assert_eq!(a.unwrap(), b"a\n");
    assert_eq!(b.unwrap(), b"b\n");
    assert_eq!(
        tmux.notices().writes.load(Ordering::SeqCst) - before,
        1,
        "the second ask went out with the first, not after its answer"
    );
    // One after the other, each is its own write.
    tmux.ask(&say("c")).await.unwrap();
    assert_eq!(tmux.notices().writes.load(Ordering::SeqCst) - before, 2);
}

/// A question that can wait (the supervisor's claim, renewed every 2 s) rides with the next
/// other one, in its write, and is answered with it; with no other question in its window it
/// goes alone at the window's end: on a real server, answers and all.
#[tokio::test]
async fn a_question_that_can_wait_rides_with_the_next_one_or_goes_alone_in_time() {
    use std::sync::atomic::Ordering;
    let server = TmuxServer::start();
    let tmux = std::sync::Arc::new(control_client(&server));
    assert_eq!(tmux.ask(&say("first")).await.unwrap(), b"first\n");
    let writes = || tmux.notices().writes.load(Ordering::SeqCst);
    let before = writes();
    let rider = std::sync::Arc::clone(&tmux);
    let started = Instant::now();
    let rode = tokio::spawn(async move {
        let out = rider
            .ask_riding(&say("claim"), Duration::from_secs(60))
            .await;
        (out, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(writes(), before, "held while nothing else is asked");
    assert_eq!(tmux.ask(&say("head")).await.unwrap(), b"head\n");
    let (out, took) = rode.await.unwrap();
    assert_eq!(out.unwrap(), b"claim\n");
    assert_eq!(writes() - before, 1, "one write for both");
    assert!(
        took < Duration::from_secs(30),
        "answered with the other: {took:?}"
    );
    // Alone: at the end of its window.
    let started = Instant::now();
    let out = tmux
        .ask_riding(&say("alone"), Duration::from_millis(500))
        .await;
    assert_eq!(out.unwrap(), b"alone\n");
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert_eq!(writes() - before, 2);
}

/// agentwatch's tmux client of `server`, over control mode.
fn control_client(server: &TmuxServer) -> agentwatch::adapters::tmux::client::Tmux {
    agentwatch::adapters::tmux::client::Tmux::new(server.socket.clone(), Duration::from_secs(5))
        .with_env(server.env_pairs())
        .with_control_mode(true)
}

/// One command that prints `what`.
fn say(what: &str) -> Vec<Vec<String>> {
    vec![vec![
        "display-message".into(),
        "-p".into(),
        what.to_string(),
    ]]
}
