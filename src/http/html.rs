//! `--wsesspage` reply scanning: which objects a reply embeds and where it redirects.
//!
//! Owns `PageScan`, one per connection of a `--wsesspage` session, fed by the
//! connection with the raw header-block and body pieces of each reply (split anywhere)
//! and told when a reply completes. It keeps, per call, the references found: the
//! `src` of `img`, `frame` and `iframe` start tags in a `text/html` body, and the
//! `Location` of a redirect (301, 302, 303, 307, 308, whose body is then not scanned,
//! as a browser does not render it). It neither resolves them (`workload::page`) nor
//! fetches them (`engine::page` takes them when it handles the call's completion).
//!
//! The tokenizer is html5ever's (Servo's WHATWG tokenizer), chosen because its `feed`
//! is push-based and keeps its state between calls: replies arrive in pieces, and a tag
//! split at any byte is still found, with either quote kind or none, any letter case,
//! character references decoded, comments skipped, and the contents of `script`,
//! `style`, `textarea`, `title`, `xmp`, `iframe`, `noembed`, `noframes` and `noscript`
//! read as text (this sink switches the tokenizer as html5ever's tree builder would).
//! html5gum and tl need the whole document at once (html5gum's reader cannot suspend
//! mid-token); lol_html streams too but rewrites and re-serialises every byte and
//! brings a CSS selector engine (about 50 crates against html5ever's 18).
//!
//! Bounded memory: a body is decoded as UTF-8 (invalid bytes become U+FFFD, a sequence
//! split across reads is carried); a reply keeps at most `MAX_REFS` references of at
//! most `MAX_REF` bytes each and `MAX_TEXT` bytes in all (longer ones are skipped: in
//! practice they are inline `data:` images, which are never fetched); if the tokenizer
//! has been given `MAX_PENDING` bytes without completing a token (an endless tag,
//! attribute value or comment), the rest of that body is not scanned. Either limit is
//! reported once per run by the engine (`take_limit`). Header lines longer than
//! `MAX_LINE` are not examined.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, StartTag, TagToken, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::{local_name, LocalName};

/// Most references kept per reply.
pub const MAX_REFS: usize = 512;
/// Longest reference kept (bytes).
pub const MAX_REF: usize = 8192;
/// Most bytes of references kept per reply.
pub const MAX_TEXT: usize = 256 * 1024;
/// Bytes the tokenizer may hold in one unfinished token before the scan gives up.
pub const MAX_PENDING: usize = 1024 * 1024;
/// Longest header line examined.
const MAX_LINE: usize = 16 * 1024;

/// A limit that cut a scan short (reported once per run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A reply had more than `MAX_REFS` references (or `MAX_TEXT` bytes of them).
    Refs,
    /// A token longer than `MAX_PENDING` bytes: the rest of the body was not scanned.
    Pending,
}

impl Limit {
    /// What happened, for the one-line warning.
    pub fn describe(self) -> String {
        match self {
            Limit::Refs => format!(
                "a page embeds more than {MAX_REFS} objects (or {} KiB of URIs); only the \
                 first are fetched",
                MAX_TEXT / 1024
            ),
            Limit::Pending => format!(
                "a page holds a tag or comment longer than {} MiB; the rest of it is not \
                 scanned",
                MAX_PENDING / (1024 * 1024)
            ),
        }
    }
}

/// One reference: which call's reply it came from, and its text in `Found::text`.
#[derive(Debug, Clone, Copy)]
struct Ref {
    call: u64,
    start: usize,
    end: usize,
}

/// References of the replies not yet taken, in call order.
#[derive(Debug, Default)]
struct Found {
    text: String,
    refs: Vec<Ref>,
    /// Count and bytes of the references of the reply being received.
    current: (u64, usize, usize),
    limit: Option<Limit>,
}

impl Found {
    fn push(&mut self, call: u64, value: &str) {
        if value.len() > MAX_REF {
            return;
        }
        if self.current.0 != call {
            self.current = (call, 0, 0);
        }
        let (_, n, bytes) = self.current;
        if n >= MAX_REFS || bytes + value.len() > MAX_TEXT {
            self.limit.get_or_insert(Limit::Refs);
            return;
        }
        self.current = (call, n + 1, bytes + value.len());
        let start = self.text.len();
        self.text.push_str(value);
        self.refs.push(Ref {
            call,
            start,
            end: self.text.len(),
        });
    }
}

/// The tokenizer's sink: records embedded objects and switches to raw text where the
/// tree builder would.
struct Collector {
    found: Rc<RefCell<Found>>,
    call: u64,
    tokens: Cell<u64>,
}

impl TokenSink for Collector {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        self.tokens.set(self.tokens.get() + 1);
        let TagToken(tag) = token else {
            return TokenSinkResult::Continue;
        };
        if tag.kind != StartTag {
            return TokenSinkResult::Continue;
        }
        let name = &tag.name;
        let embeds = *name == local_name!("img")
            || *name == local_name!("frame")
            || *name == local_name!("iframe");
        if embeds {
            let src = tag
                .attrs
                .iter()
                .find(|a| a.name.local == local_name!("src") && a.name.ns.is_empty());
            if let Some(a) = src {
                self.found.borrow_mut().push(self.call, &a.value);
            }
        }
        raw_kind(name)
    }
}

/// How the tokenizer must read what follows start tag `name` (HTML's tree
/// construction, scripting enabled).
fn raw_kind(name: &LocalName) -> TokenSinkResult<()> {
    const RAWTEXT: [LocalName; 6] = [
        local_name!("style"),
        local_name!("xmp"),
        local_name!("iframe"),
        local_name!("noembed"),
        local_name!("noframes"),
        local_name!("noscript"),
    ];
    if *name == local_name!("script") {
        TokenSinkResult::RawData(RawKind::ScriptData)
    } else if RAWTEXT.contains(name) {
        TokenSinkResult::RawData(RawKind::Rawtext)
    } else if *name == local_name!("textarea") || *name == local_name!("title") {
        TokenSinkResult::RawData(RawKind::Rcdata)
    } else if *name == local_name!("plaintext") {
        TokenSinkResult::Plaintext
    } else {
        TokenSinkResult::Continue
    }
}

/// Incremental lossy UTF-8 decoding: the same text as `String::from_utf8_lossy` of the
/// whole input, however it is split.
#[derive(Debug, Default)]
struct Utf8Carry {
    carry: [u8; 4],
    len: usize,
}

impl Utf8Carry {
    /// Appends the text of `bytes` (after what was carried) to `out`.
    fn decode(&mut self, mut bytes: &[u8], out: &mut String) {
        if self.len > 0 {
            // Complete (or reject) the sequence carried from the last piece.
            let mut tmp = [0u8; 8];
            tmp[..self.len].copy_from_slice(&self.carry[..self.len]);
            let take = bytes.len().min(4);
            tmp[self.len..self.len + take].copy_from_slice(&bytes[..take]);
            let all = &tmp[..self.len + take];
            let used = match std::str::from_utf8(all) {
                Ok(_) => all.len(),
                Err(e) if e.valid_up_to() > 0 => e.valid_up_to(),
                Err(e) => match e.error_len() {
                    Some(n) => {
                        out.push(char::REPLACEMENT_CHARACTER);
                        n
                    }
                    None => {
                        // Still incomplete: everything so far is carried.
                        self.carry[..all.len()].copy_from_slice(all);
                        self.len = all.len();
                        return;
                    }
                },
            };
            // Only the first character (the carried one) is taken from `tmp`.
            let first = first_char_len(all, used);
            if let Ok(s) = std::str::from_utf8(&all[..first]) {
                out.push_str(s);
            }
            let from_input = first.max(self.len) - self.len;
            bytes = &bytes[from_input.min(bytes.len())..];
            self.len = 0;
        }
        loop {
            match std::str::from_utf8(bytes) {
                Ok(s) => {
                    out.push_str(s);
                    return;
                }
                Err(e) => {
                    let (good, rest) = bytes.split_at(e.valid_up_to());
                    out.push_str(std::str::from_utf8(good).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            bytes = &rest[n..];
                        }
                        None => {
                            self.carry[..rest.len()].copy_from_slice(rest);
                            self.len = rest.len();
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// Length of the first unit decoded from `all`: the first character when it is valid
/// (`used` > 0 bytes are valid), or the `used` bytes of an invalid sequence.
fn first_char_len(all: &[u8], used: usize) -> usize {
    match std::str::from_utf8(&all[..used]) {
        Ok(s) => s.chars().next().map_or(used, char::len_utf8),
        Err(_) => used,
    }
}

/// The body scan of one HTML reply.
struct Body {
    tok: Tokenizer<Collector>,
    queue: BufferQueue,
    utf8: Utf8Carry,
    text: String,
    /// Bytes fed since the sink last saw a token.
    pending: usize,
}

/// Scans the replies of one connection for embedded objects and redirects.
pub struct PageScan {
    found: Rc<RefCell<Found>>,
    line: Vec<u8>,
    line_over: bool,
    status: u16,
    html: bool,
    encoded: bool,
    location: String,
    has_location: bool,
    body_seen: bool,
    body: Option<Box<Body>>,
}

impl Default for PageScan {
    fn default() -> PageScan {
        PageScan {
            found: Rc::new(RefCell::new(Found::default())),
            line: Vec::new(),
            line_over: false,
            status: 0,
            html: false,
            encoded: false,
            location: String::new(),
            has_location: false,
            body_seen: false,
            body: None,
        }
    }
}

/// Statuses whose `Location` a browser follows (Fetch: redirect status).
fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// The value of header line `line` if its name is `name` (case-insensitive), trimmed.
fn header_value<'l>(line: &'l [u8], name: &[u8]) -> Option<&'l [u8]> {
    let colon = line.iter().position(|&b| b == b':')?;
    if !line[..colon].eq_ignore_ascii_case(name) {
        return None;
    }
    Some(line[colon + 1..].trim_ascii())
}

impl PageScan {
    /// Header-block bytes of the reply being received (interim replies included).
    pub fn header(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == b'\n' {
                if !self.line_over {
                    self.examine();
                }
                self.line.clear();
                self.line_over = false;
            } else if self.line.len() < MAX_LINE {
                self.line.push(b);
            } else {
                self.line_over = true;
            }
        }
    }

    fn examine(&mut self) {
        let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
        if line.starts_with(b"HTTP/") {
            // A status line (a final reply may follow interim ones): start afresh.
            let code = line.split(|&b| b == b' ').nth(1).unwrap_or_default();
            self.status = std::str::from_utf8(code)
                .ok()
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            self.html = false;
            self.encoded = false;
            self.has_location = false;
        } else if let Some(v) = header_value(line, b"content-type") {
            let media = v.split(|&b| b == b';').next().unwrap_or_default();
            self.html = media.trim_ascii().eq_ignore_ascii_case(b"text/html");
        } else if let Some(v) = header_value(line, b"content-encoding") {
            // Never asked for; a compressed body cannot be scanned.
            self.encoded = !v.is_empty() && !v.eq_ignore_ascii_case(b"identity");
        } else if let Some(v) = header_value(line, b"location") {
            self.location.clear();
            self.location.push_str(&String::from_utf8_lossy(v));
            self.has_location = true;
        }
    }

    /// Body bytes of the reply of call `call`.
    pub fn body(&mut self, call: u64, bytes: &[u8]) {
        if !self.body_seen {
            self.body_seen = true;
            let follow = is_redirect(self.status) && self.has_location;
            if self.html && !self.encoded && !follow {
                self.body = Some(Box::new(Body {
                    tok: Tokenizer::new(
                        Collector {
                            found: self.found.clone(),
                            call,
                            tokens: Cell::new(0),
                        },
                        TokenizerOpts::default(),
                    ),
                    queue: BufferQueue::default(),
                    utf8: Utf8Carry::default(),
                    text: String::new(),
                    pending: 0,
                }));
            }
        }
        let Some(b) = self.body.as_mut() else {
            return;
        };
        b.text.clear();
        b.utf8.decode(bytes, &mut b.text);
        if b.text.is_empty() {
            return;
        }
        b.queue.push_back(StrTendril::from_slice(&b.text));
        let before = b.tok.sink.tokens.get();
        // The sink never asks to suspend (no scripts run), so this consumes everything
        // but a few characters of look-ahead.
        let _ = b.tok.feed(&b.queue);
        if b.tok.sink.tokens.get() == before {
            b.pending += bytes.len();
        } else {
            b.pending = 0;
        }
        if b.pending > MAX_PENDING {
            self.body = None;
            self.found.borrow_mut().limit.get_or_insert(Limit::Pending);
        }
    }

    /// The reply of call `call` is complete: its redirect target is recorded, and the
    /// scanner is ready for the next reply.
    pub fn end_reply(&mut self, call: u64) {
        if is_redirect(self.status) && self.has_location {
            self.found.borrow_mut().push(call, &self.location);
        }
        self.line.clear();
        self.line_over = false;
        self.status = 0;
        self.html = false;
        self.encoded = false;
        self.has_location = false;
        self.body_seen = false;
        self.body = None;
    }

    /// Calls `f` with each reference of call `call`'s reply, in document order, and
    /// forgets them (and those of earlier calls, which nobody took).
    pub fn take(&mut self, call: u64, mut f: impl FnMut(&str)) {
        let mut found = self.found.borrow_mut();
        let Found { text, refs, .. } = &mut *found;
        let start = refs
            .iter()
            .position(|r| r.call >= call)
            .unwrap_or(refs.len());
        let end = refs[start..]
            .iter()
            .position(|r| r.call != call)
            .map_or(refs.len(), |k| start + k);
        for r in &refs[start..end] {
            f(&text[r.start..r.end]);
        }
        refs.drain(..end);
        if refs.is_empty() {
            text.clear();
        }
    }

    /// A limit that cut a scan short since the last call, if any.
    pub fn take_limit(&mut self) -> Option<Limit> {
        self.found.borrow_mut().limit.take()
    }

    /// Forgets everything (the connection slot is reused).
    pub fn clear(&mut self) {
        self.end_reply(0);
        let mut found = self.found.borrow_mut();
        found.text.clear();
        found.refs.clear();
        found.current = (0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
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
            found(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
            ),
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
    fn utf8_is_decoded_across_splits_like_from_utf8_lossy() {
        let inputs: [&[u8]; 5] = [
            "aé€😀z".as_bytes(),
            b"a\xe0\x80\x80b",
            b"\xe1\x80A\xf0\x9f\x98",
            b"\xff\xfe<img src=\xe9.png>",
            b"\xf0\x9f\x98\x80\xed\xa0\x80\xc3",
        ];
        for input in inputs {
            let want = String::from_utf8_lossy(input);
            for a in 0..=input.len() {
                for b in a..=input.len() {
                    let mut d = Utf8Carry::default();
                    let mut out = String::new();
                    d.decode(&input[..a], &mut out);
                    d.decode(&input[a..b], &mut out);
                    d.decode(&input[b..], &mut out);
                    if d.len > 0 {
                        out.push(char::REPLACEMENT_CHARACTER);
                    }
                    assert_eq!(out, want, "{input:?} cut {a} {b}");
                }
            }
        }
        assert_eq!(
            scan(HTML, b"<img src=\"\xe9t\xc3\xa9.png\">", &[]),
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
}
