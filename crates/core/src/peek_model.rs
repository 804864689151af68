//! The peek view's model: a pane's whole output (or a crash record's), parsed from ANSI
//! once, with scrolling and search. Pure: no I/O.

use std::sync::Arc;

use crate::crash::CrashRecord;
use crate::pane::PaneId;
use crate::styled::Line;
use crate::time::Millis;

/// Output ready to show: styled lines, and the same lines as plain text for search.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PeekText {
    pub lines: Vec<Line>,
    pub plain: Vec<String>,
}

impl PeekText {
    /// Output parsed into lines (by an adapter, from its colour escapes): trailing blank
    /// lines and tmux's own "Pane is dead (...)" line (remain-on-exit-format), which is
    /// not the agent's, are dropped.
    pub fn new(mut lines: Vec<Line>) -> PeekText {
        let mut plain: Vec<String> = lines.iter().map(Line::plain).collect();
        while plain
            .last()
            .is_some_and(|text| text.trim().is_empty() || text.starts_with("Pane is dead ("))
        {
            plain.pop();
            lines.pop();
        }
        PeekText { lines, plain }
    }

    /// Output without colours, a line each.
    pub fn plain(text: &str) -> PeekText {
        PeekText::new(text.lines().map(Line::raw).collect())
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// A crash record, with its output parsed for the peek view.
#[derive(Debug, Clone, PartialEq)]
pub struct PeekRecord {
    pub record: CrashRecord,
    pub text: Arc<PeekText>,
}

/// What the peek view shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// A snapshot of the pane itself.
    Live { captured_at: Millis },
    /// One of the pane's crash records (index into `Peek::records`, newest first).
    Record(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Peek {
    pub pane: PaneId,
    pub source: Shown,
    /// `None` while the capture is under way.
    pub text: Option<Arc<PeekText>>,
    pub live: Option<Arc<PeekText>>,
    pub error: Option<String>,
    /// First line on screen.
    pub top: usize,
    /// Lines on screen (set from the terminal size).
    pub height: usize,
    /// The confirmed search and its matching lines.
    pub query: Option<String>,
    pub matches: Vec<usize>,
    /// The line of the match the user is on.
    pub hit: Option<usize>,
    /// The search being typed.
    pub typing: Option<String>,
    /// This pane's crash records, newest first, once they are read.
    pub records: Vec<Arc<PeekRecord>>,
    pub records_loaded: bool,
    /// `[` was pressed before the records were read: show the newest when they are.
    pub want_older: bool,
    /// When the pane's own output was last asked for (for the title once `]` comes back
    /// to it from the records).
    live_at: Millis,
}

impl Peek {
    pub fn new(pane: PaneId, height: usize, now: Millis) -> Peek {
        Peek {
            pane,
            source: Shown::Live { captured_at: now },
            text: None,
            live: None,
            error: None,
            top: 0,
            height: height.max(1),
            query: None,
            matches: Vec::new(),
            hit: None,
            typing: None,
            records: Vec::new(),
            records_loaded: false,
            want_older: false,
            live_at: now,
        }
    }

    fn len(&self) -> usize {
        self.text.as_ref().map_or(0, |t| t.len())
    }

    fn max_top(&self) -> usize {
        self.len().saturating_sub(self.height)
    }

    /// Shows new text, opening at the bottom where the last words are. A confirmed search
    /// is run again on it (the footer's count is of the text on screen); the match the user
    /// was on was a line of the old text, so `n` starts again from the screen.
    pub fn show(&mut self, text: Arc<PeekText>) {
        self.text = Some(text);
        self.error = None;
        self.hit = None;
        self.bottom();
        self.rematch();
    }

    /// Back to the pane's own output (`]` past the newest record, `s`), asked for at
    /// `captured_at`. From a record, its last capture is shown, or nothing until one
    /// arrives: never a record's text (or its search count) under a live title.
    pub fn go_live(&mut self, captured_at: Millis) {
        let from_record = matches!(self.source, Shown::Record(_));
        self.source = Shown::Live { captured_at };
        self.live_at = captured_at;
        if !from_record {
            return;
        }
        match self.live.clone() {
            Some(live) => self.show(live),
            None => {
                self.text = None;
                self.hit = None;
                self.top = 0;
                self.rematch();
            }
        }
    }

    pub fn scroll(&mut self, by: isize) {
        self.top = self.top.saturating_add_signed(by).min(self.max_top());
    }

    pub fn page(&mut self, down: bool) {
        let by = self.height.saturating_sub(1).max(1) as isize;
        self.scroll(if down { by } else { -by });
    }

    pub fn first(&mut self) {
        self.top = 0;
    }

    pub fn bottom(&mut self) {
        self.top = self.max_top();
    }

    pub fn set_height(&mut self, height: usize) {
        let at_bottom = self.top >= self.max_top();
        self.height = height.max(1);
        self.top = if at_bottom {
            self.max_top()
        } else {
            self.top.min(self.max_top())
        };
    }

    /// Confirms a search (case-insensitive unless the query has capitals) and jumps to the
    /// first match at or after the top of the screen.
    pub fn search(&mut self, query: String) {
        self.query = (!query.is_empty()).then_some(query);
        self.rematch();
        self.next(true);
    }

    fn rematch(&mut self) {
        self.matches.clear();
        let (Some(q), Some(text)) = (&self.query, &self.text) else {
            return;
        };
        let smart = q.chars().any(char::is_uppercase);
        let needle = if smart { q.clone() } else { q.to_lowercase() };
        for (i, line) in text.plain.iter().enumerate() {
            let hit = if smart {
                line.contains(&needle)
            } else {
                line.to_lowercase().contains(&needle)
            };
            if hit {
                self.matches.push(i);
            }
        }
    }

    /// The match the user is on, if it is still a match.
    pub fn current(&self) -> Option<usize> {
        self.hit.filter(|h| self.matches.binary_search(h).is_ok())
    }

    fn go_to(&mut self, m: usize) {
        self.hit = Some(m);
        self.top = m.saturating_sub(2).min(self.max_top());
    }

    /// Moves to the next match after the current one (wrapping); `inclusive` starts at the
    /// top line of the screen instead (a new search).
    pub fn next(&mut self, inclusive: bool) {
        let from = match self.current() {
            Some(h) if !inclusive => h + 1,
            _ => self.top,
        };
        let hit = self
            .matches
            .iter()
            .copied()
            .find(|&m| m >= from)
            .or_else(|| self.matches.first().copied());
        if let Some(m) = hit {
            self.go_to(m);
        }
    }

    /// Moves to the match before the current one (wrapping).
    pub fn prev(&mut self) {
        let before = self.current().unwrap_or(self.top);
        let hit = self
            .matches
            .iter()
            .rev()
            .copied()
            .find(|&m| m < before)
            .or_else(|| self.matches.last().copied());
        if let Some(m) = hit {
            self.go_to(m);
        }
    }

    /// `[`: one record older. From the live pane, the newest record.
    pub fn older(&mut self) -> bool {
        let next = match self.source {
            Shown::Live { .. } => 0,
            Shown::Record(i) => i + 1,
        };
        self.show_record(next)
    }

    /// `]`: one record newer; past the newest, the live pane.
    pub fn newer(&mut self) -> bool {
        match self.source {
            Shown::Live { .. } => false,
            Shown::Record(0) => {
                self.go_live(self.live_at);
                true
            }
            Shown::Record(i) => self.show_record(i - 1),
        }
    }

    fn show_record(&mut self, i: usize) -> bool {
        let Some(r) = self.records.get(i) else {
            return false;
        };
        let text = Arc::clone(&r.text);
        self.source = Shown::Record(i);
        self.show(text);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peek_of(n: usize, height: usize) -> Peek {
        let out: String = (1..=n).map(|i| format!("line {i}\n")).collect();
        let mut p = Peek::new(PaneId(1), height, 0);
        p.show(Arc::new(PeekText::plain(&out)));
        p
    }

    #[test]
    fn it_opens_at_the_bottom_and_g_goes_to_the_top() {
        let mut p = peek_of(5000, 40);
        assert_eq!(p.top, 4960);
        assert_eq!(p.text.as_ref().unwrap().plain[4999], "line 5000");
        p.first();
        assert_eq!(p.top, 0);
        p.page(true);
        assert_eq!(p.top, 39);
        p.scroll(-100);
        assert_eq!(p.top, 0);
        p.scroll(100_000);
        assert_eq!(p.top, 4960);
    }

    #[test]
    fn search_finds_forward_and_wraps_and_n_capital_goes_back() {
        let mut p = peek_of(100, 10);
        p.first();
        p.search("line 5".into());
        assert_eq!(p.matches, [4, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58]);
        assert_eq!(p.current(), Some(4));
        p.next(false);
        assert_eq!(p.current(), Some(49));
        p.prev();
        assert_eq!(p.current(), Some(4));
        p.prev();
        assert_eq!(p.current(), Some(58), "wraps to the last");
        p.next(false);
        assert_eq!(p.current(), Some(4), "wraps to the first");
        p.search("LINE".into());
        assert!(p.matches.is_empty(), "capitals make it case-sensitive");
    }

    fn record(output: &str) -> Arc<PeekRecord> {
        Arc::new(PeekRecord {
            record: crate::crash::sample(output),
            text: Arc::new(PeekText::plain(output)),
        })
    }

    /// A peek opened at 7 on a live pane of 100 lines, with two crash records.
    fn peek_with_records() -> Peek {
        let mut p = Peek::new(PaneId(1), 10, 7);
        let live: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let live = Arc::new(PeekText::plain(&live));
        p.live = Some(Arc::clone(&live));
        p.show(live);
        p.records = vec![
            record("a foo\nb\nfoo c\nfoo d\n"),
            record("nothing to see\n"),
        ];
        p.records_loaded = true;
        p
    }

    #[test]
    fn a_search_is_run_again_on_each_record_shown_so_its_count_is_of_the_text_on_screen() {
        let mut p = peek_with_records();
        p.search("foo".into());
        assert!(
            p.matches.is_empty(),
            "no match for \"foo\" on the live pane"
        );
        assert!(p.older());
        assert_eq!(p.source, Shown::Record(0));
        assert_eq!(p.matches, [0, 2, 3], "3 lines match on the newest record");
        p.next(false);
        assert_eq!(p.current(), Some(0));
        assert!(p.older());
        assert!(p.matches.is_empty(), "no match on the older record");
        assert_eq!(p.current(), None);
        assert!(p.newer());
        assert_eq!(p.matches, [0, 2, 3]);
        assert_eq!(p.current(), None, "the old hit was a line of other text");
        p.next(false);
        assert_eq!(p.current(), Some(0), "n starts again from the screen");
        assert!(p.newer());
        assert_eq!(p.source, Shown::Live { captured_at: 7 }, "not the epoch");
        assert_eq!(p.text.as_ref().unwrap().len(), 100);
        assert!(p.matches.is_empty());
        assert_eq!(p.query.as_deref(), Some("foo"), "the search stays");
    }

    #[test]
    fn back_from_a_record_before_the_pane_was_read_shows_no_record_text_under_a_live_title() {
        let mut p = peek_with_records();
        p.live = None;
        p.search("foo".into());
        assert!(p.older());
        assert_eq!(p.matches.len(), 3);
        assert!(p.newer());
        assert_eq!(p.source, Shown::Live { captured_at: 7 });
        assert!(p.text.is_none(), "the pane's output is being read");
        assert!(p.matches.is_empty(), "no count of the record's lines");
    }

    #[test]
    fn blank_lines_and_the_pane_is_dead_line_at_the_end_are_not_the_agents() {
        let t = PeekText::plain("one\n\ntwo\n   \nPane is dead (status 1, Tue)\n\n");
        assert_eq!(t.plain, ["one", "", "two"]);
        assert_eq!(t.len(), 3);
    }
}
