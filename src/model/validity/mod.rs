//! Whether a run's figures describe the server: the one judgement of a run's validity,
//! read by the JSON `validity` block, `--fail-on invalid`, the warnings on stderr
//! (`output::advice`), `sweep`'s client verdict, `merge` and `compare`.
//!
//! A run is invalid when one of these holds (each a `Cause`, with its measurement):
//! - `engine_cpu`: the engine was the limit: an engine thread used at least
//!   `ENGINE_CPU_PCT` of a core, or a CPU quota (cgroup) throttled the process in at
//!   least `THROTTLED_PCT` of its quota periods;
//! - `schedule_slip`: most arrivals started late (lateness p50 above both
//!   `LATE_FLOOR_MS` and `LATE_SHARE` of the mean time between arrivals, over at
//!   least `LATE_MIN_ARRIVALS` arrivals and `LATE_MIN_SPAN_S` of schedule);
//! - `fd_budget`: the fullest engine's connection table (the descriptor limit's share
//!   of it) came within `BUDGET_MARGIN` of full, or an arrival found it full;
//! - `port_budget`: the most local ports held towards one destination from one source
//!   address (open, or closed by this run within TIME_WAIT when the kernel cannot
//!   reuse them) came within `BUDGET_MARGIN` of the ephemeral port range, or a
//!   connect found no free port;
//! - `machine_starved`: an engine thread waited for a CPU at least `WAIT_PCT` of its
//!   run, or the hypervisor stole at least `STEAL_PCT` of the CPU time; where the
//!   kernel does not say how long the engine waited, more runnable tasks than cores;
//! - `interrupted`: a signal cut the run short;
//! - `too_short`: a `--fail-on` threshold (or a sweep's `--slo`) names a figure the
//!   run has too few samples for (a quantile q needs 1/(1−q) values, a 5-s reply-rate
//!   figure one sample, its standard deviation two).
//!
//! The thresholds are declared here once (docs/ci.md lists them). `judge` is a pure
//! function of `Evidence`, the measured inputs: `model::judge` gathers them from a
//! run (a time-varying rate feeds its own mean period), the unit tests inject them.
//! The wording of each reason is here too; `output::advice` words the one warning line
//! that the client was the limit from `client_limit`. Reading a document's block back
//! and the union of several runs' blocks (`merge`) are in `doc`.

pub(crate) mod doc;
pub(crate) mod evidence;

#[cfg(test)]
mod tests;

pub(crate) use evidence::Evidence;

/// Busiest engine thread's share of a core (%) at which the engine is the limit.
pub(crate) const ENGINE_CPU_PCT: f64 = 90.0;
/// Shortest engine time (seconds of wall time summed over the engines) for the CPU and
/// wait rules: start-up work dominates shorter runs.
pub(crate) const ENGINE_MIN_WALL_S: f64 = 0.5;
/// Share of the CPU quota's periods (%) in which the process was throttled at which
/// the quota, not the server, was the limit.
pub(crate) const THROTTLED_PCT: f64 = 10.0;
/// Lateness beyond which an arrival is late in any case, ms.
pub(crate) const LATE_FLOOR_MS: f64 = 1.0;
/// Share of the mean time between arrivals beyond which an arrival is late.
pub(crate) const LATE_SHARE: f64 = 0.10;
/// Fewest arrivals for the lateness rule.
pub(crate) const LATE_MIN_ARRIVALS: u64 = 100;
/// Shortest schedule for the lateness rule, s: in a shorter one a single stall of the
/// machine makes most arrivals late (unless the lag outgrows the whole schedule).
pub(crate) const LATE_MIN_SPAN_S: f64 = 1.0;
/// A budget (descriptors, ports) within this share of exhaustion is exhausted.
pub(crate) const BUDGET_MARGIN: f64 = 0.10;
/// Share of an engine thread's run (%) spent waiting for a CPU at which the machine
/// starved it: that share of its events were timestamped late, so the quantiles
/// above 1 − 5 % = p95 describe the waits.
pub(crate) const WAIT_PCT: f64 = 5.0;
/// Share of the machine's CPU time (%) the hypervisor stole at which the machine was
/// starved.
pub(crate) const STEAL_PCT: f64 = 10.0;
/// Runnable tasks per core beyond which the machine was starved (judged only where
/// the engine's own waits are not measured).
pub(crate) const RUN_QUEUE_PER_CORE: f64 = 1.0;

/// Why a run is invalid (stable names for JSON: `Cause::key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    /// The engine was the limit: a saturated engine thread, or a throttling quota.
    EngineCpu,
    /// Most arrivals started late.
    ScheduleSlip,
    /// The connection table (the descriptor limit) was nearly or quite full.
    FdBudget,
    /// The ephemeral ports towards one destination were nearly or quite used up.
    PortBudget,
    /// The machine kept the engine from a CPU (waits, steal, run queue).
    MachineStarved,
    /// A signal cut the run short.
    Interrupted,
    /// Too few samples for a figure the run's thresholds name.
    TooShort,
}

impl Cause {
    /// Every cause, in the order reasons are listed.
    pub(crate) const ALL: [Cause; 7] = [
        Cause::EngineCpu,
        Cause::ScheduleSlip,
        Cause::FdBudget,
        Cause::PortBudget,
        Cause::MachineStarved,
        Cause::Interrupted,
        Cause::TooShort,
    ];

    /// The cause's name in JSON.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Cause::EngineCpu => "engine_cpu",
            Cause::ScheduleSlip => "schedule_slip",
            Cause::FdBudget => "fd_budget",
            Cause::PortBudget => "port_budget",
            Cause::MachineStarved => "machine_starved",
            Cause::Interrupted => "interrupted",
            Cause::TooShort => "too_short",
        }
    }

    /// The cause named `key`.
    pub(crate) fn from_key(key: &str) -> Option<Cause> {
        Cause::ALL.into_iter().find(|c| c.key() == key)
    }

    /// Whether it says the client, not the server, was the limit (a sweep step's
    /// `client` verdict): every cause but an interruption and too few samples.
    pub(crate) fn is_client(self) -> bool {
        !matches!(self, Cause::Interrupted | Cause::TooShort)
    }
}

/// One reason a run is invalid: its cause, one line saying it with the figures, and
/// the measurements it rests on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reason {
    /// What it is about.
    pub(crate) cause: Cause,
    /// The run it is about, in a merged document (`partition 1/2 (b.json)`).
    pub(crate) part: Option<String>,
    /// One line, with the measurements and the limit.
    pub(crate) text: String,
    /// The measurements, by name (units in the name: `_pct`, `_ms`, `_s`).
    pub(crate) measured: Vec<(String, f64)>,
}

impl Reason {
    fn new(cause: Cause, text: String, measured: &[(&str, f64)]) -> Reason {
        Reason {
            cause,
            part: None,
            text,
            measured: measured.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }
}

/// The judgement of a run: valid when it has no reason to be otherwise.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Validity {
    /// Why it is invalid (empty: valid), in `Cause::ALL` order.
    pub(crate) reasons: Vec<Reason>,
    /// Every measurement the judgement read, by name (None: not measured here).
    pub(crate) measured: Vec<(String, Option<f64>)>,
}

impl Validity {
    /// Whether the run's figures describe the server.
    pub(crate) fn valid(&self) -> bool {
        self.reasons.is_empty()
    }

    /// Whether a reason says the client was the limit (`Cause::is_client`).
    pub(crate) fn client_bound(&self) -> bool {
        self.reasons.iter().any(|r| r.cause.is_client())
    }

    /// The reasons with cause `cause`.
    pub(crate) fn of(&self, cause: Cause) -> impl Iterator<Item = &Reason> {
        self.reasons.iter().filter(move |r| r.cause == cause)
    }

    /// `engine_cpu, schedule_slip`: the causes, for messages.
    #[cfg(test)]
    pub(crate) fn causes(&self) -> String {
        let mut keys: Vec<&str> = self.reasons.iter().map(|r| r.cause.key()).collect();
        keys.dedup();
        keys.join(", ")
    }
}

/// A run's evidence and its judgement: what every front end hands the outputs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Judged {
    /// The measured inputs.
    pub(crate) evidence: Evidence,
    /// The judgement of them.
    pub(crate) validity: Validity,
}

/// What kept the client from its schedule, or made it the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// An engine thread used at least `ENGINE_CPU_PCT` of a core: the client's
    /// capacity, whatever else ran.
    Saturated,
    /// A CPU quota throttled the process: it had less CPU than the rate needs.
    Throttled,
    /// Arrivals late while the engine had CPU to spare, and the overload policy held
    /// some back for want of a free connection.
    Held,
    /// Arrivals late while the engine had CPU to spare and nothing held them: the
    /// engine was kept waiting for a core by other work.
    Starved,
}

/// The lateness of a run's arrivals against its limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Slip {
    /// Whether most arrivals were late (the lateness rule).
    pub(crate) behind: bool,
    /// Lateness p50 and p99, ms.
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    /// The lateness beyond which an arrival is late, ms.
    pub(crate) limit_ms: f64,
}

/// How late the arrivals of `e` were, and whether most were late: lateness p50 above
/// both `LATE_FLOOR_MS` and `LATE_SHARE` of the mean period, over at least
/// `LATE_MIN_ARRIVALS` arrivals and a schedule of at least `LATE_MIN_SPAN_S` (or a
/// lag longer than the whole schedule: the client could not sustain the rate and the
/// lag built up). Sequential runs (period 0) have no schedule to keep, and with
/// `--max-connections` arrivals wait for the server by design. A late tail alone (p99
/// over the limit, p50 within it) is wake-up jitter of a shared machine: shown by the
/// lateness percentiles, not judged. None without a schedule.
pub(crate) fn slip(e: &Evidence) -> Option<Slip> {
    if e.period_s <= 0.0 {
        return None;
    }
    let limit_ms = LATE_FLOOR_MS.max(LATE_SHARE * e.period_s * 1000.0);
    let span_ms = e.arrivals as f64 * e.period_s * 1000.0;
    let sustained = span_ms >= LATE_MIN_SPAN_S * 1000.0 || e.late_p50_ms > span_ms;
    let behind =
        !e.capped && e.arrivals >= LATE_MIN_ARRIVALS && sustained && e.late_p50_ms > limit_ms;
    Some(Slip {
        behind,
        p50_ms: e.late_p50_ms,
        p99_ms: e.late_p99_ms,
        limit_ms,
    })
}

/// Whether an engine thread kept a core saturated (over at least `ENGINE_MIN_WALL_S`
/// of engine time).
fn saturated(e: &Evidence) -> bool {
    e.engine_wall_s >= ENGINE_MIN_WALL_S && e.busiest_pct >= ENGINE_CPU_PCT
}

/// Whether a CPU quota throttled the process.
fn throttled(e: &Evidence) -> bool {
    e.throttled_pct.is_some_and(|t| t >= THROTTLED_PCT)
}

/// What made the client the limit, with the lateness; None when it kept its
/// schedule and had CPU enough, or had no schedule (period 0: it is meant to go as
/// fast as it can). A saturated or throttled engine is the verdict whether or not
/// arrivals were late; late arrivals with CPU to spare were held for free connections
/// (`held` > 0) or kept waiting by other work.
pub(crate) fn client_limit(e: &Evidence) -> Option<(Limit, Slip)> {
    // Without a schedule (sequential runs, closed loops) the client is meant to go
    // as fast as it can.
    let slip = slip(e)?;
    let behind = slip.behind;
    let limit = if saturated(e) {
        Limit::Saturated
    } else if throttled(e) {
        Limit::Throttled
    } else if !behind {
        return None;
    } else if e.held > 0 {
        Limit::Held
    } else {
        Limit::Starved
    };
    Some((limit, slip))
}

/// The judgement of the run `e` describes.
pub(crate) fn judge(e: &Evidence) -> Validity {
    let mut reasons = Vec::new();
    engine_cpu(e, &mut reasons);
    if let Some(s) = slip(e).filter(|s| s.behind) {
        reasons.push(Reason::new(
            Cause::ScheduleSlip,
            format!(
                "arrivals started late: lateness p50 {:.3} ms, p99 {:.3} ms (limit {:.3} ms); \
                 {} deferred by the catch-up bound, {} held for a free connection",
                s.p50_ms, s.p99_ms, s.limit_ms, e.deferred, e.held
            ),
            &[
                ("lateness_p50_ms", s.p50_ms),
                ("lateness_p99_ms", s.p99_ms),
                ("limit_ms", s.limit_ms),
                ("deferred", e.deferred as f64),
                ("held", e.held as f64),
            ],
        ));
    }
    fd_budget(e, &mut reasons);
    port_budget(e, &mut reasons);
    starved(e, &mut reasons);
    if e.interrupted {
        reasons.push(Reason::new(
            Cause::Interrupted,
            format!(
                "interrupted (SIGINT or SIGTERM) after {:.1} s: the figures cover part of \
                 the schedule ({} connections still open, {} arrivals not started)",
                e.duration_s, e.abandoned, e.unstarted
            ),
            &[
                ("duration_s", e.duration_s),
                ("abandoned", e.abandoned as f64),
                ("unstarted", e.unstarted as f64),
            ],
        ));
    }
    for n in e.needs.iter().filter(|n| n.samples < n.needed) {
        reasons.push(Reason::new(
            Cause::TooShort,
            format!(
                "too short for {}: {} {} (it needs {})",
                n.figure, n.samples, n.of, n.needed
            ),
            &[("samples", n.samples as f64), ("needed", n.needed as f64)],
        ));
    }
    Validity {
        reasons,
        measured: e.measured(),
    }
}

/// `engine_cpu`: a saturated engine thread, or a throttling quota (runs with a
/// schedule: without one the client is meant to go as fast as it can).
fn engine_cpu(e: &Evidence, out: &mut Vec<Reason>) {
    if e.period_s <= 0.0 {
        return;
    }
    if saturated(e) {
        out.push(Reason::new(
            Cause::EngineCpu,
            format!(
                "an engine thread used {:.0} % of a core (limit {ENGINE_CPU_PCT:.0} %)",
                e.busiest_pct.min(100.0)
            ),
            &[
                ("busiest_engine_pct", e.busiest_pct),
                ("limit_pct", ENGINE_CPU_PCT),
            ],
        ));
    }
    if let Some(t) = e.throttled_pct.filter(|_| throttled(e)) {
        let quota = e
            .quota_cores
            .map(|q| format!(" of {q:.2} cores"))
            .unwrap_or_default();
        out.push(Reason::new(
            Cause::EngineCpu,
            format!(
                "a CPU quota{quota} (cgroup) throttled the process in {t:.0} % of its periods \
                 (limit {THROTTLED_PCT:.0} %)"
            ),
            &[
                ("throttled_pct", t),
                ("quota_cores", e.quota_cores.unwrap_or(f64::NAN)),
                ("limit_pct", THROTTLED_PCT),
            ],
        ));
    }
}

/// `fd_budget`: the fullest engine's connection table against its size.
fn fd_budget(e: &Evidence, out: &mut Vec<Reason>) {
    let near =
        e.table_size > 0 && e.table_peak as f64 >= (1.0 - BUDGET_MARGIN) * e.table_size as f64;
    if !near && e.table_waited == 0 && e.fd_unavail == 0 {
        return;
    }
    let limit = match e.fd_limit {
        0 => String::new(),
        n => format!(", the descriptor limit being {n}"),
    };
    out.push(Reason::new(
        Cause::FdBudget,
        format!(
            "the connection table came within {:.0} % of full: {} of its {} slots in use at \
             once{limit}; {} arrivals waited for a free slot, {} connections failed \
             (fd-unavail)",
            BUDGET_MARGIN * 100.0,
            e.table_peak,
            e.table_size,
            e.table_waited,
            e.fd_unavail
        ),
        &[
            ("table_peak", e.table_peak as f64),
            ("table_size", e.table_size as f64),
            ("fd_limit", e.fd_limit as f64),
            ("table_waited", e.table_waited as f64),
            ("fd_unavail", e.fd_unavail as f64),
        ],
    ));
}

/// `port_budget`: the ports held towards one destination against the range.
fn port_budget(e: &Evidence, out: &mut Vec<Reason>) {
    let near =
        e.port_range > 0 && e.ports_peak as f64 >= (1.0 - BUDGET_MARGIN) * e.port_range as f64;
    if !near && e.addr_unavail == 0 {
        return;
    }
    out.push(Reason::new(
        Cause::PortBudget,
        format!(
            "the local ports towards one destination came within {:.0} % of the ephemeral \
             range: {} of {} held at once (open, or in TIME_WAIT); {} connects found no free \
             port (addrunavail)",
            BUDGET_MARGIN * 100.0,
            e.ports_peak,
            e.port_range,
            e.addr_unavail
        ),
        &[
            ("ports_peak", e.ports_peak as f64),
            ("port_range", e.port_range as f64),
            ("addr_unavail", e.addr_unavail as f64),
        ],
    ));
}

/// `machine_starved`: the engine's waits for a CPU, the hypervisor's steal, and
/// (where the waits are not measured) the run queue.
fn starved(e: &Evidence, out: &mut Vec<Reason>) {
    let long = e.engine_wall_s >= ENGINE_MIN_WALL_S;
    let queue = match (e.run_queue, e.cores) {
        (Some(q), c) if c > 0 => format!("; run queue {q:.1} tasks on {c} cores"),
        _ => String::new(),
    };
    let context = [
        ("run_queue", e.run_queue.unwrap_or(f64::NAN)),
        ("cores", f64::from(e.cores)),
    ];
    match e.wait_pct {
        Some(w) if long && w >= WAIT_PCT => out.push(Reason::new(
            Cause::MachineStarved,
            format!(
                "an engine thread waited for a CPU {w:.0} % of its run (limit \
                 {WAIT_PCT:.0} %{queue})"
            ),
            &[
                ("engine_wait_pct", w),
                ("limit_pct", WAIT_PCT),
                context[0],
                context[1],
            ],
        )),
        None if long => {
            if let Some(q) = e
                .run_queue
                .filter(|q| e.cores > 0 && *q > RUN_QUEUE_PER_CORE * f64::from(e.cores))
            {
                out.push(Reason::new(
                    Cause::MachineStarved,
                    format!(
                        "{q:.1} tasks wanted a CPU on {} cores on average (limit \
                         {RUN_QUEUE_PER_CORE:.0} a core; the engine's own waits are not \
                         measured here)",
                        e.cores
                    ),
                    &context,
                ));
            }
        }
        _ => {}
    }
    if let Some(s) = e.steal_pct.filter(|s| *s >= STEAL_PCT) {
        out.push(Reason::new(
            Cause::MachineStarved,
            format!("the hypervisor stole {s:.0} % of the CPU time (limit {STEAL_PCT:.0} %)"),
            &[("steal_pct", s), ("limit_pct", STEAL_PCT)],
        ));
    }
}
