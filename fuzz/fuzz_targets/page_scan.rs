//! Fuzz target: the `--wsesspage` reply scan (`rshperf::wire::http::html::PageScan`) and the
//! resolution of what it finds (`rshperf::model::workload::page::resolve`).
//!
//! Input layout: bytes 0..2 = split point (little-endian, taken modulo the data length
//! + 1), the rest = the body of a `200 text/html` reply. The body is scanned three
//! ways: whole, cut in two at the split point, and one byte at a time. Every way must
//! find the same references (at most `MAX_REFS`, each at most `MAX_REF` bytes);
//! resolving each against `/dir/page.html` must give a request-target of printable
//! ASCII starting with `/`, or a reason to skip it. Nothing may panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rshperf::wire::http::html::{PageScan, MAX_REF, MAX_REFS};
use rshperf::model::workload::page::{resolve, Origin};

const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";

fn scan(body: &[u8], cuts: &[usize]) -> Vec<String> {
    let mut p = PageScan::default();
    p.header(HEAD);
    let mut from = 0;
    for &c in cuts.iter().chain(std::iter::once(&body.len())) {
        p.body(1, &body[from..c]);
        from = c;
    }
    p.end_reply(1);
    let mut out = Vec::new();
    p.take(1, |r| out.push(r.to_string()));
    out
}

fuzz_target!(|input: &[u8]| {
    if input.len() < 2 {
        return;
    }
    let body = &input[2..];
    let split = usize::from(u16::from_le_bytes([input[0], input[1]])) % (body.len() + 1);
    let whole = scan(body, &[]);
    assert_eq!(scan(body, &[split]), whole);
    let ones: Vec<usize> = (1..body.len()).collect();
    assert_eq!(scan(body, &ones), whole);
    assert!(whole.len() <= MAX_REFS);
    let origin = Origin::new(&["127.0.0.1"], 8080);
    let (mut out, mut scratch) = (String::new(), String::new());
    for r in &whole {
        assert!(r.len() <= MAX_REF);
        if resolve(r, "/dir/page.html", &origin, &mut out, &mut scratch).is_ok() {
            assert!(out.starts_with('/'), "{r:?} -> {out:?}");
            assert!(out.bytes().all(|b| b.is_ascii_graphic()), "{r:?} -> {out:?}");
        }
    }
});
