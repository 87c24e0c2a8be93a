//! Fuzz target: the HTTP/3 frame reader (`rshperf::wire::http3::frame::Reader`) and
//! the QPACK decoder (`rshperf::wire::http3::qpack::Decoder`, Huffman included).
//!
//! Input layout: bytes 0..2 = split point (little-endian, modulo the data length + 1),
//! the rest = a stream's bytes. The data is cut into frames three ways: whole, in two
//! at the split point, and one byte at a time; every way must give the same frames
//! (DATA pieces joined) and the same result or error. Each HEADERS payload, and the
//! data itself, is decoded as a QPACK field section: nothing may panic, the decoded
//! size must not pass the limit, and the fields it gives, encoded again by the
//! client's encoder, must decode to the same fields.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rshperf::wire::http3::frame::{kind, Item, Reader};
use rshperf::wire::http3::qpack::Decoder;

/// Frames of `data` fed in pieces cut at `cuts`, and how it ended.
fn frames(data: &[u8], cuts: &[usize]) -> (Vec<(u64, Vec<u8>)>, Result<bool, u64>) {
    let mut r = Reader::new(4096);
    let mut out = Vec::new();
    let mut piece = Vec::new();
    let mut start = 0;
    for &end in cuts.iter().chain(std::iter::once(&data.len())) {
        let mut input = &data[start..end];
        start = end;
        loop {
            match r.next(&mut input) {
                Ok(Some(Item::Frame(k, p))) => out.push((k, p.to_vec())),
                Ok(Some(Item::Data { bytes, end })) => {
                    piece.extend_from_slice(bytes);
                    if end {
                        out.push((kind::DATA, std::mem::take(&mut piece)));
                    }
                }
                Ok(None) => break,
                Err(e) => return (out, Err(e.code)),
            }
        }
    }
    (out, Ok(r.idle()))
}

/// Decodes `section` with a limit; checks the limit and the round trip.
fn section(section: &[u8]) {
    let limit = 2048;
    let mut fields: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let Ok(size) = Decoder::new().decode(section, limit, |n, v| fields.push((n.to_vec(), v.to_vec())))
    else {
        return;
    };
    assert!(size <= limit);
    let sum: usize = fields.iter().map(|(n, v)| n.len() + v.len()).sum();
    assert_eq!(size, sum as u64);
    let mut again = Vec::new();
    rshperf::wire::http3::qpack::put_prefix(&mut again);
    for (n, v) in &fields {
        rshperf::wire::http3::qpack::put_field(&mut again, n, v);
    }
    let mut back: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    Decoder::new()
        .decode(&again, u64::MAX, |n, v| back.push((n.to_vec(), v.to_vec())))
        .expect("own encoding decodes");
    assert_eq!(back, fields);
}

fuzz_target!(|input: &[u8]| {
    if input.len() < 2 {
        return;
    }
    let data = &input[2..];
    let split = usize::from(u16::from_le_bytes([input[0], input[1]])) % (data.len() + 1);
    let whole = frames(data, &[]);
    assert_eq!(frames(data, &[split]), whole, "split at {split}");
    let every: Vec<usize> = (1..data.len()).collect();
    assert_eq!(frames(data, &every), whole, "byte by byte");
    for (k, p) in &whole.0 {
        if *k == kind::HEADERS {
            section(p);
        }
    }
    section(data);
});
