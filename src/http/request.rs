//! Request rendering: the bytes of each request, built once per URI and reused.
//!
//! Owns the exact request layout of reference §4.6 (with `User-Agent: rshperf/<ver>`,
//! the same length as httperf's) and the pipelined burst buffer (the request repeated
//! `--burst-length` times so a whole burst goes out in one write). Does no I/O.

use crate::config::{Config, HttpVersion};

/// The User-Agent product token (`rshperf/0.1.0`: as long as `httperf/0.9.0`).
pub const USER_AGENT: &str = concat!("rshperf/", env!("CARGO_PKG_VERSION"));

/// Renders one request for `uri` with `method` (and an optional body) from `cfg`.
pub fn render(cfg: &Config, method: &str, uri: &str, body: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(128 + cfg.add_header.len() + body.len());
    r.extend_from_slice(method.as_bytes());
    r.push(b' ');
    r.extend_from_slice(uri.as_bytes());
    match cfg.http_version {
        HttpVersion::V11 => r.extend_from_slice(b" HTTP/1.1\r\n"),
        HttpVersion::V10 => r.extend_from_slice(b" HTTP/1.0\r\n"),
    }
    r.extend_from_slice(b"User-Agent: ");
    r.extend_from_slice(USER_AGENT.as_bytes());
    r.extend_from_slice(b"\r\n");
    if cfg.http_version == HttpVersion::V10 {
        r.extend_from_slice(b"Connection: keep-alive\r\n");
    }
    if !cfg.no_host_hdr {
        r.extend_from_slice(b"Host: ");
        r.extend_from_slice(cfg.host_header().as_bytes());
        r.extend_from_slice(b"\r\n");
    }
    r.extend_from_slice(&cfg.add_header);
    r.extend_from_slice(b"\r\n");
    r.extend_from_slice(body);
    r
}

/// The request of the request-oriented workload, and a burst of it.
#[derive(Debug, Clone)]
pub struct RequestSet {
    /// `--burst-length` copies of the request, back to back.
    burst: Vec<u8>,
    /// Length of one request.
    len: usize,
    /// The method is exactly `HEAD` (no reply body expected).
    head: bool,
}

impl RequestSet {
    /// Renders `--method --uri` once and repeats it `--burst-length` times.
    pub fn from_config(cfg: &Config) -> RequestSet {
        let one = render(cfg, &cfg.method, &cfg.uri, b"");
        let copies = usize::try_from(cfg.burst_length.max(1)).unwrap_or(1);
        RequestSet {
            len: one.len(),
            burst: one.repeat(copies),
            head: cfg.method == "HEAD",
        }
    }

    /// Length of one request, bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for an empty request (never: a request line always has bytes).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first `calls` requests of a burst.
    pub fn burst(&self, calls: usize) -> &[u8] {
        &self.burst[..self.len * calls]
    }

    /// Whether replies to this request carry no body (`HEAD`).
    pub fn head(&self) -> bool {
        self.head
    }
}
