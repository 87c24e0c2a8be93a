//! What the machine did while a run lasted (`model::run::Machine`), for the validity
//! judgement (`model::validity`): the run queue, the hypervisor's steal, a CPU
//! quota's throttling, and each engine thread's waits for a CPU.
//!
//! Owns reading and parsing the kernel's files: `/proc/loadavg` (its running-task
//! count, sampled once a second by `sample_run_queue` on a thread of its own),
//! `/proc/stat` (the `cpu` line's steal against all CPU time, and the `cpuN` lines
//! for the online cores) and the `cpu.stat` of the process's cgroup and its ancestors
//! (throttled periods against periods, cgroup v2 or v1's cpu controller, found
//! through `/proc/self/cgroup` and `/proc/self/mountinfo`) before and after the run,
//! and `/proc/thread-self/schedstat` (the time a thread waited on a run queue) around
//! each engine's run. A file that cannot be read leaves its figure unmeasured.
//!
//! `RSHPERF_TEST_MACHINE` replaces measurements, for tests that must not depend on
//! the load of the machine they run on and to replay a judgement:
//! `run_queue=R,cores=N,steal=PCT,wait=PCT,throttled=PCT,quota=CORES,busiest=PCT` (any
//! subset; `none` for unmeasured; `busiest` is the busiest engine thread's share of a
//! core, `none` 0). Called by `execute`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::run::Machine;
use crate::model::stats::client::ClientCpu;

/// The environment variable that replaces measurements (`inject`).
pub(crate) const INJECT_VAR: &str = "RSHPERF_TEST_MACHINE";

/// How often the run queue is sampled.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The running-task count of `/proc/loadavg`'s text (`0.50 0.40 0.30 3/250 12345`).
fn loadavg_running(text: &str) -> Option<u64> {
    let field = text.split_whitespace().nth(3)?;
    field.split('/').next()?.parse().ok()
}

/// Samples the runnable tasks once a second (the sampling thread itself not counted)
/// until `done` holds (checked after each wait; `unpark` the thread to end the wait);
/// the mean, None without a sample.
pub(crate) fn sample_run_queue(done: impl Fn() -> bool) -> Option<f64> {
    let mut sum = 0u64;
    let mut n = 0u64;
    loop {
        if let Some(r) = read("/proc/loadavg").and_then(|t| loadavg_running(&t)) {
            sum += r.saturating_sub(1);
            n += 1;
        }
        std::thread::park_timeout(SAMPLE_EVERY);
        if done() {
            break;
        }
    }
    (n > 0).then(|| sum as f64 / n as f64)
}

/// `/proc/stat`'s aggregate `cpu` line: (steal, all CPU time) in ticks, when the
/// kernel reports steal (the eighth value); and the `cpuN` lines (online cores).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct CpuTimes {
    steal: Option<u64>,
    total: u64,
    cores: u32,
}

fn cpu_times(text: &str) -> CpuTimes {
    let mut t = CpuTimes::default();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("cpu") => {
                let v: Vec<u64> = words.filter_map(|w| w.parse().ok()).collect();
                // user nice system idle iowait irq softirq steal (guest time is
                // already in user and nice).
                t.total = v.iter().take(8).sum();
                t.steal = v.get(7).copied();
            }
            Some(w) if w.starts_with("cpu") => t.cores += 1,
            _ => {}
        }
    }
    t
}

/// A cgroup's `cpu.stat`: (periods, throttled periods): v2's and v1's
/// `nr_periods`, `nr_throttled`.
fn throttle_counts(text: &str) -> Option<(u64, u64)> {
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
    };
    Some((get("nr_periods")?, get("nr_throttled")?))
}

/// The quota of a cgroup, cores: v2's `cpu.max` (`QUOTA PERIOD` or `max PERIOD`), or
/// v1's `cpu.cfs_quota_us` (-1: none) over `cpu.cfs_period_us`.
fn quota_cores(dir: &Path) -> Option<f64> {
    if let Some(text) = read(dir.join("cpu.max")) {
        let mut w = text.split_whitespace();
        let quota: f64 = w.next()?.parse().ok()?;
        let period: f64 = w.next()?.parse().ok()?;
        return (period > 0.0).then(|| quota / period);
    }
    let quota: f64 = read(dir.join("cpu.cfs_quota_us"))?.trim().parse().ok()?;
    let period: f64 = read(dir.join("cpu.cfs_period_us"))?.trim().parse().ok()?;
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

/// The directories of the process's CPU cgroup and its ancestors, innermost first:
/// from `/proc/self/cgroup` (`cgroup`) the v2 path (`0::/a/b`) or the v1 cpu
/// controller's (`4:cpu,cpuacct:/a/b`), under the mount point of that hierarchy in
/// `/proc/self/mountinfo` (`mountinfo`: its root and mount point).
fn cgroup_dirs(cgroup: &str, mountinfo: &str) -> Vec<PathBuf> {
    let v1 = cgroup.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        ctrl.split(',').any(|c| c == "cpu").then_some(path)
    });
    let v2 = cgroup.lines().find_map(|l| l.strip_prefix("0::"));
    let mount = mountinfo.lines().find_map(|l| {
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS … - FSTYPE SOURCE SUPEROPTS
        let (left, right) = l.split_once(" - ")?;
        let f: Vec<&str> = left.split_whitespace().collect();
        let r: Vec<&str> = right.split_whitespace().collect();
        let (root, point) = (*f.get(3)?, *f.get(4)?);
        let fits = match (v1, r.first()) {
            (Some(_), Some(&"cgroup")) => r.get(2)?.split(',').any(|o| o == "cpu"),
            (None, Some(&"cgroup2")) => true,
            _ => false,
        };
        fits.then_some((root, point))
    });
    let (Some(path), Some((root, point))) = (v1.or(v2), mount) else {
        return Vec::new();
    };
    let inner = path
        .strip_prefix(root)
        .unwrap_or(path)
        .trim_start_matches('/');
    let mut dir = Path::new(point).join(inner);
    let mut out = vec![dir.clone()];
    while dir != Path::new(point) && dir.pop() {
        out.push(dir.clone());
    }
    out
}

/// What the machine's counters said at one moment.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    cpu: CpuTimes,
    /// Per cgroup with a quota: (periods, throttled, quota cores).
    quotas: Vec<(u64, u64, f64)>,
}

/// The counters now.
pub(crate) fn snapshot() -> Snapshot {
    let cpu = read("/proc/stat")
        .map(|t| cpu_times(&t))
        .unwrap_or_default();
    let dirs = match (read("/proc/self/cgroup"), read("/proc/self/mountinfo")) {
        (Some(c), Some(m)) => cgroup_dirs(&c, &m),
        _ => Vec::new(),
    };
    let quotas = dirs
        .iter()
        .filter_map(|d| {
            let q = quota_cores(d)?;
            let (periods, throttled) = throttle_counts(&read(d.join("cpu.stat"))?)?;
            Some((periods, throttled, q))
        })
        .collect();
    Snapshot { cpu, quotas }
}

/// The machine between `before` and `after`, with the run queue's mean `run_queue`.
pub(crate) fn between(before: &Snapshot, after: &Snapshot, run_queue: Option<f64>) -> Machine {
    let steal = match (before.cpu.steal, after.cpu.steal) {
        (Some(a), Some(b)) if after.cpu.total > before.cpu.total => {
            Some(100.0 * b.saturating_sub(a) as f64 / (after.cpu.total - before.cpu.total) as f64)
        }
        _ => None,
    };
    // The quota that throttled most (an ancestor's quota throttles its children).
    let throttle = before
        .quotas
        .iter()
        .zip(&after.quotas)
        .filter(|((_, _, qa), (_, _, qb))| qa == qb)
        .map(|((p0, t0, q), (p1, t1, _))| {
            let periods = p1.saturating_sub(*p0);
            let throttled = t1.saturating_sub(*t0);
            let pct = if periods > 0 {
                100.0 * throttled as f64 / periods as f64
            } else {
                0.0
            };
            (pct, *q)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    Machine {
        cores: after.cpu.cores,
        run_queue,
        steal_pct: steal,
        throttled_pct: throttle.map(|t| t.0),
        quota_cores: throttle.map(|t| t.1),
    }
}

/// How long the calling thread has waited on a run queue (`schedstat`'s second
/// value, ns); None where the kernel does not say.
pub(crate) fn thread_waited() -> Option<Duration> {
    let text = read("/proc/thread-self/schedstat")?;
    let ns: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Applies `RSHPERF_TEST_MACHINE`'s text `spec` to `machine` and the engines' `cpu`;
/// an error names a part it cannot read.
pub(crate) fn inject(spec: &str, machine: &mut Machine, cpu: &mut ClientCpu) -> Result<(), String> {
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("{INJECT_VAR}: cannot read '{part}' (NAME=VALUE or NAME=none)");
        let (name, value) = part.split_once('=').ok_or_else(bad)?;
        let v: Option<f64> = match value.trim() {
            "none" => None,
            x => Some(
                x.parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(bad)?,
            ),
        };
        match name.trim() {
            "run_queue" => machine.run_queue = v,
            "cores" => machine.cores = v.map_or(0, |c| c as u32),
            "steal" => machine.steal_pct = v,
            "throttled" => machine.throttled_pct = v,
            "quota" => machine.quota_cores = v,
            "wait" => cpu.waited_pct = v,
            "busiest" => cpu.busiest_pct = v.unwrap_or(0.0),
            _ => return Err(bad()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_files_are_read() {
        assert_eq!(loadavg_running("0.50 0.40 0.30 3/250 12345\n"), Some(3));
        assert_eq!(loadavg_running("0.50 0.40"), None);
        let stat = "cpu  100 5 50 800 10 1 2 30 7 0\ncpu0 50 2 25 400 5 0 1 15 0 0\n\
                    cpu1 50 3 25 400 5 1 1 15 0 0\nintr 1 2 3\n";
        assert_eq!(
            cpu_times(stat),
            CpuTimes {
                steal: Some(30),
                total: 998,
                cores: 2
            }
        );
        // A kernel without steal (fewer than eight values).
        assert_eq!(cpu_times("cpu 1 2 3 4\ncpu0 1 2 3 4\n").steal, None);
        let v2 = "nr_periods 40\nnr_throttled 30\nthrottled_usec 9000\nnr_bursts 0\n";
        assert_eq!(throttle_counts(v2), Some((40, 30)));
        let v1 = "nr_periods 12\nnr_throttled 3\nthrottled_time 123\n";
        assert_eq!(throttle_counts(v1), Some((12, 3)));
        assert_eq!(throttle_counts("usage_usec 5\n"), None);
    }

    #[test]
    fn the_cgroup_is_found_under_its_hierarchys_mount_point() {
        let v2_info = "30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup_dirs("0::/system.slice/ci.service\n", v2_info),
            [
                "/sys/fs/cgroup/system.slice/ci.service",
                "/sys/fs/cgroup/system.slice",
                "/sys/fs/cgroup"
            ]
            .map(PathBuf::from)
        );
        // v1's cpu controller (beside others) wins over the unified hierarchy.
        let v1_info = "31 1 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n\
                       32 1 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup_dirs("1:cpu:/rshp\n0::/\n", v1_info),
            ["/sys/fs/cgroup/cpu/rshp", "/sys/fs/cgroup/cpu"].map(PathBuf::from)
        );
        // A container sees its own cgroup as the root of the mount.
        let ns_info = "40 1 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup_dirs("0::/docker/abc\n", ns_info),
            [PathBuf::from("/sys/fs/cgroup")]
        );
        assert!(cgroup_dirs("", v2_info).is_empty());
    }

    #[test]
    fn steal_and_throttling_are_shares_of_the_run() {
        let before = Snapshot {
            cpu: CpuTimes {
                steal: Some(10),
                total: 1000,
                cores: 2,
            },
            quotas: vec![(100, 0, 0.5), (100, 0, 4.0)],
        };
        let after = Snapshot {
            cpu: CpuTimes {
                steal: Some(60),
                total: 1500,
                cores: 2,
            },
            quotas: vec![(140, 30, 0.5), (140, 2, 4.0)],
        };
        let m = between(&before, &after, Some(3.5));
        assert_eq!(m.cores, 2);
        assert_eq!(m.run_queue, Some(3.5));
        assert_eq!(m.steal_pct, Some(10.0));
        assert_eq!(m.throttled_pct, Some(75.0));
        assert_eq!(m.quota_cores, Some(0.5));
        let none = between(&Snapshot::default(), &Snapshot::default(), None);
        assert_eq!((none.steal_pct, none.throttled_pct), (None, None));
    }

    #[test]
    fn measurements_are_injected_by_name() {
        let (mut m, mut cpu) = (Machine::default(), ClientCpu::default());
        inject(
            "run_queue=0.5, cores=2,steal=none,wait=1.5,busiest=97",
            &mut m,
            &mut cpu,
        )
        .expect("valid");
        assert_eq!((m.run_queue, m.cores, m.steal_pct), (Some(0.5), 2, None));
        assert_eq!((cpu.waited_pct, cpu.busiest_pct), (Some(1.5), 97.0));
        for bad in ["load=1", "wait", "wait=x", "steal=inf"] {
            let e = inject(bad, &mut m, &mut cpu).expect_err(bad);
            assert!(e.starts_with("RSHPERF_TEST_MACHINE: cannot read"), "{e}");
        }
    }
}
