//! The classic run: `rshperf [httperf options]` runs the engines (`engine::execute`)
//! and prints the report: the classic text, the session block, per-server lines,
//! percentiles, the pool, HTTP/2 and pacing lines, then `--json`, `--csv`,
//! `--timeline`, `--html`, the findings on stderr and the `--fail-on` verdict (exit 3).
//! Called by `lib::run` with a validated `Config`.

use std::io::{self, Write};
use std::path::Path;

use crate::engine::execute::{execute_with, text_out, ExecOptions, Hooks};
use crate::engine::metrics::Exporter;
use crate::model::config::Config;
use crate::model::report::{Facts, Report};
use crate::model::workload::Workload;
use crate::output::advice;
use crate::output::classic::write_report;
use crate::output::csv;
use crate::output::error::OutputError;
use crate::output::extras;
use crate::output::html;
use crate::output::json;
use crate::output::percentiles::write_percentiles;
use crate::output::servers::write_servers;
use crate::output::session::write_session_block;
use crate::output::summary::Summary;
use crate::output::threshold;
use crate::output::timeline;
use crate::wire::error::Error;

/// Runs the test described by `cfg`, printing everything on stdout; returns the exit
/// status (0, or 3 when a `--fail-on` threshold is breached).
pub(crate) fn run(cfg: &Config) -> Result<i32, Error> {
    let work = Workload::from_config(cfg)?;
    let exporter = cfg.output.metrics_listen.map(Exporter::start).transpose()?;
    let hooks = Hooks {
        metrics: exporter.as_ref().map(|e| (e, None)),
        ..Hooks::default()
    };
    let run = execute_with(cfg, &work, ExecOptions { echo: true }, hooks)?;
    let (stats, info) = (&run.stats, &run.info);
    let mut summary = Summary::new(stats, info);
    if cfg.output.periodic_stats {
        summary.periodic = Some(stats.status_200_302);
    }
    let report = Report::new(stats, info, &Facts::of(cfg.load.call_rate, &run.meta));
    if text_out(cfg) {
        let mut out = io::BufWriter::new(io::stdout().lock());
        let _ = write_report(&mut out, &summary, cfg.output.verbose);
        if work.is_session() {
            let _ = write_session_block(&mut out, &report.sessions);
        }
        let labels: Vec<String> = work.targets.iter().map(|t| t.label.clone()).collect();
        let _ = write_servers(&mut out, &stats.servers, &labels, info.duration);
        if cfg.output.percentiles || cfg.output.verbose > 0 {
            let _ = write_percentiles(&mut out, stats);
        }
        if cfg.tls.enabled && cfg.output.verbose > 0 {
            let [full, resumed] = stats.tls_handshakes;
            let _ = writeln!(out, "TLS handshakes: full {full} resumed {resumed}");
        }
        if let Some(c) = &report.call_rate {
            let _ = writeln!(out, "{}", extras::call_rate_lines(c));
        }
        if cfg.output.verbose > 0 {
            if let Some(h) = &report.http2 {
                let _ = writeln!(out, "{}", extras::http2_lines(h));
            }
            if let Some(h) = &report.http3 {
                let _ = writeln!(out, "{}", extras::http3_lines(h));
            }
            for line in extras::pacing_lines(&stats.pacing) {
                let _ = writeln!(out, "{line}");
            }
        }
        let _ = out.flush();
    }
    let advice = advice::assess(cfg, &work, &run);
    if let Some(dest) = &cfg.output.json {
        let mut doc = json::document(json::config_json(cfg), &report, stats, info, &run.meta);
        doc["findings"] = advice::to_json(&advice);
        json::write_value_to(dest, &doc).map_err(|source| OutputError::File {
            option: "--json",
            path: dest.clone(),
            source,
        })?;
    }
    if let Some(path) = &cfg.output.csv {
        csv::append_row(Path::new(path), cfg, &report, &advice).map_err(|source| {
            OutputError::File {
                option: "--csv",
                path: path.clone(),
                source,
            }
        })?;
    }
    if let Some(path) = &cfg.output.timeline {
        timeline::write_csv(Path::new(path), &stats.timeline).map_err(|source| {
            OutputError::File {
                option: "--timeline",
                path: path.clone(),
                source,
            }
        })?;
    }
    if let Some(path) = &cfg.output.html {
        html::write_run(Path::new(path), cfg, &run, &summary, &advice).map_err(|source| {
            OutputError::File {
                option: "--html",
                path: path.clone(),
                source,
            }
        })?;
    }
    advice::print(&advice);
    let breached = threshold::breaches(&cfg.output.fail_on, &report);
    for b in &breached {
        eprintln!("rshperf: {b}");
    }
    if let Some(e) = exporter {
        // The report is out: the last scrapes see the totals it printed.
        e.linger(cfg.output.metrics_linger);
    }
    Ok(if breached.is_empty() { 0 } else { 3 })
}
