//! The per-second timeline as figures: `--timeline=FILE` (CSV, a row per second) and
//! the JSON document's `timeline` array.
//!
//! Owns the column set (`COLUMNS`, documented in `docs/json.md` §5) and the figures
//! of one second (`Row`: counts, response p50/p90/p99/max, lateness p99, open
//! connections). Computes nothing but quantiles of the compact per-second histograms
//! (`stats::timeline`). Called by the runner (CSV), `report::json` (array) and
//! `report::html` (charts).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::model::stats::timeline::{Interval, Timeline};
use crate::model::stats::{ERROR_KEYS, ERROR_KINDS};

/// CSV column names, in order.
pub const COLUMNS: [&str; 23] = [
    "second",
    "seconds",
    "offered",
    "connections",
    "replies",
    "status_1xx",
    "status_2xx",
    "status_3xx",
    "status_4xx",
    "status_5xx",
    "errors_total",
    "client_timo",
    "socket_timo",
    "connrefused",
    "connreset",
    "fd_unavail",
    "addrunavail",
    "ftab_full",
    "other",
    "response_p50_ms",
    "response_p90_ms",
    "response_p99_ms",
    "response_max_ms",
];

/// Columns after `COLUMNS` (kept apart so the array above stays readable).
pub const MORE_COLUMNS: [&str; 2] = ["lateness_p99_ms", "open"];

/// The figures of one second.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Index of the second (0 = the first second of the run).
    pub second: usize,
    /// Its length in seconds (1, less for the last one).
    pub seconds: f64,
    /// Arrivals scheduled in this second.
    pub offered: u64,
    /// Connections started.
    pub connections: u64,
    /// Replies per status class 1xx..=5xx.
    pub status: [u64; 5],
    /// Failures per kind.
    pub errors: [u64; ERROR_KINDS],
    /// Response times recorded.
    pub responses: u64,
    /// Response time p50, p90, p99 and max, ms (0 without responses).
    pub response_ms: [f64; 4],
    /// Arrival lateness p99, ms.
    pub lateness_p99_ms: f64,
    /// Connections open at the end of the second.
    pub open: u64,
}

impl Row {
    /// The figures of interval `i` of `t`.
    pub fn of(t: &Timeline, i: usize, iv: &Interval) -> Row {
        let ms = |us: u64| us as f64 / 1000.0;
        let q = |p: f64| ms(iv.response.quantile_us(p).min(iv.response_max_us));
        Row {
            second: i,
            seconds: t.seconds(i),
            offered: iv.offered,
            connections: iv.connections,
            status: iv.replies,
            errors: iv.errors,
            responses: iv.response.count(),
            response_ms: [q(0.5), q(0.9), q(0.99), ms(iv.response_max_us)],
            lateness_p99_ms: ms(iv.lateness.quantile_us(0.99)),
            open: iv.open,
        }
    }

    /// Replies of all classes.
    pub fn replies(&self) -> u64 {
        self.status.iter().sum()
    }

    /// Sum of the error counters.
    pub fn errors_total(&self) -> u64 {
        self.errors.iter().sum()
    }
}

/// Every second's figures, in order.
pub fn rows(t: &Timeline) -> Vec<Row> {
    t.intervals
        .iter()
        .enumerate()
        .map(|(i, iv)| Row::of(t, i, iv))
        .collect()
}

/// The JSON `timeline` array: one object per second.
pub fn to_json(t: &Timeline) -> Value {
    rows(t)
        .iter()
        .map(|r| {
            let mut errors = Map::new();
            errors.insert("total".into(), json!(r.errors_total()));
            for (k, n) in ERROR_KEYS.iter().zip(r.errors) {
                errors.insert((*k).into(), json!(n));
            }
            let [c1, c2, c3, c4, c5] = r.status;
            let [p50, p90, p99, max] = r.response_ms;
            json!({
                "second": r.second,
                "seconds": r.seconds,
                "offered": r.offered,
                "connections": r.connections,
                "replies": r.replies(),
                "status": { "1xx": c1, "2xx": c2, "3xx": c3, "4xx": c4, "5xx": c5 },
                "errors": Value::Object(errors),
                "response_ms": { "count": r.responses, "p50": p50, "p90": p90, "p99": p99, "max": max },
                "lateness_p99_ms": r.lateness_p99_ms,
                "open": r.open,
            })
        })
        .collect()
}

/// The CSV text: header, then one line per second (LF line ends).
pub fn csv(t: &Timeline) -> String {
    let mut text = COLUMNS.join(",");
    for c in MORE_COLUMNS {
        text.push(',');
        text.push_str(c);
    }
    text.push('\n');
    for r in rows(t) {
        let mut cells = vec![
            r.second.to_string(),
            r.seconds.to_string(),
            r.offered.to_string(),
            r.connections.to_string(),
            r.replies().to_string(),
        ];
        cells.extend(r.status.iter().map(u64::to_string));
        cells.push(r.errors_total().to_string());
        cells.extend(r.errors.iter().map(u64::to_string));
        cells.extend(r.response_ms.iter().map(f64::to_string));
        cells.push(r.lateness_p99_ms.to_string());
        cells.push(r.open.to_string());
        debug_assert_eq!(cells.len(), COLUMNS.len() + MORE_COLUMNS.len());
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    text
}

/// `--timeline=FILE`: writes the CSV (the file is created or truncated).
pub fn write_csv(path: &Path, t: &Timeline) -> io::Result<()> {
    let mut out = BufWriter::new(File::create(path)?);
    out.write_all(csv(t).as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::timeline::Totals;

    fn sample() -> Timeline {
        let mut t = Timeline::default();
        t.offered(0);
        t.offered(0);
        t.on_response(1000);
        t.on_response(3000);
        t.on_lateness(40);
        t.roll(
            Totals {
                connections: 2,
                replies: [0, 2, 0, 0, 0],
                errors: [0; ERROR_KINDS],
            },
            1,
            1.0,
        );
        t.offered(1);
        t.on_lateness(2000);
        t.roll(
            Totals {
                connections: 3,
                replies: [0, 2, 0, 0, 0],
                errors: [0, 0, 1, 0, 0, 0, 0, 0],
            },
            0,
            1.25,
        );
        t
    }

    #[test]
    fn csv_has_a_header_and_a_row_per_second() {
        let text = csv(&sample());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "second,seconds,offered,connections,replies,status_1xx,status_2xx,status_3xx,\
             status_4xx,status_5xx,errors_total,client_timo,socket_timo,connrefused,connreset,\
             fd_unavail,addrunavail,ftab_full,other,response_p50_ms,response_p90_ms,\
             response_p99_ms,response_max_ms,lateness_p99_ms,open"
        );
        assert_eq!(
            lines[1],
            "0,1,2,2,2,0,2,0,0,0,0,0,0,0,0,0,0,0,0,1.023,3,3,3,0.041,1"
        );
        assert_eq!(
            lines[2],
            "1,0.25,1,1,0,0,0,0,0,0,1,0,0,1,0,0,0,0,0,0,0,0,0,2.047,0"
        );
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn json_has_an_object_per_second() {
        let v = to_json(&sample());
        assert_eq!(v.as_array().map(Vec::len), Some(2));
        assert_eq!(v[0]["replies"], 2);
        assert_eq!(v[0]["response_ms"]["p99"], 3.0);
        assert_eq!(v[1]["errors"]["connrefused"], 1);
        assert_eq!(v[1]["errors"]["total"], 1);
        assert_eq!(v[1]["seconds"], 0.25);
    }

    #[test]
    fn every_column_is_in_the_documentation() {
        let doc = include_str!("../../docs/json.md");
        for c in COLUMNS.iter().chain(MORE_COLUMNS.iter()) {
            assert!(doc.contains(&format!("`{c}`")), "{c} not in docs/json.md");
        }
    }
}
