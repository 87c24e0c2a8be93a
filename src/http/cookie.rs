//! Header values out of a reply's raw header bytes: `--session-cookies`' `Set-Cookie:`
//! and, for `rshperf ab`/`lb`, the `Server:` name.
//!
//! Owns a bounded line assembler fed with raw header-block pieces (split anywhere).
//! Like httperf, a session keeps one cookie: the text of a header line starting with
//! `Set-Cookie: ` (case-insensitive) up to the first `;`, at most 245 bytes. Like ab,
//! the server name is the `Server:` value up to its first blank or control byte. Called
//! by the connection (its `cookie` scan) for replies of session workloads and for the
//! first reply of each server in ab and lb runs.

/// Longest header line examined (longer lines are not cookies we can keep anyway).
const MAX_LINE: usize = 4096;
/// Longest cookie kept (httperf's limit).
pub const MAX_COOKIE: usize = 245;

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
pub struct HeaderScan {
    line: Vec<u8>,
    overflow: bool,
    found: Option<Vec<u8>>,
    wanted: Wanted,
}

/// The `--session-cookies` scan.
pub type CookieScan = HeaderScan;

impl HeaderScan {
    /// A scan for the `Server:` name (ab's `Server Software`).
    pub fn server() -> HeaderScan {
        HeaderScan {
            wanted: Wanted::Server,
            ..HeaderScan::default()
        }
    }

    /// Feeds header-block bytes.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == b'\n' {
                if !self.overflow {
                    self.examine();
                }
                self.line.clear();
                self.overflow = false;
            } else if self.line.len() < MAX_LINE {
                self.line.push(b);
            } else {
                self.overflow = true;
            }
        }
    }

    fn examine(&mut self) {
        let name: &[u8] = match self.wanted {
            Wanted::SetCookie => b"set-cookie: ",
            Wanted::Server => b"server:",
        };
        let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
        if line.len() < name.len() || !line[..name.len()].eq_ignore_ascii_case(name) {
            return;
        }
        let value = &line[name.len()..];
        let kept = match self.wanted {
            Wanted::SetCookie => {
                let end = value.iter().position(|&c| c == b';').unwrap_or(value.len());
                &value[..end.min(MAX_COOKIE)]
            }
            Wanted::Server => {
                let start = value
                    .iter()
                    .position(|&c| c != b' ' && c != b'\t')
                    .unwrap_or(value.len());
                let value = &value[start..];
                let end = value.iter().position(|&c| c <= b' ').unwrap_or(value.len());
                &value[..end.min(MAX_SERVER)]
            }
        };
        let slot = self.found.get_or_insert_with(Vec::new);
        slot.clear();
        slot.extend_from_slice(kept);
    }

    /// The value found since the last call, if any.
    pub fn take(&mut self) -> Option<Vec<u8>> {
        self.line.clear();
        self.overflow = false;
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
            let mut s = HeaderScan::server();
            s.feed(&head[..cut]);
            s.feed(&head[cut..]);
            assert_eq!(s.take().as_deref(), Some(&b"Apache/2.4.1"[..]), "cut {cut}");
        }
        let mut s = HeaderScan::server();
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
