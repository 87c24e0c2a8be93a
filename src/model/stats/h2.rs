//! `H2Stats`: what only HTTP/2 connections measure — header compression both ways
//! (h2load's "space savings"), streams reset by the server, GOAWAYs, and connections
//! ended by a protocol error.
//!
//! Owns the figures and their merge; `Stats` holds one (`Stats::http2`). Fed by
//! `conn::Conn` for connections that speak HTTP/2; all zero otherwise. Printed by the
//! verbose classic report and carried in JSON through `Stats`' serde schema.

use super::merge::{Merge, MergeError};

/// HTTP/2 figures of one engine (or merged from several).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct H2Stats {
    /// Connections that completed the preface exchange's first step (ALPN `h2` or
    /// prior knowledge) and sent their preface.
    pub connections: u64,
    /// Streams opened (requests sent).
    pub streams: u64,
    /// Request header blocks: HPACK bytes on the wire.
    pub request_header_wire: u64,
    /// Request header fields: Σ name + value (decoded).
    pub request_header_decoded: u64,
    /// Reply header blocks (HEADERS + CONTINUATION payloads) of completed replies.
    pub reply_header_wire: u64,
    /// Their decoded size, Σ name + value (`Reply size [B]: header` + footer).
    pub reply_header_decoded: u64,
    /// Streams the server reset with RST_STREAM (each counted as an `other` error).
    pub streams_reset: u64,
    /// GOAWAY frames received.
    pub goaways: u64,
    /// Connections ended because the server broke the protocol (a subset of the
    /// `other` errors).
    pub protocol_errors: u64,
}

/// 1 − wire / decoded as a percentage (h2load's "space savings"); 0 without headers.
pub fn savings(wire: u64, decoded: u64) -> f64 {
    if decoded == 0 {
        0.0
    } else {
        (1.0 - wire as f64 / decoded as f64) * 100.0
    }
}

impl Merge for H2Stats {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        crate::merge_fields!(H2Stats, self, o;
            connections: sum,
            streams: sum,
            request_header_wire: sum,
            request_header_decoded: sum,
            reply_header_wire: sum,
            reply_header_decoded: sum,
            streams_reset: sum,
            goaways: sum,
            protocol_errors: sum,
        )
    }
}

impl H2Stats {
    /// The verbose report's line, or None when no HTTP/2 connection was made.
    pub fn report_line(&self) -> Option<String> {
        if self.connections == 0 {
            return None;
        }
        Some(format!(
            "HTTP/2: connections {} streams {} reset {} goaway {} protocol-errors {}\n\
             HTTP/2 header compression: requests {} B sent for {} B (space savings {:.2}%) \
             replies {} B received for {} B (space savings {:.2}%)",
            self.connections,
            self.streams,
            self.streams_reset,
            self.goaways,
            self.protocol_errors,
            self.request_header_wire,
            self.request_header_decoded,
            savings(self.request_header_wire, self.request_header_decoded),
            self.reply_header_wire,
            self.reply_header_decoded,
            savings(self.reply_header_wire, self.reply_header_decoded),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_and_the_line_shows_savings() {
        let mut a = H2Stats {
            connections: 1,
            streams: 10,
            request_header_wire: 300,
            request_header_decoded: 600,
            reply_header_wire: 250,
            reply_header_decoded: 1000,
            ..H2Stats::default()
        };
        assert_eq!(H2Stats::default().report_line(), None);
        a.merge(&a.clone()).expect("no overflow");
        assert_eq!(a.streams, 20);
        assert_eq!(
            a.report_line().as_deref(),
            Some(
                "HTTP/2: connections 2 streams 20 reset 0 goaway 0 protocol-errors 0\n\
                 HTTP/2 header compression: requests 600 B sent for 1200 B (space savings \
                 50.00%) replies 500 B received for 2000 B (space savings 75.00%)"
            )
        );
        assert_eq!(savings(0, 0), 0.0);
    }
}
