//! Header values out of a reply's raw header bytes: `--session-cookies`' `Set-Cookie:`
//! and, for `rshperf ab`/`lb`, the `Server:` name.
//!
//! Owns a bounded line assembler fed with raw header-block pieces (split anywhere).
//! Like httperf, a session keeps one cookie: the text of a header line starting with
//! `Set-Cookie: ` (case-insensitive) up to the first `;`, at most 245 bytes. Like ab,
//! the server name is the `Server:` value up to its first blank or control byte. Called
//! by the connection (its `cookie` scan) for replies of session workloads and for the
//! first reply of each server in ab and lb runs.

use super::lines::{header_value, Lines};

/// Longest header line examined (longer lines are not cookies we can keep anyway).
const MAX_LINE: usize = 4096;
/// Longest cookie kept (httperf's limit).
pub(crate) const MAX_COOKIE: usize = 245;
/// Longest server name kept (ab's buffer).
const MAX_SERVER: usize = 1023;

/// Which header a scan looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Wanted {
    #[default]
    SetCookie,
    Server,
}

/// Assembles header lines and remembers the last value of the wanted header
/// (`Set-Cookie` by default).
#[derive(Debug, Clone, Default)]
pub(crate) struct CookieScan {
    lines: Lines,
    found: Option<Vec<u8>>,
    wanted: Wanted,
}

/// Keeps the value `line` carries for `wanted` in `found`.
fn examine(line: &[u8], wanted: Wanted, found: &mut Option<Vec<u8>>) {
    let kept = match wanted {
        Wanted::SetCookie => {
            const NAME: &[u8] = b"set-cookie: ";
            if line.len() < NAME.len() || !line[..NAME.len()].eq_ignore_ascii_case(NAME) {
                return;
            }
            let value = &line[NAME.len()..];
            let end = value.iter().position(|&c| c == b';').unwrap_or(value.len());
            &value[..end.min(MAX_COOKIE)]
        }
        Wanted::Server => {
            let Some(value) = header_value(line, b"server") else {
                return;
            };
            let end = value.iter().position(|&c| c <= b' ').unwrap_or(value.len());
            &value[..end.min(MAX_SERVER)]
        }
    };
    let slot = found.get_or_insert_with(Vec::new);
    slot.clear();
    slot.extend_from_slice(kept);
}

impl CookieScan {
    /// A scan for the `Server:` name instead (ab's `Server Software`).
    pub(crate) fn server() -> CookieScan {
        CookieScan {
            wanted: Wanted::Server,
            ..CookieScan::default()
        }
    }

    /// Feeds header-block bytes.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        let (found, wanted) = (&mut self.found, self.wanted);
        self.lines
            .feed(bytes, MAX_LINE, |line| examine(line, wanted, found));
    }

    /// The value found since the last call, if any.
    pub(crate) fn take(&mut self) -> Option<Vec<u8>> {
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
    fn finds_the_server_name_at_any_split_up_to_the_first_blank() {
        let head = b"HTTP/1.1 200 OK\r\nX-Server: no\r\nserver:  Apache/2.4.1 (Debian)\r\n\r\n";
        for cut in 0..=head.len() {
            let mut s = CookieScan::server();
            s.feed(&head[..cut]);
            s.feed(&head[cut..]);
            assert_eq!(s.take().as_deref(), Some(&b"Apache/2.4.1"[..]), "cut {cut}");
        }
        let mut s = CookieScan::server();
        s.feed(b"Set-Cookie: a=1\r\n\r\n");
        assert_eq!(s.take(), None);
        s.feed(b"Server:\r\n");
        assert_eq!(s.take().as_deref(), Some(&b""[..]));
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
