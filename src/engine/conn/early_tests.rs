//! Unit tests of a reply that arrives while its request body is still being written,
//! driven through the socket seam (`transport::Mem`) on simulated time. HTTP/1.x: the
//! rest of the body is written before the next call starts (the server never reads
//! our next request as body bytes), a closing reply ends the connection instead, a
//! watchdog on an owed body closes without an error, and at every split of the reply
//! requests never fall behind replies. HTTP/2: the stream is reset with NO_ERROR and
//! none of its DATA follows.

use std::time::Instant;

use super::tests::{ms, reply, Rig};
use super::*;
use crate::model::call::CallRef;
use crate::wire::http2::frame::{self, code, flag, kind, setting, Head, HEAD};
use crate::wire::http2::hpack;

/// Request body size: larger than `send::SHARE_ABOVE`, so shared as `--body-file` is.
const BODY: usize = 100_000;

fn body() -> Vec<u8> {
    (0..BODY).map(|i| (i % 251) as u8).collect()
}

/// A connected HTTP/1.1 rig POSTing `body()`, with `calls` calls queued at 1 ms and
/// the first `room` bytes written; returns it, the expected byte stream of all its
/// calls, and the header block length.
fn posting(calls: usize, room: usize) -> (Rig, Vec<u8>, usize) {
    let mut r = Rig::with_body(false, &body());
    let t1 = r.at(ms(1));
    r.connect(t1);
    for _ in 0..calls {
        r.issue(t1);
    }
    let mut one = Vec::new();
    let (_, head_len) = r.requests.render(CallRef::Fixed, "h", None, &mut one);
    r.mem().room = Some(room);
    assert_eq!(r.writable(t1), Step::Continue);
    (r, one.repeat(calls), head_len)
}

/// Requests and replies counted so far.
fn counted(r: &Rig) -> (u64, u64) {
    let s = &r.stats;
    (s.requests, s.replies_by_class.iter().sum())
}

#[test]
fn a_reply_mid_body_lets_the_body_finish_before_the_next_call_starts() {
    let (mut r, want, head_len) = posting(2, 0);
    r.mem().room = Some(head_len + 10);
    let t1 = r.at(ms(1));
    r.writable(t1);
    assert_eq!(counted(&r), (1, 0), "the head is written: one request");
    let t2 = r.at(ms(5));
    assert_eq!(r.receive(t2, &reply(200, 0)), Step::Continue);
    assert_eq!(r.done(), [(0, 200, t2)]);
    assert_eq!(counted(&r), (1, 1));
    // The body goes on; the second call has not started.
    r.mem().room = Some(1000);
    let t3 = r.at(ms(6));
    r.writable(t3);
    assert_eq!(counted(&r), (1, 1));
    assert_eq!(r.conn.calls.front().map(|c| c.send_start), Some(t1));
    // The rest of the body, then the second call, whose send starts when the body
    // is out.
    r.mem().room = None;
    let t4 = r.at(ms(7));
    r.writable(t4);
    assert_eq!(
        r.mem().written,
        want,
        "exactly two whole requests, in order"
    );
    assert_eq!(counted(&r), (2, 1));
    assert_eq!(r.conn.calls.front().map(|c| c.send_start), Some(t4));
    assert_eq!(r.stats.request_bytes, want.len() as u64);
    let t5 = r.at(ms(9));
    assert_eq!(r.receive(t5, &reply(201, 0)), Step::Continue);
    assert_eq!(r.done(), [(1, 201, t5)]);
    assert_eq!(counted(&r), (2, 2));
    assert_eq!(r.conn.outstanding(), 0);
}

#[test]
fn a_reply_after_the_body_changes_nothing() {
    let (mut r, want, _) = posting(2, usize::MAX);
    assert_eq!(r.mem().written, want);
    assert_eq!(counted(&r), (2, 0));
    let mut both = reply(200, 3);
    both.extend(reply(200, 0));
    let t2 = r.at(ms(4));
    assert_eq!(r.receive(t2, &both), Step::Continue);
    assert_eq!(r.done(), [(0, 200, t2), (1, 200, t2)]);
    assert_eq!(counted(&r), (2, 2));
    assert!(!r.conn.wants_write());
}

#[test]
fn a_closing_reply_mid_body_ends_the_connection_without_the_rest() {
    let (mut r, _, head_len) = posting(2, 0);
    r.mem().room = Some(head_len + 10);
    r.writable(r.at(ms(1)));
    let close = b"HTTP/1.1 413 Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    let t2 = r.at(ms(3));
    assert_eq!(r.receive(t2, close), Step::Close);
    assert_eq!(r.done(), [(0, 413, t2)]);
    assert_eq!(counted(&r), (1, 1));
    assert!(r.conn.closing && !r.conn.has_room(8));
    // The second call never started: it goes back to the workload.
    assert_eq!(r.conn.drain_calls().count(), 1);
    assert_eq!(r.mem().written.len(), head_len + 10);
}

#[test]
fn a_reply_split_at_every_byte_mid_body_completes_once_and_keeps_step() {
    let whole = reply(200, 7);
    let line = whole
        .iter()
        .position(|&b| b == b'\n')
        .expect("a status line")
        + 1;
    for cut in 1..whole.len() {
        let (mut r, want, head_len) = posting(2, 0);
        r.mem().room = Some(head_len + 3);
        r.writable(r.at(ms(1)));
        let (t2, t3) = (r.at(ms(2)), r.at(ms(3)));
        assert_eq!(r.receive(t2, &whole[..cut]), Step::Continue, "cut {cut}");
        assert!(r.done().is_empty(), "cut {cut}");
        // Writing may go on between the two halves.
        r.mem().room = Some(500);
        r.writable(t2);
        assert_eq!(r.receive(t3, &whole[cut..]), Step::Continue, "cut {cut}");
        let first = if cut >= line { t2 } else { t3 };
        assert_eq!(r.done(), [(0, 200, first)], "cut {cut}");
        let (requests, replies) = counted(&r);
        assert!(requests >= replies, "cut {cut}");
        r.mem().room = None;
        r.writable(t3);
        assert_eq!(r.mem().written, want, "cut {cut}");
        assert_eq!(counted(&r), (2, 1), "cut {cut}");
    }
}

#[test]
fn a_call_counts_as_a_request_once_its_head_is_written() {
    let (mut r, _, head_len) = posting(1, 0);
    r.mem().room = Some(head_len - 1);
    r.writable(r.at(ms(1)));
    assert_eq!(counted(&r), (0, 0));
    r.mem().room = Some(1);
    r.writable(r.at(ms(2)));
    assert_eq!(counted(&r), (1, 0));
    r.mem().room = None;
    r.writable(r.at(ms(3)));
    assert_eq!(counted(&r), (1, 0), "counted once");
    assert_eq!(r.stats.request_bytes, (head_len + BODY) as u64);
}

#[test]
fn an_owed_body_that_stalls_closes_without_an_error() {
    let (mut r, _, head_len) = posting(2, 0);
    r.mem().room = Some(head_len + 10);
    let t1 = r.at(ms(1));
    r.writable(t1);
    assert_eq!(
        r.conn.timed_out(),
        Some(ErrorKind::ClientTimo),
        "no reply yet"
    );
    r.receive(r.at(ms(2)), &reply(200, 0));
    // The server stops reading: the send watchdog runs from the last progress, and
    // when it fires the connection closes normally (the reply is in).
    r.mem().room = Some(0);
    r.writable(r.at(ms(3)));
    assert_eq!(r.conn.deadline(), Some(t1 + Duration::from_secs(2)));
    assert_eq!(r.conn.timed_out(), None);
}

#[test]
fn bytes_while_a_body_is_owed_fail_the_connection() {
    let (mut r, _, head_len) = posting(2, 0);
    r.mem().room = Some(head_len + 10);
    r.writable(r.at(ms(1)));
    // Two replies, but the second call's head was never written.
    let mut two = reply(200, 0);
    two.extend(reply(200, 0));
    assert_eq!(r.receive(r.at(ms(2)), &two), Step::Fail(ErrorKind::Other));
    assert_eq!(r.done().len(), 1);
    assert_eq!(counted(&r), (1, 1));
}

/// The frames in `bytes` (after the preface, if any): (kind, stream, flags, payload).
fn frames(bytes: &[u8]) -> Vec<(u8, u32, u8, Vec<u8>)> {
    let mut rest = bytes.strip_prefix(frame::PREFACE).unwrap_or(bytes);
    let mut out = Vec::new();
    while rest.len() >= HEAD {
        let head = Head::parse(rest[..HEAD].try_into().expect("9 bytes"));
        let end = (HEAD + head.len as usize).min(rest.len());
        out.push((head.kind, head.stream, head.flags, rest[HEAD..end].to_vec()));
        rest = &rest[end..];
    }
    out
}

/// Writes what is queued at `now` and returns its frames.
fn flush(r: &mut Rig, now: Instant) -> Vec<(u8, u32, u8, Vec<u8>)> {
    assert_eq!(r.writable(now), Step::Continue);
    frames(&r.mem().take_written())
}

#[test]
fn an_http2_reply_before_the_end_of_the_body_resets_the_stream_with_no_error() {
    let mut r = Rig::with_body(true, &body());
    let t1 = r.at(ms(1));
    r.connect(t1);
    r.issue(t1);
    flush(&mut r, t1);
    let mut server = Vec::new();
    frame::put_settings(&mut server, &[(setting::MAX_CONCURRENT_STREAMS, 10)]);
    let t2 = r.at(ms(2));
    assert_eq!(r.receive(t2, &server), Step::Continue);
    // The default windows (65,535) hold back the rest of the body.
    let sent = flush(&mut r, t2);
    let data: usize = sent
        .iter()
        .filter(|f| f.0 == kind::DATA && f.1 == 1)
        .map(|f| f.3.len())
        .sum();
    assert_eq!(data, 65_535);
    assert!(sent
        .iter()
        .all(|f| f.2 & flag::END_STREAM == 0 || f.0 != kind::DATA));
    assert_eq!(counted(&r), (1, 0));
    // The server answers at once.
    let mut block = Vec::new();
    hpack::put_indexed(&mut block, 8);
    let mut answer = Vec::new();
    frame::put_head(
        &mut answer,
        block.len(),
        kind::HEADERS,
        flag::END_HEADERS | flag::END_STREAM,
        1,
    );
    answer.extend_from_slice(&block);
    let t3 = r.at(ms(3));
    assert_eq!(r.receive(t3, &answer), Step::Continue);
    assert_eq!(r.done(), [(0, 200, t3)]);
    assert_eq!(counted(&r), (1, 1));
    let rst = flush(&mut r, t3);
    assert_eq!(
        rst,
        [(
            kind::RST_STREAM,
            1,
            0,
            code::NO_ERROR.to_be_bytes().to_vec()
        )]
    );
    // Windows open: nothing more of stream 1.
    let mut windows = Vec::new();
    frame::put_window_update(&mut windows, 0, 1 << 20);
    frame::put_window_update(&mut windows, 1, 1 << 20);
    assert_eq!(r.receive(r.at(ms(4)), &windows), Step::Continue);
    assert!(!r.conn.wants_write(), "no DATA after the reset");
    assert_eq!(r.conn.outstanding(), 0);
}
