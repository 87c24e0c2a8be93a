//! The statistics of one compared figure: from each side's per-run data to the point
//! estimates, the change, its confidence interval and its p-value. Knows nothing of
//! which figure it is: names, units and directions are `model::compare`'s, the
//! special functions `model::significance`'s. Pure; called by `model::compare` (and
//! the simulations of `estimate_sim`).
//!
//! The method (docs/compare.md, "The method", has the argument and references):
//!
//! * **Within a run**, samples are dependent (a busy moment slows all calls in it),
//!   so the run's sampling noise is estimated from its windows (`stats::windows`,
//!   100 ms and up) taken as batches: the ratio estimator Σy/Σx over batches with its
//!   linearised variance, k/(k−1) Σ(yⱼ − R xⱼ)² / (Σx)² (Cochran 1977, §6.4; batch
//!   means: Schmeiser 1982), inflated for the first-order autocorrelation ρ between
//!   neighbouring batches by (1 + ρ)/(1 − ρ), with k(1 − ρ)/(1 + ρ) effective batches
//!   (Bayley & Hammersley 1946). Rates are replies per second of windows, the error
//!   rate errors per connection of windows, the client CPU per reply is a ratio over
//!   runs.
//! * **Quantiles** are the whole-run histogram's; their noise is Woodruff's (1952):
//!   the variance of the proportion of values at or below the quantile, from the
//!   batches as above, carried to the quantile through the whole histogram's quantile
//!   function: se(ln x̂) = ln(Q(q + z·se) / Q(q − z·se)) / 2z with z = 1.96
//!   (Francisco & Fuller 1991; Sitter & Wu 2001).
//! * **Between runs**, two runs of the same build differ by more than their windows
//!   show (the machine's state over a whole run); a run-noise variance τ² per run is
//!   added: the largest of the one declared (`--run-noise`) and the one the runs
//!   show when a side has several (their spread beyond their windows' noise).
//! * **The change** is tested as ln(new) − ln(base) (new − base when a value is 0 or
//!   counts fewer than `MIN_EVENTS` events) with Student's t and Welch–Satterthwaite
//!   degrees of freedom; the printed change is new/base − 1 of the printed values
//!   exactly, and the interval is the test's, mapped back to %.
//!
//! An interval the data cannot support is an `Na` with its reason, never a number.

use crate::model::significance::{t_cdf, t_quantile};

/// Fewest batches (non-empty windows) a side needs for a variance.
pub(crate) const MIN_BATCHES: usize = 10;

/// Fewest runs a side needs when the runs are the batches (client CPU per reply).
pub(crate) const MIN_RUNS: usize = 3;

/// Fewest values a quantile needs above it (n·(1 − q)) on each side.
pub(crate) const MIN_TAIL: f64 = 10.0;

/// Fewest events (errors, connections, replies) a count figure needs on each side for
/// a relative interval.
pub(crate) const MIN_EVENTS: u64 = 10;

/// Fewest resolution steps a quantile's Woodruff interval is taken to span: a
/// narrower one is the histogram's quantisation, and the noise is taken to be that
/// wide (conservative).
pub(crate) const MIN_STEPS: f64 = 4.0;

/// The coarsest resolution, relative to the quantile, a relative change is read at
/// (a quantile of a few µs, resolved to 1 µs, is quantised).
pub(crate) const MAX_RESOLUTION: f64 = 0.02;

/// Fewest degrees of freedom an interval is printed with: below, Student's t at the
/// verdict's level is in the tens or hundreds (t(0.9992, 1) = 398) and the
/// Welch–Satterthwaite approximation is poor.
pub(crate) const MIN_DF: f64 = 2.0;

/// The widest interval printed, as the ratio of its ends' factors (new/base): an
/// interval that spans more says only that the data cannot tell.
pub(crate) const MAX_SPREAD: f64 = 10.0;

/// Woodruff's multiplier: the span of the quantile function the standard error is
/// read from.
const WOODRUFF_Z: f64 = 1.959_964;

/// The largest first-order autocorrelation between batches the correction takes.
const MAX_RHO: f64 = 0.8;

/// Why there is no interval (or no test) for a figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Na {
    /// A side has no value at all.
    NoData,
    /// Too few batches, runs or events: how many, of what.
    TooFew(u64, &'static str),
    /// Events (of what) in too few batches: how many batches.
    Spread(u64, &'static str),
    /// Too few values above a quantile (n·(1 − q)).
    Tail(f64),
    /// The quantile is too small for the histogram's resolution (a few µs).
    Quantised,
    /// The base value is 0: no relative change.
    Zero,
    /// Every batch says the same: no noise to test against.
    NoVariation,
    /// Too few degrees of freedom (`MIN_DF`): how many effective batches or runs, of
    /// what.
    Effective(u64, &'static str),
    /// The interval spans more than a factor `MAX_SPREAD`.
    Wide,
}

impl Na {
    /// As printed in the interval column: `n/a: 3 windows`.
    pub(crate) fn text(self) -> String {
        match self {
            Na::NoData => "n/a: no data".to_string(),
            Na::TooFew(n, what) => format!("n/a: {n} {}", singular(n, what)),
            Na::Spread(n, what) => format!("n/a: {what} in {n} {}", singular(n, "windows")),
            Na::Tail(above) => {
                let n = above.floor() as u64;
                let s = if n == 1 { "" } else { "s" };
                format!("n/a: {n} value{s} above")
            }
            Na::Quantised => "n/a: quantised".to_string(),
            Na::Zero => "n/a: base 0".to_string(),
            Na::NoVariation => "n/a: no variation".to_string(),
            Na::Effective(n, "runs") => format!("n/a: {n} {}", singular(n, "runs")),
            Na::Effective(n, what) => format!("n/a: {n} effective {}", singular(n, what)),
            Na::Wide => format!("n/a: wider than ×{MAX_SPREAD}"),
        }
    }
}

/// The events a count figure counts: how many, in how many batches, of what.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Events {
    /// Events counted.
    pub(crate) count: u64,
    /// Batches that hold at least one.
    pub(crate) batches: u64,
    /// What they are (`errors`, `replies`, `connections`).
    pub(crate) what: &'static str,
}

/// `what` (a plural noun) for `n` of them: `1 run`, `3 runs`.
fn singular(n: u64, what: &str) -> String {
    match (n, what.strip_suffix('s')) {
        (1, Some(one)) => one.to_string(),
        _ => what.to_string(),
    }
}

/// The noise of a side's value estimated from within its runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Within {
    /// Variance of the value.
    pub(crate) var: f64,
    /// Its degrees of freedom.
    pub(crate) df: f64,
    /// What its batches are (`windows`, `seconds`, `runs`).
    pub(crate) what: &'static str,
}

/// What one side (a group of runs, pooled) says about a figure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Side {
    /// The pooled value, as printed (NaN: no data).
    pub(crate) value: f64,
    /// Events behind the value, for count figures (errors); None for others.
    pub(crate) events: Option<Events>,
    /// Its within-run noise, or why there is none.
    pub(crate) within: Result<Within, Na>,
    /// Each run alone: (value, within-run variance); the run-noise estimate uses them.
    pub(crate) runs: Vec<Option<(f64, f64)>>,
    /// Whether `within` already holds the run-to-run noise (the runs are the batches).
    pub(crate) noise_in_within: bool,
}

/// One run's batches of a ratio figure, in time order: (denominator, numerator) each.
pub(crate) type Batches = Vec<(f64, f64)>;

/// The ratio estimate over batches (of several runs: none spans two runs): the
/// ratio, the variance of the ratio corrected for the autocorrelation between
/// neighbouring batches when `ordered`, and the effective number of batches.
/// None with fewer than two non-empty batches.
fn ratio_variance(runs: &[&[(f64, f64)]], ordered: bool) -> Option<(f64, f64, f64)> {
    let (sx, sy) = runs
        .iter()
        .flat_map(|r| r.iter())
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    let k = runs
        .iter()
        .flat_map(|r| r.iter())
        .filter(|b| b.0 > 0.0)
        .count();
    if k < 2 || sx <= 0.0 {
        return None;
    }
    let r = sy / sx;
    let (mut ss, mut lag) = (0.0, 0.0);
    for run in runs {
        let res: Vec<f64> = run
            .iter()
            .filter(|b| b.0 > 0.0)
            .map(|&(x, y)| y - r * x)
            .collect();
        ss += res.iter().map(|e| e * e).sum::<f64>();
        lag += res.windows(2).map(|w| w[0] * w[1]).sum::<f64>();
    }
    let k = k as f64;
    let var = k / (k - 1.0) * ss / (sx * sx);
    let rho = if ordered && ss > 0.0 {
        // The lag-1 autocorrelation estimate is biased low by about (1 + 3ρ)/k
        // (Marriott & Pope 1954): corrected, then kept in [0, MAX_RHO].
        let raw = lag / ss;
        ((raw + 1.0 / k) / (1.0 - 3.0 / k).max(0.1)).clamp(0.0, MAX_RHO)
    } else {
        0.0
    };
    let inflation = (1.0 + rho) / (1.0 - rho);
    Some((r, var * inflation, k / inflation))
}

/// The within-run noise of a ratio figure whose pooled value is `value` (the
/// whole-run figure, as printed; Σy/Σx of the batches or close to it): `runs` are the
/// batches of each run, `what` names a batch in reasons (`windows`, `runs`), `min`
/// is the fewest non-empty batches it takes, `ordered` whether batches follow each
/// other in time (windows) rather than being independent (runs).
pub(crate) fn ratio_within(
    runs: &[&[(f64, f64)]],
    value: f64,
    what: &'static str,
    min: usize,
    ordered: bool,
) -> Result<Within, Na> {
    let k = runs
        .iter()
        .flat_map(|r| r.iter())
        .filter(|b| b.0 > 0.0)
        .count();
    if k < min {
        return Err(Na::TooFew(k as u64, what));
    }
    let (r, var, k_eff) = ratio_variance(runs, ordered).ok_or(Na::TooFew(k as u64, what))?;
    // The variance is the batches' ratio's; the value printed may differ from it by
    // the run's edges (its duration against its windows'): the same relative noise.
    let var = if r > 0.0 && value.is_finite() {
        var * (value / r).powi(2)
    } else {
        var
    };
    Ok(Within {
        var,
        df: (k_eff - 1.0).max(1.0),
        what,
    })
}

/// What the quantile estimator needs of a histogram figure of one run, or of a
/// side's runs pooled.
pub(crate) trait Batched {
    /// The value at probability `p` of the whole histogram (the printed quantile at
    /// `p = q`), in the figure's unit.
    fn quantile(&self, p: f64) -> f64;
    /// Values recorded.
    fn count(&self) -> u64;
    /// Each run's batches, in time order: (values, values at or below `x`) each.
    fn batches_below(&self, x: f64) -> Vec<Batches>;
    /// The distance below which the histogram cannot tell values apart near `x`.
    fn resolution(&self, x: f64) -> f64;
    /// What a batch is, in reasons (`windows`, `seconds`).
    fn batch_name(&self) -> &'static str;
    /// Each run's batches joined into consecutive groups of `min_above` values above
    /// the `q` quantile or more (the last group takes what is left): each group's `q`
    /// quantile.
    fn group_quantiles(&self, q: f64, min_above: f64) -> Vec<Vec<f64>>;
}

/// The within-run noise of the `q` quantile of `h` (Woodruff's, over batches).
pub(crate) fn quantile_within(h: &dyn Batched, q: f64) -> Result<Within, Na> {
    let n = h.count();
    if n == 0 {
        return Err(Na::NoData);
    }
    let x = h.quantile(q);
    if x <= 0.0 {
        return Err(Na::Quantised);
    }
    let above = n as f64 * (1.0 - q);
    if above < MIN_TAIL {
        return Err(Na::Tail(above));
    }
    let batches = h.batches_below(x);
    let refs: Vec<&[(f64, f64)]> = batches.iter().map(Vec::as_slice).collect();
    let k = refs
        .iter()
        .flat_map(|r| r.iter())
        .filter(|b| b.0 > 0.0)
        .count();
    if k < MIN_BATCHES {
        return Err(Na::TooFew(k as u64, h.batch_name()));
    }
    let (_, var_f, k_eff) =
        ratio_variance(&refs, true).ok_or(Na::TooFew(k as u64, h.batch_name()))?;
    if var_f <= 0.0 {
        return Err(Na::NoVariation);
    }
    let resolution = h.resolution(x);
    if resolution > MAX_RESOLUTION * x {
        return Err(Na::Quantised);
    }
    let span = WOODRUFF_Z * var_f.sqrt();
    if q + span >= 1.0 || q - span <= 0.0 {
        // The proportion below the quantile swings too much between windows for
        // Woodruff's linearisation (values packed tightly around a level that moves):
        // the spread of the quantiles of groups of windows instead.
        return sectioned(h, q, x).ok_or(Na::Tail(above));
    }
    let (lo, hi) = (h.quantile((q - span).max(0.0)), h.quantile(q + span));
    if lo <= 0.0 {
        return Err(Na::Quantised);
    }
    let steps = MIN_STEPS * resolution;
    let (lo, hi) = if hi - lo < steps {
        (x - steps / 2.0, x + steps / 2.0)
    } else {
        (lo, hi)
    };
    let se_log = (hi / lo).ln() / (2.0 * WOODRUFF_Z);
    Ok(Within {
        var: (x * se_log).powi(2),
        df: (k_eff - 1.0).max(1.0),
        what: h.batch_name(),
    })
}

/// Fewest groups of windows `sectioned` takes.
pub(crate) const MIN_GROUPS: usize = 5;

/// The within-run noise of the `q` quantile `x` of `h` from the quantiles of groups
/// of consecutive windows, each holding `MIN_TAIL` values above the quantile or more
/// (sectioning: Heidelberger & Lewis 1984): the variance of their logarithms over
/// their number, corrected for autocorrelation as batches are. None with fewer than
/// `MIN_GROUPS` groups.
fn sectioned(h: &dyn Batched, q: f64, x: f64) -> Option<Within> {
    let groups = h.group_quantiles(q, MIN_TAIL);
    let logs: Vec<Vec<(f64, f64)>> = groups
        .iter()
        .map(|g| {
            g.iter()
                .filter(|v| **v > 0.0)
                .map(|v| (1.0, v.ln()))
                .collect()
        })
        .collect();
    let refs: Vec<&[(f64, f64)]> = logs.iter().map(Vec::as_slice).collect();
    let k: usize = refs.iter().map(|r| r.len()).sum();
    if k < MIN_GROUPS {
        return None;
    }
    let (_, var_log, k_eff) = ratio_variance(&refs, true)?;
    Some(Within {
        var: x * x * var_log,
        df: (k_eff - 1.0).max(1.0),
        what: h.batch_name(),
    })
}

/// The test of a change: the difference `d` (of logarithms when `log`), its
/// standard error and degrees of freedom, and the base value (for linear intervals).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stat {
    /// ln(new) − ln(base), or new − base.
    pub(crate) d: f64,
    /// Its standard error.
    pub(crate) se: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub(crate) df: f64,
    /// Whether `d` is a difference of logarithms.
    pub(crate) log: bool,
    /// The base value.
    pub(crate) base: f64,
    /// Why no interval can be printed: a linear test of a count figure with too few
    /// events, or of a base of 0; too few degrees of freedom.
    pub(crate) no_interval: Option<Na>,
    /// The run-to-run noise the test allowed for (relative standard deviation of a
    /// run's figure).
    pub(crate) run_noise: f64,
    /// Whether that noise is the runs' own (a side had several) rather than declared.
    pub(crate) noise_estimated: bool,
}

impl Stat {
    /// The two-sided p-value of "no change".
    pub(crate) fn p(&self) -> f64 {
        if self.se <= 0.0 {
            return if self.d == 0.0 { 1.0 } else { 0.0 };
        }
        (2.0 * (1.0 - t_cdf((self.d / self.se).abs(), self.df))).clamp(0.0, 1.0)
    }

    /// The interval of the change in % at level 1 − `alpha`; none wider than a
    /// factor `MAX_SPREAD` end to end.
    pub(crate) fn ci(&self, alpha: f64) -> Result<(f64, f64), Na> {
        if let Some(na) = self.no_interval {
            return Err(na);
        }
        let half = t_quantile(1.0 - alpha / 2.0, self.df) * self.se;
        let (lo, hi) = (self.d - half, self.d + half);
        if self.log {
            if 2.0 * half > MAX_SPREAD.ln() {
                return Err(Na::Wide);
            }
            Ok((100.0 * lo.exp_m1(), 100.0 * hi.exp_m1()))
        } else if self.base > 0.0 {
            Ok((100.0 * lo / self.base, 100.0 * hi / self.base))
        } else {
            Err(Na::Zero)
        }
    }
}

/// The comparison of one figure: the change of the printed values, and its test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Change {
    /// 100 (new/base − 1) of the values as printed; None when the base is 0 or a
    /// side has no value.
    pub(crate) pct: Option<f64>,
    /// The test, or why there is none.
    pub(crate) stat: Result<Stat, Na>,
}

impl Change {
    /// The p-value, when tested.
    pub(crate) fn p(&self) -> Option<f64> {
        self.stat.ok().map(|s| s.p())
    }

    /// Whether the change is significant at level `alpha`.
    pub(crate) fn significant(&self, alpha: f64) -> bool {
        self.p().is_some_and(|p| p < alpha)
    }

    /// The interval at level 1 − `alpha`, or why there is none.
    pub(crate) fn ci(&self, alpha: f64) -> Result<(f64, f64), Na> {
        self.stat.and_then(|s| s.ci(alpha))
    }

    /// The sign of the change: +1 up, −1 down, 0 none.
    pub(crate) fn direction(&self) -> f64 {
        match (self.pct, self.stat) {
            (Some(p), _) if p != 0.0 => p.signum(),
            (_, Ok(s)) if s.d != 0.0 => s.d.signum(),
            _ => 0.0,
        }
    }
}

/// The run-noise variance the runs show (on the log scale) beyond their windows'
/// noise, with its degrees of freedom: from the sides with two runs or more, the
/// pooled variance of their runs' logarithms about their side's mean, less the
/// runs' mean within-run variance (a moment estimator, as DerSimonian & Laird
/// 1986). None when no side has two runs with values.
pub(crate) fn run_noise_estimate(sides: [&Side; 2]) -> Option<(f64, f64)> {
    let (mut ss, mut df, mut within, mut n) = (0.0, 0.0, 0.0, 0.0);
    for side in sides {
        let logs: Vec<(f64, f64)> = side
            .runs
            .iter()
            .flatten()
            .filter(|(v, _)| *v > 0.0)
            .map(|&(v, var)| (v.ln(), var / (v * v)))
            .collect();
        if logs.len() < 2 {
            continue;
        }
        let mean = logs.iter().map(|l| l.0).sum::<f64>() / logs.len() as f64;
        ss += logs.iter().map(|l| (l.0 - mean).powi(2)).sum::<f64>();
        df += logs.len() as f64 - 1.0;
        within += logs.iter().map(|l| l.1).sum::<f64>();
        n += logs.len() as f64;
    }
    (df > 0.0).then(|| ((ss / df - within / n).max(0.0), df))
}

/// Compares `new` against `base`; `noise` is the declared run-to-run standard
/// deviation (relative: 0.02 is 2 %) of one run's figure.
pub(crate) fn change(base: &Side, new: &Side, noise: f64) -> Change {
    let (vb, vn) = (base.value, new.value);
    let pct = (vb.is_finite() && vn.is_finite() && vb > 0.0).then(|| 100.0 * (vn / vb - 1.0));
    Change {
        pct,
        stat: stat(base, new, noise),
    }
}

/// The test of `change`.
fn stat(base: &Side, new: &Side, noise: f64) -> Result<Stat, Na> {
    let (vb, vn) = (base.value, new.value);
    if !vb.is_finite() || !vn.is_finite() {
        return Err(Na::NoData);
    }
    let (wb, wn) = (base.within?, new.within?);
    // A count with few events, or events in few batches (connections opened at the
    // start), has no variance the batches can show: tested on its difference, with
    // no relative interval.
    let few = [base.events, new.events]
        .into_iter()
        .flatten()
        .find_map(|e| {
            if e.count < MIN_EVENTS {
                Some(Na::TooFew(e.count, e.what))
            } else if e.batches < (MIN_BATCHES / 2) as u64 {
                Some(Na::Spread(e.batches, e.what))
            } else {
                None
            }
        });
    let log = vb > 0.0 && vn > 0.0 && few.is_none();
    let (mb, mn) = (base.runs.len().max(1) as f64, new.runs.len().max(1) as f64);
    let (d, cb, cn, tau_scale) = if log {
        let tau = 1.0 / mb + 1.0 / mn;
        (
            vn.ln() - vb.ln(),
            wb.var / (vb * vb),
            wn.var / (vn * vn),
            tau,
        )
    } else {
        let tau = vb * vb / mb + vn * vn / mn;
        (vn - vb, wb.var, wn.var, tau)
    };
    let declared = if base.noise_in_within && new.noise_in_within {
        0.0
    } else {
        noise * noise
    };
    let (tau2, tau_df, noise_estimated) = match run_noise_estimate([base, new]) {
        Some((est, df)) if est > declared => (est, df, true),
        _ => (declared, f64::INFINITY, false),
    };
    let run_noise = tau2.sqrt();
    let ct = tau2 * tau_scale;
    let var = cb + cn + ct;
    let no_interval = if log {
        None
    } else if let Some(na) = few {
        Some(na)
    } else {
        (vb <= 0.0).then_some(Na::Zero)
    };
    if var <= 0.0 {
        return if d == 0.0 {
            Ok(Stat {
                d,
                se: 0.0,
                df: f64::INFINITY,
                log,
                base: vb,
                no_interval: Some(Na::NoVariation),
                run_noise,
                noise_estimated,
            })
        } else {
            Err(Na::NoVariation)
        };
    }
    let part = |c: f64, df: f64| if df.is_finite() { c * c / df } else { 0.0 };
    let parts = [part(cb, wb.df), part(cn, wn.df), part(ct, tau_df)];
    let denom: f64 = parts.iter().sum();
    let df = if denom > 0.0 {
        var * var / denom
    } else {
        f64::INFINITY
    };
    // Too few degrees of freedom for an interval: named by the part that has most of
    // the variance's uncertainty (a side's batches, or the runs the noise is from).
    let no_interval = no_interval.or_else(|| {
        (df < MIN_DF).then(|| {
            let most = (0..3)
                .max_by(|&i, &j| parts[i].total_cmp(&parts[j]))
                .unwrap_or(0);
            let effective = |w: Within| Na::Effective((w.df + 1.0).round() as u64, w.what);
            match most {
                0 => effective(wb),
                1 => effective(wn),
                _ => Na::Effective((base.runs.len() + new.runs.len()) as u64, "runs"),
            }
        })
    });
    Ok(Stat {
        d,
        se: var.sqrt(),
        df,
        log,
        base: vb,
        no_interval,
        run_noise,
        noise_estimated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(value: f64, var: f64, df: f64, runs: usize) -> Side {
        Side {
            value,
            events: None,
            within: Ok(Within {
                var,
                df,
                what: "windows",
            }),
            runs: vec![Some((value, var)); runs],
            noise_in_within: false,
        }
    }

    #[test]
    fn the_change_is_the_printed_values_ratio_and_the_interval_is_the_tests() {
        // 2.000 → 2.200 ms, each side's value known to 1 % (var of ln = 1e-4).
        let (b, n) = (side(2.0, 4e-4, 29.0, 1), side(2.2, 4.84e-4, 29.0, 1));
        let c = change(&b, &n, 0.0);
        assert_eq!(c.pct, Some(100.0 * (2.2 / 2.0 - 1.0)));
        let s = c.stat.expect("tested");
        assert!(s.log);
        assert!((s.d - (2.2f64 / 2.0).ln()).abs() < 1e-12);
        assert!((s.se - (2e-4f64).sqrt()).abs() < 1e-12);
        // Equal variances and df: Welch's df is the sum, 58.
        assert!((s.df - 58.0).abs() < 1e-9, "{}", s.df);
        let (lo, hi) = c.ci(0.01).expect("interval");
        let half = t_quantile(0.995, 58.0) * s.se;
        assert!((lo - 100.0 * (s.d - half).exp_m1()).abs() < 1e-9);
        assert!((hi - 100.0 * (s.d + half).exp_m1()).abs() < 1e-9);
        assert!(lo > 0.0 && c.significant(0.01) && c.direction() == 1.0);
        // A declared run noise of 5 % swamps it.
        let c = change(&b, &n, 0.05);
        assert!(!c.significant(0.01), "{:?}", c.p());
        // Its variance is known (declared): more degrees of freedom than the windows'.
        assert!(c.stat.expect("tested").df > 58.0);
    }

    #[test]
    fn runs_that_differ_more_than_their_windows_raise_the_run_noise() {
        // Three base runs 10 % apart with tight windows: the run noise is theirs.
        let mut b = side(2.0, 1e-6, 29.0, 0);
        b.runs = vec![Some((1.8, 1e-6)), Some((2.0, 1e-6)), Some((2.2, 1e-6))];
        let n = side(2.3, 1e-6, 29.0, 1);
        let (tau2, df) = run_noise_estimate([&b, &n]).expect("three runs");
        let logs = [1.8f64.ln(), 2.0f64.ln(), 2.2f64.ln()];
        let mean = logs.iter().sum::<f64>() / 3.0;
        let s2 = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 2.0;
        let within = (1e-6 / 3.24 + 1e-6 / 4.0 + 1e-6 / 4.84) / 3.0;
        assert!((tau2 - (s2 - within)).abs() < 1e-12 && df == 2.0);
        let c = change(&b, &n, 0.01);
        let s = c.stat.expect("tested");
        assert!(s.df < 3.0, "{}", s.df);
        assert!(!c.significant(0.01), "+15 % against runs 10 % apart");
        // One run a side: nothing to estimate.
        assert_eq!(run_noise_estimate([&n, &n]), None);
    }

    #[test]
    fn zero_values_and_few_events_are_tested_without_a_relative_interval() {
        let mut b = side(0.0, 0.0, 29.0, 1);
        b.events = Some(Events {
            count: 0,
            batches: 0,
            what: "errors",
        });
        let mut n = side(0.5, 0.01, 29.0, 1);
        n.events = Some(Events {
            count: 12,
            batches: 9,
            what: "errors",
        });
        let c = change(&b, &n, 0.02);
        assert_eq!(c.pct, None);
        let s = c.stat.expect("tested");
        assert!(!s.log && s.d == 0.5);
        assert_eq!(c.ci(0.01), Err(Na::TooFew(0, "errors")));
        assert!(c.significant(0.01), "{:?}", c.p());
        // No errors on either side: no change, for certain, and no interval.
        let none = change(&b, &b, 0.02);
        assert_eq!(none.p(), Some(1.0));
        assert_eq!(none.ci(0.01), Err(Na::NoVariation));
        assert_eq!(none.direction(), 0.0);
        // A side without data: not tested.
        let empty = side(f64::NAN, 0.0, 1.0, 1);
        assert_eq!(change(&empty, &n, 0.0).stat, Err(Na::NoData));
        // A side whose noise is unknown: its reason.
        let mut short = side(2.0, 0.0, 1.0, 1);
        short.within = Err(Na::TooFew(3, "windows"));
        let c = change(&short, &side(2.2, 1e-4, 20.0, 1), 0.0);
        assert_eq!(c.pct, Some(100.0 * (2.2 / 2.0 - 1.0)));
        assert_eq!(c.ci(0.01), Err(Na::TooFew(3, "windows")));
        assert_eq!(c.p(), None);
    }

    #[test]
    fn reasons_read_as_printed() {
        assert_eq!(Na::TooFew(3, "windows").text(), "n/a: 3 windows");
        assert_eq!(Na::TooFew(1, "runs").text(), "n/a: 1 run");
        assert_eq!(
            Na::Spread(2, "connections").text(),
            "n/a: connections in 2 windows"
        );
        assert_eq!(Na::Spread(1, "errors").text(), "n/a: errors in 1 window");
        assert_eq!(Na::Tail(1.2).text(), "n/a: 1 value above");
        assert_eq!(Na::Tail(7.9).text(), "n/a: 7 values above");
        assert_eq!(Na::Zero.text(), "n/a: base 0");
        assert_eq!(Na::Quantised.text(), "n/a: quantised");
        assert_eq!(
            Na::Effective(2, "windows").text(),
            "n/a: 2 effective windows"
        );
        assert_eq!(
            Na::Effective(1, "seconds").text(),
            "n/a: 1 effective second"
        );
        assert_eq!(Na::Effective(3, "runs").text(), "n/a: 3 runs");
        assert_eq!(Na::Wide.text(), "n/a: wider than ×10");
    }

    #[test]
    fn intervals_the_data_cannot_support_are_not_printed() {
        // 2 % noise a side over 20 effective windows: an interval, ±2.7 standard errors
        // of 2.8 %.
        let (b, n) = (side(2.0, 0.0016, 19.0, 1), side(2.2, 0.001_936, 19.0, 1));
        let (lo, hi) = change(&b, &n, 0.0).ci(0.01).expect("an interval");
        assert!(hi - lo > 10.0 && hi - lo < 20.0, "{lo} … {hi}");
        // The same noise with 1.5 effective windows a side: Student's t at 1.9
        // degrees of freedom is 10; the interval is not printed, its reason named,
        // but the test stands (p from the t distribution, exact for normal data).
        let (b1, n1) = (side(2.0, 0.0016, 0.5, 1), side(2.2, 0.001_936, 0.9, 1));
        let c = change(&b1, &n1, 0.0);
        assert!(c.stat.expect("tested").df < MIN_DF);
        assert_eq!(c.ci(0.01), Err(Na::Effective(2, "windows")));
        assert!(c.p().is_some_and(|p| p > 0.01 && p < 0.5), "{:?}", c.p());
        // Noise of 60 % a side: the interval would span more than a factor of 10.
        let (wb, wn) = (side(2.0, 1.44, 29.0, 1), side(2.2, 1.7424, 29.0, 1));
        assert_eq!(change(&wb, &wn, 0.0).ci(0.01), Err(Na::Wide));
        // At 10 %, not: ±3.5 standard errors of 14 % is a factor of 2.7 end to end.
        let (mb, mn) = (side(2.0, 0.04, 29.0, 1), side(2.2, 0.0484, 29.0, 1));
        let (lo, hi) = change(&mb, &mn, 0.0).ci(0.001).expect("an interval");
        assert!(
            (1.0 + hi / 100.0) / (1.0 + lo / 100.0) < MAX_SPREAD,
            "{lo} … {hi}"
        );
        // The runs' own spread estimated from two runs a side (2 degrees of freedom)
        // and dominant: the runs are named.
        let mut rb = side(2.0, 1e-8, 29.0, 0);
        rb.runs = vec![Some((1.9, 1e-8)), Some((2.1, 1e-8))];
        let mut rn = side(2.2, 1e-8, 29.0, 0);
        rn.runs = vec![Some((2.2, 1e-8))];
        let c = change(&rb, &rn, 0.0);
        assert!(c.stat.expect("tested").df < MIN_DF, "{:?}", c.stat);
        assert_eq!(c.ci(0.01), Err(Na::Effective(3, "runs")));
    }

    #[test]
    fn ratio_batches_give_the_cluster_variance_and_see_autocorrelation() {
        // 10 batches of 40 with 20 ± 2 below, alternating: a textbook ratio variance.
        let alt: Batches = (0..10)
            .map(|i| (40.0, if i % 2 == 0 { 22.0 } else { 18.0 }))
            .collect();
        let (r, var, k_eff) = ratio_variance(&[&alt], false).expect("batches");
        assert_eq!(r, 0.5);
        assert!((var - 10.0 / 9.0 * 10.0 * 4.0 / 160_000.0).abs() < 1e-15);
        assert_eq!(k_eff, 10.0);
        // Alternating residuals are negatively correlated: no correction (ρ ≥ 0).
        assert_eq!(ratio_variance(&[&alt], true).expect("b").1, var);
        // A slow drift (ten up, ten down) is positively correlated: inflated.
        let drift: Batches = (0..20)
            .map(|i| (40.0, if i < 10 { 22.0 } else { 18.0 }))
            .collect();
        let (_, plain, _) = ratio_variance(&[&drift], false).expect("b");
        let (_, corrected, k_eff) = ratio_variance(&[&drift], true).expect("b");
        assert!(corrected > 3.0 * plain, "{corrected} vs {plain}");
        assert!(k_eff < 20.0 / 3.0, "{k_eff}");
        // Too few batches: the reason names them.
        let few: Batches = vec![(40.0, 20.0); 5];
        assert_eq!(
            ratio_within(&[&few], 0.5, "windows", MIN_BATCHES, true),
            Err(Na::TooFew(5, "windows"))
        );
    }
}
