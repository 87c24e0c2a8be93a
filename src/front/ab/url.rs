//! URLs as ab and lb take them: `[http[s]://]host[:port]/path`.
//!
//! Owns splitting a URL into scheme, host, port and path with ab's rules (`parse_url`
//! and APR's `apr_parse_addr_port`: a path is required, IPv6 literals in brackets,
//! ports 1–65535, no zone ids) and lb's additions (`user:password@` before the host, a
//! missing path meaning `/`), and the `Host:` value each tool sends. Resolution is the
//! caller's (`setup`). Pure.

use std::net::Ipv6Addr;

/// A parsed URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Url {
    /// The URL as given (ab's proxy mode sends it as the request target).
    pub(crate) full: String,
    /// `https://`.
    pub(crate) https: bool,
    /// The host, IPv6 literals without brackets (`Server Hostname:`).
    pub(crate) host: String,
    /// The port (default 80, or 443 for https).
    pub(crate) port: u16,
    /// Whether the URL gave the port.
    pub(crate) port_given: bool,
    /// The path, from its `/` on, query included (`Document Path:`).
    pub(crate) path: String,
    /// `user:password` before the host (lb only).
    pub(crate) userinfo: Option<String>,
}

impl Url {
    /// The host as it goes into `Host:`: IPv6 literals in brackets.
    pub(crate) fn host_field(&self) -> String {
        if self.host.parse::<Ipv6Addr>().is_ok() {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }

    /// ab's `Host:` value: the host, with `:port` unless the port is the scheme's
    /// default.
    pub(crate) fn ab_host_header(&self) -> String {
        let default = if self.https { 443 } else { 80 };
        if self.port == default {
            self.host_field()
        } else {
            format!("{}:{}", self.host_field(), self.port)
        }
    }

    /// lb's `Host:` value: always `host:port`.
    pub(crate) fn lb_host_header(&self) -> String {
        format!("{}:{}", self.host_field(), self.port)
    }
}

/// Parses a URL with ab's rules; None when ab would say `invalid URL`.
pub(crate) fn parse_ab(url: &str) -> Option<Url> {
    let (https, rest) = scheme(url);
    let slash = rest.find('/')?;
    let (host, port) = addr_port(&rest[..slash])?;
    Some(finish(
        url,
        https,
        host,
        port,
        rest[slash..].to_string(),
        None,
    ))
}

/// Parses a URL with lb's rules: ab's, plus `user:password@` before the host, and the
/// path may be left out (it is then `/`).
pub(crate) fn parse_lb(url: &str) -> Option<Url> {
    let (https, rest) = scheme(url);
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) if u.contains(':') && !u.starts_with(':') => (Some(u.to_string()), h),
        Some(_) => return None,
        None => (None, authority),
    };
    let (host, port) = addr_port(hostport)?;
    Some(finish(url, https, host, port, path, userinfo))
}

fn finish(
    full: &str,
    https: bool,
    host: String,
    port: Option<u16>,
    path: String,
    userinfo: Option<String>,
) -> Url {
    Url {
        full: full.to_string(),
        https,
        host,
        port: port.unwrap_or(if https { 443 } else { 80 }),
        port_given: port.is_some(),
        path,
        userinfo,
    }
}

/// The scheme (https or not) and the rest; ab accepts a URL without one.
fn scheme(url: &str) -> (bool, &str) {
    if let Some(rest) = url.strip_prefix("http://").filter(|r| !r.is_empty()) {
        (false, rest)
    } else if let Some(rest) = url.strip_prefix("https://").filter(|r| !r.is_empty()) {
        (true, rest)
    } else {
        (false, url)
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port` (APR's rules). None for an empty host, a
/// bad port, a zone id or a malformed IPv6 literal.
fn addr_port(s: &str) -> Option<(String, Option<u16>)> {
    let (addr, port) = match s.rfind(':') {
        Some(i) if !s[i + 1..].is_empty() && s[i + 1..].bytes().all(|b| b.is_ascii_digit()) => {
            let digits = &s[i + 1..];
            // "[::1]" ends in "]"; a bare IPv6 literal's last group is not a port.
            if !s.starts_with('[') && s[..i].contains(':') {
                (s, None)
            } else {
                let port: u32 = digits.parse().ok()?;
                let port = u16::try_from(port).ok().filter(|p| *p > 0)?;
                (&s[..i], Some(port))
            }
        }
        _ => (s, None),
    };
    if let Some(inner) = addr.strip_prefix('[') {
        let inner = inner.strip_suffix(']')?;
        if inner.contains('%') {
            return None;
        }
        inner.parse::<Ipv6Addr>().ok()?;
        return Some((inner.to_string(), port));
    }
    if addr.is_empty() || addr.contains(['[', ']', '/', '@', '%']) || addr.ends_with(':') {
        return None;
    }
    if addr.contains(':') && addr.parse::<Ipv6Addr>().is_err() {
        return None;
    }
    Some((addr.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ab_urls() {
        let u = parse_ab("http://127.0.0.1:8080/").expect("valid");
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 8080, "/")
        );
        assert_eq!(u.ab_host_header(), "127.0.0.1:8080");
        let u = parse_ab("http://[::1]:8080/a?b=c").expect("valid");
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("::1", 8080, "/a?b=c")
        );
        assert_eq!(u.ab_host_header(), "[::1]:8080");
        assert_eq!(u.lb_host_header(), "[::1]:8080");
        let u = parse_ab("https://localhost/x").expect("valid");
        assert_eq!((u.https, u.port, u.port_given), (true, 443, false));
        assert_eq!(u.ab_host_header(), "localhost");
        assert_eq!(u.lb_host_header(), "localhost:443");
        let u = parse_ab("https://localhost:80/").expect("valid");
        assert_eq!(u.ab_host_header(), "localhost:80");
        // No scheme is fine for ab.
        let u = parse_ab("example.com:81/p").expect("valid");
        assert_eq!((u.host.as_str(), u.port), ("example.com", 81));
        for bad in [
            "http://127.0.0.1:8080",
            "http://",
            "http:///",
            "http://:80/",
            "http://h:0/",
            "http://h:65536/",
            "http://h:/",
            "http://[::1/",
            "http://[fe80::1%25eth0]/",
            "http://[zz::1]/",
            "http://a:b:c/",
            "",
        ] {
            assert_eq!(parse_ab(bad), None, "{bad}");
        }
    }

    #[test]
    fn lb_urls() {
        let u = parse_lb("http://joe:secret@127.0.0.1:8080").expect("valid");
        assert_eq!(u.userinfo.as_deref(), Some("joe:secret"));
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 8080, "/")
        );
        let u = parse_lb("[::1]:8080/x").expect("valid");
        assert_eq!((u.host.as_str(), u.path.as_str()), ("::1", "/x"));
        for bad in ["http://@h/", "http://joe@h/", "http://:p@h/", "http://h:x/"] {
            assert_eq!(parse_lb(bad), None, "{bad}");
        }
    }
}
