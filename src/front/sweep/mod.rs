//! `rshperf sweep`: capacity sweeps in one process.
//!
//! Owns the sweep's course: parse (`args`), build the workload once, run one step
//! after another (`step`, through `execute::execute`) at the rates the `plan` picks
//! (the walk or `--find-max`), print each step's table row as soon as it is known
//! (`table`), the step's warnings and, on a terminal, a progress line on stderr, then
//! the conclusion, the `--json` document and the `--html` page. With `--in-one-run`
//! the walk is one profiled run instead (`one_run`, its levels judged by `levels`),
//! whose levels become the steps of the same table, document and page. SIGINT and SIGTERM,
//! caught from the start (`runner::catch_signals`), end the step that runs or the wait
//! before the next, and the sweep. Called by `crate::run` for `rshperf sweep`.

pub(crate) mod args;
pub(crate) mod levels;
pub(crate) mod one_run;
pub(crate) mod partition;
pub(crate) mod plan;
pub(crate) mod rules;
pub(crate) mod step;
pub(crate) mod table;

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::engine::interrupt;
use crate::engine::metrics::Exporter;
use crate::engine::progress;
pub(crate) use crate::front::error::sweep::SweepError;
use crate::front::error::Error;
use crate::front::subcommand;
use crate::model::config::auto_partition::process_env;
use crate::model::workload::Workload;
use crate::output::error::OutputError;
use crate::output::html::{self, SweepPage, SweepPoint};
use crate::output::json;

use args::{Parsed, Sweep};
use plan::{Outcome, Planner, Strategy};
use rules::{Facts, Parameters};
use step::Step;

/// The `format` member of the sweep document.
pub(crate) const FORMAT: &str = "rshperf-sweep";

/// Runs `rshperf sweep` (`args[0]` is `sweep`); returns the exit status.
pub(crate) fn sweep_main(args: &[String]) -> i32 {
    let rest = args.get(1..).unwrap_or_default();
    subcommand::exit_status(args::parse(rest).and_then(|parsed| match parsed {
        Parsed::Help(text) => {
            subcommand::print_stdout(&text);
            Ok(0)
        }
        Parsed::Run(mut sweep) => {
            crate::front::runner::catch_signals()?;
            partition::resolve(&mut sweep, &process_env)?;
            run(&sweep).map(|()| 0)
        }
    }))
}

/// Where the table goes: stdout, or `--file` (then the conclusion goes to both).
struct TableOut {
    file: Option<File>,
}

impl TableOut {
    fn line(&mut self, text: &str) -> io::Result<()> {
        match &mut self.file {
            Some(f) => writeln!(f, "{text}").and_then(|_| f.flush()),
            None => {
                let mut out = io::stdout().lock();
                writeln!(out, "{text}")?;
                out.flush()
            }
        }
    }
}

fn strategy(s: &Sweep) -> Strategy {
    let o = &s.rules;
    match (o.find_max, o.rate_step) {
        (false, Some(step)) => Strategy::Walk {
            low: o.low_rate,
            high: o.high_rate,
            step,
            past_knee: o.past_knee,
        },
        // --find-max, on the walk's grid when --rate-step is given (the parser
        // refuses a sweep with neither).
        (_, grid) => Strategy::FindMax {
            low: o.low_rate,
            high: o.high_rate,
            precision: o.precision / 100.0,
            grid,
        },
    }
}

fn run(sweep: &Sweep) -> Result<(), Error> {
    let work = Workload::from_config(&sweep.base)?;
    let o = &sweep.rules;
    let unit = if work.is_session() {
        "sessions/s"
    } else {
        "conn/s"
    };
    let host = sweep
        .base
        .target()
        .servers()
        .unwrap_or(sweep.base.target().server());
    // A path that cannot be written fails now, before the first step.
    crate::output::file::probe_all(&[
        ("--file", sweep.file.as_deref()),
        ("--json", sweep.json.as_deref()),
        ("--html", sweep.html.as_deref()),
        ("--csv", sweep.base.output().csv()),
    ])?;
    let file = match &sweep.file {
        Some(path) => Some(File::create(path).map_err(|source| OutputError::Named {
            option: "--file",
            path: path.clone(),
            source,
        })?),
        None => None,
    };
    let mut out = TableOut { file };
    let write_err = OutputError::Table;
    out.line(&table::header(host, o.output_fmt))
        .map_err(write_err)?;
    let show = progress::wanted(sweep.base.output().progress());
    let exporter = sweep
        .base
        .output()
        .metrics_listen()
        .map(Exporter::start)
        .transpose()?;
    let mut planner = Planner::new(strategy(sweep));
    let mut steps: Vec<Step> = Vec::new();
    let mut cut_short = None;
    let fixed = partition::schedule(sweep, &work, SystemTime::now())?;
    if let Some(slots) = &fixed {
        let (i, n) = sweep.base.load().partition();
        crate::wire::note::note!(
            "rshperf sweep: partition {i}/{n}: {} steps at fixed moments{}; merge the \
             partitions' --json documents with rshperf merge",
            slots.len(),
            if o.stop_after_step.is_some() {
                " (--stop-after-step)"
            } else {
                ", up to --high-rate: the stop past the knee needs every partition's \
                 results (--stop-after-step K stops earlier)"
            }
        );
    }
    let mut slots = fixed.clone().map(Vec::into_iter);
    let mut starts = Vec::new();
    let mut one = None;
    if o.in_one_run {
        let (_, text) = one_run::config(sweep)?;
        crate::wire::note::note!("rshperf sweep: the walk in one run: --rate-profile {text}");
        let run = one_run::run(sweep, exporter.as_ref())?;
        for a in &run.advice {
            crate::wire::note::note!("rshperf: warning: in the run: {}", a.text);
        }
        for step in &run.steps {
            out.line(&table::row(step, o.output_fmt))
                .map_err(write_err)?;
            for a in &step.advice {
                crate::wire::note::note!(
                    "rshperf: warning: at {} {unit}: {}",
                    table::short(step.rate),
                    a.text
                );
            }
            planner.record(step.rate, step.verdict, None);
            starts.push(None);
        }
        if run.interrupted {
            cut_short = run.levels.get(run.steps.len()).map(|l| l.rate);
        }
        steps = run.steps.clone();
        one = Some(run);
    } else {
        loop {
            let (rate, at) = match &mut slots {
                Some(it) => match it.next() {
                    Some(slot) => (slot.rate, Some(slot.start)),
                    None => break,
                },
                None => match planner.next() {
                    Some(r) if o.stop_after_step.is_none_or(|k| steps.len() < k as usize) => {
                        (r, None)
                    }
                    _ => break,
                },
            };
            // SIGINT/SIGTERM (caught since `sweep_main`) end the wait, and the sweep.
            match at {
                Some(t) => {
                    interrupt::sleep(Duration::from_secs_f64((t - unix_now()).max(0.0)));
                }
                None if !steps.is_empty() && o.cool_down > 0.0 => {
                    interrupt::sleep(Duration::from_secs_f64(o.cool_down));
                }
                None => {}
            }
            if interrupt::caught() {
                cut_short = Some(rate);
                break;
            }
            let number = u32::try_from(steps.len() + 1).unwrap_or(u32::MAX);
            let metrics = exporter.as_ref().map(|e| (e, number));
            let step = match at {
                Some(t) => {
                    let late = unix_now() - t;
                    if late > LATE_START_S {
                        crate::wire::note::note!(
                            "rshperf: warning: step {number} at {} {unit} starts {late:.3} s \
                             late: the step before it overran its moment (raise --cool-down)",
                            table::short(rate)
                        );
                    }
                    step::run(sweep, &work, rate, Some(t), metrics)?
                }
                None => step::run(sweep, &work, rate, None, metrics)?,
            };
            starts.push(at);
            out.line(&table::row(&step, o.output_fmt))
                .map_err(write_err)?;
            for a in &step.advice {
                crate::wire::note::note!(
                    "rshperf: warning: at {} {unit}: {}",
                    table::short(rate),
                    a.text
                );
            }
            if show {
                crate::wire::note::note!(
                    "rshperf sweep: step {} at {} {unit}: {} (achieved {:.1} %, p99 {:.3} ms, {} errors)",
                    steps.len() + 1,
                    table::short(rate),
                    step.verdict.name(),
                    step.achieved_pct,
                    step.figures.response_ms[2],
                    step.figures.errors
                );
            }
            planner.record(rate, step.verdict, step.estimate);
            let ended = step.interrupted;
            steps.push(step);
            if ended {
                break;
            }
        }
    }
    let outcome = planner.outcome();
    let search = o.find_max.then(|| match o.rate_step {
        Some(step) => format!("to one step of {}", table::short(step)),
        None => format!("precision {} %", table::short(o.precision)),
    });
    let mut last = table::conclusion(&outcome, &steps, unit, o.high_rate, search.as_deref());
    if let Some(run) = &one {
        last.push_str(&format!(" [one run: --rate-profile {}]", run.profile));
    }
    if let Some(rate) = cut_short {
        last.push_str(&format!(
            " (interrupted before the step at {} {unit})",
            table::short(rate)
        ));
    }
    out.line(&last).map_err(write_err)?;
    if out.file.is_some() {
        crate::wire::note::say!("{last}");
    }
    let params = o.parameters(Facts {
        num_conns: sweep.base.load().num_conns(),
        partition: sweep.base.load().partition(),
        calls_per_arrival: step::calls_per_arrival(&sweep.base, &work),
        ideal_tail_s: step::tail_of(&work),
    });
    if let Some(dest) = &sweep.json {
        let mut doc = document(&params, &o.command, &steps, &outcome, &last);
        if cut_short.is_some() {
            doc["result"]["interrupted"] = json!(true);
        }
        doc["argv"] = json!(sweep.argv);
        start_members(&mut doc, &starts);
        if let Some(run) = &one {
            one_run_members(&mut doc, run);
        }
        json::write_value_to(dest, &doc).map_err(|source| OutputError::File {
            option: "--json",
            path: dest.clone(),
            source,
        })?;
    }
    if let Some(path) = &sweep.html {
        let page = html::sweep_page(&page(&params, &o.command, &steps, &outcome, &last, unit))
            .map_err(|source| OutputError::Draw {
                option: "--html",
                source,
            })?;
        crate::output::file::write_bytes(Path::new(path), page.as_bytes()).map_err(|source| {
            OutputError::File {
                option: "--html",
                path: path.clone(),
                source,
            }
        })?;
    }
    if let Some(e) = exporter {
        e.linger(sweep.base.output().metrics_linger());
    }
    Ok(())
}

/// How late a partitioned step may start before the sweep warns, s.
const LATE_START_S: f64 = 0.05;

/// The wall clock, seconds since the epoch.
fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// Each step's moment in a partitioned sweep (`start_unix`, null otherwise): what
/// `rshperf merge` keeps of the steps beside their runs.
fn start_members(doc: &mut Value, starts: &[Option<f64>]) {
    if let Some(list) = doc["steps"].as_array_mut() {
        for (s, at) in list.iter_mut().zip(starts) {
            s["start_unix"] = json!(at);
        }
    }
}

/// What a sweep in one run adds to its document: `in_one_run`, the `profile` it ran,
/// the run's document (`run`; each step's `run` is null), and each step's window in
/// the run (`start_s`, `end_s`) with the seconds it was judged from.
fn one_run_members(doc: &mut Value, run: &one_run::OneRun) {
    doc["in_one_run"] = json!(true);
    doc["profile"] = json!(run.profile);
    doc["run"] = run.doc.clone().unwrap_or(Value::Null);
    if let Some(list) = doc["steps"].as_array_mut() {
        for (s, level) in list.iter_mut().zip(&run.levels) {
            s["start_s"] = json!(level.start);
            s["end_s"] = json!(level.end);
            s["judged_seconds"] = json!(levels::judged_seconds(level));
        }
    }
}

/// The sweep's parameters as (name, value) text, for the page.
fn parameters(o: &Parameters) -> Vec<(String, String)> {
    let mut p = vec![
        ("low rate".to_string(), table::short(o.low_rate)),
        ("high rate".to_string(), table::short(o.high_rate)),
    ];
    match (o.find_max, o.rate_step) {
        (false, Some(s)) => {
            p.push(("rate step".into(), table::short(s)));
            if !o.in_one_run {
                p.push((
                    "failing steps past the knee".into(),
                    o.past_knee.to_string(),
                ));
            }
        }
        (_, Some(s)) => p.push((
            "search (--find-max)".into(),
            format!("on the walk's rates, to one step of {}", table::short(s)),
        )),
        (_, None) => p.push((
            "search (--find-max) precision".into(),
            format!("{} %", o.precision_pct),
        )),
    }
    if let (true, Some(step), Some(t)) = (o.in_one_run, o.rate_step, o.const_test_time_s) {
        p.push((
            "run".into(),
            format!(
                "one run, every level judged from its seconds: --rate-profile {}",
                levels::profile_text(o.low_rate, o.high_rate, step, t, o.stop_after_step)
            ),
        ));
    }
    match (o.const_test_time_s, o.num_conns) {
        (Some(t), _) => p.push(("seconds per step".into(), table::short(t))),
        (None, n) => p.push(("arrivals per step".into(), n.unwrap_or(0).to_string())),
    }
    let slo = if o.slo.is_empty() {
        "none".to_string()
    } else {
        o.slo.join(", ")
    };
    p.push((
        "a step passes when".into(),
        format!(
            "achieved ≥ {} % of demanded, errors ≤ {}, SLOs: {slo}",
            o.min_achieved_pct, o.max_errors
        ),
    ));
    p
}

/// The `--html` page of the sweep `command` of parameters `params`.
pub(crate) fn page(
    params: &Parameters,
    command: &str,
    steps: &[Step],
    outcome: &Outcome,
    last: &str,
    unit: &'static str,
) -> SweepPage {
    let knee = outcome.knee.map(|k| match outcome.limit {
        Some((_, plan::Verdict::Client)) => (k, "highest passing rate (client limit above)"),
        None => (k, "highest rate run (no knee)"),
        Some(_) => (k, "knee"),
    });
    SweepPage {
        command: command.to_string(),
        parameters: parameters(params),
        unit,
        points: steps
            .iter()
            .map(|s| SweepPoint {
                rate: s.rate,
                demanded: s.demanded,
                achieved: s.achieved,
                response_ms: s.figures.response_ms,
                errors_pct: if s.figures.connections == 0 {
                    0.0
                } else {
                    100.0 * s.figures.errors as f64 / s.figures.connections as f64
                },
                lateness_p99_ms: s.figures.lateness_p99_ms,
                client_cpu_pct: s.figures.client_cpu_pct,
                verdict: s.verdict.name().to_string(),
                client_bound: s.client_bound,
            })
            .collect(),
        knee,
        conclusion: last.trim_start_matches("# ").to_string(),
    }
}

/// The `--json` document of the sweep `command`: its parameters, every step with its
/// run document, the result.
pub(crate) fn document(
    params: &Parameters,
    command: &str,
    steps: &[Step],
    outcome: &Outcome,
    last: &str,
) -> Value {
    let list: Vec<Value> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({
                "step": i + 1,
                "rate": s.rate,
                "arrivals": s.arrivals,
                "demanded_req_rate": s.demanded,
                "achieved_req_rate": s.achieved,
                "achieved_pct": s.achieved_pct,
                "verdict": s.verdict.name(),
                "reasons": s.reasons,
                "estimate": s.estimate,
                "lateness_p99_ms": s.figures.lateness_p99_ms,
                "client_cpu_pct": s.figures.client_cpu_pct,
                "run": s.doc.clone().unwrap_or(Value::Null),
            })
        })
        .collect();
    json!({
        "format": FORMAT,
        "version": 1,
        "rshperf_version": env!("CARGO_PKG_VERSION"),
        "command": command,
        "parameters": params,
        "steps": list,
        "result": {
            "knee": outcome.knee,
            "limit": outcome.limit.map(|(r, v)| json!({ "rate": r, "verdict": v.name() })),
            "conclusion": last.trim_start_matches("# "),
            "interrupted": steps.iter().any(|s| s.interrupted),
        },
    })
}
