//! Tests of the HPACK decoder and primitive encodings (`hpack.rs`): RFC 7541
//! Appendix C examples, integer round trips, hostile blocks, the encoder's output, the
//! memoized Huffman strings, and a dynamic table that stays bounded under churn.

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
