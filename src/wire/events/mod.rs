//! Events inside a reply body: the sans-I/O splitter that cuts a streamed body into
//! server-sent events (`text/event-stream`), JSON lines or plain lines as its bytes
//! arrive, in any split, and times each event with the caller's clock.
//!
//! Owns the formats and their names (`Format`; `Choice`: a format or `auto`, by
//! Content-Type), the per-stream bookkeeping (event count, each event's data and wire
//! size, its time and the gap since the previous one, the `[DONE]` sentinel, what
//! follows it) and how the stream ended (`Finish`). The byte-level rules are in
//! `sse.rs` (WHATWG server-sent events) and `line.rs` (NDJSON and lines). Does not do
//! I/O, HTTP framing or statistics: callers hand it entity body bytes (after chunked
//! decoding, or HTTP/2 and HTTP/3 DATA payloads) and keep the figures.
//!
//! Memory is O(1) per stream whatever the events' sizes: nothing buffers an event's
//! data (a 1 MB event is a counter), so nothing allocates, per event or at all. That is
//! why this is hand-written: the SSE crates (eventsource-stream, sse-parse and the
//! like) hand out each event's data in an owned buffer.

mod line;
mod sse;
#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

use line::Lines;
use sse::Sse;

/// How a reply body is cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Server-sent events (WHATWG HTML §9.2): an event per blank line after at least
    /// one `data` field; `data: [DONE]` ends the stream.
    Sse,
    /// JSON lines (NDJSON, JSON Lines): an event per line holding more than JSON white
    /// space (space, tab, CR); lines end with LF (a CR before it is not data).
    Ndjson,
    /// Plain lines: an event per non-empty line; lines end with LF (a CR before it is
    /// not data).
    Lines,
}

impl Format {
    /// Every format, in the order their names are listed.
    pub const ALL: [Format; 3] = [Format::Sse, Format::Ndjson, Format::Lines];

    /// The format's name (`sse`, `ndjson`, `lines`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Sse => "sse",
            Format::Ndjson => "ndjson",
            Format::Lines => "lines",
        }
    }

    /// The format named `name` (`jsonl` is another name for `ndjson`).
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "sse" => Some(Format::Sse),
            "ndjson" | "jsonl" => Some(Format::Ndjson),
            "lines" => Some(Format::Lines),
            _ => None,
        }
    }

    /// The format a reply's `Content-Type` value announces (the media type before any
    /// `;` parameter, case-insensitive): `text/event-stream` is SSE;
    /// `application/x-ndjson`, `application/ndjson`, `application/jsonl`,
    /// `application/x-jsonl`, `application/jsonlines` and `application/x-jsonlines`
    /// are NDJSON. Anything else (`application/json-seq` too: its records start with
    /// RS and may span lines) is not a stream of events: None.
    pub fn from_content_type(value: &[u8]) -> Option<Format> {
        let media = value.split(|&b| b == b';').next().unwrap_or_default();
        let media = media.trim_ascii();
        let is = |name: &[u8]| media.eq_ignore_ascii_case(name);
        if is(b"text/event-stream") {
            return Some(Format::Sse);
        }
        let ndjson: [&[u8]; 6] = [
            b"application/x-ndjson",
            b"application/ndjson",
            b"application/jsonl",
            b"application/x-jsonl",
            b"application/jsonlines",
            b"application/x-jsonlines",
        ];
        ndjson.iter().any(|n| is(n)).then_some(Format::Ndjson)
    }
}

/// What a user asks for (`sse`, `ndjson`/`jsonl`, `lines` or `auto`): a format, or
/// the one each reply's `Content-Type` announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Every reply in this format, whatever its Content-Type.
    Fixed(Format),
    /// Each reply by its Content-Type (`Format::from_content_type`); a reply whose
    /// type announces no stream is not split.
    Auto,
}

impl Choice {
    /// The names `from_name` takes, in the order they are listed.
    pub const NAMES: [&'static str; 5] = ["sse", "ndjson", "jsonl", "lines", "auto"];

    /// The choice named `name` (a format's name or `auto`).
    pub fn from_name(name: &str) -> Option<Choice> {
        match name {
            "auto" => Some(Choice::Auto),
            _ => Format::from_name(name).map(Choice::Fixed),
        }
    }

    /// The choice's name (`sse`, `ndjson`, `lines`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Choice::Fixed(f) => f.name(),
            Choice::Auto => "auto",
        }
    }

    /// The format of a reply with this `Content-Type` value (None: the reply has
    /// none); None when the reply is not to be split.
    pub fn format_for(self, content_type: Option<&[u8]>) -> Option<Format> {
        match self {
            Choice::Fixed(f) => Some(f),
            Choice::Auto => content_type.and_then(Format::from_content_type),
        }
    }
}

/// One event, as the splitter dispatched it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Its place in the stream, from 0 (the `[DONE]` sentinel and what follows it are
    /// not events).
    pub index: u64,
    /// Bytes of its data as a client sees them: SSE, the values of its `data` fields
    /// joined with LF; NDJSON and lines, the line without its line end. Bytes as
    /// received (not decoded as UTF-8).
    pub data_bytes: u64,
    /// Body bytes from just after the byte that dispatched the previous event (or the
    /// sentinel, or from the start of the body) through the byte that dispatched this
    /// one: its fields, comments and blank lines before it, a BOM.
    pub wire_bytes: u64,
    /// When: the `now` of the `feed` (or `finish`) that completed it.
    pub at: Instant,
    /// Time since the previous event of the stream; None for the first.
    pub gap: Option<Duration>,
}

/// Receives a stream's events as they are dispatched.
pub trait EventSink {
    /// An event was dispatched.
    fn event(&mut self, event: &Event);
    /// The `[DONE]` sentinel arrived at `at`: the stream is over.
    fn done(&mut self, _at: Instant) {}
}

/// A sink that only lets the splitter count.
impl EventSink for () {
    fn event(&mut self, _event: &Event) {}
}

/// How a stream ended (`EventSplitter::finish`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finish {
    /// Events dispatched before the sentinel.
    pub events: u64,
    /// The `[DONE]` sentinel arrived.
    pub done: bool,
    /// Events dispatched after the sentinel (a second `[DONE]` is one): the server
    /// went on after saying it was done. They are not events of the stream.
    pub after_done: u64,
    /// The body ended inside an event: SSE, `data` not yet dispatched by a blank line
    /// (the WHATWG rules drop it); NDJSON and lines, a line without its LF when the body
    /// was cut (a body that ends properly ends its last line: that line is an event).
    /// Said after a `[DONE]` too (`proper` does not hold it against the stream then).
    pub partial: bool,
}

impl Finish {
    /// The stream ended as it should: at its `[DONE]`, or, when the sentinel is not
    /// required, with no event left unfinished. What comes after a `[DONE]` (even a
    /// partial event) does not make a finished stream improper; `after_done` counts it.
    pub fn proper(&self, sentinel_required: bool) -> bool {
        self.done || (!sentinel_required && !self.partial)
    }
}

/// The UTF-8 byte order mark, skipped at the start of a body.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
/// `bom` once the start of the body is past (matched or not).
const BOM_PAST: u8 = 4;

/// What a format's byte machine found: an event ended at the byte before offset `end`
/// of the piece it was fed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dispatch {
    /// Bytes of the event's data.
    data_bytes: u64,
    /// The data is exactly `[DONE]` (SSE only).
    done: bool,
}

/// The byte machine of the stream's format.
#[derive(Debug, Clone)]
enum Machine {
    Sse(Sse),
    Lines(Lines),
}

impl Machine {
    /// Feeds `bytes`; `on(end, d)` for each event dispatched by the byte at `end - 1`.
    #[inline]
    fn feed(&mut self, bytes: &[u8], on: impl FnMut(usize, Dispatch)) {
        match self {
            Machine::Sse(m) => m.feed(bytes, on),
            Machine::Lines(m) => m.feed(bytes, on),
        }
    }
}

/// The per-stream bookkeeping (apart from the machine, so the machine's callback can
/// update it).
#[derive(Debug, Clone, Copy)]
struct Tally {
    /// Body bytes fed before the current piece.
    fed: u64,
    /// Body offset just past the byte that dispatched the previous event or sentinel.
    last_end: u64,
    events: u64,
    after_done: u64,
    first_at: Option<Instant>,
    last_at: Option<Instant>,
    done_at: Option<Instant>,
}

impl Tally {
    /// An event (or the sentinel) dispatched by the byte before body offset `end`.
    fn dispatch(&mut self, end: u64, d: Dispatch, now: Instant, sink: &mut impl EventSink) {
        let wire_bytes = end - self.last_end;
        self.last_end = end;
        if self.done_at.is_some() {
            self.after_done += 1;
            return;
        }
        if d.done {
            self.done_at = Some(now);
            sink.done(now);
            return;
        }
        let event = Event {
            index: self.events,
            data_bytes: d.data_bytes,
            wire_bytes,
            at: now,
            gap: self.last_at.map(|t| now.saturating_duration_since(t)),
        };
        self.events += 1;
        self.first_at.get_or_insert(now);
        self.last_at = Some(now);
        sink.event(&event);
    }
}

/// Cuts one reply body into events as it arrives.
///
/// `feed` the body's bytes in order, split anywhere, with the time they arrived;
/// `finish` once the body is over. Splitting the body differently gives the same
/// events (only their times differ). A new stream needs a new splitter.
#[derive(Debug, Clone)]
pub struct EventSplitter {
    machine: Machine,
    /// Bytes of the BOM matched at the start of the body (`BOM_PAST` once past it).
    bom: u8,
    tally: Tally,
    /// Set by `finish`; later calls change nothing.
    finished: Option<Finish>,
}

impl EventSplitter {
    /// A splitter for a body in `format`.
    pub fn new(format: Format) -> EventSplitter {
        EventSplitter {
            machine: match format {
                Format::Sse => Machine::Sse(Sse::default()),
                Format::Ndjson => Machine::Lines(Lines::new(true)),
                Format::Lines => Machine::Lines(Lines::new(false)),
            },
            bom: 0,
            tally: Tally {
                fed: 0,
                last_end: 0,
                events: 0,
                after_done: 0,
                first_at: None,
                last_at: None,
                done_at: None,
            },
            finished: None,
        }
    }

    /// Feeds body bytes that arrived at `now`; `sink` sees every event (and the
    /// sentinel) they complete. Ignored after `finish`.
    pub fn feed(&mut self, bytes: &[u8], now: Instant, sink: &mut impl EventSink) {
        if self.finished.is_some() {
            return;
        }
        let mut skip = 0;
        while self.bom < BOM.len() as u8 && skip < bytes.len() {
            if bytes[skip] == BOM[usize::from(self.bom)] {
                self.bom += 1;
                skip += 1;
            } else {
                self.replay_bom();
            }
        }
        if self.bom == BOM.len() as u8 {
            self.bom = BOM_PAST;
        }
        let tally = &mut self.tally;
        let base = tally.fed + skip as u64;
        self.machine.feed(&bytes[skip..], |end, d| {
            tally.dispatch(base + end as u64, d, now, sink);
        });
        tally.fed += bytes.len() as u64;
    }

    /// The body is over (`body_complete`: its framing ended it, e.g. a terminating
    /// chunk, END_STREAM, a close-delimited body's EOF; false: it was cut). Dispatches
    /// the last line of an NDJSON or lines body that ended properly without its LF, at
    /// `now`, and says how the stream ended. Later calls return the same.
    pub fn finish(
        &mut self,
        body_complete: bool,
        now: Instant,
        sink: &mut impl EventSink,
    ) -> Finish {
        if let Some(f) = self.finished {
            return f;
        }
        if self.bom < BOM.len() as u8 {
            self.replay_bom();
        }
        let tally = &mut self.tally;
        let end = tally.fed;
        let partial = match &mut self.machine {
            Machine::Sse(m) => m.pending(),
            Machine::Lines(m) => match m.take_last() {
                Some(d) if body_complete => {
                    tally.dispatch(end, d, now, sink);
                    false
                }
                Some(_) => true,
                None => false,
            },
        };
        let f = Finish {
            events: tally.events,
            done: tally.done_at.is_some(),
            after_done: tally.after_done,
            partial,
        };
        self.finished = Some(f);
        f
    }

    /// A mismatch inside the BOM: the bytes matched so far were data after all. They
    /// end no line, so they dispatch nothing.
    fn replay_bom(&mut self) {
        let matched = &BOM[..usize::from(self.bom.min(BOM.len() as u8))];
        // No line end among them: the callback is never called.
        self.machine.feed(matched, |_, _| {});
        self.bom = BOM_PAST;
    }

    /// Events dispatched so far (before the sentinel).
    pub fn events(&self) -> u64 {
        self.tally.events
    }

    /// When the first event was dispatched.
    pub fn first_at(&self) -> Option<Instant> {
        self.tally.first_at
    }

    /// When the latest event was dispatched.
    pub fn last_at(&self) -> Option<Instant> {
        self.tally.last_at
    }

    /// When the `[DONE]` sentinel arrived.
    pub fn done_at(&self) -> Option<Instant> {
        self.tally.done_at
    }

    /// Events dispatched after the sentinel.
    pub fn after_done(&self) -> u64 {
        self.tally.after_done
    }

    /// Body bytes fed so far.
    pub fn body_bytes(&self) -> u64 {
        self.tally.fed
    }
}
