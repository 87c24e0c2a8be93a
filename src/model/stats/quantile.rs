//! `quantile_ms`: the one conversion from a µs latency histogram to a millisecond
//! figure, shared by the JSON document, the CSV row, `--fail-on`, the percentile lines
//! and the live progress line. Pure.

use hdrhistogram::Histogram;

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
