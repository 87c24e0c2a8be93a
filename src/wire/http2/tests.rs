//! Unit tests of `http2::conn::H2`: a scripted server's bytes fed at every split, the
//! events and the client's answers compared with the expected ones.

use super::*;
use crate::wire::http2::hpack;

/// Records events as text lines.
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
        let (n, v) = (
            String::from_utf8_lossy(name),
            String::from_utf8_lossy(value),
        );
        self.0.push(format!("field {tag} {n}={v}"));
    }
    fn data(&mut self, tag: &u32, bytes: &[u8]) {
        // Pieces vary with the split: log one line per byte so logs compare.
        for b in bytes {
            self.0.push(format!("data {tag} {}", *b as char));
        }
    }
    fn done(&mut self, tag: u32, r: &Reply) {
        self.0.push(format!(
            "done {tag} {} h{} w{} c{} f{}",
            r.status, r.header_bytes, r.header_wire, r.content_bytes, r.footer_bytes
        ));
    }
    fn reset(&mut self, tag: u32, code: u32) {
        self.0.push(format!("reset {tag} {code}"));
    }
    fn refused(&mut self, tag: u32) {
        self.0.push(format!("refused {tag}"));
    }
}

fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
    let mut b = Vec::new();
    frame::put_settings(&mut b, pairs);
    b
}

fn headers(stream: u32, flags: u8, fields: &[(&str, &str)]) -> Vec<u8> {
    let mut block = Vec::new();
    for (n, v) in fields {
        hpack::put_field(&mut block, n.as_bytes(), v.as_bytes());
    }
    let mut b = Vec::new();
    frame::put_head(
        &mut b,
        block.len(),
        kind::HEADERS,
        flags | flag::END_HEADERS,
        stream,
    );
    b.extend_from_slice(&block);
    b
}

fn data(stream: u32, flags: u8, bytes: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    frame::put_head(&mut b, bytes.len(), kind::DATA, flags, stream);
    b.extend_from_slice(bytes);
    b
}

/// A client that got the server's (empty) SETTINGS and opened `n` GET streams (tags
/// 1..=n); returns it and its output.
fn client(n: u32) -> (H2<u32>, Vec<u8>) {
    let mut h = H2::new();
    let mut out = Vec::new();
    h.start(&mut out);
    assert!(!h.can_open(), "no stream before the server's SETTINGS");
    h.on_bytes(&settings(&[]), &mut out, &mut Log::default())
        .expect("valid");
    let mut block = Vec::new();
    hpack::put_field(&mut block, b":method", b"GET");
    hpack::put_field(&mut block, b":path", b"/");
    for tag in 1..=n {
        assert!(h.can_open());
        h.open(tag, &block, b"", &mut out);
    }
    (h, out)
}

/// Feeds `server` to a fresh client with `n` streams, cut at `cuts`; returns the
/// event log, the client's output after the requests, and the result.
fn run(n: u32, server: &[u8], cuts: &[usize]) -> (Vec<String>, Vec<u8>, Result<(), H2Error>) {
    let (mut h, _) = client(n);
    let mut log = Log::default();
    let mut out = Vec::new();
    let mut start = 0;
    for &end in cuts.iter().chain(std::iter::once(&server.len())) {
        if let Err(e) = h.on_bytes(&server[start..end], &mut out, &mut log) {
            return (log.0, out, Err(e));
        }
        start = end;
    }
    (log.0, out, Ok(()))
}

/// `run` whole, then at every single cut and byte by byte: all must agree.
fn run_all_splits(n: u32, server: &[u8]) -> (Vec<String>, Vec<u8>, Result<(), H2Error>) {
    let whole = run(n, server, &[]);
    for a in 0..=server.len() {
        assert_eq!(run(n, server, &[a]), whole, "cut at {a}");
    }
    let every: Vec<usize> = (1..server.len()).collect();
    assert_eq!(run(n, server, &every), whole, "byte by byte");
    whole
}

#[test]
fn preface_settings_and_requests() {
    let (h, out) = client(1);
    assert!(out.starts_with(frame::PREFACE));
    let rest = &out[frame::PREFACE.len()..];
    let head = Head::parse(rest[..9].try_into().expect("9 bytes"));
    assert_eq!((head.kind, head.len, head.stream), (kind::SETTINGS, 18, 0));
    // SETTINGS, WINDOW_UPDATE, the ack of the server's SETTINGS, then HEADERS of
    // stream 1 with END_STREAM|END_HEADERS.
    let wu = Head::parse(rest[27..36].try_into().expect("9 bytes"));
    assert_eq!((wu.kind, wu.len), (kind::WINDOW_UPDATE, 4));
    assert_eq!(rest[40..49], [0, 0, 0, 4, 1, 0, 0, 0, 0]);
    let hd = Head::parse(rest[49..58].try_into().expect("9 bytes"));
    assert_eq!(
        (hd.kind, hd.flags, hd.stream, hd.len),
        (kind::HEADERS, flag::END_STREAM | flag::END_HEADERS, 1, 2)
    );
    assert_eq!(&rest[58..], [0x82, 0x84]);
    assert_eq!(h.in_flight(), 1);
}

#[test]
fn a_reply_at_every_split() {
    let mut s = settings(&[(setting::MAX_CONCURRENT_STREAMS, 100)]);
    s.extend(headers(
        1,
        0,
        &[(":status", "200"), ("content-length", "5")],
    ));
    s.extend(data(1, 0, b"hel"));
    s.extend(data(1, flag::END_STREAM, b"lo"));
    let (log, out, r) = run_all_splits(1, &s);
    assert_eq!(r, Ok(()));
    assert_eq!(
        log,
        [
            "field 1 :status=200",
            "field 1 content-length=5",
            "field 1 =",
            "status 1 200",
            "data 1 h",
            "data 1 e",
            "data 1 l",
            "data 1 l",
            "data 1 o",
            "written 1 11",
            "done 1 200 h25 w5 c5 f0",
        ]
    );
    // The only answer: the SETTINGS ack.
    assert_eq!(out, [0, 0, 0, 4, 1, 0, 0, 0, 0]);
}

#[test]
fn continuation_padding_priority_interim_and_trailers() {
    let mut block = Vec::new();
    hpack::put_field(&mut block, b":status", b"200");
    hpack::put_literal(&mut block, b"server", b"test");
    let mut interim = Vec::new();
    hpack::put_literal(&mut interim, b":status", b"103");
    let mut s = settings(&[]);
    s.extend(headers(1, 0, &[(":status", "103")]));
    // HEADERS (padded, with priority) carrying 2 bytes, then two CONTINUATIONs.
    frame::put_head(
        &mut s,
        1 + 5 + 2 + 3,
        kind::HEADERS,
        flag::PADDED | flag::PRIORITY,
        1,
    );
    s.push(3);
    s.extend_from_slice(&[0, 0, 0, 0, 16]);
    s.extend_from_slice(&block[..2]);
    s.extend_from_slice(&[0, 0, 0]);
    frame::put_head(&mut s, 3, kind::CONTINUATION, 0, 1);
    s.extend_from_slice(&block[2..5]);
    frame::put_head(
        &mut s,
        block.len() - 5,
        kind::CONTINUATION,
        flag::END_HEADERS,
        1,
    );
    s.extend_from_slice(&block[5..]);
    s.extend(data(1, 0, b"x"));
    s.extend(headers(1, flag::END_STREAM, &[("x-trailer", "t")]));
    let (log, _, r) = run_all_splits(1, &s);
    assert_eq!(r, Ok(()));
    assert_eq!(
        log,
        [
            "field 1 :status=103",
            "field 1 =",
            "field 1 :status=200",
            "field 1 server=test",
            "field 1 =",
            "status 1 200",
            "data 1 x",
            "field 1 x-trailer=t",
            "field 1 =",
            "written 1 11",
            "done 1 200 h30 w26 c1 f10",
        ]
    );
}

#[test]
fn streams_complete_in_any_order_with_ping_and_reset() {
    let mut s = settings(&[]);
    s.extend(headers(3, flag::END_STREAM, &[(":status", "404")]));
    let mut ping = Vec::new();
    frame::put_head(&mut ping, 8, kind::PING, 0, 0);
    ping.extend_from_slice(b"pingpong");
    s.extend(&ping);
    frame::put_rst_stream(&mut s, 1, code::CANCEL);
    s.extend(headers(5, 0, &[(":status", "200")]));
    s.extend(data(5, flag::END_STREAM, b""));
    let (log, out, r) = run_all_splits(3, &s);
    assert_eq!(r, Ok(()));
    assert_eq!(
        log,
        [
            "field 3 :status=404",
            "field 3 =",
            "status 3 404",
            "written 2 11",
            "done 2 404 h10 w1 c0 f0",
            "reset 1 8",
            "field 5 :status=200",
            "field 5 =",
            "status 5 200",
            "written 3 11",
            "done 3 200 h10 w1 c0 f0",
        ]
        .map(|l| l
            .replace("field 3", "field 2")
            .replace("status 3 404", "status 2 404")
            .replace("field 5", "field 3")
            .replace("status 5 200", "status 3 200"))
    );
    let mut want = vec![0, 0, 0, 4, 1, 0, 0, 0, 0];
    frame::put_ping_ack(&mut want, b"pingpong");
    assert_eq!(out, want);
}

#[test]
fn written_is_reported_when_the_bytes_leave() {
    let (mut h, out) = client(2);
    let mut log = Log::default();
    let preface = out.len() - 22;
    assert_eq!(
        &out[preface - 9..preface],
        [0, 0, 0, 4, 1, 0, 0, 0, 0],
        "the ack"
    );
    h.on_written(preface + 10, &mut log);
    assert!(log.0.is_empty());
    h.on_written(1, &mut log);
    assert_eq!(log.0, ["written 1 11"]);
    h.on_written(11, &mut log);
    assert_eq!(log.0, ["written 1 11", "written 2 11"]);
}

#[test]
fn max_concurrent_streams_and_goaway() {
    let (mut h, _) = client(2);
    let mut log = Log::default();
    let mut out = Vec::new();
    let s = settings(&[(setting::MAX_CONCURRENT_STREAMS, 2)]);
    h.on_bytes(&s, &mut out, &mut log).expect("valid");
    assert!(!h.can_open(), "2 streams open, limit 2");
    let mut g = Vec::new();
    frame::put_goaway(&mut g, 1, code::NO_ERROR);
    h.on_bytes(&g, &mut out, &mut log).expect("graceful");
    assert_eq!(log.0, ["refused 2"]);
    assert!(h.closing() && !h.can_open());
    assert_eq!(h.in_flight(), 1);
    frame::put_goaway(&mut g, 0, code::PROTOCOL_ERROR);
    assert_eq!(
        h.on_bytes(&g[17..], &mut out, &mut log).map_err(|e| e.code),
        Err(code::PROTOCOL_ERROR)
    );
    assert_eq!(log.0, ["refused 2", "refused 1"]);
}

#[test]
fn request_bodies_follow_flow_control() {
    let mut h: H2<u32> = H2::new();
    let mut out = Vec::new();
    let mut log = Log::default();
    h.start(&mut out);
    let s = settings(&[(setting::INITIAL_WINDOW_SIZE, 10)]);
    h.on_bytes(&s, &mut out, &mut log).expect("valid");
    out.clear();
    h.open(7, &[0x83], &[b'b'; 25], &mut out);
    // HEADERS (10 bytes) + DATA of 10 bytes (19): the stream window is used up.
    assert_eq!(out.len(), 10 + 19);
    assert!(h.blocked());
    let mut wu = Vec::new();
    frame::put_window_update(&mut wu, 1, 100);
    out.clear();
    h.on_bytes(&wu, &mut out, &mut log).expect("valid");
    assert_eq!(out.len(), 9 + 15);
    assert_eq!(out[4], flag::END_STREAM);
    assert!(!h.blocked());
    h.on_written(10_000, &mut log);
    assert_eq!(log.0, ["written 7 53"]);
}

#[test]
fn consumed_data_is_returned_by_window_update() {
    let (mut h, _) = client(1);
    let mut log = Log::default();
    let mut out = Vec::new();
    let mut s = settings(&[]);
    s.extend(headers(1, 0, &[(":status", "200")]));
    h.on_bytes(&s, &mut out, &mut log).expect("valid");
    out.clear();
    let chunk = vec![b'z'; 16_384];
    let frames = (STREAM_WINDOW / 2) as usize / chunk.len();
    for _ in 0..frames {
        h.on_bytes(&data(1, 0, &chunk), &mut out, &mut log)
            .expect("valid");
    }
    let mut want = Vec::new();
    frame::put_window_update(&mut want, 1, STREAM_WINDOW / 2);
    assert_eq!(out, want);
}

fn error_of(n: u32, server: &[u8]) -> (u32, &'static str) {
    let (_, _, r) = run(n, server, &[]);
    let e = r.expect_err("must fail");
    (e.code, e.reason)
}

/// The error a client that has not seen the server's SETTINGS yet gets from `server`.
fn first_error(server: &[u8]) -> (u32, &'static str) {
    let mut h: H2<u32> = H2::new();
    let mut out = Vec::new();
    h.start(&mut out);
    let e = h
        .on_bytes(server, &mut out, &mut Log::default())
        .expect_err("must fail");
    (e.code, e.reason)
}

#[test]
fn hostile_servers_end_the_connection() {
    // An HTTP/1.1 server.
    let e = first_error(b"HTTP/1.1 400 Bad Request\r\n\r\n");
    assert_eq!(e, (code::PROTOCOL_ERROR, NOT_H2));
    // Something other than SETTINGS first.
    assert_eq!(first_error(&headers(1, 0, &[(":status", "200")])).1, NOT_H2);
    let mut ping = Vec::new();
    frame::put_ping_ack(&mut ping, b"12345678");
    assert_eq!(first_error(&ping).1, NOT_H2);
    // Endless CONTINUATION.
    let mut s = settings(&[]);
    frame::put_head(&mut s, 1, kind::HEADERS, 0, 1);
    s.push(0x88);
    for _ in 0..20 {
        frame::put_head(&mut s, 16_384, kind::CONTINUATION, 0, 1);
        s.extend_from_slice(&[0x88; 16_384]);
    }
    assert_eq!(error_of(1, &s).0, code::ENHANCE_YOUR_CALM);
    // A SETTINGS flood.
    let mut s = Vec::new();
    for _ in 0..=MAX_CONTROL_RUN {
        s.extend(settings(&[(setting::MAX_CONCURRENT_STREAMS, 5)]));
    }
    assert_eq!(
        error_of(1, &s),
        (code::ENHANCE_YOUR_CALM, "control-frame flood")
    );
    // A huge HPACK table size (a size update above our 4096).
    let mut s = settings(&[(setting::HEADER_TABLE_SIZE, u32::MAX)]);
    frame::put_head(&mut s, 6, kind::HEADERS, flag::END_HEADERS, 1);
    s.extend_from_slice(&[0x3f, 0xe1, 0xff, 0xff, 0x0f, 0x88]);
    assert_eq!(error_of(1, &s).0, code::COMPRESSION_ERROR);
    // Malformed frames.
    let cases: Vec<Vec<u8>> = vec![
        data(1, flag::END_STREAM, b"x"),
        headers(2, 0, &[(":status", "200")]),
        headers(9, 0, &[(":status", "200")]),
        headers(1, 0, &[("server", "no status")]),
        headers(1, 0, &[(":status", "2000")]),
        headers(1, flag::END_STREAM, &[(":status", "100")]),
        {
            let mut b = Vec::new();
            frame::put_head(&mut b, 7, kind::PING, 0, 0);
            b.extend_from_slice(&[0; 7]);
            b
        },
        {
            let mut b = Vec::new();
            frame::put_window_update(&mut b, 0, 0);
            b
        },
        {
            let mut b = Vec::new();
            frame::put_window_update(&mut b, 0, 0x7fff_ffff);
            b
        },
        settings(&[(setting::MAX_FRAME_SIZE, 100)]),
        settings(&[(setting::INITIAL_WINDOW_SIZE, 0x8000_0000)]),
        {
            let mut b = Vec::new();
            frame::put_head(&mut b, 4, kind::PUSH_PROMISE, flag::END_HEADERS, 1);
            b.extend_from_slice(&[0, 0, 0, 2]);
            b
        },
        {
            let mut b = Vec::new();
            frame::put_head(&mut b, 1, kind::CONTINUATION, flag::END_HEADERS, 1);
            b.push(0x88);
            b
        },
    ];
    for (k, case) in cases.iter().enumerate() {
        let mut s = settings(&[]);
        s.extend_from_slice(case);
        let (_, _, r) = run(1, &s, &[]);
        assert!(r.is_err(), "case {k} must fail");
    }
}

#[test]
fn refused_streams_may_be_retried() {
    let mut s = settings(&[(setting::MAX_CONCURRENT_STREAMS, 1)]);
    frame::put_rst_stream(&mut s, 3, code::REFUSED_STREAM);
    frame::put_rst_stream(&mut s, 5, code::REFUSED_STREAM);
    let (log, _, r) = run_all_splits(3, &s);
    assert_eq!(r, Ok(()));
    assert_eq!(log, ["refused 2", "refused 3"]);
    // Past MAX_REFUSED on one connection a refusal is a failed call.
    let (mut h, _) = client(0);
    let mut log = Log::default();
    let mut out = Vec::new();
    for k in 0..=MAX_REFUSED {
        h.open(k, &[0x82], b"", &mut out);
        let mut rst = Vec::new();
        frame::put_rst_stream(&mut rst, 1 + 2 * k, code::REFUSED_STREAM);
        h.on_bytes(&rst, &mut out, &mut log).expect("valid");
    }
    assert_eq!(
        log.0.iter().filter(|l| l.starts_with("refused")).count(),
        100
    );
    assert_eq!(log.0.last().map(String::as_str), Some("reset 100 7"));
}

#[test]
fn frames_on_closed_streams_are_ignored_but_keep_hpack_in_step() {
    let mut s = settings(&[]);
    frame::put_rst_stream(&mut s, 1, code::CANCEL);
    // A late reply on the reset stream inserts into the dynamic table...
    let mut block = vec![0x40];
    hpack::put_string(&mut block, b"x-late");
    hpack::put_string(&mut block, b"1");
    frame::put_head(&mut s, block.len(), kind::HEADERS, flag::END_HEADERS, 1);
    s.extend_from_slice(&block);
    s.extend(data(1, flag::END_STREAM, b"zz"));
    // ... which stream 3's reply then references (index 62).
    frame::put_head(
        &mut s,
        2,
        kind::HEADERS,
        flag::END_HEADERS | flag::END_STREAM,
        3,
    );
    s.extend_from_slice(&[0x88, 0xbe]);
    let (log, _, r) = run_all_splits(2, &s);
    assert_eq!(r, Ok(()));
    assert_eq!(log[0], "reset 1 8");
    assert_eq!(log[2], "field 2 x-late=1");
    assert_eq!(
        log.last().map(String::as_str),
        Some("done 2 200 h17 w2 c0 f0")
    );
}

#[test]
fn data_after_the_server_ended_a_stream_is_a_stream_closed_error() {
    // Stream 1 ends with its reply; more DATA on it is STREAM_CLOSED (RFC 9113 §5.1,
    // §6.1), at every split, after the reply was delivered.
    let mut s = settings(&[]);
    s.extend(headers(1, flag::END_STREAM, &[(":status", "200")]));
    s.extend(data(1, 0, b"late"));
    let (log, _, r) = run_all_splits(1, &s);
    assert_eq!(
        log.last().map(String::as_str),
        Some("done 1 200 h10 w1 c0 f0")
    );
    let e = r.expect_err("STREAM_CLOSED");
    assert_eq!(e.code, code::STREAM_CLOSED);
    // So are trailers after it.
    let mut s = settings(&[]);
    s.extend(headers(1, 0, &[(":status", "200")]));
    s.extend(data(1, flag::END_STREAM, b"ok"));
    s.extend(headers(1, flag::END_STREAM, &[("x-trailer", "1")]));
    let (_, _, r) = run_all_splits(1, &s);
    assert_eq!(r.map_err(|e| e.code), Err(code::STREAM_CLOSED));
}

#[test]
fn frames_the_server_sent_before_seeing_our_reset_are_ignored() {
    // An early answer while our body is unsent: we reset the stream (NO_ERROR); the
    // DATA the server had already sent on it is no error.
    let (mut h, mut out) = client(0);
    let mut log = Log::default();
    h.open(1, &[0x83], &[b'b'; 70_000], &mut out);
    let mut s = headers(1, flag::END_STREAM, &[(":status", "200")]);
    s.extend(data(1, 0, b"late"));
    assert!(h.on_bytes(&s, &mut out, &mut log).is_ok());
    assert_eq!(
        log.0.last().map(String::as_str),
        Some("done 1 200 h10 w1 c0 f0")
    );
}
