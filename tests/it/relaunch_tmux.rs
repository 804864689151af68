//! `agentwatch spawn` and the relaunch key against a real tmux server: the same session id,
//! the same pane and directory, never a fresh start without `R`, and nothing from a pane,
//! a directory or an id ever executed.

use crate::support::argv;

use std::path::Path;
use std::time::Duration;

use crate::support::{self, press, TmuxServer, WAIT};
use agentwatch::adapters::poll::Prober;
use agentwatch::adapters::tmux::client::Tmux;
use agentwatch::config::Config;
use agentwatch::core::card::{Card, Life};
use agentwatch::core::msg::Action;
use agentwatch::core::pane::{Exit, PaneId};
use agentwatch::core::state::State;
use agentwatch::run::{look_once, Io};

fn agentwatch(server: &TmuxServer, args: &[&str]) -> std::process::Output {
    let mut cmd = server.agentwatch();
    cmd.arg("-S")
        .arg(&server.socket)
        .args(args)
        .output()
        .unwrap()
}

fn spawn(server: &TmuxServer, args: &[&str]) -> String {
    let mut all = vec!["spawn"];
    all.extend_from_slice(args);
    let out = agentwatch(server, &all);
    assert!(
        out.status.success(),
        "spawn failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn watcher(server: &TmuxServer) -> (State, Io) {
    let tmux =
        Tmux::new(server.socket.clone(), Duration::from_secs(5)).with_env(server.env_pairs());
    // Auto-resume off: these tests press r themselves.
    let mut config = Config::default();
    config.auto_resume.enabled = false;
    let state = State::new(&config, false, String::new(), (200, 50));
    let crashes = server.dir.path().join("crashes");
    (
        state,
        Io::new(Prober::new(tmux), Some(crashes)).with_stores(server.stores()),
    )
}

fn card<'a>(state: &'a State, pane: &str) -> Option<&'a Card> {
    let id = PaneId::parse(pane)?;
    state.cards.iter().find(|c| c.pane.id == id)
}

async fn wait_life(state: &mut State, io: &Io, pane: &str, want: fn(Life) -> bool) {
    if support::look_until(state, io, *WAIT, |s| {
        card(s, pane).is_some_and(|c| want(c.life))
    })
    .await
    {
        return;
    }
    panic!(
        "{pane} never reached the wanted state: {:?} {:?} {:?}",
        card(state, pane).map(|c| c.life),
        card(state, pane).map(|c| &c.notice),
        card(state, pane).map(|c| &c.pane)
    );
}

fn notice(state: &State, pane: &str) -> String {
    card(state, pane)
        .and_then(|c| c.notice.as_ref())
        .map(|n| n.text.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_crashed_claude_is_resumed_with_the_same_id_in_the_same_pane_and_directory() {
    let server = TmuxServer::start();
    let work = server.dir.path().join("proj");
    std::fs::create_dir_all(&work).unwrap();
    server.write_plan(
        "claude",
        "say first run\nsleep 100\nexit 1\n---\nsay resumed\nhang\n",
    );
    let pane = spawn(&server, &["claude", "--cwd", work.to_str().unwrap()]);
    assert!(pane.starts_with('%'), "{pane}");
    assert!(server
        .tmux_ok(&["list-sessions", "-F", "#{session_name}"])
        .contains("agents"));

    let (mut state, io) = watcher(&server);
    wait_life(&mut state, &io, &pane, |l| l == Life::Dead(Exit::Code(1))).await;
    let first = server.wait_log(&pane, 1);
    assert_eq!(first.len(), 1);
    let a0 = argv(&first[0]);
    assert_eq!(a0[0], "--session-id");
    let id = a0[1].clone();
    assert!(agentwatch::core::agent::is_uuid(&id), "{id}");
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_session_id}"), id);

    press(&mut state, &io, &pane, Action::Relaunch).await;
    assert_eq!(notice(&state, &pane), format!("resumed {}", &id[..8]));
    wait_life(&mut state, &io, &pane, |l| l == Life::Running).await;
    let runs = server.wait_log(&pane, 2);
    assert_eq!(runs.len(), 2);
    assert_eq!(argv(&runs[1]), ["--resume", id.as_str()]);
    let canon = std::fs::canonicalize(&work).unwrap();
    assert_eq!(runs[1]["cwd"].as_str().unwrap(), canon.to_str().unwrap());
    assert_eq!(runs[1]["pane"].as_str().unwrap(), pane, "same pane id");

    // The crash record kept the first run's output.
    let records =
        agentwatch::adapters::store::crash_records::load_all(&server.dir.path().join("crashes"));
    assert_eq!(records.len(), 1);
    assert!(records[0].1.output.contains("first run"));
    assert_eq!(records[0].1.exit, "process exited (code 1)");
    assert_eq!(records[0].1.session_id.as_deref(), Some(id.as_str()));

    // Relaunch on the live pane does nothing and says so.
    press(&mut state, &io, &pane, Action::Relaunch).await;
    assert_eq!(notice(&state, &pane), "still running: nothing to relaunch");
    assert_eq!(server.log_entries_for(&pane).len(), 2);
}

/// tmux shows a program it cannot exec as the pane's exit 1, like a crash: a relaunch whose
/// program has gone (uninstalled, an upgrade half done) is refused with the reason, and
/// nothing runs, until it is back.
#[tokio::test]
async fn a_relaunch_whose_program_is_gone_says_so_and_starts_nothing() {
    let server = TmuxServer::start();
    server.write_plan(
        "claude",
        "say first run\nsleep 100\nexit 1\n---\nsay resumed\nhang\n",
    );
    let pane = spawn(&server, &["claude"]);
    let (mut state, io) = watcher(&server);
    wait_life(&mut state, &io, &pane, |l| l == Life::Dead(Exit::Code(1))).await;
    let id = argv(&server.wait_log(&pane, 1)[0])[1].clone();
    let dead_pid = server.pane_field(&pane, "#{pane_pid}");
    let (installed, aside) = (
        server.bin_dir.join("claude"),
        server.dir.path().join("claude-aside"),
    );
    std::fs::rename(&installed, &aside).unwrap();

    press(&mut state, &io, &pane, Action::Relaunch).await;
    assert_eq!(
        notice(&state, &pane),
        "relaunch failed: claude is not on agentwatch's PATH, which the pane gets"
    );
    assert_eq!(server.pane_field(&pane, "#{pane_dead}"), "1");
    assert_eq!(
        server.pane_field(&pane, "#{pane_pid}"),
        dead_pid,
        "not respawned"
    );
    assert_eq!(server.log_entries_for(&pane).len(), 1);
    let records = || {
        agentwatch::adapters::store::crash_records::load_all(&server.dir.path().join("crashes"))
            .len()
    };
    assert_eq!(records(), 0, "no record of a death that stays on screen");

    std::fs::rename(&aside, &installed).unwrap();
    press(&mut state, &io, &pane, Action::Relaunch).await;
    assert_eq!(notice(&state, &pane), format!("resumed {}", &id[..8]));
    wait_life(&mut state, &io, &pane, |l| l == Life::Running).await;
    assert_eq!(
        argv(&server.wait_log(&pane, 2)[1]),
        ["--resume", id.as_str()]
    );
}

#[tokio::test]
async fn without_a_session_id_r_starts_nothing_and_only_capital_r_starts_fresh() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan("claude", "exit 1\n---\nhang\n");
    let pane = server.new_window(&["claude"]);
    let (mut state, io) = watcher(&server);
    wait_life(&mut state, &io, &pane, |l| {
        l.is_dead() && l != Life::Reading
    })
    .await;

    press(&mut state, &io, &pane, Action::Relaunch).await;
    assert_eq!(
        notice(&state, &pane),
        "no session id: R starts a fresh session"
    );
    look_once(&mut state, &io).await;
    assert_eq!(server.log_entries_for(&pane).len(), 1, "r started nothing");
    assert_eq!(server.pane_field(&pane, "#{pane_dead}"), "1");

    press(&mut state, &io, &pane, Action::RelaunchFresh).await;
    wait_life(&mut state, &io, &pane, |l| l == Life::Running).await;
    let runs = server.wait_log(&pane, 2);
    assert_eq!(runs.len(), 2);
    let a1 = argv(&runs[1]);
    assert_eq!(a1[0], "--session-id");
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_session_id}"), a1[1]);
    assert!(notice(&state, &pane).starts_with("started fresh: new session "));
}

#[tokio::test]
async fn hostile_directories_arguments_and_ids_never_execute_anything() {
    let server = TmuxServer::start();
    let canary = server.dir.path().join("pwned");
    let c = canary.to_str().unwrap();
    let hostile = format!("d $(touch {c}) `touch {c}` ; #{{pane_id}} 'q\" \nnl;");
    let work = server.dir.path().join(&hostile);
    std::fs::create_dir_all(&work).unwrap();
    server.write_plan("claude", "exit 1\n---\nhang\n");
    let extra = [
        format!("$(touch {c})"),
        "#{pane_id}".to_string(),
        "x;".to_string(),
        "a\nb".to_string(),
    ];
    let mut args = vec!["claude", "--cwd", work.to_str().unwrap(), "--"];
    args.extend(extra.iter().map(String::as_str));
    let pane = spawn(&server, &args);

    let (mut state, io) = watcher(&server);
    wait_life(&mut state, &io, &pane, |l| l == Life::Dead(Exit::Code(1))).await;
    press(&mut state, &io, &pane, Action::Relaunch).await;
    wait_life(&mut state, &io, &pane, |l| l == Life::Running).await;
    let runs = server.wait_log(&pane, 2);
    assert_eq!(runs.len(), 2);
    let canon = std::fs::canonicalize(&work).unwrap();
    for run in &runs {
        assert_eq!(run["cwd"].as_str().unwrap(), canon.to_str().unwrap());
        let a = argv(run);
        assert_eq!(
            &a[2..],
            &extra[..],
            "extra args are passed verbatim and kept"
        );
    }
    assert_eq!(argv(&runs[1])[0], "--resume");
    assert!(!Path::new(&canary).exists(), "something was executed");

    // An id that is not a UUID is refused, never passed on.
    server.write_plan("codex", "exit 1\n");
    let p2 = spawn(&server, &["codex"]);
    wait_life(&mut state, &io, &p2, |l| l.is_dead() && l != Life::Reading).await;
    let bad = format!("$(touch {c})");
    server.tmux_ok(&[
        "set-option",
        "-p",
        "-t",
        &p2,
        "@agentwatch_session_id",
        &bad,
    ]);
    look_once(&mut state, &io).await;
    press(&mut state, &io, &p2, Action::Relaunch).await;
    assert!(
        notice(&state, &p2).contains("does not look like a codex id"),
        "{}",
        notice(&state, &p2)
    );
    assert_eq!(server.log_entries_for(&p2).len(), 1);
    assert!(!Path::new(&canary).exists());
}

#[test]
fn spawn_refuses_unknown_kinds_missing_programs_and_directories_with_exit_2() {
    let server = TmuxServer::start();
    let out = agentwatch(&server, &["spawn", "klaude"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown agent kind \"klaude\""));
    let out = agentwatch(&server, &["spawn", "amp"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("amp not found on PATH"));
    let out = agentwatch(&server, &["spawn", "claude", "--cwd", "/no/such/dir"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cwd /no/such/dir: no such directory"));
}

/// A fresh machine (or one after a reboot): `$TMUX_TMPDIR/tmux-<uid>` does not exist yet,
/// and tmux, given the socket with `-S`, neither makes it nor fails (it says "error
/// creating …" and exits 0). spawn makes it, private, and the agent runs; where the server
/// still cannot be created, spawn exits 2 with tmux's words.
#[test]
fn spawn_outside_tmux_with_a_fresh_tmux_tmpdir_starts_the_agent_or_says_tmuxs_words() {
    let server = TmuxServer::start();
    server.write_plan("claude", "sleep 300\nexit 0\n");
    let fresh = server.dir.path().join("fresh");
    std::fs::create_dir(&fresh).unwrap();
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let own = fresh.join(format!("tmux-{uid}"));
    let started = server.started_on(own.join("default"));
    let out = server
        .agentwatch()
        .env("TMUX_TMPDIR", &fresh)
        .args(["spawn", "claude"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let pane = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(pane.starts_with('%'), "{pane:?} {said}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&own).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "private, as tmux makes it");
    let listed = started.tmux(&[
        "list-panes",
        "-a",
        "-F",
        "#{pane_id} #{pane_current_command}",
    ]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains(&pane),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    // A TMUX_TMPDIR that does not exist at all: tmux cannot make its socket; spawn says so.
    let out = server
        .agentwatch()
        .env("TMUX_TMPDIR", fresh.join("no/such/dir"))
        .args(["spawn", "claude"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("No such file or directory"), "{said}");
    assert!(out.stdout.is_empty(), "no pane id: {:?}", out.stdout);
}

#[test]
fn spawn_keeps_a_pane_that_dies_at_once_and_records_everything_on_it() {
    let server = TmuxServer::start();
    server.write_plan("gemini", "exit 7\n");
    let dir = server.dir.path().to_str().unwrap().to_string();
    let pane = spawn(
        &server,
        &[
            "gemini", "--cwd", &dir, "--name", "g #1", "--target", "team",
        ],
    );
    let exit = server.wait_pane_exit(&pane, *WAIT);
    assert_eq!(exit, "status 7");
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_agent}"), "gemini");
    assert_eq!(server.pane_field(&pane, "#{window_name}"), "g #1");
    assert_eq!(server.pane_field(&pane, "#{session_name}"), "team");
    let canon = std::fs::canonicalize(&dir).unwrap();
    assert_eq!(
        server.pane_field(&pane, "#{@agentwatch_cwd}"),
        canon.to_str().unwrap()
    );
    let id = server.pane_field(&pane, "#{@agentwatch_session_id}");
    assert_eq!(
        argv(&server.log_entries_for(&pane)[0]),
        ["--session-id", id.as_str()]
    );
    // A second spawn lands in the same session, in a new window.
    let p2 = spawn(&server, &["gemini", "--target", "team"]);
    assert_ne!(p2, pane);
    assert_eq!(server.pane_field(&p2, "#{session_name}"), "team");
}

#[tokio::test]
async fn a_pane_that_vanishes_before_the_relaunch_is_reported_once() {
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan("claude", "exit 1\n");
    let pane = server.new_window(&[
        "claude",
        "--session-id",
        "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11",
    ]);
    let (mut state, io) = watcher(&server);
    wait_life(&mut state, &io, &pane, |l| l == Life::Dead(Exit::Code(1))).await;
    server.tmux_ok(&["kill-pane", "-t", &pane]);
    press(&mut state, &io, &pane, Action::Relaunch).await;
    assert_eq!(notice(&state, &pane), "relaunch failed: the pane is gone");
    look_once(&mut state, &io).await;
    assert!(card(&state, &pane).is_none(), "the card goes with the pane");
    assert!(
        state.cards.iter().all(|c| c.notice.is_none()),
        "no other error anywhere"
    );
}
