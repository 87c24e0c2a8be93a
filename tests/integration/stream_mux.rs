//! `--stream` over HTTP/2 (h2c) and HTTP/3 against the in-process servers built on
//! someone else's protocol stacks (`h2`; quinn and `h3`), each reply a stream of
//! events written as separate DATA frames on the server's timer: the "Stream" line
//! and the JSON `stream` member against what the servers sent, with exact counts for
//! streams that end, streams reset mid-stream (RST_STREAM, RESET_STREAM) and events
//! after `[DONE]`, and streams still open when `--runtime` stops the run (several on
//! one connection: those whose status came are open at the end, those without one are
//! exactly the unanswered calls). Times are checked as lower bounds only (nothing is
//! early).

use std::time::Duration;

use serde_json::Value;

use crate::stream_run::stream_line;
use crate::support::h2_server::{self, h2_tls, H2Server};
use crate::support::h3_server::{self, H3Server};
use crate::support::recorder::TempFile;
use crate::support::streamed::Streamed;
use crate::support::tls_server::Pki;
use crate::support::{run_ok, Report};

/// Runs rshperf against 127.0.0.1:`port` with `args` and `--json FILE`.
fn run_json(port: u16, args: &[&str]) -> (Report, Value) {
    let json = TempFile::new("stream-mux-json", b"");
    let mut all = args.to_vec();
    all.extend_from_slice(&["--json", &json.path, "--timeout", "10"]);
    let r = run_ok(port, &all);
    let text = std::fs::read_to_string(&json.path).expect("the JSON document");
    (r, serde_json::from_str(&text).expect("JSON"))
}

/// The number at `path` of `doc`.
fn num(doc: &Value, path: &str) -> f64 {
    doc.pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{path} in {doc}"))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn h2(streamed: Streamed) -> H2Server {
    H2Server::start(h2_server::Opts {
        streamed: Some(streamed),
        ..h2_server::Opts::default()
    })
}

#[test]
fn h2_streams_are_split_per_stream_and_end_with_end_stream() {
    let s = h2(Streamed::sse(5, ms(20), ms(3), true));
    // Three calls in flight per connection: their DATA frames interleave.
    let (r, doc) = run_json(
        s.port(),
        &[
            "--http-version",
            "2",
            "--stream",
            "sse",
            "--num-conns",
            "2",
            "--num-calls",
            "3",
            "--burst-length",
            "3",
        ],
    );
    assert_eq!(r.totals(), (2, 6, 6), "{}", r.text);
    assert_eq!(s.requests(), 6);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    assert_eq!(
        stream_line(&r),
        [6.0, 30.0, 5.0, 6.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        "{}",
        r.text
    );
    assert_eq!(num(&doc, "/stream/data_bytes"), 6.0 * 5.0 * 2.0);
    assert_eq!(num(&doc, "/stream/first_event_ms/count"), 6.0);
    assert_eq!(num(&doc, "/stream/gap_ms/count"), 6.0 * 4.0);
    // The server waits 20 ms from the request's arrival, after its send.
    assert!(num(&doc, "/stream/first_event_ms/p50") >= 20.0, "{doc}");
    assert_eq!(num(&doc, "/stream/duration_ms/count"), 6.0);
}

#[test]
fn h2_a_reset_mid_stream_cuts_it_and_events_after_done_are_apart() {
    let mut cut = Streamed::sse(3, ms(1), ms(1), false);
    cut.pieces.push((ms(1), b"data: half".to_vec()));
    cut.reset = true;
    let s = h2(cut);
    let (r, _) = run_json(
        s.port(),
        &[
            "--http-version",
            "2",
            "--stream",
            "auto",
            "--num-conns",
            "2",
            "--num-calls",
            "2",
        ],
    );
    // A reset stream is a failed call (`other`), the connection goes on.
    assert_eq!(r.error("other"), 4, "{}", r.text);
    assert_eq!(
        stream_line(&r),
        [4.0, 12.0, 3.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0],
        "{}",
        r.text
    );
    drop(s);

    let mut more = Streamed::sse(2, ms(1), ms(1), true);
    more.pieces
        .push((ms(2), b"data: late\n\ndata: later\n\n".to_vec()));
    let s = h2(more);
    let (r, _) = run_json(
        s.port(),
        &["--http-version", "2", "--stream", "sse", "--num-conns", "3"],
    );
    assert_eq!(r.error("total"), 0, "{}", r.text);
    assert_eq!(
        stream_line(&r),
        [3.0, 6.0, 2.0, 3.0, 0.0, 0.0, 0.0, 6.0, 0.0],
        "{}",
        r.text
    );
}

#[test]
fn h3_streams_are_split_by_content_type_and_a_reset_cuts_them() {
    let pki = Pki::new();
    let s = H3Server::start(
        pki.server_config(false),
        h3_server::Opts {
            streamed: Some(Streamed::sse(4, ms(20), ms(3), true)),
            ..h3_server::Opts::default()
        },
    );
    let (r, doc) = run_json(
        s.port(),
        &[
            "--http-version",
            "3",
            "--stream",
            "auto",
            "--num-conns",
            "2",
            "--num-calls",
            "2",
            "--burst-length",
            "2",
        ],
    );
    assert_eq!(r.totals(), (2, 4, 4), "{}\n{}", r.text, r.stderr);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    assert_eq!(
        stream_line(&r),
        [4.0, 16.0, 4.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        "{}",
        r.text
    );
    assert_eq!(num(&doc, "/stream/gap_ms/count"), 4.0 * 3.0);
    assert!(num(&doc, "/stream/first_event_ms/p50") >= 20.0, "{doc}");

    // RESET_STREAM: the client drops what it has not read of a reset stream (its
    // status too), so the server resets only after a pause in which the client, even
    // on a loaded machine, reads all three events.
    let mut cut = Streamed::sse(3, ms(1), ms(1), false);
    cut.reset = true;
    cut.reset_after = ms(300);
    let s = H3Server::start(
        pki.server_config(false),
        h3_server::Opts {
            streamed: Some(cut),
            ..h3_server::Opts::default()
        },
    );
    let (r, doc) = run_json(
        s.port(),
        &["--http-version", "3", "--stream", "sse", "--num-conns", "3"],
    );
    assert_eq!(r.error("other"), 3, "{}\n{}", r.text, r.stderr);
    let line = stream_line(&r);
    assert_eq!((line[0], line[3], line[4]), (3.0, 0.0, 3.0), "{}", r.text);
    assert_eq!(num(&doc, "/stream/events"), 9.0, "{doc}");
}

/// Streams whose first event comes after 300 ms and the next after 5 s: a run stopped
/// at 2 s sees exactly one event of each stream that was answered.
fn long_streams() -> Streamed {
    Streamed::sse(5, ms(300), Duration::from_secs(5), true)
}

/// Runs 4 streams at once on one connection (`--num-calls 4 --burst-length 4`) with
/// `proto`'s options against 127.0.0.1:`port`, stopped by `--runtime 2`, with a
/// request log: the report, the document and each record's `error`.
fn four_open_at_the_end(port: u16, proto: &[&str]) -> (Report, Value, Vec<String>) {
    let log = TempFile::new("stream-mux-reqlog", b"");
    let mut args = proto.to_vec();
    args.extend_from_slice(&[
        "--stream",
        "sse",
        "--num-conns",
        "1",
        "--num-calls",
        "4",
        "--burst-length",
        "4",
        "--runtime",
        "2",
        "--request-log",
        &log.path,
    ]);
    let (r, doc) = run_json(port, &args);
    let text = std::fs::read_to_string(&log.path).expect("the request log");
    let ends = text
        .lines()
        .map(|l| {
            let rec: Value = serde_json::from_str(l).expect("a record");
            rec["error"].as_str().expect("error").to_string()
        })
        .collect();
    (r, doc, ends)
}

/// What `four_open_at_the_end` left when `begun` of the 4 streams had their status:
/// those are open at the end (one event each, neither cut nor empty), the others are
/// exactly the unanswered calls, named by the `unanswered` finding only if there are
/// any; the connection is abandoned and every call logged as `abandoned`.
fn check_open_at_the_end(run: &(Report, Value, Vec<String>), begun: u64) {
    let (r, doc, ends) = run;
    let what = format!("{}\n{}\n{doc}", r.text, r.stderr);
    let stream: Vec<f64> = ["streams", "events", "open_at_end", "cut", "empty"]
        .iter()
        .map(|k| num(doc, &format!("/stream/{k}")))
        .collect();
    let b = begun as f64;
    assert_eq!(stream, [b, b, b, 0.0, 0.0], "{what}");
    assert_eq!(num(doc, "/unanswered"), (4 - begun) as f64, "{what}");
    assert_eq!(num(doc, "/abandoned"), 1.0, "{what}");
    assert_eq!(num(doc, "/connections/total"), 1.0, "{what}");
    assert_eq!(r.error("total"), 0, "{what}");
    assert_eq!(ends, &["abandoned"; 4], "{what}");
    let findings = doc["findings"].as_array().expect("findings");
    let unanswered: Vec<&str> = findings
        .iter()
        .filter(|f| f["finding"] == "unanswered")
        .filter_map(|f| f["text"].as_str())
        .collect();
    if begun == 4 {
        assert!(unanswered.is_empty(), "{what}");
        assert!(!r.stderr.contains("unanswered"), "{what}");
    } else {
        let n = 4 - begun;
        let said = format!(
            "{n} calls were unanswered when the run ended ({n} sent and waiting on \
             connections still open)"
        );
        assert!(
            unanswered.len() == 1 && unanswered[0].starts_with(&said),
            "{what}"
        );
    }
}

#[test]
fn h2_streams_open_at_the_end_are_neither_empty_nor_unanswered() {
    let s = h2(long_streams());
    let run = four_open_at_the_end(s.port(), &["--http-version", "2"]);
    check_open_at_the_end(&run, 4);
    assert_eq!(
        (s.connections(), s.requests(), s.max_in_flight()),
        (1, 4, 4)
    );
    drop(s);

    // The same over TLS (ALPN h2).
    let pki = Pki::new();
    let s = H2Server::start(h2_server::Opts {
        streamed: Some(long_streams()),
        tls: Some(h2_tls(pki.server_config(false))),
        ..h2_server::Opts::default()
    });
    let run = four_open_at_the_end(s.port(), &["--http-version", "2", "--ssl"]);
    check_open_at_the_end(&run, 4);
    assert_eq!(
        (s.connections(), s.requests(), s.max_in_flight()),
        (1, 4, 4)
    );
}

#[test]
fn h2_streams_with_no_status_at_the_end_are_exactly_the_unanswered_calls() {
    // The server never answers its 2nd and 4th requests: no HEADERS on those streams.
    let s = H2Server::start(h2_server::Opts {
        streamed: Some(long_streams()),
        silent_every: Some(2),
        ..h2_server::Opts::default()
    });
    let run = four_open_at_the_end(s.port(), &["--http-version", "2"]);
    check_open_at_the_end(&run, 2);
    assert_eq!(
        (s.connections(), s.requests(), s.max_in_flight()),
        (1, 4, 4)
    );
}

/// An HTTP/3 server streaming `long_streams`, silent on every `silent_every`-th
/// request.
fn h3_long(pki: &Pki, silent_every: Option<u64>) -> H3Server {
    H3Server::start(
        pki.server_config(false),
        h3_server::Opts {
            streamed: Some(long_streams()),
            silent_every,
            ..h3_server::Opts::default()
        },
    )
}

#[test]
fn h3_streams_open_at_the_end_are_neither_empty_nor_unanswered() {
    let pki = Pki::new();
    let s = h3_long(&pki, None);
    let run = four_open_at_the_end(s.port(), &["--http-version", "3"]);
    check_open_at_the_end(&run, 4);
    assert_eq!((s.connections(), s.requests()), (1, 4));
}

#[test]
fn h3_streams_with_no_status_at_the_end_are_exactly_the_unanswered_calls() {
    let pki = Pki::new();
    let s = h3_long(&pki, Some(2));
    let run = four_open_at_the_end(s.port(), &["--http-version", "3"]);
    check_open_at_the_end(&run, 2);
    assert_eq!((s.connections(), s.requests()), (1, 4));
}
