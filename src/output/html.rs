//! `--html=FILE`: one self-contained HTML file with charts and tables, for a plain run
//! and for a sweep.
//!
//! Owns the page layout (inline CSS, inline SVG charts from `chart`, tables), the
//! choice of charts and their series. A single run: offered vs achieved per second,
//! response percentiles per second, errors per second, open connections per second,
//! the response-time percentile distribution, and a table of the command, the summary
//! figures and the verdict. A sweep: demanded vs achieved rate with the knee marked,
//! response p50/p90/p99, errors % and client lateness p99 against the rate, and the
//! step table. Nothing is fetched: the file opens offline. The markup is well-formed
//! XML (XHTML syntax), so tests and tools can parse it. Called by the runner and the
//! sweep; does no I/O beyond writing the named file.

use std::io;
use std::path::Path;

use crate::model::config::Config;
use crate::model::run::RunResult;
use crate::model::stats::ErrorKind;
use crate::output::advice::Advice;
use crate::output::error::RenderError;

use super::chart::{self, Bands, Chart, Series};
use super::summary::Summary;
use crate::model::figure::second::{column, rows, table};
use crate::model::figure::Val;
use crate::model::stats::quantile_ms;
use hdrhistogram::Histogram;

const STYLE: &str = "body{font-family:sans-serif;margin:24px auto;max-width:940px;color:#222}\
h1{font-size:22px}h2{font-size:17px;margin-top:28px}\
table{border-collapse:collapse;font-size:13px;margin:8px 0}\
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#f2f2f2}td.l,th.l{text-align:left}\
.warn{color:#b00000;font-weight:bold}.ok{color:#006400;font-weight:bold}\
.note{color:#555;font-size:13px}\
.cmd{font-family:monospace;font-size:12px;word-break:break-all;text-align:left}\
figure{margin:12px 0}";

/// `text` with the XML special characters escaped.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A complete document around `body` (already markup).
fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\
         <meta charset=\"utf-8\"/><title>{t}</title><style>{STYLE}</style></head>\n\
         <body>\n<h1>{t}</h1>\n{body}</body>\n</html>\n",
        t = escape(title)
    )
}

/// A two-column table of (name, value) pairs; values are text (escaped here).
fn facts(rows: &[(String, String)]) -> String {
    let mut out = String::from("<table>\n");
    for (k, v) in rows {
        out.push_str(&format!(
            "<tr><th class=\"l\">{}</th><td class=\"l\">{}</td></tr>\n",
            escape(k),
            escape(v)
        ));
    }
    out.push_str("</table>\n");
    out
}

/// The verdict block: each warning, or that there was none; then the notes
/// (`Finding::is_note`, facts about a run that did what was asked), in grey, as the
/// text report keeps them to `-v`.
fn verdict(advice: &[Advice]) -> String {
    let (notes, warnings): (Vec<&Advice>, Vec<&Advice>) =
        advice.iter().partition(|a| a.finding.is_note());
    let mut out = if warnings.is_empty() {
        "<p class=\"ok\">No warnings: the client kept its schedule.</p>\n".to_string()
    } else {
        warnings
            .iter()
            .map(|a| format!("<p class=\"warn\">warning: {}</p>\n", escape(&a.text)))
            .collect()
    };
    for a in notes {
        out.push_str(&format!(
            "<p class=\"note\">note: {}</p>\n",
            escape(&a.text)
        ));
    }
    out
}

/// Charts as `<figure>` elements.
fn figures(charts: &[Chart]) -> Result<String, RenderError> {
    let mut out = String::new();
    for c in charts {
        out.push_str("<figure>");
        out.push_str(&chart::svg(c)?);
        out.push_str("</figure>\n");
    }
    Ok(out)
}

fn ms(x: f64) -> String {
    format!("{x:.3} ms")
}

/// The seconds of a run: (start, length, the second's figures).
type Seconds = [(u64, f64, Vec<Val>)];

/// A series of the second's figure `name`, labelled as the table says: x = the start
/// of the second, y = the value (per second when `rate`).
fn series(seconds: &Seconds, name: &str, rate: bool) -> Series {
    let col = column(name);
    let points = seconds
        .iter()
        .filter(|(_, len, _)| *len > 0.0)
        .map(|(start, len, values)| {
            let v = col
                .and_then(|c| values.get(c))
                .and_then(Val::number)
                .unwrap_or(f64::NAN);
            (*start as f64, if rate { v / len } else { v })
        })
        .collect();
    let label = col
        .and_then(|c| table().specs[c].html.as_deref())
        .unwrap_or(name);
    Series::new(label, points)
}

/// The second's count `name` held over its second, as steps: a point at the second's
/// start and one at its end, so a count is drawn flat with risers between seconds
/// instead of ramps between whole-second samples.
fn held(seconds: &Seconds, name: &str) -> Series {
    let mut held = series(seconds, name, false);
    let lengths = seconds
        .iter()
        .map(|(_, len, _)| *len)
        .filter(|len| *len > 0.0);
    held.points = held
        .points
        .iter()
        .zip(lengths)
        .flat_map(|(&(x, v), len)| [(x, v), (x + len, v)])
        .collect();
    held
}

/// The label of the percentile 1 − 10^−`decade` (`0%`, `90%`, `99%`, `99.9%`, …).
fn percentile_name(decade: usize) -> String {
    match decade {
        0 => "0%".into(),
        1 => "90%".into(),
        d => format!("99{}{}%", if d > 2 { "." } else { "" }, "9".repeat(d - 2)),
    }
}

/// The response-time distribution as HdrHistogram's plotter draws it: x is
/// log10(1/(1−p)), so 90 %, 99 %, 99.9 % … are equally spaced and the tail is
/// readable. Points at p = 1 − 2^(−k/4) while 1/(1−p) stays within the count, then
/// the maximum at log10(count); and the axis' decade names, at least up to 99 %.
fn distribution(h: &Histogram<u64>) -> (Vec<(f64, f64)>, Vec<String>) {
    let count = h.len() as f64;
    let mut points = Vec::new();
    if count > 0.0 {
        for k in 0.. {
            let inverse = 2f64.powf(f64::from(k) / 4.0);
            if inverse > count {
                break;
            }
            points.push((inverse.log10(), quantile_ms(h, 1.0 - 1.0 / inverse)));
        }
        if count > 1.0 {
            points.push((count.log10(), quantile_ms(h, 1.0)));
        }
    }
    let decades = (count.max(1.0).log10().ceil() as usize).max(2);
    (points, (0..=decades).map(percentile_name).collect())
}

/// The charts of a single run: the second's figures the table labels for HTML.
fn run_charts(run: &RunResult) -> Vec<Chart> {
    let seconds = rows(&run.stats.timeline);
    let x = "time since start [s]".to_string();
    let mut errors = vec![series(&seconds, "errors.total", true)];
    for (k, kind) in ErrorKind::ALL.iter().enumerate() {
        if run.stats.errors[k] > 0 {
            errors.push(series(&seconds, &format!("errors.{}", kind.key()), true));
        }
    }
    let (distribution, names) = distribution(&run.stats.hist.response);
    let response = ["p50", "p90", "p99", "max"].map(|q| format!("response_ms.{q}"));
    vec![
        Chart {
            title: "Offered vs achieved, per second".into(),
            x_desc: x.clone(),
            y_desc: "per second".into(),
            series: ["offered", "connections", "replies"]
                .iter()
                .map(|n| series(&seconds, n, true))
                .collect(),
            ..Chart::default()
        },
        Chart {
            title: "Response time, per second".into(),
            x_desc: x.clone(),
            y_desc: "response time [ms]".into(),
            series: response
                .iter()
                .map(|n| series(&seconds, n, false))
                .collect(),
            ..Chart::default()
        },
        Chart {
            title: "Errors per second".into(),
            x_desc: x.clone(),
            y_desc: "errors/s".into(),
            series: errors,
            ..Chart::default()
        },
        Chart {
            title: "Open connections".into(),
            x_desc: x,
            y_desc: "connections open at the end of the second".into(),
            series: vec![held(&seconds, "open")],
            integer_y: true,
            ..Chart::default()
        },
        Chart {
            title: "Response-time distribution (whole run)".into(),
            x_desc: "percentile (log scale of 1/(1−p))".into(),
            y_desc: "response time [ms]".into(),
            series: vec![Series::new("response time", distribution)],
            x_range: Some((0.0, (names.len() - 1) as f64)),
            x_names: names,
            ..Chart::default()
        },
    ]
}

/// The page of a single run.
pub(crate) fn run_page(
    cfg: &Config,
    run: &RunResult,
    summary: &Summary<'_>,
    advice: &[Advice],
) -> Result<String, RenderError> {
    let s = summary;
    let h = &run.stats.hist;
    let errors: Vec<String> = ErrorKind::ALL
        .iter()
        .zip(s.errors)
        .filter(|&(_, n)| n > 0)
        .map(|(kind, n)| format!("{} {n}", kind.name()))
        .collect();
    let facts_rows = vec![
        ("command".into(), cfg.echo_line()),
        ("duration".into(), format!("{:.3} s", s.duration)),
        (
            "connections / requests / replies".into(),
            format!("{} / {} / {}", s.connections, s.requests, s.replies),
        ),
        (
            "connection rate / request rate".into(),
            format!("{:.1} conn/s / {:.1} req/s", s.conn_rate, s.request_rate),
        ),
        ("mean response time".into(), ms(s.response_avg_ms)),
        (
            "response p50 / p90 / p99 / max".into(),
            ["p50", "p90", "p99", "max"]
                .iter()
                .zip([0.5, 0.9, 0.99, 1.0])
                .map(|(_, q)| format!("{:.3}", quantile_ms(&h.response, q)))
                .collect::<Vec<_>>()
                .join(" / ")
                + " ms",
        ),
        (
            "status 1xx / 2xx / 3xx / 4xx / 5xx".into(),
            s.reply_status.map(|n| n.to_string()).join(" / "),
        ),
        (
            "errors".into(),
            if errors.is_empty() {
                format!("{}", s.errors_total)
            } else {
                format!("{} ({})", s.errors_total, errors.join(", "))
            },
        ),
        (
            "arrival lateness p99".into(),
            ms(quantile_ms(&h.lateness, 0.99)),
        ),
        (
            "client CPU".into(),
            format!(
                "{:.1} % of the duration; busiest engine thread {:.0} % of a core",
                s.cpu_total_pct, run.stats.client.busiest_pct
            ),
        ),
        ("Net I/O".into(), format!("{:.1} KB/s", s.net_io_kb_per_s)),
    ];
    let body = format!(
        "<h2>Summary</h2>\n{}{}<h2>Charts</h2>\n{}",
        facts(&facts_rows),
        verdict(advice),
        figures(&run_charts(run))?
    );
    Ok(document("rshperf run report", &body))
}

/// `--html=FILE` of a plain run.
pub(crate) fn write_run(
    path: &Path,
    cfg: &Config,
    run: &RunResult,
    summary: &Summary<'_>,
    advice: &[Advice],
) -> io::Result<()> {
    let page = run_page(cfg, run, summary, advice).map_err(io::Error::other)?;
    super::file::write_bytes(path, page.as_bytes())
}

/// One step of a sweep, as the page shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SweepPoint {
    /// Demanded arrival rate (connections or sessions per second).
    pub(crate) rate: f64,
    /// Demanded request rate.
    pub(crate) demanded: f64,
    /// Achieved rate of successful replies per second.
    pub(crate) achieved: f64,
    /// Response time p50, p90, p99, ms.
    pub(crate) response_ms: [f64; 3],
    /// Errors as a percentage of connections.
    pub(crate) errors_pct: f64,
    /// Arrival lateness p99, ms.
    pub(crate) lateness_p99_ms: f64,
    /// Busiest engine thread, % of a core.
    pub(crate) client_cpu_pct: f64,
    /// `pass`, `fail` or `client`.
    pub(crate) verdict: String,
    /// The run was client-bound: its figures describe the client.
    pub(crate) client_bound: bool,
}

/// What a sweep page shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SweepPage {
    /// The command line.
    pub(crate) command: String,
    /// The sweep's parameters as (name, value).
    pub(crate) parameters: Vec<(String, String)>,
    /// The unit of the rates (`conn/s` or `sessions/s`).
    pub(crate) unit: &'static str,
    /// The steps in the order they ran.
    pub(crate) points: Vec<SweepPoint>,
    /// The rate to mark and its label (the knee, or the highest passing rate when the
    /// client was the limit).
    pub(crate) knee: Option<(f64, &'static str)>,
    /// The conclusion line (knee and limit).
    pub(crate) conclusion: String,
}

/// The legend text of the client-bound bands.
pub(crate) const CLIENT_BOUND: &str =
    "client-bound step: the client, not the server, was the limit";

/// Shaded spans around the client-bound points of `pts` (sorted by x, the demanded
/// request rate): half-way to the neighbouring steps on each side.
fn client_spans(pts: &[SweepPoint]) -> Vec<(f64, f64)> {
    let xs: Vec<f64> = pts.iter().map(|p| p.demanded).collect();
    let gap = |i: usize, j: usize| (xs[j] - xs[i]).abs() / 2.0;
    pts.iter()
        .enumerate()
        .filter(|(_, p)| p.client_bound)
        .map(|(i, p)| {
            let left = (i > 0).then(|| gap(i - 1, i));
            let right = (i + 1 < xs.len()).then(|| gap(i, i + 1));
            let fallback = (p.demanded * 0.02).max(0.5);
            let l = left.or(right).unwrap_or(fallback);
            let r = right.or(left).unwrap_or(fallback);
            (p.demanded - l, p.demanded + r)
        })
        .collect()
}

/// The charts of a sweep (points in rate order). The x axis is the demanded request
/// rate, the unit of the rate chart's y axis; client-bound steps are shaded on every
/// chart.
fn sweep_charts(page: &SweepPage) -> Vec<Chart> {
    let mut pts = page.points.clone();
    pts.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    let x = "demanded request rate [req/s]".to_string();
    let line = |f: &dyn Fn(&SweepPoint) -> f64| pts.iter().map(|p| (p.demanded, f(p))).collect();
    let mark = page.knee.map(|(k, what)| {
        let demanded = pts.iter().find(|p| p.rate == k).map_or(k, |p| p.demanded);
        let mut label = format!("{what}: {} {}", chart::axis_number(k), page.unit);
        if demanded != k {
            label.push_str(&format!(" ({} req/s)", chart::axis_number(demanded)));
        }
        (demanded, label)
    });
    let spans = client_spans(&pts);
    let bands = (!spans.is_empty()).then(|| Bands {
        label: CLIENT_BOUND.into(),
        spans,
    });
    let chart = |title: &str, y: &str, series: Vec<Series>| Chart {
        title: title.into(),
        x_desc: x.clone(),
        y_desc: y.into(),
        series,
        mark: mark.clone(),
        dots: true,
        bands: bands.clone(),
        ..Chart::default()
    };
    vec![
        chart(
            "Demanded vs achieved request rate",
            "request rate [req/s]",
            vec![
                Series::new("demanded req/s", line(&|p| p.demanded)),
                Series::new("achieved (successful replies/s)", line(&|p| p.achieved)),
            ],
        ),
        chart(
            "Response time vs rate",
            "response time [ms]",
            ["p50", "p90", "p99"]
                .iter()
                .enumerate()
                .map(|(k, n)| Series::new(n, line(&|p| p.response_ms[k])))
                .collect(),
        ),
        chart(
            "Errors vs rate",
            "errors [% of connections]",
            vec![Series::new("errors %", line(&|p| p.errors_pct))],
        ),
        chart(
            "Client lateness vs rate",
            "arrival lateness p99 [ms]",
            vec![Series::new("lateness p99", line(&|p| p.lateness_p99_ms))],
        ),
    ]
}

/// The page of a sweep.
pub(crate) fn sweep_page(page: &SweepPage) -> Result<String, RenderError> {
    let mut params = vec![("command".to_string(), page.command.clone())];
    params.extend(page.parameters.iter().cloned());
    let mut steps = String::from(
        "<table>\n<tr><th>step</th><th>rate</th><th>demanded req/s</th>\
         <th>achieved req/s</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th>\
         <th>errors %</th><th>lateness p99 ms</th><th>client CPU %</th>\
         <th class=\"l\">verdict</th></tr>\n",
    );
    for (i, p) in page.points.iter().enumerate() {
        steps.push_str(&format!(
            "<tr{}><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.3}</td>\
             <td>{:.3}</td><td>{:.3}</td><td>{:.2}</td><td>{:.3}</td><td>{:.0}</td>\
             <td class=\"l\">{}</td></tr>\n",
            if p.client_bound {
                " class=\"client\""
            } else {
                ""
            },
            i + 1,
            chart::axis_number(p.rate),
            p.demanded,
            p.achieved,
            p.response_ms[0],
            p.response_ms[1],
            p.response_ms[2],
            p.errors_pct,
            p.lateness_p99_ms,
            p.client_cpu_pct,
            escape(&p.verdict)
        ));
    }
    steps.push_str("</table>\n");
    let client: Vec<String> = page
        .points
        .iter()
        .filter(|p| p.client_bound)
        .map(|p| chart::axis_number(p.rate))
        .collect();
    let client = if client.is_empty() {
        String::new()
    } else {
        format!(
            "<p class=\"warn client\">Client-bound at {} {} (shaded on every chart): \
             there the client, not the server, was the limit, and the figures describe \
             the client.</p>\n",
            client.join(", "),
            page.unit,
        )
    };
    let body = format!(
        "<h2>Result</h2>\n<p class=\"{}\">{}</p>\n{client}{}<h2>Charts</h2>\n{}\
         <h2>Steps</h2>\n{}",
        // Green only for a server knee; a client limit or no pass is a warning.
        if matches!(page.knee, Some((_, "knee"))) {
            "ok"
        } else {
            "warn"
        },
        escape(&page.conclusion),
        facts(&params),
        figures(&sweep_charts(page))?,
        steps
    );
    Ok(document("rshperf sweep report", &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_grey_facts_under_the_verdict_and_warnings_stay_warnings() {
        use crate::output::advice::Finding;
        let note = Advice {
            finding: Finding::NoRateSample,
            text: "the run took 0.5 s: \"Reply rate\" has no sample".into(),
        };
        let warning = Advice {
            finding: Finding::AllFailed,
            text: "all 3 connections refused — is anything listening on a<b?".into(),
        };
        assert_eq!(
            verdict(std::slice::from_ref(&note)),
            "<p class=\"ok\">No warnings: the client kept its schedule.</p>\n\
             <p class=\"note\">note: the run took 0.5 s: &quot;Reply rate&quot; has no \
             sample</p>\n"
        );
        assert_eq!(
            verdict(&[note, warning]),
            "<p class=\"warn\">warning: all 3 connections refused — is anything listening \
             on a&lt;b?</p>\n<p class=\"note\">note: the run took 0.5 s: &quot;Reply \
             rate&quot; has no sample</p>\n"
        );
        assert_eq!(
            verdict(&[]),
            "<p class=\"ok\">No warnings: the client kept its schedule.</p>\n"
        );
    }

    #[test]
    fn escaping() {
        assert_eq!(
            escape("a<b & 'c' \"d\">"),
            "a&lt;b &amp; &#39;c&#39; &quot;d&quot;&gt;"
        );
    }

    fn point(rate: f64, verdict: &str) -> SweepPoint {
        SweepPoint {
            rate,
            demanded: rate * 2.0,
            achieved: (rate * 2.0).min(500.0),
            response_ms: [1.0, 2.0, 3.0],
            errors_pct: 0.0,
            lateness_p99_ms: 0.1,
            client_cpu_pct: 5.0,
            verdict: verdict.into(),
            client_bound: verdict == "client",
        }
    }

    fn page(points: Vec<SweepPoint>, knee: Option<(f64, &'static str)>) -> SweepPage {
        SweepPage {
            command: "rshperf sweep --low-rate 100 <x>".into(),
            parameters: vec![("rate step".into(), "100".into())],
            unit: "sessions/s",
            points,
            knee,
            conclusion: "knee 200".into(),
        }
    }

    #[test]
    fn sweep_page_has_every_chart_series_and_step() {
        let points = vec![
            point(100.0, "pass"),
            point(200.0, "pass"),
            point(300.0, "fail"),
        ];
        let html = sweep_page(&page(points, Some((200.0, "knee")))).expect("renders");
        assert!(html.starts_with("<!DOCTYPE html>\n<html"));
        for needed in [
            "demanded req/s",
            "achieved (successful replies/s)",
            "p99",
            "errors %",
            "lateness p99",
            "knee: 200 sessions/s (400 req/s)",
            "demanded request rate [req/s]",
            "request rate [req/s]",
            "&lt;x&gt;",
        ] {
            assert!(html.contains(needed), "{needed}");
        }
        assert_eq!(html.matches("<svg").count(), 4);
        assert_eq!(html.matches("<tr><td>").count(), 3);
        assert!(!html.contains(CLIENT_BOUND) && !html.contains("Client-bound"));
    }

    #[test]
    fn client_bound_steps_are_shaded_on_every_chart_and_named_in_the_headline() {
        let points = vec![
            point(100.0, "pass"),
            point(300.0, "client"),
            point(200.0, "client"),
        ];
        let html = sweep_page(&page(
            points,
            Some((100.0, "highest passing rate (client limit above)")),
        ))
        .expect("renders");
        let doc = roxmltree::Document::parse(html.trim_start_matches("<!DOCTYPE html>\n"))
            .expect("well-formed");
        let svgs: Vec<_> = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "svg")
            .collect();
        assert_eq!(svgs.len(), 4);
        for svg in &svgs {
            // Two shaded steps and the legend's key, and the legend's text.
            let shaded = svg
                .descendants()
                .filter(|n| n.tag_name().name() == "rect" && n.attribute("fill") == Some("#FF9800"))
                .count();
            assert_eq!(shaded, 3);
            assert!(svg
                .descendants()
                .any(|n| n.tag_name().name() == "text"
                    && n.text().map(str::trim) == Some(CLIENT_BOUND)));
        }
        let headline = doc
            .descendants()
            .find(|n| n.attribute("class") == Some("warn client"))
            .and_then(|n| n.text())
            .expect("a client-bound headline");
        assert_eq!(
            headline,
            "Client-bound at 300, 200 sessions/s (shaded on every chart): there the client, \
             not the server, was the limit, and the figures describe the client."
        );
        let rows: Vec<_> = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "tr" && n.attribute("class") == Some("client"))
            .collect();
        assert_eq!(rows.len(), 2);
        assert!(!html.contains("every step passed"));
    }

    #[test]
    fn client_spans_reach_half_way_to_the_neighbours() {
        let pts = vec![
            point(100.0, "pass"),
            point(200.0, "client"),
            point(400.0, "client"),
        ];
        // x is the demanded request rate: 200, 400, 800.
        assert_eq!(client_spans(&pts), [(300.0, 600.0), (600.0, 1000.0)]);
        assert_eq!(client_spans(&[point(50.0, "client")]), [(98.0, 102.0)]);
    }

    #[test]
    fn the_distribution_is_on_a_log_axis_of_one_over_one_minus_p() {
        assert_eq!(
            (0..5).map(percentile_name).collect::<Vec<_>>(),
            ["0%", "90%", "99%", "99.9%", "99.99%"]
        );
        let mut h = Histogram::<u64>::new(3).expect("histogram");
        for us in 1..=1000u64 {
            h.record(us * 1000).expect("record");
        }
        let (points, names) = distribution(&h);
        assert_eq!(names, ["0%", "90%", "99%", "99.9%"]);
        // p = 1 − 2^(−k/4) for k = 0 ..= 39 (2^(39/4) ≤ 1000 < 2^10), then the maximum.
        assert_eq!(points.len(), 41);
        assert_eq!(points[0], (0.0, 1.0));
        // p50 at log10(2), p90-ish points rise; the last is the max at log10(1000) = 3.
        assert!((points[4].0 - 2f64.log10()).abs() < 1e-12);
        assert!((points[4].1 - 500.0).abs() <= 0.5, "{:?}", points[4]);
        let last = points.last().expect("a point");
        assert!((last.0 - 3.0).abs() < 1e-12 && (last.1 - 1000.0).abs() <= 0.5);
        assert!(points
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        // No responses: no points, the axis still shows 90 % and 99 %.
        let (points, names) = distribution(&Histogram::<u64>::new(3).expect("histogram"));
        assert!(points.is_empty());
        assert_eq!(names, ["0%", "90%", "99%"]);
    }

    #[test]
    fn open_connections_are_held_over_their_second() {
        let open = column("open").expect("the table has the open column");
        let row = |start, len, n| {
            let mut values = vec![Val::Int(0); open + 1];
            values[open] = Val::Int(n);
            (start, len, values)
        };
        let seconds = [row(0, 1.0, 2), row(1, 1.0, 3), row(2, 0.4, 0)];
        // Flat over each second, risers between them; the partial last second ends
        // at 2.4 s.
        assert_eq!(
            held(&seconds, "open").points,
            [
                (0.0, 2.0),
                (1.0, 2.0),
                (1.0, 3.0),
                (2.0, 3.0),
                (2.0, 0.0),
                (2.4, 0.0)
            ]
        );
    }
}
