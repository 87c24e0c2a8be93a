//! Hostile HTTP/2 servers: hand-written frames from the scripted
//! server of `hostile.rs`. Each case must fail the connection, count it in the right
//! error counter, and end the run within `--timeout` with a complete report and
//! bounded memory (`hostile::hostile_run`).

use rshperf::wire::http2::frame::{self, code, flag, kind, setting};
use rshperf::wire::http2::hpack;

use crate::hostile::hostile_run;
use crate::support::hostile_server::{HostileServer, Step};
use crate::support::recorder::TempFile;
use crate::support::Report;

/// `--timeout` of these runs, seconds.
const TIMEOUT: f64 = 2.0;
/// Three connections, one call each, HTTP/2.
const ARGS: &[&str] = &[
    "--http-version",
    "2",
    "--num-conns",
    "3",
    "--num-calls",
    "1",
    "--rate",
    "100",
    "--timeout",
    "2",
];

fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
    let mut b = Vec::new();
    frame::put_settings(&mut b, pairs);
    b
}

/// HEADERS for stream 1 carrying `block`, with `flags` (END_HEADERS unless asked).
fn headers(flags: u8, block: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    frame::put_head(&mut b, block.len(), kind::HEADERS, flags, 1);
    b.extend_from_slice(block);
    b
}

/// Client bytes up to its first HEADERS frame header, after the preface's first part
/// (which `Step::Request` reads): the preface's rest (6), SETTINGS (27),
/// WINDOW_UPDATE (13), the ack of our SETTINGS (9) and the HEADERS frame header (9).
const TO_HEADERS: usize = 6 + 27 + 13 + 9 + 9;

/// A server that reads the preface's first part, sends `frames`, then does `then`.
fn server(frames: Vec<u8>, then: Step) -> HostileServer {
    HostileServer::start(vec![Step::Request, Step::Send(frames), then])
}

/// A server that sends its SETTINGS, waits until the client's request (stream 1)
/// begins, then sends `frames` and does `then`.
fn answering(frames: Vec<u8>, then: Step) -> HostileServer {
    HostileServer::start(vec![
        Step::Request,
        Step::Send(settings(&[])),
        Step::Read(TO_HEADERS),
        Step::Send(frames),
        then,
    ])
}

/// Runs `ARGS` (plus `extra`) against `s`; asserts three failed connections counted
/// under `error`, and returns the report.
fn all_fail(s: &HostileServer, extra: &[&str], error: &str, at_once: bool) -> Report {
    let mut args = ARGS.to_vec();
    args.extend_from_slice(extra);
    let (r, m) = hostile_run(s, &args, TIMEOUT);
    assert_eq!(r.totals().0, 3, "{}", m.all());
    assert_eq!(r.totals().2, 0, "{}", m.all());
    assert_eq!(r.error(error), 3, "{}", m.all());
    assert_eq!(r.error("total"), 3, "{}", m.all());
    if at_once {
        // By the server's bytes, not by the watchdog (`client-timo`); that they fail
        // the connection when they come is tested on simulated time in
        // `engine::conn::h2::tests`.
        assert_eq!(r.error("client-timo"), 0, "{}", m.all());
    }
    r
}

#[test]
fn malformed_frames_fail_the_connection() {
    // A SETTINGS frame whose length is not a multiple of 6.
    let mut f = Vec::new();
    frame::put_head(&mut f, 5, kind::SETTINGS, 0, 0);
    f.extend_from_slice(&[0, 3, 0, 0, 0]);
    let r = all_fail(&server(f, Step::Hold), &["-v"], "other", true);
    assert_eq!(r.nums("HTTP/2:")[4], 3.0, "protocol errors: {}", r.text);
    // DATA on a stream that was never opened.
    let mut f = settings(&[]);
    frame::put_head(&mut f, 1, kind::DATA, flag::END_STREAM, 7);
    f.push(b'x');
    all_fail(&server(f, Step::Hold), &[], "other", true);
}

#[test]
fn a_server_that_ignores_the_preface() {
    // An HTTP/1.1 server answering the preface.
    let s = server(
        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".to_vec(),
        Step::Close,
    );
    all_fail(&s, &[], "other", true);
    // A server that says nothing: the reply timeout ends it.
    let s = HostileServer::start(vec![Step::Request, Step::Hold]);
    all_fail(&s, &[], "client-timo", false);
}

#[test]
fn endless_continuation() {
    let f = headers(0, &[0x88]);
    let mut unit = Vec::new();
    frame::put_head(&mut unit, 16_384, kind::CONTINUATION, 0, 1);
    unit.extend_from_slice(&[0x88; 16_384]);
    let s = HostileServer::start(vec![
        Step::Request,
        Step::Send(settings(&[])),
        Step::Read(TO_HEADERS),
        Step::Send(f),
        Step::Stream {
            prefix: Vec::new(),
            unit,
            cap: 16 << 20,
        },
        Step::Hold,
    ]);
    all_fail(&s, &[], "other", true);
}

#[test]
fn settings_flood() {
    let s = HostileServer::start(vec![
        Step::Request,
        Step::Stream {
            prefix: Vec::new(),
            unit: settings(&[(setting::MAX_CONCURRENT_STREAMS, 100)]),
            cap: 8 << 20,
        },
        Step::Hold,
    ]);
    all_fail(&s, &[], "other", true);
}

#[test]
fn goaway_mid_stream_then_close() {
    let mut f = headers(flag::END_HEADERS, &[0x88]);
    frame::put_head(&mut f, 3, kind::DATA, 0, 1);
    f.extend_from_slice(b"abc");
    frame::put_goaway(&mut f, 1, code::NO_ERROR);
    let r = all_fail(&answering(f, Step::Close), &["-v"], "connreset", true);
    assert_eq!(r.nums("HTTP/2:")[3], 3.0, "GOAWAYs: {}", r.text);
}

#[test]
fn huge_hpack_table_size() {
    let mut block = Vec::new();
    hpack::put_integer(&mut block, 0x20, 5, 1 << 30);
    block.push(0x88);
    let f = headers(flag::END_HEADERS | flag::END_STREAM, &block);
    let r = all_fail(&answering(f, Step::Hold), &["-v"], "other", true);
    assert_eq!(r.nums("HTTP/2:")[4], 3.0, "protocol errors: {}", r.text);
}

#[test]
fn a_flow_control_window_that_never_opens() {
    // The server never sends WINDOW_UPDATE: a body larger than the initial
    // connection window (65,535 bytes) can never be sent completely.
    let s = server(settings(&[(setting::INITIAL_WINDOW_SIZE, 0)]), Step::Hold);
    let mut line = b"/post method=POST contents=\"".to_vec();
    line.extend(std::iter::repeat_n(b'b', 70_000));
    line.extend_from_slice(b"\"\n");
    let log = TempFile::new("h2-window", &line);
    let arg = format!("3,0,{}", log.path);
    let args = [
        "--http-version",
        "2",
        "--wsesslog",
        &arg,
        "--rate",
        "100",
        "--timeout",
        "2",
    ];
    let (r, m) = hostile_run(&s, &args, TIMEOUT);
    assert_eq!(r.error("client-timo"), 3, "{}", m.all());
    assert_eq!(r.error("total"), 3, "{}", m.all());
    // Each request's HEADERS went out: three requests, each one client-timo.
    assert_eq!(r.totals(), (3, 3, 0), "{}", m.all());
}
