//! Styled text as the core holds it: the peek view's lines with their colours, in the core's
//! own terms (the terminal crates' types stay at the edges: an adapter turns escapes into
//! these, the UI turns these into its own).

/// A colour: the terminal's sixteen by name, one of its 256, or true colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Color {
    Reset,
    Black,
    Red,
    Green,
    Yellow,
    Blue,
    Magenta,
    Cyan,
    Gray,
    DarkGray,
    LightRed,
    LightGreen,
    LightYellow,
    LightBlue,
    LightMagenta,
    LightCyan,
    White,
    Rgb(u8, u8, u8),
    Indexed(u8),
}

/// Text attributes, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Attrs(pub u16);

impl Attrs {
    pub const BOLD: Attrs = Attrs(1);
    pub const DIM: Attrs = Attrs(1 << 1);
    pub const ITALIC: Attrs = Attrs(1 << 2);
    pub const UNDERLINED: Attrs = Attrs(1 << 3);
    pub const SLOW_BLINK: Attrs = Attrs(1 << 4);
    pub const RAPID_BLINK: Attrs = Attrs(1 << 5);
    pub const REVERSED: Attrs = Attrs(1 << 6);
    pub const HIDDEN: Attrs = Attrs(1 << 7);
    pub const CROSSED_OUT: Attrs = Attrs(1 << 8);

    pub fn contains(self, other: Attrs) -> bool {
        self.0 & other.0 == other.0
    }
}

/// How a run of text looks: colours where set, attributes added and taken away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Style {
    pub fg: Option<Color>,
    pub bg: Option<Color>,
    pub add: Attrs,
    pub sub: Attrs,
}

/// A run of text in one style.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub text: String,
    pub style: Style,
}

/// One line: its runs, in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Line {
    pub spans: Vec<Span>,
}

impl Line {
    /// A line of plain text.
    pub fn raw(text: impl Into<String>) -> Line {
        Line {
            spans: vec![Span {
                text: text.into(),
                style: Style::default(),
            }],
        }
    }

    /// Its text without styles.
    pub fn plain(&self) -> String {
        self.spans.iter().map(|s| s.text.as_str()).collect()
    }
}
