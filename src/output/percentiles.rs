//! The `--percentiles` block: p50 … p99.99 and max of every latency histogram.
//!
//! Owns the percentile lines printed after the classic report (and after the session
//! block) with `--percentiles` or `-v`; the quantiles and histogram names are the
//! table of figures' (`model::figure::QUANTILES`, `Histograms::named`). Every line
//! starts with `Percentiles`, a word no classic httperf line starts with, so httperf parsers keyed on line prefixes are unaffected. Pure: writes to the
//! given writer only. Called by the runner.

use std::io::{self, Write};

use hdrhistogram::Histogram;

use crate::model::figure::QUANTILES;
use crate::model::stats::{quantile_ms, Stats};
use crate::wire::cfmt::fixed;

/// The latency histograms of `stats` with their names, in report order.
pub(crate) fn histograms(stats: &Stats) -> [(&'static str, &Histogram<u64>); 5] {
    stats.hist.named()
}

/// Writes one line per histogram, with no blank line before them (a blank line would
/// change the report's layout as httperf parsers and compare tools see it):
/// `Percentiles connect [ms]: p50 0.123 p90 … p99 … p99.9 … p99.99 … max …`
/// (connect, response, transfer, lifetime, lateness; empty histograms print zeros).
pub(crate) fn write_percentiles<W: Write>(out: &mut W, stats: &Stats) -> io::Result<()> {
    write_some(out, stats, |_| true)
}

/// The lines of `write_percentiles` for the histograms `keep` names.
pub(crate) fn write_some<W: Write>(
    out: &mut W,
    stats: &Stats,
    keep: impl Fn(&str) -> bool,
) -> io::Result<()> {
    for (name, h) in histograms(stats).into_iter().filter(|(n, _)| keep(n)) {
        write!(out, "Percentiles {name} [ms]:")?;
        for (q, label) in QUANTILES {
            write!(out, " {label} {}", fixed(quantile_ms(h, q), 3))?;
        }
        writeln!(out, " max {}", fixed(quantile_ms(h, 1.0), 3))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn render(stats: &Stats) -> String {
        let mut out = Vec::new();
        write_percentiles(&mut out, stats).expect("Vec write");
        String::from_utf8(out).expect("ASCII")
    }

    #[test]
    fn empty_histograms_print_zeros() {
        let zeros = "p50 0.000 p90 0.000 p99 0.000 p99.9 0.000 p99.99 0.000 max 0.000";
        let expected = format!(
            "Percentiles connect [ms]: {zeros}\nPercentiles response [ms]: {zeros}\n\
             Percentiles transfer [ms]: {zeros}\nPercentiles lifetime [ms]: {zeros}\n\
             Percentiles lateness [ms]: {zeros}\n"
        );
        assert_eq!(render(&Stats::new()), expected);
    }

    #[test]
    fn quantiles_at_microsecond_resolution() {
        let mut s = Stats::new();
        // 1..=1000 µs response times: below 1024 µs every value is exact.
        for v in 1..=1000u64 {
            s.on_response(Duration::from_micros(v));
        }
        s.on_connected(Duration::from_micros(123));
        let text = render(&s);
        assert!(
            text.contains(
                "Percentiles response [ms]: p50 0.500 p90 0.900 p99 0.990 p99.9 0.999 \
                 p99.99 1.000 max 1.000\n"
            ),
            "{text}"
        );
        assert!(text.contains(
            "Percentiles connect [ms]: p50 0.123 p90 0.123 p99 0.123 p99.9 0.123 \
             p99.99 0.123 max 0.123\n"
        ));
        assert_eq!(quantile_ms(&s.hist.response, 0.5), 0.5);
        assert_eq!(quantile_ms(&s.hist.response, 1.0), 1.0);
        assert_eq!(quantile_ms(&s.hist.transfer, 0.99), 0.0);
    }

    #[test]
    fn large_values_are_within_a_tenth_of_a_percent() {
        let mut s = Stats::new();
        s.on_lifetime(Duration::from_millis(73_412));
        let v = quantile_ms(&s.hist.lifetime, 0.99);
        assert!((73_412.0..=73_412.0 * 1.001).contains(&v), "{v}");
    }

    #[test]
    fn the_documentation_shows_these_labels() {
        let doc = include_str!("../../docs/json.md");
        for (name, _) in histograms(&Stats::new()) {
            assert!(
                doc.contains(&format!("Percentiles {name} [ms]: p50 ")),
                "{name}"
            );
        }
    }

    #[test]
    fn no_line_starts_like_a_classic_line() {
        let classic = [
            "Maximum",
            "Total:",
            "Connection",
            "Request",
            "Reply",
            "CPU",
            "Net",
            "Errors",
            "Session",
            "Periodic",
        ];
        for line in render(&Stats::new()).lines().filter(|l| !l.is_empty()) {
            assert!(line.starts_with("Percentiles "));
            assert!(classic.iter().all(|c| !line.starts_with(c)), "{line}");
        }
    }
}
