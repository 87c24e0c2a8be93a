//! `--fail-on=EXPR`: thresholds on the run's figures, for CI.
//!
//! Owns the expression language (`METRIC OP VALUE[UNIT]`, e.g. `p99>50ms`,
//! `reply-rate<1000`, `errors>0`), the metric table (`metrics`, documented in
//! `docs/json.md`) and the evaluation against a `Summary` and the `Stats` behind it.
//! Parsing happens before the run (a bad expression is an option error, exit 1);
//! evaluation after the report (the runner names every breach on stderr and exits 3).
//! Computes no figure itself: values come from `Summary` and `percentiles::quantile_ms`.
//!
//! Time metrics are compared in milliseconds (values may say `us`, `ms` or `s`; bare
//! numbers are ms), `duration` in seconds, rates per second, `cpu*` in percent (an
//! optional `%`), counts as plain numbers. A figure that is undefined (NaN, from a zero
//! test duration) satisfies no comparison except `!=`.
//!
//! Longer than the usual 600 lines: the documented metric table alone is 70 lines and
//! the tests (every operator, unit, metric and error) a third of the file.

use crate::model::stats::quantile_ms;
use crate::model::stats::Stats;
use crate::output::summary::Summary;
use crate::wire::cfmt::fixed;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
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
    pub fn symbol(self) -> &'static str {
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
    pub fn holds(self, actual: f64, limit: f64) -> bool {
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
enum Kind {
    /// A number of events; no unit.
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

/// The latency histograms, for percentile metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hist {
    Connect,
    Response,
    Transfer,
    Lifetime,
    Lateness,
}

/// Every metric `--fail-on` knows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    Errors,
    Error(usize),
    Connections,
    Requests,
    Replies,
    Status(usize),
    Non2xx,
    SessionsFailed,
    ConnRate,
    ReqRate,
    ReplyRate,
    NetIo,
    ConnectAvg,
    ResponseAvg,
    TransferAvg,
    LifetimeAvg,
    LifetimeMedian,
    LifetimeMin,
    LifetimeMax,
    LifetimeStddev,
    Quantile(Hist, f64),
    Cpu,
    CpuUser,
    CpuSystem,
    Duration,
}

use crate::model::stats::ERROR_NAMES;

/// Quantile suffixes of percentile metrics.
const QUANTILE_NAMES: [(&str, f64); 6] = [
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
    ("max", 1.0),
];

/// The metric table: (name, meaning). Aliases are named in the meanings.
static METRICS: [(&str, &str); 64] = [
    (
        "errors",
        "total of the error counters (the report's `Errors: total`)",
    ),
    (
        "client-timo",
        "error counter client-timo (`--timeout` expired)",
    ),
    ("socket-timo", "error counter socket-timo (ETIMEDOUT)"),
    ("connrefused", "error counter connrefused"),
    ("connreset", "error counter connreset"),
    ("fd-unavail", "error counter fd-unavail"),
    ("addrunavail", "error counter addrunavail"),
    ("ftab-full", "error counter ftab-full"),
    ("other", "error counter other"),
    ("connections", "connections made (`Total: connections`)"),
    ("requests", "requests sent (`Total: requests`)"),
    (
        "replies",
        "replies received, status classes 1xx-5xx (`Total: replies`)",
    ),
    ("1xx", "replies with status 1xx (alias status-1xx)"),
    ("2xx", "replies with status 2xx (alias status-2xx)"),
    ("3xx", "replies with status 3xx (alias status-3xx)"),
    ("4xx", "replies with status 4xx (alias status-4xx)"),
    ("5xx", "replies with status 5xx (alias status-5xx)"),
    ("non-2xx", "replies with status 1xx, 3xx, 4xx or 5xx"),
    (
        "sessions-failed",
        "sessions that failed (session workloads)",
    ),
    ("conn-rate", "connection rate, conn/s"),
    ("req-rate", "request rate, req/s"),
    (
        "reply-rate",
        "mean of the 5-s reply-rate samples, replies/s; replies / duration when the run \
         had no sample (shorter than 5 s)",
    ),
    ("net-io", "Net I/O, KB/s"),
    (
        "connect-avg",
        "mean connect time, ms (`Connection time [ms]: connect`)",
    ),
    (
        "response-avg",
        "mean response time, ms (`Reply time [ms]: response`)",
    ),
    (
        "transfer-avg",
        "mean transfer time, ms (`Reply time [ms]: transfer`)",
    ),
    (
        "lifetime-avg",
        "mean connection lifetime, ms (`Connection time [ms]: avg`)",
    ),
    (
        "lifetime-median",
        "median connection lifetime, ms (`Connection time [ms]: median`)",
    ),
    ("lifetime-min", "shortest connection lifetime, ms"),
    ("lifetime-max", "longest connection lifetime, ms (exact)"),
    (
        "lifetime-stddev",
        "standard deviation of connection lifetimes, ms",
    ),
    ("p50", "response time p50, ms (alias response-p50)"),
    ("p90", "response time p90, ms (alias response-p90)"),
    ("p99", "response time p99, ms (alias response-p99)"),
    ("p99.9", "response time p99.9, ms (alias response-p99.9)"),
    ("p99.99", "response time p99.99, ms (alias response-p99.99)"),
    ("max", "longest response time, ms (alias response-max)"),
    ("connect-p50", "connect time p50, ms"),
    ("connect-p90", "connect time p90, ms"),
    ("connect-p99", "connect time p99, ms"),
    ("connect-p99.9", "connect time p99.9, ms"),
    ("connect-p99.99", "connect time p99.99, ms"),
    ("connect-max", "longest connect time, ms"),
    ("transfer-p50", "transfer time p50, ms"),
    ("transfer-p90", "transfer time p90, ms"),
    ("transfer-p99", "transfer time p99, ms"),
    ("transfer-p99.9", "transfer time p99.9, ms"),
    ("transfer-p99.99", "transfer time p99.99, ms"),
    ("transfer-max", "longest transfer time, ms"),
    ("lifetime-p50", "connection lifetime p50, ms"),
    ("lifetime-p90", "connection lifetime p90, ms"),
    ("lifetime-p99", "connection lifetime p99, ms"),
    ("lifetime-p99.9", "connection lifetime p99.9, ms"),
    ("lifetime-p99.99", "connection lifetime p99.99, ms"),
    (
        "lateness-p50",
        "arrival lateness (start behind schedule) p50, ms",
    ),
    ("lateness-p90", "arrival lateness p90, ms"),
    ("lateness-p99", "arrival lateness p99, ms"),
    ("lateness-p99.9", "arrival lateness p99.9, ms"),
    ("lateness-p99.99", "arrival lateness p99.99, ms"),
    ("lateness-max", "largest arrival lateness, ms"),
    ("cpu", "CPU time, user + system, % of the duration"),
    ("cpu-user", "user CPU time, % of the duration"),
    ("cpu-system", "system CPU time, % of the duration"),
    ("duration", "test duration, s (default unit s)"),
];

/// The metrics `--fail-on` accepts, as (name, meaning), for documentation. Names are
/// matched case-insensitively, with `_` read as `-`.
pub fn metrics() -> &'static [(&'static str, &'static str)] {
    &METRICS
}

/// The metric called `name` (already lower-cased, `_` → `-`).
fn lookup(name: &str) -> Option<Metric> {
    let simple = match name {
        "errors" => Some(Metric::Errors),
        "connections" => Some(Metric::Connections),
        "requests" => Some(Metric::Requests),
        "replies" => Some(Metric::Replies),
        "non-2xx" => Some(Metric::Non2xx),
        "sessions-failed" => Some(Metric::SessionsFailed),
        "conn-rate" => Some(Metric::ConnRate),
        "req-rate" => Some(Metric::ReqRate),
        "reply-rate" => Some(Metric::ReplyRate),
        "net-io" => Some(Metric::NetIo),
        "connect-avg" => Some(Metric::ConnectAvg),
        "response-avg" => Some(Metric::ResponseAvg),
        "transfer-avg" => Some(Metric::TransferAvg),
        "lifetime-avg" => Some(Metric::LifetimeAvg),
        "lifetime-median" => Some(Metric::LifetimeMedian),
        "lifetime-min" => Some(Metric::LifetimeMin),
        "lifetime-max" => Some(Metric::LifetimeMax),
        "lifetime-stddev" => Some(Metric::LifetimeStddev),
        "cpu" => Some(Metric::Cpu),
        "cpu-user" => Some(Metric::CpuUser),
        "cpu-system" => Some(Metric::CpuSystem),
        "duration" => Some(Metric::Duration),
        _ => None,
    };
    if simple.is_some() {
        return simple;
    }
    if let Some(i) = ERROR_NAMES.iter().position(|&e| e == name) {
        return Some(Metric::Error(i));
    }
    let class = name.strip_prefix("status-").unwrap_or(name);
    if let [d @ b'1'..=b'5', b'x', b'x'] = class.as_bytes() {
        return Some(Metric::Status(usize::from(d - b'0')));
    }
    let (hist, q) = match name.split_once('-') {
        Some((h, q)) => {
            let hist = match h {
                "connect" => Hist::Connect,
                "response" => Hist::Response,
                "transfer" => Hist::Transfer,
                "lifetime" => Hist::Lifetime,
                "lateness" => Hist::Lateness,
                _ => return None,
            };
            (hist, q)
        }
        None => (Hist::Response, name),
    };
    QUANTILE_NAMES
        .iter()
        .find(|(n, _)| *n == q)
        .map(|&(_, q)| Metric::Quantile(hist, q))
}

impl Metric {
    fn kind(self) -> Kind {
        match self {
            Metric::Errors
            | Metric::Error(_)
            | Metric::Connections
            | Metric::Requests
            | Metric::Replies
            | Metric::Status(_)
            | Metric::Non2xx
            | Metric::SessionsFailed => Kind::Count,
            Metric::ConnRate => Kind::Rate("conn/s"),
            Metric::ReqRate => Kind::Rate("req/s"),
            Metric::ReplyRate => Kind::Rate("replies/s"),
            Metric::NetIo => Kind::Rate("KB/s"),
            Metric::ConnectAvg
            | Metric::ResponseAvg
            | Metric::TransferAvg
            | Metric::LifetimeAvg
            | Metric::LifetimeMedian
            | Metric::LifetimeMin
            | Metric::LifetimeMax
            | Metric::LifetimeStddev
            | Metric::Quantile(..) => Kind::Millis,
            Metric::Cpu | Metric::CpuUser | Metric::CpuSystem => Kind::Percent,
            Metric::Duration => Kind::Seconds,
        }
    }

    /// The figure, in the metric's unit (ms, s, per second, %, or a count).
    fn value(self, s: &Summary<'_>, stats: &Stats) -> f64 {
        let count = |n: u64| n as f64;
        match self {
            Metric::Errors => count(s.errors_total),
            Metric::Error(i) => count(s.errors[i]),
            Metric::Connections => count(s.connections),
            Metric::Requests => count(s.requests),
            Metric::Replies => count(s.replies),
            Metric::Status(c) => count(s.reply_status[c - 1]),
            Metric::Non2xx => count(s.replies - s.reply_status[1]),
            Metric::SessionsFailed => count(stats.sessions_failed),
            Metric::ConnRate => s.conn_rate,
            Metric::ReqRate => s.request_rate,
            Metric::ReplyRate if s.reply_rate.samples > 0 => s.reply_rate.avg,
            Metric::ReplyRate => s.replies as f64 / s.duration,
            Metric::NetIo => s.net_io_kb_per_s,
            Metric::ConnectAvg => s.connect_avg_ms,
            Metric::ResponseAvg => s.response_avg_ms,
            Metric::TransferAvg => s.transfer_avg_ms,
            Metric::LifetimeAvg => s.lifetime_avg_ms,
            Metric::LifetimeMedian => s.lifetime_median_ms,
            Metric::LifetimeMin => s.lifetime_min_ms,
            Metric::LifetimeMax => s.lifetime_max_ms,
            Metric::LifetimeStddev => s.lifetime_stddev_ms,
            Metric::Quantile(h, q) => {
                let h = match h {
                    Hist::Connect => &stats.hist.connect,
                    Hist::Response => &stats.hist.response,
                    Hist::Transfer => &stats.hist.transfer,
                    Hist::Lifetime => &stats.hist.lifetime,
                    Hist::Lateness => &stats.hist.lateness,
                };
                quantile_ms(h, q)
            }
            Metric::Cpu => s.cpu_total_pct,
            Metric::CpuUser => s.cpu_user_pct,
            Metric::CpuSystem => s.cpu_system_pct,
            Metric::Duration => s.duration,
        }
    }
}

/// One parsed `--fail-on` expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// The expression as typed (trimmed), for messages.
    expr: String,
    /// The metric name as typed (trimmed).
    name: String,
    metric: Metric,
    op: Op,
    /// The limit in the metric's unit.
    limit: f64,
}

/// The number at the start of `text` and the rest (its unit).
fn split_number(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-' | 'e' | 'E')))
        .unwrap_or(text.len());
    (&text[..end], text[end..].trim())
}

/// Parses `METRIC OP VALUE[UNIT]` (spaces allowed around each part). The error is a
/// message to print after `rshperf: --fail-on: `.
pub fn parse(expr: &str) -> Result<Threshold, String> {
    let expr = expr.trim();
    let Some(at) = expr.find(['<', '>', '=', '!']) else {
        return Err(format!(
            "no comparison in '{expr}' (use METRIC OP VALUE with OP one of > >= < <= == !=)"
        ));
    };
    let name = expr[..at].trim();
    if name.is_empty() {
        return Err(format!("no metric in '{expr}'"));
    }
    let key = name.to_ascii_lowercase().replace('_', "-");
    let metric = lookup(&key).ok_or_else(|| {
        format!(
            "unknown metric '{name}' in '{expr}' (metrics include errors, replies, \
             reply-rate, p99, connect-avg, cpu; see docs/json.md)"
        )
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
    .ok_or_else(|| format!("bad comparison in '{expr}' (use one of > >= < <= == !=)"))?;
    if rest.starts_with(['<', '>', '=', '!']) {
        return Err(format!(
            "bad comparison in '{expr}' (use one of > >= < <= == !=)"
        ));
    }
    if rest.is_empty() {
        return Err(format!("no value in '{expr}'"));
    }
    let (number, unit) = split_number(rest);
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("bad value '{rest}' in '{expr}'"))?;
    let unit = unit.to_ascii_lowercase();
    let scale = match (metric.kind(), unit.as_str()) {
        (Kind::Count, "") | (Kind::Rate(_), "" | "/s") | (Kind::Percent, "" | "%") => 1.0,
        (Kind::Millis, "" | "ms") | (Kind::Seconds, "s" | "") => 1.0,
        (Kind::Millis, "us" | "µs") => 1e-3,
        (Kind::Millis, "s") => 1e3,
        (Kind::Seconds, "ms") => 1e-3,
        (Kind::Seconds, "us" | "µs") => 1e-6,
        (kind, _) => {
            let what = match kind {
                Kind::Count => "a count and takes no unit".to_string(),
                Kind::Rate(per) => format!("a rate ({per}) and takes no unit or /s"),
                Kind::Millis | Kind::Seconds => "a time: use us, ms or s".to_string(),
                Kind::Percent => "a percentage: use % or no unit".to_string(),
            };
            return Err(format!("bad unit '{unit}' in '{expr}': {name} is {what}"));
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
pub fn parse_all(exprs: &[String]) -> Result<Vec<Threshold>, String> {
    exprs.iter().map(|e| parse(e)).collect()
}

/// The breach messages of `thresholds`, in order (empty when none is breached).
pub fn breaches(thresholds: &[Threshold], summary: &Summary<'_>, stats: &Stats) -> Vec<String> {
    thresholds
        .iter()
        .filter_map(|t| t.evaluate(summary, stats))
        .collect()
}

impl Threshold {
    /// The expression as typed (trimmed).
    pub fn expr(&self) -> &str {
        &self.expr
    }

    /// The comparison.
    pub fn op(&self) -> Op {
        self.op
    }

    /// The limit in the metric's unit (ms for times, s for `duration`, per second for
    /// rates, % for `cpu*`).
    pub fn limit(&self) -> f64 {
        self.limit
    }

    /// The metric's current figure, in the same unit as `limit`.
    pub fn actual(&self, summary: &Summary<'_>, stats: &Stats) -> f64 {
        self.metric.value(summary, stats)
    }

    /// `Some("threshold breached: p99>50ms (p99 = 73.412 ms)")` when the comparison
    /// holds, None otherwise.
    pub fn evaluate(&self, summary: &Summary<'_>, stats: &Stats) -> Option<String> {
        let actual = self.actual(summary, stats);
        if !self.op.holds(actual, self.limit) {
            return None;
        }
        let shown = match self.metric.kind() {
            Kind::Count => fixed(actual, 0),
            Kind::Rate(per) => format!("{} {per}", fixed(actual, 1)),
            Kind::Millis => format!("{} ms", fixed(actual, 3)),
            Kind::Seconds => format!("{} s", fixed(actual, 3)),
            Kind::Percent => format!("{}%", fixed(actual, 1)),
        };
        Some(format!(
            "threshold breached: {} ({} = {shown})",
            self.expr, self.name
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::run::RunInfo;
    use crate::model::stats::{ErrorKind, RateSample};
    use std::time::Duration;

    fn limit(expr: &str) -> f64 {
        parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}")).limit
    }

    fn err(expr: &str) -> String {
        parse(expr).expect_err(expr)
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
    fn every_documented_metric_parses_and_aliases_agree() {
        for (name, _) in metrics() {
            parse(&format!("{name}>1")).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        for alias in [
            "status-2xx",
            "cpu-system",
            "response-p99",
            "response-max",
            "FTAB_FULL",
        ] {
            parse(&format!("{alias}>1")).unwrap_or_else(|e| panic!("{alias}: {e}"));
        }
        assert_eq!(lookup("p99"), lookup("response-p99"));
        assert_eq!(lookup("2xx"), lookup("status-2xx"));
    }

    #[test]
    fn every_metric_is_in_the_documentation() {
        let doc = include_str!("../../docs/json.md");
        for (name, _) in metrics() {
            assert!(
                doc.contains(&format!("| `{name}` |")),
                "{name} not in docs/json.md"
            );
        }
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
            .contains("'nope'"));
    }

    /// 10 replies (8 × 2xx, 1 × 4xx, 1 × 5xx) over 2 s, response times 1..=10 ms.
    fn run() -> Stats {
        let mut s = Stats::new();
        for i in 1..=10u64 {
            s.on_connecting();
            s.on_connected(Duration::from_micros(2_500));
            s.on_request_sent(100);
            s.on_response(Duration::from_millis(i));
            let status = match i {
                9 => 404,
                10 => 503,
                _ => 200,
            };
            s.on_reply(status, 100, 1000, 0, Duration::from_micros(100));
            s.on_lifetime(Duration::from_millis(i + 1));
        }
        s.on_error(ErrorKind::ClientTimo);
        s.on_error(ErrorKind::ConnRefused);
        s
    }

    const RUN: RunInfo = RunInfo {
        duration: 2.0,
        cpu_user: 1.5,
        cpu_system: 0.5,
    };

    fn check(expr: &str, stats: &Stats) -> Option<String> {
        let summary = Summary::new(stats, &RUN);
        parse(expr).expect(expr).evaluate(&summary, stats)
    }

    #[test]
    fn evaluation_against_a_hand_built_run() {
        let s = run();
        let breached = |e: &str| check(e, &s).is_some();
        assert!(breached("errors>0"));
        assert!(breached("errors==2"));
        assert!(!breached("errors>2"));
        assert!(breached("client-timo>=1"));
        assert!(!breached("socket-timo>=1"));
        assert!(breached("connrefused==1"));
        assert!(breached("connections==10") && breached("requests==10"));
        assert!(breached("replies==10"));
        assert!(breached("2xx==8") && breached("4xx==1") && breached("status-5xx==1"));
        assert!(breached("non-2xx==2"));
        assert!(breached("conn-rate==5") && breached("req-rate==5"));
        // No rate sample: replies / duration.
        assert!(breached("reply-rate==5"));
        assert!(breached("connect-avg>2ms") && !breached("connect-avg>2.5ms"));
        assert!(breached("connect-avg==2500us"));
        assert!(breached("response-avg==5.5"));
        assert!(breached("transfer-avg==0.1"));
        assert!(breached("lifetime-avg==6.5"));
        assert!(breached("lifetime-median==6.5"));
        assert!(breached("lifetime-max==11") && breached("lifetime-min==2"));
        // Histogram figures: the highest value of the 3-significant-digit bucket.
        assert!(breached("p50>=5") && breached("p50<5.01"));
        assert!(breached("p90>=9") && breached("p90<9.01"));
        assert!(breached("p99>=10") && breached("p99<10.01"));
        assert!(breached("max>=10ms") && breached("p99.99<=0.0101s"));
        assert!(breached("connect-p99>=2.5") && breached("connect-p99<2.51"));
        assert!(breached("lifetime-p99>=11") && breached("lifetime-p99<11.02"));
        assert!(breached("lateness-p99==0") && breached("transfer-max==0.1"));
        assert!(breached("cpu==100%") && breached("cpu-user==75"));
        assert!(breached("duration==2") && breached("duration<2001ms"));
        assert!(breached("sessions-failed==0"));
        assert!(breached("net-io>0"));
    }

    #[test]
    fn reply_rate_uses_the_samples_when_there_are_some() {
        let mut s = run();
        s.rate_samples.push(RateSample {
            replies: 4000,
            sessions: 0,
            seconds: 5.0,
        });
        assert!(check("reply-rate==800", &s).is_some());
        assert_eq!(
            check("reply-rate<1000", &s).as_deref(),
            Some("threshold breached: reply-rate<1000 (reply-rate = 800.0 replies/s)")
        );
    }

    #[test]
    fn breach_messages_name_the_expression_and_the_figure() {
        let mut s = Stats::new();
        // 73 471 µs is the top of its histogram bucket, so p99 shows it exactly.
        s.on_response(Duration::from_micros(73_471));
        assert_eq!(
            check("p99>50ms", &s).as_deref(),
            Some("threshold breached: p99>50ms (p99 = 73.471 ms)")
        );
        assert_eq!(check("p99>80ms", &s), None);
        let s = run();
        assert_eq!(
            check("errors > 0", &s).as_deref(),
            Some("threshold breached: errors > 0 (errors = 2)")
        );
        assert_eq!(
            check("cpu>=90%", &s).as_deref(),
            Some("threshold breached: cpu>=90% (cpu = 100.0%)")
        );
        assert_eq!(
            check("duration>1", &s).as_deref(),
            Some("threshold breached: duration>1 (duration = 2.000 s)")
        );
        let ts =
            parse_all(&["errors>0".into(), "p99>50".into(), "replies<20".into()]).expect("valid");
        let summary = Summary::new(&s, &RUN);
        assert_eq!(breaches(&ts, &summary, &s).len(), 2);
    }

    #[test]
    fn undefined_figures_breach_nothing_but_not_equal() {
        let s = Stats::new();
        let zero = RunInfo {
            duration: 0.0,
            cpu_user: 0.0,
            cpu_system: 0.0,
        };
        let summary = Summary::new(&s, &zero);
        for (expr, breached) in [
            ("req-rate<1", false),
            ("req-rate>=0", false),
            ("req-rate!=0", true),
        ] {
            let t = parse(expr).expect(expr);
            assert_eq!(t.evaluate(&summary, &s).is_some(), breached, "{expr}");
        }
    }
}
