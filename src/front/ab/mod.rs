//! The ab and lb front ends: `rshperf ab [options] URL [URL …]` (ApacheBench 2.3's
//! command line and report) and `rshperf lb [options] URL … | -f FILE` (lb 0.2's).
//!
//! Owns what both share: the `Bench` their letters describe, running it through
//! `execute::execute_with` (one engine, a closed-loop group per server, ab's figures
//! recorded per request), and printing: ab's banner, progress and result block per
//! server; lb's banner, started/stopped lines and per-server blocks; the `-g` and `-e`
//! files. Letter parsing is in `args` (ab) and `lb`, both on one scanner (`front::getopt`),
//! URLs in `url`, the mapping onto `Config` and `Workload` in `setup`, the files in
//! `files`, the text in `output::ab`.
//! Called by `crate::run` for the `ab` and `lb` subcommands; returns the exit status.

pub(crate) mod args;
mod error;
pub(crate) mod files;
pub(crate) mod lb;
pub(crate) mod setup;
pub(crate) mod url;

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::engine::event_loop::CallObserver;
use crate::engine::execute::{self, ExecOptions, Hooks};
use crate::model::call::Body;
use crate::model::config::SslProtocol;
use crate::model::judge;
use crate::model::run::RunResult;
use crate::model::stats::ab::AbServer;
use crate::output::ab::{write_ab_block, write_percentile_csv, AbLayout, AbTarget};
use crate::output::advice;

/// Which front end a `Bench` came from (they print differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    /// `rshperf ab`.
    Ab,
    /// `rshperf lb`.
    Lb,
}

/// A benchmark as ab's or lb's letters describe it.
#[derive(Debug, Clone)]
pub(crate) struct Bench {
    /// The front end.
    pub(crate) tool: Tool,
    /// The servers, in command-line (or file) order.
    pub(crate) urls: Vec<url::Url>,
    /// Requests per server (`-n`; `u64::MAX` for lb's unlimited `-n 0`).
    pub(crate) requests: u64,
    /// Requests in flight per server (`-c`).
    pub(crate) concurrency: u64,
    /// `-t`, seconds.
    pub(crate) time_limit: Option<f64>,
    /// Per-request timeout, seconds (ab's `-s`, lb's `-r`; 0 for none).
    pub(crate) timeout: f64,
    /// `-k`.
    pub(crate) keep_alive: bool,
    /// The method (`-i`, `-p`, `-u`, `-m`).
    pub(crate) method: String,
    /// The `-p`/`-u` file, read once.
    pub(crate) body: Option<Body>,
    /// `-T`.
    pub(crate) content_type: Option<String>,
    /// `-H` lines, in order.
    pub(crate) headers: Vec<String>,
    /// `-C` values, in order.
    pub(crate) cookies: Vec<String>,
    /// `Authorization:`/`Proxy-Authorization:` lines (`-A`, `-P`, lb's `user:pw@`).
    pub(crate) auth: Vec<String>,
    /// Not `-l`.
    pub(crate) check_length: bool,
    /// Not `-d`.
    pub(crate) percentiles: bool,
    /// Not `-S`.
    pub(crate) confidence: bool,
    /// `-q`.
    pub(crate) quiet: bool,
    /// `-v`.
    pub(crate) verbosity: u32,
    /// `-g` file.
    pub(crate) gnuplot: Option<String>,
    /// `-e` file.
    pub(crate) csv: Option<String>,
    /// `-B` source address.
    pub(crate) bind: Option<String>,
    /// `-b` socket buffer size.
    pub(crate) window: Option<u32>,
    /// `-X` proxy host and port.
    pub(crate) proxy: Option<(String, u16)>,
    /// `-f`.
    pub(crate) tls_protocol: Option<SslProtocol>,
    /// `-Z`.
    pub(crate) ciphers: Option<String>,
    /// `-E` (certificate chain and key in one file).
    pub(crate) cert: Option<String>,
    /// `-I`: no SNI.
    pub(crate) no_sni: bool,
    /// Connect retries per request (lb's `-m`).
    pub(crate) retries: u8,
    /// lb's `-s`, seconds.
    pub(crate) start_delay: Option<f64>,
    /// lb's `-f`.
    pub(crate) servers_file: Option<String>,
}

impl Bench {
    /// ab's defaults (the parsers set the rest).
    pub(crate) fn new(tool: Tool) -> Bench {
        Bench {
            tool,
            urls: Vec::new(),
            requests: 1,
            concurrency: 1,
            time_limit: None,
            timeout: 0.0,
            keep_alive: false,
            method: "GET".into(),
            body: None,
            content_type: None,
            headers: Vec::new(),
            cookies: Vec::new(),
            auth: Vec::new(),
            check_length: true,
            percentiles: true,
            confidence: true,
            quiet: false,
            verbosity: 0,
            gnuplot: None,
            csv: None,
            bind: None,
            window: None,
            proxy: None,
            tls_protocol: None,
            ciphers: None,
            cert: None,
            no_sni: false,
            retries: 0,
            start_delay: None,
            servers_file: None,
        }
    }

    /// The program name in messages.
    fn prog(&self) -> &'static str {
        match self.tool {
            Tool::Ab => "rshperf ab",
            Tool::Lb => lb::PROG,
        }
    }
}

/// Reads a `-p`/`-u` file once (the same shared body as `--body-file`).
pub(crate) fn read_body(path: &str) -> io::Result<Body> {
    crate::model::call::read_body(path)
}

/// How a front end ends without (or after) a run: exit status and texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exit {
    /// Exit status.
    pub(crate) code: i32,
    /// Printed on stdout.
    pub(crate) stdout: String,
    /// Printed on stderr.
    pub(crate) stderr: String,
}

impl Exit {
    /// Exit 0 after printing `text` on stdout (help, version).
    pub(crate) fn stdout(text: String) -> Exit {
        Exit {
            code: 0,
            stdout: text,
            stderr: String::new(),
        }
    }

    /// Prints the texts; returns the status.
    fn print(self) -> i32 {
        let _ = io::stdout().lock().write_all(self.stdout.as_bytes());
        let _ = io::stderr().lock().write_all(self.stderr.as_bytes());
        self.code
    }
}

/// `rshperf ab …` (`args[0]` is `ab`).
pub(crate) fn ab_main(args: &[String]) -> i32 {
    match args::parse(args) {
        Ok(b) => run(&b).unwrap_or_else(Exit::print),
        Err(e) => e.print(),
    }
}

/// `rshperf lb …` (`args[0]` is `lb`).
pub(crate) fn lb_main(args: &[String]) -> i32 {
    match lb::parse(args, &mut io::stdin().lock()) {
        Ok(b) => run(&b).unwrap_or_else(Exit::print),
        Err(e) => e.print(),
    }
}

/// ab's heartbeat: a line every 10 % of more than 150 requests, at most every 100.
fn heartbeat(b: &Bench) -> u64 {
    let total = b.requests.saturating_mul(b.urls.len() as u64);
    if b.tool == Tool::Lb || b.quiet || total <= 150 {
        0
    } else {
        (total / 10).max(100)
    }
}

/// Runs `b` and prints its report; the exit status, or an `Exit` for a start-up error.
fn run(b: &Bench) -> Result<i32, Exit> {
    let fail = |msg: String| Exit {
        code: 1,
        stdout: String::new(),
        stderr: format!("{}: {msg}\n", b.prog()),
    };
    // SIGINT/SIGTERM end the run with its report from now on.
    crate::front::runner::catch_signals()
        .map_err(|e| fail(e.to_string().trim_start_matches("rshperf: ").to_string()))?;
    let beat = heartbeat(b);
    let plan = setup::build(b, beat).map_err(|e| fail(e.to_string()))?;
    let gnuplot = match &b.gnuplot {
        Some(path) => Some(
            files::Gnuplot::create(path)
                .map_err(|e| fail(format!("Cannot open gnuplot output file {path}: {e}")))?,
        ),
        None => None,
    };
    let mut out = io::stdout().lock();
    print_start(&mut out, b, &plan, beat);
    let _ = out.flush();
    drop(out);
    let errors = Arc::new(Mutex::new(None));
    let verbosity = b.verbosity;
    let slot = Mutex::new(gnuplot);
    let make = |j: u32| -> Option<Box<dyn CallObserver + '_>> {
        let file = if j == 0 {
            slot.lock().ok().and_then(|mut g| g.take())
        } else {
            None
        };
        (file.is_some() || verbosity >= 2).then(|| {
            Box::new(files::Watcher::new(file, verbosity, Arc::clone(&errors)))
                as Box<dyn CallObserver>
        })
    };
    let run = execute::execute_with(
        &plan.cfg,
        &plan.work,
        ExecOptions { echo: false },
        Hooks {
            calls: Some(&make),
            metrics: None,
            seconds: None,
            records: None,
        },
    )
    .map_err(|e| fail(e.to_string().trim_start_matches("rshperf: ").to_string()))?;
    let mut out = io::BufWriter::new(io::stdout().lock());
    let servers = report_servers(&run, b.urls.len());
    let ended: u64 = servers
        .iter()
        .map(|s| s.complete + s.failed_total(false))
        .sum();
    print_end(&mut out, b, &plan, &run, &servers, beat, ended);
    let _ = out.flush();
    if let Some(path) = &b.csv {
        // ab writes the file only when some request completed.
        if servers.iter().any(|s| s.complete > 0) {
            write_csv(path, b, &servers)
                .map_err(|e| fail(format!("Cannot open CSV output file {path}: {e}")))?;
        }
    }
    if let Ok(mut e) = errors.lock() {
        if let Some(e) = e.take() {
            return Err(fail(format!("cannot write the gnuplot file: {e}")));
        }
    }
    let judged = judge::judge_run(&plan.cfg, &run, &[]);
    let advice = advice::assess_without_classic_report(&plan.cfg, &plan.work, &run, &judged);
    advice::print(&advice);
    // ab exits 1 after printing the results of an interrupted run; lb exits 0.
    Ok(i32::from(run.interrupted && b.tool == Tool::Ab))
}

/// ab's figures of every server (empty figures for a server that saw nothing).
fn report_servers(run: &RunResult, n: usize) -> Vec<AbServer> {
    (0..n)
        .map(|i| run.stats.ab.servers.get(i).cloned().unwrap_or_default())
        .collect()
}

/// The hosts as ab's `Benchmarking` line names them.
fn hostnames(b: &Bench) -> String {
    let names: Vec<&str> = b.urls.iter().map(|u| u.host.as_str()).collect();
    names.join(", ")
}

/// Everything printed before the run.
fn print_start<W: Write>(out: &mut W, b: &Bench, plan: &setup::Plan, beat: u64) {
    match b.tool {
        Tool::Ab => {
            let _ = out.write_all(args::version().as_bytes());
            let _ = write!(out, "Benchmarking {} ", hostnames(b));
            if let Some((host, port)) = &b.proxy {
                let _ = write!(out, "[through {host}:{port}] ");
            }
            let _ = write!(out, "(be patient){}", if beat > 0 { "\n" } else { "..." });
            if b.verbosity >= 2 {
                let _ = write!(
                    out,
                    "INFO: {} header == \n---\n{}\n---\n",
                    b.method,
                    String::from_utf8_lossy(&plan.request_head)
                );
            }
        }
        Tool::Lb => {
            if b.quiet {
                return;
            }
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
            let _ = writeln!(
                out,
                "This is {} ver. {} running on {}",
                lb::PROG,
                env!("CARGO_PKG_VERSION"),
                host.trim()
            );
            let _ = writeln!(
                out,
                "rshperf: an httperf-compatible HTTP load generator - Released under the MIT License\n"
            );
            if let Some(f) = &b.servers_file {
                let _ = writeln!(
                    out,
                    "lb: reading HTTP servers file '{f}' ... {} found",
                    b.urls.len()
                );
            }
        }
    }
    // lb's initial delay (-s) comes between its banner and its "started" line.
    if let Some(d) = b.start_delay.filter(|d| *d > 0.0) {
        let _ = out.flush();
        std::thread::sleep(std::time::Duration::from_secs_f64(d));
    }
    if b.tool == Tool::Lb && !b.quiet {
        let _ = writeln!(
            out,
            "lb: {} - benchmark session started at {}",
            servers_phrase(b),
            files::ctime(SystemTime::now())
        );
    }
}

/// lb's `#N HTTP server(s)`.
fn servers_phrase(b: &Bench) -> String {
    let n = b.urls.len();
    format!("#{n} HTTP server{}", if n > 1 { "s" } else { "" })
}

/// Everything printed after the run.
fn print_end<W: Write>(
    out: &mut W,
    b: &Bench,
    plan: &setup::Plan,
    run: &RunResult,
    servers: &[AbServer],
    beat: u64,
    ended: u64,
) {
    let layout = AbLayout {
        concurrency: b.concurrency,
        check_length: b.check_length,
        keep_alive: b.keep_alive,
        send_body: b.body.is_some(),
        percentiles: b.percentiles,
        confidence: b.confidence,
        lb_line: b.tool == Tool::Lb,
    };
    match b.tool {
        Tool::Ab => {
            if beat > 0 {
                crate::wire::note::note!("Finished {ended} requests");
            } else {
                let _ = writeln!(out, "..done");
            }
        }
        Tool::Lb if !b.quiet => {
            let _ = writeln!(
                out,
                "lb: {} - benchmark session stopped at {}\n",
                servers_phrase(b),
                files::ctime(SystemTime::now())
            );
        }
        Tool::Lb => {}
    }
    // Each server's time runs from its first request's start to its last one's end
    // (as ab's, which starts at its first connect), or to the end of a run cut short
    // (time limit, signal).
    let cut = run.interrupted || b.time_limit.is_some_and(|t| run.info.duration >= t);
    let end = (run.info.duration * 1e6) as u64;
    for (i, (s, u)) in servers.iter().zip(&b.urls).enumerate() {
        let seconds = s.seconds((cut || s.last_end_us == 0).then_some(end));
        let target = AbTarget {
            hostname: &u.host,
            port: u.port,
            path: &u.path,
            tls_sni: plan.sni.get(i).and_then(|s| s.as_deref()),
        };
        if b.tool == Tool::Ab {
            let _ = write!(out, "\n\n");
        }
        let _ = write_ab_block(out, s, &target, &layout, seconds);
        if b.tool == Tool::Lb {
            let _ = writeln!(out);
        }
    }
}

/// ab's `-e` file.
fn write_csv(path: &str, b: &Bench, servers: &[AbServer]) -> io::Result<()> {
    let mut f = io::BufWriter::new(std::fs::File::create(path)?);
    let list: Vec<&AbServer> = servers.iter().collect();
    let names: Vec<&str> = b.urls.iter().map(|u| u.full.as_str()).collect();
    write_percentile_csv(&mut f, &list, &names)?;
    f.flush()
}

/// Seconds since the epoch of an instant of this process, given one moment known in
/// both clocks.
pub(crate) fn wall_secs(at: Instant, base: (Instant, SystemTime)) -> i64 {
    let wall = if at >= base.0 {
        base.1 + at.duration_since(base.0)
    } else {
        base.1 - base.0.duration_since(at)
    };
    wall.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
