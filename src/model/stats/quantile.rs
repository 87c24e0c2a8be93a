//! `quantile_ms`: the one conversion from a µs latency histogram to a millisecond
//! figure, shared by the JSON document, the CSV row, `--fail-on`, the percentile lines
//! and the live progress line; and the quantiles every latency histogram reports
//! (`QUANTILES`, a key set of the table of figures). Pure.

use hdrhistogram::Histogram;

/// The quantiles reported for every latency histogram, with their labels as the
/// percentile lines print them; the key is the label with `_` for `.` (`p99.9` →
/// `p99_9`). `max` follows them.
pub(crate) const QUANTILES: [(f64, &str); 5] = [
    (0.5, "p50"),
    (0.9, "p90"),
    (0.99, "p99"),
    (0.999, "p99.9"),
    (0.9999, "p99.99"),
];

/// The key of a quantile label (`p99.9` → `p99_9`).
pub(crate) fn quantile_key(label: &str) -> String {
    label.replace('.', "_")
}

/// The value at quantile `q` (0..=1) of a µs histogram, in ms; 0.0 when it is empty.
/// `q` ≥ 1 gives the largest recorded value. Values are the highest value equivalent
/// to the recorded one (3 significant digits: within 0.1 %).
pub(crate) fn quantile_ms(h: &Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    let us = if q >= 1.0 {
        h.max()
    } else {
        h.value_at_quantile(q.max(0.0))
    };
    us as f64 / 1000.0
}
