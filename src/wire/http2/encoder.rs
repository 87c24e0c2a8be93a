//! HPACK encoding of request header blocks with the dynamic table (RFC 7541): one
//! `Encoder` per connection, mirroring the server decoder's table exactly.
//!
//! Requests are staged as plain field lists (`put_plain`: lengths and bytes, no
//! HPACK) when a call is issued and encoded only when its stream opens, so header
//! blocks are encoded in the order the server decodes them, and a call that goes
//! back to the queue (a refused stream) is encoded again from the encoder's state
//! at that time, never from stale bytes.
//!
//! Policy: the first time a (name, value) pair is sent it goes out as a literal
//! with incremental indexing and is added to the table; later it is one indexed
//! byte. Pairs whose entry (name + value + 32, §4.1) exceeds a quarter of the table
//! are sent as literals without indexing, so one long varying value (a rotating
//! `:path`, a cookie) cannot flush the stable entries. The table's size follows the
//! server's SETTINGS_HEADER_TABLE_SIZE (at most our default of 4096; 0: no
//! indexing); a change is signalled by a Dynamic Table Size Update at the start of
//! the next block (§6.3, RFC 9113 §4.3.1). Entries' byte buffers are recycled, so
//! the steady state allocates nothing. Called by `http2::conn` (settings) and
//! `conn::h2` (encoding at stream open).

use std::collections::VecDeque;

use super::hpack::{put_indexed, put_integer, put_string, STATIC};

/// The largest table the encoder uses (the protocol's initial
/// SETTINGS_HEADER_TABLE_SIZE: larger settings are not taken up).
pub(crate) const DEFAULT_TABLE: usize = 4096;
/// Per-entry overhead in the table size (RFC 7541 §4.1).
const ENTRY_OVERHEAD: usize = 32;

/// Appends `name: value` to a plain field list (u32 LE name length, u32 LE value
/// length, name, value).
pub(crate) fn put_plain(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(&u32::try_from(name.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(&u32::try_from(value.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(name);
    out.extend_from_slice(value);
}

/// The (name, value) pairs of a plain field list, in order (a malformed tail ends it).
pub(crate) fn plain_fields(mut list: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    std::iter::from_fn(move || {
        let word = |b: &[u8], k: usize| -> Option<usize> {
            let w: [u8; 4] = b.get(k..k + 4)?.try_into().ok()?;
            Some(u32::from_le_bytes(w) as usize)
        };
        let n = word(list, 0)?;
        let v = word(list, 4)?;
        let name = list.get(8..8 + n)?;
        let value = list.get(8 + n..8 + n + v)?;
        list = list.get(8 + n + v..)?;
        Some((name, value))
    })
}

/// One entry of the table: `name ++ value`.
#[derive(Debug, Default)]
struct Entry {
    bytes: Vec<u8>,
    name: usize,
}

impl Entry {
    fn size(&self) -> usize {
        self.bytes.len() + ENTRY_OVERHEAD
    }

    fn name(&self) -> &[u8] {
        &self.bytes[..self.name.min(self.bytes.len())]
    }
}

/// The request-side HPACK state of one connection.
#[derive(Debug)]
pub(crate) struct Encoder {
    /// Entries newest first (dynamic index 62 + position).
    entries: VecDeque<Entry>,
    /// Buffers of evicted entries, reused by later ones.
    spare: Vec<Vec<u8>>,
    /// Σ entry sizes (as the server's decoder counts them).
    size: usize,
    /// The table's maximum size, as last told (or to be told) to the server.
    max: usize,
    /// A size update is due at the start of the next block: the smallest maximum
    /// since the last block (signalled first when below `max`).
    pending: Option<usize>,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder {
            entries: VecDeque::new(),
            spare: Vec::new(),
            size: 0,
            max: DEFAULT_TABLE,
            pending: None,
        }
    }
}

impl Encoder {
    /// Forgets the table (a new connection), keeping the buffers.
    pub(crate) fn reset(&mut self) {
        self.evict_to(0);
        self.max = DEFAULT_TABLE;
        self.pending = None;
    }

    /// The server's SETTINGS_HEADER_TABLE_SIZE is `setting`: the table shrinks at
    /// once (and says so at the start of the next block) or grows up to our default.
    pub(crate) fn set_limit(&mut self, setting: usize) {
        let max = setting.min(DEFAULT_TABLE);
        if max == self.max {
            return;
        }
        self.pending = Some(self.pending.map_or(max.min(self.max), |p| p.min(max)));
        self.max = max;
        self.evict_to(max);
    }

    /// The table's current size (RFC 7541 §4.1).
    #[cfg(test)]
    pub(crate) fn table_size(&self) -> usize {
        self.size
    }

    /// Entries in the table.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.entries.len()
    }

    fn evict_to(&mut self, limit: usize) {
        while self.size > limit {
            let Some(mut e) = self.entries.pop_back() else {
                self.size = 0;
                break;
            };
            self.size -= e.size();
            e.bytes.clear();
            self.spare.push(std::mem::take(&mut e.bytes));
        }
    }

    fn insert(&mut self, name: &[u8], value: &[u8]) {
        let need = name.len() + value.len() + ENTRY_OVERHEAD;
        self.evict_to(self.max.saturating_sub(need));
        let mut bytes = self.spare.pop().unwrap_or_default();
        bytes.extend_from_slice(name);
        bytes.extend_from_slice(value);
        self.entries.push_front(Entry {
            bytes,
            name: name.len(),
        });
        self.size += need;
    }

    /// Encodes the plain field list `fields` (see `put_plain`) as one header block
    /// appended to `out`.
    pub(crate) fn encode(&mut self, fields: &[u8], out: &mut Vec<u8>) {
        if let Some(low) = self.pending.take() {
            if low < self.max {
                put_integer(out, 0x20, 5, low as u64);
            }
            put_integer(out, 0x20, 5, self.max as u64);
        }
        for (name, value) in plain_fields(fields) {
            self.field(name, value, out);
        }
    }

    /// Encodes one field (`name` lowercase).
    pub(crate) fn field(&mut self, name: &[u8], value: &[u8], out: &mut Vec<u8>) {
        let mut name_index = None;
        for (i, e) in self.entries.iter().enumerate() {
            if e.name() == name {
                if &e.bytes[e.name..] == value {
                    put_indexed(out, STATIC.len() + 1 + i);
                    return;
                }
                name_index = name_index.or(Some(STATIC.len() + 1 + i));
            }
        }
        let mut static_name = None;
        for (i, (n, v)) in STATIC.iter().enumerate() {
            if n.as_bytes() == name {
                if !v.is_empty() && v.as_bytes() == value {
                    put_indexed(out, i + 1);
                    return;
                }
                static_name = static_name.or(Some(i + 1));
            }
        }
        let name_index = static_name.or(name_index);
        let need = name.len() + value.len() + ENTRY_OVERHEAD;
        let index = self.max > 0 && need <= self.max / 4;
        let (flags, prefix) = if index { (0x40, 6) } else { (0x00, 4) };
        match name_index {
            Some(i) => put_integer(out, flags, prefix, i as u64),
            None => {
                out.push(flags);
                put_string(out, name);
            }
        }
        put_string(out, value);
        if index {
            self.insert(name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::http2::hpack::Decoder;

    fn plain(fields: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, v) in fields {
            put_plain(&mut out, n.as_bytes(), v.as_bytes());
        }
        out
    }

    fn decode(d: &mut Decoder, block: &[u8]) -> Vec<(String, String)> {
        let mut got = Vec::new();
        d.decode(block, |n, v| {
            got.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ))
        })
        .expect("our block decodes");
        got
    }

    fn request(path: &str, cookie: &str) -> Vec<(String, String)> {
        let mut r = vec![
            (":method", "GET"),
            (":scheme", "http"),
            (":path", path),
            (":authority", "127.0.0.1:8082"),
            ("user-agent", "rshperf/0.1.0"),
        ];
        if !cookie.is_empty() {
            r.push(("cookie", cookie));
        }
        r.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn encode(e: &mut Encoder, fields: &[(String, String)]) -> Vec<u8> {
        let list: Vec<(&str, &str)> = fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let mut block = Vec::new();
        e.encode(&plain(&list), &mut block);
        block
    }

    #[test]
    fn plain_lists_round_trip() {
        let list = plain(&[("a", "1"), ("", ""), ("cookie", "x=y")]);
        let got: Vec<_> = plain_fields(&list).collect();
        assert_eq!(
            got,
            vec![
                (&b"a"[..], &b"1"[..]),
                (&b""[..], &b""[..]),
                (&b"cookie"[..], &b"x=y"[..])
            ]
        );
        assert_eq!(plain_fields(&list[..list.len() - 1]).count(), 2);
    }

    #[test]
    fn repeated_requests_become_indexes() {
        let mut e = Encoder::default();
        let mut d = Decoder::new(4096);
        let r = request("/1k.html", "");
        let first = encode(&mut e, &r);
        assert_eq!(decode(&mut d, &first), r);
        let second = encode(&mut e, &r);
        assert_eq!(decode(&mut d, &second), r);
        // :method GET and :scheme http are static; the other three dynamic, newest
        // (user-agent) first.
        assert_eq!(second, vec![0x82, 0x86, 0xc0, 0xbf, 0xbe]);
        assert_eq!(e.table_size(), d.table_size());
        assert_eq!(e.entries(), 3);
    }

    #[test]
    fn sequences_with_evictions_and_size_changes_decode() {
        let mut e = Encoder::default();
        let mut d = Decoder::new(4096);
        let mut wire = 0;
        let mut decoded = 0;
        for i in 0..3000u32 {
            // Table size changes mid-sequence, several between two blocks.
            match i {
                500 => e.set_limit(1024),
                900 => {
                    e.set_limit(0);
                    e.set_limit(300);
                }
                1300 => e.set_limit(0),
                1700 => {
                    e.set_limit(100);
                    e.set_limit(65536);
                }
                2200 => {
                    e.set_limit(2000);
                    e.set_limit(4000);
                }
                _ => {}
            }
            let path = format!("/page/{}.html", i % 97);
            let cookie = if i % 3 == 0 {
                format!("sid={}", i % 7)
            } else {
                "x".repeat((i % 50) as usize * 40)
            };
            let r = request(&path, &cookie);
            let block = encode(&mut e, &r);
            wire += block.len();
            decoded += r.iter().map(|(n, v)| n.len() + v.len()).sum::<usize>();
            assert_eq!(decode(&mut d, &block), r, "request {i}");
            assert_eq!(e.table_size(), d.table_size(), "request {i}");
            assert!(e.table_size() <= e.max);
            if (1300..1700).contains(&i) {
                assert_eq!(e.entries(), 0);
            }
        }
        assert!(wire < decoded, "{wire} {decoded}");
    }

    #[test]
    fn large_values_are_not_indexed() {
        let mut e = Encoder::default();
        let mut d = Decoder::new(4096);
        let r = request("/", &"c".repeat(1100));
        for _ in 0..3 {
            let b = encode(&mut e, &r);
            assert_eq!(decode(&mut d, &b), r);
        }
        assert_eq!(e.entries(), 2);
    }

    #[test]
    fn size_updates_come_first_and_smallest_first() {
        let mut e = Encoder::default();
        e.set_limit(0);
        e.set_limit(1000);
        let mut block = Vec::new();
        e.encode(&plain(&[(":method", "GET")]), &mut block);
        // Size 0, then 1000 (0x3f + 969 in 7-bit groups), then index 2.
        assert_eq!(block, vec![0x20, 0x3f, 0xc9, 0x07, 0x82]);
        block.clear();
        e.encode(&plain(&[(":method", "GET")]), &mut block);
        assert_eq!(block, vec![0x82]);
    }
}
