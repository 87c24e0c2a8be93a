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
mod tests;
