//! The one key table: key -> action. It also feeds the footer, the help overlay and the
//! README's key list, so they can never disagree.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

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

use Key::*;

pub const GRID: &[Binding] = &[
    Binding {
        keys: &[Code(KeyCode::Up), Char('k')],
        label: "↑/k",
        action: Action::Up,
        help: "select the card above",
        footer: None,
    },
    Binding {
        keys: &[Code(KeyCode::Down), Char('j')],
        label: "↓/j",
        action: Action::Down,
        help: "select the card below",
        footer: None,
    },
    Binding {
        keys: &[Code(KeyCode::Left), Char('h')],
        label: "←/h",
        action: Action::Left,
        help: "select the card to the left",
        footer: None,
    },
    Binding {
        keys: &[Code(KeyCode::Right), Char('l')],
        label: "→/l",
        action: Action::Right,
        help: "select the card to the right",
        footer: None,
    },
    Binding {
        keys: &[Code(KeyCode::PageUp), Ctrl('u')],
        label: "PgUp/^u",
        action: Action::PageUp,
        help: "scroll up a screen",
        footer: None,
    },
    Binding {
        keys: &[Code(KeyCode::PageDown), Ctrl('d')],
        label: "PgDn/^d",
        action: Action::PageDown,
        help: "scroll down a screen",
        footer: None,
    },
    Binding {
        keys: &[Code(KeyCode::Home)],
        label: "Home",
        action: Action::First,
        help: "select the first card",
        footer: None,
    },
    Binding {
        keys: &[Code(KeyCode::End)],
        label: "End",
        action: Action::Last,
        help: "select the last card",
        footer: None,
    },
    Binding {
        keys: &[Char('r')],
        label: "r",
        action: Action::Relaunch,
        help: "relaunch a dead agent: same session, same pane and directory",
        footer: Some("relaunch"),
    },
    Binding {
        keys: &[Char('R')],
        label: "R",
        action: Action::RelaunchFresh,
        help: "start a dead agent fresh, in a new session (r never does)",
        footer: None,
    },
    Binding {
        keys: &[Char('a')],
        label: "a",
        action: Action::ToggleAuto,
        help: "turn auto-resume off or on for the selected agent",
        footer: Some("auto"),
    },
    Binding {
        keys: &[Char('c')],
        label: "c",
        action: Action::CancelAuto,
        help: "cancel the selected agent's pending auto-resume",
        footer: None,
    },
    Binding {
        keys: &[Char('A')],
        label: "A",
        action: Action::ToggleAutoAll,
        help: "turn auto-resume off or on for every agent",
        footer: None,
    },
    Binding {
        keys: &[Char('?')],
        label: "?",
        action: Action::Help,
        help: "show or hide this help",
        footer: Some("help"),
    },
    Binding {
        keys: &[Code(KeyCode::Esc)],
        label: "Esc",
        action: Action::Back,
        help: "close this help",
        footer: None,
    },
    Binding {
        keys: &[Char('q'), Ctrl('c')],
        label: "q",
        action: Action::Quit,
        help: "quit and restore the terminal",
        footer: Some("quit"),
    },
];

fn matches(k: Key, ev: &KeyEvent) -> bool {
    let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
    match k {
        Char(c) => !ctrl && ev.code == KeyCode::Char(c),
        Ctrl(c) => ctrl && ev.code == KeyCode::Char(c),
        Code(code) => ev.code == code,
    }
}

/// The action for a key press on the grid, if any. Key releases and repeats of
/// non-movement keys are ignored.
pub fn action_for(ev: &KeyEvent) -> Option<Action> {
    if ev.kind == KeyEventKind::Release {
        return None;
    }
    GRID.iter()
        .find(|b| b.keys.iter().any(|&k| matches(k, ev)))
        .map(|b| b.action)
}

/// The footer text: movement summarised, then every footer key.
pub fn footer_items() -> Vec<(&'static str, &'static str)> {
    let mut items = vec![("←↓↑→/hjkl", "move")];
    items.extend(
        GRID.iter()
            .filter_map(|b| b.footer.map(|word| (b.label, word))),
    );
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    #[test]
    fn vim_keys_and_arrows_move() {
        assert_eq!(
            action_for(&key(KeyCode::Char('j'), KeyModifiers::NONE)),
            Some(Action::Down)
        );
        assert_eq!(
            action_for(&key(KeyCode::Left, KeyModifiers::NONE)),
            Some(Action::Left)
        );
        assert_eq!(
            action_for(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(
            action_for(&key(KeyCode::Char('z'), KeyModifiers::NONE)),
            None
        );
    }

    #[test]
    fn no_key_is_bound_twice() {
        let all: Vec<Key> = GRID.iter().flat_map(|b| b.keys.iter().copied()).collect();
        for (i, a) in all.iter().enumerate() {
            assert!(!all[i + 1..].contains(a), "{a:?} bound twice");
        }
    }
}
