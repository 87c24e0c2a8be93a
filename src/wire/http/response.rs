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
    /// The stream of events its `Content-Type` announces (`Format::from_content_type`;
    /// the last `Content-Type` line counts), if any.
    pub stream: Option<Format>,
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
mod tests {
    use super::*;

    /// Records every byte the parser hands to the sink.
    #[derive(Debug, Default, Clone, PartialEq, Eq)]
    struct Rec {
        header: Vec<u8>,
        body: Vec<u8>,
        footer: Vec<u8>,
    }

    impl ReplySink for Rec {
        fn header_bytes(&mut self, bytes: &[u8]) {
            self.header.extend_from_slice(bytes);
        }
        fn body_bytes(&mut self, bytes: &[u8]) {
            self.body.extend_from_slice(bytes);
        }
        fn footer_bytes(&mut self, bytes: &[u8]) {
            self.footer.extend_from_slice(bytes);
        }
    }

    /// How a run over the whole input ended.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum End {
        /// All bytes consumed, reply incomplete (no EOF given).
        Pending,
        /// The parser failed.
        Failed(ReplyError),
        /// EOF given after the input; `on_eof` returned this.
        Eof(bool),
    }

    /// Everything observable from one run; must not depend on how the input was split.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Outcome {
        /// Completed replies with the absolute input offset where each ended.
        done: Vec<(usize, Reply)>,
        end: End,
        /// `reply()` of the reply in progress at the end.
        last: Reply,
        status_seen: bool,
        started: bool,
        sink: Rec,
    }

    /// Feeds `input` cut at `cuts` (sorted offsets), restarting after each completed
    /// reply like a connection with pipelined calls; then EOF if `eof`.
    fn run(input: &[u8], head: bool, eof: bool, cuts: &[usize]) -> Outcome {
        let mut p = ReplyParser::new();
        p.start(head);
        let mut sink = Rec::default();
        let mut done = Vec::new();
        let mut from = 0;
        let mut end = End::Pending;
        'pieces: for &to in cuts.iter().chain(std::iter::once(&input.len())) {
            let mut off = from;
            from = to;
            loop {
                match p.feed(&input[off..to], &mut sink) {
                    Ok(Progress::Complete(n)) => {
                        assert!(off + n <= to, "consumed beyond the piece");
                        off += n;
                        done.push((off, *p.reply()));
                        // Graceful misuse: feeding a completed reply consumes nothing.
                        assert_eq!(
                            p.feed(b"HTTP/1.1 200 OK\r\n", &mut Rec::default()),
                            Ok(Progress::Complete(0))
                        );
                        assert_eq!(p.reply(), &done[done.len() - 1].1);
                        p.start(head);
                        assert!(!p.started() && !p.status_seen());
                        if off == to {
                            break;
                        }
                    }
                    Ok(Progress::NeedMore) => break,
                    Err(e) => {
                        // Graceful misuse: a failed parser repeats its error.
                        assert_eq!(p.feed(b"x", &mut Rec::default()), Err(e));
                        end = End::Failed(e);
                        break 'pieces;
                    }
                }
            }
        }
        if eof && end == End::Pending {
            let ok = p.on_eof();
            if ok {
                done.push((input.len(), *p.reply()));
                assert!(!p.on_eof(), "second EOF completes nothing");
            }
            end = End::Eof(ok);
        }
        let last = if matches!(end, End::Eof(true)) {
            Reply::default()
        } else {
            *p.reply()
        };
        let out = Outcome {
            done,
            end,
            last,
            status_seen: p.status_seen(),
            started: p.started(),
            sink,
        };
        // The sink saw exactly the counted bytes.
        let sum =
            |f: fn(&Reply) -> u64| out.done.iter().map(|(_, r)| f(r)).sum::<u64>() + f(&out.last);
        assert_eq!(sum(|r| r.header_bytes), out.sink.header.len() as u64);
        assert_eq!(sum(|r| r.content_bytes), out.sink.body.len() as u64);
        assert_eq!(sum(|r| r.footer_bytes), out.sink.footer.len() as u64);
        out
    }

    /// Runs `input` whole, one byte at a time, and cut in two at every boundary (a
    /// sample of boundaries for big inputs); all outcomes must equal the whole-feed one.
    fn split_invariant(input: &[u8], head: bool, eof: bool) -> Outcome {
        let whole = run(input, head, eof, &[]);
        let all: Vec<usize> = (1..input.len()).collect();
        assert_eq!(run(input, head, eof, &all), whole, "one byte at a time");
        let n = input.len();
        let cut_points: Vec<usize> = if n <= 4000 {
            (0..=n).collect()
        } else {
            let edge =
                |k: usize| k < 300 || n - k < 300 || k.abs_diff(MAX_HEADER_BLOCK as usize) < 300;
            (0..=n).filter(|&k| edge(k) || k % 997 == 0).collect()
        };
        for k in cut_points {
            assert_eq!(run(input, head, eof, &[k]), whole, "cut at {k}");
        }
        whole
    }

    /// A completed reply's counters.
    fn done(
        end: usize,
        status: u16,
        header: u64,
        content: u64,
        footer: u64,
        close: bool,
    ) -> (usize, Reply) {
        (
            end,
            Reply {
                status,
                header_bytes: header,
                content_bytes: content,
                footer_bytes: footer,
                close,
                stream: None,
            },
        )
    }

    /// Length through the first blank line.
    fn head_len(input: &[u8]) -> usize {
        input
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(0, |p| p + 4)
    }

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    const NGINX_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\n\
        Server: nginx/1.22.1\r\n\
        Date: Mon, 30 Nov 2026 03:50:58 GMT\r\n\
        Content-Type: text/html\r\n\
        Content-Length: 1024\r\n\
        Last-Modified: Mon, 30 Nov 2026 03:50:58 GMT\r\n\
        Connection: keep-alive\r\n\
        ETag: \"692bbf02-400\"\r\n\
        Accept-Ranges: bytes\r\n\
        \r\n";

    const A8_CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\n\
        Transfer-Encoding: chunked\r\n\
        Content-Type: text/plain\r\n\
        \r\n\
        5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n";

    const A8_CLOSE: &[u8] =
        b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nclose-delimited body\n";

    /// One table row: input, request flags, and the expected outcome.
    struct Case {
        name: &'static str,
        input: Vec<u8>,
        head: bool,
        eof: bool,
        done: Vec<(usize, Reply)>,
        end: End,
    }

    /// A case with one reply ending exactly at the end of `input`; `counts` are header,
    /// content and footer bytes and close (0/1); a header count of 0 means "through the
    /// first blank line".
    fn ok(name: &'static str, input: &[u8], status: u16, counts: [u64; 4]) -> Case {
        let [header, content, footer, close] = counts;
        let header = if header == 0 {
            head_len(input) as u64
        } else {
            header
        };
        let r = done(input.len(), status, header, content, footer, close != 0);
        Case {
            name,
            input: input.to_vec(),
            head: false,
            eof: false,
            done: vec![r],
            end: End::Pending,
        }
    }

    /// A case that ends with `end` and no completed reply.
    fn no_reply(name: &'static str, input: &[u8], end: End) -> Case {
        let eof = matches!(end, End::Eof(_));
        Case {
            name,
            input: input.to_vec(),
            head: false,
            eof,
            done: vec![],
            end,
        }
    }

    fn fail(name: &'static str, input: &[u8], e: ReplyError) -> Case {
        no_reply(name, input, End::Failed(e))
    }

    const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    const OK2: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

    fn with_cl(v: &str) -> Vec<u8> {
        format!("HTTP/1.1 200 OK\r\nContent-Length: {v}\r\n\r\nok").into_bytes()
    }

    fn with_te(v: &str) -> Vec<u8> {
        format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: {v}\r\n\r\n0\r\n\r\n").into_bytes()
    }

    fn with_chunks(v: &str) -> Vec<u8> {
        cat(&[CHUNKED, v.as_bytes()])
    }

    fn cases() -> Vec<Case> {
        use ReplyError::*;
        let nginx = cat(&[NGINX_HEAD, &[b'x'; 1024]]);
        let plain = with_chunks("3\r\nabc\r\n0\r\n\r\n");
        let h_ok2 = head_len(OK2) as u64;
        let a = |n: usize| vec![b'a'; n];
        vec![
            // Framing.
            ok("nginx CL 1024", &nginx, 200, [239, 1024, 0, 0]),
            ok("CL 0", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, [0; 4]),
            ok("CL leading zeros", b"HTTP/1.1 200 OK\r\nContent-Length: 0002\r\n\r\nok", 200, [0, 2, 0, 0]),
            no_reply("CL = u64::MAX", &with_cl("18446744073709551615"), End::Pending),
            Case { eof: true, end: End::Eof(true), ..ok("close-delimited (A.8)", A8_CLOSE, 200, [45, 21, 0, 1]) },
            no_reply("close-delimited, no EOF yet", A8_CLOSE, End::Pending),
            ok("chunked (A.8)", A8_CHUNKED, 200, [73, 12, 18, 0]),
            ok("chunked, no trailers", &plain, 200, [47, 3, 2, 0]),
            ok("chunked, bare LF", b"HTTP/1.1 200 OK\nTransfer-Encoding: Chunked\n\n3\nabc\n0\n\n", 200, [44, 3, 1, 0]),
            ok("chunked zeros+ext", &with_chunks(&format!("{}2 \t;a=b;c\r\nok\r\n00\r\n\r\n", "0".repeat(40))), 200, [0, 2, 2, 0]),
            ok("chunk line = 4096", &with_chunks(&format!("1;{}\r\na\r\n0\r\n\r\n", "e".repeat(4092))), 200, [0, 1, 2, 0]),
            no_reply("16 hex digit chunk", &with_chunks("ffffffffffffffff\r\nabc"), End::Pending),
            ok("chunked wins over CL", b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 200, [0, 2, 2, 0]),
            ok("TE identity + CL", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 0]),
            Case { head: true, ..ok("HEAD with CL", b"HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n", 200, [0; 4]) },
            Case { head: true, ..ok("HEAD chunked", CHUNKED, 200, [0; 4]) },
            ok("204 with CL", b"HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", 204, [0; 4]),
            ok("304 with CL", b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\nETag: \"x\"\r\n\r\n", 304, [0; 4]),
            ok("101 is final", b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", 101, [0, 0, 0, 1]),
            // Interim replies.
            ok("100 Continue then 200", &cat(&[CONTINUE, OK2]), 200, [25 + h_ok2, 2, 0, 0]),
            ok("103 and 100 then 200", &cat(&[b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\nContent-Length: 99\r\n\r\n", CONTINUE, OK2]), 200, [60 + 25 + h_ok2, 2, 0, 0]),
            // Pipelining and surplus bytes.
            Case {
                done: vec![done(OK2.len(), 200, h_ok2, 2, 0, false), done(OK2.len() + 1263, 200, 239, 1024, 0, false)],
                ..ok("two pipelined", &cat(&[OK2, &nginx]), 0, [0; 4])
            },
            Case {
                done: vec![done(OK2.len(), 200, h_ok2, 2, 0, false)],
                ..fail("surplus garbage after CL", &cat(&[OK2, b"XYZ"]), BadStatusLine)
            },
            Case {
                done: vec![done(OK2.len(), 200, h_ok2, 2, 0, false)],
                ..no_reply("surplus partial status after CL", &cat(&[OK2, b"HT"]), End::Pending)
            },
            // EOF in the wrong place.
            no_reply("EOF inside CL body", &nginx[..600], End::Eof(false)),
            no_reply("EOF inside headers", &NGINX_HEAD[..100], End::Eof(false)),
            no_reply("EOF inside chunked", &A8_CHUNKED[..80], End::Eof(false)),
            no_reply("EOF before anything", b"", End::Eof(false)),
            no_reply("empty input", b"", End::Pending),
            // Headers: odd bytes, long lines, Connection semantics.
            ok("NUL in header names", b"HTTP/1.1 200 OK\r\nX\0Y: 1\r\n\0: \0\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 0]),
            ok("long other header", &cat(&[b"HTTP/1.1 200 OK\r\nX-Long: ", &a(300), b"\r\nContent-Length: 2\r\n\r\nok"]), 200, [0, 2, 0, 0]),
            ok("long Connection header", &cat(&[b"HTTP/1.1 200 OK\r\nConnection: close, ", &a(300), b"\r\nContent-Length: 2\r\n\r\nok"]), 200, [0, 2, 0, 1]),
            ok("duplicate equal CL", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length:\t 2 \t\r\n\r\nok", 200, [0, 2, 0, 0]),
            ok("Connection: close", b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 1]),
            ok("Connection list", b"HTTP/1.1 200 OK\r\nconnection: foo, CLOSE\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 1]),
            ok("HTTP/1.0 closes", b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 1]),
            ok("HTTP/1.0 keep-alive", b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 0]),
            ok("status without reason", b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 0]),
            ok("spaces, LF only", b"HTTP/1.1   404   Not Found\nContent-Length: 2\n\nok", 404, [46, 2, 0, 0]),
            // Status line errors.
            fail("HTTP/0.9 body", b"<html><body>hello</body></html>\n", BadStatusLine),
            fail("binary garbage", &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc], BadStatusLine),
            fail("FOO BAR (A.8)", b"FOO BAR\r\nContent-Length: 2\r\n\r\nok", BadStatusLine),
            fail("lower-case http", b"http/1.1 200 OK\r\n\r\n", BadStatusLine),
            fail("status 099", b"HTTP/1.1 099 X\r\n\r\n", BadStatusLine),
            fail("status 4 digits", b"HTTP/1.1 2000 X\r\n\r\n", BadStatusLine),
            fail("status 2 digits", b"HTTP/1.1 20\r\n\r\n", BadStatusLine),
            fail("version 11", b"HTTP/11 200 OK\r\n\r\n", BadStatusLine),
            fail("no space", b"HTTP/1.1200 OK\r\n\r\n", BadStatusLine),
            fail("tab separator", b"HTTP/1.1\t200 OK\r\n\r\n", BadStatusLine),
            fail("bad status after 100", &cat(&[CONTINUE, b"HTTP/x"]), BadStatusLine),
            // Size limits.
            fail("header line > 64 KiB", &cat(&[b"HTTP/1.1 200 OK\r\nX-Big: ", &a(70_000), b"\r\n\r\n"]), HeaderTooLarge),
            fail("trailer > 64 KiB", &cat(&[&plain[..plain.len() - 2], &a(70_000), b"\r\n\r\n"]), TrailerTooLarge),
            // Framing header errors.
            fail("CL > u64", &with_cl("18446744073709551616"), BadContentLength),
            fail("negative CL", &with_cl("-1"), BadContentLength),
            fail("non-digit CL", &with_cl("12abc"), BadContentLength),
            fail("empty CL", &with_cl(""), BadContentLength),
            fail("CL list", &with_cl("2, 2"), BadContentLength),
            fail("conflicting CL", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", BadContentLength),
            fail("CL value too long", &cat(&[b"HTTP/1.1 200 OK\r\nContent-Length:", &[b' '; 200], b"2\r\n\r\nok"]), BadContentLength),
            fail("TE gzip", &with_te("gzip"), BadTransferEncoding),
            fail("TE chunked, gzip", &with_te("chunked, gzip"), BadTransferEncoding),
            fail("TE empty", &with_te(""), BadTransferEncoding),
            fail("TE value too long", &cat(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding:", &[b' '; 200], b"chunked\r\n\r\n0\r\n\r\n"]), BadTransferEncoding),
            // Chunk framing errors.
            fail("chunk size not hex", &with_chunks("zz\r\n"), BadChunk),
            fail("chunk size empty", &with_chunks("\r\n"), BadChunk),
            fail("chunk size leading space", &with_chunks(" 5\r\n"), BadChunk),
            fail("chunk size CR junk", &with_chunks("5\rx\n"), BadChunk),
            fail("chunk size 17 digits", &with_chunks("10000000000000000\r\n"), BadChunk),
            fail("chunk data without CRLF", &with_chunks("2\r\nokX\r\n0\r\n\r\n"), BadChunk),
            fail("chunk data CR without LF", &with_chunks("2\r\nok\rX"), BadChunk),
            fail("chunk line > 4096", &with_chunks(&format!("1;{}\r\na\r\n0\r\n\r\n", "e".repeat(5000))), BadChunk),
        ]
    }

    #[test]
    fn table_cases_split_invariant() {
        for c in cases() {
            let out = split_invariant(&c.input, c.head, c.eof);
            assert_eq!(out.done, c.done, "{}: completed replies", c.name);
            assert_eq!(out.end, c.end, "{}: end", c.name);
        }
    }

    #[test]
    fn sink_sees_exact_pieces() {
        let out = run(A8_CHUNKED, false, false, &[]);
        assert_eq!(out.sink.header, &A8_CHUNKED[..73]);
        assert_eq!(out.sink.body, b"hello, world");
        assert_eq!(out.sink.footer, b"X-Trailer: yes\r\n\r\n");
        let nginx = cat(&[NGINX_HEAD, &[b'x'; 1024]]);
        let input = cat(&[&nginx, &nginx]);
        let out = run(&input, false, false, &[]);
        assert_eq!(out.sink.header, cat(&[NGINX_HEAD, NGINX_HEAD]));
        assert_eq!(out.sink.body, vec![b'x'; 2048]);
        let out = run(A8_CLOSE, false, true, &[]);
        assert_eq!(cat(&[&out.sink.header, &out.sink.body]), A8_CLOSE);
    }

    #[test]
    fn status_seen_only_at_final_status_line() {
        let input = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        let final_lf = 25 + 16; // index of the LF ending "HTTP/1.1 200 OK\r\n"
        let mut p = ReplyParser::new();
        assert!(!p.started() && !p.status_seen());
        for (k, b) in input.iter().enumerate() {
            let r = p.feed(std::slice::from_ref(b), &mut NoSink);
            assert!(p.started());
            assert_eq!(p.status_seen(), k >= final_lf, "byte {k}");
            assert_eq!(p.reply().status, if k >= final_lf { 200 } else { 0 });
            let expect = if k + 1 == input.len() {
                Progress::Complete(1)
            } else {
                Progress::NeedMore
            };
            assert_eq!(r, Ok(expect));
        }
        assert_eq!(p.feed(b"", &mut NoSink), Ok(Progress::Complete(0)));
        p.start(false);
        assert_eq!(p.feed(b"", &mut NoSink), Ok(Progress::NeedMore));
        assert!(!p.started());
    }

    #[test]
    fn garbage_fails_on_first_byte() {
        for first in [0u8, b'G', b'h', b' ', b'\r', b'\n', 0xff, b'<'] {
            let mut p = ReplyParser::new();
            let mut rec = Rec::default();
            assert_eq!(
                p.feed(&[first], &mut rec),
                Err(ReplyError::BadStatusLine),
                "{first:#x}"
            );
            assert_eq!(p.reply().header_bytes, 1);
            assert_eq!(rec.header, [first]);
        }
    }

    #[test]
    fn on_eof_states() {
        let mut p = ReplyParser::new();
        assert!(!p.on_eof(), "nothing received");
        assert_eq!(p.feed(A8_CLOSE, &mut NoSink), Ok(Progress::NeedMore));
        assert!(p.on_eof());
        assert!(!p.on_eof());
        assert_eq!(p.reply().content_bytes, 21);
        assert!(p.reply().close);
        assert_eq!(p.feed(b"more", &mut NoSink), Ok(Progress::Complete(0)));
        // HTTP/1.1 keep-alive without framing is close-delimited too.
        p.start(false);
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\n\r\nbody", &mut NoSink),
            Ok(Progress::NeedMore)
        );
        assert!(p.on_eof());
        assert_eq!(
            *p.reply(),
            Reply {
                status: 200,
                header_bytes: 19,
                content_bytes: 4,
                footer_bytes: 0,
                close: true,
                stream: None,
            }
        );
        // A completed CL reply: EOF afterwards completes nothing.
        p.start(false);
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", &mut NoSink),
            Ok(Progress::Complete(38))
        );
        assert!(!p.on_eof());
        // After an error.
        p.start(false);
        assert_eq!(p.feed(b"X", &mut NoSink), Err(ReplyError::BadStatusLine));
        assert!(!p.on_eof());
    }

    #[test]
    fn fifty_megabyte_header_line_fails_early() {
        const BIG: usize = 50 << 20;
        let prefix = b"HTTP/1.1 200 OK\r\nX-Huge: ";
        // Fed in 4 KiB pieces: fails within one piece of the limit.
        let piece = [b'a'; 4096];
        let mut p = ReplyParser::new();
        assert_eq!(p.feed(prefix, &mut NoSink), Ok(Progress::NeedMore));
        let mut fed = prefix.len();
        let err = loop {
            assert!(fed < BIG, "never failed");
            match p.feed(&piece, &mut NoSink) {
                Ok(Progress::NeedMore) => fed += piece.len(),
                other => break other,
            }
        };
        assert_eq!(err, Err(ReplyError::HeaderTooLarge));
        assert!(fed <= MAX_HEADER_BLOCK as usize + piece.len());
        assert_eq!(p.reply().header_bytes, MAX_HEADER_BLOCK + 1);
        // Fed whole: fails after scanning at most the limit.
        let mut input = prefix.to_vec();
        input.resize(BIG, b'a');
        let mut p = ReplyParser::new();
        let mut rec = Rec::default();
        assert_eq!(p.feed(&input, &mut rec), Err(ReplyError::HeaderTooLarge));
        assert_eq!(rec.header.len() as u64, MAX_HEADER_BLOCK + 1);
        // Same for a reason phrase and for spaces inside the status line.
        for filler in [b'r', b' '] {
            let mut input = b"HTTP/1.1 200 ".to_vec();
            if filler == b' ' {
                input.truncate(9);
            }
            input.resize(1 << 20, filler);
            let mut p = ReplyParser::new();
            assert_eq!(p.feed(&input, &mut NoSink), Err(ReplyError::HeaderTooLarge));
            assert_eq!(p.reply().header_bytes, MAX_HEADER_BLOCK + 1);
        }
    }

    #[test]
    fn header_block_limit_is_inclusive() {
        // A header block of exactly MAX_HEADER_BLOCK bytes is accepted; one more fails.
        let base = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: \r\n\r\n".len();
        for (extra, ok) in [(0, true), (1, false)] {
            let fill = MAX_HEADER_BLOCK as usize - base + extra;
            let input = cat(&[
                b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: ",
                &vec![b'v'; fill],
                b"\r\n\r\n",
            ]);
            let out = run(&input, false, false, &[]);
            if ok {
                assert_eq!(
                    out.done,
                    vec![done(input.len(), 200, MAX_HEADER_BLOCK, 0, 0, false)]
                );
            } else {
                assert_eq!(out.end, End::Failed(ReplyError::HeaderTooLarge));
            }
        }
    }

    #[test]
    fn find_lf_matches_naive() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..5000 {
            let len = rng.below(40);
            let bytes: Vec<u8> = (0..len)
                .map(|_| if rng.below(8) == 0 { b'\n' } else { rng.byte() })
                .collect();
            assert_eq!(
                find_lf(&bytes),
                bytes.iter().position(|&b| b == b'\n'),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn classify_framing_headers() {
        assert_eq!(
            classify(b"CONTENT-LENGTH: 12", false),
            Ok(Field::ContentLength(12))
        );
        assert_eq!(
            classify(b"Content-Length:12", false),
            Ok(Field::ContentLength(12))
        );
        assert_eq!(classify(b"Content-Lengthy: 12", false), Ok(Field::Other));
        assert_eq!(classify(b"Content-Length : 12", false), Ok(Field::Other));
        assert_eq!(
            classify(b"Content-Length: 1 2", false),
            Err(ReplyError::BadContentLength)
        );
        assert_eq!(
            classify(b"Content-Length: 12", true),
            Err(ReplyError::BadContentLength)
        );
        assert_eq!(
            classify(b"Connection: keep-alive", false),
            Ok(Field::Connection {
                close: false,
                keep_alive: true
            })
        );
        assert_eq!(
            classify(b"Connection: closed", false),
            Ok(Field::Connection {
                close: false,
                keep_alive: false
            })
        );
        assert_eq!(
            classify(b"Connection: close", true),
            Ok(Field::Connection {
                close: false,
                keep_alive: false
            })
        );
        assert_eq!(
            classify(b"Connection: close,x", true),
            Ok(Field::Connection {
                close: true,
                keep_alive: false
            })
        );
        assert_eq!(
            classify(b"Transfer-Encoding: gzip , CHUNKED", false),
            Ok(Field::TransferEncoding(Codings {
                any: true,
                last_chunked: true,
                all_identity: false
            }))
        );
        assert_eq!(
            classify(b"Transfer-Encoding: chunked", true),
            Err(ReplyError::BadTransferEncoding)
        );
        assert_eq!(classify(b"", false), Ok(Field::Other));
        assert_eq!(classify(b"\0\xff:", false), Ok(Field::Other));
        assert_eq!(parse_decimal(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_decimal(b"18446744073709551616"), None);
    }

    #[test]
    fn transfer_encoding_across_lines() {
        // Codings of several lines form one list: its last member decides.
        let two = |a: &str, b: &str| {
            format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: {a}\r\nTransfer-Encoding: {b}\r\n\r\n0\r\n\r\n").into_bytes()
        };
        assert_eq!(
            run(&two("gzip", "chunked"), false, false, &[]).done.len(),
            1
        );
        assert_eq!(
            run(&two("identity", "chunked"), false, false, &[])
                .done
                .len(),
            1
        );
        let bad = run(&two("chunked", "identity"), false, false, &[]);
        assert_eq!(bad.end, End::Failed(ReplyError::BadTransferEncoding));
        let ident = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nbody";
        let out = run(ident, false, true, &[]);
        assert_eq!(out.end, End::Eof(true));
        assert_eq!(out.done[0].1.content_bytes, 4);
    }

    /// Deterministic xorshift64 generator for the property test.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
        fn byte(&mut self) -> u8 {
            self.next() as u8
        }
    }

    /// Pieces that random inputs are assembled from, so they get deep into the parser.
    const TOKENS: &[&[u8]] = &[
        b"HTTP/1.1 ",
        b"HTTP/1.0 ",
        b"200",
        b"100",
        b"101",
        b"204",
        b"304",
        b" OK",
        b"\r\n",
        b"\n",
        b"\r",
        b"Content-Length: ",
        b"Transfer-Encoding: ",
        b"chunked",
        b"identity",
        b"Connection: ",
        b"close",
        b"keep-alive",
        b"0",
        b"5",
        b"a",
        b"ff",
        b";x=y",
        b"hello",
        b", ",
        b"X-T: v",
        b" ",
        b"\t",
        b"\0",
    ];

    fn random_input(rng: &mut XorShift, seeds: &[Vec<u8>]) -> Vec<u8> {
        match rng.below(3) {
            0 => (0..rng.below(64)).map(|_| rng.byte()).collect(),
            1 => {
                let mut v = seeds[rng.below(seeds.len())].clone();
                for _ in 0..=rng.below(4) {
                    let at = rng.below(v.len() + 1);
                    match rng.below(5) {
                        0 if at < v.len() => v[at] = rng.byte(),
                        1 if at < v.len() => {
                            v.remove(at);
                        }
                        2 => v.insert(at, TOKENS[rng.below(TOKENS.len())][0]),
                        3 => {
                            let t = TOKENS[rng.below(TOKENS.len())];
                            v.splice(at..at, t.iter().copied());
                        }
                        _ => v.truncate(at),
                    }
                }
                v
            }
            _ => {
                let mut v = b"HTTP/1.1 200 OK\r\n".to_vec();
                for _ in 0..rng.below(24) {
                    v.extend_from_slice(TOKENS[rng.below(TOKENS.len())]);
                }
                v
            }
        }
    }

    #[test]
    fn random_inputs_never_panic_and_are_split_invariant() {
        let seeds: Vec<Vec<u8>> = cases()
            .into_iter()
            .map(|c| c.input)
            .filter(|v| v.len() < 2000)
            .collect();
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        for _ in 0..4000 {
            let input = random_input(&mut rng, &seeds);
            let head = rng.below(4) == 0;
            let eof = rng.below(2) == 0;
            let whole = run(&input, head, eof, &[]);
            let bytes: Vec<usize> = (1..input.len()).collect();
            assert_eq!(run(&input, head, eof, &bytes), whole, "{input:?}");
            for _ in 0..4 {
                let mut cuts: Vec<usize> = (0..rng.below(5))
                    .map(|_| rng.below(input.len() + 1))
                    .collect();
                cuts.sort_unstable();
                assert_eq!(
                    run(&input, head, eof, &cuts),
                    whole,
                    "{input:?} cut at {cuts:?}"
                );
            }
        }
    }
}
