//! NDJSON / JSON Lines and plain lines: an event per line.
//!
//! Owns the state of the current line of one body: its length, whether it has content
//! and whether its last byte so far is a CR. Lines end with LF; a CR just before the LF
//! is part of the line end (CRLF), any other CR is data. An NDJSON line counts when it
//! holds something other than JSON white space (space, tab, CR), a plain line when it
//! is not empty. A line is never kept, only measured. Fed by `EventSplitter`, which also
//! decides what an unterminated last line is worth (`take_last`).

use super::Dispatch;

/// The NDJSON / lines byte machine.
#[derive(Debug, Clone)]
pub(super) struct Lines {
    /// NDJSON (white-space-only lines are not events) rather than plain lines.
    json: bool,
    /// Bytes of the current line so far (LF excluded).
    len: u64,
    /// NDJSON: a byte other than white space seen in the current line.
    content: bool,
    /// The last byte of the current line so far is CR.
    last_cr: bool,
}

impl Lines {
    /// A machine for NDJSON (`json`) or plain lines.
    pub(super) fn new(json: bool) -> Lines {
        Lines {
            json,
            len: 0,
            content: false,
            last_cr: false,
        }
    }

    /// Feeds `bytes`; `on(end, d)` for each event dispatched by the LF at `end - 1`.
    pub(super) fn feed(&mut self, bytes: &[u8], mut on: impl FnMut(usize, Dispatch)) {
        let mut i = 0;
        while i < bytes.len() {
            let rest = &bytes[i..];
            let lf = memchr::memchr(b'\n', rest);
            let part = &rest[..lf.unwrap_or(rest.len())];
            if let Some(&last) = part.last() {
                self.len += part.len() as u64;
                self.last_cr = last == b'\r';
                if self.json && !self.content {
                    self.content = part.iter().any(|&b| !matches!(b, b' ' | b'\t' | b'\r'));
                }
            }
            let Some(lf) = lf else {
                return;
            };
            i += lf + 1;
            if let Some(d) = self.take_last() {
                on(i, d);
            }
        }
    }

    /// Ends the current line: the event it makes, if any.
    pub(super) fn take_last(&mut self) -> Option<Dispatch> {
        let data_bytes = self.len - u64::from(self.last_cr);
        let event = if self.json {
            self.content
        } else {
            data_bytes > 0
        };
        self.len = 0;
        self.content = false;
        self.last_cr = false;
        event.then_some(Dispatch {
            data_bytes,
            done: false,
        })
    }
}
