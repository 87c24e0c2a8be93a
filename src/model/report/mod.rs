//! `Report`: every derived figure of a run, evaluated from the table of figures.
//!
//! Owns the derived part of the `--json` document (docs/json.md §2.1): the values of
//! every figure of `model::figure::run` (and, through its `servers` and `timeline`
//! members, of the `server` and `second` tables), in table order, and their JSON.
//! A figure's name is its JSON path flattened with `_` (`connections.rate` →
//! `connections_rate`): the CSV column, the `--fail-on` metric, the compare row; the
//! table says where each appears. Also keeps the typed blocks the text outputs print
//! (`model::blocks`: sessions, call rate, HTTP/2, HTTP/3).
//!
//! Built from `Stats`, `RunInfo` and the run's `Facts` (the call-rate target and the
//! server names, which a document carries in its `config` and `run` members), so
//! `rshperf merge` derives the figures of merged documents exactly as a run does.
//! Computes through `Summary` (the classic report's arithmetic), `blocks` and the
//! table's value functions; formats no text. The tests of the table against the
//! report are in `tests.rs`.

use serde_json::Value;

use crate::model::figure::run::{self, Run, RunScope};
use crate::model::figure::{object, Spec, Val};
use crate::model::run::RunInfo;
use crate::model::stats::Stats;
use crate::model::summary::Summary;

pub(crate) use crate::model::blocks::{CallRate, Facts, Http2, Http3, Sessions, Spread, Stream};

/// Every derived figure of a run: the document's members from `duration_s` to
/// `timeline` (docs/json.md §2.1).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Report {
    /// The value of every figure of the run table, in table order, with whether it is
    /// in the document (optional members only when they apply).
    values: Vec<(Val, bool)>,
    /// Session figures (the session block).
    pub(crate) sessions: Sessions,
    /// Call-rate figures (`--call-rate` runs).
    pub(crate) call_rate: Option<CallRate>,
    /// HTTP/2 figures (`--http-version 2` runs).
    pub(crate) http2: Option<Http2>,
    /// HTTP/3 figures (`--http-version 3` runs).
    pub(crate) http3: Option<Http3>,
    /// Stream figures (`--stream` runs).
    pub(crate) stream: Option<Stream>,
}

impl Report {
    /// Every figure of `stats` over `info`, with the configuration `facts`.
    pub(crate) fn new(stats: &Stats, info: &RunInfo, facts: &Facts) -> Report {
        let summary = Summary::new(stats, info);
        let d = info.duration;
        let sessions = Sessions::of(stats, d);
        let call_rate = CallRate::of(stats, d, facts);
        let http2 = Http2::of(&stats.http2);
        let http3 = Http3::of(&stats.http3);
        let stream = Stream::of(stats, d);
        let values = run::evaluate(&Run {
            stats,
            info,
            facts,
            s: &summary,
            sessions: &sessions,
            call_rate: &call_rate,
            http2: &http2,
            http3: &http3,
            stream: &stream,
        });
        Report {
            values,
            sessions,
            call_rate: stats.pool.is_used().then_some(call_rate),
            http2: (stats.http2.connections > 0).then_some(http2),
            http3: (stats.http3.connections > 0).then_some(http3),
            stream: stats.stream.is_used().then_some(stream),
        }
    }

    /// Every figure with its value, in table order (optional members included).
    pub(crate) fn figures(&self) -> impl Iterator<Item = (&'static Spec<RunScope>, &Val)> {
        run::table()
            .specs
            .iter()
            .zip(self.values.iter().map(|(v, _)| v))
    }

    /// The figures `--fail-on` can name, as (name, value): every figure every run has,
    /// then the `sessions_` figures (present even when no session ended). Non-finite
    /// figures are None.
    pub(crate) fn metrics(&self) -> Vec<(String, Option<f64>)> {
        self.figures()
            .filter(|(s, _)| s.figure.fail_on)
            .map(|(s, v)| (s.name.clone(), v.number()))
            .collect()
    }

    /// The derived members of the document, in document order; figures that are not
    /// finite are `null`.
    pub(crate) fn to_json(&self) -> Value {
        object(
            run::table()
                .specs
                .iter()
                .zip(&self.values)
                .filter(|(_, (_, shown))| *shown)
                .map(|(s, (v, _))| (s.path.as_str(), v.json())),
        )
    }
}

#[cfg(test)]
mod tests;
