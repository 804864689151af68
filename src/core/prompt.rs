//! Agents typed at a shell prompt. The pane never dies: the agent's exit shows only as the
//! shell coming back to the foreground. This pure module turns such a pane into the view the
//! rest of the core already understands: dead while its agent is not running (with the exit
//! code the shell integration published, if any), alive while it runs.

use crate::core::agent::Agents;
use crate::core::msg::Millis;
use crate::core::pane::Pane;
use crate::core::watch::{Card, Life, ShellHost};

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

/// What the core should see of a shell-hosted pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostView {
    /// The pane as the core sees it: `dead` while the agent is not running.
    pub pane: Pane,
    pub host: ShellHost,
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

/// The view of a live pane whose own process is a shell. `prev` is its card from the last
/// look; `fg_argv` the foreground process's argv when something other than the shell runs.
pub fn view(
    agents: &Agents,
    shell: &str,
    prev: Option<&Card>,
    mut pane: Pane,
    fg_pid: Option<u32>,
    fg_argv: Option<&[String]>,
    now: Millis,
) -> HostView {
    let current = crate::core::agent::program_name(&pane.current_command).to_string();
    let in_fg = fg_argv
        .and_then(|a| agents.by_argv(a))
        .or_else(|| agents.by_program(&current))
        .filter(|_| current != shell)
        .map(|d| d.name.clone());
    let prev_host = prev.and_then(|c| c.shell.clone());
    let recorded = (!pane.opt_agent.is_empty()).then(|| pane.opt_agent.clone());
    let kind = in_fg
        .clone()
        .or(recorded)
        .or_else(|| prev.and_then(|c| c.agent.clone()));
    let mut host = ShellHost {
        shell: shell.to_string(),
        agent_seen_at: prev_host.as_ref().and_then(|h| h.agent_seen_at),
        first_seen: prev_host.as_ref().and_then(|h| h.first_seen),
        status_before: prev_host
            .as_ref()
            .map(|h| h.status_before.clone())
            .unwrap_or_default(),
        fg_pid: None,
        fg_argv: Vec::new(),
    };
    if in_fg.is_some() {
        let same_run = prev.is_some_and(|c| c.shell.is_some() && c.life == Life::Running);
        if !same_run {
            host.first_seen = Some(now);
            host.status_before = pane.opt_last_status.clone();
        }
        host.agent_seen_at = Some(now);
        host.fg_pid = fg_pid;
        host.fg_argv = fg_argv.map(<[String]>::to_vec).unwrap_or_default();
        pane.dead = false;
        return HostView {
            pane,
            host,
            kind,
            idle: false,
            exited_now: false,
            running: true,
        };
    }
    // The agent is not running. When did it exit, if we know?
    let was_running = prev.is_some_and(|c| c.shell.is_some() && c.life == Life::Running);
    let exited_at = if was_running {
        Some(now)
    } else {
        prev.filter(|c| c.shell.is_some())
            .and_then(|c| c.died_at)
            .or_else(|| pane.opt_exited.trim().parse().ok())
    };
    pane.dead = true;
    // A death seen now gets its time from the core's clock; a recorded one from the mark.
    pane.dead_time = if was_running {
        None
    } else {
        exited_at.map(|t| t / 1000)
    };
    // The shell integration's status counts only if the shell published it after this run
    // of the agent was first seen (else it is the status of the command before it): a new
    // value, stamped at or after that moment (same clock: this machine's wall clock).
    let seen_run = host
        .first_seen
        .filter(|_| prev.is_some_and(|c| c.shell.is_some()));
    let changed = pane.opt_last_status != host.status_before;
    let fresh = |at: Millis, precise: bool| match (seen_run, exited_at) {
        (Some(first), _) => changed && at + if precise { 0 } else { 999 } >= first,
        (None, Some(e)) => at + 3_000 >= e,
        (None, None) => false,
    };
    pane.dead_status = parse_last_status(&pane.opt_last_status)
        .filter(|&(_, at, precise)| fresh(at, precise))
        .map(|(code, _, _)| code);
    pane.dead_signal = None;
    HostView {
        pane,
        host,
        kind,
        idle: exited_at.is_none(),
        exited_now: was_running,
        running: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::pane::{Exit, PaneId};
    use crate::core::watch::observe;
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

    fn step(
        prev: Option<&Card>,
        pane: Pane,
        fg: Option<&[String]>,
        now: Millis,
    ) -> (Card, HostView) {
        let v = view(&Agents::default(), "bash", prev, pane, Some(200), fg, now);
        let mut c = observe(prev.cloned(), v.pane.clone(), v.kind.clone(), None, now);
        c.shell = Some(v.host.clone());
        if v.idle {
            c.life = Life::Idle;
        }
        (c, v)
    }

    #[test]
    fn a_shell_that_never_ran_an_agent_is_no_agent_pane() {
        let v = view(
            &Agents::default(),
            "bash",
            None,
            bash("bash"),
            None,
            None,
            T0,
        );
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
        p.opt_agent = "claude".into();
        p.opt_last_status = format!("1 {}", (T0 + 400) / 1000);
        let (c, v) = step(Some(&c), p.clone(), None, T0 + 500);
        assert!(v.exited_now);
        assert_eq!(c.life, Life::Dead(Exit::Code(1)));
        assert_eq!(c.died_at, Some(T0 + 500));
        // A status from before the agent ran is not its status.
        let mut before = bash("claude");
        before.opt_last_status = format!("0 {}.250", T0 / 1000);
        let (c0, _) = step(None, before, Some(&argv), T0 + 300);
        p.opt_last_status = format!("0 {}.250", T0 / 1000);
        let (c, _) = step(Some(&c0), p, None, T0 + 500);
        assert_eq!(c.life, Life::Reading);
    }

    #[test]
    fn a_prompt_idle_since_before_we_looked_is_idle_not_a_death() {
        let mut p = bash("bash");
        p.opt_agent = "claude".into();
        let (c, v) = step(None, p.clone(), None, T0);
        assert!(v.idle);
        assert_eq!(c.life, Life::Idle);
        // But an exit recorded on the pane (by an earlier agentwatch) is still a death.
        p.opt_exited = (T0 - 5_000).to_string();
        p.opt_last_status = format!("3 {}", (T0 - 5_000) / 1000);
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
        let v = view(
            &Agents::default(),
            "zsh",
            None,
            bash("node"),
            Some(7),
            Some(&argv),
            T0,
        );
        assert_eq!(v.kind.as_deref(), Some("codex"));
        assert!(v.running);
        assert_eq!(v.host.fg_pid, Some(7));
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
}

/// The command line typed at a shell prompt to relaunch an agent: each word quoted for that
/// shell, after a `cd` when the prompt is elsewhere. Refuses words with control characters
/// (a typed newline would run a half command).
pub fn typed_command(shell: &str, argv: &[String], cd: Option<&str>) -> Result<String, String> {
    let quote = |w: &str| -> Result<String, String> {
        if w.chars().any(char::is_control) {
            return Err(format!(
                "argument {:?} has a control character: it cannot be typed at a prompt",
                crate::core::text::fit(w, 30)
            ));
        }
        Ok(if shell == "fish" {
            fish_quote(w)
        } else {
            crate::core::words::shell_quote(w)
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
