//! `[notify] webhook` against a real tmux, fake agents and a local HTTP server started by the
//! test: one POST per death (from the supervisor, not from a dashboard beside it), one POST
//! for a burst of ten, and a POST the server refused once is sent again.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::daemon::Daemon;
use crate::support::{self, TmuxServer, LONG, WAIT};

/// One request the server received, and the status it answered.
#[derive(Debug, Clone)]
struct Request {
    line: String,
    title: Option<String>,
    body: serde_json::Value,
    answered: u16,
}

/// An HTTP server on 127.0.0.1 that records every request and answers it with no body: the
/// statuses of `first`, in turn, then 200. Stopped (its thread joined) when dropped.
struct Hook {
    port: u16,
    got: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Hook {
    fn start(first: &[u16]) -> Hook {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().unwrap().port();
        let got = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let mut answers: std::collections::VecDeque<u16> = first.iter().copied().collect();
        let (log, stopped) = (Arc::clone(&got), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = conn else { continue };
                let status = answers.front().copied().unwrap_or(200);
                if let Some(req) = serve(stream, status) {
                    answers.pop_front();
                    log.lock().unwrap().push(req);
                }
            }
        });
        Hook {
            port,
            got,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    fn requests(&self) -> Vec<Request> {
        self.got.lock().unwrap().clone()
    }

    fn wait_for(&self, n: usize) -> Vec<Request> {
        support::wait_until(&format!("the hook has {n} requests"), *LONG, || {
            self.requests().len() >= n
        });
        self.requests()
    }
}

impl Drop for Hook {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request (headers, then a body of its Content-Length; `100 Continue` first if it
/// asks), answers `status` with no body and closes.
fn serve(stream: TcpStream, status: u16) -> Option<Request> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let (mut length, mut title, mut expect) = (0usize, None, false);
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (name, value) = h.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "title" => title = Some(value.trim().to_string()),
            "expect" => expect = value.trim().eq_ignore_ascii_case("100-continue"),
            _ => {}
        }
    }
    let mut out = stream;
    if expect {
        out.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").ok()?;
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    let reason = if status == 200 { "OK" } else { "Oops" };
    out.write_all(
        format!("HTTP/1.1 {status} {reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    )
    .ok()?;
    let _ = out.shutdown(std::net::Shutdown::Both);
    Some(Request {
        line: line.trim_end().to_string(),
        title,
        body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
        answered: status,
    })
}

/// Whether curl is here: CI installs it (.ci/run), so there a missing one is a failure;
/// elsewhere the test is skipped with a notice.
fn have_curl() -> bool {
    let found = std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("curl is not installed: .ci/run installs it (apt-get install curl)");
        }
        eprintln!("skipped: curl is not installed (apt-get install curl to run this test)");
    }
    found
}

/// No auto-resume (a resumed agent would die again and be news again): every POST is about
/// the deaths the test makes. The webhook gathers for `collapse` seconds.
fn config(server: &TmuxServer, hook: &Hook, collapse: u64) -> std::path::PathBuf {
    let cfg = server.dir.path().join("cfg.toml");
    std::fs::write(
        &cfg,
        format!(
            "[auto_resume]\nenabled = false\n[notify]\nbell = false\nwebhook = \"{}\"\nwebhook_collapse_secs = {collapse}\n",
            hook.url()
        ),
    )
    .unwrap();
    cfg
}

/// The daemon, with no proxy between curl and the test's server.
fn daemon(server: &TmuxServer, cfg: &std::path::Path) -> Daemon {
    Daemon::start_env(
        server,
        cfg,
        &[("no_proxy", "127.0.0.1"), ("NO_PROXY", "127.0.0.1")],
    )
}

/// Waits until the daemon has seen every pane alive and judged what it does.
fn seen(server: &TmuxServer, panes: &[String]) {
    support::wait_until("every agent is seen", *LONG, || {
        panes
            .iter()
            .all(|p| !server.pane_field(p, "#{@agentwatch_state}").is_empty())
    });
}

fn touch(server: &TmuxServer, name: &str) {
    std::fs::write(server.agent_dir.join(name), "").unwrap();
}

fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn two_deaths_apart_are_two_posts_each_naming_its_agent_pane_and_exit_sent_once() {
    if !have_curl() {
        return;
    }
    let hook = Hook::start(&[]);
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan("claude", "wait go-claude\nexit 3\n");
    server.write_plan("codex", "wait go-codex\nexit 4\n");
    let a = server.new_window(&["claude"]);
    let b = server.new_window(&["codex"]);
    let cfg = config(&server, &hook, 1);
    let daemon = daemon(&server, &cfg);
    // A dashboard beside the daemon, with the same webhook: it only rings its own bell.
    let ui = server.start_agentwatch(
        120,
        30,
        &[("no_proxy", "127.0.0.1"), ("NO_PROXY", "127.0.0.1")],
        &["-c", cfg.to_str().unwrap()],
    );
    ui.wait_for_text(&format!("supervised by daemon {}", daemon.pid()), *LONG);
    seen(&server, &[a.clone(), b.clone()]);
    assert!(hook.requests().is_empty(), "{:#?}", hook.requests());

    touch(&server, "go-claude");
    let first = hook.wait_for(1);
    // Well after the first POST: a death of its own.
    touch(&server, "go-codex");
    let both = hook.wait_for(2);
    assert_eq!(first[0].body, both[0].body);
    for (r, pane, agent, code) in [(&both[0], &a, "claude", 3), (&both[1], &b, "codex", 4)] {
        let body = &r.body;
        assert_eq!(r.line, "POST /hook HTTP/1.1");
        assert_eq!(body["count"], 1, "{body:#}");
        assert_eq!(body["event"], "died", "{body:#}");
        assert_eq!(body["agent"], agent, "{body:#}");
        assert_eq!(body["pane"], pane.as_str(), "{body:#}");
        assert_eq!(body["host"], this_host(), "{body:#}");
        let text = body["text"].as_str().unwrap();
        assert!(
            text.starts_with(&format!("{agent} main:"))
                && text.ends_with(&format!("process exited (code {code})")),
            "{body:#}"
        );
        assert_eq!(body["content"], text);
        assert_eq!(body["message"], text);
        let title = format!("agentwatch: an agent died on {}", this_host());
        assert_eq!(body["title"], title.as_str());
        assert_eq!(r.title.as_deref(), Some(title.as_str()), "the Title header");
        assert_eq!(body["events"][0]["pane"], pane.as_str());
    }
    // A span, not a wait: no third POST (1 s windows, so it would have come by now).
    support::holds_for("there are two POSTs", Duration::from_secs(3), || {
        hook.requests().len() == 2
    });
    let (status, err) = daemon.stop();
    assert!(status.success(), "{status} {err}");
}

#[test]
fn ten_agents_killed_at_once_are_one_post_that_says_so() {
    if !have_curl() {
        return;
    }
    let hook = Hook::start(&[]);
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan("claude", "wait go\nexit 3\n");
    let panes: Vec<String> = (0..10).map(|_| server.new_window(&["claude"])).collect();
    // The default window (3 s): ten deaths, each judged once its last lines are read, on a
    // loaded machine too.
    let cfg = config(&server, &hook, 3);
    let daemon = daemon(&server, &cfg);
    seen(&server, &panes);
    touch(&server, "go");
    for p in &panes {
        server.wait_pane_exit(p, *WAIT);
    }
    let got = hook.wait_for(1);
    // A span, not a wait: longer than the window, for a second POST to show.
    support::holds_for("there is one POST", Duration::from_secs(5), || {
        hook.requests().len() == 1
    });
    let body = &got[0].body;
    assert_eq!(body["count"], 10, "{body:#}");
    assert_eq!(body["event"], "died");
    assert_eq!(body["agent"], "claude");
    assert_eq!(body["pane"], serde_json::Value::Null);
    let head = format!("10 agents died on {}: ", this_host());
    let text = body["text"].as_str().unwrap();
    assert!(
        text.starts_with(&head) && text.ends_with(", and 5 more"),
        "{text}"
    );
    assert_eq!(
        text.matches("(process exited (code 3))").count(),
        5,
        "five named: {text}"
    );
    assert_eq!(
        body["title"],
        format!("agentwatch: 10 agents died on {}", this_host())
    );
    let mut named: Vec<String> = body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert!(
                e["text"]
                    .as_str()
                    .unwrap()
                    .ends_with("process exited (code 3)"),
                "{e}"
            );
            e["pane"].as_str().unwrap().to_string()
        })
        .collect();
    named.sort();
    let mut want = panes.clone();
    want.sort();
    assert_eq!(named, want, "each agent once");
    let (status, err) = daemon.stop();
    assert!(status.success(), "{status} {err}");
}

#[test]
fn a_post_the_server_refused_is_sent_again_and_arrives() {
    if !have_curl() {
        return;
    }
    let hook = Hook::start(&[500]);
    let server = TmuxServer::start();
    server.tmux_ok(&["set-option", "-g", "remain-on-exit", "on"]);
    server.write_plan("claude", "wait go\nexit 3\n");
    let pane = server.new_window(&["claude"]);
    let cfg = config(&server, &hook, 1);
    let daemon = daemon(&server, &cfg);
    seen(&server, std::slice::from_ref(&pane));
    touch(&server, "go");
    let got = hook.wait_for(2);
    assert_eq!(
        got.iter().map(|r| r.answered).collect::<Vec<_>>(),
        [500, 200]
    );
    assert_eq!(got[0].body, got[1].body, "the same POST again");
    assert_eq!(got[1].body["pane"], pane.as_str());
    // A span, not a wait: past the third attempt's pause (5 s), had the second failed.
    support::holds_for(
        "delivered, it is not sent again",
        Duration::from_secs(6),
        || hook.requests().len() == 2,
    );
    let (status, err) = daemon.stop();
    assert!(status.success(), "{status} {err}");
    let port = hook.port;
    assert!(
        err.contains(&format!(
            "webhook http://127.0.0.1:{port}: attempt 1 of 3 failed: HTTP 500; again in 1 s"
        )),
        "{err}"
    );
    assert!(!err.contains("/hook"), "the path is not logged: {err}");
}
