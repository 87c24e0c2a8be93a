//! Unit tests of HTTP/2 stream scheduling on one connection, driven through the
//! socket seam (`transport::Mem`) on simulated time: calls wait for the server's
//! SETTINGS, streams in flight never exceed its SETTINGS_MAX_CONCURRENT_STREAMS, an
//! answered stream lets the next queued call open at once, refused streams and
//! GOAWAY put calls back in order, and the reply watchdog follows the streams.

use crate::engine::conn::tests::{ms, Rig};
use crate::engine::conn::{ErrorKind, Step};
use crate::wire::http2::frame::{self, code, flag, kind, setting, Head, HEAD};
use crate::wire::http2::hpack;

/// The server's SETTINGS with this stream limit.
pub(super) fn settings(max_streams: u32) -> Vec<u8> {
    let mut out = Vec::new();
    frame::put_settings(&mut out, &[(setting::MAX_CONCURRENT_STREAMS, max_streams)]);
    out
}

/// A complete reply on `stream`: HEADERS `:status` 200, then DATA "ok".
fn answer(stream: u32) -> Vec<u8> {
    let mut block = Vec::new();
    // Static table entry 8 is `:status: 200`.
    hpack::put_indexed(&mut block, 8);
    let mut out = Vec::new();
    frame::put_head(
        &mut out,
        block.len(),
        kind::HEADERS,
        flag::END_HEADERS,
        stream,
    );
    out.extend_from_slice(&block);
    frame::put_head(&mut out, 2, kind::DATA, flag::END_STREAM, stream);
    out.extend_from_slice(b"ok");
    out
}

/// The ids of the streams whose HEADERS the client wrote in `bytes`.
fn opened(bytes: &[u8]) -> Vec<u32> {
    let mut rest = bytes.strip_prefix(frame::PREFACE).unwrap_or(bytes);
    let mut ids = Vec::new();
    while rest.len() >= HEAD {
        let head = Head::parse(rest[..HEAD].try_into().expect("9 bytes"));
        if head.kind == kind::HEADERS {
            ids.push(head.stream);
        }
        rest = &rest[(HEAD + head.len as usize).min(rest.len())..];
    }
    ids
}

/// A connected HTTP/2 rig with `n` calls queued at 1 ms and the preface written.
pub(super) fn rig_with_calls(n: usize) -> Rig {
    let mut r = Rig::new(true);
    let t1 = r.at(ms(1));
    r.connect(t1);
    for _ in 0..n {
        r.issue(t1);
    }
    r.writable(t1);
    r
}

/// Writes what the connection has queued at `now`; returns the streams it opened.
pub(super) fn flush(r: &mut Rig, now: std::time::Instant) -> Vec<u32> {
    assert_eq!(r.writable(now), Step::Continue);
    let bytes = r.mem().take_written();
    opened(&bytes)
}

#[test]
fn calls_wait_for_the_settings_then_fill_the_stream_limit() {
    let mut r = rig_with_calls(5);
    let t1 = r.at(ms(1));
    assert!(
        opened(&r.mem().take_written()).is_empty(),
        "no stream before the server's SETTINGS"
    );
    assert_eq!(r.conn.in_flight_h2(), 0);
    assert_eq!(r.conn.outstanding(), 5);
    // SETTINGS must come within the reply timeout of the connect.
    assert_eq!(r.conn.deadline(), Some(t1 + ms(3000)));
    let t2 = r.at(ms(2));
    assert_eq!(r.receive(t2, &settings(2)), Step::Continue);
    assert_eq!(flush(&mut r, t2), [1, 3]);
    assert_eq!(r.conn.in_flight_h2(), 2);
    assert!(!r.conn.has_room(100), "at the server's limit");
    // Each answer lets exactly one queued call open a stream, in order.
    let t3 = r.at(ms(3));
    r.receive(t3, &answer(1));
    assert_eq!(r.done(), [(0, 200, t3)]);
    assert_eq!(flush(&mut r, t3), [5]);
    let t4 = r.at(ms(4));
    let mut both = answer(3);
    both.extend(answer(5));
    r.receive(t4, &both);
    assert_eq!(r.done(), [(1, 200, t4), (2, 200, t4)]);
    assert_eq!(flush(&mut r, t4), [7, 9]);
    r.receive(r.at(ms(5)), &[answer(7), answer(9)].concat());
    assert_eq!(r.done().len(), 2);
    assert_eq!(r.conn.outstanding(), 0);
    assert!(r.conn.has_room(100));
    assert_eq!(r.conn.deadline(), None, "nothing in flight: no watchdog");
}

#[test]
fn a_larger_limit_opens_every_queued_call_at_once() {
    let mut r = rig_with_calls(4);
    r.mem().take_written();
    let t2 = r.at(ms(2));
    r.receive(t2, &settings(100));
    assert_eq!(flush(&mut r, t2), [1, 3, 5, 7]);
    // A call queued now gets a stream at once.
    assert!(r.conn.has_room(100));
    r.issue(t2);
    assert_eq!(flush(&mut r, t2), [9]);
}

#[test]
fn a_refused_stream_goes_back_to_the_front_of_the_queue() {
    let mut r = rig_with_calls(3);
    r.mem().take_written();
    let t2 = r.at(ms(2));
    r.receive(t2, &settings(2));
    assert_eq!(flush(&mut r, t2), [1, 3]);
    let mut rst = Vec::new();
    frame::put_rst_stream(&mut rst, 1, code::REFUSED_STREAM);
    let t3 = r.at(ms(3));
    r.receive(t3, &rst);
    assert!(r.done().is_empty(), "a refusal is not an answer");
    // Call 0 is sent again before call 2, on a new stream.
    assert_eq!(flush(&mut r, t3), [5]);
    let t4 = r.at(ms(4));
    r.receive(t4, &[answer(5), answer(3)].concat());
    assert_eq!(r.done(), [(0, 200, t4), (1, 200, t4)]);
    assert_eq!(flush(&mut r, t4), [7]);
    // A stream reset for another reason fails its call (status 0).
    let mut cancel = Vec::new();
    frame::put_rst_stream(&mut cancel, 7, code::CANCEL);
    r.receive(r.at(ms(5)), &cancel);
    assert_eq!(
        r.done().iter().map(|d| (d.0, d.1)).collect::<Vec<_>>(),
        [(2, 0)]
    );
}

#[test]
fn goaway_closes_once_the_taken_streams_are_answered() {
    let mut r = rig_with_calls(4);
    r.mem().take_written();
    let t2 = r.at(ms(2));
    r.receive(t2, &settings(2));
    assert_eq!(flush(&mut r, t2), [1, 3]);
    // The server takes stream 1 only.
    let mut goaway = Vec::new();
    frame::put_goaway(&mut goaway, 1, code::NO_ERROR);
    let t3 = r.at(ms(3));
    assert_eq!(r.receive(t3, &goaway), Step::Continue);
    assert!(r.conn.closing);
    assert!(flush(&mut r, t3).is_empty(), "no new stream after GOAWAY");
    assert_eq!(r.receive(r.at(ms(4)), &answer(1)), Step::Close);
    // The three calls it did not answer go to a new connection, in order.
    let left: Vec<u64> = r.conn.drain_calls().map(|c| c.id).collect();
    assert_eq!(left, [1, 2, 3]);
}

#[test]
fn the_reply_watchdog_restarts_with_progress_and_stops_when_idle() {
    let mut r = rig_with_calls(2);
    r.mem().take_written();
    let t2 = r.at(ms(2));
    r.receive(t2, &settings(10));
    flush(&mut r, t2);
    let reply_timeout = ms(3000);
    // SETTINGS are no stream progress: the deadline set at the connect still runs.
    assert_eq!(r.conn.deadline(), Some(r.at(ms(1)) + reply_timeout));
    // A completed stream is progress: the watchdog restarts for the other.
    let t500 = r.at(ms(500));
    r.receive(t500, &answer(1));
    assert_eq!(r.conn.deadline(), Some(t500 + reply_timeout));
    // A server that closes with a stream in flight resets the connection.
    r.mem().input.push_back(super::super::transport::Input::Eof);
    let step = r.readable(r.at(ms(600)), true);
    assert_eq!(step, Step::Fail(ErrorKind::ConnReset));
}

#[test]
fn a_malformed_frame_or_an_http1_answer_fails_the_connection_when_it_comes() {
    // A SETTINGS frame whose length is not a multiple of 6: a protocol error, failed
    // at the moment it arrives (not by the watchdog).
    let mut r = rig_with_calls(1);
    let mut bad = Vec::new();
    frame::put_head(&mut bad, 5, kind::SETTINGS, 0, 0);
    bad.extend_from_slice(&[0, 3, 0, 0, 0]);
    let t2 = r.at(ms(2));
    assert_eq!(r.receive(t2, &bad), Step::Fail(ErrorKind::Other));
    assert_eq!(r.stats.http2.protocol_errors, 1);
    // DATA on a stream never opened.
    let mut r = rig_with_calls(1);
    let mut f = settings(10);
    frame::put_head(&mut f, 1, kind::DATA, flag::END_STREAM, 7);
    f.push(b'x');
    assert_eq!(r.receive(t2, &f), Step::Fail(ErrorKind::Other));
    // An HTTP/1.1 server answering the preface.
    let mut r = rig_with_calls(1);
    let h1 = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(r.receive(t2, h1), Step::Fail(ErrorKind::Other));
}

#[test]
fn goaway_mid_stream_then_close_resets_the_connection() {
    let mut r = rig_with_calls(1);
    let t2 = r.at(ms(2));
    r.receive(t2, &settings(10));
    assert_eq!(flush(&mut r, t2), [1]);
    let mut block = Vec::new();
    hpack::put_indexed(&mut block, 8);
    let mut f = Vec::new();
    frame::put_head(&mut f, block.len(), kind::HEADERS, flag::END_HEADERS, 1);
    f.extend_from_slice(&block);
    frame::put_head(&mut f, 3, kind::DATA, 0, 1);
    f.extend_from_slice(b"abc");
    frame::put_goaway(&mut f, 1, code::NO_ERROR);
    r.mem().feed(&f);
    r.mem()
        .input
        .push_back(crate::engine::conn::transport::Input::Eof);
    let step = r.readable(r.at(ms(3)), true);
    assert_eq!(step, Step::Fail(ErrorKind::ConnReset));
    assert_eq!(r.stats.http2.goaways, 1);
    assert!(r.done().is_empty());
}
