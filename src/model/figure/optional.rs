//! The optional members of a run's figures — `sessions`, `http2`, `http3`,
//! `call_rate`, `stream`, `validity` — as parts of the run table (`run.rs` places them
//! in document order, each in the JSON only when it applies). Their figures are
//! `--fail-on` metrics only for sessions, the call rate, streams and `validity.valid`;
//! none is a CSV column (not every run has them, and CSV columns are only ever appended
//! after `findings`, whose cell carries the validity's warnings).

use super::run::{f, RunScope};
use super::{int, real, At, Figure, Unit, Val};
use crate::model::blocks::Spread;
use crate::model::validity::doc::reasons_json;

/// The `{q}` quantile of `s`.
fn spread_q(s: &Spread, at: At) -> Val {
    real(s.quantiles[at.q])
}

/// The `sessions` member (session workloads; in the JSON when a session ended).
pub(super) fn sessions() -> Vec<Figure<RunScope>> {
    vec![
        f(
            "rate.min",
            Unit::Rate("sess/s"),
            "smallest 5-s sample of completed sessions per second",
            |r, _| real(r.sessions.rate.min),
        )
        .fail_on(),
        f(
            "rate.avg",
            Unit::Rate("sess/s"),
            "completed sessions / duration (as httperf)",
            |r, _| real(r.sessions.rate.avg),
        )
        .fail_on(),
        f(
            "rate.max",
            Unit::Rate("sess/s"),
            "largest sample",
            |r, _| real(r.sessions.rate.max),
        )
        .fail_on(),
        f(
            "rate.stddev",
            Unit::Rate("sess/s"),
            "standard deviation of the samples",
            |r, _| real(r.sessions.rate.stddev),
        )
        .fail_on(),
        f("rate.samples", Unit::Count, "number of samples", |r, _| {
            int(r.sessions.rate.samples)
        })
        .fail_on(),
        f("completed", Unit::Count, "sessions completed", |r, _| {
            int(r.sessions.completed)
        })
        .fail_on(),
        f(
            "total",
            Unit::Count,
            "sessions ended (completed + failed)",
            |r, _| int(r.sessions.total),
        )
        .fail_on(),
        f(
            "connections_per_session",
            Unit::Ratio,
            "connections per completed session",
            |r, _| real(r.sessions.connections_per_session),
        )
        .fail_on(),
        f(
            "lifetime_s",
            Unit::S,
            "mean life of a completed session",
            |r, _| real(r.sessions.lifetime_s),
        )
        .fail_on(),
        f(
            "failtime_s",
            Unit::S,
            "mean life of a failed session",
            |r, _| real(r.sessions.failtime_s),
        )
        .fail_on(),
        f(
            "length_histogram",
            Unit::Counts,
            "element k: sessions with k replies",
            |r, _| Val::Json(r.sessions.length_histogram.clone().into()),
        ),
        f("failed", Unit::Count, "sessions that failed", |r, _| {
            int(r.sessions.failed)
        })
        .fail_on(),
    ]
}

/// The `http2` member (`--http-version 2` runs): the counters of `raw.http2` and h2load's space savings.
pub(super) fn http2() -> Vec<Figure<RunScope>> {
    vec![
        f(
            "connections",
            Unit::Count,
            "connections that sent the HTTP/2 preface",
            |r, _| int(r.stats.http2.connections),
        ),
        f(
            "streams",
            Unit::Count,
            "streams opened (requests sent)",
            |r, _| int(r.stats.http2.streams),
        ),
        f(
            "request_header_wire",
            Unit::Bytes,
            "request header blocks: HPACK bytes on the wire",
            |r, _| int(r.stats.http2.request_header_wire),
        ),
        f(
            "request_header_decoded",
            Unit::Bytes,
            "request header fields: Σ name + value",
            |r, _| int(r.stats.http2.request_header_decoded),
        ),
        f(
            "reply_header_wire",
            Unit::Bytes,
            "reply header blocks of completed replies",
            |r, _| int(r.stats.http2.reply_header_wire),
        ),
        f(
            "reply_header_decoded",
            Unit::Bytes,
            "their decoded size, Σ name + value",
            |r, _| int(r.stats.http2.reply_header_decoded),
        ),
        f(
            "streams_reset",
            Unit::Count,
            "streams the server reset (RST_STREAM)",
            |r, _| int(r.stats.http2.streams_reset),
        ),
        f("goaways", Unit::Count, "GOAWAY frames received", |r, _| {
            int(r.stats.http2.goaways)
        }),
        f(
            "protocol_errors",
            Unit::Count,
            "connections ended because the server broke the protocol",
            |r, _| int(r.stats.http2.protocol_errors),
        ),
        f(
            "http1_answers",
            Unit::Count,
            "connections whose server answered the preface with HTTP/1",
            |r, _| int(r.stats.http2.http1_answers),
        ),
        f(
            "alpn_refused",
            Unit::Count,
            "TLS connections without `h2` by ALPN",
            |r, _| int(r.stats.http2.alpn_refused),
        ),
        f(
            "request_space_savings_pct",
            Unit::Percent,
            "h2load's space savings of the request headers",
            |r, _| real(r.http2.request_space_savings_pct),
        ),
        f(
            "reply_space_savings_pct",
            Unit::Percent,
            "h2load's space savings of the reply headers",
            |r, _| real(r.http2.reply_space_savings_pct),
        ),
    ]
}

/// The `http3` member (`--http-version 3` runs): the counters of `raw.http3` and their means.
pub(super) fn http3() -> Vec<Figure<RunScope>> {
    vec![
        f(
            "connections",
            Unit::Count,
            "QUIC connections started",
            |r, _| int(r.stats.http3.connections),
        ),
        f(
            "handshakes",
            Unit::Count,
            "QUIC handshakes completed",
            |r, _| int(r.stats.http3.handshakes),
        ),
        f(
            "handshake_sum_us",
            Unit::Count,
            "their total time, µs",
            |r, _| int(r.stats.http3.handshake_sum_us),
        ),
        f(
            "zero_rtt_sent",
            Unit::Count,
            "connections that sent 0-RTT requests",
            |r, _| int(r.stats.http3.zero_rtt_sent),
        ),
        f(
            "zero_rtt_accepted",
            Unit::Count,
            "connections whose 0-RTT was accepted",
            |r, _| int(r.stats.http3.zero_rtt_accepted),
        ),
        f(
            "zero_rtt_rejected",
            Unit::Count,
            "connections whose 0-RTT was rejected",
            |r, _| int(r.stats.http3.zero_rtt_rejected),
        ),
        f("streams", Unit::Count, "request streams opened", |r, _| {
            int(r.stats.http3.streams)
        }),
        f(
            "streams_reset",
            Unit::Count,
            "streams the server reset",
            |r, _| int(r.stats.http3.streams_reset),
        ),
        f("goaways", Unit::Count, "GOAWAY frames received", |r, _| {
            int(r.stats.http3.goaways)
        }),
        f(
            "protocol_errors",
            Unit::Count,
            "connections ended by a protocol error",
            |r, _| int(r.stats.http3.protocol_errors),
        ),
        f("packets_sent", Unit::Count, "QUIC packets sent", |r, _| {
            int(r.stats.http3.packets_sent)
        }),
        f(
            "packets_lost",
            Unit::Count,
            "QUIC packets declared lost",
            |r, _| int(r.stats.http3.packets_lost),
        ),
        f(
            "rtt_sum_us",
            Unit::Count,
            "smoothed RTTs at the end of connections, µs, summed",
            |r, _| int(r.stats.http3.rtt_sum_us),
        ),
        f("rtt_samples", Unit::Count, "how many", |r, _| {
            int(r.stats.http3.rtt_samples)
        }),
        f("handshake_ms", Unit::Ms, "mean handshake time", |r, _| {
            real(r.http3.handshake_ms)
        }),
        f(
            "rtt_ms",
            Unit::Ms,
            "mean smoothed RTT at the end of a connection",
            |r, _| real(r.http3.rtt_ms),
        ),
    ]
}

/// The `call_rate` member (`--call-rate` runs).
pub(super) fn call_rate() -> Vec<Figure<RunScope>> {
    vec![
        f(
            "target_per_s",
            Unit::Rate("calls/s"),
            "`--call-rate`",
            |r, _| real(r.call_rate.target_per_s),
        )
        .fail_on(),
        f(
            "achieved_per_s",
            Unit::Rate("calls/s"),
            "calls issued per second",
            |r, _| real(r.call_rate.achieved_per_s),
        )
        .fail_on(),
        f("connections", Unit::Count, "pool connections", |r, _| {
            int(r.call_rate.connections)
        })
        .fail_on(),
        f(
            "scheduled",
            Unit::Count,
            "calls due before the end",
            |r, _| int(r.call_rate.scheduled),
        )
        .fail_on(),
        f(
            "issued",
            Unit::Count,
            "calls taken by a connection",
            |r, _| int(r.call_rate.issued),
        )
        .fail_on(),
        f("completed", Unit::Count, "calls answered", |r, _| {
            int(r.call_rate.completed)
        })
        .fail_on(),
        f(
            "lost",
            Unit::Count,
            "calls lost with a failed connection",
            |r, _| int(r.call_rate.lost),
        )
        .fail_on(),
        f(
            "unsent",
            Unit::Count,
            "calls still waiting at the end",
            |r, _| int(r.call_rate.unsent),
        )
        .fail_on(),
        f(
            "max_waiting",
            Unit::Count,
            "most calls waiting at once (an upper bound)",
            |r, _| int(r.call_rate.max_waiting),
        )
        .fail_on(),
        f("reconnects", Unit::Count, "connections reopened", |r, _| {
            int(r.call_rate.reconnects)
        })
        .fail_on(),
        f("given_up", Unit::Count, "connections given up", |r, _| {
            int(r.call_rate.given_up)
        })
        .fail_on(),
        f(
            "lateness_ms.count",
            Unit::Count,
            "calls scheduled (→ taken by a connection, or → the end for unsent calls)",
            |r, _| int(r.call_rate.lateness_ms.count),
        )
        .fail_on(),
        f("lateness_ms.avg", Unit::Ms, "mean call lateness", |r, _| {
            real(r.call_rate.lateness_ms.avg)
        })
        .fail_on(),
        f("lateness_ms.{q}", Unit::Ms, "call lateness {q}", |r, at| {
            spread_q(&r.call_rate.lateness_ms, at)
        })
        .fail_on()
        .alias("call_rate_lateness_{q}"),
        f(
            "lateness_ms.max",
            Unit::Ms,
            "longest call lateness",
            |r, _| real(r.call_rate.lateness_ms.max),
        )
        .fail_on(),
        f(
            "response_ms.count",
            Unit::Count,
            "calls answered, unsent or abandoned (→ first reply byte, or → the end)",
            |r, _| int(r.call_rate.response_ms.count),
        )
        .fail_on(),
        f(
            "response_ms.avg",
            Unit::Ms,
            "mean call response time",
            |r, _| real(r.call_rate.response_ms.avg),
        )
        .fail_on(),
        f(
            "response_ms.{q}",
            Unit::Ms,
            "call response time {q}",
            |r, at| spread_q(&r.call_rate.response_ms, at),
        )
        .fail_on()
        .alias("call_rate_response_{q}"),
        f(
            "response_ms.max",
            Unit::Ms,
            "longest call response time",
            |r, _| real(r.call_rate.response_ms.max),
        )
        .fail_on(),
        f(
            "abandoned",
            Unit::Count,
            "calls taken by a connection and unanswered at the end",
            |r, _| int(r.call_rate.abandoned),
        )
        .fail_on(),
        f(
            "evicted",
            Unit::Count,
            "idle client connections closed to open one for another client (a replay's connection cap)",
            |r, _| int(r.call_rate.evicted),
        )
        .fail_on(),
    ]
}

/// The measurement `name` of the run's validity judgement (null when not measured).
fn measured(r: &super::run::Run<'_>, name: &str, int_valued: bool) -> Val {
    let v = r
        .facts
        .validity
        .as_ref()
        .and_then(|v| v.measured.iter().find(|(n, _)| n == name))
        .and_then(|(_, x)| *x);
    match v {
        Some(x) if int_valued && x >= 0.0 => int(x as u64),
        Some(x) => real(x),
        None => real(f64::NAN),
    }
}

/// The `validity` member (every run the front end judged; `model::validity`): whether
/// the figures describe the server, why not, and what the judgement measured. The
/// `measured` members are the names `validity::Evidence::measured` gives.
pub(super) fn validity() -> Vec<Figure<RunScope>> {
    vec![
        f(
            "valid",
            Unit::Flag,
            "whether the figures describe the server: no reason in `validity.reasons` (`--fail-on invalid` exits 3 when not)",
            |r, _| Val::Flag(r.facts.validity.as_ref().is_none_or(|v| v.valid())),
        )
        .fail_on(),
        f(
            "reasons",
            Unit::Rows,
            "why not: one object per reason, `reason` (engine_cpu, schedule_slip, fd_budget, port_budget, machine_starved, interrupted, too_short), `part` (merged documents), `text`, `measured` (docs/json.md §2.9)",
            |r, _| Val::Json(r.facts.validity.as_ref().map(reasons_json).unwrap_or_default()),
        ),
        f(
            "measured.busiest_engine_pct",
            Unit::Percent,
            "the busiest engine thread's CPU time, % of its wall time",
            |r, _| measured(r, "busiest_engine_pct", false),
        ),
        f(
            "measured.engine_wait_pct",
            Unit::Percent,
            "the longest an engine thread waited for a CPU while runnable, % of its wall time (null: the kernel does not say)",
            |r, _| measured(r, "engine_wait_pct", false),
        ),
        f(
            "measured.throttled_pct",
            Unit::Percent,
            "CPU-quota periods in which the process's cgroup was throttled, % (null: no quota)",
            |r, _| measured(r, "throttled_pct", false),
        ),
        f(
            "measured.quota_cores",
            Unit::Ratio,
            "that CPU quota, cores (null: none)",
            |r, _| measured(r, "quota_cores", false),
        ),
        f(
            "measured.run_queue",
            Unit::Ratio,
            "runnable tasks on the machine, mean of the run's once-a-second samples",
            |r, _| measured(r, "run_queue", false),
        ),
        f("measured.cores", Unit::Count, "online cores of the machine", |r, _| {
            measured(r, "cores", true)
        }),
        f(
            "measured.steal_pct",
            Unit::Percent,
            "CPU time the hypervisor stole during the run, % (null: the kernel does not say)",
            |r, _| measured(r, "steal_pct", false),
        ),
        f(
            "measured.table_peak",
            Unit::Count,
            "the fullest engine's most connections open at once",
            |r, _| measured(r, "table_peak", true),
        ),
        f(
            "measured.table_size",
            Unit::Count,
            "an engine's connection-table slots (what the descriptor limit leaves it)",
            |r, _| measured(r, "table_size", true),
        ),
        f(
            "measured.ports_peak",
            Unit::Count,
            "the most local ports held at once towards one destination from one source address (open or in TIME_WAIT)",
            |r, _| measured(r, "ports_peak", true),
        ),
        f(
            "measured.port_range",
            Unit::Count,
            "ports of the ephemeral range (`ip_local_port_range`)",
            |r, _| measured(r, "port_range", true),
        ),
    ]
}

/// The `stream` member (`--stream` runs).
pub(super) fn stream() -> Vec<Figure<RunScope>> {
    vec![
        f(
            "from_schedule",
            Unit::Flag,
            "time to first event measured from each call's scheduled time (`--call-rate`); else from its request's send",
            |r, _| Val::Flag(r.stream.from_schedule),
        ),
        f("streams", Unit::Count, "replies split into events", |r, _| {
            int(r.stream.counters.streams)
        })
        .fail_on(),
        f("events", Unit::Count, "events (a `[DONE]` is not one)", |r, _| {
            int(r.stream.counters.events)
        })
        .fail_on(),
        f("data_bytes", Unit::Bytes, "bytes of the events' data", |r, _| {
            int(r.stream.counters.data_bytes)
        }),
        f("done", Unit::Count, "streams that ended with `[DONE]`", |r, _| {
            int(r.stream.counters.done)
        })
        .fail_on(),
        f(
            "cut",
            Unit::Count,
            "streams cut short (the body, connection or stream ended inside the stream)",
            |r, _| int(r.stream.counters.cut),
        )
        .fail_on(),
        f(
            "stalled",
            Unit::Count,
            "streams with a gap longer than `--stream-gap-timeout`",
            |r, _| int(r.stream.counters.stalled),
        )
        .fail_on(),
        f("empty", Unit::Count, "streams that ended without an event", |r, _| {
            int(r.stream.counters.empty)
        })
        .fail_on(),
        f(
            "after_done",
            Unit::Count,
            "events after a `[DONE]` (not counted as events)",
            |r, _| int(r.stream.counters.after_done),
        )
        .fail_on(),
        f(
            "open_at_end",
            Unit::Count,
            "streams still open when the run stopped",
            |r, _| int(r.stream.counters.open_at_end),
        ),
        f("events_per_stream", Unit::Ratio, "events per stream", |r, _| {
            real(r.stream.events_per_stream)
        })
        .fail_on(),
        f(
            "events_per_s",
            Unit::Rate("events/s"),
            "events per second of the run, all streams together",
            |r, _| real(r.stream.events_per_s),
        )
        .fail_on(),
        f(
            "stream_events_per_s",
            Unit::Rate("events/s"),
            "events per second of a stream (events / the streams' summed durations)",
            |r, _| real(r.stream.stream_events_per_s),
        )
        .fail_on(),
        f("first_event_ms.count", Unit::Count, "streams with a first event", |r, _| {
            int(r.stream.first_event_ms.count)
        }),
        f("first_event_ms.avg", Unit::Ms, "mean time to first event", |r, _| {
            real(r.stream.first_event_ms.avg)
        })
        .fail_on(),
        f("first_event_ms.{q}", Unit::Ms, "time to first event {q}", |r, at| {
            spread_q(&r.stream.first_event_ms, at)
        })
        .fail_on(),
        f("first_event_ms.max", Unit::Ms, "longest time to first event", |r, _| {
            real(r.stream.first_event_ms.max)
        })
        .fail_on(),
        f("gap_ms.count", Unit::Count, "gaps between consecutive events", |r, _| {
            int(r.stream.gap_ms.count)
        }),
        f("gap_ms.avg", Unit::Ms, "mean gap between events", |r, _| {
            real(r.stream.gap_ms.avg)
        })
        .fail_on(),
        f("gap_ms.{q}", Unit::Ms, "gap between events {q}", |r, at| {
            spread_q(&r.stream.gap_ms, at)
        })
        .fail_on(),
        f("gap_ms.max", Unit::Ms, "longest gap between events", |r, _| {
            real(r.stream.gap_ms.max)
        })
        .fail_on(),
        f(
            "duration_ms.count",
            Unit::Count,
            "streams with an event (first event to end)",
            |r, _| int(r.stream.duration_ms.count),
        ),
        f("duration_ms.avg", Unit::Ms, "mean stream duration", |r, _| {
            real(r.stream.duration_ms.avg)
        })
        .fail_on(),
        f("duration_ms.{q}", Unit::Ms, "stream duration {q}", |r, at| {
            spread_q(&r.stream.duration_ms, at)
        })
        .fail_on(),
        f("duration_ms.max", Unit::Ms, "longest stream", |r, _| {
            real(r.stream.duration_ms.max)
        })
        .fail_on(),
    ]
}
