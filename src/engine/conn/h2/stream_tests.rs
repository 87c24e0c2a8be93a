//! Unit tests of `--stream` over HTTP/2, driven through the socket seam
//! (`transport::Mem`) on simulated time: each stream's DATA payloads go to its own
//! scan (interleaved streams do not mix), an event split across DATA frames at every
//! byte gives the same counts and the time of the frame that completed it, the reply's
//! Content-Type chooses the format with `auto`, END_STREAM ends a stream, and
//! RST_STREAM, a GOAWAY with an error, the connection's end or the run's stop end it
//! early (cut, or open at the end), with exact counts; a stream's status marks its
//! call as begun.

use std::time::Instant;

use super::tests::{flush, rig_with_calls, settings};
use crate::engine::conn::events::StreamSetup;
use crate::engine::conn::tests::{ms, Rig, REPLY_TIMEOUT};
use crate::engine::conn::transport::Input;
use crate::engine::conn::{ErrorKind, Step};
use crate::model::stats::stream::StreamStats;
use crate::wire::events::{Choice, Format};
use crate::wire::http2::frame::{self, code, flag, kind};
use crate::wire::http2::hpack;

/// `--stream` as `choice`, times from the request's send, no stall limit.
fn setup(choice: Choice) -> Option<StreamSetup> {
    Some(StreamSetup {
        choice,
        gap_timeout: None,
        from_schedule: false,
    })
}

/// HEADERS `:status` 200 with `content-type` (if any) on `stream`, ending it when
/// `end`.
fn headers(stream: u32, content_type: Option<&[u8]>, end: bool) -> Vec<u8> {
    let mut block = Vec::new();
    hpack::put_indexed(&mut block, 8);
    if let Some(ct) = content_type {
        hpack::put_literal(&mut block, b"content-type", ct);
    }
    let flags = flag::END_HEADERS | if end { flag::END_STREAM } else { 0 };
    let mut out = Vec::new();
    frame::put_head(&mut out, block.len(), kind::HEADERS, flags, stream);
    out.extend_from_slice(&block);
    out
}

/// A DATA frame of `bytes` on `stream`, ending it when `end`.
fn data(stream: u32, bytes: &[u8], end: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let flags = if end { flag::END_STREAM } else { 0 };
    frame::put_head(&mut out, bytes.len(), kind::DATA, flags, stream);
    out.extend_from_slice(bytes);
    out
}

/// A connection with `n` streams open (ids 1, 3, …) at 2 ms, `--stream` as `choice`.
fn open(n: usize, choice: Choice) -> Rig {
    let mut r = rig_with_calls(n);
    r.stream = setup(choice);
    let t2 = r.at(ms(2));
    r.receive(t2, &settings(100));
    let ids: Vec<u32> = (0..n as u32).map(|k| 2 * k + 1).collect();
    assert_eq!(flush(&mut r, t2), ids);
    r
}

/// (streams, events, done, cut, empty, after_done, open_at_end).
fn counts(s: &StreamStats) -> [u64; 7] {
    [
        s.streams,
        s.events,
        s.done,
        s.cut,
        s.empty,
        s.after_done,
        s.open_at_end,
    ]
}

/// The single value of histogram `h` (µs), checked to be alone.
fn only(h: &hdrhistogram::Histogram<u64>) -> u64 {
    assert_eq!(h.len(), 1);
    h.max()
}

const SSE: &[u8] = b"data: a\n\ndata: bb\n\ndata: [DONE]\n\n";

#[test]
fn an_sse_body_split_across_data_frames_at_every_byte_gives_the_same_events() {
    for k in 0..=SSE.len() {
        let mut r = open(1, Choice::Auto);
        let t5 = r.at(ms(5));
        let t9 = r.at(ms(9));
        let mut first = headers(1, Some(b"text/event-stream; charset=utf-8"), false);
        first.extend(data(1, &SSE[..k], false));
        assert_eq!(r.receive(t5, &first), Step::Continue);
        assert_eq!(r.receive(t9, &data(1, &SSE[k..], true)), Step::Continue);
        assert_eq!(r.done().len(), 1, "split at {k}");
        let s = &r.stats.stream;
        assert_eq!(counts(s), [1, 2, 1, 0, 0, 0, 0], "split at {k}");
        assert_eq!(s.data_bytes, 3, "split at {k}");
        // "data: a\n\n" is 9 bytes: the first event is complete in the first frame
        // from there on. Times run from the stream's send at 2 ms.
        let first_us = if k >= 9 { 3_000 } else { 7_000 };
        let f = &s.first_event;
        assert!(f.equivalent(only(f), first_us), "split at {k}: {}", f.max());
        assert_eq!(s.gap.len(), 1, "split at {k}");
    }
}

#[test]
fn interleaved_streams_are_scanned_apart() {
    let mut r = open(2, Choice::Fixed(Format::Sse));
    let t5 = r.at(ms(5));
    // Stream 1's event is split around stream 3's whole event: one scan per
    // connection would read "data: xdata: y" as one event.
    let mut f = headers(1, None, false);
    f.extend(headers(3, None, false));
    f.extend(data(1, b"data: x", false));
    f.extend(data(3, b"data: yy\n\n", false));
    f.extend(data(1, b"\n\n", false));
    f.extend(data(3, b"data: [DONE]\n\n", true));
    f.extend(data(1, b"data: zzz\n\n", true));
    assert_eq!(r.receive(t5, &f), Step::Continue);
    assert_eq!(r.done().len(), 2);
    let s = &r.stats.stream;
    assert_eq!(counts(s), [2, 3, 1, 0, 0, 0, 0]);
    assert_eq!(s.data_bytes, 1 + 2 + 3);
    assert_eq!(s.first_event.len(), 2);
    assert_eq!(s.gap.len(), 1, "x to zzz on stream 1");
}

#[test]
fn auto_splits_by_each_replys_content_type_and_a_reply_with_no_data_is_no_stream() {
    let mut r = open(4, Choice::Auto);
    let t5 = r.at(ms(5));
    let mut f = headers(1, Some(b"text/plain"), false);
    f.extend(data(1, b"a\nb\n", true));
    f.extend(headers(3, Some(b"application/x-ndjson"), false));
    f.extend(data(3, b"{}\n{}\n{}\n", true));
    // No body at all, or an empty one: not streams.
    f.extend(headers(5, Some(b"text/event-stream"), true));
    f.extend(headers(7, Some(b"text/event-stream"), false));
    f.extend(data(7, b"", true));
    assert_eq!(r.receive(t5, &f), Step::Continue);
    assert_eq!(r.done().len(), 4);
    assert_eq!(counts(&r.stats.stream), [1, 3, 0, 0, 0, 0, 0]);
}

#[test]
fn a_reset_mid_stream_cuts_it_and_counts_the_error() {
    let mut r = open(2, Choice::Fixed(Format::Sse));
    let t5 = r.at(ms(5));
    let mut f = headers(1, None, false);
    f.extend(data(1, b"data: a\n\ndata: b", false));
    frame::put_rst_stream(&mut f, 1, code::PROTOCOL_ERROR);
    // A reset before any DATA still cuts a stream whose reply began.
    f.extend(headers(3, None, false));
    frame::put_rst_stream(&mut f, 3, code::CANCEL);
    assert_eq!(r.receive(t5, &f), Step::Continue);
    let statuses: Vec<u16> = r.done().iter().map(|d| d.1).collect();
    assert_eq!(statuses, [0, 0]);
    assert_eq!(counts(&r.stats.stream), [2, 1, 0, 2, 1, 0, 0]);
    assert_eq!(r.stats.errors[ErrorKind::Other.index()], 2);
    assert_eq!(r.stats.http2.streams_reset, 2);
}

#[test]
fn events_after_done_are_counted_apart_and_the_stream_ends_at_done() {
    let mut r = open(1, Choice::Fixed(Format::Sse));
    let (t5, t8, t20) = (r.at(ms(5)), r.at(ms(8)), r.at(ms(20)));
    let mut f = headers(1, None, false);
    f.extend(data(1, b"data: a\n\n", false));
    r.receive(t5, &f);
    r.receive(t8, &data(1, b"data: [DONE]\n\n", false));
    r.receive(t20, &data(1, b"data: late\n\ndata: later\n\n", true));
    assert_eq!(r.done().len(), 1);
    let s = &r.stats.stream;
    assert_eq!(counts(s), [1, 1, 1, 0, 0, 2, 0]);
    assert_eq!(
        s.duration_sum_us, 3_000,
        "first event (5 ms) to [DONE] (8 ms)"
    );
}

#[test]
fn the_connections_end_cuts_open_streams_and_the_runs_stop_leaves_them_open() {
    // The server closes the connection inside a stream.
    let mut r = open(1, Choice::Fixed(Format::Ndjson));
    let t5 = r.at(ms(5));
    let mut f = headers(1, None, false);
    f.extend(data(1, b"{}\n{\"a\":", false));
    r.mem().feed(&f);
    r.mem().input.push_back(Input::Eof);
    assert_eq!(r.readable(t5, true), Step::Fail(ErrorKind::ConnReset));
    r.conn.end_stream(t5, false, &mut r.stats);
    assert_eq!(counts(&r.stats.stream), [1, 1, 0, 1, 0, 0, 0]);

    // A GOAWAY with an error fails the connection: its open streams are cut.
    let mut r = open(2, Choice::Fixed(Format::Lines));
    let mut f = headers(1, None, false);
    f.extend(data(1, b"x\n", false));
    f.extend(headers(3, None, false));
    frame::put_goaway(&mut f, 3, code::PROTOCOL_ERROR);
    assert_eq!(r.receive(t5, &f), Step::Fail(ErrorKind::Other));
    r.conn.end_stream(t5, false, &mut r.stats);
    assert_eq!(counts(&r.stats.stream), [2, 1, 0, 2, 1, 0, 0]);

    // The run stops with a stream open: open at the end, not cut; ended once.
    let mut r = open(1, Choice::Fixed(Format::Lines));
    let mut f = headers(1, None, false);
    f.extend(data(1, b"x\ny\n", false));
    r.receive(t5, &f);
    r.conn.end_stream(t5, true, &mut r.stats);
    r.conn.end_stream(t5, false, &mut r.stats);
    assert_eq!(counts(&r.stats.stream), [1, 2, 0, 0, 0, 0, 1]);
}

#[test]
fn the_reply_watchdog_waits_for_the_next_data_not_the_whole_stream() {
    let mut r = open(1, Choice::Fixed(Format::Sse));
    let mut at: Instant = r.at(ms(5));
    r.receive(at, &headers(1, None, false));
    // An event every second for longer than the timeout: each DATA moves it on.
    for _ in 0..10 {
        at += ms(1000);
        assert_eq!(
            r.receive(at, &data(1, b"data: t\n\n", false)),
            Step::Continue
        );
        assert_eq!(r.conn.deadline(), Some(at + REPLY_TIMEOUT));
    }
    at += ms(10);
    r.receive(at, &data(1, b"data: [DONE]\n\n", true));
    assert_eq!(r.done().len(), 1);
    assert_eq!(counts(&r.stats.stream), [1, 10, 1, 0, 0, 0, 0]);
    assert_eq!(r.stats.errors.iter().sum::<u64>(), 0);
}

#[test]
fn each_stream_whose_status_came_marks_its_call_as_begun() {
    let mut r = open(4, Choice::Fixed(Format::Sse));
    let t5 = r.at(ms(5));
    // Streams 1 and 5 are answering (one event, then silence), 3 and 7 never
    // answered.
    let mut f = headers(1, None, false);
    f.extend(headers(5, None, false));
    f.extend(data(5, b"data: a\n\n", false));
    assert_eq!(r.receive(t5, &f), Step::Continue);
    assert!(r.done().is_empty());
    r.conn.end_stream(t5, true, &mut r.stats);
    let mut left: Vec<(u32, bool)> = r.close().iter().map(|c| (c.stream, c.begun)).collect();
    left.sort_unstable();
    assert_eq!(left, [(1, true), (3, false), (5, true), (7, false)]);
    assert_eq!(counts(&r.stats.stream), [2, 1, 0, 0, 0, 0, 2]);
}
