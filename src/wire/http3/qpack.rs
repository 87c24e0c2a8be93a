//! QPACK (RFC 9204) without a dynamic table: we advertise
//! SETTINGS_QPACK_MAX_TABLE_CAPACITY 0 and SETTINGS_QPACK_BLOCKED_STREAMS 0, so a
//! server may only use the static table and literals. The encoder writes requests
//! that way (static index, static name + literal value, or literal name and value; no
//! Huffman, as for HPACK); the decoder reads field sections, Huffman-coded strings
//! included (the decoder shared with HPACK), and refuses any reference to a dynamic
//! table (QPACK_DECOMPRESSION_FAILED). Hand-written: the static table and prefixed
//! integers are short, and no crate offers a sans-I/O QPACK without a runtime.

use super::frame::{code, err, H3Error};
use crate::wire::http2::hpack::put_integer;
use crate::wire::http2::huffman;

/// The static table (RFC 9204 Appendix A), indexed from 0.
pub(crate) const STATIC: [(&str, &str); 99] = [
    (":authority", ""),
    (":path", "/"),
    ("age", "0"),
    ("content-disposition", ""),
    ("content-length", "0"),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("referer", ""),
    ("set-cookie", ""),
    (":method", "CONNECT"),
    (":method", "DELETE"),
    (":method", "GET"),
    (":method", "HEAD"),
    (":method", "OPTIONS"),
    (":method", "POST"),
    (":method", "PUT"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "103"),
    (":status", "200"),
    (":status", "304"),
    (":status", "404"),
    (":status", "503"),
    ("accept", "*/*"),
    ("accept", "application/dns-message"),
    ("accept-encoding", "gzip, deflate, br"),
    ("accept-ranges", "bytes"),
    ("access-control-allow-headers", "cache-control"),
    ("access-control-allow-headers", "content-type"),
    ("access-control-allow-origin", "*"),
    ("cache-control", "max-age=0"),
    ("cache-control", "max-age=2592000"),
    ("cache-control", "max-age=604800"),
    ("cache-control", "no-cache"),
    ("cache-control", "no-store"),
    ("cache-control", "public, max-age=31536000"),
    ("content-encoding", "br"),
    ("content-encoding", "gzip"),
    ("content-type", "application/dns-message"),
    ("content-type", "application/javascript"),
    ("content-type", "application/json"),
    ("content-type", "application/x-www-form-urlencoded"),
    ("content-type", "image/gif"),
    ("content-type", "image/jpeg"),
    ("content-type", "image/png"),
    ("content-type", "text/css"),
    ("content-type", "text/html; charset=utf-8"),
    ("content-type", "text/plain"),
    ("content-type", "text/plain;charset=utf-8"),
    ("range", "bytes=0-"),
    ("strict-transport-security", "max-age=31536000"),
    (
        "strict-transport-security",
        "max-age=31536000; includesubdomains",
    ),
    (
        "strict-transport-security",
        "max-age=31536000; includesubdomains; preload",
    ),
    ("vary", "accept-encoding"),
    ("vary", "origin"),
    ("x-content-type-options", "nosniff"),
    ("x-xss-protection", "1; mode=block"),
    (":status", "100"),
    (":status", "204"),
    (":status", "206"),
    (":status", "302"),
    (":status", "400"),
    (":status", "403"),
    (":status", "421"),
    (":status", "425"),
    (":status", "500"),
    ("accept-language", ""),
    ("access-control-allow-credentials", "FALSE"),
    ("access-control-allow-credentials", "TRUE"),
    ("access-control-allow-headers", "*"),
    ("access-control-allow-methods", "get"),
    ("access-control-allow-methods", "get, post, options"),
    ("access-control-allow-methods", "options"),
    ("access-control-expose-headers", "content-length"),
    ("access-control-request-headers", "content-type"),
    ("access-control-request-method", "get"),
    ("access-control-request-method", "post"),
    ("alt-svc", "clear"),
    ("authorization", ""),
    (
        "content-security-policy",
        "script-src 'none'; object-src 'none'; base-uri 'none'",
    ),
    ("early-data", "1"),
    ("expect-ct", ""),
    ("forwarded", ""),
    ("if-range", ""),
    ("origin", ""),
    ("purpose", "prefetch"),
    ("server", ""),
    ("timing-allow-origin", "*"),
    ("upgrade-insecure-requests", "1"),
    ("user-agent", ""),
    ("x-forwarded-for", ""),
    ("x-frame-options", "deny"),
    ("x-frame-options", "sameorigin"),
];

/// Appends the field section prefix of a section that uses no dynamic table
/// (Required Insert Count 0, Delta Base 0).
pub fn put_prefix(out: &mut Vec<u8>) {
    out.extend_from_slice(&[0, 0]);
}

/// The static table's names in byte order, each with the indices of its entries
/// (ascending): the encoder finds a name by binary search instead of comparing it
/// with all 99 entries (that scan was some 7 % of a request's instructions).
fn static_names() -> &'static [(&'static [u8], Vec<u8>)] {
    static NAMES: std::sync::OnceLock<Vec<(&'static [u8], Vec<u8>)>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<(&'static [u8], Vec<u8>)> = Vec::new();
        for (i, (n, _)) in (0u8..).zip(STATIC.iter()) {
            match names.iter_mut().find(|(m, _)| *m == n.as_bytes()) {
                Some((_, at)) => at.push(i),
                None => names.push((n.as_bytes(), vec![i])),
            }
        }
        names.sort_unstable_by(|a, b| a.0.cmp(b.0));
        names
    })
}

/// Appends `name: value` as a field line: the static entry when the table holds the
/// pair, else a literal value under the static name when there is one (its first
/// entry), else a literal name and value. `name` must be lowercase.
pub fn put_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    let names = static_names();
    match names.binary_search_by(|(n, _)| (*n).cmp(name)) {
        Ok(k) => {
            let at = &names[k].1;
            for &i in at {
                if STATIC[usize::from(i)].1.as_bytes() == value {
                    // Indexed field line, static: 1 1 index(6).
                    put_integer(out, 0xc0, 6, u64::from(i));
                    return;
                }
            }
            // Literal with name reference, static, not "never indexed": 0 1 0 1 index(4).
            put_integer(out, 0x50, 4, u64::from(at[0]));
        }
        Err(_) => {
            // Literal with literal name, raw: 0 0 1 0 0 length(3).
            put_integer(out, 0x20, 3, name.len() as u64);
            out.extend_from_slice(name);
        }
    }
    put_integer(out, 0, 7, value.len() as u64);
    out.extend_from_slice(value);
}

/// A decoding failure: QPACK_DECOMPRESSION_FAILED with this reason.
fn bad(reason: &'static str) -> H3Error {
    err(code::QPACK_DECOMPRESSION_FAILED, reason)
}

/// Reads a prefixed integer (`n`-bit prefix) at `at`: its value and the next offset.
fn int(b: &[u8], at: usize, n: u32) -> Result<(u64, usize), H3Error> {
    let first = *b.get(at).ok_or(bad("a field section cut short"))?;
    let mask = ((1u16 << n) - 1) as u8;
    let mut v = u64::from(first & mask);
    let mut at = at + 1;
    if v < u64::from(mask) {
        return Ok((v, at));
    }
    let mut shift = 0u32;
    loop {
        let b = *b.get(at).ok_or(bad("a field section cut short"))?;
        at += 1;
        if shift > 56 {
            return Err(bad("an integer too large"));
        }
        v += u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok((v, at));
        }
    }
}

/// Decodes field sections (see the module header). Holds scratch buffers and the
/// recent Huffman strings with their decodings (servers repeat their values).
#[derive(Debug, Default)]
pub struct Decoder {
    name: Vec<u8>,
    value: Vec<u8>,
    /// Recent Huffman strings and their decodings.
    memo: huffman::Memo,
}

/// Where a decoded string is.
#[derive(Clone, Copy)]
enum Src {
    /// `block[from..to]`.
    Raw(usize, usize),
    /// In the decoder's scratch buffer.
    Scratch,
}

impl Decoder {
    /// A decoder.
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Decodes the field section `block`, calling `field` with each name and value in
    /// order; returns the decoded size (Σ name + value lengths). A decoded size above
    /// `limit` is H3_EXCESSIVE_LOAD; a dynamic-table reference, a bad index, a bad
    /// Huffman string or a cut section is QPACK_DECOMPRESSION_FAILED.
    pub fn decode(
        &mut self,
        block: &[u8],
        limit: u64,
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<u64, H3Error> {
        let (ric, at) = int(block, 0, 8)?;
        if ric != 0 {
            return Err(bad(
                "a reference to the QPACK dynamic table, which we disabled",
            ));
        }
        // Sign bit and Delta Base: meaningless without a dynamic table.
        let (_, mut at) = int(block, at, 7)?;
        let mut size = 0u64;
        while at < block.len() {
            let b = block[at];
            let (name, value);
            if b & 0x80 != 0 {
                if b & 0x40 == 0 {
                    return Err(bad(
                        "a reference to the QPACK dynamic table, which we disabled",
                    ));
                }
                let (i, next) = int(block, at, 6)?;
                at = next;
                let (n, v) = static_entry(i)?;
                name = n.as_bytes();
                value = v.as_bytes();
                size += (name.len() + value.len()) as u64;
                if size > limit {
                    return Err(err(code::EXCESSIVE_LOAD, "a header section too large"));
                }
                field(name, value);
                continue;
            }
            if b & 0x40 != 0 {
                if b & 0x10 == 0 {
                    return Err(bad(
                        "a reference to the QPACK dynamic table, which we disabled",
                    ));
                }
                let (i, next) = int(block, at, 4)?;
                let (n, _) = static_entry(i)?;
                let (v, next) = self.string(block, next, 7, false)?;
                at = next;
                name = n.as_bytes();
                value = self.get(block, v, false);
            } else if b & 0x20 != 0 {
                let (n, next) = self.string(block, at, 3, true)?;
                let (v, next) = self.string(block, next, 7, false)?;
                at = next;
                name = self.get(block, n, true);
                value = self.get(block, v, false);
            } else {
                return Err(bad(
                    "a reference to the QPACK dynamic table, which we disabled",
                ));
            }
            size += (name.len() + value.len()) as u64;
            if size > limit {
                return Err(err(code::EXCESSIVE_LOAD, "a header section too large"));
            }
            field(name, value);
        }
        Ok(size)
    }

    /// Reads a string literal whose length has an `n`-bit prefix with the Huffman flag
    /// just above it, at `at`; a Huffman-coded one is decoded into the scratch buffer
    /// for names (`is_name`) or values.
    fn string(
        &mut self,
        block: &[u8],
        at: usize,
        n: u32,
        is_name: bool,
    ) -> Result<(Src, usize), H3Error> {
        let first = *block.get(at).ok_or(bad("a field section cut short"))?;
        let huff = first & (1 << n) != 0;
        let (len, from) = int(block, at, n)?;
        let to = usize::try_from(len)
            .ok()
            .and_then(|l| from.checked_add(l))
            .filter(|&to| to <= block.len())
            .ok_or(bad("a string longer than its field section"))?;
        if !huff {
            return Ok((Src::Raw(from, to), to));
        }
        let out = if is_name {
            &mut self.name
        } else {
            &mut self.value
        };
        out.clear();
        self.memo
            .decode(&block[from..to], out)
            .map_err(|_| bad("a bad Huffman string"))?;
        Ok((Src::Scratch, to))
    }

    /// The bytes of a string read by `string`.
    fn get<'a>(&'a self, block: &'a [u8], s: Src, is_name: bool) -> &'a [u8] {
        match s {
            Src::Raw(from, to) => &block[from..to],
            Src::Scratch if is_name => &self.name,
            Src::Scratch => &self.value,
        }
    }
}

/// Static entry `i`, or a decoding failure.
fn static_entry(i: u64) -> Result<(&'static str, &'static str), H3Error> {
    usize::try_from(i)
        .ok()
        .and_then(|i| STATIC.get(i))
        .copied()
        .ok_or(bad("a static table index out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    fn fields(block: &[u8]) -> Result<Vec<(String, String)>, H3Error> {
        let mut out = Vec::new();
        Decoder::new().decode(block, 1 << 20, |n, v| {
            out.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ))
        })?;
        Ok(out)
    }

    #[test]
    fn rfc9204_b1_literal_with_static_name_reference() {
        let block = hex("0000 510b 2f69 6e64 6578 2e68 746d 6c");
        assert_eq!(
            fields(&block).expect("decodes"),
            vec![(":path".into(), "/index.html".into())]
        );
        let mut out = Vec::new();
        put_prefix(&mut out);
        put_field(&mut out, b":path", b"/index.html");
        assert_eq!(out, block);
    }

    #[test]
    fn rfc9204_dynamic_table_examples_are_refused() {
        // B.2 stream 4 (Required Insert Count 2), and post-base / dynamic indexes
        // behind a zero Required Insert Count.
        for block in ["0381 10 11", "0000 80", "0000 10", "0000 4100", "0000 0000"] {
            let e = fields(&hex(block)).expect_err(block);
            assert_eq!(e.code, code::QPACK_DECOMPRESSION_FAILED, "{block}");
        }
    }

    #[test]
    fn the_encoder_picks_the_entry_a_full_scan_of_the_table_picks() {
        // The reference: the first entry with name and value, else the first with
        // the name, else none.
        let scan = |name: &[u8], value: &[u8]| {
            let same = |i: &usize| STATIC[*i].0.as_bytes() == name;
            let exact = (0..STATIC.len()).find(|i| same(i) && STATIC[*i].1.as_bytes() == value);
            (exact, (0..STATIC.len()).find(same))
        };
        let mut cases: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for (n, v) in STATIC {
            cases.push((n.as_bytes().to_vec(), v.as_bytes().to_vec()));
            cases.push((n.as_bytes().to_vec(), b"other".to_vec()));
        }
        for n in ["x-custom", "", "a", "zzz", ":aut", "content-lengthx"] {
            cases.push((n.as_bytes().to_vec(), b"v".to_vec()));
        }
        for (n, v) in &cases {
            let mut got = Vec::new();
            put_field(&mut got, n, v);
            let mut want = Vec::new();
            match scan(n, v) {
                (Some(i), _) => put_integer(&mut want, 0xc0, 6, i as u64),
                (None, by_name) => {
                    match by_name {
                        Some(i) => put_integer(&mut want, 0x50, 4, i as u64),
                        None => {
                            put_integer(&mut want, 0x20, 3, n.len() as u64);
                            want.extend_from_slice(n);
                        }
                    }
                    put_integer(&mut want, 0, 7, v.len() as u64);
                    want.extend_from_slice(v);
                }
            }
            assert_eq!(got, want, "{:?}: {:?}", String::from_utf8_lossy(n), v);
        }
    }

    #[test]
    fn encoder_output_round_trips_and_uses_the_static_table() {
        let want = [
            (":method", "GET"),
            (":scheme", "https"),
            (":authority", "localhost"),
            (":path", "/1k.html"),
            ("user-agent", "rshperf"),
            ("x-custom", "yes"),
            ("accept", "*/*"),
        ];
        let mut out = Vec::new();
        put_prefix(&mut out);
        for (n, v) in want {
            put_field(&mut out, n.as_bytes(), v.as_bytes());
        }
        assert_eq!(&out[..4], &[0, 0, 0xc0 | 17, 0xc0 | 23]);
        let got = fields(&out).expect("round trip");
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        assert_eq!(got, want);
        // Every cut of the section fails cleanly (never a panic, never a field past
        // the cut decoded from garbage).
        for cut in 0..out.len() {
            let _ = fields(&out[..cut]);
        }
    }

    #[test]
    fn huffman_strings_decode_with_the_hpack_decoder() {
        // Literal with literal name, Huffman on both: "custom-key: custom-value"
        // (RFC 7541 C.4.3 codings, under QPACK's 3- and 7-bit prefixes).
        let mut b = vec![0, 0];
        let name = hex("25a8 49e9 5ba9 7d7f");
        let value = hex("25a8 49e9 5bb8 e8b4 bf");
        put_integer(&mut b, 0x28, 3, name.len() as u64);
        b.extend_from_slice(&name);
        put_integer(&mut b, 0x80, 7, value.len() as u64);
        b.extend_from_slice(&value);
        // Static name ":status" (25 is 200) with a Huffman value "302" (C.4 of 7541:
        // 6402).
        b.push(0x50 | 0x0f);
        b.push(25 - 15);
        b.extend_from_slice(&[0x82, 0x64, 0x02]);
        assert_eq!(
            fields(&b).expect("decodes"),
            vec![
                ("custom-key".into(), "custom-value".into()),
                (":status".into(), "302".into())
            ]
        );
    }

    #[test]
    fn repeated_huffman_values_decode_alike_through_the_memo() {
        // One decoder, values that repeat and values of the same coded length that
        // differ: each decodes to itself.
        let mut d = Decoder::new();
        for v in [
            "Wed, 02 Dec 2026 09:27:18 GMT",
            "Wed, 02 Dec 2026 09:27:19 GMT",
        ]
        .iter()
        .cycle()
        .take(6)
        {
            let mut b = vec![0, 0];
            let mut enc = Vec::new();
            huffman::encode(v.as_bytes(), &mut enc);
            // Static name "date" (index 6) with a Huffman value.
            b.push(0x50 | 6);
            put_integer(&mut b, 0x80, 7, enc.len() as u64);
            b.extend_from_slice(&enc);
            let mut got = Vec::new();
            d.decode(&b, 1 << 20, |n, v| {
                got.push((n.to_vec(), v.to_vec()));
            })
            .expect("decodes");
            assert_eq!(got, vec![(b"date".to_vec(), v.as_bytes().to_vec())]);
        }
    }

    #[test]
    fn limits_and_bad_indexes() {
        let mut b = vec![0, 0];
        put_integer(&mut b, 0xc0, 6, 99);
        assert_eq!(
            fields(&b).expect_err("index 99").code,
            code::QPACK_DECOMPRESSION_FAILED
        );
        let mut b = vec![0, 0];
        put_field(&mut b, b"x-big", &[b'a'; 100]);
        let e = Decoder::new().decode(&b, 50, |_, _| {}).expect_err("limit");
        assert_eq!(e.code, code::EXCESSIVE_LOAD);
        assert_eq!(Decoder::new().decode(&b, 105, |_, _| {}), Ok(105));
        // A length running past the section.
        assert!(fields(&[0, 0, 0x5f, 0x00, 0x7f, 0x80, 0x01]).is_err());
    }

    #[test]
    fn static_table_spot_checks() {
        assert_eq!(STATIC[0], (":authority", ""));
        assert_eq!(STATIC[17], (":method", "GET"));
        assert_eq!(STATIC[25], (":status", "200"));
        assert_eq!(STATIC[63], (":status", "100"));
        assert_eq!(STATIC[98], ("x-frame-options", "sameorigin"));
    }
}
