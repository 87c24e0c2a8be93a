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
//! Only under port pressure: binding costs two system calls per connection (the
//! option and `bind`), so a connection goes out from the kernel's own choice until
//! the connections opened to loopback within one TIME_WAIT period (60 s), plus the
//! TIME_WAIT sockets the machine had when the run started, reach half the ephemeral
//! port range (`net::port_pressure_budget`); from then on they are spread. A run
//! of a few thousand connections makes the same system calls as httperf.
//!
//! Not done when the user chose source addresses (`--myaddr`) or ports (`--hog`):
//! those keep httperf's meaning. Not done under `--overload=queue` (httperf's
//! behaviour), nor for IPv6 (::1 is a single address) or other targets.
//!
//! Pure selection; the engine binds (`engine::event_loop::connect`, `net::prepare_socket`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use crate::model::pacing::Overload;

/// Source addresses connections to a loopback target are spread over.
pub(super) const ADDRS: u8 = 16;

/// How long a closed connection's port stays taken (Linux's TIME_WAIT, 60 s).
const TIME_WAIT: Duration = Duration::from_secs(60);
/// The TIME_WAIT period is counted in this many buckets (a sliding window).
const BUCKETS: usize = 4;

/// Round-robin over the loopback source addresses, once ports are under pressure.
#[derive(Debug, Clone, Default)]
pub(super) struct Spread {
    /// Whether spreading applies to this run at all.
    on: bool,
    next: u8,
    /// Connections to loopback that may go out from the kernel's one address within
    /// a TIME_WAIT period before spreading starts.
    budget: u64,
    /// Loopback connections opened per bucket of the window, the current one at
    /// `cur`.
    counts: [u64; BUCKETS],
    cur: usize,
    /// When the current bucket started (None before the first connection).
    bucket_start: Option<Instant>,
}

impl Spread {
    /// Spreading for a run with `policy`, `myaddr` source addresses given (parsed)
    /// and `hog`, starting once `budget` loopback connections were opened within a
    /// TIME_WAIT period (0: from the first connection).
    pub(super) fn new(policy: Overload, myaddr: usize, hog: bool, budget: u64) -> Spread {
        Spread {
            on: policy == Overload::Degrade && myaddr == 0 && !hog,
            budget,
            ..Spread::default()
        }
    }

    /// Counts a loopback connection opened at `now`; whether the window's count
    /// has reached the budget.
    fn pressed(&mut self, now: Instant) -> bool {
        let width = TIME_WAIT / BUCKETS as u32;
        let start = *self.bucket_start.get_or_insert(now);
        let elapsed = now.saturating_duration_since(start);
        if elapsed >= width {
            // Move on by whole buckets, emptying the ones that left the window.
            let steps = (elapsed.as_nanos() / width.as_nanos()) as usize;
            for _ in 0..steps.min(BUCKETS) {
                self.cur = (self.cur + 1) % BUCKETS;
                self.counts[self.cur] = 0;
            }
            self.bucket_start = Some(start + width * steps.min(u32::MAX as usize) as u32);
        }
        self.counts[self.cur] += 1;
        self.counts.iter().sum::<u64>() > self.budget
    }

    /// The source address of the next connection to `dest`, opened at `now` (None:
    /// the kernel picks).
    pub(super) fn source(&mut self, dest: SocketAddr, now: Instant) -> Option<IpAddr> {
        if !self.on || !is_loopback_v4(dest.ip()) || !self.pressed(now) {
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
    use crate::engine::clock::{Clock, Sim};

    fn addr(s: &str) -> SocketAddr {
        s.parse().expect("a socket address")
    }

    #[test]
    fn loopback_targets_get_sixteen_source_addresses_round_robin() {
        let mut s = Spread::new(Overload::Degrade, 0, false, 0);
        let dest = addr("127.0.0.1:8080");
        let t = Instant::now();
        let got: Vec<IpAddr> = (0..17).filter_map(|_| s.source(dest, t)).collect();
        assert_eq!(got.len(), 17);
        assert_eq!(got[0], IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)));
        assert_eq!(got[15], IpAddr::V4(Ipv4Addr::new(127, 0, 0, 16)));
        assert_eq!(got[16], got[0]);
        // Any 127/8 target.
        assert!(s.source(addr("127.3.4.5:80"), t).is_some());
    }

    #[test]
    fn other_targets_and_user_choices_are_left_alone() {
        let mut s = Spread::new(Overload::Degrade, 0, false, 0);
        let t = Instant::now();
        for other in ["[::1]:80", "10.0.0.1:80", "192.168.1.2:8080"] {
            assert_eq!(s.source(addr(other), t), None, "{other}");
        }
        for mut off in [
            Spread::new(Overload::Queue, 0, false, 0),
            Spread::new(Overload::Degrade, 2, false, 0),
            Spread::new(Overload::Degrade, 0, true, 0),
        ] {
            assert_eq!(off.source(addr("127.0.0.1:80"), t), None);
        }
    }

    #[test]
    fn spreading_starts_past_the_budget_and_stops_when_the_window_empties() {
        // Budget 3 per TIME_WAIT period (4 buckets of 15 s), on the simulated clock.
        let t0 = Instant::now();
        let clock = Sim::new(t0);
        let dest = addr("127.0.0.1:8080");
        let mut s = Spread::new(Overload::Degrade, 0, false, 3);
        let at = |s: &mut Spread, secs: u64| {
            clock.set(t0 + Duration::from_secs(secs));
            s.source(dest, clock.now())
        };
        // Three connections within the window go out from the kernel's address.
        assert_eq!([at(&mut s, 0), at(&mut s, 10), at(&mut s, 20)], [None; 3]);
        // The fourth is past the budget: spread, round-robin from 127.0.0.1.
        assert_eq!(
            at(&mut s, 30),
            Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)))
        );
        assert_eq!(
            at(&mut s, 31),
            Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)))
        );
        // At 75 s the buckets of 0-30 s have left the window: 30, 31 and 75 s are
        // in it, within the budget again; one more is past it.
        assert_eq!(at(&mut s, 75), None);
        assert!(at(&mut s, 76).is_some());
        // Two quiet minutes later the window is empty: the kernel picks again.
        assert_eq!(at(&mut s, 200), None);
        assert_eq!(at(&mut s, 201), None);
        assert_eq!(at(&mut s, 202), None);
        assert!(at(&mut s, 203).is_some());
    }
}
