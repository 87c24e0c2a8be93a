//! Header lines out of header-block pieces split anywhere: the bounded line assembler
//! shared by the `Set-Cookie` scan (`cookie`) and the `--wsesspage` scan (`html`).
//!
//! Owns only the partial line between pieces, never more than the caller's limit:
//! longer lines are skipped whole (the scans look for short headers). Knows nothing
//! about which headers matter.

/// Assembles lines ending in LF (one CR before it is dropped).
#[derive(Debug, Clone, Default)]
pub(crate) struct Lines {
    line: Vec<u8>,
    over: bool,
}

impl Lines {
    /// Feeds `bytes`; calls `each` with every line completed that is at most `max` bytes
    /// long (CR excluded from neither the limit nor the line before stripping).
    pub(crate) fn feed(&mut self, bytes: &[u8], max: usize, mut each: impl FnMut(&[u8])) {
        for &b in bytes {
            if b == b'\n' {
                if !self.over {
                    each(self.line.strip_suffix(b"\r").unwrap_or(&self.line));
                }
                self.clear();
            } else if self.line.len() < max {
                self.line.push(b);
            } else {
                self.over = true;
            }
        }
    }

    /// Drops a partial line (the reply ended or the connection is reused).
    pub(crate) fn clear(&mut self) {
        self.line.clear();
        self.over = false;
    }
}

/// The value of header line `line` if its name is `name` (case-insensitive), with the
/// white space around it trimmed.
pub(crate) fn header_value<'l>(line: &'l [u8], name: &[u8]) -> Option<&'l [u8]> {
    let colon = line.iter().position(|&b| b == b':')?;
    if !line[..colon].eq_ignore_ascii_case(name) {
        return None;
    }
    Some(line[colon + 1..].trim_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(pieces: &[&[u8]], max: usize) -> Vec<String> {
        let mut l = Lines::default();
        let mut out = Vec::new();
        for p in pieces {
            l.feed(p, max, |line| {
                out.push(String::from_utf8_lossy(line).into_owned())
            });
        }
        out
    }

    #[test]
    fn lines_at_every_split_and_long_lines_skipped() {
        let text = b"HTTP/1.1 200 OK\r\nA: 1\r\n\nLong: xxxxxxxxxxxxxxxx\r\nB:2\n\r\n";
        let want = ["HTTP/1.1 200 OK", "A: 1", "", "B:2", ""];
        for cut in 0..=text.len() {
            assert_eq!(lines(&[&text[..cut], &text[cut..]], 16), want, "cut {cut}");
        }
        // A line of exactly the limit is kept; the CR counts toward it.
        assert_eq!(lines(&[b"abcd\n", b"abcd\r\n", b"abcde\n"], 4), ["abcd"]);
        // No LF: nothing yet.
        assert!(lines(&[b"partial"], 100).is_empty());
    }

    #[test]
    fn header_values() {
        assert_eq!(
            header_value(b"Content-Type:  text/html ", b"content-type"),
            Some(&b"text/html"[..])
        );
        assert_eq!(header_value(b"LOCATION:/x", b"location"), Some(&b"/x"[..]));
        assert_eq!(header_value(b"Content-Typo: x", b"content-type"), None);
        assert_eq!(header_value(b"no colon", b"no colon"), None);
        assert_eq!(header_value(b"X:", b"x"), Some(&b""[..]));
    }
}
