//! The local ports an engine holds towards each destination, for the validity
//! judgement's port budget (`model::validity`, `raw.pacing.ports_peak`).
//!
//! A TCP connection takes a local port of its source address for its destination
//! from the kernel's ephemeral range (`ip_local_port_range`) when it connects, and
//! keeps it until it closes; a connection this client closed after the handshake then
//! keeps it for TIME_WAIT (60 s on Linux) unless the kernel may reuse the port for a
//! new connect to the same destination a second later (`tcp_tw_reuse` 1, or 2 — the
//! default — for loopback destinations; TCP timestamps on). A connect that failed, or
//! a close with a reset (`--close-with-reset`), leaves nothing in TIME_WAIT. So the
//! ports held towards (destination, source address) at a moment are its connections
//! open plus those closed within the hold; `peak` is the most over the run and over
//! every destination. Counted from the engine's own connects and closes (no system
//! call), on whole seconds: a close within second s is held until second s + hold.
//! Sockets of other processes and earlier runs are not counted.
//!
//! Pure bookkeeping on the times it is given; the engine calls it from
//! `connect::start_tcp` and `finish`.

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

/// Linux's TIME_WAIT (`TCP_TIMEWAIT_LEN`).
const TIME_WAIT: Duration = Duration::from_secs(60);
/// How long a TIME_WAIT port is kept from a connect when the kernel reuses them
/// (the timestamp of its last segment must lie in an earlier second).
const REUSE_AFTER: Duration = Duration::from_secs(1);

/// The ports held towards one destination from one source address.
#[derive(Debug, Clone)]
struct Key {
    dest: SocketAddr,
    source: Option<IpAddr>,
    /// How long a port closed by this client stays taken.
    hold: Duration,
    /// Connections open.
    open: u64,
    /// Closes still held: (second of the run, count), oldest first.
    closes: VecDeque<(u64, u64)>,
    /// Their sum.
    held: u64,
}

/// The ports one engine holds, by destination and source address.
#[derive(Debug, Clone)]
pub(super) struct PortUse {
    /// `tcp_tw_reuse` (0, 1 or 2) and whether TCP timestamps are on.
    reuse: (u8, bool),
    start: Instant,
    keys: Vec<Key>,
    peak: u64,
}

impl PortUse {
    /// Bookkeeping from `start` for a kernel with `tcp_tw_reuse` = `reuse` and TCP
    /// timestamps `timestamps`.
    pub(super) fn new(start: Instant, reuse: u8, timestamps: bool) -> PortUse {
        PortUse {
            reuse: (reuse, timestamps),
            start,
            keys: Vec::new(),
            peak: 0,
        }
    }

    /// How long a port towards `dest` stays taken after this client closed.
    fn hold(&self, dest: SocketAddr) -> Duration {
        match self.reuse {
            (1, true) => REUSE_AFTER,
            (2, true) if dest.ip().is_loopback() => REUSE_AFTER,
            _ => TIME_WAIT,
        }
    }

    fn second(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.start).as_secs()
    }

    /// Forgets the closes of key `k` whose hold ended by `now`.
    fn expire(&mut self, k: usize, now: Instant) {
        let sec = self.second(now);
        let key = &mut self.keys[k];
        let hold = key.hold.as_secs();
        while let Some(&(s, n)) = key.closes.front() {
            if s + hold > sec {
                break;
            }
            key.closes.pop_front();
            key.held -= n;
        }
    }

    /// A connection to `dest` from `source` (None: the kernel's choice) took a port
    /// at `now`; returns its key for `closed`.
    pub(super) fn opened(&mut self, dest: SocketAddr, source: Option<IpAddr>, now: Instant) -> u32 {
        let k = match self
            .keys
            .iter()
            .position(|k| k.dest == dest && k.source == source)
        {
            Some(k) => k,
            None => {
                let hold = self.hold(dest);
                self.keys.push(Key {
                    dest,
                    source,
                    hold,
                    open: 0,
                    closes: VecDeque::new(),
                    held: 0,
                });
                self.keys.len() - 1
            }
        };
        self.expire(k, now);
        let key = &mut self.keys[k];
        key.open += 1;
        self.peak = self.peak.max(key.open + key.held);
        u32::try_from(k).unwrap_or(u32::MAX)
    }

    /// The connection of key `k` closed at `now`; `time_wait`: whether its port stays
    /// in TIME_WAIT (this client closed it after the handshake, without a reset).
    pub(super) fn closed(&mut self, k: u32, time_wait: bool, now: Instant) {
        let sec = self.second(now);
        let Some(key) = self.keys.get_mut(k as usize) else {
            return;
        };
        key.open = key.open.saturating_sub(1);
        if time_wait {
            match key.closes.back_mut() {
                Some((s, n)) if *s == sec => *n += 1,
                _ => key.closes.push_back((sec, 1)),
            }
            key.held += 1;
        }
    }

    /// The most ports held at once towards one destination from one source.
    pub(super) fn peak(&self) -> u64 {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().expect("a socket address")
    }

    #[test]
    fn closed_ports_stay_held_for_time_wait_when_the_kernel_cannot_reuse_them() {
        let t0 = Instant::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        let remote = addr("10.0.0.1:80");
        let mut p = PortUse::new(t0, 2, true);
        // Ten connections a second, each closed at once, for 100 s: at most the 599
        // closes of the last 60 s before a connect, and the connect's own port.
        for i in 0..1000u64 {
            let now = at(i as f64 / 10.0);
            let k = p.opened(remote, None, now);
            p.closed(k, true, now);
        }
        assert_eq!(p.peak(), 600);
        // The same towards loopback: reused after a second.
        let mut p = PortUse::new(t0, 2, true);
        for i in 0..1000u64 {
            let now = at(i as f64 / 10.0);
            let k = p.opened(addr("127.0.0.1:80"), None, now);
            p.closed(k, true, now);
        }
        assert_eq!(p.peak(), 10);
        // tcp_tw_reuse=0, or no timestamps: TIME_WAIT for loopback too.
        for (reuse, ts) in [(0, true), (2, false), (1, false)] {
            let mut p = PortUse::new(t0, reuse, ts);
            for i in 0..1000u64 {
                let now = at(i as f64 / 10.0);
                let k = p.opened(addr("127.0.0.1:80"), None, now);
                p.closed(k, true, now);
            }
            assert_eq!(p.peak(), 600, "{reuse} {ts}");
        }
    }

    #[test]
    fn open_connections_count_and_failed_or_reset_ones_leave_nothing_held() {
        let t0 = Instant::now();
        let dest = addr("10.0.0.1:80");
        let mut p = PortUse::new(t0, 0, true);
        let keys: Vec<u32> = (0..50).map(|_| p.opened(dest, None, t0)).collect();
        assert_eq!(p.peak(), 50);
        for k in keys {
            p.closed(k, false, t0);
        }
        let k = p.opened(dest, None, t0);
        assert_eq!(p.peak(), 50);
        p.closed(k, false, t0);
    }

    #[test]
    fn each_destination_and_source_address_has_its_own_range() {
        let t0 = Instant::now();
        let mut p = PortUse::new(t0, 0, true);
        for i in 0..64u8 {
            let source = Some(IpAddr::from([127, 0, 0, 1 + i % 16]));
            let k = p.opened(addr("10.0.0.1:80"), source, t0);
            p.closed(k, true, t0);
            let k = p.opened(addr("10.0.0.2:80"), None, t0);
            p.closed(k, true, t0);
        }
        // 64 towards 10.0.0.2 from one source; 4 from each of 16 towards 10.0.0.1.
        assert_eq!(p.peak(), 64);
        // A minute later (on the simulated clock) they are free again.
        let later = t0 + Duration::from_secs(61);
        let k = p.opened(addr("10.0.0.2:80"), None, later);
        p.closed(k, true, later);
        assert_eq!(p.keys[1].held, 1);
    }
}
