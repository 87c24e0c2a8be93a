//! Request bodies and header lines from files (`--body-file`, `--content-type`,
//! `--header-file`, `--wsesslog` `contents=` of any length), checked against what an
//! in-process server received.

use crate::support::recorder::{Opts, Recorder, TempFile};
use crate::support::server::{Behavior, Server};
use crate::support::{run, run_ok};

/// A body larger than the send queue's copy threshold (shared, written with writev),
/// with every byte value.
fn big_body() -> Vec<u8> {
    (0..100_003u32).map(|i| (i * 7 % 251) as u8).collect()
}

#[test]
fn body_file_arrives_whole_with_its_length_and_type() {
    let body = big_body();
    let f = TempFile::new("body", &body);
    let srv = Recorder::start(Opts::default());
    let file = format!("--body-file={}", f.path);
    let r = run_ok(
        srv.port(),
        &[
            &file,
            "--content-type",
            "application/octet-stream",
            "--num-conns",
            "3",
            "--num-calls",
            "2",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (3, 6, 6));
    let reqs = srv.requests();
    assert_eq!(reqs.len(), 6);
    for q in &reqs {
        assert_eq!(q.method, "POST", "a body implies POST");
        assert_eq!(q.header("Content-Length"), Some("100003"));
        assert_eq!(q.header("Content-Type"), Some("application/octet-stream"));
        assert!(q.body == body, "body bytes differ from the file");
    }
    // Request bytes counted in the report include the body.
    let sent = r.nums("Net I/O:");
    assert!(sent[0] > 0.0);
}

#[test]
fn body_file_combines_with_method_sessions_and_wlog() {
    let body = b"k=v&small=1".to_vec();
    let f = TempFile::new("small", &body);
    let log = TempFile::new("wlog", b"/a\0/b\0/c\0");
    let srv = Recorder::start(Opts::default());
    let file = format!("--body-file={}", f.path);
    let wlog = format!("--wlog=n,{}", log.path);
    run_ok(
        srv.port(),
        &[
            &file,
            "--method",
            "PUT",
            &wlog,
            "--num-conns",
            "1",
            "--num-calls",
            "3",
        ],
    );
    let reqs = srv.requests();
    let uris: Vec<&str> = reqs.iter().map(|q| q.uri.as_str()).collect();
    assert_eq!(uris, ["/a", "/b", "/c"]);
    for q in &reqs {
        assert_eq!((q.method.as_str(), q.body.as_slice()), ("PUT", &body[..]));
        assert_eq!(q.header("Content-Length"), Some("11"));
    }
    let srv = Recorder::start(Opts::default());
    let r = run_ok(
        srv.port(),
        &[&file, "--wsess=2,3,0", "--rate", "10", "--timeout", "5"],
    );
    assert_eq!(r.totals().2, 6);
    let reqs = srv.requests();
    assert_eq!(reqs.len(), 6);
    assert!(reqs.iter().all(|q| q.method == "POST" && q.body == body));
}

#[test]
fn header_file_lines_arrive_in_order() {
    let f = TempFile::new(
        "hdr",
        b"# sent with every request\r\nX-One: 1\r\n\r\nAuthorization: Bearer abc.def\nX-Three:   three  \n",
    );
    let srv = Recorder::start(Opts::default());
    let file = format!("--header-file={}", f.path);
    run_ok(srv.port(), &[&file, "--num-conns", "2", "--num-calls", "2"]);
    let reqs = srv.requests();
    assert_eq!(reqs.len(), 4);
    for q in &reqs {
        let names: Vec<&str> = q.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["User-Agent", "Host", "X-One", "Authorization", "X-Three"]
        );
        assert_eq!(q.header("Authorization"), Some("Bearer abc.def"));
        assert_eq!(q.header("X-Three"), Some("three"));
        assert_eq!(q.method, "GET");
        assert!(q.body.is_empty());
    }
}

#[test]
fn malformed_header_file_is_an_option_error_naming_the_line() {
    let f = TempFile::new("badhdr", b"X-Good: 1\n# fine\nthis line has no colon\n");
    let file = format!("--header-file={}", f.path);
    let out = run(&["--server", "127.0.0.1", "--port", "9", &file]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "rshperf: --header-file {}: line 3: expected 'Name: value'",
            f.path
        )),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing runs");
    let out = run(&[
        "--server",
        "127.0.0.1",
        "--port",
        "9",
        "--body-file=/nonexistent/body",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--body-file /nonexistent/body: cannot read it"));
}

#[test]
fn wsesslog_contents_have_no_10000_character_limit() {
    let long: String = (0..25_000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let sess = format!("/big method=POST contents=\"{long}\"\n/after\n");
    let f = TempFile::new("longsess", sess.as_bytes());
    let hdr = TempFile::new("sesshdr", b"X-Sess: yes\n");
    let srv = Recorder::start(Opts::default());
    let spec = format!("--wsesslog=2,0,{}", f.path);
    let file = format!("--header-file={}", hdr.path);
    let r = run_ok(srv.port(), &[&spec, &file, "--rate", "0", "--timeout", "5"]);
    assert_eq!(r.totals(), (2, 4, 4));
    let reqs = srv.requests();
    let big: Vec<_> = reqs.iter().filter(|q| q.uri == "/big").collect();
    assert_eq!(big.len(), 2);
    for q in big {
        assert_eq!(q.body.len(), 25_000);
        assert!(q.body == long.as_bytes());
        assert_eq!(q.header("Content-length"), Some("25000"));
    }
    assert!(reqs.iter().all(|q| q.header("X-Sess") == Some("yes")));
}

#[test]
fn a_closing_reply_before_the_body_is_written_is_read_and_counted() {
    // The server answers as soon as it has the head, says it closes, and closes with
    // the body unread (the kernel resets the connection): rshperf, still writing the
    // body, must read the reply the server sent before its reset, count it complete
    // and end the connection as the server said, not fail on the write.
    let body = vec![b'x'; 1 << 20];
    let f = TempFile::new("early", &body);
    let file = format!("--body-file={}", f.path);
    let reply = b"HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\nContent-Length: 10\r\n\r\n0123456789";
    let s = Server::start(Behavior::EarlyClose(reply.to_vec()));
    let r = run_ok(
        s.port(),
        &[
            &file,
            "--method",
            "POST",
            "--num-conns",
            "20",
            "--rate",
            "100",
        ],
    );
    assert_eq!(r.totals(), (20, 20, 20), "{}", r.text);
    assert_eq!(r.status(), [0, 0, 0, 20, 0]);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    // Every byte of each reply: 73 header bytes, 10 body bytes.
    assert_eq!(r.nums("Reply size [B]:"), vec![73.0, 10.0, 0.0, 83.0]);
    assert_eq!(s.requests(), 20);
}
