//! `--print-request` / `--print-reply` output (docs/compatibility.md §2.5), with clean
//! lines.
//!
//! Owns the line format: `SH`/`SB`/`SS` for requests, `RH`/`RB`/`RS` for replies, each
//! `<tag><call id>:<line>` with the line's `\n` replaced by a fresh `\n` (a `\r` is
//! kept). Reply pieces arrive split anywhere; lines are assembled per call id, so calls
//! of different connections may interleave. Unlike httperf (compatibility.md, bug 12),
//! a fragment without a newline is never glued to a later line and no byte beyond a
//! piece is printed: a request body's last fragment is printed as its own `SB` line,
//! and a reply's pending fragment when its part (header or body) ends, at `reply_done`
//! or at `reply_abort`. So a chunked body `hello` + `, world` prints `RB0:hello, world`
//! where httperf printed `RB0:hello\r` / `RB0:, world\r` (bytes of the chunk framing).
//!
//! Does not decide when to print (the engine calls in when a request is written and as
//! the reply parser delivers header-block and content bytes) and does not parse HTTP.
//! Printing is not the hot path: the per-call pending buffers are the one place where
//! allocation is accepted.
//!
//! Longer than 600 lines only because its tests hold golden outputs
//! (docs/compatibility.md A.7, A.9c).

use std::collections::HashMap;
use std::io::{self, Write};

use crate::model::config::PrintWhat;

/// A pending partial line longer than this is printed as a line of its own.
pub(crate) const MAX_PENDING: usize = 64 * 1024;

/// Which part of a reply a pending fragment belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Header,
    Body,
}

impl Part {
    fn tag(self) -> &'static str {
        match self {
            Part::Header => "RH",
            Part::Body => "RB",
        }
    }
}

/// A reply line started in an earlier piece.
#[derive(Debug)]
struct Pending {
    part: Part,
    buf: Vec<u8>,
}

/// Writes `--print-request`/`--print-reply` lines to `out`.
///
/// Write errors do not stop the run: the first one is kept (see `take_error`) and
/// nothing more is written.
#[derive(Debug)]
pub(crate) struct Printer<W: Write> {
    out: W,
    request: Option<PrintWhat>,
    reply: Option<PrintWhat>,
    pending: HashMap<u64, Pending>,
    error: Option<io::Error>,
}

fn headers(w: Option<PrintWhat>) -> bool {
    matches!(w, Some(PrintWhat::Header | PrintWhat::Both))
}

fn bodies(w: Option<PrintWhat>) -> bool {
    matches!(w, Some(PrintWhat::Body | PrintWhat::Both))
}

impl<W: Write> Printer<W> {
    /// A printer for the given selections (None: that side is not printed at all).
    pub(crate) fn new(out: W, request: Option<PrintWhat>, reply: Option<PrintWhat>) -> Self {
        Printer {
            out,
            request,
            reply,
            pending: HashMap::new(),
            error: None,
        }
    }

    /// True if requests are printed (then the engine calls `request`).
    #[cfg(test)]
    pub(crate) fn prints_requests(&self) -> bool {
        self.request.is_some()
    }

    /// True if replies are printed (then the engine calls the `reply_*` functions).
    #[cfg(test)]
    pub(crate) fn prints_replies(&self) -> bool {
        self.reply.is_some()
    }

    /// Prints request `bytes` of call `id`, whose first `header_len` bytes are the
    /// header block: `SH` lines, `SB` lines, then `SS<id>: header H content C`.
    pub(crate) fn request(&mut self, id: u64, bytes: &[u8], header_len: usize) {
        if self.request.is_none() {
            return;
        }
        let header_len = header_len.min(bytes.len());
        let (head, body) = bytes.split_at(header_len);
        if headers(self.request) {
            self.lines("SH", id, head);
        }
        if bodies(self.request) {
            self.lines("SB", id, body);
        }
        let r = writeln!(
            self.out,
            "SS{id}: header {header_len} content {}",
            body.len()
        );
        self.note(r);
    }

    /// A piece of the reply header block of call `id` (the last piece ends exactly
    /// at the blank line); prints complete lines as `RH<id>:<line>`.
    pub(crate) fn reply_header(&mut self, id: u64, bytes: &[u8]) {
        if headers(self.reply) {
            self.piece(id, Part::Header, bytes);
        }
    }

    /// A piece of the reply content of call `id`; prints complete lines as
    /// `RB<id>:<line>`.
    pub(crate) fn reply_body(&mut self, id: u64, bytes: &[u8]) {
        if bodies(self.reply) {
            self.piece(id, Part::Body, bytes);
        }
    }

    /// The reply of call `id` is complete: flushes a pending partial line, then prints
    /// `RS<id>: header H content C footer F`.
    pub(crate) fn reply_done(&mut self, id: u64, header: u64, content: u64, footer: u64) {
        if self.reply.is_none() {
            return;
        }
        self.flush_pending(id);
        let r = writeln!(
            self.out,
            "RS{id}: header {header} content {content} footer {footer}"
        );
        self.note(r);
    }

    /// Call `id` failed before its reply completed: flushes a pending partial line.
    pub(crate) fn reply_abort(&mut self, id: u64) {
        self.flush_pending(id);
    }

    /// Flushes the writer (before the report is printed on the same stream).
    #[cfg(test)]
    pub(crate) fn flush(&mut self) {
        let r = self.out.flush();
        self.note(r);
    }

    /// The first write error, if any (printing stopped there).
    #[cfg(test)]
    pub(crate) fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    /// The writer back, after flushing pending lines of all calls (in call-id order).
    #[cfg(test)]
    pub(crate) fn into_inner(mut self) -> W {
        let mut ids: Vec<u64> = self.pending.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            self.flush_pending(id);
        }
        self.out
    }

    /// Keeps the first write error.
    fn note(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            if self.error.is_none() {
                self.error = Some(e);
            }
        }
    }

    /// Writes `<tag><id>:<a><b>\n`.
    fn line(&mut self, tag: &str, id: u64, a: &[u8], b: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let r = (|| {
            write!(self.out, "{tag}{id}:")?;
            self.out.write_all(a)?;
            self.out.write_all(b)?;
            self.out.write_all(b"\n")
        })();
        self.note(r);
    }

    /// Prints every line of a complete block; a last fragment is a line of its own.
    fn lines(&mut self, tag: &str, id: u64, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let (line, next) = split_line(rest);
            self.line(tag, id, line, b"");
            rest = next;
        }
    }

    /// Adds a reply piece to the lines of call `id`.
    fn piece(&mut self, id: u64, part: Part, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut rest = bytes;
        // A fragment of the other part cannot be continued by this one.
        if self.pending.get(&id).is_some_and(|p| p.part != part) {
            self.flush_pending(id);
        }
        // Complete a line started in an earlier piece.
        if let Some(mut p) = self.pending.remove(&id) {
            match memchr_nl(rest) {
                Some(i) => {
                    self.line(part.tag(), id, &p.buf, &rest[..i]);
                    rest = &rest[i + 1..];
                }
                None => {
                    p.buf.extend_from_slice(rest);
                    self.keep(id, p);
                    return;
                }
            }
        }
        while let Some(i) = memchr_nl(rest) {
            self.line(part.tag(), id, &rest[..i], b"");
            rest = &rest[i + 1..];
        }
        if !rest.is_empty() {
            let p = Pending {
                part,
                buf: rest.to_vec(),
            };
            self.keep(id, p);
        }
    }

    /// Stores a pending fragment, or prints it if it has grown too long.
    fn keep(&mut self, id: u64, p: Pending) {
        if p.buf.len() > MAX_PENDING {
            self.line(p.part.tag(), id, &p.buf, b"");
        } else {
            self.pending.insert(id, p);
        }
    }

    /// Prints the pending fragment of call `id`, if any, as a line.
    fn flush_pending(&mut self, id: u64) {
        if let Some(p) = self.pending.remove(&id) {
            self.line(p.part.tag(), id, &p.buf, b"");
        }
    }
}

/// Position of the first `\n`.
fn memchr_nl(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// The first line (without its `\n`) and the rest.
fn split_line(bytes: &[u8]) -> (&[u8], &[u8]) {
    match memchr_nl(bytes) {
        Some(i) => (&bytes[..i], &bytes[i + 1..]),
        None => (bytes, &[]),
    }
}

/// The engine hands call bytes to the printer through the connection's observer hook.
impl<W: Write> crate::engine::conn::ReplyObserver for Printer<W> {
    fn request(&mut self, id: u64, bytes: &[u8], header: usize) {
        Printer::request(self, id, bytes, header);
    }
    fn abort(&mut self, id: u64) {
        self.reply_abort(id);
    }
    fn header(&mut self, id: u64, bytes: &[u8]) {
        self.reply_header(id, bytes);
    }
    fn body(&mut self, id: u64, bytes: &[u8]) {
        self.reply_body(id, bytes);
    }
    fn done(&mut self, id: u64, header: u64, content: u64, footer: u64) {
        self.reply_done(id, header, content, footer);
    }
}

#[cfg(test)]
mod tests;
