//! An HTTP/1.1 test server on a unix domain socket (a fresh path in the temporary
//! directory) that counts connections, requests and request bytes, and answers every
//! request `200` with a 10-byte body, keep-alive. For `--unix-socket` tests.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use super::recorder::{content_length, find};

/// What the server counted.
#[derive(Default, Debug)]
pub struct Counts {
    /// Accepted connections.
    pub connections: AtomicU64,
    /// Complete requests read (body included).
    pub requests: AtomicU64,
    /// The first request's head (request line and header lines).
    pub first_head: Mutex<String>,
}

/// A running unix-socket server; the socket file is removed on drop.
pub struct UnixServer {
    /// The socket's path.
    pub path: String,
    /// What it counted.
    pub counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
}

impl UnixServer {
    /// Starts a server on a fresh socket path whose name contains `tag`.
    pub fn start(tag: &str) -> UnixServer {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let n = SEQ.fetch_add(1, Ordering::SeqCst);
        let path = std::env::temp_dir()
            .join(format!("rshperf-ux-{}-{tag}-{n}.sock", std::process::id()))
            .to_string_lossy()
            .into_owned();
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).expect("bind unix test server");
        let counts = Arc::new(Counts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let c = counts.clone();
        super::accept_loop(
            move || listener.accept().map(|(s, _)| s),
            stop.clone(),
            move |stream| {
                c.connections.fetch_add(1, Ordering::SeqCst);
                let c = c.clone();
                thread::spawn(move || serve(stream, &c));
            },
        );
        UnixServer { path, counts, stop }
    }

    /// Requests read so far.
    pub fn requests(&self) -> u64 {
        self.counts.requests.load(Ordering::SeqCst)
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.counts.connections.load(Ordering::SeqCst)
    }
}

impl Drop for UnixServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = UnixStream::connect(&self.path);
        let _ = std::fs::remove_file(&self.path);
    }
}

fn serve(mut stream: UnixStream, c: &Counts) {
    let mut pending = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        if let Some(end) = find(&pending, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&pending[..end]).into_owned();
            let body = content_length(&head);
            if pending.len() >= end + 4 + body {
                pending.drain(..end + 4 + body);
                if c.requests.fetch_add(1, Ordering::SeqCst) == 0 {
                    *c.first_head.lock().expect("lock") = head;
                }
                let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\naaaaaaaaaa";
                if stream.write_all(reply).is_err() {
                    return;
                }
                continue;
            }
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}
