//! Building an engine: its I/O backend with the signal pipe watched by it, the
//! connection and session tables, the timer wheel, the arrival schedule with its
//! overload policy, and the optional pieces a run asks for (closed loop, call-rate
//! pool, metrics publisher, call observer).
//!
//! Owns `Engine::new` and its `with_*` additions; the fields are declared in the
//! module (`event_loop`), the loop that runs them is `run`. Called by `execute`.

use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use mio::net::UnixStream;

use crate::engine::conn::bufs::BufPool;
use crate::engine::conn::events::StreamSetup;
use crate::engine::conn::ReplyObserver;
use crate::engine::tally::EngineTally;
use crate::model::config::ReplayConnections;
use crate::model::config::{Config, HttpVersion};
use crate::model::stats::Stats;
use crate::model::workload::rate::Schedule;
use crate::model::workload::{stripe_share, Workload};
use crate::wire::net::{PortPool, SocketOptions};
use crate::wire::table::Table;
use crate::wire::timer::TimerWheel;

use super::{
    affinity, backend, burst, catchup, closed, dispatch, h2flush, nap, pacer, portuse, spare, spin,
    spread, timers, CallObserver, Engine, Plan, READ_BUFFER, SIGNAL_TOKEN, TIMELINE_INTERVAL,
    WINDOW_TICK,
};

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
        let mut io = backend::Backend::new(plan.io)?;
        let (rx, sender) = std::os::unix::net::UnixStream::pair()?;
        rx.set_nonblocking(true)?;
        sender.set_nonblocking(true)?;
        let signal = UnixStream::from_std(rx);
        io.watch(signal.as_raw_fd(), SIGNAL_TOKEN)?;
        let closed_loop = work.closed_loop(cfg).is_some();
        // Seconds between this engine's arrivals (its stripe of the schedule).
        let mean_period = if closed_loop {
            0.0
        } else {
            cfg.load().period().mean() * f64::from(plan.stripes.max(1))
        };
        let catchup = catchup::CatchUp::new(cfg.pacing().overload(), mean_period, plan.capacity);
        let batch_tick = if cfg.load().call_rate() > 0.0 {
            dispatch::batch_tick(mean_period, cfg.pacing().spin())
        } else {
            None
        };
        let runtime_end = timers::duration_of(cfg.load().runtime()).and_then(|d| t0.checked_add(d));
        // Each engine has its share of the ports before spreading.
        let spread = spread::Spread::new(
            cfg.pacing().overload(),
            work.local.len(),
            cfg.sockets().hog(),
            crate::wire::net::port_pressure_budget() / u64::from(plan.stripes.max(1)),
        );
        // A replay's pass over the log: the pacer reads its offsets, the call store
        // its requests.
        let feed = work
            .replay
            .as_ref()
            .map(|r| r.feed(plan.stripe, plan.stripes));
        let affinity = affinity_of(cfg, work, plan);
        let mut signal_ids = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let tx = sender.try_clone()?;
            signal_ids.push(signal_hook::low_level::pipe::register(sig, tx)?);
        }
        Ok(Engine {
            cfg,
            work,
            plan,
            io,
            table: Table::new(plan.capacity),
            sessions: Table::new(usize::MAX),
            wheel: TimerWheel::new(t0, Duration::from_millis(1), 2 * plan.capacity + 16),
            fired: Vec::new(),
            timer_armed: None,
            _signal: signal,
            signal_ids,
            stats: {
                let mut st = Stats::new();
                st.timeline.target = cfg
                    .load()
                    .rate_profile()
                    .map(crate::model::stats::timeline::Target::new);
                if work.targets.len() > 1 {
                    st.servers.resize_with(work.targets.len(), Default::default);
                }
                st.pacing.inflight_cap = catchup.cap();
                if cfg.request().stream().is_some() {
                    st.stream.engines = 1;
                    st.stream.from_schedule = u64::from(cfg.load().call_rate() > 0.0);
                }
                st
            },
            buf: vec![0; READ_BUFFER],
            bufs: BufPool::new(),
            completions: Vec::new(),
            leftovers: Vec::new(),
            dirty: Vec::new(),
            h2: h2flush::Held::default(),
            nap: nap::Nap::new(matches!(
                cfg.request().http_version(),
                HttpVersion::V2 | HttpVersion::V3
            )),
            to_close: Vec::new(),
            observer,
            opts: SocketOptions {
                send_buffer: cfg.socket_buffers().0,
                recv_buffer: cfg.socket_buffers().1,
                reset_on_close: cfg.sockets().close_with_reset(),
                nodelay: !single_write(cfg, work),
            },
            ports: if cfg.sockets().hog() {
                (0..work.local.len().max(1))
                    .map(|_| PortPool::new())
                    .collect()
            } else {
                Vec::new()
            },
            local_rr: 0,
            pacer: pacer::Pacer::new(
                match (&feed, &work.profile) {
                    (Some(feed), _) => Schedule::given(feed.clone()),
                    (None, Some(p)) => p.schedule(cfg, plan.stripe, plan.stripes),
                    (None, None) => Schedule::new(
                        cfg.load().period(),
                        cfg.load().client_id(),
                        plan.stripe,
                        plan.stripes,
                    ),
                },
                t0,
                plan.arrivals,
                runtime_end,
                catchup,
                // (A call-rate pool has no catch-up bound: a due call only joins its
                // FIFO; the closed loop has no schedule.)
                !closed_loop && cfg.load().call_rate() <= 0.0,
            ),
            spread,
            portuse: {
                let (reuse, timestamps) = crate::wire::net::time_wait_reuse();
                portuse::PortUse::new(t0, reuse, timestamps)
            },
            // A batched call rate wakes on its tick, not before each call.
            spinner: spin::Spinner::new(
                if batch_tick.is_some() {
                    crate::model::pacing::Spin::Off
                } else {
                    cfg.pacing().spin()
                },
                mean_period,
            ),
            spare: spare::SpareSlot::default(),
            closed: work
                .closed_loop(cfg)
                .map(|c| closed::ClosedState::new(c, plan.stripe, plan.stripes)),
            pool: (cfg.load().call_rate() > 0.0).then(|| {
                dispatch::PoolState::new(
                    // Connections per client or per request are the affinity's.
                    if affinity.is_some() {
                        0
                    } else {
                        cfg.load().num_conns()
                    },
                    cfg.load().burst_length(),
                    plan.arrivals,
                    (plan.stripe, plan.stripes),
                    batch_tick,
                )
            }),
            affinity,
            replay: feed.map(|f| super::replay::ReplayCalls::new(work, f)),
            calls: None,
            t0,
            timeout: timers::duration_of(cfg.sockets().timeout()),
            reply_timeout: timers::duration_of(
                cfg.sockets().timeout() + cfg.sessions().think_timeout(),
            ),
            stream: cfg.request().stream().map(|choice| StreamSetup {
                choice,
                gap_timeout: timers::duration_of(cfg.request().stream_gap_timeout()),
                from_schedule: cfg.load().call_rate() > 0.0,
            }),
            next_call_id: u64::from(plan.stripe),
            done: 0,
            live: 0,
            iteration: 0,
            bursts: burst::Bursts::default(),
            tally,
            next_tick: t0 + TIMELINE_INTERVAL,
            next_window: t0 + WINDOW_TICK,
            progress,
            metrics: None,
            next_progress: progress.map(|_| t0 + crate::engine::progress::INTERVAL),
            stop: None,
            interrupted: false,
            feed: None,
            log: None,
            next_conn_serial: u64::from(plan.stripe),
            arrival_at: None,
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

    /// Hands each second this engine ends to `feed` as engine `j` (`--timeline`).
    pub(crate) fn with_feed(
        mut self,
        feed: Option<&'c crate::engine::feed::SecondFeed>,
        j: usize,
    ) -> Self {
        self.feed = feed.map(|f| (f, j));
        self
    }

    /// Logs every call into `feed` (`--request-log`).
    pub(crate) fn with_records(
        mut self,
        feed: Option<&'c crate::engine::reqlog::RecordFeed>,
    ) -> Self {
        self.log = feed.map(|f| crate::engine::reqlog::Logger::new(f, self.t0));
        self
    }

    /// Adds the observer of completed requests (ab's `-g`).
    pub(crate) fn with_call_observer(mut self, o: Option<Box<dyn CallObserver + 'c>>) -> Self {
        self.calls = o;
        self
    }
}

/// A replay's connections per client or per request (the Config's mode; None: the
/// pool's), with this engine's share of the cap: the process's cap split over its
/// threads (thread j of partition I has stripe I + jN), at least one.
fn affinity_of(cfg: &Config, work: &Workload, plan: Plan) -> Option<affinity::Affinity> {
    let replay = work.replay.as_ref()?;
    let per_request = match cfg.load().replay()?.connections() {
        ReplayConnections::PerClient => false,
        ReplayConnections::PerRequest => true,
        ReplayConnections::Pool => return None,
    };
    let parts = cfg.load().partition().1.max(1);
    let (thread, threads) = (plan.stripe / parts, (plan.stripes / parts).max(1));
    let share = stripe_share(replay.cap, thread, threads);
    Some(affinity::Affinity::new(
        per_request,
        usize::try_from(share).unwrap_or(usize::MAX),
    ))
}

/// Whether every connection of the run carries one bodiless HTTP/1.x request over
/// plain TCP, written at once to a fresh socket: no write ever follows
/// unacknowledged data, so Nagle's algorithm never holds one (TCP_NODELAY would
/// be a system call per connection for nothing).
fn single_write(cfg: &Config, work: &Workload) -> bool {
    cfg.load().num_calls() <= 1
        && cfg.load().call_rate() <= 0.0
        && cfg.request().http_version() != HttpVersion::V2
        && cfg.request().body_file().is_none()
        && cfg.request().wlog().is_none()
        && cfg.sessions().wsess().is_none()
        && cfg.sessions().wsesslog().is_none()
        && cfg.sessions().wsesspage().is_none()
        && work.tls.is_none()
}
