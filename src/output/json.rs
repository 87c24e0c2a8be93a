//! `--json`: the whole run as one versioned JSON document, and back.
//!
//! Owns the document layout (`docs/json.md` is its specification): the configuration,
//! wall-clock start and end, every figure of the classic report unrounded, the
//! percentiles, and the run's `Stats` exactly (`raw`, and the latency histograms in
//! HdrHistogram V2 form as `histograms`), so that documents of several runs or machines
//! can be merged exactly later. `raw` and `histograms` are `Stats`' own serde schema
//! (`stats/mod.rs`), not a list kept here. `stats_from_json` is the reverse, for
//! `rshperf merge`: it rebuilds the `Stats` and `RunInfo` a document was written from,
//! refusing (with the member's path) anything missing, unknown or out of range. Also
//! owns the RFC 3339 formatting of `SystemTime` (no date crate needed). Computes no
//! report figure itself (see `summary`); does no I/O beyond the given writer
//! (`write_json_to` opens the named file). Called by the runner and `rshperf merge`.
//!
//! Figures that are not finite (rates over a zero duration) are `null`: JSON has no
//! `inf` or `NaN`.
//!
//! Longer than the usual 600 lines: writer and reader of one layout belong together,
//! and a third of the file is the tests (exact round trip, merge equivalence, layout,
//! rejected documents).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::model::config::Config;
use crate::model::stats::Stats;
use crate::model::workload::rate::Period;

use super::percentiles::{histograms, QUANTILES};
use super::summary::{RateSummary, Summary};
use crate::model::run::{RunInfo, RunMeta};
use crate::model::stats::quantile_ms;

/// The `format` member of every document.
pub const FORMAT: &str = "rshperf-result";

/// The `version` member: incremented on any incompatible change of the layout
/// (2: `raw` holds every `Stats` field, `servers`, `tls_handshakes` and
/// `status_200_302` included, and unknown `raw` members are refused).
pub const VERSION: u64 = 2;

/// Report names of the error counters (JSON keys), in `ErrorKind` order.
pub use crate::model::stats::ERROR_KEYS;

/// Seconds since the Unix epoch (negative before it).
pub fn unix_seconds(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// RFC 3339 in UTC with microseconds, e.g. `2024-05-06T07:08:09.123456Z`.
pub fn rfc3339(t: SystemTime) -> String {
    // Microseconds since the epoch, floored (so times before 1970 work too).
    let us: i128 = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i128,
        Err(e) => -(e.duration().as_micros() as i128),
    };
    let secs = us.div_euclid(1_000_000);
    let micros = us.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

/// Proleptic Gregorian (year, month, day) of a day count since 1970-01-01
/// (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i128) -> (i128, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i128::from(m <= 2);
    (y, m, d)
}

fn time_json(t: SystemTime) -> Value {
    json!({ "rfc3339": rfc3339(t), "unix": unix_seconds(t) })
}

/// The arrival process: `kind` plus its parameters in seconds, and the mean rate.
fn period_json(p: &Period) -> Value {
    let mut v = match p {
        Period::Sequential => json!({ "kind": "sequential" }),
        Period::Deterministic(t) => json!({ "kind": "deterministic", "period_s": t }),
        Period::Uniform(lo, hi) => json!({ "kind": "uniform", "min_s": lo, "max_s": hi }),
        Period::Exponential(mean) => json!({ "kind": "exponential", "mean_s": mean }),
        Period::Variable(pairs) => {
            let pairs: Vec<Value> = pairs.iter().map(|&(t, d)| json!([t, d])).collect();
            json!({ "kind": "variable", "pairs_s": pairs })
        }
    };
    let mean = p.mean();
    v["rate"] = if mean > 0.0 {
        json!(1.0 / mean)
    } else {
        Value::Null
    };
    v
}

/// Every option that shapes the run or its output, plus the echo line.
fn config_json(cfg: &Config) -> Value {
    let addrs: Vec<String> = cfg.addrs.iter().map(|a| a.to_string()).collect();
    let http_version = match cfg.http_version {
        crate::model::config::HttpVersion::V10 => "1.0",
        crate::model::config::HttpVersion::V11 => "1.1",
        crate::model::config::HttpVersion::V2 => "2",
    };
    let start_at = match cfg.start_at {
        None => Value::Null,
        Some(crate::model::config::StartAt::Unix(t)) => json!({ "unix": t }),
        Some(crate::model::config::StartAt::After(s)) => json!({ "after_s": s }),
    };
    let mut v = json!({
        "echo": cfg.echo_line(),
        "server": cfg.server,
        "servers": cfg.servers,
        "server_name": cfg.server_name,
        "host": cfg.host,
        "addrs": addrs,
        "port": cfg.port,
        "uri": cfg.uri,
        "method": cfg.method,
        "http_version": http_version,
        "add_header": cfg.add_header_raw,
        "add_header_file": cfg.add_header_file,
        "no_host_hdr": cfg.no_host_hdr,
        "num_conns": cfg.num_conns,
        "num_calls": cfg.num_calls,
        "burst_length": cfg.burst_length,
        "concurrency": cfg.concurrency,
        "call_rate": cfg.call_rate,
        "period": period_json(&cfg.period),
        "timeout_s": cfg.timeout,
        "think_timeout_s": cfg.think_timeout,
        "runtime_s": cfg.runtime,
        "until_runtime": cfg.until_runtime,
        "client": [cfg.client_id, cfg.num_clients],
        "partition": [cfg.partition.0, cfg.partition.1],
        "threads": cfg.threads,
        "start_at": start_at,
        "overload": cfg.pacing.overload.name(),
        "spin": cfg.pacing.spin.name(),
        "pin": cfg.pacing.pin,
        "realtime": cfg.pacing.realtime,
    });
    let more = json!({
        "send_buffer": cfg.send_buffer,
        "recv_buffer": cfg.recv_buffer,
        "hog": cfg.hog,
        "myaddr": cfg.myaddr,
        "close_with_reset": cfg.close_with_reset,
        "max_connections": cfg.max_connections,
        "max_piped_calls": cfg.max_piped_calls,
        "failure_status": cfg.failure_status,
        "retry_on_failure": cfg.retry_on_failure,
        "session_cookies": cfg.session_cookies,
        "wsess": cfg.wsess.as_ref().map(|w| json!({
            "sessions": w.sessions, "calls": w.calls, "think_s": w.think
        })),
        "wsesslog": cfg.wsesslog.as_ref().map(|w| json!({
            "sessions": w.sessions, "think_s": w.think, "file": w.file
        })),
        "wsesspage": cfg.wsesspage.as_ref().map(|w| json!({
            "sessions": w.sessions, "pages": w.pages, "think_s": w.think
        })),
        "wlog": cfg.wlog.as_ref().map(|w| json!({ "repeat": w.repeat, "file": w.file })),
        "wset": cfg.wset.as_ref().map(|w| json!({
            "files": w.files, "miss_rate": w.miss_rate
        })),
        "ssl": cfg.ssl,
        "ssl_protocol": cfg.ssl_protocol.map(|p| p.name()),
        "ssl_ciphers": cfg.ssl_ciphers,
        "ssl_no_reuse": cfg.ssl_no_reuse,
        "ssl_verify": cfg.ssl_verify,
        "tls_server_name": cfg.tls_server_name,
        "verbose": cfg.verbose,
        "percentiles": cfg.percentiles,
        "json": cfg.json,
        "csv": cfg.csv,
        "fail_on": cfg.fail_on,
        "unix_socket": cfg.unix_socket,
        "body_file": cfg.body_file,
        "content_type": cfg.content_type,
        "header_file": cfg.header_file,
        "metrics_listen": cfg.metrics_listen.map(|a| a.to_string()),
        "metrics_linger_s": cfg.metrics_linger,
    });
    // Two literals: one would exceed the json! macro's recursion limit.
    if let (Value::Object(a), Value::Object(b)) = (&mut v, more) {
        a.extend(b);
    }
    v
}

/// `--wsess`-style session figures (docs/compatibility.md §2.3.3), unrounded.
fn sessions_json(stats: &Stats, duration: f64) -> Value {
    let ok = stats.sessions_ok;
    let rate = RateSummary::from_rates(
        stats
            .rate_samples
            .iter()
            .map(|s| s.sessions as f64 / s.seconds),
    );
    let mean_s = |sum_us: u64, n: u64| {
        if n == 0 {
            0.0
        } else {
            sum_us as f64 / n as f64 / 1e6
        }
    };
    json!({
        "rate": {
            "min": rate.min,
            "avg": ok as f64 / duration,
            "max": rate.max,
            "stddev": rate.stddev,
            "samples": rate.samples,
        },
        "completed": ok,
        "total": ok + stats.sessions_failed,
        "connections_per_session": if ok == 0 {
            0.0
        } else {
            stats.session_connects_ok as f64 / ok as f64
        },
        "lifetime_s": mean_s(stats.session_life_ok_us, ok),
        "failtime_s": mean_s(stats.session_life_failed_us, stats.sessions_failed),
        "length_histogram": stats.session_lengths,
    })
}

/// The name, in `Stats`' schema, of the member that the document carries at its top
/// level instead of inside `raw` (HdrHistogram readers find it there).
const HISTOGRAMS: &str = "histograms";

/// `Stats` as the document's `raw` and `histograms` members (see `stats_from_json`).
fn stats_members(s: &Stats) -> (Value, Value) {
    let mut raw = serde_json::to_value(s)
        .expect("Stats serializes to JSON: string keys, no failing serializer");
    let hists = raw
        .as_object_mut()
        .and_then(|o| o.shift_remove(HISTOGRAMS))
        .expect("Stats has a histograms member");
    (raw, hists)
}

/// The complete document (layout: `docs/json.md`).
pub fn to_json(
    cfg: &Config,
    stats: &Stats,
    summary: &Summary<'_>,
    run: &RunInfo,
    meta: &RunMeta,
) -> Value {
    let s = summary;
    let mut errors = Map::new();
    errors.insert("total".into(), json!(s.errors_total));
    for (key, n) in ERROR_KEYS.iter().zip(s.errors) {
        errors.insert((*key).into(), json!(n));
    }
    let mut percentiles = Map::new();
    for (name, h) in histograms(stats) {
        let mut p = Map::new();
        p.insert("count".into(), json!(h.len()));
        for (q, _, key) in QUANTILES {
            p.insert(key.into(), json!(quantile_ms(h, q)));
        }
        p.insert("max".into(), json!(quantile_ms(h, 1.0)));
        percentiles.insert(name.into(), Value::Object(p));
    }
    let [c1, c2, c3, c4, c5] = s.reply_status;
    let mut doc = json!({
        "format": FORMAT,
        "version": VERSION,
        "rshperf_version": env!("CARGO_PKG_VERSION"),
        "config": config_json(cfg),
        "run": {
            "partition": [meta.partition.0, meta.partition.1],
            "threads": meta.threads,
        },
        "start": time_json(meta.start),
        "end": time_json(meta.end),
        "duration_s": run.duration,
        "max_connect_burst": s.max_burst,
        "connections": {
            "total": s.connections,
            "rate": s.conn_rate,
            "period_ms": s.conn_period_ms,
            "max_concurrent": s.max_concurrent,
            "successful": s.lifetimes,
            "replies_per_conn": s.replies_per_conn,
        },
        "connection_time_ms": {
            "min": s.lifetime_min_ms,
            "avg": s.lifetime_avg_ms,
            "max": s.lifetime_max_ms,
            "median": s.lifetime_median_ms,
            "stddev": s.lifetime_stddev_ms,
            "connect": s.connect_avg_ms,
        },
        "requests": {
            "total": s.requests,
            "rate": s.request_rate,
            "period_ms": s.request_period_ms,
            "size_b": s.request_size,
        },
        "replies": {
            "total": s.replies,
            "response_ms": s.response_avg_ms,
            "transfer_ms": s.transfer_avg_ms,
        },
        "reply_rate": {
            "min": s.reply_rate.min,
            "avg": s.reply_rate.avg,
            "max": s.reply_rate.max,
            "stddev": s.reply_rate.stddev,
            "samples": s.reply_rate.samples,
        },
        "reply_size": {
            "header": s.reply_header_size,
            "content": s.reply_content_size,
            "footer": s.reply_footer_size,
            "total": s.reply_total_size(),
        },
        "status": { "1xx": c1, "2xx": c2, "3xx": c3, "4xx": c4, "5xx": c5 },
        "cpu": {
            "user_s": run.cpu_user,
            "system_s": run.cpu_system,
            "user_pct": s.cpu_user_pct,
            "system_pct": s.cpu_system_pct,
            "total_pct": s.cpu_total_pct,
        },
        "net_io": {
            "bytes": s.net_io_bytes,
            "kb_per_s": s.net_io_kb_per_s,
            "mbps": s.net_io_mbps,
        },
        "errors": Value::Object(errors),
    });
    let obj = doc
        .as_object_mut()
        .expect("the json! literal above is an object");
    if stats.sessions_ok + stats.sessions_failed > 0 {
        obj.insert("sessions".into(), sessions_json(stats, run.duration));
    }
    obj.insert("percentiles".into(), Value::Object(percentiles));
    if !stats.servers.is_empty() {
        obj.insert("servers".into(), servers_json(stats, meta, run.duration));
    }
    obj.insert(
        "tls_handshakes".into(),
        json!({ "full": stats.tls_handshakes[0], "resumed": stats.tls_handshakes[1] }),
    );
    if stats.http2.connections > 0 {
        // H2Stats' own fields, plus h2load's "space savings" both ways.
        let h = &stats.http2;
        let mut v = serde_json::to_value(h).unwrap_or(Value::Null);
        if let Some(o) = v.as_object_mut() {
            use crate::model::stats::h2::savings;
            o.insert(
                "request_space_savings_pct".into(),
                json!(savings(h.request_header_wire, h.request_header_decoded)),
            );
            o.insert(
                "reply_space_savings_pct".into(),
                json!(savings(h.reply_header_wire, h.reply_header_decoded)),
            );
        }
        obj.insert("http2".into(), v);
    }
    if stats.pool.is_used() {
        obj.insert("call_rate".into(), call_rate_json(cfg, stats, run.duration));
    }
    obj.insert("timeline".into(), super::timeline::to_json(&stats.timeline));
    let (raw, hists) = stats_members(stats);
    obj.insert("raw".into(), raw);
    obj.insert(HISTOGRAMS.into(), hists);
    doc
}

/// The `--call-rate` member: the pool's counters, the target and achieved rates, and
/// the percentiles of lateness and response time measured from the schedule.
fn call_rate_json(cfg: &Config, stats: &Stats, duration: f64) -> Value {
    let p = &stats.pool;
    let spread = |h: &hdrhistogram::Histogram<u64>| {
        let mut m = Map::new();
        m.insert("count".into(), json!(h.len()));
        m.insert(
            "avg".into(),
            json!(if h.is_empty() { 0.0 } else { h.mean() / 1000.0 }),
        );
        for (q, _, key) in QUANTILES {
            m.insert(key.into(), json!(quantile_ms(h, q)));
        }
        m.insert("max".into(), json!(quantile_ms(h, 1.0)));
        Value::Object(m)
    };
    json!({
        "target_per_s": cfg.call_rate,
        "achieved_per_s": if duration > 0.0 { p.issued as f64 / duration } else { 0.0 },
        "connections": p.connections,
        "scheduled": p.scheduled,
        "issued": p.issued,
        "completed": p.completed,
        "lost": p.lost,
        "unsent": p.unsent,
        "max_waiting": p.max_waiting,
        "reconnects": p.reconnects,
        "given_up": p.given_up,
        "lateness_ms": spread(&p.lateness),
        "response_ms": spread(&p.response),
    })
}

/// The per-server figures of a `--servers` run.
fn servers_json(stats: &Stats, meta: &RunMeta, duration: f64) -> Value {
    let list = stats
        .servers
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let errors: Map<String, Value> =
                ERROR_KEYS.iter().zip(s.errors.iter()).map(|(k, v)| ((*k).to_string(), json!(v))).collect();
            let p = |q: f64| crate::model::stats::quantile_ms(&s.response, q);
            json!({
                "server": meta.servers.get(i).cloned().unwrap_or_default(),
                "connections": s.connections,
                "requests": s.requests,
                "replies": s.replies(),
                "request_rate": s.requests as f64 / duration,
                "reply_rate": s.replies() as f64 / duration,
                "status": { "1xx": s.replies_by_class[1], "2xx": s.replies_by_class[2], "3xx": s.replies_by_class[3], "4xx": s.replies_by_class[4], "5xx": s.replies_by_class[5] },
                "errors": errors,
                "response_ms": {
                    "avg": if s.response.is_empty() { 0.0 } else { s.response_sum_us as f64 / s.response.len() as f64 / 1000.0 },
                    "p50": p(0.5), "p90": p(0.9), "p99": p(0.99), "max": p(1.0),
                },
            })
        })
        .collect();
    Value::Array(list)
}

/// Writes `to_json` pretty-printed, with a final newline.
pub fn write_json<W: Write>(
    mut out: W,
    cfg: &Config,
    stats: &Stats,
    summary: &Summary<'_>,
    run: &RunInfo,
    meta: &RunMeta,
) -> io::Result<()> {
    let doc = to_json(cfg, stats, summary, run, meta);
    serde_json::to_writer_pretty(&mut out, &doc)?;
    writeln!(out)?;
    out.flush()
}

/// `--json=DEST`: writes the document to stdout when `dest` is `-`, else creates
/// (truncates) the file `dest`.
pub fn write_json_to(
    dest: &str,
    cfg: &Config,
    stats: &Stats,
    summary: &Summary<'_>,
    run: &RunInfo,
    meta: &RunMeta,
) -> io::Result<()> {
    write_value_to(dest, &to_json(cfg, stats, summary, run, meta))
}

/// Writes a document pretty-printed, with a final newline, to stdout when `dest` is
/// `-`, else to the file `dest` (created or truncated).
pub fn write_value_to(dest: &str, doc: &Value) -> io::Result<()> {
    let write = |mut out: Box<dyn Write + '_>| {
        serde_json::to_writer_pretty(&mut out, doc)?;
        writeln!(out)?;
        out.flush()
    };
    if dest == "-" {
        write(Box::new(BufWriter::new(io::stdout().lock())))
    } else {
        write(Box::new(BufWriter::new(File::create(dest)?)))
    }
}

/// Member `key` of object `v`; `at` names `v` in messages.
fn get<'a>(v: &'a Value, at: &str, key: &str) -> Result<&'a Value, String> {
    v.get(key).ok_or_else(|| format!("missing {at}{key}"))
}

fn get_u64(v: &Value, at: &str, key: &str) -> Result<u64, String> {
    get(v, at, key)?
        .as_u64()
        .ok_or_else(|| format!("{at}{key} is not an unsigned integer"))
}

fn get_f64(v: &Value, at: &str, key: &str) -> Result<f64, String> {
    get(v, at, key)?
        .as_f64()
        .ok_or_else(|| format!("{at}{key} is not a number"))
}

/// Rebuilds the `Stats` and `RunInfo` a document was made from (for merging runs):
/// every field exactly, histograms included. A member missing, of the wrong type, out
/// of range or unknown (it would be lost) is an error naming it, e.g.
/// `raw.errors: invalid length 2, expected an array of length 8`.
pub fn stats_from_json(v: &Value) -> Result<(Stats, RunInfo), String> {
    if v.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(format!("not an {FORMAT} document"));
    }
    let version = get_u64(v, "", "version")?;
    if version != VERSION {
        return Err(format!(
            "unsupported {FORMAT} version {version} (this rshperf reads {VERSION}; \
             write the document again with this rshperf)"
        ));
    }
    let cpu = get(v, "", "cpu")?;
    let run = RunInfo {
        duration: get_f64(v, "", "duration_s")?,
        cpu_user: get_f64(cpu, "cpu.", "user_s")?,
        cpu_system: get_f64(cpu, "cpu.", "system_s")?,
    };
    let mut raw = get(v, "", "raw")?.clone();
    let members = raw.as_object_mut().ok_or("raw is not an object")?;
    if members.contains_key(HISTOGRAMS) {
        return Err(format!(
            "raw.{HISTOGRAMS}: unknown member (it belongs at the top level)"
        ));
    }
    members.insert(HISTOGRAMS.into(), get(v, "", HISTOGRAMS)?.clone());
    let stats: Stats = serde_path_to_error::deserialize(&raw).map_err(|e| {
        let path = e.path().to_string();
        let at = match path.as_str() {
            "." => "raw".to_string(),
            p if p.starts_with(HISTOGRAMS) => p.to_string(),
            p => format!("raw.{p}"),
        };
        format!("{at}: {}", e.inner())
    })?;
    Ok((stats, run))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::tests::every_field_set;
    use crate::model::stats::{ErrorKind, RateSample, LIFETIME_BINS};
    use base64::engine::general_purpose::STANDARD as BASE64;
    use base64::Engine as _;
    use std::time::Duration;

    /// A run with a bit of everything, including values that stress the encoding.
    fn sample_stats() -> Stats {
        let mut s = Stats::new();
        for i in 0..50u64 {
            s.on_connecting();
            s.on_lateness(Duration::from_micros(3 + i));
            s.on_connected(Duration::from_micros(90 + 7 * i));
            s.on_request_sent(68 + i % 3);
            s.on_response(Duration::from_micros(400 + 37 * i * i));
            s.on_reply(
                if i % 10 == 0 { 404 } else { 200 },
                239,
                1024 + i,
                i % 2,
                Duration::from_micros(20 + i),
            );
            s.on_lifetime(Duration::from_micros(700 + 1_000 * i * i));
        }
        s.on_reply(42, 10, 0, 0, Duration::from_micros(5));
        s.on_lifetime(Duration::from_secs(150));
        s.on_error(ErrorKind::ClientTimo);
        s.on_error(ErrorKind::ConnReset);
        s.on_error(ErrorKind::ConnReset);
        s.max_concurrent = 7;
        s.max_burst = 3;
        s.rate_samples.push(RateSample {
            replies: 30,
            sessions: 2,
            seconds: 5.000_123_456_789,
        });
        s.rate_samples.push(RateSample {
            replies: 21,
            sessions: 1,
            seconds: 0.1 + 0.2,
        });
        s.on_session(true, Duration::from_millis(1200), 3, 4);
        s.on_session(false, Duration::from_millis(300), 1, 0);
        s
    }

    const RUN: RunInfo = RunInfo {
        duration: 10.123_456_789_012_3,
        cpu_user: 1.0 / 3.0,
        cpu_system: 0.25,
    };

    fn meta() -> RunMeta {
        RunMeta {
            start: UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456),
            end: UNIX_EPOCH + Duration::from_micros(1_700_000_010_246_912),
            partition: (1, 4),
            threads: 2,
            servers: Vec::new(),
        }
    }

    fn cfg() -> Config {
        Config::from_argv(&[
            "rshperf",
            "--server",
            "127.0.0.1",
            "--uri",
            "/a,b",
            "--rate",
            "250",
            "--num-conns",
            "50",
            "--fail-on",
            "p99>50ms",
        ])
        .expect("valid test options")
    }

    fn doc(s: &Stats) -> Value {
        let summary = Summary::new(s, &RUN);
        to_json(&cfg(), s, &summary, &RUN, &meta())
    }

    /// Equal field by field: the comparison comes from the one schema, so it cannot
    /// leave a field out.
    fn assert_stats_eq(a: &Stats, b: &Stats) {
        let v = |s: &Stats| serde_json::to_value(s).expect("serializable");
        assert_eq!(v(a), v(b));
    }

    #[test]
    fn stats_round_trip_exactly_through_text() {
        for s in [every_field_set(), sample_stats(), Stats::new()] {
            let text = serde_json::to_string_pretty(&doc(&s)).expect("serializable");
            let back: Value = serde_json::from_str(&text).expect("valid JSON");
            let (t, run) = stats_from_json(&back).expect("readable document");
            assert_stats_eq(&s, &t);
            assert_eq!(run, RUN);
            // The rebuilt stats give the same report, bit for bit.
            let again = doc(&t);
            assert_eq!(again, doc(&s));
        }
    }

    #[test]
    fn merged_documents_equal_merged_stats() {
        let (a, b) = (sample_stats(), {
            let mut b = Stats::new();
            b.on_response(Duration::from_millis(900));
            b.on_lifetime(Duration::from_millis(5));
            b
        });
        let (mut from_docs, _) = stats_from_json(&doc(&a)).expect("a");
        let (b2, _) = stats_from_json(&doc(&b)).expect("b");
        from_docs.merge(&b2).expect("no overflow");
        let mut direct = a.clone();
        direct.merge(&b).expect("no overflow");
        assert_stats_eq(&from_docs, &direct);
    }

    #[test]
    fn document_has_the_documented_groups() {
        let s = sample_stats();
        let d = doc(&s);
        assert_eq!(d["format"], "rshperf-result");
        assert_eq!(d["version"], 2);
        let keys: Vec<&str> = d
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "format",
                "version",
                "rshperf_version",
                "config",
                "run",
                "start",
                "end",
                "duration_s",
                "max_connect_burst",
                "connections",
                "connection_time_ms",
                "requests",
                "replies",
                "reply_rate",
                "reply_size",
                "status",
                "cpu",
                "net_io",
                "errors",
                "sessions",
                "percentiles",
                "tls_handshakes",
                "timeline",
                "raw",
                "histograms"
            ]
        );
        assert_eq!(d["config"]["uri"], "/a,b");
        assert_eq!(d["config"]["port"], 80);
        assert_eq!(d["config"]["period"]["kind"], "deterministic");
        assert_eq!(d["config"]["period"]["rate"], 250.0);
        assert_eq!(d["config"]["fail_on"][0], "p99>50ms");
        assert!(d["config"]["echo"]
            .as_str()
            .expect("string")
            .starts_with("rshperf --client=0/1 --server=127.0.0.1 --port=80 --uri=/a,b"));
        assert_eq!(d["run"]["partition"], json!([1, 4]));
        assert_eq!(d["start"]["rfc3339"], "2023-11-14T22:13:20.123456Z");
        assert_eq!(d["start"]["unix"], 1_700_000_000.123_456);
        assert_eq!(d["end"]["rfc3339"], "2023-11-14T22:13:30.246912Z");
        assert_eq!(d["duration_s"], RUN.duration);
        // Unrounded figures.
        assert_eq!(d["connections"]["total"], 50);
        assert_eq!(d["connections"]["rate"], 50.0 / RUN.duration);
        assert_eq!(d["requests"]["size_b"], 68); // 3449 / 50, truncated
        assert_eq!(d["replies"]["total"], 50);
        assert_eq!(d["status"]["4xx"], 5);
        assert_eq!(d["status"]["2xx"], 45);
        assert_eq!(d["errors"]["total"], 3);
        assert_eq!(d["errors"]["connreset"], 2);
        assert_eq!(d["errors"]["client_timo"], 1);
        assert_eq!(d["reply_rate"]["samples"], 2);
        assert_eq!(d["cpu"]["user_s"], 1.0 / 3.0);
        assert_eq!(d["connection_time_ms"]["max"], 150_000.0);
        assert_eq!(d["sessions"]["completed"], 1);
        assert_eq!(d["sessions"]["total"], 2);
        assert_eq!(d["sessions"]["length_histogram"], json!([1, 0, 0, 0, 1]));
        assert_eq!(d["sessions"]["lifetime_s"], 1.2);
        assert_eq!(d["sessions"]["connections_per_session"], 3.0);
        // Percentiles in ms, from the same histograms as the text block.
        assert_eq!(d["percentiles"]["connect"]["p50"], 0.258); // 25th of 90 + 7i µs
        assert_eq!(d["percentiles"]["connect"]["count"], 50);
        assert_eq!(
            d["percentiles"]["response"]["max"],
            quantile_ms(&s.hist.response, 1.0)
        );
        // Sparse bins, overflow element included.
        assert_eq!(d["raw"]["lifetime_bins"][0], json!([0, 1]));
        assert_eq!(
            d["raw"]["lifetime_bins"]
                .as_array()
                .expect("array")
                .last()
                .expect("overflow bin"),
            &json!([LIFETIME_BINS, 1])
        );
        // Uncompressed V2: the cookie 0x1c849313 (compressed would be …14).
        let bytes = BASE64
            .decode(d["histograms"]["connect"].as_str().expect("string"))
            .expect("base64");
        assert_eq!(bytes[..4], [0x1c, 0x84, 0x93, 0x13]);
    }

    #[test]
    fn no_sessions_no_session_group_and_non_finite_is_null() {
        let mut s = Stats::new();
        s.on_connecting();
        let zero = RunInfo {
            duration: 0.0,
            ..RUN
        };
        let summary = Summary::new(&s, &zero);
        let d = to_json(&cfg(), &s, &summary, &zero, &meta());
        assert!(d.get("sessions").is_none());
        assert_eq!(d["connections"]["rate"], Value::Null);
        assert_eq!(d["requests"]["rate"], Value::Null);
        assert_eq!(d["raw"]["lifetime_min_us"], Value::Null);
        assert_eq!(d["raw"]["lifetime_bins"], json!([]));
    }

    #[test]
    fn write_json_is_pretty_with_a_final_newline() {
        let s = sample_stats();
        let summary = Summary::new(&s, &RUN);
        let mut out = Vec::new();
        write_json(&mut out, &cfg(), &s, &summary, &RUN, &meta()).expect("Vec write");
        let text = String::from_utf8(out).expect("UTF-8");
        assert!(text.starts_with("{\n  \"format\": \"rshperf-result\",\n  \"version\": 2,"));
        assert!(text.ends_with("}\n"));
        let v: Value = serde_json::from_str(&text).expect("valid");
        assert_eq!(v, doc(&s));
    }

    #[test]
    fn raw_holds_every_stats_field_and_histograms_stay_at_the_top() {
        let s = every_field_set();
        let d = doc(&s);
        let raw = d["raw"].as_object().expect("object");
        let schema = serde_json::to_value(&s).expect("serializable");
        let mut want: Vec<&String> = schema.as_object().expect("object").keys().collect();
        want.retain(|k| *k != "histograms");
        assert_eq!(raw.keys().collect::<Vec<_>>(), want);
        assert_eq!(d["raw"]["tls_handshakes"], json!([1, 2]));
        assert_eq!(d["raw"]["status_200_302"], json!([4, 4]));
        assert_eq!(d["raw"]["servers"][1]["connections"], 20);
        assert_eq!(
            d["raw"]["servers"][1]["response"],
            json!(crate::model::stats::serial::encode_histogram(
                &s.servers[1].response
            ))
        );
        let hists: Vec<&String> = d["histograms"]
            .as_object()
            .expect("object")
            .keys()
            .collect();
        assert_eq!(
            hists,
            ["connect", "response", "transfer", "lifetime", "lateness"]
        );
        // Servers and TLS, which version 1 lost, come back from the document.
        let (t, _) = stats_from_json(&d).expect("readable");
        assert_eq!(t.servers.len(), 2);
        assert_eq!(t.servers[1].response, s.servers[1].response);
        assert_eq!(t.tls_handshakes, [1, 2]);
        assert_eq!(t.status_200_302, [4, 4]);
    }

    #[test]
    fn bad_documents_are_rejected_with_the_place() {
        let good = doc(&every_field_set());
        let err = |edit: &dyn Fn(&mut Value)| {
            let mut v = good.clone();
            edit(&mut v);
            stats_from_json(&v).expect_err("refused")
        };
        assert_eq!(
            err(&|v| v["format"] = json!("httperf")),
            "not an rshperf-result document"
        );
        assert_eq!(
            err(&|v| v["version"] = json!(1)),
            "unsupported rshperf-result version 1 (this rshperf reads 2; write the \
             document again with this rshperf)"
        );
        type Edit<'a> = &'a dyn Fn(&mut Value);
        let cases: [(Edit, &str); 12] = [
            (
                &|v| v["raw"]["errors"] = json!([1, 2]),
                "raw.errors: invalid length 2, expected an array of length 8",
            ),
            (
                &|v| v["raw"]["lifetime_bins"] = json!([[100_001, 1]]),
                "raw.lifetime_bins: bin 100001 out of range (0..=100000)",
            ),
            (
                &|v| v["raw"]["lifetime_bins"] = json!([[5, 1], [5, 2]]),
                "raw.lifetime_bins: bin 5 is not above the bin before it",
            ),
            (
                &|v| v["raw"]["lifetime_bins"] = json!([[5, 1, 3]]),
                "raw.lifetime_bins[0]: invalid length 3, expected fewer elements in array",
            ),
            (
                &|v| v["histograms"]["lateness"] = json!("!!"),
                "histograms.lateness: bad base64: Invalid symbol 33, offset 0.",
            ),
            (
                &|v| v["raw"]["servers"][1]["response"] = json!(7),
                "raw.servers[1].response: invalid type: integer `7`, expected a string",
            ),
            (
                &|v| {
                    v["raw"].as_object_mut().expect("object").remove("requests");
                },
                "raw: missing field `requests`",
            ),
            (
                &|v| {
                    v["raw"].as_object_mut().expect("object").remove("servers");
                },
                "raw: missing field `servers`",
            ),
            (
                &|v| v["raw"]["ab_stats"] = json!({}),
                "raw.ab_stats: unknown field `ab_stats`, expected one of",
            ),
            (
                &|v| v["raw"]["servers"][0]["extra"] = json!(1),
                "raw.servers[0].extra: unknown field `extra`, expected one of",
            ),
            (
                &|v| v["raw"]["connections"] = json!(-1),
                "raw.connections: invalid value: integer `-1`, expected u64",
            ),
            (
                &|v| v["raw"]["lifetime_sumsq_us"] = json!("12x"),
                "raw.lifetime_sumsq_us: \"12x\" is not a decimal string",
            ),
        ];
        for (edit, want) in cases {
            let e = err(edit);
            assert!(e.starts_with(want), "{e}\nwanted: {want}");
        }
        let other = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1 << 40, 3).expect("bounds");
        let e = err(&|v| {
            v["histograms"]["connect"] =
                json!(crate::model::stats::serial::encode_histogram(&other))
        });
        assert!(
            e.starts_with("histograms.connect: bad HdrHistogram V2 data: bounds 1..1099511627776"),
            "{e}"
        );
        let e = err(&|v| {
            v["histograms"]
                .as_object_mut()
                .expect("object")
                .remove("lifetime");
        });
        assert_eq!(e, "histograms: missing field `lifetime`");
        let e = err(&|v| {
            v.as_object_mut().expect("object").remove("histograms");
        });
        assert_eq!(e, "missing histograms");
    }

    #[test]
    fn rfc3339_dates() {
        let at = |us: i64| {
            if us >= 0 {
                UNIX_EPOCH + Duration::from_micros(us as u64)
            } else {
                UNIX_EPOCH - Duration::from_micros(us.unsigned_abs())
            }
        };
        assert_eq!(rfc3339(at(0)), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            rfc3339(at(951_782_400_000_000)),
            "2000-02-29T00:00:00.000000Z"
        );
        assert_eq!(
            rfc3339(at(4_107_542_399_999_999)),
            "2100-02-28T23:59:59.999999Z"
        );
        assert_eq!(rfc3339(at(-1)), "1969-12-31T23:59:59.999999Z");
        assert_eq!(unix_seconds(at(-1_500_000)), -1.5);
        assert_eq!(unix_seconds(at(1_500_000)), 1.5);
    }
}
