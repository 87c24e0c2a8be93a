//! `Report`: every derived figure of a run, the one schema of the figures.
//!
//! Owns the derived part of the `--json` document (docs/json.md §2.1): `Report` is
//! serialised as it is, no member list is kept anywhere else. The other outputs name
//! figures from it: a figure's name is its JSON leaf path flattened with `_`
//! (`connections.rate` → `connections_rate`, `flat`), which is the CSV column
//! (`Figures`), the timeline column (`Second`), the `--fail-on` metric
//! (`model::threshold`) and, for the report's counters, the Prometheus family
//! (`rshperf_` + name). Error counters are named by `ErrorKind`, status classes by
//! `Status`, quantiles by `QUANTILES`, histograms by `Histograms::named`.
//!
//! Built from `Stats`, `RunInfo` and the run's `Facts` (the call-rate target and the
//! server names, which a document carries in its `config` and `run` members), so
//! `rshperf merge` derives the figures of merged documents exactly as a run does.
//! Computes through `Summary` (the classic report's arithmetic) and `quantile_ms`;
//! formats no text.

use hdrhistogram::Histogram;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::Value;

use crate::model::run::{RunInfo, RunMeta};
use crate::model::stats::h2::{savings, H2Stats};
use crate::model::stats::h3::H3Stats;
use crate::model::stats::timeline::{Interval, Timeline};
use crate::model::stats::{quantile_ms, ErrorKind, ServerStats, Stats, ERROR_KINDS};
use crate::model::summary::{RateSummary, Summary};

/// The quantiles reported for every latency histogram, with their labels as the
/// percentile lines print them; the schema key is the label with `_` for `.`
/// (`p99.9` → `p99_9`). `max` follows them.
pub(crate) const QUANTILES: [(f64, &str); 5] = [
    (0.5, "p50"),
    (0.9, "p90"),
    (0.99, "p99"),
    (0.999, "p99.9"),
    (0.9999, "p99.99"),
];

/// The schema key of a quantile label (`p99.9` → `p99_9`).
pub(crate) fn quantile_key(label: &str) -> String {
    label.replace('.', "_")
}

/// What the derived figures need from the run's configuration: carried by every
/// document (`config.call_rate`, `run.servers`), so a merge derives them too.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Facts {
    /// `--call-rate` target, calls per second (0: not given).
    pub(crate) call_rate: f64,
    /// Names of the servers of a `--servers` run, one per `Stats::servers` element.
    pub(crate) servers: Vec<String>,
}

impl Facts {
    /// The facts of a run with the `--call-rate` target `call_rate`.
    pub(crate) fn of(call_rate: f64, meta: &RunMeta) -> Facts {
        Facts {
            call_rate,
            servers: meta.servers.clone(),
        }
    }
}

/// Replies per status class 1xx..=5xx: `{"1xx": n, …, "5xx": n}`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Status(pub(crate) [u64; 5]);

impl Status {
    /// The classes 1..=5 of replies counted by status / 100.
    fn of(by_class: &[u64; 10]) -> Status {
        let mut s = [0; 5];
        s.copy_from_slice(&by_class[1..=5]);
        Status(s)
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(5))?;
        for (i, n) in self.0.iter().enumerate() {
            m.serialize_entry(&format!("{}xx", i + 1), n)?;
        }
        m.end()
    }
}

/// Error counters: `{"total": n, "client_timo": n, …}`, keys from `ErrorKind`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Errors {
    /// Sum of the counters.
    pub(crate) total: u64,
    /// Per kind, indexed by `ErrorKind::index`.
    pub(crate) by_kind: [u64; ERROR_KINDS],
}

impl Errors {
    fn of(by_kind: &[u64; ERROR_KINDS]) -> Errors {
        Errors {
            total: by_kind.iter().sum(),
            by_kind: *by_kind,
        }
    }
}

impl Serialize for Errors {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(1 + ERROR_KINDS))?;
        m.serialize_entry("total", &self.total)?;
        for k in ErrorKind::ALL {
            m.serialize_entry(&k.key(), &self.by_kind[k.index()])?;
        }
        m.end()
    }
}

/// A latency histogram's figures in ms: `count`, `avg` (when kept), the `QUANTILES`
/// and `max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spread {
    /// Values recorded.
    pub(crate) count: u64,
    /// Mean (call-rate spreads only).
    pub(crate) avg: Option<f64>,
    /// The `QUANTILES`, in order.
    pub(crate) quantiles: [f64; 5],
    /// Largest value.
    pub(crate) max: f64,
}

impl Spread {
    fn of(h: &Histogram<u64>, with_avg: bool) -> Spread {
        let avg = if h.is_empty() { 0.0 } else { h.mean() / 1000.0 };
        Spread {
            count: h.len(),
            avg: with_avg.then_some(avg),
            quantiles: QUANTILES.map(|(q, _)| quantile_ms(h, q)),
            max: quantile_ms(h, 1.0),
        }
    }
}

impl Serialize for Spread {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(None)?;
        m.serialize_entry("count", &self.count)?;
        if let Some(avg) = self.avg {
            m.serialize_entry("avg", &avg)?;
        }
        for ((_, label), v) in QUANTILES.iter().zip(self.quantiles) {
            m.serialize_entry(&quantile_key(label), &v)?;
        }
        m.serialize_entry("max", &self.max)?;
        m.end()
    }
}

/// The `percentiles` member: one `Spread` per latency histogram, in
/// `Histograms::named` order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Percentiles(pub(crate) Vec<(&'static str, Spread)>);

impl Serialize for Percentiles {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(self.0.len()))?;
        for (name, s) in &self.0 {
            m.serialize_entry(name, s)?;
        }
        m.end()
    }
}

/// `connections`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Connections {
    /// Connections made (`Total: connections`).
    pub(crate) total: u64,
    /// Connections per second.
    pub(crate) rate: f64,
    /// Milliseconds per connection.
    pub(crate) period_ms: f64,
    /// Most connections at once.
    pub(crate) max_concurrent: u64,
    /// Connections with at least one reply.
    pub(crate) successful: u64,
    /// Replies per successful connection.
    pub(crate) replies_per_conn: f64,
}

/// `connection_time_ms`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ConnectionTime {
    /// Shortest lifetime.
    pub(crate) min: f64,
    /// Mean lifetime.
    pub(crate) avg: f64,
    /// Longest lifetime (exact).
    pub(crate) max: f64,
    /// httperf's 1-ms-bin median (x.5).
    pub(crate) median: f64,
    /// Standard deviation of lifetimes.
    pub(crate) stddev: f64,
    /// Mean connect time.
    pub(crate) connect: f64,
}

/// `requests`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Requests {
    /// Requests sent.
    pub(crate) total: u64,
    /// Requests per second.
    pub(crate) rate: f64,
    /// Milliseconds per request.
    pub(crate) period_ms: f64,
    /// Bytes per request (integer-truncated).
    pub(crate) size_b: u64,
}

/// `replies`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Replies {
    /// Replies of status classes 1xx–5xx.
    pub(crate) total: u64,
    /// Mean response time.
    pub(crate) response_ms: f64,
    /// Mean transfer time.
    pub(crate) transfer_ms: f64,
    /// Replies per second over the whole duration (`total` / `duration_s`).
    pub(crate) rate: f64,
    /// Replies with status 1xx, 3xx, 4xx or 5xx.
    pub(crate) non_2xx: u64,
}

/// `reply_size`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ReplySize {
    /// Header bytes per reply (integer-truncated).
    pub(crate) header: u64,
    /// Content bytes per reply (integer-truncated).
    pub(crate) content: u64,
    /// Footer bytes per reply (integer-truncated).
    pub(crate) footer: u64,
    /// Their sum.
    pub(crate) total: u64,
}

/// `cpu`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Cpu {
    /// User CPU seconds.
    pub(crate) user_s: f64,
    /// System CPU seconds.
    pub(crate) system_s: f64,
    /// User CPU, % of the duration.
    pub(crate) user_pct: f64,
    /// System CPU, % of the duration.
    pub(crate) system_pct: f64,
    /// User + system CPU, % of the duration.
    pub(crate) total_pct: f64,
}

/// `net_io`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct NetIo {
    /// Request + reply header + reply content bytes.
    pub(crate) bytes: u64,
    /// KiB per second.
    pub(crate) kb_per_s: f64,
    /// 10^6 bits per second.
    pub(crate) mbps: f64,
}

/// `tls_handshakes`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Tls {
    /// Full TLS handshakes.
    pub(crate) full: u64,
    /// Resumed TLS handshakes.
    pub(crate) resumed: u64,
}

/// The figures every run has, in document order: the CSV row's figure columns and
/// most `--fail-on` metrics are their flattened names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Figures {
    /// Test duration, s.
    pub(crate) duration_s: f64,
    /// Most connects started in one loop turn.
    pub(crate) max_connect_burst: u64,
    /// `connections`.
    pub(crate) connections: Connections,
    /// `connection_time_ms`.
    pub(crate) connection_time_ms: ConnectionTime,
    /// `requests`.
    pub(crate) requests: Requests,
    /// `replies`.
    pub(crate) replies: Replies,
    /// `reply_rate`: the 5-s reply-rate samples.
    pub(crate) reply_rate: RateSummary,
    /// `reply_size`.
    pub(crate) reply_size: ReplySize,
    /// `status`.
    pub(crate) status: Status,
    /// `cpu`.
    pub(crate) cpu: Cpu,
    /// `net_io`.
    pub(crate) net_io: NetIo,
    /// `errors`.
    pub(crate) errors: Errors,
    /// `percentiles`.
    pub(crate) percentiles: Percentiles,
    /// `tls_handshakes`.
    pub(crate) tls_handshakes: Tls,
    /// `abandoned`: connections still open when the run stopped (outside httperf's
    /// error counts; connections = successful + errors + abandoned). Last, as every
    /// later figure: CSV columns are only ever appended.
    pub(crate) abandoned: u64,
    /// `interrupted`: SIGINT or SIGTERM cut the run short (a metric of 0 or 1).
    pub(crate) interrupted: bool,
}

/// `sessions` (session workloads; serialised only when a session ended).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Sessions {
    /// Session-rate samples; `avg` = completed / duration.
    pub(crate) rate: RateSummary,
    /// Sessions completed.
    pub(crate) completed: u64,
    /// Sessions ended.
    pub(crate) total: u64,
    /// Connections per completed session.
    pub(crate) connections_per_session: f64,
    /// Mean life of a completed session, s.
    pub(crate) lifetime_s: f64,
    /// Mean life of a failed session, s.
    pub(crate) failtime_s: f64,
    /// Element k: sessions with k replies.
    pub(crate) length_histogram: Vec<u64>,
    /// Sessions that failed.
    pub(crate) failed: u64,
}

impl Sessions {
    /// The session figures of `stats` for a test of `duration` seconds. The rate's
    /// `avg` is completed sessions ÷ duration, as httperf's; means of nothing are 0.0.
    pub(crate) fn of(stats: &Stats, duration: f64) -> Sessions {
        let ok = stats.sessions_ok;
        let mut rate = RateSummary::from_rates(
            stats
                .rate_samples
                .iter()
                .map(|r| r.sessions as f64 / r.seconds),
        );
        rate.avg = ok as f64 / duration;
        Sessions {
            rate,
            completed: ok,
            total: ok + stats.sessions_failed,
            connections_per_session: if ok == 0 {
                0.0
            } else {
                stats.session_connects_ok as f64 / ok as f64
            },
            lifetime_s: mean_s(stats.session_life_ok_us, ok),
            failtime_s: mean_s(stats.session_life_failed_us, stats.sessions_failed),
            length_histogram: stats.session_lengths.clone(),
            failed: stats.sessions_failed,
        }
    }

    /// Whether no session ended (the member is left out).
    fn is_empty(&self) -> bool {
        self.total == 0
    }
}

/// `servers[].response_ms`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ServerResponse {
    /// Mean, ms.
    pub(crate) avg: f64,
    /// p50, ms.
    pub(crate) p50: f64,
    /// p90, ms.
    pub(crate) p90: f64,
    /// p99, ms.
    pub(crate) p99: f64,
    /// Largest, ms.
    pub(crate) max: f64,
}

/// One element of `servers` (`--servers` runs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Server {
    /// The server's name (as in the `--servers` file).
    pub(crate) server: String,
    /// Connections made.
    pub(crate) connections: u64,
    /// Requests sent.
    pub(crate) requests: u64,
    /// Replies of status classes 1xx–5xx.
    pub(crate) replies: u64,
    /// Requests per second.
    pub(crate) request_rate: f64,
    /// Replies per second.
    pub(crate) reply_rate: f64,
    /// Replies per status class.
    pub(crate) status: Status,
    /// Error counters.
    pub(crate) errors: Errors,
    /// Response times.
    pub(crate) response_ms: ServerResponse,
}

impl Server {
    fn of(name: String, s: &ServerStats, duration: f64) -> Server {
        let p = |q: f64| quantile_ms(&s.response, q);
        let n = s.response.len();
        Server {
            server: name,
            connections: s.connections,
            requests: s.requests,
            replies: s.replies(),
            request_rate: s.requests as f64 / duration,
            reply_rate: s.replies() as f64 / duration,
            status: Status::of(&s.replies_by_class),
            errors: Errors::of(&s.errors),
            response_ms: ServerResponse {
                avg: if n == 0 {
                    0.0
                } else {
                    s.response_sum_us as f64 / n as f64 / 1000.0
                },
                p50: p(0.5),
                p90: p(0.9),
                p99: p(0.99),
                max: p(1.0),
            },
        }
    }
}

/// `http2` (`--http-version 2` runs): the counters of `raw.http2` and h2load's
/// "space savings" both ways.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Http2 {
    /// The counters of `raw.http2`.
    #[serde(flatten)]
    pub(crate) counters: H2Stats,
    /// h2load's space savings of the request headers, %.
    pub(crate) request_space_savings_pct: f64,
    /// The same for the reply headers, %.
    pub(crate) reply_space_savings_pct: f64,
}

/// `http3` (`--http-version 3` runs): the counters of `raw.http3` and their means.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Http3 {
    /// The counters of `raw.http3`.
    #[serde(flatten)]
    pub(crate) counters: H3Stats,
    /// Mean handshake time, ms.
    pub(crate) handshake_ms: f64,
    /// Mean smoothed RTT at the end of a connection, ms.
    pub(crate) rtt_ms: f64,
}

/// `call_rate` (`--call-rate` runs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct CallRate {
    /// `--call-rate`, calls/s.
    pub(crate) target_per_s: f64,
    /// Calls issued per second.
    pub(crate) achieved_per_s: f64,
    /// Pool connections.
    pub(crate) connections: u64,
    /// Calls due before the end.
    pub(crate) scheduled: u64,
    /// Calls taken by a connection.
    pub(crate) issued: u64,
    /// Calls answered.
    pub(crate) completed: u64,
    /// Calls lost with a failed connection.
    pub(crate) lost: u64,
    /// Calls still waiting at the end.
    pub(crate) unsent: u64,
    /// Most calls waiting at once (an upper bound).
    pub(crate) max_waiting: u64,
    /// Connections reopened.
    pub(crate) reconnects: u64,
    /// Connections given up.
    pub(crate) given_up: u64,
    /// Scheduled time → taken by a connection.
    pub(crate) lateness_ms: Spread,
    /// Scheduled time → first reply byte.
    pub(crate) response_ms: Spread,
}

/// `timeline[].response_ms`: the response times of one second.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct SecondResponse {
    /// Response times recorded.
    pub(crate) count: u64,
    /// p50, ms.
    pub(crate) p50: f64,
    /// p90, ms.
    pub(crate) p90: f64,
    /// p99, ms.
    pub(crate) p99: f64,
    /// Largest, ms (exact).
    pub(crate) max: f64,
}

/// One second of the run (`timeline[]`, and a row of `--timeline`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Second {
    /// Start of the interval, seconds since the start of the run (0 = the first
    /// second; one row per second for the first hour, coarser later).
    pub(crate) second: u64,
    /// Its length in seconds (1, 10, 60, … as coarsened; less for the last one).
    pub(crate) seconds: f64,
    /// Arrivals scheduled in this second.
    pub(crate) offered: u64,
    /// Connections started.
    pub(crate) connections: u64,
    /// Replies of status classes 1xx..=5xx.
    pub(crate) replies: u64,
    /// Replies per status class.
    pub(crate) status: Status,
    /// Failures per kind.
    pub(crate) errors: Errors,
    /// Response time count, p50, p90, p99 (bucket highs, never above the max) and max.
    pub(crate) response_ms: SecondResponse,
    /// Arrival lateness p99, ms.
    pub(crate) lateness_p99_ms: f64,
    /// Connections open at the end of the second.
    pub(crate) open: u64,
}

impl Second {
    /// The figures of the interval `iv` that starts at `start` s and lasts `seconds`.
    pub(crate) fn of(start: u64, seconds: f64, iv: &Interval) -> Second {
        let ms = |us: u64| us as f64 / 1000.0;
        let q = |p: f64| ms(iv.response.quantile_us(p).min(iv.response_max_us));
        let status = Status(iv.replies);
        Second {
            second: start,
            seconds,
            offered: iv.offered,
            connections: iv.connections,
            replies: status.0.iter().sum(),
            status,
            errors: Errors::of(&iv.errors),
            response_ms: SecondResponse {
                count: iv.response.count(),
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                max: ms(iv.response_max_us),
            },
            lateness_p99_ms: ms(iv.lateness.quantile_us(0.99)),
            open: iv.open,
        }
    }

    /// Every second of `t`, in order.
    pub(crate) fn all(t: &Timeline) -> Vec<Second> {
        t.spans()
            .map(|(start, seconds, iv)| Second::of(start, seconds, iv))
            .collect()
    }
}

/// Every derived figure of a run: the document's members from `duration_s` to
/// `timeline` (docs/json.md §2.1), in that order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Report {
    /// The figures every run has.
    #[serde(flatten)]
    pub(crate) figures: Figures,
    /// Session figures (serialised when a session ended).
    #[serde(skip_serializing_if = "Sessions::is_empty")]
    pub(crate) sessions: Sessions,
    /// Per server (`--servers` runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) servers: Vec<Server>,
    /// HTTP/2 figures (`--http-version 2` runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) http2: Option<Http2>,
    /// HTTP/3 figures (`--http-version 3` runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) http3: Option<Http3>,
    /// Call-rate figures (`--call-rate` runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) call_rate: Option<CallRate>,
    /// Every second of the run.
    pub(crate) timeline: Vec<Second>,
}

/// A mean of a µs sum in seconds, 0.0 without values.
fn mean_s(sum_us: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum_us as f64 / 1e6 / n as f64
    }
}

impl Report {
    /// Every figure of `stats` over `run`, with the configuration `facts`.
    pub(crate) fn new(stats: &Stats, run: &RunInfo, facts: &Facts) -> Report {
        let s = Summary::new(stats, run);
        let d = run.duration;
        let status = Status(s.reply_status);
        let figures = Figures {
            duration_s: d,
            max_connect_burst: s.max_burst,
            connections: Connections {
                total: s.connections,
                rate: s.conn_rate,
                period_ms: s.conn_period_ms,
                max_concurrent: s.max_concurrent,
                successful: s.lifetimes,
                replies_per_conn: s.replies_per_conn,
            },
            connection_time_ms: ConnectionTime {
                min: s.lifetime_min_ms,
                avg: s.lifetime_avg_ms,
                max: s.lifetime_max_ms,
                median: s.lifetime_median_ms,
                stddev: s.lifetime_stddev_ms,
                connect: s.connect_avg_ms,
            },
            requests: Requests {
                total: s.requests,
                rate: s.request_rate,
                period_ms: s.request_period_ms,
                size_b: s.request_size,
            },
            replies: Replies {
                total: s.replies,
                response_ms: s.response_avg_ms,
                transfer_ms: s.transfer_avg_ms,
                rate: s.replies as f64 / d,
                non_2xx: s.replies - status.0[1],
            },
            reply_rate: s.reply_rate,
            reply_size: ReplySize {
                header: s.reply_header_size,
                content: s.reply_content_size,
                footer: s.reply_footer_size,
                total: s.reply_total_size(),
            },
            status,
            cpu: Cpu {
                user_s: run.cpu_user,
                system_s: run.cpu_system,
                user_pct: s.cpu_user_pct,
                system_pct: s.cpu_system_pct,
                total_pct: s.cpu_total_pct,
            },
            net_io: NetIo {
                bytes: s.net_io_bytes,
                kb_per_s: s.net_io_kb_per_s,
                mbps: s.net_io_mbps,
            },
            errors: Errors {
                total: s.errors_total,
                by_kind: s.errors,
            },
            percentiles: Percentiles(
                stats
                    .hist
                    .named()
                    .into_iter()
                    .map(|(name, h)| (name, Spread::of(h, false)))
                    .collect(),
            ),
            tls_handshakes: Tls {
                full: stats.tls_handshakes[0],
                resumed: stats.tls_handshakes[1],
            },
            abandoned: stats.abandoned,
            interrupted: stats.interrupted,
        };
        let sessions = Sessions::of(stats, d);
        let servers = stats
            .servers
            .iter()
            .enumerate()
            .map(|(i, srv)| Server::of(facts.servers.get(i).cloned().unwrap_or_default(), srv, d))
            .collect();
        let h = &stats.http2;
        let http2 = (h.connections > 0).then(|| Http2 {
            counters: h.clone(),
            request_space_savings_pct: savings(h.request_header_wire, h.request_header_decoded),
            reply_space_savings_pct: savings(h.reply_header_wire, h.reply_header_decoded),
        });
        let h = &stats.http3;
        let http3 = (h.connections > 0).then(|| Http3 {
            counters: h.clone(),
            handshake_ms: h.handshake_ms(),
            rtt_ms: h.rtt_ms(),
        });
        let p = &stats.pool;
        let call_rate = p.is_used().then(|| CallRate {
            target_per_s: facts.call_rate,
            achieved_per_s: if d > 0.0 { p.issued as f64 / d } else { 0.0 },
            connections: p.connections,
            scheduled: p.scheduled,
            issued: p.issued,
            completed: p.completed,
            lost: p.lost,
            unsent: p.unsent,
            max_waiting: p.max_waiting,
            reconnects: p.reconnects,
            given_up: p.given_up,
            lateness_ms: Spread::of(&p.lateness, true),
            response_ms: Spread::of(&p.response, true),
        });
        Report {
            figures,
            sessions,
            servers,
            http2,
            http3,
            call_rate,
            timeline: Second::all(&stats.timeline),
        }
    }

    /// The figures `--fail-on` can name, as (flattened name, value): every leaf of
    /// `Figures`, then the `sessions_` figures (present even when no session ended).
    /// Non-finite figures are None.
    pub(crate) fn metrics(&self) -> Vec<(String, Option<f64>)> {
        let mut all = flat(&to_value(&self.figures), "");
        all.extend(flat(&to_value(&self.sessions), "sessions"));
        all.into_iter()
            .filter_map(|(name, v)| match v {
                Value::Number(n) => Some((name, n.as_f64())),
                Value::Bool(b) => Some((name, Some(f64::from(u8::from(b))))),
                Value::Null => Some((name, None)),
                _ => None,
            })
            .collect()
    }
}

/// A schema value as JSON.
pub(crate) fn to_value<T: Serialize>(v: &T) -> Value {
    // Invariant: the schema types serialise to JSON (string keys, no failing
    // serializer).
    serde_json::to_value(v).expect("report types serialise to JSON")
}

/// The leaves of `v` (objects descended into, arrays left out) as (name, value), the
/// name being the path below `prefix` joined with `_` (`connections.rate` →
/// `connections_rate`), in document order.
pub(crate) fn flat(v: &Value, prefix: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    walk(v, prefix, &mut out);
    out
}

fn walk(v: &Value, name: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let sub = if name.is_empty() {
                    k.clone()
                } else {
                    format!("{name}_{k}")
                };
                walk(child, &sub, out);
            }
        }
        Value::Array(_) => {}
        leaf => out.push((name.to_string(), leaf.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::tests::every_field_set;

    const RUN: RunInfo = RunInfo {
        duration: 2.0,
        cpu_user: 0.5,
        cpu_system: 0.25,
    };

    #[test]
    fn names_are_unique_and_flat_paths_of_the_document() {
        let r = Report::new(&every_field_set(), &RUN, &Facts::default());
        let names: Vec<String> = r.metrics().into_iter().map(|(n, _)| n).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "a flattened name is taken twice");
        for n in [
            "connections_rate",
            "reply_rate_avg",
            "errors_client_timo",
            "status_2xx",
        ] {
            assert!(names.iter().any(|x| x == n), "{n}");
        }
        assert!(names.iter().any(|x| x == "percentiles_response_p99_9"));
        assert!(names.iter().any(|x| x == "sessions_failed"));
    }

    #[test]
    fn errors_and_status_are_keyed_from_the_enum_and_the_classes() {
        let e = to_value(&Errors::of(&[1, 0, 2, 0, 0, 0, 0, 3]));
        assert_eq!(e["total"], 6);
        assert_eq!(e["client_timo"], 1);
        assert_eq!(e["connrefused"], 2);
        assert_eq!(e["other"], 3);
        let s = to_value(&Status([1, 2, 3, 4, 5]));
        assert_eq!(s["3xx"], 3);
    }

    #[test]
    fn non_finite_figures_are_null_and_none() {
        let zero = RunInfo {
            duration: 0.0,
            ..RUN
        };
        let mut s = Stats::new();
        s.on_connecting();
        let r = Report::new(&s, &zero, &Facts::default());
        assert_eq!(to_value(&r)["connections"]["rate"], Value::Null);
        let m = r.metrics();
        let rate = m
            .iter()
            .find(|(n, _)| n == "connections_rate")
            .map(|(_, v)| *v);
        assert_eq!(rate, Some(None));
    }
}
