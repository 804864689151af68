use super::*;

/// One claude transcript line of assistant message `id`, as claude writes each content
/// block: the same id and a full copy of the usage.
fn claude(id: &str, sidechain: bool, usage: (u64, u64, u64, u64)) -> String {
    format!(
        r#"{{"type":"assistant","isSidechain":{sidechain},"requestId":"req_{id}","message":{{"id":"{id}","model":"claude-opus-4-8","role":"assistant","content":[{{"type":"text","text":"x"}}],"usage":{{"input_tokens":{},"output_tokens":{},"cache_read_input_tokens":{},"cache_creation_input_tokens":{}}}}}}}"#,
        usage.0, usage.1, usage.2, usage.3
    ) + "\n"
}

#[test]
fn a_message_split_over_lines_is_counted_once_and_a_sidechain_is_not_the_context() {
    let mut t = Tally::default();
    let mut file = String::new();
    file += r#"{"type":"user","message":{"role":"user","content":"hi"}}"#;
    file += "\n";
    // Three content blocks of one message: one count.
    for _ in 0..3 {
        file += &claude("msg_1", false, (10, 200, 1_000, 300));
    }
    // The next message, its last copy with more output.
    file += &claude("msg_2", false, (5, 50, 1_300, 20));
    file += &claude("msg_2", false, (5, 80, 1_300, 20));
    // A subagent's message: counted, but not the main chain's context.
    file += &claude("msg_3", true, (7, 9, 100, 0));
    t.feed(Kind::Claude, file.as_bytes());
    let s = t.spend();
    assert_eq!(
        s.tokens,
        Tokens {
            input: 10 + 5 + 7,
            output: 200 + 80 + 9,
            cache_read: 1_000 + 1_300 + 100,
            cache_creation: 300 + 20,
        }
    );
    assert_eq!(s.context, Some(5 + 1_300 + 20));
    assert_eq!(s.model.as_deref(), Some("claude-opus-4-8"));
    // A naive sum would be about twice as high.
    let naive: u64 = 3 * (10 + 200 + 1_000 + 300) + 2 * (5 + 1_300 + 20) + 50 + 80 + 116;
    assert!(
        naive > s.tokens.total() * 17 / 10,
        "{naive} vs {}",
        s.tokens.total()
    );
}

#[test]
fn a_long_transcript_keeps_only_recent_ids_and_still_counts_each_message_once() {
    let mut t = Tally::default();
    for n in 0..5_000 {
        let id = format!("msg_{n}");
        let mut lines = claude(&id, false, (1, 1, 1, 1));
        lines += &claude(&id, false, (1, 1, 1, 1));
        t.feed(Kind::Claude, lines.as_bytes());
    }
    assert_eq!(t.spend().tokens.total(), 4 * 5_000);
    assert!(t.seen.len() <= RECENT_IDS && t.order.len() <= RECENT_IDS);
}

#[test]
fn lines_cut_by_a_read_wait_for_their_end_and_appends_are_read_on() {
    let line = claude("msg_1", false, (1, 2, 3, 4));
    let (a, b) = line.split_at(40);
    let mut t = Tally::default();
    t.feed(Kind::Claude, a.as_bytes());
    assert_eq!(t.spend().tokens, Tokens::default());
    t.feed(Kind::Claude, b.as_bytes());
    assert_eq!(t.spend().tokens.total(), 10);
    t.feed(
        Kind::Claude,
        claude("msg_2", false, (1, 1, 1, 1)).as_bytes(),
    );
    assert_eq!(t.spend().tokens.total(), 14);
    assert_eq!(t.spend().context, Some(3));
    // Junk and claude's own error lines change nothing.
    t.feed(
        Kind::Claude,
        b"not json\n{\"type\":\"assistant\",\"usage\":1}\n",
    );
    let synthetic = r#"{"type":"assistant","isSidechain":false,"message":{"id":"x","model":"<synthetic>","usage":{"input_tokens":0,"output_tokens":0}}}"#;
    t.feed(Kind::Claude, format!("{synthetic}\n").as_bytes());
    assert_eq!(t.spend().context, Some(3));
}

#[test]
fn codex_totals_context_window_and_limits_come_from_the_newest_token_count() {
    let ev = |total: u64, last: u64| {
        format!(
            r#"{{"timestamp":"2026-12-04T10:00:00Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total},"cached_input_tokens":{},"output_tokens":500,"reasoning_output_tokens":100,"total_tokens":{}}},"last_token_usage":{{"input_tokens":{last},"cached_input_tokens":0,"output_tokens":50,"reasoning_output_tokens":0,"total_tokens":{}}},"model_context_window":272000}},"rate_limits":{{"primary":{{"used_percent":7.0,"window_minutes":300,"resets_at":1763483205}},"secondary":{{"used_percent":77.0,"window_minutes":10080,"resets_at":1763606387}}}}}}}}"#,
            total / 2,
            total + 500,
            last + 50
        ) + "\n"
    };
    let mut t = Tally::default();
    t.feed(Kind::Codex, ev(10_000, 4_000).as_bytes());
    t.feed(Kind::Codex, ev(30_000, 9_000).as_bytes());
    let s = t.spend();
    // The totals are cumulative: the newest, not a sum.
    assert_eq!(
        s.tokens,
        Tokens {
            input: 15_000,
            output: 500,
            cache_read: 15_000,
            cache_creation: 0
        }
    );
    // The context is the last turn's, never the total (which would read over 100 %).
    assert_eq!(s.context, Some(9_050));
    assert_eq!(s.window, Some(272_000));
    assert_eq!(s.percent(None), Some(3));
    assert_eq!(s.limits.len(), 2);
    assert_eq!(s.limits[1].used_percent, 77.0);
    assert_eq!(s.limits[0].resets_at, Some(1_763_483_205_000));
    assert_eq!(s.limits[0].window_minutes, Some(300));
}

#[test]
fn a_percentage_only_where_the_window_is_known() {
    let s = Spend {
        context: Some(126_000),
        ..Spend::default()
    };
    assert_eq!(s.percent(None), None);
    assert_eq!(s.percent(Some(200_000)), Some(63));
    assert_eq!(short(950), "950");
    assert_eq!(short(84_000), "84k");
    assert_eq!(short(1_234_567), "1.2M");
}
