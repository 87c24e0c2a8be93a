//! Fuzz target: the HTTP/2 client connection (`rshperf::wire::http2::conn::H2`: frame
//! reader, HPACK decoder, stream and flow-control state) and the HPACK and Huffman
//! decoders on their own.
//!
//! Input layout: byte 0 = streams the client opens before the server speaks
//! after an empty SETTINGS from the server (1 + byte % 8; bit 7: they carry a
//! 70,000-byte body, so flow control holds some back), bytes 1..3 = split point (little-endian, modulo the data length + 1), the
//! rest = bytes received from the server. The data is fed three ways: whole, cut in
//! two at the split point, and one byte at a time. Every way must give the same
//! events, the same result (or error) and the same bytes written back; nothing may
//! panic. The data is also decoded as one HPACK header block and as a Huffman string,
//! and Huffman-encoded and decoded back.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rshperf::wire::http2::conn::{Events, Reply, H2};
use rshperf::wire::http2::{hpack, huffman};

#[derive(Default)]
struct Log(Vec<String>);

impl Events<u32> for Log {
    fn written(&mut self, tag: &mut u32, bytes: u64) {
        self.0.push(format!("written {tag} {bytes}"));
    }
    fn status(&mut self, tag: &mut u32, status: u16) {
        self.0.push(format!("status {tag} {status}"));
    }
    fn field(&mut self, tag: &u32, name: &[u8], value: &[u8]) {
        self.0.push(format!("field {tag} {name:?} {value:?}"));
    }
    fn data(&mut self, tag: &u32, bytes: &[u8]) {
        // Pieces depend on the split: one line per byte.
        for b in bytes {
            self.0.push(format!("data {tag} {b}"));
        }
    }
    fn done(&mut self, tag: u32, r: &Reply) {
        self.0.push(format!("done {tag} {r:?}"));
    }
    fn reset(&mut self, tag: u32, code: u32) {
        self.0.push(format!("reset {tag} {code}"));
    }
    fn refused(&mut self, tag: u32) {
        self.0.push(format!("refused {tag}"));
    }
}

type Outcome = (Vec<String>, Vec<u8>, Result<(), (u32, &'static str)>, usize);

fn run(streams: u32, body: bool, data: &[u8], cuts: &[usize]) -> Outcome {
    let mut h: H2<u32> = H2::new();
    let mut out = Vec::new();
    h.start(&mut out);
    // The server's empty SETTINGS first (streams wait for it), then the streams.
    let settings = [0, 0, 0, 4, 0, 0, 0, 0, 0];
    h.on_bytes(&settings, &mut out, &mut Log::default())
        .expect("an empty SETTINGS frame is valid");
    let big = vec![b'b'; if body { 70_000 } else { 0 }];
    for tag in 0..streams {
        if h.can_open() {
            h.open(tag, &[0x82, 0x84], &big, &mut out);
        }
    }
    out.clear();
    let mut log = Log::default();
    let mut start = 0;
    for &end in cuts.iter().chain(std::iter::once(&data.len())) {
        if let Err(e) = h.on_bytes(&data[start..end], &mut out, &mut log) {
            return (log.0, out, Err((e.code, e.reason)), h.in_flight());
        }
        start = end;
    }
    (log.0, out, Ok(()), h.in_flight())
}

fuzz_target!(|input: &[u8]| {
    if input.len() < 3 {
        return;
    }
    let streams = 1 + u32::from(input[0] % 8);
    let body = input[0] & 0x80 != 0;
    let data = &input[3..];
    let split = usize::from(u16::from_le_bytes([input[1], input[2]])) % (data.len() + 1);
    let whole = run(streams, body, data, &[]);
    assert_eq!(run(streams, body, data, &[split]), whole, "split at {split}");
    let every: Vec<usize> = (1..data.len()).collect();
    assert_eq!(run(streams, body, data, &every), whole, "byte by byte");

    let mut d = hpack::Decoder::new(4096);
    let _ = d.decode(data, |_, _| {});
    assert!(d.table_size() <= 4096);
    let mut out = Vec::new();
    let _ = huffman::decode(data, &mut out);
    out.clear();
    huffman::encode(data, &mut out);
    assert_eq!(out.len(), huffman::encoded_len(data));
    let mut back = Vec::new();
    huffman::decode(&out, &mut back).expect("own encoding decodes");
    assert_eq!(back, data);
});
