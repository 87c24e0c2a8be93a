//! `--stream` on a connection: the events of the reply being received, split from its
//! body as the bytes arrive (`wire::events::EventSplitter`), each timed with the
//! read that completed it, and recorded into `StreamStats` (time to first event, every
//! gap, how the stream ended).
//!
//! Owns what the run asks for (`StreamSetup`, made once per engine from the
//! configuration), one stream's scan (`StreamScan`: started when a reply's body
//! starts, if the reply is in a stream format, ended with the reply, the connection, or
//! the run), a connection's place for it (`ScanSlot`: boxed, so a connection slot
//! stays small, and the box kept for the slot's later streams, so streams allocate
//! only the first time), the scans of a multiplexed connection's streams (`MuxScans`:
//! one per HTTP/2 or HTTP/3 stream, not per connection) and the rules of a stall.
//! Does not parse HTTP framing (the connection's parsers hand over entity bytes and
//! DATA payloads) or format anything. Called by `conn.rs`, `h2.rs` and `h3.rs`.

use std::time::{Duration, Instant};

use crate::model::stats::stream::{StreamEnd, StreamStats};
use crate::wire::events::{Choice, Event, EventSink, EventSplitter, Format};

/// What a run with `--stream` asks of every reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamSetup {
    /// `--stream`: the format, or `auto` (by each reply's Content-Type).
    pub(crate) choice: Choice,
    /// `--stream-gap-timeout`: a longer gap makes a stream stalled.
    pub(crate) gap_timeout: Option<Duration>,
    /// `--call-rate`: the time to first event is measured from each call's scheduled
    /// time; else from its request's send.
    pub(crate) from_schedule: bool,
}

/// The events of one reply body being received.
#[derive(Debug, Clone)]
pub(crate) struct StreamScan {
    splitter: EventSplitter,
    /// Where the time to first event starts.
    origin: Instant,
    gap_timeout: Option<Duration>,
    /// A gap longer than `gap_timeout` was seen.
    stalled: bool,
}

/// Records each event as the splitter dispatches it.
struct Recorder<'a> {
    stats: &'a mut StreamStats,
    origin: Instant,
    gap_timeout: Option<Duration>,
    stalled: &'a mut bool,
}

impl EventSink for Recorder<'_> {
    fn event(&mut self, e: &Event) {
        let wait = e.at.saturating_duration_since(self.origin);
        self.stats.on_event(e.data_bytes, e.gap, wait);
        *self.stalled |= longer(e.gap, self.gap_timeout);
    }
}

/// `gap` is longer than `limit` (both given).
fn longer(gap: Option<Duration>, limit: Option<Duration>) -> bool {
    matches!((gap, limit), (Some(g), Some(l)) if g > l)
}

impl StreamScan {
    /// The scan of a reply whose body starts now, when `setup` splits replies with
    /// this Content-Type's stream format (`content_type`); None when the reply is not
    /// a stream. `origin`: the call's scheduled time or its send start, as `setup`
    /// says.
    pub(crate) fn start(
        setup: &StreamSetup,
        content_type: Option<Format>,
        origin: Instant,
    ) -> Option<StreamScan> {
        let format = match setup.choice {
            Choice::Fixed(f) => f,
            Choice::Auto => content_type?,
        };
        Some(StreamScan {
            splitter: EventSplitter::new(format),
            origin,
            gap_timeout: setup.gap_timeout,
            stalled: false,
        })
    }

    /// Body bytes that arrived at `now`.
    pub(crate) fn feed(&mut self, bytes: &[u8], now: Instant, stats: &mut StreamStats) {
        let mut sink = Recorder {
            stats,
            origin: self.origin,
            gap_timeout: self.gap_timeout,
            stalled: &mut self.stalled,
        };
        self.splitter.feed(bytes, now, &mut sink);
    }

    /// The stream ended at `now`: its body completed (`complete`), or the connection
    /// or stream ended first, or the run stopped (`open_at_end`).
    pub(crate) fn end(
        &mut self,
        complete: bool,
        open_at_end: bool,
        now: Instant,
        stats: &mut StreamStats,
    ) {
        let mut sink = Recorder {
            stats,
            origin: self.origin,
            gap_timeout: self.gap_timeout,
            stalled: &mut self.stalled,
        };
        let f = self.splitter.finish(complete, now, &mut sink);
        let end = self.splitter.done_at().unwrap_or(now);
        let last = self.splitter.last_at();
        let tail = last.map(|t| end.saturating_duration_since(t));
        let stalled = self.stalled || longer(tail, self.gap_timeout);
        stats.on_end(StreamEnd {
            events: f.events,
            done: f.done,
            cut: !complete || !f.proper(false),
            stalled,
            after_done: f.after_done,
            open_at_end,
            duration: self
                .splitter
                .first_at()
                .map(|t| end.saturating_duration_since(t)),
        });
    }
}

/// A connection's stream scan, if its current reply is a stream.
#[derive(Debug, Default)]
pub(crate) struct ScanSlot {
    /// The last scan made here (kept for the next).
    scan: Option<Box<StreamScan>>,
    /// `scan` is the current reply's.
    live: bool,
}

impl ScanSlot {
    /// A reply's body starts (see `StreamScan::start`).
    pub(crate) fn start(
        &mut self,
        setup: &StreamSetup,
        content_type: Option<Format>,
        origin: Instant,
    ) {
        let Some(scan) = StreamScan::start(setup, content_type, origin) else {
            self.live = false;
            return;
        };
        match self.scan.as_mut() {
            Some(b) => **b = scan,
            None => self.scan = Some(Box::new(scan)),
        }
        self.live = true;
    }

    /// Whether the current reply is a stream.
    pub(crate) fn is_live(&self) -> bool {
        self.live
    }

    /// Body bytes of the current stream so far (0 when there is none).
    fn body_bytes(&self) -> u64 {
        match (self.live, self.scan.as_deref()) {
            (true, Some(s)) => s.splitter.body_bytes(),
            _ => 0,
        }
    }

    /// Body bytes of the current reply that arrived at `now`.
    pub(crate) fn feed(&mut self, bytes: &[u8], now: Instant, stats: &mut StreamStats) {
        if let (true, Some(s)) = (self.live, self.scan.as_mut()) {
            s.feed(bytes, now, stats);
        }
    }

    /// Ends the current stream, if any (see `StreamScan::end`).
    pub(crate) fn end(
        &mut self,
        complete: bool,
        open_at_end: bool,
        now: Instant,
        stats: &mut StreamStats,
    ) {
        if let (true, Some(s)) = (self.live, self.scan.as_mut()) {
            s.end(complete, open_at_end, now, stats);
        }
        self.live = false;
    }
}

/// The stream scans of a multiplexed connection's open streams (HTTP/2, HTTP/3), by
/// the staged slot of each stream's call (`Tagged::slot`: unique among the open
/// streams, reused after). Lives in the connection's boxed protocol side, so a
/// connection slot stays small; the scans' boxes are kept for later streams.
#[derive(Debug, Default)]
pub(crate) struct MuxScans {
    slots: Vec<ScanSlot>,
}

impl MuxScans {
    /// The reply of stream `slot` has its final status (see `StreamScan::start`).
    pub(crate) fn start(
        &mut self,
        slot: u32,
        setup: &StreamSetup,
        content_type: Option<Format>,
        origin: Instant,
    ) {
        let i = slot as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, ScanSlot::default);
        }
        self.slots[i].start(setup, content_type, origin);
    }

    /// DATA payload bytes of stream `slot` that arrived at `now`.
    pub(crate) fn feed(&mut self, slot: u32, bytes: &[u8], now: Instant, stats: &mut StreamStats) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            s.feed(bytes, now, stats);
        }
    }

    /// Stream `slot` ended its reply (END_STREAM, FIN). A reply that ended with no
    /// body byte is not a stream (as a reply without a body is not over HTTP/1.x).
    pub(crate) fn done(&mut self, slot: u32, now: Instant, stats: &mut StreamStats) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            if s.body_bytes() == 0 {
                s.live = false;
            }
            s.end(true, false, now, stats);
        }
    }

    /// Stream `slot` ended before its reply did (RST_STREAM, a refusal): cut.
    pub(crate) fn cut(&mut self, slot: u32, now: Instant, stats: &mut StreamStats) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            s.end(false, false, now, stats);
        }
    }

    /// Ends every open stream at `now`: the connection ended (cut), or the run
    /// stopped (`open_at_end`).
    pub(crate) fn end_all(&mut self, open_at_end: bool, now: Instant, stats: &mut StreamStats) {
        for s in &mut self.slots {
            s.end(false, open_at_end, now, stats);
        }
    }

    /// Forgets every stream without counting it (the slot's next connection).
    pub(crate) fn clear(&mut self) {
        for s in &mut self.slots {
            s.live = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(choice: Choice, gap_ms: Option<u64>) -> StreamSetup {
        StreamSetup {
            choice,
            gap_timeout: gap_ms.map(Duration::from_millis),
            from_schedule: false,
        }
    }

    fn ms(t0: Instant, n: u64) -> Instant {
        t0 + Duration::from_millis(n)
    }

    #[test]
    fn auto_splits_only_replies_in_a_stream_format() {
        let t0 = Instant::now();
        let auto = setup(Choice::Auto, None);
        assert!(StreamScan::start(&auto, None, t0).is_none());
        assert!(StreamScan::start(&auto, Some(Format::Ndjson), t0).is_some());
        let fixed = setup(Choice::Fixed(Format::Lines), None);
        assert!(StreamScan::start(&fixed, None, t0).is_some());
    }

    #[test]
    fn first_event_gaps_duration_and_a_stall_are_recorded_at_the_reads_times() {
        let t0 = Instant::now();
        let mut stats = StreamStats::default();
        let s = setup(Choice::Fixed(Format::Sse), Some(50));
        let mut scan = StreamScan::start(&s, None, t0).expect("a stream");
        // "a" is dispatched by the blank line that comes with "bb", at 30 ms.
        scan.feed(b"data: a\n", ms(t0, 10), &mut stats);
        scan.feed(b"\ndata: bb\n\n", ms(t0, 30), &mut stats);
        scan.feed(b"data: c\n\n", ms(t0, 45), &mut stats);
        scan.feed(b"data: d\n\ndata: [DONE]\n\n", ms(t0, 100), &mut stats);
        scan.end(true, false, ms(t0, 120), &mut stats);
        assert_eq!((stats.streams, stats.events, stats.data_bytes), (1, 4, 5));
        assert_eq!((stats.done, stats.cut, stats.stalled), (1, 0, 1));
        let h = &stats.first_event;
        assert!(h.len() == 1 && h.equivalent(h.max(), 30_000), "{}", h.max());
        let g = &stats.gap;
        assert_eq!(g.len(), 3);
        // 0 (a and bb in one read, clamped to 1 µs), 15 ms, 55 ms (the stall).
        assert_eq!(g.min(), 1);
        assert!(g.equivalent(g.value_at_quantile(0.5), 15_000));
        assert!(g.equivalent(g.max(), 55_000), "{}", g.max());
        assert_eq!(stats.duration_sum_us, 70_000, "first event to [DONE]");
    }

    #[test]
    fn a_cut_stream_counts_cut_and_the_tail_can_stall_it() {
        let t0 = Instant::now();
        let mut stats = StreamStats::default();
        let s = setup(Choice::Fixed(Format::Ndjson), Some(50));
        let mut scan = StreamScan::start(&s, None, t0).expect("a stream");
        scan.feed(b"{}\n{\"a\":", ms(t0, 5), &mut stats);
        scan.end(false, false, ms(t0, 200), &mut stats);
        assert_eq!(
            (stats.streams, stats.events, stats.cut, stats.stalled),
            (1, 1, 1, 1)
        );
        assert_eq!((stats.done, stats.empty, stats.open_at_end), (0, 0, 0));
        // Open when the run stopped: not cut, and not empty (it had not ended).
        let mut scan = StreamScan::start(&s, None, t0).expect("a stream");
        scan.feed(b"{", ms(t0, 5), &mut stats);
        scan.end(false, true, ms(t0, 10), &mut stats);
        assert_eq!(
            (stats.streams, stats.cut, stats.empty, stats.open_at_end),
            (2, 1, 0, 1)
        );
        assert_eq!(stats.duration.len(), 1, "no duration without an event");
    }

    #[test]
    fn a_slot_ends_each_stream_once_and_keeps_its_box() {
        let t0 = Instant::now();
        let mut stats = StreamStats::default();
        let mut slot = ScanSlot::default();
        let auto = setup(Choice::Auto, None);
        slot.start(&auto, None, t0);
        assert!(!slot.is_live(), "not a stream");
        slot.feed(b"x\n", t0, &mut stats);
        slot.end(true, false, t0, &mut stats);
        assert_eq!((stats.streams, stats.events), (0, 0));
        slot.start(&auto, Some(Format::Lines), t0);
        slot.feed(b"x\ny\n", t0, &mut stats);
        let kept = slot.scan.as_deref().map(|s| s as *const StreamScan);
        slot.end(true, false, t0, &mut stats);
        slot.end(false, false, t0, &mut stats);
        assert_eq!((stats.streams, stats.events, stats.cut), (1, 2, 0));
        slot.start(&auto, Some(Format::Lines), t0);
        assert_eq!(slot.scan.as_deref().map(|s| s as *const StreamScan), kept);
    }
}
