//! The engine: one thread, one `mio::Poll`, one connection table, one timer wheel.
//!
//! Owns the event loop: arrivals on the absolute schedule (catch-up bursts recorded for
//! "Maximum connect burst length", bounded by the overload policy in `catchup`, with
//! loopback source addresses from `spread`), connection set-up and teardown, dispatch
//! of readiness to `conn::Conn`, watchdog and think-time timers, `--runtime`,
//! SIGINT/SIGTERM, and the end condition. Sleeps in the poll until the next I/O or
//! deadline (a timerfd gives sub-millisecond wakeups), waking a little early to spin
//! to the next arrival, and starting an arrival that falls due amid a batch of
//! events before the rest of the batch (`spin`): no busy polling. While HTTP/2
//! replies are slow to come (a saturated server), it naps briefly instead of
//! blocking in the poll (`h2nap`).
//! What to send is decided by the workload halves in `request` (one connection per
//! arrival) and `session` (`--wsess`, `--wsesslog`, and with `page` `--wsesspage`);
//! when arrivals are not scheduled but replace finished units (sequential mode,
//! `--concurrency`, ab, lb), `closed` decides; socket and TLS set-up is in `connect`,
//! the next scheduled arrival's socket is made ahead of its time in `spare`.
//! Feeds one `Stats` and publishes to the run's `tally` (open connections, figures
//! for the reply-rate samples and `-v`/`--periodic-stats` lines, which the runner's
//! clock thread takes and prints); the runner merges engines and prints the report.
//! (Longer than 600 lines: the loop, dispatch, flushing, timers and teardown share
//! the engine's fields and are read together.)

mod burst;
mod catchup;
mod closed;
mod connect;
mod dispatch;
mod h2flush;
mod h2nap;
mod pacer;
mod page;
mod pool;
mod request;
mod session;
mod spare;
mod spin;
mod spread;
mod timers;

use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use mio::net::UnixStream;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use crate::engine::clock::Monotonic;
use crate::engine::conn::{Completion, Conn, Ctx, Owner, Phase, ReplyObserver, Step};
use crate::engine::tally::EngineTally;
use crate::model::call::{Call, CallRef};
use crate::model::config::{Config, HttpVersion};
use crate::model::stats::{ErrorKind, Stats};
use crate::model::workload::rate::Schedule;
use crate::model::workload::Workload;
use crate::wire::net::{PortPool, SocketOptions, TimerFd};
use crate::wire::table::{ConnId, Table};
use crate::wire::timer::TimerWheel;

pub(crate) use closed::CallObserver;
pub(crate) use session::Session;

const TIMER_TOKEN: Token = Token(usize::MAX);
const SIGNAL_TOKEN: Token = Token(usize::MAX - 1);
/// Timeline interval (`stats::timeline`).
const TIMELINE_INTERVAL: Duration = Duration::from_secs(1);
/// Size of the engine's one receive buffer.
const READ_BUFFER: usize = 64 * 1024;

/// This engine's share of the run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    /// Stripe j: this engine takes global arrivals k ≡ j (mod `stripes`).
    pub(crate) stripe: u32,
    /// Number of stripes (engines × partitions).
    pub(crate) stripes: u32,
    /// Arrivals (connections or sessions) this engine makes.
    pub(crate) arrivals: u64,
    /// Most connections open at once.
    pub(crate) capacity: usize,
}

/// What an engine hands back.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// Everything it measured.
    pub(crate) stats: Stats,
    /// When it stopped (end condition, `--runtime` or signal).
    pub(crate) stopped: Instant,
    /// Whether a signal stopped it.
    pub(crate) interrupted: bool,
}

/// Readiness of one connection as reported by one poll event.
#[derive(Debug, Clone, Copy)]
struct Ready {
    readable: bool,
    writable: bool,
    /// The peer closed (or reset) the connection.
    closed: bool,
}

/// What a timer in the wheel is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    /// A connection's watchdog.
    Watchdog(ConnId),
    /// A session's think time is over.
    Think(ConnId),
}

/// The event loop and everything it owns.
pub(crate) struct Engine<'c> {
    cfg: &'c Config,
    work: &'c Workload,
    plan: Plan,
    poll: Poll,
    table: Table<Conn>,
    sessions: Table<Session>,
    wheel: TimerWheel<Timer>,
    fired: Vec<Timer>,
    timerfd: TimerFd,
    timer_armed: Option<Instant>,
    /// Read end of the signal pipe: kept so its registration stays valid.
    _signal: UnixStream,
    signal_ids: Vec<signal_hook::SigId>,
    stats: Stats,
    buf: Vec<u8>,
    completions: Vec<Completion>,
    leftovers: Vec<Call>,
    /// Connections that got new calls and must be flushed.
    dirty: Vec<ConnId>,
    /// HTTP/2 writes held back to the end of the poll turn (`h2flush`).
    h2: h2flush::Held,
    /// Short sleeps instead of blocking polls while HTTP/2 replies stream in (`h2nap`).
    nap: h2nap::Nap,
    /// Connections the workload wants closed once the current handler is done.
    to_close: Vec<ConnId>,
    observer: Option<Box<dyn ReplyObserver + 'c>>,
    opts: SocketOptions,
    /// `--hog` port pools: one per `--myaddr` address (one for the wildcard
    /// address without `--myaddr`); empty without `--hog`.
    ports: Vec<PortPool>,
    /// Round-robin position in the `--myaddr` pool.
    local_rr: usize,
    /// The arrival schedule, with the overload policy's bound on catch-up
    /// (`--overload`).
    pacer: pacer::Pacer,
    /// Loopback source addresses (`--overload=degrade`).
    spread: spread::Spread,
    /// Early wake-up and spinning before arrivals (`--spin`).
    spinner: spin::Spinner,
    /// The next arrival's socket, made ahead (`spare`).
    spare: spare::SpareSlot,
    /// The closed loop (None: arrivals follow `schedule`).
    closed: Option<closed::ClosedState>,
    /// The `--call-rate` pool (None: arrivals are connections or sessions).
    pool: Option<dispatch::PoolState>,
    /// Sees every completed request of an ab or lb run (`-g`).
    calls: Option<Box<dyn CallObserver + 'c>>,
    t0: Instant,
    timeout: Option<Duration>,
    reply_timeout: Option<Duration>,
    next_call_id: u64,
    /// Units (connections or sessions) finished.
    done: u64,
    live: u64,
    iteration: u64,
    /// Connects per loop iteration ("Maximum connect burst length").
    bursts: burst::Bursts,
    /// Where this engine publishes what the other engines and the clock need.
    tally: EngineTally<'c>,
    /// End of the timeline's current second.
    next_tick: Instant,
    /// `--progress`: where to publish, and when next.
    progress: Option<&'c crate::engine::progress::Slot>,
    /// `--metrics-listen`: this engine's publisher (on the same tick).
    metrics: Option<crate::engine::metrics::Publisher<'c>>,
    next_progress: Option<Instant>,
    runtime_end: Option<Instant>,
    stop: Option<Instant>,
    interrupted: bool,
}

impl<'c> Engine<'c> {
    /// Sets up an engine for `plan`, starting at `t0`.
    pub(crate) fn new(
        cfg: &'c Config,
        work: &'c Workload,
        observer: Option<Box<dyn ReplyObserver + 'c>>,
        progress: Option<&'c crate::engine::progress::Slot>,
        tally: EngineTally<'c>,
        plan: Plan,
        t0: Instant,
    ) -> io::Result<Engine<'c>> {
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
        let closed_loop = work.closed_loop(cfg).is_some();
        // Seconds between this engine's arrivals (its stripe of the schedule).
        let mean_period = if closed_loop {
            0.0
        } else {
            cfg.load.period.mean() * f64::from(plan.stripes.max(1))
        };
        let catchup = catchup::CatchUp::new(cfg.pacing.overload, mean_period, plan.capacity);
        let batch_tick = if cfg.load.call_rate > 0.0 {
            dispatch::batch_tick(mean_period, cfg.pacing.spin)
        } else {
            None
        };
        let runtime_end = timers::duration_of(cfg.load.runtime).and_then(|d| t0.checked_add(d));
        let spread = spread::Spread::new(cfg.pacing.overload, work.local.len(), cfg.sockets.hog);
        let mut signal_ids = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let tx = sender.try_clone()?;
            signal_ids.push(signal_hook::low_level::pipe::register(sig, tx)?);
        }
        Ok(Engine {
            cfg,
            work,
            plan,
            poll,
            table: Table::new(plan.capacity),
            sessions: Table::new(usize::MAX),
            wheel: TimerWheel::new(t0, Duration::from_millis(1), 2 * plan.capacity + 16),
            fired: Vec::new(),
            timerfd,
            timer_armed: None,
            _signal: signal,
            signal_ids,
            stats: {
                let mut st = Stats::new();
                if work.targets.len() > 1 {
                    st.servers.resize_with(work.targets.len(), Default::default);
                }
                st.pacing.inflight_cap = catchup.cap();
                if spread.spreads(work.targets.iter().map(|t| t.addr)) {
                    st.pacing.source_addrs = u64::from(spread::ADDRS);
                }
                st
            },
            buf: vec![0; READ_BUFFER],
            completions: Vec::new(),
            leftovers: Vec::new(),
            dirty: Vec::new(),
            h2: h2flush::Held::default(),
            nap: h2nap::Nap::new(cfg.request.http_version == HttpVersion::V2),
            to_close: Vec::new(),
            observer,
            opts: SocketOptions {
                send_buffer: cfg.socket_buffers().0,
                recv_buffer: cfg.socket_buffers().1,
                reset_on_close: cfg.sockets.close_with_reset,
            },
            ports: if cfg.sockets.hog {
                (0..work.local.len().max(1))
                    .map(|_| PortPool::new())
                    .collect()
            } else {
                Vec::new()
            },
            local_rr: 0,
            pacer: pacer::Pacer::new(
                Schedule::new(
                    &cfg.load.period,
                    cfg.load.client_id,
                    plan.stripe,
                    plan.stripes,
                ),
                t0,
                plan.arrivals,
                runtime_end,
                catchup,
                // (A call-rate pool has no catch-up bound: a due call only joins its
                // FIFO; the closed loop has no schedule.)
                !closed_loop && cfg.load.call_rate <= 0.0,
            ),
            spread,
            // A batched call rate wakes on its tick, not before each call.
            spinner: spin::Spinner::new(
                if batch_tick.is_some() {
                    crate::model::pacing::Spin::Off
                } else {
                    cfg.pacing.spin
                },
                mean_period,
            ),
            spare: spare::SpareSlot::default(),
            closed: work
                .closed_loop(cfg)
                .map(|c| closed::ClosedState::new(c, plan.stripe, plan.stripes)),
            pool: (cfg.load.call_rate > 0.0).then(|| {
                dispatch::PoolState::new(
                    cfg.load.num_conns,
                    cfg.load.burst_length,
                    plan.arrivals,
                    (plan.stripe, plan.stripes),
                    batch_tick,
                )
            }),
            calls: None,
            t0,
            timeout: timers::duration_of(cfg.sockets.timeout),
            reply_timeout: timers::duration_of(cfg.sockets.timeout + cfg.sessions.think_timeout),
            next_call_id: u64::from(plan.stripe),
            done: 0,
            live: 0,
            iteration: 0,
            bursts: burst::Bursts::default(),
            tally,
            next_tick: t0 + TIMELINE_INTERVAL,
            progress,
            metrics: None,
            next_progress: progress.map(|_| t0 + crate::engine::progress::INTERVAL),
            runtime_end,
            stop: None,
            interrupted: false,
        })
    }

    /// Publishes into this metrics slot (`--metrics-listen`) every second and at
    /// the end.
    pub(crate) fn with_metrics(mut self, slot: Option<&'c crate::engine::metrics::Slot>) -> Self {
        if let Some(slot) = slot {
            self.metrics = Some(crate::engine::metrics::Publisher::new(slot));
            let first = self.t0 + crate::engine::progress::INTERVAL;
            self.next_progress.get_or_insert(first);
        }
        self
    }

    /// Adds the observer of completed requests (ab's `-g`).
    pub(crate) fn with_call_observer(mut self, o: Option<Box<dyn CallObserver + 'c>>) -> Self {
        self.calls = o;
        self
    }

    /// Runs until the end condition, `--runtime` or a signal.
    pub(crate) fn run(mut self) -> io::Result<Outcome> {
        let mut events = Events::with_capacity(1024);
        let now = Instant::now();
        match &self.closed {
            Some(c) if c.can_start() => self.pacer.insert(now),
            Some(_) => {}
            None => self.pacer.start(),
        }
        if self.pacer.next().is_some() && self.pool.is_some() {
            self.pool_open_all(now);
            self.pool_pace_start(now)?;
        }
        if self.pacer.next().is_some() {
            self.on_arrivals(now);
        } else {
            self.stop = Some(now);
        }
        while self.stop.is_none() {
            let nap = if self.nap.wanted() {
                let now = Instant::now();
                // A batched call rate's next call is due too (its own timer wakes a
                // poll, not a nap).
                let call = self.pacer.next().filter(|_| self.pool_batched());
                let due = h2nap::sooner(self.next_deadline(now), call);
                self.nap.next(now, due)
            } else {
                None
            };
            let timeout = match nap {
                Some(nap) => {
                    // Off the poll's wait queue: arriving replies wake nobody (`h2nap`).
                    std::thread::sleep(nap);
                    Some(Duration::ZERO)
                }
                None => self.arm_timer()?,
            };
            // The deadline the engine sleeps until (the timerfd's), if it sleeps.
            let sleeps_until = if timeout.is_none() {
                self.timer_armed
            } else {
                None
            };
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            self.iteration += 1;
            self.pacer.turn();
            let woke = Instant::now();
            let mut io_events = 0;
            for ev in events.iter() {
                match ev.token() {
                    TIMER_TOKEN => {
                        if let Some(deadline) = sleeps_until {
                            self.on_wakeup(woke.saturating_duration_since(deadline));
                        }
                    }
                    pool::PACE_TOKEN => self.pool_on_pace(timeout.is_none().then_some(woke)),
                    _ => io_events += 1,
                }
            }
            let io_ready = io_events > 0;
            self.nap.after_turn(io_events);
            if !io_ready {
                self.spin_to_arrival();
            }
            // Due arrivals first: pacing should not wait behind this batch's I/O.
            if self.stop.is_none() {
                self.on_arrivals(Instant::now());
            }
            self.h2.hold(true);
            // When the previous I/O event's handling began (`spin`).
            let mut handling = None;
            for ev in events.iter() {
                if !matches!(ev.token(), TIMER_TOKEN | SIGNAL_TOKEN | pool::PACE_TOKEN)
                    && self.stop.is_none()
                {
                    handling = Some(self.arrival_before_event(handling));
                }
                match ev.token() {
                    TIMER_TOKEN => {
                        self.timer_armed = None;
                        self.timerfd.drain();
                    }
                    SIGNAL_TOKEN => {
                        self.interrupted = true;
                        self.stop.get_or_insert_with(Instant::now);
                    }
                    // (Its calls were issued with this turn's due arrivals.)
                    pool::PACE_TOKEN => {}
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
            self.h2.hold(false);
            self.flush_held();
            if self.stop.is_none() {
                self.on_deadlines(Instant::now());
            }
            self.tally.publish(&self.stats);
        }
        let end = self.stop.unwrap_or_else(Instant::now);
        self.count_unstarted(end);
        self.pool_finish(end);
        self.stats.pacing.deferred = self.pacer.catchup.deferred;
        self.stats.pacing.waited = self.pacer.catchup.waited;
        self.on_tick(end);
        let at = end.saturating_duration_since(self.t0).as_secs_f64();
        if at > self.stats.timeline.intervals.len() as f64 {
            self.stats.roll_timeline(self.live, at);
        }
        if let Some(m) = self.metrics.as_mut() {
            m.publish(&self.stats, self.live, Instant::now(), true);
        }
        self.tally.stop(&self.stats);
        if self.cfg.output.debug > 0 && self.nap.taken > 0 {
            eprintln!(
                "rshperf: {} HTTP/2 naps in {} poll turns",
                self.nap.taken, self.iteration
            );
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
        let now = Instant::now();
        let Some(deadline) = self.next_deadline(now) else {
            return Ok(None);
        };
        if deadline <= now {
            return Ok(Some(Duration::ZERO));
        }
        if self.timer_armed != Some(deadline) {
            self.timerfd.set(Some(deadline - now))?;
            self.timer_armed = Some(deadline);
        }
        Ok(None)
    }

    /// The earliest thing the engine must wake for (as of `now`), if any.
    fn next_deadline(&self, now: Instant) -> Option<Instant> {
        // An arrival held back until a connection closes needs no timer; the others
        // wake the engine early enough to spin to them (`spin`).
        let arrival = if self.pool_batched() {
            // A batched call rate has its own periodic timer (`pool`).
            None
        } else {
            let window = self.spinner.window();
            self.pacer
                .wake(now, window, self.live, self.arrivals_capped())
        };
        [
            arrival,
            self.wheel.next_deadline(),
            Some(self.next_tick),
            self.runtime_end,
            self.next_progress,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn on_deadlines(&mut self, now: Instant) {
        self.on_arrivals(now);
        self.on_timers(now);
        self.on_tick(now);
        if let Some(t) = self.next_progress.filter(|t| now >= *t) {
            if let Some(slot) = self.progress {
                slot.publish(&self.stats);
            }
            if let Some(m) = self.metrics.as_mut() {
                m.publish(&self.stats, self.live, now, false);
            }
            self.next_progress = Some(t + crate::engine::progress::INTERVAL);
        }
        if self.runtime_end.is_some_and(|end| now >= end) {
            self.stop.get_or_insert(now);
        }
    }

    fn on_arrivals(&mut self, mut now: Instant) {
        let mut first = true;
        // Calls joined the pool's FIFO in this pass.
        let mut calls = false;
        while let Some(at) = self.pacer.next() {
            // Each arrival's lateness from the clock as it starts, not from the start
            // of a burst.
            if !first {
                now = Instant::now();
            }
            first = false;
            let held = self.stop.is_some() || self.arrivals_capped();
            if !self.pacer.admit(at, now, self.live, held) {
                break;
            }
            if self.closed.is_some() {
                // A unit that fails at once frees its user in `unit_done`, which asks
                // for the next arrival instead of recursing.
                if !self.closed_start(now, at) {
                    break;
                }
                continue;
            }
            self.pacer.begin();
            self.stats.on_lateness(now.saturating_duration_since(at));
            let scheduled = at.saturating_duration_since(self.t0).as_secs();
            self.stats.timeline.offered(scheduled);
            if self.pool.is_some() {
                self.pool_call_due(now, at);
                calls = true;
            } else if self.work.is_session() {
                self.start_session(now);
            } else {
                self.start_request_conn(now, self.arrival_index(), 0);
            }
            if self.pool.is_none() {
                self.flush();
            }
            self.pacer.schedule_next();
        }
        if calls {
            // This turn's due calls, in one pass. (Calls that were already waiting
            // wait for room, and whatever makes room dispatches them.)
            self.pool_issue_due(now);
        }
        self.prepare_spare();
    }

    /// A unit of work (a request-oriented connection or a session) is finished.
    fn on_unit_done(&mut self, now: Instant) {
        self.unit_done(now, 0);
    }

    /// Ends every timeline second that is over by `now`.
    fn on_tick(&mut self, now: Instant) {
        while now >= self.next_tick {
            let at = self
                .next_tick
                .saturating_duration_since(self.t0)
                .as_secs_f64();
            self.stats.roll_timeline(self.live, at);
            self.next_tick += TIMELINE_INTERVAL;
        }
    }

    /// Request-oriented `--max-connections N` (httperf master): an arrival that finds
    /// N connections open waits until one closes (it is then late, and its lateness
    /// is recorded). Never true for session workloads, where the option limits
    /// connections per session.
    fn arrivals_capped(&self) -> bool {
        let cap = self.cfg.load.max_connections;
        cap > 0 && !self.work.is_session() && self.live >= cap
    }

    /// `--overload=degrade`: the engine is behind schedule and holds the arrival due
    /// at `at` back until a connection closes (`catchup`).
    fn waits_for_close(&self, at: Instant, now: Instant) -> bool {
        self.pacer.waits_for_close(at, now, self.live)
    }

    /// A timer wake-up came `late` after its deadline: measured, and the spin window
    /// follows it (`--spin=auto`).
    fn on_wakeup(&mut self, late: Duration) {
        self.spinner.on_wakeup(late);
        self.stats
            .pacing
            .on_wakeup(u64::try_from(late.as_micros()).unwrap_or(u64::MAX));
    }

    /// With nothing else to do, spins to the next arrival when it is due within the
    /// spin window (`--spin`).
    fn spin_to_arrival(&mut self) {
        let Some(at) = self.pacer.next() else {
            return;
        };
        if self.closed.is_some() || self.arrivals_capped() || self.stop.is_some() {
            return;
        }
        if let Some(spun) = self.spinner.spin_until(&Monotonic, at) {
            let p = &mut self.stats.pacing;
            p.spins += 1;
            p.spin_us = p
                .spin_us
                .saturating_add(u64::try_from(spun.as_micros()).unwrap_or(u64::MAX));
        }
    }

    /// Counts the arrivals due before the run ended (at `end`, or `--runtime`'s end)
    /// that it never started; the policy defers arrivals but drops none otherwise.
    fn count_unstarted(&mut self, end: Instant) {
        if self.closed.is_some() {
            return;
        }
        self.stats.pacing.unstarted += self.pacer.unstarted(end);
    }

    /// Records httperf's connect burst: connects made within one loop iteration. The
    /// running burst is compared with the maximum only when a connect happens in a
    /// later iteration (so one connection gives 0, as in httperf).
    fn note_connect_burst(&mut self) {
        self.bursts
            .connect(self.iteration, &mut self.stats.max_burst);
    }

    fn ctx(&mut self) -> (&mut Table<Conn>, Ctx<'_>, &mut [u8]) {
        let ctx = Ctx {
            stats: &mut self.stats,
            timeout: self.timeout,
            reply_timeout: self.reply_timeout,
            debug: self.cfg.output.debug,
            completions: &mut self.completions,
            observer: self
                .observer
                .as_deref_mut()
                .map(|o| o as &mut dyn ReplyObserver),
        };
        (&mut self.table, ctx, &mut self.buf)
    }

    fn on_event(&mut self, id: ConnId, ready: Ready) {
        let now = Instant::now();
        let (table, mut ctx, buf) = self.ctx();
        let Some(conn) = table.get_mut(id) else {
            return;
        };
        let mut step = Step::Continue;
        if conn.phase != Phase::Active {
            let result = match conn.phase {
                Phase::Connecting if ready.writable => conn.on_connect_ready(now, &mut ctx),
                Phase::Handshaking => conn.on_handshake_ready(now, &mut ctx),
                _ => return,
            };
            match result {
                Ok(true) => {
                    // Queue the first calls, then handle the rest of this event: data
                    // or a FIN may have arrived with the connect completion, and an
                    // edge-triggered poll will not report them again.
                    self.on_connected(id, now);
                    self.flush();
                    let (table, mut ctx, buf) = self.ctx();
                    let Some(conn) = table.get_mut(id) else {
                        return;
                    };
                    if ready.readable {
                        step = conn.on_readable(now, buf, ready.closed, &mut ctx);
                    }
                }
                Ok(false) => return,
                Err(kind) => {
                    self.report_tls_error(id);
                    step = Step::Fail(kind);
                }
            }
        } else {
            if ready.writable && conn.wants_write() {
                step = conn.on_writable(now, &mut ctx);
            }
            if step == Step::Continue && ready.readable {
                step = conn.on_readable(now, buf, ready.closed, &mut ctx);
            }
        }
        self.process_completions(now);
        self.after_step(id, step, now);
        if self.pool_has_waiting() {
            // A connection may have room now (an HTTP/2 server's SETTINGS, a reply).
            self.pool_dispatch(now);
        }
        // HTTP/2 answers to what was read (acks, window updates) wait for the
        // connection's one write of this turn (`h2flush`).
        if self
            .table
            .get_mut(id)
            .is_some_and(|c| c.is_h2() && c.wants_write())
        {
            self.mark_dirty(id);
        }
        self.flush();
    }

    /// Hands completed calls to their workload.
    fn process_completions(&mut self, now: Instant) {
        while !self.completions.is_empty() {
            let batch = std::mem::take(&mut self.completions);
            for c in &batch {
                self.nap
                    .on_response(c.first_byte.saturating_duration_since(c.call.send_start));
                let owner = self.table.get_mut(c.conn).map(|conn| conn.owner);
                match owner {
                    Some(Owner::Request { .. }) => self.request_on_completion(c, now),
                    Some(Owner::Pool { .. }) => self.pool_on_completion(c, now),
                    Some(Owner::Session { sess, slot }) => {
                        self.session_on_completion(c, sess, slot, now)
                    }
                    Some(Owner::Orphan) | None => {}
                }
            }
            let mut batch = batch;
            batch.clear();
            if self.completions.is_empty() {
                self.completions = batch;
            }
        }
    }

    fn after_step(&mut self, id: ConnId, step: Step, now: Instant) {
        match step {
            Step::Continue => self.arm_watchdog(id),
            Step::Close => self.finish(id, None, now),
            Step::PeerClosed => {
                let busy = self.table.get_mut(id).is_some_and(|c| c.outstanding() > 0);
                self.finish(id, busy.then_some(ErrorKind::ConnReset), now);
            }
            Step::Fail(kind) => self.finish(id, Some(kind), now),
        }
    }

    /// A connection became established: the workload may send.
    fn on_connected(&mut self, id: ConnId, now: Instant) {
        let owner = self.table.get_mut(id).map(|c| c.owner);
        match owner {
            Some(Owner::Request { .. }) => self.request_on_connected(id, now),
            Some(Owner::Pool { .. }) => self.pool_dispatch(now),
            Some(Owner::Session { sess, .. }) => self.session_on_connected(id, sess),
            _ => {}
        }
        self.mark_dirty(id);
    }

    /// Queues call `what` on connection `id` (bytes rendered into its send buffer).
    fn issue(
        &mut self,
        id: ConnId,
        what: CallRef,
        cookie: Option<&[u8]>,
        retries: u8,
        now: Instant,
    ) {
        self.issue_at(id, what, cookie, retries, now, now);
    }

    /// `issue` of a call due at `due` (a `--call-rate` call's scheduled time).
    fn issue_at(
        &mut self,
        id: ConnId,
        what: CallRef,
        cookie: Option<&[u8]>,
        retries: u8,
        now: Instant,
        due: Instant,
    ) {
        // Call ids are unique over all engines: this engine's n-th call is
        // stripe + n × stripes.
        let call_id = self.next_call_id;
        self.next_call_id += u64::from(self.plan.stripes.max(1));
        let timeout = self.timeout;
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        let host = self
            .work
            .targets
            .get(conn.target)
            .map_or("", |t| t.host.as_str());
        let printing = self.observer.is_some();
        let (len, printed) = if conn.is_h2() {
            // (`--wsesspage` is refused with HTTP/2: see `Config::unsupported`.)
            let (len, header) = conn.stage_h2(&self.work.requests, what, host, cookie);
            let mut text = Vec::new();
            let h = if printing {
                // The request as header lines, pseudo-headers first.
                self.work
                    .requests
                    .render_h2_text(what, host, cookie, &mut text)
            } else {
                0
            };
            let _ = header;
            (len, printing.then_some((text, h)))
        } else {
            let page_uri = page::call_uri(&mut self.sessions, conn.owner, what);
            let requests = &self.work.requests;
            let q = conn.send_queue();
            let (len, header) = match page_uri {
                Some(uri) => requests.render_uri(uri.as_bytes(), host, cookie, q),
                None => requests.render(what, host, cookie, q),
            };
            // `--print-request` sees the bytes as sent; the send queue may hold the
            // body by reference, so printing renders a copy (not the hot path).
            let printed = printing.then(|| {
                let mut text = Vec::new();
                match page_uri {
                    Some(uri) => requests.render_uri(uri.as_bytes(), host, cookie, &mut text),
                    None => requests.render(what, host, cookie, &mut text),
                };
                (text, header)
            });
            (len, printed)
        };
        if self.cfg.output.verbose > 0 && self.cfg.output.json.as_deref() != Some("-") {
            if let CallRef::Uri(i) = what {
                let uri = self
                    .work
                    .requests
                    .uris
                    .get(i as usize)
                    .map_or("", String::as_str);
                let _ = writeln!(io::stdout().lock(), "rshperf: accessing URI `{uri}'");
            }
        }
        if let (Some(p), Some((text, h))) = (self.observer.as_deref_mut(), printed) {
            p.request(call_id, &text, h);
        }
        let call = Call {
            id: call_id,
            what,
            len,
            head: self.work.requests.is_head(what),
            send_start: now,
            written: None,
            due,
            retries,
        };
        conn.queue(call, now, timeout);
        self.mark_dirty(id);
    }

    fn mark_dirty(&mut self, id: ConnId) {
        if !self.dirty.contains(&id) {
            self.dirty.push(id);
        }
    }

    /// Writes what was queued on dirty connections and closes the ones the workload
    /// finished with.
    fn flush(&mut self) {
        loop {
            let now = Instant::now();
            if let Some(id) = self.to_close.pop() {
                self.finish(id, None, now);
                continue;
            }
            let Some(id) = self.dirty.pop() else { break };
            if self.table.get_mut(id).is_some_and(|c| c.is_h2()) && self.h2.held(id) {
                continue;
            }
            let (table, mut ctx, _) = self.ctx();
            let Some(conn) = table.get_mut(id) else {
                continue;
            };
            let step = if conn.wants_write() {
                conn.on_writable(now, &mut ctx)
            } else {
                Step::Continue
            };
            self.after_step(id, step, now);
        }
    }

    /// Makes sure a timer is pending no later than the connection's deadline. A later
    /// deadline leaves the earlier timer in place: it re-arms itself when it fires.
    fn arm_watchdog(&mut self, id: ConnId) {
        if let Some(conn) = self.table.get_mut(id) {
            let deadline = conn.deadline();
            timers::arm(
                &mut self.wheel,
                &mut conn.armed,
                deadline,
                Timer::Watchdog(id),
            );
        }
    }

    fn on_timers(&mut self, now: Instant) {
        let mut fired = std::mem::take(&mut self.fired);
        self.wheel.expire(now, |t| fired.push(t));
        for &t in &fired {
            match t {
                Timer::Watchdog(id) => self.on_watchdog(id, now),
                Timer::Think(sess) => self.session_on_think(sess, now),
            }
        }
        fired.clear();
        self.fired = fired;
        self.flush();
    }

    fn on_watchdog(&mut self, id: ConnId, now: Instant) {
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        let deadline = conn.deadline();
        match timers::fired(&mut conn.armed, deadline, now) {
            timers::Fired::TimedOut => {
                if self.cfg.output.debug > 0 {
                    eprintln!("rshperf: connection {} timed out", id.index());
                }
                self.finish(id, Some(ErrorKind::ClientTimo), now);
            }
            timers::Fired::Rearm => self.arm_watchdog(id),
            timers::Fired::Idle => {}
        }
    }

    /// Ends connection `id`: counts the failure (if any) and its lifetime (if it had a
    /// reply), closes the socket, frees the slot, tells its owner.
    fn finish(&mut self, id: ConnId, fail: Option<ErrorKind>, now: Instant) {
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        if let Some((_, t)) = conn.armed.take() {
            self.wheel.cancel(t);
        }
        if conn.tls_error.is_some() {
            self.report_tls_error(id);
        }
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        if let Some(kind) = fail {
            self.stats.on_error(kind);
            if let Some(srv) = self.stats.servers.get_mut(conn.target) {
                srv.errors[kind.index()] += 1;
            }
            if self.cfg.output.debug > 0 {
                eprintln!("rshperf: connection {} failed: {kind:?}", id.index());
            }
        }
        if conn.replies > 0 {
            self.stats
                .on_lifetime(now.saturating_duration_since(conn.started));
        }
        if let Some((pool, port)) = conn.port.take() {
            if let Some(ports) = self.ports.get_mut(pool) {
                ports.release(port);
            }
        }
        if fail.is_none() {
            conn.close_tls();
        }
        // Closing the descriptor also removes it from the epoll set.
        conn.stream = None;
        let owner = conn.owner;
        let replies = conn.replies;
        let mut leftovers = std::mem::take(&mut self.leftovers);
        leftovers.extend(conn.drain_calls());
        if let Some(o) = self.observer.as_deref_mut() {
            for c in &leftovers {
                o.abort(c.id);
            }
        }
        self.table.free(id);
        self.dirty.retain(|d| *d != id);
        self.conn_gone();
        self.leftovers = leftovers;
        self.on_closed(owner, Some(id), fail, replies, now);
        self.leftovers.clear();
    }

    /// Tells a connection's owner it is gone (`self.leftovers` holds its unanswered
    /// calls).
    fn on_closed(
        &mut self,
        owner: Owner,
        id: Option<ConnId>,
        fail: Option<ErrorKind>,
        replies: u64,
        now: Instant,
    ) {
        match owner {
            Owner::Request { .. } if self.closed.is_some() => {
                self.closed_request_end(owner, fail, now)
            }
            Owner::Request { .. } => self.on_unit_done(now),
            Owner::Pool { slot } => self.pool_on_closed(slot, fail, replies, now),
            Owner::Session { sess, slot } => {
                self.session_on_conn_closed(sess, slot, id, fail, replies, now)
            }
            Owner::Orphan => {}
        }
    }

    /// The next URI-generator call (`--wlog`/`--wset`), or the fixed request. None when
    /// a non-looping `--wlog` is exhausted (the test then ends, as in httperf).
    fn next_call_ref(&mut self, now: Instant, index: u64) -> Option<CallRef> {
        self.next_call_ref_to(now, index, 0)
    }

    /// `next_call_ref` for a connection to `target` (ab and lb: a URI per target).
    fn next_call_ref_to(&mut self, now: Instant, index: u64, target: usize) -> Option<CallRef> {
        let r = self.work.call_ref_to(index, target);
        if r.is_none() {
            self.stop.get_or_insert(now);
        }
        r
    }

    /// The global number of the arrival just started (`pacer.started()` counts this
    /// engine's arrivals): k = stripe + (n − 1) × stripes.
    fn arrival_index(&self) -> u64 {
        let started = self.pacer.started();
        u64::from(self.plan.stripe) + started.saturating_sub(1) * u64::from(self.plan.stripes)
    }

    /// Whether stdout carries text (not with `--json=-`, where it is the JSON only).
    fn text_out(&self) -> bool {
        self.cfg.output.json.as_deref() != Some("-")
    }

    /// HTTP/1.0 connections carry one call at a time and are closed after each reply.
    fn http10(&self) -> bool {
        self.cfg.request.http_version == HttpVersion::V10
    }
}
