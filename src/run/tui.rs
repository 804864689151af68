//! The dashboard front end: the terminal set up and restored, keys, resizes and signals
//! turned into messages, and the shared loop run with a screen.

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event, EventStream, MouseEventKind};
use futures_util::StreamExt;

use crate::adapters::probe::Prober;
use crate::adapters::tmux::client::{Tmux, TmuxEnv};
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
    let same =
        std::fs::canonicalize(&env.socket).ok()? == std::fs::canonicalize(tmux.socket()).ok()?;
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
    let client = match tmux
        .run_for(["list-clients", "-F", super::io::CLIENTS], ASK)
        .await
    {
        Ok(list) => super::io::viewer_client(
            &String::from_utf8_lossy(&list),
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
        theme: Theme::from_env(),
        home: std::env::var("HOME").ok(),
        tz: super::time_zone(),
    };
    // ratatui's hook restores the terminal, then color-eyre's prints the report; ours
    // first writes the details to the log file.
    let mut terminal = ratatui::init();
    let mouse = config.mouse;
    if mouse {
        let _ = crossterm::execute!(std::io::stdout(), crossterm::event::EnableMouseCapture);
    }
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let bt = std::backtrace::Backtrace::force_capture();
        tracing::error!("panic: {info}\n{bt}");
        super::PANICKED.store(true, std::sync::atomic::Ordering::SeqCst);
        if mouse {
            // ratatui's own hook, next, leaves the alternate screen but not mouse reporting.
            let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
        }
        report(info);
    }));
    let size = terminal
        .size()
        .map(|s| (s.width, s.height))
        .unwrap_or((80, 24));
    let mut state = State::new(config, cli.all, tmux.socket().display().to_string(), size);
    state.client = viewer(&tmux).await;
    state.home = look.home.clone();
    let clock = super::Clock::start();
    state.elect = true;
    state.supervising = false;
    state.started = Some(clock.now());
    state.tz = look.tz.clone();
    let elector = super::elector::Elector::for_server(tmux.socket(), false, clock.now());
    let keys = EventStream::new().filter_map(|ev| async move {
        match ev {
            Ok(Event::Key(k)) => Some(Msg::Key(k)),
            // Clicks and the wheel; the pointer's moves and drags mean nothing here.
            Ok(Event::Mouse(m))
                if matches!(
                    m.kind,
                    MouseEventKind::Down(_) | MouseEventKind::ScrollUp | MouseEventKind::ScrollDown
                ) =>
            {
                Some(Msg::Mouse(m))
            }
            Ok(Event::Resize(width, height)) => Some(Msg::Resize { width, height }),
            _ => None,
        }
    });
    // SIGTERM, SIGHUP (the terminal went away), SIGINT and SIGQUIT quit like q: the terminal
    // is restored on the way out (SIGQUIT's default would leave it in the alternate screen
    // with the cursor hidden, and dump core).
    let mut stops = Vec::new();
    for kind in [
        tokio::signal::unix::SignalKind::terminate(),
        tokio::signal::unix::SignalKind::hangup(),
        tokio::signal::unix::SignalKind::interrupt(),
        tokio::signal::unix::SignalKind::quit(),
    ] {
        if let Ok(s) = tokio::signal::unix::signal(kind) {
            stops.push(futures_util::stream::unfold(s, |mut s| async move {
                s.recv()
                    .await
                    .map(|()| (Msg::Action(crate::core::msg::Action::Quit), s))
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
        .with_roster(crate::adapters::store::roster::default_path())
        .with_notify(config.notify.clone())
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
    let result = super::run(&mut terminal, &mut state, &look, io, tick, Box::pin(input)).await;
    // After a panic the hook has restored the terminal already; leaving the alternate
    // screen a second time would wipe the report it printed.
    if !super::PANICKED.load(std::sync::atomic::Ordering::SeqCst) {
        if mouse {
            let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
        }
        ratatui::restore();
    }
    if let (Err(_), Some(log)) = (&result, log) {
        eprintln!("agentwatch: details in {}", log.display());
    }
    result
}

#[cfg(test)]
mod tests {
    use super::viewer_from;
    use crate::adapters::tmux::client::TmuxEnv;
    use crate::core::msg::Viewer;

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
}
