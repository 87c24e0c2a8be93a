//! A newcomer's first minutes: a URL as the target, warnings for arguments
//! httperf ignores, did-you-mean for misspelt options, `--server host:port`
//! explained, a `--help` that helps and `rshperf help CMD`, `--runtime` as a
//! duration, warnings when a run is probably not what was meant, and a CPU line that
//! counts the client's engines only. Reports are checked against what the in-process
//! servers counted.

use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rshperf::engine::execute::{execute, ExecOptions};
use rshperf::model::workload::Workload;

use crate::support::server::{closed_port, Behavior, Server};
use crate::support::tls_server::{Pki, TlsServer};
use crate::support::{run, run_ok, Report, HANG_GUARD};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn report(out: Output) -> Report {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    Report {
        text: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}

/// The `rshperf: warning:` lines of stderr.
fn warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("rshperf: warning: "))
        .collect()
}

/// Exit status 1, nothing on stdout; returns stderr.
fn option_error(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?}: {}",
        text(&out.stderr)
    );
    assert_eq!(text(&out.stdout), "", "{args:?}");
    text(&out.stderr)
}

// ---- 1. a URL as the target ----

#[test]
fn a_url_argument_is_server_port_and_uri() {
    let s = Server::start(Behavior::Fixed(10));
    let url = format!("http://127.0.0.1:{}/foo?x=1", s.port());
    let r = report(run(&[&url, "--rate", "200", "--num-conns", "5"]));
    assert_eq!(r.totals(), (5, 5, 5));
    assert_eq!(s.requests(), 5);
    let first = text(&s.counts.first_request.lock().expect("lock"));
    assert!(first.starts_with("GET /foo?x=1 HTTP/1.1\r\n"), "{first}");
    assert!(first.contains("\r\nHost: 127.0.0.1\r\n"), "{first}");
    // The echo line is the one of the equivalent options.
    assert_eq!(
        r.text.lines().next(),
        Some(
            format!(
                "rshperf --client=0/1 --server=127.0.0.1 --port={} --uri=/foo?x=1 --rate=200 \
                 --send-buffer=4096 --recv-buffer=16384 --num-conns=5 --num-calls=1",
                s.port()
            )
            .as_str()
        )
    );
    assert!(!r.stderr.contains("ignoring"), "{}", r.stderr);
}

#[test]
fn an_https_url_speaks_tls() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let url = format!("https://127.0.0.1:{}/", s.port());
    let r = report(run(&[&url, "--num-conns", "3", "--rate", "100", "-v"]));
    assert_eq!(r.totals(), (3, 3, 3));
    assert!(r.text.contains(" --ssl "), "{}", r.text);
    assert_eq!(r.nums("TLS handshakes:"), vec![3.0, 0.0]);
    s.settle();
    assert_eq!(s.requests(), 3);
}

#[test]
fn a_url_with_server_or_uri_is_an_option_error() {
    let msg = option_error(&["http://127.0.0.1:1/", "--server", "127.0.0.1"]);
    assert_eq!(
        msg,
        "rshperf: the URL http://127.0.0.1:1/ names the server, port and URI: give it or \
         --server, not both\n"
    );
    let msg = option_error(&["--uri", "/x", "http://127.0.0.1:1/"]);
    assert!(msg.ends_with("give it or --uri, not both\n"), "{msg}");
    let msg = option_error(&["http://127.0.0.1:99999/"]);
    assert_eq!(
        msg,
        "rshperf: URL http://127.0.0.1:99999/: illegal port number 99999\n"
    );
}

#[test]
fn other_arguments_are_named_with_a_hint() {
    let s = Server::start(Behavior::Fixed(10));
    let port = s.port().to_string();
    let r = report(run(&[
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--print-reply",
        "header",
        "stray",
    ]));
    // httperf ignores them, and so does the run: everything is printed.
    assert_eq!(r.totals(), (1, 1, 1));
    assert!(r.text.contains("\nRH0:HTTP/1.1 200 X\r\n"), "{}", r.text);
    assert_eq!(
        warnings(&r.stderr),
        [
            "rshperf: warning: ignoring argument 'header': did you mean --print-reply=header?",
            "rshperf: warning: ignoring argument 'stray': not an option (httperf ignores it \
             too; `rshperf --help` lists the options)",
        ]
    );
}

// ---- 3. typos ----

#[test]
fn a_misspelt_option_keeps_glibcs_line_and_adds_a_suggestion() {
    assert_eq!(
        option_error(&["--server", "127.0.0.1", "--numconns", "5"]),
        "rshperf: unrecognized option '--numconns'\nrshperf: did you mean --num-conns?\n"
    );
    // Nothing close: glibc's line alone.
    assert_eq!(
        option_error(&["--bogus"]),
        "rshperf: unrecognized option '--bogus'\n"
    );
}

#[test]
fn server_with_a_port_says_to_use_port_or_a_url() {
    assert_eq!(
        option_error(&["--server", "127.0.0.1:8080", "--num-conns", "1"]),
        "rshperf: --server 127.0.0.1:8080: --server takes no port; use --server 127.0.0.1 \
         --port 8080 (or the URL http://127.0.0.1:8080/)\n"
    );
}

// ---- 4. --help and rshperf help CMD ----

#[test]
fn help_keeps_the_usage_lines_first_and_lists_the_subcommands() {
    let out = run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    assert!(help.starts_with(&rshperf::front::cli::usage()), "{help}");
    for group in ["\n  target ", "\n  load ", "\n  sessions ", "\n  TLS "] {
        assert!(help.contains(group), "{group:?} missing:\n{help}");
    }
    for c in rshperf::front::dispatch::COMMANDS {
        let line = format!("\n  {:<8} {}\n", c.name, c.about);
        assert!(help.contains(&line), "{} missing:\n{help}", c.name);
    }
    assert_eq!(text(&run(&["-h"]).stdout), help);
}

#[test]
fn help_cmd_prints_the_subcommands_own_help() {
    for cmd in ["serve", "demo", "merge"] {
        let own = run(&[cmd, "--help"]);
        let via_help = run(&["help", cmd]);
        assert_eq!(via_help.status.code(), Some(0), "{cmd}");
        assert_eq!(text(&via_help.stdout), text(&own.stdout), "{cmd}");
        assert!(
            text(&via_help.stdout).contains(&format!("Usage: rshperf {cmd}")),
            "{cmd}"
        );
    }
    let out = run(&["help", "bogus"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with("rshperf: help: no command 'bogus' (commands: serve,"),
        "{}",
        text(&out.stderr)
    );
}

// ---- 5. --runtime as a duration ----

#[test]
fn runtime_without_num_conns_runs_arrivals_until_it_is_over() {
    let s = Server::start(Behavior::Fixed(10));
    let started = Instant::now();
    let r = run_ok(s.port(), &["--runtime", "1.5", "--rate", "20"]);
    let took = started.elapsed();
    // Arrivals at 0, 50, …, 1450 ms: 30 (the one due at 1.5 s is not started).
    let (conns, requests, replies) = r.totals();
    assert_eq!(conns, 30, "{}", r.text);
    assert_eq!(s.connections(), conns);
    assert_eq!(s.requests(), requests);
    assert!(replies + 1 >= requests, "{}", r.text);
    let duration = r.nums("Total:")[3];
    // At least the runtime; how much later only a hang guard (`--runtime`'s end is
    // tested on simulated time in `engine::event_loop::pacer`).
    assert!(
        (1.45..1.5 + HANG_GUARD.as_secs_f64()).contains(&duration),
        "{duration}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
    // The echo line says what ran: the runtime, no connection count (httperf's
    // `--num-conns=1` would say one connection).
    assert!(
        r.text.starts_with(&format!(
            "rshperf --runtime=1.5 --client=0/1 --server=127.0.0.1 --port={} --uri=/ \
             --rate=20 --send-buffer=4096 --recv-buffer=16384 --num-calls=1\n",
            s.port()
        )),
        "{}",
        r.text
    );
}

#[test]
fn runtime_with_num_conns_stays_a_cap() {
    let s = Server::start(Behavior::Fixed(10));
    let r = run_ok(
        s.port(),
        &["--runtime", "30", "--num-conns", "4", "--rate", "100"],
    );
    assert_eq!(r.totals(), (4, 4, 4));
    assert!(r.nums("Total:")[3] < 5.0, "{}", r.text);
    let r = run_ok(
        s.port(),
        &["--runtime", "0.3", "--num-conns", "1000", "--rate", "20"],
    );
    // 0, 50, …, 250 ms; as httperf master (2.5 s at 50/s: 125 connections).
    assert_eq!(r.totals().0, 6, "{}", r.text);
}

#[test]
fn json_says_whether_the_runtime_bounds_the_run() {
    let s = Server::start(Behavior::Fixed(10));
    let doc = |args: &[&str]| -> serde_json::Value {
        let r = run_ok(s.port(), args);
        serde_json::from_str(&r.text).expect("JSON on stdout")
    };
    let v = doc(&["--runtime", "0.3", "--rate", "20", "--json", "-"]);
    assert_eq!(v["config"]["until_runtime"], true, "{v}");
    assert_eq!(v["config"]["num_conns"], serde_json::Value::Null, "{v}");
    assert_eq!(v["config"]["num_calls"], 1, "{v}");
    assert!(v["config"]["echo"]
        .as_str()
        .is_some_and(|e| e.contains(" --runtime=0.3 ") && !e.contains("--num-conns")));
    assert_eq!(v["connections"]["total"], 6, "{v}");
    let v = doc(&["--runtime", "0.3", "--num-conns", "2", "--json", "-"]);
    assert_eq!(v["config"]["until_runtime"], false, "{v}");
    assert_eq!(v["config"]["num_conns"], 2, "{v}");
}

// ---- 2. warnings when a run is probably not what was meant ----

/// `rshperf: note: the run took D s: …` (D depends on timing).
fn is_no_sample_note(line: &str) -> bool {
    line.starts_with("rshperf: note: the run took ")
        && line.ends_with(
            " s: the reply rate is sampled every 5 s, so \"Reply rate\" has no sample (its \
             avg 0.0 is no measurement; run longer, e.g. --runtime 10 without --num-conns)",
        )
}

#[test]
fn every_connection_refused_names_the_target() {
    let port = closed_port();
    let r = run_ok(port, &["--num-conns", "10", "--rate", "200"]);
    assert_eq!(r.error("connrefused"), 10);
    assert_eq!(
        warnings(&r.stderr),
        [format!(
            "rshperf: warning: all 10 connections refused — is anything listening on \
             127.0.0.1:{port}?"
        )]
    );
}

#[test]
fn every_reply_an_error_points_at_the_uri() {
    let s = Server::start(Behavior::Status(400, 0));
    let r = run_ok(
        s.port(),
        &["--uri", "index.html", "--num-conns", "5", "--rate", "200"],
    );
    assert_eq!(r.status(), [0, 0, 0, 5, 0]);
    assert_eq!(s.requests(), 5);
    let w = warnings(&r.stderr);
    assert_eq!(
        w[0],
        "rshperf: warning: all 5 replies were errors (4xx=5 5xx=0) — --uri index.html has no \
         leading / (try --uri /index.html)"
    );
    // It was short too: the missing reply-rate sample is a note, after the warning.
    assert_eq!(w.len(), 1, "{w:?}");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stderr);
    assert!(is_no_sample_note(lines[1]), "{}", r.stderr);
}

#[test]
fn a_short_run_without_a_rate_sample_says_so_one_with_a_sample_is_silent() {
    let s = Server::start(Behavior::Fixed(10));
    // A script that reads the report's average gets 0.0: the note says why, without
    // -v (the classic report stays httperf's).
    let r = run_ok(s.port(), &["--num-conns", "20", "--rate", "100"]);
    assert!(r.text.contains("(0 samples)"), "{}", r.text);
    let w: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(is_no_sample_note(w[0]), "{w:?}");
    let took: f64 = w[0]["rshperf: note: the run took ".len()..]
        .split(' ')
        .next()
        .and_then(|t| t.parse().ok())
        .expect("a duration");
    let duration = r.nums("Total:")[3];
    assert!((took - duration).abs() <= 0.05, "{took} vs {duration}");
    // --client=0/5 takes the first sample at 1 s: a 1.5-s run has one.
    let r = run_ok(
        s.port(),
        &["--client=0/5", "--num-conns", "30", "--rate", "20"],
    );
    assert!(r.text.contains("(1 samples)"), "{}", r.text);
    assert_eq!(r.stderr, "");
}

// ---- 7. the CPU line counts the client's engines only ----

#[test]
fn cpu_time_is_the_engines_own_not_the_whole_process() {
    let s = Server::start(Behavior::Fixed(10));
    let port = s.port().to_string();
    let cfg = rshperf::front::httperf::from_argv(&[
        "rshperf",
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--num-conns",
        "10",
        "--rate",
        "10",
    ])
    .expect("config")
    .expect("a run");
    let work = Workload::from_config(&cfg).expect("workload");
    // Another thread of this process (as demo's in-process server is) burns CPU for
    // the whole run and measures its own CPU time.
    let stop = Arc::new(AtomicBool::new(false));
    let spinner = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let (u0, s0) = rshperf::wire::net::thread_cpu_times();
            let mut x = 0u64;
            while !stop.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            let (u1, s1) = rshperf::wire::net::thread_cpu_times();
            (u1 + s1).saturating_sub(u0 + s0).as_secs_f64()
        })
    };
    let run = execute(&cfg, &work, ExecOptions::default());
    stop.store(true, Ordering::Relaxed);
    let spun = spinner.join().expect("spinner");
    let run = run.expect("run");
    assert_eq!(run.stats.replies(), 10);
    let engine = run.info.cpu_user + run.info.cpu_system;
    // The process used at least `spun` during the run; the engine a small part of it.
    assert!(spun > 0.1, "the spinner got {spun} s of CPU");
    assert!(
        engine < spun / 2.0,
        "engine CPU {engine} s, other thread {spun} s over {} s",
        run.info.duration
    );
}
