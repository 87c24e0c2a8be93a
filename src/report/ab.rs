//! The reports of `rshperf ab` and `rshperf lb`: ab's result block, line for line
//! (ApacheBench 2.3 `output_results`: labels, alignment, units, the `Connection Times
//! (ms)` table with its reliability warnings, the `Percentage of the requests served`
//! table), lb's per-server block (the ab block plus lb's `Time per request:
//! min/avg/max [msec]` line), and ab's percentile CSV (`-e`).
//!
//! Pure: formats an `AbServer` (`stats::ab`) and the facts of the run given by the
//! caller, writing to the given writer. Called by the ab and lb front ends (`src/ab`).

use std::io::{self, Write};

use crate::cfmt::fixed;
use crate::stats::ab::{round_ms, AbServer, AbTimes};

/// What ab prints about a server besides what was measured.
#[derive(Debug, Clone, Copy)]
pub struct AbTarget<'a> {
    /// `Server Hostname:` (the URL's host, IPv6 without brackets).
    pub hostname: &'a str,
    /// `Server Port:`.
    pub port: u16,
    /// `Document Path:`.
    pub path: &'a str,
    /// The TLS server name sent (`TLS Server Name:`), for HTTPS to a host name.
    pub tls_sni: Option<&'a str>,
}

/// The options that change ab's report.
#[derive(Debug, Clone, Copy)]
pub struct AbLayout {
    /// `-c`.
    pub concurrency: u64,
    /// Not `-l`: count Length failures and print the document length.
    pub check_length: bool,
    /// `-k`: print `Keep-Alive requests`.
    pub keep_alive: bool,
    /// `-p`/`-u`: print the bytes sent.
    pub send_body: bool,
    /// Not `-d`: print the percentage table.
    pub percentiles: bool,
    /// Not `-S`: print mean, sd and median, and the reliability warnings.
    pub confidence: bool,
    /// lb: add `Time per request: min/avg/max [msec]` after `Transfer rate`.
    pub lb_line: bool,
}

/// ab's percentiles (the last is the longest request).
const PERCENTS: [u64; 8] = [50, 66, 75, 80, 90, 95, 98, 99];

/// Writes the block of one server, as ab prints it after `\n\n` (the caller writes
/// those), for a run of `seconds`.
pub fn write_ab_block<W: Write>(
    out: &mut W,
    s: &AbServer,
    t: &AbTarget<'_>,
    l: &AbLayout,
    seconds: f64,
) -> io::Result<()> {
    writeln!(
        out,
        "Server Software:        {}",
        s.software.as_deref().unwrap_or("")
    )?;
    writeln!(out, "Server Hostname:        {}", t.hostname)?;
    writeln!(out, "Server Port:            {}", t.port)?;
    if let Some(p) = &s.tls_protocol {
        writeln!(out, "SSL/TLS Protocol:       {p}")?;
    }
    if let Some(k) = &s.tls_temp_key {
        writeln!(out, "Server Temp Key:        {k}")?;
    }
    if let Some(name) = t.tls_sni {
        writeln!(out, "TLS Server Name:        {name}")?;
    }
    writeln!(out)?;
    writeln!(out, "Document Path:          {}", t.path)?;
    if l.check_length {
        writeln!(
            out,
            "Document Length:        {} bytes",
            s.doc_length.unwrap_or(0)
        )?;
    } else {
        writeln!(out, "Document Length:        Variable")?;
    }
    writeln!(out)?;
    let done = s.complete;
    let f = &s.failed;
    let length = if l.check_length { f.length } else { 0 };
    writeln!(out, "Concurrency Level:      {}", l.concurrency)?;
    writeln!(out, "Time taken for tests:   {} seconds", fixed(seconds, 3))?;
    writeln!(out, "Complete requests:      {done}")?;
    writeln!(
        out,
        "Failed requests:        {}",
        s.failed_total(l.check_length)
    )?;
    if s.failed_total(l.check_length) > 0 {
        writeln!(
            out,
            "   (Connect: {}, Receive: {}, Length: {length}, Exceptions: {})",
            f.connect, f.receive, f.exceptions
        )?;
    }
    if s.non_2xx > 0 {
        writeln!(out, "Non-2xx responses:      {}", s.non_2xx)?;
    }
    if l.keep_alive {
        writeln!(out, "Keep-Alive requests:    {}", s.keep_alive)?;
    }
    writeln!(out, "Total transferred:      {} bytes", s.bytes_read)?;
    if l.send_body {
        writeln!(out, "Total body sent:        {}", s.bytes_sent)?;
    }
    writeln!(out, "HTML transferred:       {} bytes", s.body_read)?;
    if seconds != 0.0 && done > 0 {
        let n = done as f64;
        writeln!(
            out,
            "Requests per second:    {} [#/sec] (mean)",
            fixed(n / seconds, 2)
        )?;
        writeln!(
            out,
            "Time per request:       {} [ms] (mean)",
            fixed(l.concurrency as f64 * seconds * 1000.0 / n, 3)
        )?;
        writeln!(
            out,
            "Time per request:       {} [ms] (mean, across all concurrent requests)",
            fixed(seconds * 1000.0 / n, 3)
        )?;
        let read = s.bytes_read as f64;
        writeln!(
            out,
            "Transfer rate:          {} [Kbytes/sec] received",
            fixed(read / 1024.0 / seconds, 2)
        )?;
        if l.send_body {
            let sent = s.bytes_sent as f64;
            writeln!(
                out,
                "                        {} kb/s sent",
                fixed(sent / 1024.0 / seconds, 2)
            )?;
            writeln!(
                out,
                "                        {} kb/s total",
                fixed((read + sent) / 1024.0 / seconds, 2)
            )?;
        }
        if l.lb_line {
            let total = &s.total;
            writeln!(
                out,
                "Time per request:       {}/{}/{} min/avg/max [msec]",
                fixed(total.min() as f64 / 1000.0, 2),
                fixed(total.sum_us as f64 / 1000.0 / n, 2),
                fixed(total.max_us as f64 / 1000.0, 2)
            )?;
        }
    }
    if done > 0 {
        write_times(out, s, l)?;
        if l.percentiles && done > 1 {
            writeln!(
                out,
                "\nPercentage of the requests served within a certain time (ms)"
            )?;
            for p in PERCENTS {
                writeln!(out, "  {p}%  {:5}", s.total.rank_ms(done * p / 100))?;
            }
            writeln!(
                out,
                " 100%  {:5} (longest request)",
                round_ms(s.total.max_us)
            )?;
        }
    }
    Ok(())
}

/// The `Connection Times (ms)` table (and, with confidence, ab's warnings).
fn write_times<W: Write>(out: &mut W, s: &AbServer, l: &AbLayout) -> io::Result<()> {
    let rows: [(&str, &AbTimes, &str); 4] = [
        ("Connect:    ", &s.connect, "the initial connection time"),
        ("Processing: ", &s.processing, "the processing time"),
        ("Waiting:    ", &s.waiting, "the waiting time"),
        ("Total:      ", &s.total, "the total time"),
    ];
    writeln!(out, "\nConnection Times (ms)")?;
    if !l.confidence {
        writeln!(out, "              min   avg   max")?;
        for (label, t, _) in rows {
            writeln!(
                out,
                "{label}{:5} {:5}{:5}",
                round_ms(t.min()),
                round_ms(t.mean_us()),
                round_ms(t.max_us)
            )?;
        }
        return Ok(());
    }
    writeln!(out, "              min  mean[+/-sd] median   max")?;
    for (label, t, _) in rows {
        writeln!(
            out,
            "{label}{:5} {:4} {:>5} {:6} {:7}",
            round_ms(t.min()),
            round_ms(t.mean_us()),
            fixed(t.sd_ms(), 1),
            t.median_ms(),
            round_ms(t.max_us)
        )?;
    }
    for (_, t, what) in rows {
        let (mean, median, sd) = (round_ms(t.mean_us()), t.median_ms(), t.sd_ms());
        let d = (mean as f64 - median as f64).abs();
        if d > 2.0 * sd {
            writeln!(
                out,
                "ERROR: The median and mean for {what} are more than twice the standard\n       \
                 deviation apart. These results are NOT reliable."
            )?;
        } else if d > sd {
            writeln!(
                out,
                "WARNING: The median and mean for {what} are not within a normal deviation\n        \
                 These results are probably not that reliable."
            )?;
        }
    }
    Ok(())
}

/// ab's `-e` file: `Percentage served,Time in ms`, then the total time (ms, three
/// decimals) below which each percentage 0–100 of the requests was served. With
/// several servers, a column per server (an rshperf extension; `names` head them).
pub fn write_percentile_csv<W: Write>(
    out: &mut W,
    servers: &[&AbServer],
    names: &[&str],
) -> io::Result<()> {
    if servers.len() == 1 {
        writeln!(out, "Percentage served,Time in ms")?;
    } else {
        write!(out, "Percentage served")?;
        for name in names {
            let head = format!("Time in ms ({name})");
            if head.contains([',', '"']) {
                write!(out, ",\"{}\"", head.replace('"', "\"\""))?;
            } else {
                write!(out, ",{head}")?;
            }
        }
        writeln!(out)?;
    }
    for i in 0..=100u64 {
        write!(out, "{i}")?;
        for s in servers {
            let n = s.total.n;
            // ab: rank ⌊0.5 + n·i/100⌋, the longest for 100 (kept inside the data).
            let r = match i {
                0 => 0,
                100 => n.saturating_sub(1),
                _ => ((0.5 + n as f64 * i as f64 / 100.0) as u64).min(n.saturating_sub(1)),
            };
            write!(out, ",{}", fixed(s.total_rank_us(r) as f64 / 1000.0, 3))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::ab::{AbFailure, CallTimes, Completed};

    fn server(times: &[(u64, u64, u64)]) -> AbServer {
        let mut s = AbServer {
            software: Some("nginx/1.22.1".into()),
            ..AbServer::default()
        };
        for &(connect_us, total_us, wait_us) in times {
            s.on_complete(&Completed {
                times: CallTimes {
                    connect_us,
                    total_us,
                    wait_us,
                },
                status: 200,
                header_bytes: 229,
                body_bytes: 6,
                sent_bytes: 82,
                keep_alive: false,
                end_us: 0,
                ..Completed::default()
            });
        }
        s
    }

    fn layout() -> AbLayout {
        AbLayout {
            concurrency: 2,
            check_length: true,
            keep_alive: false,
            send_body: false,
            percentiles: true,
            confidence: true,
            lb_line: false,
        }
    }

    fn text(s: &AbServer, t: &AbTarget<'_>, l: &AbLayout, seconds: f64) -> String {
        let mut out = Vec::new();
        write_ab_block(&mut out, s, t, l, seconds).expect("write");
        String::from_utf8(out).expect("utf8")
    }

    const LOCAL: AbTarget<'static> = AbTarget {
        hostname: "127.0.0.1",
        port: 8080,
        path: "/",
        tls_sni: None,
    };

    #[test]
    fn block_is_abs_layout() {
        let s = server(&[
            (200, 1_100, 400),
            (300, 1_600, 500),
            (400, 2_400, 900),
            (100, 900, 300),
            (500, 6_000, 4_000),
        ]);
        assert_eq!(
            text(&s, &LOCAL, &layout(), 0.5),
            "Server Software:        nginx/1.22.1
Server Hostname:        127.0.0.1
Server Port:            8080

Document Path:          /
Document Length:        6 bytes

Concurrency Level:      2
Time taken for tests:   0.500 seconds
Complete requests:      5
Failed requests:        0
Total transferred:      1175 bytes
HTML transferred:       30 bytes
Requests per second:    10.00 [#/sec] (mean)
Time per request:       200.000 [ms] (mean)
Time per request:       100.000 [ms] (mean, across all concurrent requests)
Transfer rate:          2.29 [Kbytes/sec] received

Connection Times (ms)
              min  mean[+/-sd] median   max
Connect:        0    0   0.2      0       1
Processing:     1    2   2.0      2       6
Waiting:        0    1   1.6      1       4
Total:          1    2   2.1      2       6

Percentage of the requests served within a certain time (ms)
  50%      2
  66%      2
  75%      2
  80%      6
  90%      6
  95%      6
  98%      6
  99%      6
 100%      6 (longest request)
"
        );
    }

    #[test]
    fn failures_keep_alive_body_tls_and_warnings() {
        let mut s = server(&[(0, 1_000, 500), (0, 1_000, 500), (0, 9_000, 8_000)]);
        s.on_complete(&Completed {
            times: CallTimes {
                connect_us: 0,
                total_us: 1_000,
                wait_us: 500,
            },
            status: 404,
            header_bytes: 100,
            body_bytes: 10,
            sent_bytes: 82,
            keep_alive: true,
            ..Completed::default()
        });
        s.on_failure(AbFailure::Connect, 2, 0);
        s.on_failure(AbFailure::Exception, 1, 0);
        s.tls_protocol = Some("TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256".into());
        s.tls_temp_key = Some("X25519 253 bits".into());
        let t = AbTarget {
            hostname: "localhost",
            port: 8443,
            path: "/x?y",
            tls_sni: Some("localhost"),
        };
        let l = AbLayout {
            concurrency: 1,
            keep_alive: true,
            send_body: true,
            percentiles: false,
            ..layout()
        };
        assert_eq!(
            text(&s, &t, &l, 2.0),
            "Server Software:        nginx/1.22.1
Server Hostname:        localhost
Server Port:            8443
SSL/TLS Protocol:       TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256
Server Temp Key:        X25519 253 bits
TLS Server Name:        localhost

Document Path:          /x?y
Document Length:        6 bytes

Concurrency Level:      1
Time taken for tests:   2.000 seconds
Complete requests:      4
Failed requests:        4
   (Connect: 2, Receive: 0, Length: 1, Exceptions: 1)
Non-2xx responses:      1
Keep-Alive requests:    1
Total transferred:      815 bytes
Total body sent:        328
HTML transferred:       28 bytes
Requests per second:    2.00 [#/sec] (mean)
Time per request:       500.000 [ms] (mean)
Time per request:       500.000 [ms] (mean, across all concurrent requests)
Transfer rate:          0.40 [Kbytes/sec] received
                        0.16 kb/s sent
                        0.56 kb/s total

Connection Times (ms)
              min  mean[+/-sd] median   max
Connect:        0    0   0.0      0       0
Processing:     1    3   4.0      1       9
Waiting:        1    2   3.8      1       8
Total:          1    3   4.0      1       9
"
        );
        // -l: Length failures are not failures, the length is variable.
        let l = AbLayout {
            check_length: false,
            ..l
        };
        let variable = text(&s, &t, &l, 2.0);
        assert!(variable.contains("Document Length:        Variable\n"));
        assert!(variable.contains(
            "Failed requests:        3\n   (Connect: 2, Receive: 0, Length: 0, Exceptions: 1)\n"
        ));
        // The warnings: medians far from the means (expected text from ab's formulas).
        let skewed = server(&[
            (499, 2_000, 100),
            (499, 2_000, 100),
            (499, 2_000, 100),
            (600, 2_000, 1_900),
        ]);
        let l = AbLayout {
            percentiles: false,
            ..layout()
        };
        let warned = text(&skewed, &LOCAL, &l, 1.0);
        assert!(
            warned.ends_with(
                "Connection Times (ms)
              min  mean[+/-sd] median   max
Connect:        0    1   0.1      0       1
Processing:     1    1   0.1      2       2
Waiting:        0    1   0.9      0       2
Total:          2    2   0.0      2       2
ERROR: The median and mean for the initial connection time are more than twice the standard
       deviation apart. These results are NOT reliable.
ERROR: The median and mean for the processing time are more than twice the standard
       deviation apart. These results are NOT reliable.
WARNING: The median and mean for the waiting time are not within a normal deviation
        These results are probably not that reliable.
"
            ),
            "{warned}"
        );
    }

    #[test]
    fn no_confidence_nothing_done_and_lb_line() {
        let s = server(&[(1_000, 3_000, 1_500), (2_000, 5_000, 1_000)]);
        let l = AbLayout {
            confidence: false,
            percentiles: false,
            lb_line: true,
            ..layout()
        };
        let t = text(&s, &LOCAL, &l, 1.0);
        assert!(
            t.ends_with(
                "Transfer rate:          0.46 [Kbytes/sec] received
Time per request:       3.00/4.00/5.00 min/avg/max [msec]

Connection Times (ms)
              min   avg   max
Connect:        1     2    2
Processing:     2     3    3
Waiting:        1     1    2
Total:          3     4    5
"
            ),
            "{t}"
        );
        let mut none = AbServer::default();
        none.on_failure(AbFailure::Connect, 3, 0);
        let t = text(&none, &LOCAL, &layout(), 0.001);
        assert!(t.starts_with("Server Software:        \n"), "{t}");
        assert!(
            t.ends_with(
                "Document Length:        0 bytes

Concurrency Level:      2
Time taken for tests:   0.001 seconds
Complete requests:      0
Failed requests:        3
   (Connect: 3, Receive: 0, Length: 0, Exceptions: 0)
Total transferred:      0 bytes
HTML transferred:       0 bytes
"
            ),
            "{t}"
        );
    }

    #[test]
    fn percentile_csv_is_abs_format() {
        let s = server(&[(0, 1_234, 0), (0, 2_000, 0), (0, 500, 0)]);
        let mut out = Vec::new();
        write_percentile_csv(&mut out, &[&s], &["a"]).expect("write");
        let t = String::from_utf8(out).expect("utf8");
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 102);
        assert_eq!(lines[0], "Percentage served,Time in ms");
        assert_eq!(lines[1], "0,0.500");
        assert_eq!(lines[2], "1,0.500");
        // ⌊0.5 + 3·50/100⌋ = 2: the largest.
        assert_eq!(lines[51], "50,2.000");
        assert_eq!(lines[17], "16,0.500");
        assert_eq!(lines[18], "17,1.234");
        assert_eq!(lines[101], "100,2.000");
        let mut out = Vec::new();
        write_percentile_csv(&mut out, &[&s, &s], &["a", "b,\"c\""]).expect("write");
        let t = String::from_utf8(out).expect("utf8");
        let head = "Percentage served,Time in ms (a),\"Time in ms (b,\"\"c\"\")\"\n";
        assert!(t.starts_with(&format!("{head}0,0.500,0.500\n")), "{t}");
    }
}
