//! Significance tests for `rshperf compare`: pure functions on samples and histograms,
//! no I/O.
//!
//! * `welch`: Welch's unequal-variance t-test on two samples (per-second rates), with
//!   the confidence interval of the difference of the means (Welch–Satterthwaite
//!   degrees of freedom).
//! * `quantile_change`: the bootstrap of a quantile over a recorded histogram, done
//!   exactly rather than by resampling: the k-th smallest of n values drawn from the
//!   histogram is below x with probability P(Binomial(n, F(x)) ≥ k) = I_F(x)(k, n−k+1),
//!   so the bootstrap distribution of the quantile is known per bucket; the ratio of
//!   the new to the base quantile is then sampled from the two (independent)
//!   distributions with a fixed-seed generator, so the answer is reproducible.
//! * `log_change`: Welch's t-test on the logarithms of per-second quantiles (latency),
//!   the change as a ratio of geometric means.
//! * `proportions`: the two-proportion z-test (error rate).
//!
//! The special functions (log-gamma, the regularized incomplete beta function, the
//! Student t and normal distributions) are written here (Lanczos; the continued
//! fraction of Numerical Recipes §6.4) rather than taken from a statistics crate: the
//! crates that have them pull a linear-algebra stack into the build for 80 lines.
//! Called by `model::compare`.

/// The outcome of comparing one figure of two groups of runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Change {
    /// Relative change of the new over the base value, % (may be infinite when the
    /// base is 0).
    pub(crate) pct: f64,
    /// Confidence interval of `pct` at 1 − alpha, %.
    pub(crate) ci: (f64, f64),
    /// Two-sided p-value of "no change".
    pub(crate) p: f64,
}

impl Change {
    /// Whether the change is significant at level `alpha`.
    pub(crate) fn significant(&self, alpha: f64) -> bool {
        self.p < alpha
    }
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error below 1e-13).
pub(crate) fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    // Lentz's guard: a denominator of 0 becomes TINY.
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - qab * x / qap);
    let mut h = d;
    // Converges in O(sqrt(max(a, b))) steps; a histogram of 10⁹ values needs ~10⁵.
    for m in 1..200_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        // Step m's even coefficient, then its odd one.
        for aa in [
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ] {
            d = 1.0 / nonzero(1.0 + aa * d);
            c = nonzero(1.0 + aa / c);
            h *= d * c;
        }
        if (d * c - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b), a, b > 0, 0 ≤ x ≤ 1.
pub(crate) fn beta_inc(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom.
pub(crate) fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    let tail = 0.5 * beta_inc(df / 2.0, 0.5, df / (df + t * t));
    if t > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The t with P(T ≤ t) = p, 0.5 ≤ p < 1 (bisection on `t_cdf`).
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while t_cdf(hi, df) < p && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// P(Z ≤ z) for the standard normal distribution (erfc by its Chebyshev fit,
/// Numerical Recipes §6.2, relative error below 1.2e-7).
pub(crate) fn normal_cdf(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let y = t
        * (-x * x - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    let erfc = if x >= 0.0 { y } else { 2.0 - y };
    1.0 - 0.5 * erfc
}

/// Mean and unbiased variance of a sample (variance 0 for fewer than two values).
pub(crate) fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (f64::NAN, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    (mean, ss / (n - 1.0))
}

/// Welch's t-test of `new` against `base`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Welch {
    /// The t statistic (new − base over its standard error).
    pub(crate) t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub(crate) df: f64,
    /// Two-sided p-value.
    pub(crate) p: f64,
    /// Difference of the means, new − base.
    pub(crate) diff: f64,
    /// Confidence interval of `diff` at 1 − alpha.
    pub(crate) ci: (f64, f64),
}

/// Welch's t-test; None when a sample has fewer than two values.
pub(crate) fn welch(base: &[f64], new: &[f64], alpha: f64) -> Option<Welch> {
    if base.len() < 2 || new.len() < 2 {
        return None;
    }
    let (m1, v1) = mean_var(base);
    let (m2, v2) = mean_var(new);
    let (n1, n2) = (base.len() as f64, new.len() as f64);
    let (s1, s2) = (v1 / n1, v2 / n2);
    let se = (s1 + s2).sqrt();
    let diff = m2 - m1;
    if se == 0.0 {
        // Two constant samples: equal (no doubt) or different (no doubt either).
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        return Some(Welch {
            t,
            df: n1 + n2 - 2.0,
            p,
            diff,
            ci: (diff, diff),
        });
    }
    let df = (s1 + s2).powi(2) / (s1 * s1 / (n1 - 1.0) + s2 * s2 / (n2 - 1.0));
    let t = diff / se;
    let p = (2.0 * (1.0 - t_cdf(t.abs(), df))).clamp(0.0, 1.0);
    let half = t_quantile(1.0 - alpha / 2.0, df) * se;
    Some(Welch {
        t,
        df,
        p,
        diff,
        ci: (diff - half, diff + half),
    })
}

/// `d` as a percentage of `base`; of a zero base, 0 for no change and an infinity of
/// `d`'s sign for any other.
fn percent_of(d: f64, base: f64) -> f64 {
    if base != 0.0 {
        100.0 * d / base
    } else if d == 0.0 {
        0.0
    } else {
        d.signum() * f64::INFINITY
    }
}

/// `welch` as a relative change of the mean: % of the base mean.
pub(crate) fn mean_change(base: &[f64], new: &[f64], alpha: f64) -> Option<Change> {
    let w = welch(base, new, alpha)?;
    let (m1, _) = mean_var(base);
    let rel = |d: f64| percent_of(d, m1);
    Some(Change {
        pct: rel(w.diff),
        ci: (rel(w.ci.0), rel(w.ci.1)),
        p: w.p,
    })
}

/// `welch` on the logarithms of positive samples (per-second quantiles), as a relative
/// change: the ratio of the geometric means, its interval and p-value. Values below
/// `floor` count as `floor` (a quantile of 0 µs has no logarithm). None when a sample
/// has fewer than two values.
pub(crate) fn log_change(base: &[f64], new: &[f64], floor: f64, alpha: f64) -> Option<Change> {
    let logs = |xs: &[f64]| xs.iter().map(|x| x.max(floor).ln()).collect::<Vec<f64>>();
    let w = welch(&logs(base), &logs(new), alpha)?;
    let pct = |d: f64| 100.0 * (d.exp() - 1.0);
    Some(Change {
        pct: pct(w.diff),
        ci: (pct(w.ci.0), pct(w.ci.1)),
        p: w.p,
    })
}

/// Two-proportion z-test of `new_k / new_n` against `base_k / base_n` (pooled variance
/// for the test, Wald interval for the difference); the change is relative to the
/// base proportion. None when a side has no trials.
pub(crate) fn proportions(
    (base_k, base_n): (u64, u64),
    (new_k, new_n): (u64, u64),
    alpha: f64,
) -> Option<Change> {
    if base_n == 0 || new_n == 0 {
        return None;
    }
    let (n1, n2) = (base_n as f64, new_n as f64);
    let (p1, p2) = (base_k as f64 / n1, new_k as f64 / n2);
    let pooled = (base_k + new_k) as f64 / (n1 + n2);
    let se0 = (pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2)).sqrt();
    let diff = p2 - p1;
    let p = if se0 == 0.0 {
        if diff == 0.0 {
            1.0
        } else {
            0.0
        }
    } else {
        (2.0 * (1.0 - normal_cdf((diff / se0).abs()))).clamp(0.0, 1.0)
    };
    let se = (p1 * (1.0 - p1) / n1 + p2 * (1.0 - p2) / n2).sqrt();
    let z = normal_quantile(1.0 - alpha / 2.0);
    let rel = |d: f64| percent_of(d, p1);
    Some(Change {
        pct: rel(diff),
        ci: (rel(diff - z * se), rel(diff + z * se)),
        p,
    })
}

/// The z with P(Z ≤ z) = p, 0.5 ≤ p < 1 (bisection on `normal_cdf`).
pub(crate) fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 40.0_f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// A histogram as (value, count) pairs in increasing value order (empty buckets left
/// out): the recorded values, each bucket at its reported value.
pub(crate) type Buckets = [(f64, u64)];

/// The bootstrap distribution of the `q` quantile of `hist` (the value of the
/// ⌈q n⌉-th smallest of n values resampled from it): (value, P(quantile ≤ value)) per
/// bucket, cumulative, ending at 1. Empty when the histogram is.
pub(crate) fn quantile_distribution(hist: &Buckets, q: f64) -> Vec<(f64, f64)> {
    let n: u64 = hist.iter().map(|&(_, c)| c).sum();
    if n == 0 {
        return Vec::new();
    }
    let k = ((q * n as f64).ceil() as u64).clamp(1, n);
    let (a, b) = (k as f64, (n - k + 1) as f64);
    let mut below = 0u64;
    let mut out = Vec::with_capacity(hist.len());
    for &(v, c) in hist {
        below += c;
        let f = below as f64 / n as f64;
        let p = if below >= n { 1.0 } else { beta_inc(a, b, f) };
        // Buckets the quantile falls in with negligible probability are left out.
        if p > 1e-12 {
            out.push((v, p));
        }
        if p >= 1.0 - 1e-15 {
            if let Some(last) = out.last_mut() {
                last.1 = 1.0;
            }
            break;
        }
    }
    out
}

/// The value of a cumulative distribution (`quantile_distribution`) at probability `u`.
fn draw(dist: &[(f64, f64)], u: f64) -> f64 {
    let i = dist.partition_point(|&(_, p)| p < u);
    dist[i.min(dist.len() - 1)].0
}

/// A small fixed-seed generator (SplitMix64): the bootstrap is reproducible, run to
/// run and build to build.
struct SplitMix(u64);

impl SplitMix {
    /// A uniform number in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Draws of the bootstrap (enough for tails of alpha/2 = 0.0005 to hold 10 draws).
pub(crate) const DRAWS: usize = 20_000;

/// The change of the `q` quantile from `base` to `new` (histograms as `Buckets`):
/// `point` values from the full histograms as reported, the interval and p-value from
/// the bootstrap of both quantiles. None when a histogram is empty.
pub(crate) fn quantile_change(
    base: &Buckets,
    new: &Buckets,
    q: f64,
    (point_base, point_new): (f64, f64),
    alpha: f64,
) -> Option<Change> {
    let (db, dn) = (
        quantile_distribution(base, q),
        quantile_distribution(new, q),
    );
    if db.is_empty() || dn.is_empty() || point_base <= 0.0 {
        return None;
    }
    let mut rng = SplitMix(0x5EED_2025);
    let mut ratios: Vec<f64> = (0..DRAWS)
        .map(|_| {
            let b = draw(&db, rng.next());
            let n = draw(&dn, rng.next());
            if b > 0.0 {
                n / b
            } else if n > 0.0 {
                f64::INFINITY
            } else {
                1.0
            }
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |p: f64| {
        let i = ((p * DRAWS as f64).floor() as usize).min(DRAWS - 1);
        ratios[i]
    };
    let (lo, hi) = (at(alpha / 2.0), at(1.0 - alpha / 2.0));
    let below = ratios.iter().filter(|&&r| r < 1.0).count() as f64;
    let equal = ratios.iter().filter(|&&r| r == 1.0).count() as f64;
    let total = DRAWS as f64;
    let lower = (below + 0.5 * equal) / total;
    let p = (2.0 * lower.min(1.0 - lower)).clamp(0.0, 1.0);
    Some(Change {
        pct: 100.0 * (point_new / point_base - 1.0),
        ci: (100.0 * (lo - 1.0), 100.0 * (hi - 1.0)),
        p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn special_functions_match_tables() {
        // Γ(5) = 24, Γ(0.5) = √π.
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-12));
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-12
        ));
        // I_x(1, 1) = x; I_x(2, 1) = x².
        assert!(close(beta_inc(1.0, 1.0, 0.3), 0.3, 1e-12));
        assert!(close(beta_inc(2.0, 1.0, 0.3), 0.09, 1e-12));
        // Student t tables: t(0.975, 10) = 2.228139, t(0.995, 5) = 4.032143,
        // t(0.975, 1) = 12.7062.
        assert!(close(t_quantile(0.975, 10.0), 2.228_139, 1e-5));
        assert!(close(t_quantile(0.995, 5.0), 4.032_143, 1e-5));
        assert!(close(t_quantile(0.975, 1.0), 12.706_20, 1e-4));
        assert!(close(t_cdf(0.0, 7.0), 0.5, 1e-12));
        assert!(close(t_cdf(-2.228_139, 10.0), 0.025, 1e-6));
        // Normal: Φ(1.959964) = 0.975, z(0.995) = 2.575829.
        assert!(close(normal_cdf(1.959_964), 0.975, 1e-6));
        assert!(close(normal_quantile(0.995), 2.575_829, 1e-5));
        assert!(close(normal_cdf(-1.0), 0.158_655_25, 1e-6));
    }

    #[test]
    fn welch_on_a_textbook_example() {
        // Wikipedia, "Welch's t-test", example 1: t = −2.46, ν ≈ 24.99, p = 0.021.
        let a = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let b = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let w = welch(&b, &a, 0.05).expect("two samples");
        assert!(close(w.t, -2.455_356, 1e-6), "{}", w.t);
        assert!(close(w.df, 24.988_53, 1e-4), "{}", w.df);
        assert!(close(w.p, 0.021, 5e-4), "{}", w.p);
        assert!(close(w.diff, 20.82 - 22.986_667, 1e-6));
        // CI = diff ± t(0.975, ν) se, se = diff / t.
        let half = t_quantile(0.975, w.df) * (w.diff / w.t);
        assert!(close(w.ci.0, w.diff - half, 1e-9) && close(w.ci.1, w.diff + half, 1e-9));
        assert!(w.ci.1 < 0.0, "95 % CI excludes 0 as p < 0.05: {:?}", w.ci);
        let at_1pct = welch(&b, &a, 0.01).expect("two samples");
        assert!(at_1pct.ci.1 > 0.0, "99 % CI includes 0 as p > 0.01");
        // The other way round: the negated difference, the same p.
        let r = welch(&a, &b, 0.05).expect("two samples");
        assert!(close(r.t, -w.t, 1e-12) && close(r.p, w.p, 1e-12));
        assert!(welch(&a[..1], &b, 0.05).is_none());
    }

    #[test]
    fn welch_on_equal_and_constant_samples() {
        let c = [200.0; 5];
        let same = welch(&c, &c, 0.01).expect("samples");
        assert_eq!((same.p, same.diff, same.t), (1.0, 0.0, 0.0));
        let other = welch(&c, &[201.0; 5], 0.01).expect("samples");
        assert_eq!(other.p, 0.0);
        let m = mean_change(&c, &[210.0; 5], 0.01).expect("samples");
        assert!(close(m.pct, 5.0, 1e-12) && m.significant(0.01));
    }

    #[test]
    fn log_change_is_a_ratio_of_geometric_means() {
        // Every value 20 % higher, same spread in log terms: +20 %, exactly.
        let base = [5.0, 5.5, 4.8, 5.2, 5.1];
        let new: Vec<f64> = base.iter().map(|x| x * 1.2).collect();
        let c = log_change(&base, &new, 0.001, 0.01).expect("samples");
        assert!(close(c.pct, 20.0, 1e-9), "{c:?}");
        assert!(
            c.significant(0.01) && c.ci.0 > 5.0 && c.ci.0 < 20.0 && c.ci.1 > 20.0 && c.ci.1 < 35.0,
            "{c:?}"
        );
        // The interval is the Welch interval of the logs, mapped back.
        let logs = |xs: &[f64]| xs.iter().map(|x| x.ln()).collect::<Vec<f64>>();
        let w = welch(&logs(&base), &logs(&new), 0.01).expect("samples");
        assert!(close(c.ci.0, 100.0 * (w.ci.0.exp() - 1.0), 1e-9));
        // Noisy seconds: +20 % on average but no significance.
        let noisy = [5.0, 9.0, 4.0, 8.0, 4.5];
        let c = log_change(&base, &noisy, 0.001, 0.01).expect("samples");
        assert!(!c.significant(0.01), "{c:?}");
        // Zeros are floored.
        let c = log_change(&[0.0, 0.0], &[0.0, 0.0], 0.001, 0.01).expect("samples");
        assert_eq!((c.pct, c.p), (0.0, 1.0));
    }

    #[test]
    fn proportions_test() {
        // 10/1000 vs 30/1000: pooled p = 0.02, z = 0.02 / sqrt(0.02 · 0.98 · 0.002)
        // = 3.194, p = 0.0014.
        let c = proportions((10, 1000), (30, 1000), 0.01).expect("trials");
        assert!(close(c.pct, 200.0, 1e-9));
        assert!(c.p > 0.0013 && c.p < 0.0015, "{}", c.p);
        assert!(c.significant(0.01));
        let none = proportions((0, 500), (0, 700), 0.01).expect("trials");
        assert_eq!((none.pct, none.p), (0.0, 1.0));
        let new = proportions((0, 500), (5, 500), 0.01).expect("trials");
        assert_eq!(new.pct, f64::INFINITY);
        assert!(proportions((0, 0), (1, 2), 0.01).is_none());
    }

    #[test]
    fn quantile_distribution_is_the_order_statistic() {
        // Two values, 1 and 2, each once: the median (k = 1 of n = 2) of a resample
        // is 1 unless both draws are 2: P(median ≤ 1) = 1 − 1/4.
        let d = quantile_distribution(&[(1.0, 1), (2.0, 1)], 0.5);
        assert_eq!(d.len(), 2);
        assert!(close(d[0].1, 0.75, 1e-12) && d[1].1 == 1.0);
        // The maximum (q = 1, k = n = 2): P(max ≤ 1) = 1/4.
        let d = quantile_distribution(&[(1.0, 1), (2.0, 1)], 1.0);
        assert!(close(d[0].1, 0.25, 1e-12));
        assert!(quantile_distribution(&[], 0.5).is_empty());
    }

    /// A histogram of `n` values spread evenly over [lo, hi), in 1 % buckets.
    fn spread(lo: f64, hi: f64, n: u64) -> Vec<(f64, u64)> {
        (0..100)
            .map(|i| (lo + (hi - lo) * (i as f64 + 1.0) / 100.0, n / 100))
            .collect()
    }

    #[test]
    fn quantile_change_finds_a_shift_and_no_shift() {
        let base = spread(1.0, 2.0, 10_000);
        let same = quantile_change(&base, &base, 0.99, (1.99, 1.99), 0.01).expect("data");
        assert_eq!(same.pct, 0.0);
        assert!(same.ci.0 <= 0.0 && same.ci.1 >= 0.0, "{same:?}");
        assert!(!same.significant(0.01), "{same:?}");
        // Everything 20 % slower.
        let slow = spread(1.2, 2.4, 10_000);
        let c = quantile_change(&base, &slow, 0.99, (1.99, 2.388), 0.01).expect("data");
        assert!(close(c.pct, 20.0, 1e-9));
        assert!(
            c.significant(0.01) && c.ci.0 > 15.0 && c.ci.1 < 25.0,
            "{c:?}"
        );
        // The same shift seen in 100 values is not significant at p99.9 (the
        // quantile is the maximum of the sample).
        let few = spread(1.0, 2.0, 100);
        let few_slow = spread(1.02, 2.04, 100);
        let c = quantile_change(&few, &few_slow, 0.999, (2.0, 2.04), 0.01).expect("data");
        assert!(!c.significant(0.01), "{c:?}");
        assert!(quantile_change(&[], &base, 0.5, (1.0, 1.0), 0.01).is_none());
    }
}
