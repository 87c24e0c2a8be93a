//! A test server with a known service capacity: it answers at most N requests per
//! second, on an absolute schedule.
//!
//! One thread accepts connections in order and serves each one no earlier than its
//! service slot (slot k of the run at start + k/N, or at once when the server is idle):
//! below N arrivals per second replies come at once; above, connections queue in the
//! (large) accept backlog and replies come at exactly N per second, so the achieved
//! rate of a run at r > N is N and its share of the demanded rate is N/r. Absolute slots
//! keep the capacity exact on a loaded machine (a late wake-up delays one reply, not
//! the rest). Each reply closes its connection (`Connection: close`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// A running capacity-limited server.
pub struct CapacityServer {
    addr: SocketAddr,
    served: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl CapacityServer {
    /// Starts a server answering at most `per_second` requests per second.
    pub fn start(per_second: f64) -> CapacityServer {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
            .expect("socket");
        let any: SocketAddr = "127.0.0.1:0".parse().expect("address");
        socket.bind(&any.into()).expect("bind");
        // Queued connections wait in the backlog, never refused.
        socket.listen(4096).expect("listen");
        let listener: TcpListener = socket.into();
        let addr = listener.local_addr().expect("local addr");
        let served = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, halt) = (served.clone(), stop.clone());
        let interval = Duration::from_secs_f64(1.0 / per_second);
        thread::spawn(move || {
            let mut next = Instant::now();
            for stream in listener.incoming() {
                if halt.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut stream) = stream else { continue };
                if !read_head(&mut stream) {
                    continue;
                }
                let now = Instant::now();
                // An idle server starts a new schedule; a busy one keeps its slots.
                let slot = next.max(now);
                if slot > now {
                    thread::sleep(slot - now);
                }
                next = slot + interval;
                let reply =
                    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
                if stream.write_all(reply).is_ok() {
                    count.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        CapacityServer { addr, served, stop }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Replies written so far.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::SeqCst)
    }
}

impl Drop for CapacityServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// Reads a request head (up to the blank line); false at EOF, error or timeout.
fn read_head(stream: &mut TcpStream) -> bool {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = [0u8; 2048];
    let mut seen = Vec::new();
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
        if seen.windows(4).any(|w| w == b"\r\n\r\n") {
            return true;
        }
    }
}
