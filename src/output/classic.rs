//! The classic httperf text report, byte for byte (docs/compatibility.md §2.3).
//!
//! Prints a `Summary` from the `Maximum connect burst length` line to the second
//! `Errors` line, with the `-vv` lifetime histogram. Computes nothing (see `summary`)
//! and does no I/O beyond the given writer; the caller passes a locked, buffered stdout.
//! Every float goes through `cfmt::fixed` so a zero duration prints `inf`/`-nan` as C.
//!
//! The groups are written by separate functions in report order, so the optional
//! blocks of later features slot in between them: master's `Periodic stats` line
//! (before the CPU group) and the session block (after the errors, starting with a
//! blank line).

use std::io::{self, Write};

use crate::wire::cfmt::fixed;

use super::summary::Summary;
use crate::model::stats::{ErrorKind, ERROR_KINDS};

/// Writes the classic report; `verbose` ≥ 2 adds the connection-lifetime histogram.
pub(crate) fn write_report<W: Write>(out: &mut W, s: &Summary<'_>, verbose: u32) -> io::Result<()> {
    writeln!(out, "Maximum connect burst length: {}", s.max_burst)?;
    if verbose >= 2 {
        write_lifetime_histogram(out, s)?;
    }
    write_connections(out, s)?;
    write_requests(out, s)?;
    write_replies(out, s)?;
    write_resources(out, s)?;
    write_errors(out, s)
}

/// Writes the lines of the report that a per-request log determines
/// (`rshperf log --report`), each as the report prints it: `Total:` (its duration the
/// last record's end), the request size, the reply times, sizes and status classes,
/// and the `Errors` lines.
pub(crate) fn write_log_report<W: Write>(out: &mut W, s: &Summary<'_>) -> io::Result<()> {
    writeln!(
        out,
        "Total: connections {} requests {} replies {} test-duration {} s\n",
        s.connections,
        s.requests,
        s.replies,
        fixed(s.duration, 3)
    )?;
    write_request_size(out, s)?;
    write_reply_figures(out, s)?;
    write_errors(out, s)
}

/// `%16.1f %u` per non-empty 1-ms bin; `%14c` ':' before one whose predecessor is empty.
fn write_lifetime_histogram<W: Write>(out: &mut W, s: &Summary<'_>) -> io::Result<()> {
    writeln!(out, "\nConnection lifetime histogram (time in ms):")?;
    let mut prev: Option<usize> = None;
    for (bin, count) in s.lifetime_histogram() {
        let gap = match prev {
            Some(p) => p + 1 != bin,
            None => bin > 0,
        };
        if gap {
            writeln!(out, "{:>14}", ':')?;
        }
        writeln!(out, "{:>16} {}", fixed(bin as f64 + 0.5, 1), count)?;
        prev = Some(bin);
    }
    Ok(())
}

/// `Total:` and the connection group.
fn write_connections<W: Write>(out: &mut W, s: &Summary<'_>) -> io::Result<()> {
    writeln!(
        out,
        "\nTotal: connections {} requests {} replies {} test-duration {} s\n",
        s.connections,
        s.requests,
        s.replies,
        fixed(s.duration, 3)
    )?;
    writeln!(
        out,
        "Connection rate: {} conn/s ({} ms/conn, <={} concurrent connections)",
        fixed(s.conn_rate, 1),
        fixed(s.conn_period_ms, 1),
        s.max_concurrent
    )?;
    writeln!(
        out,
        "Connection time [ms]: min {} avg {} max {} median {} stddev {}",
        fixed(s.lifetime_min_ms, 1),
        fixed(s.lifetime_avg_ms, 1),
        fixed(s.lifetime_max_ms, 1),
        fixed(s.lifetime_median_ms, 1),
        fixed(s.lifetime_stddev_ms, 1)
    )?;
    writeln!(
        out,
        "Connection time [ms]: connect {}",
        fixed(s.connect_avg_ms, 1)
    )?;
    writeln!(
        out,
        "Connection length [replies/conn]: {}\n",
        fixed(s.replies_per_conn, 3)
    )
}

/// The request group.
fn write_requests<W: Write>(out: &mut W, s: &Summary<'_>) -> io::Result<()> {
    writeln!(
        out,
        "Request rate: {} req/s ({} ms/req)",
        fixed(s.request_rate, 1),
        fixed(s.request_period_ms, 1)
    )?;
    write_request_size(out, s)
}

/// `Request size [B]:` and the blank line after the request group.
fn write_request_size<W: Write>(out: &mut W, s: &Summary<'_>) -> io::Result<()> {
    writeln!(
        out,
        "Request size [B]: {}\n",
        fixed(s.request_size as f64, 1)
    )
}

/// The reply group.
fn write_replies<W: Write>(out: &mut W, s: &Summary<'_>) -> io::Result<()> {
    let r = &s.reply_rate;
    writeln!(
        out,
        "Reply rate [replies/s]: min {} avg {} max {} stddev {} ({} samples)",
        fixed(r.min, 1),
        fixed(r.avg, 1),
        fixed(r.max, 1),
        fixed(r.stddev, 1),
        r.samples
    )?;
    write_reply_figures(out, s)
}

/// The reply group's lines after the rate: times, sizes, status classes.
fn write_reply_figures<W: Write>(out: &mut W, s: &Summary<'_>) -> io::Result<()> {
    writeln!(
        out,
        "Reply time [ms]: response {} transfer {}",
        fixed(s.response_avg_ms, 1),
        fixed(s.transfer_avg_ms, 1)
    )?;
    writeln!(
        out,
        "Reply size [B]: header {} content {} footer {} (total {})",
        fixed(s.reply_header_size as f64, 1),
        fixed(s.reply_content_size as f64, 1),
        fixed(s.reply_footer_size as f64, 1),
        fixed(s.reply_total_size() as f64, 1)
    )?;
    let [c1, c2, c3, c4, c5] = s.reply_status;
    writeln!(
        out,
        "Reply status: 1xx={c1} 2xx={c2} 3xx={c3} 4xx={c4} 5xx={c5}\n"
    )
}

/// CPU time and Net I/O.
fn write_resources<W: Write>(out: &mut W, s: &Summary<'_>) -> io::Result<()> {
    if let Some([ok, found]) = s.periodic {
        writeln!(out, "Periodic stats: 200={ok} 302={found}\n")?;
    }
    writeln!(
        out,
        "CPU time [s]: user {} system {} (user {}% system {}% total {}%)",
        fixed(s.cpu_user, 2),
        fixed(s.cpu_system, 2),
        fixed(s.cpu_user_pct, 1),
        fixed(s.cpu_system_pct, 1),
        fixed(s.cpu_total_pct, 1)
    )?;
    writeln!(
        out,
        "Net I/O: {} KB/s ({}*10^6 bps)\n",
        fixed(s.net_io_kb_per_s, 1),
        fixed(s.net_io_mbps, 1)
    )
}

/// The two `Errors` lines: the total and the first four kinds, then the other four
/// (httperf's layout; names from `ErrorKind`).
fn write_errors<W: Write>(out: &mut W, s: &Summary<'_>) -> io::Result<()> {
    let kinds = |range: std::ops::Range<usize>| {
        ErrorKind::ALL[range]
            .iter()
            .map(|k| format!(" {} {}", k.name(), s.errors[k.index()]))
            .collect::<String>()
    };
    writeln!(out, "Errors: total {}{}", s.errors_total, kinds(0..4))?;
    writeln!(out, "Errors:{}", kinds(4..ERROR_KINDS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::run::RunInfo;
    use crate::model::stats::{ErrorKind, RateSample, Stats};
    use std::time::Duration;

    fn render(stats: &Stats, run: RunInfo, verbose: u32) -> String {
        let mut out = Vec::new();
        write_report(&mut out, &Summary::new(stats, &run), verbose).expect("Vec write");
        String::from_utf8(out).expect("report is ASCII")
    }

    /// `n` identical calls: request, response (300 µs), reply (transfer 10 µs).
    fn add_calls(s: &mut Stats, n: usize, req: u64, head: u64, body: u64) {
        for _ in 0..n {
            s.on_request_sent(req);
            s.on_response(Duration::from_micros(300));
            s.on_reply(200, head, body, 0, Duration::from_micros(10));
        }
    }

    fn connections(s: &mut Stats, n: usize, connect_us: u64) {
        for _ in 0..n {
            s.on_connecting();
            s.on_connected(Duration::from_micros(connect_us));
        }
    }

    fn lifetimes(s: &mut Stats, n: usize, us: u64) {
        for _ in 0..n {
            s.on_lifetime(Duration::from_micros(us));
        }
    }

    #[test]
    fn a1_golden() {
        let mut s = Stats::new();
        s.max_burst = 2;
        s.max_concurrent = 3;
        connections(&mut s, 200, 20);
        add_calls(&mut s, 200, 69, 239, 1024);
        // avg 58.4/200 = 0.292 ms, stddev 1.5 ms, median bin 0 (196 of 200).
        lifetimes(&mut s, 1, 0);
        lifetimes(&mut s, 1, 12_800);
        lifetimes(&mut s, 3, 10_000);
        lifetimes(&mut s, 195, 80);
        let run = RunInfo {
            duration: 1.991,
            cpu_user: 0.48,
            cpu_system: 1.326,
        };
        let want = "\
Maximum connect burst length: 2

Total: connections 200 requests 200 replies 200 test-duration 1.991 s

Connection rate: 100.5 conn/s (10.0 ms/conn, <=3 concurrent connections)
Connection time [ms]: min 0.0 avg 0.3 max 12.8 median 0.5 stddev 1.5
Connection time [ms]: connect 0.0
Connection length [replies/conn]: 1.000

Request rate: 100.5 req/s (10.0 ms/req)
Request size [B]: 69.0

Reply rate [replies/s]: min 0.0 avg 0.0 max 0.0 stddev 0.0 (0 samples)
Reply time [ms]: response 0.3 transfer 0.0
Reply size [B]: header 239.0 content 1024.0 footer 0.0 (total 1263.0)
Reply status: 1xx=0 2xx=200 3xx=0 4xx=0 5xx=0

CPU time [s]: user 0.48 system 1.33 (user 24.1% system 66.6% total 90.7%)
Net I/O: 130.7 KB/s (1.1*10^6 bps)

Errors: total 0 client-timo 0 socket-timo 0 connrefused 0 connreset 0
Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0
";
        assert_eq!(render(&s, run, 1), want);
        // Verbose 0 and 1 print the same.
        assert_eq!(render(&s, run, 0), want);
    }

    #[test]
    fn a3_refused_golden() {
        let mut s = Stats::new();
        s.max_burst = 1;
        s.max_concurrent = 1;
        connections(&mut s, 5, 20);
        for _ in 0..5 {
            s.on_error(ErrorKind::ConnRefused);
        }
        let run = RunInfo {
            duration: 0.401,
            cpu_user: 0.119,
            cpu_system: 0.2787,
        };
        let want = "\
Maximum connect burst length: 1

Total: connections 5 requests 0 replies 0 test-duration 0.401 s

Connection rate: 12.5 conn/s (80.2 ms/conn, <=1 concurrent connections)
Connection time [ms]: min 0.0 avg 0.0 max 0.0 median 0.0 stddev 0.0
Connection time [ms]: connect 0.0
Connection length [replies/conn]: 0.000

Request rate: 0.0 req/s (0.0 ms/req)
Request size [B]: 0.0

Reply rate [replies/s]: min 0.0 avg 0.0 max 0.0 stddev 0.0 (0 samples)
Reply time [ms]: response 0.0 transfer 0.0
Reply size [B]: header 0.0 content 0.0 footer 0.0 (total 0.0)
Reply status: 1xx=0 2xx=0 3xx=0 4xx=0 5xx=0

CPU time [s]: user 0.12 system 0.28 (user 29.7% system 69.5% total 99.2%)
Net I/O: 0.0 KB/s (0.0*10^6 bps)

Errors: total 5 client-timo 0 socket-timo 0 connrefused 5 connreset 0
Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0
";
        assert_eq!(render(&s, run, 1), want);
    }

    #[test]
    fn a5_verbose_histogram_golden() {
        let mut s = Stats::new();
        s.max_burst = 1;
        s.max_concurrent = 1;
        connections(&mut s, 60, 30);
        for _ in 0..120 {
            s.on_request_sent(69);
            s.on_response(Duration::from_micros(100));
            s.on_reply(200, 239, 1024, 0, Duration::from_micros(10));
        }
        // Σ = 16.8 ms → avg 0.28; Σd² = 23 636 000 µs² / 59 → stddev 0.633 ms.
        lifetimes(&mut s, 1, 100);
        lifetimes(&mut s, 58, 200);
        lifetimes(&mut s, 1, 5_100);
        s.rate_samples.push(RateSample {
            replies: 100,
            sessions: 0,
            seconds: 5.0,
        });
        let run = RunInfo {
            duration: 5.901,
            cpu_user: 1.53,
            cpu_system: 4.33,
        };
        let want = "\
Maximum connect burst length: 1

Connection lifetime histogram (time in ms):
             0.5 59
             :
             5.5 1

Total: connections 60 requests 120 replies 120 test-duration 5.901 s

Connection rate: 10.2 conn/s (98.3 ms/conn, <=1 concurrent connections)
Connection time [ms]: min 0.1 avg 0.3 max 5.1 median 0.5 stddev 0.6
Connection time [ms]: connect 0.0
Connection length [replies/conn]: 2.000

Request rate: 20.3 req/s (49.2 ms/req)
Request size [B]: 69.0

Reply rate [replies/s]: min 20.0 avg 20.0 max 20.0 stddev 0.0 (1 samples)
Reply time [ms]: response 0.1 transfer 0.0
Reply size [B]: header 239.0 content 1024.0 footer 0.0 (total 1263.0)
Reply status: 1xx=0 2xx=120 3xx=0 4xx=0 5xx=0

CPU time [s]: user 1.53 system 4.33 (user 25.9% system 73.4% total 99.3%)
Net I/O: 26.5 KB/s (0.2*10^6 bps)

Errors: total 0 client-timo 0 socket-timo 0 connrefused 0 connreset 0
Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0
";
        assert_eq!(render(&s, run, 2), want);
    }

    #[test]
    fn mixed_run_with_truncated_sizes_errors_and_leading_gap() {
        let mut s = Stats::new();
        s.max_burst = 2;
        s.max_concurrent = 3;
        for us in [100, 200, 400] {
            s.on_connecting();
            s.on_connected(Duration::from_micros(us));
        }
        for (req, resp, status, head, body, xfer) in [
            (68, 300, 200, 239, 1024, 10),
            (88, 400, 200, 239, 1024, 20),
            (88, 500, 404, 200, 150, 60),
        ] {
            s.on_request_sent(req);
            s.on_response(Duration::from_micros(resp));
            s.on_reply(status, head, body, 0, Duration::from_micros(xfer));
        }
        // Bins 1, 2, 12: ':' before bin 1 (bin 0 empty) and before bin 12.
        for us in [1_200, 2_700, 12_800] {
            s.on_lifetime(Duration::from_micros(us));
        }
        for (replies, seconds) in [(10, 5.0), (20, 5.0), (15, 4.0)] {
            s.rate_samples.push(RateSample {
                replies,
                sessions: 0,
                seconds,
            });
        }
        s.on_error(ErrorKind::ClientTimo);
        s.on_error(ErrorKind::ConnReset);
        s.on_error(ErrorKind::ConnReset);
        s.on_error(ErrorKind::AddrUnavail);
        s.on_error(ErrorKind::Other);
        let run = RunInfo {
            duration: 1.991,
            cpu_user: 0.48,
            cpu_system: 1.33,
        };
        // Bytes 244 + 678 + 2198 = 3120 → 1.53 KB/s, 0.0125 Mbps.
        let want = "\
Maximum connect burst length: 2

Connection lifetime histogram (time in ms):
             :
             1.5 1
             2.5 1
             :
            12.5 1

Total: connections 3 requests 3 replies 3 test-duration 1.991 s

Connection rate: 1.5 conn/s (663.7 ms/conn, <=3 concurrent connections)
Connection time [ms]: min 1.2 avg 5.6 max 12.8 median 2.5 stddev 6.3
Connection time [ms]: connect 0.2
Connection length [replies/conn]: 1.000

Request rate: 1.5 req/s (663.7 ms/req)
Request size [B]: 81.0

Reply rate [replies/s]: min 2.0 avg 3.2 max 4.0 stddev 1.1 (3 samples)
Reply time [ms]: response 0.4 transfer 0.0
Reply size [B]: header 226.0 content 732.0 footer 0.0 (total 958.0)
Reply status: 1xx=0 2xx=2 3xx=0 4xx=1 5xx=0

CPU time [s]: user 0.48 system 1.33 (user 24.1% system 66.8% total 90.9%)
Net I/O: 1.5 KB/s (0.0*10^6 bps)

Errors: total 5 client-timo 1 socket-timo 0 connrefused 0 connreset 2
Errors: fd-unavail 0 addrunavail 1 ftab-full 0 other 1
";
        assert_eq!(render(&s, run, 3), want);
    }

    #[test]
    fn zero_duration_prints_inf_and_negative_nan_like_c() {
        let mut s = Stats::new();
        connections(&mut s, 1, 0);
        s.on_request_sent(70);
        s.on_response(Duration::from_micros(200));
        s.on_reply(200, 100, 0, 0, Duration::ZERO);
        s.on_lifetime(Duration::from_micros(500));
        let run = RunInfo {
            duration: 0.0,
            cpu_user: 0.0,
            cpu_system: 0.01,
        };
        let want = "\
Maximum connect burst length: 0

Total: connections 1 requests 1 replies 1 test-duration 0.000 s

Connection rate: inf conn/s (0.0 ms/conn, <=0 concurrent connections)
Connection time [ms]: min 0.5 avg 0.5 max 0.5 median 0.5 stddev 0.0
Connection time [ms]: connect 0.0
Connection length [replies/conn]: 1.000

Request rate: inf req/s (0.0 ms/req)
Request size [B]: 70.0

Reply rate [replies/s]: min 0.0 avg 0.0 max 0.0 stddev 0.0 (0 samples)
Reply time [ms]: response 0.2 transfer 0.0
Reply size [B]: header 100.0 content 0.0 footer 0.0 (total 100.0)
Reply status: 1xx=0 2xx=1 3xx=0 4xx=0 5xx=0

CPU time [s]: user 0.00 system 0.01 (user -nan% system inf% total inf%)
Net I/O: inf KB/s (inf*10^6 bps)

Errors: total 0 client-timo 0 socket-timo 0 connrefused 0 connreset 0
Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0
";
        assert_eq!(render(&s, run, 1), want);
    }

    #[test]
    fn zero_duration_without_connections_prints_negative_nan() {
        let s = Stats::new();
        let run = RunInfo {
            duration: 0.0,
            cpu_user: 0.0,
            cpu_system: 0.0,
        };
        let text = render(&s, run, 1);
        assert!(text.contains("\nConnection rate: -nan conn/s (0.0 ms/conn, <=0 concurrent"));
        assert!(text.contains("\nRequest rate: -nan req/s (0.0 ms/req)\n"));
        assert!(text.contains("(user -nan% system -nan% total -nan%)\n"));
        assert!(text.contains("\nNet I/O: -nan KB/s (-nan*10^6 bps)\n"));
    }

    #[test]
    fn histogram_block_without_lifetimes_is_just_the_title() {
        let s = Stats::new();
        let run = RunInfo {
            duration: 1.0,
            cpu_user: 0.0,
            cpu_system: 0.0,
        };
        let text = render(&s, run, 2);
        let want_head = "Maximum connect burst length: 0\n\n\
                         Connection lifetime histogram (time in ms):\n\n\
                         Total: connections 0 ";
        assert!(text.starts_with(want_head), "{text}");
    }
}
