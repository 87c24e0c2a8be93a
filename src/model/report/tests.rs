//! Tests of the report and of the table of figures it is evaluated from (a separate
//! file: the table's checks are longer than the report): every figure, column, name,
//! alias, compare row and Prometheus family maps to a JSON leaf of a fully populated
//! report, and every leaf to a figure; no name is taken twice; values have their
//! units' types; the documentation lists the table. The samples of the families are
//! checked against the same document in `engine::metrics::text`.

use serde_json::Value;

use super::*;
use crate::model::figure::compare::compare_rows;
use crate::model::figure::family::{self, FAMILIES};
use crate::model::figure::run::table as run_table;
use crate::model::figure::second::table as second_table;
use crate::model::figure::server::table as server_table;
use crate::model::figure::{hist_names, Keys, Spec, Unit};
use crate::model::stats::tests::every_field_set;
use crate::model::threshold::{aliases, metric_names};

const RUN: RunInfo = RunInfo {
    duration: 2.0,
    cpu_user: 0.5,
    cpu_system: 0.25,
};

/// The derived members of a report in which every optional member is present.
fn full() -> (Stats, Report) {
    let stats = every_field_set();
    let facts = Facts {
        call_rate: 12.5,
        servers: vec!["a:80".into(), "b:81".into()],
        // Every measurement measured, one reason.
        validity: Some(crate::model::validity::judge(
            &crate::model::validity::Evidence {
                period_s: 0.01,
                busiest_pct: 95.0,
                engine_wall_s: 2.0,
                wait_pct: Some(1.0),
                throttled_pct: Some(0.0),
                quota_cores: Some(2.0),
                run_queue: Some(0.5),
                cores: 2,
                steal_pct: Some(0.0),
                table_peak: 3,
                table_size: 1000,
                ports_peak: 3,
                port_range: 28_232,
                ..Default::default()
            },
        )),
    };
    let report = Report::new(&stats, &RUN, &facts);
    (stats, report)
}

/// The leaves of `v` in document order, as JSON paths (`connections.rate`); the
/// elements of an array of objects as `name[].member` (once), other arrays as leaves.
fn leaves(v: &Value) -> Vec<String> {
    fn walk(v: &Value, path: &str, out: &mut Vec<String>) {
        let join = |k: &str| {
            if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            }
        };
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    walk(child, &join(k), out);
                }
            }
            Value::Array(items) if items.iter().any(Value::is_object) => {
                for item in items {
                    let mut mine = Vec::new();
                    walk(item, &format!("{path}[]"), &mut mine);
                    for p in mine {
                        if !out.contains(&p) {
                            out.push(p);
                        }
                    }
                }
            }
            _ => out.push(path.to_string()),
        }
    }
    let mut out = Vec::new();
    walk(v, "", &mut out);
    out
}

/// Every leaf path the tables declare, in table order.
fn declared() -> Vec<String> {
    let mut out = Vec::new();
    for s in &run_table().specs {
        match s.figure.path.as_str() {
            "servers" => out.extend(
                server_table()
                    .specs
                    .iter()
                    .map(|t| format!("servers[].{}", t.path)),
            ),
            "timeline" => out.extend(
                second_table()
                    .specs
                    .iter()
                    .map(|t| format!("timeline[].{}", t.path)),
            ),
            // The rows of `full`'s one reason (an engine at 95 %): `reason`, `text`,
            // and the measurements that reason names.
            "validity.reasons" => out.extend(
                [
                    "reason",
                    "text",
                    "measured.busiest_engine_pct",
                    "measured.limit_pct",
                ]
                .map(|m| format!("validity.reasons[].{m}")),
            ),
            _ => out.push(s.path.clone()),
        }
    }
    out
}

#[test]
fn every_leaf_of_a_full_report_is_a_figure_and_every_figure_a_leaf() {
    let (_, r) = full();
    let doc = r.to_json();
    for member in [
        "sessions",
        "servers",
        "http2",
        "http3",
        "call_rate",
        "stream",
        "timeline",
    ] {
        assert!(doc.get(member).is_some(), "every_field_set lacks {member}");
    }
    assert_eq!(leaves(&doc), declared());
}

#[test]
fn every_column_name_row_and_label_maps_to_a_leaf() {
    let (_, r) = full();
    let leaves = leaves(&r.to_json());
    let has = |path: &str| leaves.iter().any(|l| l == path);
    let run = &run_table().specs;
    for s in run.iter().filter(|s| s.figure.csv || s.figure.fail_on) {
        assert!(
            has(&s.path),
            "CSV column or --fail-on name {} has no leaf",
            s.name
        );
        assert_eq!(s.name, s.path.replace('.', "_"));
    }
    for name in metric_names() {
        assert!(run.iter().any(|s| s.name == *name), "{name}");
    }
    for s in &second_table().specs {
        assert!(
            has(&format!("timeline[].{}", s.path)),
            "timeline column {}",
            s.name
        );
    }
    // Each compare row is declared on a figure that is a leaf.
    let compared: Vec<&Spec<_>> = run
        .iter()
        .filter(|s| s.figure.compare.is_some_and(|c| (c.rank)(s.at).is_some()))
        .collect();
    assert_eq!(compared.len(), compare_rows().len());
    for s in compared {
        assert!(has(&s.path), "compare row of {}", s.name);
    }
    // Every HTML label is on a timeline column, and filled in.
    for s in second_table().specs.iter().filter_map(|s| s.html.as_ref()) {
        assert!(!s.contains('{'), "{s}");
    }
}

#[test]
fn every_family_exports_leaves_of_the_document() {
    let (stats, r) = full();
    let doc = r.to_json();
    let leaves = leaves(&doc);
    let raw = serde_json::to_value(&stats).expect("Stats serialise");
    for f in FAMILIES {
        assert!(f.name.starts_with("rshperf_"), "{}", f.name);
        assert!(!f.leaves.is_empty(), "{}", f.name);
        for leaf in f.leaves {
            // A placeholder is a label: one leaf per key.
            let keys = [Keys::Kind, Keys::Class, Keys::Hist, Keys::Q]
                .into_iter()
                .find(|k| leaf.contains(k.placeholder()));
            let expanded: Vec<String> = match keys {
                Some(keys) => {
                    let label = keys.placeholder().trim_matches(['{', '}']);
                    assert!(f.labels.contains(&label), "{}: no label {label}", f.name);
                    keys.keys()
                        .iter()
                        .map(|(k, _)| leaf.replace(keys.placeholder(), k))
                        .collect()
                }
                None => vec![leaf.to_string()],
            };
            for path in expanded {
                let found = if let Some(member) = path.strip_prefix("raw.") {
                    raw.get(member).is_some_and(|v| !v.is_object())
                } else if path.starts_with("config.") {
                    // The configuration is the output layer's (`output::json` checks it).
                    true
                } else if f.kind == family::Type::Histogram {
                    let q = format!("{path}.");
                    ["count", "max"]
                        .iter()
                        .all(|m| leaves.contains(&format!("{q}{m}")))
                } else {
                    leaves.contains(&path)
                };
                assert!(found, "{}: {path} is not a leaf of the document", f.name);
            }
        }
    }
}

#[test]
fn no_name_is_taken_twice_and_every_alias_resolves() {
    let mut names: Vec<String> = metric_names().to_vec();
    names.extend(aliases().into_iter().map(|(a, _)| a));
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "a name or alias is taken twice");
    for table in [
        run_table()
            .specs
            .iter()
            .map(|s| s.name.clone())
            .collect::<Vec<_>>(),
        second_table()
            .specs
            .iter()
            .map(|s| s.name.clone())
            .collect(),
        server_table()
            .specs
            .iter()
            .map(|s| s.name.clone())
            .collect(),
        compare_rows().iter().map(|r| r.figure.clone()).collect(),
    ] {
        let mut sorted = table.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), table.len(), "{table:?}");
    }
    for (alias, m) in aliases() {
        assert!(metric_names().contains(&m.figure), "{alias} → {}", m.figure);
        assert!(!alias.contains(['{', '-', '.']), "{alias}");
    }
    // A templated figure's alias that a plain figure's alias takes is left out: only
    // `lifetime_max` (the exact longest lifetime, not the histogram's).
    let kept = aliases();
    let shadowed: Vec<(String, String)> = run_table()
        .specs
        .iter()
        .flat_map(|s| {
            s.aliases
                .iter()
                .map(move |(a, _)| (a.clone(), s.name.clone()))
        })
        .filter(|(a, n)| !kept.iter().any(|(k, m)| k == a && m.figure == *n))
        .collect();
    assert_eq!(
        shadowed,
        [(
            "lifetime_max".to_string(),
            "percentiles_lifetime_max".to_string()
        )]
    );
    for r in compare_rows() {
        for s in r.synonyms {
            assert!(metric_names().iter().any(|n| n == s), "{s}");
        }
    }
}

#[test]
fn values_have_their_units_types() {
    let (_, r) = full();
    for (s, v) in r.figures() {
        let ok = matches!(
            (s.unit(), v),
            (Unit::Count | Unit::Bytes, Val::Int(_))
                | (Unit::S, Val::Int(_) | Val::Real(_))
                | (
                    Unit::Ratio | Unit::Rate(_) | Unit::Ms | Unit::Percent,
                    Val::Real(_)
                )
                | (Unit::Flag, Val::Flag(_))
                | (Unit::Name, Val::Text(_))
                | (Unit::Counts | Unit::Rows, Val::Json(_))
        );
        assert!(ok, "{}: {:?} is not a {:?}", s.name, v, s.unit());
    }
    // Text and lists are neither columns nor --fail-on names.
    for s in &run_table().specs {
        if matches!(s.unit(), Unit::Name | Unit::Counts | Unit::Rows) {
            assert!(!s.figure.csv && !s.figure.fail_on, "{}", s.name);
        }
    }
}

#[test]
fn templates_expand_key_by_key_in_table_order() {
    let names: Vec<&str> = run_table().specs.iter().map(|s| s.name.as_str()).collect();
    let at = |n: &str| names.iter().position(|x| *x == n).expect(n);
    assert!(at("percentiles_connect_max") < at("percentiles_response_count"));
    assert_eq!(
        at("percentiles_connect_p50"),
        at("percentiles_connect_count") + 1
    );
    assert_eq!(at("errors_other"), at("errors_client_timo") + 7);
    let s = run_table()
        .get("percentiles_lateness_p99_9")
        .expect("a figure");
    assert_eq!(s.about, "lateness p99.9 (the `Percentiles lateness` line)");
    assert_eq!(s.at.q, 3);
    assert_eq!(hist_names()[s.at.hist], "lateness");
    let e = second_table().get("errors_fd_unavail").expect("a column");
    assert_eq!(e.html.as_deref(), Some("fd-unavail"));
}

#[test]
fn the_documentation_lists_every_figure_with_its_unit_and_meaning() {
    let doc = include_str!("../../../docs/json.md");
    let section = doc
        .split("\n### 2.8 Figure names\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/json.md has §2.8");
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
    let want: Vec<String> = run_table()
        .specs
        .iter()
        .filter(|s| s.figure.fail_on)
        .map(|s| {
            format!(
                "| `{}` | `{}` | {} | {} |",
                s.name,
                s.path,
                s.unit().symbol(),
                s.about
            )
        })
        .collect();
    assert_eq!(rows.join("\n"), want.join("\n"), "docs/json.md §2.8");
}

#[test]
fn names_are_unique_and_flat_paths_of_the_document() {
    let r = Report::new(&every_field_set(), &RUN, &Facts::default());
    let names: Vec<String> = r.metrics().into_iter().map(|(n, _)| n).collect();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "a flattened name is taken twice");
    for n in [
        "connections_rate",
        "reply_rate_avg",
        "errors_client_timo",
        "status_2xx",
    ] {
        assert!(names.iter().any(|x| x == n), "{n}");
    }
    assert!(names.iter().any(|x| x == "percentiles_response_p99_9"));
    assert!(names.iter().any(|x| x == "sessions_failed"));
}

#[test]
fn errors_and_status_are_keyed_from_the_enum_and_the_classes() {
    let mut s = Stats::new();
    for (k, n) in [(0, 1), (2, 2), (7, 3)] {
        s.errors[k] = n;
    }
    for (c, n) in [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5)] {
        s.replies_by_class[c] = n;
    }
    let v = Report::new(&s, &RUN, &Facts::default()).to_json();
    let e = &v["errors"];
    assert_eq!(e["total"], 6);
    assert_eq!(e["client_timo"], 1);
    assert_eq!(e["connrefused"], 2);
    assert_eq!(e["other"], 3);
    assert_eq!(v["status"]["3xx"], 3);
}

#[test]
fn non_finite_figures_are_null_and_none() {
    let zero = RunInfo {
        duration: 0.0,
        ..RUN
    };
    let mut s = Stats::new();
    s.on_connecting();
    let r = Report::new(&s, &zero, &Facts::default());
    assert_eq!(r.to_json()["connections"]["rate"], Value::Null);
    let m = r.metrics();
    let rate = m
        .iter()
        .find(|(n, _)| n == "connections_rate")
        .map(|(_, v)| *v);
    assert_eq!(rate, Some(None));
}

#[test]
fn achieved_calls_per_second_count_from_the_schedules_start() {
    // 81 calls issued in a 2-s run whose schedule began 4.2 ms in (the pool's
    // warm-up); a run whose warm-up took it all achieved nothing.
    let (mut stats, report) = full();
    assert_eq!((stats.pool.issued, stats.pool.warm_up_us), (81, 4_200));
    let c = report.call_rate.expect("a call-rate run");
    assert_eq!(c.achieved_per_s, 81.0 / (2.0 - 0.0042));
    stats.pool.warm_up_us = 2_000_000;
    let facts = Facts {
        call_rate: 12.5,
        ..Default::default()
    };
    let c = Report::new(&stats, &RUN, &facts)
        .call_rate
        .expect("call rate");
    assert_eq!(c.achieved_per_s, 0.0);
}
