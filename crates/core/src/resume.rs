//! Pure relaunch planning: from a dead card, the exact argv, directory and session id to
//! respawn it with, or the reason it must not be relaunched. Never starts a fresh session
//! unless asked to (`R`), never uses an id that does not look like the agent's ids.

use crate::agent::{fill, program_prefix, session_id_from_argv, AgentDef, Agents};
use crate::card::Card;
use crate::pane::PaneId;
use crate::words::command_words;

/// The pane option holding extra arguments given to `agentwatch spawn ... -- ARGS`, as a JSON
/// array of strings: they are kept for every relaunch.
pub const ARGS_OPTION: crate::pane::Opt = crate::pane::Opt::Args;

/// Everything needed to respawn one pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub pane: PaneId,
    pub agent: String,
    pub argv: Vec<String>,
    pub cwd: String,
    /// The session id resumed (or, when fresh, handed to the agent); `None` for agents
    /// without ids.
    pub session_id: Option<String>,
    pub fresh: bool,
    /// The session is started again under its own id (`claude --session-id <id>`), not
    /// resumed: the agent keeps no record of it (it never got a first message).
    pub again: bool,
    /// What to run instead of resuming when the agent turns out to keep no record of the
    /// session (the relauncher looks, just before): the same id started again. `None` when
    /// the agent cannot start with an id of ours.
    pub unrecorded: Option<Vec<String>>,
    /// Resuming a session a live process elsewhere holds reconnects to it (codex); when
    /// false, such a relaunch is refused rather than run the session twice.
    pub reconnects: bool,
    /// Filled in by the relauncher: the live process that held the session.
    pub held_by: Option<u32>,
    /// For an agent typed at a shell prompt: the shell, to type the command at.
    pub shell: Option<String>,
    /// The pid of the dead process: if the pane runs another by the time the relaunch
    /// happens, someone else relaunched it (it may even have died again) and nothing is done.
    pub dead_pid: Option<u32>,
}

/// Why a relaunch was refused, in the words shown on the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

/// Why a planned relaunch was not carried out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub why: String,
    /// Waiting will not remove the cause (the directory is gone, the crash record cannot be
    /// written): trying again on a timer only burns the auto-resume budget.
    pub lasting: bool,
    /// The crash record could not be written (said in the header until one can be).
    pub unsaved: Option<crate::errors::StoreError>,
}

impl Failure {
    pub fn lasting(why: impl Into<String>) -> Failure {
        Failure {
            why: why.into(),
            lasting: true,
            unsaved: None,
        }
    }
}

impl From<String> for Failure {
    fn from(why: String) -> Failure {
        Failure {
            why,
            lasting: false,
            unsaved: None,
        }
    }
}

impl From<&str> for Failure {
    fn from(why: &str) -> Failure {
        Failure::from(why.to_string())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

/// The session id to resume for a card, if one is known and valid: the pane option first,
/// then the start command's argv. A recorded id of the wrong shape is an error, never used;
/// a word on the command line that is not an id (`gemini --resume latest`, `--resume 3`)
/// names no session.
pub fn known_session_id(card: &Card, def: &AgentDef) -> Result<Option<String>, Refusal> {
    let p = &card.pane;
    if p.opts.session_id.is_empty() {
        return Ok(named_session_id(card).filter(|id| def.id.accepts(id)));
    }
    let id = &p.opts.session_id;
    if def.id.accepts(id) {
        return Ok(Some(id.clone()));
    }
    Err(Refusal(format!(
        "session id {:?} does not look like a {} id: relaunch refused",
        crate::text::fit(id, 40),
        def.name
    )))
}

/// The session id named on the agent's command line: the foreground argv of an agent typed
/// at a shell prompt, else the pane's start command. Not checked against the id shape.
pub fn named_session_id(card: &Card) -> Option<String> {
    let kind = card.agent.as_deref().unwrap_or_default();
    match &card.launcher {
        Some(launcher) => session_id_from_argv(kind, &launcher.fg_argv),
        None => session_id_from_argv(kind, &command_words(&card.pane.start_command))
            .or_else(|| card.argv_id.clone()),
    }
}

/// Plans a relaunch of `card`. `fresh` is the deliberate `R`: start the agent's `start`
/// argv with `new_id` (used when the start argv takes an id).
pub fn plan(card: &Card, agents: &Agents, fresh: bool, new_id: &str) -> Result<Plan, Refusal> {
    let p = &card.pane;
    if !p.dead {
        return Err(Refusal("still running: nothing to relaunch".into()));
    }
    let Some(def) = card.agent.as_deref().and_then(|k| agents.get(k)) else {
        return Err(Refusal(
            "not an agent pane: agentwatch only relaunches agents".into(),
        ));
    };
    let cwd = [&p.opts.cwd, &p.start_path]
        .into_iter()
        .find(|s| !s.is_empty())
        .cloned()
        .ok_or_else(|| Refusal("no working directory recorded: relaunch refused".into()))?;
    if let Some(words) = orphans_words(card) {
        return Err(Refusal(format!(
            "{words}: a relaunch would start a second one; x ends it, then r"
        )));
    }
    let launcher = card.launcher.as_ref();
    if let Some(h) = launcher.filter(|h| h.alive && !h.prompt) {
        return Err(Refusal(format!(
            "{} ended, but {} still runs in the pane: end it (or x closes the pane), then r",
            def.name, h.name
        )));
    }
    let extra = extra_args(card)?;
    // Said by the agent itself when this id was last resumed: it has no such session.
    let unknown_to_agent = |id: &String| card.no_session.as_ref() == Some(id);
    let (template, session_id) = if fresh {
        let id = def.start_takes_id().then(|| new_id.to_string());
        (&def.start, id)
    } else {
        if def.resume.is_empty() {
            return Err(Refusal(format!(
                "no resume command for {}: set resume in [agents.{}], or press R to start fresh",
                def.name, def.name
            )));
        }
        if def.resume_needs_id() {
            match known_session_id(card, def)? {
                Some(id) if unknown_to_agent(&id) && !def.starts_again() => {
                    return Err(Refusal(no_session_words(&def.name, &id)))
                }
                Some(id) => (&def.resume, Some(id)),
                None => return Err(Refusal(no_id_words(&def.name))),
            }
        } else {
            (&def.resume, None)
        }
    };
    let prefix = launcher
        .filter(|h| !h.prompt)
        .and_then(|h| run_through(h, def, agents));
    let build = |template: &[String]| {
        let mut argv = fill(template, session_id.as_deref());
        if let Some(prefix) = &prefix {
            // As it ran: through the wrapper that passes its arguments on, or the agent's
            // own program (a launcher and its script), with the resume arguments after it.
            argv.splice(..1.min(argv.len()), prefix.iter().cloned());
        }
        argv.extend(extra.iter().cloned());
        argv
    };
    let resumes_id = !fresh && session_id.is_some() && def.starts_again();
    let again = resumes_id && session_id.as_ref().is_some_and(unknown_to_agent);
    let argv = build(if again { &def.start } else { template });
    Ok(Plan {
        pane: p.id,
        agent: def.name.clone(),
        argv,
        cwd,
        fresh,
        again,
        unrecorded: (resumes_id && !again).then(|| build(&def.start)),
        reconnects: def.resume_reconnects,
        held_by: None,
        session_id,
        shell: launcher
            .filter(|h| h.prompt && h.alive)
            .map(|h| h.name.clone()),
        dead_pid: if launcher.is_some_and(|h| h.alive) {
            None
        } else {
            p.pid
        },
    })
}

/// What a relaunch of an agent its pane's process ran starts, before the resume
/// arguments: the wrapper again when it passes its arguments through (named in the config,
/// or seen doing it), else the agent's own program as it ran; `None`: the kind's own argv.
pub fn run_through(
    launcher: &crate::card::Launcher,
    def: &AgentDef,
    agents: &Agents,
) -> Option<Vec<String>> {
    let declared = agents
        .by_wrapper(&launcher.name, Some(&launcher.argv))
        .is_some_and(|d| d.name == def.name);
    let prefix = program_prefix(&launcher.argv);
    let tail = &launcher.argv[prefix.len().min(launcher.argv.len())..];
    let seen = !tail.is_empty() && launcher.fg_argv.ends_with(tail);
    if declared || seen {
        return Some(if launcher.argv.is_empty() {
            vec![launcher.name.clone()]
        } else {
            prefix
        });
    }
    (!launcher.fg_argv.is_empty()).then(|| program_prefix(&launcher.fg_argv))
}

/// The words for a resume the agent answered with "no such session" (the id as the card
/// shows it, short enough for an 80-column card; `status` and the journal carry it whole).
pub fn no_session_words(agent: &str, id: &str) -> String {
    format!(
        "resume failed: {agent} has no session {}: R starts a fresh session",
        crate::text::short_id(id)
    )
}

/// The session id the agent said it has no record of, when resuming it is all that can be
/// done (the agent cannot start again under an id of ours).
pub fn unresumable(card: &Card, agents: &Agents) -> Option<String> {
    let def = card.agent.as_deref().and_then(|k| agents.get(k))?;
    let id = card.no_session.as_ref()?;
    let known = known_session_id(card, def).ok().flatten();
    (!def.starts_again() && known.as_ref() == Some(id)).then(|| id.clone())
}

/// What outlived the card's last run outside its pane, said on the card (`codex (pid 4242)
/// still runs outside the pane`), or `None` when nothing did.
pub fn orphans_words(card: &Card) -> Option<String> {
    let first = card.orphans.first()?;
    // The agent's name where its argv names it (`node …/gemini-cli/…` is gemini), else the
    // process's own.
    let name = |p: &crate::pane::Proc| match card.agent.as_deref() {
        Some(agent) if p.argv.iter().any(|w| w.contains(agent)) => agent.to_string(),
        _ => p.comm.clone(),
    };
    Some(match card.orphans.len() {
        1 => format!(
            "{} (pid {}) of its last run still runs outside the pane",
            name(first),
            first.pid
        ),
        n => format!(
            "{} (pid {}) and {} more of its last run still run outside the pane",
            name(first),
            first.pid,
            n - 1
        ),
    })
}

/// What the card says when no id is known: `r` will not guess, `R` is the deliberate way.
pub const NO_ID: &str = "no session id: R starts a fresh session";

/// [`NO_ID`], with where the agent keeps its ids when agentwatch cannot read them there.
pub fn no_id_words(agent: &str) -> String {
    let hidden = match agent {
        "opencode" => {
            "opencode keeps them in its database, not read here, and prints one only when it exits cleanly"
        }
        "amp" => "amp keeps its threads on its server (amp threads continue <id> shows it)",
        _ => return NO_ID.to_string(),
    };
    format!("no session id: {hidden}: R starts a fresh session")
}

/// Whether a dead card of this kind lacks the id its resume needs.
pub fn lacks_id(card: &Card, agents: &Agents) -> bool {
    // A recorded id, well formed or not, is not lacking (and this runs for every card on
    // every poll).
    if !card.pane.opts.session_id.is_empty() {
        return false;
    }
    let Some(def) = card.agent.as_deref().and_then(|k| agents.get(k)) else {
        return false;
    };
    def.resume_needs_id() && matches!(known_session_id(card, def), Ok(None))
}

fn extra_args(card: &Card) -> Result<Vec<String>, Refusal> {
    let raw = card.pane.opts.args.trim();
    if raw.is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str::<Vec<String>>(raw).map_err(|_| {
        Refusal(format!(
            "pane option {} is not a JSON list of strings: fix or unset it",
            ARGS_OPTION.name()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::observe;
    use crate::pane::Pane;
    use crate::testkit::T0;

    const ID: &str = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
    const NEW: &str = "11111111-2222-4333-8444-555555555555";

    fn dead_card(kind: &str, start: &str, opt_id: &str) -> Card {
        let p = Pane {
            id: PaneId(7),
            dead: true,
            dead_status: Some(1),
            start_command: start.into(),
            opts: crate::pane::PaneOptions {
                cwd: "/home/u/proj".into(),
                session_id: opt_id.into(),
                ..Default::default()
            },
            start_path: "/home/u".into(),
            ..Pane::default()
        };
        observe(None, p, Some(kind.into()), None, T0)
    }

    #[test]
    fn an_orphan_of_the_last_run_refuses_every_relaunch_and_is_named_by_its_agent() {
        let a = Agents::default();
        let mut card = dead_card("gemini", "gemini", ID);
        let node = |pid: u32| crate::pane::Proc {
            pid,
            ppid: 1,
            comm: "node".into(),
            argv: vec![
                "/usr/bin/node".into(),
                "--max-old-space-size=12052".into(),
                "/n/.bin/gemini".into(),
            ],
            start: Some(T0),
        };
        card.orphans = vec![node(4242)];
        let why = "gemini (pid 4242) of its last run still runs outside the pane: a relaunch would start a second one; x ends it, then r";
        assert_eq!(plan(&card, &a, false, NEW), Err(Refusal(why.into())));
        assert_eq!(
            plan(&card, &a, true, NEW),
            Err(Refusal(why.into())),
            "R too"
        );
        card.orphans.push(node(4243));
        assert_eq!(
            orphans_words(&card).unwrap(),
            "gemini (pid 4242) and 1 more of its last run still run outside the pane"
        );
        card.orphans.clear();
        assert!(plan(&card, &a, false, NEW).is_ok());
    }

    #[test]
    fn claude_resumes_the_recorded_id_in_the_recorded_directory() {
        let a = Agents::default();
        let plan = plan(&dead_card("claude", "claude", ID), &a, false, NEW).unwrap();
        assert_eq!(plan.argv, ["claude", "--resume", ID]);
        assert_eq!(plan.cwd, "/home/u/proj");
        assert_eq!(plan.session_id.as_deref(), Some(ID));
    }

    #[test]
    fn the_id_in_the_start_command_is_used_when_no_option_is_set() {
        let a = Agents::default();
        let card = dead_card("codex", &format!("codex resume {ID}"), "");
        assert_eq!(
            plan(&card, &a, false, NEW).unwrap().argv,
            ["codex", "resume", ID]
        );
    }

    #[test]
    fn without_an_id_r_refuses_and_says_r_capital_starts_fresh() {
        let a = Agents::default();
        let card = dead_card("claude", "claude", "");
        assert_eq!(plan(&card, &a, false, NEW), Err(Refusal(NO_ID.into())));
        assert!(lacks_id(&card, &a));
        let fresh = plan(&card, &a, true, NEW).unwrap();
        assert_eq!(fresh.argv, ["claude", "--session-id", NEW]);
        assert!(fresh.fresh);
    }

    #[test]
    fn gemini_resume_latest_or_an_index_names_no_session() {
        let a = Agents::default();
        for start in [
            "gemini --resume latest",
            "gemini --resume 3",
            "gemini -r latest",
        ] {
            let card = dead_card("gemini", start, "");
            assert!(named_session_id(&card).is_some(), "{start}");
            let def = a.get("gemini").unwrap();
            assert_eq!(known_session_id(&card, def), Ok(None), "{start}");
            assert_eq!(plan(&card, &a, false, NEW), Err(Refusal(NO_ID.into())));
        }
        let card = dead_card("gemini", &format!("gemini --resume {ID}"), "");
        assert_eq!(
            plan(&card, &a, false, NEW).unwrap().argv,
            ["gemini", "--resume", ID]
        );
    }

    #[test]
    fn a_session_the_agent_has_no_record_of_is_started_again_or_refused() {
        let a = Agents::default();
        // claude: the resume carries the start-again argv for the relauncher's check.
        let mut card = dead_card("claude", "claude", ID);
        let p = plan(&card, &a, false, NEW).unwrap();
        assert_eq!(p.argv, ["claude", "--resume", ID]);
        let again = ["claude", "--session-id", ID].map(String::from).to_vec();
        assert_eq!(p.unrecorded, Some(again.clone()));
        assert!(!p.again);
        // claude said it has no such session: started again, not resumed.
        card.no_session = Some(ID.into());
        let p = plan(&card, &a, false, NEW).unwrap();
        assert_eq!((p.argv, p.again, p.unrecorded), (again, true, None));
        // codex cannot start under an id of ours: `r` refuses, `R` starts fresh.
        let mut card = dead_card("codex", "codex", ID);
        assert_eq!(plan(&card, &a, false, NEW).unwrap().unrecorded, None);
        card.no_session = Some(ID.into());
        assert_eq!(
            plan(&card, &a, false, NEW),
            Err(Refusal(
                "resume failed: codex has no session 0e6a1c1e: R starts a fresh session".into()
            ))
        );
        assert_eq!(unresumable(&card, &a), Some(ID.to_string()));
        assert_eq!(plan(&card, &a, true, NEW).unwrap().argv, ["codex"]);
        // Another id than the one it refused is resumed as usual.
        card.no_session = Some(NEW.into());
        assert!(plan(&card, &a, false, NEW).is_ok());
    }

    #[test]
    fn where_an_id_cannot_be_read_the_card_says_where_it_is() {
        let a = Agents::default();
        let card = dead_card("opencode", "opencode", "");
        let Err(Refusal(why)) = plan(&card, &a, false, NEW) else {
            panic!("no id, no resume");
        };
        assert!(why.contains("opencode keeps them in its database"), "{why}");
        assert!(why.ends_with("R starts a fresh session"), "{why}");
        assert!(no_id_words("amp").contains("on its server"));
        assert_eq!(no_id_words("claude"), NO_ID);
        // The id on their command lines is used.
        let card = dead_card("opencode", "opencode -s ses_dcee8e322fferoOTCq05rLS6Ah", "");
        assert_eq!(
            plan(&card, &a, false, NEW).unwrap().argv,
            ["opencode", "--session", "ses_dcee8e322fferoOTCq05rLS6Ah"]
        );
        let t = "T-12345678-0000-4000-8000-000000000000";
        let card = dead_card("amp", &format!("amp t c {t}"), "");
        assert_eq!(
            plan(&card, &a, false, NEW).unwrap().argv,
            ["amp", "threads", "continue", t]
        );
    }

    #[test]
    fn a_hostile_id_is_refused_never_passed_on() {
        let a = Agents::default();
        for bad in [
            "$(touch /tmp/pwned)",
            "x; rm -rf ~",
            "#{pane_id}",
            "`id`",
            "a\nb",
            "--dangerously-skip-permissions",
        ] {
            let card = dead_card("claude", "claude", bad);
            let r = plan(&card, &a, false, NEW);
            assert!(r.is_err(), "{bad:?} gave {r:?}");
        }
    }

    #[test]
    fn aider_resumes_by_its_own_flag_without_an_id() {
        let a = Agents::default();
        let plan = plan(&dead_card("aider", "aider", ""), &a, false, NEW).unwrap();
        assert_eq!(plan.argv, ["aider", "--restore-chat-history"]);
        assert_eq!(plan.session_id, None);
    }

    #[test]
    fn extra_spawn_args_are_kept_and_a_live_pane_is_refused() {
        let a = Agents::default();
        let mut card = dead_card("gemini", "gemini", ID);
        card.pane.opts.args = r#"["--model","pro 2"]"#.into();
        assert_eq!(
            plan(&card, &a, false, NEW).unwrap().argv,
            ["gemini", "--resume", ID, "--model", "pro 2"]
        );
        card.pane.dead = false;
        assert!(plan(&card, &a, false, NEW).is_err());
    }

    fn launched(argv: &[&str], fg_argv: &[&str], alive: bool) -> Card {
        let mut c = dead_card("claude", "bash", ID);
        c.launcher = Some(crate::card::Launcher {
            name: crate::agent::program_name(argv[0]).to_string(),
            prompt: false,
            alive,
            argv: argv.iter().map(|s| s.to_string()).collect(),
            fg_argv: fg_argv.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        });
        c
    }

    #[test]
    fn an_agent_a_wrapper_ran_is_resumed_through_the_wrapper_or_its_own_program() {
        let a = Agents::default();
        // The wrapper passed its arguments on: it runs again, with the resume arguments.
        let c = launched(
            &["/bin/bash", "/home/u/bin/cc", "--session-id", ID],
            &[
                "claude",
                "--dangerously-skip-permissions",
                "--session-id",
                ID,
            ],
            false,
        );
        let p = plan(&c, &a, false, NEW).unwrap();
        assert_eq!(p.argv, ["/bin/bash", "/home/u/bin/cc", "--resume", ID]);
        assert_eq!(p.shell, None, "respawned, never typed");
        // bash -c: the agent's own program as it ran (here a launcher and its script).
        let c = launched(
            &["bash", "-c", "npx @anthropic-ai/claude-code; echo done"],
            &[
                "node",
                "/home/u/.npm/_npx/1/node_modules/.bin/claude",
                "--session-id",
                ID,
            ],
            false,
        );
        let p = plan(&c, &a, false, NEW).unwrap();
        assert_eq!(
            p.argv,
            [
                "node",
                "/home/u/.npm/_npx/1/node_modules/.bin/claude",
                "--resume",
                ID
            ]
        );
        // The launcher still runs: nothing is respawned over it.
        let c = launched(&["bash", "-c", "claude; read"], &["claude"], true);
        let Err(Refusal(why)) = plan(&c, &a, false, NEW) else {
            panic!("a live launcher must refuse");
        };
        assert_eq!(
            why,
            "claude ended, but bash still runs in the pane: end it (or x closes the pane), then r"
        );
    }
}
