//! What one run of the engines produced (`RunResult`): the merged `Stats` and the
//! facts around them (`RunInfo`: duration and CPU; `RunMeta`: wall-clock times,
//! partition, threads, servers; `Machine`: what the machine did meanwhile, for the
//! validity judgement). Made by the engine layer's runner; read by every output and
//! front end. Plain data.

use std::time::SystemTime;

use crate::model::stats::Stats;

/// What one run of the engines produced: the merged statistics and the facts around
/// them. Front ends (the classic run, `sweep`, `ab`, `lb`, `demo`) print it their way.
#[derive(Debug)]
pub struct RunResult {
    /// Every engine's statistics, merged.
    pub stats: Stats,
    /// Duration and CPU time of the run.
    pub info: RunInfo,
    /// Wall-clock times, partition, threads and server names (for JSON).
    pub(crate) meta: RunMeta,
    /// Whether SIGINT/SIGTERM stopped it.
    pub(crate) interrupted: bool,
    /// What the machine did while it ran.
    pub(crate) machine: Machine,
}

/// What the machine did while a run lasted (`engine::machine` measures it), read by
/// the validity judgement (`model::validity`). None where not measured: the kernel
/// does not say, or nothing applies (no CPU quota).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Machine {
    /// Online cores (0: unknown).
    pub(crate) cores: u32,
    /// Runnable tasks, mean over the run's once-a-second samples (`/proc/loadavg`),
    /// the sampling thread not counted.
    pub(crate) run_queue: Option<f64>,
    /// CPU time the hypervisor stole during the run (`/proc/stat`), % of all CPU time.
    pub(crate) steal_pct: Option<f64>,
    /// Quota periods in which the process's cgroup (or an ancestor) was throttled
    /// during the run, % (None: no CPU quota).
    pub(crate) throttled_pct: Option<f64>,
    /// That CPU quota, cores.
    pub(crate) quota_cores: Option<f64>,
}

/// Facts about the run that `Stats` does not hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunInfo {
    /// Test duration (delta), seconds.
    pub duration: f64,
    /// User CPU seconds used during the run.
    pub cpu_user: f64,
    /// System CPU seconds used during the run.
    pub cpu_system: f64,
}

/// Facts about the run that neither `Config`, `Stats` nor `RunInfo` hold.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunMeta {
    /// Wall-clock time the engines started.
    pub(crate) start: SystemTime,
    /// Wall-clock time the last engine stopped.
    pub(crate) end: SystemTime,
    /// `--partition=I/N` of this process: (I, N).
    pub(crate) partition: (u32, u32),
    /// Engines (threads) that ran.
    pub(crate) threads: u32,
    /// Names of the servers of a `--servers` run (empty otherwise).
    pub(crate) servers: Vec<String>,
}

#[cfg(test)]
impl RunResult {
    /// The result of one engine that ran `duration` seconds to the end and gathered
    /// `stats`, with no CPU time and no wall-clock times: what tests of the readers
    /// need.
    pub(crate) fn of(stats: Stats, duration: f64) -> RunResult {
        RunResult {
            stats,
            info: RunInfo {
                duration,
                cpu_user: 0.0,
                cpu_system: 0.0,
            },
            meta: RunMeta {
                start: SystemTime::UNIX_EPOCH,
                end: SystemTime::UNIX_EPOCH,
                partition: (0, 1),
                threads: 1,
                servers: Vec::new(),
            },
            interrupted: false,
            machine: Machine::default(),
        }
    }
}
