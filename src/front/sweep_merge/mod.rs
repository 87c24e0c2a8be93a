//! `rshperf merge` of the `--json` documents of a partitioned sweep (`rshperf sweep
//! --partition I/N --start-at T --json FILE` on N machines): the sweep of the whole.
//!
//! Owns telling sweep documents from run documents (run documents go to
//! `front::merge` unchanged), checking that the inputs are partitions of one sweep
//! (the same parameters), and rebuilding it: step j of every partition is merged
//! exactly as a single run's partitions are (`merge::check`, `merge::merge`), then
//! judged by the sweep's own rules as its document records them (`step::judge`,
//! `rules::Rules::stored` from `parameters`), a step being client-bound when any
//! partition's was; the target and the kind of workload come from the steps' stored
//! run configuration (`ConfigDoc`): nothing is parsed or built again. The table,
//! conclusion, `--json` document and `--html` page are the ones a one-machine sweep
//! writes. Sits above `merge` and `sweep` so neither imports the
//! other. Called by `dispatch` for `rshperf merge`.

use std::fs;

use serde_json::{json, Value};

use crate::front::error::Error;
use crate::front::merge::{self, Input, MergeOptions};
use crate::front::subcommand;
use crate::front::sweep::plan::{Planner, Strategy};
use crate::front::sweep::rules::{Parameters, Rules};
use crate::front::sweep::step::{self, Measured, Step};
use crate::front::sweep::{self as sweep_mod, table, FORMAT};
use crate::model::config::doc::ConfigDoc;
use crate::output::advice::Finding;
use crate::output::html;

pub(crate) use crate::front::error::sweep_merge::SweepMergeError;

/// `rshperf merge …` (`args[0]` is `merge`): sweep documents are merged here, run
/// documents by `merge::try_merge`.
pub(crate) fn merge_main(args: &[String]) -> i32 {
    subcommand::run::<MergeOptions>(args, |opts| {
        let mut docs = Vec::new();
        for file in &opts.files {
            // An unreadable or non-JSON input is `merge`'s to report.
            let Ok(text) = fs::read_to_string(file) else {
                return runs(&opts);
            };
            let Ok(doc) = serde_json::from_str::<Value>(&text) else {
                return runs(&opts);
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
            (None, _) => runs(&opts),
        }
    })
}

/// The help text of `rshperf merge`.
pub(crate) fn help() -> String {
    subcommand::help_text::<MergeOptions>()
}

/// Run documents: `merge`'s (which refuses `--html`).
fn runs(opts: &MergeOptions) -> Result<i32, Error> {
    if opts.html.is_some() {
        return Err(SweepMergeError::HtmlForRuns.into());
    }
    merge::try_merge(opts)
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

/// Checks that `docs` are partitions of one sweep; returns its rules and parameters
/// (as the first one records them) and warnings.
fn check(docs: &[(String, Value)]) -> Result<(Rules, Parameters, Vec<String>), Error> {
    let (first, doc) = docs.first().ok_or(SweepMergeError::NoSteps {
        file: String::new(),
    })?;
    for (file, d) in docs {
        if d["in_one_run"] == true {
            return Err(SweepMergeError::OneRun { file: file.clone() }.into());
        }
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
    let params: Parameters = serde_path_to_error::deserialize(&doc["parameters"]).map_err(|e| {
        SweepMergeError::BadMember {
            file: first.clone(),
            member: "parameters",
            path: e.path().to_string(),
            source: e.into_inner(),
        }
    })?;
    let command = doc["command"].as_str().unwrap_or_default();
    let rules = Rules::stored(&params, command).map_err(|source| SweepMergeError::Slo {
        file: first.clone(),
        source: Box::new(source),
    })?;
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
    Ok((rules, params, warnings))
}

/// Merges step `j` (from 0) of every partition.
fn merge_step(rules: &Rules, docs: &[(String, Value)], j: usize) -> Result<Step, Error> {
    let mut inputs = Vec::new();
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
    }
    for w in merge::check(&inputs)? {
        crate::wire::note::note!("rshperf: merge: step {}: {w}", j + 1);
    }
    let merged = merge::merge(&inputs)?;
    let report = merged.report();
    let first = &docs[0].1;
    let num = |v: &Value| v.as_f64().unwrap_or(0.0);
    let advice = merge::findings(&inputs);
    // The partitions' judgements; a document without one, its client-bound finding.
    let client_bound = merged.validity.as_ref().map_or_else(
        || advice.iter().any(|a| a.finding == Finding::ClientBound),
        |v| v.client_bound(),
    );
    let doc = merge::merged_json(&inputs, &merged, None);
    let interrupted = docs.iter().any(|(_, d)| {
        d["steps"][j]["reasons"]
            .as_array()
            .is_some_and(|r| r.iter().any(|x| x == "interrupted"))
    });
    Ok(step::judge(
        rules,
        Measured {
            rate: num(&first["steps"][j]["rate"]),
            arrivals: first["steps"][j]["arrivals"].as_u64().unwrap_or(0),
            share: 1.0,
            calls_per_arrival: num(&first["parameters"]["calls_per_arrival"]),
            ideal_tail: num(&first["parameters"]["ideal_tail_s"]),
            stats: &merged.stats,
            info: &merged.run,
            report: &report,
            client_bound,
            advice,
            interrupted,
            doc: Some(doc),
        },
    ))
}

/// Merges the documents of a partitioned sweep and prints the sweep of the whole.
fn merge_sweeps(docs: &[(String, Value)], opts: &MergeOptions) -> Result<(), Error> {
    let (rules, params, warnings) = check(docs)?;
    for w in warnings {
        crate::wire::note::note!("rshperf: merge: {w}");
    }
    let files: Vec<&str> = docs.iter().map(|(f, _)| f.as_str()).collect();
    crate::wire::note::note!(
        "rshperf merge: {} partitions of {}: {}",
        docs.len(),
        rules.command,
        files.join(" ")
    );
    let common = docs
        .iter()
        .map(|(_, d)| d["steps"].as_array().map_or(0, Vec::len))
        .min()
        .unwrap_or(0);
    let steps = (0..common)
        .map(|j| merge_step(&rules, docs, j))
        .collect::<Result<Vec<_>, _>>()?;
    let o = &rules;
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
    // The target and the kind of workload, as the first step's run recorded them.
    let (first_file, first) = &docs[0];
    let config: ConfigDoc = serde_path_to_error::deserialize(&first["steps"][0]["run"]["config"])
        .map_err(|e| SweepMergeError::BadMember {
        file: first_file.clone(),
        member: "steps[0].run.config",
        path: e.path().to_string(),
        source: e.into_inner(),
    })?;
    let unit = if config.is_session() {
        "sessions/s"
    } else {
        "conn/s"
    };
    let host = config.servers().unwrap_or(config.server());
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
    // The merged sweep is the whole one: partition 0/1 of the same parameters.
    let whole = Parameters {
        partition: (0, 1),
        ..params
    };
    if let Some(dest) = &opts.json {
        let mut doc = sweep_mod::document(&whole, &rules.command, &steps, &outcome, &last);
        // What a merge needs, so that the merged sweep can be merged again.
        let first = &docs[0].1;
        doc["merged_from"] = json!(files);
        doc["argv"] = first["argv"].clone();
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
        let page = html::sweep_page(&sweep_mod::page(
            &whole,
            &rules.command,
            &steps,
            &outcome,
            &last,
            unit,
        ))
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
