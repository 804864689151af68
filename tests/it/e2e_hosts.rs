//! End to end (issue 19): the real binary watches its local tmux server and, beside it, a
//! server on another "host" reached through a real sshd on loopback. A remote agent shows
//! on the grid with its host named; when it dies it gets its banner and is resumed in its
//! own remote pane with its own session id; the local agent is left alone. The sshd then
//! goes away and comes back: the host is bannered, the local agents are not held up.

use crate::support;
use crate::support::argv;

use std::time::Duration;

use crate::support::sshd::{self, Sshd};
use crate::support::{TmuxServer, LONG, WAIT};

const LOCAL_ID: &str = "11111111-2222-4333-8444-555555555555";
const REMOTE_ID: &str = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";

fn toml_str(s: &str) -> String {
    format!("{s:?}")
}

/// A config whose one host is `remote`, reached through `sshd`.
fn hosts_config(local: &TmuxServer, remote: &TmuxServer, sshd: &Sshd, extra: &str) -> String {
    let config = local.dir.path().join("hosts.toml");
    std::fs::write(
        &config,
        format!(
            "{extra}\n[[hosts]]\nname = \"box\"\nssh = {}\nssh_args = [\"-F\", {}]\nsocket_path = {}\ntmux = {}\n",
            toml_str(sshd::HOST),
            toml_str(&sshd.client_config.to_string_lossy()),
            toml_str(&remote.socket.to_string_lossy()),
            toml_str(&support::tmux_program().to_string_lossy()),
        ),
    )
    .unwrap();
    config.to_string_lossy().into_owned()
}

#[test]
fn status_doctor_and_spawn_reach_the_host_and_say_when_it_is_gone() {
    if let Some(why) = sshd::missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let local = TmuxServer::start();
    local.write_plan("claude", "say here\nhang\n");
    local.new_window(&["claude", "--session-id", LOCAL_ID]);
    let remote = TmuxServer::start();
    remote.write_plan("claude", "say there\nhang\n");
    let mut sshd = Sshd::start();
    let config = hosts_config(&local, &remote, &sshd, "");

    // spawn --host: a window on that server, with what a resume needs recorded there.
    let dir = remote.dir.path().to_string_lossy().into_owned();
    let pane = local
        .agentwatch_ok(&[
            "-c", &config, "spawn", "--host", "box", "--cwd", &dir, "claude",
        ])
        .trim()
        .to_string();
    let runs = remote.wait_log(&pane, 1);
    assert_eq!(argv(&runs[0])[0], "--session-id");
    assert_eq!(remote.pane_field(&pane, "#{@agentwatch_agent}"), "claude");
    let no_host = local
        .agentwatch_command(&[
            "-c", &config, "spawn", "--host", "nope", "--cwd", &dir, "claude",
        ])
        .output()
        .unwrap();
    assert_eq!(no_host.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&no_host.stderr).contains("no host \"nope\" (the hosts are box)")
    );
    // A kind not installed there (it is here): refused before a window opens there, where
    // tmux would show a failed exec as a death with exit 1.
    std::fs::remove_file(remote.bin_dir.join("gemini")).unwrap();
    let windows = || remote.tmux_ok(&["list-windows", "-a"]).lines().count();
    let before = windows();
    let missing = local
        .agentwatch_command(&[
            "-c", &config, "spawn", "--host", "box", "--cwd", &dir, "gemini",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{err}");
    assert!(
        err.contains("gemini is not on the PATH of tmux there: install gemini there"),
        "{err}"
    );
    assert_eq!(windows(), before, "no window opened there");
    // An agent there that dies at once keeps its pane, with what a resume needs: the
    // window and its options are one command line there too, not a round trip each.
    remote.write_plan("codex", "exit 7\n");
    let quick = local
        .agentwatch_ok(&[
            "-c", &config, "spawn", "--host", "box", "--cwd", &dir, "codex",
        ])
        .trim()
        .to_string();
    assert_eq!(remote.wait_pane_exit(&quick, *WAIT), "status 7");
    assert_eq!(remote.pane_field(&quick, "#{@agentwatch_agent}"), "codex");
    remote.tmux_ok(&["kill-pane", "-t", &quick]);

    // status: both, the remote one with its host.
    let status = |sshd_up: bool| {
        let out = local
            .agentwatch_command(&["-c", &config, "status", "--json"])
            .output()
            .unwrap();
        let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        let hosts: Vec<serde_json::Value> = rows.iter().map(|r| r["host"].clone()).collect();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if sshd_up {
            assert_eq!(
                hosts,
                [serde_json::Value::Null, "box".into()],
                "{rows:?} {err}"
            );
        } else {
            assert_eq!(hosts, [serde_json::Value::Null], "{rows:?}");
            assert!(err.contains("host box: aw-test: unreachable ("), "{err}");
        }
    };
    status(true);

    // doctor: in without a prompt, its tmux, control mode over ssh.
    let doctor = || {
        let out = local
            .agentwatch_command(&["-c", &config, "doctor"])
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.status.code(),
        )
    };
    let (text, _) = doctor();
    assert!(
        text.contains("✔ host box: ssh aw-test gets in without a prompt"),
        "{text}"
    );
    assert!(
        text.contains("✔ host box: control mode: works over ssh"),
        "{text}"
    );

    sshd.kill();
    status(false);
    let (text, code) = doctor();
    assert!(
        text.contains("✖ host box: ssh aw-test does not get in without a prompt"),
        "{text}"
    );
    assert_eq!(code, Some(1));
}

#[test]
fn a_remote_agent_is_shown_with_its_host_dies_loudly_and_is_resumed_there_with_its_own_id() {
    if let Some(why) = sshd::missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let local = TmuxServer::start();
    local.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    local.write_plan("claude", "say the local agent works\nhang\n");
    let here = local.new_window(&["claude", "--session-id", LOCAL_ID]);

    let remote = TmuxServer::start();
    remote.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    remote.write_plan(
        "claude",
        "say the remote agent works\nwait go\nexit 1\n---\nsay resumed over there\nhang\n",
    );
    let there = remote.new_window(&["claude", "--session-id", REMOTE_ID]);
    let mut sshd = Sshd::start();

    let config = hosts_config(
        &local,
        &remote,
        &sshd,
        "[auto_resume]\nbackoff_secs = [1]\n",
    );
    let ui = local.start_agentwatch(120, 40, &[], &["-c", &config]);
    // Both agents, the remote one named by its host.
    ui.wait_for_text("2 running", *WAIT);
    ui.wait_for_text("claude · box main:1.0", *WAIT);
    ui.wait_for_text("the remote agent works", *WAIT);
    // Its start time, asked of that machine once: said on its card as here.
    let screen = ui.wait_for("the remote agent's age", *WAIT, |s| {
        let lines: Vec<&str> = s.lines().collect();
        lines
            .iter()
            .position(|l| l.contains("claude · box main:1.0"))
            .and_then(|i| lines.get(i + 1))
            .is_some_and(|l| l.contains("● running for"))
    });
    assert!(screen.contains("claude · box main:1.0"), "{screen}");
    // Its id, recorded on its pane there from its command line, and read back.
    ui.wait_for_text("id 0e6a1c1e", *WAIT);

    std::fs::write(remote.agent_dir.join("go"), "").unwrap();
    let screen = ui.wait_for_text("process exited (code 1)", *WAIT);
    assert!(screen.contains("box main:1.0"), "{screen}");
    // Resumed in its own pane, there, with its own id; the local agent never touched.
    ui.wait_for_text("resumed over there", *WAIT);
    let runs = remote.wait_log(&there, 2);
    assert_eq!(argv(&runs[1]), ["--resume", REMOTE_ID]);
    ui.wait_for_text("resumed over there", *WAIT);
    assert_eq!(local.log_entries_for(&here).len(), 1);
    ui.wait_for_text("2 running", *WAIT);
    let journal = local.journal();
    let died: Vec<&str> = journal
        .lines()
        .filter(|l| l.contains("\"event\":\"died\""))
        .collect();
    assert_eq!(died.len(), 1, "{journal}");
    assert!(died[0].contains("\"host\":\"box\""), "{}", died[0]);

    // The host goes away: its banner, its card stale, the local one as it was.
    sshd.kill();
    let screen = ui.wait_for_text("box: unreachable since", *WAIT);
    assert!(screen.contains("(stale)"), "{screen}");
    assert!(screen.contains("the local agent works"), "{screen}");
    // And comes back.
    sshd.run();
    ui.wait_for("the host's banner gone", *LONG, |s| {
        !s.contains("box: unreachable") && !s.contains("(stale)")
    });
    ui.send_keys(&["q"]);
    assert_eq!(ui.wait_exit(*WAIT), "status 0");
}

#[test]
fn peek_r_and_x_work_on_a_dead_agent_there_as_here() {
    if let Some(why) = sshd::missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let local = TmuxServer::start();
    let remote = TmuxServer::start();
    remote.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    // A pause before the exit, as the other tests have: tmux 3.3a can lose what a process
    // writes in the instant before it exits (TMUX.md), and CI under load lost these words.
    remote.write_plan(
        "claude",
        "say its last words over there\nsleep 300\nexit 3\n---\nsay back over there\nwait stop\nexit 4\n",
    );
    let there = remote.new_window(&["claude", "--session-id", REMOTE_ID]);
    let sshd = Sshd::start();
    let config = hosts_config(&local, &remote, &sshd, "[auto_resume]\nenabled = false\n");
    let ui = local.start_agentwatch(100, 30, &[], &["-c", &config]);
    ui.wait_for_text("process exited (code 3)", *WAIT);
    // Peek: its retained output, read from that server.
    ui.send_keys(&["p"]);
    // The peek view (the card's preview shows the same words), whatever tmux renamed the
    // dead pane's window to (`claude[dead]`).
    let screen = ui.wait_for("the peek view of its retained output", *WAIT, |s| {
        s.contains("retained output") && s.contains("its last words over there")
    });
    assert!(screen.contains("claude · box main:1.0"), "{screen}");
    assert!(screen.contains(" · %1 "), "{screen}");
    ui.send_keys(&["Escape"]);
    // Its program gone from the PATH of tmux there: r says so and starts nothing (tmux
    // would show a failed exec as another exit 1).
    let (installed, aside) = (
        remote.bin_dir.join("claude"),
        remote.dir.path().join("claude-aside"),
    );
    std::fs::rename(&installed, &aside).unwrap();
    ui.wait_for_text("r relaunch", *WAIT);
    ui.send_keys(&["r"]);
    ui.wait_for_text("claude is not on the PATH of tmux there", *WAIT);
    assert_eq!(remote.log_entries_for(&there).len(), 1);
    assert_eq!(remote.pane_field(&there, "#{pane_dead}"), "1");
    std::fs::rename(&aside, &installed).unwrap();
    // r: resumed there with its id; the crash record holds its last words and its host.
    ui.send_keys(&["r"]);
    ui.wait_for_text("back over there", *WAIT);
    let runs = remote.wait_log(&there, 2);
    assert_eq!(argv(&runs[1]), ["--resume", REMOTE_ID]);
    let (data, _) = local.xdg();
    let dir = std::path::Path::new(&data).join("agentwatch/crashes");
    let records: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    assert!(records[0].contains("its last words over there"));
    assert!(records[0].contains("\"host\":\"box\""), "{}", records[0]);
    // x twice closes the dead pane there.
    std::fs::write(remote.agent_dir.join("stop"), "").unwrap();
    ui.wait_for_text("process exited (code 4)", *WAIT);
    ui.send_keys(&["x"]);
    ui.wait_for_text("press x again", *WAIT);
    ui.send_keys(&["x"]);
    remote.wait_until("the pane is closed there", *WAIT, || {
        !remote
            .tmux_ok(&["list-panes", "-a", "-F", "#{pane_id}"])
            .lines()
            .any(|l| l == there)
    });
    ui.send_keys(&["q"]);
    assert_eq!(ui.wait_exit(*WAIT), "status 0");
}

/// Agents there that tmux does not name: one under a wrapper script (its pane's command is
/// the script's interpreter), one typed at a shell prompt, one a script typed at an `sh`
/// prompt while the dashboard runs. Their processes are asked of that machine, so all are
/// found with the ids on their command lines; the one at a prompt that exits is resumed by
/// typing at that prompt there.
#[test]
fn agents_under_a_wrapper_or_typed_at_a_prompt_there_are_found_with_their_ids() {
    if let Some(why) = sshd::missing() {
        eprintln!("skipped: {why}");
        return;
    }
    const TYPED_ID: &str = "22222222-3333-4444-8555-666666666666";
    let local = TmuxServer::start();
    let remote = TmuxServer::start();
    remote.write_plan("claude", "say over there\nhang\n");
    remote.write_plan(
        "codex",
        "say typed over there\nwait go\nexit 1\n---\nhang\n",
    );
    let wrapper = remote.dir.path().join("aw-wrap");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nclaude --session-id {REMOTE_ID}\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let wrapped = remote.new_window(&[&wrapper.to_string_lossy()]);
    let shell = remote.new_window(&["sh"]);
    let prompt = remote.new_window(&["sh"]);
    let prompt_born = std::time::Instant::now();
    remote.tmux_ok(&[
        "send-keys",
        "-t",
        &shell,
        &format!("codex resume {TYPED_ID}"),
        "Enter",
    ]);
    let sshd = Sshd::start();
    let config = hosts_config(&local, &remote, &sshd, "");
    let rows = || {
        let out = local
            .agentwatch_command(&["-c", &config, "status", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout).unwrap_or_default()
    };
    let row = |rows: &[serde_json::Value], pane: &str| {
        rows.iter()
            .find(|r| r["host"] == "box" && r["pane_id"] == pane)
            .cloned()
    };
    let mut seen = Vec::new();
    // Every 300 ms: each look is an agentwatch status over ssh. The asserts below say what
    // was missing if it never came.
    support::poll_every(Duration::from_millis(300), *WAIT, || {
        seen = rows();
        let found = |pane: &str, id: &str| {
            row(&seen, pane).is_some_and(|r| r["agent"] == "claude" && r["session_id"] == id)
        };
        let typed = row(&seen, &shell)
            .is_some_and(|r| r["agent"] == "codex" && r["session_id"] == TYPED_ID);
        found(&wrapped, REMOTE_ID) && typed
    });
    let wrapped_row = row(&seen, &wrapped).unwrap_or_default();
    assert_eq!(wrapped_row["agent"], "claude", "{seen:#?}");
    assert_eq!(wrapped_row["session_id"], REMOTE_ID, "{seen:#?}");
    // tmux names the script's interpreter: the agent is found below it.
    assert_eq!(wrapped_row["command"], "sh", "{seen:#?}");
    assert_eq!(wrapped_row["state"], "running", "{seen:#?}");
    let typed_row = row(&seen, &shell).unwrap_or_default();
    assert_eq!(typed_row["agent"], "codex", "{seen:#?}");
    assert_eq!(typed_row["session_id"], TYPED_ID, "{seen:#?}");

    // A script typed at an `sh` prompt there: tmux names its interpreter, `sh`, as it named
    // the prompt, so no tmux field changes but the window's output. The dashboard asks that
    // machine again (at most every 10 s) and finds it.
    const SCRIPT_ID: &str = "33333333-4444-4555-8666-777777777777";
    let scripts = remote.dir.path().join("scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    let script = scripts.join("claude");
    std::fs::write(&script, "#!/bin/sh\necho a script claude\nsleep 100000\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Old enough to be settled when the dashboard first asks (a young process is asked
    // again at every poll anyway). Not a wait: the process's age is the thing, and only
    // the clock makes it.
    std::thread::sleep(Duration::from_millis(
        3000u64.saturating_sub(prompt_born.elapsed().as_millis() as u64),
    ));
    let ui = local.start_agentwatch(100, 40, &[], &["-c", &config]);
    ui.wait_for_text(&format!("id {}", &TYPED_ID[..8]), *WAIT);
    let shown = ui.screen();
    assert!(
        !shown.contains(&format!("id {}", &SCRIPT_ID[..8])),
        "{shown}"
    );
    remote.tmux_ok(&[
        "send-keys",
        "-t",
        &prompt,
        &format!("{} --session-id {SCRIPT_ID}", script.display()),
        "Enter",
    ]);
    // Within a sweep (10 s) and a listing, give or take a loaded machine.
    ui.wait_for_text(&format!("id {}", &SCRIPT_ID[..8]), *LONG);
    assert_eq!(
        remote.pane_field(&prompt, "#{pane_current_command}"),
        "sh",
        "the script's pane looks to tmux as its prompt did"
    );

    // The codex typed at the prompt exits: it is resumed there, typed at that prompt, with
    // its own id (the prompt's foreground group asked of that machine, not of this one).
    std::fs::write(remote.agent_dir.join("go"), "").unwrap();
    remote.wait_until("codex resumed at the prompt there", *LONG, || {
        remote.log_entries_for(&shell).len() >= 2
    });
    let runs = remote.log_entries_for(&shell);
    assert_eq!(argv(&runs[1]), ["resume", TYPED_ID], "{runs:#?}");
}
