//! Configurations that between them set every member of the JSON `config` (each
//! period kind, each `--start-at` form, each session and log workload), built through
//! the builder: the golden cases of `ConfigDoc`'s tests.

use crate::model::config::{
    Config, HttpVersion, Period, SslProtocol, StartAt, WlogSpec, WsessSpec, WsesslogSpec,
    WsesspageSpec, WsetSpec,
};
use crate::model::pacing::{Overload, Spin};
use crate::model::threshold;
use crate::wire::events::{Choice, Format};

/// The sample configurations, named.
pub(crate) fn samples() -> Vec<(&'static str, Config)> {
    let build = |b: crate::model::config::ConfigBuilder| b.build().expect("a valid sample").config;
    let mut out = Vec::new();

    let mut b = Config::builder();
    b.server("127.0.0.1").port(8080).uri("/1k.html");
    out.push(("defaults", build(b)));

    let mut b = Config::builder();
    b.server("127.0.0.1")
        .port(8443)
        .server_name("example.com")
        .uri("/x?y=1")
        .method("PUT")
        .add_header("X-A: 1\\nX-B: \"2\"\\n")
        .add_header_file("h.txt")
        .no_host_hdr(true)
        .num_calls(5)
        .burst_length(2)
        .rate_period(Period::Deterministic(0.01))
        .timeout(5.0)
        .think_timeout(2.5)
        .runtime(10.0)
        .client(1, 3)
        .partition(0, 2)
        .threads(2)
        .start_at(Some(StartAt::After(30.0)))
        .overload(Overload::Queue)
        .spin(Spin::Off)
        .pin()
        .realtime()
        .send_buffer(8192)
        .recv_buffer(32768)
        .hog(true)
        .myaddr("127.0.0.1")
        .close_with_reset(true)
        .max_connections(4)
        .max_piped_calls(8)
        .failure_status(503)
        .retry_on_failure(true)
        .session_cookies(true)
        .wsess(Some(WsessSpec::new(10, 5, 1.5)))
        .wlog(Some(WlogSpec::new(true, "log.txt")))
        .tls_protocol(SslProtocol::Tls13)
        .tls_ciphers("TLS_AES_128_GCM_SHA256")
        .tls_no_reuse()
        .tls_verify(false)
        .tls_server_name("sni.example")
        .verbose()
        .percentiles(true)
        .json("out.json")
        .csv("out.csv")
        .fail_on(threshold::parse("p99<50ms").expect("a threshold"))
        .fail_on(threshold::parse("errors<=0").expect("a threshold"))
        .body_file("body.bin")
        .content_type("text/plain")
        .header_file("headers.txt")
        .metrics_listen("127.0.0.1:9100".parse().expect("an address"))
        .metrics_linger(1.5)
        .stream(Some(Choice::Fixed(Format::Sse)))
        .stream_gap_timeout(2.5);
    out.push(("everything", build(b)));

    let mut b = Config::builder();
    b.server("localhost")
        .http_version(HttpVersion::V10)
        .num_conns(20)
        .period(Period::Uniform(0.5, 1.5))
        .start_at(Some(StartAt::Unix(1_700_000_000.25)))
        .unix_socket("/run/x.sock")
        .wsesslog(Some(WsesslogSpec::new(3, 0.25, "sessions.log")))
        .spin(Spin::Fixed(std::time::Duration::from_micros(150)));
    out.push(("sesslog", build(b)));

    let mut b = Config::builder();
    b.server("::1")
        .period(Period::Exponential(0.004))
        .wsesspage(Some(WsesspageSpec::new(7, 3, 0.5)))
        .wset(Some(WsetSpec::new(1000, 0.25)));
    out.push(("sesspage", build(b)));

    let mut b = Config::builder();
    b.server("127.0.0.1")
        .http_version(HttpVersion::V3)
        .period(Period::Variable(vec![(0.1, 2.0), (0.05, 1.0)]))
        .tls_ca_file("ca.pem");
    out.push(("variable", build(b)));

    let mut b = Config::builder();
    b.server("127.0.0.1")
        .http_version(HttpVersion::V2)
        .num_conns(4)
        .call_rate(50.0)
        .runtime(3.0)
        .body_lines("prompts.jsonl")
        .body_order(crate::model::config::BodyOrder::Random(7));
    out.push(("call_rate", build(b)));

    let mut b = Config::builder();
    b.server("127.0.0.1")
        .num_conns(2)
        .period(Period::Exponential(0.5))
        .call_rate_profile()
        .rate_profile(
            crate::model::config::parse_rate_profile("ramp:10..20/2s,hold:5/1s")
                .expect("a valid profile"),
        );
    out.push(("profile", build(b)));

    let mut b = Config::builder();
    b.server("127.0.0.1").num_conns(64).call_rate(250.0).replay(
        crate::model::config::ReplaySpec::new(
            "access.log.gz",
            4.0,
            crate::model::config::ReplayConnections::PerClient,
        ),
    );
    out.push(("replay", build(b)));
    out
}
