//! `PacingStats`: how the engines kept (or could not keep) the arrival schedule.
//!
//! Owns the counters of the overload policy (arrivals it deferred, arrivals a run
//! ended before starting, the cap on connections in flight, the loopback source
//! addresses connections were spread over) and of precise pacing (arrivals waited
//! for by spinning, the time spent spinning, how late the timer woke the engine).
//! Arrival lateness itself is the `lateness` histogram of `Stats`. Recorded by the
//! engine (`engine::event_loop::catchup`, `engine::event_loop::spin`); carried in the JSON `raw.pacing`
//! and printed by `-v` (`output::extras`); no text here. Merged field by field (`merge_fields!`).

use serde::{Deserialize, Serialize};

use crate::model::stats::merge::{merge_fields, Merge, MergeError};

/// What the engines did to keep the schedule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PacingStats {
    /// Arrivals the overload policy started later than the engine could have (the
    /// catch-up bound per loop turn, or the cap on connections in flight).
    pub(crate) deferred: u64,
    /// Of the deferred arrivals, those that waited for a connection to close (the
    /// table or the cap on connections in flight was full), not for the per-turn
    /// bound: the server held connections, the engine was not short of CPU.
    #[serde(default)]
    pub(crate) waited: u64,
    /// Arrivals that waited for a close because the connection table was full (its
    /// size, `conn_table`, comes from the descriptor limit).
    #[serde(default)]
    pub(crate) table_waited: u64,
    /// Connection table slots, summed over engines (0: unknown, an older document).
    #[serde(default)]
    pub(crate) conn_table: u64,
    /// The descriptor limit (`RLIMIT_NOFILE`) the run had (0: unknown).
    #[serde(default)]
    pub(crate) fd_limit: u64,
    /// Arrivals due before the run ended (`--runtime`, a signal) that it never
    /// started.
    pub(crate) unstarted: u64,
    /// Most connections in flight while an engine is behind schedule, summed over
    /// engines (0: no cap, `--overload=queue` or a closed loop).
    pub(crate) inflight_cap: u64,
    /// Loopback source addresses connections were spread over (0: the kernel chose).
    pub(crate) source_addrs: u64,
    /// Arrivals the engine waited for by spinning.
    pub(crate) spins: u64,
    /// Time spent spinning, µs.
    pub(crate) spin_us: u64,
    /// Timer wake-ups measured (the engine slept until a deadline).
    pub(crate) wakeups: u64,
    /// Sum of how late those wake-ups came after their deadline, µs.
    pub(crate) wake_late_sum_us: u64,
    /// The latest wake-up, µs after its deadline.
    pub(crate) wake_late_max_us: u64,
    /// The fullest engine's most connections open at once (its table's peak).
    #[serde(default)]
    pub(crate) table_peak: u64,
    /// The most local ports held at once towards one destination from one source
    /// address (connections open, plus those closed within TIME_WAIT when the kernel
    /// cannot reuse their ports: `engine::event_loop::portuse`), summed over engines
    /// (an upper bound: engines share the ports).
    #[serde(default)]
    pub(crate) ports_peak: u64,
    /// Ports of the kernel's ephemeral range (`ip_local_port_range`; 0: unknown).
    #[serde(default)]
    pub(crate) port_range: u64,
}

impl PacingStats {
    /// A timer wake-up came `late_us` after its deadline.
    pub(crate) fn on_wakeup(&mut self, late_us: u64) {
        self.wakeups += 1;
        self.wake_late_sum_us = self.wake_late_sum_us.saturating_add(late_us);
        self.wake_late_max_us = self.wake_late_max_us.max(late_us);
    }
}

/// Another engine's or run part's figures: counts added, extremes kept.
impl Merge for PacingStats {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(PacingStats, self, o;
            deferred: sum,
            waited: sum,
            table_waited: sum,
            conn_table: sum,
            fd_limit: max,
            unstarted: sum,
            inflight_cap: sum,
            source_addrs: max,
            spins: sum,
            spin_us: sum,
            wakeups: sum,
            wake_late_sum_us: sum,
            wake_late_max_us: max,
            table_peak: max,
            ports_peak: sum,
            port_range: max,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_counts_and_keeps_extremes() {
        let mut a = PacingStats {
            deferred: 3,
            inflight_cap: 100,
            source_addrs: 8,
            spins: 2,
            spin_us: 1500,
            table_waited: 4,
            conn_table: 16,
            fd_limit: 64,
            ..PacingStats::default()
        };
        a.on_wakeup(40);
        a.on_wakeup(200);
        let mut b = PacingStats {
            unstarted: 5,
            inflight_cap: 50,
            source_addrs: 8,
            table_waited: 1,
            conn_table: 16,
            fd_limit: 1024,
            ..PacingStats::default()
        };
        b.on_wakeup(60);
        a.merge(&b).expect("merges");
        assert_eq!(
            (a.deferred, a.unstarted, a.inflight_cap, a.source_addrs),
            (3, 5, 150, 8)
        );
        assert_eq!((a.table_waited, a.conn_table, a.fd_limit), (5, 32, 1024));
        assert_eq!(
            (a.wakeups, a.wake_late_sum_us, a.wake_late_max_us),
            (3, 300, 200)
        );
        let mut over = PacingStats {
            deferred: u64::MAX,
            ..PacingStats::default()
        };
        let e = over.merge(&a).expect_err("overflow");
        assert!(e.to_string().starts_with("deferred: "), "{e}");
    }
}
