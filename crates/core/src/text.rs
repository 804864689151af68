//! Small pure text helpers for the screen: durations, paths, truncation.

use crate::time::Millis;

/// `1 agent`, `3 agents`: a count and its noun, singular for one.
pub fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `45s`, `12m`, `3h 07m`, `2d 4h`.
pub fn duration(ms: Millis) -> String {
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d {}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// A path with the home directory shown as `~`.
pub fn tilde(path: &str, home: Option<&str>) -> String {
    match home {
        Some(h) if !h.is_empty() && h != "/" => match path.strip_prefix(h) {
            Some("") => "~".to_string(),
            Some(rest) if rest.starts_with('/') => format!("~{rest}"),
            _ => path.to_string(),
        },
        _ => path.to_string(),
    }
}

/// A path as typed, `~` (alone or before a `/`) read as the home directory: the opposite
/// of [`tilde`].
pub fn untilde(path: &str, home: Option<&str>) -> String {
    match (path.strip_prefix('~'), home) {
        (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => format!("{h}{rest}"),
        _ => path.to_string(),
    }
}

/// `s` for a terminal: control characters (C0, DEL, C1: ESC, BEL, newline...) shown as `?`,
/// as the dashboard shows them, so that nothing from a pane (a directory, a window name, a
/// session id) can move the cursor, ring, or split a line of `status` or `events`.
pub fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// How many terminal columns `s` takes: wide (CJK, most emoji) characters take two,
/// combining marks none. Every cut and every pad on screen is measured with this, never
/// with a count of characters.
pub fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

fn char_width(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// The longest start of `s` that takes at most `cols` columns. Measured as [`width`]
/// measures (and ratatui draws): a character's width can depend on the next one (an emoji
/// with its variation selector takes two), so the sum of each one's width is not it.
fn take_cols(s: &str, cols: usize) -> &str {
    let mut end = 0;
    for (i, c) in s.char_indices() {
        let next = i + c.len_utf8();
        // Nothing added can narrow a start already too wide; a zero-width character may
        // still belong to the start that fits.
        if width(&s[..next]) > cols {
            if char_width(c) == 0 {
                continue;
            }
            break;
        }
        end = next;
    }
    &s[..end]
}

/// The longest end of `s` that takes at most `cols` columns.
fn take_cols_end(s: &str, cols: usize) -> &str {
    let mut start = s.len();
    for (i, _) in s.char_indices().rev() {
        if width(&s[i..]) > cols {
            break;
        }
        start = i;
    }
    &s[start..]
}

/// Cuts `s` to at most `width` columns, marking the cut with `…`. Control characters are
/// shown as `?` so that nothing from a pane can move the cursor. A wide character that
/// would straddle the edge is left out whole, never halved.
pub fn fit(s: &str, cols: usize) -> String {
    let clean = printable(s);
    if width(&clean) <= cols {
        return clean;
    }
    if cols == 0 {
        return String::new();
    }
    let mut out = take_cols(&clean, cols - 1).to_string();
    out.push('…');
    out
}

/// Cuts from the left: `…/deep/path` keeps the end, which says more.
pub fn fit_left(s: &str, cols: usize) -> String {
    let clean = printable(s);
    if width(&clean) <= cols {
        return clean;
    }
    if cols == 0 {
        return String::new();
    }
    format!("…{}", take_cols_end(&clean, cols - 1))
}

/// Cuts a notice in its middle, keeping its last clause whole (after its last `: ` or
/// ` · `): that is where its key hint is (`… R starts a fresh session`, `… c cancels`).
/// As [`fit`] when even the clause does not fit.
pub fn fit_keep_end(s: &str, cols: usize) -> String {
    let clean = printable(s);
    if width(&clean) <= cols {
        return clean;
    }
    let cut = [": ", " · "]
        .iter()
        .filter_map(|sep| clean.rfind(sep).map(|at| at + sep.len()))
        .max();
    match cut {
        Some(at) if width(&clean[at..]) + 2 <= cols => {
            let tail = &clean[at..];
            let head = fit(&clean[..at], cols - width(tail));
            format!("{head}{tail}")
        }
        _ => fit(&clean, cols),
    }
}

/// `s` fit to exactly `cols` columns: cut with `…`, or padded with spaces.
pub fn pad(s: &str, cols: usize) -> String {
    let mut out = fit(s, cols);
    let w = width(&out);
    out.extend(std::iter::repeat_n(' ', cols.saturating_sub(w)));
    out
}

/// `s` broken into lines of at most `cols` columns, at spaces where it can be, inside a
/// word where one is longer than a line.
pub fn wrap(s: &str, cols: usize) -> Vec<String> {
    let cols = cols.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in s.split(' ').filter(|w| !w.is_empty()) {
        let sep = usize::from(!line.is_empty());
        if width(&line) + sep + width(word) <= cols {
            if sep == 1 {
                line.push(' ');
            }
            line.push_str(word);
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        let mut rest = word;
        while width(rest) > cols {
            let head = take_cols(rest, cols);
            let head = if head.is_empty() {
                // A character wider than the line: alone on it.
                &rest[..rest.chars().next().map_or(0, char::len_utf8)]
            } else {
                head
            };
            lines.push(head.to_string());
            rest = &rest[head.len()..];
        }
        line.push_str(rest);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The first 8 characters of an id: enough to tell sessions apart on a card.
pub fn short_id(id: &str) -> String {
    id.chars().take(8).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_typed_home_is_read_back_as_the_home_directory() {
        let home = Some("/home/u");
        assert_eq!(super::untilde("~", home), "/home/u");
        assert_eq!(super::untilde("~/src", home), "/home/u/src");
        assert_eq!(super::untilde("~bob/src", home), "~bob/src");
        assert_eq!(super::untilde("/srv", home), "/srv");
        assert_eq!(super::untilde("~/src", None), "~/src");
        assert_eq!(
            super::untilde(&super::tilde("/home/u/a", home), home),
            "/home/u/a"
        );
    }

    #[test]
    fn a_notice_cut_in_its_middle_keeps_its_key_hint() {
        let s = "no session id: opencode keeps them in its database, not read here: R starts a fresh session";
        let cut = super::fit_keep_end(s, 60);
        assert_eq!(super::width(&cut), 60);
        assert!(cut.ends_with("…R starts a fresh session"), "{cut}");
        assert!(cut.starts_with("no session id: opencode"), "{cut}");
        assert_eq!(super::fit_keep_end("short: r", 60), "short: r");
        // No room even for the hint: cut at the end as usual.
        assert_eq!(super::fit_keep_end(s, 10), super::fit(s, 10));
    }

    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(45_000), "45s");
        assert_eq!(duration(12 * 60_000 + 5), "12m");
        assert_eq!(duration(3 * 3_600_000 + 7 * 60_000), "3h 07m");
        assert_eq!(duration(2 * 86_400_000 + 4 * 3_600_000), "2d 4h");
    }

    #[test]
    fn paths_and_cuts() {
        assert_eq!(tilde("/home/u/src", Some("/home/u")), "~/src");
        assert_eq!(tilde("/home/user2", Some("/home/u")), "/home/user2");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit_left("/a/b/c/d", 5), "…/c/d");
        assert_eq!(fit("a\x1b[2Jb", 10), "a?[2Jb");
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_inside_words_too_long_for_a_line() {
        assert_eq!(
            wrap("go to the pane in tmux", 10),
            vec!["go to the", "pane in", "tmux"]
        );
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap("日本語の窓", 4), vec!["日本", "語の", "窓"]);
        assert_eq!(wrap("", 4), vec![""]);
        for l in wrap("filter by kind, window, session, directory or state", 12) {
            assert!(width(&l) <= 12, "{l}");
        }
    }

    #[test]
    fn cuts_are_measured_in_columns_not_characters() {
        // Each of these takes two columns.
        assert_eq!(width("日本語"), 6);
        assert_eq!(fit("日本語の窓", 6), "日本…");
        // A wide character is never halved: one column short, it is left out.
        assert_eq!(fit("日本語の窓", 5), "日本…");
        assert_eq!(width(&fit("日本語の窓", 5)), 5);
        assert_eq!(fit_left("/home/u/日本語", 6), "…本語");
        assert_eq!(width(&fit_left("/home/u/日本語", 6)), 5);
        assert_eq!(pad("日本", 6), "日本  ");
        assert_eq!(pad("日本語の窓", 4), "日… ");
        // An emoji with its variation selector takes two columns as a whole: cuts agree
        // with the width that is drawn.
        let gear = "\u{2699}\u{fe0f}";
        assert_eq!(width(gear), 2);
        let four = gear.repeat(4);
        for cols in 0..9 {
            assert!(width(&fit(&four, cols)) <= cols, "{cols}");
            assert!(width(&fit_left(&four, cols)) <= cols, "{cols}");
            assert_eq!(width(&pad(&four, cols)), cols);
        }
        // Combining marks take no column of their own.
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(fit("", 0), "");
        assert_eq!(fit("abc", 0), "");
    }

    #[test]
    fn a_count_of_one_takes_the_singular() {
        assert_eq!(counted(1, "agent", "agents"), "1 agent");
        assert_eq!(counted(0, "agent", "agents"), "0 agents");
        assert_eq!(counted(3, "attempt", "attempts"), "3 attempts");
    }
}
