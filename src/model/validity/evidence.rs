//! `Evidence`: the measured inputs of the validity judgement, and `of`, which gathers
//! them from a run (`RunResult`: its `Stats`, `RunInfo` and `Machine`), what its
//! configuration asked (the mean period, `--max-connections`) and the figures its
//! thresholds name. Plain data: the unit tests, and work that schedules arrivals its
//! own way (a time-varying rate feeds its mean period), fill it directly. Called by
//! every front end that judges a run (`runner`, `sweep`, `ab`, `demo`).

use crate::model::config::Config;
use crate::model::run::RunResult;
use crate::model::stats::quantile::{quantile_key, QUANTILES};
use crate::model::stats::{quantile_ms, ErrorKind, Stats};
use crate::model::threshold::Threshold;

/// What the judgement reads. Times in the units their names say; `None`: not
/// measured (the kernel does not say, or no quota).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Evidence {
    /// Mean time between scheduled arrivals, s (0: no schedule: `--rate 0`).
    pub(crate) period_s: f64,
    /// Whether arrivals wait for free connections by design (`--max-connections`).
    pub(crate) capped: bool,
    /// Arrivals whose lateness was measured.
    pub(crate) arrivals: u64,
    /// Their lateness p50 and p99, ms.
    pub(crate) late_p50_ms: f64,
    pub(crate) late_p99_ms: f64,
    /// Arrivals the overload policy deferred (`raw.pacing.deferred`).
    pub(crate) deferred: u64,
    /// Of them, those that waited for a connection to close (`raw.pacing.waited`).
    pub(crate) held: u64,
    /// Arrivals that found the connection table full (`raw.pacing.table_waited`).
    pub(crate) table_waited: u64,
    /// The busiest engine thread's CPU time, % of its wall time.
    pub(crate) busiest_pct: f64,
    /// The engines' wall time, summed, s.
    pub(crate) engine_wall_s: f64,
    /// The engine thread that waited most for a CPU: its waits, % of its wall time.
    pub(crate) wait_pct: Option<f64>,
    /// Quota periods in which the process's cgroup was throttled, %.
    pub(crate) throttled_pct: Option<f64>,
    /// The CPU quota, cores.
    pub(crate) quota_cores: Option<f64>,
    /// Runnable tasks on the machine, mean over the run (the sampler not counted).
    pub(crate) run_queue: Option<f64>,
    /// Online cores of the machine (0: unknown).
    pub(crate) cores: u32,
    /// CPU time the hypervisor stole during the run, % of the machine's CPU time.
    pub(crate) steal_pct: Option<f64>,
    /// The fullest engine's most connections open at once.
    pub(crate) table_peak: u64,
    /// An engine's connection table slots (0: unknown).
    pub(crate) table_size: u64,
    /// Engines that ran.
    pub(crate) engines: u64,
    /// The descriptor limit (`RLIMIT_NOFILE`; 0: unknown).
    pub(crate) fd_limit: u64,
    /// Connections that failed for want of a descriptor (`fd-unavail`).
    pub(crate) fd_unavail: u64,
    /// The most local ports held towards one destination from one source address.
    pub(crate) ports_peak: u64,
    /// Ports of the ephemeral range (`ip_local_port_range`; 0: unknown).
    pub(crate) port_range: u64,
    /// Connects that found no free local port (`addrunavail`).
    pub(crate) addr_unavail: u64,
    /// Whether a signal cut the run short.
    pub(crate) interrupted: bool,
    /// The test duration, s.
    pub(crate) duration_s: f64,
    /// Connections still open when the run stopped.
    pub(crate) abandoned: u64,
    /// Arrivals due before the run stopped that it never started.
    pub(crate) unstarted: u64,
    /// The figures the run is judged on (its thresholds), with their samples.
    pub(crate) needs: Vec<Need>,
}

/// A figure a threshold names, and how many samples it has and needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Need {
    /// The threshold's metric as typed (`p99`).
    pub(crate) figure: String,
    /// What its samples are (`responses`, `5-s reply-rate samples`).
    pub(crate) of: &'static str,
    /// Samples the run has.
    pub(crate) samples: u64,
    /// Samples the figure needs to be other than an extreme value.
    pub(crate) needed: u64,
}

impl Evidence {
    /// Every measurement as the JSON block's `measured` member shows it, in order
    /// (the names of the table's `validity.measured` figures).
    pub(crate) fn measured(&self) -> Vec<(String, Option<f64>)> {
        let known = |v: u64| (v > 0).then_some(v as f64);
        [
            ("busiest_engine_pct", Some(self.busiest_pct)),
            ("engine_wait_pct", self.wait_pct),
            ("throttled_pct", self.throttled_pct),
            ("quota_cores", self.quota_cores),
            ("run_queue", self.run_queue),
            ("cores", known(u64::from(self.cores))),
            ("steal_pct", self.steal_pct),
            ("table_peak", Some(self.table_peak as f64)),
            ("table_size", known(self.table_size)),
            ("ports_peak", Some(self.ports_peak as f64)),
            ("port_range", known(self.port_range)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// The evidence of `run`, made for `cfg`, judged on `thresholds` (`--fail-on`, a
/// sweep's `--slo`).
pub(crate) fn of(cfg: &Config, run: &RunResult, thresholds: &[Threshold]) -> Evidence {
    let s = &run.stats;
    let late = &s.hist.lateness;
    let p = &s.pacing;
    let m = &run.machine;
    let engines = s.client.engines.max(1);
    Evidence {
        period_s: cfg.load().period().mean(),
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
