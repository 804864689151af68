//! What a webhook POST says: its title and its JSON body, for one event or a burst of them.
//! The words are the desktop notification's ([`crate::adapters::notify`]); no I/O here.

use serde_json::{json, Value};

use crate::adapters::notify::{line, summary, what, who};
use crate::core::msg::Event;

/// How many agents a burst's text names before `and N more`.
const NAMED: usize = 5;

/// One POST: the words for its `Title` header and its JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct Post {
    pub title: String,
    pub body: Value,
}

/// The POST for `events` (one, or a burst gathered together), `this_host` naming this
/// machine where an event is not another host's.
///
/// The body: `title`; `text`, and the same words as `message` and `content` (what Slack,
/// Mattermost, ntfy templates and Discord read); `event`, `agent`, `pane`, `target`, `host`
/// and `cause`, the event's own for one event and for a burst what all its events share
/// (else `"several"` for `event`, null for the rest, the hosts joined for `host`);
/// `count`; and `events`, each with its own `text` and `ts` (epoch ms).
pub fn post(events: &[Event], this_host: &str) -> Post {
    let host_of = |e: &Event| e.host.clone().unwrap_or_else(|| this_host.to_string());
    let mut hosts: Vec<String> = Vec::new();
    for h in events.iter().map(host_of) {
        if !hosts.contains(&h) {
            hosts.push(h);
        }
    }
    let place = hosts.join(", ");
    let (title, text) = match events {
        [one] => {
            let (title, _) = summary(std::slice::from_ref(one));
            (format!("{title} on {place}"), line(one))
        }
        many => {
            let head = if many.iter().all(|e| e.event == "died") {
                format!("{} agents died on {place}", many.len())
            } else {
                format!("{} agents need you on {place}", many.len())
            };
            let mut named: Vec<String> = many
                .iter()
                .take(NAMED)
                .map(|e| format!("{} ({})", who(e), what(e)))
                .collect();
            if many.len() > NAMED {
                named.push(format!("and {} more", many.len() - NAMED));
            }
            (
                format!("agentwatch: {head}"),
                format!("{head}: {}", named.join(", ")),
            )
        }
    };
    let common = |field: fn(&Event) -> Option<&str>| -> Value {
        let mut values = events.iter().map(field);
        match values.next() {
            Some(Some(first)) if values.all(|v| v == Some(first)) => first.into(),
            _ => Value::Null,
        }
    };
    let event = match common(|e| Some(&e.event)) {
        Value::Null => "several".into(),
        one => one,
    };
    let items: Vec<Value> = events
        .iter()
        .map(|e| {
            json!({
                "event": e.event,
                "agent": e.agent,
                "pane": e.pane,
                "target": e.target,
                "host": host_of(e),
                "cause": e.cause,
                "text": line(e),
                "ts": e.ts,
            })
        })
        .collect();
    let body = json!({
        "title": title,
        "text": text,
        "message": text,
        "content": text,
        "event": event,
        "agent": common(|e| e.agent.as_deref()),
        "pane": common(|e| Some(&e.pane)),
        "target": common(|e| e.target.as_deref()),
        "host": place,
        "cause": common(|e| e.cause.as_deref()),
        "count": events.len(),
        "events": items,
    });
    Post { title, body }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn died(agent: &str, target: &str, code: i32) -> Event {
        Event {
            ts: 1_700_000_000_000,
            event: "died".into(),
            pane: format!("%{}", target.len()),
            agent: Some(agent.into()),
            target: Some(target.into()),
            exit_code: Some(code),
            detail: Some(format!("process exited (code {code})")),
            cause: Some("crash".into()),
            ..Event::default()
        }
    }

    #[test]
    fn one_death_is_a_post_about_that_death_on_this_machine() {
        let mut e = died("claude", "work:1.0", 1);
        e.cause = Some("auth".into());
        let p = post(&[e], "vm");
        assert_eq!(p.title, "agentwatch: an agent died on vm");
        let b = &p.body;
        let text = "claude work:1.0: login needed · process exited (code 1)";
        for key in ["text", "message", "content"] {
            assert_eq!(b[key], text, "{key}");
        }
        assert_eq!(b["title"], p.title);
        assert_eq!(b["event"], "died");
        assert_eq!(b["agent"], "claude");
        assert_eq!(b["pane"], "%8");
        assert_eq!(b["target"], "work:1.0");
        assert_eq!(b["host"], "vm");
        assert_eq!(b["cause"], "auth");
        assert_eq!(b["count"], 1);
        assert_eq!(
            b["events"],
            json!([{
                "event": "died", "agent": "claude", "pane": "%8", "target": "work:1.0",
                "host": "vm", "cause": "auth", "text": text, "ts": 1_700_000_000_000u64,
            }])
        );
        // The keys in the documented order.
        let keys: Vec<&str> = b.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "title", "text", "message", "content", "event", "agent", "pane", "target", "host",
                "cause", "count", "events"
            ]
        );
    }

    #[test]
    fn another_hosts_event_is_said_to_be_there() {
        let mut e = died("codex", "w:2.1", 3);
        e.host = Some("box".into());
        let p = post(&[e], "vm");
        assert_eq!(p.title, "agentwatch: an agent died on box");
        assert_eq!(p.body["host"], "box");
        assert_eq!(p.body["events"][0]["host"], "box");
    }

    #[test]
    fn a_burst_of_deaths_is_one_post_naming_five_and_counting_the_rest() {
        let mut many: Vec<Event> = (0..7)
            .map(|i| died("claude", &format!("w:{i}.0"), 1))
            .collect();
        many[1].agent = Some("codex".into());
        many[1].cause = Some("auth".into());
        let p = post(&many, "vm");
        assert_eq!(p.title, "agentwatch: 7 agents died on vm");
        assert_eq!(
            p.body["text"],
            "7 agents died on vm: claude w:0.0 (process exited (code 1)), \
             codex w:1.0 (login needed · process exited (code 1)), \
             claude w:2.0 (process exited (code 1)), claude w:3.0 (process exited (code 1)), \
             claude w:4.0 (process exited (code 1)), and 2 more"
        );
        assert_eq!(p.body["content"], p.body["text"]);
        assert_eq!(p.body["event"], "died");
        assert_eq!(p.body["count"], 7);
        // What they share is said, what they do not is null.
        assert_eq!(p.body["agent"], Value::Null);
        assert_eq!(p.body["cause"], Value::Null);
        assert_eq!(p.body["host"], "vm");
        assert_eq!(p.body["events"].as_array().map(Vec::len), Some(7));
        assert_eq!(p.body["events"][1]["agent"], "codex");
        assert_eq!(
            p.body["events"][6]["text"],
            "claude w:6.0: process exited (code 1)"
        );
    }

    #[test]
    fn a_mixed_burst_needs_you_and_says_what_each_one_did() {
        let mut wait = died("claude", "w:1.0", 0);
        wait.event = "waiting".into();
        wait.detail = Some("Do you want to proceed?".into());
        wait.cause = None;
        let mut gave_up = died("codex", "w:2.0", 1);
        gave_up.event = "gave_up".into();
        gave_up.host = Some("box".into());
        let mut signal = died("gemini", "w:3.0", 0);
        signal.detail = Some("killed by signal 9 (SIGKILL)".into());
        let p = post(&[wait, gave_up, signal], "vm");
        assert_eq!(p.title, "agentwatch: 3 agents need you on vm, box");
        assert_eq!(
            p.body["text"],
            "3 agents need you on vm, box: claude w:1.0 (waiting for input: Do you want to \
             proceed?), codex w:2.0 (auto-resume gave up), gemini w:3.0 (killed by signal 9 \
             (SIGKILL))"
        );
        assert_eq!(p.body["event"], "several");
        assert_eq!(p.body["host"], "vm, box");
        assert_eq!(p.body["events"][1]["host"], "box");
        assert_eq!(p.body["events"][0]["event"], "waiting");
    }
}
