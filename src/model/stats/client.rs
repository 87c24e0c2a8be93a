//! `ClientCpu`: what the client's own engines cost, for telling client limits from
//! server limits.
//!
//! Owns the per-engine CPU figures: each engine thread's user + system time over its
//! run (`getrusage(RUSAGE_THREAD)`, so other engines, the progress thread and start-up
//! are not counted) and its wall time. The busiest engine's share of one core says
//! whether a client core was saturated. Recorded by the runner around each engine's
//! run; read by `advice` (client-bound detection) and the sweep's table. Merged by
//! summing and keeping the busiest engine.

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
}

/// The engines of another run part: counts and times added, the busiest kept.
impl Merge for ClientCpu {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        self.engines.merge(&o.engines)?;
        self.cpu_s += o.cpu_s;
        self.wall_s += o.wall_s;
        self.busiest_pct = self.busiest_pct.max(o.busiest_pct);
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
        a.add_engine(1.9, 2.0);
        a.add_engine(0.0, 0.0);
        let mut b = ClientCpu::default();
        b.add_engine(0.2, 1.0);
        a.merge(&b).expect("merges");
        assert_eq!(a.engines, 4);
        assert!((a.cpu_s - 2.6).abs() < 1e-9);
        assert!((a.wall_s - 5.0).abs() < 1e-9);
        assert!((a.busiest_pct - 95.0).abs() < 1e-9);
    }
}
