use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use crossterm::event::{Event, EventStream};
use futures_util::StreamExt;

use agentwatch::app;
use agentwatch::cli::{Cli, Command};
use agentwatch::config;
use agentwatch::msg::Msg;
use agentwatch::probe::Prober;
use agentwatch::state::State;
use agentwatch::tmux::client::{resolve_socket, Tmux, TmuxError, TmuxVersion};
use agentwatch::ui::{theme::Theme, Look};

/// The oldest tmux whose features agentwatch needs (pane options, `set-option -p`).
const MIN_TMUX: TmuxVersion = TmuxVersion { major: 3, minor: 1 };

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Commands that need neither tmux nor a config.
    if let Some(Command::ShellInit { shell }) = &cli.command {
        print!("{}", shell.snippet());
        return ExitCode::SUCCESS;
    }
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("agentwatch: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    rt.block_on(run(cli))
}

async fn run(cli: Cli) -> ExitCode {
    let (config, _path) = match config::load(cli.config.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("agentwatch: {e}");
            return ExitCode::from(2);
        }
    };
    let socket = resolve_socket(&cli.server());
    let tick = Duration::from_millis(config.tick_ms);
    let timeout = Duration::from_millis((config.tick_ms * 4).clamp(1_000, 5_000));
    let tmux = Tmux::new(socket.clone(), timeout);
    match tmux.version().await {
        Ok(v) if v < MIN_TMUX => {
            eprintln!("agentwatch: tmux {v} is too old: agentwatch needs tmux {MIN_TMUX} or newer (per-pane options); exit codes by signal need 3.3+");
            return ExitCode::from(2);
        }
        Ok(_) => {}
        Err(TmuxError::NotInstalled) => {
            eprintln!("agentwatch: tmux is not installed (not found on PATH): install it, e.g. `apt-get install tmux` or `brew install tmux`");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("agentwatch: {e}");
            return ExitCode::from(2);
        }
    }
    match &cli.command {
        Some(Command::ShellInit { .. }) => ExitCode::SUCCESS,
        Some(Command::Spawn(a)) => {
            let req = agentwatch::spawn::Request {
                agent: a.agent.clone(),
                cwd: a.cwd.clone(),
                name: a.name.clone(),
                session: a.target.clone(),
                args: a.args.clone(),
            };
            match agentwatch::spawn::spawn(&tmux, &req, &config.agents()).await {
                Ok(id) => {
                    println!("{id}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("agentwatch spawn: {e}");
                    ExitCode::from(2)
                }
            }
        }
        None => match dashboard(&cli, &config, tmux, tick).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("agentwatch: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

async fn dashboard(
    cli: &Cli,
    config: &config::Config,
    tmux: Tmux,
    tick: Duration,
) -> color_eyre::Result<()> {
    color_eyre::install()?;
    let log = agentwatch::logging::init();
    tracing::info!(
        "agentwatch {} watching {}",
        env!("CARGO_PKG_VERSION"),
        tmux.socket().display()
    );
    let look = Look {
        theme: Theme::from_env(),
        home: std::env::var("HOME").ok(),
        utc_offset: app::utc_offset(),
    };
    // ratatui's hook restores the terminal, then color-eyre's prints the report; ours
    // first writes the details to the log file.
    let mut terminal = ratatui::init();
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let bt = std::backtrace::Backtrace::force_capture();
        tracing::error!("panic: {info}\n{bt}");
        app::PANICKED.store(true, std::sync::atomic::Ordering::SeqCst);
        report(info);
    }));
    let size = terminal
        .size()
        .map(|s| (s.width, s.height))
        .unwrap_or((80, 24));
    let mut state = State::new(config, cli.all, tmux.socket().display().to_string(), size);
    state.client = app::client_inside(tmux.socket());
    state.owner = format!("aw-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let input = EventStream::new().filter_map(|ev| async move {
        match ev {
            Ok(Event::Key(k)) => Some(Msg::Key(k)),
            Ok(Event::Resize(width, height)) => Some(Msg::Resize { width, height }),
            _ => None,
        }
    });
    let io = Arc::new(
        app::Io::new(Prober::new(tmux), agentwatch::relaunch::default_crash_dir())
            .with_journal(agentwatch::journal::default_path())
            .with_roster(agentwatch::roster::default_path())
            .with_crash_cap(&config.crash_records),
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
    let result = app::run(&mut terminal, &mut state, &look, io, tick, Box::pin(input)).await;
    // After a panic the hook has restored the terminal already; leaving the alternate
    // screen a second time would wipe the report it printed.
    if !app::PANICKED.load(std::sync::atomic::Ordering::SeqCst) {
        ratatui::restore();
    }
    if let (Err(_), Some(log)) = (&result, log) {
        eprintln!("agentwatch: details in {}", log.display());
    }
    result
}
