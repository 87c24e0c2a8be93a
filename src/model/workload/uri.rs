//! URI generators for `--wlog` (a list of URIs from a file) and `--wset` (a working
//! set of numbered files), docs/compatibility.md §1.4.1 and §1.4.3.
//!
//! Owns reading and splitting the `--wlog` file and the `--wset` path construction.
//! Does not build requests, print `-v` lines or end the test: the engine asks for the
//! next URI per call, and ends the run when `Wlog::next` says the list is exhausted.
//! Neither generator allocates per call.

use super::error::WorkloadError;
use crate::model::config::{WlogSpec, WsetSpec};

/// The first value of glibc's `drand48()` in a process that never seeded it: the state
/// starts at 0, so the first value is 0xB / 2^48 (checked against glibc 2.36). It is
/// where httperf's `--wset` miss probability starts. (0.39646477376027534 is the first
/// value on systems whose unseeded state is POSIX's 0x1234ABCD330E, not glibc's.)
pub(crate) const DRAND48_FIRST: f64 = 11.0 / 281_474_976_710_656.0;

/// The `--wlog` URI list: entries in file order, optionally repeating.
#[derive(Debug, Clone)]
pub(crate) struct Wlog {
    /// All entries, concatenated.
    text: String,
    /// `(start, end)` of each entry in `text`.
    spans: Vec<(usize, usize)>,
    /// Index of the entry `next` returns.
    pos: usize,
    /// Start again at the first entry after the last (`--wlog=y,…`).
    repeat: bool,
}

impl Wlog {
    /// Reads the file of `spec` (NUL-separated URIs).
    pub(crate) fn from_file(spec: &WlogSpec) -> Result<Wlog, WorkloadError> {
        let bytes = std::fs::read(spec.file()).map_err(|source| WorkloadError::Open {
            file: spec.file().to_string(),
            source,
        })?;
        Wlog::from_bytes(spec.file(), &bytes, spec.repeat())
    }

    /// Splits `bytes` at NUL bytes, skipping empty entries; `name` is used in errors.
    pub(crate) fn from_bytes(
        name: &str,
        bytes: &[u8],
        repeat: bool,
    ) -> Result<Wlog, WorkloadError> {
        if bytes.is_empty() {
            return Err(WorkloadError::EmptyLog {
                file: name.to_string(),
            });
        }
        let mut text = String::with_capacity(bytes.len());
        let mut spans = Vec::new();
        for (k, entry) in bytes.split(|&b| b == 0).enumerate() {
            if entry.is_empty() {
                continue;
            }
            let uri = std::str::from_utf8(entry).map_err(|_| WorkloadError::LogEntryNotUtf8 {
                file: name.to_string(),
                entry: k + 1,
            })?;
            let start = text.len();
            text.push_str(uri);
            spans.push((start, text.len()));
        }
        if spans.is_empty() {
            return Err(WorkloadError::NoUris {
                file: name.to_string(),
            });
        }
        Ok(Wlog {
            text,
            spans,
            pos: 0,
            repeat,
        })
    }

    /// The next URI; None once the list is exhausted and not repeating (the engine
    /// then ends the test, as httperf does).
    // Not an `Iterator`: the URI is lent from `self`.
    #[allow(clippy::should_implement_trait)]
    pub(crate) fn next(&mut self) -> Option<&str> {
        if self.pos == self.spans.len() {
            if !self.repeat {
                return None;
            }
            self.pos = 0;
        }
        let (start, end) = self.spans[self.pos];
        self.pos += 1;
        Some(&self.text[start..end])
    }

    /// Number of URIs in the list.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// Always false: a list without URIs is refused at construction.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// The `--wset=N,X` generator of one client.
#[derive(Debug, Clone)]
pub(crate) struct Wset {
    /// The URI under construction; its first `prefix_len` bytes are the prefix.
    buf: String,
    prefix_len: usize,
    /// Number of decimal digits in a path (one per power of ten below N).
    digits: u32,
}

impl Wset {
    /// The names of `spec`'s files under the URI prefix `prefix` (`--uri`).
    ///
    /// Unlike httperf (compatibility.md, bug 10), a prefix ending in `/` is used
    /// without that slash, so `/wset/` and `/wset` both give `/wset/0/0/1.html`, and
    /// `/` gives `/0/0/1.html`. With N = 1 the path has no digits and the prefix is
    /// used as given (`/wset.html`, `/.html`).
    pub(crate) fn new(prefix: &str, spec: &WsetSpec) -> Wset {
        let files = spec.files().max(1);
        let mut digits = 0u32;
        let mut j: u64 = 1;
        while j < files {
            digits += 1;
            match j.checked_mul(10) {
                Some(n) => j = n,
                None => break,
            }
        }
        let prefix = match prefix.strip_suffix('/') {
            Some(trimmed) if digits > 0 => trimmed,
            _ => prefix,
        };
        let mut buf = String::with_capacity(prefix.len() + 2 * digits as usize + 5);
        buf.push_str(prefix);
        Wset {
            prefix_len: buf.len(),
            buf,
            digits,
        }
    }

    /// The URI of file number `file` (lent from the internal buffer).
    pub(crate) fn uri_of(&mut self, file: u64) -> &str {
        self.buf.truncate(self.prefix_len);
        for i in (0..self.digits).rev() {
            let digit = (file / 10u64.pow(i)) % 10;
            self.buf.push('/');
            self.buf.push(char::from(b'0' + digit as u8));
        }
        self.buf.push_str(".html");
        &self.buf
    }
}

/// httperf's step-by-step walk of the working set, for client `client_id` of
/// `num_clients`: the reference the workload's closed form is tested against.
#[cfg(test)]
pub(crate) struct Walk {
    names: Wset,
    files: u64,
    stride: u64,
    miss_rate: f64,
    miss_prob: f64,
    file_num: u64,
}

#[cfg(test)]
impl Walk {
    /// The walk of client `client_id` of `num_clients` (`--client=I/N`).
    pub(crate) fn new(prefix: &str, spec: &WsetSpec, client_id: u32, num_clients: u32) -> Walk {
        let files = spec.files().max(1);
        Walk {
            names: Wset::new(prefix, spec),
            files,
            stride: u64::from(num_clients.max(1)),
            miss_rate: spec.miss_rate(),
            miss_prob: DRAND48_FIRST,
            // httperf starts at the client id as is; keep it inside the working set.
            file_num: u64::from(client_id) % files,
        }
    }

    /// The URI of the next call.
    #[allow(clippy::should_implement_trait)]
    pub(crate) fn next(&mut self) -> &str {
        self.miss_prob += self.miss_rate;
        if self.miss_prob >= 1.0 {
            self.miss_prob -= 1.0;
            self.file_num += self.stride;
            if self.file_num >= self.files {
                self.file_num -= self.files;
                // Only more clients than files get here; httperf would leave the set.
                self.file_num %= self.files;
            }
        }
        self.names.uri_of(self.file_num)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wset(prefix: &str, files: u64, miss_rate: f64, id: u32, n: u32) -> Walk {
        Walk::new(prefix, &WsetSpec::new(files, miss_rate), id, n)
    }

    fn take(w: &mut Walk, k: usize) -> Vec<String> {
        (0..k).map(|_| w.next().to_string()).collect()
    }

    #[test]
    fn drand48_first_value() {
        assert_eq!(DRAND48_FIRST, 3.907985046680551e-14);
    }

    #[test]
    fn reference_sequence_n1000_x05() {
        // miss_prob: 0.5+d → file 0; 1.0+d → 1 (d); 0.5+d → 1; 1.0+d → 2; …
        let mut w = wset("/", 1000, 0.5, 0, 1);
        let want = [
            "/0/0/0.html",
            "/0/0/1.html",
            "/0/0/1.html",
            "/0/0/2.html",
            "/0/0/2.html",
            "/0/0/3.html",
            "/0/0/3.html",
            "/0/0/4.html",
        ];
        assert_eq!(take(&mut w, 8), want);
    }

    #[test]
    fn sequence_x07_by_hand() {
        // 0.7 → 0; 1.4 → .4, 1; 1.1 → .1, 2; 0.8 → 2; 1.5 → .5, 3; 1.2 → .2, 4;
        // 0.9 → 4; 1.6 → .6, 5.
        let mut w = wset("/w", 100, 0.7, 0, 1);
        let got = take(&mut w, 8);
        let want: Vec<String> = [0, 1, 2, 2, 3, 4, 4, 5]
            .iter()
            .map(|f| format!("/w/0/{f}.html"))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn prefixes() {
        for p in ["/wset", "/wset/"] {
            let mut w = wset(p, 1000, 0.5, 0, 1);
            assert_eq!(take(&mut w, 2)[1], "/wset/0/0/1.html", "{p}");
        }
        let mut w = wset("/", 1000, 0.5, 0, 1);
        assert_eq!(take(&mut w, 2)[1], "/0/0/1.html");
        let mut w = wset("", 1000, 0.5, 0, 1);
        assert_eq!(take(&mut w, 2)[1], "/0/0/1.html");
    }

    #[test]
    fn client_striding() {
        // Every call misses with X = 1; client 1 of 3 starts at 1 and steps by 3.
        let mut w = wset("/", 10, 1.0, 1, 3);
        let got = take(&mut w, 6);
        assert_eq!(
            got,
            ["/4.html", "/7.html", "/0.html", "/3.html", "/6.html", "/9.html"]
        );
        // X = 0 never misses: always the client's own first file.
        let mut w = wset("/", 1000, 0.0, 7, 8);
        assert_eq!(take(&mut w, 3), ["/0/0/7.html"; 3]);
        // More clients than files stays inside the set.
        let mut w = wset("/", 10, 1.0, 3, 25);
        for u in take(&mut w, 20) {
            assert_eq!(u.len(), "/0.html".len(), "{u}");
        }
    }

    #[test]
    fn edge_sizes() {
        let mut w = wset("/wset", 1, 1.0, 0, 1);
        assert_eq!(take(&mut w, 2), ["/wset.html", "/wset.html"]);
        let mut w = wset("/", 1, 0.5, 0, 1);
        assert_eq!(w.next(), "/.html");
        let mut w = wset("/", 10, 1.0, 0, 1);
        assert_eq!(take(&mut w, 11)[8..], ["/9.html", "/0.html", "/1.html"]);
        let mut w = wset("/", 11, 1.0, 0, 1);
        assert_eq!(w.next(), "/0/1.html");
        let mut w = wset("/", 1001, 1.0, 999, 1);
        assert_eq!(take(&mut w, 2), ["/1/0/0/0.html", "/0/0/0/0.html"]);
        let mut w = wset("/", u64::MAX, 1.0, 0, 1);
        assert_eq!(w.next().len(), 1 + 20 * 2 + 4);
    }

    #[test]
    fn next_does_not_reallocate() {
        let mut w = wset("/some/prefix/", 1_000_000, 0.3, 0, 1);
        let cap = {
            w.next();
            w.names.buf.capacity()
        };
        for _ in 0..1000 {
            w.next();
        }
        assert_eq!(w.names.buf.capacity(), cap);
    }

    #[test]
    fn wlog_entries_and_end() {
        let mut w = Wlog::from_bytes("f", b"/a\0\0/b\0/c", false).expect("valid");
        assert_eq!(w.len(), 3);
        assert!(!w.is_empty());
        assert_eq!(w.next(), Some("/a"));
        assert_eq!(w.next(), Some("/b"));
        assert_eq!(w.next(), Some("/c"));
        assert_eq!(w.next(), None);
        assert_eq!(w.next(), None);
        let mut w = Wlog::from_bytes("f", b"\0/a\0/b\0", true).expect("valid");
        let got: Vec<String> = (0..5).map(|_| w.next().expect("repeats").into()).collect();
        assert_eq!(got, ["/a", "/b", "/a", "/b", "/a"]);
        // Newlines are not separators (as httperf).
        let mut w = Wlog::from_bytes("f", b"/a\n/b\n", false).expect("valid");
        assert_eq!(w.next(), Some("/a\n/b\n"));
    }

    #[test]
    fn wlog_errors() {
        let e = |b: &[u8]| Wlog::from_bytes("log", b, false).expect_err("invalid");
        assert!(matches!(e(b""), WorkloadError::EmptyLog { file } if file == "log"));
        assert!(matches!(e(b"\0\0\0"), WorkloadError::NoUris { file } if file == "log"));
        assert!(matches!(
            e(b"/a\0/\xff\0"),
            WorkloadError::LogEntryNotUtf8 { file, entry: 2 } if file == "log"
        ));
        let spec = WlogSpec::new(false, "/nonexistent/rshperf.wlog");
        match Wlog::from_file(&spec) {
            Err(e @ WorkloadError::Open { .. }) => {
                let m = e.to_string();
                assert!(
                    m.starts_with("can't open /nonexistent/rshperf.wlog: "),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn wlog_from_file() {
        let path = std::env::temp_dir().join(format!("rshperf-wlog-{}", std::process::id()));
        std::fs::write(&path, b"/x\0/y\0").expect("temp file");
        let spec = WlogSpec::new(false, path.to_string_lossy().into_owned());
        let mut w = Wlog::from_file(&spec).expect("valid");
        let _ = std::fs::remove_file(&path);
        assert_eq!(w.len(), 2);
        assert_eq!(w.next(), Some("/x"));
    }
}
