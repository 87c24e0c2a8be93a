//! The built-in server's event loop: one `mio::Poll` per thread, all threads sharing one
//! listening socket, edge-triggered, HTTP/1.0 and 1.1 keep-alive with pipelining.
//!
//! Owns the listening socket, the per-connection state (input buffer, pending output,
//! delayed replies), the `--delay` timers and shutdown through a `mio::Waker`. It does
//! not parse heads (`request.rs`) or render replies (`reply.rs`): replies are
//! pre-rendered and copied into the connection's output buffer, so a request costs no
//! allocation, and every batch of pipelined requests is answered with one write.
//! Called through `spawn` by `serve::serve_main`, `serve::demo_main` and tests.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mio::event::Event;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use socket2::{Domain, Protocol, Socket, Type};

use super::reply::{Replies, ReplyId};
use super::request::{self, Parse, MAX_HEAD};
use super::ServeOptions;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
/// Connection slot i has token `FIRST_CONN + i`.
const FIRST_CONN: usize = 2;
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
    for i in 0..opts.threads.max(1) {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        let mut l = TcpListener::from_std(listener.try_clone()?);
        poll.registry()
            .register(&mut l, LISTENER, Interest::READABLE)?;
        let worker = Worker {
            poll,
            listener: l,
            replies: Arc::clone(&replies),
            stop: Arc::clone(&handle.stop),
            delay,
            slots: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            accept_retry: None,
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
    /// Connection slots; a free slot keeps its buffers for the next connection.
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// Delayed replies and linger deadlines, earliest first.
    timers: BinaryHeap<Timer>,
    /// When to try `accept` again after running out of descriptors.
    accept_retry: Option<Instant>,
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
}

/// What a connection needs from its worker while it is driven.
struct Ctx<'a> {
    replies: &'a Replies,
    delay: Option<Duration>,
    timers: &'a mut BinaryHeap<Timer>,
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
            let timeout = self.timeout(Instant::now());
            if let Err(e) = self.poll.poll(&mut events, timeout) {
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
                    Token(t) => self.on_event(t - FIRST_CONN, ev, now),
                }
            }
            self.expire(Instant::now());
        }
    }

    /// Time until the earliest timer (None: none pending).
    fn timeout(&self, now: Instant) -> Option<Duration> {
        let timer = self.timers.peek().map(|Reverse((t, _, _))| *t);
        let next = match (timer, self.accept_retry) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        next.map(|t| t.saturating_duration_since(now))
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
                timers: &mut self.timers,
                slot: i,
                generation: slot.generation,
                now,
            };
            slot.conn.drive(&mut ctx)
        };
        match verdict {
            Verdict::Keep => {}
            Verdict::Close => self.release(i),
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
            } else if slot.conn.release_due(&self.replies, now) {
                self.drive(i, now);
            }
        }
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
            if self.delayed.is_empty() {
                if self.closing {
                    return Verdict::Linger;
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
                pos += n;
                self.body_left -= n as u64;
                if self.body_left == 0 {
                    if let Some((reply, close)) = self.after_body.take() {
                        self.queue(ctx, reply);
                        self.closing = close;
                    }
                }
                continue;
            }
            match request::parse(&self.buf[pos..self.rlen], &mut self.scanned) {
                Parse::Partial => break,
                Parse::Complete(head) => {
                    pos += head.len;
                    self.scanned = 0;
                    self.body_left = head.body_len;
                    let (reply, close) = ctx.replies.ok(&head);
                    if self.body_left > 0 {
                        self.after_body = Some((reply, close));
                    } else {
                        self.queue(ctx, reply);
                        self.closing = close;
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
            // MAX_HEAD (a longer one is rejected), so the buffer may grow.
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
