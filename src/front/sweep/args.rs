//! `rshperf sweep` options: the sweep's own (clap) and the per-run httperf options.
//!
//! Owns splitting the command line in two (the sweep's options and autobench's
//! spellings go to clap; everything else, with its value, goes to httperf's getopt
//! parser, so per-run options behave exactly as in a plain run), the clap definition
//! and the checks between them (`--rate` given to a sweep, a fixed `--num-conns`
//! together with `--const-test-time`, …). Produces a `Sweep`: the parameters and the
//! base `Config` that every step clones. Called by `sweep::sweep_main`.

use clap::{Parser, ValueEnum};

use crate::front::cli::{self, Command, HasArg, Opt, OPTIONS};
use crate::model::config::Config;
use crate::output::threshold::{self, Threshold};
use crate::wire::error::Error;

/// Table format on stdout or in `--file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFmt {
    /// Tab-separated (autobench's default).
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
                  autobench's spellings low_rate, high_rate, rate_step, const_test_time, \
                  num_conn, num_call, host1, port1 and uri1 are accepted too (with two dashes).\n\n\
                  A step passes when its achieved rate of successful replies is at least \
                  --min-achieved % of the demanded request rate, it has at most --max-errors \
                  errors and every --slo holds; a step that misses while the client could not \
                  keep its schedule is the client's limit, not the server's. The table on \
                  stdout has autobench's columns, then rshperf's; its last line (starting \
                  with #) names the knee and whether the server or the client was the limit."
)]
pub struct SweepOpts {
    /// First rate, arrivals (connections or sessions) per second.
    #[arg(long = "low-rate", alias = "low_rate", value_name = "RATE")]
    pub low_rate: f64,
    /// Highest rate.
    #[arg(long = "high-rate", alias = "high_rate", value_name = "RATE")]
    pub high_rate: f64,
    /// Step between rates (the walk; with --find-max, optional: the grid it searches).
    #[arg(long = "rate-step", alias = "rate_step", value_name = "RATE")]
    pub rate_step: Option<f64>,
    /// Seconds per step: each step makes rate × SECONDS arrivals (autobench's rule).
    /// Default 5 unless --num-conns (or --wsess/--wsesslog sessions) is given.
    #[arg(
        long = "const-test-time",
        alias = "const_test_time",
        value_name = "SECONDS"
    )]
    pub const_test_time: Option<f64>,
    /// Seconds of pause between steps.
    #[arg(long = "cool-down", value_name = "SECONDS", default_value_t = 0.0)]
    pub cool_down: f64,
    /// A step passes only if its achieved rate is at least this % of the demanded one.
    #[arg(long = "min-achieved", value_name = "PERCENT", default_value_t = 95.0)]
    pub min_achieved: f64,
    /// A step passes only with at most this many errors.
    #[arg(long = "max-errors", value_name = "N", default_value_t = 0)]
    pub max_errors: u64,
    /// A condition every passing step meets, in the --fail-on grammar (e.g. 'p99<50ms');
    /// repeatable.
    #[arg(long = "slo", value_name = "EXPR")]
    pub slo: Vec<String>,
    /// Stop after this many failing steps past the knee.
    #[arg(long = "past-knee", value_name = "N", default_value_t = 2)]
    pub past_knee: u32,
    /// Search instead of walking: --low-rate, then the middle of what is left until a
    /// step fails, then narrow to --precision (or to adjacent --rate-step rates), jumping
    /// to the rate a failing step's achieved rate predicts.
    #[arg(long = "find-max")]
    pub find_max: bool,
    /// --find-max without --rate-step stops when the failing and passing rates are this
    /// % apart.
    #[arg(long = "precision", value_name = "PERCENT", default_value_t = 2.0)]
    pub precision: f64,
    /// Table format.
    #[arg(long = "output-fmt", value_enum, value_name = "FMT", default_value_t = OutputFmt::Tsv)]
    pub output_fmt: OutputFmt,
    /// Write the table to FILE instead of stdout (the conclusion goes to both).
    #[arg(long = "file", value_name = "FILE")]
    pub file: Option<String>,
    /// Write the sweep's parameters and every step's full run document to FILE.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<String>,
    /// Write a one-file HTML report with charts to FILE.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<String>,
}

/// A checked sweep: its options, its SLOs and the per-run configuration.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// The sweep's options.
    pub opts: SweepOpts,
    /// `--slo` expressions, parsed.
    pub slo: Vec<Threshold>,
    /// The per-run configuration every step starts from.
    pub base: Config,
    /// Whether the number of arrivals per step is fixed (`--num-conns`, sessions).
    pub fixed_arrivals: bool,
    /// The command line as typed, for the report.
    pub command: String,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Print this help text and exit 0.
    Help(String),
    /// Run this sweep.
    Run(Box<Sweep>),
}

/// Sweep options that take a value (long names, both spellings).
const VALUED: [&str; 16] = [
    "low-rate",
    "high-rate",
    "rate-step",
    "const-test-time",
    "low_rate",
    "high_rate",
    "rate_step",
    "const_test_time",
    "cool-down",
    "min-achieved",
    "max-errors",
    "slo",
    "past-knee",
    "precision",
    "output-fmt",
    "file",
];

/// More valued sweep options (split for readability).
const VALUED_MORE: [&str; 2] = ["json", "html"];

/// Sweep flags.
const FLAGS: [&str; 3] = ["find-max", "help", "version"];

/// autobench's per-run spellings and the httperf option each stands for.
const AUTOBENCH: [(&str, &str); 5] = [
    ("num_conn", "num-conns"),
    ("num_call", "num-calls"),
    ("host1", "server"),
    ("port1", "port"),
    ("uri1", "uri"),
];

/// autobench flags that mean nothing here.
const IGNORED: [&str; 2] = ["single_host", "quiet"];

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
    (Opt::Partition, "a sweep runs in one process"),
    (Opt::StartAt, "a sweep runs in one process"),
    (Opt::PrintRequest, "the sweep's table is on stdout"),
    (Opt::PrintReply, "the sweep's table is on stdout"),
    (Opt::PeriodicStats, "the sweep's table is on stdout"),
    (
        Opt::CallRate,
        "the sweep walks the connection rate (--rate); it does not sweep --call-rate",
    ),
];

fn usage(msg: String) -> Error {
    Error::Usage(format!("sweep: {msg}"))
}

/// Whether `--name` (no `=value`) is an httperf option that takes the next argument.
fn httperf_takes_next(name: &str) -> bool {
    let exact = OPTIONS.iter().find(|s| s.name == name);
    let spec = exact.or_else(|| {
        let mut c = OPTIONS.iter().filter(|s| s.name.starts_with(name));
        match (c.next(), c.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    });
    spec.is_some_and(|s| s.has_arg == HasArg::Required)
}

/// Splits `args` (after `sweep`) into the sweep's options (for clap, program name
/// first) and httperf's (for getopt, program name first).
fn split(args: &[String]) -> Result<(Vec<String>, Vec<String>), Error> {
    let mut sweep = vec!["rshperf sweep".to_string()];
    let mut httperf = vec![cli::PROG.to_string()];
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "-h" {
            sweep.push("--help".into());
            continue;
        }
        let Some(body) = arg.strip_prefix("--") else {
            httperf.push(arg.clone());
            // `-d N` takes the next argument, as in getopt.
            if arg.len() > 1 && arg.starts_with('-') && arg.ends_with('d') && i < args.len() {
                httperf.push(args[i].clone());
                i += 1;
            }
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let mut take_value = |to: &mut Vec<String>, flag: String| -> Result<(), Error> {
            match inline {
                Some(v) => to.push(format!("{flag}={v}")),
                None if i < args.len() => {
                    to.push(flag);
                    to.push(args[i].clone());
                    i += 1;
                }
                None => return Err(usage(format!("option '--{name}' requires an argument"))),
            }
            Ok(())
        };
        if VALUED.contains(&name) || VALUED_MORE.contains(&name) {
            take_value(&mut sweep, format!("--{name}"))?;
        } else if FLAGS.contains(&name) {
            sweep.push(arg.clone());
        } else if let Some(&(_, to)) = AUTOBENCH.iter().find(|(a, _)| *a == name) {
            take_value(&mut httperf, format!("--{to}"))?;
        } else if IGNORED.contains(&name) {
        } else {
            httperf.push(arg.clone());
            if inline.is_none() && httperf_takes_next(name) && i < args.len() {
                httperf.push(args[i].clone());
                i += 1;
            }
        }
    }
    Ok((sweep, httperf))
}

/// Parses the arguments after `sweep`.
pub fn parse(args: &[String]) -> Result<Parsed, Error> {
    let (sweep_argv, httperf_argv) = split(args)?;
    let opts = match SweepOpts::try_parse_from(&sweep_argv) {
        Ok(o) => o,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                return Ok(Parsed::Help(e.to_string()));
            }
            // clap's message up to its usage lines, on one line, without `error: `.
            let text = e.to_string();
            let message: Vec<&str> = text
                .lines()
                .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
                .map(str::trim)
                .collect();
            let message = message.join(" ");
            return Err(usage(message.trim_start_matches("error: ").to_string()));
        }
    };
    let run_args = match cli::parse(&httperf_argv)? {
        Command::Run(a) => a,
        Command::Help(_) | Command::Version(_) => {
            return Err(usage(
                "-h and -V are not per-run options; see rshperf sweep --help".into(),
            ))
        }
    };
    for (opt, why) in REFUSED {
        if run_args.given(opt) {
            return Err(usage(format!(
                "{} cannot be used with sweep: {why}",
                opt.long_name()
            )));
        }
    }
    let fixed_conns = run_args.given(Opt::NumConns);
    let sessions = run_args.given(Opt::Wsess) || run_args.given(Opt::Wsesslog);
    let mut base = crate::front::httperf::config(&run_args)?;
    if let Some(opt) = base.unsupported() {
        return Err(Error::Usage(format!("{opt} is not supported yet")));
    }
    // The sweep prints its own table: no per-run text on stdout.
    base.output.verbose = 0;
    check(&opts, fixed_conns)?;
    let slo = threshold::parse_all(&opts.slo).map_err(|m| usage(format!("--slo: {m}")))?;
    let mut opts = opts;
    if opts.const_test_time.is_none() && !fixed_conns && !sessions {
        opts.const_test_time = Some(5.0);
    }
    let command = std::iter::once("rshperf sweep".to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    Ok(Parsed::Run(Box::new(Sweep {
        opts,
        slo,
        base,
        fixed_arrivals: fixed_conns || sessions,
        command,
    })))
}

/// Checks between the sweep's options.
fn check(o: &SweepOpts, fixed_conns: bool) -> Result<(), Error> {
    let positive = |v: f64, name: &str| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(usage(format!("{name} must be a positive number")))
        }
    };
    positive(o.low_rate, "--low-rate")?;
    positive(o.high_rate, "--high-rate")?;
    if o.high_rate < o.low_rate {
        return Err(usage("--high-rate must not be below --low-rate".into()));
    }
    match (o.rate_step, o.find_max) {
        (Some(s), _) => positive(s, "--rate-step")?,
        (None, false) => {
            return Err(usage(
                "give --rate-step (the walk) or --find-max (the search)".into(),
            ))
        }
        (None, true) => {}
    }
    if let Some(t) = o.const_test_time {
        positive(t, "--const-test-time")?;
        if fixed_conns {
            return Err(usage(
                "--const-test-time sets --num-conns from the rate: give one of them".into(),
            ));
        }
    }
    if !(o.cool_down.is_finite() && o.cool_down >= 0.0) {
        return Err(usage("--cool-down must be 0 or more seconds".into()));
    }
    if !(o.min_achieved > 0.0 && o.min_achieved <= 100.0) {
        return Err(usage(
            "--min-achieved must be a percentage above 0 and at most 100".into(),
        ));
    }
    if !(o.precision > 0.0 && o.precision < 100.0) {
        return Err(usage(
            "--precision must be a percentage between 0 and 100".into(),
        ));
    }
    if o.past_knee == 0 {
        return Err(usage("--past-knee must be at least 1".into()));
    }
    Ok(())
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

    #[test]
    fn split_sends_each_option_with_its_value_to_its_parser() {
        let (s, h) = split(&strings(&[
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
            "-d",
            "2",
            "--ti",
            "5",
            "--quiet",
            "--json",
            "x.json",
        ]))
        .expect("splits");
        assert_eq!(
            s,
            [
                "rshperf sweep",
                "--low_rate",
                "10",
                "--high-rate=20",
                "--find-max",
                "--json",
                "x.json"
            ]
        );
        assert_eq!(
            h,
            [
                "rshperf",
                "--server",
                "127.0.0.1",
                "--uri",
                "--low-rate",
                "--num-conns",
                "50",
                "-d",
                "2",
                "--ti",
                "5"
            ]
        );
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
        assert_eq!(s.opts.low_rate, 100.0);
        assert_eq!(s.opts.high_rate, 300.0);
        assert_eq!(s.opts.rate_step, Some(100.0));
        assert_eq!(s.opts.const_test_time, Some(2.0));
        assert_eq!(s.opts.min_achieved, 95.0);
        assert_eq!(s.opts.max_errors, 0);
        assert_eq!(s.opts.past_knee, 2);
        assert_eq!(s.opts.precision, 2.0);
        assert_eq!(s.opts.output_fmt, OutputFmt::Tsv);
        assert!(!s.fixed_arrivals);
        let s = sweep(&[
            "--low-rate",
            "1",
            "--high-rate",
            "2",
            "--find-max",
            "--num_conn",
            "7",
        ]);
        assert_eq!(s.base.load.num_conns, 7);
        assert!(s.fixed_arrivals);
        assert_eq!(s.opts.const_test_time, None);
        let s = sweep(&["--low-rate", "1", "--high-rate", "2", "--rate-step", "1"]);
        assert_eq!(s.opts.const_test_time, Some(5.0));
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
        assert_eq!(
            with(&["--ra=5"]),
            "rshperf: sweep: --rate cannot be used with sweep: the sweep sets the rate: use \
             --low-rate, --high-rate and --rate-step"
        );
        assert!(with(&["--fail-on", "p99>1"]).contains("use --slo"));
        assert_eq!(
            with(&["--num-conns", "5", "--const-test-time", "3"]),
            "rshperf: sweep: --const-test-time sets --num-conns from the rate: give one of them"
        );
        assert!(with(&["--slo", "p99<<3"]).starts_with("rshperf: sweep: --slo: "));
        assert_eq!(with(&["--bogus"]), "rshperf: unrecognized option '--bogus'");
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
}
