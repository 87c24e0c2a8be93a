//! Tests of `stats::ab` (beside it, to keep that file about the code).

use super::*;

/// ab's own computation over every value (output_results in ab.c).
fn ab_figures(values: &[u64]) -> (u64, u64, u64, u64, Vec<u64>) {
    let mut v = values.to_vec();
    v.sort_unstable();
    let n = v.len();
    let mean = v.iter().sum::<u64>() / n as u64;
    let median = if n > 1 && n % 2 == 1 {
        (v[n / 2] + v[n / 2 + 1]) / 2
    } else {
        v[n / 2]
    };
    let percs = [50, 66, 75, 80, 90, 95, 98, 99]
        .iter()
        .map(|p| round_ms(v[n * p / 100]))
        .collect();
    (
        round_ms(v[0]),
        round_ms(mean),
        round_ms(median),
        round_ms(v[n - 1]),
        percs,
    )
}

fn ours(values: &[u64]) -> (u64, u64, u64, u64, Vec<u64>) {
    let mut t = AbTimes::default();
    for &v in values {
        t.record(v);
    }
    let n = t.n;
    let percs = [50, 66, 75, 80, 90, 95, 98, 99]
        .iter()
        .map(|p| t.rank_ms(n * p / 100))
        .collect();
    (
        round_ms(t.min()),
        round_ms(t.mean_us()),
        t.median_ms(),
        round_ms(t.max_us),
        percs,
    )
}

/// A small deterministic generator (no dependency): xorshift.
fn values(seed: u64, n: usize, spread: u64) -> Vec<u64> {
    let mut x = seed.max(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % spread
        })
        .collect()
}

#[test]
fn figures_equal_abs_sorted_computation() {
    // Many sizes (odd ones exercise the two-rank median), values near bin edges.
    for seed in 1..200u64 {
        let n = (seed as usize % 37) + 1;
        let spread = [3_000, 20_000, 1_000_000][seed as usize % 3];
        let mut v = values(seed, n, spread);
        if seed % 5 == 0 {
            v.extend([499, 500, 1499, 1500, 2499]);
        }
        assert_eq!(ours(&v), ab_figures(&v), "seed {seed} values {v:?}");
    }
    // The straddling median: ranks 1 and 2 of 3 in different bins.
    assert_eq!(ours(&[100, 1_499, 1_502]), ab_figures(&[100, 1_499, 1_502]));
    assert_eq!(ours(&[100, 1_499, 1_502]).2, 2);
    assert_eq!(ours(&[100, 1_498, 1_500]).2, 1);
}

#[test]
fn sd_is_abs_sample_deviation_around_the_integer_mean() {
    let v = [1_000u64, 2_000, 4_001];
    let mut t = AbTimes::default();
    v.iter().for_each(|&x| t.record(x));
    let mean = (7_001 / 3) as f64;
    let ab = (v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / 2.0).sqrt() / 1000.0;
    assert!((t.sd_ms() - ab).abs() < 1e-12, "{} vs {ab}", t.sd_ms());
    let mut one = AbTimes::default();
    one.record(5);
    assert_eq!(one.sd_ms(), 0.0);
}

#[test]
fn merge_equals_recording_everything_in_one() {
    let a = values(7, 100, 50_000);
    let b = values(9, 77, 5_000);
    let (mut x, mut y, mut all) = (AbTimes::default(), AbTimes::default(), AbTimes::default());
    a.iter().for_each(|&v| x.record(v));
    b.iter().for_each(|&v| y.record(v));
    a.iter().chain(&b).for_each(|&v| all.record(v));
    x.merge(&y).expect("merge");
    assert_eq!(x, all);
    let mut empty = AbTimes::default();
    empty.merge(&all).expect("merge");
    assert_eq!(empty, all);
}

#[test]
fn serde_round_trip_keeps_every_figure() {
    let mut s = AbStats::default();
    let srv = s.server(1);
    srv.software = Some("nginx/1.22.1".into());
    for (i, us) in [900u64, 1_600, 250_000].iter().enumerate() {
        srv.on_complete(&Completed {
            times: CallTimes {
                connect_us: 100,
                total_us: *us,
                wait_us: us / 2,
            },
            status: if i == 2 { 404 } else { 200 },
            header_bytes: 200,
            body_bytes: 6 + i as u64 / 2,
            sent_bytes: 80,
            keep_alive: true,
            end_us: 1_000 * i as u64,
            ..Completed::default()
        });
    }
    srv.on_failure(AbFailure::Receive, 2, 9_000);
    let text = serde_json::to_string(&s).expect("serialize");
    let back: AbStats = serde_json::from_str(&text).expect("deserialize");
    let (a, b) = (&s.servers[1], &back.servers[1]);
    assert_eq!(back.servers.len(), 2);
    assert_eq!(a.total, b.total);
    assert_eq!(a.failed, b.failed);
    assert_eq!(b.failed.length, 1);
    assert_eq!((b.non_2xx, b.keep_alive, b.complete), (1, 3, 3));
    assert_eq!(b.total_hist.len(), 3);
    assert_eq!(b.last_end_us, 9_000);
    assert_eq!(b.failed_total(true), 3);
    assert_eq!(b.failed_total(false), 2);
    assert!(serde_json::from_str::<AbTimes>(
        r#"{"n":1,"sum_us":1,"sumsq_us":"1","min_us":1,"max_us":1,"bins":[[0,1,5,2000]]}"#
    )
    .is_err());
}

#[test]
fn time_taken_runs_from_the_first_start_to_the_last_end() {
    let mut s = AbServer::default();
    assert_eq!(s.seconds(None), 0.0);
    s.on_start(2_000);
    s.on_start(1_500);
    s.on_failure(AbFailure::Connect, 1, 501_500);
    assert_eq!(s.seconds(None), 0.5);
    assert_eq!(s.seconds(Some(1_001_500)), 1.0);
    let mut t = AbServer::default();
    t.on_start(1_000);
    t.merge(&s).expect("merge");
    assert_eq!(t.first_start_us, 1_000);
}

#[test]
fn total_ranks_come_from_the_histogram() {
    let mut s = AbServer::default();
    for us in [300u64, 1_000, 1_500, 80_000] {
        s.on_complete(&Completed {
            times: CallTimes {
                total_us: us,
                ..CallTimes::default()
            },
            status: 200,
            ..Completed::default()
        });
    }
    assert_eq!(
        (0..4).map(|r| s.total_rank_us(r)).collect::<Vec<_>>(),
        [300, 1_000, 1_500, 80_000]
    );
}
