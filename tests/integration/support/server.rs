//! In-process HTTP test servers on 127.0.0.1:0 that count what they see.
//!
//! Each server runs an accept thread and one thread per connection; it reads requests
//! (head up to the blank line, plus a Content-Length body) and answers according to its
//! `Behavior`. Counters let tests compare rshperf's report with what the server saw.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// How the server answers each request.
#[derive(Clone, Debug)]
pub enum Behavior {
    /// `200` with a Content-Length body of this many bytes, keep-alive.
    Fixed(usize),
    /// Status code with a body of this many bytes.
    Status(u16, usize),
    /// Chunked body of these chunks, then trailer lines (each without CRLF).
    Chunked(Vec<Vec<u8>>, Vec<String>),
    /// HTTP/1.0 reply without Content-Length, body then close.
    CloseDelimited(Vec<u8>),
    /// `Connection: close` after a fixed body of this size.
    ConnectionClose(usize),
    /// Wait this long before answering with a fixed body of this size.
    Slow(Duration, usize),
    /// Headers at once, then the body after a delay.
    SlowBody(Duration, usize),
    /// Reset the connection (SO_LINGER 0) after reading the request.
    Reset,
    /// Read requests and never answer.
    Hang,
    /// Answer the first requests (counted over every connection) with a fixed body
    /// of this size, then read the rest and never answer: the `n`th and later hang.
    StallFrom(u64, usize),
    /// `100 Continue`, then `200` with a body of this size.
    Continue(usize),
    /// These raw bytes, then close.
    Raw(Vec<u8>),
    /// Send `Content-Length: n` but only `sent` bytes, then close.
    ShortBody(usize, usize),
    /// These raw bytes as soon as a request's head is read, then close without
    /// reading its body (the unread body makes the kernel reset the connection).
    EarlyClose(Vec<u8>),
}

/// Shared counters of one server.
#[derive(Default, Debug)]
pub struct Counts {
    /// Accepted connections.
    pub connections: AtomicU64,
    /// Complete requests read.
    pub requests: AtomicU64,
    /// Bytes of those requests.
    pub request_bytes: AtomicU64,
    /// The first request's raw bytes.
    pub first_request: Mutex<Vec<u8>>,
    /// Request methods seen, in order.
    pub methods: Mutex<Vec<String>>,
    /// The distinct source addresses connections came from.
    pub peers: Mutex<std::collections::BTreeSet<std::net::IpAddr>>,
}

/// A running test server.
pub struct Server {
    /// Its address.
    pub addr: SocketAddr,
    /// What it counted.
    pub counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// Starts a server with `behavior` on 127.0.0.1:0.
    pub fn start(behavior: Behavior) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind test server");
        let addr = listener.local_addr().expect("local addr");
        let counts = Arc::new(Counts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let c = counts.clone();
        super::accept_loop(
            move || listener.accept().map(|(s, _)| s),
            stop.clone(),
            move |stream| {
                c.connections.fetch_add(1, Ordering::SeqCst);
                if let (Ok(peer), Ok(mut peers)) = (stream.peer_addr(), c.peers.lock()) {
                    peers.insert(peer.ip());
                }
                let (c, b) = (c.clone(), behavior.clone());
                thread::spawn(move || serve(stream, &b, &c));
            },
        );
        Server { addr, counts, stop }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Requests read so far.
    pub fn requests(&self) -> u64 {
        self.counts.requests.load(Ordering::SeqCst)
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.counts.connections.load(Ordering::SeqCst)
    }

    /// The distinct source addresses seen so far.
    pub fn peers(&self) -> Vec<std::net::IpAddr> {
        self.counts
            .peers
            .lock()
            .map(|p| p.iter().copied().collect())
            .unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// A port with nothing listening on it.
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let p = l.local_addr().expect("addr").port();
    drop(l);
    p
}

/// Reads one request; returns its bytes (None at EOF or error).
fn read_request(stream: &mut TcpStream, pending: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = find(pending, b"\r\n\r\n") {
            let head_len = end + 4;
            let head = String::from_utf8_lossy(&pending[..head_len]).to_ascii_lowercase();
            let body_len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if pending.len() >= head_len + body_len {
                let req: Vec<u8> = pending.drain(..head_len + body_len).collect();
                return Some(req);
            }
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn fixed(status: u16, n: usize, extra: &str) -> Vec<u8> {
    let mut r = format!("HTTP/1.1 {status} X\r\nContent-Length: {n}\r\n{extra}\r\n").into_bytes();
    r.extend(std::iter::repeat_n(b'a', n));
    r
}

fn serve(mut stream: TcpStream, behavior: &Behavior, counts: &Counts) {
    let mut pending = Vec::new();
    if let Behavior::EarlyClose(bytes) = behavior {
        let mut buf = [0u8; 4096];
        while find(&pending, b"\r\n\r\n").is_none() {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => pending.extend_from_slice(&buf[..n]),
            }
        }
        counts.requests.fetch_add(1, Ordering::SeqCst);
        let _ = stream.write_all(bytes);
        return;
    }
    while let Some(req) = read_request(&mut stream, &mut pending) {
        let nth = counts.requests.fetch_add(1, Ordering::SeqCst) + 1;
        counts
            .request_bytes
            .fetch_add(req.len() as u64, Ordering::SeqCst);
        {
            let mut first = counts.first_request.lock().expect("lock");
            if first.is_empty() {
                *first = req.clone();
            }
        }
        let method = String::from_utf8_lossy(&req)
            .split(' ')
            .next()
            .unwrap_or("")
            .to_string();
        counts.methods.lock().expect("lock").push(method.clone());
        let head = method == "HEAD";
        let ok = match behavior {
            Behavior::Fixed(n) => write_reply(&mut stream, &fixed(200, *n, ""), head, *n),
            Behavior::Status(s, n) => write_reply(&mut stream, &fixed(*s, *n, ""), head, *n),
            Behavior::Chunked(chunks, trailers) => {
                let mut r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                for c in chunks {
                    r.extend(format!("{:x}\r\n", c.len()).into_bytes());
                    r.extend_from_slice(c);
                    r.extend_from_slice(b"\r\n");
                }
                r.extend_from_slice(b"0\r\n");
                for t in trailers {
                    r.extend(format!("{t}\r\n").into_bytes());
                }
                r.extend_from_slice(b"\r\n");
                stream.write_all(&r).is_ok()
            }
            Behavior::CloseDelimited(body) => {
                let mut r = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n".to_vec();
                r.extend_from_slice(body);
                let _ = stream.write_all(&r);
                false
            }
            Behavior::ConnectionClose(n) => {
                let _ = stream.write_all(&fixed(200, *n, "Connection: close\r\n"));
                false
            }
            Behavior::Slow(d, n) => {
                thread::sleep(*d);
                write_reply(&mut stream, &fixed(200, *n, ""), head, *n)
            }
            Behavior::SlowBody(d, n) => {
                let r = fixed(200, *n, "");
                let split = r.len() - n;
                let _ = stream.write_all(&r[..split]);
                thread::sleep(*d);
                stream.write_all(&r[split..]).is_ok()
            }
            Behavior::Reset => {
                let s2 = socket2::SockRef::from(&stream);
                let _ = s2.set_linger(Some(Duration::ZERO));
                false
            }
            Behavior::Hang => true,
            Behavior::StallFrom(from, n) => {
                nth >= *from || write_reply(&mut stream, &fixed(200, *n, ""), head, *n)
            }
            Behavior::Continue(n) => {
                let mut r = b"HTTP/1.1 100 Continue\r\n\r\n".to_vec();
                r.extend(fixed(200, *n, ""));
                stream.write_all(&r).is_ok()
            }
            Behavior::Raw(bytes) => {
                let _ = stream.write_all(bytes);
                false
            }
            Behavior::ShortBody(n, sent) => {
                let r = fixed(200, *n, "");
                let _ = stream.write_all(&r[..r.len() - n + sent]);
                false
            }
            Behavior::EarlyClose(_) => false,
        };
        if !ok {
            return;
        }
    }
}

fn write_reply(stream: &mut TcpStream, reply: &[u8], head: bool, body: usize) -> bool {
    let bytes = if head {
        &reply[..reply.len() - body]
    } else {
        reply
    };
    stream.write_all(bytes).is_ok()
}
