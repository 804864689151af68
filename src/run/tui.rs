//! The dashboard front end: the terminal set up and restored, keys, resizes and signals
//! turned into messages, and the shared loop run with a screen.

use std::sync::Arc;
use std::time::Duration;

use std::io::{Stdout, Write};

use crossterm::event::EventStream;
use futures_util::StreamExt;
use ratatui::backend::CrosstermBackend;

use crate::adapters::poll::Prober;
use crate::adapters::tmux::client::Tmux;
use crate::adapters::tmux::server::TmuxEnv;
use crate::cli::Cli;
use crate::config;
use crate::core::msg::Msg;
use crate::core::msg::Viewer;
use crate::core::state::State;
use crate::ui::{theme::Theme, Look};

/// Where agentwatch is shown, when it runs inside the server it watches (`$TMUX` names it):
/// the pane whose tty is agentwatch's own terminal; with none (tmux gives a popup no pane),
/// a popup over the client of `$TMUX`'s session that last had a key, which is the one that
/// has just opened it. `$TMUX_PANE` is only a fallback: tmux copies the environment its
/// server started with into a popup's, so a server started from another's pane hands its
/// popups that pane's id.
pub async fn viewer(tmux: &Tmux) -> Option<Viewer> {
    /// Asked once at start, before the first frame: a tmux that does not answer in this
    /// long is not waited for.
    const ASK: Duration = Duration::from_millis(500);
    let env = TmuxEnv::current()?;
    use crate::adapters::tmux::server::socket_identity;
    let same = socket_identity(&env.socket) == socket_identity(tmux.socket());
    if !same {
        return None;
    }
    let guess = || viewer_from(&env, std::env::var("TMUX_PANE").ok().as_deref());
    let Some(own) = std::fs::read_link("/proc/self/fd/0")
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|t| t.starts_with("/dev/"))
    else {
        return guess();
    };
    let Ok(panes) = tmux
        .run_for(["list-panes", "-a", "-F", "#{pane_tty} #{pane_id}"], ASK)
        .await
    else {
        return guess();
    };
    let panes = String::from_utf8_lossy(&panes);
    if let Some(id) = panes.lines().find_map(|l| {
        let (tty, id) = l.split_once(' ')?;
        (tty == own).then(|| id.to_string())
    }) {
        return Some(Viewer::Pane(id));
    }
    let session = env.session?;
    let client = match crate::adapters::tmux::clients::list(tmux, Some(ASK)).await {
        Ok(list) => crate::core::viewer::showing(
            &list,
            &Viewer::Popup {
                session: session.clone(),
                client: None,
            },
        )
        .ok(),
        Err(_) => None,
    };
    Some(Viewer::Popup { session, client })
}

/// Why the dashboard cannot run here, if it cannot: it draws on a terminal, and standard
/// output is where it draws. Said before anything is changed (no server started, no
/// terminal mode set).
pub fn no_terminal() -> Option<String> {
    use std::io::IsTerminal;
    (!std::io::stdout().is_terminal()).then(|| {
        "the dashboard needs a terminal, and standard output is not one: run it in a terminal; \
         `agentwatch status` (`--json` for scripts) reads the agents once, and \
         `agentwatch daemon` supervises them without a terminal"
            .to_string()
    })
}

/// Raw mode, the alternate screen, and a terminal that sends each frame whole.
fn take_terminal() -> color_eyre::Result<ratatui::Terminal<CrosstermBackend<Frames<Stdout>>>> {
    use color_eyre::eyre::WrapErr;
    crossterm::terminal::enable_raw_mode()
        .wrap_err("cannot put the terminal in raw mode (is there a terminal for keys?)")?;
    let taken = crossterm::execute!(std::io::stdout(), crossterm::terminal::EnterAlternateScreen)
        .map_err(color_eyre::Report::from)
        .and_then(|()| {
            Ok(ratatui::Terminal::new(CrosstermBackend::new(Frames::new(
                std::io::stdout(),
            )))?)
        });
    if taken.is_err() {
        ratatui::restore();
    }
    taken.wrap_err("cannot take over the terminal")
}

/// Standard output that sends a frame in one write, between the marks of synchronized
/// output (DECSET 2026). ratatui writes a frame as many small pieces and flushes once at its
/// end; through a line-buffered stdout those pieces left in 1 KiB writes, so a terminal (or
/// tmux, whose `capture-pane` a test reads) could show the top of a new frame over the
/// bottom of the old one. Terminals that know the mode show the frame at once; the others
/// ignore the marks.
pub struct Frames<W: Write> {
    frame: Vec<u8>,
    out: W,
}

const SYNC_BEGIN: &[u8] = b"\x1b[?2026h";
const SYNC_END: &[u8] = b"\x1b[?2026l";

impl<W: Write> Frames<W> {
    pub fn new(out: W) -> Self {
        Frames {
            frame: Vec::with_capacity(64 * 1024),
            out,
        }
    }
}

impl<W: Write> Write for Frames<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.frame.is_empty() {
            self.frame.extend_from_slice(SYNC_BEGIN);
        }
        self.frame.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.frame.is_empty() {
            self.frame.extend_from_slice(SYNC_END);
            // Cleared whatever the write gives: a frame that failed is not sent again
            // before the next one.
            let sent = self.out.write_all(&self.frame);
            self.frame.clear();
            sent?;
        }
        self.out.flush()
    }
}

/// The viewer as the environment says it, where tmux cannot be asked.
fn viewer_from(env: &TmuxEnv, pane: Option<&str>) -> Option<Viewer> {
    match pane {
        Some(p) if p.starts_with('%') => Some(Viewer::Pane(p.to_string())),
        Some(_) => None,
        None => Some(Viewer::Popup {
            session: env.session.clone()?,
            client: None,
        }),
    }
}

pub async fn dashboard(
    cli: &Cli,
    config: &config::Config,
    tmux: Tmux,
    tick: Duration,
) -> color_eyre::Result<()> {
    color_eyre::install()?;
    let log = super::logging::init();
    tracing::info!(
        "agentwatch {} watching {}",
        env!("CARGO_PKG_VERSION"),
        tmux.socket().display()
    );
    let look = Look {
        theme: Theme::from_env(&config.theme),
        home: std::env::var("HOME").ok(),
        tz: super::time_zone(),
    };
    let mut terminal = take_terminal()?;
    let mouse = config.mouse;
    if mouse {
        let _ = crossterm::execute!(std::io::stdout(), crossterm::event::EnableMouseCapture);
    }
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        use std::sync::atomic::Ordering::SeqCst;
        // A panic inside this hook (or a second thread's) says nothing more: the first one
        // is reported, and nothing here may wait on what the panicking frame holds.
        static IN_HOOK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if IN_HOOK.swap(true, SeqCst) {
            return;
        }
        let bt = std::backtrace::Backtrace::force_capture();
        // Straight to the log file, not through tracing: the panic may be in its writer.
        super::logging::panic_line(&format!("{info}\n{bt}"));
        super::PANICKED.store(true, SeqCst);
        if TERMINAL_GONE.load(SeqCst) {
            // Nothing to restore, nowhere to report.
            return;
        }
        if mouse {
            let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
        }
        // The terminal back to normal, then color-eyre's report on it.
        let _ = ratatui::try_restore();
        report(info);
    }));
    let size = terminal
        .size()
        .map(|s| (s.width, s.height))
        .unwrap_or((80, 24));
    let mut state = State::new(config, cli.all, tmux.socket().display().to_string(), size);
    state.client = viewer(&tmux).await;
    state.in_other_tmux = state.client.is_none() && TmuxEnv::current().is_some();
    state.grid.home = look.home.clone();
    let clock = super::Clock::start();
    state.supervision.elect = true;
    state.supervision.supervising = false;
    state.story.started = Some(clock.now());
    state.tz = look.tz.clone();
    state.zones = jiff::tz::db().clone();
    let elector = super::elector::Elector::for_me(false, clock.now());
    // A terminal that cannot be read any more (its server killed, its window closed) is
    // gone: quit, as on SIGHUP, rather than read it again and again.
    let keys = EventStream::new().filter_map(|ev| async move {
        match ev {
            Ok(ev) => super::input::message(ev),
            Err(e) => {
                tracing::info!("the terminal cannot be read ({e}): quitting");
                TERMINAL_GONE.store(true, std::sync::atomic::Ordering::SeqCst);
                Some(Msg::Action(crate::core::msg::Action::Quit))
            }
        }
    });
    // SIGTERM, SIGHUP (the terminal went away), SIGINT and SIGQUIT quit like q: the terminal
    // is restored on the way out (SIGQUIT's default would leave it in the alternate screen
    // with the cursor hidden, and dump core); after SIGHUP there is none to restore.
    let mut stops = Vec::new();
    for (kind, gone) in [
        (tokio::signal::unix::SignalKind::terminate(), false),
        (tokio::signal::unix::SignalKind::hangup(), true),
        (tokio::signal::unix::SignalKind::interrupt(), false),
        (tokio::signal::unix::SignalKind::quit(), false),
    ] {
        if let Ok(s) = tokio::signal::unix::signal(kind) {
            stops.push(futures_util::stream::unfold(s, move |mut s| async move {
                s.recv().await?;
                if gone {
                    tracing::info!("SIGHUP: the terminal went away; quitting");
                    TERMINAL_GONE.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                Some((Msg::Action(crate::core::msg::Action::Quit), s))
            }));
        }
    }
    let input = futures_util::stream::select(
        keys,
        futures_util::stream::select_all(stops.into_iter().map(Box::pin)),
    );
    let io = Arc::new(
        super::Io::new(
            Prober::new(tmux).with_shells(&config.shells),
            crate::adapters::respawn::default_crash_dir(),
        )
        .with_journal(crate::adapters::store::journal::default_path())
        .with_spend_cache(crate::adapters::spend::Follower::default_cache())
        .with_roster(crate::adapters::store::roster::default_path())
        .with_notify(config.notify.clone())
        .with_agents(config.agents())
        .with_crash_cap(&config.crash_records)
        .with_elector(elector)
        .with_remotes(super::remote_probers(config)),
    );
    // A debugging aid, and how the crash path is tested: panic on purpose after a while.
    let debug_panic = std::env::var("AGENTWATCH_DEBUG_PANIC_AFTER_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(ms) = debug_panic {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            #[allow(clippy::panic)]
            {
                panic!("AGENTWATCH_DEBUG_PANIC_AFTER_MS={ms}: a panic on purpose");
            }
        });
    }
    let result = super::run(
        &mut terminal,
        &mut state,
        &look,
        std::sync::Arc::clone(&io),
        tick,
        Box::pin(input),
    )
    .await;
    // A frame that could not be written to a terminal that is gone is the same news.
    let result = match result {
        Err(e) if is_gone(&e) => {
            tracing::info!("the terminal cannot be written ({e}): quitting");
            TERMINAL_GONE.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        }
        r => r,
    };
    // The next instance takes over at once, not when the claim runs out.
    io.release().await;
    let gone = TERMINAL_GONE.load(std::sync::atomic::Ordering::SeqCst);
    // After a panic the hook has restored the terminal already; leaving the alternate
    // screen a second time would wipe the report it printed. A terminal that is gone is
    // written nothing.
    if !super::PANICKED.load(std::sync::atomic::Ordering::SeqCst) && !gone {
        if mouse {
            let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
        }
        let _ = ratatui::try_restore();
    }
    if gone {
        // Dropped, it would show the cursor on the terminal that is gone, and print the
        // failure to stderr (a panic, with stderr that terminal).
        std::mem::forget(terminal);
        tracing::info!("left with the terminal gone");
    }
    if let (Err(_), Some(log), false) = (&result, log, gone) {
        crate::commands::tell(&format!("agentwatch: details in {}", log.display()));
    }
    result
}

/// The terminal this dashboard draws on went away (SIGHUP, or it can no longer be read or
/// written): nothing is restored on it or printed to it on the way out.
pub static TERMINAL_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An error that says the terminal is gone: an I/O error of a terminal that hung up.
fn is_gone(e: &color_eyre::Report) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| {
            matches!(
                io.kind(),
                std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::NotConnected
            ) || matches!(
                io.raw_os_error(),
                Some(libc::EIO) | Some(libc::ENXIO) | Some(libc::EPIPE)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::{viewer_from, Frames, SYNC_BEGIN, SYNC_END};
    use crate::adapters::tmux::server::TmuxEnv;
    use crate::core::msg::Viewer;
    use std::io::Write;

    #[test]
    fn without_tmux_to_ask_the_environment_says_a_pane_or_a_popup_of_a_session() {
        let env = TmuxEnv::parse("/tmp/tmux-0/default,4242,3").unwrap();
        assert_eq!(env.session.as_deref(), Some("$3"));
        assert_eq!(
            viewer_from(&env, Some("%12")),
            Some(Viewer::Pane("%12".into()))
        );
        assert_eq!(
            viewer_from(&env, None),
            Some(Viewer::Popup {
                session: "$3".into(),
                client: None
            })
        );
        assert_eq!(viewer_from(&env, Some("junk")), None);
        let no_session = TmuxEnv::parse("/tmp/tmux-0/default,4242,-1").unwrap();
        assert_eq!(no_session.session, None);
        assert_eq!(viewer_from(&no_session, None), None);
        assert_eq!(TmuxEnv::parse(""), None);
        assert_eq!(
            TmuxEnv::parse("/s").unwrap(),
            TmuxEnv {
                socket: "/s".into(),
                session: None
            }
        );
    }

    /// Records each write it is given; fails the writes it is told to.
    #[derive(Default)]
    struct Recorder {
        writes: Vec<Vec<u8>>,
        fail: bool,
    }

    impl Write for Recorder {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.fail {
                return Err(std::io::Error::other("disk full"));
            }
            self.writes.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_frame_leaves_in_one_write_between_the_synchronized_output_marks() {
        let mut f = Frames::new(Recorder::default());
        for piece in ["\x1b[1;1H", "top", "\x1b[30;1H", "bottom"] {
            f.write_all(piece.as_bytes()).unwrap();
        }
        assert!(f.out.writes.is_empty(), "nothing leaves before the flush");
        f.flush().unwrap();
        assert_eq!(f.out.writes.len(), 1);
        let sent = String::from_utf8(f.out.writes[0].clone()).unwrap();
        assert_eq!(sent, "\x1b[?2026h\x1b[1;1Htop\x1b[30;1Hbottom\x1b[?2026l");
        // A flush with nothing drawn sends nothing, not an empty pair of marks.
        f.flush().unwrap();
        assert_eq!(f.out.writes.len(), 1);
        // The next frame has marks of its own.
        f.write_all(b"next").unwrap();
        f.flush().unwrap();
        assert_eq!(
            f.out.writes[1],
            [SYNC_BEGIN, b"next".as_slice(), SYNC_END].concat()
        );
    }

    #[test]
    fn a_frame_that_could_not_be_sent_is_not_sent_again_with_the_next() {
        let mut f = Frames::new(Recorder {
            fail: true,
            ..Recorder::default()
        });
        f.write_all(b"lost").unwrap();
        assert!(f.flush().is_err());
        f.out.fail = false;
        f.write_all(b"next").unwrap();
        f.flush().unwrap();
        assert_eq!(
            f.out.writes,
            vec![[SYNC_BEGIN, b"next".as_slice(), SYNC_END].concat()]
        );
    }
}
