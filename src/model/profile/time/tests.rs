//! Profiled schedules on a simulated clock: the offsets are pure functions of the
//! arrival index, so the shapes, counts and boundaries are checked exactly, and the
//! non-homogeneous Poisson process statistically with a seeded generator.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::model::config::{parse_rate_profile, Period};
use crate::model::workload::rate::Schedule;

fn tc(arg: &str) -> TimeChange {
    TimeChange::new(&parse_rate_profile(arg).expect("valid profile"))
}

/// Every offset of the schedule for `period` under `arg`, seconds (to its end).
fn offsets(arg: &str, period: &Period, client: u32) -> Vec<Duration> {
    let mut s = Schedule::new(period, client, 0, 1).profiled(Arc::new(tc(arg)));
    std::iter::from_fn(|| s.next_offset()).collect()
}

/// Arrivals in [a, b) seconds.
fn count(all: &[Duration], a: f64, b: f64) -> usize {
    all.iter()
        .filter(|d| d.as_secs_f64() >= a && d.as_secs_f64() < b)
        .count()
}

#[test]
fn counts_per_segment_are_exact() {
    let arg = "ramp:0..100/2s,hold:0/1s,hold:50/1s,step:10..30+10/1s,ramp:40..0/1s";
    let all = offsets(arg, &Period::Deterministic(1.0), 0);
    let want = [
        (0.0, 2.0, 100),
        (2.0, 3.0, 0),
        (3.0, 4.0, 50),
        (4.0, 5.0, 10),
    ];
    for (a, b, n) in want {
        assert_eq!(count(&all, a, b), n, "[{a}, {b})");
    }
    assert_eq!(count(&all, 5.0, 6.0), 20);
    assert_eq!(count(&all, 6.0, 7.0), 30);
    assert_eq!(count(&all, 7.0, 8.0), 20);
    assert_eq!(all.len(), 100 + 50 + 60 + 20);
    assert_eq!(tc(arg).total(), 230.0);
    assert!(all.iter().all(|d| *d < Duration::from_secs(8)));
}

#[test]
fn ramp_per_100ms_matches_the_integral() {
    // The accuracy row's profile: every 100 ms bin holds the arrivals s = 0, 1, …
    // with Λ(a) ≤ s < Λ(b), so ⌈Λ(b)⌉ − ⌈Λ(a)⌉ of them.
    let t = tc("ramp:200..2000/10s");
    assert_eq!(t.total(), 11_000.0);
    let all = offsets("ramp:200..2000/10s", &Period::Deterministic(0.005), 0);
    assert_eq!(all.len(), 11_000);
    for bin in 0..100 {
        let (a, b) = (bin as f64 / 10.0, (bin + 1) as f64 / 10.0);
        let want = t.lambda(b).ceil() - t.lambda(a).ceil();
        assert_eq!(count(&all, a, b) as f64, want, "bin {bin}");
    }
}

#[test]
fn inverse_at_the_boundaries() {
    let t = tc("hold:10/1s,hold:0/1s,hold:10/1s");
    assert_eq!(t.inverse(0.0), Some(0));
    assert_eq!(t.inverse(9.0), Some(900_000_000_000_000_000));
    // Λ = 10 all through the pause: the arrival goes where the rate resumes.
    assert_eq!(t.inverse(10.0), Some(2 * AS_PER_SEC));
    assert_eq!(
        t.inverse(19.0),
        Some(2 * AS_PER_SEC + 900_000_000_000_000_000)
    );
    assert_eq!(t.inverse(20.0), None);
    assert_eq!(t.seconds(), 3.0);
    assert_eq!(t.rate_at(1.5), 0.0);
    assert_eq!(t.rate_at(2.0), 10.0);
    assert_eq!(t.rate_at(3.0), 0.0);

    // A ramp from 0: the first arrival at 0, the next where t²·c/2 = 1.
    let r = tc("ramp:0..100/1s");
    assert_eq!(r.inverse(0.0), Some(0));
    let one = r.inverse(1.0).expect("inside") as f64 / 1e18;
    assert!((one - (2.0f64 / 100.0).sqrt()).abs() < 1e-15, "{one}");
    assert_eq!(r.total(), 50.0);
    // A ramp down to 0 ends with its last arrival before the end.
    let d = tc("ramp:100..0/1s");
    let last = d.inverse(49.0).expect("inside") as f64 / 1e18;
    assert!((d.lambda(last) - 49.0).abs() < 1e-9 && last < 1.0, "{last}");
    assert_eq!(d.inverse(50.0), None);

    // A leading pause: nothing until the rate begins.
    let p = tc("hold:0/5s,hold:1/2s");
    assert_eq!(p.inverse(0.0), Some(5 * AS_PER_SEC));
    assert_eq!(p.inverse(1.0), Some(6 * AS_PER_SEC));
}

#[test]
fn sine_arrivals_sit_on_the_integers_of_lambda() {
    for arg in ["sine:100~100/2s/5s", "sine:200~50/750ms/3s,ramp:10..20/1s"] {
        let t = tc(arg);
        let all = offsets(arg, &Period::Deterministic(1.0), 0);
        assert_eq!(all.len() as f64, t.total().ceil(), "{arg}");
        for (k, d) in all.iter().enumerate() {
            let got = t.lambda(d.as_secs_f64());
            assert!(
                (got - k as f64).abs() < 1e-6,
                "{arg} arrival {k}: Λ = {got}"
            );
        }
    }
    // ∫ over whole periods is the mean times the length.
    assert!((tc("sine:100~60/2s/6s").total() - 600.0).abs() < 1e-9);
}

/// The Kolmogorov–Smirnov distance of `xs` from Exp(1).
fn ks_exp1(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = 1.0 - (-x).exp();
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

#[test]
fn exponential_is_a_non_homogeneous_poisson_process() {
    // Seeded: counts per second against ∫ rate (χ² over 40 bins), and the
    // time-changed inter-arrivals Λ(t_{k+1}) − Λ(t_k) against Exp(1) (KS).
    let arg = "ramp:0..2000/10s,hold:500/5s,hold:0/5s,sine:1000~800/4s/20s";
    let t = tc(arg);
    for client in [0, 1, 7] {
        let all = offsets(arg, &Period::Exponential(0.01), client);
        let mut chi2 = 0.0;
        let mut bins = 0;
        for s in 0..40 {
            let mu = t.lambda(f64::from(s + 1)) - t.lambda(f64::from(s));
            let n = count(&all, f64::from(s), f64::from(s + 1)) as f64;
            if mu == 0.0 {
                assert_eq!(n, 0.0, "second {s} has rate 0");
                continue;
            }
            chi2 += (n - mu) * (n - mu) / mu;
            bins += 1;
        }
        // 35 bins with rate: the 99.9 % point of χ²(35) is 66.6.
        assert_eq!(bins, 35);
        assert!(chi2 < 66.6, "client {client}: χ² = {chi2}");
        let gaps: Vec<f64> = all
            .windows(2)
            .map(|w| t.lambda(w[1].as_secs_f64()) - t.lambda(w[0].as_secs_f64()))
            .collect();
        let n = gaps.len() as f64;
        let d = ks_exp1(gaps);
        // 1.95/√n: the 0.1 % critical value.
        assert!(d < 1.95 / n.sqrt(), "client {client}: KS D = {d} over {n}");
    }
    // Reproducible: the same client gives the same arrivals.
    assert_eq!(
        offsets(arg, &Period::Exponential(0.5), 3),
        offsets(arg, &Period::Exponential(0.01), 3)
    );
}

#[test]
fn uniform_and_variable_keep_their_shape_at_the_profile_rate() {
    // hold:100/10s: unit spacing scaled to 1/100 s.
    let u = offsets("hold:100/10s", &Period::Uniform(0.5, 1.5), 0);
    for w in u.windows(2) {
        let gap = (w[1] - w[0]).as_secs_f64();
        assert!((0.005 - 1e-9..0.015 + 1e-9).contains(&gap), "{gap}");
    }
    // 1,000 ± 3.3 standard deviations (a uniform on [0.5, 1.5] has variance 1/12).
    assert!((970..=1030).contains(&u.len()), "{}", u.len());
    // v: periods 1 and 3 (mean 2) become 5 ms and 15 ms at 100/s.
    let v = offsets(
        "hold:100/1s",
        &Period::Variable(vec![(1.0, 1.0), (3.0, 3.0)]),
        0,
    );
    let gaps: Vec<u128> = v[..5]
        .windows(2)
        .map(|w| (w[1] - w[0]).as_micros())
        .collect();
    assert_eq!(gaps, [5_000, 15_000, 5_000, 15_000]);
}

#[test]
fn partitions_equal_the_single_schedule_bit_for_bit() {
    let periods = [
        Period::Deterministic(1.0),
        Period::Uniform(0.5, 1.5),
        Period::Exponential(1.0),
        Period::Variable(vec![(1.0, 2.0), (3.0, 3.0)]),
    ];
    let arg = "ramp:0..800/1s,hold:0/200ms,step:100..400+150/300ms,sine:300~300/250ms/1s";
    let t = Arc::new(tc(arg));
    for period in &periods {
        for client in [0, 5] {
            let mut one = Schedule::new(period, client, 0, 1).profiled(t.clone());
            let all: Vec<Duration> = std::iter::from_fn(|| one.next_offset()).collect();
            assert!(all.len() > 500, "{period:?}: {}", all.len());
            for n in [2u32, 3, 7] {
                let mut stripes: Vec<Schedule> = (0..n)
                    .map(|j| Schedule::new(period, client, j, n).profiled(t.clone()))
                    .collect();
                for (k, want) in all.iter().enumerate() {
                    let got = stripes[k % n as usize].next_offset();
                    assert_eq!(got, Some(*want), "{period:?} arrival {k} of {n}");
                }
                for s in &mut stripes {
                    assert_eq!(s.next_offset(), None, "{period:?}: a stripe goes on");
                }
            }
        }
    }
}
