//! `rshperf log FILE --to jsonl|csv|binary`: converts a `--request-log` file (binary
//! or JSON lines) to another format, on stdout or into `--output`, record by record
//! (a log of any size in bounded memory). The conversion is `output::reqlog::convert`;
//! this is its command line. With `--report` it re-computes the report's lines the log
//! determines instead (`model::reqlog::tally`, printed by `output::classic` and
//! `output::percentiles`). Called by `dispatch`.

use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;

use clap::{Parser, ValueEnum};

use crate::front::error::Error;
use crate::front::subcommand;
use crate::model::reqlog::tally::Tally;
use crate::model::reqlog::Format;
use crate::model::run::RunInfo;
use crate::output::file;
use crate::output::reqlog::{convert, read_records};
use crate::output::summary::Summary;
use crate::output::{classic, percentiles};

/// The formats `--to` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum To {
    /// One JSON object per line
    Jsonl,
    /// A header line, then one row per call
    Csv,
    /// The compact binary form
    Binary,
}

/// `rshperf log`'s options.
#[derive(Debug, Parser)]
#[command(
    name = "log",
    about = "Convert a --request-log file (binary or JSON lines) to JSON lines, CSV or binary, \
or re-compute the run's report from it.",
    long_about = "Convert a --request-log file (binary or JSON lines, told by its first \
bytes) to JSON lines, CSV or binary, record by record. With --report, print the lines \
of the run's report that the log determines (Total, request size, reply times, sizes \
and status, errors, and the connect, response and transfer percentiles), computed from \
its records. The fields are listed in docs/request-log.md."
)]
pub(crate) struct LogOptions {
    /// The log to read (- for stdin)
    pub(crate) file: String,
    /// The format to write
    #[arg(long, value_enum, default_value = "jsonl")]
    pub(crate) to: To,
    /// The file to write (written whole or not at all; default: stdout)
    #[arg(long, short)]
    pub(crate) output: Option<String>,
    /// Print the report's lines re-computed from the log instead of converting it
    #[arg(long, conflicts_with = "to")]
    pub(crate) report: bool,
}

/// `rshperf log` (`args[0]` is `log`); returns the exit status.
pub(crate) fn log_main(args: &[String]) -> i32 {
    subcommand::run::<LogOptions>(args, |opts| {
        let fail = |text: String| Error::Subcommand {
            name: "log".into(),
            text,
        };
        let to = match opts.to {
            To::Jsonl => Format::Jsonl,
            To::Csv => Format::Csv,
            To::Binary => Format::Binary,
        };
        let mut input: Box<dyn BufRead> = if opts.file == "-" {
            Box::new(io::stdin().lock())
        } else {
            let f = std::fs::File::open(&opts.file)
                .map_err(|e| fail(format!("cannot read {}: {e}", opts.file)))?;
            Box::new(BufReader::with_capacity(256 * 1024, f))
        };
        let named = |e: String| fail(format!("{}: {e}", opts.file));
        if opts.report {
            let mut tally = Tally::default();
            read_records(&mut input, |r| {
                tally.add(r);
                Ok(())
            })
            .map_err(named)?;
            let text = report_text(&tally);
            match opts.output.as_deref().filter(|o| *o != "-") {
                Some(out) => file::write_atomic(Path::new(out), |w| w.write_all(&text))
                    .map_err(|e| fail(format!("cannot write {out}: {e}")))?,
                None => {
                    let mut out = io::stdout().lock();
                    let _ = out.write_all(&text).and_then(|()| out.flush());
                }
            }
            return Ok(0);
        }
        match opts.output.as_deref().filter(|o| *o != "-") {
            Some(out) => {
                let mut result = Ok(0);
                file::write_atomic(Path::new(out), |w| {
                    result = convert(&mut input, to, w);
                    result
                        .as_ref()
                        .map(drop)
                        .map_err(|e| io::Error::other(e.clone()))
                })
                .map_err(|e| match &result {
                    Err(text) => named(text.clone()),
                    Ok(_) => fail(format!("cannot write {out}: {e}")),
                })?;
            }
            None => {
                let mut out = io::BufWriter::new(io::stdout().lock());
                match convert(&mut input, to, &mut out) {
                    Ok(_) => {}
                    // `| head`: the reader has what it wanted.
                    Err(e) if e.contains("Broken pipe") => {}
                    Err(e) => return Err(named(e)),
                }
                let _ = out.flush();
            }
        }
        Ok(0)
    })
}

/// The report's lines of the records `tally` counted.
fn report_text(tally: &Tally) -> Vec<u8> {
    let info = RunInfo {
        duration: tally.last_end(),
        cpu_user: 0.0,
        cpu_system: 0.0,
    };
    let summary = Summary::new(tally.stats(), &info);
    let mut text = format!("Request log: {} records\n\n", tally.records()).into_bytes();
    // Writing into a Vec cannot fail.
    let _ = classic::write_log_report(&mut text, &summary);
    let _ = percentiles::write_some(&mut text, tally.stats(), |name| {
        matches!(name, "connect" | "response" | "transfer")
    });
    text
}
