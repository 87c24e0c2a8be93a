//! `Summary`: the figures of the classic httperf report, derived from `Stats`.
//!
//! Owns every computation of docs/compatibility.md §2.3.2 (rates, averages, sample
//! stddev, x.5 median from 1-ms bins, integer-truncated sizes, reply-rate sample
//! statistics, CPU percentages, Net I/O). Pure and deterministic; the table of figures
//! (`model::figure`, through `model::report`) and the classic formatter (`output::classic`) only carry and
//! print these numbers. Called after the engines' `Stats` are merged.
//!
//! Divisions by the test duration follow C: with a zero duration they give `inf`, or a
//! negative-sign NaN for 0/0 (x86's default NaN, which glibc prints as `-nan`).

use crate::model::run::RunInfo;
use crate::model::stats::{Stats, ERROR_KINDS, LIFETIME_BINS};
use crate::wire::cfmt::c_nan;

/// Statistics over periodic rate samples (per second); serialised as the report's
/// `reply_rate` and `sessions.rate` members.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub(crate) struct RateSummary {
    /// Smallest sample (0.0 when there are none).
    pub(crate) min: f64,
    /// Mean of the samples (0.0 when there are none).
    pub(crate) avg: f64,
    /// Largest sample (0.0 when there are none).
    pub(crate) max: f64,
    /// Sample standard deviation (0.0 for fewer than two samples).
    pub(crate) stddev: f64,
    /// Number of samples.
    pub(crate) samples: u64,
}

impl RateSummary {
    /// Min/avg/max/stddev of `rates`, as httperf reports them.
    pub(crate) fn from_rates(rates: impl Iterator<Item = f64>) -> RateSummary {
        let (mut n, mut sum, mut sum2) = (0u64, 0.0f64, 0.0f64);
        let (mut min, mut max) = (f64::INFINITY, 0.0f64);
        for r in rates {
            n += 1;
            sum += r;
            sum2 += r * r;
            min = min.min(r);
            max = max.max(r);
        }
        if n == 0 {
            return RateSummary {
                min: 0.0,
                avg: 0.0,
                max: 0.0,
                stddev: 0.0,
                samples: 0,
            };
        }
        let nf = n as f64;
        let stddev = if n < 2 {
            0.0
        } else {
            ((sum2 - sum * sum / nf) / (nf - 1.0)).max(0.0).sqrt()
        };
        RateSummary {
            min,
            avg: sum / nf,
            max,
            stddev,
            samples: n,
        }
    }
}

/// Every figure of the classic report (docs/compatibility.md §2.3), times in ms, sizes
/// in bytes.
///
/// Borrows the 1-ms lifetime bins of the `Stats` it was built from, for the `-vv`
/// histogram (see `lifetime_histogram`).
#[derive(Debug, Clone)]
pub(crate) struct Summary<'a> {
    /// `--periodic-stats`: total replies with status 200 and 302 (the report's
    /// `Periodic stats:` line); None without the option. Set by the caller.
    pub(crate) periodic: Option<[u64; 2]>,
    /// Most connects started in one event-loop iteration.
    pub(crate) max_burst: u64,
    /// Connections that reached the connecting stage.
    pub(crate) connections: u64,
    /// Requests completely written.
    pub(crate) requests: u64,
    /// Completed replies with status class 1–5.
    pub(crate) replies: u64,
    /// Test duration (delta), seconds.
    pub(crate) duration: f64,
    /// Connections per second.
    pub(crate) conn_rate: f64,
    /// Milliseconds per connection (0.0 when there are none).
    pub(crate) conn_period_ms: f64,
    /// Most connections alive at once.
    pub(crate) max_concurrent: u64,
    /// Shortest lifetime (0.0 when there are none).
    pub(crate) lifetime_min_ms: f64,
    /// Mean lifetime.
    pub(crate) lifetime_avg_ms: f64,
    /// Longest lifetime.
    pub(crate) lifetime_max_ms: f64,
    /// Median lifetime, always the middle of a 1-ms bin (x.5), 0.0 when none.
    pub(crate) lifetime_median_ms: f64,
    /// Sample standard deviation of lifetimes (0.0 for fewer than two).
    pub(crate) lifetime_stddev_ms: f64,
    /// Mean connect time over successful connects.
    pub(crate) connect_avg_ms: f64,
    /// Replies per connection with a lifetime (0.0 when none).
    pub(crate) replies_per_conn: f64,
    /// Requests per second.
    pub(crate) request_rate: f64,
    /// Milliseconds per request (0.0 when there are none).
    pub(crate) request_period_ms: f64,
    /// Request bytes per request, integer-truncated.
    pub(crate) request_size: u64,
    /// Reply-rate samples, replies/s.
    pub(crate) reply_rate: RateSummary,
    /// Mean response time (send start → status line).
    pub(crate) response_avg_ms: f64,
    /// Mean transfer time (status line → reply complete).
    pub(crate) transfer_avg_ms: f64,
    /// Header bytes per reply, integer-truncated.
    pub(crate) reply_header_size: u64,
    /// Content bytes per reply, integer-truncated.
    pub(crate) reply_content_size: u64,
    /// Footer bytes per reply, integer-truncated.
    pub(crate) reply_footer_size: u64,
    /// Replies per status class, 1xx..=5xx.
    pub(crate) reply_status: [u64; 5],
    /// User CPU seconds.
    pub(crate) cpu_user: f64,
    /// System CPU seconds.
    pub(crate) cpu_system: f64,
    /// User CPU as a percentage of the duration.
    pub(crate) cpu_user_pct: f64,
    /// System CPU as a percentage of the duration.
    pub(crate) cpu_system_pct: f64,
    /// User plus system CPU as a percentage of the duration.
    pub(crate) cpu_total_pct: f64,
    /// Request bytes + reply header bytes + reply content bytes (footers excluded).
    pub(crate) net_io_bytes: u64,
    /// `net_io_bytes` per second, in KiB.
    pub(crate) net_io_kb_per_s: f64,
    /// `net_io_bytes` per second, in 10^6 bits.
    pub(crate) net_io_mbps: f64,
    /// Error counters in report order (indexed by `ErrorKind::index`).
    pub(crate) errors: [u64; ERROR_KINDS],
    /// Sum of the error counters.
    pub(crate) errors_total: u64,
    /// 1-ms lifetime bins, overflow element last (borrowed from `Stats`).
    lifetime_bins: &'a [u64],
}

/// `a / b` with C's result on x86: 0/0 is a negative-sign NaN (printed `-nan`).
fn c_div(a: f64, b: f64) -> f64 {
    c_nan(a / b)
}

/// Integer mean, 0 when `n` is 0 (httperf's truncated sizes).
fn int_avg(total: u64, n: u64) -> u64 {
    total.checked_div(n).unwrap_or(0)
}

/// Mean of a µs sum in ms, 0.0 when `n` is 0.
fn avg_ms(sum_us: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum_us as f64 / n as f64 / 1000.0
    }
}

/// Sample standard deviation, in ms, from µs sums; exact integer numerator when it fits.
fn stddev_ms(n: u64, sum_us: u64, sumsq_us: u128) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let (n128, sum128) = (u128::from(n), u128::from(sum_us));
    // n·Σx² − (Σx)² ≥ 0 exactly (Cauchy–Schwarz); variance = that / (n·(n−1)).
    let exact = n128
        .checked_mul(sumsq_us)
        .zip(sum128.checked_mul(sum128))
        .map(|(a, b)| a.saturating_sub(b));
    let var_us2 = match exact {
        Some(num) => num as f64 / (n as f64 * (n - 1) as f64),
        None => {
            let nf = n as f64;
            let s = sum_us as f64;
            ((sumsq_us as f64 - s * s / nf) / (nf - 1.0)).max(0.0)
        }
    };
    var_us2.sqrt() / 1000.0
}

impl<'a> Summary<'a> {
    /// Computes every report figure from merged statistics (compatibility.md §2.3.2).
    pub(crate) fn new(stats: &'a Stats, run: &RunInfo) -> Summary<'a> {
        let d = run.duration;
        let replies = stats.replies();
        let n_life = stats.lifetimes;
        let period_ms = |n: u64| if n == 0 { 0.0 } else { 1e3 * (d / n as f64) };
        let mut reply_status = [0u64; 5];
        reply_status.copy_from_slice(&stats.replies_by_class[1..=5]);
        let net_io_bytes =
            stats.request_bytes + stats.reply_header_bytes + stats.reply_content_bytes;
        let net = net_io_bytes as f64;
        Summary {
            periodic: None,
            max_burst: stats.max_burst,
            connections: stats.connections,
            requests: stats.requests,
            replies,
            duration: d,
            conn_rate: c_div(stats.connections as f64, d),
            conn_period_ms: period_ms(stats.connections),
            max_concurrent: stats.max_concurrent,
            lifetime_min_ms: if n_life == 0 {
                0.0
            } else {
                stats.lifetime_min_us as f64 / 1000.0
            },
            lifetime_avg_ms: avg_ms(stats.lifetime_sum_us, n_life),
            lifetime_max_ms: stats.lifetime_max_us as f64 / 1000.0,
            lifetime_median_ms: median_ms(stats),
            lifetime_stddev_ms: stddev_ms(n_life, stats.lifetime_sum_us, stats.lifetime_sumsq_us),
            connect_avg_ms: avg_ms(stats.connect_sum_us, stats.connects),
            replies_per_conn: if n_life == 0 {
                0.0
            } else {
                replies as f64 / n_life as f64
            },
            request_rate: c_div(stats.requests as f64, d),
            request_period_ms: period_ms(stats.requests),
            request_size: int_avg(stats.request_bytes, stats.requests),
            reply_rate: RateSummary::from_rates(
                stats
                    .rate_samples
                    .iter()
                    .map(|s| c_div(s.replies as f64, s.seconds)),
            ),
            response_avg_ms: avg_ms(stats.response_sum_us, stats.responses),
            transfer_avg_ms: avg_ms(stats.transfer_sum_us, stats.all_replies()),
            reply_header_size: int_avg(stats.reply_header_bytes, replies),
            reply_content_size: int_avg(stats.reply_content_bytes, replies),
            reply_footer_size: int_avg(stats.reply_footer_bytes, replies),
            reply_status,
            cpu_user: run.cpu_user,
            cpu_system: run.cpu_system,
            cpu_user_pct: c_div(100.0 * run.cpu_user, d),
            cpu_system_pct: c_div(100.0 * run.cpu_system, d),
            cpu_total_pct: c_div(100.0 * (run.cpu_user + run.cpu_system), d),
            net_io_bytes,
            net_io_kb_per_s: c_nan(c_div(net, d) / 1024.0),
            net_io_mbps: c_div(8e-6 * net, d),
            errors: stats.errors,
            errors_total: stats.total_errors(),
            lifetime_bins: &stats.lifetime_bins,
        }
    }

    /// Sum of the three truncated reply sizes (the report's `total`).
    pub(crate) fn reply_total_size(&self) -> u64 {
        self.reply_header_size + self.reply_content_size + self.reply_footer_size
    }

    /// Non-empty 1-ms lifetime bins as `(bin index, count)`, ascending; bin i holds
    /// lifetimes in [i, i+1) ms. Lifetimes of 100 s and more are not listed (as httperf).
    pub(crate) fn lifetime_histogram(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let bins = &self.lifetime_bins[..LIFETIME_BINS.min(self.lifetime_bins.len())];
        bins.iter()
            .enumerate()
            .filter(|&(_, &c)| c != 0)
            .map(|(i, &c)| (i, c))
    }
}

/// httperf's median: (i + 0.5) ms for the first 1-ms bin i whose cumulative count
/// reaches n/2; 0.0 without lifetimes. When that is the ≥ 100 s overflow element
/// (httperf prints 0.0: compatibility.md, bug 9) the lifetime histogram's median is
/// used, put into its 1-ms bin the same way.
fn median_ms(stats: &Stats) -> f64 {
    if stats.lifetimes == 0 {
        return 0.0;
    }
    let half = 0.5 * stats.lifetimes as f64;
    let mut cumulative = 0u64;
    for (i, &c) in stats.lifetime_bins.iter().enumerate().take(LIFETIME_BINS) {
        cumulative += c;
        if cumulative as f64 >= half {
            return i as f64 + 0.5;
        }
    }
    let us = stats.hist.lifetime.value_at_quantile(0.5);
    let bin = (us / 1000).max(LIFETIME_BINS as u64);
    bin as f64 + 0.5
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::RateSample;
    use std::time::Duration;

    const RUN: RunInfo = RunInfo {
        duration: 2.0,
        cpu_user: 0.0,
        cpu_system: 0.0,
    };

    fn with_lifetimes(us: &[u64]) -> Stats {
        let mut s = Stats::new();
        for &v in us {
            s.on_lifetime(Duration::from_micros(v));
        }
        s
    }

    #[test]
    fn median_is_first_bin_reaching_half_plus_half_ms() {
        // n = 4, half = 2: bin 0 already holds 2 → 0.5, not a midpoint of 0 and 3.
        let s = with_lifetimes(&[100, 900, 3_100, 3_900]);
        assert_eq!(Summary::new(&s, &RUN).lifetime_median_ms, 0.5);
        // n = 3, half = 1.5: cumulative 1 at bin 1, 2 at bin 2 → 2.5.
        let s = with_lifetimes(&[1_200, 2_700, 12_800]);
        assert_eq!(Summary::new(&s, &RUN).lifetime_median_ms, 2.5);
        // n = 1: its own bin.
        let s = with_lifetimes(&[42_999]);
        assert_eq!(Summary::new(&s, &RUN).lifetime_median_ms, 42.5);
        // None: 0.0.
        let s = Stats::new();
        assert_eq!(Summary::new(&s, &RUN).lifetime_median_ms, 0.0);
    }

    #[test]
    fn median_in_overflow_uses_lifetime_histogram() {
        // Half of 3 is 1.5; only 1 lifetime lies below 100 s.
        let s = with_lifetimes(&[1_000, 150_000_000, 150_000_000]);
        let m = Summary::new(&s, &RUN).lifetime_median_ms;
        // hdrhistogram with 3 significant digits: within 0.1 % of 150 000 ms.
        assert!((150_000.5..=150_150.5).contains(&m), "median {m}");
        assert_eq!(m.fract(), 0.5);
    }

    #[test]
    fn lifetime_min_avg_max_stddev() {
        let s = with_lifetimes(&[1_200, 2_700, 12_800]);
        let m = Summary::new(&s, &RUN);
        assert_eq!(m.lifetime_min_ms, 1.2);
        assert_eq!(m.lifetime_max_ms, 12.8);
        assert!((m.lifetime_avg_ms - 16.7 / 3.0).abs() < 1e-12);
        // n·Σx² − (Σx)² = 3·172 570 000 − 16 700² = 238 820 000 µs², / (n(n−1)) = / 6.
        assert!(
            (m.lifetime_stddev_ms - (238_820_000.0f64 / 6.0).sqrt() / 1000.0).abs() < 1e-12,
            "{}",
            m.lifetime_stddev_ms
        );
        // One sample or none: 0; identical samples: exactly 0.
        assert_eq!(
            Summary::new(&with_lifetimes(&[5_000]), &RUN).lifetime_stddev_ms,
            0.0
        );
        assert_eq!(
            Summary::new(&with_lifetimes(&[7; 3]), &RUN).lifetime_stddev_ms,
            0.0
        );
        let none = Stats::new();
        let m = Summary::new(&none, &RUN);
        assert_eq!(
            (m.lifetime_min_ms, m.lifetime_max_ms, m.lifetime_avg_ms),
            (0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn sizes_are_integer_truncated() {
        let mut s = Stats::new();
        for b in [68, 88, 88] {
            s.on_request_sent(b);
        }
        s.on_reply(200, 239, 1024, 0, Duration::ZERO);
        s.on_reply(200, 239, 1024, 0, Duration::ZERO);
        s.on_reply(404, 200, 150, 5, Duration::ZERO);
        let m = Summary::new(&s, &RUN);
        assert_eq!(m.request_size, 81); // 244 / 3 = 81.33
        assert_eq!(m.reply_header_size, 226); // 678 / 3
        assert_eq!(m.reply_content_size, 732); // 2198 / 3 = 732.67
        assert_eq!(m.reply_footer_size, 1); // 5 / 3
        assert_eq!(m.reply_total_size(), 959);
        assert_eq!(m.net_io_bytes, 244 + 678 + 2198);
        assert_eq!(Summary::new(&Stats::new(), &RUN).request_size, 0);
    }

    #[test]
    fn reply_rate_sample_statistics() {
        let mut s = Stats::new();
        for (replies, seconds) in [(10, 5.0), (20, 5.0), (15, 4.0)] {
            s.rate_samples.push(RateSample {
                replies,
                sessions: 0,
                seconds,
            });
        }
        let r = Summary::new(&s, &RUN).reply_rate;
        // Rates 2, 4, 3.75: mean 3.25, Σd² = 1.5625 + 0.5625 + 0.25 = 2.375, /2 = 1.1875.
        assert_eq!((r.min, r.max, r.samples), (2.0, 4.0, 3));
        assert!((r.avg - 3.25).abs() < 1e-12);
        assert!((r.stddev - 1.1875f64.sqrt()).abs() < 1e-12);
        let one = RateSummary::from_rates([20.0].into_iter());
        assert_eq!(
            one,
            RateSummary {
                min: 20.0,
                avg: 20.0,
                max: 20.0,
                stddev: 0.0,
                samples: 1
            }
        );
        let none = RateSummary::from_rates(std::iter::empty());
        assert_eq!(
            none,
            RateSummary {
                min: 0.0,
                avg: 0.0,
                max: 0.0,
                stddev: 0.0,
                samples: 0
            }
        );
    }

    #[test]
    fn zero_duration_gives_c_inf_and_negative_nan() {
        let mut s = Stats::new();
        s.on_connecting();
        let run = RunInfo {
            duration: 0.0,
            cpu_user: 0.0,
            cpu_system: 0.5,
        };
        let m = Summary::new(&s, &run);
        assert_eq!(m.conn_rate, f64::INFINITY);
        assert_eq!(m.conn_period_ms, 0.0);
        assert!(m.request_rate.is_nan() && m.request_rate.is_sign_negative());
        assert_eq!(m.request_period_ms, 0.0);
        assert!(m.cpu_user_pct.is_nan() && m.cpu_user_pct.is_sign_negative());
        assert_eq!(m.cpu_system_pct, f64::INFINITY);
        assert!(m.net_io_kb_per_s.is_nan() && m.net_io_kb_per_s.is_sign_negative());
        assert!(m.net_io_mbps.is_nan() && m.net_io_mbps.is_sign_negative());
    }

    #[test]
    fn transfer_averages_over_all_replies_and_status_classes_1_to_5() {
        let mut s = Stats::new();
        s.on_reply(200, 0, 0, 0, Duration::from_micros(300));
        s.on_reply(50, 0, 0, 0, Duration::from_micros(100));
        s.on_reply(503, 0, 0, 0, Duration::from_micros(200));
        let m = Summary::new(&s, &RUN);
        assert_eq!(m.replies, 2);
        assert_eq!(m.reply_status, [0, 1, 0, 0, 1]);
        assert!((m.transfer_avg_ms - 0.2).abs() < 1e-12);
    }

    #[test]
    fn histogram_lists_non_empty_bins_without_overflow() {
        let s = with_lifetimes(&[100, 200, 5_100, 100_000_000]);
        let m = Summary::new(&s, &RUN);
        assert_eq!(
            m.lifetime_histogram().collect::<Vec<_>>(),
            vec![(0, 2), (5, 1)]
        );
    }
}
