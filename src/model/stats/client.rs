//! `ClientCpu`: what the client's own engines cost, for telling client limits from
//! server limits.
//!
//! Owns the per-engine CPU figures: each engine thread's user + system time over its
//! run (`getrusage(RUSAGE_THREAD)`, so other engines, the progress thread and start-up
//! are not counted), its wall time, and how long it waited for a CPU while runnable
//! (`/proc/thread-self/schedstat`). The busiest engine's share of one core says
//! whether a client core was saturated, the longest wait whether the machine kept an
//! engine from its core. Recorded by the runner around each engine's run; read by the
//! validity judgement (`model::validity`) and the sweep's table. Merged by summing and
//! keeping the busiest engine and the longest wait.

use serde::{Deserialize, Serialize};

use crate::model::stats::merge::{Merge, MergeError};

/// CPU use of the engines of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClientCpu {
    /// Engines measured.
    pub(crate) engines: u64,
    /// Their CPU time (user + system), summed, seconds.
    pub(crate) cpu_s: f64,
    /// Their wall time, summed, seconds.
    pub(crate) wall_s: f64,
    /// The busiest engine's CPU time as a percentage of its wall time (100 = one core
    /// kept busy all the time).
    pub(crate) busiest_pct: f64,
    /// The engine that waited most for a CPU while runnable: its waits as a
    /// percentage of its wall time (None: the kernel does not say, an older
    /// document).
    #[serde(default)]
    pub(crate) waited_pct: Option<f64>,
}

impl ClientCpu {
    /// One engine used `cpu_s` seconds of CPU during `wall_s` seconds.
    pub(crate) fn add_engine(&mut self, cpu_s: f64, wall_s: f64) {
        self.engines += 1;
        self.cpu_s += cpu_s;
        self.wall_s += wall_s;
        if wall_s > 0.0 {
            self.busiest_pct = self.busiest_pct.max(100.0 * cpu_s / wall_s);
        }
    }

    /// That engine also waited `wait_s` seconds for a CPU while runnable, out of
    /// `wall_s` (None: not measured).
    pub(crate) fn add_wait(&mut self, wait_s: Option<f64>, wall_s: f64) {
        if let Some(w) = wait_s.filter(|_| wall_s > 0.0) {
            let pct = 100.0 * w / wall_s;
            self.waited_pct = Some(self.waited_pct.map_or(pct, |p| p.max(pct)));
        }
    }
}

/// The engines of another run part: counts and times added, the busiest kept.
impl Merge for ClientCpu {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        self.engines.merge(&o.engines)?;
        self.cpu_s += o.cpu_s;
        self.wall_s += o.wall_s;
        self.busiest_pct = self.busiest_pct.max(o.busiest_pct);
        self.waited_pct = match (self.waited_pct, o.waited_pct) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busiest_engine_wins_and_sums_add() {
        let mut a = ClientCpu::default();
        a.add_engine(0.5, 2.0);
        a.add_wait(Some(0.1), 2.0);
        a.add_engine(1.9, 2.0);
        a.add_wait(None, 2.0);
        a.add_engine(0.0, 0.0);
        let mut b = ClientCpu::default();
        b.add_engine(0.2, 1.0);
        b.add_wait(Some(0.3), 1.0);
        assert_eq!(ClientCpu::default().waited_pct, None);
        a.merge(&b).expect("merges");
        assert!((a.waited_pct.expect("measured") - 30.0).abs() < 1e-9);
        assert_eq!(a.engines, 4);
        assert!((a.cpu_s - 2.6).abs() < 1e-9);
        assert!((a.wall_s - 5.0).abs() < 1e-9);
        assert!((a.busiest_pct - 95.0).abs() < 1e-9);
    }
}
