//! `rshperf replay FILE [--speed X] [httperf options]`: issues the requests of a
//! recorded log (an nginx or Apache access log, rshperf's JSON-lines `--request-log`,
//! a HAR file) open-loop at their original offsets divided by `--speed`, to
//! `--server`/`--port` (the log's host is never the target), with every report and
//! output of a run.
//!
//! Owns the command line (FILE first, `--speed`, the httperf options that make no
//! sense with a replay refused by name), reading the file (bad lines are warnings,
//! the first few shown with file:line; no usable line is an error) and the run: the
//! schedule (`model::replay::schedule`) becomes the `--call-rate` pool's schedule
//! (`Workload::set_replay`), so lateness and response times are measured from each
//! request's scheduled time as for `--call-rate`; `--num-conns` sizes the pool
//! (default `DEFAULT_POOL`). Called by `dispatch`.

use std::io::{BufRead, BufReader, Read};

use crate::front::cli::{self, Command, Opt};
use crate::front::error::Error;
use crate::front::httperf;
use crate::front::runner;
use crate::front::subcommand;
use crate::model::replay::schedule::{self, Schedule};
use crate::model::replay::{Entry, Format, Parser};
use crate::model::workload::Workload;

/// The pool's connections without `--num-conns`.
pub(crate) const DEFAULT_POOL: u64 = 64;

/// `rshperf replay --help`.
pub(crate) const USAGE: &str = "\
Usage: rshperf replay FILE [--speed X] [httperf options]

Replay the requests of a log open-loop, each at its original offset from the first
request divided by --speed, to --server/--port (the log's host is never the target).

FILE is told by its first line:
  an nginx or Apache access log   common or combined format; the time as $time_local,
                                  $msec or $time_iso8601; a trailing $request_time
                                  (subtracted from sub-second times: a request is
                                  logged when it ends)
  rshperf's JSON-lines log        --request-log of an earlier run (scheduled_us, uri)
  a HAR file                      method, URL path, headers and body of each entry

Options:
  --speed X        replay X times faster (default 1; 0.5 is half speed)
  --num-conns N    connections of the pool the requests go out on (default 64);
                   a request waits for a connection with room, and the wait counts
                   in its lateness and response time, as with --call-rate
  every httperf option of a run: --server, --port, --ssl, --http-version,
  --add-header, --timeout, --threads, --partition, --json, --csv, --fail-on, ...
  (--rate, --period, --call-rate, --uri, --wlog, --wset, --wsess*, --num-calls,
  --concurrency and --body-file are the log's to say, and refused)

Lines that do not parse are counted and the first few shown; a file with no request
to replay is an error. One-second times (the combined format) spread the requests of
each second evenly over it, in log order. docs/replay.md has the details.
";

/// The options whose say is the log's.
const REFUSED: &[Opt] = &[
    Opt::Rate,
    Opt::Period,
    Opt::CallRate,
    Opt::Uri,
    Opt::Wlog,
    Opt::Wset,
    Opt::Wsess,
    Opt::Wsesslog,
    Opt::Wsesspage,
    Opt::NumCalls,
    Opt::Concurrency,
    Opt::BodyFile,
];

/// `rshperf replay` (`args[0]` is `replay`); returns the exit status.
pub(crate) fn replay_main(args: &[String]) -> i32 {
    if let Err(e) = runner::catch_signals() {
        return subcommand::exit_status(Err(e));
    }
    subcommand::exit_status(replay(args))
}

/// `rshperf: replay: TEXT`, exit status 1.
fn fail(text: String) -> Error {
    Error::Subcommand {
        name: "replay".into(),
        text,
    }
}

/// A replay's command line: the file, `--speed` and the rest (httperf's options).
type Split<'a> = (&'a str, f64, Vec<String>);

/// The file, `--speed` and the rest of the command line; None for `--help`.
fn split_args(args: &[String]) -> Result<Option<Split<'_>>, Error> {
    let Some(file) = args.get(1) else {
        return Err(fail(
            "no log to replay (usage: rshperf replay FILE [--speed X] [httperf options]; \
             rshperf replay --help)"
                .into(),
        ));
    };
    if file == "--help" || file == "-h" {
        return Ok(None);
    }
    if file.starts_with('-') {
        return Err(fail(format!(
            "the log comes first: rshperf replay FILE [--speed X] [options] (not {file})"
        )));
    }
    let mut speed = None;
    let mut rest = Vec::new();
    let mut it = args[2..].iter();
    while let Some(a) = it.next() {
        let value = if a == "--speed" {
            it.next()
                .ok_or_else(|| fail("--speed needs a value, e.g. --speed 4".into()))?
                .as_str()
        } else if let Some(v) = a.strip_prefix("--speed=") {
            v
        } else {
            rest.push(a.clone());
            continue;
        };
        let x: f64 = value
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite() && *x > 0.0)
            .ok_or_else(|| {
                fail(format!(
                    "--speed takes a number above 0 (4: four times faster), not '{value}'"
                ))
            })?;
        speed = Some(x);
    }
    Ok(Some((file, speed.unwrap_or(1.0), rest)))
}

/// Reads `file`'s entries; bad lines are warned about (the first `SHOWN`) and
/// counted. Err when it cannot be read or has no entry.
pub(crate) fn read_entries(file: &str) -> Result<Vec<Entry>, Error> {
    let open = |e: std::io::Error| fail(format!("cannot read {file}: {e}"));
    let mut input = BufReader::new(std::fs::File::open(file).map_err(open)?);
    let mut buf = Vec::new();
    let mut first = String::new();
    // The first non-blank line tells the format.
    let mut lines_before = Vec::new();
    while input.read_until(b'\n', &mut buf).map_err(open)? > 0 {
        let line = String::from_utf8_lossy(&buf)
            .trim_end_matches(['\n', '\r'])
            .to_string();
        buf.clear();
        let blank = line.trim().is_empty();
        lines_before.push(line);
        if !blank {
            first = lines_before.last().cloned().unwrap_or_default();
            break;
        }
    }
    let format = Format::detect(&first);
    let mut parser = Parser::new(format);
    let mut entries = Vec::new();
    if format == Format::Har {
        let mut doc = lines_before.join("\n");
        doc.push('\n');
        input.read_to_string(&mut doc).map_err(open)?;
        entries = parser.har(&doc).map_err(|e| fail(format!("{file}: {e}")))?;
    } else {
        for line in &lines_before {
            entries.extend(parser.line(line));
        }
        while input.read_until(b'\n', &mut buf).map_err(open)? > 0 {
            let line = String::from_utf8_lossy(&buf);
            let line = line.strip_suffix('\n').unwrap_or(&line);
            entries.extend(parser.line(line));
            buf.clear();
        }
    }
    let what = if format == Format::Har {
        "entry"
    } else {
        "line"
    };
    for bad in &parser.shown {
        crate::wire::note::note!("rshperf: replay: warning: {file}:{}: {}", bad.line, bad.why);
    }
    if parser.bad > parser.shown.len() as u64 {
        crate::wire::note::note!(
            "rshperf: replay: warning: {} {what}s of {file} did not parse (the first {} are shown)",
            parser.bad,
            parser.shown.len()
        );
    }
    if entries.is_empty() {
        return Err(fail(format!(
            "{file} has no request to replay (read as {} {}; {} {what}s did not parse)",
            if format == Format::Access { "an" } else { "a" },
            format.name(),
            parser.bad
        )));
    }
    Ok(entries)
}

/// The whole command; `Ok(status)`.
fn replay(args: &[String]) -> Result<i32, Error> {
    let Some((file, speed, rest)) = split_args(args)? else {
        subcommand::print_stdout(USAGE);
        return Ok(0);
    };
    let mut argv = vec!["rshperf".to_string()];
    argv.extend(rest);
    let parsed = match cli::parse(&argv)? {
        Command::Run(a) => a,
        Command::Help(_) | Command::Version(_) => {
            subcommand::print_stdout(USAGE);
            return Ok(0);
        }
    };
    if let Some((opt, _)) = parsed.opts.iter().find(|(o, _)| REFUSED.contains(o)) {
        return Err(fail(format!(
            "{} is the log's to say: replay takes FILE, --speed, --num-conns and the \
             options of the connection and the report (rshperf replay --help)",
            opt.long_name()
        )));
    }
    let entries = read_entries(file)?;
    let Schedule { calls, spread } = schedule::build(entries, speed);
    if spread {
        crate::wire::note::note!(
            "rshperf: replay: {file} has one-second times: the requests of each second \
             are spread evenly over it, in log order"
        );
    }
    // The pool's mean rate (its batch tick and pacing follow it); the schedule itself
    // is the log's.
    let span = calls
        .last()
        .map_or(0.0, |c| c.offset.as_secs_f64())
        .max(0.001);
    argv.push("--call-rate".into());
    argv.push(format!("{}", calls.len() as f64 / span));
    if !parsed.opts.iter().any(|(o, _)| *o == Opt::NumConns) {
        argv.push("--num-conns".into());
        argv.push(DEFAULT_POOL.to_string());
    }
    let args = match cli::parse(&argv)? {
        Command::Run(a) => a,
        Command::Help(_) | Command::Version(_) => return Ok(0),
    };
    let cfg = httperf::config(&args)?;
    let mut work = Workload::from_config(&cfg)?;
    work.set_replay(&cfg, &calls);
    runner::run_work(&cfg, work)
}
