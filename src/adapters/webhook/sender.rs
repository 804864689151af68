//! Sending webhooks: a long-lived task gathers the events that arrive within the collapse
//! window of the first into one POST, and sends each POST through curl (https without a TLS
//! stack of our own; curl's proxy variables honoured), retried. Nothing here blocks the
//! event loop: events are handed over a channel.

use std::collections::VecDeque;
use std::future::Future;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::payload::{post, Post};
use crate::core::msg::Event;

/// The pauses before the second and third attempt at a POST (three attempts in all).
const RETRY_AFTER: [Duration; 2] = [Duration::from_secs(1), Duration::from_secs(5)];

/// How long one attempt may take (curl's `--max-time`); past a little more it is killed.
const ATTEMPT_SECS: u64 = 10;

/// That curl is missing is said once, not at every POST.
static CURL_MISSING_TOLD: AtomicBool = AtomicBool::new(false);

/// An event and when it was handed over.
type Arrival = (Instant, Event);

/// The webhook of one agentwatch: hand it events, it sends them.
pub struct Webhook {
    tx: Mutex<Option<mpsc::UnboundedSender<Arrival>>>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Webhook {
    /// Starts the sender (a task on the current tokio runtime) for `url`: events within
    /// `window` of the first go out as one POST.
    pub fn start(url: String, window: Duration) -> Webhook {
        let host = match crate::adapters::host_name() {
            h if h.is_empty() => "this machine".to_string(),
            h => h,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(gather(rx, window, move |events| {
            let (url, host) = (url.clone(), host.clone());
            async move { deliver(&url, &post(&events, &host), events.len()).await }
        }));
        Webhook {
            tx: Mutex::new(Some(tx)),
            task: Mutex::new(Some(task)),
        }
    }

    /// Hands events over (never waits).
    pub fn send(&self, events: &[Event]) {
        let now = Instant::now();
        if let Ok(tx) = self.tx.lock() {
            if let Some(tx) = tx.as_ref() {
                for e in events {
                    let _ = tx.send((now, e.clone()));
                }
            }
        }
    }

    /// Sends what is gathered at once, without waiting for the window to close, and waits
    /// at most `within` for it to go out (agentwatch is quitting).
    pub async fn finish(&self, within: Duration) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        let task = self.task.lock().ok().and_then(|mut t| t.take());
        if let Some(task) = task {
            let _ = tokio::time::timeout(within, task).await;
        }
    }
}

/// Gathers arrivals into batches and hands each to `deliver`, one at a time: the first
/// event opens a window of `window`; every event handed over by its end (by the same
/// look, or a later one) is in the same batch. Events that came while a batch was being
/// sent are gathered by when they came, not when they are read. Ends, once all is sent,
/// when the channel closes; a closed channel sends what is gathered at once.
async fn gather<F, Fut>(mut rx: mpsc::UnboundedReceiver<Arrival>, window: Duration, mut deliver: F)
where
    F: FnMut(Vec<Event>) -> Fut,
    Fut: Future<Output = ()>,
{
    let mut pending: VecDeque<Arrival> = VecDeque::new();
    let mut open = true;
    loop {
        if pending.is_empty() {
            match rx.recv().await {
                Some(a) => pending.push_back(a),
                None => return,
            }
        }
        let Some(&(first, _)) = pending.front() else {
            continue;
        };
        let end = first + window;
        while open {
            tokio::select! {
                got = rx.recv() => match got {
                    Some(a) => pending.push_back(a),
                    None => open = false,
                },
                () = tokio::time::sleep_until(end) => break,
            }
        }
        while let Ok(a) = rx.try_recv() {
            pending.push_back(a);
        }
        let n = pending.partition_point(|(at, _)| *at <= end).max(1);
        let batch: Vec<Event> = pending.drain(..n).map(|(_, e)| e).collect();
        deliver(batch).await;
        if !open && pending.is_empty() {
            return;
        }
    }
}

/// Sends one POST, up to three times: again after 1 s, then 5 s, on a failure of curl or
/// an answer other than 2xx. Each failure is logged (the URL as its scheme and host only:
/// its path, query or user may be a secret).
async fn deliver(url: &str, post: &Post, events: usize) {
    let Some(curl) = crate::adapters::which::find_program("curl") else {
        if !CURL_MISSING_TOLD.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "[notify] webhook: curl not found on PATH: install curl to send [notify] webhook notifications"
            );
        }
        return;
    };
    let to = shown(url);
    let attempts = RETRY_AFTER.len() + 1;
    for attempt in 1..=attempts {
        match attempt_post(&curl, url, post).await {
            Ok(()) => {
                tracing::info!("webhook {to}: sent {}", post.title);
                return;
            }
            Err(why) => {
                let why = why.replace(url, &to);
                match RETRY_AFTER.get(attempt - 1) {
                    Some(pause) => {
                        tracing::warn!(
                            "webhook {to}: attempt {attempt} of {attempts} failed: {why}; again in {} s",
                            pause.as_secs()
                        );
                        tokio::time::sleep(*pause).await;
                    }
                    None => tracing::warn!(
                        "webhook {to}: attempt {attempt} of {attempts} failed: {why}; {} not sent",
                        crate::core::text::counted(events, "event", "events")
                    ),
                }
            }
        }
    }
}

/// curl's config text (`--config -`) for one POST: the URL, its title and its body, kept
/// out of curl's argv (a webhook's URL is often its secret, and argv is public in `ps`).
fn curl_config(url: &str, post: &Post) -> String {
    // A quoted value in curl's config: backslash and quote escaped; JSON holds no raw line
    // breaks, and a header's value none.
    let quoted = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    format!(
        "url = {}\nheader = {}\ndata-binary = {}\n",
        quoted(url),
        quoted(&format!("Title: {}", header_value(&post.title))),
        quoted(&post.body.to_string())
    )
}

/// One POST through curl: URL, title and JSON on its stdin (never in its argv), the
/// answer's status read back; Ok for a 2xx.
async fn attempt_post(curl: &Path, url: &str, post: &Post) -> Result<(), String> {
    let max = ATTEMPT_SECS.to_string();
    let mut child = tokio::process::Command::new(curl)
        .args([
            "-sS",
            // `{{.text}}` in an ntfy template is no curl glob.
            "--globoff",
            "--proto",
            "=http,https",
            "--max-time",
            &max,
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--config",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run curl: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(curl_config(url, post).as_bytes()).await;
    }
    let out = tokio::time::timeout(
        Duration::from_secs(ATTEMPT_SECS + 5),
        child.wait_with_output(),
    )
    .await
    .map_err(|_| format!("curl did not finish in {} s; killed", ATTEMPT_SECS + 5))?
    .map_err(|e| format!("curl: {e}"))?;
    let code: u16 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    if out.status.success() && (200..300).contains(&code) {
        return Ok(());
    }
    if code != 0 {
        return Err(format!("HTTP {code}"));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(match err.lines().map(str::trim).find(|l| !l.is_empty()) {
        Some(line) => line.to_string(),
        None => format!("curl ended with {}", out.status),
    })
}

/// A header's value: no line breaks or other control characters.
fn header_value(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A URL as logs show it: scheme and host (and port), without its user, path or query.
pub fn shown(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or(authority);
    format!("{scheme}://{host}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_url_title_and_body_go_to_curl_as_quoted_config_not_argv() {
        let post = Post {
            title: "agentwatch: an agent died".into(),
            body: serde_json::json!({"text": "say \"hi\" \\ then\nmore ✖"}),
        };
        let url = "https://:tk_secret@ntfy.sh/t?tpl=yes&m={{.text}}";
        let cfg = curl_config(url, &post);
        // Read back as curl reads a quoted value: \\ and \" are the escapes.
        let unquote = |v: &str| {
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap();
            let mut out = String::new();
            let mut chars = v.chars();
            while let Some(c) = chars.next() {
                out.push(if c == '\\' { chars.next().unwrap() } else { c });
            }
            out
        };
        let lines: Vec<(&str, String)> = cfg
            .lines()
            .map(|l| {
                let (k, v) = l.split_once(" = ").unwrap();
                (k, unquote(v))
            })
            .collect();
        assert_eq!(lines[0], ("url", url.to_string()));
        assert_eq!(
            lines[1],
            ("header", "Title: agentwatch: an agent died".to_string())
        );
        assert_eq!(lines[2].0, "data-binary");
        let body: serde_json::Value = serde_json::from_str(&lines[2].1).unwrap();
        assert_eq!(body, post.body);
    }

    #[test]
    fn a_url_is_logged_as_its_scheme_and_host_only() {
        assert_eq!(
            shown("https://user:secret@ntfy.sh/my-topic?tpl=yes&m={{.text}}"),
            "https://ntfy.sh"
        );
        assert_eq!(shown("http://127.0.0.1:8080/hook"), "http://127.0.0.1:8080");
        assert_eq!(
            shown("https://hooks.slack.com/services/T0/B0/XYZ"),
            "https://hooks.slack.com"
        );
        assert_eq!(shown("https://h?token=1"), "https://h");
    }

    #[test]
    fn a_title_header_holds_no_line_break() {
        assert_eq!(header_value("a\r\nX-Evil: 1"), "a  X-Evil: 1");
    }

    fn ev(pane: &str) -> Event {
        Event {
            event: "died".into(),
            pane: pane.into(),
            ..Event::default()
        }
    }

    /// Each batch handed over: when (since the test began) and its panes.
    type Seen = Arc<Mutex<Vec<(Duration, Vec<String>)>>>;

    /// A delivery's future.
    type Sending = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

    /// The gatherer under tokio's paused clock, with a delivery that records each batch's
    /// panes and the time it was handed over, and takes `busy` to send.
    fn recorder(busy: Duration) -> (Seen, impl FnMut(Vec<Event>) -> Sending) {
        let start = Instant::now();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let deliver = move |events: Vec<Event>| {
            let log = Arc::clone(&log);
            Box::pin(async move {
                let panes = events.into_iter().map(|e| e.pane).collect();
                log.lock().unwrap().push((start.elapsed(), panes));
                tokio::time::sleep(busy).await;
            }) as Sending
        };
        (seen, deliver)
    }

    fn hand(tx: &mpsc::UnboundedSender<Arrival>, panes: &[&str]) {
        let now = Instant::now();
        for p in panes {
            tx.send((now, ev(p))).unwrap();
        }
    }

    #[tokio::test(start_paused = true)]
    async fn events_within_the_window_of_the_first_are_one_batch_and_later_ones_the_next() {
        let (seen, deliver) = recorder(Duration::ZERO);
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(gather(rx, Duration::from_secs(3), deliver));
        hand(&tx, &["%1", "%2"]);
        tokio::time::sleep(Duration::from_millis(2900)).await;
        hand(&tx, &["%3"]);
        tokio::time::sleep(Duration::from_millis(200)).await;
        // 3.1 s: the first window closed at 3 s with all three in it.
        hand(&tx, &["%4"]);
        tokio::time::sleep(Duration::from_secs(10)).await;
        hand(&tx, &["%5"]);
        drop(tx);
        task.await.unwrap();
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                (
                    Duration::from_secs(3),
                    vec!["%1".into(), "%2".into(), "%3".into()]
                ),
                (Duration::from_millis(6100), vec!["%4".into()]),
                // The channel closed: sent at once, not at the end of its window.
                (Duration::from_millis(13100), vec!["%5".into()]),
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn events_that_come_while_a_post_is_sent_are_gathered_by_when_they_came() {
        // Each POST takes 5 s (a slow server, retries); the window is 1 s.
        let (seen, deliver) = recorder(Duration::from_secs(5));
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(gather(rx, Duration::from_secs(1), deliver));
        let at = |ms: u64| tokio::time::sleep(Duration::from_millis(ms));
        hand(&tx, &["%1"]);
        at(500).await;
        hand(&tx, &["%2"]);
        at(1000).await;
        // 1.5 s, 2 s: while the first POST is out; 3 s: more than 1 s after 1.5 s.
        hand(&tx, &["%3"]);
        at(500).await;
        hand(&tx, &["%4"]);
        at(1000).await;
        hand(&tx, &["%5"]);
        at(20_000).await;
        drop(tx);
        task.await.unwrap();
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                (Duration::from_secs(1), vec!["%1".into(), "%2".into()]),
                (Duration::from_secs(6), vec!["%3".into(), "%4".into()]),
                (Duration::from_secs(11), vec!["%5".into()]),
            ]
        );
    }
}
