//! The grammar of `--rate-profile`: every form, and the exact message of each refusal.

use std::time::Duration;

use super::*;

fn ok(arg: &str) -> RateProfile {
    parse_rate_profile(arg).unwrap_or_else(|e| panic!("{arg}: {e}"))
}

fn msg(arg: &str) -> String {
    match parse_rate_profile(arg) {
        Ok(p) => panic!("{arg} parsed: {p:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn every_kind_parses() {
    let p = ok("ramp:100..2000/60s, hold:2000/2m,step:100..300+100/500ms,sine:1000~500/1m/1.5h");
    assert_eq!(
        p.segments(),
        &[
            Segment::Ramp {
                from: 100.0,
                to: 2000.0,
                duration: Duration::from_secs(60)
            },
            Segment::Hold {
                rate: 2000.0,
                duration: Duration::from_secs(120)
            },
            Segment::Step {
                from: 100.0,
                to: 300.0,
                increment: 100.0,
                each: Duration::from_millis(500)
            },
            Segment::Sine {
                mean: 1000.0,
                amplitude: 500.0,
                period: Duration::from_secs(60),
                duration: Duration::from_secs(5400)
            },
        ]
    );
    assert_eq!(
        p.duration(),
        Duration::from_millis(60_000 + 120_000 + 1500 + 5_400_000)
    );
    assert_eq!(p.peak(), 2000.0);
    assert_eq!(p.pieces().len(), 1 + 1 + 3 + 1);
}

#[test]
fn step_levels_stop_at_the_bound_in_both_directions() {
    let rates = |arg: &str| -> Vec<f64> {
        ok(arg)
            .pieces()
            .iter()
            .map(|p| match *p {
                Piece::Linear { from, to, .. } => {
                    assert_eq!(from, to);
                    from
                }
                Piece::Sine { .. } => panic!("sine"),
            })
            .collect()
    };
    assert_eq!(
        rates("step:100..1000+300/1s"),
        [100.0, 400.0, 700.0, 1000.0]
    );
    assert_eq!(rates("step:100..950+300/1s"), [100.0, 400.0, 700.0]);
    assert_eq!(
        rates("step:1000..100+300/1s"),
        [1000.0, 700.0, 400.0, 100.0]
    );
    assert_eq!(rates("step:0.1..0.3+0.1/1s").len(), 3);
    assert_eq!(rates("step:5..5+0/1s"), [5.0]);
}

#[test]
fn zero_rates_are_allowed_but_not_everywhere() {
    ok("hold:0/5s,ramp:0..10/1s");
    assert_eq!(
        msg("hold:0/5s,ramp:0..0/1s"),
        "--rate-profile: every rate is 0: the profile sends nothing"
    );
}

#[test]
fn messages() {
    let cases = [
        ("", "--rate-profile: needs segments, e.g. ramp:100..2000/60s,hold:2000/2m"),
        (
            "hold:1/1s,,hold:1/1s",
            "--rate-profile: segment 2 is empty (segments are separated by one comma)",
        ),
        (
            "100/5s",
            "--rate-profile: segment 1 `100/5s': expected ramp:FROM..TO/DURATION, hold:RATE/DURATION, step:FROM..TO+INCREMENT/EACH or sine:MEAN~AMPLITUDE/PERIOD/DURATION",
        ),
        (
            "hold:1/1s,jump:1..2/1s",
            "--rate-profile: segment 2 `jump:1..2/1s': unknown kind `jump'; expected ramp:FROM..TO/DURATION, hold:RATE/DURATION, step:FROM..TO+INCREMENT/EACH or sine:MEAN~AMPLITUDE/PERIOD/DURATION",
        ),
        (
            "ramp:100-200/5s",
            "--rate-profile: segment 1 `ramp:100-200/5s': expected ramp:FROM..TO/DURATION (e.g. ramp:100..2000/60s)",
        ),
        (
            "ramp:100..200",
            "--rate-profile: segment 1 `ramp:100..200': expected ramp:FROM..TO/DURATION (e.g. ramp:100..2000/60s)",
        ),
        (
            "hold:500",
            "--rate-profile: segment 1 `hold:500': expected hold:RATE/DURATION (e.g. hold:2000/2m)",
        ),
        (
            "step:1..5/1s",
            "--rate-profile: segment 1 `step:1..5/1s': expected step:FROM..TO+INCREMENT/EACH (e.g. step:100..1000+100/30s)",
        ),
        (
            "sine:10~5/1m",
            "--rate-profile: segment 1 `sine:10~5/1m': expected sine:MEAN~AMPLITUDE/PERIOD/DURATION (e.g. sine:1000~500/1m/10m)",
        ),
        (
            "hold:-5/1s",
            "--rate-profile: segment 1 `hold:-5/1s': `-5' is not a rate (a number of arrivals per second, 0 or more)",
        ),
        (
            "hold:1e3/1s",
            "--rate-profile: segment 1 `hold:1e3/1s': `1e3' is not a rate (a number of arrivals per second, 0 or more)",
        ),
        (
            "hold:2000000000/1s",
            "--rate-profile: segment 1 `hold:2000000000/1s': the rate 2000000000 is more than 1e+09",
        ),
        (
            "hold:5/10",
            "--rate-profile: segment 1 `hold:5/10': the duration `10' needs a unit: ms, s, m or h (e.g. 10s)",
        ),
        (
            "hold:5/10d",
            "--rate-profile: segment 1 `hold:5/10d': `10d' is not a duration (a number and ms, s, m or h, e.g. 30s)",
        ),
        (
            "hold:5/s",
            "--rate-profile: segment 1 `hold:5/s': `s' is not a duration (a number and ms, s, m or h, e.g. 30s)",
        ),
        (
            "hold:5/0s",
            "--rate-profile: segment 1 `hold:5/0s': the duration 0s is not more than 0",
        ),
        (
            "hold:5/200h",
            "--rate-profile: segment 1 `hold:5/200h': the duration 200h is longer than a week",
        ),
        (
            "hold:5/100h,hold:5/100h",
            "--rate-profile: the profile lasts 720000s, longer than a week",
        ),
        (
            "step:1..5+0/1s",
            "--rate-profile: segment 1 `step:1..5+0/1s': the increment must be more than 0",
        ),
        (
            "step:0..1000000+1/1ms",
            "--rate-profile: segment 1 `step:0..1000000+1/1ms': 1000001 levels; at most 100000 (use a larger increment)",
        ),
        (
            "sine:10~20/1m/5m",
            "--rate-profile: segment 1 `sine:10~20/1m/5m': the amplitude 20 is more than the mean 10: the rate would go below 0",
        ),
        (
            "sine:10~5/1m/5m/1s",
            "--rate-profile: segment 1 `sine:10~5/1m/5m/1s': expected sine:MEAN~AMPLITUDE/PERIOD/DURATION (e.g. sine:1000~500/1m/10m)",
        ),
    ];
    for (arg, want) in cases {
        assert_eq!(msg(arg), want, "{arg}");
    }
}

#[test]
fn levels_make_a_profile_of_holds() {
    let p = RateProfile::of_levels(&[100.0, 150.5], Duration::from_millis(2500)).expect("levels");
    assert_eq!(p.text(), "hold:100/2.5s,hold:150.5/2.5s");
    assert_eq!(ok(p.text()), p);
    assert_eq!(RateProfile::of_levels(&[], Duration::from_secs(1)), None);
}
