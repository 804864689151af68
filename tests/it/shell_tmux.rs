//! Agents typed at a shell prompt, in real bash and zsh in a private tmux server: the exit
//! is seen when the prompt comes back (code unknown without the integration, the real code
//! with it), `r` types the resume command, and a plain shell is never flagged.

use crate::support;
use std::time::Duration;

use crate::support::{TmuxServer, WAIT};
use agentwatch::adapters::poll::Prober;
use agentwatch::adapters::tmux::client::Tmux;
use agentwatch::config::Config;
use agentwatch::core::card::{Card, Life};
use agentwatch::core::msg::{Action, Msg};
use agentwatch::core::pane::{Exit, PaneId};
use agentwatch::core::state::State;
use agentwatch::run::{look_once, send, Io};

const ID: &str = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";

fn watcher(server: &TmuxServer) -> (State, Io) {
    let mut config = Config::default();
    config.auto_resume.enabled = false;
    let tmux =
        Tmux::new(server.socket.clone(), Duration::from_secs(5)).with_env(server.env_pairs());
    let state = State::new(&config, false, String::new(), (200, 50));
    (
        state,
        Io::new(Prober::new(tmux), Some(server.dir.path().join("crashes")))
            .with_stores(server.stores()),
    )
}

fn card<'a>(state: &'a State, pane: &str) -> Option<&'a Card> {
    let id = PaneId::parse(pane).unwrap();
    state.cards.iter().find(|c| c.pane.id == id)
}

async fn until(state: &mut State, io: &Io, what: &str, ok: impl FnMut(&State) -> bool) {
    if support::look_until(state, io, *WAIT, ok).await {
        return;
    }
    panic!(
        "timed out waiting for {what}: {:?}",
        state
            .cards
            .iter()
            .map(|c| (c.pane.id, c.life))
            .collect::<Vec<_>>()
    );
}

fn type_line(server: &TmuxServer, pane: &str, line: &str) {
    server.tmux_ok(&["send-keys", "-t", pane, "-l", line]);
    server.tmux_ok(&["send-keys", "-t", pane, "Enter"]);
}

/// Waits for the shell's answer to a typed `echo`: the first line of the screen that starts
/// with `prefix`. The typed line holds the prefix too, but after the prompt, so the command
/// line is never taken for the answer (it was, under load, before the answer was printed).
/// Returns that line and the whole screen, for messages.
fn answer(server: &TmuxServer, pane: &str, prefix: &str) -> (String, String) {
    let find = |screen: &str| {
        screen
            .lines()
            .find(|l| l.starts_with(prefix))
            .map(|l| l.trim_end().to_string())
    };
    support::wait_until("the shell's answer", *WAIT, || {
        find(&server.capture(pane)).is_some()
    });
    let screen = server.capture(pane);
    (find(&screen).unwrap_or_default(), screen)
}

fn snippet(server: &TmuxServer, shell: &str) -> String {
    let path = server.dir.path().join(format!("agentwatch.{shell}"));
    let out = server
        .agentwatch()
        .args(["shell-init", shell])
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::write(&path, out.stdout).unwrap();
    path.to_string_lossy().into_owned()
}

fn life(state: &State, pane: &str) -> Option<Life> {
    card(state, pane).map(|c| c.life)
}

/// How the pane's bash gets agentwatch's integration.
#[derive(PartialEq)]
enum Integration {
    None,
    /// Sourced at the prompt (as a ~/.bashrc line does).
    Sourced,
    /// As bash's own rc file: `bash --noprofile --rcfile FILE`.
    Rcfile,
}

async fn crash_and_relaunch(how: Integration) -> (Option<Life>, Vec<serde_json::Value>) {
    let server = TmuxServer::start();
    server.write_plan(
        "claude",
        "say hello from the agent\nwait go\nexit 1\n---\nsay resumed\nhang\n",
    );
    let pane = match how {
        Integration::Rcfile => {
            let rc = snippet(&server, "bash");
            server.new_window(&["bash", "--noprofile", "--rcfile", &rc])
        }
        _ => server.new_window(&["bash", "--norc", "--noprofile"]),
    };
    if how == Integration::Sourced {
        type_line(
            &server,
            &pane,
            &format!(
                "set -u; PROMPT_COMMAND='echo kept >> {}/pc.log'; source {}",
                server.dir.path().display(),
                snippet(&server, "bash")
            ),
        );
    }
    let (mut state, io) = watcher(&server);
    look_once(&mut state, &io).await;
    assert!(
        card(&state, &pane).is_none(),
        "a plain shell is no agent pane"
    );

    type_line(&server, &pane, &format!("claude --session-id {ID}"));
    until(&mut state, &io, "the agent running", |s| {
        life(s, &pane) == Some(Life::Running)
    })
    .await;
    until(&mut state, &io, "its id recorded", |_| {
        server.pane_field(&pane, "#{@agentwatch_session_id}") == ID
    })
    .await;
    assert_eq!(
        card(&state, &pane).unwrap().agent.as_deref(),
        Some("claude")
    );

    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    until(&mut state, &io, "the exit", |s| {
        matches!(life(s, &pane), Some(Life::Dead(_)))
    })
    .await;
    let died = life(&state, &pane);

    state.grid.selected = PaneId::parse(&pane);
    send(&mut state, &io, Msg::Action(Action::Relaunch)).await;
    // What r said and what the shell shows, if the resume never runs.
    let said = card(&state, &pane).and_then(|c| c.notice.as_ref().map(|n| n.text.clone()));
    let ran = support::poll_until(*WAIT, || server.log_entries_for(&pane).len() >= 2);
    assert!(
        ran,
        "the resume never ran; r said {said:?}; the pane:\n{}",
        server.capture_all(&pane)
    );
    let runs = server.log_entries_for(&pane);
    until(&mut state, &io, "running again", |s| {
        life(s, &pane) == Some(Life::Running)
    })
    .await;
    if how == Integration::Sourced {
        let kept = std::fs::read_to_string(server.dir.path().join("pc.log")).unwrap_or_default();
        assert!(
            kept.lines().count() >= 2,
            "the existing PROMPT_COMMAND still runs: {kept:?}"
        );
    }
    (died, runs)
}

#[tokio::test]
async fn without_the_integration_the_exit_is_unknown_and_r_types_the_resume_command() {
    let (died, runs) = crash_and_relaunch(Integration::None).await;
    assert_eq!(died, Some(Life::Dead(Exit::Unknown)));
    assert_eq!(runs[1]["argv"], serde_json::json!(["--resume", ID]));
}

#[tokio::test]
async fn with_the_bash_integration_the_real_exit_code_is_shown() {
    let (died, runs) = crash_and_relaunch(Integration::Sourced).await;
    assert_eq!(died, Some(Life::Dead(Exit::Code(1))));
    assert_eq!(runs[1]["argv"], serde_json::json!(["--resume", ID]));
}

/// `bash --noprofile --rcfile FILE` is a prompt, not a script (issue 28): its integration's
/// exit code is shown and `r` types the resume command.
#[tokio::test]
async fn a_bash_started_with_its_own_rcfile_is_a_prompt_with_the_real_exit_code() {
    let (died, runs) = crash_and_relaunch(Integration::Rcfile).await;
    assert_eq!(died, Some(Life::Dead(Exit::Code(1))));
    assert_eq!(runs[1]["argv"], serde_json::json!(["--resume", ID]));
}

#[tokio::test]
async fn auto_resume_types_the_resume_command_at_the_prompt_after_the_backoff() {
    let server = TmuxServer::start();
    server.write_plan("claude", "wait go\nexit 1\n---\nsay resumed\nhang\n");
    let pane = server.new_window(&["bash", "--norc", "--noprofile"]);
    let mut config = Config::default();
    config.auto_resume.backoff_secs = vec![1];
    let tmux =
        Tmux::new(server.socket.clone(), Duration::from_secs(5)).with_env(server.env_pairs());
    let mut state = State::new(&config, false, String::new(), (200, 50));
    let io = Io::new(Prober::new(tmux), None).with_stores(server.stores());
    type_line(&server, &pane, &format!("claude --session-id {ID}"));
    until(&mut state, &io, "the agent running", |s| {
        life(s, &pane) == Some(Life::Running)
    })
    .await;
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    until(&mut state, &io, "the resume typed", |_| {
        server.log_entries_for(&pane).len() >= 2
    })
    .await;
    let runs = server.log_entries_for(&pane);
    assert_eq!(runs[1]["argv"], serde_json::json!(["--resume", ID]));
    until(&mut state, &io, "running again", |s| {
        life(s, &pane) == Some(Life::Running)
    })
    .await;
}

#[tokio::test]
async fn r_types_nothing_while_something_else_runs_in_the_shell() {
    let server = TmuxServer::start();
    server.write_plan("claude", "wait go\nexit 1\n");
    let pane = server.new_window(&["bash", "--norc", "--noprofile"]);
    let (mut state, io) = watcher(&server);
    type_line(
        &server,
        &pane,
        &format!("claude --session-id {ID}; sleep 1000"),
    );
    until(&mut state, &io, "the agent running", |s| {
        life(s, &pane) == Some(Life::Running)
    })
    .await;
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    until(&mut state, &io, "the exit seen", |s| {
        matches!(life(s, &pane), Some(Life::Dead(_)))
    })
    .await;
    state.grid.selected = PaneId::parse(&pane);
    send(&mut state, &io, Msg::Action(Action::Relaunch)).await;
    let notice = card(&state, &pane).and_then(|c| c.notice.clone()).unwrap();
    assert!(
        notice
            .text
            .contains("sleep is running in the pane, not the bash prompt"),
        "{}",
        notice.text
    );
    assert_eq!(server.log_entries_for(&pane).len(), 1);
}

#[test]
fn the_bash_snippet_is_idempotent_safe_with_set_u_and_keeps_prompt_command() {
    let server = TmuxServer::start();
    let pane = server.new_window(&["bash", "--norc", "--noprofile"]);
    let file = snippet(&server, "bash");
    let log = server.dir.path().join("pc.log");
    type_line(
        &server,
        &pane,
        &format!(
            "set -u; PROMPT_COMMAND='echo kept >> {}'; source {file}; source {file}",
            log.display()
        ),
    );
    type_line(&server, &pane, "false");
    wait_published(&server, &pane, 1);
    type_line(&server, &pane, "(exit 7)");
    wait_published(&server, &pane, 7);
    type_line(&server, &pane, "echo \"pc=[$PROMPT_COMMAND]\"");
    let (line, screen) = answer(&server, &pane, "pc=[");
    assert_eq!(
        line.matches("__agentwatch_status").count(),
        1,
        "hooked once: {screen}"
    );
    assert!(!screen.contains("unbound variable"), "{screen}");
    assert!(std::fs::read_to_string(&log).unwrap().lines().count() >= 3);
}

/// Waits until the shell at `pane` published `status` for its last command.
fn wait_published(server: &TmuxServer, pane: &str, status: i32) {
    let published = support::poll_until(*WAIT, || {
        server
            .pane_field(pane, "#{@agentwatch_last_status}")
            .starts_with(&format!("{status} "))
    });
    assert!(
        published,
        "status {status} never published ({:?}); the pane:\n{}",
        server.pane_field(pane, "#{@agentwatch_last_status}"),
        server.capture(pane)
    );
}

/// Types a line that can run twice harmlessly and ends with `echo DONE`, until `DONE` is
/// answered: a shell whose line editor is starting on a loaded machine can drop typeahead.
fn type_until_done(server: &TmuxServer, pane: &str, line: &str) {
    for _ in 0..3 {
        type_line(server, pane, &format!("{line}; echo setup-''done"));
        // A few seconds each time (scaled), since a lost line is typed again.
        let done = support::poll_until(support::scaled(Duration::from_secs(7)), || {
            server
                .capture(pane)
                .lines()
                .any(|l| l.trim_end() == "setup-done")
        });
        if done {
            return;
        }
    }
    panic!(
        "the shell never ran the setup line; the pane:\n{}",
        server.capture(pane)
    );
}

/// Whether `shell` is installed: CI installs zsh and fish (.ci/run), so there a missing
/// one is a failure; elsewhere the test is skipped with a notice.
fn have(shell: &str) -> bool {
    let found = std::process::Command::new(shell)
        .arg("-c")
        .arg("true")
        .output()
        .is_ok();
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("{shell} is not installed: .ci/run installs it (apt-get install {shell})");
        }
        eprintln!("skipped: {shell} is not installed (apt-get install {shell} to run this test)");
    }
    found
}

#[test]
fn the_fish_snippet_publishes_the_status_once_however_often_it_is_sourced() {
    if !have("fish") {
        return;
    }
    let server = TmuxServer::start();
    let pane = server.new_window(&["fish", "--no-config"]);
    let file = snippet(&server, "fish");
    let log = server.dir.path().join("hook.log");
    // Another postexec handler is kept; sourcing twice hooks once.
    type_until_done(
        &server,
        &pane,
        &format!(
            "function other --on-event fish_postexec; echo kept >> {}; end; source {file}; source {file}",
            log.display()
        ),
    );
    type_line(&server, &pane, "false");
    wait_published(&server, &pane, 1);
    type_line(&server, &pane, "sh -c 'exit 7'");
    wait_published(&server, &pane, 7);
    type_line(
        &server,
        &pane,
        "echo handlers=(functions --handlers | string match -r __agentwatch_status | count)",
    );
    let (line, screen) = answer(&server, &pane, "handlers=");
    assert_eq!(line, "handlers=1", "hooked once: {screen}");
    assert!(std::fs::read_to_string(&log).unwrap().lines().count() >= 2);
}

#[test]
fn the_zsh_snippet_publishes_the_status_and_keeps_other_hooks() {
    if !have("zsh") {
        return;
    }
    let server = TmuxServer::start();
    let pane = server.new_window(&["zsh", "-f"]);
    // Its prompt first: on a loaded machine a line typed before zsh's line editor started
    // could be lost.
    support::wait_until("zsh's prompt", *WAIT, || {
        !server.capture(&pane).trim().is_empty()
    });
    let file = snippet(&server, "zsh");
    let log = server.dir.path().join("hook.log");
    type_until_done(&server, &pane, &format!("setopt nounset; other() {{ echo kept >> {} }}; precmd_functions=(other); source {file}; source {file}", log.display()));
    type_line(&server, &pane, "false");
    wait_published(&server, &pane, 1);
    type_line(&server, &pane, "true");
    wait_published(&server, &pane, 0);
    // Ctrl-C at the prompt is no command: its 130 is not published (issue 28).
    let published = server.pane_field(&pane, "#{@agentwatch_last_status}");
    server.tmux_ok(&["send-keys", "-t", &pane, "C-c"]);
    support::holds_for(
        "a Ctrl-C at the prompt publishes nothing",
        Duration::from_secs(1),
        || server.pane_field(&pane, "#{@agentwatch_last_status}") == published,
    );
    type_line(&server, &pane, "echo \"hooks=[${precmd_functions[*]}]\"");
    let (line, screen) = answer(&server, &pane, "hooks=[");
    assert_eq!(line, "hooks=[__agentwatch_status other]", "{screen}");
    assert!(std::fs::read_to_string(&log).unwrap().lines().count() >= 2);
}

/// After an agent's clean exit, a Ctrl-C at the prompt is no news (issue 28, point 6): the
/// snippet publishes nothing for it, and the watcher that saw the exit, `status` and
/// `explain` all say `code 0`.
#[tokio::test]
async fn a_ctrl_c_at_the_prompt_after_a_clean_exit_changes_no_ones_answer() {
    let server = TmuxServer::start();
    server.write_plan("claude", "wait go\nexit 0\n");
    let pane = server.new_window(&["bash", "--norc", "--noprofile"]);
    type_line(
        &server,
        &pane,
        &format!("source {}", snippet(&server, "bash")),
    );
    let (mut state, io) = watcher(&server);
    type_line(&server, &pane, &format!("claude --session-id {ID}"));
    until(&mut state, &io, "the agent running", |s| {
        life(s, &pane) == Some(Life::Running)
    })
    .await;
    std::fs::write(server.agent_dir.join("go"), "").unwrap();
    until(&mut state, &io, "the exit", |s| {
        life(s, &pane) == Some(Life::Dead(Exit::Code(0)))
    })
    .await;
    let published = server.pane_field(&pane, "#{@agentwatch_last_status}");
    assert!(published.starts_with("0 "), "{published}");
    // Ctrl-C at the prompt, then an empty line: bash's $? is 130, then still 130.
    server.tmux_ok(&["send-keys", "-t", &pane, "C-c"]);
    server.wait_until("bash took the Ctrl-C", *WAIT, || {
        server.capture(&pane).contains("^C")
    });
    server.tmux_ok(&["send-keys", "-t", &pane, "Enter"]);
    support::holds_for(
        "the published status stays the agent's",
        Duration::from_secs(1),
        || server.pane_field(&pane, "#{@agentwatch_last_status}") == published,
    );
    look_once(&mut state, &io).await;
    assert_eq!(life(&state, &pane), Some(Life::Dead(Exit::Code(0))));
    let json = server.agentwatch_ok(&["status", "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["pane_id"] == pane.as_str())
        .unwrap_or_else(|| panic!("{json}"));
    assert_eq!(row["state"], "finished", "{row}");
    assert_eq!(row["exit_code"], 0, "{row}");
    let explained = server.agentwatch_ok(&["explain", &pane]);
    assert!(explained.contains("process exited (code 0)"), "{explained}");
}

/// Looks every 500 ms (the default tick) until `done`, or `timeout`.
async fn tick_until(
    state: &mut State,
    io: &Io,
    timeout: Duration,
    mut done: impl FnMut(&State) -> bool,
) -> bool {
    let end = std::time::Instant::now() + support::scaled(timeout);
    while std::time::Instant::now() < end {
        look_once(state, io).await;
        if done(state) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    false
}

/// An agent typed at a prompt, or under a wrapper typed at it, that lives only a few
/// seconds is seen, its death with it (issue 28, point 4): at the default tick, on a server
/// quiet long enough that nothing is attended to.
#[tokio::test]
async fn a_short_run_at_a_quiet_prompt_is_seen_directly_or_under_a_wrapper() {
    let server = TmuxServer::start();
    server.write_plan("claude", "say hello\nsleep 2000\nexit 1\n");
    let wrapper = server.dir.path().join("cc");
    std::fs::write(&wrapper, "#!/bin/bash\nsleep 1.5\nclaude \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    for typed in [
        format!("claude --session-id {ID}"),
        wrapper.display().to_string(),
    ] {
        let pane = server.new_window(&["bash", "--norc", "--noprofile"]);
        let (mut state, io) = watcher(&server);
        // A quiet server for a while: nothing works, nothing is attended to.
        tick_until(&mut state, &io, Duration::from_secs(4), |_| false).await;
        assert!(card(&state, &pane).is_none());
        type_line(&server, &pane, &typed);
        let mut seen_running = false;
        let ok = tick_until(&mut state, &io, Duration::from_secs(15), |s| {
            seen_running |= life(s, &pane) == Some(Life::Running);
            matches!(life(s, &pane), Some(Life::Dead(_)))
        })
        .await;
        assert!(
            ok && seen_running,
            "{typed}: seen running: {seen_running}; the card: {:?}",
            card(&state, &pane).map(|c| (c.life, c.agent.clone()))
        );
    }
}

/// A launcher killed with SIGKILL at a prompt leaves the real agent running with another
/// parent (codex 0.171 and gemini 0.61 do; issue 28, point 7): the card says so, `r` and
/// `status` refuse to start a second one, `x` ends the orphan, and then `r` resumes.
#[tokio::test]
async fn an_orphan_left_by_a_killed_launcher_is_said_and_ended_before_a_relaunch() {
    let server = TmuxServer::start();
    server.write_plan("gemini", "say hello\nchild\n---\nhang\n");
    let pane = server.new_window(&["bash", "--norc", "--noprofile"]);
    let (mut state, io) = watcher(&server);
    type_line(&server, &pane, &format!("gemini --session-id {ID}"));
    until(&mut state, &io, "the agent running", |s| {
        life(s, &pane) == Some(Life::Running)
    })
    .await;
    let launcher = server.wait_log(&pane, 1)[0]["pid"].as_u64().unwrap() as u32;
    // Its child, the real agent, in the pane's tree (a look settles it).
    let child = || -> Option<u32> {
        let kids =
            std::fs::read_to_string(format!("/proc/{launcher}/task/{launcher}/children")).ok()?;
        kids.split_whitespace().next()?.parse().ok()
    };
    server.wait_until("the launcher started its child", *WAIT, || {
        child().is_some()
    });
    let orphan = child().unwrap();
    // Reparented away, it outlives the test's tmux server: ended, by its pid, however the
    // test ends.
    // Only that process: its start time, read now, tells a pid reused since.
    let started = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit(')')
                    .next()?
                    .split_whitespace()
                    .nth(19)
                    .map(str::to_owned)
            })
    };
    struct EndOnDrop(u32, Option<String>, fn(u32) -> Option<String>);
    impl Drop for EndOnDrop {
        fn drop(&mut self) {
            if self.1.is_some() && (self.2)(self.0) == self.1 {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &self.0.to_string()])
                    .status();
            }
        }
    }
    let _guard = EndOnDrop(orphan, started(orphan), started);
    look_once(&mut state, &io).await;
    std::process::Command::new("kill")
        .args(["-KILL", &launcher.to_string()])
        .status()
        .unwrap();
    until(&mut state, &io, "the orphan said", |s| {
        card(s, &pane)
            .is_some_and(|c| c.life.is_dead() && c.orphans.iter().any(|p| p.pid == orphan))
    })
    .await;
    assert!(support::pid_alive(orphan));
    // r starts nothing, and says why.
    state.grid.selected = PaneId::parse(&pane);
    send(&mut state, &io, Msg::Action(Action::Relaunch)).await;
    let said = card(&state, &pane)
        .and_then(|c| c.notice.clone())
        .unwrap()
        .text;
    assert!(
        said.contains(&format!(
            "gemini (pid {orphan}) of its last run still runs outside the pane"
        )) && said.contains("x ends it"),
        "{said}"
    );
    assert_eq!(server.log_entries_for(&pane).len(), 1);
    // It exits 1: a dead agent.
    let out = server
        .agentwatch_command(&["status", "--json"])
        .output()
        .unwrap();
    let row = String::from_utf8_lossy(&out.stdout);
    assert!(
        row.contains(&format!(
            "not relaunched: gemini (pid {orphan}) of its last run still runs outside the pane"
        )),
        "{row}"
    );
    // x twice ends it; then r resumes.
    send(&mut state, &io, Msg::Action(Action::Close)).await;
    send(&mut state, &io, Msg::Action(Action::Close)).await;
    server.wait_until("the orphan ended", *WAIT, || !support::pid_alive(orphan));
    until(&mut state, &io, "no orphan", |s| {
        card(s, &pane).is_some_and(|c| c.orphans.is_empty())
    })
    .await;
    assert!(
        server.pane_exists(&pane),
        "x ended the orphan, not the pane"
    );
    send(&mut state, &io, Msg::Action(Action::Relaunch)).await;
    let runs = server.wait_log(&pane, 2);
    assert_eq!(runs[1]["argv"], serde_json::json!(["--resume", ID]));
}
