//! A test server on 127.0.0.1:0 that serves a tree of documents (`--wsesspage` tests)
//! and records every request path it reads, with its connection and time.
//!
//! Each document has a status, extra header lines, a body, and how the body is written:
//! at once with a Content-Length, in pieces of n bytes (each piece flushed on its own,
//! so attribute values and tags arrive split across reads), or chunked. Paths not in
//! the tree get a `404` `text/html` page that embeds nothing. Reuses the recorder's
//! request reader.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::recorder::read_request;

/// How a document's body is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Framing {
    /// With `Content-Length`, in one write.
    Whole,
    /// With `Content-Length`, in writes of this many bytes.
    Pieces(usize),
    /// `Transfer-Encoding: chunked`, one chunk of this many bytes per write.
    Chunked(usize),
}

/// One document of the tree.
#[derive(Clone, Debug)]
pub struct Doc {
    /// Reply status.
    pub status: u16,
    /// Header lines (without CRLF), e.g. `Content-Type: text/html`.
    pub headers: Vec<String>,
    /// Body.
    pub body: Vec<u8>,
    /// How the body is written.
    pub framing: Framing,
}

impl Doc {
    /// A `200` `text/html` page.
    pub fn html(body: &str) -> Doc {
        Doc::typed("text/html", body.as_bytes())
    }

    /// A `200` reply with this Content-Type.
    pub fn typed(content_type: &str, body: &[u8]) -> Doc {
        Doc {
            status: 200,
            headers: vec![format!("Content-Type: {content_type}")],
            body: body.to_vec(),
            framing: Framing::Whole,
        }
    }

    /// A redirect with this status and `Location`, and an HTML body.
    pub fn redirect(status: u16, location: &str, body: &str) -> Doc {
        Doc {
            status,
            headers: vec![
                format!("Location: {location}"),
                "Content-Type: text/html".into(),
            ],
            body: body.as_bytes().to_vec(),
            framing: Framing::Whole,
        }
    }

    /// The same document written with `framing`.
    pub fn framed(mut self, framing: Framing) -> Doc {
        self.framing = framing;
        self
    }
}

/// One request the server read.
#[derive(Clone, Debug)]
pub struct Hit {
    /// Connection number, from 0 in accept order.
    pub conn: u64,
    /// Request target.
    pub path: String,
    /// When it was read.
    pub at: Instant,
}

struct Shared {
    docs: BTreeMap<String, Doc>,
    hits: Mutex<Vec<Hit>>,
    conns: AtomicU64,
}

/// A running page server.
pub struct PageServer {
    /// Its address.
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
}

impl PageServer {
    /// Serves the documents (path, document) that `docs` makes for the server's port
    /// (pages may name it in absolute URIs), on 127.0.0.1:0.
    pub fn start(docs: impl FnOnce(u16) -> Vec<(&'static str, Doc)>) -> PageServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind page server");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            docs: docs(addr.port())
                .into_iter()
                .map(|(p, d)| (p.to_string(), d))
                .collect(),
            hits: Mutex::new(Vec::new()),
            conns: AtomicU64::new(0),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (sh, st) = (shared.clone(), stop.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let conn = sh.conns.fetch_add(1, Ordering::SeqCst);
                let sh = sh.clone();
                thread::spawn(move || serve(stream, conn, &sh));
            }
        });
        PageServer { addr, shared, stop }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request read, in order.
    pub fn hits(&self) -> Vec<Hit> {
        self.shared.hits.lock().expect("lock").clone()
    }

    /// The paths requested, in order.
    pub fn paths(&self) -> Vec<String> {
        self.hits().into_iter().map(|h| h.path).collect()
    }

    /// How often each path was requested.
    pub fn counts(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for p in self.paths() {
            *m.entry(p).or_insert(0) += 1;
        }
        m
    }

    /// Connections accepted.
    pub fn connections(&self) -> u64 {
        self.shared.conns.load(Ordering::SeqCst)
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

fn not_found() -> Doc {
    Doc {
        status: 404,
        headers: vec!["Content-Type: text/html".into()],
        body: b"<html><body>not found</body></html>".to_vec(),
        framing: Framing::Whole,
    }
}

/// Writes `bytes` as its own segment; the pause lets the client read it before the
/// next one arrives (a best effort: the unit tests cover every split exactly).
fn write_piece(stream: &mut TcpStream, bytes: &[u8]) -> bool {
    let ok = stream
        .write_all(bytes)
        .and_then(|()| stream.flush())
        .is_ok();
    thread::sleep(Duration::from_millis(1));
    ok
}

fn serve(mut stream: TcpStream, conn: u64, sh: &Shared) {
    let _ = stream.set_nodelay(true);
    let mut pending = Vec::new();
    while let Some((head, _body)) = read_request(&mut stream, &mut pending) {
        let path = head.split(' ').nth(1).unwrap_or("").to_string();
        sh.hits.lock().expect("lock").push(Hit {
            conn,
            path: path.clone(),
            at: Instant::now(),
        });
        let doc = sh.docs.get(&path).cloned().unwrap_or_else(not_found);
        let mut reply = format!("HTTP/1.1 {} X\r\n", doc.status);
        for h in &doc.headers {
            reply.push_str(h);
            reply.push_str("\r\n");
        }
        let ok = match doc.framing {
            Framing::Whole | Framing::Pieces(_) => {
                reply.push_str(&format!("Content-Length: {}\r\n\r\n", doc.body.len()));
                let mut bytes = reply.into_bytes();
                match doc.framing {
                    Framing::Pieces(n) => {
                        write_piece(&mut stream, &bytes)
                            && doc
                                .body
                                .chunks(n.max(1))
                                .all(|p| write_piece(&mut stream, p))
                    }
                    _ => {
                        bytes.extend_from_slice(&doc.body);
                        stream.write_all(&bytes).is_ok()
                    }
                }
            }
            Framing::Chunked(n) => {
                reply.push_str("Transfer-Encoding: chunked\r\n\r\n");
                let mut ok = write_piece(&mut stream, reply.as_bytes());
                for c in doc.body.chunks(n.max(1)) {
                    let mut chunk = format!("{:x}\r\n", c.len()).into_bytes();
                    chunk.extend_from_slice(c);
                    chunk.extend_from_slice(b"\r\n");
                    ok = ok && stream.write_all(&chunk).is_ok();
                }
                ok && stream.write_all(b"0\r\n\r\n").is_ok()
            }
        };
        if !ok {
            return;
        }
    }
}
