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
        }
    }

    fn working(mut self, lines: &[&str]) -> AgentDef {
        self.working = lines.iter().map(|s| s.to_string()).collect();
        self
    }

    /// What a quiet screen says the agent does: waiting (a prompt for its user at the
    /// bottom), working (its working line), idle (neither, for a kind whose working line is
    /// known), or nothing.
    pub fn screen_says(&self, screen: &str) -> Option<Report> {
        if let Some(line) = self.waiting_on(screen) {
            return Some(Report::new(Doing::Waiting, Told::Screen, line));
        }
        if self.working.is_empty() {
            return None;
        }
        Some(match bottom_match(screen, &self.working) {
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

    /// The line of `screen` that says the agent waits for its user, if one does: only the
    /// bottom of the screen counts (a prompt answered long ago may still be above).
    pub fn waiting_on(&self, screen: &str) -> Option<String> {
        bottom_match(screen, &self.waiting)
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

/// The first of `wanted` found in the bottom lines of `screen`.
fn bottom_match(screen: &str, wanted: &[String]) -> Option<String> {
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    let bottom = &lines[lines.len().saturating_sub(WAITING_LINES)..];
    bottom.iter().find_map(|line| {
        wanted
            .iter()
            .find(|w| !w.is_empty() && line.contains(w.as_str()))
            .cloned()
    })
}

/// How many non-blank lines at the bottom of a screen are looked at for a waiting prompt.
pub const WAITING_LINES: usize = 12;

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
        .waiting(&[
            "Do you want to proceed?",
            "Enter to confirm · Esc to cancel",
        ])
        // Its spinner line while a turn runs: `✻ Thinking… (12s · esc to interrupt)`.
        .working(&["esc to interrupt"]),
        AgentDef {
            resume_reconnects: true,
            ..AgentDef::new("codex", &["codex"], &["codex", "resume", SESSION_ID], Uuid)
                .no_session(&["No saved session found with ID"])
                .waiting(&["Press enter to continue", "Sign in with ChatGPT"])
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
        .waiting(&[
            "Do you trust the files in this folder?",
            "(Use Enter to select)",
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

/// Programs that run a script named by their first argument (`bash ./cc`, `python3 x.py`).
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python3", "perl", "ruby", "node",
];

/// The script an interpreter runs (`/bin/bash /home/u/bin/cc -x` -> `/home/u/bin/cc`).
fn script_of(argv: &[String]) -> Option<&str> {
    let first = program_name(argv.first()?);
    if !INTERPRETERS.contains(&first) && !first.starts_with("python3.") {
        return None;
    }
    argv.get(1)
        .filter(|w| !w.starts_with('-'))
        .map(String::as_str)
}

/// The words that start a program as it ran, without its arguments: the program itself,
/// or an interpreter or launcher with its script (`node /usr/lib/…/cli.js`,
/// `/bin/bash /home/u/bin/cc`). A relaunch puts the resume arguments after these.
pub fn program_prefix(argv: &[String]) -> Vec<String> {
    let Some(first) = argv.first() else {
        return Vec::new();
    };
    let name = program_name(first);
    if is_launcher(name) || INTERPRETERS.contains(&name) {
        // Up to and including the first word that is not an option (the script, or the
        // package under npx), skipping `-m module` and `run`/`exec` words.
        let mut out = vec![first.clone()];
        let mut it = argv.iter().skip(1);
        while let Some(w) = it.next() {
            out.push(w.clone());
            if w == "-m" {
                if let Some(m) = it.next() {
                    out.push(m.clone());
                }
                return out;
            }
            if !w.starts_with('-') && !matches!(w.as_str(), "run" | "exec" | "tool") {
                return out;
            }
        }
        return out;
    }
    vec![first.clone()]
}

/// Whether a shell's argv is an interactive one (a prompt to type at), not `bash -c …` or
/// `bash script.sh`.
pub fn is_interactive_shell(argv: &[String]) -> bool {
    argv.iter().skip(1).all(|w| match w.strip_prefix("--") {
        // --login, --norc; not --command.
        Some(long) => long != "command",
        // -l, -i; not -c, -lc, -ec (a command string follows), nor a script name.
        None => w.starts_with('-') && !w.contains('c'),
    })
}

/// What runs the agent in a pane, for the core's routing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route<'a> {
    /// The pane's own process is the agent (directly, or as a launcher running its script),
    /// or the pane is dead: its tmux row tells.
    Own,
    /// The pane's own process hosts the agent: a shell (at whose prompt a command can be
    /// typed when `prompt`), a wrapper, a launcher, a `bash -c`. `agent` is the agent's
    /// process in the pane's foreground tree while one runs; `kind` names the agent when
    /// the host itself says which (a configured wrapper).
    Hosted {
        prompt: bool,
        agent: Option<&'a Proc>,
        kind: Option<&'a AgentDef>,
    },
}

/// One classification for every view: where the agent of a pane runs. `comm` and
/// `own_argv` describe the pane's own process (`own_argv` when known), `tree` its
/// foreground descendants; `before` is what was known of the pane: whether an agent was
/// seen running below its process (by this instance, or by one that marked its exit on the
/// pane), and whether its shell was interactive.
pub fn route<'a>(
    agents: &'a Agents,
    shells: &[String],
    pane: &Pane,
    comm: &str,
    own_argv: Option<&[String]>,
    tree: &'a [Proc],
    before: Before,
) -> Route<'a> {
    if pane.dead || comm.is_empty() {
        return Route::Own;
    }
    let found = tree.iter().find(|p| agents.by_proc(p).is_some());
    // A wrapper named in the config hosts its agent, found below it or not yet.
    if let Some(kind) = agents.by_wrapper(comm, own_argv) {
        return Route::Hosted {
            prompt: false,
            agent: found,
            kind: Some(kind),
        };
    }
    // The pane's own process is the agent: by its name, or its argv (a launcher's or an
    // interpreter's script: `node …/codex.js`, `bash ~/bin/claude`).
    if agents.by_program(comm).is_some() || own_argv.and_then(|a| agents.by_argv(a)).is_some() {
        return Route::Own;
    }
    let shell = comm.trim_start_matches('-');
    let is_shell = shells.iter().any(|s| s == shell);
    // `sh -c claude` (how tmux runs a one-string command) is about to exec the agent.
    let execs_agent = || {
        own_argv
            .filter(|a| a.get(1).is_some_and(|w| w == "-c"))
            .and_then(|a| a.get(2))
            // One simple command, nothing after it.
            .filter(|c| !c.contains([';', '&', '|', '\n', '(', '`', '$']))
            .map(|c| crate::words::split_shell_words(c))
            .is_some_and(|w| agents.by_argv(&w).is_some())
    };
    if is_shell && found.is_none() && !before.hosted && execs_agent() {
        return Route::Own;
    }
    // An agent ran below this process and is gone (the process may even have become
    // another by exec, as `bash -c '…; sleep 1d'` does): not running, whatever the
    // pane's recorded kind says.
    if is_shell || found.is_some() || before.hosted {
        return Route::Hosted {
            prompt: is_shell && own_argv.map_or(before.prompt, is_interactive_shell),
            agent: found,
            kind: None,
        };
    }
    Route::Own
}

/// What was known of a pane before this look, for [`route`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Before {
    /// An agent was seen running below the pane's own process.
    pub hosted: bool,
    /// The pane's shell was interactive (a prompt to type at).
    pub prompt: bool,
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
        p.opts.agent = "gemini".into();
        assert_eq!(
            a.recognise(&p, None).map(|d| d.name.as_str()),
            Some("gemini")
        );
    }

    #[test]
    fn session_ids_are_read_from_argv_forms() {
        let id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
        for (kind, argv) in [
            ("claude", v(&["claude", "--session-id", id])),
            ("claude", v(&["claude", &format!("--resume={id}")])),
            ("codex", v(&["codex", "resume", id])),
            ("claude", v(&["claude", "-r", id])),
            ("opencode", v(&["opencode", "-s", id])),
            ("opencode", v(&["opencode", "--session", id])),
            ("amp", v(&["amp", "threads", "continue", id])),
            ("amp", v(&["amp", "t", "c", id])),
            ("amp", v(&["node", "/x/bin/amp", "threads", "c", id])),
        ] {
            let got = session_id_from_argv(kind, &argv);
            assert_eq!(got.as_deref(), Some(id), "{argv:?}");
        }
        assert_eq!(
            session_id_from_argv("claude", &v(&["claude", "--resume"])),
            None
        );
        assert_eq!(
            session_id_from_argv("claude", &v(&["claude", "--resume", "--x"])),
            None
        );
        // Words that take a value for one agent are plain words for another.
        for (kind, argv) in [
            ("codex", v(&["codex", "-s", "read-only"])),
            ("gemini", v(&["gemini", "-s", "fix it"])),
            ("claude", v(&["claude", "resume", "the work"])),
            ("amp", v(&["amp", "continue", id])),
        ] {
            assert_eq!(session_id_from_argv(kind, &argv), None, "{argv:?}");
        }
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

    fn proc_(pid: u32, argv: &[&str]) -> Proc {
        Proc {
            pid,
            ppid: 1,
            comm: program_name(argv[0]).to_string(),
            argv: v(argv),
            start: None,
        }
    }

    fn route_of(
        agents: &Agents,
        comm: &str,
        own: &[&str],
        tree: &[Proc],
        hosted_before: bool,
    ) -> (String, Option<u32>, bool) {
        let shells = vec!["bash".to_string(), "zsh".to_string()];
        let mut p = pane("x", "x");
        p.pid = Some(100);
        let own = v(own);
        let before = Before {
            hosted: hosted_before,
            prompt: true,
        };
        match route(agents, &shells, &p, comm, Some(&own), tree, before) {
            Route::Own => ("own".into(), None, false),
            Route::Hosted {
                prompt,
                agent,
                kind,
            } => (
                kind.map_or("hosted".into(), |k| format!("wrapper of {}", k.name)),
                agent.map(|a| a.pid),
                prompt,
            ),
        }
    }

    #[test]
    fn every_shape_of_starting_an_agent_is_routed_to_its_process() {
        let a = Agents::default();
        let claude = [proc_(7, &["claude", "--dangerously-skip-permissions"])];
        // The agent is the pane's process: directly, under a launcher, as a script.
        assert_eq!(route_of(&a, "claude", &["claude"], &[], false).0, "own");
        let node = ["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"];
        assert_eq!(route_of(&a, "node", &node, &[], false).0, "own");
        // A launcher naming the agent stands for it (it exits with the agent's status).
        assert_eq!(
            route_of(&a, "uv", &["uv", "run", "aider"], &[], false).0,
            "own"
        );
        assert_eq!(
            route_of(
                &a,
                "bash",
                &["bash", "/home/u/bin/claude", "-x"],
                &[],
                false
            )
            .0,
            "own",
            "a bash script named like the agent is the agent"
        );
        // A wrapper, bash -c, op run, uv run, npx: the agent runs below.
        for own in [
            &["/bin/bash", "/home/u/bin/cc"][..],
            &["bash", "-c", "claude; echo done"],
            &["op", "run", "--", "claude"],
            &["time", "claude"],
        ] {
            let comm = program_name(own[0]);
            let (r, agent, prompt) = route_of(&a, comm, own, &claude, false);
            assert_eq!(
                (r.as_str(), agent, prompt),
                ("hosted", Some(7), false),
                "{own:?}"
            );
        }
        // An interactive shell: a prompt to type at, with or without an agent running.
        assert_eq!(
            route_of(&a, "bash", &["-bash"], &claude, false),
            ("hosted".into(), Some(7), true)
        );
        assert_eq!(
            route_of(&a, "zsh", &["zsh", "-l"], &[], false),
            ("hosted".into(), None, true)
        );
        // tmux runs a one-string command as `bash -c claude`, which is about to exec it.
        assert_eq!(
            route_of(&a, "bash", &["bash", "-c", "claude --resume x"], &[], false).0,
            "own"
        );
        assert_eq!(
            route_of(&a, "bash", &["bash", "-c", "claude; sleep 9"], &[], false).0,
            "hosted"
        );
        // Something else entirely is nobody's host, unless an agent ran below it.
        assert_eq!(route_of(&a, "vim", &["vim"], &[], false).0, "own");
        assert_eq!(
            route_of(&a, "sleep", &["sleep", "1d"], &[], true),
            ("hosted".into(), None, false),
            "bash -c exec'd its last command after the agent ended"
        );
        // A wrapper named in the config hosts its kind before the agent shows up.
        let mut defs = builtin();
        defs[0].wrappers = vec!["cc".into()];
        let a = Agents::new(defs);
        assert_eq!(
            route_of(&a, "cc", &["/bin/bash", "/home/u/bin/cc"], &[], false).0,
            "wrapper of claude"
        );
    }

    #[test]
    fn program_prefixes_and_interactive_shells() {
        assert_eq!(
            program_prefix(&v(&["/bin/bash", "/home/u/bin/cc", "--model", "x"])),
            v(&["/bin/bash", "/home/u/bin/cc"])
        );
        assert_eq!(
            program_prefix(&v(&[
                "node",
                "--max-old-space-size=4096",
                "/x/cli.js",
                "-r"
            ])),
            v(&["node", "--max-old-space-size=4096", "/x/cli.js"])
        );
        assert_eq!(
            program_prefix(&v(&["python3", "-m", "aider", "--yes"])),
            v(&["python3", "-m", "aider"])
        );
        assert_eq!(
            program_prefix(&v(&["claude", "--resume", "x"])),
            v(&["claude"])
        );
        for (argv, interactive) in [
            (&["-bash"][..], true),
            (&["zsh", "-l"], true),
            (&["bash", "--login", "-i"], true),
            (&["bash", "-c", "claude"], false),
            (&["bash", "-lc", "claude"], false),
            (&["bash", "script.sh"], false),
        ] {
            assert_eq!(is_interactive_shell(&v(argv)), interactive, "{argv:?}");
        }
    }
}
