//! `rshperf replay FILE`: every logged request reaches the server once with its
//! method, URI, headers and body; the engine's scheduled times are the log's offsets
//! divided by `--speed` (read from the run's own `--request-log`, not from the wall
//! clock); bad lines are warnings with file:line, a log with no request is an error;
//! the options whose say is the log's are refused; a run's request log replays; the
//! connections per client, per request or from the pool, counted by the server.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::recorder::{Opts, Recorder, TempFile};
use crate::support::run;

/// A combined-format line with `$msec` time and `$request_time` 0.
fn line(client: &str, msec: f64, method: &str, uri: &str) -> String {
    format!("{client} - - [{msec:.3}] \"{method} {uri} HTTP/1.1\" 200 612 \"-\" \"curl/8\" 0.000\n")
}

/// Runs `rshperf replay FILE --server 127.0.0.1 --port PORT ARGS`.
fn replay(file: &str, port: u16, args: &[&str]) -> (i32, String, String) {
    let port = port.to_string();
    let mut all = vec!["replay", file, "--server", "127.0.0.1", "--port", &port];
    all.extend_from_slice(args);
    let out = run(&all);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The `scheduled_us` of every record of a JSON-lines request log, sorted, from the
/// first.
fn scheduled(path: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(path).expect("the request log");
    let mut v: Vec<u64> = text
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).expect("a record");
            assert_eq!(r["error"], "", "{l}");
            r["scheduled_us"].as_u64().expect("scheduled")
        })
        .collect();
    v.sort_unstable();
    // The schedule begins once the pool is connected: a run's first call is due
    // within a second of its start, the others at their offsets from it.
    let first = v.first().copied().unwrap_or(0);
    assert!(first < 1_000_000, "first call due at {first} us");
    v.iter().map(|t| t - first).collect()
}

#[test]
fn an_access_log_replays_every_request_once_at_its_offset_over_the_speed() {
    let s = Recorder::start(Opts::default());
    // Offsets (ms) with bursts and an idle gap; two garbage lines and a blank one.
    let offsets_ms = [0u64, 4, 4, 8, 12, 200, 200, 204, 400];
    let t0 = 1_796_515_000.0;
    let mut log = String::new();
    for (k, ms) in offsets_ms.iter().enumerate() {
        let method = if k % 3 == 1 { "HEAD" } else { "GET" };
        log.push_str(&line(
            &format!("10.0.0.{}", k % 2),
            t0 + *ms as f64 / 1000.0,
            method,
            &format!("/r/{k}?q={ms}"),
        ));
        if k == 2 {
            log.push_str("this is not a log line\n\n");
            log.push_str("1.2.3.4 - - [yesterday] \"GET / HTTP/1.1\" 200 1\n");
        }
    }
    let file = TempFile::new("replay-access", log.as_bytes());
    let reqlog = TempFile::new("replay-access-out", b"");
    let reqlog_path = format!("{}.jsonl", reqlog.path);
    let (code, stdout, stderr) = replay(
        &file.path,
        s.port(),
        &[
            "--speed",
            "4",
            "--request-log",
            &reqlog_path,
            "--timeout",
            "5",
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!("rshperf: replay: warning: {}:4: ", file.path)),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "rshperf: replay: warning: {}:6: a bad time",
            file.path
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("spread"), "{stderr}");
    // Every request once, with its method and URI.
    let mut seen: BTreeMap<(String, String), u32> = BTreeMap::new();
    for r in s.requests() {
        *seen.entry((r.method, r.uri)).or_default() += 1;
    }
    let want: BTreeMap<(String, String), u32> = offsets_ms
        .iter()
        .enumerate()
        .map(|(k, ms)| {
            let method = if k % 3 == 1 { "HEAD" } else { "GET" };
            ((method.to_string(), format!("/r/{k}?q={ms}")), 1)
        })
        .collect();
    assert_eq!(seen, want);
    assert!(stdout.contains("Total: connections"), "{stdout}");
    // The engine's schedule: the log's offsets ÷ 4, exactly.
    let want_us: Vec<u64> = offsets_ms.iter().map(|ms| ms * 1000 / 4).collect();
    assert_eq!(scheduled(&reqlog_path), want_us);
    let _ = std::fs::remove_file(&reqlog_path);
}

#[test]
fn a_har_replays_methods_headers_and_bodies() {
    let s = Recorder::start(Opts::default());
    let har = r#"{"log":{"version":"1.2","entries":[
      {"startedDateTime":"2026-12-06T00:00:00.000Z","request":{"method":"GET",
        "url":"https://shop.example.com/cart?id=1","headers":[{"name":"X-Trace","value":"a1"},
        {"name":"Host","value":"shop.example.com"}]}},
      {"startedDateTime":"2026-12-06T00:00:00.020Z","request":{"method":"POST",
        "url":"https://shop.example.com/order","headers":[{"name":"Content-Type","value":"application/json"}],
        "postData":{"mimeType":"application/json","text":"{\"n\":2}"}}}]}}"#;
    let file = TempFile::new("replay-har", har.as_bytes());
    let (code, stdout, stderr) = replay(&file.path, s.port(), &["--timeout", "5"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let mut reqs = s.requests();
    reqs.sort_by(|a, b| a.uri.cmp(&b.uri));
    let [get, post] = &reqs[..] else {
        panic!("two requests: {reqs:?}")
    };
    assert_eq!(
        (get.method.as_str(), get.uri.as_str()),
        ("GET", "/cart?id=1")
    );
    assert_eq!(get.header("X-Trace"), Some("a1"));
    // The target's Host, not the log's.
    assert_ne!(get.header("Host"), Some("shop.example.com"));
    assert_eq!(
        (post.method.as_str(), post.uri.as_str()),
        ("POST", "/order")
    );
    assert_eq!(post.body, br#"{"n":2}"#);
    assert_eq!(post.header("Content-Type"), Some("application/json"));
}

#[test]
fn one_second_times_are_spread_and_said_so() {
    let s = Recorder::start(Opts::default());
    let mut log = String::new();
    for k in 0..4 {
        log.push_str(&format!(
            "127.0.0.1 - - [06/Dec/2026:00:10:02 +0000] \"GET /s/{k} HTTP/1.1\" 200 1 \"-\" \"-\"\n"
        ));
    }
    let file = TempFile::new("replay-seconds", log.as_bytes());
    let out = TempFile::new("replay-seconds-out", b"");
    let out_path = format!("{}.jsonl", out.path);
    let (code, stdout, stderr) = replay(
        &file.path,
        s.port(),
        &["--speed", "2", "--request-log", &out_path],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(
        stderr
            .matches("requests of each second are spread evenly")
            .count(),
        1,
        "{stderr}"
    );
    // 0, ¼, ½, ¾ s at speed 2.
    assert_eq!(scheduled(&out_path), [0, 125_000, 250_000, 375_000]);
    assert_eq!(s.requests().len(), 4);
    // The run's own request log replays: the same URIs again.
    let again = Recorder::start(Opts::default());
    let (code, stdout, stderr) = replay(&out_path, again.port(), &["--speed", "8"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let mut uris: Vec<String> = again.requests().into_iter().map(|r| r.uri).collect();
    uris.sort();
    assert_eq!(uris, ["/s/0", "/s/1", "/s/2", "/s/3"]);
    let _ = std::fs::remove_file(&out_path);
}

#[test]
fn bad_files_and_options_are_refused_with_exit_1() {
    let garbage = TempFile::new("replay-garbage", b"nothing\nto\nreplay\n");
    let (code, _, stderr) = replay(&garbage.path, 9, &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("has no request to replay (read as an access log; 3 lines did not parse)"),
        "{stderr}"
    );
    let ok = TempFile::new("replay-ok", line("::1", 1.0, "GET", "/").as_bytes());
    for (args, want) in [
        (&["--rate", "5"][..], "--rate is the log's to say"),
        (&["--speed", "0"][..], "--speed takes a number above 0"),
        (&["--speed"][..], "--speed needs a value"),
        (&["--wlog", "y,x"][..], "--wlog is the log's to say"),
    ] {
        let (code, _, stderr) = replay(&ok.path, 9, args);
        assert_eq!(code, 1, "{args:?}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
    let out = run(&["replay", "/nonexistent/log"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rshperf: replay: cannot read"));
    let out = run(&["replay", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Usage: rshperf replay FILE"));
}

/// `n` `$msec` lines 50 µs apart from `t0`, client `10.0.0.(k mod clients)`, URI `/n/k`.
fn many(n: u64, clients: u64) -> String {
    let t0 = 1_796_515_000.0;
    (0..n)
        .map(|k| {
            format!(
                "10.0.0.{} - - [{:.6}] \"GET /n/{k} HTTP/1.1\" 200 1 \"-\" \"-\"\n",
                k % clients,
                t0 + k as f64 * 50e-6
            )
        })
        .collect()
}

#[test]
fn a_log_longer_than_the_reorder_window_streams_every_request_once_over_threads() {
    let s = Recorder::start(Opts::default());
    // 20,000 requests (over twice the reorder window), each engine reading its own
    // pass over the file.
    let n = 20_000;
    let file = TempFile::new("replay-many", many(n, 13).as_bytes());
    let (code, stdout, stderr) = replay(
        &file.path,
        s.port(),
        &[
            "--speed",
            "20",
            "--threads",
            "2",
            "--replay-connections",
            "pool",
            "--num-conns",
            "8",
            "--timeout",
            "10",
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let mut uris: Vec<u64> = s
        .requests()
        .into_iter()
        .map(|r| r.uri[3..].parse().expect("/n/k"))
        .collect();
    uris.sort_unstable();
    assert_eq!(uris, (0..n).collect::<Vec<_>>());
    assert!(
        stdout.contains(&format!("Total: connections 8 requests {n} replies {n}")),
        "{stdout}"
    );
}

/// `log` gzip-compressed as `members` gzip members (concatenated, as `cat a.gz b.gz`).
fn gzip(log: &str, members: usize) -> Vec<u8> {
    use std::io::Write;
    let lines: Vec<&str> = log.split_inclusive('\n').collect();
    let per = lines.len().div_ceil(members.max(1));
    let mut out = Vec::new();
    for chunk in lines.chunks(per.max(1)) {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(chunk.concat().as_bytes()).expect("to memory");
        out.extend(gz.finish().expect("to memory"));
    }
    out
}

#[test]
fn a_gzip_log_is_decompressed_as_it_is_read_whatever_its_name() {
    let n = 300;
    let log = many(n, 3);
    for (name, members) in [("replay-gz.log.gz", 1), ("replay-gz-noext", 3)] {
        let s = Recorder::start(Opts::default());
        let file = TempFile::new(name, &gzip(&log, members));
        let (code, stdout, stderr) = replay(&file.path, s.port(), &["--speed", "4"]);
        assert_eq!(code, 0, "{name}: {stdout}\n{stderr}");
        assert!(
            !stderr.contains("rshperf: replay: warning"),
            "{name}: {stderr}"
        );
        let mut uris: Vec<u64> = s
            .requests()
            .into_iter()
            .map(|r| r.uri[3..].parse().expect("/n/k"))
            .collect();
        uris.sort_unstable();
        assert_eq!(uris, (0..n).collect::<Vec<_>>(), "{name}");
    }
    // A damaged gzip stream: exit 1 before any request, naming the file.
    let mut bad = gzip(&log, 1);
    let mid = bad.len() / 2;
    bad[mid..].iter_mut().for_each(|b| *b = !*b);
    let file = TempFile::new("replay-gz-bad", &bad);
    let s = Recorder::start(Opts::default());
    let (code, _, stderr) = replay(&file.path, s.port(), &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("rshperf: replay: cannot read {}: ", file.path)),
        "{stderr}"
    );
    assert!(s.requests().is_empty());
}

/// The URIs the server saw, by client (the `X-Client` the log line's referer gives).
fn by_client(s: &Recorder) -> BTreeMap<String, Vec<u64>> {
    let mut m: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for r in s.requests() {
        let k = r.uri[3..].parse().expect("/n/k");
        let client = r.header("Referer").expect("the log's referer").to_string();
        m.entry(client).or_default().push(k);
    }
    m
}

#[test]
fn three_partitions_split_by_client_and_merge_to_the_whole_run() {
    // 600 requests 50 µs apart from 11 clients (the referer names the client, so the
    // server can tell them apart); one connection per run or partition, so each
    // client's order at the server is its order of sending.
    let n = 600u64;
    let log: String = (0..n)
        .map(|k| {
            format!(
                "10.1.0.{c} - - [{:.6}] \"GET /n/{k} HTTP/1.1\" 200 1 \"client-{c}\" \"-\"\n",
                1_796_515_000.0 + k as f64 * 50e-6,
                c = k % 11
            )
        })
        .collect();
    let file = TempFile::new("replay-parts", log.as_bytes());
    let whole = Recorder::start(Opts::default());
    let (code, stdout, stderr) = replay(&file.path, whole.port(), &["--num-conns", "1"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let want = by_client(&whole);
    assert_eq!(want.values().map(Vec::len).sum::<usize>(), n as usize);
    let parts = Recorder::start(Opts::default());
    let docs: Vec<TempFile> = (0..3).map(|_| TempFile::new("replay-part", b"")).collect();
    let mut clients_of = Vec::new();
    let mut sent = 0;
    for (i, doc) in docs.iter().enumerate() {
        let before = parts.requests().len();
        let part = format!("{i}/3");
        let json = format!("--json={}", doc.path);
        let (code, stdout, stderr) = replay(
            &file.path,
            parts.port(),
            &["--num-conns", "3", "--partition", &part, &json],
        );
        assert_eq!(code, 0, "{part}: {stdout}\n{stderr}");
        let mine: std::collections::BTreeSet<String> = parts.requests()[before..]
            .iter()
            .map(|r| r.header("Referer").expect("referer").to_string())
            .collect();
        sent += parts.requests().len() - before;
        clients_of.push(mine);
    }
    // Every request exactly once, each client in one partition, in its order.
    assert_eq!(sent, n as usize);
    for (i, a) in clients_of.iter().enumerate() {
        assert!(!a.is_empty(), "partition {i} has clients");
        for b in &clients_of[i + 1..] {
            assert!(a.is_disjoint(b), "{a:?} {b:?}");
        }
    }
    let got = by_client(&parts);
    assert_eq!(got, want);
    for (client, ks) in &got {
        assert!(ks.windows(2).all(|w| w[0] < w[1]), "{client}: {ks:?}");
    }
    // The merge of the three documents is the whole run's count.
    let mut argv = vec!["merge"];
    argv.extend(docs.iter().map(|d| d.path.as_str()));
    let out = run(&argv);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("requests {n} replies {n}")),
        "{text}"
    );
}

// ---- --replay-connections

/// `$msec` lines, one for each client letter of `clients`, `gap_ms` apart: client
/// `x` is 10.2.0.(x's letter number), named by the referer `client-x`; URI `/c/k`.
fn clients_log(clients: &str, gap_ms: u64) -> String {
    clients
        .chars()
        .enumerate()
        .map(|(k, c)| {
            let at = 1_796_515_000.0 + (k as u64 * gap_ms) as f64 / 1000.0;
            format!(
                "10.2.0.{n} - - [{at:.3}] \"GET /c/{k} HTTP/1.1\" 200 1 \"client-{c}\" \"-\"\n",
                n = c as u32 - 'a' as u32 + 1
            )
        })
        .collect()
}

/// The client (referer) of each of the server's connections, in connection order:
/// each connection's requests are one client's, in their order.
fn clients_by_conn(s: &Recorder) -> Vec<(String, Vec<u64>)> {
    s.by_conn()
        .iter()
        .map(|reqs| {
            let client = reqs[0].header("Referer").expect("referer").to_string();
            let ks: Vec<u64> = reqs
                .iter()
                .map(|r| {
                    assert_eq!(r.header("Referer"), Some(client.as_str()), "{reqs:?}");
                    r.uri[3..].parse().expect("/c/k")
                })
                .collect();
            assert!(ks.windows(2).all(|w| w[0] < w[1]), "{client}: {ks:?}");
            (client, ks)
        })
        .collect()
}

/// The classic report's `Total:` connections, requests and replies.
fn totals(stdout: &str) -> (u64, u64, u64) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("Total: connections"))
        .unwrap_or_else(|| panic!("no Total line: {stdout}"));
    let w: Vec<&str> = line.split_whitespace().collect();
    let n = |i: usize| w[i].parse().expect("a number");
    (n(2), n(4), n(6))
}

/// The number after `name` on the `Call rate` line.
fn call_rate_figure(stdout: &str, name: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("Call rate [calls/s]:"))
        .unwrap_or_else(|| panic!("no Call rate line: {stdout}"));
    let w: Vec<&str> = line.split_whitespace().collect();
    let i = w.iter().position(|x| *x == name).expect("the figure");
    w[i + 1].trim_end_matches(')').parse().expect("a number")
}

/// The classic report's error total.
fn errors(stdout: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("Errors: total"))
        .unwrap_or_else(|| panic!("no Errors line: {stdout}"));
    line.split_whitespace()
        .nth(2)
        .expect("total")
        .parse()
        .expect("a number")
}

/// 3 clients × 4 requests, 50 ms apart: each client's next request 150 ms after
/// its last, whose reply (sub-millisecond) has long ended.
const THREE_BY_FOUR: &str = "abcabcabcabc";

#[test]
fn per_client_keeps_a_connection_per_client_and_per_request_opens_one_each() {
    let file = TempFile::new("replay-conns", clients_log(THREE_BY_FOUR, 50).as_bytes());
    // The default: per client.
    let s = Recorder::start(Opts::default());
    let (code, stdout, stderr) = replay(&file.path, s.port(), &["--timeout", "5"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(s.connections(), 3, "{stdout}");
    assert_eq!(totals(&stdout), (3, 12, 12), "{stdout}");
    // The call-rate line's connections: the most open at once, not the cap.
    assert!(stdout.contains(" over 3 connections "), "{stdout}");
    assert_eq!(s.answered().len(), 12);
    let by_conn = clients_by_conn(&s);
    let mut clients: Vec<&str> = by_conn.iter().map(|(c, _)| c.as_str()).collect();
    clients.sort_unstable();
    assert_eq!(clients, ["client-a", "client-b", "client-c"]);
    assert!(by_conn.iter().all(|(_, ks)| ks.len() == 4), "{by_conn:?}");
    // Per request: a connection each, closed after its reply.
    let s = Recorder::start(Opts::default());
    let (code, stdout, stderr) = replay(
        &file.path,
        s.port(),
        &["--replay-connections=per-request", "--timeout", "5"],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(s.connections(), 12, "{stdout}");
    assert_eq!(totals(&stdout), (12, 12, 12), "{stdout}");
    assert!(s.by_conn().iter().all(|reqs| reqs.len() == 1));
    // Closed after their replies, not for another client.
    assert_eq!(call_rate_figure(&stdout, "evicted"), 0, "{stdout}");
    // The pool of --num-conns connections, opened at the start.
    let s = Recorder::start(Opts::default());
    let (code, stdout, stderr) = replay(
        &file.path,
        s.port(),
        &[
            "--replay-connections",
            "pool",
            "--num-conns",
            "2",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(s.connections(), 2, "{stdout}");
    assert_eq!(totals(&stdout), (2, 12, 12), "{stdout}");
}

#[test]
fn at_the_cap_the_least_recently_used_idle_client_connection_is_closed() {
    // 6 clients, at most 3 connections (--num-conns 3), 100 ms apart: a b c open
    // three; a's second request reuses its own, so d closes b's (the least recently
    // used; the oldest opened would be a's); a reuses; e closes c's, b d's, f e's,
    // d b's; a's is never closed: 8 connections for 12 requests.
    let file = TempFile::new("replay-cap", clients_log("abcadaebafda", 100).as_bytes());
    let s = Recorder::start(Opts::default());
    let (code, stdout, stderr) = replay(
        &file.path,
        s.port(),
        &[
            "--replay-connections",
            "per-client",
            "--num-conns",
            "3",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(s.connections(), 8, "{stdout}");
    assert_eq!(totals(&stdout), (8, 12, 12), "{stdout}");
    assert_eq!(errors(&stdout), 0, "{stdout}");
    // Three connections took free slots; the other five each closed an idle one.
    assert_eq!(call_rate_figure(&stdout, "evicted"), 5, "{stdout}");
    assert_eq!(call_rate_figure(&stdout, "reconnects"), 0, "{stdout}");
    let got: Vec<(String, Vec<u64>)> = clients_by_conn(&s);
    let want: Vec<(String, Vec<u64>)> = [
        ("a", vec![0, 3, 5, 8, 11]),
        ("b", vec![1]),
        ("c", vec![2]),
        ("d", vec![4]),
        ("e", vec![6]),
        ("b", vec![7]),
        ("f", vec![9]),
        ("d", vec![10]),
    ]
    .into_iter()
    .map(|(c, ks)| (format!("client-{c}"), ks))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn a_server_closing_after_each_reply_gets_every_request_on_a_new_connection() {
    let file = TempFile::new("replay-close", clients_log(THREE_BY_FOUR, 50).as_bytes());
    let s = Recorder::start(Opts {
        close_each: true,
        ..Opts::default()
    });
    let (code, stdout, stderr) = replay(&file.path, s.port(), &["--timeout", "5"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(s.answered().len(), 12);
    assert_eq!(s.connections(), 12, "{stdout}");
    assert_eq!(totals(&stdout), (12, 12, 12), "{stdout}");
    assert_eq!(errors(&stdout), 0, "{stdout}");
}

#[test]
fn a_reset_loses_the_clients_call_counted_as_the_pool_counts_it() {
    // Every connection is reset on reading its first request: each request is
    // lost with its connection (one connreset each), and the client's next
    // request opens a new one.
    let file = TempFile::new("replay-reset", clients_log(THREE_BY_FOUR, 50).as_bytes());
    let json = TempFile::new("replay-reset-json", b"");
    let json_arg = format!("--json={}", json.path);
    let s = Recorder::start(Opts {
        reset_after: Some(0),
        ..Opts::default()
    });
    let (code, stdout, stderr) = replay(&file.path, s.port(), &["--timeout", "5", &json_arg]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(s.connections(), 12, "{stdout}");
    assert_eq!(totals(&stdout), (12, 12, 0), "{stdout}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json.path).expect("json"))
        .expect("valid JSON");
    assert_eq!(doc["errors"]["connreset"], 12, "{stdout}");
    assert_eq!(doc["errors"]["total"], 12, "{stdout}");
    let c = &doc["call_rate"];
    assert_eq!(
        (&c["scheduled"], &c["issued"], &c["lost"], &c["completed"]),
        (
            &Value::from(12),
            &Value::from(12),
            &Value::from(12),
            &Value::from(0)
        ),
        "{c}"
    );
}

/// A HAR of 6 entries 50 ms apart, alternating between connections `x` and `y`
/// (`connection` members when `with_ids`).
fn har_of_two_connections(with_ids: bool) -> String {
    let entries: Vec<String> = (0..6)
        .map(|k| {
            let conn = if k % 2 == 0 { "x" } else { "y" };
            let id = if with_ids {
                format!(r#""connection":"{conn}","#)
            } else {
                String::new()
            };
            format!(
                r#"{{"startedDateTime":"2026-12-06T00:00:00.{ms:03}Z",{id}"request":{{"method":"GET","url":"https://example.com/{conn}/{k}"}}}}"#,
                ms = k * 50
            )
        })
        .collect();
    format!(
        r#"{{"log":{{"version":"1.2","entries":[{}]}}}}"#,
        entries.join(",")
    )
}

#[test]
fn a_har_keeps_a_connection_per_connection_id_and_without_ids_takes_the_pool() {
    let file = TempFile::new("replay-har-ids", har_of_two_connections(true).as_bytes());
    let s = Recorder::start(Opts::default());
    let (code, stdout, stderr) = replay(&file.path, s.port(), &["--timeout", "5"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stderr.contains("carry no connection"), "{stderr}");
    assert_eq!(s.connections(), 2, "{stdout}");
    for reqs in s.by_conn() {
        let conn = &reqs[0].uri[..3];
        assert_eq!(reqs.len(), 3, "{reqs:?}");
        assert!(reqs.iter().all(|r| r.uri.starts_with(conn)), "{reqs:?}");
    }
    // No connection ids: no client to keep (per client, all six would be one), so
    // the pool, and the run says so.
    let file = TempFile::new("replay-har-noids", har_of_two_connections(false).as_bytes());
    let s = Recorder::start(Opts::default());
    let (code, stdout, stderr) = replay(
        &file.path,
        s.port(),
        &["--num-conns", "2", "--timeout", "5"],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.contains("entries carry no connection"))
            .count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("--replay-connections pool"), "{stderr}");
    assert_eq!(s.connections(), 2, "{stdout}");
    assert_eq!(s.answered().len(), 6);
}

#[test]
fn a_bad_replay_connections_mode_is_refused_with_exit_1() {
    let ok = TempFile::new("replay-mode", line("::1", 1.0, "GET", "/").as_bytes());
    for (args, want) in [
        (
            &["--replay-connections", "per-host"][..],
            "rshperf: replay: --replay-connections takes per-client, per-request or pool (not per-host)",
        ),
        (
            &["--replay-connections="][..],
            "--replay-connections takes per-client, per-request or pool (not )",
        ),
        (
            &["--replay-connections"][..],
            "--replay-connections needs a value",
        ),
    ] {
        let (code, _, stderr) = replay(&ok.path, 9, args);
        assert_eq!(code, 1, "{args:?}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
    let out = run(&["replay", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for mode in [
        "--replay-connections MODE",
        "per-client",
        "per-request",
        "pool",
    ] {
        assert!(help.contains(mode), "{mode}: {help}");
    }
}
