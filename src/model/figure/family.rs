//! The Prometheus families of the live metrics (`--metrics-listen`): name, type,
//! help, labels, and the figure of the JSON document each one exports.
//!
//! Names follow Prometheus' conventions: `rshperf_` prefix, base units (seconds,
//! bytes), `_total` on counters. A family exports a JSON leaf (or a templated leaf:
//! `status.{class}` with label `class`, one series per key), a sum of leaves, or a
//! histogram of the `percentiles` member, scaled to its base unit; a live value comes
//! from the engines' snapshots (`engine::metrics`), so the families whose leaf is in
//! the `timeline` (a gauge of the last second) or `config` export what the report
//! records per second or was asked for. A family is served by every run, or only by
//! the runs whose document has its member (`Served`: the `stream` families, `--stream`
//! runs). The tests check every leaf against a fully populated document, and that a
//! run without the member serves none of its families. Rendered by
//! `engine::metrics::text`, in `FAMILIES` order.

/// A Prometheus metric type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Type {
    /// Only goes up.
    Counter,
    /// Goes up and down.
    Gauge,
    /// Cumulative buckets, `_sum` and `_count`.
    Histogram,
}

impl Type {
    /// As the `# TYPE` line writes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Type::Counter => "counter",
            Type::Gauge => "gauge",
            Type::Histogram => "histogram",
        }
    }
}

/// Which runs serve a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Served {
    /// Every run (zeros for what it did not do).
    Always,
    /// Runs with `--stream`, whose document has the `stream` member.
    Stream,
}

/// One family.
#[derive(Debug)]
pub(crate) struct Family {
    /// Its name.
    pub(crate) name: &'static str,
    /// Its type.
    pub(crate) kind: Type,
    /// The `# HELP` text.
    pub(crate) help: &'static str,
    /// Its labels, besides `step` (sweeps). This and the leaves are read by the tests
    /// that check them against the samples and the document.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) labels: &'static [&'static str],
    /// The JSON leaves it exports (their sum; a placeholder stands for the key of the
    /// label named like it): paths of the document, `timeline[]` for an element of
    /// the timeline.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) leaves: &'static [&'static str],
    /// Factor from the leaves' unit to the family's (1e-3: ms to seconds).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) scale: f64,
    /// Which runs serve it (the samples follow the snapshot; the tests check it).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) served: Served,
}

/// `rshperf_connections_total`.
pub(crate) static CONNECTIONS: Family = Family {
    name: "rshperf_connections_total",
    kind: Type::Counter,
    help: "Connections that reached the connecting stage.",
    labels: &["server"],
    leaves: &["connections.total"],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_connects_total`.
pub(crate) static CONNECTS: Family = Family {
    name: "rshperf_connects_total",
    kind: Type::Counter,
    help: "Connections established (TLS: handshake done).",
    labels: &[],
    leaves: &["percentiles.connect.count"],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_requests_total`.
pub(crate) static REQUESTS: Family = Family {
    name: "rshperf_requests_total",
    kind: Type::Counter,
    help: "Requests completely written.",
    labels: &["server"],
    leaves: &["requests.total"],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_request_bytes_total`.
pub(crate) static REQUEST_BYTES: Family = Family {
    name: "rshperf_request_bytes_total",
    kind: Type::Counter,
    help: "Request bytes written (headers and bodies).",
    labels: &[],
    leaves: &["raw.request_bytes"],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_replies_total`: the status classes, and `other` (status outside
/// 100–599, `raw.replies_by_class`).
pub(crate) static REPLIES: Family = Family {
    name: "rshperf_replies_total",
    kind: Type::Counter,
    help: "Completed replies by status class; the report's replies are the 1xx to 5xx classes.",
    labels: &["server", "class"],
    leaves: &["status.{class}"],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_reply_bytes_total`.
pub(crate) static REPLY_BYTES: Family = Family {
    name: "rshperf_reply_bytes_total",
    kind: Type::Counter,
    help: "Reply bytes received (headers, bodies, chunk framing and trailers).",
    labels: &[],
    leaves: &[
        "raw.reply_header_bytes",
        "raw.reply_content_bytes",
        "raw.reply_footer_bytes",
    ],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_errors_total`.
pub(crate) static ERRORS: Family = Family {
    name: "rshperf_errors_total",
    kind: Type::Counter,
    help: "Failed connections and calls by kind, as the report's Errors lines.",
    labels: &["server", "kind"],
    leaves: &["errors.{kind}"],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_sessions_total`: `outcome="ok"` is `sessions.completed`, `"failed"`
/// `sessions.failed`.
pub(crate) static SESSIONS: Family = Family {
    name: "rshperf_sessions_total",
    kind: Type::Counter,
    help: "Sessions ended, by outcome (session workloads).",
    labels: &["outcome"],
    leaves: &["sessions.completed", "sessions.failed"],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_calls_total`: the calls of a `--call-rate` run by how they ended
/// (`call_rate.completed`, `lost`, `unsent`, `abandoned`; the last two are counted
/// when the run ends).
pub(crate) static CALLS: Family = Family {
    name: "rshperf_calls_total",
    kind: Type::Counter,
    help: "Scheduled calls of --call-rate by outcome: completed, lost with a failed connection, unsent or abandoned in flight at the end.",
    labels: &["outcome"],
    leaves: &[
        "call_rate.completed",
        "call_rate.lost",
        "call_rate.unsent",
        "call_rate.abandoned",
    ],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_open_connections`.
pub(crate) static OPEN: Family = Family {
    name: "rshperf_open_connections",
    kind: Type::Gauge,
    help: "Connections open now.",
    labels: &[],
    leaves: &["timeline[].open"],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_offered_arrivals_per_second`.
pub(crate) static OFFERED: Family = Family {
    name: "rshperf_offered_arrivals_per_second",
    kind: Type::Gauge,
    help: "Arrival rate asked for (connections or sessions per second; absent without a rate).",
    labels: &[],
    leaves: &["config.period.rate"],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_achieved_replies_per_second`.
pub(crate) static REPLY_RATE: Family = Family {
    name: "rshperf_achieved_replies_per_second",
    kind: Type::Gauge,
    help: "Replies per second over the last second.",
    labels: &[],
    leaves: &["timeline[].replies"],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_achieved_connections_per_second`.
pub(crate) static CONNECTION_RATE: Family = Family {
    name: "rshperf_achieved_connections_per_second",
    kind: Type::Gauge,
    help: "Connections started per second over the last second.",
    labels: &[],
    leaves: &["timeline[].connections"],
    scale: 1.0,
    served: Served::Always,
};

/// `rshperf_response_seconds`.
pub(crate) static RESPONSE: Family = Family {
    name: "rshperf_response_seconds",
    kind: Type::Histogram,
    help: "Response time: request send start to the reply's status line.",
    labels: &[],
    leaves: &["percentiles.response"],
    scale: 1e-3,
    served: Served::Always,
};

/// `rshperf_connect_seconds`.
pub(crate) static CONNECT: Family = Family {
    name: "rshperf_connect_seconds",
    kind: Type::Histogram,
    help: "Connect time (TLS: handshake included), successful connects.",
    labels: &[],
    leaves: &["percentiles.connect"],
    scale: 1e-3,
    served: Served::Always,
};

/// `rshperf_lateness_seconds`.
pub(crate) static LATENESS: Family = Family {
    name: "rshperf_lateness_seconds",
    kind: Type::Histogram,
    help: "Arrival lateness: connect start minus its scheduled time.",
    labels: &[],
    leaves: &["percentiles.lateness"],
    scale: 1e-3,
    served: Served::Always,
};

/// `rshperf_streams_total`.
pub(crate) static STREAMS: Family = Family {
    name: "rshperf_streams_total",
    kind: Type::Counter,
    help: "Replies split into events (--stream), counted when each stream ends; at the run's end those still open too.",
    labels: &[],
    leaves: &["stream.streams"],
    scale: 1.0,
    served: Served::Stream,
};

/// `rshperf_stream_events_total`.
pub(crate) static STREAM_EVENTS: Family = Family {
    name: "rshperf_stream_events_total",
    kind: Type::Counter,
    help: "Events of the streams, before any [DONE].",
    labels: &[],
    leaves: &["stream.events"],
    scale: 1.0,
    served: Served::Stream,
};

/// `rshperf_stream_done_total`.
pub(crate) static STREAM_DONE: Family = Family {
    name: "rshperf_stream_done_total",
    kind: Type::Counter,
    help: "Streams that ended with data: [DONE].",
    labels: &[],
    leaves: &["stream.done"],
    scale: 1.0,
    served: Served::Stream,
};

/// `rshperf_stream_cut_total`.
pub(crate) static STREAM_CUT: Family = Family {
    name: "rshperf_stream_cut_total",
    kind: Type::Counter,
    help: "Streams cut short: the body, connection or stream ended inside the stream.",
    labels: &[],
    leaves: &["stream.cut"],
    scale: 1.0,
    served: Served::Stream,
};

/// `rshperf_stream_stalled_total`.
pub(crate) static STREAM_STALLED: Family = Family {
    name: "rshperf_stream_stalled_total",
    kind: Type::Counter,
    help: "Streams with a gap longer than --stream-gap-timeout.",
    labels: &[],
    leaves: &["stream.stalled"],
    scale: 1.0,
    served: Served::Stream,
};

/// `rshperf_stream_first_event_seconds`.
pub(crate) static STREAM_FIRST_EVENT: Family = Family {
    name: "rshperf_stream_first_event_seconds",
    kind: Type::Histogram,
    help: "Time to first event: from the call's scheduled time with --call-rate, from the request's send otherwise.",
    labels: &[],
    leaves: &["stream.first_event_ms"],
    scale: 1e-3,
    served: Served::Stream,
};

/// `rshperf_stream_gap_seconds`.
pub(crate) static STREAM_GAP: Family = Family {
    name: "rshperf_stream_gap_seconds",
    kind: Type::Histogram,
    help: "Gaps between consecutive events of a stream.",
    labels: &[],
    leaves: &["stream.gap_ms"],
    scale: 1e-3,
    served: Served::Stream,
};

/// Every family, in exposition order.
pub(crate) static FAMILIES: [&Family; 23] = [
    &CONNECTIONS,
    &CONNECTS,
    &REQUESTS,
    &REQUEST_BYTES,
    &REPLIES,
    &REPLY_BYTES,
    &ERRORS,
    &SESSIONS,
    &CALLS,
    &OPEN,
    &OFFERED,
    &REPLY_RATE,
    &CONNECTION_RATE,
    &RESPONSE,
    &CONNECT,
    &LATENESS,
    &STREAMS,
    &STREAM_EVENTS,
    &STREAM_DONE,
    &STREAM_CUT,
    &STREAM_STALLED,
    &STREAM_FIRST_EVENT,
    &STREAM_GAP,
];
