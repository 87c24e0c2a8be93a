//! The classic run: `rshperf [httperf options]` runs the engines (`engine::execute`)
//! and prints the report: the classic text, the session block, per-server lines,
//! percentiles, the pool, HTTP/2 and pacing lines, then `--json`, `--csv`,
//! `--timeline` (streamed a second at a time while the run lasts), `--request-log`
//! (every call, streamed by a writer thread and renamed into place at the end), `--html`, the findings on stderr, the `--fail-on` verdict (exit 3) and
//! its `--junit` report (whose path is checked before the load, so a run is not lost to
//! an unwritable report). Called by `crate::run` with a validated `Config`. Also owns
//! `catch_signals`, which every front end that runs the engines calls first: it joins
//! the engine's signal handling to the output layer's clean-up of a forced exit.

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

use crate::engine::error::StartupError;
use crate::engine::execute::{execute_with, text_out, ExecOptions, Hooks};
use crate::engine::feed::SecondFeed;
use crate::engine::interrupt;
use crate::engine::metrics::Exporter;
use crate::engine::reqlog::RecordFeed;
use crate::front::error::Error;
use crate::model::config::doc::ConfigDoc;
use crate::model::config::Config;
use crate::model::judge;
use crate::model::report::{Facts, Report};
use crate::model::reqlog::Format;
use crate::model::run::RunResult;
use crate::model::stats::timeline::Target;
use crate::model::workload::Workload;
use crate::output::advice;
use crate::output::classic::write_report;
use crate::output::csv;
use crate::output::error::OutputError;
use crate::output::extras;
use crate::output::file;
use crate::output::html;
use crate::output::json;
use crate::output::junit;
use crate::output::percentiles::write_percentiles;
use crate::output::reqlog;
use crate::output::servers::write_servers;
use crate::output::session::write_session_block;
use crate::output::summary::Summary;
use crate::output::threshold;
use crate::output::timeline;

/// Runs the test described by `cfg`, printing everything on stdout; returns the exit
/// status (0, or 3 when a `--fail-on` threshold is breached).
pub(crate) fn run(cfg: &Config) -> Result<i32, Error> {
    run_work(cfg, Workload::from_config(cfg)?)
}

/// `run` with a workload the caller built from `cfg` (`replay`'s schedule).
pub(crate) fn run_work(cfg: &Config, work: Workload) -> Result<i32, Error> {
    let o = cfg.output();
    // A path that cannot be written fails now, before the first connection.
    file::probe_all(&[
        ("--json", o.json()),
        ("--csv", o.csv()),
        ("--timeline", o.timeline()),
        ("--request-log", o.request_log()),
        ("--html", o.html()),
        ("--junit", o.junit()),
    ])?;
    let exporter = cfg
        .output()
        .metrics_listen()
        .map(Exporter::start)
        .transpose()?;
    // `--timeline` to a regular file is written a second at a time while the run lasts.
    let streamed = o.timeline().filter(|p| timeline::streams(Path::new(p)));
    let feed = streamed.map(|_| SecondFeed::new(cfg.load().threads().max(1) as usize));
    // `--request-log` is written by its own thread while the run lasts.
    let records = o.request_log().map(|_| RecordFeed::new());
    let hooks = Hooks {
        metrics: exporter.as_ref().map(|e| (e, None)),
        seconds: feed.as_ref(),
        records: records.as_ref(),
        ..Hooks::default()
    };
    let target = cfg.load().rate_profile().map(Target::new);
    let (run, stream, logged) = std::thread::scope(|scope| {
        let target = target.as_ref();
        let log_writer = o.request_log().zip(records.as_ref()).map(|(path, feed)| {
            let format = o
                .request_log_format()
                .unwrap_or_else(|| Format::of_path(path));
            let requests = &work.requests;
            scope.spawn(move || {
                let uri = |what| -> Cow<'static, str> {
                    Cow::Owned(String::from_utf8_lossy(requests.uri(what)).into_owned())
                };
                let batches = std::iter::from_fn(|| feed.next());
                reqlog::stream(Path::new(path), format, batches, uri, |b| feed.recycle(b))
            })
        });
        let writer = streamed.zip(feed.as_ref()).map(|(path, feed)| {
            scope.spawn(move || {
                let seconds =
                    std::iter::from_fn(|| feed.next()).map(|s| (s.start, s.seconds, s.interval));
                timeline::stream(Path::new(path), seconds, target)
            })
        });
        let run = execute_with(cfg, &work, ExecOptions { echo: true }, hooks);
        if let Some(feed) = &feed {
            feed.finish();
        }
        if let Some(records) = &records {
            records.finish();
        }
        let logged = log_writer.map(|w| {
            w.join()
                .unwrap_or_else(|_| Err(io::Error::other("the request log's writer panicked")))
        });
        let stream = writer.map(|w| {
            w.join()
                .unwrap_or_else(|_| Err(io::Error::other("the timeline writer panicked")))
        });
        (run, stream, logged)
    });
    let run = run?;
    let (stats, info) = (&run.stats, &run.info);
    let mut summary = Summary::new(stats, info);
    if cfg.output().periodic_stats() {
        summary.periodic = Some(stats.status_200_302);
    }
    let judged = judge::judge_run(cfg, &run, cfg.output().fail_on());
    let report = Report::new(
        stats,
        info,
        &Facts::of(cfg.load().call_rate(), &run.meta, judged.validity.clone()),
    );
    // Every output is attempted; each failure is reported and makes the status 1.
    let mut failed: Vec<OutputError> = Vec::new();
    if text_out(cfg) {
        if let Err(e) = write_text(cfg, &work, &run, &summary, &report) {
            if !file::is_closed_pipe(&e) {
                failed.push(OutputError::Stdout(e));
            }
        }
    }
    if run.interrupted {
        crate::wire::note::note!(
            "rshperf: {}",
            interrupted_note(interrupt::signal_name(), info.duration, stats.abandoned)
        );
    }
    let advice = advice::assess(cfg, &work, &run, &judged);
    fn named<'a>(
        option: &'static str,
        path: &'a str,
    ) -> impl FnOnce(io::Error) -> OutputError + 'a {
        move |source| OutputError::File {
            option,
            path: path.to_string(),
            source,
        }
    }
    if let Some(dest) = cfg.output().json() {
        let mut doc = json::document(&ConfigDoc::of(cfg), &report, stats, info, &run.meta);
        doc["findings"] = advice::to_json(&advice);
        let done = json::write_value_to(dest, &doc);
        match done {
            Err(e) if dest == "-" && file::is_closed_pipe(&e) => {}
            r => failed.extend(r.map_err(named("--json", dest)).err()),
        }
    }
    if let Some(path) = cfg.output().csv() {
        let r = csv::append_row(Path::new(path), cfg, &report, &advice);
        failed.extend(r.map_err(named("--csv", path)).err());
    }
    if let Some(path) = cfg.output().timeline() {
        let r = match stream {
            // Longer than the first hour: the streamed file has every second; the
            // timeline in memory has coarsened.
            Some(Ok(_)) if !stats.timeline.full_resolution() => Ok(()),
            // The same rows, with any arrival issued after its second ended counted
            // in that second, replaced atomically.
            Some(Ok(_)) | None => timeline::write_csv(Path::new(path), &stats.timeline),
            Some(Err(e)) => Err(e),
        };
        failed.extend(r.map_err(named("--timeline", path)).err());
    }
    if let (Some(path), Some(logged)) = (cfg.output().request_log(), logged) {
        failed.extend(logged.map_err(named("--request-log", path)).err());
        let (times, held) = records
            .as_ref()
            .map_or((0, Default::default()), |r| r.held());
        if times > 0 {
            crate::wire::note::note!(
                "rshperf: warning: the engines waited {:.1} ms ({times} times) for the \
                 --request-log writer: the figures include the wait (a faster disk or \
                 --request-log-format binary would avoid it)",
                held.as_secs_f64() * 1000.0
            );
        }
    }
    if let Some(path) = cfg.output().html() {
        let r = html::write_run(Path::new(path), cfg, &run, &summary, &advice);
        failed.extend(r.map_err(named("--html", path)).err());
    }
    advice::print(&advice);
    let mut breached = threshold::breaches(cfg.output().fail_on(), &report);
    if run.interrupted && !cfg.output().fail_on().is_empty() {
        // Its figures cover part of the schedule: no threshold can be said to hold.
        breached.insert(0, INTERRUPTED_BREACH.to_string());
    }
    for b in &breached {
        crate::wire::note::note!("rshperf: {b}");
    }
    if let Some(path) = cfg.output().junit() {
        let cases = threshold::junit_cases(cfg.output().fail_on(), &report);
        let xml = junit::document("rshperf", "rshperf.fail-on", &cases, info.duration);
        let r = file::write_bytes(Path::new(path), xml.as_bytes());
        failed.extend(r.map_err(named("--junit", path)).err());
    }
    for e in &failed {
        crate::wire::note::note!("rshperf: {e}");
    }
    if let Some(e) = exporter {
        // The report is out: the last scrapes see the totals it printed.
        e.linger(cfg.output().metrics_linger());
    }
    Ok(if !failed.is_empty() {
        1
    } else if breached.is_empty() {
        0
    } else {
        3
    })
}

/// The `--fail-on` verdict of an interrupted run.
pub(crate) const INTERRUPTED_BREACH: &str =
    "thresholds not met: the run was interrupted (SIGINT or SIGTERM)";

/// The stderr line of a run interrupted by `signal` that lasted `seconds` and left
/// `open` connections open.
pub(crate) fn interrupted_note(signal: Option<&str>, seconds: f64, open: u64) -> String {
    let noun = if open == 1 {
        "connection was"
    } else {
        "connections were"
    };
    let by = signal.map(|s| format!(" by {s}")).unwrap_or_default();
    format!("interrupted{by} after {seconds:.1} s: {open} {noun} still open")
}

/// SIGINT and SIGTERM end the run with its report from now on, copies of one signal
/// included; a deliberate second signal exits at once, stopping the output files being
/// written (`engine::interrupt`). Called by every front end that runs the engines,
/// before it reads its workload.
pub(crate) fn catch_signals() -> Result<(), Error> {
    interrupt::install(file::abandon).map_err(|e| StartupError::Signals(e).into())
}

/// The text report on stdout: the classic report and the blocks after it.
fn write_text(
    cfg: &Config,
    work: &Workload,
    run: &RunResult,
    summary: &Summary<'_>,
    report: &Report,
) -> io::Result<()> {
    let (stats, info) = (&run.stats, &run.info);
    let mut out = io::BufWriter::new(io::stdout().lock());
    write_report(&mut out, summary, cfg.output().verbose())?;
    if work.is_session() {
        write_session_block(&mut out, &report.sessions)?;
    }
    let labels: Vec<String> = work.targets.iter().map(|t| t.label.clone()).collect();
    write_servers(&mut out, &stats.servers, &labels, info.duration)?;
    if cfg.output().percentiles() || cfg.output().verbose() > 0 {
        write_percentiles(&mut out, stats)?;
    }
    if cfg.tls().enabled() && cfg.output().verbose() > 0 {
        let [full, resumed] = stats.tls_handshakes;
        writeln!(out, "TLS handshakes: full {full} resumed {resumed}")?;
    }
    if let Some(c) = &report.call_rate {
        writeln!(out, "{}", extras::call_rate_lines(c))?;
    }
    if let Some(s) = &report.stream {
        writeln!(out, "{}", extras::stream_lines(s))?;
    }
    if cfg.output().verbose() > 0 {
        if let Some(h) = &report.http2 {
            writeln!(out, "{}", extras::http2_lines(h))?;
        }
        if let Some(h) = &report.http3 {
            writeln!(out, "{}", extras::http3_lines(h))?;
        }
        for line in extras::pacing_lines(&stats.pacing) {
            writeln!(out, "{line}")?;
        }
    }
    out.flush()
}
