//! `Evidence`: the measured inputs of the validity judgement, and `Need`, the samples
//! a threshold's figure needs. Plain data: `model::judge` gathers it from a run, the
//! unit tests fill it directly. Read by `model::validity::judge`.

/// What the judgement reads. Times in the units their names say; `None`: not
/// measured (the kernel does not say, or no quota).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Evidence {
    /// Mean time between scheduled arrivals, s (0: no schedule: `--rate 0`); under
    /// `--rate-profile` the profile's length over its expected arrivals.
    pub(crate) period_s: f64,
    /// Whether arrivals wait for free connections by design (`--max-connections`).
    pub(crate) capped: bool,
    /// Arrivals whose lateness was measured.
    pub(crate) arrivals: u64,
    /// Their lateness p50 and p99, ms.
    pub(crate) late_p50_ms: f64,
    pub(crate) late_p99_ms: f64,
    /// Arrivals the overload policy deferred (`raw.pacing.deferred`).
    pub(crate) deferred: u64,
    /// Of them, those that waited for a connection to close (`raw.pacing.waited`).
    pub(crate) held: u64,
    /// Arrivals that found the connection table full (`raw.pacing.table_waited`).
    pub(crate) table_waited: u64,
    /// The busiest engine thread's CPU time, % of its wall time.
    pub(crate) busiest_pct: f64,
    /// The engines' wall time, summed, s.
    pub(crate) engine_wall_s: f64,
    /// The engine thread that waited most for a CPU: its waits, % of its wall time.
    pub(crate) wait_pct: Option<f64>,
    /// Quota periods in which the process's cgroup was throttled, %.
    pub(crate) throttled_pct: Option<f64>,
    /// The CPU quota, cores.
    pub(crate) quota_cores: Option<f64>,
    /// Runnable tasks on the machine, mean over the run (the sampler not counted).
    pub(crate) run_queue: Option<f64>,
    /// Online cores of the machine (0: unknown).
    pub(crate) cores: u32,
    /// CPU time the hypervisor stole during the run, % of the machine's CPU time.
    pub(crate) steal_pct: Option<f64>,
    /// The fullest engine's most connections open at once.
    pub(crate) table_peak: u64,
    /// An engine's connection table slots (0: unknown).
    pub(crate) table_size: u64,
    /// Engines that ran.
    pub(crate) engines: u64,
    /// The descriptor limit (`RLIMIT_NOFILE`; 0: unknown).
    pub(crate) fd_limit: u64,
    /// Connections that failed for want of a descriptor (`fd-unavail`).
    pub(crate) fd_unavail: u64,
    /// The most local ports held towards one destination from one source address.
    pub(crate) ports_peak: u64,
    /// Ports of the ephemeral range (`ip_local_port_range`; 0: unknown).
    pub(crate) port_range: u64,
    /// Connects that found no free local port (`addrunavail`).
    pub(crate) addr_unavail: u64,
    /// Whether a signal cut the run short.
    pub(crate) interrupted: bool,
    /// The test duration, s.
    pub(crate) duration_s: f64,
    /// Connections still open when the run stopped.
    pub(crate) abandoned: u64,
    /// Arrivals due before the run stopped that it never started.
    pub(crate) unstarted: u64,
    /// The figures the run is judged on (its thresholds), with their samples.
    pub(crate) needs: Vec<Need>,
}

/// A figure a threshold names, and how many samples it has and needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Need {
    /// The threshold's metric as typed (`p99`).
    pub(crate) figure: String,
    /// What its samples are (`responses`, `5-s reply-rate samples`).
    pub(crate) of: &'static str,
    /// Samples the run has.
    pub(crate) samples: u64,
    /// Samples the figure needs to be other than an extreme value.
    pub(crate) needed: u64,
}

impl Evidence {
    /// Every measurement as the JSON block's `measured` member shows it, in order
    /// (the names of the table's `validity.measured` figures).
    pub(crate) fn measured(&self) -> Vec<(String, Option<f64>)> {
        let known = |v: u64| (v > 0).then_some(v as f64);
        [
            ("busiest_engine_pct", Some(self.busiest_pct)),
            ("engine_wait_pct", self.wait_pct),
            ("throttled_pct", self.throttled_pct),
            ("quota_cores", self.quota_cores),
            ("run_queue", self.run_queue),
            ("cores", known(u64::from(self.cores))),
            ("steal_pct", self.steal_pct),
            ("table_peak", Some(self.table_peak as f64)),
            ("table_size", known(self.table_size)),
            ("ports_peak", Some(self.ports_peak as f64)),
            ("port_range", known(self.port_range)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}
