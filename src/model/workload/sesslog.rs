//! The `--wsesslog` session file: parsing it into session templates
//! (docs/compatibility.md §1.4.2).
//!
//! Owns the file format: `#` comments in column 1, blank lines between sessions,
//! indented lines joining the current burst, and the `method=`, `think=` and
//! `contents=` arguments with their quoting, escapes and continuation lines. Lines may
//! be of any length and may end in CRLF. Errors name the file and line.
//!
//! Does not issue sessions, choose default think times or build request bytes: the
//! session workload (engine side) instantiates the templates round-robin. Called once
//! at start-up by whoever sets up a `--wsesslog` run.

use super::error::WorkloadError;

/// Request methods `method=` is matched against, by prefix, first match wins (as
/// httperf master's table, which adds PROPFIND and REPORT to 0.9.0's).
const METHODS: [&str; 9] = [
    "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "PROPFIND", "REPORT", "TRACE",
];

/// One request line of a session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateRequest {
    /// The URI, sent verbatim.
    pub(crate) uri: String,
    /// The method (`GET` unless `method=` says otherwise), spelled as in the table.
    pub(crate) method: String,
    /// The request body from `contents=` (empty: no body).
    pub(crate) body: Vec<u8>,
}

/// Requests issued together, followed by a think time.
#[derive(Debug, Clone, PartialEq)]
pub struct Burst {
    /// Think time after this burst, seconds; None: the `--wsesslog` default.
    pub think: Option<f64>,
    /// The requests of the burst, in file order (never empty).
    pub requests: Vec<TemplateRequest>,
}

/// One session of the file: its bursts in order (never empty).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionTemplate {
    /// The bursts, in file order.
    pub bursts: Vec<Burst>,
}

/// Reads and parses session file `path`.
pub(crate) fn parse_file(path: &str) -> Result<Vec<SessionTemplate>, WorkloadError> {
    let text = std::fs::read(path).map_err(|source| WorkloadError::Open {
        file: path.to_string(),
        source,
    })?;
    parse(path, &text)
}

/// Parses the text of a session file; `name` is used in error messages.
pub fn parse(name: &str, text: &[u8]) -> Result<Vec<SessionTemplate>, WorkloadError> {
    let mut lines = Lines::new(text);
    let mut sessions = Vec::new();
    let mut current: Vec<Burst> = Vec::new();
    while let Some((lineno, line)) = lines.next_line() {
        if line.first() == Some(&b'#') {
            continue;
        }
        let start = skip_ws(line, 0);
        if start == line.len() {
            if !current.is_empty() {
                sessions.push(SessionTemplate {
                    bursts: std::mem::take(&mut current),
                });
            }
            continue;
        }
        let indented = start > 0;
        let at = At { name, line: lineno };
        let (request, think) = parse_request(at, line, start, &mut lines)?;
        match current.last_mut() {
            Some(burst) if indented => burst.requests.push(request),
            _ => current.push(Burst {
                think: None,
                requests: vec![request],
            }),
        }
        if think.is_some() {
            current
                .last_mut()
                .expect("a request was just added to a burst")
                .think = think;
        }
    }
    if !current.is_empty() {
        sessions.push(SessionTemplate { bursts: current });
    }
    if sessions.is_empty() {
        return Err(WorkloadError::NoSessions {
            file: name.to_string(),
        });
    }
    Ok(sessions)
}

/// Where we are, for error messages.
#[derive(Clone, Copy)]
struct At<'a> {
    name: &'a str,
    line: usize,
}

impl At<'_> {
    fn err(&self, what: impl std::fmt::Display) -> WorkloadError {
        WorkloadError::SessionLine {
            file: self.name.to_string(),
            line: self.line,
            cause: what.to_string(),
        }
    }
}

/// The file's lines, without their `\n` or `\r\n`, numbered from 1.
struct Lines<'a> {
    text: &'a [u8],
    pos: usize,
    lineno: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a [u8]) -> Self {
        Lines {
            text,
            pos: 0,
            lineno: 0,
        }
    }

    fn next_line(&mut self) -> Option<(usize, &'a [u8])> {
        if self.pos >= self.text.len() {
            return None;
        }
        let rest = &self.text[self.pos..];
        let (mut line, used) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        if let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        self.pos += used;
        self.lineno += 1;
        Some((self.lineno, line))
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c')
}

fn skip_ws(line: &[u8], mut i: usize) -> usize {
    while i < line.len() && is_ws(line[i]) {
        i += 1;
    }
    i
}

fn token_end(line: &[u8], mut i: usize) -> usize {
    while i < line.len() && !is_ws(line[i]) {
        i += 1;
    }
    i
}

/// Parses one request line starting at its URI (`start`); `contents=` may continue
/// onto following lines. Returns the request and its `think=` value, if any.
fn parse_request<'a>(
    mut at: At<'_>,
    mut line: &'a [u8],
    start: usize,
    lines: &mut Lines<'a>,
) -> Result<(TemplateRequest, Option<f64>), WorkloadError> {
    let end = token_end(line, start);
    let raw = &line[start..end];
    // httperf reads the line as a C string, so a NUL cuts the URI (and the rest of the
    // line) short; a control byte would go into the request line as it is. Neither is
    // a URI: refused here, naming the line.
    if let Some(&b) = raw.iter().find(|b| b.is_ascii_control()) {
        return Err(at.err(format_args!(
            "URI contains the control byte 0x{b:02x} (a URI is printable; percent-encode it, e.g. %{b:02X})"
        )));
    }
    let uri = std::str::from_utf8(raw)
        .map_err(|_| at.err("URI is not valid UTF-8"))?
        .to_string();
    let mut request = TemplateRequest {
        uri,
        method: "GET".to_string(),
        body: Vec::new(),
    };
    let mut think = None;
    let mut i = end;
    loop {
        i = skip_ws(line, i);
        if i == line.len() {
            break;
        }
        let arg = &line[i..];
        if let Some(value) = arg.strip_prefix(b"method=") {
            let end = token_end(value, 0);
            request.method = match_method(&value[..end])
                .ok_or_else(|| {
                    at.err(format_args!(
                        "unknown method '{}'",
                        String::from_utf8_lossy(&value[..end])
                    ))
                })?
                .to_string();
            i += "method=".len() + end;
        } else if let Some(value) = arg.strip_prefix(b"think=") {
            let end = token_end(value, 0);
            think = Some(parse_think(&value[..end]).ok_or_else(|| {
                at.err(format_args!(
                    "bad think time '{}' (expected seconds >= 0)",
                    String::from_utf8_lossy(&value[..end])
                ))
            })?);
            i += "think=".len() + end;
        } else if arg.starts_with(b"contents=") {
            request.body.clear();
            (line, i) = parse_contents(
                &mut at,
                line,
                i + "contents=".len(),
                lines,
                &mut request.body,
            )?;
        } else {
            let end = token_end(arg, 0);
            return Err(at.err(format_args!(
                "unknown argument '{}'",
                String::from_utf8_lossy(&arg[..end])
            )));
        }
    }
    Ok((request, think))
}

/// The table method that `m` starts with (httperf's `strncmp(m, name, strlen(name))`).
fn match_method(m: &[u8]) -> Option<&'static str> {
    METHODS
        .iter()
        .copied()
        .find(|name| m.starts_with(name.as_bytes()))
}

/// A finite, non-negative number of seconds.
fn parse_think(v: &[u8]) -> Option<f64> {
    let t: f64 = std::str::from_utf8(v).ok()?.parse().ok()?;
    (t.is_finite() && t >= 0.0).then_some(t)
}

/// Parses a `contents=` value from `line[i..]` into `body`: quotes, escapes and
/// backslash-newline continuation (which moves on to the next line, updating `at`).
/// Returns the line and position where the value ended.
fn parse_contents<'a>(
    at: &mut At<'_>,
    mut line: &'a [u8],
    mut i: usize,
    lines: &mut Lines<'a>,
    body: &mut Vec<u8>,
) -> Result<(&'a [u8], usize), WorkloadError> {
    let mut quote: Option<u8> = None;
    loop {
        let Some(&c) = line.get(i) else {
            if quote.is_some() {
                return Err(at.err("unterminated quote in contents="));
            }
            return Ok((line, i));
        };
        i += 1;
        match c {
            b'\\' => match line.get(i) {
                None => {
                    // Backslash-newline: the value goes on, with a LF, on the next line.
                    body.push(b'\n');
                    let Some((lineno, next)) = lines.next_line() else {
                        return Err(at.err("backslash at end of file in contents="));
                    };
                    at.line = lineno;
                    line = next;
                    i = 0;
                }
                Some(&e) => {
                    i += 1;
                    body.push(match e {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        other => other,
                    });
                }
            },
            q if Some(q) == quote => quote = None,
            b'\'' | b'"' if quote.is_none() => quote = Some(c),
            ws if quote.is_none() && is_ws(ws) => return Ok((line, i - 1)),
            other => body.push(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, uri: &str, body: &[u8]) -> TemplateRequest {
        TemplateRequest {
            uri: uri.to_string(),
            method: method.to_string(),
            body: body.to_vec(),
        }
    }

    fn get(uri: &str) -> TemplateRequest {
        req("GET", uri, b"")
    }

    fn err(text: &str) -> String {
        match parse("f.log", text.as_bytes()) {
            Err(e @ (WorkloadError::SessionLine { .. } | WorkloadError::NoSessions { .. })) => {
                e.to_string()
            }
            other => panic!("expected a usage error for {text:?}, got {other:?}"),
        }
    }

    fn one(text: &str) -> TemplateRequest {
        let s = parse("f.log", text.as_bytes()).expect("valid");
        s[0].bursts[0].requests[0].clone()
    }

    const A9C: &str = "# comment\n/echo think=0.3\n\t/1k.html\n\t/index.html\n\
                       /echo method=POST contents=\"a b\\nc\"\n\n\n# session 2\n\
                       /echo method=HEAD\n  /1k.html\n";

    #[test]
    fn reference_file_a9c() {
        let want = vec![
            SessionTemplate {
                bursts: vec![
                    Burst {
                        think: Some(0.3),
                        requests: vec![get("/echo"), get("/1k.html"), get("/index.html")],
                    },
                    Burst {
                        think: None,
                        requests: vec![req("POST", "/echo", b"a b\nc")],
                    },
                ],
            },
            SessionTemplate {
                bursts: vec![Burst {
                    think: None,
                    requests: vec![req("HEAD", "/echo", b""), get("/1k.html")],
                }],
            },
        ];
        assert_eq!(parse("sess.log", A9C.as_bytes()).expect("valid"), want);
        let crlf = A9C.replace('\n', "\r\n");
        assert_eq!(parse("sess.log", crlf.as_bytes()).expect("valid"), want);
    }

    #[test]
    fn indented_first_line_starts_a_burst_and_think_on_any_line() {
        let s = parse("f", b"\n\n  /a\n  /b think=2\n/c think=0\n").expect("valid");
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].bursts.len(), 2);
        assert_eq!(s[0].bursts[0].requests, vec![get("/a"), get("/b")]);
        assert_eq!(s[0].bursts[0].think, Some(2.0));
        assert_eq!(s[0].bursts[1].think, Some(0.0));
    }

    #[test]
    fn blank_lines_and_comments() {
        let s = parse("f", b"/a\n \t \n\n\n/b\n#x\n  #notcomment\n").expect("valid");
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].bursts[0].requests, vec![get("/b"), get("#notcomment")]);
        // A comment does not end a session; only a blank line does.
        let s = parse("f", b"/a\n# c\n/b\n").expect("valid");
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].bursts.len(), 2);
    }

    #[test]
    fn methods_match_by_prefix() {
        for (m, want) in [
            ("GET", "GET"),
            ("GETX", "GET"),
            ("POST", "POST"),
            ("PUT", "PUT"),
            ("PROPFIND", "PROPFIND"),
            ("REPORT", "REPORT"),
            ("TRACE", "TRACE"),
            ("OPTIONS", "OPTIONS"),
            ("DELETE", "DELETE"),
            ("HEADER", "HEAD"),
        ] {
            assert_eq!(one(&format!("/x method={m}")).method, want, "{m}");
        }
    }

    #[test]
    fn errors_name_file_and_line() {
        assert_eq!(err("/a\n/b method=FOO\n"), "f.log:2: unknown method 'FOO'");
        assert_eq!(err("/a method=get\n"), "f.log:1: unknown method 'get'");
        assert_eq!(err("/a method=\n"), "f.log:1: unknown method ''");
        assert_eq!(err("# c\n\n/a x=y\n"), "f.log:3: unknown argument 'x=y'");
        assert_eq!(err("/a bogus\n"), "f.log:1: unknown argument 'bogus'");
        for t in ["-1", "abc", "inf", "nan", ""] {
            assert_eq!(
                err(&format!("/a\n\n/b think={t}\n")),
                format!("f.log:3: bad think time '{t}' (expected seconds >= 0)")
            );
        }
        assert_eq!(
            err("/a\n/b contents=\"abc\n"),
            "f.log:2: unterminated quote in contents="
        );
        assert_eq!(
            err("/a contents='x\\\ny\\\nz\n"),
            "f.log:3: unterminated quote in contents="
        );
        assert_eq!(
            err("/a contents=x\\"),
            "f.log:1: backslash at end of file in contents="
        );
        assert_eq!(err(""), "f.log: no sessions found");
        assert_eq!(err("\n\n# only comments\n  \n"), "f.log: no sessions found");
        // A NUL (httperf would cut the URI there) or another control byte in a URI.
        assert_eq!(
            err("/a\n/b\0c method=POST\n"),
            "f.log:2: URI contains the control byte 0x00 (a URI is printable; \
             percent-encode it, e.g. %00)"
        );
        assert!(err("/a\x7f\n").starts_with("f.log:1: URI contains the control byte 0x7f"));
        // In a body, any byte is data.
        assert_eq!(one("/a contents=x\0y").body, b"x\0y");
    }

    #[test]
    fn contents_quotes_escapes_continuation() {
        assert_eq!(one("/a contents=abc").body, b"abc");
        assert_eq!(one("/a contents='a \"b\" c'").body, b"a \"b\" c");
        assert_eq!(one("/a contents=\"it's\"").body, b"it's");
        assert_eq!(one("/a contents=x'y z'w").body, b"xy zw");
        assert_eq!(
            one("/a contents=a\\tb\\rc\\nd\\q\\\\").body,
            b"a\tb\rc\ndq\\"
        );
        assert_eq!(one("/a contents=a\\ b").body, b"a b");
        assert_eq!(one("/a contents=").body, b"");
        // Continuation: LF inserted, the value and the line's arguments go on.
        let s = parse("f", b"/a contents=\"one\\\ntwo\" method=PUT think=1\n/b\n").expect("ok");
        assert_eq!(s[0].bursts[0].requests[0], req("PUT", "/a", b"one\ntwo"));
        assert_eq!(s[0].bursts[0].think, Some(1.0));
        assert_eq!(s[0].bursts[1].requests[0], get("/b"));
        // With CRLF line endings the continuation works the same.
        let s = parse("f", b"/a contents=one\\\r\ntwo\r\n").expect("ok");
        assert_eq!(s[0].bursts[0].requests[0].body, b"one\ntwo");
        // Arguments after contents= on the same line.
        let r = one("/a contents=\"x y\" method=POST");
        assert_eq!(r, req("POST", "/a", b"x y"));
    }

    #[test]
    fn huge_line() {
        let big = "x".repeat(1 << 20);
        let text = format!("/a contents={big}\n/{big}\n");
        let s = parse("f", text.as_bytes()).expect("valid");
        assert_eq!(s[0].bursts[0].requests[0].body.len(), 1 << 20);
        assert_eq!(s[0].bursts[1].requests[0].uri.len(), (1 << 20) + 1);
    }

    #[test]
    fn no_trailing_newline_and_read_errors() {
        let s = parse("f", b"/a\n  /b").expect("valid");
        assert_eq!(s[0].bursts[0].requests.len(), 2);
        match parse_file("/nonexistent/rshperf-sess.log") {
            Err(e @ WorkloadError::Open { .. }) => {
                let m = e.to_string();
                assert!(
                    m.starts_with("can't open /nonexistent/rshperf-sess.log: "),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
