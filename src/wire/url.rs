//! Target URLs: `http://HOST[:PORT]/PATH` and `https://…`, as given on a command line.
//!
//! Owns the URL syntax (scheme, host, IPv6 in brackets, port, path and query sent as
//! typed) and its messages. Used by the front ends (the URL operand, `serve`'s hints)
//! and by findings that recognise a URL given where a path was meant.
//!
//! Hand-written rather than the `url` crate: the path must be sent exactly as typed (as
//! `--uri` is), and `url` normalises it (dot segments, percent-encoding, an empty path
//! becomes `/` only for some schemes).

use std::net::Ipv6Addr;

/// A target given as a URL argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TargetUrl {
    /// The URL as typed (for messages).
    pub(crate) text: String,
    /// Host name or address, as `--server` takes it (IPv6 without brackets).
    pub(crate) host: String,
    /// The explicit port, if the URL has one.
    pub(crate) port: Option<u16>,
    /// Path and query (`/` when the URL has none), sent as typed; no fragment.
    pub(crate) uri: String,
    /// `https://`.
    pub(crate) tls: bool,
}

impl TargetUrl {
    /// The port the URL means: its own, or the scheme's (80, 443).
    pub(crate) fn port_or_default(&self) -> u16 {
        self.port.unwrap_or(if self.tls { 443 } else { 80 })
    }
}

/// The URL scheme `s` starts with (case-insensitive): Some(tls) for `http://` and
/// `https://`.
fn scheme(s: &str) -> Option<(bool, &str)> {
    for (prefix, tls) in [("http://", false), ("https://", true)] {
        if s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix) {
            return Some((tls, &s[prefix.len()..]));
        }
    }
    None
}

/// A URL that cannot be used: the URL as typed and what is wrong with it. The text is
/// the message printed after `rshperf: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("URL {url}: {problem}")]
pub struct UrlError {
    /// The URL as typed.
    pub(crate) url: String,
    /// What is wrong.
    pub(crate) problem: UrlProblem,
}

/// What is wrong with a URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UrlProblem {
    /// `user:password@`.
    #[error("user names and passwords in URLs are not supported (send them with --add-header 'Authorization: ...\\n')")]
    Credentials,
    /// `[` without `]`.
    #[error("no ']' after the IPv6 address")]
    UnclosedBracket,
    /// Brackets around something else.
    #[error("'{0}' is not an IPv6 address")]
    NotIpv6(String),
    /// `[v6]` followed by something other than `:PORT`.
    #[error("expected ':PORT' after the IPv6 address")]
    AfterIpv6,
    /// An IPv6 address without brackets.
    #[error("an IPv6 address goes in brackets: http://[::1]:8080/")]
    Ipv6WithoutBrackets,
    /// No host.
    #[error("no host name")]
    NoHost,
    /// A port that is not 1 to 65535.
    #[error("illegal port number {0}")]
    Port(String),
}

/// Parses `s` as a target URL. None: not a URL (an ordinary operand); Some(Err): a
/// URL that cannot be used.
pub(crate) fn parse_url(s: &str) -> Option<Result<TargetUrl, UrlError>> {
    let (tls, rest) = scheme(s)?;
    Some(parse_after_scheme(s, tls, rest))
}

/// The rest of `parse_url`, after the scheme.
fn parse_after_scheme(s: &str, tls: bool, rest: &str) -> Result<TargetUrl, UrlError> {
    let rest = rest.split('#').next().unwrap_or("");
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.contains('@') {
        return Err(bad(s, UrlProblem::Credentials));
    }
    let bad = |problem: UrlProblem| bad(s, problem);
    let (host, port_text) = if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6
            .split_once(']')
            .ok_or_else(|| bad(UrlProblem::UnclosedBracket))?;
        addr.parse::<Ipv6Addr>()
            .map_err(|_| bad(UrlProblem::NotIpv6(addr.to_string())))?;
        match after {
            "" => (addr, None),
            _ => match after.strip_prefix(':') {
                Some(p) => (addr, Some(p)),
                None => return Err(bad(UrlProblem::AfterIpv6)),
            },
        }
    } else {
        let (h, p) = match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        if h.contains(':') {
            return Err(bad(UrlProblem::Ipv6WithoutBrackets));
        }
        (h, p)
    };
    if host.is_empty() {
        return Err(bad(UrlProblem::NoHost));
    }
    let port = match port_text {
        None | Some("") => None,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Some(n),
            _ => return Err(bad(UrlProblem::Port(p.to_string()))),
        },
    };
    let uri = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    Ok(TargetUrl {
        text: s.to_string(),
        host: host.to_string(),
        port,
        uri,
        tls,
    })
}
/// The error for URL `s`.
fn bad(s: &str, problem: UrlProblem) -> UrlError {
    UrlError {
        url: s.to_string(),
        problem,
    }
}
