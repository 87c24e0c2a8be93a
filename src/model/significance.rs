//! The special functions of `rshperf compare`'s tests: log-gamma, the regularized
//! incomplete beta function, Student's t and the normal distribution. Pure.
//!
//! Written here (Lanczos; the continued fraction of Numerical Recipes §6.4) rather
//! than taken from a statistics crate: the crates that have them pull a
//! linear-algebra stack into the build for 80 lines. Called by
//! `model::compare::estimate`.

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
    if df > 1e6 {
        // Student's t is the normal distribution to within 1e-6 here (and at df = ∞).
        return normal_cdf(t);
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

/// The z with P(Z ≤ z) = p, 0.5 ≤ p < 1 (bisection on `normal_cdf`).
#[cfg(test)]
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
        assert!(close(t_quantile(0.995, f64::INFINITY), 2.575_829, 1e-5));
        assert!(close(t_cdf(1.959_964, 1e9), 0.975, 1e-6));
        // Normal: Φ(1.959964) = 0.975, z(0.995) = 2.575829.
        assert!(close(normal_cdf(1.959_964), 0.975, 1e-6));
        assert!(close(normal_quantile(0.995), 2.575_829, 1e-5));
        assert!(close(normal_cdf(-1.0), 0.158_655_25, 1e-6));
    }
}
