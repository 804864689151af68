//! Resume on the real CLIs' rules (issue 14), against a real tmux server and fake agents
//! that keep those rules (`examples/fake_agent.rs`): a claude killed before its first
//! message is started again under its id, never resumed; a claude stopped with SIGTERM
//! (exit 143) is not resumed; a resume the agent answers with "no such session" is not
//! repeated; `gemini --resume latest` names no session; a relaunch refused for a lasting
//! cause keeps its reason and its budget.

use crate::support::argv;

use std::time::Duration;

use crate::support::{self, TmuxServer, LONG, WAIT};
use agentwatch::core::card::{Auto, Card};
use agentwatch::core::msg::Action;
use agentwatch::core::pane::PaneId;
use agentwatch::core::state::State;
use agentwatch::core::supervisor::Hold;
use agentwatch::run::Io;

fn watcher(server: &TmuxServer) -> (State, Io) {
    server.supervisor(&[1])
}

fn card<'a>(state: &'a State, pane: &str) -> Option<&'a Card> {
    let id = PaneId::parse(pane).unwrap();
    state.cards.iter().find(|c| c.pane.id == id)
}

/// Looks until the card of `pane` is held as `want` says (panics after [`WAIT`], showing
/// what it is instead); returns the hold.
async fn until_held(state: &mut State, io: &Io, pane: &str, want: impl Fn(&Hold) -> bool) -> Hold {
    let ok = support::look_until(state, io, *WAIT, |s| {
        held(s, pane).is_some_and(|h| want(&h))
    })
    .await;
    assert!(ok, "{:?}", card(state, pane).map(|c| &c.auto));
    held(state, pane).unwrap()
}

/// Looks for the whole of `span` (long past the 1 s backoff), panicking if `pane` is
/// started more than `runs` times in all: a span, not a wait, as nothing marks "never".
async fn no_run_beyond(
    state: &mut State,
    io: &Io,
    server: &TmuxServer,
    pane: &str,
    runs: usize,
    span: Duration,
) {
    let what = format!("{pane} is started no more than {runs} times");
    support::looks_hold(state, io, &what, span, |_| {
        server.log_entries_for(pane).len() <= runs
    })
    .await;
}

fn held(state: &State, pane: &str) -> Option<Hold> {
    match &card(state, pane)?.auto {
        Auto::Held(h) => Some(h.clone()),
        _ => None,
    }
}

fn journal(server: &TmuxServer) -> Vec<agentwatch::core::msg::Event> {
    agentwatch::adapters::store::journal::read(&server.dir.path().join("journal.jsonl"))
}

fn kill(pid: &serde_json::Value, sig: &str) {
    let pid = pid.as_u64().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-s", sig, &pid])
        .status()
        .unwrap();
}

/// `agentwatch status --json`'s row of `pane`.
fn status_row(server: &TmuxServer, pane: &str) -> serde_json::Value {
    status(server)
        .into_iter()
        .find(|r| r["pane_id"] == pane)
        .unwrap_or_else(|| panic!("{pane} is not in status --json"))
}

/// `agentwatch status --json` rows.
fn status(server: &TmuxServer) -> Vec<serde_json::Value> {
    let out = server
        .agentwatch_command(&["status", "--json"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    })
}

#[tokio::test]
async fn a_claude_killed_before_its_first_message_comes_back_under_its_id_never_resumed() {
    let server = TmuxServer::start();
    let store = server.agent_store("claude");
    // Run 0 waits and is killed before any message; run 1 gets a message, then crashes;
    // run 2 (a resume, now that there is a transcript) waits.
    server.write_plan(
        "claude",
        "hang\n---\nmessage\nsleep 300\nexit 1\n---\nhang\n",
    );
    let pane = server.spawn_agent("claude");
    let (mut state, io) = watcher(&server);
    let runs = server.wait_log(&pane, 1);
    assert!(support::look_until(&mut state, &io, *WAIT, |s| card(s, &pane).is_some()).await);
    let id = argv(&runs[0])[1].clone();
    assert_eq!(argv(&runs[0]), ["--session-id", id.as_str()]);
    kill(&runs[0]["pid"], "KILL");
    let got = support::look_until(&mut state, &io, *LONG, |_| {
        server.log_entries_for(&pane).len() >= 3
    })
    .await;
    let runs = server.log_entries_for(&pane);
    assert!(got, "{runs:#?}");
    // No transcript: the same id started again, not `--resume` (which claude refuses).
    assert_eq!(argv(&runs[1]), ["--session-id", id.as_str()], "{runs:#?}");
    // After its first message there is one: that run's crash is resumed.
    assert_eq!(argv(&runs[2]), ["--resume", id.as_str()], "{runs:#?}");
    assert!(store.join("projects").is_dir());
    let ev = journal(&server);
    assert!(
        ev.iter().any(|e| e.event == "resumed"
            && e.detail
                .as_deref()
                .is_some_and(|d| d.contains("started again"))),
        "{ev:#?}"
    );
}

#[tokio::test]
async fn claude_stopped_with_sigterm_exits_143_and_is_not_resumed() {
    let server = TmuxServer::start();
    server.write_plan("claude", "hang\n");
    let pane = server.spawn_agent("claude");
    let (mut state, io) = watcher(&server);
    let runs = server.wait_log(&pane, 1);
    assert!(support::look_until(&mut state, &io, *WAIT, |s| card(s, &pane).is_some()).await);
    kill(&runs[0]["pid"], "TERM");
    let want = Hold::Deliberate("exit 143 (SIGTERM)".into());
    until_held(&mut state, &io, &pane, |h| *h == want).await;
    // Stays so: nothing is started.
    no_run_beyond(&mut state, &io, &server, &pane, 1, Duration::from_secs(3)).await;
    assert_eq!(server.log_entries_for(&pane).len(), 1);
    let row = status_row(&server, &pane);
    assert_eq!(row["exit_code"], 143);
    assert_eq!(
        row["reason"],
        "not auto-resumed: exit 143 (SIGTERM) is a deliberate stop"
    );
}

#[tokio::test]
async fn a_resume_the_agent_has_no_session_for_is_said_and_not_repeated() {
    let server = TmuxServer::start();
    let id = "ses_dcee8e322fferoOTCq05rLS6Ah";
    let sessions = server.agent_dir.join("opencode/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join(id), "").unwrap();
    // It crashes; by the time it is resumed its session is gone (deleted elsewhere).
    server.write_plan("opencode", "sleep 300\nexit 1\n");
    let pane = server.new_window(&["opencode", "-s", id]);
    let (mut state, io) = watcher(&server);
    server.wait_log(&pane, 1);
    support::look_until(&mut state, &io, *WAIT, |s| {
        card(s, &pane).is_some_and(|c| c.life.is_dead())
    })
    .await;
    std::fs::remove_file(sessions.join(id)).unwrap();
    let want = Hold::NoSession(id.into());
    until_held(&mut state, &io, &pane, |h| *h == want).await;
    no_run_beyond(&mut state, &io, &server, &pane, 2, Duration::from_secs(3)).await;
    let runs = server.log_entries_for(&pane);
    assert_eq!(runs.len(), 2, "one resume, not repeated: {runs:#?}");
    assert_eq!(argv(&runs[1]), ["--session", id]);
    let row = status_row(&server, &pane);
    assert_eq!(
        row["reason"],
        "resume failed: opencode has no session ses_dcee: R starts a fresh session"
    );
    assert!(journal(&server)
        .iter()
        .any(|e| e.event == "resume_failed"
            && e.detail.as_deref() == Some(&format!("no session {id}"))));
}

#[tokio::test]
async fn gemini_resume_latest_records_no_session_id() {
    let server = TmuxServer::start();
    server.write_plan("gemini", "sleep 300\nexit 1\n");
    let pane = server.new_window(&["gemini", "--resume", "latest"]);
    let (mut state, io) = watcher(&server);
    server.wait_log(&pane, 1);
    until_held(&mut state, &io, &pane, |h| *h == Hold::NoSessionId).await;
    no_run_beyond(&mut state, &io, &server, &pane, 1, Duration::from_secs(3)).await;
    assert_eq!(server.log_entries_for(&pane).len(), 1, "never resumed");
    let row = status_row(&server, &pane);
    assert_eq!(row["session_id"], serde_json::Value::Null);
    assert_eq!(server.pane_field(&pane, "#{@agentwatch_session_id}"), "");
}

#[tokio::test]
async fn gemini_resume_latest_is_known_by_the_chat_it_wrote_and_a_resume_it_refuses_is_said() {
    let server = TmuxServer::start();
    // As the real one does, gemini writes its chat at start: `latest` was a fresh session
    // whose id is in that chat. It got no message, so gemini will not resume it (exit 42).
    let store = server.agent_store("gemini");
    server.write_plan("gemini", "sleep 300\nexit 1\n");
    let pane = server.new_window(&["gemini", "--resume", "latest"]);
    let (mut state, io) = watcher(&server);
    server.wait_log(&pane, 1);
    let Hold::NoSession(id) =
        until_held(&mut state, &io, &pane, |h| matches!(h, Hold::NoSession(_))).await
    else {
        unreachable!()
    };
    assert!(agentwatch::core::agent::is_uuid(&id), "{id}");
    let chats = std::fs::read_dir(store.join("tmp")).unwrap().count();
    assert!(chats > 0);
    no_run_beyond(&mut state, &io, &server, &pane, 2, Duration::from_secs(3)).await;
    let runs = server.log_entries_for(&pane);
    assert_eq!(runs.len(), 2, "one resume, not repeated: {runs:#?}");
    assert_eq!(argv(&runs[1]), ["--resume", id.as_str()]);
}

#[tokio::test]
async fn a_relaunch_refused_for_a_lasting_cause_keeps_its_reason_and_its_budget() {
    let server = TmuxServer::start();
    let dir = server.dir.path().join("project");
    std::fs::create_dir_all(&dir).unwrap();
    server.write_plan("claude", "sleep 500\nexit 1\n");
    let pane = server.new_window_in(
        &dir,
        &[
            "claude",
            "--session-id",
            "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11",
        ],
    );
    let (mut state, io) = watcher(&server);
    support::look_until(&mut state, &io, *WAIT, |s| {
        card(s, &pane).is_some_and(|c| !c.pane.opts.cwd.is_empty())
    })
    .await;
    std::fs::remove_dir_all(&dir).unwrap();
    let why = format!("directory {} no longer exists", dir.display());
    let want = Hold::Refused(why.clone());
    until_held(&mut state, &io, &pane, |h| *h == want).await;
    // Long past every backoff: still the reason, no attempt burnt, nothing started.
    no_run_beyond(&mut state, &io, &server, &pane, 1, Duration::from_secs(4)).await;
    let c = card(&state, &pane).unwrap();
    assert_eq!(c.auto, Auto::Held(want));
    assert_eq!(
        c.budget.attempts,
        0,
        "{:?} pane: {:?} {:#?}",
        c.budget,
        server.pane_field(&pane, "#{@agentwatch_attempts} #{@agentwatch_resumes}"),
        journal(&server)
    );
    assert_eq!(server.log_entries_for(&pane).len(), 1);
    let row = status_row(&server, &pane);
    assert_eq!(row["reason"], format!("not auto-resumed: {why}"));
    assert_eq!(row["attempts"], 0);
    let failed: Vec<_> = journal(&server)
        .into_iter()
        .filter(|e| e.event == "resume_failed")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0].detail.as_deref(), Some(why.as_str()));
}

/// Field 22 of `/proc/<pid>/stat`, as claude records it (`procStart`).
fn proc_start(pid: u32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 1..];
    after.split_whitespace().nth(19).unwrap().to_string()
}

#[tokio::test]
async fn a_claude_session_open_in_another_claude_is_not_relaunched_twice() {
    let server = TmuxServer::start();
    let store = server.agent_store("claude");
    let id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
    // It got its first message, then crashes.
    server.write_plan("claude", "message\nsleep 500\nexit 1\n");
    let pane = server.new_window(&["claude", "--session-id", id]);
    // Meanwhile the same session is open in another claude: this test process plays it,
    // with the registry file a running claude keeps.
    let me = std::process::id();
    let record = serde_json::json!({
        "pid": me, "sessionId": id, "cwd": "/elsewhere", "procStart": proc_start(me),
    });
    std::fs::create_dir_all(store.join("sessions")).unwrap();
    std::fs::write(
        store.join(format!("sessions/{me}.json")),
        record.to_string(),
    )
    .unwrap();
    let (mut state, io) = watcher(&server);
    let Hold::Refused(why) =
        until_held(&mut state, &io, &pane, |h| matches!(h, Hold::Refused(_))).await
    else {
        unreachable!()
    };
    assert_eq!(
        why,
        format!("session 0e6a1c1e is also open in pid {me}: end that one, then r")
    );
    assert_eq!(server.log_entries_for(&pane).len(), 1, "not relaunched");
    // That one ended: `r` resumes it.
    std::fs::remove_file(store.join(format!("sessions/{me}.json"))).unwrap();
    support::press(&mut state, &io, &pane, Action::Relaunch).await;
    let runs = server.wait_log(&pane, 2);
    assert_eq!(argv(&runs[1]), ["--resume", id]);
}

#[tokio::test]
async fn a_codex_session_its_background_server_holds_is_reconnected_and_the_card_says_so() {
    use std::os::fd::AsRawFd;
    let server = TmuxServer::start();
    let id = "01a2311a-7ff0-7d21-aea0-d283e785f990";
    server.write_plan("codex", "sleep 500\nexit 1\n---\nhang\n");
    let pane = server.new_window(&["codex", "resume", id]);
    // codex 0.171's background server keeps the session loaded: its writer lock is held
    // (by this test process, playing that server).
    let locks = server.dir.path().join("codex/thread-writer-locks");
    std::fs::create_dir_all(&locks).unwrap();
    let lock = std::fs::File::create(locks.join(format!("{id}.lock"))).unwrap();
    // SAFETY: flock on an open fd.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let (mut state, io) = watcher(&server);
    let reconnected = |s: &State| {
        card(s, &pane)
            .and_then(|c| c.notice.as_ref())
            .is_some_and(|n| n.text.starts_with("reconnected to codex 01a2311a"))
    };
    assert!(
        support::look_until(&mut state, &io, *WAIT, reconnected).await,
        "{:?}",
        card(&state, &pane).map(|c| (&c.auto, &c.notice))
    );
    let me = std::process::id();
    let text = &card(&state, &pane).unwrap().notice.as_ref().unwrap().text;
    assert_eq!(
        text,
        &format!("reconnected to codex 01a2311a: its background process (pid {me}) held it")
    );
    let runs = server.wait_log(&pane, 2);
    assert_eq!(argv(&runs[1]), ["resume", id]);
}

/// A claude that never got a message and was left with /exit keeps a transcript of its two
/// mode lines only (claude 2.1.197 and 2.1.332): `--resume` finds no conversation there and
/// `--session-id` finds the id in use (issue 28, point 1). `r` says so and starts nothing;
/// `R` starts claude fresh, under a new id.
#[tokio::test]
async fn a_never_messaged_claude_left_with_slash_exit_is_not_relaunched_and_r_fresh_starts_anew() {
    let server = TmuxServer::start();
    let store = server.agent_store("claude");
    server.write_plan("claude", "slash-exit\n---\nhang\n");
    let pane = server.spawn_agent("claude");
    let (mut state, io) = watcher(&server);
    let runs = server.wait_log(&pane, 1);
    let id = argv(&runs[0])[1].clone();
    assert!(
        support::look_until(&mut state, &io, *WAIT, |s| card(s, &pane)
            .is_some_and(|c| c.life.is_dead()))
        .await
    );
    // Its transcript: the mode lines, no message.
    let transcripts: Vec<_> = walk(&store.join("projects"))
        .into_iter()
        .filter(|p| p.ends_with(format!("{id}.jsonl")))
        .collect();
    assert_eq!(transcripts.len(), 1, "{transcripts:?}");
    let text = std::fs::read_to_string(&transcripts[0]).unwrap();
    assert!(text.contains("\"type\":\"permission-mode\"") && !text.contains("\"user\""));
    support::press(&mut state, &io, &pane, Action::Relaunch).await;
    let said = card(&state, &pane)
        .and_then(|c| c.notice.as_ref().map(|n| n.text.clone()))
        .unwrap_or_default();
    assert!(
        said.contains(&format!("session {} never got a message", &id[..8]))
            && said.contains("R starts it fresh"),
        "{said}"
    );
    no_run_beyond(&mut state, &io, &server, &pane, 1, Duration::from_secs(1)).await;
    support::press(&mut state, &io, &pane, Action::RelaunchFresh).await;
    let runs = server.wait_log(&pane, 2);
    assert_eq!(argv(&runs[1])[0], "--session-id", "{runs:#?}");
    assert_ne!(argv(&runs[1])[1], id, "a new id: {runs:#?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// opencode prints its session's id when it exits (`Continue  opencode -s ses_…`, 1.18.33 on
/// Ctrl-C); its database is not read (keyed by directory, not process). That line is where
/// the id comes from, and `r` resumes it (issue 28, point 8).
#[tokio::test]
async fn opencode_is_resumed_with_the_id_its_exit_line_names() {
    const SES: &str = "ses_dcaa7a1e3ffeI9M0SnbSNus0nn";
    let server = TmuxServer::start();
    std::fs::create_dir_all(server.agent_dir.join("opencode/sessions").join(SES)).unwrap();
    server.write_plan(
        "opencode",
        &format!("say hello\nopencode-exit-line {SES}\nexit 0\n---\nhang\n"),
    );
    let pane = server.spawn_agent("opencode");
    let (mut state, io) = watcher(&server);
    let found = support::look_until(&mut state, &io, *WAIT, |s| {
        card(s, &pane).is_some_and(|c| c.pane.opts.session_id == SES)
    })
    .await;
    assert!(
        found,
        "{:?}",
        card(&state, &pane).map(|c| (c.life, c.pane.opts.session_id.clone(), c.notice.clone()))
    );
    support::press(&mut state, &io, &pane, Action::Relaunch).await;
    let runs = server.wait_log(&pane, 2);
    assert_eq!(argv(&runs[1]), ["--session", SES], "{runs:#?}");
}

/// codex's two answers for a session it cannot resume (0.171.0, exit 1): an id it never saved
/// (`No saved session found with ID`), and one its state lists whose rollout file is gone
/// (`… thread/resume failed: no rollout found for thread id …`, issue 28, point 2). Either
/// is "no such session": said, and not repeated.
#[tokio::test]
async fn codexs_no_such_session_answers_are_said_and_not_repeated() {
    for listed in [false, true] {
        let server = TmuxServer::start();
        let home = server.dir.path().join("codex");
        std::fs::create_dir_all(home.join("threads")).unwrap();
        let id = "01a23553-5648-74d2-ab69-2a1a529d5011";
        if listed {
            std::fs::write(home.join("threads").join(id), "").unwrap();
        }
        server.write_plan("codex", "sleep 300\nexit 1\n");
        let pane = server.new_window(&["codex", "resume", id]);
        let (mut state, io) = watcher(&server);
        let want = Hold::NoSession(id.into());
        until_held(&mut state, &io, &pane, |h| *h == want).await;
        no_run_beyond(&mut state, &io, &server, &pane, 2, Duration::from_secs(3)).await;
        let runs = server.log_entries_for(&pane);
        assert_eq!(runs.len(), 2, "listed {listed}: one resume: {runs:#?}");
        assert_eq!(argv(&runs[1]), ["resume", id]);
    }
}
