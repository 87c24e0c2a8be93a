//! `rshperf compare`'s outputs: the text table (default), the markdown table (for a
//! GitHub job summary or a PR comment: one line per figure with an arrow and the
//! verdict) and the JSON document (`rshperf-compare`), each marking the invalid runs
//! `--force` compared with their one line (`Invalid::text`). Pure functions of a
//! `Comparison`; computes nothing. Called by `front::compare`.

use serde_json::{json, Value};

use crate::model::compare::gate::{interval, level, pct};
use crate::model::compare::sides::decimals;
use crate::model::compare::{Comparison, Row, Test, Verdict};
use crate::model::validity::doc::reasons_json;

/// The `format` member of the JSON document.
pub(crate) const FORMAT: &str = "rshperf-compare";

/// The layout version of the JSON document.
pub(crate) const VERSION: u64 = 1;

/// A figure's value at its printed resolution (`-` when there is none).
fn value(v: f64, unit: &str) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    format!("{v:.*}", decimals(unit))
}

/// The change column: `+21.3%` (`-` when there is no relative change).
fn change(r: &Row) -> String {
    r.change.pct.map_or("-".to_string(), pct)
}

/// The interval column at level 1 − `alpha`: `+18.0% … +24.9%`, or `n/a: reason`
/// (`-` without data).
fn ci(r: &Row, alpha: f64) -> String {
    if !r.base.is_finite() || !r.new.is_finite() {
        return "-".to_string();
    }
    interval(r.change.ci(alpha))
}

/// `N run(s) (a.json, b.json)`.
fn runs(files: &[String]) -> String {
    let s = if files.len() == 1 { "" } else { "s" };
    format!("{} run{s} ({})", files.len(), files.join(", "))
}

/// The tests used, one `name: what` per test that decided a figure.
fn legend(c: &Comparison) -> Vec<String> {
    Test::ALL
        .iter()
        .filter(|t| c.rows.iter().any(|r| r.test == **t))
        .map(|t| format!("{}: {}", t.name(), t.description()))
        .collect()
}

/// The verdict line's text: `worse (response p50 slower, …)`.
fn verdict(c: &Comparison) -> String {
    let a = c.row_alpha();
    let changed: Vec<String> = c
        .family()
        .iter()
        .filter(|r| !matches!(r.verdict(a), Verdict::NoChange | Verdict::NotTested))
        .map(|r| format!("{} {}", r.label, r.verdict(a).text()))
        .collect();
    let overall = c.verdict().text();
    if changed.is_empty() {
        overall.to_string()
    } else {
        format!("{overall} ({})", changed.join(", "))
    }
}

/// What the levels mean and the run-to-run noise allowed for, one sentence each.
fn levels(c: &Comparison) -> String {
    let family: Vec<&str> = c.family().iter().map(|r| r.label.as_str()).collect();
    let a = c.row_alpha();
    let which = if c.gates.is_empty() {
        "about the server"
    } else {
        "the gates judge"
    };
    let estimated = c
        .rows
        .iter()
        .any(|r| r.change.stat.is_ok_and(|s| s.noise_estimated));
    let own = if estimated {
        ", or the runs' own spread where larger"
    } else {
        ""
    };
    let significant = match family.len() {
        0 => format!(
            "No figure {which} could be tested; intervals at {}%.",
            level(a)
        ),
        1 => format!(
            "Significant: p < {a:.4} for the 1 figure {which} ({}): alpha {} in all; \
             intervals at {}%.",
            family[0],
            c.alpha,
            level(a)
        ),
        m => format!(
            "Significant: p < {a:.4} for each of the {m} figures {which} ({}): alpha {} in \
             all; intervals at {}%.",
            family.join(", "),
            c.alpha,
            level(a)
        ),
    };
    format!(
        "{significant} Run-to-run noise allowed: {}% a run (--run-noise){own}.",
        trim(100.0 * c.run_noise),
    )
}

/// A number without trailing zeros (`2`, `1.5`).
fn trim(v: f64) -> String {
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The text table, the verdict, the legend and the gates.
pub(crate) fn text(c: &Comparison) -> String {
    let a = c.row_alpha();
    let mut out = format!(
        "rshperf compare: base {}, new {}\n",
        runs(&c.base_files),
        runs(&c.new_files)
    );
    for f in &c.forced {
        out.push_str(&format!("warning: workloads differ (--force): {f}\n"));
    }
    for i in &c.invalid {
        out.push_str(&format!("warning: {} (--force)\n", i.text()));
    }
    let head = [
        "figure".to_string(),
        "base".to_string(),
        "new".to_string(),
        "change".to_string(),
        format!("{}% CI", level(a)),
        "verdict".to_string(),
        "test".to_string(),
    ];
    let mut lines: Vec<[String; 7]> = vec![head];
    for r in &c.rows {
        lines.push([
            format!("{} [{}]", r.label, r.unit),
            value(r.base, r.unit),
            value(r.new, r.unit),
            change(r),
            ci(r, a),
            r.verdict(a).text().to_string(),
            r.test.name().to_string(),
        ]);
    }
    let mut width = [0usize; 7];
    for l in &lines {
        for (w, cell) in width.iter_mut().zip(l) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for l in &lines {
        let mut row = String::new();
        for (i, cell) in l.iter().enumerate() {
            let pad = width[i] - cell.chars().count();
            // Figures left-aligned, numbers right-aligned, the last columns left.
            let cell = match i {
                1..=4 => format!("{}{cell}", " ".repeat(pad)),
                6 => cell.clone(),
                _ => format!("{cell}{}", " ".repeat(pad)),
            };
            row.push_str(&cell);
            row.push_str(if i == 6 { "\n" } else { "  " });
        }
        out.push_str(&row);
    }
    out.push_str(&format!("Verdict: {}\n", verdict(c)));
    out.push_str(&format!("{} Tests: {}.\n", levels(c), legend(c).join("; ")));
    for g in &c.gates {
        let mark = if g.failed { "FAIL" } else { "pass" };
        out.push_str(&format!("{mark} {}\n", g.message));
    }
    out
}

/// The arrow of a figure: ↑ or ↓ for a significant change, `=` otherwise.
fn arrow(r: &Row, alpha: f64) -> &'static str {
    match r.verdict(alpha) {
        Verdict::NoChange | Verdict::NotTested => "=",
        _ if r.change.direction() > 0.0 => "↑",
        _ => "↓",
    }
}

/// Markdown's special characters in table text escaped.
fn md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if matches!(ch, '|' | '\\' | '*' | '_' | '`' | '[' | ']' | '<' | '>') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// The markdown report: a heading, one table line per figure, the verdict, the
/// legend and the gates.
pub(crate) fn markdown(c: &Comparison) -> String {
    let a = c.row_alpha();
    let mut out = format!(
        "### rshperf compare\n\nBase: {}. New: {}.\n\n",
        md(&runs(&c.base_files)),
        md(&runs(&c.new_files))
    );
    for f in &c.forced {
        out.push_str(&format!(
            "> **Warning**: workloads differ (--force): {}\n\n",
            md(f)
        ));
    }
    for i in &c.invalid {
        out.push_str(&format!("> **Warning**: {} (--force)\n\n", md(&i.text())));
    }
    out.push_str(&format!(
        "| | figure | base | new | change | {}% CI | verdict |\n|---|---|--:|--:|--:|--:|---|\n",
        level(a)
    ));
    for r in &c.rows {
        let v = r.verdict(a);
        let verdict = match v {
            Verdict::Slower | Verdict::Worse => format!("**{}**", v.text()),
            _ => v.text().to_string(),
        };
        out.push_str(&format!(
            "| {} | {} ({}) | {} | {} | {} | {} | {} |\n",
            arrow(r, a),
            md(&r.label),
            md(r.unit),
            value(r.base, r.unit),
            value(r.new, r.unit),
            change(r),
            ci(r, a),
            verdict
        ));
    }
    out.push_str(&format!(
        "\n**Verdict: {}**\n\n{} Tests: {}.\n",
        md(&verdict(c)),
        md(&levels(c)),
        md(&legend(c).join("; "))
    ));
    if !c.gates.is_empty() {
        out.push_str("\n**Regression gates**\n\n");
        for g in &c.gates {
            let mark = if g.failed { "❌ FAIL" } else { "✅ pass" };
            out.push_str(&format!("- {mark}: {}\n", md(&g.message)));
        }
    }
    out
}

/// A number for JSON (`null` when not finite).
fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// The JSON document.
pub(crate) fn to_json(c: &Comparison) -> Value {
    let a = c.row_alpha();
    let family: Vec<&str> = c.family().iter().map(|r| r.figure.as_str()).collect();
    let figures: Vec<Value> = c
        .rows
        .iter()
        .map(|r| {
            let ch = r.change;
            let interval = ch.ci(a);
            json!({
                "figure": r.figure,
                "label": r.label,
                "unit": r.unit,
                "base": num(r.base),
                "new": num(r.new),
                "change_pct": ch.pct.map_or(Value::Null, num),
                "ci_pct": interval.map_or(Value::Null, |(lo, hi)| json!([num(lo), num(hi)])),
                "p": ch.p().map_or(Value::Null, num),
                "test": r.test.name(),
                "verdict": r.verdict(a).text(),
                "ci_na": interval.err().map_or(Value::Null, |na| json!(na.text())),
                "in_verdict": family.contains(&r.figure.as_str()),
                "run_noise_pct": ch.stat.map_or(Value::Null, |s| num(100.0 * s.run_noise)),
                "se_log_pct": ch
                    .stat
                    .ok()
                    .filter(|s| s.log)
                    .map_or(Value::Null, |s| num(100.0 * s.se)),
            })
        })
        .collect();
    let gates: Vec<Value> = c
        .gates
        .iter()
        .map(|g| {
            json!({
                "gate": g.gate.expr,
                "figure": g.gate.figure,
                "change_pct": g.change_pct.map_or(Value::Null, num),
                "significant": g.significant,
                "failed": g.failed,
                "message": g.message,
            })
        })
        .collect();
    let invalid: Vec<Value> = c
        .invalid
        .iter()
        .map(|i| {
            json!({
                "side": i.side.key(),
                "file": i.file,
                "reasons": reasons_json(&i.validity),
                "text": i.text(),
            })
        })
        .collect();
    json!({
        "format": FORMAT,
        "version": VERSION,
        "alpha": c.alpha,
        "base": c.base_files,
        "new": c.new_files,
        "forced": c.forced,
        "figures": figures,
        "gates": gates,
        "failed": c.failed(),
        "verdict": c.verdict().text(),
        "family": family,
        "alpha_per_figure": a,
        "run_noise_pct": 100.0 * c.run_noise,
        "invalid": invalid,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::compare::estimate::{Change, Na, Stat};
    use crate::model::compare::gate::{judge, parse, Outcome};
    use crate::model::compare::{About, Aspect, Better};

    /// A row; `stat` is (d, se, df) of a log test, or why there is none.
    fn row(
        figure: &str,
        label: &str,
        unit: &'static str,
        vals: (f64, f64),
        stat: Result<(f64, f64, f64), Na>,
        test: Test,
    ) -> Row {
        let better = if unit == "replies/s" {
            Better::Higher
        } else {
            Better::Lower
        };
        let pct = (vals.0 > 0.0 && vals.1.is_finite()).then(|| 100.0 * (vals.1 / vals.0 - 1.0));
        Row {
            figure: figure.into(),
            label: label.into(),
            unit,
            better,
            aspect: if unit == "%" || unit == "µs" {
                Aspect::Cost
            } else {
                Aspect::Speed
            },
            about: if unit == "µs" {
                About::Client
            } else {
                About::Server
            },
            base: vals.0,
            new: vals.1,
            change: Change {
                pct,
                stat: stat.map(|(d, se, df)| Stat {
                    d,
                    se,
                    df,
                    log: true,
                    base: vals.0,
                    no_interval: None,
                    run_noise: 0.02,
                    noise_estimated: false,
                }),
            },
            test,
        }
    }

    /// A comparison of four figures (three in the verdict) and two gates, one of
    /// which fails.
    pub(crate) fn sample() -> Comparison {
        let rows = vec![
            row(
                "replies_rate",
                "reply rate",
                "replies/s",
                (200.0, 199.5),
                Ok(((199.5f64 / 200.0).ln(), 0.02, f64::INFINITY)),
                Test::BatchMeans,
            ),
            row(
                "percentiles_response_p99",
                "response p99",
                "ms",
                (1.5, 1.815),
                Ok(((1.815f64 / 1.5).ln(), 0.03, 40.0)),
                Test::Woodruff,
            ),
            row(
                "percentiles_response_p99_9",
                "response p99.9",
                "ms",
                (2.5, 2.6),
                Err(Na::Tail(1.2)),
                Test::Woodruff,
            ),
            row(
                "cpu_per_reply_us",
                "client CPU per reply",
                "µs",
                (25.0, f64::NAN),
                Err(Na::NoData),
                Test::Runs,
            ),
        ];
        let names: Vec<&str> = rows.iter().map(|r| r.figure.as_str()).collect();
        let gates: Vec<_> = ["p99>+10%", "reply-rate<-5%"]
            .iter()
            .map(|e| parse(e, &names).expect("valid"))
            .collect();
        let gated: Vec<&str> = gates.iter().map(|g| g.figure.as_str()).collect();
        let level = crate::model::compare::row_alpha(0.01, &rows, &gated);
        let gates: Vec<Outcome> = gates.iter().map(|g| judge(g, &rows, level)).collect();
        Comparison {
            base_files: vec!["main-1.json".into(), "main-2.json".into()],
            new_files: vec!["pr.json".into()],
            alpha: 0.01,
            run_noise: 0.02,
            rows,
            gates,
            forced: Vec::new(),
            invalid: Vec::new(),
        }
    }

    #[test]
    fn text_table() {
        let want = "\
rshperf compare: base 2 runs (main-1.json, main-2.json), new 1 run (pr.json)
figure                      base    new  change            99.5% CI  verdict                test
reply rate [replies/s]     200.0  199.5   -0.2%       -5.7% … +5.5%  no significant change  batch-means
response p99 [ms]          1.500  1.815  +21.0%     +10.7% … +32.3%  slower                 woodruff
response p99.9 [ms]        2.500  2.600   +4.0%  n/a: 1 value above  not tested             woodruff
client CPU per reply [µs]   25.0      -       -                   -  not tested             runs
Verdict: worse (response p99 slower)
Significant: p < 0.0050 for each of the 2 figures the gates judge (reply rate, response p99): alpha 0.01 in all; intervals at 99.5%. Run-to-run noise allowed: 2% a run (--run-noise). Tests: batch-means: whole-run ratio, its noise from the runs' 100-ms windows; woodruff: whole-run quantile, its noise from the windows (Woodruff's interval); runs: ratio over the runs, its noise from their spread.
FAIL p99>+10%: +21.0% (99.5% CI +10.7% … +32.3%, p < 0.0001), past the limit and significant
pass reply-rate<-5%: -0.2% (99.5% CI -5.7% … +5.5%, p = 0.9004), within the limit
";
        assert_eq!(text(&sample()), want);
    }

    #[test]
    fn markdown_table() {
        let want = "\
### rshperf compare

Base: 2 runs (main-1.json, main-2.json). New: 1 run (pr.json).

| | figure | base | new | change | 99.5% CI | verdict |
|---|---|--:|--:|--:|--:|---|
| = | reply rate (replies/s) | 200.0 | 199.5 | -0.2% | -5.7% … +5.5% | no significant change |
| ↑ | response p99 (ms) | 1.500 | 1.815 | +21.0% | +10.7% … +32.3% | **slower** |
| = | response p99.9 (ms) | 2.500 | 2.600 | +4.0% | n/a: 1 value above | not tested |
| = | client CPU per reply (µs) | 25.0 | - | - | - | not tested |

**Verdict: worse (response p99 slower)**

Significant: p \\< 0.0050 for each of the 2 figures the gates judge (reply rate, response p99): alpha 0.01 in all; intervals at 99.5%. Run-to-run noise allowed: 2% a run (--run-noise). Tests: batch-means: whole-run ratio, its noise from the runs' 100-ms windows; woodruff: whole-run quantile, its noise from the windows (Woodruff's interval); runs: ratio over the runs, its noise from their spread.

**Regression gates**

- ❌ FAIL: p99\\>+10%: +21.0% (99.5% CI +10.7% … +32.3%, p \\< 0.0001), past the limit and significant
- ✅ pass: reply-rate\\<-5%: -0.2% (99.5% CI -5.7% … +5.5%, p = 0.9004), within the limit
";
        assert_eq!(markdown(&sample()), want);
    }

    /// The markdown parses (CommonMark with GitHub tables) into one table of a header
    /// and one row per figure, seven cells each, and a list of one item per gate.
    #[test]
    fn markdown_parses_as_a_table() {
        use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
        let c = sample();
        let text = markdown(&c);
        let mut rows: Vec<Vec<String>> = Vec::new();
        let (mut tables, mut items, mut in_cell) = (0, 0, false);
        for ev in Parser::new_ext(&text, Options::ENABLE_TABLES) {
            match ev {
                Event::Start(Tag::Table(_)) => tables += 1,
                Event::Start(Tag::TableHead | Tag::TableRow) => rows.push(Vec::new()),
                Event::Start(Tag::TableCell) => {
                    in_cell = true;
                    rows.last_mut().expect("a row").push(String::new());
                }
                Event::End(TagEnd::TableCell) => in_cell = false,
                Event::Text(t) if in_cell => {
                    let row = rows.last_mut().expect("a row");
                    row.last_mut().expect("a cell").push_str(&t);
                }
                Event::Start(Tag::Item) => items += 1,
                _ => {}
            }
        }
        assert_eq!((tables, items), (1, c.gates.len()));
        assert_eq!(rows.len(), 1 + c.rows.len());
        assert!(rows.iter().all(|r| r.len() == 7), "{rows:?}");
        assert_eq!(rows[2][1], "response p99 (ms)");
        assert_eq!(rows[2][6], "slower");
        assert_eq!(rows[0][5], "99.5% CI");
        assert_eq!(rows[3][5], "n/a: 1 value above");
    }

    #[test]
    fn json_document() {
        let v = to_json(&sample());
        assert_eq!(v["format"], FORMAT);
        assert_eq!(v["failed"], true);
        assert_eq!(v["verdict"], "worse");
        assert_eq!(
            v["family"],
            json!(["replies_rate", "percentiles_response_p99"])
        );
        assert_eq!(v["alpha_per_figure"], json!(0.005));
        let f = &v["figures"][1];
        assert_eq!(f["figure"], "percentiles_response_p99");
        assert_eq!(f["verdict"], "slower");
        assert_eq!(f["in_verdict"], true);
        let ci = f["ci_pct"].as_array().expect("an interval");
        // ln 1.21 ± t(0.9975, 40) × 0.03, mapped back (checked with Python).
        assert!(
            (ci[0].as_f64().expect("lo") - 10.681_356).abs() < 1e-5,
            "{ci:?}"
        );
        assert!(
            (ci[1].as_f64().expect("hi") - 32.280_634).abs() < 1e-5,
            "{ci:?}"
        );
        assert_eq!(f["ci_na"], Value::Null);
        assert_eq!(f["se_log_pct"], json!(3.0));
        let na = &v["figures"][2];
        assert_eq!(
            (na["ci_pct"].clone(), na["ci_na"].clone()),
            (Value::Null, json!("n/a: 1 value above"))
        );
        assert_eq!(na["p"], Value::Null);
        assert_eq!(v["figures"][3]["new"], Value::Null);
        assert_eq!(v["figures"][3]["change_pct"], Value::Null);
        assert_eq!(v["figures"][3]["in_verdict"], false);
        assert_eq!(v["gates"][0]["failed"], true);
        assert_eq!(v["gates"][1]["figure"], "replies_rate");
        assert_eq!(v["base"], json!(["main-1.json", "main-2.json"]));
    }

    /// A comparison `--force` made of an invalid base run (merged: its reason names
    /// its part) and an invalid new run.
    pub(crate) fn with_invalid() -> Comparison {
        use crate::model::compare::invalid::{Invalid, Side};
        use crate::model::validity::{Cause, Reason, Validity};
        let judged = |reasons: Vec<Reason>| Validity {
            reasons,
            measured: Vec::new(),
        };
        let mut c = sample();
        c.invalid = vec![
            Invalid {
                side: Side::Base,
                file: "main-2.json".into(),
                validity: judged(vec![Reason {
                    cause: Cause::Interrupted,
                    part: Some("partition 1/2 (m_a.json)".into()),
                    text: "interrupted (SIGINT or SIGTERM) after 1.5 s".into(),
                    measured: vec![("duration_s".into(), 1.5)],
                }]),
            },
            Invalid {
                side: Side::New,
                file: "pr.json".into(),
                validity: judged(vec![Reason {
                    cause: Cause::EngineCpu,
                    part: None,
                    text: "an engine thread used 97 % of a core (limit 90 %)".into(),
                    measured: vec![("busiest_engine_pct".into(), 97.0)],
                }]),
            },
        ];
        c
    }

    /// Each invalid run is marked with its one line in every format.
    #[test]
    fn invalid_runs_are_marked_in_every_format() {
        let c = with_invalid();
        let base = "base main-2.json is invalid (interrupted): partition 1/2 (m_a.json): \
                    interrupted (SIGINT or SIGTERM) after 1.5 s";
        let new = "new pr.json is invalid (engine_cpu): an engine thread used 97 % of a core \
                   (limit 90 %)";
        let t = text(&c);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[..3],
            [
                "rshperf compare: base 2 runs (main-1.json, main-2.json), new 1 run (pr.json)",
                &format!("warning: {base} (--force)"),
                &format!("warning: {new} (--force)"),
            ]
        );
        assert_eq!(
            t.lines().skip(3).collect::<Vec<_>>(),
            text(&sample()).lines().skip(1).collect::<Vec<_>>()
        );
        let m = markdown(&c);
        assert!(
            m.starts_with(
                "### rshperf compare\n\nBase: 2 runs (main-1.json, main-2.json). New: 1 run \
                 (pr.json).\n\n> **Warning**: base main-2.json is invalid (interrupted): \
                 partition 1/2 (m\\_a.json): interrupted (SIGINT or SIGTERM) after 1.5 s \
                 (--force)\n\n> **Warning**: new pr.json is invalid (engine\\_cpu): an engine \
                 thread used 97 % of a core (limit 90 %) (--force)\n\n| | figure |"
            ),
            "{m}"
        );
        let v = to_json(&c);
        assert_eq!(
            v["invalid"],
            json!([
                {
                    "side": "base",
                    "file": "main-2.json",
                    "reasons": [{
                        "reason": "interrupted",
                        "part": "partition 1/2 (m_a.json)",
                        "text": "interrupted (SIGINT or SIGTERM) after 1.5 s",
                        "measured": {"duration_s": 1.5}
                    }],
                    "text": base,
                },
                {
                    "side": "new",
                    "file": "pr.json",
                    "reasons": [{
                        "reason": "engine_cpu",
                        "text": "an engine thread used 97 % of a core (limit 90 %)",
                        "measured": {"busiest_engine_pct": 97.0}
                    }],
                    "text": new,
                }
            ])
        );
        assert_eq!(to_json(&sample())["invalid"], json!([]));
    }

    /// Every change printed is new/base − 1 of the values printed beside it.
    #[test]
    fn printed_changes_are_the_printed_values_ratio() {
        let c = sample();
        for line in text(&c).lines().skip(2).take(c.rows.len()) {
            let cells: Vec<&str> = line
                .split("  ")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            let (base, new, change) = (cells[1], cells[2], cells[3]);
            if change == "-" {
                continue;
            }
            let (b, n): (f64, f64) = (base.parse().expect("base"), new.parse().expect("new"));
            assert_eq!(pct(100.0 * (n / b - 1.0)), change, "{line}");
        }
    }
}
