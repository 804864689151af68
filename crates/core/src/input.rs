//! Keys, clicks and resizes as the core takes them. The terminal library's events are
//! turned into these at the edge (`run::tui`), so the core depends on no terminal crate;
//! key releases never get this far.

/// A key, as far as the key table and the typed fields tell keys apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyCode {
    Char(char),
    Enter,
    Esc,
    Tab,
    Backspace,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    /// Any other key (a function key, Insert, ...): bound to nothing.
    Other,
}

/// One key press, with Control held or not (the only modifier any binding uses; Shift is
/// in the character itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
}

impl Key {
    /// A key pressed alone.
    pub const fn new(code: KeyCode) -> Key {
        Key { code, ctrl: false }
    }

    /// A character typed alone.
    pub const fn char(c: char) -> Key {
        Key::new(KeyCode::Char(c))
    }

    /// Control and a character.
    pub const fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            ctrl: true,
        }
    }
}

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Button {
    Left,
    Right,
    Middle,
}

/// What the mouse did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MouseKind {
    Press(Button),
    ScrollUp,
    ScrollDown,
    /// A release, a drag, a move: nothing reacts to them.
    Other,
}

/// A mouse event at a cell of the terminal (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mouse {
    pub kind: MouseKind,
    pub column: u16,
    pub row: u16,
}
