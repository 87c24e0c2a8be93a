//! `rshperf compare BASE.json NEW.json [NEW…]`: is the new build faster, slower, or
//! not significantly different from the base?
//!
//! Owns the command line (clap, `subcommand`'s conventions), reading the `--json`
//! documents of runs (this release's schema; documents of another version are refused
//! by their version number), refusing to compare different workloads or runs whose
//! `validity` block says they are invalid unless `--force` (which compares them and
//! marks the invalid runs in every output), pooling the runs of each side, the regression gates
//! (`--fail-on-regression`) and the exit status: 0, 3 when a gate trips (past its
//! limit and significant), 1 for bad options or refused inputs. The figures and tests
//! are `model::compare`'s, the outputs `output::compare`'s and `output::junit`'s.
//! Called by `dispatch` for `rshperf compare`.
//!
//! Which files are the base: without `--base`, the first file is the base and the
//! rest are new runs; with `--base FILE` (repeatable: the last few main builds), every
//! positional file is a new run. Each side's runs are pooled into one sample.

use std::fs;
use std::path::Path;

use serde_json::Value;

pub(crate) use crate::front::error::compare::CompareError;
use crate::front::error::Error;
use crate::model::compare::gate::{self, judge};
use crate::model::compare::invalid::{Invalid, Side};
use crate::model::compare::{compare, row_alpha, Comparison, Run, RUN_NOISE};
use crate::model::config::doc::{ConfigDoc, Role};
use crate::model::validity::{self, Validity};
use crate::output::compare::{markdown, text, to_json};
use crate::output::error::OutputError;
use crate::output::file;
use crate::output::json::stats_from_json;
use crate::output::junit::{self, Case};

/// The members of the configuration that the runs compared must share (`--force`
/// compares anyway): what is sent, and how the client ran it. The run's length
/// (`num_conns`, `runtime_s`) may differ.
const SHARED: [Role; 2] = [Role::Workload, Role::Client];

/// The output formats of `rshperf compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// An aligned table for terminals and logs
    Text,
    /// A GitHub-flavoured markdown table (job summaries, PR comments)
    Markdown,
    /// A JSON document (format "rshperf-compare")
    Json,
}

/// The options of `rshperf compare`.
#[derive(Debug, Clone, PartialEq, clap::Parser)]
#[command(
    name = "compare",
    about = "Compare the --json documents of new runs against base runs: faster, slower or no \
significant change.",
    long_about = "Compare the --json documents of new runs against base runs: the reply and \
connection rates, the response, connect and lateness quantiles p50 p90 p99 p99.9, the errors per \
connection and the client's CPU per reply, each as the whole runs' figure, with the change, its \
confidence interval and a verdict. The noise of each figure is estimated from the runs' 100-ms \
windows (batch means; Woodruff's interval for quantiles) plus a run-to-run noise (--run-noise, or \
the runs' own spread when a side has several). The verdict covers the figures the gates name (or, \
without gates, every figure about the server) at level ALPHA in all, each at ALPHA divided by \
their number; an interval the data cannot support is printed as n/a with the reason. Without \
--base the first FILE is the base and the others are new runs; with --base every FILE is a new \
run. The runs of each side are pooled. Runs of different workloads, and runs whose validity block \
says they are invalid, are refused (exit status 1) unless --force, which compares them and marks \
the invalid runs in every output. Exit status 3 when a --fail-on-regression gate trips: the \
change is past its limit and significant."
)]
pub(crate) struct CompareOptions {
    /// A base run (repeatable: the runs pool into one baseline); then every FILE is new
    #[arg(long, value_name = "FILE")]
    pub(crate) base: Vec<String>,
    /// Significance level of the verdict: the chance that two runs of the same build are
    /// called different (split over the figures in the verdict)
    #[arg(long, value_name = "ALPHA", default_value_t = 0.01, value_parser = parse_alpha)]
    pub(crate) alpha: f64,
    /// How much one run's figures differ from another's of the same build, beyond
    /// their own noise: standard deviation in % (the runs' own spread is used when a
    /// side has several and it is larger)
    #[arg(long, value_name = "PCT", default_value_t = 100.0 * RUN_NOISE, value_parser = parse_noise)]
    pub(crate) run_noise: f64,
    /// Compare runs of different workloads, or runs that are not valid (a warning names
    /// the differences; every output marks the invalid runs)
    #[arg(long)]
    pub(crate) force: bool,
    /// Exit 3 when METRIC changed past the limit and significantly, e.g. 'p99>+10%',
    /// 'reply-rate<-5%' (repeatable; metric names as --fail-on)
    #[arg(long, value_name = "EXPR")]
    pub(crate) fail_on_regression: Vec<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    /// Also write a JUnit XML report, one test case per gate, to FILE
    #[arg(long, value_name = "FILE", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub(crate) junit: Option<String>,
    /// The --json documents: BASE then NEW… (or only NEW… with --base)
    #[arg(value_name = "FILE.json", required = true)]
    pub(crate) files: Vec<String>,
}

/// `--alpha`: a probability in (0, 0.5].
fn parse_alpha(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|a| *a > 0.0 && *a <= 0.5)
        .ok_or_else(|| format!("'{text}' is not a significance level in (0, 0.5]"))
}

/// `--run-noise`: a percentage in [0, 100], as a fraction.
fn parse_noise(text: &str) -> Result<f64, String> {
    text.trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|v| (0.0..=100.0).contains(v))
        .map(|v| v / 100.0)
        .ok_or_else(|| format!("'{text}' is not a percentage in [0, 100]"))
}

/// One input document, read.
#[derive(Debug, Clone)]
pub(crate) struct Input {
    /// The file name as given.
    pub(crate) file: String,
    /// Its `config` member, as stored.
    pub(crate) config: ConfigDoc,
    /// Its statistics and run facts.
    pub(crate) run: Run,
    /// Its `validity` block (None: the document has none).
    pub(crate) validity: Option<Validity>,
}

/// Reads a document's text; `file` names it in messages.
pub(crate) fn read_text(file: &str, text: &str) -> Result<Input, CompareError> {
    let bad = |m: String| CompareError::Input(format!("{file}: {m}"));
    let doc: Value =
        serde_json::from_str(text).map_err(|e| bad(format!("not a JSON document: {e}")))?;
    if doc.get("format").and_then(Value::as_str) == Some(crate::output::compare::FORMAT) {
        return Err(bad("is the output of rshperf compare, not of a run".into()));
    }
    let run = stats_from_json(&doc).map_err(|e| bad(e.to_string()))?;
    let config = doc
        .get("config")
        .filter(|c| c.is_object())
        .ok_or_else(|| bad("missing config".into()))?;
    let config: ConfigDoc = serde_path_to_error::deserialize(config)
        .map_err(|e| bad(format!("config.{}: {}", e.path(), e.inner())))?;
    let validity = validity::doc::from_document(&doc).map_err(bad)?;
    Ok(Input {
        file: file.to_string(),
        config,
        run,
        validity,
    })
}

fn read_file(file: &str) -> Result<Input, CompareError> {
    let text = fs::read_to_string(file)
        .map_err(|e| CompareError::Input(format!("cannot read {file}: {e}")))?;
    read_text(file, &text)
}

/// The workload differences between the first input and each other one, as
/// `a.json and b.json differ in uri: "/x" vs "/y"`.
pub(crate) fn differences(inputs: &[&Input]) -> Vec<String> {
    let Some(first) = inputs.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for inp in &inputs[1..] {
        let theirs = inp.config.identity(&SHARED);
        for ((key, a), (_, b)) in first.config.identity(&SHARED).into_iter().zip(theirs) {
            if a != b {
                out.push(format!(
                    "{} and {} differ in {key}: {a} vs {b}",
                    first.file, inp.file
                ));
            }
        }
    }
    out
}

/// The files of each side: (base, new).
fn sides(opts: &CompareOptions) -> Result<(Vec<String>, Vec<String>), CompareError> {
    if !opts.base.is_empty() {
        return Ok((opts.base.clone(), opts.files.clone()));
    }
    match opts.files.split_first() {
        Some((base, new)) if !new.is_empty() => Ok((vec![base.clone()], new.to_vec())),
        _ => Err(CompareError::Usage(
            "give a BASE and at least one NEW document (or --base BASE and NEW…)".into(),
        )),
    }
}

/// The inputs a signal cut short, as `b.json was interrupted (SIGTERM or SIGINT): …`.
fn interrupted(inputs: &[&Input]) -> Vec<String> {
    inputs
        .iter()
        .filter(|i| i.run.0.interrupted)
        .map(|i| {
            format!(
                "{} was interrupted (SIGINT or SIGTERM): its figures cover only the part of \
                 the run before the signal",
                i.file
            )
        })
        .collect()
}

/// Everything `compare` does but printing: the comparison of `opts`' files, and the
/// warnings about them (an interrupted run; with `--fail-on-regression` that is an
/// error instead: no gate can be judged on part of a run).
pub(crate) fn comparison(opts: &CompareOptions) -> Result<(Comparison, Vec<String>), CompareError> {
    let (base_files, new_files) = sides(opts)?;
    let read = |files: &[String]| {
        files
            .iter()
            .map(|f| read_file(f))
            .collect::<Result<Vec<_>, _>>()
    };
    let (base, new) = (read(&base_files)?, read(&new_files)?);
    let all: Vec<&Input> = base.iter().chain(&new).collect();
    let warnings = interrupted(&all);
    if let (Some(first), false) = (warnings.first(), opts.fail_on_regression.is_empty()) {
        return Err(CompareError::Input(format!(
            "{first}; --fail-on-regression judges whole runs only"
        )));
    }
    let diffs = differences(&all);
    let forced = match (diffs.first(), opts.force) {
        (Some(first), false) => {
            return Err(CompareError::Workload(format!(
                "runs of different workloads: {first}"
            )))
        }
        _ => diffs,
    };
    let invalid: Vec<Invalid> = [(Side::Base, &base), (Side::New, &new)]
        .into_iter()
        .flat_map(|(side, inputs)| {
            inputs
                .iter()
                .filter_map(move |i| Invalid::of(side, &i.file, i.validity.as_ref()))
        })
        .collect();
    if !invalid.is_empty() && !opts.force {
        return Err(CompareError::Invalid(
            invalid.iter().map(Invalid::text).collect(),
        ));
    }
    let runs = |v: Vec<Input>| v.into_iter().map(|i| i.run).collect::<Vec<Run>>();
    let rows = compare(&runs(base), &runs(new), opts.run_noise);
    let names: Vec<&str> = rows.iter().map(|r| r.figure.as_str()).collect();
    let gates = opts
        .fail_on_regression
        .iter()
        .map(|e| {
            gate::parse(e, &names)
                .map_err(|m| CompareError::Usage(format!("--fail-on-regression: {m}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let gated: Vec<&str> = gates.iter().map(|g| g.figure.as_str()).collect();
    let level = row_alpha(opts.alpha, &rows, &gated);
    let gates = gates.iter().map(|g| judge(g, &rows, level)).collect();
    let c = Comparison {
        base_files,
        new_files,
        alpha: opts.alpha,
        run_noise: opts.run_noise,
        rows,
        gates,
        forced,
        invalid,
    };
    Ok((c, warnings))
}

/// The JUnit cases of a comparison: one per gate, then one skipped case per invalid
/// run that `--force` compared (`valid: base a.json`, its line as the reason).
pub(crate) fn junit_cases(c: &Comparison) -> Vec<Case> {
    let gates = c.gates.iter().map(|g| Case {
        name: g.gate.expr.clone(),
        failure: g.failed.then(|| g.message.clone()),
        skipped: None,
        output: g.message.clone(),
    });
    let invalid = c.invalid.iter().map(|i| Case {
        name: format!("valid: {} {}", i.side.key(), i.file),
        failure: None,
        skipped: Some(format!("{} (--force)", i.text())),
        output: i.text(),
    });
    gates.chain(invalid).collect()
}

fn try_compare(opts: &CompareOptions) -> Result<i32, CompareError> {
    if let Some(path) = &opts.junit {
        file::probe_all(&[("--junit", Some(path.as_str()))])?;
    }
    let (c, warnings) = comparison(opts)?;
    for w in &warnings {
        crate::wire::note::note!("rshperf: compare: warning: {w}");
    }
    let out = match opts.format {
        Format::Text => text(&c),
        Format::Markdown => markdown(&c),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&to_json(&c))?;
            s.push('\n');
            s
        }
    };
    if opts.format != Format::Text {
        for f in &c.forced {
            crate::wire::note::note!("rshperf: compare: warning: workloads differ (--force): {f}");
        }
        for i in &c.invalid {
            crate::wire::note::note!("rshperf: compare: warning: {} (--force)", i.text());
        }
    }
    crate::front::subcommand::print_stdout(&out);
    if let Some(path) = &opts.junit {
        let xml = junit::document("rshperf compare", "rshperf.compare", &junit_cases(&c), 0.0);
        file::write_bytes(Path::new(path), xml.as_bytes()).map_err(|source| OutputError::File {
            option: "--junit",
            path: path.clone(),
            source,
        })?;
    }
    Ok(if c.failed() { 3 } else { 0 })
}

/// `rshperf compare …` (`args[0]` is `compare`): returns the exit status.
pub(crate) fn compare_main(args: &[String]) -> i32 {
    crate::front::subcommand::run::<CompareOptions>(args, |opts| {
        try_compare(&opts).map_err(Error::from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::subcommand::{parse, Parsed};
    use crate::model::config::Config;
    use crate::model::run::{RunInfo, RunMeta};
    use crate::model::stats::Stats;
    use crate::output::json::to_json as run_json;

    fn opts(list: &[&str]) -> CompareOptions {
        let args: Vec<String> = std::iter::once("compare")
            .chain(list.iter().copied())
            .map(String::from)
            .collect();
        match parse::<CompareOptions>(&args) {
            Ok(Parsed::Run(o)) => o,
            other => panic!("{list:?}: {other:?}"),
        }
    }

    #[test]
    fn options_and_sides() {
        let o = opts(&["a.json", "b.json", "c.json"]);
        assert_eq!(o.alpha, 0.01);
        assert_eq!(o.run_noise, RUN_NOISE);
        assert_eq!(opts(&["--run-noise=5%", "a", "b"]).run_noise, 0.05);
        assert_eq!(opts(&["--run-noise", "0", "a", "b"]).run_noise, 0.0);
        assert_eq!(o.format, Format::Text);
        assert_eq!(
            sides(&o).expect("sides"),
            (
                vec!["a.json".into()],
                vec!["b.json".into(), "c.json".into()]
            )
        );
        let o = opts(&[
            "--base",
            "m1.json",
            "--base=m2.json",
            "pr.json",
            "--alpha",
            "0.05",
        ]);
        assert_eq!(
            sides(&o).expect("sides"),
            (
                vec!["m1.json".into(), "m2.json".into()],
                vec!["pr.json".into()]
            )
        );
        assert_eq!(o.alpha, 0.05);
        assert!(matches!(
            sides(&opts(&["a.json"])),
            Err(CompareError::Usage(_))
        ));
        let args = |v: &[&str]| -> Vec<String> { v.iter().map(|s| s.to_string()).collect() };
        let e = parse::<CompareOptions>(&args(&["compare", "--alpha", "0", "a", "b"]))
            .expect_err("alpha 0")
            .to_string();
        assert!(
            e.contains("'0' is not a significance level in (0, 0.5]"),
            "{e}"
        );
        let e = parse::<CompareOptions>(&args(&["compare", "--run-noise=101", "a", "b"]))
            .expect_err("above 100")
            .to_string();
        assert!(e.contains("'101' is not a percentage in [0, 100]"), "{e}");
        let e = parse::<CompareOptions>(&args(&["compare", "--format", "html", "a", "b"]))
            .expect_err("format")
            .to_string();
        assert!(
            e.starts_with("rshperf: compare: invalid value 'html' for '--format"),
            "{e}"
        );
    }

    /// The invalid runs `--force` compared are skipped cases after the gates'.
    #[test]
    fn junit_marks_invalid_runs_as_skipped_cases() {
        let c = crate::output::compare::tests::with_invalid();
        let cases = junit_cases(&c);
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "p99>+10%",
                "reply-rate<-5%",
                "valid: base main-2.json",
                "valid: new pr.json"
            ]
        );
        let new = &cases[3];
        assert_eq!(new.failure, None);
        assert_eq!(
            new.skipped.as_deref(),
            Some(
                "new pr.json is invalid (engine_cpu): an engine thread used 97 % of a core \
                 (limit 90 %) (--force)"
            )
        );
        let xml = junit::document("rshperf compare", "rshperf.compare", &cases, 0.0);
        assert!(
            xml.contains(
                "<testsuite name=\"rshperf compare\" tests=\"4\" failures=\"1\" errors=\"0\" \
                 skipped=\"2\" time=\"0.000\">"
            ),
            "{xml}"
        );
        assert!(
            xml.contains(
                "<testcase name=\"valid: new pr.json\" classname=\"rshperf.compare\" \
                 time=\"0\">\n      <skipped message=\"new pr.json is invalid (engine_cpu): an \
                 engine thread used 97 % of a core (limit 90 %) (--force)\"/>\n"
            ),
            "{xml}"
        );
    }

    /// The document of an empty run of `uri`, as `rshperf --json` writes it.
    fn doc(uri: &str) -> String {
        let cfg = Config::local(|b| {
            b.uri(uri);
        });
        let run = RunInfo {
            duration: 1.0,
            cpu_user: 0.0,
            cpu_system: 0.0,
        };
        let meta = RunMeta {
            start: std::time::UNIX_EPOCH,
            end: std::time::UNIX_EPOCH,
            partition: (0, 1),
            threads: 1,
            servers: Vec::new(),
        };
        run_json(&cfg, &Stats::new(), &run, &meta).to_string()
    }

    #[test]
    fn documents_are_read_or_refused_by_name() {
        let a = read_text("a.json", &doc("/x")).expect("a run");
        let b = read_text("b.json", &doc("/y")).expect("a run");
        assert_eq!(differences(&[&a, &a.clone()]), Vec::<String>::new());
        assert_eq!(
            differences(&[&a, &b]),
            ["a.json and b.json differ in uri: \"/x\" vs \"/y\""]
        );
        let mut old: Value = serde_json::from_str(&doc("/x")).expect("json");
        old["version"] = serde_json::json!(1);
        let e = read_text("old.json", &old.to_string()).expect_err("version 1");
        assert_eq!(
            Error::from(e).to_string(),
            "rshperf: compare: old.json: unsupported rshperf-result version 1 (this rshperf \
             reads 2; write the document again with this rshperf)"
        );
        let e = read_text("c.json", r#"{"format": "rshperf-compare"}"#).expect_err("compare");
        assert_eq!(
            Error::from(e).to_string(),
            "rshperf: compare: c.json: is the output of rshperf compare, not of a run"
        );
        let e = Error::from(read_text("x.json", "{").expect_err("not json")).to_string();
        assert!(
            e.starts_with("rshperf: compare: x.json: not a JSON document"),
            "{e}"
        );
        // The validity block is read (an invalid one named by the file).
        let mut judged: Value = serde_json::from_str(&doc("/x")).expect("json");
        judged["validity"] = serde_json::json!({"valid": false, "reasons": [
            {"reason": "interrupted", "text": "interrupted after 1.0 s", "measured": {}}
        ]});
        let i = read_text("i.json", &judged.to_string()).expect("a run");
        let v = i.validity.as_ref().expect("judged");
        assert_eq!(v.reasons[0].text, "interrupted after 1.0 s");
        assert_eq!(a.validity, None);
        judged["validity"]["valid"] = serde_json::json!(true);
        let e = read_text("i.json", &judged.to_string()).expect_err("lying block");
        assert_eq!(
            Error::from(e).to_string(),
            "rshperf: compare: i.json: validity: valid is true with 1 reasons"
        );
        let e = CompareError::Invalid(vec![
            "base a.json is invalid (interrupted): interrupted after 1.0 s".into(),
            "new b.json is invalid (engine_cpu): an engine thread used 97 % of a core".into(),
        ]);
        let e = Error::from(e);
        assert_eq!(
            e.to_string(),
            "rshperf: compare: base a.json is invalid (interrupted): interrupted after 1.0 s. \
             new b.json is invalid (engine_cpu): an engine thread used 97 % of a core \
             (--force compares them anyway and marks them)"
        );
        assert_eq!(e.exit_code(), 1);
        let w = CompareError::Workload("runs of different workloads: …".into());
        let w = Error::from(w);
        assert_eq!(
            w.to_string(),
            "rshperf: compare: runs of different workloads: … (--force compares them anyway)"
        );
        assert_eq!(w.exit_code(), 1);
    }

    #[test]
    fn an_interrupted_run_is_a_warning_and_no_gate_is_judged_on_it() {
        let dir = std::env::temp_dir().join(format!("rshperf-cmp-int-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let whole = dir.join("a.json");
        let cut = dir.join("b.json");
        std::fs::write(&whole, doc("/x")).expect("write");
        let mut d: Value = serde_json::from_str(&doc("/x")).expect("json");
        d["raw"]["interrupted"] = serde_json::json!(true);
        std::fs::write(&cut, d.to_string()).expect("write");
        let (a, b) = (whole.to_string_lossy(), cut.to_string_lossy());
        let (_, warnings) = comparison(&opts(&[&a, &b])).expect("compared");
        assert_eq!(
            warnings,
            [format!(
                "{b} was interrupted (SIGINT or SIGTERM): its figures cover only the part of \
                 the run before the signal"
            )]
        );
        let (_, none) = comparison(&opts(&[&a, &a])).expect("compared");
        assert!(none.is_empty());
        let e =
            comparison(&opts(&[&a, &b, "--fail-on-regression", "p99>+10%"])).expect_err("refused");
        assert_eq!(
            Error::from(e).to_string(),
            format!(
                "rshperf: compare: {b} was interrupted (SIGINT or SIGTERM): its figures cover \
                 only the part of the run before the signal; --fail-on-regression judges whole \
                 runs only"
            )
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
