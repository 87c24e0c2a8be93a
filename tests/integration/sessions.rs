//! Session workloads (`--wsess`, `--wsesslog`) and URI generators (`--wlog`, `--wset`)
//! end to end: each test checks the report against what a recording server saw
//! (requests, methods, URIs, bodies, cookies, connections and timing).

use std::time::{Duration, Instant};

use crate::support::recorder::{Cookies, Opts, Recorder, Req, TempFile};
use crate::support::{run, run_ok, Report, HANG_GUARD};

/// The session file of docs/compatibility.md A.9c, with a shorter think time, and a
/// second template with a PUT whose body uses both quote kinds, escapes and a
/// continuation line.
const SESSIONS: &str = "# comment\n\
/echo think=0.05\n\
\t/1k.html\n\
\t/index.html\n\
/echo method=POST contents=\"a b\\nc\"\n\
\n\
\n\
# session 2\n\
/echo method=HEAD\n  /1k.html\n\
/put method=PUT contents='say \"hi\"'\\t\"it's\"\\\\x\" \"\\\n\
end think=0\n";

/// (method, URI, body) of the requests of each template of `SESSIONS`.
fn templates() -> [Vec<(&'static str, &'static str, Vec<u8>)>; 2] {
    [
        vec![
            ("GET", "/echo", vec![]),
            ("GET", "/1k.html", vec![]),
            ("GET", "/index.html", vec![]),
            ("POST", "/echo", b"a b\nc".to_vec()),
        ],
        vec![
            ("HEAD", "/echo", vec![]),
            ("GET", "/1k.html", vec![]),
            ("PUT", "/put", b"say \"hi\"\tit's\\x \nend".to_vec()),
        ],
    ]
}

fn seen(reqs: &[Req]) -> Vec<(String, String, Vec<u8>)> {
    reqs.iter()
        .map(|r| (r.method.clone(), r.uri.clone(), r.body.clone()))
        .collect()
}

fn want(t: &[(&str, &str, Vec<u8>)]) -> Vec<(String, String, Vec<u8>)> {
    t.iter()
        .map(|(m, u, b)| (m.to_string(), u.to_string(), b.clone()))
        .collect()
}

/// Runs rshperf against `srv` with `args`; asserts exit 0.
fn go(srv: &Recorder, args: &[&str]) -> Report {
    run_ok(srv.port(), args)
}

/// `Session rate` line: (completed, total).
fn sessions_done(r: &Report) -> (u64, u64) {
    let n = r.nums("Session rate [sess/s]:");
    (n[4] as u64, n[5] as u64)
}

fn histogram(r: &Report) -> Vec<u64> {
    r.nums("Session length histogram:")
        .into_iter()
        .map(|x| x as u64)
        .collect()
}

fn conns_per_session(r: &Report) -> f64 {
    r.nums("Session: avg")[0]
}

fn uris(reqs: &[Req]) -> Vec<String> {
    reqs.iter().map(|r| r.uri.clone()).collect()
}

/// Checks one session's requests against its template: order, methods, URIs, bodies
/// exact, and `Content-length` exactly when there is a body.
fn check_session(reqs: &[Req], template: &[(&str, &str, Vec<u8>)]) {
    assert_eq!(seen(reqs), want(template));
    for r in reqs {
        if r.body.is_empty() {
            assert_eq!(r.header("Content-length"), None, "{r:?}");
        } else {
            let h = r
                .headers
                .iter()
                .find(|(n, _)| n == "Content-length")
                .unwrap_or_else(|| panic!("no Content-length header in {r:?}"));
            assert_eq!(h.1, r.body.len().to_string());
        }
    }
}

#[test]
fn wsesslog_sequential_requests_match_the_file() {
    let f = TempFile::new("sess", SESSIONS.as_bytes());
    let srv = Recorder::start(Opts {
        echo: true,
        ..Opts::default()
    });
    let spec = format!("--wsesslog=3,0.01,{}", f.path);
    let r = go(&srv, &[&spec, "--rate", "0", "--timeout", "5"]);
    // Sequential: sessions 0, 1, 2 on connections 0, 1, 2, templates 0, 1, 0.
    let conns = srv.by_conn();
    assert_eq!(conns.len(), 3);
    let t = templates();
    check_session(&conns[0], &t[0]);
    check_session(&conns[1], &t[1]);
    check_session(&conns[2], &t[0]);
    assert_eq!(r.totals(), (3, 11, 11));
    assert_eq!(sessions_done(&r), (3, 3));
    assert_eq!(conns_per_session(&r), 1.0);
    assert_eq!(histogram(&r), vec![0, 0, 0, 1, 2]);
    assert_eq!(r.error("total"), 0);
    assert_eq!(r.status(), [0, 11, 0, 0, 0]);
    assert!(r.text.contains(" --wsesslog=3,0.010,"), "{}", r.text);
}

#[test]
fn wsesslog_at_a_rate_uses_templates_round_robin() {
    let f = TempFile::new("sess", SESSIONS.as_bytes());
    let srv = Recorder::start(Opts {
        echo: true,
        ..Opts::default()
    });
    let spec = format!("--wsesslog=4,0.05,{}", f.path);
    let r = go(&srv, &[&spec, "--rate", "20", "--timeout", "5"]);
    let t = templates();
    let conns = srv.by_conn();
    assert_eq!(conns.len(), 4);
    let mut used = [0; 2];
    for c in &conns {
        let k = if c[0].method == "HEAD" { 1 } else { 0 };
        check_session(c, &t[k]);
        used[k] += 1;
    }
    assert_eq!(used, [2, 2]);
    assert_eq!(r.totals(), (4, 14, 14));
    assert_eq!(sessions_done(&r), (4, 4));
    assert_eq!(histogram(&r), vec![0, 0, 0, 2, 2]);
    assert_eq!(r.error("total"), 0);
}

#[test]
fn malformed_session_files_exit_1_naming_file_and_line() {
    let cases: [(&str, &str); 5] = [
        ("/a\n/b method=FOO\n", "2: unknown method 'FOO'"),
        ("# c\n/a\n\n/b bogus=1\n", "4: unknown argument 'bogus=1'"),
        (
            "/a think=x\n",
            "1: bad think time 'x' (expected seconds >= 0)",
        ),
        (
            "/a\n\t/b contents=\"open\n",
            "2: unterminated quote in contents=",
        ),
        ("# nothing\n\n", ": no sessions found"),
    ];
    for (text, msg) in cases {
        let f = TempFile::new("bad", text.as_bytes());
        let spec = format!("--wsesslog=1,0,{}", f.path);
        let out = run(&["--server", "127.0.0.1", "--port", "1", &spec]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{text:?}: {stderr}");
        let sep = if msg.starts_with(':') { "" } else { ":" };
        assert_eq!(
            stderr,
            format!("rshperf: {}{sep}{msg}\n", f.path),
            "{text:?}"
        );
        assert!(out.stdout.is_empty(), "{text:?}");
    }
    let out = run(&[
        "--server",
        "127.0.0.1",
        "--port",
        "1",
        "--wsesslog=1,0,/nonexistent/sess.log",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("rshperf: can't open /nonexistent/sess.log"),
        "{stderr}"
    );
}

fn wlog_file() -> TempFile {
    // Empty entries (consecutive NULs) are skipped; no trailing NUL needed.
    TempFile::new("wlog", b"/u1\0/u2\0\0/u3")
}

#[test]
fn wlog_loops_over_the_uris_in_order() {
    let f = wlog_file();
    let srv = Recorder::start(Opts::default());
    let spec = format!("--wlog=y,{}", f.path);
    let r = go(&srv, &[&spec, "--num-conns", "7", "--rate", "0"]);
    assert_eq!(r.totals(), (7, 7, 7));
    assert_eq!(
        uris(&srv.requests()),
        ["/u1", "/u2", "/u3", "/u1", "/u2", "/u3", "/u1"]
    );
    // Sessions take the URIs in call order too.
    let srv = Recorder::start(Opts::default());
    let r = go(
        &srv,
        &[&spec, "--wsess=2,4,0", "--rate", "0", "--timeout", "5"],
    );
    assert_eq!(sessions_done(&r), (2, 2));
    assert_eq!(
        uris(&srv.requests()),
        ["/u1", "/u2", "/u3", "/u1", "/u2", "/u3", "/u1", "/u2"]
    );
}

#[test]
fn wlog_without_loop_ends_the_run_after_the_last_uri() {
    let f = wlog_file();
    let srv = Recorder::start(Opts::default());
    let spec = format!("--wlog=n,{}", f.path);
    let start = Instant::now();
    let r = go(
        &srv,
        &[&spec, "--num-conns", "10", "--rate", "0", "--timeout", "5"],
    );
    // Ended by the exhausted log, not by a timeout (no errors below); a hang guard.
    assert!(start.elapsed() < HANG_GUARD);
    assert_eq!(uris(&srv.requests()), ["/u1", "/u2", "/u3"]);
    let (conns, reqs, replies) = r.totals();
    // httperf: connections 4 requests 3 replies 3 (the 4th connection sends nothing).
    assert!((3..=4).contains(&conns), "{}", r.text);
    assert_eq!((reqs, replies), (3, 3));
    assert_eq!(r.error("total"), 0);
    assert!(r.text.contains("\nErrors: fd-unavail"), "{}", r.text);
}

#[test]
fn wset_uris_follow_the_reference_naming() {
    // N = 10, X = 1: every call moves to the next file; one digit; wraps at 10.
    let mut want: Vec<String> = (1..10).map(|k| format!("/wset/{k}.html")).collect();
    want.extend(["/wset/0.html", "/wset/1.html", "/wset/2.html"].map(String::from));
    for prefix in ["/wset", "/wset/"] {
        let srv = Recorder::start(Opts::default());
        let uri = format!("--uri={prefix}");
        go(
            &srv,
            &[&uri, "--wset=10,1", "--num-conns", "12", "--rate", "0"],
        );
        assert_eq!(uris(&srv.requests()), want, "prefix {prefix}");
    }
    // N = 1000, X = 0.5: three digits, files 0, 1, 1, 2, 2; prefix `/`.
    let srv = Recorder::start(Opts::default());
    go(
        &srv,
        &[
            "--uri=/",
            "--wset=1000,0.5",
            "--num-conns",
            "5",
            "--rate",
            "0",
        ],
    );
    assert_eq!(
        uris(&srv.requests()),
        [
            "/0/0/0.html",
            "/0/0/1.html",
            "/0/0/1.html",
            "/0/0/2.html",
            "/0/0/2.html"
        ]
    );
    // In a session workload too.
    let srv = Recorder::start(Opts::default());
    let r = go(
        &srv,
        &[
            "--uri=/w/",
            "--wset=100,1",
            "--wsess=1,3,0",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(sessions_done(&r), (1, 1));
    assert_eq!(
        uris(&srv.requests()),
        ["/w/0/1.html", "/w/0/2.html", "/w/0/3.html"]
    );
}

#[test]
fn wsess_counts_match_the_server_with_one_connection_per_session() {
    let srv = Recorder::start(Opts::default());
    let r = go(
        &srv,
        &[
            "--wsess=3,4,0.05",
            "--burst-length",
            "2",
            "--rate",
            "20",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(srv.requests().len(), 12);
    assert_eq!(srv.connections(), 3);
    for c in srv.by_conn() {
        assert_eq!(c.len(), 4);
    }
    assert_eq!(r.totals(), (3, 12, 12));
    assert_eq!(sessions_done(&r), (3, 3));
    assert_eq!(conns_per_session(&r), 1.0);
    assert_eq!(histogram(&r), vec![0, 0, 0, 0, 3]);
    assert_eq!(r.nums("Connection length [replies/conn]:"), vec![4.0]);
    assert_eq!(r.error("total"), 0);
}

#[test]
fn wsess_bursts_first_call_alone_then_the_rest_then_think() {
    // Each reply is delayed 40 ms; `followed` tells whether the client had sent more
    // before the reply: the first call of a burst goes alone, the rest together.
    let srv = Recorder::start(Opts {
        delay: Duration::from_millis(40),
        ..Opts::default()
    });
    let r = go(
        &srv,
        &["--wsess=1,6,0.3", "--burst-length", "3", "--timeout", "5"],
    );
    assert_eq!(sessions_done(&r), (1, 1));
    let c = &srv.by_conn()[0];
    assert_eq!(c.len(), 6);
    assert!(c.iter().enumerate().all(|(k, q)| q.index == k));
    let followed: Vec<bool> = c.iter().map(|r| r.followed).collect();
    assert_eq!(followed, [false, true, false, false, true, false]);
    let answered = |k: usize| c[k].answered.expect("answered");
    // The rest of a burst is sent only once its first call is answered.
    assert!(c[1].at >= answered(0));
    assert!(c[4].at >= answered(3));
    // Think time between the bursts: after the last reply of burst 1.
    let think = c[3].at.duration_since(answered(2));
    // Not early; when a think time ends is tested on simulated time
    // (`engine::event_loop::timers`), here only a hang guard.
    assert!(think >= Duration::from_millis(290), "think {think:?}");
    assert!(think < HANG_GUARD, "think {think:?}");
    assert!(r.nums("Session lifetime [s]:")[0] >= 0.3, "{}", r.text);
}

#[test]
fn wsess_http10_opens_a_connection_per_call() {
    let srv = Recorder::start(Opts::default());
    let r = go(
        &srv,
        &[
            "--wsess=2,3,0",
            "--burst-length",
            "3",
            "--http-version",
            "1.0",
            "--rate",
            "0",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(srv.connections(), 6);
    assert!(srv.by_conn().iter().all(|c| c.len() == 1));
    assert_eq!(r.totals(), (6, 6, 6));
    assert_eq!(sessions_done(&r), (2, 2));
    assert_eq!(conns_per_session(&r), 3.0);
    assert_eq!(r.error("total"), 0);
}

#[test]
fn wsess_max_connections_and_piped_calls_limit_concurrency() {
    // 6 calls in one burst: the first alone, then 5 over at most 2 connections of at
    // most 1 outstanding call each; the waiting calls must not abort the run.
    let srv = Recorder::start(Opts {
        delay: Duration::from_millis(60),
        ..Opts::default()
    });
    let r = go(
        &srv,
        &[
            "--wsess=2,6,0",
            "--burst-length",
            "6",
            "--max-connections",
            "2",
            "--max-piped-calls",
            "1",
            "--rate",
            "0",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(srv.requests().len(), 12);
    assert_eq!(srv.max_in_flight(), 2);
    assert!(srv.requests().iter().all(|r| !r.followed));
    assert_eq!(srv.connections(), 4);
    assert_eq!(r.totals(), (4, 12, 12));
    assert_eq!(sessions_done(&r), (2, 2));
    assert_eq!(conns_per_session(&r), 2.0);
    assert_eq!(r.error("total"), 0);
}

#[test]
fn session_cookies_go_back_to_their_own_session() {
    // HTTP/1.1, overlapping sessions, one connection each: sid=c<connection>.
    let srv = Recorder::start(Opts {
        cookies: Cookies::PerConnection,
        delay: Duration::from_millis(5),
        ..Opts::default()
    });
    let r = go(
        &srv,
        &[
            "--wsess=4,4,0.02",
            "--burst-length",
            "2",
            "--rate",
            "100",
            "--session-cookies",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(sessions_done(&r), (4, 4));
    let conns = srv.by_conn();
    assert_eq!(conns.len(), 4);
    for c in &conns {
        assert_eq!(c.len(), 4);
        assert_eq!(c[0].header("Cookie"), None, "{:?}", c[0]);
        for q in &c[1..] {
            let cookies: Vec<_> = q.headers.iter().filter(|(n, _)| n == "Cookie").collect();
            assert_eq!(cookies.len(), 1, "{q:?}");
            assert_eq!(cookies[0].1, format!("sid=c{}", q.conn));
        }
    }

    // HTTP/1.0: a connection per call, so the cookie must follow the session across
    // connections. Each template has its own URIs; the server hands out a fresh
    // cookie to every request without one.
    let text = "/t0/a\n\t/t0/b\n/t0/c\n\n/t1/a\n/t1/b\n\t/t1/c\n\n/t2/a\n/t2/b\n/t2/c\n";
    let f = TempFile::new("cookies", text.as_bytes());
    let srv = Recorder::start(Opts {
        cookies: Cookies::WhenAbsent,
        delay: Duration::from_millis(5),
        ..Opts::default()
    });
    let spec = format!("--wsesslog=3,0.02,{}", f.path);
    let r = go(
        &srv,
        &[
            &spec,
            "--http-version",
            "1.0",
            "--rate",
            "200",
            "--session-cookies",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(sessions_done(&r), (3, 3));
    let all = srv.requests();
    assert_eq!(all.len(), 9);
    let mut values = Vec::new();
    for t in 0..3 {
        let mine: Vec<&Req> = all
            .iter()
            .filter(|q| q.uri.starts_with(&format!("/t{t}/")))
            .collect();
        assert_eq!(mine.len(), 3);
        assert_eq!(mine[0].uri, format!("/t{t}/a"));
        assert_eq!(mine[0].header("Cookie"), None, "{:?}", mine[0]);
        let v = mine[1].header("Cookie").expect("cookie").to_string();
        assert_eq!(mine[2].header("Cookie"), Some(v.as_str()));
        values.push(v);
    }
    values.sort();
    assert_eq!(values, ["sid=s0", "sid=s1", "sid=s2"]);
}

#[test]
fn later_set_cookie_replaces_the_session_cookie() {
    // A fresh cookie on every reply: each call carries the one of the reply before.
    let srv = Recorder::start(Opts {
        cookies: Cookies::EveryReply,
        ..Opts::default()
    });
    let r = go(
        &srv,
        &["--wsess=1,4,0", "--session-cookies", "--timeout", "5"],
    );
    assert_eq!(sessions_done(&r), (1, 1));
    let got: Vec<Option<String>> = srv
        .requests()
        .iter()
        .map(|q| q.header("Cookie").map(String::from))
        .collect();
    assert_eq!(
        got,
        [None, Some("sid=r0"), Some("sid=r1"), Some("sid=r2")].map(|c| c.map(String::from))
    );
    // A cookie longer than 245 bytes is cut to 245 (docs/compatibility.md §4.6).
    let long = format!("sid={}", "x".repeat(300));
    let srv = Recorder::start(Opts {
        cookies: Cookies::Fixed(long.clone()),
        ..Opts::default()
    });
    go(
        &srv,
        &["--wsess=1,2,0", "--session-cookies", "--timeout", "5"],
    );
    let reqs = srv.requests();
    assert_eq!(reqs[1].header("Cookie"), Some(&long[..245]));
}

#[test]
fn idle_connection_during_think_time_does_not_time_out() {
    // Think 0.5 s > --timeout 0.2 s: an idle connection has no watchdog
    // (compatibility.md §3.2).
    let srv = Recorder::start(Opts::default());
    let r = go(&srv, &["--wsess=1,2,0.5", "--timeout", "0.2"]);
    assert_eq!(sessions_done(&r), (1, 1));
    assert_eq!(r.error("total"), 0);
    assert_eq!(srv.connections(), 1);
    assert_eq!(srv.requests().len(), 2);
}

#[test]
fn connection_failing_before_any_reply_fails_the_session() {
    let srv = Recorder::start(Opts {
        reset_after: Some(0),
        ..Opts::default()
    });
    let r = go(&srv, &["--wsess=2,2,0", "--rate", "0", "--timeout", "5"]);
    assert_eq!(sessions_done(&r), (0, 2));
    assert_eq!(srv.connections(), 2);
    assert_eq!(r.error("connreset"), 2);
    assert_eq!(histogram(&r), vec![2]);

    // --retry-on-failure: at most 8 replacement connections per session.
    let srv = Recorder::start(Opts {
        reset_after: Some(0),
        ..Opts::default()
    });
    let start = Instant::now();
    let r = go(
        &srv,
        &[
            "--wsess=2,2,0",
            "--retry-on-failure",
            "--rate",
            "0",
            "--timeout",
            "5",
        ],
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(sessions_done(&r), (0, 2));
    assert_eq!(srv.connections(), 2 * 9);
    assert_eq!(r.error("connreset"), 2 * 9);
}

#[test]
fn retry_on_failure_reissues_the_call_until_it_succeeds() {
    // The first two replies are 404: the first call is re-issued twice.
    let srv = Recorder::start(Opts {
        fail_first: 2,
        ..Opts::default()
    });
    let r = go(
        &srv,
        &[
            "--uri=/x",
            "--wsess=1,3,0",
            "--failure-status",
            "404",
            "--retry-on-failure",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(sessions_done(&r), (1, 1));
    assert_eq!(srv.requests().len(), 5);
    assert_eq!(r.status(), [0, 3, 0, 2, 0]);
    assert_eq!(r.totals().2, 5);
}

#[test]
fn failure_status_fails_every_session() {
    let srv = Recorder::start(Opts {
        status: 404,
        ..Opts::default()
    });
    let r = go(
        &srv,
        &[
            "--wsess=3,2,0",
            "--failure-status",
            "404",
            "--rate",
            "0",
            "--timeout",
            "5",
        ],
    );
    // Each session fails on its first reply.
    assert_eq!(srv.requests().len(), 3);
    assert_eq!(sessions_done(&r), (0, 3));
    assert_eq!(histogram(&r), vec![0, 3]);
    assert_eq!(r.status(), [0, 0, 0, 3, 0]);
    assert_eq!(conns_per_session(&r), 0.0);
}

#[test]
fn a_failed_session_issues_nothing_more() {
    // The second call of a pipelined burst fails: the session ends there, the third
    // call's reply (if sent) is dropped and the next burst is never issued.
    let text = "/ok\n\t/fail\n\t/ok2\n/never\n";
    let f = TempFile::new("fail", text.as_bytes());
    let srv = Recorder::start(Opts::default());
    let spec = format!("--wsesslog=2,0,{}", f.path);
    let r = go(
        &srv,
        &[
            &spec,
            "--failure-status",
            "404",
            "--rate",
            "0",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(sessions_done(&r), (0, 2));
    let seen = uris(&srv.requests());
    assert!(!seen.iter().any(|u| u == "/never"), "{seen:?}");
    assert_eq!(seen.iter().filter(|u| *u == "/fail").count(), 2, "{seen:?}");
    assert_eq!(srv.connections(), 2);
    assert_eq!(r.status()[3], 2);
}

#[test]
fn retry_on_failure_is_bounded() {
    let srv = Recorder::start(Opts {
        status: 404,
        ..Opts::default()
    });
    let start = Instant::now();
    let r = go(
        &srv,
        &[
            "--wsess=3,2,0",
            "--failure-status",
            "404",
            "--retry-on-failure",
            "--rate",
            "0",
            "--timeout",
            "5",
        ],
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    // The first call, re-issued at most 8 times, then the session fails.
    assert_eq!(srv.requests().len(), 3 * 9);
    assert_eq!(sessions_done(&r), (0, 3));
    assert_eq!(r.totals().2, 27);
}

#[test]
fn bursts_longer_than_the_calls_left_finish() {
    let srv = Recorder::start(Opts::default());
    let r = go(
        &srv,
        &[
            "--num-conns",
            "2",
            "--num-calls",
            "5",
            "--burst-length",
            "3",
            "--rate",
            "0",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (2, 10, 10));
    assert_eq!(srv.requests().len(), 10);

    // httperf 0.9.0 aborts on this one (object_dec_ref assertion).
    let srv = Recorder::start(Opts::default());
    let r = go(
        &srv,
        &["--wsess=1,2,0", "--burst-length", "3", "--timeout", "5"],
    );
    assert_eq!(r.totals(), (1, 2, 2));
    assert_eq!(sessions_done(&r), (1, 1));
    assert_eq!(histogram(&r), vec![0, 0, 1]);

    // 5 calls in bursts of 3: 3 + 2.
    let srv = Recorder::start(Opts::default());
    let r = go(
        &srv,
        &[
            "--wsess=2,5,0",
            "--burst-length",
            "3",
            "--rate",
            "0",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (2, 10, 10));
    assert_eq!(srv.requests().len(), 10);
    assert_eq!(sessions_done(&r), (2, 2));
}

#[test]
fn connection_close_moves_the_remaining_calls_to_new_connections() {
    let srv = Recorder::start(Opts {
        close_each: true,
        ..Opts::default()
    });
    let r = go(
        &srv,
        &[
            "--wsess=2,4,0",
            "--burst-length",
            "3",
            "--rate",
            "0",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(srv.answered().len(), 8);
    // One reply per connection.
    assert!(srv
        .by_conn()
        .iter()
        .all(|c| c.iter().filter(|q| q.answered.is_some()).count() <= 1));
    assert_eq!(r.totals().2, 8);
    assert_eq!(sessions_done(&r), (2, 2));
    assert_eq!(conns_per_session(&r), 4.0);
    assert_eq!(r.error("total"), 0);
}

#[test]
fn connection_failing_after_a_reply_is_replaced_and_calls_resent() {
    // Every connection answers its first request and is reset on the second.
    let text = "/a\n\t/b\n/c\n\t/d\n";
    let f = TempFile::new("reset", text.as_bytes());
    let srv = Recorder::start(Opts {
        reset_after: Some(1),
        ..Opts::default()
    });
    let spec = format!("--wsesslog=2,0,{}", f.path);
    let r = go(&srv, &[&spec, "--rate", "0", "--timeout", "5"]);
    assert_eq!(sessions_done(&r), (2, 2));
    assert_eq!(
        uris(&srv.answered()),
        ["/a", "/b", "/c", "/d", "/a", "/b", "/c", "/d"]
    );
    // /a; /b reset then answered on a new connection; /c and /d the same.
    assert_eq!(srv.requests().len(), 14);
    assert_eq!(srv.connections(), 8);
    assert_eq!(r.totals().2, 8);
    assert_eq!(r.error("connreset"), 6);
    assert_eq!(histogram(&r), vec![0, 0, 0, 0, 2]);
}

#[test]
fn client_timeout_fails_the_session() {
    let srv = Recorder::start(Opts {
        hang: true,
        ..Opts::default()
    });
    let start = Instant::now();
    let r = go(&srv, &["--wsess=2,3,0", "--rate", "0", "--timeout", "0.3"]);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(600), "took {took:?}");
    assert!(took < HANG_GUARD, "took {took:?}");
    assert_eq!(srv.requests().len(), 2);
    assert_eq!(sessions_done(&r), (0, 2));
    assert_eq!(r.error("client-timo"), 2);
    assert_eq!(histogram(&r), vec![2]);
    let failtime = r.nums("Session failtime [s]:")[0];
    assert!(
        (0.3..HANG_GUARD.as_secs_f64()).contains(&failtime),
        "{}",
        r.text
    );
}

#[test]
fn print_request_and_reply_of_a_session() {
    let f = TempFile::new("print", SESSIONS.as_bytes());
    let srv = Recorder::start(Opts {
        echo: true,
        ..Opts::default()
    });
    let spec = format!("--wsesslog=1,0,{}", f.path);
    let r = go(
        &srv,
        &[&spec, "--print-request", "--print-reply", "--timeout", "5"],
    );
    let ua = format!("User-Agent: rshperf/{}", env!("CARGO_PKG_VERSION"));
    let lines: Vec<&str> = r
        .text
        .split('\n')
        .skip(1)
        .take_while(|l| !l.starts_with("Maximum connect burst length"))
        .collect();
    let want = "\
SH0:GET /echo HTTP/1.1\r
SH0:UA\r
SH0:Host: 127.0.0.1\r
SH0:\r
SS0: header 66 content 0
RH0:HTTP/1.1 200 OK\r
RH0:Content-Length: 10\r
RH0:\r
RB0:GET /echo|
RS0: header 39 content 10 footer 0
SH1:GET /1k.html HTTP/1.1\r
SH1:UA\r
SH1:Host: 127.0.0.1\r
SH1:\r
SS1: header 69 content 0
SH2:GET /index.html HTTP/1.1\r
SH2:UA\r
SH2:Host: 127.0.0.1\r
SH2:\r
SS2: header 72 content 0
RH1:HTTP/1.1 200 OK\r
RH1:Content-Length: 13\r
RH1:\r
RB1:GET /1k.html|
RS1: header 39 content 13 footer 0
RH2:HTTP/1.1 200 OK\r
RH2:Content-Length: 16\r
RH2:\r
RB2:GET /index.html|
RS2: header 39 content 16 footer 0
SH3:POST /echo HTTP/1.1\r
SH3:UA\r
SH3:Host: 127.0.0.1\r
SH3:Content-length: 5\r
SH3:\r
SB3:a b
SB3:c
SS3: header 86 content 5
RH3:HTTP/1.1 200 OK\r
RH3:Content-Length: 16\r
RH3:\r
RB3:POST /echo|a b
RB3:c
RS3: header 39 content 16 footer 0"
        .replace("UA", &ua);
    assert_eq!(lines.join("\n"), want, "{}", r.text);
    assert_eq!(sessions_done(&r), (1, 1));
    assert_eq!(r.totals(), (1, 4, 4));
}

#[test]
fn periodic_stats_count_200_and_302_per_second() {
    // One session lasting ~1.3 s: 200, 302 | think 0.65 | 200, 302 | think 0.65 | 200.
    let text = "/a think=0.65\n\t/redir1\n/b think=0.65\n\t/redir2\n/c\n";
    let f = TempFile::new("periodic", text.as_bytes());
    let srv = Recorder::start(Opts::default());
    let spec = format!("--wsesslog=1,0,{}", f.path);
    let r = go(&srv, &[&spec, "-n", "--timeout", "5"]);
    assert_eq!(sessions_done(&r), (1, 1));
    assert_eq!(r.status(), [0, 3, 2, 0, 0]);
    let samples: Vec<&str> = r.text.lines().filter(|l| l.starts_with('[')).collect();
    assert!(!samples.is_empty(), "{}", r.text);
    let (mut ok, mut redir) = (0, 0);
    for (k, l) in samples.iter().enumerate() {
        // `[%.6f s] 200=%lu, 302=%lu`
        let t: f64 = l[1..l.find(" s]").expect("time")].parse().expect("time");
        let frac = l[1..].split(' ').next().expect("time");
        assert_eq!(frac.split('.').nth(1).map(str::len), Some(6), "{l}");
        // Never before its tick (the grid of ticks is tested on simulated time in
        // `engine::tally`); how late, only a hang guard.
        let tick = (k + 1) as f64;
        assert!(t >= tick && t < tick + HANG_GUARD.as_secs_f64(), "{l}");
        let rest = &l[l.find("] ").expect("]") + 2..];
        let (a, b) = rest.split_once(", ").expect("comma");
        ok += a
            .strip_prefix("200=")
            .expect("200=")
            .parse::<u64>()
            .expect("n");
        redir += b
            .strip_prefix("302=")
            .expect("302=")
            .parse::<u64>()
            .expect("n");
    }
    assert!(ok <= 3 && redir <= 2, "{samples:?}");
    let block = "\nPeriodic stats: 200=3 302=2\n\nCPU time [s]:";
    assert!(r.text.contains(block), "{}", r.text);
    let reply_status = r.text.find("Reply status:").expect("status");
    assert!(r.text.find(block).expect("block") > reply_status);
}

#[test]
fn verbose_prints_session_rate_samples() {
    // 12 one-call sessions at 2/s: ~5.5 s, one 5-s sample of ~2 sessions/s.
    let srv = Recorder::start(Opts::default());
    let r = go(
        &srv,
        &["-v", "--wsess=12,1,0", "--rate", "2", "--timeout", "5"],
    );
    assert_eq!(sessions_done(&r), (12, 12));
    let lines: Vec<&str> = r.text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("reply-rate = "))
        .unwrap_or_else(|| panic!("no reply-rate line:\n{}", r.text));
    let sess = lines[at + 1];
    assert!(sess.starts_with("session-rate = "), "{}", r.text);
    let rate: f64 = sess["session-rate = ".len()..]
        .trim()
        .parse()
        .expect("rate");
    assert!((1.6..=2.4).contains(&rate), "{sess}");
    // `%-8.1f`: left-justified in 8 columns.
    assert_eq!(sess.len(), "session-rate = ".len() + 8, "{sess:?}");
    let n = r.nums("Session rate [sess/s]:");
    assert!((n[0] - rate).abs() <= 0.05, "{}", r.text);
    assert!((n[2] - rate).abs() <= 0.05, "{}", r.text);
}

#[test]
fn verbose_names_each_wlog_and_wset_uri() {
    let f = wlog_file();
    let srv = Recorder::start(Opts::default());
    let spec = format!("--wlog=y,{}", f.path);
    let r = go(&srv, &["-v", &spec, "--num-conns", "4", "--rate", "0"]);
    let got: Vec<&str> = r
        .text
        .lines()
        .filter(|l| l.starts_with("rshperf: accessing URI"))
        .collect();
    assert_eq!(
        got,
        [
            "rshperf: accessing URI `/u1'",
            "rshperf: accessing URI `/u2'",
            "rshperf: accessing URI `/u3'",
            "rshperf: accessing URI `/u1'"
        ]
    );
    let r = go(
        &srv,
        &[
            "-v",
            "--uri=/w",
            "--wset=10,1",
            "--num-conns",
            "2",
            "--rate",
            "0",
        ],
    );
    let got: Vec<&str> = r
        .text
        .lines()
        .filter(|l| l.starts_with("rshperf: accessing URI"))
        .collect();
    assert_eq!(
        got,
        [
            "rshperf: accessing URI `/w/1.html'",
            "rshperf: accessing URI `/w/2.html'"
        ]
    );
}

#[test]
fn calls_without_room_wait_instead_of_aborting() {
    // 40 calls in one burst: the first alone, then 32 pipelined on the first
    // connection and the other 7 on a second (defaults: 4 connections, 32 calls).
    let srv = Recorder::start(Opts::default());
    let r = go(
        &srv,
        &["--wsess=1,40,0", "--burst-length", "40", "--timeout", "5"],
    );
    assert_eq!(sessions_done(&r), (1, 1));
    assert_eq!(srv.requests().len(), 40);
    assert_eq!(srv.connections(), 2);
    let sizes: Vec<usize> = srv.by_conn().iter().map(Vec::len).collect();
    assert_eq!(sizes, [33, 7]);
    // httperf exits 1 here ("too many calls pending"); the calls wait for room.
    let srv = Recorder::start(Opts::default());
    let r = go(
        &srv,
        &[
            "--wsess=2,10,0",
            "--burst-length",
            "10",
            "--max-connections",
            "1",
            "--max-piped-calls",
            "2",
            "--rate",
            "0",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(sessions_done(&r), (2, 2));
    assert_eq!(srv.requests().len(), 20);
    assert_eq!(srv.connections(), 2);
    assert_eq!(r.totals(), (2, 20, 20));
}

#[test]
fn wlog_and_wset_with_threads_make_up_the_single_process_sequence() {
    let sorted = |srv: &Recorder| {
        let mut u = uris(&srv.requests());
        u.sort();
        u
    };
    // --wlog=n: 3 URIs, then the run ends: 3 requests in all, whatever the threads.
    let f = wlog_file();
    let spec = format!("--wlog=n,{}", f.path);
    let srv = Recorder::start(Opts::default());
    go(
        &srv,
        &[&spec, "--num-conns", "10", "--rate", "0", "--threads", "2"],
    );
    assert_eq!(sorted(&srv), ["/u1", "/u2", "/u3"]);
    // --wlog=y with 4 URIs and 4 connections: each URI once.
    let f = TempFile::new("wlog4", b"/u1\0/u2\0/u3\0/u4\0");
    let spec = format!("--wlog=y,{}", f.path);
    let srv = Recorder::start(Opts::default());
    go(
        &srv,
        &[&spec, "--num-conns", "4", "--rate", "0", "--threads", "2"],
    );
    assert_eq!(sorted(&srv), ["/u1", "/u2", "/u3", "/u4"]);
    // --wset=10,1: files 1, 2, 3, 4 as with one thread.
    let srv = Recorder::start(Opts::default());
    go(
        &srv,
        &[
            "--uri=/w",
            "--wset=10,1",
            "--num-conns",
            "4",
            "--rate",
            "0",
            "--threads",
            "2",
        ],
    );
    assert_eq!(
        sorted(&srv),
        ["/w/1.html", "/w/2.html", "/w/3.html", "/w/4.html"]
    );
}
