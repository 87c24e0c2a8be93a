//! `--http-version 3` end to end: rshperf against the in-process HTTP/3 server (quinn
//! and h3) and the hostile one. Calls as request streams with `--burst-length` streams
//! in flight, the `http3` verbose lines, sessions that resume their TLS session on
//! a new connection (and `--ssl-no-reuse`), `--call-rate`, and every way a server can
//! fail counted in the classic error counters with its reason once on stderr. Every
//! report is checked against what the server counted.

use crate::support::h3_hostile::{Hostile, HostileH3};
use crate::support::h3_server::{H3Server, Opts};
use crate::support::recorder::TempFile;
use crate::support::tls_server::Pki;
use crate::support::{run_ok, Report};

/// Runs `--http-version 3` against 127.0.0.1:`port` with `args`.
fn run3(port: u16, args: &[&str]) -> Report {
    let mut all = vec!["--http-version", "3", "--timeout", "5"];
    all.extend_from_slice(args);
    run_ok(port, &all)
}

#[test]
fn every_call_is_a_stream_and_counted() {
    let pki = Pki::new();
    let s = H3Server::start(
        pki.server_config(false),
        Opts {
            body: 1024,
            ..Opts::default()
        },
    );
    let r = run3(
        s.port(),
        &[
            "--uri",
            "/1k.html",
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
    assert_eq!(r.totals(), (4, 100, 100), "{}\n{}", r.text, r.stderr);
    assert_eq!(s.requests(), 100);
    assert_eq!(s.connections(), 4);
    assert_eq!(r.status(), [0, 100, 0, 0, 0]);
    assert_eq!(r.error("total"), 0);
    // Header: the decoded section, `:status` 200 (10 bytes); content as sent.
    assert_eq!(r.nums("Reply size [B]:"), [10.0, 1024.0, 0.0, 1034.0]);
    // HEADERS frame (2-byte header + QPACK section), no body.
    let req = r.nums("Request size [B]:")[0];
    assert!((20.0..80.0).contains(&req), "{req}");
    assert_eq!(r.nums("HTTP/3:"), [4.0, 100.0, 0.0, 0.0, 0.0]);
    let quic = r.nums("HTTP/3 QUIC:");
    assert_eq!(quic[0], 4.0, "4 handshakes: {quic:?}");
    assert_eq!((quic[3], quic[4]), (0.0, 0.0), "no 0-RTT asked: {quic:?}");
    assert!(quic[6] > 0.0, "packets sent: {quic:?}");
}

#[test]
fn sessions_resume_on_their_next_connection() {
    let pki = Pki::new();
    // GOAWAY after 2 requests: each 4-call session needs a second connection.
    let s = H3Server::start(
        pki.server_config(false),
        Opts {
            body: 10,
            goaway_after: Some(2),
            ..Opts::default()
        },
    );
    let args = [
        "--wsess",
        "3,4,0",
        "--rate",
        "20",
        "--burst-length",
        "1",
        "-v",
    ];
    let r = run3(s.port(), &args);
    assert_eq!(r.status(), [0, 12, 0, 0, 0], "{}\n{}", r.text, r.stderr);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    // A call sent as the GOAWAY crossed it is refused and sent again on the next
    // connection (the server may have read it: it counts it as well).
    assert!(s.requests() >= 12);
    let conns = s.connections();
    assert!(conns >= 6, "{conns}");
    assert_eq!(r.totals().0, conns, "{}", r.text);
    assert_eq!(
        s.resumed(),
        conns - 3,
        "every connection but a session's first resumes"
    );
    // The report counts what the server saw, without 0-RTT to tell.
    let line = format!("TLS handshakes: full 3 resumed {}", conns - 3);
    assert!(r.text.contains(&line), "{line}\n{}", r.text);
    let mut no_reuse = args.to_vec();
    no_reuse.push("--ssl-no-reuse");
    let s2 = H3Server::start(
        pki.server_config(false),
        Opts {
            body: 10,
            goaway_after: Some(2),
            ..Opts::default()
        },
    );
    let r = run3(s2.port(), &no_reuse);
    assert_eq!(r.status(), [0, 12, 0, 0, 0], "{}", r.text);
    assert_eq!(s2.resumed(), 0, "--ssl-no-reuse: full handshakes only");
    let line = format!("TLS handshakes: full {} resumed 0", s2.connections());
    assert!(r.text.contains(&line), "{line}\n{}", r.text);
}

#[test]
fn a_session_idle_past_the_quic_idle_timeout_resumes_on_a_new_connection() {
    let pki = Pki::new();
    let s = H3Server::start(
        pki.server_config(false),
        Opts {
            body: 10,
            ..Opts::default()
        },
    );
    // 3 sessions of 3 bursts of 2 calls, thinking 1 s; connections idle out after
    // 0.1 s, so each burst opens a connection that resumes the session's first.
    let args = [
        "--wsess",
        "3,6,1",
        "--burst-length",
        "2",
        "--rate",
        "20",
        "--quic-idle-timeout",
        "0.1",
        "--json=-",
    ];
    let r = run3(s.port(), &args);
    let doc: serde_json::Value = serde_json::from_str(&r.text).expect("one JSON document");
    assert_eq!(doc["errors"]["total"], 0, "{}\n{}", r.text, r.stderr);
    assert_eq!(s.requests(), 18);
    assert_eq!(s.connections(), 9, "a connection per burst");
    assert_eq!(
        s.resumed(),
        6,
        "every connection but a session's first resumes"
    );
    assert_eq!(doc["tls_handshakes"]["full"], 3, "{}", r.text);
    assert_eq!(doc["tls_handshakes"]["resumed"], 6, "{}", r.text);
    assert_eq!(doc["connections"]["total"], 9, "{}", r.text);
    assert_eq!(doc["replies"]["total"], 18, "{}", r.text);
    assert!(
        r.text.contains("--quic-idle-timeout=0.1"),
        "echoed: {}",
        r.text
    );
}

#[test]
fn each_call_on_a_connection_sends_its_own_uri() {
    // The encoded request of one call is reused for the next only when the fields
    // are the same: --wlog changes the path from call to call.
    let pki = Pki::new();
    let s = H3Server::start(pki.server_config(false), Opts::default());
    let f = TempFile::new("h3-wlog", b"/u1\0/u2\0/u2\0/u3");
    let spec = format!("--wlog=y,{}", f.path);
    let r = run3(
        s.port(),
        &[
            &spec,
            "--num-conns",
            "1",
            "--num-calls",
            "7",
            "--burst-length",
            "1",
        ],
    );
    assert_eq!(r.totals(), (1, 7, 7), "{}\n{}", r.text, r.stderr);
    assert_eq!(
        s.paths(),
        ["/u1", "/u2", "/u2", "/u3", "/u1", "/u2", "/u2"],
        "{}",
        r.text
    );
}

#[test]
fn call_rate_takes_free_streams_on_the_pool() {
    let pki = Pki::new();
    let s = H3Server::start(pki.server_config(false), Opts::default());
    let r = run3(
        s.port(),
        &[
            "--call-rate",
            "500",
            "--num-conns",
            "2",
            "--num-calls",
            "50",
        ],
    );
    assert_eq!(r.totals(), (2, 100, 100), "{}\n{}", r.text, r.stderr);
    assert_eq!(s.requests(), 100);
    assert_eq!(s.connections(), 2);
}

#[test]
fn slow_replies_are_collected_in_naps_and_fast_ones_are_not() {
    // 5 ms per reply: past the 1.6 ms average response time from which the engine
    // sleeps 200 us off the poll instead of being woken by every datagram.
    let pki = Pki::new();
    let s = H3Server::start(
        pki.server_config(false),
        Opts {
            body: 100,
            delay: std::time::Duration::from_millis(5),
            ..Opts::default()
        },
    );
    let r = run3(
        s.port(),
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
    assert_eq!(r.totals(), (4, 200, 200), "{}\n{}", r.text, r.stderr);
    assert_eq!(s.requests(), 200);
    assert_eq!(r.error("total"), 0);
    let (naps, turns) = r.naps().unwrap_or_else(|| panic!("no naps:\n{}", r.stderr));
    assert!(naps > 0 && naps <= turns, "{naps} naps in {turns} turns");
    let rt = r.nums("Reply time [ms]:");
    assert!(rt[0] >= 5.0, "{rt:?}");

    // Replies at once, one call at a time: every wait is a blocking poll.
    let fast = H3Server::start(pki.server_config(false), Opts::default());
    let r = run3(
        fast.port(),
        &["--num-conns", "1", "--num-calls", "5", "--debug", "1"],
    );
    assert_eq!(r.totals(), (1, 5, 5), "{}\n{}", r.text, r.stderr);
    assert_eq!(fast.requests(), 5);
    assert_eq!(r.naps(), None, "{}", r.stderr);
}

/// Runs 2 connections × `calls` calls against a hostile server; returns the report.
fn hostile(how: Hostile, calls: &str, extra: &[&str]) -> (Report, HostileH3) {
    let pki = Pki::new();
    let s = HostileH3::start(pki.server_config(false), how);
    let mut args = vec!["--num-conns", "2", "--num-calls", calls, "--rate", "50"];
    args.extend_from_slice(extra);
    let r = run3(s.port(), &args);
    (r, s)
}

/// The reason lines on stderr that contain `what` (printed once per run).
fn said(r: &Report, what: &str) -> usize {
    r.stderr.lines().filter(|l| l.contains(what)).count()
}

#[test]
fn hostile_good_control_answers_everything() {
    let (r, s) = hostile(Hostile::Good, "3", &[]);
    assert_eq!(r.totals(), (2, 6, 6), "{}\n{}", r.text, r.stderr);
    assert_eq!(s.requests(), 6);
    assert_eq!(r.error("total"), 0);
}

#[test]
fn hostile_protocol_violations_fail_the_connection_as_other() {
    for (how, reason) in [
        (Hostile::DataFirst, "DATA before the reply's HEADERS"),
        (Hostile::HugeHeaders, "a frame larger than we accept"),
        (Hostile::DynamicRef, "QPACK dynamic table"),
        (Hostile::NoSettings, "does not start with SETTINGS"),
    ] {
        let (r, s) = hostile(how, "3", &["-v"]);
        assert_eq!(s.connections(), 2, "{how:?}");
        assert_eq!(r.error("other"), 2, "{how:?}\n{}\n{}", r.text, r.stderr);
        assert_eq!(r.error("total"), 2, "{how:?}");
        assert_eq!(r.status()[1], 0, "{how:?}: no 2xx\n{}", r.text);
        assert_eq!(said(&r, reason), 1, "{how:?}: reason once\n{}", r.stderr);
        assert_eq!(
            r.nums("HTTP/3:")[4],
            2.0,
            "{how:?}: protocol errors\n{}",
            r.text
        );
    }
}

#[test]
fn hostile_resets_fail_each_call() {
    let (r, s) = hostile(Hostile::Reset, "3", &["-v"]);
    assert_eq!(s.requests(), 6);
    assert_eq!(r.error("other"), 6, "{}\n{}", r.text, r.stderr);
    assert_eq!(r.nums("HTTP/3:"), [2.0, 6.0, 6.0, 0.0, 0.0]);
}

#[test]
fn hostile_goaway_ends_the_connection_after_its_last_reply() {
    let (r, s) = hostile(Hostile::GoawayAfter(2), "5", &["-v"]);
    assert_eq!(r.status(), [0, 4, 0, 0, 0], "{}\n{}", r.text, r.stderr);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    assert_eq!(r.nums("HTTP/3:")[3], 2.0, "two GOAWAYs\n{}", r.text);
    assert_eq!(s.connections(), 2);
}

#[test]
fn hostile_silence_is_client_timo() {
    let (r, s) = hostile(Hostile::Silent, "2", &["--timeout", "1"]);
    assert_eq!(s.connections(), 2);
    assert_eq!(r.error("client-timo"), 2, "{}\n{}", r.text, r.stderr);
    assert_eq!(r.status(), [0; 5]);
}

#[test]
fn a_failed_handshake_is_other_with_its_reason_once() {
    let pki = Pki::new();
    let s = H3Server::start(pki.server_config(false), Opts::default());
    // --ssl-verify without the test CA: the certificate is unknown.
    let r = run3(
        s.port(),
        &[
            "--num-conns",
            "3",
            "--rate",
            "50",
            "--ssl-verify",
            "--ssl-ca-file",
            &pki.path("client.pem"),
        ],
    );
    assert_eq!(r.error("other"), 3, "{}\n{}", r.text, r.stderr);
    assert_eq!(s.requests(), 0);
    assert_eq!(said(&r, "rshperf: TLS handshake failed"), 1, "{}", r.stderr);
}

#[test]
fn nothing_listening_is_connrefused() {
    // A UDP port nobody listens on answers with ICMP port unreachable.
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    let port = sock.local_addr().expect("addr").port();
    drop(sock);
    let r = run3(port, &["--num-conns", "2", "--rate", "50"]);
    assert_eq!(r.error("connrefused"), 2, "{}\n{}", r.text, r.stderr);
}

#[test]
fn quic_0rtt_sends_resumed_requests_early() {
    let pki = Pki::new();
    let s = H3Server::start(
        pki.server_config(false),
        Opts {
            body: 10,
            goaway_after: Some(2),
            ..Opts::default()
        },
    );
    let r = run3(
        s.port(),
        &[
            "--wsess",
            "2,4,0",
            "--rate",
            "20",
            "--burst-length",
            "1",
            "--quic-0rtt",
            "-v",
        ],
    );
    assert_eq!(r.status(), [0, 8, 0, 0, 0], "{}\n{}", r.text, r.stderr);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    let quic = r.nums("HTTP/3 QUIC:");
    // Every connection after a session's first has a ticket that allows early data.
    let conns = s.connections() as f64;
    assert_eq!(quic[3], conns - 2.0, "0-RTT sent: {quic:?}\n{}", r.text);
    assert!(quic[4] <= quic[3], "{quic:?}");
    assert!(r.text.contains("--quic-0rtt"), "echoed: {}", r.text);
}

/// Runs POSTs of a 4 MiB body (beyond the server's stream window: the body cannot
/// all go out before the reply) against a server that replies at once, stopping the
/// request stream with H3_NO_ERROR when `stop`.
fn early_reply(stop: bool) {
    let pki = Pki::new();
    let s = H3Server::start(
        pki.server_config(false),
        Opts {
            body: 100,
            early_reply: Some(stop),
            ..Opts::default()
        },
    );
    let body = std::env::temp_dir().join(format!("rshperf-h3-early-{stop}-{}", std::process::id()));
    std::fs::write(&body, vec![b'b'; 4 << 20]).expect("body file");
    let r = run3(
        s.port(),
        &[
            "--body-file",
            body.to_str().expect("utf-8"),
            "--num-conns",
            "2",
            "--num-calls",
            "3",
            "--burst-length",
            "1",
            "--rate",
            "10",
            "-v",
        ],
    );
    assert_eq!(r.totals(), (2, 6, 6), "{}\n{}", r.text, r.stderr);
    assert_eq!(r.status(), [0, 6, 0, 0, 0], "{}", r.text);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    assert_eq!(s.requests(), 6);
    assert_eq!(r.nums("HTTP/3:"), [2.0, 6.0, 0.0, 0.0, 0.0], "{}", r.text);
    // The request's size counts what went out: less than the whole body.
    let req = r.nums("Request size [B]:")[0];
    let _ = std::fs::remove_file(&body);
    assert!(req > 0.0 && req < (4 << 20) as f64, "{req}");
}

#[test]
fn an_early_reply_with_stop_sending_ends_the_body() {
    early_reply(true);
}

#[test]
fn an_early_complete_reply_ends_the_body() {
    early_reply(false);
}

#[test]
fn rejected_0rtt_requests_are_sent_again_and_counted_once() {
    let pki = Pki::new();
    let s = H3Server::start(
        pki.server_config(false),
        Opts {
            body: 10,
            goaway_after: Some(2),
            reject_0rtt: true,
            ..Opts::default()
        },
    );
    let r = run3(
        s.port(),
        &[
            "--wsess",
            "1,4,0",
            "--rate",
            "10",
            "--burst-length",
            "2",
            "--quic-0rtt",
            "-v",
        ],
    );
    assert_eq!(r.status(), [0, 4, 0, 0, 0], "{}\n{}", r.text, r.stderr);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    // Each connection after the session's first resumes (the server may send a
    // GOAWAY as a call crosses it: that call goes again on a new connection and
    // counts again, as any call sent twice does).
    let (conns, requests, replies) = r.totals();
    assert_eq!(conns, s.connections(), "{}", r.text);
    assert_eq!(replies, 4);
    let quic = r.nums("HTTP/3 QUIC:");
    // Only the first resumed connection had a ticket that allowed early data (the
    // later configuration issues none): one 0-RTT sent, rejected.
    assert_eq!((quic[3], quic[4], quic[5]), (1.0, 0.0, 1.0), "{quic:?}");
    assert!(s.resumed() >= 1, "{}", s.resumed());
    // The calls of the rejected 0-RTT went on a second stream each and count once:
    // one or two (--burst-length 2) streams more than requests.
    let streams = r.nums("HTTP/3:")[1] as u64;
    let resent = streams - requests;
    assert!(
        (1..=2).contains(&resent),
        "streams {streams} requests {requests}\n{}",
        r.text
    );
    // The server never read the early requests: it saw each request once, plus
    // any that crossed a GOAWAY.
    assert!(
        s.requests() >= 4 && s.requests() <= requests,
        "{}",
        s.requests()
    );
    let s2 = H3Server::start(
        pki.server_config(false),
        Opts {
            body: 10,
            goaway_after: Some(2),
            reject_0rtt: true,
            ..Opts::default()
        },
    );
    let json = crate::support::run_ok(
        s2.port(),
        &[
            "--http-version",
            "3",
            "--timeout",
            "5",
            "--wsess",
            "1,4,0",
            "--rate",
            "10",
            "--burst-length",
            "2",
            "--quic-0rtt",
            "--json",
            "-",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&json.text).expect("json");
    let h = &v["http3"];
    assert_eq!(h["zero_rtt_sent"], 1, "{h}");
    assert_eq!(h["zero_rtt_accepted"], 0, "{h}");
    assert_eq!(h["zero_rtt_rejected"], 1, "{h}");
}
