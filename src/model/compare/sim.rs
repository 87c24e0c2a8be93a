//! Simulations of `compare`'s statistics (tests only): synthetic runs with known
//! shifts, recorded through `Stats` as the engine records them (HdrHistograms,
//! windows, timeline), compared by `model::compare` as real documents are; thousands
//! of pairs on a seeded generator give the false-positive rate and the power.
//!
//! A synthetic run: calls at a fixed rate (rshperf's schedule), each with a response
//! time whose logarithm is the sum of a run effect (normal, `run_sd`: what makes two
//! runs of one build differ), a slow component (an AR(1) process in time on a 10-ms
//! grid: a busy moment of the machine), a fast one (AR(1) from call to call) and
//! independent noise (normal: a lognormal body; or the logarithm of a gamma
//! variable: a gamma body), with a heavy tail (a share of the calls delayed by a
//! Pareto factor). The three regimes (`Noise::quiet`, `shared`, `busy`) are fitted
//! to real runs through bench/delay_proxy.py on this project's shared 2-core machine
//! (bench/compare_calibrate.py measures them; docs/compare.md, "Validation: simulation").

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

    /// Gamma with shape `k` ≥ 1 and scale 1 (Marsaglia & Tsang 2000).
    pub(crate) fn gamma(&mut self, k: f64) -> f64 {
        let d = k - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = self.uniform();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v;
            }
        }
    }
}

/// The shape of the independent part of the response times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Body {
    /// ln(response) normal: `iid_sd` its standard deviation.
    LogNormal,
    /// response ∝ Gamma(k) with k = 1/iid_sd² (the same spread, skewed the other
    /// way on the log scale).
    Gamma,
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
    /// Standard deviation of the independent part (of its logarithm), and its shape.
    pub(crate) iid_sd: f64,
    pub(crate) body: Body,
    /// Share of calls in the heavy tail, and the Pareto shape of their delay factor.
    pub(crate) tail_share: f64,
    pub(crate) tail_shape: f64,
    /// Standard deviation of the run effect.
    pub(crate) run_sd: f64,
}

/// The parameters a regime is fitted with: slow sd, slow time constant (s), fast sd,
/// independent sd, tail share, tail shape.
type Fit = [f64; 6];

impl Noise {
    /// A lognormal regime from its fitted parameters, median `median_ms`.
    fn fitted(
        median_ms: f64,
        [slow_sd, slow_s, fast_sd, iid_sd, tail_share, tail_shape]: Fit,
    ) -> Noise {
        Noise {
            median_ms,
            slow_sd,
            slow_s,
            fast_sd,
            fast_phi: 0.3,
            iid_sd,
            body: Body::LogNormal,
            tail_share,
            tail_shape,
            run_sd: 0.0,
        }
    }

    /// The proxy and rshperf at real-time priority (`RT=1 bench/compare_power.sh`,
    /// `chrt -f`) on the shared machine at load 1.2–2.6: fitted to ln(response) sd
    /// 0.065 (A) and 0.109 (B), the windows' design effect 6.1 and 15.2, neighbouring
    /// windows correlated 0.23 and 0.03, p90/p50 1.05 and 1.03, p99/p50 1.35 and
    /// 1.51 (20 runs each).
    pub(crate) fn quiet(w: Workload) -> Noise {
        if w.rate > 500.0 {
            Noise::fitted(2.2, QUIET_B)
        } else {
            Noise::fitted(2.2, QUIET_A)
        }
    }

    /// Normal priority on the shared machine at load 1.8–6.7: ln sd 0.212 (A) and
    /// 0.230 (B), design effect 4.3 and 19.2, lag-1 0.35 and 0.19, p90/p50 1.28 and
    /// 1.52, p99/p50 2.9 and 3.4.
    pub(crate) fn shared(w: Workload) -> Noise {
        if w.rate > 500.0 {
            Noise::fitted(2.3, SHARED_B)
        } else {
            Noise::fitted(2.3, SHARED_A)
        }
    }

    /// Normal priority while six compilers share the two cores (load 7–10): ln sd
    /// 0.276 (A) and 0.308 (B), design effect 2.2 and 17.1, lag-1 0.30 and 0.27,
    /// p90/p50 1.64 and 1.69, p99/p50 3.2 and 3.7.
    pub(crate) fn busy(w: Workload) -> Noise {
        if w.rate > 500.0 {
            Noise::fitted(2.3, BUSY_B)
        } else {
            Noise::fitted(2.3, BUSY_A)
        }
    }

    /// The same with a run effect of `sd`.
    pub(crate) fn with_run_sd(self, sd: f64) -> Noise {
        Noise { run_sd: sd, ..self }
    }

    /// The same with a gamma body.
    pub(crate) fn gamma(self) -> Noise {
        Noise {
            body: Body::Gamma,
            ..self
        }
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
        let iid = match n.body {
            Body::LogNormal => n.iid_sd * d.normal(),
            Body::Gamma => {
                let k = 1.0 / (n.iid_sd * n.iid_sd);
                (d.gamma(k) / k).ln()
            }
        };
        let mut log_us = mu + run_effect + slow + fast + iid;
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

/// How a simulated comparison is made: runs a side, the run noise declared
/// (`--run-noise`), the family-wise level.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Design {
    /// Runs of the base and of the new build.
    pub(crate) runs: (usize, usize),
    /// The run-to-run noise declared.
    pub(crate) declared: f64,
    /// The family-wise level.
    pub(crate) alpha: f64,
}

impl Design {
    /// One run a side with compare's defaults (`RUN_NOISE`, alpha 0.01).
    pub(crate) const DEFAULT: Design = Design {
        runs: (1, 1),
        declared: crate::model::compare::RUN_NOISE,
        alpha: 0.01,
    };
}

/// One simulated comparison: the base's runs against the new build's, slowed by
/// `factor`.
pub(crate) fn pair(d: &mut Draws, w: Workload, n: Noise, factor: f64, how: Design) -> Comparison {
    let base: Vec<Run> = (0..how.runs.0).map(|_| run(d, w, n, 1.0)).collect();
    let new: Vec<Run> = (0..how.runs.1).map(|_| run(d, w, n, factor)).collect();
    let (alpha, declared) = (how.alpha, how.declared);
    Comparison {
        base_files: Vec::new(),
        new_files: Vec::new(),
        alpha,
        run_noise: declared,
        rows: compare(&base, &new, declared),
        gates: Vec::new(),
        forced: Vec::new(),
        invalid: Vec::new(),
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
pub(crate) fn simulate(
    seed: u64,
    pairs: u64,
    w: Workload,
    n: Noise,
    factor: f64,
    how: Design,
) -> Tally {
    let mut d = Draws::new(seed);
    let mut t = Tally::default();
    for _ in 0..pairs {
        let c = pair(&mut d, w, n, factor, how);
        t.add(&c, factor);
    }
    t
}

/// The Monte-Carlo standard error of a rate `p` measured over `n` trials.
pub(crate) fn mc_se(p: f64, n: u64) -> f64 {
    (p * (1.0 - p) / n as f64).sqrt()
}

/// The fitted parameters of the regimes (`Fit`), for workloads A and B.
const QUIET_A: Fit = [0.0275, 0.1094, 0.0297, 0.0348, 0.0421, 5.7971];
const QUIET_B: Fit = [0.0327, 0.0642, 0.0147, 0.0233, 0.1212, 7.3526];
const SHARED_A: Fit = [0.0858, 0.0708, 0.0715, 0.0741, 0.0629, 1.7257];
const SHARED_B: Fit = [0.199, 0.0414, 0.0486, 0.076, 0.0792, 1.7122];
const BUSY_A: Fit = [0.1048, 0.035, 0.0246, 0.2471, 0.0881, 1.7919];
const BUSY_B: Fit = [0.2143, 0.0405, 0.0867, 0.0541, 0.0831, 1.569];
