//! Tests of `Stats`: errno classification, events, merging, and the schema guards —
//! `every_field_set` (a `Stats` with every field set, used by the JSON tests too) and
//! the checks that no field escapes serialization or `merge`. A separate file because
//! the guards are as long as the code they guard.

use std::time::Duration;

use serde::Serialize;

use super::*;

/// A `Stats` in which every field (every array element, every member of every
/// vector's elements) differs from `Stats::new()`'s: the schema tests use it so that
/// no field can escape a round trip or a merge. A new field must be set here too
/// (`every_field_differs_from_new` fails until it is).
pub(crate) fn every_field_set() -> Stats {
    let mut s = Stats::new();
    for i in 0..40u64 {
        s.on_connecting();
        s.on_lateness(Duration::from_micros(3 + i));
        s.on_connected(Duration::from_micros(90 + 7 * i));
        s.on_request_sent(68 + i % 3);
        s.on_response(Duration::from_micros(400 + 37 * i * i));
        let status = [42, 150, 200, 302, 404, 500, 600, 700, 800, 999][(i % 10) as usize];
        s.on_reply(
            status,
            239,
            1024 + i,
            1 + i % 2,
            Duration::from_micros(20 + i),
        );
        s.on_lifetime(Duration::from_micros(700 + 1_000 * i * i));
    }
    s.on_lifetime(Duration::from_secs(150));
    for k in 0..ERROR_KINDS {
        for _ in 0..=k {
            s.errors[k] += 1;
        }
    }
    s.max_concurrent = 7;
    s.max_burst = 3;
    s.unroutable = 2;
    s.connect_timeouts = 3;
    s.cert_rejected = 5;
    s.rate_samples.push(RateSample {
        replies: 30,
        sessions: 2,
        seconds: 5.000_123_456_789,
    });
    s.rate_samples.push(RateSample {
        replies: 21,
        sessions: 1,
        seconds: 0.1 + 0.2,
    });
    s.on_tls_handshake(false);
    s.on_tls_handshake(true);
    s.on_tls_handshake(true);
    s.on_session(true, Duration::from_millis(1200), 3, 4);
    s.on_session(false, Duration::from_millis(300), 1, 0);
    s.http2 = h2::H2Stats {
        connections: 3,
        streams: 40,
        request_header_wire: 1_560,
        request_header_decoded: 3_080,
        reply_header_wire: 1_200,
        reply_header_decoded: 9_560,
        streams_reset: 2,
        goaways: 1,
        protocol_errors: 1,
        http1_answers: 1,
        alpn_refused: 2,
    };
    s.http3 = h3::H3Stats {
        connections: 2,
        handshakes: 2,
        handshake_sum_us: 4_100,
        zero_rtt_sent: 1,
        zero_rtt_accepted: 1,
        zero_rtt_rejected: 1,
        streams: 30,
        streams_reset: 1,
        goaways: 1,
        protocol_errors: 1,
        packets_sent: 90,
        packets_lost: 3,
        rtt_sum_us: 700,
        rtt_samples: 2,
    };
    s.pool = pool::PoolStats {
        connections: 2,
        scheduled: 45,
        issued: 41,
        lost: 1,
        unsent: 4,
        max_waiting: 5,
        reconnects: 3,
        given_up: 1,
        evicted: 6,
        warm_up_us: 4_200,
        abandoned: 2,
        ..pool::PoolStats::default()
    };
    for i in 0..40u64 {
        s.pool.on_issued(Duration::from_micros(5 + i));
        s.pool.on_response(Duration::from_micros(300 + 11 * i));
    }
    s.stream = stream::StreamStats {
        engines: 1,
        from_schedule: 1,
        ..stream::StreamStats::default()
    };
    for i in 0..10u64 {
        s.stream
            .on_event(20 + i, None, Duration::from_micros(700 + 9 * i));
        s.stream
            .on_event(20, Some(Duration::from_micros(50 + i)), Duration::ZERO);
        s.stream.on_end(stream::StreamEnd {
            events: 2,
            done: i % 2 == 0,
            cut: i % 3 == 0,
            stalled: i % 4 == 0,
            after_done: i % 2,
            open_at_end: i == 9,
            duration: Some(Duration::from_micros(60 + i)),
        });
    }
    s.stream.on_end(stream::StreamEnd {
        events: 0,
        done: false,
        cut: true,
        stalled: false,
        after_done: 0,
        open_at_end: false,
        duration: None,
    });
    s.timeline.offered(0);
    s.roll_timeline(5, 0.5);
    // 64 ticks: the windows coarsen once (200 ms), so no member keeps its default.
    for tick in 1..=64 {
        s.roll_window(f64::from(tick) / 10.0, false);
    }
    s.client.add_engine(0.25, 1.0);
    s.client.add_wait(Some(0.01), 1.0);
    s.abandoned = 3;
    s.interrupted = true;
    s.ends = Some(ends::Ends {
        successful: 30,
        failed: 7,
        failed_after_reply: 2,
        unopened: 1,
        unanswered: 4,
        unanswered_max_us: 2_500_000,
    });
    s.pacing = pacing::PacingStats {
        deferred: 4,
        waited: 3,
        table_waited: 2,
        conn_table: 64,
        fd_limit: 1024,
        unstarted: 2,
        inflight_cap: 5_000,
        source_addrs: 8,
        spins: 30,
        spin_us: 2_100,
        table_peak: 40,
        ports_peak: 90,
        port_range: 28_232,
        ..pacing::PacingStats::default()
    };
    s.pacing.on_wakeup(55);
    for n in 1..=2u64 {
        let mut srv = ServerStats {
            connections: 10 * n,
            requests: 11 * n,
            replies_by_class: [n; 10],
            errors: [n + 1; ERROR_KINDS],
            response_sum_us: 0,
            ..ServerStats::default()
        };
        for us in [100 * n, 2_000 * n] {
            srv.response_sum_us += us;
            srv.response.record(us).expect("in range");
        }
        s.servers.push(srv);
    }
    s
}

mod unit {
    use super::*;
    use serde_json::Value;

    /// Asserts that every leaf of `base` differs in `full`, and that every array empty in
    /// `base` is not empty in `full`.
    fn assert_every_leaf_differs(base: &Value, full: &Value, at: &str) {
        match (base, full) {
            (Value::Object(b), Value::Object(f)) => {
                assert_eq!(b.len(), f.len(), "{at}: members");
                for (k, v) in b {
                    assert_every_leaf_differs(v, &f[k], &format!("{at}.{k}"));
                }
            }
            (Value::Array(b), Value::Array(f)) if !b.is_empty() => {
                assert_eq!(b.len(), f.len(), "{at}: length");
                for (i, (x, y)) in b.iter().zip(f).enumerate() {
                    assert_every_leaf_differs(x, y, &format!("{at}[{i}]"));
                }
            }
            (Value::Array(_), Value::Array(f)) => assert!(!f.is_empty(), "{at} is empty"),
            (b, f) => assert_ne!(b, f, "{at} is not set by every_field_set()"),
        }
    }

    fn value<T: Serialize>(t: &T) -> Value {
        serde_json::to_value(t).expect("serializable")
    }

    #[test]
    fn every_field_differs_from_new() {
        let full = every_field_set();
        // A new `Stats` leaves out its empty `stream` member; compare it with an empty one.
        let mut base = value(&Stats::new());
        base["stream"] = value(&stream::StreamStats::default());
        assert_every_leaf_differs(&base, &value(&full), "stats");
        for (i, srv) in full.servers.iter().enumerate() {
            let at = format!("stats.servers[{i}]");
            assert_every_leaf_differs(&value(&ServerStats::default()), &value(srv), &at);
        }
        let zero = RateSample {
            replies: 0,
            sessions: 0,
            seconds: 0.0,
        };
        for (i, r) in full.rate_samples.iter().enumerate() {
            let at = format!("stats.rate_samples[{i}]");
            assert_every_leaf_differs(&value(&zero), &value(r), &at);
        }
    }

    #[test]
    fn every_field_survives_serialization_and_merging_into_new() {
        let full = every_field_set();
        let text = serde_json::to_string(&full).expect("serializable");
        let back: Stats = serde_json::from_str(&text).expect("readable");
        assert_eq!(value(&back), value(&full));
        // Merging into an empty Stats is the identity, field by field.
        let mut merged = Stats::new();
        merged.merge(&back).expect("no overflow");
        assert_eq!(value(&merged), value(&full));
    }

    #[test]
    fn merging_twice_doubles_sums_and_keeps_extremes() {
        let full = every_field_set();
        let mut m = full.clone();
        m.merge(&full).expect("no overflow");
        assert_eq!(m.connections, 2 * full.connections);
        assert_eq!(m.max_concurrent, 2 * full.max_concurrent);
        assert_eq!(m.max_burst, full.max_burst);
        assert_eq!(m.status_200_302, [8, 8]);
        assert_eq!(m.tls_handshakes, [2, 4]);
        assert_eq!(m.unroutable, 4);
        assert_eq!(m.connect_timeouts, 6);
        assert_eq!(m.cert_rejected, 10);
        assert_eq!(m.lifetime_sumsq_us, 2 * full.lifetime_sumsq_us);
        assert_eq!(m.lifetime_min_us, full.lifetime_min_us);
        assert_eq!(m.lifetime_max_us, full.lifetime_max_us);
        assert_eq!(m.rate_samples[1].replies, 42);
        assert_eq!(m.rate_samples[1].seconds, full.rate_samples[1].seconds);
        assert_eq!(m.servers[1].connections, 40);
        assert_eq!(m.servers[1].response.len(), 4);
        assert_eq!(m.hist.lateness.len(), 80);
        assert_eq!(m.windows.windows[0].response.count(), 80);
        assert_eq!(m.windows.width_ms, full.windows.width_ms);
        assert_eq!(m.session_lengths, [2, 0, 0, 0, 2]);
    }

    #[test]
    fn overflowing_merges_and_totals_are_errors_naming_the_field() {
        let mut a = every_field_set();
        let mut b = Stats::new();
        b.servers.push(ServerStats::default());
        b.servers.push(ServerStats::default());
        b.servers[1].errors[3] = u64::MAX;
        let e = a.merge(&b).expect_err("overflow");
        assert_eq!(
            e.to_string(),
            "servers[1].errors[3]: 3 + 18446744073709551615 overflows 64 bits"
        );
        let mut c = Stats::new();
        c.errors = [u64::MAX / 2 + 1, u64::MAX / 2 + 1, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            c.check_totals().expect_err("total").to_string(),
            "errors: the total overflows 64 bits"
        );
        c.errors = [0; ERROR_KINDS];
        c.servers.push(ServerStats::default());
        c.servers[0].replies_by_class[2] = u64::MAX;
        c.servers[0].replies_by_class[3] = 1;
        assert_eq!(
            c.check_totals().expect_err("total").to_string(),
            "servers[0].replies_by_class: the total overflows 64 bits"
        );
        assert_eq!(every_field_set().check_totals(), Ok(()));
    }

    #[test]
    fn values_beyond_the_histogram_range_are_clamped_not_dropped() {
        let mut s = Stats::new();
        s.on_response(Duration::from_secs(7_200));
        s.on_lateness(Duration::ZERO);
        assert_eq!(s.hist.response.len(), 1);
        assert!(s
            .hist
            .response
            .equivalent(s.hist.response.max(), HIST_MAX_US));
        assert_eq!(s.hist.lateness.len(), 1);
        assert_eq!(s.hist.lateness.max(), 1);
    }

    #[test]
    fn unknown_members_are_refused() {
        let mut v = value(&Stats::new());
        v["from_the_future"] = Value::from(1);
        let e = serde_json::from_value::<Stats>(v).expect_err("unknown");
        assert!(
            e.to_string().starts_with("unknown field `from_the_future`"),
            "{e}"
        );
    }

    #[test]
    fn errno_classification_follows_reference_with_fixes() {
        let cases = [
            (libc::EMFILE, ErrorKind::FdUnavail),
            (libc::EINVAL, ErrorKind::FdUnavail),
            (libc::ENFILE, ErrorKind::FtabFull),
            (libc::ECONNREFUSED, ErrorKind::ConnRefused),
            (libc::ETIMEDOUT, ErrorKind::SocketTimo),
            (libc::ECONNRESET, ErrorKind::ConnReset),
            (libc::EPIPE, ErrorKind::ConnReset),
            (libc::EADDRNOTAVAIL, ErrorKind::AddrUnavail),
            (libc::EADDRINUSE, ErrorKind::Other),
            (libc::EHOSTUNREACH, ErrorKind::Other),
            (libc::ENETUNREACH, ErrorKind::Other),
        ];
        for (errno, kind) in cases {
            assert_eq!(ErrorKind::from_errno(errno), kind, "errno {errno}");
        }
    }

    #[test]
    fn lifetimes_fill_bins_and_extremes() {
        let mut s = Stats::new();
        s.on_lifetime(Duration::from_micros(400));
        s.on_lifetime(Duration::from_micros(1_500));
        s.on_lifetime(Duration::from_secs(200));
        assert_eq!(s.lifetimes, 3);
        assert_eq!(s.lifetime_bins[0], 1);
        assert_eq!(s.lifetime_bins[1], 1);
        assert_eq!(s.lifetime_bins[LIFETIME_BINS], 1);
        assert_eq!(s.lifetime_min_us, 400);
        assert_eq!(s.lifetime_max_us, 200_000_000);
    }

    #[test]
    fn merge_adds_counters_and_samples() {
        let mut a = Stats::new();
        let mut b = Stats::new();
        a.on_connecting();
        a.on_reply(200, 10, 20, 0, Duration::from_micros(5));
        a.rate_samples.push(RateSample {
            replies: 3,
            sessions: 0,
            seconds: 5.0,
        });
        b.on_connecting();
        b.on_reply(404, 1, 2, 0, Duration::from_micros(7));
        b.on_error(ErrorKind::ConnReset);
        b.rate_samples.push(RateSample {
            replies: 4,
            sessions: 0,
            seconds: 5.0,
        });
        b.rate_samples.push(RateSample {
            replies: 1,
            sessions: 0,
            seconds: 5.0,
        });
        b.max_burst = 4;
        a.merge(&b).expect("no overflow");
        assert_eq!(a.connections, 2);
        assert_eq!(a.replies(), 2);
        assert_eq!(a.replies_by_class[2], 1);
        assert_eq!(a.replies_by_class[4], 1);
        assert_eq!(a.reply_content_bytes, 22);
        assert_eq!(a.total_errors(), 1);
        assert_eq!(a.rate_samples.len(), 2);
        assert_eq!(a.rate_samples[0].replies, 7);
        assert_eq!(a.max_burst, 4);
        assert_eq!(a.hist.transfer.len(), 2);
    }

    #[test]
    fn sessions_are_counted_and_merged() {
        let mut a = Stats::new();
        a.on_session(true, Duration::from_millis(200), 1, 4);
        a.on_session(false, Duration::from_millis(50), 2, 1);
        let mut b = Stats::new();
        b.on_session(true, Duration::from_millis(100), 3, 6);
        a.merge(&b).expect("no overflow");
        assert_eq!((a.sessions_ok, a.sessions_failed), (2, 1));
        assert_eq!(a.session_connects_ok, 4);
        assert_eq!(a.session_life_ok_us, 300_000);
        assert_eq!(a.session_life_failed_us, 50_000);
        assert_eq!(a.session_lengths, vec![0, 1, 0, 0, 1, 0, 1]);
    }
}
