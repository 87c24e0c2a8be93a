//! Running the engines of one run: `execute` starts them, waits and returns the
//! `RunResult`.
//!
//! Owns process-wide set-up (descriptor limit, `--start-at`'s wait, `--pin`,
//! `--realtime`), the split of the global arrival schedule into stripes (engine j of N
//! takes arrivals k ≡ j mod N), the shared start time, the engines' shared tally and
//! its clock thread (reply-rate samples, `-v` and `--periodic-stats` lines, the exact
//! count of concurrent connections), live progress and metrics publishing, and CPU
//! accounting (the engine threads' own CPU time, so that `demo`'s in-process server or
//! a test harness is not counted, and their waits for a CPU), and what the machine did
//! meanwhile (`machine`: run queue, steal, CPU quota). Prints the echo line when asked, and what the
//! engines trace while they run; the report is the front end's. Called by every front
//! end that runs a workload (the classic run, `sweep`, `ab`, `lb`, `demo`).

use std::io::{self, Write};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::engine::conn::ReplyObserver;
use crate::engine::error::StartupError;
use crate::engine::event_loop::{backend, CallObserver, Engine, Outcome, Plan};
use crate::engine::feed::SecondFeed;
use crate::engine::interrupt;
use crate::engine::machine;
use crate::engine::metrics::{Exporter, RunLabels, Slot};
use crate::engine::print::Printer;
use crate::engine::progress::{self, Board};
use crate::engine::tally::{self, ClockOptions, Tally};
use crate::model::config::{Config, StartAt, MAX_START_DELAY};
use crate::model::run::{Machine, RunInfo, RunMeta, RunResult};
use crate::model::stats::{RateSample, Stats};
use crate::model::workload::{stripe_arrivals, Workload};
use crate::wire::net;

/// Descriptors kept free for stdio, the poll, timers, signal pipes and files.
const RESERVED_FDS: u64 = 16;

/// How `execute` runs: what it may print while the engines run.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExecOptions {
    /// Print the echo line (and `-v`'s descriptor line) on stdout first.
    pub(crate) echo: bool,
}

/// Makes the observer of completed requests of engine j (None: that engine has none).
pub(crate) type CallObserverFactory<'a> =
    dyn Fn(u32) -> Option<Box<dyn CallObserver + 'a>> + Sync + 'a;

/// What a front end adds to the engines of a run besides the configuration (ab's `-g`
/// file sees every request).
#[derive(Clone, Copy, Default)]
pub(crate) struct Hooks<'a> {
    /// The per-call observer of each engine.
    pub(crate) calls: Option<&'a CallObserverFactory<'a>>,
    /// `--metrics-listen`: where the engines publish, and the sweep step (from 1)
    /// the run is.
    pub(crate) metrics: Option<(&'a Exporter, Option<u32>)>,
    /// `--timeline`'s stream: where the engines hand each second as it ends (made for
    /// `cfg.load.threads` engines).
    pub(crate) seconds: Option<&'a SecondFeed>,
    /// `--request-log`: where the engines hand every call's record.
    pub(crate) records: Option<&'a crate::engine::reqlog::RecordFeed>,
}

/// Runs the engines for `cfg` and `work` (built once by the caller with
/// `Workload::from_config`) and returns what they measured. Prints nothing but the
/// echo line when asked, the `--print-*` traces and the `-v`/`--periodic-stats` lines
/// the engines write while running.
pub fn execute(
    cfg: &Config,
    work: &Workload,
    opts: ExecOptions,
) -> Result<RunResult, StartupError> {
    execute_with(cfg, work, opts, Hooks::default())
}

/// `execute` with the front end's `hooks` in the engines.
pub(crate) fn execute_with<'a>(
    cfg: &'a Config,
    work: &'a Workload,
    opts: ExecOptions,
    hooks: Hooks<'a>,
) -> Result<RunResult, StartupError> {
    let start_delay = start_delay(cfg, SystemTime::now());
    let io = backend::choose(cfg)?;
    // Measurements a test replaces, read before anything is sent.
    let inject = std::env::var(machine::INJECT_VAR).ok();
    if let Some(spec) = &inject {
        machine::inject(spec, &mut Machine::default(), &mut Default::default())
            .map_err(StartupError::MachineSpec)?;
    }
    let nofile = net::raise_nofile_limit().map_err(StartupError::Rlimit)?;
    let pin = pin_cores(cfg)?;
    if cfg.pacing().realtime() {
        // Threads started from here on (engines, clock) inherit the policy.
        net::set_thread_fifo(true).map_err(StartupError::Realtime)?;
    }
    let start_wait = StartWait::arm(start_delay).map_err(StartupError::EventLoop)?;
    if opts.echo && text_out(cfg) {
        let mut out = io::stdout().lock();
        // A closed stdout must not stop the run or cause a panic: write errors are
        // ignored.
        let _ = writeln!(out, "{}", cfg.echo_line());
        if cfg.output().verbose() > 0 {
            let _ = writeln!(
                out,
                "rshperf: maximum number of open descriptors = {nofile}"
            );
        }
        let _ = out.flush();
    }

    if start_wait.wait() || interrupt::caught() {
        // Interrupted before the start: the report says so and that nothing was sent.
        let now = SystemTime::now();
        let mut stats = Stats::new();
        stats.interrupted = true;
        return Ok(RunResult {
            stats,
            info: RunInfo {
                duration: 0.0,
                cpu_user: 0.0,
                cpu_system: 0.0,
            },
            meta: RunMeta {
                start: now,
                end: now,
                partition: cfg.load().partition(),
                threads: cfg.load().threads().max(1),
                servers: work.targets.iter().map(|t| t.label.clone()).collect(),
            },
            interrupted: true,
            machine: Machine::default(),
        });
    }
    let threads = cfg.load().threads().max(1);
    let per_engine_fds =
        nofile.saturating_sub(RESERVED_FDS + 4 * u64::from(threads)) / u64::from(threads);
    let capacity = usize::try_from(per_engine_fds.max(1)).unwrap_or(usize::MAX);
    let board = progress::wanted(cfg.output().progress()).then(|| Board {
        slots: (0..threads).map(|_| progress::Slot::default()).collect(),
        done: Default::default(),
    });
    let (wall_start, t0) = anchor(cfg, SystemTime::now(), Instant::now());
    let tally = Tally::new(threads as usize);
    let metric_slots = hooks.metrics.map(|(exporter, step)| {
        let labels = RunLabels {
            step,
            offered_rate: offered_rate(cfg),
            servers: if cfg.target().servers().is_some() {
                work.targets.iter().map(|t| t.label.clone()).collect()
            } else {
                Vec::new()
            },
        };
        exporter.begin_run(threads as usize, labels)
    });
    let shared = Shared {
        board: board.as_ref(),
        tally: &tally,
        pin: pin.as_deref(),
        metrics: metric_slots.as_deref(),
        io,
    };
    let before = machine::snapshot();
    let engines = run_engines(cfg, work, hooks, shared, threads, capacity, t0);
    if cfg.pacing().realtime() {
        // Back to the normal policy (a sweep's report and cool-down, the next step).
        let _ = net::set_thread_fifo(false);
    }
    if let Some((exporter, _)) = hooks.metrics {
        exporter.end_run();
    }
    let (outcomes, samples, run_queue) = engines?;
    let wall_end = SystemTime::now();
    let mut machine = machine::between(&before, &machine::snapshot(), run_queue);

    let mut stats = Stats::new();
    let mut stopped = t0;
    let mut interrupted = false;
    let (mut cpu_user, mut cpu_system) = (Duration::ZERO, Duration::ZERO);
    for (o, cpu) in &outcomes {
        stats.merge(&o.stats).map_err(StartupError::MergeStats)?;
        stopped = stopped.max(o.stopped);
        interrupted |= o.interrupted;
        cpu_user += cpu.user;
        cpu_system += cpu.system;
    }
    // Figures of the run as a whole, which no engine alone knows: the engines shared
    // the open-connection counter, and the clock sampled all of them.
    stats.max_concurrent = tally.peak();
    stats.rate_samples = samples;
    stats.pacing.fd_limit = nofile;
    if let Some(spec) = &inject {
        machine::inject(spec, &mut machine, &mut stats.client)
            .map_err(StartupError::MachineSpec)?;
    }
    let info = RunInfo {
        duration: stopped.saturating_duration_since(t0).as_secs_f64(),
        cpu_user: cpu_user.as_secs_f64(),
        cpu_system: cpu_system.as_secs_f64(),
    };
    let meta = RunMeta {
        start: wall_start,
        end: wall_end,
        partition: cfg.load().partition(),
        threads,
        servers: work.targets.iter().map(|t| t.label.clone()).collect(),
    };
    Ok(RunResult {
        stats,
        info,
        meta,
        interrupted,
        machine,
    })
}

/// The `--start-at` wait: SIGINT and SIGTERM are caught from `arm` (before the echo
/// line, so a signal sent once it is seen is never fatal) until `wait` returns, for
/// callers of `execute` that do not catch them from their start (every front end does:
/// `interrupt::install`).
struct StartWait {
    delay: Duration,
    caught: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl StartWait {
    /// Catches the signals when there is a wait.
    fn arm(delay: Duration) -> io::Result<StartWait> {
        let caught = std::sync::Arc::default();
        let mut ids = Vec::new();
        if !delay.is_zero() {
            for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
                ids.push(signal_hook::flag::register(
                    sig,
                    std::sync::Arc::clone(&caught),
                )?);
            }
        }
        Ok(StartWait { delay, caught, ids })
    }

    /// Waits out the delay from now; true (at once) when a signal came first.
    fn wait(self) -> bool {
        use std::sync::atomic::Ordering;
        let end = Instant::now() + self.delay;
        // Short naps: a signal ends the wait within 20 ms.
        while !self.caught.load(Ordering::Acquire) && !interrupt::caught() {
            let now = Instant::now();
            if now >= end {
                break;
            }
            std::thread::sleep((end - now).min(Duration::from_millis(20)));
        }
        for id in self.ids {
            signal_hook::low_level::unregister(id);
        }
        self.caught.load(Ordering::Acquire)
    }
}

/// `--start-at`: how long to wait, from `now`, before the engines start (zero for a
/// time already past; `build` refused a start more than `MAX_START_DELAY` away).
fn start_delay(cfg: &Config, now: SystemTime) -> Duration {
    let secs = match cfg.load().start_at() {
        None => return Duration::ZERO,
        Some(StartAt::After(s)) => s,
        Some(StartAt::Unix(t)) => {
            let now = now
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64();
            t - now
        }
    };
    Duration::try_from_secs_f64(secs.max(0.0))
        .unwrap_or(MAX_START_DELAY)
        .min(MAX_START_DELAY)
}

/// Longest a wake-up after `--start-at=UNIX` may lag for the schedule to stay
/// anchored at that moment.
const MAX_ANCHOR_LAG: Duration = Duration::from_secs(1);

/// The run's start (wall clock, monotonic) from the wake-up (`now`, `mono`): with
/// `--start-at=UNIX` the schedule begins at that moment itself, so that processes on
/// several machines share arrival k's time, whenever each woke; the oversleep is then
/// lateness of the first arrivals, measured. A process that woke more than
/// `MAX_ANCHOR_LAG` late (it started after the moment) starts at once.
fn anchor(cfg: &Config, now: SystemTime, mono: Instant) -> (SystemTime, Instant) {
    let Some(StartAt::Unix(t)) = cfg.load().start_at() else {
        return (now, mono);
    };
    let Ok(at) = Duration::try_from_secs_f64(t.max(0.0)).map(|d| UNIX_EPOCH + d) else {
        return (now, mono);
    };
    match now.duration_since(at) {
        Ok(lag) if lag <= MAX_ANCHOR_LAG => match mono.checked_sub(lag) {
            Some(m) => (at, m),
            None => (now, mono),
        },
        _ => (now, mono),
    }
}

/// CPU time one engine thread used while it ran (`getrusage(RUSAGE_THREAD)` before
/// and after, on that thread).
#[derive(Debug, Clone, Copy)]
struct EngineCpu {
    user: Duration,
    system: Duration,
}

/// Runs `f` and returns its result with the calling thread's CPU time during it.
fn with_thread_cpu<T>(f: impl FnOnce() -> T) -> (T, EngineCpu) {
    let (u0, s0) = net::thread_cpu_times();
    let out = f();
    let (u1, s1) = net::thread_cpu_times();
    let cpu = EngineCpu {
        user: u1.saturating_sub(u0),
        system: s1.saturating_sub(s0),
    };
    (out, cpu)
}

/// What the clock prints for `cfg` (only with text on stdout; the refusal warning on
/// stderr always), and when it samples.
fn clock_options(cfg: &Config, work: &Workload) -> ClockOptions {
    let text = text_out(cfg);
    ClockOptions {
        // httperf: the first sample at (client id + 1) × 5 s / number of clients.
        first_sample: tally::SAMPLE_INTERVAL.mul_f64(
            f64::from(cfg.load().client_id() + 1) / f64::from(cfg.load().num_clients().max(1)),
        ),
        rates: text && cfg.output().verbose() > 0,
        sessions: work.is_session(),
        periodic: text && cfg.output().periodic_stats(),
        refused_target: Some(match work.targets.as_slice() {
            [t] => t.label.clone(),
            _ => "the servers".to_string(),
        }),
    }
}

/// What the engines of one run share with the runner's helper threads.
#[derive(Debug, Clone, Copy)]
struct Shared<'s> {
    /// The progress board, when the progress line is shown.
    board: Option<&'s Board>,
    /// Open connections and the figures the clock samples.
    tally: &'s Tally,
    /// `--pin`: the cores the process may use (engine j gets `pacing::pin_core`).
    pin: Option<&'s [usize]>,
    /// `--metrics-listen`: each engine's metrics slot.
    metrics: Option<&'s [std::sync::Arc<Slot>]>,
    /// The engines' I/O backend (`--io`).
    io: backend::Kind,
}

/// `--pin`: the cores engine threads are pinned to (None: not pinned, with a
/// warning when there are more engine threads than cores).
fn pin_cores(cfg: &Config) -> Result<Option<Vec<usize>>, StartupError> {
    if !cfg.pacing().pin() {
        return Ok(None);
    }
    let allowed = net::allowed_cpus().map_err(StartupError::PinCores)?;
    let threads = cfg.load().threads().max(1);
    if crate::model::pacing::pin_core(&allowed, 0, threads).is_none() {
        crate::wire::note::note!(
            "rshperf: warning: --pin: {threads} engine threads for {} cores: threads not pinned",
            allowed.len()
        );
        return Ok(None);
    }
    Ok(Some(allowed))
}

/// Each engine's outcome with its CPU time, the clock's reply-rate samples and the
/// machine's mean run queue.
type EnginesOut = (Vec<(Outcome, EngineCpu)>, Vec<RateSample>, Option<f64>);

/// Runs the engines (the first on this thread), the progress display, the clock and
/// the run queue's sampler; returns the engines' outcomes, the clock's reply-rate
/// samples and the mean run queue.
fn run_engines<'a>(
    cfg: &'a Config,
    work: &'a Workload,
    hooks: Hooks<'a>,
    shared: Shared<'_>,
    threads: u32,
    capacity: usize,
    t0: Instant,
) -> Result<EnginesOut, StartupError> {
    let Shared {
        board,
        tally,
        pin,
        metrics,
        io,
    } = shared;
    let start_err = |e: io::Error| StartupError::EventLoop(e);
    // Partition I/N of the process, thread j of T: arrivals k ≡ I + jN (mod NT).
    let (part, parts) = cfg.load().partition();
    let stripes = parts.max(1) * threads;
    let plan = |j: u32| {
        let stripe = part + j * parts.max(1);
        Plan {
            stripe,
            stripes,
            arrivals: stripe_arrivals(work, cfg, stripe, stripes),
            capacity,
            io,
        }
    };
    let engine = move |j: u32| -> io::Result<(Outcome, EngineCpu)> {
        let observer = (cfg.output().print_request().is_some()
            || cfg.output().print_reply().is_some())
        .then(|| {
            Box::new(Printer::new(
                io::stdout(),
                cfg.output().print_request(),
                cfg.output().print_reply(),
            )) as Box<dyn ReplyObserver + '_>
        });
        let slot = board.and_then(|b| b.slots.get(j as usize));
        let link = tally
            .engine(j as usize)
            .expect("the tally has a slot per engine");
        let calls = hooks.calls.and_then(|make| make(j));
        // The engine's own CPU (this thread): the report's CPU line, and client-bound
        // detection (`stats.client`).
        let core = pin.and_then(|allowed| crate::model::pacing::pin_core(allowed, j, threads));
        if let Some(core) = core {
            net::set_thread_cpus(&[core])?;
        }
        // A short scheduler slice for an engine keeping a slow schedule (`pacing`).
        let period = if work.closed_loop(cfg).is_some() {
            0.0
        } else {
            cfg.load().period().mean() * f64::from(stripes)
        };
        let slice = crate::model::pacing::engine_slice(&cfg.pacing(), period)
            .and_then(|s| net::set_thread_slice(Some(s)).ok());
        let wall0 = Instant::now();
        let waited0 = machine::thread_waited();
        let (outcome, cpu) = with_thread_cpu(|| {
            let metrics = metrics.and_then(|m| m.get(j as usize)).map(|s| &**s);
            Engine::new(cfg, work, observer, slot, link, plan(j), t0)?
                .with_call_observer(calls)
                .with_metrics(metrics)
                .with_feed(hooks.seconds, j as usize)
                .with_records(hooks.records)
                .run()
        });
        if slice == Some(true) {
            // Engine 0 runs on the caller's thread: the default slice again.
            let _ = net::set_thread_slice(None);
        }
        if let (Some(allowed), Some(_)) = (pin, core) {
            // Engine 0 runs on the caller's thread: give it its cores back.
            let _ = net::set_thread_cpus(allowed);
        }
        let waited = waited0
            .zip(machine::thread_waited())
            .map(|(a, b)| b.saturating_sub(a).as_secs_f64());
        let wall = wall0.elapsed().as_secs_f64();
        let mut outcome = outcome?;
        outcome
            .stats
            .client
            .add_engine((cpu.user + cpu.system).as_secs_f64(), wall);
        outcome.stats.client.add_wait(waited, wall);
        Ok((outcome, cpu))
    };
    let clock_opts = clock_options(cfg, work);
    std::thread::scope(|scope| {
        if let Some(b) = board {
            scope.spawn(move || progress::display(b, t0));
        }
        let clock = scope.spawn(move || {
            tally::clock(tally, t0, clock_opts, &mut io::stdout(), &mut io::stderr())
        });
        let sampler = scope.spawn(move || machine::sample_run_queue(|| tally.finished()));
        // A panicking engine must still end the clock below, or the run would hang.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if threads == 1 {
                return engine(0).map(|o| vec![o]).map_err(start_err);
            }
            let handles: Vec<_> = (0..threads)
                .map(|j| scope.spawn(move || engine(j)))
                .collect();
            handles
                .into_iter()
                .map(|h| match h.join() {
                    Ok(r) => r.map_err(start_err),
                    Err(_) => Err(StartupError::EnginePanicked),
                })
                .collect()
        }))
        .unwrap_or(Err(StartupError::EnginePanicked));
        if let Some(b) = board {
            b.done.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        tally.finish();
        clock.thread().unpark();
        sampler.thread().unpark();
        let samples = clock.join().map_err(|_| StartupError::ClockPanicked)?;
        let run_queue = sampler.join().map_err(|_| StartupError::SamplerPanicked)?;
        result.map(|outcomes| (outcomes, samples, run_queue))
    })
}

/// The arrival rate `cfg` asks for, per second (None: sequential, or a closed loop).
pub(crate) fn offered_rate(cfg: &Config) -> Option<f64> {
    let mean = cfg.load().period().mean();
    (cfg.load().concurrency() == 0 && mean > 0.0).then(|| 1.0 / mean)
}

/// Whether stdout carries text (not with `--json=-`, where it is the JSON only).
pub(crate) fn text_out(cfg: &Config) -> bool {
    cfg.output().json() != Some("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A configuration with `--start-at` `at`.
    fn starting(at: Option<StartAt>) -> Config {
        let mut b = Config::builder();
        b.server("127.0.0.1").start_at(at);
        b.build().expect("valid options").config
    }

    #[test]
    fn start_delay_is_bounded_and_never_panics() {
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let delay = |at: StartAt| start_delay(&starting(Some(at)), now);
        assert_eq!(delay(StartAt::After(2.5)), Duration::from_millis(2500));
        assert_eq!(
            delay(StartAt::Unix(1_700_000_010.0)),
            Duration::from_secs(10)
        );
        assert_eq!(delay(StartAt::Unix(1_600_000_000.0)), Duration::ZERO);
        assert_eq!(delay(StartAt::Unix(1_700_604_800.0)), MAX_START_DELAY);
        // Later starts are `build`'s to refuse; the wait never exceeds the bound.
        assert_eq!(delay(StartAt::Unix(1_700_604_801.0)), MAX_START_DELAY);
        assert_eq!(start_delay(&starting(None), now), Duration::ZERO);
    }

    #[test]
    fn the_schedule_is_anchored_at_an_absolute_start_moment() {
        let cfg = |t: f64| starting(Some(StartAt::Unix(t)));
        let at = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mono = Instant::now();
        // Woke 7 ms late: the run starts at the moment itself, 7 ms before the wake-up.
        let woke = at + Duration::from_millis(7);
        assert_eq!(
            anchor(&cfg(1_700_000_000.0), woke, mono),
            (at, mono - Duration::from_millis(7))
        );
        // Exactly at the limit, still anchored; beyond it (started after the moment),
        // at once.
        assert_eq!(
            anchor(&cfg(1_700_000_000.0), at + MAX_ANCHOR_LAG, mono),
            (at, mono - MAX_ANCHOR_LAG)
        );
        let late = at + MAX_ANCHOR_LAG + Duration::from_millis(1);
        assert_eq!(anchor(&cfg(1_700_000_000.0), late, mono), (late, mono));
        // A relative start and no start: the wake-up.
        let after = starting(Some(StartAt::After(2.0)));
        assert_eq!(anchor(&after, woke, mono), (woke, mono));
        assert_eq!(anchor(&starting(None), woke, mono), (woke, mono));
    }
}
