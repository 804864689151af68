//! Pure grid geometry, shared by the renderer and by the core (which needs to know which
//! cards are on screen to fetch only their previews, and which card a click hit). It
//! depends on the terminal size and on how many agents are shown, never on what they say,
//! so the layout does not jump between ticks.

use serde::Deserialize;

/// Rows taken by the header and the footer.
pub const CHROME_H: u16 = 2;
/// Narrowest a column of cards gets before another column is dropped.
pub const MIN_CARD_W: u16 = 64;
/// Shortest a card gets (border, info line, banner line, notice/preview lines).
pub const MIN_CARD_H: u16 = 9;
/// Tallest a card gets while the cards scroll (when they all fit they share the height).
pub const MAX_CARD_H: u16 = 12;
/// Rows of a card that are not output: two borders, the banner and the directory line.
const CARD_CHROME_H: u16 = 4;
/// Output lines read for a card at the least.
pub const MIN_PREVIEW: usize = 8;
/// Output lines read for a line of the list.
pub const LIST_PREVIEW: usize = 4;
/// Narrowest a terminal is for the list's preview to stand beside it.
pub const SIDE_PANE_W: u16 = 150;

/// How the agents are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Cards when they all fit on the screen, else the list.
    #[default]
    Auto,
    /// A card per agent: banner, directory and session, its last lines of output.
    Cards,
    /// One line per agent.
    List,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub cols: usize,
    /// Rows of cards (or lines of the list) that fit on screen.
    pub rows: usize,
    pub card_h: u16,
    /// One line per agent, under a line of column names.
    pub list: bool,
    /// The list's preview of the selected agent (its card, with as much of its screen as
    /// fits), beside the list on a wide terminal or below it when the list leaves room.
    pub pane: Option<Cell>,
}

/// A rectangle of the screen, in cells from its top left corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    pub x: u16,
    pub y: u16,
    pub w: u16,
    pub h: u16,
}

impl Geometry {
    pub fn per_page(&self) -> usize {
        self.cols * self.rows
    }

    /// Output lines a card has room for (and so are read for it). A list line shows one,
    /// read from the last few (a dialog's border is no news).
    pub fn preview_lines(&self) -> usize {
        if self.list {
            LIST_PREVIEW
        } else {
            usize::from(self.card_h.saturating_sub(CARD_CHROME_H)).max(MIN_PREVIEW)
        }
    }

    /// Output lines the list's preview pane shows, if it has one.
    pub fn pane_lines(&self) -> Option<usize> {
        self.pane
            .map(|p| usize::from(p.h.saturating_sub(CARD_CHROME_H)).max(MIN_PREVIEW))
    }

    /// First row of the first card or list line: under the header, and in the list under
    /// its line of column names.
    pub fn top(&self) -> u16 {
        if self.list {
            2
        } else {
            1
        }
    }

    /// Where the `slot`-th card of the page is drawn on a screen `width` wide, or `None`
    /// when it falls outside the page.
    pub fn cell(&self, width: u16, height: u16, slot: usize) -> Option<Cell> {
        if slot >= self.per_page() {
            return None;
        }
        let (row, col) = (slot / self.cols, slot % self.cols);
        // The list beside its preview pane ends where the pane begins.
        let width = match self.pane {
            Some(p) if self.list && p.x > 0 => p.x,
            _ => width,
        };
        let col_w = width / self.cols as u16;
        let x = col as u16 * col_w;
        let w = if col + 1 == self.cols {
            width - x
        } else {
            col_w
        };
        let y = self.top() + row as u16 * self.card_h;
        let bottom = height.saturating_sub(if height >= 3 { 1 } else { 0 });
        let h = self.card_h.min(bottom.saturating_sub(y));
        (h > 0).then_some(Cell { x, y, w, h })
    }

    /// The slot of the page at a screen position (a click), if a card is drawn there.
    pub fn slot_at(&self, width: u16, height: u16, x: u16, y: u16) -> Option<usize> {
        (0..self.per_page()).find(|&s| {
            self.cell(width, height, s)
                .is_some_and(|c| x >= c.x && x < c.x + c.w && y >= c.y && y < c.y + c.h)
        })
    }
}

/// How `n` agents are laid out on a `width` x `height` screen, in `mode`.
pub fn geometry(width: u16, height: u16, n: usize, mode: Mode) -> Geometry {
    let avail = height.saturating_sub(CHROME_H).max(1);
    let max_cols = usize::from((width / MIN_CARD_W).max(1));
    let max_rows = usize::from((avail / MIN_CARD_H).max(1));
    let list = match mode {
        Mode::List => true,
        Mode::Cards => false,
        Mode::Auto => n > max_cols * max_rows,
    };
    if list {
        let g = Geometry {
            cols: 1,
            rows: 1,
            card_h: 1,
            list: true,
            pane: None,
        };
        // A wide terminal: the selected agent's card beside the list, the full height.
        if width >= SIDE_PANE_W && avail > MIN_CARD_H {
            let list_w = (width * 3 / 5).max(84);
            return Geometry {
                rows: usize::from(avail - 1),
                pane: Some(Cell {
                    x: list_w,
                    y: 1,
                    w: width - list_w,
                    h: avail,
                }),
                ..g
            };
        }
        // Room under the agents' lines: the selected agent's card there.
        let under = usize::from(avail.saturating_sub(1)).saturating_sub(n);
        if under >= usize::from(MIN_CARD_H + 1) {
            return Geometry {
                rows: n,
                pane: Some(Cell {
                    x: 0,
                    y: 2 + n as u16,
                    w: width,
                    h: under as u16,
                }),
                ..g
            };
        }
        // Under the column names, and above the selected agent's own words.
        return Geometry {
            rows: usize::from(avail.saturating_sub(2).max(1)),
            ..g
        };
    }
    if n <= max_cols * max_rows {
        // All fit: as many columns as there are cards, and the rows share the height, so
        // a card shows as much of its output as the screen has room for.
        let cols = n.clamp(1, max_cols);
        let rows = n.div_ceil(cols).max(1);
        let card_h = (avail / rows as u16).max(MIN_CARD_H.min(avail));
        return Geometry {
            cols,
            rows,
            card_h,
            list: false,
            pane: None,
        };
    }
    Geometry {
        cols: max_cols,
        rows: max_rows,
        card_h: (avail / max_rows as u16).clamp(MIN_CARD_H.min(avail), MAX_CARD_H),
        list: false,
        pane: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_when_they_all_fit_and_the_list_when_they_do_not() {
        let g = geometry(80, 24, 2, Mode::Auto);
        assert_eq!((g.cols, g.rows, g.list), (1, 2, false));
        assert_eq!(g.card_h, 11);
        // Twelve agents at 80x24: one per line, and room for more.
        let g = geometry(80, 24, 12, Mode::Auto);
        assert!(g.list);
        assert!(g.per_page() >= 18, "{g:?}");
        // Asked for, cards scroll and the list is used even for one agent.
        let g = geometry(80, 24, 12, Mode::Cards);
        assert_eq!((g.cols, g.rows, g.list), (1, 2, false));
        assert!(geometry(80, 24, 1, Mode::List).list);
    }

    #[test]
    fn cards_that_all_fit_share_the_room_and_show_more_output() {
        // Three agents on a big screen: three columns, the whole height each.
        let g = geometry(200, 60, 3, Mode::Auto);
        assert_eq!((g.cols, g.rows, g.card_h), (3, 1, 58));
        assert_eq!(g.preview_lines(), 54);
        // One agent takes the whole width.
        assert_eq!(geometry(200, 60, 1, Mode::Auto).cols, 1);
        // Scrolling cards keep their usual height.
        let g = geometry(200, 60, 100, Mode::Cards);
        assert_eq!((g.cols, g.rows, g.card_h), (3, 6, 9));
        assert_eq!(g.preview_lines(), MIN_PREVIEW);
    }

    #[test]
    fn the_list_shows_the_selected_agent_beside_or_below_it_where_there_is_room() {
        // Wide: beside the list, the full height, and the list's rows end where it begins.
        let g = geometry(160, 45, 12, Mode::Auto);
        assert!(g.list);
        let p = g.pane.expect("a pane beside");
        assert_eq!((p.x, p.y, p.w, p.h), (96, 1, 64, 43));
        assert_eq!(g.cell(160, 45, 0).map(|c| c.w), Some(96));
        assert_eq!(
            g.slot_at(160, 45, 120, 2),
            None,
            "a click on the pane is on no row"
        );
        assert!(g.pane_lines().unwrap() >= 39);
        // Five agents at 120x40: their lines, and the card under them (no empty rows).
        let g = geometry(120, 40, 5, Mode::Auto);
        let p = g.pane.expect("a pane below");
        assert_eq!((g.rows, p.x, p.y, p.w, p.h), (5, 0, 7, 120, 32));
        // Twelve at 80x24: the list needs the room.
        let g = geometry(80, 24, 12, Mode::Auto);
        assert_eq!((g.pane, g.rows), (None, 20));
        // Cards have no pane.
        assert_eq!(geometry(200, 60, 3, Mode::Auto).pane, None);
    }

    #[test]
    fn tiny_terminals_still_get_one_card() {
        let g = geometry(20, 5, 1, Mode::Auto);
        assert_eq!((g.cols, g.rows), (1, 1));
        assert_eq!(g.card_h, 3);
        let g = geometry(40, 12, 12, Mode::Auto);
        assert!(g.list);
        assert_eq!(g.rows, 8);
    }

    #[test]
    fn a_click_finds_the_card_drawn_there() {
        let g = geometry(160, 45, 4, Mode::Auto);
        assert_eq!((g.cols, g.rows), (2, 2));
        assert_eq!(g.slot_at(160, 45, 0, 1), Some(0));
        assert_eq!(g.slot_at(160, 45, 100, 1), Some(1));
        assert_eq!(g.slot_at(160, 45, 100, 1 + g.card_h), Some(3));
        // The header and the footer are no card.
        assert_eq!(g.slot_at(160, 45, 10, 0), None);
        assert_eq!(g.slot_at(160, 45, 10, 44), None);
        let l = geometry(80, 24, 30, Mode::Auto);
        // The list's line of column names is no agent; the first agent is under it.
        assert_eq!(l.slot_at(80, 24, 5, 1), None);
        assert_eq!(l.slot_at(80, 24, 5, 2), Some(0));
        assert_eq!(l.slot_at(80, 24, 5, 21), Some(19));
        // Nor is the selected agent's line under the list, nor the footer.
        assert_eq!(l.slot_at(80, 24, 5, 22), None);
        assert_eq!(l.slot_at(80, 24, 5, 23), None);
    }
}
