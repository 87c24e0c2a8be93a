//! `--http-version 2` against an independent server, the `h2` crate's:
//! h2c with prior knowledge and h2 over TLS (ALPN), calls as streams with
//! `--burst-length` streams in flight, SETTINGS_MAX_CONCURRENT_STREAMS, RST_STREAM,
//! GOAWAY, sessions with cookies and request bodies under flow control, the
//! `--print-*` lines, the verbose compression figures and a golden report. Every
//! report is checked against what the server counted.

use std::time::Duration;

use crate::support::h2_server::{h2_tls, H2Server, Opts};
use crate::support::recorder::TempFile;
use crate::support::tls_server::{Pki, TlsServer};
use crate::support::{self, masked, run_ok, Report};

fn h2c(opts: Opts) -> H2Server {
    H2Server::start(opts)
}

/// Runs `--http-version 2` against `server` with `args`.
fn run2(server: &H2Server, args: &[&str]) -> Report {
    let mut all = vec!["--http-version", "2", "--timeout", "5"];
    all.extend_from_slice(args);
    run_ok(server.port(), &all)
}

/// The (wire, decoded) figures of the verbose compression line.
fn compression(r: &Report) -> Vec<f64> {
    r.nums("HTTP/2 header compression:")
}

#[test]
fn h2c_every_call_is_a_stream_and_counted() {
    let s = h2c(Opts {
        body: 1000,
        delay: Duration::from_millis(5),
        ..Opts::default()
    });
    let r = run2(
        &s,
        &[
            "--uri",
            "/a/b.html",
            "--num-conns",
            "4",
            "--num-calls",
            "25",
            "--burst-length",
            "5",
            "--rate",
            "100",
            "-v",
        ],
    );
    assert_eq!(r.totals(), (4, 100, 100), "{}", r.text);
    assert_eq!(s.connections(), 4);
    assert_eq!(s.requests(), 100);
    assert_eq!(r.status(), [0, 100, 0, 0, 0]);
    assert_eq!(r.error("total"), 0);
    // --burst-length 5: five streams in flight on a connection, never more.
    assert_eq!(s.max_in_flight(), 5, "{}", r.text);
    let seen = s.seen();
    assert_eq!(seen.len(), 100);
    for q in &seen {
        assert_eq!(
            (q.method.as_str(), q.path.as_str(), q.scheme.as_str()),
            ("GET", "/a/b.html", "http")
        );
        assert_eq!(q.authority, "127.0.0.1");
        assert_eq!(q.user_agent, "rshperf/0.1.0");
        assert_eq!((q.cookie.as_deref(), q.body), (None, 0));
    }
    // Content as sent; the header size is the decoded block, Σ name + value:
    // `:status` 200 (10) and content-type text/plain (22).
    assert_eq!(r.nums("Reply size [B]:"), [32.0, 1000.0, 0.0, 1032.0]);
    // Request: 9-byte HEADERS frame header + HPACK block. A connection's first
    // block is 39 bytes (`:method GET` and `:scheme http` indexed, `:path`,
    // `:authority`, user-agent as literals added to the dynamic table), the next 24
    // five bytes (all indexed): 4 × (48 + 24 × 14) / 100 = 15 (whole bytes).
    assert_eq!(r.nums("Request size [B]:"), [15.0]);
    let line = r.nums("HTTP/2:");
    assert_eq!(line, [4.0, 100.0, 0.0, 0.0, 0.0]);
    let c = compression(&r);
    // Requests: HPACK bytes, 4 × (39 + 24 × 5).
    assert_eq!(c[0], 636.0, "{c:?}");
    assert!(c[0] < c[1], "HPACK must be smaller than the fields: {c:?}");
    assert!(c[3] < c[4], "{c:?}");
}

#[test]
fn slow_replies_on_several_connections_are_collected_in_naps() {
    // 5 ms per reply: well past the 1.6 ms average from which the engine naps
    // (200 us off the poll) instead of being woken by every reply.
    let s = h2c(Opts {
        body: 100,
        delay: Duration::from_millis(5),
        ..Opts::default()
    });
    let r = run2(
        &s,
        &[
            "--num-conns",
            "4",
            "--num-calls",
            "50",
            "--burst-length",
            "5",
            "--rate",
            "1000",
            "--debug",
            "1",
        ],
    );
    // Nothing lost or added, and the window stays full: five streams in flight.
    assert_eq!(r.totals(), (4, 200, 200), "{}", r.text);
    assert_eq!(s.requests(), 200);
    assert_eq!(r.status(), [0, 200, 0, 0, 0]);
    assert_eq!(r.error("total"), 0);
    assert_eq!(s.max_in_flight(), 5, "{}", r.text);
    let (naps, turns) = r.naps().unwrap_or_else(|| panic!("no naps:\n{}", r.stderr));
    assert!(naps > 0 && naps <= turns, "{naps} naps in {turns} turns");
    // The replies still arrive 5 ms after their requests. That a nap never passes
    // the engine's next deadline and comes only while replies are slow is tested on
    // simulated time (`engine::event_loop::nap`); here only a hang guard.
    let rt = r.nums("Reply time [ms]:");
    let guard = support::HANG_GUARD.as_secs_f64() * 1000.0;
    assert!(rt[0] >= 5.0 && rt[0] < guard, "{rt:?}");
}

#[test]
fn fast_replies_are_not_napped() {
    // Replies at once, one call at a time: the engine blocks in the poll and handles
    // each reply when it arrives. (Five calls move the average response time to
    // 28 % of theirs: a nap would need replies slower than 5.8 ms each.)
    let s = h2c(Opts {
        body: 100,
        ..Opts::default()
    });
    let r = run2(
        &s,
        &["--num-conns", "1", "--num-calls", "5", "--debug", "1"],
    );
    assert_eq!(r.totals(), (1, 5, 5), "{}", r.text);
    assert_eq!(s.requests(), 5);
    assert_eq!(r.naps(), None, "{}", r.stderr);
}

#[test]
fn h2_over_tls_negotiates_alpn() {
    let pki = Pki::new();
    let s = H2Server::start(Opts {
        body: 5,
        tls: Some(h2_tls(pki.server_config(false))),
        ..Opts::default()
    });
    let r = run2(
        &s,
        &[
            "--ssl",
            "--num-conns",
            "3",
            "--num-calls",
            "7",
            "--burst-length",
            "3",
            "-v",
        ],
    );
    assert_eq!(r.totals(), (3, 21, 21), "{}\n{}", r.text, r.stderr);
    assert_eq!(s.requests(), 21);
    assert_eq!(r.status(), [0, 21, 0, 0, 0]);
    assert!(s.seen().iter().all(|q| q.scheme == "https"));
    assert!(
        r.text.contains("TLS handshakes: full 3 resumed 0"),
        "{}",
        r.text
    );
}

#[test]
fn a_server_without_h2_fails_the_tls_connection_clearly() {
    let pki = Pki::new();
    // An HTTPS/1.1 server: ALPN http/1.1 only.
    let s = TlsServer::start(pki.server_config(false));
    let port = s.port().to_string();
    let out = support::run(&[
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--ssl",
        "--http-version",
        "2",
        "--num-conns",
        "2",
        "--timeout",
        "5",
    ]);
    let r = Report {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(out.status.code(), Some(0), "{}", r.stderr);
    assert_eq!(r.totals(), (2, 0, 0), "{}", r.text);
    assert_eq!(r.error("other"), 2);
    assert!(
        r.stderr
            .contains("the server does not offer HTTP/2 over TLS (ALPN h2)"),
        "{}",
        r.stderr
    );
}

#[test]
fn max_concurrent_streams_makes_calls_wait() {
    let s = h2c(Opts {
        max_streams: Some(2),
        delay: Duration::from_millis(3),
        ..Opts::default()
    });
    let r = run2(
        &s,
        &[
            "--num-conns",
            "2",
            "--num-calls",
            "12",
            "--burst-length",
            "6",
        ],
    );
    assert_eq!(r.totals(), (2, 24, 24), "{}", r.text);
    assert_eq!(s.requests(), 24);
    assert_eq!(s.max_in_flight(), 2);
}

#[test]
fn a_reset_stream_is_a_failed_call_and_the_connection_goes_on() {
    let s = h2c(Opts {
        reset_every: Some(4),
        ..Opts::default()
    });
    let r = run2(&s, &["--num-conns", "1", "--num-calls", "20", "-v"]);
    // Requests 4, 8, …, 20 are reset: 5 errors, 15 replies, one connection.
    assert_eq!(r.totals(), (1, 20, 15), "{}", r.text);
    assert_eq!(r.error("other"), 5);
    assert_eq!(r.error("total"), 5);
    assert_eq!(s.connections(), 1);
    assert_eq!(r.nums("HTTP/2:"), [1.0, 20.0, 5.0, 0.0, 0.0]);
}

#[test]
fn goaway_ends_a_connection_like_connection_close() {
    let s = h2c(Opts {
        goaway_after: Some(3),
        ..Opts::default()
    });
    // Request workload: as after `Connection: close`, the connection's remaining
    // calls are not sent, without an error.
    let r = run2(&s, &["--num-conns", "2", "--num-calls", "10", "-v"]);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    let (conns, requests, replies) = r.totals();
    assert_eq!((conns, requests, replies), (2, 6, 6), "{}", r.text);
    assert_eq!(s.requests(), 6);
    assert_eq!(r.nums("HTTP/2:")[3], 2.0, "one GOAWAY per connection");
    // Sessions: the calls move to new connections and every one is answered.
    let s = h2c(Opts {
        goaway_after: Some(3),
        ..Opts::default()
    });
    let r = run2(&s, &["--wsess", "2,10,0", "--rate", "10"]);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    assert_eq!(r.status()[1], 20, "{}", r.text);
    assert_eq!(s.requests(), 20);
    assert!(
        s.connections() >= 8,
        "3 calls per connection: {}",
        s.connections()
    );
    assert!(r.text.contains("Session rate [sess/s]:"), "{}", r.text);
    assert!(r.text.contains("(2/2)"), "{}", r.text);
}

#[test]
fn sessions_carry_cookies_and_bodies_through_flow_control() {
    // A 1-byte initial window: every body byte waits for a WINDOW_UPDATE.
    let s = h2c(Opts {
        cookie: true,
        window: Some(1),
        ..Opts::default()
    });
    let log = TempFile::new(
        "h2-sesslog",
        b"/first\n/post method=POST contents=\"0123456789abcdefghij\"\n/third\n",
    );
    let arg = format!("3,0,{}", log.path);
    let r = run2(
        &s,
        &["--wsesslog", &arg, "--rate", "20", "--session-cookies"],
    );
    assert_eq!(r.error("total"), 0, "{}", r.text);
    assert_eq!(r.status()[1], 9, "{}", r.text);
    let seen = s.seen();
    assert_eq!(seen.len(), 9);
    let posts: Vec<_> = seen.iter().filter(|q| q.method == "POST").collect();
    assert_eq!(posts.len(), 3);
    assert!(posts.iter().all(|q| q.body == 20 && q.path == "/post"));
    // Every call after a session's first carries the cookie of a reply.
    let with_cookie = seen.iter().filter(|q| q.cookie.is_some()).count();
    assert_eq!(with_cookie, 6, "{seen:?}");
    assert!(seen
        .iter()
        .filter_map(|q| q.cookie.as_deref())
        .all(|c| c.starts_with("sid=")));
}

#[test]
fn print_request_and_reply_show_pseudo_headers() {
    let s = h2c(Opts {
        body: 3,
        ..Opts::default()
    });
    let r = run2(
        &s,
        &[
            "--uri",
            "/p",
            "--print-request",
            "--print-reply",
            "--add-header",
            "X-Test: yes\\n",
        ],
    );
    let lines: Vec<&str> = r.text.lines().collect();
    let sh: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("SH0:"))
        .copied()
        .collect();
    assert_eq!(
        sh,
        [
            "SH0::method: GET",
            "SH0::scheme: http",
            "SH0::path: /p",
            "SH0::authority: 127.0.0.1",
            "SH0:user-agent: rshperf/0.1.0",
            "SH0:x-test: yes",
            "SH0:",
        ]
    );
    let rh: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("RH0:"))
        .copied()
        .collect();
    assert_eq!(
        rh,
        ["RH0::status: 200", "RH0:content-type: text/plain", "RH0:"],
        "{}",
        r.text
    );
    assert!(lines.contains(&"RB0:xxx"), "{}", r.text);
    // The RS line's header size is the decoded size the report counts.
    let rs = lines
        .iter()
        .find(|l| l.starts_with("RS0:"))
        .expect("RS line");
    let header = r.nums("Reply size [B]:")[0];
    assert_eq!(*rs, format!("RS0: header {header} content 3 footer 0"));
}

#[test]
fn echo_line_and_json_name_http2() {
    let s = h2c(Opts::default());
    let r = run2(&s, &["--num-conns", "1", "--json", "-"]);
    let v: serde_json::Value = serde_json::from_str(&r.text).expect("JSON on stdout");
    assert_eq!(v["config"]["http_version"], "2", "{}", r.text);
    assert_eq!(v["http2"]["connections"], 1, "{}", r.text);
    assert_eq!(v["http2"]["streams"], 1, "{}", r.text);
    assert_eq!(v["http2"]["reply_header_decoded"], 32, "{}", r.text);
    assert!(v["http2"]["reply_space_savings_pct"].as_f64().is_some());
    let r = run2(&s, &["--num-conns", "1"]);
    let echo = r.text.lines().next().unwrap_or("");
    assert!(echo.contains(" --http-version=2 "), "{echo}");
}

/// The report with every number replaced by `#`, except on the lines that do not
/// depend on timing, which are kept exactly.
fn golden_view(report: &str) -> String {
    const EXACT: [&str; 7] = [
        "Total:",
        "Connection length",
        "Request size",
        "Reply size",
        "Reply status",
        "Errors:",
        "HTTP/2:",
    ];
    let mut out = String::new();
    for line in report.lines() {
        if EXACT.iter().any(|p| line.starts_with(p)) {
            // Keep the counts; the test duration is timing.
            let keep = match line.find(" test-duration ") {
                Some(i) => format!("{} test-duration #", &line[..i]),
                None => line.to_string(),
            };
            out.push_str(&keep);
        } else {
            out.push_str(&masked(line));
        }
        out.push('\n');
    }
    out
}

#[test]
fn golden_report() {
    // No date header: every figure but the times is fixed.
    let s = h2c(Opts {
        body: 100,
        ..Opts::default()
    });
    let r = run2(
        &s,
        &[
            "--uri",
            "/golden",
            "--num-conns",
            "2",
            "--num-calls",
            "3",
            "--burst-length",
            "2",
            "-v",
        ],
    );
    let got = golden_view(&r.text);
    // Reply header: :status 200 (10) + content-type text/plain (22) = 32 decoded
    // bytes; request: 9-byte frame header + 37-byte block (literals entering the
    // dynamic table), then 9 + 5 (indexed) twice: 148 / 6 = 24 (whole bytes).
    let want = "rshperf --verbose --timeout=# --client=#/# --server=# --port=# \
         --uri=/golden --http-version=# --send-buffer=# --recv-buffer=# --num-conns=# \
         --num-calls=# --burst-length=#\n\
         rshperf: maximum number of open descriptors = #\n\
         Maximum connect burst length: #\n\
         \n\
         Total: connections 2 requests 6 replies 6 test-duration #\n\
         \n\
         Connection rate: # conn/s (# ms/conn, <=# concurrent connections)\n\
         Connection time [ms]: min # avg # max # median # stddev #\n\
         Connection time [ms]: connect #\n\
         Connection length [replies/conn]: 3.000\n\
         \n\
         Request rate: # req/s (# ms/req)\n\
         Request size [B]: 24.0\n\
         \n\
         Reply rate [replies/s]: min # avg # max # stddev # (# samples)\n\
         Reply time [ms]: response # transfer #\n\
         Reply size [B]: header 32.0 content 100.0 footer 0.0 (total 132.0)\n\
         Reply status: 1xx=0 2xx=6 3xx=0 4xx=0 5xx=0\n\
         \n\
         CPU time [s]: user # system # (user #% system #% total #%)\n\
         Net I/O: # KB/s (#*#^# bps)\n\
         \n\
         Errors: total 0 client-timo 0 socket-timo 0 connrefused 0 connreset 0\n\
         Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0\n\
         Percentiles connect [ms]: p# # p# # p# # p# # p# # max #\n\
         Percentiles response [ms]: p# # p# # p# # p# # p# # max #\n\
         Percentiles transfer [ms]: p# # p# # p# # p# # p# # max #\n\
         Percentiles lifetime [ms]: p# # p# # p# # p# # p# # max #\n\
         Percentiles lateness [ms]: p# # p# # p# # p# # p# # max #\n\
         HTTP/2: connections 2 streams 6 reset 0 goaway 0 protocol-errors 0\n\
         HTTP/# header compression: requests # B sent for # B (space savings #%) \
         replies # B received for # B (space savings #%)\n\
         Pacing: deferred # unstarted # in-flight-cap # source-addrs #\n\
         Pacing: spins # spin-time # ms wakeups # wake-late avg # max # us\n";
    assert_eq!(got, want, "report:\n{}", r.text);
}

#[test]
fn waiting_for_a_free_stream_is_not_a_timeout() {
    // One stream at a time, 400 ms per reply, 4 calls queued at once: the last waits
    // 1.2 s for its stream, longer than --timeout 1, and must still be answered.
    let s = h2c(Opts {
        max_streams: Some(1),
        delay: Duration::from_millis(400),
        ..Opts::default()
    });
    let r = run_ok(
        s.port(),
        &[
            "--http-version",
            "2",
            "--timeout",
            "1",
            "--num-conns",
            "1",
            "--num-calls",
            "4",
            "--burst-length",
            "4",
        ],
    );
    assert_eq!(r.totals(), (1, 4, 4), "{}", r.text);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    assert_eq!(s.max_in_flight(), 1);
}
