//! Agent kinds: how to recognise one in a pane, how to start and resume it, and what its
//! session ids look like. Pure: no I/O.

use serde::Deserialize;

use crate::attention::{Doing, Report, Told};
use crate::pane::{Pane, Proc};
use crate::words::command_words;

/// The placeholder in `start`/`resume` argv templates.
pub const SESSION_ID: &str = "{session_id}";

/// What a valid session id looks like for an agent. Anything else is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdShape {
    /// `8-4-4-4-12` hex digits (claude, codex, gemini).
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
    /// Wrappers (program or script basenames) that run this agent and pass their own
    /// arguments through to it (`cc` running `claude --dangerously-skip-permissions "$@"`):
    /// a pane running one is this agent's pane, and a relaunch runs the wrapper again.
    pub wrappers: Vec<String>,
    /// What the agent prints when asked to resume a session it has no record of (as
    /// `claude --resume <id>` of a session that never got a first message does).
    pub no_session: Vec<String>,
    /// The agent starts a session again under an id of ours that it keeps no record of
    /// (`claude --session-id <id>` does; gemini refuses an id it has seen at all).
    pub start_again: bool,
    /// Resuming a session that a live process elsewhere still holds reconnects to it (codex
    /// 0.171's background server keeps a session's work running after its pane died);
    /// otherwise it would run the session twice, and is refused.
    pub resume_reconnects: bool,
    /// Lines on its screen that mean it waits for its user: a permission prompt, a question,
    /// a trust or login dialog.
    pub waiting: Vec<String>,
    /// Lines on its screen while it works (`esc to interrupt`): a quiet screen with one is
    /// still working, and for a kind that has them, a quiet screen with neither these nor a
    /// waiting line is idle at its input box.
    pub working: Vec<String>,
    /// The lines that tell why it stopped (see [`crate::cause`]).
    pub causes: crate::cause::CauseWords,
}

impl AgentDef {
    fn new(name: &str, start: &[&str], resume: &[&str], id: IdShape) -> AgentDef {
        AgentDef {
            name: name.to_string(),
            matches: vec![name.to_string()],
            start: start.iter().map(|s| s.to_string()).collect(),
            resume: resume.iter().map(|s| s.to_string()).collect(),
            id,
            wrappers: Vec::new(),
            no_session: Vec::new(),
            start_again: false,
            resume_reconnects: false,
            waiting: Vec::new(),
            working: Vec::new(),
            causes: crate::cause::CauseWords::builtin(name),
        }
    }

    fn working(mut self, lines: &[&str]) -> AgentDef {
        self.working = lines.iter().map(|s| s.to_string()).collect();
        self
    }

    /// What a quiet screen says the agent does: at a usage limit (its banner), waiting (a
    /// prompt for its user at the bottom), working (its working line), idle (neither, for a
    /// kind whose working line is known), or nothing.
    pub fn screen_says(&self, screen: &str) -> Option<Report> {
        if let Some(line) = self.causes.limit_on(screen) {
            return Some(Report::new(Doing::Limited, Told::Screen, line));
        }
        if let Some(line) = self.waiting_on(screen) {
            return Some(Report::new(Doing::Waiting, Told::Screen, line));
        }
        if self.working.is_empty() {
            return None;
        }
        Some(match screen_match(screen, &self.working) {
            Some(line) => Report::new(Doing::Working, Told::Screen, line),
            None => Report::new(
                Doing::Idle,
                Told::Screen,
                format!("no `{}` on its screen", self.working[0]),
            ),
        })
    }

    fn waiting(mut self, lines: &[&str]) -> AgentDef {
        self.waiting = lines.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The line of `screen` (what the pane shows, no history) that says the agent waits for
    /// its user, if one does. The whole screen counts: a dialog's question can sit far above
    /// its last line (gemini's folder-trust dialog at 80x24 puts it 13 non-blank lines up).
    pub fn waiting_on(&self, screen: &str) -> Option<String> {
        screen_match(screen, &self.waiting)
    }

    fn no_session(mut self, words: &[&str]) -> AgentDef {
        self.no_session = words.iter().map(|s| s.to_string()).collect();
        self
    }

    fn start_again(mut self) -> AgentDef {
        self.start_again = true;
        self
    }

    /// Whether a session this agent has no record of is started again under its id
    /// rather than resumed.
    pub fn starts_again(&self) -> bool {
        self.start_again && self.start_takes_id()
    }

    /// Whether the agent's output says it has no such session to resume.
    pub fn says_no_session(&self, output: &str) -> bool {
        self.no_session
            .iter()
            .any(|w| !w.is_empty() && output.contains(w.as_str()))
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

/// The first of `wanted` (in its order: a dialog's question before its generic `Enter to
/// confirm` line) found anywhere on `screen`.
fn screen_match(screen: &str, wanted: &[String]) -> Option<String> {
    wanted
        .iter()
        .filter(|w| !w.is_empty())
        .find(|w| screen.lines().any(|line| line.contains(w.as_str())))
        .cloned()
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
        )
        .no_session(&["No conversation found with session ID"])
        .start_again()
        // claude 2.1.197 and 2.1.332: a tool's permission prompt, the folder-trust screen,
        // the "custom API key" question; each ends with the generic line.
        .waiting(&[
            "Do you want to proceed?",
            "Quick safety check: Is this a project you created or one you trust?",
            "Do you want to use this API key?",
            "Enter to confirm · Esc to cancel",
        ])
        // Its spinner line while a turn runs: `✻ Thinking… (12s · esc to interrupt)`.
        .working(&["esc to interrupt"]),
        AgentDef {
            resume_reconnects: true,
            ..AgentDef::new("codex", &["codex"], &["codex", "resume", SESSION_ID], Uuid)
                // codex 0.171: an id it never saved; one its state lists but whose
                // rollout file is gone (`thread/resume failed: no rollout found …`).
                .no_session(&[
                    "No saved session found with ID",
                    "no rollout found for thread id",
                ])
                // Its approval questions (the binary's own words), then its first-run
                // screens: login, API-key entry, folder trust.
                .waiting(&[
                    "Would you like to run the following command?",
                    "Would you like to make the following edits?",
                    "Would you like to grant these permissions?",
                    "Would you like to send input to the existing terminal?",
                    "Press enter to confirm or esc to cancel",
                    "Trust this folder?",
                    "Choose how you want to use Codex.",
                    "Paste or type your API key below.",
                    "Sign in with ChatGPT",
                    "Press enter to continue",
                    "enter continue · esc back",
                ])
                // `Working (5s • esc to interrupt)`.
                .working(&["esc to interrupt"])
        },
        AgentDef::new(
            "gemini",
            &["gemini", "--session-id", SESSION_ID],
            &["gemini", "--resume", SESSION_ID],
            Uuid,
        )
        // gemini 0.61: "Error resuming session: No previous sessions found for this
        // project." or "Invalid session identifier" (exit 42); a session killed before its
        // first message cannot be started again either ("already exists").
        .no_session(&["No previous sessions found", "Invalid session identifier"])
        // gemini 0.61: folder trust, the choice of how to sign in, API-key entry.
        .waiting(&[
            "Do you trust the files in this folder?",
            "How would you like to authenticate for this project?",
            "Enter Gemini API Key",
            "(Use Enter to select)",
            "(Press Enter to submit, Esc to cancel",
        ])
        // gemini 0.61's loading line: `(esc to cancel, 5s)`.
        .working(&["(esc to cancel"]),
        AgentDef::new(
            "opencode",
            &["opencode"],
            &["opencode", "--session", SESSION_ID],
            Token,
        )
        .no_session(&["Session not found"]),
        AgentDef::new(
            "aider",
            &["aider"],
            &["aider", "--restore-chat-history"],
            None,
        )
        .waiting(&["(Y)es/(N)o"]),
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
        )
        .waiting(&["[(y)es, (n)o]"]),
    ]
}

mod argv;
mod route;
use argv::script_of;
pub use argv::*;
pub use route::{route, Before, Route};

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
            if let Some(d) = launched_script(argv).and_then(|s| self.by_program(s)) {
                return Some(d);
            }
        }
        script_of(argv).and_then(|s| self.by_program(s))
    }

    /// The kind a process is: by its name (`comm`), its argv (directly or through a
    /// launcher), or as a named wrapper of the kind.
    pub fn by_proc(&self, p: &Proc) -> Option<&AgentDef> {
        self.by_program(&p.comm).or_else(|| self.by_argv(&p.argv))
    }

    /// The kind a wrapper runs, by the wrapper's name or script.
    pub fn by_wrapper(&self, comm: &str, argv: Option<&[String]>) -> Option<&AgentDef> {
        // Every pane asks, every poll: nothing to look at unless a wrapper is configured.
        if self.defs.iter().all(|d| d.wrappers.is_empty()) {
            return None;
        }
        // Asked for every pane on every poll: no allocation.
        let names = [
            Some(program_name(comm)),
            argv.and_then(|a| a.first()).map(|w| program_name(w)),
            argv.and_then(script_of).map(program_name),
        ];
        self.defs.iter().find(|d| {
            d.wrappers
                .iter()
                .any(|w| names.iter().flatten().any(|n| *n == w.as_str()))
        })
    }

    /// Which agent runs in a pane, by the rules in order: the `@agentwatch_agent` option;
    /// the current command; the start command's program (or script under a launcher); the
    /// pane process's argv (a launcher's or an interpreter's script).
    pub fn recognise(&self, pane: &Pane, foreground: Option<&[String]>) -> Option<&AgentDef> {
        if !pane.opts.agent.is_empty() {
            if let Some(d) = self.get(&pane.opts.agent) {
                return Some(d);
            }
        }
        if let Some(d) = self.by_program(&pane.current_command) {
            return Some(d);
        }
        if let Some(d) = self.by_argv(&command_words(&pane.start_command)) {
            return Some(d);
        }
        // The pane process's own argv: a launcher's or an interpreter's script.
        foreground.and_then(|argv| self.by_argv(argv))
    }
}

/// A session id named on a `kind` agent's command line: `--session-id X`, `--session-id=X`,
/// `--resume X`, `--resume=X`, `-r X`, `--session X`; codex `resume X`; opencode `-s X`;
/// amp `threads continue X` (`t c X`). The caller still checks it against the agent's
/// [`IdShape`]: `gemini --resume latest` names no id.
pub fn session_id_from_argv(kind: &str, argv: &[String]) -> Option<String> {
    let words: Vec<&str> = argv.iter().skip(1).map(String::as_str).collect();
    for (i, &w) in words.iter().enumerate() {
        for flag in ["--session-id", "--resume", "--session"] {
            if let Some(v) = w.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                return Some(v.to_string());
            }
        }
        let before = i.checked_sub(1).map(|j| words[j]);
        let takes_value = match w {
            "--session-id" | "--resume" | "-r" | "--session" => true,
            "resume" => kind == "codex",
            "-s" => kind == "opencode",
            "continue" | "c" => kind == "amp" && matches!(before, Some("threads" | "t")),
            _ => false,
        };
        if takes_value {
            if let Some(v) = words.get(i + 1).filter(|v| !v.starts_with('-')) {
                return Some(v.to_string());
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
mod tests;
