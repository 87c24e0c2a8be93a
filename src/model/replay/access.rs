//! The access-log lines `replay` reads: NCSA common and combined format (Apache's
//! `%h %l %u %t "%r" %>s %b` and `… "%{Referer}i" "%{User-agent}i"`, nginx's
//! `combined`), with the time in brackets as `$time_local`, `$msec` or
//! `$time_iso8601`, and an optional trailing `$request_time` (seconds).
//!
//! Owns one line's parsing into an `Entry`; reading the file, counting bad lines and
//! timing are `replay`'s. Quoted fields take `\"` and `\\` escapes (Apache) and keep
//! nginx's `\x22` as written. Hand-written: the format is a few fields, and no
//! crate parses it with its escapes. Pure; called by `replay::Parser`.

use super::time::{self, Stamp};
use super::Entry;

/// A cursor over one line.
struct Fields<'a> {
    rest: &'a str,
}

impl<'a> Fields<'a> {
    /// The next space-separated word.
    fn word(&mut self) -> Option<&'a str> {
        let s = self.rest.trim_start_matches(' ');
        if s.is_empty() {
            return None;
        }
        let end = s.find(' ').unwrap_or(s.len());
        self.rest = &s[end..];
        Some(&s[..end])
    }

    /// The next `[…]` field, without its brackets.
    fn bracketed(&mut self) -> Option<&'a str> {
        let s = self.rest.trim_start_matches(' ').strip_prefix('[')?;
        let end = s.find(']')?;
        self.rest = &s[end + 1..];
        Some(&s[..end])
    }

    /// The next `"…"` field, unescaped (`\"` and `\\`; other escapes kept as written).
    fn quoted(&mut self) -> Option<String> {
        let s = self.rest.trim_start_matches(' ').strip_prefix('"')?;
        let mut out = String::new();
        let mut chars = s.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.rest = &s[i + 1..];
                    return Some(out);
                }
                '\\' => match chars.next() {
                    Some((_, e @ ('"' | '\\'))) => out.push(e),
                    Some((_, e)) => {
                        out.push('\\');
                        out.push(e);
                    }
                    None => return None,
                },
                c => out.push(c),
            }
        }
        None
    }

    /// Whether the line is used up.
    fn done(&self) -> bool {
        self.rest.trim().is_empty()
    }
}

/// The time in brackets: `$time_local`, `$msec` or `$time_iso8601`.
fn stamp(s: &str) -> Option<Stamp> {
    time::clf(s)
        .or_else(|| time::epoch(s))
        .or_else(|| time::iso8601(s))
}

/// One access-log line as an `Entry`, or what is wrong with it.
pub(crate) fn parse(line: &str) -> Result<Entry, String> {
    let mut f = Fields { rest: line };
    let client = f.word().ok_or("an empty line")?.to_string();
    let (Some(_ident), Some(_user)) = (f.word(), f.word()) else {
        return Err("no ident and user fields after the client address".into());
    };
    let when = f.bracketed().ok_or("no [time] field")?;
    let at = stamp(when).ok_or_else(|| format!("a bad time [{when}]"))?;
    let request = f.quoted().ok_or("no quoted \"request\" field")?;
    let mut parts = request.split(' ').filter(|p| !p.is_empty());
    let (method, uri) = match (parts.next(), parts.next()) {
        (Some(m), Some(u)) => (m, u),
        _ => return Err(format!("no method and URI in \"{request}\"")),
    };
    if let Some(version) = parts.next() {
        if !version.starts_with("HTTP/") || parts.next().is_some() {
            return Err(format!("a bad request line \"{request}\""));
        }
    }
    if !method
        .bytes()
        .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_')
    {
        return Err(format!("a bad method {method}"));
    }
    if !(uri.starts_with('/') || uri == "*" || uri.contains("://")) {
        return Err(format!("a bad URI {uri}"));
    }
    let status = f.word().ok_or("no status")?;
    if status.len() != 3 || !status.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("a bad status {status}"));
    }
    let bytes = f.word().ok_or("no size")?;
    if bytes != "-" && !bytes.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("a bad size {bytes}"));
    }
    let mut headers = Vec::new();
    if f.rest.trim_start().starts_with('"') {
        let referer = f.quoted().ok_or("an unterminated referer")?;
        f.quoted().ok_or("a referer without a user agent")?;
        if referer != "-" && !referer.is_empty() {
            headers.push(("Referer".to_string(), referer));
        }
    }
    let mut request_time = None;
    if let Some(t) = f.word() {
        let secs: f64 = t
            .parse()
            .ok()
            .filter(|s: &f64| {
                s.is_finite() && *s >= 0.0 && t.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            })
            .ok_or_else(|| format!("a bad request time {t}"))?;
        request_time = Some(secs);
    }
    if !f.done() {
        return Err(format!("more after the last field: {}", f.rest.trim()));
    }
    Ok(Entry {
        at,
        request_time,
        client,
        method: method.to_string(),
        uri: uri.to_string(),
        headers,
        body: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: i64 = 1_000_000_000;

    #[test]
    fn real_lines_of_each_variant() {
        // Apache's documentation, common format.
        let e = parse(r#"127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326"#)
            .expect("common");
        assert_eq!(e.client, "127.0.0.1");
        assert_eq!(
            (e.method.as_str(), e.uri.as_str()),
            ("GET", "/apache_pb.gif")
        );
        assert_eq!(
            e.at,
            Stamp {
                ns: 971_211_336 * NS,
                precise: false
            }
        );
        assert_eq!(e.request_time, None);
        assert!(e.headers.is_empty());
        // Combined.
        let e = parse(r#"127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)""#)
            .expect("combined");
        assert_eq!(
            e.headers,
            [(
                "Referer".to_string(),
                "http://www.example.com/start.html".to_string()
            )]
        );
        // nginx combined with $request_time, an IPv6 client and no referer.
        let e = parse(r#"::1 - - [06/Dec/2026:00:10:02 +0000] "POST /api/v1/items?id=7 HTTP/1.1" 201 0 "-" "curl/7.88.1" 0.004"#)
            .expect("nginx");
        assert_eq!((e.client.as_str(), e.method.as_str()), ("::1", "POST"));
        assert_eq!(e.uri, "/api/v1/items?id=7");
        assert_eq!(e.request_time, Some(0.004));
        assert!(e.headers.is_empty());
        // $msec in the brackets, with $request_time.
        let e = parse(
            r#"10.0.0.2 - - [1796515802.123] "GET /a HTTP/1.1" 200 612 "-" "rshperf/0.1.0" 0.000"#,
        )
        .expect("msec");
        assert_eq!(
            e.at,
            Stamp {
                ns: 1_796_515_802 * NS + 123_000_000,
                precise: true
            }
        );
        assert_eq!(e.request_time, Some(0.0));
        // $time_iso8601, and a size of "-".
        let e =
            parse(r#"10.0.0.2 - - [2026-12-06T00:10:02+00:00] "HEAD / HTTP/1.1" 304 - "-" "x""#)
                .expect("iso");
        assert_eq!(e.method, "HEAD");
        assert!(!e.at.precise);
        // HTTP/0.9 (no version); escaped quotes in the user agent.
        let e = parse(
            r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /" 200 5 "-" "a \"quoted\" agent""#,
        )
        .expect("0.9");
        assert_eq!(e.uri, "/");
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        let ok = r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-" "ua" 0.1"#;
        assert!(parse(ok).is_ok());
        for (bad, why) in [
            ("", "empty"),
            ("   ", "empty"),
            ("1.2.3.4", "ident"),
            ("1.2.3.4 - -", "[time]"),
            (
                r#"1.2.3.4 - - 10/Oct/2000:13:55:36 "GET / HTTP/1.1" 200 5"#,
                "[time]",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700 "GET / HTTP/1.1" 200 5"#,
                "time",
            ),
            (
                r#"1.2.3.4 - - [yesterday] "GET / HTTP/1.1" 200 5"#,
                "bad time",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] GET / HTTP/1.1 200 5"#,
                "request",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1 200 5"#,
                "request",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "-" 400 0 "-" "-""#,
                "method and URI",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET" 400 0"#,
                "method and URI",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "\x16\x03\x01" 400 0"#,
                "method and URI",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / FTP/1" 200 5"#,
                "request line",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1 x" 200 5"#,
                "request line",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "G{T / HTTP/1.1" 200 5"#,
                "method",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET a.html HTTP/1.1" 200 5"#,
                "URI",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1""#,
                "status",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 20 5"#,
                "status",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200"#,
                "size",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5k"#,
                "size",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-"#,
                "referer",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-""#,
                "user agent",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-" "ua" fast"#,
                "request time",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-" "ua" -1"#,
                "request time",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-" "ua" inf"#,
                "request time",
            ),
            (
                r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-" "ua" 0.1 x"#,
                "more after",
            ),
        ] {
            let err = parse(bad).expect_err(bad);
            assert!(err.contains(why), "{bad:?}: {err}");
        }
    }

    #[test]
    fn every_truncation_of_a_line_fails_or_parses_whole() {
        let line =
            r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /x HTTP/1.1" 200 5 "-" "ua" 0.1"#;
        for cut in 0..line.len() {
            // A cut line never crashes; the only prefixes that parse end at a field.
            if let Ok(e) = parse(&line[..cut]) {
                assert_eq!(e.uri, "/x", "cut at {cut}");
            }
        }
    }
}
