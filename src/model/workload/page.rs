//! `--wsesspage` URIs: which references of a page are fetched, and with which
//! request-target (docs/compatibility.md, `--wsesspage`).
//!
//! Owns the rules that turn a reference found in a reply (an `img`/`frame`/`iframe`
//! `src`, or a redirect's `Location`) into the path sent to the same server, or into a
//! reason to skip it: other hosts and other schemes are ignored, `http://<server>/…`
//! (and `https://`, `//<server>/…`) become paths, relative references are resolved
//! against the URI of the document that holds them (`--uri` for the page itself, as
//! in httperf), dot segments are removed and bytes a request line cannot carry are
//! percent-encoded. Also the per-target `Origin` (which host names and port are "this
//! server") and the `--uri` check. Pure functions: the engine (`engine::event_loop::page`) calls
//! them with reusable buffers; scanning replies is `http::html`.

use std::net::Ipv6Addr;

use super::error::WorkloadError;
use crate::model::config::Config;
use crate::model::workload::target::Target;

/// Longest request-target fetched (nginx's default request-line limit is 8 KiB).
pub(crate) const MAX_URI: usize = 8192;

/// Why a reference is not fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// An absolute URI of another host or port, or of a scheme other than HTTP(S)
    /// (`data:`, `javascript:`, `mailto:`, …): httperf's "ignoring absolute URI".
    OtherServer,
    /// Longer than `MAX_URI` once resolved.
    TooLong,
}

/// What "this server" is for one target: the names a same-server absolute URI may
/// carry and the port it may name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// Host names (lower case; IPv6 literals in brackets).
    names: Vec<String>,
    /// The target's port: an explicit port in a URI must be this one.
    port: u16,
}

impl Origin {
    /// An origin answering to `names` on `port`.
    pub fn new(names: &[&str], port: u16) -> Origin {
        let mut v: Vec<String> = Vec::new();
        for n in names {
            let n = match n.parse::<Ipv6Addr>() {
                Ok(_) => format!("[{}]", n.to_ascii_lowercase()),
                Err(_) => n.to_ascii_lowercase(),
            };
            if !n.is_empty() && !v.contains(&n) {
                v.push(n);
            }
        }
        Origin { names: v, port }
    }

    /// Whether `authority` (`host[:port]`, no user info) names this server.
    fn matches(&self, authority: &str) -> bool {
        let (host, port) = if authority.starts_with('[') {
            match authority.find(']') {
                Some(end) => (&authority[..=end], &authority[end + 1..]),
                None => return false,
            }
        } else {
            match authority.find(':') {
                Some(colon) => (&authority[..colon], &authority[colon..]),
                None => (authority, ""),
            }
        };
        let port_ok = match port.strip_prefix(':') {
            None => port.is_empty(),
            Some("") => true,
            Some(p) => p.bytes().all(|b| b.is_ascii_digit()) && p.parse() == Ok(self.port),
        };
        port_ok && self.names.iter().any(|n| n.eq_ignore_ascii_case(host))
    }
}

/// The origin of each target (same order as `targets`): its `Host:` value, and with a
/// single `--server` also the server string itself.
pub(crate) fn origins(cfg: &Config, targets: &[Target]) -> Vec<Origin> {
    targets
        .iter()
        .map(|t| {
            let mut names = vec![t.host.as_str()];
            if cfg.target().servers().is_none() {
                names.push(cfg.target().server());
            }
            Origin::new(&names, t.addr.port())
        })
        .collect()
}

/// httperf's start-up check: the page URI must be an absolute path (it is the base of
/// the page's relative references).
pub(crate) fn check_page_uri(uri: &str) -> Result<(), WorkloadError> {
    if uri.starts_with('/') {
        Ok(())
    } else {
        Err(WorkloadError::RelativePageUri)
    }
}

/// Resolves `reference`, found in the document fetched as `base` (an absolute path,
/// possibly with a query) from the server `origin`, into the request-target to fetch,
/// written to `out`. `scratch` is a reusable buffer.
pub fn resolve(
    reference: &str,
    base: &str,
    origin: &Origin,
    out: &mut String,
    scratch: &mut String,
) -> Result<(), Skip> {
    out.clear();
    scratch.clear();
    // As browsers do (URL standard): no surrounding spaces or controls, no tabs or
    // newlines inside, and the fragment is never sent.
    let trimmed = reference.trim_matches(|c: char| c <= ' ');
    let cleaned;
    let mut r = trimmed;
    if r.contains(['\t', '\n', '\r']) {
        cleaned = r.replace(['\t', '\n', '\r'], "");
        r = &cleaned;
    }
    if let Some(hash) = r.find('#') {
        r = &r[..hash];
    }
    // A reference naming this server: its path and query, from the root.
    let from_root = if let Some((scheme, rest)) = split_scheme(r) {
        let http = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
        match rest.strip_prefix("//") {
            Some(net) if http => Some(same_server(net, origin)?),
            _ => return Err(Skip::OtherServer),
        }
    } else if let Some(net) = r.strip_prefix("//") {
        Some(same_server(net, origin)?)
    } else {
        None
    };
    let base_path = base.split('?').next().unwrap_or(base);
    match from_root {
        Some(rest) => {
            if !rest.starts_with('/') {
                scratch.push('/');
            }
            scratch.push_str(rest);
        }
        // The document itself.
        None if r.is_empty() => scratch.push_str(base),
        None if r.starts_with('/') => scratch.push_str(r),
        None if r.starts_with('?') => {
            scratch.push_str(base_path);
            scratch.push_str(r);
        }
        None => {
            // The base is an absolute path: its directory ends with a slash.
            scratch.push_str(base_path.rfind('/').map_or("/", |i| &base_path[..=i]));
            scratch.push_str(r);
        }
    }
    let (path, query) = match scratch.find('?') {
        Some(q) => scratch.split_at(q),
        None => (scratch.as_str(), ""),
    };
    push_encoded(out, &remove_dot_segments(path));
    push_encoded(out, query);
    if out.len() > MAX_URI {
        out.clear();
        return Err(Skip::TooLong);
    }
    Ok(())
}

/// `scheme:rest` when `r` starts with a URI scheme (RFC 3986: a letter, then letters,
/// digits, `+`, `-`, `.`).
fn split_scheme(r: &str) -> Option<(&str, &str)> {
    let colon = r.find(':')?;
    let scheme = &r[..colon];
    let mut bytes = scheme.bytes();
    let first_ok = bytes.next().is_some_and(|b| b.is_ascii_alphabetic());
    let rest_ok = bytes.all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.');
    (first_ok && rest_ok).then(|| (scheme, &r[colon + 1..]))
}

/// The path and query of `net` (what follows `//`) when its authority is `origin`.
fn same_server<'r>(net: &'r str, origin: &Origin) -> Result<&'r str, Skip> {
    let end = net.find(['/', '?']).unwrap_or(net.len());
    let (authority, rest) = net.split_at(end);
    if authority.contains('@') || !origin.matches(authority) {
        return Err(Skip::OtherServer);
    }
    Ok(rest)
}

/// `.` or its percent-encoded form (URL standard: single-dot segment).
fn is_dot(seg: &str) -> bool {
    seg == "." || seg.eq_ignore_ascii_case("%2e")
}

/// `..` or a percent-encoded form (URL standard: double-dot segment).
fn is_dotdot(seg: &str) -> bool {
    seg.len() >= 2 && seg.len() <= 6 && {
        let s = seg.to_ascii_lowercase();
        matches!(s.as_str(), ".." | ".%2e" | "%2e." | "%2e%2e")
    }
}

/// RFC 3986 §5.2.4 on an absolute path (`/a/./b/../c` → `/a/c`). Paths without dot
/// segments are returned as they are.
fn remove_dot_segments(path: &str) -> std::borrow::Cow<'_, str> {
    if !path.split('/').any(|seg| is_dot(seg) || is_dotdot(seg)) {
        return std::borrow::Cow::Borrowed(path);
    }
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    let mut out: Vec<&str> = Vec::new();
    for (i, seg) in segments.iter().enumerate() {
        let (dot, dotdot) = (is_dot(seg), is_dotdot(seg));
        if dotdot {
            out.pop();
        }
        if dot || dotdot {
            // A trailing dot segment leaves the directory: `/a/b/..` is `/a/`.
            if i == last {
                out.push("");
            }
            continue;
        }
        out.push(seg);
    }
    let mut s = String::with_capacity(path.len());
    for seg in out {
        s.push('/');
        s.push_str(seg);
    }
    if s.is_empty() {
        s.push('/');
    }
    std::borrow::Cow::Owned(s)
}

/// Appends `s`, percent-encoding what a request line cannot carry: controls, space,
/// non-ASCII (as UTF-8) and `"<>\^`{|}`. Existing `%XX` escapes are kept.
fn push_encoded(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in s.as_bytes() {
        let plain = b.is_ascii_graphic() && !b"\"<>\\^`{|}".contains(&b);
        if plain {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin::new(&["127.0.0.1", "www.example.com"], 8080)
    }

    fn res(reference: &str, base: &str) -> Result<String, Skip> {
        let (mut out, mut scratch) = (String::new(), String::new());
        resolve(reference, base, &origin(), &mut out, &mut scratch).map(|()| out)
    }

    #[test]
    fn relative_references_resolve_against_the_document() {
        let cases = [
            ("a.png", "/page/index.html", "/page/a.png"),
            ("a.png", "/page/", "/page/a.png"),
            ("a.png", "/index.html", "/a.png"),
            ("img/a.png", "/page/index.html", "/page/img/a.png"),
            ("../a.png", "/page/sub/index.html", "/page/a.png"),
            ("../../../a.png", "/page/index.html", "/a.png"),
            ("./a.png", "/page/index.html", "/page/a.png"),
            ("a.png?v=2", "/page/index.html?x=/y/", "/page/a.png?v=2"),
            ("?v=2", "/page/index.html?x=1", "/page/index.html?v=2"),
            ("", "/page/index.html?x=1", "/page/index.html?x=1"),
            ("#top", "/page/index.html", "/page/index.html"),
            ("a.png#frag", "/page/index.html", "/page/a.png"),
            ("/page/b.png", "/other/x.html", "/page/b.png"),
            ("/a/./b/../c/.", "/", "/a/c/"),
            ("/a/b/..", "/", "/a/"),
            ("/a//b", "/", "/a//b"),
            ("/a/%2e%2E/b", "/", "/b"),
            ("  a.png\n ", "/page/x", "/page/a.png"),
            ("a\t.p\nng", "/page/x", "/page/a.png"),
            ("a b.png", "/page/x", "/page/a%20b.png"),
            ("\u{e9}t\u{e9}.png", "/", "/%C3%A9t%C3%A9.png"),
            ("a%20b.png", "/", "/a%20b.png"),
            ("a\"<>{|}.png", "/", "/a%22%3C%3E%7B%7C%7D.png"),
            ("./d:e.png", "/page/x", "/page/d:e.png"),
            ("1:e.png", "/page/x", "/page/1:e.png"),
        ];
        for (r, base, want) in cases {
            assert_eq!(res(r, base).as_deref(), Ok(want), "{r:?} in {base}");
        }
    }

    #[test]
    fn same_server_absolute_uris_become_paths() {
        let cases = [
            ("http://127.0.0.1/page/b.png", "/page/b.png"),
            ("HTTP://127.0.0.1/page/b.png", "/page/b.png"),
            ("https://127.0.0.1/b.png", "/b.png"),
            ("http://127.0.0.1:8080/b.png?x=1", "/b.png?x=1"),
            ("http://127.0.0.1:/b.png", "/b.png"),
            ("http://WWW.Example.COM/b.png", "/b.png"),
            ("http://127.0.0.1", "/"),
            ("http://127.0.0.1?q=1", "/?q=1"),
            ("//127.0.0.1/b.png", "/b.png"),
            ("http://127.0.0.1/a/../b.png#x", "/b.png"),
        ];
        for (r, want) in cases {
            assert_eq!(res(r, "/page/index.html").as_deref(), Ok(want), "{r}");
        }
    }

    #[test]
    fn other_hosts_ports_and_schemes_are_ignored() {
        for r in [
            "http://elsewhere.invalid/x.png",
            "http://127.0.0.1:80/x.png",
            "http://127.0.0.1:8080x/x.png",
            "http://127.0.0.1.evil/x.png",
            "http://user@127.0.0.1/x.png",
            "//elsewhere.invalid/x.png",
            "ftp://127.0.0.1/x.png",
            "data:image/png;base64,iVBORw0KGgo=",
            "javascript:void(0)",
            "mailto:a@b",
            "http:/x.png",
            "d:e.png",
        ] {
            assert_eq!(res(r, "/page/index.html"), Err(Skip::OtherServer), "{r}");
        }
    }

    #[test]
    fn ipv6_origins_use_brackets() {
        let o = Origin::new(&["::1", "[::1]"], 8080);
        let (mut out, mut scratch) = (String::new(), String::new());
        resolve("http://[::1]:8080/a", "/", &o, &mut out, &mut scratch).expect("same");
        assert_eq!(out, "/a");
        assert_eq!(
            resolve("http://[::2]/a", "/", &o, &mut out, &mut scratch),
            Err(Skip::OtherServer)
        );
        assert_eq!(
            resolve("http://[::1/a", "/", &o, &mut out, &mut scratch),
            Err(Skip::OtherServer)
        );
    }

    #[test]
    fn overlong_uris_are_skipped() {
        let long = format!("/{}", "a".repeat(MAX_URI));
        assert_eq!(res(&long, "/"), Err(Skip::TooLong));
        let fits = format!("/{}", "a".repeat(MAX_URI - 1));
        assert_eq!(res(&fits, "/").map(|u| u.len()), Ok(MAX_URI));
    }

    #[test]
    fn page_uri_must_be_an_absolute_path() {
        assert!(check_page_uri("/page/index.html").is_ok());
        assert!(check_page_uri("/").is_ok());
        for bad in ["index.html", "", "http://x/y"] {
            assert_eq!(
                check_page_uri(bad).map_err(|e| e.to_string()),
                Err("URI specified with --uri must be absolute".into()),
                "{bad}"
            );
        }
    }

    #[test]
    fn origins_name_the_server_and_its_host_header() {
        let cfg = Config::local(|b| {
            b.port(8080).server_name("www.example.com");
        });
        let targets = crate::model::workload::target::from_config(&cfg).expect("targets");
        let o = origins(&cfg, &targets);
        assert_eq!(
            o,
            vec![Origin::new(&["www.example.com", "127.0.0.1"], 8080)]
        );
        assert!(o[0].matches("WWW.EXAMPLE.COM:8080"));
        assert!(o[0].matches("127.0.0.1"));
        assert!(!o[0].matches("localhost"));
    }

    #[test]
    fn with_servers_each_target_is_its_own_origin() {
        let path = std::env::temp_dir().join(format!("rshperf-origins-{}", std::process::id()));
        std::fs::write(&path, "127.0.0.1:8080\n[::1]:9090\nlocalhost\n").expect("write");
        let file = path.to_string_lossy().into_owned();
        let mut b = Config::builder();
        b.servers(file).port(81);
        let cfg = b.build().map(|built| built.config);
        let targets = cfg
            .as_ref()
            .ok()
            .map(crate::model::workload::target::from_config);
        let _ = std::fs::remove_file(&path);
        let cfg = cfg.expect("cfg");
        let targets = targets.expect("cfg").expect("targets");
        let o = origins(&cfg, &targets);
        assert_eq!(
            o,
            vec![
                Origin::new(&["127.0.0.1"], 8080),
                Origin::new(&["[::1]"], 9090),
                Origin::new(&["localhost"], 81),
            ]
        );
        // The default server is not a name of these targets.
        assert!(!o[0].matches("localhost:8080"));
        assert!(o[1].matches("[::1]:9090") && !o[1].matches("[::1]:8080"));
    }
}
