//! The judgement of counts, and which panes are counted anew.

use super::*;

fn w(bytes: u64, calls: u64) -> Option<Written> {
    Some(Written { bytes, calls })
}

fn count(now: Instant) -> Count {
    let writers = Arc::new(Counter::reopen(None, &[std::process::id()]).unwrap());
    Count::new(1, Vec::new(), writers, 0, now)
}

/// claude's spinner, one frame (47 bytes, one write), and claude at its permission
/// prompt (three 8-byte eventfd writes).
const SPINNER: Option<Written> = Some(Written {
    bytes: 47,
    calls: 1,
});
const EVENTFD: Option<Written> = Some(Written {
    bytes: 24,
    calls: 3,
});

#[test]
fn next_to_nothing_is_weighed_by_how_long_it_was_written_over() {
    let ms = Duration::from_millis;
    // codex at work, at the least it was measured to write, over a slice and a tenth.
    assert!(busy(
        Written {
            bytes: 78,
            calls: 3
        },
        SLICE
    ));
    assert!(busy(
        Written {
            bytes: 31,
            calls: 1
        },
        ms(100)
    ));
    // An idle claude's eventfd writes: never, however short or long the window.
    assert!(!busy(
        Written {
            bytes: 24,
            calls: 3
        },
        SLICE
    ));
    assert!(!busy(
        Written {
            bytes: 16,
            calls: 2
        },
        ms(100)
    ));
    assert!(!busy(
        Written {
            bytes: 40,
            calls: 5
        },
        ms(400)
    ));
    assert!(!busy(
        Written {
            bytes: 96,
            calls: 12
        },
        SLOW
    ));
    // A spinner line a slice, over a slow read's second: work.
    assert!(busy(
        Written {
            bytes: 188,
            calls: 4
        },
        SLOW
    ));
}

#[test]
fn work_is_a_burst_that_goes_on_and_its_stop_a_slice_with_next_to_nothing() {
    let t0 = Instant::now();
    let mut c = count(t0);
    assert_eq!(c.due(), t0 + SLICE);
    assert!(!c.judge(EVENTFD, t0 + SLICE), "an idle agent's writes");
    assert!(!c.judge(SPINNER, t0 + 2 * SLICE), "a burst is not work yet");
    assert_eq!(c.due(), t0 + 2 * SLICE + FIRST, "read again soon");
    assert!(!c.working);
    let start = t0 + 2 * SLICE + FIRST;
    // codex at work at its least, over that tenth of a second.
    assert!(c.judge(w(31, 1), start), "it goes on: work, said");
    assert!(c.working);
    assert_eq!(c.at, Some(start));
    // A few bytes at a time, many times: at work; each slice dates it.
    let later = start + SLICE;
    assert!(!c.judge(w(12, QUIET_CALLS), later));
    assert_eq!(c.at, Some(later));
    // Next to nothing: stopped, dated from when it was last counted at work.
    assert!(c.judge(EVENTFD, later + SLICE), "its stop, said");
    assert!(!c.working);
    assert_eq!(c.at, Some(later));
}

#[test]
fn a_burst_that_does_not_go_on_is_a_redraw_dated_for_a_look_not_work() {
    let t0 = Instant::now();
    let mut c = count(t0);
    // codex at its approval prompt: 60 bytes once a second.
    assert!(!c.judge(w(60, 1), t0 + SLICE));
    assert!(!c.judge(w(0, 0), t0 + SLICE + FIRST), "not yet told");
    assert_eq!(c.due(), t0 + 2 * SLICE, "a slice of it tells");
    assert!(
        c.judge(w(0, 0), t0 + 2 * SLICE),
        "said: the screen may have changed"
    );
    assert!(!c.working, "not work");
    assert_eq!(c.at, Some(t0 + SLICE), "dated from the burst");
    // A keystroke at claude's prompt, then its eventfd writes: not work either.
    let t = t0 + 3 * SLICE;
    assert!(!c.judge(w(90, 2), t));
    assert!(!c.judge(w(16, 2), t + FIRST));
    assert!(c.judge(w(8, 1), t + SLICE));
    assert!(!c.working);
    // Many small writes: not a tenth's worth, a slice's.
    let t = t + 2 * SLICE;
    assert!(!c.judge(w(6, 6), t), "a burst");
    assert!(!c.judge(w(2, 2), t + FIRST));
    assert!(c.judge(w(4, 4), t + SLICE), "six writes a slice: work");
    assert!(c.working);
    assert!(c.judge(EVENTFD, t + 2 * SLICE));
    // Writers all gone while at work: stopped.
    let t = t + 3 * SLICE;
    assert!(!c.judge(SPINNER, t));
    assert!(c.judge(SPINNER, t + FIRST));
    assert!(
        c.judge(None, t + FIRST + SLICE),
        "its writers are gone: stopped"
    );
    assert!(!c.working);
}

#[test]
fn a_long_quiet_pane_is_read_once_a_second_and_weighed_as_four_slices() {
    let t0 = Instant::now();
    let mut c = count(t0);
    let mut t = t0;
    while t < t0 + LONG {
        t += SLICE;
        assert!(!c.judge(EVENTFD, t));
    }
    assert!(c.slow, "quiet for {LONG:?}");
    assert_eq!(c.due(), t + SLOW);
    // An idle claude's eventfd writes over a whole second: nothing.
    t += SLOW;
    assert!(!c.judge(w(96, 12), t));
    assert!(c.slow && c.burst.is_none());
    // A little more than that: not a burst, a closer look.
    t += SLOW;
    assert!(!c.judge(w(120, 3), t));
    assert!(!c.slow && c.burst.is_none() && !c.working);
    assert_eq!(c.due(), t + SLICE);
    t += SLICE;
    assert!(!c.judge(EVENTFD, t));
    assert!(c.slow, "quiet again");
    // One write after a long quiet (a notice, a screen redrawn): a burst, and its screen
    // read again when it does not go on.
    t += SLOW;
    assert!(!c.judge(w(700, 1), t));
    let burst = t;
    assert!(!c.judge(w(0, 0), burst + FIRST));
    t = burst + SLICE;
    assert!(c.judge(w(0, 0), t), "a redraw: said");
    assert_eq!(c.at, Some(burst));
    // Work after a long quiet: a burst, then work.
    t += SLICE;
    assert!(!c.judge(w(0, 0), t));
    assert!(c.slow, "quiet long since: read once a second again");
    t += SLOW;
    assert!(!c.judge(w(2_000, 40), t));
    t += FIRST;
    assert!(c.judge(SPINNER, t));
    assert!(c.working && !c.slow);
    // Quiet a minute: read every fourth second.
    assert!(c.judge(EVENTFD, t + SLICE));
    let quiet = t + SLICE;
    t = quiet;
    while t < quiet + LONGER {
        t += SLICE;
        assert!(!c.judge(EVENTFD, t));
    }
    assert_eq!(c.due(), t + SLOWER);
}

fn procs(pids: &[u32]) -> Vec<Proc> {
    pids.iter()
        .map(|&pid| Proc {
            pid,
            ..Proc::default()
        })
        .collect()
}

#[test]
fn a_pane_is_counted_anew_only_when_its_processes_change() {
    let hearing = Mutex::new(Hearing::default());
    hearing.lock().unwrap().want(&[PaneId(1)]);
    let mut panes = vec![crate::core::testkit::pane(1, 1, "claude")];
    let pid = panes[0].pid.unwrap();
    let counted = |h: &Mutex<Hearing>, below: &[u32]| {
        let c = Count::new(
            pid,
            below.to_vec(),
            count(Instant::now()).writers,
            0,
            Instant::now(),
        );
        h.lock().unwrap().counts.insert(1, c);
    };
    let walk = procs(&[7, 8]);
    let todo = changed(&hearing, &panes, |_, _| Some(&walk[..]));
    assert_eq!(todo.len(), 1, "not counted yet");
    assert_eq!(todo[0].below, [7, 8]);
    counted(&hearing, &[7, 8]);
    // Walked again, the same processes (a new list): nothing to open.
    let again = procs(&[7, 8]);
    assert!(changed(&hearing, &panes, |_, _| Some(&again[..])).is_empty());
    // A process more below it: opened anew, its count kept.
    let more = procs(&[7, 8, 9]);
    let todo = changed(&hearing, &panes, |_, _| Some(&more[..]));
    assert_eq!(todo.len(), 1);
    assert!(
        todo[0].old.is_some(),
        "the processes still there keep their counts"
    );
    // Another process (a respawn): opened anew.
    panes[0].pid = Some(pid + 1);
    assert_eq!(changed(&hearing, &panes, |_, _| Some(&more[..])).len(), 1);
    // Gone: forgotten.
    assert!(changed(&hearing, &[], |_, _| None).is_empty());
    assert!(hearing.lock().unwrap().counts.is_empty());
}
