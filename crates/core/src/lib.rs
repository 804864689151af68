//! agentwatch's pure core: decides everything, does no I/O and never reads the clock. It
//! depends on no terminal, async runtime, logging or OS crate (the compiler keeps it so), has
//! its own input and styled-text types, and returns what it wants logged as data.
#![forbid(unsafe_code)]

/// Agent kinds: recognition, start/resume argv, session id shapes.
pub mod agent;
/// What a live agent is doing: working, waiting for its user, idle.
pub mod attention;
/// One watched pane's card: its lifecycle (running, dead, finished) and what it shows.
pub mod card;
/// Why an agent stopped: a cause for every death, with its evidence.
pub mod cause;
/// Crash records as data: a dead pane's output and death.
pub mod crash;
/// Typed failures of the outside world that the core reacts to.
pub mod errors;
/// The help's lines as text, for the UI to draw and the core to scroll within.
pub mod help;
/// Keys, clicks and resizes in the core's own terms.
pub mod input;
/// A death's verdict, kept on its pane for whoever supervises next.
pub mod judged;
/// The one key table.
pub mod keymap;
/// Agents run by the pane's own process (a shell prompt, a wrapper, a launcher): the pane
/// as the core should see it.
pub mod launcher;
/// Grid geometry: how many cards fit, for selection and scrolling.
pub mod layout;
/// The supervisor's claim on a server, kept in the server: read, renewed, taken over.
pub mod lease;
/// Action, Msg and Effect: the vocabularies of the loop.
pub mod msg;
/// Whose records a pane's options are: its occupant, and when another hand replaced it.
pub mod occupant;
/// Domain nouns: pane ids, pane rows, listings, exits.
pub mod pane;
/// The peek view's model: parsed output, scrolling, search.
pub mod peek_model;
/// A fast hash for what no adversary chooses (the screen's fingerprint).
pub mod quick_hash;
/// Whether a planned relaunch may run, and how, on the facts gathered just before.
pub mod relaunch;
/// Pure relaunch planning: argv, directory and session id, or why not.
pub mod resume;
/// Agents lost with a tmux server, as data.
pub mod roster;
/// The settings as data: what the config file holds once checked.
pub mod settings;
/// What an agent spends: tokens and context, from its own files.
pub mod spend;
/// The core's state and its update: `State::update(msg, now) -> effects`.
pub mod state;
/// Styled text (the peek view's lines) in the core's own terms.
pub mod styled;
/// The pure auto-resume policy: verdicts on deaths, budgets, backoff.
pub mod supervisor;
/// Builders for tests: synthetic panes, observations and states (with the `testkit`
/// feature, for the binary's tests too).
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
/// Short texts: durations, paths, fitting to a width.
pub mod text;
/// Time as epoch milliseconds, and clock times and durations in words.
pub mod time;
/// Which tmux client shows agentwatch, and which panes someone looks at.
pub mod viewer;
/// Splitting and quoting words for tmux and shells.
pub mod words;
