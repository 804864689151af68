//! Small pure text helpers for the screen: durations, paths, truncation.

use crate::core::msg::Millis;

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

/// `s` for a terminal: control characters (C0, DEL, C1: ESC, BEL, newline...) shown as `?`,
/// as the dashboard shows them, so that nothing from a pane (a directory, a window name, a
/// session id) can move the cursor, ring, or split a line of `status` or `events`.
pub fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Cuts `s` to at most `width` columns, marking the cut with `…`. Control characters are
/// shown as `?` so that nothing from a pane can move the cursor.
pub fn fit(s: &str, width: usize) -> String {
    let clean = printable(s);
    if clean.chars().count() <= width {
        return clean;
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = clean.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// Cuts from the left: `…/deep/path` keeps the end, which says more.
pub fn fit_left(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        return fit(s, width);
    }
    if width == 0 {
        return String::new();
    }
    let tail: String = s.chars().skip(n - (width - 1)).collect();
    fit(&format!("…{tail}"), width)
}

/// The first 8 characters of an id: enough to tell sessions apart on a card.
pub fn short_id(id: &str) -> String {
    id.chars().take(8).collect()
}

#[cfg(test)]
mod tests {
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
}
