//! The comparison of two groups of runs (`rshperf compare`): each compared figure's
//! row, the family of figures the verdict corrects for, and the verdicts.
//!
//! The rows, their order, labels, units, better directions, whom each is about and
//! how each is pooled (`Method`) are the table of figures' (`figure::compare`),
//! named as the figures (`percentiles_response_p99`, `replies_rate`) that `--fail-on`
//! and the regression gates use. Each side's data for a figure (its whole-run value
//! as printed, its runs' windows as batches) is built by `sides`; the change and its
//! test by `estimate`, which knows nothing of figures (batch means over the runs'
//! windows, Woodruff's interval for quantiles, a run-to-run noise term: docs/compare.md).
//! The verdict's family is the tested figures the gates judge, or without gates the
//! tested figures about the server (rates, response quantiles, errors): each is
//! tested at alpha / m (Bonferroni) and its interval is at 1 − alpha / m, so the
//! chance that any of them says faster or slower for two runs of the same build is
//! at most alpha. The figures about the client and its machine (connect, lateness,
//! CPU) are shown at the same level but are not in the verdict. The runs whose
//! documents say they are invalid, and the line that marks them, are `invalid`'s.
//! Called by `front::compare`; formatted by `output::compare`.

pub(crate) mod estimate;
pub(crate) mod gate;
pub(crate) mod invalid;
pub(crate) mod sides;
#[cfg(test)]
pub(crate) mod sim;
#[cfg(test)]
mod sim_tests;

use crate::model::figure::compare::{compare_rows, CompareRow};
use crate::model::figure::Method;
use crate::model::run::RunInfo;
use crate::model::stats::Stats;
use estimate::Change;

pub(crate) use crate::model::figure::{About, Aspect, Better};

/// The run-to-run noise assumed when the runs cannot show it (one run a side): the
/// standard deviation of a figure between two runs of the same build beyond their
/// windows' noise, relative. Measured by bench/compare_power.sh on identical pairs
/// (docs/compare.md, "Run-to-run noise"): 0.4–0.7 % for the response p50 and p90 of a
/// quiet machine; a busy one needs several runs a side or a larger `--run-noise`.
pub(crate) const RUN_NOISE: f64 = 0.01;

/// The test that decided a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Test {
    /// A ratio over the runs' windows (batch means).
    BatchMeans,
    /// A whole-run quantile with its noise from the windows (Woodruff).
    Woodruff,
    /// A ratio over the runs.
    Runs,
}

impl Test {
    /// Its short name in tables and JSON.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Test::BatchMeans => "batch-means",
            Test::Woodruff => "woodruff",
            Test::Runs => "runs",
        }
    }

    /// What it is, for the legend under the tables.
    pub(crate) fn description(self) -> &'static str {
        match self {
            Test::BatchMeans => "whole-run ratio, its noise from the runs' 100-ms windows",
            Test::Woodruff => {
                "whole-run quantile, its noise from the windows (Woodruff's interval)"
            }
            Test::Runs => "ratio over the runs, its noise from their spread",
        }
    }

    /// Every test, in legend order.
    pub(crate) const ALL: [Test; 3] = [Test::BatchMeans, Test::Woodruff, Test::Runs];
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
    /// No test possible (no data, or too little: the interval column says why).
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
    /// Whom it is about.
    pub(crate) about: About,
    /// The base group's value, as printed (NaN when it has no data).
    pub(crate) base: f64,
    /// The new group's value.
    pub(crate) new: f64,
    /// The change and its test.
    pub(crate) change: Change,
    /// The test used.
    pub(crate) test: Test,
}

impl Row {
    /// The verdict at level `alpha` (the per-figure level: `Comparison::row_alpha`).
    pub(crate) fn verdict(&self, alpha: f64) -> Verdict {
        if self.change.p().is_none() {
            return Verdict::NotTested;
        }
        let dir = self.change.direction();
        if !self.change.significant(alpha) || dir == 0.0 {
            return Verdict::NoChange;
        }
        let improved = (dir > 0.0) == (self.better == Better::Higher);
        match (self.aspect, improved) {
            (Aspect::Speed, true) => Verdict::Faster,
            (Aspect::Speed, false) => Verdict::Slower,
            (Aspect::Cost, true) => Verdict::Better,
            (Aspect::Cost, false) => Verdict::Worse,
        }
    }
}

/// The verdict on a whole comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overall {
    /// Some figure about the server is significantly worse, none better.
    Worse,
    /// Some is significantly better, none worse.
    Better,
    /// Some better, some worse.
    Mixed,
    /// None changed significantly.
    NoChange,
    /// No figure about the server could be tested.
    NotTested,
}

impl Overall {
    /// As printed.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Overall::Worse => "worse",
            Overall::Better => "better",
            Overall::Mixed => "mixed",
            Overall::NoChange => "no significant change",
            Overall::NotTested => "not tested",
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
    /// The significance level of the whole comparison (family-wise).
    pub(crate) alpha: f64,
    /// The run-to-run noise assumed (relative standard deviation).
    pub(crate) run_noise: f64,
    /// The compared figures, in table order.
    pub(crate) rows: Vec<Row>,
    /// The regression gates' outcomes, in the order given.
    pub(crate) gates: Vec<crate::model::compare::gate::Outcome>,
    /// Workload differences `--force` let pass (empty otherwise).
    pub(crate) forced: Vec<String>,
    /// The runs whose documents say they are invalid, which `--force` let pass
    /// (empty otherwise), base runs first.
    pub(crate) invalid: Vec<invalid::Invalid>,
}

impl Comparison {
    /// Whether a gate tripped.
    pub(crate) fn failed(&self) -> bool {
        self.gates.iter().any(|g| g.failed)
    }

    /// The figures the gates judge.
    fn gated(&self) -> Vec<&str> {
        self.gates.iter().map(|g| g.gate.figure.as_str()).collect()
    }

    /// The figures in the verdict's family.
    pub(crate) fn family(&self) -> Vec<&Row> {
        family(&self.rows, &self.gated())
    }

    /// The level each figure is tested at (and its interval's): alpha / family.
    pub(crate) fn row_alpha(&self) -> f64 {
        row_alpha(self.alpha, &self.rows, &self.gated())
    }

    /// The verdict over the family.
    pub(crate) fn verdict(&self) -> Overall {
        let a = self.row_alpha();
        let family = self.family();
        let (mut worse, mut better) = (false, false);
        for r in &family {
            match r.verdict(a) {
                Verdict::Slower | Verdict::Worse => worse = true,
                Verdict::Faster | Verdict::Better => better = true,
                _ => {}
            }
        }
        match (worse, better) {
            _ if family.is_empty() => Overall::NotTested,
            (true, true) => Overall::Mixed,
            (true, false) => Overall::Worse,
            (false, true) => Overall::Better,
            (false, false) => Overall::NoChange,
        }
    }
}

/// The verdict's family: the tested figures the gates judge (`gated`), or without
/// gates every tested figure about the server.
pub(crate) fn family<'a>(rows: &'a [Row], gated: &[&str]) -> Vec<&'a Row> {
    rows.iter()
        .filter(|r| r.change.p().is_some())
        .filter(|r| {
            if gated.is_empty() {
                r.about == About::Server
            } else {
                gated.contains(&r.figure.as_str())
            }
        })
        .collect()
}

/// The per-figure level for a family-wise `alpha` (Bonferroni over `family`).
pub(crate) fn row_alpha(alpha: f64, rows: &[Row], gated: &[&str]) -> f64 {
    alpha / family(rows, gated).len().max(1) as f64
}

/// One run: its statistics and its duration and CPU times.
pub(crate) type Run = (Stats, RunInfo);

impl Test {
    /// The test of a way of pooling.
    fn of(method: Method) -> Test {
        match method {
            Method::Rate(_) | Method::ErrorsPerConnection => Test::BatchMeans,
            Method::Quantile => Test::Woodruff,
            Method::CpuPerReply => Test::Runs,
        }
    }
}

/// Each side's data for the figure of compare row `c`.
fn side(c: &CompareRow, runs: &[Run]) -> estimate::Side {
    match c.method {
        Method::Rate(count) => sides::rate(runs, c.unit, count),
        Method::Quantile => sides::quantile(runs, c.hist, c.q),
        Method::ErrorsPerConnection => sides::error_rate(runs),
        Method::CpuPerReply => sides::cpu_per_reply(runs),
    }
}

/// Compares one figure of `new` against `base`.
fn row(c: &CompareRow, base: &[Run], new: &[Run], noise: f64) -> Row {
    let (b, n) = (side(c, base), side(c, new));
    Row {
        figure: c.figure.clone(),
        label: c.label.clone(),
        unit: c.unit,
        better: c.better,
        aspect: c.aspect,
        about: c.about,
        base: b.value,
        new: n.value,
        change: estimate::change(&b, &n, noise),
        test: Test::of(c.method),
    }
}

/// Compares `new` against `base` (each a group of runs, pooled), figure by figure: the
/// table of figures' compare rows (`figure::compare::compare_rows`), in their order;
/// `noise` is the run-to-run noise assumed (`RUN_NOISE` unless asked otherwise).
pub(crate) fn compare(base: &[Run], new: &[Run], noise: f64) -> Vec<Row> {
    compare_rows()
        .iter()
        .map(|c| row(c, base, new, noise))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::sim::{run, run_with_errors, Draws, Noise, Workload};
    use super::*;
    use crate::model::compare::estimate::Na;

    fn row<'a>(rows: &'a [Row], figure: &str) -> &'a Row {
        rows.iter().find(|r| r.figure == figure).expect(figure)
    }

    fn comparison(base: &[Run], new: &[Run], noise: f64) -> Comparison {
        Comparison {
            base_files: Vec::new(),
            new_files: Vec::new(),
            alpha: 0.01,
            run_noise: noise,
            rows: compare(base, new, noise),
            gates: Vec::new(),
            forced: Vec::new(),
            invalid: Vec::new(),
        }
    }

    #[test]
    fn identical_runs_change_nothing() {
        let w = Workload::A;
        let a = [run(&mut Draws::new(1), w, Noise::shared(w), 1.0)];
        let c = comparison(&a, &a, RUN_NOISE);
        assert_eq!(c.rows.len(), 2 + 3 * 4 + 2);
        let alpha = c.row_alpha();
        for r in &c.rows {
            let v = r.verdict(alpha);
            assert!(
                matches!(v, Verdict::NoChange | Verdict::NotTested),
                "{}: {v:?} {:?}",
                r.figure,
                r.change
            );
        }
        assert_eq!(c.verdict(), Overall::NoChange);
        // The rates, response p50 p90 p99 and errors: p99.9 has 1.2 values above it.
        let family: Vec<&str> = c.family().iter().map(|r| r.figure.as_str()).collect();
        assert_eq!(
            family,
            [
                "replies_rate",
                "connections_rate",
                "percentiles_response_p50",
                "percentiles_response_p90",
                "percentiles_response_p99",
                "errors_total"
            ]
        );
        assert_eq!(alpha, 0.01 / 6.0);
        let rate = row(&c.rows, "replies_rate");
        assert_eq!((rate.base, rate.new), (400.0, 400.0));
        assert_eq!(rate.change.pct, Some(0.0));
        assert_eq!(
            row(&c.rows, "percentiles_response_p99_9").change.ci(alpha),
            Err(Na::Tail(1200.0 * (1.0 - 0.999)))
        );
        assert_eq!(row(&c.rows, "errors_total").base, 0.0);
        // One run a side: CPU per reply is shown, not tested.
        let cpu = row(&c.rows, "cpu_per_reply_us");
        assert_eq!(cpu.base, 83.3);
        assert_eq!(cpu.verdict(alpha), Verdict::NotTested);
        assert_eq!(cpu.change.ci(alpha), Err(Na::TooFew(1, "runs")));
        // Nothing was connected nor late: no data, no test.
        assert!(row(&c.rows, "percentiles_lateness_p99").base.is_nan());
        assert_eq!(
            row(&c.rows, "percentiles_connect_p50").change.stat,
            Err(Na::NoData)
        );
    }

    #[test]
    fn a_slower_server_is_slower_and_its_change_is_the_printed_values_ratio() {
        let w = Workload::A;
        let mut d = Draws::new(2);
        let base = [run(&mut d, w, Noise::shared(w), 1.0)];
        let slow = [run(&mut d, w, Noise::shared(w), 1.3)];
        let c = comparison(&base, &slow, RUN_NOISE);
        let alpha = c.row_alpha();
        let p50 = row(&c.rows, "percentiles_response_p50");
        assert_eq!(
            (p50.verdict(alpha), p50.test),
            (Verdict::Slower, Test::Woodruff)
        );
        // The values are the whole runs' quantiles, as --percentiles prints them.
        let q = |r: &Run| crate::model::stats::quantile_ms(&r.0.hist.response, 0.5);
        assert_eq!((p50.base, p50.new), (q(&base[0]), q(&slow[0])));
        assert_eq!(p50.change.pct, Some(100.0 * (p50.new / p50.base - 1.0)));
        let (lo, hi) = p50.change.ci(alpha).expect("an interval");
        assert!(lo > 0.0 && lo < 30.0 && hi > 30.0, "{lo} … {hi}");
        assert_eq!(c.verdict(), Overall::Worse);
        // The other way round: faster.
        let c = comparison(&slow, &base, RUN_NOISE);
        assert_eq!(c.verdict(), Overall::Better);
        let p50 = row(&c.rows, "percentiles_response_p50");
        assert_eq!(p50.verdict(c.row_alpha()), Verdict::Faster);
    }

    #[test]
    fn errors_and_cpu_are_better_or_worse() {
        let w = Workload::A;
        let n = Noise::shared(w);
        let mut d = Draws::new(3);
        let mut side = |errors: f64, cpu: f64| -> Vec<Run> {
            (0..3)
                .map(|i| {
                    let mut r = run_with_errors(&mut d, w, n, 1.0, errors);
                    r.1.cpu_user = cpu + 0.01 * f64::from(i);
                    r
                })
                .collect()
        };
        let (base, worse) = (side(0.01, 0.1), side(0.1, 0.3));
        let c = comparison(&base, &worse, RUN_NOISE);
        let alpha = c.row_alpha();
        let errors = row(&c.rows, "errors_total");
        assert_eq!(errors.verdict(alpha), Verdict::Worse);
        assert_eq!(
            row(&c.rows, "cpu_per_reply_us").verdict(alpha),
            Verdict::Worse
        );
        // Errors per connection, pooled, at the printed resolution.
        let (e, n): (u64, u64) = base.iter().fold((0, 0), |(e, n), (s, _)| {
            (e + s.total_errors(), n + s.connections)
        });
        assert_eq!(
            errors.base,
            sides::printed(100.0 * e as f64 / n as f64, "%")
        );
        let c = comparison(&worse, &base, RUN_NOISE);
        assert_eq!(
            row(&c.rows, "errors_total").verdict(c.row_alpha()),
            Verdict::Better
        );
    }

    /// A 3-s run whose 100-ms windows each hold 40 calls of one response time, the
    /// level moving from window to window by up to 40 µs around `us`.
    fn packed(us: u64) -> Run {
        let mut s = Stats::new();
        for w in 0..30u64 {
            for _ in 0..40 {
                s.on_connecting();
                s.on_response(std::time::Duration::from_micros(us + 10 * ((w * 7) % 5)));
                s.on_reply(200, 100, 1024, 0, std::time::Duration::ZERO);
            }
            s.roll_window((w + 1) as f64 / 10.0, false);
        }
        s.roll_window(3.0, true);
        let info = RunInfo {
            duration: 3.0,
            cpu_user: 0.1,
            cpu_system: 0.0,
        };
        (s, info)
    }

    #[test]
    fn values_packed_around_a_moving_level_are_read_from_groups_of_windows() {
        // Every window is below or above the median: the proportion below it swings
        // from 0 to 1, Woodruff's interval spans everything, the groups' quantiles
        // move by 40 µs of 2 ms.
        let (base, slow) = ([packed(2_000)], [packed(2_200)]);
        let c = comparison(&base, &slow, 0.0);
        let p50 = row(&c.rows, "percentiles_response_p50");
        assert_eq!(p50.verdict(c.row_alpha()), Verdict::Slower);
        let (lo, hi) = p50.change.ci(c.row_alpha()).expect("an interval");
        assert!(lo > 7.0 && hi < 13.0, "{lo} … {hi}");
        // Connections one per call, in every window: a rate with an interval.
        assert!(row(&c.rows, "connections_rate").change.ci(0.01).is_ok());
    }

    #[test]
    fn documents_without_windows_fall_back_to_seconds() {
        let w = Workload::A;
        let mut d = Draws::new(4);
        let mut old = [run(&mut d, w, Noise::shared(w), 1.0)];
        old[0].0.windows = Default::default();
        let c = comparison(&old, &old, RUN_NOISE);
        let p50 = row(&c.rows, "percentiles_response_p50");
        assert_eq!(p50.change.ci(0.01), Err(Na::TooFew(3, "seconds")));
        assert_eq!(p50.verdict(0.01), Verdict::NotTested);
        assert_eq!(c.verdict(), Overall::NotTested);
    }
}
