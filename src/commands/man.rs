//! `agentwatch man`: the man page. Its options and commands come from the clap definitions
//! and its KEYS from the key table (`core::keymap`), so neither can disagree with it; FILES,
//! ENVIRONMENT and EXIT STATUS say what the code reads, writes and returns.

use std::io::Write;

use clap::CommandFactory;
use clap_mangen::Man;
use roff::{bold, roman, Roff};

use crate::core::keymap::{self, View};

/// What `roff` writes before every piece it renders (the apostrophe string); the page
/// needs it once.
const PREAMBLE: &[u8] = b".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

/// The views of the key table, in the order the README and the help overlay give them.
const VIEWS: [View; 3] = [View::Grid, View::Peek, View::Lost];

/// A view's subsection title: an exhaustive match, so a new view cannot be left out here
/// without the compiler saying so.
fn heading(view: View) -> &'static str {
    match view {
        View::Grid => "On the grid",
        View::Peek => "In the peek view",
        View::Lost => "When the tmux server went away",
    }
}

/// The whole page, as roff.
pub fn render(w: &mut dyn Write) -> std::io::Result<()> {
    let cmd = crate::cli::Cli::command();
    let has_author = cmd.get_author().is_some();
    let mut page = Page::default();
    let man = clap_parts(&mut page, cmd)?;
    page.add(|o| keys().to_writer(o))?;
    page.add(|o| exit_status().to_writer(o))?;
    page.add(|o| environment().to_writer(o))?;
    page.add(|o| files().to_writer(o))?;
    page.add(|o| man.render_version_section(o))?;
    if has_author {
        page.add(|o| man.render_authors_section(o))?;
    }
    w.write_all(ascii(&String::from_utf8_lossy(&page.0)).as_bytes())
}

/// The page of one command, `agentwatch-NAME(1)`, as the main page's COMMANDS section names
/// it: its synopsis, description, options and commands, from the clap definitions.
pub fn render_command(w: &mut dyn Write, name: &str) -> std::io::Result<()> {
    let cmd = crate::cli::Cli::command();
    let Some(sub) = cmd
        .get_subcommands()
        .find(|s| !s.is_hide_set() && s.get_name() == name)
    else {
        let names: Vec<&str> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name())
            .collect();
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("no command {name:?}: the commands are {}", names.join(", ")),
        ));
    };
    let full = format!("agentwatch-{name}");
    let sub = sub
        .clone()
        .name(full.clone())
        .bin_name(format!("agentwatch {name}"))
        .version(cmd.get_version().unwrap_or_default().to_string());
    let mut page = Page::default();
    clap_parts(&mut page, sub)?;
    let mut see = Roff::new();
    see.control("SH", ["SEE ALSO"]).text([
        bold("agentwatch"),
        roman("(1), for the dashboard, its keys, files, environment and exit status."),
    ]);
    page.add(|o| see.to_writer(o))?;
    w.write_all(ascii(&String::from_utf8_lossy(&page.0)).as_bytes())
}

/// The sections of a page that the clap definitions say: title, name, synopsis,
/// description, options, its commands (when it has any to show) and the text after them.
fn clap_parts(page: &mut Page, cmd: clap::Command) -> std::io::Result<Man> {
    let has_subcommands = cmd.get_subcommands().any(|s| !s.is_hide_set());
    let has_after_help = cmd.get_after_help().is_some() || cmd.get_after_long_help().is_some();
    let man = Man::new(cmd);
    page.add(|o| man.render_title(o))?;
    page.add(|o| man.render_name_section(o))?;
    page.add(|o| man.render_synopsis_section(o))?;
    page.add(|o| man.render_description_section(o))?;
    page.add(|o| man.render_options_section(o))?;
    if has_subcommands {
        page.add(|o| man.render_subcommands_section(o))?;
    }
    if has_after_help {
        page.add(|o| man.render_extra_section(o))?;
    }
    Ok(man)
}

/// The page with every character past ASCII written as groff's `\[uXXXX]` (the key table's
/// arrows, say): troff reads its input as Latin-1 unless run through preconv, which `man`
/// does and `groff -man` does not; mandoc reads the escape too.
fn ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    out
}

/// The page being put together from pieces rendered one by one.
#[derive(Default)]
struct Page(Vec<u8>);

impl Page {
    fn add(
        &mut self,
        piece: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut buf = Vec::new();
        piece(&mut buf)?;
        let body = match buf.strip_prefix(PREAMBLE) {
            Some(rest) if !self.0.is_empty() => rest,
            _ => &buf[..],
        };
        self.0.extend_from_slice(body);
        Ok(())
    }
}

/// A tagged paragraph: `tag` in bold, then `text`; `indent`: the text's, when the tags
/// are short.
fn item(roff: &mut Roff, tag: &str, text: &str, indent: Option<&str>) {
    roff.control("TP", indent)
        .text([bold(tag)])
        .text([roman(text)]);
}

/// KEYS: every row of the key table, per view, as `?` shows them in the dashboard.
fn keys() -> Roff {
    let mut roff = Roff::new();
    // From here on no hyphen put into a word and no stretched spaces: paths and names are
    // copied from this page.
    roff.control("nh", []).control("ad", ["l"]);
    roff.control("SH", ["KEYS"]).text([roman(
        "The dashboard's keys (? shows them there too). Where two keys are given, either works.",
    )]);
    for view in VIEWS {
        roff.control("SS", [heading(view)]);
        for b in keymap::table(view) {
            item(&mut roff, b.label, b.help, Some("10"));
        }
    }
    roff
}

/// EXIT STATUS: what `main` and the commands return.
fn exit_status() -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    item(
        &mut roff,
        "0",
        "Success. status: no agent is dead. doctor: no check failed.",
        None,
    );
    item(
        &mut roff,
        "1",
        "status: an agent is dead (exited, killed, resuming, gave_up, or its exit status \
         unknown); a pane with no agent never counts. doctor: a check failed. daemon: another \
         daemon already supervises the server, or the daemon failed, or --detach or --stop \
         did not finish. The dashboard or demo failed while running.",
        None,
    );
    item(
        &mut roff,
        "2",
        "Bad input or setup, and nothing was done: a wrong command line, a config file that \
         is invalid (or missing, when named), tmux missing or older than 3.1, no tmux server \
         or an error from tmux (status, explain, spawn), a bad --since, no home directory, a \
         lock that cannot be taken. The message names what is wrong and how to fix it.",
        None,
    );
    item(
        &mut roff,
        "101",
        "A bug (a panic); the dashboard writes the details to the log file.",
        None,
    );
    roff
}

/// ENVIRONMENT: the variables the code reads, and nothing else.
fn environment() -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["ENVIRONMENT"]);
    for (name, text) in [
        (
            "AGENTWATCH_CONFIG",
            "The config file, when --config is not given.",
        ),
        (
            "AGENTWATCH_LOG",
            "What the log file records, as a tracing filter (default: info; e.g. debug).",
        ),
        (
            "TMUX",
            "Set inside tmux: its server is the one watched when neither -L nor -S is given \
             (else the default server); desktop notifications are then wrapped in tmux's \
             passthrough.",
        ),
        (
            "TMUX_PANE",
            "The pane agentwatch runs in: g switches the client showing it (without it, as in \
             a display-popup, the client of $TMUX's session that last had a key, and \
             agentwatch quits so that the popup closes); agentwatch hook writes to the agent's \
             pane.",
        ),
        (
            "TMUX_TMPDIR",
            "Where tmux keeps its sockets (default /tmp), for -L and the default server; \
             agentwatch keeps its locks there too.",
        ),
        (
            "XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_DATA_HOME",
            "Where the config, the journal and log, and the crash records are (see FILES).",
        ),
        (
            "HOME",
            "The home directory: the default for the above, ~ in paths shown, the shell rc \
             files doctor looks at.",
        ),
        (
            "SHELL",
            "Which shell's rc line doctor suggests for the shell integration.",
        ),
        (
            "PATH",
            "Where tmux and the agents' programs are found (doctor says which are installed).",
        ),
        (
            "CLAUDE_CONFIG_DIR",
            "claude's directory (default ~/.claude): its session records and state files, and \
             the settings.json that agentwatch hooks changes.",
        ),
        (
            "CODEX_HOME",
            "codex's directory (default ~/.codex): its sessions, and the hooks.json that \
             agentwatch hooks changes.",
        ),
        (
            "GEMINI_CLI_HOME",
            "gemini's home: its sessions are in $GEMINI_CLI_HOME/.gemini (default ~/.gemini).",
        ),
        (
            "NO_COLOR",
            "When set and not empty, the dashboard draws without colour.",
        ),
    ] {
        item(&mut roff, name, text, None);
    }
    roff
}

/// FILES: the paths as `config::locate`, `adapters::store` and `adapters::respawn` compute
/// them (through the `directories` crate: XDG on Linux).
fn files() -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["FILES"]);
    for (path, text) in [
        (
            "$XDG_CONFIG_HOME/agentwatch/config.toml",
            "The config file (default ~/.config/agentwatch/config.toml), unless --config or \
             AGENTWATCH_CONFIG names another. Missing: the defaults.",
        ),
        (
            "$XDG_STATE_HOME/agentwatch/journal.jsonl",
            "The lifecycle journal, one JSON object per line (default \
             ~/.local/state/agentwatch/journal.jsonl); moved to journal.jsonl.1 past 8 MiB. \
             agentwatch events prints it.",
        ),
        (
            "$XDG_STATE_HOME/agentwatch/agentwatch.log",
            "The log of the dashboard and the daemon. AGENTWATCH_LOG=debug adds every \
             agent's edge between work and a prompt (the journal has them anyway).",
        ),
        (
            "$XDG_STATE_HOME/agentwatch/lost-agents.json",
            "The agents lost with a tmux server, to recreate them with their resume commands.",
        ),
        (
            "$XDG_DATA_HOME/agentwatch/crashes/",
            "Crash records: a dead pane's whole output and how it died, one JSON file per \
             death (default ~/.local/share/agentwatch/crashes/).",
        ),
        (
            "$TMUX_TMPDIR/agentwatch-UID/",
            "Locks (default /tmp/agentwatch-UID/): whether a daemon runs for each tmux \
             server's path. Who supervises a server is kept in the server itself (the server \
             option @agentwatch_lease), where every path to it finds it.",
        ),
        (
            "server option @agentwatch_record_NONCE",
            "The format one running agentwatch reads panes whole with, set in each server \
             it watches and unset when it quits; one left by an agentwatch that was killed \
             is harmless (tmux set -su removes it).",
        ),
    ] {
        item(&mut roff, path, text, None);
    }
    roff.control("PP", []).text([roman(
        "On systems other than Linux the config, state and data directories are the \
         system's own equivalents.",
    )]);
    roff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_says_the_apostrophe_preamble_once() {
        let mut out = Vec::new();
        render(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches(".ds Aq").count(), 2, "{text}");
        assert!(text.starts_with(".ie \\n(.g .ds Aq"), "{text}");
        assert!(text.is_ascii());
    }

    #[test]
    fn characters_past_ascii_become_groff_escapes() {
        assert_eq!(ascii("↑/k é"), "\\[u2191]/k \\[u00E9]");
        assert_eq!(ascii("😀"), "\\[u1F600]");
    }
}
