//! `Period`: the inter-arrival process of `--rate`/`--period` (and `--call-rate`),
//! and its parsing from httperf's syntax.
//!
//! Owned by the configuration's load part; the schedule that draws from it is
//! `workload::rate::Schedule` (which re-exports `Period`). Messages are httperf's, with
//! an explanation where rshperf is stricter (docs/compatibility.md §1.2).

use super::duration::duration_prefix;
use super::error::ConfigError;
use super::number::RATE;
use crate::wire::cfmt;

/// The inter-arrival process chosen with `--rate` or `--period`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Period {
    /// Rate ≤ 0: the next arrival starts when the previous one is destroyed.
    Sequential,
    /// Fixed spacing of this many seconds (`--rate X` = 1/X, `--period dT`).
    Deterministic(f64),
    /// Uniform on [min, max) seconds (`--period uMIN,MAX`).
    Uniform(f64, f64),
    /// Exponential with this mean, seconds (`--period eMEAN`).
    Exponential(f64),
    /// Piecewise deterministic: (period, duration) pairs, cycled (`--period vT1,D1,…`).
    Variable(Vec<(f64, f64)>),
}

impl Period {
    /// Mean inter-arrival time in seconds, as httperf computes it (`rate_param = 1/mean`):
    /// u → (T1+T2)/2, v → arithmetic mean of the periods, sequential → 0.
    pub(crate) fn mean(&self) -> f64 {
        match self {
            Period::Sequential => 0.0,
            Period::Deterministic(p) | Period::Exponential(p) => *p,
            Period::Uniform(a, b) => (a + b) / 2.0,
            Period::Variable(pairs) if pairs.is_empty() => 0.0,
            Period::Variable(pairs) => {
                pairs.iter().map(|&(t, _)| t).sum::<f64>() / pairs.len() as f64
            }
        }
    }
}

impl Period {
    /// The same shape with mean `mean` seconds (every period and, for `v`, every
    /// duration scaled alike); sequential stays sequential.
    pub(crate) fn with_mean(&self, mean: f64) -> Period {
        let now = self.mean();
        let k = if now > 0.0 { mean / now } else { 1.0 };
        match self {
            Period::Sequential => Period::Deterministic(mean),
            Period::Deterministic(_) => Period::Deterministic(mean),
            Period::Exponential(_) => Period::Exponential(mean),
            Period::Uniform(a, b) => Period::Uniform(a * k, b * k),
            Period::Variable(pairs) => {
                Period::Variable(pairs.iter().map(|&(t, d)| (t * k, d * k)).collect())
            }
        }
    }
}

/// `--rate X`: deterministic spacing 1/X; 0 means sequential.
pub(crate) fn parse_rate(arg: &str) -> Result<Period, ConfigError> {
    let rate = RATE.parse(arg)?;
    if rate == 0.0 {
        return Ok(Period::Sequential);
    }
    let period = 1.0 / rate;
    if !period.is_finite() {
        return Err(ConfigError::Illegal {
            option: RATE.option,
            what: RATE.what,
            value: arg.to_string(),
            expected: Some(RATE.expect),
        });
    }
    Ok(Period::Deterministic(period))
}

/// One seconds value inside `--period` (a unit may follow: `e5ms`): httperf's message
/// for what httperf rejects (no number, negative), with an explanation for what only
/// rshperf rejects.
fn period_value(
    text: &str,
    what: &str,
    strictly_positive: bool,
) -> Result<(f64, usize), ConfigError> {
    let base = || bad(format!("{what} {text}"));
    let (v, used) = duration_prefix(text).ok_or_else(base)?;
    if v < 0.0 {
        return Err(base());
    }
    if !v.is_finite() || (strictly_positive && v == 0.0) {
        let expect = if strictly_positive { ">" } else { ">=" };
        return Err(bad(format!(
            "{what} {text} (expected a number of seconds {expect} 0)"
        )));
    }
    Ok((v, used))
}

/// `--period=[D]T1[,T2]` and master's `vT1,D1,…` (docs/compatibility.md §1.2),
/// stricter: no trailing junk, T2 >= T1 for `u`, positive times and durations for `v`.
pub(crate) fn parse_period(arg: &str) -> Result<Period, ConfigError> {
    let first = arg.chars().next();
    let (dist, rest) = match first {
        Some(c) if c.is_ascii_digit() => ('d', arg),
        Some(c) if matches!(c.to_ascii_lowercase(), 'd' | 'u' | 'e' | 'v') => {
            (c.to_ascii_lowercase(), &arg[1..])
        }
        _ => {
            let c = first.map(String::from).unwrap_or_default();
            return Err(bad(format!(
                "illegal interarrival distribution '{c}' in {arg}"
            )));
        }
    };
    match dist {
        'd' | 'e' => {
            let what = "illegal mean interarrival time";
            let (mean, used) = period_value(rest, what, false)?;
            if used != rest.len() {
                return Err(bad(format!("{what} {rest}")));
            }
            Ok(match (mean > 0.0, dist) {
                (false, _) => Period::Sequential,
                (true, 'd') => Period::Deterministic(mean),
                (true, _) => Period::Exponential(mean),
            })
        }
        'u' => {
            let (lo, used) = period_value(rest, "illegal minimum interarrival time", false)?;
            let after = &rest[used..];
            let Some(max_text) = after.strip_prefix(',') else {
                return Err(bad(format!(
                    "minimum interarrival time not followed by `,MAX_IAT' (rest: `{after}')"
                )));
            };
            let what = "illegal request period";
            let (hi, used) = period_value(max_text, what, false)?;
            if used != max_text.len() {
                return Err(bad(format!("{what} {max_text}")));
            }
            if hi < lo {
                return Err(bad(format!(
                    "{what} {max_text} (expected a maximum >= the minimum {})",
                    cfmt::g(lo)
                )));
            }
            Ok(if lo + hi > 0.0 {
                Period::Uniform(lo, hi)
            } else {
                Period::Sequential
            })
        }
        _ => {
            const NUM_RATES: usize = 16;
            let mut pairs = Vec::new();
            let mut rest = rest;
            loop {
                if pairs.len() >= NUM_RATES {
                    return Err(bad("too many rates".to_string()));
                }
                let (t, used) = period_value(rest, "illegal minimum interarrival time", true)?;
                let after = &rest[used..];
                let Some(dur_text) = after.strip_prefix(',') else {
                    return Err(bad(format!(
                        "interarrival time not followed by `,duration' (rest: `{after}')"
                    )));
                };
                let (d, used) = period_value(dur_text, "illegal duration", true)?;
                pairs.push((t, d));
                let after = &dur_text[used..];
                if after.is_empty() {
                    return Ok(Period::Variable(pairs));
                }
                match after.strip_prefix(',') {
                    Some(next) => rest = next,
                    None => return Err(bad(format!("illegal duration {dur_text}"))),
                }
            }
        }
    }
}

/// A malformed `--period` value.
fn bad(message: String) -> ConfigError {
    ConfigError::Malformed {
        option: "--period",
        message,
    }
}
