//! Read-only lookups of an agent's session id, for a dead agent pane with no recorded id.
//! They read files and decide nothing else. Conservative by design: a wrong id is far worse
//! than none, so whenever two candidates fit the answer is `None`, never a guess. Work is
//! bounded (directory entries per lookup, bytes per file) and no file content can panic.
//! No clock is read here: time windows come from the query.

pub(crate) mod claude;
mod codex;
mod gemini;
mod opencode;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde_json::Value;

use crate::core::agent::is_uuid;
use crate::core::time::Millis;

/// At most this many directory entries are read per lookup; past it the lookup gives up.
const MAX_ENTRIES: usize = 2000;
/// At most this many bytes are read from the start of any file.
const MAX_READ: u64 = 64 * 1024;
/// A candidate file's mtime may precede the process start by `SLACK_BEFORE` and follow its
/// death by `SLACK_AFTER`.
const SLACK_BEFORE: Millis = 2_000;
const SLACK_AFTER: Millis = 5_000;

/// Where a discovered id came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    ClaudeRegistry,
    ClaudeTranscript,
    CodexRollout,
    CodexExitLine,
    GeminiChat,
    OpencodeExitLine,
}

impl Source {
    /// For the card: "session id found in <describe>".
    pub fn describe(&self) -> &'static str {
        match self {
            Source::ClaudeRegistry => "claude's session registry",
            Source::ClaudeTranscript => "the only claude transcript written in this pane's run",
            Source::CodexRollout => "the only codex rollout file written in this pane's run",
            Source::CodexExitLine => "codex's exit line",
            Source::GeminiChat => "the only gemini chat written in this pane's run",
            Source::OpencodeExitLine => "opencode's exit line",
        }
    }
}

/// What is known about the pane whose agent's session id is wanted.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Agent kind name: "claude", "codex", "gemini" or "opencode"; any other finds nothing.
    pub agent: String,
    /// The pane's working directory (where the agent ran).
    pub cwd: String,
    /// Pids of the agent process / pane process, if known.
    pub pids: Vec<u32>,
    /// When the pane's process started.
    pub started_at: Option<Millis>,
    /// When it died (`None` while alive: the window is then open-ended).
    pub died_at: Option<Millis>,
    /// The dead pane's retained output (may contain ANSI escapes).
    pub output: Option<String>,
    /// Default: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    pub claude_dir: Option<PathBuf>,
    /// Default: `$CODEX_HOME`, else `~/.codex`.
    pub codex_dir: Option<PathBuf>,
    /// Default: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
    pub gemini_dir: Option<PathBuf>,
}

/// The agent's session id and where it was found, or `None` when not exactly one fits.
pub fn discover(q: &Query) -> Option<(String, Source)> {
    if q.cwd.is_empty() {
        return None;
    }
    let mut budget = Allowance(MAX_ENTRIES);
    let found = match q.agent.as_str() {
        "claude" => {
            let dir = dir_or(&q.claude_dir, "CLAUDE_CONFIG_DIR", ".claude")?;
            claude::find(q, &dir, &mut budget)
        }
        "codex" => {
            let dir = dir_or(&q.codex_dir, "CODEX_HOME", ".codex");
            codex::find(q, dir.as_deref(), &mut budget)
        }
        "gemini" => {
            let home = std::env::var_os("GEMINI_CLI_HOME").filter(|v| !v.is_empty());
            let dir = q
                .gemini_dir
                .clone()
                .or_else(|| home.map(|h| PathBuf::from(h).join(".gemini")))
                .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().join(".gemini")))?;
            gemini::find(q, &dir, &mut budget)
        }
        "opencode" => return opencode::find(q),
        _ => None,
    };
    found.filter(|(id, _)| is_uuid(id))
}

/// Where the agents keep their sessions; `None`: where their environment says
/// (`$CLAUDE_CONFIG_DIR`, `$CODEX_HOME`, `$GEMINI_CLI_HOME/.gemini`), else in the home folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dirs {
    pub claude: Option<PathBuf>,
    pub codex: Option<PathBuf>,
    pub gemini: Option<PathBuf>,
}

/// What the agent keeps of session `id` where resuming it in `cwd` looks: `None` when it
/// cannot be told (an agent whose records are not known here, a store that does not exist
/// or cannot be read).
pub fn recorded_in(
    agent: &str,
    cwd: &str,
    id: &str,
    dirs: &Dirs,
) -> Option<crate::core::relaunch::Record> {
    if !is_uuid(id) {
        return None;
    }
    match agent {
        "claude" => {
            let dir = dir_or(&dirs.claude, "CLAUDE_CONFIG_DIR", ".claude")?;
            claude::recorded(&dir, cwd, id)
        }
        _ => None,
    }
}

/// A live process, other than those in `not`, that holds session `id` open: claude's
/// registry (`sessions/<pid>.json` of a running claude naming the id), codex's background
/// server (the `flock` on `thread-writer-locks/<id>.lock`, seen in `/proc/locks`).
pub fn live_elsewhere_in(agent: &str, id: &str, not: &[u32], dirs: &Dirs) -> Option<u32> {
    if !is_uuid(id) {
        return None;
    }
    match agent {
        "claude" => {
            let dir = dir_or(&dirs.claude, "CLAUDE_CONFIG_DIR", ".claude")?;
            claude::live(&dir, id, not, &mut Allowance(MAX_ENTRIES))
        }
        "codex" => {
            let dir = dir_or(&dirs.codex, "CODEX_HOME", ".codex")?;
            let locks = std::fs::read_to_string("/proc/locks").ok()?;
            codex::holder(&dir, id, &locks).filter(|pid| !not.contains(pid))
        }
        _ => None,
    }
}

/// `given`, else `$var`, else `~/<fallback>`.
impl Dirs {
    /// claude's folder: as given, else `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    pub fn claude_dir(&self) -> Option<PathBuf> {
        dir_or(&self.claude, "CLAUDE_CONFIG_DIR", ".claude")
    }

    /// codex's folder: as given, else `$CODEX_HOME`, else `~/.codex`.
    pub fn codex_dir(&self) -> Option<PathBuf> {
        dir_or(&self.codex, "CODEX_HOME", ".codex")
    }
}

fn dir_or(given: &Option<PathBuf>, var: &str, fallback: &str) -> Option<PathBuf> {
    let home = || directories::BaseDirs::new().map(|b| b.home_dir().join(fallback));
    let env = std::env::var_os(var).filter(|v| !v.is_empty());
    given.clone().or(env.map(PathBuf::from)).or_else(home)
}

/// The mtime window of a pane's run (inclusive, open ends at 0 / MAX).
#[derive(Debug, Clone, Copy)]
struct Window {
    lo: Millis,
    hi: Millis,
}

impl Window {
    /// `None` when neither end of the run is known.
    fn of(q: &Query) -> Option<Window> {
        let lo = q.started_at.map(|t| t.saturating_sub(SLACK_BEFORE));
        let lo = lo.or(q.died_at.map(|_| 0))?; // open below only when the death is known
        let hi = q.died_at.map(|t| t.saturating_add(SLACK_AFTER));
        let hi = hi.unwrap_or(Millis::MAX);
        Some(Window { lo, hi })
    }

    fn holds(&self, path: &Path) -> bool {
        mtime(path).is_some_and(|t| (self.lo..=self.hi).contains(&t))
    }
}

fn mtime(path: &Path) -> Option<Millis> {
    let since = std::fs::metadata(path).ok()?.modified().ok()?;
    Millis::try_from(since.duration_since(UNIX_EPOCH).ok()?.as_millis()).ok()
}

/// Directory entries left to read in this lookup.
struct Allowance(usize);

impl Allowance {
    /// The entries of `dir` (none if it is missing or unreadable); `None` once the budget is
    /// spent, because a partial listing cannot prove a candidate is the only one.
    fn list(&mut self, dir: &Path) -> Option<Vec<PathBuf>> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Some(Vec::new());
        };
        let mut out = Vec::new();
        for entry in entries {
            self.0 = self.0.checked_sub(1)?;
            out.extend(entry.ok().map(|e| e.path()));
        }
        Some(out)
    }
}

/// The single element, or `None` for zero or several.
fn only(mut found: Vec<String>) -> Option<String> {
    found.sort_unstable();
    found.dedup();
    (found.len() == 1).then(|| found.pop()).flatten()
}

/// The first bytes of a regular file (never a FIFO or device: opening one could block).
struct Head {
    bytes: Vec<u8>,
    truncated: bool,
}

fn read_head(path: &Path) -> Option<Head> {
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    let mut file = File::open(path).ok()?.take(MAX_READ);
    file.read_to_end(&mut bytes).ok()?;
    let truncated = bytes.len() as u64 >= MAX_READ;
    Some(Head { bytes, truncated })
}

/// One line of a JSON-lines head: parsed, or cut off by the read limit.
enum Line<'a> {
    Json(Value),
    Cut(&'a str),
}

impl Line<'_> {
    /// The string at `path`. A cut-off line is scanned for the first `"<last key>":"…"`
    /// instead (the agents write the wanted keys before any bulky field).
    fn field(&self, path: &[&str]) -> Option<String> {
        match self {
            Line::Json(v) => path
                .iter()
                .try_fold(v, |v, k| v.get(k))?
                .as_str()
                .map(str::to_owned),
            Line::Cut(text) => scan_str(text, path.last()?),
        }
    }
}

/// Of the first `max` lines of `head`: those that parse as JSON, and a cut-off last one.
fn lines(head: &Head, max: usize) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut rest: &[u8] = &head.bytes;
    for _ in 0..max {
        if rest.is_empty() {
            break;
        }
        let (line, next, cut) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], &rest[i + 1..], false),
            None => (rest, &rest[rest.len()..], head.truncated),
        };
        if cut {
            let text = std::str::from_utf8(line)
                .or_else(|e| std::str::from_utf8(&line[..e.valid_up_to()]));
            out.push(Line::Cut(text.unwrap_or_default()));
        } else if let Ok(v) = serde_json::from_slice(line) {
            out.push(Line::Json(v));
        }
        rest = next;
    }
    out
}

/// The JSON string value of the first real (unescaped) key `"key"` in `text`.
fn scan_str(text: &str, key: &str) -> Option<String> {
    let pat = format!("\"{key}\"");
    let value = text.match_indices(&pat).find_map(|(i, _)| {
        let after = text[i + pat.len()..].trim_start().strip_prefix(':');
        after.filter(|_| !text[..i].ends_with('\\'))
    })?;
    let mut strings = serde_json::Deserializer::from_str(value.trim_start()).into_iter::<String>();
    strings.next()?.ok()
}

#[cfg(test)]
fn put(path: &Path, content: &[u8], mtime: Millis) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
    let t = UNIX_EPOCH + std::time::Duration::from_millis(mtime);
    let file = File::options().write(true).open(path).unwrap();
    file.set_modified(t).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_agent_or_empty_cwd_finds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut q = Query {
            agent: "aider".into(),
            cwd: "/p".into(),
            codex_dir: Some(dir.path().into()),
            ..Query::default()
        };
        assert_eq!(discover(&q), None);
        q.agent = "claude".into();
        q.cwd.clear();
        assert_eq!(discover(&q), None);
    }

    #[test]
    fn scan_str_reads_a_cut_line() {
        let t = r#"{"a":"x\"cwd\":\"no\"","cwd" : "/p \"q\"","big":"aaaa"#;
        assert_eq!(scan_str(t, "cwd").as_deref(), Some("/p \"q\""));
        assert_eq!(scan_str(r#"{"cwd":"unterminated"#, "cwd"), None);
        assert_eq!(scan_str(r#"{"cwd":7}"#, "cwd"), None);
        assert_eq!(
            scan_str(r#"{"k":"cwd","cwd":"/p"}"#, "cwd").as_deref(),
            Some("/p")
        );
    }

    #[test]
    fn lines_parse_skip_garbage_and_keep_the_cut_tail() {
        let mut bytes = b"{\"a\":\"1\"}\n\xff\xfe not json\n{\"a\":\"2\"}\n".to_vec();
        bytes.extend(b"{\"cwd\":\"/p\",\"x\":\"\xe2\x82");
        let truncated = true;
        let head = Head { bytes, truncated };
        let got: Vec<_> = lines(&head, 50)
            .iter()
            .map(|l| l.field(&["a"]).or(l.field(&["cwd"])))
            .collect();
        assert_eq!(got, [Some("1".into()), Some("2".into()), Some("/p".into())]);
        assert_eq!(lines(&head, 1).len(), 1);
    }

    #[test]
    fn budget_gives_up_rather_than_list_partially() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..5 {
            std::fs::write(dir.path().join(i.to_string()), "").unwrap();
        }
        assert_eq!(Allowance(5).list(dir.path()).map(|v| v.len()), Some(5));
        assert!(Allowance(4).list(dir.path()).is_none());
        let missing = dir.path().join("missing");
        assert_eq!(Allowance(0).list(&missing).map(|v| v.len()), Some(0));
    }

    #[test]
    fn only_refuses_ambiguity() {
        assert_eq!(only(vec![]), None);
        assert_eq!(only(vec!["a".into()]).as_deref(), Some("a"));
        assert_eq!(only(vec!["a".into(), "b".into()]), None);
        assert_eq!(only(vec!["a".into(), "b".into(), "a".into()]), None);
        assert_eq!(only(vec!["a".into(), "a".into()]).as_deref(), Some("a"));
    }
}
