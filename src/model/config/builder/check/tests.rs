//! Every rule of `ConfigBuilder::build`: its error variant and exact message, and the
//! values it derives; warnings are returned, never printed.

use std::net::IpAddr;

use super::*;
use crate::model::config::{
    BodyOrder, PrintWhat, SslProtocol, Warning, WlogSpec, WsessSpec, WsesslogSpec, WsesspageSpec,
};
use crate::wire::url::TargetUrl;

/// A change to a builder.
type Setter = fn(&mut ConfigBuilder);

/// A builder aimed at 127.0.0.1 (no resolver needed).
fn local() -> ConfigBuilder {
    let mut b = ConfigBuilder::new();
    b.server("127.0.0.1");
    b
}

/// The error of `b`, with its message checked against `text`.
fn refused(b: &ConfigBuilder, text: &str) -> ConfigError {
    let r = b.clone().build().expect_err("refused");
    assert_eq!(r.error.to_string(), text);
    r.error
}

fn url(s: &str) -> TargetUrl {
    parse_url(s).expect("a URL").expect("valid")
}

fn wsess() -> Option<WsessSpec> {
    Some(WsessSpec {
        sessions: 1,
        calls: 1,
        think: 0.0,
    })
}

fn wsesslog() -> Option<WsesslogSpec> {
    Some(WsesslogSpec {
        sessions: 1,
        think: 0.0,
        file: "f".into(),
    })
}

fn wsesspage() -> Option<WsesspageSpec> {
    Some(WsesspageSpec {
        sessions: 1,
        pages: 1,
        think: 0.0,
    })
}

#[test]
fn typed_values_follow_httperfs_rules() {
    let cases: Vec<(Setter, &str, &str)> = vec![
        (
            |b| {
                b.num_conns(0);
            },
            "--num-conns",
            "illegal number of connections 0 (expected an integer >= 1)",
        ),
        (
            |b| {
                b.num_calls(0);
            },
            "--num-calls",
            "illegal number of calls 0 (expected an integer >= 1)",
        ),
        (
            |b| {
                b.burst_length(0);
            },
            "--burst-length",
            "illegal burst-length 0",
        ),
        (
            |b| {
                b.port(0);
            },
            "--port",
            "illegal port number 0 (expected an integer from 1 to 65535)",
        ),
        (
            |b| {
                b.send_buffer(u32::MAX);
            },
            "--send-buffer",
            "illegal send buffer size 4294967295 (expected an integer from 1 to 2147483647)",
        ),
        (
            |b| {
                b.recv_buffer(u32::MAX);
            },
            "--recv-buffer",
            "illegal receive buffer size 4294967295 (expected an integer from 1 to 2147483647)",
        ),
        (
            |b| {
                b.failure_status(42);
            },
            "--failure-status",
            "illegal failure status 42 (expected an HTTP status code from 100 to 999)",
        ),
        (
            |b| {
                b.threads(0);
            },
            "--threads",
            "illegal number of threads 0 (expected an integer from 1 to 1024)",
        ),
        (
            |b| {
                b.concurrency(2_000_000);
            },
            "--concurrency",
            "illegal concurrency 2000000 (expected an integer from 1 to 1000000)",
        ),
        (
            |b| {
                b.call_rate(-1.0);
            },
            "--call-rate",
            "illegal call rate -1 (expected a number of calls per second > 0 and <= 1e9)",
        ),
        (
            |b| {
                b.timeout(-1.0);
            },
            "--timeout",
            "illegal connect timeout -1 (expected a number of seconds >= 0; 0 means none)",
        ),
        (
            |b| {
                b.think_timeout(f64::NAN);
            },
            "--think-timeout",
            "illegal think timeout value nan (expected a number of seconds >= 0)",
        ),
        (
            |b| {
                b.runtime(-2.0);
            },
            "--runtime",
            "illegal runtime value -2",
        ),
        (
            |b| {
                b.metrics_linger(-1.0);
            },
            "--metrics-linger",
            "illegal metrics linger -1",
        ),
    ];
    for (set, option, text) in cases {
        let mut b = local();
        set(&mut b);
        let e = refused(&b, text);
        assert!(matches!(e, ConfigError::Illegal { .. }), "{text}");
        assert_eq!(e.option(), Some(option));
    }
    // 0 buffers keep the kernel's defaults (ab's, lb's).
    let mut b = local();
    b.send_buffer(0).recv_buffer(0);
    assert_eq!(b.build().expect("valid").config.socket_buffers(), (0, 0));
}

#[test]
fn a_url_names_server_port_uri_and_tls() {
    let mut b = ConfigBuilder::new();
    b.url(url("https://127.0.0.1/x?y"));
    let c = b.build().expect("valid").config;
    assert_eq!(
        (
            c.target.server.as_str(),
            c.target.port,
            c.target.uri.as_str()
        ),
        ("127.0.0.1", 443, "/x?y")
    );
    assert!(c.tls.enabled());

    let mut b = ConfigBuilder::new();
    b.url(url("http://127.0.0.1/"))
        .url(url("http://127.0.0.2/"));
    let e = refused(&b, "more than one URL (http://127.0.0.1/ and http://127.0.0.2/); use --servers FILE for several servers");
    assert!(matches!(e, ConfigError::MoreThanOneUrl { .. }));

    let mut b = ConfigBuilder::new();
    b.uri("/a")
        .server("127.0.0.1")
        .url(url("http://127.0.0.1/"));
    let e = refused(
        &b,
        "the URL http://127.0.0.1/ names the server, port and URI: give it or --uri, not both",
    );
    assert_eq!(
        e,
        ConfigError::UrlAndOption {
            url: "http://127.0.0.1/".into(),
            option: "--uri"
        }
    );

    let mut b = ConfigBuilder::new();
    b.port(81).url(url("http://127.0.0.1:82/"));
    let e = refused(
        &b,
        "the URL http://127.0.0.1:82/ has a port: give it or --port, not both",
    );
    assert!(matches!(e, ConfigError::UrlAndPort { .. }));
    let mut b = ConfigBuilder::new();
    b.port(81).url(url("http://127.0.0.1/"));
    assert_eq!(b.build().expect("valid").config.target.port, 81);

    let mut b = ConfigBuilder::new();
    b.tls().url(url("http://127.0.0.1:8/p"));
    let e = refused(&b, "--ssl with an http:// URL: use https://127.0.0.1:8/p");
    assert!(matches!(e, ConfigError::SslWithHttpUrl { .. }));
}

#[test]
fn server_values_are_host_names() {
    let mut b = ConfigBuilder::new();
    b.server("http://h/");
    let e = refused(&b, "--server takes a host name, not a URL: give the URL on its own (rshperf http://h/ ...) or --server, --port and --uri");
    assert!(matches!(e, ConfigError::ServerIsUrl { .. }));
    let mut b = ConfigBuilder::new();
    b.server("127.0.0.1:8080");
    refused(&b, "--server 127.0.0.1:8080: --server takes no port; use --server 127.0.0.1 --port 8080 (or the URL http://127.0.0.1:8080/)");
    let mut b = ConfigBuilder::new();
    b.server("[::1]:8080");
    let e = refused(&b, "--server [::1]:8080: --server takes no port; use --server ::1 --port 8080 (or the URL http://[::1]:8080/)");
    assert_eq!(e.option(), Some("--server"));
    let mut b = ConfigBuilder::new();
    b.server("");
    let e = refused(&b, "cannot resolve server address '': empty host name");
    assert!(matches!(e, ConfigError::Unresolvable { .. }));
}

#[test]
fn call_rate_combinations() {
    let clash = |set: Setter, clash: CallRateClash, tail: &str| {
        let mut b = local();
        b.call_rate(10.0);
        set(&mut b);
        let e = refused(
            &b,
            &format!("--call-rate schedules calls over a pool of --num-conns connections: {tail}"),
        );
        assert_eq!(e, ConfigError::CallRateWith { clash });
    };
    clash(
        |b| {
            b.rate(5.0);
        },
        CallRateClash::Rate,
        "--rate (connections per second) does not apply; give one of them",
    );
    clash(
        |b| {
            b.concurrency(2);
        },
        CallRateClash::Concurrency,
        "--concurrency (a closed loop) does not apply; give one of them",
    );
    clash(
        |b| {
            b.wsess(wsess());
        },
        CallRateClash::Sessions,
        "sessions (--wsess, --wsesslog, --wsesspage) are not supported",
    );
    clash(
        |b| {
            b.http_version(HttpVersion::V10);
        },
        CallRateClash::Http10,
        "HTTP/1.0 closes after every reply; use --http-version 1.1 or 2",
    );
    clash(
        |b| {
            b.max_connections(3);
        },
        CallRateClash::MaxConnections,
        "--max-connections does not apply (the pool is --num-conns)",
    );

    let mut b = local();
    b.call_rate(10.0).threads(2);
    let e = refused(&b, "--call-rate: --num-conns 1 is less than the number of engines (2: --threads times the --partition count); every engine needs a connection");
    assert_eq!(
        e,
        ConfigError::CallRateConns {
            num_conns: 1,
            engines: 2
        }
    );

    let mut b = local();
    b.call_rate(10.0).period(Period::Uniform(0.1, 0.3));
    let e = refused(&b, "--call-rate 10 and --period: the period's mean must be 1/R = 0.1 s (it is 0.2 s); e.g. --period e0.1");
    assert!(matches!(e, ConfigError::CallRatePeriod { .. }));

    let mut b = local();
    b.call_rate(250.0).runtime(5.0);
    let c = b.build().expect("valid").config;
    assert_eq!(c.load.period, Period::Deterministic(0.004));
    assert!(c.load.calls_until_runtime && !c.load.until_runtime);
}

#[test]
fn combinations_of_options() {
    let cases: Vec<(Setter, ConfigError, &str)> = vec![
        (|b| {
            b.wsess(wsess()).wsesslog(wsesslog());
        }, ConfigError::SessionWorkloads, "only one of --wsess, --wsesslog, --wsesspage may be given"),
        (|b| {
            b.json("-").print_reply(PrintWhat::Both);
        }, ConfigError::JsonStdoutAndPrint, "--json=- cannot be combined with --print-request or --print-reply (both write to stdout)"),
        (|b| {
            b.wsess(wsess()).max_connections(5);
        }, ConfigError::SessionLimit { option: "--max-conns", max: 4 }, "--max-conns must be <= 4"),
        (|b| {
            b.wsess(wsess()).max_piped_calls(33);
        }, ConfigError::SessionLimit { option: "--max-piped-calls", max: 32 }, "--max-piped-calls must be <= 32"),
        (|b| {
            b.session_cookies(true);
        }, ConfigError::CookiesWithoutSessions, "--session-cookie requires session-oriented workload (e.g., --wsess)"),
        (|b| {
            b.servers("f");
        }, ConfigError::ServerAndServers, "--server S or --servers file, not both"),
        (|b| {
            b.concurrency(2).rate(10.0);
        }, ConfigError::ConcurrencyAndRate, "--concurrency runs a closed loop: give it or --rate/--period, not both"),
        (|b| {
            b.concurrency(3).threads(2).partition(0, 2);
        }, ConfigError::TooFewUsers { concurrency: 3, engines: 4 }, "--concurrency 3 is less than the number of engines (4: --threads times the --partition count); every engine needs at least one user"),
        (|b| {
            b.unix_socket("/s").hog(true);
        }, ConfigError::UnixSocketWith { option: "--hog" }, "--unix-socket connects to one socket file: not with --hog"),
        (|b| {
            b.unix_socket("/s").myaddr("10.0.0.1");
        }, ConfigError::UnixSocketWith { option: "--myaddr" }, "--unix-socket connects to one socket file: not with --myaddr"),
        (|b| {
            b.body_file("b").wsesspage(wsesspage());
        }, ConfigError::BodyFileWithSessions { with_sesslog: false }, "--body-file with --wsesspage would send the body with every embedded object"),
        (|b| {
            b.body_file("b").wsesslog(wsesslog());
        }, ConfigError::BodyFileWithSessions { with_sesslog: true }, "--body-file with --wsesslog: give each request's body with contents= in the session file"),
        (|b| {
            b.metrics_linger(1.0);
        }, ConfigError::LingerWithoutListen, "--metrics-linger needs --metrics-listen"),
        (|b| {
            b.tls_server_name("h");
        }, ConfigError::ServerNameWithoutTls, "--tls-server-name requires --ssl (or --ssl-protocol)"),
    ];
    for (set, want, text) in cases {
        let mut b = local();
        set(&mut b);
        assert_eq!(refused(&b, text), want);
    }
}

#[test]
fn derived_defaults() {
    let mut b = local();
    b.tls_protocol(SslProtocol::Tls13)
        .http_version(HttpVersion::V2)
        .body_file("b");
    let c = b.build().expect("valid").config;
    assert_eq!(c.target.port, 443);
    assert!(c.tls.enabled() && c.tls.alpn_h2());
    assert_eq!(
        *c.tls.fallback_name(),
        ("--server", "127.0.0.1".to_string())
    );
    assert_eq!(c.request.method, "POST");
    assert_eq!(c.target.addrs, vec!["127.0.0.1:443".parse().expect("addr")]);

    let mut b = local();
    b.server_name("example.org:8080")
        .method("PUT")
        .body_file("b")
        .runtime(3.0);
    let c = b.build().expect("valid").config;
    assert_eq!(c.request.method, "PUT");
    assert_eq!(c.host_header(), "example.org:8080");
    assert_eq!(
        *c.tls.fallback_name(),
        ("--server-name", "example.org".to_string())
    );
    assert!(c.load.until_runtime);

    let mut b = local();
    b.num_conns(3).runtime(3.0);
    assert!(!b.build().expect("valid").config.load.until_runtime);

    let mut b = ConfigBuilder::new();
    b.server("::1");
    assert_eq!(b.build().expect("valid").config.host_header(), "[::1]");
}

#[test]
fn the_backend_is_io_else_rshperf_io_else_epoll() {
    use crate::model::pacing::Io;
    let io = |b: &ConfigBuilder| b.clone().build().expect("valid").config.pacing.io();
    let mut b = local();
    assert_eq!(io(&b), Io::Epoll);
    b.environment(|k| (k == "RSHPERF_IO").then(|| "uring".into()));
    assert_eq!(io(&b), Io::Uring);
    let built = b.clone().build().expect("valid").config;
    assert!(
        !built.echo_line().contains("--io"),
        "the variable is not an option"
    );
    b.environment(|_| Some(String::new()));
    assert_eq!(io(&b), Io::Epoll, "set but empty is unset");
    b.io(Io::Auto);
    b.environment(|_| Some("uring".into()));
    assert_eq!(io(&b), Io::Auto, "the option wins");
    let mut b = local();
    b.environment(|_| Some("kqueue".into()));
    let e = refused(
        &b,
        "RSHPERF_IO: `kqueue' is not a backend (expected epoll, uring or auto; \
         or unset it and give --io)",
    );
    assert_eq!(e.option(), Some("--io"));
}

#[test]
fn warnings_are_returned_in_order() {
    let mut b = local();
    b.add_header(r"A\q")
        .warn(Warning::IgnoredOperand("ignoring argument 'x'".into()));
    assert_eq!(b.warnings().len(), 2);
    let built = b.clone().build().expect("valid");
    assert_eq!(
        built.warnings,
        vec![
            Warning::HeaderEscape("ignoring unknown escape sequence `\\q' in --add-header".into()),
            Warning::IgnoredOperand("ignoring argument 'x'".into()),
        ]
    );
    assert_eq!(
        built.warnings[0].to_string(),
        "rshperf: ignoring unknown escape sequence `\\q' in --add-header"
    );
    assert_eq!(
        built.warnings[1].to_string(),
        "rshperf: warning: ignoring argument 'x'"
    );
    b.num_conns(0);
    let r = b.build().expect_err("refused");
    assert_eq!(r.warnings.len(), 2);
}

#[test]
fn myaddr_entries_and_ranges() {
    let mut b = local();
    b.myaddr("127.0.0.2-127.0.0.4")
        .myaddr("::1")
        .myaddr("127.0.0.9");
    let c = b.build().expect("valid").config;
    let want: Vec<IpAddr> = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "::1", "127.0.0.9"]
        .iter()
        .map(|a| a.parse().expect("ip"))
        .collect();
    assert_eq!(c.target.local_addrs, want);
    assert_eq!(MAX_LOCAL, 65_536, "the messages say 65536");
    let cases = [
        (
            "127.0.0.5-127.0.0.4",
            "invalid address list 127.0.0.5-127.0.0.4 (an ascending range of at most 65536)",
        ),
        (
            "127.0.0.x-127.0.0.4",
            "invalid starting address 127.0.0.x in --myaddr 127.0.0.x-127.0.0.4",
        ),
        (
            "127.0.0.1-10.0.0",
            "invalid ending address 10.0.0 in --myaddr 127.0.0.1-10.0.0",
        ),
        (
            "no such host.invalid",
            "invalid address list no such host.invalid (not an address or host name)",
        ),
        (
            "10.0.0.0-10.1.0.0",
            "invalid address list 10.0.0.0-10.1.0.0 (an ascending range of at most 65536)",
        ),
    ];
    for (entry, text) in cases {
        let mut b = local();
        b.myaddr(entry);
        assert_eq!(refused(&b, text).option(), Some("--myaddr"), "{entry}");
    }
    let mut b = local();
    b.myaddr("10.0.0.0-10.0.255.255").myaddr("10.1.0.0");
    assert_eq!(
        refused(&b, "--myaddr: more than 65536 addresses"),
        ConfigError::MyaddrTooMany
    );
}

#[test]
fn the_module_example_holds() {
    use crate::model::config::{Config, ConfigError, HttpVersion};
    let mut b = Config::builder();
    b.server("127.0.0.1")
        .port(8080)
        .uri("/index.html")
        .num_conns(100)
        .rate(50.0)
        .http_version(HttpVersion::V11);
    let built = b.build().expect("a valid configuration");
    assert!(built.warnings.is_empty());
    assert_eq!(built.config.load.num_conns, 100);
    assert!(built.config.echo_line().contains(" --rate=50 "));

    let mut b = Config::builder();
    b.server("127.0.0.1").concurrency(8).rate(10.0);
    let refused = b.build().expect_err("a closed loop has no rate");
    assert_eq!(refused.error, ConfigError::ConcurrencyAndRate);
}

#[test]
fn a_start_more_than_a_week_ahead_is_refused() {
    let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let text = "--start-at: the start time is more than 7 days (604800 s) away";
    for ok in [
        None,
        Some(StartAt::After(604_800.0)),
        Some(StartAt::Unix(1_700_604_800.0)),
        Some(StartAt::Unix(0.0)),
    ] {
        assert_eq!(check_start_at(ok, now), Ok(()), "{ok:?}");
    }
    for far in [
        StartAt::Unix(1_700_604_801.0),
        StartAt::Unix(1e20),
        StartAt::After(604_801.0),
    ] {
        let e = check_start_at(Some(far), now).expect_err("too far");
        assert_eq!(e.to_string(), text, "{far:?}");
    }
    let mut b = local();
    b.start_at(Some(StartAt::Unix(1e20)));
    refused(&b, text);
}

#[test]
fn combinations_not_implemented_yet_are_refused_last() {
    let cases: [(Setter, &str); 3] = [
        (
            |b| {
                b.wsesspage(wsesspage()).http_version(HttpVersion::V2);
            },
            "--wsesspage with --http-version 2 is not supported yet",
        ),
        (
            |b| {
                b.wsesspage(wsesspage()).http_version(HttpVersion::V3);
            },
            "--wsesspage with --http-version 3 is not supported yet",
        ),
        (
            |b| {
                b.unix_socket("/tmp/s").http_version(HttpVersion::V3);
            },
            "--unix-socket with --http-version 3 is not supported yet",
        ),
    ];
    for (set, text) in cases {
        let mut b = local();
        set(&mut b);
        assert!(matches!(refused(&b, text), ConfigError::Unsupported { .. }));
    }
}

#[test]
fn body_lines_need_the_fixed_uri_and_no_other_body() {
    let cases: [(Setter, &str); 5] = [
        (
            |b| {
                b.body_lines("p").body_file("f");
            },
            "--body-lines with --body-file: give one of them (--body-file: one body for every call)",
        ),
        (
            |b| {
                b.body_lines("p").wlog(Some(WlogSpec::new(true, "w")));
            },
            "--body-lines with --wlog or --wset: the bodies vary per call on the fixed --uri",
        ),
        (
            |b| {
                b.body_lines("p").wsesslog(wsesslog());
            },
            "--body-lines with --wsesslog: give each request's body with contents= in the session file",
        ),
        (
            |b| {
                b.body_lines("p").wsesspage(wsesspage());
            },
            "--body-lines with --wsesspage would send a body with every embedded object",
        ),
        (
            |b| {
                b.body_order(BodyOrder::Random(1));
            },
            "--body-order needs --body-lines FILE (the bodies it orders)",
        ),
    ];
    for (set, text) in cases {
        let mut b = local();
        set(&mut b);
        assert!(matches!(refused(&b, text), ConfigError::Malformed { .. }));
    }
    // Alone, with sessions or HTTP/2, it builds, and sends with POST.
    let mut b = local();
    b.body_lines("p")
        .wsess(wsess())
        .http_version(HttpVersion::V2);
    let c = b.build().expect("builds").config;
    assert_eq!(c.request().method(), "POST");
    assert_eq!(
        crate::model::config::value::parse_body_order("random:42").expect("an order"),
        BodyOrder::Random(42)
    );
    for bad in ["random", "random:-1", "random:x", "sorted", ""] {
        let e = crate::model::config::value::parse_body_order(bad).expect_err(bad);
        assert!(
            e.to_string()
                .contains("expected round-robin or random:SEED"),
            "{e}"
        );
    }
}

/// `ramp:100..300/2s,hold:200/1s`, parsed.
fn profile() -> crate::model::config::RateProfile {
    crate::model::config::parse_rate_profile("ramp:100..300/2s,hold:200/1s").expect("valid")
}

#[test]
fn a_rate_profile_refuses_other_rates_and_sets_the_spacing_and_the_cap() {
    let mut b = local();
    b.rate(10.0).rate_profile(profile());
    let e = refused(&b, "--rate-profile sets the rate over time: give it or --rate, not both (--period still chooses the spacing: d, u, e or v)");
    assert_eq!(e.option(), Some("--rate-profile"));

    let mut b = local();
    b.concurrency(4).rate_profile(profile());
    refused(&b, "--rate-profile sets the rate over time: --concurrency runs a closed loop, which has no schedule; give one of them");

    let mut b = local();
    b.num_conns(2).call_rate(5.0).rate_profile(profile());
    refused(&b, "--rate-profile sets the rate over time: write --call-rate=profile for calls at the profile's rate");

    let mut b = local();
    b.call_rate_profile();
    let e = refused(
        &b,
        "--call-rate=profile takes the call rate from --rate-profile, which is not given",
    );
    assert_eq!(e.option(), Some("--call-rate"));

    // Random spacing is counted before the run: bounded, unless a count caps it.
    let huge = crate::model::config::parse_rate_profile("hold:1000000/1h").expect("valid");
    let mut b = local();
    b.period(Period::Exponential(1.0))
        .rate_profile(huge.clone());
    refused(&b, "--rate-profile: about 3600000000 arrivals with --period u, e or v; at most 100000000 (deterministic spacing has no limit; --num-conns caps the count)");
    b.num_conns(1000);
    assert_eq!(b.build().expect("capped").config.profile_cap(), Some(1000));
    let mut b = local();
    b.rate_profile(huge);
    assert!(b.build().is_ok(), "deterministic spacing has no limit");

    // The spacing's shape at the peak rate; --runtime only cuts the profile short.
    let mut b = local();
    b.period(Period::Uniform(1.0, 3.0))
        .runtime(1.0)
        .rate_profile(profile());
    let c = b.build().expect("valid").config;
    assert_eq!(c.load.period, Period::Uniform(0.5 / 300.0, 1.5 / 300.0));
    assert!(!c.load.until_runtime);
    assert_eq!(c.num_conns_bound(), None);
    assert_eq!(c.profile_cap(), None);
    assert!((c.mean_period() - 3.0 / 600.0).abs() < 1e-12);
    assert!(c
        .echo_line()
        .ends_with(" --rate-profile=ramp:100..300/2s,hold:200/1s"));

    // --call-rate=profile: the pool's calls at the profile's mean rate.
    let mut b = local();
    b.num_conns(2).call_rate_profile().rate_profile(profile());
    let c = b.build().expect("valid").config;
    assert_eq!(c.load.call_rate, 200.0);
    assert_eq!(c.load.period, Period::Deterministic(1.0 / 300.0));
    assert!(!c.load.calls_until_runtime);
    assert_eq!(c.num_conns_bound(), Some(2));
    assert!(c
        .echo_line()
        .contains(" --call-rate=profile --rate-profile="));
}
