//! HPACK (RFC 7541): the decoder for reply header blocks (static and dynamic tables,
//! Huffman strings, table size updates), the static table and the primitive
//! encodings (integers, raw strings, indexes) used by `http2::encoder`.
//!
//! Hand-written, not a crate: crates.io's HPACK crates (`hpack` 0.3, unmaintained
//! since 2016; its fork `loona-hpack` 0.4; `httlib-hpack` 0.1) allocate a `Vec` for
//! every Huffman-coded string and every dynamic-table entry (and `httlib-hpack` for
//! every decoded field), and `loona-hpack` asserts (panics) on an over-large table
//! size set through its API. rshperf decodes one header block per reply on the hot
//! path, so this decoder writes Huffman output into one reusable scratch buffer and
//! keeps the dynamic table in one byte arena (evicted from the front, compacted in
//! place), allocating nothing once warmed up. The whole of RFC 7541's decoding side is
//! implemented and checked against appendix C's examples (C.2–C.6) below.
//!
//! Request header blocks are encoded by `http2::encoder` (its own dynamic table, no
//! Huffman). Called by `http2::conn` (decoding) and `http2::encoder`.

use std::collections::VecDeque;

use super::huffman;

/// The static table (RFC 7541 appendix A); index 1 is element 0.
pub(crate) const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// Per-entry overhead in the table size (RFC 7541 §4.1).
const ENTRY_OVERHEAD: usize = 32;
/// Largest integer accepted (a table index, string length or size): far above any
/// legal value, small enough that arithmetic on it cannot overflow.
const MAX_INT: u64 = 1 << 28;

/// Why a header block could not be decoded (a connection error, COMPRESSION_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HpackError {
    /// The block ends inside a representation.
    Truncated,
    /// An integer longer than `MAX_INT` allows.
    Integer,
    /// Index 0 or past the end of the tables.
    Index,
    /// A malformed Huffman string.
    Huffman,
    /// A table size update above the limit we advertised, or after a field.
    SizeUpdate,
}

/// One dynamic-table entry: its bytes are `name ++ value` at `off` in the arena.
#[derive(Debug, Clone, Copy)]
struct Entry {
    off: usize,
    name: usize,
    value: usize,
}

/// The dynamic table: entries newest first, bytes in one arena that grows at the end
/// and is evicted from the front (`head`), compacted in place when the dead front
/// outgrows the live part.
#[derive(Debug, Default)]
struct Table {
    data: Vec<u8>,
    head: usize,
    entries: VecDeque<Entry>,
    size: usize,
    max: usize,
}

impl Table {
    fn get(&self, i: usize) -> Option<(&[u8], &[u8])> {
        let e = self.entries.get(i)?;
        let bytes = self.data.get(e.off..e.off + e.name + e.value)?;
        Some(bytes.split_at(e.name))
    }

    fn evict_to(&mut self, limit: usize) {
        while self.size > limit {
            let Some(e) = self.entries.pop_back() else {
                break;
            };
            self.size -= e.name + e.value + ENTRY_OVERHEAD;
            self.head = e.off + e.name + e.value;
        }
        if self.entries.is_empty() {
            self.data.clear();
            self.head = 0;
        }
    }

    fn set_max(&mut self, max: usize) {
        self.max = max;
        self.evict_to(max);
    }

    /// Inserts `name: value`; an entry larger
    /// than the table empties it (§4.4).
    fn insert(&mut self, name: &[u8], value: &[u8]) {
        let need = name.len() + value.len() + ENTRY_OVERHEAD;
        if need > self.max {
            self.evict_to(0);
            return;
        }
        self.evict_to(self.max - need);
        if self.head > 0 && self.head >= self.data.len() - self.head {
            // More dead bytes than live ones: move the live part to the front.
            let head = self.head;
            self.data.copy_within(head.., 0);
            self.data.truncate(self.data.len() - head);
            for e in &mut self.entries {
                e.off -= head;
            }
            self.head = 0;
        }
        let off = self.data.len();
        self.data.extend_from_slice(name);
        self.data.extend_from_slice(value);
        self.entries.push_front(Entry {
            off,
            name: name.len(),
            value: value.len(),
        });
        self.size += need;
    }
}

/// Where a decoded string lives.
#[derive(Debug, Clone, Copy)]
enum Src {
    Static(&'static str),
    Block(usize, usize),
    Scratch(usize, usize),
    Dynamic(usize),
}

/// Decodes one connection's reply header blocks, in order.
#[derive(Debug, Default)]
pub struct Decoder {
    table: Table,
    /// Our SETTINGS_HEADER_TABLE_SIZE: the most a size update may ask for.
    limit: usize,
    scratch: Vec<u8>,
    memo: huffman::Memo,
}

/// Decodes an HPACK integer with an `n`-bit prefix at the start of `buf`: (value,
/// bytes used).
fn integer(buf: &[u8], n: u32) -> Result<(u64, usize), HpackError> {
    let first = *buf.first().ok_or(HpackError::Truncated)?;
    let mask = (1u16 << n) - 1;
    let mut v = u64::from(first) & u64::from(mask);
    if v < u64::from(mask) {
        return Ok((v, 1));
    }
    let mut shift = 0;
    for (i, &b) in buf.iter().enumerate().skip(1) {
        v += u64::from(b & 0x7f) << shift;
        if v > MAX_INT {
            return Err(HpackError::Integer);
        }
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
        shift += 7;
    }
    Err(HpackError::Truncated)
}

impl Decoder {
    /// A decoder whose table may grow to `limit` bytes (our advertised
    /// SETTINGS_HEADER_TABLE_SIZE; 4096 unless changed).
    pub fn new(limit: usize) -> Decoder {
        let mut d = Decoder {
            limit,
            ..Decoder::default()
        };
        d.table.max = limit;
        d
    }

    /// Forgets everything (a new connection on the same slot), keeping the buffers.
    pub(crate) fn reset(&mut self) {
        self.table.evict_to(0);
        self.table.max = self.limit;
        self.scratch.clear();
    }

    /// The dynamic table's current size (RFC 7541 §4.1), for tests.
    pub fn table_size(&self) -> usize {
        self.table.size
    }

    fn string(&mut self, block: &[u8], at: usize) -> Result<(Src, usize), HpackError> {
        let rest = block.get(at..).ok_or(HpackError::Truncated)?;
        let huff = rest.first().is_some_and(|b| b & 0x80 != 0);
        let (len, used) = integer(rest, 7)?;
        let start = at + used;
        let end = start + len as usize;
        let raw = block.get(start..end).ok_or(HpackError::Truncated)?;
        if huff {
            let s = self.scratch.len();
            self.memo
                .decode(raw, &mut self.scratch)
                .map_err(|_| HpackError::Huffman)?;
            Ok((Src::Scratch(s, self.scratch.len()), end))
        } else {
            Ok((Src::Block(start, end), end))
        }
    }

    fn index(&self, i: u64) -> Result<(Src, Src), HpackError> {
        let i = usize::try_from(i).map_err(|_| HpackError::Index)?;
        match i {
            0 => Err(HpackError::Index),
            1..=61 => {
                let (n, v) = STATIC[i - 1];
                Ok((Src::Static(n), Src::Static(v)))
            }
            _ => {
                if self.table.get(i - 62).is_none() {
                    return Err(HpackError::Index);
                }
                Ok((Src::Dynamic(i - 62), Src::Dynamic(i - 62)))
            }
        }
    }

    fn bytes<'a>(&'a self, block: &'a [u8], s: Src, name: bool) -> &'a [u8] {
        resolve(&self.table, &self.scratch, block, s, name)
    }

    /// Decodes the complete header block `block`, calling `field(name, value)` for
    /// each field in order.
    pub fn decode(
        &mut self,
        block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut at = 0;
        let mut fields = false;
        while at < block.len() {
            self.scratch.clear();
            let b = block[at];
            if b & 0x80 != 0 {
                // Indexed field (§6.1).
                let (i, used) = integer(&block[at..], 7)?;
                at += used;
                let (n, v) = self.index(i)?;
                field(self.bytes(block, n, true), self.bytes(block, v, false));
                fields = true;
                continue;
            }
            if b & 0xe0 == 0x20 {
                // Dynamic table size update (§6.3): only before the first field.
                let (size, used) = integer(&block[at..], 5)?;
                if fields || size > self.limit as u64 {
                    return Err(HpackError::SizeUpdate);
                }
                at += used;
                self.table.set_max(size as usize);
                continue;
            }
            // Literal (§6.2): with incremental indexing (01), without (0000) or never
            // indexed (0001).
            let (indexing, prefix) = if b & 0x40 != 0 { (true, 6) } else { (false, 4) };
            let (i, used) = integer(&block[at..], prefix)?;
            at += used;
            let name = if i == 0 {
                let (s, end) = self.string(block, at)?;
                at = end;
                s
            } else {
                let (n, _) = self.index(i)?;
                if indexing {
                    if let Src::Dynamic(d) = n {
                        // The insertion below may evict this name: copy it first.
                        let s = self.scratch.len();
                        if let Some((name, _)) = self.table.get(d) {
                            self.scratch.extend_from_slice(name);
                        }
                        Src::Scratch(s, self.scratch.len())
                    } else {
                        n
                    }
                } else {
                    n
                }
            };
            let (value, end) = self.string(block, at)?;
            at = end;
            field(
                self.bytes(block, name, true),
                self.bytes(block, value, false),
            );
            fields = true;
            if indexing {
                // Neither string lives in the table (see above), so the table can
                // be changed while they are borrowed.
                let none = Table::default();
                let n = resolve(&none, &self.scratch, block, name, true);
                let v = resolve(&none, &self.scratch, block, value, false);
                self.table.insert(n, v);
            }
        }
        Ok(())
    }
}

/// The bytes of a decoded string.
fn resolve<'a>(
    table: &'a Table,
    scratch: &'a [u8],
    block: &'a [u8],
    s: Src,
    name: bool,
) -> &'a [u8] {
    match s {
        Src::Static(t) => t.as_bytes(),
        Src::Block(a, b) => &block[a..b],
        Src::Scratch(a, b) => &scratch[a..b],
        Src::Dynamic(i) => match table.get(i) {
            Some((n, v)) => {
                if name {
                    n
                } else {
                    v
                }
            }
            None => &[],
        },
    }
}

/// Appends an HPACK integer with an `n`-bit prefix whose high bits are `flags`.
pub fn put_integer(out: &mut Vec<u8>, flags: u8, n: u32, v: u64) {
    let mask = (1u64 << n) - 1;
    if v < mask {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | mask as u8);
    let mut rest = v - mask;
    while rest >= 0x80 {
        out.push((rest & 0x7f) as u8 | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

/// Appends a raw (not Huffman-coded) string literal.
pub(crate) fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    put_integer(out, 0, 7, s.len() as u64);
    out.extend_from_slice(s);
}

/// Appends the static-table entry `index` as an indexed field.
pub(crate) fn put_indexed(out: &mut Vec<u8>, index: usize) {
    put_integer(out, 0x80, 7, index as u64);
}

/// Appends `name: value` as a literal without indexing, naming the static-table name
/// when there is one. `name` must be lowercase.
#[cfg(test)]
pub(crate) fn put_literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    match static_name(name) {
        Some(i) => put_integer(out, 0, 4, i as u64),
        None => {
            out.push(0);
            put_string(out, name);
        }
    }
    put_string(out, value);
}

/// Appends `name: value`: an indexed field when the static table holds the pair,
/// else a literal (`put_literal`).
#[cfg(test)]
pub(crate) fn put_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    match STATIC
        .iter()
        .position(|(n, v)| n.as_bytes() == name && v.as_bytes() == value && !v.is_empty())
    {
        Some(i) => put_indexed(out, i + 1),
        None => put_literal(out, name, value),
    }
}

/// The static-table index of the first entry named `name`.
#[cfg(test)]
pub(crate) fn static_name(name: &[u8]) -> Option<usize> {
    STATIC
        .iter()
        .position(|(n, _)| n.as_bytes() == name)
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    fn decode_all(d: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, HpackError> {
        let mut out = Vec::new();
        d.decode(block, |n, v| {
            out.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ))
        })?;
        Ok(out)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn appendix_c2_literals() {
        let mut d = Decoder::new(4096);
        let got = decode_all(
            &mut d,
            &hex("400a637573746f6d2d6b65790d637573746f6d2d686561646572"),
        );
        assert_eq!(got, Ok(pairs(&[("custom-key", "custom-header")])));
        assert_eq!(d.table_size(), 55);
        let mut d = Decoder::new(4096);
        let got = decode_all(&mut d, &hex("040c2f73616d706c652f70617468"));
        assert_eq!(got, Ok(pairs(&[(":path", "/sample/path")])));
        assert_eq!(d.table_size(), 0);
        let got = decode_all(&mut d, &hex("100870617373776f726406736563726574"));
        assert_eq!(got, Ok(pairs(&[("password", "secret")])));
        assert_eq!(d.table_size(), 0);
        assert_eq!(
            decode_all(&mut d, &hex("82")),
            Ok(pairs(&[(":method", "GET")]))
        );
    }

    const REQ1: [(&str, &str); 4] = [
        (":method", "GET"),
        (":scheme", "http"),
        (":path", "/"),
        (":authority", "www.example.com"),
    ];
    const REQ3: [(&str, &str); 5] = [
        (":method", "GET"),
        (":scheme", "https"),
        (":path", "/index.html"),
        (":authority", "www.example.com"),
        ("custom-key", "custom-value"),
    ];

    fn requests(blocks: [&str; 3]) {
        let mut d = Decoder::new(4096);
        let mut req2 = REQ1.to_vec();
        req2.push(("cache-control", "no-cache"));
        let want = [REQ1.to_vec(), req2, REQ3.to_vec()];
        for ((block, want), size) in blocks.iter().zip(want).zip([57, 110, 164]) {
            assert_eq!(decode_all(&mut d, &hex(block)), Ok(pairs(&want)));
            assert_eq!(d.table_size(), size);
        }
    }

    #[test]
    fn appendix_c3_requests_without_huffman() {
        requests([
            "828684410f7777772e6578616d706c652e636f6d",
            "828684be58086e6f2d6361636865",
            "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565",
        ]);
    }

    #[test]
    fn appendix_c4_requests_with_huffman() {
        requests([
            "828684418cf1e3c2e5f23a6ba0ab90f4ff",
            "828684be5886a8eb10649cbf",
            "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf",
        ]);
    }

    fn responses(blocks: [&str; 3]) {
        let date1 = "Mon, 21 Oct 2013 20:13:21 GMT";
        let loc = "https://www.example.com";
        let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";
        let want = [
            pairs(&[
                (":status", "302"),
                ("cache-control", "private"),
                ("date", date1),
                ("location", loc),
            ]),
            pairs(&[
                (":status", "307"),
                ("cache-control", "private"),
                ("date", date1),
                ("location", loc),
            ]),
            pairs(&[
                (":status", "200"),
                ("cache-control", "private"),
                ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
                ("location", loc),
                ("content-encoding", "gzip"),
                ("set-cookie", cookie),
            ]),
        ];
        // The examples run with a 256-byte table: evictions happen.
        let mut d = Decoder::new(256);
        for ((block, want), size) in blocks.iter().zip(want).zip([222, 222, 215]) {
            assert_eq!(decode_all(&mut d, &hex(block)), Ok(want));
            assert_eq!(d.table_size(), size);
        }
        // The table now holds, newest first: set-cookie, content-encoding, date.
        let got = decode_all(&mut d, &hex("bebfc0"));
        assert_eq!(
            got,
            Ok(pairs(&[
                ("set-cookie", cookie),
                ("content-encoding", "gzip"),
                ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
            ]))
        );
        assert_eq!(decode_all(&mut d, &hex("c1")), Err(HpackError::Index));
    }

    #[test]
    fn appendix_c5_responses_without_huffman() {
        responses([
            "4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d",
            "4803333037c1c0bf",
            "88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b2076657273696f6e3d31",
        ]);
    }

    #[test]
    fn appendix_c6_responses_with_huffman() {
        responses([
            "488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3",
            "4883640effc1c0bf",
            "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007",
        ]);
    }

    #[test]
    fn integers_round_trip_and_c1_examples() {
        // C.1.1–C.1.3: 10 with a 5-bit prefix, 1337 with 5 bits, 42 with 8 bits.
        let mut out = Vec::new();
        put_integer(&mut out, 0, 5, 10);
        put_integer(&mut out, 0, 5, 1337);
        put_integer(&mut out, 0, 8, 42);
        assert_eq!(out, [0x0a, 0x1f, 0x9a, 0x0a, 0x2a]);
        assert_eq!(integer(&out[1..], 5), Ok((1337, 3)));
        for v in [0, 30, 31, 127, 128, 16_383, 1 << 20, MAX_INT] {
            for n in 1..=8 {
                out.clear();
                put_integer(&mut out, 0, n, v);
                assert_eq!(integer(&out, n), Ok((v, out.len())), "{v} with {n} bits");
                for cut in 0..out.len() {
                    assert!(integer(&out[..cut], n).is_err());
                }
            }
        }
        assert_eq!(
            integer(&[0x1f, 0xff, 0xff, 0xff, 0xff, 0x7f], 5),
            Err(HpackError::Integer)
        );
    }

    #[test]
    fn hostile_blocks_are_errors() {
        let mut d = Decoder::new(4096);
        // Index 0, index past the tables, a truncated literal, a size update above
        // the limit, a size update after a field, bad Huffman.
        for block in ["80", "ff00", "410f7777", "3fe21f", "823f01", "0083ffffff01"] {
            assert!(decode_all(&mut d, &hex(block)).is_err(), "{block}");
        }
        // A size update within the limit, at the start, is fine.
        assert_eq!(decode_all(&mut d, &hex("3fe11f82")).map(|v| v.len()), Ok(1));
    }

    #[test]
    fn encoder_output_decodes_to_the_fields() {
        let mut out = Vec::new();
        put_field(&mut out, b":method", b"GET");
        put_field(&mut out, b":scheme", b"https");
        put_field(&mut out, b":path", b"/1k.html");
        put_literal(&mut out, b":authority", b"127.0.0.1");
        put_literal(&mut out, b"user-agent", b"rshperf/0.1.0");
        put_literal(&mut out, b"x-custom", b"v");
        assert_eq!(&out[..2], [0x82, 0x87]);
        let mut d = Decoder::new(4096);
        assert_eq!(
            decode_all(&mut d, &out),
            Ok(pairs(&[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/1k.html"),
                (":authority", "127.0.0.1"),
                ("user-agent", "rshperf/0.1.0"),
                ("x-custom", "v"),
            ]))
        );
        assert_eq!(d.table_size(), 0);
    }

    #[test]
    fn memoized_huffman_strings_decode_alike() {
        // The same Huffman value twice (a memo hit), then many distinct ones (the
        // memo starting over), each checked against its plain decoding.
        let mut d = Decoder::new(4096);
        for i in 0..3000u32 {
            let value = format!("value-{}", i % 1500 / 2);
            let mut block = vec![0x00];
            put_string(&mut block, b"x-v");
            let mut enc = Vec::new();
            huffman::encode(value.as_bytes(), &mut enc);
            put_integer(&mut block, 0x80, 7, enc.len() as u64);
            block.extend_from_slice(&enc);
            assert_eq!(
                decode_all(&mut d, &block),
                Ok(vec![("x-v".to_string(), value)])
            );
            assert!(d.memo.bounded());
        }
    }

    #[test]
    fn table_arena_stays_bounded_under_churn() {
        let mut d = Decoder::new(256);
        let mut block = Vec::new();
        for i in 0..10_000u32 {
            block.clear();
            block.push(0x40);
            put_string(&mut block, format!("name-{}", i % 7).as_bytes());
            put_string(&mut block, &vec![b'v'; (i % 90) as usize]);
            let got = decode_all(&mut d, &block).expect("valid");
            assert_eq!(got.len(), 1);
            assert!(d.table_size() <= 256);
            assert!(
                d.table.data.len() <= 2 * 256 + 200,
                "arena {}",
                d.table.data.len()
            );
        }
    }
}
