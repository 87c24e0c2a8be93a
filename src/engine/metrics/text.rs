//! The Prometheus text exposition format (version 0.0.4) of a metrics `Snapshot`.
//!
//! Owns the rendering of the metric families, which are declared with the table of
//! figures (`model::figure::family`: names, types, help texts, labels, and the JSON
//! leaf each exports): `series` turns one run's (or sweep step's) snapshot into sample
//! lines tagged with their family, `document` groups the lines of any number of runs
//! by family, each family once, after its `# HELP` and `# TYPE` lines, as the format
//! requires. Label values are the schema's keys (`ErrorKind::key`, the status
//! classes). The `stream` families only when the snapshot has stream figures
//! (`--stream`). Pure functions; called by `metrics`.

use std::fmt::Write;

use super::{HistSnap, RunLabels, ServerSnap, Snapshot, BUCKETS};
use crate::model::figure::family::{self as fam, Family, FAMILIES};
use crate::model::stats::ErrorKind;

/// The `Content-Type` of a scrape.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A sample line tagged with its family.
pub(crate) type Sample = (&'static Family, String);

/// Escapes a label value (backslash, double quote, newline).
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// `{a="x",b="y"}` of `pairs` (nothing when empty).
fn labels(pairs: &[(&str, String)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// A float as the format writes it (Go's ParseFloat reads Rust's `Display`).
fn float(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else if v > 0.0 {
        "+Inf".into()
    } else if v < 0.0 {
        "-Inf".into()
    } else {
        "NaN".into()
    }
}

/// The sample lines of one run's `snap`.
pub(crate) fn series(snap: &Snapshot, run: &RunLabels) -> Vec<Sample> {
    let mut out: Vec<Sample> = Vec::new();
    let base: Vec<(&str, String)> = run
        .step
        .map(|s| vec![("step", s.to_string())])
        .unwrap_or_default();
    let mut push = |family: &'static Family, extra: &[(&str, String)], value: String| {
        let mut all = base.clone();
        all.extend(extra.iter().cloned());
        out.push((family, format!("{}{} {value}", family.name, labels(&all))));
    };
    // Counters kept per server: one series per server with --servers.
    let per_server = !run.servers.is_empty() && snap.servers.len() == run.servers.len();
    let scopes: Vec<(Vec<(&str, String)>, ServerSnap)> = if per_server {
        run.servers
            .iter()
            .zip(&snap.servers)
            .map(|(name, s)| (vec![("server", name.clone())], s.clone()))
            .collect()
    } else {
        let all = ServerSnap {
            connections: snap.connections,
            requests: snap.requests,
            replies_by_class: snap.replies_by_class,
            errors: snap.errors,
        };
        vec![(Vec::new(), all)]
    };
    for (scope, s) in &scopes {
        let (classes, errors) = (&s.replies_by_class, &s.errors);
        push(&fam::CONNECTIONS, scope, s.connections.to_string());
        push(&fam::REQUESTS, scope, s.requests.to_string());
        // The report's status classes (`status_1xx` … `status_5xx`), then the rest.
        for (c, n) in classes.iter().enumerate().take(6).skip(1) {
            let mut l = scope.clone();
            l.push(("class", format!("{c}xx")));
            push(&fam::REPLIES, &l, n.to_string());
        }
        let other: u64 = classes[0] + classes[6..].iter().sum::<u64>();
        let mut l = scope.clone();
        l.push(("class", "other".to_string()));
        push(&fam::REPLIES, &l, other.to_string());
        for (k, kind) in ErrorKind::ALL.iter().enumerate() {
            let mut l = scope.clone();
            l.push(("kind", kind.key()));
            push(&fam::ERRORS, &l, errors[k].to_string());
        }
    }
    push(&fam::CONNECTS, &[], snap.connects.to_string());
    push(&fam::REQUEST_BYTES, &[], snap.request_bytes.to_string());
    push(&fam::REPLY_BYTES, &[], snap.reply_bytes.to_string());
    push(
        &fam::SESSIONS,
        &[("outcome", "ok".into())],
        snap.sessions[0].to_string(),
    );
    push(
        &fam::SESSIONS,
        &[("outcome", "failed".into())],
        snap.sessions[1].to_string(),
    );
    for (outcome, n) in ["completed", "lost", "unsent", "abandoned"]
        .into_iter()
        .zip(snap.calls)
    {
        push(&fam::CALLS, &[("outcome", outcome.into())], n.to_string());
    }
    push(&fam::OPEN, &[], snap.open.to_string());
    if let Some(r) = run.offered_rate {
        push(&fam::OFFERED, &[], float(r));
    }
    push(&fam::REPLY_RATE, &[], float(snap.reply_rate));
    push(&fam::CONNECTION_RATE, &[], float(snap.conn_rate));
    for (family, h) in [
        (&fam::RESPONSE, &snap.response),
        (&fam::CONNECT, &snap.connect),
        (&fam::LATENESS, &snap.lateness),
    ] {
        histogram(&mut out, family, &base, h);
    }
    // Only a `--stream` run has them (`Served::Stream`).
    if let Some(st) = &snap.stream {
        for (family, n) in [
            (&fam::STREAMS, st.streams),
            (&fam::STREAM_EVENTS, st.events),
            (&fam::STREAM_DONE, st.done),
            (&fam::STREAM_CUT, st.cut),
            (&fam::STREAM_STALLED, st.stalled),
        ] {
            out.push((family, format!("{}{} {n}", family.name, labels(&base))));
        }
        histogram(&mut out, &fam::STREAM_FIRST_EVENT, &base, &st.first_event);
        histogram(&mut out, &fam::STREAM_GAP, &base, &st.gap);
    }
    out
}

/// The `_bucket`, `_sum` and `_count` lines of one histogram.
fn histogram(
    out: &mut Vec<Sample>,
    family: &'static Family,
    base: &[(&str, String)],
    h: &HistSnap,
) {
    let name = family.name;
    for (bound, count) in BUCKETS.iter().zip(h.le) {
        let mut l = base.to_vec();
        l.push(("le", float(*bound)));
        out.push((family, format!("{name}_bucket{} {count}", labels(&l))));
    }
    let mut l = base.to_vec();
    l.push(("le", "+Inf".into()));
    out.push((family, format!("{name}_bucket{} {}", labels(&l), h.count)));
    out.push((
        family,
        format!("{name}_sum{} {}", labels(base), float(h.sum)),
    ));
    out.push((family, format!("{name}_count{} {}", labels(base), h.count)));
}

/// The exposition: every family with samples, in `FAMILIES` order, its `# HELP` and
/// `# TYPE` lines first, its samples in the order given.
pub(crate) fn document(samples: &[Sample]) -> String {
    let mut text = String::with_capacity(samples.len() * 64 + 2048);
    for f in FAMILIES {
        let mut lines = samples.iter().filter(|(k, _)| k.name == f.name).peekable();
        if lines.peek().is_none() {
            continue;
        }
        let _ = writeln!(text, "# HELP {} {}", f.name, f.help);
        let _ = writeln!(text, "# TYPE {} {}", f.name, f.kind.name());
        for (_, line) in lines {
            text.push_str(line);
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::metrics::ServerSnap;
    use crate::model::threshold::metric_names;

    #[test]
    fn report_counters_are_named_as_their_figures_and_the_docs_list_every_family() {
        let figures: Vec<&str> = FAMILIES
            .iter()
            .filter_map(|f| f.name.strip_prefix("rshperf_"))
            .filter(|n| metric_names().iter().any(|m| m == n))
            .collect();
        assert_eq!(
            figures,
            [
                "connections_total",
                "requests_total",
                "replies_total",
                "errors_total",
                "sessions_total"
            ]
        );
        let doc = include_str!("../../../docs/metrics.md");
        let section = doc
            .split("\n## Metrics\n")
            .nth(1)
            .and_then(|rest| rest.split("\n## ").next())
            .expect("docs/metrics.md has a Metrics section");
        let listed: Vec<&str> = section
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .collect();
        let families: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
        assert_eq!(
            listed, families,
            "docs/metrics.md lists every family, in order"
        );
    }

    /// A sample line's name, labels and value.
    fn parse(line: &str) -> (&str, Vec<(&str, &str)>, f64) {
        let (head, value) = line.rsplit_once(' ').expect("name and value");
        let (name, labels) = match head.split_once('{') {
            Some((n, rest)) => {
                let inner = rest.strip_suffix('}').expect("closing brace");
                let pairs = inner
                    .split(',')
                    .map(|p| {
                        let (k, v) = p.split_once('=').expect("label=value");
                        (k, v.trim_matches('"'))
                    })
                    .collect();
                (n, pairs)
            }
            None => (head, Vec::new()),
        };
        let v = if value == "+Inf" {
            f64::INFINITY
        } else {
            value.parse().expect("a number")
        };
        (name, labels, v)
    }

    /// The number at JSON path `path` of `doc` (`.`-separated).
    fn at(doc: &serde_json::Value, path: &str) -> Option<f64> {
        path.split('.').try_fold(doc, |v, k| v.get(k))?.as_f64()
    }

    #[test]
    fn every_family_reports_its_figures_of_the_document() {
        use crate::model::figure::family::Type;
        use crate::model::figure::Keys;
        use crate::model::report::{Facts, Report};
        use crate::model::run::RunInfo;
        let stats = crate::model::stats::tests::every_field_set();
        let info = RunInfo {
            duration: 2.0,
            cpu_user: 0.5,
            cpu_system: 0.25,
        };
        let doc = Report::new(&stats, &info, &Facts::default()).to_json();
        let raw = serde_json::json!({ "raw": serde_json::to_value(&stats).expect("Stats") });
        let mut snap = Snapshot::default();
        snap.take(&stats, 3);
        let run = RunLabels {
            step: Some(1),
            offered_rate: Some(10.0),
            servers: Vec::new(),
        };
        let samples = series(&snap, &run);
        for f in FAMILIES {
            let lines: Vec<_> = samples
                .iter()
                .filter(|(k, _)| k.name == f.name)
                .map(|(_, l)| parse(l))
                .collect();
            assert!(!lines.is_empty(), "{} has no sample", f.name);
            for (name, labels, _) in &lines {
                assert!(name.starts_with(f.name), "{name}");
                for (k, _) in labels {
                    assert!(
                        *k == "step" || *k == "le" || f.labels.contains(k),
                        "{}: label {k} not declared",
                        f.name
                    );
                }
            }
            let value = |path: &str| {
                at(&doc, path)
                    .or_else(|| at(&raw, path))
                    .unwrap_or_else(|| panic!("{}: no figure {path}", f.name))
            };
            if f.leaves
                .iter()
                .any(|l| l.starts_with("timeline[]") || l.starts_with("config."))
            {
                // Live gauges: what the last second or the configuration says.
                continue;
            }
            if f.kind == Type::Histogram {
                // `_count` is the histogram's count; the scale puts its largest value
                // in the bucket that first holds every value.
                let leaf = f.leaves[0];
                let count = value(&format!("{leaf}.count"));
                let max = value(&format!("{leaf}.max")) * f.scale;
                let le = |bound: f64| {
                    lines
                        .iter()
                        .find(|(n, l, _)| {
                            n.ends_with("_bucket")
                                && l.iter().any(|(k, v)| *k == "le" && v.parse() == Ok(bound))
                        })
                        .map(|(_, _, v)| *v)
                        .expect("bucket")
                };
                let total = lines
                    .iter()
                    .find(|(n, _, _)| n.ends_with("_count"))
                    .map(|(_, _, v)| *v);
                assert_eq!(total, Some(count), "{}", f.name);
                let i = BUCKETS
                    .iter()
                    .position(|b| *b >= max)
                    .expect("a bucket holds the max");
                assert_eq!(le(BUCKETS[i]), count, "{}", f.name);
                assert!(i == 0 || le(BUCKETS[i - 1]) < count, "{}", f.name);
                continue;
            }
            match f.leaves[0].find('{') {
                // One series per key of the label (summed over servers); other label
                // values (class `other`) are not in the document.
                Some(_) => {
                    let leaf = f.leaves[0];
                    let keys = [Keys::Class, Keys::Kind]
                        .into_iter()
                        .find(|k| leaf.contains(k.placeholder()))
                        .expect("a key set");
                    let label = keys.placeholder().trim_matches(['{', '}']);
                    for (key, _) in keys.keys() {
                        let sum: f64 = lines
                            .iter()
                            .filter(|(_, l, _)| l.contains(&(label, key.as_str())))
                            .map(|(_, _, v)| v)
                            .sum();
                        let want = value(&leaf.replace(keys.placeholder(), key));
                        assert_eq!(sum, want, "{} {label}={key}", f.name);
                    }
                }
                None => {
                    let sum: f64 = lines.iter().map(|(_, _, v)| v).sum();
                    let want: f64 = f.leaves.iter().map(|l| value(l) * f.scale).sum();
                    assert_eq!(sum, want, "{}", f.name);
                }
            }
        }
    }

    #[test]
    fn stream_families_are_served_by_stream_runs_only() {
        use crate::model::figure::family::Served;
        let run = RunLabels::default();
        let served = |stats: &crate::model::stats::Stats| {
            let mut snap = Snapshot::default();
            snap.take(stats, 0);
            let samples = series(&snap, &run);
            FAMILIES
                .iter()
                .filter(|f| samples.iter().any(|(k, _)| k.name == f.name))
                .map(|f| f.name)
                .collect::<Vec<_>>()
        };
        let always: Vec<&str> = FAMILIES
            .iter()
            .filter(|f| f.served == Served::Always && f.name != fam::OFFERED.name)
            .map(|f| f.name)
            .collect();
        assert_eq!(served(&crate::model::stats::Stats::new()), always);
        // `--stream` given, nothing streamed yet: every family, the stream ones at 0.
        let mut stats = crate::model::stats::Stats::new();
        stats.stream.engines = 1;
        let all: Vec<&str> = FAMILIES
            .iter()
            .filter(|f| f.name != fam::OFFERED.name)
            .map(|f| f.name)
            .collect();
        assert_eq!(served(&stats), all);
        for f in FAMILIES.iter().filter(|f| f.served == Served::Stream) {
            assert!(
                f.leaves.iter().all(|l| l.starts_with("stream.")),
                "{}: a leaf of the stream member",
                f.name
            );
        }
    }

    #[test]
    fn stream_families_render_a_known_tally_exactly() {
        use crate::model::stats::stream::StreamEnd;
        let mut stats = crate::model::stats::Stats::new();
        let st = &mut stats.stream;
        st.engines = 1;
        let ms = |n: u64| std::time::Duration::from_micros(n);
        // Two streams: 3 events (first at 1.5 ms, gaps 0.2 and 0.3 ms) ending with
        // [DONE]; 1 event (first at 0.7 ms), cut and stalled.
        st.on_event(10, None, ms(1500));
        st.on_event(10, Some(ms(200)), ms(0));
        st.on_event(10, Some(ms(300)), ms(0));
        st.on_end(StreamEnd {
            events: 3,
            done: true,
            cut: false,
            stalled: false,
            after_done: 0,
            open_at_end: false,
            duration: Some(ms(500)),
        });
        st.on_event(10, None, ms(700));
        st.on_end(StreamEnd {
            events: 1,
            done: false,
            cut: true,
            stalled: true,
            after_done: 0,
            open_at_end: false,
            duration: Some(ms(0)),
        });
        let mut snap = Snapshot::default();
        snap.take(&stats, 0);
        // Two engines' snapshots add up.
        let mut two = snap.clone();
        two.add(&snap);
        let text = document(&series(&two, &RunLabels::default()));
        let from = text
            .find("# HELP rshperf_streams_total")
            .expect("the stream families");
        let bucket = |name: &str, le: [u64; 16], count: u64, sum: &str| {
            let mut s = String::new();
            for (b, n) in BUCKETS.iter().zip(le) {
                s += &format!("{name}_bucket{{le=\"{b}\"}} {n}\n");
            }
            s + &format!(
                "{name}_bucket{{le=\"+Inf\"}} {count}\n{name}_sum {sum}\n{name}_count {count}\n"
            )
        };
        let want = format!(
            "# HELP rshperf_streams_total {}\n\
             # TYPE rshperf_streams_total counter\n\
             rshperf_streams_total 4\n\
             # HELP rshperf_stream_events_total {}\n\
             # TYPE rshperf_stream_events_total counter\n\
             rshperf_stream_events_total 8\n\
             # HELP rshperf_stream_done_total {}\n\
             # TYPE rshperf_stream_done_total counter\n\
             rshperf_stream_done_total 2\n\
             # HELP rshperf_stream_cut_total {}\n\
             # TYPE rshperf_stream_cut_total counter\n\
             rshperf_stream_cut_total 2\n\
             # HELP rshperf_stream_stalled_total {}\n\
             # TYPE rshperf_stream_stalled_total counter\n\
             rshperf_stream_stalled_total 2\n\
             # HELP rshperf_stream_first_event_seconds {}\n\
             # TYPE rshperf_stream_first_event_seconds histogram\n\
             {}\
             # HELP rshperf_stream_gap_seconds {}\n\
             # TYPE rshperf_stream_gap_seconds histogram\n\
             {}",
            fam::STREAMS.help,
            fam::STREAM_EVENTS.help,
            fam::STREAM_DONE.help,
            fam::STREAM_CUT.help,
            fam::STREAM_STALLED.help,
            fam::STREAM_FIRST_EVENT.help,
            // 0.7 ms and 1.5 ms, twice: 4.4 ms in all.
            bucket(
                "rshperf_stream_first_event_seconds",
                [0, 0, 0, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4],
                4,
                "0.0044"
            ),
            fam::STREAM_GAP.help,
            // 0.2 ms and 0.3 ms, twice: 1 ms in all.
            bucket(
                "rshperf_stream_gap_seconds",
                [0, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4],
                4,
                "0.001"
            ),
        );
        assert_eq!(&text[from..], want);
    }

    #[test]
    fn calls_are_one_series_per_outcome() {
        let mut stats = crate::model::stats::Stats::new();
        let p = &mut stats.pool;
        (p.completed, p.lost, p.unsent, p.abandoned) = (5, 1, 3, 2);
        let mut snap = Snapshot::default();
        snap.take(&stats, 0);
        let run = RunLabels {
            step: None,
            offered_rate: None,
            servers: Vec::new(),
        };
        let text = document(&series(&snap, &run));
        for line in [
            "rshperf_calls_total{outcome=\"completed\"} 5\n",
            "rshperf_calls_total{outcome=\"lost\"} 1\n",
            "rshperf_calls_total{outcome=\"unsent\"} 3\n",
            "rshperf_calls_total{outcome=\"abandoned\"} 2\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }

    #[test]
    fn servers_and_steps_are_labels_and_families_stay_together() {
        let mut snap = Snapshot::default();
        snap.replies_by_class[2] = 7;
        snap.replies_by_class[4] = 1;
        snap.servers = vec![
            ServerSnap {
                connections: 3,
                requests: 5,
                replies_by_class: [0, 0, 5, 0, 0, 0, 0, 0, 0, 0],
                errors: [0; 8],
            },
            ServerSnap {
                connections: 2,
                requests: 3,
                replies_by_class: [0, 0, 2, 0, 1, 0, 0, 0, 0, 0],
                errors: [0, 0, 1, 0, 0, 0, 0, 0],
            },
        ];
        let run = |step| RunLabels {
            step: Some(step),
            offered_rate: Some(50.0),
            servers: vec!["a:80".into(), "b\"q:81".into()],
        };
        let mut all = series(&snap, &run(1));
        all.extend(series(&snap, &run(2)));
        let text = document(&all);
        assert!(
            text.contains("rshperf_replies_total{step=\"1\",server=\"a:80\",class=\"2xx\"} 5\n")
        );
        assert!(text.contains(
            "rshperf_errors_total{step=\"2\",server=\"b\\\"q:81\",kind=\"connrefused\"} 1\n"
        ));
        assert!(text.contains("rshperf_offered_arrivals_per_second{step=\"2\"} 50\n"));
        assert!(text.contains("rshperf_response_seconds_bucket{step=\"1\",le=\"+Inf\"} 0\n"));
        // Each family once, both steps' samples inside it.
        assert_eq!(
            text.matches("# TYPE rshperf_replies_total counter").count(),
            1
        );
        let block = text
            .split("# HELP ")
            .find(|b| b.starts_with("rshperf_replies_total "))
            .expect("block");
        assert_eq!(block.matches("rshperf_replies_total{").count(), 2 * 2 * 6);
    }
}
