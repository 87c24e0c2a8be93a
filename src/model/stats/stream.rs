//! `StreamStats`: what only a `--stream` run measures — replies split into events
//! (server-sent events, JSON lines, lines; `wire::events`), the events and their data,
//! how each stream ended (`[DONE]`, cut short, stalled, still open at the end), and three
//! histograms: time to first event (from the call's scheduled time with `--call-rate`,
//! from the request's send otherwise), every gap between consecutive events of a
//! stream, and each stream's duration (first event to its end).
//!
//! Owns the figures, their recording rules and their merge; `Stats` holds one
//! (`Stats::stream`). Fed by the engine's connections (`engine::conn::events`); all zero
//! without `--stream`, and then absent from the JSON document. The report's `stream`
//! figures are derived from it (`model::blocks::Stream`).

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::merge::{merge_fields, Merge, MergeError};
use super::{new_histogram, record, serial, us};

/// Stream figures of one engine (or merged from several).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StreamStats {
    /// Engines that split replies into events (`--stream` given; summed by merge).
    pub(crate) engines: u64,
    /// Engines that measured the time to first event from the calls' scheduled times
    /// (`--call-rate`); the rest measured it from the requests' send.
    pub(crate) from_schedule: u64,
    /// Replies whose body was split into events (a body in a stream format).
    pub(crate) streams: u64,
    /// Events dispatched before a `[DONE]` sentinel.
    pub(crate) events: u64,
    /// Bytes of those events' data.
    pub(crate) data_bytes: u64,
    /// Streams that ended with `[DONE]`.
    pub(crate) done: u64,
    /// Streams cut short: the body ended inside an event, or the connection or stream
    /// ended before the body did.
    pub(crate) cut: u64,
    /// Streams with a gap longer than `--stream-gap-timeout` (between two events,
    /// before the first, or from the last to the stream's end).
    pub(crate) stalled: u64,
    /// Streams that ended without an event.
    pub(crate) empty: u64,
    /// Events after a `[DONE]` (a second `[DONE]` is one): not events of the stream.
    pub(crate) after_done: u64,
    /// Streams still open when the run stopped (counted in `streams`, not in `cut`).
    pub(crate) open_at_end: u64,
    /// Sum of the durations of streams with at least one event, µs.
    pub(crate) duration_sum_us: u64,
    /// Time to first event, µs.
    #[serde(with = "serial::histogram")]
    pub(crate) first_event: Histogram<u64>,
    /// Gaps between consecutive events of a stream, µs (every gap a sample).
    #[serde(with = "serial::histogram")]
    pub(crate) gap: Histogram<u64>,
    /// Stream duration (first event to the end of the stream), µs.
    #[serde(with = "serial::histogram")]
    pub(crate) duration: Histogram<u64>,
}

impl Default for StreamStats {
    fn default() -> Self {
        StreamStats {
            engines: 0,
            from_schedule: 0,
            streams: 0,
            events: 0,
            data_bytes: 0,
            done: 0,
            cut: 0,
            stalled: 0,
            empty: 0,
            after_done: 0,
            open_at_end: 0,
            duration_sum_us: 0,
            first_event: new_histogram(),
            gap: new_histogram(),
            duration: new_histogram(),
        }
    }
}

impl Merge for StreamStats {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(StreamStats, self, o;
            engines: sum,
            from_schedule: sum,
            streams: sum,
            events: sum,
            data_bytes: sum,
            done: sum,
            cut: sum,
            stalled: sum,
            empty: sum,
            after_done: sum,
            open_at_end: sum,
            duration_sum_us: sum,
            first_event: sum,
            gap: sum,
            duration: sum,
        )
    }
}

/// How one stream ended, for `StreamStats::on_end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamEnd {
    /// Events of the stream.
    pub(crate) events: u64,
    /// It ended with `[DONE]`.
    pub(crate) done: bool,
    /// It was cut short.
    pub(crate) cut: bool,
    /// It stalled (a gap longer than `--stream-gap-timeout`).
    pub(crate) stalled: bool,
    /// Events after its `[DONE]`.
    pub(crate) after_done: u64,
    /// The run stopped while it was open.
    pub(crate) open_at_end: bool,
    /// First event to its end; None without an event.
    pub(crate) duration: Option<Duration>,
}

impl StreamStats {
    /// Whether this run split replies into events (`--stream`).
    pub(crate) fn is_used(&self) -> bool {
        self.engines > 0
    }

    /// Whether nothing was recorded (the JSON leaves the member out).
    pub(crate) fn is_empty(&self) -> bool {
        !self.is_used() && self.streams == 0
    }

    /// An event of `data_bytes` bytes: the first of its stream `wait` after the
    /// stream's origin (`gap` None), or `gap` after the previous one.
    pub(crate) fn on_event(&mut self, data_bytes: u64, gap: Option<Duration>, wait: Duration) {
        self.events += 1;
        self.data_bytes += data_bytes;
        match gap {
            None => record(&mut self.first_event, us(wait)),
            Some(g) => record(&mut self.gap, us(g)),
        }
    }

    /// A stream ended.
    pub(crate) fn on_end(&mut self, e: StreamEnd) {
        self.streams += 1;
        self.done += u64::from(e.done);
        self.cut += u64::from(e.cut && !e.open_at_end);
        self.stalled += u64::from(e.stalled);
        // A stream the run stopped had not ended: no event yet is not an empty stream.
        self.empty += u64::from(e.events == 0 && !e.open_at_end);
        self.after_done += e.after_done;
        self.open_at_end += u64::from(e.open_at_end);
        if let Some(d) = e.duration {
            self.duration_sum_us += us(d);
            record(&mut self.duration, us(d));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_ends_are_counted_and_merge_adds() {
        let mut a = StreamStats {
            engines: 1,
            ..StreamStats::default()
        };
        assert!(!StreamStats::default().is_used());
        assert!(StreamStats::default().is_empty());
        a.on_event(5, None, Duration::from_micros(1500));
        a.on_event(7, Some(Duration::from_micros(10_000)), Duration::ZERO);
        a.on_end(StreamEnd {
            events: 2,
            done: true,
            cut: false,
            stalled: false,
            after_done: 1,
            open_at_end: false,
            duration: Some(Duration::from_micros(10_000)),
        });
        a.on_end(StreamEnd {
            events: 0,
            done: false,
            cut: true,
            stalled: true,
            after_done: 0,
            open_at_end: true,
            duration: None,
        });
        assert_eq!(
            (a.streams, a.events, a.data_bytes, a.done, a.cut, a.stalled),
            (2, 2, 12, 1, 0, 1)
        );
        assert_eq!((a.empty, a.after_done, a.open_at_end), (0, 1, 1));
        assert_eq!(
            (a.first_event.len(), a.gap.len(), a.duration.len()),
            (1, 1, 1)
        );
        a.merge(&a.clone()).expect("no overflow");
        assert_eq!((a.engines, a.events, a.duration_sum_us), (2, 4, 20_000));
        assert_eq!(a.gap.len(), 2);
    }
}
