//! Agents run by the pane's own process: typed at a shell prompt, or run by a wrapper, a
//! launcher or a `bash -c`. The pane need not die with the agent: its exit shows as the
//! agent's process leaving the pane's foreground tree. This pure module turns such a pane
//! into the view the rest of the core already understands: dead while its agent is not
//! running (with the exit code the shell integration published, if any), alive while it
//! runs.

use crate::agent::Agents;
use crate::card::{Card, Launcher, Life};
use crate::pane::{Pane, Proc};
use crate::time::Millis;

/// How long after an exit the shell integration's status is waited for.
pub const STATUS_GRACE_MS: Millis = 2_000;

/// `@agentwatch_last_status`: `<status> <epoch seconds>`, the seconds with a fraction
/// where the shell has one (bash 5 and zsh's `EPOCHREALTIME`). Returns the status, the time
/// in ms, and whether that time is precise (had a fraction).
pub fn parse_last_status(s: &str) -> Option<(i32, Millis, bool)> {
    let mut it = s.split_whitespace();
    let code = it.next()?.parse().ok()?;
    let at = it.next()?;
    let (secs, frac) = at.split_once(['.', ',']).unwrap_or((at, ""));
    let secs = secs.parse::<Millis>().ok()?;
    let ms: String = frac.chars().chain("000".chars()).take(3).collect();
    let ms = ms.parse::<Millis>().ok()?;
    Some((code, secs * 1000 + ms, !frac.is_empty()))
}

/// What the core should see of a pane whose own process hosts the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LauncherView {
    /// The pane as the core sees it: `dead` while the agent is not running.
    pub pane: Pane,
    pub launcher: Launcher,
    /// The agent kind running now, or last recorded on the pane.
    pub kind: Option<String>,
    /// Not running, and no exit of it is known: the prompt is simply idle.
    pub idle: bool,
    /// The agent was running at the last look and is not now.
    pub exited_now: bool,
    /// The agent is in the foreground.
    pub running: bool,
}

/// Whether a pane's own process is one of the configured shells.
pub fn is_shell(comm: &str, shells: &[String]) -> bool {
    let name = comm.trim_start_matches('-');
    shells.iter().any(|s| s == name)
}

/// The pane's own process, as the launcher of its agent.
#[derive(Debug, Clone, Copy)]
pub struct PaneProcess<'a> {
    /// Its name: `bash`, `cc`, `npm`.
    pub name: &'a str,
    /// An interactive shell: the agent's exit shows as its prompt coming back, with the
    /// status its integration publishes, and a command can be typed there.
    pub prompt: bool,
    /// Its argv, when it was read (once per process).
    pub argv: Option<&'a [String]>,
    /// The agent kind the launcher itself names (a configured wrapper).
    pub kind: Option<&'a str>,
    /// Its children outside the terminal's foreground group (stopped or background jobs).
    pub background: &'a [u32],
}

/// The exit a shell's status stands for: `128+N` is death by signal N, as shells report it.
pub fn shell_exit(status: i32) -> (Option<i32>, Option<i32>) {
    match status - 128 {
        n @ 1..=31 => (None, Some(n)),
        _ => (Some(status), None),
    }
}

/// The view of a live pane whose own process hosts the agent. `prev` is its card from the
/// last look; `agent` the agent's process in the pane's foreground tree, while one runs.
pub fn view(
    agents: &Agents,
    process: &PaneProcess<'_>,
    prev: Option<&Card>,
    mut pane: Pane,
    agent: Option<&Proc>,
    now: Millis,
) -> LauncherView {
    let current = crate::agent::program_name(&pane.current_command).to_string();
    let shell = process.name;
    let in_fg = agent
        .and_then(|p| agents.by_proc(p))
        .or_else(|| {
            // The tree is read again when the current command changes, so this is only a
            // stand-in for when /proc could not be read.
            agents
                .by_program(&current)
                .filter(|_| process.prompt && current != shell)
        })
        .map(|d| d.name.clone());
    let prev_launcher = prev.and_then(|c| c.launcher.clone());
    let recorded = (!pane.opts.agent.is_empty()).then(|| pane.opts.agent.clone());
    let kind = in_fg
        .clone()
        .or_else(|| process.kind.map(str::to_string))
        .or(recorded)
        .or_else(|| prev.and_then(|c| c.agent.clone()));
    let last = prev_launcher.clone().unwrap_or_default();
    let mut launcher = Launcher {
        name: shell.to_string(),
        prompt: process.prompt,
        alive: true,
        argv: process.argv.map(<[String]>::to_vec).unwrap_or(last.argv),
        agent_seen_at: last.agent_seen_at,
        first_seen: last.first_seen,
        status_before: last.status_before,
        // The last run's process and argv stay known after it ends (its session id, and
        // what a relaunch runs).
        fg_pid: last.fg_pid.or_else(|| pane.exited_agent()),
        fg_argv: last.fg_argv,
    };
    let was_running = prev.is_some_and(|c| c.launcher.is_some() && c.life == Life::Running);
    // Stopped with Ctrl-Z (or sent to the background): out of the foreground, still alive.
    let suspended = in_fg.is_none()
        && was_running
        && launcher
            .fg_pid
            .is_some_and(|p| process.background.contains(&p));
    if in_fg.is_some() {
        if !was_running {
            launcher.first_seen = Some(now);
            launcher.status_before = pane.opts.last_status.clone();
        }
        launcher.agent_seen_at = Some(now);
        if let Some(p) = agent {
            launcher.fg_pid = Some(p.pid);
            launcher.fg_argv = p.argv.clone();
        }
    }
    if in_fg.is_some() || suspended {
        pane.dead = false;
        return LauncherView {
            pane,
            launcher,
            kind,
            idle: false,
            exited_now: false,
            running: true,
        };
    }
    // The agent is not running. When did it exit, if we know?
    let exited_at = if was_running {
        Some(now)
    } else {
        prev.filter(|c| c.launcher.is_some())
            .and_then(|c| c.died_at)
            .or_else(|| pane.exited_mark())
    };
    pane.dead = true;
    // A death seen now gets its time from the core's clock; a recorded one from the mark.
    pane.dead_time = if was_running {
        None
    } else {
        exited_at.map(|t| t / 1000)
    };
    pane.dead_status = None;
    pane.dead_signal = None;
    if process.prompt {
        // The first status the shell published after the agent ended is the agent's; a
        // later one (Ctrl-C at the prompt) is not.
        let kept = prev
            .filter(|c| c.launcher.is_some() && !was_running && c.pane.dead)
            .filter(|c| c.pane.dead_status.is_some() || c.pane.dead_signal.is_some())
            .map(|c| (c.pane.dead_status, c.pane.dead_signal));
        let (status, signal) = kept.unwrap_or_else(|| {
            published(&pane.opts.last_status, &launcher, prev, exited_at)
                .map_or((None, None), shell_exit)
        });
        pane.dead_status = status;
        pane.dead_signal = signal;
    }
    LauncherView {
        pane,
        launcher,
        kind,
        idle: exited_at.is_none(),
        exited_now: was_running,
        running: false,
    }
}

/// The shell integration's status, if it is the agent's: published after this run of the
/// agent was first seen (else it is the status of the command before it): a new value,
/// stamped at or after that moment (same clock: this machine's wall clock). Read with no
/// earlier look (a new dashboard, `status`, `explain`): published around the recorded exit,
/// not long after it (a later command's, or a Ctrl-C at the prompt by an older snippet), so
/// every reader comes to the answer the watcher that saw the exit came to.
fn published(
    last_status: &str,
    launcher: &Launcher,
    prev: Option<&Card>,
    exited_at: Option<Millis>,
) -> Option<i32> {
    let seen_run = launcher
        .first_seen
        .filter(|_| prev.is_some_and(|c| c.launcher.is_some()));
    let changed = last_status != launcher.status_before;
    let fresh = |at: Millis, precise: bool| match (seen_run, exited_at) {
        (Some(first), _) => changed && at + if precise { 0 } else { 999 } >= first,
        (None, Some(e)) => at + 3_000 >= e && at <= e + STATUS_GRACE_MS,
        (None, None) => false,
    };
    parse_last_status(last_status)
        .filter(|&(_, at, precise)| fresh(at, precise))
        .map(|(code, _, _)| code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::observe;
    use crate::pane::{Exit, PaneId};
    use crate::testkit::T0;

    fn bash(cur: &str) -> Pane {
        Pane {
            id: PaneId(1),
            pid: Some(100),
            current_command: cur.into(),
            start_command: "bash".into(),
            ..Pane::default()
        }
    }

    const BASH: PaneProcess<'static> = PaneProcess {
        name: "bash",
        prompt: true,
        argv: None,
        kind: None,
        background: &[],
    };

    fn proc_of(pid: u32, argv: &[String]) -> Proc {
        Proc {
            pid,
            ppid: 100,
            comm: crate::agent::program_name(&argv[0]).to_string(),
            argv: argv.to_vec(),
            start: None,
        }
    }

    fn step(
        prev: Option<&Card>,
        pane: Pane,
        fg: Option<&[String]>,
        now: Millis,
    ) -> (Card, LauncherView) {
        let proc_ = fg.map(|a| proc_of(200, a));
        let v = view(&Agents::default(), &BASH, prev, pane, proc_.as_ref(), now);
        let mut c = observe(prev.cloned(), v.pane.clone(), v.kind.clone(), None, now);
        c.launcher = Some(v.launcher.clone());
        if v.idle {
            c.life = Life::Idle;
        }
        (c, v)
    }

    #[test]
    fn a_shell_that_never_ran_an_agent_is_no_agent_pane() {
        let v = view(&Agents::default(), &BASH, None, bash("bash"), None, T0);
        assert_eq!(v.kind, None);
        assert!(v.idle);
    }

    #[test]
    fn the_agent_returning_to_the_prompt_is_a_death_with_the_published_status() {
        let argv = vec!["claude".to_string(), "--session-id".into(), "x".into()];
        let (c, v) = step(None, bash("claude"), Some(&argv), T0);
        assert!(v.running);
        assert_eq!(c.life, Life::Running);
        // The prompt is back; the hook published status 1 a moment later.
        let mut p = bash("bash");
        p.opts.agent = "claude".into();
        p.opts.last_status = format!("1 {}", (T0 + 400) / 1000);
        let (c, v) = step(Some(&c), p.clone(), None, T0 + 500);
        assert!(v.exited_now);
        assert_eq!(c.life, Life::Dead(Exit::Code(1)));
        assert_eq!(c.died_at, Some(T0 + 500));
        // A status from before the agent ran is not its status.
        let mut before = bash("claude");
        before.opts.last_status = format!("0 {}.250", T0 / 1000);
        let (c0, _) = step(None, before, Some(&argv), T0 + 300);
        p.opts.last_status = format!("0 {}.250", T0 / 1000);
        let (c, _) = step(Some(&c0), p, None, T0 + 500);
        assert_eq!(c.life, Life::Reading);
    }

    #[test]
    fn a_prompt_idle_since_before_we_looked_is_idle_not_a_death() {
        let mut p = bash("bash");
        p.opts.agent = "claude".into();
        let (c, v) = step(None, p.clone(), None, T0);
        assert!(v.idle);
        assert_eq!(c.life, Life::Idle);
        // But an exit recorded on the pane (by an earlier agentwatch) is still a death.
        p.opts.exited = (T0 - 5_000).to_string();
        p.opts.last_status = format!("3 {}", (T0 - 5_000) / 1000);
        let (c, v) = step(None, p, None, T0);
        assert!(!v.idle);
        assert_eq!(c.life, Life::Dead(Exit::Code(3)));
        assert_eq!(c.died_at, Some((T0 - 5_000) / 1000 * 1000));
    }

    #[test]
    fn an_agent_under_node_in_a_shell_is_seen() {
        let argv = vec![
            "node".to_string(),
            "/usr/lib/node_modules/@openai/codex/bin/codex.js".into(),
        ];
        let zsh = PaneProcess {
            name: "zsh",
            ..BASH
        };
        let node = proc_of(7, &argv);
        let v = view(
            &Agents::default(),
            &zsh,
            None,
            bash("node"),
            Some(&node),
            T0,
        );
        assert_eq!(v.kind.as_deref(), Some("codex"));
        assert!(v.running);
        assert_eq!(v.launcher.fg_pid, Some(7));
    }

    #[test]
    fn statuses_parse() {
        assert_eq!(
            parse_last_status("130 1780000000"),
            Some((130, 1_780_000_000_000, false))
        );
        assert_eq!(
            parse_last_status("1 1780000000.123456"),
            Some((1, 1_780_000_000_123, true))
        );
        assert_eq!(
            parse_last_status("1 1780000000,5"),
            Some((1, 1_780_000_000_500, true))
        );
        assert_eq!(parse_last_status("x 1"), None);
        assert_eq!(parse_last_status(""), None);
        assert!(is_shell("-bash", &["bash".to_string()]));
    }
    #[test]
    fn the_first_status_after_the_agent_ended_wins_over_a_later_ctrl_c() {
        let argv = vec!["claude".to_string()];
        let (c, _) = step(None, bash("claude"), Some(&argv), T0);
        let mut p = bash("bash");
        p.opts.agent = "claude".into();
        p.opts.last_status = format!("0 {}.600", T0 / 1000);
        let (c, _) = step(Some(&c), p.clone(), None, T0 + 1_000);
        assert_eq!(c.life, Life::Dead(Exit::Code(0)));
        // Ctrl-C at the prompt publishes 130: not the agent's exit.
        p.opts.last_status = format!("130 {}.900", (T0 + 5_000) / 1000);
        let (c, _) = step(Some(&c), p.clone(), None, T0 + 6_000);
        assert_eq!(c.life, Life::Dead(Exit::Code(0)));
        // A reader with no earlier look (`status`, a new dashboard) sees the exit recorded at
        // T0 + 1 s and the 130 published 4 s after it: not the agent's either (issue 28).
        p.opts.exited = (T0 + 1_000).to_string();
        let (fresh, _) = step(None, p.clone(), None, T0 + 7_000);
        assert_ne!(fresh.life, Life::Dead(Exit::Signal(2)));
        // The agent's own, published just after the recorded exit, is.
        p.opts.last_status = format!("0 {}.100", (T0 + 1_000) / 1000);
        let (fresh, _) = step(None, p, None, T0 + 7_000);
        assert_eq!(fresh.life, Life::Dead(Exit::Code(0)));
    }

    #[test]
    fn a_shell_status_of_128_plus_n_is_death_by_signal_n() {
        let argv = vec!["claude".to_string()];
        let (c, _) = step(None, bash("claude"), Some(&argv), T0);
        let mut p = bash("bash");
        p.opts.agent = "claude".into();
        p.opts.last_status = format!("137 {}.600", T0 / 1000);
        let (c, _) = step(Some(&c), p, None, T0 + 1_000);
        assert_eq!(c.life, Life::Dead(Exit::Signal(9)));
        assert_eq!(shell_exit(1), (Some(1), None));
        assert_eq!(shell_exit(143), (None, Some(15)));
        assert_eq!(shell_exit(128), (Some(128), None));
        assert_eq!(shell_exit(255), (Some(255), None));
    }

    #[test]
    fn an_agent_stopped_with_ctrl_z_is_not_a_death() {
        let argv = vec!["claude".to_string()];
        let (c, _) = step(None, bash("claude"), Some(&argv), T0);
        let mut p = bash("bash");
        p.opts.agent = "claude".into();
        p.opts.last_status = format!("148 {}.600", T0 / 1000);
        let stopped = PaneProcess {
            background: &[200],
            ..BASH
        };
        let v = view(
            &Agents::default(),
            &stopped,
            Some(&c),
            p.clone(),
            None,
            T0 + 1_000,
        );
        assert!(v.running && !v.exited_now, "still alive, only stopped");
        // Gone from the background too: now it is a death.
        let v = view(&Agents::default(), &BASH, Some(&c), p, None, T0 + 1_000);
        assert!(v.exited_now);
    }
}

/// An argument with a control character (a typed newline would run a half command): the
/// argument, cut to 30 columns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("argument {0:?} has a control character: it cannot be typed at a prompt")]
pub struct Untypeable(pub String);

/// The command line typed at a shell prompt to relaunch an agent: each word quoted for that
/// shell, after a `cd` when the prompt is elsewhere. Refuses words with control characters
/// (a typed newline would run a half command).
pub fn typed_command(shell: &str, argv: &[String], cd: Option<&str>) -> Result<String, Untypeable> {
    let quote = |w: &str| -> Result<String, Untypeable> {
        if w.chars().any(char::is_control) {
            return Err(Untypeable(crate::text::fit(w, 30)));
        }
        Ok(if shell == "fish" {
            fish_quote(w)
        } else {
            crate::words::shell_quote(w)
        })
    };
    let words = argv
        .iter()
        .map(|w| quote(w))
        .collect::<Result<Vec<_>, _>>()?;
    let line = words.join(" ");
    Ok(match cd {
        Some(dir) => format!("cd -- {} && {line}", quote(dir)?),
        None => line,
    })
}

/// fish's quoting: single quotes, with `\` and `'` escaped inside.
fn fish_quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        return w.to_string();
    }
    format!("'{}'", w.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod typed {
    use super::*;

    fn v(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn words_are_quoted_for_the_shell_and_a_cd_comes_first() {
        let argv = v(&["claude", "--resume", "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11"]);
        assert_eq!(
            typed_command("bash", &argv, None).unwrap(),
            "claude --resume 0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11"
        );
        let argv = v(&["aider", "--model", "it's $(x)"]);
        assert_eq!(
            typed_command("zsh", &argv, Some("/tmp/a b")).unwrap(),
            r"cd -- '/tmp/a b' && aider --model 'it'\''s $(x)'"
        );
        assert_eq!(
            typed_command("fish", &argv, None).unwrap(),
            r"aider --model 'it\'s $(x)'"
        );
        assert!(typed_command("bash", &v(&["a\nb"]), None).is_err());
    }
}
