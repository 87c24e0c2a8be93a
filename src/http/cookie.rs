//! `--session-cookies`: finds the `Set-Cookie:` value in a reply's header bytes.
//!
//! Owns a bounded line assembler fed with raw header-block pieces (split anywhere).
//! Like httperf, a session keeps one cookie: the text of a header line starting with
//! `Set-Cookie: ` (case-insensitive) up to the first `;`, at most 245 bytes. Called by
//! the connection for replies of session workloads; the session stores the value.

use super::lines::Lines;

/// Longest header line examined (longer lines are not cookies we can keep anyway).
const MAX_LINE: usize = 4096;
/// Longest cookie kept (httperf's limit).
pub const MAX_COOKIE: usize = 245;

/// Assembles header lines and remembers the last `Set-Cookie` value.
#[derive(Debug, Clone, Default)]
pub struct CookieScan {
    lines: Lines,
    found: Option<Vec<u8>>,
}

/// Keeps the cookie of `line` in `found` if it is a `Set-Cookie: ` line.
fn examine(line: &[u8], found: &mut Option<Vec<u8>>) {
    const NAME: &[u8] = b"set-cookie: ";
    if line.len() >= NAME.len() && line[..NAME.len()].eq_ignore_ascii_case(NAME) {
        let value = &line[NAME.len()..];
        let end = value.iter().position(|&c| c == b';').unwrap_or(value.len());
        let kept = &value[..end.min(MAX_COOKIE)];
        let slot = found.get_or_insert_with(Vec::new);
        slot.clear();
        slot.extend_from_slice(kept);
    }
}

impl CookieScan {
    /// Feeds header-block bytes.
    pub fn feed(&mut self, bytes: &[u8]) {
        let found = &mut self.found;
        self.lines
            .feed(bytes, MAX_LINE, |line| examine(line, found));
    }

    /// The cookie found since the last call, if any.
    pub fn take(&mut self) -> Option<Vec<u8>> {
        self.lines.clear();
        self.found.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_cookie_at_any_split() {
        let head = b"HTTP/1.1 200 OK\r\nSet-Cookie: sid=abc123; Path=/\r\nX: y\r\n\r\n";
        for cut in 0..=head.len() {
            let mut s = CookieScan::default();
            s.feed(&head[..cut]);
            s.feed(&head[cut..]);
            assert_eq!(s.take().as_deref(), Some(&b"sid=abc123"[..]), "cut {cut}");
            assert_eq!(s.take(), None);
        }
    }

    #[test]
    fn case_insensitive_last_wins_and_truncates() {
        let mut s = CookieScan::default();
        s.feed(b"set-cookie: a=1\r\nSET-COOKIE: b=2;x\r\n");
        assert_eq!(s.take().as_deref(), Some(&b"b=2"[..]));
        let long = format!("Set-Cookie: {}\r\n", "c".repeat(400));
        s.feed(long.as_bytes());
        assert_eq!(s.take().map(|v| v.len()), Some(MAX_COOKIE));
        s.feed(b"Set-Cookie:nospace\r\n");
        assert_eq!(s.take(), None);
    }
}
