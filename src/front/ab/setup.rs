//! A `Bench` (ab's or lb's letters) as rshperf's `Config` and `Workload`.
//!
//! Owns the mapping: the socket, timeout and TLS options go onto `ConfigBuilder` as
//! typed values (validated by its `build`, the same way as httperf's), then the workload gets
//! one target per URL (its address, and ab's or lb's `Host:` value), ab's request
//! layout (`request_parts`) with a URI per target, and a closed loop with one group
//! per server (`-c` users, `-n` requests; with `-k` a request budget spent over
//! keep-alive connections). Called by `ab::run` before the run.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use super::{Bench, Tool};
use crate::model::call::{Body, RequestParts, Requests};
use crate::model::config::{Config, SslProtocol};
use crate::model::workload::closed::{AbRecording, ClosedLoop, Group};
use crate::model::workload::target::Target;
use crate::model::workload::Workload;
use crate::wire::tls::TlsSettings;

use super::error::SetupError;

/// The User-Agent of ab and lb requests: as long as ab's `ApacheBench/2.3`, so that
/// request sizes (and `Total body sent`) match ab's.
pub(crate) const USER_AGENT: &str = concat!("rshperfab/", env!("CARGO_PKG_VERSION"));
const _: () = assert!(USER_AGENT.len() == "ApacheBench/2.3".len());

/// What `ab::run` runs, and what it prints about it.
pub(crate) struct Plan {
    /// The configuration (sockets, timeouts, TLS).
    pub(crate) cfg: Config,
    /// Targets, request and closed loop.
    pub(crate) work: Workload,
    /// The request's bytes up to the body, for `-v 2` (with the first URL).
    pub(crate) request_head: Vec<u8>,
    /// Per URL, the TLS server name sent (ab's `TLS Server Name:`).
    pub(crate) sni: Vec<Option<String>>,
}

/// The first address of `host:port`.
fn resolve(host: &str, port: u16) -> Result<SocketAddr, SetupError> {
    (host, port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| SetupError::Resolve {
            host: host.to_string(),
            port,
        })
}

/// The value of `-H` headers named `name` (case-insensitive), if the user gave one.
fn user_header<'a>(b: &'a Bench, name: &str) -> Option<&'a str> {
    b.headers.iter().find_map(|h| {
        let (n, v) = h.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// ab's request without the request target: ` HTTP/1.0`, `Connection: Keep-Alive`
/// (`-k`), cookies, credentials, the body's length and type, the `-H` lines, then
/// (rendered per target) `Host:`, then `User-Agent:` and `Accept:` unless the user
/// gave their own.
pub(crate) fn request_parts(b: &Bench, uri: &str) -> RequestParts {
    let mut head = b" HTTP/1.0\r\n".to_vec();
    let mut line = |text: &str| {
        head.extend_from_slice(text.as_bytes());
        head.extend_from_slice(b"\r\n");
    };
    if b.keep_alive {
        line("Connection: Keep-Alive");
    }
    for c in &b.cookies {
        line(&format!("Cookie: {c}"));
    }
    for a in &b.auth {
        line(a);
    }
    let body = b.body.clone().unwrap_or_else(|| Body::from(&[][..]));
    if b.body.is_some() {
        line(&format!("Content-length: {}", body.len()));
        line(&format!(
            "Content-type: {}",
            b.content_type.as_deref().unwrap_or("text/plain")
        ));
    }
    for h in &b.headers {
        line(h);
    }
    let mut tail = Vec::new();
    if user_header(b, "User-Agent").is_none() {
        tail.extend_from_slice(format!("User-Agent: {USER_AGENT}\r\n").as_bytes());
    }
    if user_header(b, "Accept").is_none() {
        tail.extend_from_slice(b"Accept: */*\r\n");
    }
    RequestParts {
        method: b.method.clone(),
        uri: uri.to_string(),
        head,
        tail,
        body,
        send_host: user_header(b, "Host").is_none(),
    }
}

/// Builds the run of `b`; `heartbeat` is ab's progress interval (0: none). Errors
/// print (in ab's words) as one-line messages for the caller to prefix.
pub(crate) fn build(b: &Bench, heartbeat: u64) -> Result<Plan, SetupError> {
    let https = b.urls.first().is_some_and(|u| u.https);
    if b.urls.iter().any(|u| u.https != https) {
        return Err(SetupError::MixedSchemes);
    }
    if https && b.proxy.is_some() {
        return Err(SetupError::ProxyWithHttps);
    }
    let mut targets = Vec::with_capacity(b.urls.len());
    let mut uris = Vec::with_capacity(b.urls.len());
    let mut sni = Vec::with_capacity(b.urls.len());
    for u in &b.urls {
        let addr = match &b.proxy {
            Some((host, port)) => resolve(host, *port)?,
            None => resolve(&u.host, u.port)?,
        };
        let host = match b.tool {
            Tool::Ab => u.ab_host_header(),
            Tool::Lb => u.lb_host_header(),
        };
        targets.push(Target {
            addr,
            host,
            label: u.full.clone(),
        });
        uris.push(if b.proxy.is_some() {
            u.full.clone()
        } else {
            u.path.clone()
        });
        // ab's SNI: the -H Host: value, else the host; never an IP address.
        let name = user_header(b, "Host").unwrap_or(&u.host);
        sni.push((https && !b.no_sni && name.parse::<IpAddr>().is_err()).then(|| name.to_string()));
    }
    let first = targets.first().ok_or(SetupError::NoUrl)?;
    let mut builder = Config::builder();
    builder
        .server(first.addr.ip().to_string())
        .port(first.addr.port())
        .progress(Some(false));
    if b.timeout > 0.0 {
        builder.timeout(b.timeout);
    }
    if let Some(t) = b.time_limit {
        builder.runtime(t);
    }
    if let Some(addr) = &b.bind {
        builder.myaddr(addr.clone());
    }
    if https {
        builder.tls_protocol(b.tls_protocol.unwrap_or(SslProtocol::Auto));
        if let Some(z) = &b.ciphers {
            builder.tls_ciphers(z.clone());
        }
        if let Some(e) = &b.cert {
            builder.tls_certificate(e.clone()).tls_key(e.clone());
        }
        // Without a name (an IP address, or -I) rustls sends no SNI.
        builder.tls_server_name(
            sni[0]
                .clone()
                .unwrap_or_else(|| first.addr.ip().to_string()),
        );
    }
    // ab's -b (0: the kernel's default and its autotuning).
    let window = b.window.unwrap_or(0);
    builder.send_buffer(window).recv_buffer(window);
    let cfg = builder
        .build()
        .map_err(|r| SetupError::Config(r.error))?
        .config;
    // TLS first, for ab's wording of its option errors (the workload builds it again).
    TlsSettings::from_options(cfg.tls())?;
    let mut work = Workload::from_config(&cfg)?;
    let parts = request_parts(b, &uris[0]);
    let mut head = Vec::new();
    let host = targets[0].host.clone();
    let probe = Requests::from_parts(parts.clone());
    let (_, header_len) = probe.render(crate::model::call::CallRef::Fixed, &host, None, &mut head);
    head.truncate(header_len);
    work.requests = Requests::from_parts(parts);
    work.set_target_uris(uris);
    work.targets = targets;
    work.closed = Some(ClosedLoop {
        groups: b
            .urls
            .iter()
            .map(|_| Group {
                users: b.concurrency,
                units: b.requests,
                calls: b.keep_alive.then_some(b.requests),
            })
            .collect(),
        per_target: true,
        split: true,
        retries: b.retries,
        ab: Some(AbRecording { heartbeat }),
    });
    Ok(Plan {
        cfg,
        work,
        request_head: head,
        sni,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::ab::args;
    use crate::front::ab::error::ab_tls_error;
    use crate::wire::tls::TlsOptionError;

    fn bench(a: &[&str]) -> Bench {
        let mut v = vec!["ab".to_string()];
        v.extend(a.iter().map(|s| s.to_string()));
        args::parse(&v).expect("valid")
    }

    fn render(p: &Plan, target: usize) -> String {
        let mut out = Vec::new();
        let t = &p.work.targets[target];
        p.work.requests.render(
            crate::model::call::CallRef::Uri(target as u32),
            &t.host,
            None,
            &mut out,
        );
        String::from_utf8(out).expect("utf8")
    }

    #[test]
    fn requests_as_ab_sends_them() {
        let p = build(
            &bench(&["-k", "http://127.0.0.1:8080/", "http://[::1]/x"]),
            0,
        )
        .expect("plan");
        assert_eq!(
            render(&p, 0),
            "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: 127.0.0.1:8080\r\n\
             User-Agent: rshperfab/0.1.0\r\nAccept: */*\r\n\r\n"
        );
        assert!(render(&p, 1)
            .starts_with("GET /x HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: [::1]\r\n"));
        assert_eq!(p.work.targets[1].addr, "[::1]:80".parse().expect("addr"));
        let closed = p.work.closed.as_ref().expect("closed loop");
        assert_eq!(closed.groups.len(), 2);
        assert_eq!(closed.groups[0].calls, Some(1));
        assert_eq!(p.cfg.sockets().send_buffer(), 0);
        assert_eq!(p.cfg.sockets().timeout(), 30.0);
    }

    #[test]
    fn headers_override_and_bodies() {
        let dir = std::env::temp_dir().join(format!("rshperf-ab-setup-{}", std::process::id()));
        std::fs::write(&dir, b"a=1&b=2").expect("write body");
        let path = dir.to_string_lossy().into_owned();
        let p = build(
            &bench(&[
                "-p",
                &path,
                "-T",
                "application/x-www-form-urlencoded",
                "-C",
                "s=1",
                "-A",
                "u:p",
                "-H",
                "host: example.org",
                "-H",
                "User-Agent: mine",
                "-b",
                "8192",
                "http://127.0.0.1:8080/form",
            ]),
            0,
        )
        .expect("plan");
        std::fs::remove_file(&dir).expect("cleanup");
        assert_eq!(
            render(&p, 0),
            "POST /form HTTP/1.0\r\nCookie: s=1\r\nAuthorization: Basic dTpw\r\n\
             Content-length: 7\r\nContent-type: application/x-www-form-urlencoded\r\n\
             host: example.org\r\nUser-Agent: mine\r\nAccept: */*\r\n\r\na=1&b=2"
        );
        assert_eq!(p.cfg.sockets().send_buffer(), 8192);
        assert_eq!(
            String::from_utf8_lossy(&p.request_head),
            render(&p, 0).trim_end_matches("a=1&b=2")
        );
    }

    #[test]
    fn proxy_sends_the_full_url_and_schemes_must_agree() {
        let p = build(
            &bench(&["-X", "127.0.0.1:3128", "http://example.invalid:81/p"]),
            0,
        );
        // The URL's host is never resolved: connections go to the proxy.
        let p = p.expect("plan");
        assert!(render(&p, 0).starts_with(
            "GET http://example.invalid:81/p HTTP/1.0\r\nHost: example.invalid:81\r\n"
        ));
        assert_eq!(
            p.work.targets[0].addr,
            "127.0.0.1:3128".parse().expect("addr")
        );
        let mixed = build(&bench(&["http://127.0.0.1:1/", "https://127.0.0.1:2/"]), 0);
        assert_eq!(
            mixed.err().map(|e| e.to_string()).as_deref(),
            Some("all URLs must use the same scheme (http or https)")
        );
        let unknown = build(&bench(&["http://no-such-host.invalid/"]), 0);
        assert_eq!(
            unknown.err().map(|e| e.to_string()).as_deref(),
            Some("cannot resolve host no-such-host.invalid (port 80)")
        );
    }

    #[test]
    fn option_errors_in_abs_letters() {
        let https = |extra: &[&str]| {
            let mut a = extra.to_vec();
            a.push("https://127.0.0.1:1/");
            build(&bench(&a), 0).err().expect("refused").to_string()
        };
        assert_eq!(
            https(&["-Z", "RC4-MD5"]),
            "-Z: no supported cipher suite in 'RC4-MD5' (unsupported: RC4-MD5)"
        );
        let missing = "/nonexistent/rshperf-client.pem";
        assert!(https(&["-E", missing]).starts_with(&format!("-E {missing}: ")));
        assert_eq!(
            ab_tls_error(&TlsOptionError::CiphersForProtocol {
                spec: "X".into(),
                protocol: SslProtocol::Tls12,
            }),
            "-Z: no cipher suite in 'X' can be used with -f TLSv1.2"
        );
        assert_eq!(
            ab_tls_error(&TlsOptionError::KeyMismatch {
                cert: "c".into(),
                key: "k".into(),
            }),
            "-E c and -E k do not match (SSL certificate and key failed consistency check)"
        );
        assert_eq!(
            build(
                &bench(&["-B", "10.0.0.x-10.0.0.2", "http://127.0.0.1:1/"]),
                0
            )
            .err()
            .map(|e| e.to_string()),
            Some("invalid starting address 10.0.0.x in -B 10.0.0.x-10.0.0.2".into())
        );
        assert_eq!(
            build(
                &bench(&["-B", "no-such-host.invalid", "http://127.0.0.1:1/"]),
                0
            )
            .err()
            .map(|e| e.to_string()),
            Some("invalid address list no-such-host.invalid (not an address or host name)".into())
        );
    }

    #[test]
    fn user_agent_is_as_long_as_abs() {
        assert_eq!(USER_AGENT.len(), "ApacheBench/2.3".len());
    }
}
