//! `--threads N` prints what one engine prints: the same workload with one and with
//! four engines gives the same reply-rate samples, `-v` and `--periodic-stats` lines,
//! concurrent connections and connect bursts. The workloads are paced so that each
//! figure has one right value with a wide margin (a quarter of a second) for a busy
//! machine; the sum of the engines' own maxima, what the report printed before the
//! engines shared a counter, would differ.

use std::process::{Child, Command, Stdio};

use crate::support::server::{Behavior, Server};
use crate::support::{self, Report};

/// Starts rshperf against `server` with `args` and `--threads threads`.
fn spawn(server: &Server, threads: &str, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_rshperf"))
        .args([
            "--server",
            "127.0.0.1",
            "--port",
            &server.port().to_string(),
        ])
        .args(args)
        .args(["--threads", threads])
        .env(support::MACHINE_VAR, support::QUIET_MACHINE)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rshperf")
}

/// Waits for a run and returns its report (exit status 0 asserted).
fn report(child: Child) -> Report {
    let out = child.wait_with_output().expect("wait for rshperf");
    let r = Report {
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(out.status.code(), Some(0), "{}\n{}", r.text, r.stderr);
    r
}

/// The `<=N concurrent connections` of the report.
fn concurrent(r: &Report) -> u64 {
    let n = r.nums("Connection rate:");
    n[2] as u64
}

/// The lines the clock prints while the run lasts, `[t s]` of the k-th periodic line
/// masked to `[k s]` after checking that it did not come before its tick. (The grid
/// of ticks is tested on simulated time in `engine::tally`; how late a loaded machine
/// prints one is no test's business.)
fn live_lines(r: &Report) -> Vec<String> {
    let mut tick = 0;
    r.text
        .lines()
        .filter(|l| l.starts_with("reply-rate = ") || l.starts_with('['))
        .map(|l| match l.strip_prefix('[') {
            Some(rest) => {
                let (t, counts) = rest.split_once(" s] ").expect("`[t s] counts`");
                let t: f64 = t.parse().expect("seconds");
                tick += 1;
                assert!(t >= f64::from(tick), "early tick: {l}");
                format!("[{tick} s] {counts}")
            }
            None => l.to_string(),
        })
        .collect()
}

#[test]
fn one_and_four_engines_print_the_same_samples_periodic_lines_and_concurrency() {
    // Arrivals every 0.5 s (0, 0.5, … 5.0 s), each reply 0.25 s later: replies complete
    // at x.25 and x.75 s, so each 1-s tick has two behind it, and the 5-s sample ten;
    // a connection lives 0.25 s of its 0.5 s, so one is open at a time. Each of four
    // engines alone has one open at a time too: the sum of their maxima is 4.
    let args = [
        "-v",
        "--periodic-stats",
        "--rate",
        "2",
        "--num-conns",
        "11",
        "--timeout",
        "5",
    ];
    let slow = || Server::start(Behavior::Slow(std::time::Duration::from_millis(250), 100));
    let (s1, s4) = (slow(), slow());
    let (c1, c4) = (spawn(&s1, "1", &args), spawn(&s4, "4", &args));
    let (one, four) = (report(c1), report(c4));
    let ticks: Vec<String> = (1..=5).map(|t| format!("[{t} s] 200=2, 302=0")).collect();
    let mut want = ticks[..4].to_vec();
    // At 5 s the sample comes first, then the periodic line (as httperf).
    want.push("reply-rate = 2.0     ".to_string());
    want.push(ticks[4].clone());
    for (r, s) in [(&one, &s1), (&four, &s4)] {
        assert_eq!(live_lines(r), want, "{}", r.text);
        assert_eq!(r.totals(), (11, 11, 11), "{}", r.text);
        assert_eq!(s.requests(), 11);
        assert_eq!(
            r.nums("Reply rate [replies/s]:"),
            [2.0, 2.0, 2.0, 0.0, 1.0],
            "{}",
            r.text
        );
        assert!(
            r.text.contains("\nPeriodic stats: 200=11 302=0\n"),
            "{}",
            r.text
        );
        assert_eq!(concurrent(r), 1, "{}", r.text);
        assert_eq!(r.nums("Maximum connect burst length:"), [1.0], "{}", r.text);
    }
    assert!(four
        .text
        .lines()
        .next()
        .expect("echo")
        .ends_with(" --threads=4"));
}

#[test]
fn one_and_four_engines_report_the_same_bursts_and_concurrency_of_sessions() {
    // Eight sessions, 0.2 s apart, of one burst of four calls on at most four
    // connections, one call each at a time: the first call alone on one connection,
    // then the other three on it and two new ones opened in the same loop iteration.
    // So three connections are open at once and the connect burst is two, for each
    // engine (two sessions each of four) as for one: the longest burst of any engine
    // is the single engine's, where the sum would be 8 and the sum of the open maxima
    // 12.
    let args = [
        "--wsess=8,4,0",
        "--burst-length",
        "4",
        "--max-connections",
        "4",
        "--max-piped-calls",
        "1",
        "--rate",
        "5",
        "--timeout",
        "5",
    ];
    let (s1, s4) = (
        Server::start(Behavior::Fixed(10)),
        Server::start(Behavior::Fixed(10)),
    );
    let (c1, c4) = (spawn(&s1, "1", &args), spawn(&s4, "4", &args));
    for (r, s) in [(report(c1), &s1), (report(c4), &s4)] {
        assert_eq!(r.totals(), (24, 32, 32), "{}", r.text);
        assert_eq!(s.connections(), 24);
        assert_eq!(concurrent(&r), 3, "{}", r.text);
        assert_eq!(r.nums("Maximum connect burst length:"), [2.0], "{}", r.text);
        assert!(
            r.text.contains("\nSession length histogram: 0 0 0 0 8\n"),
            "{}",
            r.text
        );
    }
}

#[test]
fn json_of_four_engines_carries_the_exact_concurrency_and_the_clocks_samples() {
    // Arrivals every 0.5 s, each connection open 0.75 s: two are open at once, one
    // of them in another engine (engine j has arrivals j and j + 4, 2 s apart). The
    // JSON's raw figures are the report's: the shared peak, not the sum of the engines'
    // maxima (4), and the clock's samples (none in a run shorter than 5 s).
    let s = Server::start(Behavior::Slow(std::time::Duration::from_millis(750), 10));
    let args = ["--rate", "2", "--num-conns", "6", "--json=-"];
    let r = report(spawn(&s, "4", &args));
    let doc: serde_json::Value = serde_json::from_str(&r.text).expect("one JSON document");
    assert_eq!(doc["raw"]["max_concurrent"], 2, "{}", r.text);
    assert_eq!(doc["connections"]["max_concurrent"], 2, "{}", r.text);
    assert_eq!(doc["raw"]["rate_samples"], serde_json::json!([]));
    assert_eq!(doc["raw"]["connections"], 6, "{}", r.text);
    assert_eq!(s.requests(), 6);
}
