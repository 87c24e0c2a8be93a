//! `rshperf replay FILE`: every logged request reaches the server once with its
//! method, URI, headers and body; the engine's scheduled times are the log's offsets
//! divided by `--speed` (read from the run's own `--request-log`, not from the wall
//! clock); bad lines are warnings with file:line, a log with no request is an error;
//! the options whose say is the log's are refused; a run's request log replays.

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

/// The `scheduled_us` of every record of a JSON-lines request log, sorted.
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
    v
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
