//! A test server on 127.0.0.1:0 that records every request it reads (connection,
//! position on the connection, time, method, URI, headers, body) and answers according
//! to `Opts`: echo bodies, status codes, session cookies, `Connection: close`, resets,
//! delays or silence. Session tests compare these records with the workload.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How `Set-Cookie` is sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Cookies {
    /// Never.
    #[default]
    None,
    /// On every reply, `sid=c<connection number>`.
    PerConnection,
    /// Only to requests without a `Cookie` header, `sid=s<counter>` (a fresh value
    /// each time).
    WhenAbsent,
    /// On every reply, `sid=r<counter>` (a fresh value each time).
    EveryReply,
    /// On every reply, this `name=value`.
    Fixed(String),
}

/// How the server answers.
#[derive(Clone, Debug)]
pub struct Opts {
    /// Status of every reply, except URIs containing `redir`, which get 302, and URIs
    /// containing `fail`, which get 404.
    pub status: u16,
    /// Body `"<METHOD> <URI>|<request body>"`; otherwise `body` bytes of `a`.
    pub echo: bool,
    /// Body size when not echoing.
    pub body: usize,
    /// Wait this long after reading a request before answering it.
    pub delay: Duration,
    /// `Set-Cookie` policy.
    pub cookies: Cookies,
    /// Answer with `Connection: close` and close after every reply.
    pub close_each: bool,
    /// Answer the first n requests of each connection; reset (SO_LINGER 0) the
    /// connection on reading request n+1, without answering it.
    pub reset_after: Option<usize>,
    /// Read requests and never answer.
    pub hang: bool,
    /// The first n replies of the server (over all connections) get status 404.
    pub fail_first: u64,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            status: 200,
            echo: false,
            body: 10,
            delay: Duration::ZERO,
            cookies: Cookies::None,
            close_each: false,
            reset_after: None,
            hang: false,
            fail_first: 0,
        }
    }
}

/// One request as the server read it.
#[derive(Clone, Debug)]
pub struct Req {
    /// Connection number, from 0 in accept order.
    pub conn: u64,
    /// Position on its connection, from 0.
    pub index: usize,
    /// When it was read completely.
    pub at: Instant,
    /// Method.
    pub method: String,
    /// Request target.
    pub uri: String,
    /// Header lines after the request line, as (name, value), in order.
    pub headers: Vec<(String, String)>,
    /// Body (Content-Length bytes).
    pub body: Vec<u8>,
    /// More request bytes were already waiting on the connection when this request was
    /// answered (after `delay`): the client pipelined without waiting for this reply.
    pub followed: bool,
    /// When its reply was written (None: not answered).
    pub answered: Option<Instant>,
}

impl Req {
    /// The value of header `name` (case-insensitive), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Shared {
    reqs: Mutex<Vec<Req>>,
    conns: AtomicU64,
    cookie_seq: AtomicU64,
    replies: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
}

/// A running recording server.
pub struct Recorder {
    /// Its address.
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
}

impl Recorder {
    /// Starts a server answering per `opts` on 127.0.0.1:0.
    pub fn start(opts: Opts) -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind recorder");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared::default());
        let stop = Arc::new(AtomicBool::new(false));
        let sh = shared.clone();
        super::accept_loop(
            move || listener.accept().map(|(s, _)| s),
            stop.clone(),
            move |stream| {
                let conn = sh.conns.fetch_add(1, Ordering::SeqCst);
                let (sh, o) = (sh.clone(), opts.clone());
                thread::spawn(move || serve(stream, conn, &o, &sh));
            },
        );
        Recorder { addr, shared, stop }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request read so far, in the order they were read.
    pub fn requests(&self) -> Vec<Req> {
        self.shared.reqs.lock().expect("lock").clone()
    }

    /// Requests that were answered.
    pub fn answered(&self) -> Vec<Req> {
        self.requests()
            .into_iter()
            .filter(|r| r.answered.is_some())
            .collect()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.conns.load(Ordering::SeqCst)
    }

    /// The most requests read and not yet answered at any moment.
    pub fn max_in_flight(&self) -> u64 {
        self.shared.max_in_flight.load(Ordering::SeqCst)
    }

    /// The requests of each connection, by connection number (connections without
    /// requests are left out).
    pub fn by_conn(&self) -> Vec<Vec<Req>> {
        let mut out: Vec<(u64, Vec<Req>)> = Vec::new();
        for r in self.requests() {
            match out.iter_mut().find(|(c, _)| *c == r.conn) {
                Some((_, v)) => v.push(r),
                None => out.push((r.conn, vec![r])),
            }
        }
        out.sort_by_key(|(c, _)| *c);
        out.into_iter().map(|(_, v)| v).collect()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// Where `needle` first occurs in `hay`.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The Content-Length of a request head (0 without one).
pub fn content_length(head: &str) -> usize {
    head.lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("content-length").then_some(v)
        })
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0)
}

/// Reads one request: (head text, body), or None at EOF or error.
pub fn read_request(stream: &mut TcpStream, pending: &mut Vec<u8>) -> Option<(String, Vec<u8>)> {
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = find(pending, b"\r\n\r\n") {
            let head_len = end + 4;
            let head = String::from_utf8_lossy(&pending[..head_len]).into_owned();
            let body_len = content_length(&head);
            if pending.len() >= head_len + body_len {
                let req: Vec<u8> = pending.drain(..head_len + body_len).collect();
                return Some((head, req[head_len..].to_vec()));
            }
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}

/// Whether request bytes are waiting (buffered or in the socket).
fn bytes_waiting(stream: &TcpStream, pending: &[u8]) -> bool {
    if !pending.is_empty() {
        return true;
    }
    let mut b = [0u8; 1];
    if stream.set_nonblocking(true).is_err() {
        return false;
    }
    let waiting = matches!(stream.peek(&mut b), Ok(n) if n > 0);
    let _ = stream.set_nonblocking(false);
    waiting
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        302 => "Found",
        404 => "Not Found",
        _ => "X",
    }
}

fn serve(mut stream: TcpStream, conn: u64, o: &Opts, sh: &Shared) {
    let mut pending = Vec::new();
    let mut index = 0;
    while let Some((head, body)) = read_request(&mut stream, &mut pending) {
        let at = Instant::now();
        let mut lines = head.split("\r\n");
        let first = lines.next().unwrap_or("");
        let mut parts = first.split(' ');
        let method = parts.next().unwrap_or("").to_string();
        let uri = parts.next().unwrap_or("").to_string();
        let headers: Vec<(String, String)> = lines
            .filter(|l| !l.is_empty())
            .filter_map(|l| {
                let (n, v) = l.split_once(':')?;
                Some((n.to_string(), v.trim_start().to_string()))
            })
            .collect();
        let req = Req {
            conn,
            index,
            at,
            method,
            uri,
            headers,
            body,
            followed: false,
            answered: None,
        };
        let slot = {
            let mut reqs = sh.reqs.lock().expect("lock");
            reqs.push(req.clone());
            reqs.len() - 1
        };
        if o.reset_after == Some(index) {
            let _ = socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
            return;
        }
        index += 1;
        if o.hang {
            continue;
        }
        let now = sh.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        sh.max_in_flight.fetch_max(now, Ordering::SeqCst);
        if !o.delay.is_zero() {
            thread::sleep(o.delay);
        }
        let followed = bytes_waiting(&stream, &pending);
        let nth = sh.replies.fetch_add(1, Ordering::SeqCst);
        let status = if nth < o.fail_first || req.uri.contains("fail") {
            404
        } else if req.uri.contains("redir") {
            302
        } else {
            o.status
        };
        let content = if o.echo {
            let mut b = format!("{} {}|", req.method, req.uri).into_bytes();
            b.extend_from_slice(&req.body);
            b
        } else {
            vec![b'a'; o.body]
        };
        let mut reply = format!(
            "HTTP/1.1 {status} {}\r\nContent-Length: {}\r\n",
            reason(status),
            content.len()
        );
        match &o.cookies {
            Cookies::None => {}
            Cookies::EveryReply => {
                let n = sh.cookie_seq.fetch_add(1, Ordering::SeqCst);
                reply.push_str(&format!("Set-Cookie: sid=r{n}; Path=/\r\n"));
            }
            Cookies::Fixed(c) => reply.push_str(&format!("Set-Cookie: {c}; Path=/\r\n")),
            Cookies::PerConnection => {
                reply.push_str(&format!("Set-Cookie: sid=c{conn}; Path=/\r\n"));
            }
            Cookies::WhenAbsent => {
                if req.header("Cookie").is_none() {
                    let n = sh.cookie_seq.fetch_add(1, Ordering::SeqCst);
                    reply.push_str(&format!("Set-Cookie: sid=s{n}; Path=/\r\n"));
                }
            }
        }
        if o.close_each {
            reply.push_str("Connection: close\r\n");
        }
        reply.push_str("\r\n");
        let mut bytes = reply.into_bytes();
        if req.method != "HEAD" {
            bytes.extend_from_slice(&content);
        }
        // Marked before the write: once the client has the reply it may send more.
        {
            let mut reqs = sh.reqs.lock().expect("lock");
            reqs[slot].followed = followed;
            reqs[slot].answered = Some(Instant::now());
        }
        sh.in_flight.fetch_sub(1, Ordering::SeqCst);
        let ok = stream.write_all(&bytes).is_ok();
        if !ok || o.close_each {
            return;
        }
    }
}

/// A file in the temporary directory, removed on drop.
pub struct TempFile {
    /// Its path.
    pub path: String,
}

impl TempFile {
    /// Writes `bytes` to a fresh file whose name contains `tag`.
    pub fn new(tag: &str, bytes: &[u8]) -> TempFile {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let n = SEQ.fetch_add(1, Ordering::SeqCst);
        let path =
            std::env::temp_dir().join(format!("rshperf-test-{}-{tag}-{n}.log", std::process::id()));
        std::fs::write(&path, bytes).expect("write temp file");
        TempFile {
            path: path.to_string_lossy().into_owned(),
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
