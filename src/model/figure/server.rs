//! The table of a server's figures: one element of the document's `servers`
//! (`--servers` runs), computed from the server's own counters (`ServerStats`).
//! Read by `model::report` through the run table's `servers` member.

use std::sync::OnceLock;

use serde_json::Value;

use super::run::Run;
use super::{int, object, real, At, Figure, Scope, Table, Unit, Val};
use crate::model::stats::{quantile_ms, ServerStats};

/// What a server's figures are computed from.
pub(crate) struct Server<'a> {
    /// Its name, as in the `--servers` file.
    pub(crate) name: &'a str,
    /// Its counters.
    pub(crate) s: &'a ServerStats,
    /// The run's duration, s.
    pub(crate) duration: f64,
}

/// The scope of a server's figures.
pub(crate) enum ServerScope {}

impl Scope for ServerScope {
    type Value = fn(&Server<'_>, At) -> Val;
    type When = fn(&Server<'_>) -> bool;
}

/// A server's figure (see `Figure::new`).
fn f(
    path: &str,
    unit: Unit,
    about: &'static str,
    value: fn(&Server<'_>, At) -> Val,
) -> Figure<ServerScope> {
    Figure::new(path, unit, about, value)
}

/// The `q` quantile of the server's response times, ms.
fn response_q(v: &Server<'_>, q: f64) -> Val {
    real(quantile_ms(&v.s.response, q))
}

/// Every declaration, in document order.
fn declarations() -> Vec<Figure<ServerScope>> {
    vec![
        f(
            "server",
            Unit::Name,
            "the server's name (as in the `--servers` file)",
            |v, _| Val::Text(v.name.to_string()),
        ),
        f("connections", Unit::Count, "connections made", |v, _| {
            int(v.s.connections)
        }),
        f("requests", Unit::Count, "requests sent", |v, _| {
            int(v.s.requests)
        }),
        f(
            "replies",
            Unit::Count,
            "replies of status classes 1xx–5xx",
            |v, _| int(v.s.replies()),
        ),
        f(
            "request_rate",
            Unit::Rate("req/s"),
            "requests per second",
            |v, _| real(v.s.requests as f64 / v.duration),
        ),
        f(
            "reply_rate",
            Unit::Rate("replies/s"),
            "replies per second",
            |v, _| real(v.s.replies() as f64 / v.duration),
        ),
        f(
            "status.{class}",
            Unit::Count,
            "replies with status {class}",
            |v, at| int(v.s.replies_by_class[at.class + 1]),
        ),
        f(
            "errors.total",
            Unit::Count,
            "total of the error counters",
            |v, _| int(v.s.errors.iter().sum()),
        ),
        f(
            "errors.{kind}",
            Unit::Count,
            "error counter {kind}",
            |v, at| int(v.s.errors[at.kind]),
        ),
        f("response_ms.avg", Unit::Ms, "mean response time", |v, _| {
            let n = v.s.response.len();
            real(if n == 0 {
                0.0
            } else {
                v.s.response_sum_us as f64 / n as f64 / 1000.0
            })
        }),
        f("response_ms.p50", Unit::Ms, "response time p50", |v, _| {
            response_q(v, 0.5)
        }),
        f("response_ms.p90", Unit::Ms, "response time p90", |v, _| {
            response_q(v, 0.9)
        }),
        f("response_ms.p99", Unit::Ms, "response time p99", |v, _| {
            response_q(v, 0.99)
        }),
        f(
            "response_ms.max",
            Unit::Ms,
            "longest response time (histogram)",
            |v, _| response_q(v, 1.0),
        ),
    ]
}

/// The table of a server's figures.
pub(crate) fn table() -> &'static Table<ServerScope> {
    static TABLE: OnceLock<Table<ServerScope>> = OnceLock::new();
    TABLE.get_or_init(|| Table::of(declarations()))
}

/// The document's `servers`: one object per server of the run `r`.
pub(crate) fn json(r: &Run<'_>) -> Value {
    let servers = r.stats.servers.iter().enumerate().map(|(i, s)| {
        let v = Server {
            name: r.facts.servers.get(i).map_or("", String::as_str),
            s,
            duration: r.info.duration,
        };
        object(
            table()
                .specs
                .iter()
                .map(|spec| (spec.path.as_str(), (spec.figure.value)(&v, spec.at).json())),
        )
    });
    Value::Array(servers.collect())
}
