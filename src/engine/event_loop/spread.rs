//! Loopback source-address spreading (part of `--overload=degrade`).
//!
//! Every source address has its own ephemeral port range per destination. A client
//! that opens tens of thousands of connections a second to one loopback server from
//! the one address the kernel picks (127.0.0.1) keeps most of that range in use or
//! in TIME_WAIT, and every `connect()` then makes the kernel search the range for a
//! free port (`__inet_hash_connect`): the client collapses. The whole 127.0.0.0/8
//! block is local on Linux, so connections to a 127/8 IPv4 target are spread over
//! `ADDRS` source addresses, 127.0.0.1 to 127.0.0.`ADDRS`, each bound with
//! IP_BIND_ADDRESS_NO_PORT (the port is still chosen by the kernel at connect time,
//! from that address's own range).
//!
//! Not done when the user chose source addresses (`--myaddr`) or ports (`--hog`):
//! those keep httperf's meaning. Not done under `--overload=queue` (httperf's
//! behaviour), nor for IPv6 (::1 is a single address) or other targets.
//!
//! Pure selection; the engine binds (`engine::connect`, `net::start_connect`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use crate::model::pacing::Overload;

/// Source addresses connections to a loopback target are spread over.
pub(super) const ADDRS: u8 = 16;

/// Round-robin over the loopback source addresses.
#[derive(Debug, Clone, Default)]
pub(super) struct Spread {
    /// Whether spreading applies to this run at all.
    on: bool,
    next: u8,
}

impl Spread {
    /// Spreading for a run with `policy`, `myaddr` source addresses given (parsed)
    /// and `hog`.
    pub(super) fn new(policy: Overload, myaddr: usize, hog: bool) -> Spread {
        Spread {
            on: policy == Overload::Degrade && myaddr == 0 && !hog,
            next: 0,
        }
    }

    /// Whether connections to `targets` are spread (at least one is loopback IPv4).
    pub(super) fn spreads(&self, mut targets: impl Iterator<Item = SocketAddr>) -> bool {
        self.on && targets.any(|a| is_loopback_v4(a.ip()))
    }

    /// The source address of the next connection to `dest` (None: the kernel picks).
    pub(super) fn source(&mut self, dest: SocketAddr) -> Option<IpAddr> {
        if !self.on || !is_loopback_v4(dest.ip()) {
            return None;
        }
        let host = self.next % ADDRS + 1;
        self.next = self.next.wrapping_add(1) % ADDRS;
        Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, host)))
    }
}

/// An address of 127.0.0.0/8.
fn is_loopback_v4(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V4(v4) if v4.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().expect("a socket address")
    }

    #[test]
    fn loopback_targets_get_sixteen_source_addresses_round_robin() {
        let mut s = Spread::new(Overload::Degrade, 0, false);
        let dest = addr("127.0.0.1:8080");
        assert!(s.spreads([dest].into_iter()));
        let got: Vec<IpAddr> = (0..17).filter_map(|_| s.source(dest)).collect();
        assert_eq!(got.len(), 17);
        assert_eq!(got[0], IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)));
        assert_eq!(got[15], IpAddr::V4(Ipv4Addr::new(127, 0, 0, 16)));
        assert_eq!(got[16], got[0]);
        // Any 127/8 target.
        assert!(s.source(addr("127.3.4.5:80")).is_some());
    }

    #[test]
    fn other_targets_and_user_choices_are_left_alone() {
        let mut s = Spread::new(Overload::Degrade, 0, false);
        for other in ["[::1]:80", "10.0.0.1:80", "192.168.1.2:8080"] {
            assert_eq!(s.source(addr(other)), None, "{other}");
        }
        assert!(!s.spreads([addr("[::1]:80")].into_iter()));
        for mut off in [
            Spread::new(Overload::Queue, 0, false),
            Spread::new(Overload::Degrade, 2, false),
            Spread::new(Overload::Degrade, 0, true),
        ] {
            assert_eq!(off.source(addr("127.0.0.1:80")), None);
            assert!(!off.spreads([addr("127.0.0.1:80")].into_iter()));
        }
    }
}
