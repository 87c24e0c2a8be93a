//! `--rate-profile`: a run that lasts its profile and issues exactly the arrivals of
//! its integral (connections, sessions, `--call-rate=profile`, a `--num-conns` cap),
//! the timeline's target and issued columns, `--threads` and `--partition` parts
//! merged to the single run's arrivals second by second, and the refused
//! combinations. Every count is checked against what the server saw.

use std::fs;

use serde_json::Value;

use crate::merge::{merge_ok, run_partitions, Scratch};
use crate::support::server::{Behavior, Server};
use crate::support::{run, run_ok};

/// The column `name` of a `--timeline` CSV, one cell per second.
fn column(csv: &str, name: &str) -> Vec<String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let i = header
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    lines
        .map(|l| l.split(',').nth(i).expect("a cell").to_string())
        .collect()
}

/// The timeline's `offered` of each second of a JSON document.
fn offered(doc: &Value) -> Vec<u64> {
    doc["timeline"]
        .as_array()
        .expect("a timeline")
        .iter()
        .map(|s| s["offered"].as_u64().expect("offered"))
        .collect()
}

#[test]
fn a_ramp_and_hold_issue_exactly_their_integral_and_the_timeline_shows_the_target() {
    let server = Server::start(Behavior::Fixed(100));
    let dir = Scratch::new("profile-ramp");
    let (timeline, json) = (dir.file("t.csv"), dir.file("r.json"));
    let r = run_ok(
        server.port(),
        &[
            "--rate-profile",
            "ramp:100..300/2s,hold:200/1s",
            "--timeout",
            "5",
            &format!("--timeline={timeline}"),
            &format!("--json={json}"),
        ],
    );
    // ∫ rate = (100 + 300) / 2 × 2 + 200 × 1 = 600.
    assert_eq!(server.requests(), 600);
    assert_eq!(r.totals(), (600, 600, 600));
    let first = r.text.lines().next().expect("the echo line");
    assert!(
        first.ends_with(" --rate-profile=ramp:100..300/2s,hold:200/1s"),
        "{first}"
    );
    assert!(!first.contains("--rate="), "{first}");
    assert!(!first.contains("--num-conns="), "{first}");
    let csv = fs::read_to_string(&timeline).expect("the timeline");
    let target = column(&csv, "target");
    // (The last row is the partial last second, its target the part it covers.)
    assert_eq!(target[..2], ["150", "250"], "{csv}");
    let issued: u64 = column(&csv, "issued")
        .iter()
        .map(|c| c.parse::<u64>().expect("a count"))
        .sum();
    assert_eq!(issued, 600, "{csv}");
    let doc: Value = serde_json::from_str(&fs::read_to_string(&json).expect("JSON")).expect("JSON");
    assert_eq!(
        doc["config"]["rate_profile"],
        "ramp:100..300/2s,hold:200/1s"
    );
    assert_eq!(doc["timeline"][1]["target"], 250.0);
    assert_eq!(offered(&doc).iter().sum::<u64>(), 600);
}

#[test]
fn sessions_call_rate_and_a_cap_follow_the_profile() {
    let server = Server::start(Behavior::Fixed(10));
    // Sessions: 100 of the profile's (the --wsess count caps, 1000 does not bind).
    let r = run_ok(
        server.port(),
        &[
            "--wsess",
            "1000,2,0",
            "--rate-profile",
            "hold:100/1s",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(server.requests(), 200);
    assert_eq!(r.totals().0, 100, "{}", r.text);

    // Calls over a pool of 2 connections at the profile's rate: ∫ = 150.
    let server = Server::start(Behavior::Fixed(10));
    let r = run_ok(
        server.port(),
        &[
            "--num-conns",
            "2",
            "--call-rate=profile",
            "--rate-profile",
            "ramp:100..200/1s",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(server.requests(), 150);
    assert_eq!(r.totals(), (2, 150, 150));
    assert!(r
        .text
        .lines()
        .next()
        .expect("echo")
        .contains(" --call-rate=profile "));

    // --num-conns caps a profile of connections.
    let server = Server::start(Behavior::Fixed(10));
    let r = run_ok(
        server.port(),
        &[
            "--num-conns",
            "40",
            "--rate-profile",
            "hold:100/1s",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(server.requests(), 40);
    assert_eq!(r.totals(), (40, 40, 40));
}

#[test]
fn threads_and_partitions_of_a_poisson_profile_issue_the_single_runs_arrivals() {
    let args = [
        "--rate-profile",
        "ramp:100..300/1s,sine:200~100/1s/1s",
        "--period",
        "e1",
        "--timeout",
        "5",
    ];
    let dir = Scratch::new("profile-parts");
    let one = Server::start(Behavior::Fixed(10));
    let single = run_partitions(&dir, "one", one.port(), 1, None, &args);
    let n = one.requests();
    let single: Value =
        serde_json::from_str(&fs::read_to_string(&single[0]).expect("JSON")).expect("JSON");
    assert_eq!(single["connections"]["total"].as_u64(), Some(n));
    let per_second = offered(&single);
    assert_eq!(per_second.iter().sum::<u64>(), n);

    let two = Server::start(Behavior::Fixed(10));
    let mut threaded = args.to_vec();
    threaded.extend(["--threads", "2"]);
    let parts = run_partitions(&dir, "p", two.port(), 2, Some(1.0), &threaded);
    assert_eq!(two.requests(), n);
    let all = dir.file("all.json");
    let json = format!("--json={all}");
    let mut merge_args = vec![json.as_str()];
    merge_args.extend(parts.iter().map(String::as_str));
    let r = merge_ok(&merge_args);
    assert_eq!(r.totals(), (n, n, n));
    let merged: Value =
        serde_json::from_str(&fs::read_to_string(&all).expect("JSON")).expect("JSON");
    // The same arrivals in the same scheduled seconds, and the same target.
    assert_eq!(offered(&merged), per_second);
    for s in 0..2 {
        assert_eq!(
            merged["timeline"][s]["target"],
            single["timeline"][s]["target"]
        );
    }
}

#[test]
fn options_that_set_the_rate_otherwise_are_refused() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["--rate", "10", "--rate-profile", "hold:1/1s"],
            "rshperf: --rate-profile sets the rate over time: give it or --rate, not both \
             (--period still chooses the spacing: d, u, e or v)\n",
        ),
        (
            &["--concurrency", "2", "--rate-profile", "hold:1/1s"],
            "rshperf: --rate-profile sets the rate over time: --concurrency runs a closed \
             loop, which has no schedule; give one of them\n",
        ),
        (
            &[
                "--call-rate",
                "5",
                "--num-conns",
                "2",
                "--rate-profile",
                "hold:1/1s",
            ],
            "rshperf: --rate-profile sets the rate over time: write --call-rate=profile for \
             calls at the profile's rate\n",
        ),
        (
            &["--call-rate=profile"],
            "rshperf: --call-rate=profile takes the call rate from --rate-profile, which is \
             not given\n",
        ),
        (
            &["--rate-profile", "ramp:1..2"],
            "rshperf: --rate-profile: segment 1 `ramp:1..2': expected ramp:FROM..TO/DURATION \
             (e.g. ramp:100..2000/60s)\n",
        ),
    ];
    for (args, message) in cases {
        let mut all = vec!["--server", "127.0.0.1", "--port", "9"];
        all.extend_from_slice(args);
        let out = run(&all);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), message, "{args:?}");
    }
}
