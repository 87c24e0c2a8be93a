//! A report whatever stops the run: GNU `timeout` (SIGTERM and SIGINT, each delivered
//! twice: to rshperf, then to its process group), `kill` to a process group, a Ctrl-C on
//! a pseudo-terminal, in every front end that runs the engines; and the forced exit a
//! deliberate second signal asks for, while outputs are written or in a start-up stuck
//! on a FIFO, and the third signal that ends a forced exit which hangs.
//!
//! Every step waits for observable state (the server's request count, a line on
//! stdout or stderr, a file, the kernel's pending-signal mask, what a thread waits in),
//! never for time. The
//! one wait for time is the signal window itself (`DELIBERATE`): a second signal is
//! deliberate by being a second or more after the first, by rshperf's clock, which runs
//! from the handler of the first signal; the test waits from a moment after that.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use crate::support::{self, server::Behavior, server::Server};

/// Longer than rshperf's signal window (`engine::interrupt::WINDOW`, 1 s): a signal
/// this long after the first one was handled is deliberate.
const DELIBERATE: Duration = Duration::from_millis(1300);

/// The longest any step may take before the test calls it hung.
const LIMIT: Duration = Duration::from_secs(60);

/// A fresh directory for one test's files, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("rshperf-sig-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        Dir(d)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The names in the directory, sorted.
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A process started by a test in a process group of its own, its stdout and stderr
/// collected as they come; killed (its whole group) if the test ends first.
struct Running {
    child: Child,
    out: Arc<Mutex<String>>,
    err: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
}

/// Appends what `from` yields to `to` until it ends.
fn collect(mut from: impl Read + Send + 'static, to: &Arc<Mutex<String>>) -> JoinHandle<()> {
    let to = Arc::clone(to);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            let text = String::from_utf8_lossy(&buf[..n]).into_owned();
            to.lock().unwrap_or_else(|e| e.into_inner()).push_str(&text);
        }
    })
}

impl Running {
    fn start(mut cmd: Command) -> Running {
        Running::collecting(cmd.stdin(Stdio::null()).stderr(Stdio::piped()))
    }

    /// Starts `cmd` (stdout piped, stdin and stderr as set) and collects its output.
    fn collecting(cmd: &mut Command) -> Running {
        let mut child = cmd
            .process_group(0)
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        let (out, err) = (Arc::default(), Arc::default());
        let mut readers = vec![collect(child.stdout.take().expect("stdout"), &out)];
        if let Some(e) = child.stderr.take() {
            readers.push(collect(e, &err));
        }
        Running {
            child,
            out,
            err,
            readers,
        }
    }

    /// Whether it has not ended yet.
    fn alive(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    fn stdout(&self) -> String {
        self.out.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn stderr(&self) -> String {
        self.err.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Waits for the end (within `LIMIT`); the status, stdout and stderr.
    fn finish(mut self) -> (ExitStatus, String, String) {
        let child = std::cell::RefCell::new(&mut self.child);
        support::wait_until("the process to end", LIMIT, || {
            child.borrow_mut().try_wait().expect("try_wait").is_some()
        });
        let status = self.child.wait().expect("wait");
        for r in self.readers.drain(..) {
            r.join().expect("reader");
        }
        (status, self.stdout(), self.stderr())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let group = format!("-{}", self.child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = self.child.wait();
        }
    }
}

/// `kill ARGS…`, which must succeed.
fn kill(args: &[&str]) {
    let ok = Command::new("kill").args(args).status().expect("kill");
    assert!(ok.success(), "kill {args:?}");
}

/// Whether signal `sig` is pending for process `pid` (sent, not yet handled).
fn pending(pid: &str, sig: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .filter(|l| l.starts_with("ShdPnd:") || l.starts_with("SigPnd:"))
        .filter_map(|l| l.split_whitespace().nth(1))
        .any(|mask| u64::from_str_radix(mask, 16).is_ok_and(|m| m & (1 << (sig - 1)) != 0))
}

/// Sends `sig` (`-TERM`) to `pid` and waits until the process has handled it.
fn signal_handled(pid: &str, sig: &str) {
    let number = if sig == "-INT" { 2 } else { 15 };
    kill(&[sig, pid]);
    support::wait_until("the signal to be handled", LIMIT, || !pending(pid, number));
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read json");
    serde_json::from_str(&text).expect("parse json")
}

/// rshperf's options for a run against `s` that lasts until a signal.
fn endless(s: &Server, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "--server",
        "127.0.0.1",
        "--port",
        &s.port().to_string(),
        "--rate",
        "100",
        "--runtime",
        "600",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    v.extend(extra.iter().map(|a| a.to_string()));
    v
}

/// Waits until `s` has seen 20 more requests than `before`.
fn load_seen(s: &Server, before: u64) {
    support::wait_until("20 requests at the server", LIMIT, || {
        s.requests() >= before + 20
    });
}

/// The classic report is on `stdout`, whole (its last line is there).
fn assert_report(stdout: &str) {
    assert!(stdout.contains("\nTotal: connections "), "{stdout}");
    assert!(
        stdout.ends_with("Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0\n"),
        "{stdout}"
    );
}

/// The run's JSON is marked interrupted, and accounts for every connection.
fn assert_interrupted(doc: &Value) {
    assert_eq!(doc["interrupted"], Value::Bool(true));
    assert_eq!(doc["raw"]["interrupted"], Value::Bool(true));
    let n = |v: &Value| v.as_u64().expect("count");
    assert_eq!(
        n(&doc["connections"]["total"]),
        n(&doc["connections"]["successful"]) + n(&doc["errors"]["total"]) + n(&doc["abandoned"])
    );
}

/// The run's JSON says it is invalid for being interrupted: `valid` false, and an
/// `interrupted` reason with the run's length (other reasons may join it on a busy
/// machine).
fn assert_invalid_for_interruption(doc: &Value) {
    let v = &doc["validity"];
    assert_eq!(v["valid"], Value::Bool(false), "{v}");
    let r = v["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .find(|r| r["reason"] == "interrupted")
        .unwrap_or_else(|| panic!("no interrupted reason: {v}"));
    let d = r["measured"]["duration_s"].as_f64().expect("duration_s");
    assert!(d > 0.0, "{v}");
    assert!(
        r["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("interrupted (SIGINT or SIGTERM) after ")),
        "{v}"
    );
}

/// `timeout -s SIG 600 rshperf ARGS` in its own process group (as `timeout` makes
/// it), with `--preserve-status` when asked.
fn under_timeout(sig: &str, preserve: bool, args: &[String]) -> Running {
    let mut cmd = Command::new("timeout");
    if preserve {
        cmd.arg("--preserve-status");
    }
    cmd.args(["-s", sig, "600", env!("CARGO_BIN_EXE_rshperf")])
        .args(args)
        .env(support::MACHINE_VAR, support::QUIET_MACHINE);
    Running::start(cmd)
}

/// Makes `timeout` act now: SIGALRM is what its timer delivers to it when the time is
/// up; it then signals rshperf and rshperf's process group.
fn time_up(timeout: &Running) {
    kill(&["-ALRM", &timeout.pid()]);
}

#[test]
fn timeout_with_term_or_int_prints_the_report_and_writes_the_json() {
    for sig in ["TERM", "INT"] {
        let s = Server::start(Behavior::Fixed(10));
        let d = Dir::new(&format!("timeout-{sig}"));
        let j = d.path("r.json");
        let args = endless(&s, &[&format!("--json={}", j.display())]);
        let t = under_timeout(sig, false, &args);
        load_seen(&s, 0);
        time_up(&t);
        let (status, stdout, stderr) = t.finish();
        // 124: `timeout`'s own status when the time was up, whatever rshperf did.
        assert_eq!(status.code(), Some(124), "{sig}: {stderr}");
        assert_report(&stdout);
        let doc = json(&j);
        assert_interrupted(&doc);
        assert_invalid_for_interruption(&doc);
        let line = format!("rshperf: interrupted by SIG{sig} after ");
        assert!(
            stderr.lines().any(|l| l.starts_with(&line)),
            "{sig}: {stderr}"
        );
        assert!(!stderr.contains(" again "), "{sig}: {stderr}");
    }
}

#[test]
fn every_front_end_that_runs_the_engines_survives_timeout() {
    let s = Server::start(Behavior::Fixed(10));
    let d = Dir::new("fronts");
    let url = format!("http://127.0.0.1:{}/", s.port());
    let j = |name: &str| format!("--json={}", d.path(name).display());
    // (front end, arguments, its own status after a signal, what its report shows)
    let cases: Vec<(&str, Vec<String>, i32, &str)> = vec![
        (
            "--threads 2",
            endless(&s, &["--threads", "2", &j("threads.json")]),
            0,
            "\nTotal: connections ",
        ),
        (
            "--partition 1/2",
            endless(&s, &["--partition", "1/2", &j("partition.json")]),
            0,
            "\nTotal: connections ",
        ),
        (
            "ab",
            ["ab", "-n", "1000000", "-c", "2", &url]
                .map(String::from)
                .to_vec(),
            1,
            "\nComplete requests:",
        ),
        (
            "lb",
            ["lb", "-n", "0", "-c", "2", "-t", "600", &url]
                .map(String::from)
                .to_vec(),
            0,
            "\nComplete requests:",
        ),
        (
            "sweep",
            [
                "sweep",
                "--server",
                "127.0.0.1",
                "--port",
                &s.port().to_string(),
                "--low-rate",
                "100",
                "--high-rate",
                "200",
                "--rate-step",
                "100",
                "--const-test-time",
                "600",
                &j("sweep.json"),
            ]
            .map(String::from)
            .to_vec(),
            0,
            "; interrupted)",
        ),
    ];
    for (front, args, code, shows) in cases {
        let t = under_timeout("TERM", true, &args);
        load_seen(&s, s.requests());
        time_up(&t);
        let (status, stdout, stderr) = t.finish();
        // --preserve-status: rshperf's own status, as after one `kill -TERM`.
        assert_eq!(status.code(), Some(code), "{front}: {stderr}");
        assert!(stdout.contains(shows), "{front}: {stdout}");
    }
    for name in ["threads.json", "partition.json"] {
        assert_interrupted(&json(&d.path(name)));
    }
    let sweep = json(&d.path("sweep.json"));
    assert_eq!(sweep["result"]["interrupted"], Value::Bool(true));
    assert_eq!(sweep["steps"][0]["run"]["interrupted"], Value::Bool(true));

    // demo (its server is in the process): signals are caught once the echo line is out.
    let t = under_timeout(
        "INT",
        true,
        &["demo", "--rate", "100", "--runtime", "600", &j("demo.json")].map(String::from),
    );
    support::wait_until("demo's echo line", LIMIT, || {
        t.stdout().starts_with("rshperf ")
    });
    time_up(&t);
    let (status, stdout, stderr) = t.finish();
    assert_eq!(status.code(), Some(0), "demo: {stderr}");
    assert_report(&stdout);
    assert_interrupted(&json(&d.path("demo.json")));
}

#[test]
fn a_stop_of_the_process_group_is_one_interruption() {
    // The group alone; and the process then its group, as `timeout` and systemd do.
    for (sig, both) in [("-TERM", false), ("-TERM", true), ("-INT", true)] {
        let s = Server::start(Behavior::Slow(Duration::from_millis(300), 10));
        let d = Dir::new("group");
        let j = d.path("r.json");
        let r = Running::start({
            let mut c = support::bin();
            c.args(endless(&s, &[&format!("--json={}", j.display())]));
            c
        });
        load_seen(&s, 0);
        let (pid, group) = (r.pid(), format!("-{}", r.pid()));
        if both {
            kill(&[sig, "--", &pid, &group]);
        } else {
            kill(&[sig, "--", &group]);
        }
        let (status, stdout, stderr) = r.finish();
        assert_eq!(status.code(), Some(0), "{sig} {both}: {stderr}");
        assert_report(&stdout);
        let doc = json(&j);
        assert_interrupted(&doc);
        assert!(
            doc["abandoned"].as_u64().expect("abandoned") > 0,
            "nothing was open"
        );
        let name = sig.trim_start_matches('-');
        let line = format!("rshperf: interrupted by SIG{name} after ");
        assert!(stderr.lines().any(|l| l.starts_with(&line)), "{stderr}");
    }
}

#[test]
fn a_ctrl_c_on_a_terminal_prints_the_report() {
    let ok = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("util-linux"));
    if !ok {
        return support::skip("util-linux `script` not installed (package bsdutils)");
    }
    let s = Server::start(Behavior::Fixed(10));
    let d = Dir::new("pty");
    let (j, out) = (d.path("r.json"), d.path("stdout"));
    let quote = |a: &str| format!("'{}'", a.replace('\'', r"'\''"));
    // `exec`: the shell `script` starts ($SHELL, else /bin/sh: dash in CI) becomes
    // rshperf, so no waiting shell is in the foreground group to die of the SIGINT.
    let mut cmd = format!("exec {}", quote(env!("CARGO_BIN_EXE_rshperf")));
    for a in endless(&s, &[&format!("--json={}", j.display())]) {
        cmd.push(' ');
        cmd.push_str(&quote(&a));
    }
    cmd.push_str(&format!(" >{}", quote(&out.display().to_string())));
    // `script` copies its stdin to the terminal, whose line discipline turns ^C into
    // SIGINT for the foreground process group, as a person's Ctrl-C. What the terminal
    // shows (rshperf's stderr) is `script`'s stdout.
    let mut script = Running::collecting(
        Command::new("script")
            .args(["-qfec", &cmd, "/dev/null"])
            .env(support::MACHINE_VAR, support::QUIET_MACHINE)
            .stdin(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let mut keys = script.child.stdin.take().expect("stdin");
    load_seen(&s, 0);
    keys.write_all(b"\x03").expect("Ctrl-C");
    keys.flush().expect("flush");
    let (status, terminal, _) = script.finish();
    drop(keys);
    assert_eq!(status.code(), Some(0), "{terminal}");
    assert_report(&std::fs::read_to_string(&out).expect("stdout file"));
    assert_interrupted(&json(&j));
    assert!(
        terminal.contains("rshperf: interrupted by SIGINT after "),
        "{terminal:?}"
    );
}

#[test]
fn a_second_signal_while_outputs_are_written_keeps_the_complete_ones() {
    let s = Server::start(Behavior::Fixed(10));
    let d = Dir::new("outputs");
    let (j, c, h, x) = (
        d.path("r.json"),
        d.path("r.csv"),
        d.path("r.html"),
        d.path("j.xml"),
    );
    for (p, old) in [(&c, "old csv\n"), (&x, "old junit\n")] {
        std::fs::write(p, old).expect("old file");
    }
    // `--html` to a FIFO nobody reads: its writing blocks (the outputs are written in
    // the order --json, --csv, --html, --junit).
    let made = Command::new("mkfifo").arg(&h).status().expect("mkfifo");
    assert!(made.success());
    let r = Running::start({
        let mut cmd = support::bin();
        cmd.args(endless(
            &s,
            &[
                &format!("--json={}", j.display()),
                &format!("--csv={}", c.display()),
                &format!("--html={}", h.display()),
                &format!("--junit={}", x.display()),
            ],
        ));
        cmd
    });
    load_seen(&s, 0);
    kill(&["-TERM", &r.pid()]);
    // The outputs before the blocked one are complete (each file is replaced whole).
    support::wait_until("the JSON and CSV", LIMIT, || {
        j.exists() && std::fs::read_to_string(&c).is_ok_and(|t| t != "old csv\n")
    });
    assert!(r
        .stderr()
        .contains("rshperf: interrupted by SIGTERM after "));
    // The first signal was handled before the stderr line: this is a deliberate second.
    std::thread::sleep(DELIBERATE);
    kill(&["-TERM", &r.pid()]);
    let (status, stdout, stderr) = r.finish();
    // It ended by the signal (a shell's 143), after saying what it did.
    assert_eq!(status.signal(), Some(15), "{stderr}");
    assert_report(&stdout);
    let forced = stderr
        .lines()
        .find(|l| l.starts_with("rshperf: interrupted by SIGTERM; SIGTERM again "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        forced.ends_with(" s later: exiting now (the outputs already complete are kept)"),
        "{forced}"
    );
    let incomplete = format!(
        "rshperf: {} is incomplete: the exit came while writing it",
        h.display()
    );
    assert!(stderr.lines().any(|l| l == incomplete), "{stderr}");
    // Complete outputs kept, the one after the blocked output as it was, nothing else.
    assert_interrupted(&json(&j));
    let csv = std::fs::read_to_string(&c).expect("csv");
    assert!(
        csv.starts_with("old csv\n") && csv.lines().count() == 2,
        "{csv}"
    );
    assert_eq!(std::fs::read_to_string(&x).expect("junit"), "old junit\n");
    assert_eq!(d.names(), ["j.xml", "r.csv", "r.html", "r.json"]);
}

#[test]
fn a_start_up_stuck_on_a_fifo_ends_at_a_deliberate_second_signal() {
    let s = Server::start(Behavior::Fixed(10));
    let d = Dir::new("stuck");
    let (fifo, j) = (d.path("wlog.fifo"), d.path("r.json"));
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    // Open read-write, never written: rshperf's read of the workload waits forever.
    let _writer = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .expect("open fifo");
    let mut r = Running::start({
        let mut cmd = support::bin();
        cmd.args(endless(
            &s,
            &[
                &format!("--wlog=n,{}", fifo.display()),
                &format!("--json={}", j.display()),
            ],
        ));
        cmd
    });
    support::wait_until("rshperf to open the FIFO", LIMIT, || {
        support::has_open(r.child.id(), &fifo)
    });
    signal_handled(&r.pid(), "-TERM");
    std::thread::sleep(DELIBERATE);
    // The first signal stopped the run, which cannot end while the read waits.
    assert!(r.alive(), "the first signal ended the process");
    kill(&["-TERM", &r.pid()]);
    let (status, stdout, stderr) = r.finish();
    assert_eq!(status.signal(), Some(15), "{stderr}");
    assert_eq!(stdout, "", "no report: nothing ran");
    assert!(
        stderr.starts_with("rshperf: interrupted by SIGTERM; SIGTERM again "),
        "{stderr}"
    );
    assert!(!j.exists());
    assert_eq!(s.connections(), 0);
}

#[test]
fn the_metrics_linger_ends_at_a_stop() {
    let s = Server::start(Behavior::Fixed(10));
    let linger = ["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "600"];
    // A stop during the run: no linger after the report.
    let r = Running::start({
        let mut cmd = support::bin();
        cmd.args(endless(&s, &linger));
        cmd
    });
    load_seen(&s, 0);
    kill(&["-TERM", &r.pid()]);
    let (status, stdout, stderr) = r.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert_report(&stdout);
    // A run that ended by itself lingers until a stop.
    let port = s.port().to_string();
    let mut args = vec!["--server", "127.0.0.1", "--port", &port, "--num-conns", "5"];
    args.extend(linger);
    let r = Running::start({
        let mut cmd = support::bin();
        cmd.args(&args);
        cmd
    });
    support::wait_until("the report", LIMIT, || {
        r.stdout().ends_with("ftab-full 0 other 0\n")
    });
    kill(&["-TERM", &r.pid()]);
    let (status, stdout, stderr) = r.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("\nTotal: connections 5 requests 5 replies 5 "),
        "{stdout}"
    );
    assert!(!stderr.contains("interrupted"), "{stderr}");
}

/// What each thread of process `pid` waits in (its kernel `wchan`), by thread name.
fn waits(pid: &str) -> Vec<(String, String)> {
    let read = |p: PathBuf| std::fs::read_to_string(p).unwrap_or_default();
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .map(|t| {
                    let name = read(t.path().join("comm")).trim().to_string();
                    (name, read(t.path().join("wchan")))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether thread `name` of `pid` waits in a kernel function whose name has `what`.
fn waits_in(pid: &str, name: &str, what: &str) -> bool {
    waits(pid)
        .iter()
        .any(|(n, w)| n == name && w.contains(what))
}

#[test]
fn a_third_signal_ends_a_forced_exit_that_hangs() {
    let s = Server::start(Behavior::Fixed(10));
    // `--debug` lines to a stderr nobody reads: the engine (the main thread) blocks
    // writing one, holding stderr, so the forced exit cannot say what it did.
    let mut child = support::bin()
        .args(endless(&s, &["--rate", "1000", "--debug", "1"]))
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let unread = child.stderr.take();
    let mut r = Running {
        child,
        out: Arc::default(),
        err: Arc::default(),
        readers: Vec::new(),
    };
    let pid = r.pid();
    support::wait_until("the engine to block on stderr", LIMIT, || {
        waits_in(&pid, "rshperf", "pipe_write")
    });
    signal_handled(&pid, "-TERM");
    std::thread::sleep(DELIBERATE);
    signal_handled(&pid, "-TERM");
    support::wait_until("the forced exit to wait for stderr", LIMIT, || {
        waits_in(&pid, "rshperf-signals", "futex")
    });
    assert!(r.alive(), "{:?}", waits(&pid));
    std::thread::sleep(DELIBERATE);
    kill(&["-TERM", &pid]);
    let (status, _, _) = r.finish();
    assert_eq!(status.signal(), Some(15));
    drop(unread);
}
