//! `ConfigDoc`: a run's configuration as its JSON document records it (the `config`
//! member), written from a built `Config` and read back by serde.
//!
//! Owns the member names, their order and the forms of their values (`docs/json.md`),
//! and which members identify the workload (`Role`, declared beside each member):
//! `rshperf merge` refuses partitions, and `rshperf compare` runs, that differ in them.
//! Made by `ConfigDoc::of` (the output layer's `json::document` writes it); read by
//! the front ends that take documents (`merge`, merges of sweeps, `compare`), which
//! take the stored configuration as it is and never rebuild a `Config` from it.
//! Members are only ever appended: a document of an earlier release lacks the newer
//! ones, which read as their defaults (`#[serde(default)]`); unknown members are
//! ignored.

#[cfg(test)]
pub(crate) mod samples;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Config, HttpVersion, Period, StartAt};

/// What a member says about the workload, for the documents that must agree on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// What is sent, and how it arrives: partitions merged and runs compared agree.
    Workload,
    /// How much of it: partitions merged agree (each holds the whole's count); runs
    /// compared may differ in length.
    Amount,
    /// How the client ran it: runs compared agree; partitions may run on machines with
    /// other numbers of engines (a merge adds them up).
    Client,
}

/// Declares `ConfigDoc`'s members in document order, each with its role in the
/// workload's identity if it has one (`member: Type => Role,`), and `ConfigDoc::ROLES`
/// from them.
macro_rules! members {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $doc:expr])*
                $field:ident: $ty:ty $(=> $role:ident)?,
            )*
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[doc = $doc])*
                $field: $ty,
            )*
        }

        impl $name {
            /// The members that identify the workload, with their roles, in document
            /// order.
            pub(crate) const ROLES: &'static [(&'static str, Role)] =
                &[$($((stringify!($field), Role::$role),)?)*];
        }
    };
}

members! {
    /// The JSON `config` member: every option that shapes the run or its output, as
    /// given or as resolved, and the echo line.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    #[serde(default)]
    pub(crate) struct ConfigDoc {
        /// The echo line (`Config::echo_line`).
        echo: String,
        /// `--server`.
        server: String => Workload,
        /// `--servers`.
        servers: Option<String> => Workload,
        /// `--server-name`.
        server_name: Option<String>,
        /// The `Host:` value.
        host: String,
        /// The server's resolved addresses.
        addrs: Vec<String>,
        /// The port.
        port: u16 => Workload,
        /// `--uri`.
        uri: String => Workload,
        /// `--method`.
        method: String => Workload,
        /// `--http-version`: `1.0`, `1.1`, `2`, `3`.
        http_version: String => Workload,
        /// `--add-header` as typed.
        add_header: Option<String> => Workload,
        /// `--add-header-file`.
        add_header_file: Option<String>,
        /// `--no-host-hdr`.
        no_host_hdr: bool,
        /// `--num-conns` when it bounds the run (`Config::num_conns_bound`).
        num_conns: Option<u64> => Amount,
        /// `--num-calls` when it bounds the run (`Config::num_calls_bound`).
        num_calls: Option<u64> => Workload,
        /// `--burst-length`.
        burst_length: u64 => Workload,
        /// `--concurrency` (0: open loop).
        concurrency: u64 => Workload,
        /// `--call-rate` (0: none).
        call_rate: f64 => Workload,
        /// The arrival process.
        period: PeriodDoc => Workload,
        /// `--timeout`, seconds.
        timeout_s: f64,
        /// `--think-timeout`, seconds.
        think_timeout_s: f64,
        /// `--runtime`, seconds.
        runtime_s: f64,
        /// Arrivals go on until `--runtime` is over.
        until_runtime: bool,
        /// `--client=I/N`.
        client: (u32, u32),
        /// `--partition=I/N`.
        partition: (u32, u32),
        /// `--threads`.
        threads: u32 => Client,
        /// `--start-at`.
        start_at: Option<StartAtDoc>,
        /// `--overload`.
        overload: String,
        /// `--spin`.
        spin: String,
        /// `--pin`.
        pin: bool,
        /// `--realtime`.
        realtime: bool,
        /// `--send-buffer`.
        send_buffer: u32,
        /// `--recv-buffer`.
        recv_buffer: u32,
        /// `--hog`.
        hog: bool,
        /// `--myaddr`, as given.
        myaddr: Vec<String>,
        /// `--close-with-reset`.
        close_with_reset: bool,
        /// `--max-connections`.
        max_connections: u64,
        /// `--max-piped-calls`.
        max_piped_calls: u64,
        /// `--failure-status`.
        failure_status: u32,
        /// `--retry-on-failure`.
        retry_on_failure: bool,
        /// `--session-cookies`.
        session_cookies: bool,
        /// `--wsess`.
        wsess: Option<WsessDoc> => Workload,
        /// `--wsesslog`.
        wsesslog: Option<WsesslogDoc> => Workload,
        /// `--wsesspage`.
        wsesspage: Option<WsesspageDoc> => Workload,
        /// `--wlog`.
        wlog: Option<WlogDoc> => Workload,
        /// `--wset`.
        wset: Option<WsetDoc> => Workload,
        /// TLS (`--ssl`, implied by an `https://` URL or HTTP/3).
        ssl: bool => Workload,
        /// `--ssl-protocol`.
        ssl_protocol: Option<String>,
        /// `--ssl-ciphers`.
        ssl_ciphers: Option<String>,
        /// `--ssl-no-reuse`.
        ssl_no_reuse: bool,
        /// `--ssl-verify`.
        ssl_verify: bool,
        /// `--tls-server-name`.
        tls_server_name: Option<String>,
        /// The number of `-v`.
        verbose: u32,
        /// `--percentiles`.
        percentiles: bool,
        /// `--json`.
        json: Option<String>,
        /// `--csv`.
        csv: Option<String>,
        /// `--fail-on`, as typed.
        fail_on: Vec<String>,
        /// `--unix-socket`.
        unix_socket: Option<String> => Workload,
        /// `--body-file`.
        body_file: Option<String> => Workload,
        /// `--content-type`.
        content_type: Option<String>,
        /// `--header-file`.
        header_file: Option<String>,
        /// `--metrics-listen`.
        metrics_listen: Option<String>,
        /// `--metrics-linger`, seconds.
        metrics_linger_s: f64,
        /// `--stream`: the format's name or `auto`.
        stream: Option<String> => Workload,
        /// `--stream-gap-timeout`, seconds (0: none).
        stream_gap_timeout_s: f64 => Workload,
        /// The I/O backend asked for (`--io`, or `RSHPERF_IO`): `epoll`, `uring`,
        /// `auto`.
        io: String,
        /// `--body-lines`.
        body_lines: Option<String> => Workload,
        /// `--body-order` (`round-robin`, `random:SEED`), with `--body-lines` only.
        body_order: Option<String> => Workload,
        /// `--rate-profile` as typed.
        rate_profile: Option<String> => Workload,
        /// `rshperf replay`: the log, `--speed` and the connection mode.
        replay: Option<ReplayDoc> => Workload,
    }
}

/// The arrival process: `kind` with its parameters in seconds, and the mean rate
/// (`null` when there is none).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct PeriodDoc {
    /// The kind and its parameters.
    #[serde(flatten)]
    kind: PeriodKind,
    /// Arrivals per second (1 / the mean period).
    rate: Option<f64>,
}

/// `Period` as the document names it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum PeriodKind {
    /// No rate: one arrival after another.
    #[default]
    Sequential,
    /// Fixed spacing.
    Deterministic {
        /// Seconds between arrivals.
        period_s: f64,
    },
    /// Uniform spacing.
    Uniform {
        /// Shortest, seconds.
        min_s: f64,
        /// Longest, seconds.
        max_s: f64,
    },
    /// Exponential spacing.
    Exponential {
        /// Mean, seconds.
        mean_s: f64,
    },
    /// Piecewise deterministic.
    Variable {
        /// (period, duration) pairs, seconds.
        pairs_s: Vec<(f64, f64)>,
    },
}

/// `--start-at`: `{"unix": T}` or `{"after_s": S}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
enum StartAtDoc {
    /// Seconds since the Unix epoch.
    #[serde(rename = "unix")]
    Unix(f64),
    /// Seconds from the start of the program.
    #[serde(rename = "after_s")]
    After(f64),
}

/// `--wsess=N1,N2,X`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct WsessDoc {
    /// Sessions.
    sessions: u64,
    /// Calls per session.
    calls: u64,
    /// Think time, seconds.
    think_s: f64,
}

/// `--wsesslog=N,X,F`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct WsesslogDoc {
    /// Sessions.
    sessions: u64,
    /// Default think time, seconds.
    think_s: f64,
    /// The session file.
    file: String,
}

/// `--wsesspage=N1,N2,X`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct WsesspageDoc {
    /// Sessions.
    sessions: u64,
    /// Pages per session.
    pages: u64,
    /// Think time, seconds.
    think_s: f64,
}

/// `--wlog=B,F`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct WlogDoc {
    /// Loop at the end.
    repeat: bool,
    /// The log file.
    file: String,
}

/// `rshperf replay FILE --speed X --replay-connections MODE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ReplayDoc {
    /// The log, as given.
    file: String,
    /// `--speed`.
    speed: f64,
    /// `per-client`, `per-request` or `pool`: the mode given, or the log's default.
    connections: String,
}

/// `--wset=N,X`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct WsetDoc {
    /// Working-set size.
    files: u64,
    /// Target miss rate.
    miss_rate: f64,
}

impl PeriodDoc {
    /// The document's form of `p`.
    fn of(p: &Period) -> PeriodDoc {
        let kind = match p {
            Period::Sequential => PeriodKind::Sequential,
            Period::Deterministic(t) => PeriodKind::Deterministic { period_s: *t },
            Period::Uniform(lo, hi) => PeriodKind::Uniform {
                min_s: *lo,
                max_s: *hi,
            },
            Period::Exponential(mean) => PeriodKind::Exponential { mean_s: *mean },
            Period::Variable(pairs) => PeriodKind::Variable {
                pairs_s: pairs.clone(),
            },
        };
        let mean = p.mean();
        PeriodDoc {
            kind,
            rate: (mean > 0.0).then(|| 1.0 / mean),
        }
    }
}

impl ConfigDoc {
    /// The record of a built configuration.
    pub(crate) fn of(cfg: &Config) -> ConfigDoc {
        let (t, r, l, s) = (cfg.target(), cfg.request(), cfg.load(), cfg.sessions());
        let (k, tls, o, p) = (cfg.sockets(), cfg.tls(), cfg.output(), cfg.pacing());
        let text = |v: Option<&str>| v.map(str::to_string);
        ConfigDoc {
            echo: cfg.echo_line(),
            server: t.server().to_string(),
            servers: text(t.servers()),
            server_name: text(t.server_name()),
            host: t.host().to_string(),
            addrs: t.addrs().iter().map(ToString::to_string).collect(),
            port: t.port(),
            uri: t.uri().to_string(),
            method: r.method().to_string(),
            http_version: match r.http_version() {
                HttpVersion::V10 => "1.0",
                HttpVersion::V11 => "1.1",
                HttpVersion::V2 => "2",
                HttpVersion::V3 => "3",
            }
            .to_string(),
            add_header: text(r.add_header_raw()),
            add_header_file: text(r.add_header_file()),
            no_host_hdr: r.no_host_hdr(),
            num_conns: cfg.num_conns_bound(),
            num_calls: cfg.num_calls_bound(),
            burst_length: l.burst_length(),
            concurrency: l.concurrency(),
            call_rate: l.call_rate(),
            period: PeriodDoc::of(l.period()),
            timeout_s: k.timeout(),
            think_timeout_s: s.think_timeout(),
            runtime_s: l.runtime(),
            until_runtime: l.until_runtime(),
            client: (l.client_id(), l.num_clients()),
            partition: l.partition(),
            threads: l.threads(),
            start_at: l.start_at().map(|at| match at {
                StartAt::Unix(t) => StartAtDoc::Unix(t),
                StartAt::After(s) => StartAtDoc::After(s),
            }),
            overload: p.overload().name().to_string(),
            spin: p.spin().name(),
            pin: p.pin(),
            realtime: p.realtime(),
            send_buffer: k.send_buffer(),
            recv_buffer: k.recv_buffer(),
            hog: k.hog(),
            myaddr: t.myaddr().to_vec(),
            close_with_reset: k.close_with_reset(),
            max_connections: l.max_connections(),
            max_piped_calls: l.max_piped_calls(),
            failure_status: s.failure_status(),
            retry_on_failure: s.retry_on_failure(),
            session_cookies: s.session_cookies(),
            wsess: s.wsess().map(|w| WsessDoc {
                sessions: w.sessions(),
                calls: w.calls(),
                think_s: w.think(),
            }),
            wsesslog: s.wsesslog().map(|w| WsesslogDoc {
                sessions: w.sessions(),
                think_s: w.think(),
                file: w.file().to_string(),
            }),
            wsesspage: s.wsesspage().map(|w| WsesspageDoc {
                sessions: w.sessions(),
                pages: w.pages(),
                think_s: w.think(),
            }),
            wlog: r.wlog().map(|w| WlogDoc {
                repeat: w.repeat(),
                file: w.file().to_string(),
            }),
            wset: r.wset().map(|w| WsetDoc {
                files: w.files(),
                miss_rate: w.miss_rate(),
            }),
            ssl: tls.enabled(),
            ssl_protocol: tls.protocol().map(|p| p.name().to_string()),
            ssl_ciphers: text(tls.ciphers()),
            ssl_no_reuse: tls.no_reuse(),
            ssl_verify: tls.verify(),
            tls_server_name: text(tls.server_name()),
            verbose: o.verbose(),
            percentiles: o.percentiles(),
            json: text(o.json()),
            csv: text(o.csv()),
            fail_on: o.fail_on().iter().map(|t| t.expr().to_string()).collect(),
            unix_socket: text(t.unix_socket()),
            body_file: text(r.body_file()),
            content_type: text(r.content_type()),
            header_file: text(r.header_file()),
            metrics_listen: o.metrics_listen().map(|a| a.to_string()),
            metrics_linger_s: o.metrics_linger(),
            stream: r.stream().map(|c| c.name().to_string()),
            stream_gap_timeout_s: r.stream_gap_timeout(),
            io: p.io().name().to_string(),
            body_lines: text(r.body_lines()),
            body_order: r.body_lines().map(|_| r.body_order().name()),
            rate_profile: l.rate_profile().map(|p| p.text().to_string()),
            replay: l.replay().map(|r| ReplayDoc {
                file: r.file().to_string(),
                speed: r.speed(),
                connections: r.connections().name().to_string(),
            }),
        }
    }

    /// The member as JSON (the `config` member of a document).
    pub(crate) fn to_json(&self) -> Value {
        serde_json::to_value(self)
            .expect("ConfigDoc serializes to JSON: string keys, no failing serializer")
    }

    /// The members of the given roles, by name, with their values: what documents of
    /// one workload share (`rshperf merge`: `Workload` and `Amount`; `rshperf
    /// compare`: `Workload` and `Client`).
    pub(crate) fn identity(&self, roles: &[Role]) -> Vec<(&'static str, Value)> {
        let all = self.to_json();
        ConfigDoc::ROLES
            .iter()
            .filter(|(_, role)| roles.contains(role))
            .map(|(name, _)| (*name, all[*name].clone()))
            .collect()
    }

    /// The first member of the given roles in which `other` differs: its name and both
    /// values.
    pub(crate) fn differs(
        &self,
        other: &ConfigDoc,
        roles: &[Role],
    ) -> Option<(&'static str, Value, Value)> {
        self.identity(roles)
            .into_iter()
            .zip(other.identity(roles))
            .find(|((_, a), (_, b))| a != b)
            .map(|((name, a), (_, b))| (name, a, b))
    }

    /// The same configuration as the record of the whole of a partitioned run: its
    /// echo line `echo`, partition 0/1, written to `json`.
    pub(crate) fn whole(&self, echo: String, json: Option<&str>) -> ConfigDoc {
        ConfigDoc {
            echo,
            partition: (0, 1),
            json: json.map(str::to_string),
            ..self.clone()
        }
    }

    /// The echo line.
    pub(crate) fn echo(&self) -> &str {
        &self.echo
    }

    /// `--server`.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// `--servers`.
    pub(crate) fn servers(&self) -> Option<&str> {
        self.servers.as_deref()
    }

    /// `--call-rate` (0: none).
    pub(crate) fn call_rate(&self) -> f64 {
        self.call_rate
    }

    /// `--client=I/N`.
    pub(crate) fn client(&self) -> (u32, u32) {
        self.client
    }

    /// A session workload (`--wsess`, `--wsesslog`, `--wsesspage`).
    pub(crate) fn is_session(&self) -> bool {
        self.wsess.is_some() || self.wsesslog.is_some() || self.wsesspage.is_some()
    }
}
