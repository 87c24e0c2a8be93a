//! The HTTP/2 side of a connection (`--http-version 2`): drives `http2::conn::H2` for
//! a `Conn` and turns its events into the same statistics and `Completion`s as the
//! HTTP/1 reply parser does.
//!
//! A call is a stream. Calls queue on the connection as for HTTP/1 (`Conn::calls`),
//! their header fields (a plain field list) and body staged at issue time, one
//! record per queued call (`Staged`); a call waits there until the connection has a
//! free stream (below the server's SETTINGS_MAX_CONCURRENT_STREAMS, no GOAWAY), then
//! `pump` HPACK-encodes its fields with the connection's encoder (blocks are encoded
//! in the order they are sent, as the server's dynamic table requires), opens its
//! stream and its frames go into the send buffer. The record is held until the
//! stream ends. Streams complete in any order. A stream reset by the server
//! completes its call with status 0 and an `other` error; a stream refused
//! (REFUSED_STREAM) goes back to the front of the queue with its record, encoded
//! again when it next gets a stream; a GOAWAY puts the calls the server did not take
//! back in the queue and the connection closes once the rest are answered, as after
//! `Connection: close` (the workload moves unanswered calls to a new connection). The send buffer carries control frames
//! too, so "written" is tracked by byte position (`H2::on_written`), not by call.
//! With `--stream`, each stream's reply gets its own event scan (`events::MuxScans`,
//! by the call's staged slot), started at its final status with its `content-type`,
//! fed its DATA payloads, ended by END_STREAM, a reset or the connection's end.
//! A stream's final status marks its call as begun (`Call::begun`): given up with
//! the connection or at the end of the run, it was being answered, not unanswered.
//! Called only by `Conn`; the engine sees no difference besides `is_h2`.

use std::time::{Duration, Instant};

use super::events::MuxScans;
use super::{after, note_reply, note_response, Completion, Conn, Ctx, Step, Transport};
use crate::model::call::{Call, CallRef, Requests};
use crate::model::stats::ErrorKind;
use crate::wire::events::Format;
use crate::wire::http::cookie::CookieScan;
use crate::wire::http2::conn::{Events, Reply, H2};
use crate::wire::table::ConnId;

use super::staged::{u32_of, Staged, RECORD_HEAD};

#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod tests;

/// A call in flight as a stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tagged {
    pub(super) call: Call,
    pub(super) reply_start: Instant,
    /// HPACK (or QPACK) bytes and decoded size of its header block.
    pub(super) block: u32,
    pub(super) decoded: u32,
    /// Where its staged request is held (`Staged::held`).
    pub(super) slot: u32,
}

/// The HTTP/2 state of one connection slot (kept, with its buffers, across the
/// slot's connections).
#[derive(Debug, Default)]
pub(crate) struct H2Side {
    proto: H2<Tagged>,
    /// The staged requests of queued calls and open streams.
    staged: Staged,
    /// The HPACK block being sent (scratch).
    block: Vec<u8>,
    /// Streams the server refused (REFUSED_STREAM, or by GOAWAY), to go back to
    /// the queue.
    refused: Vec<Tagged>,
    /// `--stream`: the events of each open stream's reply.
    pub(super) scans: MuxScans,
}

impl H2Side {
    /// Forgets the last connection's state (keeps the buffers).
    pub(super) fn reset(&mut self) {
        self.proto.reset();
        self.staged.clear();
        self.refused.clear();
        self.scans.clear();
    }
}

/// Turns protocol events into statistics and completions (HTTP/2's, and HTTP/3's with
/// `h3`: the events are the same, the protocol counters differ).
pub(super) struct Sink<'a, 'b> {
    pub(super) now: Instant,
    pub(super) ctx: &'a mut Ctx<'b>,
    pub(super) cookie: &'a mut Option<CookieScan>,
    pub(super) refused: &'a mut Vec<Tagged>,
    pub(super) staged: &'a mut Staged,
    pub(super) replies: &'a mut u64,
    pub(super) conn: ConnId,
    pub(super) target: usize,
    /// HTTP/3: count in `stats.http3`.
    pub(super) h3: bool,
    /// A reply made progress (status, data, end or reset): the reply watchdog restarts.
    pub(super) progress: bool,
    /// `--stream`: the stream scans of the open streams.
    pub(super) scans: &'a mut MuxScans,
    /// `--stream auto`: the stream format of the Content-Type in the header block
    /// being decoded (its `status` follows its fields).
    pub(super) content_type: Option<Format>,
}

/// A `Sink` over connection `$conn` and its protocol side `$side` (HTTP/3 when `$h3`),
/// made where both are borrowed apart (the side lives in the connection's slot).
macro_rules! sink {
    ($conn:ident, $side:ident, $now:expr, $ctx:expr, $h3:expr) => {
        Sink {
            now: $now,
            ctx: $ctx,
            cookie: &mut $conn.cookie,
            refused: &mut $side.refused,
            staged: &mut $side.staged,
            replies: &mut $conn.replies,
            conn: $conn.id,
            target: $conn.target,
            h3: $h3,
            progress: false,
            scans: &mut $side.scans,
            content_type: None,
        }
    };
}
pub(super) use sink;

impl Events<Tagged> for Sink<'_, '_> {
    fn started(&mut self, tag: &mut Tagged) {
        // HTTP/3 sends a call again after a rejected 0-RTT or a refusal: it is
        // still one request.
        if !(self.h3 && tag.call.written.is_some()) {
            super::count_request(self.ctx, self.target);
        }
    }

    fn written(&mut self, tag: &mut Tagged, bytes: u64) {
        let again = tag.call.written.is_some();
        tag.call.written = Some(self.now);
        let stats = &mut *self.ctx.stats;
        if self.h3 {
            stats.http3.streams += 1;
            if !again {
                stats.on_request_bytes(bytes);
            }
            return;
        }
        stats.on_request_bytes(bytes);
        let h = &mut stats.http2;
        h.streams += 1;
        h.request_header_wire += u64::from(tag.block);
        h.request_header_decoded += u64::from(tag.decoded);
    }

    fn status(&mut self, tag: &mut Tagged, _status: u16) {
        self.progress = true;
        tag.reply_start = self.now;
        tag.call.begun = true;
        let d = self.now.saturating_duration_since(tag.call.send_start);
        note_response(self.ctx, self.target, d);
        if let Some(setup) = self.ctx.stream {
            let origin = if setup.from_schedule {
                tag.call.due
            } else {
                tag.call.send_start
            };
            let ct = self.content_type.take();
            self.scans.start(tag.slot, &setup, ct, origin);
        }
    }

    fn field(&mut self, tag: &Tagged, name: &[u8], value: &[u8]) {
        let id = tag.call.id;
        if let Some(o) = self.ctx.observer.as_mut() {
            if !name.is_empty() {
                o.header(id, name);
                o.header(id, b": ");
                o.header(id, value);
            }
            o.header(id, b"\r\n");
        }
        if let Some(c) = self.cookie.as_mut() {
            c.feed(name);
            c.feed(b": ");
            c.feed(value);
            c.feed(b"\n");
        }
        if self.ctx.stream.is_some() {
            // `:status` opens every block (pseudo-header fields come first).
            if name == b":status" {
                self.content_type = None;
            } else if name.eq_ignore_ascii_case(b"content-type") {
                self.content_type = Format::from_content_type(value);
            }
        }
    }

    fn data(&mut self, tag: &Tagged, bytes: &[u8]) {
        self.progress = true;
        if let Some(o) = self.ctx.observer.as_mut() {
            o.body(tag.call.id, bytes);
        }
        self.scans
            .feed(tag.slot, bytes, self.now, &mut self.ctx.stats.stream);
    }

    fn done(&mut self, tag: Tagged, r: &Reply) {
        self.staged.release(tag.slot);
        self.scans
            .done(tag.slot, self.now, &mut self.ctx.stats.stream);
        let transfer = self.now.saturating_duration_since(tag.reply_start);
        note_reply(
            self.ctx,
            self.target,
            (r.status, r.header_bytes, r.content_bytes, r.footer_bytes),
            transfer,
        );
        *self.replies += 1;
        self.progress = true;
        if !self.h3 {
            let h = &mut self.ctx.stats.http2;
            h.reply_header_wire += r.header_wire;
            h.reply_header_decoded += r.header_bytes + r.footer_bytes;
        }
        if let Some(o) = self.ctx.observer.as_mut() {
            o.done(tag.call.id, r.header_bytes, r.content_bytes, r.footer_bytes);
        }
        if self.ctx.debug > 0 {
            crate::wire::note::note!(
                "rshperf: connection {}: stream reply {} ({} content bytes)",
                self.conn.index(),
                r.status,
                r.content_bytes
            );
        }
        self.ctx.completions.push(Completion {
            conn: self.conn,
            call: tag.call,
            status: r.status,
            reply: crate::wire::http::response::Reply {
                status: r.status,
                header_bytes: r.header_bytes,
                content_bytes: r.content_bytes,
                footer_bytes: r.footer_bytes,
                close: false,
                stream: None,
            },
            first_byte: tag.reply_start,
        });
    }

    fn reset(&mut self, tag: Tagged, code: u32) {
        self.staged.release(tag.slot);
        self.scans
            .cut(tag.slot, self.now, &mut self.ctx.stats.stream);
        let stats = &mut *self.ctx.stats;
        stats.on_error(ErrorKind::Other);
        if let Some(s) = stats.servers.get_mut(self.target) {
            s.errors[ErrorKind::Other.index()] += 1;
        }
        self.progress = true;
        if self.h3 {
            stats.http3.streams_reset += 1;
        } else {
            stats.http2.streams_reset += 1;
        }
        if let Some(o) = self.ctx.observer.as_mut() {
            o.abort(tag.call.id);
        }
        if self.ctx.debug > 0 {
            crate::wire::note::note!(
                "rshperf: connection {}: stream reset by the server (error code {code:#x})",
                self.conn.index()
            );
        }
        // Status 0: no reply; the workload moves on as after a failed call.
        self.ctx.completions.push(Completion {
            conn: self.conn,
            call: tag.call,
            status: 0,
            reply: crate::wire::http::response::Reply::default(),
            first_byte: self.now,
        });
    }

    fn refused(&mut self, mut tag: Tagged) {
        self.scans
            .cut(tag.slot, self.now, &mut self.ctx.stats.stream);
        // Sent again on a new stream, whose reply has not begun.
        tag.call.begun = false;
        self.refused.push(tag);
    }
}

impl<S: Transport> Conn<S> {
    /// Whether this connection speaks HTTP/2.
    pub(crate) fn is_h2(&self) -> bool {
        self.h2.is_some()
    }

    /// Makes the slot speak HTTP/2 (or HTTP/1.x) for its next connection.
    pub(super) fn reset_h2(&mut self, http2: bool, pool: &mut super::BufPool) {
        pool.h2.switch(&mut self.h2, http2);
    }

    /// Renders call `what` for HTTP/2 (or HTTP/3) into the staging area (encoded and sent when it
    /// gets a stream); returns (request length, header length) as `Requests::render`
    /// does, counting the plain field list as the header (the HPACK block, known at
    /// stream open, replaces it in `Call::len`).
    pub(crate) fn stage_h2(
        &mut self,
        requests: &Requests,
        what: CallRef,
        host: &str,
        cookie: Option<&[u8]>,
    ) -> (usize, usize) {
        if self.is_h3() {
            return self.stage_h3(requests, what, host, cookie);
        }
        let Some(h) = self.h2.as_mut() else {
            return (0, 0);
        };
        let rec = h.staged.push();
        rec.extend_from_slice(&[0; RECORD_HEAD]);
        let r = requests.render_h2(what, host, cookie, rec);
        let fields = [u32_of(r.block), u32_of(r.body), u32_of(r.decoded)];
        for (k, v) in fields.iter().enumerate() {
            rec[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
        (r.block + r.body, r.block)
    }

    /// Opens streams for queued calls while the server allows; their frames start
    /// the send watchdog (`timeout`), which `on_writable` stops once they are out.
    pub(super) fn pump_h2(&mut self, now: Instant, timeout: Option<Duration>) {
        let Some(h) = self.h2.as_mut() else {
            return;
        };
        if h.proto.can_open() && !self.calls.is_empty() && self.send_deadline.is_none() {
            self.send_deadline = after(now, timeout);
        }
        while h.proto.can_open() {
            let Some(mut call) = self.calls.pop_front() else {
                break;
            };
            let slot = h.staged.hold_front();
            let (fields, body, decoded) = h.staged.parts(slot);
            h.block.clear();
            h.proto.encoder().encode(fields, &mut h.block);
            call.send_start = now;
            call.len = h.block.len() + body.len();
            call.stream = h.proto.next_stream_id();
            let tag = Tagged {
                call,
                reply_start: now,
                block: u32_of(h.block.len()),
                decoded: u32_of(decoded),
                slot,
            };
            h.proto.open(tag, &h.block, body, &mut self.send.buf);
        }
        self.closing = h.proto.closing();
    }

    /// The connection is up: the preface. Calls wait for the server's SETTINGS (its
    /// stream limit), which must come within the reply timeout.
    pub(super) fn start_h2(&mut self, now: Instant, ctx: &mut Ctx<'_>) {
        let Some(h) = self.h2.as_mut() else {
            return;
        };
        h.proto.start(&mut self.send.buf);
        ctx.stats.http2.connections += 1;
        self.send_deadline = after(now, ctx.timeout);
        self.recv_deadline = after(now, ctx.reply_timeout);
    }

    /// Runs `f` on the protocol state, the send buffer and an event sink for this
    /// connection (None for HTTP/1.x). Refused calls go back to the queue.
    fn with_sink<R>(
        &mut self,
        now: Instant,
        ctx: &mut Ctx<'_>,
        f: impl FnOnce(&mut H2<Tagged>, &mut Vec<u8>, &mut Sink<'_, '_>) -> R,
    ) -> Option<R> {
        let h = self.h2.as_mut()?;
        let mut sink = sink!(self, h, now, ctx, false);
        let r = f(&mut h.proto, &mut self.send.buf, &mut sink);
        for t in h.refused.drain(..).rev() {
            self.calls.push_front(t.call);
            h.staged.requeue(t.slot);
        }
        Some(r)
    }

    /// `n` bytes of the send buffer reached the socket.
    pub(super) fn written_h2(&mut self, n: usize, now: Instant, ctx: &mut Ctx<'_>) {
        let in_flight = self.with_sink(now, ctx, |proto, _, sink| {
            proto.on_written(n, sink);
            proto.in_flight()
        });
        if in_flight.is_some_and(|n| n > 0) && self.recv_deadline.is_none() {
            self.recv_deadline = after(now, ctx.reply_timeout);
        }
    }

    /// Server bytes arrived.
    pub(super) fn data_h2(&mut self, now: Instant, data: &[u8], ctx: &mut Ctx<'_>) -> Step {
        let Some(result) =
            self.with_sink(now, ctx, |proto, out, sink| proto.on_bytes(data, out, sink))
        else {
            return Step::Fail(ErrorKind::Other);
        };
        let Some(h) = self.h2.as_mut() else {
            return Step::Fail(ErrorKind::Other);
        };
        let progress = match result {
            Ok(p) => p,
            Err(e) => {
                ctx.stats.http2.protocol_errors += 1;
                if crate::wire::http2::conn::is_not_h2(&e) && data.starts_with(b"HTTP/1.") {
                    ctx.stats.http2.http1_answers += 1;
                }
                if ctx.debug > 0 {
                    crate::wire::note::note!(
                        "rshperf: connection {}: HTTP/2 error: {} (code {:#x})",
                        self.id.index(),
                        e.reason,
                        e.code
                    );
                }
                // Best effort: tell the server why before closing.
                h.proto.fail(e, &mut self.send.buf);
                let _ = self.on_writable(now, ctx);
                return Step::Fail(ErrorKind::Other);
            }
        };
        if h.proto.closing() && !self.closing {
            ctx.stats.http2.goaways += 1;
        }
        self.pump_h2(now, ctx.timeout);
        let (in_flight, ready) = self
            .h2
            .as_ref()
            .map_or((0, true), |h| (h.proto.in_flight(), h.proto.ready()));
        self.recv_deadline = match (in_flight, progress) {
            // Still waiting for the server's SETTINGS: the deadline of `start_h2`.
            _ if !ready => self.recv_deadline.or(after(now, ctx.reply_timeout)),
            (0, _) => None,
            (_, true) => after(now, ctx.reply_timeout),
            (_, false) => self.recv_deadline.or(after(now, ctx.reply_timeout)),
        };
        if self.closing && in_flight == 0 {
            return Step::Close;
        }
        // Acks, window updates and newly opened streams are written by the engine
        // once this poll turn's events are handled (one write per turn; no
        // writable edge would announce room that was there all along).
        Step::Continue
    }

    /// After writing: a request body held back by flow control keeps the send
    /// watchdog running (a window that never opens times out).
    pub(super) fn deadlines_h2(&mut self, now: Instant, timeout: Option<Duration>) {
        if self.h2.as_ref().is_some_and(|h| h.proto.blocked()) && self.send_deadline.is_none() {
            self.send_deadline = after(now, timeout);
        }
    }

    /// The server closed: a normal end only if nothing was in flight.
    pub(super) fn eof_h2(&self) -> Step {
        let in_flight = self.h2.as_ref().map_or(0, |h| h.proto.in_flight());
        match (in_flight, self.closing) {
            (0, true) => Step::Close,
            (0, false) if self.calls.is_empty() => Step::PeerClosed,
            _ => Step::Fail(ErrorKind::ConnReset),
        }
    }

    /// Whether a call queued now gets a stream at once: the server's SETTINGS came,
    /// no GOAWAY, below its stream limit, and no call already waits for a stream.
    pub(super) fn can_open_h2(&self) -> bool {
        self.calls.is_empty() && self.h2.as_ref().is_some_and(|h| h.proto.can_open())
    }

    /// Streams in flight (part of `outstanding`).
    pub(super) fn in_flight_h2(&self) -> usize {
        self.h2.as_ref().map_or(0, |h| h.proto.in_flight())
    }

    /// Moves the calls of open streams back to the queue (the connection is going
    /// away) and forgets the staged requests.
    pub(super) fn drain_h2(&mut self) {
        if let Some(h) = self.h2.as_mut() {
            for t in h.proto.drain() {
                self.calls.push_front(t.call);
            }
            h.staged.clear();
        }
    }
}
