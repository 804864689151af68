//! Which way a pane is watched: its own process an agent, or a launcher (a shell prompt, a
//! wrapper, `npx`) with the agent below it.

use super::*;

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
