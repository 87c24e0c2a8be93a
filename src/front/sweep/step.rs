//! One step of a sweep: its configuration, its run, its figures and its verdict.
//!
//! Owns the step's `Config` (the base with `--rate` and, with `--const-test-time`,
//! rate × T arrivals), the demanded and achieved request rates, the pass/fail rules
//! (`--min-achieved`, `--max-errors`, `--slo`; a client-bound run is the client's
//! verdict, whether or not it met them), and the figures of the table (autobench's and
//! rshperf's; the reply-rate columns of a step shorter than httperf's 5-s sample period
//! come from 1-s windows). Runs the engines through `execute::execute`, like
//! every front end; writes the step's `--csv` row when the per-run option is given.

use std::path::Path;

use serde_json::Value;

use crate::engine::execute::{self, ExecOptions, Hooks};
use crate::engine::metrics::Exporter;
use crate::front::error::Error;
use crate::model::config::doc::ConfigDoc;
use crate::model::config::{Config, StartAt};
use crate::model::figure::second;
use crate::model::judge;
use crate::model::report::{Facts, Report};
use crate::model::run::{RunInfo, RunResult};
use crate::model::stats::quantile_ms;
use crate::model::stats::Stats;
use crate::model::summary::RateSummary;
use crate::model::threshold::Threshold;
use crate::model::workload::rate::Period;
use crate::model::workload::{stripe_share, Kind, Workload};
use crate::output::advice::{self, Advice};
use crate::output::csv;
use crate::output::error::OutputError;
use crate::output::json;
use crate::output::summary::Summary;
use crate::output::threshold::Evaluate;

use super::args::Sweep;
use super::plan::Verdict;
use super::rules::Rules;

/// The figures of a step's table row.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Figures {
    /// Request rate, req/s.
    pub(crate) req_rate: f64,
    /// Connection rate, conn/s.
    pub(crate) con_rate: f64,
    /// Reply-rate samples: min, avg, max, stddev (`reply_rate_samples`).
    pub(crate) rep_rate: [f64; 4],
    /// Mean response time, ms.
    pub(crate) resp_time_ms: f64,
    /// Net I/O, KB/s.
    pub(crate) net_io_kbs: f64,
    /// Errors as a percentage of replies, 101 without replies (autobench's rule).
    pub(crate) errors_pct_of_replies: f64,
    /// Errors.
    pub(crate) errors: u64,
    /// Connections.
    pub(crate) connections: u64,
    /// Response time p50, p90, p99, ms.
    pub(crate) response_ms: [f64; 3],
    /// Arrival lateness p99, ms.
    pub(crate) lateness_p99_ms: f64,
    /// Busiest engine thread, % of a core.
    pub(crate) client_cpu_pct: f64,
}

/// A finished step.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    /// Demanded arrival rate (connections or sessions per second).
    pub(crate) rate: f64,
    /// Arrivals made.
    pub(crate) arrivals: u64,
    /// Demanded request rate, req/s.
    pub(crate) demanded: f64,
    /// Successful replies (status below 400) per second.
    pub(crate) achieved: f64,
    /// `achieved` as a percentage of `demanded`.
    pub(crate) achieved_pct: f64,
    /// Table figures.
    pub(crate) figures: Figures,
    /// The run's findings (client-bound, …).
    pub(crate) advice: Vec<Advice>,
    /// Whether the client was the limit (the verdict `Client`).
    pub(crate) client_bound: bool,
    /// The verdict.
    pub(crate) verdict: Verdict,
    /// Why it did not pass (empty when it passed).
    pub(crate) reasons: Vec<String>,
    /// When only the rate criterion was missed: the highest rate expected to pass,
    /// `rate` × achieved % ÷ `--min-achieved` (a saturated server or client achieves
    /// its capacity), for `--find-max`.
    pub(crate) estimate: Option<f64>,
    /// The run's JSON document (when the sweep writes `--json`).
    pub(crate) doc: Option<Value>,
    /// Whether SIGINT/SIGTERM stopped it.
    pub(crate) interrupted: bool,
}

/// Requests one arrival demands (mean over `--wsesslog` sessions).
pub(crate) fn calls_per_arrival(cfg: &Config, work: &Workload) -> f64 {
    match &work.kind {
        Kind::Request => cfg.load().num_calls() as f64,
        Kind::Wsess { calls, .. } => *calls as f64,
        Kind::Wsesslog { sessions, .. } => {
            let calls: usize = sessions
                .iter()
                .map(|s| s.iter().map(|b| b.calls.len()).sum::<usize>())
                .sum();
            calls as f64 / sessions.len().max(1) as f64
        }
        // The embedded objects are known only from the replies: count the page
        // requests themselves.
        Kind::Wsesspage { pages, .. } => *pages as f64,
    }
}

/// How long one arrival lasts at best beyond its start (think times of sessions), s.
fn ideal_tail(work: &Workload) -> f64 {
    match &work.kind {
        Kind::Request => 0.0,
        Kind::Wsess {
            calls,
            burst,
            think,
        } => (calls.div_ceil((*burst).max(1)).saturating_sub(1)) as f64 * think,
        Kind::Wsesslog { sessions, think } => {
            let total: f64 = sessions
                .iter()
                .map(|s| {
                    let n = s.len().saturating_sub(1);
                    s.iter()
                        .take(n)
                        .map(|b| b.think.unwrap_or(*think))
                        .sum::<f64>()
                })
                .sum();
            total / sessions.len().max(1) as f64
        }
        Kind::Wsesspage { pages, think, .. } => pages.saturating_sub(1) as f64 * think,
    }
}

/// The configuration of the step at `rate` starting at `start` (seconds since the
/// epoch; None: at once), derived from the sweep's base through the builder: the
/// rate, and with `--const-test-time` rate × T arrivals (sessions of `--wsess` or
/// `--wsesslog`, else connections).
pub(crate) fn config(sweep: &Sweep, rate: f64, start: Option<f64>) -> Result<Config, Error> {
    let base = &sweep.base;
    let mut b = base.to_builder();
    b.rate_period(Period::Deterministic(1.0 / rate));
    if let Some(t) = sweep.rules.const_test_time {
        let n = (rate * t).round().max(1.0) as u64;
        let s = base.sessions();
        match (s.wsess(), s.wsesslog()) {
            (Some(w), _) => b.wsess(Some(w.with_sessions(n))),
            (_, Some(w)) => b.wsesslog(Some(w.with_sessions(n))),
            _ => b.num_conns(n),
        };
    }
    if let Some(t) = start {
        b.start_at(Some(StartAt::Unix(t)));
    }
    Ok(b.build().map_err(|r| r.error)?.config)
}

/// The verdict of a step that missed `reasons` (empty: it met every criterion);
/// `client_bound`: the run's client-bound finding. A client-bound run is `Client`
/// whether or not it met the criteria: its figures describe the client (a saturated
/// engine, or one kept from its schedule), so it tells nothing about the server.
pub(crate) fn verdict(reasons: &[String], client_bound: bool) -> Verdict {
    if client_bound {
        Verdict::Client
    } else if reasons.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail
    }
}

/// Shortest 1-s window that is a reply-rate sample, s: the last second of a schedule
/// of whole seconds ends a little early (3 s at 500/s: the last arrival at 2.998 s).
const MIN_WINDOW_S: f64 = 0.9;

/// The reply-rate statistics of a step: httperf's 5-s samples (`five_s`) when the
/// run had any; otherwise the reply rate of each second of `seconds` (the per-second
/// timeline's (length, replies)) that lasted at least `MIN_WINDOW_S` (replies ÷ its
/// length); a run
/// without such a second is one sample over its `duration` (`replies` ÷ `duration`).
/// So a step with replies never shows 0.
pub(crate) fn reply_rate_samples(
    five_s: &RateSummary,
    seconds: &[(f64, f64)],
    replies: u64,
    duration: f64,
) -> RateSummary {
    if five_s.samples > 0 {
        return *five_s;
    }
    let whole: Vec<f64> = seconds
        .iter()
        .filter(|(len, _)| *len >= MIN_WINDOW_S)
        .map(|(len, replies)| replies / len)
        .collect();
    if !whole.is_empty() {
        RateSummary::from_rates(whole.into_iter())
    } else if duration > 0.0 && replies > 0 {
        RateSummary::from_rates(std::iter::once(replies as f64 / duration))
    } else {
        *five_s
    }
}

/// The share of the arrivals `cfg`'s partition makes (1 without `--partition`).
pub(crate) fn partition_share(cfg: &Config, arrivals: u64) -> f64 {
    let (i, n) = cfg.load().partition();
    if n <= 1 || arrivals == 0 {
        return 1.0;
    }
    stripe_share(arrivals, i, n) as f64 / arrivals as f64
}

/// What a step measured, as `judge` needs it: one partition's run, or the merge of
/// every partition's.
pub(crate) struct Measured<'a> {
    /// Demanded arrival rate of the whole step.
    pub(crate) rate: f64,
    /// Arrivals of the whole step (every partition's).
    pub(crate) arrivals: u64,
    /// The share of those arrivals these figures cover (1 for a whole step).
    pub(crate) share: f64,
    /// Requests per arrival (`calls_per_arrival`).
    pub(crate) calls_per_arrival: f64,
    /// The shortest time an arrival lasts past its start (`ideal_tail`), s.
    pub(crate) ideal_tail: f64,
    /// The statistics.
    pub(crate) stats: &'a Stats,
    /// Duration and CPU times.
    pub(crate) info: &'a RunInfo,
    /// The figures derived from them.
    pub(crate) report: &'a Report,
    /// Findings (client-bound, …).
    pub(crate) advice: Vec<Advice>,
    /// Whether the validity judgement says the client was the limit
    /// (`model::validity::Validity::client_bound`).
    pub(crate) client_bound: bool,
    /// Whether SIGINT/SIGTERM stopped it.
    pub(crate) interrupted: bool,
    /// The run's document, when the sweep writes `--json`.
    pub(crate) doc: Option<Value>,
}

/// The ideal tail of a workload (for `Measured::ideal_tail`), s.
pub(crate) fn tail_of(work: &Workload) -> f64 {
    ideal_tail(work)
}

/// Runs the step at `rate` (starting at `start`, seconds since the epoch, when the
/// sweep is partitioned) and judges it; `metrics`: where it publishes
/// (`--metrics-listen`) and its step number, from 1.
pub(crate) fn run(
    sweep: &Sweep,
    work: &Workload,
    rate: f64,
    start: Option<f64>,
    metrics: Option<(&Exporter, u32)>,
) -> Result<Step, Error> {
    let cfg = config(sweep, rate, start)?;
    let hooks = Hooks {
        metrics: metrics.map(|(e, step)| (e, Some(step))),
        ..Hooks::default()
    };
    let result = execute::execute_with(&cfg, work, ExecOptions { echo: false }, hooks)?;
    let stats = &result.stats;
    let RunOutputs {
        report,
        advice,
        client_bound,
        doc,
    } = outputs(sweep, &cfg, work, &result, &sweep.rules.thresholds)?;
    let arrivals = work.arrivals(&cfg);
    Ok(judge(
        &sweep.rules,
        Measured {
            rate,
            arrivals,
            share: partition_share(&cfg, arrivals),
            calls_per_arrival: calls_per_arrival(&cfg, work),
            ideal_tail: ideal_tail(work),
            stats,
            info: &result.info,
            report: &report,
            advice,
            client_bound,
            interrupted: result.interrupted,
            doc,
        },
    ))
}

/// What a sweep's run gives beside its statistics: the report, the findings, whether
/// the client bound it, and its JSON document when the sweep writes one.
pub(crate) struct RunOutputs {
    /// The run's report.
    pub(crate) report: Report,
    /// Its findings.
    pub(crate) advice: Vec<Advice>,
    /// Whether the validity judgement found the client the bound.
    pub(crate) client_bound: bool,
    /// Its JSON document (`--json`), with the findings.
    pub(crate) doc: Option<Value>,
}

/// Judges a sweep's run (`thresholds`: the SLOs judged on the run as a whole), makes
/// its report and findings, appends its `--csv` row and makes its JSON document.
pub(crate) fn outputs(
    sweep: &Sweep,
    cfg: &Config,
    work: &Workload,
    result: &RunResult,
    thresholds: &[Threshold],
) -> Result<RunOutputs, Error> {
    let stats = &result.stats;
    let judged = judge::judge_run(cfg, result, thresholds);
    let report = Report::new(
        stats,
        &result.info,
        &Facts::of(
            cfg.load().call_rate(),
            &result.meta,
            judged.validity.clone(),
        ),
    );
    let advice = advice::assess_without_classic_report(cfg, work, result, &judged);
    if let Some(path) = cfg.output().csv() {
        csv::append_row(Path::new(path), cfg, &report, &advice).map_err(|source| {
            OutputError::File {
                option: "--csv",
                path: path.to_string(),
                source,
            }
        })?;
    }
    let doc = sweep.json.is_some().then(|| {
        let mut doc = json::document(
            &ConfigDoc::of(cfg),
            &report,
            stats,
            &result.info,
            &result.meta,
        );
        doc["findings"] = advice::to_json(&advice);
        doc
    });
    Ok(RunOutputs {
        report,
        advice,
        client_bound: judged.validity.client_bound(),
        doc,
    })
}

/// Judges what a step measured: the achieved rate against this share's demanded rate
/// over the schedule's window, `--max-errors`, `--slo`; the verdict (a miss of a
/// client-bound step is the client's); the table's figures.
pub(crate) fn judge(rules: &Rules, m: Measured<'_>) -> Step {
    let (stats, rate) = (m.stats, m.rate);
    let summary = Summary::new(stats, m.info);
    let report = m.report;
    let advice = m.advice;
    let arrivals = m.arrivals;
    let demanded = rate * m.calls_per_arrival * m.share;
    let ok: u64 = stats.replies_by_class[1..=3].iter().sum();
    let span = arrivals as f64 / rate;
    let window = span.max(m.info.duration - m.ideal_tail);
    let achieved = if window > 0.0 {
        ok as f64 / window
    } else {
        0.0
    };
    let achieved_pct = if demanded > 0.0 {
        100.0 * achieved / demanded
    } else {
        0.0
    };
    let o = rules;
    let mut reasons = Vec::new();
    let rate_missed = achieved_pct < o.min_achieved;
    if rate_missed {
        reasons.push(format!(
            "achieved {achieved_pct:.1} % of the demanded rate (below {} %)",
            o.min_achieved
        ));
    }
    if summary.errors_total > o.max_errors {
        reasons.push(format!(
            "{} errors (more than {})",
            summary.errors_total, o.max_errors
        ));
    }
    for t in &rules.thresholds {
        let actual = t.actual(report);
        if !t.op().holds(actual, t.limit()) {
            reasons.push(format!("SLO {} missed (actual {actual:.3})", t.expr()));
        }
    }
    if m.interrupted {
        reasons.push("interrupted".into());
    }
    let estimate =
        (rate_missed && reasons.len() == 1).then(|| rate * achieved_pct / o.min_achieved);
    let verdict = verdict(&reasons, m.client_bound);
    let h = &stats.hist;
    let samples = reply_rate_samples(
        &summary.reply_rate,
        &second::series(&stats.timeline, "replies"),
        summary.replies,
        m.info.duration,
    );
    let figures = Figures {
        req_rate: summary.request_rate,
        con_rate: summary.conn_rate,
        rep_rate: [samples.min, samples.avg, samples.max, samples.stddev],
        resp_time_ms: summary.response_avg_ms,
        net_io_kbs: summary.net_io_kb_per_s,
        errors_pct_of_replies: if summary.replies == 0 {
            101.0
        } else {
            100.0 * summary.errors_total as f64 / summary.replies as f64
        },
        errors: summary.errors_total,
        connections: summary.connections,
        response_ms: [0.5, 0.9, 0.99].map(|q| quantile_ms(&h.response, q)),
        lateness_p99_ms: quantile_ms(&h.lateness, 0.99),
        client_cpu_pct: stats.client.busiest_pct,
    };
    Step {
        rate,
        arrivals,
        demanded,
        achieved,
        achieved_pct,
        figures,
        advice,
        client_bound: m.client_bound,
        verdict,
        reasons,
        estimate,
        doc: m.doc,
        interrupted: m.interrupted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_bound_step_is_the_clients_whether_or_not_it_met_the_criteria() {
        let missed = vec!["achieved 80.0 % of the demanded rate (below 95 %)".to_string()];
        assert_eq!(verdict(&[], false), Verdict::Pass);
        assert_eq!(verdict(&missed, false), Verdict::Fail);
        // An engine at its capacity that still met every criterion: not a plain pass.
        assert_eq!(verdict(&[], true), Verdict::Client);
        assert_eq!(verdict(&missed, true), Verdict::Client);
    }

    /// A second of `seconds` s with `replies` replies (its start, `_i`, is not used).
    fn second(_i: usize, seconds: f64, replies: u64) -> (f64, f64) {
        (seconds, replies as f64)
    }

    #[test]
    fn short_steps_sample_the_reply_rate_over_whole_seconds() {
        let none = RateSummary::from_rates(std::iter::empty());
        // A 3.4-s step: three whole seconds (the partial fourth is left out).
        let seconds = [
            second(0, 1.0, 900),
            second(1, 1.0, 1000),
            second(2, 1.0, 1100),
            second(3, 0.4, 120),
        ];
        let r = reply_rate_samples(&none, &seconds, 3120, 3.4);
        assert_eq!((r.min, r.avg, r.max, r.samples), (900.0, 1000.0, 1100.0, 3));
        assert_eq!(r.stddev, 100.0);
        // A 2.95-s step: its last second, 0.95 s long, is a sample of its own length.
        let seconds = [
            second(0, 1.0, 500),
            second(1, 1.0, 500),
            second(2, 0.95, 475),
        ];
        let r = reply_rate_samples(&none, &seconds, 1475, 2.95);
        assert_eq!((r.min, r.avg, r.max, r.samples), (500.0, 500.0, 500.0, 3));
        // Shorter than a second: one sample over the whole step.
        let r = reply_rate_samples(&none, &[second(0, 0.5, 40)], 40, 0.5);
        assert_eq!(
            (r.min, r.avg, r.max, r.stddev, r.samples),
            (80.0, 80.0, 80.0, 0.0, 1)
        );
        // No replies: nothing to sample.
        let r = reply_rate_samples(&none, &[second(0, 0.5, 0)], 0, 0.5);
        assert_eq!(r, none);
        // httperf's 5-s samples win when the step had any.
        let five = RateSummary::from_rates([990.0, 1010.0].into_iter());
        assert_eq!(reply_rate_samples(&five, &seconds, 3120, 10.2), five);
    }
}
