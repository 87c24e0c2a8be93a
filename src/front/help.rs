//! The `-h`/`--help` text of an httperf-style run.
//!
//! Owns what `--help` prints after httperf's usage lines (those come first,
//! unchanged, from `cli::usage`, because scripts may grep them): what each group of
//! options does, rshperf's extensions, and the subcommands with one line each (the
//! list it is given, `dispatch::COMMANDS`, so a new subcommand is listed when it is
//! registered). It does not parse options (`cli`), run `rshperf help [CMD]`
//! (`dispatch`) or document options in full (man/rshperf.1). Called by
//! `dispatch::help_text` when `cli::parse` returns `Command::Help`.

use crate::front::cli;
use crate::front::subcommand::Subcommand;

/// What follows the usage lines.
const BODY: &str = "\
rshperf is httperf, reimplemented: an open-loop HTTP load generator. It starts
connections at --rate per second (--rate 0: one after another), sends requests,
and prints httperf's report on stdout.

  rshperf http://127.0.0.1:8080/ --rate 100 --num-conns 500
  rshperf --server 127.0.0.1 --port 8080 --uri / --rate 100 --num-conns 500
  rshperf http://127.0.0.1:8080/ --rate 100 --runtime 30     (for 30 seconds)

Options (httperf's; long options may be abbreviated to a unique prefix):
  target     a URL argument (http:// or https://), or --server, --port, --uri;
             --servers FILE (several), --server-name (Host:), --myaddr (source)
  load       --rate or --period (arrivals/s), --num-conns (connections),
             --num-calls (requests per connection), --burst-length (pipelining),
             --runtime (seconds, or 90s, 2m; without --num-conns: arrivals
             until then), --max-connections, --max-piped-calls
  requests   --method, --http-version, --add-header, --add-header-file,
             --no-host-hdr, --wlog (URIs from a file), --wset (working set)
  sessions   --wsess, --wsesslog (sessions from a file), --session-cookies,
             --think-timeout, --retry-on-failure, --failure-status
  timeouts   --timeout (seconds for connect and each reply, or 500ms),
             --think-timeout
  sockets    --hog (ports of its own), --close-with-reset, --send-buffer,
             --recv-buffer
  TLS        --ssl (or an https:// URL), --ssl-protocol, --ssl-ciphers,
             --ssl-verify, --ssl-ca-file, --ssl-ca-path, --ssl-certificate,
             --ssl-key, --ssl-no-reuse, --tls-server-name; with
             --http-version 3: --quic-0rtt (0-RTT requests),
             --quic-idle-timeout (seconds, default 30)
  output     -v (more), --print-request, --print-reply (trace messages),
             --periodic-stats, -V (version)

rshperf's extensions (the classic report stays as httperf prints it):
  --percentiles        latency percentiles after the report (also -v)
  --json FILE          the whole run as JSON (- = on stdout, not the report)
  --csv FILE           append one CSV row per run (rate sweeps)
  --timeline FILE      the run second by second, as CSV
  --request-log FILE   one record per call: JSON lines, .csv CSV, .bin binary
                       (--request-log-format; `rshperf log` converts it)
  --html FILE          a self-contained HTML report with charts
  --fail-on EXPR       exit status 3 when a threshold is breached ('p99>50ms')
  --junit FILE         JUnit XML, one test case per --fail-on threshold
  --threads N          N engines on one arrival schedule
  --partition I/N      one part of a multi-process or multi-machine run,
  --start-at T|+S      started together; `rshperf merge` joins the parts
  --progress           a progress line on stderr (default: on a terminal)
  --overload POLICY    when the client falls behind: degrade (default: spread
                       catch-up, cap connections in flight) or queue (httperf)
  --spin auto|off|US   wake early and spin to each arrival (default auto)
  --pin, --realtime    engine threads on cores of their own, SCHED_FIFO
  --io BACKEND         engine I/O: epoll (default), uring (io_uring) or auto
  --call-rate R        R requests/s over the --num-conns keep-alive connections,
                       timed from the schedule (wrk2's model); R = profile: at
                       --rate-profile's rate
  --rate-profile SEGS  the rate over time, e.g. ramp:100..2000/60s,hold:2000/2m
                       (also step:FROM..TO+INC/EACH, sine:MEAN~AMP/PERIOD/LEN);
                       the run lasts the profile
  --body-file F        request body from a file (POST; --content-type T)
  --body-lines F       a body per call, one JSON a line (--body-order
                       round-robin, or random:SEED)
  --header-file F      'Name: value' lines added to every request
  --unix-socket PATH   connect over a unix socket (--server names the Host:)
  --metrics-listen A:P live Prometheus metrics (--metrics-linger S afterwards)
  --stream FORMAT      events inside replies (sse|ndjson|lines|auto): time to
                       first event, gaps, events/s (--stream-gap-timeout S)

Commands (rshperf help CMD, or rshperf CMD --help, for their options):
";

/// The closing lines.
const TAIL: &str = "
Exit status: 0 when the test ran, 1 for bad options or start-up errors, 3 when a
--fail-on threshold was breached. Warnings on stderr say when a run is probably
not what was meant. The manual: man -l man/rshperf.1 (or man rshperf).
";

/// The complete `-h`/`--help` text: httperf's usage lines (`cli::usage`, unchanged),
/// a blank line, the description above, one line per subcommand of `commands`.
pub(crate) fn text(commands: &[Subcommand]) -> String {
    let mut s = cli::usage();
    s.push('\n');
    s.push_str(BODY);
    for c in commands {
        s.push_str(&format!("  {:<8} {}\n", c.name, c.about));
    }
    s.push_str(TAIL);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::dispatch::COMMANDS;

    #[test]
    fn usage_lines_come_first_and_every_subcommand_has_a_line() {
        let t = text(COMMANDS);
        assert!(t.starts_with(&format!("{}\nrshperf is httperf", cli::usage())));
        for c in COMMANDS {
            assert!(
                t.contains(&format!("\n  {:<8} {}\n", c.name, c.about)),
                "{}",
                c.name
            );
        }
        assert!(t.ends_with("(or man rshperf).\n"));
        // What this file writes fits 80 columns; a command's line (its `about`, from
        // `subcommand`) fits the 100 of the subcommands' own help.
        for line in BODY.lines().chain(TAIL.lines()) {
            assert!(line.chars().count() <= 80, "too wide: {line}");
        }
        for c in COMMANDS {
            assert!(11 + c.about.chars().count() <= 100, "too wide: {}", c.about);
        }
    }
}
