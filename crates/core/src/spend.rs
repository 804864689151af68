//! What an agent spends, from its own files, read as they grow: tokens summed right and the
//! context it holds now. Pure: bytes in (from the offset last read), totals out.
//!
//! - claude (`projects/<slug>/<id>.jsonl`) writes each content block of one assistant
//!   message as its own line, with the same `message.id` (and `requestId`) and a full copy
//!   of `message.usage`: counted once per id (a later copy with larger counts adds only the
//!   difference). The context in use is input + cache read + cache creation of the newest
//!   assistant line that is not a sidechain (a subagent's), with its model.
//! - codex (its rollout) writes `token_count` events: `total_token_usage` is cumulative (the
//!   totals), `last_token_usage` is what the context holds now, `model_context_window` its
//!   window, `rate_limits` its windows' use.

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::time::Millis;

/// Tokens, as claude's `usage` counts them (codex's cached input is `cache_read`; its input
/// here is the uncached part).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_creation: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_creation
    }

    /// Field by field, what `self` has over `old` (a later copy of one message's usage).
    fn over(&self, old: &Tokens) -> Tokens {
        Tokens {
            input: self.input.saturating_sub(old.input),
            output: self.output.saturating_sub(old.output),
            cache_read: self.cache_read.saturating_sub(old.cache_read),
            cache_creation: self.cache_creation.saturating_sub(old.cache_creation),
        }
    }

    fn add(&mut self, d: &Tokens) {
        self.input += d.input;
        self.output += d.output;
        self.cache_read += d.cache_read;
        self.cache_creation += d.cache_creation;
    }

    fn max(&self, o: &Tokens) -> Tokens {
        Tokens {
            input: self.input.max(o.input),
            output: self.output.max(o.output),
            cache_read: self.cache_read.max(o.cache_read),
            cache_creation: self.cache_creation.max(o.cache_creation),
        }
    }
}

/// One of an account's rate-limit windows (codex's `primary`, `secondary`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub name: String,
    pub used_percent: f64,
    pub window_minutes: Option<u64>,
    pub resets_at: Option<Millis>,
}

/// A percentage as codex writes it is a plain number (never NaN), so windows compare as
/// equal or not.
impl Eq for Window {}

/// What an agent spent, as far as its files say.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spend {
    pub tokens: Tokens,
    /// Tokens the context holds now.
    pub context: Option<u64>,
    /// Its window, where the agent's record says (codex); else from the model (config).
    pub window: Option<u64>,
    pub model: Option<String>,
    pub limits: Vec<Window>,
}

impl Spend {
    /// The context's share of its window, where the window is known.
    pub fn percent(&self, window: Option<u64>) -> Option<u64> {
        let w = self.window.or(window).filter(|&w| w > 0)?;
        Some(self.context? * 100 / w)
    }
}

/// How many recent message ids a tally remembers: claude writes a message's lines one
/// after the other (a subagent's may come between), so a few hundred tell every copy from
/// a new message, and a transcript of a million messages costs no more memory than one of
/// a thousand.
const RECENT_IDS: usize = 256;

/// Reads one agent's file as it grows: [`Tally::feed`] takes what was appended. It can be
/// kept (serialized) and taken up again from where it stopped.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Tally {
    /// An unfinished last line, kept until its newline is written.
    partial: Vec<u8>,
    /// claude: the usage counted so far of the most recent messages, by id, and their order.
    seen: HashMap<String, Tokens>,
    order: VecDeque<String>,
    spend: Spend,
}

/// Which file a tally reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Claude,
    Codex,
}

impl Tally {
    pub fn spend(&self) -> &Spend {
        &self.spend
    }

    /// Takes in bytes appended to the file; only whole lines count (a line cut by the
    /// read waits for its end).
    pub fn feed(&mut self, kind: Kind, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(nl) = memchr::memchr(b'\n', rest) {
            let (line, tail) = rest.split_at(nl);
            rest = &tail[1..];
            if self.partial.is_empty() {
                self.line(kind, line);
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(line);
                self.line(kind, &whole);
            }
        }
        self.partial.extend_from_slice(rest);
    }

    fn line(&mut self, kind: Kind, line: &[u8]) {
        // Only lines that can carry usage are parsed: most of a transcript is text.
        match kind {
            Kind::Claude if memchr_usage(line, b"\"usage\"") => self.claude(line),
            Kind::Codex if memchr_usage(line, b"\"token_count\"") => self.codex(line),
            _ => {}
        }
    }

    fn claude(&mut self, line: &[u8]) {
        let Ok(r) = serde_json::from_slice::<ClaudeLine>(line) else {
            return;
        };
        let Some(m) = r.message else {
            return;
        };
        let Some(u) = m.usage else {
            return;
        };
        let t = Tokens {
            input: u.input_tokens,
            output: u.output_tokens,
            cache_read: u.cache_read_input_tokens,
            cache_creation: u.cache_creation_input_tokens,
        };
        match m.id.or(r.request_id) {
            Some(id) => {
                let old = self.seen.get(&id).copied();
                let counted = old.unwrap_or_default();
                self.spend.tokens.add(&t.over(&counted));
                if old.is_none() {
                    self.order.push_back(id.clone());
                    if self.order.len() > RECENT_IDS {
                        if let Some(gone) = self.order.pop_front() {
                            self.seen.remove(&gone);
                        }
                    }
                }
                self.seen.insert(id, t.max(&counted));
            }
            None => self.spend.tokens.add(&t),
        }
        // An error claude made up itself (`<synthetic>`) used no context.
        let synthetic = m.model.as_deref() == Some("<synthetic>");
        if r.type_.as_deref() == Some("assistant") && !r.is_sidechain && !synthetic {
            self.spend.context = Some(t.input + t.cache_read + t.cache_creation);
            if m.model.is_some() {
                self.spend.model = m.model;
            }
        }
    }

    fn codex(&mut self, line: &[u8]) {
        let Ok(r) = serde_json::from_slice::<CodexLine>(line) else {
            return;
        };
        let Some(p) = r
            .payload
            .filter(|p| p.type_.as_deref() == Some("token_count"))
        else {
            return;
        };
        if let Some(info) = p.info {
            if let Some(t) = info.total_token_usage {
                self.spend.tokens = Tokens {
                    input: t.input_tokens.saturating_sub(t.cached_input_tokens),
                    output: t.output_tokens,
                    cache_read: t.cached_input_tokens,
                    cache_creation: 0,
                };
            }
            if let Some(l) = info.last_token_usage {
                self.spend.context = Some(if l.total_tokens > 0 {
                    l.total_tokens
                } else {
                    l.input_tokens + l.output_tokens
                });
            }
            if let Some(w) = info.model_context_window {
                self.spend.window = Some(w);
            }
        }
        if let Some(rl) = p.rate_limits {
            let mut limits = Vec::new();
            for (name, w) in [("primary", rl.primary), ("secondary", rl.secondary)] {
                if let Some(w) = w {
                    limits.push(Window {
                        name: name.into(),
                        used_percent: w.used_percent,
                        window_minutes: w.window_minutes,
                        resets_at: w.resets_at.map(|s| s.saturating_mul(1000)),
                    });
                }
            }
            self.spend.limits = limits;
        }
    }
}

fn memchr_usage(line: &[u8], word: &[u8]) -> bool {
    memchr::memmem::find(line, word).is_some()
}

#[derive(Deserialize)]
struct ClaudeLine {
    #[serde(rename = "type")]
    type_: Option<String>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: bool,
    #[serde(rename = "requestId")]
    request_id: Option<String>,
    message: Option<ClaudeMessage>,
}

#[derive(Deserialize)]
struct ClaudeMessage {
    id: Option<String>,
    model: Option<String>,
    usage: Option<ClaudeUsage>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ClaudeUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_read_input_tokens: u64,
    cache_creation_input_tokens: u64,
}

#[derive(Deserialize)]
struct CodexLine {
    payload: Option<CodexPayload>,
}

#[derive(Deserialize)]
struct CodexPayload {
    #[serde(rename = "type")]
    type_: Option<String>,
    info: Option<CodexInfo>,
    rate_limits: Option<CodexLimits>,
}

#[derive(Deserialize)]
struct CodexInfo {
    total_token_usage: Option<CodexUsage>,
    last_token_usage: Option<CodexUsage>,
    model_context_window: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct CodexUsage {
    input_tokens: u64,
    cached_input_tokens: u64,
    output_tokens: u64,
    total_tokens: u64,
}

#[derive(Deserialize)]
struct CodexLimits {
    primary: Option<CodexWindow>,
    secondary: Option<CodexWindow>,
}

#[derive(Deserialize)]
struct CodexWindow {
    used_percent: f64,
    window_minutes: Option<u64>,
    resets_at: Option<u64>,
}

/// `1.2M`, `840k`, `950`: a token count in a few characters.
pub fn short(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{}k", n / 1_000),
        _ => {
            let tenths = n / 100_000;
            format!("{}.{}M", tenths / 10, tenths % 10)
        }
    }
}

#[cfg(test)]
mod tests;
