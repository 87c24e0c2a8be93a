//! Targets: the servers connections go to (`--server`, or `--servers=FILE`).
//!
//! Owns reading and resolving httperf master's `--servers` file: entries `host` or
//! `host:port` (IPv6 literals in brackets, `[::1]:8080`), NUL-separated as in httperf
//! master or one per line, blank entries and `#` comment lines skipped. Each
//! connection (or session) goes to the next target round-robin and carries that
//! target's own `Host:`. Resolution happens once, at start.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use super::error::WorkloadError;
use crate::model::config::Config;

/// One server of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// Where to connect.
    pub(crate) addr: SocketAddr,
    /// The `Host:` value.
    pub(crate) host: String,
    /// How reports name it (`host:port` as given).
    pub(crate) label: String,
}

/// The targets of `cfg`: its one server, or the entries of `--servers`.
pub(crate) fn from_config(cfg: &Config) -> Result<Vec<Target>, WorkloadError> {
    let Some(file) = cfg.target().servers() else {
        let addr = *cfg
            .target()
            .addrs()
            .first()
            .ok_or(WorkloadError::NoServerAddress)?;
        return Ok(vec![Target {
            addr,
            host: cfg.host_header().to_string(),
            label: format!("{}:{}", cfg.target().server(), cfg.target().port()),
        }]);
    };
    let bytes = std::fs::read(file).map_err(|source| WorkloadError::Open {
        file: file.to_string(),
        source,
    })?;
    parse(file, &bytes, cfg.target().port())
}

/// Parses and resolves a `--servers` file named `name` with default port `port`.
pub(crate) fn parse(name: &str, bytes: &[u8], port: u16) -> Result<Vec<Target>, WorkloadError> {
    let text = String::from_utf8_lossy(bytes);
    let mut targets = Vec::new();
    for (i, entry) in text.split(['\0', '\n']).enumerate() {
        let entry = entry.trim();
        if entry.is_empty() || entry.starts_with('#') {
            continue;
        }
        let (host, port) =
            split_host_port(entry, port).ok_or_else(|| WorkloadError::BadServer {
                file: name.to_string(),
                entry: i + 1,
                server: entry.to_string(),
            })?;
        let addr = (host.as_str(), port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| WorkloadError::Unresolvable {
                file: name.to_string(),
                host: host.clone(),
            })?;
        let host_header = match host.parse::<IpAddr>() {
            Ok(IpAddr::V6(_)) => format!("[{host}]"),
            _ => host.clone(),
        };
        targets.push(Target {
            addr,
            host: host_header,
            label: entry.to_string(),
        });
    }
    if targets.is_empty() {
        return Err(WorkloadError::NoServers {
            file: name.to_string(),
        });
    }
    Ok(targets)
}

/// `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 literal.
fn split_host_port(entry: &str, default: u16) -> Option<(String, u16)> {
    if let Some(rest) = entry.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok().filter(|p| *p > 0)?,
            None if after.is_empty() => default,
            None => return None,
        };
        return Some((host.to_string(), port));
    }
    if entry.parse::<std::net::Ipv6Addr>().is_ok() {
        return Some((entry.to_string(), default));
    }
    match entry.rsplit_once(':') {
        Some((host, p)) if !host.is_empty() => {
            Some((host.to_string(), p.parse().ok().filter(|p| *p > 0)?))
        }
        Some(_) => None,
        None => Some((entry.to_string(), default)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_in_both_formats() {
        let nul = parse("s", b"127.0.0.1\0[::1]:8081\0\0localhost:9\0", 80).expect("valid");
        assert_eq!(nul.len(), 3);
        assert_eq!(nul[0].addr, "127.0.0.1:80".parse().expect("addr"));
        assert_eq!(nul[0].host, "127.0.0.1");
        assert_eq!(nul[1].addr, "[::1]:8081".parse().expect("addr"));
        assert_eq!(nul[1].host, "[::1]");
        assert_eq!(nul[1].label, "[::1]:8081");
        assert_eq!(nul[2].addr.port(), 9);
        let lines = parse("s", b"# two servers\n127.0.0.1:8080\n\n::1\n", 8080).expect("valid");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].addr, "[::1]:8080".parse().expect("addr"));
    }

    #[test]
    fn bad_entries_are_errors() {
        for bad in [
            &b"127.0.0.1:0"[..],
            b"127.0.0.1:x",
            b"[::1",
            b":80",
            b"\n\n",
            b"[::1]x",
        ] {
            assert!(
                parse("s", bad, 80).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
