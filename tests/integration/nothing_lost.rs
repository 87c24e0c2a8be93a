//! Nothing lost: interrupted runs account for every connection (SIGINT mid-run, during
//! the `--start-at` wait, before the engines start, and in `merge`), output paths are checked before the first
//! connection, each output is attempted on its own, and a dead stderr does not hang.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{self, server::Behavior, server::Server};

/// A fresh directory for one test's files.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rshperf-nl-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read json");
    serde_json::from_str(&text).expect("parse json")
}

fn kill(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(ok.success());
}

/// Starts a long run against `s` (replies after 300 ms, so connections are open at
/// any moment) with `extra` options.
fn long_run(s: &Server, extra: &[&str]) -> Child {
    let port = s.port().to_string();
    support::bin()
        .args([
            "--server",
            "127.0.0.1",
            "--port",
            &port,
            "--num-conns",
            "100000",
            "--rate",
            "100",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn")
}

/// Interrupts `child` with `sig` once the server has seen 20 more requests (the
/// engine catches signals before its first connection).
fn interrupt_after_load(s: &Server, child: Child, sig: &str) -> Output {
    let before = s.requests();
    support::wait_until("20 requests at the server", Duration::from_secs(30), || {
        s.requests() >= before + 20
    });
    kill(&child, sig);
    child.wait_with_output().expect("wait")
}

/// Asserts the accounting identity and the interruption marks of a run document;
/// returns `abandoned`.
fn assert_accounted(d: &Value) -> u64 {
    assert_eq!(d["interrupted"], Value::Bool(true));
    assert_eq!(d["raw"]["interrupted"], Value::Bool(true));
    assert_identity(d)
}

/// Asserts connections = successful + errors + abandoned; returns `abandoned`.
fn assert_identity(d: &Value) -> u64 {
    let n = |v: &Value| v.as_u64().expect("count");
    let total = n(&d["connections"]["total"]);
    let ok = n(&d["connections"]["successful"]);
    let errors = n(&d["errors"]["total"]);
    let abandoned = n(&d["abandoned"]);
    assert_eq!(
        total,
        ok + errors + abandoned,
        "{total} = {ok} + {errors} + {abandoned}"
    );
    assert_eq!(d["raw"]["abandoned"], d["abandoned"]);
    abandoned
}

#[test]
fn sigint_mid_run_counts_open_connections_as_abandoned() {
    for sig in ["-INT", "-TERM"] {
        let s = Server::start(Behavior::Slow(Duration::from_millis(300), 10));
        let d = dir(&format!("sigint{sig}"));
        let (j, c) = (d.join("r.json"), d.join("r.csv"));
        let child = long_run(
            &s,
            &[
                &format!("--json={}", j.display()),
                &format!("--csv={}", c.display()),
            ],
        );
        let out = interrupt_after_load(&s, child, sig);
        assert_eq!(out.status.code(), Some(0), "{sig}");
        let doc = json(&j);
        let abandoned = assert_accounted(&doc);
        assert!(abandoned > 0, "{sig}: nothing was open");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let secs = doc["duration_s"].as_f64().expect("duration");
        let line = format!(
            "rshperf: interrupted by SIG{} after {secs:.1} s: {abandoned} connection{} still open",
            sig.trim_start_matches('-'),
            if abandoned == 1 { " was" } else { "s were" }
        );
        assert!(stderr.lines().any(|l| l == line), "{sig}: {stderr}");
        // The classic layout is unchanged: the error lines do not count them.
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("abandoned"), "{text}");
        // The CSV row has the two columns, generated from the schema.
        let csv = std::fs::read_to_string(&c).expect("csv");
        let mut lines = csv.lines();
        let head: Vec<&str> = lines.next().expect("header").split(',').collect();
        let row: Vec<&str> = lines.next().expect("row").split(',').collect();
        let col = |name: &str| {
            let i = head.iter().position(|h| *h == name).expect(name);
            row[i].to_string()
        };
        assert_eq!(col("abandoned"), abandoned.to_string());
        assert_eq!(col("interrupted"), "true");
        std::fs::remove_dir_all(&d).expect("clean");
    }
}

#[test]
fn an_interrupted_run_fails_its_thresholds() {
    let s = Server::start(Behavior::Slow(Duration::from_millis(300), 10));
    let child = long_run(&s, &["--fail-on=errors>1000000"]);
    let out = interrupt_after_load(&s, child, "-INT");
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rshperf: thresholds not met: the run was interrupted (SIGINT or SIGTERM)"),
        "{stderr}"
    );
}

#[test]
fn sigint_during_the_start_at_wait_reports_an_empty_run() {
    let s = Server::start(Behavior::Fixed(10));
    let d = dir("startat");
    let j = d.join("r.json");
    let began = Instant::now();
    let mut child = long_run(&s, &["--start-at=+60", &format!("--json={}", j.display())]);
    // The echo line is printed once the signals are caught.
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut echo = String::new();
    stdout.read_line(&mut echo).expect("echo line");
    assert!(echo.starts_with("rshperf "), "{echo}");
    kill(&child, "-INT");
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("report");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        began.elapsed() < Duration::from_secs(50),
        "waited out the start"
    );
    assert_eq!(s.connections(), 0);
    assert!(
        rest.contains("Total: connections 0 requests 0 replies 0"),
        "{rest}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .contains("rshperf: interrupted by SIGINT after 0.0 s: 0 connections were still open"),
        "{stderr}"
    );
    assert_eq!(assert_accounted(&json(&j)), 0);
    std::fs::remove_dir_all(&d).expect("clean");
}

#[test]
fn sigint_before_the_engines_start_reports_an_empty_run() {
    // The run is held before its engines by a `--wlog` FIFO that this test keeps open
    // for writing: once rshperf has the FIFO open, it is past its start-up (signals
    // are caught first) and blocked reading. The signal comes then; closing the FIFO
    // lets the run go on, which must end at once with the empty interrupted report.
    let s = Server::start(Behavior::Fixed(10));
    let d = dir("fifo");
    let (fifo, j) = (d.join("wlog.fifo"), d.join("r.json"));
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    // Read-write: the open does not wait for a reader, and rshperf's read waits for us.
    let mut writer = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .expect("open fifo");
    let wlog = format!("--wlog=n,{}", fifo.display());
    let child = long_run(&s, &[&wlog, &format!("--json={}", j.display())]);
    support::wait_until("rshperf to open the FIFO", Duration::from_secs(30), || {
        support::has_open(child.id(), &fifo)
    });
    kill(&child, "-INT");
    std::io::Write::write_all(&mut writer, b"/a\0").expect("write wlog");
    drop(writer);
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(s.connections(), 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Total: connections 0 requests 0 replies 0"),
        "{stdout}"
    );
    assert!(
        stderr
            .contains("rshperf: interrupted by SIGINT after 0.0 s: 0 connections were still open"),
        "{stderr}"
    );
    assert_eq!(assert_accounted(&json(&j)), 0);
    std::fs::remove_dir_all(&d).expect("clean");
}

#[test]
fn the_timeline_is_streamed_a_second_at_a_time() {
    let s = Server::start(Behavior::Fixed(10));
    let d = dir("stream");
    let (t, j) = (d.join("t.csv"), d.join("r.json"));
    let mut child = long_run(
        &s,
        &[
            &format!("--timeline={}", t.display()),
            &format!("--json={}", j.display()),
        ],
    );
    let lines = |p: &Path| {
        std::fs::read_to_string(p)
            .map(|text| text.lines().map(str::to_string).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    // A run of 1000 s: the header and two seconds are there while it lasts.
    support::wait_until("two streamed seconds", Duration::from_secs(30), || {
        lines(&t).len() >= 3
    });
    let early = lines(&t);
    assert_eq!(child.try_wait().expect("try_wait"), None, "the run ended");
    assert!(early[1].starts_with("0,1,"), "{early:?}");
    assert!(early[2].starts_with("1,1,"), "{early:?}");
    kill(&child, "-INT");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0));
    let last = lines(&t);
    assert_eq!(&last[..3], &early[..3], "the streamed seconds changed");
    // Every row is the JSON timeline's second.
    let doc = json(&j);
    let seconds = doc["timeline"].as_array().expect("timeline");
    assert_eq!(last.len(), seconds.len() + 1);
    let names: Vec<&str> = last[0].split(',').collect();
    for (row, sec) in last[1..].iter().zip(seconds) {
        let cells: Vec<&str> = row.split(',').collect();
        let cell = |name: &str| {
            let i = names.iter().position(|n| *n == name).expect("column");
            cells[i].parse::<f64>().expect("number")
        };
        let n = |v: &Value| v.as_f64().expect("number");
        assert_eq!(cell("second"), n(&sec["second"]));
        // (The CSV rounds the last second's length to the µs.)
        assert!((cell("seconds") - n(&sec["seconds"])).abs() < 1e-6, "{row}");
        assert_eq!(cell("offered"), n(&sec["offered"]));
        assert_eq!(cell("connections"), n(&sec["connections"]));
        assert_eq!(cell("replies"), n(&sec["replies"]));
        assert_eq!(cell("status_2xx"), n(&sec["status"]["2xx"]));
        assert_eq!(cell("errors_total"), n(&sec["errors"]["total"]));
        assert_eq!(cell("response_ms_count"), n(&sec["response_ms"]["count"]));
        assert_eq!(cell("response_ms_max"), n(&sec["response_ms"]["max"]));
        assert_eq!(cell("open"), n(&sec["open"]));
    }
    let ok: f64 = seconds
        .iter()
        .map(|s| s["status"]["2xx"].as_f64().unwrap_or(0.0))
        .sum();
    assert_eq!(ok, doc["status"]["2xx"].as_f64().expect("2xx"));
    std::fs::remove_dir_all(&d).expect("clean");
}

#[test]
fn merge_flags_an_interrupted_or_missing_partition() {
    let s = Server::start(Behavior::Slow(Duration::from_millis(300), 10));
    let d = dir("merge");
    let (p0, p1) = (d.join("p0.json"), d.join("p1.json"));
    let port = s.port().to_string();
    // Partition 0 ends by --runtime (not an interruption; what is open is abandoned).
    let whole = support::run(&[
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--num-conns",
        "100000",
        "--rate",
        "100",
        "--runtime=1",
        "--partition=0/2",
        &format!("--json={}", p0.display()),
    ]);
    assert_eq!(whole.status.code(), Some(0), "{whole:?}");
    let d0 = json(&p0);
    assert_eq!(d0["interrupted"], Value::Bool(false));
    let abandoned0 = assert_identity(&d0);
    let child = long_run(
        &s,
        &["--partition=1/2", &format!("--json={}", p1.display())],
    );
    let out = interrupt_after_load(&s, child, "-INT");
    assert_eq!(out.status.code(), Some(0));
    let abandoned = assert_accounted(&json(&p1));
    let merged = d.join("m.json");
    let (a, b, m) = (
        p0.display().to_string(),
        p1.display().to_string(),
        format!("--json={}", merged.display()),
    );
    let warned = support::run(&["merge", &a, &b, &m]);
    assert_eq!(warned.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&warned.stderr);
    let line = format!(
        "rshperf: merge: warning: {b} (partition 1/2) was interrupted: {abandoned} connections \
         were still open; the report covers only part of the workload"
    );
    assert!(stderr.lines().any(|l| l == line), "{stderr}");
    let doc = json(&merged);
    assert_eq!(assert_accounted(&doc), abandoned0 + abandoned);
    let failed = support::run(&["merge", "--fail-on=errors>1000000", &a, &b]);
    assert_eq!(failed.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        stderr.contains(
            "rshperf: merge: thresholds not met: a partition is missing or was interrupted"
        ),
        "{stderr}"
    );
    let missing = support::run(&["merge", "--fail-on=errors>1000000", &a]);
    assert_eq!(missing.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("partition 1/2 missing"), "{stderr}");
    let complete = support::run(&["merge", &a]);
    assert_eq!(complete.status.code(), Some(0));
    std::fs::remove_dir_all(&d).expect("clean");
}

#[test]
fn a_bad_output_path_fails_before_any_connection() {
    let s = Server::start(Behavior::Fixed(10));
    let d = dir("badpath");
    let port = s.port().to_string();
    let cases = [
        ("--json", "/proc/x.json".to_string()),
        ("--csv", d.join("missing/x.csv").display().to_string()),
        ("--timeline", d.display().to_string()),
        ("--html", "/proc/x.html".to_string()),
    ];
    for (opt, path) in cases {
        let began = Instant::now();
        let out = support::run(&[
            "--server",
            "127.0.0.1",
            "--port",
            &port,
            "--num-conns",
            "5",
            "--rate",
            "1",
            &format!("{opt}={path}"),
        ]);
        assert_eq!(out.status.code(), Some(1), "{opt}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let want = format!("rshperf: cannot write {opt} file {path}: ");
        assert!(stderr.starts_with(&want), "{opt}: {stderr}");
        assert!(out.stdout.is_empty(), "{opt}: printed before failing");
        // A hang guard: --rate 1 would take 4 s to send five connections.
        assert!(began.elapsed() < Duration::from_secs(4), "{opt}: ran first");
    }
    assert_eq!(s.connections(), 0);
    std::fs::remove_dir_all(&d).expect("clean");
}

#[test]
fn each_output_is_attempted_and_each_failure_named() {
    let s = Server::start(Behavior::Fixed(10));
    let d = dir("independent");
    let (c, h, t) = (d.join("ok.csv"), d.join("ok.html"), d.join("ok.tl.csv"));
    let port = s.port().to_string();
    let out = support::run(&[
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--num-conns",
        "3",
        "--rate",
        "100",
        "--json=/dev/full",
        &format!("--csv={}", c.display()),
        &format!("--html={}", h.display()),
        &format!("--timeline={}", t.display()),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rshperf: cannot write --json file /dev/full: No space left on device"),
        "{stderr}"
    );
    for f in [&c, &h, &t] {
        assert!(std::fs::metadata(f).expect("written").len() > 0, "{f:?}");
    }
    let names: Vec<String> = std::fs::read_dir(&d)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "temporary files left: {names:?}");
    std::fs::remove_dir_all(&d).expect("clean");
}

#[test]
fn a_full_stdout_is_an_error_and_a_closed_pipe_is_not() {
    let s = Server::start(Behavior::Fixed(10));
    let port = s.port().to_string();
    let args = [
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--num-conns",
        "2",
        "--rate",
        "100",
    ];
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = support::bin()
        .args(args)
        .stdout(full)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rshperf: cannot write the report to stdout: No space left on device"),
        "{stderr}"
    );
    let mut child = support::bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(support::without_short_run_note(&stderr), "");
}

#[test]
fn a_dead_stderr_does_not_hang_a_debug_run() {
    let s = Server::start(Behavior::Fixed(10));
    let port = s.port().to_string();
    let mut child = support::bin()
        .args([
            "--server",
            "127.0.0.1",
            "--port",
            &port,
            "--num-conns",
            "50",
            "--rate",
            "50",
            "--debug",
            "1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    for _ in 0..2 {
        let mut line = String::new();
        err.read_line(&mut line).expect("a debug line");
    }
    drop(err);
    let began = Instant::now();
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            break;
        }
        if began.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("rshperf hung after its stderr was closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
