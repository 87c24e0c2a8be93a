//! Tests of httperf's command line through the builder: defaults, the values every
//! option stores, the C-compatible number parsing, `Host:` and socket-buffer rules.

use std::net::SocketAddr;
use std::time::Duration;

use super::tests::cfg;
use crate::model::config::number::{c_strtod, c_strtoul10, strtod_prefix};
use crate::model::config::value::{parse_partition, parse_start_at, unescape_header};
use crate::model::config::*;

#[test]
fn socket_buffers_http2_only_when_given() {
    let base = ["--server", "127.0.0.1"];
    assert_eq!(cfg(&base).socket_buffers(), (4096, 16384));
    let h2 = cfg(&["--server", "127.0.0.1", "--http-version", "2"]);
    assert_eq!(
        (h2.sockets().send_buffer(), h2.sockets().recv_buffer()),
        (4096, 16384)
    );
    assert_eq!(h2.socket_buffers(), (0, 0));
    let given = cfg(&[
        "--server",
        "127.0.0.1",
        "--http-version",
        "2",
        "--recv-buffer",
        "65536",
    ]);
    assert_eq!(given.socket_buffers(), (0, 65536));
    let both = cfg(&[
        "--server",
        "127.0.0.1",
        "--http-version",
        "2",
        "--send-buffer",
        "4096",
        "--recv-buffer",
        "16384",
    ]);
    assert_eq!(both.socket_buffers(), (4096, 16384));
}

#[test]
fn a_body_file_leaves_the_send_buffer_to_the_kernel_unless_given() {
    let body = [
        "--server",
        "127.0.0.1",
        "--method",
        "POST",
        "--body-file",
        "b",
    ];
    assert_eq!(cfg(&body).socket_buffers(), (0, 16384));
    let mut given = body.to_vec();
    given.extend(["--send-buffer", "4096"]);
    assert_eq!(cfg(&given).socket_buffers(), (4096, 16384));
    // The echo line still shows httperf's default.
    assert!(cfg(&body).echo_line().contains(" --send-buffer=4096 "));
}

#[test]
fn defaults() {
    let c = cfg(&["--server", "127.0.0.1"]);
    assert_eq!(c.prog(), "rshperf");
    assert_eq!(c.target().port(), 80);
    assert_eq!(c.target().uri(), "/");
    assert_eq!(c.request().method(), "GET");
    assert!(!c.request().method_given());
    assert_eq!(c.request().http_version(), HttpVersion::V11);
    assert_eq!(
        (c.sockets().send_buffer(), c.sockets().recv_buffer()),
        (4096, 16384)
    );
    assert_eq!((c.load().client_id(), c.load().num_clients()), (0, 1));
    assert_eq!(
        (
            c.load().num_conns(),
            c.load().num_calls(),
            c.load().burst_length()
        ),
        (1, 1, 1)
    );
    assert_eq!(*c.load().period(), Period::Sequential);
    assert_eq!(c.load().threads(), 1);
    assert_eq!(c.timeout_duration(), None);
    assert_eq!(c.think_timeout_duration(), None);
    assert_eq!(
        c.target().addrs(),
        vec!["127.0.0.1:80".parse::<SocketAddr>().unwrap()]
    );
    let c = cfg(&[]);
    assert_eq!(c.target().server(), "localhost");
    assert_eq!(c.host_header(), "localhost");
    assert!(!c.target().addrs().is_empty());
    assert!(c
        .target()
        .addrs()
        .iter()
        .all(|a| a.port() == 80 && a.ip().is_loopback()));
}

#[test]
fn port_defaults_follow_ssl() {
    assert_eq!(cfg(&["--server=127.0.0.1"]).target().port(), 80);
    assert_eq!(cfg(&["--server=127.0.0.1", "--ssl"]).target().port(), 443);
    let c = cfg(&["--server=127.0.0.1", "--ssl-protocol=TLSv1.2"]);
    assert_eq!((c.target().port(), c.tls().enabled()), (443, true));
    assert_eq!(c.tls().protocol(), Some(SslProtocol::Tls12));
    assert_eq!(c.target().addrs()[0].port(), 443);
    assert_eq!(
        cfg(&["--server=127.0.0.1", "--port=8443", "--ssl"])
            .target()
            .port(),
        8443
    );
    assert_eq!(
        cfg(&["--port=1", "--ssl", "--server=127.0.0.1"])
            .target()
            .port(),
        1
    );
    for (name, want) in [
        ("AUTO", SslProtocol::Auto),
        ("TLSv1", SslProtocol::Tls10),
        ("tlsv1.0", SslProtocol::Tls10),
        ("TLSv1_1", SslProtocol::Tls11),
        ("TLSv1.3", SslProtocol::Tls13),
    ] {
        let c = cfg(&["--server=127.0.0.1", "--ssl-protocol", name]);
        assert_eq!(c.tls().protocol(), Some(want), "{name}");
    }
}

#[test]
fn ipv6_literal_servers() {
    for server in ["::1", "[::1]"] {
        let c = cfg(&["--server", server, "--port", "8080"]);
        assert_eq!(
            c.target().addrs(),
            vec!["[::1]:8080".parse::<SocketAddr>().unwrap()]
        );
        assert_eq!(c.host_header(), "[::1]");
        assert!(c.echo_line().contains(&format!(" --server={server} ")));
    }
    let c = cfg(&["--server", "::1", "--server-name", "example.org:8080"]);
    assert_eq!(c.host_header(), "example.org:8080");
    let c = cfg(&["--server", "127.0.0.1", "--server-name", "::2"]);
    assert_eq!(c.host_header(), "[::2]");
}

#[test]
fn host_header_is_cut_at_cr_or_lf() {
    let c = cfg(&[
        "--server",
        "127.0.0.1",
        "--server-name",
        "a.example\r\nX-Evil: 1",
    ]);
    assert_eq!(c.host_header(), "a.example");
    let c = cfg(&["--server", "127.0.0.1", "--server-name", "b\nc"]);
    assert_eq!(c.host_header(), "b");
    assert_eq!(cfg(&["--server", "127.0.0.1"]).host_header(), "127.0.0.1");
}

#[test]
fn add_header_escapes() {
    let (b, w) = unescape_header(r"X-Test: a\\b\101\n");
    assert_eq!(b, b"X-Test: a\\bA\r\n");
    assert!(w.is_empty());
    let (b, w) = unescape_header(r"A\aB\rC\0D\777\1011\q\");
    // The octal run is maximal (`\1011` = 0o1011 = 521) and kept modulo 256.
    assert_eq!(b, b"A\nB\rC\0D\xff\x09q\\");
    assert_eq!(
        w,
        vec![
            "ignoring unknown escape sequence `\\q' in --add-header".to_string(),
            "ignoring trailing `\\' in --add-header".to_string(),
        ]
    );
    let (b, _) = unescape_header(r"\é");
    assert_eq!(b, "é".as_bytes());
    let c = cfg(&["--server=127.0.0.1", "--add-header", r"X: 1\nY: 2\n"]);
    assert_eq!(c.request().add_header(), b"X: 1\r\nY: 2\r\n");
    assert_eq!(c.request().add_header_raw(), Some(r"X: 1\nY: 2\n"));
}

#[test]
fn values_are_stored() {
    let c = cfg(&[
        "--server=127.0.0.1",
        "--client=0x2/010",
        "--timeout=2.5",
        "--think-timeout=0.5",
        "--num-conns=7",
        "--num-calls=3",
        "--burst-length=3",
        "--http-version=1.0",
        "--uri=/x?y",
        "--send-buffer=2147483647",
        "--recv-buffer=1",
        "--max-connections=4",
        "--max-piped-calls=0",
        "--failure-status=503",
        "--print-reply=Body",
        "--print-request=hx",
        "--wsess=010,0x10,1e-1",
        "--wset=5,1",
        "--wlog=n,urls",
        "--myaddr=10.0.0.1",
        "--myaddr=10.0.0.2-10.0.0.9",
        "--ssl-verify=no",
        "-vvv",
        "--debug=4",
        "--threads=1024",
        "--runtime=3",
    ]);
    assert_eq!((c.load().client_id(), c.load().num_clients()), (2, 8));
    assert_eq!(c.timeout_duration(), Some(Duration::from_millis(2500)));
    assert_eq!(c.think_timeout_duration(), Some(Duration::from_millis(500)));
    assert_eq!(
        (
            c.load().num_conns(),
            c.load().num_calls(),
            c.load().burst_length()
        ),
        (7, 3, 3)
    );
    assert_eq!(c.request().http_version(), HttpVersion::V10);
    assert_eq!(c.target().uri(), "/x?y");
    assert_eq!(
        (c.sockets().send_buffer(), c.sockets().recv_buffer()),
        (2_147_483_647, 1)
    );
    assert_eq!(
        (c.load().max_connections(), c.load().max_piped_calls()),
        (4, 0)
    );
    assert_eq!(c.sessions().failure_status(), 503);
    assert_eq!(c.output().print_reply(), Some(PrintWhat::Body));
    assert_eq!(c.output().print_request(), Some(PrintWhat::Header));
    assert_eq!(c.sessions().wsess(), Some(&WsessSpec::new(8, 16, 0.1)));
    assert_eq!(c.request().wset(), Some(&WsetSpec::new(5, 1.0)));
    assert_eq!(c.request().wlog(), Some(&WlogSpec::new(false, "urls")));
    assert_eq!(c.target().myaddr(), vec!["10.0.0.1", "10.0.0.2-10.0.0.9"]);
    assert!(!c.tls().verify());
    assert_eq!(
        (c.output().verbose(), c.output().debug(), c.load().threads()),
        (3, 4, 1024)
    );
    assert_eq!(c.load().runtime(), 3.0);
    let c = cfg(&["--wsesslog=0x3,0,a b.log", "--wlog=Y,u", "--print-reply"]);
    assert_eq!(
        c.sessions().wsesslog(),
        Some(&WsesslogSpec::new(3, 0.0, "a b.log"))
    );
    assert_eq!(c.request().wlog().map(|w| w.repeat()), Some(true));
    assert_eq!(c.output().print_reply(), Some(PrintWhat::Both));
    assert_eq!(c.load().burst_length(), 1);
}

#[test]
fn every_option_is_supported() {
    // `build` refuses what is not implemented yet (`ConfigError::Unsupported`), so
    // each of these building is the check.
    cfg(&["--server=127.0.0.1", "--wsesspage=1,1,0"]);
    cfg(&[
        "--server=127.0.0.1",
        "--wsess=1,1,0",
        "--session-cookies",
        "-n",
    ]);
    cfg(&[
        "--server=127.0.0.1",
        "--hog",
        "--close-with-reset",
        "--no-host-hdr",
        "--add-header=X: 1\\n",
        "--method=HEAD",
        "--period=e0.1",
        "--runtime=2",
        "--threads=4",
        "--use-timer-cache",
        "--ssl-verify=no",
        "--max-connections=0",
        "-d1",
        "-v",
    ]);
}

#[test]
fn later_rate_or_period_wins() {
    let p = |args: &[&str]| cfg(args).load().period().clone();
    let ip = ["--server=127.0.0.1"];
    assert_eq!(
        p(&[ip[0], "--rate", "5", "--period", "e1"]),
        Period::Exponential(1.0)
    );
    assert_eq!(
        p(&[ip[0], "--period", "e1", "--rate", "4"]),
        Period::Deterministic(0.25)
    );
    assert_eq!(p(&[ip[0], "--period", "u0,0"]), Period::Sequential);
    assert_eq!(p(&[ip[0], "--period", "U0,1"]), Period::Uniform(0.0, 1.0));
    assert_eq!(
        p(&[ip[0], "--period", "v0.5,10,1,20"]),
        Period::Variable(vec![(0.5, 10.0), (1.0, 20.0)])
    );
    assert_eq!(p(&[ip[0], "--period", "2"]), Period::Deterministic(2.0));
    assert_eq!(p(&[ip[0], "--period", "D2"]), Period::Deterministic(2.0));
    assert_eq!(p(&[ip[0], "--rate", "+1e1"]), Period::Deterministic(0.1));
    assert_eq!(p(&[ip[0], "--rate", "0.0"]), Period::Sequential);
    assert_eq!(
        p(&[ip[0], "--port", "1", "--port", "2"]),
        Period::Sequential
    );
    assert_eq!(
        cfg(&[ip[0], "--port", "1", "--port", "2"]).target().port(),
        2
    );
}

#[test]
fn help_and_version_are_not_runs() {
    assert!(matches!(super::from_argv(&["rshperf", "-h"]), Ok(None)));
    assert!(matches!(
        super::from_argv(&["rshperf", "--server=127.0.0.1", "-V"]),
        Ok(None)
    ));
}

#[test]
fn huge_timeouts_saturate() {
    let c = cfg(&[
        "--server=127.0.0.1",
        "--timeout=1e300",
        "--think-timeout=1e-12",
    ]);
    assert_eq!(c.timeout_duration(), Some(Duration::MAX));
    assert_eq!(c.think_timeout_duration(), Some(Duration::from_nanos(1)));
}

#[test]
fn strtod_prefix_matches_c() {
    assert_eq!(strtod_prefix("1.5e3x"), Some((1500.0, 5)));
    assert_eq!(strtod_prefix("1e"), Some((1.0, 1)));
    assert_eq!(strtod_prefix("1e+"), Some((1.0, 1)));
    assert_eq!(strtod_prefix(".5,"), Some((0.5, 2)));
    assert_eq!(strtod_prefix("5."), Some((5.0, 2)));
    assert_eq!(strtod_prefix("-2"), Some((-2.0, 2)));
    assert_eq!(strtod_prefix("."), None);
    assert_eq!(strtod_prefix(""), None);
    assert_eq!(strtod_prefix("x"), None);
    assert_eq!(strtod_prefix("INFINITY,"), Some((f64::INFINITY, 8)));
    assert!(strtod_prefix("nan").is_some_and(|(v, n)| v.is_nan() && n == 3));
    assert_eq!(c_strtod(" 1"), Some(1.0));
    assert_eq!(c_strtod("1e999"), None);
    assert_eq!(c_strtoul10("-1"), Some(u64::MAX));
    assert_eq!(c_strtoul10("1x"), None);
}

#[test]
fn runtime_without_num_conns_runs_until_the_runtime() {
    assert!(cfg(&["--runtime", "30", "--rate", "10"])
        .load()
        .until_runtime());
    assert!(cfg(&["--runtime", "30"]).load().until_runtime());
    // --num-conns (even 1, the default) keeps it a cap; sessions have their count.
    assert!(!cfg(&["--runtime", "30", "--num-conns", "1"])
        .load()
        .until_runtime());
    assert!(!cfg(&["--runtime", "30", "--wsess", "5,2,0"])
        .load()
        .until_runtime());
    assert!(!cfg(&["--rate", "10"]).load().until_runtime());
    // The echo line says what runs: the runtime, no connection count (httperf's
    // `--num-conns=1` would say one connection).
    assert_eq!(
        cfg(&["--server", "127.0.0.1", "--runtime", "30", "--rate", "10"]).echo_line(),
        "rshperf --runtime=30 --client=0/1 --server=127.0.0.1 --port=80 --uri=/ --rate=10 \
         --send-buffer=4096 --recv-buffer=16384 --num-calls=1"
    );
    // With --num-conns the count is echoed; --call-rate without --num-calls runs
    // calls until the runtime: no call count.
    assert!(cfg(&[
        "--server",
        "127.0.0.1",
        "--runtime",
        "30",
        "--num-conns",
        "1"
    ])
    .echo_line()
    .ends_with(" --num-conns=1 --num-calls=1"));
    let calls = cfg(&[
        "--server",
        "127.0.0.1",
        "--runtime",
        "3",
        "--call-rate",
        "100",
    ]);
    assert!(
        calls.echo_line().contains(" --num-conns=1 --call-rate=100"),
        "{}",
        calls.echo_line()
    );
    assert!(!calls.echo_line().contains("--num-calls"));
}

#[test]
fn partition_and_start_at_parse_and_validate() {
    assert_eq!(parse_partition("0/4"), Ok((0, 4)));
    assert_eq!(parse_partition("3/4"), Ok((3, 4)));
    for bad in ["4/4", "1", "a/2", "-1/2", "1/0", "1/2x", ""] {
        assert!(parse_partition(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_start_at("+2"), Ok(StartAt::After(2.0)));
    assert_eq!(
        parse_start_at("1700000000.5"),
        Ok(StartAt::Unix(1_700_000_000.5))
    );
    for bad in ["", "+", "x", "+-1", "nan", "+inf", "+1e9"] {
        assert!(parse_start_at(bad).is_err(), "{bad}");
    }
}

#[test]
fn rshperf_options_reach_the_config() {
    let c = super::from_argv(&[
        "rshperf",
        "--server",
        "127.0.0.1",
        "--percentiles",
        "--json=-",
        "--csv",
        "r.csv",
        "--fail-on",
        "errors>0",
        "--fail-on=p99>5ms",
        "--no-progress",
        "--partition=1/4",
        "--start-at=+1",
    ])
    .expect("valid")
    .expect("a run");
    assert!(c.output().percentiles());
    assert_eq!(c.output().json(), Some("-"));
    assert_eq!(c.output().csv(), Some("r.csv"));
    let exprs: Vec<&str> = c.output().fail_on().iter().map(|t| t.expr()).collect();
    assert_eq!(exprs, ["errors>0", "p99>5ms"]);
    assert_eq!(c.output().progress(), Some(false));
    assert_eq!(c.load().partition(), (1, 4));
    assert_eq!(c.load().start_at(), Some(StartAt::After(1.0)));
    assert!(c.echo_line().ends_with(" --partition=1/4"));
}
