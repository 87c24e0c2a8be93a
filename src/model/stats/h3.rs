//! `H3Stats`: what only HTTP/3 connections measure — QUIC handshakes (time, resumed,
//! 0-RTT), request streams reset by the server, GOAWAYs, connections ended by a
//! protocol error, and QUIC's own packet and RTT figures.
//!
//! Owns the figures and their merge; `Stats` holds one (`Stats::http3`). Fed by
//! `conn::Conn` for connections that speak HTTP/3; all zero otherwise. The report's
//! `http3` figures (`model::report`) add the means, printed by `output::extras`
//! with `-v`.

use super::merge::{merge_fields, Merge, MergeError};

/// HTTP/3 figures of one engine (or merged from several).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct H3Stats {
    /// QUIC connections started.
    pub(crate) connections: u64,
    /// Handshakes completed, and their total time (µs, from the first Initial).
    pub(crate) handshakes: u64,
    pub(crate) handshake_sum_us: u64,
    /// Connections that sent requests as 0-RTT data, those whose 0-RTT the server
    /// accepted, and those whose 0-RTT it rejected (their requests were sent again
    /// after the handshake).
    pub(crate) zero_rtt_sent: u64,
    pub(crate) zero_rtt_accepted: u64,
    /// (Documents written before this figure existed read it as 0.)
    #[serde(default)]
    pub(crate) zero_rtt_rejected: u64,
    /// Request streams opened (requests sent).
    pub(crate) streams: u64,
    /// Streams the server reset (each counted as an `other` error).
    pub(crate) streams_reset: u64,
    /// GOAWAY frames received.
    pub(crate) goaways: u64,
    /// Connections ended because the server broke the protocol, or closed the
    /// connection with an error (a subset of the `other` errors).
    pub(crate) protocol_errors: u64,
    /// QUIC packets sent and declared lost, over all ended connections.
    pub(crate) packets_sent: u64,
    pub(crate) packets_lost: u64,
    /// Smoothed RTT at the end of each connection (µs, summed) and how many.
    pub(crate) rtt_sum_us: u64,
    pub(crate) rtt_samples: u64,
}

impl H3Stats {
    /// Mean handshake time, ms (0 without handshakes).
    pub(crate) fn handshake_ms(&self) -> f64 {
        mean_ms(self.handshake_sum_us, self.handshakes)
    }

    /// Mean smoothed RTT, ms (0 without samples).
    pub(crate) fn rtt_ms(&self) -> f64 {
        mean_ms(self.rtt_sum_us, self.rtt_samples)
    }
}

/// `sum_us / n` in ms, 0 for no values.
fn mean_ms(sum_us: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum_us as f64 / 1e3 / n as f64
    }
}

impl Merge for H3Stats {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(H3Stats, self, o;
            connections: sum,
            handshakes: sum,
            handshake_sum_us: sum,
            zero_rtt_sent: sum,
            zero_rtt_accepted: sum,
            zero_rtt_rejected: sum,
            streams: sum,
            streams_reset: sum,
            goaways: sum,
            protocol_errors: sum,
            packets_sent: sum,
            packets_lost: sum,
            rtt_sum_us: sum,
            rtt_samples: sum,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_and_means() {
        let mut a = H3Stats {
            connections: 2,
            handshakes: 2,
            handshake_sum_us: 3_000,
            streams: 10,
            rtt_sum_us: 500,
            rtt_samples: 2,
            ..H3Stats::default()
        };
        a.merge(&a.clone()).expect("no overflow");
        assert_eq!(a.connections, 4);
        assert_eq!(a.streams, 20);
        assert_eq!(a.handshake_ms(), 1.5);
        assert_eq!(a.rtt_ms(), 0.25);
        assert_eq!(H3Stats::default().rtt_ms(), 0.0);
        let mut big = H3Stats {
            packets_sent: u64::MAX,
            ..H3Stats::default()
        };
        let one = H3Stats {
            packets_sent: 1,
            ..H3Stats::default()
        };
        assert!(big.merge(&one).is_err(), "overflow is an error, not a wrap");
    }
}
