//! `--json`: the whole run as one versioned JSON document, and back.
//!
//! Owns the document's frame (`docs/json.md` is its specification): the header, the
//! configuration, the run's facts (`run`: partition, threads, server names, duration
//! and CPU), wall-clock start and end, then the derived figures (`model::report::Report`,
//! generated from the table of figures), and the run's `Stats` exactly
//! (`raw`, and the latency histograms in HdrHistogram V2 form as `histograms`), so
//! that documents of several runs or machines can be merged exactly later. `raw` and
//! `histograms` are `Stats`' own serde schema (`model/stats/mod.rs`), not a list kept here.
//! `stats_from_json` is the reverse, for `rshperf merge`: it rebuilds the `Stats` and
//! `RunInfo` a document was written from, refusing (with the member's path) anything
//! missing, unknown or out of range. Also owns the RFC 3339 formatting of `SystemTime`
//! (no date crate needed). Computes no figure itself; does no I/O beyond the given
//! writer (`write_json_to` opens the named file). Called by the runner, sweep and
//! `rshperf merge`.
//!
//! Figures that are not finite (rates over a zero duration) are `null`: JSON has no
//! `inf` or `NaN`.
//!
//! Longer than the usual 600 lines: writer and reader of one layout belong together,
//! and a third of the file is the tests (exact round trip, merge equivalence, layout,
//! rejected documents).

use std::io::{self, BufWriter, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::model::config::doc::ConfigDoc;
#[cfg(test)]
use crate::model::config::Config;
use crate::model::stats::Stats;

#[cfg(test)]
use crate::model::report::Facts;
use crate::model::report::Report;
use crate::model::run::{RunInfo, RunMeta};
use crate::output::error::DocError;

/// The `format` member of every document.
pub(crate) const FORMAT: &str = "rshperf-result";

/// The `version` member: incremented on any incompatible change of the layout
/// (2: `raw` holds every `Stats` field, `servers`, `tls_handshakes` and
/// `status_200_302` included, and unknown `raw` members are refused).
pub(crate) const VERSION: u64 = 2;

/// Seconds since the Unix epoch (negative before it), floored to the microsecond
/// `rfc3339` names, so a reader rounding them to microseconds gets that text back.
pub(crate) fn unix_seconds(t: SystemTime) -> f64 {
    epoch_micros(t) as f64 / 1e6
}

/// RFC 3339 in UTC with microseconds, e.g. `2024-05-06T07:08:09.123456Z`.
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let us = epoch_micros(t);
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

/// Microseconds since the epoch, floored (negative before it).
fn epoch_micros(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i128,
        Err(e) => -(e.duration().as_micros() as i128),
    }
}

fn time_json(t: SystemTime) -> Value {
    json!({ "rfc3339": rfc3339(t), "unix": unix_seconds(t) })
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

/// The complete document of a run (layout: `docs/json.md`).
#[cfg(test)]
pub(crate) fn to_json(cfg: &Config, stats: &Stats, run: &RunInfo, meta: &RunMeta) -> Value {
    let facts = Facts {
        call_rate: cfg.load().call_rate(),
        servers: meta.servers.clone(),
        validity: None,
    };
    document(
        &ConfigDoc::of(cfg),
        &Report::new(stats, run, &facts),
        stats,
        run,
        meta,
    )
}

/// The document of `report` (derived from `stats` over `run`) with the `config`
/// member `config`: the header, `run` (which, with `config`, `start`, `raw` and
/// `histograms`, is all `rshperf merge` reads back), `start` and `end`, the report's
/// members (`Report` serialised), then `raw` and `histograms`.
pub(crate) fn document(
    config: &ConfigDoc,
    report: &Report,
    stats: &Stats,
    run: &RunInfo,
    meta: &RunMeta,
) -> Value {
    // The names of `raw.servers`' elements (a run of one target has none).
    let servers: &[String] = if stats.servers.is_empty() {
        &[]
    } else {
        &meta.servers
    };
    let mut doc = json!({
        "format": FORMAT,
        "version": VERSION,
        "rshperf_version": env!("CARGO_PKG_VERSION"),
        "config": config.to_json(),
        "run": {
            "partition": [meta.partition.0, meta.partition.1],
            "threads": meta.threads,
            "servers": servers,
            "duration_s": run.duration,
            "cpu_user_s": run.cpu_user,
            "cpu_system_s": run.cpu_system,
        },
        "start": time_json(meta.start),
        "end": time_json(meta.end),
    });
    let obj = doc
        .as_object_mut()
        .expect("the json! literal above is an object");
    if let Value::Object(figures) = report.to_json() {
        obj.extend(figures);
    }
    let (raw, hists) = stats_members(stats);
    obj.insert("raw".into(), raw);
    obj.insert(HISTOGRAMS.into(), hists);
    doc
}

/// Writes `to_json` pretty-printed, with a final newline.
#[cfg(test)]
pub(crate) fn write_json<W: Write>(
    mut out: W,
    cfg: &Config,
    stats: &Stats,
    run: &RunInfo,
    meta: &RunMeta,
) -> io::Result<()> {
    let doc = to_json(cfg, stats, run, meta);
    serde_json::to_writer_pretty(&mut out, &doc)?;
    writeln!(out)?;
    out.flush()
}

/// Writes a document pretty-printed, with a final newline, to stdout when `dest` is
/// `-`, else to the file `dest` (replaced atomically: `file::write_atomic`).
pub(crate) fn write_value_to(dest: &str, doc: &Value) -> io::Result<()> {
    let write = |out: &mut dyn Write| {
        serde_json::to_writer_pretty(&mut *out, doc)?;
        writeln!(out)?;
        out.flush()
    };
    if dest == "-" {
        write(&mut BufWriter::new(io::stdout().lock()))
    } else {
        super::file::write_atomic(std::path::Path::new(dest), write)
    }
}

/// Member `key` of object `v`; `at` names `v` in messages.
fn get<'a>(v: &'a Value, at: &'static str, key: &'static str) -> Result<&'a Value, DocError> {
    v.get(key).ok_or(DocError::Missing { path: at, key })
}

/// Member `key` of `v` as an unsigned integer.
fn get_u64(v: &Value, at: &'static str, key: &'static str) -> Result<u64, DocError> {
    get(v, at, key)?.as_u64().ok_or(DocError::WrongType {
        path: at,
        key,
        expected: "an unsigned integer",
    })
}

/// Member `key` of `v` as a number.
fn get_f64(v: &Value, at: &'static str, key: &'static str) -> Result<f64, DocError> {
    get(v, at, key)?.as_f64().ok_or(DocError::WrongType {
        path: at,
        key,
        expected: "a number",
    })
}

/// Rebuilds the `Stats` and `RunInfo` a document was made from (for merging runs):
/// every field exactly, histograms included. A member missing, of the wrong type, out
/// of range or unknown (it would be lost) is an error naming it, e.g.
/// `raw.errors: invalid length 2, expected an array of length 8`; so are statistics
/// that contradict themselves (`Stats::check`: `raw.replies_by_class: 1000100 replies
/// but 200 requests`).
pub fn stats_from_json(v: &Value) -> Result<(Stats, RunInfo), DocError> {
    let (stats, run) = read_stats(v)?;
    let contradiction = |e: crate::model::stats::MergeError| {
        let path = if e.path.starts_with("histograms") {
            e.path
        } else {
            format!("raw.{}", e.path)
        };
        DocError::Contradiction { path, what: e.what }
    };
    for (key, x) in [
        ("run.duration_s", run.duration),
        ("run.cpu_user_s", run.cpu_user),
        ("run.cpu_system_s", run.cpu_system),
    ] {
        if !(x.is_finite() && x >= 0.0) {
            return Err(DocError::Contradiction {
                path: key.to_string(),
                what: format!("{x} is not a number of seconds"),
            });
        }
    }
    stats.check_totals().map_err(contradiction)?;
    stats.check(run.duration).map_err(contradiction)?;
    Ok((stats, run))
}

/// `stats_from_json` without the checks of what the statistics say (the schema
/// tests read back statistics with every field set, which no run measures).
pub(crate) fn read_stats(v: &Value) -> Result<(Stats, RunInfo), DocError> {
    if v.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(DocError::NotADocument { format: FORMAT });
    }
    let version = get_u64(v, "", "version")?;
    if version != VERSION {
        return Err(DocError::Version {
            format: FORMAT,
            version,
            reads: VERSION,
        });
    }
    // The run's own facts are in `run`; documents of earlier rshperf releases have them
    // only among the figures (`duration_s`, `cpu.user_s`, `cpu.system_s`).
    let facts = get(v, "", "run")?;
    let run = if facts.get("duration_s").is_some() {
        RunInfo {
            duration: get_f64(facts, "run.", "duration_s")?,
            cpu_user: get_f64(facts, "run.", "cpu_user_s")?,
            cpu_system: get_f64(facts, "run.", "cpu_system_s")?,
        }
    } else {
        let cpu = get(v, "", "cpu")?;
        RunInfo {
            duration: get_f64(v, "", "duration_s")?,
            cpu_user: get_f64(cpu, "cpu.", "user_s")?,
            cpu_system: get_f64(cpu, "cpu.", "system_s")?,
        }
    };
    let mut raw = get(v, "", "raw")?.clone();
    let members = raw.as_object_mut().ok_or(DocError::RawNotObject)?;
    if members.contains_key(HISTOGRAMS) {
        return Err(DocError::Misplaced { key: HISTOGRAMS });
    }
    members.insert(HISTOGRAMS.into(), get(v, "", HISTOGRAMS)?.clone());
    let stats: Stats = serde_path_to_error::deserialize(&raw).map_err(|e| {
        let path = e.path().to_string();
        let at = match path.as_str() {
            "." => "raw".to_string(),
            p if p.starts_with(HISTOGRAMS) => p.to_string(),
            p => format!("raw.{p}"),
        };
        DocError::Member {
            path: at,
            source: e.into_inner(),
        }
    })?;
    Ok((stats, run))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::tests::every_field_set;
    use crate::model::stats::{quantile_ms, ErrorKind, RateSample, LIFETIME_BINS};
    use crate::model::threshold;
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
        Config::local(|b| {
            b.uri("/a,b")
                .rate(250.0)
                .num_conns(50)
                .fail_on(threshold::parse("p99>50ms").expect("a threshold"));
        })
    }

    fn doc(s: &Stats) -> Value {
        to_json(&cfg(), s, &RUN, &meta())
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
            let (t, run) = read_stats(&back).expect("readable document");
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
        let (mut from_docs, _) = read_stats(&doc(&a)).expect("a");
        let (b2, _) = read_stats(&doc(&b)).expect("b");
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
                "percentiles",
                "tls_handshakes",
                "abandoned",
                "interrupted",
                "unanswered",
                "unanswered_max_ms",
                "sessions",
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
        let d = to_json(&cfg(), &s, &zero, &meta());
        assert!(d.get("sessions").is_none());
        assert_eq!(d["connections"]["rate"], Value::Null);
        assert_eq!(d["requests"]["rate"], Value::Null);
        assert_eq!(d["raw"]["lifetime_min_us"], Value::Null);
        assert_eq!(d["raw"]["lifetime_bins"], json!([]));
    }

    #[test]
    fn write_json_is_pretty_with_a_final_newline() {
        let s = sample_stats();
        let mut out = Vec::new();
        write_json(&mut out, &cfg(), &s, &RUN, &meta()).expect("Vec write");
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
        let (t, _) = read_stats(&d).expect("readable");
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
            read_stats(&v).expect_err("refused").to_string()
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
