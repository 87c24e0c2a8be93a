//! `rshperf sweep --in-one-run` against a server of known capacity: the walk's levels
//! as one profiled run, judged level by level from its timeline, with the walk's
//! table, conclusion, JSON document and page; and what it refuses.

use std::time::Instant;

use serde_json::Value;

use crate::support::capacity_server::CapacityServer;
use crate::support::recorder::TempFile;
use crate::support::run;
use crate::sweep::{check_limit_cause, read_json, sweep, text, well_formed, CAPACITY};

/// A member of every step of a sweep document.
fn of_steps(doc: &Value, member: &str) -> Vec<Value> {
    doc["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s[member].clone())
        .collect()
}

#[test]
fn one_run_finds_the_walks_knee_level_by_level() {
    let server = CapacityServer::start(CAPACITY);
    let json = TempFile::new("one-run-json", b"");
    let html = TempFile::new("one-run-html", b"");
    let began = Instant::now();
    let (stdout, stderr, code) = sweep(
        server.port(),
        &[
            "--low-rate",
            "100",
            "--high-rate",
            "400",
            "--rate-step",
            "100",
            "--const-test-time",
            "2",
            "--in-one-run",
            "--json",
            &json.path,
            "--html",
            &html.path,
        ],
    );
    let took = began.elapsed().as_secs_f64();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let profile = "step:100..400+100/2s";
    assert!(
        stderr.starts_with(&format!(
            "rshperf sweep: the walk in one run: --rate-profile {profile}\n"
        )),
        "{stderr}"
    );
    // One run of 8 s and its drain (440 queued replies at 240/s), not four.
    assert!((8.0..30.0).contains(&took), "{took}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1 + 4 + 1, "{stdout}");
    assert_eq!(
        lines[0],
        "dem_req_rate\treq_rate_127.0.0.1\tcon_rate_127.0.0.1\tmin_rep_rate_127.0.0.1\t\
         avg_rep_rate_127.0.0.1\tmax_rep_rate_127.0.0.1\tstddev_rep_rate_127.0.0.1\t\
         resp_time_127.0.0.1\tnet_io_127.0.0.1\terrors_127.0.0.1\tp50_ms\tp99_ms\t\
         lateness_p99_ms\tachieved_pct\tclient_cpu_pct\tverdict"
    );
    for (line, rate) in lines[1..=4].iter().zip(["100", "200", "300", "400"]) {
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(cells.len(), 16, "{line}");
        assert_eq!(cells[0], rate, "{line}");
        // One judged second per 2-s level: min = avg = max, stddev 0.
        assert_eq!(cells[3], cells[5], "{line}");
        assert_eq!(cells[6], "0.0", "{line}");
        assert_eq!(cells[9], "0", "{line}");
    }
    assert!(
        lines[1].ends_with("\tpass") && lines[2].ends_with("\tpass"),
        "{stdout}"
    );
    let doc = read_json(&json.path);
    assert_eq!(doc["format"], "rshperf-sweep");
    assert_eq!(doc["in_one_run"], true);
    assert_eq!(doc["profile"], profile);
    assert_eq!(doc["parameters"]["in_one_run"], true);
    assert_eq!(doc["run"]["format"], "rshperf-result");
    // The run is one: every reply the server wrote is in its document.
    assert_eq!(
        doc["run"]["replies"]["total"].as_u64(),
        Some(server.served())
    );
    assert_eq!(doc["run"]["connections"]["total"].as_u64(), Some(2000));
    let rates: Vec<f64> = of_steps(&doc, "rate")
        .iter()
        .map(|r| r.as_f64().expect("rate"))
        .collect();
    assert_eq!(rates, [100.0, 200.0, 300.0, 400.0]);
    assert_eq!(of_steps(&doc, "start_s"), [0.0, 2.0, 4.0, 6.0]);
    assert_eq!(
        of_steps(&doc, "judged_seconds"),
        [[1], [3], [5], [7]].map(|s| serde_json::json!(s))
    );
    assert!(of_steps(&doc, "run").iter().all(Value::is_null));
    assert_eq!(doc["result"]["knee"], 200.0);
    assert_eq!(doc["result"]["limit"]["rate"], 300.0);
    check_limit_cause(&doc, 300.0);
    // Above its capacity the server achieves 240/s: 80 % of 300, 60 % of 400.
    let pct: Vec<f64> = of_steps(&doc, "achieved_pct")
        .iter()
        .map(|p| p.as_f64().expect("pct"))
        .collect();
    assert!((95.0..=105.0).contains(&pct[0]), "{pct:?}");
    assert!((95.0..=105.0).contains(&pct[1]), "{pct:?}");
    assert!((75.0..85.0).contains(&pct[2]), "{pct:?}");
    assert!((55.0..65.0).contains(&pct[3]), "{pct:?}");
    let last = lines[5];
    assert!(
        last.starts_with(
            "# knee at 200 conn/s; the server was the limit: at 300 conn/s (achieved "
        ) || last.starts_with("# no server knee up to 200 conn/s: the client was the limit at 300"),
        "{last}"
    );
    assert!(
        last.ends_with(&format!(" [one run: --rate-profile {profile}]")),
        "{last}"
    );
    assert_eq!(doc["result"]["conclusion"], last.trim_start_matches("# "));
    let page = well_formed(&html.path);
    assert!(
        page.contains(&format!(
            "one run, every level judged from its seconds: --rate-profile {profile}"
        )),
        "the page does not say it was one run"
    );
    assert_eq!(page.matches("<svg").count(), 4);
    // One run has no partitions to merge.
    let out = run(&["merge", &json.path]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "rshperf: merge: {}: a sweep in one run (--in-one-run) has no partitions to \
             merge; merge the --json documents of its profile's partitioned runs (rshperf \
             --rate-profile … --partition I/N) instead\n",
            json.path
        )
    );
}

#[test]
fn one_run_refuses_what_it_cannot_do() {
    let walk = [
        "sweep",
        "--low-rate",
        "100",
        "--high-rate",
        "400",
        "--rate-step",
        "100",
        "--in-one-run",
    ];
    let refused = |extra: &[&str]| {
        let mut args = walk.to_vec();
        args.extend_from_slice(extra);
        let out = run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty());
        text(&out.stderr)
    };
    assert_eq!(
        refused(&["--find-max"]),
        "rshperf: sweep: --find-max cannot be used with --in-one-run: the search picks each \
         rate from the steps before it; one run holds every level of the walk (give \
         --rate-step)\n"
    );
    assert_eq!(
        refused(&["--partition", "0/2", "--start-at", "+1"]),
        "rshperf: sweep: --partition cannot be used with --in-one-run: each machine would \
         judge its own share of every level: run rshperf --rate-profile step:L..H+S/T with \
         --partition I/N --start-at T on each and rshperf merge their --json documents, or \
         partition the walk without --in-one-run\n"
    );
    assert_eq!(
        refused(&["--const-test-time", "500ms"]),
        "rshperf: sweep: --in-one-run needs --const-test-time of at least 1 s: each level \
         is judged from whole seconds of the run's per-second timeline\n"
    );
}
