//! QUIC variable-length integers (RFC 9000 §16), as HTTP/3 frames and stream types
//! carry them: encoding, and decoding from the front of a byte slice. Hand-written
//! (a dozen lines) rather than taken from quinn-proto, whose codec wants `bytes`
//! buffers; used by `frame` and `conn`.

/// Largest value a varint holds (2^62 − 1).
pub(crate) const MAX: u64 = (1 << 62) - 1;

/// Bytes `v` takes (1, 2, 4 or 8); `v` must be at most `MAX`.
pub(crate) fn len(v: u64) -> usize {
    match v {
        0..=63 => 1,
        64..=16_383 => 2,
        16_384..=1_073_741_823 => 4,
        _ => 8,
    }
}

/// Appends `v` (saturated at `MAX`).
pub(crate) fn put(out: &mut Vec<u8>, v: u64) {
    let v = v.min(MAX);
    match len(v) {
        1 => out.push(v as u8),
        2 => out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
        4 => out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes()),
        _ => out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

/// Bytes the varint starting with `first` takes.
pub(crate) fn len_of_first(first: u8) -> usize {
    1 << (first >> 6)
}

/// Decodes the varint at the front of `b`: its value and length, or None when `b`
/// holds only part of it.
pub(crate) fn get(b: &[u8]) -> Option<(u64, usize)> {
    let first = *b.first()?;
    let n = len_of_first(first);
    let bytes = b.get(..n)?;
    let mut v = u64::from(first & 0x3f);
    for &x in &bytes[1..] {
        v = (v << 8) | u64::from(x);
    }
    Some((v, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc9000_examples_decode_and_encode() {
        let cases: [(&[u8], u64); 4] = [
            (
                &[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c],
                151_288_809_941_952_652,
            ),
            (&[0x9d, 0x7f, 0x3e, 0x7d], 494_878_333),
            (&[0x7b, 0xbd], 15_293),
            (&[0x25], 37),
        ];
        for (bytes, v) in cases {
            assert_eq!(get(bytes), Some((v, bytes.len())));
            let mut out = Vec::new();
            put(&mut out, v);
            assert_eq!(out, bytes);
            for cut in 0..bytes.len() {
                assert_eq!(get(&bytes[..cut]), None, "cut at {cut}");
            }
        }
        // A non-minimal encoding decodes to the same value.
        assert_eq!(get(&[0x40, 0x25]), Some((37, 2)));
    }

    #[test]
    fn boundaries_round_trip() {
        for v in [0, 63, 64, 16_383, 16_384, 1_073_741_823, 1_073_741_824, MAX] {
            let mut out = Vec::new();
            put(&mut out, v);
            assert_eq!(out.len(), len(v));
            assert_eq!(get(&out), Some((v, out.len())));
        }
        let mut out = Vec::new();
        put(&mut out, u64::MAX);
        assert_eq!(get(&out), Some((MAX, 8)));
    }
}
