//! Time as the core knows it: epoch milliseconds, handed in by the loop (the core never
//! reads the clock). Epoch milliseconds to RFC 3339 and local clock text, each instant at its time zone's
//! offset at that instant (a daylight-saving change between two instants is honoured), and
//! human durations (`90s`, `10m`, `2h`, `1d`) parsed. Pure: the zone is handed in
//! (`TimeZone::system()` by the loops, `TimeZone::UTC` in tests).

use jiff::civil::DateTime;
use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;

/// Milliseconds since the Unix epoch: the only clock the core knows, handed in by the loop.
pub type Millis = u64;

/// The instant `ms` (epoch milliseconds) as a timestamp; one beyond jiff's range (the
/// year 9999) is clamped to its end.
fn instant(ms: Millis) -> Timestamp {
    i64::try_from(ms)
        .ok()
        .and_then(|ms| Timestamp::from_millisecond(ms).ok())
        .unwrap_or(Timestamp::MAX)
}

/// The offset in force in `tz` at `ms`, and the civil date and time it gives there.
fn civil(ms: Millis, tz: &TimeZone) -> (Offset, DateTime) {
    let t = instant(ms);
    let offset = tz.to_offset(t);
    (offset, offset.to_datetime(t))
}

/// `2026-11-29T03:57:00.123Z` where the offset at that instant is 0, else with `±HH:MM`.
pub fn rfc3339(ms: Millis, tz: &TimeZone) -> String {
    let (offset, dt) = civil(ms, tz);
    let secs = offset.seconds();
    let zone = if secs == 0 {
        "Z".to_string()
    } else {
        let o = secs.unsigned_abs();
        format!(
            "{}{:02}:{:02}",
            if secs < 0 { '-' } else { '+' },
            o / 3600,
            (o % 3600) / 60
        )
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{zone}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second(),
        dt.millisecond()
    )
}

/// `2026-11-29 03:57:00` in the zone's local time.
pub fn local(ms: Millis, tz: &TimeZone) -> String {
    let (_, dt) = civil(ms, tz);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
    )
}

/// `HH:MM` of an epoch-ms instant in the zone's local time.
pub fn clock(ms: Millis, tz: &TimeZone) -> String {
    let (_, dt) = civil(ms, tz);
    format!("{:02}:{:02}", dt.hour(), dt.minute())
}

/// `HH:MM:SS` of an epoch-ms instant in the zone's local time (to tell apart two events of
/// the same minute).
pub fn clock_secs(ms: Millis, tz: &TimeZone) -> String {
    let (_, dt) = civil(ms, tz);
    format!("{:02}:{:02}:{:02}", dt.hour(), dt.minute(), dt.second())
}

/// `15:45` for a time within a day of `now`, else `Dec 7 15:45` (a weekly limit's reset).
pub fn clock_or_date(ms: Millis, now: Millis, tz: &TimeZone) -> String {
    const DAY_MS: Millis = 86_400_000;
    if ms.abs_diff(now) < DAY_MS {
        return clock(ms, tz);
    }
    let (_, dt) = civil(ms, tz);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS[usize::try_from(dt.month() - 1).unwrap_or(0).min(11)];
    format!("{month} {} {}", dt.day(), clock(ms, tz))
}

/// `90s`, `10m`, `2h`, `1d`, `1h30m` to milliseconds.
pub fn parse_duration(s: &str) -> Option<Millis> {
    let mut total: Millis = 0;
    let mut num = String::new();
    let mut any = false;
    for c in s.trim().chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let n: Millis = num.parse().ok()?;
        num.clear();
        total += n * match c {
            's' => 1_000,
            'm' => 60_000,
            'h' => 3_600_000,
            'd' => 86_400_000,
            _ => return None,
        };
        any = true;
    }
    if !num.is_empty() {
        return None;
    }
    any.then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_durations() {
        let utc = TimeZone::UTC;
        let plus_one = TimeZone::fixed(jiff::tz::offset(1));
        assert_eq!(rfc3339(0, &utc), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_795_992_299_123, &utc), "2026-11-29T22:44:59.123Z");
        assert_eq!(
            rfc3339(1_795_992_299_000, &plus_one),
            "2026-11-29T23:44:59.000+01:00"
        );
        assert_eq!(rfc3339(951_782_400_000, &utc), "2000-02-29T00:00:00.000Z");
        assert_eq!(local(1_795_992_299_000, &utc), "2026-11-29 22:44:59");
        assert_eq!(clock(1_795_992_299_000, &plus_one), "23:44");
        assert_eq!(clock_secs(1_795_992_299_000, &utc), "22:44:59");
        assert_eq!(parse_duration("90s"), Some(90_000));
        assert_eq!(parse_duration("1h30m"), Some(5_400_000));
        assert_eq!(parse_duration("2d"), Some(172_800_000));
        assert_eq!(parse_duration("10"), None);
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(parse_duration(""), None);
    }

    /// Berlin leaves CET (+01:00) for CEST (+02:00) at 2026-03-29 01:00 UTC: each instant
    /// gets the offset in force at that instant, not one read once. The zone comes from
    /// the tzdb bundled into test builds (`tzdb-bundle-always`), so the test needs no
    /// /usr/share/zoneinfo on the machine.
    #[test]
    fn each_instant_gets_the_offset_in_force_then_across_a_daylight_saving_change() {
        let berlin = jiff::tz::TimeZoneDatabase::bundled()
            .get("Europe/Berlin")
            .expect("the bundled tzdb has Europe/Berlin");
        let before: Millis = 1_774_744_200_000; // 2026-03-29T00:30:00Z
        let after: Millis = 1_774_747_800_000; // 2026-03-29T01:30:00Z
        assert_eq!(rfc3339(before, &berlin), "2026-03-29T01:30:00.000+01:00");
        assert_eq!(rfc3339(after, &berlin), "2026-03-29T03:30:00.000+02:00");
        assert_eq!(clock(before, &berlin), "01:30");
        assert_eq!(clock(after, &berlin), "03:30");
        assert_eq!(local(after, &berlin), "2026-03-29 03:30:00");
        // And back in autumn (2026-10-25 01:00 UTC): 00:30Z is 02:30 CEST, 01:30Z 02:30 CET.
        let autumn: Millis = 1_792_888_200_000; // 2026-10-25T00:30:00Z
        assert_eq!(rfc3339(autumn, &berlin), "2026-10-25T02:30:00.000+02:00");
        assert_eq!(
            rfc3339(autumn + 3_600_000, &berlin),
            "2026-10-25T02:30:00.000+01:00"
        );
    }
}
