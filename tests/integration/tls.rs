//! HTTPS end to end: rshperf against the in-process rustls server of
//! `support::tls_server`, comparing the report (connections, replies, errors, the `-v`
//! `TLS handshakes:` line, JSON `tls_handshakes`) with what the server negotiated on
//! each connection (full or resumed, version, suite, client certificate).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Output;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use rustls::{CipherSuite, HandshakeKind, ProtocolVersion};
use serde_json::Value;

use crate::support::server::closed_port;
use crate::support::tls_server::{Pki, TlsServer};
use crate::support::{self, run, run_ok, Report};

/// `TLS handshakes: full N resumed M` (printed with `-v`) as (N, M).
fn tls_line(r: &Report) -> (u64, u64) {
    let n = r.nums("TLS handshakes:");
    assert_eq!(n.len(), 2, "{}", r.text);
    (n[0] as u64, n[1] as u64)
}

/// Runs rshperf against 127.0.0.1:`port`; returns (exit code, stdout, stderr).
fn run_code(port: u16, args: &[&str]) -> (Option<i32>, String, String) {
    let port = port.to_string();
    let mut all = vec!["--server", "127.0.0.1", "--port", &port];
    all.extend_from_slice(args);
    let out: Output = run(&all);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The `rshperf: TLS handshake failed:` lines of stderr.
fn handshake_failed_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("rshperf: TLS handshake failed: "))
        .collect()
}

/// Asserts an option error: exit 1, nothing on stdout, one `rshperf: ` message on
/// stderr containing `needle`; returns that message.
fn assert_option_error(args: &[&str], needle: &str) -> String {
    let (code, stdout, stderr) = run_code(closed_port(), args);
    assert_eq!(
        code,
        Some(1),
        "{args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.is_empty(), "{args:?}: stdout:\n{stdout}");
    assert!(
        stderr.starts_with("rshperf: ") && stderr.contains(needle),
        "{args:?}: stderr:\n{stderr}"
    );
    stderr
}

// ---- request-oriented connections ----

#[test]
fn keep_alive_calls_over_tls_do_full_handshakes() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let r = run_ok(
        s.port(),
        &[
            "--ssl",
            "--num-conns",
            "5",
            "--num-calls",
            "3",
            "--rate",
            "100",
            "--timeout",
            "5",
            "-v",
        ],
    );
    assert_eq!(r.totals(), (5, 15, 15));
    assert_eq!(r.error("total"), 0);
    assert_eq!(r.status(), [0, 15, 0, 0, 0]);
    assert_eq!(r.nums("Connection length [replies/conn]:"), vec![3.0]);
    assert_eq!(tls_line(&r), (5, 0));
    s.settle();
    assert_eq!(s.requests(), 15);
    assert_eq!(s.connections(), 5);
    let hs = s.handshakes();
    assert_eq!(hs.len(), 5, "{hs:?}");
    for h in &hs {
        assert_eq!(h.kind, Some(HandshakeKind::Full), "{h:?}");
        assert_eq!(h.requests, 3, "{h:?}");
        // rshperf offers TLS 1.3 and 1.2; the server prefers 1.3.
        assert_eq!(h.version, Some(ProtocolVersion::TLSv1_3), "{h:?}");
        // An IP literal as --server sends no SNI.
        assert_eq!(h.sni, None, "{h:?}");
    }
    assert!(s.failures().is_empty(), "{:?}", s.failures());
    assert_eq!(support::without_short_run_note(&r.stderr), "");
}

#[test]
fn without_verbose_there_is_no_tls_line() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let r = run_ok(s.port(), &["--ssl", "--num-conns", "2", "--timeout", "5"]);
    assert_eq!(r.totals(), (2, 2, 2));
    assert!(!r.text.contains("TLS handshakes"), "{}", r.text);
}

// ---- sessions: one TLS session cache per session ----

#[test]
fn session_connections_resume_the_first_handshake() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let r = run_ok(
        s.port(),
        &[
            "--ssl",
            "--wsess=3,4,0",
            "--http-version",
            "1.0",
            "--rate",
            "0",
            "--timeout",
            "5",
            "-v",
        ],
    );
    assert_eq!(r.totals(), (12, 12, 12));
    assert_eq!(r.error("total"), 0);
    s.settle();
    assert_eq!(s.connections(), 12);
    assert_eq!(s.requests(), 12);
    assert_eq!(s.kinds(), (3, 9), "{:?}", s.handshakes());
    assert_eq!(tls_line(&r), (3, 9));
}

#[test]
fn ssl_no_reuse_makes_every_session_connection_full() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let r = run_ok(
        s.port(),
        &[
            "--ssl",
            "--ssl-no-reuse",
            "--wsess=3,4,0",
            "--http-version",
            "1.0",
            "--rate",
            "0",
            "--timeout",
            "5",
            "-v",
        ],
    );
    assert_eq!(r.totals(), (12, 12, 12));
    assert_eq!(r.error("total"), 0);
    s.settle();
    assert_eq!(s.kinds(), (12, 0), "{:?}", s.handshakes());
    assert_eq!(tls_line(&r), (12, 0));
}

#[test]
fn sessions_resume_over_tls12_too() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let r = run_ok(
        s.port(),
        &[
            "--ssl-protocol",
            "TLSv1.2",
            "--wsess=2,3,0",
            "--http-version",
            "1.0",
            "--rate",
            "0",
            "--timeout",
            "5",
            "-v",
        ],
    );
    assert_eq!(r.totals(), (6, 6, 6));
    s.settle();
    assert_eq!(s.kinds(), (2, 4), "{:?}", s.handshakes());
    assert!(s
        .handshakes()
        .iter()
        .all(|h| h.version == Some(ProtocolVersion::TLSv1_2)));
    assert_eq!(tls_line(&r), (2, 4));
}

// ---- --ssl-verify ----

#[test]
fn verification_with_the_ca_file_succeeds() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let ca = pki.path("ca.pem");
    let r = run_ok(
        s.port(),
        &[
            "--ssl-verify",
            "--ssl-ca-file",
            &ca,
            "--ssl",
            "--tls-server-name",
            "localhost",
            "--num-conns",
            "3",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (3, 3, 3));
    assert_eq!(r.error("total"), 0);
    assert_eq!(support::without_short_run_note(&r.stderr), "");
    s.settle();
    let hs = s.handshakes();
    assert_eq!(hs.len(), 3);
    assert!(
        hs.iter().all(|h| h.sni.as_deref() == Some("localhost")),
        "{hs:?}"
    );
}

#[test]
fn verification_against_system_roots_fails_every_connection() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let (code, stdout, stderr) = run_code(
        s.port(),
        &[
            "--ssl",
            "--ssl-verify",
            "--tls-server-name",
            "localhost",
            "--num-conns",
            "4",
            "--rate",
            "100",
            "--timeout",
            "5",
        ],
    );
    if code == Some(1) && stderr.contains("no trusted CA") {
        return support::skip(&format!(
            "no system trust store to verify against (package ca-certificates): {}",
            stderr.trim()
        ));
    }
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let r = Report {
        text: stdout,
        stderr,
    };
    assert_eq!(r.totals(), (4, 0, 0));
    assert_eq!(r.error("other"), 4);
    assert_eq!(r.error("total"), 4);
    // The full report is printed.
    assert!(r.text.contains("Reply status:"), "{}", r.text);
    assert!(r.text.contains("Net I/O:"), "{}", r.text);
    let lines = handshake_failed_lines(&r.stderr);
    assert_eq!(lines.len(), 1, "stderr:\n{}", r.stderr);
    assert!(lines[0].contains("UnknownIssuer"), "{}", lines[0]);
    // Then the run's warning: every connection failed.
    assert_eq!(r.stderr.lines().count(), 2, "stderr:\n{}", r.stderr);
    assert!(
        r.stderr
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("rshperf: warning: all 4 connections failed (other)")),
        "stderr:\n{}",
        r.stderr
    );
    s.settle();
    assert_eq!(s.requests(), 0);
    assert!(s.handshakes().is_empty(), "{:?}", s.handshakes());
}

#[test]
fn verification_with_the_wrong_name_fails() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let ca = pki.path("ca.pem");
    let (code, stdout, stderr) = run_code(
        s.port(),
        &[
            "--ssl",
            "--ssl-verify",
            "--ssl-ca-file",
            &ca,
            "--tls-server-name",
            "other.test",
            "--num-conns",
            "3",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let r = Report {
        text: stdout,
        stderr,
    };
    assert_eq!(r.totals(), (3, 0, 0));
    assert_eq!(r.error("other"), 3);
    let lines = handshake_failed_lines(&r.stderr);
    assert_eq!(lines.len(), 1, "stderr:\n{}", r.stderr);
    assert!(
        lines[0].contains("not valid for name \"other.test\""),
        "{}",
        lines[0]
    );
    s.settle();
    assert_eq!(s.requests(), 0);
}

#[test]
fn self_signed_ca_certificate_listed_in_ca_file_is_trusted() {
    let pki = Pki::new();
    let ca = pki.path("self-ca.pem");
    let s = TlsServer::start(pki.self_signed_server_config());
    let args = |name: &'static str| {
        vec![
            "--ssl".to_string(),
            "--ssl-verify".into(),
            "--ssl-ca-file".into(),
            ca.clone(),
            "--tls-server-name".into(),
            name.into(),
            "--num-conns".into(),
            "2".into(),
            "--timeout".into(),
            "5".into(),
        ]
    };
    let ok = args("localhost");
    let ok: Vec<&str> = ok.iter().map(String::as_str).collect();
    let r = run_ok(s.port(), &ok);
    assert_eq!(r.totals(), (2, 2, 2));
    assert_eq!(r.error("total"), 0);
    let bad = args("other.test");
    let bad: Vec<&str> = bad.iter().map(String::as_str).collect();
    let r = run_ok(s.port(), &bad);
    assert_eq!(r.totals(), (2, 0, 0));
    assert_eq!(r.error("other"), 2);
    // Not listed: the CA-signed chain's CA does not vouch for it.
    let other_ca = pki.path("ca.pem");
    let r = run_ok(
        s.port(),
        &[
            "--ssl",
            "--ssl-verify",
            "--ssl-ca-file",
            &other_ca,
            "--tls-server-name",
            "localhost",
            "--num-conns",
            "2",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (2, 0, 0));
    assert_eq!(r.error("other"), 2);
}

// ---- --ssl-protocol ----

#[test]
fn pinned_protocol_versions_are_negotiated() {
    let pki = Pki::new();
    for (arg, version) in [
        ("TLSv1.2", ProtocolVersion::TLSv1_2),
        ("TLSv1.3", ProtocolVersion::TLSv1_3),
    ] {
        let s = TlsServer::start(pki.server_config(false));
        // --ssl-protocol implies --ssl.
        let r = run_ok(
            s.port(),
            &[
                "--ssl-protocol",
                arg,
                "--num-conns",
                "2",
                "--num-calls",
                "2",
                "--timeout",
                "5",
                "-v",
            ],
        );
        assert_eq!(r.totals(), (2, 4, 4), "{arg}");
        assert_eq!(r.error("total"), 0, "{arg}");
        assert_eq!(tls_line(&r), (2, 0), "{arg}");
        s.settle();
        let hs = s.handshakes();
        assert_eq!(hs.len(), 2, "{arg}");
        assert!(
            hs.iter().all(|h| h.version == Some(version)),
            "{arg}: {hs:?}"
        );
    }
}

#[test]
fn tls_1_1_is_an_option_error() {
    let msg = assert_option_error(&["--ssl-protocol", "TLSv1.1"], "TLSv1.1");
    assert!(msg.contains("not offered by rustls"), "{msg}");
}

// ---- client certificates ----

#[test]
fn client_certificate_is_sent_when_the_server_requires_one() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(true));
    let (cert, key) = (pki.path("client.pem"), pki.path("client.key"));
    let r = run_ok(
        s.port(),
        &[
            "--ssl",
            "--ssl-certificate",
            &cert,
            "--ssl-key",
            &key,
            "--num-conns",
            "3",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (3, 3, 3));
    assert_eq!(r.error("total"), 0);
    s.settle();
    let hs = s.handshakes();
    assert_eq!(hs.len(), 3);
    assert!(hs.iter().all(|h| h.client_cert), "{hs:?}");
    assert!(s.failures().is_empty(), "{:?}", s.failures());
}

#[test]
fn missing_client_certificate_fails_every_connection() {
    let pki = Pki::new();
    for proto in ["TLSv1.3", "TLSv1.2"] {
        let s = TlsServer::start(pki.server_config(true));
        let (code, stdout, stderr) = run_code(
            s.port(),
            &[
                "--ssl-protocol",
                proto,
                "--num-conns",
                "3",
                "--rate",
                "100",
                "--timeout",
                "5",
            ],
        );
        assert_eq!(
            code,
            Some(0),
            "{proto}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        let r = Report {
            text: stdout,
            stderr,
        };
        assert_eq!(r.totals().2, 0, "{proto}: {}", r.text);
        assert_eq!(r.error("total"), 3, "{proto}: {}", r.text);
        assert_eq!(
            r.error("other") + r.error("connreset"),
            3,
            "{proto}: {}",
            r.text
        );
        if proto == "TLSv1.2" {
            // The server's alert ends the client's handshake: reported once.
            let lines = handshake_failed_lines(&r.stderr);
            assert_eq!(lines.len(), 1, "stderr:\n{}", r.stderr);
            assert!(lines[0].contains("CertificateRequired"), "{}", lines[0]);
        }
        s.settle();
        assert_eq!(s.requests(), 0, "{proto}");
        assert_eq!(s.failures().len(), 3, "{proto}: {:?}", s.failures());
    }
}

/// In TLS 1.3 the client's handshake is complete once it sends its Finished; a server
/// that then rejects the (missing) client certificate does so with an alert that
/// arrives while rshperf reads the reply.
#[test]
fn rejected_tls13_client_auth_is_explained_on_stderr() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(true));
    let (code, stdout, stderr) = run_code(
        s.port(),
        &[
            "--ssl-protocol",
            "TLSv1.3",
            "--num-conns",
            "3",
            "--rate",
            "100",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let r = Report {
        text: stdout,
        stderr,
    };
    assert_eq!(r.error("other"), 3, "{}", r.text);
    let lines: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("rshperf: ") && l.contains("CertificateRequired"))
        .collect();
    assert_eq!(lines.len(), 1, "stderr:\n{}", r.stderr);
}

// ---- --ssl against servers that do not speak TLS ----

/// A plain HTTP server that answers whatever arrives first with `400` and closes, as
/// HTTP servers do when a ClientHello reaches them. Counts connections.
fn plain_http_server() -> (u16, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let count = Arc::new(AtomicU64::new(0));
    let c = Arc::clone(&count);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            c.fetch_add(1, Ordering::SeqCst);
            thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                let mut buf = [0u8; 4096];
                if stream.read(&mut buf).is_ok_and(|n| n > 0) {
                    let _ = stream.write_all(
                        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\
                          Connection: close\r\n\r\n",
                    );
                }
            });
        }
    });
    (port, count)
}

#[test]
fn ssl_against_a_plain_http_server_fails_every_connection() {
    let (port, accepted) = plain_http_server();
    let (code, stdout, stderr) = run_code(
        port,
        &[
            "--ssl",
            "--num-conns",
            "4",
            "--rate",
            "100",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let r = Report {
        text: stdout,
        stderr,
    };
    assert_eq!(r.totals(), (4, 0, 0));
    assert_eq!(r.error("total"), 4, "{}", r.text);
    assert_eq!(r.error("other") + r.error("connreset"), 4, "{}", r.text);
    assert!(r.text.contains("Reply status:"), "{}", r.text);
    assert_eq!(handshake_failed_lines(&r.stderr).len(), 1, "{}", r.stderr);
    assert_eq!(accepted.load(Ordering::SeqCst), 4);
}

#[test]
fn ssl_against_a_closed_port_is_connrefused() {
    let r = run_ok(
        closed_port(),
        &["--ssl", "--num-conns", "3", "--rate", "100", "-v"],
    );
    assert_eq!(r.totals(), (3, 0, 0));
    assert_eq!(r.error("connrefused"), 3);
    assert_eq!(r.error("total"), 3);
    assert_eq!(tls_line(&r), (0, 0));
    assert!(handshake_failed_lines(&r.stderr).is_empty(), "{}", r.stderr);
}

// ---- --ssl-ciphers ----

#[test]
fn a_tls12_cipher_suite_is_pinned() {
    let pki = Pki::new();
    // rcgen keys are ECDSA P-256, so the server can use ECDHE-ECDSA suites.
    for (name, suite) in [
        (
            "ECDHE-ECDSA-AES128-GCM-SHA256",
            CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        ),
        (
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        ),
    ] {
        let s = TlsServer::start(pki.server_config(false));
        let r = run_ok(
            s.port(),
            &[
                "--ssl",
                "--ssl-ciphers",
                name,
                "--num-conns",
                "2",
                "--timeout",
                "5",
            ],
        );
        assert_eq!(r.totals(), (2, 2, 2), "{name}");
        assert_eq!(r.error("total"), 0, "{name}");
        s.settle();
        let hs = s.handshakes();
        assert_eq!(hs.len(), 2, "{name}");
        for h in &hs {
            assert_eq!(h.suite, Some(suite), "{name}");
            assert_eq!(h.version, Some(ProtocolVersion::TLSv1_2), "{name}");
        }
    }
}

#[test]
fn an_unsupported_only_cipher_list_is_an_option_error() {
    let msg = assert_option_error(
        &["--ssl", "--ssl-ciphers", "RC4-MD5:DES-CBC3-SHA"],
        "--ssl-ciphers",
    );
    assert!(
        msg.contains("RC4-MD5") && msg.contains("DES-CBC3-SHA"),
        "{msg}"
    );
    assert!(msg.contains("unsupported"), "{msg}");
}

// ---- --json ----

#[test]
fn json_counts_full_and_resumed_handshakes() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let r = run_ok(
        s.port(),
        &[
            "--ssl",
            "--wsess=3,4,0",
            "--http-version",
            "1.0",
            "--rate",
            "0",
            "--timeout",
            "5",
            "--json=-",
        ],
    );
    let doc: Value = serde_json::from_str(&r.text).expect("stdout is one JSON document");
    assert_eq!(doc["tls_handshakes"]["full"], 3, "{}", r.text);
    assert_eq!(doc["tls_handshakes"]["resumed"], 9, "{}", r.text);
    assert_eq!(doc["errors"]["total"], 0, "{}", r.text);
    s.settle();
    assert_eq!(s.kinds(), (3, 9));

    // Request-oriented connections: all full.
    let s = TlsServer::start(pki.server_config(false));
    let r = run_ok(
        s.port(),
        &["--ssl", "--num-conns", "4", "--timeout", "5", "--json=-"],
    );
    let doc: Value = serde_json::from_str(&r.text).expect("stdout is one JSON document");
    assert_eq!(doc["tls_handshakes"]["full"], 4, "{}", r.text);
    assert_eq!(doc["tls_handshakes"]["resumed"], 0, "{}", r.text);
}
