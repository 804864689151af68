//! The one key table: key -> action, per view. It also feeds the footer, the help overlay
//! and the README's key list, so they can never disagree.

use crate::input::{Key as Pressed, KeyCode};
use crate::msg::Action;

/// A key as written in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Ctrl(char),
    Code(KeyCode),
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub keys: &'static [Key],
    /// How the keys are written for people.
    pub label: &'static str,
    pub action: Action,
    pub help: &'static str,
    /// The word shown in the footer, for the main keys only.
    pub footer: Option<&'static str>,
}

/// Which table applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Grid,
    Peek,
    /// The tmux server went away with agents on it.
    Lost,
}

use Key::*;

const fn b(
    keys: &'static [Key],
    label: &'static str,
    action: Action,
    help: &'static str,
    footer: Option<&'static str>,
) -> Binding {
    Binding {
        keys,
        label,
        action,
        help,
        footer,
    }
}

pub const GRID: &[Binding] = &[
    b(
        &[Code(KeyCode::Up), Char('k')],
        "↑/k",
        Action::Up,
        "select the card above",
        None,
    ),
    b(
        &[Code(KeyCode::Down), Char('j')],
        "↓/j",
        Action::Down,
        "select the card below",
        None,
    ),
    b(
        &[Code(KeyCode::Left), Char('h')],
        "←/h",
        Action::Left,
        "select the card to the left",
        None,
    ),
    b(
        &[Code(KeyCode::Right), Char('l')],
        "→/l",
        Action::Right,
        "select the card to the right",
        None,
    ),
    b(
        &[Code(KeyCode::PageUp), Ctrl('u')],
        "PgUp/^u",
        Action::PageUp,
        "scroll up a screen",
        None,
    ),
    b(
        &[Code(KeyCode::PageDown), Ctrl('d')],
        "PgDn/^d",
        Action::PageDown,
        "scroll down a screen",
        None,
    ),
    b(
        &[Code(KeyCode::Home)],
        "Home",
        Action::First,
        "select the first card",
        None,
    ),
    b(
        &[Code(KeyCode::End)],
        "End",
        Action::Last,
        "select the last card",
        None,
    ),
    b(
        &[Char('n'), Code(KeyCode::Tab)],
        "n/Tab",
        Action::NextNeed,
        "select the next agent that needs you: dead or waiting",
        Some("needs you"),
    ),
    b(
        &[Char('g'), Code(KeyCode::Enter)],
        "g/Enter",
        Action::Jump,
        "go to the pane in tmux (or show the attach command)",
        Some("go"),
    ),
    b(
        &[Char('p')],
        "p",
        Action::Peek,
        "peek at the agent's whole output, colours included",
        Some("peek"),
    ),
    b(
        &[Char('r')],
        "r",
        Action::Relaunch,
        "relaunch a dead agent: same session, same pane and directory",
        Some("relaunch"),
    ),
    // Where r would refuse (no session id), the footer offers R in its place.
    b(
        &[Char('R')],
        "R",
        Action::RelaunchFresh,
        "start a dead agent fresh, in a new session (r never does)",
        Some("fresh"),
    ),
    b(
        &[Char('s')],
        "s",
        Action::Start,
        "start a new agent: kind, directory, window name (as spawn does)",
        Some("start"),
    ),
    b(
        &[Char('/')],
        "/",
        Action::Filter,
        "filter by kind, window, session, directory, state; Enter keeps",
        Some("filter"),
    ),
    b(
        &[Char('v')],
        "v",
        Action::SwitchView,
        "one line per agent, or cards (a list when cards do not fit)",
        Some("view"),
    ),
    b(
        &[Char('a')],
        "a",
        Action::ToggleAuto,
        "turn auto-resume off or on for the selected agent",
        Some("auto"),
    ),
    b(
        &[Char('c')],
        "c",
        Action::CancelAuto,
        "cancel the selected agent's pending auto-resume",
        None,
    ),
    b(
        &[Char('A')],
        "A",
        Action::ToggleAutoAll,
        "turn auto-resume off or on for every agent",
        None,
    ),
    b(
        &[Char('C')],
        "C",
        Action::ToggleContinue,
        "continue the selected agent once its usage limit resets (or not)",
        None,
    ),
    b(
        &[Char('x')],
        "x",
        Action::Close,
        "close a dead pane, or end what it left running (press x twice)",
        None,
    ),
    b(
        &[Char('?')],
        "?",
        Action::Help,
        "show or hide this help",
        Some("help"),
    ),
    b(
        &[Code(KeyCode::Esc)],
        "Esc",
        Action::Back,
        "clear the filter; close this help",
        None,
    ),
    b(
        &[Char('q'), Ctrl('c')],
        "q",
        Action::Quit,
        "quit and restore the terminal",
        Some("quit"),
    ),
];

pub const PEEK: &[Binding] = &[
    b(
        &[Code(KeyCode::Up), Char('k')],
        "↑/k",
        Action::Up,
        "scroll up a line",
        None,
    ),
    b(
        &[Code(KeyCode::Down), Char('j')],
        "↓/j",
        Action::Down,
        "scroll down a line",
        None,
    ),
    b(
        &[Code(KeyCode::PageUp), Ctrl('u')],
        "PgUp/^u",
        Action::PageUp,
        "scroll up a page",
        None,
    ),
    b(
        &[Code(KeyCode::PageDown), Ctrl('d'), Char(' ')],
        "PgDn/^d",
        Action::PageDown,
        "scroll down a page",
        None,
    ),
    b(
        &[Char('g'), Code(KeyCode::Home)],
        "g/Home",
        Action::First,
        "go to the top (the first retained line)",
        None,
    ),
    b(
        &[Char('G'), Code(KeyCode::End)],
        "G/End",
        Action::Last,
        "go to the bottom (the last words)",
        None,
    ),
    b(&[Char('n')], "n", Action::Next, "next match", Some("next")),
    b(
        &[Char('N')],
        "N",
        Action::Prev,
        "previous match",
        Some("previous"),
    ),
    b(
        &[Char('/')],
        "/",
        Action::Search,
        "search forward; Enter confirms, Esc cancels",
        Some("search"),
    ),
    b(
        &[Char('[')],
        "[",
        Action::Older,
        "show the previous crash record of this pane",
        Some("older"),
    ),
    b(
        &[Char(']')],
        "]",
        Action::Newer,
        "show the next newer record (the live pane last)",
        Some("newer"),
    ),
    b(
        &[Char('s')],
        "s",
        Action::Refresh,
        "take a new snapshot of the pane",
        Some("refresh"),
    ),
    b(
        &[Char('r')],
        "r",
        Action::Relaunch,
        "relaunch this dead agent (same rules as on the grid)",
        Some("relaunch"),
    ),
    b(
        &[Char('R')],
        "R",
        Action::RelaunchFresh,
        "start this dead agent fresh, in a new session",
        Some("fresh"),
    ),
    b(
        &[Char('?')],
        "?",
        Action::Help,
        "show or hide this help",
        Some("help"),
    ),
    b(
        &[Code(KeyCode::Esc), Char('q')],
        "Esc/q",
        Action::Back,
        "back to the grid",
        Some("back"),
    ),
    b(&[Ctrl('c')], "^c", Action::Quit, "quit agentwatch", None),
];

pub const LOST: &[Binding] = &[
    b(
        &[Char('R')],
        "R",
        Action::RecreateAll,
        "recreate every lost agent with its resume command (asks first)",
        Some("recreate"),
    ),
    b(
        &[Char('y')],
        "y",
        Action::Yes,
        "yes: do it now",
        Some("yes"),
    ),
    b(&[Char('n')], "n", Action::No, "no: do nothing", Some("no")),
    b(
        &[Char('d')],
        "d",
        Action::Forget,
        "dealt with: forget this list for good (asks first)",
        Some("forget"),
    ),
    b(
        &[Code(KeyCode::Esc)],
        "Esc",
        Action::Back,
        "to the grid for now (the list is shown again at the next start)",
        Some("grid"),
    ),
    b(
        &[Char('?')],
        "?",
        Action::Help,
        "show or hide this help",
        Some("help"),
    ),
    b(
        &[Char('q'), Ctrl('c')],
        "q",
        Action::Quit,
        "quit agentwatch",
        Some("quit"),
    ),
];

pub fn table(view: View) -> &'static [Binding] {
    match view {
        View::Grid => GRID,
        View::Peek => PEEK,
        View::Lost => LOST,
    }
}

fn matches(k: Key, ev: &Pressed) -> bool {
    let ctrl = ev.ctrl;
    match k {
        Char(c) => !ctrl && ev.code == KeyCode::Char(c),
        Ctrl(c) => ctrl && ev.code == KeyCode::Char(c),
        Code(code) => ev.code == code,
    }
}

/// The action for a key press in a view, if any.
pub fn action_for(view: View, ev: &Pressed) -> Option<Action> {
    table(view)
        .iter()
        .find(|b| b.keys.iter().any(|&k| matches(k, ev)))
        .map(|b| b.action)
}

/// The footer: each footer key that does something now (`applies`), in the table's order,
/// which is their order of importance, then movement summarised.
pub fn footer_items(
    view: View,
    applies: impl Fn(Action) -> bool,
) -> Vec<(&'static str, &'static str)> {
    let mut items: Vec<(&'static str, &'static str)> = table(view)
        .iter()
        .filter(|b| applies(b.action))
        .filter_map(|b| b.footer.map(|word| (b.label, word)))
        .collect();
    // The arrows need no saying on the grid; `?` lists them with the rest.
    if view == View::Peek && applies(Action::Down) {
        items.push(("↓↑/jk", "scroll"));
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, ctrl: bool) -> Pressed {
        Pressed { code, ctrl }
    }

    #[test]
    fn vim_keys_and_arrows_move() {
        let g = View::Grid;
        assert_eq!(
            action_for(g, &key(KeyCode::Char('j'), false)),
            Some(Action::Down)
        );
        assert_eq!(
            action_for(g, &key(KeyCode::Left, false)),
            Some(Action::Left)
        );
        assert_eq!(
            action_for(g, &key(KeyCode::Char('c'), true)),
            Some(Action::Quit)
        );
        assert_eq!(action_for(g, &key(KeyCode::Char('z'), false)), None);
    }

    #[test]
    fn q_leaves_the_peek_view_but_quits_the_grid() {
        let q = key(KeyCode::Char('q'), false);
        assert_eq!(action_for(View::Peek, &q), Some(Action::Back));
        assert_eq!(action_for(View::Grid, &q), Some(Action::Quit));
    }

    #[test]
    fn no_key_is_bound_twice_in_a_view() {
        for view in [View::Grid, View::Peek, View::Lost] {
            let all: Vec<Key> = table(view)
                .iter()
                .flat_map(|b| b.keys.iter().copied())
                .collect();
            for (i, a) in all.iter().enumerate() {
                assert!(!all[i + 1..].contains(a), "{a:?} bound twice in {view:?}");
            }
        }
    }
}
