//! The fault × workload matrix: every fault of `support::fault_proxy` (latency,
//! bandwidth, 1-byte slices, reset and clean close mid-body, stall, never read, drop
//! at accept, garbage, duplicated replies) under every workload shape
//! (new-connection, keep-alive, pipelined, sessions, `--threads 2`, h2c,
//! `--call-rate`), and HTTP/3 through the lossy, reordering, duplicating UDP proxy
//! (`support::udp_proxy`). `faults.rs` has the single-fault cases with their stories;
//! this file checks the accounting of every cell the same way:
//!
//! - the identities, exactly: every connection ended once (`connections.total =
//!   successful + failed + abandoned`), every error is a connection's failure
//!   (`errors.total = failed`: no cell has an attempt without a socket or a stream
//!   reset), so `connections.total = successful + errors.total + abandoned`; the
//!   status classes sum to the replies; a `--call-rate` run's scheduled calls are
//!   completed, lost, unsent or abandoned;
//! - what the proxy did is what rshperf counted: connections = the proxy's accepted
//!   connections, failures = its faulted connections (for the faults that fail one),
//!   replies = the server's replies less those the proxy withheld or spoilt.
//!
//! Loads are small (6 connections, or a pool of 2) and bounded by `--timeout 1`.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::support::fault_proxy::{Fault, FaultProxy, UpServer};
use crate::support::h2_server::{H2Server, Opts};
use crate::support::h3_server::{self, H3Server};
use crate::support::run;
use crate::support::tls_server::Pki;
use crate::support::udp_proxy::{Schedule, UdpProxy};

/// Every how many connections the proxy faults (the 1st, 3rd, 5th).
const EVERY: u64 = 2;
/// Request body of the cut cases: far larger than every buffer between the client
/// and the proxy, so the cut comes in the first request's body.
const BODY: usize = 512 * 1024;
/// What an HTTP/2 client sends first (preface, SETTINGS, WINDOW_UPDATE): a stall
/// after it stalls the first reply.
const H2_START: usize = 24 + 27 + 13;

/// A body file of `BODY` bytes, written once.
fn body_file() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = std::env::temp_dir().join(format!("rshperf-cells-{}.bin", std::process::id()));
        std::fs::write(&path, vec![b'b'; BODY]).expect("write the body file");
        path.to_string_lossy().into_owned()
    })
}

/// What a faulted connection comes to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Effect {
    /// Slower, nothing lost.
    None,
    /// Fails (one error, in the counter named) after the replies said.
    Fails(&'static str, Before),
    /// Pipelined HTTP/1: a copy of a reply is taken for the reply of the next request
    /// in flight (nothing tells them apart), so the connection fails (one error, in
    /// the counter named) only when a copy arrives with no request outstanding, which
    /// depends on how the server's replies fall into the proxy's reads. A faulted
    /// connection that did not fail got an answer to every call.
    FailsUnlessTaken(&'static str),
}

/// The replies a faulted connection had before it failed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Before {
    /// Exactly this many.
    Exactly(u64),
    /// 0 or 1, as the proxy's reads fall (HTTP/2: HEADERS and DATA in one read).
    AtMostOne,
    /// Every reply the server sent reached the client and was counted; the failure
    /// came after them (a reply sent twice: the copy is data no request asked for).
    AllSent,
}

/// The workload shapes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    New,
    KeepAlive,
    Pipelined,
    Sessions,
    Threads,
    H2c,
    CallRate,
}

const SHAPES: [Shape; 7] = [
    Shape::New,
    Shape::KeepAlive,
    Shape::Pipelined,
    Shape::Sessions,
    Shape::Threads,
    Shape::H2c,
    Shape::CallRate,
];

impl Shape {
    /// Calls per connection (None: a `--call-rate` pool, as the schedule falls).
    fn calls(self) -> Option<u64> {
        match self {
            Shape::New | Shape::Threads => Some(1),
            Shape::KeepAlive | Shape::H2c => Some(3),
            Shape::Pipelined => Some(4),
            Shape::Sessions => Some(2),
            Shape::CallRate => Option::None,
        }
    }

    /// The options of the shape (the body for `post`).
    fn args(self, post: bool) -> Vec<&'static str> {
        let mut a: Vec<&'static str> = match self {
            Shape::New | Shape::Threads => vec!["--num-conns", "6", "--num-calls", "1"],
            Shape::KeepAlive | Shape::H2c => vec!["--num-conns", "6", "--num-calls", "3"],
            Shape::Pipelined => vec![
                "--num-conns",
                "6",
                "--num-calls",
                "4",
                "--burst-length",
                "2",
            ],
            Shape::Sessions => vec!["--wsess=6,2,0"],
            Shape::CallRate => vec!["--call-rate", "100", "--num-conns", "2", "--num-calls", "6"],
        };
        if self != Shape::CallRate {
            a.extend(["--rate", "100"]);
        }
        a.extend(["--timeout", "1"]);
        match self {
            Shape::Threads => a.extend(["--threads", "2"]),
            Shape::H2c => a.extend(["--http-version", "2"]),
            _ => {}
        }
        if post {
            a.extend([
                "--method",
                "POST",
                "--body-file",
                body_file(),
                "--send-buffer",
                "4096",
            ]);
        }
        a
    }
}

/// The faults, each with whether its requests carry the body, and its effect on a
/// faulted connection of `shape`.
fn faults(shape: Shape) -> Vec<(Fault, bool, Effect)> {
    use Before::{AllSent, AtMostOne, Exactly};
    use Effect::{Fails, None};
    let h2 = shape == Shape::H2c;
    vec![
        (Fault::Latency(Duration::from_millis(20)), false, None),
        (Fault::Bandwidth(50_000), false, None),
        (Fault::Slices, false, None),
        // HTTP/2 cuts in the first HEADERS frame (no body: the stream window is
        // smaller than half of it), HTTP/1 in the first body.
        (
            Fault::ResetAt(if h2 { H2_START + 1 } else { BODY / 2 }),
            !h2,
            Fails("connreset", Exactly(0)),
        ),
        (
            Fault::CloseAt(if h2 { H2_START + 1 } else { BODY / 2 }),
            !h2,
            Fails("connreset", Exactly(0)),
        ),
        (
            Fault::StallAfter(if h2 { H2_START } else { 0 }),
            false,
            Fails("client_timo", Exactly(0)),
        ),
        (Fault::NeverRead, false, Fails("client_timo", Exactly(0))),
        (Fault::DropAtAccept, false, Fails("connreset", Exactly(0))),
        (Fault::Garbage, false, Fails("other", Exactly(0))),
        // The copy of a reply is data no request asked for (HTTP/1: once a copy
        // was taken for the next reply, the one after it), or a frame on a stream
        // the server ended (HTTP/2: STREAM_CLOSED).
        (
            Fault::Duplicate,
            false,
            match shape {
                Shape::Pipelined => Effect::FailsUnlessTaken("other"),
                _ => Fails("other", if h2 { AtMostOne } else { AllSent }),
            },
        ),
    ]
}

fn n(v: &Value, path: &[&str]) -> u64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_u64()
        .unwrap_or_else(|| panic!("no number at {path:?} in {v}"))
}

/// Runs rshperf against 127.0.0.1:`port` with `args` and `--json -`, exit 0.
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
    serde_json::from_str(&text).expect("a JSON report")
}

/// The identities every report satisfies, exactly.
fn identities(v: &Value, cell: &str) {
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
    assert_eq!(e("total"), sum, "{cell}: errors total = the counters\n{v}");
    let total = n(v, &["connections", "total"]);
    let (ok, failed) = (
        n(v, &["connections", "successful"]),
        n(v, &["connections", "failed"]),
    );
    let abandoned = n(v, &["abandoned"]);
    assert_eq!(
        total,
        ok + failed + abandoned,
        "{cell}: every connection ended once\n{v}"
    );
    assert_eq!(n(v, &["connections", "unopened"]), 0, "{cell}\n{v}");
    assert_eq!(e("total"), failed, "{cell}: every error is a failure\n{v}");
    assert_eq!(
        total,
        ok + e("total") + abandoned,
        "{cell}: connections = successful + errors + abandoned\n{v}"
    );
    let replies = n(v, &["replies", "total"]);
    let classes: u64 = ["1xx", "2xx", "3xx", "4xx", "5xx"]
        .iter()
        .map(|k| n(v, &["status", k]))
        .sum();
    assert_eq!(classes, replies, "{cell}: status classes = replies\n{v}");
    assert!(n(v, &["requests", "total"]) >= replies, "{cell}\n{v}");
    if let Some(c) = v.get("call_rate") {
        let ended = n(c, &["completed"]) + n(c, &["lost"]) + n(c, &["unsent"]);
        assert_eq!(
            n(c, &["scheduled"]),
            ended + n(c, &["abandoned"]),
            "{cell}: every scheduled call ended once\n{v}"
        );
        assert_eq!(n(c, &["completed"]), replies, "{cell}\n{v}");
    }
}

/// One cell: `shape` through a proxy applying `fault` to every other connection.
fn cell(shape: Shape, fault: Fault, post: bool, effect: Effect) {
    let name = format!("{shape:?} × {fault:?}");
    let h2 = (shape == Shape::H2c).then(|| H2Server::start(Opts::default()));
    let up = UpServer::start(false);
    let upstream = h2
        .as_ref()
        .map_or(up.addr(), |s| SocketAddr::from(([127, 0, 0, 1], s.port())));
    let proxy = FaultProxy::start(upstream, fault, EVERY);
    let v = run_json(proxy.port(), &shape.args(post));
    identities(&v, &name);
    let accepted = proxy
        .counts
        .connections
        .load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        n(&v, &["connections", "total"]),
        accepted,
        "{name}: connections = the proxy's\n{v}"
    );
    assert_eq!(n(&v, &["abandoned"]), 0, "{name}\n{v}");
    let faulted = proxy.faulted();
    assert!(faulted >= 1, "{name}: the fault applied");
    let server_replies = match &h2 {
        Some(s) => s.requests(),
        None => up.get(|c| &c.replies),
    };
    let replies = n(&v, &["replies", "total"]);
    let errors = n(&v, &["errors", "total"]);
    // Replies: those of the connections without the fault, and of the faulted ones
    // before they failed; never one the server did not send.
    assert!(replies <= server_replies, "{name}\n{v}");
    let (kind, before) = match effect {
        Effect::None => {
            assert_eq!(errors, 0, "{name}\n{v}");
            assert_eq!(replies, server_replies, "{name}\n{v}");
            (None, Option::None)
        }
        Effect::Fails(kind, before) => (Some(kind), Some(before)),
        Effect::FailsUnlessTaken(kind) => {
            assert!(
                errors <= faulted,
                "{name}: at most one failure per fault\n{v}"
            );
            assert_eq!(n(&v, &["errors", kind]), errors, "{name}\n{v}");
            let calls = shape.calls().expect("a fixed number of calls");
            let fine = (accepted - faulted) * calls;
            let whole = fine + (faulted - errors) * calls;
            assert!(
                (whole..=fine + faulted * calls).contains(&replies),
                "{name}: every call of the connections that did not fail answered\n{v}"
            );
            return;
        }
    };
    if let Some(kind) = kind {
        assert_eq!(errors, faulted, "{name}: one failure per fault\n{v}");
        assert_eq!(n(&v, &["errors", kind]), faulted, "{name}\n{v}");
    }
    let fine = shape
        .calls()
        .map(|calls| (calls, (accepted - faulted) * calls));
    match (before, fine) {
        (Some(Before::AllSent), _) => assert_eq!(replies, server_replies, "{name}\n{v}"),
        (Some(Before::Exactly(b)), Some((_, fine))) => {
            assert_eq!(replies, fine + faulted * b, "{name}\n{v}")
        }
        (Some(Before::AtMostOne), Some((_, fine))) => {
            assert!((fine..=fine + faulted).contains(&replies), "{name}\n{v}")
        }
        // A `--call-rate` pool: calls per connection are as the schedule falls.
        (_, Option::None) => {}
        (Option::None, Some((calls, _))) => {
            assert_eq!(replies, accepted * calls, "{name}\n{v}")
        }
    }
    if matches!(
        fault,
        Fault::ResetAt(_) | Fault::CloseAt(_) | Fault::DropAtAccept
    ) {
        assert_eq!(proxy.cut(), faulted, "{name}: every cut made\n{v}");
    }
}

/// Every fault under `shape`.
fn all_faults(shape: Shape) {
    for (fault, post, effect) in faults(shape) {
        cell(shape, fault, post, effect);
    }
}

#[test]
fn every_fault_on_new_connections() {
    all_faults(SHAPES[0]);
}

#[test]
fn every_fault_on_keep_alive_connections() {
    all_faults(SHAPES[1]);
}

#[test]
fn every_fault_on_pipelined_connections() {
    all_faults(SHAPES[2]);
}

#[test]
fn every_fault_in_sessions() {
    all_faults(SHAPES[3]);
}

#[test]
fn every_fault_over_two_threads() {
    all_faults(SHAPES[4]);
}

#[test]
fn every_fault_on_h2c() {
    all_faults(SHAPES[5]);
}

#[test]
fn every_fault_under_a_call_rate() {
    all_faults(SHAPES[6]);
}

#[test]
fn http3_through_loss_reordering_and_duplication_loses_nothing() {
    let pki = Pki::new();
    let s = H3Server::start(
        pki.server_config(false),
        h3_server::Opts {
            body: 1024,
            ..h3_server::Opts::default()
        },
    );
    for seed in [1, 2] {
        let before = s.requests();
        let proxy = UdpProxy::start(
            SocketAddr::from(([127, 0, 0, 1], s.port())),
            Schedule {
                drop_every: 7,
                dup_every: 5,
                hold_every: 3,
                seed,
            },
        );
        let name = format!("h3 seed {seed}");
        let v = run_json(
            proxy.port(),
            &[
                "--http-version",
                "3",
                "--num-conns",
                "4",
                "--num-calls",
                "5",
                "--rate",
                "100",
                "--timeout",
                "5",
            ],
        );
        identities(&v, &name);
        assert_eq!(n(&v, &["replies", "total"]), 20, "{name}\n{v}");
        assert_eq!(n(&v, &["errors", "total"]), 0, "{name}\n{v}");
        assert_eq!(s.requests() - before, 20, "{name}");
        assert_eq!(
            n(&v, &["connections", "total"]),
            proxy.get(|c| &c.clients),
            "{name}: one client address per connection\n{v}"
        );
        for what in [
            proxy.get(|c| &c.dropped),
            proxy.get(|c| &c.duplicated),
            proxy.get(|c| &c.reordered),
        ] {
            assert!(what > 0, "{name}: the proxy did its work");
        }
        // Every datagram the proxy dropped was a QUIC packet one side lost; rshperf
        // counts its own (client → server) losses only, at most those dropped.
        assert!(
            n(&v, &["http3", "packets_lost"])
                <= proxy.get(|c| &c.dropped) + proxy.get(|c| &c.reordered),
            "{name}\n{v}"
        );
    }
}

#[test]
fn a_server_that_drops_every_connection_gets_two_per_call_rate_slot() {
    // Each slot's connection fails without a reply, waits its back-off, fails again
    // and is given up: 4 connections, each a connreset, not a reconnect storm.
    let up = UpServer::start(false);
    let proxy = FaultProxy::start(up.addr(), Fault::DropAtAccept, 1);
    let v = run_json(
        proxy.port(),
        &[
            "--call-rate",
            "50",
            "--num-conns",
            "2",
            "--runtime",
            "2",
            "--timeout",
            "1",
        ],
    );
    identities(&v, "storm");
    assert_eq!(n(&v, &["connections", "total"]), 4, "{v}");
    assert_eq!(proxy.cut(), 4, "{v}");
    assert_eq!(n(&v, &["errors", "connreset"]), 4, "{v}");
    assert_eq!(n(&v, &["errors", "total"]), 4, "{v}");
    assert_eq!(n(&v, &["call_rate", "given_up"]), 2, "{v}");
    assert_eq!(n(&v, &["call_rate", "reconnects"]), 2, "{v}");
    assert_eq!(up.get(|c| &c.connections), 0);
}
