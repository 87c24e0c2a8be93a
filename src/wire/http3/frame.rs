//! HTTP/3 frames (RFC 9114 §7): types, error codes, settings, the writers for what a
//! client sends (SETTINGS, HEADERS, DATA), and `Reader`, which cuts one stream's bytes
//! into frames however they are split.
//!
//! DATA payload is handed out piece by piece as it arrives (never buffered); other
//! known frames are handed out whole, from the input when they arrive in one piece,
//! else gathered up to a limit; unknown and reserved (grease) types are skipped
//! unbuffered. Which frame is allowed on which stream is `conn`'s business. Sans I/O.

use super::varint;

/// Frame types.
pub mod kind {
    /// DATA.
    pub const DATA: u64 = 0x00;
    /// HEADERS.
    pub const HEADERS: u64 = 0x01;
    /// CANCEL_PUSH.
    pub(crate) const CANCEL_PUSH: u64 = 0x03;
    /// SETTINGS.
    pub(crate) const SETTINGS: u64 = 0x04;
    /// PUSH_PROMISE.
    pub(crate) const PUSH_PROMISE: u64 = 0x05;
    /// GOAWAY.
    pub(crate) const GOAWAY: u64 = 0x07;
    /// MAX_PUSH_ID.
    pub(crate) const MAX_PUSH_ID: u64 = 0x0d;
    /// HTTP/2 frame types reserved in HTTP/3: receiving one is an error (§7.2.8).
    pub(crate) const H2_ONLY: [u64; 4] = [0x02, 0x06, 0x08, 0x09];
}

/// Unidirectional stream types (§6.2, RFC 9204 §4.2).
pub(crate) mod stream_type {
    /// The control stream.
    pub(crate) const CONTROL: u64 = 0x00;
    /// The QPACK encoder stream.
    pub(crate) const QPACK_ENCODER: u64 = 0x02;
    /// The QPACK decoder stream.
    pub(crate) const QPACK_DECODER: u64 = 0x03;
}

/// Settings identifiers.
pub(crate) mod setting {
    /// SETTINGS_QPACK_MAX_TABLE_CAPACITY (RFC 9204).
    pub(crate) const QPACK_MAX_TABLE_CAPACITY: u64 = 0x01;
    /// SETTINGS_MAX_FIELD_SECTION_SIZE.
    pub(crate) const MAX_FIELD_SECTION_SIZE: u64 = 0x06;
    /// SETTINGS_QPACK_BLOCKED_STREAMS (RFC 9204).
    pub(crate) const QPACK_BLOCKED_STREAMS: u64 = 0x07;
    /// HTTP/2 settings reserved in HTTP/3: receiving one is an error (§7.2.4.1).
    pub(crate) const H2_ONLY: [u64; 4] = [0x02, 0x03, 0x04, 0x05];
}

/// Error codes (§8.1, RFC 9204 §6).
pub(crate) mod code {
    /// H3_NO_ERROR.
    pub(crate) const NO_ERROR: u64 = 0x100;
    /// H3_STREAM_CREATION_ERROR.
    pub(crate) const STREAM_CREATION_ERROR: u64 = 0x103;
    /// H3_CLOSED_CRITICAL_STREAM.
    pub(crate) const CLOSED_CRITICAL_STREAM: u64 = 0x104;
    /// H3_FRAME_UNEXPECTED.
    pub(crate) const FRAME_UNEXPECTED: u64 = 0x105;
    /// H3_FRAME_ERROR.
    pub(crate) const FRAME_ERROR: u64 = 0x106;
    /// H3_EXCESSIVE_LOAD.
    pub(crate) const EXCESSIVE_LOAD: u64 = 0x107;
    /// H3_ID_ERROR.
    pub(crate) const ID_ERROR: u64 = 0x108;
    /// H3_SETTINGS_ERROR.
    pub(crate) const SETTINGS_ERROR: u64 = 0x109;
    /// H3_MISSING_SETTINGS.
    pub(crate) const MISSING_SETTINGS: u64 = 0x10a;
    /// H3_REQUEST_REJECTED.
    pub(crate) const REQUEST_REJECTED: u64 = 0x10b;
    /// H3_MESSAGE_ERROR.
    pub(crate) const MESSAGE_ERROR: u64 = 0x10e;
    /// QPACK_DECOMPRESSION_FAILED.
    pub(crate) const QPACK_DECOMPRESSION_FAILED: u64 = 0x200;
}

/// A protocol error: the connection (or the stream, for message errors) ends with
/// `code`; `reason` says why, for stderr and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct H3Error {
    /// The HTTP/3 error code.
    pub code: u64,
    /// What was wrong.
    pub(crate) reason: &'static str,
}

impl std::fmt::Display for H3Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (HTTP/3 error 0x{:x})", self.reason, self.code)
    }
}

/// An `H3Error`.
pub(crate) const fn err(code: u64, reason: &'static str) -> H3Error {
    H3Error { code, reason }
}

/// Appends a frame header.
pub(crate) fn put_head(out: &mut Vec<u8>, kind: u64, len: u64) {
    varint::put(out, kind);
    varint::put(out, len);
}

/// A request's frames as QUIC takes them: HEADERS with the QPACK field section
/// `section`, then, if `body` is not empty, one DATA frame.
pub fn request(section: &[u8], body: &[u8]) -> bytes::Bytes {
    let heads = 2 + varint::len(section.len() as u64) + varint::len(body.len() as u64);
    let mut out = Vec::with_capacity(heads + section.len() + body.len());
    put_head(&mut out, kind::HEADERS, section.len() as u64);
    out.extend_from_slice(section);
    if !body.is_empty() {
        put_head(&mut out, kind::DATA, body.len() as u64);
        out.extend_from_slice(body);
    }
    out.into()
}

/// Appends a SETTINGS frame.
pub(crate) fn put_settings(out: &mut Vec<u8>, pairs: &[(u64, u64)]) {
    let len: usize = pairs
        .iter()
        .map(|&(k, v)| varint::len(k) + varint::len(v))
        .sum();
    put_head(out, kind::SETTINGS, len as u64);
    for &(k, v) in pairs {
        varint::put(out, k);
        varint::put(out, v);
    }
}

/// Appends a GOAWAY carrying `id` (a server's frame: the tests' peers send it).
#[cfg(test)]
pub(crate) fn put_goaway(out: &mut Vec<u8>, id: u64) {
    put_head(out, kind::GOAWAY, varint::len(id) as u64);
    varint::put(out, id);
}

/// What `Reader::next` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// A complete frame other than DATA: its type and payload.
    Frame(u64, &'a [u8]),
    /// A piece of DATA payload; `end` on the frame's last piece (a frame with no
    /// payload gives one empty piece).
    Data {
        /// These payload bytes.
        bytes: &'a [u8],
        /// The frame is complete with this piece.
        end: bool,
    },
}

/// Where the reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Collecting the type and length varints.
    Head,
    /// DATA with `left` payload bytes to come.
    Data { left: u64 },
    /// Skipping `left` bytes of an unknown frame.
    Skip { left: u64 },
    /// Gathering the `len`-byte payload of a `kind` frame into `payload`.
    Payload { kind: u64, len: usize },
}

/// Cuts one stream's bytes into frames (see the module header).
#[derive(Debug)]
pub struct Reader {
    head: [u8; 16],
    head_len: usize,
    at: At,
    payload: Vec<u8>,
    /// Largest non-DATA payload accepted.
    max_payload: u64,
}

/// True for the frame types the reader hands out whole.
fn known(kind: u64) -> bool {
    matches!(
        kind,
        kind::HEADERS
            | kind::CANCEL_PUSH
            | kind::SETTINGS
            | kind::PUSH_PROMISE
            | kind::GOAWAY
            | kind::MAX_PUSH_ID
    ) || kind::H2_ONLY.contains(&kind)
}

impl Reader {
    /// A reader accepting non-DATA payloads up to `max_payload` bytes.
    pub fn new(max_payload: u64) -> Reader {
        Reader {
            head: [0; 16],
            head_len: 0,
            at: At::Head,
            payload: Vec::new(),
            max_payload,
        }
    }

    /// Forgets any partial frame (the buffer is kept).
    pub(crate) fn reset(&mut self) {
        self.head_len = 0;
        self.at = At::Head;
        self.payload.clear();
    }

    /// True between frames (a stream may end here).
    pub fn idle(&self) -> bool {
        self.at == At::Head && self.head_len == 0
    }

    /// The next item from the front of `input` (consumed as far as read), or None
    /// when `input` is used up without completing one.
    pub fn next<'s, 'i: 's>(
        &'s mut self,
        input: &mut &'i [u8],
    ) -> Result<Option<Item<'s>>, H3Error> {
        loop {
            match self.at {
                At::Head => {
                    if !self.read_head(input)? {
                        return Ok(None);
                    }
                }
                At::Data { left } => {
                    if left == 0 {
                        self.at = At::Head;
                        return Ok(Some(Item::Data {
                            bytes: &[],
                            end: true,
                        }));
                    }
                    if input.is_empty() {
                        return Ok(None);
                    }
                    let n = usize::try_from(left).unwrap_or(usize::MAX).min(input.len());
                    let (bytes, rest) = input.split_at(n);
                    *input = rest;
                    let left = left - n as u64;
                    self.at = if left == 0 {
                        At::Head
                    } else {
                        At::Data { left }
                    };
                    return Ok(Some(Item::Data {
                        bytes,
                        end: left == 0,
                    }));
                }
                At::Skip { left } => {
                    let n = usize::try_from(left).unwrap_or(usize::MAX).min(input.len());
                    *input = &input[n..];
                    let left = left - n as u64;
                    if left > 0 {
                        self.at = At::Skip { left };
                        return Ok(None);
                    }
                    self.at = At::Head;
                }
                At::Payload { kind, len } => {
                    if self.payload.is_empty() && input.len() >= len {
                        let (p, rest) = input.split_at(len);
                        *input = rest;
                        self.at = At::Head;
                        return Ok(Some(Item::Frame(kind, p)));
                    }
                    let want = len - self.payload.len();
                    let n = want.min(input.len());
                    self.payload.extend_from_slice(&input[..n]);
                    *input = &input[n..];
                    if self.payload.len() < len {
                        return Ok(None);
                    }
                    // The buffer is cleared when the next frame header is read.
                    self.at = At::Head;
                    return Ok(Some(Item::Frame(kind, &self.payload)));
                }
            }
        }
    }

    /// Gathers the frame header from `input`; true once it is complete (and `at` set).
    /// A known frame longer than the limit is H3_EXCESSIVE_LOAD.
    fn read_head(&mut self, input: &mut &[u8]) -> Result<bool, H3Error> {
        loop {
            let have = &self.head[..self.head_len];
            let need = match have.first() {
                None => 1,
                Some(&b) => {
                    let t = varint::len_of_first(b);
                    match have.get(t) {
                        None => t + 1,
                        Some(&l) => t + varint::len_of_first(l),
                    }
                }
            };
            if self.head_len == need {
                break;
            }
            let Some((&b, rest)) = input.split_first() else {
                return Ok(false);
            };
            *input = rest;
            self.head[self.head_len] = b;
            self.head_len += 1;
        }
        let (kind, t) = varint::get(&self.head).unwrap_or((0, 1));
        let (len, _) = varint::get(&self.head[t..]).unwrap_or((0, 1));
        self.head_len = 0;
        self.payload.clear();
        self.at = if kind == kind::DATA {
            At::Data { left: len }
        } else if !known(kind) {
            At::Skip { left: len }
        } else if len > self.max_payload {
            return Err(err(code::EXCESSIVE_LOAD, "a frame larger than we accept"));
        } else {
            At::Payload {
                kind,
                len: len as usize,
            }
        };
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every item of `stream` fed in pieces cut at `cuts`, owned.
    fn items(stream: &[u8], cuts: &[usize], max: u64) -> Result<Vec<(u64, Vec<u8>)>, H3Error> {
        let mut r = Reader::new(max);
        let mut out: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut data: Vec<u8> = Vec::new();
        let mut from = 0;
        for &to in cuts.iter().chain(std::iter::once(&stream.len())) {
            let mut input = &stream[from..to];
            from = to;
            while let Some(item) = r.next(&mut input)? {
                match item {
                    Item::Frame(k, p) => out.push((k, p.to_vec())),
                    Item::Data { bytes, end } => {
                        data.extend_from_slice(bytes);
                        if end {
                            out.push((kind::DATA, std::mem::take(&mut data)));
                        }
                    }
                }
            }
            assert!(input.is_empty());
        }
        assert!(r.idle());
        Ok(out)
    }

    fn sample() -> (Vec<u8>, Vec<(u64, Vec<u8>)>) {
        let mut s = Vec::new();
        put_settings(
            &mut s,
            &[(setting::QPACK_MAX_TABLE_CAPACITY, 0), (0x21, 70_000)],
        );
        put_head(&mut s, kind::HEADERS, 3);
        s.extend_from_slice(b"abc");
        put_head(&mut s, 0x1f * 7 + 0x21, 5); // a grease type: skipped
        s.extend_from_slice(b"xxxxx");
        put_head(&mut s, kind::DATA, 4);
        s.extend_from_slice(b"1234");
        put_head(&mut s, kind::DATA, 0);
        put_goaway(&mut s, 400);
        let want = vec![
            (
                kind::SETTINGS,
                vec![0x01, 0x00, 0x21, 0x80, 0x01, 0x11, 0x70],
            ),
            (kind::HEADERS, b"abc".to_vec()),
            (kind::DATA, b"1234".to_vec()),
            (kind::DATA, vec![]),
            (kind::GOAWAY, vec![0x41, 0x90]),
        ];
        (s, want)
    }

    #[test]
    fn frames_come_out_whole_at_every_split() {
        let (s, want) = sample();
        assert_eq!(items(&s, &[], 64).expect("frames"), want);
        for a in 0..=s.len() {
            assert_eq!(items(&s, &[a], 64).expect("frames"), want, "split at {a}");
            for b in a..=s.len() {
                assert_eq!(items(&s, &[a, b], 64).expect("frames"), want, "{a} {b}");
            }
        }
    }

    #[test]
    fn byte_at_a_time() {
        let (s, want) = sample();
        let cuts: Vec<usize> = (1..s.len()).collect();
        assert_eq!(items(&s, &cuts, 64).expect("frames"), want);
    }

    #[test]
    fn oversized_known_frame_is_excessive_load_but_data_and_unknown_stream() {
        let mut s = Vec::new();
        put_head(&mut s, kind::HEADERS, 65);
        s.extend_from_slice(&[0; 65]);
        let e = items(&s, &[], 64).expect_err("too long");
        assert_eq!(e.code, code::EXCESSIVE_LOAD);
        let mut s = Vec::new();
        put_head(&mut s, kind::DATA, 1000);
        s.extend_from_slice(&[7; 1000]);
        put_head(&mut s, 0x21, 1000);
        s.extend_from_slice(&[7; 1000]);
        assert_eq!(
            items(&s, &[10, 500], 64).expect("data"),
            vec![(kind::DATA, vec![7; 1000])]
        );
    }

    #[test]
    fn h2_only_types_are_handed_out_for_conn_to_refuse() {
        let mut s = Vec::new();
        put_head(&mut s, 0x06, 2);
        s.extend_from_slice(b"pi");
        assert_eq!(
            items(&s, &[1], 64).expect("frame"),
            vec![(0x06, b"pi".to_vec())]
        );
    }
}
