//! The `--help` text and `rshperf help [CMD]`.
//!
//! Owns what `-h`/`--help` prints after httperf's usage lines (those come first,
//! unchanged, from `cli::usage`, because scripts may grep them): what each group of
//! options does, rshperf's extensions, and the subcommands with one line each. Also
//! owns `rshperf help CMD`, which runs the subcommand's own help (`rshperf CMD
//! --help`, or `-h` for the single-letter front ends `ab` and `lb`). It does not parse
//! options (`cli`) or document them in full (man/rshperf.1). Called by `cli::parse`
//! (the text) and `lib::run` (`help`).

use std::io::Write;

use crate::cli;

/// rshperf's subcommands: name and one line of description, in the order `--help`
/// lists them.
pub const SUBCOMMANDS: &[(&str, &str)] = &[
    (
        "serve",
        "a small, fast HTTP/1.1 server to aim at (200 with N bytes)",
    ),
    (
        "demo",
        "that server in this process and a test run against it",
    ),
    (
        "merge",
        "the report of a whole run from its --partition parts' --json",
    ),
    (
        "sweep",
        "capacity sweep: walk or search rates, find the knee",
    ),
    (
        "ab",
        "ApacheBench-compatible front end (ab's options and report)",
    ),
    (
        "lb",
        "lb-compatible front end: several servers, one report each",
    ),
];

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
             --runtime (seconds; without --num-conns: arrivals until then),
             --max-connections, --max-piped-calls
  requests   --method, --http-version, --add-header, --add-header-file,
             --no-host-hdr, --wlog (URIs from a file), --wset (working set)
  sessions   --wsess, --wsesslog (sessions from a file), --session-cookies,
             --think-timeout, --retry-on-failure, --failure-status
  timeouts   --timeout (seconds for connect and each reply), --think-timeout
  sockets    --hog (ports of its own), --close-with-reset, --send-buffer,
             --recv-buffer
  TLS        --ssl (or an https:// URL), --ssl-protocol, --ssl-ciphers,
             --ssl-verify, --ssl-ca-file, --ssl-ca-path, --ssl-certificate,
             --ssl-key, --ssl-no-reuse, --tls-server-name
  output     -v (more), --print-request, --print-reply (trace messages),
             --periodic-stats, -V (version)

rshperf's extensions (the classic report stays as httperf prints it):
  --percentiles        latency percentiles after the report (also -v)
  --json FILE          the whole run as JSON (- = on stdout, not the report)
  --csv FILE           append one CSV row per run (rate sweeps)
  --fail-on EXPR       exit status 3 when a threshold is breached ('p99>50ms')
  --threads N          N engines on one arrival schedule
  --partition I/N      one part of a multi-process or multi-machine run,
  --start-at T|+S      started together; `rshperf merge` joins the parts
  --progress           a progress line on stderr (default: on a terminal)

Subcommands (rshperf help CMD, or rshperf CMD --help, for their options):
";

/// The closing lines.
const TAIL: &str = "
Exit status: 0 when the test ran, 1 for bad options or start-up errors, 3 when a
--fail-on threshold was breached. Warnings on stderr say when a run is probably
not what was meant. The manual: man -l man/rshperf.1 (or man rshperf).
";

/// The complete `-h`/`--help` text: httperf's usage lines (`cli::usage`, unchanged),
/// a blank line, the description above, one line per subcommand.
pub fn text() -> String {
    let mut s = cli::usage();
    s.push('\n');
    s.push_str(BODY);
    for (name, what) in SUBCOMMANDS {
        s.push_str(&format!("  {name:<8} {what}\n"));
    }
    s.push_str(TAIL);
    s
}

/// `rshperf help [CMD]` (`args[0]` is `help`): the full help, or CMD's own; returns
/// the exit status.
pub fn help_main(args: &[String]) -> i32 {
    let Some(cmd) = args.get(1) else {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text().as_bytes());
        let _ = out.flush();
        return 0;
    };
    if !SUBCOMMANDS.iter().any(|(name, _)| name == cmd) {
        let names: Vec<&str> = SUBCOMMANDS.iter().map(|(n, _)| *n).collect();
        eprintln!(
            "{}: help: no subcommand '{cmd}' (subcommands: {}; `{} --help` lists the options)",
            cli::PROG,
            names.join(", "),
            cli::PROG
        );
        return 1;
    }
    // ab and lb parse single letters as the tools they imitate do.
    let flag = if matches!(cmd.as_str(), "ab" | "lb") {
        "-h"
    } else {
        "--help"
    };
    crate::run(vec![cli::PROG.to_string(), cmd.clone(), flag.to_string()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_lines_come_first_and_every_subcommand_has_a_line() {
        let t = text();
        assert!(t.starts_with(&format!("{}\nrshperf is httperf", cli::usage())));
        for (name, what) in SUBCOMMANDS {
            assert!(t.contains(&format!("\n  {name:<8} {what}\n")), "{name}");
        }
        assert!(t.ends_with("(or man rshperf).\n"));
        for line in t.lines() {
            // Tabs in the usage lines count 8 columns.
            let width = line.replace('\t', "        ").chars().count();
            assert!(width <= 88, "too wide ({width}): {line}");
        }
        for line in t[cli::usage().len()..].lines() {
            assert!(line.chars().count() <= 80, "too wide: {line}");
        }
    }
}
