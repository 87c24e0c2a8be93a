//! HPACK's Huffman code (RFC 7541 §5.2, appendix B): decoding with a 4-bit state
//! machine and encoding.
//!
//! Hand-written rather than taken from a crate (see `hpack.rs` for why): the code is
//! canonical, so the table below holds only each symbol's code length, from which the
//! codes are rebuilt; a unit test checks landmark codes of appendix B and the
//! appendix C examples in `hpack.rs` check whole strings. The decoder walks the code
//! tree a nibble at a time through a table of 256 states × 16 nibbles built once
//! (`OnceLock`), nghttp2's approach: two lookups per input byte and no allocation
//! beyond the caller's output buffer. `Memo` keeps a connection's recent strings
//! and their decodings, since servers repeat their header values. Used by
//! `hpack::Decoder` and `http3::qpack::Decoder` (and by tests and the fuzz target
//! through `encode`).

use std::sync::OnceLock;

/// Code length in bits of symbols 0–255 and EOS (256), RFC 7541 appendix B.
const LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28,
    28, 28, 28, 28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5,
    5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6,
    6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22,
    23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22,
    21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20,
    22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19,
    21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22,
    22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
];

/// The end-of-string symbol.
const EOS: u16 = 256;
/// No symbol emitted by a transition.
const NONE: u16 = u16::MAX;

/// One transition of the nibble machine.
#[derive(Debug, Clone, Copy)]
struct Step {
    /// State after the nibble.
    next: u8,
    /// Symbol completed within the nibble (at most one: the shortest code has 5 bits).
    sym: u16,
    /// The nibble completes EOS or leaves the tree: the string is malformed.
    fail: bool,
}

/// The decoding machine and the codes for encoding.
struct Tables {
    steps: Vec<[Step; 16]>,
    /// States where the string may end: the root, or an all-ones path of at most
    /// 7 bits (padding is a prefix of EOS shorter than a byte, §5.2).
    accept: Vec<bool>,
    /// (code, length) of each symbol, for `encode`.
    codes: [(u32, u8); 257],
}

#[derive(Debug, Clone, Copy)]
enum Child {
    Empty,
    Node(usize),
    Leaf(u16),
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(build)
}

/// Rebuilds the canonical codes from the lengths, the tree from the codes, and the
/// nibble machine from the tree.
fn build() -> Tables {
    let mut order: Vec<u16> = (0..257).collect();
    order.sort_by_key(|&s| (LENGTHS[usize::from(s)], s));
    let mut codes = [(0u32, 0u8); 257];
    let mut code = 0u32;
    let mut prev = 0u8;
    for (k, &s) in order.iter().enumerate() {
        let len = LENGTHS[usize::from(s)];
        if k > 0 {
            code = (code + 1) << (len - prev);
        }
        prev = len;
        codes[usize::from(s)] = (code, len);
    }
    // children[node][bit]; ones[node]: depth if the path to it is all ones.
    let mut children: Vec<[Child; 2]> = vec![[Child::Empty; 2]];
    let mut ones: Vec<Option<u8>> = vec![Some(0)];
    for (s, &(code, len)) in codes.iter().enumerate() {
        let mut node = 0;
        for i in (0..len).rev() {
            let bit = ((code >> i) & 1) as usize;
            if i == 0 {
                children[node][bit] = Child::Leaf(s as u16);
                break;
            }
            node = match children[node][bit] {
                Child::Node(n) => n,
                _ => {
                    let n = children.len();
                    children.push([Child::Empty; 2]);
                    ones.push(if bit == 1 {
                        ones[node].map(|d| d + 1)
                    } else {
                        None
                    });
                    children[node][bit] = Child::Node(n);
                    n
                }
            };
        }
    }
    let steps = (0..children.len())
        .map(|state| {
            let mut row = [Step {
                next: 0,
                sym: NONE,
                fail: true,
            }; 16];
            for (nibble, slot) in row.iter_mut().enumerate() {
                let mut cur = state;
                let mut sym = NONE;
                let mut fail = false;
                for i in (0..4).rev() {
                    match children[cur][(nibble >> i) & 1] {
                        Child::Node(n) => cur = n,
                        Child::Leaf(EOS) | Child::Empty => {
                            fail = true;
                            break;
                        }
                        Child::Leaf(s) => {
                            sym = s;
                            cur = 0;
                        }
                    }
                }
                *slot = Step {
                    next: u8::try_from(cur).unwrap_or(0),
                    sym,
                    fail,
                };
            }
            row
        })
        .collect();
    let accept = ones.iter().map(|d| d.is_some_and(|d| d <= 7)).collect();
    Tables {
        steps,
        accept,
        codes,
    }
}

/// A Huffman-coded string that is not valid (EOS inside, or bad padding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HuffmanError;

/// Appends the decoding of `src` to `out`.
pub fn decode(src: &[u8], out: &mut Vec<u8>) -> Result<(), HuffmanError> {
    let t = tables();
    let mut state = 0usize;
    for &b in src {
        for nibble in [b >> 4, b & 0x0f] {
            let step = t.steps[state][usize::from(nibble)];
            if step.fail {
                return Err(HuffmanError);
            }
            if step.sym != NONE {
                out.push(step.sym as u8);
            }
            state = usize::from(step.next);
        }
    }
    if t.accept[state] {
        Ok(())
    } else {
        Err(HuffmanError)
    }
}

/// Length in bytes of the Huffman coding of `src`.
pub fn encoded_len(src: &[u8]) -> usize {
    let t = tables();
    let bits: usize = src
        .iter()
        .map(|&b| usize::from(t.codes[usize::from(b)].1))
        .sum();
    bits.div_ceil(8)
}

/// Appends the Huffman coding of `src` to `out` (padded with ones).
pub fn encode(src: &[u8], out: &mut Vec<u8>) {
    let t = tables();
    let mut acc: u64 = 0;
    let mut n: u32 = 0;
    for &b in src {
        let (code, len) = t.codes[usize::from(b)];
        acc = (acc << len) | u64::from(code);
        n += u32::from(len);
        while n >= 8 {
            n -= 8;
            out.push((acc >> n) as u8);
        }
    }
    if n > 0 {
        out.push(((acc << (8 - n)) | (0xff >> n)) as u8);
    }
}

/// Huffman strings decoded lately: servers send the same values in every reply
/// (`server`, `date`, `content-type`, `last-modified`, …), so a hit turns a decode
/// into a compare and a copy (`perf` showed the decode as the client's top symbol
/// before, with HPACK and with QPACK). Entries index one arena, dropped whole when
/// full. One per connection's header decoder.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    arena: Vec<u8>,
    /// (encoded offset, encoded length, decoded offset, decoded length).
    entries: Vec<(usize, usize, usize, usize)>,
    next: usize,
}

/// Entries kept by `Memo`.
const MEMO_ENTRIES: usize = 16;
/// Longest encoded string memoized.
const MEMO_MAX: usize = 256;
/// Arena size at which `Memo` starts over.
const MEMO_ARENA: usize = 16 * 1024;

impl Memo {
    /// Appends the decoding of `raw` to `out`, as `decode` does.
    pub(crate) fn decode(&mut self, raw: &[u8], out: &mut Vec<u8>) -> Result<(), HuffmanError> {
        if let Some(decoded) = self.get(raw) {
            out.extend_from_slice(decoded);
            return Ok(());
        }
        let s = out.len();
        decode(raw, out)?;
        self.put(raw, &out[s..]);
        Ok(())
    }

    /// Whether the arena is within its bound (tests).
    #[cfg(test)]
    pub(crate) fn bounded(&self) -> bool {
        self.arena.len() <= MEMO_ARENA
    }

    fn get(&self, raw: &[u8]) -> Option<&[u8]> {
        self.entries.iter().find_map(|&(eo, el, d, dl)| {
            (el == raw.len() && self.arena.get(eo..eo + el) == Some(raw))
                .then(|| self.arena.get(d..d + dl))
                .flatten()
        })
    }

    fn put(&mut self, raw: &[u8], decoded: &[u8]) {
        if raw.len() > MEMO_MAX {
            return;
        }
        if self.arena.len() + raw.len() + decoded.len() > MEMO_ARENA {
            self.arena.clear();
            self.entries.clear();
            self.next = 0;
        }
        let eo = self.arena.len();
        self.arena.extend_from_slice(raw);
        let d = self.arena.len();
        self.arena.extend_from_slice(decoded);
        let e = (eo, raw.len(), d, decoded.len());
        if self.entries.len() < MEMO_ENTRIES {
            self.entries.push(e);
        } else {
            self.entries[self.next] = e;
            self.next = (self.next + 1) % MEMO_ENTRIES;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landmark_codes_match_appendix_b() {
        let t = tables();
        assert_eq!(t.codes[usize::from(b'0')], (0x0, 5));
        assert_eq!(t.codes[usize::from(b'a')], (0x3, 5));
        assert_eq!(t.codes[usize::from(b' ')], (0x14, 6));
        assert_eq!(t.codes[0], (0x1ff8, 13));
        assert_eq!(t.codes[255], (0x3ffffee, 26));
        assert_eq!(t.codes[256], (0x3fffffff, 30));
        assert_eq!(t.steps.len(), 256, "256 internal nodes for 257 leaves");
    }

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        let mut enc = Vec::new();
        encode(&all, &mut enc);
        assert_eq!(enc.len(), encoded_len(&all));
        let mut dec = Vec::new();
        decode(&enc, &mut dec).expect("valid coding");
        assert_eq!(dec, all);
    }

    #[test]
    fn random_strings_round_trip() {
        // A fixed linear congruential sequence: strings of 0 to 40 bytes, text-like
        // (short codes) and arbitrary (long codes) mixed.
        let mut x: u32 = 12345;
        let mut next = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            x >> 16
        };
        for _ in 0..2000 {
            let n = next() % 41;
            let s: Vec<u8> = (0..n)
                .map(|_| {
                    let r = next();
                    if r % 4 == 0 {
                        r as u8
                    } else {
                        b' ' + (r % 95) as u8
                    }
                })
                .collect();
            let mut enc = Vec::new();
            encode(&s, &mut enc);
            let mut dec = Vec::new();
            decode(&enc, &mut dec).expect("valid coding");
            assert_eq!(dec, s);
        }
    }

    #[test]
    fn each_symbol_decodes_before_any_valid_padding_and_not_before_a_byte_of_ones() {
        let t = tables();
        for s in 0..=255u8 {
            let (code, len) = t.codes[usize::from(s)];
            let len = u32::from(len);
            // The code, then ones to the byte boundary (valid padding), or a whole
            // byte of ones more (padding longer than 7 bits).
            let to_byte = len.next_multiple_of(8) - len;
            for (pad, ok) in [(to_byte, true), (to_byte + 8, false)] {
                let bits = len + pad;
                let v = (u64::from(code) << pad) | ((1u64 << pad) - 1);
                let bytes: Vec<u8> = (0..bits / 8).rev().map(|k| (v >> (8 * k)) as u8).collect();
                let mut out = Vec::new();
                let r = decode(&bytes, &mut out);
                if ok {
                    assert_eq!((r, out.as_slice()), (Ok(()), &[s][..]), "symbol {s}");
                } else {
                    assert_eq!(r, Err(HuffmanError), "symbol {s} and {pad} ones");
                }
            }
        }
    }

    #[test]
    fn bad_padding_and_eos_are_errors() {
        let mut out = Vec::new();
        // 'a' (00011) + 3 padding ones: valid.
        assert_eq!(decode(&[0x1f], &mut out), Ok(()));
        assert_eq!(out, b"a");
        // 'a' padded with zeros: invalid padding.
        assert_eq!(decode(&[0x18], &mut out), Err(HuffmanError));
        // A whole byte of ones after a symbol boundary: padding longer than 7 bits.
        assert_eq!(decode(&[0x1f, 0xff], &mut out), Err(HuffmanError));
        // EOS itself (30 ones) inside the string.
        assert_eq!(
            decode(&[0xff, 0xff, 0xff, 0xfc], &mut out),
            Err(HuffmanError)
        );
        out.clear();
        assert_eq!(decode(&[], &mut out), Ok(()));
        assert!(out.is_empty());
    }
}
