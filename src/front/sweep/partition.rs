//! A partitioned sweep (`--partition`, `--start-at`): which partition this process
//! runs, and the fixed walk every partition follows with each step's start.
//!
//! Owns resolving `--partition auto` (through `model::config::auto_partition`, from the
//! environment the caller passes) and the schedule: the walk's rates L, L+S, … ≤ H
//! (at most `--stop-after-step`), step j starting at T + Σ_{i<j} (window_i +
//! cool-down), where window_i is step i's arrival window (arrivals ÷ rate) plus the
//! shortest time its last arrival lasts (session think times). Every partition
//! computes the same schedule from the same command line, so N machines load the
//! server together at every rate without talking to one another. Called by
//! `sweep::run`; `rshperf merge` rebuilds the sweep from the partitions' documents.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::front::error::Error;
use crate::model::config::auto_partition;
use crate::model::config::StartAt;
use crate::model::workload::Workload;

use super::args::{PartitionSpec, Sweep};
use super::step;
use super::SweepError;

/// One step of a partitioned sweep's fixed walk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Slot {
    /// The step's arrival rate.
    pub(crate) rate: f64,
    /// When it starts, seconds since the epoch.
    pub(crate) start: f64,
}

/// Sets the sweep's partition from its `--partition` (`auto`: from `env`, as
/// `auto_partition::resolve` takes it).
pub(crate) fn resolve(
    sweep: &mut Sweep,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Error> {
    let (i, n) = match sweep.partition {
        None => return Ok(()),
        Some(PartitionSpec::Fixed(i, n)) => (i, n),
        Some(PartitionSpec::Auto(given)) => {
            auto_partition::resolve(env, given).map_err(SweepError::from)?
        }
    };
    let mut b = sweep.base.to_builder();
    b.partition(i, n);
    sweep.base = b.build().map_err(|r| r.error)?.config;
    Ok(())
}

/// The walk's rates, at most `--stop-after-step` of them.
pub(crate) fn rates(sweep: &Sweep) -> Vec<f64> {
    let o = &sweep.rules;
    let Some(step) = o.rate_step else {
        return Vec::new();
    };
    let limit = o.stop_after_step.map_or(usize::MAX, |k| k as usize);
    (0..)
        .map(|k| o.low_rate + step * f64::from(k))
        .take_while(|r| *r <= o.high_rate * (1.0 + 1e-9))
        .take(limit)
        .collect()
}

/// The fixed walk with each step's start, when the sweep is partitioned (None
/// otherwise); `now` resolves a `--start-at +S`.
pub(crate) fn schedule(
    sweep: &Sweep,
    work: &Workload,
    now: SystemTime,
) -> Result<Option<Vec<Slot>>, Error> {
    if sweep.partition.is_none() {
        return Ok(None);
    }
    let first = match sweep.base.load().start_at() {
        Some(StartAt::Unix(t)) => t,
        Some(StartAt::After(s)) => {
            now.duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64()
                + s
        }
        None => now
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64(),
    };
    let tail = step::tail_of(work);
    let mut start = first;
    let mut slots = Vec::new();
    for rate in rates(sweep) {
        slots.push(Slot { rate, start });
        let arrivals = work.arrivals(&step::config(sweep, rate, None)?);
        start += arrivals as f64 / rate + tail + sweep.rules.cool_down;
    }
    Ok(Some(slots))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::sweep::args::{parse, Parsed};
    use std::collections::HashMap;
    use std::time::Duration;

    fn sweep(args: &[&str]) -> Sweep {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&args) {
            Ok(Parsed::Run(s)) => *s,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    const BASE: [&str; 12] = [
        "--server",
        "127.0.0.1",
        "--low-rate",
        "100",
        "--high-rate",
        "400",
        "--rate-step",
        "100",
        "--const-test-time",
        "2",
        "--cool-down",
        "1.5",
    ];

    fn with(extra: &[&str]) -> Sweep {
        let mut v = BASE.to_vec();
        v.extend_from_slice(extra);
        sweep(&v)
    }

    #[test]
    fn every_step_starts_after_the_windows_and_cool_downs_before_it() {
        let s = with(&["--partition", "1/3", "--start-at", "1000"]);
        let work = Workload::from_config(&s.base).expect("workload");
        let slots = schedule(&s, &work, UNIX_EPOCH)
            .expect("valid")
            .expect("partitioned");
        // 2 s of arrivals and 1.5 s of cool-down per step.
        let expect = [
            (100.0, 1000.0),
            (200.0, 1003.5),
            (300.0, 1007.0),
            (400.0, 1010.5),
        ];
        assert_eq!(
            slots,
            expect.map(|(rate, start)| Slot { rate, start }).to_vec()
        );
        let s = with(&[
            "--partition",
            "0/2",
            "--start-at",
            "+4",
            "--stop-after-step",
            "2",
        ]);
        let slots = schedule(&s, &work, UNIX_EPOCH + Duration::from_secs(10))
            .expect("valid")
            .expect("slots");
        assert_eq!(
            slots,
            [
                Slot {
                    rate: 100.0,
                    start: 14.0
                },
                Slot {
                    rate: 200.0,
                    start: 17.5
                }
            ]
        );
        assert_eq!(
            schedule(&with(&[]), &work, UNIX_EPOCH).expect("valid"),
            None
        );
    }

    #[test]
    fn a_fixed_number_of_conns_makes_windows_that_shrink_with_the_rate() {
        let s = sweep(&[
            "--server",
            "127.0.0.1",
            "--low-rate",
            "100",
            "--high-rate",
            "200",
            "--rate-step",
            "100",
            "--num-conns",
            "100",
            "--partition",
            "0/2",
            "--start-at",
            "50",
        ]);
        let work = Workload::from_config(&s.base).expect("workload");
        let slots = schedule(&s, &work, UNIX_EPOCH)
            .expect("valid")
            .expect("slots");
        assert_eq!(
            slots,
            [
                Slot {
                    rate: 100.0,
                    start: 50.0
                },
                Slot {
                    rate: 200.0,
                    start: 51.0
                }
            ]
        );
    }

    #[test]
    fn auto_takes_the_partition_from_the_environment_given() {
        let env: HashMap<&str, &str> = [("SLURM_PROCID", "1"), ("SLURM_NTASKS", "2")].into();
        let lookup = |k: &str| env.get(k).map(|v| v.to_string());
        let mut s = with(&["--partition", "auto", "--start-at", "+1"]);
        assert_eq!(s.partition, Some(PartitionSpec::Auto(None)));
        resolve(&mut s, &lookup).expect("resolved");
        assert_eq!(s.base.load().partition(), (1, 2));
        let mut s = with(&[
            "--partition",
            "auto",
            "--partitions",
            "3",
            "--start-at",
            "+1",
        ]);
        let e = resolve(&mut s, &lookup)
            .expect_err("inconsistent")
            .to_string();
        assert_eq!(
            e,
            "rshperf: sweep: --partition auto: SLURM_NTASKS=2 but 3 partitions were given"
        );
        let env: HashMap<&str, &str> = [("PARALLEL_SEQ", "3")].into();
        let lookup = |k: &str| env.get(k).map(|v| v.to_string());
        let mut s = with(&["--partition=auto/3", "--start-at", "+1"]);
        resolve(&mut s, &lookup).expect("resolved");
        assert_eq!(s.base.load().partition(), (2, 3));
        let mut s = with(&["--partition", "auto", "--start-at", "+1"]);
        let e = resolve(&mut s, &|_| None)
            .expect_err("no scheduler")
            .to_string();
        assert!(
            e.starts_with("rshperf: sweep: --partition auto: no scheduler's"),
            "{e}"
        );
    }

    #[test]
    fn partition_options_are_checked_together() {
        let err = |extra: &[&str]| {
            let mut v = BASE.to_vec();
            v.extend_from_slice(extra);
            let args: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            match parse(&args) {
                Err(e) => e.to_string(),
                other => panic!("{v:?}: {other:?}"),
            }
        };
        assert_eq!(
            err(&["--partition", "0/2"]),
            "rshperf: sweep: --partition needs --start-at: every partition must start each \
             step at the same moment"
        );
        assert_eq!(
            err(&["--partition", "0/2", "--start-at", "+1", "--find-max"]),
            "rshperf: sweep: --find-max cannot be used with --partition: the search picks \
             each rate from the results of the steps before it, which no partition has \
             alone; walk with --rate-step"
        );
        assert_eq!(
            err(&["--partitions", "2"]),
            "rshperf: sweep: --partitions goes with --partition auto"
        );
        assert_eq!(
            err(&["--start-at", "+1"]),
            "rshperf: sweep: --start-at goes with --partition (a sweep in one process starts \
             at once)"
        );
        assert_eq!(
            err(&["--partition", "auto/x", "--start-at", "+1"]),
            "rshperf: sweep: --partition: illegal partition auto/x (expected I/N, auto or \
             auto/N)"
        );
        assert_eq!(
            err(&[
                "--partition",
                "auto/2",
                "--partitions",
                "3",
                "--start-at",
                "+1"
            ]),
            "rshperf: sweep: --partition auto/2 and --partitions 3 disagree"
        );
        assert_eq!(
            err(&["--partition", "2/2", "--start-at", "+1"]),
            "rshperf: illegal partition 2/2 (expected I/N with 0 <= I < N, e.g. 0/4)"
        );
        assert_eq!(
            err(&["--stop-after-step", "0"]),
            "rshperf: sweep: --stop-after-step must be at least 1"
        );
    }
}
