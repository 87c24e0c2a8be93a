//! `rshperf merge FILE.json…`: one report for the union of several partial runs.
//!
//! Owns reading and checking the `--json` documents of the partitions of one workload
//! (`--partition=I/N`, possibly on several machines), merging them exactly
//! (`Stats::merge`: counters summed, histograms added, rate samples added interval by
//! interval) over the union of their measured windows, and printing the result as a
//! run prints it: an echo-like line, one `Partition I/N:` line per input, then the
//! classic report, the session block and (`--percentiles`) the percentile lines.
//! `--json=FILE` writes the merged document in the same layout, so merges can be merged
//! again. Also owns `rshperf merge`'s options (`MergeOptions`, one set for runs and
//! sweeps). Measures nothing; the figures come from `model::summary`. Called by
//! `sweep_merge::merge_main` for run documents (`try_merge`).
//!
//! The measured window of an input is `[start.unix, start.unix + duration_s]` (its
//! wall-clock start and its monotonic test duration); the merged duration is the
//! latest window end minus the earliest start, so rates are meaningful only when the
//! partitions ran at the same time (`--start-at`) on machines with synchronised clocks.
//!
//! Longer than the usual 600 lines only because of its tests (a third of the file):
//! reading, checking, merging and printing are one short pipeline.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::front::error::Error;
use crate::model::config::doc::{ConfigDoc, Role};
use crate::model::report::Sessions;
use crate::model::report::{Facts, Report};
use crate::model::run::{RunInfo, RunMeta};
use crate::model::stats::Stats;
use crate::model::validity::{self, Validity};
use crate::output::advice::{self, Advice, Finding};
use crate::output::classic::write_report;
use crate::output::extras::{call_rate_lines, stream_lines};
use crate::output::json::{document, stats_from_json};
use crate::output::percentiles::write_percentiles;
use crate::output::servers::write_servers;
use crate::output::session::write_session_block;
use crate::output::summary::Summary;

use crate::front::error::merge::client_suffix;
pub(crate) use crate::front::error::merge::MergeError;

/// The members of the configuration that partitions of one workload share: what is
/// sent and how much (each partition holds the whole's counts). Their engines may
/// differ: a merge adds them up.
const SHARED: [Role; 2] = [Role::Workload, Role::Amount];

/// Inputs whose starts lie further apart than this (seconds) get a warning: rates over
/// the union of their windows understate the load that was offered.
const MAX_START_SPREAD_S: f64 = 1.0;

/// The options of `rshperf merge` (parsed by clap with `subcommand`'s conventions).
#[derive(Debug, Clone, PartialEq, Eq, clap::Parser)]
#[command(
    name = "merge",
    about = "Merge the --json documents of the partitions of one workload (or one sweep) \
             into one report.",
    long_about = "Merge the --json documents of the partitions of one workload (rshperf \
--partition=I/N --json=FILE, run at the same time with --start-at) into the report of the \
whole: counters summed, latency histograms merged exactly, rates over the union of the \
measured windows. Prints one 'Partition I/N:' line per input, then the report a single run \
would print. Inputs of different workloads, the same partition twice, and corrupt or \
out-of-range documents are refused (exit status 1); missing partitions are a warning.\n\n\
The documents of a partitioned sweep (rshperf sweep --partition I/N --start-at T \
--json=FILE) merge into the sweep of the whole: every step merged as a run, then the \
sweep's table, knee and verdicts (client-bound when any partition was); --json and --html \
write the sweep's document and page."
)]
pub(crate) struct MergeOptions {
    /// Also write the merged document to FILE ('-': stdout, instead of the text)
    #[arg(long, value_name = "FILE", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub(crate) json: Option<String>,
    /// Print the percentile lines (runs)
    #[arg(long, short = 'v')]
    pub(crate) percentiles: bool,
    /// Write the merged sweep's HTML page to FILE (sweeps)
    #[arg(long, value_name = "FILE", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub(crate) html: Option<String>,
    /// Exit status 3 when a threshold of the merged run is breached, or a partition is
    /// missing or was interrupted (runs; as the run's --fail-on)
    #[arg(long = "fail-on", value_name = "EXPR")]
    pub(crate) fail_on: Vec<String>,
    /// The --json documents to merge, in this order
    #[arg(value_name = "FILE.json", required = true)]
    pub(crate) files: Vec<String>,
}

/// One input document, read and checked.
#[derive(Debug, Clone)]
pub(crate) struct Input {
    /// The file name as given.
    pub(crate) file: String,
    /// The document's `config` member, as stored.
    pub(crate) config: ConfigDoc,
    /// Its statistics, exactly as the run had them.
    pub(crate) stats: Stats,
    /// Its duration and CPU times.
    pub(crate) run: RunInfo,
    /// `--partition=I/N` of the run: (I, N).
    pub(crate) partition: (u32, u32),
    /// `--client=I/N` of the run: (I, N).
    pub(crate) client: (u32, u32),
    /// Engines that ran (a merged document: all of its inputs' engines).
    pub(crate) threads: u32,
    /// Wall-clock start, seconds since the epoch.
    pub(crate) start: f64,
    /// Names of the servers of a `--servers` run, one per `stats.servers` element.
    pub(crate) servers: Vec<String>,
    /// `--call-rate` target of the run, calls per second (0: not given).
    pub(crate) call_rate: f64,
    /// The findings of the run (its `findings` member).
    pub(crate) findings: Vec<Advice>,
    /// Its validity judgement (None: a document without one).
    pub(crate) validity: Option<Validity>,
}

impl Input {
    /// Reads a document from its text; `file` names it in messages.
    pub(crate) fn from_text(file: &str, text: &str) -> Result<Input, MergeError> {
        let doc: Value = serde_json::from_str(text).map_err(|source| MergeError::NotJson {
            file: file.to_string(),
            source,
        })?;
        Input::from_json(file, &doc)
    }

    /// Reads a parsed document; `file` names it in messages.
    pub(crate) fn from_json(file: &str, doc: &Value) -> Result<Input, MergeError> {
        let (stats, run) = stats_from_json(doc).map_err(|source| MergeError::Doc {
            file: file.to_string(),
            source,
        })?;
        let bad = |member: &'static str, expected: &'static str| MergeError::BadMember {
            file: file.to_string(),
            member,
            expected,
        };
        let config = doc.get("config").filter(|c| c.is_object()).ok_or_else(|| {
            MergeError::MissingConfig {
                file: file.to_string(),
            }
        })?;
        let config: ConfigDoc =
            serde_path_to_error::deserialize(config).map_err(|e| MergeError::BadConfig {
                file: file.to_string(),
                path: e.path().to_string(),
                source: e.into_inner(),
            })?;
        let pair = |v: Option<&Value>, what: &'static str| -> Result<(u32, u32), MergeError> {
            let nums: Option<Vec<u32>> = v.and_then(Value::as_array).and_then(|a| {
                a.iter()
                    .map(|x| x.as_u64().and_then(|n| u32::try_from(n).ok()))
                    .collect()
            });
            match nums.as_deref() {
                Some(&[i, n]) if i < n => Ok((i, n)),
                _ => Err(bad(what, "[I, N] with I < N")),
            }
        };
        let run_member = doc.get("run");
        let partition = pair(run_member.and_then(|r| r.get("partition")), "run.partition")?;
        let client = match config.client() {
            (i, n) if i < n => (i, n),
            _ => return Err(bad("config.client", "[I, N] with I < N")),
        };
        let threads = run_member
            .and_then(|r| r.get("threads"))
            .and_then(Value::as_u64)
            .and_then(|t| u32::try_from(t).ok())
            .ok_or_else(|| bad("run.threads", "an unsigned integer"))?;
        let start = doc
            .get("start")
            .and_then(|s| s.get("unix"))
            .and_then(Value::as_f64)
            .ok_or_else(|| bad("start.unix", "a number"))?;
        if !run.duration.is_finite() || run.duration < 0.0 {
            return Err(bad("duration_s", "a duration"));
        }
        // The names, one per raw.servers element: `run.servers` (documents of earlier
        // releases name them only in the figures, `servers[].server`).
        let names = |list: &Value, key: Option<&str>| -> Option<Vec<String>> {
            list.as_array()?
                .iter()
                .map(|s| {
                    key.map_or(Some(s), |k| s.get(k))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .collect()
        };
        let servers: Vec<String> = match (
            run_member.and_then(|r| r.get("servers")),
            doc.get("servers"),
        ) {
            (Some(list), _) => {
                names(list, None).ok_or_else(|| bad("run.servers", "a list of names"))?
            }
            (None, None) => Vec::new(),
            (None, Some(list)) => names(list, Some("server"))
                .ok_or_else(|| bad("servers", "a list of {\"server\": NAME, …}"))?,
        };
        // `--call-rate`: every part ran the whole rate's share of one schedule, so the
        // target is the parts' common `config.call_rate` (0: not given).
        let call_rate = Some(config.call_rate())
            .filter(|r| r.is_finite() && *r >= 0.0)
            .ok_or_else(|| bad("config.call_rate", "a rate"))?;
        let validity = validity::doc::from_document(doc).map_err(|_| {
            bad(
                "validity",
                "{\"valid\": …, \"reasons\": […]} as a run writes it",
            )
        })?;
        if servers.len() != stats.servers.len() {
            return Err(MergeError::ServerCount {
                file: file.to_string(),
                named: servers.len(),
                held: stats.servers.len(),
            });
        }
        Ok(Input {
            file: file.to_string(),
            config,
            stats,
            run,
            partition,
            client,
            threads,
            start,
            servers,
            call_rate,
            findings: advice::from_json(&doc["findings"]),
            validity,
        })
    }

    /// How a merged judgement names this input: `partition 1/2 (b.json)`.
    fn part_name(&self) -> String {
        let (i, n) = self.partition;
        format!("partition {i}/{n} ({})", self.file)
    }

    /// The echo line of the run without its `--partition=I/N`.
    pub(crate) fn echo(&self) -> String {
        let echo = self.config.echo();
        let (i, n) = self.partition;
        echo.replace(&format!(" --partition={i}/{n}"), "")
    }

    /// True for session workloads (`--wsess`, `--wsesslog`, `--wsesspage`).
    fn is_session(&self) -> bool {
        self.config.is_session()
    }
}

/// Refuses inputs that are not partitions of one workload; returns warnings (missing
/// partitions) for stderr.
pub(crate) fn check(inputs: &[Input]) -> Result<Vec<String>, MergeError> {
    let Some(first) = inputs.first() else {
        return Err(MergeError::NoInputs);
    };
    for inp in &inputs[1..] {
        if let Some((key, a, b)) = first.config.differs(&inp.config, &SHARED) {
            return Err(MergeError::DifferentWorkloads {
                first: first.file.clone(),
                other: inp.file.clone(),
                key,
                a: a.to_string(),
                b: b.to_string(),
            });
        }
        if inp.servers != first.servers {
            return Err(MergeError::DifferentServers {
                first: first.file.clone(),
                other: inp.file.clone(),
                a: first.servers.clone(),
                b: inp.servers.clone(),
            });
        }
        for (what, mine, theirs) in [
            ("partition", inp.partition, first.partition),
            ("client", inp.client, first.client),
        ] {
            if mine.1 != theirs.1 {
                return Err(MergeError::DifferentSplit {
                    file: inp.file.clone(),
                    what,
                    mine,
                    first: first.file.clone(),
                    theirs,
                });
            }
        }
    }
    let mut seen: Vec<(u32, u32, &str)> = Vec::new();
    for inp in inputs {
        let key = (inp.client.0, inp.partition.0);
        if let Some(&(_, _, other)) = seen.iter().find(|&&(c, p, _)| (c, p) == key) {
            return Err(MergeError::Duplicate {
                other: other.to_string(),
                file: inp.file.clone(),
                partition: inp.partition,
                client: inp.client,
            });
        }
        seen.push((key.0, key.1, &inp.file));
    }
    let (clients, parts) = (first.client.1, first.partition.1);
    let mut missing = Vec::new();
    for c in 0..clients {
        let present: Vec<u32> = seen
            .iter()
            .filter(|&&(sc, _, _)| sc == c)
            .map(|&(_, p, _)| p)
            .collect();
        // A client of which no partition was given is not a missing partition: clients
        // are whole workloads of their own (httperf's --client).
        if present.is_empty() {
            continue;
        }
        missing.extend(
            (0..parts)
                .filter(|p| !present.contains(p))
                .map(|p| format!("{p}/{parts}{}", client_suffix((c, clients)))),
        );
    }
    let mut warnings = Vec::new();
    for inp in inputs.iter().filter(|i| i.stats.interrupted) {
        let (i, n) = inp.partition;
        warnings.push(format!(
            "warning: {} (partition {i}/{n}{}) was interrupted: {} connections were still \
             open; the report covers only part of the workload",
            inp.file,
            client_suffix(inp.client),
            inp.stats.abandoned
        ));
    }
    if !missing.is_empty() {
        warnings.push(format!(
            "warning: partition{} {} missing: the report covers only part of the workload",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        ));
    }
    let starts = inputs.iter().map(|i| i.start);
    let first_start = starts.clone().reduce(f64::min).unwrap_or(0.0);
    let spread = starts.fold(first_start, f64::max) - first_start;
    if spread > MAX_START_SPREAD_S {
        warnings.push(format!(
            "warning: the inputs started up to {spread:.3} s apart: rates are over the union \
             of their windows (start partitions together with --start-at)"
        ));
    }
    Ok(warnings)
}

/// The union of the inputs.
#[derive(Debug, Clone)]
pub(crate) struct Merged {
    /// All statistics, merged exactly.
    pub(crate) stats: Stats,
    /// Union duration (latest window end − earliest start) and summed CPU seconds.
    pub(crate) run: RunInfo,
    /// Earliest start, seconds since the epoch.
    pub(crate) start: f64,
    /// Engines of all inputs.
    pub(crate) threads: u32,
    /// Server names of a `--servers` workload (the same in every input).
    pub(crate) servers: Vec<String>,
    /// The `--call-rate` target (the same in every input: `call_rate` is part of the
    /// workload).
    pub(crate) call_rate: f64,
    /// The union of the inputs' validity judgements, each reason naming its input
    /// (None: no input was judged).
    pub(crate) validity: Option<Validity>,
}

impl Merged {
    /// The figures of the union, derived from its raw counters and facts as a run's
    /// are.
    pub(crate) fn report(&self) -> Report {
        let facts = Facts {
            call_rate: self.call_rate,
            servers: self.servers.clone(),
            validity: self.validity.clone(),
        };
        Report::new(&self.stats, &self.run, &facts)
    }
}

/// Merges checked inputs; fails (naming the input and the field) when a sum would
/// overflow or a total the report needs does not fit in 64 bits.
pub(crate) fn merge(inputs: &[Input]) -> Result<Merged, MergeError> {
    let mut stats = Stats::new();
    let start = inputs
        .iter()
        .map(|i| i.start)
        .reduce(f64::min)
        .unwrap_or(0.0);
    let (mut duration, mut cpu_user, mut cpu_system, mut threads) = (0.0f64, 0.0, 0.0, 0u32);
    for inp in inputs {
        stats
            .merge(&inp.stats)
            .map_err(|source| MergeError::CannotAdd {
                file: inp.file.clone(),
                source,
            })?;
        // Relative to the earliest start, so one input keeps its duration exactly.
        duration = duration.max(inp.start - start + inp.run.duration);
        cpu_user += inp.run.cpu_user;
        cpu_system += inp.run.cpu_system;
        threads = threads.saturating_add(inp.threads);
    }
    stats.check_totals().map_err(MergeError::OutOfRange)?;
    Ok(Merged {
        stats,
        run: RunInfo {
            duration,
            cpu_user,
            cpu_system,
        },
        start,
        threads,
        servers: inputs
            .first()
            .map(|i| i.servers.clone())
            .unwrap_or_default(),
        call_rate: inputs.first().map_or(0.0, |i| i.call_rate),
        validity: validity::doc::merged(
            &inputs
                .iter()
                .map(|i| (i.part_name(), i.validity.clone()))
                .collect::<Vec<_>>(),
        ),
    })
}

/// Writes the text: the `rshperf merge:` line, one `Partition` line per input, a blank
/// line, the classic report, the session block (session workloads), the per-server
/// block (`--servers` workloads) and, with `percentiles`, the percentile lines: the
/// order of a run's report.
pub(crate) fn write_text<W: Write>(
    out: &mut W,
    inputs: &[Input],
    merged: &Merged,
    percentiles: bool,
) -> io::Result<()> {
    let echo = inputs.first().map(Input::echo).unwrap_or_default();
    let n = inputs.len();
    writeln!(
        out,
        "rshperf merge: {n} partition{} of {echo}",
        if n == 1 { "" } else { "s" }
    )?;
    for inp in inputs {
        let s = &inp.stats;
        writeln!(
            out,
            "Partition {}/{}: connections {} requests {} replies {} test-duration {} s \
             errors {}{} ({})",
            inp.partition.0,
            inp.partition.1,
            s.connections,
            s.requests,
            s.replies(),
            crate::wire::cfmt::fixed(inp.run.duration, 3),
            s.total_errors(),
            client_suffix(inp.client),
            inp.file
        )?;
    }
    writeln!(out)?;
    let summary = Summary::new(&merged.stats, &merged.run);
    write_report(out, &summary, 0)?;
    let sessions = merged.stats.sessions_ok + merged.stats.sessions_failed;
    if sessions > 0 || inputs.iter().any(Input::is_session) {
        write_session_block(out, &Sessions::of(&merged.stats, merged.run.duration))?;
    }
    write_servers(
        out,
        &merged.stats.servers,
        &merged.servers,
        merged.run.duration,
    )?;
    if let Some(c) = &merged.report().call_rate {
        writeln!(out, "{}", call_rate_lines(c))?;
    }
    if let Some(s) = &merged.report().stream {
        writeln!(out, "{}", stream_lines(s))?;
    }
    if percentiles {
        write_percentiles(out, &merged.stats)?;
    }
    Ok(())
}

/// The instant of a document's `unix` seconds, rounded to the microsecond its
/// `rfc3339` names (`output::json` writes both from one floored microsecond).
fn system_time(unix: f64) -> SystemTime {
    let micros = (unix.abs() * 1e6).round();
    let d = if micros.is_finite() && micros < u64::MAX as f64 {
        Duration::from_micros(micros as u64)
    } else {
        Duration::ZERO
    };
    if unix >= 0.0 {
        UNIX_EPOCH + d
    } else {
        UNIX_EPOCH - d
    }
}

/// The findings of the inputs' runs, in input order, client-bound ones first (a
/// sweep's conclusion quotes the first); each names its partition when the input is
/// one of several (`(partition I/N)` after the text), so the merge of one run has its
/// findings exactly.
pub(crate) fn findings(inputs: &[Input]) -> Vec<Advice> {
    let mut all: Vec<Advice> = inputs
        .iter()
        .flat_map(|inp| {
            let (i, n) = inp.partition;
            inp.findings.iter().map(move |a| Advice {
                finding: a.finding,
                text: if n > 1 {
                    format!("{} (partition {i}/{n})", a.text)
                } else {
                    a.text.clone()
                },
            })
        })
        .collect();
    all.sort_by_key(|a| a.finding != Finding::ClientBound);
    all
}

/// The merged document: the layout of a run's (`docs/json.md`), its figures derived
/// from the merged raw counters as a run derives them (`Merged::report`), with the
/// first input's `config` as stored (`ConfigDoc::whole`: its `partition` set to
/// `[0, 1]`, the echo line without `--partition`, `json` the merged file), the
/// inputs' `findings` and `run.merged_from` listing the inputs.
pub(crate) fn merged_json(inputs: &[Input], merged: &Merged, json_dest: Option<&str>) -> Value {
    let meta = RunMeta {
        start: system_time(merged.start),
        end: system_time(merged.start + merged.run.duration),
        partition: (0, 1),
        threads: merged.threads,
        servers: merged.servers.clone(),
    };
    let echo = inputs.first().map(Input::echo).unwrap_or_default();
    let config = inputs
        .first()
        .map(|i| i.config.whole(echo, json_dest))
        .unwrap_or_default();
    let mut doc = document(&config, &merged.report(), &merged.stats, &merged.run, &meta);
    doc["findings"] = advice::to_json(&findings(inputs));
    let files: Vec<&str> = inputs.iter().map(|i| i.file.as_str()).collect();
    doc["run"]["merged_from"] = json!(files);
    doc
}

fn read_input(file: &str) -> Result<Input, MergeError> {
    let text = fs::read_to_string(file).map_err(|source| MergeError::Read {
        file: file.to_string(),
        source,
    })?;
    Input::from_text(file, &text)
}

fn write_json_dest(dest: &str, doc: &Value) -> io::Result<()> {
    crate::output::json::write_value_to(dest, doc)
}

/// Merges the run documents `opts.files` (`opts.html` is for sweeps: the caller
/// refuses it), prints the report; returns the exit status.
pub(crate) fn try_merge(opts: &MergeOptions) -> Result<i32, Error> {
    let inputs = opts
        .files
        .iter()
        .map(|f| read_input(f))
        .collect::<Result<Vec<_>, _>>()?;
    let thresholds = crate::model::threshold::parse_all(&opts.fail_on)
        .map_err(crate::model::config::ConfigError::from)?;
    let warnings = check(&inputs)?;
    for w in &warnings {
        crate::wire::note::note!("rshperf: merge: {w}");
    }
    // A missing or interrupted partition: the merged figures cover part of the
    // workload, so no threshold can be said to hold.
    let incomplete = warnings
        .iter()
        .any(|w| w.contains("covers only part of the workload"));
    let merged = merge(&inputs)?;
    if opts.json.as_deref() != Some("-") {
        let mut out = BufWriter::new(io::stdout().lock());
        // As a run: a closed stdout does not fail the merge.
        let _ = write_text(&mut out, &inputs, &merged, opts.percentiles);
        let _ = out.flush();
    }
    if let Some(dest) = &opts.json {
        let doc = merged_json(&inputs, &merged, Some(dest));
        write_json_dest(dest, &doc).map_err(|source| MergeError::WriteJson {
            dest: dest.clone(),
            source,
        })?;
    }
    let mut breached = crate::output::threshold::breaches(&thresholds, &merged.report());
    if incomplete && !thresholds.is_empty() {
        breached.insert(
            0,
            "thresholds not met: a partition is missing or was interrupted".to_string(),
        );
    }
    for b in &breached {
        crate::wire::note::note!("rshperf: merge: {b}");
    }
    Ok(if breached.is_empty() { 0 } else { 3 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::subcommand::Parsed;
    use crate::model::config::Config;
    use crate::output::json::to_json;

    fn args(list: &[&str]) -> Vec<String> {
        std::iter::once("merge")
            .chain(list.iter().copied())
            .map(String::from)
            .collect()
    }

    #[test]
    fn a_documents_start_comes_back_as_the_microsecond_its_text_names() {
        use crate::output::json::{rfc3339, unix_seconds};
        // Nanoseconds just below a microsecond, where `as_secs_f64` used to print
        // the next one, at today's and at far epochs, and before 1970.
        for secs in [0_u64, 1_796_195_465, 4_107_542_399] {
            for nanos in [0_u32, 699_232_999, 999_999_999, 1_000, 123_456_789] {
                let t = UNIX_EPOCH + Duration::new(secs, nanos);
                assert_eq!(rfc3339(system_time(unix_seconds(t))), rfc3339(t));
                let before = UNIX_EPOCH - Duration::new(secs, nanos);
                assert_eq!(rfc3339(system_time(unix_seconds(before))), rfc3339(before));
            }
        }
    }

    /// A document of partition `part`/`parts` of a fixed workload (`uri`), `n`
    /// connections with one 200 reply each, started at `start` (unix seconds), lasting
    /// `duration` seconds.
    fn doc(uri: &str, part: u32, parts: u32, n: u64, start: f64, duration: f64) -> Value {
        let cfg = Config::local(|b| {
            b.port(8080)
                .uri(uri)
                .rate(100.0)
                .num_conns(1000)
                .partition(part, parts);
        });
        let mut s = Stats::new();
        for i in 0..n {
            s.on_connecting();
            s.on_connected(Duration::from_micros(100 + i));
            s.on_request_sent(60);
            s.on_response(Duration::from_micros(500 + 10 * i));
            s.on_reply(200, 80, 1024, 0, Duration::from_micros(20));
            s.on_lifetime(Duration::from_micros(700 + 10 * i));
            s.ends_mut().on_end(false, 1);
        }
        s.rate_samples.push(crate::model::stats::RateSample {
            replies: n,
            sessions: 0,
            seconds: duration.min(5.0),
        });
        let run = RunInfo {
            duration,
            cpu_user: 0.5,
            cpu_system: 0.25,
        };
        let meta = RunMeta {
            start: system_time(start),
            end: system_time(start + duration),
            partition: cfg.load().partition(),
            threads: 1,
            servers: Vec::new(),
        };
        to_json(&cfg, &s, &run, &meta)
    }

    fn input(name: &str, d: &Value) -> Input {
        let text = serde_json::to_string(d).expect("serializable");
        Input::from_text(name, &text).expect("readable")
    }

    fn text(inputs: &[Input], percentiles: bool) -> String {
        let mut out = Vec::new();
        write_text(
            &mut out,
            inputs,
            &merge(inputs).expect("mergeable"),
            percentiles,
        )
        .expect("Vec write");
        String::from_utf8(out).expect("ASCII")
    }

    fn parse(list: &[&str]) -> Result<Parsed<MergeOptions>, Error> {
        crate::front::subcommand::parse::<MergeOptions>(&args(list))
    }

    fn options(list: &[&str]) -> MergeOptions {
        match parse(list) {
            Ok(Parsed::Run(o)) => o,
            other => panic!("{list:?}: {other:?}"),
        }
    }

    #[test]
    fn options_help_and_errors() {
        let o = options(&["--json=m.json", "-v", "a", "b"]);
        assert_eq!(o.json.as_deref(), Some("m.json"));
        assert!(o.percentiles);
        assert_eq!(o.files, ["a", "b"]);
        let o = options(&["--js", "-", "--perc", "--", "--odd"]);
        assert_eq!(o.json.as_deref(), Some("-"));
        assert!(o.percentiles);
        assert_eq!(o.files, ["--odd"]);
        match parse(&["-h"]) {
            Ok(Parsed::Help(t)) => {
                assert!(t.starts_with("Merge the --json documents "), "{t}");
                assert!(
                    t.contains("\nUsage: rshperf merge [OPTIONS] <FILE.json>...\n"),
                    "{t}"
                );
            }
            other => panic!("{other:?}"),
        }
        let cases: [(&[&str], &str); 4] = [
            (
                &[],
                "the following required arguments were not provided:\n  <FILE.json>...",
            ),
            (
                &["--json=", "a"],
                "a value is required for '--json <FILE>' but none was supplied",
            ),
            (&["--bogus", "a"], "unexpected argument '--bogus' found"),
            (
                &["a", "--json"],
                "a value is required for '--json <FILE>' but none was supplied",
            ),
        ];
        for (bad, want) in cases {
            let e = parse(bad).expect_err("invalid").to_string();
            assert!(
                e.starts_with(&format!("rshperf: merge: {want}")),
                "{bad:?}: {e}"
            );
        }
    }

    #[test]
    fn partitions_merge_over_the_union_window() {
        let a = input("p0.json", &doc("/x", 0, 2, 30, 1000.0, 9.5));
        let b = input("p1.json", &doc("/x", 1, 2, 20, 1000.5, 9.5));
        let inputs = [a, b];
        assert!(check(&inputs).expect("checked").is_empty());
        let m = merge(&inputs).expect("mergeable");
        assert_eq!(m.stats.connections, 50);
        assert_eq!(m.stats.replies(), 50);
        assert_eq!(m.run.duration, 10.0);
        assert_eq!(m.run.cpu_user, 1.0);
        assert_eq!(m.run.cpu_system, 0.5);
        assert_eq!(m.stats.rate_samples[0].replies, 50);
        assert_eq!(m.stats.hist.response.len(), 50);
        let t = text(&inputs, true);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "rshperf merge: 2 partitions of rshperf --client=0/1 --server=127.0.0.1 \
             --port=8080 --uri=/x --rate=100 --send-buffer=4096 --recv-buffer=16384 \
             --num-conns=1000 --num-calls=1"
        );
        assert_eq!(
            lines[1],
            "Partition 0/2: connections 30 requests 30 replies 30 test-duration 9.500 s \
             errors 0 (p0.json)"
        );
        assert_eq!(
            lines[2],
            "Partition 1/2: connections 20 requests 20 replies 20 test-duration 9.500 s \
             errors 0 (p1.json)"
        );
        assert_eq!(lines[3], "");
        assert_eq!(lines[4], "Maximum connect burst length: 0");
        assert!(
            t.contains("\nTotal: connections 50 requests 50 replies 50 test-duration 10.000 s\n")
        );
        assert!(t.contains("\nConnection rate: 5.0 conn/s (200.0 ms/conn, "));
        assert!(t.contains(
            "\nReply rate [replies/s]: min 10.0 avg 10.0 max 10.0 stddev 0.0 (1 samples)\n"
        ));
        assert!(t.contains(
            "\nCPU time [s]: user 1.00 system 0.50 (user 10.0% system 5.0% total 15.0%)\n"
        ));
        assert!(t.contains("\nPercentiles response [ms]: p50 "));
        assert!(!t.contains("Session"));
    }

    #[test]
    fn the_merged_document_merges_again_to_the_same_report() {
        let inputs = [
            input("p0.json", &doc("/x", 0, 2, 30, 1000.0, 9.5)),
            input("p1.json", &doc("/x", 1, 2, 20, 1000.5, 9.5)),
        ];
        let m = merge(&inputs).expect("mergeable");
        let d = merged_json(&inputs, &m, Some("all.json"));
        assert_eq!(d["run"]["partition"], json!([0, 1]));
        assert_eq!(d["run"]["threads"], 2);
        assert_eq!(d["run"]["merged_from"], json!(["p0.json", "p1.json"]));
        assert_eq!(d["config"]["partition"], json!([0, 1]));
        assert_eq!(d["config"]["uri"], "/x");
        assert_eq!(d["config"]["json"], "all.json");
        assert_eq!(d["connections"]["total"], 50);
        assert_eq!(d["duration_s"], 10.0);
        let again = [input("all.json", &d)];
        assert!(check(&again).expect("checked").is_empty());
        let m2 = merge(&again).expect("mergeable");
        assert_eq!(m2.run, m.run);
        let d2 = merged_json(&again, &m2, Some("all.json"));
        for key in [
            "raw",
            "histograms",
            "connections",
            "replies",
            "errors",
            "cpu",
        ] {
            assert_eq!(d2[key], d[key], "{key}");
        }
        let t = text(&again, false);
        assert!(t.starts_with("rshperf merge: 1 partition of rshperf --client=0/1 "));
        assert!(t.contains("\nPartition 0/1: connections 50 requests 50 replies 50 "));
        let report = |t: &str| t.split_once("\n\n").map(|(_, r)| r.to_string());
        assert_eq!(report(&t), report(&text(&inputs, false)));
    }

    #[test]
    fn mismatched_duplicate_and_missing_partitions() {
        let p0 = input("p0.json", &doc("/x", 0, 3, 3, 0.0, 1.0));
        let p1 = input("p1.json", &doc("/x", 1, 3, 3, 0.0, 1.0));
        let other = input("q1.json", &doc("/y", 1, 3, 3, 0.0, 1.0));
        let e = check(&[p0.clone(), other])
            .expect_err("different uri")
            .to_string();
        assert_eq!(
            e,
            "p0.json and q1.json are runs of different workloads: uri \"/x\" vs \"/y\""
        );
        let e = check(&[p0.clone(), p1.clone(), p0.clone()])
            .expect_err("duplicate")
            .to_string();
        assert_eq!(
            e,
            "p0.json and p0.json are both partition 0/3: each partition may be merged once"
        );
        let four = input("r.json", &doc("/x", 1, 4, 3, 0.0, 1.0));
        let e = check(&[p0.clone(), four])
            .expect_err("different N")
            .to_string();
        assert!(
            e.starts_with("r.json is partition 1/4 but p0.json is partition 0/3"),
            "{e}"
        );
        let w = check(&[p1, p0.clone()]).expect("missing is not an error");
        assert_eq!(
            w,
            ["warning: partition 2/3 missing: the report covers only part of the workload"]
        );
        let late = input("p2.json", &doc("/x", 2, 3, 3, 1.5, 1.0));
        let w = check(&[p0, late]).expect("late is not an error");
        assert_eq!(
            w[1],
            "warning: the inputs started up to 1.500 s apart: rates are over the union of \
             their windows (start partitions together with --start-at)"
        );
    }

    #[test]
    fn bad_documents_name_the_file() {
        let e = Input::from_text("x.json", "{not json")
            .expect_err("not JSON")
            .to_string();
        assert!(e.starts_with("x.json: not a JSON document: "), "{e}");
        let mut d = doc("/x", 0, 1, 1, 0.0, 1.0);
        d["version"] = json!(9);
        let e = Input::from_text("v.json", &d.to_string())
            .expect_err("version")
            .to_string();
        assert!(
            e.starts_with("v.json: unsupported rshperf-result version 9"),
            "{e}"
        );
        let mut d = doc("/x", 0, 1, 1, 0.0, 1.0);
        d["run"]["partition"] = json!([2, 2]);
        let e = Input::from_json("p.json", &d)
            .expect_err("partition")
            .to_string();
        assert_eq!(e, "p.json: run.partition is not [I, N] with I < N");
        let e = Input::from_text("e.json", "[]")
            .expect_err("not a document")
            .to_string();
        assert_eq!(e, "e.json: not an rshperf-result document");
    }
}
