//! Tests of the `--wsesspage` reply scan: every split of real pages, tag syntax,
//! content types, redirects, per-call bookkeeping, limits and random tag soup.

use super::*;

/// Feeds `head` and `body` as the reply of call 7, cut at `cuts`, and returns the
/// references found.
fn scan(head: &str, body: &[u8], cuts: &[usize]) -> Vec<String> {
    let mut p = PageScan::default();
    p.header(head.as_bytes());
    let mut from = 0;
    for &c in cuts.iter().chain(std::iter::once(&body.len())) {
        p.body(7, &body[from..c]);
        from = c;
    }
    p.end_reply(7);
    let mut out = Vec::new();
    p.take(7, |r| out.push(r.to_string()));
    out
}

const HTML: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n";

/// nginx.sh's /page/index.html.
const PAGE: &str = "<html><head><title>page</title></head><body>\n\
<p>A page with embedded objects.</p>\n\
<img src=\"a.png\" alt=\"a\">\n\
<IMG SRC=\"/page/b.png\">\n\
<img src=\"http://elsewhere.invalid/x.png\">\n\
<iframe src=\"f.html\"></iframe>\n\
<frameset><frame src=\"g.html\"></frameset>\n\
<a href=\"not-fetched.html\">a link is not an embedded object</a>\n\
</body></html>\n";

const PAGE_REFS: [&str; 5] = [
    "a.png",
    "/page/b.png",
    "http://elsewhere.invalid/x.png",
    "f.html",
    "g.html",
];

#[test]
fn finds_img_frame_and_iframe_sources_at_every_split() {
    for cut in 0..=PAGE.len() {
        assert_eq!(scan(HTML, PAGE.as_bytes(), &[cut]), PAGE_REFS, "cut {cut}");
    }
    // Every byte in its own piece.
    let ones: Vec<usize> = (1..PAGE.len()).collect();
    assert_eq!(scan(HTML, PAGE.as_bytes(), &ones), PAGE_REFS);
}

#[test]
fn tag_syntax_variants() {
    let body = "<img src=a.png><IMG\nSRC = 'b c.png'/><img alt=\"src=x.png\" src=\"d.png\">\
<iMg data-src=\"no.png\" src=&quot;e.png><img srcset=\"no.png 2x\"><img>\
<img src=\"f.png?a=1&amp;b=2\"><img src=\"f&#x2e;png\"><frame SRC=g.html>\
<iframe src=\"h.html\"><img src=\"not-in-iframe-text.png\"></iframe>\
<!-- <img src=\"comment.png\"> --><script>var s = '<img src=\"script.png\">';</script>\
<style>p{background:url(style.png)}</style><textarea><img src=t.png></textarea>\
<noscript><img src=noscript.png></noscript><svg><image href=\"svg.png\"/></svg>\
<img src=\"i.png\"><a href=\"a.html\">x</a><link rel=stylesheet href=s.css>\
<script src=\"s.js\"></script><embed src=e.swf><input type=image src=in.png>";
    let want = [
        "a.png",
        "b c.png",
        "d.png",
        "\"e.png",
        "f.png?a=1&b=2",
        "f.png",
        "g.html",
        "h.html",
        "i.png",
    ];
    assert_eq!(scan(HTML, body.as_bytes(), &[]), want);
    for cut in 0..=body.len() {
        assert_eq!(scan(HTML, body.as_bytes(), &[cut]), want, "cut {cut}");
    }
}

#[test]
fn only_text_html_bodies_are_scanned() {
    let body = b"<img src=a.png>";
    let found = |head: &str| scan(head, body, &[]);
    assert_eq!(
        found("HTTP/1.1 200 OK\r\ncontent-type:TEXT/HTML\r\n\r\n"),
        ["a.png"]
    );
    assert_eq!(
        found("HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n"),
        ["a.png"]
    );
    for head in [
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: text/htmlx\r\n\r\n",
        "HTTP/1.1 200 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 100 Continue\r\nContent-Type: text/html\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
    ] {
        assert_eq!(found(head), Vec::<String>::new(), "{head:?}");
    }
    assert_eq!(
        found("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"),
        ["a.png"]
    );
}

#[test]
fn redirects_give_their_location_and_their_body_is_not_scanned() {
    let head =
        "HTTP/1.1 302 Found\r\nContent-Type: text/html\r\nLocation:  /page/index.html \r\n\r\n";
    for cut in 0..=head.len() {
        let mut p = PageScan::default();
        p.header(&head.as_bytes()[..cut]);
        p.header(&head.as_bytes()[cut..]);
        p.body(3, b"<img src=redirect-body.png>");
        p.end_reply(3);
        let mut out = Vec::new();
        p.take(3, |r| out.push(r.to_string()));
        assert_eq!(out, ["/page/index.html"], "cut {cut}");
    }
    for status in [301, 303, 307, 308] {
        let h = format!("HTTP/1.1 {status} X\r\nlocation: http://h/x\r\n\r\n");
        assert_eq!(scan(&h, b"", &[]), ["http://h/x"], "{status}");
    }
    // A Location without a redirect status is not followed; a redirect without one
    // is an ordinary reply.
    let created = "HTTP/1.1 201 Created\r\nLocation: /new\r\nContent-Type: text/html\r\n\r\n";
    assert_eq!(scan(created, b"<img src=a.png>", &[]), ["a.png"]);
    let bare = "HTTP/1.1 302 Found\r\nContent-Type: text/html\r\n\r\n";
    assert_eq!(scan(bare, b"<img src=a.png>", &[]), ["a.png"]);
}

#[test]
fn references_are_kept_per_call_in_order() {
    let mut p = PageScan::default();
    for (call, body) in [
        (1, "<img src=one.png>"),
        (2, ""),
        (3, "<img src=three.png>"),
    ] {
        p.header(HTML.as_bytes());
        p.body(call, body.as_bytes());
        p.end_reply(call);
    }
    let mut got = Vec::new();
    p.take(3, |r| got.push(r.to_string()));
    // Call 1's reference was never taken: dropped with it.
    assert_eq!(got, ["three.png"]);
    p.take(1, |r| got.push(r.to_string()));
    assert_eq!(got, ["three.png"]);
    assert!(p.found.borrow().text.is_empty());
}

#[test]
fn bodies_are_decoded_as_utf8() {
    assert_eq!(
        scan(HTML, b"<img src=\"\xe9t\xc3\xa9.png\">", &[3, 12, 14]),
        ["\u{fffd}t\u{e9}.png"]
    );
}

#[test]
fn limits_bound_what_a_page_keeps() {
    let many = "<img src=x.png>".repeat(MAX_REFS + 10);
    let mut p = PageScan::default();
    p.header(HTML.as_bytes());
    p.body(1, many.as_bytes());
    p.end_reply(1);
    let mut n = 0;
    p.take(1, |_| n += 1);
    assert_eq!(n, MAX_REFS);
    assert_eq!(p.take_limit(), Some(Limit::Refs));
    assert_eq!(p.take_limit(), None);

    // A data: URI longer than MAX_REF is skipped, not a limit.
    let long = format!("<img src=\"data:{}\"><img src=b.png>", "a".repeat(MAX_REF));
    assert_eq!(scan(HTML, long.as_bytes(), &[]), ["b.png"]);

    // An endless comment: the scan stops once MAX_PENDING bytes are held.
    let mut p = PageScan::default();
    p.header(HTML.as_bytes());
    p.body(2, b"<img src=first.png><!--");
    let chunk = vec![b'x'; 64 * 1024];
    let mut fed = 0;
    while p.body.is_some() {
        p.body(2, &chunk);
        fed += chunk.len();
        assert!(
            fed <= MAX_PENDING + chunk.len(),
            "still scanning after {fed}"
        );
    }
    p.body(2, b"--><img src=after.png>");
    p.end_reply(2);
    let mut got = Vec::new();
    p.take(2, |r| got.push(r.to_string()));
    assert_eq!(got, ["first.png"]);
    assert_eq!(p.take_limit(), Some(Limit::Pending));

    // A huge page of ordinary text is scanned to the end.
    let mut p = PageScan::default();
    p.header(HTML.as_bytes());
    let text = "<p>lorem ipsum</p>\n".repeat(4096);
    for _ in 0..40 {
        p.body(3, text.as_bytes());
    }
    p.body(3, b"<img src=last.png>");
    p.end_reply(3);
    let mut got = Vec::new();
    p.take(3, |r| got.push(r.to_string()));
    assert_eq!(got, ["last.png"]);
    assert_eq!(p.take_limit(), None);
}

#[test]
fn clear_forgets_a_reply_in_progress() {
    let mut p = PageScan::default();
    p.header(HTML.as_bytes());
    p.body(1, b"<img src=a.png><img sr");
    p.clear();
    p.header(b"HTTP/1.1 200 OK\r\n\r\n");
    p.body(2, b"c=b.png>");
    p.end_reply(2);
    let mut got = Vec::new();
    p.take(2, |r| got.push(r.to_string()));
    p.take(1, |r| got.push(r.to_string()));
    assert!(got.is_empty(), "{got:?}");
}

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

#[test]
fn random_tag_soup_never_panics_and_is_split_invariant() {
    const PARTS: [&str; 24] = [
        "<img src=",
        "<IMG SRC=\"",
        "<iframe src='",
        "<frame src=",
        "\"",
        "'",
        ">",
        "/>",
        "<!--",
        "-->",
        "<script>",
        "</script>",
        "<title>",
        "</title>",
        "&amp;",
        "&#x2e;",
        "a.png",
        " ",
        "\n",
        "<",
        "=",
        "<![CDATA[",
        "\u{e9}",
        "<plaintext>",
    ];
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut with_refs = 0;
    for _ in 0..3000 {
        let mut body: Vec<u8> = Vec::new();
        for _ in 0..rng.below(40) {
            if rng.below(10) == 0 {
                body.push(rng.below(256) as u8);
            } else {
                body.extend_from_slice(PARTS[rng.below(PARTS.len())].as_bytes());
            }
        }
        let whole = scan(HTML, &body, &[]);
        with_refs += usize::from(!whole.is_empty());
        let ones: Vec<usize> = (1..body.len()).collect();
        assert_eq!(scan(HTML, &body, &ones), whole, "{body:?}");
        let mut cuts: Vec<usize> = (0..rng.below(4))
            .map(|_| rng.below(body.len() + 1))
            .collect();
        cuts.sort_unstable();
        assert_eq!(scan(HTML, &body, &cuts), whole, "{body:?} cut at {cuts:?}");
    }
    // The soup is not all noise: a good share of it embeds something.
    assert!(with_refs > 300, "{with_refs}");
}
