//! Non-option arguments: a URL as the target, an error for a server named without a
//! scheme, and warnings for everything else.
//!
//! httperf ignores non-option arguments silently, so `rshperf http://host:8080/foo`
//! used to test `localhost:80`. Here an `http://` or `https://` URL names the server,
//! port and URI (and TLS); an operand that names a server without a scheme
//! (`host:port`, `host:port/path`, `localhost/x`, an IP address) is refused with the
//! URL it stands for (`target_url`), since ignoring it would test another server;
//! any other operand is still ignored, as httperf does, but named in a `rshperf:
//! warning:` line with a hint where one fits (`--print-reply header` → `did you mean
//! --print-reply=header?`). Owns the hint texts; the URL syntax is `wire::url`'s;
//! `front::httperf` hands the URL to `ConfigBuilder::url`, the refusal to the caller
//! and the warnings to the builder.

use std::net::{IpAddr, SocketAddr};

use crate::front::cli::{Operand, Opt, OPTIONS};
pub(crate) use crate::wire::url::parse_url;
#[cfg(test)]
use crate::wire::url::TargetUrl;

/// The warning for an operand that is not a URL (the text after `rshperf: warning: `).
pub(crate) fn warning(op: &Operand) -> String {
    let text = &op.text;
    match hint(op) {
        Some(h) => format!("ignoring argument '{text}': {h}"),
        None => format!(
            "ignoring argument '{text}': not an option (httperf ignores it too; \
             `rshperf --help` lists the options)"
        ),
    }
}

/// The URL an operand stands for when it names a server without a scheme
/// (`127.0.0.1:8080` → `http://127.0.0.1:8080/`, `localhost/x` → `http://localhost/x`,
/// `::1` → `http://[::1]/`); None for anything else, and for a word right after a
/// flag or an option with an optional value (`--print-reply header`: its hint fits).
pub(crate) fn target_url(op: &Operand) -> Option<String> {
    if op.after.is_some() {
        return None;
    }
    let text = op.text.as_str();
    let (host, path) = match text.find('/') {
        Some(i) => text.split_at(i),
        None => (text, "/"),
    };
    if !looks_like_host(host) {
        return None;
    }
    // A bare IPv6 address goes in brackets; `[v6]:port` has them already.
    let host = if host.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    Some(format!("http://{host}{path}"))
}

/// What the user probably meant by `op`, if anything fits.
fn hint(op: &Operand) -> Option<String> {
    let text = op.text.as_str();
    if let Some(opt) = op.after {
        let spec = OPTIONS.iter().find(|s| s.opt == opt)?;
        return Some(match spec.has_arg {
            crate::front::cli::HasArg::Optional => {
                format!("did you mean --{}={text}?", spec.name)
            }
            // `-n 100`: ab's number of requests, not httperf's -n.
            _ if opt == Opt::PeriodicStats => crate::front::habits::periodic_stats_value(text)
                .unwrap_or_else(|| format!("--{} takes no value", spec.name)),
            _ => format!("--{} takes no value", spec.name),
        });
    }
    if text.starts_with('/') {
        return Some(format!("did you mean --uri {text}?"));
    }
    None
}

/// `host`, `host:port`, an IP address or `[v6]:port`: something one aims a tool at.
fn looks_like_host(s: &str) -> bool {
    if s.parse::<IpAddr>().is_ok() || s.parse::<SocketAddr>().is_ok() {
        return true;
    }
    let host = match s.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => h,
        Some(_) => return false,
        None => s,
    };
    let labels_ok = host
        .split('.')
        .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    // Top-level domains are alphabetic (`1.5` is a number, not a host).
    let tld_ok = host
        .rsplit('.')
        .next()
        .and_then(|l| l.chars().next())
        .is_some_and(|c| c.is_ascii_alphabetic());
    // A bare word is a host only as `localhost` or with a port (`web1:8080`).
    labels_ok && tld_ok && (host.contains('.') || host == "localhost" || host.len() < s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> TargetUrl {
        parse_url(s).expect("a URL").expect("a valid URL")
    }

    fn url_err(s: &str) -> String {
        parse_url(s)
            .expect("a URL")
            .expect_err("an invalid URL")
            .to_string()
    }

    #[test]
    fn urls_name_host_port_uri_and_tls() {
        let cases = [
            (
                "http://127.0.0.1:8080/foo",
                "127.0.0.1",
                Some(8080),
                "/foo",
                false,
            ),
            ("http://localhost", "localhost", None, "/", false),
            ("HTTPS://example.com/", "example.com", None, "/", true),
            (
                "http://h/a/../b?x=1&y=%20#frag",
                "h",
                None,
                "/a/../b?x=1&y=%20",
                false,
            ),
            ("http://h?q", "h", None, "/?q", false),
            ("http://[::1]:8080/x", "::1", Some(8080), "/x", false),
            (
                "https://[fe80::1%25eth0]",
                "fe80::1%25eth0",
                None,
                "/",
                true,
            ),
            ("http://h:/", "h", None, "/", false),
        ];
        for (s, host, port, uri, tls) in cases {
            if s.contains('%') && s.contains('[') {
                // A zone id is not an Ipv6Addr: refused with a message.
                assert!(url_err(s).contains("is not an IPv6 address"), "{s}");
                continue;
            }
            let u = url(s);
            assert_eq!(
                (u.host.as_str(), u.port, u.uri.as_str(), u.tls),
                (host, port, uri, tls),
                "{s}"
            );
            assert_eq!(u.text, s);
        }
        assert_eq!(url("https://h/").port_or_default(), 443);
        assert_eq!(url("http://h/").port_or_default(), 80);
        assert_eq!(url("http://h:81/").port_or_default(), 81);
    }

    #[test]
    fn bad_urls_say_why() {
        let cases = [
            ("http://", "URL http://: no host name"),
            ("http://:80/", "URL http://:80/: no host name"),
            ("http://h:x/", "URL http://h:x/: illegal port number x"),
            ("http://h:0/", "URL http://h:0/: illegal port number 0"),
            (
                "http://h:70000/",
                "URL http://h:70000/: illegal port number 70000",
            ),
            (
                "http://h:+80/",
                "URL http://h:+80/: illegal port number +80",
            ),
            (
                "http://[::1/",
                "URL http://[::1/: no ']' after the IPv6 address",
            ),
            (
                "http://[::1]x/",
                "URL http://[::1]x/: expected ':PORT' after the IPv6 address",
            ),
            ("http://[h]/", "URL http://[h]/: 'h' is not an IPv6 address"),
            (
                "http://::1:80/",
                "URL http://::1:80/: an IPv6 address goes in brackets: http://[::1]:8080/",
            ),
        ];
        for (s, want) in cases {
            assert_eq!(url_err(s), want, "{s}");
        }
        assert_eq!(
            url_err("http://u:p@h/"),
            "URL http://u:p@h/: user names and passwords in URLs are not supported \
             (send them with --add-header 'Authorization: ...\\n')"
        );
        for not_url in [
            "header",
            "ftp://h/",
            "http:/h",
            "127.0.0.1:8080",
            "/index.html",
        ] {
            assert!(parse_url(not_url).is_none(), "{not_url}");
        }
    }

    fn warn(text: &str, after: Option<Opt>) -> String {
        warning(&Operand {
            text: text.into(),
            after,
        })
    }

    #[test]
    fn stray_operands_get_a_hint_where_one_fits() {
        let cases = [
            (
                "header",
                Some(Opt::PrintReply),
                "ignoring argument 'header': did you mean --print-reply=header?",
            ),
            (
                "body",
                Some(Opt::PrintRequest),
                "ignoring argument 'body': did you mean --print-request=body?",
            ),
            (
                "no",
                Some(Opt::SslVerify),
                "ignoring argument 'no': did you mean --ssl-verify=no?",
            ),
            ("1", Some(Opt::Hog), "ignoring argument '1': --hog takes no value"),
            (
                "100",
                Some(Opt::PeriodicStats),
                "ignoring argument '100': -n is httperf's --periodic-stats (it takes no value); \
                 ab's -n 100 (requests) is --num-conns 100 here, or run ab's command line as \
                 `rshperf ab -n 100 …`",
            ),
            (
                "x",
                Some(Opt::PeriodicStats),
                "ignoring argument 'x': --periodic-stats takes no value",
            ),
            (
                "/index.html",
                None,
                "ignoring argument '/index.html': did you mean --uri /index.html?",
            ),
            ("-", None, "ignoring argument '-': not an option (httperf ignores it too; `rshperf --help` lists the options)"),
            ("foo", None, "ignoring argument 'foo': not an option (httperf ignores it too; `rshperf --help` lists the options)"),
        ];
        for (text, after, want) in cases {
            assert_eq!(warn(text, after), want, "{text}");
        }
        assert!(looks_like_host("web1:8080"));
        assert!(looks_like_host("[::1]:8080"));
        assert!(looks_like_host("::1"));
        assert!(!looks_like_host("3"));
        assert!(!looks_like_host("1.5"));
        assert!(!looks_like_host("web"));
        assert!(!looks_like_host("a b"));
        assert!(!looks_like_host("x:"));
    }

    #[test]
    fn operands_that_name_a_server_stand_for_a_url() {
        let cases = [
            ("127.0.0.1:8080", Some("http://127.0.0.1:8080/")),
            (
                "127.0.0.1:8080/1k.html",
                Some("http://127.0.0.1:8080/1k.html"),
            ),
            ("localhost/x", Some("http://localhost/x")),
            ("localhost", Some("http://localhost/")),
            ("example.com", Some("http://example.com/")),
            ("web1:8080/a/b?c", Some("http://web1:8080/a/b?c")),
            ("::1", Some("http://[::1]/")),
            ("[::1]:8080/x", Some("http://[::1]:8080/x")),
            ("10.0.0.1", Some("http://10.0.0.1/")),
            ("/index.html", None),
            ("header", None),
            ("web/x", None),
            ("1.5", None),
            ("x:/y", None),
            ("-", None),
        ];
        for (text, want) in cases {
            let op = Operand {
                text: text.into(),
                after: None,
            };
            assert_eq!(target_url(&op).as_deref(), want, "{text}");
        }
        // Right after an option whose optional value it may be: the hint fits better.
        let op = Operand {
            text: "localhost".into(),
            after: Some(Opt::PrintReply),
        };
        assert_eq!(target_url(&op), None);
    }
}
