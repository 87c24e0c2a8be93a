//! JUnit XML for CI test reporters (Jenkins, GitLab, GitHub): one `<testcase>` per
//! `--fail-on` threshold of a run, or per regression gate of `rshperf compare`, a
//! `<failure>` carrying the measured value when it tripped (and a `<skipped>` case for
//! each invalid run `compare --force` compared). Written by hand (five
//! entities to escape) rather than through an XML crate; the callers write it with
//! `output::file` (temporary file and rename). Called by `front::runner` and
//! `front::compare`.

/// One test case.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Case {
    /// Its name: the expression as typed.
    pub(crate) name: String,
    /// `Some(message)` when it failed: the measured value and why.
    pub(crate) failure: Option<String>,
    /// `Some(message)` when it was not judged: why (`<skipped>`).
    pub(crate) skipped: Option<String>,
    /// What was measured, for `<system-out>` (passing cases too).
    pub(crate) output: String,
}

/// `text` with XML's special characters as entities.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot carry at all.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// The JUnit document of one suite named `suite` (`classname` on every case).
pub(crate) fn document(suite: &str, classname: &str, cases: &[Case], time_s: f64) -> String {
    let failures = cases.iter().filter(|c| c.failure.is_some()).count();
    let skipped = match cases.iter().filter(|c| c.skipped.is_some()).count() {
        0 => String::new(),
        n => format!(" skipped=\"{n}\""),
    };
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let head = format!(
        "name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\"{skipped} time=\"{time_s:.3}\"",
        escape(suite),
        cases.len()
    );
    out.push_str(&format!("<testsuites {head}>\n  <testsuite {head}>\n"));
    for c in cases {
        out.push_str(&format!(
            "    <testcase name=\"{}\" classname=\"{}\" time=\"0\">\n",
            escape(&c.name),
            escape(classname)
        ));
        if let Some(f) = &c.failure {
            out.push_str(&format!(
                "      <failure message=\"{}\" type=\"threshold\">{}</failure>\n",
                escape(f),
                escape(f)
            ));
        }
        if let Some(m) = &c.skipped {
            out.push_str(&format!("      <skipped message=\"{}\"/>\n", escape(m)));
        }
        out.push_str(&format!(
            "      <system-out>{}</system-out>\n    </testcase>\n",
            escape(&c.output)
        ));
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn cases() -> Vec<Case> {
        vec![
            Case {
                name: "p99>50ms".into(),
                failure: Some("threshold breached: p99>50ms (p99 = 73.471 ms)".into()),
                skipped: None,
                output: "p99 = 73.471 ms".into(),
            },
            Case {
                name: "errors<1 & \"quoted\"".into(),
                failure: None,
                skipped: None,
                output: "errors = 0".into(),
            },
        ]
    }

    #[test]
    fn exact_document() {
        let want = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="rshperf" tests="2" failures="1" errors="0" time="1.500">
  <testsuite name="rshperf" tests="2" failures="1" errors="0" time="1.500">
    <testcase name="p99&gt;50ms" classname="rshperf.fail-on" time="0">
      <failure message="threshold breached: p99&gt;50ms (p99 = 73.471 ms)" type="threshold">threshold breached: p99&gt;50ms (p99 = 73.471 ms)</failure>
      <system-out>p99 = 73.471 ms</system-out>
    </testcase>
    <testcase name="errors&lt;1 &amp; &quot;quoted&quot;" classname="rshperf.fail-on" time="0">
      <system-out>errors = 0</system-out>
    </testcase>
  </testsuite>
</testsuites>
"#;
        assert_eq!(document("rshperf", "rshperf.fail-on", &cases(), 1.5), want);
    }

    /// Checks a JUnit document with an XML parser: the counts on both suite elements
    /// agree with the cases, and each case's name and failure are as given.
    pub(crate) fn check_junit(xml: &str, want: &[(&str, Option<&str>)]) {
        let doc = roxmltree::Document::parse(xml).expect("well-formed XML");
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "testsuites");
        let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
        assert_eq!(suites.len(), 1);
        let failures = want.iter().filter(|(_, f)| f.is_some()).count().to_string();
        for el in [root, suites[0]] {
            assert_eq!(el.attribute("tests"), Some(want.len().to_string().as_str()));
            assert_eq!(el.attribute("failures"), Some(failures.as_str()));
        }
        let got: Vec<(String, Option<String>)> = suites[0]
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .map(|tc| {
                let failure = tc
                    .children()
                    .find(|n| n.has_tag_name("failure"))
                    .map(|f| f.attribute("message").unwrap_or("").to_string());
                (tc.attribute("name").unwrap_or("").to_string(), failure)
            })
            .collect();
        let want: Vec<(String, Option<String>)> = want
            .iter()
            .map(|(n, f)| (n.to_string(), f.map(str::to_string)))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn parses_as_junit() {
        let xml = document("rshperf", "rshperf.fail-on", &cases(), 1.5);
        check_junit(
            &xml,
            &[
                (
                    "p99>50ms",
                    Some("threshold breached: p99>50ms (p99 = 73.471 ms)"),
                ),
                ("errors<1 & \"quoted\"", None),
            ],
        );
        let empty = document("rshperf", "x", &[], 0.0);
        check_junit(&empty, &[]);
        assert_eq!(escape("a\u{1}b"), "a?b");
    }
}
