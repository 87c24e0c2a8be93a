//! The lines after the classic report that httperf does not have: the call-rate
//! block (`--call-rate`), the stream group (`--stream`), and with `-v` the HTTP/2 and
//! pacing lines.
//!
//! Owns their wording; the figures are the report's (`Report::call_rate`,
//! `Report::stream`, `Report::http2`, `Report::http3`, computed once in
//! `model::blocks`) and, for
//! pacing, the raw `PacingStats` (counters the report shows as they are). Pure: returns text. Called by the runner and `rshperf merge`.

use crate::model::report::{CallRate, Http2, Http3, Spread, Stream};
use crate::model::stats::pacing::PacingStats;

/// `avg … p50 … p90 … p99 … max …` in ms.
fn spread(s: &Spread) -> String {
    let [p50, p90, p99, _, _] = s.quantiles;
    format!(
        "avg {:.3} p50 {p50:.3} p90 {p90:.3} p99 {p99:.3} max {:.3}",
        s.avg, s.max,
    )
}

/// The stream group's five lines (no final line end).
pub(crate) fn stream_lines(s: &Stream) -> String {
    let c = &s.counters;
    let from = if s.from_schedule {
        "from the scheduled time"
    } else {
        "from the request's send"
    };
    format!(
        "Stream: {} streams {} events ({:.1} per stream) done {} cut {} stalled {} \
         empty {} after-done {} open-at-end {}\n\
         Stream rate [events/s]: {:.1} total {:.1} per stream\n\
         Stream first event [ms]: {} ({from})\n\
         Stream gap [ms]: {} (between consecutive events)\n\
         Stream duration [ms]: {} (first event to end)",
        c.streams,
        c.events,
        s.events_per_stream,
        c.done,
        c.cut,
        c.stalled,
        c.empty,
        c.after_done,
        c.open_at_end,
        s.events_per_s,
        s.stream_events_per_s,
        spread(&s.first_event_ms),
        spread(&s.gap_ms),
        spread(&s.duration_ms),
    )
}

/// The call-rate block's three lines (no final line end).
pub(crate) fn call_rate_lines(c: &CallRate) -> String {
    format!(
        "Call rate [calls/s]: target {:.1} achieved {:.1} over {} connections \
         (scheduled {} issued {} completed {} lost {} unsent {} max-waiting {} \
         reconnects {} given-up {} abandoned {} evicted {})\n\
         Call lateness [ms]: {} (scheduled time to a connection{})\n\
         Call response [ms]: {} (scheduled time to first reply byte{})",
        c.target_per_s,
        c.achieved_per_s,
        c.connections,
        c.scheduled,
        c.issued,
        c.completed,
        c.lost,
        c.unsent,
        c.max_waiting,
        c.reconnects,
        c.given_up,
        c.abandoned,
        c.evicted,
        spread(&c.lateness_ms),
        if c.unsent > 0 {
            ", or to the end if unsent"
        } else {
            ""
        },
        spread(&c.response_ms),
        if c.unsent + c.abandoned > 0 {
            ", or to the end if unanswered"
        } else {
            ""
        },
    )
}

/// The two `-v` HTTP/2 lines (no final line end).
pub(crate) fn http2_lines(h: &Http2) -> String {
    let c = &h.counters;
    format!(
        "HTTP/2: connections {} streams {} reset {} goaway {} protocol-errors {}\n\
         HTTP/2 header compression: requests {} B sent for {} B (space savings {:.2}%) \
         replies {} B received for {} B (space savings {:.2}%)",
        c.connections,
        c.streams,
        c.streams_reset,
        c.goaways,
        c.protocol_errors,
        c.request_header_wire,
        c.request_header_decoded,
        h.request_space_savings_pct,
        c.reply_header_wire,
        c.reply_header_decoded,
        h.reply_space_savings_pct,
    )
}

/// The `-v` HTTP/3 line (no final line end).
pub(crate) fn http3_lines(h: &Http3) -> String {
    let c = &h.counters;
    format!(
        "HTTP/3: connections {} streams {} reset {} goaway {} protocol-errors {}\n\
         HTTP/3 QUIC: handshakes {} (mean {:.3} ms) 0-RTT {} sent {} accepted {} \
         rejected packets {} sent {} lost rtt {:.3} ms",
        c.connections,
        c.streams,
        c.streams_reset,
        c.goaways,
        c.protocol_errors,
        c.handshakes,
        h.handshake_ms,
        c.zero_rtt_sent,
        c.zero_rtt_accepted,
        c.zero_rtt_rejected,
        c.packets_sent,
        c.packets_lost,
        h.rtt_ms,
    )
}

/// The `-v` pacing lines: the overload policy's figures, then precise pacing's.
pub(crate) fn pacing_lines(p: &PacingStats) -> [String; 2] {
    let wake_mean = if p.wakeups > 0 {
        p.wake_late_sum_us as f64 / p.wakeups as f64
    } else {
        0.0
    };
    [
        format!(
            "Pacing: deferred {} unstarted {} in-flight-cap {} source-addrs {}",
            p.deferred, p.unstarted, p.inflight_cap, p.source_addrs
        ),
        format!(
            "Pacing: spins {} spin-time {:.1} ms wakeups {} wake-late avg {:.1} max {} us",
            p.spins,
            p.spin_us as f64 / 1000.0,
            p.wakeups,
            wake_mean,
            p.wake_late_max_us
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::report::{Facts, Report};
    use crate::model::run::RunInfo;
    use crate::model::stats::h2::H2Stats;
    use crate::model::stats::h3::H3Stats;
    use crate::model::stats::merge::Merge;
    use crate::model::stats::pool::PoolStats;
    use crate::model::stats::Stats;
    use std::time::Duration;

    fn report(s: &Stats, duration: f64, call_rate: f64) -> Report {
        let run = RunInfo {
            duration,
            cpu_user: 0.0,
            cpu_system: 0.0,
        };
        let facts = Facts {
            call_rate,
            servers: Vec::new(),
            validity: None,
        };
        Report::new(s, &run, &facts)
    }

    #[test]
    fn call_rate_lines_show_the_figures() {
        let mut a = PoolStats {
            connections: 2,
            scheduled: 10,
            issued: 8,
            max_waiting: 3,
            evicted: 1,
            ..PoolStats::default()
        };
        a.on_issued(Duration::from_micros(1500));
        a.on_response(Duration::from_micros(1800));
        assert!(report(&Stats::new(), 1.0, 10.0).call_rate.is_none());
        a.merge(&a.clone()).expect("no overflow");
        let mut s = Stats::new();
        s.pool = a;
        let r = report(&s, 2.0, 20.0);
        assert_eq!(
            call_rate_lines(r.call_rate.as_ref().expect("used")),
            "Call rate [calls/s]: target 20.0 achieved 9.0 over 4 connections (scheduled 20 \
             issued 18 completed 2 lost 0 unsent 0 max-waiting 6 reconnects 0 given-up 0 \
             abandoned 0 evicted 2)\n\
             Call lateness [ms]: avg 1.500 p50 1.500 p90 1.500 p99 1.500 max 1.500 \
             (scheduled time to a connection)\n\
             Call response [ms]: avg 1.800 p50 1.800 p90 1.800 p99 1.800 max 1.800 \
             (scheduled time to first reply byte)"
        );
    }

    #[test]
    fn stream_lines_show_the_figures_and_where_the_first_event_is_timed_from() {
        use crate::model::stats::stream::{StreamEnd, StreamStats};
        assert!(report(&Stats::new(), 1.0, 0.0).stream.is_none());
        let mut a = StreamStats {
            engines: 1,
            ..StreamStats::default()
        };
        // Values below 2048 µs: the histograms keep them exactly.
        a.on_event(3, None, Duration::from_micros(1500));
        a.on_event(3, Some(Duration::from_micros(1000)), Duration::ZERO);
        a.on_event(3, Some(Duration::from_micros(1200)), Duration::ZERO);
        a.on_end(StreamEnd {
            events: 3,
            done: true,
            cut: false,
            stalled: false,
            after_done: 1,
            open_at_end: false,
            duration: Some(Duration::from_micros(2000)),
        });
        let mut s = Stats::new();
        s.stream = a;
        let r = report(&s, 2.0, 0.0);
        assert_eq!(
            stream_lines(r.stream.as_ref().expect("used")),
            "Stream: 1 streams 3 events (3.0 per stream) done 1 cut 0 stalled 0 empty 0 \
             after-done 1 open-at-end 0\n\
             Stream rate [events/s]: 1.5 total 1500.0 per stream\n\
             Stream first event [ms]: avg 1.500 p50 1.500 p90 1.500 p99 1.500 max 1.500 \
             (from the request's send)\n\
             Stream gap [ms]: avg 1.100 p50 1.000 p90 1.200 p99 1.200 max 1.200 \
             (between consecutive events)\n\
             Stream duration [ms]: avg 2.000 p50 2.000 p90 2.000 p99 2.000 max 2.000 \
             (first event to end)"
        );
        s.stream.from_schedule = 1;
        let r = report(&s, 2.0, 10.0);
        let text = stream_lines(r.stream.as_ref().expect("used"));
        assert!(text.contains("(from the scheduled time)"), "{text}");
    }

    #[test]
    fn http2_lines_show_savings() {
        let mut a = H2Stats {
            connections: 1,
            streams: 10,
            request_header_wire: 300,
            request_header_decoded: 600,
            reply_header_wire: 250,
            reply_header_decoded: 1000,
            ..H2Stats::default()
        };
        assert!(report(&Stats::new(), 1.0, 0.0).http2.is_none());
        a.merge(&a.clone()).expect("no overflow");
        let mut s = Stats::new();
        s.http2 = a;
        let r = report(&s, 1.0, 0.0);
        assert_eq!(
            http2_lines(r.http2.as_ref().expect("used")),
            "HTTP/2: connections 2 streams 20 reset 0 goaway 0 protocol-errors 0\n\
             HTTP/2 header compression: requests 600 B sent for 1200 B (space savings \
             50.00%) replies 500 B received for 2000 B (space savings 75.00%)"
        );
    }

    #[test]
    fn http3_lines_show_counters_and_means() {
        assert!(report(&Stats::new(), 1.0, 0.0).http3.is_none());
        let mut s = Stats::new();
        s.http3 = H3Stats {
            connections: 2,
            handshakes: 2,
            handshake_sum_us: 3_000,
            zero_rtt_sent: 1,
            zero_rtt_accepted: 1,
            zero_rtt_rejected: 0,
            streams: 20,
            streams_reset: 1,
            goaways: 1,
            protocol_errors: 0,
            packets_sent: 100,
            packets_lost: 2,
            rtt_sum_us: 500,
            rtt_samples: 2,
        };
        let r = report(&s, 1.0, 0.0);
        assert_eq!(
            http3_lines(r.http3.as_ref().expect("used")),
            "HTTP/3: connections 2 streams 20 reset 1 goaway 1 protocol-errors 0\n\
             HTTP/3 QUIC: handshakes 2 (mean 1.500 ms) 0-RTT 1 sent 1 accepted 0 rejected \
             packets 100 sent 2 lost rtt 0.250 ms"
        );
    }

    #[test]
    fn pacing_lines_show_counts_and_extremes() {
        let mut a = PacingStats {
            deferred: 3,
            inflight_cap: 150,
            source_addrs: 8,
            spins: 2,
            spin_us: 1500,
            unstarted: 5,
            ..PacingStats::default()
        };
        a.on_wakeup(40);
        a.on_wakeup(200);
        a.on_wakeup(60);
        assert_eq!(
            pacing_lines(&a),
            [
                "Pacing: deferred 3 unstarted 5 in-flight-cap 150 source-addrs 8".to_string(),
                "Pacing: spins 2 spin-time 1.5 ms wakeups 3 wake-late avg 100.0 max 200 us"
                    .to_string(),
            ]
        );
    }
}
