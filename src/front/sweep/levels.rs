//! `sweep --in-one-run`: the walk's rates as the levels of one rate profile, and the
//! judgement of each level from the run's per-second timeline.
//!
//! Owns the profile of the walk (`step:L..H+S/T`, H lowered to the last of
//! `--stop-after-step` levels), each level's window in the run (from the parsed
//! profile's pieces, so the windows are those the schedule ran), which seconds of the
//! timeline a level is judged from, and the verdict of each level by the walk's rules
//! (`--min-achieved`, `--max-errors`, `--slo` on the figures the timeline carries, a
//! client verdict when the level's arrivals started late). The judgement is a pure
//! function of the timeline's intervals (`judge`); `one_run` runs the profile and
//! hands them in, the unit tests inject them.
//!
//! Which seconds count. Every interval of the timeline belongs to the level its start
//! falls in (the seconds after the profile's end, where the last arrivals drain, to
//! the last level): the level's errors, connections, arrivals and lateness are those
//! of its intervals. Its rates and response times come from its judged seconds: the
//! whole seconds inside its window, less the first of them when it has two or more.
//! That first second is the transient of the change of rate: it holds the replies to
//! the previous level's last arrivals, and a server that just went past its capacity
//! still empties into it the queues it had below it. A second measured shorter than
//! `MIN_WINDOW_S` (a run cut short) is not judged; a level without a judged second
//! fails ("cut short").

use crate::model::profile::{parse_rate_profile, Piece, ProfileError, RateProfile};
use crate::model::stats::quantile::{quantile_key, QUANTILES};
use crate::model::stats::timeline::{bucket_high_bits, Interval, LogHist};
use crate::model::stats::{ErrorKind, ERROR_KINDS};
use crate::model::summary::RateSummary;
use crate::model::threshold::Threshold;
use crate::model::validity::{LATE_FLOOR_MS, LATE_MIN_ARRIVALS, LATE_MIN_SPAN_S, LATE_SHARE};
use crate::output::advice::{Advice, Finding};

use super::rules::Rules;
use super::step::{self, Figures, Step};

/// Shortest measured length of a judged second, as a share of its width (the last
/// second of a schedule ends a few ms early; a run cut short ends mid-second).
const MIN_WINDOW_S: f64 = 0.9;
/// Slack when comparing a second's start with a level's bounds (sums of decimal
/// durations).
const EPS: f64 = 1e-9;
/// Longest walk in one run, s: the timeline keeps single seconds for the first hour
/// only (`model::stats::timeline::TIERS`).
pub(crate) const MAX_RUN_S: f64 = 3_600.0;
/// Shortest `--const-test-time` in one run, s: a level needs a whole second.
pub(crate) const MIN_LEVEL_S: f64 = 1.0;

/// One level of the profile: its rate and its window, seconds from the run's start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Level {
    /// Arrivals per second.
    pub(crate) rate: f64,
    /// Start of the window.
    pub(crate) start: f64,
    /// End of the window.
    pub(crate) end: f64,
}

/// The walk of `low`, `high`, `step`, each level `each` seconds, at most `limit`
/// levels, as one profile's text: `step:L..H+S/Ts`.
pub(crate) fn profile_text(
    low: f64,
    high: f64,
    step: f64,
    each: f64,
    limit: Option<u32>,
) -> String {
    let top = limit.map_or(high, |k| {
        high.min(low + step * f64::from(k.saturating_sub(1)))
    });
    format!("step:{low}..{top}+{step}/{each}s")
}

/// The profile the sweep `rules` run in one run (None without `--rate-step` or
/// `--const-test-time`, which the parser requires with `--in-one-run`).
pub(crate) fn profile(rules: &Rules) -> Option<Result<RateProfile, ProfileError>> {
    let text = profile_text(
        rules.low_rate,
        rules.high_rate,
        rules.rate_step?,
        rules.const_test_time?,
        rules.stop_after_step,
    );
    Some(parse_rate_profile(&text))
}

/// The levels of `profile`, in order (a `step` segment's holds).
pub(crate) fn levels_of(profile: &RateProfile) -> Vec<Level> {
    let mut at = std::time::Duration::ZERO;
    let mut out = Vec::new();
    for piece in profile.pieces() {
        let start = at.as_secs_f64();
        at += piece.duration();
        if let Piece::Linear { from, .. } = piece {
            out.push(Level {
                rate: from,
                start,
                end: at.as_secs_f64(),
            });
        }
    }
    out
}

/// What the run as a whole says that no second does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RunWide {
    /// Requests per arrival.
    pub(crate) calls_per_arrival: f64,
    /// The busiest engine thread's share of a core over the run, %.
    pub(crate) client_cpu_pct: f64,
    /// The run's Net I/O bytes per reply (0 without replies): the table's `net_io` of
    /// a level is its reply rate times this.
    pub(crate) bytes_per_reply: f64,
    /// Whether SIGINT/SIGTERM stopped the run.
    pub(crate) interrupted: bool,
}

/// One interval of the timeline: its start (s), its measured length (s), its counts.
pub(crate) type Second<'a> = (u64, f64, &'a Interval);

/// Whether `--slo` on the figure `figure` (a threshold's `Metric::figure`) can be
/// judged per level: response-time percentiles and the error counters.
pub(crate) fn judges_slo(figure: &str) -> bool {
    slo_value(figure, &LogHist::default(), 0, &[0; ERROR_KINDS]).is_some()
}

/// The names `--slo` may use with `--in-one-run`, for the message that refuses others.
pub(crate) const SLO_FIGURES: &str =
    "only response-time percentiles and error counters: p50, p90, p99, p99_9, p99_99 or max \
     (percentiles_response_…), errors_total or errors_KIND";

/// The value of the per-level figure `figure`: a response-time quantile of `response`
/// (never above `max_us`), or an error count of `errors`; None for another figure.
fn slo_value(
    figure: &str,
    response: &LogHist,
    max_us: u64,
    errors: &[u64; ERROR_KINDS],
) -> Option<f64> {
    if let Some(q) = figure.strip_prefix("percentiles_response_") {
        let ms = |us: u64| us.min(max_us) as f64 / 1000.0;
        if q == "max" {
            return Some(max_us as f64 / 1000.0);
        }
        return QUANTILES
            .iter()
            .find(|(_, label)| quantile_key(label) == q)
            .map(|&(p, _)| ms(response.quantile_us(p)));
    }
    if figure == "errors_total" {
        return Some(errors.iter().sum::<u64>() as f64);
    }
    let kind = figure.strip_prefix("errors_")?;
    ErrorKind::ALL
        .iter()
        .position(|k| k.key() == kind)
        .map(|i| errors[i] as f64)
}

/// The mean of a timeline histogram, µs (each bucket at its middle: within 1/32 of
/// the value).
fn mean_us(h: &LogHist) -> f64 {
    let (mut n, mut sum) = (0.0, 0.0);
    for &(i, c) in &h.0 {
        let i = usize::from(i);
        let high = bucket_high_bits(i, 4) as f64;
        let low = if i == 0 {
            0.0
        } else {
            bucket_high_bits(i - 1, 4) as f64 + 1.0
        };
        n += f64::from(c);
        sum += f64::from(c) * (low + high) / 2.0;
    }
    if n > 0.0 {
        sum / n
    } else {
        0.0
    }
}

/// The index of the level whose window holds the second starting at `start` (the
/// last level for seconds past the profile's end).
fn level_of(levels: &[Level], start: f64) -> usize {
    levels
        .iter()
        .rposition(|l| l.start <= start + EPS)
        .unwrap_or(0)
}

/// The starts of the seconds a level is judged from: the whole seconds inside its
/// window, less the first when there are two or more.
pub(crate) fn judged_seconds(level: &Level) -> Vec<u64> {
    let first = (level.start - EPS).ceil().max(0.0) as u64;
    let whole: Vec<u64> = (first..)
        .take_while(|&s| s as f64 + 1.0 <= level.end + EPS)
        .collect();
    if whole.len() >= 2 {
        whole[1..].to_vec()
    } else {
        whole
    }
}

/// Everything one level's seconds add up to.
#[derive(Default)]
struct Tally {
    /// Of its judged seconds: seconds, successful replies, replies, connections,
    /// arrivals issued, response times, longest response, each second's reply rate.
    seconds: f64,
    ok: u64,
    replies: u64,
    connections: u64,
    issued: u64,
    response: LogHist,
    response_max_us: u64,
    rates: Vec<f64>,
    /// Judged seconds found in the timeline.
    judged: Vec<u64>,
    /// Of all its intervals: errors by kind, replies, connections, arrivals' lateness.
    errors: [u64; ERROR_KINDS],
    all_replies: u64,
    all_connections: u64,
    lateness: LogHist,
}

/// Judges every level of `levels` that the run reached, from the run's `seconds`
/// (the timeline's intervals in order, `Timeline::spans`), by `rules`; each becomes a
/// sweep step (its `doc` None: the run's document is the sweep's).
pub(crate) fn judge(
    rules: &Rules,
    levels: &[Level],
    seconds: &[Second<'_>],
    run: &RunWide,
) -> Vec<Step> {
    if levels.is_empty() {
        return Vec::new();
    }
    let mut tallies: Vec<Tally> = levels.iter().map(|_| Tally::default()).collect();
    let wanted: Vec<Vec<u64>> = levels.iter().map(judged_seconds).collect();
    let end = seconds.last().map_or(0.0, |&(s, len, _)| s as f64 + len);
    for &(start, len, iv) in seconds {
        let i = level_of(levels, start as f64);
        let t = &mut tallies[i];
        for (a, b) in t.errors.iter_mut().zip(iv.errors) {
            *a += b;
        }
        t.all_replies += iv.replies.iter().sum::<u64>();
        t.all_connections += iv.connections;
        t.lateness.merge(&iv.lateness);
        let width = iv.width.max(1) as f64;
        if iv.width != 1 || !wanted[i].contains(&start) || len < MIN_WINDOW_S * width {
            continue;
        }
        // A second of the schedule that ended early still had all its arrivals; a run
        // cut short did not.
        let secs = if run.interrupted { len } else { width };
        let replies: u64 = iv.replies.iter().sum();
        t.seconds += secs;
        t.ok += iv.replies[..3].iter().sum::<u64>();
        t.replies += replies;
        t.connections += iv.connections;
        t.issued += iv.lateness.count();
        t.response.merge(&iv.response);
        t.response_max_us = t.response_max_us.max(iv.response_max_us);
        t.rates.push(replies as f64 / secs);
        t.judged.push(start);
    }
    let reached = levels.iter().take_while(|l| l.start < end - EPS).count();
    levels[..reached]
        .iter()
        .zip(tallies)
        .enumerate()
        .map(|(i, (level, t))| one(rules, level, t, run, i + 1 == reached))
        .collect()
}

/// The step of one level from its tally; `last`: the last level the run reached.
fn one(rules: &Rules, level: &Level, t: Tally, run: &RunWide, last: bool) -> Step {
    let rate = level.rate;
    let demanded = rate * run.calls_per_arrival;
    let per_s = |n: u64| {
        if t.seconds > 0.0 {
            n as f64 / t.seconds
        } else {
            0.0
        }
    };
    let achieved = per_s(t.ok);
    let achieved_pct = if demanded > 0.0 {
        100.0 * achieved / demanded
    } else {
        0.0
    };
    let errors: u64 = t.errors.iter().sum();
    let mut reasons = Vec::new();
    if t.judged.is_empty() {
        reasons.push("cut short: no whole second of the level was measured".to_string());
    } else if achieved_pct < rules.min_achieved {
        reasons.push(format!(
            "achieved {achieved_pct:.1} % of the demanded rate (below {} %)",
            rules.min_achieved
        ));
    }
    if errors > rules.max_errors {
        reasons.push(format!("{errors} errors (more than {})", rules.max_errors));
    }
    for th in &rules.thresholds {
        let actual = level_slo(th, &t);
        if !th.op().holds(actual, th.limit()) {
            reasons.push(format!("SLO {} missed (actual {actual:.3})", th.expr()));
        }
    }
    let interrupted = last && run.interrupted;
    if interrupted {
        reasons.push("interrupted".into());
    }
    let late = late_arrivals(level, &t.lateness);
    let advice: Vec<Advice> = late
        .map(|text| Advice {
            finding: Finding::ClientBound,
            text,
        })
        .into_iter()
        .collect();
    let client_bound = !advice.is_empty();
    let samples = RateSummary::from_rates(t.rates.iter().copied());
    let q_ms = |q: f64| t.response.quantile_us(q).min(t.response_max_us) as f64 / 1000.0;
    let figures = Figures {
        req_rate: per_s(t.issued) * run.calls_per_arrival,
        con_rate: per_s(t.connections),
        rep_rate: [samples.min, samples.avg, samples.max, samples.stddev],
        resp_time_ms: mean_us(&t.response) / 1000.0,
        net_io_kbs: per_s(t.replies) * run.bytes_per_reply / 1024.0,
        errors_pct_of_replies: if t.all_replies == 0 {
            101.0
        } else {
            100.0 * errors as f64 / t.all_replies as f64
        },
        errors,
        connections: t.all_connections,
        response_ms: [q_ms(0.5), q_ms(0.9), q_ms(0.99)],
        lateness_p99_ms: t.lateness.quantile_us(0.99) as f64 / 1000.0,
        client_cpu_pct: run.client_cpu_pct,
    };
    Step {
        rate,
        arrivals: t.lateness.count(),
        demanded,
        achieved,
        achieved_pct,
        figures,
        advice,
        client_bound,
        verdict: step::verdict(&reasons, client_bound),
        reasons,
        estimate: None,
        doc: None,
        interrupted,
    }
}

/// The value of the threshold `th`'s figure for a level (`judges_slo` holds for every
/// `--slo` of a sweep in one run; another figure reads NaN, which no comparison but
/// `!=` passes).
fn level_slo(th: &Threshold, t: &Tally) -> f64 {
    slo_value(
        &th.metric().figure,
        &t.response,
        t.response_max_us,
        &t.errors,
    )
    .unwrap_or(f64::NAN)
}

/// Why the level's arrivals say the client was the limit, by the validity rule of a
/// run (`model::validity`, `schedule_slip`) applied to the level: most of its arrivals
/// (lateness p50) started later than both `LATE_FLOOR_MS` and `LATE_SHARE` of the
/// level's spacing, over at least `LATE_MIN_ARRIVALS` arrivals and `LATE_MIN_SPAN_S`.
fn late_arrivals(level: &Level, lateness: &LogHist) -> Option<String> {
    let n = lateness.count();
    if n < LATE_MIN_ARRIVALS || level.end - level.start < LATE_MIN_SPAN_S {
        return None;
    }
    let p50 = lateness.quantile_us(0.5) as f64 / 1000.0;
    let limit = LATE_FLOOR_MS.max(LATE_SHARE * 1000.0 / level.rate);
    (p50 > limit).then(|| {
        format!(
            "client-bound: arrivals started late at this level (lateness p50 {p50:.3} ms, \
             limit {limit:.3} ms): the figures describe the client, not the server"
        )
    })
}

#[cfg(test)]
mod tests;
