//! Agent kinds: how to recognise one in a pane, how to start and resume it, and what its
//! session ids look like. Pure: no I/O.

use serde::Deserialize;

use crate::core::pane::Pane;
use crate::core::words::command_words;

/// The placeholder in `start`/`resume` argv templates.
pub const SESSION_ID: &str = "{session_id}";

/// What a valid session id looks like for an agent. Anything else is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdShape {
    /// `8-4-4-4-12` hex digits (claude, codex).
    Uuid,
    /// 1–128 characters of `[A-Za-z0-9._-]`, not starting with `-` or `.`.
    Token,
    /// The agent has no session ids (aider resumes per directory).
    None,
}

impl IdShape {
    pub fn accepts(self, id: &str) -> bool {
        match self {
            IdShape::Uuid => is_uuid(id),
            IdShape::Token => {
                !id.is_empty()
                    && id.len() <= 128
                    && !id.starts_with(['-', '.'])
                    && id
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
            }
            IdShape::None => false,
        }
    }
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, hex, either case.
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// One agent kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDef {
    pub name: String,
    /// Program basenames (or script names under a launcher) that identify it.
    pub matches: Vec<String>,
    /// argv to start it fresh; may contain `{session_id}` for agents that accept a known id.
    pub start: Vec<String>,
    /// argv to resume it; empty when it cannot be resumed.
    pub resume: Vec<String>,
    pub id: IdShape,
}

impl AgentDef {
    fn new(name: &str, start: &[&str], resume: &[&str], id: IdShape) -> AgentDef {
        AgentDef {
            name: name.to_string(),
            matches: vec![name.to_string()],
            start: start.iter().map(|s| s.to_string()).collect(),
            resume: resume.iter().map(|s| s.to_string()).collect(),
            id,
        }
    }

    /// Whether the start argv passes a session id of our choosing.
    pub fn start_takes_id(&self) -> bool {
        self.start.iter().any(|w| w.contains(SESSION_ID))
    }

    /// Whether resuming needs a session id.
    pub fn resume_needs_id(&self) -> bool {
        self.resume.iter().any(|w| w.contains(SESSION_ID))
    }
}

/// The built-in kinds. The config file may override any field of these or add kinds.
pub fn builtin() -> Vec<AgentDef> {
    use IdShape::*;
    vec![
        AgentDef::new(
            "claude",
            &["claude", "--session-id", SESSION_ID],
            &["claude", "--resume", SESSION_ID],
            Uuid,
        ),
        AgentDef::new("codex", &["codex"], &["codex", "resume", SESSION_ID], Uuid),
        AgentDef::new(
            "gemini",
            &["gemini", "--session-id", SESSION_ID],
            &["gemini", "--resume", SESSION_ID],
            Token,
        ),
        AgentDef::new(
            "opencode",
            &["opencode"],
            &["opencode", "--session", SESSION_ID],
            Token,
        ),
        AgentDef::new(
            "aider",
            &["aider"],
            &["aider", "--restore-chat-history"],
            None,
        ),
        AgentDef::new(
            "cursor-agent",
            &["cursor-agent"],
            &["cursor-agent", "--resume", SESSION_ID],
            Token,
        ),
        AgentDef::new(
            "amp",
            &["amp"],
            &["amp", "threads", "continue", SESSION_ID],
            Token,
        ),
    ]
}

/// Programs that run an agent's script rather than being the agent (`node …/bin/codex`).
pub const LAUNCHERS: &[&str] = &[
    "node", "nodejs", "bun", "deno", "npx", "pnpx", "bunx", "python", "python3", "pypy3", "uv",
    "uvx", "pipx", "ruby", "tsx", "ts-node",
];

pub fn is_launcher(program: &str) -> bool {
    LAUNCHERS.contains(&program) || program.starts_with("python3.")
}

/// Basename of a path, lowercased extension stripped for scripts (`codex.js` -> `codex`).
pub fn program_name(word: &str) -> &str {
    let base = word.rsplit('/').next().unwrap_or(word);
    for ext in [".js", ".mjs", ".cjs", ".ts", ".py", ".rb"] {
        if let Some(stem) = base.strip_suffix(ext) {
            return stem;
        }
    }
    base
}

/// The script a launcher runs: its first argument that is not an option.
/// `node --max-old-space-size=4096 /usr/lib/node_modules/@openai/codex/bin/codex.js` -> `codex`;
/// `npx @openai/codex` -> `codex`; `python3 -m aider` -> `aider`.
pub fn launched_script(argv: &[String]) -> Option<&str> {
    let mut it = argv.iter().skip(1);
    while let Some(w) = it.next() {
        if w == "-m" {
            return it.next().map(|m| m.as_str());
        }
        if w == "run" || w == "exec" || w == "tool" {
            continue;
        }
        if !w.starts_with('-') {
            return Some(program_name(w));
        }
    }
    None
}

/// The resolved table of agent kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agents {
    defs: Vec<AgentDef>,
}

impl Default for Agents {
    fn default() -> Self {
        Agents { defs: builtin() }
    }
}

impl Agents {
    pub fn new(defs: Vec<AgentDef>) -> Agents {
        Agents { defs }
    }

    pub fn all(&self) -> &[AgentDef] {
        &self.defs
    }

    pub fn get(&self, name: &str) -> Option<&AgentDef> {
        self.defs.iter().find(|d| d.name == name)
    }

    /// The kind whose `match` list names this program (a basename or a path).
    pub fn by_program(&self, word: &str) -> Option<&AgentDef> {
        let name = program_name(word);
        self.defs
            .iter()
            .find(|d| d.matches.iter().any(|m| m == name))
    }

    /// The kind an argv runs, directly or through a launcher.
    pub fn by_argv(&self, argv: &[String]) -> Option<&AgentDef> {
        let first = argv.first()?;
        if let Some(d) = self.by_program(first) {
            return Some(d);
        }
        if is_launcher(program_name(first)) {
            return launched_script(argv).and_then(|s| self.by_program(s));
        }
        None
    }

    /// Which agent runs in a pane, by the rules in order: the `@agentwatch_agent` option;
    /// the current command; the start command's program (or script under a launcher); the
    /// foreground process's argv when the current command is a launcher.
    pub fn recognise(&self, pane: &Pane, foreground: Option<&[String]>) -> Option<&AgentDef> {
        if !pane.opt_agent.is_empty() {
            if let Some(d) = self.get(&pane.opt_agent) {
                return Some(d);
            }
        }
        if let Some(d) = self.by_program(&pane.current_command) {
            return Some(d);
        }
        if let Some(d) = self.by_argv(&command_words(&pane.start_command)) {
            return Some(d);
        }
        if is_launcher(program_name(&pane.current_command)) {
            return foreground.and_then(|argv| self.by_argv(argv));
        }
        None
    }
}

/// A session id named on an agent's command line: `--session-id X`, `--session-id=X`,
/// `--resume X`, `--resume=X`, `-r X`, `--session X`, or `resume X` (codex).
/// The caller still checks it against the agent's [`IdShape`].
pub fn session_id_from_argv(argv: &[String]) -> Option<String> {
    let mut it = argv.iter().skip(1).peekable();
    while let Some(w) = it.next() {
        for flag in ["--session-id", "--resume", "--session"] {
            if let Some(v) = w.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                return Some(v.to_string());
            }
        }
        let takes_value =
            matches!(w.as_str(), "--session-id" | "--resume" | "-r" | "--session") || w == "resume";
        if takes_value {
            if let Some(v) = it.peek() {
                if !v.starts_with('-') {
                    return Some(v.to_string());
                }
            }
        }
    }
    None
}

/// Fills `{session_id}` in an argv template.
pub fn fill(template: &[String], session_id: Option<&str>) -> Vec<String> {
    template
        .iter()
        .map(|w| match session_id {
            Some(id) => w.replace(SESSION_ID, id),
            None => w.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    fn pane(cur: &str, start: &str) -> Pane {
        Pane {
            current_command: cur.into(),
            start_command: start.into(),
            ..Pane::default()
        }
    }

    #[test]
    fn recognised_by_current_command() {
        let a = Agents::default();
        assert_eq!(
            a.recognise(&pane("claude", ""), None)
                .map(|d| d.name.as_str()),
            Some("claude")
        );
    }

    #[test]
    fn recognised_by_first_word_of_start_command_even_as_a_path_or_shell_string() {
        let a = Agents::default();
        let p = pane("bash", "/home/u/.local/bin/aider --model x");
        assert_eq!(
            a.recognise(&p, None).map(|d| d.name.as_str()),
            Some("aider")
        );
        let p = pane(
            "bash",
            r#""codex resume 0199a213-81c0-7800-8aa1-bbab2a035a53""#,
        );
        assert_eq!(
            a.recognise(&p, None).map(|d| d.name.as_str()),
            Some("codex")
        );
    }

    #[test]
    fn recognised_through_a_launcher_running_a_matching_script() {
        let a = Agents::default();
        let fg = v(&["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"]);
        assert_eq!(
            a.recognise(&pane("node", "bash"), Some(&fg))
                .map(|d| d.name.as_str()),
            Some("codex")
        );
        let fg = v(&["python3", "-m", "aider"]);
        assert_eq!(
            a.recognise(&pane("python3", "zsh"), Some(&fg))
                .map(|d| d.name.as_str()),
            Some("aider")
        );
    }

    #[test]
    fn the_agent_option_wins_and_other_panes_are_not_agents() {
        let a = Agents::default();
        let mut p = pane("node", "bash");
        assert!(a.recognise(&p, Some(&v(&["node", "server.js"]))).is_none());
        assert!(a.recognise(&pane("vim", "bash"), None).is_none());
        p.opt_agent = "gemini".into();
        assert_eq!(
            a.recognise(&p, None).map(|d| d.name.as_str()),
            Some("gemini")
        );
    }

    #[test]
    fn session_ids_are_read_from_argv_forms() {
        let id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
        for argv in [
            v(&["claude", "--session-id", id]),
            v(&["claude", &format!("--resume={id}")]),
            v(&["codex", "resume", id]),
            v(&["claude", "-r", id]),
        ] {
            assert_eq!(session_id_from_argv(&argv).as_deref(), Some(id), "{argv:?}");
        }
        assert_eq!(session_id_from_argv(&v(&["claude", "--resume"])), None);
        assert_eq!(
            session_id_from_argv(&v(&["claude", "--resume", "--x"])),
            None
        );
    }

    #[test]
    fn id_shapes_refuse_anything_odd() {
        assert!(IdShape::Uuid.accepts("0E6A1C1E-4f7b-4a43-9d55-3f1f1b7f0a11"));
        assert!(!IdShape::Uuid.accepts("0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a1"));
        assert!(IdShape::Token.accepts("ses_01J9.x-y"));
        for bad in [
            "",
            "-rf",
            "a b",
            "a;b",
            "$(x)",
            "`x`",
            "#{pane_id}",
            "a\nb",
            "'q'",
        ] {
            assert!(!IdShape::Token.accepts(bad), "{bad:?}");
            assert!(!IdShape::Uuid.accepts(bad), "{bad:?}");
        }
    }
}
