//! The table of a second's figures: one element of the document's `timeline`, one row
//! of `--timeline` (its columns are these names, docs/json.md §5), the per-second
//! series of the HTML page, and the per-second counts `rshperf compare` falls back to for documents without windows.
//!
//! Each entry says how it is computed from `Span`: one interval of the run's
//! `Timeline` (a second, or a coarser interval after the first hour) with its start
//! and length. Read by `model::report` (JSON), `output::timeline`, `output::html`,
//! `model::compare` and `front::sweep`.

use std::sync::OnceLock;

use serde_json::Value;

use super::{int, object, real, At, Figure, Scope, Table, Unit, Val};
use crate::model::stats::timeline::{Interval, Target, Timeline};

/// What a second's figures are computed from.
pub(crate) struct Span<'a> {
    /// Its start, seconds since the start of the run.
    pub(crate) start: u64,
    /// Its length, seconds.
    pub(crate) seconds: f64,
    /// What happened in it.
    pub(crate) iv: &'a Interval,
    /// Arrivals `--rate-profile` asked for in it (None without a profile).
    pub(crate) target: Option<f64>,
}

impl<'a> Span<'a> {
    /// The interval `iv` that starts at `start` s and lasts `seconds`, with the
    /// arrivals `target` asks for in that second.
    fn of(start: u64, seconds: f64, iv: &'a Interval, target: Option<&Target>) -> Span<'a> {
        Span {
            start,
            seconds,
            iv,
            target: target.map(|t| t.arrivals_in_second(start)),
        }
    }
}

/// The scope of a second's figures.
pub(crate) enum SecondScope {}

impl Scope for SecondScope {
    type Value = fn(&Span<'_>, At) -> Val;
    type When = fn(&Span<'_>) -> bool;
}

/// A second's figure (see `Figure::new`).
fn f(
    path: &str,
    unit: Unit,
    about: &'static str,
    value: fn(&Span<'_>, At) -> Val,
) -> Figure<SecondScope> {
    Figure::new(path, unit, about, value)
}

/// µs in ms.
fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// The `q` response-time quantile of a second: a bucket high, never above the max.
fn response_q(s: &Span<'_>, q: f64) -> Val {
    real(ms(s.iv.response.quantile_us(q).min(s.iv.response_max_us)))
}

/// Every declaration, in document order.
fn declarations() -> Vec<Figure<SecondScope>> {
    vec![
        f(
            "second",
            Unit::S,
            "start of the interval, s since the start (0 = the first second)",
            |s, _| int(s.start),
        ),
        f("seconds", Unit::S, "its length, s (1; less for the last)", |s, _| {
            real(s.seconds)
        }),
        f(
            "offered",
            Unit::Count,
            "arrivals (connections or sessions) scheduled in this second, counted by their scheduled time",
            |s, _| int(s.iv.offered),
        )
        .html("offered arrivals/s"),
        f(
            "target",
            Unit::Count,
            "arrivals --rate-profile asks for in this second (the integral of its rate over the whole second, whenever the run ended; empty without a profile)",
            |s, _| real(s.target.unwrap_or(f64::NAN)),
        )
        .decimals(1)
        .html("target arrivals/s"),
        f(
            "issued",
            Unit::Count,
            "arrivals (connections, sessions or calls) started in this interval, counted by the time they started",
            |s, _| int(s.iv.lateness.count()),
        )
        .html("issued arrivals/s"),
        f(
            "connections",
            Unit::Count,
            "connections that reached the connecting stage",
            |s, _| int(s.iv.connections),
        )
        .html("connections/s"),
        f("replies", Unit::Count, "completed replies, status classes 1xx–5xx", |s, _| {
            int(s.iv.replies.iter().sum())
        })
        .html("replies/s"),
        f("status.{class}", Unit::Count, "replies per status class", |s, at| {
            int(s.iv.replies[at.class])
        }),
        f("errors.total", Unit::Count, "failures per kind", |s, _| {
            int(s.iv.errors.iter().sum())
        })
        .html("errors, all kinds"),
        f("errors.{kind}", Unit::Count, "failures per kind", |s, at| {
            int(s.iv.errors[at.kind])
        })
        .html("{kind}"),
        f("response_ms.count", Unit::Count, "response times recorded in this second", |s, _| {
            int(s.iv.response.count())
        }),
        f(
            "response_ms.p50",
            Unit::Ms,
            "response-time percentiles of the replies whose status line arrived in this second, ms (bucket highs, at most 1/16 above the true value, never above the max)",
            |s, _| response_q(s, 0.5),
        )
        .html("p50"),
        f("response_ms.p90", Unit::Ms, "response-time p90", |s, _| response_q(s, 0.9))
            .html("p90"),
        f("response_ms.p99", Unit::Ms, "response-time p99", |s, _| response_q(s, 0.99))
            .html("p99"),
        f("response_ms.max", Unit::Ms, "longest response time in this second, exact", |s, _| {
            real(ms(s.iv.response_max_us))
        })
        .html("max"),
        f(
            "lateness_p99_ms",
            Unit::Ms,
            "arrival lateness p99 of the arrivals issued in this second",
            |s, _| real(ms(s.iv.lateness.quantile_us(0.99))),
        ),
        f("open", Unit::Count, "connections open at the end of the second", |s, _| {
            int(s.iv.open)
        })
        .html("open connections"),
    ]
}

/// The table of a second's figures.
pub(crate) fn table() -> &'static Table<SecondScope> {
    static TABLE: OnceLock<Table<SecondScope>> = OnceLock::new();
    TABLE.get_or_init(|| Table::of(declarations()))
}

/// The values of every figure of the interval `iv` that starts at `start` s and lasts
/// `seconds`, in table order, with the profile's `target` if the run had one.
pub(crate) fn row(start: u64, seconds: f64, iv: &Interval, target: Option<&Target>) -> Vec<Val> {
    let span = Span::of(start, seconds, iv, target);
    table()
        .specs
        .iter()
        .map(|s| (s.figure.value)(&span, s.at))
        .collect()
}

/// The value of the figure at position `i` of the table for the interval `iv`.
fn value(
    i: usize,
    start: u64,
    seconds: f64,
    iv: &Interval,
    target: Option<&Target>,
) -> Option<Val> {
    let spec = table().specs.get(i)?;
    let span = Span::of(start, seconds, iv, target);
    Some((spec.figure.value)(&span, spec.at))
}

/// The figure `name` of every second of `t`, in order: (length, value); empty for a
/// name that is no figure of a second.
pub(crate) fn series(t: &Timeline, name: &str) -> Vec<(f64, f64)> {
    let Some(i) = column(name) else {
        return Vec::new();
    };
    t.spans()
        .map(|(start, len, iv)| {
            let v = value(i, start, len, iv, t.target.as_ref()).and_then(|v| v.number());
            (len, v.unwrap_or(f64::NAN))
        })
        .collect()
}

/// Every second of `t`, in order: (start, length, values).
pub(crate) fn rows(t: &Timeline) -> Vec<(u64, f64, Vec<Val>)> {
    t.spans()
        .map(|(start, seconds, iv)| (start, seconds, row(start, seconds, iv, t.target.as_ref())))
        .collect()
}

/// The JSON object of one second's `values`.
pub(crate) fn to_json(values: &[Val]) -> Value {
    object(
        table()
            .specs
            .iter()
            .zip(values)
            .map(|(s, v)| (s.path.as_str(), v.json())),
    )
}

/// The document's `timeline`: one object per second of `t`.
pub(crate) fn json(t: &Timeline) -> Value {
    Value::Array(rows(t).iter().map(|(_, _, v)| to_json(v)).collect())
}

/// The position of column `name` (a timeline column or its JSON path).
pub(crate) fn column(name: &str) -> Option<usize> {
    table().position(&name.replace('.', "_"))
}
