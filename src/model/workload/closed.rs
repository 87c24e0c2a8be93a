//! The closed loop: a fixed number of units (connections or sessions) in flight, each
//! replaced by the next as soon as it ends.
//!
//! Owns the description (`ClosedLoop`: groups of users with their budgets) and how it
//! is shared out over engines (`ClosedLoop::share`, the same striping as arrivals).
//! The engine (`engine/event_loop/closed.rs`) runs it; front ends build it:
//!
//! - httperf's sequential mode (no `--rate`, or `--rate 0`): one group, one user per
//!   engine, `--num-conns` connections (or N sessions). This is the C=1 case and
//!   behaves exactly as httperf's `--rate 0`.
//! - `--concurrency C`: one group of C users split over the engines (at least one
//!   each), `--num-conns` connections of `--num-calls` calls (or N sessions),
//!   `--runtime` stopping it early; connections go to the servers round-robin.
//! - `rshperf ab` and `rshperf lb`: one group per server (`per_target`), each with
//!   `-c` users and `-n` requests: a connection per request, or with `-k` a request
//!   budget spent over keep-alive connections that are replaced when the server closes.
//!
//! The first two come from the `Config` of each run (`from_config`: a sweep runs one
//! workload at many configurations); ab and lb put theirs in the `Workload`. Pure data
//! and arithmetic; no I/O.

use crate::model::config::Config;
use crate::model::workload::rate::Period;
use crate::model::workload::stripe_share;

/// One group of users working against the same budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    /// Units in flight at most (over all engines when `ClosedLoop::split`).
    pub(crate) users: u64,
    /// Units to start in all (connections or sessions).
    pub(crate) units: u64,
    /// A request budget spent over keep-alive connections (ab's `-k`): each connection
    /// issues one call at a time while the budget lasts. None: every connection makes
    /// `--num-calls` calls.
    pub(crate) calls: Option<u64>,
}

/// The closed-loop description of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClosedLoop {
    /// The groups; with `per_target`, group g works for target g only.
    pub(crate) groups: Vec<Group>,
    /// One group per target (ab, lb); else one group whose connections go to the
    /// targets round-robin by arrival, as in the open loop.
    pub(crate) per_target: bool,
    /// Split each group's users over the engines (`--concurrency`, ab, lb); false gives
    /// every engine `users` of its own (httperf's sequential mode: one per engine).
    pub(crate) split: bool,
    /// How often a request whose connection failed before it was sent is tried again
    /// on a new connection (lb's `-m`); 0 for none.
    pub(crate) retries: u8,
    /// Record ab's per-request figures (`stats::ab`) and print ab's heartbeat.
    pub(crate) ab: Option<AbRecording>,
}

/// What `rshperf ab` and `rshperf lb` want recorded besides the classic statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct AbRecording {
    /// Print `Completed N requests` on stderr every this many completed requests (ab's
    /// heartbeat; 0 for none).
    pub(crate) heartbeat: u64,
}

/// One engine's part of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GroupShare {
    /// Units in flight at most.
    pub(crate) users: u64,
    /// Units to start.
    pub(crate) units: u64,
    /// Request budget (keep-alive mode).
    pub(crate) calls: Option<u64>,
}

impl ClosedLoop {
    /// The closed loop of a plain run of `cfg` with `units` units: `--concurrency`, or
    /// httperf's sequential mode when there is no rate; None for the open loop.
    pub(crate) fn from_config(cfg: &Config, units: u64) -> Option<ClosedLoop> {
        if cfg.load().concurrency() > 0 {
            Some(ClosedLoop::concurrency(cfg.load().concurrency(), units))
        } else if matches!(cfg.load().period(), Period::Sequential) {
            Some(ClosedLoop::sequential(units))
        } else {
            None
        }
    }

    /// httperf's sequential mode: one user per engine, `units` units in all.
    pub(crate) fn sequential(units: u64) -> ClosedLoop {
        ClosedLoop {
            groups: vec![Group {
                users: 1,
                units,
                calls: None,
            }],
            per_target: false,
            split: false,
            retries: 0,
            ab: None,
        }
    }

    /// `--concurrency C`: C users over all engines, `units` units in all.
    pub(crate) fn concurrency(users: u64, units: u64) -> ClosedLoop {
        ClosedLoop {
            split: true,
            groups: vec![Group {
                users,
                units,
                calls: None,
            }],
            ..ClosedLoop::sequential(units)
        }
    }

    /// Units of the whole run (all groups, all engines).
    pub(crate) fn units(&self) -> u64 {
        self.groups.iter().map(|g| g.units).sum()
    }

    /// The part of every group that engine `stripe` of `stripes` runs (the same
    /// striping as arrivals: the shares of all stripes add up to the whole).
    pub(crate) fn share(&self, stripe: u32, stripes: u32) -> Vec<GroupShare> {
        self.groups
            .iter()
            .map(|g| GroupShare {
                users: if self.split {
                    stripe_share(g.users, stripe, stripes)
                } else {
                    g.users
                },
                units: stripe_share(g.units, stripe, stripes),
                calls: g.calls.map(|c| stripe_share(c, stripe, stripes)),
            })
            .collect()
    }

    /// The group a unit with global arrival number `arrival` belongs to.
    pub(crate) fn group_of(&self, arrival: u64) -> usize {
        if self.per_target && !self.groups.is_empty() {
            usize::try_from(arrival % self.groups.len() as u64).unwrap_or(0)
        } else {
            0
        }
    }

    /// The global arrival number of unit `k` (global over the engines) of group `g`:
    /// `k` itself for one group; with `per_target`, numbers ≡ g (mod groups), so the
    /// round-robin target choice `arrival mod targets` picks target g.
    pub(crate) fn arrival_of(&self, g: usize, k: u64) -> u64 {
        if self.per_target {
            k * self.groups.len() as u64 + g as u64
        } else {
            k
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_whole() {
        let c = ClosedLoop {
            groups: vec![
                Group {
                    users: 10,
                    units: 1001,
                    calls: None,
                },
                Group {
                    users: 3,
                    units: 7,
                    calls: Some(7),
                },
            ],
            per_target: true,
            split: true,
            retries: 0,
            ab: None,
        };
        for stripes in 1..=3u32 {
            let shares: Vec<Vec<GroupShare>> = (0..stripes).map(|s| c.share(s, stripes)).collect();
            for g in 0..2 {
                let sum = |f: fn(&GroupShare) -> u64| shares.iter().map(|s| f(&s[g])).sum::<u64>();
                assert_eq!(sum(|s| s.users), c.groups[g].users);
                assert_eq!(sum(|s| s.units), c.groups[g].units);
                assert_eq!(
                    sum(|s| s.calls.unwrap_or(0)),
                    c.groups[g].calls.unwrap_or(0)
                );
            }
        }
        assert_eq!(c.units(), 1008);
    }

    #[test]
    fn sequential_gives_every_engine_one_user() {
        let c = ClosedLoop::sequential(5);
        assert_eq!(
            c.share(1, 2),
            vec![GroupShare {
                users: 1,
                units: 2,
                calls: None
            }]
        );
        let c = ClosedLoop::concurrency(4, 10);
        assert_eq!(c.share(1, 2)[0].users, 2);
        assert_eq!(c.share(0, 3)[0].users, 2);
    }

    #[test]
    fn the_configuration_decides_for_plain_runs() {
        assert_eq!(
            ClosedLoop::from_config(&Config::local(|_| {}), 7),
            Some(ClosedLoop::sequential(7))
        );
        let closed = Config::local(|b| {
            b.rate(0.0).concurrency(3);
        });
        assert_eq!(
            ClosedLoop::from_config(&closed, 9),
            Some(ClosedLoop::concurrency(3, 9))
        );
        let open = Config::local(|b| {
            b.rate(10.0);
        });
        assert_eq!(ClosedLoop::from_config(&open, 9), None);
    }

    #[test]
    fn per_target_arrivals_select_their_target() {
        let mut c = ClosedLoop::concurrency(2, 4);
        assert_eq!((c.arrival_of(0, 7), c.group_of(7)), (7, 0));
        c.groups.push(c.groups[0].clone());
        c.groups.push(c.groups[0].clone());
        c.per_target = true;
        for g in 0..3 {
            for k in 0..5 {
                let a = c.arrival_of(g, k);
                assert_eq!(a % 3, g as u64);
                assert_eq!(c.group_of(a), g);
            }
        }
    }
}
