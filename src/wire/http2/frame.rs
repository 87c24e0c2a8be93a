//! HTTP/2 frames (RFC 9113 §4, §6): the constants, the 9-byte frame header, writers
//! for the frames a client sends, and `Reader`, which cuts an incoming byte stream
//! into frames whatever the read boundaries are.
//!
//! `Reader` keeps only the bytes it must: a partial frame header (9 bytes inline) and
//! the payload of a non-DATA frame (up to our SETTINGS_MAX_FRAME_SIZE, in one buffer
//! that is reused). DATA payloads are never buffered: they are handed on as they
//! arrive, padding stripped. It checks framing only (sizes, padding); what frames mean
//! is `conn::H2`'s business, which is the only caller besides tests and the fuzzer.

/// The client connection preface (§3.4).
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Size of a frame header.
pub(crate) const HEAD: usize = 9;
/// The initial flow-control window and SETTINGS_MAX_FRAME_SIZE's default.
pub(crate) const DEFAULT_WINDOW: u32 = 65_535;
/// SETTINGS_MAX_FRAME_SIZE's default (and our value: we accept no larger frames).
pub(crate) const DEFAULT_MAX_FRAME: u32 = 16_384;
/// Largest flow-control window (§6.9.1).
pub(crate) const MAX_WINDOW: i64 = (1 << 31) - 1;

/// Frame types (§6).
pub mod kind {
    /// DATA.
    pub const DATA: u8 = 0;
    /// HEADERS.
    pub const HEADERS: u8 = 1;
    /// PRIORITY.
    pub(crate) const PRIORITY: u8 = 2;
    /// RST_STREAM.
    pub(crate) const RST_STREAM: u8 = 3;
    /// SETTINGS.
    pub const SETTINGS: u8 = 4;
    /// PUSH_PROMISE.
    pub(crate) const PUSH_PROMISE: u8 = 5;
    /// PING.
    pub(crate) const PING: u8 = 6;
    /// GOAWAY.
    pub(crate) const GOAWAY: u8 = 7;
    /// WINDOW_UPDATE.
    pub(crate) const WINDOW_UPDATE: u8 = 8;
    /// CONTINUATION.
    pub const CONTINUATION: u8 = 9;
}

/// Frame flags.
pub mod flag {
    /// END_STREAM (DATA, HEADERS).
    pub const END_STREAM: u8 = 0x1;
    /// ACK (SETTINGS, PING).
    pub(crate) const ACK: u8 = 0x1;
    /// END_HEADERS (HEADERS, CONTINUATION).
    pub const END_HEADERS: u8 = 0x4;
    /// PADDED (DATA, HEADERS).
    pub(crate) const PADDED: u8 = 0x8;
    /// PRIORITY (HEADERS).
    pub(crate) const PRIORITY: u8 = 0x20;
}

/// Error codes (§7).
pub mod code {
    /// NO_ERROR.
    pub const NO_ERROR: u32 = 0x0;
    /// PROTOCOL_ERROR.
    pub(crate) const PROTOCOL_ERROR: u32 = 0x1;
    /// FLOW_CONTROL_ERROR.
    pub(crate) const FLOW_CONTROL_ERROR: u32 = 0x3;
    /// STREAM_CLOSED.
    pub(crate) const STREAM_CLOSED: u32 = 0x5;
    /// FRAME_SIZE_ERROR.
    pub(crate) const FRAME_SIZE_ERROR: u32 = 0x6;
    /// REFUSED_STREAM.
    pub(crate) const REFUSED_STREAM: u32 = 0x7;
    /// CANCEL (only the tests reset streams).
    #[cfg(test)]
    pub(crate) const CANCEL: u32 = 0x8;
    /// COMPRESSION_ERROR.
    pub(crate) const COMPRESSION_ERROR: u32 = 0x9;
    /// ENHANCE_YOUR_CALM.
    pub(crate) const ENHANCE_YOUR_CALM: u32 = 0xb;
}

/// SETTINGS identifiers (§6.5.2).
pub mod setting {
    /// SETTINGS_HEADER_TABLE_SIZE.
    pub(crate) const HEADER_TABLE_SIZE: u16 = 0x1;
    /// SETTINGS_ENABLE_PUSH.
    pub(crate) const ENABLE_PUSH: u16 = 0x2;
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    /// SETTINGS_INITIAL_WINDOW_SIZE.
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    /// SETTINGS_MAX_FRAME_SIZE.
    pub(crate) const MAX_FRAME_SIZE: u16 = 0x5;
    /// SETTINGS_MAX_HEADER_LIST_SIZE.
    pub(crate) const MAX_HEADER_LIST_SIZE: u16 = 0x6;
}

/// A frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Head {
    /// Payload length.
    pub(crate) len: u32,
    /// Frame type.
    pub(crate) kind: u8,
    /// Flags.
    pub(crate) flags: u8,
    /// Stream identifier (reserved bit cleared).
    pub(crate) stream: u32,
}

impl Head {
    /// Parses the 9 header bytes.
    pub(crate) fn parse(b: &[u8; HEAD]) -> Head {
        Head {
            len: u32::from_be_bytes([0, b[0], b[1], b[2]]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        }
    }

    /// Whether `f` is set.
    pub(crate) fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Appends a frame header.
pub fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let len = u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes();
    out.extend_from_slice(&len[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
}

/// Appends a SETTINGS frame with these (identifier, value) pairs.
pub fn put_settings(out: &mut Vec<u8>, pairs: &[(u16, u32)]) {
    put_head(out, pairs.len() * 6, kind::SETTINGS, 0, 0);
    for (id, v) in pairs {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends a SETTINGS acknowledgement.
pub(crate) fn put_settings_ack(out: &mut Vec<u8>) {
    put_head(out, 0, kind::SETTINGS, flag::ACK, 0);
}

/// Appends a WINDOW_UPDATE.
pub(crate) fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_head(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&(increment & 0x7fff_ffff).to_be_bytes());
}

/// Appends a PING acknowledgement echoing `data`.
pub(crate) fn put_ping_ack(out: &mut Vec<u8>, data: &[u8]) {
    put_head(out, 8, kind::PING, flag::ACK, 0);
    out.extend_from_slice(data);
}

/// Appends a RST_STREAM.
pub(crate) fn put_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_head(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

/// Appends a GOAWAY.
pub fn put_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    put_head(out, 8, kind::GOAWAY, 0, 0);
    out.extend_from_slice(&(last_stream & 0x7fff_ffff).to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}

/// A framing error: the connection must end with this error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameError {
    /// The HTTP/2 error code to send in GOAWAY.
    pub code: u32,
    /// What was wrong (for `-d` traces and tests).
    pub reason: &'static str,
}

/// What `Reader::next` found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Item<'a> {
    /// A complete non-DATA frame: its header and payload.
    Frame(Head, &'a [u8]),
    /// DATA payload bytes of the frame `head` (padding removed); `end` on the last
    /// piece of the frame. A frame with no data gives one piece with no bytes.
    Data {
        /// The DATA frame's header (its `len` is the whole payload, padding included).
        head: Head,
        /// These bytes of data.
        bytes: &'a [u8],
        /// The frame is complete with this piece.
        end: bool,
    },
}

/// Where the reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Collecting the 9-byte header.
    Header,
    /// DATA: waiting for the pad-length byte.
    PadLength,
    /// DATA: `data` bytes of data, then `pad` bytes of padding, are left.
    Data { data: usize, pad: usize },
    /// Collecting a non-DATA payload into `payload`.
    Payload,
}

/// Cuts a byte stream into frames (see the module header).
#[derive(Debug)]
pub(crate) struct Reader {
    head_buf: [u8; HEAD],
    head_len: usize,
    head: Head,
    at: At,
    payload: Vec<u8>,
    /// Largest payload accepted (our SETTINGS_MAX_FRAME_SIZE).
    max_frame: u32,
}

impl Reader {
    /// A reader accepting payloads up to `max_frame` bytes.
    pub(crate) fn new(max_frame: u32) -> Reader {
        Reader {
            head_buf: [0; HEAD],
            head_len: 0,
            head: Head::default(),
            at: At::Header,
            payload: Vec::new(),
            max_frame,
        }
    }

    /// Back to the start of a stream (buffers kept).
    pub(crate) fn reset(&mut self) {
        self.head_len = 0;
        self.at = At::Header;
        self.payload.clear();
    }

    /// Whether the reader is between frames.
    #[cfg(test)]
    pub(crate) fn idle(&self) -> bool {
        self.at == At::Header && self.head_len == 0
    }

    /// Takes the next item from `input`, advancing it past the bytes used. None when
    /// `input` is used up without completing an item.
    pub(crate) fn next<'s, 'i: 's>(
        &'s mut self,
        input: &mut &'i [u8],
    ) -> Result<Option<Item<'s>>, FrameError> {
        loop {
            match self.at {
                At::Header => {
                    let take = (HEAD - self.head_len).min(input.len());
                    self.head_buf[self.head_len..self.head_len + take]
                        .copy_from_slice(&input[..take]);
                    self.head_len += take;
                    *input = &input[take..];
                    if self.head_len < HEAD {
                        return Ok(None);
                    }
                    self.head_len = 0;
                    self.head = Head::parse(&self.head_buf);
                    if self.head.len > self.max_frame {
                        return Err(FrameError {
                            code: code::FRAME_SIZE_ERROR,
                            reason: "frame larger than SETTINGS_MAX_FRAME_SIZE",
                        });
                    }
                    let len = self.head.len as usize;
                    if self.head.kind == kind::DATA {
                        if self.head.has(flag::PADDED) {
                            if len == 0 {
                                return Err(FrameError {
                                    code: code::FRAME_SIZE_ERROR,
                                    reason: "padded DATA frame without a pad length",
                                });
                            }
                            self.at = At::PadLength;
                        } else {
                            self.at = At::Data { data: len, pad: 0 };
                            if len == 0 {
                                self.at = At::Header;
                                return Ok(Some(self.data_item(&[], true)));
                            }
                        }
                    } else {
                        self.payload.clear();
                        self.at = At::Payload;
                    }
                }
                At::PadLength => {
                    let Some((&pad, rest)) = input.split_first() else {
                        return Ok(None);
                    };
                    *input = rest;
                    let len = self.head.len as usize - 1;
                    let pad = usize::from(pad);
                    if pad > len {
                        return Err(FrameError {
                            code: code::PROTOCOL_ERROR,
                            reason: "DATA padding longer than the payload",
                        });
                    }
                    self.at = At::Data {
                        data: len - pad,
                        pad,
                    };
                    if len == 0 {
                        self.at = At::Header;
                        return Ok(Some(self.data_item(&[], true)));
                    }
                }
                At::Data { data, pad } => {
                    if data > 0 {
                        if input.is_empty() {
                            return Ok(None);
                        }
                        let take = data.min(input.len());
                        let (bytes, rest) = input.split_at(take);
                        *input = rest;
                        let left = data - take;
                        let end = left == 0 && pad == 0;
                        self.at = if end {
                            At::Header
                        } else {
                            At::Data { data: left, pad }
                        };
                        return Ok(Some(self.data_item(bytes, end)));
                    }
                    let take = pad.min(input.len());
                    *input = &input[take..];
                    if take < pad {
                        self.at = At::Data {
                            data: 0,
                            pad: pad - take,
                        };
                        return Ok(None);
                    }
                    self.at = At::Header;
                    return Ok(Some(self.data_item(&[], true)));
                }
                At::Payload => {
                    let want = self.head.len as usize - self.payload.len();
                    if want > 0 && input.is_empty() {
                        return Ok(None);
                    }
                    let take = want.min(input.len());
                    if take == self.head.len as usize {
                        // The whole payload is in the input: no copy.
                        let (bytes, rest) = input.split_at(take);
                        *input = rest;
                        self.at = At::Header;
                        return Ok(Some(Item::Frame(self.head, bytes)));
                    }
                    self.payload.extend_from_slice(&input[..take]);
                    *input = &input[take..];
                    if take < want {
                        return Ok(None);
                    }
                    self.at = At::Header;
                    return Ok(Some(Item::Frame(self.head, &self.payload)));
                }
            }
        }
    }

    fn data_item<'a>(&self, bytes: &'a [u8], end: bool) -> Item<'a> {
        Item::Data {
            head: self.head,
            bytes,
            end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a reader makes of `input` fed in pieces cut at `cuts`: frames as
    /// (head, payload) with DATA pieces joined.
    fn read(input: &[u8], cuts: &[usize]) -> Result<Vec<(Head, Vec<u8>)>, FrameError> {
        let mut r = Reader::new(DEFAULT_MAX_FRAME);
        let mut out: Vec<(Head, Vec<u8>)> = Vec::new();
        let mut open_data = false;
        let mut start = 0;
        for &end in cuts.iter().chain(std::iter::once(&input.len())) {
            let mut piece = &input[start..end];
            start = end;
            while let Some(item) = r.next(&mut piece)? {
                match item {
                    Item::Frame(h, p) => out.push((h, p.to_vec())),
                    Item::Data { head, bytes, end } => {
                        if !open_data {
                            out.push((head, Vec::new()));
                        }
                        out.last_mut().expect("pushed").1.extend_from_slice(bytes);
                        open_data = !end;
                    }
                }
            }
        }
        assert!(r.idle() || !out.is_empty() || input.is_empty() || start > 0);
        Ok(out)
    }

    fn sample() -> Vec<u8> {
        let mut b = Vec::new();
        put_settings(&mut b, &[(setting::MAX_CONCURRENT_STREAMS, 100)]);
        // DATA, padded: pad length 3, "hello", 3 zero bytes.
        put_head(&mut b, 9, kind::DATA, flag::PADDED | flag::END_STREAM, 1);
        b.extend_from_slice(&[3, b'h', b'e', b'l', b'l', b'o', 0, 0, 0]);
        put_ping_ack(&mut b, b"12345678");
        // Empty DATA, padded DATA with only padding, plain DATA.
        put_head(&mut b, 0, kind::DATA, 0, 3);
        put_head(&mut b, 3, kind::DATA, flag::PADDED, 3);
        b.extend_from_slice(&[2, 0, 0]);
        put_head(&mut b, 2, kind::DATA, 0, 3);
        b.extend_from_slice(b"ok");
        put_window_update(&mut b, 0, 1000);
        b
    }

    #[test]
    fn frames_are_the_same_at_every_split() {
        let input = sample();
        let whole = read(&input, &[]).expect("valid");
        let kinds: Vec<u8> = whole.iter().map(|(h, _)| h.kind).collect();
        assert_eq!(kinds, [4, 0, 6, 0, 0, 0, 8]);
        assert_eq!(whole[1].1, b"hello");
        assert_eq!(whole[2].1, b"12345678");
        assert_eq!(whole[5].1, b"ok");
        assert_eq!(whole[6].1, 1000u32.to_be_bytes());
        for a in 0..=input.len() {
            assert_eq!(read(&input, &[a]).expect("valid"), whole, "cut at {a}");
        }
        let every: Vec<usize> = (1..input.len()).collect();
        assert_eq!(read(&input, &every).expect("valid"), whole);
    }

    #[test]
    fn oversized_and_bad_padding_are_errors() {
        let mut b = Vec::new();
        put_head(&mut b, 16_385, kind::HEADERS, 0, 1);
        assert_eq!(
            read(&b, &[]).map_err(|e| e.code),
            Err(code::FRAME_SIZE_ERROR)
        );
        b.clear();
        put_head(&mut b, 2, kind::DATA, flag::PADDED, 1);
        b.extend_from_slice(&[5, 0]);
        for a in 0..=b.len() {
            assert_eq!(
                read(&b, &[a]).map_err(|e| e.code),
                Err(code::PROTOCOL_ERROR)
            );
        }
        b.clear();
        put_head(&mut b, 0, kind::DATA, flag::PADDED, 1);
        assert_eq!(
            read(&b, &[]).map_err(|e| e.code),
            Err(code::FRAME_SIZE_ERROR)
        );
    }

    #[test]
    fn head_round_trips() {
        let mut b = Vec::new();
        put_head(&mut b, 0x12_3456, kind::GOAWAY, 0xa5, 0xffff_ffff);
        let h = Head::parse(b.as_slice().try_into().expect("9 bytes"));
        assert_eq!(
            h,
            Head {
                len: 0x12_3456,
                kind: kind::GOAWAY,
                flags: 0xa5,
                stream: 0x7fff_ffff
            }
        );
    }
}
