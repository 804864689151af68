//! The config file: serde defaults, unknown keys refused, every error naming the file,
//! line, column and key. Loading reads one file. The settings themselves, as data, are
//! the core's ([`crate::core::settings`]).

use std::path::{Path, PathBuf};

use crate::core::agent::{self, IdShape, SESSION_ID};
use crate::core::pane::signal_number;

/// The documented example, embedded so a test proves it parses and matches the defaults.
pub const EXAMPLE: &str = include_str!("../config.example.toml");

pub use crate::core::settings::*;

/// A bad config file: where, which key, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `file:line:col:` where a place is known (editors jump there), the file alone
        // where it is not (it could not be read at all).
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Where the config file is: `--config` > `AGENTWATCH_CONFIG` > the XDG config dir.
/// `explicit` is true when the user named it, so a missing file is an error.
pub fn locate(cli: Option<&Path>) -> Option<(PathBuf, bool)> {
    if let Some(p) = cli {
        return Some((p.to_path_buf(), true));
    }
    if let Some(p) = std::env::var_os("AGENTWATCH_CONFIG").filter(|v| !v.is_empty()) {
        return Some((PathBuf::from(p), true));
    }
    directories::ProjectDirs::from("", "", "agentwatch")
        .map(|d| (d.config_dir().join("config.toml"), false))
}

/// Loads the config: defaults when the default file is missing; an error when a file the
/// user named is missing or any file is bad.
pub fn load(cli: Option<&Path>) -> Result<(Config, Option<PathBuf>), ConfigError> {
    let Some((path, explicit)) = locate(cli) else {
        return Ok((Config::default(), None));
    };
    match read_file(&path) {
        Ok(text) => parse(&text, &path).map(|c| (c, Some(path))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => {
            Ok((Config::default(), None))
        }
        Err(e) => Err(ConfigError {
            file: path,
            line: 0,
            column: 0,
            key: String::new(),
            message: format!(
                "cannot read the config file: {e} (fix the path, or drop --config/AGENTWATCH_CONFIG to use defaults)"
            ),
        }),
    }
}

/// A config file is text of a few KiB; past this it is not one (`-c /dev/zero`).
pub const MAX_BYTES: u64 = 1 << 20;

/// Reads a config file: a regular file (not a directory, a device or a pipe, which would
/// read forever or block), of at most [`MAX_BYTES`].
fn read_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "it is not a regular file (a directory, a device or a pipe)",
        ));
    }
    if meta.len() > MAX_BYTES {
        return Err(std::io::Error::other(format!(
            "it is {} bytes; a config file is at most {} KiB",
            meta.len(),
            MAX_BYTES >> 10
        )));
    }
    // Not blocking, should it have been swapped for a pipe since; and never more than the
    // limit, should it grow.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let mut text = String::new();
    f.take(MAX_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_BYTES {
        return Err(std::io::Error::other(format!(
            "it grew past {} KiB while read",
            MAX_BYTES >> 10
        )));
    }
    Ok(text)
}

/// Parses and validates config text; `file` is only used in error messages.
pub fn parse(text: &str, file: &Path) -> Result<Config, ConfigError> {
    let config: Config = toml::from_str(text).map_err(|e| {
        let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
        let key = e.span().map(|s| key_at(text, s.start)).unwrap_or_default();
        let message = e.message().trim().replace('\n', " ");
        ConfigError {
            file: file.to_path_buf(),
            line,
            column,
            key,
            message,
        }
    })?;
    validate(&config, text, file)?;
    Ok(config)
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// The dotted key of the line holding `offset`: the table header above it plus the key
/// before `=` on that line (or the table itself for a header line).
fn key_at(text: &str, offset: usize) -> String {
    let (line_no, _) = line_col(text, offset);
    let lines: Vec<&str> = text.lines().collect();
    let line = lines.get(line_no - 1).copied().unwrap_or("").trim();
    let table = lines[..line_no.saturating_sub(1).min(lines.len())]
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
        .unwrap_or_default();
    if line.starts_with('[') {
        return line
            .trim_matches(|c| c == '[' || c == ']')
            .trim()
            .to_string();
    }
    let key = line
        .split('=')
        .next()
        .unwrap_or("")
        .trim()
        .trim_matches('"');
    match (table.is_empty(), key.is_empty()) {
        (true, _) => key.to_string(),
        (false, true) => table,
        (false, false) => format!("{table}.{key}"),
    }
}

/// Where `table.key` is written in the text (for errors found after parsing).
fn find_key(text: &str, table: &str, key: &str) -> (usize, usize) {
    let mut current = String::new();
    let mut table_line = None;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.starts_with('[') {
            current = l.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            if current == table && table_line.is_none() {
                table_line = Some((i + 1, 1));
            }
            continue;
        }
        if current == table {
            let k = l.split('=').next().unwrap_or("").trim().trim_matches('"');
            if k == key && l.contains('=') {
                let col = raw.len() - raw.trim_start().len() + 1;
                return (i + 1, col);
            }
        }
    }
    table_line.unwrap_or((1, 1))
}

fn validate(c: &Config, text: &str, file: &Path) -> Result<(), ConfigError> {
    let err = |table: &str, key: &str, message: String| {
        let (line, column) = find_key(text, table, key);
        let full = if table.is_empty() {
            key.to_string()
        } else {
            format!("{table}.{key}")
        };
        Err(ConfigError {
            file: file.to_path_buf(),
            line,
            column,
            key: full,
            message,
        })
    };
    if c.tick_ms < 50 || c.tick_ms > 60_000 {
        return err(
            "",
            "tick_ms",
            format!(
                "must be between 50 and 60000 milliseconds, not {}",
                c.tick_ms
            ),
        );
    }
    if let Err((key, why)) = crate::ui::theme::Palette::of(&c.theme) {
        return err("theme.colors", &key, why);
    }
    if c.notify.on_death.first().is_some_and(|p| p.is_empty()) {
        return err(
            "notify",
            "on_death",
            "the program (first word) must not be empty".into(),
        );
    }
    if let Some(why) = c.notify.webhook_problem() {
        return err("notify", "webhook", why);
    }
    if c.notify.webhook_collapse_secs > MAX_COLLAPSE_SECS {
        return err(
            "notify",
            "webhook_collapse_secs",
            format!(
                "{} is too long: at most {MAX_COLLAPSE_SECS} seconds (0 sends each look's news at once)",
                c.notify.webhook_collapse_secs
            ),
        );
    }
    for (i, h) in c.hosts.iter().enumerate() {
        if let Some(why) = h.problem() {
            return err(
                "hosts",
                "name",
                format!("host {} ({:?}): {why}", i + 1, h.name),
            );
        }
        if c.hosts[..i].iter().any(|o| o.name == h.name) {
            return err(
                "hosts",
                "name",
                format!("two hosts are named {:?}: give each its own name", h.name),
            );
        }
    }
    if c.hosts.len() > MAX_HOSTS {
        return err(
            "hosts",
            "name",
            format!("{} hosts: at most {MAX_HOSTS}", c.hosts.len()),
        );
    }
    if c.crash_records.keep == 0 {
        return err("crash_records", "keep", "must be at least 1".into());
    }
    if c.crash_records.max_total_mb == 0 {
        return err("crash_records", "max_total_mb", "must be at least 1".into());
    }
    // Turned into bytes (<< 20): bounded far below where that overflows.
    if c.crash_records.max_total_mb > 1 << 20 {
        return err(
            "crash_records",
            "max_total_mb",
            format!(
                "{} is too large: at most {} (a TiB)",
                c.crash_records.max_total_mb,
                1u64 << 20
            ),
        );
    }
    let ar = &c.auto_resume;
    for (key, value, max) in [
        ("mass_deaths", u64::from(ar.mass_deaths), 10_000),
        ("canary_secs", ar.canary_secs, MAX_DELAY_SECS),
        ("burst", u64::from(ar.burst), 10_000),
        ("stagger_secs", ar.stagger_secs, MAX_DELAY_SECS),
    ] {
        if value == 0 {
            return err("auto_resume", key, "must be at least 1".into());
        }
        if value > max {
            return err(
                "auto_resume",
                key,
                format!("{value} is too large: at most {max}"),
            );
        }
    }
    validate_policy_parts(
        "auto_resume",
        Some(c.auto_resume.max_attempts),
        Some(&c.auto_resume.backoff_secs),
        Some(c.auto_resume.healthy_after_secs),
        Some(&c.auto_resume.never_signals),
    )
    .map_or(Ok(()), |(k, m)| err("auto_resume", k, m))?;
    let builtin = agent::builtin();
    for (name, a) in &c.agents {
        let table = format!("agents.{name}");
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
        {
            return err(
                &table,
                "",
                "agent names use letters, digits, - and _ only".into(),
            );
        }
        for (key, v) in [
            ("wrappers", &a.wrappers),
            ("match", &a.matches),
            ("start", &a.start),
            ("resume", &a.resume),
        ] {
            let Some(v) = v else { continue };
            if v.first().is_none_or(|w| w.is_empty()) {
                return err(
                    &table,
                    key,
                    format!("must not be empty: give the program and its arguments, e.g. {key} = [\"{name}\"]"),
                );
            }
            if (key == "match" || key == "wrappers")
                && v.iter().any(|m| m.is_empty() || m.contains('/'))
            {
                return err(
                    &table,
                    key,
                    format!("{key} entries are program names without a path, e.g. \"cc\""),
                );
            }
        }
        let def = resolve_agent(name, a, builtin.iter().find(|d| &d.name == name));
        if def.id != IdShape::None && !def.resume.is_empty() && !def.resume_needs_id() {
            return err(
                &table,
                "resume",
                format!(
                    "must contain {SESSION_ID} so the same session is resumed (or set id = \"none\" for an agent without session ids)"
                ),
            );
        }
        if def.id == IdShape::None && (def.resume_needs_id() || def.start_takes_id()) {
            return err(
                &table,
                "id",
                format!("is \"none\" but an argv uses {SESSION_ID}"),
            );
        }
        if let Some(o) = &a.auto_resume {
            validate_policy_parts(
                "",
                o.max_attempts,
                o.backoff_secs.as_ref(),
                o.healthy_after_secs,
                o.never_signals.as_ref(),
            )
            .map_or(Ok(()), |(k, m)| err(&format!("{table}.auto_resume"), k, m))?;
        }
    }
    Ok(())
}

/// The longest delay or duration the config takes, in seconds (a week): far beyond any
/// sensible backoff, and far from overflowing when turned into milliseconds.
const MAX_DELAY_SECS: u64 = 7 * 24 * 3600;

fn validate_policy_parts(
    _table: &str,
    max_attempts: Option<u32>,
    backoff: Option<&Vec<u64>>,
    healthy: Option<u64>,
    signals: Option<&Vec<String>>,
) -> Option<(&'static str, String)> {
    if max_attempts == Some(0) {
        return Some((
            "max_attempts",
            "must be at least 1 (use enabled = false to turn auto-resume off)".into(),
        ));
    }
    if let Some(b) = backoff {
        if b.is_empty() {
            return Some((
                "backoff_secs",
                "must list at least one delay, e.g. [2, 10, 30]".into(),
            ));
        }
        if b.contains(&0) {
            return Some(("backoff_secs", "delays must be at least 1 second".into()));
        }
        if let Some(big) = b.iter().find(|&&d| d > MAX_DELAY_SECS) {
            return Some((
                "backoff_secs",
                format!("{big} s is too long: at most {MAX_DELAY_SECS} (a week) per delay"),
            ));
        }
    }
    if healthy == Some(0) {
        return Some(("healthy_after_secs", "must be at least 1 second".into()));
    }
    if let Some(h) = healthy.filter(|&h| h > MAX_DELAY_SECS) {
        return Some((
            "healthy_after_secs",
            format!("{h} s is too long: at most {MAX_DELAY_SECS} (a week)"),
        ));
    }
    if let Some(s) = signals {
        if let Some(bad) = s.iter().find(|s| signal_number(s).is_none()) {
            return Some((
                "never_signals",
                format!("unknown signal {bad:?}: use names like \"TERM\" or numbers like 15"),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Config, ConfigError> {
        parse(s, Path::new("cfg.toml"))
    }

    #[test]
    fn the_example_parses_and_equals_the_defaults() {
        assert_eq!(parse_str(EXAMPLE), Ok(Config::default()));
    }

    #[test]
    fn hosts_are_checked_by_name_and_destination() {
        let ok = parse_str(
            "[[hosts]]\nname = \"box\"\nssh = \"me@box\"\nsocket_name = \"work\"\n\n[[hosts]]\nname = \"vm\"\nssh = \"ssh://vm:2222\"\n",
        )
        .unwrap();
        assert_eq!(ok.hosts.len(), 2);
        assert_eq!(ok.hosts[0].tmux, "tmux");
        let err = |text: &str| parse_str(text).unwrap_err().to_string();
        let dup =
            err("[[hosts]]\nname = \"a\"\nssh = \"x\"\n[[hosts]]\nname = \"a\"\nssh = \"y\"\n");
        assert!(dup.contains("two hosts are named \"a\""), "{dup}");
        let option = err("[[hosts]]\nname = \"a\"\nssh = \"-oProxyCommand=x\"\n");
        assert!(option.contains("is not an ssh destination"), "{option}");
        assert!(option.contains("hosts.name"), "{option}");
        let both = err(
            "[[hosts]]\nname = \"a\"\nssh = \"x\"\nsocket_name = \"n\"\nsocket_path = \"/p\"\n",
        );
        assert!(both.contains("not both"), "{both}");
        let spaced = err("[[hosts]]\nname = \"a b\"\nssh = \"x\"\n");
        assert!(spaced.contains("without spaces"), "{spaced}");
        let quote = err("[[hosts]]\nname = \"a\"\nssh = \"x\"\nsocket_path = \"/tmp/it's\"\n");
        assert!(
            quote.contains("cannot pass safely through the remote shell"),
            "{quote}"
        );
        let unknown = err("[[hosts]]\nname = \"a\"\nssh = \"x\"\nport = 22\n");
        assert!(unknown.contains("unknown field"), "{unknown}");
    }

    #[test]
    fn an_empty_file_is_the_defaults() {
        assert_eq!(parse_str(""), Ok(Config::default()));
    }

    #[test]
    fn unknown_key_names_file_line_column_and_key() {
        let e = parse_str("tick_ms = 500\n\n[auto_resume]\nmax_tries = 3\n").unwrap_err();
        assert_eq!((e.line, e.column), (4, 1));
        assert_eq!(e.key, "auto_resume.max_tries");
        assert!(
            e.to_string()
                .starts_with("cfg.toml:4:1: auto_resume.max_tries: unknown field `max_tries`"),
            "{e}"
        );
    }

    #[test]
    fn wrong_type_names_the_key() {
        let e = parse_str("retain_dead = \"yes\"\n").unwrap_err();
        assert_eq!(e.key, "retain_dead");
        assert_eq!(e.line, 1);
    }

    #[test]
    fn a_new_kind_and_an_override() {
        let c = parse_str(
            "[agents.goose]\nmatch = [\"goose\"]\nstart = [\"goose\", \"session\"]\nresume = [\"goose\", \"session\", \"--resume\", \"--id\", \"{session_id}\"]\n\n[agents.claude]\nresume = [\"claude\", \"-r\", \"{session_id}\"]\n",
        )
        .unwrap();
        let a = c.agents();
        assert_eq!(a.get("goose").map(|d| d.id), Some(IdShape::Token));
        let claude = a.get("claude").unwrap();
        assert_eq!(claude.resume, vec!["claude", "-r", "{session_id}"]);
        assert_eq!(claude.id, IdShape::Uuid);
    }

    #[test]
    fn a_webhook_that_is_no_http_url_is_refused_naming_the_key_and_the_fix() {
        let ok =
            parse_str("[notify]\nwebhook = \"https://ntfy.sh/t\"\nwebhook_collapse_secs = 0\n")
                .unwrap();
        assert_eq!(ok.notify.webhook, "https://ntfy.sh/t");
        assert_eq!(ok.notify.webhook_collapse_secs, 0);
        let e = parse_str("tick_ms = 500\n\n[notify]\nbell = false\nwebhook = \"ntfy.sh/t\"\n")
            .unwrap_err();
        assert_eq!((e.key.as_str(), e.line, e.column), ("notify.webhook", 5, 1));
        assert!(e.message.contains("e.g. webhook = \"https://"), "{e}");
        let e = parse_str("[notify]\nwebhook = \"https://x/a b\"\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("notify.webhook: a URL holds no spaces"),
            "{e}"
        );
        let e = parse_str("[notify]\nwebhook_collapse_secs = 301\n").unwrap_err();
        assert_eq!(e.key, "notify.webhook_collapse_secs");
        assert!(e.message.contains("at most 300"), "{e}");
    }

    #[test]
    fn a_resume_without_the_id_placeholder_is_refused_for_kinds_with_ids() {
        let e = parse_str("[agents.claude]\nresume = [\"claude\", \"--continue\"]\n").unwrap_err();
        assert_eq!(e.key, "agents.claude.resume");
        assert_eq!(e.line, 2);
    }
}
