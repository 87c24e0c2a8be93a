//! The built-in server's event loop: one `mio::Poll` per thread, all threads sharing one
//! listening socket, edge-triggered, HTTP/1.0 and 1.1 keep-alive with pipelining.
//!
//! Owns the listening socket, the per-connection state (input buffer, pending output,
//! delayed replies, the stream being written), the count of streams open on every
//! thread (what `first_per_open=` delays a first event by), the timers (`--delay`, stream items,
//! lingering closes: a heap of deadlines behind a timerfd, so they fire to the
//! microsecond rather than the millisecond of a poll timeout) and shutdown through a
//! `mio::Waker`. It does not parse heads (`request.rs`), render replies (`reply.rs`)
//! or decide and write streams (`spec.rs`, `stream.rs`): plain replies are
//! pre-rendered and copied into the connection's output buffer, so a request costs no
//! allocation, and every batch of pipelined requests is answered with one write.
//! Called through `spawn` by `serve::serve_main`, `serve::demo_main` and tests.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mio::event::Event;
use mio::net::{TcpListener, TcpStream};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use socket2::{Domain, Protocol, SockRef, Socket, Type};

use super::log::EventLog;
use super::reply::{Replies, ReplyId};
use super::request::{self, Head, Parse, Reject, MAX_HEAD};
use super::spec::{self, Ask, Route, StreamSpec, MAX_CHAT_BODY};
use super::stream::{Step, Streamer};
use super::ServeOptions;
use crate::wire::net::TimerFd;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
const TIMER: Token = Token(2);
/// Connection slot i has token `FIRST_CONN + i`.
const FIRST_CONN: usize = 3;
/// Initial input buffer of a connection (a few pipelined requests).
const INITIAL_BUF: usize = 4096;
/// The input buffer never grows past this: an incomplete head this long is over
/// `MAX_HEAD` and has been rejected.
const MAX_BUF: usize = 2 * MAX_HEAD;
/// Pending output above which no more requests are parsed until it is written.
const HIGH_WATER: usize = 256 * 1024;
/// Delayed replies per connection above which no more requests are parsed.
const MAX_DELAYED: usize = 1024;
/// How long a closing connection waits for the client's EOF after our FIN, reading and
/// discarding, so unread input does not turn the close into a reset that destroys the
/// last reply.
const LINGER: Duration = Duration::from_secs(2);
/// Retry interval after `accept` fails for lack of descriptors.
const ACCEPT_RETRY: Duration = Duration::from_millis(10);
const LISTEN_BACKLOG: i32 = 4096;

/// A running server; `stop` (or dropping the handle) shuts it down and joins its
/// threads.
#[derive(Debug)]
pub struct ServeHandle {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    wakers: Vec<Waker>,
    threads: Vec<JoinHandle<io::Result<()>>>,
}

impl ServeHandle {
    /// The address the server listens on (the real port when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the server: wakes every thread, waits for it to close its connections and
    /// returns the first error a thread ended with.
    pub fn stop(mut self) -> io::Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> io::Result<()> {
        self.stop.store(true, Ordering::SeqCst);
        for w in &self.wakers {
            // An eventfd write does not fail in practice; a thread that missed the wake
            // still sees the flag at its next event or timer.
            let _ = w.wake();
        }
        let mut result = Ok(());
        for t in self.threads.drain(..) {
            let r = t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("server thread panicked")));
            if result.is_ok() {
                result = r;
            }
        }
        result
    }
}

impl Drop for ServeHandle {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Starts a server for `opts` on `opts.threads` background threads and returns once it
/// is listening (port 0 picks a free port; see `ServeHandle::addr`).
pub fn spawn(opts: ServeOptions) -> io::Result<ServeHandle> {
    let listener = bind(opts.addr)?;
    // Built first so that an error below stops the threads already started.
    let mut handle = ServeHandle {
        addr: listener.local_addr()?,
        stop: Arc::new(AtomicBool::new(false)),
        wakers: Vec::new(),
        threads: Vec::new(),
    };
    let replies = Arc::new(Replies::new(opts.body_size, opts.chunked, opts.close));
    let delay = (!opts.delay.is_zero()).then_some(opts.delay);
    let log = opts
        .event_log
        .as_deref()
        .map(EventLog::create)
        .transpose()?;
    let streams = Arc::new(AtomicU64::new(0));
    let open = Arc::new(AtomicU64::new(0));
    for i in 0..opts.threads.max(1) {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        let mut l = TcpListener::from_std(listener.try_clone()?);
        poll.registry()
            .register(&mut l, LISTENER, Interest::READABLE)?;
        let timer = TimerFd::new()?;
        poll.registry()
            .register(&mut SourceFd(&timer.as_raw_fd()), TIMER, Interest::READABLE)?;
        let worker = Worker {
            poll,
            listener: l,
            replies: Arc::clone(&replies),
            stop: Arc::clone(&handle.stop),
            delay,
            close: opts.close,
            slots: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            timer,
            armed: None,
            accept_retry: None,
            streams: Arc::clone(&streams),
            open: Arc::clone(&open),
            log: log.clone(),
            scratch: Vec::new(),
        };
        handle.wakers.push(waker);
        handle.threads.push(
            thread::Builder::new()
                .name(format!("rshperf-serve-{i}"))
                .spawn(move || worker.run())?,
        );
    }
    Ok(handle)
}

/// A non-blocking listening socket with address reuse and a long accept queue.
fn bind(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// A timer: when, connection slot, slot generation (a stale timer is ignored).
type Timer = Reverse<(Instant, usize, u32)>;

/// One server thread.
struct Worker {
    poll: Poll,
    listener: TcpListener,
    replies: Arc<Replies>,
    stop: Arc<AtomicBool>,
    /// `--delay`, None when 0.
    delay: Option<Duration>,
    /// `--close`.
    close: bool,
    /// Connection slots; a free slot keeps its buffers for the next connection.
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// Delayed replies, stream items and linger deadlines, earliest first.
    timers: BinaryHeap<Timer>,
    /// Wakes the poll at the earliest deadline.
    timer: TimerFd,
    /// The deadline the timer is armed for.
    armed: Option<Instant>,
    /// When to try `accept` again after running out of descriptors.
    accept_retry: Option<Instant>,
    /// Streams started by every thread (numbers them).
    streams: Arc<AtomicU64>,
    /// Streams open on every thread (`first_per_open=`).
    open: Arc<AtomicU64>,
    /// `--event-log`.
    log: Option<EventLog>,
    /// Room to render a stream item in.
    scratch: Vec<u8>,
}

struct Slot {
    generation: u32,
    conn: Conn,
}

/// What to do with a connection after driving it.
enum Verdict {
    /// Wait for the next event or timer.
    Keep,
    /// Close now.
    Close,
    /// Everything is answered and the last reply closes: send FIN, then linger.
    Linger,
    /// Everything is written and the stream is cut with a reset: close with RST.
    Reset,
}

/// What a connection needs from its worker while it is driven.
struct Ctx<'a> {
    replies: &'a Replies,
    delay: Option<Duration>,
    close: bool,
    timers: &'a mut BinaryHeap<Timer>,
    streams: &'a AtomicU64,
    open: &'a Arc<AtomicU64>,
    log: &'a mut Option<EventLog>,
    scratch: &'a mut Vec<u8>,
    slot: usize,
    generation: u32,
    now: Instant,
}

/// The result of one read.
enum Input {
    /// Bytes arrived and the socket may hold more.
    More,
    /// Bytes arrived (short read), EOF, or WouldBlock: wait for the next event.
    Drained,
}

impl Worker {
    fn run(mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        loop {
            self.arm(Instant::now())?;
            if let Err(e) = self.poll.poll(&mut events, None) {
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if self.stop.load(Ordering::SeqCst) {
                return Ok(());
            }
            let now = Instant::now();
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept(now),
                    WAKER => {}
                    TIMER => {
                        // A one-shot timer that fired is disarmed.
                        self.timer.drain();
                        self.armed = None;
                    }
                    Token(t) => self.on_event(t - FIRST_CONN, ev, now),
                }
            }
            self.expire(Instant::now());
        }
    }

    /// Arms the timer for the earliest deadline, if that changed.
    fn arm(&mut self, now: Instant) -> io::Result<()> {
        let timer = self.timers.peek().map(|Reverse((t, _, _))| *t);
        let next = match (timer, self.accept_retry) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if next != self.armed {
            self.timer
                .set(next.map(|t| t.saturating_duration_since(now)))?;
            self.armed = next;
        }
        Ok(())
    }

    fn accept(&mut self, now: Instant) {
        self.accept_retry = None;
        loop {
            match self.listener.accept() {
                // A connection that cannot be set up is dropped (closed).
                Ok((stream, _)) => drop(self.add(stream)),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::Interrupted | ErrorKind::ConnectionAborted
                    ) => {}
                // EMFILE and friends: the pending connections stay queued; no new edge
                // will announce them, so try again shortly.
                Err(_) => {
                    self.accept_retry = Some(now + ACCEPT_RETRY);
                    return;
                }
            }
        }
    }

    fn add(&mut self, mut stream: TcpStream) -> io::Result<()> {
        stream.set_nodelay(true)?;
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    conn: Conn::new(),
                });
                self.slots.len() - 1
            }
        };
        let token = Token(FIRST_CONN + i);
        if let Err(e) = self.poll.registry().register(
            &mut stream,
            token,
            Interest::READABLE | Interest::WRITABLE,
        ) {
            self.free.push(i);
            return Err(e);
        }
        self.slots[i].conn.stream = Some(stream);
        Ok(())
    }

    fn on_event(&mut self, i: usize, ev: &Event, now: Instant) {
        let Some(slot) = self.slots.get_mut(i) else {
            return;
        };
        if slot.conn.stream.is_none() {
            return;
        }
        if ev.is_read_closed() || ev.is_error() {
            slot.conn.peer_hup = true;
        }
        self.drive(i, now);
    }

    fn drive(&mut self, i: usize, now: Instant) {
        let slot = &mut self.slots[i];
        let verdict = if slot.conn.linger.is_some() {
            if slot.conn.discard_input() {
                Verdict::Keep
            } else {
                Verdict::Close
            }
        } else {
            let mut ctx = Ctx {
                replies: &self.replies,
                delay: self.delay,
                close: self.close,
                timers: &mut self.timers,
                streams: &self.streams,
                open: &self.open,
                log: &mut self.log,
                scratch: &mut self.scratch,
                slot: i,
                generation: slot.generation,
                now,
            };
            slot.conn.drive(&mut ctx)
        };
        match verdict {
            Verdict::Keep => {}
            Verdict::Close => self.release(i),
            Verdict::Reset => {
                if let Some(stream) = &slot.conn.stream {
                    // SO_LINGER 0: the close sends RST. If it cannot be set, a FIN.
                    let _ = SockRef::from(stream).set_linger(Some(Duration::ZERO));
                }
                self.release(i);
            }
            Verdict::Linger => {
                let conn = &mut slot.conn;
                let deadline = now + LINGER;
                conn.linger = Some(deadline);
                let stream = conn.stream.as_mut().expect("a driven connection is open");
                if stream.shutdown(Shutdown::Write).is_err() || !conn.discard_input() {
                    self.release(i);
                } else {
                    self.timers.push(Reverse((deadline, i, slot.generation)));
                }
            }
        }
    }

    /// Closes the connection in slot `i` and frees the slot.
    fn release(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        if let Some(mut stream) = slot.conn.stream.take() {
            let _ = self.poll.registry().deregister(&mut stream);
        }
        slot.generation = slot.generation.wrapping_add(1);
        slot.conn.reset();
        self.free.push(i);
    }

    /// Runs the timers due at `now`: delayed replies and linger deadlines.
    fn expire(&mut self, now: Instant) {
        if self.accept_retry.is_some_and(|t| t <= now) {
            self.accept(now);
        }
        while let Some(&Reverse((due, i, generation))) = self.timers.peek() {
            if due > now {
                break;
            }
            self.timers.pop();
            let slot = &mut self.slots[i];
            if slot.generation != generation || slot.conn.stream.is_none() {
                continue;
            }
            if let Some(deadline) = slot.conn.linger {
                if deadline <= now {
                    self.release(i);
                }
            } else if slot.conn.release_due(&self.replies, now) || slot.conn.stream_due(now) {
                self.drive(i, now);
            }
        }
    }
}

/// One stream counted as open on the server, from its start until it ends (written to
/// its end or cut) or, stalled, until its connection closes: dropping it uncounts it.
struct OpenStream(Arc<AtomicU64>);

impl OpenStream {
    /// Counts a stream as open; also returns how many others were open.
    fn count(open: &Arc<AtomicU64>) -> (OpenStream, u64) {
        let others = open.fetch_add(1, Ordering::Relaxed);
        (OpenStream(Arc::clone(open)), others)
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One connection.
struct Conn {
    stream: Option<TcpStream>,
    /// Input: `buf[..rlen]` is unparsed.
    buf: Vec<u8>,
    rlen: usize,
    /// How far the head at the start of `buf` was scanned without finding its end.
    scanned: usize,
    /// Request body bytes still to discard.
    body_left: u64,
    /// The reply (and whether it closes) of the request whose body is being read:
    /// sent once the whole body has arrived, as application servers do.
    after_body: Option<(ReplyId, bool)>,
    /// Output: `wbuf[woff..]` is unwritten.
    wbuf: Vec<u8>,
    woff: usize,
    /// `--delay`: replies waiting for their time, in request order.
    delayed: VecDeque<(Instant, ReplyId)>,
    /// A streaming request whose body is being read (kept in `body` for chat).
    reading: Option<(Ask, Head)>,
    /// The request body of a chat request.
    body: Vec<u8>,
    /// A streaming request, read and decided (a bad one: the text of its 400), with
    /// its arrival; waits for the replies before it.
    pending: Option<(Result<StreamSpec, String>, Head, Instant)>,
    /// The stream being written.
    streamer: Option<Streamer>,
    /// The deadline a timer is set for on behalf of `streamer`.
    stream_timer: Option<Instant>,
    /// The stream being written or stalled, counted as open.
    counted: Option<OpenStream>,
    /// A stream stalled: nothing more is written or parsed until the client leaves.
    stalled: bool,
    /// The closing stream was cut with a reset: close with RST, not FIN.
    reset: bool,
    /// A reply that closes the connection is queued: no more requests are parsed.
    closing: bool,
    /// The client sent EOF.
    eof: bool,
    /// The poll reported the peer closed (or an error): read until EOF or WouldBlock.
    peer_hup: bool,
    /// FIN sent; discarding input until EOF or this deadline.
    linger: Option<Instant>,
}

impl Conn {
    fn new() -> Conn {
        Conn {
            stream: None,
            buf: vec![0; INITIAL_BUF],
            rlen: 0,
            scanned: 0,
            body_left: 0,
            after_body: None,
            wbuf: Vec::with_capacity(INITIAL_BUF),
            woff: 0,
            delayed: VecDeque::new(),
            reading: None,
            body: Vec::new(),
            pending: None,
            streamer: None,
            stream_timer: None,
            counted: None,
            stalled: false,
            reset: false,
            closing: false,
            eof: false,
            peer_hup: false,
            linger: None,
        }
    }

    /// Makes a closed connection's slot ready for the next one, keeping its buffers
    /// unless they grew large.
    fn reset(&mut self) {
        self.stream = None;
        self.rlen = 0;
        self.scanned = 0;
        self.body_left = 0;
        self.after_body = None;
        self.wbuf.clear();
        self.woff = 0;
        self.delayed.clear();
        self.reading = None;
        self.body.clear();
        self.pending = None;
        self.streamer = None;
        self.stream_timer = None;
        self.counted = None;
        self.stalled = false;
        self.reset = false;
        self.closing = false;
        self.eof = false;
        self.peer_hup = false;
        self.linger = None;
        if self.buf.len() > 4 * INITIAL_BUF {
            self.buf.truncate(INITIAL_BUF);
            self.buf.shrink_to_fit();
        }
        if self.wbuf.capacity() > 2 * HIGH_WATER {
            self.wbuf.shrink_to(HIGH_WATER);
        }
        if self.body.capacity() > INITIAL_BUF {
            self.body = Vec::new();
        }
    }

    /// A streaming request is being read, waits, is written or has stalled: no more
    /// requests are parsed.
    fn busy(&self) -> bool {
        self.reading.is_some() || self.pending.is_some() || self.streamer.is_some() || self.stalled
    }

    /// Too much is waiting to be written (or delayed) to parse more requests.
    fn backlogged(&self) -> bool {
        self.wbuf.len() - self.woff >= HIGH_WATER || self.delayed.len() >= MAX_DELAYED
    }

    /// Reads, answers and writes until the connection has to wait for an event or a
    /// timer, or is done.
    fn drive(&mut self, ctx: &mut Ctx) -> Verdict {
        // The socket has no more input until its next readable event.
        let mut drained = false;
        loop {
            self.process(ctx);
            if self.advance(ctx) {
                continue; // a stream ended: the requests behind it are parsed
            }
            let paused = self.backlogged();
            if !drained && !paused && !self.eof && !self.closing {
                match self.read() {
                    Ok(Input::More) => continue,
                    Ok(Input::Drained) => {
                        drained = true;
                        continue;
                    }
                    Err(_) => return Verdict::Close,
                }
            }
            match self.flush() {
                Ok(true) => {}
                Ok(false) => return Verdict::Keep,
                Err(_) => return Verdict::Close,
            }
            if paused && !self.backlogged() {
                continue; // the write made room: parse and read on
            }
            if self.delayed.is_empty() && self.pending.is_none() && self.streamer.is_none() {
                if self.closing {
                    return if self.reset {
                        Verdict::Reset
                    } else {
                        Verdict::Linger
                    };
                }
                if self.eof {
                    return Verdict::Close;
                }
            }
            return Verdict::Keep;
        }
    }

    /// Answers every complete request in the input buffer (until a reply closes the
    /// connection or the output backs up) and discards request bodies.
    fn process(&mut self, ctx: &mut Ctx) {
        let mut pos = 0;
        while pos < self.rlen && !self.closing && !self.backlogged() {
            if self.body_left > 0 {
                let n = usize::try_from(self.body_left)
                    .unwrap_or(usize::MAX)
                    .min(self.rlen - pos);
                if self
                    .reading
                    .as_ref()
                    .is_some_and(|(ask, _)| ask.reads_body())
                {
                    self.body.extend_from_slice(&self.buf[pos..pos + n]);
                }
                pos += n;
                self.body_left -= n as u64;
                if self.body_left == 0 {
                    if let Some((reply, close)) = self.after_body.take() {
                        self.queue(ctx, reply);
                        self.closing = close;
                    }
                    self.body_read(ctx.now);
                }
                continue;
            }
            if self.busy() {
                break;
            }
            match request::parse(&self.buf[pos..self.rlen], &mut self.scanned) {
                Parse::Partial => break,
                Parse::Complete(head) => {
                    let route = spec::route(head.target(&self.buf[pos..self.rlen]));
                    pos += head.len;
                    self.scanned = 0;
                    self.body_left = head.body_len;
                    match route {
                        Route::Plain => {
                            let (reply, close) = ctx.replies.ok(&head);
                            if self.body_left > 0 {
                                self.after_body = Some((reply, close));
                            } else {
                                self.queue(ctx, reply);
                                self.closing = close;
                            }
                        }
                        Route::Stream(ask) if ask.reads_body() && head.body_len > MAX_CHAT_BODY => {
                            self.queue(ctx, ctx.replies.reject(Reject::PayloadTooLarge));
                            self.closing = true;
                        }
                        Route::Stream(ask) => {
                            self.reading = Some((ask, head));
                            if self.body_left == 0 {
                                self.body_read(ctx.now);
                            }
                        }
                        Route::Bad(text) => {
                            self.pending = Some((Err(text), head, ctx.now));
                        }
                    }
                }
                Parse::Reject(reason) => {
                    self.scanned = 0;
                    self.queue(ctx, ctx.replies.reject(reason));
                    self.closing = true;
                }
            }
        }
        if pos > 0 {
            self.buf.copy_within(pos..self.rlen, 0);
            self.rlen -= pos;
        }
    }

    /// The body of the streaming request being read is complete: decide its stream.
    fn body_read(&mut self, now: Instant) {
        if let Some((ask, head)) = self.reading.take() {
            self.pending = Some((ask.resolve(&self.body), head, now));
            self.body.clear();
        }
    }

    /// Starts the pending stream once the replies before it are out, and writes what
    /// is due of the stream being written (not while the output is backed up: a client
    /// that does not read gets its items late, not a growing buffer). True when a
    /// stream (or a refusal) ended and requests behind it may be parsed.
    fn advance(&mut self, ctx: &mut Ctx) -> bool {
        if self.backlogged() {
            return false;
        }
        if self.delayed.is_empty() && self.streamer.is_none() {
            if let Some((decided, head, arrived)) = self.pending.take() {
                let close = ctx.close || !head.keep_alive;
                match decided {
                    Ok(mut spec) => {
                        let id = ctx.streams.fetch_add(1, Ordering::Relaxed);
                        let (counted, others) = OpenStream::count(ctx.open);
                        self.counted = Some(counted);
                        spec.first = spec.first_after(others);
                        let s = Streamer::start(
                            spec,
                            id,
                            arrived,
                            head.http10,
                            close,
                            head.head_method,
                            &mut self.wbuf,
                        );
                        self.streamer = Some(s);
                    }
                    Err(text) => {
                        super::reply::bad_request(&text, close, &mut self.wbuf);
                        self.closing = close;
                        return self.rlen > 0 && !close;
                    }
                }
            }
        }
        let Some(s) = self.streamer.as_mut() else {
            return false;
        };
        let step = s.write_due(Instant::now(), &mut self.wbuf, ctx.scratch, ctx.log);
        match step {
            Step::More => {
                if let Some(due) = s.due() {
                    if self.stream_timer != Some(due) {
                        self.stream_timer = Some(due);
                        ctx.timers.push(Reverse((due, ctx.slot, ctx.generation)));
                    }
                }
                return false;
            }
            Step::End { close } => self.closing |= close,
            Step::Cut { reset } => {
                self.closing = true;
                self.reset = reset;
            }
            Step::Stall => self.stalled = true,
        }
        self.streamer = None;
        self.stream_timer = None;
        if !self.stalled {
            self.counted = None;
        }
        if let Some(log) = ctx.log.as_mut() {
            log.flush();
        }
        self.rlen > 0 && !self.closing && !self.stalled
    }

    /// The stream being written has an item due at `now`.
    fn stream_due(&self, now: Instant) -> bool {
        self.streamer
            .as_ref()
            .and_then(Streamer::due)
            .is_some_and(|t| t <= now)
    }

    /// Queues `reply` for writing, or for its time under `--delay`.
    fn queue(&mut self, ctx: &mut Ctx, reply: ReplyId) {
        match ctx.delay {
            Some(d) => {
                let due = ctx.now + d;
                self.delayed.push_back((due, reply));
                ctx.timers.push(Reverse((due, ctx.slot, ctx.generation)));
            }
            None => self.wbuf.extend_from_slice(ctx.replies.bytes(reply)),
        }
    }

    /// Moves the delayed replies due at `now` to the output; false if there were none.
    fn release_due(&mut self, replies: &Replies, now: Instant) -> bool {
        let mut moved = false;
        while let Some(&(due, reply)) = self.delayed.front() {
            if due > now {
                break;
            }
            self.delayed.pop_front();
            self.wbuf.extend_from_slice(replies.bytes(reply));
            moved = true;
        }
        moved
    }

    /// One read into the free end of the input buffer.
    fn read(&mut self) -> io::Result<Input> {
        if self.rlen == self.buf.len() {
            // `process` left an incomplete head filling the buffer; it is shorter than
            // MAX_HEAD (a longer one is rejected), so the buffer may grow. Behind a
            // stream, requests wait unparsed: once the buffer is full, they wait in the
            // socket.
            if self.buf.len() == MAX_BUF {
                return Ok(Input::Drained);
            }
            let len = (self.buf.len() * 2).min(MAX_BUF);
            self.buf.resize(len, 0);
        }
        let stream = self.stream.as_mut().expect("a driven connection is open");
        loop {
            match stream.read(&mut self.buf[self.rlen..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(Input::Drained);
                }
                Ok(n) => {
                    self.rlen += n;
                    // A short read emptied the socket: the next bytes bring a new
                    // edge, unless the peer already closed (its EOF brings none).
                    let more = self.rlen == self.buf.len() || self.peer_hup;
                    return Ok(if more { Input::More } else { Input::Drained });
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(Input::Drained),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes pending output; true when all of it is written, false on WouldBlock.
    fn flush(&mut self) -> io::Result<bool> {
        let stream = self.stream.as_mut().expect("a driven connection is open");
        while self.woff < self.wbuf.len() {
            match stream.write(&self.wbuf[self.woff..]) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => self.woff += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.wbuf.clear();
        self.woff = 0;
        Ok(true)
    }

    /// Lingering: reads and drops input; false once the client closed (or failed).
    fn discard_input(&mut self) -> bool {
        let stream = self
            .stream
            .as_mut()
            .expect("a lingering connection is open");
        loop {
            match stream.read(&mut self.buf) {
                Ok(0) => return false,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }
}
