//! `RateProfile`: the value of `--rate-profile`, a list of rate segments run one after
//! another, and its grammar with the messages that refuse it.
//!
//! Owns the segment types (`ramp`, `hold`, `step`, `sine`), the parser of
//! `ramp:FROM..TO/DURATION`, `hold:RATE/DURATION`, `step:FROM..TO+INCREMENT/EACH` and
//! `sine:MEAN~AMPLITUDE/PERIOD/DURATION` (durations in `ms`, `s`, `m` or `h`), and the
//! expansion of the segments into pieces of linear or sinusoidal rate. Does not
//! compute arrivals: `time::TimeChange` integrates the pieces and inverts
//! the integral, `workload::rate::Schedule` draws on it. Hand-written: the grammar is
//! four shapes of a few numbers, and every message names the segment and the part
//! that is wrong. A module of its own below `config`, `stats` and `workload`: the
//! configuration holds a profile, the timeline keeps its target, the schedule draws
//! on it. Called by the front ends through `ConfigBuilder`; read by the schedule, the
//! timeline's target rate and the echo.

use std::fmt;
use std::time::Duration;

pub(crate) mod time;

pub(crate) use time::TimeChange;

/// The option's name, in every message.
const OPTION: &str = "--rate-profile";
/// Highest rate a segment may ask for, per second (as `--call-rate`).
pub(crate) const MAX_RATE: f64 = 1e9;
/// Longest profile: a week.
const MAX_TOTAL: Duration = Duration::from_secs(7 * 86_400);
/// Most levels one `step` segment may have.
const MAX_LEVELS: u64 = 100_000;
/// Slack when counting a step's levels, so `0.1..0.3+0.1` has three levels.
const LEVEL_SLACK: f64 = 1e-9;

/// One segment as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Segment {
    /// `ramp:FROM..TO/DURATION`: the rate goes linearly from FROM to TO.
    Ramp {
        /// Rate at the start, per second.
        from: f64,
        /// Rate at the end, per second.
        to: f64,
        /// How long.
        duration: Duration,
    },
    /// `hold:RATE/DURATION`: a constant rate.
    Hold {
        /// The rate, per second.
        rate: f64,
        /// How long.
        duration: Duration,
    },
    /// `step:FROM..TO+INCREMENT/EACH`: levels FROM, FROM ± INCREMENT, … as far as TO
    /// (not beyond it), each held EACH.
    Step {
        /// The first level, per second.
        from: f64,
        /// The bound of the last level, per second.
        to: f64,
        /// The distance between levels, > 0.
        increment: f64,
        /// How long each level is held.
        each: Duration,
    },
    /// `sine:MEAN~AMPLITUDE/PERIOD/DURATION`: MEAN + AMPLITUDE·sin(2πt/PERIOD), t from
    /// the segment's start (it starts at MEAN, rising).
    Sine {
        /// The mean rate, per second.
        mean: f64,
        /// The amplitude, ≤ mean.
        amplitude: f64,
        /// The period of the wave.
        period: Duration,
        /// How long.
        duration: Duration,
    },
}

/// A piece of the profile with one formula for its rate: linear (`ramp`, `hold`, a
/// level of `step`) or sinusoidal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Piece {
    /// Rate `from + (to − from)·τ/duration` for τ in [0, duration).
    Linear {
        /// Rate at the start.
        from: f64,
        /// Rate at the end.
        to: f64,
        /// How long.
        duration: Duration,
    },
    /// Rate `mean + amplitude·sin(2πτ/period)` for τ in [0, duration).
    Sine {
        /// The mean rate.
        mean: f64,
        /// The amplitude, ≤ mean.
        amplitude: f64,
        /// The wave's period.
        period: Duration,
        /// How long.
        duration: Duration,
    },
}

impl Piece {
    /// How long the piece lasts.
    pub(crate) fn duration(&self) -> Duration {
        match *self {
            Piece::Linear { duration, .. } | Piece::Sine { duration, .. } => duration,
        }
    }
}

/// `--rate-profile`: the segments, in order, as typed and as parsed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RateProfile {
    /// The option's value as typed (for the echo and the configuration's JSON).
    text: String,
    /// The segments.
    segments: Vec<Segment>,
}

impl fmt::Display for RateProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl RateProfile {
    /// The value as typed.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The segments in order.
    #[cfg(test)]
    pub(crate) fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The whole profile's duration: the run's length.
    pub(crate) fn duration(&self) -> Duration {
        self.pieces().iter().map(Piece::duration).sum()
    }

    /// The profile as pieces of one formula each, in order (a `step` is one linear
    /// piece per level).
    pub(crate) fn pieces(&self) -> Vec<Piece> {
        let mut out = Vec::new();
        for s in &self.segments {
            match *s {
                Segment::Ramp { from, to, duration } => {
                    out.push(Piece::Linear { from, to, duration })
                }
                Segment::Hold { rate, duration } => out.push(Piece::Linear {
                    from: rate,
                    to: rate,
                    duration,
                }),
                Segment::Step {
                    from,
                    to,
                    increment,
                    each,
                } => {
                    let dir = if to < from { -1.0 } else { 1.0 };
                    for i in 0..levels(from, to, increment) {
                        let rate = from + dir * increment * i as f64;
                        out.push(Piece::Linear {
                            from: rate,
                            to: rate,
                            duration: each,
                        });
                    }
                }
                Segment::Sine {
                    mean,
                    amplitude,
                    period,
                    duration,
                } => out.push(Piece::Sine {
                    mean,
                    amplitude,
                    period,
                    duration,
                }),
            }
        }
        out
    }

    /// The highest rate the profile reaches, per second.
    pub(crate) fn peak(&self) -> f64 {
        self.pieces()
            .iter()
            .map(|p| match *p {
                Piece::Linear { from, to, .. } => from.max(to),
                Piece::Sine {
                    mean, amplitude, ..
                } => mean + amplitude,
            })
            .fold(0.0, f64::max)
    }

    /// ∫ rate over the whole profile: the expected number of arrivals.
    pub(crate) fn expected_arrivals(&self) -> f64 {
        self.pieces()
            .iter()
            .map(|p| match *p {
                Piece::Linear { from, to, duration } => (from + to) / 2.0 * duration.as_secs_f64(),
                Piece::Sine {
                    mean,
                    amplitude,
                    period,
                    duration,
                } => {
                    let (d, w) = (
                        duration.as_secs_f64(),
                        std::f64::consts::TAU / period.as_secs_f64(),
                    );
                    mean * d + amplitude / w * (1.0 - (w * d).cos())
                }
            })
            .sum()
    }

    /// A profile of holds at `levels`, each `each` long; None when there are no
    /// levels.
    #[cfg(test)]
    pub(crate) fn of_levels(levels: &[f64], each: Duration) -> Option<RateProfile> {
        if levels.is_empty() {
            return None;
        }
        let secs = crate::wire::cfmt::g(each.as_secs_f64());
        let text = levels
            .iter()
            .map(|r| format!("hold:{}/{secs}s", crate::wire::cfmt::g(*r)))
            .collect::<Vec<_>>()
            .join(",");
        let segments = levels
            .iter()
            .map(|&rate| Segment::Hold {
                rate,
                duration: each,
            })
            .collect();
        Some(RateProfile { text, segments })
    }
}

/// Levels of a step from `from` towards `to` by `increment` (at least one).
fn levels(from: f64, to: f64, increment: f64) -> u64 {
    ((to - from).abs() / increment + LEVEL_SLACK).floor() as u64 + 1
}

/// Parses `--rate-profile`'s value.
pub(crate) fn parse_rate_profile(arg: &str) -> Result<RateProfile, ProfileError> {
    if arg.trim().is_empty() {
        return Err(bad(
            "needs segments, e.g. ramp:100..2000/60s,hold:2000/2m".to_string()
        ));
    }
    let mut segments = Vec::new();
    for (i, raw) in arg.split(',').enumerate() {
        let seg = raw.trim();
        let at = Where { n: i + 1, seg };
        if seg.is_empty() {
            return Err(bad(format!(
                "segment {} is empty (segments are separated by one comma)",
                at.n
            )));
        }
        segments.push(segment(&at)?);
    }
    let profile = RateProfile {
        text: arg.trim().to_string(),
        segments,
    };
    if profile.duration() > MAX_TOTAL {
        return Err(bad(format!(
            "the profile lasts {}, longer than a week",
            human(profile.duration())
        )));
    }
    if profile.peak() <= 0.0 {
        return Err(bad("every rate is 0: the profile sends nothing".to_string()));
    }
    Ok(profile)
}

/// A segment and its place, for messages.
struct Where<'a> {
    /// 1-based index.
    n: usize,
    /// The segment as typed (trimmed).
    seg: &'a str,
}

impl Where<'_> {
    /// A message about this segment.
    fn err(&self, what: impl fmt::Display) -> ProfileError {
        bad(format!("segment {} `{}': {what}", self.n, self.seg))
    }
}

/// The error for `message`.
fn bad(message: String) -> ProfileError {
    ProfileError(format!("{OPTION}: {message}"))
}

/// A `--rate-profile` that does not parse: the whole message, naming the option
/// (`ConfigError` takes it as `--rate-profile`'s malformed value).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ProfileError(pub(crate) String);

/// The forms of each kind, for messages.
const FORMS: &str = "ramp:FROM..TO/DURATION, hold:RATE/DURATION, step:FROM..TO+INCREMENT/EACH or sine:MEAN~AMPLITUDE/PERIOD/DURATION";

/// Parses one segment.
fn segment(at: &Where<'_>) -> Result<Segment, ProfileError> {
    let Some((kind, body)) = at.seg.split_once(':') else {
        return Err(at.err(format_args!("expected {FORMS}")));
    };
    let shape = |form: &str, example: &str| {
        at.err(format_args!(
            "expected {kind}:{form} (e.g. {kind}:{example})"
        ))
    };
    match kind {
        "ramp" => {
            let e = || shape("FROM..TO/DURATION", "100..2000/60s");
            let (rates, d) = body.split_once('/').ok_or_else(e)?;
            let (from, to) = rates.split_once("..").ok_or_else(e)?;
            Ok(Segment::Ramp {
                from: rate(at, from)?,
                to: rate(at, to)?,
                duration: duration(at, d)?,
            })
        }
        "hold" => {
            let e = || shape("RATE/DURATION", "2000/2m");
            let (r, d) = body.split_once('/').ok_or_else(e)?;
            Ok(Segment::Hold {
                rate: rate(at, r)?,
                duration: duration(at, d)?,
            })
        }
        "step" => {
            let e = || shape("FROM..TO+INCREMENT/EACH", "100..1000+100/30s");
            let (rates, d) = body.split_once('/').ok_or_else(e)?;
            let (from, rest) = rates.split_once("..").ok_or_else(e)?;
            let (to, inc) = rest.split_once('+').ok_or_else(e)?;
            let (from, to, increment) = (rate(at, from)?, rate(at, to)?, rate(at, inc)?);
            if increment <= 0.0 && from != to {
                return Err(at.err("the increment must be more than 0"));
            }
            let n = if from == to {
                1
            } else {
                levels(from, to, increment)
            };
            if n > MAX_LEVELS {
                return Err(at.err(format_args!(
                    "{n} levels; at most {MAX_LEVELS} (use a larger increment)"
                )));
            }
            Ok(Segment::Step {
                from,
                to,
                increment: if from == to { 1.0 } else { increment },
                each: duration(at, d)?,
            })
        }
        "sine" => {
            let e = || shape("MEAN~AMPLITUDE/PERIOD/DURATION", "1000~500/1m/10m");
            let mut parts = body.split('/');
            let (Some(wave), Some(p), Some(d), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return Err(e());
            };
            let (mean, amp) = wave.split_once('~').ok_or_else(e)?;
            let (mean, amplitude) = (rate(at, mean)?, rate(at, amp)?);
            if amplitude > mean {
                return Err(at.err(format_args!(
                    "the amplitude {} is more than the mean {}: the rate would go below 0",
                    crate::wire::cfmt::g(amplitude),
                    crate::wire::cfmt::g(mean)
                )));
            }
            Ok(Segment::Sine {
                mean,
                amplitude,
                period: duration(at, p)?,
                duration: duration(at, d)?,
            })
        }
        _ => Err(at.err(format_args!("unknown kind `{kind}'; expected {FORMS}"))),
    }
}

/// A plain decimal number (digits, at most one point), without sign or exponent.
fn decimal(text: &str) -> Option<f64> {
    let ok = !text.is_empty()
        && text.chars().all(|c| c.is_ascii_digit() || c == '.')
        && text.chars().filter(|&c| c == '.').count() <= 1
        && text.chars().any(|c| c.is_ascii_digit());
    ok.then(|| text.parse().ok()).flatten()
}

/// A rate: a decimal number of arrivals per second from 0 to `MAX_RATE`.
fn rate(at: &Where<'_>, text: &str) -> Result<f64, ProfileError> {
    match decimal(text) {
        Some(r) if r <= MAX_RATE => Ok(r),
        Some(_) => Err(at.err(format_args!(
            "the rate {text} is more than {}",
            crate::wire::cfmt::g(MAX_RATE)
        ))),
        None => Err(at.err(format_args!(
            "`{text}' is not a rate (a number of arrivals per second, 0 or more)"
        ))),
    }
}

/// A duration: a decimal number and a unit (`ms`, `s`, `m`, `h`), more than 0.
fn duration(at: &Where<'_>, text: &str) -> Result<Duration, ProfileError> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(split);
    let scale = match unit {
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "" => {
            return Err(at.err(format_args!(
                "the duration `{text}' needs a unit: ms, s, m or h (e.g. {text}s)"
            )))
        }
        _ => {
            return Err(at.err(format_args!(
                "`{text}' is not a duration (a number and ms, s, m or h, e.g. 30s)"
            )))
        }
    };
    let Some(value) = decimal(num) else {
        return Err(at.err(format_args!(
            "`{text}' is not a duration (a number and ms, s, m or h, e.g. 30s)"
        )));
    };
    let secs = value * scale;
    if secs > MAX_TOTAL.as_secs_f64() {
        return Err(at.err(format_args!("the duration {text} is longer than a week")));
    }
    let d = Duration::from_nanos((secs * 1e9).round() as u64);
    if d.is_zero() {
        return Err(at.err(format_args!("the duration {text} is not more than 0")));
    }
    Ok(d)
}

/// A duration for a message: seconds with up to three decimals.
fn human(d: Duration) -> String {
    format!("{}s", crate::wire::cfmt::g(d.as_secs_f64()))
}

#[cfg(test)]
mod tests;
