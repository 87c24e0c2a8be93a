//! `--csv=FILE`: one row per run appended to a file, for parameter sweeps.
//!
//! The columns (documented in `docs/json.md` §3) are the options that vary in sweeps
//! (server, port, URI, rate, connections, calls, threads) after the timestamp, then
//! every figure of the report schema's `Figures` (`model::report`) under its flattened
//! name (`connections.rate` → `connections_rate`), unrounded, then the findings: no
//! column list is kept here. RFC 4180 quoting. The header is written when the file is
//! new or empty, so a sweep script just repeats `--csv=sweep.csv`. Computes nothing
//! itself. Called by the runner and sweep after the report.

use std::io;
use std::path::Path;
use std::time::SystemTime;

use serde_json::Value;

use crate::model::config::Config;
use crate::model::report::{flat, to_value, Report};
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

/// Column names, in order: `CONFIG_COLUMNS`, the figures' names (those of `report`'s
/// `Figures`; every report has the same), `findings`.
pub(crate) fn columns(report: &Report) -> Vec<String> {
    let figures = flat(&to_value(&report.figures), "");
    CONFIG_COLUMNS
        .iter()
        .map(|c| c.to_string())
        .chain(figures.into_iter().map(|(name, _)| name))
        .chain(std::iter::once(FINDINGS.to_string()))
        .collect()
}

/// The header line, without the line end.
pub(crate) fn header(report: &Report) -> String {
    columns(report).join(",")
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

/// A float unrounded (shortest text that reads back exactly); empty when not finite.
fn num(x: f64) -> String {
    if x.is_finite() {
        x.to_string()
    } else {
        String::new()
    }
}

/// A schema value as a cell: integers as they are, floats unrounded (`num`), `null`
/// (a figure that is not finite) empty, strings quoted.
pub(crate) fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (None, Some(i), _) => i.to_string(),
            (None, None, Some(f)) => num(f),
            (None, None, None) => String::new(),
        },
        Value::String(s) => quote(s),
        other => quote(&other.to_string()),
    }
}

/// The row of one run, without the line end; `now` is its timestamp, `advice` the
/// run's findings (the last column: their keys joined with `;`).
pub(crate) fn row(cfg: &Config, report: &Report, advice: &[Advice], now: SystemTime) -> String {
    let mean = cfg.load.period.mean();
    let rate = if mean > 0.0 {
        num(1.0 / mean)
    } else {
        String::new()
    };
    let server = cfg.target.servers.as_deref().unwrap_or(&cfg.target.server);
    let mut fields = vec![
        rfc3339(now),
        quote(server),
        cfg.target.port.to_string(),
        quote(&cfg.target.uri),
        rate,
        cfg.load.num_conns.to_string(),
        cfg.load.num_calls.to_string(),
        cfg.load.threads.to_string(),
    ];
    debug_assert_eq!(fields.len(), CONFIG_COLUMNS.len());
    fields.extend(
        flat(&to_value(&report.figures), "")
            .iter()
            .map(|(_, v)| cell(v)),
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
    let head = format!("{}\n", header(report));
    let line = format!("{}\n", row(cfg, report, advice, SystemTime::now()));
    super::file::append_atomic(path, head.as_bytes(), line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
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

    fn cfg(extra: &[&str]) -> Config {
        let mut argv = vec!["rshperf", "--server", "127.0.0.1", "--num-conns", "4"];
        argv.extend_from_slice(extra);
        Config::from_argv(&argv).expect("valid test options")
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
    fn at<'a>(r: &Report, line: &'a str, name: &str) -> &'a str {
        let i = columns(r)
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name}"));
        line.split(',').nth(i).expect("cell")
    }

    #[test]
    fn every_column_is_in_the_documentation() {
        let doc = include_str!("../../docs/json.md");
        let r = report(&stats(), &RUN);
        let table = crate::output::doc_table(doc, "## 3. CSV rows (`--csv=FILE`)");
        let (findings, config) = table.split_last().expect("a table");
        let figures = crate::output::doc_table(doc, "### 2.8 Figure names");
        let documented: Vec<String> = config
            .iter()
            .chain(figures.iter().filter(|f| !f.starts_with("sessions_")))
            .chain(std::iter::once(findings))
            .cloned()
            .collect();
        assert_eq!(documented, columns(&r), "docs/json.md §3 and §2.8");
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
        let c = cfg(&["--rate", "8", "--uri", "/x,\"y\""]);
        let r = report(&s, &RUN);
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let line = row(&c, &r, &[], now);
        assert!(
            line.starts_with(
                "2023-11-14T22:13:20.000000Z,127.0.0.1,80,\"/x,\"\"y\"\"\",8,4,1,1,2,0,4,2,"
            ),
            "{line}"
        );
        assert!(header(&r).starts_with(
            "timestamp,server,port,uri,rate,num_conns,num_calls,threads,duration_s,\
             max_connect_burst,connections_total,connections_rate,"
        ));
        let plain = row(&cfg(&["--rate", "8"]), &r, &[], now);
        assert_eq!(plain.split(',').count(), columns(&r).len());
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
            ("net_io_kb_per_s", "2.1953125"),
            ("findings", ""),
        ] {
            assert_eq!(at(&r, &plain, name), want, "{name}");
        }
        // Sequential: no rate; a zero duration gives empty rate cells, not `inf`.
        let zero = RunInfo {
            duration: 0.0,
            ..RUN
        };
        let rz = report(&s, &zero);
        let line = row(&cfg(&[]), &rz, &[], now);
        let client = [Advice {
            finding: Finding::ClientBound,
            text: "client-bound: …".into(),
        }];
        let flagged = row(&cfg(&[]), &rz, &client, now);
        assert!(flagged.ends_with(",client_bound"), "{flagged}");
        assert_eq!(line.split(',').count(), columns(&rz).len());
        assert_eq!(at(&rz, &line, "rate"), "");
        assert_eq!(at(&rz, &line, "connections_rate"), "");
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
        append_row(&path, &cfg(&["--rate", "10"]), &r, &[]).expect("first run");
        append_row(&path, &cfg(&["--rate", "20"]), &r, &[]).expect("second run");
        let text = std::fs::read_to_string(&path).expect("read back");
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines.len(), 4, "{text:?}"); // header, 2 rows, "" after the last line end
        assert_eq!(lines[0], header(&r));
        assert_eq!(lines[1].split(',').nth(4), Some("10"));
        assert_eq!(lines[2].split(',').nth(4), Some("20"));
        assert_eq!(lines[3], "");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
