//! The per-request log (`--request-log`): one `Record` per call, its fields (`FIELDS`,
//! the one list every format and docs/request-log.md follow), and the three encodings
//! of a record: JSON lines, CSV and a compact binary form, with the readers of the
//! binary form and of JSON lines (`rshperf log` converts between them).
//!
//! Times are microseconds since the run's start (the instant every engine shares).
//! No I/O: the engine fills records (`engine::reqlog`), the output layer writes them
//! (`output::reqlog`).

use std::io::{self, Write};

use crate::model::call::CallRef;
use crate::model::stats::ErrorKind;

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum End {
    /// Its reply completed.
    #[default]
    Reply,
    /// Its connection failed (or, HTTP/2 and HTTP/3, its stream was reset: `other`).
    Failed(ErrorKind),
    /// Its connection closed cleanly before the reply (a `--call-rate` call then goes
    /// out again, as a new call).
    Closed,
    /// The run ended before its reply.
    Abandoned,
    /// A `--call-rate` call still waiting for a connection when the run ended.
    Unsent,
}

impl End {
    /// The `error` field: empty for a reply.
    pub(crate) fn name(self) -> &'static str {
        match self {
            End::Reply => "",
            End::Failed(k) => k.name(),
            End::Closed => "closed",
            End::Abandoned => "abandoned",
            End::Unsent => "unsent",
        }
    }

    /// The end named `name` (`name`'s inverse).
    pub(crate) fn from_name(name: &str) -> Option<End> {
        let fixed = [End::Reply, End::Closed, End::Abandoned, End::Unsent];
        fixed
            .into_iter()
            .chain(ErrorKind::ALL.map(End::Failed))
            .find(|e| e.name() == name)
    }
}

/// One call of the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Record {
    /// The call's number, unique in the run (over engines and partitions).
    pub(crate) id: u64,
    /// Its connection's number, unique in the run.
    pub(crate) conn: u64,
    /// HTTP/2 stream id.
    pub(crate) stream: Option<u64>,
    /// Index of its server (`--servers`; 0 otherwise).
    pub(crate) server: u64,
    /// Which request (the engine's; `uri` is filled from it by the writer).
    pub(crate) what: Option<CallRef>,
    /// Its URI.
    pub(crate) uri: String,
    /// When the schedule wanted it: a `--call-rate` call's time, else its
    /// connection's arrival (None: not scheduled).
    pub(crate) scheduled_us: Option<u64>,
    /// When its connection began connecting.
    pub(crate) connect_us: Option<u64>,
    /// When its connection was established (TLS or QUIC handshake included).
    pub(crate) connected_us: Option<u64>,
    /// When its request began to be written (response time starts here).
    pub(crate) send_us: Option<u64>,
    /// When its request was completely written.
    pub(crate) written_us: Option<u64>,
    /// When the first byte of its reply's status arrived.
    pub(crate) first_byte_us: Option<u64>,
    /// When it ended (reply complete, failure, or the end of the run).
    pub(crate) end_us: u64,
    /// The reply's status (None: no reply).
    pub(crate) status: Option<u64>,
    /// Request bytes written.
    pub(crate) bytes_out: u64,
    /// Reply bytes: header, content and footer.
    pub(crate) bytes_in: u64,
    /// Reply content bytes.
    pub(crate) content_bytes: u64,
    /// How it ended.
    pub(crate) end: End,
}

/// A field's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value<'a> {
    /// A count or time.
    Int(u64),
    /// A time or number that may be missing (JSON `null`, an empty CSV cell).
    Opt(Option<u64>),
    /// Text.
    Text(&'a str),
}

/// What kind of value a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Always a number.
    Int,
    /// A number or nothing.
    Opt,
    /// Text.
    Text,
}

/// One field of a record: its name (JSON member, CSV column), unit, meaning, and how
/// to read it from and store it in a `Record`.
pub(crate) struct Field {
    /// JSON member and CSV column.
    pub(crate) name: &'static str,
    /// What kind of value it is.
    pub(crate) kind: Kind,
    /// Its unit (`µs` since the start, `B`, or `-`).
    #[cfg_attr(not(test), allow(dead_code, reason = "read by the docs test"))]
    pub(crate) unit: &'static str,
    /// What it means (docs/request-log.md lists it).
    #[cfg_attr(not(test), allow(dead_code, reason = "read by the docs test"))]
    pub(crate) about: &'static str,
    get: fn(&Record) -> Value<'_>,
    set: fn(&mut Record, Value<'_>) -> Option<()>,
}

impl Field {
    /// The field's value in `r`.
    pub(crate) fn get<'a>(&self, r: &'a Record) -> Value<'a> {
        (self.get)(r)
    }

    /// Stores `v` in `r`; None when `v` is not a value of this field.
    pub(crate) fn set(&self, r: &mut Record, v: Value<'_>) -> Option<()> {
        (self.set)(r, v)
    }
}

fn int(v: Value<'_>) -> Option<u64> {
    match v {
        Value::Int(n) | Value::Opt(Some(n)) => Some(n),
        _ => None,
    }
}

fn opt(v: Value<'_>) -> Option<Option<u64>> {
    match v {
        Value::Int(n) => Some(Some(n)),
        Value::Opt(o) => Some(o),
        Value::Text(_) => None,
    }
}

macro_rules! int_field {
    ($name:literal, $member:ident, $unit:literal, $about:literal) => {
        Field {
            name: $name,
            kind: Kind::Int,
            unit: $unit,
            about: $about,
            get: |r| Value::Int(r.$member),
            set: |r, v| {
                r.$member = int(v)?;
                Some(())
            },
        }
    };
}

macro_rules! opt_field {
    ($name:literal, $member:ident, $unit:literal, $about:literal) => {
        Field {
            name: $name,
            kind: Kind::Opt,
            unit: $unit,
            about: $about,
            get: |r| Value::Opt(r.$member),
            set: |r, v| {
                r.$member = opt(v)?;
                Some(())
            },
        }
    };
}

/// Every field of a record, in the order every format writes them.
pub(crate) const FIELDS: &[Field] = &[
    int_field!("id", id, "-", "the call's number, unique in the run"),
    int_field!("conn", conn, "-", "its connection's number, unique in the run"),
    opt_field!("stream", stream, "-", "HTTP/2 stream id; empty for HTTP/1.x and HTTP/3"),
    int_field!("server", server, "-", "index of its server in `--servers` (0 without)"),
    Field {
        name: "uri",
        kind: Kind::Text,
        unit: "-",
        about: "the URI requested (empty for `--wsesspage` objects)",
        get: |r| Value::Text(&r.uri),
        set: |r, v| match v {
            Value::Text(t) => {
                r.uri = t.to_string();
                Some(())
            }
            _ => None,
        },
    },
    opt_field!(
        "scheduled_us",
        scheduled_us,
        "µs",
        "when the schedule wanted it: a `--call-rate` call's time, else its connection's arrival; empty when not scheduled"
    ),
    opt_field!("connect_us", connect_us, "µs", "when its connection began connecting"),
    opt_field!(
        "connected_us",
        connected_us,
        "µs",
        "when its connection was established (TLS or QUIC handshake included); empty if never"
    ),
    opt_field!(
        "send_us",
        send_us,
        "µs",
        "when its request began to be written (response time starts here)"
    ),
    opt_field!("written_us", written_us, "µs", "when its request was completely written"),
    opt_field!(
        "first_byte_us",
        first_byte_us,
        "µs",
        "when its reply's first byte arrived; empty without a reply"
    ),
    int_field!(
        "end_us",
        end_us,
        "µs",
        "when it ended: reply complete, failure, or the end of the run"
    ),
    opt_field!("status", status, "-", "the reply's status; empty without a reply"),
    int_field!("bytes_out", bytes_out, "B", "request bytes written"),
    int_field!("bytes_in", bytes_in, "B", "reply bytes: header, content and footer"),
    int_field!("content_bytes", content_bytes, "B", "reply content bytes"),
    Field {
        name: "error",
        kind: Kind::Text,
        unit: "-",
        about: "empty for a reply; else why not: an error kind of the report (`connreset`, `client-timo`, …), `closed`, `abandoned` or `unsent`",
        get: |r| Value::Text(r.end.name()),
        set: |r, v| match v {
            Value::Text(t) => {
                r.end = End::from_name(t)?;
                Some(())
            }
            _ => None,
        },
    },
];

/// The file formats of the log (declared with the configuration, which names one).
pub(crate) use crate::model::config::RequestLogFormat as Format;

impl Format {
    /// The format a file's name implies: `.csv` CSV, `.bin` binary, else JSON lines.
    pub(crate) fn of_path(path: &str) -> Format {
        if path.ends_with(".csv") {
            Format::Csv
        } else if path.ends_with(".bin") {
            Format::Binary
        } else {
            Format::Jsonl
        }
    }

    /// What a file of this format starts with.
    pub(crate) fn header(self) -> Vec<u8> {
        let names: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
        match self {
            Format::Jsonl => Vec::new(),
            Format::Csv => format!("{}\n", names.join(",")).into_bytes(),
            Format::Binary => {
                let mut h = MAGIC.to_vec();
                h.extend_from_slice(names.join(",").as_bytes());
                h.push(b'\n');
                h
            }
        }
    }

    /// Appends `r` in this format to `out`.
    pub(crate) fn write(self, r: &Record, out: &mut Vec<u8>) {
        match self {
            Format::Jsonl => write_json(r, out),
            Format::Csv => write_csv(r, out),
            Format::Binary => write_binary(r, out),
        }
    }
}

/// The first bytes of a binary log (then the field names, comma-separated, and a
/// newline).
pub(crate) const MAGIC: &[u8] = b"RSHPERF-REQUEST-LOG 1\n";

fn write_json(r: &Record, out: &mut Vec<u8>) {
    out.push(b'{');
    for (k, f) in FIELDS.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(f.name.as_bytes());
        out.extend_from_slice(b"\":");
        match f.get(r) {
            Value::Int(n) | Value::Opt(Some(n)) => put_u64(out, n),
            Value::Opt(None) => out.extend_from_slice(b"null"),
            Value::Text(t) => {
                // Writing JSON text into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *out, t);
            }
        }
    }
    out.extend_from_slice(b"}\n");
}

fn write_csv(r: &Record, out: &mut Vec<u8>) {
    for (k, f) in FIELDS.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        match f.get(r) {
            Value::Int(n) | Value::Opt(Some(n)) => put_u64(out, n),
            Value::Opt(None) => {}
            Value::Text(t) if t.contains([',', '"', '\n', '\r']) => {
                out.push(b'"');
                out.extend_from_slice(t.replace('"', "\"\"").as_bytes());
                out.push(b'"');
            }
            Value::Text(t) => out.extend_from_slice(t.as_bytes()),
        }
    }
    out.push(b'\n');
}

fn put_u64(out: &mut Vec<u8>, n: u64) {
    // (`write!` into a Vec cannot fail.)
    let _ = write!(out, "{n}");
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Binary: each field in order, a number as a LEB128 varint, a missing number as 0
/// and a present one as n + 1, text as its length (varint) and bytes.
fn write_binary(r: &Record, out: &mut Vec<u8>) {
    for f in FIELDS {
        match f.get(r) {
            Value::Int(n) => put_varint(out, n),
            Value::Opt(o) => put_varint(out, o.map_or(0, |n| n.saturating_add(1))),
            Value::Text(t) => {
                put_varint(out, t.len() as u64);
                out.extend_from_slice(t.as_bytes());
            }
        }
    }
}

/// Reads a binary log's records from `input` (after `MAGIC` and the field line,
/// which `read_binary_header` checked).
pub(crate) struct BinaryReader<R> {
    input: R,
}

fn bad(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

/// Checks the start of a binary log: `MAGIC`, then this version's field names.
pub(crate) fn read_binary_header(input: &mut (impl io::BufRead + ?Sized)) -> io::Result<()> {
    let mut magic = vec![0u8; MAGIC.len()];
    input.read_exact(&mut magic)?;
    if magic != MAGIC {
        return Err(bad("not a binary request log of rshperf".into()));
    }
    let mut names = String::new();
    input.read_line(&mut names)?;
    let want = String::from_utf8_lossy(&Format::Binary.header()[MAGIC.len()..]).into_owned();
    if names != want {
        return Err(bad(format!(
            "its fields are {:?}; this rshperf reads {:?}",
            names.trim_end(),
            want.trim_end()
        )));
    }
    Ok(())
}

impl<R: io::BufRead> BinaryReader<R> {
    /// A reader of the records of `input`, whose header was read.
    pub(crate) fn new(input: R) -> BinaryReader<R> {
        BinaryReader { input }
    }

    fn byte(&mut self) -> io::Result<Option<u8>> {
        let buf = self.input.fill_buf()?;
        let Some(&b) = buf.first() else {
            return Ok(None);
        };
        self.input.consume(1);
        Ok(Some(b))
    }

    fn varint(&mut self, first: bool) -> io::Result<Option<u64>> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(b) = self.byte()? else {
                return if first && shift == 0 {
                    Ok(None)
                } else {
                    Err(bad("the log ends inside a record".into()))
                };
            };
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(Some(n));
            }
        }
        Err(bad("a number longer than 64 bits".into()))
    }

    /// The next record; None at the end of the input.
    pub(crate) fn next_record(&mut self) -> io::Result<Option<Record>> {
        let mut r = Record::default();
        for (k, f) in FIELDS.iter().enumerate() {
            let Some(n) = self.varint(k == 0)? else {
                return Ok(None);
            };
            let v = match f.kind {
                Kind::Int => Value::Int(n),
                Kind::Opt => Value::Opt(n.checked_sub(1)),
                Kind::Text => {
                    let len = usize::try_from(n)
                        .ok()
                        .filter(|&l| l <= 1 << 24)
                        .ok_or_else(|| bad(format!("a {} of {n} bytes", f.name)))?;
                    let mut text = vec![0u8; len];
                    self.input.read_exact(&mut text).map_err(|e| {
                        if e.kind() == io::ErrorKind::UnexpectedEof {
                            bad("the log ends inside a record".into())
                        } else {
                            e
                        }
                    })?;
                    let text = String::from_utf8(text)
                        .map_err(|_| bad(format!("its {} is not UTF-8", f.name)))?;
                    f.set(&mut r, Value::Text(&text))
                        .ok_or_else(|| bad(format!("an unknown {} {text:?}", f.name)))?;
                    continue;
                }
            };
            f.set(&mut r, v)
                .ok_or_else(|| bad(format!("a bad {}", f.name)))?;
        }
        Ok(Some(r))
    }
}

/// A record from one JSON line of the log; the error names what is wrong.
pub(crate) fn from_json_line(line: &str) -> Result<Record, String> {
    let doc: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(line).map_err(|e| e.to_string())?;
    let mut r = Record::default();
    for f in FIELDS {
        let v = doc
            .get(f.name)
            .ok_or_else(|| format!("no member {}", f.name))?;
        let value = match (f.kind, v) {
            (Kind::Text, serde_json::Value::String(s)) => Value::Text(s),
            (Kind::Opt, serde_json::Value::Null) => Value::Opt(None),
            (Kind::Int | Kind::Opt, v) => Value::Int(
                v.as_u64()
                    .ok_or_else(|| format!("{} is not a count: {v}", f.name))?,
            ),
            (Kind::Text, v) => return Err(format!("{} is not text: {v}", f.name)),
        };
        f.set(&mut r, value)
            .ok_or_else(|| format!("{} is not one of its values: {v}", f.name))?;
    }
    Ok(r)
}

pub(crate) mod tally;

#[cfg(test)]
mod tests;
