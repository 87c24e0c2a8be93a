//! The table of a run's figures: the derived members of the JSON document from
//! `duration_s` to `timeline` (docs/json.md §2.1), in document order.
//!
//! Each entry is one figure (or one templated family, see `figure`'s header) and
//! says how it is computed from `Run`: the run's `Stats`, its `RunInfo` and `Facts`,
//! the classic report's arithmetic (`Summary`) and the parts the text outputs share
//! (`Sessions`, `CallRate`, `Http2`, `Http3`). The figures of `servers` and
//! `timeline` are the `server` and `second` tables, one object per element; those of
//! the optional members `sessions`, `http2`, `http3`, `call_rate` and `stream` are in
//! `optional.rs`.
//! Read by `model::report` (evaluation, JSON), `model::threshold`, `output::csv` and
//! `model::compare`.

use std::sync::OnceLock;

use super::{
    int, optional, real, second, server, About, Aspect, At, Better, Compare, Figure, Method, Scope,
    Table, Unit, Val, QUANTILES,
};
use crate::model::blocks::{CallRate, Facts, Http2, Http3, Sessions, Stream};
use crate::model::run::RunInfo;
use crate::model::stats::ends::Ends;
use crate::model::stats::{quantile_ms, Stats};
use crate::model::summary::Summary;

/// What a run's figures are computed from.
pub(crate) struct Run<'a> {
    /// The run's statistics.
    pub(crate) stats: &'a Stats,
    /// Its duration and CPU times.
    pub(crate) info: &'a RunInfo,
    /// What the figures need from its configuration.
    pub(crate) facts: &'a Facts,
    /// The classic report's figures.
    pub(crate) s: &'a Summary<'a>,
    /// The session figures.
    pub(crate) sessions: &'a Sessions,
    /// The call-rate figures (meaningful when the pool was used).
    pub(crate) call_rate: &'a CallRate,
    /// The HTTP/2 figures (meaningful with HTTP/2 connections).
    pub(crate) http2: &'a Http2,
    /// The HTTP/3 figures (meaningful with HTTP/3 connections).
    pub(crate) http3: &'a Http3,
    /// The stream figures (meaningful with `--stream`).
    pub(crate) stream: &'a Stream,
}

/// The scope of a run's figures.
pub(crate) enum RunScope {}

impl Scope for RunScope {
    type Value = fn(&Run<'_>, At) -> Val;
    type When = fn(&Run<'_>) -> bool;
}

/// A run's figure (see `Figure::new`).
pub(super) fn f(
    path: &str,
    unit: Unit,
    about: &'static str,
    value: fn(&Run<'_>, At) -> Val,
) -> Figure<RunScope> {
    Figure::new(path, unit, about, value)
}

/// `figures` under member `prefix`, in the JSON when `when` holds.
fn group(
    prefix: &str,
    when: fn(&Run<'_>) -> bool,
    figures: Vec<Figure<RunScope>>,
) -> impl Iterator<Item = Figure<RunScope>> + '_ {
    figures.into_iter().map(move |f| f.under(prefix).when(when))
}

/// The `{hist}` histogram of the run.
fn hist<'a>(r: &Run<'a>, at: At) -> &'a hdrhistogram::Histogram<u64> {
    r.stats.hist.named()[at.hist].1
}

/// A counter of `Ends` (null for a document written before them).
fn ends(r: &Run<'_>, of: fn(&Ends) -> u64) -> Val {
    r.stats
        .ends
        .as_ref()
        .map_or(Val::Json(serde_json::Value::Null), |e| int(of(e)))
}

/// The `{q}` quantile.
fn q(at: At) -> f64 {
    QUANTILES[at.q].0
}

/// Compare's rows of the latency quantiles: response, connect and lateness, p50 to
/// p99.9, in that order.
fn quantile_rank(at: At) -> Option<u32> {
    let h = ["response", "connect", "lateness"]
        .iter()
        .position(|n| super::hist_names().get(at.hist) == Some(n))?;
    (at.q < 4).then(|| 10 + 10 * h as u32 + at.q as u32)
}

/// Response times are the server's; connect times and lateness the client's and its
/// machine's.
fn quantile_about(at: At) -> About {
    if is_response(at) {
        About::Server
    } else {
        About::Client
    }
}

/// The response-time quantiles are also named by their bare keys (`p99`, `max`).
fn is_response(at: At) -> bool {
    super::hist_names().get(at.hist) == Some(&"response")
}

/// Every declaration, in document order.
fn declarations() -> Vec<Figure<RunScope>> {
    let mut t = vec![
        f("duration_s", Unit::S, "test duration (`Total: … test-duration`)", |r, _| {
            real(r.info.duration)
        })
        .listed()
        .alias("duration"),
        f("max_connect_burst", Unit::Count, "`Maximum connect burst length`", |r, _| {
            int(r.s.max_burst)
        })
        .listed(),
        f("connections.total", Unit::Count, "connections made (`Total: connections`)", |r, _| {
            int(r.s.connections)
        })
        .listed()
        .alias("connections"),
        f("connections.rate", Unit::Rate("conn/s"), "connection rate (`Connection rate`)", |r, _| {
            real(r.s.conn_rate)
        })
        .listed()
        .alias("conn_rate")
        .compare(Compare {
            row: None,
            label: "connection rate",
            unit: None,
            better: Better::Higher,
            aspect: Aspect::Speed,
            about: |_| About::Server,
            method: Method::Rate("connections"),
            rank: |_| Some(2),
            synonyms: &[],
        }),
        f("connections.period_ms", Unit::Ms, "ms per connection", |r, _| {
            real(r.s.conn_period_ms)
        })
        .listed(),
        f(
            "connections.max_concurrent",
            Unit::Count,
            "most connections at once (`max N concurrent connections`)",
            |r, _| int(r.s.max_concurrent),
        )
        .listed(),
        f(
            "connections.successful",
            Unit::Count,
            "connections that ended without a failure (total = successful + failed + abandoned)",
            |r, _| int(r.stats.successful()),
        )
        .listed(),
        f("connections.replies_per_conn", Unit::Ratio, "`Connection length [replies/conn]`", |r, _| {
            real(r.s.replies_per_conn)
        })
        .listed(),
        f(
            "connections.failed",
            Unit::Count,
            "connections that ended by a failure, each in one error counter",
            |r, _| ends(r, |e| e.failed),
        )
        .fail_on(),
        f(
            "connections.unopened",
            Unit::Count,
            "attempts that failed before they had a socket (`fd_unavail` errors, not connections)",
            |r, _| ends(r, |e| e.unopened),
        )
        .fail_on(),
        f("connection_time_ms.min", Unit::Ms, "shortest connection lifetime", |r, _| {
            real(r.s.lifetime_min_ms)
        })
        .listed()
        .alias("lifetime_min"),
        f(
            "connection_time_ms.avg",
            Unit::Ms,
            "mean connection lifetime (`Connection time [ms]: avg`)",
            |r, _| real(r.s.lifetime_avg_ms),
        )
        .listed()
        .alias("lifetime_avg"),
        f("connection_time_ms.max", Unit::Ms, "longest connection lifetime (exact)", |r, _| {
            real(r.s.lifetime_max_ms)
        })
        .listed()
        .alias("lifetime_max"),
        f(
            "connection_time_ms.median",
            Unit::Ms,
            "median lifetime (httperf's 1-ms-bin median, always x.5)",
            |r, _| real(r.s.lifetime_median_ms),
        )
        .listed()
        .alias("lifetime_median"),
        f("connection_time_ms.stddev", Unit::Ms, "standard deviation of lifetimes", |r, _| {
            real(r.s.lifetime_stddev_ms)
        })
        .listed()
        .alias("lifetime_stddev"),
        f(
            "connection_time_ms.connect",
            Unit::Ms,
            "mean connect time (`Connection time [ms]: connect`)",
            |r, _| real(r.s.connect_avg_ms),
        )
        .listed()
        .alias("connect_avg"),
        f("requests.total", Unit::Count, "requests sent (`Total: requests`)", |r, _| {
            int(r.s.requests)
        })
        .listed()
        .alias("requests"),
        f("requests.rate", Unit::Rate("req/s"), "request rate (`Request rate`)", |r, _| {
            real(r.s.request_rate)
        })
        .listed()
        .alias("req_rate"),
        f("requests.period_ms", Unit::Ms, "ms per request", |r, _| {
            real(r.s.request_period_ms)
        })
        .listed(),
        f(
            "requests.size_b",
            Unit::Bytes,
            "request size (integer-truncated mean, as the report)",
            |r, _| int(r.s.request_size),
        )
        .listed(),
        f(
            "replies.total",
            Unit::Count,
            "replies, status classes 1xx–5xx (`Total: replies`)",
            |r, _| int(r.s.replies),
        )
        .listed()
        .alias("replies"),
        f(
            "replies.response_ms",
            Unit::Ms,
            "mean response time (`Reply time [ms]: response`)",
            |r, _| real(r.s.response_avg_ms),
        )
        .listed()
        .alias("response_avg"),
        f(
            "replies.transfer_ms",
            Unit::Ms,
            "mean transfer time (`Reply time [ms]: transfer`)",
            |r, _| real(r.s.transfer_avg_ms),
        )
        .listed()
        .alias("transfer_avg"),
        f("replies.rate", Unit::Rate("replies/s"), "replies / duration", |r, _| {
            real(r.s.replies as f64 / r.info.duration)
        })
        .listed()
        .compare(Compare {
            row: None,
            label: "reply rate",
            unit: None,
            better: Better::Higher,
            aspect: Aspect::Speed,
            about: |_| About::Server,
            method: Method::Rate("replies"),
            rank: |_| Some(1),
            // The report's 5-s samples are compared as the per-second reply rate.
            synonyms: &["reply_rate_avg"],
        }),
        f(
            "replies.non_2xx",
            Unit::Count,
            "replies with status 1xx, 3xx, 4xx or 5xx",
            |r, _| int(r.s.replies - r.s.reply_status[1]),
        )
        .listed()
        .alias("non_2xx"),
        f("reply_rate.min", Unit::Rate("replies/s"), "smallest 5-s reply-rate sample", |r, _| {
            real(r.s.reply_rate.min)
        })
        .listed(),
        f(
            "reply_rate.avg",
            Unit::Rate("replies/s"),
            "mean of the 5-s samples (0 without samples, as the report)",
            |r, _| real(r.s.reply_rate.avg),
        )
        .listed()
        .alias_unless("reply_rate", "reply_rate_samples", "replies_rate"),
        f("reply_rate.max", Unit::Rate("replies/s"), "largest sample", |r, _| {
            real(r.s.reply_rate.max)
        })
        .listed(),
        f(
            "reply_rate.stddev",
            Unit::Rate("replies/s"),
            "standard deviation of the samples",
            |r, _| real(r.s.reply_rate.stddev),
        )
        .listed(),
        f("reply_rate.samples", Unit::Count, "number of samples", |r, _| {
            int(r.s.reply_rate.samples)
        })
        .listed(),
        f("reply_size.header", Unit::Bytes, "header bytes per reply (integer-truncated)", |r, _| {
            int(r.s.reply_header_size)
        })
        .listed(),
        f(
            "reply_size.content",
            Unit::Bytes,
            "content bytes per reply (integer-truncated)",
            |r, _| int(r.s.reply_content_size),
        )
        .listed(),
        f("reply_size.footer", Unit::Bytes, "footer bytes per reply (integer-truncated)", |r, _| {
            int(r.s.reply_footer_size)
        })
        .listed(),
        f("reply_size.total", Unit::Bytes, "their sum (`Reply size [B]: (total …)`)", |r, _| {
            int(r.s.reply_total_size())
        })
        .listed(),
        f("status.{class}", Unit::Count, "replies with status {class}", |r, at| {
            int(r.s.reply_status[at.class])
        })
        .listed()
        .alias("{class}"),
        f("cpu.user_s", Unit::S, "user CPU time", |r, _| real(r.info.cpu_user)).listed(),
        f("cpu.system_s", Unit::S, "system CPU time", |r, _| real(r.info.cpu_system)).listed(),
        f("cpu.user_pct", Unit::Percent, "user CPU, % of the duration", |r, _| {
            real(r.s.cpu_user_pct)
        })
        .listed()
        .alias("cpu_user"),
        f("cpu.system_pct", Unit::Percent, "system CPU, % of the duration", |r, _| {
            real(r.s.cpu_system_pct)
        })
        .listed()
        .alias("cpu_system"),
        f("cpu.total_pct", Unit::Percent, "user + system CPU, % of the duration", |r, _| {
            real(r.s.cpu_total_pct)
        })
        .listed()
        .alias("cpu")
        .compare(Compare {
            row: Some("cpu_per_reply_us"),
            label: "client CPU per reply",
            unit: Some("µs"),
            better: Better::Lower,
            aspect: Aspect::Cost,
            about: |_| About::Client,
            method: Method::CpuPerReply,
            rank: |_| Some(100),
            synonyms: &[],
        }),
        f(
            "net_io.bytes",
            Unit::Bytes,
            "request + reply header + reply content bytes",
            |r, _| int(r.s.net_io_bytes),
        )
        .listed(),
        f("net_io.kb_per_s", Unit::Rate("KB/s"), "Net I/O in KiB/s (`Net I/O`)", |r, _| {
            real(r.s.net_io_kb_per_s)
        })
        .listed()
        .alias("net_io"),
        f("net_io.mbps", Unit::Rate("Mbit/s"), "Net I/O in 10⁶ bit/s", |r, _| {
            real(r.s.net_io_mbps)
        })
        .listed()
        .decimals(3),
        f(
            "errors.total",
            Unit::Count,
            "total of the error counters (`Errors: total`)",
            |r, _| int(r.s.errors_total),
        )
        .listed()
        .alias("errors")
        .compare(Compare {
            row: None,
            label: "errors per connection",
            unit: Some("%"),
            better: Better::Lower,
            aspect: Aspect::Cost,
            about: |_| About::Server,
            method: Method::ErrorsPerConnection,
            rank: |_| Some(99),
            synonyms: &[],
        }),
        f("errors.{kind}", Unit::Count, "error counter {kind}", |r, at| {
            int(r.s.errors[at.kind])
        })
        .listed()
        .alias("{kind}"),
        f("percentiles.{hist}.count", Unit::Count, "values recorded in the {hist} histogram", |r, at| {
            int(hist(r, at).len())
        })
        .listed(),
        f("percentiles.{hist}.{q}", Unit::Ms, "{hist} {q} (the `Percentiles {hist}` line)", |r, at| {
            real(quantile_ms(hist(r, at), q(at)))
        })
        .listed()
        .alias_for("{q}", is_response)
        .alias("{hist}_{q}")
        .compare(Compare {
            row: None,
            label: "{hist} {q}",
            unit: None,
            better: Better::Lower,
            aspect: Aspect::Speed,
            about: quantile_about,
            method: Method::Quantile,
            rank: quantile_rank,
            synonyms: &[],
        }),
        f("percentiles.{hist}.max", Unit::Ms, "{hist} max (the histogram's largest value)", |r, at| {
            real(quantile_ms(hist(r, at), 1.0))
        })
        .listed()
        .alias_for("max", is_response)
        .alias("{hist}_max"),
        f("tls_handshakes.full", Unit::Count, "full TLS handshakes", |r, _| {
            int(r.stats.tls_handshakes[0])
        })
        .listed(),
        f("tls_handshakes.resumed", Unit::Count, "resumed TLS handshakes", |r, _| {
            int(r.stats.tls_handshakes[1])
        })
        .listed(),
        f(
            "abandoned",
            Unit::Count,
            "connections still open when the run stopped (a signal, `--runtime`)",
            |r, _| int(r.stats.abandoned),
        )
        .listed(),
        f(
            "interrupted",
            Unit::Flag,
            "1 when SIGINT or SIGTERM cut the run short (`--fail-on=interrupted!=0`; any `--fail-on` already fails an interrupted run)",
            |r, _| Val::Flag(r.stats.interrupted),
        )
        .listed(),
        f(
            "unanswered",
            Unit::Count,
            "calls unanswered on the connections still open at the end (queued, or sent and no reply begun)",
            |r, _| ends(r, |e| e.unanswered),
        )
        .listed(),
        f(
            "unanswered_max_ms",
            Unit::Ms,
            "the longest an unanswered or unsent call had waited at the end, from its scheduled (or issue) time",
            |r, _| match &r.stats.ends {
                Some(e) => real(e.unanswered_max_us as f64 / 1000.0),
                None => Val::Json(serde_json::Value::Null),
            },
        )
        .listed(),
    ];
    t.extend(group(
        "sessions",
        |r| r.sessions.total > 0,
        optional::sessions(),
    ));
    t.push(
        f(
            "servers",
            Unit::Rows,
            "per server (`--servers` runs): the `server` table",
            |r, _| Val::Json(server::json(r)),
        )
        .when(|r| !r.stats.servers.is_empty()),
    );
    t.extend(group(
        "http2",
        |r| r.stats.http2.connections > 0,
        optional::http2(),
    ));
    t.extend(group(
        "http3",
        |r| r.stats.http3.connections > 0,
        optional::http3(),
    ));
    t.extend(group(
        "call_rate",
        |r| r.stats.pool.is_used(),
        optional::call_rate(),
    ));
    t.extend(group(
        "stream",
        |r| r.stats.stream.is_used(),
        optional::stream(),
    ));
    t.push(f(
        "timeline",
        Unit::Rows,
        "every second of the run: the `second` table",
        |r, _| Val::Json(second::json(&r.stats.timeline)),
    ));
    t.extend(group(
        "validity",
        |r| r.facts.validity.is_some(),
        optional::validity(),
    ));
    t
}

/// The table of a run's figures.
pub(crate) fn table() -> &'static Table<RunScope> {
    static TABLE: OnceLock<Table<RunScope>> = OnceLock::new();
    TABLE.get_or_init(|| Table::of(declarations()))
}

/// The values of every figure of `r`, in table order, each with whether it is in the
/// JSON.
pub(crate) fn evaluate(r: &Run<'_>) -> Vec<(Val, bool)> {
    table()
        .specs
        .iter()
        .map(|s| {
            let shown = s.figure.when.is_none_or(|w| w(r));
            ((s.figure.value)(r, s.at), shown)
        })
        .collect()
}
