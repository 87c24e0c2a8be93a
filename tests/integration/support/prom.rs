//! A strict parser of the Prometheus text exposition format (0.0.4), for checking
//! rshperf's `/metrics`: every line is a `# HELP`, a `# TYPE` or a sample; each family
//! has one HELP and one TYPE before its samples, which are contiguous; names, label
//! names and escapes are valid; values are floats; no series repeats; counters end in
//! `_total`; histogram buckets are cumulative and `+Inf` equals `_count`. Panics with
//! the line number on any violation.

use std::collections::{BTreeMap, HashSet};

/// One sample: metric name, labels (sorted), value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The sample's name (with `_bucket`, `_sum`, `_count` for histograms).
    pub name: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Its value.
    pub value: f64,
}

/// A parsed exposition.
#[derive(Debug, Default)]
pub struct Exposition {
    /// Family name → type.
    pub types: BTreeMap<String, String>,
    /// Every sample, in order.
    pub samples: Vec<Sample>,
}

impl Exposition {
    /// The sum of the samples named `name` whose labels include all of `with`.
    pub fn sum(&self, name: &str, with: &[(&str, &str)]) -> f64 {
        self.samples
            .iter()
            .filter(|s| s.name == name)
            .filter(|s| {
                with.iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|s| s.value)
            .sum()
    }
}

fn is_name(s: &str, colon: bool) -> bool {
    let mut chars = s.chars();
    let ok_first = |c: char| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':');
    match chars.next() {
        Some(c) if ok_first(c) => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
}

fn value(s: &str) -> Option<f64> {
    match s {
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => s.parse().ok(),
    }
}

/// Parses `{a="x",b="y"}` at the start of `s`; returns the labels and the rest.
fn labels(s: &str, n: usize) -> (BTreeMap<String, String>, &str) {
    let mut out = BTreeMap::new();
    let Some(mut rest) = s.strip_prefix('{') else {
        return (out, s);
    };
    loop {
        if let Some(r) = rest.strip_prefix('}') {
            return (out, r);
        }
        let eq = rest
            .find('=')
            .unwrap_or_else(|| panic!("line {n}: label without '='"));
        let name = &rest[..eq];
        assert!(is_name(name, false), "line {n}: bad label name {name:?}");
        rest = rest[eq + 1..]
            .strip_prefix('"')
            .unwrap_or_else(|| panic!("line {n}: label value not quoted"));
        let mut val = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next() {
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => val.push('\\'),
                    Some((_, '"')) => val.push('"'),
                    Some((_, 'n')) => val.push('\n'),
                    other => panic!("line {n}: bad escape {other:?}"),
                },
                Some((_, '\n')) | None => panic!("line {n}: unterminated label value"),
                Some((_, c)) => val.push(c),
            }
        };
        assert!(
            out.insert(name.to_string(), val).is_none(),
            "line {n}: label {name} twice"
        );
        rest = &rest[end + 1..];
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
        } else {
            assert!(
                rest.starts_with('}'),
                "line {n}: expected ',' or '}}' after a label"
            );
        }
    }
}

/// The family a sample name belongs to, given the declared types.
fn family_of<'a>(name: &'a str, types: &BTreeMap<String, String>) -> Option<&'a str> {
    if types.contains_key(name) {
        return Some(name);
    }
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = name.strip_suffix(suffix) {
            if types
                .get(base)
                .is_some_and(|t| t == "histogram" || t == "summary")
            {
                return Some(base);
            }
        }
    }
    None
}

/// Parses `text` strictly.
pub fn parse(text: &str) -> Exposition {
    // Nothing to expose (before the engines start) is a valid, empty exposition.
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "the exposition ends with a newline"
    );
    let mut e = Exposition::default();
    let mut helped: HashSet<String> = HashSet::new();
    let mut done: HashSet<String> = HashSet::new();
    let mut current: Option<String> = None;
    let mut seen: HashSet<String> = HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        assert!(!line.is_empty(), "line {n}: blank line");
        if let Some(rest) = line.strip_prefix("# ") {
            let (kind, rest) = rest
                .split_once(' ')
                .unwrap_or_else(|| panic!("line {n}: bad comment"));
            let (name, arg) = rest
                .split_once(' ')
                .unwrap_or_else(|| panic!("line {n}: no text"));
            assert!(is_name(name, true), "line {n}: bad metric name {name:?}");
            assert!(
                !done.contains(name),
                "line {n}: family {name} resumed after others"
            );
            if current.as_deref() != Some(name) {
                if let Some(c) = current.take() {
                    done.insert(c);
                }
                current = Some(name.to_string());
            }
            match kind {
                "HELP" => assert!(helped.insert(name.to_string()), "line {n}: HELP twice"),
                "TYPE" => {
                    assert!(
                        ["counter", "gauge", "histogram", "summary", "untyped"].contains(&arg),
                        "line {n}: bad type {arg}"
                    );
                    assert!(
                        e.types.insert(name.into(), arg.into()).is_none(),
                        "line {n}: TYPE twice"
                    );
                    if arg == "counter" {
                        assert!(
                            name.ends_with("_total"),
                            "line {n}: counter {name} without _total"
                        );
                    }
                }
                _ => panic!("line {n}: unknown comment {kind}"),
            }
            continue;
        }
        assert!(!line.starts_with('#'), "line {n}: bad comment");
        let name_end = line
            .find(['{', ' '])
            .unwrap_or_else(|| panic!("line {n}: no value"));
        let name = &line[..name_end];
        assert!(is_name(name, true), "line {n}: bad metric name {name:?}");
        let (labels, rest) = labels(&line[name_end..], n);
        let rest = rest
            .strip_prefix(' ')
            .unwrap_or_else(|| panic!("line {n}: no space before the value"));
        let mut parts = rest.split(' ');
        let v = value(parts.next().unwrap_or("")).unwrap_or_else(|| panic!("line {n}: bad value"));
        if let Some(ts) = parts.next() {
            ts.parse::<i64>()
                .unwrap_or_else(|_| panic!("line {n}: bad timestamp"));
        }
        assert!(parts.next().is_none(), "line {n}: trailing text");
        let family =
            family_of(name, &e.types).unwrap_or_else(|| panic!("line {n}: {name} has no TYPE"));
        assert_eq!(
            current.as_deref(),
            Some(family),
            "line {n}: sample outside its family's block"
        );
        assert!(helped.contains(family), "line {n}: {family} has no HELP");
        let key = format!("{name}{labels:?}");
        assert!(seen.insert(key), "line {n}: series repeated");
        if e.types[family] == "counter" {
            assert!(v >= 0.0, "line {n}: negative counter");
        }
        e.samples.push(Sample {
            name: name.to_string(),
            labels,
            value: v,
        });
    }
    check_histograms(&e);
    e
}

/// Buckets cumulative, `+Inf` present and equal to `_count`.
fn check_histograms(e: &Exposition) {
    for (family, t) in &e.types {
        if t != "histogram" {
            continue;
        }
        let bucket = format!("{family}_bucket");
        let mut groups: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for s in e.samples.iter().filter(|s| s.name == bucket) {
            let mut rest = s.labels.clone();
            let le = rest
                .remove("le")
                .unwrap_or_else(|| panic!("{bucket} without le"));
            groups
                .entry(format!("{rest:?}"))
                .or_default()
                .push((value(&le).expect("le"), s.value));
        }
        assert!(!groups.is_empty(), "{family}: no buckets");
        for (labels, mut b) in groups {
            b.sort_by(|x, y| x.0.total_cmp(&y.0));
            assert!(
                b.windows(2).all(|w| w[0].1 <= w[1].1),
                "{family}{labels}: not cumulative"
            );
            let last = b.last().expect("bucket");
            assert!(last.0.is_infinite(), "{family}{labels}: no +Inf bucket");
            let count = e
                .samples
                .iter()
                .find(|s| {
                    s.name == format!("{family}_count") && format!("{:?}", s.labels) == labels
                })
                .unwrap_or_else(|| panic!("{family}{labels}: no _count"));
            assert_eq!(
                count.value, last.1,
                "{family}{labels}: +Inf bucket != _count"
            );
        }
    }
}
