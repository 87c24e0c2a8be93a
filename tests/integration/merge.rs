//! `rshperf merge` and the multi-machine flow on loopback: several `--partition=I/N`
//! processes started together with `--start-at`, each writing `--json`, merged into
//! the report of the whole workload; refused inputs; the Kubernetes example manifests.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use rshperf::model::stats::Stats;
use rshperf::output::json::stats_from_json;
use serde_json::{json, Value};

use crate::support::h2_server::{H2Server, Opts as H2Opts};
use crate::support::server::{Behavior, Server};
use crate::support::tls_server::{Pki, TlsServer};
use crate::support::{self, numbers, Report};

/// A scratch directory under the system temp dir, removed on drop.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("rshperf-merge-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    /// `name` inside the directory, as a string argument.
    pub(crate) fn file(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Runs partitions `0..parts` of one workload as concurrent processes against
/// 127.0.0.1:`port`, each writing `<dir>/<prefix><i>.json`; with `start_in` (seconds)
/// they all wait for the same absolute `--start-at`. Asserts that each exits 0.
pub(crate) fn run_partitions(
    dir: &Scratch,
    prefix: &str,
    port: u16,
    parts: u32,
    start_in: Option<f64>,
    args: &[&str],
) -> Vec<String> {
    let port = port.to_string();
    let start_at = start_in.map(|s| {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_secs_f64();
        format!("--start-at={:.3}", now + s)
    });
    let files: Vec<String> = (0..parts)
        .map(|i| dir.file(&format!("{prefix}{i}.json")))
        .collect();
    let children: Vec<_> = (0..parts)
        .map(|i| {
            let mut cmd = support::bin();
            cmd.args(["--server", "127.0.0.1", "--port", &port])
                .arg(format!("--partition={i}/{parts}"))
                .arg(format!("--json={}", files[i as usize]))
                .args(start_at.iter())
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd.spawn().expect("spawn rshperf")
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().expect("wait for rshperf");
        assert_eq!(
            out.status.code(),
            Some(0),
            "partition {i} failed\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    files
}

fn merge(args: &[&str]) -> Output {
    let mut all = vec!["merge"];
    all.extend_from_slice(args);
    support::run(&all)
}

/// Runs `rshperf merge` with `args`, asserts exit 0, returns the report.
pub(crate) fn merge_ok(args: &[&str]) -> Report {
    let out = merge(args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "merge {args:?} failed\nstdout:\n{text}\nstderr:\n{stderr}"
    );
    Report { text, stderr }
}

/// Runs `rshperf merge` with `args`, asserts exit 1 with nothing on stdout, returns
/// stderr.
fn merge_err(args: &[&str]) -> String {
    let out = merge(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "merge {args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "merge {args:?} printed a report");
    assert!(stderr.starts_with("rshperf: merge: "), "{stderr}");
    stderr
}

fn read_json(path: &str) -> Value {
    serde_json::from_str(&fs::read_to_string(path).expect("read JSON")).expect("valid JSON")
}

fn line<'a>(r: &'a Report, prefix: &str) -> &'a str {
    r.text
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line '{prefix}' in:\n{}", r.text))
}

#[test]
fn four_partitions_started_together_merge_to_the_whole_workload() {
    let server = Server::start(Behavior::Fixed(100));
    let dir = Scratch::new("four");
    let files = run_partitions(
        &dir,
        "p",
        server.port(),
        4,
        Some(1.0),
        &["--rate", "800", "--num-conns", "2400", "--timeout", "5"],
    );
    assert_eq!(server.requests(), 2400);
    let all = dir.file("all.json");
    let json_opt = format!("--json={all}");
    let mut args = vec![json_opt.as_str(), "--percentiles"];
    args.extend(files.iter().map(String::as_str));
    let r = merge_ok(&args);
    assert_eq!(r.stderr, "");
    assert!(
        r.text.starts_with(&format!(
            "rshperf merge: 4 partitions of rshperf --timeout=5 --client=0/1 \
             --server=127.0.0.1 --port={} --uri=/ --rate=800 ",
            server.port()
        )),
        "{}",
        r.text
    );
    assert!(!r.text.lines().next().expect("line").contains("--partition"));
    for (i, f) in files.iter().enumerate() {
        let l = line(&r, &format!("Partition {i}/4: "));
        let n = numbers(&l[format!("Partition {i}/4:").len()..]);
        assert_eq!(n[..3], [600.0, 600.0, 600.0], "{l}");
        assert_eq!(n[4], 0.0, "errors in {l}");
        assert!(l.ends_with(&format!(" ({f})")), "{l}");
    }
    assert_eq!(r.totals(), (2400, 2400, 2400));
    assert_eq!(r.error("total"), 0);
    assert_eq!(r.status()[1], 2400);
    let rate = r.nums("Connection rate:")[0];
    assert!(
        (760.0..=840.0).contains(&rate),
        "conn rate {rate}:\n{}",
        r.text
    );
    assert!(r.text.contains("\nPercentiles response [ms]: p50 "));

    // The merged document reads back: merging it alone gives the same report.
    let doc = read_json(&all);
    assert_eq!(doc["connections"]["total"], 2400);
    assert_eq!(doc["run"]["partition"], serde_json::json!([0, 1]));
    assert_eq!(doc["run"]["merged_from"].as_array().map(Vec::len), Some(4));
    let again = merge_ok(&[&all]);
    let report = |t: &str| t.split_once("\n\n").map(|(_, rest)| rest.to_string());
    let without_percentiles = r.text.split("Percentiles connect").next().expect("text");
    assert_eq!(report(&again.text), report(without_percentiles));
    let out = merge(&["--json=-", &all]);
    assert_eq!(out.status.code(), Some(0));
    let redoc: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    for key in ["raw", "histograms", "connections", "errors", "duration_s"] {
        assert_eq!(redoc[key], doc[key], "{key}");
    }
}

#[test]
fn merge_refuses_bad_inputs_and_warns_of_missing_partitions() {
    let server = Server::start(Behavior::Fixed(10));
    let dir = Scratch::new("bad");
    let args = ["--rate", "500", "--num-conns", "6"];
    let p = run_partitions(&dir, "p", server.port(), 2, None, &args);
    let mut other = args.to_vec();
    other.extend(["--uri", "/other"]);
    let q = run_partitions(&dir, "q", server.port(), 2, None, &other);

    let r = merge_ok(&[&p[0], &p[1]]);
    assert_eq!(r.totals(), (6, 6, 6));
    assert_eq!(r.stderr, "");

    // Missing partition: a warning, not an error.
    let r = merge_ok(&[&p[1]]);
    assert_eq!(r.totals(), (3, 3, 3));
    assert_eq!(
        r.stderr,
        "rshperf: merge: warning: partition 0/2 missing: the report covers only part of \
         the workload\n"
    );

    let e = merge_err(&[&p[0], &q[1]]);
    assert!(
        e.contains(" are runs of different workloads: uri \"/\" vs \"/other\""),
        "{e}"
    );
    let copy = dir.file("copy.json");
    fs::copy(&p[0], &copy).expect("copy");
    let e = merge_err(&[&p[0], &p[1], &copy]);
    assert!(e.contains(" are both partition 0/2: "), "{e}");
    assert!(e.contains(&copy), "{e}");

    let text = fs::read_to_string(&p[0]).expect("read");
    let corrupt = dir.file("corrupt.json");
    fs::write(&corrupt, &text[..text.len() / 2]).expect("write");
    let e = merge_err(&[&p[1], &corrupt]);
    assert!(
        e.starts_with(&format!("rshperf: merge: {corrupt}: not a JSON document: ")),
        "{e}"
    );
    let v1 = dir.file("v1.json");
    fs::write(&v1, text.replacen("\"version\": 2,", "\"version\": 1,", 1)).expect("write");
    let e = merge_err(&[&v1, &p[1]]);
    assert!(
        e.starts_with(&format!(
            "rshperf: merge: {v1}: unsupported rshperf-result version 1 (this rshperf reads 2;"
        )),
        "{e}"
    );
    // Documents that contradict themselves are refused naming the file and the
    // field: more replies than requests, a negative reply-rate interval, a timeline
    // that ends in 10^300 s.
    let fresh = || -> Value { serde_json::from_str(&text).expect("JSON") };
    let bad = dir.file("bad.json");
    let mut doc = fresh();
    doc["raw"]["replies_by_class"][2] = Value::from(1_000_000u64);
    fs::write(&bad, doc.to_string()).expect("write");
    assert_eq!(
        merge_err(&[&bad, &p[1]]),
        format!(
            "rshperf: merge: {bad}: raw.replies_by_class: 1000000 replies but 3 requests (the \
             document contradicts itself)\n"
        )
    );
    let mut doc = fresh();
    doc["raw"]["rate_samples"] =
        serde_json::json!([{"replies": 1, "sessions": 0, "seconds": -1.7}]);
    fs::write(&bad, doc.to_string()).expect("write");
    let e = merge_err(&[&bad, &p[1]]);
    assert!(
        e.starts_with(&format!(
            "rshperf: merge: {bad}: raw.rate_samples[0].seconds: -1.7 is not an interval of a "
        )),
        "{e}"
    );
    let mut doc = fresh();
    doc["raw"]["timeline"]["end_s"] = Value::from(1e300);
    fs::write(&bad, doc.to_string()).expect("write");
    let e = merge_err(&[&bad, &p[1]]);
    assert!(
        e.starts_with(&format!(
            "rshperf: merge: {bad}: raw.timeline.end_s: 1e300 is not within the "
        )),
        "{e}"
    );
    // Out-of-range numbers are refused with the member's place, never wrapped.
    let mut doc = fresh();
    let huge = dir.file("huge.json");
    doc["raw"]["lifetime_bins"] = serde_json::json!([[200000, 1]]);
    fs::write(&huge, doc.to_string()).expect("write");
    let e = merge_err(&[&huge]);
    assert_eq!(
        e,
        format!(
            "rshperf: merge: {huge}: raw.lifetime_bins: bin 200000 out of range (0..=100000)\n"
        )
    );
    let missing = dir.file("nonexistent.json");
    let e = merge_err(&[&missing]);
    assert!(
        e.starts_with(&format!("rshperf: merge: cannot read {missing}: ")),
        "{e}"
    );
    let e = merge_err(&[]);
    assert!(
        e.starts_with("rshperf: merge: the following required arguments were not provided:"),
        "{e}"
    );
    let e = merge_err(&["--bogus", &p[0]]);
    assert!(
        e.starts_with("rshperf: merge: unexpected argument '--bogus' found\n"),
        "{e}"
    );
    assert!(
        e.contains("\nUsage: rshperf merge [OPTIONS] <FILE.json>...\n"),
        "{e}"
    );
    for help in [&["-h"][..], &["--help"]] {
        let out = merge(help);
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("\nUsage: rshperf merge [OPTIONS] <FILE.json>...\n"),
            "{text}"
        );
    }
}

/// Everything in `s` that does not depend on timing, through the one schema (so a field
/// added to `Stats` is compared unless it is listed here as a timing): sums of times,
/// extremes, bins and rate samples are left out, histograms and the lifetime bins are
/// reduced to their counts.
fn untimed(s: &Stats) -> Value {
    let mut v = serde_json::to_value(s).expect("serializable");
    let o = v.as_object_mut().expect("object");
    for timing in [
        "max_concurrent",
        "max_burst",
        "connect_sum_us",
        "response_sum_us",
        "transfer_sum_us",
        "lifetime_sum_us",
        "lifetime_sumsq_us",
        "lifetime_min_us",
        "lifetime_max_us",
        "rate_samples",
        "session_life_ok_us",
        "session_life_failed_us",
        "timeline",
        "windows",
        "client",
        "pacing",
    ] {
        o.remove(timing).expect("a Stats member");
    }
    o.insert(
        "lifetime_bins".into(),
        json!(s.lifetime_bins.iter().sum::<u64>()),
    );
    let h = &s.hist;
    o.insert(
        "histograms".into(),
        json!([
            h.connect.len(),
            h.response.len(),
            h.transfer.len(),
            h.lifetime.len(),
            h.lateness.len()
        ]),
    );
    for (i, srv) in o["servers"]
        .as_array_mut()
        .expect("array")
        .iter_mut()
        .enumerate()
    {
        let srv = srv.as_object_mut().expect("object");
        srv.remove("response_sum_us").expect("a ServerStats member");
        srv.insert("response".into(), json!(s.servers[i].response.len()));
    }
    v
}

fn stats_of(path: &str) -> Stats {
    stats_from_json(&read_json(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .0
}

#[test]
fn partitions_of_a_tls_session_run_on_two_servers_merge_to_the_single_run() {
    let pki = Pki::new();
    let servers = [
        TlsServer::start(pki.server_config(false)),
        TlsServer::start(pki.server_config(false)),
    ];
    let dir = Scratch::new("tls-servers");
    let list = dir.file("servers.txt");
    let labels: Vec<String> = servers
        .iter()
        .map(|s| format!("127.0.0.1:{}", s.port()))
        .collect();
    fs::write(&list, labels.join("\n")).expect("write the servers file");
    // 10 sessions of 3 calls, one connection per call (HTTP/1.0): each session's first
    // handshake is full, the other two resume it; sessions alternate between servers.
    let workload = [
        "--servers",
        &list,
        "--ssl",
        "--wsess=10,3,0",
        "--http-version",
        "1.0",
        "--rate",
        "0",
        "--timeout",
        "5",
    ];
    let run = |extra: &[&str]| {
        let mut cmd = support::bin();
        cmd.args(workload).args(extra);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.spawn().expect("spawn rshperf")
    };
    let single = dir.file("single.json");
    let out = run(&[&format!("--json={single}")])
        .wait_with_output()
        .expect("wait");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let single_text = String::from_utf8_lossy(&out.stdout).into_owned();

    let parts: Vec<String> = (0..4).map(|i| dir.file(&format!("p{i}.json"))).collect();
    let children: Vec<_> = parts
        .iter()
        .enumerate()
        .map(|(i, f)| run(&[&format!("--partition={i}/4"), &format!("--json={f}")]))
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    let merged = dir.file("merged.json");
    let json_opt = format!("--json={merged}");
    let mut args = vec![json_opt.as_str()];
    args.extend(parts.iter().map(String::as_str));
    let r = merge_ok(&args);
    assert_eq!(r.stderr, "");

    let (one, all) = (stats_of(&single), stats_of(&merged));
    assert_eq!(untimed(&all), untimed(&one));
    // And the figures are the ones the servers saw, so the comparison is not vacuous.
    for s in &servers {
        s.settle();
    }
    let seen = |f: &dyn Fn(&TlsServer) -> u64| servers.iter().map(f).collect::<Vec<_>>();
    assert_eq!(seen(&|s| s.connections()), [30, 30]);
    assert_eq!(seen(&|s| s.requests()), [30, 30]);
    let kinds: Vec<(usize, usize)> = servers.iter().map(TlsServer::kinds).collect();
    assert_eq!(kinds, [(10, 20), (10, 20)]);
    assert_eq!(one.tls_handshakes, [10, 20]);
    assert_eq!(one.status_200_302, [30, 0]);
    assert_eq!((one.sessions_ok, one.sessions_failed), (10, 0));
    assert_eq!(one.session_lengths, [0, 0, 0, 10]);
    assert_eq!(one.servers.len(), 2);
    for srv in &one.servers {
        assert_eq!((srv.connections, srv.requests, srv.replies()), (15, 15, 15));
        assert_eq!(srv.response.len(), 15);
    }
    assert_eq!(one.total_errors(), 0);
    // The merged report has the single run's per-server block and session block.
    for label in &labels {
        let status = format!("Server {label}: status ");
        assert_eq!(line(&r, &status), {
            let single = Report {
                text: single_text.clone(),
                stderr: String::new(),
            };
            line(&single, &status).to_string()
        });
        assert!(
            line(
                &r,
                &format!("Server {label}: connections 15 requests 15 replies 15 ")
            )
            .contains("req/s"),
            "{}",
            r.text
        );
    }
    assert!(r.text.contains("\nSession rate [sess/s]: "), "{}", r.text);
    assert_eq!(r.totals(), (30, 30, 30));
    let doc = read_json(&merged);
    assert_eq!(doc["tls_handshakes"], json!({ "full": 10, "resumed": 20 }));
    assert_eq!(doc["servers"][1]["server"], labels[1].as_str());
    assert_eq!(doc["servers"][1]["replies"], 15);
}

/// The derived members of a document (`duration_s` … `timeline`): everything but
/// the header, `config`, `run`, `start`, `end`, `raw`, `histograms` and `findings`.
fn derived(doc: &Value) -> serde_json::Map<String, Value> {
    let frame = [
        "format",
        "version",
        "rshperf_version",
        "config",
        "run",
        "start",
        "end",
        "raw",
        "histograms",
        "findings",
    ];
    doc.as_object()
        .expect("a document")
        .iter()
        .filter(|(k, _)| !frame.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Runs rshperf with `args` (plus `--json=FILE`, `--server`, `--port`), asserts exit 0,
/// returns the document.
fn run_json(port: u16, file: &str, args: &[&str]) -> Value {
    let out = support::bin()
        .args(["--server", "127.0.0.1", "--port", &port.to_string()])
        .arg(format!("--json={file}"))
        .args(args)
        .output()
        .expect("run rshperf");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    read_json(file)
}

#[test]
fn merging_one_call_rate_document_gives_back_its_figures_exactly() {
    let server = Server::start(Behavior::Fixed(10));
    let dir = Scratch::new("call-rate-one");
    let (single, merged) = (dir.file("single.json"), dir.file("merged.json"));
    let doc = run_json(
        server.port(),
        &single,
        &[
            "--call-rate",
            "100",
            "--num-conns",
            "2",
            "--num-calls",
            "10",
            "--timeout",
            "5",
        ],
    );
    let json_opt = format!("--json={merged}");
    merge_ok(&[&json_opt, &single]);
    let back = read_json(&merged);
    // JSON values, not text: every derived member, field for field.
    let (want, got) = (derived(&doc), derived(&back));
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (k, v) in &want {
        assert_eq!(&got[k], v, "{k}");
    }
    assert_eq!(back["call_rate"]["target_per_s"], json!(100.0));
    assert_eq!(back["call_rate"]["completed"], 20);
    for k in ["raw", "histograms", "start"] {
        assert_eq!(back[k], doc[k], "{k}");
    }
    for k in [
        "duration_s",
        "cpu_user_s",
        "cpu_system_s",
        "servers",
        "threads",
    ] {
        assert_eq!(back["run"][k], doc["run"][k], "run.{k}");
    }
}

#[test]
fn merging_one_run_keeps_its_findings() {
    // Every reply a 404: the run's document has the `all_error_status` finding (and,
    // for so short a run, `no_rate_sample`).
    let server = Server::start(Behavior::Status(404, 10));
    let dir = Scratch::new("findings-one");
    let (single, merged) = (dir.file("single.json"), dir.file("merged.json"));
    let doc = run_json(server.port(), &single, &["--num-conns", "4"]);
    let findings = doc["findings"].as_array().expect("findings");
    assert_eq!(findings[0]["finding"], "all_error_status", "{findings:?}");
    let json_opt = format!("--json={merged}");
    merge_ok(&[&json_opt, &single]);
    assert_eq!(read_json(&merged)["findings"], doc["findings"]);
}

#[test]
fn partitions_of_an_http2_call_rate_run_merge_to_the_single_runs_exact_fields() {
    let dir = Scratch::new("call-rate-parts");
    let workload = [
        "--http-version",
        "2",
        "--call-rate",
        "400",
        "--num-conns",
        "4",
        "--num-calls",
        "10",
        "--timeout",
        "5",
    ];
    let server = H2Server::start(H2Opts {
        body: 100,
        ..H2Opts::default()
    });
    let single = run_json(server.port(), &dir.file("single.json"), &workload);
    let parts: Vec<String> = (0..2).map(|i| dir.file(&format!("p{i}.json"))).collect();
    for (i, part) in parts.iter().enumerate() {
        let p = format!("--partition={i}/2");
        let mut args = workload.to_vec();
        args.push(&p);
        run_json(server.port(), part, &args);
    }
    let merged = dir.file("merged.json");
    let json_opt = format!("--json={merged}");
    merge_ok(&[&json_opt, &parts[0], &parts[1]]);
    let all = read_json(&merged);
    // The figures that do not depend on timing, as JSON values.
    for path in [
        "connections.total",
        "connections.successful",
        "requests.total",
        "requests.size_b",
        "replies.total",
        "replies.non_2xx",
        "reply_size",
        "status",
        "errors",
        "net_io.bytes",
        "tls_handshakes",
        "percentiles.connect.count",
        "percentiles.response.count",
        "percentiles.transfer.count",
        "percentiles.lifetime.count",
        "percentiles.lateness.count",
        "http2",
        "call_rate.target_per_s",
        "call_rate.connections",
        "call_rate.scheduled",
        "call_rate.issued",
        "call_rate.completed",
        "call_rate.lost",
        "call_rate.unsent",
        "call_rate.reconnects",
        "call_rate.given_up",
        "call_rate.lateness_ms.count",
        "call_rate.response_ms.count",
        "raw.status_200_302",
        "raw.pacing.unstarted",
        "raw.pacing.source_addrs",
    ] {
        let at = |d: &Value| {
            path.split('.')
                .fold(d.clone(), |v, k| v.get(k).cloned().unwrap_or(Value::Null))
        };
        assert_eq!(at(&all), at(&single), "{path}");
        assert_ne!(at(&single), Value::Null, "{path}");
    }
    assert_eq!(all["call_rate"]["target_per_s"], json!(400.0));
    assert_eq!(all["call_rate"]["completed"], 40);
    assert_eq!(all["http2"]["streams"], 40);
    assert_eq!(server.requests(), 80);
}

/// The example manifests: an Indexed Job partitioned by `JOB_COMPLETION_INDEX` and
/// the merge Job; parsed as YAML when python3 with PyYAML is available.
#[test]
fn kubernetes_example_is_an_indexed_job() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kubernetes");
    let job = fs::read_to_string(dir.join("job.yaml")).expect("job.yaml");
    for needle in [
        "kind: Job",
        "completionMode: Indexed",
        "--partition=$(JOB_COMPLETION_INDEX)/4",
        "--json=/results/part-$(JOB_COMPLETION_INDEX).json",
        "--start-at=$(START_AT)",
    ] {
        assert!(job.contains(needle), "job.yaml lacks {needle}");
    }
    let merge_job = fs::read_to_string(dir.join("merge-job.yaml")).expect("merge-job.yaml");
    assert!(merge_job.contains("- merge"));
    let script = r#"
import sys, yaml
job = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
load = [d for d in job if d["kind"] == "Job"][0]
spec = load["spec"]
assert spec["completionMode"] == "Indexed", spec
assert spec["completions"] == spec["parallelism"] == 4, spec
args = spec["template"]["spec"]["containers"][0]["args"]
assert "--partition=$(JOB_COMPLETION_INDEX)/4" in args, args
merge = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d]
margs = merge[0]["spec"]["template"]["spec"]["containers"][0]["args"]
assert margs[0] == "merge" and len([a for a in margs if a.startswith("/results/part-")]) == 4, margs
print("ok")
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(dir.join("job.yaml"))
        .arg(dir.join("merge-job.yaml"))
        .output();
    match out {
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("No module named 'yaml'") => {
            support::skip("PyYAML not installed (package python3-yaml): YAML not checked")
        }
        Ok(o) => assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "ok\n",
            "{}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => support::skip(&format!(
            "python3 not available ({e}; package python3): YAML not checked"
        )),
    }
}
