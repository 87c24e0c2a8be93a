//! `rshperf ab`, `rshperf lb` and `--concurrency` end to end: every counter of ab's
//! report checked against what the in-process server saw (`support::ab_server`),
//! the files (`-g`, `-e`), and ab's and lb's diagnostics and exit statuses.

use std::fs;
use std::time::{Duration, Instant};

use crate::support::ab_server::{reply_head, AbServer, Counts, Misbehave, Script};
use crate::support::server::closed_port;
use crate::support::{self, numbers};

/// Runs rshperf with `args`; (status, stdout, stderr).
fn rshperf(args: &[&str]) -> (i32, String, String) {
    let out = support::run(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `rshperf ab|lb args`, asserting exit 0; returns stdout.
fn ok(tool: &str, args: &[&str]) -> String {
    let mut all = vec![tool];
    all.extend_from_slice(args);
    let (code, out, err) = rshperf(&all);
    assert_eq!(code, 0, "rshperf {all:?}\nstdout:\n{out}\nstderr:\n{err}");
    out
}

/// The value after `label` on the first line starting with it (within `block`).
fn field<'a>(block: &'a str, label: &str) -> &'a str {
    block
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no line '{label}' in:\n{block}"))
        .trim()
}

/// The first integer of `label`'s value.
fn num(block: &str, label: &str) -> u64 {
    numbers(field(block, label))[0] as u64
}

/// The report's blocks, one per server (each starts with `Server Software:`).
fn blocks(report: &str) -> Vec<&str> {
    let mut starts: Vec<usize> = report
        .match_indices("Server Software:")
        .map(|(i, _)| i)
        .collect();
    starts.push(report.len());
    starts.windows(2).map(|w| &report[w[0]..w[1]]).collect()
}

fn get(s: &AbServer, c: fn(&Counts) -> &std::sync::atomic::AtomicU64) -> u64 {
    s.get(c)
}

#[test]
fn one_connection_per_request_as_the_server_counted() {
    let s = AbServer::start(Script::default());
    let r = ok("ab", &["-n", "40", "-c", "4", &s.url("/x?y=1")]);
    assert_eq!(get(&s, |c| &c.requests), 40);
    assert_eq!(get(&s, |c| &c.connections), 40);
    assert!((1..=4).contains(&get(&s, |c| &c.max_in_flight)));
    let port = s.addr.port();
    let request = format!(
        "GET /x?y=1 HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: rshperfab/0.1.0\r\nAccept: */*\r\n\r\n"
    );
    assert_eq!(*s.counts.first.lock().expect("lock"), request.as_bytes());
    assert_eq!(get(&s, |c| &c.request_bytes), 40 * request.len() as u64);
    let head = reply_head(200, 6, false).len() as u64;
    assert!(r.starts_with("This is rshperf ab, Version "), "{r}");
    assert!(
        r.contains("\nBenchmarking 127.0.0.1 (be patient).....done\n\n\nServer Software:"),
        "{r}"
    );
    assert_eq!(field(&r, "Server Software:"), "rshperf-test/1.0");
    assert_eq!(num(&r, "Server Port:"), u64::from(port));
    assert_eq!(field(&r, "Document Path:"), "/x?y=1");
    assert_eq!(field(&r, "Document Length:"), "6 bytes");
    assert_eq!(num(&r, "Concurrency Level:"), 4);
    assert_eq!(num(&r, "Complete requests:"), 40);
    assert_eq!(num(&r, "Failed requests:"), 0);
    assert_eq!(num(&r, "Total transferred:"), 40 * (head + 6));
    assert_eq!(num(&r, "HTML transferred:"), 240);
    assert!(!r.contains("Keep-Alive requests:") && !r.contains("Non-2xx"));
    assert!(r.contains("\nConnection Times (ms)\n              min  mean[+/-sd] median   max\n"));
    assert!(r.contains("\n 100%  "));
}

#[test]
fn keep_alive_spends_the_budget_over_c_connections() {
    let s = AbServer::start(Script::default());
    let r = ok("ab", &["-k", "-q", "-n", "60", "-c", "3", &s.url("/")]);
    assert_eq!(get(&s, |c| &c.requests), 60);
    assert_eq!(get(&s, |c| &c.connections), 3);
    assert_eq!(num(&r, "Complete requests:"), 60);
    assert_eq!(num(&r, "Keep-Alive requests:"), 60);
    let request = s.counts.first.lock().expect("lock").clone();
    assert!(request.starts_with(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: "));
    let head = reply_head(200, 6, true).len() as u64;
    assert_eq!(num(&r, "Total transferred:"), 60 * (head + 6));
}

#[test]
fn keep_alive_reconnects_when_the_server_closes() {
    let s = AbServer::start(Script {
        close_every: 4,
        ..Script::default()
    });
    let r = ok("ab", &["-k", "-n", "50", "-c", "2", &s.url("/")]);
    let (requests, closes, conns) = (
        get(&s, |c| &c.requests),
        get(&s, |c| &c.closes),
        get(&s, |c| &c.connections),
    );
    assert_eq!(requests, 50);
    assert_eq!(num(&r, "Complete requests:"), 50);
    assert_eq!(num(&r, "Failed requests:"), 0);
    // A reply that closes the connection is not a keep-alive request (as in ab).
    assert_eq!(num(&r, "Keep-Alive requests:"), requests - closes);
    assert!(closes >= 50 / 4 - 2, "{closes} closes");
    // Every connection but the last of each user ended with the server's close.
    assert!(
        (closes..=closes + 2).contains(&conns),
        "{conns} connections, {closes} closes"
    );
}

fn seven_every_fourth(k: u64) -> usize {
    if k % 4 == 3 {
        7
    } else {
        6
    }
}

#[test]
fn length_failures_unless_l() {
    let script = Script {
        body: seven_every_fourth,
        ..Script::default()
    };
    let s = AbServer::start(script);
    let r = ok("ab", &["-n", "20", &s.url("/")]);
    assert_eq!(num(&r, "Complete requests:"), 20);
    assert_eq!(num(&r, "Failed requests:"), 5);
    assert_eq!(
        field(&r, "   (Connect:"),
        "0, Receive: 0, Length: 5, Exceptions: 0)"
    );
    assert_eq!(num(&r, "HTML transferred:"), 15 * 6 + 5 * 7);
    let s = AbServer::start(script);
    let r = ok("ab", &["-l", "-n", "20", &s.url("/")]);
    assert_eq!(num(&r, "Failed requests:"), 0);
    assert_eq!(field(&r, "Document Length:"), "Variable");
}

#[test]
fn non_2xx_responses_are_counted_not_failed() {
    let s = AbServer::start(Script {
        status: 404,
        ..Script::default()
    });
    let r = ok("ab", &["-n", "12", "-c", "3", "-i", &s.url("/missing")]);
    assert_eq!(num(&r, "Non-2xx responses:"), 12);
    assert_eq!(num(&r, "Failed requests:"), 0);
    // HEAD: no body, whatever Content-Length says.
    assert_eq!(field(&r, "Document Length:"), "0 bytes");
    assert_eq!(num(&r, "HTML transferred:"), 0);
    let first = s.counts.first.lock().expect("lock").clone();
    assert!(first.starts_with(b"HEAD /missing HTTP/1.0\r\n"));
}

fn every_second(k: u64) -> Option<Misbehave> {
    (k % 2 == 1).then_some(Misbehave::Garbage)
}

fn reset_every_second(k: u64) -> Option<Misbehave> {
    (k % 2 == 1).then_some(Misbehave::Reset)
}

fn hang_second(k: u64) -> Option<Misbehave> {
    (k == 1).then_some(Misbehave::Hang)
}

#[test]
fn exceptions_receive_and_connect_failures() {
    let s = AbServer::start(Script {
        misbehave: every_second,
        ..Script::default()
    });
    let r = ok("ab", &["-n", "10", &s.url("/")]);
    assert_eq!(get(&s, |c| &c.requests), 10);
    assert_eq!(
        (num(&r, "Complete requests:"), num(&r, "Failed requests:")),
        (5, 5)
    );
    assert_eq!(
        field(&r, "   (Connect:"),
        "0, Receive: 0, Length: 0, Exceptions: 5)"
    );

    let s = AbServer::start(Script {
        misbehave: reset_every_second,
        ..Script::default()
    });
    let r = ok("ab", &["-n", "10", &s.url("/")]);
    assert_eq!(get(&s, |c| &c.requests), 10);
    assert_eq!(
        field(&r, "   (Connect:"),
        "0, Receive: 5, Length: 0, Exceptions: 0)"
    );
    assert_eq!(num(&r, "Complete requests:"), 5);

    let port = closed_port().to_string();
    let url = format!("http://127.0.0.1:{port}/");
    let r = ok("ab", &["-n", "7", "-c", "2", &url]);
    assert_eq!(num(&r, "Complete requests:"), 0);
    assert_eq!(
        field(&r, "   (Connect:"),
        "7, Receive: 0, Length: 0, Exceptions: 0)"
    );
    assert_eq!(field(&r, "Server Software:"), "");
    assert!(!r.contains("Connection Times"), "{r}");
}

#[test]
fn a_timeout_is_an_exception_and_the_run_goes_on() {
    let s = AbServer::start(Script {
        misbehave: hang_second,
        ..Script::default()
    });
    let t0 = Instant::now();
    let r = ok("ab", &["-s", "1", "-n", "4", &s.url("/")]);
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(10),
        "{took:?}"
    );
    assert_eq!(get(&s, |c| &c.requests), 4);
    assert_eq!(num(&r, "Complete requests:"), 3);
    assert_eq!(
        field(&r, "   (Connect:"),
        "0, Receive: 0, Length: 0, Exceptions: 1)"
    );
}

#[test]
fn time_limit_ends_the_run() {
    let s = AbServer::start(Script {
        misbehave: |_| Some(Misbehave::Hang),
        ..Script::default()
    });
    let t0 = Instant::now();
    let r = ok("ab", &["-t", "1", "-c", "2", &s.url("/")]);
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(10),
        "{took:?}"
    );
    assert_eq!(num(&r, "Complete requests:"), 0);
    assert_eq!(get(&s, |c| &c.requests), 2);
    let seconds: f64 = numbers(field(&r, "Time taken for tests:"))[0];
    assert!((0.9..5.0).contains(&seconds), "{seconds}");
}

#[test]
fn several_urls_each_get_n_and_c_and_a_dead_one_fails_alone() {
    let (a, b) = (
        AbServer::start(Script::default()),
        AbServer::start(Script::default()),
    );
    let dead = format!("http://127.0.0.1:{}/gone", closed_port());
    let r = ok(
        "ab",
        &["-n", "30", "-c", "3", &a.url("/a"), &b.url("/b"), &dead],
    );
    for s in [&a, &b] {
        assert_eq!(get(s, |c| &c.requests), 30);
        assert!(get(s, |c| &c.max_in_flight) <= 3);
    }
    let blocks = blocks(&r);
    assert_eq!(blocks.len(), 3, "{r}");
    assert_eq!(field(blocks[0], "Document Path:"), "/a");
    assert_eq!(field(blocks[1], "Document Path:"), "/b");
    assert_eq!(field(blocks[2], "Document Path:"), "/gone");
    for ok_block in &blocks[..2] {
        assert_eq!(num(ok_block, "Complete requests:"), 30);
        assert_eq!(num(ok_block, "Failed requests:"), 0);
    }
    assert_eq!(
        field(blocks[2], "   (Connect:"),
        "30, Receive: 0, Length: 0, Exceptions: 0)"
    );
    assert!(r.contains("Benchmarking 127.0.0.1, 127.0.0.1, 127.0.0.1 (be patient)"));
}

#[test]
fn lb_with_a_servers_file_prints_lbs_lines() {
    let (a, b) = (
        AbServer::start(Script::default()),
        AbServer::start(Script::default()),
    );
    let dir = std::env::temp_dir().join(format!("rshperf-lb-{}", std::process::id()));
    fs::write(
        &dir,
        format!("# two servers\n{}\n\n{}\n", a.url("/"), b.url("/p")),
    )
    .expect("write");
    let file = dir.to_string_lossy().into_owned();
    let r = ok("lb", &["-n", "10", "-c", "2", "-k", "-f", &file]);
    fs::remove_file(&dir).expect("cleanup");
    assert!(r.starts_with("This is rshperf lb ver. "), "{r}");
    assert!(r.contains("\nlb: #2 HTTP servers - benchmark session started at "));
    assert!(r.contains("\nlb: #2 HTTP servers - benchmark session stopped at "));
    for s in [&a, &b] {
        assert_eq!(get(s, |c| &c.requests), 10);
        assert_eq!(get(s, |c| &c.connections), 2);
    }
    let blocks = blocks(&r);
    assert_eq!(blocks.len(), 2);
    for blk in blocks {
        assert_eq!(num(blk, "Keep-Alive requests:"), 10);
        let lb_line = blk
            .lines()
            .find(|l| l.ends_with(" min/avg/max [msec]"))
            .expect("lb's line");
        assert!(lb_line.starts_with("Time per request:       "));
        let v = numbers(lb_line);
        assert!(v[0] <= v[1] && v[1] <= v[2], "{lb_line}");
    }
    // -q: no banner, no started/stopped lines.
    let q = ok("lb", &["-q", "-n", "2", &a.url("/")]);
    assert!(q.starts_with("Server Software:"), "{q}");
}

#[test]
fn gnuplot_rows_and_percentile_csv() {
    let s = AbServer::start(Script::default());
    let base = std::env::temp_dir().join(format!("rshperf-ab-files-{}", std::process::id()));
    let (g, e) = (base.with_extension("tsv"), base.with_extension("csv"));
    let (gs, es) = (
        g.to_string_lossy().into_owned(),
        e.to_string_lossy().into_owned(),
    );
    ok(
        "ab",
        &["-n", "25", "-c", "5", "-g", &gs, "-e", &es, &s.url("/")],
    );
    let tsv = fs::read_to_string(&g).expect("gnuplot file");
    let csv = fs::read_to_string(&e).expect("csv file");
    fs::remove_file(&g).expect("cleanup");
    fs::remove_file(&e).expect("cleanup");
    let rows: Vec<&str> = tsv.lines().collect();
    assert_eq!(rows.len(), 26);
    assert_eq!(rows[0], "starttime\tseconds\tctime\tdtime\tttime\twait");
    assert!(rows[1..].iter().all(|r| r.split('\t').count() == 6));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 102);
    assert_eq!(lines[0], "Percentage served,Time in ms");
    let times: Vec<f64> = lines[1..].iter().map(|l| numbers(l)[1]).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{csv}");
}

#[test]
fn post_body_is_sent_with_every_request() {
    let s = AbServer::start(Script::default());
    let body = std::env::temp_dir().join(format!("rshperf-ab-post-{}", std::process::id()));
    fs::write(&body, vec![b'q'; 100]).expect("write");
    let path = body.to_string_lossy().into_owned();
    let r = ok(
        "ab",
        &[
            "-n",
            "8",
            "-c",
            "2",
            "-p",
            &path,
            "-T",
            "a/b",
            &s.url("/post"),
        ],
    );
    fs::remove_file(&body).expect("cleanup");
    let first = s.counts.first.lock().expect("lock").clone();
    let text = String::from_utf8_lossy(&first);
    assert!(
        text.starts_with(
            "POST /post HTTP/1.0\r\nContent-length: 100\r\nContent-type: a/b\r\nHost: "
        ),
        "{text}"
    );
    assert!(text.ends_with(&"q".repeat(100)));
    let sent = get(&s, |c| &c.request_bytes);
    assert_eq!(sent, 8 * first.len() as u64);
    assert_eq!(num(&r, "Total body sent:"), sent);
    assert!(r.contains(" kb/s sent\n") && r.contains(" kb/s total\n"));
}

#[test]
fn bad_input_gets_abs_and_lbs_statuses() {
    let usage = "Usage: rshperf ab [options] [http[s]://]hostname[:port]/path [URL ...]";
    let cases: &[(&[&str], i32, &str)] = &[
        (&["ab"], 22, "rshperf ab: wrong number of arguments"),
        (
            &["ab", "http://127.0.0.1:8080"],
            22,
            "rshperf ab: invalid URL",
        ),
        (
            &["ab", "-n", "0", "http://127.0.0.1:1/"],
            1,
            "rshperf ab: Invalid number of requests",
        ),
        (
            &["ab", "-w", "http://127.0.0.1:1/"],
            1,
            "rshperf ab: -w (HTML output) is not supported",
        ),
        (
            &["ab", "http://no-such-host.invalid/"],
            1,
            "rshperf ab: cannot resolve host no-such-host.invalid (port 80)",
        ),
        (&["lb"], 1, "rshperf lb: missing argument"),
        (
            &["lb", "-c", "0", "h:1"],
            1,
            "rshperf lb: illegal # of concurrency requests [0]",
        ),
    ];
    for (args, code, first) in cases {
        let (got, out, err) = rshperf(args);
        assert_eq!(got, *code, "{args:?}: {err}");
        assert_eq!(err.lines().next(), Some(*first), "{args:?}");
        assert!(out.is_empty(), "{args:?}: {out}");
        if *code == 22 {
            assert!(err.contains(usage), "{args:?}");
        }
    }
    let (code, out, _) = rshperf(&["ab", "-V"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("This is rshperf ab, Version "));
}

#[test]
fn concurrency_keeps_c_connections_in_flight() {
    let s = AbServer::start(Script {
        delay: Duration::from_millis(30),
        ..Script::default()
    });
    let port = s.addr.port().to_string();
    let r = support::run_ok(
        s.addr.port(),
        &["--num-conns", "24", "--concurrency", "4", "--threads", "2"],
    );
    assert_eq!(r.totals(), (24, 24, 24));
    assert_eq!(get(&s, |c| &c.max_in_flight), 4);
    assert!(
        r.text.starts_with(&format!(
            "rshperf --client=0/1 --server=127.0.0.1 --port={port} --uri=/ --send-buffer=4096 \
         --recv-buffer=16384 --num-conns=24 --num-calls=1 --threads=2 --concurrency=4\n"
        )),
        "{}",
        r.text
    );
    assert!(r.text.contains("<=4 concurrent connections"), "{}", r.text);
    // No rate: httperf's sequential mode, one connection at a time.
    let s = AbServer::start(Script {
        delay: Duration::from_millis(5),
        ..Script::default()
    });
    let r = support::run_ok(s.addr.port(), &["--num-conns", "6", "--num-calls", "2"]);
    assert_eq!(r.totals(), (6, 12, 12));
    assert_eq!(get(&s, |c| &c.max_in_flight), 1);
    let (code, _, err) = rshperf(&[
        "--server",
        "127.0.0.1",
        "--concurrency",
        "3",
        "--rate",
        "10",
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim(),
        "rshperf: --concurrency runs a closed loop: give it or --rate/--period, not both"
    );
}

#[test]
fn every_ab_and_lb_letter_is_in_the_man_page() {
    let man =
        fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man/rshperf.1"))
            .expect("read man/rshperf.1");
    let cases: [(&[&str], &str, &str); 2] = [
        (&["ab", "--help"], ".SS rshperf ab", ".SS rshperf lb"),
        (&["lb", "-h"], ".SS rshperf lb", ".SH OUTPUT"),
    ];
    for (help, from, to) in cases {
        let (code, out, _) = rshperf(help);
        assert_eq!(code, 0, "{help:?}");
        let letters: Vec<char> = out
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix('-')?.chars().next())
            .filter(char::is_ascii_alphabetic)
            .collect();
        assert!(letters.len() >= 14, "{help:?}: {letters:?}");
        let start = man.find(from).expect("section start");
        let end = man[start..].find(to).map_or(man.len(), |e| start + e);
        let section = &man[start..end];
        for c in letters {
            assert!(
                section.contains(&format!("\\fB\\-{c}\\fR")),
                "`rshperf {}` -{c} is not documented under {from} in man/rshperf.1",
                help[0]
            );
        }
    }
    assert!(man.contains("\\fB\\-\\-concurrency\\fR=\\fIC\\fR"));
}

#[test]
fn lb_retries_a_request_whose_connection_failed() {
    use crate::support::hostile_server::{HostileServer, Step};
    // A TLS handshake the server cuts short is a connect-phase failure: lb's -m tries
    // the request again on a new connection, then counts it once.
    let s = HostileServer::start(vec![Step::Close]);
    let url = format!("https://127.0.0.1:{}/", s.port());
    let r = ok("lb", &["-q", "-m", "2", "-n", "3", &url]);
    assert_eq!(s.connections(), 9);
    assert_eq!(num(&r, "Complete requests:"), 0);
    assert_eq!(
        field(&r, "   (Connect:"),
        "3, Receive: 0, Length: 0, Exceptions: 0)"
    );
    let s = HostileServer::start(vec![Step::Close]);
    let url = format!("https://127.0.0.1:{}/", s.port());
    let r = ok("lb", &["-q", "-m", "0", "-n", "3", &url]);
    assert_eq!(s.connections(), 3);
    assert_eq!(
        field(&r, "   (Connect:"),
        "3, Receive: 0, Length: 0, Exceptions: 0)"
    );
}
