//! Calls: what one request is (`CallRef`), its bookkeeping on a connection (`Call`),
//! and rendering its bytes (`Requests`).
//!
//! Owns the request layout of reference §4.6 for every workload: a fixed `--uri`,
//! `--wlog` entries, `--wset` files, `--wsesslog` template requests and the URIs a
//! `--wsesspage` session found (rendered from the session's own store), with the
//! per-session `Cookie:` header inserted at issue time; and requests given as parts by
//! front ends with a layout of their own (`RequestParts`: ab, lb). A request body is
//! read once and shared (`Body`), never copied per call but into the send buffer.
//! Rendering appends to a connection's send buffer, so the steady state allocates
//! nothing. Called by the engine when it queues a call; knows nothing about sockets.

use std::sync::Arc;
use std::time::Instant;

use crate::config::{Config, HttpVersion};

/// The User-Agent product token (`rshperf/0.1.0`: as long as `httperf/0.9.0`, so
/// request sizes match httperf's).
pub const USER_AGENT: &str = concat!("rshperf/", env!("CARGO_PKG_VERSION"));

/// Which request a call sends; enough to render it again (for re-sending the
/// unanswered calls of a failed connection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallRef {
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
pub struct Call {
    /// Process-wide call number (the `<id>` of `--print-*` lines).
    pub id: u64,
    /// What it requests.
    pub what: CallRef,
    /// Request length in bytes.
    pub len: usize,
    /// The method is exactly `HEAD` (no reply body).
    pub head: bool,
    /// When it became the head of the send queue (response time starts here).
    pub send_start: Instant,
    /// When its request was completely written.
    pub written: Option<Instant>,
    /// How many times it was re-issued after a failure status (`--retry-on-failure`).
    pub retries: u8,
}

/// A request body: read once, shared by every call that sends it.
pub type Body = Arc<[u8]>;

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
}

/// A request given as its parts by a front end with its own header layout (ab, lb):
/// `method SP uri`, `head` (the rest of the request line and the header lines before
/// `Host:`), `Host: <target>` when `send_host`, `tail` (the header lines after it), a
/// blank line, then `body`.
#[derive(Debug, Clone)]
pub struct RequestParts {
    /// The method.
    pub method: String,
    /// The URI of the fixed request (targets may have their own: `Requests::uris`).
    pub uri: String,
    /// ` HTTP/1.x\r\n` and the header lines before `Host:`.
    pub head: Vec<u8>,
    /// The header lines after `Host:`.
    pub tail: Vec<u8>,
    /// The body (shared; empty for none).
    pub body: Body,
    /// Whether to send `Host: <target host>` (false when the user gave their own).
    pub send_host: bool,
}

/// Everything needed to render any call of the run.
#[derive(Debug, Clone)]
pub struct Requests {
    fixed: Shape,
    fixed_uri: Vec<u8>,
    /// URIs of `CallRef::Uri` calls.
    pub uris: Vec<String>,
    templates: Vec<(Shape, Vec<u8>)>,
    no_host: bool,
}

/// The header lines around `Host:` (which is per target, see `--servers`).
fn header_lines(cfg: &Config, extra: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut r = Vec::with_capacity(96);
    match cfg.http_version {
        HttpVersion::V11 => r.extend_from_slice(b" HTTP/1.1\r\n"),
        HttpVersion::V10 => r.extend_from_slice(b" HTTP/1.0\r\n"),
    }
    r.extend_from_slice(b"User-Agent: ");
    r.extend_from_slice(USER_AGENT.as_bytes());
    r.extend_from_slice(b"\r\n");
    if cfg.http_version == HttpVersion::V10 {
        r.extend_from_slice(b"Connection: keep-alive\r\n");
    }
    let mut post = cfg.add_header.clone();
    post.extend_from_slice(extra);
    (r, post)
}

impl Requests {
    /// The fixed request of `cfg` (`--method`, `--uri`, `--add-header`).
    pub fn new(cfg: &Config, add_header_file: &[u8]) -> Requests {
        let (pre_host, post_host) = header_lines(cfg, add_header_file);
        let fixed = Shape {
            method: cfg.method.as_bytes().to_vec(),
            pre_host,
            post_host,
            body: Body::from(&[][..]),
            head: cfg.method == "HEAD",
        };
        Requests {
            fixed,
            fixed_uri: cfg.uri.as_bytes().to_vec(),
            no_host: cfg.no_host_hdr,
            uris: Vec::new(),
            templates: Vec::new(),
        }
    }

    /// The request of `parts` as the fixed request (`CallRef::Fixed`; `CallRef::Uri(i)`
    /// renders it with `uris[i]`).
    pub fn from_parts(parts: RequestParts) -> Requests {
        Requests {
            fixed: Shape {
                head: parts.method == "HEAD",
                method: parts.method.into_bytes(),
                pre_host: parts.head,
                post_host: parts.tail,
                body: parts.body,
            },
            fixed_uri: parts.uri.into_bytes(),
            uris: Vec::new(),
            templates: Vec::new(),
            no_host: !parts.send_host,
        }
    }

    /// Adds a `--wsesslog` template request; returns its `CallRef`.
    pub fn add_template(
        &mut self,
        cfg: &Config,
        add_header_file: &[u8],
        method: &str,
        uri: &str,
        body: &[u8],
    ) -> CallRef {
        let mut extra = add_header_file.to_vec();
        if !body.is_empty() {
            extra.extend_from_slice(format!("Content-length: {}\r\n", body.len()).as_bytes());
        }
        let (pre_host, post_host) = header_lines(cfg, &extra);
        let shape = Shape {
            method: method.as_bytes().to_vec(),
            pre_host,
            post_host,
            body: Body::from(body),
            head: method == "HEAD",
        };
        self.templates.push((shape, uri.as_bytes().to_vec()));
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

    /// Whether `what` is a HEAD request.
    pub fn is_head(&self, what: CallRef) -> bool {
        self.shape(what).0.head
    }

    /// Appends the bytes of `what` to `out`, with `Host: <host>` (unless
    /// `--no-host-hdr`) and `Cookie: <cookie>` when given; returns (total length,
    /// header length).
    pub fn render(
        &self,
        what: CallRef,
        host: &str,
        cookie: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) -> (usize, usize) {
        let (shape, uri) = self.shape(what);
        self.render_shape(shape, uri, host, cookie, out)
    }

    /// Like `render` for the fixed request (`--method`, headers) with another URI: the
    /// `--wsesspage` objects.
    pub fn render_uri(
        &self,
        uri: &[u8],
        host: &str,
        cookie: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) -> (usize, usize) {
        self.render_shape(&self.fixed, uri, host, cookie, out)
    }

    fn render_shape(
        &self,
        shape: &Shape,
        uri: &[u8],
        host: &str,
        cookie: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) -> (usize, usize) {
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
        out.extend_from_slice(&shape.body);
        (out.len() - start, header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(extra: &[&str]) -> Config {
        let mut argv = vec!["rshperf", "--server", "127.0.0.1"];
        argv.extend_from_slice(extra);
        Config::from_argv(&argv).expect("valid config")
    }

    #[test]
    fn fixed_request_matches_httperf_layout() {
        let c = cfg(&["--uri", "/1k.html"]);
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
        let c = cfg(&["--http-version", "1.0", "--add-header", "X-A: 1\\n"]);
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
    fn uri_calls_use_the_generated_uri() {
        let c = cfg(&["--method", "HEAD"]);
        let mut r = Requests::new(&c, b"");
        r.uris.push("/wset/0/1.html".into());
        let mut out = Vec::new();
        r.render(CallRef::Uri(0), "127.0.0.1", None, &mut out);
        assert!(out.starts_with(b"HEAD /wset/0/1.html HTTP/1.1\r\n"));
        assert!(r.is_head(CallRef::Uri(0)));
    }

    #[test]
    fn page_calls_render_the_given_uri_with_the_fixed_headers() {
        let c = cfg(&["--uri", "/page/index.html", "--add-header", "X-A: 1\\n"]);
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
