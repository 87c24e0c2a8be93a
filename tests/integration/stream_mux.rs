//! `--stream` over HTTP/2 (h2c) and HTTP/3 against the in-process servers built on
//! someone else's protocol stacks (`h2`; quinn and `h3`), each reply a stream of
//! events written as separate DATA frames on the server's timer: the "Stream" line
//! and the JSON `stream` member against what the servers sent, with exact counts for
//! streams that end, streams reset mid-stream (RST_STREAM, RESET_STREAM) and events
//! after `[DONE]`. Times are checked as lower bounds only (nothing is early).

use std::time::Duration;

use serde_json::Value;

use crate::stream_run::stream_line;
use crate::support::h2_server::{self, H2Server};
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

    // RESET_STREAM: QUIC may drop what the reset stream still had in flight, so
    // only the streams and their ends are exact.
    let mut cut = Streamed::sse(3, ms(1), ms(1), false);
    cut.reset = true;
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
    assert!(num(&doc, "/stream/events") <= 9.0, "{doc}");
}
