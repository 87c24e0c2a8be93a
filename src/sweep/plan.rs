//! Which rate a sweep runs next, and what its results mean.
//!
//! Owns the two strategies: the walk (L, L+S, … up to H, stopping `--past-knee`
//! non-passing steps after the first one) and the search (`--find-max`: double from L
//! until a step does not pass, capped at H, then bisect between the highest passing and
//! the lowest non-passing rate until they are `--precision` % apart), and the outcome:
//! the knee (the highest passing rate below the first non-passing one) and the step
//! that limited it. Pure: the caller runs the steps and reports their verdicts.

/// What a step's run showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every criterion held.
    Pass,
    /// The server missed a criterion (rate, errors or an SLO).
    Fail,
    /// A criterion was missed while the client did not keep its schedule: the step
    /// says nothing about the server.
    Client,
}

impl Verdict {
    /// The name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Client => "client",
        }
    }
}

/// How the rates are chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Strategy {
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
    /// Double from `low` (capped at `high`) until a step does not pass, then bisect.
    FindMax {
        /// First rate.
        low: f64,
        /// Highest rate.
        high: f64,
        /// Stop when the bracket is this fraction of its low end (0.02 = 2 %).
        precision: f64,
    },
}

/// The result of a sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// The knee: the highest passing rate below the limiting step (None when the first
    /// step did not pass).
    pub knee: Option<f64>,
    /// The step that limited the knee: its rate and verdict (None when no step above the
    /// knee was run or every step passed).
    pub limit: Option<(f64, Verdict)>,
}

/// The state of a sweep.
#[derive(Debug, Clone)]
pub struct Planner {
    strategy: Strategy,
    /// Every step so far, in order: (rate, verdict).
    steps: Vec<(f64, Verdict)>,
}

/// Tolerance for comparing rates built by repeated addition.
const EPS: f64 = 1e-9;

impl Planner {
    /// A planner for `strategy`.
    pub fn new(strategy: Strategy) -> Planner {
        Planner {
            strategy,
            steps: Vec::new(),
        }
    }

    /// Records the verdict of the step at `rate`.
    pub fn record(&mut self, rate: f64, verdict: Verdict) {
        self.steps.push((rate, verdict));
    }

    /// The highest passing rate and the lowest non-passing one above it (search only).
    fn bracket(&self) -> (Option<f64>, Option<f64>) {
        let lo = self
            .steps
            .iter()
            .filter(|s| s.1 == Verdict::Pass)
            .map(|s| s.0)
            .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
        let hi = self
            .steps
            .iter()
            .filter(|s| s.1 != Verdict::Pass && !matches!(lo, Some(lo) if s.0 <= lo))
            .map(|s| s.0)
            .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.min(r))));
        (lo, hi)
    }

    /// The next rate to run, or None when the sweep is over.
    pub fn next(&self) -> Option<f64> {
        match self.strategy {
            Strategy::Walk {
                low,
                high,
                step,
                past_knee,
            } => {
                let failing = self.steps.iter().filter(|s| s.1 != Verdict::Pass).count();
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
            } => {
                let Some(&(last, _)) = self.steps.last() else {
                    return Some(low);
                };
                match self.bracket() {
                    // The first step did not pass: nothing to search.
                    (None, _) => None,
                    // Still growing.
                    (Some(lo), None) => (lo < high).then(|| (lo * 2.0).min(high)),
                    (Some(lo), Some(hi)) => {
                        if hi - lo <= precision * lo + EPS {
                            return None;
                        }
                        let mid = (lo + hi) / 2.0;
                        let mid = if hi - lo > 4.0 { mid.round() } else { mid };
                        (mid > lo && mid < hi && mid != last).then_some(mid)
                    }
                }
            }
        }
    }

    /// The knee and what limited it.
    pub fn outcome(&self) -> Outcome {
        match self.strategy {
            Strategy::Walk { .. } => {
                let first_bad = self.steps.iter().position(|s| s.1 != Verdict::Pass);
                match first_bad {
                    None => Outcome {
                        knee: self.steps.last().map(|s| s.0),
                        limit: None,
                    },
                    Some(i) => Outcome {
                        knee: i.checked_sub(1).map(|k| self.steps[k].0),
                        limit: Some(self.steps[i]),
                    },
                }
            }
            Strategy::FindMax { .. } => {
                let (lo, hi) = self.bracket();
                let limit = hi.and_then(|h| self.steps.iter().find(|s| s.0 == h).copied());
                Outcome { knee: lo, limit }
            }
        }
    }

    /// Number of steps recorded.
    pub fn steps(&self) -> usize {
        self.steps.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a planner against a server that passes every rate ≤ `capacity` (and whose
    /// client gives up above `client_max`); returns the rates run and the outcome.
    fn simulate(strategy: Strategy, capacity: f64, client_max: f64) -> (Vec<f64>, Outcome) {
        let mut p = Planner::new(strategy);
        let mut rates = Vec::new();
        while let Some(r) = p.next() {
            assert!(rates.len() < 100, "runaway: {rates:?}");
            rates.push(r);
            let v = if r > client_max {
                Verdict::Client
            } else if r > capacity {
                Verdict::Fail
            } else {
                Verdict::Pass
            };
            p.record(r, v);
        }
        (rates, p.outcome())
    }

    fn walk(low: f64, high: f64, step: f64, past_knee: u32) -> Strategy {
        Strategy::Walk {
            low,
            high,
            step,
            past_knee,
        }
    }

    #[test]
    fn the_walk_stops_past_the_knee() {
        let (rates, out) = simulate(walk(100.0, 1000.0, 100.0, 2), 350.0, f64::MAX);
        assert_eq!(rates, [100.0, 200.0, 300.0, 400.0, 500.0]);
        assert_eq!(out.knee, Some(300.0));
        assert_eq!(out.limit, Some((400.0, Verdict::Fail)));
        let (rates, _) = simulate(walk(100.0, 1000.0, 100.0, 1), 350.0, f64::MAX);
        assert_eq!(rates, [100.0, 200.0, 300.0, 400.0]);
    }

    #[test]
    fn the_walk_runs_to_high_when_everything_passes() {
        let (rates, out) = simulate(walk(0.1, 0.3, 0.1, 2), f64::MAX, f64::MAX);
        assert_eq!(rates.len(), 3, "{rates:?}");
        assert_eq!(out.knee, Some(rates[2]));
        assert_eq!(out.limit, None);
    }

    #[test]
    fn a_client_bound_step_is_never_the_knee() {
        let (rates, out) = simulate(walk(100.0, 1000.0, 100.0, 2), 800.0, 250.0);
        assert_eq!(rates, [100.0, 200.0, 300.0, 400.0]);
        assert_eq!(out.knee, Some(200.0));
        assert_eq!(out.limit, Some((300.0, Verdict::Client)));
        let (_, out) = simulate(walk(100.0, 1000.0, 100.0, 2), 50.0, f64::MAX);
        assert_eq!(out.knee, None);
        assert_eq!(out.limit, Some((100.0, Verdict::Fail)));
    }

    #[test]
    fn find_max_grows_then_bisects_to_the_precision() {
        let strategy = Strategy::FindMax {
            low: 50.0,
            high: 10_000.0,
            precision: 0.02,
        };
        let (rates, out) = simulate(strategy, 263.0, f64::MAX);
        assert_eq!(&rates[..4], [50.0, 100.0, 200.0, 400.0]);
        let knee = out.knee.expect("a knee");
        let (limit, v) = out.limit.expect("a limit");
        assert!(knee <= 263.0 && limit > 263.0, "{knee} {limit}");
        assert!(limit - knee <= 0.02 * knee + 1e-9, "{knee} {limit}");
        assert_eq!(v, Verdict::Fail);
        // Far fewer runs than a walk of 50-unit steps would need.
        assert!(rates.len() <= 10, "{rates:?}");
    }

    #[test]
    fn find_max_edges() {
        let s = |low, high| Strategy::FindMax {
            low,
            high,
            precision: 0.02,
        };
        let (rates, out) = simulate(s(50.0, 300.0), f64::MAX, f64::MAX);
        assert_eq!(rates, [50.0, 100.0, 200.0, 300.0]);
        assert_eq!(
            out,
            Outcome {
                knee: Some(300.0),
                limit: None
            }
        );
        let (rates, out) = simulate(s(50.0, 300.0), 10.0, f64::MAX);
        assert_eq!(rates, [50.0]);
        assert_eq!(
            out,
            Outcome {
                knee: None,
                limit: Some((50.0, Verdict::Fail))
            }
        );
        // Fractional rates below a few per second still converge.
        let (rates, out) = simulate(s(0.5, 100.0), 2.3, f64::MAX);
        let knee = out.knee.expect("knee");
        assert!((2.3 / 1.03..=2.3).contains(&knee), "{knee} {rates:?}");
    }
}
