//! tmux's clients: who is attached where (for `g` and for notifications), and taking one to
//! a pane. The core decides which client; this asks tmux and carries it out.

use std::time::Duration;

use super::client::{Tmux, TmuxError};
use crate::core::pane::PaneId;
use crate::core::viewer::Client;

/// `list-clients -F`: what [`parse`] reads. The flags come last: they hold no space.
const FORMAT: &str = "#{client_control_mode} #{client_activity} #{client_tty} #{pane_id} #{session_id} #{client_flags}";

/// The attached clients (within `timeout`, where given).
pub async fn list(tmux: &Tmux, timeout: Option<Duration>) -> Result<Vec<Client>, TmuxError> {
    let args = ["list-clients", "-F", FORMAT];
    let out = match timeout {
        Some(t) => tmux.run_for(args, t).await?,
        None => tmux.run(args).await?,
    };
    Ok(parse(&String::from_utf8_lossy(&out)))
}

/// Lines of [`FORMAT`]; a line that does not fit is no client.
fn parse(text: &str) -> Vec<Client> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(6, ' ');
            let control = f.next()? == "1";
            let activity = f.next()?.parse::<u64>().unwrap_or(0);
            let (tty, pane, session) = (f.next()?, f.next()?, f.next()?);
            let flags: Vec<&str> = f.next().unwrap_or("").split(',').collect();
            Some(Client {
                // Older tmux has no client_control_mode: the flags say it too.
                control: control || flags.contains(&"control-mode"),
                focused: flags.contains(&"focused"),
                activity,
                tty: tty.to_string(),
                pane: pane.to_string(),
                session: session.to_string(),
            })
        })
        .collect()
}

/// Takes the client on `tty` to `pane`: its session, window and pane.
pub async fn switch(tmux: &Tmux, tty: &str, pane: PaneId) -> Result<(), TmuxError> {
    let t = pane.to_string();
    tmux.run([
        "switch-client",
        "-c",
        tty,
        "-t",
        &t,
        ";",
        "select-window",
        "-t",
        &t,
        ";",
        "select-pane",
        "-t",
        &t,
    ])
    .await
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_is_a_client_and_the_flags_say_focus_and_control_mode() {
        let list = parse(
            "1 900 /dev/pts/9 %4 $1 attached,control-mode,UTF-8\n\
             0 100 /dev/pts/1 %4 $1 attached,focused,UTF-8\n\
             0 x /dev/pts/2 %7 $2 attached\n\
             short line\n",
        );
        assert_eq!(list.len(), 3);
        assert!(list[0].control && !list[1].control);
        assert!(list[1].focused && !list[2].focused);
        assert_eq!((list[1].activity, list[2].activity), (100, 0));
        assert_eq!(
            (
                list[1].tty.as_str(),
                list[1].pane.as_str(),
                list[1].session.as_str()
            ),
            ("/dev/pts/1", "%4", "$1")
        );
    }
}
