//! Unit tests of the HTTP/1.x connection machine, driven through the socket seam
//! (`transport::Mem`) on simulated time: reply matching, pipelining, what ends a
//! connection and when, and the watchdog deadlines (`--timeout`, `--think-timeout`).
//! No socket, no sleep: every `now` is `t0` plus a chosen offset.

use std::time::{Duration, Instant};

use mio::Token;

use super::transport::{Input, Mem};
use super::*;
use crate::model::call::{Body, CallRef, RequestParts, Requests};

/// `--timeout` of the tests.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(2);
/// `--timeout` + `--think-timeout` of the tests.
pub(crate) const REPLY_TIMEOUT: Duration = Duration::from_secs(3);

/// A `Ctx` lending a rig's statistics and completions, with the tests' timeouts.
pub(crate) fn rig_ctx<'a>(stats: &'a mut Stats, completions: &'a mut Vec<Completion>) -> Ctx<'a> {
    Ctx {
        stats,
        timeout: Some(TIMEOUT),
        reply_timeout: Some(REPLY_TIMEOUT),
        debug: 0,
        completions,
        observer: None,
        stream: None,
    }
}

pub(crate) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A reply with status `status` and a body of `n` bytes.
pub(crate) fn reply(status: u16, n: usize) -> Vec<u8> {
    let mut r = format!("HTTP/1.1 {status} X\r\nContent-Length: {n}\r\n\r\n").into_bytes();
    r.extend(std::iter::repeat_n(b'a', n));
    r
}

/// A connection on a `Mem` transport, its engine-side state, and the clock.
pub(crate) struct Rig {
    pub(crate) conn: Conn<Mem>,
    pub(crate) stats: Stats,
    pub(crate) completions: Vec<Completion>,
    pub(crate) requests: Requests,
    pub(crate) t0: Instant,
    pub(crate) buf: Vec<u8>,
    /// The engine's buffer pool.
    pub(crate) pool: BufPool,
    /// `--stream` of the rig's run (None: without it).
    pub(crate) stream: Option<StreamSetup>,
    next_id: u64,
}

impl Rig {
    /// A connection that started connecting at `t0` (HTTP/2 if `http2`).
    pub(crate) fn new(http2: bool) -> Rig {
        Rig::with_body(http2, &[])
    }

    /// Like `new`, its calls POST `body` (with its `Content-Length`; shared by
    /// reference when large, as `--body-file` is).
    pub(crate) fn with_body(http2: bool, body: &[u8]) -> Rig {
        let t0 = Instant::now();
        let id = ConnId::from_token(Token(0));
        let mut pool = BufPool::new();
        let mut conn = Conn::new(id, t0);
        conn.reset(id, t0, Owner::Orphan, Some(TIMEOUT), http2, &mut pool);
        conn.stream = Some(Mem::new());
        Rig {
            conn,
            stats: Stats::new(),
            completions: Vec::new(),
            requests: Requests::from_parts(RequestParts {
                method: if body.is_empty() { "GET" } else { "POST" }.into(),
                uri: "/".into(),
                head: b" HTTP/1.1\r\n".to_vec(),
                tail: if body.is_empty() {
                    Vec::new()
                } else {
                    format!("Content-Length: {}\r\n", body.len()).into_bytes()
                },
                body: Body::from(body),
                send_host: true,
            }),
            t0,
            buf: vec![0; 64 * 1024],
            pool,
            stream: None,
            next_id: 0,
        }
    }

    /// `t0` + `d`.
    pub(crate) fn at(&self, d: Duration) -> Instant {
        self.t0 + d
    }

    /// The transport.
    pub(crate) fn mem(&mut self) -> &mut Mem {
        self.conn.stream.as_mut().expect("the rig's transport")
    }

    /// Runs `f` with the connection and a `Ctx` lending the rig's statistics.
    pub(crate) fn with<R>(&mut self, f: impl FnOnce(&mut Conn<Mem>, &mut Ctx<'_>) -> R) -> R {
        let mut ctx = rig_ctx(&mut self.stats, &mut self.completions);
        ctx.stream = self.stream;
        f(&mut self.conn, &mut ctx)
    }

    /// The connect completes at `now`.
    pub(crate) fn connect(&mut self, now: Instant) {
        let r = self.with(|c, ctx| c.on_connect_ready(now, ctx));
        assert_eq!(r, Ok(true));
    }

    /// Queues a call of the fixed request at `now` (as `Engine::issue` does); returns
    /// its id and request length.
    pub(crate) fn issue(&mut self, now: Instant) -> (u64, usize) {
        let id = self.next_id;
        self.next_id += 1;
        self.conn.lend(&mut self.pool);
        let (len, head_len) = if self.conn.is_h2() {
            self.conn
                .stage_h2(&self.requests, CallRef::Fixed, "h", None)
        } else {
            let q = self.conn.send_queue();
            self.requests.render(CallRef::Fixed, "h", None, q)
        };
        let call = Call {
            id,
            what: CallRef::Fixed,
            len,
            head_len,
            head: false,
            send_start: now,
            written: None,
            due: now,
            retries: 0,
            stream: 0,
            sent: 0,
            begun: false,
        };
        self.conn.queue(call, now, Some(TIMEOUT));
        (id, len)
    }

    /// The socket is writable at `now`.
    pub(crate) fn writable(&mut self, now: Instant) -> Step {
        self.with(|c, ctx| c.on_writable(now, ctx))
    }

    /// The socket is readable at `now` (`closed`: the event also says the peer
    /// closed).
    pub(crate) fn readable(&mut self, now: Instant, closed: bool) -> Step {
        let mut buf = std::mem::take(&mut self.buf);
        let step = self.with(|c, ctx| c.on_readable(now, &mut buf, closed, ctx));
        self.buf = buf;
        step
    }

    /// `bytes` arrive at `now` (one readiness event).
    pub(crate) fn receive(&mut self, now: Instant, bytes: &[u8]) -> Step {
        self.mem().feed(bytes);
        self.readable(now, false)
    }

    /// Closes the connection as the engine does (`finish`): its calls drained, its
    /// buffers back in the pool; returns the unanswered calls.
    pub(crate) fn close(&mut self) -> Vec<Call> {
        let left: Vec<Call> = self.conn.drain_calls().collect();
        self.conn.stream = None;
        self.conn.release(&mut self.pool);
        left
    }

    /// The slot's next connection (HTTP/2 if `http2`) starts connecting at `now`.
    pub(crate) fn reopen(&mut self, now: Instant, http2: bool) {
        let id = self.conn.id;
        self.conn
            .reset(id, now, Owner::Orphan, Some(TIMEOUT), http2, &mut self.pool);
        self.conn.stream = Some(Mem::new());
    }

    /// (call id, status, first-byte time) of the completions so far, taken.
    pub(crate) fn done(&mut self) -> Vec<(u64, u16, Instant)> {
        self.completions
            .drain(..)
            .map(|c| (c.call.id, c.status, c.first_byte))
            .collect()
    }
}

#[test]
fn pipelined_calls_leave_in_one_write_and_replies_match_in_order() {
    let mut r = Rig::new(false);
    let t1 = r.at(ms(1));
    r.connect(t1);
    let lens: Vec<usize> = (0..3).map(|_| r.issue(t1).1).collect();
    assert_eq!(r.writable(t1), Step::Continue);
    let written = r.mem().take_written();
    assert_eq!(r.mem().writes, 1, "one writev for the burst");
    assert_eq!(written.len(), lens.iter().sum::<usize>());
    assert_eq!(written.windows(4).filter(|w| w == b"GET ").count(), 3);
    assert!(written.starts_with(b"GET / HTTP/1.1\r\n"));
    let mut replies = reply(200, 5);
    replies.extend(reply(404, 0));
    replies.extend(reply(503, 17));
    let t2 = r.at(ms(7));
    assert_eq!(r.receive(t2, &replies), Step::Continue);
    assert_eq!(r.done(), [(0, 200, t2), (1, 404, t2), (2, 503, t2)]);
    assert_eq!((r.conn.replies, r.conn.outstanding()), (3, 0));
    assert_eq!(r.conn.deadline(), None, "nothing outstanding: no watchdog");
}

#[test]
fn replies_split_at_every_byte_complete_once_and_in_order() {
    let mut all = reply(200, 3);
    all.extend(reply(201, 0));
    for cut in 1..all.len() {
        let mut r = Rig::new(false);
        let t1 = r.at(ms(1));
        r.connect(t1);
        r.issue(t1);
        r.issue(t1);
        r.writable(t1);
        let (t2, t3) = (r.at(ms(2)), r.at(ms(3)));
        assert_eq!(r.receive(t2, &all[..cut]), Step::Continue, "cut {cut}");
        assert_eq!(r.receive(t3, &all[cut..]), Step::Continue, "cut {cut}");
        let got: Vec<(u64, u16)> = r.done().iter().map(|d| (d.0, d.1)).collect();
        assert_eq!(got, [(0, 200), (1, 201)], "cut {cut}");
    }
}

#[test]
fn the_first_byte_time_is_when_the_status_line_arrived() {
    let mut r = Rig::new(false);
    let t1 = r.at(ms(1));
    r.connect(t1);
    r.issue(t1);
    r.writable(t1);
    let whole = reply(200, 10);
    let (t2, t3) = (r.at(ms(20)), r.at(ms(45)));
    r.receive(t2, &whole[..20]);
    r.receive(t3, &whole[20..]);
    assert_eq!(r.done(), [(0, 200, t2)]);
}

#[test]
fn a_connection_close_reply_ends_the_connection_after_it() {
    let mut r = Rig::new(false);
    let t1 = r.at(ms(1));
    r.connect(t1);
    r.issue(t1);
    r.issue(t1);
    r.writable(t1);
    let close = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    let mut bytes = close.to_vec();
    // What follows a closing reply is ignored (its call goes to a new connection).
    bytes.extend(reply(200, 0));
    assert_eq!(r.receive(r.at(ms(2)), &bytes), Step::Close);
    assert_eq!(r.done().len(), 1);
    assert!(r.conn.closing);
    assert!(!r.conn.has_room(8), "no new calls on a closing connection");
    assert_eq!(r.conn.drain_calls().count(), 1);
}

#[test]
fn bytes_beyond_the_reply_fail_the_connection_at_once() {
    let mut r = Rig::new(false);
    let t1 = r.at(ms(1));
    r.connect(t1);
    r.issue(t1);
    r.writable(t1);
    let mut bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec();
    bytes.extend_from_slice(b"EXTRA");
    // Failed when the bytes come, not by the watchdog.
    assert_eq!(r.receive(r.at(ms(2)), &bytes), Step::Fail(ErrorKind::Other));
    assert_eq!(r.done().len(), 1, "the reply itself completed");
    // Bytes with no call at all fail the same way.
    let mut idle = Rig::new(false);
    idle.connect(idle.at(ms(1)));
    let step = idle.receive(idle.at(ms(2)), &reply(200, 0));
    assert_eq!(step, Step::Fail(ErrorKind::Other));
    // So does a reply that is not HTTP.
    let mut junk = Rig::new(false);
    let t1 = junk.at(ms(1));
    junk.connect(t1);
    junk.issue(t1);
    junk.writable(t1);
    let step = junk.receive(junk.at(ms(2)), b"\x00\x01garbage\r\n\r\n");
    assert_eq!(step, Step::Fail(ErrorKind::Other));
}

#[test]
fn end_of_file_is_a_close_a_reset_or_the_end_of_a_reply() {
    // Nothing outstanding: the engine decides (the workload may still queue a call).
    let mut idle = Rig::new(false);
    idle.connect(idle.at(ms(1)));
    idle.mem().input.push_back(Input::Eof);
    assert_eq!(idle.readable(idle.at(ms(2)), true), Step::PeerClosed);
    // A call outstanding, no reply: connreset.
    let mut busy = Rig::new(false);
    let t1 = busy.at(ms(1));
    busy.connect(t1);
    busy.issue(t1);
    busy.writable(t1);
    busy.mem().input.push_back(Input::Eof);
    let step = busy.readable(busy.at(ms(2)), true);
    assert_eq!(step, Step::Fail(ErrorKind::ConnReset));
    // Mid-reply with a length: connreset too.
    let mut cut = Rig::new(false);
    let t1 = cut.at(ms(1));
    cut.connect(t1);
    cut.issue(t1);
    cut.writable(t1);
    cut.mem().feed(&reply(200, 10)[..30]);
    cut.mem().input.push_back(Input::Eof);
    let step = cut.readable(cut.at(ms(2)), true);
    assert_eq!(step, Step::Fail(ErrorKind::ConnReset));
    assert!(cut.done().is_empty());
    // A body without a length ends with the connection: a complete reply.
    let mut eof = Rig::new(false);
    let t1 = eof.at(ms(1));
    eof.connect(t1);
    eof.issue(t1);
    eof.writable(t1);
    eof.mem().feed(b"HTTP/1.0 200 OK\r\n\r\nbody until the end");
    eof.mem().input.push_back(Input::Eof);
    let t2 = eof.at(ms(2));
    assert_eq!(eof.readable(t2, true), Step::Close);
    assert_eq!(eof.done(), [(0, 200, t2)]);
    // A read error is classified by its errno.
    let mut reset = Rig::new(false);
    reset.connect(reset.at(ms(1)));
    reset.mem().input.push_back(Input::Errno(libc::ECONNRESET));
    let step = reset.readable(reset.at(ms(2)), false);
    assert_eq!(step, Step::Fail(ErrorKind::ConnReset));
}

#[test]
fn watchdog_deadlines_follow_the_connect_the_send_and_the_reply() {
    let mut r = Rig::new(false);
    // Connecting: `--timeout` from the start.
    assert_eq!(r.conn.deadline(), Some(r.at(TIMEOUT)));
    // Connected at 10 ms with nothing to send: no watchdog.
    let t10 = r.at(ms(10));
    r.connect(t10);
    assert_eq!(r.conn.deadline(), None);
    // A call queued: the send watchdog, from the queueing.
    r.issue(t10);
    assert_eq!(r.conn.deadline(), Some(t10 + TIMEOUT));
    // Written: the reply watchdog (timeout + think timeout) from the write.
    r.writable(t10);
    assert_eq!(r.conn.deadline(), Some(t10 + REPLY_TIMEOUT));
    // Bytes before the status line is complete restart it...
    let whole = reply(200, 100);
    let t1s = r.at(ms(1000));
    r.receive(t1s, &whole[..5]);
    assert_eq!(r.conn.deadline(), Some(t1s + REPLY_TIMEOUT));
    // ...bytes after it do not: a reply dripped slowly still times out.
    r.receive(r.at(ms(2000)), &whole[5..50]);
    r.receive(r.at(ms(3900)), &whole[50..60]);
    assert_eq!(r.conn.deadline(), Some(t1s + REPLY_TIMEOUT));
    r.receive(r.at(ms(3950)), &whole[60..]);
    assert_eq!(r.done().len(), 1);
    assert_eq!(r.conn.deadline(), None);
}

#[test]
fn a_pipelined_call_is_watched_from_its_own_write() {
    let mut r = Rig::new(false);
    let t1 = r.at(ms(1));
    r.connect(t1);
    r.issue(t1);
    r.writable(t1);
    let t5 = r.at(ms(5));
    r.issue(t5);
    r.writable(t5);
    // The first call's reply deadline governs while it is the head.
    assert_eq!(r.conn.deadline(), Some(t1 + REPLY_TIMEOUT));
    r.receive(r.at(ms(900)), &reply(200, 0));
    // The second's runs from when it was written, not from the first reply.
    assert_eq!(r.conn.deadline(), Some(t5 + REPLY_TIMEOUT));
}

#[test]
fn a_stalled_send_times_out_from_its_last_progress() {
    let mut r = Rig::new(false);
    let t1 = r.at(ms(1));
    r.connect(t1);
    r.mem().room = Some(0);
    r.issue(t1);
    assert_eq!(r.writable(t1), Step::Continue);
    assert_eq!(r.conn.deadline(), Some(t1 + TIMEOUT));
    // Nothing taken at 1.5 s: the deadline stays.
    r.writable(r.at(ms(1500)));
    assert_eq!(r.conn.deadline(), Some(t1 + TIMEOUT));
    // Some bytes at 1.8 s: the send watchdog restarts from there.
    r.mem().room = Some(5);
    let t18 = r.at(ms(1800));
    r.writable(t18);
    assert_eq!(r.conn.deadline(), Some(t18 + TIMEOUT));
    // The rest at 2.5 s: now the reply watchdog.
    r.mem().room = None;
    let t25 = r.at(ms(2500));
    r.writable(t25);
    assert_eq!(r.conn.deadline(), Some(t25 + REPLY_TIMEOUT));
}

#[test]
fn connect_completion_is_checked_before_the_connection_counts() {
    let mut r = Rig::new(false);
    let t = r.at(ms(3));
    r.mem().connecting = true;
    let spurious = r.with(|c, ctx| c.on_connect_ready(t, ctx));
    assert_eq!(spurious, Ok(false), "a spurious wake-up: still connecting");
    assert_eq!(r.conn.phase, Phase::Connecting);
    r.mem().so_error.set(Some(libc::ECONNREFUSED));
    let refused = r.with(|c, ctx| c.on_connect_ready(t, ctx));
    assert_eq!(refused, Err(ErrorKind::ConnRefused));
    let mut ok = Rig::new(false);
    ok.connect(t);
    assert_eq!((ok.conn.phase, ok.conn.connected), (Phase::Active, t));
}

#[test]
fn a_clean_writable_event_connects_without_asking_the_socket() {
    // No error or hang-up with the writability: connected, and neither SO_ERROR nor
    // the peer address is read (the pending error stays untaken).
    let mut r = Rig::new(false);
    let t = r.at(ms(4));
    r.mem().connecting = true;
    r.mem().so_error.set(Some(libc::ECONNREFUSED));
    let clean = r.with(|c, ctx| c.on_connect_clean(t, ctx));
    assert_eq!(clean, Ok(true));
    assert_eq!((r.conn.phase, r.conn.connected), (Phase::Active, t));
    assert_eq!(r.mem().so_error.get(), Some(libc::ECONNREFUSED));
}

#[test]
fn room_is_fewer_unanswered_calls_than_the_depth_on_an_open_connection() {
    let mut r = Rig::new(false);
    let t1 = r.at(ms(1));
    assert!(!r.conn.has_room(2), "still connecting");
    r.connect(t1);
    assert!(r.conn.has_room(2));
    r.issue(t1);
    assert!(r.conn.has_room(2));
    r.issue(t1);
    assert!(!r.conn.has_room(2));
    r.writable(t1);
    r.receive(r.at(ms(2)), &reply(200, 0));
    assert!(r.conn.has_room(2));
    assert_eq!(r.conn.outstanding(), 1);
}

#[test]
fn connection_slots_stay_small() {
    // One slot per open connection: 18,000 open connections must fit in 45 MiB
    // with their heap buffers, so the slot itself stays a fraction of 2.5 KiB
    // (832 B with the request log's serial and schedule and the stream scan's slot).
    let conn = std::mem::size_of::<Conn>();
    let call = std::mem::size_of::<Call>();
    let parser = std::mem::size_of::<ReplyParser>();
    let tls = std::mem::size_of::<crate::wire::tls::TlsConn>();
    eprintln!(
        "size_of: Conn {conn} B, Call {call} B, ReplyParser {parser} B, TlsConn {tls} B (boxed)"
    );
    assert!(conn <= 840, "Conn is {conn} bytes");
    assert!(call <= 96, "Call is {call} bytes");
    assert!(parser <= 256, "ReplyParser is {parser} bytes");
}
