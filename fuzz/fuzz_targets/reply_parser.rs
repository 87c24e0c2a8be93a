//! Fuzz target: the incremental reply parser (`rshperf::wire::http::response::ReplyParser`).
//!
//! Input layout: byte 0 = flags (bit 0: the request was HEAD; bit 1: the peer closes
//! after the last byte), bytes 1..3 = split point (little-endian, taken modulo the data
//! length + 1), the rest = bytes received from the server. The data is parsed as a
//! stream of pipelined replies (a completed reply is followed by `start` and the rest
//! of the data) three ways: whole, cut in two at the split point, and one byte at a
//! time. Every way must give the same trace (completed replies, how the stream ended,
//! and the bytes the sink saw), the sink must see exactly the counted bytes, and the
//! parser must never panic, consume more than it was given, or complete a reply
//! without consuming a byte.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rshperf::wire::http::response::{Progress, Reply, ReplyError, ReplyParser, ReplySink};

/// Everything the sink was shown, by kind.
#[derive(Debug, Default, PartialEq, Eq)]
struct Record {
    header: Vec<u8>,
    body: Vec<u8>,
    footer: Vec<u8>,
}

impl ReplySink for Record {
    fn header_bytes(&mut self, bytes: &[u8]) {
        self.header.extend_from_slice(bytes);
    }
    fn body_bytes(&mut self, bytes: &[u8]) {
        self.body.extend_from_slice(bytes);
    }
    fn footer_bytes(&mut self, bytes: &[u8]) {
        self.footer.extend_from_slice(bytes);
    }
}

/// How the stream ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// The parser rejected the input.
    Error(ReplyError, Reply),
    /// All input consumed; the state of the reply in progress (after `on_eof` when the
    /// peer closed).
    Open {
        reply: Reply,
        started: bool,
        status_seen: bool,
        eof_completes: Option<bool>,
    },
}

/// The observable result of parsing one stream.
#[derive(Debug, PartialEq, Eq)]
struct Trace {
    replies: Vec<Reply>,
    end: End,
    sink: Record,
}

fn parse(pieces: &[&[u8]], head: bool, eof: bool) -> Trace {
    let mut p = ReplyParser::new();
    p.start(head);
    let mut replies = Vec::new();
    let mut sink = Record::default();
    for piece in pieces {
        let mut rest: &[u8] = piece;
        loop {
            let fresh = !p.started();
            match p.feed(rest, &mut sink) {
                Ok(Progress::NeedMore) => break,
                Ok(Progress::Complete(n)) => {
                    assert!(n <= rest.len(), "consumed {n} of {} bytes", rest.len());
                    assert!(
                        !(fresh && n == 0),
                        "a fresh reply completed without consuming a byte"
                    );
                    replies.push(*p.reply());
                    p.start(head);
                    rest = &rest[n..];
                    if rest.is_empty() {
                        break;
                    }
                }
                Err(e) => {
                    let end = End::Error(e, *p.reply());
                    // A failed parser repeats its error.
                    assert_eq!(p.feed(b"x", &mut Record::default()), Err(e));
                    return check(Trace { replies, end, sink });
                }
            }
        }
    }
    let started = p.started();
    let status_seen = p.status_seen();
    let eof_completes = eof.then(|| p.on_eof());
    let end = End::Open {
        reply: *p.reply(),
        started,
        status_seen,
        eof_completes,
    };
    check(Trace { replies, end, sink })
}

/// The sink saw exactly the bytes the counters count.
fn check(t: Trace) -> Trace {
    let last = match &t.end {
        End::Error(_, r) => r,
        End::Open { reply, .. } => reply,
    };
    let sum = |f: fn(&Reply) -> u64| t.replies.iter().map(f).sum::<u64>() + f(last);
    assert_eq!(sum(|r| r.header_bytes), t.sink.header.len() as u64);
    assert_eq!(sum(|r| r.content_bytes), t.sink.body.len() as u64);
    assert_eq!(sum(|r| r.footer_bytes), t.sink.footer.len() as u64);
    t
}

fuzz_target!(|input: &[u8]| {
    if input.len() < 3 {
        return;
    }
    let head = input[0] & 1 != 0;
    let eof = input[0] & 2 != 0;
    let data = &input[3..];
    let split = usize::from(u16::from_le_bytes([input[1], input[2]])) % (data.len() + 1);
    let whole = parse(&[data], head, eof);
    let (a, b) = data.split_at(split);
    assert_eq!(parse(&[a, b], head, eof), whole, "split at {split}");
    if data.len() <= 4096 {
        let bytes: Vec<&[u8]> = data.chunks(1).collect();
        assert_eq!(parse(&bytes, head, eof), whole, "one byte at a time");
    }
});
