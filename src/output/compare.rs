//! `rshperf compare`'s outputs: the text table (default), the markdown table (for a
//! GitHub job summary or a PR comment: one line per figure with an arrow and the
//! verdict) and the JSON document (`rshperf-compare`). Pure functions of a
//! `Comparison`; computes nothing. Called by `front::compare`.

use serde_json::{json, Value};

use crate::model::compare::gate::{level, pct};
use crate::model::compare::{Comparison, Row, Test, Verdict};

/// The `format` member of the JSON document.
pub(crate) const FORMAT: &str = "rshperf-compare";

/// The layout version of the JSON document.
pub(crate) const VERSION: u64 = 1;

/// A figure's value in its unit's precision (`-` when there is none).
fn value(v: f64, unit: &str) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    match unit {
        "ms" | "%" => format!("{v:.3}"),
        _ => format!("{v:.1}"),
    }
}

/// The change column: `+21.3%` (`-` when not tested).
fn change(r: &Row) -> String {
    r.change.map_or("-".to_string(), |c| pct(c.pct))
}

/// The interval column: `+18.0% … +24.9%` (`-` when not tested).
fn interval(r: &Row) -> String {
    r.change.map_or("-".to_string(), |c| {
        format!("{} … {}", pct(c.ci.0), pct(c.ci.1))
    })
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

/// The text table, the legend and the gates.
pub(crate) fn text(c: &Comparison) -> String {
    let lvl = level(c.alpha);
    let mut out = format!(
        "rshperf compare: base {}, new {}\n",
        runs(&c.base_files),
        runs(&c.new_files)
    );
    for f in &c.forced {
        out.push_str(&format!("warning: workloads differ (--force): {f}\n"));
    }
    let head = [
        "figure".to_string(),
        "base".to_string(),
        "new".to_string(),
        "change".to_string(),
        format!("{lvl}% CI"),
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
            interval(r),
            r.verdict(c.alpha).text().to_string(),
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
    out.push_str(&format!(
        "Significant: p < alpha = {} (the CI is at {lvl}%). Tests: {}.\n",
        c.alpha,
        legend(c).join("; ")
    ));
    for g in &c.gates {
        let mark = if g.failed { "FAIL" } else { "pass" };
        out.push_str(&format!("{mark} {}\n", g.message));
    }
    out
}

/// The arrow of a figure: ↑ or ↓ for a significant change, `=` otherwise.
fn arrow(r: &Row, alpha: f64) -> &'static str {
    match (r.verdict(alpha), r.change) {
        (Verdict::NoChange | Verdict::NotTested, _) | (_, None) => "=",
        (_, Some(c)) if c.pct > 0.0 => "↑",
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

/// The markdown report: a heading, one table line per figure, the legend and the
/// gates.
pub(crate) fn markdown(c: &Comparison) -> String {
    let lvl = level(c.alpha);
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
    out.push_str(&format!(
        "| | figure | base | new | change | {lvl}% CI | verdict |\n|---|---|--:|--:|--:|--:|---|\n"
    ));
    for r in &c.rows {
        let v = r.verdict(c.alpha);
        let verdict = match v {
            Verdict::Slower | Verdict::Worse => format!("**{}**", v.text()),
            _ => v.text().to_string(),
        };
        out.push_str(&format!(
            "| {} | {} ({}) | {} | {} | {} | {} | {} |\n",
            arrow(r, c.alpha),
            md(&r.label),
            md(r.unit),
            value(r.base, r.unit),
            value(r.new, r.unit),
            change(r),
            interval(r),
            verdict
        ));
    }
    out.push_str(&format!(
        "\nSignificant: p < {}. Tests: {}.\n",
        c.alpha,
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
    let figures: Vec<Value> = c
        .rows
        .iter()
        .map(|r| {
            let ch = r.change;
            json!({
                "figure": r.figure,
                "label": r.label,
                "unit": r.unit,
                "base": num(r.base),
                "new": num(r.new),
                "change_pct": ch.map_or(Value::Null, |c| num(c.pct)),
                "ci_pct": ch.map_or(Value::Null, |c| json!([num(c.ci.0), num(c.ci.1)])),
                "p": ch.map_or(Value::Null, |c| num(c.p)),
                "test": r.test.name(),
                "verdict": r.verdict(c.alpha).text(),
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
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::compare::gate::{judge, parse, Outcome};
    use crate::model::compare::{Aspect, Better};
    use crate::model::significance::Change;

    fn row(
        figure: &str,
        label: &str,
        unit: &'static str,
        vals: (f64, f64),
        ch: Option<(f64, f64, f64, f64)>,
        test: Test,
    ) -> Row {
        let better = if unit == "replies/s" {
            Better::Higher
        } else {
            Better::Lower
        };
        Row {
            figure: figure.into(),
            label: label.into(),
            unit,
            better,
            aspect: if unit == "%" {
                Aspect::Cost
            } else {
                Aspect::Speed
            },
            base: vals.0,
            new: vals.1,
            change: ch.map(|(pct, lo, hi, p)| Change {
                pct,
                ci: (lo, hi),
                p,
            }),
            test,
        }
    }

    /// A comparison of three figures and two gates, one of which fails.
    pub(crate) fn sample() -> Comparison {
        let rows = vec![
            row(
                "replies_rate",
                "reply rate",
                "replies/s",
                (200.0, 199.5),
                Some((-0.25, -0.9, 0.4, 0.3)),
                Test::WelchSeconds,
            ),
            row(
                "percentiles_response_p99",
                "response p99",
                "ms",
                (1.5, 1.815),
                Some((21.0, 18.0, 24.5, 0.0001)),
                Test::Bootstrap,
            ),
            row(
                "errors_total",
                "errors per connection",
                "%",
                (0.0, 0.0),
                Some((0.0, 0.0, 0.0, 1.0)),
                Test::Proportions,
            ),
            row(
                "cpu_per_reply_us",
                "client CPU per reply",
                "µs",
                (25.0, f64::NAN),
                None,
                Test::WelchRuns,
            ),
        ];
        let names: Vec<&str> = rows.iter().map(|r| r.figure.as_str()).collect();
        let gates: Vec<Outcome> = ["p99>+10%", "reply-rate<-5%"]
            .iter()
            .map(|e| judge(&parse(e, &names).expect("valid"), &rows, 0.01))
            .collect();
        Comparison {
            base_files: vec!["main-1.json".into(), "main-2.json".into()],
            new_files: vec!["pr.json".into()],
            alpha: 0.01,
            rows,
            gates,
            forced: Vec::new(),
        }
    }

    #[test]
    fn text_table() {
        let want = "\
rshperf compare: base 2 runs (main-1.json, main-2.json), new 1 run (pr.json)
figure                      base    new  change           99% CI  verdict                test
reply rate [replies/s]     200.0  199.5   -0.2%    -0.9% … +0.4%  no significant change  welch-seconds
response p99 [ms]          1.500  1.815  +21.0%  +18.0% … +24.5%  slower                 bootstrap
errors per connection [%]  0.000  0.000   +0.0%    +0.0% … +0.0%  no significant change  z-test
client CPU per reply [µs]   25.0      -       -                -  not tested             welch-runs
Significant: p < alpha = 0.01 (the CI is at 99%). Tests: welch-seconds: Welch's t-test over the per-second samples; bootstrap: bootstrap of the quantile over the recorded histograms; z-test: two-proportion z-test; welch-runs: Welch's t-test over one value per run.
FAIL p99>+10%: +21.0% (99% CI +18.0% … +24.5%, p = 0.0001), past the limit and significant
pass reply-rate<-5%: -0.2% (99% CI -0.9% … +0.4%, p = 0.3000), within the limit
";
        assert_eq!(text(&sample()), want);
    }

    #[test]
    fn markdown_table() {
        let want = "\
### rshperf compare

Base: 2 runs (main-1.json, main-2.json). New: 1 run (pr.json).

| | figure | base | new | change | 99% CI | verdict |
|---|---|--:|--:|--:|--:|---|
| = | reply rate (replies/s) | 200.0 | 199.5 | -0.2% | -0.9% … +0.4% | no significant change |
| ↑ | response p99 (ms) | 1.500 | 1.815 | +21.0% | +18.0% … +24.5% | **slower** |
| = | errors per connection (%) | 0.000 | 0.000 | +0.0% | +0.0% … +0.0% | no significant change |
| = | client CPU per reply (µs) | 25.0 | - | - | - | not tested |

Significant: p < 0.01. Tests: welch-seconds: Welch's t-test over the per-second samples; bootstrap: bootstrap of the quantile over the recorded histograms; z-test: two-proportion z-test; welch-runs: Welch's t-test over one value per run.

**Regression gates**

- ❌ FAIL: p99\\>+10%: +21.0% (99% CI +18.0% … +24.5%, p = 0.0001), past the limit and significant
- ✅ pass: reply-rate\\<-5%: -0.2% (99% CI -0.9% … +0.4%, p = 0.3000), within the limit
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
        assert_eq!(rows[0][5], "99% CI");
    }

    #[test]
    fn json_document() {
        let v = to_json(&sample());
        assert_eq!(v["format"], FORMAT);
        assert_eq!(v["failed"], true);
        let f = &v["figures"][1];
        assert_eq!(f["figure"], "percentiles_response_p99");
        assert_eq!(f["verdict"], "slower");
        assert_eq!(f["ci_pct"], json!([18.0, 24.5]));
        assert_eq!(v["figures"][3]["new"], Value::Null);
        assert_eq!(v["figures"][3]["change_pct"], Value::Null);
        assert_eq!(v["gates"][0]["failed"], true);
        assert_eq!(v["gates"][1]["figure"], "replies_rate");
        assert_eq!(v["base"], json!(["main-1.json", "main-2.json"]));
    }
}
