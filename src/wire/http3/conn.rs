//! One HTTP/3 client connection's protocol state (RFC 9114), over a quinn-proto QUIC
//! connection: our control stream (SETTINGS: no QPACK dynamic table, no blocked
//! streams) and the two QPACK streams, the server's control stream (SETTINGS first,
//! GOAWAY), request streams (HEADERS and DATA out; interim and final HEADERS, DATA and
//! trailers in), unknown frame and stream types ignored, and the limits that keep a
//! hostile server from holding the client.
//!
//! Sans I/O: it reads and writes QUIC streams through `quinn_proto::Connection`
//! (which owns no socket either) and reports through `http2::conn::Events`, the same
//! contract as HTTP/2's, each stream carrying the caller's tag `T`. Datagrams, timers
//! and the socket are `wire::quic`'s and the engine's. A connection-level protocol
//! error is returned as an `H3Error` for the caller to close the QUIC connection with.

use bytes::Bytes;
use quinn_proto::{Connection, Dir, ReadError, StreamEvent, StreamId, VarInt, WriteError};

use super::frame::{self, code, err, kind, setting, stream_type, H3Error, Item, Reader};
use super::qpack::{self, Decoder};
use super::varint;
use crate::wire::http2::conn::{Events, Reply};

/// Largest decoded header section accepted (our SETTINGS_MAX_FIELD_SECTION_SIZE).
pub(crate) const MAX_SECTION: u64 = 1 << 20;
/// Largest non-DATA frame payload accepted on any stream.
const MAX_FRAME: u64 = 256 * 1024;
/// Server-opened unidirectional streams we keep reading (control, QPACK encoder and
/// decoder, and some unknown ones); past this each new one is stopped at once.
const MAX_PEER_UNI: usize = 16;

/// One request stream.
#[derive(Debug)]
struct Req<T> {
    id: StreamId,
    tag: T,
    reader: Reader,
    reply: Reply,
    /// The final HEADERS arrived.
    final_seen: bool,
    /// Request frames not yet accepted by QUIC (then FIN): a reference to the
    /// caller's, which QUIC keeps until they are acknowledged.
    out: Bytes,
    /// Frame bytes of the request (reported once written).
    bytes: u64,
    written: bool,
}

/// What a server-opened unidirectional stream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Uni {
    /// Type not read yet: the varint bytes so far.
    Untyped,
    /// The control stream.
    Control,
    /// A QPACK stream: its bytes are read and dropped (we allow no dynamic table,
    /// so nothing on it can matter; a section that refers to one fails on its own).
    Qpack,
}

/// A server-opened unidirectional stream being read.
#[derive(Debug)]
struct PeerUni {
    id: StreamId,
    kind: Uni,
    head: Vec<u8>,
}

/// Counters for the `http3` report block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Request streams opened.
    pub streams: u64,
    /// Request streams the server reset (or stopped with an error).
    pub(crate) resets: u64,
    /// GOAWAY frames received.
    pub(crate) goaways: u64,
}

/// One HTTP/3 connection (see the module header).
#[derive(Debug)]
pub struct H3<T> {
    /// Our unidirectional streams with bytes QUIC has not accepted yet.
    ours: Vec<(StreamId, Vec<u8>)>,
    started: bool,
    /// Our control and QPACK streams.
    critical: [Option<StreamId>; 3],
    /// The server's stream limit was reached (until QUIC says otherwise).
    blocked: bool,
    peer_uni: Vec<PeerUni>,
    control: Option<usize>,
    control_reader: Reader,
    got_settings: bool,
    reqs: Vec<Req<T>>,
    decoder: Decoder,
    goaway: Option<u64>,
    /// Counters since `new`/`reset`.
    pub counts: Counts,
}

impl<T> Default for H3<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> H3<T> {
    /// A connection before `start`.
    pub fn new() -> H3<T> {
        H3 {
            ours: Vec::new(),
            started: false,
            critical: [None; 3],
            blocked: false,
            peer_uni: Vec::new(),
            control: None,
            control_reader: Reader::new(MAX_FRAME),
            got_settings: false,
            reqs: Vec::new(),
            decoder: Decoder::new(),
            goaway: None,
            counts: Counts::default(),
        }
    }

    /// Back to "before start" for a new connection; streams must have
    /// been drained (`drain`).
    pub(crate) fn reset(&mut self) {
        self.ours.clear();
        self.started = false;
        self.critical = [None; 3];
        self.blocked = false;
        self.peer_uni.clear();
        self.control = None;
        self.control_reader.reset();
        self.got_settings = false;
        self.reqs.clear();
        self.goaway = None;
        self.counts = Counts::default();
    }

    /// Opens our control stream (SETTINGS) and QPACK encoder and decoder streams.
    /// Call once the connection can open streams: when it is connected (the server's
    /// stream limits are known), or at once when 0-RTT remembered them.
    pub fn start(&mut self, conn: &mut Connection) -> Result<(), H3Error> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        let mut control = vec![stream_type::CONTROL as u8];
        frame::put_settings(
            &mut control,
            &[
                (setting::QPACK_MAX_TABLE_CAPACITY, 0),
                (setting::QPACK_BLOCKED_STREAMS, 0),
                (setting::MAX_FIELD_SECTION_SIZE, MAX_SECTION),
            ],
        );
        for (k, bytes) in [
            control,
            vec![stream_type::QPACK_ENCODER as u8],
            vec![stream_type::QPACK_DECODER as u8],
        ]
        .into_iter()
        .enumerate()
        {
            let id = conn.streams().open(Dir::Uni).ok_or(err(
                code::STREAM_CREATION_ERROR,
                "the server allows us no unidirectional streams",
            ))?;
            self.critical[k] = Some(id);
            self.ours.push((id, bytes));
        }
        self.flush_ours(conn);
        Ok(())
    }

    /// Requests in flight (open streams).
    pub fn in_flight(&self) -> usize {
        self.reqs.len()
    }

    /// True when a new request may be opened now: started, no GOAWAY, and the last
    /// attempt did not find the server's stream limit reached (QUIC says when
    /// streams are available again).
    pub fn can_open(&self) -> bool {
        self.started && self.goaway.is_none() && !self.blocked
    }

    /// The server said GOAWAY.
    pub fn going_away(&self) -> bool {
        self.goaway.is_some()
    }

    /// Opens a request stream for `tag` and sends `request` on it, then FIN:
    /// HEADERS and any DATA as `frame::request` builds them. Gives `tag` back if no
    /// stream is free.
    pub fn open(
        &mut self,
        conn: &mut Connection,
        tag: T,
        request: Bytes,
        ev: &mut impl Events<T>,
    ) -> Result<(), T> {
        if self.goaway.is_some() {
            return Err(tag);
        }
        let Some(id) = conn.streams().open(Dir::Bi) else {
            self.blocked = true;
            return Err(tag);
        };
        let reply = Reply {
            header_wire: 0,
            ..Reply::default()
        };
        self.counts.streams += 1;
        let bytes = request.len() as u64;
        self.reqs.push(Req {
            id,
            tag,
            reader: Reader::new(MAX_FRAME),
            reply,
            final_seen: false,
            out: request,
            bytes,
            written: false,
        });
        let i = self.reqs.len() - 1;
        self.write_req(conn, i, ev);
        Ok(())
    }

    /// Handles one stream event of the QUIC connection. An `Err` is a connection
    /// error: close the QUIC connection with its code.
    pub fn on_stream_event(
        &mut self,
        conn: &mut Connection,
        event: StreamEvent,
        ev: &mut impl Events<T>,
    ) -> Result<(), H3Error> {
        match event {
            StreamEvent::Opened { dir: Dir::Uni } => {
                while let Some(id) = conn.streams().accept(Dir::Uni) {
                    if self.peer_uni.len() >= MAX_PEER_UNI {
                        let _ = conn
                            .recv_stream(id)
                            .stop(VarInt::from_u32(code::STREAM_CREATION_ERROR as u32));
                        continue;
                    }
                    self.peer_uni.push(PeerUni {
                        id,
                        kind: Uni::Untyped,
                        head: Vec::new(),
                    });
                    self.read_uni(conn, self.peer_uni.len() - 1, ev)?;
                }
            }
            StreamEvent::Opened { dir: Dir::Bi } => {
                // Servers may not open bidirectional streams (§6.1).
                if conn.streams().accept(Dir::Bi).is_some() {
                    return Err(err(
                        code::STREAM_CREATION_ERROR,
                        "the server opened a bidirectional stream",
                    ));
                }
            }
            StreamEvent::Readable { id } => {
                if let Some(i) = self.reqs.iter().position(|r| r.id == id) {
                    self.read_req(conn, i, ev)?;
                } else if let Some(i) = self.peer_uni.iter().position(|u| u.id == id) {
                    self.read_uni(conn, i, ev)?;
                }
            }
            StreamEvent::Writable { id } => {
                if let Some(i) = self.reqs.iter().position(|r| r.id == id) {
                    self.write_req(conn, i, ev);
                } else {
                    self.flush_ours(conn);
                }
            }
            StreamEvent::Stopped { id, error_code } => {
                // RFC 9000 §3.5: a stopped stream that still has data to send is
                // reset (quinn-proto leaves that to us), with the server's code.
                let _ = conn.send_stream(id).reset(error_code);
                if let Some(i) = self.reqs.iter().position(|r| r.id == id) {
                    // A server that answers without reading the whole request stops
                    // it with H3_NO_ERROR (§4.1): the request ends where it is and
                    // the reply side says what became of the call. Any other code
                    // before the request is out means it can never be complete.
                    if error_code.into_inner() == code::NO_ERROR {
                        self.cut_short(i, ev);
                    } else if !self.reqs[i].written {
                        let r = self.reqs.swap_remove(i);
                        let _ = conn.recv_stream(id).stop(VarInt::from_u32(0x10c));
                        self.end_failed(r, error_code.into_inner(), ev);
                    }
                } else if self.critical.contains(&Some(id)) {
                    return Err(err(
                        code::CLOSED_CRITICAL_STREAM,
                        "the server stopped one of our critical streams",
                    ));
                }
            }
            StreamEvent::Available { dir: Dir::Bi } => self.blocked = false,
            StreamEvent::Finished { .. } | StreamEvent::Available { .. } => {}
        }
        Ok(())
    }

    /// Takes back the tags of every open stream (the connection is going away).
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.reqs.drain(..).map(|r| r.tag)
    }

    /// Writes what QUIC accepts of our unidirectional streams' pending bytes.
    fn flush_ours(&mut self, conn: &mut Connection) {
        self.ours.retain_mut(|(id, bytes)| {
            let mut s = conn.send_stream(*id);
            match s.write(bytes) {
                Ok(n) => {
                    bytes.drain(..n);
                    !bytes.is_empty()
                }
                Err(WriteError::Blocked) => true,
                Err(_) => false,
            }
        });
    }

    /// Writes what QUIC accepts of request `i`, then FIN.
    fn write_req(&mut self, conn: &mut Connection, i: usize, ev: &mut impl Events<T>) {
        let r = &mut self.reqs[i];
        if r.written {
            return;
        }
        let mut s = conn.send_stream(r.id);
        while !r.out.is_empty() {
            // QUIC takes what fits of the chunk and advances it past that.
            if s.write_chunks(std::slice::from_mut(&mut r.out)).is_err() {
                return;
            }
        }
        if s.finish().is_ok() {
            r.written = true;
            // QUIC takes the head and the body together: the request starts here.
            ev.started(&mut r.tag);
            ev.written(&mut r.tag, r.bytes);
        }
    }

    /// Ends request `i`'s sending where it is (the reply came first, or the server
    /// stopped reading): the request counts as started and written with the bytes
    /// QUIC took. The caller has reset the send side, or does so now.
    fn cut_short(&mut self, i: usize, ev: &mut impl Events<T>) {
        let r = &mut self.reqs[i];
        if r.written {
            return;
        }
        r.written = true;
        let unsent = r.out.len() as u64;
        ev.started(&mut r.tag);
        ev.written(&mut r.tag, r.bytes - unsent);
    }

    /// Reads request stream `i`'s reply bytes.
    fn read_req(
        &mut self,
        conn: &mut Connection,
        i: usize,
        ev: &mut impl Events<T>,
    ) -> Result<(), H3Error> {
        let id = self.reqs[i].id;
        let mut recv = conn.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else {
            return Ok(());
        };
        let mut end: Option<Result<(), u64>> = None;
        let mut failure = None;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    if let Err(e) = self.on_reply_bytes(i, &chunk.bytes, ev) {
                        failure = Some(e);
                        break;
                    }
                }
                Ok(None) => {
                    end = Some(Ok(()));
                    break;
                }
                Err(ReadError::Blocked) => break,
                Err(ReadError::Reset(c)) => {
                    end = Some(Err(c.into_inner()));
                    break;
                }
            }
        }
        let _ = chunks.finalize();
        if let Some(e) = failure {
            if e.code == code::MESSAGE_ERROR {
                // A malformed reply fails its call only (§4.1.2).
                let r = self.reqs.swap_remove(i);
                if !r.written {
                    let _ = conn.send_stream(id).reset(VarInt::from_u32(0x10c));
                }
                let _ = conn.recv_stream(id).stop(VarInt::from_u32(e.code as u32));
                self.end_failed(r, e.code, ev);
                return Ok(());
            }
            return Err(e);
        }
        match end {
            None => Ok(()),
            Some(Ok(())) => {
                if !self.reqs[i].written {
                    // A complete reply before the whole request went out (§4.1):
                    // the exchange is over; the rest of the body is not sent.
                    let _ = conn
                        .send_stream(id)
                        .reset(VarInt::from_u32(code::NO_ERROR as u32));
                    self.cut_short(i, ev);
                }
                let r = self.reqs.swap_remove(i);
                if !r.reader.idle() {
                    return Err(err(
                        code::FRAME_ERROR,
                        "a reply stream ended inside a frame",
                    ));
                }
                if !r.final_seen {
                    self.end_failed(r, code::MESSAGE_ERROR, ev);
                    return Ok(());
                }
                let reply = r.reply;
                ev.done(r.tag, &reply);
                Ok(())
            }
            Some(Err(c)) => {
                let r = self.reqs.swap_remove(i);
                if !r.written {
                    let _ = conn.send_stream(id).reset(VarInt::from_u32(0x10c));
                }
                self.end_failed(r, c, ev);
                Ok(())
            }
        }
    }

    /// A request that ended without a complete reply: refused (may be sent again) for
    /// H3_REQUEST_REJECTED, else a reset.
    fn end_failed(&mut self, r: Req<T>, c: u64, ev: &mut impl Events<T>) {
        if c == code::REQUEST_REJECTED {
            ev.refused(r.tag);
        } else {
            self.counts.resets += 1;
            ev.reset(r.tag, u32::try_from(c).unwrap_or(u32::MAX));
        }
    }

    /// Frames of request `i`'s reply.
    fn on_reply_bytes(
        &mut self,
        i: usize,
        mut input: &[u8],
        ev: &mut impl Events<T>,
    ) -> Result<(), H3Error> {
        let r = &mut self.reqs[i];
        while let Some(item) = r.reader.next(&mut input)? {
            match item {
                Item::Data { bytes, .. } => {
                    if !r.final_seen {
                        return Err(err(
                            code::FRAME_UNEXPECTED,
                            "DATA before the reply's HEADERS",
                        ));
                    }
                    r.reply.content_bytes += bytes.len() as u64;
                    ev.data(&r.tag, bytes);
                }
                Item::Frame(kind::HEADERS, section) => {
                    let trailers = r.final_seen;
                    r.reply.header_wire += section.len() as u64;
                    let mut status: Option<u16> = None;
                    let mut bad_status = false;
                    let tag = &r.tag;
                    let size = self.decoder.decode(section, MAX_SECTION, |name, value| {
                        if name == b":status" && !trailers {
                            status = parse_status(value);
                            bad_status |= status.is_none();
                        }
                        ev.field(tag, name, value);
                    })?;
                    ev.field(tag, b"", b"");
                    if trailers {
                        r.reply.footer_bytes += size;
                        continue;
                    }
                    r.reply.header_bytes += size;
                    let Some(s) = status.filter(|_| !bad_status) else {
                        return Err(err(code::MESSAGE_ERROR, "a reply without a valid :status"));
                    };
                    if s >= 200 {
                        r.final_seen = true;
                        r.reply.status = s;
                        ev.status(&mut r.tag, s);
                    }
                }
                Item::Frame(kind::PUSH_PROMISE, _) => {
                    return Err(err(code::ID_ERROR, "a PUSH_PROMISE we never allowed"));
                }
                Item::Frame(_, _) => {
                    return Err(err(
                        code::FRAME_UNEXPECTED,
                        "a control frame on a request stream",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Reads server unidirectional stream `i`.
    fn read_uni(
        &mut self,
        conn: &mut Connection,
        i: usize,
        _ev: &mut impl Events<T>,
    ) -> Result<(), H3Error> {
        let id = self.peer_uni[i].id;
        let mut recv = conn.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else {
            return Ok(());
        };
        let mut result = Ok(());
        let mut ended = false;
        let mut unknown = false;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    if let Err(e) = self.on_uni_bytes(i, &chunk.bytes, &mut unknown) {
                        result = Err(e);
                        break;
                    }
                    if unknown {
                        break;
                    }
                }
                Ok(None) | Err(ReadError::Reset(_)) => {
                    ended = true;
                    break;
                }
                Err(ReadError::Blocked) => break,
            }
        }
        let _ = chunks.finalize();
        result?;
        let kind = self.peer_uni[i].kind;
        if unknown {
            // Unknown stream types (and push streams, never allowed) are ignored (§6.2).
            let _ = conn
                .recv_stream(id)
                .stop(VarInt::from_u32(code::STREAM_CREATION_ERROR as u32));
            self.forget_uni(i);
            return Ok(());
        }
        if ended {
            if kind != Uni::Untyped {
                return Err(err(
                    code::CLOSED_CRITICAL_STREAM,
                    "the server closed a critical stream",
                ));
            }
            self.forget_uni(i);
        }
        Ok(())
    }

    /// Removes server stream `i` from the list (keeping `control` pointing right).
    fn forget_uni(&mut self, i: usize) {
        self.peer_uni.swap_remove(i);
        if self.control == Some(self.peer_uni.len()) {
            self.control = Some(i);
        }
    }

    /// Bytes of server unidirectional stream `i`; sets `unknown` for a stream type we
    /// ignore.
    fn on_uni_bytes(
        &mut self,
        i: usize,
        mut input: &[u8],
        unknown: &mut bool,
    ) -> Result<(), H3Error> {
        if self.peer_uni[i].kind == Uni::Untyped {
            let u = &mut self.peer_uni[i];
            while !input.is_empty() {
                u.head.push(input[0]);
                input = &input[1..];
                if let Some((t, _)) = varint::get(&u.head) {
                    u.kind = match t {
                        stream_type::CONTROL => {
                            if self.control.is_some() {
                                return Err(err(
                                    code::STREAM_CREATION_ERROR,
                                    "a second control stream",
                                ));
                            }
                            self.control = Some(i);
                            Uni::Control
                        }
                        stream_type::QPACK_ENCODER | stream_type::QPACK_DECODER => Uni::Qpack,
                        _ => {
                            *unknown = true;
                            return Ok(());
                        }
                    };
                    break;
                }
            }
        }
        match self.peer_uni[i].kind {
            Uni::Control => self.on_control(input),
            Uni::Qpack | Uni::Untyped => Ok(()),
        }
    }

    /// Frames of the server's control stream.
    fn on_control(&mut self, mut input: &[u8]) -> Result<(), H3Error> {
        while let Some(item) = self.control_reader.next(&mut input)? {
            let (k, payload) = match item {
                Item::Data { .. } => (kind::DATA, &[][..]),
                Item::Frame(k, p) => (k, p),
            };
            if !self.got_settings && k != kind::SETTINGS {
                return Err(err(
                    code::MISSING_SETTINGS,
                    "the server's control stream does not start with SETTINGS",
                ));
            }
            match k {
                kind::SETTINGS if !self.got_settings => {
                    self.got_settings = true;
                    check_settings(payload)?;
                }
                kind::GOAWAY => {
                    let (id, n) = varint::get(payload)
                        .ok_or(err(code::FRAME_ERROR, "a GOAWAY without its stream ID"))?;
                    if n != payload.len() || id % 4 != 0 {
                        return Err(err(code::ID_ERROR, "a GOAWAY with a bad stream ID"));
                    }
                    if self.goaway.is_some_and(|g| id > g) {
                        return Err(err(code::ID_ERROR, "a GOAWAY raising its stream ID"));
                    }
                    self.goaway = Some(id);
                    self.counts.goaways += 1;
                }
                kind::MAX_PUSH_ID => {
                    return Err(err(code::FRAME_UNEXPECTED, "MAX_PUSH_ID from a server"));
                }
                kind::CANCEL_PUSH => {}
                _ => {
                    return Err(err(
                        code::FRAME_UNEXPECTED,
                        "a frame not allowed on the control stream",
                    ));
                }
            }
        }
        Ok(())
    }

    /// After a GOAWAY: the requests at or above its stream ID, which the server will
    /// not process, go back through `refused`.
    pub fn refuse_beyond_goaway(&mut self, conn: &mut Connection, ev: &mut impl Events<T>) {
        let Some(g) = self.goaway else {
            return;
        };
        let mut i = 0;
        while i < self.reqs.len() {
            if self.reqs[i].id.index() * 4 >= g {
                let r = self.reqs.swap_remove(i);
                let _ = conn.send_stream(r.id).reset(VarInt::from_u32(0x10c));
                let _ = conn.recv_stream(r.id).stop(VarInt::from_u32(0x10c));
                ev.refused(r.tag);
            } else {
                i += 1;
            }
        }
    }
}

/// Checks the server's SETTINGS payload: well-formed pairs, no duplicates, no HTTP/2
/// settings.
fn check_settings(mut p: &[u8]) -> Result<(), H3Error> {
    let mut seen: [u64; 8] = [u64::MAX; 8];
    let mut n = 0;
    while !p.is_empty() {
        let (id, a) = varint::get(p).ok_or(err(code::FRAME_ERROR, "a SETTINGS frame cut short"))?;
        let (_, b) =
            varint::get(&p[a..]).ok_or(err(code::FRAME_ERROR, "a SETTINGS frame cut short"))?;
        p = &p[a + b..];
        if setting::H2_ONLY.contains(&id) {
            return Err(err(code::SETTINGS_ERROR, "an HTTP/2 setting in SETTINGS"));
        }
        if seen[..n].contains(&id) {
            return Err(err(code::SETTINGS_ERROR, "a setting given twice"));
        }
        if n < seen.len() {
            seen[n] = id;
            n += 1;
        }
    }
    Ok(())
}

/// A `:status` value: three digits.
fn parse_status(v: &[u8]) -> Option<u16> {
    if v.len() != 3 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let s = v.iter().fold(0u16, |a, d| a * 10 + u16::from(d - b'0'));
    (100..=999).contains(&s).then_some(s)
}

/// Appends a request's QPACK field section: the pseudo-headers, then `fields`
/// (lowercase names; HTTP/2's connection-specific fields already dropped).
pub fn put_request(
    out: &mut Vec<u8>,
    method: &[u8],
    authority: Option<&[u8]>,
    path: &[u8],
    fields: &[(&[u8], &[u8])],
) {
    qpack::put_prefix(out);
    qpack::put_field(out, b":method", method);
    qpack::put_field(out, b":scheme", b"https");
    if let Some(a) = authority {
        qpack::put_field(out, b":authority", a);
    }
    qpack::put_field(out, b":path", path);
    for (n, v) in fields {
        qpack::put_field(out, n, v);
    }
}
