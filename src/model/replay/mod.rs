//! `rshperf replay FILE`'s model: the requests of a recorded log (`Entry`), which
//! format a file is (`Format::detect`), the counting of lines that do not parse
//! (`Parser`: never fatal, the first few kept with their line numbers), the
//! schedule computed from the entries as they are read (`schedule`), and each
//! engine's pass over the log (`feed`).
//!
//! One file per format: `access` (NCSA common/combined, nginx with `$msec`,
//! `$time_iso8601`, `$request_time`), `reqlog` (rshperf's own JSON-lines
//! `--request-log`), `har` (HTTP Archive); `time` reads their timestamps. No I/O:
//! `front::replay` reads the file and feeds the lines. Called by `front::replay`; the
//! engine reads its calls through `feed`, which `workload::Workload::replay` holds.

pub(crate) mod access;
pub(crate) mod feed;
pub(crate) mod har;
pub(crate) mod reqlog;
pub(crate) mod schedule;
pub(crate) mod time;

use time::Stamp;

/// How many bad lines are shown (all are counted).
pub(crate) const SHOWN: usize = 5;

/// One request of a log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    /// When it was logged (an access log writes a request when it ends).
    pub(crate) at: Stamp,
    /// How long it took, seconds, when the log says (`$request_time`, HAR's `time`).
    pub(crate) request_time: Option<f64>,
    /// The client it came from (address, HAR connection, or logged connection).
    pub(crate) client: String,
    /// Its method; empty: the run's `--method`.
    pub(crate) method: String,
    /// Its request target (path and query).
    pub(crate) uri: String,
    /// Header lines replayed with it.
    pub(crate) headers: Vec<(String, String)>,
    /// Its body.
    pub(crate) body: Vec<u8>,
}

/// The formats `replay` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// An nginx or Apache access log, one request a line.
    Access,
    /// rshperf's `--request-log` in JSON lines.
    RequestLog,
    /// An HTTP Archive (one JSON document).
    Har,
}

impl Format {
    /// The format of a file whose first non-blank line is `first`: a JSON object with
    /// a `uri` member is a request log, any other JSON object a HAR, anything else an
    /// access log.
    pub(crate) fn detect(first: &str) -> Format {
        let t = first.trim_start();
        if !t.starts_with('{') {
            return Format::Access;
        }
        match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(t.trim_end()) {
            Ok(m) if m.contains_key("uri") => Format::RequestLog,
            _ => Format::Har,
        }
    }

    /// Its name in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Access => "access log",
            Format::RequestLog => "rshperf request log",
            Format::Har => "HAR file",
        }
    }
}

/// A line (or HAR entry) that did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bad {
    /// Its line number (HAR: its entry's number), from 1.
    pub(crate) line: u64,
    /// What is wrong with it.
    pub(crate) why: String,
}

/// Parses a line-oriented log line by line, counting what does not parse.
#[derive(Debug)]
pub(crate) struct Parser {
    format: Format,
    /// Lines seen.
    line: u64,
    /// Lines (or entries) that did not parse.
    pub(crate) bad: u64,
    /// The first `SHOWN` of them.
    pub(crate) shown: Vec<Bad>,
}

impl Parser {
    /// A parser for `format`.
    pub(crate) fn new(format: Format) -> Parser {
        Parser {
            format,
            line: 0,
            bad: 0,
            shown: Vec::new(),
        }
    }

    /// The next line (without its line end): its entry, or None for a blank line, a
    /// record not replayed or a bad line (counted).
    pub(crate) fn line(&mut self, text: &str) -> Option<Entry> {
        self.line += 1;
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            return None;
        }
        let parsed = match self.format {
            Format::Access => access::parse(text).map(Some),
            Format::RequestLog => reqlog::parse(text),
            Format::Har => Err("a HAR file is one document, not lines".to_string()),
        };
        let line = self.line;
        self.take(line, parsed)
    }

    /// The entries of a HAR document (entry n counts as line n); Err when it is no HAR.
    pub(crate) fn har(&mut self, doc: &str) -> Result<Vec<Entry>, String> {
        let entries = har::parse(doc)?;
        Ok(entries
            .into_iter()
            .zip(1..)
            .filter_map(|(e, n)| self.take(n, e.map(Some)))
            .collect())
    }

    /// Counts a failure, keeping the first few.
    fn take(&mut self, line: u64, parsed: Result<Option<Entry>, String>) -> Option<Entry> {
        match parsed {
            Ok(e) => e,
            Err(why) => {
                self.bad += 1;
                if self.shown.len() < SHOWN {
                    self.shown.push(Bad { line, why });
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_the_first_line() {
        assert_eq!(
            Format::detect(r#"1.2.3.4 - - [x] "GET / HTTP/1.1" 200 1"#),
            Format::Access
        );
        assert_eq!(
            Format::detect(r#"  {"id":0,"uri":"/"}"#),
            Format::RequestLog
        );
        assert_eq!(Format::detect(r#"{"log":{"version":"1.2","#), Format::Har);
        assert_eq!(Format::detect("{"), Format::Har);
        assert_eq!(Format::detect(""), Format::Access);
    }

    #[test]
    fn bad_lines_are_counted_and_the_first_few_kept() {
        let mut p = Parser::new(Format::Access);
        let good = r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1"#;
        let mut got = 0;
        for k in 0..20 {
            if p.line(if k % 2 == 0 { good } else { "garbage" }).is_some() {
                got += 1;
            }
        }
        assert!(p.line("").is_none());
        assert!(p.line(&format!("{good}\r")).is_some());
        assert_eq!((got, p.bad), (10, 10));
        assert_eq!(p.shown.len(), SHOWN);
        assert_eq!(p.shown[0].line, 2);
        assert_eq!(p.shown[4].line, 10);
        assert!(p.shown[0].why.contains("ident"), "{}", p.shown[0].why);
    }
}
