//! Regression gates of `rshperf compare` (`--fail-on-regression 'p99>+10%'`): the
//! expression `METRIC OP [+|-]N%`, parsed once, and its verdict on a compared figure.
//!
//! The metric names are `--fail-on`'s (`model::threshold::lookup`: the figure names
//! and their aliases); a gate may name only a figure that `model::compare` compares,
//! or a synonym the table of figures declares for a compare row (the report's 5-s
//! reply-rate figure stands for the per-second reply rate). A gate trips when the change is past its limit *and*
//! significant at the comparison's level. Called by `front::compare`.

use crate::model::compare::estimate::Na;
use crate::model::compare::Row;
use crate::model::figure::compare::compare_rows;
use crate::model::threshold::{lookup, Op};

/// One parsed `--fail-on-regression` expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Gate {
    /// The expression as typed (trimmed).
    pub(crate) expr: String,
    /// The compared figure it judges.
    pub(crate) figure: String,
    /// `>`, `>=`, `<` or `<=`.
    pub(crate) op: Op,
    /// The limit on the change, %.
    pub(crate) limit_pct: f64,
}

/// The outcome of a gate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    /// The gate.
    pub(crate) gate: Gate,
    /// The measured change, % (None: not tested).
    pub(crate) change_pct: Option<f64>,
    /// Whether the change is significant.
    pub(crate) significant: bool,
    /// Whether the gate tripped (past the limit and significant).
    pub(crate) failed: bool,
    /// One line saying why: `p99>+10%: +21.3% (99% CI +18.0% … +24.9%), significant`.
    pub(crate) message: String,
}

/// Parses `METRIC OP [+|-]N%`; `compared` are the figures `compare` produces. The error
/// is a message to print after `rshperf: compare: --fail-on-regression: `.
pub(crate) fn parse(expr: &str, compared: &[&str]) -> Result<Gate, String> {
    let expr = expr.trim();
    let Some(at) = expr.find(['<', '>']) else {
        return Err(format!(
            "no comparison in '{expr}' (use METRIC > +N% or METRIC < -N%, e.g. 'p99>+10%')"
        ));
    };
    let name = expr[..at].trim();
    if name.is_empty() {
        return Err(format!("no metric in '{expr}'"));
    }
    let rest = &expr[at..];
    let (op, rest) = [(">=", Op::Ge), ("<=", Op::Le), (">", Op::Gt), ("<", Op::Lt)]
        .iter()
        .find_map(|&(sym, op)| rest.strip_prefix(sym).map(|r| (op, r.trim())))
        .ok_or_else(|| format!("bad comparison in '{expr}'"))?;
    let Some(number) = rest.strip_suffix('%') else {
        return Err(format!(
            "the limit in '{expr}' is not a change in % (write e.g. +10% or -5%)"
        ));
    };
    let limit_pct: f64 = number
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("bad limit '{rest}' in '{expr}'"))?;
    let metric = lookup(name).ok_or_else(|| {
        format!(
            "unknown metric '{name}' in '{expr}' (compared: {})",
            compared.join(", ")
        )
    })?;
    let figure = compare_rows()
        .iter()
        .find(|r| r.synonyms.contains(&metric.figure.as_str()))
        .map_or(metric.figure.as_str(), |r| r.figure.as_str());
    if !compared.contains(&figure) {
        return Err(format!(
            "'{name}' ({figure}) is not a figure compare tests (compared: {})",
            compared.join(", ")
        ));
    }
    Ok(Gate {
        expr: expr.to_string(),
        figure: figure.to_string(),
        op,
        limit_pct,
    })
}

/// Formats a change in %, signed: one decimal below 1000 %, none above (`+21.3%`,
/// `-0.4%`, `+1234%`); a change that rounds to zero is `+0.0%`, whatever the sign of
/// the rounding error.
pub(crate) fn pct(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "+inf%" } else { "-inf%" }.to_string();
    }
    if (v * 10.0).round() == 0.0 {
        return "+0.0%".to_string();
    }
    if v.abs() >= 999.95 {
        return format!("{v:+.0}%");
    }
    format!("{v:+.1}%")
}

/// An interval in % as printed: `+4.1% … +16.6%`, or why there is none
/// (`n/a: 3 windows`).
pub(crate) fn interval(ci: Result<(f64, f64), Na>) -> String {
    match ci {
        Ok((lo, hi)) => format!("{} … {}", pct(lo), pct(hi)),
        Err(na) => na.text(),
    }
}

/// The confidence level of `alpha` in %, at most two decimals (`99`, `99.9`,
/// `99.83`).
pub(crate) fn level(alpha: f64) -> String {
    let text = format!("{:.2}", 100.0 * (1.0 - alpha));
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Judges `gate` against the compared `rows`, each figure tested at level `alpha`
/// (the per-figure level of the comparison).
pub(crate) fn judge(gate: &Gate, rows: &[Row], alpha: f64) -> Outcome {
    let Some(change) = rows
        .iter()
        .find(|r| r.figure == gate.figure)
        .map(|r| r.change)
    else {
        return untested(gate, "no data".to_string());
    };
    let (Some(p), Some(value)) = (change.p(), change.pct) else {
        let why = match change.stat {
            Err(na) => na.text().trim_start_matches("n/a: ").to_string(),
            Ok(_) => "base 0".to_string(),
        };
        return untested(gate, why);
    };
    let significant = p < alpha;
    let past = gate.op.holds(value, gate.limit_pct);
    let why = match (past, significant) {
        (true, true) => "past the limit and significant",
        (true, false) => "past the limit but not significant",
        (false, _) => "within the limit",
    };
    Outcome {
        gate: gate.clone(),
        change_pct: Some(value),
        significant,
        failed: past && significant,
        message: format!(
            "{}: {} ({}% CI {}, p {}), {why}",
            gate.expr,
            pct(value),
            level(alpha),
            interval(change.ci(alpha)),
            p_value(p)
        ),
    }
}

/// A p-value as printed after its name: `= 0.0123`, or `< 0.0001`.
pub(crate) fn p_value(p: f64) -> String {
    if p < 0.0001 {
        "< 0.0001".to_string()
    } else {
        format!("= {p:.4}")
    }
}

/// The outcome of a gate whose figure could not be tested.
fn untested(gate: &Gate, why: String) -> Outcome {
    Outcome {
        gate: gate.clone(),
        change_pct: None,
        significant: false,
        failed: false,
        message: format!("{}: not tested ({why})", gate.expr),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::compare::estimate::{Change, Stat};
    use crate::model::compare::{About, Aspect, Better, Test};

    const COMPARED: [&str; 3] = ["percentiles_response_p99", "replies_rate", "errors_total"];

    #[test]
    fn parses_aliases_names_and_signs() {
        let g = parse(" p99 > +10% ", &COMPARED).expect("valid");
        assert_eq!(
            g,
            Gate {
                expr: "p99 > +10%".into(),
                figure: "percentiles_response_p99".into(),
                op: Op::Gt,
                limit_pct: 10.0
            }
        );
        let g = parse("reply-rate<-5%", &COMPARED).expect("valid");
        assert_eq!(
            (g.figure.as_str(), g.op, g.limit_pct),
            ("replies_rate", Op::Lt, -5.0)
        );
        let g = parse("replies.rate<=-5.5%", &COMPARED).expect("valid");
        assert_eq!(
            (g.figure.as_str(), g.op, g.limit_pct),
            ("replies_rate", Op::Le, -5.5)
        );
        assert_eq!(
            parse("errors>=50%", &COMPARED).expect("valid").figure,
            "errors_total"
        );
    }

    #[test]
    fn rejects_what_it_cannot_judge() {
        let e = |x: &str| parse(x, &COMPARED).expect_err(x);
        assert!(e("p99+10%").starts_with("no comparison"));
        assert!(e(">10%").starts_with("no metric"));
        assert_eq!(
            e("p99>10ms"),
            "the limit in 'p99>10ms' is not a change in % (write e.g. +10% or -5%)"
        );
        assert!(e("p99>x%").starts_with("bad limit 'x%'"));
        assert!(e("p99><10%").starts_with("bad limit"));
        assert!(e("bogus>10%").starts_with("unknown metric 'bogus'"));
        assert_eq!(
            e("duration>10%"),
            "'duration' (duration_s) is not a figure compare tests (compared: \
             percentiles_response_p99, replies_rate, errors_total)"
        );
    }

    /// A response p99 row changed by `pct` % of 1 ms, with the standard error `se`
    /// of its logarithm (normal: infinite degrees of freedom).
    fn row(pct: f64, se: f64) -> Row {
        let new = 1.0 + pct / 100.0;
        Row {
            figure: "percentiles_response_p99".into(),
            label: "response p99".into(),
            unit: "ms",
            better: Better::Lower,
            aspect: Aspect::Speed,
            about: About::Server,
            base: 1.0,
            new,
            change: Change {
                pct: Some(pct),
                stat: Ok(Stat {
                    d: new.ln(),
                    se,
                    df: f64::INFINITY,
                    log: true,
                    base: 1.0,
                    no_interval: None,
                    run_noise: 0.0,
                    noise_estimated: false,
                }),
            },
            test: Test::Woodruff,
        }
    }

    #[test]
    fn trips_only_past_the_limit_and_significant() {
        let g = parse("p99>+10%", &COMPARED).expect("valid");
        let o = judge(&g, &[row(21.25, 0.04)], 0.01);
        assert!(o.failed && o.significant);
        assert_eq!(
            o.message,
            "p99>+10%: +21.2% (99% CI +9.4% … +34.4%, p < 0.0001), past the limit and significant"
        );
        // z = ln 1.21 / 0.08 = 2.38: p = 0.017 (checked with Python's NormalDist).
        let o = judge(&g, &[row(21.0, 0.08)], 0.01);
        assert!(!o.failed && !o.significant);
        assert_eq!(
            o.message,
            "p99>+10%: +21.0% (99% CI -1.5% … +48.7%, p = 0.0172), past the limit but not \
             significant"
        );
        let o = judge(&g, &[row(5.0, 0.001)], 0.01);
        assert!(!o.failed && o.significant);
        assert!(o.message.ends_with("within the limit"));
        let o = judge(&g, &[], 0.01);
        assert_eq!((o.failed, o.change_pct), (false, None));
        assert_eq!(o.message, "p99>+10%: not tested (no data)");
        let mut short = row(30.0, 0.1);
        short.change.stat = Err(Na::TooFew(3, "windows"));
        let o = judge(&g, &[short], 0.01);
        assert_eq!(o.message, "p99>+10%: not tested (3 windows)");
        assert!(!o.failed);
        assert_eq!(pct(f64::INFINITY), "+inf%");
        assert_eq!(
            (level(0.01), level(0.001), level(0.01 / 6.0)),
            ("99".into(), "99.9".into(), "99.83".into())
        );
        assert_eq!(
            (pct(-0.04), pct(-1e-15), pct(-0.05)),
            ("+0.0%".into(), "+0.0%".into(), "-0.1%".into())
        );
        assert_eq!(
            (pct(999.94), pct(999.96), pct(-100.0)),
            ("+999.9%".into(), "+1000%".into(), "-100.0%".into())
        );
        assert_eq!(interval(Err(Na::Zero)), "n/a: base 0");
        assert_eq!(
            (p_value(0.01234), p_value(0.00001)),
            ("= 0.0123".into(), "< 0.0001".into())
        );
    }
}
