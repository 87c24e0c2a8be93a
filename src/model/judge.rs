//! Judging a finished run: `judge_run` gathers the validity judgement's `Evidence`
//! from a run (`RunResult`: its `Stats`, `RunInfo` and `Machine`), what its
//! configuration asked (the mean period, `--max-connections`) and the figures its
//! thresholds name (`needs`), and judges it (`model::validity::judge`). Kept apart
//! from `model::validity`, whose types the table of figures reads, so that those
//! import neither the configuration nor the thresholds (both import the table).
//! Called by every front end that judges a run (`runner`, `sweep`, `ab`, `demo`).

use crate::model::config::Config;
use crate::model::run::RunResult;
use crate::model::stats::quantile::{quantile_key, QUANTILES};
use crate::model::stats::{quantile_ms, ErrorKind, Stats};
use crate::model::threshold::Threshold;
use crate::model::validity::evidence::{Evidence, Need};
use crate::model::validity::{judge, Judged};

/// Judges `run`, made for `cfg`, on `thresholds` (`--fail-on`, a sweep's `--slo`).
pub(crate) fn judge_run(cfg: &Config, run: &RunResult, thresholds: &[Threshold]) -> Judged {
    let evidence = evidence_of(cfg, run, thresholds);
    let validity = judge(&evidence);
    Judged { evidence, validity }
}

/// The evidence of `run`, made for `cfg`, judged on `thresholds` (`--fail-on`, a
/// sweep's `--slo`).
fn evidence_of(cfg: &Config, run: &RunResult, thresholds: &[Threshold]) -> Evidence {
    let s = &run.stats;
    let late = &s.hist.lateness;
    let p = &s.pacing;
    let m = &run.machine;
    let engines = s.client.engines.max(1);
    Evidence {
        // Under a rate profile its length over its arrivals: the arrival-weighted mean
        // of the local spacing (the period's own mean is the peak's).
        period_s: cfg.mean_period(),
        capped: cfg.load().max_connections() > 0,
        arrivals: late.len(),
        late_p50_ms: quantile_ms(late, 0.5),
        late_p99_ms: quantile_ms(late, 0.99),
        deferred: p.deferred,
        held: p.waited,
        table_waited: p.table_waited,
        busiest_pct: s.client.busiest_pct,
        engine_wall_s: s.client.wall_s,
        wait_pct: s.client.waited_pct,
        throttled_pct: m.throttled_pct,
        quota_cores: m.quota_cores,
        run_queue: m.run_queue,
        cores: m.cores,
        steal_pct: m.steal_pct,
        table_peak: p.table_peak,
        table_size: p.conn_table / engines,
        engines,
        fd_limit: p.fd_limit,
        fd_unavail: s.errors[ErrorKind::FdUnavail.index()],
        ports_peak: p.ports_peak,
        port_range: p.port_range,
        addr_unavail: s.errors[ErrorKind::AddrUnavail.index()],
        interrupted: run.interrupted || s.interrupted,
        duration_s: run.info.duration,
        abandoned: s.abandoned,
        unstarted: p.unstarted,
        needs: needs(thresholds, s),
    }
}

/// The samples of the figures `thresholds` name: a quantile q of a latency histogram
/// needs ⌈1/(1−q)⌉ values (below that it is the largest value), a 5-s reply-rate
/// figure one sample (its standard deviation two). The `reply-rate` alias, which falls
/// back to the whole run's rate without a sample, needs none.
pub(crate) fn needs(thresholds: &[Threshold], s: &Stats) -> Vec<Need> {
    let mut out = Vec::new();
    for t in thresholds {
        let m = t.metric();
        let figure = m.figure.as_str();
        let need = |of, samples, needed| Need {
            figure: t.name().to_string(),
            of,
            samples,
            needed,
        };
        if let Some(rest) = figure.strip_prefix("reply_rate_") {
            if m.unless_none.is_none() && rest != "samples" {
                let needed = if rest == "stddev" { 2 } else { 1 };
                let samples = s.rate_samples.len() as u64;
                out.push(need("5-s reply-rate samples", samples, needed));
            }
            continue;
        }
        for (hist, h) in s.hist.named() {
            for (q, label) in QUANTILES {
                let key = quantile_key(label);
                if figure == format!("percentiles_{hist}_{key}") {
                    let needed = (1.0 / (1.0 - q)).round() as u64;
                    out.push(need(values_of(hist), h.len(), needed));
                }
            }
        }
    }
    out
}

/// What the values of histogram `hist` are, for messages.
fn values_of(hist: &str) -> &'static str {
    match hist {
        "response" => "responses",
        "connect" => "connects",
        "transfer" => "transfers",
        "lifetime" => "connection lifetimes",
        "lateness" => "arrivals",
        _ => "values",
    }
}
