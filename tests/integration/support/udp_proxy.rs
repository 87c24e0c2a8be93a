//! A lossy UDP proxy on 127.0.0.1:0 for HTTP/3 under faults (`faults_cells.rs`): it
//! relays datagrams between each client (one upstream socket per client address)
//! and the server, and drops, duplicates and reorders them on a fixed schedule whose
//! phase comes from a seed, so a run sees the same kind of trouble every time and
//! every action is counted.
//!
//! In each direction of each client, datagram k (counting from 0) is dropped when
//! (k + phase) % `drop_every` == 0, sent twice when (k + phase) % `dup_every` == 0,
//! and held back until the next datagram has gone (or `HOLD` passed) when (k + phase)
//! % `hold_every` == 0 — a reordering. The phase is drawn from the seed per client
//! and direction (splitmix64), so which datagrams are hit differs between them, but
//! not between runs. Threads and blocking sockets with short read timeouts; stopped
//! when dropped.
//!
//! Of the handshake's datagrams (QUIC long header: Initial, Handshake) only the
//! client's first may be dropped: the client sends its Initial again after QUIC's
//! first probe timeout (1 s, from the 333 ms initial RTT), the server answers that
//! one, and both sides' RTT samples stay those of loopback. Any other handshake loss
//! gives one side an RTT sample as long as the other side's probe timeout (up to
//! 1 s), so its own probe timeout, about three such RTTs and doubling on each probe
//! lost, makes a later loss on that connection cost seconds; whether that outlasts
//! the test's `--timeout` then depends on which datagrams the schedule hits, which
//! moves with the machine's speed.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

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

/// How long a datagram is held back at most (other clients' traffic included).
const HOLD: Duration = Duration::from_millis(20);

/// How long a read waits before the loop looks at `stop` and held datagrams.
const TICK: Duration = Duration::from_millis(5);

/// splitmix64: the phase of stream `n` of `seed`.
fn phase(seed: u64, n: u64) -> u64 {
    let mut z = seed.wrapping_add(n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether datagram `d` starts with a QUIC long-header packet (handshake).
fn long_header(d: &[u8]) -> bool {
    d.first().is_some_and(|b| b & 0x80 != 0)
}

/// One direction of one client: its datagram count, phase, whether it is the
/// client's, and its held datagram with when it was held.
struct Lane {
    k: u64,
    phase: u64,
    client: bool,
    held: Option<(Vec<u8>, Instant)>,
}

impl Lane {
    /// The client's direction.
    fn client(phase: u64) -> Lane {
        Lane {
            k: 0,
            phase,
            client: true,
            held: None,
        }
    }

    /// The server's direction.
    fn server(phase: u64) -> Lane {
        Lane {
            client: false,
            ..Lane::client(phase)
        }
    }

    /// Whether the lane's `k`-th datagram `d` may be dropped: a 1-RTT one (short
    /// header), or the client's first Initial.
    fn droppable(&self, k: u64, d: &[u8]) -> bool {
        !long_header(d) || (self.client && k == 0)
    }

    /// Passes datagram `d`, received at `now`, on through `send` as the schedule says.
    fn pass(&mut self, d: &[u8], now: Instant, s: &Schedule, c: &UdpCounts, send: &dyn Fn(&[u8])) {
        let k = self.k;
        let at = k.wrapping_add(self.phase);
        self.k += 1;
        let hit = |every: u64| every > 0 && at.is_multiple_of(every);
        if hit(s.drop_every) && self.droppable(k, d) {
            c.dropped.fetch_add(1, Ordering::SeqCst);
            return;
        }
        if hit(s.hold_every) && self.held.is_none() {
            c.reordered.fetch_add(1, Ordering::SeqCst);
            self.held = Some((d.to_vec(), now));
            return;
        }
        send(d);
        if hit(s.dup_every) {
            c.duplicated.fetch_add(1, Ordering::SeqCst);
            send(d);
        }
        if let Some((h, _)) = self.held.take() {
            send(&h);
        }
    }

    /// Sends the held datagram if it was held `HOLD` or longer by `now`.
    fn release_due(&mut self, now: Instant, send: &dyn Fn(&[u8])) {
        if self
            .held
            .as_ref()
            .is_some_and(|(_, at)| now.saturating_duration_since(*at) >= HOLD)
        {
            if let Some((h, _)) = self.held.take() {
                send(&h);
            }
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
                let now = Instant::now();
                let mut map = clients.lock().expect("lock");
                // Every client's held datagram, not only this one's: other clients'
                // traffic never keeps it longer than `HOLD`.
                for (up, lane) in map.values_mut() {
                    lane.release_due(now, &|d| {
                        let _ = up.send(d);
                    });
                }
                let Ok((n, from)) = got else {
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
                        Lane::server(phase(schedule.seed, 2 * index + 1)),
                        schedule,
                        Arc::clone(&c),
                        Arc::clone(&st),
                    );
                    (up, Lane::client(phase(schedule.seed, 2 * index)))
                });
                let up = Arc::clone(up);
                lane.pass(&buf[..n], now, &schedule, &c, &|d| {
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
            let got = up.recv(&mut buf);
            let now = Instant::now();
            lane.release_due(now, &send);
            if let Ok(n) = got {
                c.from_server.fetch_add(1, Ordering::SeqCst);
                lane.pass(&buf[..n], now, &s, &c, &send);
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
        let t0 = Instant::now();
        let mut lane = Lane::client(0);
        for k in 0..15u8 {
            lane.pass(&[k], t0, &s, &c, &|d| out.borrow_mut().push(d[0]));
        }
        // 0, 5, 10 dropped; 3, 6, 9, 12 doubled; 7 and 14 held (14 still held).
        assert_eq!(
            *out.borrow(),
            [1, 2, 3, 3, 4, 6, 6, 8, 7, 9, 9, 11, 12, 12, 13]
        );
        assert_eq!(c.dropped.load(Ordering::SeqCst), 3);
        assert_eq!(c.duplicated.load(Ordering::SeqCst), 4);
        assert_eq!(c.reordered.load(Ordering::SeqCst), 2);
        // A held datagram goes once it was held `HOLD`, not before.
        lane.release_due(t0 + HOLD / 2, &|d| out.borrow_mut().push(d[0]));
        assert_eq!(out.borrow().last(), Some(&13));
        lane.release_due(t0 + HOLD, &|d| out.borrow_mut().push(d[0]));
        assert_eq!(out.borrow().last(), Some(&14));
        assert_ne!(phase(1, 0), phase(1, 1));
        assert_eq!(phase(7, 3), phase(7, 3));
    }

    #[test]
    fn of_the_handshake_only_the_clients_first_datagram_is_dropped() {
        let s = Schedule {
            drop_every: 2,
            dup_every: 0,
            hold_every: 0,
            seed: 1,
        };
        let c = UdpCounts::default();
        let out = std::cell::RefCell::new(Vec::new());
        let t0 = Instant::now();
        // Long headers (0xc0: Initial) in drop slots 0 and 2, short headers (0x40:
        // 1-RTT) in drop slots 4 and 6.
        let got = [[0xc0], [0xc1], [0xc2], [0xc3], [0x40], [0x41], [0x42]];
        let mut server = Lane::server(0);
        for d in &got {
            server.pass(d, t0, &s, &c, &|d| out.borrow_mut().push(d[0]));
        }
        assert_eq!(*out.borrow(), [0xc0, 0xc1, 0xc2, 0xc3, 0x41]);
        out.borrow_mut().clear();
        let mut client = Lane::client(0);
        for d in &got {
            client.pass(d, t0, &s, &c, &|d| out.borrow_mut().push(d[0]));
        }
        assert_eq!(*out.borrow(), [0xc1, 0xc2, 0xc3, 0x41]);
        assert_eq!(c.dropped.load(Ordering::SeqCst), 5);
    }
}
