//! The reports of `rshperf ab` and `rshperf lb`: ab's result block, line for line
//! (ApacheBench 2.3 `output_results`: labels, alignment, units, the `Connection Times
//! (ms)` table with its reliability warnings, the `Percentage of the requests served`
//! table), lb's per-server block (the ab block plus lb's `Time per request:
//! min/avg/max [msec]` line), and ab's percentile CSV (`-e`).
//!
//! Pure: formats an `AbServer` (`stats::ab`) and the facts of the run given by the
//! caller, writing to the given writer. Called by the ab and lb front ends (`src/ab`).

use std::io::{self, Write};

use crate::model::stats::ab::{round_ms, AbServer, AbTimes};
use crate::wire::cfmt::fixed;

/// What ab prints about a server besides what was measured.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AbTarget<'a> {
    /// `Server Hostname:` (the URL's host, IPv6 without brackets).
    pub(crate) hostname: &'a str,
    /// `Server Port:`.
    pub(crate) port: u16,
    /// `Document Path:`.
    pub(crate) path: &'a str,
    /// The TLS server name sent (`TLS Server Name:`), for HTTPS to a host name.
    pub(crate) tls_sni: Option<&'a str>,
}

/// The options that change ab's report.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AbLayout {
    /// `-c`.
    pub(crate) concurrency: u64,
    /// Not `-l`: count Length failures and print the document length.
    pub(crate) check_length: bool,
    /// `-k`: print `Keep-Alive requests`.
    pub(crate) keep_alive: bool,
    /// `-p`/`-u`: print the bytes sent.
    pub(crate) send_body: bool,
    /// Not `-d`: print the percentage table.
    pub(crate) percentiles: bool,
    /// Not `-S`: print mean, sd and median, and the reliability warnings.
    pub(crate) confidence: bool,
    /// lb: add `Time per request: min/avg/max [msec]` after `Transfer rate`.
    pub(crate) lb_line: bool,
}

/// ab's percentiles (the last is the longest request).
const PERCENTS: [u64; 8] = [50, 66, 75, 80, 90, 95, 98, 99];

/// Writes the block of one server, as ab prints it after `\n\n` (the caller writes
/// those), for a run of `seconds`.
pub(crate) fn write_ab_block<W: Write>(
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
pub(crate) fn write_percentile_csv<W: Write>(
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
#[path = "ab_tests.rs"]
mod tests;
