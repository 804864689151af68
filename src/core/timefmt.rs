//! Dates without a date crate: epoch milliseconds to RFC 3339 (UTC) and local clock text,
//! and human durations (`90s`, `10m`, `2h`, `1d`) parsed. Pure.

use crate::core::msg::Millis;

/// Days since 1970-01-01 to (year, month, day) (Howard Hinnant's civil_from_days).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `2026-11-29T03:57:00.123Z` at a UTC offset of 0, or with `±HH:MM`.
pub fn rfc3339(ms: Millis, utc_offset: i64) -> String {
    let secs = (ms / 1000) as i64 + utc_offset;
    let (y, mo, d) = civil(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    let zone = if utc_offset == 0 {
        "Z".to_string()
    } else {
        let o = utc_offset.abs();
        format!(
            "{}{:02}:{:02}",
            if utc_offset < 0 { '-' } else { '+' },
            o / 3600,
            (o % 3600) / 60
        )
    };
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}{zone}",
        s / 3600,
        (s % 3600) / 60,
        s % 60,
        ms % 1000
    )
}

/// `2026-11-29 03:57:00` in local time.
pub fn local(ms: Millis, utc_offset: i64) -> String {
    let t = rfc3339(ms, utc_offset);
    format!("{} {}", &t[..10], &t[11..19])
}

/// `HH:MM` of an epoch-ms instant at a UTC offset.
pub fn clock(ms: Millis, utc_offset: i64) -> String {
    let secs = (ms / 1000) as i64 + utc_offset;
    let day = secs.rem_euclid(86_400);
    format!("{:02}:{:02}", day / 3600, (day % 3600) / 60)
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
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_795_992_299_123, 0), "2026-11-29T22:44:59.123Z");
        assert_eq!(
            rfc3339(1_795_992_299_000, 3600),
            "2026-11-29T23:44:59.000+01:00"
        );
        assert_eq!(rfc3339(951_782_400_000, 0), "2000-02-29T00:00:00.000Z");
        assert_eq!(local(1_795_992_299_000, 0), "2026-11-29 22:44:59");
        assert_eq!(parse_duration("90s"), Some(90_000));
        assert_eq!(parse_duration("1h30m"), Some(5_400_000));
        assert_eq!(parse_duration("2d"), Some(172_800_000));
        assert_eq!(parse_duration("10"), None);
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(parse_duration(""), None);
    }
}
