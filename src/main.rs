use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use agentwatch::adapters::poll::Prober;
use agentwatch::adapters::tmux::client::{Tmux, TmuxError, TmuxVersion};
use agentwatch::adapters::tmux::server::resolve_socket;
use agentwatch::cli::{Cli, Command};
use agentwatch::config;
use agentwatch::run;

/// The oldest tmux whose features agentwatch needs (pane options, `set-option -p`).
const MIN_TMUX: TmuxVersion = TmuxVersion { major: 3, minor: 1 };

fn main() -> ExitCode {
    raise_open_files_limit();
    let cli = Cli::parse();
    // Commands that need neither tmux nor a config.
    match &cli.command {
        Some(Command::ShellInit { shell }) => {
            return agentwatch::commands::print_then(
                "shell-init",
                shell.snippet(),
                ExitCode::SUCCESS,
            );
        }
        Some(Command::Hook { agent, event }) => {
            agentwatch::commands::hooks::run_hook(*agent, event);
            return ExitCode::SUCCESS;
        }
        Some(Command::Hooks {
            action,
            agent,
            dry_run,
        }) => {
            use agentwatch::commands::hooks;
            let Some(path) = agent.config_path() else {
                agentwatch::tell!("agentwatch hooks: no home directory (set HOME)");
                return ExitCode::from(2);
            };
            let exe = match std::env::current_exe() {
                Ok(p) => p,
                Err(e) => {
                    agentwatch::tell!("agentwatch hooks: cannot find my own binary: {e}");
                    return ExitCode::from(2);
                }
            };
            let install = *action == agentwatch::cli::HooksAction::Install;
            return match hooks::change(*agent, install, *dry_run, &path, &exe) {
                Ok(out) => {
                    agentwatch::commands::say(&out);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    agentwatch::tell!("agentwatch hooks: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Some(Command::Completions { shell }) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            // Into memory first: clap_complete panics when its writer fails (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut cmd, "agentwatch", &mut script);
            return agentwatch::commands::print_then(
                "completions",
                &String::from_utf8_lossy(&script),
                ExitCode::SUCCESS,
            );
        }
        Some(Command::Demo) => {
            if let Some(refused) = no_terminal("agentwatch demo") {
                return refused;
            }
            let exe = match std::env::current_exe() {
                Ok(p) => p,
                Err(e) => {
                    agentwatch::tell!("agentwatch demo: cannot find my own binary: {e}");
                    return ExitCode::from(2);
                }
            };
            return match agentwatch::commands::demo::run(&exe) {
                Ok(status) if status.success() => ExitCode::SUCCESS,
                Ok(_) => ExitCode::FAILURE,
                Err(e) => {
                    agentwatch::tell!("agentwatch demo: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Some(Command::Man { command }) => {
            let mut out = std::io::stdout();
            let done = match command {
                None => agentwatch::commands::man::render(&mut out),
                Some(name) => agentwatch::commands::man::render_command(&mut out, name),
            };
            return match done {
                Ok(()) => ExitCode::SUCCESS,
                // `agentwatch man | head`: the reader had enough.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    agentwatch::tell!("agentwatch man: {e}");
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
                .map(|s| (s, agentwatch::core::time::parse_duration(s)))
            {
                None => None,
                Some((_, Some(ms))) => Some(ms),
                Some((s, None)) => {
                    agentwatch::tell!(
                        "agentwatch events: --since {s:?}: use a duration like 90s, 10m, 2h or 1d"
                    );
                    return ExitCode::from(2);
                }
            };
            let Some(path) = agentwatch::adapters::store::journal::default_path() else {
                agentwatch::tell!("agentwatch events: no home directory, so no journal (set HOME)");
                return ExitCode::from(2);
            };
            let now = run::Clock::start().now();
            let scope = agentwatch::commands::events::Scope::new(
                &resolve_socket(&cli.server()),
                cli.socket_path.is_some() || cli.socket_name.is_some(),
            );
            return match agentwatch::commands::events::run(
                &path,
                since,
                *follow,
                *json,
                &run::time_zone(),
                &scope,
                now,
            ) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    agentwatch::tell!("agentwatch events: {}: {e}", path.display());
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
            agentwatch::tell!("agentwatch: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = rt.block_on(run(cli));
    // A blocking task still under way (a read of a slow disk) does not hold the exit: a
    // dashboard whose terminal went away is gone within a second.
    rt.shutdown_timeout(std::time::Duration::from_millis(300));
    code
}

async fn run(cli: Cli) -> ExitCode {
    if let Some(Command::Doctor) = &cli.command {
        return agentwatch::commands::doctor::cli(&cli).await;
    }
    let (mut config, _path) = match config::load(cli.config.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            agentwatch::tell!("agentwatch: {e}");
            return ExitCode::from(2);
        }
    };
    // `--ssh DEST`: hosts beside the config's, named by their destination.
    if let Err(e) = config.add_ssh(&cli.ssh) {
        agentwatch::tell!("agentwatch: {e}");
        return ExitCode::from(2);
    }
    let socket = resolve_socket(&cli.server());
    let tick = Duration::from_millis(config.tick_ms);
    let timeout = Duration::from_millis((config.tick_ms * 4).clamp(1_000, 5_000));
    let tmux = Tmux::new(socket.clone(), timeout);
    // The dashboard and the daemon poll over control mode; one-shot commands need no
    // connection.
    let tmux = if matches!(cli.command, None | Some(Command::Daemon(_))) {
        tmux.with_control_mode(config.control_mode)
    } else {
        tmux
    };
    match tmux.version().await {
        Ok(v) if v < MIN_TMUX => {
            agentwatch::tell!("agentwatch: tmux {v} is too old: agentwatch needs tmux {MIN_TMUX} or newer (per-pane options); exit codes by signal need 3.3+");
            return ExitCode::from(2);
        }
        Ok(_) => {}
        Err(TmuxError::NotInstalled) => {
            agentwatch::tell!("agentwatch: tmux is not installed (not found on PATH): install it, e.g. `apt-get install tmux` or `brew install tmux`");
            return ExitCode::from(2);
        }
        Err(e) => {
            agentwatch::tell!("agentwatch: {e}");
            return ExitCode::from(2);
        }
    }
    if cli.command.is_none() {
        if let Some(refused) = no_terminal("agentwatch") {
            return refused;
        }
    }
    match &cli.command {
        Some(Command::Daemon(d)) if d.stop => run::daemon::stop(&tmux).await,
        Some(Command::Daemon(d)) if d.detach => {
            run::daemon::detach(&tmux, cli.config.as_deref(), &cli.ssh).await
        }
        Some(Command::Daemon(_)) => run::daemon::run(&config, tmux, tick, true).await,
        Some(
            Command::ShellInit { .. }
            | Command::Completions { .. }
            | Command::Man { .. }
            | Command::Events { .. }
            | Command::Hooks { .. }
            | Command::Hook { .. }
            | Command::Doctor,
        ) => ExitCode::SUCCESS,
        Some(Command::Demo) => ExitCode::SUCCESS,
        Some(Command::Status { json, all }) => {
            let prober = Prober::new(tmux).with_shells(&config.shells);
            let remotes = run::remote_probers(&config);
            match agentwatch::commands::status::snapshot(
                &config,
                &prober,
                &remotes,
                cli.all || *all,
            )
            .await
            {
                Ok(agentwatch::commands::status::Snapshot {
                    rows,
                    down,
                    unsupervised,
                }) => {
                    // Never fewer agents than there are without saying so.
                    for (host, e) in &down {
                        agentwatch::tell!(
                            "agentwatch status: host {host}: {e}: its agents are not listed"
                        );
                    }
                    // A supervisor that stopped answering is news; none at all is the
                    // usual state of a server without a daemon, said only on dead rows.
                    if let Some(why @ agentwatch::core::lease::Claim::Lapsed { .. }) = &unsupervised
                    {
                        agentwatch::tell!(
                            "agentwatch status: {}: its dead agents are not resumed",
                            why.why_unsupervised().unwrap_or_default()
                        );
                    }
                    let text = if *json {
                        format!(
                            "{}\n",
                            serde_json::to_string_pretty(&rows).unwrap_or_default()
                        )
                    } else {
                        agentwatch::commands::status::table(&rows)
                    };
                    let code = if rows.iter().any(|r| r.is_dead()) {
                        ExitCode::from(1)
                    } else {
                        ExitCode::SUCCESS
                    };
                    agentwatch::commands::print_then("status", &text, code)
                }
                Err(e) => {
                    agentwatch::tell!("agentwatch status: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Some(Command::Explain { pane }) => {
            let prober = Prober::new(tmux).with_shells(&config.shells);
            let now = run::Clock::start().now();
            match agentwatch::commands::explain::run(&config, &prober, pane, now, &run::time_zone())
                .await
            {
                Ok(text) => agentwatch::commands::print_then("explain", &text, ExitCode::SUCCESS),
                Err(e) => {
                    agentwatch::tell!("agentwatch explain: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Some(Command::Spawn(a)) => {
            let req = agentwatch::commands::spawn::Request {
                remote: a.host.is_some(),
                agent: a.agent.clone(),
                cwd: a.cwd.clone(),
                name: a.name.clone(),
                session: a.target.clone(),
                args: a.args.clone(),
            };
            // On another host: through its control connection, so that the agent gets its
            // tmux session's environment there (a client started over ssh has sshd's PATH).
            let tmux = match &a.host {
                None => tmux,
                Some(name) => match config.hosts.iter().find(|h| &h.name == name) {
                    Some(h) => run::remote_tmux(h),
                    None => {
                        let known: Vec<&str> =
                            config.hosts.iter().map(|h| h.name.as_str()).collect();
                        agentwatch::tell!(
                            "agentwatch spawn: no host {name:?} ({}): add a [[hosts]] table with name = {name:?} to the config, or give --ssh {name}",
                            if known.is_empty() {
                                "none is configured".to_string()
                            } else {
                                format!("the hosts are {}", known.join(", "))
                            }
                        );
                        return ExitCode::from(2);
                    }
                },
            };
            match agentwatch::commands::spawn::spawn(&tmux, &req, &config.agents()).await {
                Ok(id) => {
                    agentwatch::commands::print_then("spawn", &format!("{id}\n"), ExitCode::SUCCESS)
                }
                Err(e) => {
                    agentwatch::tell!("agentwatch spawn: {e}");
                    ExitCode::from(2)
                }
            }
        }
        None => match run::tui::dashboard(&cli, &config, tmux, tick).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                agentwatch::tell!("agentwatch: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

/// The dashboard draws on a terminal: without one, it says what to run instead before it
/// starts anything (exit 2).
fn no_terminal(who: &str) -> Option<ExitCode> {
    let why = run::tui::no_terminal()?;
    agentwatch::tell!("{who}: {why}");
    Some(ExitCode::from(2))
}

/// One pidfd per watched process: a thousand agent panes need more descriptors than the
/// usual soft limit of 1024. The soft limit is raised to the hard one, as far as allowed
/// (where a pidfd cannot be opened, its process is asked with `kill(pid, 0)` instead).
fn raise_open_files_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}
