//! Edge cases of the command line that once crashed or were silently accepted: a
//! `--start-at` too far ahead (of a run or of a partitioned sweep), `--max-piped-calls` beyond httperf's session limit.
//! Each is an option error (`rshperf: …`, exit status 1) before any connection.

use std::net::TcpListener;

use crate::support;

/// Runs rshperf against a listening socket that must never see a connection; returns
/// (exit status, stdout, stderr).
fn refused_before_connecting(args: &[&str]) -> (Option<i32>, String, String) {
    refused_before_connecting_as(&[], args)
}

/// `refused_before_connecting` with `first` (a subcommand and its options) before
/// the server options.
fn refused_before_connecting_as(first: &[&str], args: &[&str]) -> (Option<i32>, String, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("addr").port().to_string();
    let mut all = first.to_vec();
    all.extend_from_slice(&["--server", "127.0.0.1", "--port", &port]);
    all.extend_from_slice(args);
    let out = support::run(&all);
    assert!(
        listener.accept().is_err(),
        "rshperf {all:?} connected before failing"
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_start_time_beyond_a_week_is_an_error_not_a_panic() {
    for at in ["100000000000000000000", "99999999999"] {
        let opt = format!("--start-at={at}");
        let (code, stdout, stderr) = refused_before_connecting(&[&opt, "--num-conns", "1"]);
        assert_eq!(code, Some(1), "{stderr}");
        assert_eq!(
            stderr,
            "rshperf: --start-at: the start time is more than 7 days (604800 s) away\n"
        );
        assert_eq!(stdout, "", "no echo line for a run that does not start");
    }
}

#[test]
fn a_sweeps_start_time_beyond_a_week_is_the_same_error() {
    let sweep = [
        "sweep",
        "--partition",
        "1/2",
        "--low-rate",
        "1",
        "--high-rate",
        "2",
        "--rate-step",
        "1",
    ];
    for at in ["100000000000000000000", "99999999999"] {
        let (code, stdout, stderr) = refused_before_connecting_as(&sweep, &["--start-at", at]);
        assert_eq!(code, Some(1), "{stderr}");
        assert_eq!(
            stderr,
            "rshperf: --start-at: the start time is more than 7 days (604800 s) away\n"
        );
        assert_eq!(stdout, "", "no table for a sweep that does not start");
    }
}

#[test]
fn more_than_4_connections_per_session_fail_like_httperf() {
    let (code, stdout, stderr) =
        refused_before_connecting(&["--wsess=2,2,0", "--max-connections", "5"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr, "rshperf.session_init: --max-conns must be <= 4\n");
    assert_eq!(stdout, "");
}

#[test]
fn more_than_32_piped_calls_in_sessions_fail_like_httperf() {
    let (code, stdout, stderr) =
        refused_before_connecting(&["--wsess=2,2,0", "--max-piped-calls", "33"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "rshperf.session_init: --max-piped-calls must be <= 32\n"
    );
    assert_eq!(stdout, "");
    // Not a session workload: httperf ignores the option, so does rshperf (port 1
    // refuses: a counted error, exit status 0).
    let out = support::run(&[
        "--server",
        "127.0.0.1",
        "--port",
        "1",
        "--max-piped-calls",
        "33",
        "--num-conns",
        "1",
        "--timeout",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
