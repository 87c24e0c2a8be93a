//! The engine: one thread, one `mio::Poll`, one connection table, one timer wheel.
//!
//! Owns the event loop of the request-oriented workload: arrivals on the absolute
//! schedule (catch-up bursts recorded for "Maximum connect burst length"), connection
//! setup, dispatch of readiness to `conn::Conn`, watchdog timeouts, reply-rate samples,
//! `--runtime`, SIGINT/SIGTERM, and the end condition. Sleeps in the poll until the next
//! I/O or deadline (a timerfd gives sub-millisecond wakeups): no busy polling. Feeds one
//! `Stats`; the runner merges engines and prints the report.

use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use mio::net::UnixStream;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use crate::config::Config;
use crate::conn::{Conn, Ctx, Phase, Step};
use crate::http::request::RequestSet;
use crate::net::{self, Connect, PortPool, SetupError, SocketOptions, TimerFd};
use crate::stats::{ErrorKind, RateSample, Stats};
use crate::table::{ConnId, Table};
use crate::timer::TimerWheel;
use crate::workload::rate::{Period, Schedule};

const TIMER_TOKEN: Token = Token(usize::MAX);
const SIGNAL_TOKEN: Token = Token(usize::MAX - 1);
/// Reply-rate sampling interval (httperf's RATE_INTERVAL).
const SAMPLE_INTERVAL: Duration = Duration::from_secs(5);
/// Size of the engine's one receive buffer.
const READ_BUFFER: usize = 64 * 1024;
/// Ports tried per connection under `--hog` before giving up (EADDRINUSE).
const HOG_ATTEMPTS: usize = 64;

/// Readiness of one connection as reported by one poll event.
#[derive(Debug, Clone, Copy)]
struct Ready {
    readable: bool,
    writable: bool,
    /// The peer closed (or reset) the connection.
    closed: bool,
}

/// This engine's share of the run.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Stripe j: this engine takes global arrivals k ≡ j (mod `stripes`).
    pub stripe: u32,
    /// Number of stripes (engines).
    pub stripes: u32,
    /// Connections this engine makes.
    pub conns: u64,
    /// Most connections open at once.
    pub capacity: usize,
}

/// What an engine hands back.
#[derive(Debug)]
pub struct Outcome {
    /// Everything it measured.
    pub stats: Stats,
    /// When it stopped (end condition, `--runtime` or signal).
    pub stopped: Instant,
    /// Whether a signal stopped it.
    pub interrupted: bool,
}

/// The event loop and everything it owns.
pub struct Engine<'c> {
    cfg: &'c Config,
    plan: Plan,
    poll: Poll,
    table: Table<Conn>,
    wheel: TimerWheel<ConnId>,
    fired: Vec<ConnId>,
    timerfd: TimerFd,
    timer_armed: Option<Instant>,
    /// Read end of the signal pipe: kept so its registration stays valid.
    _signal: UnixStream,
    signal_ids: Vec<signal_hook::SigId>,
    stats: Stats,
    buf: Vec<u8>,
    req: RequestSet,
    opts: SocketOptions,
    addr: SocketAddr,
    ports: Option<PortPool>,
    schedule: Schedule,
    sequential: bool,
    next_arrival: Option<Instant>,
    t0: Instant,
    timeout: Option<Duration>,
    reply_timeout: Option<Duration>,
    started: u64,
    done: u64,
    live: u64,
    iteration: u64,
    burst_iteration: u64,
    burst_len: u64,
    next_sample: Instant,
    last_sample: Instant,
    last_replies: u64,
    runtime_end: Option<Instant>,
    stop: Option<Instant>,
    interrupted: bool,
}

fn duration_of(secs: f64) -> Option<Duration> {
    (secs > 0.0).then(|| Duration::from_secs_f64(secs))
}

impl<'c> Engine<'c> {
    /// Sets up an engine for `plan`, starting at `t0`.
    pub fn new(cfg: &'c Config, plan: Plan, t0: Instant) -> io::Result<Engine<'c>> {
        let poll = Poll::new()?;
        let timerfd = TimerFd::new()?;
        poll.registry().register(
            &mut SourceFd(&timerfd.as_raw_fd()),
            TIMER_TOKEN,
            Interest::READABLE,
        )?;
        let (rx, sender) = std::os::unix::net::UnixStream::pair()?;
        rx.set_nonblocking(true)?;
        sender.set_nonblocking(true)?;
        let mut signal = UnixStream::from_std(rx);
        poll.registry()
            .register(&mut signal, SIGNAL_TOKEN, Interest::READABLE)?;
        let mut signal_ids = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let tx = sender.try_clone()?;
            signal_ids.push(signal_hook::low_level::pipe::register(sig, tx)?);
        }
        let timeout = duration_of(cfg.timeout);
        let reply_timeout = duration_of(cfg.timeout + cfg.think_timeout);
        let sequential = matches!(cfg.period, Period::Sequential);
        let first_sample = SAMPLE_INTERVAL
            .mul_f64(f64::from(cfg.client_id + 1) / f64::from(cfg.num_clients.max(1)));
        let addr = *cfg
            .addrs
            .first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no server address"))?;
        Ok(Engine {
            cfg,
            plan,
            poll,
            table: Table::new(plan.capacity),
            wheel: TimerWheel::new(t0, Duration::from_millis(1), plan.capacity + 1),
            fired: Vec::new(),
            timerfd,
            timer_armed: None,
            _signal: signal,
            signal_ids,
            stats: Stats::new(),
            buf: vec![0; READ_BUFFER],
            req: RequestSet::from_config(cfg),
            opts: SocketOptions {
                send_buffer: cfg.send_buffer as usize,
                recv_buffer: cfg.recv_buffer as usize,
                reset_on_close: cfg.close_with_reset,
            },
            addr,
            ports: cfg.hog.then(PortPool::new),
            schedule: Schedule::new(&cfg.period, cfg.client_id, plan.stripe, plan.stripes),
            sequential,
            next_arrival: None,
            t0,
            timeout,
            reply_timeout,
            started: 0,
            done: 0,
            live: 0,
            iteration: 0,
            burst_iteration: 0,
            burst_len: 0,
            next_sample: t0 + first_sample,
            last_sample: t0,
            last_replies: 0,
            runtime_end: duration_of(cfg.runtime).map(|d| t0 + d),
            stop: None,
            interrupted: false,
        })
    }

    /// Runs until the end condition, `--runtime` or a signal.
    pub fn run(mut self) -> io::Result<Outcome> {
        let mut events = Events::with_capacity(1024);
        let now = Instant::now();
        if self.plan.conns == 0 {
            self.stop = Some(now);
        } else {
            self.next_arrival = if self.sequential {
                Some(now)
            } else {
                self.schedule.next_offset().map(|o| self.t0 + o)
            };
            self.on_arrivals(now);
        }
        while self.stop.is_none() {
            let timeout = self.arm_timer()?;
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            self.iteration += 1;
            let now = Instant::now();
            for ev in events.iter() {
                match ev.token() {
                    TIMER_TOKEN => {
                        self.timer_armed = None;
                        self.timerfd.drain();
                    }
                    SIGNAL_TOKEN => {
                        self.interrupted = true;
                        self.stop.get_or_insert(now);
                    }
                    t => {
                        let hup = ev.is_error() || ev.is_read_closed() || ev.is_write_closed();
                        let ready = Ready {
                            readable: ev.is_readable() || hup,
                            writable: ev.is_writable() || hup,
                            closed: hup,
                        };
                        self.on_event(ConnId::from_token(t), ready);
                    }
                }
                if self.stop.is_some() {
                    break;
                }
            }
            if self.stop.is_none() {
                self.on_deadlines(Instant::now());
            }
        }
        for id in self.signal_ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        Ok(Outcome {
            stats: self.stats,
            stopped: self.stop.unwrap_or_else(Instant::now),
            interrupted: self.interrupted,
        })
    }

    /// Arms the timerfd for the earliest deadline; returns the poll timeout (zero when
    /// something is already due, else None: the timerfd wakes the poll).
    fn arm_timer(&mut self) -> io::Result<Option<Duration>> {
        let deadline = [
            self.next_arrival,
            self.wheel.next_deadline(),
            Some(self.next_sample),
            self.runtime_end,
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(deadline) = deadline else {
            return Ok(None);
        };
        let now = Instant::now();
        if deadline <= now {
            return Ok(Some(Duration::ZERO));
        }
        if self.timer_armed != Some(deadline) {
            self.timerfd.set(Some(deadline - now))?;
            self.timer_armed = Some(deadline);
        }
        Ok(None)
    }

    fn on_deadlines(&mut self, now: Instant) {
        self.on_arrivals(now);
        self.on_timeouts(now);
        if now >= self.next_sample {
            self.take_sample(now);
        }
        if self.runtime_end.is_some_and(|end| now >= end) {
            self.stop.get_or_insert(now);
        }
    }

    fn on_arrivals(&mut self, now: Instant) {
        while let Some(at) = self.next_arrival {
            if at > now || self.stop.is_some() {
                break;
            }
            self.next_arrival = None;
            // In sequential mode a synchronous failure schedules the next arrival
            // (see `on_destroyed`) instead of recursing.
            self.start_connection(now, at);
            if !self.sequential && self.started < self.plan.conns {
                self.next_arrival = self.schedule.next_offset().map(|o| self.t0 + o);
            }
        }
    }

    fn take_sample(&mut self, now: Instant) {
        let replies = self.stats.all_replies();
        let seconds = now
            .saturating_duration_since(self.last_sample)
            .as_secs_f64();
        let n = replies - self.last_replies;
        self.stats.rate_samples.push(RateSample {
            replies: n,
            sessions: 0,
            seconds,
        });
        if self.cfg.verbose > 0 && self.cfg.threads == 1 {
            let mut out = io::stdout().lock();
            let _ = writeln!(out, "reply-rate = {:<8.1}", n as f64 / seconds);
            let _ = out.flush();
        }
        self.last_replies = replies;
        self.last_sample = now;
        self.next_sample += SAMPLE_INTERVAL;
    }

    /// Records httperf's connect burst: connects made within one loop iteration. The
    /// running burst is compared with the maximum only when a connect happens in a
    /// later iteration (so one connection gives 0, as in httperf).
    fn note_connect_burst(&mut self) {
        if self.iteration == self.burst_iteration && self.burst_len > 0 {
            self.burst_len += 1;
        } else {
            self.stats.max_burst = self.stats.max_burst.max(self.burst_len);
            self.burst_len = 1;
            self.burst_iteration = self.iteration;
        }
    }

    fn ctx(&mut self) -> (&mut Table<Conn>, Ctx<'_>, &mut [u8]) {
        let ctx = Ctx {
            stats: &mut self.stats,
            req: &self.req,
            timeout: self.timeout,
            reply_timeout: self.reply_timeout,
            burst_length: usize::try_from(self.cfg.burst_length)
                .unwrap_or(usize::MAX)
                .max(1),
            debug: self.cfg.debug,
        };
        (&mut self.table, ctx, &mut self.buf)
    }

    /// Starts arrival number `self.started` (scheduled at `at`).
    fn start_connection(&mut self, now: Instant, at: Instant) {
        self.note_connect_burst();
        self.started += 1;
        self.stats.on_lateness(now.saturating_duration_since(at));
        self.live += 1;
        self.stats.max_concurrent = self.stats.max_concurrent.max(self.live);
        let calls = self.cfg.num_calls;
        let (table, ctx, _) = self.ctx();
        let slot = table.alloc(|| Conn::new(now)).map(|(id, conn)| {
            conn.reset(now, calls, &ctx);
            id
        });
        let Some(id) = slot else {
            self.fail_setup(now, ErrorKind::FdUnavail);
            return;
        };
        match self.open_socket(id) {
            Ok(Some(connected)) => {
                let step = if connected {
                    self.with_conn(id, |c, ctx| c.on_connected(now, ctx))
                } else {
                    Step::Continue
                };
                self.after_step(id, step, now);
            }
            Ok(None) => {
                // socket() failed: no connection object exists.
                self.table.free(id);
                self.fail_setup(now, ErrorKind::FdUnavail);
            }
            Err(kind) => self.finish(id, Some(kind), now),
        }
    }

    /// Creates, binds and connects the socket of slot `id`. Ok(Some(connected)) when
    /// the socket exists, Ok(None) when `socket()` itself failed with EMFILE-like
    /// errors (counted by the caller), Err(kind) for failures after it was counted.
    fn open_socket(&mut self, id: ConnId) -> Result<Option<bool>, ErrorKind> {
        let mut attempts = 0;
        let result = loop {
            let local = match self.ports.as_mut() {
                Some(pool) => match pool.take() {
                    Some(p) => Some(net::any_local(self.addr, p)),
                    None => {
                        self.stats.on_connecting();
                        return Err(ErrorKind::AddrUnavail);
                    }
                },
                None => None,
            };
            let r = net::start_connect(self.addr, local, &self.opts);
            let busy = matches!(&r, Err(SetupError::Connect(e)) if e.raw_os_error() == Some(libc::EADDRINUSE));
            if let Some(l) = local {
                if busy {
                    // The port stays marked used (someone else has it); try the next.
                    attempts += 1;
                    if attempts < HOG_ATTEMPTS {
                        continue;
                    }
                } else if let Some(conn) = self.table.get_mut(id) {
                    conn.port = Some(l.port());
                }
            }
            break r;
        };
        match result {
            Err(SetupError::Socket(e)) => {
                let kind = ErrorKind::from_errno(net::errno(&e));
                if kind == ErrorKind::FdUnavail {
                    Ok(None)
                } else {
                    self.stats.on_connecting();
                    Err(kind)
                }
            }
            Err(SetupError::Connect(e)) => {
                self.stats.on_connecting();
                let errno = net::errno(&e);
                Err(if errno == libc::EADDRINUSE {
                    ErrorKind::AddrUnavail
                } else {
                    ErrorKind::from_errno(errno)
                })
            }
            Ok(c) => {
                self.stats.on_connecting();
                let (connected, mut stream) = match c {
                    Connect::Done(s) => (true, s),
                    Connect::InProgress(s) => (false, s),
                };
                self.poll
                    .registry()
                    .register(
                        &mut stream,
                        id.token(),
                        Interest::READABLE | Interest::WRITABLE,
                    )
                    .map_err(|e| ErrorKind::from_errno(net::errno(&e)))?;
                let conn = self.table.get_mut(id).ok_or(ErrorKind::Other)?;
                conn.stream = Some(stream);
                if connected {
                    conn.phase = Phase::Active;
                }
                Ok(Some(connected))
            }
        }
    }

    fn with_conn(&mut self, id: ConnId, f: impl FnOnce(&mut Conn, &mut Ctx<'_>) -> Step) -> Step {
        let (table, mut ctx, _) = self.ctx();
        match table.get_mut(id) {
            Some(conn) => f(conn, &mut ctx),
            None => Step::Continue,
        }
    }

    fn on_event(&mut self, id: ConnId, ready: Ready) {
        let Ready {
            readable,
            writable,
            closed,
        } = ready;
        let now = Instant::now();
        let (table, mut ctx, buf) = self.ctx();
        let Some(conn) = table.get_mut(id) else {
            return;
        };
        let step = if conn.phase == Phase::Connecting {
            if writable {
                conn.on_connect_ready(now, &mut ctx)
            } else {
                Step::Continue
            }
        } else {
            let mut step = Step::Continue;
            if writable && conn.wants_write(&ctx) {
                step = conn.on_writable(now, &mut ctx);
            }
            if step == Step::Continue && readable {
                step = conn.on_readable(now, buf, closed, &mut ctx);
            }
            step
        };
        self.after_step(id, step, now);
    }

    fn after_step(&mut self, id: ConnId, step: Step, now: Instant) {
        match step {
            Step::Continue => self.arm_watchdog(id),
            Step::Close => self.finish(id, None, now),
            Step::Fail(kind) => self.finish(id, Some(kind), now),
        }
    }

    /// Makes sure a timer is pending no later than the connection's deadline. A later
    /// deadline leaves the earlier timer in place: it re-arms itself when it fires.
    fn arm_watchdog(&mut self, id: ConnId) {
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        let Some(deadline) = conn.deadline() else {
            return;
        };
        if let Some((armed, timer)) = conn.armed {
            if armed <= deadline {
                return;
            }
            self.wheel.cancel(timer);
        }
        conn.armed = self.wheel.schedule(deadline, id).map(|t| (deadline, t));
    }

    fn on_timeouts(&mut self, now: Instant) {
        let mut fired = std::mem::take(&mut self.fired);
        self.wheel.expire(now, |id| fired.push(id));
        for &id in &fired {
            let Some(conn) = self.table.get_mut(id) else {
                continue;
            };
            conn.armed = None;
            match conn.deadline() {
                Some(d) if d <= now => {
                    if self.cfg.debug > 0 {
                        eprintln!("rshperf: connection timed out");
                    }
                    self.finish(id, Some(ErrorKind::ClientTimo), now);
                }
                Some(_) => self.arm_watchdog(id),
                None => {}
            }
        }
        fired.clear();
        self.fired = fired;
    }

    /// A connection that never got a socket (full table, EMFILE) failed.
    fn fail_setup(&mut self, now: Instant, kind: ErrorKind) {
        self.stats.on_error(kind);
        self.live -= 1;
        self.on_destroyed(now);
    }

    /// Ends connection `id`: counts the failure (if any) and its lifetime (if it had a
    /// reply), closes the socket, frees the slot.
    fn finish(&mut self, id: ConnId, fail: Option<ErrorKind>, now: Instant) {
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        if let Some((_, t)) = conn.armed.take() {
            self.wheel.cancel(t);
        }
        if let Some(kind) = fail {
            self.stats.on_error(kind);
            if self.cfg.debug > 0 {
                eprintln!("rshperf: connection failed: {kind:?}");
            }
        }
        if conn.replies > 0 {
            self.stats
                .on_lifetime(now.saturating_duration_since(conn.started));
        }
        if let (Some(pool), Some(port)) = (self.ports.as_mut(), conn.port.take()) {
            pool.release(port);
        }
        // Closing the descriptor also removes it from the epoll set.
        conn.stream = None;
        self.table.free(id);
        self.live -= 1;
        self.on_destroyed(now);
    }

    fn on_destroyed(&mut self, now: Instant) {
        self.done += 1;
        if self.done >= self.plan.conns {
            self.stop.get_or_insert(now);
        } else if self.sequential && self.started < self.plan.conns && self.stop.is_none() {
            self.next_arrival = Some(now);
        }
    }
}
