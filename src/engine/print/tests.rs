//! Tests of `--print-request` / `--print-reply` (`print.rs`): the golden outputs of
//! docs/compatibility.md A.7 and A.9c, every split of a reply, interleaved calls, aborts,
//! fragments, binary bytes and write errors.

use super::*;

/// Golden text uses `^M` for CR, as docs/compatibility.md appendix A does.
fn cr(s: &str) -> String {
    s.replace("^M", "\r")
}

fn both() -> Printer<Vec<u8>> {
    Printer::new(Vec::new(), Some(PrintWhat::Both), Some(PrintWhat::Both))
}

fn text(p: Printer<Vec<u8>>) -> String {
    String::from_utf8(p.into_inner()).expect("test output is UTF-8")
}

/// Request bytes as httperf 0.9.0 builds them (for the golden outputs).
fn request(method: &str, uri: &str, extra: &str, body: &str) -> (String, usize) {
    let mut r = format!(
        "{method} {uri} HTTP/1.1\r\nUser-Agent: httperf/0.9.0\r\nHost: 127.0.0.1\r\n{extra}"
    );
    if !body.is_empty() {
        r.push_str(&format!("Content-length: {}\r\n", body.len()));
    }
    r.push_str("\r\n");
    let header_len = r.len();
    r.push_str(body);
    (r, header_len)
}

fn send(p: &mut Printer<Vec<u8>>, id: u64, req: (String, usize)) {
    p.request(id, req.0.as_bytes(), req.1);
}

/// A reply delivered as one header piece and the given body pieces.
fn reply(p: &mut Printer<Vec<u8>>, id: u64, head: &str, body: &[&str], footer: u64) {
    p.reply_header(id, head.as_bytes());
    let mut content = 0;
    for piece in body {
        p.reply_body(id, piece.as_bytes());
        content += piece.len() as u64;
    }
    p.reply_done(id, head.len() as u64, content, footer);
}

fn echo_reply(p: &mut Printer<Vec<u8>>, id: u64, body: &str) {
    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
    p.reply_header(id, head.as_bytes());
    p.reply_body(id, body.as_bytes());
    p.reply_done(id, head.len() as u64, body.len() as u64, 0);
}

const A7: &str = "\
SH0:GET /echo HTTP/1.1^M
SH0:User-Agent: httperf/0.9.0^M
SH0:Host: 127.0.0.1^M
SH0:X-Test: a\\bA^M
SH0:^M
SS0: header 80 content 0
RH0:HTTP/1.1 200 OK^M
RH0:Server: nginx/1.22.1^M
RH0:Date: Mon, 30 Nov 2026 03:50:58 GMT^M
RH0:Content-Type: text/plain^M
RH0:Content-Length: 35^M
RH0:Connection: keep-alive^M
RH0:^M
RB0:127.0.0.1|httperf/0.9.0|a\\bA||GET|
RS0: header 148 content 35 footer 0
";

const A7_HEAD: &str = "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\n\
    Date: Mon, 30 Nov 2026 03:50:58 GMT\r\nContent-Type: text/plain\r\n\
    Content-Length: 35\r\nConnection: keep-alive\r\n\r\n";
const A7_BODY: &str = "127.0.0.1|httperf/0.9.0|a\\bA||GET|\n";

#[test]
fn golden_a7() {
    let mut p = both();
    for id in 0..2 {
        let req = request("GET", "/echo", "X-Test: a\\bA\r\n", "");
        assert_eq!(req.1, 80);
        send(&mut p, id, req);
        reply(&mut p, id, A7_HEAD, &[A7_BODY], 0);
    }
    let want = cr(&format!(
        "{A7}{}",
        A7.replace("H0:", "H1:")
            .replace("S0:", "S1:")
            .replace("B0:", "B1:")
    ));
    assert_eq!(text(p), want);
}

/// compatibility.md A.9c (first five calls) with bug 12 fixed: the POST body's `c`
/// is its own `SB3` line, and `RH3` is not prefixed with it.
const A9C: &str = "\
SH0:GET /echo HTTP/1.1^M
SH0:User-Agent: httperf/0.9.0^M
SH0:Host: 127.0.0.1^M
SH0:^M
SS0: header 66 content 0
RH0:HTTP/1.1 200 OK^M
RH0:Content-Length: 11^M
RH0:^M
RB0:GET /echo|
RS0: header 39 content 11 footer 0
SH1:GET /1k.html HTTP/1.1^M
SH1:User-Agent: httperf/0.9.0^M
SH1:Host: 127.0.0.1^M
SH1:^M
SS1: header 69 content 0
SH2:GET /index.html HTTP/1.1^M
SH2:User-Agent: httperf/0.9.0^M
SH2:Host: 127.0.0.1^M
SH2:^M
SS2: header 72 content 0
RH1:HTTP/1.1 200 OK^M
RH1:Content-Length: 14^M
RH1:^M
RB1:GET /1k.html|
RS1: header 39 content 14 footer 0
RH2:HTTP/1.1 200 OK^M
RH2:Content-Length: 17^M
RH2:^M
RB2:GET /index.html|
RS2: header 39 content 17 footer 0
SH3:POST /echo HTTP/1.1^M
SH3:User-Agent: httperf/0.9.0^M
SH3:Host: 127.0.0.1^M
SH3:Content-length: 5^M
SH3:^M
SB3:a b
SB3:c
SS3: header 86 content 5
RH3:HTTP/1.1 200 OK^M
RH3:Content-Length: 17^M
RH3:^M
RB3:POST /echo|a b
RB3:c
RS3: header 39 content 17 footer 0
SH4:HEAD /echo HTTP/1.1^M
SH4:User-Agent: httperf/0.9.0^M
SH4:Host: 127.0.0.1^M
SH4:^M
SS4: header 67 content 0
RH4:HTTP/1.1 200 OK^M
RH4:Content-Length: 12^M
RH4:^M
RS4: header 39 content 0 footer 0
";

#[test]
fn golden_a9c() {
    let mut p = both();
    send(&mut p, 0, request("GET", "/echo", "", ""));
    echo_reply(&mut p, 0, "GET /echo|\n");
    send(&mut p, 1, request("GET", "/1k.html", "", ""));
    send(&mut p, 2, request("GET", "/index.html", "", ""));
    echo_reply(&mut p, 1, "GET /1k.html|\n");
    echo_reply(&mut p, 2, "GET /index.html|\n");
    send(&mut p, 3, request("POST", "/echo", "", "a b\nc"));
    echo_reply(&mut p, 3, "POST /echo|a b\nc\n");
    send(&mut p, 4, request("HEAD", "/echo", "", ""));
    let head = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n";
    p.reply_header(4, head.as_bytes());
    p.reply_done(4, 39, 0, 0);
    assert_eq!(text(p), cr(A9C));
}

#[test]
fn chunked_body_pieces_join_into_one_line() {
    // httperf printed `RB0:hello^M` and `RB0:, world^M` (chunk framing,
    // compatibility.md, bug 12).
    let mut p = both();
    let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\
                Content-Type: text/plain\r\n\r\n";
    p.reply_header(0, head.as_bytes());
    p.reply_body(0, b"hello");
    p.reply_body(0, b", world");
    p.reply_done(0, 73, 12, 18);
    let want = "RH0:HTTP/1.1 200 OK^M\nRH0:Transfer-Encoding: chunked^M\n\
                RH0:Content-Type: text/plain^M\nRH0:^M\nRB0:hello, world\n\
                RS0: header 73 content 12 footer 18\n";
    assert_eq!(text(p), cr(want));
}

#[test]
fn selections() {
    // master `--print-request=header --print-reply=body` (A.12).
    let mut p = Printer::new(Vec::new(), Some(PrintWhat::Header), Some(PrintWhat::Body));
    assert!(p.prints_requests() && p.prints_replies());
    p.request(0, b"POST / HTTP/1.0\r\n\r\nbody", 19);
    p.reply_header(0, b"HTTP/1.0 200 OK\r\n\r\n");
    p.reply_body(0, b"|httperf/0.9.1|||GET|\n");
    p.reply_done(0, 148, 22, 0);
    let want = "SH0:POST / HTTP/1.0^M\nSH0:^M\nSS0: header 19 content 4\n\
                RB0:|httperf/0.9.1|||GET|\nRS0: header 148 content 22 footer 0\n";
    assert_eq!(text(p), cr(want));

    let mut p = Printer::new(Vec::new(), Some(PrintWhat::Body), None);
    assert!(!p.prints_replies());
    p.request(7, b"POST / HTTP/1.1\r\n\r\nx\ny", 19);
    p.reply_header(7, b"HTTP/1.1 200 OK\r\n");
    p.reply_body(7, b"partial");
    p.reply_done(7, 1, 2, 3);
    p.reply_abort(7);
    assert_eq!(text(p), "SB7:x\nSB7:y\nSS7: header 19 content 3\n");

    let mut p = Printer::new(Vec::new(), None, Some(PrintWhat::Header));
    p.request(1, b"GET / HTTP/1.1\r\n\r\n", 18);
    p.reply_header(1, b"HTTP/1.1 200 OK\r\n\r\n");
    p.reply_body(1, b"body\n");
    p.reply_done(1, 19, 5, 0);
    let want = "RH1:HTTP/1.1 200 OK^M\nRH1:^M\nRS1: header 19 content 5 footer 0\n";
    assert_eq!(text(p), cr(want));
}

/// Output for a reply given as the listed header and body pieces.
fn pieces(head: &[&[u8]], body: &[&[u8]]) -> String {
    let mut p = both();
    for h in head {
        p.reply_header(9, h);
    }
    for b in body {
        p.reply_body(9, b);
    }
    p.reply_done(9, 1, 2, 3);
    text(p)
}

#[test]
fn every_split_gives_the_same_output() {
    let head = A7_HEAD.as_bytes();
    let body: &[u8] = b"line one\r\nline two\n\nlast without newline";
    let whole = pieces(&[head], &[body]);
    assert!(whole.contains("RB9:last without newline\nRS9:"), "{whole}");
    for k in 0..=head.len() {
        let got = pieces(&[&head[..k], &head[k..]], &[body]);
        assert_eq!(got, whole, "header split at {k}");
    }
    for k in 0..=body.len() {
        let got = pieces(&[head], &[&body[..k], &body[k..]]);
        assert_eq!(got, whole, "body split at {k}");
    }
    for k in 0..body.len() {
        for m in k..=body.len() {
            let got = pieces(&[head], &[&body[..k], &body[k..m], &body[m..]]);
            assert_eq!(got, whole, "body split at {k}, {m}");
        }
    }
    let singles_h: Vec<&[u8]> = head.chunks(1).collect();
    let singles_b: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(pieces(&singles_h, &singles_b), whole);
}

#[test]
fn interleaved_calls_keep_their_own_fragments() {
    let mut p = both();
    p.reply_header(1, b"HTTP/1.1 200 OK\r\nA: ");
    p.reply_header(2, b"HTTP/1.1 404 Not");
    p.reply_header(1, b"1\r\n\r\n");
    p.reply_header(2, b" Found\r\n\r\n");
    p.reply_body(2, b"two");
    p.reply_body(1, b"one");
    p.reply_done(1, 10, 3, 0);
    p.reply_done(2, 10, 3, 0);
    let want = "RH1:HTTP/1.1 200 OK^M\nRH1:A: 1^M\nRH1:^M\n\
                RH2:HTTP/1.1 404 Not Found^M\nRH2:^M\n\
                RB1:one\nRS1: header 10 content 3 footer 0\n\
                RB2:two\nRS2: header 10 content 3 footer 0\n";
    assert_eq!(text(p), cr(want));
}

#[test]
fn abort_flushes_and_forgets() {
    let mut p = both();
    p.reply_header(5, b"HTTP/1.1 2");
    p.reply_abort(5);
    p.reply_abort(5);
    assert!(p.pending.is_empty());
    p.reply_header(6, b"HTTP/1.1 200 OK\r\n\r\n");
    p.reply_body(6, b"cut");
    p.reply_abort(6);
    assert!(p.pending.is_empty());
    assert_eq!(
        text(p),
        cr("RH5:HTTP/1.1 2\nRH6:HTTP/1.1 200 OK^M\nRH6:^M\nRB6:cut\n")
    );
}

#[test]
fn header_fragment_is_not_continued_by_body() {
    let mut p = both();
    p.reply_header(0, b"HTTP/1.1 200 OK\r\nX: y");
    p.reply_body(0, b"body\n");
    p.reply_done(0, 1, 5, 0);
    assert_eq!(
        text(p),
        cr("RH0:HTTP/1.1 200 OK^M\nRH0:X: y\nRB0:body\nRS0: header 1 content 5 footer 0\n")
    );
}

#[test]
fn long_fragments_are_bounded() {
    let mut p = both();
    let big = vec![b'x'; MAX_PENDING + 1];
    p.reply_body(0, &big[..10]);
    p.reply_body(0, &big[10..]);
    assert!(p.pending.is_empty());
    p.reply_body(0, b"y\n");
    p.reply_done(0, 0, 0, 0);
    let want = format!(
        "RB0:{}\nRB0:y\nRS0: header 0 content 0 footer 0\n",
        "x".repeat(MAX_PENDING + 1)
    );
    assert_eq!(text(p), want);
}

#[test]
fn binary_bytes_are_printed_as_they_are() {
    let mut p = both();
    let all: Vec<u8> = (0..=255u8).collect();
    p.request(0, &all, 100);
    p.reply_body(0, &all);
    p.reply_done(0, 0, 256, 0);
    let out = p.into_inner();
    let count = |b: u8| out.iter().filter(|&&c| c == b).count();
    // Each of the two copies shows every byte once, except that `\n` ends lines.
    assert_eq!(count(0xff), 2);
    assert_eq!(count(0), 2);
    assert!(out.ends_with(b"RS0: header 0 content 256 footer 0\n"));
}

struct Broken;

impl Write for Broken {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn write_errors_are_kept_not_raised() {
    let mut p = Printer::new(Broken, Some(PrintWhat::Both), Some(PrintWhat::Both));
    p.request(0, b"GET / HTTP/1.1\r\n\r\n", 18);
    p.reply_body(0, b"x\ny");
    p.reply_done(0, 1, 2, 3);
    p.flush();
    assert_eq!(
        p.take_error().map(|e| e.kind()),
        Some(io::ErrorKind::BrokenPipe)
    );
    assert!(p.take_error().is_none());
}
