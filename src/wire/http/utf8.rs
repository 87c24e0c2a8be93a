//! Incremental lossy UTF-8 decoding of a byte stream that arrives in pieces (the
//! `--wsesspage` HTML scan, `http::html`, feeds html5ever, which takes text).
//!
//! Owns the carry of a character split across pieces (at most 3 bytes): the text is
//! exactly `String::from_utf8_lossy` of the whole stream, however it is split (invalid
//! sequences become U+FFFD). Hand-written because the standard library decodes whole
//! buffers only and the crates that stream (encoding_rs) would add a dependency for
//! twenty lines.

/// Incremental lossy UTF-8 decoding: the same text as `String::from_utf8_lossy` of the
/// whole input, however it is split.
#[derive(Debug, Default)]
pub(crate) struct Utf8Carry {
    carry: [u8; 4],
    len: usize,
}

impl Utf8Carry {
    /// Appends the text of `bytes` (after what was carried) to `out`.
    pub(crate) fn decode(&mut self, mut bytes: &[u8], out: &mut String) {
        if self.len > 0 {
            // Complete (or reject) the sequence carried from the last piece.
            let mut tmp = [0u8; 8];
            tmp[..self.len].copy_from_slice(&self.carry[..self.len]);
            let take = bytes.len().min(4);
            tmp[self.len..self.len + take].copy_from_slice(&bytes[..take]);
            let all = &tmp[..self.len + take];
            let used = match std::str::from_utf8(all) {
                Ok(_) => all.len(),
                Err(e) if e.valid_up_to() > 0 => e.valid_up_to(),
                Err(e) => match e.error_len() {
                    Some(n) => {
                        out.push(char::REPLACEMENT_CHARACTER);
                        n
                    }
                    None => {
                        // Still incomplete: everything so far is carried.
                        self.carry[..all.len()].copy_from_slice(all);
                        self.len = all.len();
                        return;
                    }
                },
            };
            // Only the first character (the carried one) is taken from `tmp`.
            let first = first_char_len(all, used);
            if let Ok(s) = std::str::from_utf8(&all[..first]) {
                out.push_str(s);
            }
            let from_input = first.max(self.len) - self.len;
            bytes = &bytes[from_input.min(bytes.len())..];
            self.len = 0;
        }
        loop {
            match std::str::from_utf8(bytes) {
                Ok(s) => {
                    out.push_str(s);
                    return;
                }
                Err(e) => {
                    let (good, rest) = bytes.split_at(e.valid_up_to());
                    out.push_str(std::str::from_utf8(good).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            bytes = &rest[n..];
                        }
                        None => {
                            self.carry[..rest.len()].copy_from_slice(rest);
                            self.len = rest.len();
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// Length of the first unit decoded from `all`: the first character when it is valid
/// (`used` > 0 bytes are valid), or the `used` bytes of an invalid sequence.
fn first_char_len(all: &[u8], used: usize) -> usize {
    match std::str::from_utf8(&all[..used]) {
        Ok(s) => s.chars().next().map_or(used, char::len_utf8),
        Err(_) => used,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_is_decoded_across_splits_like_from_utf8_lossy() {
        let inputs: [&[u8]; 5] = [
            "aé€😀z".as_bytes(),
            b"a\xe0\x80\x80b",
            b"\xe1\x80A\xf0\x9f\x98",
            b"\xff\xfe<img src=\xe9.png>",
            b"\xf0\x9f\x98\x80\xed\xa0\x80\xc3",
        ];
        for input in inputs {
            let want = String::from_utf8_lossy(input);
            for a in 0..=input.len() {
                for b in a..=input.len() {
                    let mut d = Utf8Carry::default();
                    let mut out = String::new();
                    d.decode(&input[..a], &mut out);
                    d.decode(&input[a..b], &mut out);
                    d.decode(&input[b..], &mut out);
                    if d.len > 0 {
                        out.push(char::REPLACEMENT_CHARACTER);
                    }
                    assert_eq!(out, want, "{input:?} cut {a} {b}");
                }
            }
        }
    }
}
