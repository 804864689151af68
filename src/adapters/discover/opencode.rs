//! opencode: the line it leaves in the pane's output when it exits (`Continue  opencode -s
//! <id>`, opencode 1.18). Its sessions are in a SQLite database keyed by directory and time,
//! not by process: two opencodes in one directory cannot be told apart there, so it is not
//! read.

use super::{Query, Source};

const CONTINUE: &str = "opencode -s ";

pub(super) fn find(q: &Query) -> Option<(String, Source)> {
    let text = super::codex::strip_ansi(q.output.as_deref()?);
    text.match_indices(CONTINUE)
        .filter_map(|(i, _)| {
            let rest = &text[i + CONTINUE.len()..];
            let id: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            is_session_id(&id).then_some(id)
        })
        .last()
        .map(|id| (id, Source::OpencodeExitLine))
}

/// opencode's session ids: `ses_` and 26 letters and digits (`ses_dcaa7a1e3ffeI9M0SnbSNus0nn`).
pub(super) fn is_session_id(id: &str) -> bool {
    id.strip_prefix("ses_")
        .is_some_and(|rest| rest.len() == 26 && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_line_names_the_session_and_the_last_one_wins() {
        let out = include_str!("../../../tests/fixtures/discover/opencode/exit-after-ctrl-c.txt");
        let q = Query {
            agent: "opencode".into(),
            cwd: "/w".into(),
            output: Some(out.to_string()),
            ..Query::default()
        };
        assert_eq!(
            find(&q),
            Some((
                "ses_dcaa7a1e3ffeI9M0SnbSNus0nn".to_string(),
                Source::OpencodeExitLine
            ))
        );
        let twice =
            format!("{out}\n$ opencode\n  Continue  opencode -s ses_dcaa661daffe1AqINrgv4omsZ7\n");
        let q = Query {
            output: Some(twice),
            ..q
        };
        assert_eq!(find(&q).unwrap().0, "ses_dcaa661daffe1AqINrgv4omsZ7");
        for bad in [
            "ses_short",
            "ses_dcaa7a1e3ffeI9M0SnbSNus0nnX",
            "sess_dcaa7a1e3ffeI9M0SnbSNus0nn",
        ] {
            assert!(!is_session_id(bad), "{bad}");
        }
    }
}
