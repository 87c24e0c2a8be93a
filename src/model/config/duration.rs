//! Durations as typed: a plain number is seconds (as in httperf), or a number with a
//! unit (`500ms`, `3s`, `1.5m`, `250us`).
//!
//! Owns the units and the three readings: a whole value (`seconds`, for `--timeout`,
//! `--runtime` and the other duration options, and sweep's `--const-test-time` and
//! `--cool-down`), a number split from its unit (`split_unit`, for `--start-at +5s`),
//! and a prefix inside httperf's comma lists (`duration_prefix`, for the think times
//! of `--wsess`/`--wsesspage`/`--wsesslog` and the times of `--period`). Does not
//! check ranges: each option's rule does (`number::FloatRule`, the parsers in `value`
//! and `period`). A unit goes after digits and a point only: never after a sign, an
//! exponent, `inf` or a blank, so every value httperf reads keeps its meaning.

use super::number::strtod_prefix;

/// The units a duration may carry and their seconds (longest spelling first where
/// one is a prefix of another: `ms` before `m`).
const DURATION_UNITS: [(&str, f64); 6] = [
    ("us", 1e-6),
    ("µs", 1e-6),
    ("ms", 1e-3),
    ("s", 1.0),
    ("m", 60.0),
    ("h", 3600.0),
];

/// The scale and length of the unit `rest` starts with, when `number` (the text
/// before it) is digits and a point only and the unit ends `rest` or a comma follows.
fn unit(number: &str, rest: &str) -> Option<(f64, usize)> {
    let digits = number.bytes().any(|b| b.is_ascii_digit())
        && number.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if !digits {
        return None;
    }
    DURATION_UNITS.iter().find_map(|&(name, scale)| {
        let after = rest.strip_prefix(name)?;
        (after.is_empty() || after.starts_with(',')).then_some((scale, name.len()))
    })
}

/// `arg` as a number and the seconds of its unit: (`"500"`, 0.001) for `500ms`;
/// (`arg`, 1.0) when it carries no unit.
pub(crate) fn split_unit(arg: &str) -> (&str, f64) {
    let split = arg
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(arg.len());
    match unit(&arg[..split], &arg[split..]) {
        Some((scale, len)) if split + len == arg.len() => (&arg[..split], scale),
        _ => (arg, 1.0),
    }
}

/// A duration as typed, in seconds: a number (seconds, read as Rust reads a float) or
/// a number with a unit; None for anything else and for what is not finite.
pub(crate) fn seconds(arg: &str) -> Option<f64> {
    let (number, scale) = split_unit(arg);
    let v = number.parse::<f64>().ok()? * scale;
    v.is_finite().then_some(v)
}

/// The longest prefix of `s` that is a duration in seconds, as (value, bytes used):
/// C `strtod`'s prefix (`strtod_prefix`), then a unit ending `s` or before a comma.
pub(crate) fn duration_prefix(s: &str) -> Option<(f64, usize)> {
    let (v, used) = strtod_prefix(s)?;
    Some(match unit(&s[..used], &s[used..]) {
        Some((scale, len)) => (v * scale, used + len),
        None => (v, used),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_a_unit_and_plain_numbers_stay_seconds() {
        let cases = [
            ("5", Some(5.0)),
            ("0.25", Some(0.25)),
            ("1e1", Some(10.0)),
            ("5ms", Some(0.005)),
            ("250us", Some(0.000_25)),
            ("250µs", Some(0.000_25)),
            ("3s", Some(3.0)),
            ("1.5m", Some(90.0)),
            ("2h", Some(7200.0)),
            (".5s", Some(0.5)),
            ("5x", None),
            ("s", None),
            ("-1s", None),
            (" 1s", None),
            ("infs", None),
            ("1e3s", None),
            ("5s,", None),
            ("5sec", None),
            ("inf", None),
            ("", None),
        ];
        for (arg, want) in cases {
            assert_eq!(seconds(arg), want, "{arg}");
        }
    }

    #[test]
    fn a_prefix_takes_its_unit_up_to_a_comma_or_the_end() {
        let cases = [
            ("0.2", Some((0.2, 3))),
            ("200ms", Some((0.2, 5))),
            ("200ms,f", Some((0.2, 5))),
            ("2m,3", Some((120.0, 2))),
            // Not a unit: the number alone, the rest left for the caller's message.
            ("2sx", Some((2.0, 1))),
            ("1e3s", Some((1000.0, 3))),
            ("-1s", Some((-1.0, 2))),
            ("x", None),
        ];
        for (arg, want) in cases {
            assert_eq!(duration_prefix(arg), want, "{arg}");
        }
    }

    #[test]
    fn a_number_is_split_from_its_unit() {
        assert_eq!(split_unit("5s"), ("5", 1.0));
        assert_eq!(split_unit("1.5m"), ("1.5", 60.0));
        assert_eq!(split_unit("5"), ("5", 1.0));
        assert_eq!(split_unit("5e3"), ("5e3", 1.0));
        assert_eq!(split_unit("5x"), ("5x", 1.0));
    }

    #[test]
    fn the_times_inside_httperfs_lists_take_a_unit() {
        use super::super::period::{parse_period, Period};
        use super::super::types::StartAt;
        use super::super::value::{parse_start_at, parse_wsess, parse_wsesslog, parse_wsesspage};
        assert_eq!(parse_wsess("10,4,200ms").map(|w| w.think), Ok(0.2));
        assert_eq!(parse_wsess("10,4,0.2").map(|w| w.think), Ok(0.2));
        assert_eq!(parse_wsesspage("10,4,2s").map(|w| w.think), Ok(2.0));
        assert_eq!(parse_wsesslog("10,1.5m,f").map(|w| w.think), Ok(90.0));
        // What follows a unit is still httperf's extraneous parameter.
        assert_eq!(
            parse_wsess("10,4,2sx").map_err(|e| e.to_string()),
            Err("extraneous parameter in --wsess arg (rest: `sx')".to_string())
        );
        assert_eq!(parse_period("e5ms"), Ok(Period::Exponential(0.005)));
        assert_eq!(parse_period("250ms"), Ok(Period::Deterministic(0.25)));
        assert_eq!(parse_period("u1ms,3ms"), Ok(Period::Uniform(0.001, 0.003)));
        assert_eq!(
            parse_period("v10ms,1m,0.5,2s"),
            Ok(Period::Variable(vec![(0.01, 60.0), (0.5, 2.0)]))
        );
        assert_eq!(
            parse_period("e5x").map_err(|e| e.to_string()),
            Err("illegal mean interarrival time 5x".to_string())
        );
        assert_eq!(parse_start_at("+30s"), Ok(StartAt::After(30.0)));
        assert_eq!(parse_start_at("+2m"), Ok(StartAt::After(120.0)));
        // A moment is no duration; the week's bound holds in any unit.
        for bad in ["1700000000s", "+1e3s", "+8d", "+169h", "+s"] {
            assert!(parse_start_at(bad).is_err(), "{bad}");
        }
    }
}
