//! `ConfigDoc` against the JSON the configuration had before it was a serde type
//! (`golden/`, written by the hand-made `config` member of `output::json`), read back,
//! and its roles.

use serde_json::{json, Value};

use super::samples::samples;
use super::*;

/// The golden text of each sample.
fn golden(name: &str) -> &'static str {
    match name {
        "defaults" => include_str!("golden/defaults.json"),
        "everything" => include_str!("golden/everything.json"),
        "sesslog" => include_str!("golden/sesslog.json"),
        "sesspage" => include_str!("golden/sesspage.json"),
        "variable" => include_str!("golden/variable.json"),
        "call_rate" => include_str!("golden/call_rate.json"),
        "profile" => include_str!("golden/profile.json"),
        "replay" => include_str!("golden/replay.json"),
        other => panic!("no golden text for {other}"),
    }
}

#[test]
fn the_member_is_byte_for_byte_what_it_was() {
    for (name, cfg) in samples() {
        let doc = ConfigDoc::of(&cfg);
        let text = serde_json::to_string_pretty(&doc).expect("serializes") + "\n";
        assert_eq!(text, golden(name), "{name}");
        // The `Value` a document is made of, too (its compact text is what a file
        // without pretty-printing holds).
        let value: Value = serde_json::from_str(golden(name)).expect("JSON");
        assert_eq!(doc.to_json(), value, "{name}");
        assert_eq!(
            serde_json::to_string(&doc.to_json()).expect("serializes"),
            serde_json::to_string(&value).expect("serializes"),
            "{name}"
        );
    }
}

#[test]
fn a_stored_member_reads_back_as_it_was_written() {
    for (name, _) in samples() {
        let doc: ConfigDoc = serde_json::from_str(golden(name)).expect("reads");
        let text = serde_json::to_string_pretty(&doc).expect("serializes") + "\n";
        assert_eq!(text, golden(name), "{name}");
    }
}

#[test]
fn an_earlier_releases_member_reads_with_defaults_for_the_newer_members() {
    let old = json!({
        "echo": "rshperf --server=a",
        "server": "a",
        "port": 80,
        "period": { "kind": "deterministic", "period_s": 0.5, "rate": 2.0 },
        "client": [0, 1],
        "something_else": true,
    });
    let doc: ConfigDoc = serde_json::from_value(old).expect("reads");
    assert_eq!(doc.echo(), "rshperf --server=a");
    assert_eq!(doc.call_rate(), 0.0);
    assert!(!doc.is_session());
    let v = doc.to_json();
    assert_eq!(
        v["period"],
        json!({ "kind": "deterministic", "period_s": 0.5, "rate": 2.0 })
    );
    assert_eq!(v["metrics_linger_s"], json!(0.0));
    assert_eq!(v["io"], json!(""));
    assert!(v.get("something_else").is_none());
    let bad: Result<ConfigDoc, _> = serde_json::from_value(json!({ "client": "0/1" }));
    assert!(bad.is_err());
}

#[test]
fn every_role_names_a_member_and_merge_and_compare_see_their_own() {
    let (_, cfg) = &samples()[1];
    let doc = ConfigDoc::of(cfg);
    let v = doc.to_json();
    for (name, _) in ConfigDoc::ROLES {
        assert!(v.get(name).is_some(), "{name}");
    }
    let names =
        |roles: &[Role]| -> Vec<&str> { doc.identity(roles).into_iter().map(|(n, _)| n).collect() };
    let merge = names(&[Role::Workload, Role::Amount]);
    let compare = names(&[Role::Workload, Role::Client]);
    assert!(merge.contains(&"num_conns") && !merge.contains(&"threads"));
    assert!(compare.contains(&"threads") && !compare.contains(&"num_conns"));
    for both in [
        "server",
        "uri",
        "period",
        "concurrency",
        "ssl",
        "unix_socket",
        "body_file",
        "stream",
        "stream_gap_timeout_s",
        "replay",
    ] {
        assert!(merge.contains(&both) && compare.contains(&both), "{both}");
    }
    assert!(!merge.contains(&"json") && !merge.contains(&"echo"));
    let mut other = v.clone();
    other["uri"] = json!("/y");
    let other: ConfigDoc = serde_json::from_value(other).expect("reads");
    assert_eq!(
        doc.differs(&other, &[Role::Workload]),
        Some(("uri", json!("/x?y=1"), json!("/y")))
    );
    assert_eq!(doc.differs(&doc.clone(), &[Role::Workload]), None);
}

#[test]
fn the_whole_of_a_partitioned_run_is_partition_0_of_1() {
    let (_, cfg) = &samples()[1];
    let doc = ConfigDoc::of(cfg);
    let whole = doc.whole("rshperf --server=x".into(), Some("all.json"));
    let v = whole.to_json();
    assert_eq!(v["partition"], json!([0, 1]));
    assert_eq!(v["echo"], json!("rshperf --server=x"));
    assert_eq!(v["json"], json!("all.json"));
    assert_eq!(v["uri"], doc.to_json()["uri"]);
}
