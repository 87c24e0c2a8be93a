//! How the `Stats` fields that JSON cannot carry as they are get serialized, as
//! `#[serde(with = …)]` modules: latency histograms (HdrHistogram V2, uncompressed,
//! base64), the 1-ms lifetime bins (sparse pairs), a 128-bit sum (decimal string) and
//! "no value yet" extremes (`null`).
//!
//! Owns checking what it reads, because `rshperf merge` reads files anyone can write:
//! a histogram must have exactly the bounds rshperf records with (so adding it can
//! neither fail nor saturate), a claimed payload length must match the data (no
//! allocation from a corrupt header), bins must be in range and ascending. Every
//! problem is a serde error with a message saying what is wrong. Layout documented in
//! docs/json.md §2.4–2.5. Uses the `hdrhistogram` crate's V2 codec and `base64`.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer as V2Deserializer, Serializer as _, V2Serializer};
use hdrhistogram::Histogram;

use super::{HIST_LOW_US, HIST_MAX_US, HIST_SIGFIG};

/// Cookie of the uncompressed V2 encoding.
const V2_COOKIE: u32 = 0x1c84_9313;

/// Bytes before the counts: cookie, payload length, normalizing offset, digits, low,
/// high, integer-to-double ratio.
const V2_HEADER: usize = 40;

/// HdrHistogram V2 (uncompressed) serialization, base64 (standard alphabet, padded).
pub(crate) fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut bytes)
        .expect("V2 serialization into a Vec cannot fail on a 64-bit usize");
    BASE64.encode(bytes)
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4-byte slice"))
}

fn be_u64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8-byte slice"))
}

/// The reverse of `encode_histogram`, for histograms rshperf wrote: anything else (other
/// bounds, compressed, a payload length that does not match, counts whose total
/// overflows) is refused.
pub(crate) fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = BASE64
        .decode(text)
        .map_err(|e| format!("bad base64: {e}"))?;
    let bad = |what: &str| format!("bad HdrHistogram V2 data: {what}");
    if bytes.len() < V2_HEADER || be_u32(&bytes, 0) != V2_COOKIE {
        return Err(bad("not an uncompressed V2 histogram"));
    }
    if usize::try_from(be_u32(&bytes, 4)).ok() != Some(bytes.len() - V2_HEADER) {
        return Err(bad("payload length does not match the data"));
    }
    let (digits, low, high) = (be_u32(&bytes, 12), be_u64(&bytes, 16), be_u64(&bytes, 24));
    if (low, high, digits) != (HIST_LOW_US, HIST_MAX_US, u32::from(HIST_SIGFIG)) {
        return Err(bad(&format!(
            "bounds {low}..{high} with {digits} digits (rshperf records \
             {HIST_LOW_US}..{HIST_MAX_US} with {HIST_SIGFIG})"
        )));
    }
    // Nine 0xFF bytes encode the ZigZag value of i64::MIN, which the decoder negates
    // (an overflow); no count rshperf can write needs them.
    if bytes[V2_HEADER..].windows(9).any(|w| w == [0xff; 9]) {
        return Err(bad("count out of range"));
    }
    let h: Histogram<u64> = V2Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| bad(&format!("{e:?}")))?;
    // The decoder saturates the total; a total that does not add up is refused.
    let total = h
        .iter_recorded()
        .try_fold(0u64, |t, v| t.checked_add(v.count_at_value()));
    if total != Some(h.len()) {
        return Err(bad("counts overflow 64 bits"));
    }
    Ok(h)
}

/// `#[serde(with = "serial::histogram")]`: a histogram as a base64 V2 string.
pub(crate) mod histogram {
    use hdrhistogram::Histogram;
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

    /// Writes `encode_histogram(h)`.
    pub(crate) fn serialize<S: Serializer>(h: &Histogram<u64>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::encode_histogram(h))
    }

    /// Reads and checks a histogram (`decode_histogram`).
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Histogram<u64>, D::Error> {
        let text = String::deserialize(d)?;
        super::decode_histogram(&text).map_err(D::Error::custom)
    }
}

/// `#[serde(with = "serial::sparse_bins")]`: the dense 1-ms lifetime bins as
/// `[[bin, count], …]` for the non-zero bins, ascending.
pub(crate) mod sparse_bins {
    use serde::ser::SerializeSeq;
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

    use crate::model::stats::LIFETIME_BINS;

    /// Writes the non-zero bins as pairs.
    pub(crate) fn serialize<S: Serializer>(bins: &[u64], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for (i, &c) in bins.iter().enumerate().filter(|&(_, &c)| c != 0) {
            seq.serialize_element(&(i, c))?;
        }
        seq.end()
    }

    /// Reads pairs back into `LIFETIME_BINS + 1` dense bins; a bin out of range or not
    /// above the one before is an error.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        let pairs = Vec::<(u64, u64)>::deserialize(d)?;
        let mut bins = vec![0; LIFETIME_BINS + 1];
        let mut next = 0u64;
        for (bin, count) in pairs {
            let slot = usize::try_from(bin)
                .ok()
                .filter(|&i| i <= LIFETIME_BINS)
                .ok_or_else(|| {
                    D::Error::custom(format!("bin {bin} out of range (0..={LIFETIME_BINS})"))
                })?;
            if bin < next {
                return Err(D::Error::custom(format!(
                    "bin {bin} is not above the bin before it"
                )));
            }
            bins[slot] = count;
            next = bin + 1;
        }
        Ok(bins)
    }
}

/// `#[serde(with = "serial::decimal_u128")]`: a 128-bit sum as a decimal string (JSON
/// readers do not all take integers beyond 64 bits).
pub(crate) mod decimal_u128 {
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

    /// Writes the decimal digits as a string.
    pub(crate) fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }

    /// Reads a string of decimal digits.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        let text = String::deserialize(d)?;
        text.parse()
            .map_err(|_| D::Error::custom(format!("{text:?} is not a decimal string")))
    }
}

/// `#[serde(with = "serial::max_is_null")]`: a minimum that is `u64::MAX` until a first
/// value arrives, written `null` in that state.
pub(crate) mod max_is_null {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `null` for `u64::MAX`, else the number.
    pub(crate) fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        match *v {
            u64::MAX => s.serialize_none(),
            n => s.serialize_some(&n),
        }
    }

    /// Reads `null` as `u64::MAX`.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::new_histogram;

    #[test]
    fn histograms_round_trip_and_foreign_ones_are_refused() {
        let mut h = new_histogram();
        for v in [1, 90, 1_000, 3_600_000_000] {
            h.record_n(v, v % 7 + 1).expect("in range");
        }
        let text = encode_histogram(&h);
        assert_eq!(decode_histogram(&text), Ok(h.clone()));
        let mut bytes = BASE64.decode(&text).expect("base64");
        assert_eq!(bytes[..4], [0x1c, 0x84, 0x93, 0x13]);

        let other = Histogram::<u64>::new_with_bounds(1, 1 << 40, 3).expect("bounds");
        let e = decode_histogram(&encode_histogram(&other)).expect_err("other bounds");
        assert_eq!(
            e,
            "bad HdrHistogram V2 data: bounds 1..1099511627776 with 3 digits (rshperf \
             records 1..3600000000 with 3)"
        );
        // A claimed payload of 4 GiB is refused before anything is allocated.
        bytes[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        let e = decode_histogram(&BASE64.encode(&bytes)).expect_err("length");
        assert_eq!(
            e,
            "bad HdrHistogram V2 data: payload length does not match the data"
        );
        assert!(decode_histogram("!!")
            .expect_err("b64")
            .starts_with("bad base64"));
        assert!(decode_histogram("AAAA")
            .expect_err("short")
            .contains("not an uncompressed"));
    }

    #[test]
    fn counts_beyond_64_bits_are_refused() {
        // Four buckets of 2^62 each: every count fits, their total does not (the
        // decoder would saturate it). The payload is built by hand.
        let mut h = new_histogram();
        h.record_n(1, 1).expect("in range");
        let mut bytes = BASE64.decode(encode_histogram(&h)).expect("base64");
        bytes.truncate(V2_HEADER);
        // ZigZag(2^62) = 2^63: eight 0x80 bytes, then 0x80 as the ninth (full) byte.
        let big: [u8; 9] = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80];
        bytes.extend_from_slice(&[0x01]); // ZigZag(-1): skip one zero bucket
        for _ in 0..4 {
            bytes.extend_from_slice(&big);
        }
        let len = u32::try_from(bytes.len() - V2_HEADER).expect("small");
        bytes[4..8].copy_from_slice(&len.to_be_bytes());
        let e = decode_histogram(&BASE64.encode(&bytes)).expect_err("overflow");
        assert_eq!(e, "bad HdrHistogram V2 data: counts overflow 64 bits");
        // i64::MIN as a ZigZag value (nine 0xFF) is refused before decoding.
        bytes.truncate(V2_HEADER);
        bytes.extend_from_slice(&[0xff; 9]);
        bytes[4..8].copy_from_slice(&9u32.to_be_bytes());
        let e = decode_histogram(&BASE64.encode(&bytes)).expect_err("i64::MIN");
        assert_eq!(e, "bad HdrHistogram V2 data: count out of range");
    }
}
