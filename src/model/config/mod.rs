//! `Config`: the validated, resolved, immutable description of one run.
//!
//! Built once, by `ConfigBuilder::build` (`Config::builder()`), from typed values that
//! every front end maps its own options onto: httperf's command line
//! (`front::httperf`), the URL operand, `demo`, `ab` and `lb`. Nothing after `build`
//! re-reads flags or re-parses text. Owns the configuration's types (`types`), the
//! parsers of httperf's option values and their messages (`value`, `number`,
//! `period`, and the units of `duration`: a front end that takes httperf's syntax
//! uses them), the validation that needs more than one option (`builder`), the typed
//! errors and warnings (`error`) and the echo line (`echo`, compatibility.md §2.2).
//! Does not open sockets, and does not read the files named by options (`--wlog`,
//! `--wsesslog`, `--servers`, `--add-header-file`): their workloads do. Called by the
//! front ends; read by the workload, the engine and the outputs.

pub(crate) mod auto_partition;
mod builder;
pub(crate) mod doc;
pub(crate) mod duration;
mod echo;
mod error;
pub(crate) mod number;
mod parts;
mod period;
mod types;
pub(crate) mod value;

#[cfg(test)]
use std::time::Duration;

pub(crate) use crate::model::profile::{parse_rate_profile, RateProfile};
pub(crate) use crate::wire::tls::{SslProtocol, TlsOptions};
pub use builder::{Built, Rejected};
pub(crate) use builder::{ConfigBuilder, Given};
pub use error::CallRateClash;
pub use error::{ConfigError, Warning};
pub(crate) use number::SESSION_MAX_CONNS;
pub(crate) use parts::{
    LoadOptions, OutputOptions, RequestOptions, SessionOptions, SocketOptions, TargetOptions,
};
pub(crate) use period::Period;
pub(crate) use period::{parse_period, parse_rate};
pub(crate) use types::{
    BodyOrder, HttpVersion, PrintWhat, ReplayConnections, ReplaySpec, RequestLogFormat, StartAt,
    WlogSpec, WsessSpec, WsesslogSpec, WsesspageSpec, WsetSpec,
};

use crate::model::pacing::Pacing;
use crate::wire::frozen::frozen;

/// Farthest ahead `--start-at` may lie (as far as its `+SECONDS` form allows);
/// `build` refuses a later start.
pub(crate) const MAX_START_DELAY: std::time::Duration = std::time::Duration::from_secs(7 * 86_400);

/// The program name used in the echo line and in messages.
pub(crate) const PROG: &str = "rshperf";

frozen! {
    /// The complete, validated configuration of a run, in typed parts. Made only by
    /// `ConfigBuilder::build` (`Config::builder()`, or `to_builder()` of another
    /// `Config`); read-only after that.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Config [] {
        /// Program name used in the echo line and messages (`rshperf`).
        prog: String => &str as borrow;
        /// Where the load goes.
        target: TargetOptions => &TargetOptions as borrow;
        /// What each request is.
        request: RequestOptions => &RequestOptions as borrow;
        /// How much load, and when.
        load: LoadOptions => &LoadOptions as borrow;
        /// Session workloads.
        sessions: SessionOptions => &SessionOptions as borrow;
        /// Per-socket settings.
        sockets: SocketOptions => &SocketOptions as borrow;
        /// The TLS options (`--ssl`, `--ssl-*`, `--tls-server-name`); `tls().enabled()`
        /// is `--ssl` (or implied by `--ssl-protocol` or an `https://` URL).
        tls: TlsOptions => &TlsOptions as borrow;
        /// `--overload`, `--spin`, `--pin`, `--realtime`, `--io` (rshperf).
        pacing: Pacing => Pacing as copy;
        /// What is printed or written.
        output: OutputOptions => &OutputOptions as borrow;
        /// Which options were set (for `to_builder`).
        given: Given => Given as copy;
    }
}

impl Config {
    /// A builder with httperf's defaults: the one way to make a `Config`.
    pub(crate) fn builder() -> ConfigBuilder {
        ConfigBuilder::new()
    }

    /// A builder that starts from this configuration (its values, which options were
    /// set, its resolved addresses): the way to derive a configuration from another,
    /// e.g. a sweep's step at one rate from the sweep's base. `build` checks the result
    /// as it checks any other.
    pub(crate) fn to_builder(&self) -> ConfigBuilder {
        ConfigBuilder::from_config(self)
    }

    /// httperf's defaults (before any option is applied).
    pub(crate) fn defaults() -> Config {
        Config {
            prog: PROG.to_string(),
            target: TargetOptions::default(),
            request: RequestOptions::default(),
            load: LoadOptions::default(),
            sessions: SessionOptions::default(),
            sockets: SocketOptions::default(),
            tls: TlsOptions::default(),
            pacing: Pacing::default(),
            output: OutputOptions::default(),
            given: Given::default(),
        }
    }

    /// For tests of the layers below the front ends: the configuration of `--server
    /// 127.0.0.1` with what `edit` sets on the builder, built (warnings dropped).
    #[cfg(test)]
    pub(crate) fn local(edit: impl FnOnce(&mut ConfigBuilder)) -> Config {
        let mut b = Config::builder();
        b.server("127.0.0.1");
        edit(&mut b);
        b.build().expect("a valid test configuration").config
    }

    /// Under `--rate-profile`, the count that caps its arrivals when one was given:
    /// the session workload's sessions, `--num-conns` × `--num-calls` with
    /// `--call-rate=profile` and `--num-calls`, else `--num-conns`. None: the profile
    /// alone says how many.
    pub(crate) fn profile_cap(&self) -> Option<u64> {
        let s = &self.sessions;
        if let Some(n) = s.wsess.as_ref().map(|w| w.sessions()) {
            return Some(n);
        }
        if let Some(n) = s.wsesslog.as_ref().map(|w| w.sessions()) {
            return Some(n);
        }
        if let Some(n) = s.wsesspage.as_ref().map(|w| w.sessions()) {
            return Some(n);
        }
        if self.load.call_rate > 0.0 {
            return self
                .given
                .num_calls
                .then(|| self.load.num_conns.saturating_mul(self.load.num_calls));
        }
        self.given.num_conns.then_some(self.load.num_conns)
    }

    /// Mean seconds between arrivals: the period's mean, or under `--rate-profile`
    /// its length over its expected arrivals (the spacing's own mean is the peak's).
    pub(crate) fn mean_period(&self) -> f64 {
        match &self.load.rate_profile {
            Some(p) => p.duration().as_secs_f64() / p.expected_arrivals().max(1.0),
            None => self.load.period.mean(),
        }
    }

    /// The `Host:` header value (see `target.host`).
    pub(crate) fn host_header(&self) -> &str {
        &self.target.host
    }

    /// `--timeout` as a Duration, None when 0 (no timeout).
    #[cfg(test)]
    pub(crate) fn timeout_duration(&self) -> Option<Duration> {
        seconds(self.sockets.timeout)
    }

    /// `--think-timeout` as a Duration, None when 0.
    #[cfg(test)]
    pub(crate) fn think_timeout_duration(&self) -> Option<Duration> {
        seconds(self.sessions.think_timeout)
    }

    /// SO_SNDBUF and SO_RCVBUF to set on each socket, in bytes (0: leave the kernel's
    /// default and its autotuning). HTTP/1.x sets `--send-buffer` and `--recv-buffer`
    /// (defaults 4096 and 16384, as httperf), except the send buffer's default when
    /// requests carry a `--body-file` body: 4096 bytes leave one segment in flight, so
    /// a large body crawls (5 MB bodies at ~15 MB/s on loopback). HTTP/2 sets only the
    /// ones given on the command line: one connection carries many streams, and the
    /// small httperf defaults would cut every window of replies into small segments.
    pub(crate) fn socket_buffers(&self) -> (usize, usize) {
        let h2 = matches!(self.request.http_version, HttpVersion::V2 | HttpVersion::V3);
        let bodies = self.request.body_file.is_some() || self.request.body_lines.is_some();
        let pick = |size: u32, given: bool, autotuned: bool| {
            if autotuned && !given {
                0
            } else {
                size as usize
            }
        };
        let given = self.sockets.buffers_given;
        (
            pick(self.sockets.send_buffer, given.0, h2 || bodies),
            pick(self.sockets.recv_buffer, given.1, h2),
        )
    }
}

/// A positive number of seconds as a Duration (at least 1 ns, saturating), else None.
#[cfg(test)]
fn seconds(x: f64) -> Option<Duration> {
    (x > 0.0).then(|| {
        Duration::try_from_secs_f64(x)
            .unwrap_or(Duration::MAX)
            .max(Duration::from_nanos(1))
    })
}
