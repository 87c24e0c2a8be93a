//! `--fail-on=EXPR` and sweep's `--slo`: evaluating parsed thresholds against a run.
//!
//! The expression language and the metric names are the model's
//! (`model::threshold`, names from the table of figures); this module looks a
//! threshold's figure up in a run's `Report` and words the breach (`rshperf:
//! threshold breached: p99>50ms (p99 = 73.471 ms)`); the runner prints the breaches
//! on stderr and exits 3; `junit_cases` gives one JUnit test case per threshold
//! (`--junit`). A measured value is shown in its figure's unit (`Kind`, from the
//! table). Computes no figure itself. A figure that is undefined
//! (`null`: a rate over a zero test duration) satisfies no comparison except `!=`.

#[cfg(test)]
use crate::model::threshold::parse;
pub(crate) use crate::model::threshold::{parse_all, Threshold};

use crate::model::report::Report;
use crate::model::threshold::{kind_of, Kind};
use crate::output::junit::Case;
use crate::wire::cfmt::fixed;

/// Evaluation of a `Threshold` against a run's report.
pub(crate) trait Evaluate {
    /// The metric's figure in `report`, in the unit of the threshold's limit (NaN when
    /// the figure is undefined).
    fn actual(&self, report: &Report) -> f64;
}

/// The figure called `name` in `figures` (NaN when undefined or unknown).
fn figure(figures: &[(String, Option<f64>)], name: &str) -> f64 {
    figures
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, v)| *v)
        .unwrap_or(f64::NAN)
}

/// The value of `t`'s metric among `figures` (`Report::metrics`).
fn value_of(t: &Threshold, figures: &[(String, Option<f64>)]) -> f64 {
    let m = t.metric();
    match m.unless_none {
        Some((count, other)) if figure(figures, count) == 0.0 => figure(figures, other),
        _ => figure(figures, &m.figure),
    }
}

/// `Some("threshold breached: p99>50ms (p99 = 73.412 ms)")` when `actual` breaches
/// `t`, None otherwise.
fn message(t: &Threshold, actual: f64) -> Option<String> {
    if !t.op().holds(actual, t.limit()) {
        return None;
    }
    Some(format!(
        "threshold breached: {} ({})",
        t.expr(),
        measured(t, actual)
    ))
}

impl Evaluate for Threshold {
    fn actual(&self, report: &Report) -> f64 {
        value_of(self, &report.metrics())
    }
}

/// The measured value of `t`'s figure as the messages show it (`p99 = 73.471 ms`).
fn measured(t: &Threshold, actual: f64) -> String {
    let shown = match kind_of(&t.metric().figure) {
        Kind::Count => fixed(actual, 0),
        Kind::Rate(per) => format!("{} {per}", fixed(actual, 1)),
        Kind::Millis => format!("{} ms", fixed(actual, 3)),
        Kind::Seconds => format!("{} s", fixed(actual, 3)),
        Kind::Percent => format!("{}%", fixed(actual, 1)),
    };
    format!("{} = {shown}", t.name())
}

/// One JUnit test case per threshold, in order: named by the expression, failed with
/// the breach message when breached, the measured value as its output.
pub(crate) fn junit_cases(thresholds: &[Threshold], report: &Report) -> Vec<Case> {
    let figures = report.metrics();
    thresholds
        .iter()
        .map(|t| {
            let actual = value_of(t, &figures);
            Case {
                name: t.expr().to_string(),
                failure: message(t, actual),
                skipped: None,
                output: measured(t, actual),
            }
        })
        .collect()
}

/// The breach messages of `thresholds`, in order (empty when none is breached).
pub(crate) fn breaches(thresholds: &[Threshold], report: &Report) -> Vec<String> {
    let figures = report.metrics();
    thresholds
        .iter()
        .filter_map(|t| message(t, value_of(t, &figures)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::report::Facts;
    use crate::model::run::RunInfo;
    use crate::model::stats::{ErrorKind, RateSample, Stats};
    use crate::model::threshold::{aliases, metric_names};
    use std::time::Duration;

    #[test]
    fn the_documentation_lists_exactly_the_names_and_aliases() {
        let doc = include_str!("../../docs/json.md");
        let names = crate::output::doc_table(doc, "### 2.8 Figure names");
        assert_eq!(names, metric_names(), "docs/json.md §2.8");
        let heading = "### 4.2 Aliases";
        let documented: Vec<String> = crate::output::doc_table(doc, heading)
            .iter()
            .map(|a| a.to_lowercase().replace(['-', '.'], "_"))
            .collect();
        let (keys, figures): (Vec<String>, Vec<String>) =
            aliases().into_iter().map(|(a, m)| (a, m.figure)).unzip();
        assert_eq!(documented, keys, "docs/json.md §4.2, first column");
        let named = crate::output::doc_column(doc, heading, 1);
        assert_eq!(named, figures, "docs/json.md §4.2, second column");
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

    fn report(stats: &Stats, run: &RunInfo) -> Report {
        Report::new(stats, run, &Facts::default())
    }

    fn check(expr: &str, stats: &Stats) -> Option<String> {
        let t = parse(expr).expect(expr);
        message(&t, t.actual(&report(stats, &RUN)))
    }

    #[test]
    fn invalid_fails_a_run_judged_invalid_and_only_that() {
        use crate::model::validity::{judge, Evidence};
        let t = parse(" Invalid ").expect("invalid");
        assert_eq!((t.expr(), t.name()), ("invalid", "validity_valid"));
        let s = run();
        let judged = |e: &Evidence| Facts {
            validity: Some(judge(e)),
            ..Facts::default()
        };
        let mut e = Evidence {
            period_s: 0.001,
            busiest_pct: 97.0,
            engine_wall_s: 2.0,
            ..Evidence::default()
        };
        let invalid = Report::new(&s, &RUN, &judged(&e));
        assert_eq!(
            message(&t, t.actual(&invalid)).as_deref(),
            Some("threshold breached: invalid (validity_valid = 0)")
        );
        e.busiest_pct = 20.0;
        let valid = Report::new(&s, &RUN, &judged(&e));
        assert_eq!(message(&t, t.actual(&valid)), None);
        // A document without a judgement (an earlier release's) is not failed.
        assert_eq!(message(&t, t.actual(&report(&s, &RUN))), None);
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
        assert_eq!(breaches(&ts, &report(&s, &RUN)).len(), 2);
    }

    #[test]
    fn junit_cases_one_per_threshold() {
        let ts = parse_all(&["errors>0".into(), "p99>50".into()]).expect("valid");
        let cases = junit_cases(&ts, &report(&run(), &RUN));
        let xml = crate::output::junit::document("rshperf", "rshperf.fail-on", &cases, 2.0);
        crate::output::junit::tests::check_junit(
            &xml,
            &[
                (
                    "errors>0",
                    Some("threshold breached: errors>0 (errors = 2)"),
                ),
                ("p99>50", None),
            ],
        );
        assert_eq!(cases[1].output, "p99 = 10.007 ms");
    }

    #[test]
    fn undefined_figures_breach_nothing_but_not_equal() {
        let s = Stats::new();
        let zero = RunInfo {
            duration: 0.0,
            cpu_user: 0.0,
            cpu_system: 0.0,
        };
        let r = report(&s, &zero);
        for (expr, breached) in [
            ("req-rate<1", false),
            ("req-rate>=0", false),
            ("req-rate!=0", true),
        ] {
            let t = parse(expr).expect(expr);
            assert_eq!(breaches(&[t], &r).len(), usize::from(breached), "{expr}");
        }
    }
}
