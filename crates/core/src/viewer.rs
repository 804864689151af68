//! Which tmux client shows agentwatch (for `g`), and which panes someone looks at (for
//! notifications): decided on the clients tmux lists.

use std::collections::HashSet;

/// Where agentwatch itself is on screen, when it runs inside the server it watches: what `g`
/// switches is the client showing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Viewer {
    /// In a pane (`$TMUX_PANE`): the client showing that pane.
    Pane(String),
    /// In a popup (tmux gives a popup no pane), drawn over a client of this session (`$N`,
    /// from `$TMUX`): `client`, the tty of the one that last had a key when agentwatch
    /// started, which is the one that opened it (keys typed in a popup do not count as a
    /// client's activity); `None` when tmux could not be asked then. The popup hides the pane
    /// it goes to, so agentwatch quits after the switch and `-E` closes it.
    Popup {
        session: String,
        client: Option<String>,
    },
}

/// One tmux client, as `list-clients` says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Client {
    /// A control-mode client (agentwatch's own among them): it shows nothing to anyone.
    pub control: bool,
    /// It has the terminal's focus (where the terminal reports it; else always).
    pub focused: bool,
    /// When it last had a key (epoch seconds).
    pub activity: u64,
    pub tty: String,
    /// The pane it shows (`%N`) and its session (`$N`).
    pub pane: String,
    pub session: String,
}

/// No client shows agentwatch: why, in the words `g` answers with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoViewer {
    #[error("no tmux client is showing agentwatch's pane")]
    Pane,
    #[error("the client that opened agentwatch's popup ({0}) is gone")]
    PopupClientGone(String),
    #[error("no tmux client is attached to session {0}, agentwatch's popup's")]
    NoClientOnSession(String),
}

/// The tty of the client agentwatch is shown on: of the clients showing its pane (or, for a
/// popup, on its session), the one that last had a key; for a popup whose client is known,
/// that client while it is attached.
pub fn showing(clients: &[Client], viewer: &Viewer) -> Result<String, NoViewer> {
    clients
        .iter()
        .filter(|c| {
            let ours = match viewer {
                Viewer::Pane(p) => &c.pane == p,
                Viewer::Popup {
                    client: Some(tty), ..
                } => &c.tty == tty,
                Viewer::Popup { session, .. } => &c.session == session,
            };
            !c.control && ours && !c.tty.is_empty()
        })
        .max_by_key(|c| c.activity)
        .map(|c| c.tty.clone())
        .ok_or_else(|| match viewer {
            Viewer::Pane(_) => NoViewer::Pane,
            Viewer::Popup {
                client: Some(c), ..
            } => NoViewer::PopupClientGone(c.clone()),
            Viewer::Popup { session, .. } => NoViewer::NoClientOnSession(session.clone()),
        })
}

/// The panes shown in a focused client (tmux 3.2+ says `focused` in `client_flags`; a
/// terminal without focus reporting stays focused): the user is looking at them.
pub fn looked_at(clients: &[Client]) -> HashSet<String> {
    clients
        .iter()
        .filter(|c| c.focused && !c.control)
        .map(|c| c.pane.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(control: bool, activity: u64, tty: &str, pane: &str, session: &str) -> Client {
        Client {
            control,
            focused: true,
            activity,
            tty: tty.into(),
            pane: pane.into(),
            session: session.into(),
        }
    }

    fn list() -> Vec<Client> {
        vec![
            client(true, 900, "/dev/pts/9", "%4", "$1"),
            client(false, 100, "/dev/pts/1", "%4", "$1"),
            client(false, 300, "/dev/pts/2", "%7", "$2"),
            client(false, 200, "/dev/pts/3", "%4", "$1"),
            client(false, 500, "/dev/pts/5", "%8", "$1"),
        ]
    }

    #[test]
    fn a_pane_is_shown_by_the_last_active_client_showing_it_never_a_control_client() {
        let pane = Viewer::Pane("%4".into());
        assert_eq!(showing(&list(), &pane).unwrap(), "/dev/pts/3");
        let gone = Viewer::Pane("%5".into());
        assert!(showing(&list(), &gone)
            .unwrap_err()
            .to_string()
            .contains("no tmux client is showing"));
    }

    #[test]
    fn a_popup_is_over_the_client_that_opened_it_else_the_last_active_of_its_session() {
        let popup = |session: &str, client: Option<&str>| Viewer::Popup {
            session: session.into(),
            client: client.map(str::to_string),
        };
        // Known at start: that one, though another on the session had a key since.
        assert_eq!(
            showing(&list(), &popup("$1", Some("/dev/pts/1"))).unwrap(),
            "/dev/pts/1"
        );
        assert!(showing(&list(), &popup("$1", Some("/dev/pts/7")))
            .unwrap_err()
            .to_string()
            .contains("(/dev/pts/7) is gone"));
        // Not known: the session's last active one.
        assert_eq!(showing(&list(), &popup("$1", None)).unwrap(), "/dev/pts/5");
        assert_eq!(showing(&list(), &popup("$2", None)).unwrap(), "/dev/pts/2");
        assert!(showing(&list(), &popup("$3", None))
            .unwrap_err()
            .to_string()
            .contains("session $3"));
    }

    #[test]
    fn a_pane_in_a_focused_client_is_looked_at_and_control_clients_look_at_nothing() {
        let mut clients = list();
        clients[1].focused = false;
        let seen = looked_at(&clients);
        assert!(seen.contains("%4"), "pts/3 shows it, focused");
        assert!(seen.contains("%7") && seen.contains("%8"));
        clients[3].focused = false;
        assert!(
            !looked_at(&clients).contains("%4"),
            "only the control client"
        );
    }
}
