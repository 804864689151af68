//! A tmux server reached through a real sshd on loopback (issue 19's transport): one
//! control-mode connection over one ssh process, a second server on the same sshd kept
//! apart, and the sshd killed and restarted under it.

use crate::support;
use std::time::{Duration, Instant};

use crate::support::sshd::{self, Sshd};
use crate::support::{TmuxServer, LONG, WAIT};
use agentwatch::adapters::tmux::client::{Tmux, TmuxError, Transport};
use agentwatch::adapters::tmux::reach::SshServer;

fn over_ssh(server: &TmuxServer, sshd: &Sshd) -> Tmux {
    Tmux::over_ssh(
        SshServer {
            dest: sshd::HOST.into(),
            ssh_args: sshd.ssh_args(),
            tmux: support::tmux_program().to_string_lossy().into_owned(),
            socket_name: None,
            socket_path: Some(server.socket.to_string_lossy().into_owned()),
        },
        Duration::from_secs(10),
    )
    .with_control_mode(true)
}

fn ids(listing: &agentwatch::adapters::tmux::format::Listing) -> Vec<String> {
    listing.panes.iter().map(|p| p.id.to_string()).collect()
}

#[tokio::test]
async fn a_server_behind_ssh_is_polled_over_one_connection_and_found_again_after_sshd_restarts() {
    if let Some(why) = sshd::missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let server = TmuxServer::start();
    let pane = server.new_window(&["sleep", "100000"]);
    let other = TmuxServer::start();
    other.new_window(&["sleep", "100000"]);
    other.new_window(&["sleep", "100000"]);
    let mut sshd = Sshd::start();
    let tmux = over_ssh(&server, &sshd);

    let listing = tmux.list_panes().await.expect("listed over ssh");
    assert!(ids(&listing).contains(&pane), "{:?}", ids(&listing));
    assert_eq!(listing.panes.len(), 2, "this server's panes only");
    assert_eq!(tmux.transport().await, Transport::Control);
    // Words that a remote shell would act on are only data.
    let out = tmux
        .run([
            "display-message",
            "-p",
            "-t",
            &pane,
            "$(echo no) ; '#{pane_id}'",
        ])
        .await
        .expect("display");
    assert_eq!(
        String::from_utf8_lossy(&out).trim(),
        format!("$(echo no) ; '{pane}'")
    );
    // An argument ending in `;`, escaped for tmux's argv as locally, arrives as given.
    let out = tmux
        .run(["display-message", "-p", "stop here\\;"])
        .await
        .expect("display");
    assert_eq!(String::from_utf8_lossy(&out).trim(), "stop here;");
    // A second server on the same host, its own.
    let second = over_ssh(&other, &sshd);
    assert_eq!(second.list_panes().await.expect("second").panes.len(), 3);

    // The host goes away: answers in seconds, saying so, never a hang (the first may only
    // say the connection closed; the next, having tried again, why).
    sshd.kill();
    let asked = Instant::now();
    let mut err = tmux.list_panes().await.expect_err("sshd is gone");
    if !matches!(err, TmuxError::Unreachable { .. }) {
        err = tmux.list_panes().await.expect_err("sshd is gone");
    }
    assert!(
        matches!(err, TmuxError::Unreachable { ref host, .. } if host == sshd::HOST),
        "{err}"
    );
    assert!(
        err.to_string().starts_with("aw-test: unreachable ("),
        "{err}"
    );
    assert!(
        asked.elapsed() < Duration::from_secs(8),
        "{:?}",
        asked.elapsed()
    );
    // While it is away, a call starts no ssh: it says the same at once.
    let asked = Instant::now();
    let again = tmux.list_panes().await.expect_err("still gone");
    assert_eq!(again, err);
    assert!(
        asked.elapsed() < Duration::from_millis(200),
        "{:?}",
        asked.elapsed()
    );

    // Back: the panes are listed again, and the control connection comes back.
    sshd.run();
    let deadline = Instant::now() + *LONG;
    loop {
        let listed = tmux.list_panes().await;
        if let (Ok(l), Transport::Control) = (&listed, tmux.transport().await) {
            assert!(ids(l).contains(&pane));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not back over control mode: {listed:?}"
        );
        // The pace of this wait (each try may start ssh), whose deadline is above.
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
async fn no_server_there_is_said_as_tmux_says_it_not_as_unreachable() {
    if let Some(why) = sshd::missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let sshd = Sshd::start();
    let gone = tempfile::tempdir().expect("tempdir");
    let tmux = Tmux::over_ssh(
        SshServer {
            dest: sshd::HOST.into(),
            ssh_args: sshd.ssh_args(),
            tmux: support::tmux_program().to_string_lossy().into_owned(),
            socket_name: None,
            socket_path: Some(gone.path().join("none.sock").to_string_lossy().into_owned()),
        },
        Duration::from_secs(10),
    );
    let err = tmux.list_panes().await.expect_err("no server");
    assert!(matches!(err, TmuxError::NoServer { .. }), "{err}");
}

/// A host whose clock is an hour ahead: its times (a death's, a process's start) are moved
/// onto this machine's clock, or every death there would look an hour old and every run
/// an hour long. The "remote" tmux is a wrapper that answers the clock question (only that)
/// an hour ahead: the server's own times stay true, so the move is what is seen.
#[tokio::test]
async fn a_host_clock_ahead_is_measured_and_its_times_moved_onto_this_one() {
    if let Some(why) = sshd::missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    let live = server.new_window(&["sleep", "100000"]);
    let dead = server.new_window(&["sh", "-c", "exit 3"]);
    server.wait_pane_exit(&dead, *WAIT);
    let sshd = Sshd::start();
    let real = support::tmux_program().to_string_lossy().into_owned();
    let ahead = clock_wrapper(
        &server,
        "tmux-ahead",
        "line=\"display-message -p $(( $(date +%s) + 3600 ))\"",
    );
    let prober = |program: String| host_prober(&sshd, &server, program);
    let (died, started) = observe(prober(real.clone()), &dead, &live).await;
    let truth: u64 = server
        .pane_field(&dead, "#{pane_dead_time}")
        .parse()
        .unwrap();
    assert_eq!(died, truth, "same clock: nothing moved");
    let (died_ahead, started_ahead) = observe(prober(ahead), &dead, &live).await;
    // By the hour, give or take what a reading in whole seconds over a slow round trip
    // cannot tell.
    let hour = 3600_i64;
    let moved = died as i64 - died_ahead as i64;
    assert!(
        (hour - 10..=hour + 10).contains(&moved),
        "death moved by {moved} s"
    );
    let moved = (started as i64 - started_ahead as i64) / 1000;
    assert!(
        (hour - 10..=hour + 10).contains(&moved),
        "start moved by {moved} s"
    );
}

/// A host whose tmux does not answer the clock question is not asked it again at every
/// poll (each would wait on the host before the listing).
#[tokio::test]
async fn an_unanswered_clock_question_is_not_asked_at_every_poll() {
    if let Some(why) = sshd::missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let server = TmuxServer::start();
    let live = server.new_window(&["sleep", "100000"]);
    let sshd = Sshd::start();
    let asked = server.dir.path().join("clock-asked");
    let mute = clock_wrapper(
        &server,
        "tmux-mute-clock",
        &format!(
            "echo asked >> '{}'; line='set-option -p -t %999 @x 1'",
            asked.display()
        ),
    );
    let p = host_prober(&sshd, &server, mute);
    for _ in 0..3 {
        let o = p.observe().await.expect("observed over ssh");
        assert!(o.listing.panes.iter().any(|x| x.id.to_string() == live));
    }
    let questions = std::fs::read_to_string(&asked).unwrap_or_default();
    assert_eq!(
        questions.lines().count(),
        1,
        "asked once, not at every poll"
    );
}

/// A question to a host that ssh cannot reach says what ssh said, not only its exit code.
#[tokio::test]
async fn a_script_ssh_cannot_run_fails_with_sshs_own_words() {
    if let Some(why) = sshd::missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let host = SshServer {
        dest: "127.0.0.1".into(),
        // Port 1: nothing listens there, so ssh fails at once with its own words.
        ssh_args: ["-F", "/dev/null", "-p", "1", "-o", "BatchMode=yes"]
            .map(String::from)
            .to_vec(),
        tmux: "tmux".into(),
        socket_name: None,
        socket_path: None,
    };
    let err = host
        .run_script("echo hi", Duration::from_secs(10))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("Connection refused"), "{err}");
}

/// A `tmux` for the "host" that runs the real one, except that in control mode it runs
/// `answer` (shell, setting `line`) for the clock question instead.
fn clock_wrapper(server: &TmuxServer, name: &str, answer: &str) -> String {
    let real = support::tmux_program().to_string_lossy().into_owned();
    let path = server.dir.path().join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n\
             case \" $* \" in *' -C '*) ;; *) exec '{real}' \"$@\" ;; esac\n\
             while IFS= read -r line; do\n\
               case \"$line\" in *display-message*%s*) {answer} ;; esac\n\
               printf '%s\\n' \"$line\"\n\
             done | exec '{real}' \"$@\"\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_string_lossy().into_owned()
}

/// A prober of `server` as a host reached through `sshd`, its tmux being `program`.
fn host_prober(
    sshd: &Sshd,
    server: &TmuxServer,
    program: String,
) -> agentwatch::adapters::poll::Prober {
    agentwatch::adapters::poll::Prober::new(
        Tmux::over_ssh(
            SshServer {
                dest: sshd::HOST.into(),
                ssh_args: sshd.ssh_args(),
                tmux: program,
                socket_name: None,
                socket_path: Some(server.socket.to_string_lossy().into_owned()),
            },
            Duration::from_secs(10),
        )
        .with_control_mode(true),
    )
}

/// One look through `p`: the dead pane's death time (s) and the live pane's start (ms).
async fn observe(p: agentwatch::adapters::poll::Prober, dead: &str, live: &str) -> (u64, u64) {
    let o = p.observe().await.expect("observed over ssh");
    let pane = |id: &str| {
        o.listing
            .panes
            .iter()
            .find(|p| p.id.to_string() == id)
            .cloned()
            .expect("listed")
    };
    let died = pane(dead).dead_time.expect("a death time");
    let started = o
        .started
        .get(&pane(live).id)
        .copied()
        .expect("a start time");
    (died, started)
}
