//! `s`: start a new agent from the dashboard, as `agentwatch spawn` does: its kind, its
//! directory, its window's name and the tmux session, in a small form over the grid.

use super::*;
use crate::input::{Key, KeyCode};
use crate::msg::StartAsk;

/// Which line of the form the keys go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Kind,
    Dir,
    Name,
    Session,
}

impl Field {
    pub const ALL: [Field; 4] = [Field::Kind, Field::Dir, Field::Name, Field::Session];

    pub fn label(self) -> &'static str {
        match self {
            Field::Kind => "kind",
            Field::Dir => "directory",
            Field::Name => "window name",
            Field::Session => "tmux session",
        }
    }
}

/// The form, while it is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartForm {
    /// The kinds that can be started, and the one chosen.
    pub kinds: Vec<String>,
    pub kind: usize,
    pub dir: String,
    /// Empty: the kind's name.
    pub name: String,
    pub session: String,
    pub field: Field,
    /// Why the last try did not start it (the form stays, to mend it).
    pub error: Option<String>,
    /// Asked of tmux: keys wait for the answer.
    pub busy: bool,
}

impl StartForm {
    pub fn kind(&self) -> &str {
        self.kinds.get(self.kind).map_or("", String::as_str)
    }

    /// The text of a line of the form.
    pub fn value(&self, f: Field) -> &str {
        match f {
            Field::Kind => self.kind(),
            Field::Dir => &self.dir,
            Field::Name if self.name.is_empty() => self.kind(),
            Field::Name => &self.name,
            Field::Session => &self.session,
        }
    }

    fn text(&mut self) -> Option<&mut String> {
        match self.field {
            Field::Kind => None,
            Field::Dir => Some(&mut self.dir),
            Field::Name => Some(&mut self.name),
            Field::Session => Some(&mut self.session),
        }
    }

    fn step(&mut self, by: isize) {
        let n = Field::ALL.len() as isize;
        let at = Field::ALL
            .iter()
            .position(|f| *f == self.field)
            .unwrap_or(0) as isize;
        self.field = Field::ALL[(at + by).rem_euclid(n) as usize];
    }
}

/// The session `spawn` starts agents in when none is named.
pub const START_SESSION: &str = "agents";

impl State {
    /// `s`: the form, its kind and directory those of the selected agent (a second agent
    /// where one works is the usual wish), else the first kind and the home directory.
    pub(super) fn open_start(&mut self) {
        let kinds: Vec<String> = self.agents.all().iter().map(|d| d.name.clone()).collect();
        let card = self.selected_index().map(|i| &self.cards[i]);
        let kind = card
            .and_then(|c| c.agent.as_deref())
            .and_then(|k| kinds.iter().position(|n| n == k))
            .unwrap_or(0);
        let dir = card
            .filter(|c| c.pane.id.server().is_local())
            .map(|c| c.pane.cwd().to_string())
            .filter(|d| !d.is_empty())
            .or_else(|| self.grid.home.clone())
            .unwrap_or_default();
        self.start = Some(StartForm {
            kinds,
            kind,
            dir,
            name: String::new(),
            session: START_SESSION.to_string(),
            field: Field::Kind,
            error: None,
            busy: false,
        });
    }

    /// A key while the form is open: it takes every key.
    pub(super) fn start_key(&mut self, ev: &Key, fx: &mut Vec<Effect>) {
        let home = self.grid.home.as_deref();
        let Some(f) = self.start.as_mut() else {
            return;
        };
        if f.busy {
            return;
        }
        match ev.code {
            KeyCode::Esc => self.start = None,
            KeyCode::Char('c') if ev.ctrl => self.start = None,
            KeyCode::Tab | KeyCode::Down => f.step(1),
            KeyCode::Up => f.step(-1),
            KeyCode::Left if f.field == Field::Kind && !f.kinds.is_empty() => {
                f.kind = (f.kind + f.kinds.len() - 1) % f.kinds.len();
            }
            KeyCode::Right | KeyCode::Char(' ')
                if f.field == Field::Kind && !f.kinds.is_empty() =>
            {
                f.kind = (f.kind + 1) % f.kinds.len();
            }
            KeyCode::Backspace => {
                if let Some(t) = f.text() {
                    t.pop();
                }
            }
            KeyCode::Char('u') if ev.ctrl => {
                if let Some(t) = f.text() {
                    t.clear();
                }
            }
            KeyCode::Char(c) if !ev.ctrl => {
                if let Some(t) = f.text() {
                    t.push(c);
                }
            }
            // No directory is no guess (the dashboard's own would be one): said on the form.
            KeyCode::Enter if f.dir.trim().is_empty() => {
                f.error = Some("directory: give one (~ is your home directory)".into());
            }
            KeyCode::Enter => {
                f.error = None;
                f.busy = true;
                fx.push(Effect::Start(StartAsk {
                    agent: f.kind().to_string(),
                    dir: crate::text::untilde(f.dir.trim(), home),
                    name: Some(f.name.trim().to_string()).filter(|n| !n.is_empty()),
                    session: f.session.trim().to_string(),
                }));
            }
            _ => {}
        }
    }

    /// tmux answered the start: the new agent is selected once it shows; a refusal stays
    /// on the form, to be mended.
    pub(super) fn started(&mut self, result: Result<PaneId, String>) {
        match result {
            Ok(pane) => {
                self.start = None;
                self.grid.want = Some(pane);
            }
            Err(why) => {
                if let Some(f) = self.start.as_mut() {
                    f.busy = false;
                    f.error = Some(why);
                }
            }
        }
    }
}
