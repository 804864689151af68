//! `agentwatch hooks install|uninstall claude|codex`: agentwatch's own hooks in the agent's
//! hook config, on request only; and `agentwatch hook AGENT EVENT`, the command those hooks
//! run, which writes what the agent does into its pane's options (`@pane_status`,
//! `@pane_wait_reason`, the words tmux-agent-sidebar and others use), where agentwatch reads
//! it.
//!
//! Install adds one handler per event and shows the change as a diff; uninstall removes
//! exactly the handlers whose command is agentwatch's `hook` command, and the groups, event
//! lists and `hooks` table that are left empty by that, nothing else.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::core::words::shell_quote;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookAgent {
    Claude,
    Codex,
}

impl HookAgent {
    pub fn name(self) -> &'static str {
        match self {
            HookAgent::Claude => "claude",
            HookAgent::Codex => "codex",
        }
    }

    /// The events hooked: each one changes what the agent does.
    pub fn events(self) -> &'static [&'static str] {
        match self {
            HookAgent::Claude => &[
                "SessionStart",
                "UserPromptSubmit",
                "PostToolUse",
                "PermissionRequest",
                "Notification",
                "Stop",
                "StopFailure",
                "SessionEnd",
            ],
            // codex 0.171 has no Notification and runs no SessionEnd on /quit.
            HookAgent::Codex => &[
                "SessionStart",
                "UserPromptSubmit",
                "PostToolUse",
                "PermissionRequest",
                "Stop",
                "Interrupt",
            ],
        }
    }

    /// The agent's hook config: claude's `settings.json` (`$CLAUDE_CONFIG_DIR`, else
    /// `~/.claude`), codex's `hooks.json` (`$CODEX_HOME`, else `~/.codex`).
    pub fn config_path(self) -> Option<PathBuf> {
        let (var, dir, file) = match self {
            HookAgent::Claude => ("CLAUDE_CONFIG_DIR", ".claude", "settings.json"),
            HookAgent::Codex => ("CODEX_HOME", ".codex", "hooks.json"),
        };
        let base = std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().join(dir)))?;
        Some(base.join(file))
    }
}

/// What an event says the agent does: `Some((status, reason))` to set (an empty reason is
/// unset), `Some(("", ""))` to unset both, `None` to leave them.
pub fn event_status(event: &str, payload: &Value) -> Option<(String, String)> {
    let field = |k: &str| payload.get(k).and_then(Value::as_str).unwrap_or_default();
    let set = |s: &str, r: &str| Some((s.to_string(), r.to_string()));
    match event {
        "SessionStart" | "Stop" | "Interrupt" => set("idle", ""),
        "UserPromptSubmit" | "PostToolUse" => set("running", ""),
        "PermissionRequest" => {
            let tool = field("tool_name");
            if tool.is_empty() {
                set("waiting", "permission")
            } else {
                set("waiting", &format!("permission to use {tool}"))
            }
        }
        "Notification" => match field("notification_type") {
            "permission_prompt" | "elicitation_dialog" => {
                let m = field("message");
                set("waiting", if m.is_empty() { "input needed" } else { m })
            }
            "idle_prompt" => set("idle", ""),
            _ => None,
        },
        "StopFailure" => {
            let e = ["error", "error_type", "error_message"]
                .iter()
                .map(|k| field(k))
                .find(|v| !v.is_empty())
                .unwrap_or("unknown error");
            set("error", &format!("the turn failed: {e}"))
        }
        "SessionEnd" => set("", ""),
        _ => None,
    }
}

/// The command a hook runs: agentwatch's own path, quoted for the shell the agent runs
/// hooks with.
pub fn hook_command(exe: &Path, agent: HookAgent, event: &str) -> String {
    format!(
        "{} hook {} {event}",
        shell_quote(&exe.to_string_lossy()),
        agent.name()
    )
}

/// Whether `command` is agentwatch's hook command for `agent` (any path to agentwatch).
fn is_ours(command: &str, agent: HookAgent) -> bool {
    let words = crate::core::words::command_words(command);
    matches!(
        words.as_slice(),
        [exe, hook, a, _event]
            if hook == "hook"
                && a == agent.name()
                && Path::new(exe)
                    .file_name()
                    .is_some_and(|f| f.to_string_lossy().starts_with("agentwatch"))
    )
}

/// Why the agent's hook config was not changed. Each names the file and the fix.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("{}: {shape}", path.display())]
    Shape { path: PathBuf, shape: Shape },
    #[error("{}: not valid JSON ({error}); fix it or move it aside, then run this again", path.display())]
    NotJson {
        path: PathBuf,
        error: serde_json::Error,
    },
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// What in the agent's config is not as its format has it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Shape {
    #[error("the file is not a JSON object")]
    NotObject,
    #[error("\"hooks\" is not an object")]
    HooksNotObject,
    #[error("\"hooks\".\"{0}\" is not a list")]
    EventNotList(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> HookError + '_ {
    move |error| HookError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// The config with agentwatch's handlers added (none twice).
pub fn installed(config: &Value, exe: &Path, agent: HookAgent) -> Result<Value, Shape> {
    let mut config = config.clone();
    let root = config.as_object_mut().ok_or(Shape::NotObject)?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or(Shape::HooksNotObject)?;
    for event in agent.events() {
        let list = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| Shape::EventNotList(event.to_string()))?;
        let command = hook_command(exe, agent, event);
        // Installed before from another path (agentwatch moved): the command is updated in
        // place.
        for group in list.iter_mut() {
            if let Some(hs) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                for h in hs.iter_mut() {
                    let stale = h.get("command").and_then(Value::as_str).is_some_and(|c| {
                        c != command && is_ours(c, agent) && c.ends_with(&format!(" {event}"))
                    });
                    if stale {
                        h["command"] = Value::from(command.clone());
                    }
                }
            }
        }
        let present = list.iter().any(|group| {
            handlers(group).any(|h| h.get("command").and_then(Value::as_str) == Some(&command))
        });
        if !present {
            list.push(serde_json::json!({
                "hooks": [{"type": "command", "command": command}]
            }));
        }
    }
    Ok(config)
}

/// Where agentwatch's hooks for `agent` stand in `config`: the programs their commands run
/// (none: not installed).
pub fn installed_programs(config: &Value, agent: HookAgent) -> Vec<String> {
    let mut programs: Vec<String> = config
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|h| h.values())
        .filter_map(Value::as_array)
        .flatten()
        .flat_map(handlers)
        .filter_map(|h| h.get("command").and_then(Value::as_str))
        .filter(|c| is_ours(c, agent))
        .filter_map(|c| crate::core::words::command_words(c).into_iter().next())
        .collect();
    programs.sort();
    programs.dedup();
    programs
}

/// agentwatch's hooks for an agent, as `doctor` finds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookCheck {
    /// Installed, in this file.
    Installed(PathBuf),
    /// Installed, but they run programs that are not there (agentwatch moved).
    Dangling { path: PathBuf, gone: Vec<String> },
}

impl std::fmt::Display for HookCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookCheck::Installed(path) => write!(f, "installed in {}", path.display()),
            HookCheck::Dangling { path, gone } => write!(
                f,
                "installed in {}, but they run {}, which is not there",
                path.display(),
                gone.join(", ")
            ),
        }
    }
}

/// `doctor`'s word on agentwatch's hooks for `agent`: `None` when not installed.
pub fn check(agent: HookAgent) -> Option<HookCheck> {
    let path = agent.config_path()?;
    let (_, config) = read_config(&path).ok()?;
    let programs = installed_programs(&config, agent);
    if programs.is_empty() {
        return None;
    }
    let gone: Vec<String> = programs
        .into_iter()
        .filter(|p| !Path::new(p.as_str()).is_file())
        .collect();
    Some(if gone.is_empty() {
        HookCheck::Installed(path)
    } else {
        HookCheck::Dangling { path, gone }
    })
}

/// The config with every handler of agentwatch's removed, and what that left empty.
pub fn uninstalled(config: &Value, agent: HookAgent) -> Value {
    let mut config = config.clone();
    let Some(root) = config.as_object_mut() else {
        return config;
    };
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return config;
    };
    let mut emptied = Vec::new();
    for (event, list) in hooks.iter_mut() {
        let Some(list) = list.as_array_mut() else {
            continue;
        };
        let before = list.len();
        let mut touched = false;
        for group in list.iter_mut() {
            if let Some(hs) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let n = hs.len();
                hs.retain(|h| {
                    !h.get("command")
                        .and_then(Value::as_str)
                        .is_some_and(|c| is_ours(c, agent))
                });
                touched |= hs.len() != n;
            }
        }
        if touched {
            list.retain(|g| {
                g.get("hooks")
                    .and_then(Value::as_array)
                    .is_none_or(|hs| !hs.is_empty())
            });
            if list.is_empty() && before > 0 {
                emptied.push(event.clone());
            }
        }
    }
    for e in emptied {
        hooks.remove(&e);
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
    config
}

fn handlers(group: &Value) -> impl Iterator<Item = &Value> {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The text of a config as agentwatch writes it (as claude writes its own: two-space JSON).
fn render(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

/// A line diff: `-`/`+` lines with two lines of context around each change.
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // Longest common subsequence, from the end.
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    let near = |k: usize| {
        ops[k.saturating_sub(2)..(k + 3).min(ops.len())]
            .iter()
            .any(|(c, _)| *c != ' ')
    };
    let mut out = String::new();
    let mut skipped = false;
    for (k, (c, line)) in ops.iter().enumerate() {
        if *c != ' ' || near(k) {
            if skipped {
                out.push_str("  …\n");
                skipped = false;
            }
            out.push_str(&format!("{c} {line}\n"));
        } else {
            skipped = true;
        }
    }
    out
}

/// Reads the agent's config: absent is empty; unreadable or not JSON is an error that
/// names the file (and nothing is written).
fn read_config(path: &Path) -> Result<(String, Value), HookError> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok((text, Value::Object(Map::new()))),
        Ok(text) => serde_json::from_str(&text)
            .map(|v| (text, v))
            .map_err(|error| HookError::NotJson {
                path: path.to_path_buf(),
                error,
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok((String::new(), Value::Object(Map::new())))
        }
        Err(e) => Err(io(path)(e)),
    }
}

/// Writes `text` to `path` through a temporary file renamed over it (the file's mode kept).
fn write_config(path: &Path, text: &str) -> Result<(), HookError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let tmp = dir.join(format!(
        ".{}.agentwatch-{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, text).map_err(io(&tmp))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(path)(e)
    })
}

/// `hooks install|uninstall`: changes the agent's hook config (unless `dry_run`) and returns
/// what to print: the diff and what happens next.
pub fn change(
    agent: HookAgent,
    install: bool,
    dry_run: bool,
    path: &Path,
    exe: &Path,
) -> Result<String, HookError> {
    let (old_text, old) = read_config(path)?;
    let new = if install {
        installed(&old, exe, agent).map_err(|shape| HookError::Shape {
            path: path.to_path_buf(),
            shape,
        })?
    } else {
        uninstalled(&old, agent)
    };
    let verb = if install { "install" } else { "uninstall" };
    if new == old {
        return Ok(format!(
            "{}: nothing to {verb}: agentwatch's {} hooks are {}there.\n",
            path.display(),
            agent.name(),
            if install { "already " } else { "not " }
        ));
    }
    let new_text = render(&new);
    let old_shown = if old_text.is_empty() {
        String::new()
    } else {
        render(&old)
    };
    let mut out = format!("--- {}\n+++ {}\n", path.display(), path.display());
    out.push_str(&diff(&old_shown, &new_text));
    if dry_run {
        out.push_str("(dry run: nothing written)\n");
        return Ok(out);
    }
    // Nothing left but agentwatch's own hooks had been there: the file goes, as it came
    // (an empty settings file and none mean the same to the agent).
    if !install && new.as_object().is_some_and(|o| o.is_empty()) {
        std::fs::remove_file(path).map_err(io(path))?;
        out.push_str("Removed agentwatch's hooks; the file held nothing else, so it is gone.\n");
        return Ok(out);
    }
    write_config(path, &new_text)?;
    out.push_str(&match (install, agent) {
        (true, HookAgent::Claude) => "Installed. claude sessions started from now on tell agentwatch what they do; `agentwatch hooks uninstall claude` removes exactly these lines.\n".to_string(),
        (true, HookAgent::Codex) => "Installed. codex asks you to review new hooks the next time it starts (\"Hooks need review\"): trust them there. `agentwatch hooks uninstall codex` removes exactly these lines.\n".to_string(),
        (false, _) => "Removed agentwatch's hooks and nothing else.\n".to_string(),
    });
    Ok(out)
}

/// `agentwatch hook AGENT EVENT`, run by the agent: the event's JSON on stdin; sets the
/// pane's options. Never fails the agent: whatever goes wrong, it exits 0.
pub fn run_hook(agent: HookAgent, event: &str) {
    let mut input = Vec::new();
    let _ = std::io::stdin().take(1 << 20).read_to_end(&mut input);
    let payload: Value = serde_json::from_slice(&input).unwrap_or(Value::Null);
    let Some((status, reason)) = event_status(event, &payload) else {
        return;
    };
    let Some(pane) = find_pane(agent, &payload) else {
        return;
    };
    let _ = std::process::Command::new("tmux")
        .args(set_args(&pane, &status, &reason))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// One tmux command line that sets (or unsets) both options of `pane`.
pub fn set_args(pane: &str, status: &str, reason: &str) -> Vec<String> {
    let one = |name: &str, value: &str| -> Vec<String> {
        if value.is_empty() {
            vec!["set-option", "-p", "-u", "-t", pane, name]
        } else {
            vec!["set-option", "-p", "-t", pane, name, value]
        }
        .into_iter()
        .map(String::from)
        .collect()
    };
    let mut args = one("@pane_status", status);
    args.push(";".into());
    args.extend(one("@pane_wait_reason", reason));
    args
}

/// The agent's pane. claude runs hooks in its own environment (`$TMUX_PANE` is its pane).
/// codex 0.171 runs them in a background server started by whichever codex came first, so
/// its `$TMUX_PANE` may be another pane's: the pane is the one agentwatch recorded the
/// session id on, else the only codex pane in the session's directory.
fn find_pane(agent: HookAgent, payload: &Value) -> Option<String> {
    let env_pane = std::env::var("TMUX_PANE")
        .ok()
        .filter(|p| p.starts_with('%'));
    if agent == HookAgent::Claude {
        return env_pane;
    }
    let out = std::process::Command::new("tmux")
        .args([
            "list-panes",
            "-a",
            "-F",
            "#{pane_id}\t#{@agentwatch_session_id}\t#{@agentwatch_agent}\t#{pane_current_path}",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let listing = String::from_utf8_lossy(&out.stdout);
    let field = |k: &str| payload.get(k).and_then(Value::as_str).unwrap_or_default();
    codex_pane(&listing, field("session_id"), field("cwd"))
}

/// The pane of a codex session in `list-panes` lines (`id\tsession id\tagent\tpath`).
pub fn codex_pane(listing: &str, session_id: &str, cwd: &str) -> Option<String> {
    let rows: Vec<Vec<&str>> = listing.lines().map(|l| l.split('\t').collect()).collect();
    if !session_id.is_empty() {
        if let Some(r) = rows.iter().find(|r| r.get(1) == Some(&session_id)) {
            return Some(r[0].to_string());
        }
    }
    let mut same_dir = rows
        .iter()
        .filter(|r| r.get(2) == Some(&"codex") && !cwd.is_empty() && r.get(3) == Some(&cwd));
    match (same_dir.next(), same_dir.next()) {
        (Some(r), None) => Some(r[0].to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXE: &str = "/opt/agent watch/agentwatch";

    #[test]
    fn install_adds_one_handler_per_event_once_and_uninstall_removes_exactly_those() {
        let user = serde_json::json!({
            "model": "opus",
            "hooks": {
                "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say done"}]}]
            },
            "permissions": {"allow": ["Bash(ls)"]}
        });
        let exe = Path::new(EXE);
        let with = installed(&user, exe, HookAgent::Claude).unwrap();
        let stop = &with["hooks"]["Stop"];
        assert_eq!(stop.as_array().unwrap().len(), 2, "{stop}");
        assert_eq!(
            stop[1]["hooks"][0]["command"],
            "'/opt/agent watch/agentwatch' hook claude Stop"
        );
        assert_eq!(
            with["hooks"].as_object().unwrap().len(),
            HookAgent::Claude.events().len()
        );
        // Key order kept: the user's keys where they were.
        let keys: Vec<&String> = with.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "hooks", "permissions"]);
        assert_eq!(
            installed(&with, exe, HookAgent::Claude).unwrap(),
            with,
            "not twice"
        );
        assert_eq!(uninstalled(&with, HookAgent::Claude), user);
        // Nothing of the user's: from a file with no hooks, no hooks table is left.
        let bare = serde_json::json!({"model": "opus"});
        let with = installed(&bare, exe, HookAgent::Claude).unwrap();
        assert_eq!(uninstalled(&with, HookAgent::Claude), bare);
        // An agentwatch hook installed from another path is still ours; codex's are not
        // claude's.
        let other = installed(&bare, Path::new("/usr/bin/agentwatch"), HookAgent::Codex).unwrap();
        assert_eq!(uninstalled(&other, HookAgent::Claude), other);
        assert_eq!(uninstalled(&other, HookAgent::Codex), bare);
    }

    #[test]
    fn a_file_that_is_not_json_is_refused_by_name_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{ \"model\": ").unwrap();
        let err = change(HookAgent::Claude, true, false, &path, Path::new(EXE))
            .unwrap_err()
            .to_string();
        assert!(err.contains("settings.json: not valid JSON"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ \"model\": ");
        std::fs::write(&path, "[1]").unwrap();
        let err = change(HookAgent::Claude, true, false, &path, Path::new(EXE))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a JSON object"), "{err}");
    }

    #[test]
    fn a_file_made_by_install_is_removed_by_uninstall() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".codex/hooks.json");
        change(HookAgent::Codex, true, false, &path, Path::new(EXE)).unwrap();
        assert!(path.exists());
        let out = change(HookAgent::Codex, false, false, &path, Path::new(EXE)).unwrap();
        assert!(out.contains("so it is gone"), "{out}");
        assert!(!path.exists());
    }

    #[test]
    fn the_change_is_shown_as_a_diff_and_a_dry_run_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{\n  \"model\": \"opus\"\n}\n").unwrap();
        let out = change(HookAgent::Claude, true, true, &path, Path::new(EXE)).unwrap();
        assert!(out.contains("+   \"hooks\": {"), "{out}");
        assert!(
            out.contains("-   \"model\": \"opus\"\n+   \"model\": \"opus\","),
            "{out}"
        );
        assert!(out.contains("dry run"), "{out}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"model\": \"opus\"\n}\n"
        );
        change(HookAgent::Claude, true, false, &path, Path::new(EXE)).unwrap();
        let again = change(HookAgent::Claude, true, false, &path, Path::new(EXE)).unwrap();
        assert!(again.contains("nothing to install"), "{again}");
        let out = change(HookAgent::Claude, false, false, &path, Path::new(EXE)).unwrap();
        assert!(out.contains("- "), "{out}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"model\": \"opus\"\n}\n"
        );
    }

    #[test]
    fn events_say_what_the_agent_does() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        let st = |e: &str, p: &str| event_status(e, &v(p));
        assert_eq!(
            st("UserPromptSubmit", "{}"),
            Some(("running".into(), "".into()))
        );
        assert_eq!(
            st(
                "Notification",
                r#"{"notification_type":"permission_prompt","message":"Claude needs your permission"}"#
            ),
            Some(("waiting".into(), "Claude needs your permission".into()))
        );
        assert_eq!(
            st("PermissionRequest", r#"{"tool_name":"Bash"}"#),
            Some(("waiting".into(), "permission to use Bash".into()))
        );
        assert_eq!(
            st("Notification", r#"{"notification_type":"auth_success"}"#),
            None
        );
        assert_eq!(
            st("StopFailure", r#"{"error":"authentication_failed"}"#),
            Some((
                "error".into(),
                "the turn failed: authentication_failed".into()
            ))
        );
        assert_eq!(st("SessionEnd", "{}"), Some(("".into(), "".into())));
        assert_eq!(
            set_args("%3", "idle", ""),
            [
                "set-option",
                "-p",
                "-t",
                "%3",
                "@pane_status",
                "idle",
                ";",
                "set-option",
                "-p",
                "-u",
                "-t",
                "%3",
                "@pane_wait_reason"
            ]
        );
    }

    #[test]
    fn a_codex_hook_finds_its_pane_by_session_id_else_the_only_codex_in_its_directory() {
        let listing =
            "%1\t\tcodex\t/w/a\n%2\tabc\tcodex\t/w/b\n%3\t\tcodex\t/w/b\n%4\t\tclaude\t/w/c\n";
        assert_eq!(codex_pane(listing, "abc", "/w/a").as_deref(), Some("%2"));
        assert_eq!(codex_pane(listing, "zzz", "/w/a").as_deref(), Some("%1"));
        assert_eq!(
            codex_pane(listing, "zzz", "/w/b"),
            None,
            "two in that directory: no guess"
        );
        assert_eq!(codex_pane(listing, "", "/w/c"), None, "not a codex pane");
    }
}
