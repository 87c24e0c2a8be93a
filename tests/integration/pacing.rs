//! The pacing options end to end: the overload policy (`--overload=degrade` keeps the
//! connections in flight bounded and starts every arrival, late; `queue` is
//! httperf's fill-the-table behaviour), loopback source-address spreading, spinning
//! (`--spin`), `--pin`, `--realtime`, and their option errors and echo.

use std::net::{IpAddr, Ipv4Addr};
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::support::server::{Behavior, Server};
use crate::support::{self, bin, run, run_ok};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs rshperf against the server on `port` with `--json=-` and at most
/// `nofile` descriptors (`ulimit -n` in a shell, so that the connection table is
/// small); returns the output and the JSON document.
fn run_limited(nofile: u32, port: u16, args: &[&str]) -> (Output, Value) {
    let program = bin().get_program().to_string_lossy().into_owned();
    let port = port.to_string();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n {nofile} && exec \"$0\" \"$@\""))
        .arg(&program)
        .args(["--server", "127.0.0.1", "--port", &port, "--json=-"])
        .args(args)
        .output()
        .expect("run rshperf under sh");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("JSON: {e}\n{}", text(&out.stdout)));
    (out, doc)
}

fn num(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a counter: {v}"))
}

#[test]
fn an_impossible_schedule_degrades_with_bounded_connections_and_starts_every_arrival() {
    // 3,000 arrivals at a million a second to a server that answers after 20 ms,
    // with a table of 380 connections (400 descriptors): the engine falls behind
    // within a millisecond, and from then on at most a quarter of the table (95) is
    // in flight; the table never fills.
    let server = Server::start(Behavior::Slow(Duration::from_millis(20), 64));
    let (out, doc) = run_limited(
        400,
        server.port(),
        &[
            "--rate",
            "1000000",
            "--num-conns",
            "3000",
            "--timeout",
            "20",
        ],
    );
    let raw = &doc["raw"];
    assert_eq!(num(&raw["pacing"]["inflight_cap"]), 95);
    assert_eq!(num(&raw["pacing"]["unstarted"]), 0);
    assert!(num(&raw["pacing"]["deferred"]) > 2000, "{}", raw["pacing"]);
    let peak = num(&raw["max_concurrent"]);
    assert!((2..380).contains(&peak), "{peak} connections at once");
    // Every arrival was started, none failed, and the server saw them all.
    assert_eq!(num(&raw["connections"]), 3000);
    assert_eq!(doc["errors"]["total"], 0, "{}", doc["errors"]);
    assert_eq!(doc["replies"]["total"], 3000);
    assert_eq!(server.requests(), 3000);
    // Lateness is measured from the schedule: the last arrivals waited for about
    // 3,000 / 95 rounds of 20 ms.
    let max = doc["percentiles"]["lateness"]["max"].as_f64().expect("max");
    assert!(max > 300.0, "lateness max {max} ms");
    // And the client says it was the limit.
    assert!(
        text(&out.stderr).contains("rshperf: warning: client-bound: "),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn queue_fills_the_table_as_httperf_does() {
    let server = Server::start(Behavior::Slow(Duration::from_millis(100), 64));
    let (_, doc) = run_limited(
        400,
        server.port(),
        &[
            "--rate",
            "1000000",
            "--num-conns",
            "1000",
            "--timeout",
            "20",
            "--overload=queue",
        ],
    );
    let raw = &doc["raw"];
    assert_eq!(num(&raw["pacing"]["inflight_cap"]), 0);
    assert_eq!(num(&raw["pacing"]["deferred"]), 0);
    // The table (380) fills, and arrivals that find it full fail (fd-unavail).
    assert!(
        num(&raw["max_concurrent"]) > 300,
        "{}",
        raw["max_concurrent"]
    );
    let fd_unavail = num(&doc["errors"]["fd_unavail"]);
    assert!(fd_unavail > 0, "{}", doc["errors"]);
    assert_eq!(
        num(&doc["replies"]["total"]) + fd_unavail,
        1000,
        "{}",
        doc["errors"]
    );
}

#[test]
fn a_run_that_ends_counts_the_arrivals_it_never_started() {
    // One second of a million arrivals a second: all but a few hundred are still
    // waiting when --runtime ends the run; started + unstarted is the schedule.
    let server = Server::start(Behavior::Slow(Duration::from_millis(200), 64));
    let (_, doc) = run_limited(
        400,
        server.port(),
        &["--rate", "1000000", "--runtime", "1", "--timeout", "5"],
    );
    let raw = &doc["raw"];
    let started = num(&raw["connections"]);
    let unstarted = num(&raw["pacing"]["unstarted"]);
    assert!(started > 0 && unstarted > 0, "{started} {unstarted}");
    assert_eq!(started + unstarted, 1_000_000);
}

#[test]
fn loopback_connections_come_from_one_address_until_ports_are_under_pressure() {
    // A few connections: the kernel's address, no bind (spreading over 16 source
    // addresses under pressure: basic.rs, in a namespace with few ports).
    let local = |n: u8| IpAddr::V4(Ipv4Addr::new(127, 0, 0, n));
    let server = Server::start(Behavior::Fixed(100));
    let r = run_ok(
        server.port(),
        &["--rate", "400", "--num-conns", "40", "--timeout", "5", "-v"],
    );
    assert_eq!(server.peers(), [local(1)]);
    assert!(r
        .text
        .contains("\nPacing: deferred 0 unstarted 0 in-flight-cap "));
    assert!(r.text.contains(" source-addrs 0\n"), "{}", r.text);
    // httperf's meaning of --myaddr and --hog, and --overload=queue: no spreading.
    for extra in [
        &["--overload=queue"][..],
        &["--myaddr", "127.0.0.1"][..],
        &["--hog"][..],
    ] {
        let server = Server::start(Behavior::Fixed(100));
        let mut args = vec!["--rate", "400", "--num-conns", "20", "--timeout", "5"];
        args.extend_from_slice(extra);
        run_ok(server.port(), &args);
        assert_eq!(server.peers(), [local(1)], "{extra:?}");
        assert_eq!(server.requests(), 20);
    }
}

#[test]
fn spinning_waits_for_arrivals_and_off_never_spins() {
    let server = Server::start(Behavior::Fixed(100));
    let spins = |extra: &str| -> u64 {
        let r = run_ok(
            server.port(),
            &[
                "--rate",
                "200",
                "--num-conns",
                "60",
                "--timeout",
                "5",
                "-v",
                extra,
            ],
        );
        let line = r
            .text
            .lines()
            .find(|l| l.starts_with("Pacing: spins "))
            .unwrap_or_else(|| panic!("no spin line in\n{}", r.text));
        support::numbers(line)[0] as u64
    };
    // A 2-ms window at 5 ms between arrivals: the engine spins to nearly every one
    // (not the first, and not one it woke too late for on a busy machine).
    let n = spins("--spin=2000");
    assert!((1..=60).contains(&n), "{n} spins");
    assert_eq!(spins("--spin=off"), 0);
    assert_eq!(server.requests(), 120);
}

#[test]
fn pacing_options_are_echoed_and_bad_values_refused() {
    let server = Server::start(Behavior::Fixed(10));
    let r = run_ok(
        server.port(),
        &[
            "--num-conns",
            "2",
            "--overload=queue",
            "--spin",
            "50",
            "--pin",
        ],
    );
    let echo = r.text.lines().next().expect("echo line");
    assert!(
        echo.ends_with(" --overload=queue --spin=50 --pin"),
        "{echo}"
    );
    for (arg, message) in [
        (
            "--overload=drop",
            "rshperf: --overload: `drop' is not a policy (expected degrade or queue)\n",
        ),
        (
            "--spin=fast",
            "rshperf: --spin: `fast' is not auto, off or a number of microseconds from 0 to 10000\n",
        ),
        (
            "--spin=20000",
            "rshperf: --spin: `20000' is not auto, off or a number of microseconds from 0 to 10000\n",
        ),
    ] {
        let out = run(&["--server", "127.0.0.1", arg]);
        assert_eq!(out.status.code(), Some(1), "{arg}");
        assert_eq!(text(&out.stderr), message, "{arg}");
        assert!(out.stdout.is_empty());
    }
    // More engine threads than cores: not pinned, and said so.
    let r = run_ok(
        server.port(),
        &["--num-conns", "2", "--threads", "512", "--pin"],
    );
    assert!(
        r.stderr
            .contains("rshperf: warning: --pin: 512 engine threads for ")
            && r.stderr.contains(" cores: threads not pinned\n"),
        "{}",
        r.stderr
    );
}

#[test]
fn realtime_runs_when_permitted_and_says_why_not_otherwise() {
    let server = Server::start(Behavior::Fixed(10));
    let port = server.port().to_string();
    let out = run(&[
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--num-conns",
        "3",
        "--rate",
        "100",
        "--realtime",
    ]);
    let stderr = text(&out.stderr);
    if out.status.code() == Some(0) {
        assert_eq!(server.requests(), 3);
        assert!(text(&out.stdout).contains(" --realtime\n"));
    } else {
        // Not permitted here (no root, no CAP_SYS_NICE): an error, no run.
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with("rshperf: --realtime: cannot run the engines with SCHED_FIFO: "),
            "{stderr}"
        );
        assert_eq!(server.requests(), 0);
    }
}
