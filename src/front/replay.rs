//! `rshperf replay FILE [--speed X] [--replay-connections MODE] [httperf options]`:
//! issues the requests of a recorded log (an nginx or Apache access log, rshperf's
//! JSON-lines `--request-log`, a HAR file) open-loop at their original offsets
//! divided by `--speed`, to `--server`/`--port` (the log's host is never the
//! target), with every report and output of a run.
//!
//! Owns the command line (FILE first, `--speed`, `--replay-connections`, the httperf
//! options that make no sense with a replay refused by name), reading the file
//! (gzip decompressed as it
//! is read, with flate2's `MultiGzDecoder`; a first pass before the run counts the
//! requests and warns about bad lines, the first few shown with file:line, and no
//! usable line is an error; then each engine reads it again through `Opener`) and
//! the run: the schedule (`model::replay::schedule`, fed by `model::replay::feed`)
//! becomes the `--call-rate` pool's schedule (`Workload::set_replay`), so lateness
//! and response times are measured from each request's scheduled time as for
//! `--call-rate`; the connections are per client by default (a HAR file without
//! connections: the pool), capped by `--num-conns` (default `MAX_CLIENT_CONNS`, or
//! half the descriptor limit), and `--num-conns` sizes the pool (default
//! `DEFAULT_POOL`). Called by `dispatch`.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::Arc;

use crate::front::cli::{self, Command, Opt};
use crate::front::error::Error;
use crate::front::httperf;
use crate::front::runner;
use crate::front::subcommand;
use crate::model::config::{Config, ReplayConnections, ReplaySpec};
use crate::model::replay::feed::{Entries, Opener, Replay};
use crate::model::replay::schedule::Survey;
use crate::model::replay::{har, Entry, Format, Parser};
use crate::model::workload::{stripe_share, Workload};

/// The pool's connections without `--num-conns`.
pub(crate) const DEFAULT_POOL: u64 = 64;

/// `rshperf replay --help`.
pub(crate) const USAGE: &str = "\
Usage: rshperf replay FILE [--speed X] [--replay-connections MODE] [httperf options]

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
  --replay-connections MODE
                   which connection a request takes; a request that waits for one
                   is late from its scheduled time (lateness and response time):
    per-client     (default) each client of the log (its address; HAR: its
                   connection; a request log: its conn) on a connection of its own,
                   opened at its first request and reused one request at a time;
                   at most --num-conns N open (default 1000, or half the descriptor
                   limit if lower): the least recently used idle one is closed for
                   a new client (the Call rate line's evicted). A HAR file
                   without connections takes the pool.
    per-request    a new connection for each request, closed after its reply (at
                   most --num-conns N open, as per-client)
    pool           the --call-rate pool of --num-conns N connections (default 64),
                   opened at the start, the log's first request due once they
                   are connected (at most 1 s later); a request takes the next one
                   with room
  --num-conns N    per client or per request: the most connections open at once;
                   pool: its connections
  every httperf option of a run: --server, --port, --ssl, --http-version,
  --add-header, --timeout, --threads, --partition, --json, --csv, --fail-on, ...
  (--rate, --period, --call-rate, --uri, --wlog, --wset, --wsess*, --num-calls,
  --concurrency and --body-file are the log's to say, and refused)

The log is read as the run goes (a HAR file is held whole). Lines that do not parse
are counted and the first few shown; a file with no request to replay is an error.
One-second times (the combined format) spread the requests of each second evenly
over it, in log order. The JSON's config.replay records the log, --speed and the
mode. docs/replay.md has the details.
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

/// A replay's command line: the file, its own options and the rest (httperf's).
struct Split<'a> {
    file: &'a str,
    /// `--speed` (default 1).
    speed: f64,
    /// `--replay-connections` (None: the default for the file).
    connections: Option<ReplayConnections>,
    rest: Vec<String>,
}

/// The value of option `name` at `a` (`--name X` or `--name=X`), taking X from `it`
/// in the first form; None when `a` is another option. `example`: the message's
/// example when X is missing.
fn value_of<'a>(
    name: &str,
    a: &'a str,
    it: &mut std::slice::Iter<'a, String>,
    example: &str,
) -> Result<Option<&'a str>, Error> {
    if a == name {
        return it
            .next()
            .map(|v| Some(v.as_str()))
            .ok_or_else(|| fail(format!("{name} needs a value, e.g. {name} {example}")));
    }
    Ok(a.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
}

/// The file, `--speed`, `--replay-connections` and the rest of the command line;
/// None for `--help`.
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
    let mut split = Split {
        file,
        speed: 1.0,
        connections: None,
        rest: Vec::new(),
    };
    let mut it = args[2..].iter();
    while let Some(a) = it.next() {
        if let Some(value) = value_of("--speed", a, &mut it, "4")? {
            split.speed = value
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite() && *x > 0.0)
                .ok_or_else(|| {
                    fail(format!(
                        "--speed takes a number above 0 (4: four times faster), not '{value}'"
                    ))
                })?;
        } else if let Some(value) = value_of("--replay-connections", a, &mut it, "per-request")? {
            split.connections = Some(ReplayConnections::parse(value).ok_or_else(|| {
                fail(format!(
                    "--replay-connections takes per-client, per-request or pool (not {value})"
                ))
            })?);
        } else {
            split.rest.push(a.clone());
        }
    }
    Ok(Some(split))
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

/// The connections of a replay without `--replay-connections`: per client, but a
/// HAR file whose entries carry no `connection` has no client to follow (they
/// would all be one), so it takes the pool, and the run says so.
fn default_connections(file: &str, surveyed: &Surveyed) -> ReplayConnections {
    let anonymous = surveyed
        .har
        .as_ref()
        .is_some_and(|entries| entries.iter().all(|e| e.client == har::NO_CONNECTION));
    if !anonymous {
        return ReplayConnections::PerClient;
    }
    crate::wire::note::note!(
        "rshperf: replay: {file}'s entries carry no connection, so no client to keep: \
         the requests take the pool of --num-conns connections (--replay-connections pool)"
    );
    ReplayConnections::Pool
}

/// Connections open at once per client or per request without `--num-conns`:
/// `MAX_CLIENT_CONNS`, or half the descriptor limit when that is lower (the soft
/// limit, which the run raises to the hard limit first, as here).
fn default_cap() -> u64 {
    let limit = crate::wire::net::raise_nofile_limit().unwrap_or(1024);
    MAX_CLIENT_CONNS.min(limit / 2).max(1)
}

/// The most connections per client or per request without `--num-conns`.
const MAX_CLIENT_CONNS: u64 = 1000;

/// The whole command; `Ok(status)`.
fn replay(args: &[String]) -> Result<i32, Error> {
    let Some(Split {
        file,
        speed,
        connections,
        rest,
    }) = split_args(args)?
    else {
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
            "{} is the log's to say: replay takes FILE, --speed, --replay-connections, \
             --num-conns and the options of the connection and the report \
             (rshperf replay --help)",
            opt.long_name()
        )));
    }
    let num_conns_given = parsed.opts.iter().any(|(o, _)| *o == Opt::NumConns);
    // The run's configuration: the options given, over the mode's default
    // connections (`conns`) and the pool's mean call rate (`--call-rate` is refused
    // above: the log says it).
    let builder = |rate: f64, conns: u64| {
        let mut b = Config::builder();
        if !num_conns_given {
            b.num_conns(conns);
        }
        b.call_rate(rate);
        b
    };
    // The run's stripes (partitions × threads), which the first pass counts by
    // client; the rate does not change them.
    let (stripes, mine, num_conns) = {
        // Its warnings are printed once, by the run's own build below.
        let cfg = httperf::build_with(builder(1.0, DEFAULT_POOL), &parsed)
            .map_err(httperf::refused)?
            .config;
        let (part, parts) = cfg.load().partition();
        let (parts, threads) = (parts.max(1), cfg.load().threads().max(1));
        // Thread j of partition I takes stripe I + jN (as `engine::execute`).
        let mine: Vec<u32> = (0..threads).map(|j| part + j * parts).collect();
        // `--num-conns` is the whole run's, as the pool's: this partition's share.
        let num_conns = num_conns_given.then(|| stripe_share(cfg.load().num_conns(), part, parts));
        (parts * threads, mine, num_conns)
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
    let connections = connections.unwrap_or_else(|| default_connections(file, &surveyed));
    // Without `--num-conns`: the pool's size, or the cap of connections per client or
    // per request (the run's echo and `config.num_conns` say it).
    let default_conns = match connections {
        ReplayConnections::Pool => DEFAULT_POOL,
        _ => default_cap(),
    };
    let mut b = builder(requests as f64 / span, default_conns);
    b.replay(ReplaySpec::new(file, speed, connections));
    let cfg = httperf::finish(httperf::build_with(b, &parsed))?;
    let mut work = Workload::from_config(&cfg)?;
    let replay = Replay {
        open: opener(file, &surveyed),
        timing: surveyed.survey.timing(speed),
        requests,
        per_stripe: surveyed.survey.per_stripe.clone().into(),
        ready: Arc::default(),
        cap: match connections {
            ReplayConnections::Pool => 0,
            _ => num_conns.unwrap_or(default_conns),
        },
    };
    replay.prepare(&mine, stripes);
    work.set_replay(replay);
    runner::run_work(&cfg, work)
}
