//! Replies of the built-in server, rendered once at start-up.
//!
//! Owns the reply bytes (status line, headers, body of `body_size` bytes of `a`) for
//! every combination the server can send, and the choice of one for a request. It does
//! not write or queue them (`server.rs`). Built by `server::spawn`.

use std::io::Write as _;

use super::request::{Head, Reject};

/// Which pre-rendered reply to send: an index into `Replies`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplyId(u8);

/// `Connection:` header variants.
const CONN_NONE: usize = 0;
const CONN_CLOSE: usize = 1;
const CONN_KEEP_ALIVE: usize = 2;

/// Rejections, in the order they are stored after the 12 success variants.
const REJECTS: [(Reject, &str); 6] = [
    (Reject::BadRequest, "400 Bad Request"),
    (Reject::UriTooLong, "414 URI Too Long"),
    (Reject::PayloadTooLarge, "413 Content Too Large"),
    (Reject::HeadTooLarge, "431 Request Header Fields Too Large"),
    (Reject::NotImplemented, "501 Not Implemented"),
    (
        Reject::VersionNotSupported,
        "505 HTTP Version Not Supported",
    ),
];

/// Every reply the server sends, pre-rendered.
#[derive(Debug)]
pub(crate) struct Replies {
    /// 12 success variants (connection header × framing × HEAD) then the rejections.
    all: Vec<Vec<u8>>,
    /// `--chunked`: bodies of HTTP/1.1 replies are chunked.
    chunked: bool,
    /// `--close`: every reply closes the connection.
    close: bool,
}

impl Replies {
    /// Renders the replies for `body_size` bytes of body, with `--chunked` and
    /// `--close` as given.
    pub(crate) fn new(body_size: usize, chunked: bool, close: bool) -> Replies {
        let mut all = Vec::with_capacity(12 + REJECTS.len());
        for conn in [CONN_NONE, CONN_CLOSE, CONN_KEEP_ALIVE] {
            for framing_chunked in [false, true] {
                for head in [false, true] {
                    // Variants that cannot be chosen stay empty to save memory.
                    let used = (chunked || !framing_chunked) && (conn == CONN_CLOSE || !close);
                    all.push(if used {
                        render_ok(body_size, conn, framing_chunked, head)
                    } else {
                        Vec::new()
                    });
                }
            }
        }
        for (_, status) in REJECTS {
            all.push(
                format!(
                    "HTTP/1.1 {status}\r\nServer: rshperf\r\nContent-Length: 0\r\n\
                     Connection: close\r\n\r\n"
                )
                .into_bytes(),
            );
        }
        Replies {
            all,
            chunked,
            close,
        }
    }

    /// The reply to `req`, and whether the connection closes after it.
    pub(crate) fn ok(&self, req: &Head) -> (ReplyId, bool) {
        let close = self.close || !req.keep_alive;
        let conn = if close {
            CONN_CLOSE
        } else if req.http10 {
            CONN_KEEP_ALIVE
        } else {
            CONN_NONE
        };
        // HTTP/1.0 clients do not know chunked framing.
        let chunked = self.chunked && !req.http10;
        let index = conn * 4 + usize::from(chunked) * 2 + usize::from(req.head_method);
        (ReplyId(index as u8), close)
    }

    /// The reply refusing a request for `reason` (it always closes the connection).
    pub(crate) fn reject(&self, reason: Reject) -> ReplyId {
        let pos = REJECTS
            .iter()
            .position(|(r, _)| *r == reason)
            .expect("every Reject has a rendered reply");
        ReplyId((12 + pos) as u8)
    }

    /// The bytes of reply `id`.
    pub(crate) fn bytes(&self, id: ReplyId) -> &[u8] {
        &self.all[usize::from(id.0)]
    }
}

/// A `400 Bad Request` explaining `text` (a bad parameter of a streaming endpoint),
/// appended to `out`; with `Connection: close` when the connection closes after it.
pub(crate) fn bad_request(text: &str, close: bool, out: &mut Vec<u8>) {
    let connection = if close { "Connection: close\r\n" } else { "" };
    let _ = write!(
        out,
        "HTTP/1.1 400 Bad Request\r\nServer: rshperf\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\n{connection}\r\n{text}",
        text.len()
    );
}

/// One `200 OK` reply.
fn render_ok(body_size: usize, conn: usize, chunked: bool, head: bool) -> Vec<u8> {
    let mut r = b"HTTP/1.1 200 OK\r\nServer: rshperf\r\n".to_vec();
    if chunked {
        r.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    } else {
        r.extend_from_slice(format!("Content-Length: {body_size}\r\n").as_bytes());
    }
    r.extend_from_slice(b"Content-Type: text/plain\r\n");
    match conn {
        CONN_CLOSE => r.extend_from_slice(b"Connection: close\r\n"),
        CONN_KEEP_ALIVE => r.extend_from_slice(b"Connection: keep-alive\r\n"),
        _ => {}
    }
    r.extend_from_slice(b"\r\n");
    if head {
        return r;
    }
    if chunked && body_size > 0 {
        r.extend_from_slice(format!("{body_size:x}\r\n").as_bytes());
        r.resize(r.len() + body_size, b'a');
        r.extend_from_slice(b"\r\n");
    } else if !chunked {
        r.resize(r.len() + body_size, b'a');
    }
    if chunked {
        r.extend_from_slice(b"0\r\n\r\n");
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(head_method: bool, http10: bool, keep_alive: bool) -> Head {
        Head {
            len: 0,
            head_method,
            http10,
            keep_alive,
            body_len: 0,
            target_at: 0,
            target_len: 0,
        }
    }

    fn text(r: &Replies, h: Head) -> (String, bool) {
        let (id, close) = r.ok(&h);
        (String::from_utf8_lossy(r.bytes(id)).into_owned(), close)
    }

    const HEAD: &str = "HTTP/1.1 200 OK\r\nServer: rshperf\r\n";

    #[test]
    fn plain_keep_alive_and_head() {
        let r = Replies::new(3, false, false);
        let want = format!("{HEAD}Content-Length: 3\r\nContent-Type: text/plain\r\n\r\naaa");
        assert_eq!(text(&r, req(false, false, true)), (want, false));
        let want = format!("{HEAD}Content-Length: 3\r\nContent-Type: text/plain\r\n\r\n");
        assert_eq!(text(&r, req(true, false, true)), (want, false));
    }

    #[test]
    fn connection_header_follows_the_request() {
        let r = Replies::new(1, false, false);
        let close = format!(
            "{HEAD}Content-Length: 1\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\na"
        );
        assert_eq!(text(&r, req(false, false, false)), (close.clone(), true));
        assert_eq!(text(&r, req(false, true, false)), (close, true));
        let keep = format!(
            "{HEAD}Content-Length: 1\r\nContent-Type: text/plain\r\n\
             Connection: keep-alive\r\n\r\na"
        );
        assert_eq!(text(&r, req(false, true, true)), (keep, false));
    }

    #[test]
    fn close_option_closes_every_reply() {
        let r = Replies::new(0, false, true);
        let close = format!(
            "{HEAD}Content-Length: 0\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(text(&r, req(false, false, true)), (close.clone(), true));
        assert_eq!(text(&r, req(false, true, true)), (close, true));
    }

    #[test]
    fn chunked_for_http11_only() {
        let r = Replies::new(20, true, false);
        let chunked = format!(
            "{HEAD}Transfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n\
             14\r\naaaaaaaaaaaaaaaaaaaa\r\n0\r\n\r\n"
        );
        assert_eq!(text(&r, req(false, false, true)), (chunked, false));
        let head = format!("{HEAD}Transfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n");
        assert_eq!(text(&r, req(true, false, true)), (head, false));
        let (t, _) = text(&r, req(false, true, false));
        assert!(t.contains("Content-Length: 20\r\n"), "{t}");
        let empty = Replies::new(0, true, false);
        let (t, _) = text(&empty, req(false, false, true));
        assert!(t.ends_with("text/plain\r\n\r\n0\r\n\r\n"), "{t}");
    }

    #[test]
    fn rejects() {
        let r = Replies::new(0, false, false);
        let t = String::from_utf8_lossy(r.bytes(r.reject(Reject::HeadTooLarge))).into_owned();
        assert_eq!(
            t,
            "HTTP/1.1 431 Request Header Fields Too Large\r\nServer: rshperf\r\n\
             Content-Length: 0\r\nConnection: close\r\n\r\n"
        );
        for (reason, _) in REJECTS {
            assert!(r.bytes(r.reject(reason)).starts_with(b"HTTP/1.1 "));
        }
    }
}
