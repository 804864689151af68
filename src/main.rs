use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use crossterm::event::{Event, EventStream};
use futures_util::StreamExt;

use agentwatch::adapters::probe::Prober;
use agentwatch::adapters::tmux::client::{resolve_socket, Tmux, TmuxError, TmuxVersion};
use agentwatch::cli::{Cli, Command};
use agentwatch::config;
use agentwatch::core::msg::Msg;
use agentwatch::core::state::State;
use agentwatch::run;
use agentwatch::ui::{theme::Theme, Look};

/// The oldest tmux whose features agentwatch needs (pane options, `set-option -p`).
const MIN_TMUX: TmuxVersion = TmuxVersion { major: 3, minor: 1 };

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Commands that need neither tmux nor a config.
    match &cli.command {
        Some(Command::ShellInit { shell }) => {
            print!("{}", shell.snippet());
            return ExitCode::SUCCESS;
        }
        Some(Command::Completions { shell }) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut cmd, "agentwatch", &mut std::io::stdout());
            return ExitCode::SUCCESS;
        }
        Some(Command::Demo) => {
            let exe = match std::env::current_exe() {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("agentwatch demo: cannot find my own binary: {e}");
                    return ExitCode::from(2);
                }
            };
            return match agentwatch::commands::demo::run(&exe) {
                Ok(status) if status.success() => ExitCode::SUCCESS,
                Ok(_) => ExitCode::FAILURE,
                Err(e) => {
                    eprintln!("agentwatch demo: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Some(Command::Man) => {
            let cmd = <Cli as clap::CommandFactory>::command();
            return match clap_mangen::Man::new(cmd).render(&mut std::io::stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("agentwatch man: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Some(Command::Events {
            follow,
            json,
            since,
        }) => {
            let since = match since
                .as_deref()
                .map(|s| (s, agentwatch::core::timefmt::parse_duration(s)))
            {
                None => None,
                Some((_, Some(ms))) => Some(ms),
                Some((s, None)) => {
                    eprintln!(
                        "agentwatch events: --since {s:?}: use a duration like 90s, 10m, 2h or 1d"
                    );
                    return ExitCode::from(2);
                }
            };
            let Some(path) = agentwatch::adapters::store::journal::default_path() else {
                eprintln!("agentwatch events: no home directory, so no journal (set HOME)");
                return ExitCode::from(2);
            };
            let now = run::Clock::start().now();
            return match agentwatch::commands::events::run(
                &path,
                since,
                *follow,
                *json,
                run::utc_offset(),
                now,
            ) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("agentwatch events: {}: {e}", path.display());
                    ExitCode::from(2)
                }
            };
        }
        _ => {}
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
    if let Some(Command::Doctor) = &cli.command {
        return doctor(&cli).await;
    }
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
    // The dashboard polls over control mode; one-shot commands need no connection.
    let tmux = if cli.command.is_none() {
        tmux.with_control_mode(config.control_mode)
    } else {
        tmux
    };
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
        Some(
            Command::ShellInit { .. }
            | Command::Completions { .. }
            | Command::Man
            | Command::Events { .. }
            | Command::Doctor,
        ) => ExitCode::SUCCESS,
        Some(Command::Demo) => ExitCode::SUCCESS,
        Some(Command::Status { json }) => {
            let prober = Prober::new(tmux);
            match agentwatch::commands::status::snapshot(&config, &prober).await {
                Ok(rows) => {
                    if *json {
                        println!(
                            "{}",
                            serde_json::to_string_pretty(&rows).unwrap_or_default()
                        );
                    } else {
                        print!("{}", agentwatch::commands::status::table(&rows));
                    }
                    if rows.iter().any(|r| r.is_dead()) {
                        ExitCode::from(1)
                    } else {
                        ExitCode::SUCCESS
                    }
                }
                Err(e) => {
                    eprintln!("agentwatch status: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Some(Command::Spawn(a)) => {
            let req = agentwatch::commands::spawn::Request {
                agent: a.agent.clone(),
                cwd: a.cwd.clone(),
                name: a.name.clone(),
                session: a.target.clone(),
                args: a.args.clone(),
            };
            match agentwatch::commands::spawn::spawn(&tmux, &req, &config.agents()).await {
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
    let log = agentwatch::run::logging::init();
    tracing::info!(
        "agentwatch {} watching {}",
        env!("CARGO_PKG_VERSION"),
        tmux.socket().display()
    );
    let look = Look {
        theme: Theme::from_env(),
        home: std::env::var("HOME").ok(),
        utc_offset: run::utc_offset(),
    };
    // ratatui's hook restores the terminal, then color-eyre's prints the report; ours
    // first writes the details to the log file.
    let mut terminal = ratatui::init();
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let bt = std::backtrace::Backtrace::force_capture();
        tracing::error!("panic: {info}\n{bt}");
        run::PANICKED.store(true, std::sync::atomic::Ordering::SeqCst);
        report(info);
    }));
    let size = terminal
        .size()
        .map(|s| (s.width, s.height))
        .unwrap_or((80, 24));
    let mut state = State::new(config, cli.all, tmux.socket().display().to_string(), size);
    state.client = run::client_inside(tmux.socket());
    state.owner = format!("aw-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let keys = EventStream::new().filter_map(|ev| async move {
        match ev {
            Ok(Event::Key(k)) => Some(Msg::Key(k)),
            Ok(Event::Resize(width, height)) => Some(Msg::Resize { width, height }),
            _ => None,
        }
    });
    // SIGTERM, SIGHUP (the terminal went away) and SIGINT quit like q: the terminal is
    // restored on the way out.
    let mut stops = Vec::new();
    for kind in [
        tokio::signal::unix::SignalKind::terminate(),
        tokio::signal::unix::SignalKind::hangup(),
        tokio::signal::unix::SignalKind::interrupt(),
    ] {
        if let Ok(s) = tokio::signal::unix::signal(kind) {
            stops.push(futures_util::stream::unfold(s, |mut s| async move {
                s.recv()
                    .await
                    .map(|()| (Msg::Action(agentwatch::core::msg::Action::Quit), s))
            }));
        }
    }
    let input = futures_util::stream::select(
        keys,
        futures_util::stream::select_all(stops.into_iter().map(Box::pin)),
    );
    let io = Arc::new(
        run::Io::new(
            Prober::new(tmux),
            agentwatch::adapters::respawn::default_crash_dir(),
        )
        .with_journal(agentwatch::adapters::store::journal::default_path())
        .with_roster(agentwatch::adapters::store::roster::default_path())
        .with_notify(config.notify.clone())
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
    let result = run::run(&mut terminal, &mut state, &look, io, tick, Box::pin(input)).await;
    // After a panic the hook has restored the terminal already; leaving the alternate
    // screen a second time would wipe the report it printed.
    if !run::PANICKED.load(std::sync::atomic::Ordering::SeqCst) {
        ratatui::restore();
    }
    if let (Err(_), Some(log)) = (&result, log) {
        eprintln!("agentwatch: details in {}", log.display());
    }
    result
}

async fn doctor(cli: &Cli) -> ExitCode {
    let loaded = config::load(cli.config.as_deref());
    let tmux = Tmux::new(resolve_socket(&cli.server()), Duration::from_secs(3));
    let ctx = agentwatch::commands::doctor::Context {
        config: match &loaded {
            Ok((c, p)) => Ok((c, p.as_deref())),
            Err(e) => Err(e.to_string()),
        },
        state_dir: agentwatch::adapters::store::state_dir(),
        home: std::env::var_os("HOME").map(std::path::PathBuf::from),
        shell: std::env::var("SHELL").ok(),
    };
    let checks = agentwatch::commands::doctor::run(&tmux, &ctx).await;
    for c in &checks {
        println!("{}", c.line());
    }
    let failed = checks
        .iter()
        .filter(|c| c.level == agentwatch::commands::doctor::Level::Fail)
        .count();
    if failed == 0 {
        println!("all good");
        ExitCode::SUCCESS
    } else {
        println!(
            "{failed} problem{} to fix",
            if failed == 1 { "" } else { "s" }
        );
        ExitCode::from(1)
    }
}
