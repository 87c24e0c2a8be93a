//! `rshperf merge` of the `--json` documents of a partitioned sweep (`rshperf sweep
//! --partition I/N --start-at T --json FILE` on N machines): the sweep of the whole.
//!
//! Owns telling sweep documents from run documents (run documents go to
//! `front::merge` unchanged), checking that the inputs are partitions of one sweep
//! (the same parameters), and rebuilding it: step j of every partition is merged
//! exactly as a single run's partitions are (`merge::check`, `merge::merge`), then
//! judged by the sweep's own rules (`step::judge`, the sweep's options parsed again
//! from the document's `argv`), a step being client-bound when any partition's was;
//! the table, conclusion, `--json` document and `--html` page are the ones a
//! one-machine sweep writes. Sits above `merge` and `sweep` so neither imports the
//! other. Called by `dispatch` for `rshperf merge`.

mod error;

use std::fs;

use serde_json::{json, Value};

use crate::front::merge::{self, Input};
use crate::front::subcommand;
use crate::front::sweep::args::{self, Parsed, Sweep};
use crate::front::sweep::plan::{Planner, Strategy};
use crate::front::sweep::step::{self, Measured, Step};
use crate::front::sweep::{self as sweep_mod, table, FORMAT};
use crate::output::advice::{self, Advice, Finding};
use crate::output::html;
use crate::wire::error::Error;

use error::SweepMergeError;

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
pub(crate) struct MergeAllOptions {
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

/// `rshperf merge …` (`args[0]` is `merge`): sweep documents are merged here, run
/// documents by `merge::merge_main`.
pub(crate) fn merge_main(args: &[String]) -> i32 {
    subcommand::run::<MergeAllOptions>(args, |opts| {
        let mut docs = Vec::new();
        for file in &opts.files {
            // An unreadable or non-JSON input is `merge`'s to report.
            let Ok(text) = fs::read_to_string(file) else {
                return Ok(runs(args, &opts));
            };
            let Ok(doc) = serde_json::from_str::<Value>(&text) else {
                return Ok(runs(args, &opts));
            };
            docs.push((file.clone(), doc));
        }
        let is_sweep = |d: &Value| d.get("format").and_then(Value::as_str) == Some(FORMAT);
        let sweep = docs.iter().find(|(_, d)| is_sweep(d));
        let run = docs.iter().find(|(_, d)| !is_sweep(d));
        match (sweep, run) {
            (Some((s, _)), Some((r, _))) => Err(SweepMergeError::Mixed {
                sweep: s.clone(),
                run: r.clone(),
            }
            .into()),
            (Some(_), None) if !opts.fail_on.is_empty() => {
                Err(SweepMergeError::FailOnForSweeps.into())
            }
            (Some(_), None) => merge_sweeps(&docs, &opts).map(|()| 0),
            (None, _) => Ok(runs(args, &opts)),
        }
    })
}

/// The help text of `rshperf merge`.
pub(crate) fn help() -> String {
    subcommand::help_text::<MergeAllOptions>()
}

/// Run documents: `merge`'s (which refuses `--html`).
fn runs(args: &[String], opts: &MergeAllOptions) -> i32 {
    if opts.html.is_some() {
        return subcommand::exit_status(Err(SweepMergeError::HtmlForRuns.into()));
    }
    let rest: Vec<String> = args.to_vec();
    merge::merge_main(&rest)
}

/// Parameters that may differ between the partitions of one sweep.
const PER_PARTITION: [&str; 1] = ["partition"];

/// The partition (I, N) a sweep document names.
fn partition_of(file: &str, doc: &Value) -> Result<(u64, u64), SweepMergeError> {
    let p = doc["parameters"]["partition"].as_array();
    match p.map(|a| {
        (
            a.first().and_then(Value::as_u64),
            a.get(1).and_then(Value::as_u64),
        )
    }) {
        Some((Some(i), Some(n))) if i < n => Ok((i, n)),
        _ => Err(SweepMergeError::NotPartitioned {
            file: file.to_string(),
            member: "parameters.partition",
        }),
    }
}

/// Checks that `docs` are partitions of one sweep; returns the sweep (parsed from the
/// first one's arguments) and warnings.
fn check(docs: &[(String, Value)]) -> Result<(Sweep, Vec<String>), Error> {
    let (first, doc) = docs.first().ok_or(SweepMergeError::NoSteps {
        file: String::new(),
    })?;
    for (file, d) in docs {
        partition_of(file, d)?;
        for member in ["calls_per_arrival", "ideal_tail_s"] {
            if !d["parameters"][member].is_number() {
                return Err(SweepMergeError::NotPartitioned {
                    file: file.clone(),
                    member: if member == "ideal_tail_s" {
                        "parameters.ideal_tail_s"
                    } else {
                        "parameters.calls_per_arrival"
                    },
                }
                .into());
            }
        }
        if !d["argv"].is_array() {
            return Err(SweepMergeError::NotPartitioned {
                file: file.clone(),
                member: "argv",
            }
            .into());
        }
        let (a, b) = (doc["parameters"].as_object(), d["parameters"].as_object());
        let keys = a.into_iter().chain(b).flat_map(|m| m.keys());
        for key in keys.filter(|k| !PER_PARTITION.contains(&k.as_str())) {
            let (x, y) = (&doc["parameters"][key], &d["parameters"][key]);
            if x != y {
                return Err(SweepMergeError::Different {
                    first: first.clone(),
                    other: file.clone(),
                    member: key.clone(),
                    a: x.to_string(),
                    b: y.to_string(),
                }
                .into());
            }
        }
    }
    let argv: Vec<String> = doc["argv"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let sweep = match args::parse(&argv)? {
        Parsed::Run(s) => *s,
        Parsed::Help(_) => {
            return Err(SweepMergeError::NotPartitioned {
                file: first.clone(),
                member: "argv",
            }
            .into())
        }
    };
    let mut warnings = Vec::new();
    let counts: Vec<usize> = docs
        .iter()
        .map(|(_, d)| d["steps"].as_array().map_or(0, Vec::len))
        .collect();
    let common = counts.iter().copied().min().unwrap_or(0);
    if common == 0 {
        let at = counts.iter().position(|&c| c == 0).unwrap_or(0);
        return Err(SweepMergeError::NoSteps {
            file: docs[at].0.clone(),
        }
        .into());
    }
    for ((file, _), &c) in docs.iter().zip(&counts) {
        if c > common {
            warnings.push(format!(
                "warning: {file} has {c} steps, the others fewer: the merged sweep has the \
                 {common} steps every partition ran"
            ));
        }
    }
    Ok((sweep, warnings))
}

/// The finding a JSON `findings` key names.
fn finding(key: &str) -> Option<Finding> {
    Finding::ALL.into_iter().find(|f| f.key() == key)
}

/// The findings of every partition's run of one step, each naming its partition,
/// client-bound ones first (the conclusion quotes the first).
fn findings(inputs: &[Input], runs: &[&Value]) -> Vec<Advice> {
    let mut all: Vec<Advice> = inputs
        .iter()
        .zip(runs)
        .flat_map(|(inp, run)| {
            let (i, n) = inp.partition;
            run["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(move |f| {
                    let finding = finding(f["finding"].as_str()?)?;
                    let text = f["text"].as_str()?;
                    Some(Advice {
                        finding,
                        text: format!("{text} (partition {i}/{n})"),
                    })
                })
        })
        .collect();
    all.sort_by_key(|a| a.finding != Finding::ClientBound);
    all
}

/// Merges step `j` (from 0) of every partition.
fn merge_step(sweep: &Sweep, docs: &[(String, Value)], j: usize) -> Result<Step, Error> {
    let mut inputs = Vec::new();
    let mut runs = Vec::new();
    for (file, d) in docs {
        let s = &d["steps"][j];
        let run = &s["run"];
        if !run.is_object() {
            return Err(SweepMergeError::NoRun {
                file: file.clone(),
                step: j + 1,
            }
            .into());
        }
        inputs.push(Input::from_json(&format!("{file} step {}", j + 1), run)?);
        runs.push(run);
    }
    for w in merge::check(&inputs)? {
        eprintln!("rshperf: merge: step {}: {w}", j + 1);
    }
    let merged = merge::merge(&inputs)?;
    let report = merged.report();
    let first = &docs[0].1;
    let num = |v: &Value| v.as_f64().unwrap_or(0.0);
    let advice = findings(&inputs, &runs);
    let mut doc = merge::merged_json(&inputs, &merged, None);
    doc["findings"] = advice::to_json(&advice);
    let interrupted = docs.iter().any(|(_, d)| {
        d["steps"][j]["reasons"]
            .as_array()
            .is_some_and(|r| r.iter().any(|x| x == "interrupted"))
    });
    Ok(step::judge(
        sweep,
        Measured {
            rate: num(&first["steps"][j]["rate"]),
            arrivals: first["steps"][j]["arrivals"].as_u64().unwrap_or(0),
            share: 1.0,
            calls_per_arrival: num(&first["parameters"]["calls_per_arrival"]),
            ideal_tail: num(&first["parameters"]["ideal_tail_s"]),
            stats: &merged.stats,
            info: &merged.run,
            report: &report,
            advice,
            interrupted,
            doc: Some(doc),
        },
    ))
}

/// Merges the documents of a partitioned sweep and prints the sweep of the whole.
fn merge_sweeps(docs: &[(String, Value)], opts: &MergeAllOptions) -> Result<(), Error> {
    let (sweep, warnings) = check(docs)?;
    for w in warnings {
        eprintln!("rshperf: merge: {w}");
    }
    let files: Vec<&str> = docs.iter().map(|(f, _)| f.as_str()).collect();
    eprintln!(
        "rshperf merge: {} partitions of {}: {}",
        docs.len(),
        sweep.command,
        files.join(" ")
    );
    let common = docs
        .iter()
        .map(|(_, d)| d["steps"].as_array().map_or(0, Vec::len))
        .min()
        .unwrap_or(0);
    let steps = (0..common)
        .map(|j| merge_step(&sweep, docs, j))
        .collect::<Result<Vec<_>, _>>()?;
    let o = &sweep.opts;
    let mut planner = Planner::new(Strategy::Walk {
        low: o.low_rate,
        high: o.high_rate,
        step: o.rate_step.unwrap_or(o.high_rate),
        past_knee: o.past_knee,
    });
    for s in &steps {
        planner.record(s.rate, s.verdict, s.estimate);
    }
    let outcome = planner.outcome();
    let session = docs[0].1["steps"][0]["run"]["config"]
        .as_object()
        .is_some_and(|c| {
            ["wsess", "wsesslog", "wsesspage"]
                .iter()
                .any(|k| c.get(*k).is_some_and(|v| !v.is_null()))
        });
    let unit = if session { "sessions/s" } else { "conn/s" };
    let host = sweep
        .base
        .target
        .servers
        .as_deref()
        .unwrap_or(&sweep.base.target.server);
    let last = table::conclusion(&outcome, &steps, unit, o.high_rate, None);
    if opts.json.as_deref() != Some("-") {
        let mut text = table::header(host, o.output_fmt);
        for s in &steps {
            text.push('\n');
            text.push_str(&table::row(s, o.output_fmt));
        }
        text.push('\n');
        text.push_str(&last);
        text.push('\n');
        subcommand::print_stdout(&text);
    }
    if let Some(dest) = &opts.json {
        let mut doc = sweep_mod::document(&sweep, &steps, &outcome, &last);
        // What a merge needs, so that the merged sweep can be merged again.
        let first = &docs[0].1;
        doc["merged_from"] = json!(files);
        doc["argv"] = first["argv"].clone();
        doc["parameters"]["partition"] = json!([0, 1]);
        for key in ["stop_after_step", "calls_per_arrival", "ideal_tail_s"] {
            doc["parameters"][key] = first["parameters"][key].clone();
        }
        if let Some(list) = doc["steps"].as_array_mut() {
            for (j, s) in list.iter_mut().enumerate() {
                s["start_unix"] = first["steps"][j]["start_unix"].clone();
            }
        }
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
        if dest == "-" {
            subcommand::print_stdout(&text);
        } else {
            fs::write(dest, text).map_err(|source| SweepMergeError::Write {
                option: "--json",
                path: dest.clone(),
                source,
            })?;
        }
    }
    if let Some(path) = &opts.html {
        let s = &sweep.base.sessions;
        let sessions = s.wsess.is_some() || s.wsesslog.is_some() || s.wsesspage.is_some();
        let unit = if sessions { "sessions/s" } else { "conn/s" };
        let page = html::sweep_page(&sweep_mod::page(&sweep, &steps, &outcome, &last, unit))
            .map_err(|source| crate::output::error::OutputError::Draw {
                option: "--html",
                source,
            })?;
        fs::write(path, page).map_err(|source| SweepMergeError::Write {
            option: "--html",
            path: path.clone(),
            source,
        })?;
    }
    Ok(())
}
