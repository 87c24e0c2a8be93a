//! An in-process HTTP/2 server on 127.0.0.1:0 built on the `h2` crate (hyper's
//! HTTP/2, on a tokio runtime of its own thread), as h2c with prior knowledge or over
//! rustls with ALPN `h2`. Someone else's HTTP/2 implementation checks rshperf's client.
//!
//! Every request is recorded (method, path, scheme, authority, user-agent, cookie,
//! body bytes) and answered `200` with `body` bytes of content, or as `Opts` says:
//! a cookie per reply, a delay, a stream reset, refused or never answered for every
//! k-th request, a
//! graceful GOAWAY after n requests on a connection, a lower
//! SETTINGS_MAX_CONCURRENT_STREAMS, SETTINGS_HEADER_TABLE_SIZE or initial window, a
//! streamed body in DATA frames with delays (`Streamed`). The server counts connections and the most streams it saw in
//! flight on one connection, so tests compare rshperf's report with what arrived.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use bytes::Bytes;
use rustls::ServerConfig;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::support::streamed::Streamed;

/// How the server behaves.
#[derive(Clone, Debug, Default)]
pub struct Opts {
    /// Content bytes of every reply.
    pub body: usize,
    /// TLS (ALPN h2); h2c with prior knowledge when None.
    pub tls: Option<Arc<ServerConfig>>,
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub max_streams: Option<u32>,
    /// SETTINGS_HEADER_TABLE_SIZE (the client's HPACK table).
    pub table: Option<u32>,
    /// SETTINGS_INITIAL_WINDOW_SIZE (the client's send window for bodies).
    pub window: Option<u32>,
    /// Wait this long before answering each request.
    pub delay: Duration,
    /// Reset (RST_STREAM INTERNAL_ERROR) every k-th request of the server.
    pub reset_every: Option<u64>,
    /// Refuse (RST_STREAM REFUSED_STREAM, before answering) every k-th request of
    /// the server.
    pub refuse_every: Option<u64>,
    /// Graceful GOAWAY on a connection after it brought this many requests.
    pub goaway_after: Option<u64>,
    /// Answer with `set-cookie: sid=<request number>`.
    pub cookie: bool,
    /// Answer with this streamed body instead of `body` bytes.
    pub streamed: Option<Streamed>,
    /// Never answer every k-th request of the server: no HEADERS, its stream stays
    /// open (a server still working on it).
    pub silent_every: Option<u64>,
}

/// One request as the server decoded it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// `:method`.
    pub method: String,
    /// `:path`.
    pub path: String,
    /// `:scheme`.
    pub scheme: String,
    /// `:authority`.
    pub authority: String,
    /// `user-agent`.
    pub user_agent: String,
    /// `cookie`, if any.
    pub cookie: Option<String>,
    /// Body bytes received.
    pub body: usize,
    /// The body received.
    pub content: Vec<u8>,
    /// The server refused it (`Opts::refuse_every`).
    pub refused: bool,
}

#[derive(Default)]
struct State {
    connections: AtomicU64,
    requests: AtomicU64,
    max_in_flight: AtomicU64,
    seen: Mutex<Vec<Seen>>,
}

/// A running server; stops when dropped.
pub struct H2Server {
    port: u16,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl H2Server {
    /// Starts a server with `opts`.
    pub fn start(opts: Opts) -> H2Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let state = Arc::new(State::default());
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let st = Arc::clone(&state);
        let thread = thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let acceptor = opts.tls.clone().map(tokio_rustls::TlsAcceptor::from);
                loop {
                    let accepted = tokio::select! {
                        _ = &mut stopped => break,
                        a = listener.accept() => a,
                    };
                    let Ok((tcp, _)) = accepted else { continue };
                    let _ = tcp.set_nodelay(true);
                    st.connections.fetch_add(1, Ordering::Relaxed);
                    let (opts, st) = (opts.clone(), Arc::clone(&st));
                    match acceptor.clone() {
                        None => {
                            tokio::spawn(serve(tcp, opts, st));
                        }
                        Some(acc) => {
                            tokio::spawn(async move {
                                if let Ok(tls) = acc.accept(tcp).await {
                                    serve(tls, opts, st).await;
                                }
                            });
                        }
                    }
                }
            });
        });
        H2Server {
            port,
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Connections accepted.
    pub fn connections(&self) -> u64 {
        self.state.connections.load(Ordering::Relaxed)
    }

    /// Requests received (streams opened by the client).
    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::Relaxed)
    }

    /// The most requests in flight at once on one connection.
    pub fn max_in_flight(&self) -> u64 {
        self.state.max_in_flight.load(Ordering::Relaxed)
    }

    /// Every request completely received, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().expect("lock").clone()
    }
}

impl Drop for H2Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The ServerConfig of `tls_server::Pki` with ALPN `h2` only.
pub fn h2_tls(mut cfg: ServerConfig) -> Arc<ServerConfig> {
    cfg.alpn_protocols = vec![b"h2".to_vec()];
    Arc::new(cfg)
}

async fn serve<T: AsyncRead + AsyncWrite + Unpin>(io: T, opts: Opts, st: Arc<State>) {
    let mut b = h2::server::Builder::new();
    if let Some(n) = opts.max_streams {
        b.max_concurrent_streams(n);
    }
    if let Some(w) = opts.window {
        b.initial_window_size(w);
    }
    if let Some(t) = opts.table {
        b.header_table_size(t);
    }
    let Ok(mut conn) = b.handshake::<_, Bytes>(io).await else {
        return;
    };
    let in_flight = Arc::new(AtomicU64::new(0));
    let mut here = 0u64;
    while let Some(r) = conn.accept().await {
        let Ok((req, respond)) = r else { break };
        here += 1;
        if opts.goaway_after == Some(here) {
            conn.graceful_shutdown();
        }
        let n = st.requests.fetch_add(1, Ordering::Relaxed) + 1;
        let now = in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        st.max_in_flight.fetch_max(now, Ordering::Relaxed);
        let (opts, st, in_flight) = (opts.clone(), Arc::clone(&st), Arc::clone(&in_flight));
        tokio::spawn(async move {
            answer(req, respond, n, &opts, &st).await;
            in_flight.fetch_sub(1, Ordering::Relaxed);
        });
    }
}

async fn answer(
    req: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    n: u64,
    opts: &Opts,
    st: &State,
) {
    let (parts, mut body) = req.into_parts();
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let mut seen = Seen {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        scheme: parts.uri.scheme_str().unwrap_or("").to_string(),
        authority: parts
            .uri
            .authority()
            .map(|a| a.to_string())
            .unwrap_or_default(),
        user_agent: header("user-agent").unwrap_or_default(),
        cookie: header("cookie"),
        body: 0,
        content: Vec::new(),
        refused: opts.refuse_every.is_some_and(|k| n.is_multiple_of(k)),
    };
    while let Some(chunk) = body.data().await {
        let Ok(chunk) = chunk else { return };
        seen.body += chunk.len();
        seen.content.extend_from_slice(&chunk);
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    let refused = seen.refused;
    st.seen.lock().expect("lock").push(seen);
    if refused {
        respond.send_reset(h2::Reason::REFUSED_STREAM);
        return;
    }
    if opts.silent_every.is_some_and(|k| n.is_multiple_of(k)) {
        // Holding `respond` keeps the stream open (dropping it would reset it); the
        // server's runtime ends the wait when it stops.
        tokio::time::sleep(Duration::from_secs(3600)).await;
        drop(respond);
        return;
    }
    if !opts.delay.is_zero() {
        tokio::time::sleep(opts.delay).await;
    }
    if opts.reset_every.is_some_and(|k| n.is_multiple_of(k)) {
        respond.send_reset(h2::Reason::INTERNAL_ERROR);
        return;
    }
    if let Some(st) = opts.streamed.as_ref() {
        stream_reply(respond, st).await;
        return;
    }
    let mut builder = http::Response::builder()
        .status(200)
        .header("content-type", "text/plain");
    if opts.cookie {
        builder = builder.header("set-cookie", format!("sid={n}; path=/"));
    }
    let resp = builder.body(()).expect("response");
    let Ok(mut send) = respond.send_response(resp, opts.body == 0) else {
        return;
    };
    if opts.body > 0 {
        let _ = send.send_data(Bytes::from(vec![b'x'; opts.body]), true);
    }
}

/// Answers with `st`: each piece a DATA frame after its delay, then END_STREAM or a
/// reset.
async fn stream_reply(mut respond: h2::server::SendResponse<Bytes>, st: &Streamed) {
    let resp = http::Response::builder()
        .status(200)
        .header("content-type", st.content_type.as_str())
        .body(())
        .expect("response");
    let Ok(mut send) = respond.send_response(resp, false) else {
        return;
    };
    for (wait, piece) in &st.pieces {
        if !wait.is_zero() {
            tokio::time::sleep(*wait).await;
        }
        if send.send_data(Bytes::from(piece.clone()), false).is_err() {
            return;
        }
    }
    if st.reset {
        // A reset drops the DATA the connection still holds: the connection task
        // (woken by the pieces) writes them first, while this one waits for its timer.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        send.send_reset(h2::Reason::INTERNAL_ERROR);
    } else {
        let _ = send.send_data(Bytes::new(), true);
    }
}
