//! The statistical validation of `compare` (docs/compare.md, "Validation: simulation"): false
//! positives at the stated alpha and power at known shifts, over thousands of
//! simulated pairs (`sim`), on a seeded generator. The CI versions are sized to run
//! in a few seconds in release builds (their pair counts are divided by 10 in debug
//! builds, with the tolerance that follows); `simulation_table` (ignored: run it by
//! hand with `cargo test --release --lib simulation_table -- --ignored --nocapture`)
//! prints the full table docs/compare.md quotes, and `calibration` the statistics the noise
//! model is calibrated on.

use super::sim::{mc_se, run, simulate, Design, Draws, Noise, Workload};
use crate::model::compare::RUN_NOISE;
use crate::model::stats::windows::{FineHist, FINE_BITS};

/// Pairs per CI cell: fewer in debug builds (the same code, 20 times slower).
fn pairs(release: u64) -> u64 {
    if cfg!(debug_assertions) {
        release / 10
    } else {
        release
    }
}

/// Asserts that a false-positive rate is at most `alpha` within three Monte-Carlo
/// standard errors.
fn at_most(rate: f64, alpha: f64, n: u64, what: &str) {
    let bound = alpha + 3.0 * mc_se(alpha, n);
    assert!(
        rate <= bound,
        "{what}: {rate:.4} of {n} flagged, more than alpha {alpha} (+3 MC se: {bound:.4})"
    );
}

/// A regime of the noise model: its name and its noise for a workload.
type Regime = (&'static str, fn(Workload) -> Noise);

/// The regimes of the noise model, by name.
const REGIMES: [Regime; 3] = [
    ("quiet", Noise::quiet),
    ("shared", Noise::shared),
    ("busy", Noise::busy),
];

#[test]
fn identical_builds_are_flagged_at_most_alpha_of_the_time() {
    // At alpha 0.05, where the simulation's error is smallest relative to alpha:
    // every regime with no run effect and none declared (the windows' estimate of
    // the within-run noise alone), then compare's default run noise against a run
    // effect of that size (lognormal and gamma bodies).
    let within = Design {
        runs: (1, 1),
        declared: 0.0,
        alpha: 0.05,
    };
    let default = Design {
        alpha: 0.05,
        ..Design::DEFAULT
    };
    let n = pairs(400);
    let (mut flagged, mut total) = (0, 0);
    for (w, seed) in [(Workload::A, 1), (Workload::B, 2)] {
        for (k, (name, noise)) in REGIMES.iter().enumerate() {
            let t = simulate(seed + 10 * k as u64, n, w, noise(w), 1.0, within);
            at_most(t.rate(), 0.05, n, &format!("{name} {w:?}, no run effect"));
            (flagged, total) = (flagged + t.flagged, total + t.pairs);
        }
        let quiet = Noise::quiet(w).with_run_sd(RUN_NOISE);
        for (body, noise) in [("lognormal", quiet), ("gamma", quiet.gamma())] {
            let t = simulate(seed + 100, n, w, noise, 1.0, default);
            at_most(
                t.rate(),
                0.05,
                n,
                &format!("quiet {body} {w:?}, run effect 1 %"),
            );
            (flagged, total) = (flagged + t.flagged, total + t.pairs);
        }
    }
    // All cells together: a tighter bound.
    at_most(flagged as f64 / total as f64, 0.05, total, "all cells");
}

#[test]
fn a_ten_percent_slower_server_is_found_in_a_three_second_run() {
    // compare's defaults, one run a side, the run effect measured on the quiet
    // machine (0.5 %): at least 0.95 for the 3-s run (A); the 2-s run (B), with 20
    // windows of calls that move together, finds it in 0.915 of these pairs.
    let n = pairs(200);
    for (w, seed, least) in [(Workload::A, 3, 0.95), (Workload::B, 4, 0.85)] {
        let noise = Noise::quiet(w).with_run_sd(0.005);
        let t = simulate(seed, n, w, noise, 1.10, Design::DEFAULT);
        let power = t.worse as f64 / t.pairs as f64;
        assert!(
            power >= least,
            "{w:?} +10 %: {power:.3} of {n} pairs found worse, fewer than {least} (tested {:?}, \
             significant {:?})",
            t.tested,
            t.significant
        );
    }
}

/// The summary statistics the noise model is calibrated on, for `runs` synthetic
/// runs: ln(response) sd, the window means' design effect and lag-1 correlation,
/// p90/p50 and p99/p50, and the run-to-run sd of ln p50.
fn summary(w: Workload, noise: Noise, runs: usize) -> [f64; 6] {
    let mut d = Draws::new(7);
    let (mut sd, mut deff, mut lag, mut r90, mut r99) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut p50s = Vec::new();
    for _ in 0..runs {
        let (s, _) = run(&mut d, w, noise, 1.0);
        let wins: Vec<&FineHist> = s.windows.windows.iter().map(|w| &w.response).collect();
        let logs = |h: &FineHist| -> Vec<f64> {
            h.0.iter()
                .flat_map(|&(b, c)| {
                    let v = crate::model::stats::timeline::bucket_high_bits(b.into(), FINE_BITS);
                    std::iter::repeat_n((v.max(1) as f64).ln(), c as usize)
                })
                .collect()
        };
        let all: Vec<f64> = wins.iter().flat_map(|h| logs(h)).collect();
        let mean = all.iter().sum::<f64>() / all.len() as f64;
        let var = all.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / all.len() as f64;
        let means: Vec<f64> = wins
            .iter()
            .filter(|h| h.count() > 0)
            .map(|h| {
                let l = logs(h);
                l.iter().sum::<f64>() / l.len() as f64
            })
            .collect();
        let k = means.len() as f64;
        let mm = means.iter().sum::<f64>() / k;
        let vm = means.iter().map(|x| (x - mm).powi(2)).sum::<f64>() / k;
        let l1 = means
            .windows(2)
            .map(|p| (p[0] - mm) * (p[1] - mm))
            .sum::<f64>()
            / (vm * k);
        sd += var.sqrt();
        deff += vm / (var / (all.len() as f64 / k));
        lag += l1;
        let q = |p: f64| crate::model::stats::quantile_ms(&s.hist.response, p);
        r90 += q(0.9) / q(0.5);
        r99 += q(0.99) / q(0.5);
        p50s.push(q(0.5).ln());
    }
    let n = runs as f64;
    let m = p50s.iter().sum::<f64>() / n;
    let between = (p50s.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    [sd / n, deff / n, lag / n, r90 / n, r99 / n, between]
}

#[test]
#[ignore = "prints the calibration statistics: run by hand"]
fn calibration() {
    for (name, noise) in REGIMES {
        for w in [Workload::A, Workload::B] {
            let s = summary(w, noise(w), 40);
            println!(
                "{name} {w:?}: ln sd {:.3}, window deff {:.2}, window lag-1 {:.2}, p90/p50 \
                 {:.2}, p99/p50 {:.2}, run-to-run sd of ln p50 {:.4}",
                s[0], s[1], s[2], s[3], s[4], s[5]
            );
        }
    }
}

/// One row of the simulation table: the regime, the body, the run effect, the
/// design.
type Cell = (&'static str, bool, f64, Design);

#[test]
#[ignore = "the full simulation table of docs/compare.md: run by hand (a few minutes)"]
fn simulation_table() {
    let n: u64 = std::env::var("PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let d = Design::DEFAULT;
    let one = |declared: f64| Design { declared, ..d };
    let three = Design { runs: (3, 3), ..d };
    let cells: [Cell; 8] = [
        ("quiet", false, 0.0, one(0.0)),
        ("quiet", false, 0.005, d),
        ("quiet", true, 0.005, d),
        ("shared", false, 0.01, d),
        ("busy", false, 0.01, d),
        ("quiet", false, 0.03, d),
        ("quiet", false, 0.03, three),
        ("busy", false, 0.04, three),
    ];
    println!("pairs per cell: {n}; alpha 0.01 family-wise (Bonferroni over the server's figures)");
    println!(
        "| workload | regime | body | run sd | --run-noise | runs a side | shift | flagged (MC se) \
         | p50 sig | p90 sig | p99 sig | CI coverage p50/p90/p99 |"
    );
    println!("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|");
    let mut seed = 100;
    for w in [Workload::A, Workload::B] {
        for (name, gamma, run_sd, how) in cells {
            for shift in [1.0, 1.05, 1.10, 1.25] {
                seed += 1;
                let regime = REGIMES.iter().find(|r| r.0 == name).expect("a regime").1;
                let noise = regime(w).with_run_sd(run_sd);
                let noise = if gamma { noise.gamma() } else { noise };
                let t = simulate(seed, n, w, noise, shift, how);
                let r = |k: usize| t.significant[k] as f64 / t.tested[k].max(1) as f64;
                let cov = |k: usize| t.covered[k] as f64 / t.tested[k].max(1) as f64;
                println!(
                    "| {:.0}/s {:.0} s | {name} | {} | {:.1}% | {:.1}% | {} | {:+.0}% | {:.4} ({:.4}) \
                     | {:.3} | {:.3} | {:.3} | {:.3}/{:.3}/{:.3} |",
                    w.rate,
                    w.secs,
                    if gamma { "gamma" } else { "lognormal" },
                    100.0 * run_sd,
                    100.0 * how.declared,
                    how.runs.0,
                    100.0 * (shift - 1.0),
                    t.rate(),
                    mc_se(t.rate(), n),
                    r(0),
                    r(1),
                    r(2),
                    cov(0),
                    cov(1),
                    cov(2)
                );
            }
        }
    }
}
