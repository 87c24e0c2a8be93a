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
pub struct TargetUrl {
    /// The URL as typed (for messages).
    pub text: String,
    /// Host name or address, as `--server` takes it (IPv6 without brackets).
    pub host: String,
    /// The explicit port, if the URL has one.
    pub port: Option<u16>,
    /// Path and query (`/` when the URL has none), sent as typed; no fragment.
    pub uri: String,
    /// `https://`.
    pub tls: bool,
}

impl TargetUrl {
    /// The port the URL means: its own, or the scheme's (80, 443).
    pub fn port_or_default(&self) -> u16 {
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

/// Parses `s` as a target URL. None: not a URL (an ordinary operand); Some(Err): a
/// URL that cannot be used, with the message (after `rshperf: `).
pub fn parse_url(s: &str) -> Option<Result<TargetUrl, String>> {
    let (tls, rest) = scheme(s)?;
    Some(parse_after_scheme(s, tls, rest))
}

fn parse_after_scheme(s: &str, tls: bool, rest: &str) -> Result<TargetUrl, String> {
    let rest = rest.split('#').next().unwrap_or("");
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.contains('@') {
        return Err(format!(
            "URL {s}: user names and passwords in URLs are not supported \
             (send them with --add-header 'Authorization: ...\\n')"
        ));
    }
    let bad = |what: &str| format!("URL {s}: {what}");
    let (host, port_text) = if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("no ']' after the IPv6 address"))?;
        addr.parse::<Ipv6Addr>()
            .map_err(|_| bad(&format!("'{addr}' is not an IPv6 address")))?;
        match after {
            "" => (addr, None),
            _ => match after.strip_prefix(':') {
                Some(p) => (addr, Some(p)),
                None => return Err(bad("expected ':PORT' after the IPv6 address")),
            },
        }
    } else {
        let (h, p) = match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        if h.contains(':') {
            return Err(bad("an IPv6 address goes in brackets: http://[::1]:8080/"));
        }
        (h, p)
    };
    if host.is_empty() {
        return Err(bad("no host name"));
    }
    let port = match port_text {
        None | Some("") => None,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Some(n),
            _ => return Err(bad(&format!("illegal port number {p}"))),
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
