//! `--metrics-listen`: the endpoint scraped with a plain HTTP client while rshperf
//! runs, parsed strictly (support::prom), and its final totals compared with the
//! report, the JSON document and what the in-process server counted; the stream
//! families only in a `--stream` run.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use rshperf::front::serve::{spawn, ServeOptions};
use serde_json::Value;

use crate::support::prom;
use crate::support::recorder::TempFile;
use crate::support::server::{Behavior, Server};
use crate::support::{bin, numbers, wait_until};

/// A plain HTTP/1.1 request; returns (status line, headers, body).
fn http(addr: &str, request: &str) -> (String, Vec<String>, String) {
    let mut s = TcpStream::connect(addr).expect("connect to the metrics endpoint");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(request.as_bytes()).expect("send");
    let mut all = Vec::new();
    s.read_to_end(&mut all).expect("read");
    let text = String::from_utf8(all).expect("utf-8");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or("").to_string();
    let headers: Vec<String> = lines.map(str::to_string).collect();
    let length = headers
        .iter()
        .find_map(|h| h.strip_prefix("Content-Length: "))
        .and_then(|v| v.parse::<usize>().ok());
    assert_eq!(length, Some(body.len()), "Content-Length matches the body");
    (status, headers, body.to_string())
}

pub(crate) fn scrape(addr: &str) -> prom::Exposition {
    let (status, headers, body) = http(addr, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(
        headers.contains(&"Content-Type: text/plain; version=0.0.4; charset=utf-8".to_string()),
        "{headers:?}"
    );
    prom::parse(&body)
}

/// Starts rshperf with `args`; returns the child, its stdout and stderr lines as they
/// come, and the metrics address it announced.
pub(crate) fn start(args: &[&str]) -> (Child, mpsc::Receiver<String>, String) {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rshperf");
    let (tx, rx) = mpsc::channel();
    let out = child.stdout.take().expect("stdout");
    let tx2 = tx.clone();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx2.send(format!("out:{l}"));
        }
    });
    let err = child.stderr.take().expect("stderr");
    let (atx, arx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            if let Some(a) = l.strip_prefix("rshperf: serving metrics on http://") {
                let _ = atx.send(a.trim_end_matches("/metrics").to_string());
            }
            let _ = tx.send(format!("err:{l}"));
        }
    });
    let addr = arx
        .recv_timeout(Duration::from_secs(20))
        .expect("rshperf announces its metrics address");
    (child, rx, addr)
}

#[test]
fn scrapes_parse_strictly_and_the_last_holds_the_reports_totals() {
    let srv = Server::start(Behavior::Fixed(100));
    let port = srv.port().to_string();
    let (mut child, lines, addr) = start(&[
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--rate",
        "40",
        "--num-conns",
        "80",
        "--num-calls",
        "2",
        "--timeout",
        "5",
        "--metrics-listen",
        "127.0.0.1:0",
        "--metrics-linger",
        "3",
    ]);
    // While the run goes on: a valid exposition with every family (empty, and
    // still valid, for the moment between the announcement and the engines' start).
    let start = std::time::Instant::now();
    let first = loop {
        let e = scrape(&addr);
        if !e.types.is_empty() {
            break e;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no metrics appear"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    for family in [
        "rshperf_connections_total",
        "rshperf_replies_total",
        "rshperf_errors_total",
        "rshperf_request_bytes_total",
        "rshperf_reply_bytes_total",
        "rshperf_open_connections",
        "rshperf_offered_arrivals_per_second",
        "rshperf_response_seconds",
        "rshperf_connect_seconds",
        "rshperf_lateness_seconds",
    ] {
        assert!(first.types.contains_key(family), "{family} missing");
    }
    assert_eq!(first.sum("rshperf_offered_arrivals_per_second", &[]), 40.0);
    // Wait for the report (printed before the linger).
    let mut report = Vec::new();
    loop {
        let l = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the report");
        if let Some(text) = l.strip_prefix("out:") {
            report.push(text.to_string());
            if text.starts_with("Errors: fd-unavail") {
                break;
            }
        }
    }
    let total = report
        .iter()
        .find(|l| l.starts_with("Total:"))
        .expect("Total line");
    let n = numbers(&total["Total:".len()..]);
    let (conns, requests, replies) = (n[0], n[1], n[2]);
    assert_eq!((conns, requests, replies), (80.0, 160.0, 160.0));
    let last = scrape(&addr);
    let classes: f64 = ["1xx", "2xx", "3xx", "4xx", "5xx"]
        .iter()
        .map(|c| last.sum("rshperf_replies_total", &[("class", c)]))
        .sum();
    assert_eq!(classes, replies);
    assert_eq!(
        last.sum("rshperf_replies_total", &[("class", "2xx")]),
        160.0
    );
    assert_eq!(last.sum("rshperf_requests_total", &[]), requests);
    assert_eq!(last.sum("rshperf_connections_total", &[]), conns);
    assert_eq!(last.sum("rshperf_errors_total", &[]), 0.0);
    assert_eq!(last.sum("rshperf_response_seconds_count", &[]), 160.0);
    assert_eq!(last.sum("rshperf_open_connections", &[]), 0.0);
    assert_eq!(srv.requests() as f64, requests);
    // No --stream: no stream family, neither during the run nor at its end.
    for e in [&first, &last] {
        assert!(
            e.types.keys().all(|f| !f.starts_with("rshperf_stream")),
            "{:?}",
            e.types
        );
    }
    // Anything but GET /metrics.
    let (status, _, _) = http(&addr, "GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let (status, _, _) = http(&addr, "POST /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(status, "HTTP/1.1 405 Method Not Allowed");
    let code = child.wait().expect("rshperf exits after the linger").code();
    assert_eq!(code, Some(0));
    wait_until("the endpoint to close", Duration::from_secs(5), || {
        TcpStream::connect(&addr).is_err()
    });
}

#[test]
fn a_busy_metrics_address_is_a_startup_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let out = bin()
        .args([
            "--server",
            "127.0.0.1",
            "--port",
            "9",
            "--metrics-listen",
            &addr,
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("--metrics-listen: cannot listen on {addr}")),
        "{err}"
    );
    let out = bin()
        .args(["--server", "127.0.0.1", "--metrics-linger", "2"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--metrics-linger needs --metrics-listen")
    );
}

#[test]
fn sweep_steps_are_labelled_and_stay_served() {
    let srv = Server::start(Behavior::Fixed(10));
    let port = srv.port().to_string();
    let (mut child, lines, addr) = start(&[
        "sweep",
        "--low-rate",
        "20",
        "--high-rate",
        "40",
        "--rate-step",
        "20",
        "--const-test-time",
        "1",
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--timeout",
        "5",
        "--metrics-listen",
        "127.0.0.1:0",
        "--metrics-linger",
        "3",
    ]);
    // The table's last line ("# ...") comes after every step.
    loop {
        let l = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the sweep's table");
        if l.starts_with("out:# ") {
            break;
        }
    }
    let e = scrape(&addr);
    let step = |n: &str| e.sum("rshperf_replies_total", &[("step", n), ("class", "2xx")]);
    assert_eq!((step("1"), step("2")), (20.0, 40.0));
    assert_eq!(
        e.sum("rshperf_offered_arrivals_per_second", &[("step", "2")]),
        40.0
    );
    assert!(e.samples.iter().all(|s| s.labels.contains_key("step")));
    assert_eq!(srv.requests(), 60);
    assert_eq!(child.wait().expect("exit").code(), Some(0));
}

/// The number at `path` (`/stream/events`) of `doc`.
fn num(doc: &Value, path: &str) -> f64 {
    doc.pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{path} in {doc}"))
}

#[test]
fn stream_figures_are_served_live_as_the_json_says() {
    let h = spawn(ServeOptions {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        ..ServeOptions::default()
    })
    .expect("spawn the server");
    let port = h.addr().port().to_string();
    // Each call takes the next URI, looping: over 6 connections, twice each of a
    // stream of 5 events ending with [DONE], one cut after 2 events (a reset), and
    // one that stalls after 1 event until --timeout cuts it.
    let uris = TempFile::new(
        "metrics-stream-wlog",
        b"/stream?events=5&gap=2ms&done=1\0/stream?events=5&cut=2\0/stream?events=3&stall=1\0",
    );
    let wlog = format!("y,{}", uris.path);
    let json = TempFile::new("metrics-stream-json", b"");
    let (mut child, lines, addr) = start(&[
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--wlog",
        &wlog,
        "--stream",
        "sse",
        "--num-conns",
        "6",
        "--rate",
        "50",
        "--timeout",
        "2",
        "--stream-gap-timeout",
        "1",
        "--json",
        &json.path,
        "--metrics-listen",
        "127.0.0.1:0",
        "--metrics-linger",
        "3",
    ]);
    // The families are there from the engines' start.
    wait_until("the stream families", Duration::from_secs(20), || {
        scrape(&addr)
            .types
            .get("rshperf_stream_gap_seconds")
            .is_some_and(|t| t == "histogram")
    });
    // The document is written after the report, before the linger.
    loop {
        let l = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the report");
        if l.starts_with("out:Stream duration") {
            break;
        }
    }
    let doc = std::cell::RefCell::new(Value::Null);
    wait_until("the JSON document", Duration::from_secs(10), || {
        let text = std::fs::read_to_string(&json.path).unwrap_or_default();
        serde_json::from_str::<Value>(&text)
            .map(|v| *doc.borrow_mut() = v)
            .is_ok()
    });
    let doc = doc.into_inner();
    let e = scrape(&addr);
    // What the server was asked to send, as the JSON counted it.
    assert_eq!(num(&doc, "/stream/streams"), 6.0, "{doc}");
    assert_eq!(num(&doc, "/stream/events"), 2.0 * (5.0 + 2.0 + 1.0));
    assert_eq!(num(&doc, "/stream/done"), 2.0);
    assert_eq!(num(&doc, "/stream/cut"), 4.0);
    assert_eq!(num(&doc, "/stream/stalled"), 2.0);
    assert_eq!(num(&doc, "/stream/first_event_ms/count"), 6.0);
    assert_eq!(num(&doc, "/stream/gap_ms/count"), 2.0 * (4.0 + 1.0));
    // The scraped counters are the document's.
    for (family, leaf) in [
        ("rshperf_streams_total", "/stream/streams"),
        ("rshperf_stream_events_total", "/stream/events"),
        ("rshperf_stream_done_total", "/stream/done"),
        ("rshperf_stream_cut_total", "/stream/cut"),
        ("rshperf_stream_stalled_total", "/stream/stalled"),
    ] {
        assert_eq!(e.types.get(family).map(String::as_str), Some("counter"));
        assert_eq!(e.sum(family, &[]), num(&doc, leaf), "{family}");
    }
    // The histograms: their counts are the document's; the bucket that first holds
    // the largest value holds them all; the sum is the mean × count (rounded to whole µs).
    for (family, leaf) in [
        (
            "rshperf_stream_first_event_seconds",
            "/stream/first_event_ms",
        ),
        ("rshperf_stream_gap_seconds", "/stream/gap_ms"),
    ] {
        let count = num(&doc, &format!("{leaf}/count"));
        assert_eq!(e.sum(&format!("{family}_count"), &[]), count, "{family}");
        let bucket = |le: &str| e.sum(&format!("{family}_bucket"), &[("le", le)]);
        assert_eq!(bucket("+Inf"), count, "{family}");
        let max = num(&doc, &format!("{leaf}/max")) / 1e3;
        let holds = e
            .samples
            .iter()
            .filter(|s| s.name == format!("{family}_bucket"))
            .find(|s| s.labels["le"].parse::<f64>().is_ok_and(|b| b >= max))
            .map(|s| s.value);
        assert_eq!(holds, Some(count), "{family}: max {max} s");
        let sum = e.sum(&format!("{family}_sum"), &[]);
        let mean = num(&doc, &format!("{leaf}/avg")) / 1e3 * count;
        assert!((sum - mean).abs() <= 1e-9, "{family}: sum {sum}, {mean}");
    }
    assert_eq!(child.wait().expect("exit").code(), Some(0));
    h.stop().expect("stop");
}
