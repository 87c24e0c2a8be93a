//! `--timeout` against a server that never answers the connect: every connection is
//! `client-timo` after `--timeout` (not `socket-timo` after the kernel's two minutes
//! of SYN retries), the run ends, and the diagnosis says nobody answers and names no
//! other cause. Beside `diagnose.rs`, which builds the other situations.
//!
//! "Nobody answers" without root: a listening socket with backlog 0 that never
//! accepts holds one connection in its accept queue; once that queue is full Linux
//! drops further SYNs (`tcp_conn_request`: `sk_acceptq_is_full`), so connects stay in
//! SYN-SENT. The test fills the queue and proves the drop with a probe connect that
//! times out before it runs rshperf. Also here: a TLS port that accepts and never
//! answers the handshake, and a UDP port that never answers QUIC.

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::process::Command;
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};

use crate::support::hostile_server::{HostileServer, Step};
use crate::support::{self, Report, HANG_GUARD};

/// `--timeout` of these runs, seconds.
const TIMEOUT_S: u64 = 1;
/// Connections per run.
const CONNS: u64 = 4;
/// Slack on top of `--timeout` before a run counts as not bounded by it (generous: a
/// loaded 2-core machine; the bug it guards against takes over two minutes).
const SLACK: Duration = Duration::from_secs(8);

/// A loopback TCP port whose SYNs are dropped: the listener (backlog 0, never
/// accepting) and the connection that fills its accept queue, kept open.
struct Unanswered {
    _listener: Socket,
    _filler: Vec<TcpStream>,
    addr: SocketAddr,
}

impl Unanswered {
    /// Fills the accept queue, then proves that a further connect goes unanswered
    /// (a probe that times out after 1 s); panics if the kernel answers anyway.
    fn start() -> Unanswered {
        let listener = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
        let any: SocketAddr = "127.0.0.1:0".parse().expect("address");
        listener.bind(&any.into()).expect("bind");
        listener.listen(0).expect("listen");
        let addr = listener
            .local_addr()
            .expect("local address")
            .as_socket()
            .expect("an IP address");
        let mut filler = Vec::new();
        for _ in 0..8 {
            match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                // Still room in the queue: this connection helps fill it.
                Ok(s) => filler.push(s),
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    return Unanswered {
                        _listener: listener,
                        _filler: filler,
                        addr,
                    }
                }
                Err(e) => panic!("probe connect to {addr}: {e}"),
            }
        }
        panic!("the kernel kept answering SYNs on a full accept queue ({addr})");
    }
}

/// Runs rshperf against `port` with `extra` (`CONNS` connections at 50/s, `--timeout
/// 1`), under `timeout 300` so that a regression fails instead of hanging; the
/// report, stderr and the wall time.
fn run_against(port: u16, extra: &[&str]) -> (Report, Duration) {
    let (port, conns, timeout) = (port.to_string(), CONNS.to_string(), TIMEOUT_S.to_string());
    let start = Instant::now();
    let out = Command::new("timeout")
        .arg("300")
        .arg(env!("CARGO_BIN_EXE_rshperf"))
        .args(["--server", "127.0.0.1", "--port", &port])
        .args(["--num-conns", &conns, "--rate", "50", "--timeout", &timeout])
        .args(extra)
        .env(support::MACHINE_VAR, support::QUIET_MACHINE)
        .output()
        .expect("run timeout rshperf");
    let took = start.elapsed();
    let report = Report {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", report.stderr);
    (report, took)
}

/// Asserts the run of `what` timed every connection out within `--timeout` (plus
/// slack), counted as `client-timo` only, and that stderr is exactly the warning
/// that nobody answers at `port`.
fn assert_nobody_answers(what: &str, port: u16, report: &Report, took: Duration) {
    let err = &report.stderr;
    assert!(
        took < Duration::from_secs(TIMEOUT_S) + SLACK,
        "{what}: took {took:?}, --timeout {TIMEOUT_S}: {err}"
    );
    assert_eq!(report.totals(), (CONNS, 0, 0), "{what}: {}", report.text);
    assert_eq!(
        report.error("client-timo"),
        CONNS,
        "{what}: {}",
        report.text
    );
    assert_eq!(report.error("total"), CONNS, "{what}: {}", report.text);
    assert_eq!(
        err.as_str(),
        format!(
            "rshperf: warning: all {CONNS} connections timed out (client-timo) — nobody \
             answers at 127.0.0.1:{port}: the connects timed out unanswered (is it up, and \
             does a firewall drop the SYNs?)\n"
        ),
        "{what}"
    );
}

#[test]
fn connects_nobody_answers_time_out_at_the_timeout_over_tcp_tls_and_h2() {
    let u = Unanswered::start();
    let port = u.addr.port();
    for (what, extra) in [
        ("HTTP/1.1", &[][..]),
        ("TLS", &["--ssl"][..]),
        ("h2c", &["--http-version", "2"][..]),
        ("h2", &["--ssl", "--http-version", "2"][..]),
    ] {
        let (report, took) = run_against(port, extra);
        assert_nobody_answers(what, port, &report, took);
    }
}

#[test]
fn a_tls_handshake_nobody_answers_times_out_at_the_timeout() {
    // The TCP connect completes; the server reads the ClientHello and says nothing.
    let s = HostileServer::start(vec![Step::Hold]);
    let (report, took) = run_against(s.port(), &["--ssl"]);
    assert_nobody_answers("TLS handshake", s.port(), &report, took);
    support::wait_until("the server to count the connections", HANG_GUARD, || {
        s.connections() == CONNS
    });
}

#[test]
fn a_quic_handshake_nobody_answers_times_out_at_the_timeout() {
    // A bound UDP port that never reads: no ICMP unreachable, no answer.
    let silent = UdpSocket::bind("127.0.0.1:0").expect("bind udp");
    let port = silent.local_addr().expect("local address").port();
    let (report, took) = run_against(port, &["--ssl", "--http-version", "3"]);
    assert_nobody_answers("HTTP/3", port, &report, took);
}
