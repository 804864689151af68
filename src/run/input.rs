//! The terminal's events in the core's terms: crossterm's keys and mouse turned into
//! [`crate::core::input`]'s, at the edge, so the core knows no terminal crate.

use crossterm::event::{
    Event, KeyCode as TermKey, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent,
    MouseEventKind,
};

use crate::core::input::{Button, Key, KeyCode, Mouse, MouseKind};
use crate::core::msg::Msg;

/// The message for a terminal event, if the core takes it: key presses (not releases),
/// clicks and the wheel (not the pointer's moves and drags), resizes.
pub fn message(ev: Event) -> Option<Msg> {
    match ev {
        Event::Key(k) => key(&k).map(Msg::Key),
        Event::Mouse(m) => mouse(&m).map(Msg::Mouse),
        Event::Resize(width, height) => Some(Msg::Resize { width, height }),
        _ => None,
    }
}

/// A key press; a release is none.
pub fn key(ev: &KeyEvent) -> Option<Key> {
    if ev.kind == KeyEventKind::Release {
        return None;
    }
    let code = match ev.code {
        TermKey::Char(c) => KeyCode::Char(c),
        TermKey::Enter => KeyCode::Enter,
        TermKey::Esc => KeyCode::Esc,
        TermKey::Tab => KeyCode::Tab,
        TermKey::Backspace => KeyCode::Backspace,
        TermKey::Up => KeyCode::Up,
        TermKey::Down => KeyCode::Down,
        TermKey::Left => KeyCode::Left,
        TermKey::Right => KeyCode::Right,
        TermKey::Home => KeyCode::Home,
        TermKey::End => KeyCode::End,
        TermKey::PageUp => KeyCode::PageUp,
        TermKey::PageDown => KeyCode::PageDown,
        _ => KeyCode::Other,
    };
    Some(Key {
        code,
        ctrl: ev.modifiers.contains(KeyModifiers::CONTROL),
    })
}

/// A click or a turn of the wheel; anything else the mouse does is none.
pub fn mouse(ev: &MouseEvent) -> Option<Mouse> {
    let kind = match ev.kind {
        MouseEventKind::Down(b) => MouseKind::Press(match b {
            MouseButton::Left => Button::Left,
            MouseButton::Right => Button::Right,
            MouseButton::Middle => Button::Middle,
        }),
        MouseEventKind::ScrollUp => MouseKind::ScrollUp,
        MouseEventKind::ScrollDown => MouseKind::ScrollDown,
        _ => return None,
    };
    Some(Mouse {
        kind,
        column: ev.column,
        row: ev.row,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyEventState, MouseEvent};

    #[test]
    fn control_is_kept_and_a_release_is_dropped() {
        let ctrl_c = KeyEvent::new(TermKey::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(key(&ctrl_c), Some(Key::ctrl('c')));
        let shifted = KeyEvent::new(TermKey::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(key(&shifted), Some(Key::char('G')));
        let release = KeyEvent {
            code: TermKey::Char('q'),
            modifiers: KeyModifiers::NONE,
            kind: KeyEventKind::Release,
            state: KeyEventState::NONE,
        };
        assert_eq!(key(&release), None);
        let f1 = KeyEvent::new(TermKey::F(1), KeyModifiers::NONE);
        assert_eq!(key(&f1), Some(Key::new(KeyCode::Other)));
    }

    #[test]
    fn clicks_and_the_wheel_pass_and_moves_do_not() {
        let at = |kind| MouseEvent {
            kind,
            column: 3,
            row: 4,
            modifiers: KeyModifiers::NONE,
        };
        assert_eq!(
            mouse(&at(MouseEventKind::Down(MouseButton::Left))),
            Some(Mouse {
                kind: MouseKind::Press(Button::Left),
                column: 3,
                row: 4
            })
        );
        assert!(mouse(&at(MouseEventKind::ScrollDown)).is_some());
        assert_eq!(mouse(&at(MouseEventKind::Moved)), None);
        assert_eq!(mouse(&at(MouseEventKind::Drag(MouseButton::Left))), None);
        assert_eq!(mouse(&at(MouseEventKind::Up(MouseButton::Left))), None);
    }
}
