//! Where the supervisor keeps its verdict on each live agent (`status` and the dashboards
//! beside it read it with the pane's other records): in a hidden variable of the server's
//! global environment, `AGENTWATCH_VERDICT_<pane number>`, which the pane option
//! `@agentwatch_verdict_fmt` names once (`#{AGENTWATCH_VERDICT_12}`; the listing reads it
//! with `#{E:...}`, and a format finds a name that is no option in the environment).
//!
//! Not a pane option per verdict: every `set-option` makes tmux (3.3a, 3.5a) recalculate
//! every window's size and redraw every attached client, and a verdict changes with every
//! edge of every agent. Measured at 300 panes, 100 churning: the verdict's `set-option`s
//! cost the server 0.67 % of a core. `set-environment` does neither; `-h` (tmux 3.2) keeps the
//! variable out of the processes the server starts. A value substituted from the
//! environment is not expanded again, so nothing read off a screen is ever run as a
//! format. Where `-h` is refused (tmux 3.1) the verdict is the option itself, every `#`
//! doubled (read back as written).

use std::collections::HashSet;

use crate::core::pane::{Opt, PaneId};

/// What this process wrote where, on one server.
#[derive(Debug, Default)]
pub struct Written {
    /// The panes whose option names their variable, by number.
    named: HashSet<u32>,
    /// The server refused `set-environment -h`: verdicts go in the option itself.
    refused: bool,
}

/// The variable that holds pane `n`'s verdict.
pub fn variable(n: u32) -> String {
    format!("AGENTWATCH_VERDICT_{n}")
}

/// The tmux error of a `set-environment` whose `-h` this tmux does not know (its usage).
pub fn refuses_hidden(error: &str) -> bool {
    error.contains("usage: set-environment") || error.contains("unknown flag -h")
}

impl Written {
    /// The commands that set pane `pane`'s option `name` to `value`: one `set-option` for
    /// every option but the verdict.
    pub fn commands(&self, pane: PaneId, name: &str, value: &str) -> Vec<Vec<String>> {
        let t = pane.to_string();
        let set = |v: &str| vec![s("set-option"), s("-p"), s("-t"), t.clone(), s(name), s(v)];
        if name != Opt::Verdict.name() {
            return vec![set(value)];
        }
        if self.refused {
            return vec![set(&value.replace('#', "##"))];
        }
        let var = variable(pane.number());
        let mut c = vec![if value.is_empty() {
            vec![s("set-environment"), s("-g"), s("-u"), var.clone()]
        } else {
            vec![
                s("set-environment"),
                s("-g"),
                s("-h"),
                var.clone(),
                s(value),
            ]
        }];
        if !value.is_empty() && !self.named.contains(&pane.number()) {
            c.push(set(&format!("#{{{var}}}")));
        }
        c
    }

    /// The commands of [`Self::commands`] for `value` landed (`ok`), or failed with an error.
    pub fn landed(&mut self, pane: PaneId, name: &str, value: &str, ok: Result<(), &str>) {
        if name != Opt::Verdict.name() || self.refused {
            return;
        }
        match ok {
            Ok(()) => {
                if !value.is_empty() {
                    self.named.insert(pane.number());
                }
            }
            Err(e) if refuses_hidden(e) => {
                tracing::info!(
                    "this tmux has no hidden environment (set-environment -h, tmux 3.2): \
                     the supervisor's verdicts go in a pane option"
                );
                self.refused = true;
            }
            Err(_) => {}
        }
    }

    /// No pane's option names a variable written by this process.
    pub fn is_empty(&self) -> bool {
        self.named.is_empty()
    }

    /// Panes a listing showed with a verdict (an instance before this one named their
    /// variable): theirs are unset too when they go, and not named again.
    pub fn saw(&mut self, with_verdict: impl IntoIterator<Item = u32>) {
        self.named.extend(with_verdict);
    }

    /// The variables of panes that are gone (none of `live`), to unset: each is forgotten.
    pub fn gone(&mut self, live: &HashSet<u32>) -> Vec<Vec<String>> {
        let gone: Vec<u32> = self.named.difference(live).copied().collect();
        gone.into_iter()
            .map(|n| {
                self.named.remove(&n);
                vec![s("set-environment"), s("-g"), s("-u"), variable(n)]
            })
            .collect()
    }
}

fn s(v: &str) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "@agentwatch_verdict_fmt";

    #[test]
    fn a_verdict_goes_in_a_hidden_variable_that_its_pane_option_names_once() {
        let mut w = Written::default();
        let value = "waiting 1796459340967 screen Do you want to proceed?\tBash · echo #(id)";
        let first = w.commands(PaneId(12), V, value);
        assert_eq!(
            first,
            [
                vec![
                    "set-environment",
                    "-g",
                    "-h",
                    "AGENTWATCH_VERDICT_12",
                    value
                ],
                vec![
                    "set-option",
                    "-p",
                    "-t",
                    "%12",
                    V,
                    "#{AGENTWATCH_VERDICT_12}"
                ],
            ]
        );
        // An unset that landed names nothing.
        w.landed(PaneId(12), V, "", Ok(()));
        assert_eq!(w.commands(PaneId(12), V, value).len(), 2);
        w.landed(PaneId(12), V, value, Ok(()));
        // Named once: later verdicts are the variable alone.
        assert_eq!(w.commands(PaneId(12), V, "idle 1 screen x").len(), 1);
        assert_eq!(
            w.commands(PaneId(12), V, ""),
            [vec!["set-environment", "-g", "-u", "AGENTWATCH_VERDICT_12"]]
        );
        // Any other option is a set-option.
        assert_eq!(
            w.commands(PaneId(3), "@agentwatch_state", "working"),
            [vec![
                "set-option",
                "-p",
                "-t",
                "%3",
                "@agentwatch_state",
                "working"
            ]]
        );
        // Gone panes' variables are unset, once.
        let live: HashSet<u32> = [4].into();
        assert_eq!(
            w.gone(&live),
            [vec!["set-environment", "-g", "-u", "AGENTWATCH_VERDICT_12"]]
        );
        assert!(w.gone(&live).is_empty());
        // One a listing showed with a verdict (an instance before this one wrote it): not
        // named again, and unset when it goes.
        w.saw([7]);
        assert_eq!(w.commands(PaneId(7), V, "idle 1 screen x").len(), 1);
        assert_eq!(
            w.gone(&live),
            [vec!["set-environment", "-g", "-u", "AGENTWATCH_VERDICT_7"]]
        );
    }

    #[test]
    fn without_a_hidden_environment_the_verdict_is_the_option_read_back_as_written() {
        let mut w = Written::default();
        w.landed(
            PaneId(2),
            V,
            "waiting 1 screen x",
            Err("usage: set-environment [-gru] [-t target-session] name [value]"),
        );
        // Read with #{E:...}: every # doubled, so a screen's `#(cmd)` is text, never a job.
        assert_eq!(
            w.commands(PaneId(2), V, "waiting 1 screen run #(id)?"),
            [vec![
                "set-option",
                "-p",
                "-t",
                "%2",
                V,
                "waiting 1 screen run ##(id)?"
            ]]
        );
        // Another failure (a pane gone) says nothing of the server.
        let mut w = Written::default();
        w.landed(PaneId(2), V, "x", Err("can't find pane: %2"));
        assert_eq!(w.commands(PaneId(2), V, "idle 1 screen x").len(), 2);
    }
}
