//! What an argv says: a program's name, a launcher (`npx`, `node`) and the script it runs,
//! the words before an agent's own, an interactive shell.

/// Programs that run an agent's script rather than being the agent (`node …/bin/codex`).
pub const LAUNCHERS: &[&str] = &[
    "node", "nodejs", "bun", "deno", "npx", "pnpx", "bunx", "python", "python3", "pypy3", "uv",
    "uvx", "pipx", "ruby", "tsx", "ts-node",
];

pub fn is_launcher(program: &str) -> bool {
    LAUNCHERS.contains(&program) || program.starts_with("python3.")
}

/// Basename of a path, lowercased extension stripped for scripts (`codex.js` -> `codex`).
pub fn program_name(word: &str) -> &str {
    let base = word.rsplit('/').next().unwrap_or(word);
    for ext in [".js", ".mjs", ".cjs", ".ts", ".py", ".rb"] {
        if let Some(stem) = base.strip_suffix(ext) {
            return stem;
        }
    }
    base
}

/// The script a launcher runs: its first argument that is not an option.
/// `node --max-old-space-size=4096 /usr/lib/node_modules/@openai/codex/bin/codex.js` -> `codex`;
/// `npx @openai/codex` -> `codex`; `python3 -m aider` -> `aider`.
pub fn launched_script(argv: &[String]) -> Option<&str> {
    let mut it = argv.iter().skip(1);
    while let Some(w) = it.next() {
        if w == "-m" {
            return it.next().map(|m| m.as_str());
        }
        if w == "run" || w == "exec" || w == "tool" {
            continue;
        }
        if !w.starts_with('-') {
            return Some(program_name(w));
        }
    }
    None
}

/// Programs that run a script named by their first argument (`bash ./cc`, `python3 x.py`).
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python3", "perl", "ruby", "node",
];

/// The script an interpreter runs (`/bin/bash /home/u/bin/cc -x` -> `/home/u/bin/cc`).
pub(super) fn script_of(argv: &[String]) -> Option<&str> {
    let first = program_name(argv.first()?);
    if !INTERPRETERS.contains(&first) && !first.starts_with("python3.") {
        return None;
    }
    argv.get(1)
        .filter(|w| !w.starts_with('-'))
        .map(String::as_str)
}

/// The words that start a program as it ran, without its arguments: the program itself,
/// or an interpreter or launcher with its script (`node /usr/lib/…/cli.js`,
/// `/bin/bash /home/u/bin/cc`). A relaunch puts the resume arguments after these.
pub fn program_prefix(argv: &[String]) -> Vec<String> {
    let Some(first) = argv.first() else {
        return Vec::new();
    };
    let name = program_name(first);
    if is_launcher(name) || INTERPRETERS.contains(&name) {
        // Up to and including the first word that is not an option (the script, or the
        // package under npx), skipping `-m module` and `run`/`exec` words.
        let mut out = vec![first.clone()];
        let mut it = argv.iter().skip(1);
        while let Some(w) = it.next() {
            out.push(w.clone());
            if w == "-m" {
                if let Some(m) = it.next() {
                    out.push(m.clone());
                }
                return out;
            }
            if !w.starts_with('-') && !matches!(w.as_str(), "run" | "exec" | "tool") {
                return out;
            }
        }
        return out;
    }
    vec![first.clone()]
}

/// Whether a shell's argv is an interactive one (a prompt to type at), not `bash -c …` or
/// `bash script.sh`. The options that take a value (`--rcfile FILE`, `-o OPTION`, fish's
/// `-C COMMAND`) take it with them: `bash --noprofile --rcfile ~/.rc` is a prompt.
pub fn is_interactive_shell(argv: &[String]) -> bool {
    let Some(first) = argv.first() else {
        return false;
    };
    let name = first
        .rsplit('/')
        .next()
        .unwrap_or(first)
        .trim_start_matches('-');
    let fish = name == "fish";
    let mut words = argv.iter().skip(1);
    while let Some(w) = words.next() {
        let w = w.as_str();
        if w == "--" {
            // Only a script (or its arguments) can follow.
            return words.next().is_none();
        }
        if let Some(long) = w.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            match name {
                "command" => return false,
                // A value of their own: bash's file, fish's command run before the prompt.
                "rcfile" | "init-file" | "init-command" if !inline => {
                    words.next();
                }
                _ => {}
            }
            continue;
        }
        let Some(flags) = w.strip_prefix('-').or_else(|| w.strip_prefix('+')) else {
            // A word that is no option: the script to run.
            return false;
        };
        if flags.is_empty() {
            // `bash -`: commands from stdin, as a prompt does.
            continue;
        }
        // -l, -i, -x; not -c, -lc, -ec (a command string follows).
        if flags.contains('c') {
            return false;
        }
        // Options whose value is the next word: `-o vi`, `-O extglob`; fish's `-C cmd`
        // (its `-c` is refused above). Given inline (`-ovi`), nothing follows.
        let last = flags.chars().last();
        if matches!(last, Some('o' | 'O')) || (fish && last == Some('C')) {
            words.next();
        }
    }
    true
}
