//! Incremental HTTP/1.x reply parser: status line, headers, body framing.
//!
//! Owns the per-connection parse state of one reply at a time: a byte-driven state
//! machine that keeps only counters, a small fixed line buffer (enough to recognise
//! the status line and the framing headers) and never allocates. Splitting the input
//! at any byte boundary gives exactly the same result. Handles Content-Length, chunked
//! bodies with trailers, close-delimited bodies, HEAD, interim 1xx replies (skipped:
//! their bytes count as header bytes of the final reply), 204/304, `Connection: close`.
//! Does not do I/O, timing or statistics: callers feed bytes and read the `Reply`
//! counters; the optional `ReplySink` sees raw pieces for `--print-reply` and cookies.

/// Why a reply could not be parsed. Every variant fails the connection as `other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyError {
    /// The first line is not `HTTP/<d>.<d> <3 digits>` (includes binary garbage and
    /// HTTP/0.9-style bodies without a status line).
    BadStatusLine,
    /// A header block (status line + headers, interim replies included) larger than
    /// `MAX_HEADER_BLOCK`.
    HeaderTooLarge,
    /// Content-Length negative, not a number, too large, or conflicting duplicates.
    BadContentLength,
    /// Transfer-Encoding other than `chunked`.
    BadTransferEncoding,
    /// A chunk-size line that is not hex, or a size that overflows.
    BadChunk,
    /// A trailer block larger than `MAX_HEADER_BLOCK`.
    TrailerTooLarge,
}

/// Largest accepted header block (and trailer block), bytes.
pub const MAX_HEADER_BLOCK: u64 = 64 * 1024;

/// Receives raw pieces of the reply as they are parsed (for `--print-reply` and
/// `--session-cookies`). Every method has an empty default; the parser is generic over
/// the sink, so the empty `NoSink` costs nothing.
pub trait ReplySink {
    /// Raw header-block bytes (status line, headers, blank line; interim replies too),
    /// in order, possibly split anywhere.
    fn header_bytes(&mut self, _bytes: &[u8]) {}
    /// Entity body bytes (chunk data only for chunked replies), in order.
    fn body_bytes(&mut self, _bytes: &[u8]) {}
}

/// A sink that ignores everything.
pub struct NoSink;
impl ReplySink for NoSink {}

/// What `feed` found in the bytes it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// All bytes were consumed and the reply is not complete yet.
    NeedMore,
    /// The reply completed after consuming this many bytes; the rest belongs to the next
    /// reply (or is surplus).
    Complete(usize),
}

/// Counters of the reply being parsed (valid after completion; partial before).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reply {
    /// Final status code (0 until the final status line has been parsed).
    pub status: u16,
    /// Bytes of the header block(s): status lines, headers and blank lines, including
    /// those of skipped interim 1xx replies.
    pub header_bytes: u64,
    /// Entity bytes (chunk data only for chunked bodies).
    pub content_bytes: u64,
    /// Chunked: bytes of trailer lines plus the final blank line (2 when no trailers).
    pub footer_bytes: u64,
    /// The server will close (or asked to close) after this reply: `Connection: close`,
    /// or HTTP/1.0 without `Connection: keep-alive`, or a close-delimited body.
    pub close: bool,
}

/// The incremental parser for one connection (reset between replies).
#[derive(Debug, Clone)]
pub struct ReplyParser {}

impl ReplyParser {
    /// A parser ready for a reply.
    pub fn new() -> Self {
        todo!()
    }

    /// Prepares for the next reply; `head` = the request method was exactly `HEAD`
    /// (no body expected whatever the headers say).
    pub fn start(&mut self, head: bool) {
        todo!()
    }

    /// True once the final status line has been parsed (the "reply start" event for
    /// response time); the caller checks it after each `feed`.
    pub fn status_seen(&self) -> bool {
        todo!()
    }

    /// The counters so far.
    pub fn reply(&self) -> &Reply {
        todo!()
    }

    /// Feeds received bytes. On `Complete(n)` the reply ended after `n` bytes of `data`.
    pub fn feed<S: ReplySink>(&mut self, data: &[u8], sink: &mut S) -> Result<Progress, ReplyError> {
        todo!()
    }

    /// The peer closed the connection (read returned 0) while this reply was being
    /// parsed. Returns true when that completes the reply (a close-delimited body, i.e.
    /// headers done and no Content-Length / chunked framing); false when the reply is
    /// incomplete (EOF before or inside the header block, or inside a length-delimited
    /// or chunked body), which the caller counts as `connreset`.
    pub fn on_eof(&mut self) -> bool {
        todo!()
    }

    /// True once any byte of this reply has been fed.
    pub fn started(&self) -> bool {
        todo!()
    }
}

impl Default for ReplyParser {
    fn default() -> Self {
        Self::new()
    }
}
