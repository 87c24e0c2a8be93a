//! Fuzz target: the event splitter for streamed bodies
//! (`rshperf::wire::events::EventSplitter`).
//!
//! Input layout: byte 0 = flags (bits 0–1: the format, 0 SSE, 1 NDJSON, 2 lines, 3 SSE;
//! bit 2: the body ended by its framing rather than cut), bytes 1..3 = split point
//! (little-endian, taken modulo the body length + 1), the rest = the body. The body is
//! split three ways: whole, cut in two at the split point, and one byte at a time.
//! Every way must give the same events (data and wire bytes) and the same ending; the
//! events' wire bytes never add up to more than the body; an event's data is never
//! longer than its wire bytes; the indices run 0, 1, 2…; nothing may panic.

#![no_main]

use std::time::Instant;

use libfuzzer_sys::fuzz_target;
use rshperf::wire::events::{Event, EventSink, EventSplitter, Finish, Format};

#[derive(Default)]
struct Rec {
    events: Vec<(u64, u64)>,
    dones: u32,
}

impl EventSink for Rec {
    fn event(&mut self, e: &Event) {
        assert_eq!(e.index, self.events.len() as u64, "indices run 0, 1, 2…");
        assert!(e.data_bytes <= e.wire_bytes, "{e:?}");
        self.events.push((e.data_bytes, e.wire_bytes));
    }
    fn done(&mut self, _at: Instant) {
        self.dones += 1;
    }
}

fn split(format: Format, pieces: &[&[u8]], complete: bool) -> (Vec<(u64, u64)>, Finish) {
    let now = Instant::now();
    let mut s = EventSplitter::new(format);
    let mut rec = Rec::default();
    for p in pieces {
        s.feed(p, now, &mut rec);
    }
    let f = s.finish(complete, now, &mut rec);
    let body: usize = pieces.iter().map(|p| p.len()).sum();
    let wire: u64 = rec.events.iter().map(|e| e.1).sum();
    assert!(wire <= body as u64, "{wire} wire bytes in a body of {body}");
    assert_eq!(f.events, rec.events.len() as u64);
    assert_eq!(u32::from(f.done), rec.dones);
    assert!(f.done || f.after_done == 0);
    (rec.events, f)
}

fuzz_target!(|input: &[u8]| {
    if input.len() < 3 {
        return;
    }
    let format = [Format::Sse, Format::Ndjson, Format::Lines, Format::Sse][usize::from(input[0] & 3)];
    let complete = input[0] & 4 != 0;
    let body = &input[3..];
    let at = usize::from(u16::from_le_bytes([input[1], input[2]])) % (body.len() + 1);
    let whole = split(format, &[body], complete);
    let (a, b) = body.split_at(at);
    assert_eq!(split(format, &[a, b], complete), whole, "split at {at}");
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(split(format, &bytes, complete), whole, "one byte at a time");
});
