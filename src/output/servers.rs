//! The per-server block of a `--servers` run (lb's per-server report in httperf's
//! style): after the classic report, three lines per server with its connections,
//! requests, replies, rates, status classes, errors and response times.
//!
//! Labels start with `Server `, which no classic line does, so httperf parsers are
//! unaffected. Pure: writes to the given writer.

use std::io::{self, Write};

use crate::model::stats::quantile_ms;
use crate::model::stats::{ErrorKind, ServerStats};
use crate::wire::cfmt::fixed;

/// Writes a blank line, then the block of each server (`labels[i]` names
/// `servers[i]`), rates over `duration` seconds.
pub(crate) fn write_servers<W: Write>(
    out: &mut W,
    servers: &[ServerStats],
    labels: &[String],
    duration: f64,
) -> io::Result<()> {
    if servers.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    for (i, s) in servers.iter().enumerate() {
        let label = labels.get(i).map_or("?", String::as_str);
        let replies = s.replies();
        writeln!(
            out,
            "Server {label}: connections {} requests {} replies {} (request rate {} req/s, reply rate {} replies/s)",
            s.connections,
            s.requests,
            replies,
            fixed(s.requests as f64 / duration, 1),
            fixed(replies as f64 / duration, 1)
        )?;
        let errors: u64 = s.errors.iter().sum();
        write!(
            out,
            "Server {label}: status 1xx={} 2xx={} 3xx={} 4xx={} 5xx={} errors {errors} (",
            s.replies_by_class[1],
            s.replies_by_class[2],
            s.replies_by_class[3],
            s.replies_by_class[4],
            s.replies_by_class[5]
        )?;
        for (k, kind) in ErrorKind::ALL.iter().enumerate() {
            let sep = if k == 0 { "" } else { " " };
            write!(out, "{sep}{} {}", kind.name(), s.errors[k])?;
        }
        writeln!(out, ")")?;
        let n = s.response.len();
        let avg = if n == 0 {
            0.0
        } else {
            s.response_sum_us as f64 / n as f64 / 1000.0
        };
        writeln!(
            out,
            "Server {label}: response [ms] avg {} p50 {} p90 {} p99 {} max {}",
            fixed(avg, 1),
            fixed(quantile_ms(&s.response, 0.5), 3),
            fixed(quantile_ms(&s.response, 0.9), 3),
            fixed(quantile_ms(&s.response, 0.99), 3),
            fixed(quantile_ms(&s.response, 1.0), 3)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_text_is_exact() {
        let mut a = ServerStats {
            connections: 3,
            requests: 6,
            ..Default::default()
        };
        a.replies_by_class[2] = 5;
        a.replies_by_class[4] = 1;
        a.errors[3] = 1;
        // Values below 2048 µs are exact in the histogram.
        for us in [1000, 1500, 2000] {
            a.response_sum_us += us;
            let _ = a.response.record(us);
        }
        let b = ServerStats::default();
        let mut out = Vec::new();
        write_servers(
            &mut out,
            &[a, b],
            &["127.0.0.1:80".into(), "[::1]:80".into()],
            2.0,
        )
        .expect("write");
        assert_eq!(
            String::from_utf8(out).expect("utf8"),
            "\n\
             Server 127.0.0.1:80: connections 3 requests 6 replies 6 (request rate 3.0 req/s, reply rate 3.0 replies/s)\n\
             Server 127.0.0.1:80: status 1xx=0 2xx=5 3xx=0 4xx=1 5xx=0 errors 1 (client-timo 0 socket-timo 0 connrefused 0 connreset 1 fd-unavail 0 addrunavail 0 ftab-full 0 other 0)\n\
             Server 127.0.0.1:80: response [ms] avg 1.5 p50 1.500 p90 2.000 p99 2.000 max 2.000\n\
             Server [::1]:80: connections 0 requests 0 replies 0 (request rate 0.0 req/s, reply rate 0.0 replies/s)\n\
             Server [::1]:80: status 1xx=0 2xx=0 3xx=0 4xx=0 5xx=0 errors 0 (client-timo 0 socket-timo 0 connrefused 0 connreset 0 fd-unavail 0 addrunavail 0 ftab-full 0 other 0)\n\
             Server [::1]:80: response [ms] avg 0.0 p50 0.000 p90 0.000 p99 0.000 max 0.000\n"
        );
    }
}
