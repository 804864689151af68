//! Pure string work for tmux: reading its quoted `pane_start_command` back into an argv,
//! splitting a shell command line into words (for recognition only, never to run), and
//! escaping arguments so tmux takes them literally.

/// Splits tmux's `#{pane_start_command}` (tmux quotes each argv word: `"a b"`, `'x y'`,
/// `\~`, `tab\tx`, octal escapes) back into the argv it spawned.
///
/// A pane started from a single string (run by the shell) comes back as one word that
/// contains spaces; [`command_words`] handles that case.
pub fn split_tmux_argv(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => unescape(&mut chars, &mut cur),
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                unescape(&mut chars, &mut cur);
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// One vis(3)-style escape after a backslash: `\n`, `\t`, `\\`, `\"`, `\ooo`, or a literal.
fn unescape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, cur: &mut String) {
    let Some(c) = chars.next() else {
        cur.push('\\');
        return;
    };
    match c {
        'n' => cur.push('\n'),
        't' => cur.push('\t'),
        'r' => cur.push('\r'),
        'a' => cur.push('\x07'),
        'b' => cur.push('\x08'),
        'v' => cur.push('\x0b'),
        'f' => cur.push('\x0c'),
        's' => cur.push(' '),
        'e' | 'E' => cur.push('\x1b'),
        '0'..='7' => {
            let mut v = c.to_digit(8).unwrap_or(0);
            for _ in 0..2 {
                match chars.peek().and_then(|d| d.to_digit(8)) {
                    Some(d) => {
                        v = v * 8 + d;
                        chars.next();
                    }
                    None => break,
                }
            }
            cur.push(char::from_u32(v).unwrap_or('\u{fffd}'));
        }
        c => cur.push(c),
    }
}

/// The argv a pane was started with, as well as can be told: tmux's words, or, when tmux
/// ran a single string through the shell, that string split like a shell would (quotes,
/// backslashes; no expansion). Used to recognise agents and read session ids, never to run.
pub fn command_words(start_command: &str) -> Vec<String> {
    let words = split_tmux_argv(start_command);
    if words.len() == 1 && words[0].contains([' ', '\t', '\n']) {
        return split_shell_words(&words[0]);
    }
    words
}

/// A simple POSIX-ish word split: whitespace, single quotes, double quotes, backslash.
/// Stops at the first unquoted shell operator (`;`, `&`, `|`), which ends the first command.
pub fn split_shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            ';' | '&' | '|' => break,
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(n @ ('"' | '\\' | '$' | '`')) => cur.push(n),
                            Some(n) => {
                                cur.push('\\');
                                cur.push(n);
                            }
                            None => cur.push('\\'),
                        },
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// Makes one argv word safe to hand to tmux's command-line parser: a word that ends in
/// `;` would end the tmux command, so its last `;` is escaped as `\;`.
pub fn arg(word: &str) -> String {
    match word.strip_suffix(';') {
        Some(head) => format!("{head}\\;"),
        None => word.to_string(),
    }
}

/// Escapes `#` for arguments that tmux format-expands (`-c DIR`, `-n NAME`).
pub fn format_literal(s: &str) -> String {
    s.replace('#', "##")
}

/// Quotes one word for a POSIX shell (`sh`, `bash`, `zsh`): single quotes, `'` as `'\''`.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_back_tmux_quoting_recorded_from_tmux_3_3a() {
        // `new-window -- sleep 1000 'a b' "it's" 'x\;' '#{pane_id}' '' $'tab\tx' '~'`
        let s = r##"sleep 1000 "a b" "it's" "x;" "#{pane_id}" '' tab\tx \~"##;
        assert_eq!(
            split_tmux_argv(s),
            v(&[
                "sleep",
                "1000",
                "a b",
                "it's",
                "x;",
                "#{pane_id}",
                "",
                "tab\tx",
                "~"
            ])
        );
        assert_eq!(
            split_tmux_argv(r#"sh -c "kill -9 $$""#),
            v(&["sh", "-c", "kill -9 $$"])
        );
    }

    #[test]
    fn a_single_shell_string_is_split_into_words() {
        assert_eq!(
            command_words(r#""claude --resume abc""#),
            v(&["claude", "--resume", "abc"])
        );
        assert_eq!(
            command_words(r#""codex resume 'x y'; echo done""#),
            v(&["codex", "resume", "x y"])
        );
    }

    #[test]
    fn octal_and_unicode_survive() {
        assert_eq!(split_tmux_argv(r"a\033b"), v(&["a\x1bb"]));
        assert_eq!(split_tmux_argv("ünï 'x y'"), v(&["ünï", "x y"]));
    }

    #[test]
    fn trailing_semicolon_is_escaped_for_tmux() {
        assert_eq!(arg("x;"), "x\\;");
        assert_eq!(arg("a;b"), "a;b");
        assert_eq!(arg("a\\;"), "a\\\\;");
    }

    #[test]
    fn shell_quote_is_safe() {
        assert_eq!(shell_quote("abc-1"), "abc-1");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(shell_quote(""), "''");
    }
}
