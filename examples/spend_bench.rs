//! What following the agents' files costs (issue 31): N claude transcripts of M MB each,
//! written as claude writes them (each assistant message over three lines sharing one
//! `message.id`, with a full copy of its usage; long user and tool lines between), then
//! read by agentwatch's own follower as the dashboard and the daemon do every second.
//! Measured, wall clock and this process's CPU (user + system): the first read of all of
//! them; an ask when nothing changed (one stat per file); an ask after one message was
//! appended to every file; the memory the follower keeps.
//!
//!   cargo run --release --example spend_bench -- DIR AGENTS MB
//!
//! DIR is written (AGENTS x MB) and removed at the end. `bench/spend.sh` runs it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use agentwatch::adapters::discover::Dirs;
use agentwatch::adapters::spend::Follower;
use agentwatch::core::pane::PaneId;
use agentwatch::core::spend::Kind;
use agentwatch::core::state::SpendAsk;

fn cpu_ms() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 * 1e3 + v.tv_usec as f64 / 1e3;
    t(u.ru_utime) + t(u.ru_stime)
}

fn rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

/// One message as claude writes it: a user line (a prompt or a tool's result), and the
/// assistant's reply over three lines sharing its id.
fn message(n: u64, out: &mut Vec<u8>) {
    let text = "x".repeat(1_500);
    writeln!(
        out,
        r#"{{"type":"user","isSidechain":false,"message":{{"role":"user","content":[{{"type":"tool_result","content":"{text}"}}]}},"uuid":"u{n}"}}"#
    )
    .unwrap();
    for block in 0..3 {
        writeln!(
            out,
            r#"{{"type":"assistant","isSidechain":false,"requestId":"req_{n}","message":{{"id":"msg_{n}","model":"claude-opus-4-8","role":"assistant","content":[{{"type":"text","text":"block {block} {}"}}],"usage":{{"input_tokens":4,"output_tokens":{},"cache_read_input_tokens":{},"cache_creation_input_tokens":300}}}},"uuid":"a{n}-{block}"}}"#,
            &text[..400],
            100 + n % 50,
            20_000 + n % 1_000
        )
        .unwrap();
    }
}

/// `bytes` appended to every transcript.
fn append_to_each(projects: &Path, ids: &[String], bytes: &[u8]) {
    for id in ids {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(projects.join(format!("{id}.jsonl")))
            .unwrap();
        f.write_all(bytes).unwrap();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, agents, mb] = &args[..] else {
        eprintln!("usage: spend_bench DIR AGENTS MB");
        std::process::exit(2)
    };
    let (agents, mb): (usize, u64) = (agents.parse().unwrap(), mb.parse().unwrap());
    let root = Path::new(dir);
    let projects = root.join("claude/projects/-bench");
    std::fs::create_dir_all(&projects).unwrap();
    let t = Instant::now();
    let mut chunk = Vec::new();
    let mut n = 0;
    while chunk.len() < 1 << 20 {
        message(n, &mut chunk);
        n += 1;
    }
    let ids: Vec<String> = (0..agents)
        .map(|i| format!("{i:08x}-4f7b-4a43-9d55-3f1f1b7f0a11"))
        .collect();
    for id in &ids {
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(projects.join(format!("{id}.jsonl"))).unwrap(),
        );
        // The same megabyte of messages again and again, each time under new ids.
        for rep in 0..mb {
            let text = String::from_utf8_lossy(&chunk).replace("\"msg_", &format!("\"msg_{rep}_"));
            f.write_all(text.as_bytes()).unwrap();
        }
    }
    eprintln!(
        "wrote {agents} x {mb} MB in {:.1}s",
        t.elapsed().as_secs_f64()
    );
    let dirs = Dirs {
        claude: Some(root.join("claude")),
        ..Dirs::default()
    };
    let asks: Vec<SpendAsk> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| SpendAsk {
            pane: PaneId(i as u32),
            kind: Kind::Claude,
            session_id: id.clone(),
            cwd: "/bench".into(),
        })
        .collect();
    let cache = root.join("cache");
    let follower = Follower::with_cache(Some(cache.clone()));
    let rss0 = rss_mb();
    let (t, c) = (Instant::now(), cpu_ms());
    let mut asks_needed = 0;
    let mut longest: f64 = 0.0;
    loop {
        asks_needed += 1;
        let one = Instant::now();
        let read = follower.read(&asks, &dirs);
        longest = longest.max(one.elapsed().as_secs_f64() * 1e3);
        let done = read.len() == agents
            && read
                .iter()
                .all(|(_, s)| s.tokens.total() > 0 && s.context.is_some());
        if done || asks_needed > 1_000 {
            break;
        }
    }
    let first = (t.elapsed().as_secs_f64() * 1e3, cpu_ms() - c);
    // Once more, to be sure every file was read to its end.
    let read = follower.read(&asks, &dirs);
    let total: u64 = read.iter().map(|(_, s)| s.tokens.total()).sum();
    let rss = rss_mb();
    let idle_asks = 50;
    let (t, c) = (Instant::now(), cpu_ms());
    for _ in 0..idle_asks {
        follower.read(&asks, &dirs);
    }
    let idle = (
        t.elapsed().as_secs_f64() * 1e3 / idle_asks as f64,
        (cpu_ms() - c) / idle_asks as f64,
    );
    let mut one = Vec::new();
    message(u64::MAX / 2, &mut one);
    append_to_each(&projects, &ids, &one);
    let (t, c) = (Instant::now(), cpu_ms());
    let read = follower.read(&asks, &dirs);
    let grown = (t.elapsed().as_secs_f64() * 1e3, cpu_ms() - c);
    let after: u64 = read.iter().map(|(_, s)| s.tokens.total()).sum();
    assert!(after > total, "the appended messages were counted");
    // A one-shot `status` (a new follower) once the dashboard kept its tallies, after one
    // more message each: it reads the kept tallies and what the files grew by.
    append_to_each(&projects, &ids, &one);
    let (t, c) = (Instant::now(), cpu_ms());
    let fresh = Follower::with_cache(Some(cache.clone()));
    let read = fresh.read(&asks, &dirs);
    let oneshot = (t.elapsed().as_secs_f64() * 1e3, cpu_ms() - c);
    assert_eq!(read.len(), agents, "every file whole in one ask");
    println!(
        "agents={agents} mb_each={mb} total_gb={:.1}",
        (agents as u64 * mb) as f64 / 1024.0
    );
    println!(
        "first read: {:.0} ms wall, {:.0} ms cpu, in {asks_needed} asks, the longest {longest:.0} ms ({:.0} MB/s of cpu; at one ask per 2 s all are shown after {:.0} s)",
        first.0,
        first.1,
        (agents as u64 * mb) as f64 / (first.1 / 1e3),
        asks_needed as f64 * 2.0
    );
    println!(
        "ask with nothing new: {:.2} ms wall, {:.2} ms cpu ({:.3} % of a core at one a second)",
        idle.0,
        idle.1,
        idle.1 / 1_000.0 * 100.0
    );
    println!(
        "ask after one message appended to each: {:.1} ms wall, {:.1} ms cpu",
        grown.0, grown.1
    );
    println!(
        "follower memory: {:.1} MB (rss {rss0:.1} -> {rss:.1} MB)",
        rss - rss0
    );
    println!(
        "a one-shot status with the tallies kept: {:.0} ms wall, {:.0} ms cpu",
        oneshot.0, oneshot.1
    );
    std::fs::remove_dir_all(root.join("claude")).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
}
