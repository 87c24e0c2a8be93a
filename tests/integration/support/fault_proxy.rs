//! A fault-injecting TCP proxy on 127.0.0.1:0, and an upstream HTTP/1.1 server that
//! counts what reached it, for the fault-injection suite (`faults.rs`).
//!
//! The proxy relays bytes both ways (threads, blocking sockets) and applies a `Fault`
//! to every `every`-th connection (the 1st, the `every+1`-th, …): latency, a bandwidth
//! limit, a reset (RST via SO_LINGER 0) or a clean close once the client sent a given
//! number of bytes, a stall (the request is relayed, the reply never), 1-byte slices,
//! a client that is never read, a connection dropped (RST) as soon as it is accepted,
//! garbage instead of the reply, or every piece of the reply sent twice. It counts the
//! connections it accepted and the faults it applied, so a test can compare them with
//! rshperf's report. The server
//! parses heads and Content-Length bodies, answers 200 (after the body, or at once
//! with `early` and then discards the body), and can be stopped and started again on
//! the same port (a server that dies and comes back).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use socket2::SockRef;

/// What the proxy does to a faulted connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Relays every piece this much later, both ways.
    Latency(Duration),
    /// Relays at most this many bytes per second, both ways.
    Bandwidth(u64),
    /// Resets the client connection (RST) once it sent this many bytes.
    ResetAt(usize),
    /// Closes the client connection cleanly (FIN) once it sent this many bytes.
    CloseAt(usize),
    /// Relays the request; stops relaying the reply once the client sent more than
    /// this many bytes (0 for HTTP/1; HTTP/2: its preface and SETTINGS, so the
    /// server's SETTINGS still pass and the stall hits a request).
    StallAfter(usize),
    /// Relays one byte per write, both ways.
    Slices,
    /// Never reads from the client (nor connects upstream).
    NeverRead,
    /// Resets the connection (RST) as soon as it is accepted, reading nothing.
    DropAtAccept,
    /// Sends garbage instead of the server's first bytes, then nothing more.
    Garbage,
    /// Sends every piece of the server's bytes twice, in one write.
    Duplicate,
}

/// What `Fault::Garbage` sends: no status line, no HTTP/2 frame (its length field,
/// 0x676172 = 6.7 MB, is over any frame size a client allows).
pub const GARBAGE: &[u8] = b"garbage\r\n\r\n";

/// How long a connection held by `NeverRead` or a cut stays open at most (the
/// client times out long before).
const HOLD: Duration = Duration::from_secs(10);

/// The proxy's counters.
#[derive(Default, Debug)]
pub struct ProxyCounts {
    /// Client connections accepted.
    pub connections: AtomicU64,
    /// Connections the fault was applied to.
    pub faulted: AtomicU64,
    /// Resets and closes actually done (`ResetAt`, `CloseAt`, `DropAtAccept`).
    pub cut: AtomicU64,
}

/// A running proxy.
pub struct FaultProxy {
    addr: SocketAddr,
    /// What it counted.
    pub counts: Arc<ProxyCounts>,
    stop: Arc<AtomicBool>,
}

impl FaultProxy {
    /// Relays to `upstream`, applying `fault` to every `every`-th connection.
    pub fn start(upstream: SocketAddr, fault: Fault, every: u64) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        // Small receive buffers (inherited by accepted sockets): the client cannot be
        // far ahead of what the proxy has read when it cuts a connection.
        let _ = SockRef::from(&listener).set_recv_buffer_size(16 * 1024);
        let addr = listener.local_addr().expect("proxy addr");
        let counts = Arc::new(ProxyCounts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (counts.clone(), stop.clone());
        super::accept_loop(
            move || listener.accept().map(|(s, _)| s),
            stop.clone(),
            move |client: TcpStream| {
                let n = c.connections.fetch_add(1, Ordering::SeqCst);
                let fault = n.is_multiple_of(every.max(1)).then_some(fault);
                if fault.is_some() {
                    c.faulted.fetch_add(1, Ordering::SeqCst);
                }
                let (c, s) = (c.clone(), s.clone());
                thread::spawn(move || relay(client, upstream, fault, &c, &s));
            },
        );
        FaultProxy { addr, counts, stop }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Faulted connections so far.
    pub fn faulted(&self) -> u64 {
        self.counts.faulted.load(Ordering::SeqCst)
    }

    /// Connections cut (reset or closed) so far.
    pub fn cut(&self) -> u64 {
        self.counts.cut.load(Ordering::SeqCst)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// Holds `stream` open until the peer goes, `stop` is set, or `HOLD` passes,
/// reading (and discarding) only if `read`.
fn hold(stream: &TcpStream, read: bool, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let start = Instant::now();
    let mut buf = [0u8; 16 * 1024];
    while !stop.load(Ordering::SeqCst) && start.elapsed() < HOLD {
        if read {
            match (&*stream).read(&mut buf) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => return,
            }
        } else {
            // Not reading: wait for the peer's FIN or RST by peeking.
            let mut one = [0u8; 1];
            match stream.peek(&mut one) {
                Ok(0) => return,
                Ok(_) => thread::sleep(Duration::from_millis(50)),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => return,
            }
        }
    }
}

/// Writes `bytes` to `to` as `fault` says (latency, bandwidth, slices, twice).
fn forward(mut to: impl Write, bytes: &[u8], fault: Option<Fault>) -> std::io::Result<()> {
    match fault {
        Some(Fault::Latency(d)) => {
            thread::sleep(d);
            to.write_all(bytes)
        }
        Some(Fault::Bandwidth(per_s)) => {
            // Slices of 1/100 s worth of bytes, each 10 ms apart.
            let slice = usize::try_from(per_s / 100).unwrap_or(1).max(1);
            for piece in bytes.chunks(slice) {
                to.write_all(piece)?;
                thread::sleep(Duration::from_millis(10));
            }
            Ok(())
        }
        Some(Fault::Slices) => {
            for b in bytes {
                to.write_all(std::slice::from_ref(b))?;
            }
            Ok(())
        }
        Some(Fault::Duplicate) => to.write_all(&[bytes, bytes].concat()),
        _ => to.write_all(bytes),
    }
}

/// Whether `StallAfter` holds back the reply now.
fn stalled(fault: Option<Fault>, client_sent: &AtomicU64) -> bool {
    match fault {
        Some(Fault::StallAfter(n)) => client_sent.load(Ordering::SeqCst) > n as u64,
        _ => false,
    }
}

/// Relays one client connection.
fn relay(
    client: TcpStream,
    upstream: SocketAddr,
    fault: Option<Fault>,
    counts: &ProxyCounts,
    stop: &AtomicBool,
) {
    if fault == Some(Fault::NeverRead) {
        hold(&client, false, stop);
        return;
    }
    if fault == Some(Fault::DropAtAccept) {
        let _ = SockRef::from(&client).set_linger(Some(Duration::ZERO));
        counts.cut.fetch_add(1, Ordering::SeqCst);
        return;
    }
    let Ok(server) = TcpStream::connect(upstream) else {
        let _ = SockRef::from(&client).set_linger(Some(Duration::ZERO));
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    // Server → client.
    let (Ok(mut from), Ok(mut to)) = (server.try_clone(), client.try_clone()) else {
        return;
    };
    // Set before a reset: the relay back must not send a FIN first.
    let cutting = Arc::new(AtomicBool::new(false));
    let cut = cutting.clone();
    // Bytes the client sent so far (for `StallAfter`).
    let sent = Arc::new(AtomicU64::new(0));
    let client_sent = sent.clone();
    let back = thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        let mut spoilt = false;
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) if stalled(fault, &client_sent) || spoilt => {}
                Ok(_) if fault == Some(Fault::Garbage) => {
                    spoilt = true;
                    if to.write_all(GARBAGE).is_err() {
                        break;
                    }
                }
                Ok(n) => {
                    if forward(&mut to, &buf[..n], fault).is_err() {
                        break;
                    }
                }
            }
        }
        if !cut.load(Ordering::SeqCst) {
            let _ = to.shutdown(Shutdown::Write);
        }
    });
    // Client → server.
    let (mut from, to) = (&client, &server);
    let mut buf = [0u8; 16 * 1024];
    let mut total = 0usize;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let cut_at = match fault {
            Some(Fault::ResetAt(at)) | Some(Fault::CloseAt(at)) => Some(at),
            _ => None,
        };
        if let Some(at) = cut_at {
            if total + n >= at {
                let k = at - total;
                let _ = (&server).write_all(&buf[..k]);
                counts.cut.fetch_add(1, Ordering::SeqCst);
                cutting.store(true, Ordering::SeqCst);
                if matches!(fault, Some(Fault::ResetAt(_))) {
                    // The last descriptor of the client socket closes (below) with
                    // SO_LINGER 0: an RST, no FIN.
                    let _ = SockRef::from(&client).set_linger(Some(Duration::ZERO));
                    let _ = server.shutdown(Shutdown::Both);
                    let _ = back.join();
                } else {
                    // A clean FIN; what the client still sends is read and dropped.
                    let _ = server.shutdown(Shutdown::Both);
                    let _ = back.join();
                    let _ = client.shutdown(Shutdown::Write);
                    hold(&client, true, stop);
                }
                return;
            }
        }
        total += n;
        sent.fetch_add(n as u64, Ordering::SeqCst);
        // The request goes up once: only the replies are doubled.
        let up_fault = fault.filter(|f| *f != Fault::Duplicate);
        if forward(to, &buf[..n], up_fault).is_err() {
            break;
        }
    }
    let _ = server.shutdown(Shutdown::Write);
    let _ = back.join();
}

/// The upstream server's counters.
#[derive(Default, Debug)]
pub struct UpCounts {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Request heads read.
    pub heads: AtomicU64,
    /// Requests read whole (head and body).
    pub requests: AtomicU64,
    /// Replies written whole.
    pub replies: AtomicU64,
}

/// One incarnation of an `UpServer`: its stop flag and its open connections.
type Life = (Arc<AtomicBool>, Arc<Mutex<Vec<TcpStream>>>);

/// A counting HTTP/1.1 server (keep-alive, pipelining, Content-Length bodies) that
/// can be stopped and started again on its port.
pub struct UpServer {
    addr: SocketAddr,
    /// What it counted (kept across restarts).
    pub counts: Arc<UpCounts>,
    early: bool,
    /// The current incarnation's stop flag and its open connections.
    life: Mutex<Option<Life>>,
    /// A server that is down from the start: its port, bound but not listening (every
    /// connect is refused by the kernel) until `restart` listens on it.
    reserved: Mutex<Option<socket2::Socket>>,
}

/// Content bytes of every reply.
const REPLY_BODY: usize = 10;

impl UpServer {
    /// Starts on 127.0.0.1:0; with `early`, every reply goes out as soon as the head
    /// is read, before the body.
    pub fn start(early: bool) -> UpServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind upstream");
        let addr = listener.local_addr().expect("upstream addr");
        let s = UpServer {
            addr,
            counts: Arc::new(UpCounts::default()),
            early,
            life: Mutex::new(None),
            reserved: Mutex::new(None),
        };
        s.run(listener);
        s
    }

    /// A server that is down until `restart`: its port is bound, not listening, so
    /// every connect to it is refused, and none can reach it before `restart`.
    pub fn start_down() -> UpServer {
        use socket2::{Domain, Socket, Type};
        let sock = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
        let any: SocketAddr = "127.0.0.1:0".parse().expect("addr");
        sock.bind(&any.into()).expect("bind");
        let addr = sock
            .local_addr()
            .expect("local addr")
            .as_socket()
            .expect("an IP address");
        UpServer {
            addr,
            counts: Arc::new(UpCounts::default()),
            early: false,
            life: Mutex::new(None),
            reserved: Mutex::new(Some(sock)),
        }
    }

    fn run(&self, listener: TcpListener) {
        let stop = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let (c, o, early) = (self.counts.clone(), open.clone(), self.early);
        super::accept_loop(
            move || listener.accept().map(|(s, _)| s),
            stop.clone(),
            move |stream: TcpStream| {
                c.connections.fetch_add(1, Ordering::SeqCst);
                if let (Ok(mut o), Ok(k)) = (o.lock(), stream.try_clone()) {
                    o.push(k);
                }
                let c = c.clone();
                thread::spawn(move || serve(stream, early, &c));
            },
        );
        *self.life.lock().expect("lock") = Some((stop, open));
    }

    /// The address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops listening and resets every open connection (a crashed server).
    pub fn kill(&self) {
        if let Some((stop, open)) = self.life.lock().expect("lock").take() {
            stop.store(true, Ordering::SeqCst);
            let _ = TcpStream::connect(self.addr);
            for s in open.lock().expect("lock").drain(..) {
                let _ = SockRef::from(&s).set_linger(Some(Duration::ZERO));
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }

    /// Listens again on the same port.
    pub fn restart(&self) {
        if let Some(sock) = self.reserved.lock().expect("lock").take() {
            sock.listen(128).expect("listen");
            self.run(sock.into());
            return;
        }
        // The old accept thread may still hold the port for a moment: retry.
        let start = Instant::now();
        let listener = loop {
            match TcpListener::bind(self.addr) {
                Ok(l) => break l,
                Err(e) => {
                    assert!(start.elapsed() < HOLD, "rebind {}: {e}", self.addr);
                    thread::sleep(Duration::from_millis(10));
                }
            }
        };
        self.run(listener);
    }

    /// A counter's value.
    pub fn get(&self, which: fn(&UpCounts) -> &AtomicU64) -> u64 {
        which(&self.counts).load(Ordering::SeqCst)
    }
}

impl Drop for UpServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn serve(mut stream: TcpStream, early: bool, counts: &UpCounts) {
    let mut reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {REPLY_BODY}\r\n\r\n").into_bytes();
    reply.extend_from_slice(&[b'x'; REPLY_BODY]);
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        // The head.
        let head_len = loop {
            if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => pending.extend_from_slice(&buf[..n]),
            }
        };
        counts.heads.fetch_add(1, Ordering::SeqCst);
        let head = String::from_utf8_lossy(&pending[..head_len]).to_ascii_lowercase();
        let mut body = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        pending.drain(..head_len);
        if early {
            if stream.write_all(&reply).is_err() {
                return;
            }
            counts.replies.fetch_add(1, Ordering::SeqCst);
        }
        // The body, discarded.
        loop {
            let k = body.min(pending.len());
            pending.drain(..k);
            body -= k;
            if body == 0 {
                break;
            }
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => pending.extend_from_slice(&buf[..n]),
            }
        }
        counts.requests.fetch_add(1, Ordering::SeqCst);
        if !early {
            if stream.write_all(&reply).is_err() {
                return;
            }
            counts.replies.fetch_add(1, Ordering::SeqCst);
        }
    }
}
