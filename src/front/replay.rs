//! `rshperf replay FILE [--speed X] [httperf options]`: issues the requests of a
//! recorded log (an nginx or Apache access log, rshperf's JSON-lines `--request-log`,
//! a HAR file) open-loop at their original offsets divided by `--speed`, to
//! `--server`/`--port` (the log's host is never the target), with every report and
//! output of a run.
//!
//! Owns the command line (FILE first, `--speed`, the httperf options that make no
//! sense with a replay refused by name), reading the file (gzip decompressed as it
//! is read, with flate2's `MultiGzDecoder`; a first pass before the run counts the
//! requests and warns about bad lines, the first few shown with file:line, and no
//! usable line is an error; then each engine reads it again through `Opener`) and
//! the run: the schedule (`model::replay::schedule`, fed by `model::replay::feed`)
//! becomes the `--call-rate` pool's schedule (`Workload::set_replay`), so lateness
//! and response times are measured from each request's scheduled time as for
//! `--call-rate`; `--num-conns` sizes the pool (default `DEFAULT_POOL`). Called by
//! `dispatch`.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::Arc;

use crate::front::cli::{self, Command, Opt};
use crate::front::error::Error;
use crate::front::httperf;
use crate::front::runner;
use crate::front::subcommand;
use crate::model::config::Config;
use crate::model::replay::feed::{Entries, Opener, Replay};
use crate::model::replay::schedule::Survey;
use crate::model::replay::{Entry, Format, Parser};
use crate::model::workload::Workload;

/// The pool's connections without `--num-conns`.
pub(crate) const DEFAULT_POOL: u64 = 64;

/// `rshperf replay --help`.
pub(crate) const USAGE: &str = "\
Usage: rshperf replay FILE [--speed X] [httperf options]

Replay the requests of a log open-loop, each at its original offset from the first
request divided by --speed, to --server/--port (the log's host is never the target).

FILE (gzip is read as it is decompressed) is told by its first line:
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

The log is read as the run goes (a HAR file is held whole). Lines that do not parse
are counted and the first few shown; a file with no request to replay is an error. One-second times (the combined format) spread the requests of
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

/// The bytes of `file`, decompressed as they are read when it is gzip (its first
/// two bytes are gzip's magic, whatever its name; several members are read as one
/// stream, as `zcat` does).
fn open_log(file: &str) -> io::Result<Box<dyn BufRead + Send>> {
    let mut input = BufReader::with_capacity(READ_BUFFER, std::fs::File::open(file)?);
    if input.fill_buf()?.starts_with(&GZIP_MAGIC) {
        let gz = flate2::bufread::MultiGzDecoder::new(input);
        return Ok(Box::new(BufReader::with_capacity(READ_BUFFER, gz)));
    }
    Ok(Box::new(input))
}

/// gzip's first two bytes (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Bytes read from the log at a time.
const READ_BUFFER: usize = 64 * 1024;

/// The entries of a line-oriented log, parsed as they are read; a read error ends
/// them and is kept (`error`).
struct Lines {
    input: Box<dyn BufRead + Send>,
    parser: Parser,
    buf: Vec<u8>,
    error: Option<io::Error>,
}

impl Lines {
    fn new(input: Box<dyn BufRead + Send>, format: Format) -> Lines {
        Lines {
            input,
            parser: Parser::new(format),
            buf: Vec::new(),
            error: None,
        }
    }
}

impl Iterator for Lines {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        loop {
            self.buf.clear();
            match self.input.read_until(b'\n', &mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => {
                    self.error = Some(e);
                    return None;
                }
            }
            let line = String::from_utf8_lossy(&self.buf);
            let line = line.strip_suffix('\n').unwrap_or(&line);
            if let Some(e) = self.parser.line(line) {
                return Some(e);
            }
        }
    }
}

/// A log read through once before the run (`survey`).
struct Surveyed {
    format: Format,
    survey: Survey,
    /// A HAR file's entries (one JSON document: held whole).
    har: Option<Arc<Vec<Entry>>>,
}

/// The first pass over `file`: its format (told by the first non-blank line), the
/// counts the schedule needs (requests by client over `stripes`), and the lines that do not parse (warned about, the
/// first `SHOWN`, and counted). Err when it cannot be read, is not valid gzip, or
/// has no request.
fn survey(file: &str, stripes: u32) -> Result<Surveyed, Error> {
    let open = |e: io::Error| fail(format!("cannot read {file}: {e}"));
    let mut input = open_log(file).map_err(open)?;
    let mut buf = Vec::new();
    let mut first = String::new();
    let mut blank_lines = 0;
    while input.read_until(b'\n', &mut buf).map_err(open)? > 0 {
        let line = String::from_utf8_lossy(&buf)
            .trim_end_matches(['\n', '\r'])
            .to_string();
        buf.clear();
        if !line.trim().is_empty() {
            first = line;
            break;
        }
        blank_lines += 1;
    }
    let format = Format::detect(&first);
    let mut survey = Survey::new(stripes);
    let (parser, har) = if format == Format::Har {
        let mut doc = "\n".repeat(blank_lines);
        doc.push_str(&first);
        doc.push('\n');
        input.read_to_string(&mut doc).map_err(open)?;
        let mut parser = Parser::new(format);
        let entries = parser.har(&doc).map_err(|e| fail(format!("{file}: {e}")))?;
        entries.iter().for_each(|e| survey.add(e));
        (parser, Some(Arc::new(entries)))
    } else {
        // Read again from the start (line numbers count the blank lines).
        let mut lines = Lines::new(open_log(file).map_err(open)?, format);
        lines.by_ref().for_each(|e| survey.add(&e));
        if let Some(e) = lines.error {
            return Err(open(e));
        }
        (lines.parser, None)
    };
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
    if survey.requests == 0 {
        return Err(fail(format!(
            "{file} has no request to replay (read as {} {}; {} {what}s did not parse)",
            if format == Format::Access { "an" } else { "a" },
            format.name(),
            parser.bad
        )));
    }
    Ok(Surveyed {
        format,
        survey,
        har,
    })
}

/// Opens `file` again for each engine's pass (a HAR file's held entries instead).
/// A read that fails now (the file changed since the first pass) ends that
/// engine's calls, with a warning.
fn opener(file: &str, surveyed: &Surveyed) -> Opener {
    if let Some(entries) = &surveyed.har {
        let entries = entries.clone();
        return Opener(Arc::new(move || {
            let entries = entries.clone();
            Box::new((0..entries.len()).filter_map(move |i| entries.get(i).cloned())) as Entries
        }));
    }
    let (file, format) = (file.to_string(), surveyed.format);
    Opener(Arc::new(move || match open_log(&file) {
        Ok(input) => {
            let file = file.clone();
            let mut lines = Lines::new(input, format);
            Box::new(std::iter::from_fn(move || {
                let e = lines.next();
                if let Some(err) = lines.error.take() {
                    crate::wire::note::note!(
                        "rshperf: replay: warning: cannot read {file} any more: {err}"
                    );
                }
                e
            })) as Entries
        }
        Err(e) => {
            crate::wire::note::note!("rshperf: replay: warning: cannot read {file} any more: {e}");
            Box::new(std::iter::empty()) as Entries
        }
    }))
}

/// The whole command; `Ok(status)`.
fn replay(args: &[String]) -> Result<i32, Error> {
    let Some((file, speed, rest)) = split_args(args)? else {
        subcommand::print_stdout(USAGE);
        return Ok(0);
    };
    let mut given = vec!["rshperf".to_string()];
    given.extend(rest);
    let parsed = match cli::parse(&given)? {
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
    let pool = !parsed.opts.iter().any(|(o, _)| *o == Opt::NumConns);
    // The run's configuration: the options given, over the default pool and the
    // pool's mean call rate (`--call-rate` is refused above: the log says it).
    let builder = |rate: f64| {
        let mut b = Config::builder();
        if pool {
            b.num_conns(DEFAULT_POOL);
        }
        b.call_rate(rate);
        b
    };
    // The run's stripes (partitions × threads), which the first pass counts by
    // client; the rate does not change them.
    let (stripes, mine) = {
        // Its warnings are printed once, by the run's own build below.
        let cfg = httperf::build_with(builder(1.0), &parsed)
            .map_err(httperf::refused)?
            .config;
        let (part, parts) = cfg.load().partition();
        let (parts, threads) = (parts.max(1), cfg.load().threads().max(1));
        // Thread j of partition I takes stripe I + jN (as `engine::execute`).
        let mine: Vec<u32> = (0..threads).map(|j| part + j * parts).collect();
        (parts * threads, mine)
    };
    let surveyed = survey(file, stripes)?;
    if surveyed.survey.spread() {
        crate::wire::note::note!(
            "rshperf: replay: {file} has one-second times: the requests of each second \
             are spread evenly over it, in log order"
        );
    }
    // The pool's mean rate (its batch tick and pacing follow it); the schedule itself
    // is the log's.
    let requests = surveyed.survey.requests;
    let span = surveyed.survey.span(speed).as_secs_f64().max(0.001);
    let cfg = httperf::finish(httperf::build_with(
        builder(requests as f64 / span),
        &parsed,
    ))?;
    let mut work = Workload::from_config(&cfg)?;
    let replay = Replay {
        open: opener(file, &surveyed),
        timing: surveyed.survey.timing(speed),
        requests,
        per_stripe: surveyed.survey.per_stripe.clone().into(),
        ready: Arc::default(),
    };
    replay.prepare(&mine, stripes);
    work.set_replay(replay);
    runner::run_work(&cfg, work)
}
