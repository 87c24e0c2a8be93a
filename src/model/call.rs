//! Calls: what one request is (`CallRef`), its bookkeeping on a connection (`Call`),
//! and rendering its bytes (`Requests`).
//!
//! Owns the request layout of docs/compatibility.md §4.3 for every workload: a fixed
//! `--uri`, `--wlog` entries, `--wset` files, `--wsesslog` template requests and the
//! URIs a `--wsesspage` session found (rendered from the session's own store), with the
//! per-session `Cookie:` header inserted at issue time; and requests given as parts by
//! front ends with a layout of their own (`RequestParts`: ab, lb). A request body is
//! read once and shared (`Body`), never copied per call but into the send buffer.
//! Rendering appends to a connection's send buffer, so the steady state allocates
//! nothing. Called by the engine when it queues a call; knows nothing about sockets.
//!
//! With `--http-version 2` the same request becomes an HPACK header block
//! (`render_h2`): pseudo-headers `:method`, `:scheme`, `:path` (the URI) and
//! `:authority` (the `Host:` value; none with `--no-host-hdr`), then the header lines
//! lowercased, without the connection-specific ones HTTP/2 forbids (`Connection`,
//! `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding`, `Upgrade`, `Host`, `TE` other
//! than `trailers`), staged as a plain field list (`http2::encoder::put_plain`) that
//! the connection HPACK-encodes when the stream opens. The constant lines are
//! rendered once per request shape; a call only adds its URI, host and cookie.

use std::sync::Arc;
use std::time::Instant;

use crate::model::config::{Config, HttpVersion};
use crate::wire::http2::encoder;

/// The User-Agent product token (`rshperf/0.1.0`: as long as `httperf/0.9.0`, so
/// request sizes match httperf's).
pub(crate) const USER_AGENT: &str = concat!("rshperf/", env!("CARGO_PKG_VERSION"));

/// Which request a call sends; enough to render it again (for re-sending the
/// unanswered calls of a failed connection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallRef {
    /// `--method` `--uri`.
    Fixed,
    /// A URI chosen by the URI generator (`--wlog` entry or `--wset` file), by index
    /// into `Requests::uris`.
    Uri(u32),
    /// Request `n` of the flattened `--wsesslog` templates.
    Template(u32),
    /// URI `n` of the current page view of a `--wsesspage` session (the session holds
    /// it; rendered with `Requests::render_uri`).
    Page(u32),
}

/// One call queued on a connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call {
    /// Process-wide call number (the `<id>` of `--print-*` lines).
    pub(crate) id: u64,
    /// What it requests.
    pub(crate) what: CallRef,
    /// Request length in bytes.
    pub(crate) len: usize,
    /// Length of its header block (the request line and headers): once these bytes
    /// are written the call counts as a request.
    pub(crate) head_len: usize,
    /// The method is exactly `HEAD` (no reply body).
    pub(crate) head: bool,
    /// When it became the head of the send queue (response time starts here).
    pub(crate) send_start: Instant,
    /// When its request was completely written.
    pub(crate) written: Option<Instant>,
    /// When it was due: its scheduled time under `--call-rate` (response time and
    /// lateness of the pool are measured from it), else when it was issued.
    pub(crate) due: Instant,
    /// How many times it was re-issued after a failure status (`--retry-on-failure`).
    pub(crate) retries: u8,
    /// Its HTTP/2 stream id once it has one (0: none; the request log).
    pub(crate) stream: u32,
    /// Request bytes written when its connection gave it up unanswered (the request
    /// log; set by `Conn::drain_calls`).
    pub(crate) sent: u32,
    /// HTTP/2 and HTTP/3: its stream's final status arrived, so if it is given up now
    /// it was being answered (cut short, or open at the end), not unanswered. (A call
    /// sent again is a new `Call`.)
    pub(crate) begun: bool,
}

/// A request body: read once, shared by every call that sends it.
pub(crate) type Body = Arc<[u8]>;

/// Reads a body file once (`--body-file`, ab's `-p`/`-u`); every call then shares it.
pub(crate) fn read_body(path: &str) -> std::io::Result<Body> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let len = usize::try_from(file.metadata()?.len())
        .map_err(|_| std::io::Error::other("too large for memory"))?;
    // Read straight into the shared allocation (a `Vec` turned into an `Arc` would be
    // copied: two bodies in memory at start).
    let mut body: Body = std::iter::repeat_n(0u8, len).collect();
    let buf = Arc::get_mut(&mut body).expect("a new Arc has one owner");
    file.read_exact(buf)?;
    // A file that grew since `metadata` is sent as it was; one that shrank fails above.
    Ok(body)
}

/// Where a request is rendered: bytes are appended, a body is appended or, by a
/// connection's send queue, shared (`conn::send::SendQueue`).
pub(crate) trait RequestSink {
    /// The byte buffer to append header bytes to.
    fn bytes(&mut self) -> &mut Vec<u8>;
    /// Appends `body` after the bytes so far.
    fn body(&mut self, body: &Body);
}

impl RequestSink for Vec<u8> {
    fn bytes(&mut self) -> &mut Vec<u8> {
        self
    }

    fn body(&mut self, body: &Body) {
        self.extend_from_slice(body);
    }
}

/// A request split around the URI so any URI can be rendered without allocation:
/// `method SP uri suffix [Cookie] CRLF body`.
#[derive(Debug, Clone)]
struct Shape {
    method: Vec<u8>,
    /// ` HTTP/1.x\r\n` and the header lines before `Host:`.
    pre_host: Vec<u8>,
    /// The header lines after `Host:`, without the final blank line.
    post_host: Vec<u8>,
    body: Body,
    head: bool,
    /// HTTP/2: `:method` and the header lines as plain field lists
    /// (`encoder::put_plain`), and the lines as (lowercase name, value) pairs for
    /// printing.
    h2_method: Vec<u8>,
    h2_fixed: Vec<u8>,
    h2_fields: Vec<(Vec<u8>, Vec<u8>)>,
    /// Σ name + value over `:method` and `h2_fields`.
    h2_fixed_size: usize,
}

/// Header names HTTP/2 forbids in requests (RFC 9113 §8.2.2), and `host`, which
/// becomes `:authority`.
const H2_DROPPED: [&str; 6] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "host",
];

impl Shape {
    fn new(method: &str, pre_host: Vec<u8>, post_host: Vec<u8>, body: Body) -> Shape {
        let mut s = Shape {
            method: method.as_bytes().to_vec(),
            head: method == "HEAD",
            body,
            h2_method: Vec::new(),
            h2_fixed: Vec::new(),
            h2_fields: Vec::new(),
            h2_fixed_size: ":method".len() + method.len(),
            pre_host,
            post_host,
        };
        encoder::put_plain(&mut s.h2_method, b":method", method.as_bytes());
        // The header lines after the request line, before and after Host:.
        let lines = s.pre_host.splitn(2, |&b| b == b'\n').nth(1).unwrap_or(&[]);
        let all: Vec<u8> = [lines, &s.post_host].concat();
        for line in all.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                continue;
            };
            let name = line[..colon].to_ascii_lowercase();
            let value = line[colon + 1..].trim_ascii();
            let te_ok = name != b"te" || value.eq_ignore_ascii_case(b"trailers");
            if name.is_empty() || !te_ok || H2_DROPPED.iter().any(|d| d.as_bytes() == name) {
                continue;
            }
            encoder::put_plain(&mut s.h2_fixed, &name, value);
            s.h2_fixed_size += name.len() + value.len();
            s.h2_fields.push((name, value.to_vec()));
        }
        s
    }
}

/// One HTTP/2 request rendered by `Requests::render_h2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct H2Request {
    /// Bytes of the plain field list (`encoder::put_plain`).
    pub(crate) block: usize,
    /// Bytes of the body (after the block).
    pub(crate) body: usize,
    /// Σ name + value over its header fields (the decoded size).
    pub(crate) decoded: usize,
}

/// A request given as its parts by a front end with its own header layout (ab, lb):
/// `method SP uri`, `head` (the rest of the request line and the header lines before
/// `Host:`), `Host: <target>` when `send_host`, `tail` (the header lines after it), a
/// blank line, then `body`.
#[derive(Debug, Clone)]
pub(crate) struct RequestParts {
    /// The method.
    pub(crate) method: String,
    /// The URI of the fixed request (targets may have their own: `Requests::uris`).
    pub(crate) uri: String,
    /// ` HTTP/1.x\r\n` and the header lines before `Host:`.
    pub(crate) head: Vec<u8>,
    /// The header lines after `Host:`.
    pub(crate) tail: Vec<u8>,
    /// The body (shared; empty for none).
    pub(crate) body: Body,
    /// Whether to send `Host: <target host>` (false when the user gave their own).
    pub(crate) send_host: bool,
}

/// Everything needed to render any call of the run.
#[derive(Debug, Clone)]
pub(crate) struct Requests {
    fixed: Shape,
    fixed_uri: Vec<u8>,
    /// URIs of `CallRef::Uri` calls.
    pub(crate) uris: Vec<String>,
    templates: Vec<(Shape, Vec<u8>)>,
    no_host: bool,
    /// `:scheme` for HTTP/2 (`https` under `--ssl`).
    https: bool,
}

/// The header lines around `Host:` (which is per target, see `--servers`).
fn header_lines(cfg: &Config, extra: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut r = Vec::with_capacity(96);
    match cfg.request().http_version() {
        // HTTP/2 requests are rendered from the same lines by `render_h2`.
        HttpVersion::V11 | HttpVersion::V2 | HttpVersion::V3 => {
            r.extend_from_slice(b" HTTP/1.1\r\n")
        }
        HttpVersion::V10 => r.extend_from_slice(b" HTTP/1.0\r\n"),
    }
    r.extend_from_slice(b"User-Agent: ");
    r.extend_from_slice(USER_AGENT.as_bytes());
    r.extend_from_slice(b"\r\n");
    if cfg.request().http_version() == HttpVersion::V10 {
        r.extend_from_slice(b"Connection: keep-alive\r\n");
    }
    let mut post = cfg.request().add_header().to_vec();
    post.extend_from_slice(extra);
    (r, post)
}

/// A template request: `method` `uri` with header lines `add_header_file` and
/// `body` (with its `Content-length:`).
fn template(
    cfg: &Config,
    add_header_file: &[u8],
    method: &str,
    uri: &str,
    body: &[u8],
) -> (Shape, Vec<u8>) {
    let mut extra = add_header_file.to_vec();
    if !body.is_empty() {
        extra.extend_from_slice(format!("Content-length: {}\r\n", body.len()).as_bytes());
    }
    let (pre_host, post_host) = header_lines(cfg, &extra);
    let shape = Shape::new(method, pre_host, post_host, Body::from(body));
    (shape, uri.as_bytes().to_vec())
}

impl Requests {
    /// The fixed request of `cfg` (`--method`, `--uri`, `--add-header`), with header
    /// lines `extra` (`--add-header-file`, `--header-file`, `--content-type`).
    pub(crate) fn new(cfg: &Config, extra: &[u8]) -> Requests {
        Requests::with_body(cfg, extra, Body::from(&[][..]))
    }

    /// Like `new`, with a body (`--body-file`; `extra` then holds its
    /// `Content-Length:` line).
    pub(crate) fn with_body(cfg: &Config, extra: &[u8], body: Body) -> Requests {
        let (pre_host, post_host) = header_lines(cfg, extra);
        let fixed = Shape::new(cfg.request().method(), pre_host, post_host, body);
        Requests {
            fixed,
            fixed_uri: cfg.target().uri().as_bytes().to_vec(),
            no_host: cfg.request().no_host_hdr(),
            https: cfg.tls().enabled(),
            uris: Vec::new(),
            templates: Vec::new(),
        }
    }

    /// The request of `parts` as the fixed request (`CallRef::Fixed`; `CallRef::Uri(i)`
    /// renders it with `uris[i]`).
    pub(crate) fn from_parts(parts: RequestParts) -> Requests {
        Requests {
            fixed: Shape::new(&parts.method, parts.head, parts.tail, parts.body),
            fixed_uri: parts.uri.into_bytes(),
            uris: Vec::new(),
            templates: Vec::new(),
            no_host: !parts.send_host,
            // ab and lb speak HTTP/1.x only.
            https: false,
        }
    }

    /// Adds a template request (`--wsesslog`, `replay`); returns its `CallRef`.
    pub(crate) fn add_template(
        &mut self,
        cfg: &Config,
        add_header_file: &[u8],
        method: &str,
        uri: &str,
        body: &[u8],
    ) -> CallRef {
        let t = template(cfg, add_header_file, method, uri, body);
        self.templates.push(t);
        CallRef::Template(u32::try_from(self.templates.len() - 1).unwrap_or(u32::MAX))
    }

    /// Makes template `i` (one `add_template` made) the given request, in place
    /// (`replay` reuses the templates of answered calls); None: no such template.
    pub(crate) fn set_template(
        &mut self,
        i: u32,
        cfg: &Config,
        add_header_file: &[u8],
        request: (&str, &str, &[u8]),
    ) -> Option<CallRef> {
        let (method, uri, body) = request;
        let t = template(cfg, add_header_file, method, uri, body);
        *self.templates.get_mut(i as usize)? = t;
        Some(CallRef::Template(i))
    }

    /// Adds the fixed request (`--method`, `--uri`, header lines `extra`) with `body`
    /// and its `Content-Length:` (a `--body-lines` line); returns its `CallRef`.
    pub(crate) fn add_fixed_with_body(
        &mut self,
        cfg: &Config,
        extra: &[u8],
        body: Body,
    ) -> CallRef {
        let mut lines = extra.to_vec();
        lines.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
        let (pre_host, post_host) = header_lines(cfg, &lines);
        let shape = Shape::new(cfg.request().method(), pre_host, post_host, body);
        self.templates.push((shape, self.fixed_uri.clone()));
        CallRef::Template(u32::try_from(self.templates.len() - 1).unwrap_or(u32::MAX))
    }

    fn shape(&self, what: CallRef) -> (&Shape, &[u8]) {
        match what {
            CallRef::Fixed => (&self.fixed, &self.fixed_uri),
            CallRef::Uri(i) => (
                &self.fixed,
                self.uris.get(i as usize).map_or(&[][..], |u| u.as_bytes()),
            ),
            CallRef::Template(i) => match self.templates.get(i as usize) {
                Some((s, u)) => (s, u),
                None => (&self.fixed, &self.fixed_uri),
            },
            // The URI is the session's; `render_uri` supplies it.
            CallRef::Page(_) => (&self.fixed, &self.fixed_uri),
        }
    }

    /// The URI `what` requests (empty for a `--wsesspage` object: the session's).
    pub(crate) fn uri(&self, what: CallRef) -> &[u8] {
        match what {
            CallRef::Page(_) => &[],
            _ => self.shape(what).1,
        }
    }

    /// Whether `what` is a HEAD request.
    pub(crate) fn is_head(&self, what: CallRef) -> bool {
        self.shape(what).0.head
    }

    /// Appends the bytes of `what` to `out`, with `Host: <host>` (unless
    /// `--no-host-hdr`) and `Cookie: <cookie>` when given; returns (total length,
    /// header length).
    pub(crate) fn render<S: RequestSink>(
        &self,
        what: CallRef,
        host: &str,
        cookie: Option<&[u8]>,
        out: &mut S,
    ) -> (usize, usize) {
        let (shape, uri) = self.shape(what);
        self.render_shape(shape, uri, host, cookie, out)
    }

    /// Like `render` for the fixed request (`--method`, headers) with another URI: the
    /// `--wsesspage` objects.
    pub(crate) fn render_uri<S: RequestSink>(
        &self,
        uri: &[u8],
        host: &str,
        cookie: Option<&[u8]>,
        out: &mut S,
    ) -> (usize, usize) {
        self.render_shape(&self.fixed, uri, host, cookie, out)
    }

    fn render_shape<S: RequestSink>(
        &self,
        shape: &Shape,
        uri: &[u8],
        host: &str,
        cookie: Option<&[u8]>,
        sink: &mut S,
    ) -> (usize, usize) {
        let out = sink.bytes();
        let start = out.len();
        out.extend_from_slice(&shape.method);
        out.push(b' ');
        out.extend_from_slice(uri);
        out.extend_from_slice(&shape.pre_host);
        if !self.no_host {
            out.extend_from_slice(b"Host: ");
            out.extend_from_slice(host.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(&shape.post_host);
        if let Some(c) = cookie {
            out.extend_from_slice(b"Cookie: ");
            out.extend_from_slice(c);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        let header = out.len() - start;
        sink.body(&shape.body);
        (header + shape.body.len(), header)
    }

    /// HTTP/2: appends the header fields of `what` to `block` as a plain field list
    /// (`encoder::put_plain`; HPACK-encoded when its stream opens), then its body
    /// (see the module header for the fields).
    pub(crate) fn render_h2(
        &self,
        what: CallRef,
        host: &str,
        cookie: Option<&[u8]>,
        block: &mut Vec<u8>,
    ) -> H2Request {
        let (shape, uri) = self.shape(what);
        let start = block.len();
        let mut decoded = shape.h2_fixed_size + ":path".len() + uri.len() + ":scheme".len();
        block.extend_from_slice(&shape.h2_method);
        let scheme: &[u8] = if self.https { b"https" } else { b"http" };
        encoder::put_plain(block, b":scheme", scheme);
        decoded += scheme.len();
        encoder::put_plain(block, b":path", uri);
        if !self.no_host {
            encoder::put_plain(block, b":authority", host.as_bytes());
            decoded += ":authority".len() + host.len();
        }
        block.extend_from_slice(&shape.h2_fixed);
        if let Some(c) = cookie {
            encoder::put_plain(block, b"cookie", c);
            decoded += "cookie".len() + c.len();
        }
        let len = block.len() - start;
        block.extend_from_slice(&shape.body);
        H2Request {
            block: len,
            body: shape.body.len(),
            decoded,
        }
    }

    /// HTTP/2: appends `what` as text for `--print-request`: one `name: value` line
    /// per field (pseudo-headers first), a blank line, the body; returns the header
    /// length.
    pub(crate) fn render_h2_text(
        &self,
        what: CallRef,
        host: &str,
        cookie: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) -> usize {
        let (shape, uri) = self.shape(what);
        let start = out.len();
        let scheme: &[u8] = if self.https { b"https" } else { b"http" };
        let mut line = |n: &[u8], v: &[u8]| {
            out.extend_from_slice(n);
            out.extend_from_slice(b": ");
            out.extend_from_slice(v);
            out.extend_from_slice(b"\r\n");
        };
        line(b":method", &shape.method);
        line(b":scheme", scheme);
        line(b":path", uri);
        if !self.no_host {
            line(b":authority", host.as_bytes());
        }
        for (n, v) in &shape.h2_fields {
            line(n, v);
        }
        if let Some(c) = cookie {
            line(b"cookie", c);
        }
        out.extend_from_slice(b"\r\n");
        let header = out.len() - start;
        out.extend_from_slice(&shape.body);
        header
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::config::ConfigBuilder;

    /// `--server 127.0.0.1` with what `edit` sets.
    fn cfg(edit: impl FnOnce(&mut ConfigBuilder)) -> Config {
        Config::local(edit)
    }

    #[test]
    fn fixed_request_matches_httperf_layout() {
        let c = cfg(|b| {
            b.uri("/1k.html");
        });
        let r = Requests::new(&c, b"");
        let mut out = Vec::new();
        let (len, header) = r.render(CallRef::Fixed, "127.0.0.1", None, &mut out);
        assert_eq!(
            out,
            b"GET /1k.html HTTP/1.1\r\nUser-Agent: rshperf/0.1.0\r\nHost: 127.0.0.1\r\n\r\n"
        );
        assert_eq!((len, header), (69, 69));
    }

    #[test]
    fn template_with_body_cookie_and_http10() {
        let c = cfg(|b| {
            b.http_version(HttpVersion::V10).add_header("X-A: 1\\n");
        });
        let mut r = Requests::new(&c, b"");
        let t = r.add_template(&c, b"", "POST", "/echo", b"a b\nc");
        let mut out = b"prefix".to_vec();
        let (len, header) = r.render(t, "127.0.0.1", Some(b"sid=abc123"), &mut out);
        let want = "POST /echo HTTP/1.0\r\nUser-Agent: rshperf/0.1.0\r\nConnection: keep-alive\r\nHost: 127.0.0.1\r\nX-A: 1\r\nContent-length: 5\r\nCookie: sid=abc123\r\n\r\na b\nc";
        assert_eq!(&out[6..], want.as_bytes());
        assert_eq!(len, want.len());
        assert_eq!(header, want.len() - 5);
        assert!(!r.is_head(t));
    }

    #[test]
    fn parts_render_around_host_and_share_the_body() {
        let body = Body::from(&b"k=v&x=1"[..]);
        let mut r = Requests::from_parts(RequestParts {
            method: "POST".into(),
            uri: "/form".into(),
            head: b" HTTP/1.0\r\nContent-length: 7\r\n".to_vec(),
            tail: b"Accept: */*\r\n".to_vec(),
            body: body.clone(),
            send_host: true,
        });
        r.uris = vec!["/a".into(), "/b".into()];
        let mut out = Vec::new();
        let (len, header) = r.render(CallRef::Uri(1), "h:81", None, &mut out);
        let want =
            "POST /b HTTP/1.0\r\nContent-length: 7\r\nHost: h:81\r\nAccept: */*\r\n\r\nk=v&x=1";
        assert_eq!(out, want.as_bytes());
        assert_eq!((len, header), (want.len(), want.len() - 7));
        // Two owners of the body: the test's and the request's, not a copy per call.
        assert_eq!(Arc::strong_count(&body), 2);
        let mut no_host = r.clone();
        no_host.no_host = true;
        out.clear();
        no_host.render(CallRef::Fixed, "h:81", None, &mut out);
        assert!(out.starts_with(b"POST /form HTTP/1.0\r\nContent-length: 7\r\nAccept"));
        assert!(!r.is_head(CallRef::Fixed));
    }

    #[test]
    fn http2_requests_decode_to_the_fields() {
        let c = cfg(|b| {
            b.http_version(HttpVersion::V2)
                .tls()
                .add_header("X-A: 1\\nConnection: close\\nTE: trailers\\n");
        });
        let mut r = Requests::new(&c, b"");
        let t = r.add_template(&c, b"", "POST", "/echo", b"a b");
        let mut block = Vec::new();
        let req = r.render_h2(t, "h:1", Some(b"sid=1"), &mut block);
        assert_eq!(block.split_off(req.block), b"a b");
        assert_eq!(req.body, 3);
        let mut fields = Vec::new();
        let mut size = 0;
        let mut enc = encoder::Encoder::default();
        let mut hpack = Vec::new();
        enc.encode(&block, &mut hpack);
        crate::wire::http2::hpack::Decoder::new(4096)
            .decode(&hpack, |n, v| {
                size += n.len() + v.len();
                fields.push(format!(
                    "{}: {}",
                    String::from_utf8_lossy(n),
                    String::from_utf8_lossy(v)
                ));
            })
            .expect("valid block");
        let text = fields.join("\r\n") + "\r\n\r\n";
        assert_eq!(
            text,
            ":method: POST\r\n:scheme: https\r\n:path: /echo\r\n:authority: h:1\r\n\
             user-agent: rshperf/0.1.0\r\nx-a: 1\r\nte: trailers\r\ncontent-length: 3\r\n\
             cookie: sid=1\r\n\r\n"
        );
        assert_eq!(req.decoded, size);
        let mut printed = Vec::new();
        let header = r.render_h2_text(t, "h:1", Some(b"sid=1"), &mut printed);
        assert_eq!(&printed[..header], text.as_bytes());
        assert_eq!(&printed[header..], b"a b");
        // The fixed GET / without a Host: static indexes, then user-agent added to
        // the table; the second time all indexed.
        let c = cfg(|b| {
            b.http_version(HttpVersion::V2).uri("/").no_host_hdr(true);
        });
        let r = Requests::new(&c, b"");
        block.clear();
        r.render_h2(CallRef::Fixed, "x", None, &mut block);
        let mut enc = encoder::Encoder::default();
        hpack.clear();
        enc.encode(&block, &mut hpack);
        assert_eq!(&hpack[..4], [0x82, 0x86, 0x84, 0x40 | 58]);
        hpack.clear();
        enc.encode(&block, &mut hpack);
        assert_eq!(hpack, [0x82, 0x86, 0x84, 0xbe]);
    }

    #[test]
    fn uri_calls_use_the_generated_uri() {
        let c = cfg(|b| {
            b.method("HEAD");
        });
        let mut r = Requests::new(&c, b"");
        r.uris.push("/wset/0/1.html".into());
        let mut out = Vec::new();
        r.render(CallRef::Uri(0), "127.0.0.1", None, &mut out);
        assert!(out.starts_with(b"HEAD /wset/0/1.html HTTP/1.1\r\n"));
        assert!(r.is_head(CallRef::Uri(0)));
    }

    #[test]
    fn page_calls_render_the_given_uri_with_the_fixed_headers() {
        let c = cfg(|b| {
            b.uri("/page/index.html").add_header("X-A: 1\\n");
        });
        let r = Requests::new(&c, b"");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        r.render(CallRef::Fixed, "h", Some(b"s=1"), &mut a);
        let (len, header) = r.render_uri(b"/page/index.html", "h", Some(b"s=1"), &mut b);
        assert_eq!(a, b);
        assert_eq!((len, header), (b.len(), b.len()));
        b.clear();
        r.render_uri(b"/page/a.png", "h", None, &mut b);
        assert_eq!(
            b,
            b"GET /page/a.png HTTP/1.1\r\nUser-Agent: rshperf/0.1.0\r\nHost: h\r\nX-A: 1\r\n\r\n"
        );
        assert!(!r.is_head(CallRef::Page(3)));
    }
}
