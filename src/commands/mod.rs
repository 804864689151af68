//! One-shot subcommands: each runs, prints and exits.

/// `agentwatch demo`: simulated agents on a private server, and the dashboard on it.
pub mod demo;
/// `agentwatch doctor`: checks, each with a fix.
pub mod doctor;
/// `agentwatch events`: the journal printed and followed.
pub mod events;
/// `agentwatch explain %N`: which source decided what a pane's agent does, and why.
pub mod explain;
/// `agentwatch hooks install|uninstall`: agentwatch's own agent hooks, and the command they run.
pub mod hooks;
/// `agentwatch man`: the man page, its KEYS from the key table.
pub mod man;
/// `agentwatch spawn`: start an agent with its session id and directory recorded.
pub mod spawn;
/// `agentwatch status`: one read-only look, as a table or JSON.
pub mod status;

/// Writes `text` to stdout. A reader that stopped reading (`| head`, `| true`) is no error:
/// `print!` would panic there, and a script piping a command must still get its exit code.
pub fn print_out(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        done => done,
    }
}

/// A line on stderr, whatever becomes of it: `eprintln!` panics when stderr cannot be
/// written (a terminal that is gone), and a message must never turn into a panic.
pub fn tell(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// `tell!("...", args)`: [`tell`] with `format!` arguments; every message of agentwatch on
/// stderr goes through it.
#[macro_export]
macro_rules! tell {
    ($($arg:tt)*) => {
        $crate::commands::tell(&format!($($arg)*))
    };
}

/// [`print_out`] for what is only said: a line nobody reads is no failure of the command.
pub fn say(text: &str) {
    let _ = print_out(text);
}

/// [`print_out`] for what a script reads (a table, a pane id, a pid, a snippet to eval):
/// `code` when it is written (or nobody reads it), else 2 with the reason on stderr, as
/// for any other failure.
pub fn print_then(
    command: &str,
    text: &str,
    code: std::process::ExitCode,
) -> std::process::ExitCode {
    match print_out(text) {
        Ok(()) => code,
        Err(e) => {
            crate::tell!("agentwatch {command}: cannot write to stdout: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
