//! The blocks of a run's figures that the text outputs print as well as the document
//! carries: the session block's figures (`Sessions`), the call-rate block's
//! (`CallRate`, `Spread`), the HTTP/2 and HTTP/3 lines' (`Http2`, `Http3`), the stream
//! group's (`Stream`), and what the figures need from the configuration and the run's
//! judgement (`Facts`).
//!
//! Owns their arithmetic, once: the figure table (`model::figure`, its optional
//! members) reads its `sessions`, `call_rate`, `http2`, `http3` and `stream` figures
//! from these, and `output::session` and `output::extras` print them. Computed by
//! `Report::new`; beside `figure` and `report` (which import it) rather than inside
//! either.

use hdrhistogram::Histogram;

use crate::model::run::RunMeta;
use crate::model::stats::h2::{savings, H2Stats};
use crate::model::stats::h3::H3Stats;
use crate::model::stats::quantile::QUANTILES;
use crate::model::stats::stream::StreamStats;
use crate::model::stats::{quantile_ms, Stats};
use crate::model::summary::RateSummary;
use crate::model::validity::Validity;

/// What the derived figures need from the run's configuration, carried by every
/// document (`config.call_rate`, `run.servers`) so a merge derives them too, and the
/// run's validity judgement (a merge makes the union of its parts').
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Facts {
    /// `--call-rate` target, calls per second (0: not given).
    pub(crate) call_rate: f64,
    /// Names of the servers of a `--servers` run, one per `Stats::servers` element.
    pub(crate) servers: Vec<String>,
    /// The run's validity judgement (`model::validity`; None: not judged, as a
    /// document of an earlier release): the `validity` member.
    pub(crate) validity: Option<Validity>,
}

impl Facts {
    /// The facts of a run with the `--call-rate` target `call_rate`, judged
    /// `validity`.
    pub(crate) fn of(call_rate: f64, meta: &RunMeta, validity: Validity) -> Facts {
        Facts {
            call_rate,
            servers: meta.servers.clone(),
            validity: Some(validity),
        }
    }
}

/// A latency histogram's figures in ms: count, mean, the `QUANTILES` and max.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spread {
    /// Values recorded.
    pub(crate) count: u64,
    /// Mean (0 without values).
    pub(crate) avg: f64,
    /// The `QUANTILES`, in order.
    pub(crate) quantiles: [f64; 5],
    /// Largest value.
    pub(crate) max: f64,
}

impl Spread {
    fn of(h: &Histogram<u64>) -> Spread {
        Spread {
            count: h.len(),
            avg: if h.is_empty() { 0.0 } else { h.mean() / 1000.0 },
            quantiles: QUANTILES.map(|(q, _)| quantile_ms(h, q)),
            max: quantile_ms(h, 1.0),
        }
    }
}

/// The session figures (`sessions`; the session block).
#[derive(Debug, Clone, PartialEq)]
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
}

/// A mean of a µs sum in seconds, 0.0 without values.
fn mean_s(sum_us: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum_us as f64 / 1e6 / n as f64
    }
}

/// The HTTP/2 figures: the counters and h2load's "space savings" both ways.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Http2 {
    /// The counters of `raw.http2`.
    pub(crate) counters: H2Stats,
    /// h2load's space savings of the request headers, %.
    pub(crate) request_space_savings_pct: f64,
    /// The same for the reply headers, %.
    pub(crate) reply_space_savings_pct: f64,
}

impl Http2 {
    /// The HTTP/2 figures of `h`.
    pub(crate) fn of(h: &H2Stats) -> Http2 {
        Http2 {
            counters: h.clone(),
            request_space_savings_pct: savings(h.request_header_wire, h.request_header_decoded),
            reply_space_savings_pct: savings(h.reply_header_wire, h.reply_header_decoded),
        }
    }
}

/// The HTTP/3 figures: the counters and their means.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Http3 {
    /// The counters of `raw.http3`.
    pub(crate) counters: H3Stats,
    /// Mean handshake time, ms.
    pub(crate) handshake_ms: f64,
    /// Mean smoothed RTT at the end of a connection, ms.
    pub(crate) rtt_ms: f64,
}

impl Http3 {
    /// The HTTP/3 figures of `h`.
    pub(crate) fn of(h: &H3Stats) -> Http3 {
        Http3 {
            counters: h.clone(),
            handshake_ms: h.handshake_ms(),
            rtt_ms: h.rtt_ms(),
        }
    }
}

/// The call-rate figures (`--call-rate` runs).
#[derive(Debug, Clone, PartialEq)]
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
    /// Calls taken by a connection and unanswered at the end.
    pub(crate) abandoned: u64,
    /// Idle client connections closed for another client (a replay's cap).
    pub(crate) evicted: u64,
    /// Scheduled time → taken by a connection.
    pub(crate) lateness_ms: Spread,
    /// Scheduled time → first reply byte.
    pub(crate) response_ms: Spread,
}

impl CallRate {
    /// The call-rate figures of `stats` over `duration` s with the target `facts`.
    pub(crate) fn of(stats: &Stats, duration: f64, facts: &Facts) -> CallRate {
        let p = &stats.pool;
        CallRate {
            target_per_s: facts.call_rate,
            // Over the schedule's span: the test duration less the pool's warm-up.
            achieved_per_s: match duration - p.warm_up_us as f64 / 1e6 {
                span if span > 0.0 => p.issued as f64 / span,
                _ => 0.0,
            },
            connections: p.connections,
            scheduled: p.scheduled,
            issued: p.issued,
            completed: p.completed,
            lost: p.lost,
            unsent: p.unsent,
            max_waiting: p.max_waiting,
            reconnects: p.reconnects,
            given_up: p.given_up,
            abandoned: p.abandoned,
            evicted: p.evicted,
            lateness_ms: Spread::of(&p.lateness),
            response_ms: Spread::of(&p.response),
        }
    }
}

/// The stream figures (`--stream` runs; the classic report's "Stream" group).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stream {
    /// The time to first event was measured from the calls' scheduled times
    /// (`--call-rate`); else from the requests' send.
    pub(crate) from_schedule: bool,
    /// The counters.
    pub(crate) counters: StreamStats,
    /// Events per stream.
    pub(crate) events_per_stream: f64,
    /// Events per second of the run, all streams together.
    pub(crate) events_per_s: f64,
    /// Events per second of a stream: events / the streams' summed durations.
    pub(crate) stream_events_per_s: f64,
    /// Time to first event.
    pub(crate) first_event_ms: Spread,
    /// Gaps between consecutive events.
    pub(crate) gap_ms: Spread,
    /// Stream durations (first event to end).
    pub(crate) duration_ms: Spread,
}

impl Stream {
    /// The stream figures of `stats` over `duration` s.
    pub(crate) fn of(stats: &Stats, duration: f64) -> Stream {
        let s = &stats.stream;
        let per = |n: f64, d: f64| if d > 0.0 { n / d } else { 0.0 };
        Stream {
            from_schedule: s.from_schedule > 0,
            counters: s.clone(),
            events_per_stream: per(s.events as f64, s.streams as f64),
            events_per_s: per(s.events as f64, duration),
            stream_events_per_s: per(s.events as f64, s.duration_sum_us as f64 / 1e6),
            first_event_ms: Spread::of(&s.first_event),
            gap_ms: Spread::of(&s.gap),
            duration_ms: Spread::of(&s.duration),
        }
    }
}
