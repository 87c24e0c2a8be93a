//! One connection: its socket, its queue of calls, the reply parser and the watchdog
//! deadlines (docs/compatibility.md §3.2).
//!
//! Owns writing queued request bytes (pipelined calls go out back to back), matching
//! replies to calls in order, reply statistics, and the per-call response/transfer
//! times. It does not decide what to send or when to close: completed calls are
//! handed to the engine as `Completion`s and the workload decides. Handlers return a
//! `Step`; the engine owns the table, the poll registration and the timer wheel.
//! A connection's buffers (send and call queues, the HTTP/2 and HTTP/3 sides) come
//! from the engine's pool (`bufs`) on first use and go back when it closes or, for
//! HTTP/1.x, sits idle; nothing here allocates once the pool's buffers have grown to
//! their working size (except the `--wsesspage` scan of HTML replies, `http::html`,
//! and a slot's first `--stream` scan, `events`).
//! HTTP/2 connections (`--http-version 2`) are the same `Conn` with its protocol side
//! in `conn/h2.rs`: chosen at connect time, feeding the same `Completion`s.

pub(crate) mod bufs;
#[cfg(test)]
mod bufs_tests;
#[cfg(test)]
mod early_tests;
pub(crate) mod events;
mod h2;
mod h3;
#[cfg(test)]
mod h3_tests;
pub(crate) mod send;
mod staged;
#[cfg(test)]
pub(crate) mod tests;
pub(crate) mod transport;

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::time::{Duration, Instant};

use crate::model::call::Call;
use crate::model::stats::{ErrorKind, Stats};
use crate::wire::http::cookie::CookieScan;
use crate::wire::http::html::PageScan;
use crate::wire::http::response::{Progress, Reply, ReplyParser, ReplySink};
use crate::wire::net;
use crate::wire::stream::Stream;
use crate::wire::table::ConnId;
use crate::wire::timer::TimerId;
use crate::wire::tls::TlsConn;
use bufs::BufPool;
use events::{ScanSlot, StreamSetup};
use send::{SendQueue, MAX_SLICES};
pub(crate) use transport::Transport;

/// What the engine must do after a handler ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Keep the connection; wait for more readiness.
    Continue,
    /// Close normally (the server closed or asked to close).
    Close,
    /// The server closed while no call was outstanding: an error (`connreset`) if the
    /// workload has queued another call by the time the engine looks, else a normal
    /// close.
    PeerClosed,
    /// Close as failed, counted under this error.
    Fail(ErrorKind),
}

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// `connect()` in progress.
    Connecting,
    /// TCP connected, TLS handshake in progress (part of the connect time).
    Handshaking,
    /// Connected: sending requests and receiving replies.
    Active,
}

/// Who a connection works for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The request-oriented workload: calls not yet issued, and calls of the current
    /// burst not yet finished.
    Request {
        /// Calls of this connection not yet issued.
        calls_left: u64,
        /// Calls of the current burst still outstanding.
        in_burst: u64,
        /// Global arrival number (over all engines and partitions).
        arrival: u64,
        /// Connect attempts of this unit's request that already failed (lb's `-m`).
        retries: u8,
    },
    /// Connection slot `slot` of session `sess`.
    Session {
        /// The session.
        sess: ConnId,
        /// Its connection slot.
        slot: u8,
    },
    /// Connection slot `slot` of this engine's `--call-rate` pool.
    Pool {
        /// Its slot in the pool.
        slot: u32,
    },
    /// Nobody: its session ended; the connection is being closed.
    Orphan,
}

/// A call whose reply completed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Completion {
    /// The connection it came on.
    pub(crate) conn: ConnId,
    /// The call.
    pub(crate) call: Call,
    /// Reply status.
    pub(crate) status: u16,
    /// The reply's counters (sizes, whether the server closes after it).
    pub(crate) reply: Reply,
    /// When its first byte arrived.
    pub(crate) first_byte: Instant,
}

/// Observes the bytes of calls (`--print-request`, `--print-reply`); the engine
/// supplies it.
pub(crate) trait ReplyObserver {
    /// Request bytes of call `id` (the first `header` bytes are the header block).
    fn request(&mut self, id: u64, bytes: &[u8], header: usize);
    /// Call `id` ends without a complete reply.
    fn abort(&mut self, id: u64);
    /// Header-block bytes of call `id`.
    fn header(&mut self, id: u64, bytes: &[u8]);
    /// Content bytes of call `id`.
    fn body(&mut self, id: u64, bytes: &[u8]);
    /// The reply of call `id` completed with these sizes.
    fn done(&mut self, id: u64, header: u64, content: u64, footer: u64);
}

/// Per-run facts the handlers need, lent by the engine.
pub(crate) struct Ctx<'a> {
    /// Statistics of this engine.
    pub(crate) stats: &'a mut Stats,
    /// `--timeout` (connect, send progress).
    pub(crate) timeout: Option<Duration>,
    /// `--timeout` + `--think-timeout` (waiting for a reply).
    pub(crate) reply_timeout: Option<Duration>,
    /// `-d` level (trace on stderr when > 0).
    pub(crate) debug: u32,
    /// Completed calls, for the engine to act on after the handler returns.
    pub(crate) completions: &'a mut Vec<Completion>,
    /// Sees reply bytes when printing or cookies need them.
    pub(crate) observer: Option<&'a mut dyn ReplyObserver>,
    /// `--stream`: how replies are split into events; None without it.
    pub(crate) stream: Option<StreamSetup>,
}

/// One connection slot. Reused by later connections (see `reset`). `S` is its
/// transport: the socket in the engine, bytes in memory in unit tests (`transport`).
pub(crate) struct Conn<S = Stream> {
    /// This slot's id (set by the engine at allocation).
    pub(crate) id: ConnId,
    /// The socket (None once closed).
    pub(crate) stream: Option<S>,
    /// Where the connection is.
    pub(crate) phase: Phase,
    /// The "connecting" moment: start of connect time and lifetime.
    pub(crate) started: Instant,
    /// When it became established (TLS: handshake done); `started` until then.
    pub(crate) connected: Instant,
    /// Completed replies.
    pub(crate) replies: u64,
    /// `--hog` port to release at close, with the index of its pool.
    pub(crate) port: Option<(usize, u16)>,
    /// The engine's port bookkeeping key of its TCP connect (`portuse`), given back
    /// at close.
    pub(crate) port_key: Option<u32>,
    /// The watchdog timer the engine has armed, and its deadline (None: no timer).
    pub(crate) armed: Option<(Instant, TimerId)>,
    /// Who this connection works for.
    pub(crate) owner: Owner,
    /// Its number in the run (unique over engines and partitions; the request log).
    pub(crate) serial: u64,
    /// When its arrival was scheduled, if it is one (the request log).
    pub(crate) scheduled: Option<Instant>,
    /// The server asked to close after the last completed reply.
    pub(crate) closing: bool,
    /// `send` and `calls` are the pool's (`lend`); else both are empty and unallocated.
    held: bool,
    /// Unwritten request bytes (and shared bodies).
    send: SendQueue,
    /// Calls in order: the first `sent` are completely written and await replies.
    calls: VecDeque<Call>,
    sent: usize,
    /// Bytes of `calls[sent]` already written.
    partial: usize,
    /// The header block of `calls[sent]` is written (it counts as a request).
    head_counted: bool,
    /// Unwritten body bytes of calls the server already answered: written before the
    /// next call starts, so the connection stays in step (see `on_reply_done`).
    owed: usize,
    reply_start: Instant,
    parser: ReplyParser,
    send_deadline: Option<Instant>,
    recv_deadline: Option<Instant>,
    /// Set-Cookie scanning (session workloads with `--session-cookies`).
    pub(crate) cookie: Option<CookieScan>,
    /// Embedded-object scanning (`--wsesspage`).
    pub(crate) page: Option<PageScan>,
    /// `--stream`: the events of the HTTP/1.x reply being received, when it is a
    /// stream.
    scan: ScanSlot,
    /// The TLS layer (`--ssl`): boxed, as rustls' connection state is larger than
    /// the rest of the slot and plain connections never need it.
    pub(crate) tls: Option<Box<TlsConn>>,
    /// Index of its target (`--servers`).
    pub(crate) target: usize,
    /// Why the TLS handshake failed (reported once per run by the engine).
    pub(crate) tls_error: Option<String>,
    /// The HTTP/2 side (`--http-version 2`); None for HTTP/1.x.
    h2: Option<Box<h2::H2Side>>,
    /// The HTTP/3 side (`--http-version 3`); None otherwise.
    h3: Option<Box<h3::H3Side>>,
}

/// Reads an HTTP/2 connection makes past a short read in one readiness event
/// (`Conn::on_readable`).
const H2_LOOKS: u32 = 8;

/// Why an `--ssl --http-version 2` connection failed when ALPN did not give `h2`.
const H2_REFUSED: &str = "the server does not offer HTTP/2 over TLS (ALPN h2)";

fn after(now: Instant, d: Option<Duration>) -> Option<Instant> {
    // A deadline too far away to represent is no deadline.
    d.and_then(|d| now.checked_add(d))
}

/// Forwards parser pieces of one call to the engine's observer, the cookie scan,
/// the page scan and the stream scan.
struct Tap<'a, 'b> {
    observer: &'a mut Option<&'b mut dyn ReplyObserver>,
    cookie: &'a mut Option<CookieScan>,
    page: &'a mut Option<PageScan>,
    id: u64,
    /// `--stream`, with the call's origin of the time to first event.
    stream: Option<(StreamSetup, Instant)>,
    scan: &'a mut ScanSlot,
    stats: &'a mut Stats,
    /// When these bytes were read.
    now: Instant,
}

impl ReplySink for Tap<'_, '_> {
    fn header_bytes(&mut self, bytes: &[u8]) {
        if let Some(o) = self.observer.as_mut() {
            o.header(self.id, bytes);
        }
        if let Some(c) = self.cookie.as_mut() {
            c.feed(bytes);
        }
        if let Some(p) = self.page.as_mut() {
            p.header(bytes);
        }
    }
    fn body_start(&mut self, reply: &Reply) {
        if let Some((setup, origin)) = self.stream {
            self.scan.start(&setup, reply.stream, origin);
        }
    }
    fn body_bytes(&mut self, bytes: &[u8]) {
        if let Some(o) = self.observer.as_mut() {
            o.body(self.id, bytes);
        }
        if let Some(p) = self.page.as_mut() {
            p.body(self.id, bytes);
        }
        self.scan.feed(bytes, self.now, &mut self.stats.stream);
    }
}

impl<S: Transport> Conn<S> {
    /// An unused slot value.
    pub(crate) fn new(id: ConnId, now: Instant) -> Conn<S> {
        Conn {
            id,
            stream: None,
            phase: Phase::Connecting,
            started: now,
            connected: now,
            replies: 0,
            port: None,
            port_key: None,
            armed: None,
            owner: Owner::Orphan,
            serial: 0,
            scheduled: None,
            closing: false,
            held: false,
            send: SendQueue::new(),
            calls: VecDeque::new(),
            sent: 0,
            partial: 0,
            head_counted: false,
            owed: 0,
            reply_start: now,
            parser: ReplyParser::new(),
            send_deadline: None,
            recv_deadline: None,
            cookie: None,
            page: None,
            scan: ScanSlot::default(),
            tls: None,
            tls_error: None,
            target: 0,
            h2: None,
            h3: None,
        }
    }

    /// Prepares the slot for a new connection `id` that started connecting at `now`,
    /// speaking HTTP/2 if `http2` (its HTTP/2 side and buffers taken from `pool`).
    pub(crate) fn reset(
        &mut self,
        id: ConnId,
        now: Instant,
        owner: Owner,
        timeout: Option<Duration>,
        http2: bool,
        pool: &mut BufPool,
    ) {
        self.id = id;
        self.stream = None;
        self.phase = Phase::Connecting;
        self.started = now;
        self.connected = now;
        self.replies = 0;
        self.port = None;
        self.port_key = None;
        self.armed = None;
        self.owner = owner;
        self.serial = 0;
        self.scheduled = None;
        self.closing = false;
        self.send.clear();
        self.calls.clear();
        self.sent = 0;
        self.partial = 0;
        self.head_counted = false;
        self.owed = 0;
        self.send_deadline = after(now, timeout);
        self.recv_deadline = None;
        if let Some(c) = self.cookie.as_mut() {
            c.take();
        }
        if let Some(p) = self.page.as_mut() {
            p.clear();
        }
        self.tls = None;
        self.tls_error = None;
        self.reset_h2(http2, pool);
        if http2 {
            // HTTP/2 writes its preface and settings at connect.
            self.lend(pool);
        }
    }

    /// Takes a send queue and a call queue from `pool` unless this connection holds
    /// them already: before the first call is rendered or a multiplexed connection
    /// starts.
    #[inline]
    pub(crate) fn lend(&mut self, pool: &mut BufPool) {
        if self.held {
            return;
        }
        // Not held: both are empty and unallocated (see `park`), so nothing is lost.
        self.send = pool.send.take();
        self.calls = pool.calls.take();
        self.held = true;
    }

    /// Gives the send and call queues back to `pool` if this HTTP/1.x connection is
    /// idle: no call queued or unanswered, nothing left to write. Returns whether it
    /// did. (HTTP/2 and HTTP/3 keep theirs: the protocol may write at any read.)
    pub(crate) fn park(&mut self, pool: &mut BufPool) -> bool {
        if !self.held
            || self.is_mux()
            || !self.calls.is_empty()
            || self.send.pending()
            || self.partial > 0
            || self.owed > 0
        {
            return false;
        }
        self.give_back(pool);
        true
    }

    /// Gives every buffer back to `pool` (the connection is closed; its calls were
    /// drained).
    pub(crate) fn release(&mut self, pool: &mut BufPool) {
        if self.held {
            self.give_back(pool);
        }
        if let Some(h) = self.h2.take() {
            pool.h2.give(h);
        }
        if let Some(h) = self.h3.take() {
            pool.h3.give(h);
        }
    }

    fn give_back(&mut self, pool: &mut BufPool) {
        pool.send.give(std::mem::take(&mut self.send));
        pool.calls.give(std::mem::take(&mut self.calls));
        self.held = false;
    }

    /// The earliest watchdog deadline, if any.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match (self.send_deadline, self.recv_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Calls on this connection not yet answered (queued or awaiting a reply).
    pub(crate) fn outstanding(&self) -> usize {
        self.calls.len() + self.in_flight_h2() + self.in_flight_h3()
    }

    /// Whether a call queued now would go out at once with fewer than `depth` calls
    /// unanswered: connected, the server has not asked to close, and for HTTP/2 a
    /// stream is free (`--call-rate` offers calls only to such connections).
    pub(crate) fn has_room(&self, depth: usize) -> bool {
        self.phase == Phase::Active
            && !self.closing
            && self.outstanding() < depth
            && (!self.is_h2() || self.can_open_h2())
            && (!self.is_h3() || self.can_open_h3())
    }

    /// Whether calls are multiplexed as streams (HTTP/2 or HTTP/3).
    pub(crate) fn is_mux(&self) -> bool {
        self.is_h2() || self.is_h3()
    }

    /// When the connection's timer must fire: its watchdog deadline or, for HTTP/3,
    /// QUIC's own timer if earlier.
    pub(crate) fn timer_due(&mut self) -> Option<Instant> {
        match (self.deadline(), self.wake()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// True while request bytes (or TLS records) are unwritten.
    pub(crate) fn wants_write(&self) -> bool {
        // HTTP/3: QUIC decides at each write whether it has a datagram to send.
        if self.is_h3() {
            return self.phase == Phase::Active;
        }
        self.phase == Phase::Active
            && (self.send.pending() || self.tls.as_deref().is_some_and(TlsConn::wants_write))
    }

    /// The send queue, for rendering a call into it before `queue`.
    pub(crate) fn send_queue(&mut self) -> &mut SendQueue {
        &mut self.send
    }

    /// Queues `call`, whose `call.len` bytes were just appended to the send buffer.
    pub(crate) fn queue(&mut self, mut call: Call, now: Instant, timeout: Option<Duration>) {
        if self.sent == self.calls.len() && self.partial == 0 && self.owed == 0 {
            call.send_start = now;
        }
        if self.calls.is_empty() {
            self.parser.start(call.head);
        }
        if self.is_h3() {
            // Opened as a stream on the connection's next write turn.
            self.calls.push_back(call);
            return;
        }
        if self.is_h2() {
            // No send watchdog for a call that waits for a free stream: its frames
            // are written (and watched by `on_writable`) once it has one.
            self.calls.push_back(call);
            if self.phase == Phase::Active {
                self.pump_h2(now, timeout);
            }
            return;
        }
        if self.send_deadline.is_none() {
            self.send_deadline = after(now, timeout);
        }
        self.calls.push_back(call);
    }

    /// Takes back every unanswered call (the connection is going away).
    /// Each call's `sent` says how many of its request bytes were written.
    pub(crate) fn drain_calls(&mut self) -> impl Iterator<Item = Call> + '_ {
        self.drain_h2();
        self.drain_h3();
        let mux = self.is_mux();
        // The bytes of `calls[sent]` written so far (none while an answered call's
        // body is still owed).
        let partial = if self.owed > 0 { 0 } else { self.partial };
        for (k, c) in self.calls.iter_mut().enumerate() {
            let sent = if c.written.is_some() || (!mux && k < self.sent) {
                c.len
            } else if !mux && k == self.sent {
                partial
            } else {
                0
            };
            c.sent = u32::try_from(sent).unwrap_or(u32::MAX);
        }
        self.sent = 0;
        self.partial = 0;
        self.head_counted = false;
        self.owed = 0;
        self.send.clear();
        self.calls.drain(..)
    }

    /// The socket became writable while connecting: checks `SO_ERROR`, then becomes
    /// active and sends what is queued. Returns whether it is now connected.
    pub(crate) fn on_connect_ready(
        &mut self,
        now: Instant,
        ctx: &mut Ctx<'_>,
    ) -> Result<bool, ErrorKind> {
        let Some(stream) = self.stream.as_ref() else {
            return Err(ErrorKind::Other);
        };
        match stream.take_error() {
            Ok(None) => {}
            Ok(Some(e)) | Err(e) => {
                let errno = net::errno(&e);
                if ErrorKind::is_unroutable(errno) {
                    ctx.stats.unroutable += 1;
                }
                return Err(ErrorKind::from_errno(errno));
            }
        }
        // Writable without an error can still mean "not yet connected" after a
        // spurious wakeup; the peer address tells.
        match stream.check_connected() {
            Ok(_) => self.on_connect_clean(now, ctx),
            Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => Ok(false),
            Err(e) => Err(ErrorKind::from_errno(net::errno(&e))),
        }
    }

    /// The socket became writable while connecting and the poll reported no error
    /// and no hang-up: the connect completed, with no `SO_ERROR` or `getpeername`
    /// call. (Linux's `tcp_poll` reports no writability in SYN-SENT; a failed connect
    /// comes with EPOLLERR and EPOLLHUP, which go to `on_connect_ready`.) Starts the
    /// TLS handshake or becomes active; returns whether it is now connected.
    pub(crate) fn on_connect_clean(
        &mut self,
        now: Instant,
        ctx: &mut Ctx<'_>,
    ) -> Result<bool, ErrorKind> {
        if self.tls.is_some() || self.is_h3() {
            self.phase = Phase::Handshaking;
            self.on_handshake_ready(now, ctx)
        } else {
            self.on_connected(now, ctx);
            Ok(true)
        }
    }

    /// Drives the TLS handshake; Ok(true) once it is done (the connection then counts
    /// as connected, handshake included, as in httperf).
    pub(crate) fn on_handshake_ready(
        &mut self,
        now: Instant,
        ctx: &mut Ctx<'_>,
    ) -> Result<bool, ErrorKind> {
        if self.is_h3() {
            return self.handshake_h3(now, ctx);
        }
        let (Some(tls), Some(stream)) = (self.tls.as_mut(), self.stream.as_mut()) else {
            return Err(ErrorKind::Other);
        };
        match tls.handshake(stream) {
            Ok(false) => Ok(false),
            Ok(true) => {
                ctx.stats.on_tls_handshake(tls.resumed());
                if self.h2.is_some() && tls.alpn() != Some(crate::wire::tls::ALPN_H2) {
                    ctx.stats.http2.alpn_refused += 1;
                    self.tls_error = Some(format!("{H2_REFUSED} (it chose no protocol)"));
                    return Err(ErrorKind::Other);
                }
                self.on_connected(now, ctx);
                Ok(true)
            }
            Err(e) => {
                let kind = match e.raw_os_error() {
                    Some(errno) => ErrorKind::from_errno(errno),
                    None if e.kind() == io::ErrorKind::UnexpectedEof => ErrorKind::ConnReset,
                    None => ErrorKind::Other,
                };
                self.tls_error = Some(
                    if self.h2.is_some() && e.to_string().contains("NoApplicationProtocol") {
                        ctx.stats.http2.alpn_refused += 1;
                        format!("{e}: {H2_REFUSED}")
                    } else {
                        e.to_string()
                    },
                );
                Err(kind)
            }
        }
    }

    /// The connection is established: counts it.
    pub(crate) fn on_connected(&mut self, now: Instant, ctx: &mut Ctx<'_>) {
        self.phase = Phase::Active;
        self.connected = now;
        self.send_deadline = None;
        ctx.stats
            .on_connected(now.saturating_duration_since(self.started));
        if ctx.debug > 0 {
            crate::wire::note::note!(
                "rshperf: connection {} connected after {:?}",
                self.id.index(),
                now - self.started
            );
        }
        if let Some(c) = self.calls.front_mut() {
            c.send_start = now;
        }
        self.start_h2(now, ctx);
    }

    /// Writes what is pending (`on_writable`); when the write fails on a socket the
    /// peer closed, reads what the peer sent before closing, so a closing reply (a
    /// `Connection: close` answer to a request whose body it did not read, then a
    /// reset) still ends the connection normally. HTTP/2 and HTTP/3 fail as before.
    pub(crate) fn write_keeping_closing_reply(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        ctx: &mut Ctx<'_>,
    ) -> Step {
        let step = self.on_writable(now, ctx);
        if matches!(step, Step::Fail(_))
            && !self.is_mux()
            && self.on_readable(now, buf, true, ctx) == Step::Close
        {
            return Step::Close;
        }
        step
    }

    /// Writes as much of the queued requests as the socket takes: one `writev` of
    /// the pending pieces (request heads and shared bodies) per round, one piece at
    /// a time through TLS.
    pub(crate) fn on_writable(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        if self.is_h3() {
            return self.writable_h3(now, ctx);
        }
        while self.send.pending() {
            let Some(stream) = self.stream.as_mut() else {
                return Step::Fail(ErrorKind::Other);
            };
            let written = match self.tls.as_mut() {
                Some(tls) => tls.write(stream, self.send.first()),
                None => {
                    let mut slices = [IoSlice::new(&[]); MAX_SLICES];
                    let n = self.send.slices(&mut slices);
                    stream.write_vectored(&slices[..n])
                }
            };
            match written {
                Ok(0) => return Step::Fail(ErrorKind::Other),
                Ok(k) => {
                    self.send.advance(k);
                    if self.is_h2() {
                        self.written_h2(k, now, ctx);
                    } else {
                        ctx.stats.on_request_bytes(k as u64);
                        self.partial += k;
                        self.account_written(now, ctx);
                    }
                    self.send_deadline = if self.send.pending() {
                        after(now, ctx.timeout)
                    } else {
                        None
                    };
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Step::Fail(write_error(stream, &e)),
            }
        }
        self.deadlines_h2(now, ctx.timeout);
        if let (Some(tls), Some(stream)) = (self.tls.as_mut(), self.stream.as_mut()) {
            if tls.wants_write() {
                if let Err(e) = tls.flush(stream) {
                    return Step::Fail(ErrorKind::from_errno(net::errno(&e)));
                }
            }
        }
        Step::Continue
    }

    /// What a watchdog that fired means: a failure (`client-timo`), or `None` when
    /// the connection only owes the rest of a body the server already answered and
    /// finishing it took longer than the timeout. Closing then loses no reply, and
    /// the calls not yet begun go back to the workload.
    pub(crate) fn timed_out(&self) -> Option<ErrorKind> {
        if self.owed > 0 {
            None
        } else {
            Some(ErrorKind::ClientTimo)
        }
    }

    /// Whether a watchdog that fires now ends a connect nobody answered: the
    /// connection was never established (TCP connect, or TLS or QUIC handshake, still
    /// under way). Counted apart from reply timeouts (`Stats::connect_timeouts`).
    pub(crate) fn unanswered_connect(&self) -> bool {
        self.phase != Phase::Active
    }

    /// Sends TLS close_notify (best effort) before a normal close.
    pub(crate) fn close_tls(&mut self) {
        if let (Some(tls), Some(stream)) = (self.tls.as_mut(), self.stream.as_mut()) {
            tls.send_close_notify();
            let _ = tls.flush(stream);
        }
    }

    /// Counts what the bytes written so far (`partial`) completed: the owed rest of
    /// answered calls first, then heads written (requests) and calls completely
    /// written.
    fn account_written(&mut self, now: Instant, ctx: &mut Ctx<'_>) {
        if self.owed > 0 {
            let k = self.partial.min(self.owed);
            self.owed -= k;
            self.partial -= k;
            if self.owed > 0 {
                return;
            }
            // The answered call's body is out: the next call's send starts now.
            if let Some(next) = self.calls.get_mut(self.sent) {
                next.send_start = now;
            }
        }
        while let Some(c) = self.calls.get_mut(self.sent) {
            if !self.head_counted && self.partial >= c.head_len {
                self.head_counted = true;
                count_request(ctx, self.target);
            }
            if self.partial < c.len {
                break;
            }
            self.partial -= c.len;
            self.head_counted = false;
            c.written = Some(now);
            if self.sent == 0 {
                self.recv_deadline = after(now, ctx.reply_timeout);
            }
            self.sent += 1;
            if let Some(next) = self.calls.get_mut(self.sent) {
                next.send_start = now;
            }
        }
    }

    /// Reads everything available and parses it. `closed`: the event also reported
    /// that the peer closed its side, so EOF must be read now (no further edge will
    /// announce it).
    pub(crate) fn on_readable(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        closed: bool,
        ctx: &mut Ctx<'_>,
    ) -> Step {
        if self.is_h3() {
            return self.readable_h3(now, ctx);
        }
        let mut looks = if self.is_h2() { H2_LOOKS } else { 0 };
        loop {
            let Some(stream) = self.stream.as_mut() else {
                return Step::Fail(ErrorKind::Other);
            };
            let got = match self.tls.as_mut() {
                Some(tls) => tls.read(stream, buf),
                None => stream.read(buf),
            };
            match got {
                Ok(0) => return self.on_eof(now, ctx),
                Ok(k) => {
                    let step = self.on_data(now, &buf[..k], ctx);
                    // A short read drained the socket: epoll (edge-triggered) reports
                    // the next arrival as a new event.
                    // (Not with TLS: rustls may hold plaintext while the socket
                    // still has records.) HTTP/2 reads on until the socket is
                    // empty (at most `H2_LOOKS` more short reads, so that one busy
                    // connection cannot hold the loop): reading sent the
                    // acknowledgement a server's held-back segment (nginx holds one
                    // reply's DATA until then) waited for, and on loopback that
                    // segment is often queued already, and replies keep coming while
                    // these are parsed; read now, their streams' replacements leave
                    // in the same write as the others instead of lone segments.
                    let drained = k < buf.len() && !closed && self.tls.is_none();
                    if step != Step::Continue {
                        return step;
                    }
                    if drained {
                        if looks == 0 {
                            return step;
                        }
                        looks -= 1;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    if self.tls.is_some() && e.raw_os_error().is_none() {
                        // A TLS alert after the handshake (e.g. a TLS 1.3 server
                        // rejecting the client certificate): say why, once.
                        self.tls_error = Some(e.to_string());
                    }
                    return Step::Fail(ErrorKind::from_errno(net::errno(&e)));
                }
            }
        }
    }

    fn on_data(&mut self, now: Instant, mut data: &[u8], ctx: &mut Ctx<'_>) -> Step {
        if self.is_h2() {
            return self.data_h2(now, data, ctx);
        }
        while !data.is_empty() {
            if self.closing {
                // The server said it closes after the last reply; ignore the rest.
                return Step::Close;
            }
            if self.owed > 0 {
                // A reply to a request not yet begun: the server is out of step.
                return Step::Fail(ErrorKind::Other);
            }
            let Some(head) = self.calls.front() else {
                // Bytes with no call waiting for them.
                return Step::Fail(ErrorKind::Other);
            };
            let id = head.id;
            let stream = ctx.stream.map(|s| {
                let origin = if s.from_schedule {
                    head.due
                } else {
                    head.send_start
                };
                (s, origin)
            });
            let seen = self.parser.status_seen();
            let mut tap = Tap {
                observer: &mut ctx.observer,
                cookie: &mut self.cookie,
                page: &mut self.page,
                id,
                stream,
                scan: &mut self.scan,
                stats: &mut *ctx.stats,
                now,
            };
            let progress = match self.parser.feed(data, &mut tap) {
                Ok(p) => p,
                Err(e) => {
                    if ctx.debug > 0 {
                        let head = String::from_utf8_lossy(&data[..data.len().min(64)]);
                        crate::wire::note::note!(
                            "rshperf: connection {}: bad reply: {e:?} at {head:?}",
                            self.id.index()
                        );
                    }
                    return Step::Fail(ErrorKind::Other);
                }
            };
            if !seen && self.parser.status_seen() {
                self.on_status(now, ctx);
            }
            match progress {
                Progress::NeedMore => {
                    // A stream's `--timeout` is the longest wait for its next bytes,
                    // not for the whole stream.
                    if !self.parser.status_seen() || self.scan.is_live() {
                        self.recv_deadline = after(now, ctx.reply_timeout);
                    }
                    return Step::Continue;
                }
                Progress::Complete(n) => {
                    data = &data[n..];
                    self.on_reply_done(now, ctx);
                }
            }
        }
        if self.closing {
            Step::Close
        } else {
            Step::Continue
        }
    }

    fn on_status(&mut self, now: Instant, ctx: &mut Ctx<'_>) {
        self.reply_start = now;
        if let Some(c) = self.calls.front() {
            note_response(
                ctx,
                self.target,
                now.saturating_duration_since(c.send_start),
            );
        }
    }

    fn on_reply_done(&mut self, now: Instant, ctx: &mut Ctx<'_>) {
        self.scan.end(true, false, now, &mut ctx.stats.stream);
        let r = *self.parser.reply();
        note_reply(
            ctx,
            self.target,
            (r.status, r.header_bytes, r.content_bytes, r.footer_bytes),
            now.saturating_duration_since(self.reply_start),
        );
        self.replies += 1;
        let Some(call) = self.calls.pop_front() else {
            return;
        };
        if let Some(o) = ctx.observer.as_mut() {
            o.done(call.id, r.header_bytes, r.content_bytes, r.footer_bytes);
        }
        if let Some(p) = self.page.as_mut() {
            p.end_reply(call.id);
        }
        if self.sent > 0 {
            self.sent -= 1;
        } else {
            // Answered before its request was completely written (a server that
            // answers at once and discards the body): the reply proves the head
            // arrived, and the rest of the body is still owed. It is written before
            // the next call starts, so the server never reads our next request as
            // body bytes; a closing reply ends the connection instead (below).
            if !self.head_counted {
                count_request(ctx, self.target);
            }
            self.head_counted = false;
            self.owed = call.len.saturating_sub(self.partial);
            self.partial = 0;
        }
        if ctx.debug > 0 {
            crate::wire::note::note!(
                "rshperf: connection {}: reply {} ({} content bytes)",
                self.id.index(),
                r.status,
                r.content_bytes
            );
        }
        if r.close {
            self.closing = true;
        }
        ctx.completions.push(Completion {
            conn: self.id,
            call,
            status: r.status,
            reply: r,
            first_byte: self.reply_start,
        });
        // The next call becomes the head of the receive queue.
        self.recv_deadline = None;
        if let Some(next) = self.calls.front() {
            self.parser.start(next.head);
            if let (Some(w), Some(t)) = (next.written, ctx.reply_timeout) {
                self.recv_deadline = w.checked_add(t);
            }
        }
    }

    fn on_eof(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        if self.is_h2() {
            return self.eof_h2();
        }
        if self.closing {
            return Step::Close;
        }
        if self.calls.is_empty() {
            // The workload may still queue calls for this connection (completions
            // are handled after this handler): the engine decides.
            return Step::PeerClosed;
        }
        if self.parser.started() && self.parser.on_eof() {
            if !self.parser.status_seen() {
                self.on_status(now, ctx);
            }
            self.on_reply_done(now, ctx);
            self.closing = true;
            return Step::Close;
        }
        Step::Fail(ErrorKind::ConnReset)
    }
}

impl<S> Conn<S> {
    /// Whether the reply of the first call in flight has begun (HTTP/1.x: its status
    /// line arrived): that call is being answered, not waiting for an answer. (HTTP/2
    /// and HTTP/3 mark each call whose stream's status arrived: `Call::begun`.)
    pub(crate) fn reply_begun(&self) -> bool {
        self.h2.is_none() && self.h3.is_none() && self.parser.status_seen()
    }

    /// Ends the streams being received (HTTP/1.x: the reply's; HTTP/2 and HTTP/3:
    /// every open stream's), if any, at `now`: the connection ended before their
    /// replies did, or the run stopped (`open_at_end`).
    pub(crate) fn end_stream(&mut self, now: Instant, open_at_end: bool, stats: &mut Stats) {
        self.scan.end(false, open_at_end, now, &mut stats.stream);
        if let Some(h) = self.h2.as_mut() {
            h.scans.end_all(open_at_end, now, &mut stats.stream);
        }
        if let Some(h) = self.h3.as_mut() {
            h.scans.end_all(open_at_end, now, &mut stats.stream);
        }
    }
}

/// Counts a call whose header block was written as a request, overall and for
/// server `target`.
fn count_request(ctx: &mut Ctx<'_>, target: usize) {
    ctx.stats.on_request_started();
    if let Some(s) = ctx.stats.servers.get_mut(target) {
        s.requests += 1;
    }
}

/// Counts a response (first byte of a final status) that came `d` after its send
/// start, overall and for server `target`.
fn note_response(ctx: &mut Ctx<'_>, target: usize, d: Duration) {
    ctx.stats.on_response(d);
    if let Some(s) = ctx.stats.servers.get_mut(target) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        s.response_sum_us += us;
        crate::model::stats::record(&mut s.response, us);
    }
}

/// Counts a completed reply: (status, header, content, footer bytes) and its
/// transfer time, overall and for server `target`.
fn note_reply(ctx: &mut Ctx<'_>, target: usize, r: (u16, u64, u64, u64), transfer: Duration) {
    ctx.stats.on_reply(r.0, r.1, r.2, r.3, transfer);
    if let Some(s) = ctx.stats.servers.get_mut(target) {
        s.replies_by_class[usize::from(r.0 / 100).min(9)] += 1;
    }
}

/// The error of a failed write: `SO_ERROR` if set (a refused connect shows up here),
/// else the write's own errno.
fn write_error<S: Transport>(stream: &S, e: &io::Error) -> ErrorKind {
    let errno = match stream.take_error() {
        Ok(Some(so)) => net::errno(&so),
        _ => net::errno(e),
    };
    ErrorKind::from_errno(errno)
}
