//! A hostile HTTP/3 server on 127.0.0.1:0 (UDP): QUIC from quinn (someone else's, and
//! correct), HTTP/3 written here byte by byte so that it can misbehave in one chosen
//! way. Requests are read to their end and answered `200` with 5 bytes of content
//! unless the behaviour says otherwise. Counts connections and requests.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use rustls::ServerConfig;

/// How the server misbehaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hostile {
    /// A well-formed reply (the control).
    Good,
    /// DATA before the reply's HEADERS (H3_FRAME_UNEXPECTED).
    DataFirst,
    /// A 300,000-byte HEADERS frame (over the client's limit).
    HugeHeaders,
    /// A field section that refers to the QPACK dynamic table the client disabled.
    DynamicRef,
    /// GOAWAY on the control stream after this many requests on a connection (the
    /// requests beyond it are not answered).
    GoawayAfter(u64),
    /// Every request stream reset (H3_INTERNAL_ERROR).
    Reset,
    /// The control stream starts with GOAWAY instead of SETTINGS.
    NoSettings,
    /// Requests are read and never answered.
    Silent,
}

/// A running server (stops when the test process ends).
pub struct HostileH3 {
    port: u16,
    requests: Arc<AtomicU64>,
    connections: Arc<AtomicU64>,
}

/// A reply: HEADERS `:status 200` (static index 25), DATA "hello".
const GOOD: &[u8] = &[
    0x01, 0x03, 0x00, 0x00, 0xd9, 0x00, 0x05, b'h', b'e', b'l', b'l', b'o',
];

impl HostileH3 {
    /// Starts a server with `tls` behaving as `how`.
    pub fn start(mut tls: ServerConfig, how: Hostile) -> HostileH3 {
        tls.alpn_protocols = vec![b"h3".to_vec()];
        let crypto =
            quinn::crypto::rustls::QuicServerConfig::try_from(Arc::new(tls)).expect("quic");
        let cfg = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        let sock = UdpSocket::bind("127.0.0.1:0").expect("bind udp");
        let port = sock.local_addr().expect("addr").port();
        let requests = Arc::new(AtomicU64::new(0));
        let connections = Arc::new(AtomicU64::new(0));
        let (r, c) = (Arc::clone(&requests), Arc::clone(&connections));
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
                while let Some(incoming) = ep.accept().await {
                    let (r, c) = (Arc::clone(&r), Arc::clone(&c));
                    tokio::spawn(async move {
                        let _ = serve(incoming, how, r, c).await;
                    });
                }
            });
        });
        HostileH3 {
            port,
            requests,
            connections,
        }
    }

    /// The UDP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Requests read to their end.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// Connections accepted.
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Serves one connection as `how` says.
async fn serve(
    incoming: quinn::Incoming,
    how: Hostile,
    requests: Arc<AtomicU64>,
    connections: Arc<AtomicU64>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let conn = incoming.accept()?.await?;
    connections.fetch_add(1, Ordering::SeqCst);
    let mut control = conn.open_uni().await?;
    if how == Hostile::NoSettings {
        control.write_all(&[0x00, 0x07, 0x01, 0x00]).await?;
    } else {
        control.write_all(&[0x00, 0x04, 0x00]).await?;
    }
    let mut served = 0u64;
    loop {
        let (mut send, mut recv) = conn.accept_bi().await?;
        let _ = recv.read_to_end(1 << 20).await?;
        requests.fetch_add(1, Ordering::SeqCst);
        served += 1;
        match how {
            Hostile::Good | Hostile::NoSettings => {
                send.write_all(GOOD).await?;
                send.finish()?;
            }
            Hostile::DataFirst => {
                send.write_all(&[0x00, 0x02, b'h', b'i']).await?;
                send.write_all(GOOD).await?;
                send.finish()?;
            }
            Hostile::HugeHeaders => {
                let mut f = vec![0x01, 0x80, 0x04, 0x93, 0xe0];
                f.extend_from_slice(&[0x00, 0x00, 0xd9]);
                f.resize(5 + 300_000, 0xd9);
                send.write_all(&f).await?;
                send.finish()?;
            }
            Hostile::DynamicRef => {
                // Required Insert Count 2, then an indexed dynamic field.
                send.write_all(&[0x01, 0x03, 0x03, 0x81, 0x80]).await?;
                send.finish()?;
            }
            Hostile::GoawayAfter(n) => {
                if served <= n {
                    send.write_all(GOOD).await?;
                    send.finish()?;
                }
                if served == n {
                    // The next client stream id is 4 × n: everything from it on is
                    // refused.
                    let id = 4 * n;
                    let mut g = vec![0x07];
                    if id < 64 {
                        g.extend_from_slice(&[0x01, id as u8]);
                    } else {
                        g.extend_from_slice(&[0x02, 0x40 | (id >> 8) as u8, id as u8]);
                    }
                    control.write_all(&g).await?;
                }
            }
            Hostile::Reset => {
                send.reset(0x102u32.into())?;
            }
            Hostile::Silent => {
                std::mem::forget(send);
            }
        }
    }
}
