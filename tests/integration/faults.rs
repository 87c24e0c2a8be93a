//! The fault-injection suite: rshperf through a fault-injecting proxy
//! (`support::fault_proxy`) to a server that counts what reached it, for every fault
//! (latency, bandwidth, reset mid-body, stall, 1-byte slices, clean close at half
//! the body, never read, reply before the body is read) and every workload shape
//! (request-oriented, keep-alive with pipelining, sessions, `--threads 2`, HTTP/2,
//! TLS), plus a server killed and restarted mid-run.
//!
//! Every report (read from `--json -`) must satisfy the accounting identities
//! exactly: errors total = the sum of the counters; connections = completed + errors;
//! requests = replies + client-timo + socket-timo + connreset + other; the status
//! classes sum to the replies. And what the proxy did must be what rshperf counted
//! (N connections reset → connreset N). A faulted connection fails on its first
//! request, before a second head can be written (the body is larger than every
//! buffer between the client and the cut), so each failure is exactly one request.
//! Loads are small and bounded; nothing waits on a sleep.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::support::fault_proxy::{Fault, FaultProxy, UpServer};
use crate::support::h2_server::{H2Server, Opts};
use crate::support::tls_server::{Pki, TlsServer};
use crate::support::{self, run};

/// Connections per run, and every how many the proxy faults: 3 of 6.
const CONNS: u64 = 6;
const EVERY: u64 = 2;
const FAULTED: u64 = CONNS.div_ceil(EVERY);
/// Request body of the POST cases: far larger than the client's send buffer (the
/// httperf default, 4 KB) plus the proxy's receive buffer, so a cut at half of it
/// comes before the next request's head could be written.
const BODY: usize = 512 * 1024;
/// Where a cut falls: in the middle of the first body.
const MID_BODY: usize = BODY / 2;

/// A body file of `BODY` bytes, written once.
fn body_file() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = std::env::temp_dir().join(format!("rshperf-faults-{}.bin", std::process::id()));
        std::fs::write(&path, vec![b'b'; BODY]).expect("write the body file");
        path.to_string_lossy().into_owned()
    })
}

/// Runs rshperf against 127.0.0.1:`port` with `args` and `--json -`; returns the
/// document after checking the identities.
fn run_json(port: u16, args: &[&str]) -> Value {
    let port = port.to_string();
    let mut all = vec!["--server", "127.0.0.1", "--port", &port, "--json", "-"];
    all.extend_from_slice(args);
    let out = run(&all);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "rshperf {all:?}\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&text).expect("a JSON report");
    identities(&v);
    v
}

fn n(v: &Value, path: &[&str]) -> u64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_u64()
        .unwrap_or_else(|| panic!("no number at {path:?} in {v}"))
}

/// The accounting identities, exactly.
fn identities(v: &Value) {
    let e = |k: &str| n(v, &["errors", k]);
    let kinds = [
        "client_timo",
        "socket_timo",
        "connrefused",
        "connreset",
        "fd_unavail",
        "addrunavail",
        "ftab_full",
        "other",
    ];
    let sum: u64 = kinds.iter().map(|k| e(k)).sum();
    assert_eq!(e("total"), sum, "errors total = sum of counters\n{v}");
    let abandoned = v["abandoned"].as_u64().unwrap_or(0);
    assert_eq!(
        n(v, &["connections", "total"]),
        n(v, &["connections", "successful"]) + e("total") + abandoned,
        "connections = completed + errors (+ abandoned)\n{v}"
    );
    let replies = n(v, &["replies", "total"]);
    assert_eq!(
        n(v, &["requests", "total"]),
        replies + e("client_timo") + e("socket_timo") + e("connreset") + e("other"),
        "requests = replies + client-timo + socket-timo + connreset + other\n{v}"
    );
    let classes: u64 = ["1xx", "2xx", "3xx", "4xx", "5xx"]
        .iter()
        .map(|k| n(v, &["status", k]))
        .sum();
    assert_eq!(classes, replies, "status classes sum to replies\n{v}");
}

/// (replies, client-timo, connreset, errors total) of a report.
fn outcome(v: &Value) -> (u64, u64, u64, u64) {
    (
        n(v, &["replies", "total"]),
        n(v, &["errors", "client_timo"]),
        n(v, &["errors", "connreset"]),
        n(v, &["errors", "total"]),
    )
}

/// The request-oriented load: `CONNS` connections of `calls` calls at 100/s.
fn load(calls: &'static str, extra: &[&'static str]) -> Vec<&'static str> {
    let mut a = vec![
        "--num-conns",
        "6",
        "--num-calls",
        calls,
        "--rate",
        "100",
        "--timeout",
        "1",
    ];
    a.extend_from_slice(extra);
    a
}

/// POSTs of the body file, through httperf's 4096-byte send buffer (a `--body-file`
/// run otherwise leaves it to the kernel): like the proxy's small receive buffers, it
/// keeps the client from being far ahead of what the proxy has read when it cuts, so
/// a cut lands in the first request's body.
fn post() -> Vec<&'static str> {
    vec![
        "--method",
        "POST",
        "--body-file",
        body_file(),
        "--send-buffer",
        "4096",
    ]
}

/// A proxy with `fault` on every `EVERY`-th connection to a counting server.
fn setup(fault: Fault, early: bool) -> (UpServer, FaultProxy) {
    let up = UpServer::start(early);
    let proxy = FaultProxy::start(up.addr(), fault, EVERY);
    (up, proxy)
}

/// A fault that only slows: every call is answered, the server saw each once.
fn harmless(fault: Fault, args: &[&'static str], calls: u64) {
    let (up, proxy) = setup(fault, false);
    let v = run_json(proxy.port(), args);
    let want = CONNS * calls;
    assert_eq!(outcome(&v), (want, 0, 0, 0), "{v}");
    assert_eq!(n(&v, &["status", "2xx"]), want);
    assert_eq!(proxy.faulted(), FAULTED);
    assert_eq!(up.get(|c| &c.requests), want);
}

/// A fault that cuts connections mid-body: connreset = the proxy's cuts.
fn cut(fault: Fault, args: &[&'static str], calls: u64) {
    let (up, proxy) = setup(fault, false);
    let v = run_json(proxy.port(), args);
    assert_eq!(proxy.cut(), FAULTED);
    let want = (CONNS - FAULTED) * calls;
    assert_eq!(outcome(&v), (want, 0, FAULTED, FAULTED), "{v}");
    assert_eq!(up.get(|c| &c.replies), want);
}

/// A fault that leaves the client waiting: client-timo = the faulted connections.
fn timeout(fault: Fault, args: &[&'static str], calls: u64) {
    let (_up, proxy) = setup(fault, false);
    let v = run_json(proxy.port(), args);
    assert_eq!(proxy.faulted(), FAULTED);
    let want = (CONNS - FAULTED) * calls;
    assert_eq!(outcome(&v), (want, FAULTED, 0, FAULTED), "{v}");
}

// ---- the request-oriented workload ----

#[test]
fn latency_slows_but_loses_nothing() {
    harmless(
        Fault::Latency(Duration::from_millis(50)),
        &load("2", &[]),
        2,
    );
}

#[test]
fn a_bandwidth_limit_slows_but_loses_nothing() {
    harmless(Fault::Bandwidth(20_000), &load("2", &[]), 2);
}

#[test]
fn one_byte_slices_lose_nothing() {
    harmless(Fault::Slices, &load("2", &[]), 2);
}

#[test]
fn a_reset_mid_body_is_one_connreset_per_reset() {
    cut(Fault::ResetAt(MID_BODY), &load("2", &post()), 2);
}

#[test]
fn a_clean_close_at_half_the_body_is_one_connreset_per_close() {
    cut(Fault::CloseAt(MID_BODY), &load("2", &post()), 2);
}

#[test]
fn a_stalled_reply_is_one_client_timeout_per_stall() {
    timeout(Fault::StallAfter(0), &load("2", &[]), 2);
}

#[test]
fn a_peer_that_never_reads_is_one_client_timeout_per_connection() {
    timeout(Fault::NeverRead, &load("2", &post()), 2);
}

#[test]
fn a_reply_before_the_body_is_read_keeps_the_connection_in_step() {
    let (up, proxy) = setup(Fault::Latency(Duration::ZERO), true);
    let v = run_json(proxy.port(), &load("3", &post()));
    assert_eq!(outcome(&v), (18, 0, 0, 0), "{v}");
    assert_eq!(n(&v, &["status", "2xx"]), 18);
    assert_eq!(n(&v, &["requests", "total"]), 18);
    // The server read every request head as a head, never one inside a body: each
    // body before the next head was finished. (The last body of a connection may be
    // cut short when the workload closes it after its last reply.)
    assert_eq!(up.get(|c| &c.heads), 18);
    assert!(up.get(|c| &c.requests) >= 12);
}

// ---- keep-alive with pipelining ----

fn piped(extra: &[&'static str]) -> Vec<&'static str> {
    load("4", &[&["--burst-length", "2"], extra].concat())
}

#[test]
fn pipelined_calls_in_one_byte_slices_lose_nothing() {
    harmless(Fault::Slices, &piped(&[]), 4);
}

#[test]
fn pipelined_calls_reset_mid_body_count_one_connreset_each() {
    cut(Fault::ResetAt(MID_BODY), &piped(&post()), 4);
}

#[test]
fn pipelined_calls_answered_before_their_bodies_stay_in_step() {
    let (up, proxy) = setup(Fault::Latency(Duration::ZERO), true);
    let v = run_json(proxy.port(), &piped(&post()));
    assert_eq!(outcome(&v), (24, 0, 0, 0), "{v}");
    assert_eq!(up.get(|c| &c.heads), 24);
    assert!(up.get(|c| &c.requests) >= 18);
}

// ---- sessions ----

fn sessions(extra: &[&'static str]) -> Vec<&'static str> {
    let mut a = vec!["--wsess=6,2,0", "--rate", "100", "--timeout", "1"];
    a.extend_from_slice(extra);
    a
}

#[test]
fn sessions_through_latency_lose_nothing() {
    let (up, proxy) = setup(Fault::Latency(Duration::from_millis(20)), false);
    let v = run_json(proxy.port(), &sessions(&[]));
    assert_eq!(outcome(&v), (12, 0, 0, 0), "{v}");
    assert_eq!(n(&v, &["sessions", "completed"]), 6, "{v}");
    assert_eq!(up.get(|c| &c.requests), 12);
}

#[test]
fn sessions_reset_mid_body_fail_one_each() {
    let (_up, proxy) = setup(Fault::ResetAt(MID_BODY), false);
    let v = run_json(proxy.port(), &sessions(&post()));
    assert_eq!(proxy.cut(), FAULTED);
    assert_eq!(outcome(&v), (6, 0, FAULTED, FAULTED), "{v}");
    assert_eq!(n(&v, &["sessions", "failed"]), FAULTED, "{v}");
}

// ---- two engines ----

#[test]
fn two_threads_count_every_reset_once() {
    cut(
        Fault::ResetAt(MID_BODY),
        &load("2", &[&["--threads", "2"], &post()[..]].concat()),
        2,
    );
}

#[test]
fn two_threads_count_every_stall_once() {
    timeout(Fault::StallAfter(0), &load("1", &["--threads", "2"]), 1);
}

// ---- HTTP/2 (h2c) ----

/// What an HTTP/2 client sends first: the preface (24 bytes), its SETTINGS (three
/// settings: 27 bytes) and a connection WINDOW_UPDATE (13 bytes).
const H2_START: usize = 24 + 27 + 13;

fn h2_through(fault: Fault) -> (H2Server, FaultProxy) {
    let s = H2Server::start(Opts::default());
    let addr = SocketAddr::from(([127, 0, 0, 1], s.port()));
    let proxy = FaultProxy::start(addr, fault, EVERY);
    (s, proxy)
}

#[test]
fn http2_in_one_byte_slices_loses_nothing() {
    let (s, proxy) = h2_through(Fault::Slices);
    let v = run_json(proxy.port(), &load("2", &["--http-version", "2"]));
    assert_eq!(outcome(&v), (12, 0, 0, 0), "{v}");
    assert_eq!(s.requests(), 12);
    assert_eq!(proxy.faulted(), FAULTED);
}

#[test]
fn http2_through_latency_loses_nothing() {
    let (s, proxy) = h2_through(Fault::Latency(Duration::from_millis(30)));
    let v = run_json(proxy.port(), &load("2", &["--http-version", "2"]));
    assert_eq!(outcome(&v), (12, 0, 0, 0), "{v}");
    assert_eq!(s.requests(), 12);
}

#[test]
fn http2_stalled_replies_are_one_client_timeout_each() {
    let (_s, proxy) = h2_through(Fault::StallAfter(H2_START));
    let v = run_json(proxy.port(), &load("1", &["--http-version", "2"]));
    assert_eq!(outcome(&v), (3, FAULTED, 0, FAULTED), "{v}");
}

// ---- TLS ----

#[test]
fn tls_in_one_byte_slices_and_through_a_bandwidth_limit_loses_nothing() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let addr = SocketAddr::from(([127, 0, 0, 1], s.port()));
    for fault in [Fault::Slices, Fault::Bandwidth(200_000)] {
        let before = s.requests();
        let proxy = FaultProxy::start(addr, fault, EVERY);
        let v = run_json(proxy.port(), &load("2", &["--ssl"]));
        assert_eq!(outcome(&v), (12, 0, 0, 0), "{fault:?}: {v}");
        assert_eq!(s.requests() - before, 12, "{fault:?}");
        assert_eq!(proxy.faulted(), FAULTED);
    }
}

// ---- a server that dies and comes back ----

/// Connects refused that rshperf reports live at `addr` (its `--metrics-listen`).
fn refused_live(addr: &str) -> f64 {
    crate::metrics::scrape(addr).sum("rshperf_errors_total", &[("kind", "connrefused")])
}

/// Runs rshperf against `up` (300 connections at 100/s, `--json` on stdout, metrics
/// served); returns the child, its stdout lines and the metrics address.
fn start_against(
    up: &UpServer,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<String>,
    String,
) {
    let port = up.addr().port().to_string();
    crate::metrics::start(&[
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--num-conns",
        "300",
        "--rate",
        "100",
        "--timeout",
        "1",
        "--json",
        "-",
        "--metrics-listen",
        "127.0.0.1:0",
    ])
}

/// Waits for rshperf to end; returns its JSON document (the stdout lines).
fn finish(mut child: std::process::Child, lines: std::sync::mpsc::Receiver<String>) -> Value {
    let status = child.wait().expect("rshperf ends");
    assert_eq!(status.code(), Some(0));
    let json: String = lines
        .try_iter()
        .chain(lines.iter())
        .filter_map(|l| l.strip_prefix("out:").map(str::to_string))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&json).expect("a JSON report")
}

#[test]
fn a_server_down_at_the_start_is_refused_exactly_while_down_then_serves() {
    // Down (its port bound, not listening) until rshperf has been refused 10 times:
    // every connection before the restart is refused, none after it, so connrefused
    // is exactly the connections that never reached the server.
    let up = UpServer::start_down();
    let (child, lines, addr) = start_against(&up);
    support::wait_until("10 refused connects", support::HANG_GUARD, || {
        refused_live(&addr) >= 10.0
    });
    assert_eq!(up.get(|c| &c.connections), 0);
    up.restart();
    let v = finish(child, lines);
    identities(&v);
    let accepted = up.get(|c| &c.connections);
    let refused = n(&v, &["errors", "connrefused"]);
    assert!(refused >= 10, "{v}");
    assert_eq!(n(&v, &["connections", "total"]), 300);
    assert_eq!(
        refused,
        300 - accepted,
        "refused = the connects made while down: {v}"
    );
    // Recovery: every connection after the restart was served.
    assert_eq!(n(&v, &["errors", "total"]), refused, "{v}");
    assert_eq!(n(&v, &["replies", "total"]), accepted, "{v}");
    assert_eq!(up.get(|c| &c.replies), accepted);
}

#[test]
fn a_server_killed_and_restarted_mid_run_is_refused_while_down_then_recovers() {
    let up = UpServer::start(false);
    let (child, lines, addr) = start_against(&up);
    let conns = || up.get(|c| &c.connections);
    support::wait_until("20 connections", support::HANG_GUARD, || conns() >= 20);
    up.kill();
    // Down until rshperf has been refused 10 times (seen live), not for a set time.
    support::wait_until("10 refused connects", support::HANG_GUARD, || {
        refused_live(&addr) >= 10.0
    });
    let before = conns();
    up.restart();
    let v = finish(child, lines);
    identities(&v);
    let refused = n(&v, &["errors", "connrefused"]);
    assert!(refused >= 10, "refused while down: {v}");
    // A refused connect never reached the server; the kill's own casualties (open
    // connections, and any the kernel had queued but the server not yet accepted) are
    // resets, never refusals.
    assert!(refused <= 300 - conns(), "{v}");
    assert!(conns() > before, "recovered after the restart: {v}");
    // No reply the server did not send (the kill may destroy some it sent).
    let replies = n(&v, &["replies", "total"]);
    assert!(replies <= up.get(|c| &c.replies), "{v}");
    assert!(replies >= 20, "{v}");
    assert_eq!(n(&v, &["connections", "total"]), 300);
}
