//! Tests of the HTTP/1.x reply parser (`response.rs`): a table of replies fed at every
//! byte split, the exact pieces the sink sees, the header-block limits, the framing
//! headers' classification, and random input that must neither panic nor depend on
//! where it is cut.

use super::*;

/// Records every byte the parser hands to the sink.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Rec {
    header: Vec<u8>,
    body: Vec<u8>,
    footer: Vec<u8>,
}

impl ReplySink for Rec {
    fn header_bytes(&mut self, bytes: &[u8]) {
        self.header.extend_from_slice(bytes);
    }
    fn body_bytes(&mut self, bytes: &[u8]) {
        self.body.extend_from_slice(bytes);
    }
    fn footer_bytes(&mut self, bytes: &[u8]) {
        self.footer.extend_from_slice(bytes);
    }
}

/// How a run over the whole input ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// All bytes consumed, reply incomplete (no EOF given).
    Pending,
    /// The parser failed.
    Failed(ReplyError),
    /// EOF given after the input; `on_eof` returned this.
    Eof(bool),
}

/// Everything observable from one run; must not depend on how the input was split.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    /// Completed replies with the absolute input offset where each ended.
    done: Vec<(usize, Reply)>,
    end: End,
    /// `reply()` of the reply in progress at the end.
    last: Reply,
    status_seen: bool,
    started: bool,
    sink: Rec,
}

/// Feeds `input` cut at `cuts` (sorted offsets), restarting after each completed
/// reply like a connection with pipelined calls; then EOF if `eof`.
fn run(input: &[u8], head: bool, eof: bool, cuts: &[usize]) -> Outcome {
    let mut p = ReplyParser::new();
    p.start(head);
    let mut sink = Rec::default();
    let mut done = Vec::new();
    let mut from = 0;
    let mut end = End::Pending;
    'pieces: for &to in cuts.iter().chain(std::iter::once(&input.len())) {
        let mut off = from;
        from = to;
        loop {
            match p.feed(&input[off..to], &mut sink) {
                Ok(Progress::Complete(n)) => {
                    assert!(off + n <= to, "consumed beyond the piece");
                    off += n;
                    done.push((off, *p.reply()));
                    // Graceful misuse: feeding a completed reply consumes nothing.
                    assert_eq!(
                        p.feed(b"HTTP/1.1 200 OK\r\n", &mut Rec::default()),
                        Ok(Progress::Complete(0))
                    );
                    assert_eq!(p.reply(), &done[done.len() - 1].1);
                    p.start(head);
                    assert!(!p.started() && !p.status_seen());
                    if off == to {
                        break;
                    }
                }
                Ok(Progress::NeedMore) => break,
                Err(e) => {
                    // Graceful misuse: a failed parser repeats its error.
                    assert_eq!(p.feed(b"x", &mut Rec::default()), Err(e));
                    end = End::Failed(e);
                    break 'pieces;
                }
            }
        }
    }
    if eof && end == End::Pending {
        let ok = p.on_eof();
        if ok {
            done.push((input.len(), *p.reply()));
            assert!(!p.on_eof(), "second EOF completes nothing");
        }
        end = End::Eof(ok);
    }
    let last = if matches!(end, End::Eof(true)) {
        Reply::default()
    } else {
        *p.reply()
    };
    let out = Outcome {
        done,
        end,
        last,
        status_seen: p.status_seen(),
        started: p.started(),
        sink,
    };
    // The sink saw exactly the counted bytes.
    let sum = |f: fn(&Reply) -> u64| out.done.iter().map(|(_, r)| f(r)).sum::<u64>() + f(&out.last);
    assert_eq!(sum(|r| r.header_bytes), out.sink.header.len() as u64);
    assert_eq!(sum(|r| r.content_bytes), out.sink.body.len() as u64);
    assert_eq!(sum(|r| r.footer_bytes), out.sink.footer.len() as u64);
    out
}

/// Runs `input` whole, one byte at a time, and cut in two at every boundary (a
/// sample of boundaries for big inputs); all outcomes must equal the whole-feed one.
fn split_invariant(input: &[u8], head: bool, eof: bool) -> Outcome {
    let whole = run(input, head, eof, &[]);
    let all: Vec<usize> = (1..input.len()).collect();
    assert_eq!(run(input, head, eof, &all), whole, "one byte at a time");
    let n = input.len();
    let cut_points: Vec<usize> = if n <= 4000 {
        (0..=n).collect()
    } else {
        let edge = |k: usize| k < 300 || n - k < 300 || k.abs_diff(MAX_HEADER_BLOCK as usize) < 300;
        (0..=n).filter(|&k| edge(k) || k % 997 == 0).collect()
    };
    for k in cut_points {
        assert_eq!(run(input, head, eof, &[k]), whole, "cut at {k}");
    }
    whole
}

/// A completed reply's counters.
fn done(
    end: usize,
    status: u16,
    header: u64,
    content: u64,
    footer: u64,
    close: bool,
) -> (usize, Reply) {
    (
        end,
        Reply {
            status,
            header_bytes: header,
            content_bytes: content,
            footer_bytes: footer,
            close,
            stream: None,
        },
    )
}

/// Length through the first blank line.
fn head_len(input: &[u8]) -> usize {
    input
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(0, |p| p + 4)
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

const NGINX_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\n\
    Server: nginx/1.22.1\r\n\
    Date: Mon, 30 Nov 2026 03:50:58 GMT\r\n\
    Content-Type: text/html\r\n\
    Content-Length: 1024\r\n\
    Last-Modified: Mon, 30 Nov 2026 03:50:58 GMT\r\n\
    Connection: keep-alive\r\n\
    ETag: \"692bbf02-400\"\r\n\
    Accept-Ranges: bytes\r\n\
    \r\n";

const A8_CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\n\
    Transfer-Encoding: chunked\r\n\
    Content-Type: text/plain\r\n\
    \r\n\
    5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n";

const A8_CLOSE: &[u8] =
    b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nclose-delimited body\n";

/// One table row: input, request flags, and the expected outcome.
struct Case {
    name: &'static str,
    input: Vec<u8>,
    head: bool,
    eof: bool,
    done: Vec<(usize, Reply)>,
    end: End,
}

/// A case with one reply ending exactly at the end of `input`; `counts` are header,
/// content and footer bytes and close (0/1); a header count of 0 means "through the
/// first blank line".
fn ok(name: &'static str, input: &[u8], status: u16, counts: [u64; 4]) -> Case {
    let [header, content, footer, close] = counts;
    let header = if header == 0 {
        head_len(input) as u64
    } else {
        header
    };
    let r = done(input.len(), status, header, content, footer, close != 0);
    Case {
        name,
        input: input.to_vec(),
        head: false,
        eof: false,
        done: vec![r],
        end: End::Pending,
    }
}

/// A case that ends with `end` and no completed reply.
fn no_reply(name: &'static str, input: &[u8], end: End) -> Case {
    let eof = matches!(end, End::Eof(_));
    Case {
        name,
        input: input.to_vec(),
        head: false,
        eof,
        done: vec![],
        end,
    }
}

fn fail(name: &'static str, input: &[u8], e: ReplyError) -> Case {
    no_reply(name, input, End::Failed(e))
}

const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
const OK2: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

fn with_cl(v: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\nContent-Length: {v}\r\n\r\nok").into_bytes()
}

fn with_te(v: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: {v}\r\n\r\n0\r\n\r\n").into_bytes()
}

fn with_chunks(v: &str) -> Vec<u8> {
    cat(&[CHUNKED, v.as_bytes()])
}

fn cases() -> Vec<Case> {
    use ReplyError::*;
    let nginx = cat(&[NGINX_HEAD, &[b'x'; 1024]]);
    let plain = with_chunks("3\r\nabc\r\n0\r\n\r\n");
    let h_ok2 = head_len(OK2) as u64;
    let a = |n: usize| vec![b'a'; n];
    vec![
        // Framing.
        ok("nginx CL 1024", &nginx, 200, [239, 1024, 0, 0]),
        ok("CL 0", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, [0; 4]),
        ok("CL leading zeros", b"HTTP/1.1 200 OK\r\nContent-Length: 0002\r\n\r\nok", 200, [0, 2, 0, 0]),
        no_reply("CL = u64::MAX", &with_cl("18446744073709551615"), End::Pending),
        Case { eof: true, end: End::Eof(true), ..ok("close-delimited (A.8)", A8_CLOSE, 200, [45, 21, 0, 1]) },
        no_reply("close-delimited, no EOF yet", A8_CLOSE, End::Pending),
        ok("chunked (A.8)", A8_CHUNKED, 200, [73, 12, 18, 0]),
        ok("chunked, no trailers", &plain, 200, [47, 3, 2, 0]),
        ok("chunked, bare LF", b"HTTP/1.1 200 OK\nTransfer-Encoding: Chunked\n\n3\nabc\n0\n\n", 200, [44, 3, 1, 0]),
        ok("chunked zeros+ext", &with_chunks(&format!("{}2 \t;a=b;c\r\nok\r\n00\r\n\r\n", "0".repeat(40))), 200, [0, 2, 2, 0]),
        ok("chunk line = 4096", &with_chunks(&format!("1;{}\r\na\r\n0\r\n\r\n", "e".repeat(4092))), 200, [0, 1, 2, 0]),
        no_reply("16 hex digit chunk", &with_chunks("ffffffffffffffff\r\nabc"), End::Pending),
        ok("chunked wins over CL", b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 200, [0, 2, 2, 0]),
        ok("TE identity + CL", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 0]),
        Case { head: true, ..ok("HEAD with CL", b"HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n", 200, [0; 4]) },
        Case { head: true, ..ok("HEAD chunked", CHUNKED, 200, [0; 4]) },
        ok("204 with CL", b"HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", 204, [0; 4]),
        ok("304 with CL", b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\nETag: \"x\"\r\n\r\n", 304, [0; 4]),
        ok("101 is final", b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", 101, [0, 0, 0, 1]),
        // Interim replies.
        ok("100 Continue then 200", &cat(&[CONTINUE, OK2]), 200, [25 + h_ok2, 2, 0, 0]),
        ok("103 and 100 then 200", &cat(&[b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\nContent-Length: 99\r\n\r\n", CONTINUE, OK2]), 200, [60 + 25 + h_ok2, 2, 0, 0]),
        // Pipelining and surplus bytes.
        Case {
            done: vec![done(OK2.len(), 200, h_ok2, 2, 0, false), done(OK2.len() + 1263, 200, 239, 1024, 0, false)],
            ..ok("two pipelined", &cat(&[OK2, &nginx]), 0, [0; 4])
        },
        Case {
            done: vec![done(OK2.len(), 200, h_ok2, 2, 0, false)],
            ..fail("surplus garbage after CL", &cat(&[OK2, b"XYZ"]), BadStatusLine)
        },
        Case {
            done: vec![done(OK2.len(), 200, h_ok2, 2, 0, false)],
            ..no_reply("surplus partial status after CL", &cat(&[OK2, b"HT"]), End::Pending)
        },
        // EOF in the wrong place.
        no_reply("EOF inside CL body", &nginx[..600], End::Eof(false)),
        no_reply("EOF inside headers", &NGINX_HEAD[..100], End::Eof(false)),
        no_reply("EOF inside chunked", &A8_CHUNKED[..80], End::Eof(false)),
        no_reply("EOF before anything", b"", End::Eof(false)),
        no_reply("empty input", b"", End::Pending),
        // Headers: odd bytes, long lines, Connection semantics.
        ok("NUL in header names", b"HTTP/1.1 200 OK\r\nX\0Y: 1\r\n\0: \0\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 0]),
        ok("long other header", &cat(&[b"HTTP/1.1 200 OK\r\nX-Long: ", &a(300), b"\r\nContent-Length: 2\r\n\r\nok"]), 200, [0, 2, 0, 0]),
        ok("long Connection header", &cat(&[b"HTTP/1.1 200 OK\r\nConnection: close, ", &a(300), b"\r\nContent-Length: 2\r\n\r\nok"]), 200, [0, 2, 0, 1]),
        ok("duplicate equal CL", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length:\t 2 \t\r\n\r\nok", 200, [0, 2, 0, 0]),
        ok("Connection: close", b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 1]),
        ok("Connection list", b"HTTP/1.1 200 OK\r\nconnection: foo, CLOSE\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 1]),
        ok("HTTP/1.0 closes", b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 1]),
        ok("HTTP/1.0 keep-alive", b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 0]),
        ok("status without reason", b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", 200, [0, 2, 0, 0]),
        ok("spaces, LF only", b"HTTP/1.1   404   Not Found\nContent-Length: 2\n\nok", 404, [46, 2, 0, 0]),
        // Status line errors.
        fail("HTTP/0.9 body", b"<html><body>hello</body></html>\n", BadStatusLine),
        fail("binary garbage", &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc], BadStatusLine),
        fail("FOO BAR (A.8)", b"FOO BAR\r\nContent-Length: 2\r\n\r\nok", BadStatusLine),
        fail("lower-case http", b"http/1.1 200 OK\r\n\r\n", BadStatusLine),
        fail("status 099", b"HTTP/1.1 099 X\r\n\r\n", BadStatusLine),
        fail("status 4 digits", b"HTTP/1.1 2000 X\r\n\r\n", BadStatusLine),
        fail("status 2 digits", b"HTTP/1.1 20\r\n\r\n", BadStatusLine),
        fail("version 11", b"HTTP/11 200 OK\r\n\r\n", BadStatusLine),
        fail("no space", b"HTTP/1.1200 OK\r\n\r\n", BadStatusLine),
        fail("tab separator", b"HTTP/1.1\t200 OK\r\n\r\n", BadStatusLine),
        fail("bad status after 100", &cat(&[CONTINUE, b"HTTP/x"]), BadStatusLine),
        // Size limits.
        fail("header line > 64 KiB", &cat(&[b"HTTP/1.1 200 OK\r\nX-Big: ", &a(70_000), b"\r\n\r\n"]), HeaderTooLarge),
        fail("trailer > 64 KiB", &cat(&[&plain[..plain.len() - 2], &a(70_000), b"\r\n\r\n"]), TrailerTooLarge),
        // Framing header errors.
        fail("CL > u64", &with_cl("18446744073709551616"), BadContentLength),
        fail("negative CL", &with_cl("-1"), BadContentLength),
        fail("non-digit CL", &with_cl("12abc"), BadContentLength),
        fail("empty CL", &with_cl(""), BadContentLength),
        fail("CL list", &with_cl("2, 2"), BadContentLength),
        fail("conflicting CL", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", BadContentLength),
        fail("CL value too long", &cat(&[b"HTTP/1.1 200 OK\r\nContent-Length:", &[b' '; 200], b"2\r\n\r\nok"]), BadContentLength),
        fail("TE gzip", &with_te("gzip"), BadTransferEncoding),
        fail("TE chunked, gzip", &with_te("chunked, gzip"), BadTransferEncoding),
        fail("TE empty", &with_te(""), BadTransferEncoding),
        fail("TE value too long", &cat(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding:", &[b' '; 200], b"chunked\r\n\r\n0\r\n\r\n"]), BadTransferEncoding),
        // Chunk framing errors.
        fail("chunk size not hex", &with_chunks("zz\r\n"), BadChunk),
        fail("chunk size empty", &with_chunks("\r\n"), BadChunk),
        fail("chunk size leading space", &with_chunks(" 5\r\n"), BadChunk),
        fail("chunk size CR junk", &with_chunks("5\rx\n"), BadChunk),
        fail("chunk size 17 digits", &with_chunks("10000000000000000\r\n"), BadChunk),
        fail("chunk data without CRLF", &with_chunks("2\r\nokX\r\n0\r\n\r\n"), BadChunk),
        fail("chunk data CR without LF", &with_chunks("2\r\nok\rX"), BadChunk),
        fail("chunk line > 4096", &with_chunks(&format!("1;{}\r\na\r\n0\r\n\r\n", "e".repeat(5000))), BadChunk),
    ]
}

#[test]
fn table_cases_split_invariant() {
    for c in cases() {
        let out = split_invariant(&c.input, c.head, c.eof);
        assert_eq!(out.done, c.done, "{}: completed replies", c.name);
        assert_eq!(out.end, c.end, "{}: end", c.name);
    }
}

#[test]
fn sink_sees_exact_pieces() {
    let out = run(A8_CHUNKED, false, false, &[]);
    assert_eq!(out.sink.header, &A8_CHUNKED[..73]);
    assert_eq!(out.sink.body, b"hello, world");
    assert_eq!(out.sink.footer, b"X-Trailer: yes\r\n\r\n");
    let nginx = cat(&[NGINX_HEAD, &[b'x'; 1024]]);
    let input = cat(&[&nginx, &nginx]);
    let out = run(&input, false, false, &[]);
    assert_eq!(out.sink.header, cat(&[NGINX_HEAD, NGINX_HEAD]));
    assert_eq!(out.sink.body, vec![b'x'; 2048]);
    let out = run(A8_CLOSE, false, true, &[]);
    assert_eq!(cat(&[&out.sink.header, &out.sink.body]), A8_CLOSE);
}

#[test]
fn status_seen_only_at_final_status_line() {
    let input = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let final_lf = 25 + 16; // index of the LF ending "HTTP/1.1 200 OK\r\n"
    let mut p = ReplyParser::new();
    assert!(!p.started() && !p.status_seen());
    for (k, b) in input.iter().enumerate() {
        let r = p.feed(std::slice::from_ref(b), &mut NoSink);
        assert!(p.started());
        assert_eq!(p.status_seen(), k >= final_lf, "byte {k}");
        assert_eq!(p.reply().status, if k >= final_lf { 200 } else { 0 });
        let expect = if k + 1 == input.len() {
            Progress::Complete(1)
        } else {
            Progress::NeedMore
        };
        assert_eq!(r, Ok(expect));
    }
    assert_eq!(p.feed(b"", &mut NoSink), Ok(Progress::Complete(0)));
    p.start(false);
    assert_eq!(p.feed(b"", &mut NoSink), Ok(Progress::NeedMore));
    assert!(!p.started());
}

#[test]
fn garbage_fails_on_first_byte() {
    for first in [0u8, b'G', b'h', b' ', b'\r', b'\n', 0xff, b'<'] {
        let mut p = ReplyParser::new();
        let mut rec = Rec::default();
        assert_eq!(
            p.feed(&[first], &mut rec),
            Err(ReplyError::BadStatusLine),
            "{first:#x}"
        );
        assert_eq!(p.reply().header_bytes, 1);
        assert_eq!(rec.header, [first]);
    }
}

#[test]
fn on_eof_states() {
    let mut p = ReplyParser::new();
    assert!(!p.on_eof(), "nothing received");
    assert_eq!(p.feed(A8_CLOSE, &mut NoSink), Ok(Progress::NeedMore));
    assert!(p.on_eof());
    assert!(!p.on_eof());
    assert_eq!(p.reply().content_bytes, 21);
    assert!(p.reply().close);
    assert_eq!(p.feed(b"more", &mut NoSink), Ok(Progress::Complete(0)));
    // HTTP/1.1 keep-alive without framing is close-delimited too.
    p.start(false);
    assert_eq!(
        p.feed(b"HTTP/1.1 200 OK\r\n\r\nbody", &mut NoSink),
        Ok(Progress::NeedMore)
    );
    assert!(p.on_eof());
    assert_eq!(
        *p.reply(),
        Reply {
            status: 200,
            header_bytes: 19,
            content_bytes: 4,
            footer_bytes: 0,
            close: true,
            stream: None,
        }
    );
    // A completed CL reply: EOF afterwards completes nothing.
    p.start(false);
    assert_eq!(
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", &mut NoSink),
        Ok(Progress::Complete(38))
    );
    assert!(!p.on_eof());
    // After an error.
    p.start(false);
    assert_eq!(p.feed(b"X", &mut NoSink), Err(ReplyError::BadStatusLine));
    assert!(!p.on_eof());
}

#[test]
fn fifty_megabyte_header_line_fails_early() {
    const BIG: usize = 50 << 20;
    let prefix = b"HTTP/1.1 200 OK\r\nX-Huge: ";
    // Fed in 4 KiB pieces: fails within one piece of the limit.
    let piece = [b'a'; 4096];
    let mut p = ReplyParser::new();
    assert_eq!(p.feed(prefix, &mut NoSink), Ok(Progress::NeedMore));
    let mut fed = prefix.len();
    let err = loop {
        assert!(fed < BIG, "never failed");
        match p.feed(&piece, &mut NoSink) {
            Ok(Progress::NeedMore) => fed += piece.len(),
            other => break other,
        }
    };
    assert_eq!(err, Err(ReplyError::HeaderTooLarge));
    assert!(fed <= MAX_HEADER_BLOCK as usize + piece.len());
    assert_eq!(p.reply().header_bytes, MAX_HEADER_BLOCK + 1);
    // Fed whole: fails after scanning at most the limit.
    let mut input = prefix.to_vec();
    input.resize(BIG, b'a');
    let mut p = ReplyParser::new();
    let mut rec = Rec::default();
    assert_eq!(p.feed(&input, &mut rec), Err(ReplyError::HeaderTooLarge));
    assert_eq!(rec.header.len() as u64, MAX_HEADER_BLOCK + 1);
    // Same for a reason phrase and for spaces inside the status line.
    for filler in [b'r', b' '] {
        let mut input = b"HTTP/1.1 200 ".to_vec();
        if filler == b' ' {
            input.truncate(9);
        }
        input.resize(1 << 20, filler);
        let mut p = ReplyParser::new();
        assert_eq!(p.feed(&input, &mut NoSink), Err(ReplyError::HeaderTooLarge));
        assert_eq!(p.reply().header_bytes, MAX_HEADER_BLOCK + 1);
    }
}

#[test]
fn header_block_limit_is_inclusive() {
    // A header block of exactly MAX_HEADER_BLOCK bytes is accepted; one more fails.
    let base = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: \r\n\r\n".len();
    for (extra, ok) in [(0, true), (1, false)] {
        let fill = MAX_HEADER_BLOCK as usize - base + extra;
        let input = cat(&[
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: ",
            &vec![b'v'; fill],
            b"\r\n\r\n",
        ]);
        let out = run(&input, false, false, &[]);
        if ok {
            assert_eq!(
                out.done,
                vec![done(input.len(), 200, MAX_HEADER_BLOCK, 0, 0, false)]
            );
        } else {
            assert_eq!(out.end, End::Failed(ReplyError::HeaderTooLarge));
        }
    }
}

#[test]
fn find_lf_matches_naive() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..5000 {
        let len = rng.below(40);
        let bytes: Vec<u8> = (0..len)
            .map(|_| if rng.below(8) == 0 { b'\n' } else { rng.byte() })
            .collect();
        assert_eq!(
            find_lf(&bytes),
            bytes.iter().position(|&b| b == b'\n'),
            "{bytes:?}"
        );
    }
}

#[test]
fn classify_framing_headers() {
    assert_eq!(
        classify(b"CONTENT-LENGTH: 12", false),
        Ok(Field::ContentLength(12))
    );
    assert_eq!(
        classify(b"Content-Length:12", false),
        Ok(Field::ContentLength(12))
    );
    assert_eq!(classify(b"Content-Lengthy: 12", false), Ok(Field::Other));
    assert_eq!(classify(b"Content-Length : 12", false), Ok(Field::Other));
    assert_eq!(
        classify(b"Content-Length: 1 2", false),
        Err(ReplyError::BadContentLength)
    );
    assert_eq!(
        classify(b"Content-Length: 12", true),
        Err(ReplyError::BadContentLength)
    );
    assert_eq!(
        classify(b"Connection: keep-alive", false),
        Ok(Field::Connection {
            close: false,
            keep_alive: true
        })
    );
    assert_eq!(
        classify(b"Connection: closed", false),
        Ok(Field::Connection {
            close: false,
            keep_alive: false
        })
    );
    assert_eq!(
        classify(b"Connection: close", true),
        Ok(Field::Connection {
            close: false,
            keep_alive: false
        })
    );
    assert_eq!(
        classify(b"Connection: close,x", true),
        Ok(Field::Connection {
            close: true,
            keep_alive: false
        })
    );
    assert_eq!(
        classify(b"Transfer-Encoding: gzip , CHUNKED", false),
        Ok(Field::TransferEncoding(Codings {
            any: true,
            last_chunked: true,
            all_identity: false
        }))
    );
    assert_eq!(
        classify(b"Transfer-Encoding: chunked", true),
        Err(ReplyError::BadTransferEncoding)
    );
    assert_eq!(classify(b"", false), Ok(Field::Other));
    assert_eq!(classify(b"\0\xff:", false), Ok(Field::Other));
    assert_eq!(parse_decimal(b"18446744073709551615"), Some(u64::MAX));
    assert_eq!(parse_decimal(b"18446744073709551616"), None);
}

#[test]
fn transfer_encoding_across_lines() {
    // Codings of several lines form one list: its last member decides.
    let two = |a: &str, b: &str| {
        format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: {a}\r\nTransfer-Encoding: {b}\r\n\r\n0\r\n\r\n"
        )
        .into_bytes()
    };
    assert_eq!(
        run(&two("gzip", "chunked"), false, false, &[]).done.len(),
        1
    );
    assert_eq!(
        run(&two("identity", "chunked"), false, false, &[])
            .done
            .len(),
        1
    );
    let bad = run(&two("chunked", "identity"), false, false, &[]);
    assert_eq!(bad.end, End::Failed(ReplyError::BadTransferEncoding));
    let ident = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nbody";
    let out = run(ident, false, true, &[]);
    assert_eq!(out.end, End::Eof(true));
    assert_eq!(out.done[0].1.content_bytes, 4);
}

/// Deterministic xorshift64 generator for the property test.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn byte(&mut self) -> u8 {
        self.next() as u8
    }
}

/// Pieces that random inputs are assembled from, so they get deep into the parser.
const TOKENS: &[&[u8]] = &[
    b"HTTP/1.1 ",
    b"HTTP/1.0 ",
    b"200",
    b"100",
    b"101",
    b"204",
    b"304",
    b" OK",
    b"\r\n",
    b"\n",
    b"\r",
    b"Content-Length: ",
    b"Transfer-Encoding: ",
    b"chunked",
    b"identity",
    b"Connection: ",
    b"close",
    b"keep-alive",
    b"0",
    b"5",
    b"a",
    b"ff",
    b";x=y",
    b"hello",
    b", ",
    b"X-T: v",
    b" ",
    b"\t",
    b"\0",
];

fn random_input(rng: &mut XorShift, seeds: &[Vec<u8>]) -> Vec<u8> {
    match rng.below(3) {
        0 => (0..rng.below(64)).map(|_| rng.byte()).collect(),
        1 => {
            let mut v = seeds[rng.below(seeds.len())].clone();
            for _ in 0..=rng.below(4) {
                let at = rng.below(v.len() + 1);
                match rng.below(5) {
                    0 if at < v.len() => v[at] = rng.byte(),
                    1 if at < v.len() => {
                        v.remove(at);
                    }
                    2 => v.insert(at, TOKENS[rng.below(TOKENS.len())][0]),
                    3 => {
                        let t = TOKENS[rng.below(TOKENS.len())];
                        v.splice(at..at, t.iter().copied());
                    }
                    _ => v.truncate(at),
                }
            }
            v
        }
        _ => {
            let mut v = b"HTTP/1.1 200 OK\r\n".to_vec();
            for _ in 0..rng.below(24) {
                v.extend_from_slice(TOKENS[rng.below(TOKENS.len())]);
            }
            v
        }
    }
}

#[test]
fn random_inputs_never_panic_and_are_split_invariant() {
    let seeds: Vec<Vec<u8>> = cases()
        .into_iter()
        .map(|c| c.input)
        .filter(|v| v.len() < 2000)
        .collect();
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    for _ in 0..4000 {
        let input = random_input(&mut rng, &seeds);
        let head = rng.below(4) == 0;
        let eof = rng.below(2) == 0;
        let whole = run(&input, head, eof, &[]);
        let bytes: Vec<usize> = (1..input.len()).collect();
        assert_eq!(run(&input, head, eof, &bytes), whole, "{input:?}");
        for _ in 0..4 {
            let mut cuts: Vec<usize> = (0..rng.below(5))
                .map(|_| rng.below(input.len() + 1))
                .collect();
            cuts.sort_unstable();
            assert_eq!(
                run(&input, head, eof, &cuts),
                whole,
                "{input:?} cut at {cuts:?}"
            );
        }
    }
}
