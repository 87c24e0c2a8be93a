//! Timestamps of replayed logs: the forms access logs and HAR files write, read into
//! nanoseconds since the Unix epoch, with whether they carry a fraction of a second.
//!
//! Owns `[10/Oct/2000:13:55:36 -0700]` (Apache's and nginx's `%t`/`$time_local`),
//! `1607212345.123` (nginx's `$msec`, seconds since the epoch) and ISO 8601
//! (`2000-10-10T13:55:36-07:00`, `$time_iso8601`, HAR's `startedDateTime`, with an
//! optional fraction and `Z`). Hand-written (a dozen lines of calendar arithmetic;
//! no date crate is in the tree). Pure; called by the format parsers.

/// A point in time read from a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// Nanoseconds since the Unix epoch (negative before 1970).
    pub(crate) ns: i64,
    /// Whether it has a fraction of a second (else it is a whole second).
    pub(crate) precise: bool,
}

const NS: i64 = 1_000_000_000;

/// Days from 1970-01-01 to `y-m-d` (proleptic Gregorian; Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days in month `m` of year `y`.
fn month_days(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `digits` as a number: ASCII digits only, `n` of them.
fn num(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Nanoseconds since the epoch of a checked civil date and time, at `offset_s`
/// seconds east of UTC.
fn civil(y: i64, mo: u32, d: u32, h: u32, mi: u32, s: u32, offset_s: i64) -> Option<i64> {
    if !(1..=12).contains(&mo) || d == 0 || d > month_days(y, mo) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let secs = days_from_civil(y, mo, d) * 86_400
        + i64::from(h) * 3600
        + i64::from(mi) * 60
        + i64::from(s)
        - offset_s;
    secs.checked_mul(NS)
}

/// `+hhmm`, `-hh:mm` or `Z`: seconds east of UTC.
fn zone(z: &str) -> Option<i64> {
    if z == "Z" {
        return Some(0);
    }
    let sign = match z.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = z[1..].chars().filter(|&c| c != ':').collect();
    if digits.len() != 4 || (z.len() == 6 && z.as_bytes()[3] != b':') {
        return None;
    }
    let h = num(&digits[..2], 2)?;
    let m = num(&digits[2..], 2)?;
    (h <= 23 && m <= 59).then(|| sign * i64::from(h * 3600 + m * 60))
}

/// The month of an English abbreviation (`Jan` … `Dec`).
fn month(name: &str) -> Option<u32> {
    const NAMES: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    NAMES.iter().position(|&n| n == name).map(|i| i as u32 + 1)
}

/// A fraction of a second (`123` of `.123`) in nanoseconds; at most 9 digits.
fn fraction(digits: &str) -> Option<i64> {
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: i64 = digits.parse().ok()?;
    Some(v * 10i64.pow(9 - digits.len() as u32))
}

/// `10/Oct/2000:13:55:36 -0700` (`%t` without its brackets).
pub(crate) fn clf(s: &str) -> Option<Stamp> {
    let (when, z) = s.split_once(' ')?;
    let mut p = when.split(['/', ':']);
    let d = num(p.next()?, 2)?;
    let mo = month(p.next()?)?;
    let y = num(p.next()?, 4)?;
    let h = num(p.next()?, 2)?;
    let mi = num(p.next()?, 2)?;
    let sec = num(p.next()?, 2)?;
    if p.next().is_some() {
        return None;
    }
    let ns = civil(i64::from(y), mo, d, h, mi, sec, zone(z)?)?;
    Some(Stamp { ns, precise: false })
}

/// `1607212345.123` (nginx's `$msec`): seconds since the epoch, with a fraction.
pub(crate) fn epoch(s: &str) -> Option<Stamp> {
    let (whole, frac) = match s.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (s, None),
    };
    if whole.is_empty() || whole.len() > 12 || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = whole.parse().ok()?;
    let ns = secs.checked_mul(NS)? + frac.map_or(Some(0), fraction)?;
    Some(Stamp {
        ns,
        precise: frac.is_some(),
    })
}

/// ISO 8601: `2000-10-10T13:55:36[.fff][Z|±hh:mm|±hhmm]` (no zone: UTC).
pub(crate) fn iso8601(s: &str) -> Option<Stamp> {
    let (date, rest) = s.split_once('T')?;
    let mut p = date.split('-');
    let y = num(p.next()?, 4)?;
    let mo = num(p.next()?, 2)?;
    let d = num(p.next()?, 2)?;
    if p.next().is_some() || rest.len() < 8 {
        return None;
    }
    let (clock, tail) = rest.split_at_checked(8)?;
    let mut c = clock.split(':');
    let h = num(c.next()?, 2)?;
    let mi = num(c.next()?, 2)?;
    let sec = num(c.next()?, 2)?;
    let (frac, z) = match tail.strip_prefix('.') {
        Some(t) => {
            let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
            (Some(fraction(&t[..end])?), &t[end..])
        }
        None => (None, tail),
    };
    let offset = if z.is_empty() { 0 } else { zone(z)? };
    let ns = civil(i64::from(y), mo, d, h, mi, sec, offset)? + frac.unwrap_or(0);
    Some(Stamp {
        ns,
        precise: frac.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_agree_on_one_instant() {
        // 2000-10-10T20:55:36Z = 971211336.
        let want = 971_211_336 * NS;
        assert_eq!(
            clf("10/Oct/2000:13:55:36 -0700"),
            Some(Stamp {
                ns: want,
                precise: false
            })
        );
        assert_eq!(
            iso8601("2000-10-10T13:55:36-07:00"),
            Some(Stamp {
                ns: want,
                precise: false
            })
        );
        assert_eq!(iso8601("2000-10-10T20:55:36Z").map(|s| s.ns), Some(want));
        assert_eq!(iso8601("2000-10-10T20:55:36").map(|s| s.ns), Some(want));
        assert_eq!(
            iso8601("2000-10-10T22:55:36.25+0200"),
            Some(Stamp {
                ns: want + 250_000_000,
                precise: true
            })
        );
        assert_eq!(
            epoch("971211336.123"),
            Some(Stamp {
                ns: want + 123_000_000,
                precise: true
            })
        );
        assert_eq!(
            epoch("971211336"),
            Some(Stamp {
                ns: want,
                precise: false
            })
        );
        // A leap day, and the epoch itself.
        assert_eq!(
            clf("29/Feb/2024:00:00:00 +0000").map(|s| s.ns),
            Some(1_709_164_800 * NS)
        );
        assert_eq!(clf("01/Jan/1970:00:00:00 +0000").map(|s| s.ns), Some(0));
    }

    #[test]
    fn malformed_timestamps_are_refused() {
        for bad in [
            "",
            "10/Oct/2000:13:55:36",
            "10/Oct/2000:13:55:36 0700",
            "10/Okt/2000:13:55:36 -0700",
            "32/Oct/2000:13:55:36 -0700",
            "29/Feb/2023:13:55:36 -0700",
            "10/Oct/2000:24:55:36 -0700",
            "10/Oct/2000:13:60:36 -0700",
            "10/Oct/2000:13:55 -0700",
            "10/Oct/2000:13:55:36:01 -0700",
            "1/Oct/2000:13:55:36 -0700",
            "10/Oct/2000:13:55:36 -07000",
            "10/Oct/2000:13:55:36 -2500",
            "10/Oct/00:13:55:36 -0700",
        ] {
            assert_eq!(clf(bad), None, "{bad:?}");
        }
        for bad in [
            "",
            ".5",
            "12.",
            "12.x",
            "-12.5",
            "1e9",
            "12.1234567890",
            "1234567890123",
        ] {
            assert_eq!(epoch(bad), None, "{bad:?}");
        }
        for bad in [
            "",
            "2000-10-10",
            "2000-10-10 13:55:36",
            "2000-13-10T13:55:36Z",
            "2000-10-10T13:55:36.Z",
            "2000-10-10T13:55:36+7",
            "2000-10-10T13:55:36Q",
            "2000-10-10T1:55:36Z",
            "2000-1-10T13:55:36Z",
        ] {
            assert_eq!(iso8601(bad), None, "{bad:?}");
        }
    }
}
