//! The engine: one thread, one I/O backend (epoll or io_uring: `backend`), one
//! connection table, one timer wheel.
//!
//! Owns the event loop: arrivals on the absolute schedule (catch-up bursts recorded for
//! "Maximum connect burst length", bounded by the overload policy in `catchup`, with
//! loopback source addresses from `spread`), connection set-up and teardown, dispatch
//! of readiness to `conn::Conn`, watchdog and think-time timers, `--runtime`,
//! SIGINT/SIGTERM, and the end condition. Sleeps in the poll until the next I/O or
//! deadline (a timerfd gives sub-millisecond wakeups), waking a little early to spin
//! to the next arrival, and starting an arrival that falls due amid a batch of
//! events before the rest of the batch (`spin`): no busy polling. While HTTP/2 or
//! HTTP/3 replies are slow to come (a saturated server), it naps briefly instead of
//! blocking in the poll (`nap`).
//! What to send is decided by the workload halves in `request` (one connection per
//! arrival) and `session` (`--wsess`, `--wsesslog`, and with `page` `--wsesspage`);
//! when arrivals are not scheduled but replace finished units (sequential mode,
//! `--concurrency`, ab, lb), `closed` decides; socket and TLS set-up is in `connect`,
//! the next scheduled arrival's socket is made ahead of its time in `spare`.
//! Feeds one `Stats` and publishes to the run's `tally` (open connections, figures
//! for the reply-rate samples and `-v`/`--periodic-stats` lines, which the runner's
//! clock thread takes and prints); the runner merges engines and prints the report.
//! The engine's work is split by job: `new` builds it, `run` is the loop and its
//! deadlines, `arrivals` starts due arrivals, `events` handles a connection's
//! readiness, `issue` queues and writes calls, `watchdog` fires the timer wheel,
//! `finish` closes a connection and tells its owner. This file declares the engine's
//! state (`Engine`) and what it takes and gives (`Plan`, `Outcome`).

mod affinity;
mod arrivals;
pub(crate) mod backend;
mod burst;
mod catchup;
mod closed;
mod connect;
mod dispatch;
mod events;
mod finish;
mod h2flush;
mod issue;
mod log;
mod nap;
mod new;
mod pacer;
mod page;
mod pool;
mod portuse;
mod replay;
mod request;
#[cfg(test)]
mod rig;
mod run;
mod session;
mod spare;
mod spin;
mod spread;
mod timers;
mod warmup;
mod watchdog;

use std::time::{Duration, Instant};

use mio::net::UnixStream;
use mio::Token;

use crate::engine::conn::bufs::BufPool;
use crate::engine::conn::{Completion, Conn, ReplyObserver};
use crate::engine::tally::EngineTally;
use crate::model::call::Call;
use crate::model::config::{Config, HttpVersion};
use crate::model::stats::Stats;
use crate::model::workload::Workload;
use crate::wire::net::{PortPool, SocketOptions};
use crate::wire::table::{ConnId, Table};
use crate::wire::timer::TimerWheel;

pub(crate) use closed::CallObserver;
pub(crate) use session::Session;

const TIMER_TOKEN: Token = Token(usize::MAX);
const SIGNAL_TOKEN: Token = Token(usize::MAX - 1);
/// Timeline interval (`stats::timeline`).
const TIMELINE_INTERVAL: Duration = Duration::from_secs(1);
/// The windows' tick (`stats::windows`).
const WINDOW_TICK: Duration = Duration::from_millis(crate::model::stats::windows::TICK_MS);
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
    /// Its I/O backend.
    pub(crate) io: backend::Kind,
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
    /// Readiness or completions (`backend`).
    io: backend::Backend,
    table: Table<Conn>,
    sessions: Table<Session>,
    wheel: TimerWheel<Timer>,
    fired: Vec<Timer>,
    /// The deadline the backend's timer is set for.
    timer_armed: Option<Instant>,
    /// Read end of the signal pipe: kept so its registration stays valid.
    _signal: UnixStream,
    signal_ids: Vec<signal_hook::SigId>,
    stats: Stats,
    buf: Vec<u8>,
    /// Connection buffers lent to busy connections (`conn::bufs`).
    bufs: BufPool,
    completions: Vec<Completion>,
    leftovers: Vec<Call>,
    /// Connections that got new calls and must be flushed.
    dirty: Vec<ConnId>,
    /// HTTP/2 writes held back to the end of the poll turn (`h2flush`).
    h2: h2flush::Held,
    /// Short sleeps instead of blocking polls while multiplexed replies stream in (`nap`).
    nap: nap::Nap,
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
    /// The local ports held towards each destination (the port budget).
    portuse: portuse::PortUse,
    /// Early wake-up and spinning before arrivals (`--spin`).
    spinner: spin::Spinner,
    /// The next arrival's socket, made ahead (`spare`).
    spare: spare::SpareSlot,
    /// The closed loop (None: arrivals follow `schedule`).
    closed: Option<closed::ClosedState>,
    /// The `--call-rate` pool (None: arrivals are connections or sessions).
    pool: Option<dispatch::PoolState>,
    /// A replay's connections per client or per request, which then take the pool's
    /// calls instead of its slots (None: the pool's round-robin).
    affinity: Option<affinity::Affinity>,
    /// `rshperf replay`: the requests of the calls alive (None: not a replay).
    replay: Option<replay::ReplayCalls>,
    /// Sees every completed request of an ab or lb run (`-g`).
    calls: Option<Box<dyn CallObserver + 'c>>,
    t0: Instant,
    timeout: Option<Duration>,
    reply_timeout: Option<Duration>,
    /// `--stream`: how replies are split into events (None without it).
    stream: Option<crate::engine::conn::events::StreamSetup>,
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
    /// End of the windows' current tick (`stats::windows`).
    next_window: Instant,
    /// `--progress`: where to publish, and when next.
    progress: Option<&'c crate::engine::progress::Slot>,
    /// `--metrics-listen`: this engine's publisher (on the same tick).
    metrics: Option<crate::engine::metrics::Publisher<'c>>,
    next_progress: Option<Instant>,
    stop: Option<Instant>,
    interrupted: bool,
    /// `--timeline`'s stream: where each ended second goes, and this engine's index.
    feed: Option<(&'c crate::engine::feed::SecondFeed, usize)>,
    /// `--request-log`: this engine's records.
    log: Option<crate::engine::reqlog::Logger<'c>>,
    /// The next connection's number (`Conn::serial`): stripe + n × stripes.
    next_conn_serial: u64,
    /// While an arrival starts: when it was scheduled (`Conn::scheduled`).
    arrival_at: Option<Instant>,
}

impl<'c> Engine<'c> {
    /// Whether stdout carries text (not with `--json=-`, where it is the JSON only).
    fn text_out(&self) -> bool {
        self.cfg.output().json() != Some("-")
    }

    /// HTTP/1.0 connections carry one call at a time and are closed after each reply.
    fn http10(&self) -> bool {
        self.cfg.request().http_version() == HttpVersion::V10
    }
}
