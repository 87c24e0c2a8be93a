//! `--wsesspage` end to end: rshperf browses page trees served by an in-process server
//! that records every path, and each test compares the exact requests (which, how
//! many, in which order, on how many connections) and the report's session block with
//! what that server saw.

use std::time::Duration;

use crate::support::page_server::{Doc, Framing, PageServer};
use crate::support::{run, run_ok, Report, HANG_GUARD};

/// `Session rate` line: (completed, total).
fn sessions_done(r: &Report) -> (u64, u64) {
    let n = r.nums("Session rate [sess/s]:");
    (n[4] as u64, n[5] as u64)
}

fn conns_per_session(r: &Report) -> f64 {
    r.nums("Session: avg")[0]
}

fn histogram(r: &Report) -> Vec<u64> {
    r.nums("Session length histogram:")
        .into_iter()
        .map(|x| x as u64)
        .collect()
}

/// A histogram with `sessions` sessions of `replies` replies each.
fn one_bar(replies: usize, sessions: u64) -> Vec<u64> {
    let mut h = vec![0; replies + 1];
    h[replies] = sessions;
    h
}

fn png(name: &str) -> Doc {
    Doc::typed("image/png", format!("PNG{name}").as_bytes())
}

/// A page using every way of naming an object, written 7 bytes at a time so tags and
/// attribute values arrive split across reads.
fn index(port: u16) -> Doc {
    Doc::html(&format!(
        "<!DOCTYPE html>\n<html><head><title>page <img src=\"title.png\"></title></head><body>\n\
<img src=\"a.png\" alt=\"a\">\n\
<IMG SRC=\"/page/b.png\">\n\
<img src=\"http://127.0.0.1:{port}/page/abs.png\">\n\
<img src=\"HTTP://127.0.0.1/page/abs-noport.png#frag\">\n\
<img src=\"http://elsewhere.invalid/x.png\">\n\
<img src=\"//elsewhere.invalid/y.png\">\n\
<img src=\"http://127.0.0.1:1/page/other-port.png\">\n\
<iframe src=\"f.html\"><img src=\"iframe-text.png\"></iframe>\n\
<frameset><frame src=\"g.html\"></frameset>\n\
<a href=\"not-fetched.html\">a link</a>\n\
<script>document.write('<img src=\"script.png\">')</script>\n\
<!-- <img src=\"comment.png\"> -->\n\
<img data-x=\"<img src=no.png>\" src='sub/c.png'>\n\
<img src=\"a.png\">\n\
</body></html>\n"
    ))
    .framed(Framing::Pieces(7))
}

/// The tree around `index`: frames are pages too (g.html embeds one more object and
/// one the view already fetched).
fn tree(port: u16) -> Vec<(&'static str, Doc)> {
    vec![
        ("/page/index.html", index(port)),
        ("/page/a.png", png("a")),
        ("/page/b.png", png("b")),
        ("/page/abs.png", png("abs")),
        ("/page/abs-noport.png", png("abs2")),
        ("/page/sub/c.png", png("c")),
        (
            "/page/f.html",
            Doc::html("<html><body>frame f</body></html>"),
        ),
        (
            "/page/g.html",
            Doc::html("<html><body><img src=a.png><IMG src=g-only.png></body></html>"),
        ),
        ("/page/g-only.png", png("g")),
    ]
}

/// One view of `tree`, in the order the calls are issued: the page, its objects in
/// document order, then what the frame g.html adds once it arrives.
const VIEW: [&str; 9] = [
    "/page/index.html",
    "/page/a.png",
    "/page/b.png",
    "/page/abs.png",
    "/page/abs-noport.png",
    "/page/f.html",
    "/page/g.html",
    "/page/sub/c.png",
    "/page/g-only.png",
];

fn repeat(view: &[&str], times: usize) -> Vec<String> {
    (0..times)
        .flat_map(|_| view.iter().map(|s| s.to_string()))
        .collect()
}

#[test]
fn sequential_sessions_fetch_exactly_the_embedded_objects() {
    let srv = PageServer::start(tree);
    let r = run_ok(
        srv.port(),
        &[
            "--uri",
            "/page/index.html",
            "--wsesspage=3,2,0",
            "--timeout",
            "5",
        ],
    );
    // One connection per session, the calls in order: two views each.
    let hits = srv.hits();
    for conn in 0..3 {
        let paths: Vec<String> = hits
            .iter()
            .filter(|h| h.conn == conn)
            .map(|h| h.path.clone())
            .collect();
        assert_eq!(paths, repeat(&VIEW, 2), "connection {conn}");
    }
    assert_eq!(srv.connections(), 3);
    assert_eq!(r.totals(), (3, 54, 54));
    assert_eq!(r.status(), [0, 54, 0, 0, 0]);
    assert_eq!(r.error("total"), 0);
    assert_eq!(sessions_done(&r), (3, 3));
    assert_eq!(conns_per_session(&r), 1.0);
    assert_eq!(histogram(&r), one_bar(18, 3));
    assert!(
        r.text.contains(" --uri=/page/index.html ") && r.text.contains(" --wsesspage=3,2,0.000"),
        "{}",
        r.text
    );
}

#[test]
fn sessions_at_a_rate_each_fetch_the_whole_tree() {
    let srv = PageServer::start(tree);
    let r = run_ok(
        srv.port(),
        &[
            "--uri",
            "/page/index.html",
            "--wsesspage=6,2,0",
            "--rate",
            "40",
            "--timeout",
            "5",
        ],
    );
    let counts = srv.counts();
    assert_eq!(counts.len(), VIEW.len(), "{counts:?}");
    for p in VIEW {
        assert_eq!(counts.get(p), Some(&12), "{p}: {counts:?}");
    }
    assert_eq!(r.totals(), (6, 108, 108));
    assert_eq!(sessions_done(&r), (6, 6));
    assert_eq!(histogram(&r), one_bar(18, 6));
}

#[test]
fn redirects_are_followed_within_the_view() {
    let srv = PageServer::start(|port| {
        vec![
            (
                "/start",
                Doc::redirect(
                    302,
                    &format!("http://127.0.0.1:{port}/page/index2.html"),
                    "<html><body><img src=\"redirect-body.png\"></body></html>",
                ),
            ),
            (
                "/page/index2.html",
                Doc::html("<img src=x.png><img src=../top.png>"),
            ),
            ("/page/x.png", png("x")),
            ("/top.png", png("top")),
            (
                "/away",
                Doc::redirect(301, "http://elsewhere.invalid/", "<img src=a.png>"),
            ),
            ("/loop", Doc::redirect(307, "/loop", "")),
            ("/hop", Doc::redirect(303, "loop", "")),
        ]
    });
    let go = |uri: &str| {
        run_ok(
            srv.port(),
            &["--uri", uri, "--wsesspage=1,2,0", "--timeout", "5"],
        )
    };
    let r = go("/start");
    let view = ["/start", "/page/index2.html", "/page/x.png", "/top.png"];
    assert_eq!(srv.paths(), repeat(&view, 2));
    assert_eq!(r.status(), [0, 6, 2, 0, 0]);
    assert_eq!(histogram(&r), one_bar(8, 1));
    let before = srv.paths().len();
    let r = go("/away");
    assert_eq!(srv.paths()[before..], repeat(&["/away"], 2));
    assert_eq!(r.status(), [0, 0, 2, 0, 0]);
    let before = srv.paths().len();
    go("/loop");
    assert_eq!(srv.paths()[before..], repeat(&["/loop"], 2));
    let before = srv.paths().len();
    let r = go("/hop");
    assert_eq!(srv.paths()[before..], repeat(&["/hop", "/loop"], 2));
    assert_eq!(sessions_done(&r), (1, 1));
}

#[test]
fn only_html_replies_are_scanned_and_empty_pages_end_the_view() {
    let body = "<html><body><img src=\"x.png\"></body></html>";
    let srv = PageServer::start(|_| {
        vec![
            ("/plain.txt", Doc::typed("text/plain", body.as_bytes())),
            ("/pic.png", Doc::typed("image/png", body.as_bytes())),
            (
                "/gzip.html",
                Doc {
                    headers: vec![
                        "Content-Type: text/html".into(),
                        "Content-Encoding: gzip".into(),
                    ],
                    ..Doc::html(body)
                },
            ),
            (
                "/untyped.html",
                Doc {
                    headers: Vec::new(),
                    ..Doc::html(body)
                },
            ),
            (
                "/charset.html",
                Doc::typed("Text/HTML ; charset=ISO-8859-1", b"<img src=\"\xe9.png\">"),
            ),
            (
                "/empty.html",
                Doc::html("<html><body>nothing</body></html>"),
            ),
            ("/zero.html", Doc::html("")),
        ]
    });
    for uri in [
        "/plain.txt",
        "/pic.png",
        "/gzip.html",
        "/untyped.html",
        "/empty.html",
        "/zero.html",
        "/missing.html",
    ] {
        let before = srv.paths().len();
        let r = run_ok(
            srv.port(),
            &["--uri", uri, "--wsesspage=2,2,0", "--timeout", "5"],
        );
        assert_eq!(srv.paths()[before..], repeat(&[uri], 4), "{uri}");
        assert_eq!(sessions_done(&r), (2, 2), "{uri}");
        assert_eq!(histogram(&r), one_bar(2, 2), "{uri}");
    }
    // Latin-1 bytes are decoded as UTF-8 (U+FFFD), then percent-encoded.
    let before = srv.paths().len();
    run_ok(
        srv.port(),
        &[
            "--uri",
            "/charset.html",
            "--wsesspage=1,1,0",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(srv.paths()[before..], ["/charset.html", "/%EF%BF%BD.png"]);
}

#[test]
fn huge_pages_are_scanned_to_the_end_and_endless_tokens_are_bounded() {
    let filler = "<p>lorem ipsum dolor sit amet</p>\n".repeat(64 * 1024);
    let big = format!("<img src=first.png>{filler}<img src=last.png>");
    let endless = format!("<img src=before.png><!-- {}", "x".repeat(3 << 20));
    let srv = PageServer::start(move |_| {
        vec![
            ("/big.html", Doc::html(&big).framed(Framing::Chunked(4000))),
            ("/endless.html", Doc::html(&endless)),
            ("/first.png", png("1")),
            ("/last.png", png("2")),
            ("/before.png", png("b")),
        ]
    });
    let r = run_ok(
        srv.port(),
        &["--uri", "/big.html", "--wsesspage=1,2,0", "--timeout", "20"],
    );
    assert_eq!(
        srv.paths(),
        repeat(&["/big.html", "/first.png", "/last.png"], 2)
    );
    assert_eq!(histogram(&r), one_bar(6, 1));
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);

    let before = srv.paths().len();
    let r = run_ok(
        srv.port(),
        &[
            "--uri",
            "/endless.html",
            "--wsesspage=2,1,0",
            "--timeout",
            "20",
        ],
    );
    assert_eq!(
        srv.paths()[before..],
        repeat(&["/endless.html", "/before.png"], 2)
    );
    assert_eq!(sessions_done(&r), (2, 2));
    assert_eq!(
        r.stderr
            .matches("rshperf: warning: --wsesspage: a page holds a tag or comment longer than 1 MiB; the rest of it is not scanned (reported once)")
            .count(),
        1,
        "{}",
        r.stderr
    );
}

#[test]
fn think_time_separates_the_views() {
    let srv = PageServer::start(|_| {
        vec![
            ("/p.html", Doc::html("<img src=o.png>")),
            ("/o.png", png("o")),
        ]
    });
    let r = run_ok(
        srv.port(),
        &["--uri", "/p.html", "--wsesspage=1,3,0.3", "--timeout", "5"],
    );
    let hits = srv.hits();
    let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["/p.html", "/o.png"].repeat(3));
    for k in [2, 4] {
        let gap = hits[k].at.duration_since(hits[k - 1].at);
        // Not early; the think time's end is tested on simulated time
        // (`engine::event_loop::timers`), here only a hang guard.
        assert!(
            gap >= Duration::from_millis(290) && gap < HANG_GUARD,
            "gap before view {}: {gap:?}",
            k / 2
        );
    }
    let life = r.nums("Session lifetime [s]:")[0];
    assert!((0.6..HANG_GUARD.as_secs_f64()).contains(&life), "{life}");
    assert!(r.text.contains(" --wsesspage=1,3,0.300"), "{}", r.text);
}

#[test]
fn connection_limits_and_http10_spread_the_objects() {
    let srv = PageServer::start(|_| {
        vec![
            (
                "/p.html",
                Doc::html("<img src=1.png><img src=2.png><img src=3.png>"),
            ),
            ("/1.png", png("1")),
            ("/2.png", png("2")),
            ("/3.png", png("3")),
        ]
    });
    let view = ["/p.html", "/1.png", "/2.png", "/3.png"];
    let r = run_ok(
        srv.port(),
        &[
            "--uri",
            "/p.html",
            "--wsesspage=2,1,0",
            "--http-version",
            "1.0",
            "--timeout",
            "5",
        ],
    );
    // HTTP/1.0: one connection per call.
    assert_eq!(srv.connections(), 8);
    let mut seen = srv.paths();
    seen.sort();
    let mut want = repeat(&view, 2);
    want.sort();
    assert_eq!(seen, want);
    assert_eq!(r.totals(), (8, 8, 8));
    assert_eq!(conns_per_session(&r), 4.0);

    // One call at a time on at most two connections per session.
    let conns = srv.connections();
    let r = run_ok(
        srv.port(),
        &[
            "--uri",
            "/p.html",
            "--wsesspage=1,2,0",
            "--max-connections",
            "2",
            "--max-piped-calls",
            "1",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(srv.connections() - conns, 2);
    assert_eq!(srv.paths().len(), 16);
    assert_eq!(conns_per_session(&r), 2.0);
    assert_eq!(histogram(&r), one_bar(8, 1));
}

#[test]
fn verbose_lines_name_every_fetch_and_every_ignored_uri() {
    let srv = PageServer::start(tree);
    let r = run_ok(
        srv.port(),
        &["--uri", "/page/index.html", "--wsesspage=1,1,0", "-v", "-v"],
    );
    let fetching: Vec<&str> = r
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("rshperf: fetching `"))
        .map(|l| l.trim_end_matches('\''))
        .collect();
    assert_eq!(fetching, VIEW);
    assert_eq!(srv.paths(), VIEW);
    let ignored: Vec<&str> = r
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("rshperf: ignoring absolute URI `"))
        .map(|l| l.trim_end_matches('\''))
        .collect();
    let port = srv.port();
    assert_eq!(
        ignored,
        [
            "http://elsewhere.invalid/x.png".to_string(),
            "//elsewhere.invalid/y.png".to_string(),
            "http://127.0.0.1:1/page/other-port.png".to_string(),
        ],
        "port {port}"
    );
    // --print-request shows the same requests.
    let r = run_ok(
        srv.port(),
        &[
            "--uri",
            "/page/index.html",
            "--wsesspage=1,1,0",
            "--print-request=header",
        ],
    );
    let requested: Vec<&str> = r
        .text
        .lines()
        .filter_map(|l| l.split_once(":GET ").map(|(_, rest)| rest))
        .map(|l| l.trim_end_matches('\r').trim_end_matches(" HTTP/1.1"))
        .collect();
    assert_eq!(requested, VIEW);
}

#[test]
fn failure_status_on_an_object_fails_the_session() {
    let srv = PageServer::start(|_| {
        vec![(
            "/p.html",
            Doc::html("<img src=gone.png><img src=gone2.png>"),
        )]
    });
    let r = run_ok(
        srv.port(),
        &["--uri", "/p.html", "--wsesspage=2,2,0", "--timeout", "5"],
    );
    // A 404 object is a reply like any other.
    assert_eq!(r.status(), [0, 4, 0, 8, 0]);
    assert_eq!(sessions_done(&r), (2, 2));
    let before = srv.paths().len();
    let r = run_ok(
        srv.port(),
        &[
            "--uri",
            "/p.html",
            "--wsesspage=2,2,0",
            "--failure-status",
            "404",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(sessions_done(&r), (0, 2));
    // Each session ends at its first 404: nothing of a second view is fetched.
    let paths = &srv.paths()[before..];
    assert_eq!(
        paths.iter().filter(|p| *p == "/p.html").count(),
        2,
        "{paths:?}"
    );
    // The page and the failing object: two replies each.
    assert_eq!(histogram(&r), one_bar(2, 2));
}

#[test]
fn page_uri_must_be_absolute() {
    let out = run(&[
        "--server",
        "127.0.0.1",
        "--uri",
        "page/index.html",
        "--wsesspage=1,1,0",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "rshperf: URI specified with --uri must be absolute\n"
    );
}
