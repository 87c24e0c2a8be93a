//! The comparison of two groups of runs (`rshperf compare`): which figures are
//! compared, how each is pooled over the runs of a group, which test decides it, and
//! the verdict.
//!
//! Rates (connections and replies per second) are the per-second samples of the
//! runs' timelines (the last second too when it lasted half a second), pooled over the runs of a group and tested
//! with Welch's t-test. Latency quantiles (response, connect, lateness: p50, p90, p99,
//! p99.9) are shown from the runs' HdrHistograms added together; response and lateness
//! are tested on the quantiles of each second (the timeline's per-second histograms)
//! with Welch's t-test on their logarithms, because requests of one second share the
//! machine's state: a busy second moves all of them, and a test that took them as
//! independent (the bootstrap over the whole histogram) would call noise significant.
//! Connect times, which the timeline does not keep per second, fall back to the exact
//! bootstrap of the quantile over the histogram; the error rate (errors per
//! connection) with the two-proportion z-test; the client's CPU per reply with
//! Welch's t-test over the runs (one value per run, so only with two runs or more a
//! side). The tests are `model::significance`'s. The rows, their order, labels, units
//! and better directions are the table of figures' (`figure::compare::compare_rows`),
//! named as the figures (`percentiles_response_p99`, `replies_rate`) that `--fail-on`
//! and the regression gates use; this module owns how each `Method` pools and tests.
//! Called by `front::compare`; formatted by `output::compare`.

pub(crate) mod gate;

use hdrhistogram::Histogram;

use crate::model::figure::compare::{compare_rows, CompareRow};
use crate::model::figure::{second, Method};
use crate::model::run::RunInfo;
use crate::model::significance::{self, Change};
use crate::model::stats::timeline::Interval;
use crate::model::stats::{quantile_ms, Stats};

pub(crate) use crate::model::figure::{Aspect, Better};

/// The test that decided a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Test {
    /// Welch's t-test over per-second samples.
    WelchSeconds,
    /// Welch's t-test over one value per run.
    WelchRuns,
    /// Welch's t-test over the logarithms of the per-second quantiles.
    WelchLogSeconds,
    /// The exact bootstrap of a quantile over the recorded histogram.
    Bootstrap,
    /// The two-proportion z-test.
    Proportions,
}

impl Test {
    /// Its short name in tables and JSON.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Test::WelchSeconds => "welch-seconds",
            Test::WelchRuns => "welch-runs",
            Test::WelchLogSeconds => "welch-log-seconds",
            Test::Bootstrap => "bootstrap",
            Test::Proportions => "z-test",
        }
    }

    /// What it is, for the legend under the tables.
    pub(crate) fn description(self) -> &'static str {
        match self {
            Test::WelchSeconds => "Welch's t-test over the per-second samples",
            Test::WelchRuns => "Welch's t-test over one value per run",
            Test::WelchLogSeconds => {
                "Welch's t-test over the logarithms of the per-second quantiles"
            }
            Test::Bootstrap => "bootstrap of the quantile over the recorded histograms",
            Test::Proportions => "two-proportion z-test",
        }
    }

    /// Every test, in legend order.
    pub(crate) const ALL: [Test; 5] = [
        Test::WelchSeconds,
        Test::WelchLogSeconds,
        Test::Bootstrap,
        Test::Proportions,
        Test::WelchRuns,
    ];
}

/// The verdict on one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A significant improvement of a speed figure.
    Faster,
    /// A significant deterioration of a speed figure.
    Slower,
    /// A significant improvement of another figure.
    Better,
    /// A significant deterioration of another figure.
    Worse,
    /// Not significant at the level asked for.
    NoChange,
    /// No test possible (no data, or one run a side for a per-run figure).
    NotTested,
}

impl Verdict {
    /// As printed.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NoChange => "no significant change",
            Verdict::NotTested => "not tested",
        }
    }
}

/// One compared figure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    /// Its schema name (`percentiles_response_p99`), as `--fail-on` names it.
    pub(crate) figure: String,
    /// A short label (`response p99`).
    pub(crate) label: String,
    /// Its unit (`ms`, `replies/s`, `%`, `µs`).
    pub(crate) unit: &'static str,
    /// Which direction is an improvement.
    pub(crate) better: Better,
    /// Speed or cost.
    pub(crate) aspect: Aspect,
    /// The base group's value (NaN when it has no data).
    pub(crate) base: f64,
    /// The new group's value.
    pub(crate) new: f64,
    /// The change and its test (None: not tested).
    pub(crate) change: Option<Change>,
    /// The test used.
    pub(crate) test: Test,
}

impl Row {
    /// The verdict at level `alpha`.
    pub(crate) fn verdict(&self, alpha: f64) -> Verdict {
        let Some(c) = self.change else {
            return Verdict::NotTested;
        };
        if !c.significant(alpha) || c.pct == 0.0 || c.pct.is_nan() {
            return Verdict::NoChange;
        }
        let improved = (c.pct > 0.0) == (self.better == Better::Higher);
        match (self.aspect, improved) {
            (Aspect::Speed, true) => Verdict::Faster,
            (Aspect::Speed, false) => Verdict::Slower,
            (Aspect::Cost, true) => Verdict::Better,
            (Aspect::Cost, false) => Verdict::Worse,
        }
    }
}

/// A whole comparison: what was compared, at which level, the figures and the gates.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Comparison {
    /// The base documents, as named on the command line.
    pub(crate) base_files: Vec<String>,
    /// The new documents.
    pub(crate) new_files: Vec<String>,
    /// The significance level.
    pub(crate) alpha: f64,
    /// The compared figures, in table order.
    pub(crate) rows: Vec<Row>,
    /// The regression gates' outcomes, in the order given.
    pub(crate) gates: Vec<crate::model::compare::gate::Outcome>,
    /// Workload differences `--force` let pass (empty otherwise).
    pub(crate) forced: Vec<String>,
}

impl Comparison {
    /// Whether a gate tripped.
    pub(crate) fn failed(&self) -> bool {
        self.gates.iter().any(|g| g.failed)
    }
}

/// One run: its statistics and its duration and CPU times.
pub(crate) type Run = (Stats, RunInfo);

/// The shortest last second the per-second figures take, s: a run ends within a
/// second, and a run of a few seconds cannot spare its last one.
const MIN_SECOND_S: f64 = 0.5;

/// Per-second rates of `count` over the seconds of every run (the last one, shorter,
/// when it lasted `MIN_SECOND_S` at least).
fn per_second(runs: &[Run], count: impl Fn(u64, f64, &Interval) -> f64) -> Vec<f64> {
    let mut out = Vec::new();
    for (stats, _) in runs {
        let t = &stats.timeline;
        for (start, len, iv) in t.spans() {
            if len >= MIN_SECOND_S {
                out.push(count(start, len, iv) / len);
            }
        }
    }
    out
}

/// The histogram `name` of every run added together.
fn pooled(runs: &[Run], name: &str) -> Histogram<u64> {
    let mut h = crate::model::stats::new_histogram();
    for (stats, _) in runs {
        if let Some((_, one)) = stats.hist.named().into_iter().find(|(n, _)| *n == name) {
            // Every histogram has rshperf's bounds, so adding cannot fail.
            let _ = h.add(one);
        }
    }
    h
}

/// A histogram's recorded buckets, in ms, at the value the percentiles report.
fn buckets(h: &Histogram<u64>) -> Vec<(f64, u64)> {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to() as f64 / 1000.0, v.count_at_value()))
        .collect()
}

/// The smallest per-second quantile the log test takes, ms (one histogram unit).
const QUANTILE_FLOOR_MS: f64 = 0.001;

/// The `q` quantile of histogram `hist` in each second (as `per_second`) of every run that recorded
/// a value in it, ms; None for a histogram the timeline does not keep per second
/// (only `response` and `lateness`).
fn per_second_quantile(runs: &[Run], hist: &str, q: f64) -> Option<Vec<f64>> {
    let mut out = Vec::new();
    for (stats, _) in runs {
        let t = &stats.timeline;
        for (_, len, iv) in t.spans() {
            let h = match hist {
                "response" => &iv.response,
                "lateness" => &iv.lateness,
                _ => return None,
            };
            if len >= MIN_SECOND_S && h.count() > 0 {
                out.push(h.quantile_us(q) as f64 / 1000.0);
            }
        }
    }
    Some(out)
}

/// The mean of a sample (NaN when empty).
fn mean(xs: &[f64]) -> f64 {
    significance::mean_var(xs).0
}

/// The per-second rates of timeline column `col` (`figure::second`).
fn per_second_of(runs: &[Run], col: &str) -> Vec<f64> {
    let Some(i) = second::column(col) else {
        return Vec::new();
    };
    per_second(runs, |start, len, iv| {
        second::value(i, start, len, iv)
            .and_then(|v| v.number())
            .unwrap_or(0.0)
    })
}

/// The errors and connections of a group.
fn errors(runs: &[Run]) -> (u64, u64) {
    runs.iter().fold((0, 0), |(e, c), (s, _)| {
        (e + s.errors.iter().sum::<u64>(), c + s.connections)
    })
}

/// Errors per connection, % (NaN without connections).
fn errors_pct((e, c): (u64, u64)) -> f64 {
    if c == 0 {
        f64::NAN
    } else {
        100.0 * e as f64 / c as f64
    }
}

/// The client's CPU per reply of each run with replies, and pooled over the group, µs.
fn cpu(runs: &[Run]) -> (Vec<f64>, f64) {
    let per_run = runs
        .iter()
        .filter(|(s, _)| s.replies() > 0)
        .map(|(s, r)| 1e6 * (r.cpu_user + r.cpu_system) / s.replies() as f64)
        .collect();
    let (secs, replies) = runs.iter().fold((0.0, 0u64), |(t, n), (s, r)| {
        (t + r.cpu_user + r.cpu_system, n + s.replies())
    });
    let pooled = if replies == 0 {
        f64::NAN
    } else {
        1e6 * secs / replies as f64
    };
    (per_run, pooled)
}

/// Compares one figure of `new` against `base`.
fn row(c: &CompareRow, base: &[Run], new: &[Run], alpha: f64) -> Row {
    let (base_v, new_v, change, test) = match c.method {
        Method::PerSecond(col) => {
            let (b, n) = (per_second_of(base, col), per_second_of(new, col));
            let change = significance::mean_change(&b, &n, alpha);
            (mean(&b), mean(&n), change, Test::WelchSeconds)
        }
        Method::Quantile => {
            let (hist, q) = (c.hist, c.q);
            let (hb, hn) = (pooled(base, hist), pooled(new, hist));
            let (vb, vn) = (quantile_ms(&hb, q), quantile_ms(&hn, q));
            let seconds = |runs: &[Run]| per_second_quantile(runs, hist, q);
            let (test, change) = match (seconds(base), seconds(new)) {
                _ if hb.is_empty() || hn.is_empty() => (Test::Bootstrap, None),
                (Some(sb), Some(sn)) => (
                    Test::WelchLogSeconds,
                    significance::log_change(&sb, &sn, QUANTILE_FLOOR_MS, alpha),
                ),
                _ => (
                    Test::Bootstrap,
                    significance::quantile_change(&buckets(&hb), &buckets(&hn), q, (vb, vn), alpha),
                ),
            };
            let value = |h: &Histogram<u64>, v| if h.is_empty() { f64::NAN } else { v };
            (value(&hb, vb), value(&hn, vn), change, test)
        }
        Method::ErrorsPerConnection => {
            let (eb, en) = (errors(base), errors(new));
            let change = significance::proportions(eb, en, alpha);
            (errors_pct(eb), errors_pct(en), change, Test::Proportions)
        }
        Method::CpuPerReply => {
            let ((cb, vb), (cn, vn)) = (cpu(base), cpu(new));
            let change = significance::mean_change(&cb, &cn, alpha);
            (vb, vn, change, Test::WelchRuns)
        }
    };
    Row {
        figure: c.figure.clone(),
        label: c.label.clone(),
        unit: c.unit,
        better: c.better,
        aspect: c.aspect,
        base: base_v,
        new: new_v,
        change,
        test,
    }
}

/// Compares `new` against `base` (each a group of runs, pooled), figure by figure: the
/// table of figures' compare rows (`figure::run::compare_rows`), in their order.
pub(crate) fn compare(base: &[Run], new: &[Run], alpha: f64) -> Vec<Row> {
    compare_rows()
        .iter()
        .map(|c| row(c, base, new, alpha))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::time::Duration;

    /// A run of `seconds` full seconds at `rate` replies per second (plus `jitter`
    /// alternately added and taken away), response times `ms` (1 % of the replies at
    /// twice that), `errors` connection failures, CPU `cpu` seconds.
    pub(crate) fn run(seconds: u64, rate: u64, jitter: u64, ms: u64, errors: u64, cpu: f64) -> Run {
        use crate::model::stats::timeline::Totals;
        use crate::model::stats::ErrorKind;
        let mut s = Stats::new();
        let mut totals = Totals::default();
        for sec in 0..seconds {
            let n = if sec % 2 == 0 {
                rate + jitter
            } else {
                rate - jitter
            };
            for i in 0..n {
                s.on_connecting();
                s.on_connected(Duration::from_micros(100));
                s.on_request_sent(60);
                let us = if i % 100 == 99 {
                    2000 * ms
                } else {
                    1000 * ms + i % 50
                };
                s.on_response(Duration::from_micros(us));
                s.timeline.on_response(us);
                s.on_reply(200, 100, 100, 0, Duration::from_micros(10));
                s.on_lifetime(Duration::from_micros(us + 200));
                totals.connections += 1;
                totals.replies[1] += 1;
            }
            s.timeline.roll(totals, 0, (sec + 1) as f64);
        }
        for _ in 0..errors {
            s.on_connecting();
            s.on_error(ErrorKind::ConnRefused);
        }
        let info = RunInfo {
            duration: seconds as f64,
            cpu_user: cpu,
            cpu_system: 0.0,
        };
        (s, info)
    }

    fn row<'a>(rows: &'a [Row], figure: &str) -> &'a Row {
        rows.iter().find(|r| r.figure == figure).expect(figure)
    }

    #[test]
    fn identical_runs_change_nothing() {
        let a = [run(10, 200, 5, 2, 0, 0.5)];
        let rows = compare(&a, &a, 0.01);
        assert_eq!(rows.len(), 2 + 3 * 4 + 2);
        for r in &rows {
            let v = r.verdict(0.01);
            assert!(
                matches!(v, Verdict::NoChange | Verdict::NotTested),
                "{}: {v:?} {:?}",
                r.figure,
                r.change
            );
        }
        let rate = row(&rows, "replies_rate");
        assert_eq!((rate.base, rate.new), (200.0, 200.0));
        assert_eq!(row(&rows, "errors_total").base, 0.0);
        // One run a side: CPU per reply is shown, not tested.
        let cpu = row(&rows, "cpu_per_reply_us");
        assert_eq!(cpu.base, 1e6 * 0.5 / 2000.0);
        assert_eq!(cpu.verdict(0.01), Verdict::NotTested);
        // Lateness was never recorded: no data, no test.
        assert!(row(&rows, "percentiles_lateness_p99").base.is_nan());
    }

    #[test]
    fn a_slower_server_is_slower_and_a_faster_rate_is_faster() {
        let base = [run(10, 200, 5, 2, 0, 0.5)];
        let slow = [run(10, 200, 5, 3, 0, 0.5)];
        let rows = compare(&base, &slow, 0.01);
        // Response quantiles are tested second by second; connect times (no per-second
        // histograms) with the bootstrap.
        let p99 = row(&rows, "percentiles_response_p99");
        assert_eq!(
            (p99.verdict(0.01), p99.test),
            (Verdict::Slower, Test::WelchLogSeconds)
        );
        assert_eq!(row(&rows, "percentiles_connect_p99").test, Test::Bootstrap);
        let p90 = row(&rows, "percentiles_response_p90");
        assert_eq!(p90.verdict(0.01), Verdict::Slower);
        // Above 2.048 ms the histogram's buckets are 2 µs wide: 3.044 reads 3.045.
        assert_eq!((p90.base, p90.new), (2.044, 3.045), "{p90:?}");
        let c = p90.change.expect("tested");
        assert!(c.ci.0 > 0.0 && c.ci.0 <= c.pct && c.pct <= c.ci.1, "{c:?}");
        assert_eq!(row(&rows, "replies_rate").verdict(0.01), Verdict::NoChange);
        let more = [run(10, 220, 5, 2, 0, 0.5)];
        let rows = compare(&base, &more, 0.01);
        let rate = row(&rows, "replies_rate");
        assert_eq!(rate.verdict(0.01), Verdict::Faster);
        assert!((rate.change.expect("tested").pct - 10.0).abs() < 1e-9);
    }

    #[test]
    fn errors_and_cpu_are_better_or_worse() {
        let base = [run(5, 200, 0, 2, 10, 0.5), run(5, 200, 0, 2, 10, 0.6)];
        let worse = [run(5, 200, 0, 2, 100, 1.5), run(5, 200, 0, 2, 100, 1.6)];
        let rows = compare(&base, &worse, 0.01);
        assert_eq!(row(&rows, "errors_total").verdict(0.01), Verdict::Worse);
        assert_eq!(row(&rows, "cpu_per_reply_us").verdict(0.01), Verdict::Worse);
        let rows = compare(&worse, &base, 0.01);
        assert_eq!(row(&rows, "errors_total").verdict(0.01), Verdict::Better);
        // Pooled: 20 of 2020 connections failed.
        assert_eq!(row(&rows, "errors_total").new, 100.0 * 20.0 / 2020.0);
    }
}
