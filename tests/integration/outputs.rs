//! The outputs beyond httperf end to end: percentile lines, `--json`,
//! `--csv`, `--fail-on`, the progress line on stderr, and the manual page.
//! (`rshperf serve` and `rshperf demo` are covered by `serve.rs`.)

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use base64::Engine as _;
use serde_json::Value;

use crate::support::server::{closed_port, Behavior, Server};
use crate::support::{self, masked, numbers, Report};

// ---- helpers ----

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "rshperf-outputs-{tag}-{}-{}-{nanos}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// `--server 127.0.0.1 --port PORT` followed by `args`.
fn target(port: u16, args: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = ["--server", "127.0.0.1", "--port", &port.to_string()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.extend(args.iter().map(|s| s.to_string()));
    all
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs rshperf with `args` (stdin closed) and returns its output.
fn rshperf(args: &[String]) -> Output {
    support::bin()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run rshperf")
}

/// Asserts exit status `code` and returns the output as a report.
fn expect_code(out: &Output, code: i32, args: &[String]) -> Report {
    let r = Report {
        text: text(&out.stdout),
        stderr: text(&out.stderr),
    };
    assert_eq!(
        out.status.code(),
        Some(code),
        "rshperf {args:?}\nstdout:\n{}\nstderr:\n{}",
        r.text,
        r.stderr
    );
    r
}

fn get<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(v, |v, key| {
        v.get(key)
            .unwrap_or_else(|| panic!("no member {path} ({key}) in the JSON document"))
    })
}

fn int(v: &Value, path: &str) -> u64 {
    get(v, path)
        .as_u64()
        .unwrap_or_else(|| panic!("{path} is not an unsigned integer: {}", get(v, path)))
}

fn float(v: &Value, path: &str) -> f64 {
    get(v, path)
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number: {}", get(v, path)))
}

const HISTOGRAMS: [&str; 5] = ["connect", "response", "transfer", "lifetime", "lateness"];
const ERRORS: [&str; 8] = [
    "client-timo",
    "socket-timo",
    "connrefused",
    "connreset",
    "fd-unavail",
    "addrunavail",
    "ftab-full",
    "other",
];

/// Every counter of the text report equals its JSON member.
fn assert_json_matches_report(doc: &Value, r: &Report) {
    assert_eq!(get(doc, "format"), "rshperf-result");
    assert_eq!(int(doc, "version"), 2);
    assert_eq!(
        get(doc, "config.echo").as_str(),
        r.text.lines().next(),
        "the echo line"
    );
    let (conns, reqs, replies) = r.totals();
    assert_eq!(int(doc, "connections.total"), conns);
    assert_eq!(int(doc, "requests.total"), reqs);
    assert_eq!(int(doc, "replies.total"), replies);
    let status = r.status();
    for (i, class) in ["1xx", "2xx", "3xx", "4xx", "5xx"].iter().enumerate() {
        assert_eq!(int(doc, &format!("status.{class}")), status[i], "{class}");
        let raw = get(doc, "raw.replies_by_class")[i + 1].as_u64();
        assert_eq!(raw, Some(status[i]), "raw.replies_by_class[{}]", i + 1);
    }
    assert_eq!(int(doc, "errors.total"), r.error("total"));
    for name in ERRORS {
        let key = format!("errors.{}", name.replace('-', "_"));
        assert_eq!(int(doc, &key), r.error(name), "{name}");
    }
    assert_eq!(
        int(doc, "requests.size_b") as f64,
        r.nums("Request size [B]:")[0]
    );
    let sizes = r.nums("Reply size [B]:");
    for (i, part) in ["header", "content", "footer", "total"].iter().enumerate() {
        assert_eq!(
            int(doc, &format!("reply_size.{part}")) as f64,
            sizes[i],
            "reply size {part}"
        );
    }
    assert_eq!(
        int(doc, "max_connect_burst") as f64,
        r.nums("Maximum connect burst length:")[0]
    );
    let total = r.nums("Total:");
    assert_eq!(
        format!("{:.3}", float(doc, "duration_s")),
        format!("{:.3}", total[3])
    );
    let rate = r.nums("Connection rate:");
    assert_eq!(
        format!("{:.1}", float(doc, "connections.rate")),
        format!("{:.1}", rate[0])
    );
    assert_eq!(int(doc, "connections.max_concurrent") as f64, rate[2]);
    assert_eq!(
        float(doc, "connections.replies_per_conn"),
        r.nums("Connection length [replies/conn]:")[0]
    );
    assert_eq!(
        int(doc, "reply_rate.samples") as f64,
        r.nums("Reply rate [replies/s]:")[4]
    );
}

/// The percentile lines at the end of `r`: for each histogram, the six values.
fn percentile_lines(r: &Report) -> Vec<Vec<String>> {
    let lines: Vec<&str> = r.text.lines().collect();
    // After the percentiles, `-v` may add rshperf's own lines (`Pacing:`, `HTTP/2:`).
    let n = lines
        .iter()
        .rposition(|l| l.starts_with("Percentiles "))
        .map_or(0, |i| i + 1);
    assert!(n > 7, "{}", r.text);
    assert!(
        lines[n - 6].starts_with("Errors: fd-unavail"),
        "the percentiles follow the classic report, with no blank line (httperf's layout):\n{}",
        r.text
    );
    HISTOGRAMS
        .iter()
        .zip(&lines[n - 5..n])
        .map(|(name, line)| {
            let prefix = format!("Percentiles {name} [ms]:");
            let rest = line
                .strip_prefix(&prefix)
                .unwrap_or_else(|| panic!("expected {prefix} …, got {line:?}"));
            let words: Vec<&str> = rest.split_whitespace().collect();
            let labels: Vec<&str> = words.iter().step_by(2).copied().collect();
            assert_eq!(
                labels,
                ["p50", "p90", "p99", "p99.9", "p99.99", "max"],
                "{line}"
            );
            let values: Vec<String> = words
                .iter()
                .skip(1)
                .step_by(2)
                .map(|s| s.to_string())
                .collect();
            for v in &values {
                let (int_part, frac) = v.split_once('.').unwrap_or_else(|| panic!("{line}"));
                assert!(
                    frac.len() == 3
                        && (int_part.chars().chain(frac.chars())).all(|c| c.is_ascii_digit()),
                    "{v} in {line}"
                );
            }
            values
        })
        .collect()
}

// ---- --percentiles, --json=FILE, --csv=FILE ----

/// The leaves of `v` below `prefix` as (path joined with `_`, value), arrays left
/// out, in document order.
fn flatten(v: &Value, prefix: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}_{k}")
                };
                flatten(child, &name, out);
            }
        }
        Value::Array(_) => {}
        leaf => out.push((prefix.to_string(), leaf.clone())),
    }
}

#[test]
fn percentiles_json_and_csv_of_one_run_agree_with_the_report() {
    let s = Server::start(Behavior::Fixed(1024));
    let dir = TempDir::new("pjc");
    let (json, csv) = (dir.path("r.json"), dir.path("r.csv"));
    let json_arg = format!("--json={}", json.display());
    let csv_arg = format!("--csv={}", csv.display());
    let args = target(
        s.port(),
        &[
            "--num-conns",
            "200",
            "--num-calls",
            "2",
            "--rate",
            "1000",
            "--percentiles",
            &json_arg,
            &csv_arg,
        ],
    );
    let r = expect_code(&rshperf(&args), 0, &args);
    assert_eq!(support::without_short_run_note(&r.stderr), "");
    assert!(
        r.text
            .starts_with("rshperf --client=0/1 --server=127.0.0.1 "),
        "{}",
        r.text
    );
    assert_eq!(r.totals(), (200, 400, 400));
    assert_eq!(s.requests(), 400);

    // The percentile lines close the report.
    let percentiles = percentile_lines(&r);

    // The JSON document: same counters, same percentiles, decodable histograms.
    let raw = fs::read_to_string(&json).expect("read the --json file");
    assert!(raw.starts_with("{\n") && raw.ends_with("}\n"), "{raw}");
    let doc: Value = serde_json::from_str(&raw).expect("valid JSON");
    assert_json_matches_report(&doc, &r);
    assert_eq!(
        get(&doc, "config.json").as_str(),
        Some(&*json.display().to_string())
    );
    assert_eq!(get(&doc, "config.percentiles"), &Value::Bool(true));
    let counts = [200, 400, 400, 200, 200];
    for ((name, values), count) in HISTOGRAMS.iter().zip(&percentiles).zip(counts) {
        let p = get(&doc, &format!("percentiles.{name}"));
        assert_eq!(int(p, "count"), count, "{name} count");
        for (key, shown) in ["p50", "p90", "p99", "p99_9", "p99_99", "max"]
            .iter()
            .zip(values)
        {
            assert_eq!(&format!("{:.3}", float(p, key)), shown, "{name} {key}");
        }
        let b64 = get(&doc, &format!("histograms.{name}"))
            .as_str()
            .unwrap_or_else(|| panic!("histograms.{name} is not a string"));
        assert!(!b64.is_empty(), "histograms.{name} is empty");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap_or_else(|e| panic!("histograms.{name}: bad base64: {e}"));
        assert_eq!(
            &bytes[..4],
            &[0x1c, 0x84, 0x93, 0x13],
            "V2 cookie of {name}"
        );
        let h: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut &bytes[..])
            .unwrap_or_else(|e| panic!("histograms.{name}: {e:?}"));
        assert_eq!(h.len(), count, "{name}: values in the histogram");
        assert_eq!(h.max() as f64 / 1000.0, float(p, "max"), "{name}: max");
    }

    // The CSV file: header and one row.
    let first = fs::read_to_string(&csv).expect("read the --csv file");
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(lines.len(), 2, "{first}");
    assert!(first.ends_with('\n'));
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(header.len(), 104, "{}", lines[0]);
    assert_eq!(header[..4], ["timestamp", "server", "port", "uri"]);
    // The figure columns are the document's figures, flattened: same names, the
    // values rounded to their resolution (JSON is unrounded), without float noise.
    // The validity block is the document's only (its reasons are the findings cell).
    // Two members of `connections` came after the columns that follow them and are
    // JSON and `--fail-on` only (columns are only ever appended).
    let mut flat = Vec::new();
    flatten(&doc, "", &mut flat);
    let json_only = ["connections_failed", "connections_unopened"];
    let figures: Vec<&(String, Value)> = flat
        .iter()
        .skip_while(|(n, _)| n != "duration_s")
        .take_while(|(n, _)| !n.starts_with("timeline") && !n.starts_with("raw"))
        .filter(|(n, _)| !n.starts_with("validity_"))
        .filter(|(n, _)| !json_only.contains(&n.as_str()))
        .collect();
    let names: Vec<&str> = figures.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, header[8..header.len() - 1]);
    let cells: Vec<&str> = lines[1].split(',').collect();
    for ((name, v), cell) in figures.iter().zip(&cells[8..]) {
        match v {
            Value::Number(n) if n.is_f64() => {
                let json = n.as_f64().expect("f64");
                let csv: f64 = cell
                    .parse()
                    .unwrap_or_else(|_| panic!("CSV {name}: {cell}"));
                // Rates and percentages to 0.1, everything else to 0.001 or finer.
                let coarse =
                    name.contains("rate") || name.ends_with("_pct") || name.ends_with("_kb_per_s");
                let half = if coarse { 0.05 } else { 0.0005 };
                assert!(
                    (csv - json).abs() <= half + 1e-9,
                    "CSV {name} {cell} vs JSON {json}"
                );
                assert_eq!(csv.to_string(), *cell, "CSV {name}: shortest text");
            }
            Value::Null => assert_eq!(*cell, "", "CSV {name}"),
            other => assert_eq!(*cell, other.to_string(), "CSV {name} vs JSON"),
        }
    }
    let col = |row: &str, name: &str| -> String {
        let i = header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no CSV column {name}"));
        row.split(',')
            .nth(i)
            .expect("a field per column")
            .to_string()
    };
    assert_eq!(lines[1].split(',').count(), 104, "{}", lines[1]);
    assert_eq!(col(lines[1], "connections_total"), "200");
    assert_eq!(col(lines[1], "abandoned"), "0");
    assert_eq!(col(lines[1], "interrupted"), "false");
    assert_eq!(col(lines[1], "unanswered"), "0");
    assert_eq!(col(lines[1], "replies_total"), "400");
    assert_eq!(col(lines[1], "status_2xx"), "400");
    assert_eq!(col(lines[1], "errors_total"), "0");
    assert_eq!(col(lines[1], "port"), s.port().to_string());

    // A second run appends a row and no second header.
    let args = target(s.port(), &["--num-conns", "30", "--rate", "1000", &csv_arg]);
    let r2 = expect_code(&rshperf(&args), 0, &args);
    assert!(!r2.text.contains("Percentiles"), "{}", r2.text);
    let second = fs::read_to_string(&csv).expect("read the --csv file");
    assert!(
        second.starts_with(&first),
        "the first row is kept:\n{second}"
    );
    let lines: Vec<&str> = second.lines().collect();
    assert_eq!(lines.len(), 3, "{second}");
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("timestamp,")).count(),
        1
    );
    assert_eq!(col(lines[2], "connections_total"), "30");
    assert_eq!(col(lines[2], "num_calls"), "1");
}

#[test]
fn verbose_also_prints_the_percentile_lines() {
    let s = Server::start(Behavior::Fixed(10));
    let args = target(s.port(), &["--num-conns", "5", "-v"]);
    let r = expect_code(&rshperf(&args), 0, &args);
    let values = percentile_lines(&r);
    assert_eq!(values.len(), 5);
}

// ---- --json=- ----

#[test]
fn json_to_stdout_is_one_document_and_nothing_else() {
    let s = Server::start(Behavior::Fixed(100));
    let dir = TempDir::new("jstdout");
    let csv = dir.path("r.csv");
    let csv_arg = format!("--csv={}", csv.display());
    let args = target(
        s.port(),
        &[
            "--num-conns",
            "50",
            "--num-calls",
            "2",
            "--rate",
            "1000",
            "--json=-",
            "--percentiles",
            &csv_arg,
        ],
    );
    let r = expect_code(&rshperf(&args), 0, &args);
    assert_eq!(support::without_short_run_note(&r.stderr), "");
    assert!(
        r.text.starts_with('{') && r.text.ends_with("}\n"),
        "{}",
        r.text
    );
    let doc: Value = serde_json::from_str(&r.text).expect("stdout is one JSON document");
    for label in [
        "rshperf --client",
        "Maximum connect burst length",
        "Total:",
        "Reply status:",
        "Errors:",
        "Percentiles",
    ] {
        assert!(
            !r.text.lines().any(|l| l.starts_with(label)),
            "report text ({label}) on stdout:\n{}",
            r.text
        );
    }
    assert_eq!(get(&doc, "format"), "rshperf-result");
    assert_eq!(int(&doc, "connections.total"), 50);
    assert_eq!(int(&doc, "replies.total"), 100);
    assert_eq!(int(&doc, "status.2xx"), 100);
    assert_eq!(int(&doc, "errors.total"), 0);
    assert_eq!(int(&doc, "percentiles.response.count"), 100);
    assert_eq!(get(&doc, "config.json").as_str(), Some("-"));
    assert!(get(&doc, "config.echo")
        .as_str()
        .is_some_and(|e| e.starts_with("rshperf --client=0/1 --server=127.0.0.1 ")));
    // The CSV row is still written.
    let rows = fs::read_to_string(&csv).expect("read the --csv file");
    assert_eq!(rows.lines().count(), 2, "{rows}");
}

#[test]
/// `--json=-` replaces all text on stdout, the once-a-second `--periodic-stats` lines
/// included.
fn json_to_stdout_stays_pure_with_periodic_stats() {
    let s = Server::start(Behavior::Fixed(10));
    let args = target(
        s.port(),
        &[
            "--num-conns",
            "15",
            "--rate",
            "10",
            "--json=-",
            "--periodic-stats",
        ],
    );
    let r = expect_code(&rshperf(&args), 0, &args);
    let doc: Value = serde_json::from_str(&r.text)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", r.text));
    assert_eq!(int(&doc, "replies.total"), 15);
}

// ---- --fail-on ----

#[test]
fn breached_thresholds_exit_3_and_are_named_on_stderr_in_order() {
    let port = closed_port();
    let args = target(
        port,
        &[
            "--num-conns",
            "3",
            "--fail-on",
            "errors>0",
            "--fail-on",
            "replies>0",
            "--fail-on=connrefused >= 3",
        ],
    );
    let r = expect_code(&rshperf(&args), 3, &args);
    // The run's warning first, then the thresholds.
    assert_eq!(
        r.stderr,
        format!(
            "rshperf: warning: all 3 connections refused — is anything listening on \
             127.0.0.1:{port}?\n\
             rshperf: threshold breached: errors>0 (errors = 3)\n\
             rshperf: threshold breached: connrefused >= 3 (connrefused = 3)\n"
        )
    );
    // The report is printed as usual.
    assert_eq!(r.error("connrefused"), 3);
    assert_eq!(r.totals(), (3, 0, 0));
}

#[test]
fn thresholds_that_hold_exit_0_even_for_a_run_without_rate_samples() {
    let s = Server::start(Behavior::Fixed(100));
    let args = target(
        s.port(),
        &[
            "--num-conns",
            "100",
            "--rate",
            "500",
            "--fail-on",
            "errors>0",
            "--fail-on",
            "p99>1000ms",
            "--fail-on",
            "reply-rate<1",
        ],
    );
    let r = expect_code(&rshperf(&args), 0, &args);
    assert_eq!(support::without_short_run_note(&r.stderr), "");
    assert_eq!(r.totals(), (100, 100, 100));
    // Shorter than 5 s: no sample, so reply-rate is replies / duration, not 0.
    assert_eq!(r.nums("Reply rate [replies/s]:")[4], 0.0);
    let duration = r.nums("Total:")[3];

    let args = target(
        s.port(),
        &[
            "--num-conns",
            "100",
            "--rate",
            "500",
            "--fail-on",
            "reply-rate>1",
        ],
    );
    let r = expect_code(&rshperf(&args), 3, &args);
    let stderr = support::without_short_run_note(&r.stderr);
    let line = stderr.trim_end();
    assert!(
        line.starts_with("rshperf: threshold breached: reply-rate>1 (reply-rate = ")
            && line.ends_with(" replies/s)")
            && !line.contains('\n'),
        "{}",
        r.stderr
    );
    let shown = numbers(&line["rshperf: threshold breached: reply-rate>1".len()..])[0];
    let expect = 100.0 / r.nums("Total:")[3];
    assert!(
        (shown - expect).abs() <= expect * 0.02 + 0.1,
        "reply-rate {shown}, replies/duration {expect} (first run: {duration} s)"
    );
}

#[test]
fn malformed_thresholds_exit_1_before_the_run() {
    let port = closed_port();
    for expr in ["bogus>>3", "errors=0", "p99>50%", "errors>"] {
        let args = target(port, &["--num-conns", "1", "--fail-on", expr]);
        let r = expect_code(&rshperf(&args), 1, &args);
        assert_eq!(r.text, "", "{expr}: nothing on stdout");
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{expr}: {}", r.stderr);
        assert!(
            lines[0].starts_with("rshperf: --fail-on: ") && lines[0].contains(expr),
            "{expr}: {}",
            r.stderr
        );
    }
    let args = target(port, &["--fail-on", "bogus>>3"]);
    let r = expect_code(&rshperf(&args), 1, &args);
    assert!(r.stderr.contains("unknown metric 'bogus'"), "{}", r.stderr);
}

// ---- the progress line ----

/// Whether util-linux `script`, which runs a command under a pseudo-terminal, is
/// installed; skips the calling test when it is not.
fn have_script() -> bool {
    let ok = Command::new("script")
        .arg("--version")
        .output()
        .map(|o| text(&o.stdout).contains("util-linux"))
        .unwrap_or(false);
    if !ok {
        support::skip("util-linux `script` not installed (package bsdutils)");
    }
    ok
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs rshperf with `args` under a pseudo-terminal, stdout to `stdout_file`: returns
/// what the terminal received (rshperf's stderr) and the exit status.
fn under_pty(args: &[String], stdout_file: &Path) -> (String, Option<i32>) {
    let mut cmd = sh_quote(env!("CARGO_BIN_EXE_rshperf"));
    for a in args {
        cmd.push(' ');
        cmd.push_str(&sh_quote(a));
    }
    cmd.push_str(" >");
    cmd.push_str(&sh_quote(&stdout_file.display().to_string()));
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env(support::MACHINE_VAR, support::QUIET_MACHINE)
        .stdin(Stdio::null())
        .output()
        .expect("run script");
    (text(&out.stdout), out.status.code())
}

/// A run of about 2.4 s: 25 connections at 10 per second.
fn slow_run(port: u16, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["--num-conns", "25", "--rate", "10"];
    args.extend_from_slice(extra);
    target(port, &args)
}

/// Whether `stderr` holds a progress line.
fn has_progress(stderr: &str) -> bool {
    stderr.split(['\r', '\n']).any(|l| {
        let l = l.trim_start_matches("\x1b[2K");
        l.starts_with("rshperf: ")
            && [
                " s  connections ",
                "  replies ",
                "  reply rate ",
                "/s  errors ",
                "  p99 ",
            ]
            .iter()
            .all(|part| l.contains(part))
            && l.ends_with(" ms")
    })
}

#[test]
fn progress_shows_on_a_terminal_only_and_never_changes_stdout() {
    if !have_script() {
        return;
    }
    let s = Server::start(Behavior::Fixed(100));
    let dir = TempDir::new("pty");
    let args = slow_run(s.port(), &[]);

    // stderr is a terminal: the progress line is drawn there.
    let pty_out = dir.path("pty.out");
    let (terminal, code) = under_pty(&args, &pty_out);
    assert_eq!(code, Some(0), "{terminal}");
    assert!(
        has_progress(&terminal),
        "no progress line on the terminal: {terminal:?}"
    );
    assert!(terminal.contains("\r\x1b[2K"), "{terminal:?}");
    assert!(
        support::without_short_run_note(&terminal).ends_with("\r\x1b[2K"),
        "the line is cleared at the end: {terminal:?}"
    );
    let pty_stdout = fs::read_to_string(&pty_out).expect("read stdout");

    // stderr is a file: nothing there.
    let err_file = dir.path("stderr");
    let out = support::bin()
        .args(&args)
        .stdin(Stdio::null())
        .stderr(File::create(&err_file).expect("create stderr file"))
        .output()
        .expect("run rshperf");
    assert_eq!(out.status.code(), Some(0));
    let err = fs::read_to_string(&err_file).expect("read stderr");
    assert_eq!(support::without_short_run_note(&err), "");
    let file_stdout = text(&out.stdout);

    // stdout is the same report either way, timing figures aside.
    for report in [&pty_stdout, &file_stdout] {
        let r = Report {
            text: report.to_string(),
            stderr: String::new(),
        };
        assert_eq!(r.totals(), (25, 25, 25), "{report}");
        assert!(
            !report.contains("\x1b") && !report.contains('\r'),
            "{report:?}"
        );
    }
    assert_eq!(masked(&pty_stdout), masked(&file_stdout));
    assert_eq!(pty_stdout.lines().next(), file_stdout.lines().next());
}

#[test]
fn progress_forced_onto_a_pipe() {
    let s = Server::start(Behavior::Fixed(100));
    let args = slow_run(s.port(), &["--progress"]);
    let r = expect_code(&rshperf(&args), 0, &args);
    assert!(has_progress(&r.stderr), "{:?}", r.stderr);
    let progress = support::without_short_run_note(&r.stderr);
    assert!(progress.ends_with("\r\x1b[2K"), "{:?}", r.stderr);
    assert!(
        !r.text.contains("rshperf: ") && !r.text.contains('\x1b'),
        "{}",
        r.text
    );
    assert_eq!(r.totals(), (25, 25, 25));

    // The default on a pipe: nothing.
    let args = target(s.port(), &["--num-conns", "12", "--rate", "10"]);
    let r = expect_code(&rshperf(&args), 0, &args);
    assert_eq!(support::without_short_run_note(&r.stderr), "");
}

#[test]
fn no_progress_keeps_a_terminal_quiet() {
    if !have_script() {
        return;
    }
    let s = Server::start(Behavior::Fixed(100));
    let dir = TempDir::new("nopty");
    let stdout = dir.path("out");
    let (terminal, code) = under_pty(&slow_run(s.port(), &["--no-progress"]), &stdout);
    assert_eq!(code, Some(0), "{terminal}");
    assert_eq!(
        support::without_short_run_note(&terminal),
        "",
        "stderr on the terminal"
    );
    let report = fs::read_to_string(&stdout).expect("read stdout");
    assert!(
        report.contains("\nTotal: connections 25 requests 25 replies 25 "),
        "{report}"
    );
}

// ---- the manual page ----

fn man_page() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("man/rshperf.1")
}

/// The `--name` tokens of a usage text, in order, without repeats.
fn long_options(usage: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = usage;
    while let Some(at) = rest.find("--") {
        let tail = &rest[at + 2..];
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(tail.len());
        let name = tail[..len].trim_end_matches('-');
        if !name.is_empty() && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
        rest = &tail[len..];
    }
    names
}

/// Whether `man` has a `.TP` entry whose tag names `--name` (roff `\fB\-\-name\fR`).
fn documented(man: &str, name: &str) -> bool {
    let roff = format!("\\fB\\-\\-{}\\fR", name.replace('-', "\\-"));
    let mut after_tp = false;
    for line in man.lines() {
        if after_tp && line.contains(&roff) {
            return true;
        }
        after_tp = line == ".TP";
    }
    false
}

#[test]
fn every_option_of_help_has_an_entry_in_the_man_page() {
    let man = fs::read_to_string(man_page()).expect("read man/rshperf.1");
    let help = support::run(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let names = long_options(&text(&help.stdout));
    assert!(names.len() > 60, "{names:?}");
    for new in [
        "percentiles",
        "json",
        "csv",
        "fail-on",
        "progress",
        "no-progress",
    ] {
        assert!(names.iter().any(|n| n == new), "--{new} not in --help");
    }
    for sub in ["serve", "demo", "merge", "sweep", "replay"] {
        let help = support::run(&[sub, "--help"]);
        assert_eq!(help.status.code(), Some(0));
        let sub_names = long_options(&text(&help.stdout));
        assert!(!sub_names.is_empty());
        for name in sub_names {
            if !names.contains(&name) {
                assert!(
                    documented(&man, &name),
                    "`rshperf {sub} --{name}` has no entry in man/rshperf.1"
                );
            }
        }
        assert!(
            man.contains(&format!("\\fBrshperf {sub}\\fR")),
            "`rshperf {sub}` not in man/rshperf.1"
        );
    }
    let missing: Vec<&String> = names.iter().filter(|n| !documented(&man, n)).collect();
    assert!(
        missing.is_empty(),
        "no entry in man/rshperf.1 for {missing:?}"
    );
    for needed in [
        ".SH EXIT STATUS",
        "\n\\fB3\\fR\n",
        "Percentiles response [ms]:",
        "docs/json.md",
    ] {
        assert!(man.contains(needed), "man/rshperf.1 lacks {needed:?}");
    }
}

/// Each renderer or linter that is missing skips its part (with its reason).
#[test]
fn the_man_page_renders_without_warnings() {
    let page = man_page();
    for (tool, package) in [
        ("man", "man-db"),
        ("groff", "groff-base"),
        ("mandoc", "mandoc"),
    ] {
        if !support::installed(tool) {
            support::skip(&format!("`{tool}` not installed (package {package})"));
        }
    }
    if support::installed("man") {
        let out = Command::new("man")
            .args(["--warnings", "-l"])
            .arg(&page)
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("MANWIDTH", "80")
            .stdin(Stdio::null())
            .output()
            .expect("run man");
        let shown = text(&out.stdout);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "", "man warnings");
        for word in [
            "RSHPERF(1)",
            "EXIT STATUS",
            "percentiles",
            "fail",
            "serve",
            "demo",
        ] {
            assert!(shown.contains(word), "{word} not in the rendered page");
        }
    }
    if support::installed("groff") {
        let out = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(&page)
            .output()
            .expect("run groff");
        assert!(out.status.success());
        assert_eq!(text(&out.stderr), "", "groff warnings");
    }
    if support::installed("mandoc") {
        let out = Command::new("mandoc")
            .args(["-Tlint", "-W", "warning"])
            .arg(&page)
            .output()
            .expect("run mandoc");
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(out.status.success(), "{all}");
        assert_eq!(all, "", "mandoc -Tlint warnings");
    }
}
