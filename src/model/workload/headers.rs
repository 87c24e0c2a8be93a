//! `--header-file`, `--content-type` and `--body-file`: the header lines and the body
//! every request of the request-oriented workload carries.
//!
//! Owns reading and checking the header file (one `Name: value` a line; blank lines
//! and lines starting with `#` are skipped; CRLF or LF endings), so that a malformed
//! line is an option error naming the file and the line, before anything is sent;
//! and reading the body once into a shared `call::Body`. Called by
//! `Workload::from_config`; the lines and body are rendered by `call::Requests`.

use super::error::WorkloadError;
use crate::model::call::{self, Body};
use crate::model::config::Config;

/// What the options add to requests.
#[derive(Debug, Clone)]
pub(crate) struct Extra {
    /// Header lines for every request (`--add-header-file` verbatim, then
    /// `--header-file` lines, then `Content-Type:`), each ending in CRLF.
    pub(crate) lines: Vec<u8>,
    /// `--body-file`: the body of the fixed request and its `Content-Length:` line.
    pub(crate) body: Option<(Body, Vec<u8>)>,
}

/// Reads the files `cfg` names.
pub(crate) fn from_config(cfg: &Config) -> Result<Extra, WorkloadError> {
    let mut lines = match cfg.request().add_header_file() {
        Some(f) => std::fs::read(f).map_err(|source| WorkloadError::AddHeaderFile {
            file: f.to_string(),
            source,
        })?,
        None => Vec::new(),
    };
    if let Some(f) = cfg.request().header_file() {
        let bytes = std::fs::read(f).map_err(|source| WorkloadError::Unreadable {
            option: "--header-file",
            file: f.to_string(),
            source,
        })?;
        lines.extend_from_slice(&parse(f, &bytes)?);
    }
    if let Some(t) = cfg.request().content_type() {
        lines.extend_from_slice(format!("Content-Type: {t}\r\n").as_bytes());
    }
    let body = match cfg.request().body_file() {
        Some(f) => {
            let body = call::read_body(f).map_err(|source| WorkloadError::Unreadable {
                option: "--body-file",
                file: f.to_string(),
                source,
            })?;
            let length = format!("Content-Length: {}\r\n", body.len()).into_bytes();
            Some((body, length))
        }
        None => None,
    };
    Ok(Extra { lines, body })
}

/// Checks the header file `name` and returns its lines, each ending in CRLF.
pub(crate) fn parse(name: &str, bytes: &[u8]) -> Result<Vec<u8>, WorkloadError> {
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for (i, raw) in lines.into_iter().enumerate() {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.iter().all(u8::is_ascii_whitespace) || line.first() == Some(&b'#') {
            continue;
        }
        let bad = |cause: &'static str| WorkloadError::HeaderLine {
            file: name.to_string(),
            line: i + 1,
            cause,
            text: String::from_utf8_lossy(line).into_owned(),
        };
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Err(bad("expected 'Name: value'"));
        };
        let (field, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if field.is_empty() {
            return Err(bad("empty header name"));
        }
        if !field.iter().all(|&b| is_tchar(b)) {
            return Err(bad("header names are tokens (no spaces or separators)"));
        }
        if value
            .iter()
            .any(|&b| b == b'\r' || b == 0 || b == 0x7f || (b < 0x20 && b != b'\t'))
        {
            return Err(bad("control character in the value"));
        }
        out.extend_from_slice(field);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    Ok(out)
}

/// RFC 9110 `tchar`: the bytes of a header name.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_normalised_and_comments_skipped() {
        let got = parse(
            "h",
            b"# auth\nX-A: 1\r\n\nAuthorization:  Bearer t0k\nX-Empty:\n",
        )
        .expect("valid");
        assert_eq!(got, b"X-A: 1\r\nAuthorization: Bearer t0k\r\nX-Empty: \r\n");
        assert_eq!(parse("h", b"").expect("empty is fine"), b"");
    }

    #[test]
    fn malformed_lines_name_their_number() {
        let err = |text: &[u8]| parse("hdrs.txt", text).expect_err("malformed").to_string();
        assert_eq!(
            err(b"X-A: 1\nno colon here\n"),
            "--header-file hdrs.txt: line 2: expected 'Name: value': 'no colon here'"
        );
        assert!(err(b"\n\n: v\n").contains("line 3: empty header name"));
        assert!(err(b"Bad Name: v\n").contains("line 1: header names are tokens"));
        assert!(err(b"X: a\x01b\n").contains("line 1: control character"));
        assert!(err(b"X: a\rb\n").contains("line 1: control character"));
    }
}
