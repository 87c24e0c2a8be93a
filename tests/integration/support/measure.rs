//! Running rshperf under a wall-clock limit while watching its peak memory.
//!
//! `run_measured` spawns the binary with piped output, polls `/proc/<pid>/status` for
//! `VmHWM` (the peak resident set, which only grows) until the process exits, and kills
//! it if it outlives its limit, so a hanging rshperf fails the test instead of hanging
//! it.

use std::io::Read;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::Report;

/// How a bounded run ended.
#[derive(Debug)]
pub struct Measured {
    /// Exit status code (None when killed by a signal).
    pub code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// stdout.
    pub stdout: String,
    /// stderr.
    pub stderr: String,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
    /// Highest `VmHWM` seen, KiB (0 if never read).
    pub peak_kib: u64,
    /// It outlived the limit and was killed.
    pub killed: bool,
}

impl Measured {
    /// The stdout as a report.
    pub fn report(&self) -> Report {
        Report {
            text: self.stdout.clone(),
            stderr: self.stderr.clone(),
        }
    }

    /// Asserts: exit 0, a complete report, and no panic.
    pub fn assert_complete(&self) {
        assert!(
            !self.killed,
            "killed after {:?}\n{}",
            self.elapsed,
            self.all()
        );
        assert_eq!(self.code, Some(0), "{}", self.all());
        // The error block ends the classic report; verbose, session and HTTP/2 lines
        // may follow it.
        assert!(
            self.stdout
                .lines()
                .any(|l| l.starts_with("Errors: fd-unavail")),
            "incomplete report:\n{}",
            self.all()
        );
        assert!(!self.stderr.contains("panicked"), "{}", self.all());
    }

    /// Everything, for assertion messages.
    pub fn all(&self) -> String {
        format!(
            "code {:?} signal {:?} after {:?}, peak {} KiB\nstdout:\n{}\nstderr:\n{}",
            self.code, self.signal, self.elapsed, self.peak_kib, self.stdout, self.stderr
        )
    }
}

/// `VmHWM` of `pid` in KiB, if readable.
fn vm_hwm(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `cmd` (stdout and stderr captured) for at most `limit`.
pub fn run_measured(mut cmd: Command, limit: Duration) -> Measured {
    use std::os::unix::process::ExitStatusExt;
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_t = thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_t = thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let mut peak = 0;
    let mut killed = false;
    let status = loop {
        if let Some(kib) = vm_hwm(pid) {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if start.elapsed() > limit && !killed {
            killed = true;
            let _ = child.kill();
        }
        thread::sleep(Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    let stdout = String::from_utf8_lossy(&out_t.join().expect("stdout reader")).into_owned();
    let stderr = String::from_utf8_lossy(&err_t.join().expect("stderr reader")).into_owned();
    Measured {
        code: status.code(),
        signal: status.signal(),
        stdout,
        stderr,
        elapsed,
        peak_kib: peak,
        killed,
    }
}

/// Runs rshperf against 127.0.0.1:`port` with `args` for at most `limit`.
pub fn rshperf_measured(port: u16, args: &[&str], limit: Duration) -> Measured {
    let mut cmd = super::bin();
    cmd.args(["--server", "127.0.0.1", "--port", &port.to_string()])
        .args(args);
    run_measured(cmd, limit)
}
