//! `--request-log FILE`: one record per call, checked against what the test server
//! counted and against the report the run printed: every call once (answered, failed,
//! abandoned at the end, unsent), exact fields, unique numbers over `--threads`, the
//! binary form converted by `rshperf log`, HTTP/2 stream ids, and the refused values.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::Value;

use crate::support::h2_server::{H2Server, Opts};
use crate::support::server::{Behavior, Server};
use crate::support::{bin, run, run_ok, Report};

/// A fresh directory for one test's files.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rshperf-reqlog-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The records of a JSON-lines log.
fn records(text: &str) -> Vec<serde_json::Map<String, Value>> {
    text.lines()
        .map(|l| match serde_json::from_str(l) {
            Ok(Value::Object(m)) => m,
            other => panic!("not a record: {l:?}: {other:?}"),
        })
        .collect()
}

fn num(r: &serde_json::Map<String, Value>, f: &str) -> Option<u64> {
    r.get(f).and_then(Value::as_u64)
}

fn text<'a>(r: &'a serde_json::Map<String, Value>, f: &str) -> &'a str {
    r.get(f).and_then(Value::as_str).expect("a text field")
}

/// How many records ended each way (`error`, "" for a reply).
fn ends(recs: &[serde_json::Map<String, Value>]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for r in recs {
        *m.entry(text(r, "error").to_string()).or_default() += 1;
    }
    m
}

/// The report's replies by class, recomputed from the log.
fn classes(recs: &[serde_json::Map<String, Value>]) -> [u64; 5] {
    let mut c = [0; 5];
    for s in recs.iter().filter_map(|r| num(r, "status")) {
        c[(s / 100 - 1) as usize] += 1;
    }
    c
}

#[test]
fn every_answered_call_has_one_record_with_exact_fields() {
    let d = dir("answered");
    let path = d.join("r.jsonl");
    let s = Server::start(Behavior::Fixed(100));
    let p = path.to_str().expect("utf-8");
    let r = run_ok(
        s.port(),
        &[
            "--num-conns",
            "5",
            "--num-calls",
            "4",
            "--rate",
            "200",
            "--uri",
            "/x",
            "--timeout",
            "5",
            "--request-log",
            p,
        ],
    );
    assert_eq!(r.totals(), (5, 20, 20), "{}", r.text);
    let recs = records(&std::fs::read_to_string(&path).expect("the log"));
    assert_eq!(recs.len() as u64, s.requests());
    let ids: BTreeSet<u64> = recs.iter().filter_map(|r| num(r, "id")).collect();
    assert_eq!(ids, (0..20).collect());
    let mut per_conn: BTreeMap<u64, u64> = BTreeMap::new();
    for r in &recs {
        *per_conn.entry(num(r, "conn").expect("conn")).or_default() += 1;
    }
    assert_eq!(per_conn, (0..5).map(|c| (c, 4)).collect());
    let request_bytes = s
        .counts
        .request_bytes
        .load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        recs.iter().filter_map(|r| num(r, "bytes_out")).sum::<u64>(),
        request_bytes
    );
    let size = r.nums("Reply size [B]:");
    for r in &recs {
        assert_eq!(text(r, "error"), "");
        assert_eq!(text(r, "uri"), "/x");
        assert_eq!(num(r, "status"), Some(200));
        assert_eq!(num(r, "content_bytes"), Some(100));
        assert!(r["stream"].is_null());
        assert_eq!(num(r, "server"), Some(0));
        // The report's reply size (header, content, footer; total).
        assert_eq!(num(r, "bytes_in"), Some(size[3] as u64), "{r:?}");
        let times: Vec<u64> = [
            "scheduled_us",
            "connect_us",
            "connected_us",
            "send_us",
            "written_us",
            "first_byte_us",
            "end_us",
        ]
        .iter()
        .map(|f| num(r, f).unwrap_or_else(|| panic!("{f} in {r:?}")))
        .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{r:?}");
    }
    // The report's figures, recomputed from the log.
    assert_eq!(classes(&recs), r.status());
    let written = recs
        .iter()
        .filter(|r| num(r, "written_us").is_some())
        .count();
    assert_eq!(written as u64, r.totals().1);
    std::fs::remove_dir_all(&d).expect("clean");
}

#[test]
fn failed_calls_are_logged_with_the_error_the_report_counts() {
    let d = dir("failed");
    let path = d.join("r.csv");
    let s = Server::start(Behavior::Reset);
    let p = path.to_str().expect("utf-8");
    let r = run_ok(
        s.port(),
        &[
            "--num-conns",
            "3",
            "--num-calls",
            "2",
            "--rate",
            "100",
            "--timeout",
            "5",
            "--request-log",
            p,
        ],
    );
    let csv = std::fs::read_to_string(&path).expect("the log");
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().expect("header").split(',').collect();
    assert_eq!(head.first(), Some(&"id"));
    let error = head
        .iter()
        .position(|h| *h == "error")
        .expect("error column");
    let status = head
        .iter()
        .position(|h| *h == "status")
        .expect("status column");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // One call per connection went out; each connection was reset.
    assert_eq!(rows.len(), 3, "{csv}");
    assert_eq!(r.error("connreset"), 3, "{}", r.text);
    for row in &rows {
        assert_eq!(row[error], "connreset", "{csv}");
        assert_eq!(row[status], "", "{csv}");
    }
    assert_eq!(s.requests(), 3);
    std::fs::remove_dir_all(&d).expect("clean");
}

/// The figures of the `Call rate [calls/s]:` line.
fn call_rate(r: &Report) -> Vec<f64> {
    r.nums("Call rate [calls/s]:")
}

#[test]
fn calls_in_flight_or_waiting_at_the_end_are_abandoned_or_unsent() {
    let d = dir("end");
    let path = d.join("r.jsonl");
    // Never answers: each connection takes one call, the others wait for room.
    let s = Server::start(Behavior::Hang);
    let p = path.to_str().expect("utf-8");
    let r = run_ok(
        s.port(),
        &[
            "--call-rate",
            "50",
            "--num-conns",
            "2",
            "--runtime",
            "0.5",
            "--request-log",
            p,
        ],
    );
    let c = call_rate(&r);
    // connections, scheduled, issued, completed, lost, unsent
    let (scheduled, issued, unsent) = (c[3] as u64, c[4] as u64, c[7] as u64);
    assert_eq!((c[5], c[6]), (0.0, 0.0), "{}", r.text);
    let recs = records(&std::fs::read_to_string(&path).expect("the log"));
    assert_eq!(recs.len() as u64, scheduled, "{}", r.text);
    let want: BTreeMap<String, u64> = [
        ("abandoned".to_string(), issued),
        ("unsent".to_string(), unsent),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .collect();
    assert_eq!(ends(&recs), want, "{}", r.text);
    assert_eq!(issued, 2, "{}", r.text);
    let ids: BTreeSet<u64> = recs.iter().filter_map(|r| num(r, "id")).collect();
    assert_eq!(ids.len(), recs.len());
    for r in &recs {
        assert!(num(r, "scheduled_us").is_some(), "{r:?}");
        assert!(r["status"].is_null());
    }
    std::fs::remove_dir_all(&d).expect("clean");
}

#[test]
fn threads_number_calls_uniquely_and_the_binary_log_converts() {
    let d = dir("threads");
    let (bin_path, out) = (d.join("r.bin"), d.join("r.csv"));
    let s = Server::start(Behavior::Fixed(10));
    let p = bin_path.to_str().expect("utf-8");
    let r = run_ok(
        s.port(),
        &[
            "--threads",
            "2",
            "--call-rate",
            "1000",
            "--num-conns",
            "4",
            "--num-calls",
            "25",
            "--timeout",
            "5",
            "--request-log",
            p,
        ],
    );
    assert_eq!(r.totals(), (4, 100, 100), "{}", r.text);
    let bytes = std::fs::read(&bin_path).expect("the log");
    assert!(bytes.starts_with(b"RSHPERF-REQUEST-LOG 1\n"));
    let conv = bin()
        .args(["log", p, "--to", "jsonl"])
        .output()
        .expect("log");
    assert_eq!(conv.status.code(), Some(0), "{conv:?}");
    let recs = records(&String::from_utf8(conv.stdout).expect("utf-8"));
    let ids: BTreeSet<u64> = recs.iter().filter_map(|r| num(r, "id")).collect();
    assert_eq!(ids, (0..100).collect());
    let conns: BTreeSet<u64> = recs.iter().filter_map(|r| num(r, "conn")).collect();
    assert_eq!(conns, (0..4).collect());
    assert_eq!(classes(&recs), [0, 100, 0, 0, 0]);
    assert_eq!(recs.len() as u64, s.requests());
    let o = out.to_str().expect("utf-8");
    let conv = bin()
        .args(["log", p, "--to", "csv", "-o", o])
        .output()
        .expect("log");
    assert_eq!(conv.status.code(), Some(0), "{conv:?}");
    assert_eq!(
        std::fs::read_to_string(&out).expect("csv").lines().count(),
        101
    );
    // A file that is no log: exit 1, the file named.
    let conv = bin().args(["log", o]).output().expect("log");
    assert_eq!(conv.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&conv.stderr),
        format!("rshperf: log: {o}: a CSV log cannot be read back: write it as jsonl or binary\n")
    );
    std::fs::remove_dir_all(&d).expect("clean");
}

#[test]
fn http2_records_carry_their_stream_ids() {
    let d = dir("h2");
    let path = d.join("r.jsonl");
    let s = H2Server::start(Opts {
        body: 10,
        ..Opts::default()
    });
    let p = path.to_str().expect("utf-8");
    let r = run_ok(
        s.port(),
        &[
            "--http-version",
            "2",
            "--num-conns",
            "2",
            "--num-calls",
            "5",
            "--rate",
            "100",
            "--timeout",
            "5",
            "--request-log",
            p,
        ],
    );
    assert_eq!(r.totals(), (2, 10, 10), "{}", r.text);
    let recs = records(&std::fs::read_to_string(&path).expect("the log"));
    assert_eq!(recs.len(), 10);
    let mut streams: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for r in &recs {
        streams
            .entry(num(r, "conn").expect("conn"))
            .or_default()
            .push(num(r, "stream").expect("a stream id"));
    }
    for ids in streams.values_mut() {
        ids.sort_unstable();
        assert_eq!(ids, &[1, 3, 5, 7, 9]);
    }
    std::fs::remove_dir_all(&d).expect("clean");
}

#[test]
fn bad_request_log_options_fail_before_any_load() {
    let s = Server::start(Behavior::Fixed(10));
    let port = s.port().to_string();
    let base = ["--server", "127.0.0.1", "--port", &port, "--num-conns", "1"];
    for (extra, message) in [
        (
            vec!["--request-log", "/proc/x/r.jsonl"],
            "rshperf: cannot write --request-log file /proc/x/r.jsonl: ",
        ),
        (
            vec!["--request-log", "-"],
            "rshperf: --request-log - : stdout carries the report; name a file\n",
        ),
        (
            vec!["--request-log", "r.x", "--request-log-format", "xml"],
            "rshperf: unknown format xml (expected jsonl, csv or binary)\n",
        ),
        (
            vec!["--request-log-format", "csv"],
            "rshperf: --request-log-format needs --request-log FILE\n",
        ),
    ] {
        let mut args = base.to_vec();
        args.extend(extra.iter().copied());
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with(message), "{args:?}: {err}");
    }
    assert_eq!(s.connections(), 0);
}

#[test]
fn calls_on_connections_open_at_the_end_are_abandoned() {
    let d = dir("open");
    let path = d.join("r.jsonl");
    // Never answers: every connection still waits for its reply when the run ends.
    let s = Server::start(Behavior::Hang);
    let p = path.to_str().expect("utf-8");
    let json = d.join("r.json");
    let j = json.to_str().expect("utf-8");
    let r = run_ok(
        s.port(),
        &[
            "--rate",
            "20",
            "--num-conns",
            "100",
            "--runtime",
            "0.3",
            "--request-log",
            p,
            "--json",
            j,
        ],
    );
    let (connections, requests, replies) = r.totals();
    // Logging the calls does not take them from the report's count.
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON")).expect("JSON");
    assert_eq!(doc["unanswered"].as_u64(), Some(connections), "{doc}");
    assert_eq!(doc["abandoned"].as_u64(), Some(connections), "{doc}");
    assert_eq!(replies, 0, "{}", r.text);
    let recs = records(&std::fs::read_to_string(&path).expect("the log"));
    assert_eq!(recs.len() as u64, connections, "{}", r.text);
    let written = recs
        .iter()
        .filter(|r| num(r, "written_us").is_some())
        .count();
    assert_eq!(written as u64, requests, "{}", r.text);
    assert_eq!(
        ends(&recs),
        [("abandoned".to_string(), connections)]
            .into_iter()
            .collect()
    );
    let conns: BTreeSet<u64> = recs.iter().filter_map(|r| num(r, "conn")).collect();
    assert_eq!(conns.len() as u64, connections);
    std::fs::remove_dir_all(&d).expect("clean");
}

/// The lines of `text` that start with `prefix`.
fn lines_with<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// `Percentiles NAME [ms]:`'s numbers.
fn percentiles(text: &str, name: &str) -> Vec<f64> {
    let line = lines_with(text, &format!("Percentiles {name} [ms]:"));
    assert_eq!(line.len(), 1, "{text}");
    line[0]
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// `rshperf log --report` of the run's log prints the report's own lines: the counts,
/// sizes, status classes and errors byte for byte; times from the log's whole
/// microseconds since the start, within a microsecond a sample of the run's.
#[test]
fn the_log_re_read_gives_the_runs_report() {
    let d = dir("report");
    for (name, behavior, args) in [
        (
            "kept",
            Behavior::Fixed(1_024),
            ["--num-conns", "5", "--num-calls", "20", "--rate", "50"],
        ),
        (
            "reset",
            Behavior::Reset,
            ["--num-conns", "3", "--num-calls", "2", "--rate", "100"],
        ),
    ] {
        let s = Server::start(behavior);
        let log = d.join(format!("{name}.bin"));
        let json = d.join(format!("{name}.json"));
        let mut all = args.to_vec();
        let (log_s, json_s) = (log.to_str().expect("utf-8"), json.to_str().expect("utf-8"));
        all.extend(["--percentiles", "--request-log", log_s, "--json", json_s]);
        let r = run_ok(s.port(), &all);
        let out = run(&["log", log_s, "--report"]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let again = String::from_utf8(out.stdout).expect("utf-8");
        let calls = if name == "kept" { 100 } else { 3 };
        assert!(
            again.starts_with(&format!("Request log: {calls} records\n\n")),
            "{again}"
        );
        // Every line but the duration's, byte for byte.
        let total = |t: &str| {
            let line = lines_with(t, "Total:")[0];
            line[..line.find(" test-duration").expect("duration")].to_string()
        };
        assert_eq!(total(&again), total(&r.text), "{again}");
        for prefix in ["Request size", "Reply size", "Reply status", "Errors:"] {
            let ours = lines_with(&again, prefix);
            assert!(!ours.is_empty(), "{prefix}: {again}");
            assert_eq!(ours, lines_with(&r.text, prefix), "{again}\n{}", r.text);
        }
        // The log's times are whole microseconds since the start; the report's, whole
        // microseconds of each difference: the sums differ by less than one a sample.
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("JSON");
        let recs = records(
            &String::from_utf8(run(&["log", log_s]).stdout).expect("the log as JSON lines"),
        );
        let answered: Vec<_> = recs.iter().filter(|r| num(r, "status").is_some()).collect();
        let sum: u64 = answered
            .iter()
            .map(|r| {
                num(r, "first_byte_us").expect("first byte") - num(r, "send_us").expect("send")
            })
            .sum();
        let run_sum = doc["raw"]["response_sum_us"]
            .as_u64()
            .expect("response sum");
        assert!(
            sum.abs_diff(run_sum) <= answered.len() as u64,
            "{sum} {run_sum}"
        );
        let avg = if answered.is_empty() {
            0.0
        } else {
            sum as f64 / answered.len() as f64 / 1e3
        };
        assert_eq!(
            lines_with(&again, "Reply time [ms]: response")[0]
                .split_whitespace()
                .nth(4),
            Some(format!("{avg:.1}").as_str()),
            "{again}"
        );
        for h in ["connect", "response", "transfer"] {
            let (ours, theirs) = (percentiles(&again, h), percentiles(&r.text, h));
            assert_eq!(ours.len(), 6, "{again}");
            for (a, b) in ours.iter().zip(&theirs) {
                // One microsecond, widened by the histogram's three significant digits.
                assert!(
                    (a - b).abs() <= 0.001 + a.max(*b) * 1e-3,
                    "{h}: {ours:?} {theirs:?}"
                );
            }
        }
        assert!(lines_with(&again, "Percentiles lifetime").is_empty());
    }
    std::fs::remove_dir_all(&d).expect("clean");
}
