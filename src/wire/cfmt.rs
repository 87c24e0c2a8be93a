//! C printf number formatting that Rust's `format!` lacks: `%g`, glibc's spelling of
//! non-finite values in `%.Nf`, and the sign x86 gives a NaN (`-nan`, not `nan`).
//!
//! Used by the echo line (`%g`), the report's figures (`model::summary`, undefined
//! rates) and its formatters (`%.1f` of rates that divide by a zero duration). Pure
//! functions.

/// Gives any NaN the sign x86 gives a freshly produced one: C's 0/0 is a negative
/// NaN, which glibc prints `-nan` (httperf's spelling of an undefined figure).
pub(crate) fn c_nan(x: f64) -> f64 {
    if x.is_nan() {
        -f64::NAN
    } else {
        x
    }
}

/// glibc's text for a non-finite value (`inf`, `-inf`, `nan`, `-nan`), or None.
fn non_finite(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some(if x.is_sign_negative() { "-nan" } else { "nan" })
    } else if x.is_infinite() {
        Some(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        None
    }
}

/// C's `%.{prec}f`: Rust gives identical digits for finite values; non-finite values are
/// spelled as glibc does.
pub(crate) fn fixed(x: f64, prec: usize) -> String {
    match non_finite(x) {
        Some(s) => s.to_string(),
        None => format!("{x:.prec$}"),
    }
}

/// C's `%g`: 6 significant digits, trailing zeros removed, exponent form (`1e-05`)
/// when the decimal exponent is below -4 or at least 6.
pub(crate) fn g(x: f64) -> String {
    if let Some(s) = non_finite(x) {
        return s.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    const P: i32 = 6;
    // Round to P significant digits first: the exponent of the rounded value decides.
    let sci = format!("{:.*e}", (P - 1) as usize, x);
    let (mantissa, exp) = sci
        .split_once('e')
        .expect("`{:e}` output always has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    if !(-4..P).contains(&exp) {
        let m = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        let prec = usize::try_from(P - 1 - exp).unwrap_or(0);
        strip_zeros(&format!("{x:.prec$}")).to_string()
    }
}

/// Removes trailing zeros after a decimal point, and the point itself if bare.
fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_matches_c() {
        let cases = [
            (5.0, "5"),
            (0.5, "0.5"),
            (0.05, "0.05"),
            (1e-5, "1e-05"),
            (600.0, "600"),
            (100000.0, "100000"),
            (1000000.0, "1e+06"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00012345678, "0.000123457"),
            (2.5, "2.5"),
            (1.0 / 3.0, "0.333333"),
            (999999.5, "1e+06"),
            (123456.5, "123456"),
            (-2.0, "-2"),
            (0.0, "0"),
            (f64::INFINITY, "inf"),
            (3.0e10, "3e+10"),
        ];
        for (x, want) in cases {
            assert_eq!(g(x), want, "g({x})");
        }
    }

    #[test]
    fn fixed_spells_non_finite_like_glibc() {
        assert_eq!(fixed(1.25, 1), "1.2");
        assert_eq!(fixed(0.05, 1), "0.1");
        assert_eq!(fixed(f64::INFINITY, 1), "inf");
        assert_eq!(fixed(-f64::NAN, 1), "-nan");
        assert_eq!(fixed(f64::NAN, 3), "nan");
    }
}
