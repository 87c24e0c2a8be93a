//! Server-sent events by the WHATWG rules (HTML §9.2.5 "Parsing an event stream",
//! §9.2.6 "Interpreting an event stream"), reduced to what a load generator counts.
//!
//! Owns the line and field state of one `text/event-stream` body. Lines end with CRLF,
//! LF or CR (a CR at the end of one piece and an LF at the start of the next are one
//! line end). A line that is empty dispatches the pending event; a line starting with
//! `:` is a comment; otherwise the field name runs to the first `:` (or the whole
//! line), and one space after the colon is not part of the value. Only `data` matters
//! here: each `data` field appends its value and an LF to the event's data, and an
//! event whose data is still empty when a blank line comes is not dispatched (so
//! `event:`, `id:` and `retry:` fields, comments and keep-alive blank lines make no
//! event, while `data:` with an empty value makes one with empty data). Names are
//! case-sensitive. The data itself is never kept: only its length, the number of `data`
//! lines and whether it is exactly `[DONE]`. The BOM is skipped by the caller
//! (`EventSplitter`). Fed by `EventSplitter`.

use super::Dispatch;

/// The only field name that counts.
const DATA: &[u8; 4] = b"data";
/// The OpenAI end-of-stream sentinel.
const DONE: &[u8; 6] = b"[DONE]";
/// `done_pos` once the value is known not to be `[DONE]`.
const NOT_DONE: u8 = u8::MAX;

/// Where in its line the machine is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// Nothing of the line yet: a line end here makes a blank line.
    Start,
    /// The field name so far is the first n (1..=4) bytes of `data`.
    Name(u8),
    /// A comment, a field other than `data`, or its value: nothing until the line end.
    Skip,
    /// Just after `data:`: a space here is not part of the value.
    DataSpace,
    /// Inside the value of a `data` field.
    Data,
}

/// The SSE byte machine.
#[derive(Debug, Clone)]
pub(super) struct Sse {
    line: Line,
    /// The previous line ended with CR: an LF now belongs to that line end.
    after_cr: bool,
    /// Bytes of the current `data` value so far.
    value_len: u64,
    /// Bytes of `[DONE]` the current `data` value matches so far (`NOT_DONE`: none).
    done_pos: u8,
    /// `data` lines of the pending event.
    data_lines: u64,
    /// Σ of their values' lengths.
    data_len: u64,
    /// The pending event's first `data` value is exactly `[DONE]`.
    first_done: bool,
}

impl Default for Sse {
    fn default() -> Self {
        Sse {
            line: Line::Start,
            after_cr: false,
            value_len: 0,
            done_pos: 0,
            data_lines: 0,
            data_len: 0,
            first_done: false,
        }
    }
}

impl Sse {
    /// Feeds `bytes`; `on(end, d)` for each event dispatched by the byte at `end - 1`.
    pub(super) fn feed(&mut self, bytes: &[u8], mut on: impl FnMut(usize, Dispatch)) {
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    i += 1;
                    continue;
                }
            }
            // The long stretches (values, comments) go at memchr's speed; a data value
            // goes byte by byte only while it may still be `[DONE]`.
            let fast = match self.line {
                Line::Skip => true,
                Line::Data => self.done_pos == NOT_DONE,
                _ => false,
            };
            if fast {
                let rest = &bytes[i..];
                let n = memchr::memchr2(b'\r', b'\n', rest).unwrap_or(rest.len());
                if n > 0 {
                    if self.line == Line::Data {
                        self.value_len += n as u64;
                    }
                    i += n;
                    continue;
                }
            }
            i += 1;
            match b {
                b'\r' | b'\n' => {
                    self.after_cr = b == b'\r';
                    if let Some(d) = self.end_of_line() {
                        on(i, d);
                    }
                }
                _ => self.byte(b),
            }
        }
    }

    /// One byte of a line (not a line end), outside the fast stretches.
    #[inline]
    fn byte(&mut self, b: u8) {
        self.line = match self.line {
            Line::Start if b == b':' => Line::Skip,
            Line::Start if b == DATA[0] => Line::Name(1),
            Line::Start => Line::Skip,
            Line::Name(4) if b == b':' => Line::DataSpace,
            Line::Name(n) if n < 4 && b == DATA[usize::from(n)] => Line::Name(n + 1),
            Line::Name(_) => Line::Skip,
            Line::DataSpace if b == b' ' => Line::Data,
            Line::DataSpace | Line::Data => {
                self.value_byte(b);
                Line::Data
            }
            Line::Skip => Line::Skip,
        };
    }

    /// One byte of a `data` value.
    #[inline]
    fn value_byte(&mut self, b: u8) {
        self.value_len += 1;
        self.done_pos = match self.done_pos {
            p if usize::from(p) < DONE.len() && b == DONE[usize::from(p)] => p + 1,
            _ => NOT_DONE,
        };
    }

    /// The current line ended; the event it dispatches, if any.
    fn end_of_line(&mut self) -> Option<Dispatch> {
        let line = std::mem::replace(&mut self.line, Line::Start);
        let (len, done) = (self.value_len, usize::from(self.done_pos) == DONE.len());
        self.value_len = 0;
        self.done_pos = 0;
        match line {
            Line::Start => return self.dispatch(),
            // `data` alone on its line, or `data:` with nothing after: an empty value.
            Line::Name(4) | Line::DataSpace => self.data_line(0, false),
            Line::Data => self.data_line(len, done),
            Line::Name(_) | Line::Skip => {}
        }
        None
    }

    /// A `data` field with a value of `len` bytes (`done`: exactly `[DONE]`).
    fn data_line(&mut self, len: u64, done: bool) {
        if self.data_lines == 0 {
            self.first_done = done;
        }
        self.data_lines += 1;
        self.data_len += len;
    }

    /// A blank line: the pending event, unless its data is empty.
    fn dispatch(&mut self) -> Option<Dispatch> {
        if self.data_lines == 0 {
            return None;
        }
        let d = Dispatch {
            // The values joined with LF: the LF after the last one is removed.
            data_bytes: self.data_len + self.data_lines - 1,
            done: self.data_lines == 1 && self.first_done,
        };
        self.data_lines = 0;
        self.data_len = 0;
        Some(d)
    }

    /// An event would be dispatched if a blank line came now: data is pending, or the
    /// current line is a `data` field.
    pub(super) fn pending(&self) -> bool {
        self.data_lines > 0 || matches!(self.line, Line::Name(4) | Line::DataSpace | Line::Data)
    }
}
