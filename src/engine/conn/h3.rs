//! The HTTP/3 side of a connection (`--http-version 3`): drives a QUIC connection
//! (`wire::quic::Quic`) and `http3::conn::H3` for a `Conn` over its connected UDP
//! socket, and turns their events into the same statistics and `Completion`s as
//! HTTP/2's (`h2::Sink`, counting in `stats.http3`).
//!
//! A call is a request stream. Calls are staged at issue time as for HTTP/2
//! (`staged::Staged`: plain field list and body) and QPACK-encoded (static table and
//! literals) when they get a stream: on the connection's turn to write
//! (`on_writable`, once per poll turn), or right after datagrams were read. The
//! connection counts as connected when the QUIC handshake completes, or at once when
//! `--quic-0rtt` and a resumed session let requests go as 0-RTT data. QUIC's own
//! timer (acks, loss detection, idle) is `wake`: the engine arms the connection's
//! timer at the earlier of it and the watchdog deadline and calls `on_timer_h3`.
//! A connection lost with an error, a protocol error of the server, or an HTTP/3
//! error fails the connection (`other`; silence is `client-timo` through the
//! watchdogs), its reason kept for the engine to print once. Called only by `Conn`.

use std::net::SocketAddr;
use std::time::Instant;

use bytes::Bytes;

use quinn_proto::{ConnectionError, Event, VarInt};

use super::h2::{sink, Sink, Tagged};
use super::staged::{u32_of, Staged, RECORD_HEAD};
use super::{after, Conn, Ctx, Phase, Step, Transport};
use crate::model::call::{CallRef, Requests};
use crate::model::stats::ErrorKind;
use crate::wire::http2::encoder::plain_fields;
use crate::wire::http3::conn::H3;
use crate::wire::http3::frame::{self, code};
use crate::wire::http3::qpack;
use crate::wire::quic::Quic;
use crate::wire::tls::Resumed;
use crate::wire::udp::{RECV_BATCH, RECV_SLOT};

thread_local! {
    /// The engine's receive buffers for datagrams (one engine is one thread):
    /// `RECV_BATCH` slots of `RECV_SLOT` bytes, room for `recvmmsg` of GRO batches,
    /// allocated by the first HTTP/3 read.
    static RECV_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The HTTP/3 state of one connection slot (kept, with its buffers, across the
/// slot's connections).
#[derive(Debug, Default)]
pub(crate) struct H3Side {
    proto: H3<Tagged>,
    quic: Option<Quic>,
    /// What `start` connects with (given by the engine at open).
    start: Option<(quinn_proto::ClientConfig, SocketAddr, String)>,
    /// Whether the handshake resumed the session's TLS session (read once done).
    resumed: Resumed,
    staged: Staged,
    /// The last request's frames and what they encode.
    last: Encoded,
    refused: Vec<Tagged>,
    /// `--stream`: the events of each open stream's reply.
    pub(super) scans: super::events::MuxScans,
    /// The handshake completed.
    handshaken: bool,
    /// Requests went out as 0-RTT data.
    early: bool,
}

impl H3Side {
    /// Forgets the last connection's state (keeps the buffers).
    pub(super) fn reset(&mut self) {
        self.proto.reset();
        self.quic = None;
        self.start = None;
        self.resumed = Resumed::never();
        self.staged.clear();
        self.refused.clear();
        self.scans.clear();
        self.handshaken = false;
        self.early = false;
    }
}

/// The frames of the last request sent and the staged fields and body they encode:
/// a call that stages the same sends them again without encoding or copying (QUIC
/// keeps references to one buffer).
#[derive(Debug, Default)]
struct Encoded {
    /// HEADERS, then the body's DATA frame, if any: the body is its last bytes.
    frames: Bytes,
    /// The QPACK field section's length.
    section: usize,
    fields: Vec<u8>,
    body_len: usize,
}

impl Encoded {
    /// The frames of a request with staged `fields` and `body`, and its section's
    /// length: the last ones when they match, else newly encoded.
    fn frames(&mut self, fields: &[u8], body: &[u8]) -> (Bytes, usize) {
        let same = !self.frames.is_empty()
            && self.fields == fields
            && self.body_len == body.len()
            && self.frames.ends_with(body);
        if !same {
            let mut block = Vec::new();
            qpack::put_prefix(&mut block);
            for (n, v) in plain_fields(fields) {
                qpack::put_field(&mut block, n, v);
            }
            self.frames = frame::request(&block, body);
            self.section = block.len();
            self.fields.clear();
            self.fields.extend_from_slice(fields);
            self.body_len = body.len();
        }
        (self.frames.clone(), self.section)
    }
}

/// Whether a lost connection ended quietly: the idle timeout, or a close without an
/// error. With no call in flight or queued this is the server (or QUIC) ending an
/// idle connection, as a TCP server closes an idle keep-alive one.
fn quiet_end(reason: &ConnectionError) -> bool {
    match reason {
        ConnectionError::TimedOut => true,
        ConnectionError::ApplicationClosed(c) => c.error_code.into_inner() == code::NO_ERROR,
        ConnectionError::ConnectionClosed(c) => u64::from(c.error_code) == 0,
        _ => false,
    }
}

/// How a lost connection is counted, and why (for stderr).
fn lost_kind(reason: &ConnectionError) -> (ErrorKind, bool) {
    match reason {
        ConnectionError::TimedOut => (ErrorKind::ClientTimo, false),
        ConnectionError::Reset => (ErrorKind::ConnReset, false),
        ConnectionError::ApplicationClosed(c) if c.error_code.into_inner() == code::NO_ERROR => {
            (ErrorKind::ConnReset, false)
        }
        _ => (ErrorKind::Other, true),
    }
}

impl<S: Transport> Conn<S> {
    /// Whether this connection speaks HTTP/3.
    pub(crate) fn is_h3(&self) -> bool {
        self.h3.is_some()
    }

    /// Makes the slot speak HTTP/3 (or not) for its next connection (after `reset`).
    pub(crate) fn reset_h3(&mut self, http3: bool, pool: &mut super::BufPool) {
        pool.h3.switch(&mut self.h3, http3);
    }

    /// What the QUIC connection will start with: the client configuration (TLS
    /// settings and session) and what tells whether its handshake resumed, the
    /// server's address and the TLS server name.
    pub(crate) fn set_quic(
        &mut self,
        config: quinn_proto::ClientConfig,
        resumed: Resumed,
        remote: SocketAddr,
        server_name: String,
    ) {
        if let Some(h) = self.h3.as_mut() {
            h.start = Some((config, remote, server_name));
            h.resumed = resumed;
        }
    }

    /// Renders call `what` into the staging area (see `stage_h2`).
    pub(super) fn stage_h3(
        &mut self,
        requests: &Requests,
        what: CallRef,
        host: &str,
        cookie: Option<&[u8]>,
    ) -> (usize, usize) {
        let Some(h) = self.h3.as_mut() else {
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

    /// Starts the QUIC connection (the socket is connected): its Initial goes out.
    /// Ok(true) when requests may go at once (0-RTT), Ok(false) while the handshake
    /// runs.
    fn start_quic(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Result<bool, ErrorKind> {
        let Some(h) = self.h3.as_mut() else {
            return Err(ErrorKind::Other);
        };
        let Some((config, remote, name)) = h.start.take() else {
            return Err(ErrorKind::Other);
        };
        ctx.stats.http3.connections += 1;
        let mut quic = Quic::connect(now, config, remote, &name).map_err(|e| {
            self.tls_error = Some(format!("QUIC: {e}"));
            ErrorKind::Other
        })?;
        // A resumed session with 0-RTT keys: requests go now (`--quic-0rtt` only
        // enables early data in the TLS configuration).
        let early = quic.conn_ref().has_0rtt();
        if early {
            h.proto.start(quic.conn()).map_err(|e| {
                self.tls_error = Some(format!("HTTP/3: {e}"));
                ErrorKind::Other
            })?;
            h.early = true;
            ctx.stats.http3.zero_rtt_sent += 1;
        }
        h.quic = Some(quic);
        Ok(early)
    }

    /// The handshake phase of an HTTP/3 connection: starts QUIC on the first call,
    /// then reads and writes datagrams; Ok(true) once connected (handshake done, or
    /// 0-RTT started).
    pub(super) fn handshake_h3(
        &mut self,
        now: Instant,
        ctx: &mut Ctx<'_>,
    ) -> Result<bool, ErrorKind> {
        if self.h3.as_ref().is_some_and(|h| h.quic.is_none()) && self.start_quic(now, ctx)? {
            self.on_connected(now, ctx);
            self.flush_h3(now)?;
            return Ok(true);
        }
        match self.drive_h3(now, ctx) {
            Step::Continue | Step::Close | Step::PeerClosed => {}
            Step::Fail(kind) => return Err(kind),
        }
        if self.h3.as_ref().is_some_and(|h| h.handshaken) {
            self.on_connected(now, ctx);
            return Ok(true);
        }
        self.flush_h3(now)?;
        Ok(false)
    }

    /// Datagrams may have arrived: reads them all and handles what they brought.
    /// New streams, acknowledgements and the rest go out on the connection's write
    /// turn at the end of the poll turn (`writable_h3`), in as few datagrams as QUIC
    /// can pack them.
    pub(super) fn readable_h3(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        let step = self.drive_h3(now, ctx);
        if step != Step::Continue {
            return step;
        }
        self.goaway_done()
    }

    /// The engine's once-a-turn write: opens streams for queued calls, sends what
    /// QUIC has.
    pub(super) fn writable_h3(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        self.after_h3(now, ctx)
    }

    /// Close once a GOAWAY's last reply is in.
    fn goaway_done(&mut self) -> Step {
        match self.h3.as_ref() {
            Some(h) if h.proto.going_away() && h.proto.in_flight() == 0 => {
                self.closing = true;
                Step::Close
            }
            Some(_) => Step::Continue,
            None => Step::Fail(ErrorKind::Other),
        }
    }

    /// QUIC's timer fired (if due): handles it, then its consequences.
    pub(crate) fn on_timer_h3(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        let Some(q) = self.h3.as_mut().and_then(|h| h.quic.as_mut()) else {
            return Step::Continue;
        };
        if q.timeout().is_none_or(|t| t > now) {
            return Step::Continue;
        }
        q.on_timeout(now);
        let step = self.events_h3(now, ctx);
        if step != Step::Continue {
            return step;
        }
        if self.phase == Phase::Active {
            return self.after_h3(now, ctx);
        }
        match self.flush_h3(now) {
            Ok(()) => Step::Continue,
            Err(k) => Step::Fail(k),
        }
    }

    /// When QUIC's timer next needs `on_timer_h3`.
    pub(crate) fn wake(&mut self) -> Option<Instant> {
        self.h3
            .as_mut()
            .and_then(|h| h.quic.as_mut())
            .and_then(Quic::timeout)
    }

    /// Reads every datagram, then handles the connection's events.
    fn drive_h3(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        let (Some(h), Some(stream)) = (self.h3.as_mut(), self.stream.as_mut()) else {
            return Step::Fail(ErrorKind::Other);
        };
        let Some(q) = h.quic.as_mut() else {
            return Step::Fail(ErrorKind::Other);
        };
        let got = RECV_BUF.with_borrow_mut(|buf| {
            if buf.is_empty() {
                buf.resize(RECV_BATCH * RECV_SLOT, 0);
            }
            q.receive(now, |b, each| stream.recv_datagrams(b, each), buf)
        });
        if let Err(e) = got {
            return Step::Fail(ErrorKind::from_errno(crate::wire::net::errno(&e)));
        }
        self.events_h3(now, ctx)
    }

    /// After reading in the active phase: opens streams, sends, sets the reply
    /// watchdog, and closes once a GOAWAY's last reply is in.
    fn after_h3(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        self.pump_h3(now, ctx);
        if let Err(k) = self.flush_h3(now) {
            return Step::Fail(k);
        }
        self.goaway_done()
    }

    /// Handles the QUIC connection's events: the handshake's end, stream events for
    /// HTTP/3, a lost connection.
    fn events_h3(&mut self, now: Instant, ctx: &mut Ctx<'_>) -> Step {
        let Some(h) = self.h3.as_mut() else {
            return Step::Fail(ErrorKind::Other);
        };
        let Some(q) = h.quic.as_mut() else {
            return Step::Fail(ErrorKind::Other);
        };
        let mut sink = sink!(self, h, now, ctx, true);
        let mut failure = None;
        let mut quiet = false;
        while let Some(ev) = q.poll() {
            match ev {
                Event::Connected => {
                    h.handshaken = true;
                    let s = &mut sink.ctx.stats;
                    s.http3.handshakes += 1;
                    let us = now.saturating_duration_since(self.started).as_micros();
                    s.http3.handshake_sum_us += u64::try_from(us).unwrap_or(u64::MAX);
                    let accepted = h.early && q.conn_ref().accepted_0rtt();
                    if accepted {
                        s.http3.zero_rtt_accepted += 1;
                    }
                    s.on_tls_handshake(accepted || h.resumed.get());
                    if h.early && !accepted {
                        // 0-RTT rejected: QUIC dropped the early streams; their calls
                        // go back to the queue and HTTP/3 starts again in 1-RTT (each
                        // call still counts as one request: `Sink::started`).
                        s.http3.zero_rtt_rejected += 1;
                        for t in h.proto.drain() {
                            sink.refused.push(t);
                        }
                        h.proto.reset();
                    }
                    if !h.early || !accepted {
                        if let Err(e) = h.proto.start(q.conn()) {
                            failure = Some((ErrorKind::Other, format!("HTTP/3: {e}")));
                            break;
                        }
                    }
                }
                Event::Stream(se) => {
                    if let Err(e) = h.proto.on_stream_event(q.conn(), se, &mut sink) {
                        sink.ctx.stats.http3.protocol_errors += 1;
                        q.conn()
                            .close(now, VarInt::from_u32(e.code as u32), bytes::Bytes::new());
                        failure = Some((ErrorKind::Other, format!("HTTP/3 server error: {e}")));
                        break;
                    }
                }
                Event::ConnectionLost { reason } => {
                    quiet = h.handshaken && quiet_end(&reason);
                    let (kind, say) = lost_kind(&reason);
                    if say {
                        sink.ctx.stats.http3.protocol_errors += 1;
                    }
                    failure = Some((
                        kind,
                        if say {
                            format!("QUIC: {reason}")
                        } else {
                            String::new()
                        },
                    ));
                    break;
                }
                _ => {}
            }
        }
        if failure.is_none() {
            h.proto.refuse_beyond_goaway(q.conn(), &mut sink);
        }
        let progress = sink.progress;
        for t in h.refused.drain(..).rev() {
            self.calls.push_front(t.call);
            h.staged.requeue(t.slot);
        }
        if let Some((kind, why)) = failure {
            if quiet && h.proto.in_flight() == 0 && self.calls.is_empty() {
                return if self.closing {
                    Step::Close
                } else {
                    Step::PeerClosed
                };
            }
            if !why.is_empty() {
                self.tls_error = Some(why);
            }
            return Step::Fail(kind);
        }
        if h.proto.going_away() && !self.closing {
            ctx.stats.http3.goaways += 1;
            self.closing = true;
        }
        let in_flight = h.proto.in_flight();
        self.recv_deadline = match (in_flight, progress) {
            (0, _) => None,
            (_, true) => after(now, ctx.reply_timeout),
            (_, false) => self.recv_deadline.or(after(now, ctx.reply_timeout)),
        };
        Step::Continue
    }

    /// Opens streams for queued calls while the server allows.
    fn pump_h3(&mut self, now: Instant, ctx: &mut Ctx<'_>) {
        let Some(h) = self.h3.as_mut() else {
            return;
        };
        let Some(q) = h.quic.as_mut() else {
            return;
        };
        let mut sink = sink!(self, h, now, ctx, true);
        let mut opened = false;
        while h.proto.can_open() {
            let Some(mut call) = self.calls.pop_front() else {
                break;
            };
            let slot = sink.staged.hold_front();
            let (fields, body, decoded) = sink.staged.parts(slot);
            let (frames, section) = h.last.frames(fields, body);
            call.send_start = now;
            call.len = section + body.len();
            let tag = Tagged {
                call,
                reply_start: now,
                block: u32_of(section),
                decoded: u32_of(decoded),
                slot,
            };
            match h.proto.open(q.conn(), tag, frames, &mut sink) {
                Ok(()) => opened = true,
                Err(tag) => {
                    self.calls.push_front(tag.call);
                    sink.staged.requeue(tag.slot);
                    break;
                }
            }
        }
        if opened && self.recv_deadline.is_none() {
            self.recv_deadline = after(now, ctx.reply_timeout);
        }
    }

    /// Sends every datagram QUIC has (a full socket keeps the rest for the next
    /// turn; a send error is the connection's: ICMP unreachable on a connected
    /// socket).
    fn flush_h3(&mut self, now: Instant) -> Result<(), ErrorKind> {
        let (Some(h), Some(stream)) = (self.h3.as_mut(), self.stream.as_mut()) else {
            return Err(ErrorKind::Other);
        };
        let Some(q) = h.quic.as_mut() else {
            return Ok(());
        };
        let segments = stream.max_segments();
        q.flush(now, segments, |out| stream.send_datagrams(out))
            .map(|_| ())
            .map_err(|e| ErrorKind::from_errno(crate::wire::net::errno(&e)))
    }

    /// Closes the QUIC connection (H3_NO_ERROR, best effort: one flush) and counts
    /// its packet figures.
    pub(crate) fn close_h3(&mut self, now: Instant, ctx_stats: &mut crate::model::stats::Stats) {
        let Some(h) = self.h3.as_mut() else {
            return;
        };
        let Some(mut q) = h.quic.take() else {
            return;
        };
        let st = q.conn_ref().stats();
        let s = &mut ctx_stats.http3;
        s.packets_sent += st.path.sent_packets;
        s.packets_lost += st.path.lost_packets;
        if h.handshaken {
            s.rtt_sum_us += u64::try_from(q.conn_ref().rtt().as_micros()).unwrap_or(u64::MAX);
            s.rtt_samples += 1;
        }
        if !q.conn_ref().is_closed() {
            q.conn().close(
                now,
                VarInt::from_u32(code::NO_ERROR as u32),
                bytes::Bytes::new(),
            );
            if let Some(stream) = self.stream.as_mut() {
                let segments = stream.max_segments();
                let _ = q.flush(now, segments, |out| stream.send_datagrams(out));
            }
        }
    }

    /// Whether a call queued now gets a stream at once.
    pub(super) fn can_open_h3(&self) -> bool {
        self.calls.is_empty() && self.h3.as_ref().is_some_and(|h| h.proto.can_open())
    }

    /// Streams in flight (part of `outstanding`).
    pub(super) fn in_flight_h3(&self) -> usize {
        self.h3.as_ref().map_or(0, |h| h.proto.in_flight())
    }

    /// Moves the calls of open streams back to the queue (the connection is going
    /// away) and forgets the staged requests.
    pub(super) fn drain_h3(&mut self) {
        if let Some(h) = self.h3.as_mut() {
            for t in h.proto.drain() {
                self.calls.push_front(t.call);
            }
            h.staged.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Encoded;
    use crate::wire::http2::encoder::put_plain;
    use crate::wire::http3::qpack::Decoder;

    /// A plain field list with `:path` `path`.
    fn fields(path: &str) -> Vec<u8> {
        let mut f = Vec::new();
        put_plain(&mut f, b":method", b"POST");
        put_plain(&mut f, b":path", path.as_bytes());
        f
    }

    /// Decoded (name, value) fields.
    type Fields = Vec<(Vec<u8>, Vec<u8>)>;

    /// The QPACK section's fields and the DATA payload of a request's frames.
    fn split(frames: &[u8]) -> (Fields, Vec<u8>) {
        // HEADERS (type 1) and DATA (type 0), lengths under 64: one byte each here.
        assert_eq!(frames[0], 0x01);
        let n = usize::from(frames[1]);
        let mut got = Vec::new();
        Decoder::new()
            .decode(&frames[2..2 + n], 1 << 20, |k, v| {
                got.push((k.to_vec(), v.to_vec()))
            })
            .expect("section");
        let rest = &frames[2 + n..];
        let body = if rest.is_empty() {
            Vec::new()
        } else {
            assert_eq!((rest[0], usize::from(rest[1])), (0x00, rest.len() - 2));
            rest[2..].to_vec()
        };
        (got, body)
    }

    #[test]
    fn frames_are_shared_while_fields_and_body_repeat_and_rebuilt_when_either_changes() {
        let mut e = Encoded::default();
        let (a, la) = e.frames(&fields("/a"), b"one");
        let (again, _) = e.frames(&fields("/a"), b"one");
        assert_eq!(again.as_ptr(), a.as_ptr(), "the same buffer, not a copy");
        let (got, body) = split(&a);
        assert_eq!(got[1], (b":path".to_vec(), b"/a".to_vec()));
        assert_eq!((body.as_slice(), la), (&b"one"[..], usize::from(a[1])));

        let (b, _) = e.frames(&fields("/a"), b"two");
        assert_ne!(b.as_ptr(), a.as_ptr());
        assert_eq!(split(&b).1, b"two");
        let (c, _) = e.frames(&fields("/c"), b"two");
        assert_eq!(split(&c).0[1], (b":path".to_vec(), b"/c".to_vec()));
        let (d, _) = e.frames(&fields("/c"), b"");
        assert_eq!(split(&d).1, b"");
        // The first request's frames are untouched by what followed.
        assert_eq!(split(&a).1, b"one");
    }
}
