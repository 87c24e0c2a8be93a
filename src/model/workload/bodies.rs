//! `--body-lines FILE` and `--body-order`: request bodies that vary per call, as an LLM
//! client's prompts do (servers cache identical prompts).
//!
//! Owns reading and checking the file (one body a line, each one JSON value, as a
//! JSON-lines file of chat requests is; blank lines are skipped; CRLF or LF endings)
//! so that an empty file or a bad line is an option error naming the file and the
//! line before anything is sent, and which line call number k of the run sends
//! (`BodyOrder::pick`: by the call's number, so engines, threads and partitions need
//! no shared state and a seed gives the same lines on every run). Each line becomes a
//! request of its own in `call::Requests` (rendered once, its body shared), so calls
//! cost what a `--body-file` call does. Called by `Workload::from_config`.

use super::error::WorkloadError;
use crate::model::call::{Body, CallRef, Requests};
use crate::model::config::{BodyOrder, Config};

/// The bodies of `--body-lines`, each a request in `Requests`.
#[derive(Debug, Clone)]
pub(crate) struct BodyLines {
    /// The first line's request (`CallRef::Template(first + i)` is line i's).
    first: u32,
    /// How many lines.
    count: u32,
    order: BodyOrder,
}

impl BodyLines {
    /// Reads `cfg`'s `--body-lines` file, if any, and adds a request per line to
    /// `requests` (the fixed request's method, URI and header lines `extra`, with the
    /// line as body and its `Content-Length:`).
    pub(crate) fn from_config(
        cfg: &Config,
        extra: &[u8],
        requests: &mut Requests,
    ) -> Result<Option<BodyLines>, WorkloadError> {
        let Some(file) = cfg.request().body_lines() else {
            return Ok(None);
        };
        let bytes = std::fs::read(file).map_err(|source| WorkloadError::Unreadable {
            option: "--body-lines",
            file: file.to_string(),
            source,
        })?;
        let bodies = parse(file, &bytes)?;
        let mut first = None;
        for body in &bodies {
            let r = requests.add_fixed_with_body(cfg, extra, Body::from(*body));
            if let CallRef::Template(i) = r {
                first.get_or_insert(i);
            }
        }
        let count = u32::try_from(bodies.len()).map_err(|_| WorkloadError::BodyLines {
            file: file.to_string(),
            message: "more than 4294967295 lines".into(),
        })?;
        Ok(first.map(|first| BodyLines {
            first,
            count,
            order: cfg.request().body_order(),
        }))
    }

    /// The request call number `k` of the run sends.
    pub(crate) fn call_ref(&self, k: u64) -> CallRef {
        let i = self.order.pick(k, u64::from(self.count));
        // `pick` is below `count`, a u32.
        CallRef::Template(self.first + i as u32)
    }
}

/// The bodies of file `name` (its bytes `bytes`): each non-blank line, without its
/// line end, checked to be one JSON value.
pub(crate) fn parse<'a>(name: &str, bytes: &'a [u8]) -> Result<Vec<&'a [u8]>, WorkloadError> {
    let bad = |message: String| WorkloadError::BodyLines {
        file: name.to_string(),
        message,
    };
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(line) {
            return Err(bad(format!(
                "line {}: not one JSON value ({e}); give one body a line",
                i + 1
            )));
        }
        out.push(line);
    }
    if out.is_empty() {
        return Err(bad("no body in it (one JSON value a line)".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bodies_and_blank_lines_are_skipped() {
        let got = parse("p", b"{\"a\":1}\r\n\n  \n[1, 2]\n\"x\"").expect("valid");
        assert_eq!(got, [&b"{\"a\":1}"[..], b"[1, 2]", b"\"x\""]);
    }

    #[test]
    fn an_empty_file_or_a_line_that_is_not_json_is_refused_with_its_number() {
        let e = parse("p.jsonl", b"\n\n").expect_err("empty");
        assert_eq!(
            e.to_string(),
            "--body-lines p.jsonl: no body in it (one JSON value a line)"
        );
        let e = parse("p.jsonl", b"{\"a\":1}\n{\"a\":\n2}\n").expect_err("split JSON");
        let text = e.to_string();
        assert!(
            text.starts_with("--body-lines p.jsonl: line 2: not one JSON value ("),
            "{text}"
        );
        assert!(parse("p", b"{} {}\n").is_err(), "two values on a line");
    }

    #[test]
    fn round_robin_cycles_and_random_is_the_same_for_a_seed_and_covers_every_line() {
        let rr: Vec<u64> = (0..7).map(|k| BodyOrder::RoundRobin.pick(k, 3)).collect();
        assert_eq!(rr, [0, 1, 2, 0, 1, 2, 0]);
        let draw = |seed| -> Vec<u64> {
            (0..3000)
                .map(|k| BodyOrder::Random(seed).pick(k, 3))
                .collect()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        for line in 0..3 {
            let n = draw(7).iter().filter(|&&l| l == line).count();
            // Each line about a third of the time (binomial sd ≈ 26).
            assert!((850..1150).contains(&n), "line {line}: {n}");
        }
    }
}
