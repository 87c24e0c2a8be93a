//! `--unix-socket`: the same run over a unix domain socket, counted by an in-process
//! server; failures to connect are `connrefused`.

use crate::support::unix_server::UnixServer;
use crate::support::{run, Report};

fn run_unix(path: &str, args: &[&str]) -> Report {
    let sock = format!("--unix-socket={path}");
    let mut all = vec!["--server", "app.internal", &sock];
    all.extend_from_slice(args);
    let out = run(&all);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{all:?}\n{text}\n{stderr}");
    Report { text, stderr }
}

#[test]
fn counts_over_a_unix_socket_match_the_server() {
    let srv = UnixServer::start("counts");
    let r = run_unix(
        &srv.path,
        &[
            "--rate",
            "200",
            "--num-conns",
            "40",
            "--num-calls",
            "3",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (40, 120, 120));
    assert_eq!(srv.connections(), 40);
    assert_eq!(srv.requests(), 120);
    assert_eq!(r.status(), [0, 120, 0, 0, 0]);
    assert_eq!(r.error("total"), 0);
    // --server names the Host: (never resolved).
    let head = srv.counts.first_head.lock().expect("lock").clone();
    assert!(head.lines().any(|l| l == "Host: app.internal"), "{head}");
    assert!(r.text.contains(" --unix-socket="), "echo line: {}", r.text);
}

#[test]
fn sessions_over_a_unix_socket() {
    let srv = UnixServer::start("sess");
    let r = run_unix(
        &srv.path,
        &["--wsess=5,4,0", "--rate", "50", "--timeout", "5"],
    );
    assert_eq!(r.totals().2, 20);
    assert_eq!(srv.requests(), 20);
}

#[test]
fn missing_or_dead_socket_is_connrefused() {
    let gone = std::env::temp_dir().join(format!("rshperf-ux-none-{}.sock", std::process::id()));
    let r = run_unix(
        gone.to_str().expect("utf8"),
        &["--num-conns", "5", "--rate", "100"],
    );
    assert_eq!(r.totals(), (5, 0, 0));
    assert_eq!(r.error("connrefused"), 5);
    // A socket file nobody listens on any more.
    let dead = std::env::temp_dir().join(format!("rshperf-ux-dead-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&dead);
    drop(std::os::unix::net::UnixListener::bind(&dead).expect("bind"));
    let r = run_unix(
        dead.to_str().expect("utf8"),
        &["--num-conns", "3", "--rate", "100"],
    );
    let _ = std::fs::remove_file(&dead);
    assert_eq!(r.error("connrefused"), 3);
    assert_eq!(r.error("total"), 3);
}

#[test]
fn unix_socket_refuses_options_that_need_tcp() {
    for extra in ["--hog", "--myaddr=127.0.0.1"] {
        let out = run(&["--unix-socket=/tmp/x.sock", extra]);
        assert_eq!(out.status.code(), Some(1), "{extra}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--unix-socket connects to one socket file"),
            "{err}"
        );
    }
}

#[test]
fn a_full_backlog_fails_connections_without_spinning() {
    use socket2::{Domain, SockAddr, Socket, Type};
    let path = std::env::temp_dir().join(format!("rshperf-ux-full-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    // A listener with the smallest backlog that never accepts.
    let sock = Socket::new(Domain::UNIX, Type::STREAM, None).expect("socket");
    sock.bind(&SockAddr::unix(&path).expect("addr"))
        .expect("bind");
    sock.listen(0).expect("listen");
    let started = std::time::Instant::now();
    let r = run_unix(
        path.to_str().expect("utf8"),
        &["--num-conns", "20", "--rate", "1000", "--timeout", "1"],
    );
    let _ = std::fs::remove_file(&path);
    assert_eq!(r.totals().2, 0);
    assert_eq!(r.error("total"), 20, "{}", r.text);
    // Connections past the backlog fail at once (EAGAIN), the queued ones time out.
    assert!(r.error("other") >= 10, "{}", r.text);
    assert_eq!(r.error("other") + r.error("client-timo"), 20, "{}", r.text);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    drop(sock);
}

#[test]
fn tls_over_a_unix_socket_verifies_the_server_named_by_server() {
    use crate::support::tls_server::{Pki, TlsServer};
    let pki = Pki::new();
    let path = std::env::temp_dir()
        .join(format!("rshperf-ux-tls-{}.sock", std::process::id()))
        .to_string_lossy()
        .into_owned();
    let s = TlsServer::start_unix(pki.server_config(false), &path);
    let ca = pki.path("ca.pem");
    let sock = format!("--unix-socket={path}");
    let out = run(&[
        "--server",
        "localhost",
        &sock,
        "--ssl",
        "--ssl-verify",
        "--ssl-ca-file",
        &ca,
        "--num-conns",
        "4",
        "--num-calls",
        "2",
        "--rate",
        "100",
        "--timeout",
        "5",
    ]);
    let _ = std::fs::remove_file(&path);
    let r = Report {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(out.status.code(), Some(0), "{}\n{}", r.text, r.stderr);
    assert_eq!(r.totals(), (4, 8, 8));
    assert_eq!(r.error("total"), 0);
    s.settle();
    assert_eq!(s.requests(), 8);
    let hs = s.handshakes();
    assert_eq!(hs.len(), 4);
    assert!(
        hs.iter().all(|h| h.sni.as_deref() == Some("localhost")),
        "{hs:?}"
    );
}
