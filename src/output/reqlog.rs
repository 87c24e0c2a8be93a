//! Writing the per-request log (`--request-log`) while the run lasts, and converting
//! a log between its formats (`rshperf log FILE --to jsonl|csv`).
//!
//! `stream` takes the engines' batches of records as they come, fills each record's
//! URI, encodes it in the log's format (`model::reqlog::Format`) and writes it
//! through `file::Streaming`, so the file appears complete at the end of the run or
//! not at all. `convert` reads a binary or JSON-lines log record by record (bounded
//! memory) and writes it in another format; `read_records` is its reader, shared with
//! `rshperf log --report`. Called by the classic runner and the `log` subcommand.

use std::borrow::Cow;
use std::io::{self, BufRead, Write};
use std::path::Path;

use crate::model::call::CallRef;
use crate::model::reqlog::{self, BinaryReader, Format, Record};
use crate::output::file::Streaming;

/// Writes `path` in `format` with every record of `batches` (each batch handed to
/// `done` once written, for reuse), the URI of each from `uri`; returns how many
/// records it wrote. After a write error the batches are still taken (the engines
/// never wait on a writer that failed) and the error is returned; the file is then
/// left as it was.
pub(crate) fn stream(
    path: &Path,
    format: Format,
    batches: impl Iterator<Item = Vec<Record>>,
    uri: impl Fn(CallRef) -> Cow<'static, str>,
    mut done: impl FnMut(Vec<Record>),
) -> io::Result<u64> {
    let mut out = Streaming::create(path).and_then(|mut s| {
        s.write_all(&format.header())?;
        Ok(s)
    });
    let mut n = 0u64;
    let mut buf = Vec::with_capacity(256 * 1024);
    let mut scratch = String::new();
    let mut last: Option<(CallRef, Cow<'static, str>)> = None;
    for mut batch in batches {
        if let Ok(file) = &mut out {
            buf.clear();
            for r in &mut batch {
                if let Some(what) = r.what {
                    if last.as_ref().is_none_or(|(w, _)| *w != what) {
                        last = Some((what, uri(what)));
                    }
                    scratch.clear();
                    scratch.push_str(last.as_ref().map_or("", |(_, u)| u));
                    std::mem::swap(&mut r.uri, &mut scratch);
                    format.write(r, &mut buf);
                    std::mem::swap(&mut r.uri, &mut scratch);
                } else {
                    format.write(r, &mut buf);
                }
            }
            n += batch.len() as u64;
            if let Err(e) = file.write_all(&buf) {
                out = Err(e);
            }
        }
        done(batch);
    }
    out.and_then(Streaming::commit).map(|()| n)
}

/// Reads the log `input` (binary or JSON lines, told by its first bytes) and writes
/// its records to `out` in `to`; returns how many. A line or record that does not
/// read is an error naming it.
pub(crate) fn convert(
    input: &mut dyn BufRead,
    to: Format,
    out: &mut dyn Write,
) -> Result<u64, String> {
    let io_err = |e: io::Error| e.to_string();
    out.write_all(&to.header()).map_err(io_err)?;
    let mut buf = Vec::with_capacity(64 * 1024);
    let n = read_records(input, |r| {
        to.write(r, &mut buf);
        if buf.len() >= 60 * 1024 {
            out.write_all(&buf).map_err(io_err)?;
            buf.clear();
        }
        Ok(())
    })?;
    out.write_all(&buf).map_err(io_err)?;
    out.flush().map_err(io_err)?;
    Ok(n)
}

/// Reads the log `input` (binary or JSON lines, told by its first bytes), handing
/// each record to `each` in order; returns how many. A line or record that does not
/// read is an error naming it; so is an error `each` returns.
pub(crate) fn read_records(
    input: &mut dyn BufRead,
    mut each: impl FnMut(&Record) -> Result<(), String>,
) -> Result<u64, String> {
    let io_err = |e: io::Error| e.to_string();
    let mut n = 0u64;
    let binary = input.fill_buf().map_err(io_err)?.starts_with(reqlog::MAGIC);
    if binary {
        reqlog::read_binary_header(input).map_err(io_err)?;
        let mut reader = BinaryReader::new(input);
        loop {
            match reader.next_record() {
                Ok(Some(r)) => each(&r)?,
                Ok(None) => break,
                Err(e) => return Err(format!("record {}: {e}", n + 1)),
            }
            n += 1;
        }
    } else {
        let mut line = String::new();
        let mut number = 0u64;
        loop {
            line.clear();
            if input.read_line(&mut line).map_err(io_err)? == 0 {
                break;
            }
            number += 1;
            if line.trim().is_empty() {
                continue;
            }
            if number == 1 && line.starts_with("id,") {
                return Err("a CSV log cannot be read back: write it as jsonl or binary".into());
            }
            let r = reqlog::from_json_line(line.trim_end())
                .map_err(|e| format!("line {number}: {e}"))?;
            each(&r)?;
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::reqlog::End;

    fn rec(id: u64, what: Option<CallRef>) -> Record {
        Record {
            id,
            what,
            status: Some(200),
            end_us: id * 10,
            end: End::Reply,
            ..Record::default()
        }
    }

    #[test]
    fn a_streamed_binary_log_converts_to_the_json_lines_written_directly() {
        let d = std::env::temp_dir().join(format!("rshperf-reqlog-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("dir");
        let batches = || {
            vec![
                vec![rec(0, Some(CallRef::Fixed)), rec(2, Some(CallRef::Uri(1)))],
                vec![rec(4, None)],
            ]
            .into_iter()
        };
        let uri = |w: CallRef| -> Cow<'static, str> {
            match w {
                CallRef::Uri(1) => "/b".into(),
                _ => "/a".into(),
            }
        };
        let mut returned = 0;
        let (bin, json) = (d.join("r.bin"), d.join("r.jsonl"));
        let n = stream(&bin, Format::Binary, batches(), uri, |_| returned += 1).expect("bin");
        assert_eq!((n, returned), (3, 2));
        stream(&json, Format::Jsonl, batches(), uri, |_| {}).expect("json");
        let direct = std::fs::read_to_string(&json).expect("read");
        assert!(
            direct.starts_with("{\"id\":0,\"conn\":0,\"stream\":null,\"server\":0,\"uri\":\"/a\"")
        );
        assert!(direct.contains("\"id\":2,\"conn\":0,\"stream\":null,\"server\":0,\"uri\":\"/b\""));
        let mut out = Vec::new();
        let file = std::fs::File::open(&bin).expect("open");
        let n = convert(&mut io::BufReader::new(file), Format::Jsonl, &mut out).expect("convert");
        assert_eq!(n, 3);
        assert_eq!(String::from_utf8(out).expect("utf-8"), direct);
        // And back from JSON lines to CSV.
        let mut csv = Vec::new();
        let mut input = io::Cursor::new(direct.as_bytes());
        assert_eq!(convert(&mut input, Format::Csv, &mut csv), Ok(3));
        assert_eq!(String::from_utf8(csv).expect("utf-8").lines().count(), 4);
        let mut input = io::Cursor::new(&b"{\"id\":1}\n"[..]);
        assert_eq!(
            convert(&mut input, Format::Csv, &mut Vec::new()),
            Err("line 1: no member conn".to_string())
        );
        std::fs::remove_dir_all(&d).expect("clean");
    }
}
