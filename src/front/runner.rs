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
use crate::model::workload::Workload;
use crate::output::advice;
use crate::output::classic::write_report;
use crate::output::csv;
use crate::output::html;
use crate::output::json;
use crate::output::percentiles::write_percentiles;
use crate::output::servers::write_servers;
use crate::output::session::{write_session_block, SessionSummary};
use crate::output::summary::Summary;
use crate::output::threshold;
use crate::output::timeline;
use crate::wire::error::Error;

/// Runs the test described by `cfg`, printing everything on stdout; returns the exit
/// status (0, or 3 when a `--fail-on` threshold is breached).
pub fn run(cfg: &Config) -> Result<i32, Error> {
    let thresholds =
        threshold::parse_all(&cfg.fail_on).map_err(|m| Error::Usage(format!("--fail-on: {m}")))?;
    let work = Workload::from_config(cfg)?;
    let exporter = cfg.metrics_listen.map(Exporter::start).transpose()?;
    let hooks = Hooks {
        metrics: exporter.as_ref().map(|e| (e, None)),
        ..Hooks::default()
    };
    let run = execute_with(cfg, &work, ExecOptions { echo: true }, hooks)?;
    let (stats, info) = (&run.stats, &run.info);
    let mut summary = Summary::new(stats, info);
    if cfg.periodic_stats {
        summary.periodic = Some(stats.status_200_302);
    }
    if text_out(cfg) {
        let mut out = io::BufWriter::new(io::stdout().lock());
        let _ = write_report(&mut out, &summary, cfg.verbose);
        if work.is_session() {
            let _ = write_session_block(&mut out, &SessionSummary::new(stats, info.duration));
        }
        let labels: Vec<String> = work.targets.iter().map(|t| t.label.clone()).collect();
        let _ = write_servers(&mut out, &stats.servers, &labels, info.duration);
        if cfg.percentiles || cfg.verbose > 0 {
            let _ = write_percentiles(&mut out, stats);
        }
        if cfg.ssl && cfg.verbose > 0 {
            let [full, resumed] = stats.tls_handshakes;
            let _ = writeln!(out, "TLS handshakes: full {full} resumed {resumed}");
        }
        if let Some(lines) = stats.pool.report_lines(cfg.call_rate, info.duration) {
            let _ = writeln!(out, "{lines}");
        }
        if cfg.verbose > 0 {
            if let Some(line) = stats.http2.report_line() {
                let _ = writeln!(out, "{line}");
            }
            for line in stats.pacing.report_lines() {
                let _ = writeln!(out, "{line}");
            }
        }
        let _ = out.flush();
    }
    let advice = advice::assess(cfg, &work, &run);
    if let Some(dest) = &cfg.json {
        let mut doc = json::to_json(cfg, stats, &summary, info, &run.meta);
        doc["findings"] = advice::to_json(&advice);
        json::write_value_to(dest, &doc)
            .map_err(|e| Error::Startup(format!("cannot write --json file {dest}: {e}")))?;
    }
    if let Some(path) = &cfg.csv {
        csv::append_row(Path::new(path), cfg, &summary, stats, &advice)
            .map_err(|e| Error::Startup(format!("cannot write --csv file {path}: {e}")))?;
    }
    if let Some(path) = &cfg.timeline {
        timeline::write_csv(Path::new(path), &stats.timeline)
            .map_err(|e| Error::Startup(format!("cannot write --timeline file {path}: {e}")))?;
    }
    if let Some(path) = &cfg.html {
        html::write_run(Path::new(path), cfg, &run, &summary, &advice)
            .map_err(|e| Error::Startup(format!("cannot write --html file {path}: {e}")))?;
    }
    advice::print(&advice);
    let breached = threshold::breaches(&thresholds, &summary, stats);
    for b in &breached {
        eprintln!("rshperf: {b}");
    }
    if let Some(e) = exporter {
        // The report is out: the last scrapes see the totals it printed.
        e.linger(cfg.metrics_linger);
    }
    Ok(if breached.is_empty() { 0 } else { 3 })
}
