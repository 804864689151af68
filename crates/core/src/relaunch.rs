//! Whether a planned relaunch may run, and how: decided on the facts an adapter gathered
//! where it would run, just before it runs (the directory, the program, a live process
//! holding the session, the agent's records, the pane as it is now). The adapter then only
//! carries the decision out.

use crate::errors::TmuxError;
use crate::resume::{Failure, Plan};

/// Whether tmux would find the plan's program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// Found, or could not be told (a guess is worse than none: not refused).
    Found,
    /// Not on the PATH tmux gives the pane.
    NotOnPath,
    /// A path given (`./bin/claude`) that is no executable file.
    NotExecutable,
}

/// The pane as it is just before the relaunch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PaneNow {
    pub pid: Option<u32>,
    pub dead: bool,
    /// `pane_current_command`: the foreground program's name.
    pub current_command: String,
    /// `pane_current_path`: where its foreground process is.
    pub current_path: String,
    /// The terminal's foreground process group, where it could be read (for a shell
    /// prompt: the shell's own pid when nothing runs at it).
    pub foreground: Option<u32>,
}

/// What an adapter found out about a planned relaunch, where it would run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Facts {
    /// The relaunch runs on another host: its files and processes are not this machine's,
    /// and what they would say is left to tmux and the agent there.
    pub remote: bool,
    /// The plan's directory exists (asked here only).
    pub dir_exists: Option<bool>,
    /// Whether tmux would find the program (`None`: not asked, or not to be told).
    pub program: Option<Program>,
    /// A live process elsewhere that holds the session open.
    pub held_by: Option<u32>,
    /// What the agent's records hold of the session where resuming it looks (`None`: not
    /// known).
    pub recorded: Option<Record>,
    /// The pane now; `None` when it is gone.
    pub pane: Option<PaneNow>,
}

/// What an agent's own records hold of a session, where resuming it looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// A message of it (the user's or the agent's): resuming it opens it.
    Message,
    /// Nothing: it never got a first message; it can be started again under its id.
    Absent,
    /// A record with no message in it (claude 2.1 writes its mode lines when a session that
    /// never got a message ends with /exit): resuming finds no conversation, and starting
    /// it again under its id finds the id in use. Only a fresh session works.
    Empty,
}

/// How a relaunch is carried out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// `respawn-pane` (never `-k`) with the plan's argv, in its directory.
    Respawn,
    /// This command line typed at the pane's shell prompt.
    Type(String),
}

/// The plan as it will run and how, or why it must not: refused only for what is sure to
/// fail or to do harm.
pub fn decide(mut plan: Plan, facts: &Facts) -> Result<(Plan, How), Failure> {
    if facts.dir_exists == Some(false) {
        return Err(Failure::lasting(format!(
            "directory {} no longer exists",
            plan.cwd
        )));
    }
    // tmux reports a program it cannot exec as the pane's exit 1, a death like any other:
    // said before instead. One word is not exec'd: tmux runs it with the pane's shell,
    // whose startup files may add to PATH. Not lasting: an upgrade that replaced the agent
    // under it (and crashed it) may be half done, so auto-resume tries again after its
    // backoff, within its cap.
    if let (None, [program, _, ..]) = (&plan.shell, plan.argv.as_slice()) {
        let name = crate::agent::program_name(program);
        match facts.program {
            Some(Program::NotExecutable) => {
                return Err(format!("{program} is not an executable file").into())
            }
            Some(Program::NotOnPath) if facts.remote => {
                return Err(format!("{name} is not on the PATH of tmux there").into())
            }
            Some(Program::NotOnPath) => {
                return Err(
                    format!("{name} is not on agentwatch's PATH, which the pane gets").into(),
                )
            }
            Some(Program::Found) | None => {}
        }
    }
    if let (Some(pid), Some(id)) = (facts.held_by, &plan.session_id) {
        if !plan.fresh && !plan.reconnects {
            // Relaunching would run the session twice. Short enough for a card.
            return Err(Failure::lasting(format!(
                "session {} is also open in pid {pid}: end that one, then r",
                crate::text::short_id(id)
            )));
        }
    }
    if !plan.fresh {
        plan.held_by = facts.held_by;
    }
    // A session that never got a first message cannot be resumed (`claude --resume` says
    // "No conversation found"); it can be started again under the same id, unless the
    // agent keeps an empty record of it, which neither opens.
    match (&plan.unrecorded, &plan.session_id, facts.recorded) {
        (Some(instead), Some(_), Some(Record::Absent)) => {
            plan.argv = instead.clone();
            plan.again = true;
        }
        (Some(_), Some(id), Some(Record::Empty)) if !plan.fresh => {
            return Err(Failure::lasting(format!(
                "session {} never got a message, and {}'s empty record of it opens neither \
                 by resume nor by its id: R starts it fresh",
                crate::text::short_id(id),
                plan.agent
            )));
        }
        _ => {}
    }
    let Some(pane) = &facts.pane else {
        return Err(Failure::lasting("the pane is gone"));
    };
    let how = match &plan.shell {
        Some(shell) => How::Type(typed(&plan, shell, pane)?),
        None => {
            // The pane still holds the process that died (not a newer one that another
            // agentwatch, or the user, started and that may have died again).
            if let Some(dead_pid) = plan.dead_pid {
                if !pane.dead || pane.pid != Some(dead_pid) {
                    return Err(ALIVE_AGAIN.into());
                }
            }
            How::Respawn
        }
    };
    Ok((plan, how))
}

const ALIVE_AGAIN: &str = "the pane is alive again (relaunched elsewhere?): nothing done";

/// The command line to type at the shell prompt, only when the shell itself is in the
/// foreground (else the keys would go to whatever runs there).
fn typed(plan: &Plan, shell: &str, pane: &PaneNow) -> Result<String, Failure> {
    let current = pane.current_command.as_str();
    if crate::agent::program_name(current).trim_start_matches('-') != shell {
        return Err(format!(
            "{current} is running in the pane, not the {shell} prompt: nothing typed"
        )
        .into());
    }
    // A script run at the prompt shows as the shell too (`#!/bin/bash`): the shell itself
    // must hold the terminal's foreground, else the keys would go to that script's job.
    if let (Some(pid), Some(fg)) = (pane.pid, pane.foreground) {
        if fg != pid {
            return Err(format!(
                "a job runs at the {shell} prompt: nothing typed (r again when it is back)"
            )
            .into());
        }
    }
    let cd = (pane.current_path != plan.cwd).then_some(plan.cwd.as_str());
    crate::launcher::typed_command(shell, &plan.argv, cd).map_err(|e| e.to_string().into())
}

/// Whether a lost agent's window may be opened again, on what was found where it would run:
/// its directory (`None`: not asked) and a live process holding its session.
pub fn may_recreate(
    plan: &crate::msg::Recreate,
    dir_exists: Option<bool>,
    held_by: Option<u32>,
) -> Result<(), crate::errors::RecreateError> {
    use crate::errors::RecreateError;
    if dir_exists == Some(false) {
        return Err(RecreateError::DirGone(plan.cwd.clone()));
    }
    if let (Some(pid), Some(id)) = (held_by, plan.session_id()) {
        return Err(RecreateError::OpenElsewhere {
            id: crate::text::short_id(id).to_string(),
            place: format!("in pid {pid}"),
        });
    }
    Ok(())
}

/// Why tmux did not carry the relaunch out, in the card's words.
pub fn failed(e: &TmuxError) -> Failure {
    match e {
        TmuxError::Failed { detail } if detail.contains("still active") => ALIVE_AGAIN.into(),
        TmuxError::NoSuchPane { .. } => Failure::lasting("the pane is gone"),
        e => e.to_string().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pane::PaneId;

    fn plan(argv: &[&str]) -> Plan {
        Plan {
            pane: PaneId(3),
            agent: "claude".into(),
            argv: argv.iter().map(|w| w.to_string()).collect(),
            cwd: "/w".into(),
            session_id: Some("0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11".into()),
            fresh: false,
            again: false,
            unrecorded: Some(vec!["claude".into(), "--session-id".into(), "X".into()]),
            reconnects: false,
            held_by: None,
            shell: None,
            dead_pid: Some(10),
        }
    }

    fn dead_pane() -> Option<PaneNow> {
        Some(PaneNow {
            pid: Some(10),
            dead: true,
            ..PaneNow::default()
        })
    }

    fn facts() -> Facts {
        Facts {
            dir_exists: Some(true),
            program: Some(Program::Found),
            recorded: Some(Record::Message),
            pane: dead_pane(),
            ..Facts::default()
        }
    }

    fn refusal(p: Plan, f: &Facts) -> Failure {
        decide(p, f).unwrap_err()
    }

    #[test]
    fn a_plan_whose_facts_hold_is_respawned_as_planned() {
        let p = plan(&["claude", "--resume", "X"]);
        assert_eq!(decide(p.clone(), &facts()), Ok((p, How::Respawn)));
    }

    #[test]
    fn a_gone_directory_is_a_lasting_refusal() {
        let f = Facts {
            dir_exists: Some(false),
            ..facts()
        };
        let e = refusal(plan(&["claude", "--resume", "X"]), &f);
        assert_eq!(e, Failure::lasting("directory /w no longer exists"));
    }

    #[test]
    fn a_missing_program_is_refused_in_the_words_of_where_tmux_looks_but_one_word_is_not_judged() {
        let missing = Facts {
            program: Some(Program::NotOnPath),
            ..facts()
        };
        let e = refusal(plan(&["claude", "--resume", "X"]), &missing);
        assert_eq!(
            e.why,
            "claude is not on agentwatch's PATH, which the pane gets"
        );
        assert!(!e.lasting, "an upgrade may be half done");
        let there = Facts {
            remote: true,
            ..missing.clone()
        };
        assert_eq!(
            refusal(plan(&["/opt/claude", "-r", "X"]), &there).why,
            "claude is not on the PATH of tmux there"
        );
        let path = Facts {
            program: Some(Program::NotExecutable),
            ..facts()
        };
        assert_eq!(
            refusal(plan(&["./bin/claude", "-r"]), &path).why,
            "./bin/claude is not an executable file"
        );
        // The pane's shell runs one word, with its own PATH.
        assert!(decide(plan(&["codex"]), &missing).is_ok());
    }

    #[test]
    fn a_session_held_open_elsewhere_is_refused_unless_the_agent_reconnects_to_it() {
        let held = Facts {
            held_by: Some(4242),
            ..facts()
        };
        let e = refusal(plan(&["claude", "--resume", "X"]), &held);
        assert_eq!(
            e,
            Failure::lasting("session 0e6a1c1e is also open in pid 4242: end that one, then r")
        );
        let reconnects = Plan {
            reconnects: true,
            ..plan(&["codex", "resume", "X"])
        };
        let (p, _) = decide(reconnects, &held).unwrap();
        assert_eq!(p.held_by, Some(4242), "the card says it reconnected");
    }

    #[test]
    fn an_unrecorded_session_is_started_again_under_its_id() {
        let f = Facts {
            recorded: Some(Record::Absent),
            ..facts()
        };
        let (p, _) = decide(plan(&["claude", "--resume", "X"]), &f).unwrap();
        assert!(p.again);
        assert_eq!(p.argv, ["claude", "--session-id", "X"]);
        // Not known: resumed as planned.
        let f = Facts {
            recorded: None,
            ..facts()
        };
        assert!(
            !decide(plan(&["claude", "--resume", "X"]), &f)
                .unwrap()
                .0
                .again
        );
    }

    #[test]
    fn an_empty_record_opens_by_neither_argv_and_says_so_with_the_way_out() {
        let f = Facts {
            recorded: Some(Record::Empty),
            ..facts()
        };
        let e = refusal(plan(&["claude", "--resume", "X"]), &f);
        assert!(e.lasting);
        assert_eq!(
            e.why,
            "session 0e6a1c1e never got a message, and claude's empty record of it opens \
             neither by resume nor by its id: R starts it fresh"
        );
        // R (a fresh start under a new id) is not refused.
        let fresh = Plan {
            fresh: true,
            ..plan(&["claude", "--session-id", "Y"])
        };
        assert!(decide(fresh, &f).is_ok());
    }

    #[test]
    fn a_pane_gone_or_alive_again_is_left_alone() {
        let gone = Facts {
            pane: None,
            ..facts()
        };
        assert_eq!(
            refusal(plan(&["claude", "-r", "X"]), &gone),
            Failure::lasting("the pane is gone")
        );
        let again = Facts {
            pane: Some(PaneNow {
                pid: Some(11),
                dead: true,
                ..PaneNow::default()
            }),
            ..facts()
        };
        assert_eq!(
            refusal(plan(&["claude", "-r", "X"]), &again).why,
            ALIVE_AGAIN
        );
    }

    #[test]
    fn at_a_prompt_the_command_is_typed_only_when_the_shell_holds_the_foreground() {
        let at_prompt = |command: &str, fg: u32, path: &str| Facts {
            pane: Some(PaneNow {
                pid: Some(20),
                dead: false,
                current_command: command.into(),
                current_path: path.into(),
                foreground: Some(fg),
            }),
            ..facts()
        };
        let typed = Plan {
            shell: Some("bash".into()),
            ..plan(&["claude", "--resume", "X"])
        };
        assert_eq!(
            decide(typed.clone(), &at_prompt("bash", 20, "/w"))
                .unwrap()
                .1,
            How::Type("claude --resume X".into())
        );
        assert_eq!(
            decide(typed.clone(), &at_prompt("-bash", 20, "/elsewhere"))
                .unwrap()
                .1,
            How::Type("cd -- /w && claude --resume X".into())
        );
        assert_eq!(
            refusal(typed.clone(), &at_prompt("vim", 20, "/w")).why,
            "vim is running in the pane, not the bash prompt: nothing typed"
        );
        assert_eq!(
            refusal(typed, &at_prompt("bash", 31, "/w")).why,
            "a job runs at the bash prompt: nothing typed (r again when it is back)"
        );
    }

    #[test]
    fn tmux_s_refusals_are_said_in_the_cards_words() {
        let active = TmuxError::Failed {
            detail: "pane %3 still active".into(),
        };
        assert_eq!(failed(&active).why, ALIVE_AGAIN);
        let gone = TmuxError::NoSuchPane {
            detail: "can't find pane: %3".into(),
        };
        assert_eq!(failed(&gone), Failure::lasting("the pane is gone"));
    }
}
