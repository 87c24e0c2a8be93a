//! Unit tests of a connection's buffers and the engine's pool, through the socket
//! seam (`transport::Mem`): a closed connection's buffers serve the slot's next
//! connection, an idle HTTP/1.x connection holds none, and nothing one connection
//! rendered or negotiated reaches the next (request bytes, HPACK state).

use super::tests::{ms, reply, Rig};
use super::*;
use crate::model::call::{Body, RequestParts, Requests};
use crate::wire::http2::frame::{self, setting};

/// Requests for `uri` (GET, HTTP/1.1).
fn requests(uri: &str) -> Requests {
    Requests::from_parts(RequestParts {
        method: "GET".into(),
        uri: uri.into(),
        head: b" HTTP/1.1\r\n".to_vec(),
        tail: Vec::new(),
        body: Body::from(&b""[..]),
        send_host: true,
    })
}

#[test]
fn the_next_connection_gets_the_closed_ones_buffers() {
    let mut r = Rig::new(false);
    let t1 = r.at(ms(1));
    r.connect(t1);
    r.issue(t1);
    let (send, calls) = (
        r.conn.send.buf.as_ptr(),
        r.conn.calls.as_slices().0.as_ptr(),
    );
    assert_eq!(r.pool.send.out(), 1);
    r.writable(t1);
    assert_eq!(r.receive(r.at(ms(2)), &reply(200, 3)), Step::Continue);
    assert!(r.close().is_empty());
    assert_eq!((r.pool.send.idle(), r.pool.calls.idle()), (1, 1));
    assert_eq!(r.conn.send.buf.capacity(), 0, "a free slot holds no buffer");
    r.reopen(r.at(ms(3)), false);
    let t4 = r.at(ms(4));
    r.connect(t4);
    r.issue(t4);
    assert_eq!(r.conn.send.buf.as_ptr(), send, "the same send buffer");
    assert_eq!(
        r.conn.calls.as_slices().0.as_ptr(),
        calls,
        "the same call queue"
    );
    assert_eq!((r.pool.send.made(), r.pool.calls.made()), (1, 1));
}

#[test]
fn unwritten_bytes_of_a_failed_connection_never_reach_the_next() {
    let mut r = Rig::new(false);
    r.requests = requests("/secret-of-the-first");
    let t1 = r.at(ms(1));
    r.connect(t1);
    // Rendered, never written: the connection fails with its request in the buffer.
    let (id, _) = r.issue(t1);
    assert!(r.conn.send.pending());
    let left: Vec<u64> = r.close().iter().map(|c| c.id).collect();
    assert_eq!(left, [id]);
    r.requests = requests("/2");
    r.reopen(r.at(ms(2)), false);
    let t3 = r.at(ms(3));
    r.connect(t3);
    let (_, len) = r.issue(t3);
    assert_eq!(r.pool.send.made(), 1, "the first connection's buffer");
    r.writable(t3);
    let written = r.mem().take_written();
    assert_eq!(written, b"GET /2 HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(written.len(), len);
}

#[test]
fn an_idle_connection_parks_its_buffers_and_takes_them_back_for_its_next_call() {
    let mut r = Rig::new(false);
    let t1 = r.at(ms(1));
    r.connect(t1);
    r.issue(t1);
    let send = r.conn.send.buf.as_ptr();
    assert!(!r.conn.park(&mut r.pool), "a call is queued");
    r.writable(t1);
    assert!(!r.conn.park(&mut r.pool), "a call awaits its reply");
    assert_eq!(r.receive(r.at(ms(2)), &reply(200, 0)), Step::Continue);
    assert!(r.conn.park(&mut r.pool), "idle");
    assert_eq!(r.conn.send.buf.capacity(), 0);
    assert_eq!(r.conn.calls.capacity(), 0);
    assert_eq!((r.pool.send.idle(), r.pool.send.out()), (1, 0));
    // Think time over: the next call of the session takes them again.
    let t3 = r.at(ms(3));
    r.issue(t3);
    assert_eq!(r.conn.send.buf.as_ptr(), send);
    r.writable(t3);
    assert_eq!(r.receive(r.at(ms(4)), &reply(200, 0)), Step::Continue);
    assert_eq!(r.conn.replies, 2);
    assert_eq!(r.pool.send.made(), 1);
}

#[test]
fn an_http2_side_is_reused_with_fresh_hpack_state() {
    let mut settings = Vec::new();
    frame::put_settings(&mut settings, &[(setting::MAX_CONCURRENT_STREAMS, 8)]);
    let mut first = Vec::new();
    let mut sides = Vec::new();
    let mut r = Rig::new(true);
    for round in 0..2 {
        let t = r.at(ms(10 * round + 1));
        r.connect(t);
        r.mem().feed(&settings);
        r.readable(t, false);
        r.issue(t);
        r.issue(t);
        r.writable(t);
        let written = r.mem().take_written();
        sides.push(r.conn.h2.as_deref().map(std::ptr::from_ref));
        if round == 0 {
            first = written;
            assert_eq!(r.close().len(), 2);
            assert_eq!(r.pool.h2.idle(), 1);
            r.reopen(r.at(ms(10)), true);
        } else {
            // The same bytes: a header block indexed against the first connection's
            // HPACK table would be shorter.
            assert_eq!(written, first);
        }
    }
    assert!(sides[0].is_some());
    assert_eq!(sides[0], sides[1], "the same HTTP/2 side");
    assert_eq!(r.pool.h2.made(), 1);
}
