//! `--body-lines FILE` with `--body-order`: each call sends one line of the file as its
//! body, and the test servers (HTTP/1.1 recorder, HTTP/2 on `h2`, HTTP/3 on quinn and
//! `h3`) record which body arrived for each call: the exact per-call order for
//! round-robin (also under `--call-rate`), the same sequence for the same seed with
//! `random:SEED`, and the refusals of an empty file, a line that is not JSON and a
//! missing file.

use crate::support::h2_server::{self, H2Server};
use crate::support::h3_server::{self, H3Server};
use crate::support::recorder::{Opts, Recorder, TempFile};
use crate::support::tls_server::Pki;
use crate::support::{run, run_ok};

/// The prompts every test sends: three chat requests, a blank line between two.
const PROMPTS: &str = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"one\"}]}\n\
                       {\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"two\"}]}\r\n\
                       \n\
                       {\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"three\"}]}\n";

/// The bodies of `PROMPTS`, in order.
fn lines() -> Vec<Vec<u8>> {
    PROMPTS
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.is_empty())
        .map(|l| l.as_bytes().to_vec())
        .collect()
}

/// Line k mod 3 for k in 0..n.
fn round_robin(n: usize) -> Vec<Vec<u8>> {
    let l = lines();
    (0..n).map(|k| l[k % l.len()].clone()).collect()
}

#[test]
fn round_robin_sends_line_k_mod_n_to_call_k_over_http1_and_with_call_rate() {
    let prompts = TempFile::new("body-lines", PROMPTS.as_bytes());
    let s = Recorder::start(Opts::default());
    let r = run_ok(
        s.port(),
        &[
            "--body-lines",
            &prompts.path,
            "--content-type",
            "application/json",
            "--num-conns",
            "1",
            "--num-calls",
            "7",
        ],
    );
    assert_eq!(r.totals(), (1, 7, 7), "{}", r.text);
    let reqs = s.requests();
    let bodies: Vec<Vec<u8>> = reqs.iter().map(|q| q.body.clone()).collect();
    assert_eq!(bodies, round_robin(7));
    for q in &reqs {
        assert_eq!(q.method, "POST");
        assert_eq!(q.header("Content-Type"), Some("application/json"));
        let length = q.body.len().to_string();
        assert_eq!(q.header("Content-Length"), Some(length.as_str()));
    }
    assert!(r.text.contains(&format!(
        "--body-lines={} --body-order=round-robin",
        prompts.path
    )));

    // Open loop: call k of the schedule sends line k mod 3.
    let s = Recorder::start(Opts::default());
    let r = run_ok(
        s.port(),
        &[
            "--body-lines",
            &prompts.path,
            "--call-rate",
            "500",
            "--num-conns",
            "1",
            "--num-calls",
            "12",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(r.totals().1, 12, "{}", r.text);
    let bodies: Vec<Vec<u8>> = s.requests().iter().map(|q| q.body.clone()).collect();
    assert_eq!(bodies, round_robin(12));
}

#[test]
fn a_seed_gives_the_same_bodies_on_every_run_over_http2() {
    let prompts = TempFile::new("body-lines", PROMPTS.as_bytes());
    let sent = |order: &str| -> Vec<Vec<u8>> {
        let s = H2Server::start(h2_server::Opts::default());
        let r = run_ok(
            s.port(),
            &[
                "--http-version",
                "2",
                "--body-lines",
                &prompts.path,
                "--body-order",
                order,
                "--num-conns",
                "1",
                "--num-calls",
                "30",
            ],
        );
        assert_eq!(r.totals(), (1, 30, 30), "{}", r.text);
        let seen = s.seen();
        assert!(seen.iter().all(|q| q.method == "POST"));
        seen.into_iter().map(|q| q.content).collect()
    };
    let a = sent("random:7");
    assert_eq!(a, sent("random:7"), "the same seed, the same bodies");
    assert_ne!(a, sent("random:8"));
    assert_ne!(a, round_robin(30));
    let l = lines();
    for line in &l {
        assert!(a.contains(line), "every line is drawn in 30 calls");
    }
    assert!(a.iter().all(|b| l.contains(b)));
    assert_eq!(sent("round-robin"), round_robin(30));
}

#[test]
fn round_robin_over_http3() {
    let prompts = TempFile::new("body-lines", PROMPTS.as_bytes());
    let pki = Pki::new();
    let s = H3Server::start(
        pki.server_config(false),
        h3_server::Opts {
            read_bodies: true,
            ..h3_server::Opts::default()
        },
    );
    let r = run_ok(
        s.port(),
        &[
            "--http-version",
            "3",
            "--timeout",
            "5",
            "--body-lines",
            &prompts.path,
            "--num-conns",
            "1",
            "--num-calls",
            "5",
        ],
    );
    assert_eq!(r.totals(), (1, 5, 5), "{}\n{}", r.text, r.stderr);
    assert_eq!(s.bodies(), round_robin(5));
}

#[test]
fn an_empty_file_a_line_that_is_not_json_and_a_missing_file_are_refused() {
    let empty = TempFile::new("body-lines", b"\n\n");
    let split = TempFile::new("body-lines", b"{\"a\": 1}\n{\"a\":\n 2}\n");
    let cases = [
        (
            empty.path.clone(),
            format!(
                "rshperf: --body-lines {}: no body in it (one JSON value a line)",
                empty.path
            ),
        ),
        (
            split.path.clone(),
            format!(
                "rshperf: --body-lines {}: line 2: not one JSON value (",
                split.path
            ),
        ),
        (
            "/nonexistent/prompts.jsonl".to_string(),
            "rshperf: --body-lines /nonexistent/prompts.jsonl: cannot read it: ".to_string(),
        ),
    ];
    for (file, text) in cases {
        let out = run(&[
            "--server",
            "127.0.0.1",
            "--port",
            "9",
            "--body-lines",
            &file,
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.starts_with(&text), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing sent, no report");
    }
}
