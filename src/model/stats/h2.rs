//! `H2Stats`: what only HTTP/2 connections measure — header compression both ways
//! (h2load's "space savings"), streams reset by the server, GOAWAYs, connections
//! ended by a protocol error, and the two ways a server turns HTTP/2 down (an HTTP/1
//! answer to the preface, no `h2` by ALPN), which `advice` names as the cause.
//!
//! Owns the figures and their merge; `Stats` holds one (`Stats::http2`). Fed by
//! `conn::Conn` for connections that speak HTTP/2; all zero otherwise. Carried in JSON
//! through `Stats`' serde schema; the report's `http2` figures (`model::report`) add
//! the space savings, printed by `output::extras` with `-v`.

use super::merge::{merge_fields, Merge, MergeError};

/// HTTP/2 figures of one engine (or merged from several).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct H2Stats {
    /// Connections that completed the preface exchange's first step (ALPN `h2` or
    /// prior knowledge) and sent their preface.
    pub(crate) connections: u64,
    /// Streams opened (requests sent).
    pub(crate) streams: u64,
    /// Request header blocks: HPACK bytes on the wire.
    pub(crate) request_header_wire: u64,
    /// Request header fields: Σ name + value (decoded).
    pub(crate) request_header_decoded: u64,
    /// Reply header blocks (HEADERS + CONTINUATION payloads) of completed replies.
    pub(crate) reply_header_wire: u64,
    /// Their decoded size, Σ name + value (`Reply size [B]: header` + footer).
    pub(crate) reply_header_decoded: u64,
    /// Streams the server reset with RST_STREAM (each counted as an `other` error).
    pub(crate) streams_reset: u64,
    /// GOAWAY frames received.
    pub(crate) goaways: u64,
    /// Connections ended because the server broke the protocol (a subset of the
    /// `other` errors).
    pub(crate) protocol_errors: u64,
    /// Of those, connections whose server answered the HTTP/2 preface with an
    /// HTTP/1 reply: a port that does not speak h2c (absent from documents written
    /// before it).
    #[serde(default)]
    pub(crate) http1_answers: u64,
    /// TLS connections whose server did not offer `h2` by ALPN (each an `other`
    /// error; absent from documents written before it).
    #[serde(default)]
    pub(crate) alpn_refused: u64,
}

/// 1 − wire / decoded as a percentage (h2load's "space savings"); 0 without headers.
pub(crate) fn savings(wire: u64, decoded: u64) -> f64 {
    if decoded == 0 {
        0.0
    } else {
        (1.0 - wire as f64 / decoded as f64) * 100.0
    }
}

impl Merge for H2Stats {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(H2Stats, self, o;
            connections: sum,
            streams: sum,
            request_header_wire: sum,
            request_header_decoded: sum,
            reply_header_wire: sum,
            reply_header_decoded: sum,
            streams_reset: sum,
            goaways: sum,
            protocol_errors: sum,
            http1_answers: sum,
            alpn_refused: sum,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_and_savings() {
        let mut a = H2Stats {
            connections: 1,
            streams: 10,
            request_header_wire: 300,
            request_header_decoded: 600,
            reply_header_wire: 250,
            reply_header_decoded: 1000,
            ..H2Stats::default()
        };
        a.merge(&a.clone()).expect("no overflow");
        assert_eq!(a.streams, 20);
        assert_eq!(
            savings(a.request_header_wire, a.request_header_decoded),
            50.0
        );
        assert_eq!(savings(0, 0), 0.0);
    }
}
