//! `--csv=FILE`: one row per run appended to a file, for parameter sweeps.
//!
//! The columns (documented in `docs/json.md` §3) are the options that vary in sweeps
//! (server, port, URI, rate, connections, calls, threads) after the timestamp, then
//! every figure the table of figures marks as a CSV column (`model::figure::run`)
//! under its name (`connections.rate` → `connections_rate`), then the findings: no
//! column list is kept here. Numbers are rounded to the figure's resolution, its CSV
//! decimals in the table (1 µs for times, 0.1 for rates and percentages, 0.001 for
//! Mbit/s and ratios of counts), then written as the shortest text that reads back as
//! the rounded value (no float noise such as `0.0048070000000000005`). The timeline
//! CSV shares `cell`. RFC 4180 quoting. The header is written when the file is new or
//! empty, so a sweep script just repeats `--csv=sweep.csv`. Computes nothing itself.
//! Called by the runner and sweep after the report.

use std::io;
use std::path::Path;
use std::time::SystemTime;

use crate::model::config::Config;
use crate::model::figure::run::table;
use crate::model::figure::Val;
use crate::model::report::Report;
use crate::output::advice::{self, Advice};

use super::json::rfc3339;

/// The columns before the figures: the timestamp and the options of the run.
const CONFIG_COLUMNS: [&str; 8] = [
    "timestamp",
    "server",
    "port",
    "uri",
    "rate",
    "num_conns",
    "num_calls",
    "threads",
];

/// The column after the figures.
const FINDINGS: &str = "findings";

/// Column names, in order: `CONFIG_COLUMNS`, the figures' names, `findings`.
pub(crate) fn columns() -> Vec<String> {
    let figures = table().specs.iter().filter(|s| s.figure.csv);
    CONFIG_COLUMNS
        .iter()
        .map(|c| c.to_string())
        .chain(figures.map(|s| s.name.clone()))
        .chain(std::iter::once(FINDINGS.to_string()))
        .collect()
}

/// The header line, without the line end.
pub(crate) fn header() -> String {
    columns().join(",")
}

/// A field quoted as RFC 4180 requires: in double quotes (doubled inside) when it holds
/// a comma, a double quote, CR or LF; as is otherwise.
pub(crate) fn quote(field: &str) -> String {
    if field.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// `x` rounded to `decimals` places, as the shortest text that reads back as the
/// rounded value (`0.005`, `200`, `4.312302`); empty when not finite.
pub(crate) fn rounded(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return String::new();
    }
    // The decimal rounding is exact (the fixed-point text); reading it back gives the
    // double nearest to it, whose `Display` is the shortest text that reads back.
    let r: f64 = format!("{x:.decimals$}").parse().unwrap_or(x);
    if r == 0.0 {
        "0".into()
    } else {
        r.to_string()
    }
}

/// A figure's value as a cell: integers as they are, reals rounded to `decimals`
/// (`rounded`; empty when not finite), names quoted.
pub(crate) fn cell(v: &Val, decimals: usize) -> String {
    match v {
        Val::Int(n) => n.to_string(),
        Val::Real(x) => rounded(*x, decimals),
        Val::Flag(b) => b.to_string(),
        Val::Text(t) => quote(t),
        Val::Json(j) => quote(&j.to_string()),
    }
}

/// The row of one run, without the line end; `now` is its timestamp, `advice` the
/// run's findings (the last column: their keys joined with `;`).
pub(crate) fn row(cfg: &Config, report: &Report, advice: &[Advice], now: SystemTime) -> String {
    let mean = cfg.load().period().mean();
    // The option's value, to a millionth (1 / period is not always exact).
    let rate = if mean > 0.0 {
        rounded(1.0 / mean, 6)
    } else {
        String::new()
    };
    let server = cfg.target().servers().unwrap_or(cfg.target().server());
    let mut fields = vec![
        rfc3339(now),
        quote(server),
        cfg.target().port().to_string(),
        quote(cfg.target().uri()),
        rate,
        cfg.num_conns_bound()
            .map(|n| n.to_string())
            .unwrap_or_default(),
        cfg.num_calls_bound()
            .map(|n| n.to_string())
            .unwrap_or_default(),
        cfg.load().threads().to_string(),
    ];
    debug_assert_eq!(fields.len(), CONFIG_COLUMNS.len());
    fields.extend(
        report
            .figures()
            .filter(|(s, _)| s.figure.csv)
            .map(|(s, v)| cell(v, s.decimals())),
    );
    fields.push(advice::keys(advice));
    fields.join(",")
}

/// Appends this run's row to `path` (created if missing), preceded by the header when
/// the file is new or empty. Lines end in LF (friendlier to shell tools than RFC 4180's
/// CRLF, which readers accept either way). The file is replaced atomically
/// (`file::append_atomic`): a failure leaves the earlier rows as they were.
pub(crate) fn append_row(
    path: &Path,
    cfg: &Config,
    report: &Report,
    advice: &[Advice],
) -> io::Result<()> {
    let head = format!("{}\n", header());
    let line = format!("{}\n", row(cfg, report, advice, SystemTime::now()));
    super::file::append_atomic(path, head.as_bytes(), line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::figure::second;
    use crate::model::report::Facts;
    use crate::model::run::RunInfo;
    use crate::model::stats::{ErrorKind, Stats};
    use crate::output::advice::Finding;
    use std::time::{Duration, UNIX_EPOCH};

    const RUN: RunInfo = RunInfo {
        duration: 2.0,
        cpu_user: 0.5,
        cpu_system: 0.25,
    };

    /// `--server 127.0.0.1 --num-conns 4`, and `--rate` if given, and `--uri`.
    fn cfg(rate: Option<f64>, uri: Option<&str>) -> Config {
        Config::local(|b| {
            b.num_conns(4);
            if let Some(r) = rate {
                b.rate(r);
            }
            if let Some(u) = uri {
                b.uri(u);
            }
        })
    }

    fn stats() -> Stats {
        let mut s = Stats::new();
        for _ in 0..4 {
            s.on_connecting();
            s.on_connected(Duration::from_micros(250));
            s.on_request_sent(100);
            s.on_response(Duration::from_micros(1_000));
            s.on_reply(200, 200, 824, 0, Duration::from_micros(500));
            s.on_lifetime(Duration::from_micros(2_000));
        }
        s.on_error(ErrorKind::ConnRefused);
        s
    }

    fn report(s: &Stats, run: &RunInfo) -> Report {
        Report::new(s, run, &Facts::default())
    }

    /// The cell of column `name` in `line`.
    fn at<'a>(line: &'a str, name: &str) -> &'a str {
        let i = columns()
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name}"));
        line.split(',').nth(i).expect("cell")
    }

    #[test]
    fn every_column_is_in_the_documentation() {
        let doc = include_str!("../../docs/json.md");
        let table = crate::output::doc_table(doc, "## 3. CSV rows (`--csv=FILE`)");
        let (findings, config) = table.split_last().expect("a table");
        let figures = crate::output::doc_table(doc, "### 2.8 Figure names");
        let documented: Vec<String> = config
            .iter()
            .chain(figures.iter().filter(|f| {
                // Not every run has them; the two after `connections_replies_per_conn`
                // came after the columns that follow it (columns are only appended).
                !f.starts_with("sessions_")
                    && !f.starts_with("validity_")
                    && !f.starts_with("call_rate_")
                    && !f.starts_with("stream_")
                    && !["connections_failed", "connections_unopened"].contains(&f.as_str())
            }))
            .chain(std::iter::once(findings))
            .cloned()
            .collect();
        assert_eq!(documented, columns(), "docs/json.md §3 and §2.8");
    }

    #[test]
    fn quoting_follows_rfc_4180() {
        assert_eq!(quote("/index.html"), "/index.html");
        assert_eq!(quote("/a,b"), "\"/a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quote("a\nb"), "\"a\nb\"");
    }

    #[test]
    fn row_has_every_column_in_order() {
        let s = stats();
        let c = cfg(Some(8.0), Some("/x,\"y\""));
        let r = report(&s, &RUN);
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let line = row(&c, &r, &[], now);
        assert!(
            line.starts_with(
                "2023-11-14T22:13:20.000000Z,127.0.0.1,80,\"/x,\"\"y\"\"\",8,4,1,1,2,0,4,2,"
            ),
            "{line}"
        );
        assert!(header().starts_with(
            "timestamp,server,port,uri,rate,num_conns,num_calls,threads,duration_s,\
             max_connect_burst,connections_total,connections_rate,"
        ));
        let plain = row(&cfg(Some(8.0), None), &r, &[], now);
        assert_eq!(plain.split(',').count(), columns().len());
        for (name, want) in [
            ("connections_total", "4"),
            ("connections_rate", "2"),
            ("requests_rate", "2"),
            ("reply_rate_avg", "0"),
            ("connection_time_ms_connect", "0.25"),
            ("replies_response_ms", "1"),
            ("replies_transfer_ms", "0.5"),
            ("connection_time_ms_avg", "2"),
            ("percentiles_response_p50", "1"),
            ("percentiles_response_p99_9", "1"),
            ("status_2xx", "4"),
            ("errors_total", "1"),
            ("errors_connrefused", "1"),
            ("errors_client_timo", "0"),
            ("cpu_total_pct", "37.5"),
            ("net_io_kb_per_s", "2.2"),
            ("findings", ""),
        ] {
            assert_eq!(at(&plain, name), want, "{name}");
        }
        // Sequential: no rate; a zero duration gives empty rate cells, not `inf`.
        let zero = RunInfo {
            duration: 0.0,
            ..RUN
        };
        let rz = report(&s, &zero);
        let line = row(&cfg(None, None), &rz, &[], now);
        let client = [Advice {
            finding: Finding::ClientBound,
            text: "client-bound: …".into(),
        }];
        let flagged = row(&cfg(None, None), &rz, &client, now);
        assert!(flagged.ends_with(",client_bound"), "{flagged}");
        assert_eq!(line.split(',').count(), columns().len());
        assert_eq!(at(&line, "rate"), "");
        assert_eq!(at(&line, "connections_rate"), "");
    }

    #[test]
    fn header_once_then_one_row_per_run() {
        let dir = std::env::temp_dir().join(format!("rshperf-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("sweep.csv");
        let _ = std::fs::remove_file(&path);
        // An empty existing file also gets the header.
        std::fs::write(&path, "").expect("create empty");
        let s = stats();
        let r = report(&s, &RUN);
        append_row(&path, &cfg(Some(10.0), None), &r, &[]).expect("first run");
        append_row(&path, &cfg(Some(20.0), None), &r, &[]).expect("second run");
        let text = std::fs::read_to_string(&path).expect("read back");
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines.len(), 4, "{text:?}"); // header, 2 rows, "" after the last line end
        assert_eq!(lines[0], header());
        assert_eq!(lines[1].split(',').nth(4), Some("10"));
        assert_eq!(lines[2].split(',').nth(4), Some("20"));
        assert_eq!(lines[3], "");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn numbers_are_rounded_to_their_resolution_without_float_noise() {
        // The decimals of a run's figure or a timeline column.
        let decimals = |name: &str| {
            let run = table().get(name).map(|s| s.decimals());
            run.or_else(|| second::table().get(name).map(|s| s.decimals()))
                .unwrap_or_else(|| panic!("no figure {name}"))
        };
        let at = |name: &str, x: f64| cell(&Val::Real(x), decimals(name));
        // Times to the µs (ms figures: 3 decimals; s figures: 6).
        assert_eq!(at("replies_response_ms", 0.0048070000000000005), "0.005");
        assert_eq!(at("percentiles_response_p99", 12.3456789), "12.346");
        assert_eq!(at("connection_time_ms_avg", 2.0), "2");
        assert_eq!(at("duration_s", 4.3123019320000004), "4.312302");
        assert_eq!(at("cpu_user_s", 0.1 + 0.2), "0.3");
        // Rates and percentages to 0.1.
        assert_eq!(at("connections_rate", 199.96), "200");
        assert_eq!(at("requests_rate", 0.30000000000000004), "0.3");
        assert_eq!(at("reply_rate_stddev", 12.25), "12.2");
        assert_eq!(at("net_io_kb_per_s", 2.1953125), "2.2");
        assert_eq!(at("cpu_total_pct", 37.55), "37.5");
        // Mbit/s and ratios of counts to 0.001.
        assert_eq!(at("net_io_mbps", 0.017984), "0.018");
        assert_eq!(at("connections_replies_per_conn", 1.0 / 3.0), "0.333");
        // The timeline's columns follow the same rules.
        assert_eq!(at("seconds", 0.4302000000000001), "0.4302");
        assert_eq!(at("response_ms_p99", 1.0625000000000002), "1.063");
        // Zero has no sign; what rounds to zero is 0; not finite is empty; large
        // values keep their digits; integers stay integers.
        assert_eq!(at("replies_transfer_ms", -0.0), "0");
        assert_eq!(at("replies_transfer_ms", 0.0000004), "0");
        assert_eq!(rounded(f64::NAN, 3), "");
        assert_eq!(rounded(f64::INFINITY, 1), "");
        assert_eq!(at("requests_rate", 123456789.06), "123456789.1");
        assert_eq!(cell(&Val::Int(42), decimals("connections_total")), "42");
        assert_eq!(rounded(-1.25, 1), "-1.2");
    }
}
