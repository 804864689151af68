//! The questions about panes, each in one round trip (pipelined over control mode, else
//! one tmux process): the listing, a poll's commands, screens, a pane's tail and history,
//! and pane options.

use std::collections::{HashMap, HashSet};

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

    /// [`Tmux::ask`] for a question that can wait up to `within` to go with another one
    /// in the same write (one wake-up of the server for both, which walks all its panes at
    /// each); asked at once where there is no control connection.
    pub async fn ask_riding(
        &self,
        commands: &[Vec<String>],
        within: std::time::Duration,
    ) -> Result<Vec<u8>, TmuxError> {
        let refs: Vec<&[String]> = commands.iter().map(Vec::as_slice).collect();
        if let Some(r) = self.via_control_riding(&refs, within).await {
            return Ok(r?.into_iter().flatten().flatten().collect());
        }
        self.ask(commands).await
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

    /// Sets pane options in one round trip: `(pane, option, value)`; the supervisor's
    /// verdict goes where [`super::verdicts`] says. Says for each whether it was set (over
    /// control mode each command answers alone; in one process, a failure leaves all
    /// unknown, so all are counted as not set).
    pub async fn set_pane_options(
        &self,
        sets: &[(PaneId, String, String)],
    ) -> Vec<Result<(), TmuxError>> {
        if sets.is_empty() {
            return Vec::new();
        }
        // Each set's commands, with the set they are for.
        let commands: Vec<(usize, Vec<String>)> = {
            let written = self.verdicts.lock().unwrap_or_else(|e| e.into_inner());
            sets.iter()
                .enumerate()
                .flat_map(|(i, (id, name, value))| {
                    written
                        .commands(*id, name, value)
                        .into_iter()
                        .map(move |c| (i, c))
                })
                .collect()
        };
        let results = self.run_each(&commands, sets.len()).await;
        let mut written = self.verdicts.lock().unwrap_or_else(|e| e.into_inner());
        for ((id, name, value), r) in sets.iter().zip(&results) {
            let detail = match r {
                Err(TmuxError::Failed { detail }) => Err(detail.as_str()),
                Err(_) => Err(""),
                Ok(()) => Ok(()),
            };
            written.landed(*id, name, value, detail);
        }
        results
    }

    /// After a listing of `panes` (`full`: with their options): the verdict variables of
    /// panes that are gone are unset (a variable outlives its pane), those of panes
    /// shown with a verdict are known from now on.
    pub async fn forget_gone_verdicts(&self, panes: &[crate::core::pane::Pane], full: bool) {
        let unset = {
            let mut written = self.verdicts.lock().unwrap_or_else(|e| e.into_inner());
            if full {
                written.saw(
                    panes
                        .iter()
                        .filter(|p| !p.opts.verdict.is_empty())
                        .map(|p| p.id.number()),
                );
            }
            if written.is_empty() {
                return;
            }
            let live: HashSet<u32> = panes.iter().map(|p| p.id.number()).collect();
            written.gone(&live)
        };
        if !unset.is_empty() {
            if let Err(e) = self.ask(&unset).await {
                tracing::debug!("unsetting gone panes' verdicts: {e}");
            }
        }
    }

    /// Runs `commands` (each for one of `n` sets) in one round trip, and says for each set
    /// whether all its commands succeeded. Over control mode, one line each (a value with a
    /// newline cannot go on a line).
    async fn run_each(
        &self,
        commands: &[(usize, Vec<String>)],
        n: usize,
    ) -> Vec<Result<(), TmuxError>> {
        let one_line = commands
            .iter()
            .all(|(_, c)| c.iter().all(|w| !w.contains(['\n', '\r'])));
        if one_line {
            let refs: Vec<&[String]> = commands.iter().map(|(_, c)| &c[..]).collect();
            match self.via_control_many(&refs).await {
                Some(Ok(blocks)) => {
                    let mut each: Vec<Result<(), TmuxError>> = vec![Ok(()); n];
                    for ((i, _), b) in commands.iter().zip(blocks) {
                        if let (Err(e), Ok(())) = (b, &each[*i]) {
                            each[*i] = Err(self.failed(e.0.as_bytes()));
                        }
                    }
                    return each;
                }
                Some(Err(e)) => return vec![Err(e); n],
                None => {}
            }
        }
        let mut args: Vec<String> = Vec::new();
        for (k, (_, c)) in commands.iter().enumerate() {
            if k > 0 {
                args.push(";".into());
            }
            args.extend(c.iter().map(|w| words::arg(w)));
        }
        let r = self.run(&args).await.map(|_| ());
        vec![r; n]
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
