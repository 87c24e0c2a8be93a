//! How `rshperf compare` treats a figure (`Compare`: its label, the direction that is
//! better, whom it is about, how it is pooled and tested, its place in the table)
//! and the compare rows the run table declares (`compare_rows`), with their keys
//! filled in. Read by `model::compare`, which owns each `Method`'s data (a side's
//! value and per-run batches) and the statistics.

use std::sync::OnceLock;

use super::run::table;
use super::{hist_names, At, QUANTILES};

/// The direction of a figure that is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Better {
    /// More is better (rates).
    Higher,
    /// Less is better (latencies, errors, CPU).
    Lower,
}

/// Whether a figure is about speed (verdicts `faster`/`slower`) or something else
/// (`better`/`worse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aspect {
    /// Rates and latencies.
    Speed,
    /// Errors, CPU.
    Cost,
}

/// Whom a figure is about: the verdict covers the server's figures only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum About {
    /// The server under test: in the verdict's family.
    Server,
    /// The client and its machine (connect times, lateness, CPU): shown, not in the
    /// verdict.
    Client,
}

/// How `rshperf compare` pools a figure over the runs of a group and tests it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// A count per second of the runs' durations: the count of this name in a run's
    /// 100-ms windows (`stats::windows::Window::count`) and, for documents without
    /// windows, the timeline column of this name (`second`).
    Rate(&'static str),
    /// The `{q}` quantile of the `{hist}` histogram, as the whole runs' histograms
    /// added together give it.
    Quantile,
    /// Errors per connection, %.
    ErrorsPerConnection,
    /// The client's CPU (user + system) per reply, µs.
    CpuPerReply,
}

/// A figure's row in `rshperf compare`'s table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Compare {
    /// The row's name when it is not the figure's (a derived quantity).
    pub(crate) row: Option<&'static str>,
    /// Its label (templated like the description).
    pub(crate) label: &'static str,
    /// Its unit when it is not the figure's.
    pub(crate) unit: Option<&'static str>,
    /// Which direction is an improvement.
    pub(crate) better: Better,
    /// Speed or cost.
    pub(crate) aspect: Aspect,
    /// Whom it is about (templated like the rank).
    pub(crate) about: fn(At) -> About,
    /// How it is pooled and tested.
    pub(crate) method: Method,
    /// Its position in the table (rows are sorted by it); None: this key of a
    /// templated figure is not compared.
    pub(crate) rank: fn(At) -> Option<u32>,
    /// Other figure names a regression gate may give for this row.
    pub(crate) synonyms: &'static [&'static str],
}

/// A row of `rshperf compare`: a figure's `Compare` with its keys filled in.
#[derive(Debug, Clone)]
pub(crate) struct CompareRow {
    /// The row's name (the figure's, or the compared quantity's).
    pub(crate) figure: String,
    /// Its label.
    pub(crate) label: String,
    /// Its unit.
    pub(crate) unit: &'static str,
    /// Which direction is an improvement.
    pub(crate) better: Better,
    /// Speed or cost.
    pub(crate) aspect: Aspect,
    /// Whom it is about.
    pub(crate) about: About,
    /// How it is pooled and tested.
    pub(crate) method: Method,
    /// The `{hist}` histogram (quantile rows).
    pub(crate) hist: &'static str,
    /// The `{q}` quantile (quantile rows).
    pub(crate) q: f64,
    /// Other figure names a regression gate may give for it.
    pub(crate) synonyms: &'static [&'static str],
}

/// The rows of `rshperf compare`, in its table's order (by `Compare::rank`).
pub(crate) fn compare_rows() -> &'static [CompareRow] {
    static ROWS: OnceLock<Vec<CompareRow>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let mut rows: Vec<(u32, CompareRow)> = table()
            .specs
            .iter()
            .filter_map(|s| {
                let c = s.figure.compare?;
                let rank = (c.rank)(s.at)?;
                let hist = hist_names().get(s.at.hist).copied().unwrap_or("");
                let row = CompareRow {
                    figure: c.row.map_or_else(|| s.name.clone(), str::to_string),
                    label: s.compare_label.clone().unwrap_or_default(),
                    unit: c.unit.unwrap_or(s.unit().symbol()),
                    better: c.better,
                    aspect: c.aspect,
                    about: (c.about)(s.at),
                    method: c.method,
                    hist,
                    q: QUANTILES[s.at.q].0,
                    synonyms: c.synonyms,
                };
                Some((rank, row))
            })
            .collect();
        rows.sort_by_key(|(rank, _)| *rank);
        rows.into_iter().map(|(_, r)| r).collect()
    })
}
