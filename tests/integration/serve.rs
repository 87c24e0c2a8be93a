//! The built-in target: `rshperf serve` run as a process and loaded by rshperf (and by
//! httperf when installed), `rshperf demo`, and the server's protocol handling through
//! the in-process API (`rshperf::front::serve::spawn`) with raw sockets.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

use rshperf::front::serve::{spawn, ServeHandle, ServeOptions};

use crate::support::{self, numbers, run, run_ok};

/// `rshperf serve --port 0 …` as a child process.
struct ServeProc {
    child: Option<Child>,
    stderr: BufReader<ChildStderr>,
    port: u16,
}

impl ServeProc {
    fn start(args: &[&str]) -> ServeProc {
        let mut child = support::bin()
            .args(["serve", "--port", "0"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rshperf serve");
        let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
        let mut line = String::new();
        stderr.read_line(&mut line).expect("read stderr");
        let port = line
            .strip_prefix("rshperf serve: listening on http://127.0.0.1:")
            .and_then(|r| r.strip_suffix("/\n"))
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected first stderr line {line:?}"));
        ServeProc {
            child: Some(child),
            stderr,
            port,
        }
    }

    /// Sends SIGTERM and asserts a clean exit with nothing more on stderr.
    fn terminate(mut self) {
        let mut child = self.child.take().expect("running");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success());
        let status = child.wait().expect("wait for rshperf serve");
        let mut rest = String::new();
        self.stderr.read_to_string(&mut rest).expect("read stderr");
        assert_eq!(status.code(), Some(0), "stderr: {rest}");
        assert_eq!(rest, "");
    }
}

impl Drop for ServeProc {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Header block of the default reply: status line, Server, Content-Length: 1024,
/// Content-Type, blank line.
const DEFAULT_HEADER: f64 = 84.0;

#[test]
fn serve_answers_keep_alive_calls_and_exits_0_on_sigterm() {
    let s = ServeProc::start(&[]);
    let r = run_ok(
        s.port,
        &["--num-conns", "50", "--num-calls", "3", "--rate", "500"],
    );
    assert_eq!(r.totals(), (50, 150, 150));
    assert_eq!(r.status(), [0, 150, 0, 0, 0]);
    assert_eq!(r.error("total"), 0);
    assert_eq!(
        r.nums("Reply size [B]:"),
        vec![DEFAULT_HEADER, 1024.0, 0.0, DEFAULT_HEADER + 1024.0]
    );
    assert_eq!(r.nums("Connection length [replies/conn]:"), vec![3.0]);
    s.terminate();
}

#[test]
fn serve_chunked_bodies() {
    let s = ServeProc::start(&["--chunked", "--body-size", "100"]);
    let r = run_ok(
        s.port,
        &["--num-conns", "20", "--num-calls", "2", "--rate", "500"],
    );
    assert_eq!(r.status(), [0, 40, 0, 0, 0]);
    assert_eq!(r.error("total"), 0);
    // `Transfer-Encoding: chunked` (28 bytes) replaces `Content-Length: 1024` (22).
    assert_eq!(
        r.nums("Reply size [B]:")[..2],
        [DEFAULT_HEADER + 6.0, 100.0]
    );
    s.terminate();
}

#[test]
fn serve_close_closes_every_connection() {
    let s = ServeProc::start(&["--close"]);
    let r = run_ok(s.port, &["--num-conns", "30", "--rate", "500"]);
    assert_eq!(r.totals(), (30, 30, 30));
    assert_eq!(r.status(), [0, 30, 0, 0, 0]);
    assert_eq!(r.error("total"), 0);
    assert_eq!(r.nums("Reply size [B]:")[0], DEFAULT_HEADER + 19.0);
    s.terminate();
}

#[test]
fn serve_delay_delays_every_reply() {
    let s = ServeProc::start(&["--delay", "50"]);
    let r = run_ok(
        s.port,
        &["--num-conns", "5", "--num-calls", "2", "--rate", "100"],
    );
    assert_eq!(r.status(), [0, 10, 0, 0, 0]);
    let response = r.nums("Reply time [ms]:")[0];
    assert!((50.0..1000.0).contains(&response), "{response}");
    s.terminate();
}

#[test]
fn serve_head_http10_and_pipelined_bursts() {
    let s = ServeProc::start(&[]);
    let head = run_ok(
        s.port,
        &["--method", "HEAD", "--num-conns", "20", "--num-calls", "2"],
    );
    assert_eq!(head.status(), [0, 40, 0, 0, 0]);
    assert_eq!(head.nums("Reply size [B]:")[1], 0.0);
    let piped = run_ok(
        s.port,
        &[
            "--num-conns",
            "20",
            "--num-calls",
            "8",
            "--burst-length",
            "4",
            "--rate",
            "500",
        ],
    );
    assert_eq!(piped.totals(), (20, 160, 160));
    assert_eq!(piped.status(), [0, 160, 0, 0, 0]);
    assert_eq!(piped.error("total"), 0);
    let http10 = run_ok(
        s.port,
        &[
            "--http-version",
            "1.0",
            "--num-conns",
            "20",
            "--rate",
            "500",
        ],
    );
    assert_eq!(http10.status(), [0, 20, 0, 0, 0]);
    assert_eq!(http10.error("total"), 0);
    s.terminate();
}

#[test]
fn serve_option_errors_and_help() {
    let out = run(&["serve", "--port", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "rshperf: serve: invalid value 'x' for '--port <N>': invalid digit found in string\n\n\
         For more information, try '--help'.\n"
    );
    // A body size that cannot be allocated is an option error, not an abort.
    let out = run(&["serve", "--body-size", "100000000000000000"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with(
            "rshperf: serve: invalid value '100000000000000000' for '--body-size <N>': \
             100000000000000000 is not in 0..=268435456\n"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for help in [
        &["serve", "--help"][..],
        &["serve", "-h"],
        &["help", "serve"],
    ] {
        let out = run(help);
        assert_eq!(out.status.code(), Some(0), "{help:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.starts_with("A small, fast HTTP/1.1 server"), "{text}");
        assert!(
            text.contains("\nUsage: rshperf serve [OPTIONS]\n"),
            "{text}"
        );
        assert!(text.contains("--body-size <N>"), "{text}");
        assert!(out.stderr.is_empty());
    }
}

#[test]
fn httperf_answers_from_serve() {
    if !Path::new("/usr/bin/httperf").exists() {
        return support::skip("/usr/bin/httperf not installed (package httperf)");
    }
    let s = ServeProc::start(&[]);
    let port = s.port.to_string();
    let out = Command::new("/usr/bin/httperf")
        .args(["--server", "127.0.0.1", "--port", &port])
        .args([
            "--num-conns",
            "100",
            "--num-calls",
            "5",
            "--burst-length",
            "5",
        ])
        .args(["--rate", "1000", "--timeout", "5"])
        .output()
        .expect("run httperf");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |label: &str| {
        let l = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} in\n{text}"));
        numbers(&l[label.len()..])
    };
    assert_eq!(line("Reply status:")[3], 500.0, "{text}");
    assert_eq!(line("Errors: total")[0], 0.0, "{text}");
    s.terminate();
}

#[test]
fn demo_runs_the_workload_against_the_built_in_server() {
    let out = run(&["demo", "--num-conns", "2000", "--rate", "1000"]);
    let r = support::Report {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(out.status.code(), Some(0), "{}\n{}", r.text, r.stderr);
    assert!(
        r.text
            .starts_with("rshperf --client=0/1 --server=127.0.0.1 --port="),
        "{}",
        r.text
    );
    assert_eq!(r.totals(), (2000, 2000, 2000));
    assert_eq!(r.status(), [0, 2000, 0, 0, 0]);
    assert_eq!(r.error("total"), 0);
    assert_eq!(support::without_short_run_note(&r.stderr), "");
}

#[test]
fn demo_chooses_server_and_port_itself() {
    for args in [
        &["demo", "--server", "example.com"][..],
        &["demo", "--po=80"],
        &["demo", "--servers", "f"],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "rshperf: demo: --server/--port are chosen by demo\n"
        );
    }
    let out = run(&["demo", "http://127.0.0.1:8080/"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "rshperf: demo: http://127.0.0.1:8080/ names a server, but demo loads its own; give \
         only workload options (rshperf demo --rate 100 --num-conns 500), or run rshperf \
         http://127.0.0.1:8080/ ... to load that server\n"
    );
    // Every workload runs against the built-in server (its text/plain pages embed
    // nothing, so a page view is one call).
    let out = run(&["demo", "--wsesspage", "1,2,0"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\nTotal: connections 1 requests 2 replies 2 ") && text.contains(" (1/1)\n"),
        "{text}"
    );
    let out = run(&["demo", "-h"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Usage: rshperf demo "));
}

// ---- the protocol through the in-process API ----

fn start(body_size: usize) -> ServeHandle {
    spawn(ServeOptions {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        body_size,
        ..ServeOptions::default()
    })
    .expect("spawn the server")
}

fn connect(h: &ServeHandle) -> TcpStream {
    let s = TcpStream::connect(h.addr()).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("read timeout");
    s
}

/// Sends `request` in one write and reads until the server closes.
fn exchange(h: &ServeHandle, request: &[u8]) -> String {
    let mut s = connect(h);
    s.write_all(request).expect("write");
    let mut out = Vec::new();
    s.read_to_end(&mut out)
        .expect("read until the server closes");
    String::from_utf8_lossy(&out).into_owned()
}

fn ok(body: &str, extra: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nServer: rshperf\r\nContent-Length: {}\r\n\
         Content-Type: text/plain\r\n{extra}\r\n{body}",
        body.len()
    )
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let h = start(4);
    let got = exchange(
        &h,
        b"GET / HTTP/1.1\r\nHost: a\r\n\r\n\
          HEAD /x HTTP/1.1\r\n\r\n\
          POST /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello\
          GET /last HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    let want = [
        ok("aaaa", ""),
        ok("", "").replace("Content-Length: 0", "Content-Length: 4"),
        ok("aaaa", ""),
        ok("aaaa", "Connection: close\r\n"),
    ]
    .concat();
    assert_eq!(got, want);
    h.stop().expect("stop");
}

#[test]
fn a_request_sent_byte_by_byte_is_answered() {
    let h = start(2);
    let mut s = connect(&h);
    s.set_nodelay(true).expect("nodelay");
    for b in b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n" {
        s.write_all(&[*b]).expect("write");
    }
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read");
    assert_eq!(out, ok("aa", "Connection: close\r\n"));
}

#[test]
fn http10_closes_unless_keep_alive() {
    let h = start(1);
    assert_eq!(
        exchange(&h, b"GET / HTTP/1.0\r\n\r\n"),
        ok("a", "Connection: close\r\n")
    );
    let mut s = connect(&h);
    let keep = ok("a", "Connection: keep-alive\r\n");
    for _ in 0..2 {
        s.write_all(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            .expect("write");
        let mut buf = vec![0; keep.len()];
        s.read_exact(&mut buf).expect("read a reply");
        assert_eq!(String::from_utf8_lossy(&buf), keep);
    }
}

#[test]
fn malformed_and_oversized_requests_are_refused_and_closed() {
    let h = start(1);
    let refused = |status: &str| {
        format!(
            "HTTP/1.1 {status}\r\nServer: rshperf\r\nContent-Length: 0\r\n\
             Connection: close\r\n\r\n"
        )
    };
    assert_eq!(
        exchange(
            &h,
            b"GET / HTTP/1.1\r\n\r\nBOGUS\r\n\r\nGET / HTTP/1.1\r\n\r\n"
        ),
        ok("a", "") + &refused("400 Bad Request")
    );
    assert_eq!(
        exchange(&h, b"GET / HTTP/3.0\r\n\r\n"),
        refused("505 HTTP Version Not Supported")
    );
    let mut big = b"GET / HTTP/1.1\r\nX-Long: ".to_vec();
    big.resize(70 * 1024, b'x');
    assert_eq!(
        exchange(&h, &big),
        refused("431 Request Header Fields Too Large")
    );
}

#[test]
fn what_is_not_http_is_refused_at_once_without_a_blank_line() {
    let h = start(1);
    let refused = "HTTP/1.1 400 Bad Request\r\nServer: rshperf\r\nContent-Length: 0\r\n\
                   Connection: close\r\n\r\n";
    // The start of a TLS ClientHello (record header, handshake header), an SSH banner,
    // and a request line with a control byte: none of them ever sends a blank line.
    let cases: [&[u8]; 3] = [
        &[
            0x16, 0x03, 0x01, 0x00, 0xf4, 0x01, 0x00, 0x00, 0xf0, 0x03, 0x03,
        ],
        b"SSH-2.0-OpenSSH_9.6\r\n",
        b"GET /\x01",
    ];
    for bytes in cases {
        let started = Instant::now();
        assert_eq!(exchange(&h, bytes), refused, "{bytes:?}");
        // (The read timeout of `connect` fails a server that never answers.)
        assert!(started.elapsed() < support::HANG_GUARD, "{bytes:?}");
    }
    let mut long = b"GET /".to_vec();
    long.resize(9000, b'a');
    assert!(exchange(&h, &long).starts_with("HTTP/1.1 414 URI Too Long\r\n"));
    h.stop().expect("stop");
}

#[test]
fn ssl_against_serve_ends_at_once_with_failed_handshakes() {
    let h = start(1);
    let port = h.addr().port().to_string();
    // Bounded: before serve refused the ClientHello, each side waited for the other
    // until --timeout; the watchdog below ends a run that still hangs.
    let mut child = support::bin()
        .args(["--server", "127.0.0.1", "--port", &port, "--ssl"])
        .args(["--num-conns", "3", "--rate", "10", "--timeout", "20"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rshperf");
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rshperf --ssl against rshperf serve did not end within 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    assert_eq!(out.status.code(), Some(0));
    let r = support::Report {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(r.totals(), (3, 0, 0));
    assert_eq!(r.error("other"), 3, "{}", r.text);
    assert_eq!(r.error("client-timo"), 0, "{}", r.text);
    // At once: `other`, not `client-timo`; the duration only has a hang guard.
    let duration = r.nums("Total:")[3];
    assert!(duration < support::HANG_GUARD.as_secs_f64(), "{}", r.text);
    assert!(
        r.stderr.contains("rshperf: TLS handshake failed: "),
        "{}",
        r.stderr
    );
    h.stop().expect("stop");
}

#[test]
fn stop_closes_the_listener() {
    let h = start(1);
    let addr = h.addr();
    let _idle = connect(&h);
    h.stop().expect("stop");
    assert!(TcpStream::connect(addr).is_err());
}
