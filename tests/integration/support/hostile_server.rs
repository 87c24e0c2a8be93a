//! A scripted, misbehaving HTTP server on 127.0.0.1:0 for the reliability tests.
//!
//! Every accepted connection gets its own thread that runs the same `Script`: a list of
//! `Step`s (read a request, send bytes, drip them slowly, stream megabytes, reset, close,
//! hold the connection open, …). Replies are whatever bytes the test scripts, so the
//! server can break HTTP in any way. Counters tell the test what happened on the wire;
//! every step is bounded (streams stop at a byte cap, holds at a time cap), so a test
//! never depends on the client to end the server's threads.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Longest any step waits for the client (reading a request, holding the connection).
const MAX_WAIT: Duration = Duration::from_secs(30);

/// One action of a connection script.
#[derive(Clone, Debug)]
pub enum Step {
    /// Read one complete request (head up to the blank line plus a Content-Length
    /// body); the script ends if the client closes or sends nothing within 30 s.
    Request,
    /// Write these bytes at once.
    Send(Vec<u8>),
    /// Write these bytes `chunk` bytes at a time (TCP_NODELAY), sleeping `every`
    /// between writes.
    Drip {
        /// The bytes.
        bytes: Vec<u8>,
        /// Bytes per write.
        chunk: usize,
        /// Pause between writes.
        every: Duration,
    },
    /// Write `prefix`, then `unit` over and over until `cap` bytes have been written in
    /// all or a write fails (the client gave up).
    Stream {
        /// Written once first.
        prefix: Vec<u8>,
        /// Repeated.
        unit: Vec<u8>,
        /// Upper bound of bytes written by this step.
        cap: u64,
    },
    /// Read this many bytes (beyond what earlier steps consumed); the script ends if
    /// the client closes or they do not come within 30 s. (For binary protocols:
    /// HTTP/2 frames have no blank line to wait for.)
    Read(usize),
    /// Sleep.
    Sleep(Duration),
    /// Abort the connection: SO_LINGER 0, then close, so the client gets an RST.
    Reset,
    /// Close normally (FIN) and end the script.
    Close,
    /// Keep the connection open, reading and discarding, until the client closes it
    /// (or 30 s pass); ends the script.
    Hold,
    /// Run these steps over and over until one of them ends the script.
    Repeat(Vec<Step>),
}

/// A connection script.
pub type Script = Vec<Step>;

/// What the server saw.
#[derive(Default, Debug)]
pub struct Counts {
    /// Accepted connections.
    pub connections: AtomicU64,
    /// Complete requests read.
    pub requests: AtomicU64,
    /// Bytes written to clients.
    pub written: AtomicU64,
    /// Writes that failed (the client closed or reset).
    pub write_errors: AtomicU64,
    /// Connection threads that finished their script.
    pub finished: AtomicU64,
}

/// A running hostile server.
pub struct HostileServer {
    /// Its address.
    pub addr: SocketAddr,
    /// What it counted.
    pub counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
}

impl HostileServer {
    /// Starts a server that runs `script` on every connection.
    pub fn start(script: Script) -> HostileServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind hostile server");
        let addr = listener.local_addr().expect("local addr");
        let counts = Arc::new(Counts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (counts.clone(), stop.clone());
        let script = Arc::new(script);
        thread::spawn(move || {
            for stream in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                c.connections.fetch_add(1, Ordering::SeqCst);
                let (c, script) = (c.clone(), script.clone());
                thread::spawn(move || {
                    let mut conn = Conn {
                        stream,
                        pending: Vec::new(),
                        counts: &c,
                    };
                    let _ = conn.run(&script);
                    c.finished.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        HostileServer { addr, counts, stop }
    }

    /// Starts a server that answers every request on a connection with `reply`.
    pub fn replying(reply: &[u8]) -> HostileServer {
        HostileServer::start(vec![Step::Repeat(vec![
            Step::Request,
            Step::Send(reply.to_vec()),
        ])])
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

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.counts.written.load(Ordering::SeqCst)
    }
}

impl Drop for HostileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// Why a script stopped early.
struct End;

struct Conn<'a> {
    stream: TcpStream,
    pending: Vec<u8>,
    counts: &'a Counts,
}

impl Conn<'_> {
    fn run(&mut self, steps: &[Step]) -> Result<(), End> {
        for step in steps {
            self.step(step)?;
        }
        Ok(())
    }

    fn step(&mut self, step: &Step) -> Result<(), End> {
        match step {
            Step::Request => self.read_request(),
            Step::Send(bytes) => self.write(bytes),
            Step::Drip {
                bytes,
                chunk,
                every,
            } => {
                let _ = self.stream.set_nodelay(true);
                for (i, piece) in bytes.chunks((*chunk).max(1)).enumerate() {
                    if i > 0 {
                        thread::sleep(*every);
                    }
                    self.write(piece)?;
                }
                Ok(())
            }
            Step::Stream { prefix, unit, cap } => {
                self.write(prefix)?;
                // Write the unit in blocks of about 64 KiB.
                let reps = (65536 / unit.len().max(1)).max(1);
                let block: Vec<u8> = unit.repeat(reps);
                let mut sent = prefix.len() as u64;
                while sent < *cap {
                    let n = block.len().min((*cap - sent) as usize);
                    self.write(&block[..n])?;
                    sent += n as u64;
                }
                Ok(())
            }
            Step::Read(n) => self.read_bytes(*n),
            Step::Sleep(d) => {
                thread::sleep(*d);
                Ok(())
            }
            Step::Reset => {
                // The stream is dropped when the script ends: with SO_LINGER 0 that
                // close sends an RST.
                let _ = socket2::SockRef::from(&self.stream).set_linger(Some(Duration::ZERO));
                Err(End)
            }
            Step::Close => {
                let _ = self.stream.shutdown(Shutdown::Write);
                // Drain what the client still sends so the close is a FIN, not an RST.
                self.drain(Duration::from_secs(5));
                Err(End)
            }
            Step::Hold => {
                self.drain(MAX_WAIT);
                Err(End)
            }
            Step::Repeat(steps) => loop {
                self.run(steps)?;
            },
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), End> {
        match self.stream.write_all(bytes) {
            Ok(()) => {
                self.counts
                    .written
                    .fetch_add(bytes.len() as u64, Ordering::SeqCst);
                Ok(())
            }
            Err(_) => {
                self.counts.write_errors.fetch_add(1, Ordering::SeqCst);
                Err(End)
            }
        }
    }

    /// Reads and discards until EOF, an error or `limit`.
    fn drain(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        let mut buf = [0u8; 4096];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            let _ = self.stream.set_read_timeout(Some(left));
            match self.stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    }

    fn read_request(&mut self) -> Result<(), End> {
        let deadline = Instant::now() + MAX_WAIT;
        loop {
            if let Some(end) = find(&self.pending, b"\r\n\r\n") {
                let head_len = end + 4;
                let head = String::from_utf8_lossy(&self.pending[..head_len]).to_ascii_lowercase();
                let body_len = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if self.pending.len() >= head_len + body_len {
                    self.pending.drain(..head_len + body_len);
                    self.counts.requests.fetch_add(1, Ordering::SeqCst);
                    return Ok(());
                }
            }
            self.fill(deadline)?;
        }
    }
}

impl Conn<'_> {
    fn read_bytes(&mut self, n: usize) -> Result<(), End> {
        let deadline = Instant::now() + MAX_WAIT;
        while self.pending.len() < n {
            self.fill(deadline)?;
        }
        self.pending.drain(..n);
        Ok(())
    }

    /// Reads what the client sent next into `pending`, waiting until `deadline`.
    fn fill(&mut self, deadline: Instant) -> Result<(), End> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(End);
        }
        let _ = self.stream.set_read_timeout(Some(left));
        let mut buf = [0u8; 4096];
        match self.stream.read(&mut buf) {
            Ok(0) | Err(_) => Err(End),
            Ok(k) => {
                self.pending.extend_from_slice(&buf[..k]);
                Ok(())
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
