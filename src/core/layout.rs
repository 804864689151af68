//! Pure grid geometry, shared by the renderer and by the core (which needs to know which
//! cards are on screen to fetch only their previews). Depends only on the terminal size,
//! never on the data, so the layout does not jump between ticks.

/// Rows taken by the header and the footer.
pub const CHROME_H: u16 = 2;
/// Narrowest a column of cards gets before another column is dropped.
pub const MIN_CARD_W: u16 = 64;
/// Shortest a card gets (border, info line, banner line, notice/preview lines).
pub const MIN_CARD_H: u16 = 9;
/// Tallest a card gets when few rows fit.
pub const MAX_CARD_H: u16 = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub cols: usize,
    /// Rows of cards that fit on screen.
    pub rows: usize,
    pub card_h: u16,
}

impl Geometry {
    pub fn per_page(&self) -> usize {
        self.cols * self.rows
    }
}

pub fn geometry(width: u16, height: u16) -> Geometry {
    let avail = height.saturating_sub(CHROME_H).max(1);
    let rows = (avail / MIN_CARD_H).max(1);
    let card_h = (avail / rows).clamp(MIN_CARD_H.min(avail), MAX_CARD_H);
    Geometry {
        cols: usize::from((width / MIN_CARD_W).max(1)),
        rows: usize::from(rows),
        card_h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_column_at_80x24_and_more_on_wide_terminals() {
        assert_eq!(geometry(80, 24).cols, 1);
        assert_eq!(geometry(80, 24).rows, 2);
        assert_eq!(geometry(160, 45).cols, 2);
        assert_eq!(geometry(200, 50).cols, 3);
    }

    #[test]
    fn tiny_terminals_still_get_one_card() {
        let g = geometry(20, 5);
        assert_eq!((g.cols, g.rows), (1, 1));
        assert_eq!(g.card_h, 3);
    }
}
