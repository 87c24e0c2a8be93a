//! The Prometheus text exposition format (version 0.0.4) of a metrics `Snapshot`.
//!
//! Owns the metric families (names, types, help texts, labels) and their rendering:
//! `series` turns one run's (or sweep step's) snapshot into sample lines tagged with
//! their family, `document` groups the lines of any number of runs by family, each
//! family once, after its `# HELP` and `# TYPE` lines, as the format requires. Names
//! follow Prometheus' conventions: `rshperf_` prefix, base units (seconds, bytes),
//! `_total` on counters. The families of the report's counters are `rshperf_` and the
//! figure's name in the report schema (`connections_total`, `errors_total`, …; checked
//! by a test against the generated names), broken down by labels whose values are the
//! schema's keys (`ErrorKind::key`, the status classes). Pure functions; called by
//! `metrics`.

use std::fmt::Write;

use super::{HistSnap, RunLabels, ServerSnap, Snapshot, BUCKETS};
use crate::model::stats::ErrorKind;

/// The `Content-Type` of a scrape.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One family: name, type, help.
struct Family(&'static str, &'static str, &'static str);

/// Every family, in exposition order (a sample's family is its index).
const FAMILIES: [Family; 15] = [
    Family(
        "rshperf_connections_total",
        "counter",
        "Connections that reached the connecting stage.",
    ),
    Family(
        "rshperf_connects_total",
        "counter",
        "Connections established (TLS: handshake done).",
    ),
    Family(
        "rshperf_requests_total",
        "counter",
        "Requests completely written.",
    ),
    Family(
        "rshperf_request_bytes_total",
        "counter",
        "Request bytes written (headers and bodies).",
    ),
    Family(
        "rshperf_replies_total",
        "counter",
        "Completed replies by status class; the report's replies are the 1xx to 5xx classes.",
    ),
    Family(
        "rshperf_reply_bytes_total",
        "counter",
        "Reply bytes received (headers, bodies, chunk framing and trailers).",
    ),
    Family(
        "rshperf_errors_total",
        "counter",
        "Failed connections and calls by kind, as the report's Errors lines.",
    ),
    Family(
        "rshperf_sessions_total",
        "counter",
        "Sessions ended, by outcome (session workloads).",
    ),
    Family("rshperf_open_connections", "gauge", "Connections open now."),
    Family(
        "rshperf_offered_arrivals_per_second",
        "gauge",
        "Arrival rate asked for (connections or sessions per second; absent without a rate).",
    ),
    Family(
        "rshperf_achieved_replies_per_second",
        "gauge",
        "Replies per second over the last second.",
    ),
    Family(
        "rshperf_achieved_connections_per_second",
        "gauge",
        "Connections started per second over the last second.",
    ),
    Family(
        "rshperf_response_seconds",
        "histogram",
        "Response time: request send start to the reply's status line.",
    ),
    Family(
        "rshperf_connect_seconds",
        "histogram",
        "Connect time (TLS: handshake included), successful connects.",
    ),
    Family(
        "rshperf_lateness_seconds",
        "histogram",
        "Arrival lateness: connect start minus its scheduled time.",
    ),
];

/// A sample line tagged with its family.
pub(crate) type Sample = (usize, String);

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
    let mut push = |family: usize, extra: &[(&str, String)], value: String| {
        let mut all = base.clone();
        all.extend(extra.iter().cloned());
        out.push((
            family,
            format!("{}{} {value}", FAMILIES[family].0, labels(&all)),
        ));
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
        push(0, scope, s.connections.to_string());
        push(2, scope, s.requests.to_string());
        // The report's status classes (`status_1xx` … `status_5xx`), then the rest.
        for (c, n) in classes.iter().enumerate().take(6).skip(1) {
            let mut l = scope.clone();
            l.push(("class", format!("{c}xx")));
            push(4, &l, n.to_string());
        }
        let other: u64 = classes[0] + classes[6..].iter().sum::<u64>();
        let mut l = scope.clone();
        l.push(("class", "other".to_string()));
        push(4, &l, other.to_string());
        for (k, kind) in ErrorKind::ALL.iter().enumerate() {
            let mut l = scope.clone();
            l.push(("kind", kind.key()));
            push(6, &l, errors[k].to_string());
        }
    }
    push(1, &[], snap.connects.to_string());
    push(3, &[], snap.request_bytes.to_string());
    push(5, &[], snap.reply_bytes.to_string());
    push(7, &[("outcome", "ok".into())], snap.sessions[0].to_string());
    push(
        7,
        &[("outcome", "failed".into())],
        snap.sessions[1].to_string(),
    );
    push(8, &[], snap.open.to_string());
    if let Some(r) = run.offered_rate {
        push(9, &[], float(r));
    }
    push(10, &[], float(snap.reply_rate));
    push(11, &[], float(snap.conn_rate));
    for (family, h) in [
        (12, &snap.response),
        (13, &snap.connect),
        (14, &snap.lateness),
    ] {
        histogram(&mut out, family, &base, h);
    }
    out
}

/// The `_bucket`, `_sum` and `_count` lines of one histogram.
fn histogram(out: &mut Vec<Sample>, family: usize, base: &[(&str, String)], h: &HistSnap) {
    let name = FAMILIES[family].0;
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
    for (i, f) in FAMILIES.iter().enumerate() {
        let mut lines = samples.iter().filter(|(k, _)| *k == i).peekable();
        if lines.peek().is_none() {
            continue;
        }
        let _ = writeln!(text, "# HELP {} {}", f.0, f.2);
        let _ = writeln!(text, "# TYPE {} {}", f.0, f.1);
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
            .filter_map(|f| f.0.strip_prefix("rshperf_"))
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
        let families: Vec<&str> = FAMILIES.iter().map(|f| f.0).collect();
        assert_eq!(
            listed, families,
            "docs/metrics.md lists every family, in order"
        );
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
