//! One HTTP/2 client connection's protocol state, sans I/O (RFC 9113): the preface and
//! SETTINGS exchange, streams opened for requests, reply HEADERS/CONTINUATION decoded
//! through HPACK, DATA, flow control in both directions, PING, RST_STREAM, GOAWAY,
//! and the limits that keep a hostile server from holding the client.
//!
//! Owns everything between bytes and reply events: `open` writes a request's frames
//! into the caller's output buffer, `on_bytes` consumes server bytes and writes any
//! answers the protocol needs (SETTINGS and PING acks, WINDOW_UPDATE as data is
//! consumed), `on_written` learns how much output reached the socket. What happens on
//! the wire is reported through `Events`, each stream carrying the caller's tag `T`.
//! Does not own sockets, timers, statistics or which call goes next: `crate::engine::conn`
//! drives it (one per connection slot, reused) and turns events into `Completion`s.
//! Nothing allocates per request once the slot's buffers have grown (a request body
//! held back by flow control is the exception).

use super::encoder::Encoder;
use super::frame::{self, code, flag, kind, setting, FrameError, Head, Item, Reader};
use super::hpack::Decoder;

/// Our stream receive window (SETTINGS_INITIAL_WINDOW_SIZE): DATA is never buffered,
/// so a large window costs nothing and spares WINDOW_UPDATE round trips.
const STREAM_WINDOW: u32 = 1 << 24;
/// Our connection receive window (raised from 65,535 by the first WINDOW_UPDATE).
const CONN_WINDOW: u32 = 1 << 30;
/// Our SETTINGS_HEADER_TABLE_SIZE (the default).
const TABLE_SIZE: usize = 4096;
/// Longest header block accepted on the wire (HEADERS plus CONTINUATION payloads).
const MAX_BLOCK: usize = 256 * 1024;
/// Largest decoded header list accepted (our SETTINGS_MAX_HEADER_LIST_SIZE).
const MAX_LIST: u64 = 1 << 20;
/// Control frames (SETTINGS, PING, WINDOW_UPDATE, PRIORITY, unknown) accepted in a row
/// without any stream making progress: past this the server is flooding.
const MAX_CONTROL_RUN: u32 = 10_000;
/// Highest client stream id.
const MAX_STREAM_ID: u32 = (1 << 31) - 1;
/// Streams refused with REFUSED_STREAM that are retried on one connection; past
/// this, a refusal fails its call like any other reset.
const MAX_REFUSED: u32 = 100;

/// Why the connection must end: the code for GOAWAY and a reason for traces.
pub(crate) type H2Error = FrameError;

fn err(code: u32, reason: &'static str) -> H2Error {
    FrameError { code, reason }
}

/// Sizes of one reply, as `http::response::Reply` counts them for HTTP/1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reply {
    /// Final status (0 until the final HEADERS).
    pub status: u16,
    /// Decoded header bytes (Σ name + value, pseudo-headers and interim 1xx blocks
    /// included): h2load's "decompressed" size.
    pub header_bytes: u64,
    /// Header block bytes on the wire (HEADERS and CONTINUATION fragments, trailers
    /// included): h2load's "compressed" size.
    pub(crate) header_wire: u64,
    /// DATA bytes (padding excluded).
    pub content_bytes: u64,
    /// Decoded trailer bytes.
    pub footer_bytes: u64,
}

/// What the connection reports to its driver.
pub trait Events<T> {
    /// The header block of `tag`'s request is written: from now on it counts as a
    /// request, whether or not its body is ever finished.
    fn started(&mut self, _tag: &mut T) {}
    /// The request of the stream tagged `tag` is completely written: `bytes` frame
    /// bytes (headers and DATA, frame headers included).
    fn written(&mut self, tag: &mut T, bytes: u64);
    /// The final status of `tag`'s reply arrived.
    fn status(&mut self, tag: &mut T, status: u16);
    /// A decoded header field of `tag`'s reply (pseudo-headers, interim and trailer
    /// fields included); an empty name ends a block.
    fn field(&mut self, _tag: &T, _name: &[u8], _value: &[u8]) {}
    /// Content bytes of `tag`'s reply.
    fn data(&mut self, _tag: &T, _bytes: &[u8]) {}
    /// `tag`'s reply is complete.
    fn done(&mut self, tag: T, reply: &Reply);
    /// The server reset `tag`'s stream with `code` (the call failed).
    fn reset(&mut self, tag: T, code: u32);
    /// The server did not process `tag`'s request (GOAWAY beyond its last stream, or
    /// RST_STREAM with REFUSED_STREAM): it may be sent again.
    fn refused(&mut self, tag: T);
}

/// One open stream.
#[derive(Debug)]
struct Stream<T> {
    id: u32,
    tag: T,
    send_window: i64,
    /// Received DATA bytes not yet returned through WINDOW_UPDATE.
    unacked: u32,
    /// The final HEADERS arrived.
    headers_done: bool,
    reply: Reply,
    /// Request body held back by flow control: `body[body_off..]`.
    body: Vec<u8>,
    body_off: usize,
    /// END_STREAM has been queued.
    end_sent: bool,
    /// Frame bytes queued for this stream, and the connection's output total after
    /// its last frame.
    wire_bytes: u64,
    wire_end: u64,
    /// The connection's output total after its header block; `started` once that
    /// much reached the socket.
    head_end: u64,
    started: bool,
    written: bool,
}

/// The header block being assembled.
#[derive(Debug, Clone, Copy, Default)]
struct Block {
    stream: u32,
    end_stream: bool,
    /// Inside a block: only CONTINUATION of `stream` may follow.
    open: bool,
    wire: u64,
}

/// One HTTP/2 connection (see the module header). `T` tags streams for the driver.
#[derive(Debug)]
pub struct H2<T> {
    reader: Reader,
    decoder: Decoder,
    block_buf: Vec<u8>,
    block: Block,
    streams: Vec<Stream<T>>,
    next_id: u32,
    got_settings: bool,
    peer_max_streams: u32,
    peer_window: i64,
    peer_max_frame: usize,
    send_window: i64,
    recv_window: i64,
    unacked: u32,
    goaway: Option<u32>,
    control_run: u32,
    refused: u32,
    out_total: u64,
    written_total: u64,
    /// HPACK state of our request header blocks.
    encoder: Encoder,
    /// Streams reset (by us or the server) rather than ended by the server.
    resets: Resets,
}

/// How many reset streams are remembered (see `Resets`).
const RESETS_KEPT: usize = 64;

/// The streams that closed by a RST_STREAM, ours (after an early answer, §8.1) or
/// the server's: frames that come later on them are ignored (§5.1: the server may
/// have sent them before it saw our reset; after its own, they are a stream error,
/// and the stream is gone already). A stream the server ended with END_STREAM is
/// different: DATA or HEADERS on it are a STREAM_CLOSED connection error. The last
/// `RESETS_KEPT` are remembered; an older closed stream gets the benefit of the doubt.
#[derive(Debug, Default)]
struct Resets {
    ids: std::collections::VecDeque<u32>,
    /// Streams up to this one may be resets no longer remembered.
    forgot_up_to: u32,
}

impl Resets {
    fn add(&mut self, id: u32) {
        if self.ids.len() == RESETS_KEPT {
            if let Some(old) = self.ids.pop_front() {
                self.forgot_up_to = self.forgot_up_to.max(old);
            }
        }
        self.ids.push_back(id);
    }

    fn ours(&self, id: u32) -> bool {
        id <= self.forgot_up_to || self.ids.contains(&id)
    }
}

impl<T> Default for H2<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> H2<T> {
    /// A connection before its preface.
    pub fn new() -> H2<T> {
        H2 {
            reader: Reader::new(frame::DEFAULT_MAX_FRAME),
            decoder: Decoder::new(TABLE_SIZE),
            block_buf: Vec::new(),
            block: Block::default(),
            streams: Vec::new(),
            next_id: 1,
            got_settings: false,
            // Unlimited until the server's SETTINGS say otherwise (§5.1.2).
            peer_max_streams: u32::MAX,
            peer_window: i64::from(frame::DEFAULT_WINDOW),
            peer_max_frame: frame::DEFAULT_MAX_FRAME as usize,
            send_window: i64::from(frame::DEFAULT_WINDOW),
            recv_window: i64::from(CONN_WINDOW),
            unacked: 0,
            goaway: None,
            control_run: 0,
            refused: 0,
            out_total: 0,
            written_total: 0,
            encoder: Encoder::default(),
            resets: Resets::default(),
        }
    }

    /// Back to "before the preface" for a new connection (buffers kept). Streams must
    /// have been drained.
    pub(crate) fn reset(&mut self) {
        let mut streams = std::mem::take(&mut self.streams);
        streams.clear();
        let reader = std::mem::replace(&mut self.reader, Reader::new(0));
        let mut decoder = std::mem::take(&mut self.decoder);
        let mut block_buf = std::mem::take(&mut self.block_buf);
        let mut encoder = std::mem::take(&mut self.encoder);
        *self = H2::new();
        encoder.reset();
        self.encoder = encoder;
        self.reader = reader;
        self.reader.reset();
        decoder.reset();
        self.decoder = decoder;
        block_buf.clear();
        self.block_buf = block_buf;
        self.streams = streams;
    }

    /// Writes the client preface, our SETTINGS and the connection window increase.
    pub fn start(&mut self, out: &mut Vec<u8>) {
        let before = out.len();
        out.extend_from_slice(frame::PREFACE);
        frame::put_settings(
            out,
            &[
                (setting::ENABLE_PUSH, 0),
                (setting::INITIAL_WINDOW_SIZE, STREAM_WINDOW),
                (setting::MAX_HEADER_LIST_SIZE, MAX_LIST as u32),
            ],
        );
        frame::put_window_update(out, 0, CONN_WINDOW - frame::DEFAULT_WINDOW);
        self.out_total += (out.len() - before) as u64;
    }

    /// Streams open (requests sent or being sent, replies not complete).
    pub fn in_flight(&self) -> usize {
        self.streams.len()
    }

    /// Whether a new stream may be opened now: the server's SETTINGS arrived (so its
    /// SETTINGS_MAX_CONCURRENT_STREAMS is known: streams beyond it would be refused),
    /// no GOAWAY, below that limit, stream ids left.
    pub fn can_open(&self) -> bool {
        self.got_settings
            && self.goaway.is_none()
            && (self.streams.len() as u64) < u64::from(self.peer_max_streams)
            && self.next_id <= MAX_STREAM_ID
    }

    /// The server's SETTINGS arrived: the connection is up.
    pub(crate) fn ready(&self) -> bool {
        self.got_settings
    }

    /// The server sent GOAWAY (or ids ran out): no new streams on this connection.
    pub(crate) fn closing(&self) -> bool {
        self.goaway.is_some() || self.next_id > MAX_STREAM_ID
    }

    /// A request body is waiting for the server to open a flow-control window.
    pub(crate) fn blocked(&self) -> bool {
        self.streams.iter().any(|s| !s.end_sent)
    }

    /// The request header encoder (its table follows the server's
    /// SETTINGS_HEADER_TABLE_SIZE): blocks must be encoded in the order of `open`.
    pub(crate) fn encoder(&mut self) -> &mut Encoder {
        &mut self.encoder
    }

    /// The id the next stream `open`s gets.
    pub fn next_stream_id(&self) -> u32 {
        self.next_id
    }

    /// Opens a stream for a request whose HPACK header block is `block` and whose
    /// body is `body`; writes its frames (as far as flow control allows) to `out`.
    /// The caller checked `can_open`.
    pub fn open(&mut self, tag: T, block: &[u8], body: &[u8], out: &mut Vec<u8>) -> u32 {
        let before = out.len();
        let id = self.next_id;
        self.next_id = self.next_id.saturating_add(2);
        let max = self.peer_max_frame;
        let mut rest = block;
        let mut first = true;
        loop {
            let n = rest.len().min(max);
            let (piece, tail) = rest.split_at(n);
            rest = tail;
            let mut flags = if rest.is_empty() {
                flag::END_HEADERS
            } else {
                0
            };
            let kind = if first {
                if body.is_empty() {
                    flags |= flag::END_STREAM;
                }
                kind::HEADERS
            } else {
                kind::CONTINUATION
            };
            frame::put_head(out, n, kind, flags, id);
            out.extend_from_slice(piece);
            first = false;
            if rest.is_empty() {
                break;
            }
        }
        let head_end = self.out_total + (out.len() - before) as u64;
        let mut s = Stream {
            id,
            tag,
            send_window: self.peer_window,
            unacked: 0,
            headers_done: false,
            reply: Reply::default(),
            body: Vec::new(),
            body_off: 0,
            end_sent: body.is_empty(),
            wire_bytes: 0,
            wire_end: 0,
            head_end,
            started: false,
            written: false,
        };
        if !body.is_empty() {
            let sent = send_data(&mut s, &mut self.send_window, max, body, out);
            if sent < body.len() {
                s.body.extend_from_slice(&body[sent..]);
            }
        }
        let n = (out.len() - before) as u64;
        self.out_total += n;
        s.wire_bytes = n;
        s.wire_end = self.out_total;
        self.streams.push(s);
        id
    }

    /// `n` more output bytes reached the socket: reports requests now completely
    /// written.
    pub(crate) fn on_written(&mut self, n: usize, ev: &mut impl Events<T>) {
        self.written_total += n as u64;
        for s in &mut self.streams {
            if !s.started && s.head_end <= self.written_total {
                s.started = true;
                ev.started(&mut s.tag);
            }
            if !s.written && s.end_sent && s.wire_end <= self.written_total {
                s.written = true;
                ev.written(&mut s.tag, s.wire_bytes);
            }
        }
    }

    /// Ends the connection on our side after `e`: writes GOAWAY.
    pub(crate) fn fail(&mut self, e: H2Error, out: &mut Vec<u8>) {
        let before = out.len();
        // GOAWAY names the last server-initiated stream processed: there are none.
        frame::put_goaway(out, 0, e.code);
        self.out_total += (out.len() - before) as u64;
    }

    /// Takes back the tags of every open stream (the connection is going away).
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.streams.drain(..).map(|s| s.tag)
    }

    /// Consumes server bytes; writes protocol answers to `out`. Returns whether a
    /// stream made progress (reply bytes arrived), or the error that ends the
    /// connection.
    pub fn on_bytes(
        &mut self,
        mut input: &[u8],
        out: &mut Vec<u8>,
        ev: &mut impl Events<T>,
    ) -> Result<bool, H2Error> {
        let before = out.len();
        let r = self.consume(&mut input, out, ev);
        self.out_total += (out.len() - before) as u64;
        r
    }

    fn consume(
        &mut self,
        input: &mut &[u8],
        out: &mut Vec<u8>,
        ev: &mut impl Events<T>,
    ) -> Result<bool, H2Error> {
        // Absolute output position of `out[k]` is `out_base + k`.
        let out_base = self.out_total.wrapping_sub(out.len() as u64);
        let H2 {
            reader,
            decoder,
            block_buf,
            block,
            streams,
            next_id,
            got_settings,
            peer_max_streams,
            peer_window,
            peer_max_frame,
            send_window,
            recv_window,
            unacked,
            goaway,
            control_run,
            refused,
            encoder,
            resets,
            ..
        } = self;
        let mut c = Conn {
            streams,
            next_id: *next_id,
            got_settings,
            peer_max_streams,
            peer_window,
            peer_max_frame,
            send_window,
            recv_window,
            unacked,
            goaway,
            refused,
            encoder,
            resets,
            out_base,
        };
        let mut progress = false;
        loop {
            let item = match reader.next(input) {
                Ok(Some(item)) => item,
                Ok(None) => return Ok(progress),
                Err(_) if !*c.got_settings => return Err(err(code::PROTOCOL_ERROR, NOT_H2)),
                Err(e) => return Err(e),
            };
            let stream_event = match item {
                Item::Data { head, bytes, end } => {
                    if !*c.got_settings || block.open {
                        return Err(err(code::PROTOCOL_ERROR, "DATA out of place"));
                    }
                    on_data(&mut c, head, bytes, end, out, ev)?;
                    true
                }
                Item::Frame(head, payload) => {
                    if !*c.got_settings && (head.kind != kind::SETTINGS || head.has(flag::ACK)) {
                        return Err(err(code::PROTOCOL_ERROR, NOT_H2));
                    }
                    if block.open
                        && (head.kind != kind::CONTINUATION || head.stream != block.stream)
                    {
                        return Err(err(code::PROTOCOL_ERROR, "header block interrupted"));
                    }
                    on_frame(decoder, block_buf, block, &mut c, head, payload, out, ev)?
                }
            };
            if stream_event {
                progress = true;
                *control_run = 0;
            } else {
                *control_run += 1;
                if *control_run > MAX_CONTROL_RUN {
                    return Err(err(code::ENHANCE_YOUR_CALM, "control-frame flood"));
                }
            }
        }
    }
}

/// Whether `e` is the failure of a server whose first bytes were not HTTP/2's
/// SETTINGS (an HTTP/1 server, or something else that is not an HTTP/2 server).
pub(crate) fn is_not_h2(e: &H2Error) -> bool {
    e.reason == NOT_H2
}

/// The first bytes are not an HTTP/2 server's SETTINGS.
const NOT_H2: &str = "the server did not start with SETTINGS (not an HTTP/2 server?)";

/// The connection fields frame handlers change (borrowed apart from the reader).
struct Conn<'a, T> {
    streams: &'a mut Vec<Stream<T>>,
    next_id: u32,
    got_settings: &'a mut bool,
    peer_max_streams: &'a mut u32,
    peer_window: &'a mut i64,
    peer_max_frame: &'a mut usize,
    send_window: &'a mut i64,
    recv_window: &'a mut i64,
    unacked: &'a mut u32,
    goaway: &'a mut Option<u32>,
    refused: &'a mut u32,
    encoder: &'a mut Encoder,
    resets: &'a mut Resets,
    /// `out[k]` is output byte `out_base + k` of the connection.
    out_base: u64,
}

/// Writes DATA frames for `body` as far as both windows allow; returns the bytes
/// sent. Sets END_STREAM on the frame that ends the body.
fn send_data<T>(
    s: &mut Stream<T>,
    conn_window: &mut i64,
    max_frame: usize,
    body: &[u8],
    out: &mut Vec<u8>,
) -> usize {
    let mut sent = 0;
    while sent < body.len() {
        let room = s.send_window.min(*conn_window).max(0) as usize;
        let n = (body.len() - sent).min(room).min(max_frame);
        if n == 0 {
            break;
        }
        let last = sent + n == body.len();
        let flags = if last { flag::END_STREAM } else { 0 };
        frame::put_head(out, n, kind::DATA, flags, s.id);
        out.extend_from_slice(&body[sent..sent + n]);
        s.send_window -= n as i64;
        *conn_window -= n as i64;
        sent += n;
        if last {
            s.end_sent = true;
        }
    }
    sent
}

/// Sends more of held-back bodies after a window opened.
fn resume_bodies<T>(c: &mut Conn<'_, T>, out: &mut Vec<u8>) {
    for s in c.streams.iter_mut() {
        if s.end_sent || *c.send_window <= 0 {
            continue;
        }
        let before = out.len();
        let body = std::mem::take(&mut s.body);
        let sent = send_data(
            s,
            c.send_window,
            *c.peer_max_frame,
            &body[s.body_off..],
            out,
        );
        s.body_off += sent;
        s.body = body;
        if s.end_sent {
            s.body.clear();
            s.body_off = 0;
        }
        s.wire_bytes += (out.len() - before) as u64;
        s.wire_end = c.out_base.wrapping_add(out.len() as u64);
    }
}

fn find<T>(streams: &[Stream<T>], id: u32) -> Option<usize> {
    streams.iter().position(|s| s.id == id)
}

/// A frame for stream `id` that is not open: idle streams (ids we never used) are a
/// protocol error (§5.1); closed ones are ignored (RST_STREAM, WINDOW_UPDATE and
/// PRIORITY may come after a stream closed, and on a stream we reset so may anything
/// sent before the server saw it).
fn unknown_stream(id: u32, next_id: u32) -> Result<(), H2Error> {
    if id % 2 == 1 && id < next_id {
        Ok(())
    } else {
        Err(err(code::PROTOCOL_ERROR, "frame on an idle stream"))
    }
}

/// DATA or HEADERS for stream `id` that is not open: on a stream the server ended
/// with END_STREAM a connection error of type STREAM_CLOSED (§5.1, §6.1), on a reset
/// one ignored (`Resets`), on an idle one a protocol error.
fn closed_stream(id: u32, c: &Conn<'_, impl Sized>) -> Result<(), H2Error> {
    unknown_stream(id, c.next_id)?;
    if c.resets.ours(id) {
        Ok(())
    } else {
        Err(err(
            code::STREAM_CLOSED,
            "DATA or HEADERS on a stream the server closed",
        ))
    }
}

fn on_data<T>(
    c: &mut Conn<'_, T>,
    head: Head,
    bytes: &[u8],
    end: bool,
    out: &mut Vec<u8>,
    ev: &mut impl Events<T>,
) -> Result<(), H2Error> {
    if head.stream == 0 {
        return Err(err(code::PROTOCOL_ERROR, "DATA on stream 0"));
    }
    let i = find(c.streams, head.stream);
    if let Some(i) = i {
        let s = &mut c.streams[i];
        if !s.headers_done {
            return Err(err(code::PROTOCOL_ERROR, "DATA before HEADERS"));
        }
        s.reply.content_bytes += bytes.len() as u64;
        if !bytes.is_empty() {
            ev.data(&s.tag, bytes);
        }
    } else {
        closed_stream(head.stream, c)?;
    }
    if !end {
        return Ok(());
    }
    // Flow control counts the whole payload, padding included (§6.9.1).
    let len = head.len;
    *c.recv_window -= i64::from(len);
    if *c.recv_window < 0 {
        return Err(err(
            code::FLOW_CONTROL_ERROR,
            "DATA beyond the connection window",
        ));
    }
    *c.unacked += len;
    if *c.unacked >= CONN_WINDOW / 2 {
        frame::put_window_update(out, 0, *c.unacked);
        *c.recv_window += i64::from(*c.unacked);
        *c.unacked = 0;
    }
    let Some(i) = i else {
        return Ok(());
    };
    let s = &mut c.streams[i];
    s.unacked += len;
    if s.unacked > STREAM_WINDOW {
        return Err(err(
            code::FLOW_CONTROL_ERROR,
            "DATA beyond the stream window",
        ));
    }
    if head.has(flag::END_STREAM) {
        let s = c.streams.swap_remove(i);
        finish(s, c.resets, out, ev);
    } else if s.unacked >= STREAM_WINDOW / 2 {
        frame::put_window_update(out, s.id, s.unacked);
        s.unacked = 0;
    }
    Ok(())
}

/// A stream's reply is complete. If our request body is not all sent (the server
/// answered early), the stream is reset with NO_ERROR (RFC 9113 §8.1) and no more
/// of its DATA goes out: the held-back rest is dropped with the stream.
fn finish<T>(mut s: Stream<T>, resets: &mut Resets, out: &mut Vec<u8>, ev: &mut impl Events<T>) {
    if !s.end_sent {
        frame::put_rst_stream(out, s.id, code::NO_ERROR);
        resets.add(s.id);
    }
    if !s.started {
        ev.started(&mut s.tag);
    }
    if !s.written {
        // Answered before its request was all written: count it as sent now.
        ev.written(&mut s.tag, s.wire_bytes);
    }
    ev.done(s.tag, &s.reply);
}

/// Handles one complete non-DATA frame; returns whether it was a stream event.
#[allow(clippy::too_many_arguments)]
fn on_frame<T>(
    decoder: &mut Decoder,
    block_buf: &mut Vec<u8>,
    block: &mut Block,
    c: &mut Conn<'_, T>,
    head: Head,
    payload: &[u8],
    out: &mut Vec<u8>,
    ev: &mut impl Events<T>,
) -> Result<bool, H2Error> {
    match head.kind {
        kind::HEADERS => {
            if head.stream == 0 || head.stream.is_multiple_of(2) {
                return Err(err(code::PROTOCOL_ERROR, "HEADERS on a non-client stream"));
            }
            let mut p = payload;
            let mut pad = 0;
            if head.has(flag::PADDED) {
                let (&n, rest) = p
                    .split_first()
                    .ok_or(err(code::FRAME_SIZE_ERROR, "short HEADERS"))?;
                pad = usize::from(n);
                p = rest;
            }
            if head.has(flag::PRIORITY) {
                p = p
                    .get(5..)
                    .ok_or(err(code::FRAME_SIZE_ERROR, "short HEADERS"))?;
            }
            if pad > p.len() {
                return Err(err(code::PROTOCOL_ERROR, "HEADERS padding too long"));
            }
            let fragment = &p[..p.len() - pad];
            *block = Block {
                stream: head.stream,
                end_stream: head.has(flag::END_STREAM),
                open: !head.has(flag::END_HEADERS),
                wire: fragment.len() as u64,
            };
            if block.open {
                block_buf.clear();
                block_buf.extend_from_slice(fragment);
                return Ok(true);
            }
            on_block(decoder, fragment, *block, c, out, ev)?;
            Ok(true)
        }
        kind::CONTINUATION => {
            if !block.open {
                return Err(err(code::PROTOCOL_ERROR, "CONTINUATION without HEADERS"));
            }
            if block_buf.len() + payload.len() > MAX_BLOCK {
                return Err(err(
                    code::ENHANCE_YOUR_CALM,
                    "header block too long (endless CONTINUATION?)",
                ));
            }
            block_buf.extend_from_slice(payload);
            block.wire += payload.len() as u64;
            if head.has(flag::END_HEADERS) {
                block.open = false;
                on_block(decoder, block_buf, *block, c, out, ev)?;
            }
            Ok(true)
        }
        kind::RST_STREAM => {
            if payload.len() != 4 {
                return Err(err(code::FRAME_SIZE_ERROR, "RST_STREAM size"));
            }
            if head.stream == 0 {
                return Err(err(code::PROTOCOL_ERROR, "RST_STREAM on stream 0"));
            }
            let code = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
            match find(c.streams, head.stream) {
                Some(i) => {
                    let s = c.streams.swap_remove(i);
                    c.resets.add(s.id);
                    if code == code::REFUSED_STREAM && *c.refused < MAX_REFUSED {
                        *c.refused += 1;
                        ev.refused(s.tag);
                    } else {
                        ev.reset(s.tag, code);
                    }
                }
                None => unknown_stream(head.stream, c.next_id)?,
            }
            Ok(true)
        }
        kind::SETTINGS => {
            if head.stream != 0 {
                return Err(err(code::PROTOCOL_ERROR, "SETTINGS on a stream"));
            }
            if head.has(flag::ACK) {
                if !payload.is_empty() {
                    return Err(err(code::FRAME_SIZE_ERROR, "SETTINGS ack with payload"));
                }
                return Ok(false);
            }
            if !payload.len().is_multiple_of(6) {
                return Err(err(code::FRAME_SIZE_ERROR, "SETTINGS size"));
            }
            for p in payload.chunks_exact(6) {
                let id = u16::from_be_bytes([p[0], p[1]]);
                let v = u32::from_be_bytes([p[2], p[3], p[4], p[5]]);
                apply_setting(c, id, v)?;
            }
            *c.got_settings = true;
            frame::put_settings_ack(out);
            resume_bodies(c, out);
            Ok(false)
        }
        kind::PUSH_PROMISE => Err(err(code::PROTOCOL_ERROR, "PUSH_PROMISE with push disabled")),
        kind::PING => {
            if payload.len() != 8 {
                return Err(err(code::FRAME_SIZE_ERROR, "PING size"));
            }
            if head.stream != 0 {
                return Err(err(code::PROTOCOL_ERROR, "PING on a stream"));
            }
            if !head.has(flag::ACK) {
                frame::put_ping_ack(out, payload);
            }
            Ok(false)
        }
        kind::GOAWAY => {
            if head.stream != 0 {
                return Err(err(code::PROTOCOL_ERROR, "GOAWAY on a stream"));
            }
            if payload.len() < 8 {
                return Err(err(code::FRAME_SIZE_ERROR, "GOAWAY size"));
            }
            let last =
                u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff;
            let code = u32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
            let last = c.goaway.map_or(last, |l| l.min(last));
            *c.goaway = Some(last);
            let mut i = 0;
            while i < c.streams.len() {
                if c.streams[i].id > last {
                    let s = c.streams.swap_remove(i);
                    ev.refused(s.tag);
                } else {
                    i += 1;
                }
            }
            if code != code::NO_ERROR {
                return Err(err(code, "the server sent GOAWAY with an error"));
            }
            Ok(true)
        }
        kind::WINDOW_UPDATE => {
            if payload.len() != 4 {
                return Err(err(code::FRAME_SIZE_ERROR, "WINDOW_UPDATE size"));
            }
            let inc = i64::from(
                u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff,
            );
            if inc == 0 {
                return Err(err(code::PROTOCOL_ERROR, "WINDOW_UPDATE of 0"));
            }
            if head.stream == 0 {
                *c.send_window += inc;
                if *c.send_window > frame::MAX_WINDOW {
                    return Err(err(code::FLOW_CONTROL_ERROR, "connection window overflow"));
                }
            } else if let Some(i) = find(c.streams, head.stream) {
                let s = &mut c.streams[i];
                s.send_window += inc;
                if s.send_window > frame::MAX_WINDOW {
                    return Err(err(code::FLOW_CONTROL_ERROR, "stream window overflow"));
                }
            } else {
                unknown_stream(head.stream, c.next_id)?;
            }
            resume_bodies(c, out);
            Ok(false)
        }
        kind::PRIORITY => {
            if payload.len() != 5 {
                return Err(err(code::FRAME_SIZE_ERROR, "PRIORITY size"));
            }
            Ok(false)
        }
        // Unknown frame types are ignored (§4.1).
        _ => Ok(false),
    }
}

fn apply_setting<T>(c: &mut Conn<'_, T>, id: u16, v: u32) -> Result<(), H2Error> {
    match id {
        setting::ENABLE_PUSH if v > 1 => Err(err(code::PROTOCOL_ERROR, "ENABLE_PUSH value")),
        setting::MAX_CONCURRENT_STREAMS => {
            *c.peer_max_streams = v;
            Ok(())
        }
        setting::INITIAL_WINDOW_SIZE => {
            let v = i64::from(v);
            if v > frame::MAX_WINDOW {
                return Err(err(
                    code::FLOW_CONTROL_ERROR,
                    "INITIAL_WINDOW_SIZE too large",
                ));
            }
            let delta = v - *c.peer_window;
            *c.peer_window = v;
            for s in c.streams.iter_mut() {
                s.send_window += delta;
                if s.send_window > frame::MAX_WINDOW {
                    return Err(err(code::FLOW_CONTROL_ERROR, "stream window overflow"));
                }
            }
            Ok(())
        }
        setting::MAX_FRAME_SIZE => {
            if !(frame::DEFAULT_MAX_FRAME..=0xff_ffff).contains(&v) {
                return Err(err(code::PROTOCOL_ERROR, "MAX_FRAME_SIZE out of range"));
            }
            *c.peer_max_frame = v as usize;
            Ok(())
        }
        setting::HEADER_TABLE_SIZE => {
            c.encoder.set_limit(v as usize);
            Ok(())
        }
        // MAX_HEADER_LIST_SIZE: advisory. Unknown settings are ignored (§6.5.2).
        _ => Ok(()),
    }
}

/// Decodes a complete header block of stream `b.stream` and applies it.
fn on_block<T>(
    decoder: &mut Decoder,
    bytes: &[u8],
    b: Block,
    c: &mut Conn<'_, T>,
    out: &mut Vec<u8>,
    ev: &mut impl Events<T>,
) -> Result<(), H2Error> {
    let i = find(c.streams, b.stream);
    if i.is_none() {
        closed_stream(b.stream, c)?;
    }
    let mut status: Option<u16> = None;
    let mut bad_status = false;
    let mut size = 0u64;
    let tag = i.map(|i| &c.streams[i].tag);
    let decoded = decoder.decode(bytes, |name, value| {
        size += (name.len() + value.len()) as u64;
        if name == b":status" {
            status = parse_status(value);
            bad_status |= status.is_none();
        }
        if let Some(tag) = tag {
            ev.field(tag, name, value);
        }
    });
    if decoded.is_err() {
        return Err(err(code::COMPRESSION_ERROR, "undecodable header block"));
    }
    if size > MAX_LIST {
        return Err(err(code::ENHANCE_YOUR_CALM, "header list too long"));
    }
    // Closed stream: the block only kept the HPACK state in step.
    let Some(i) = i else {
        return Ok(());
    };
    ev.field(&c.streams[i].tag, b"", b"");
    let s = &mut c.streams[i];
    s.reply.header_wire += b.wire;
    if s.headers_done {
        // Trailers.
        if !b.end_stream || status.is_some() {
            return Err(err(code::PROTOCOL_ERROR, "bad trailers"));
        }
        s.reply.footer_bytes += size;
    } else {
        s.reply.header_bytes += size;
        let st = match status {
            Some(st) if !bad_status => st,
            _ => return Err(err(code::PROTOCOL_ERROR, "reply without a valid :status")),
        };
        if st >= 200 {
            s.headers_done = true;
            s.reply.status = st;
            ev.status(&mut s.tag, st);
        } else if b.end_stream {
            return Err(err(code::PROTOCOL_ERROR, "interim reply ends the stream"));
        }
    }
    if b.end_stream {
        let s = c.streams.swap_remove(i);
        finish(s, c.resets, out, ev);
    }
    Ok(())
}

fn parse_status(v: &[u8]) -> Option<u16> {
    match v {
        [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9'] => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
