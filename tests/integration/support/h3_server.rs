//! An in-process HTTP/3 server on 127.0.0.1:0 (UDP) built on quinn, h3 and
//! h3-quinn, on a tokio runtime of its own thread: someone else's QUIC and HTTP/3
//! check rshperf's client. h3 sends grease (reserved settings, frame and stream types)
//! by default, which the client must ignore.
//!
//! Every request is answered `200` with `body` bytes, or as `Opts` says: a stream reset
//! or no answer at all every k-th request, a graceful GOAWAY after n requests on a connection, a reply
//! before the request body is read (with or without STOP_SENDING), 0-RTT rejected on
//! every connection after the first, a streamed body in DATA frames with delays
//! (`Streamed`). The server
//! counts connections, requests and handshakes that resumed a TLS session, so tests
//! compare rshperf's report with what arrived.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use bytes::Bytes;
use rustls::ServerConfig;

use crate::support::streamed::Streamed;

/// How the server behaves.
#[derive(Clone, Debug, Default)]
pub struct Opts {
    /// Content bytes of every reply.
    pub body: usize,
    /// Reset (H3_INTERNAL_ERROR) every k-th request of the server.
    pub reset_every: Option<u64>,
    /// Send GOAWAY after this many requests on a connection.
    pub goaway_after: Option<usize>,
    /// SETTINGS_MAX_CONCURRENT_STREAMS (QUIC's bidirectional stream limit).
    pub max_streams: Option<u32>,
    /// Reply at once, without reading the request body; then, if `Some(true)`, stop
    /// the request stream with H3_NO_ERROR (RFC 9114 §4.1).
    pub early_reply: Option<bool>,
    /// Reject 0-RTT: every connection after the first gets a configuration without
    /// early data (its tickets came from the first, which allowed it).
    pub reject_0rtt: bool,
    /// Wait this long before answering each request.
    pub delay: std::time::Duration,
    /// Answer with this streamed body instead of `body` bytes.
    pub streamed: Option<Streamed>,
    /// Read each request's body before answering, and keep it (`H3Server::bodies`).
    pub read_bodies: bool,
    /// Never answer every k-th request of the server: no HEADERS, its stream stays
    /// open (a server still working on it).
    pub silent_every: Option<u64>,
}

/// What the server counted.
#[derive(Debug, Default)]
pub struct Counts {
    /// QUIC connections accepted.
    pub connections: AtomicU64,
    /// Requests whose headers arrived.
    pub requests: AtomicU64,
    /// Replies completely sent.
    pub replies: AtomicU64,
    /// Connections whose handshake resumed a session.
    pub resumed: AtomicU64,
    /// The paths requested, in arrival order.
    pub paths: std::sync::Mutex<Vec<String>>,
    /// The request bodies read (`Opts::read_bodies`), in the order they completed.
    pub bodies: std::sync::Mutex<Vec<Vec<u8>>>,
}

/// A running server (stops when the test process ends).
pub struct H3Server {
    addr: SocketAddr,
    counts: Arc<Counts>,
}

/// The QUIC server configuration for `tls` (ALPN h3, 0-RTT allowed when `early`),
/// resuming sessions from `store`.
fn quic_config(
    mut tls: ServerConfig,
    opts: &Opts,
    store: &Arc<CountingStore>,
    early: bool,
) -> quinn::ServerConfig {
    tls.alpn_protocols = vec![b"h3".to_vec()];
    tls.max_early_data_size = if early { u32::MAX } else { 0 };
    tls.send_tls13_tickets = 2;
    tls.session_storage = Arc::clone(store) as Arc<dyn rustls::server::StoresServerSessions>;
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(Arc::new(tls)).expect("quic");
    let mut cfg = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut t = quinn::TransportConfig::default();
    if let Some(m) = opts.max_streams {
        t.max_concurrent_bidi_streams(m.into());
    }
    cfg.transport_config(Arc::new(t));
    cfg
}

impl H3Server {
    /// Starts a server with `tls` (its certificate; ALPN is set here).
    pub fn start(tls: ServerConfig, opts: Opts) -> H3Server {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("bind udp");
        let addr = sock.local_addr().expect("addr");
        let counts = Arc::new(Counts::default());
        let c = Arc::clone(&counts);
        let store = Arc::new(CountingStore {
            inner: rustls::server::ServerSessionMemoryCache::new(1024),
            counts: Arc::clone(&counts),
        });
        let cfg = quic_config(tls.clone(), &opts, &store, true);
        let late = opts
            .reject_0rtt
            .then(|| quic_config(tls, &opts, &store, false));
        thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let ep = quinn::Endpoint::new(
                    quinn::EndpointConfig::default(),
                    Some(cfg),
                    sock,
                    Arc::new(quinn::TokioRuntime),
                )
                .expect("endpoint");
                let seq = Arc::new(AtomicU64::new(0));
                while let Some(incoming) = ep.accept().await {
                    if let Some(late) = late.as_ref() {
                        ep.set_server_config(Some(late.clone()));
                    }
                    let (c, opts, seq) = (Arc::clone(&c), opts.clone(), Arc::clone(&seq));
                    tokio::spawn(async move {
                        let _ = serve(incoming, opts, c, seq).await;
                    });
                }
            });
        });
        H3Server { addr, counts }
    }

    /// The UDP port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Handshakes that resumed a TLS session.
    pub fn resumed(&self) -> u64 {
        self.counts.resumed.load(Ordering::SeqCst)
    }

    /// The paths requested, in arrival order.
    pub fn paths(&self) -> Vec<String> {
        self.counts
            .paths
            .lock()
            .map(|p| p.clone())
            .unwrap_or_default()
    }

    /// The request bodies read (`Opts::read_bodies`), in the order they completed.
    pub fn bodies(&self) -> Vec<Vec<u8>> {
        self.counts
            .bodies
            .lock()
            .map(|b| b.clone())
            .unwrap_or_default()
    }

    /// Requests seen.
    pub fn requests(&self) -> u64 {
        self.counts.requests.load(Ordering::SeqCst)
    }

    /// Connections accepted.
    pub fn connections(&self) -> u64 {
        self.counts.connections.load(Ordering::SeqCst)
    }
}

/// Serves one connection.
async fn serve(
    incoming: quinn::Incoming,
    opts: Opts,
    counts: Arc<Counts>,
    seq: Arc<AtomicU64>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let conn = incoming.accept()?.await?;
    counts.connections.fetch_add(1, Ordering::SeqCst);
    let mut h3 = h3::server::Connection::new(h3_quinn::Connection::new(conn)).await?;
    let mut served = 0usize;
    while let Some(resolver) = h3.accept().await? {
        let (req, mut stream) = resolver.resolve_request().await?;
        counts.requests.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut paths) = counts.paths.lock() {
            paths.push(req.uri().path().to_string());
        }
        let k = seq.fetch_add(1, Ordering::SeqCst) + 1;
        served += 1;
        let body = opts.body;
        let early_reply = opts.early_reply;
        let reset = opts.reset_every.is_some_and(|e| k.is_multiple_of(e));
        let c = Arc::clone(&counts);
        let delay = opts.delay;
        let streamed = opts.streamed.clone();
        let read_bodies = opts.read_bodies;
        let silent = opts.silent_every.is_some_and(|e| k.is_multiple_of(e));
        tokio::spawn(async move {
            if silent {
                // Holding `stream` keeps it open until the test process ends.
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                drop(stream);
                return;
            }
            if read_bodies {
                let mut body = Vec::new();
                while let Ok(Some(mut chunk)) = stream.recv_data().await {
                    use bytes::Buf;
                    while chunk.has_remaining() {
                        let part = chunk.chunk();
                        body.extend_from_slice(part);
                        let n = part.len();
                        chunk.advance(n);
                    }
                }
                if let Ok(mut b) = c.bodies.lock() {
                    b.push(body);
                }
            }
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if reset {
                stream.stop_stream(h3::error::Code::H3_INTERNAL_ERROR);
                return;
            }
            let stop = early_reply == Some(true);
            let mut resp = http::Response::builder().status(200);
            if let Some(st) = streamed.as_ref() {
                resp = resp.header("content-type", st.content_type.as_str());
            }
            if stream
                .send_response(resp.body(()).expect("resp"))
                .await
                .is_err()
            {
                return;
            }
            if let Some(st) = streamed.as_ref() {
                for (wait, piece) in &st.pieces {
                    if !wait.is_zero() {
                        tokio::time::sleep(*wait).await;
                    }
                    if stream.send_data(Bytes::from(piece.clone())).await.is_err() {
                        return;
                    }
                }
                if st.reset {
                    tokio::time::sleep(st.reset_after).await;
                    stream.stop_stream(h3::error::Code::H3_INTERNAL_ERROR);
                    return;
                }
            }
            if body > 0
                && stream
                    .send_data(Bytes::from(vec![b'x'; body]))
                    .await
                    .is_err()
            {
                return;
            }
            if stream.finish().await.is_ok() {
                c.replies.fetch_add(1, Ordering::SeqCst);
            }
            if stop {
                stream.stop_sending(h3::error::Code::H3_NO_ERROR);
            }
            if early_reply.is_some() {
                // Keep the stream (its unread request) until the client is done.
                tokio::time::sleep(std::time::Duration::from_secs(5)).await;
            }
        });
        if opts.goaway_after.is_some_and(|g| served >= g) {
            h3.shutdown(0).await?;
        }
    }
    Ok(())
}

/// A TLS session store that counts the sessions taken for resumption (TLS 1.3
/// resumes by taking its ticket's session: one take is one resumed handshake).
#[derive(Debug)]
struct CountingStore {
    inner: Arc<dyn rustls::server::StoresServerSessions>,
    counts: Arc<Counts>,
}

impl rustls::server::StoresServerSessions for CountingStore {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        self.inner.put(key, value)
    }
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.inner.get(key)
    }
    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        let v = self.inner.take(key);
        if v.is_some() {
            self.counts.resumed.fetch_add(1, Ordering::SeqCst);
        }
        v
    }
    fn can_cache(&self) -> bool {
        true
    }
}
