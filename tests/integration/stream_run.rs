//! `--stream` over HTTP/1.1 against the built-in server's streaming endpoints: the
//! "Stream" group and the JSON `stream` member against what the server wrote (its
//! `--event-log`, and the exact counts its parameters ask for): SSE with `[DONE]`,
//! NDJSON, `auto` by Content-Type, chunked and content-length bodies, streams cut
//! (FIN and reset), stalled, with events after `[DONE]`, and the OpenAI-shaped chat
//! stream, and partitions of a streaming run merged. Times are checked as lower bounds
//! only (nothing is early).

use std::net::SocketAddr;
use std::path::PathBuf;

use rshperf::front::serve::{spawn, ServeHandle, ServeOptions};
use serde_json::Value;

use crate::support::recorder::TempFile;
use crate::support::{run, run_ok, Report};

/// The in-process server on a free port, optionally logging events to `log`.
fn server(log: Option<PathBuf>) -> ServeHandle {
    spawn(ServeOptions {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        event_log: log,
        ..ServeOptions::default()
    })
    .expect("spawn the server")
}

/// The numbers of the `Stream:` line: streams, events, per stream, done, cut,
/// stalled, empty, after-done, open-at-end.
pub(crate) fn stream_line(r: &Report) -> Vec<f64> {
    let n = r.nums("Stream:");
    assert_eq!(n.len(), 9, "{}", r.text);
    n
}

/// Runs rshperf against `h` with `args` and `--json FILE`: the report and the document.
fn run_json(h: &ServeHandle, args: &[&str]) -> (Report, Value) {
    let json = TempFile::new("stream-json", b"");
    let mut all = args.to_vec();
    all.extend_from_slice(&["--json", &json.path]);
    let r = run_ok(h.addr().port(), &all);
    let text = std::fs::read_to_string(&json.path).expect("the JSON document");
    (r, serde_json::from_str(&text).expect("JSON"))
}

/// The integer at `path` (`/stream/events`) of `doc`.
fn int(doc: &Value, path: &str) -> u64 {
    doc.pointer(path)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{path} in {doc}"))
}

#[test]
fn sse_streams_match_what_the_server_wrote() {
    let log = TempFile::new("stream-log", b"");
    let h = server(Some(PathBuf::from(&log.path)));
    let (r, doc) = run_json(
        &h,
        &[
            "--uri",
            "/stream?events=20&first=5ms&gap=2ms&size=32&done=1",
            "--stream",
            "sse",
            "--num-conns",
            "4",
            "--num-calls",
            "3",
            "--timeout",
            "10",
        ],
    );
    h.stop().expect("stop");
    assert_eq!(r.totals(), (4, 12, 12), "{}", r.text);
    assert_eq!(r.error("total"), 0);
    assert_eq!(
        stream_line(&r),
        [12.0, 240.0, 20.0, 12.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    // Every event and [DONE] the server logged, the client counted.
    let text = std::fs::read_to_string(&log.path).expect("the log");
    let rows: Vec<&str> = text.lines().skip(1).collect();
    let done = rows
        .iter()
        .filter(|l| l.split(',').nth(1) == Some("done"))
        .count();
    assert_eq!((rows.len() - done, done), (240, 12), "{text}");
    assert_eq!(int(&doc, "/stream/events"), 240);
    assert_eq!(int(&doc, "/stream/data_bytes"), 240 * 32);
    assert_eq!(int(&doc, "/stream/first_event_ms/count"), 12);
    assert_eq!(int(&doc, "/stream/gap_ms/count"), 12 * 19);
    assert_eq!(int(&doc, "/stream/duration_ms/count"), 12);
    assert_eq!(int(&doc, "/raw/stream/events"), 240);
    // Never early: the server counts 5 ms from the request's arrival, after its send.
    let first_min = doc
        .pointer("/stream/first_event_ms/p50")
        .and_then(Value::as_f64)
        .expect("p50");
    assert!(first_min >= 5.0, "{first_min}");
    assert!(r.text.contains("(from the request's send)"), "{}", r.text);
    assert!(r
        .text
        .lines()
        .next()
        .is_some_and(|l| l.ends_with("--stream=sse")));
}

#[test]
fn auto_splits_by_content_type_and_ndjson_content_length_bodies_too() {
    let h = server(None);
    // `lines` replies are text/plain: auto does not split them.
    let r = run_ok(
        h.addr().port(),
        &[
            "--uri",
            "/stream?events=4&format=lines",
            "--stream",
            "auto",
            "--num-conns",
            "2",
        ],
    );
    assert_eq!(stream_line(&r)[..2], [0.0, 0.0], "{}", r.text);
    let r = run_ok(
        h.addr().port(),
        &[
            "--uri",
            "/stream?events=4&format=ndjson",
            "--stream",
            "auto",
            "--num-conns",
            "2",
        ],
    );
    assert_eq!(
        stream_line(&r),
        [2.0, 8.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    // Without --stream: no Stream group, and the JSON has no stream member.
    let (r, doc) = run_json(&h, &["--uri", "/stream?events=4&format=ndjson"]);
    assert!(!r.text.contains("Stream"), "{}", r.text);
    assert!(doc.get("stream").is_none() && doc.pointer("/raw/stream").is_none());
    h.stop().expect("stop");
}

#[test]
fn cut_and_reset_streams_are_cut_with_exact_counts() {
    let h = server(None);
    for uri in ["/stream?events=5&cut=2", "/stream?events=5&cut=2&reset=1"] {
        let port = h.addr().port().to_string();
        let out = run(&[
            "--server",
            "127.0.0.1",
            "--port",
            &port,
            "--uri",
            uri,
            "--stream",
            "sse",
            "--num-conns",
            "3",
            "--timeout",
            "10",
        ]);
        let r = Report {
            text: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert_eq!(r.error("connreset"), 3, "{uri}: {}", r.text);
        assert_eq!(
            stream_line(&r),
            [3.0, 6.0, 2.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0],
            "{uri}"
        );
    }
    h.stop().expect("stop");
}

#[test]
fn a_stalled_stream_is_stalled_and_the_timeout_is_per_gap() {
    let h = server(None);
    // One event, then silence: --timeout ends it, the gap timeout calls it stalled.
    let port = h.addr().port().to_string();
    let out = run(&[
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--uri",
        "/stream?events=3&stall=1",
        "--stream",
        "sse",
        "--timeout",
        "0.5",
        "--stream-gap-timeout",
        "0.1",
    ]);
    let r = Report {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(r.error("client-timo"), 1, "{}", r.text);
    assert_eq!(
        stream_line(&r),
        [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    );
    // A stream longer than --timeout whose gaps are all shorter completes.
    let r = run_ok(
        h.addr().port(),
        &[
            "--uri",
            "/stream?events=12&gap=100ms&done=1",
            "--stream",
            "sse",
            "--timeout",
            "1",
        ],
    );
    assert_eq!(r.error("total"), 0, "{}", r.text);
    assert_eq!(
        stream_line(&r),
        [1.0, 12.0, 12.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    h.stop().expect("stop");
}

#[test]
fn events_after_done_and_the_chat_stream_are_counted() {
    let h = server(None);
    let r = run_ok(
        h.addr().port(),
        &[
            "--uri",
            "/stream?events=3&done=1&after=2",
            "--stream",
            "sse",
            "--num-conns",
            "2",
        ],
    );
    assert_eq!(
        stream_line(&r),
        [2.0, 6.0, 3.0, 2.0, 0.0, 0.0, 0.0, 4.0, 0.0]
    );
    let body = TempFile::new(
        "chat-body",
        br#"{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":7}"#,
    );
    let r = run_ok(
        h.addr().port(),
        &[
            "--method",
            "POST",
            "--uri",
            "/v1/chat/completions",
            "--body-file",
            &body.path,
            "--content-type",
            "application/json",
            "--stream",
            "auto",
            "--num-conns",
            "3",
        ],
    );
    assert_eq!(
        stream_line(&r),
        [3.0, 21.0, 7.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    h.stop().expect("stop");
}

#[test]
fn time_to_first_event_shows_a_server_slowing_with_its_open_streams() {
    use std::io::{Read, Write};
    let h = server(None);
    // Two streams held open before their first event, by a raw client.
    let held: Vec<std::net::TcpStream> = (0..2)
        .map(|_| {
            let mut c = std::net::TcpStream::connect(h.addr()).expect("connect");
            c.write_all(b"GET /stream?stall=0 HTTP/1.1\r\nHost: t\r\n\r\n")
                .expect("send");
            c.set_read_timeout(Some(crate::support::HANG_GUARD))
                .expect("timeout");
            let mut got = Vec::new();
            let mut buf = [0; 1024];
            while !got.ends_with(b"\r\n\r\n") {
                let n = c.read(&mut buf).expect("the head");
                assert!(n > 0, "the server closed");
                got.extend_from_slice(&buf[..n]);
            }
            c
        })
        .collect();
    // Each of rshperf's streams, one after the other on one connection, finds the two
    // held ones open: its first event comes first + 2 x first_per_open after the
    // request, 130 ms at least.
    let (r, doc) = run_json(
        &h,
        &[
            "--uri",
            "/stream?events=2&first=10ms&first_per_open=60ms&done=1",
            "--stream",
            "sse",
            "--num-conns",
            "1",
            "--num-calls",
            "3",
            "--timeout",
            "10",
        ],
    );
    drop(held);
    h.stop().expect("stop");
    assert_eq!(r.error("total"), 0, "{}", r.text);
    assert_eq!(
        stream_line(&r),
        [3.0, 6.0, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    let fe = doc
        .pointer("/stream/first_event_ms")
        .expect("first_event_ms");
    assert_eq!(fe["count"].as_u64(), Some(3), "{fe}");
    // The histogram's lowest bucket edge may be under the sample by its precision.
    let min = fe["p50"]
        .as_f64()
        .expect("p50")
        .min(fe["avg"].as_f64().expect("avg"));
    assert!(min >= 129.0, "{fe}");
}

#[test]
fn bad_stream_options_are_refused_naming_the_choices() {
    let out = run(&["--stream", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--stream: 'json' is not a stream format (expected one of sse, ndjson, jsonl, lines, auto)"),
        "{err}"
    );
    let out = run(&["--stream", "sse", "--stream-gap-timeout", "-1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rshperf: illegal stream gap timeout -1 (expected a number of seconds >= 0"),
        "{err}"
    );
}

#[test]
fn demo_streams_with_no_server() {
    let out = run(&[
        "demo",
        "--uri",
        "/stream?events=5&gap=1ms&done=1",
        "--stream",
        "sse",
        "--num-conns",
        "3",
        "--timeout",
        "10",
    ]);
    let r = Report {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(out.status.code(), Some(0), "{}\n{}", r.text, r.stderr);
    assert_eq!(r.totals(), (3, 3, 3), "{}", r.text);
    assert_eq!(
        stream_line(&r),
        [3.0, 15.0, 5.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        "{}",
        r.text
    );
}

/// The raw stream histogram `name` of a JSON document, decoded.
fn raw_hist(doc: &Value, name: &str) -> hdrhistogram::Histogram<u64> {
    use base64::Engine as _;
    let text = doc["raw"]["stream"][name].as_str().expect("a histogram");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64");
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .expect("a histogram")
}

/// Partitions of a streaming run merge to the single run: the same counts, and every
/// histogram the exact sum of the partitions'.
#[test]
fn partitions_of_a_streaming_run_merge_to_the_single_run() {
    let h = server(None);
    let port = h.addr().port().to_string();
    let dir = std::env::temp_dir().join(format!("rshperf-stream-merge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let file = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let workload = [
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--uri",
        "/stream?events=6&first=2ms&gap=1ms&size=16&done=1",
        "--stream",
        "sse",
        "--num-conns",
        "6",
        "--num-calls",
        "2",
        "--rate",
        "100",
        "--timeout",
        "10",
    ];
    let go = |extra: &[String]| {
        let mut all: Vec<String> = workload.iter().map(|s| s.to_string()).collect();
        all.extend_from_slice(extra);
        let args: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    };
    go(&[format!("--json={}", file("single.json"))]);
    for i in 0..2 {
        go(&[
            format!("--partition={i}/2"),
            format!("--json={}", file(&format!("p{i}.json"))),
        ]);
    }
    let out = run(&[
        "merge",
        &file("p0.json"),
        &file("p1.json"),
        "--json",
        &file("merged.json"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    h.stop().expect("stop");
    let read = |n: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(file(n)).expect("read")).expect("JSON")
    };
    let (single, merged) = (read("single.json"), read("merged.json"));
    let parts = [read("p0.json"), read("p1.json")];
    for count in [
        "streams",
        "events",
        "data_bytes",
        "done",
        "cut",
        "stalled",
        "empty",
    ] {
        let path = format!("/raw/stream/{count}");
        let sum: u64 = parts.iter().map(|p| int(p, &path)).sum();
        assert_eq!(int(&merged, &path), sum, "{count}");
        assert_eq!(int(&merged, &path), int(&single, &path), "{count}");
    }
    assert_eq!(int(&merged, "/raw/stream/streams"), 12);
    assert_eq!(int(&merged, "/raw/stream/events"), 72);
    assert_eq!(int(&merged, "/raw/stream/done"), 12);
    let sum: u64 = parts
        .iter()
        .map(|p| int(p, "/raw/stream/duration_sum_us"))
        .sum();
    assert_eq!(int(&merged, "/raw/stream/duration_sum_us"), sum);
    for (name, figure) in [
        ("first_event", "first_event_ms"),
        ("gap", "gap_ms"),
        ("duration", "duration_ms"),
    ] {
        let mut added = raw_hist(&parts[0], name);
        added.add(raw_hist(&parts[1], name)).expect("same bounds");
        let m = raw_hist(&merged, name);
        assert_eq!(m.len(), raw_hist(&single, name).len(), "{name}");
        let recorded = |h: &hdrhistogram::Histogram<u64>| {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect::<Vec<_>>()
        };
        assert_eq!(recorded(&m), recorded(&added), "{name}");
        // The figures printed are the merged histogram's own.
        let p99 = merged
            .pointer(&format!("/stream/{figure}/p99"))
            .and_then(Value::as_f64)
            .expect("p99");
        let ours = added.value_at_quantile(0.99) as f64 / 1e3;
        assert!((p99 - ours).abs() < 1e-9, "{name} {p99} {ours}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Streams still running when `--runtime` ends the run are open at the end: not cut,
/// not empty (even those with no event yet), and not calls the server left
/// unanswered.
#[test]
fn streams_open_at_the_end_are_neither_empty_nor_unanswered() {
    let h = server(None);
    // 4 streams: their first event after 300 ms, then one every 5 s; the run stops
    // at 2 s, so each has exactly one event, the second never came.
    let (r, doc) = run_json(
        &h,
        &[
            "--uri",
            "/stream?events=5&first=300ms&gap=5s&size=8",
            "--stream",
            "sse",
            "--num-conns",
            "4",
            "--rate",
            "100",
            "--runtime",
            "2",
            "--timeout",
            "10",
        ],
    );
    h.stop().expect("stop");
    assert_eq!(int(&doc, "/stream/streams"), 4, "{}", r.text);
    assert_eq!(int(&doc, "/stream/events"), 4);
    assert_eq!(int(&doc, "/stream/open_at_end"), 4);
    assert_eq!(int(&doc, "/stream/cut"), 0);
    assert_eq!(int(&doc, "/stream/empty"), 0);
    assert_eq!(int(&doc, "/unanswered"), 0, "{}", r.text);
    let findings = doc["findings"].as_array().expect("findings");
    assert!(
        findings.iter().all(|f| f["finding"] != "unanswered"),
        "{findings:?}"
    );
    assert!(!r.stderr.contains("unanswered"), "{}", r.stderr);
}
