//! The command-line echo: the first line of the classic report, httperf's rendering
//! of the configuration (docs/compatibility.md §2.2).
//!
//! Owns `Config::echo_line` and the counts it echoes (`num_conns_bound`,
//! `num_calls_bound`, which JSON and CSV use too); printed by the front ends before a run. A pure function
//! of the `Config`: every front end gets the same line for the same configuration.

use super::{Config, HttpVersion, Period, PrintWhat};
use crate::wire::cfmt;

impl Config {
    /// `--num-conns` when it bounds the run; None when `--runtime` without it does
    /// (`until_runtime`), or `--rate-profile` without it (connections: the profile
    /// says how many). The echo line, JSON `config` and CSV say what ran.
    pub(crate) fn num_conns_bound(&self) -> Option<u64> {
        let profiled =
            self.load.rate_profile.is_some() && self.load.call_rate == 0.0 && !self.given.num_conns;
        (!self.load.until_runtime && !profiled).then_some(self.load.num_conns)
    }

    /// `--num-calls` when it bounds the run; None when `--call-rate` with `--runtime`
    /// and without it runs calls until the runtime is over (`calls_until_runtime`).
    pub(crate) fn num_calls_bound(&self) -> Option<u64> {
        (!self.load.calls_until_runtime).then_some(self.load.num_calls)
    }

    /// The command-line echo printed first (docs/compatibility.md §2.2, httperf 0.9.0
    /// layout plus master items only when their options are given, then ` --threads=N`
    /// if N > 1), without the trailing newline.
    pub(crate) fn echo_line(&self) -> String {
        let mut s = self.prog.clone();
        let mut add = |item: String| {
            s.push(' ');
            s.push_str(&item);
        };
        if self.output.verbose > 0 {
            add("--verbose".into());
        }
        for (what, name) in [
            (self.output.print_reply, "--print-reply"),
            (self.output.print_request, "--print-request"),
        ] {
            match what {
                None => {}
                Some(PrintWhat::Header) => add(format!("{name}=header")),
                Some(PrintWhat::Body) => add(format!("{name}=body")),
                Some(PrintWhat::Both) => add(name.to_string()),
            }
        }
        if self.sockets.hog {
            add("--hog".into());
        }
        if self.sockets.close_with_reset {
            add("--close-with-reset".into());
        }
        if self.sessions.think_timeout > 0.0 {
            add(format!(
                "--think-timeout={}",
                cfmt::g(self.sessions.think_timeout)
            ));
        }
        if self.sockets.timeout > 0.0 {
            add(format!("--timeout={}", cfmt::g(self.sockets.timeout)));
        }
        if self.load.runtime > 0.0 {
            add(format!("--runtime={}", cfmt::g(self.load.runtime)));
        }
        add(format!(
            "--client={}/{}",
            self.load.client_id, self.load.num_clients
        ));
        if self.target.servers.is_none() {
            add(format!("--server={}", self.target.server));
        }
        if let Some(name) = &self.target.server_name {
            add(format!("--server_name={name}"));
        }
        if let Some(file) = &self.target.servers {
            add(format!("--servers={file}"));
        }
        add(format!("--port={}", self.target.port));
        add(format!("--uri={}", self.target.uri));
        if self.sessions.failure_status != 0 {
            add(format!("--failure-status={}", self.sessions.failure_status));
        }
        match self.request.http_version {
            HttpVersion::V10 => add("--http-version=1.0".into()),
            HttpVersion::V11 => {}
            HttpVersion::V2 => add("--http-version=2".into()),
            HttpVersion::V3 => add("--http-version=3".into()),
        }
        if self.load.max_connections != 0 {
            add(format!("--max-connections={}", self.load.max_connections));
        }
        if self.load.max_piped_calls != 0 {
            add(format!("--max-piped-calls={}", self.load.max_piped_calls));
        }
        match &self.load.period {
            Period::Sequential => {}
            // `--call-rate R` alone is its own schedule, and a profile's default
            // spacing is its own (both echoed below).
            Period::Deterministic(_)
                if self.load.call_rate > 0.0 || self.load.rate_profile.is_some() => {}
            Period::Deterministic(p) => add(format!("--rate={}", cfmt::g(1.0 / p))),
            Period::Uniform(lo, hi) => {
                add(format!("--period=u{},{}", cfmt::g(*lo), cfmt::g(*hi)));
            }
            Period::Exponential(mean) => add(format!("--period=e{}", cfmt::g(*mean))),
            Period::Variable(pairs) => {
                let list: Vec<String> = pairs
                    .iter()
                    .map(|(t, d)| format!("{},{}", cfmt::g(*t), cfmt::g(*d)))
                    .collect();
                add(format!("--period=v{}", list.join(",")));
            }
        }
        add(format!("--send-buffer={}", self.sockets.send_buffer));
        if self.sessions.retry_on_failure {
            add("--retry-on-failure".into());
        }
        add(format!("--recv-buffer={}", self.sockets.recv_buffer));
        if self.sessions.session_cookies {
            add("--session-cookies".into());
        }
        if self.tls.enabled() {
            add("--ssl".into());
        }
        if let Some(ciphers) = &self.tls.ciphers() {
            add(format!("--ssl-ciphers={ciphers}"));
        }
        if let Some(name) = &self.tls.server_name() {
            add(format!("--tls-server-name={name}"));
        }
        if self.tls.no_reuse() {
            add("--ssl-no-reuse".into());
        }
        if self.tls.early_data() {
            add("--quic-0rtt".into());
        }
        if let Some(s) = self.tls.quic_idle_timeout() {
            add(format!("--quic-idle-timeout={}", cfmt::g(s)));
        }
        if let Some(f) = &self.tls.certificate() {
            add(format!("--ssl-cert={f}"));
        }
        if let Some(f) = &self.tls.key() {
            add(format!("--ssl-key={f}"));
        }
        if let Some(f) = &self.tls.ca_file() {
            add(format!("--ssl-ca-file={f}"));
        }
        if let Some(p) = &self.tls.ca_path() {
            add(format!("--ssl-ca-path={p}"));
        }
        if self.tls.verify() {
            add("--ssl-verify".into());
        }
        if let Some(p) = self.tls.protocol() {
            add(format!("--ssl-protocol={}", p.name()));
        }
        if let Some(raw) = &self.request.add_header_raw {
            add(format!("--add-header='{raw}'"));
        }
        if let Some(f) = &self.request.add_header_file {
            add(format!("--add-header-file='{f}'"));
        }
        if self.request.method_given {
            add(format!("--method={}", self.request.method));
        }
        if self.output.use_timer_cache {
            add("--use-timer-cache".into());
        }
        if let Some(w) = &self.sessions.wsesslog {
            add(format!(
                "--wsesslog={},{},{}",
                w.sessions,
                cfmt::fixed(w.think, 3),
                w.file
            ));
        } else if let Some(w) = &self.sessions.wsesspage {
            add(format!(
                "--wsesspage={},{},{}",
                w.sessions,
                w.pages,
                cfmt::fixed(w.think, 3)
            ));
        } else {
            if let Some(w) = &self.sessions.wsess {
                add(format!(
                    "--wsess={},{},{}",
                    w.sessions,
                    w.calls,
                    cfmt::fixed(w.think, 3)
                ));
            } else {
                // `--runtime` alone bounds the run: no count to echo (httperf's
                // `--num-conns=1` would say one connection ran).
                if let Some(n) = self.num_conns_bound() {
                    add(format!("--num-conns={n}"));
                }
                if let Some(n) = self.num_calls_bound() {
                    add(format!("--num-calls={n}"));
                }
            }
            if self.load.burst_length != 1 {
                add(format!("--burst-length={}", self.load.burst_length));
            }
            if let Some(w) = &self.request.wset {
                add(format!(
                    "--wset={},{}",
                    w.files,
                    cfmt::fixed(w.miss_rate, 3)
                ));
            }
        }
        if self.output.periodic_stats {
            add("--periodic-stats".into());
        }
        if self.load.partition.1 > 1 {
            add(format!(
                "--partition={}/{}",
                self.load.partition.0, self.load.partition.1
            ));
        }
        if self.load.threads > 1 {
            add(format!("--threads={}", self.load.threads));
        }
        if self.load.concurrency > 0 {
            add(format!("--concurrency={}", self.load.concurrency));
        }
        for item in self.pacing.echo_items() {
            add(item);
        }
        if self.given.call_rate_profile {
            add("--call-rate=profile".into());
        } else if self.load.call_rate > 0.0 {
            add(format!("--call-rate={}", cfmt::g(self.load.call_rate)));
        }
        if let Some(p) = &self.load.rate_profile {
            add(format!("--rate-profile={p}"));
        }
        if let Some(p) = &self.target.unix_socket {
            add(format!("--unix-socket={p}"));
        }
        if let Some(f) = &self.request.body_file {
            add(format!("--body-file={f}"));
        }
        if let Some(f) = &self.request.body_lines {
            add(format!("--body-lines={f}"));
            add(format!("--body-order={}", self.request.body_order.name()));
        }
        if let Some(t) = &self.request.content_type {
            add(format!("--content-type='{t}'"));
        }
        if let Some(f) = &self.request.header_file {
            add(format!("--header-file={f}"));
        }
        if let Some(c) = self.request.stream {
            add(format!("--stream={}", c.name()));
        }
        if self.request.stream_gap_timeout > 0.0 {
            add(format!(
                "--stream-gap-timeout={}",
                cfmt::g(self.request.stream_gap_timeout)
            ));
        }
        s
    }
}
