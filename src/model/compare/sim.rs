//! Simulations of `compare`'s statistics (tests only): synthetic runs with known
//! shifts, recorded through `Stats` as the engine records them (HdrHistograms,
//! windows, timeline), compared by `model::compare` as real documents are; thousands
//! of pairs on a seeded generator give the false-positive rate and the power.
//!
//! A synthetic run: calls at a fixed rate (rshperf's schedule), each with a response
//! time whose logarithm is the sum of a run effect (normal, `run_sd`: what makes two
//! runs of one build differ), a slow component (an AR(1) process in time on a 10-ms
//! grid: a busy moment of the machine), a fast one (AR(1) from call to call) and
//! independent noise, with a heavy tail (a share of the calls delayed by a Pareto
//! factor). `Noise::loaded` is calibrated on real runs through bench/delay_proxy.py
//! on this project's shared 2-core machine (docs/ci.md, "Validation").

use std::time::Duration;

use rand_pcg::rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::model::compare::{compare, Comparison, Overall, Run};
use crate::model::run::RunInfo;
use crate::model::stats::Stats;

/// A seeded generator with the draws the simulations need.
pub(crate) struct Draws(Pcg64Mcg);

impl Draws {
    /// A generator seeded with `seed`.
    pub(crate) fn new(seed: u64) -> Draws {
        Draws(Pcg64Mcg::seed_from_u64(seed))
    }

    /// Uniform in (0, 1).
    pub(crate) fn uniform(&mut self) -> f64 {
        ((self.0.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    pub(crate) fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// How calls arrive and how long a run lasts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Workload {
    /// Calls per second.
    pub(crate) rate: f64,
    /// Seconds.
    pub(crate) secs: f64,
}

impl Workload {
    /// 3-s runs at 400 calls/s.
    pub(crate) const A: Workload = Workload {
        rate: 400.0,
        secs: 3.0,
    };
    /// 2-s runs of 20 connections × 100 calls (1,000 calls/s).
    pub(crate) const B: Workload = Workload {
        rate: 1000.0,
        secs: 2.0,
    };
}

/// The response times of a synthetic run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Noise {
    /// Median response time, ms.
    pub(crate) median_ms: f64,
    /// Standard deviation of the slow component of ln(response), and its time
    /// constant, s.
    pub(crate) slow_sd: f64,
    pub(crate) slow_s: f64,
    /// Standard deviation of the fast component, and its call-to-call correlation.
    pub(crate) fast_sd: f64,
    pub(crate) fast_phi: f64,
    /// Standard deviation of the independent part.
    pub(crate) iid_sd: f64,
    /// Share of calls in the heavy tail, and the Pareto shape of their delay factor.
    pub(crate) tail_share: f64,
    pub(crate) tail_shape: f64,
    /// Standard deviation of the run effect.
    pub(crate) run_sd: f64,
}

impl Noise {
    /// Calibrated on 30 runs of each workload through the delay proxy (2 ms) with
    /// the proxy and rshperf at real-time priority (`chrt -f`) on the shared machine
    /// at load 13: ln(response) sd 0.18 (A) and 0.25 (B), p90/p50 1.12 and 1.43,
    /// p99/p50 2.1 and 2.2, window means' design effect 3 (A) and 13 (B), neighbouring
    /// windows correlated 0.17 and 0.05. The run effect is set per simulation.
    pub(crate) fn calm(w: Workload) -> Noise {
        if w.rate > 500.0 {
            Noise {
                median_ms: 2.4,
                slow_sd: 0.14,
                slow_s: 0.02,
                fast_sd: 0.05,
                fast_phi: 0.3,
                iid_sd: 0.08,
                tail_share: 0.15,
                tail_shape: 3.0,
                run_sd: 0.0,
            }
        } else {
            Noise {
                median_ms: 2.3,
                slow_sd: 0.03,
                slow_s: 0.1,
                fast_sd: 0.03,
                fast_phi: 0.3,
                iid_sd: 0.05,
                tail_share: 0.07,
                tail_shape: 2.4,
                run_sd: 0.0,
            }
        }
    }

    /// Calibrated on 40 runs of each workload through the delay proxy (2 ms) on the
    /// shared machine at load 11–14, at normal priority: ln(response) sd 0.45 (A) and
    /// 0.51 (B), window means' design effect 4.5 and 17, neighbouring windows
    /// correlated 0.3–0.4, p99 about 4.3 times p50.
    pub(crate) fn loaded(w: Workload) -> Noise {
        let b = w.rate > 500.0;
        Noise {
            median_ms: 2.9,
            slow_sd: if b { 0.19 } else { 0.12 },
            slow_s: if b { 0.1 } else { 0.23 },
            fast_sd: 0.25,
            fast_phi: 0.3,
            iid_sd: 0.3,
            tail_share: 0.08,
            tail_shape: 2.5,
            run_sd: 0.0,
        }
    }

    /// The same with a run effect of `sd`.
    pub(crate) fn with_run_sd(self, sd: f64) -> Noise {
        Noise { run_sd: sd, ..self }
    }
}

/// One synthetic run of `w` with response times of `n` multiplied by `factor`.
pub(crate) fn run(d: &mut Draws, w: Workload, n: Noise, factor: f64) -> Run {
    run_with_errors(d, w, n, factor, 0.0)
}

/// `run`, with a share `errors` of the calls refused instead of answered.
pub(crate) fn run_with_errors(
    d: &mut Draws,
    w: Workload,
    n: Noise,
    factor: f64,
    errors: f64,
) -> Run {
    let mut s = Stats::new();
    let calls = (w.rate * w.secs).round() as u64;
    let grid = 0.01;
    let c = (-grid / n.slow_s).exp();
    let run_effect = n.run_sd * d.normal();
    let (mut slow, mut slow_at) = (n.slow_sd * d.normal(), 0.0);
    let mut fast = n.fast_sd * d.normal();
    let (mut next_window, mut next_second) = (0.1, 1.0);
    let mu = (n.median_ms * 1000.0 * factor).ln();
    for i in 0..calls {
        let t = i as f64 / w.rate;
        while t >= next_window - 1e-9 {
            s.roll_window(next_window, false);
            next_window += 0.1;
        }
        while t >= next_second - 1e-9 {
            s.roll_timeline(0, next_second);
            next_second += 1.0;
        }
        while slow_at + grid <= t {
            slow = c * slow + (1.0 - c * c).sqrt() * n.slow_sd * d.normal();
            slow_at += grid;
        }
        let phi = n.fast_phi;
        fast = phi * fast + (1.0 - phi * phi).sqrt() * n.fast_sd * d.normal();
        let mut log_us = mu + run_effect + slow + fast + n.iid_sd * d.normal();
        if d.uniform() < n.tail_share {
            log_us += -d.uniform().ln() / n.tail_shape;
        }
        let us = log_us.exp().round().max(1.0) as u64;
        s.on_connecting();
        if d.uniform() < errors {
            s.on_error(crate::model::stats::ErrorKind::ConnRefused);
            continue;
        }
        s.on_response(Duration::from_micros(us));
        s.on_reply(200, 100, 1024, 0, Duration::ZERO);
    }
    s.roll_timeline(0, w.secs);
    s.roll_window(w.secs, true);
    let info = RunInfo {
        duration: w.secs,
        cpu_user: 0.1,
        cpu_system: 0.0,
    };
    (s, info)
}

/// One simulated comparison: `base_runs` runs of the base against one run slowed by
/// `factor`, at family-wise level `alpha` with the run noise `declared`.
pub(crate) fn pair(
    d: &mut Draws,
    w: Workload,
    n: Noise,
    factor: f64,
    base_runs: usize,
    declared: f64,
    alpha: f64,
) -> Comparison {
    let base: Vec<Run> = (0..base_runs).map(|_| run(d, w, n, 1.0)).collect();
    let new = [run(d, w, n, factor)];
    Comparison {
        base_files: Vec::new(),
        new_files: Vec::new(),
        alpha,
        run_noise: declared,
        rows: compare(&base, &new, declared),
        gates: Vec::new(),
        forced: Vec::new(),
    }
}

/// What a batch of simulated comparisons found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    /// Comparisons made.
    pub(crate) pairs: u64,
    /// Whose verdict was `worse` (or `mixed`).
    pub(crate) worse: u64,
    /// Whose verdict was not `no significant change`.
    pub(crate) flagged: u64,
    /// Per response quantile (p50, p90, p99): tested, significant at the
    /// per-figure level, slower, and intervals that held the true change.
    pub(crate) tested: [u64; 3],
    pub(crate) significant: [u64; 3],
    pub(crate) covered: [u64; 3],
}

/// The response quantile rows the tally follows.
const FOLLOWED: [&str; 3] = [
    "percentiles_response_p50",
    "percentiles_response_p90",
    "percentiles_response_p99",
];

impl Tally {
    /// Counts one comparison whose true change is `factor`.
    pub(crate) fn add(&mut self, c: &Comparison, factor: f64) {
        self.pairs += 1;
        let v = c.verdict();
        self.worse += u64::from(matches!(v, Overall::Worse | Overall::Mixed));
        self.flagged += u64::from(!matches!(v, Overall::NoChange | Overall::NotTested));
        let a = c.row_alpha();
        for (k, fig) in FOLLOWED.iter().enumerate() {
            let Some(r) = c.rows.iter().find(|r| r.figure == *fig) else {
                continue;
            };
            if r.change.p().is_none() {
                continue;
            }
            self.tested[k] += 1;
            self.significant[k] += u64::from(r.change.significant(a));
            let truth = 100.0 * (factor - 1.0);
            self.covered[k] += u64::from(
                r.change
                    .ci(a)
                    .is_ok_and(|(lo, hi)| lo <= truth && truth <= hi),
            );
        }
    }

    /// The share of comparisons flagged.
    pub(crate) fn rate(&self) -> f64 {
        self.flagged as f64 / self.pairs.max(1) as f64
    }
}

/// `pairs` simulated comparisons from `seed`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate(
    seed: u64,
    pairs: u64,
    w: Workload,
    n: Noise,
    factor: f64,
    base_runs: usize,
    declared: f64,
    alpha: f64,
) -> Tally {
    let mut d = Draws::new(seed);
    let mut t = Tally::default();
    for _ in 0..pairs {
        let c = pair(&mut d, w, n, factor, base_runs, declared, alpha);
        t.add(&c, factor);
    }
    t
}

/// The Monte-Carlo standard error of a rate `p` measured over `n` trials.
pub(crate) fn mc_se(p: f64, n: u64) -> f64 {
    (p * (1.0 - p) / n as f64).sqrt()
}
