//! How far another host's clock is ahead of this one's, read in whole seconds over a round
//! trip, and its times moved onto this clock: a death there is dated, and a run there
//! measured, as they are here. Pure arithmetic.

use crate::core::time::Millis;

/// How far a clock that read `theirs` (whole epoch seconds) between `before` and `after`
/// (this clock, ms) is ahead of this one, in whole seconds (as ms).
pub(crate) fn clock_skew(theirs: u64, before: Millis, after: Millis) -> i64 {
    // Their second began at `theirs`: its middle is the best guess of their instant.
    let Some(theirs) = theirs
        .checked_mul(1000)
        .and_then(|t| i64::try_from(t.saturating_add(500)).ok())
    else {
        return 0;
    };
    let ours = ((before + after) / 2) as i64;
    ((theirs - ours) as f64 / 1000.0).round() as i64 * 1000
}

/// The skew acted on: none within 2 s, which a whole second read over a round trip cannot
/// tell apart from none.
pub(crate) fn in_step(skew: i64) -> i64 {
    if skew.abs() <= 2000 {
        0
    } else {
        skew
    }
}

/// The skew to go on with: the one known, unless the new reading differs from it by more
/// than the reading's own uncertainty (a second, and half the question's round trip). A
/// skew that wobbled from reading to reading would move a death's time between polls.
pub(crate) fn settle(known: Option<i64>, read: i64, round_trip: Millis) -> i64 {
    match known {
        Some(k) if (read - k).abs() <= 1000 + (round_trip / 2) as i64 => k,
        _ => read,
    }
}

/// A time by another host's clock, on this one's.
pub(crate) fn shift_ms(t: Millis, skew: i64) -> Millis {
    (t as i64 - skew).max(0) as Millis
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_clock_is_ahead_or_behind_by_whole_seconds_and_within_two_it_is_in_step() {
        // This clock, ms.
        let t = 1_796_000_000_000;
        // Their second 1_796_000_000 is [t, t + 1000): in step, whatever the round trip.
        assert_eq!(in_step(clock_skew(1_796_000_000, t, t + 40)), 0);
        assert_eq!(in_step(clock_skew(1_796_000_001, t + 900, t + 950)), 0);
        assert_eq!(in_step(clock_skew(1_795_999_999, t + 100, t + 300)), 0);
        assert_eq!(in_step(clock_skew(1_796_000_002, t, t + 40)), 0);
        // An hour ahead and ten minutes behind, in whole seconds.
        assert_eq!(clock_skew(1_796_003_600, t, t + 40), 3_600_000);
        assert_eq!(clock_skew(1_795_999_400, t, t + 40), -600_000);
        assert_eq!(in_step(clock_skew(1_796_000_005, t, t + 40)), 5_000);
        assert_eq!(clock_skew(u64::MAX, t, t + 40), 0);
        // Readings that wobble within their uncertainty keep the skew known (a host 2.5 s
        // off reads 2 s and 3 s in turn, and must not flip in and out of step); a real
        // change, or a first reading, is taken.
        assert_eq!(settle(None, 3_600_000, 40), 3_600_000);
        assert_eq!(settle(Some(3_600_000), 3_601_000, 40), 3_600_000);
        assert_eq!(settle(Some(3_600_000), 3_599_000, 40), 3_600_000);
        assert_eq!(settle(Some(3_600_000), 3_605_000, 40), 3_605_000);
        assert_eq!(in_step(settle(Some(3_000), 2_000, 40)), 3_000);
        assert_eq!(settle(Some(30_000), 0, 40), 0);
        // A slow answer widens what is taken as the same.
        assert_eq!(settle(Some(3_000), 5_000, 2_400), 3_000);
        assert_eq!(shift_ms(t + 3_600_000, 3_600_000), t);
        assert_eq!(shift_ms(t, -600_000), t + 600_000);
        assert_eq!(shift_ms(5, 3_600_000), 0);
    }
}
