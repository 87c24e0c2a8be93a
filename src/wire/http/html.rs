//! `--wsesspage` reply scanning: which objects a reply embeds and where it redirects.
//!
//! Owns `PageScan`, one per connection of a `--wsesspage` session, fed by the
//! connection with the raw header-block and body pieces of each reply (split anywhere)
//! and told when a reply completes. It keeps, per call, the references found: the
//! `src` of `img`, `frame` and `iframe` start tags in a `text/html` body, and the
//! `Location` of a redirect (301, 302, 303, 307, 308, whose body is then not scanned,
//! as a browser does not render it). It neither resolves them (`workload::page`) nor
//! fetches them (`engine::event_loop::page` takes them when it handles the call's completion).
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

use super::lines::{header_value, Lines};
use super::utf8::Utf8Carry;

/// Most references kept per reply.
pub const MAX_REFS: usize = 512;
/// Longest reference kept (bytes).
pub const MAX_REF: usize = 8192;
/// Most bytes of references kept per reply.
pub(crate) const MAX_TEXT: usize = 256 * 1024;
/// Bytes the tokenizer may hold in one unfinished token before the scan gives up.
pub(crate) const MAX_PENDING: usize = 1024 * 1024;
/// Longest header line examined.
const MAX_LINE: usize = 16 * 1024;

/// A limit that cut a scan short (reported once per run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// A reply had more than `MAX_REFS` references (or `MAX_TEXT` bytes of them).
    Refs,
    /// A token longer than `MAX_PENDING` bytes: the rest of the body was not scanned.
    Pending,
}

impl Limit {
    /// What happened, for the one-line warning.
    pub(crate) fn describe(self) -> String {
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

/// The body scan of one HTML reply.
struct Body {
    tok: Tokenizer<Collector>,
    queue: BufferQueue,
    utf8: Utf8Carry,
    text: String,
    /// Bytes fed since the sink last saw a token.
    pending: usize,
}

/// What the header lines of the reply being received said.
#[derive(Debug, Default)]
struct Head {
    status: u16,
    html: bool,
    encoded: bool,
    location: String,
    has_location: bool,
}

impl Head {
    fn examine(&mut self, line: &[u8]) {
        if line.starts_with(b"HTTP/") {
            // A status line (a final reply may follow interim ones): start afresh.
            let code = line.split(|&b| b == b' ').nth(1).unwrap_or_default();
            let status = std::str::from_utf8(code).ok().and_then(|c| c.parse().ok());
            self.clear();
            self.status = status.unwrap_or(0);
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

    /// A redirect a browser follows (Fetch: redirect status with a `Location`).
    fn redirects(&self) -> bool {
        matches!(self.status, 301 | 302 | 303 | 307 | 308) && self.has_location
    }

    fn clear(&mut self) {
        self.status = 0;
        self.html = false;
        self.encoded = false;
        self.has_location = false;
    }
}

/// Scans the replies of one connection for embedded objects and redirects.
pub struct PageScan {
    found: Rc<RefCell<Found>>,
    lines: Lines,
    head: Head,
    body_seen: bool,
    body: Option<Box<Body>>,
}

impl Default for PageScan {
    fn default() -> PageScan {
        PageScan {
            found: Rc::new(RefCell::new(Found::default())),
            lines: Lines::default(),
            head: Head::default(),
            body_seen: false,
            body: None,
        }
    }
}

impl PageScan {
    /// Header-block bytes of the reply being received (interim replies included).
    pub fn header(&mut self, bytes: &[u8]) {
        let head = &mut self.head;
        self.lines.feed(bytes, MAX_LINE, |line| head.examine(line));
    }

    /// Body bytes of the reply of call `call`.
    pub fn body(&mut self, call: u64, bytes: &[u8]) {
        if !self.body_seen {
            self.body_seen = true;
            if self.head.html && !self.head.encoded && !self.head.redirects() {
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
        if self.head.redirects() {
            self.found.borrow_mut().push(call, &self.head.location);
        }
        self.lines.clear();
        self.head.clear();
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
    pub(crate) fn take_limit(&mut self) -> Option<Limit> {
        self.found.borrow_mut().limit.take()
    }

    /// Forgets everything (the connection slot is reused).
    pub(crate) fn clear(&mut self) {
        self.end_reply(0);
        let mut found = self.found.borrow_mut();
        found.text.clear();
        found.refs.clear();
        found.current = (0, 0, 0);
    }
}

#[cfg(test)]
mod tests;
