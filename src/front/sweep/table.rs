//! The sweep's table and its last line.
//!
//! Owns the layout: autobench's header names and column order (`dem_req_rate`, then
//! `req_rate_HOST` … `errors_HOST`, numbers as autobench copies them from httperf's
//! report: one decimal; `errors_HOST` is errors as a percentage of replies, 101 when
//! there were none), then rshperf's own columns (p50, p99, lateness p99, achieved %,
//! client CPU %, verdict), tab- or comma-separated, and the conclusion line, which
//! starts with `#` so plotting tools (gnuplot) skip it. Pure text.

use crate::output::csv::quote;

use super::args::OutputFmt;
use super::plan::{Outcome, Verdict};
use super::step::Step;

/// rshperf's columns after autobench's.
pub(crate) const OWN_COLUMNS: [&str; 6] = [
    "p50_ms",
    "p99_ms",
    "lateness_p99_ms",
    "achieved_pct",
    "client_cpu_pct",
    "verdict",
];

/// A number as short as it reads exactly (the demanded rate, percentages): the chart
/// axes' spelling.
pub(crate) use crate::output::chart::axis_number as short;

fn join(cells: Vec<String>, fmt: OutputFmt) -> String {
    match fmt {
        OutputFmt::Tsv => cells.join("\t"),
        OutputFmt::Csv => cells.iter().map(|c| quote(c)).collect::<Vec<_>>().join(","),
    }
}

/// The header line for target `host`.
pub(crate) fn header(host: &str, fmt: OutputFmt) -> String {
    let mut cells = vec!["dem_req_rate".to_string()];
    for name in [
        "req_rate",
        "con_rate",
        "min_rep_rate",
        "avg_rep_rate",
        "max_rep_rate",
        "stddev_rep_rate",
        "resp_time",
        "net_io",
        "errors",
    ] {
        cells.push(format!("{name}_{host}"));
    }
    cells.extend(OWN_COLUMNS.iter().map(|c| c.to_string()));
    join(cells, fmt)
}

/// The row of one step.
pub(crate) fn row(step: &Step, fmt: OutputFmt) -> String {
    let f = &step.figures;
    let one = |v: f64| format!("{v:.1}");
    let mut cells = vec![short(step.demanded), one(f.req_rate), one(f.con_rate)];
    cells.extend(f.rep_rate.iter().map(|&v| one(v)));
    cells.push(one(f.resp_time_ms));
    cells.push(one(f.net_io_kbs));
    cells.push(short(f.errors_pct_of_replies));
    cells.push(format!("{:.3}", f.response_ms[0]));
    cells.push(format!("{:.3}", f.response_ms[2]));
    cells.push(format!("{:.3}", f.lateness_p99_ms));
    cells.push(format!("{:.1}", step.achieved_pct));
    cells.push(format!("{:.0}", f.client_cpu_pct));
    cells.push(step.verdict.name().to_string());
    join(cells, fmt)
}

/// The last line: the knee (or its absence) and what limited it. `unit` is
/// `conn/s` or `sessions/s`; `high` the highest rate allowed; `search` says the
/// result came from `--find-max` and to what resolution ("precision 2 %").
pub(crate) fn conclusion(
    outcome: &Outcome,
    steps: &[Step],
    unit: &str,
    high: f64,
    search: Option<&str>,
) -> String {
    let step_at = |r: f64| steps.iter().find(|s| s.rate == r);
    let why = |r: f64| {
        step_at(r).map_or_else(String::new, |s| match s.verdict {
            Verdict::Client => {
                let text = s.advice.first().map_or("", |a| a.text.as_str());
                format!(" ({})", text.trim_start_matches("client-bound: "))
            }
            _ => format!(" ({})", s.reasons.join("; ")),
        })
    };
    let how = search.map_or(String::new(), |res| {
        format!(" [--find-max: {} runs, {res}]", steps.len())
    });
    let line = match (outcome.knee, outcome.limit) {
        (Some(k), None) => format!(
            "no knee up to {} {unit}: every step passed (the highest rate run was {} {unit})",
            short(high),
            short(k)
        ),
        (Some(k), Some((r, Verdict::Client))) => format!(
            "no server knee up to {} {unit}: the client was the limit at {} {unit}{}",
            short(k),
            short(r),
            why(r)
        ),
        (Some(k), Some((r, _))) => format!(
            "knee at {} {unit}; the server was the limit: at {} {unit}{}",
            short(k),
            short(r),
            why(r)
        ),
        (None, Some((r, Verdict::Client))) => format!(
            "no knee: the client was the limit already at the first rate, {} {unit}{}",
            short(r),
            why(r)
        ),
        (None, Some((r, _))) => format!(
            "no knee: the server failed already at the first rate, {} {unit}{}",
            short(r),
            why(r)
        ),
        (None, None) => "no step was run".to_string(),
    };
    format!("# {line}{how}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::sweep::step::Figures;

    fn step(rate: f64, verdict: Verdict, reasons: &[&str]) -> Step {
        Step {
            rate,
            arrivals: 600,
            demanded: rate,
            achieved: rate * 0.9,
            achieved_pct: 90.0,
            figures: Figures {
                req_rate: 199.96,
                con_rate: 200.04,
                rep_rate: [0.0, 0.0, 0.0, 0.0],
                resp_time_ms: 0.44,
                net_io_kbs: 256.75,
                errors_pct_of_replies: 1.0 / 3.0 * 100.0,
                errors: 2,
                connections: 600,
                response_ms: [0.4, 0.9, 1.25],
                lateness_p99_ms: 0.0625,
                client_cpu_pct: 12.4,
            },
            advice: Vec::new(),
            client_bound: verdict == Verdict::Client,
            verdict,
            reasons: reasons.iter().map(|s| s.to_string()).collect(),
            estimate: None,
            doc: None,
            interrupted: false,
        }
    }

    #[test]
    fn header_has_autobench_names_in_order_then_ours() {
        assert_eq!(
            header("127.0.0.1", OutputFmt::Tsv),
            "dem_req_rate\treq_rate_127.0.0.1\tcon_rate_127.0.0.1\tmin_rep_rate_127.0.0.1\t\
             avg_rep_rate_127.0.0.1\tmax_rep_rate_127.0.0.1\tstddev_rep_rate_127.0.0.1\t\
             resp_time_127.0.0.1\tnet_io_127.0.0.1\terrors_127.0.0.1\tp50_ms\tp99_ms\t\
             lateness_p99_ms\tachieved_pct\tclient_cpu_pct\tverdict"
        );
        assert!(header("a,b", OutputFmt::Csv).starts_with("dem_req_rate,\"req_rate_a,b\","));
    }

    #[test]
    fn rows_copy_httperf_precision() {
        assert_eq!(
            row(&step(200.0, Verdict::Pass, &[]), OutputFmt::Tsv),
            "200\t200.0\t200.0\t0.0\t0.0\t0.0\t0.0\t0.4\t256.8\t33.333\t0.400\t1.250\t0.062\t\
             90.0\t12\tpass"
        );
        assert_eq!(
            row(&step(12.5, Verdict::Client, &[]), OutputFmt::Csv),
            "12.5,200.0,200.0,0.0,0.0,0.0,0.0,0.4,256.8,33.333,0.400,1.250,0.062,90.0,12,client"
        );
    }

    #[test]
    fn conclusions_name_the_knee_and_the_limit() {
        let steps = vec![
            step(100.0, Verdict::Pass, &[]),
            step(
                200.0,
                Verdict::Fail,
                &["achieved 80.0 % of the demanded rate (below 95 %)"],
            ),
        ];
        let out = Outcome {
            knee: Some(100.0),
            limit: Some((200.0, Verdict::Fail)),
        };
        assert_eq!(
            conclusion(&out, &steps, "conn/s", 500.0, None),
            "# knee at 100 conn/s; the server was the limit: at 200 conn/s (achieved 80.0 % \
             of the demanded rate (below 95 %))"
        );
        let out = Outcome {
            knee: Some(100.0),
            limit: None,
        };
        assert_eq!(
            conclusion(&out, &steps[..1], "conn/s", 100.0, Some("precision 2 %")),
            "# no knee up to 100 conn/s: every step passed (the highest rate run was 100 \
             conn/s) [--find-max: 1 runs, precision 2 %]"
        );
        let mut client = step(200.0, Verdict::Client, &[]);
        client.advice.push(crate::output::advice::Advice {
            finding: crate::output::advice::Finding::ClientBound,
            text: "client-bound: an engine thread used 99 % of a core".into(),
        });
        let steps = vec![steps[0].clone(), client];
        let out = Outcome {
            knee: Some(100.0),
            limit: Some((200.0, Verdict::Client)),
        };
        assert_eq!(
            conclusion(&out, &steps, "sessions/s", 500.0, None),
            "# no server knee up to 100 sessions/s: the client was the limit at 200 \
             sessions/s (an engine thread used 99 % of a core)"
        );
        let out = Outcome {
            knee: None,
            limit: Some((100.0, Verdict::Fail)),
        };
        assert!(conclusion(&out, &steps, "conn/s", 500.0, None)
            .starts_with("# no knee: the server failed already at the first rate, 100 conn/s ("));
    }
}
