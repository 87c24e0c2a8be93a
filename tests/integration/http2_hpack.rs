//! `--http-version 2` request header compression (HPACK's dynamic table) and
//! refused streams, checked by the `h2` crate's server: the headers it decoded over
//! 1000 requests on one connection, under the default table and smaller or no
//! tables (SETTINGS_HEADER_TABLE_SIZE), and a stream refused with REFUSED_STREAM
//! sent again with its own headers.

use crate::support::h2_server::{H2Server, Opts};
use crate::support::recorder::TempFile;
use crate::support::{run_ok, Report};

/// `--wlog` URIs: short ones that stay in the table, long ones (more than a quarter
/// of a 4096-byte table) that never enter it, and enough of them to evict.
fn uris() -> Vec<String> {
    (0..40)
        .map(|i| match i % 8 {
            0 => format!("/long/{i}/{}", "x".repeat(1100)),
            _ => format!("/u/{i}.html"),
        })
        .collect()
}

/// Runs `calls` calls on one connection over `uris` in order (looping).
fn run_wlog(s: &H2Server, uris: &[String], calls: usize, burst: usize) -> Report {
    let log = TempFile::new("h2-wlog", uris.join("\0").as_bytes());
    let wlog = format!("--wlog=y,{}", log.path);
    let (calls, burst) = (calls.to_string(), burst.to_string());
    run_ok(
        s.port(),
        &[
            "--http-version",
            "2",
            "--timeout",
            "5",
            "--num-conns",
            "1",
            "--num-calls",
            &calls,
            "--burst-length",
            &burst,
            &wlog,
            "-v",
        ],
    )
}

/// The sorted paths of the requests the server answered (not refused).
fn answered(s: &H2Server) -> Vec<String> {
    let mut p: Vec<String> = s
        .seen()
        .iter()
        .filter(|q| !q.refused)
        .map(|q| q.path.clone())
        .collect();
    p.sort();
    p
}

/// The sorted paths of `calls` calls over `uris`.
fn expected(uris: &[String], calls: usize) -> Vec<String> {
    let mut p: Vec<String> = (0..calls).map(|i| uris[i % uris.len()].clone()).collect();
    p.sort();
    p
}

#[test]
fn a_thousand_requests_on_one_connection_decode_right_at_any_table_size() {
    let uris = uris();
    let mut per_request = Vec::new();
    for table in [None, Some(1024), Some(400), Some(0)] {
        let s = H2Server::start(Opts {
            table,
            ..Opts::default()
        });
        let r = run_wlog(&s, &uris, 1000, 10);
        assert_eq!(r.totals(), (1, 1000, 1000), "{table:?}: {}", r.text);
        assert_eq!(r.error("total"), 0, "{table:?}");
        assert_eq!(s.connections(), 1);
        assert_eq!(answered(&s), expected(&uris, 1000), "{table:?}");
        for q in s.seen() {
            assert_eq!(
                (q.method.as_str(), q.scheme.as_str(), q.authority.as_str()),
                ("GET", "http", "127.0.0.1"),
                "{table:?}"
            );
            assert_eq!(q.user_agent, "rshperf/0.1.0");
            assert_eq!(q.cookie, None);
        }
        // (wire, decoded) of the request header blocks: the decoded size does not
        // depend on the table.
        let c = r.nums("HTTP/2 header compression:");
        per_request.push((c[0], c[1]));
    }
    let decoded = per_request[0].1;
    assert!(
        per_request.iter().all(|&(_, d)| d == decoded),
        "{per_request:?}"
    );
    // A larger table, fewer bytes on the wire.
    let wire: Vec<f64> = per_request.iter().map(|&(w, _)| w).collect();
    assert!(
        wire[0] < wire[1] && wire[1] < wire[2] && wire[2] < wire[3],
        "{per_request:?}"
    );
}

#[test]
fn a_refused_stream_is_sent_again_with_its_own_headers() {
    let uris: Vec<String> = (0..30).map(|i| format!("/r/{i}")).collect();
    let s = H2Server::start(Opts {
        refuse_every: Some(3),
        ..Opts::default()
    });
    let r = run_wlog(&s, &uris, 30, 5);
    assert_eq!(r.error("total"), 0, "{}\n{}", r.text, r.stderr);
    assert_eq!(r.status()[1], 30, "{}", r.text);
    let seen = s.seen();
    let refused: Vec<&str> = seen
        .iter()
        .filter(|q| q.refused)
        .map(|q| q.path.as_str())
        .collect();
    assert!(refused.len() >= 10, "{refused:?}");
    // Every call answered exactly once, with its own path; every refused request
    // was one of them.
    let ok = answered(&s);
    assert_eq!(ok, expected(&uris, 30));
    assert!(refused.iter().all(|p| ok.iter().any(|o| o == p)));
    assert!(seen.iter().all(|q| q.authority == "127.0.0.1"));
}
