//! The daemon front end: the same loop as the dashboard with no screen, supervising one
//! tmux server while no terminal is open. One per server: by a lock the kernel releases (the
//! fast path, for one path to the server), and by the claim in the server itself, which
//! every path to it finds (`core::lease`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use futures_util::StreamExt;

use super::elector::{self, Elector};
use super::event_loop::{drive, Screenless};
use crate::adapters::poll::Prober;
use crate::adapters::store::lock::{self, ServerLocks};
use crate::adapters::tmux::client::Tmux;
use crate::config::Config;
use crate::core::lease::Claim;
use crate::core::msg::{Action, Msg, Supervisor};
use crate::core::state::State;
use crate::core::time::{self, Millis};

/// How long `--detach` waits for the new daemon to hold its lock, and `--stop` for the
/// old one to let go of it.
const WAIT: Duration = Duration::from_secs(10);

fn locks(socket: &Path) -> ServerLocks {
    ServerLocks::new(&lock::lock_dir(), socket)
}

/// `process 123 since 2026-12-01 03:57:00`
fn describe(s: &Supervisor) -> String {
    format!(
        "pid {} since {}",
        s.pid,
        time::local(s.since, &super::time_zone())
    )
}

/// The daemon that holds the server: the one its claim names, by whatever path it was
/// started (with `lapsed`: its claim run out, it stopped answering); else the one holding
/// this path's lock (a server not answering cannot be asked).
pub async fn running(tmux: &Tmux) -> std::io::Result<Option<(Supervisor, Option<Millis>)>> {
    let now = super::Clock::start().now();
    match tokio::time::timeout(Duration::from_secs(3), elector::look(tmux, now)).await {
        Ok(Ok(Claim::Held(l))) if l.daemon => return Ok(Some((elector::supervisor(&l), None))),
        Ok(Ok(Claim::Lapsed { lease, ago })) if lease.daemon && elector::runs_here(&lease) => {
            return Ok(Some((elector::supervisor(&lease), Some(ago))))
        }
        _ => {}
    }
    Ok(lock::holder(&locks(tmux.socket()).daemon)?.map(|d| (d, None)))
}

/// `agentwatch daemon`: supervises until SIGTERM or SIGINT (exit 0); exit 1 at once when
/// another daemon supervises this server.
pub async fn run(config: &Config, tmux: Tmux, tick: Duration, to_stderr: bool) -> ExitCode {
    let socket = tmux.socket().to_path_buf();
    let clock = super::Clock::start();
    let me = Supervisor {
        pid: std::process::id(),
        daemon: true,
        since: clock.now(),
    };
    let locks = locks(&socket);
    // Held for the life of the process: the kernel lets go of it however the process ends.
    let _daemon_lock = match lock::try_hold(&locks.daemon, &me) {
        Ok(Some(held)) => held,
        Ok(None) => {
            let who = lock::holder(&locks.daemon).ok().flatten();
            crate::tell!(
                "agentwatch daemon: another daemon already supervises {} ({}); `agentwatch daemon --stop` ends it",
                socket.display(),
                who.map(|w| describe(&w)).unwrap_or_else(|| "pid unknown".into())
            );
            return ExitCode::FAILURE;
        }
        Err(e) => {
            crate::tell!(
                "agentwatch daemon: cannot take the lock {}: {e} (is TMUX_TMPDIR a directory of yours?)",
                locks.daemon.display()
            );
            return ExitCode::from(2);
        }
    };
    let log = super::logging::init_with(to_stderr);
    // The claim in the server: another path to it (a symlink, a hard link) finds the daemon
    // that holds it, which this path's lock cannot.
    let elector = Elector::new(me);
    let first = tokio::time::timeout(tmux.timeout(), elector.elect(&tmux, clock.now())).await;
    if let Ok(e) = &first {
        if let Some(other) = e.by.filter(|b| !e.mine && b.daemon) {
            crate::tell!(
                "agentwatch daemon: another daemon already supervises this server ({}, by its claim in the server; started for another path to it); `agentwatch daemon --stop` ends it",
                describe(&other)
            );
            tracing::warn!(
                "daemon {} not started: daemon {} holds the server",
                me.pid,
                other.pid
            );
            return ExitCode::FAILURE;
        }
    }
    tracing::info!(
        "agentwatch {} daemon {} supervising {}",
        env!("CARGO_PKG_VERSION"),
        me.pid,
        socket.display()
    );
    let mut state = State::new(config, false, socket.display().to_string(), (0, 0));
    state.headless = true;
    state.supervision.elect = true;
    state.supervision.supervising = false;
    state.story.started = Some(clock.now());
    state.tz = super::time_zone();
    state.zones = jiff::tz::db().clone();
    // No terminal: deaths are announced by desktop notification and hook, not a bell.
    let mut notify = config.notify.clone();
    notify.bell = false;
    let io = std::sync::Arc::new(
        super::Io::new(
            Prober::new(tmux).with_shells(&config.shells),
            crate::adapters::respawn::default_crash_dir(),
        )
        .with_journal(crate::adapters::store::journal::default_path())
        .with_spend_cache(crate::adapters::spend::Follower::default_cache())
        .with_roster(crate::adapters::store::roster::default_path())
        .with_notify(notify)
        .with_crash_cap(&config.crash_records)
        .with_elector(elector)
        .with_remotes(super::remote_probers(config)),
    );
    let result = drive(
        &mut Screenless,
        &mut state,
        std::sync::Arc::clone(&io),
        tick,
        stops(),
    )
    .await;
    io.release().await;
    match result {
        Ok(()) => {
            tracing::info!("daemon {} stopped", me.pid);
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("daemon {} failed: {e}", me.pid);
            crate::tell!("agentwatch daemon: {e}");
            if let Some(log) = log {
                crate::tell!("agentwatch daemon: details in {}", log.display());
            }
            ExitCode::FAILURE
        }
    }
}

/// SIGTERM and SIGINT stop the daemon; SIGHUP (its terminal closing) does not.
fn stops() -> std::pin::Pin<Box<dyn futures_util::Stream<Item = Msg> + Send>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut streams = Vec::new();
    for (kind, stop) in [
        (SignalKind::terminate(), true),
        (SignalKind::interrupt(), true),
        (SignalKind::hangup(), false),
    ] {
        if let Ok(s) = signal(kind) {
            streams.push(futures_util::stream::unfold(s, move |mut s| async move {
                s.recv().await?;
                Some((stop, s))
            }));
        }
    }
    Box::pin(
        futures_util::stream::select_all(streams.into_iter().map(Box::pin)).filter_map(
            |stop| async move {
                if stop {
                    Some(Msg::Action(Action::Quit))
                } else {
                    tracing::info!("SIGHUP ignored: the daemon has no terminal to lose");
                    None
                }
            },
        ),
    )
}

/// `agentwatch daemon --detach`: starts the daemon in its own session with no terminal and
/// prints its pid once it holds the server; if one already runs, prints that one's pid.
pub async fn detach(tmux: &Tmux, config: Option<&Path>, ssh: &[String]) -> ExitCode {
    let socket = tmux.socket();
    match running(tmux).await {
        Ok(Some((d, None))) => {
            let note = format!(
                "agentwatch daemon: already running for {} ({})",
                socket.display(),
                describe(&d)
            );
            return say_pid(d.pid, Some(&note));
        }
        Ok(Some((d, Some(ago)))) => {
            crate::tell!("agentwatch daemon: {}", hung(&d, ago));
            return ExitCode::FAILURE;
        }
        _ => {}
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            crate::tell!("agentwatch daemon: cannot find my own binary: {e}");
            return ExitCode::from(2);
        }
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("-S").arg(socket);
    if let Some(c) = config {
        cmd.arg("-c").arg(absolute(c));
    }
    // The hosts given with --ssh are watched by the daemon too.
    for dest in ssh {
        cmd.arg("--ssh").arg(dest);
    }
    cmd.arg("daemon")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // Not the caller's directory: the daemon must not keep a mount or a deleted directory
    // busy. HOME if it exists (it may not, for a service user), else the root.
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .filter(|h| h.is_dir())
        .unwrap_or_else(|| PathBuf::from("/"));
    cmd.current_dir(home);
    // SAFETY: setsid is async-signal-safe; it only detaches the child from our session and
    // terminal, so the daemon outlives the shell that started it.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            crate::tell!("agentwatch daemon: cannot start it: {e}");
            return ExitCode::from(2);
        }
    };
    let pid = child.id();
    let start = std::time::Instant::now();
    while start.elapsed() < WAIT {
        if let Ok(Some(status)) = child.try_wait() {
            let other = running(tmux).await.ok().flatten();
            return match other {
                // Another one won a race with us: it supervises, which is what was asked.
                Some((d, None)) => say_pid(d.pid, None),
                _ => {
                    crate::tell!(
                        "agentwatch daemon: it exited at once ({status}); details in the log ({})",
                        log_path()
                    );
                    ExitCode::FAILURE
                }
            };
        }
        if matches!(running(tmux).await, Ok(Some((d, None))) if d.pid == pid) {
            return say_pid(pid, None);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    crate::tell!(
        "agentwatch daemon: started as pid {pid}, but it did not take the server within {}s; details in the log ({})",
        WAIT.as_secs(),
        log_path()
    );
    ExitCode::FAILURE
}

/// The daemon's pid on stdout (and `note` on stderr), unless stdout is a socket: then this
/// is a tmux `run-shell` job (the README's tmux.conf line), and tmux shows a job's output in
/// the pane's view mode, whose `%pane-mode-changed` crashes tmux before 3.7 while a control
/// client is attaching (the daemon's own, at that moment). Success needs no words there.
fn say_pid(pid: u32, note: Option<&str>) -> ExitCode {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let job = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata().ok())
        .is_some_and(|m| m.file_type().is_socket());
    if job {
        return ExitCode::SUCCESS;
    }
    if let Some(note) = note {
        crate::tell!("{note}");
    }
    crate::commands::print_then("daemon", &format!("{pid}\n"), ExitCode::SUCCESS)
}

/// A daemon that holds the server but stopped renewing its claim, and what to do.
fn hung(d: &Supervisor, ago: Millis) -> String {
    format!(
        "daemon {} holds this server but stopped answering {} ago (stopped, or hung): `kill -CONT {}` if you stopped it, else `agentwatch daemon --stop` ends it; a dashboard supervises meanwhile",
        d.pid,
        crate::core::text::duration(ago),
        d.pid
    )
}

/// `agentwatch daemon --stop`: SIGTERM to this server's daemon (found by its claim in the
/// server, whichever path it was started for, or by this path's lock), then waits until it
/// has let go.
pub async fn stop(tmux: &Tmux) -> ExitCode {
    let socket = tmux.socket();
    let d = match running(tmux).await {
        Ok(Some((d, _))) => d,
        Ok(None) => {
            crate::tell!(
                "agentwatch daemon: no daemon supervises {}; nothing to stop",
                socket.display()
            );
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            crate::tell!("agentwatch daemon: cannot read the daemon's lock: {e}");
            return ExitCode::from(2);
        }
    };
    if d.pid == 0 || !is_agentwatch(d.pid) {
        crate::tell!(
            "agentwatch daemon: {} is held by pid {}, which is not agentwatch; not signalling it",
            socket.display(),
            d.pid
        );
        return ExitCode::FAILURE;
    }
    let Ok(pid) = libc::pid_t::try_from(d.pid) else {
        return ExitCode::FAILURE;
    };
    // SAFETY: kill with a positive pid and a valid signal has no memory-safety conditions.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        crate::tell!(
            "agentwatch daemon: cannot signal pid {}: {}",
            d.pid,
            std::io::Error::last_os_error()
        );
        return ExitCode::FAILURE;
    }
    // A stopped daemon acts on the SIGTERM only once it runs again.
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let start = std::time::Instant::now();
    while start.elapsed() < WAIT {
        if !matches!(running(tmux).await, Ok(Some((now, _))) if now.pid == d.pid) {
            crate::commands::say(&format!("stopped daemon {}\n", d.pid));
            return ExitCode::SUCCESS;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    crate::tell!(
        "agentwatch daemon: pid {} did not stop within {}s",
        d.pid,
        WAIT.as_secs()
    );
    ExitCode::FAILURE
}

fn is_agentwatch(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        Ok(comm) => comm.trim().starts_with("agentwatch"),
        // No /proc here: the lock is the evidence.
        Err(_) => !Path::new("/proc/self").exists(),
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn log_path() -> String {
    crate::adapters::store::state_dir()
        .map(|d| d.join("agentwatch.log").display().to_string())
        .unwrap_or_else(|| "no state directory".into())
}
