//! A lossy UDP proxy on 127.0.0.1:0 for HTTP/3 under faults (`faults_cells.rs`): it
//! relays datagrams between each client (one upstream socket per client address)
//! and the server, and drops, duplicates and reorders them on a fixed schedule whose
//! phase comes from a seed, so a run sees the same kind of trouble every time and
//! every action is counted.
//!
//! In each direction of each client, datagram k (counting from 0) is dropped when
//! (k + phase) % `drop_every` == 0, sent twice when (k + phase) % `dup_every` == 0,
//! and held back until the next datagram has gone (or 20 ms passed) when (k + phase)
//! % `hold_every` == 0 — a reordering. The phase is drawn from the seed per client
//! and direction (splitmix64), so which datagrams are hit differs between them, but
//! not between runs. Threads and blocking sockets with short read timeouts; stopped
//! when dropped.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// What the proxy does, every how many datagrams (0: never).
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    /// Drop one datagram in this many.
    pub drop_every: u64,
    /// Send one datagram in this many twice.
    pub dup_every: u64,
    /// Hold one datagram in this many behind the next.
    pub hold_every: u64,
    /// The seed of the phases.
    pub seed: u64,
}

/// The proxy's counters, both directions summed.
#[derive(Debug, Default)]
pub struct UdpCounts {
    /// Client addresses seen (one per QUIC connection of rshperf).
    pub clients: AtomicU64,
    /// Datagrams received from clients.
    pub from_clients: AtomicU64,
    /// Datagrams received from the server.
    pub from_server: AtomicU64,
    /// Datagrams dropped.
    pub dropped: AtomicU64,
    /// Datagrams sent twice.
    pub duplicated: AtomicU64,
    /// Datagrams held behind the next one.
    pub reordered: AtomicU64,
}

/// A running proxy.
pub struct UdpProxy {
    port: u16,
    /// What it counted.
    pub counts: Arc<UdpCounts>,
    stop: Arc<AtomicBool>,
}

/// How long a read waits before the loop looks at `stop` and held datagrams.
const TICK: Duration = Duration::from_millis(20);

/// splitmix64: the phase of stream `n` of `seed`.
fn phase(seed: u64, n: u64) -> u64 {
    let mut z = seed.wrapping_add(n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One direction of one client: its datagram count, phase and held datagram.
struct Lane {
    k: u64,
    phase: u64,
    held: Option<Vec<u8>>,
}

impl Lane {
    fn new(phase: u64) -> Lane {
        Lane {
            k: 0,
            phase,
            held: None,
        }
    }

    /// Passes datagram `d` on through `send` as the schedule says.
    fn pass(&mut self, d: &[u8], s: &Schedule, c: &UdpCounts, send: &dyn Fn(&[u8])) {
        let at = self.k.wrapping_add(self.phase);
        self.k += 1;
        let hit = |every: u64| every > 0 && at.is_multiple_of(every);
        if hit(s.drop_every) {
            c.dropped.fetch_add(1, Ordering::SeqCst);
            return;
        }
        if hit(s.hold_every) && self.held.is_none() {
            c.reordered.fetch_add(1, Ordering::SeqCst);
            self.held = Some(d.to_vec());
            return;
        }
        send(d);
        if hit(s.dup_every) {
            c.duplicated.fetch_add(1, Ordering::SeqCst);
            send(d);
        }
        if let Some(h) = self.held.take() {
            send(&h);
        }
    }

    /// A read timed out: a held datagram goes now.
    fn flush(&mut self, send: &dyn Fn(&[u8])) {
        if let Some(h) = self.held.take() {
            send(&h);
        }
    }
}

impl UdpProxy {
    /// Relays to `upstream` with `schedule`.
    pub fn start(upstream: SocketAddr, schedule: Schedule) -> UdpProxy {
        let listen = Arc::new(UdpSocket::bind("127.0.0.1:0").expect("bind udp proxy"));
        let port = listen.local_addr().expect("addr").port();
        listen.set_read_timeout(Some(TICK)).expect("timeout");
        let counts = Arc::new(UdpCounts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (c, st) = (Arc::clone(&counts), Arc::clone(&stop));
        thread::spawn(move || {
            let clients: Mutex<HashMap<SocketAddr, (Arc<UdpSocket>, Lane)>> =
                Mutex::new(HashMap::new());
            let mut buf = vec![0u8; 65_536];
            while !st.load(Ordering::SeqCst) {
                let got = listen.recv_from(&mut buf);
                let mut map = clients.lock().expect("lock");
                let Ok((n, from)) = got else {
                    for (up, lane) in map.values_mut() {
                        lane.flush(&|d| {
                            let _ = up.send(d);
                        });
                    }
                    continue;
                };
                c.from_clients.fetch_add(1, Ordering::SeqCst);
                let index = map.len() as u64;
                let (up, lane) = map.entry(from).or_insert_with(|| {
                    c.clients.fetch_add(1, Ordering::SeqCst);
                    let up = Arc::new(UdpSocket::bind("127.0.0.1:0").expect("bind upstream"));
                    up.connect(upstream).expect("connect upstream");
                    up.set_read_timeout(Some(TICK)).expect("timeout");
                    back(
                        Arc::clone(&up),
                        Arc::clone(&listen),
                        from,
                        Lane::new(phase(schedule.seed, 2 * index + 1)),
                        schedule,
                        Arc::clone(&c),
                        Arc::clone(&st),
                    );
                    (up, Lane::new(phase(schedule.seed, 2 * index)))
                });
                let up = Arc::clone(up);
                lane.pass(&buf[..n], &schedule, &c, &|d| {
                    let _ = up.send(d);
                });
            }
        });
        UdpProxy { port, counts, stop }
    }

    /// The proxy's UDP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A counter's value.
    pub fn get(&self, which: fn(&UdpCounts) -> &AtomicU64) -> u64 {
        which(&self.counts).load(Ordering::SeqCst)
    }
}

impl Drop for UdpProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Relays the server's datagrams for client `to` (through `listen`) until `stop`.
fn back(
    up: Arc<UdpSocket>,
    listen: Arc<UdpSocket>,
    to: SocketAddr,
    mut lane: Lane,
    s: Schedule,
    c: Arc<UdpCounts>,
    stop: Arc<AtomicBool>,
) {
    thread::spawn(move || {
        let mut buf = vec![0u8; 65_536];
        let send = |d: &[u8]| {
            let _ = listen.send_to(d, to);
        };
        while !stop.load(Ordering::SeqCst) {
            match up.recv(&mut buf) {
                Ok(n) => {
                    c.from_server.fetch_add(1, Ordering::SeqCst);
                    lane.pass(&buf[..n], &s, &c, &send);
                }
                Err(_) => lane.flush(&send),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_drops_duplicates_and_holds_as_its_phase_says() {
        let s = Schedule {
            drop_every: 5,
            dup_every: 3,
            hold_every: 7,
            seed: 1,
        };
        let c = UdpCounts::default();
        let out = std::cell::RefCell::new(Vec::new());
        let mut lane = Lane::new(0);
        for k in 0..15u8 {
            lane.pass(&[k], &s, &c, &|d| out.borrow_mut().push(d[0]));
        }
        // 0, 5, 10 dropped; 3, 6, 9, 12 doubled; 7 and 14 held (14 still held).
        assert_eq!(
            *out.borrow(),
            [1, 2, 3, 3, 4, 6, 6, 8, 7, 9, 9, 11, 12, 12, 13]
        );
        assert_eq!(c.dropped.load(Ordering::SeqCst), 3);
        assert_eq!(c.duplicated.load(Ordering::SeqCst), 4);
        assert_eq!(c.reordered.load(Ordering::SeqCst), 2);
        lane.flush(&|d| out.borrow_mut().push(d[0]));
        assert_eq!(out.borrow().last(), Some(&14));
        assert_ne!(phase(1, 0), phase(1, 1));
        assert_eq!(phase(7, 3), phase(7, 3));
    }
}
