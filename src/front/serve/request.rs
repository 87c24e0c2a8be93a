//! Request heads for the built-in server: finds the end of an HTTP/1.x request head in
//! a buffer and extracts the few facts the server acts on (method HEAD or not, version,
//! keep-alive, body length).
//!
//! Owns the head limits (`MAX_HEAD`, `MAX_REQUEST_LINE`) and the reasons a request is
//! refused (`Reject`). What is not HTTP (a TLS ClientHello, an SSH banner, binary) is
//! refused as soon as its first bytes show it, not when a blank line arrives, so such a
//! client gets `400` and a close at once instead of waiting with the server for a head
//! that never ends. It does not read sockets, keep state between calls (apart from the
//! caller's scan offset) or render replies (`reply.rs`). Called by
//! `server::Conn::process`.

/// The largest request head accepted (request line, headers, blank line); a longer one
/// is answered 431 and the connection closed.
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// The longest request line accepted (nginx's default buffer for one line); a longer
/// one is answered 414 and the connection closed.
pub(crate) const MAX_REQUEST_LINE: usize = 8 * 1024;

/// What the server needs to know about one complete request head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    /// Bytes from the start of the buffer to the end of the blank line, leading empty
    /// lines included.
    pub(crate) len: usize,
    /// The method is `HEAD`: the reply carries no body.
    pub(crate) head_method: bool,
    /// The request is HTTP/1.0.
    pub(crate) http10: bool,
    /// The connection stays open after the reply (version default and `Connection:`).
    pub(crate) keep_alive: bool,
    /// `Content-Length` of the request body (0 when absent).
    pub(crate) body_len: u64,
    /// Where the request-target is: `target_at..target_at + target_len` of the buffer
    /// given to `parse`.
    pub(crate) target_at: usize,
    pub(crate) target_len: usize,
}

impl Head {
    /// The request-target (path and query) in `buf`, the buffer given to `parse`.
    pub(crate) fn target<'b>(&self, buf: &'b [u8]) -> &'b [u8] {
        &buf[self.target_at..self.target_at + self.target_len]
    }
}

/// Why a request is refused; each is answered with its status and the connection is
/// closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reject {
    /// 400: malformed request line or header.
    BadRequest,
    /// 414: request line longer than `MAX_REQUEST_LINE`.
    UriTooLong,
    /// 413: a chat request body larger than the server reads.
    PayloadTooLarge,
    /// 431: head longer than `MAX_HEAD`.
    HeadTooLarge,
    /// 501: `Transfer-Encoding` request bodies are not implemented.
    NotImplemented,
    /// 505: an HTTP version other than 1.0 and 1.1.
    VersionNotSupported,
}

/// The result of looking at the start of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parse {
    /// No complete head yet: read more.
    Partial,
    /// A complete, acceptable head.
    Complete(Head),
    /// A head that is refused.
    Reject(Reject),
}

/// Parses the request head at the start of `buf`. `scanned` carries the offset up to
/// which an earlier call found no end of head (0 for a new request), so a head that
/// arrives in many pieces is scanned once.
pub(crate) fn parse(buf: &[u8], scanned: &mut usize) -> Parse {
    // RFC 9112 §2.2: empty lines before the request line are ignored.
    let skip = buf
        .iter()
        .take_while(|b| **b == b'\r' || **b == b'\n')
        .count();
    if skip > MAX_HEAD {
        return Parse::Reject(Reject::BadRequest);
    }
    let from = (*scanned).max(skip);
    let Some(end) = find_end(buf, from) else {
        if buf.len() - skip > MAX_HEAD {
            return Parse::Reject(Reject::HeadTooLarge);
        }
        // What is not HTTP is refused as soon as the request line shows it, not when
        // a blank line arrives: a TLS ClientHello never brings one, and both sides
        // would wait for each other.
        if let Err(r) = check_request_line(&buf[skip..]) {
            return Parse::Reject(r);
        }
        // The last two bytes may start a terminator completed by the next read.
        *scanned = buf.len().saturating_sub(2).max(skip);
        return Parse::Partial;
    };
    if end - skip > MAX_HEAD {
        return Parse::Reject(Reject::HeadTooLarge);
    }
    match parse_head(&buf[skip..end]) {
        Ok(mut head) => {
            head.len = end;
            head.target_at += skip;
            Parse::Complete(head)
        }
        Err(r) => Parse::Reject(r),
    }
}

/// The index just past the blank line that ends the head (`\n\n` or `\n\r\n`), looking
/// for line feeds from `from` on.
fn find_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < buf.len() {
        let nl = i + buf[i..].iter().position(|b| *b == b'\n')?;
        match buf.get(nl + 1) {
            Some(b'\n') => return Some(nl + 2),
            Some(b'\r') if buf.get(nl + 2) == Some(&b'\n') => return Some(nl + 3),
            _ => i = nl + 1,
        }
    }
    None
}

/// Parses a complete head (without leading empty lines); `len` is left 0 and the
/// target's place is relative to `head`.
fn parse_head(head: &[u8]) -> Result<Head, Reject> {
    let mut lines = head.split(|b| *b == b'\n').map(strip_cr);
    let request_line = lines.next().ok_or(Reject::BadRequest)?;
    let (method, target, http10) = request_line_parts(request_line)?;
    let mut out = Head {
        len: 0,
        head_method: method == b"HEAD",
        http10,
        keep_alive: !http10,
        body_len: 0,
        // The request line is `method SP target SP version`, single spaces.
        target_at: method.len() + 1,
        target_len: target.len(),
    };
    let (mut close, mut keep) = (false, false);
    let mut content_length: Option<u64> = None;
    for line in lines {
        if line.is_empty() {
            break;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            return Err(Reject::BadRequest); // obsolete line folding
        }
        let colon = line
            .iter()
            .position(|b| *b == b':')
            .ok_or(Reject::BadRequest)?;
        let (name, value) = (&line[..colon], trim(&line[colon + 1..]));
        if name.is_empty() || !name.iter().all(|b| is_tchar(*b)) {
            return Err(Reject::BadRequest);
        }
        if value.iter().any(|b| *b == b'\r' || *b == 0) {
            return Err(Reject::BadRequest);
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = parse_length(value).ok_or(Reject::BadRequest)?;
            if content_length.is_some_and(|m| m != n) {
                return Err(Reject::BadRequest);
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            return Err(Reject::NotImplemented);
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|b| *b == b',').map(trim) {
                close |= token.eq_ignore_ascii_case(b"close");
                keep |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        }
    }
    out.keep_alive = !close && (keep || !http10);
    out.body_len = content_length.unwrap_or(0);
    Ok(out)
}

/// Checks the request line at the start of an incomplete head: a complete line in
/// full (`request_line_parts`), a partial one as far as it goes (a method of token
/// characters, then no control bytes), and its length. Only incomplete heads pay for
/// this; a complete head is checked by `parse_head`.
fn check_request_line(buf: &[u8]) -> Result<(), Reject> {
    let window = &buf[..buf.len().min(MAX_REQUEST_LINE + 1)];
    let line = match window.iter().position(|b| *b == b'\n') {
        Some(nl) => return request_line_parts(strip_cr(&window[..nl])).map(|_| ()),
        None if window.len() > MAX_REQUEST_LINE => return Err(Reject::UriTooLong),
        None => window,
    };
    let method_end = line.iter().position(|b| *b == b' ').unwrap_or(line.len());
    let (method, rest) = line.split_at(method_end);
    let control = |b: &u8| *b < b' ' || *b == 0x7f;
    // A CR may end the line; the LF is still to come.
    let rest = rest.strip_suffix(b"\r").unwrap_or(rest);
    if !method.iter().all(|b| is_tchar(*b)) || (method.is_empty() && !rest.is_empty()) {
        return Err(Reject::BadRequest);
    }
    if rest.iter().any(control) {
        return Err(Reject::BadRequest);
    }
    Ok(())
}

/// Checks `METHOD SP target SP HTTP/x.y` and returns the method, the target and
/// whether the version is 1.0.
fn request_line_parts(line: &[u8]) -> Result<(&[u8], &[u8], bool), Reject> {
    let mut parts = line.split(|b| *b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Reject::BadRequest);
    };
    if method.is_empty() || !method.iter().all(|b| is_tchar(*b)) {
        return Err(Reject::BadRequest);
    }
    if target.is_empty() || target.iter().any(|b| *b <= b' ' || *b == 0x7f) {
        return Err(Reject::BadRequest);
    }
    match version {
        b"HTTP/1.1" => Ok((method, target, false)),
        b"HTTP/1.0" => Ok((method, target, true)),
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            Err(Reject::VersionNotSupported)
        }
        _ => Err(Reject::BadRequest),
    }
}

/// A `Content-Length` value: ASCII digits that fit in a u64.
fn parse_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |n, b| {
        if b.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

/// RFC 9110 token characters (method and header names).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| *b != b' ' && *b != b'\t')
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| *b != b' ' && *b != b'\t')
        .map_or(start, |i| i + 1);
    &s[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(len: usize, head_method: bool, http10: bool, keep_alive: bool, body: u64) -> Parse {
        Parse::Complete(Head {
            len,
            head_method,
            http10,
            keep_alive,
            body_len: body,
            target_at: 0,
            target_len: 0,
        })
    }

    /// `parse` with the target's place left out (`targets` checks it).
    fn parse_facts(buf: &[u8], scanned: &mut usize) -> Parse {
        match parse(buf, scanned) {
            Parse::Complete(h) => Parse::Complete(Head {
                target_at: 0,
                target_len: 0,
                ..h
            }),
            other => other,
        }
    }

    fn once(buf: &[u8]) -> Parse {
        parse_facts(buf, &mut 0)
    }

    #[test]
    fn targets() {
        let cases: [(&[u8], &[u8]); 3] = [
            (b"GET / HTTP/1.1\r\n\r\n", b"/"),
            (
                b"\r\n\nPOST /v1/chat/completions HTTP/1.1\r\n\r\n",
                b"/v1/chat/completions",
            ),
            (
                b"HEAD /stream?events=3&gap=1ms HTTP/1.0\n\n",
                b"/stream?events=3&gap=1ms",
            ),
        ];
        for (buf, want) in cases {
            let Parse::Complete(h) = parse(buf, &mut 0) else {
                panic!("{buf:?} is a complete head");
            };
            assert_eq!(h.target(buf), want);
        }
    }

    #[test]
    fn heads_table() {
        let get = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        let cases: Vec<(&[u8], Parse)> = vec![
            (get, head(get.len(), false, false, true, 0)),
            (b"GET / HTTP/1.1\n\n", head(16, false, false, true, 0)),
            (
                b"\r\nGET / HTTP/1.1\r\n\r\n",
                head(20, false, false, true, 0),
            ),
            (b"HEAD /x HTTP/1.1\r\n\r\n", head(20, true, false, true, 0)),
            (b"GET / HTTP/1.0\r\n\r\n", head(18, false, true, false, 0)),
            (
                b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
                head(42, false, true, true, 0),
            ),
            (
                b"GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n",
                head(42, false, false, false, 0),
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length:  12 \r\n\r\n",
                head(41, false, false, true, 12),
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\n",
                head(57, false, false, true, 3),
            ),
            (b"GET / HTTP/1.1\r\nHost: x\r\n", Parse::Partial),
            (b"GET / HTTP/1.1\r\n\r", Parse::Partial),
            (b"", Parse::Partial),
            (b"\r\n", Parse::Partial),
        ];
        for (buf, want) in cases {
            assert_eq!(once(buf), want, "{:?}", String::from_utf8_lossy(buf));
        }
    }

    #[test]
    fn rejects_table() {
        use Reject::*;
        let cases: Vec<(&[u8], Reject)> = vec![
            (b"BOGUS\r\n\r\n", BadRequest),
            (b"GET /  HTTP/1.1\r\n\r\n", BadRequest),
            (b"GET / HTTP/1.1 x\r\n\r\n", BadRequest),
            (b"G(T / HTTP/1.1\r\n\r\n", BadRequest),
            (b"GET / HTTX/1.1\r\n\r\n", BadRequest),
            (b"GET / HTTP/2.0\r\n\r\n", VersionNotSupported),
            (b"GET / HTTP/1.1\r\nNo colon\r\n\r\n", BadRequest),
            (b"GET / HTTP/1.1\r\n: empty\r\n\r\n", BadRequest),
            (b"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", BadRequest),
            (b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", BadRequest),
            (b"GET / HTTP/1.1\r\nContent-Length: \r\n\r\n", BadRequest),
            (
                b"GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
                BadRequest,
            ),
            (
                b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                BadRequest,
            ),
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                NotImplemented,
            ),
        ];
        for (buf, want) in cases {
            assert_eq!(
                once(buf),
                Parse::Reject(want),
                "{:?}",
                String::from_utf8_lossy(buf)
            );
        }
    }

    #[test]
    fn every_split_is_partial_until_the_last_byte() {
        let full = b"\r\nGET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\nNEXT";
        let end = full.len() - 4;
        let want = once(&full[..end]);
        assert_eq!(want, head(end, false, false, false, 0));
        // Bytes arrive one at a time; the scan offset is carried between calls.
        let mut scanned = 0;
        for n in 0..end {
            assert_eq!(
                parse_facts(&full[..n], &mut scanned),
                Parse::Partial,
                "n={n}"
            );
            assert!(scanned <= n);
        }
        assert_eq!(parse_facts(&full[..end], &mut scanned), want);
        assert_eq!(once(full), want);
    }

    #[test]
    fn what_is_not_http_is_refused_at_once() {
        use Reject::*;
        // A TLS ClientHello record header, an SSH banner, binary and a bad method are
        // refused before any blank line arrives.
        let cases: Vec<(&[u8], Reject)> = vec![
            (
                &[
                    0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
                ],
                BadRequest,
            ),
            (&[0x16], BadRequest),
            (b"SSH-2.0-OpenSSH_9.6\r\n", BadRequest),
            (b"GET / HTTP/1.1 extra\r\n", BadRequest),
            (b"GET / HTTX/1.1\r\nHost: x\r\n", BadRequest),
            (b"GET / HTTP/2.0\r\n", VersionNotSupported),
            (b"G(T", BadRequest),
            (b"GET /\x01", BadRequest),
            (b" GET", BadRequest),
            (b"\r\n\x16\x03", BadRequest),
        ];
        for (buf, want) in cases {
            assert_eq!(
                once(buf),
                Parse::Reject(want),
                "{:?}",
                String::from_utf8_lossy(buf)
            );
        }
        // Every prefix of a good request is still only incomplete.
        let good = b"\r\nPOST /a?b=c HTTP/1.0\r\nContent-Length: 0\r\n\r\n";
        for n in 0..good.len() {
            assert_eq!(once(&good[..n]), Parse::Partial, "n={n}");
        }
        // The request line has a length limit of its own.
        let mut long = b"GET /".to_vec();
        long.resize(MAX_REQUEST_LINE, b'a');
        assert_eq!(once(&long), Parse::Partial);
        long.push(b'a');
        assert_eq!(once(&long), Parse::Reject(UriTooLong));
    }

    #[test]
    fn head_size_limit() {
        let mut big = b"GET / HTTP/1.1\r\nX: ".to_vec();
        big.resize(MAX_HEAD + 1, b'a');
        assert_eq!(once(&big), Parse::Reject(Reject::HeadTooLarge));
        big.truncate(MAX_HEAD - 4);
        assert_eq!(once(&big), Parse::Partial);
        big.extend_from_slice(b"\r\n\r\n");
        assert!(matches!(once(&big), Parse::Complete(h) if h.len == MAX_HEAD));
        big.insert(20, b'b');
        assert_eq!(once(&big), Parse::Reject(Reject::HeadTooLarge));
    }
}
