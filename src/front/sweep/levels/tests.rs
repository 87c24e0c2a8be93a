//! Tests of the levels of `sweep --in-one-run` and their judgement on injected
//! timelines.

use super::*;
use crate::front::sweep::args::OutputFmt;
use crate::front::sweep::plan::Verdict;
use crate::model::stats::timeline::bucket_of;
use crate::model::threshold;

/// Rules of a walk from `low` to `high` by `step`, `each` s per level, 85 %.
fn rules(low: f64, high: f64, step: f64, each: f64, slo: &[&str]) -> Rules {
    let slo: Vec<String> = slo.iter().map(|s| s.to_string()).collect();
    Rules {
        low_rate: low,
        high_rate: high,
        rate_step: Some(step),
        find_max: false,
        precision: 2.0,
        const_test_time: Some(each),
        cool_down: 0.0,
        min_achieved: 85.0,
        max_errors: 0,
        thresholds: threshold::parse_all(&slo).expect("SLOs"),
        slo,
        past_knee: 2,
        stop_after_step: None,
        output_fmt: OutputFmt::Tsv,
        in_one_run: true,
        command: "rshperf sweep".into(),
    }
}

fn levels(r: &Rules) -> Vec<Level> {
    levels_of(&profile(r).expect("a walk").expect("a profile"))
}

const RUN: RunWide = RunWide {
    calls_per_arrival: 1.0,
    client_cpu_pct: 12.0,
    bytes_per_reply: 1024.0,
    interrupted: false,
};

/// A second with `ok` 2xx replies (response time `us` each), `issued` arrivals on
/// time and `errors` connection resets.
fn second(ok: u64, us: u64, issued: u32, errors: u64) -> Interval {
    let mut iv = Interval::default();
    iv.replies[1] = ok;
    iv.connections = u64::from(issued);
    iv.offered = u64::from(issued);
    if ok > 0 {
        iv.response = LogHist(vec![(bucket_of(us) as u16, ok as u32)]);
        iv.response_max_us = us;
    }
    if issued > 0 {
        iv.lateness = LogHist(vec![(bucket_of(20) as u16, issued)]);
    }
    iv.errors[3] = errors;
    iv
}

/// The spans of `ivs`, a second each, the last one `last_len` long.
fn spans(ivs: &[Interval], last_len: f64) -> Vec<Second<'_>> {
    let n = ivs.len();
    ivs.iter()
        .enumerate()
        .map(|(i, iv)| (i as u64, if i + 1 == n { last_len } else { 1.0 }, iv))
        .collect()
}

fn verdicts(steps: &[Step]) -> Vec<(f64, &'static str)> {
    steps.iter().map(|s| (s.rate, s.verdict.name())).collect()
}

#[test]
fn the_walk_is_one_step_profile_and_its_levels_are_its_holds() {
    let r = rules(100.0, 400.0, 100.0, 2.0, &[]);
    assert_eq!(
        profile(&r).expect("walk").expect("profile").text(),
        "step:100..400+100/2s"
    );
    let l = levels(&r);
    let windows: Vec<(f64, f64, f64)> = l.iter().map(|l| (l.rate, l.start, l.end)).collect();
    assert_eq!(
        windows,
        [
            (100.0, 0.0, 2.0),
            (200.0, 2.0, 4.0),
            (300.0, 4.0, 6.0),
            (400.0, 6.0, 8.0)
        ]
    );
    // --stop-after-step lowers the top; H not on the grid stops below it.
    let mut r = rules(0.5, 2.0, 0.25, 1.5, &[]);
    r.stop_after_step = Some(3);
    assert_eq!(
        profile(&r).expect("walk").expect("profile").text(),
        "step:0.5..1+0.25/1.5s"
    );
    assert_eq!(levels(&r).len(), 3);
    let r = rules(100.0, 350.0, 100.0, 1.0, &[]);
    assert_eq!(
        levels(&r).iter().map(|l| l.rate).collect::<Vec<_>>(),
        [100.0, 200.0, 300.0]
    );
    assert_eq!(
        profile_text(2000.0, 30000.0, 2000.0, 3.0, None),
        "step:2000..30000+2000/3s"
    );
}

#[test]
fn a_level_is_judged_from_its_whole_seconds_after_the_first() {
    let level = |start, end| Level {
        rate: 1.0,
        start,
        end,
    };
    assert_eq!(judged_seconds(&level(0.0, 2.0)), [1]);
    assert_eq!(judged_seconds(&level(2.0, 5.0)), [3, 4]);
    assert_eq!(judged_seconds(&level(0.0, 1.0)), [0]);
    // Boundaries inside a second: only the seconds wholly inside count.
    assert_eq!(judged_seconds(&level(0.0, 1.5)), [0]);
    assert_eq!(judged_seconds(&level(1.5, 3.0)), [2]);
    assert_eq!(judged_seconds(&level(4.5, 7.5)), [6]);
    assert_eq!(judged_seconds(&level(1.2, 2.4)), Vec::<u64>::new());
}

#[test]
fn a_server_of_known_capacity_passes_below_it_and_fails_above() {
    // 240 replies/s at most; levels 100..400 of 2 s: each second replies min(rate, 240).
    let r = rules(100.0, 400.0, 100.0, 2.0, &[]);
    let ivs: Vec<Interval> = [100, 100, 200, 200, 300, 300, 400, 400]
        .iter()
        .map(|&rate: &u32| second(u64::from(rate.min(240)), 500, rate, 0))
        .chain([second(560, 900_000, 0, 0)]) // the queue drains after the profile
        .collect();
    let steps = judge(&r, &levels(&r), &spans(&ivs, 0.75), &RUN);
    assert_eq!(
        verdicts(&steps),
        [
            (100.0, "pass"),
            (200.0, "pass"),
            (300.0, "fail"),
            (400.0, "fail")
        ]
    );
    let pct: Vec<f64> = steps.iter().map(|s| s.achieved_pct).collect();
    assert_eq!(pct, [100.0, 100.0, 80.0, 60.0]);
    assert_eq!(
        steps[2].reasons,
        ["achieved 80.0 % of the demanded rate (below 85 %)"]
    );
    // Arrivals of the whole window; reply rates of the judged second.
    assert_eq!(steps[3].arrivals, 800);
    assert_eq!(steps[3].figures.rep_rate, [240.0, 240.0, 240.0, 0.0]);
    assert_eq!(steps[3].figures.net_io_kbs, 240.0);
    assert_eq!(steps[3].figures.client_cpu_pct, 12.0);
    // The drain second belongs to the last level but is not judged.
    assert_eq!(steps[3].figures.connections, 800);
    assert_eq!(steps[3].figures.response_ms[2], 0.5);
    let mut plan =
        crate::front::sweep::plan::Planner::new(crate::front::sweep::plan::Strategy::Walk {
            low: 100.0,
            high: 400.0,
            step: 100.0,
            past_knee: u32::MAX,
        });
    for s in &steps {
        plan.record(s.rate, s.verdict, None);
    }
    let out = plan.outcome();
    assert_eq!(out.knee, Some(200.0));
    assert_eq!(out.limit, Some((300.0, Verdict::Fail)));
}

#[test]
fn the_transient_second_is_skipped_but_its_errors_count() {
    let r = rules(100.0, 200.0, 100.0, 2.0, &[]);
    // Level 200's first second still carries level 100's errors and slow replies.
    let ivs = [
        second(100, 500, 100, 0),
        second(100, 500, 100, 0),
        second(150, 90_000, 200, 1),
        second(200, 500, 200, 0),
    ];
    let steps = judge(&r, &levels(&r), &spans(&ivs, 1.0), &RUN);
    assert_eq!(verdicts(&steps), [(100.0, "pass"), (200.0, "fail")]);
    assert_eq!(steps[1].achieved_pct, 100.0);
    assert_eq!(steps[1].reasons, ["1 errors (more than 0)"]);
    assert_eq!(steps[1].figures.response_ms[2], 0.5);
    assert_eq!(steps[1].figures.errors_pct_of_replies, 100.0 / 350.0);
}

#[test]
fn a_boundary_inside_a_second_gives_that_second_to_no_level_s_rates() {
    // 1.5-s levels: second 1 spans levels 100 and 200; second 4 levels 300 and 400.
    let r = rules(100.0, 400.0, 100.0, 1.5, &[]);
    let ivs = [
        second(100, 500, 100, 0),
        second(150, 500, 150, 2),
        second(200, 500, 200, 0),
        second(300, 500, 300, 0),
        second(350, 500, 350, 0),
        second(240, 500, 400, 0),
    ];
    let steps = judge(&r, &levels(&r), &spans(&ivs, 1.0), &RUN);
    assert_eq!(
        verdicts(&steps),
        [
            (100.0, "fail"),
            (200.0, "pass"),
            (300.0, "pass"),
            (400.0, "fail")
        ]
    );
    // Second 1 starts in level 100: its errors are level 100's.
    assert_eq!(steps[0].reasons, ["2 errors (more than 0)"]);
    assert_eq!(steps[0].achieved_pct, 100.0);
    assert_eq!(steps[3].achieved_pct, 60.0);
}

#[test]
fn the_last_level_cut_short_fails_and_levels_not_reached_are_left_out() {
    let r = rules(100.0, 400.0, 100.0, 2.0, &[]);
    let run = RunWide {
        interrupted: true,
        ..RUN
    };
    // Interrupted 0.4 s into level 200's second second.
    let ivs = [
        second(100, 500, 100, 0),
        second(100, 500, 100, 0),
        second(200, 500, 200, 0),
        second(80, 500, 80, 0),
    ];
    let steps = judge(&r, &levels(&r), &spans(&ivs, 0.4), &run);
    assert_eq!(verdicts(&steps), [(100.0, "pass"), (200.0, "fail")]);
    assert_eq!(
        steps[1].reasons,
        [
            "cut short: no whole second of the level was measured",
            "interrupted"
        ]
    );
    assert!(steps[1].interrupted && !steps[0].interrupted);
    // Interrupted 0.95 s into it: judged over what it lasted.
    let steps = judge(&r, &levels(&r), &spans(&ivs[..], 0.95), &run);
    assert_eq!(steps[1].achieved_pct, 80.0 / 0.95 / 200.0 * 100.0);
    assert_eq!(
        steps[1].reasons,
        [
            "achieved 42.1 % of the demanded rate (below 85 %)",
            "interrupted"
        ]
    );
    // The last second of an uninterrupted schedule ends a few ms early: a whole second.
    let ivs = [second(100, 500, 100, 0), second(100, 500, 100, 0)];
    let r = rules(100.0, 100.0, 100.0, 2.0, &[]);
    let steps = judge(&r, &levels(&r), &spans(&ivs, 0.995), &RUN);
    assert_eq!(verdicts(&steps), [(100.0, "pass")]);
    assert_eq!(steps[0].achieved_pct, 100.0);
}

#[test]
fn a_level_without_replies_fails_with_autobench_s_error_figure() {
    let r = rules(50.0, 100.0, 50.0, 2.0, &[]);
    let ivs = [
        second(0, 0, 50, 0),
        second(0, 0, 50, 0),
        second(0, 0, 100, 0),
        second(0, 0, 100, 0),
    ];
    let steps = judge(&r, &levels(&r), &spans(&ivs, 1.0), &RUN);
    assert_eq!(verdicts(&steps), [(50.0, "fail"), (100.0, "fail")]);
    let f = &steps[0].figures;
    assert_eq!(steps[0].achieved_pct, 0.0);
    assert_eq!(f.errors_pct_of_replies, 101.0);
    assert_eq!(f.rep_rate, [0.0, 0.0, 0.0, 0.0]);
    assert_eq!((f.resp_time_ms, f.response_ms), (0.0, [0.0; 3]));
    assert_eq!(judge(&r, &levels(&r), &[], &RUN).len(), 0);
}

#[test]
fn slos_on_the_timeline_s_figures_and_late_arrivals() {
    let mut r = rules(
        100.0,
        300.0,
        100.0,
        2.0,
        &["p99<10ms", "errors_connreset<=1"],
    );
    r.max_errors = 5;
    assert_eq!(r.thresholds[1].metric().figure, "errors_connreset");
    let mut late = second(300, 500, 300, 0);
    late.lateness = LogHist(vec![(bucket_of(5_000) as u16, 300)]);
    let ivs = [
        second(100, 500, 100, 0),
        second(100, 500, 100, 1),
        second(200, 500, 200, 1),
        second(200, 20_000, 200, 1),
        late.clone(),
        late,
    ];
    let steps = judge(&r, &levels(&r), &spans(&ivs, 1.0), &RUN);
    assert_eq!(
        verdicts(&steps),
        [(100.0, "pass"), (200.0, "fail"), (300.0, "client")]
    );
    // The bucket's high (20.479 ms) capped at the longest response.
    assert_eq!(
        steps[1].reasons,
        [
            "SLO p99<10ms missed (actual 20.000)",
            "SLO errors_connreset<=1 missed (actual 2.000)",
        ]
    );
    // Late arrivals make the level the client's though it met every criterion.
    assert!(steps[2].reasons.is_empty());
    assert!(steps[2].client_bound);
    assert!(steps[2].advice[0].text.starts_with(
        "client-bound: arrivals started late at this level (lateness p50 5.119 ms, limit 1.000 ms)"
    ), "{}", steps[2].advice[0].text);
    assert!(judges_slo("percentiles_response_p99_9"));
    assert!(judges_slo("percentiles_response_max"));
    assert!(judges_slo("errors_client_timo"));
    assert!(!judges_slo("reply_rate_avg"));
    assert!(!judges_slo("percentiles_connect_p99"));
}
