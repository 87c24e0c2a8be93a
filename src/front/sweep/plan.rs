//! Which rate a sweep runs next, and what its results mean.
//!
//! Owns the two strategies and the outcome. The walk: L, L+S, … up to H, stopping
//! `--past-knee` non-passing steps after the first one. The search (`--find-max`): L
//! first; then, until a step does not pass, the middle of what is left up to H (the
//! geometric middle at a relative precision, the middle grid rate on the grid); then
//! the bracket between the highest passing and the lowest non-passing rate narrows
//! until its ends are `--precision` % apart, or adjacent rates of the walk's grid when
//! `--rate-step` is given (the search then reports the knee the walk would report).
//! A step that missed only the rate criterion tells more than "fail": a saturated
//! server (or client) achieves its capacity, so achieved ÷ min-achieved estimates the
//! highest rate that passes; the search probes there (just below it) instead of the
//! middle, and bisects only when a step failed on errors or an SLO or the estimate
//! proved too low. The outcome: the knee (the highest passing rate below the first
//! non-passing one) and the step that limited it. Pure: the caller runs the steps and
//! reports what they showed.

/// What a step's run showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Every criterion held.
    Pass,
    /// The server missed a criterion (rate, errors or an SLO).
    Fail,
    /// The run was client-bound (the client did not keep its schedule, or an engine
    /// was saturated), whether or not it met the criteria: the step says nothing about
    /// the server, and is never a passing step.
    Client,
}

impl Verdict {
    /// The name in tables and JSON.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Client => "client",
        }
    }
}

/// How the rates are chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Strategy {
    /// L, L+S, … ≤ H; stop `past_knee` non-passing steps after the first.
    Walk {
        /// First rate.
        low: f64,
        /// Highest rate.
        high: f64,
        /// Step.
        step: f64,
        /// Non-passing steps to run before stopping.
        past_knee: u32,
    },
    /// L, then narrow the bracket, guided by the estimates of rate-only misses.
    FindMax {
        /// First rate.
        low: f64,
        /// Highest rate.
        high: f64,
        /// Stop when the bracket is this fraction of its low end (0.02 = 2 %); not used
        /// with a grid.
        precision: f64,
        /// Run only the walk's rates (low + k × step ≤ high) and stop when the bracket's
        /// ends are adjacent.
        grid: Option<f64>,
    },
}

/// What one step showed, as the planner needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Probe {
    /// The step's rate.
    pub(crate) rate: f64,
    /// Its verdict.
    pub(crate) verdict: Verdict,
    /// For a step that missed only the rate criterion: the highest rate expected to
    /// pass (its achieved arrival rate ÷ the min-achieved fraction, below `rate`).
    pub(crate) estimate: Option<f64>,
}

/// The result of a sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Outcome {
    /// The knee: the highest passing rate below the limiting step (None when the first
    /// step did not pass).
    pub(crate) knee: Option<f64>,
    /// The step that limited the knee: its rate and verdict (None when no step above the
    /// knee was run or every step passed).
    pub(crate) limit: Option<(f64, Verdict)>,
}

/// The state of a sweep.
#[derive(Debug, Clone)]
pub(crate) struct Planner {
    strategy: Strategy,
    /// Every step so far, in order.
    steps: Vec<Probe>,
}

/// Tolerance for comparing rates built by repeated addition.
const EPS: f64 = 1e-9;

impl Planner {
    /// A planner for `strategy`.
    pub(crate) fn new(strategy: Strategy) -> Planner {
        Planner {
            strategy,
            steps: Vec::new(),
        }
    }

    /// Records what the step at `rate` showed; `estimate` as in [`Probe`].
    pub(crate) fn record(&mut self, rate: f64, verdict: Verdict, estimate: Option<f64>) {
        self.steps.push(Probe {
            rate,
            verdict,
            estimate,
        });
    }

    /// The next rate to run, or None when the sweep is over.
    pub(crate) fn next(&self) -> Option<f64> {
        match self.strategy {
            Strategy::Walk {
                low,
                high,
                step,
                past_knee,
            } => {
                let failing = self
                    .steps
                    .iter()
                    .filter(|s| s.verdict != Verdict::Pass)
                    .count();
                if failing >= past_knee as usize {
                    return None;
                }
                let rate = low + step * self.steps.len() as f64;
                (rate <= high * (1.0 + EPS)).then_some(rate)
            }
            Strategy::FindMax {
                low,
                high,
                precision,
                grid,
            } => {
                if self.steps.is_empty() {
                    return Some(low);
                }
                // The first step did not pass: nothing to search.
                let (Some(lo), hi) = bracket(&self.steps) else {
                    return None;
                };
                // A safeguard for estimates that mislead: when the last two steps
                // (an estimate's probe and the one just above it) did not halve the
                // bracket, this one bisects, so the search never needs much more than
                // plain bisection.
                let width = |steps: &[Probe]| match (bracket(steps), grid) {
                    ((Some(lo), hi), Some(step)) => {
                        let index = |r: f64| ((r - low) / step + EPS).floor();
                        hi.map_or(index(high) + 1.0, |h| index(h.rate)) - index(lo)
                    }
                    ((Some(lo), hi), None) => (hi.map_or(high, |h| h.rate) / lo).ln(),
                    ((None, _), _) => f64::INFINITY,
                };
                let n = self.steps.len();
                let guided = n < 3 || width(&self.steps) <= width(&self.steps[..n - 2]) / 2.0 + EPS;
                let hi = hi.map(|h| Probe {
                    estimate: h.estimate.filter(|_| guided),
                    ..h
                });
                let next = match grid {
                    Some(step) => on_grid(low, high, step, lo, hi),
                    None => continuous(high, precision, lo, hi),
                };
                // Every rate strictly inside the bracket is new; guard anyway.
                next.filter(|&r| self.steps.iter().all(|s| s.rate != r))
            }
        }
    }

    /// The knee and what limited it.
    pub(crate) fn outcome(&self) -> Outcome {
        match self.strategy {
            Strategy::Walk { .. } => {
                let first_bad = self.steps.iter().position(|s| s.verdict != Verdict::Pass);
                match first_bad {
                    None => Outcome {
                        knee: self.steps.last().map(|s| s.rate),
                        limit: None,
                    },
                    Some(i) => Outcome {
                        knee: i.checked_sub(1).map(|k| self.steps[k].rate),
                        limit: Some((self.steps[i].rate, self.steps[i].verdict)),
                    },
                }
            }
            Strategy::FindMax { .. } => {
                let (lo, hi) = bracket(&self.steps);
                Outcome {
                    knee: lo,
                    limit: hi.map(|h| (h.rate, h.verdict)),
                }
            }
        }
    }
}

/// The highest passing rate of `steps` and the lowest non-passing step above it.
fn bracket(steps: &[Probe]) -> (Option<f64>, Option<Probe>) {
    let lo = steps
        .iter()
        .filter(|s| s.verdict == Verdict::Pass)
        .map(|s| s.rate)
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    let hi = steps
        .iter()
        .filter(|s| s.verdict != Verdict::Pass && !matches!(lo, Some(lo) if s.rate <= lo))
        .fold(None, |m: Option<Probe>, s| match m {
            Some(m) if m.rate <= s.rate => Some(m),
            _ => Some(*s),
        });
    (lo, hi)
}

/// The search's next rate on the walk's grid (`low + k × step ≤ high`): `lo` passed,
/// `hi` (when known) did not.
fn on_grid(low: f64, high: f64, step: f64, lo: f64, hi: Option<Probe>) -> Option<f64> {
    let index = |r: f64| ((r - low) / step + EPS).floor();
    let top = index(high);
    let lo_k = index(lo);
    // Above the grid's top: a virtual failing rate, so that the top is run last.
    let hi_k = hi.map_or(top + 1.0, |h| index(h.rate));
    if hi_k - lo_k <= 1.0 {
        return None;
    }
    let k = match hi.and_then(|h| h.estimate) {
        // The highest grid rate the estimate expects to pass; the next one up when it
        // proved low (heavy overload understated the capacity, so the boundary is
        // likely just above `lo`).
        Some(e) => index(e).clamp(lo_k + 1.0, hi_k - 1.0),
        None => ((lo_k + hi_k) / 2.0).floor(),
    };
    Some(low + k * step)
}

/// The search's next rate at `precision` (a fraction): `lo` passed, `hi` (when known)
/// did not. The precision is relative, so the bracket is halved in log space (its
/// geometric middle); on the grid, whose resolution is absolute, in linear space.
fn continuous(high: f64, precision: f64, lo: f64, hi: Option<Probe>) -> Option<f64> {
    let Some(hi) = hi else {
        // Everything passed so far: the (geometric) middle of what is left up to
        // `high`, and `high` itself once the rest is within the precision.
        if lo >= high * (1.0 - EPS) {
            return None;
        }
        if high - lo <= precision * lo + EPS {
            return Some(high);
        }
        return Some(round_inside((lo * high).sqrt(), lo, high));
    };
    if hi.rate - lo <= precision * lo + EPS {
        return None;
    }
    let middle = (lo * hi.rate).sqrt();
    let x = match hi.estimate {
        // Just below the estimate, so that the probe passes and the next one, just
        // above it, closes the bracket; just above `lo` when the estimate says the
        // boundary is right there.
        Some(e) if e >= lo => (e * (1.0 - precision / 2.0)).max(lo * (1.0 + precision)),
        // The estimate proved low (heavy overload understated the capacity): the
        // boundary is likely a little above `lo`; look there before bisecting.
        Some(_) => middle.min(lo * (1.0 + 4.0 * precision)),
        None => middle,
    };
    Some(round_inside(x, lo, hi.rate))
}

/// `x` rounded to a whole rate when the bracket (`lo`, `hi`) is wide enough, and kept
/// strictly inside it.
fn round_inside(x: f64, lo: f64, hi: f64) -> f64 {
    let r = if hi - lo > 4.0 { x.round() } else { x };
    if r > lo && r < hi {
        r
    } else {
        (lo + hi) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A system of known capacity, judged by a 95 % min-achieved rule.
    #[derive(Debug, Clone, Copy)]
    struct Model {
        /// Arrivals per second it sustains.
        capacity: f64,
        /// Under overload by a factor f it achieves capacity × (1 − degrade × (f − 1))
        /// (at least 30 % of it): how much a heavily overloaded step understates it.
        degrade: f64,
        /// Overloaded steps fail on errors (no estimate) instead of on the rate.
        errors: bool,
        /// Above this rate the client cannot keep its schedule.
        client_max: f64,
    }

    impl Model {
        fn server(capacity: f64) -> Model {
            Model {
                capacity,
                degrade: 0.0,
                errors: false,
                client_max: f64::MAX,
            }
        }

        /// What a step at `r` shows: its verdict and estimate, as step.rs makes them.
        fn probe(&self, r: f64) -> (Verdict, Option<f64>) {
            let over = r / self.capacity;
            let mut achieved = if over <= 1.0 {
                r
            } else {
                self.capacity * (1.0 - self.degrade * (over - 1.0)).max(0.3)
            };
            if r > self.client_max {
                achieved = achieved.min(self.client_max);
            }
            let errors = self.errors && over > 1.0;
            let rate_missed = achieved < 0.95 * r;
            if !errors && !rate_missed {
                return (Verdict::Pass, None);
            }
            let verdict = if r > self.client_max {
                Verdict::Client
            } else {
                Verdict::Fail
            };
            (verdict, (rate_missed && !errors).then_some(achieved / 0.95))
        }
    }

    /// Runs a planner against `model`; returns the rates run and the outcome.
    fn simulate(strategy: Strategy, model: Model) -> (Vec<f64>, Outcome) {
        let mut p = Planner::new(strategy);
        let mut rates = Vec::new();
        while let Some(r) = p.next() {
            assert!(rates.len() < 100, "runaway: {rates:?}");
            assert!(!rates.contains(&r), "{r} twice: {rates:?}");
            rates.push(r);
            let (v, e) = model.probe(r);
            p.record(r, v, e);
        }
        (rates, p.outcome())
    }

    /// A server passing every rate ≤ `capacity`, failing above without an estimate
    /// (and whose client gives up above `client_max`).
    fn threshold(capacity: f64, client_max: f64) -> Model {
        Model {
            capacity,
            degrade: 0.0,
            errors: true,
            client_max,
        }
    }

    fn walk(low: f64, high: f64, step: f64, past_knee: u32) -> Strategy {
        Strategy::Walk {
            low,
            high,
            step,
            past_knee,
        }
    }

    fn search(low: f64, high: f64, precision: f64, grid: Option<f64>) -> Strategy {
        Strategy::FindMax {
            low,
            high,
            precision,
            grid,
        }
    }

    #[test]
    fn the_walk_stops_past_the_knee() {
        let (rates, out) = simulate(walk(100.0, 1000.0, 100.0, 2), threshold(350.0, f64::MAX));
        assert_eq!(rates, [100.0, 200.0, 300.0, 400.0, 500.0]);
        assert_eq!(out.knee, Some(300.0));
        assert_eq!(out.limit, Some((400.0, Verdict::Fail)));
        let (rates, _) = simulate(walk(100.0, 1000.0, 100.0, 1), threshold(350.0, f64::MAX));
        assert_eq!(rates, [100.0, 200.0, 300.0, 400.0]);
    }

    #[test]
    fn the_walk_runs_to_high_when_everything_passes() {
        let (rates, out) = simulate(walk(0.1, 0.3, 0.1, 2), threshold(f64::MAX, f64::MAX));
        assert_eq!(rates.len(), 3, "{rates:?}");
        assert_eq!(out.knee, Some(rates[2]));
        assert_eq!(out.limit, None);
    }

    #[test]
    fn a_client_bound_step_is_never_the_knee() {
        let (rates, out) = simulate(walk(100.0, 1000.0, 100.0, 2), threshold(800.0, 250.0));
        assert_eq!(rates, [100.0, 200.0, 300.0, 400.0]);
        assert_eq!(out.knee, Some(200.0));
        assert_eq!(out.limit, Some((300.0, Verdict::Client)));
        let (_, out) = simulate(walk(100.0, 1000.0, 100.0, 2), threshold(50.0, f64::MAX));
        assert_eq!(out.knee, None);
        assert_eq!(out.limit, Some((100.0, Verdict::Fail)));
    }

    /// The sweep of bench/run.sh on this machine: 2000 to 30000 by 2000, the client's capacity
    /// about 14,600 conn/s (so 16000 misses the rate, 14000 passes).
    #[test]
    fn on_the_grid_the_search_finds_the_walks_knee_in_a_third_of_its_runs() {
        let client = Model {
            capacity: 14_600.0,
            degrade: 0.0,
            errors: false,
            client_max: 14_600.0,
        };
        let (walked, by_walk) = simulate(walk(2000.0, 30_000.0, 2000.0, 2), client);
        assert_eq!(walked.len(), 9, "{walked:?}");
        assert_eq!(by_walk.knee, Some(14_000.0));
        let (rates, out) = simulate(search(2000.0, 30_000.0, 0.02, Some(2000.0)), client);
        // L, the middle grid rate (a rate-only miss: achieved ÷ 95 % = 15,368), the
        // highest grid rate below that estimate.
        assert_eq!(rates, [2000.0, 16_000.0, 14_000.0]);
        assert_eq!(out, by_walk);
    }

    /// On the grid the search reports exactly the walk's knee, whatever the capacity,
    /// however much overload understates it, with or without estimates; in few runs.
    #[test]
    fn on_the_grid_the_search_always_agrees_with_the_walk() {
        let (low, high, step) = (100.0, 3000.0, 100.0);
        for degrade in [0.0, 0.1, 0.3] {
            for errors in [false, true] {
                for c in (60..3200).step_by(37) {
                    let model = Model {
                        capacity: c as f64,
                        degrade,
                        errors,
                        client_max: f64::MAX,
                    };
                    let (walked, by_walk) = simulate(walk(low, high, step, 1), model);
                    let (rates, out) = simulate(search(low, high, 0.02, Some(step)), model);
                    assert_eq!(out.knee, by_walk.knee, "{model:?}: {rates:?}");
                    // Binary search over the 30 grid rates: L and ⌈log2 30⌉; estimates
                    // that mislead (a step at 3× the capacity achieving 40 % of it)
                    // cost up to three more.
                    let bound = if degrade == 0.0 || errors {
                        6
                    } else if degrade < 0.2 {
                        7
                    } else {
                        9
                    };
                    assert!(rates.len() <= bound, "{model:?}: {rates:?}");
                    // With exact estimates, at most half the walk's runs when the walk
                    // is long.
                    if !errors && degrade == 0.0 && walked.len() >= 10 {
                        assert!(rates.len() * 2 <= walked.len(), "{rates:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn find_max_bisects_to_the_precision_without_estimates() {
        let strategy = search(50.0, 10_000.0, 0.02, None);
        let (rates, out) = simulate(strategy, threshold(263.0, f64::MAX));
        assert_eq!(rates[0], 50.0);
        // The geometric middle of 50 and 10,000.
        assert_eq!(rates[1], 707.0);
        let knee = out.knee.expect("a knee");
        let (limit, v) = out.limit.expect("a limit");
        assert!(knee <= 263.0 && limit > 263.0, "{knee} {limit}");
        assert!(limit - knee <= 0.02 * knee + 1e-9, "{knee} {limit}");
        assert_eq!(v, Verdict::Fail);
        // ⌈log2(ln(200) / ln(1.02))⌉ = 9 halvings at most, and L.
        assert!(rates.len() <= 10, "{rates:?}");
    }

    #[test]
    fn find_max_jumps_to_the_estimate() {
        // Capacity 240/s: rates up to 252.6 pass.
        let strategy = search(50.0, 10_000.0, 0.02, None);
        let (rates, out) = simulate(strategy, Model::server(240.0));
        let knee = out.knee.expect("a knee");
        let (limit, _) = out.limit.expect("a limit");
        assert!(knee <= 252.7 && limit > 252.6, "{knee} {limit} {rates:?}");
        // The highest passing rate of a model, to 0.01.
        let boundary = |m: Model| {
            (0..100_000)
                .map(|i| f64::from(i) / 100.0)
                .take_while(|&r| m.probe(r).0 == Verdict::Pass)
                .last()
                .expect("passes at 0")
        };
        assert!(limit - knee <= 0.02 * knee + 1e-9, "{knee} {limit}");
        // 50, 707 (misses: estimate 252.6), 250 (just below it), 255 (closes).
        assert_eq!(rates, [50.0, 707.0, 250.0, 255.0]);
        // An estimate understated by a heavily overloaded step costs a few more runs
        // (the safeguard bisects when two steps did not halve the bracket), never the
        // answer.
        for degrade in [0.05, 0.2, 0.5] {
            let model = Model {
                degrade,
                ..Model::server(240.0)
            };
            let (rates, out) = simulate(strategy, model);
            let knee = out.knee.expect("a knee");
            let (limit, _) = out.limit.expect("a limit");
            let b = boundary(model);
            assert!(knee <= b + 0.01 && limit > b, "{degrade} ({b}): {rates:?}");
            assert!(limit - knee <= 0.02 * knee + 1e-9, "{degrade}: {rates:?}");
            assert!(rates.len() <= 12, "{degrade}: {rates:?}");
        }
    }

    #[test]
    fn find_max_edges() {
        let s = |low, high| search(low, high, 0.02, None);
        let (rates, out) = simulate(s(50.0, 300.0), threshold(f64::MAX, f64::MAX));
        assert_eq!(*rates.last().expect("rates"), 300.0, "{rates:?}");
        // L, ⌈log2(ln 6 / ln 1.02)⌉ = 7 halvings of the log distance to H, and H.
        assert!(rates.len() <= 9, "{rates:?}");
        assert_eq!(
            out,
            Outcome {
                knee: Some(300.0),
                limit: None
            }
        );
        let (rates, out) = simulate(s(50.0, 300.0), threshold(10.0, f64::MAX));
        assert_eq!(rates, [50.0]);
        assert_eq!(
            out,
            Outcome {
                knee: None,
                limit: Some((50.0, Verdict::Fail))
            }
        );
        // Fractional rates below a few per second still converge.
        let (rates, out) = simulate(s(0.5, 100.0), threshold(2.3, f64::MAX));
        let knee = out.knee.expect("knee");
        assert!((2.3 / 1.03..=2.3).contains(&knee), "{knee} {rates:?}");
        // On a grid whose top is not a multiple of the step, the top grid rate is the
        // last one run.
        let (rates, out) = simulate(
            search(100.0, 350.0, 0.02, Some(100.0)),
            threshold(f64::MAX, f64::MAX),
        );
        assert_eq!(rates, [100.0, 200.0, 300.0]);
        assert_eq!(out.knee, Some(300.0));
        // A client-bound limit stays the client's.
        let (_, out) = simulate(
            search(100.0, 1000.0, 0.02, Some(100.0)),
            threshold(800.0, 250.0),
        );
        assert_eq!(out.knee, Some(200.0));
        assert_eq!(out.limit, Some((300.0, Verdict::Client)));
    }
}
