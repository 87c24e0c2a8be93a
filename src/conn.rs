//! One connection's state machine for the request-oriented workload.
//!
//! Owns a connection's socket, its pipelined bursts of calls, the reply parser and its
//! watchdog deadlines (reference §3.2). Handlers `on_connected`, `on_writable`,
//! `on_readable` return a `Step`; the engine owns the table, the poll registration, the
//! timer wheel and what happens when a connection ends. Statistics are fed through the
//! `Ctx` the engine passes in; nothing here allocates after the slot's first use.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use crate::http::request::RequestSet;
use crate::http::response::{NoSink, Progress, ReplyParser};
use crate::net;
use crate::stats::{ErrorKind, Stats};
use crate::timer::TimerId;

/// What the engine must do after a handler ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Keep the connection; wait for more readiness.
    Continue,
    /// Close normally (all calls done, or the server asked to close).
    Close,
    /// Close as failed, counted under this error.
    Fail(ErrorKind),
}

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `connect()` in progress.
    Connecting,
    /// Connected: sending requests and receiving replies.
    Active,
}

/// Per-run facts the handlers need, lent by the engine.
pub struct Ctx<'a> {
    /// Statistics of this engine.
    pub stats: &'a mut Stats,
    /// The request and its bursts.
    pub req: &'a RequestSet,
    /// `--timeout` (connect, send progress).
    pub timeout: Option<Duration>,
    /// `--timeout` + `--think-timeout` (waiting for a reply).
    pub reply_timeout: Option<Duration>,
    /// `--burst-length`.
    pub burst_length: usize,
    /// `-d` level (trace on stderr when > 0).
    pub debug: u32,
}

/// One connection slot. Reused by later connections (see `reset`).
pub struct Conn {
    /// The socket (None once closed).
    pub stream: Option<mio::net::TcpStream>,
    /// Where the connection is.
    pub phase: Phase,
    /// The "connecting" moment: start of connect time and lifetime.
    pub started: Instant,
    /// Completed replies.
    pub replies: u64,
    /// `--hog` port to release at close.
    pub port: Option<u16>,
    /// The watchdog timer the engine has armed, and its deadline (None: no timer).
    pub armed: Option<(Instant, TimerId)>,
    calls_left: u64,
    burst_n: usize,
    sent_bytes: usize,
    recv_idx: usize,
    /// `times[i]`: send start of call i of the burst (`times[i + 1]` is also when
    /// call i's request was completely written).
    times: Vec<Instant>,
    reply_start: Instant,
    parser: ReplyParser,
    send_deadline: Option<Instant>,
    recv_deadline: Option<Instant>,
}

fn after(now: Instant, d: Option<Duration>) -> Option<Instant> {
    d.map(|d| now + d)
}

impl Conn {
    /// An unused slot value.
    pub fn new(now: Instant) -> Conn {
        Conn {
            stream: None,
            phase: Phase::Connecting,
            started: now,
            replies: 0,
            port: None,
            armed: None,
            calls_left: 0,
            burst_n: 0,
            sent_bytes: 0,
            recv_idx: 0,
            times: Vec::new(),
            reply_start: now,
            parser: ReplyParser::new(),
            send_deadline: None,
            recv_deadline: None,
        }
    }

    /// Prepares the slot for a new connection that started connecting at `now` and
    /// will make `calls` calls.
    pub fn reset(&mut self, now: Instant, calls: u64, ctx: &Ctx<'_>) {
        self.stream = None;
        self.phase = Phase::Connecting;
        self.started = now;
        self.replies = 0;
        self.port = None;
        self.armed = None;
        self.calls_left = calls;
        self.burst_n = 0;
        self.sent_bytes = 0;
        self.recv_idx = 0;
        self.times.clear();
        self.times.resize(ctx.burst_length + 1, now);
        self.send_deadline = after(now, ctx.timeout);
        self.recv_deadline = None;
    }

    /// The earliest watchdog deadline, if any.
    pub fn deadline(&self) -> Option<Instant> {
        match (self.send_deadline, self.recv_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// True while request bytes of the current burst are unwritten.
    pub fn wants_write(&self, ctx: &Ctx<'_>) -> bool {
        self.phase == Phase::Active && self.sent_bytes < ctx.req.len() * self.burst_n
    }

    /// The socket became writable while connecting: checks `SO_ERROR`, then counts
    /// the connect and sends the first burst.
    pub fn on_connect_ready(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        let Some(stream) = self.stream.as_ref() else {
            return Step::Fail(ErrorKind::Other);
        };
        match stream.take_error() {
            Ok(None) => {}
            Ok(Some(e)) | Err(e) => return Step::Fail(ErrorKind::from_errno(net::errno(&e))),
        }
        // Writable without an error can still mean "not yet connected" after a
        // spurious wakeup; peer_addr tells.
        match stream.peer_addr() {
            Ok(_) => self.on_connected(now, ctx),
            Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => Step::Continue,
            Err(e) => Step::Fail(ErrorKind::from_errno(net::errno(&e))),
        }
    }

    /// The connection is established: counts it and sends the first burst.
    pub fn on_connected(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        self.phase = Phase::Active;
        ctx.stats
            .on_connected(now.saturating_duration_since(self.started));
        if ctx.debug > 0 {
            eprintln!("rshperf: conn connected after {:?}", now - self.started);
        }
        self.start_burst(now, ctx);
        self.on_writable(now, ctx)
    }

    fn start_burst(&mut self, now: Instant, ctx: &Ctx<'_>) {
        let n = usize::try_from(self.calls_left)
            .unwrap_or(usize::MAX)
            .min(ctx.burst_length);
        self.calls_left -= n as u64;
        self.burst_n = n;
        self.sent_bytes = 0;
        self.recv_idx = 0;
        self.times[0] = now;
        self.parser.start(ctx.req.head());
        self.send_deadline = after(now, ctx.timeout);
        self.recv_deadline = None;
    }

    /// Writes as much of the current burst as the socket takes.
    pub fn on_writable(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        let len = ctx.req.len();
        let total = len * self.burst_n;
        while self.sent_bytes < total {
            let Some(stream) = self.stream.as_mut() else {
                return Step::Fail(ErrorKind::Other);
            };
            match stream.write(&ctx.req.burst(self.burst_n)[self.sent_bytes..]) {
                Ok(0) => return Step::Fail(ErrorKind::Other),
                Ok(k) => {
                    let before = self.sent_bytes / len;
                    self.sent_bytes += k;
                    let done = self.sent_bytes / len;
                    for i in before..done {
                        ctx.stats.on_request_sent(len as u64);
                        self.times[i + 1] = now;
                    }
                    if done > before && self.recv_deadline.is_none() {
                        self.recv_deadline = after(now, ctx.reply_timeout);
                    }
                    self.send_deadline = if self.sent_bytes < total {
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
        Step::Continue
    }

    /// Reads everything available and parses it. `closed`: the event also reported
    /// that the peer closed its side, so EOF must be read now (no further edge will
    /// announce it).
    pub fn on_readable(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        closed: bool,
        ctx: &mut Ctx<'_>,
    ) -> Step {
        loop {
            let Some(stream) = self.stream.as_mut() else {
                return Step::Fail(ErrorKind::Other);
            };
            match stream.read(buf) {
                Ok(0) => return self.on_eof(now, ctx),
                Ok(k) => {
                    let step = self.on_data(now, &buf[..k], ctx);
                    // A short read drained the socket: epoll (edge-triggered) reports
                    // the next arrival as a new event.
                    if step != Step::Continue || (k < buf.len() && !closed) {
                        return step;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Step::Fail(ErrorKind::from_errno(net::errno(&e))),
            }
        }
    }

    fn on_data(&mut self, now: Instant, mut data: &[u8], ctx: &mut Ctx<'_>) -> Step {
        while !data.is_empty() {
            if self.recv_idx >= self.burst_n {
                // Bytes with no call waiting for them.
                return Step::Fail(ErrorKind::Other);
            }
            let seen = self.parser.status_seen();
            let progress = match self.parser.feed(data, &mut NoSink) {
                Ok(p) => p,
                Err(e) => {
                    if ctx.debug > 0 {
                        eprintln!("rshperf: bad reply: {e:?}");
                    }
                    return Step::Fail(ErrorKind::Other);
                }
            };
            if !seen && self.parser.status_seen() {
                self.on_status(now, ctx);
            }
            match progress {
                Progress::NeedMore => {
                    if !self.parser.status_seen() {
                        self.recv_deadline = after(now, ctx.reply_timeout);
                    }
                    return Step::Continue;
                }
                Progress::Complete(n) => {
                    data = &data[n..];
                    match self.on_reply_done(now, ctx) {
                        Step::Continue => {}
                        Step::Close if !data.is_empty() && !self.parser.reply().close => {
                            return Step::Fail(ErrorKind::Other);
                        }
                        step => return step,
                    }
                }
            }
        }
        Step::Continue
    }

    fn on_status(&mut self, now: Instant, ctx: &mut Ctx<'_>) {
        self.reply_start = now;
        ctx.stats
            .on_response(now.saturating_duration_since(self.times[self.recv_idx]));
    }

    fn on_reply_done(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        let r = *self.parser.reply();
        ctx.stats.on_reply(
            r.status,
            r.header_bytes,
            r.content_bytes,
            r.footer_bytes,
            now.saturating_duration_since(self.reply_start),
        );
        self.replies += 1;
        self.recv_idx += 1;
        if ctx.debug > 0 {
            eprintln!(
                "rshperf: reply {} ({} content bytes)",
                r.status, r.content_bytes
            );
        }
        if r.close {
            // The server ends the connection after this reply: remaining calls are
            // not sent (not an error).
            return Step::Close;
        }
        if self.recv_idx < self.burst_n {
            // The next pipelined call becomes the head of the receive queue.
            self.parser.start(ctx.req.head());
            let written = self.recv_idx < self.sent_bytes / ctx.req.len();
            self.recv_deadline = match ctx.reply_timeout {
                Some(t) if written => Some(self.times[self.recv_idx + 1] + t),
                _ => None,
            };
            return Step::Continue;
        }
        if self.calls_left == 0 {
            return Step::Close;
        }
        self.start_burst(now, ctx);
        self.on_writable(now, ctx)
    }

    fn on_eof(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        if self.recv_idx >= self.burst_n {
            return Step::Close;
        }
        if self.parser.started() && self.parser.on_eof() {
            if !self.parser.status_seen() {
                self.on_status(now, ctx);
            }
            return match self.on_reply_done(now, ctx) {
                Step::Continue => Step::Fail(ErrorKind::ConnReset),
                step => step,
            };
        }
        Step::Fail(ErrorKind::ConnReset)
    }
}

/// The error of a failed write: `SO_ERROR` if set (a refused connect shows up here),
/// else the write's own errno.
fn write_error(stream: &mio::net::TcpStream, e: &io::Error) -> ErrorKind {
    let errno = match stream.take_error() {
        Ok(Some(so)) => net::errno(&so),
        _ => net::errno(e),
    };
    ErrorKind::from_errno(errno)
}
