use super::*;

fn v(words: &[&str]) -> Vec<String> {
    words.iter().map(|s| s.to_string()).collect()
}

fn pane(cur: &str, start: &str) -> Pane {
    Pane {
        current_command: cur.into(),
        start_command: start.into(),
        ..Pane::default()
    }
}

#[test]
fn recognised_by_current_command() {
    let a = Agents::default();
    assert_eq!(
        a.recognise(&pane("claude", ""), None)
            .map(|d| d.name.as_str()),
        Some("claude")
    );
}

#[test]
fn recognised_by_first_word_of_start_command_even_as_a_path_or_shell_string() {
    let a = Agents::default();
    let p = pane("bash", "/home/u/.local/bin/aider --model x");
    assert_eq!(
        a.recognise(&p, None).map(|d| d.name.as_str()),
        Some("aider")
    );
    let p = pane(
        "bash",
        r#""codex resume 0199a213-81c0-7800-8aa1-bbab2a035a53""#,
    );
    assert_eq!(
        a.recognise(&p, None).map(|d| d.name.as_str()),
        Some("codex")
    );
}

#[test]
fn recognised_through_a_launcher_running_a_matching_script() {
    let a = Agents::default();
    let fg = v(&["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"]);
    assert_eq!(
        a.recognise(&pane("node", "bash"), Some(&fg))
            .map(|d| d.name.as_str()),
        Some("codex")
    );
    let fg = v(&["python3", "-m", "aider"]);
    assert_eq!(
        a.recognise(&pane("python3", "zsh"), Some(&fg))
            .map(|d| d.name.as_str()),
        Some("aider")
    );
}

#[test]
fn the_agent_option_wins_and_other_panes_are_not_agents() {
    let a = Agents::default();
    let mut p = pane("node", "bash");
    assert!(a.recognise(&p, Some(&v(&["node", "server.js"]))).is_none());
    assert!(a.recognise(&pane("vim", "bash"), None).is_none());
    p.opts.agent = "gemini".into();
    assert_eq!(
        a.recognise(&p, None).map(|d| d.name.as_str()),
        Some("gemini")
    );
}

#[test]
fn session_ids_are_read_from_argv_forms() {
    let id = "0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a11";
    for (kind, argv) in [
        ("claude", v(&["claude", "--session-id", id])),
        ("claude", v(&["claude", &format!("--resume={id}")])),
        ("codex", v(&["codex", "resume", id])),
        ("claude", v(&["claude", "-r", id])),
        ("opencode", v(&["opencode", "-s", id])),
        ("opencode", v(&["opencode", "--session", id])),
        ("amp", v(&["amp", "threads", "continue", id])),
        ("amp", v(&["amp", "t", "c", id])),
        ("amp", v(&["node", "/x/bin/amp", "threads", "c", id])),
    ] {
        let got = session_id_from_argv(kind, &argv);
        assert_eq!(got.as_deref(), Some(id), "{argv:?}");
    }
    assert_eq!(
        session_id_from_argv("claude", &v(&["claude", "--resume"])),
        None
    );
    assert_eq!(
        session_id_from_argv("claude", &v(&["claude", "--resume", "--x"])),
        None
    );
    // Words that take a value for one agent are plain words for another.
    for (kind, argv) in [
        ("codex", v(&["codex", "-s", "read-only"])),
        ("gemini", v(&["gemini", "-s", "fix it"])),
        ("claude", v(&["claude", "resume", "the work"])),
        ("amp", v(&["amp", "continue", id])),
    ] {
        assert_eq!(session_id_from_argv(kind, &argv), None, "{argv:?}");
    }
}

#[test]
fn id_shapes_refuse_anything_odd() {
    assert!(IdShape::Uuid.accepts("0E6A1C1E-4f7b-4a43-9d55-3f1f1b7f0a11"));
    assert!(!IdShape::Uuid.accepts("0e6a1c1e-4f7b-4a43-9d55-3f1f1b7f0a1"));
    assert!(IdShape::Token.accepts("ses_01J9.x-y"));
    for bad in [
        "",
        "-rf",
        "a b",
        "a;b",
        "$(x)",
        "`x`",
        "#{pane_id}",
        "a\nb",
        "'q'",
    ] {
        assert!(!IdShape::Token.accepts(bad), "{bad:?}");
        assert!(!IdShape::Uuid.accepts(bad), "{bad:?}");
    }
}

fn proc_(pid: u32, argv: &[&str]) -> Proc {
    Proc {
        pid,
        ppid: 1,
        comm: program_name(argv[0]).to_string(),
        argv: v(argv),
        start: None,
    }
}

fn route_of(
    agents: &Agents,
    comm: &str,
    own: &[&str],
    tree: &[Proc],
    hosted_before: bool,
) -> (String, Option<u32>, bool) {
    let shells = vec!["bash".to_string(), "zsh".to_string()];
    let mut p = pane("x", "x");
    p.pid = Some(100);
    let own = v(own);
    let before = Before {
        hosted: hosted_before,
        prompt: true,
    };
    match route(agents, &shells, &p, comm, Some(&own), tree, before) {
        Route::Own => ("own".into(), None, false),
        Route::Hosted {
            prompt,
            agent,
            kind,
        } => (
            kind.map_or("hosted".into(), |k| format!("wrapper of {}", k.name)),
            agent.map(|a| a.pid),
            prompt,
        ),
    }
}

#[test]
fn every_shape_of_starting_an_agent_is_routed_to_its_process() {
    let a = Agents::default();
    let claude = [proc_(7, &["claude", "--dangerously-skip-permissions"])];
    // The agent is the pane's process: directly, under a launcher, as a script.
    assert_eq!(route_of(&a, "claude", &["claude"], &[], false).0, "own");
    let node = ["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"];
    assert_eq!(route_of(&a, "node", &node, &[], false).0, "own");
    // A launcher naming the agent stands for it (it exits with the agent's status).
    assert_eq!(
        route_of(&a, "uv", &["uv", "run", "aider"], &[], false).0,
        "own"
    );
    assert_eq!(
        route_of(
            &a,
            "bash",
            &["bash", "/home/u/bin/claude", "-x"],
            &[],
            false
        )
        .0,
        "own",
        "a bash script named like the agent is the agent"
    );
    // A wrapper, bash -c, op run, uv run, npx: the agent runs below.
    for own in [
        &["/bin/bash", "/home/u/bin/cc"][..],
        &["bash", "-c", "claude; echo done"],
        &["op", "run", "--", "claude"],
        &["time", "claude"],
    ] {
        let comm = program_name(own[0]);
        let (r, agent, prompt) = route_of(&a, comm, own, &claude, false);
        assert_eq!(
            (r.as_str(), agent, prompt),
            ("hosted", Some(7), false),
            "{own:?}"
        );
    }
    // An interactive shell: a prompt to type at, with or without an agent running.
    assert_eq!(
        route_of(&a, "bash", &["-bash"], &claude, false),
        ("hosted".into(), Some(7), true)
    );
    assert_eq!(
        route_of(&a, "zsh", &["zsh", "-l"], &[], false),
        ("hosted".into(), None, true)
    );
    // tmux runs a one-string command as `bash -c claude`, which is about to exec it.
    assert_eq!(
        route_of(&a, "bash", &["bash", "-c", "claude --resume x"], &[], false).0,
        "own"
    );
    assert_eq!(
        route_of(&a, "bash", &["bash", "-c", "claude; sleep 9"], &[], false).0,
        "hosted"
    );
    // Something else entirely is nobody's host, unless an agent ran below it.
    assert_eq!(route_of(&a, "vim", &["vim"], &[], false).0, "own");
    assert_eq!(
        route_of(&a, "sleep", &["sleep", "1d"], &[], true),
        ("hosted".into(), None, false),
        "bash -c exec'd its last command after the agent ended"
    );
    // A wrapper named in the config hosts its kind before the agent shows up.
    let mut defs = builtin();
    defs[0].wrappers = vec!["cc".into()];
    let a = Agents::new(defs);
    assert_eq!(
        route_of(&a, "cc", &["/bin/bash", "/home/u/bin/cc"], &[], false).0,
        "wrapper of claude"
    );
}

#[test]
fn program_prefixes_and_interactive_shells() {
    assert_eq!(
        program_prefix(&v(&["/bin/bash", "/home/u/bin/cc", "--model", "x"])),
        v(&["/bin/bash", "/home/u/bin/cc"])
    );
    assert_eq!(
        program_prefix(&v(&[
            "node",
            "--max-old-space-size=4096",
            "/x/cli.js",
            "-r"
        ])),
        v(&["node", "--max-old-space-size=4096", "/x/cli.js"])
    );
    assert_eq!(
        program_prefix(&v(&["python3", "-m", "aider", "--yes"])),
        v(&["python3", "-m", "aider"])
    );
    assert_eq!(
        program_prefix(&v(&["claude", "--resume", "x"])),
        v(&["claude"])
    );
    for (argv, interactive) in [
        (&["-bash"][..], true),
        (&["zsh", "-l"], true),
        (&["bash", "--login", "-i"], true),
        (&["bash", "-c", "claude"], false),
        (&["bash", "-lc", "claude"], false),
        (&["bash", "script.sh"], false),
        // Options with a value of their own take it with them (issue 28).
        (&["bash", "--noprofile", "--rcfile", "/tmp/rc"], true),
        (&["bash", "--rcfile", "/tmp/rc", "-i"], true),
        (&["bash", "--init-file", "/tmp/rc"], true),
        (&["bash", "-o", "vi"], true),
        (&["bash", "-O", "extglob", "-l"], true),
        (&["bash", "--rcfile", "/tmp/rc", "script.sh"], false),
        (&["bash", "--", "script.sh"], false),
        (&["bash", "--command", "x"], false),
        (&["fish", "-C", "set x 1"], true),
        (&["fish", "--init-command", "set x 1"], true),
        (&["fish", "--init-command=set x 1"], true),
        (&["fish", "-c", "claude"], false),
        (&["zsh", "-o", "vi", "-l"], true),
        (&["/usr/bin/zsh", "-f", "script.zsh"], false),
    ] {
        assert_eq!(is_interactive_shell(&v(argv)), interactive, "{argv:?}");
    }
}

/// The real CLIs' screens at 80x24, as captured by hand (private HOME, a stub model server):
/// what each says the agent does.
#[test]
fn the_real_screens_say_what_the_agent_does() {
    let def = |name: &str| builtin().into_iter().find(|d| d.name == name).unwrap();
    let screens: &[(&str, &str, &str, Option<&str>)] = &[
        (
            "claude",
            "claude 2.1.197 folder trust",
            include_str!("../../../../tests/fixtures/screens/claude-2.1.197-trust-80x24.txt"),
            Some("Quick safety check: Is this a project you created or one you trust?"),
        ),
        (
            "claude",
            "claude 2.1.332 folder trust",
            include_str!("../../../../tests/fixtures/screens/claude-2.1.332-trust-80x24.txt"),
            Some("Quick safety check: Is this a project you created or one you trust?"),
        ),
        (
            "claude",
            "claude 2.1.197 custom API key",
            include_str!("../../../../tests/fixtures/screens/claude-2.1.197-api-key-80x24.txt"),
            Some("Do you want to use this API key?"),
        ),
        (
            "claude",
            "claude 2.1.197 at its input box",
            include_str!("../../../../tests/fixtures/screens/claude-2.1.197-idle-80x24.txt"),
            None,
        ),
        (
            "claude",
            "claude 2.1.197 at work",
            include_str!("../../../../tests/fixtures/screens/claude-2.1.197-busy-80x24.txt"),
            None,
        ),
        (
            "codex",
            "codex 0.171.0 login choice",
            include_str!("../../../../tests/fixtures/screens/codex-0.171.0-login-choice-80x24.txt"),
            Some("Choose how you want to use Codex."),
        ),
        (
            "codex",
            "codex 0.171.0 API-key entry",
            include_str!(
                "../../../../tests/fixtures/screens/codex-0.171.0-login-apikey-entry-80x24.txt"
            ),
            Some("Paste or type your API key below."),
        ),
        (
            "codex",
            "codex 0.171.0 folder trust (a git repo)",
            include_str!(
                "../../../../tests/fixtures/screens/codex-0.171.0-trust-gitrepo-80x24.txt"
            ),
            Some("Trust this folder?"),
        ),
        (
            "codex",
            "codex 0.171.0 asking to run a command (a stub model server)",
            include_str!(
                "../../../../tests/fixtures/screens/codex-0.171.0-approval-exec-80x24.txt"
            ),
            Some("Would you like to run the following command?"),
        ),
        (
            "codex",
            "codex 0.171.0 at its input box",
            include_str!(
                "../../../../tests/fixtures/screens/codex-0.171.0-idle-provider-80x24.txt"
            ),
            None,
        ),
        (
            "codex",
            "codex 0.171.0 at work",
            include_str!(
                "../../../../tests/fixtures/screens/codex-0.171.0-working-provider-80x24.txt"
            ),
            None,
        ),
        (
            "gemini",
            "gemini 0.61.0 folder trust, its question 13 lines up",
            include_str!("../../../../tests/fixtures/screens/gemini-0.61.0-trust-80x24.txt"),
            Some("Do you trust the files in this folder?"),
        ),
        (
            "gemini",
            "gemini 0.61.0 sign-in choice",
            include_str!("../../../../tests/fixtures/screens/gemini-0.61.0-auth-choice-80x24.txt"),
            Some("How would you like to authenticate for this project?"),
        ),
        (
            "gemini",
            "gemini 0.61.0 API-key entry",
            include_str!("../../../../tests/fixtures/screens/gemini-0.61.0-apikey-entry-80x24.txt"),
            Some("Enter Gemini API Key"),
        ),
        (
            "gemini",
            "gemini 0.61.0 at its input box",
            include_str!("../../../../tests/fixtures/screens/gemini-0.61.0-idle-80x24.txt"),
            None,
        ),
        (
            "gemini",
            "gemini 0.61.0 at work",
            include_str!("../../../../tests/fixtures/screens/gemini-0.61.0-working-80x24.txt"),
            None,
        ),
        (
            "aider",
            "aider 0.86.2 asking about .gitignore",
            include_str!("../../../../tests/fixtures/screens/aider-0.86.2-gitignore-80x24.txt"),
            Some("(Y)es/(N)o"),
        ),
    ];
    for (agent, what, screen, waiting) in screens {
        assert_eq!(def(agent).waiting_on(screen).as_deref(), *waiting, "{what}");
    }
    let doing = |agent: &str, screen: &str| def(agent).screen_says(screen).map(|r| r.doing);
    assert_eq!(
        doing("claude", screens[3].2),
        Some(crate::attention::Doing::Idle)
    );
    assert_eq!(
        doing("claude", screens[4].2),
        Some(crate::attention::Doing::Working)
    );
    for (i, want) in [
        (8, crate::attention::Doing::Waiting),
        (9, crate::attention::Doing::Idle),
        (10, crate::attention::Doing::Working),
        (14, crate::attention::Doing::Idle),
        (15, crate::attention::Doing::Working),
    ] {
        assert_eq!(
            doing(screens[i].0, screens[i].2),
            Some(want),
            "{}",
            screens[i].1
        );
    }
    // codex's two "no such session" answers, as captured (wrapped lines joined, as a tail
    // is read).
    let codex = def("codex");
    assert!(codex.says_no_session(
        "ERROR: No saved session found with ID a1a6fa59-3a8a-4fd6-b9ee-3191e7dc8340. Run `codex resume` without an ID to choose from existing sessions."
    ));
    assert!(codex.says_no_session(
        "Error: Failed to resume session from /h/.codex/sessions/2026/12/02/rollout-2026-12-02T05-56-23-01a23553-5648-74d2-ab69-2a1a529d5011.jsonl: thread/resume failed during TUI bootstrap: thread/resume failed: no rollout found for thread id 01a23553-5648-74d2-ab69-2a1a529d5011 (code -32600)"
    ));
}
