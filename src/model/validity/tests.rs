//! The judgement on injected measurements: each rule at its threshold, the client's
//! limit, the too-short rule against real thresholds, and a document's block read
//! back and merged.

use serde_json::json;

use super::doc::{from_document, merged, reasons_json};
use super::*;
use crate::model::judge::needs;
use crate::model::stats::Stats;
use crate::model::threshold::parse_all;

/// A healthy run at 1000/s for 10 s: on time, an engine at 30 %, nothing starved.
fn healthy() -> Evidence {
    Evidence {
        period_s: 0.001,
        arrivals: 10_000,
        late_p50_ms: 0.05,
        late_p99_ms: 0.4,
        busiest_pct: 30.0,
        engine_wall_s: 10.0,
        wait_pct: Some(0.5),
        run_queue: Some(1.0),
        cores: 2,
        steal_pct: Some(0.0),
        table_peak: 20,
        table_size: 1000,
        engines: 1,
        fd_limit: 1024,
        ports_peak: 25,
        port_range: 28232,
        duration_s: 10.0,
        ..Evidence::default()
    }
}

fn causes(e: &Evidence) -> Vec<&'static str> {
    judge(e).reasons.iter().map(|r| r.cause.key()).collect()
}

#[test]
fn a_healthy_run_is_valid_with_its_measurements() {
    let v = judge(&healthy());
    assert!(v.valid() && !v.client_bound(), "{v:?}");
    let names: Vec<&str> = v.measured.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "busiest_engine_pct",
            "engine_wait_pct",
            "throttled_pct",
            "quota_cores",
            "run_queue",
            "cores",
            "steal_pct",
            "table_peak",
            "table_size",
            "ports_peak",
            "port_range"
        ]
    );
    assert_eq!(v.measured[1].1, Some(0.5));
    // Not measured: no quota.
    assert_eq!(v.measured[2].1, None);
}

#[test]
fn the_engines_cpu_is_judged_at_its_threshold_over_enough_engine_time() {
    let at = |pct: f64, wall: f64| {
        causes(&Evidence {
            busiest_pct: pct,
            engine_wall_s: wall,
            ..healthy()
        })
    };
    assert!(at(89.9, 10.0).is_empty());
    assert_eq!(at(ENGINE_CPU_PCT, 10.0), ["engine_cpu"]);
    assert_eq!(at(100.0, ENGINE_MIN_WALL_S), ["engine_cpu"]);
    // Start-up dominates a shorter run.
    assert!(at(100.0, 0.49).is_empty());
    // A sequential run (no schedule) is meant to go as fast as it can.
    let seq = Evidence {
        period_s: 0.0,
        busiest_pct: 100.0,
        ..healthy()
    };
    assert!(judge(&seq).valid());
    let v = judge(&Evidence {
        busiest_pct: 97.4,
        ..healthy()
    });
    assert_eq!(
        v.reasons[0].text,
        "an engine thread used 97 % of a core (limit 90 %)"
    );
    assert_eq!(
        v.reasons[0].measured,
        [
            ("busiest_engine_pct".to_string(), 97.4),
            ("limit_pct".to_string(), 90.0)
        ]
    );
    assert!(v.client_bound());
}

#[test]
fn a_throttling_quota_is_the_engines_limit() {
    let at = |t: Option<f64>| Evidence {
        throttled_pct: t,
        quota_cores: Some(0.05),
        ..healthy()
    };
    assert!(judge(&at(Some(9.9))).valid());
    assert!(judge(&at(None)).valid());
    let v = judge(&at(Some(80.0)));
    assert_eq!(
        v.reasons[0].text,
        "a CPU quota of 0.05 cores (cgroup) throttled the process in 80 % of its periods \
         (limit 10 %)"
    );
    assert_eq!(v.reasons[0].cause, Cause::EngineCpu);
    assert_eq!(
        client_limit(&at(Some(80.0))).map(|(l, _)| l),
        Some(Limit::Throttled)
    );
}

#[test]
fn most_arrivals_late_is_a_schedule_slip() {
    let late = |p50: f64, arrivals: u64| Evidence {
        late_p50_ms: p50,
        late_p99_ms: p50 * 2.0,
        arrivals,
        ..healthy()
    };
    // At 1000/s the limit is the 1-ms floor (10 % of 1 ms is less).
    assert!(judge(&late(1.0, 10_000)).valid());
    assert_eq!(causes(&late(1.5, 10_000)), ["schedule_slip"]);
    // Too few arrivals, or a schedule shorter than a second (500 at 1000/s)…
    assert!(judge(&late(1.5, 99)).valid());
    assert!(judge(&late(1.5, 500)).valid());
    // …unless the lag outgrew the whole schedule.
    assert_eq!(causes(&late(600.0, 500)), ["schedule_slip"]);
    // At 50/s the limit is 10 % of 20 ms.
    let slow = Evidence {
        period_s: 0.02,
        ..late(1.9, 1000)
    };
    assert!(judge(&slow).valid());
    assert_eq!(
        causes(&Evidence {
            late_p50_ms: 2.1,
            ..slow.clone()
        }),
        ["schedule_slip"]
    );
    // With --max-connections arrivals wait for the server by design.
    assert!(judge(&Evidence {
        capped: true,
        ..late(5.0, 10_000)
    })
    .valid());
    // A late tail alone is jitter.
    assert!(judge(&Evidence {
        late_p99_ms: 30.0,
        ..healthy()
    })
    .valid());
    let v = judge(&Evidence {
        deferred: 7,
        held: 3,
        ..late(1.5, 10_000)
    });
    assert_eq!(
        v.reasons[0].text,
        "arrivals started late: lateness p50 1.500 ms, p99 3.000 ms (limit 1.000 ms); 7 \
         deferred by the catch-up bound, 3 held for a free connection"
    );
}

#[test]
fn the_client_limit_is_decided_on_cpu_lateness_and_held_arrivals() {
    use Limit::{Held, Saturated, Starved};
    let cases = [
        // (p50 ms: behind when above 1, busy %, engine wall s, held) → limit
        (0.05, 10.0, 10.0, 0, None),
        (0.05, 89.9, 10.0, 0, None),
        (0.05, 90.0, 10.0, 0, Some(Saturated)),
        (1.5, 90.0, 10.0, 0, Some(Saturated)),
        (1.5, 93.0, 10.0, 500, Some(Saturated)),
        (1.5, 95.0, 3.0, 0, Some(Saturated)),
        (1.5, 89.9, 10.0, 0, Some(Starved)),
        (1.5, 40.0, 10.0, 0, Some(Starved)),
        (1.5, 40.0, 10.0, 1, Some(Held)),
        // Too short to judge on CPU: only lateness counts.
        (0.05, 99.0, 0.49, 0, None),
        (1.5, 99.0, 0.49, 0, Some(Starved)),
    ];
    for (p50, busy, wall, held, want) in cases {
        let e = Evidence {
            late_p50_ms: p50,
            busiest_pct: busy,
            engine_wall_s: wall,
            held,
            ..healthy()
        };
        assert_eq!(
            client_limit(&e).map(|(l, _)| l),
            want,
            "{p50} {busy} {wall} {held}"
        );
        assert_eq!(judge(&e).client_bound(), want.is_some());
    }
}

#[test]
fn the_descriptor_budget_is_exhausted_within_ten_percent() {
    let at = |peak: u64, waited: u64, unavail: u64| {
        causes(&Evidence {
            table_peak: peak,
            table_size: 1000,
            table_waited: waited,
            fd_unavail: unavail,
            ..healthy()
        })
    };
    assert!(at(899, 0, 0).is_empty());
    assert_eq!(at(900, 0, 0), ["fd_budget"]);
    assert_eq!(at(10, 1, 0), ["fd_budget"]);
    assert_eq!(at(10, 0, 1), ["fd_budget"]);
    let v = judge(&Evidence {
        table_peak: 950,
        ..healthy()
    });
    assert_eq!(
        v.reasons[0].text,
        "the connection table came within 10 % of full: 950 of its 1000 slots in use at \
         once, the descriptor limit being 1024; 0 arrivals waited for a free slot, 0 \
         connections failed (fd-unavail)"
    );
    // An unknown table size judges only what failed.
    assert!(judge(&Evidence {
        table_peak: 950,
        table_size: 0,
        ..healthy()
    })
    .valid());
}

#[test]
fn the_port_budget_is_exhausted_within_ten_percent() {
    let at = |peak: u64, unavail: u64| {
        causes(&Evidence {
            ports_peak: peak,
            port_range: 28232,
            addr_unavail: unavail,
            ..healthy()
        })
    };
    assert!(at(25_408, 0).is_empty());
    assert_eq!(at(25_409, 0), ["port_budget"]);
    assert_eq!(at(3, 1), ["port_budget"]);
    // An unknown range judges only what failed.
    assert!(judge(&Evidence {
        ports_peak: 60_000,
        port_range: 0,
        ..healthy()
    })
    .valid());
}

#[test]
fn a_starved_machine_is_judged_on_the_engines_waits_then_steal_then_the_run_queue() {
    let v = |e: Evidence| causes(&e);
    assert!(v(Evidence {
        wait_pct: Some(4.9),
        run_queue: Some(9.0),
        ..healthy()
    })
    .is_empty());
    assert_eq!(
        v(Evidence {
            wait_pct: Some(WAIT_PCT),
            ..healthy()
        }),
        ["machine_starved"]
    );
    assert_eq!(
        v(Evidence {
            steal_pct: Some(12.0),
            ..healthy()
        }),
        ["machine_starved"]
    );
    // Without the engine's own waits, the run queue: more tasks than cores.
    let no_wait = |q: f64| Evidence {
        wait_pct: None,
        run_queue: Some(q),
        ..healthy()
    };
    assert!(v(no_wait(2.0)).is_empty());
    assert_eq!(v(no_wait(2.1)), ["machine_starved"]);
    // Nothing measured: nothing judged.
    assert!(v(Evidence {
        wait_pct: None,
        run_queue: None,
        steal_pct: None,
        ..healthy()
    })
    .is_empty());
    // Too short to judge the waits.
    assert!(v(Evidence {
        wait_pct: Some(50.0),
        engine_wall_s: 0.2,
        ..healthy()
    })
    .is_empty());
    let both = judge(&Evidence {
        wait_pct: Some(22.0),
        run_queue: Some(6.5),
        steal_pct: Some(15.0),
        ..healthy()
    });
    let texts: Vec<&str> = both.reasons.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "an engine thread waited for a CPU 22 % of its run (limit 5 %; run queue 6.5 \
             tasks on 2 cores)",
            "the hypervisor stole 15 % of the CPU time (limit 10 %)"
        ]
    );
    assert!(both.client_bound());
    // Late arrivals on a starved machine: the client was the limit either way.
    assert_eq!(
        client_limit(&Evidence {
            late_p50_ms: 3.0,
            wait_pct: Some(22.0),
            ..healthy()
        })
        .map(|(l, _)| l),
        Some(Limit::Starved)
    );
}

#[test]
fn an_interrupted_run_is_invalid_but_not_client_bound() {
    let v = judge(&Evidence {
        interrupted: true,
        duration_s: 2.34,
        abandoned: 3,
        unstarted: 1200,
        ..healthy()
    });
    assert_eq!(v.causes(), "interrupted");
    assert!(!v.valid() && !v.client_bound());
    assert_eq!(
        v.reasons[0].text,
        "interrupted (SIGINT or SIGTERM) after 2.3 s: the figures cover part of the \
         schedule (3 connections still open, 1200 arrivals not started)"
    );
}

#[test]
fn a_threshold_on_a_figure_with_too_few_samples_makes_the_run_too_short() {
    let mut s = Stats::new();
    for ms in 1..=50u64 {
        s.on_response(std::time::Duration::from_millis(ms));
    }
    let t = parse_all(&[
        "p99>50ms".into(),
        "p90>50ms".into(),
        "reply_rate_avg<10".into(),
        "reply-rate<10".into(),
        "errors>0".into(),
        "invalid".into(),
    ])
    .expect("thresholds");
    let n = needs(&t, &s);
    let short: Vec<(&str, u64, u64)> = n
        .iter()
        .map(|n| (n.figure.as_str(), n.samples, n.needed))
        .collect();
    // p99 needs 100 responses, p90 10; the 5-s reply-rate average one sample (the
    // `reply-rate` alias falls back to the whole run's rate); errors need none.
    assert_eq!(
        short,
        [("p99", 50, 100), ("p90", 50, 10), ("reply_rate_avg", 0, 1)]
    );
    let v = judge(&Evidence {
        needs: n,
        ..healthy()
    });
    assert_eq!(v.causes(), "too_short");
    let texts: Vec<&str> = v.reasons.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "too short for p99: 50 responses (it needs 100)",
            "too short for reply_rate_avg: 0 5-s reply-rate samples (it needs 1)"
        ]
    );
    assert!(!v.client_bound());
}

#[test]
fn the_block_reads_back_and_a_merge_is_invalid_when_any_part_is() {
    let bad = judge(&Evidence {
        busiest_pct: 99.0,
        wait_pct: Some(30.0),
        ..healthy()
    });
    let doc = |v: &Validity| {
        json!({"validity": {
            "valid": v.valid(),
            "reasons": reasons_json(v),
            "measured": v.measured.iter().map(|(k, x)| (k.clone(), json!(x))).collect::<serde_json::Map<_, _>>(),
        }})
    };
    let back = from_document(&doc(&bad)).expect("reads").expect("a block");
    assert_eq!(back, bad);
    let good = judge(&healthy());
    assert_eq!(
        from_document(&doc(&good)).expect("reads"),
        Some(good.clone())
    );
    assert_eq!(from_document(&json!({})), Ok(None));
    let lying = json!({"validity": {"valid": true, "reasons": reasons_json(&bad)}});
    assert_eq!(
        from_document(&lying),
        Err("validity: valid is true with 2 reasons".to_string())
    );
    let unknown = json!({"validity": {"valid": false, "reasons": [{"reason": "gremlins"}]}});
    assert_eq!(
        from_document(&unknown),
        Err("validity: unknown reason 'gremlins'".to_string())
    );

    let m = merged(&[
        ("partition 0/2 (a.json)".into(), Some(good.clone())),
        ("partition 1/2 (b.json)".into(), Some(bad.clone())),
    ])
    .expect("judged");
    assert!(!m.valid());
    let parts: Vec<(&str, Option<&str>)> = m
        .reasons
        .iter()
        .map(|r| (r.cause.key(), r.part.as_deref()))
        .collect();
    assert_eq!(
        parts,
        [
            ("engine_cpu", Some("partition 1/2 (b.json)")),
            ("machine_starved", Some("partition 1/2 (b.json)"))
        ]
    );
    // Each measurement the largest over the parts.
    let of = |v: &Validity, k: &str| v.measured.iter().find(|(n, _)| n == k).and_then(|x| x.1);
    assert_eq!(of(&m, "busiest_engine_pct"), Some(99.0));
    assert_eq!(of(&m, "engine_wait_pct"), Some(30.0));
    // A merge of merges names both levels; parts without a judgement add nothing.
    let outer = merged(&[
        ("partition 0/2 (ab.json)".into(), Some(m)),
        ("partition 1/2 (c.json)".into(), None),
    ])
    .expect("judged");
    assert_eq!(
        outer.reasons[0].part.as_deref(),
        Some("partition 0/2 (ab.json): partition 1/2 (b.json)")
    );
    assert_eq!(merged(&[("x".into(), None)]), None);
    let all_good =
        merged(&[("a".into(), Some(good.clone())), ("b".into(), Some(good))]).expect("judged");
    assert!(all_good.valid());
}
