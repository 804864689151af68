//! When a usage limit resets, from the line that announces it: `resets 3:45pm`, `resets
//! 3pm`, `resets 11:30am (Asia/Colombo)`, `resets Dec 5, 3pm`, `resets 15:45`, `try again
//! in 2 hours 5 minutes`. A time without a zone is local; with one, in that zone. A time
//! without a date is its next occurrence after the line was seen, or one that passed less
//! than an hour before (a banner still up after its reset says a time just gone).

use jiff::civil::Date;
use jiff::tz::{TimeZone, TimeZoneDatabase};
use jiff::Timestamp;

use crate::time::Millis;

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// When the limit `line` announces resets, as seen at `at`; `None` when it says no time.
pub fn resets_at(
    line: &str,
    at: Millis,
    tz: &TimeZone,
    zones: &TimeZoneDatabase,
) -> Option<Millis> {
    let lower = line.to_ascii_lowercase();
    let keys = [
        "resets at ",
        "reset at ",
        "resets in ",
        "try again at ",
        "try again in ",
        "resets ",
    ];
    let (pos, key) = keys
        .iter()
        .filter_map(|k| lower.find(k).map(|p| (p, *k)))
        .min_by_key(|(p, k)| (*p, usize::MAX - k.len()))?;
    let rest = &lower[pos + key.len()..];
    if key.ends_with("in ") {
        let ms = duration_ms(rest)?;
        return at.checked_add(ms);
    }
    let zone = zone_in(&line[pos..], zones).unwrap_or_else(|| tz.clone());
    let (date, rest) = month_day(rest);
    let (hour, minute) = clock_time(rest)?;
    let seen = Timestamp::from_millisecond(i64::try_from(at).ok()?).ok()?;
    let today = seen.to_zoned_datetime(zone.clone()).date();
    let ms_of = |d: Date| -> Option<i64> {
        let z = d
            .at(hour, minute, 0, 0)
            .to_zoned_datetime(zone.clone())
            .ok()?;
        Some(z.timestamp().as_millisecond())
    };
    let seen_ms = seen.as_millisecond();
    let when = match date {
        Some((Some(year), month, day)) => ms_of(Date::new(year, month, day).ok()?)?,
        Some((None, month, day)) => {
            let this_year = Date::new(today.year(), month, day).ok()?;
            let t = ms_of(this_year)?;
            if t < seen_ms - DAY_MS {
                ms_of(Date::new(today.year() + 1, month, day).ok()?)?
            } else {
                t
            }
        }
        None => {
            let t = ms_of(today)?;
            if t < seen_ms - HOUR_MS {
                ms_of(today.tomorrow().ok()?)?
            } else {
                t
            }
        }
    };
    Millis::try_from(when).ok()
}

/// `(Asia/Colombo)` in the line, if it names a zone the database has.
fn zone_in(line: &str, zones: &TimeZoneDatabase) -> Option<TimeZone> {
    let open = line.find('(')?;
    let close = open + line[open..].find(')')?;
    let name = line[open + 1..close].trim();
    if name.is_empty() || name.contains(' ') {
        return None;
    }
    zones.get(name).ok()
}

/// `dec 5, ` / `dec 5 at ` / `dec 5, 2027, ` at the start: the year (where said), month and
/// day, and what follows.
#[allow(clippy::type_complexity)]
fn month_day(s: &str) -> (Option<(Option<i16>, i8, i8)>, &str) {
    let Some(m) = MONTHS.iter().position(|m| s.starts_with(m)) else {
        return (None, s);
    };
    let after = s[3..].trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let after = after.trim_start();
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let Ok(day) = after[..digits].parse::<i8>() else {
        return (None, s);
    };
    // `7th` (codex), `7` (claude).
    let after = &after[digits..];
    let after = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|s| after.strip_prefix(s))
        .unwrap_or(after);
    let mut rest = after.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
    // A year where it is said: `Dec 7, 2027, 7:23pm` (claude), `Dec 7th, 2026 7:39 PM`
    // (codex).
    let mut year = None;
    if rest.bytes().take_while(u8::is_ascii_digit).count() == 4 && rest[4..].starts_with([',', ' '])
    {
        year = rest[..4].parse().ok();
        rest = rest[5..].trim_start();
    }
    let rest = rest.trim_start_matches("at ").trim_start();
    (Some((year, m as i8 + 1, day)), rest)
}

/// `3:45pm`, `3pm`, `3 pm`, `11:30 am`, `15:45` at the start.
fn clock_time(s: &str) -> Option<(i8, i8)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let mut hour: i8 = s.get(..digits)?.parse().ok()?;
    let mut rest = &s[digits..];
    let mut minute: i8 = 0;
    if let Some(r) = rest.strip_prefix(':') {
        let d = r.bytes().take_while(u8::is_ascii_digit).count();
        if d != 2 {
            return None;
        }
        minute = r[..2].parse().ok()?;
        rest = &r[2..];
    }
    let rest = rest.trim_start();
    let half = if rest.starts_with("am") || rest.starts_with("a.m") {
        Some(false)
    } else if rest.starts_with("pm") || rest.starts_with("p.m") {
        Some(true)
    } else {
        None
    };
    match half {
        Some(pm) => {
            if !(1..=12).contains(&hour) {
                return None;
            }
            hour = hour % 12 + if pm { 12 } else { 0 };
        }
        // A bare number is no time (`resets 5 times`); `15:45` is.
        None if digits > 0 && s[digits..].starts_with(':') => {}
        None => return None,
    }
    ((0..24).contains(&hour) && (0..60).contains(&minute)).then_some((hour, minute))
}

/// `2 hours 5 minutes`, `4 days 23 hours 7 minutes`, `30s`, `1h 30m`.
fn duration_ms(s: &str) -> Option<Millis> {
    let mut total: Millis = 0;
    let mut any = false;
    let mut rest = s.trim_start_matches('~');
    loop {
        rest = rest.trim_start();
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            break;
        }
        let n: Millis = rest[..digits].parse().ok()?;
        let after = rest[digits..].trim_start();
        let unit_len = after.bytes().take_while(u8::is_ascii_alphabetic).count();
        let unit = &after[..unit_len];
        let per = match unit {
            "d" | "day" | "days" => 86_400_000,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
            "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
            _ => break,
        };
        total = total.checked_add(n.checked_mul(per)?)?;
        any = true;
        rest = after[unit_len..].trim_start_matches([',', ' ']);
        rest = rest.strip_prefix("and ").unwrap_or(rest);
    }
    any.then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn berlin() -> TimeZone {
        jiff::tz::db().get("Europe/Berlin").unwrap()
    }

    /// Epoch ms of a civil time in Berlin.
    fn at(s: &str) -> Millis {
        let dt: jiff::civil::DateTime = s.parse().unwrap();
        dt.to_zoned_datetime(berlin())
            .unwrap()
            .timestamp()
            .as_millisecond() as Millis
    }

    fn reset(line: &str, seen: &str) -> Option<Millis> {
        resets_at(line, at(seen), &berlin(), jiff::tz::db())
    }

    #[test]
    fn a_local_time_without_a_date_is_the_next_one() {
        let line = "You've hit your session limit · resets 3:45pm";
        assert_eq!(
            reset(line, "2026-12-04T13:10"),
            Some(at("2026-12-04T15:45"))
        );
        assert_eq!(
            reset("5-hour limit reached ∙ resets 3pm", "2026-12-04T13:10"),
            Some(at("2026-12-04T15:00"))
        );
        // Seen in the evening: tomorrow's.
        assert_eq!(
            reset(line, "2026-12-04T20:00"),
            Some(at("2026-12-05T15:45"))
        );
        // Seen just after it: the time just gone (a banner left up past its reset).
        assert_eq!(
            reset(line, "2026-12-04T16:05"),
            Some(at("2026-12-04T15:45"))
        );
        assert_eq!(
            reset("resets 12am", "2026-12-04T23:30"),
            Some(at("2026-12-05T00:00"))
        );
        assert_eq!(
            reset("resets 15:45", "2026-12-04T13:00"),
            Some(at("2026-12-04T15:45"))
        );
    }

    #[test]
    fn a_named_zone_is_that_zones_time() {
        // 11:30 in Colombo (+05:30) is 07:00 in Berlin (+01:00) in December.
        let line = "You're out of extra usage · resets 11:30am (Asia/Colombo)";
        assert_eq!(
            reset(line, "2026-12-04T05:00"),
            Some(at("2026-12-04T07:00"))
        );
        // An unknown zone falls back to local time rather than to nothing.
        let odd = "resets 11:30am (Mars/Olympus)";
        assert_eq!(reset(odd, "2026-12-04T05:00"), Some(at("2026-12-04T11:30")));
    }

    #[test]
    fn dates_and_durations_are_read() {
        assert_eq!(
            reset(
                "weekly limit reached · resets Dec 9, 3pm",
                "2026-12-04T13:00"
            ),
            Some(at("2026-12-09T15:00"))
        );
        assert_eq!(
            reset("resets Jan 2 at 9am", "2026-12-30T13:00"),
            Some(at("2027-01-02T09:00"))
        );
        assert_eq!(
            reset(
                "You've hit your usage limit. try again in 2 hours 5 minutes.",
                "2026-12-04T13:00"
            ),
            Some(at("2026-12-04T15:05"))
        );
        assert_eq!(
            reset("try again in 4 days 23 hours 7 minutes", "2026-12-04T13:00"),
            Some(at("2026-12-09T12:07"))
        );
    }

    #[test]
    fn claudes_own_banners_are_read() {
        // As claude 2.1.197 prints them (TZ=UTC, and another zone).
        assert_eq!(
            reset(
                "You've hit your session limit · resets 9:23pm (UTC)",
                "2026-12-04T19:23"
            ),
            Some(at("2026-12-04T22:23"))
        );
        assert_eq!(
            reset(
                "  ⎿ \u{a0}You've hit your weekly limit · resets Dec 7, 7:23pm (UTC)",
                "2026-12-04T19:23"
            ),
            Some(at("2026-12-07T20:23"))
        );
        assert_eq!(
            reset(
                "You've hit your Opus limit · resets Dec 7, 2027, 7:23pm (UTC)",
                "2026-12-04T19:23"
            ),
            Some(at("2027-12-07T20:23"))
        );
        assert_eq!(
            reset(
                "You've hit your session limit · resets 4:23pm (America/New_York)",
                "2026-12-04T19:23"
            ),
            Some(at("2026-12-04T22:23"))
        );
    }

    #[test]
    fn codexs_own_banners_are_read() {
        // codex 0.171 `exec`, as it prints them.
        let line = "ERROR: You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 9:38 PM.";
        assert_eq!(
            reset(line, "2026-12-04T19:23"),
            Some(at("2026-12-04T21:38"))
        );
        let later =
            "You’ve hit your usage limit. Upgrade to Pro or try again at Dec 7th, 2026 7:39 PM.";
        assert_eq!(
            reset(later, "2026-12-04T19:23"),
            Some(at("2026-12-07T19:39"))
        );
    }

    #[test]
    fn lines_without_a_time_say_none() {
        for line in [
            "You've hit your usage limit",
            "resets soon",
            "resets 5 times",
            "resets 13pm",
            "resets 3:4pm",
            "try again in a while",
            "",
        ] {
            assert_eq!(reset(line, "2026-12-04T13:00"), None, "{line}");
        }
    }
}
