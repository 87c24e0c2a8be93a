//! `--csv=FILE`: one row per run appended to a file, for parameter sweeps.
//!
//! Owns the column set (`COLUMNS`, documented in `docs/json.md`): the options that vary
//! in sweeps (server, port, URI, rate, connections, calls, threads) followed by the main
//! figures, unrounded, and RFC 4180 quoting. The header is written when the file is new
//! or empty, so a sweep script just repeats `--csv=sweep.csv`. Computes nothing itself
//! (see `summary` and `percentiles`). Called by the runner after the report.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;
use std::time::SystemTime;

use crate::model::config::Config;
use crate::model::stats::Stats;
use crate::output::advice::{self, Advice};

use super::json::rfc3339;
use super::summary::Summary;
use crate::model::stats::quantile_ms;

/// Column names, in order.
pub const COLUMNS: [&str; 41] = [
    "timestamp",
    "server",
    "port",
    "uri",
    "rate",
    "num_conns",
    "num_calls",
    "threads",
    "duration_s",
    "connections",
    "requests",
    "replies",
    "conn_rate",
    "req_rate",
    "reply_rate_avg",
    "connect_ms",
    "response_ms",
    "transfer_ms",
    "lifetime_avg_ms",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "p99_9_ms",
    "max_ms",
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
    "cpu_total_pct",
    "net_io_kbs",
    "findings",
];

/// The header line, without the line end.
pub fn header() -> String {
    COLUMNS.join(",")
}

/// A field quoted as RFC 4180 requires: in double quotes (doubled inside) when it holds
/// a comma, a double quote, CR or LF; as is otherwise.
pub fn quote(field: &str) -> String {
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

/// The row of one run, without the line end; `now` is its timestamp, `advice` the
/// run's findings (the last column: their keys joined with `;`).
pub fn row(
    cfg: &Config,
    summary: &Summary<'_>,
    stats: &Stats,
    advice: &[Advice],
    now: SystemTime,
) -> String {
    let s = summary;
    let mean = cfg.period.mean();
    let rate = if mean > 0.0 {
        num(1.0 / mean)
    } else {
        String::new()
    };
    let response = &stats.hist.response;
    let server = cfg.servers.as_deref().unwrap_or(&cfg.server);
    let mut fields = vec![
        rfc3339(now),
        quote(server),
        cfg.port.to_string(),
        quote(&cfg.uri),
        rate,
        cfg.num_conns.to_string(),
        cfg.num_calls.to_string(),
        cfg.threads.to_string(),
        num(s.duration),
        s.connections.to_string(),
        s.requests.to_string(),
        s.replies.to_string(),
        num(s.conn_rate),
        num(s.request_rate),
        num(s.reply_rate.avg),
        num(s.connect_avg_ms),
        num(s.response_avg_ms),
        num(s.transfer_avg_ms),
        num(s.lifetime_avg_ms),
        num(quantile_ms(response, 0.5)),
        num(quantile_ms(response, 0.9)),
        num(quantile_ms(response, 0.99)),
        num(quantile_ms(response, 0.999)),
        num(quantile_ms(response, 1.0)),
    ];
    fields.extend(s.reply_status.iter().map(u64::to_string));
    fields.push(s.errors_total.to_string());
    fields.extend(s.errors.iter().map(u64::to_string));
    fields.push(num(s.cpu_total_pct));
    fields.push(num(s.net_io_kb_per_s));
    fields.push(advice::keys(advice));
    debug_assert_eq!(fields.len(), COLUMNS.len());
    fields.join(",")
}

/// Appends this run's row to `path` (created if missing), preceded by the header when
/// the file is new or empty. Lines end in LF (friendlier to shell tools than RFC 4180's
/// CRLF, which readers accept either way). Header and row go out in one write.
pub fn append_row(
    path: &Path,
    cfg: &Config,
    summary: &Summary<'_>,
    stats: &Stats,
    advice: &[Advice],
) -> io::Result<()> {
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    let mut text = String::new();
    if file.metadata()?.len() == 0 {
        text.push_str(&header());
        text.push('\n');
    }
    text.push_str(&row(cfg, summary, stats, advice, SystemTime::now()));
    text.push('\n');
    file.write_all(text.as_bytes())?;
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::run::RunInfo;
    use crate::model::stats::ErrorKind;
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

    #[test]
    fn every_column_is_in_the_documentation() {
        let doc = include_str!("../../docs/json.md");
        for c in COLUMNS {
            assert!(doc.contains(&format!("`{c}`")), "{c} not in docs/json.md");
        }
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
        let summary = Summary::new(&s, &RUN);
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let line = row(&c, &summary, &s, &[], now);
        assert_eq!(
            line,
            "2023-11-14T22:13:20.000000Z,127.0.0.1,80,\"/x,\"\"y\"\"\",8,4,1,1,2,4,4,4,\
             2,2,0,0.25,1,0.5,2,1,1,1,1,1,0,4,0,0,0,1,0,0,1,0,0,0,0,0,37.5,2.1953125,"
        );
        assert_eq!(header().split(',').count(), COLUMNS.len());
        assert!(header().starts_with("timestamp,server,port,uri,rate,num_conns,num_calls,"));
        // Sequential: no rate; a zero duration gives empty rate cells, not `inf`.
        let zero = RunInfo {
            duration: 0.0,
            ..RUN
        };
        let summary = Summary::new(&s, &zero);
        let line = row(&cfg(&[]), &summary, &s, &[], now);
        let client = [Advice {
            finding: Finding::ClientBound,
            text: "client-bound: …".into(),
        }];
        let flagged = row(&cfg(&[]), &summary, &s, &client, now);
        assert!(flagged.ends_with(",client_bound"), "{flagged}");
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), COLUMNS.len());
        assert_eq!(cells[4], "");
        assert_eq!(cells[12], "");
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
        let summary = Summary::new(&s, &RUN);
        append_row(&path, &cfg(&["--rate", "10"]), &summary, &s, &[]).expect("first run");
        append_row(&path, &cfg(&["--rate", "20"]), &summary, &s, &[]).expect("second run");
        let text = std::fs::read_to_string(&path).expect("read back");
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines.len(), 4, "{text:?}"); // header, 2 rows, "" after the last line end
        assert_eq!(lines[0], header());
        assert_eq!(lines[1].split(',').nth(4), Some("10"));
        assert_eq!(lines[2].split(',').nth(4), Some("20"));
        assert_eq!(lines[3], "");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
