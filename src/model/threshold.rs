//! Thresholds on a run's figures (`--fail-on`, sweep's `--slo`): the expression
//! language `METRIC OP VALUE[UNIT]` (e.g. `p99>50ms`, `reply_rate_avg<1000`,
//! `errors>0`), parsed once into typed `Threshold`s before the run.
//!
//! Owns the expression language and the lookup of metric names, which come from the
//! table of figures (`model::figure::run`): every figure it marks as a `--fail-on`
//! metric under its name (`connections_rate`, `percentiles_response_p99`,
//! `errors_client_timo`; a JSON path such as `connections.rate` names the same
//! figure), plus the aliases the table declares for the names of earlier releases
//! (`conn-rate`, `p99`, `client-timo`, …, `aliases`). A metric's unit (`Kind`) is its
//! figure's. Evaluation against a run is in `output::threshold`. A bad expression is
//! an option error (exit 1); the message is printed after `rshperf: --fail-on: `.

use std::sync::OnceLock;

use crate::model::figure::run::table;
use crate::model::figure::Unit;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

impl Op {
    /// The operator as written.
    #[cfg(test)]
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Eq => "==",
            Op::Ne => "!=",
        }
    }

    /// Whether `actual OP limit` holds.
    pub(crate) fn holds(self, actual: f64, limit: f64) -> bool {
        match self {
            Op::Gt => actual > limit,
            Op::Ge => actual >= limit,
            Op::Lt => actual < limit,
            Op::Le => actual <= limit,
            Op::Eq => actual == limit,
            Op::Ne => actual != limit,
        }
    }
}

/// What a metric measures, which decides the units its value may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A number of events (or a ratio of them); no unit.
    Count,
    /// Per second; no unit or `/s`. The label names the unit in messages.
    Rate(&'static str),
    /// Milliseconds; `us`/`µs`, `ms` (default) or `s`.
    Millis,
    /// Seconds; `us`/`µs`, `ms` or `s` (default).
    Seconds,
    /// Percent; no unit or `%`.
    Percent,
}

impl Kind {
    /// The units a figure of `unit` takes.
    pub(crate) fn of(unit: Unit) -> Kind {
        match unit {
            Unit::Rate(per) => Kind::Rate(per),
            Unit::Ms => Kind::Millis,
            Unit::S => Kind::Seconds,
            Unit::Percent => Kind::Percent,
            _ => Kind::Count,
        }
    }
}

/// What the figure called `name` (a `--fail-on` name) measures.
pub(crate) fn kind_of(name: &str) -> Kind {
    table()
        .get(name)
        .map_or(Kind::Count, |s| Kind::of(s.unit()))
}

/// The figure a threshold compares: a generated name, and for the `reply-rate` alias
/// the figure to use instead when a count figure is 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Metric {
    /// The figure's flattened name.
    pub(crate) figure: String,
    /// `(count, other)`: use figure `other` when figure `count` is 0.
    pub(crate) unless_none: Option<(&'static str, &'static str)>,
}

/// The names of the figures thresholds can use, in document order (the figure table's
/// `--fail-on` metrics).
pub(crate) fn metric_names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        table()
            .specs
            .iter()
            .filter(|s| s.figure.fail_on)
            .map(|s| s.name.clone())
            .collect()
    })
}

/// Every alias with the metric it names, in table order (docs/json.md §4.2): the
/// names of earlier releases (`conn_rate`, `p99`, `client_timo`, …) as the figure
/// table declares them. An alias of a templated figure that a plain figure's alias
/// already takes is left out (`lifetime_max` is `connection_time_ms_max`).
pub(crate) fn aliases() -> Vec<(String, Metric)> {
    let specs = table().specs.iter().filter(|s| s.figure.fail_on);
    let plain: Vec<&str> = specs
        .clone()
        .filter(|s| !s.figure.path.contains('{'))
        .flat_map(|s| s.aliases.iter().map(|(a, _)| a.as_str()))
        .collect();
    let mut all = Vec::new();
    for s in specs {
        let templated = s.figure.path.contains('{');
        for (alias, unless_none) in &s.aliases {
            if templated && plain.contains(&alias.as_str()) {
                continue;
            }
            all.push((
                alias.clone(),
                Metric {
                    figure: s.name.clone(),
                    unless_none: *unless_none,
                },
            ));
        }
    }
    all
}

/// The metric `name` names (case-insensitive; `-` and `.` read as `_`).
pub(crate) fn lookup(name: &str) -> Option<Metric> {
    let key = name.to_lowercase().replace(['-', '.'], "_");
    if metric_names().contains(&key) {
        return Some(Metric {
            figure: key,
            unless_none: None,
        });
    }
    aliases()
        .into_iter()
        .find(|(a, _)| *a == key)
        .map(|(_, m)| m)
}

/// One parsed `--fail-on` expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Threshold {
    /// The expression as typed (trimmed), for messages.
    expr: String,
    /// The metric name as typed (trimmed).
    name: String,
    metric: Metric,
    op: Op,
    /// The limit in the metric's unit.
    limit: f64,
}

impl Threshold {
    /// The expression as typed (trimmed).
    pub(crate) fn expr(&self) -> &str {
        &self.expr
    }

    /// The metric name as typed (trimmed).
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The figure compared.
    pub(crate) fn metric(&self) -> &Metric {
        &self.metric
    }

    /// The comparison.
    pub(crate) fn op(&self) -> Op {
        self.op
    }

    /// The limit in the metric's unit (ms for times, s for seconds, per second for
    /// rates, % for percentages).
    pub(crate) fn limit(&self) -> f64 {
        self.limit
    }
}

/// The number at the start of `text` and the rest (its unit).
fn split_number(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-' | 'e' | 'E')))
        .unwrap_or(text.len());
    (&text[..end], text[end..].trim())
}

/// Why a threshold expression does not parse; the text is printed after
/// `rshperf: --fail-on: ` (or `rshperf: sweep: --slo: `).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThresholdError {
    /// No comparison operator.
    #[error(
        "no comparison in '{expr}' (use METRIC OP VALUE with OP one of > >= < <= == !=, \
         or invalid)"
    )]
    NoComparison {
        /// The expression (trimmed).
        expr: String,
    },
    /// Nothing before the operator.
    #[error("no metric in '{expr}'")]
    NoMetric {
        /// The expression (trimmed).
        expr: String,
    },
    /// A metric name that is not one.
    #[error(
        "unknown metric '{name}' in '{expr}' (metrics include errors_total, \
         replies_total, reply_rate_avg, percentiles_response_p99 (p99), \
         connection_time_ms_connect, cpu_total_pct; see docs/json.md)"
    )]
    UnknownMetric {
        /// The metric as typed.
        name: String,
        /// The expression (trimmed).
        expr: String,
    },
    /// An operator that is not one of the six.
    #[error("bad comparison in '{expr}' (use one of > >= < <= == !=)")]
    BadComparison {
        /// The expression (trimmed).
        expr: String,
    },
    /// Nothing after the operator.
    #[error("no value in '{expr}'")]
    NoValue {
        /// The expression (trimmed).
        expr: String,
    },
    /// A value that is not a finite number.
    #[error("bad value '{value}' in '{expr}'")]
    BadValue {
        /// The value (with its unit) as typed.
        value: String,
        /// The expression (trimmed).
        expr: String,
    },
    /// A unit the metric does not take.
    #[error("bad unit '{unit}' in '{expr}': {name} is {}", unit_rule(*kind))]
    BadUnit {
        /// The unit (lowercased).
        unit: String,
        /// The expression (trimmed).
        expr: String,
        /// The metric as typed.
        name: String,
        /// What the metric measures.
        kind: Kind,
    },
}

/// The units a metric of `kind` takes, for `ThresholdError::BadUnit`.
fn unit_rule(kind: Kind) -> String {
    match kind {
        Kind::Count => "a count and takes no unit".to_string(),
        Kind::Rate(per) => format!("a rate ({per}) and takes no unit or /s"),
        Kind::Millis | Kind::Seconds => "a time: use us, ms or s".to_string(),
        Kind::Percent => "a percentage: use % or no unit".to_string(),
    }
}

/// The word that fails an invalid run (`--fail-on invalid`): the threshold
/// `validity_valid==0` on the validity judgement's figure (`model::validity`).
pub(crate) const INVALID: &str = "invalid";

/// The figure `INVALID` reads.
const VALID_FIGURE: &str = "validity_valid";

/// Parses `METRIC OP VALUE[UNIT]` (spaces allowed around each part), or `invalid`.
pub(crate) fn parse(expr: &str) -> Result<Threshold, ThresholdError> {
    let expr = expr.trim();
    if expr.eq_ignore_ascii_case(INVALID) {
        return Ok(Threshold {
            expr: INVALID.to_string(),
            name: VALID_FIGURE.to_string(),
            metric: Metric {
                figure: VALID_FIGURE.to_string(),
                unless_none: None,
            },
            op: Op::Eq,
            limit: 0.0,
        });
    }
    let e = || expr.to_string();
    let Some(at) = expr.find(['<', '>', '=', '!']) else {
        return Err(ThresholdError::NoComparison { expr: e() });
    };
    let name = expr[..at].trim();
    if name.is_empty() {
        return Err(ThresholdError::NoMetric { expr: e() });
    }
    let metric = lookup(name).ok_or_else(|| ThresholdError::UnknownMetric {
        name: name.to_string(),
        expr: e(),
    })?;
    let rest = &expr[at..];
    let (op, rest) = [
        (">=", Op::Ge),
        ("<=", Op::Le),
        ("==", Op::Eq),
        ("!=", Op::Ne),
        (">", Op::Gt),
        ("<", Op::Lt),
    ]
    .iter()
    .find_map(|&(sym, op)| rest.strip_prefix(sym).map(|r| (op, r.trim())))
    .ok_or_else(|| ThresholdError::BadComparison { expr: e() })?;
    if rest.starts_with(['<', '>', '=', '!']) {
        return Err(ThresholdError::BadComparison { expr: e() });
    }
    if rest.is_empty() {
        return Err(ThresholdError::NoValue { expr: e() });
    }
    let (number, unit) = split_number(rest);
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| ThresholdError::BadValue {
            value: rest.to_string(),
            expr: e(),
        })?;
    let unit = unit.to_lowercase();
    let scale = match (kind_of(&metric.figure), unit.as_str()) {
        (Kind::Count, "") | (Kind::Rate(_), "" | "/s") | (Kind::Percent, "" | "%") => 1.0,
        (Kind::Millis, "" | "ms") | (Kind::Seconds, "s" | "") => 1.0,
        (Kind::Millis, "us" | "µs") => 1e-3,
        (Kind::Millis, "s") => 1e3,
        (Kind::Seconds, "ms") => 1e-3,
        (Kind::Seconds, "us" | "µs") => 1e-6,
        (kind, _) => {
            return Err(ThresholdError::BadUnit {
                unit,
                expr: e(),
                name: name.to_string(),
                kind,
            });
        }
    };
    Ok(Threshold {
        expr: expr.to_string(),
        name: name.to_string(),
        metric,
        op,
        limit: value * scale,
    })
}

/// Parses every expression (in order); the first error wins.
pub(crate) fn parse_all(exprs: &[String]) -> Result<Vec<Threshold>, ThresholdError> {
    exprs.iter().map(|e| parse(e)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(expr: &str) -> f64 {
        parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}")).limit
    }

    fn err(expr: &str) -> String {
        parse(expr).expect_err(expr).to_string()
    }

    #[test]
    fn every_operator() {
        for (sym, op) in [
            (">", Op::Gt),
            (">=", Op::Ge),
            ("<", Op::Lt),
            ("<=", Op::Le),
            ("==", Op::Eq),
            ("!=", Op::Ne),
        ] {
            let t = parse(&format!("errors{sym}3")).expect(sym);
            assert_eq!(t.op(), op);
            assert_eq!(op.symbol(), sym);
            assert_eq!(t.limit(), 3.0);
        }
        assert!(Op::Gt.holds(2.0, 1.0) && !Op::Gt.holds(1.0, 1.0));
        assert!(Op::Ge.holds(1.0, 1.0) && !Op::Ge.holds(0.5, 1.0));
        assert!(Op::Lt.holds(0.5, 1.0) && !Op::Lt.holds(1.0, 1.0));
        assert!(Op::Le.holds(1.0, 1.0) && !Op::Le.holds(2.0, 1.0));
        assert!(Op::Eq.holds(1.0, 1.0) && !Op::Eq.holds(2.0, 1.0));
        assert!(Op::Ne.holds(2.0, 1.0) && !Op::Ne.holds(1.0, 1.0));
        // NaN satisfies nothing but !=.
        assert!(!Op::Gt.holds(f64::NAN, 1.0) && !Op::Le.holds(f64::NAN, 1.0));
        assert!(Op::Ne.holds(f64::NAN, 1.0));
    }

    #[test]
    fn every_unit() {
        assert_eq!(limit("p99>50ms"), 50.0);
        assert_eq!(limit("p99>50"), 50.0);
        assert_eq!(limit("p99>1500us"), 1.5);
        assert_eq!(limit("p99>1500µs"), 1.5);
        assert_eq!(limit("p99>1.5s"), 1500.0);
        assert_eq!(limit("p99>2MS"), 2.0);
        assert_eq!(limit("duration>60"), 60.0);
        assert_eq!(limit("duration>60s"), 60.0);
        assert_eq!(limit("duration>1500ms"), 1.5);
        assert_eq!(limit("duration>2500000us"), 2.5);
        assert_eq!(limit("reply-rate<1000"), 1000.0);
        assert_eq!(limit("reply-rate<1e3/s"), 1000.0);
        assert_eq!(limit("cpu>90%"), 90.0);
        assert_eq!(limit("cpu>90"), 90.0);
        assert_eq!(limit("errors>0"), 0.0);
        assert_eq!(limit("connect-avg>.5"), 0.5);
        assert_eq!(limit("connection_time_ms_connect>0.5s"), 500.0);
        assert_eq!(limit("cpu_user_s>2"), 2.0);
        assert_eq!(limit("net_io_mbps>2/s"), 2.0);
    }

    #[test]
    fn whitespace_case_and_underscores_are_tolerated() {
        assert_eq!(limit("  p99 > 50 ms  "), 50.0);
        assert_eq!(limit("client_timo >= 1"), 1.0);
        assert_eq!(limit("Reply-Rate<\t1000"), 1000.0);
        let t = parse(" connect-avg >2ms ").expect("valid");
        assert_eq!(t.expr(), "connect-avg >2ms");
        let (a, b) = (
            parse("2xx<10").expect("a"),
            parse(" 2xx <  10 ").expect("b"),
        );
        assert_eq!((a.metric, a.op, a.limit), (b.metric, b.op, b.limit));
    }

    #[test]
    fn generated_names_json_paths_and_aliases_name_the_same_figures() {
        let figure = |n: &str| parse(&format!("{n}>1")).expect(n).metric.figure;
        for (a, b) in [
            ("conn-rate", "connections_rate"),
            ("connections.rate", "connections_rate"),
            ("p99", "percentiles_response_p99"),
            ("response-p99", "percentiles_response_p99"),
            ("p99.9", "percentiles_response_p99_9"),
            ("percentiles.lateness.p99_99", "percentiles_lateness_p99_99"),
            ("lifetime-max", "connection_time_ms_max"),
            ("lifetime-p99", "percentiles_lifetime_p99"),
            ("status-2xx", "status_2xx"),
            ("2xx", "status_2xx"),
            ("FTAB_FULL", "errors_ftab_full"),
            ("sessions-failed", "sessions_failed"),
            ("non-2xx", "replies_non_2xx"),
        ] {
            assert_eq!(figure(a), b, "{a}");
        }
        for name in metric_names() {
            parse(&format!("{name}>1")).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        for (alias, m) in aliases() {
            assert!(metric_names().contains(&m.figure), "{alias} → {}", m.figure);
            assert!(
                !metric_names().contains(&alias),
                "{alias} is a figure's name"
            );
            if let Some((count, other)) = m.unless_none {
                assert!(metric_names().iter().any(|n| n == count), "{count}");
                assert!(metric_names().iter().any(|n| n == other), "{other}");
            }
        }
    }

    #[test]
    fn units_follow_the_names() {
        assert_eq!(kind_of("percentiles_connect_p99"), Kind::Millis);
        assert_eq!(kind_of("percentiles_connect_count"), Kind::Count);
        assert_eq!(kind_of("connection_time_ms_min"), Kind::Millis);
        assert_eq!(kind_of("duration_s"), Kind::Seconds);
        assert_eq!(kind_of("reply_rate_samples"), Kind::Count);
        assert_eq!(kind_of("reply_rate_avg"), Kind::Rate("replies/s"));
        assert_eq!(kind_of("net_io_kb_per_s"), Kind::Rate("KB/s"));
        assert_eq!(kind_of("cpu_total_pct"), Kind::Percent);
        assert_eq!(kind_of("errors_total"), Kind::Count);
    }

    #[test]
    fn malformed_expressions_are_rejected() {
        assert!(err("bogus>>3").contains("unknown metric 'bogus'"));
        assert!(err("bogus>3").contains("unknown metric"));
        assert!(err("errors>>3").contains("bad comparison"));
        assert!(err("errors=3").contains("bad comparison"));
        assert!(err("errors!3").contains("bad comparison"));
        assert!(err("errors=>3").contains("bad comparison"));
        assert!(err("errors 3").contains("no comparison"));
        assert!(err("invalid>0").starts_with("unknown metric 'invalid'"));
        assert_eq!(parse("INVALID").expect("the word").limit(), 0.0);
        assert!(err("").contains("no comparison"));
        assert!(err(">3").contains("no metric"));
        assert!(err("errors>").contains("no value"));
        assert!(err("errors> ").contains("no value"));
        assert!(err("errors>x").contains("bad value"));
        assert!(err("errors>inf").contains("bad value"));
        assert!(err("errors>1.2.3").contains("bad value"));
        assert!(err("errors>5ms").contains("is a count"));
        assert!(err("p99>50%").contains("is a time"));
        assert!(err("p99>50min").contains("is a time"));
        assert!(err("reply-rate<10ms").contains("is a rate"));
        assert!(err("cpu>5s").contains("percentage"));
        assert!(err("p99.999>1").contains("unknown metric"));
        assert!(err("lifetime-maxx>1").contains("unknown metric"));
        assert!(err("6xx>1").contains("unknown metric"));
        assert!(parse_all(&["errors>0".into(), "nope<1".into()])
            .expect_err("second is bad")
            .to_string()
            .contains("'nope'"));
    }
}
