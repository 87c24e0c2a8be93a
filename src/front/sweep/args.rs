//! `rshperf sweep` options: the sweep's own and the per-run httperf options, on one
//! clap command.
//!
//! Owns the clap command of `rshperf sweep`: the sweep's options (`SweepOpts`, clap
//! derive, with `subcommand`'s conventions: unique-prefix abbreviations, `--help` on
//! stdout, errors as `rshperf: sweep: …`), to which `command` adds every httperf long
//! option the sweep has no option of that name for, hidden, built from httperf's own
//! table (`cli::OPTIONS`, with autobench's spellings as aliases). clap thus sees the
//! whole command line: it resolves every abbreviation against both sets (an exact name
//! wins, so `--rate` is httperf's even though it begins `--rate-step`), takes a run
//! option's value whatever it looks like, and names a misspelt option. The run options
//! and URL operands, in command-line order, become the `cli::Args` httperf's getopt
//! parser would have made of them (`run_args`), and go through httperf's own mapping
//! onto `ConfigBuilder` (`httperf::map`), so they mean exactly what they mean in a
//! plain run. Also owns the checks between the two sets (`--rate` given to a sweep, a
//! fixed `--num-conns` together with `--const-test-time`, …). Produces a `Sweep`: the
//! rules (`rules::Rules`: the options that walk and judge), the base `Config` every
//! step is derived from (`step::config`), the output files. Called by
//! `sweep::sweep_main`.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, FromArgMatches, Parser, ValueEnum};
use serde::{Deserialize, Serialize};

use crate::front::cli::{self, HasArg, Opt, OptSpec, OPTIONS};
use crate::front::error::Error;
use crate::front::httperf;
use crate::front::subcommand::{self, Parsed as ClapParsed};
use crate::model::config::Config;
use crate::model::config::{duration, value};
use crate::output::threshold;

use super::levels;
use super::rules::Rules;
use super::SweepError;

/// Table format on stdout or in `--file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OutputFmt {
    /// Tab-separated (autobench's default).
    #[default]
    Tsv,
    /// Comma-separated.
    Csv,
}

/// The sweep's own options (per-run options are httperf's; see `--help`).
#[derive(Debug, Clone, Parser)]
#[command(
    name = "sweep",
    about = "Runs one rate after another against a server and finds its knee: the highest \
             rate it sustains.",
    after_help = "Every other option is a per-run httperf option (--server, --servers, --port, \
                  --uri, --num-calls, --wsess, --ssl, --timeout, --threads, ...), as in a plain \
                  run; the sweep sets --rate (and --num-conns with --const-test-time) itself. \
                  Run options are long options (httperf's -v and -d are not taken), \
                  abbreviated to a prefix that is unique among the sweep's and httperf's \
                  options; a URL argument names the target as in a plain run. \
                  autobench's spellings low_rate, high_rate, rate_step, const_test_time, \
                  num_conn, num_call, host1, port1 and uri1 are accepted too (with two dashes); \
                  single_host and quiet are accepted and ignored.\n\n\
                  A step passes when its achieved rate of successful replies is at least \
                  --min-achieved % of the demanded request rate, it has at most --max-errors \
                  errors and every --slo holds; a step whose run was client-bound (the client \
                  could not keep its schedule) is marked client, whether or not it met them: \
                  it is the client's limit, not the server's. The table on stdout has \
                  autobench's columns (the reply-rate columns of a step shorter than 5 s come \
                  from 1-s windows), then rshperf's; its last line (starting with #) names \
                  the knee and whether the server or the client was the limit."
)]
pub(crate) struct SweepOpts {
    /// First rate, arrivals (connections or sessions) per second.
    #[arg(long = "low-rate", alias = "low_rate", value_name = "RATE")]
    pub(crate) low_rate: f64,
    /// Highest rate.
    #[arg(long = "high-rate", alias = "high_rate", value_name = "RATE")]
    pub(crate) high_rate: f64,
    /// Step between rates (the walk; with --find-max, optional: the grid it searches).
    #[arg(long = "rate-step", alias = "rate_step", value_name = "RATE")]
    pub(crate) rate_step: Option<f64>,
    /// Seconds per step (or with a unit: 1500ms, 1m): each step makes rate × SECONDS
    /// arrivals (autobench's rule). Default 5 unless --num-conns (or --wsess/--wsesslog
    /// sessions) is given.
    #[arg(
        long = "const-test-time",
        alias = "const_test_time",
        value_name = "SECONDS",
        value_parser = seconds
    )]
    pub(crate) const_test_time: Option<f64>,
    /// Seconds of pause between steps (or with a unit: 500ms, 1m).
    #[arg(long = "cool-down", value_name = "SECONDS", default_value_t = 0.0,
          value_parser = seconds)]
    pub(crate) cool_down: f64,
    /// A step passes only if its achieved rate is at least this % of the demanded one.
    #[arg(long = "min-achieved", value_name = "PERCENT", default_value_t = 95.0)]
    pub(crate) min_achieved: f64,
    /// A step passes only with at most this many errors.
    #[arg(long = "max-errors", value_name = "N", default_value_t = 0)]
    pub(crate) max_errors: u64,
    /// A condition every passing step meets, in the --fail-on grammar (e.g. 'p99<50ms');
    /// repeatable.
    #[arg(long = "slo", value_name = "EXPR")]
    pub(crate) slo: Vec<String>,
    /// Stop after this many failing steps past the knee.
    #[arg(long = "past-knee", value_name = "N", default_value_t = 2)]
    pub(crate) past_knee: u32,
    /// Search instead of walking: --low-rate, then the middle of what is left until a
    /// step fails, then narrow to --precision (or to adjacent --rate-step rates), jumping
    /// to the rate a failing step's achieved rate predicts.
    #[arg(long = "find-max")]
    pub(crate) find_max: bool,
    /// --find-max without --rate-step stops when the failing and passing rates are this
    /// % apart.
    #[arg(long = "precision", value_name = "PERCENT", default_value_t = 2.0)]
    pub(crate) precision: f64,
    /// Run this partition of every step: I/N (arrivals k with k mod N = I, as a run's
    /// --partition), or auto (I and N from Slurm, a Kubernetes Indexed Job, MPI or GNU
    /// parallel). Needs --start-at; walks every step (see --stop-after-step).
    #[arg(long = "partition", value_name = "I/N|auto")]
    pub(crate) partition: Option<String>,
    /// With --partition auto: the partition count, where the scheduler does not export
    /// it (Kubernetes, GNU parallel); checked against it where it does.
    #[arg(long = "partitions", value_name = "N")]
    pub(crate) partitions: Option<u32>,
    /// With --partition: when the first step starts (UNIX_SECONDS, or +SECONDS from
    /// now); step j starts at this time plus the steps before it (their arrival
    /// windows) and their cool-downs, the same moment in every partition.
    #[arg(long = "start-at", value_name = "TIME")]
    pub(crate) start_at: Option<String>,
    /// Run at most this many steps (a partitioned sweep cannot stop past the knee by
    /// itself: it walks to --high-rate unless told this).
    #[arg(long = "stop-after-step", value_name = "K")]
    pub(crate) stop_after_step: Option<u32>,
    /// Run the walk as one run: the levels --low-rate, +--rate-step, ... up to
    /// --high-rate, each held --const-test-time (--rate-profile step:L..H+S/T), each
    /// judged from its seconds of the run's per-second timeline.
    #[arg(long = "in-one-run")]
    pub(crate) in_one_run: bool,
    /// Table format.
    #[arg(long = "output-fmt", value_enum, value_name = "FMT", default_value_t = OutputFmt::Tsv)]
    pub(crate) output_fmt: OutputFmt,
    /// Write the table to FILE instead of stdout (the conclusion goes to both).
    #[arg(long = "file", value_name = "FILE")]
    pub(crate) file: Option<String>,
    /// Write the sweep's parameters and every step's full run document to FILE.
    #[arg(long = "json", value_name = "FILE")]
    pub(crate) json: Option<String>,
    /// Write a one-file HTML report with charts to FILE.
    #[arg(long = "html", value_name = "FILE")]
    pub(crate) html: Option<String>,
    /// autobench's `--single_host` (a sweep has one target): accepted, ignored.
    #[arg(long = "single_host", hide = true)]
    pub(crate) single_host: bool,
    /// autobench's `--quiet`: accepted, ignored.
    #[arg(long = "quiet", hide = true)]
    pub(crate) quiet: bool,
    /// The target as a URL (http[s]://host[:port]/path), as in a plain run.
    #[arg(value_name = "URL")]
    pub(crate) targets: Vec<String>,
}

/// A checked sweep: its rules, the per-run configuration, where it writes.
#[derive(Debug, Clone)]
pub(crate) struct Sweep {
    /// The sweep's own options that walk and judge.
    pub(crate) rules: Rules,
    /// The per-run configuration every step is derived from (`step::config`).
    pub(crate) base: Config,
    /// The arguments after `sweep`, recorded in the document.
    pub(crate) argv: Vec<String>,
    /// `--partition`, as given (`auto` is resolved by `partition`, from the
    /// environment, when the sweep runs).
    pub(crate) partition: Option<PartitionSpec>,
    /// `--file`: the table goes there instead of stdout.
    pub(crate) file: Option<String>,
    /// `--json`.
    pub(crate) json: Option<String>,
    /// `--html`.
    pub(crate) html: Option<String>,
}

/// A sweep's `--partition`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartitionSpec {
    /// `I/N`.
    Fixed(u32, u32),
    /// `auto` (with `--partitions N` or `auto/N`: the count given).
    Auto(Option<u32>),
}

/// What the command line asks for.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// Print this help text and exit 0.
    Help(String),
    /// Run this sweep.
    Run(Box<Sweep>),
}

/// autobench's spellings of per-run options and the httperf option each stands for
/// (aliases of the hidden run options).
const AUTOBENCH: [(&str, &str); 5] = [
    ("num_conn", "num-conns"),
    ("num_call", "num-calls"),
    ("host1", "server"),
    ("port1", "port"),
    ("uri1", "uri"),
];

/// The value clap records for an optional-argument run option given without `=V`
/// (no argument can hold a NUL byte).
const NO_VALUE: &str = "\0";

/// The id of the URL operands (`SweepOpts::targets`).
const TARGETS: &str = "targets";

/// httperf options a sweep sets or cannot use, with the reason.
const REFUSED: [(Opt, &str); 10] = [
    (
        Opt::Rate,
        "the sweep sets the rate: use --low-rate, --high-rate and --rate-step",
    ),
    (
        Opt::Period,
        "the sweep sets the rate: use --low-rate, --high-rate and --rate-step",
    ),
    (
        Opt::FailOn,
        "use --slo for a condition every passing step meets",
    ),
    (
        Opt::Timeline,
        "each step's timeline is in the --json document",
    ),
    (Opt::PrintRequest, "the sweep's table is on stdout"),
    (Opt::PrintReply, "the sweep's table is on stdout"),
    (Opt::PeriodicStats, "the sweep's table is on stdout"),
    (
        Opt::CallRate,
        "the sweep walks the connection rate (--rate); it does not sweep --call-rate",
    ),
    (
        Opt::RateProfile,
        "the sweep sets each step's rate: use --low-rate, --high-rate and --rate-step \
         (for one run over the rates, rshperf --rate-profile step:FROM..TO+STEP/EACH)",
    ),
    (
        Opt::Concurrency,
        "the sweep walks the arrival rate; --concurrency runs a closed loop of a fixed \
         number of users instead",
    ),
];

/// httperf's long options that are run options of a sweep: every one but `--help`
/// (clap's, the sweep's help) and those the sweep's own options (`SweepOpts`) name.
fn run_options(sweep: &clap::Command) -> Vec<&'static OptSpec> {
    let taken = |name: &str| {
        sweep.get_arguments().any(|a| {
            a.get_id() == name
                || a.get_long() == Some(name)
                || a.get_all_aliases().is_some_and(|v| v.contains(&name))
        })
    };
    OPTIONS
        .iter()
        .filter(|s| s.opt != Opt::Help && !taken(s.name))
        .collect()
}

/// A run option as a hidden clap argument that records every occurrence (with its
/// position): a flag, a value taken whatever it looks like (getopt takes the next
/// word unconditionally), or an optional value only in the `=V` form.
fn run_arg(spec: &'static OptSpec) -> Arg {
    let arg = Arg::new(spec.name)
        .long(spec.name)
        .hide(true)
        .action(ArgAction::Append);
    let arg = match spec.has_arg {
        HasArg::No => arg.num_args(0).default_missing_value(""),
        HasArg::Required => arg.num_args(1).allow_hyphen_values(true),
        HasArg::Optional => arg
            .num_args(0..=1)
            .require_equals(true)
            .default_missing_value(NO_VALUE),
    };
    AUTOBENCH
        .iter()
        .filter(|(_, to)| *to == spec.name)
        .fold(arg, |arg, (from, _)| arg.alias(*from))
}

/// The clap command of `rshperf sweep`: `SweepOpts` with `subcommand`'s conventions,
/// plus the run options (hidden), and those run options.
fn command() -> (clap::Command, Vec<&'static OptSpec>) {
    let cmd = subcommand::command::<SweepOpts>("sweep");
    let runs = run_options(&cmd);
    let cmd = runs.iter().fold(cmd, |cmd, spec| cmd.arg(run_arg(spec)));
    (cmd, runs)
}

/// The `--help` text (also `rshperf help sweep`).
pub(crate) fn help() -> String {
    command().0.render_long_help().to_string()
}

/// The run options (`runs`) and URL operands of `m`, in command-line order, as
/// httperf's parser gives them (`cli::Args`): each occurrence with its value, and each
/// operand with the run option just before it when that option took no value (a
/// flag, or an optional argument without `=V`).
fn run_args(m: &ArgMatches, runs: &[&'static OptSpec]) -> Result<cli::Args, Error> {
    /// One run option occurrence or operand, at its place on the command line.
    enum Item {
        Opt(&'static OptSpec, Option<String>),
        Operand(String),
    }
    let mut items: Vec<(usize, Item)> = Vec::new();
    let given = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
    for spec in runs {
        if !given(spec.name) {
            continue;
        }
        let at = m.indices_of(spec.name).into_iter().flatten();
        let raw = m.get_raw(spec.name).into_iter().flatten();
        for (i, v) in at.zip(raw) {
            let v = v.to_string_lossy();
            let value = match spec.has_arg {
                HasArg::No => None,
                HasArg::Optional if v == NO_VALUE => None,
                _ => Some(v.into_owned()),
            };
            items.push((i, Item::Opt(spec, value)));
        }
    }
    if given(TARGETS) {
        let at = m.indices_of(TARGETS).into_iter().flatten();
        let raw = m.get_raw(TARGETS).into_iter().flatten();
        for (i, v) in at.zip(raw) {
            let v = v.to_string_lossy().into_owned();
            // Only after `--` can an operand begin with `-`; httperf would take it
            // for an option.
            if v.starts_with('-') {
                return Err(SweepError::UnexpectedArgument(v).into());
            }
            items.push((i, Item::Operand(v)));
        }
    }
    items.sort_by_key(|(i, _)| *i);
    let mut args = cli::Args::default();
    // The option of the previous item, if it left the next one alone.
    let mut prev: Option<Opt> = None;
    for (_, item) in items {
        match item {
            Item::Opt(spec, value) => {
                if spec.opt == Opt::Version {
                    return Err(SweepError::HelpInRun.into());
                }
                prev = (spec.has_arg != HasArg::Required && value.is_none()).then_some(spec.opt);
                args.opts.push((spec.opt, value));
            }
            Item::Operand(text) => args.operands.push(cli::Operand {
                text,
                after: prev.take(),
            }),
        }
    }
    Ok(args)
}

/// Parses the arguments after `sweep`: the rules, and the base configuration built
/// from the run options through httperf's own mapping onto the builder
/// (`httperf::map`), with no per-run text (the sweep prints its own table) and the
/// sweep's `--start-at`.
pub(crate) fn parse(args: &[String]) -> Result<Parsed, Error> {
    let argv: Vec<String> = std::iter::once("sweep".to_string())
        .chain(args.iter().cloned())
        .collect();
    let (cmd, runs) = command();
    let m = match subcommand::parse_with(cmd, &argv)? {
        ClapParsed::Help(text) => return Ok(Parsed::Help(text)),
        ClapParsed::Run(m) => m,
    };
    let o = SweepOpts::from_arg_matches(&m).map_err(SweepError::from)?;
    let run_args = run_args(&m, &runs)?;
    for (opt, why) in REFUSED {
        if run_args.given(opt) {
            return Err(SweepError::Refused {
                option: opt.long_name(),
                why,
            }
            .into());
        }
    }
    let mut b = Config::builder();
    httperf::map(&mut b, &run_args).map_err(httperf::refused)?;
    let fixed_conns = run_args.given(Opt::NumConns);
    let sessions = run_args.given(Opt::Wsess) || run_args.given(Opt::Wsesslog);
    check(&o, fixed_conns)?;
    if o.in_one_run {
        check_in_one_run(&o, &m, &run_args)?;
    }
    let thresholds = threshold::parse_all(&o.slo).map_err(SweepError::from)?;
    let partition = partition_spec(&o)?;
    b.verbosity(0);
    if let Some(t) = &o.start_at {
        b.start_at(Some(value::parse_start_at(t)?));
    }
    let base = httperf::finish(b.build())?;
    let command = std::iter::once("rshperf sweep".to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let rules = Rules {
        low_rate: o.low_rate,
        high_rate: o.high_rate,
        rate_step: o.rate_step,
        find_max: o.find_max,
        precision: o.precision,
        const_test_time: match o.const_test_time {
            None if !fixed_conns && !sessions => Some(5.0),
            t => t,
        },
        cool_down: o.cool_down,
        min_achieved: o.min_achieved,
        max_errors: o.max_errors,
        slo: o.slo,
        thresholds,
        past_knee: o.past_knee,
        stop_after_step: o.stop_after_step,
        output_fmt: o.output_fmt,
        in_one_run: o.in_one_run,
        command,
    };
    if rules.in_one_run {
        check_one_run_walk(&rules)?;
    }
    Ok(Parsed::Run(Box::new(Sweep {
        rules,
        base,
        argv: args.to_vec(),
        partition,
        file: o.file,
        json: o.json,
        html: o.html,
    })))
}

/// `--partition`, `--partitions` and `--start-at` of a sweep, checked together.
fn partition_spec(o: &SweepOpts) -> Result<Option<PartitionSpec>, Error> {
    let Some(p) = &o.partition else {
        if o.partitions.is_some() {
            return Err(SweepError::PartitionsAlone.into());
        }
        if o.start_at.is_some() {
            return Err(SweepError::StartAtAlone.into());
        }
        return Ok(None);
    };
    if o.find_max {
        return Err(SweepError::FindMaxPartition.into());
    }
    if o.start_at.is_none() {
        return Err(SweepError::PartitionWithoutStart.into());
    }
    let spec = match p.strip_prefix("auto") {
        Some("") => PartitionSpec::Auto(o.partitions),
        Some(rest) => {
            let n = rest
                .strip_prefix('/')
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse::<u32>().ok())
                .ok_or_else(|| SweepError::BadPartition(p.clone()))?;
            match o.partitions {
                Some(g) if g != n => return Err(SweepError::PartitionsDiffer(n, g).into()),
                _ => PartitionSpec::Auto(Some(n)),
            }
        }
        None => {
            let (i, n) = value::parse_partition(p)?;
            if o.partitions.is_some() {
                return Err(SweepError::PartitionsAlone.into());
            }
            PartitionSpec::Fixed(i, n)
        }
    };
    Ok(Some(spec))
}

/// Checks between the sweep's options.
fn check(o: &SweepOpts, fixed_conns: bool) -> Result<(), SweepError> {
    let positive = |v: f64, name: &'static str| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(SweepError::NotPositive(name))
        }
    };
    positive(o.low_rate, "--low-rate")?;
    positive(o.high_rate, "--high-rate")?;
    if o.high_rate < o.low_rate {
        return Err(SweepError::HighBelowLow);
    }
    match (o.rate_step, o.find_max) {
        (Some(s), _) => positive(s, "--rate-step")?,
        (None, false) => return Err(SweepError::NoWalk),
        (None, true) => {}
    }
    if let Some(t) = o.const_test_time {
        positive(t, "--const-test-time")?;
        if fixed_conns {
            return Err(SweepError::ConstTimeAndConns);
        }
    }
    if !(o.cool_down.is_finite() && o.cool_down >= 0.0) {
        return Err(SweepError::CoolDown);
    }
    if !(o.min_achieved > 0.0 && o.min_achieved <= 100.0) {
        return Err(SweepError::MinAchieved);
    }
    if !(o.precision > 0.0 && o.precision < 100.0) {
        return Err(SweepError::Precision);
    }
    if o.past_knee == 0 {
        return Err(SweepError::PastKnee);
    }
    if o.stop_after_step == Some(0) {
        return Err(SweepError::StopAfterStep);
    }
    Ok(())
}

/// Options that make no sense with `--in-one-run`, given on the command line (`m`,
/// with the run options `run`).
fn check_in_one_run(o: &SweepOpts, m: &ArgMatches, run: &cli::Args) -> Result<(), SweepError> {
    let given = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
    let partitioned = "each machine would judge its own share of every level: run \
                       rshperf --rate-profile step:L..H+S/T with --partition I/N --start-at \
                       T on each and rshperf merge their --json documents, or partition the \
                       walk without --in-one-run";
    let sessions = "a session's calls spread over its think times, across levels: sweep \
                    sessions without --in-one-run";
    let refused: [(bool, &'static str, &'static str); 11] = [
        (
            o.find_max,
            "--find-max",
            "the search picks each rate from the steps before it; one run holds every \
             level of the walk (give --rate-step)",
        ),
        (
            given("past_knee"),
            "--past-knee",
            "the run holds every level up to --high-rate (--stop-after-step K holds fewer)",
        ),
        (
            given("cool_down"),
            "--cool-down",
            "the levels follow one another in the run without a pause",
        ),
        (given("partition"), "--partition", partitioned),
        (given("partitions"), "--partitions", partitioned),
        (given("start_at"), "--start-at", partitioned),
        (
            run.given(Opt::NumConns),
            "--num-conns",
            "each level makes rate × --const-test-time arrivals",
        ),
        (
            run.given(Opt::Runtime),
            "--runtime",
            "the run lasts the walk's levels (--stop-after-step K holds fewer)",
        ),
        (run.given(Opt::Wsess), "--wsess", sessions),
        (run.given(Opt::Wsesslog), "--wsesslog", sessions),
        (run.given(Opt::Wsesspage), "--wsesspage", sessions),
    ];
    if let Some(&(_, option, why)) = refused.iter().find(|(yes, _, _)| *yes) {
        return Err(SweepError::InOneRun { option, why });
    }
    if o.rate_step.is_none() {
        return Err(SweepError::InOneRunNeedsWalk);
    }
    if o.const_test_time.is_some_and(|t| t < levels::MIN_LEVEL_S) {
        return Err(SweepError::InOneRunShort);
    }
    Ok(())
}

/// The walk of a sweep in one run (`rules`), checked: its profile parses, lasts at
/// most `levels::MAX_RUN_S`, and every `--slo` names a figure of the timeline.
fn check_one_run_walk(rules: &Rules) -> Result<(), SweepError> {
    let profile = levels::profile(rules)
        .ok_or(SweepError::InOneRunNeedsWalk)?
        .map_err(|e| SweepError::InOneRunProfile(e.0))?;
    let secs = profile.duration().as_secs_f64();
    if secs > levels::MAX_RUN_S {
        return Err(SweepError::InOneRunLong(crate::wire::cfmt::g(secs)));
    }
    if let Some(t) = rules
        .thresholds
        .iter()
        .find(|t| !levels::judges_slo(&t.metric().figure))
    {
        return Err(SweepError::InOneRunSlo(
            t.expr().to_string(),
            levels::SLO_FIGURES,
        ));
    }
    Ok(())
}

/// A number of seconds, with or without a unit (`500ms`, `3s`, `1m`).
fn seconds(arg: &str) -> Result<f64, String> {
    duration::seconds(arg)
        .ok_or_else(|| "expected a number of seconds, or one with a unit (500ms, 3s, 1m)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    fn sweep(args: &[&str]) -> Sweep {
        match parse(&strings(args)) {
            Ok(Parsed::Run(s)) => *s,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn err(args: &[&str]) -> String {
        match parse(&strings(args)) {
            Err(e) => e.to_string(),
            other => panic!("{args:?}: {other:?}"),
        }
    }

    /// The sweep's options and the run options as httperf's parser's `Args`.
    fn split(args: &[&str]) -> (SweepOpts, cli::Args) {
        let (cmd, runs) = command();
        let argv: Vec<String> = std::iter::once("sweep")
            .chain(args.iter().copied())
            .map(String::from)
            .collect();
        match subcommand::parse_with(cmd, &argv) {
            Ok(ClapParsed::Run(m)) => (
                SweepOpts::from_arg_matches(&m).expect("sweep options"),
                run_args(&m, &runs).expect("run options"),
            ),
            Ok(ClapParsed::Help(_)) => panic!("{args:?}: help"),
            Err(e) => panic!("{args:?}: {e}"),
        }
    }

    #[test]
    fn run_options_reach_httperf_in_order_with_their_values() {
        let (s, h) = split(&[
            "--server",
            "127.0.0.1",
            "--low_rate",
            "10",
            "--high-rate=20",
            "--uri",
            "--low-rate",
            "--num_conn",
            "50",
            "--find-max",
            "--hog",
            "--print-reply",
            "--print-request=header",
            "http://127.0.0.1:8080/x",
            "--add-header",
            "A: 1",
            "--timeo=5",
            "--burst",
            "2",
            "--json",
            "x.json",
            "--quiet",
        ]);
        assert_eq!((s.low_rate, s.high_rate, s.find_max), (10.0, 20.0, true));
        assert_eq!(s.json.as_deref(), Some("x.json"));
        // What httperf's getopt parser makes of the same run options, in this order.
        let httperf = [
            "rshperf",
            "--server=127.0.0.1",
            "--uri=--low-rate",
            "--num-conns=50",
            "--hog",
            "--print-reply",
            "--print-request=header",
            "http://127.0.0.1:8080/x",
            "--add-header=A: 1",
            "--timeout=5",
            "--burst-length=2",
        ];
        match cli::parse(&strings(&httperf)) {
            Ok(cli::Command::Run(a)) => assert_eq!(h, a),
            other => panic!("{other:?}"),
        }
        assert_eq!(h.opts[1], (Opt::Uri, Some("--low-rate".to_string())));
        assert_eq!(h.operands.len(), 1);
        // An operand right after a flag is attributed to it, as httperf's parser does.
        let (_, h) = split(&["--low-rate", "1", "--hog", "--high-rate", "2", "x"]);
        assert_eq!(
            h.operands,
            [cli::Operand {
                text: "x".into(),
                after: Some(Opt::Hog)
            }]
        );
    }

    #[test]
    fn sweep_options_take_unique_prefixes() {
        let s = sweep(&[
            "--low-r", "1000", "--high", "2000", "--rate-s", "500", "--const", "2", "--min-a",
            "90", "--past", "3", "--out", "csv",
        ]);
        assert_eq!((s.rules.low_rate, s.rules.high_rate), (1000.0, 2000.0));
        assert_eq!(s.rules.rate_step, Some(500.0));
        assert_eq!(s.rules.const_test_time, Some(2.0));
        assert_eq!((s.rules.min_achieved, s.rules.past_knee), (90.0, 3));
        assert_eq!(s.rules.output_fmt, OutputFmt::Csv);
    }

    #[test]
    fn a_run_option_named_exactly_wins_over_a_sweep_option_it_begins() {
        // `--rate` is httperf's (refused), though `--rate-step` begins with it.
        let base = ["--low-rate", "1", "--high-rate", "2", "--rate-step", "1"];
        let mut v = base.to_vec();
        v.extend_from_slice(&["--rate", "5"]);
        assert_eq!(
            err(&v),
            "rshperf: sweep: --rate cannot be used with sweep: the sweep sets the rate: use \
             --low-rate, --high-rate and --rate-step"
        );
        // A prefix of both is no option of either.
        let mut v = base.to_vec();
        v.extend_from_slice(&["--ra=5"]);
        assert!(
            err(&v).starts_with("rshperf: sweep: unexpected argument '--ra' found\n"),
            "{}",
            err(&v)
        );
    }

    #[test]
    fn a_misspelt_option_is_named_with_a_suggestion() {
        let e = err(&["--low-rate", "1", "--hihg-rate", "2", "--rate-step", "1"]);
        assert!(
            e.starts_with(
                "rshperf: sweep: unexpected argument '--hihg-rate' found\n\n  \
                 tip: a similar argument exists: '--high-rate'\n"
            ),
            "{e}"
        );
        assert!(e.ends_with("For more information, try '--help'."), "{e}");
        let e = err(&[
            "--low-rate",
            "1",
            "--high-rate",
            "2",
            "--find-max",
            "--bogus",
        ]);
        assert!(
            e.starts_with("rshperf: sweep: unexpected argument '--bogus' found\n"),
            "{e}"
        );
    }

    #[test]
    fn help_is_the_sweeps_and_lists_no_run_option() {
        // (`--he` would also begin httperf's `--header-file`.)
        for h in ["--help", "--hel"] {
            match parse(&strings(&[h])) {
                Ok(Parsed::Help(text)) => {
                    assert_eq!(text, help(), "{h}");
                    assert!(text.contains("--low-rate <RATE>"), "{text}");
                    assert!(!text.contains("--num-conns <"), "{text}");
                }
                other => panic!("{h}: {other:?}"),
            }
        }
        assert!(matches!(parse(&strings(&["-h"])), Ok(Parsed::Help(_))));
    }

    #[test]
    fn both_spellings_and_defaults() {
        let s = sweep(&[
            "--server",
            "127.0.0.1",
            "--low_rate",
            "100",
            "--high_rate",
            "300",
            "--rate_step",
            "100",
            "--const_test_time",
            "2",
        ]);
        assert_eq!(s.rules.low_rate, 100.0);
        assert_eq!(s.rules.high_rate, 300.0);
        assert_eq!(s.rules.rate_step, Some(100.0));
        assert_eq!(s.rules.const_test_time, Some(2.0));
        assert_eq!(s.rules.min_achieved, 95.0);
        assert_eq!(s.rules.max_errors, 0);
        assert_eq!(s.rules.past_knee, 2);
        assert_eq!(s.rules.precision, 2.0);
        assert_eq!(s.rules.output_fmt, OutputFmt::Tsv);
        let s = sweep(&[
            "--low-rate",
            "1",
            "--high-rate",
            "2",
            "--find-max",
            "--num_conn",
            "7",
        ]);
        assert_eq!(s.base.load().num_conns(), 7);
        assert_eq!(s.rules.const_test_time, None);
        let s = sweep(&["--low-rate", "1", "--high-rate", "2", "--rate-step", "1"]);
        assert_eq!(s.rules.const_test_time, Some(5.0));
    }

    #[test]
    fn step_times_take_a_unit() {
        let base = ["--low-rate", "1", "--high-rate", "2", "--rate-step", "1"];
        let s = sweep(
            &[
                &base[..],
                &["--const-test-time", "1500ms", "--cool-down", "1m"],
            ]
            .concat(),
        );
        assert_eq!(s.rules.const_test_time, Some(1.5));
        assert_eq!(s.rules.cool_down, 60.0);
        assert_eq!(
            err(&[&base[..], &["--cool-down", "5x"]].concat()),
            "rshperf: sweep: invalid value '5x' for '--cool-down <SECONDS>': expected a \
             number of seconds, or one with a unit (500ms, 3s, 1m)\n\n\
             For more information, try '--help'."
        );
    }

    #[test]
    fn bad_combinations_are_clear_errors() {
        let base = ["--low-rate", "1", "--high-rate", "2", "--rate-step", "1"];
        let with = |extra: &[&str]| {
            let mut v = base.to_vec();
            v.extend_from_slice(extra);
            err(&v)
        };
        assert_eq!(
            with(&["--rate", "5"]),
            "rshperf: sweep: --rate cannot be used with sweep: the sweep sets the rate: use \
             --low-rate, --high-rate and --rate-step"
        );
        assert!(with(&["--fail-on", "p99>1"]).contains("use --slo"));
        assert_eq!(
            with(&["--num-conns", "5", "--const-test-time", "3"]),
            "rshperf: sweep: --const-test-time sets --num-conns from the rate: give one of them"
        );
        assert!(with(&["--slo", "p99<<3"]).starts_with("rshperf: sweep: --slo: "));
        assert!(with(&["-v"]).starts_with("rshperf: sweep: unexpected argument '-v' found\n"));
        assert_eq!(
            with(&["--", "-x"]),
            "rshperf: sweep: unexpected argument '-x'"
        );
        assert_eq!(
            with(&["--vers"]),
            "rshperf: sweep: -h and -V are not per-run options; see rshperf sweep --help"
        );
        assert_eq!(
            err(&["--low-rate", "1", "--high-rate", "2"]),
            "rshperf: sweep: give --rate-step (the walk) or --find-max (the search)"
        );
        assert_eq!(
            err(&["--low-rate", "3", "--high-rate", "2", "--find-max"]),
            "rshperf: sweep: --high-rate must not be below --low-rate"
        );
        assert!(err(&["--high-rate", "2", "--find-max"]).contains("--low-rate"));
        assert!(with(&["--output-fmt", "xml"]).starts_with("rshperf: sweep: invalid value"));
        assert_eq!(
            with(&["--past-knee", "0"]),
            "rshperf: sweep: --past-knee must be at least 1"
        );
        assert!(matches!(parse(&strings(&["--help"])), Ok(Parsed::Help(_))));
        assert!(matches!(parse(&strings(&["-h"])), Ok(Parsed::Help(_))));
    }

    #[test]
    fn in_one_run_takes_the_walk_and_refuses_the_rest() {
        let base = [
            "--low-rate",
            "100",
            "--high-rate",
            "400",
            "--rate-step",
            "100",
            "--in-one-run",
        ];
        let with = |extra: &[&'static str]| [&base[..], extra].concat();
        let s = sweep(&with(&[
            "--const-test-time",
            "2",
            "--slo",
            "p99<5ms",
            "--num-calls",
            "2",
        ]));
        assert!(s.rules.in_one_run);
        assert_eq!(s.rules.const_test_time, Some(2.0));
        // Without --const-test-time, the walk's 5 s per level.
        assert_eq!(sweep(&base).rules.const_test_time, Some(5.0));
        let refused = |option: &str, why: &str| {
            format!("rshperf: sweep: {option} cannot be used with --in-one-run: {why}")
        };
        let sessions = "a session's calls spread over its think times, across levels: sweep \
                        sessions without --in-one-run";
        let cases: [(&[&str], String); 8] = [
            (
                &["--past-knee", "2"],
                refused(
                    "--past-knee",
                    "the run holds every level up to --high-rate (--stop-after-step K holds \
                     fewer)",
                ),
            ),
            (
                &["--cool-down", "0"],
                refused(
                    "--cool-down",
                    "the levels follow one another in the run without a pause",
                ),
            ),
            (
                &["--num-conns", "50"],
                refused(
                    "--num-conns",
                    "each level makes rate × --const-test-time arrivals",
                ),
            ),
            (
                &["--runtime", "5"],
                refused(
                    "--runtime",
                    "the run lasts the walk's levels (--stop-after-step K holds fewer)",
                ),
            ),
            (&["--wsess", "5,2,0"], refused("--wsess", sessions)),
            (
                &["--partitions", "2"],
                refused(
                    "--partitions",
                    "each machine would judge its own share of every level: run rshperf \
                     --rate-profile step:L..H+S/T with --partition I/N --start-at T on each \
                     and rshperf merge their --json documents, or partition the walk \
                     without --in-one-run",
                ),
            ),
            (
                &["--slo", "reply_rate_avg>100"],
                "rshperf: sweep: --slo 'reply_rate_avg>100': with --in-one-run each level is \
                 judged from the per-second timeline, which has only response-time \
                 percentiles and error counters: p50, p90, p99, p99_9, p99_99 or max \
                 (percentiles_response_…), errors_total or errors_KIND"
                    .to_string(),
            ),
            (
                &["--const-test-time", "20m"],
                "rshperf: sweep: --in-one-run: the walk lasts 4800 s; the run's timeline \
                 keeps single seconds for its first hour only (fewer levels, a shorter \
                 --const-test-time, or the walk without --in-one-run)"
                    .to_string(),
            ),
        ];
        for (extra, message) in cases {
            assert_eq!(err(&with(extra)), message, "{extra:?}");
        }
        assert_eq!(
            err(&[
                "--low-rate",
                "1",
                "--high-rate",
                "2",
                "--find-max",
                "--in-one-run"
            ]),
            refused(
                "--find-max",
                "the search picks each rate from the steps before it; one run holds every \
                 level of the walk (give --rate-step)"
            )
        );
        assert_eq!(
            err(&with(&["--const-test-time", "0.9"])),
            "rshperf: sweep: --in-one-run needs --const-test-time of at least 1 s: each \
             level is judged from whole seconds of the run's per-second timeline"
        );
        assert_eq!(
            err(&[
                "--low-rate",
                "1",
                "--high-rate",
                "2e9",
                "--rate-step",
                "1e9",
                "--in-one-run"
            ]),
            "rshperf: sweep: --in-one-run: --rate-profile: segment 1 \
             `step:1..2000000000+1000000000/5s': the rate 2000000000 is more than 1e+09"
        );
        // The walk's SLO names, aliases included, that the timeline carries.
        for slo in [
            "p50<1ms",
            "percentiles_response_p99_9<1s",
            "max<2s",
            "errors<1",
            "client-timo==0",
        ] {
            sweep(&with(&["--slo", slo]));
        }
    }
}
