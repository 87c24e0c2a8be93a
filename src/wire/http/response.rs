//! Incremental HTTP/1.x reply parser: status line, headers, body framing.
//!
//! Owns the per-connection parse state of one reply at a time: a byte-driven state
//! machine that keeps only counters, a small fixed line buffer (enough to recognise
//! the status line and the framing headers) and never allocates. Splitting the input
//! at any byte boundary gives exactly the same result. Handles Content-Length, chunked
//! bodies with trailers, close-delimited bodies, HEAD, interim 1xx replies (skipped:
//! their bytes count as header bytes of the final reply), 204/304, `Connection: close`.
//! Does not do I/O, timing or statistics: callers feed bytes and read the `Reply`
//! counters; the optional `ReplySink` sees raw pieces for `--print-reply` and cookies,
//! and the start of a body (with the stream format its `Content-Type` announces) for
//! `--stream`.

use crate::wire::events::Format;

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
pub(crate) const MAX_HEADER_BLOCK: u64 = 64 * 1024;

/// Receives raw pieces of the reply as they are parsed (for `--print-reply` and
/// `--session-cookies`). Every method has an empty default; the parser is generic over
/// the sink, so the empty `NoSink` costs nothing.
pub trait ReplySink {
    /// Raw header-block bytes (status line, headers, blank line; interim replies too),
    /// in order, possibly split anywhere.
    fn header_bytes(&mut self, _bytes: &[u8]) {}
    /// The header block of a reply with a body ended (`reply`: its status, header
    /// bytes and Content-Type's stream format so far); its body bytes follow.
    fn body_start(&mut self, _reply: &Reply) {}
    /// Entity body bytes (chunk data only for chunked replies), in order.
    fn body_bytes(&mut self, _bytes: &[u8]) {}
    /// Raw trailer-block bytes of a chunked reply (trailer lines and the final blank
    /// line, i.e. exactly the bytes counted as footer), in order.
    fn footer_bytes(&mut self, _bytes: &[u8]) {}
}

/// A sink that ignores everything.
#[cfg(test)]
pub(crate) struct NoSink;
#[cfg(test)]
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
    pub(crate) status: u16,
    /// Bytes of the header block(s): status lines, headers and blank lines, including
    /// those of skipped interim 1xx replies.
    pub header_bytes: u64,
    /// Entity bytes (chunk data only for chunked bodies).
    pub content_bytes: u64,
    /// Chunked: bytes of trailer lines plus the final blank line (2 when no trailers).
    pub footer_bytes: u64,
    /// The server will close (or asked to close) after this reply: `Connection: close`,
    /// or HTTP/1.0 without `Connection: keep-alive`, or a close-delimited body.
    pub(crate) close: bool,
    /// The stream of events its `Content-Type` announces (`Format::from_content_type`;
    /// the last `Content-Type` line counts), if any.
    pub(crate) stream: Option<Format>,
}

/// The incremental parser for one connection (reset between replies).
///
/// All state is inline (no heap): counters, the position inside the status line or
/// chunk-size line, the framing facts learnt from the headers, and `line`, which keeps
/// the first `LINE_CAP` bytes of the current header line so the framing headers can be
/// recognised at its LF. On an error the counters and the sink include the input up to
/// and including the byte that proved it, so even failures are split-invariant.
#[derive(Debug, Clone)]
pub struct ReplyParser {
    /// Where in the reply the next byte belongs.
    state: State,
    /// The request was `HEAD`: no body whatever the headers say.
    head: bool,
    /// Counters reported to the caller.
    reply: Reply,
    /// Any byte of this reply has been fed.
    started: bool,
    /// The final (non-interim) status line has been parsed.
    status_seen: bool,
    /// Position inside the status line (see the `SP_*` constants).
    status_pos: u8,
    /// Status code of the status line being (or last) parsed.
    code: u16,
    /// HTTP major and minor version of the current status line.
    major: u8,
    minor: u8,
    /// The header block being parsed belongs to an interim 1xx reply.
    interim: bool,
    /// First `LINE_CAP` bytes of the current header line (LF excluded).
    line: [u8; LINE_CAP],
    /// Length of the current header line so far (may exceed `LINE_CAP`).
    line_len: usize,
    /// Content-Length value, once seen.
    content_length: Option<u64>,
    /// Some Transfer-Encoding header was seen.
    te_any: bool,
    /// The last transfer coding seen is `chunked`.
    te_last_chunked: bool,
    /// Every transfer coding seen is `identity`.
    te_all_identity: bool,
    /// `Connection: close` seen.
    conn_close: bool,
    /// `Connection: keep-alive` seen.
    keep_alive: bool,
    /// Bytes left in a Content-Length body or in the current chunk.
    remaining: u64,
    /// Position inside the chunk-size line (see the `CS_*` constants).
    chunk_pos: u8,
    /// Chunk size being accumulated.
    chunk_size: u64,
    /// Bytes of the current chunk-size line so far.
    chunk_line: usize,
    /// Bytes of the current trailer line so far (LF excluded).
    trailer_len: usize,
    /// The current trailer line starts with CR (a CRLF-only line is the end).
    trailer_first_cr: bool,
}

/// Where in the reply the parser is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Inside a status line (interim or final).
    Status,
    /// Inside the header lines after a status line.
    Header,
    /// Inside a Content-Length body (`remaining` bytes left).
    Body,
    /// Inside a close-delimited body: everything until EOF.
    UntilEof,
    /// Inside a chunk-size line.
    ChunkSize,
    /// Inside chunk data (`remaining` bytes left).
    ChunkData,
    /// Expecting the CR (or bare LF) after chunk data.
    ChunkCr,
    /// Expecting the LF after chunk data and CR.
    ChunkLf,
    /// Inside the trailer block after the last chunk.
    Trailer,
    /// The reply is complete; `start` prepares the next one.
    Done,
    /// The reply failed; every further `feed` repeats the error.
    Failed(ReplyError),
}

/// Header-line bytes kept for interpretation; longer lines only have their tail ignored.
const LINE_CAP: usize = 128;
/// Longest accepted chunk-size line (size, extensions, CRLF), bytes.
const MAX_CHUNK_LINE: usize = 4096;

/// Status-line positions: 0..=4 inside `HTTP/`, then major, dot, minor, the first
/// space, further spaces or the first code digit, two more digits, the terminator,
/// and the rest of the line (reason phrase) up to LF.
const SP_MAJOR: u8 = 5;
const SP_DOT: u8 = 6;
const SP_MINOR: u8 = 7;
const SP_SPACE: u8 = 8;
const SP_SPACES: u8 = 9;
const SP_DIGIT2: u8 = 10;
const SP_DIGIT3: u8 = 11;
const SP_END: u8 = 12;
const SP_REST: u8 = 13;

/// Chunk-size-line positions: first hex digit, more hex digits, whitespace after the
/// size, extensions (anything up to LF), LF after CR.
const CS_FIRST: u8 = 0;
const CS_HEX: u8 = 1;
const CS_WS: u8 = 2;
const CS_EXT: u8 = 3;
const CS_LF: u8 = 4;

impl ReplyParser {
    /// A parser ready for a reply.
    pub fn new() -> Self {
        Self {
            state: State::Status,
            head: false,
            reply: Reply::default(),
            started: false,
            status_seen: false,
            status_pos: 0,
            code: 0,
            major: 0,
            minor: 0,
            interim: false,
            line: [0; LINE_CAP],
            line_len: 0,
            content_length: None,
            te_any: false,
            te_last_chunked: false,
            te_all_identity: true,
            conn_close: false,
            keep_alive: false,
            remaining: 0,
            chunk_pos: CS_FIRST,
            chunk_size: 0,
            chunk_line: 0,
            trailer_len: 0,
            trailer_first_cr: false,
        }
    }

    /// Prepares for the next reply; `head` = the request method was exactly `HEAD`
    /// (no body expected whatever the headers say).
    pub fn start(&mut self, head: bool) {
        *self = Self {
            head,
            ..Self::new()
        };
    }

    /// True once the final status line has been parsed (the "reply start" event for
    /// response time); the caller checks it after each `feed`.
    pub fn status_seen(&self) -> bool {
        self.status_seen
    }

    /// The counters so far.
    pub fn reply(&self) -> &Reply {
        &self.reply
    }

    /// Feeds received bytes. On `Complete(n)` the reply ended after `n` bytes of `data`.
    ///
    /// Feeding after completion without `start` consumes nothing and returns
    /// `Complete(0)`; feeding after an error returns the same error again.
    pub fn feed<S: ReplySink>(
        &mut self,
        data: &[u8],
        sink: &mut S,
    ) -> Result<Progress, ReplyError> {
        match self.state {
            State::Done => return Ok(Progress::Complete(0)),
            State::Failed(e) => return Err(e),
            _ => {}
        }
        if !data.is_empty() {
            self.started = true;
        }
        let mut i = 0;
        loop {
            match self.state {
                State::Done => return Ok(Progress::Complete(i)),
                State::Failed(e) => return Err(e),
                _ if i == data.len() => return Ok(Progress::NeedMore),
                State::Status | State::Header => {
                    let from = i;
                    let r = self.head_block(data, &mut i);
                    sink.header_bytes(&data[from..i]);
                    self.check(r)?;
                    if matches!(self.state, State::Body | State::ChunkSize | State::UntilEof) {
                        sink.body_start(&self.reply);
                    }
                }
                State::Body | State::ChunkData => {
                    let n = take(self.remaining, data.len() - i);
                    sink.body_bytes(&data[i..i + n]);
                    i += n;
                    self.reply.content_bytes += n as u64;
                    self.remaining -= n as u64;
                    if self.remaining == 0 {
                        self.state = if self.state == State::Body {
                            State::Done
                        } else {
                            State::ChunkCr
                        };
                    }
                }
                State::UntilEof => {
                    sink.body_bytes(&data[i..]);
                    self.reply.content_bytes += (data.len() - i) as u64;
                    return Ok(Progress::NeedMore);
                }
                State::ChunkSize => {
                    let r = self.chunk_size_line(data, &mut i);
                    self.check(r)?;
                }
                State::ChunkCr | State::ChunkLf => {
                    let b = data[i];
                    i += 1;
                    self.state = match (self.state, b) {
                        (State::ChunkCr, b'\r') => State::ChunkLf,
                        (_, b'\n') => State::ChunkSize,
                        _ => State::Failed(ReplyError::BadChunk),
                    };
                }
                State::Trailer => {
                    let from = i;
                    let r = self.trailer(data, &mut i);
                    sink.footer_bytes(&data[from..i]);
                    self.check(r)?;
                }
            }
        }
    }

    /// The peer closed the connection (read returned 0) while this reply was being
    /// parsed. Returns true when that completes the reply (a close-delimited body, i.e.
    /// headers done and no Content-Length / chunked framing); false when the reply is
    /// incomplete (EOF before or inside the header block, or inside a length-delimited
    /// or chunked body), which the caller counts as `connreset`.
    pub fn on_eof(&mut self) -> bool {
        if self.state == State::UntilEof {
            self.state = State::Done;
            true
        } else {
            false
        }
    }

    /// True once any byte of this reply has been fed.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Records a failure so later feeds repeat it.
    fn check(&mut self, r: Result<(), ReplyError>) -> Result<(), ReplyError> {
        if let Err(e) = r {
            self.state = State::Failed(e);
        }
        r
    }

    /// Parses status and header lines from `data[*i..]` until the header block of the
    /// final reply ends (state leaves Status/Header) or the data runs out. On error `*i`
    /// is just past the byte that proved it.
    fn head_block(&mut self, data: &[u8], i: &mut usize) -> Result<(), ReplyError> {
        while *i < data.len() {
            match self.state {
                State::Status => self.status_line(data, i)?,
                State::Header => {
                    let rest = &data[*i..];
                    let (n, lf) = scan_line(rest, room(self.reply.header_bytes, MAX_HEADER_BLOCK));
                    self.push_line(&rest[..n - usize::from(lf)]);
                    *i += n;
                    self.reply.header_bytes += n as u64;
                    if self.reply.header_bytes > MAX_HEADER_BLOCK {
                        return Err(ReplyError::HeaderTooLarge);
                    }
                    if lf {
                        self.header_line()?;
                    }
                }
                _ => return Ok(()),
            }
        }
        Ok(())
    }

    /// Parses status-line bytes; fails on the first byte that cannot belong to
    /// `HTTP/<d>.<d> <ddd>`.
    fn status_line(&mut self, data: &[u8], i: &mut usize) -> Result<(), ReplyError> {
        while *i < data.len() {
            if self.status_pos == SP_REST {
                let (n, lf) =
                    scan_line(&data[*i..], room(self.reply.header_bytes, MAX_HEADER_BLOCK));
                *i += n;
                self.reply.header_bytes += n as u64;
                if self.reply.header_bytes > MAX_HEADER_BLOCK {
                    return Err(ReplyError::HeaderTooLarge);
                }
                if lf {
                    self.status_line_done();
                    return Ok(());
                }
                continue;
            }
            let b = data[*i];
            *i += 1;
            self.reply.header_bytes += 1;
            if self.reply.header_bytes > MAX_HEADER_BLOCK {
                return Err(ReplyError::HeaderTooLarge);
            }
            let pos = self.status_pos;
            let next = match pos {
                0..=4 if b == b"HTTP/"[usize::from(pos)] => pos + 1,
                SP_MAJOR if b.is_ascii_digit() => {
                    self.major = b - b'0';
                    SP_DOT
                }
                SP_DOT if b == b'.' => SP_MINOR,
                SP_MINOR if b.is_ascii_digit() => {
                    self.minor = b - b'0';
                    SP_SPACE
                }
                SP_SPACE if b == b' ' => SP_SPACES,
                SP_SPACES if b == b' ' => SP_SPACES,
                // Status codes are 100–599 (RFC 9110 §15): a first digit of 0 or
                // 6–9 cannot start one.
                SP_SPACES if (b'1'..=b'5').contains(&b) => {
                    self.code = u16::from(b - b'0');
                    SP_DIGIT2
                }
                SP_DIGIT2 | SP_DIGIT3 if b.is_ascii_digit() => {
                    self.code = self.code * 10 + u16::from(b - b'0');
                    pos + 1
                }
                SP_END if b == b' ' || b == b'\r' => SP_REST,
                SP_END if b == b'\n' => {
                    self.status_line_done();
                    return Ok(());
                }
                _ => return Err(ReplyError::BadStatusLine),
            };
            self.status_pos = next;
        }
        Ok(())
    }

    /// A complete status line: interim (1xx but 101) or the final reply's.
    fn status_line_done(&mut self) {
        self.interim = (100..200).contains(&self.code) && self.code != 101;
        if !self.interim {
            self.reply.status = self.code;
            self.status_seen = true;
        }
        self.line_len = 0;
        self.state = State::Header;
    }

    /// Appends bytes of the current header line, keeping only the first `LINE_CAP`.
    #[inline]
    fn push_line(&mut self, bytes: &[u8]) {
        let stored = self.line_len.min(LINE_CAP);
        let n = (LINE_CAP - stored).min(bytes.len());
        self.line[stored..stored + n].copy_from_slice(&bytes[..n]);
        self.line_len = self.line_len.saturating_add(bytes.len());
    }

    /// Interprets a complete header line (its LF just consumed).
    fn header_line(&mut self) -> Result<(), ReplyError> {
        let len = self.line_len;
        self.line_len = 0;
        let long = len > LINE_CAP;
        let mut text = &self.line[..len.min(LINE_CAP)];
        if !long {
            if let [rest @ .., b'\r'] = text {
                text = rest;
            }
            if text.is_empty() {
                return self.end_of_head();
            }
        }
        if self.interim {
            return Ok(());
        }
        match classify(text, long)? {
            Field::Other => {}
            Field::ContentLength(n) => match self.content_length {
                Some(m) if m != n => return Err(ReplyError::BadContentLength),
                _ => self.content_length = Some(n),
            },
            Field::TransferEncoding(te) => {
                self.te_any = true;
                if te.any {
                    self.te_last_chunked = te.last_chunked;
                    self.te_all_identity &= te.all_identity;
                } else {
                    // An empty Transfer-Encoding value is not a valid coding list.
                    self.te_last_chunked = false;
                    self.te_all_identity = false;
                }
            }
            Field::Connection { close, keep_alive } => {
                self.conn_close |= close;
                self.keep_alive |= keep_alive;
            }
            Field::ContentType(f) => self.reply.stream = f,
        }
        Ok(())
    }

    /// The blank line ending a header block: back to a status line after an interim
    /// reply, else decide how the body is delimited.
    fn end_of_head(&mut self) -> Result<(), ReplyError> {
        if self.interim {
            self.interim = false;
            self.status_pos = 0;
            self.code = 0;
            self.state = State::Status;
            return Ok(());
        }
        let chunked = if self.te_any {
            if self.te_last_chunked {
                true
            } else if self.te_all_identity {
                false
            } else {
                return Err(ReplyError::BadTransferEncoding);
            }
        } else {
            false
        };
        let http11 = self.major > 1 || (self.major == 1 && self.minor >= 1);
        self.reply.close = self.conn_close || (!http11 && !self.keep_alive) || self.code == 101;
        let no_body = self.head || self.code < 200 || self.code == 204 || self.code == 304;
        self.state = if no_body {
            State::Done
        } else if chunked {
            State::ChunkSize
        } else {
            match self.content_length {
                Some(0) => State::Done,
                Some(n) => {
                    self.remaining = n;
                    State::Body
                }
                None => {
                    self.reply.close = true;
                    State::UntilEof
                }
            }
        };
        Ok(())
    }

    /// Parses chunk-size-line bytes: hex size, optional whitespace, optional
    /// `;extensions`, CRLF or LF. None of these bytes is counted.
    fn chunk_size_line(&mut self, data: &[u8], i: &mut usize) -> Result<(), ReplyError> {
        while *i < data.len() {
            if self.chunk_pos == CS_EXT {
                let (n, lf) = scan_line(
                    &data[*i..],
                    MAX_CHUNK_LINE + 1 - self.chunk_line.min(MAX_CHUNK_LINE),
                );
                *i += n;
                self.chunk_line += n;
                if self.chunk_line > MAX_CHUNK_LINE {
                    return Err(ReplyError::BadChunk);
                }
                if lf {
                    self.chunk_size_done();
                    return Ok(());
                }
                continue;
            }
            let b = data[*i];
            *i += 1;
            self.chunk_line += 1;
            if self.chunk_line > MAX_CHUNK_LINE {
                return Err(ReplyError::BadChunk);
            }
            self.chunk_pos = match (self.chunk_pos, b, hex(b)) {
                (CS_FIRST | CS_HEX, _, Some(v)) => {
                    // More than 16 significant hex digits cannot fit a u64.
                    if self.chunk_size >> 60 != 0 {
                        return Err(ReplyError::BadChunk);
                    }
                    self.chunk_size = self.chunk_size << 4 | u64::from(v);
                    CS_HEX
                }
                (CS_HEX | CS_WS, b' ' | b'\t', _) => CS_WS,
                (CS_HEX | CS_WS, b';', _) => CS_EXT,
                (CS_HEX | CS_WS, b'\r', _) => CS_LF,
                (CS_HEX | CS_WS | CS_LF, b'\n', _) => {
                    self.chunk_size_done();
                    return Ok(());
                }
                _ => return Err(ReplyError::BadChunk),
            };
        }
        Ok(())
    }

    /// A complete chunk-size line: data follows, or the trailers after the last chunk.
    fn chunk_size_done(&mut self) {
        self.remaining = self.chunk_size;
        self.state = if self.chunk_size == 0 {
            State::Trailer
        } else {
            State::ChunkData
        };
        self.chunk_size = 0;
        self.chunk_line = 0;
        self.chunk_pos = CS_FIRST;
        self.trailer_len = 0;
    }

    /// Trailer lines up to and including the blank line; every byte is a footer byte.
    fn trailer(&mut self, data: &[u8], i: &mut usize) -> Result<(), ReplyError> {
        while *i < data.len() {
            let rest = &data[*i..];
            let (n, lf) = scan_line(rest, room(self.reply.footer_bytes, MAX_HEADER_BLOCK));
            *i += n;
            self.reply.footer_bytes += n as u64;
            if self.reply.footer_bytes > MAX_HEADER_BLOCK {
                return Err(ReplyError::TrailerTooLarge);
            }
            let text = &rest[..n - usize::from(lf)];
            if self.trailer_len == 0 {
                if let Some(&b) = text.first() {
                    self.trailer_first_cr = b == b'\r';
                }
            }
            self.trailer_len = self.trailer_len.saturating_add(text.len());
            if lf {
                let blank =
                    self.trailer_len == 0 || (self.trailer_len == 1 && self.trailer_first_cr);
                self.trailer_len = 0;
                if blank {
                    self.state = State::Done;
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

impl Default for ReplyParser {
    fn default() -> Self {
        Self::new()
    }
}

/// How many bytes of a block with `used` bytes may still be scanned: one past the limit,
/// so the byte that exceeds it is the one that fails (never 0, so scanning progresses).
#[inline]
fn room(used: u64, limit: u64) -> usize {
    usize::try_from((limit + 1).saturating_sub(used))
        .unwrap_or(usize::MAX)
        .max(1)
}

/// Bytes to take from `avail` when `remaining` are wanted.
#[inline]
fn take(remaining: u64, avail: usize) -> usize {
    usize::try_from(remaining).map_or(avail, |r| r.min(avail))
}

/// Scans at most `limit` bytes of `bytes` for the end of a line: returns the bytes
/// consumed (through the LF if found) and whether the LF was found.
#[inline]
fn scan_line(bytes: &[u8], limit: usize) -> (usize, bool) {
    let window = &bytes[..bytes.len().min(limit)];
    match find_lf(window) {
        Some(p) => (p + 1, true),
        None => (window.len(), false),
    }
}

/// Position of the first LF, eight bytes at a time (SWAR zero-byte test on `w ^ LF`:
/// the lowest flagged byte is always a real match).
#[inline]
fn find_lf(bytes: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const LF: u64 = LO * b'\n' as u64;
    let mut words = bytes.chunks_exact(8);
    let mut off = 0;
    for c in &mut words {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) ^ LF;
        let hits = w.wrapping_sub(LO) & !w & HI;
        if hits != 0 {
            return Some(off + (hits.trailing_zeros() / 8) as usize);
        }
        off += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|p| off + p)
}

/// Value of a hex digit.
#[inline]
fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// What a header line means for framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// Not a framing header (or unrecognisable): only counted.
    Other,
    /// `Content-Length` with its value.
    ContentLength(u64),
    /// `Transfer-Encoding` with its coding list summarised.
    TransferEncoding(Codings),
    /// `Connection` tokens.
    Connection { close: bool, keep_alive: bool },
    /// `Content-Type`, as the stream format it announces (not framing, but the
    /// event splitter of `--stream auto` needs it before the body).
    ContentType(Option<Format>),
}

/// Summary of one Transfer-Encoding value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Codings {
    /// At least one non-empty coding.
    any: bool,
    /// The last coding is `chunked`.
    last_chunked: bool,
    /// Every coding is `identity`.
    all_identity: bool,
}

/// Classifies a header line (`text` = its first bytes, CR stripped unless `long`;
/// `long` = the line did not fit and its tail is missing).
fn classify(text: &[u8], long: bool) -> Result<Field, ReplyError> {
    const CL: &[u8] = b"content-length:";
    const TE: &[u8] = b"transfer-encoding:";
    const CONN: &[u8] = b"connection:";
    const CT: &[u8] = b"content-type:";
    let Some(&first) = text.first() else {
        return Ok(Field::Other);
    };
    match first | 0x20 {
        b'c' if has_prefix(text, CL) => {
            if long {
                return Err(ReplyError::BadContentLength);
            }
            parse_decimal(trim(&text[CL.len()..]))
                .map(Field::ContentLength)
                .ok_or(ReplyError::BadContentLength)
        }
        b'c' if has_prefix(text, CT) => {
            // A cut line's media type is whole when a `;` follows it.
            let value = &text[CT.len()..];
            let whole = !long || value.contains(&b';');
            Ok(Field::ContentType(
                whole.then(|| Format::from_content_type(value)).flatten(),
            ))
        }
        b'c' if has_prefix(text, CONN) => {
            let mut value = &text[CONN.len()..];
            if long {
                // Only tokens followed by a comma are known to be whole.
                let cut = value.iter().rposition(|&b| b == b',').unwrap_or(0);
                value = &value[..cut];
            }
            let (mut close, mut keep_alive) = (false, false);
            for token in value.split(|&b| b == b',').map(trim) {
                close |= token.eq_ignore_ascii_case(b"close");
                keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
            }
            Ok(Field::Connection { close, keep_alive })
        }
        b't' if has_prefix(text, TE) => {
            if long {
                return Err(ReplyError::BadTransferEncoding);
            }
            let mut c = Codings {
                any: false,
                last_chunked: false,
                all_identity: true,
            };
            for token in text[TE.len()..]
                .split(|&b| b == b',')
                .map(trim)
                .filter(|t| !t.is_empty())
            {
                c.any = true;
                c.last_chunked = token.eq_ignore_ascii_case(b"chunked");
                c.all_identity &= token.eq_ignore_ascii_case(b"identity");
            }
            Ok(Field::TransferEncoding(c))
        }
        _ => Ok(Field::Other),
    }
}

/// `text` starts with the lower-case `prefix`, ignoring ASCII case.
#[inline]
fn has_prefix(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// `bytes` without leading and trailing spaces and tabs.
fn trim(bytes: &[u8]) -> &[u8] {
    let ws = |b: &u8| *b == b' ' || *b == b'\t';
    let start = bytes.iter().position(|b| !ws(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !ws(b)).map_or(start, |p| p + 1);
    &bytes[start..end]
}

/// A non-empty run of ASCII digits as a `u64`; `None` for anything else or overflow.
fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &b| {
        if b.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests;
