//! `--call-rate R`: calls on an absolute schedule over a pool of
//! `--num-conns` keep-alive (or HTTP/2) connections. Exact totals with `--num-calls`
//! (also over `--threads` and `--partition`), the rate achieved with `--runtime`,
//! lateness and response time measured from the schedule when the server is slower
//! than the rate, connections reopened after `Connection: close` and GOAWAY, and the
//! refused combinations. Every report is checked against what the server counted.

use std::time::Duration;

use crate::support::h2_server::{H2Server, Opts};
use crate::support::server::{Behavior, Server};
use crate::support::tls_server::{Pki, TlsServer};
use crate::support::{run, run_ok, Report, HANG_GUARD};

/// The figures of the `Call rate [calls/s]:` line: target, achieved, connections,
/// scheduled, issued, completed, lost, unsent, max-waiting, reconnects, given-up,
/// abandoned, evicted.
fn call_rate(r: &Report) -> Vec<f64> {
    r.nums("Call rate [calls/s]:")
}

/// avg, p50, p90, p99, max (ms) of a `Call lateness`/`Call response` line.
fn spread(r: &Report, label: &str) -> Vec<f64> {
    // The numbers of "avg A p50 B p90 C p99 D max E", the 50, 90, 99 included.
    let n = r.nums(label);
    assert_eq!(n.len(), 8, "{label} in {}", r.text);
    vec![n[0], n[2], n[4], n[6], n[7]]
}

#[test]
fn num_calls_gives_exact_totals_over_the_pool() {
    let s = Server::start(Behavior::Fixed(100));
    let r = run_ok(
        s.port(),
        &[
            "--call-rate",
            "1000",
            "--num-conns",
            "4",
            "--num-calls",
            "50",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (4, 200, 200), "{}", r.text);
    assert_eq!(s.requests(), 200);
    assert_eq!(s.connections(), 4);
    assert_eq!(r.status(), [0, 200, 0, 0, 0]);
    assert_eq!(r.error("total"), 0);
    let c = call_rate(&r);
    assert_eq!(c[0], 1000.0, "{}", r.text);
    // connections, scheduled, issued, completed, lost, unsent; reconnects, given-up.
    assert_eq!(
        &c[2..8],
        &[4.0, 200.0, 200.0, 200.0, 0.0, 0.0],
        "{}",
        r.text
    );
    // reconnects, given-up, abandoned, evicted.
    assert_eq!(&c[9..], &[0.0, 0.0, 0.0, 0.0], "{}", r.text);
    assert!(r.text.lines().next().is_some_and(|l| l
        .ends_with("--num-conns=4 --num-calls=50 --call-rate=1000")
        && !l.contains("--rate")));
    assert_eq!(spread(&r, "Call lateness [ms]:").len(), 5);
}

#[test]
fn runtime_runs_at_the_rate() {
    let s = Server::start(Behavior::Fixed(10));
    let r = run_ok(
        s.port(),
        &[
            "--call-rate",
            "500",
            "--num-conns",
            "5",
            "--runtime",
            "2",
            "--timeout",
            "5",
        ],
    );
    let c = call_rate(&r);
    // Calls k at k/500 s before 2 s: exactly 1000 scheduled.
    assert_eq!(c[3], 1000.0, "{}", r.text);
    // Each is taken by a connection (even late on a busy machine) unless it is still
    // waiting when the run ends.
    assert_eq!(c[4] + c[7], 1000.0, "{}", r.text);
    assert!(c[4] >= 950.0, "{}", r.text);
    // What the report calls issued, the server received (but for those in flight).
    let (conns, requests, replies) = r.totals();
    assert_eq!(conns, 5, "{}", r.text);
    assert_eq!(requests as f64, c[4], "{}", r.text);
    assert!(s.requests() >= replies && s.requests() <= requests);
    // Achieved = issued / the schedule's span: the test duration less the pool's
    // warm-up (`--runtime` moves with it), so the span is 2 s and the rate at most
    // the 500/s scheduled. (How late calls are issued is tested on simulated time in
    // `engine::event_loop::dispatch`; the duration has a hang guard.)
    let duration = r.nums("Total:")[3];
    assert!(
        (1.99..2.0 + HANG_GUARD.as_secs_f64()).contains(&duration),
        "{}",
        r.text
    );
    let span = c[4] / c[1];
    assert!((1.99..=duration + 0.01).contains(&span), "{}", r.text);
    assert!(c[1] <= 500.2, "{}", r.text);
}

#[test]
fn a_slow_server_shows_queueing_in_response_times_from_the_schedule() {
    // Two connections, one call each at a time, 20 ms per reply: 100 calls/s at most,
    // against 200 scheduled per second. Calls queue; their lateness and response time
    // count from the schedule, so the last ones are about a second late, while the
    // classic response time (from the send) stays near 20 ms.
    let s = Server::start(Behavior::Slow(Duration::from_millis(20), 10));
    let r = run_ok(
        s.port(),
        &[
            "--call-rate",
            "200",
            "--num-conns",
            "2",
            "--num-calls",
            "100",
            "--timeout",
            "10",
        ],
    );
    assert_eq!(r.totals(), (2, 200, 200), "{}", r.text);
    assert_eq!(s.requests(), 200);
    let c = call_rate(&r);
    assert!(c[8] >= 50.0, "max-waiting {}: {}", c[8], r.text);
    let late = spread(&r, "Call lateness [ms]:");
    let resp = spread(&r, "Call response [ms]:");
    let classic = r.nums("Reply time [ms]:")[0];
    assert!(late[4] >= 500.0, "{}", r.text);
    assert!(resp[4] >= late[4] + 15.0, "{}", r.text);
    assert!(resp[4] >= 5.0 * classic, "{}", r.text);
    // The test lasts as long as the server needs: 2 s, not the schedule's 1 s.
    assert!(r.nums("Total:")[3] >= 1.9, "{}", r.text);
}

#[test]
fn threads_and_partitions_stripe_the_calls() {
    let s = Server::start(Behavior::Fixed(10));
    let r = run_ok(
        s.port(),
        &[
            "--call-rate",
            "400",
            "--num-conns",
            "4",
            "--num-calls",
            "25",
            "--threads",
            "2",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (4, 100, 100), "{}", r.text);
    assert_eq!(s.requests(), 100);
    assert_eq!(s.connections(), 4);
    assert_eq!(&call_rate(&r)[2..6], &[4.0, 100.0, 100.0, 100.0]);
    // Partitions 0/3, 1/3, 2/3 of 5 connections × 6 calls: 2, 2, 1 connections and
    // 10 calls each (calls k ≡ I mod 3 of 30).
    let s = Server::start(Behavior::Fixed(10));
    let mut calls = 0;
    let docs: Vec<_> = (0..3)
        .map(|i| crate::support::recorder::TempFile::new(&format!("cr-part{i}"), b""))
        .collect();
    for (part, doc) in ["0/3", "1/3", "2/3"].iter().zip(&docs) {
        let p = format!("--partition={part}");
        let j = format!("--json={}", doc.path);
        let r = run_ok(
            s.port(),
            &[
                "--call-rate",
                "300",
                "--num-conns",
                "5",
                "--num-calls",
                "6",
                &p,
                &j,
                "--timeout",
                "5",
            ],
        );
        let (_, requests, replies) = r.totals();
        assert_eq!((requests, replies), (10, 10), "{part}: {}", r.text);
        calls += requests;
    }
    assert_eq!(calls, 30);
    assert_eq!(s.requests(), 30);
    assert_eq!(s.connections(), 5);
    // `rshperf merge` of the parts prints the whole run's call-rate line.
    let mut argv = vec!["merge"];
    argv.extend(docs.iter().map(|d| d.path.as_str()));
    let out = run(&argv);
    let merged = Report {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(out.status.code(), Some(0), "{}", merged.stderr);
    let c = call_rate(&merged);
    assert_eq!(c[0], 300.0, "{}", merged.text);
    assert_eq!(
        &c[2..8],
        &[5.0, 30.0, 30.0, 30.0, 0.0, 0.0],
        "{}",
        merged.text
    );
}

#[test]
fn connections_closed_by_the_server_are_reopened() {
    // Every reply says `Connection: close`: each call needs a new connection; the pool
    // stays at two and every call is answered.
    let s = Server::start(Behavior::ConnectionClose(10));
    let r = run_ok(
        s.port(),
        &[
            "--call-rate",
            "100",
            "--num-conns",
            "2",
            "--num-calls",
            "10",
            "--timeout",
            "5",
        ],
    );
    let (conns, requests, replies) = r.totals();
    assert_eq!((requests, replies), (20, 20), "{}", r.text);
    assert_eq!(s.requests(), 20);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    let c = call_rate(&r);
    assert_eq!(c[5], 20.0, "{}", r.text);
    // 2 pool connections plus one per close (the last ones may close after the run).
    assert!(c[9] >= 18.0, "{}", r.text);
    assert_eq!(conns, 2 + c[9] as u64, "{}", r.text);
    assert_eq!(s.connections(), conns);
}

#[test]
fn a_dead_server_gives_the_pool_up_and_the_run_ends() {
    let port = crate::support::server::closed_port();
    let r = run_ok(
        port,
        &[
            "--call-rate",
            "100",
            "--num-conns",
            "3",
            "--num-calls",
            "10",
            "--timeout",
            "2",
        ],
    );
    let c = call_rate(&r);
    // Each slot tried twice, then given up; nothing was sent.
    assert_eq!(r.error("connrefused"), 6, "{}", r.text);
    assert_eq!(c[10], 3.0, "{}", r.text);
    assert_eq!(c[4], 0.0, "{}", r.text);
}

#[test]
fn http2_streams_carry_the_calls_and_goaway_reopens() {
    let s = H2Server::start(Opts {
        body: 100,
        max_streams: Some(3),
        ..Opts::default()
    });
    let r = run_ok(
        s.port(),
        &[
            "--http-version",
            "2",
            "--call-rate",
            "2000",
            "--num-conns",
            "2",
            "--num-calls",
            "100",
            "--burst-length",
            "8",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (2, 200, 200), "{}", r.text);
    assert_eq!(s.requests(), 200);
    assert_eq!(s.connections(), 2);
    // --burst-length 8 streams, but the server allows 3 at a time.
    assert!(s.max_in_flight() <= 3, "{}", s.max_in_flight());
    assert_eq!(&call_rate(&r)[3..6], &[200.0, 200.0, 200.0]);
    // A GOAWAY after 30 requests of a connection: the pool reopens it.
    let s = H2Server::start(Opts {
        body: 10,
        goaway_after: Some(30),
        ..Opts::default()
    });
    let r = run_ok(
        s.port(),
        &[
            "--http-version",
            "2",
            "--call-rate",
            "1000",
            "--num-conns",
            "2",
            "--num-calls",
            "50",
            "--timeout",
            "5",
        ],
    );
    let (conns, requests, replies) = r.totals();
    assert_eq!(replies, 100, "{}", r.text);
    assert_eq!(s.requests(), requests);
    let c = call_rate(&r);
    assert_eq!(c[5], 100.0, "{}", r.text);
    assert!(c[9] >= 2.0, "{}", r.text);
    assert_eq!(conns, 2 + c[9] as u64, "{}", r.text);
}

#[test]
fn refused_combinations_say_why() {
    for (args, says) in [
        (&["--rate", "10"][..], "--rate (connections per second)"),
        (&["--concurrency", "2"][..], "--concurrency"),
        (&["--wsess", "2,2,0"][..], "sessions"),
        (&["--http-version", "1.0"][..], "HTTP/1.0"),
        (
            &["--period", "e0.5"][..],
            "the period's mean must be 1/R = 0.1 s",
        ),
        (
            &["--num-conns", "1", "--threads", "2"][..],
            "every engine needs a connection",
        ),
    ] {
        let mut all = vec!["--server", "127.0.0.1", "--call-rate", "10"];
        all.extend_from_slice(args);
        let out = run(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with("rshperf: "), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let out = run(&["--server", "127.0.0.1", "--call-rate", "0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("illegal call rate 0"));
}

#[test]
fn pipelining_wlog_and_json() {
    use crate::support::recorder::{self, Recorder, TempFile};
    // One connection, up to three calls pipelined on it, a server that takes 30 ms per
    // reply: calls due every 5 ms pile up, so requests follow each other unanswered.
    let s = Recorder::start(recorder::Opts {
        delay: Duration::from_millis(30),
        ..recorder::Opts::default()
    });
    let wlog = TempFile::new("cr-wlog", b"/u1\0/u2\0/u3");
    let json = TempFile::new("cr-json", b"");
    let wlog_arg = format!("--wlog=y,{}", wlog.path);
    let json_arg = format!("--json={}", json.path);
    let r = run_ok(
        s.port(),
        &[
            "--call-rate",
            "200",
            "--num-conns",
            "1",
            "--num-calls",
            "12",
            "--burst-length",
            "3",
            &wlog_arg,
            &json_arg,
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (1, 12, 12), "{}", r.text);
    let reqs = s.requests();
    let uris: Vec<&str> = reqs.iter().map(|q| q.uri.as_str()).collect();
    assert_eq!(uris, ["/u1", "/u2", "/u3"].repeat(4), "{}", r.text);
    assert!(reqs.iter().any(|q| q.followed), "no call was pipelined");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json.path).expect("json written"))
            .expect("valid JSON");
    let c = &doc["call_rate"];
    assert_eq!(c["target_per_s"], 200.0, "{c}");
    assert_eq!(c["scheduled"], 12);
    assert_eq!(c["issued"], 12);
    assert_eq!(c["completed"], 12);
    assert_eq!(c["lateness_ms"]["count"], 12);
    assert_eq!(doc["raw"]["pool"]["connections"], 1);
    assert_eq!(doc["config"]["call_rate"], 200.0);
    let late = spread(&r, "Call lateness [ms]:");
    assert_eq!(c["lateness_ms"]["p99"].as_f64(), Some(late[3]));
}

#[test]
fn a_fast_rate_is_issued_in_batches_on_a_tick() {
    use crate::support::recorder::TempFile;
    // 40,000 calls/s (25 µs apart) is batched: a periodic 250 µs tick wakes the
    // engine, which issues every call due by then in one pass, each timed from its
    // own schedule; it does not wake (nor spin) before each call.
    let s = Server::start(Behavior::Fixed(10));
    let json = TempFile::new("cr-batch", b"");
    let json_arg = format!("--json={}", json.path);
    let r = run_ok(
        s.port(),
        &[
            "--call-rate",
            "40000",
            "--num-conns",
            "8",
            "--num-calls",
            "1250",
            &json_arg,
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (8, 10000, 10000), "{}", r.text);
    assert_eq!(s.requests(), 10000);
    assert_eq!(s.connections(), 8);
    assert_eq!(r.error("total"), 0, "{}", r.text);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json.path).expect("json written"))
            .expect("valid JSON");
    let c = &doc["call_rate"];
    assert_eq!(c["scheduled"], 10000, "{c}");
    assert_eq!(c["issued"], 10000, "{c}");
    assert_eq!(c["completed"], 10000, "{c}");
    assert_eq!(c["lateness_ms"]["count"], 10000, "{c}");
    let pacing = &doc["raw"]["pacing"];
    assert_eq!(pacing["spins"], 0, "{pacing}");
    // Timer wake-ups: at most one per tick of the run (the tick stops with the last
    // call), where pacing each call would take up to one per call.
    let secs = doc["duration_s"].as_f64().expect("duration");
    let wakeups = pacing["wakeups"].as_f64().expect("wakeups");
    assert!(wakeups <= secs / 250e-6 + 20.0, "{wakeups} in {secs} s");

    // 100 calls due within 2.5 ms, answered over a second by a slow server: the tick
    // stops with the last call instead of waking the engine 4,000 times a second.
    let s = Server::start(Behavior::Slow(Duration::from_millis(20), 10));
    let json = TempFile::new("cr-batch-end", b"");
    let json_arg = format!("--json={}", json.path);
    let r = run_ok(
        s.port(),
        &[
            "--call-rate",
            "40000",
            "--num-conns",
            "2",
            "--num-calls",
            "50",
            &json_arg,
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals(), (2, 100, 100), "{}", r.text);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json.path).expect("json written"))
            .expect("valid JSON");
    assert!(
        doc["duration_s"].as_f64().expect("duration") >= 0.9,
        "{}",
        r.text
    );
    let wakeups = doc["raw"]["pacing"]["wakeups"].as_u64().expect("wakeups");
    assert!(wakeups < 100, "{wakeups} timer wake-ups");
    // The calls queued for the two connections, each late from its own schedule: the
    // first few at once, the last after about a second.
    let late = spread(&r, "Call lateness [ms]:");
    assert!(late[1] < late[4] && late[4] >= 800.0, "{}", r.text);
}

/// The call lateness figures (avg, p50, p90, p99, max in ms) of a run against a TLS
/// server whose every handshake takes `delay`: two connections, ten calls at 100/s.
fn lateness_behind_slow_handshakes(delay: Duration, extra: &[&str]) -> (Report, Vec<f64>) {
    let pki = Pki::new();
    let s = TlsServer::start_slow(pki.server_config(false), delay);
    let mut args = vec![
        "--ssl",
        "--call-rate",
        "100",
        "--num-conns",
        "2",
        "--num-calls",
        "5",
        "--timeout",
        "5",
    ];
    args.extend_from_slice(extra);
    let r = run_ok(s.port(), &args);
    assert_eq!(r.totals(), (2, 10, 10), "{}", r.text);
    s.settle();
    assert_eq!((s.connections(), s.requests()), (2, 10), "{}", r.text);
    let late = spread(&r, "Call lateness [ms]:");
    (r, late)
}

#[test]
fn the_schedule_begins_once_the_pool_is_connected() {
    // Handshakes of 300 ms: the calls are due from when both connections are up, so
    // none is late by the handshake; the run lasts the handshake and the schedule.
    let (r, late) = lateness_behind_slow_handshakes(Duration::from_millis(300), &[]);
    assert!(late[4] < 150.0, "lateness max {} ms: {}", late[4], r.text);
    assert!(r.nums("Total:")[3] >= 0.38, "{}", r.text);
    // Achieved over the schedule's span (~0.09 s), not the test duration (~0.4 s).
    let achieved = call_rate(&r)[1];
    assert!(achieved > 80.0, "achieved {achieved}: {}", r.text);
}

#[test]
fn the_warm_up_ends_after_a_second_and_a_shared_start_keeps_its_schedule() {
    // Handshakes of 1.6 s: the schedule waits one second at most, so the first calls
    // are still about 0.6 s late.
    let (r, late) = lateness_behind_slow_handshakes(Duration::from_millis(1600), &[]);
    assert!(
        (450.0..1_400.0).contains(&late[4]),
        "lateness max {} ms: {}",
        late[4],
        r.text
    );
    // A shared start (partitions) does not move: every call due before the
    // handshakes end (all ten, over 90 ms) is late by them.
    let start = format!(
        "{:.3}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs_f64()
    );
    let (r, late) = lateness_behind_slow_handshakes(
        Duration::from_millis(300),
        &["--start-at", start.as_str()],
    );
    assert!(late[1] >= 200.0, "lateness p50 {} ms: {}", late[1], r.text);
}
