//! Helpers shared by the integration tests: test servers, running the binary, and
//! reading numbers out of its report.

pub mod ab_server;
pub mod capacity_server;
pub mod fault_proxy;
pub mod h2_server;
pub mod h3_hostile;
pub mod h3_server;
pub mod hostile_server;
pub mod measure;
pub mod page_server;
pub mod prom;
pub mod recorder;
pub mod server;
pub mod tls_server;
pub mod udp_proxy;
pub mod unix_server;

use std::io::Write;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The rshperf binary under test, on a quiet machine (`QUIET_MACHINE`).
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rshperf"));
    c.env(MACHINE_VAR, QUIET_MACHINE);
    c
}

/// The variable that replaces rshperf's measurements of the machine.
pub const MACHINE_VAR: &str = "RSHPERF_TEST_MACHINE";

/// A quiet machine's measurements (no waits for a CPU, no run queue, steal or CPU
/// quota), which `bin` gives every run: a run's validity must not depend on the load
/// of the machine the tests run on. The tests about the machine (diagnose.rs) start
/// rshperf without it.
pub const QUIET_MACHINE: &str = "wait=0,run_queue=none,steal=none,throttled=none,quota=none";

/// Whether this is a CI run (`RSHPERF_CI=1`, set by `.ci/run`), where no test may
/// skip.
pub fn in_ci() -> bool {
    std::env::var_os("RSHPERF_CI").is_some_and(|v| v == "1")
}

/// Skips the calling test (`return support::skip(…)`) because of `reason`: what is
/// missing and what provides it. The reason is written straight to the process's
/// stderr, which the test harness does not capture, so `cargo test` shows it for a
/// passing test too. Under `RSHPERF_CI=1` the test fails instead: CI installs
/// everything the tests need, so a skip there is a broken CI machine.
pub fn skip(reason: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    if in_ci() {
        panic!("{test} would be skipped, which RSHPERF_CI=1 forbids: {reason}");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
}

/// Whether the tests run as root (`id -u` says 0).
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Whether `tool` is on the PATH.
pub fn installed(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Whether process `pid` has `path` open (a read blocked on it, say).
pub fn has_open(pid: u32, path: &std::path::Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == path))
}

/// Waits until `ready()` holds, checking every 10 ms; fails the test, naming `what`,
/// when it does not within `limit` (readiness, never a fixed sleep).
pub fn wait_until(what: &str, limit: Duration, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < limit,
            "gave up after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Held by a test that keeps a CPU busy on purpose (`diagnose.rs`) and by one that
/// needs the client not to be kept waiting (`readme.rs`), so they never overlap.
pub fn cpu_quiet() -> std::sync::MutexGuard<'static, ()> {
    static QUIET: std::sync::Mutex<()> = std::sync::Mutex::new(());
    QUIET.lock().unwrap_or_else(|e| e.into_inner())
}

/// The most a short run may take before a test calls it hung. Only a hang guard:
/// how long a decision takes (a timeout firing, a think time, pacing) is tested on
/// simulated time in the engine's unit tests, never against the wall clock of a
/// loaded machine.
pub const HANG_GUARD: Duration = Duration::from_secs(10);

/// Runs rshperf with `args` and returns its output.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run rshperf")
}

/// Runs rshperf against 127.0.0.1:`port` with extra `args`; asserts exit 0 and
/// returns the report.
pub fn run_ok(port: u16, args: &[&str]) -> Report {
    let port = port.to_string();
    let mut all = vec!["--server", "127.0.0.1", "--port", &port];
    all.extend_from_slice(args);
    let out = run(&all);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "rshperf {all:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    Report {
        text: stdout,
        stderr,
    }
}

/// A classic report, read by line label.
pub struct Report {
    /// stdout.
    pub text: String,
    /// stderr.
    pub stderr: String,
}

impl Report {
    /// The numbers on the first line starting with `label`, in order (the numbers in
    /// the label itself are skipped).
    pub fn nums(&self, label: &str) -> Vec<f64> {
        let line = self
            .text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no line '{label}' in report:\n{}", self.text));
        numbers(&line[label.len()..])
    }

    /// `Total:` connections, requests, replies.
    pub fn totals(&self) -> (u64, u64, u64) {
        let n = self.nums("Total:");
        (n[0] as u64, n[1] as u64, n[2] as u64)
    }

    /// Error counter by name (`connrefused`, `client-timo`, …, or `total`).
    pub fn error(&self, name: &str) -> u64 {
        let label = if ["fd-unavail", "addrunavail", "ftab-full", "other"].contains(&name) {
            "Errors: fd-unavail"
        } else {
            "Errors: total"
        };
        let line = self
            .text
            .lines()
            .find(|l| l.starts_with(label))
            .expect("errors line");
        let rest = &line["Errors:".len()..];
        let pos = rest
            .find(&format!(" {name} "))
            .unwrap_or_else(|| panic!("no {name} in {line}"));
        numbers(&rest[pos + name.len() + 1..])[0] as u64
    }

    /// Reply status counts 1xx..5xx.
    pub fn status(&self) -> [u64; 5] {
        let n = self.nums("Reply status:");
        // Labels are `1xx=` … : numbers() reads 1,N,2,N,…
        [
            n[1] as u64,
            n[3] as u64,
            n[5] as u64,
            n[7] as u64,
            n[9] as u64,
        ]
    }

    /// The `--debug` summary of naps: (naps, poll turns), if any nap was taken.
    pub fn naps(&self) -> Option<(u64, u64)> {
        let line = self.stderr.lines().find(|l| l.contains(" naps in "))?;
        let n = numbers(line);
        Some((n[0] as u64, n[1] as u64))
    }
}

/// Every number in `s` (integers and decimals), in order.
pub fn numbers(s: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in s.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '.' && !cur.is_empty()) {
            cur.push(c);
        } else if !cur.is_empty() {
            out.push(cur.trim_end_matches('.').parse().expect("number"));
            cur.clear();
        }
    }
    out
}

/// `stderr` without the `rshperf: note: the run took …` line (and its CR on a
/// terminal) that `-v` adds to a run shorter than the 5-s reply-rate interval
/// (advice.rs); for tests of short runs that check stderr for everything else.
pub fn without_short_run_note(stderr: &str) -> String {
    const START: &str = "rshperf: note: the run took ";
    let mut out = stderr.to_string();
    while let Some(at) = out.find(START) {
        let end = out[at..].find('\n').map_or(out.len(), |n| at + n + 1);
        out.replace_range(at..end, "");
    }
    out
}

/// `report` with every number replaced by `#` (for comparing layouts).
pub fn masked(report: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in report.chars() {
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// The accept loop of the test servers, on a thread of its own: each accepted
/// connection goes to `on_conn`, failed accepts are skipped, and the loop ends at the
/// first accept after `stop` is set (a server's `Drop` sets it, then connects once).
pub fn accept_loop<S, A, F>(mut accept: A, stop: Arc<AtomicBool>, mut on_conn: F)
where
    S: Send + 'static,
    A: FnMut() -> std::io::Result<S> + Send + 'static,
    F: FnMut(S) + Send + 'static,
{
    std::thread::spawn(move || loop {
        let next = accept();
        if stop.load(Ordering::SeqCst) {
            break;
        }
        if let Ok(stream) = next {
            on_conn(stream);
        }
    });
}
