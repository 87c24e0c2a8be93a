//! Request-oriented workloads end to end: each test checks the report against the
//! server's own counts.

use std::time::{Duration, Instant};

use crate::support::server::{closed_port, Behavior, Server};
use crate::support::{self, run, run_ok};

/// Header block of `Behavior::Fixed(n)` replies: "HTTP/1.1 200 X\r\n" +
/// "Content-Length: n\r\n" + "\r\n".
fn fixed_header_len(n: usize) -> usize {
    16 + "Content-Length: \r\n".len() + n.to_string().len() + 2
}

#[test]
fn new_connection_per_request_matches_server_counts() {
    let s = Server::start(Behavior::Fixed(1024));
    let r = run_ok(
        s.port(),
        &["--uri", "/1k.html", "--num-conns", "50", "--rate", "500"],
    );
    assert_eq!(r.totals(), (50, 50, 50));
    assert_eq!(s.connections(), 50);
    assert_eq!(s.requests(), 50);
    assert_eq!(r.status(), [0, 50, 0, 0, 0]);
    assert_eq!(
        r.nums("Reply size [B]:"),
        vec![
            fixed_header_len(1024) as f64,
            1024.0,
            0.0,
            (fixed_header_len(1024) + 1024) as f64
        ]
    );
    let req_len = s.counts.first_request.lock().unwrap().len();
    assert_eq!(r.nums("Request size [B]:"), vec![req_len as f64]);
    assert_eq!(
        req_len,
        "GET /1k.html HTTP/1.1\r\nUser-Agent: rshperf/0.1.0\r\nHost: 127.0.0.1\r\n\r\n".len()
    );
    assert_eq!(r.error("total"), 0);
    assert_eq!(r.nums("Connection length [replies/conn]:"), vec![1.0]);
    assert!(
        r.text
            .starts_with("rshperf --client=0/1 --server=127.0.0.1 --port="),
        "{}",
        r.text
    );
    assert_eq!(support::without_short_run_note(&r.stderr), "");
}

#[test]
fn keep_alive_calls_reuse_the_connection() {
    let s = Server::start(Behavior::Fixed(100));
    let r = run_ok(
        s.port(),
        &["--num-conns", "10", "--num-calls", "5", "--rate", "100"],
    );
    assert_eq!(r.totals(), (10, 50, 50));
    assert_eq!(s.connections(), 10);
    assert_eq!(s.requests(), 50);
    assert_eq!(r.nums("Connection length [replies/conn]:"), vec![5.0]);
}

#[test]
fn pipelined_bursts_with_a_short_last_burst_complete() {
    let s = Server::start(Behavior::Fixed(10));
    let r = run_ok(
        s.port(),
        &[
            "--num-conns",
            "4",
            "--num-calls",
            "7",
            "--burst-length",
            "3",
            "--rate",
            "100",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (4, 28, 28));
    assert_eq!(s.requests(), 28);
    assert_eq!(r.error("total"), 0);
}

#[test]
fn refused_port_counts_connrefused_not_connects() {
    let port = closed_port();
    let r = run_ok(port, &["--num-conns", "5", "--rate", "50"]);
    assert_eq!(r.totals(), (5, 0, 0));
    assert_eq!(r.error("connrefused"), 5);
    assert_eq!(r.error("total"), 5);
    assert_eq!(r.nums("Connection time [ms]: connect"), vec![0.0]);
    assert_eq!(r.nums("Connection length [replies/conn]:"), vec![0.0]);
}

#[test]
fn status_classes_are_counted() {
    let s = Server::start(Behavior::Status(404, 5));
    let r = run_ok(
        s.port(),
        &["--num-conns", "3", "--num-calls", "2", "--rate", "100"],
    );
    assert_eq!(r.status(), [0, 0, 0, 6, 0]);
    assert_eq!(s.requests(), 6);
}

#[test]
fn chunked_reply_with_trailer_sizes_as_httperf() {
    let chunks = vec![b"hello".to_vec(), b", world".to_vec()];
    let s = Server::start(Behavior::Chunked(chunks, vec!["X-Trailer: yes".into()]));
    let r = run_ok(
        s.port(),
        &["--num-conns", "2", "--num-calls", "3", "--rate", "100"],
    );
    assert_eq!(r.totals(), (2, 6, 6));
    // header: "HTTP/1.1 200 OK\r\n" 17 + "Transfer-Encoding: chunked\r\n" 28 + 2.
    assert_eq!(r.nums("Reply size [B]:"), vec![47.0, 12.0, 18.0, 77.0]);
    assert_eq!(r.error("total"), 0);
}

#[test]
fn close_delimited_reply_ends_at_eof() {
    let s = Server::start(Behavior::CloseDelimited(b"close-delimited body\n".to_vec()));
    let r = run_ok(s.port(), &["--num-conns", "3", "--rate", "100"]);
    assert_eq!(r.totals(), (3, 3, 3));
    assert_eq!(r.nums("Reply size [B]:"), vec![45.0, 21.0, 0.0, 66.0]);
    assert_eq!(r.error("total"), 0);
}

#[test]
fn connection_close_is_honoured_without_error() {
    let s = Server::start(Behavior::ConnectionClose(10));
    let r = run_ok(
        s.port(),
        &["--num-conns", "4", "--num-calls", "5", "--rate", "100"],
    );
    assert_eq!(r.totals(), (4, 4, 4));
    assert_eq!(s.requests(), 4);
    assert_eq!(r.error("total"), 0);
}

#[test]
fn interim_100_continue_is_skipped() {
    let s = Server::start(Behavior::Continue(7));
    let r = run_ok(
        s.port(),
        &["--num-conns", "2", "--num-calls", "2", "--rate", "100"],
    );
    assert_eq!(r.status(), [0, 4, 0, 0, 0]);
    // 100 block (25) + fixed 200 block.
    let header = 25 + fixed_header_len(7);
    assert_eq!(r.nums("Reply size [B]:")[..2], [header as f64, 7.0]);
    assert_eq!(r.error("total"), 0);
}

#[test]
fn head_replies_have_no_body() {
    let s = Server::start(Behavior::Fixed(1024));
    let r = run_ok(
        s.port(),
        &[
            "--method",
            "HEAD",
            "--num-conns",
            "3",
            "--num-calls",
            "2",
            "--rate",
            "100",
        ],
    );
    assert_eq!(r.totals(), (3, 6, 6));
    assert_eq!(r.nums("Reply size [B]:")[1], 0.0);
    assert_eq!(
        s.counts
            .methods
            .lock()
            .unwrap()
            .iter()
            .filter(|m| *m == "HEAD")
            .count(),
        6
    );
    assert_eq!(r.error("total"), 0);
}

#[test]
fn reset_before_reply_is_connreset() {
    let s = Server::start(Behavior::Reset);
    let r = run_ok(
        s.port(),
        &["--num-conns", "3", "--rate", "100", "--timeout", "5"],
    );
    assert_eq!(r.totals().2, 0);
    assert_eq!(r.error("connreset"), 3);
}

#[test]
fn eof_inside_a_length_delimited_body_is_connreset() {
    let s = Server::start(Behavior::ShortBody(100, 10));
    let r = run_ok(
        s.port(),
        &["--num-conns", "2", "--rate", "100", "--timeout", "5"],
    );
    assert_eq!(r.totals().2, 0);
    assert_eq!(r.error("connreset"), 2);
}

#[test]
fn surplus_bytes_fail_the_connection_as_other() {
    let s = Server::start(Behavior::Raw(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA".to_vec(),
    ));
    let r = run_ok(
        s.port(),
        &["--num-conns", "1", "--num-calls", "2", "--timeout", "5"],
    );
    assert_eq!(r.totals().2, 1);
    assert_eq!(r.error("other"), 1);
}

#[test]
fn non_http_reply_is_other() {
    let s = Server::start(Behavior::Raw(b"\x00\x01garbage".to_vec()));
    let r = run_ok(
        s.port(),
        &["--num-conns", "2", "--rate", "100", "--timeout", "5"],
    );
    assert_eq!(r.totals().2, 0);
    assert_eq!(r.error("other"), 2);
}

#[test]
fn timeout_fires_on_a_silent_server() {
    let s = Server::start(Behavior::Hang);
    let start = Instant::now();
    let r = run_ok(
        s.port(),
        &["--num-conns", "3", "--rate", "100", "--timeout", "0.3"],
    );
    let took = start.elapsed();
    assert_eq!(r.error("client-timo"), 3);
    // When the watchdog fires is tested on simulated time (`engine::event_loop::
    // timers`); here only that it did not fire early, and a hang guard.
    assert!(took < support::HANG_GUARD, "took {took:?}");
    assert!(took >= Duration::from_millis(300), "took {took:?}");
}

#[test]
fn think_timeout_extends_the_reply_deadline_only() {
    // Headers at once, body after 1.2 s: --timeout 0.6 alone times out; with
    // --think-timeout 1 the reply completes (docs/compatibility.md §3.2).
    let s = Server::start(Behavior::SlowBody(Duration::from_millis(1200), 10));
    let r = run_ok(s.port(), &["--num-conns", "1", "--timeout", "0.6"]);
    assert_eq!(r.error("client-timo"), 1);
    let r = run_ok(
        s.port(),
        &[
            "--num-conns",
            "1",
            "--timeout",
            "0.6",
            "--think-timeout",
            "1",
        ],
    );
    assert_eq!(r.error("client-timo"), 0);
    assert_eq!(r.totals().2, 1);
}

#[test]
fn sequential_rate_zero_keeps_one_connection_at_a_time() {
    let s = Server::start(Behavior::Fixed(10));
    let r = run_ok(s.port(), &["--num-conns", "20", "--rate", "0"]);
    assert_eq!(r.totals(), (20, 20, 20));
    assert!(r.text.contains("<=1 concurrent connections"), "{}", r.text);
    assert_eq!(r.nums("Maximum connect burst length:"), vec![1.0]);
}

#[test]
fn requests_are_well_formed() {
    let s = Server::start(Behavior::Fixed(1));
    run_ok(
        s.port(),
        &[
            "--uri",
            "/x",
            "--http-version",
            "1.0",
            "--add-header",
            "X-Test: a\\\\b\\101\\n",
            "--server-name",
            "example.test",
        ],
    );
    let req = s.counts.first_request.lock().unwrap().clone();
    assert_eq!(
        String::from_utf8(req).unwrap(),
        "GET /x HTTP/1.0\r\nUser-Agent: rshperf/0.1.0\r\nConnection: keep-alive\r\nHost: example.test\r\nX-Test: a\\bA\r\n\r\n"
    );
    let s = Server::start(Behavior::Fixed(1));
    run_ok(
        s.port(),
        &["--uri", "/y", "--no-host-hdr", "--add-header", "X-A: 1\\n"],
    );
    let req = s.counts.first_request.lock().unwrap().clone();
    assert_eq!(
        String::from_utf8(req).unwrap(),
        "GET /y HTTP/1.1\r\nUser-Agent: rshperf/0.1.0\r\nX-A: 1\r\n\r\n"
    );
}

#[test]
fn slow_replies_measure_response_time() {
    let s = Server::start(Behavior::Slow(Duration::from_millis(50), 10));
    let r = run_ok(s.port(), &["--num-conns", "3", "--rate", "20"]);
    let response = r.nums("Reply time [ms]:")[0];
    assert!((45.0..500.0).contains(&response), "response {response}");
    let ct = r.nums("Connection time [ms]:");
    assert!(ct[0] >= 45.0, "min lifetime {ct:?}");
}

#[test]
fn sigint_prints_the_report_of_what_completed() {
    let s = Server::start(Behavior::Fixed(10));
    let port = s.port().to_string();
    let child = support::bin()
        .args([
            "--server",
            "127.0.0.1",
            "--port",
            &port,
            "--num-conns",
            "100000",
            "--rate",
            "50",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // The engine installs its signal handler before its first connection: once the
    // server has requests, SIGINT reaches a running test.
    support::wait_until("5 requests at the server", Duration::from_secs(30), || {
        s.requests() >= 5
    });
    let ok = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(ok.success());
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let r = support::Report {
        text: text.into_owned(),
        stderr: String::new(),
    };
    let (conns, _, replies) = r.totals();
    assert!((5..100_000).contains(&conns), "{}", r.text);
    assert!(
        replies <= s.requests(),
        "{} replies but the server saw {}",
        replies,
        s.requests()
    );
    assert!(r.text.contains("Errors: fd-unavail"));
}

#[test]
fn ipv6_loopback_works() {
    let l = match std::net::TcpListener::bind("[::1]:0") {
        Ok(l) => l,
        Err(e) => return support::skip(&format!("no IPv6 loopback address ::1 ({e})")),
    };
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten().take(2) {
            std::thread::spawn(move || {
                use std::io::{Read, Write};
                let mut s = s;
                let mut b = [0u8; 1024];
                let _ = s.read(&mut b);
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            });
        }
    });
    let out = run(&[
        "--server",
        "::1",
        "--port",
        &port.to_string(),
        "--num-conns",
        "2",
        "--rate",
        "100",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let r = support::Report {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::new(),
    };
    assert_eq!(r.totals(), (2, 2, 2));
}

#[test]
fn bad_options_exit_1_with_a_message() {
    let cases: &[(&[&str], &str)] = &[
        (&["--bogus"], "rshperf: unrecognized option '--bogus'"),
        (&["--rate", "abc"], "rshperf: illegal request rate abc"),
        (
            &["--num-conns", "0"],
            "rshperf: illegal number of connections 0",
        ),
        (&["--port", "70000"], "rshperf: illegal port number 70000"),
        (&["--ser", "x"], "rshperf: option '--ser' is ambiguous"),
        (
            &["--hog=1"],
            "rshperf: option '--hog' doesn't allow an argument",
        ),
    ];
    for (args, want) in cases {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with(want),
            "{args:?}: got {err:?}, want {want:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
    }
}

#[test]
fn help_and_version_exit_0() {
    let out = run(&["-V"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("rshperf-0.1.0"));
    let out = run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Usage: rshperf"));
}

#[test]
fn abbreviated_options_work() {
    let s = Server::start(Behavior::Fixed(1));
    let port = s.port().to_string();
    let out = run(&[
        "--server",
        "127.0.0.1",
        "--po",
        &port,
        "--num-con",
        "3",
        "--ra",
        "100",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(s.requests(), 3);
}

#[test]
fn servers_file_spreads_connections_with_a_block_per_server() {
    let a = Server::start(Behavior::Fixed(10));
    let b = Server::start(Behavior::Status(404, 3));
    let dir = std::env::temp_dir().join(format!("rshperf-servers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, sep) in [("lines", "\n"), ("nul", "\0")] {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!("127.0.0.1:{}{sep}127.0.0.1:{}{sep}", a.port(), b.port()),
        )
        .unwrap();
        let out = run(&[
            "--servers",
            path.to_str().unwrap(),
            "--num-conns",
            "20",
            "--rate",
            "200",
        ]);
        assert_eq!(out.status.code(), Some(0));
        let r = support::Report {
            text: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::new(),
        };
        assert_eq!(r.totals().2, 20, "{}", r.text);
        let la = format!(
            "Server 127.0.0.1:{}: connections 10 requests 10 replies 10",
            a.port()
        );
        let lb = format!(
            "Server 127.0.0.1:{}: status 1xx=0 2xx=0 3xx=0 4xx=10 5xx=0 errors 0",
            b.port()
        );
        assert!(r.text.contains(&la), "{}", r.text);
        assert!(r.text.contains(&lb), "{}", r.text);
    }
    assert_eq!((a.requests(), b.requests()), (20, 20));
    let host = String::from_utf8(a.counts.first_request.lock().unwrap().clone()).unwrap();
    assert!(host.contains("\r\nHost: 127.0.0.1\r\n"), "{host}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn myaddr_uses_the_source_addresses_round_robin() {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for (n, s) in l.incoming().flatten().enumerate() {
            s2.lock()
                .unwrap()
                .push(s.peer_addr().unwrap().ip().to_string());
            std::thread::spawn(move || {
                let mut s = s;
                let mut b = [0u8; 1024];
                let _ = s.read(&mut b);
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx");
            });
            if n == 7 {
                break;
            }
        }
    });
    for extra in [&[][..], &["--hog"][..]] {
        seen.lock().unwrap().clear();
        let mut args = vec![
            "--myaddr",
            "127.0.0.2-127.0.0.3",
            "--myaddr",
            "127.0.0.4",
            "--num-conns",
            "3",
            "--rate",
            "0",
        ];
        args.extend_from_slice(extra);
        let r = run_ok(port, &args);
        assert_eq!(r.totals(), (3, 3, 3), "{}", r.text);
        let mut got = seen.lock().unwrap().clone();
        got.sort();
        assert_eq!(got, ["127.0.0.2", "127.0.0.3", "127.0.0.4"], "{extra:?}");
    }
}

/// Runs rshperf with `args` against `rshperf serve` on 127.0.0.1:8080 in a network
/// namespace of our own whose ephemeral port range is `ports` ("40000 40009"); its
/// report, or None when the test was skipped. Needs root (to make the namespace),
/// util-linux `unshare` and iproute2 `ip`.
fn in_port_namespace(ports: &str, args: &str) -> Option<support::Report> {
    let bin = env!("CARGO_BIN_EXE_rshperf");
    for (tool, package) in [("unshare", "util-linux"), ("ip", "iproute2")] {
        if !support::installed(tool) {
            support::skip(&format!("`{tool}` not installed (package {package})"));
            return None;
        }
    }
    match std::process::Command::new("unshare")
        .args(["-n", "true"])
        .output()
    {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            support::skip(&format!(
                "cannot make a network namespace (root needed): {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
            return None;
        }
        Err(e) => {
            support::skip(&format!("cannot run unshare: {e}"));
            return None;
        }
    }
    // In the namespace: loopback up, the port range, `serve` on 8080 (waiting for
    // its "listening" line), then the run.
    let script = format!(
        "set -e; ip link set lo up; \
         echo '{ports}' > /proc/sys/net/ipv4/ip_local_port_range; \
         log=$(mktemp); {bin} serve --port 8080 2>\"$log\" & \
         n=0; until grep -q listening \"$log\"; do \
           n=$((n+1)); [ $n -lt 2000 ] || exit 9; sleep 0.01; done; \
         set +e; \
         {bin} --server 127.0.0.1 --port 8080 {args}; \
         rc=$?; kill $!; rm -f \"$log\"; exit $rc"
    );
    let out = std::process::Command::new("timeout")
        .args(["20", "unshare", "-n", "sh", "-c", &script])
        .env(support::MACHINE_VAR, support::QUIET_MACHINE)
        .output()
        .expect("run timeout unshare sh");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(support::Report {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::new(),
    })
}

/// Local ports run out (ten ephemeral ports): the rest of the connections count as
/// `addrunavail` and the run ends at once. With `--overload=queue` (httperf's
/// policy), from one source address: the default spreads loopback connections over
/// several source addresses once ports are under pressure (the next test).
#[test]
fn exhausted_local_ports_are_addrunavail() {
    let start = Instant::now();
    let Some(r) = in_port_namespace(
        "40000 40009",
        "--num-conns 30 --rate 1000 --timeout 2 --overload=queue",
    ) else {
        return;
    };
    assert_eq!(r.totals(), (30, 10, 10), "{}", r.text);
    assert_eq!(r.error("addrunavail"), 20);
    assert_eq!(r.error("total"), 20);
    assert!(start.elapsed() < Duration::from_secs(5));
}

/// Ports under pressure (40 ephemeral ports, 60 connections within a second): the
/// first 20 (half the range) go out from the kernel's address, the rest are spread
/// over 16 loopback source addresses, each with its own ports: no errors.
#[test]
fn ports_under_pressure_spread_loopback_connections() {
    let Some(r) = in_port_namespace("40000 40039", "--num-conns 60 --rate 1000 --timeout 2 -v")
    else {
        return;
    };
    assert_eq!(r.totals(), (60, 60, 60), "{}", r.text);
    assert_eq!(r.error("total"), 0);
    assert!(r.text.contains(" source-addrs 16\n"), "{}", r.text);
    // The same with httperf's policy runs out of ports.
    let Some(q) = in_port_namespace(
        "40000 40039",
        "--num-conns 60 --rate 1000 --timeout 2 --overload=queue",
    ) else {
        return;
    };
    assert_eq!(q.error("addrunavail"), 20, "{}", q.text);
}
