//! The list-panes parser against output recorded from a real tmux 3.3a server
//! (tests/fixtures/list-panes-tmux-3.3a.bin): a live pane with agentwatch options, an exit
//! code, a signal, a window name and path with quotes, `#{}`, unicode, a tab and a newline,
//! and a pane whose exit status tmux lost (the lost-SIGCHLD bug, caught in the recording).

use agentwatch::adapters::tmux::format::{parse_with, Marks};

/// The recording was made with bare RS (0x1e) and US (0x1f) marks, no nonce.
fn parse_listing(out: &[u8]) -> agentwatch::core::pane::Listing {
    parse_with(
        out,
        Marks {
            record: 0x1e,
            field: 0x1f,
            nonce: "",
        },
    )
}
use agentwatch::core::pane::{Exit, PaneId};
use agentwatch::core::words::command_words;

const RECORDED: &[u8] = include_bytes!("../fixtures/list-panes-tmux-3.3a.bin");

#[test]
fn every_recorded_pane_parses_with_nothing_malformed() {
    let l = parse_listing(RECORDED);
    assert_eq!(l.malformed, 0);
    assert_eq!(l.panes.len(), 5);
    assert!(l.server_pid.is_some());
}

#[test]
fn a_live_pane_and_its_agentwatch_options() {
    let l = parse_listing(RECORDED);
    let p = &l.panes[0];
    assert_eq!(p.id, PaneId(0));
    assert_eq!(p.target(), "main:0.0");
    assert!(!p.dead);
    assert_eq!(p.exit(), None);
    assert_eq!(p.current_command, "sleep");
    assert_eq!(p.opts.agent, "claude");
    assert_eq!(p.opts.cwd, "/home/u/a b;");
    assert_eq!(p.opts.args, r#"["--model","x y"]"#);
    assert!(p.remain_on_exit);
    // A hook plugin's words, as tmux-agent-sidebar writes them.
    assert_eq!(p.hook_status, "waiting");
    assert_eq!(p.hook_reason, "Claude needs your permission");
    assert_eq!(l.panes[1].hook_status, "");
}

#[test]
fn exit_code_and_signal() {
    let l = parse_listing(RECORDED);
    assert_eq!(l.panes[1].exit(), Some(Exit::Code(3)));
    assert_eq!(l.panes[1].window_name, "exit 3");
    assert!(l.panes[1].dead_time.is_some());
    assert_eq!(
        l.panes[1].current_path, "",
        "tmux forgets the path of a dead pane"
    );
    assert_eq!(l.panes[2].exit(), Some(Exit::Signal(9)));
    assert_eq!(
        l.panes[2].exit().map(|e| e.describe()).as_deref(),
        Some("killed by signal 9 (SIGKILL)")
    );
    assert_eq!(
        command_words(&l.panes[2].start_command),
        ["sh", "-c", "kill -9 $$"]
    );
}

#[test]
fn hostile_names_and_paths_survive_intact() {
    let l = parse_listing(RECORDED);
    let p = &l.panes[3];
    assert_eq!(p.window_name, "we \"ird\" #{pane_id} ünï\ttab");
    assert!(
        p.start_path
            .ends_with("/dir with \"quotes\" #{x} ünï\nline"),
        "{:?}",
        p.start_path
    );
    assert_eq!(
        command_words(&p.start_command),
        ["sleep", "1000", "it's", "x;"]
    );
}

#[test]
fn a_lost_exit_status_is_dead_without_an_exit_never_running() {
    let l = parse_listing(RECORDED);
    let p = &l.panes[4];
    assert!(p.dead);
    assert_eq!(
        (p.dead_status, p.dead_signal, p.dead_time),
        (None, None, None)
    );
    assert_eq!(p.exit(), None);
    assert_eq!(
        command_words(&p.start_command),
        ["claude-not-installed", "--resume", "1234"]
    );
}

#[test]
fn any_truncation_of_the_recording_never_panics_and_never_invents_panes() {
    for cut in 0..RECORDED.len() {
        let l = parse_listing(&RECORDED[..cut]);
        assert!(l.panes.len() <= 5);
    }
}

/// A small deterministic PRNG (xorshift64*), so the fuzz run is the same every time.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn mutated_and_random_output_never_panics_and_never_invents_panes() {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let interesting = [
        0x1e, 0x1f, b'\n', b'\t', b'%', b'#', 0xff, 0xc3, 0x00, b' ', b'1', b'0',
    ];
    for round in 0..20_000 {
        let mut bytes = RECORDED.to_vec();
        for _ in 0..1 + rng.below(8) {
            let at = rng.below(bytes.len().max(1));
            match rng.below(5) {
                0 => bytes[at] = interesting[rng.below(interesting.len())],
                1 => bytes.insert(at, interesting[rng.below(interesting.len())]),
                2 => {
                    bytes.remove(at.min(bytes.len().saturating_sub(1)));
                }
                3 => {
                    // A very long field.
                    let long = vec![b'x'; 1 + rng.below(100_000)];
                    bytes.splice(at..at, long);
                }
                _ => bytes[at] = rng.next() as u8,
            }
        }
        let records = bytes.iter().filter(|&&b| b == 0x1e).count();
        let l = parse_listing(&bytes);
        assert!(l.panes.len() + l.malformed <= records, "round {round}");
    }
    for _ in 0..5_000 {
        let len = rng.below(400);
        let junk: Vec<u8> = (0..len)
            .map(|_| {
                interesting
                    .get(rng.below(interesting.len() * 2))
                    .copied()
                    .unwrap_or(rng.next() as u8)
            })
            .collect();
        let _ = parse_listing(&junk);
        let _ = agentwatch::core::words::command_words(&String::from_utf8_lossy(&junk));
    }
}

#[test]
fn extra_fields_in_a_record_are_refused_not_misread() {
    let mut bytes = Vec::new();
    for rec in RECORDED.split(|&b| b == 0x1e).skip(1) {
        bytes.push(0x1e);
        let rec = rec.strip_suffix(b"\n").unwrap_or(rec);
        bytes.extend_from_slice(rec);
        bytes.extend_from_slice(b"\x1fsurprise\n");
    }
    let l = parse_listing(&bytes);
    assert!(l.panes.is_empty());
    assert_eq!(l.malformed, 5);
}
