//! The questions about panes, each in one round trip (pipelined over control mode, else
//! one tmux process): the listing, a poll's commands, screens, a pane's tail and history,
//! and pane options.

use std::collections::HashMap;

use super::client::{Tmux, TmuxError};
use super::format::{list_panes_format, parse_listing, Listing};
use crate::core::pane::PaneId;
use crate::core::words;

impl Tmux {
    /// `kill-pane`: the pane and what it retained go.
    pub async fn kill_pane(&self, pane: PaneId) -> Result<(), TmuxError> {
        self.run(["kill-pane", "-t", &pane.to_string()])
            .await
            .map(|_| ())
    }

    /// A server option (`set-option -s`): what every instance shares, like `A`.
    pub async fn set_server_option(&self, name: &str, value: &str) -> Result<(), TmuxError> {
        self.run(["set-option", "-s", name, value])
            .await
            .map(|_| ())
    }

    /// Unsets this process's record format ([`super::format::record_option`]): it is
    /// quitting.
    pub async fn forget_record(&self) {
        let name = super::format::record_option();
        let _ = self.run(["set-option", "-su", name.as_str()]).await;
    }

    /// Asks the server to send itself SIGCHLD (`#{pid}` is its own pid wherever it runs),
    /// for a server on another host, whose pid is not this machine's to signal.
    pub async fn kick_itself(&self) -> Result<(), TmuxError> {
        let kick = vec![
            "run-shell".to_string(),
            "-b".to_string(),
            "kill -s CHLD #{pid}".to_string(),
        ];
        self.ask(&[kick]).await.map(|_| ())
    }

    /// One `list-panes -a` with the agentwatch format.
    pub async fn list_panes(&self) -> Result<Listing, TmuxError> {
        let format = list_panes_format();
        let args = ["list-panes", "-a", "-F", format.as_str()];
        let out = match self.via_control(&args).await {
            Some(r) => r?,
            None => self.run(args).await?,
        };
        Ok(parse_listing(&out))
    }

    /// Runs a poll's commands in one round trip (pipelined over control mode, else joined
    /// with `;` in one process) and returns what they printed, in order. A command that
    /// fails alone (a pane that vanished) adds nothing; the server failing fails the call.
    pub async fn ask(&self, commands: &[Vec<String>]) -> Result<Vec<u8>, TmuxError> {
        let refs: Vec<&[String]> = commands.iter().map(Vec::as_slice).collect();
        if let Some(r) = self.via_control_many(&refs).await {
            return Ok(r?.into_iter().flatten().flatten().collect());
        }
        let mut args: Vec<&str> = Vec::new();
        for (i, c) in commands.iter().enumerate() {
            if i > 0 {
                args.push(";");
            }
            args.extend(c.iter().map(String::as_str));
        }
        self.run(args).await
    }

    /// The visible screens of several panes, each with its own number of history lines
    /// above it, in one round trip (one tmux invocation on the fallback), split per pane.
    pub async fn capture_screens(
        &self,
        panes: &[(PaneId, u32)],
    ) -> Result<HashMap<PaneId, String>, TmuxError> {
        if panes.is_empty() {
            return Ok(HashMap::new());
        }
        let asks: Vec<(String, String)> = panes
            .iter()
            .map(|(id, history)| (id.to_string(), format!("-{history}")))
            .collect();
        // Over control mode, one line per pane, all in one round trip: each answers on its
        // own, and a pane that vanished fails alone.
        let commands: Vec<[&str; 7]> = asks
            .iter()
            .map(|(t, start)| ["capture-pane", "-p", "-J", "-S", start, "-t", t])
            .collect();
        let refs: Vec<&[&str]> = commands.iter().map(|c| &c[..]).collect();
        if let Some(r) = self.via_control_many(&refs).await {
            let mut map = HashMap::new();
            for ((id, _), block) in panes.iter().zip(r?) {
                if let Ok(bytes) = block {
                    map.insert(*id, String::from_utf8_lossy(&bytes).into_owned());
                }
            }
            return Ok(map);
        }
        let mut args: Vec<String> = Vec::new();
        for (i, (target, start)) in asks.iter().enumerate() {
            if i > 0 {
                args.push(";".into());
            }
            args.extend([
                "display-message".into(),
                "-p".into(),
                format!("{}{target}", block_mark()),
                ";".into(),
                "capture-pane".into(),
                "-p".into(),
                "-J".into(),
                "-S".into(),
                start.clone(),
                "-t".into(),
                target.clone(),
            ]);
        }
        let out = self.run(&args).await?;
        Ok(split_marked(&out))
    }

    /// The last `lines` lines of a pane (history and screen), plain text.
    pub async fn capture_tail(&self, pane: PaneId, lines: u32) -> Result<Vec<u8>, TmuxError> {
        let target = pane.to_string();
        let start = format!("-{lines}");
        let args = ["capture-pane", "-p", "-J", "-S", &start, "-t", &target];
        if let Some(r) = self.via_control(&args).await {
            return r;
        }
        self.run(args).await
    }

    /// Whole retained history of one pane, with colour escapes.
    pub async fn capture_history(&self, pane: PaneId) -> Result<Vec<u8>, TmuxError> {
        let target = pane.to_string();
        let args = [
            "capture-pane",
            "-p",
            "-e",
            "-J",
            "-S",
            "-",
            "-E",
            "-",
            "-t",
            &target,
        ];
        if let Some(r) = self.via_control(&args).await {
            return r;
        }
        self.run(args).await
    }

    /// Sets pane options in one round trip: `(pane, option, value)`. Says for each whether
    /// it was set (over control mode each answers alone; in one process, a failure leaves
    /// all unknown, so all are counted as not set).
    pub async fn set_pane_options(
        &self,
        sets: &[(PaneId, String, String)],
    ) -> Vec<Result<(), TmuxError>> {
        if sets.is_empty() {
            return Vec::new();
        }
        // Over control mode, one line each (a value with a newline cannot go on a line),
        // all in one round trip.
        let one_line = sets
            .iter()
            .all(|(_, n, v)| !n.contains('\n') && !v.contains(['\n', '\r']));
        if one_line {
            let targets: Vec<String> = sets.iter().map(|(id, _, _)| id.to_string()).collect();
            let commands: Vec<[&str; 6]> = sets
                .iter()
                .zip(&targets)
                .map(|((_, name, value), t)| ["set-option", "-p", "-t", t, name, value])
                .collect();
            let refs: Vec<&[&str]> = commands.iter().map(|c| &c[..]).collect();
            match self.via_control_many(&refs).await {
                Some(Ok(blocks)) => {
                    return blocks
                        .into_iter()
                        .map(|b| b.map(|_| ()).map_err(|e| self.failed(e.0.as_bytes())))
                        .collect()
                }
                Some(Err(e)) => return sets.iter().map(|_| Err(e.clone())).collect(),
                None => {}
            }
        }
        let mut args: Vec<String> = Vec::new();
        for (i, (id, name, value)) in sets.iter().enumerate() {
            if i > 0 {
                args.push(";".into());
            }
            args.extend([
                "set-option".into(),
                "-p".into(),
                "-t".into(),
                id.to_string(),
                words::arg(name),
                words::arg(value),
            ]);
        }
        let r = self.run(&args).await.map(|_| ());
        sets.iter().map(|_| r.clone()).collect()
    }
}

/// What starts each pane's block in a batch of captures: `^` and this process's nonce (a
/// control byte would be escaped by tmux 3.5a; a screen cannot know the nonce).
fn block_mark() -> String {
    let m = super::format::Marks::ours();
    format!("{}{}", char::from(m.record), m.nonce)
}

/// Splits output made of `<block mark><pane id>\n<lines...>` blocks.
fn split_marked(out: &[u8]) -> HashMap<PaneId, String> {
    let mark = block_mark();
    let mut map = HashMap::new();
    let starts: Vec<usize> = memchr::memmem::find_iter(out, mark.as_bytes()).collect();
    for (i, &at) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(out.len());
        let block = &out[at + mark.len()..end];
        let text = String::from_utf8_lossy(block);
        let (head, body) = text.split_once('\n').unwrap_or((&text, ""));
        if let Some(id) = PaneId::parse(head.trim()) {
            map.insert(id, body.to_string());
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_blocks_split_per_pane() {
        let m = block_mark();
        let out = format!("{m}%1\nhello\nworld\n{m}%22\n\n");
        let out = out.as_bytes();
        let m = split_marked(out);
        assert_eq!(m[&PaneId(1)], "hello\nworld\n");
        assert_eq!(m[&PaneId(22)], "\n");
    }
}
