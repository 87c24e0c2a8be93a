//! An HTTP/1.0-aware test server for the ab and lb tests, on 127.0.0.1:0.
//!
//! One thread per connection; every request gets a reply chosen by its global number
//! (`Script`): status, body length, keep-alive (for HTTP/1.0 only when the request asked
//! with `Connection: Keep-Alive`; for HTTP/1.1 unless it said `close`), a close every N
//! requests,
//! garbage, a reset, or no reply at all. Counters say what was seen on the wire:
//! connections, requests, request bytes (head and body), and the most connections
//! open at once.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// How the server answers request k (0-based, over all connections).
#[derive(Clone, Copy)]
pub struct Script {
    /// Status code.
    pub status: u16,
    /// Body length of request k.
    pub body: fn(u64) -> usize,
    /// Close the connection after every this many requests on it (0: never).
    pub close_every: u64,
    /// What to do instead of a normal reply to request k (None: reply).
    pub misbehave: fn(u64) -> Option<Misbehave>,
    /// Wait this long before each reply.
    pub delay: Duration,
}

/// A failure the server can produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misbehave {
    /// Send bytes that are not HTTP, then close.
    Garbage,
    /// Reset the connection (SO_LINGER 0) without replying.
    Reset,
    /// Never reply (hold the connection until the client closes it, at most 30 s).
    Hang,
}

fn six(_: u64) -> usize {
    6
}

fn never(_: u64) -> Option<Misbehave> {
    None
}

impl Default for Script {
    fn default() -> Self {
        Script {
            status: 200,
            body: six,
            close_every: 0,
            misbehave: never,
            delay: Duration::ZERO,
        }
    }
}

/// The `Server:` header of every reply (ab reports the part before the blank).
pub const SERVER: &str = "rshperf-test/1.0 (tests)";

/// What the server saw.
#[derive(Default, Debug)]
pub struct Counts {
    /// Accepted connections.
    pub connections: AtomicU64,
    /// Complete requests read.
    pub requests: AtomicU64,
    /// Bytes of those requests (head and body).
    pub request_bytes: AtomicU64,
    /// Connections open now (as the server sees them: a connection the client has
    /// closed counts until its thread notices).
    pub open: AtomicU64,
    /// The most connections open at once.
    pub max_open: AtomicU64,
    /// Replies sent with `Connection: close`.
    pub closes: AtomicU64,
    /// Requests read and not yet answered, and the most at once: the client's
    /// concurrency, exactly (it is decremented before the reply is written, so a
    /// client that sends only after a reply can never be seen above its limit).
    pub in_flight: AtomicU64,
    /// The most requests in flight at once.
    pub max_in_flight: AtomicU64,
    /// The first request's bytes.
    pub first: Mutex<Vec<u8>>,
}

/// A running server.
pub struct AbServer {
    /// Its address.
    pub addr: SocketAddr,
    /// What it counted.
    pub counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
}

impl AbServer {
    /// Starts a server answering by `script`.
    pub fn start(script: Script) -> AbServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind ab test server");
        let addr = listener.local_addr().expect("local addr");
        let counts = Arc::new(Counts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let c = counts.clone();
        super::accept_loop(
            move || listener.accept().map(|(s, _)| s),
            stop.clone(),
            move |stream| {
                c.connections.fetch_add(1, Ordering::SeqCst);
                let open = c.open.fetch_add(1, Ordering::SeqCst) + 1;
                c.max_open.fetch_max(open, Ordering::SeqCst);
                let c = c.clone();
                thread::spawn(move || {
                    serve(stream, script, &c);
                    c.open.fetch_sub(1, Ordering::SeqCst);
                });
            },
        );
        AbServer { addr, counts, stop }
    }

    /// `http://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.addr.port())
    }

    /// A counter's value.
    pub fn get(&self, counter: fn(&Counts) -> &AtomicU64) -> u64 {
        counter(&self.counts).load(Ordering::SeqCst)
    }
}

impl Drop for AbServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// The header block of a reply with `body` bytes.
pub fn reply_head(status: u16, body: usize, keep_alive: bool) -> String {
    format!(
        "HTTP/1.1 {status} X\r\nServer: {SERVER}\r\nContent-Length: {body}\r\nConnection: {}\r\n\r\n",
        if keep_alive { "keep-alive" } else { "close" }
    )
}

/// Reads one request (head and Content-Length body); None at EOF.
fn read_request(stream: &mut TcpStream, pending: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&pending[..end]).to_ascii_lowercase();
            let body = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if pending.len() >= end + 4 + body {
                return Some(pending.drain(..end + 4 + body).collect());
            }
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}

fn serve(mut stream: TcpStream, script: Script, counts: &Counts) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut pending = Vec::new();
    let mut on_conn = 0;
    while let Some(req) = read_request(&mut stream, &mut pending) {
        let k = counts.requests.fetch_add(1, Ordering::SeqCst);
        let now = counts.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        counts.max_in_flight.fetch_max(now, Ordering::SeqCst);
        counts
            .request_bytes
            .fetch_add(req.len() as u64, Ordering::SeqCst);
        if k == 0 {
            *counts.first.lock().expect("lock") = req.clone();
        }
        on_conn += 1;
        let misbehave = (script.misbehave)(k);
        if misbehave.is_some() {
            counts.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
        match misbehave {
            Some(Misbehave::Garbage) => {
                let _ = stream.write_all(b"this is not HTTP\r\n\r\n");
                return;
            }
            Some(Misbehave::Reset) => {
                let _ = socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
                return;
            }
            Some(Misbehave::Hang) => {
                let mut sink = [0u8; 1024];
                while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
                return;
            }
            None => {}
        }
        // HTTP/1.0 keeps the connection only when asked to; HTTP/1.1 unless told not to.
        let text = String::from_utf8_lossy(&req).to_ascii_lowercase();
        let head = &text[..text.find("\r\n\r\n").unwrap_or(text.len())];
        let asked = if head.lines().next().is_some_and(|l| l.ends_with("http/1.1")) {
            !head.contains("\r\nconnection: close")
        } else {
            head.contains("\r\nconnection: keep-alive")
        };
        let keep = asked && (script.close_every == 0 || on_conn % script.close_every != 0);
        if !keep {
            counts.closes.fetch_add(1, Ordering::SeqCst);
        }
        thread::sleep(script.delay);
        counts.in_flight.fetch_sub(1, Ordering::SeqCst);
        let body = (script.body)(k);
        let mut reply = reply_head(script.status, body, keep).into_bytes();
        reply.extend(std::iter::repeat_n(b'x', body));
        if stream.write_all(&reply).is_err() || !keep {
            return;
        }
    }
}
