//! The session block of the classic report (docs/compatibility.md §2.3.3), for
//! `--wsess` and `--wsesslog` runs.
//!
//! Owns the text of the session figures (`model::report::Sessions`, which the table of figures reads too), which
//! follows the second `Errors` line. Does not measure sessions (the session workload
//! feeds `Stats::on_session` and the `sessions` of the rate samples) and does no I/O
//! beyond the given writer. Called by the runner and by `merge` after the classic report.

use std::io::{self, Write};

use crate::model::report::Sessions;
use crate::wire::cfmt::{c_nan, fixed};

/// Writes the session block, starting with a blank line.
pub(crate) fn write_session_block<W: Write>(out: &mut W, s: &Sessions) -> io::Result<()> {
    let r = &s.rate;
    let (min, avg, max, stddev) = (c_nan(r.min), c_nan(r.avg), c_nan(r.max), c_nan(r.stddev));
    writeln!(
        out,
        "\nSession rate [sess/s]: min {} avg {} max {} stddev {} ({}/{})",
        fixed(min, 2),
        fixed(avg, 2),
        fixed(max, 2),
        fixed(stddev, 2),
        s.completed,
        s.total
    )?;
    writeln!(
        out,
        "Session: avg {} connections/session",
        fixed(s.connections_per_session, 2)
    )?;
    writeln!(out, "Session lifetime [s]: {}", fixed(s.lifetime_s, 1))?;
    writeln!(out, "Session failtime [s]: {}", fixed(s.failtime_s, 1))?;
    // Up to the largest length any session reached (at least one entry).
    let h = &s.length_histogram;
    let last = h.iter().rposition(|&n| n != 0).unwrap_or(0);
    write!(out, "Session length histogram:")?;
    for n in h.iter().take(last + 1).chain(h.is_empty().then_some(&0)) {
        write!(out, " {n}")?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::RateSample;
    use crate::model::stats::Stats;
    use std::time::Duration;

    fn render(stats: &Stats, duration: f64) -> String {
        let mut out = Vec::new();
        write_session_block(&mut out, &Sessions::of(stats, duration)).expect("Vec write");
        String::from_utf8(out).expect("ASCII")
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn reference_a9() {
        // --wsess=10,4,0.2: ten sessions of 4 replies on one connection, ~0.2 s each.
        let mut s = Stats::new();
        for k in 0..10 {
            s.on_session(true, ms(200 + k), 1, 4);
        }
        let want = "\nSession rate [sess/s]: min 0.00 avg 5.00 max 0.00 stddev 0.00 (10/10)\n\
                    Session: avg 1.00 connections/session\n\
                    Session lifetime [s]: 0.2\n\
                    Session failtime [s]: 0.0\n\
                    Session length histogram: 0 0 0 0 10\n";
        assert_eq!(render(&s, 2.002), want);
    }

    #[test]
    fn reference_a9b() {
        // HTTP/1.0, 3 calls per session: 3 connections each; one 5-s sample of 5.0/s.
        let mut s = Stats::new();
        for _ in 0..30 {
            s.on_session(true, ms(40), 3, 3);
        }
        s.rate_samples.push(RateSample {
            replies: 75,
            sessions: 25,
            seconds: 5.0,
        });
        // avg = 30 / 5.803 = 5.1697…
        let want = "\nSession rate [sess/s]: min 5.00 avg 5.17 max 5.00 stddev 0.00 (30/30)\n\
                    Session: avg 3.00 connections/session\n\
                    Session lifetime [s]: 0.0\n\
                    Session failtime [s]: 0.0\n\
                    Session length histogram: 0 0 0 30\n";
        assert_eq!(render(&s, 5.803), want);
    }

    #[test]
    fn reference_a9c() {
        // Three sessions of the A.9c file: 4, 2 and 4 replies; 3 / 1.350 = 2.22.
        let mut s = Stats::new();
        s.on_session(true, ms(354), 1, 4);
        s.on_session(true, ms(5), 1, 2);
        s.on_session(true, ms(350), 1, 4);
        let want = "\nSession rate [sess/s]: min 0.00 avg 2.22 max 0.00 stddev 0.00 (3/3)\n\
                    Session: avg 1.00 connections/session\n\
                    Session lifetime [s]: 0.2\n\
                    Session failtime [s]: 0.0\n\
                    Session length histogram: 0 0 1 0 2\n";
        assert_eq!(render(&s, 1.350), want);
    }

    #[test]
    fn reference_a9d() {
        // One session of 3 replies in 8.9 ms; 1 / 0.008919 = 112.12.
        let mut s = Stats::new();
        s.on_session(true, Duration::from_micros(8_900), 1, 3);
        let want = "\nSession rate [sess/s]: min 0.00 avg 112.12 max 0.00 stddev 0.00 (1/1)\n\
                    Session: avg 1.00 connections/session\n\
                    Session lifetime [s]: 0.0\n\
                    Session failtime [s]: 0.0\n\
                    Session length histogram: 0 0 0 1\n";
        assert_eq!(render(&s, 0.008919), want);
    }

    #[test]
    fn failures_samples_and_histogram_end() {
        let mut s = Stats::new();
        s.on_session(true, ms(1_000), 2, 2);
        s.on_session(true, ms(2_000), 4, 2);
        s.on_session(false, ms(500), 9, 1);
        s.on_session(false, ms(1_500), 9, 0);
        // Trailing zero entries (a merged, longer vector) are not printed.
        s.session_lengths.extend([0, 0]);
        for (sessions, seconds) in [(10, 5.0), (20, 5.0), (15, 4.0)] {
            s.rate_samples.push(RateSample {
                replies: 0,
                sessions,
                seconds,
            });
        }
        let sum = Sessions::of(&s, 10.0);
        assert_eq!((sum.completed, sum.total), (2, 4));
        // The schema keeps the whole vector; the text stops at the last non-zero entry.
        assert_eq!(sum.length_histogram, vec![1, 1, 2, 0, 0]);
        assert_eq!((sum.rate.min, sum.rate.max, sum.rate.avg), (2.0, 4.0, 0.2));
        // Rates 2, 4, 3.75: mean 3.25, sample stddev sqrt(1.1875).
        assert!((sum.rate.stddev - 1.1875f64.sqrt()).abs() < 1e-12);
        let want = "\nSession rate [sess/s]: min 2.00 avg 0.20 max 4.00 stddev 1.09 (2/4)\n\
                    Session: avg 3.00 connections/session\n\
                    Session lifetime [s]: 1.5\n\
                    Session failtime [s]: 1.0\n\
                    Session length histogram: 1 1 2\n";
        assert_eq!(render(&s, 10.0), want);
    }

    #[test]
    fn no_sessions() {
        let s = Stats::new();
        let want = "\nSession rate [sess/s]: min 0.00 avg 0.00 max 0.00 stddev 0.00 (0/0)\n\
                    Session: avg 0.00 connections/session\n\
                    Session lifetime [s]: 0.0\n\
                    Session failtime [s]: 0.0\n\
                    Session length histogram: 0\n";
        assert_eq!(render(&s, 1.0), want);
        // A zero duration divides as C does.
        assert!(render(&s, 0.0).contains("avg -nan max"));
        let mut one = Stats::new();
        one.on_session(true, ms(1), 1, 0);
        assert!(render(&one, 0.0).contains("avg inf max"));
        assert!(render(&one, 0.0).ends_with("histogram: 1\n"));
    }
}
