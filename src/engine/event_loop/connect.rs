//! Connection set-up: the socket of a new connection (source address and `--hog`
//! port, options, connect and registration through the backend), its TLS layer, and what
//! happens when set-up fails. Part of the engine (`impl Engine`); called by the
//! workload halves when they need a connection.

use std::net::SocketAddr;
use std::time::Instant;

use mio::Token;

use super::Engine;
use crate::engine::conn::{Conn, Owner, Phase};
use crate::model::stats::ErrorKind;
use crate::wire::net::{self, Connect, SetupError};
use crate::wire::table::ConnId;

/// Ports tried per connection under `--hog` before giving up (EADDRINUSE).
const HOG_ATTEMPTS: usize = 64;

impl Engine<'_> {
    /// Opens a new connection for `owner`. None when it failed at once (counted, and
    /// the owner told through `on_closed`).
    pub(super) fn open_conn(&mut self, now: Instant, owner: Owner) -> Option<ConnId> {
        // Round-robin over the targets by global arrival number (sessions keep their
        // connections on one server).
        let arrival = match owner {
            Owner::Request { arrival, .. } => arrival,
            Owner::Pool { slot } => self.pool_arrival(slot),
            Owner::Session { sess, .. } => self.sessions.get_mut(sess).map_or(0, |s| s.arrival()),
            Owner::Orphan => 0,
        };
        let target = usize::try_from(arrival % self.work.targets.len().max(1) as u64).unwrap_or(0);
        self.note_connect_burst();
        self.live += 1;
        self.stats.pacing.table_peak = self.stats.pacing.table_peak.max(self.live);
        // The run's count (all engines): what "concurrent connections" reports.
        let open = self.tally.opened();
        self.stats.max_concurrent = self.stats.max_concurrent.max(open);
        let timeout = self.timeout;
        let http2 = self.cfg.request().http_version() == crate::model::config::HttpVersion::V2;
        let http3 = self.cfg.request().http_version() == crate::model::config::HttpVersion::V3;
        let serial = self.next_conn_serial;
        self.next_conn_serial += u64::from(self.plan.stripes.max(1));
        let scheduled = self.arrival_at.take();
        let bufs = &mut self.bufs;
        let slot = self
            .table
            .alloc(|| <Conn>::new(ConnId::from_token(Token(0)), now))
            .map(|(id, conn)| {
                conn.reset(id, now, owner, timeout, http2, bufs);
                conn.reset_h3(http3, bufs);
                conn.target = target;
                conn.serial = serial;
                conn.scheduled = scheduled;
                id
            });
        let Some(id) = slot else {
            self.fail_setup(now, owner, ErrorKind::FdUnavail);
            return None;
        };
        if http3 {
            if !self.start_quic(id, owner, target) {
                self.report_tls_error(id);
                self.note_connecting(target);
                self.finish(id, Some(ErrorKind::Other), now);
                return None;
            }
        } else if let Some(settings) = &self.work.tls {
            let cache = match owner {
                Owner::Session { sess, .. } => {
                    self.sessions.get_mut(sess).and_then(|s| s.tls_cache())
                }
                _ => None,
            };
            let tls = settings.new_connection(cache.as_ref());
            match (tls, self.table.get_mut(id)) {
                (Ok(t), Some(c)) => c.tls = Some(Box::new(t)),
                (Err(e), Some(c)) => {
                    c.tls_error = Some(e.to_string());
                    self.report_tls_error(id);
                    self.note_connecting(target);
                    self.finish(id, Some(ErrorKind::Other), now);
                    return None;
                }
                _ => {}
            }
        }
        match self.open_socket(id) {
            Ok(Some(connected)) => {
                if connected {
                    let (table, mut ctx, _) = self.ctx();
                    let done = match table.get_mut(id) {
                        Some(c) if c.tls.is_some() || c.is_h3() => {
                            c.phase = Phase::Handshaking;
                            c.on_handshake_ready(now, &mut ctx)
                        }
                        Some(c) => {
                            c.on_connected(now, &mut ctx);
                            Ok(true)
                        }
                        None => Ok(false),
                    };
                    match done {
                        Ok(true) => self.on_connected(id, now),
                        Ok(false) => {}
                        Err(kind) => {
                            self.report_tls_error(id);
                            self.finish(id, Some(kind), now);
                            return None;
                        }
                    }
                }
                // The watchdog covers the connect from here (httperf arms it when
                // `connect` returns EINPROGRESS): a connect nobody answers sees no
                // readiness event, and without a timer it would wait for the
                // kernel's SYN retries. HTTP/3's first QUIC timer is armed here too.
                self.arm_watchdog(id);
                Some(id)
            }
            Ok(None) => {
                // socket() failed: no connection object exists.
                if let Some(c) = self.table.get_mut(id) {
                    c.release(&mut self.bufs);
                }
                self.table.free(id);
                self.fail_setup(now, owner, ErrorKind::FdUnavail);
                None
            }
            Err(kind) => {
                self.finish(id, Some(kind), now);
                None
            }
        }
    }

    /// HTTP/3: gives slot `id` its QUIC client configuration (the session's TLS
    /// cache for session workloads), server address and name. False (the reason in
    /// the connection's `tls_error`) when rustls cannot do QUIC with the TLS options.
    fn start_quic(&mut self, id: ConnId, owner: Owner, target: usize) -> bool {
        let Some(settings) = &self.work.tls else {
            return false;
        };
        let cache = match owner {
            Owner::Session { sess, .. } => self.sessions.get_mut(sess).and_then(|s| s.tls_cache()),
            _ => None,
        };
        let config = settings.quic_config(cache.as_ref());
        let addr = self.work.targets.get(target).map(|t| t.addr);
        let name = settings.server_name_text();
        let Some(conn) = self.table.get_mut(id) else {
            return false;
        };
        match (config, addr) {
            (Some((c, resumed)), Some(a)) => {
                conn.set_quic(c, resumed, a, name);
                true
            }
            _ => {
                conn.tls_error = Some(
                    "QUIC needs TLS 1.3 with TLS_AES_128_GCM_SHA256 (check --ssl-protocol and --ssl-ciphers)"
                        .to_string(),
                );
                false
            }
        }
    }

    /// Creates, binds and connects the socket of slot `id`. Ok(Some(connected)) when
    /// the socket exists, Ok(None) when `socket()` itself failed with EMFILE-like
    /// errors (counted by the caller), Err(kind) for failures after it was counted.
    pub(super) fn open_socket(&mut self, id: ConnId) -> Result<Option<bool>, ErrorKind> {
        let target = self.table.get_mut(id).map_or(0, |c| c.target);
        let addr = self.work.targets.get(target).ok_or(ErrorKind::Other)?.addr;
        let result = match self.cfg.target().unix_socket() {
            // `--unix-socket`: no source address or port to choose.
            Some(path) => net::start_connect_unix(std::path::Path::new(path), &self.opts),
            None if self.cfg.request().http_version() == crate::model::config::HttpVersion::V3 => {
                let (source, _) = self.next_source(addr);
                net::start_connect_udp(addr, source.map(|ip| SocketAddr::new(ip, 0)))
            }
            None => self.start_tcp(id, addr),
        };
        self.on_started(id, target, result)
    }

    /// Starts a TCP connect for slot `id` to `addr`: the source address (`--myaddr`)
    /// and, under `--hog`, a port of our own (retried while ports are busy).
    fn start_tcp(&mut self, id: ConnId, addr: SocketAddr) -> Result<Connect, SetupError> {
        if self.ports.is_empty() {
            if let Some((socket, source)) = self.take_spare(addr) {
                let r = self.io.connect(socket, addr, id.token());
                self.note_port(id, &r, addr, source);
                return r;
            }
        }
        let mut attempts = 0;
        let (source, pool) = self.next_source(addr);
        loop {
            let local = match self.ports.get_mut(pool) {
                Some(ports) => match ports.take() {
                    Some(p) => Some(SocketAddr::new(
                        source.unwrap_or(net::any_local(addr, 0).ip()),
                        p,
                    )),
                    None => {
                        return Err(SetupError::Connect(std::io::Error::from_raw_os_error(
                            libc::EADDRNOTAVAIL,
                        )))
                    }
                },
                // Without --hog: bound to the source address, port chosen at connect.
                None => source.map(|ip| SocketAddr::new(ip, 0)),
            };
            let r = net::prepare_socket(addr, local, &self.opts)
                .and_then(|socket| self.io.connect(socket, addr, id.token()));
            let busy = matches!(&r, Err(SetupError::Connect(e)) if e.raw_os_error() == Some(libc::EADDRINUSE));
            if let Some(l) = local {
                if busy {
                    // The port stays marked used (someone else has it); try the next.
                    attempts += 1;
                    if attempts < HOG_ATTEMPTS {
                        continue;
                    }
                } else if let Some(conn) = self.table.get_mut(id) {
                    conn.port = (l.port() != 0).then_some((pool, l.port()));
                }
            }
            self.note_port(id, &r, addr, source);
            break r;
        }
    }

    /// A started TCP connect of slot `id` to `addr` from `source` takes a local port
    /// (`portuse`), given back when the connection closes (`finish`).
    fn note_port(
        &mut self,
        id: ConnId,
        r: &Result<Connect, SetupError>,
        addr: SocketAddr,
        source: Option<std::net::IpAddr>,
    ) {
        if r.is_ok() {
            let key = self.portuse.opened(addr, source, Instant::now());
            if let Some(conn) = self.table.get_mut(id) {
                conn.port_key = Some(key);
            }
        }
    }

    /// Registers the socket of a started connect, or classifies its failure.
    fn on_started(
        &mut self,
        id: ConnId,
        target: usize,
        result: Result<Connect, SetupError>,
    ) -> Result<Option<bool>, ErrorKind> {
        match result {
            Err(SetupError::Socket(e)) => {
                let kind = ErrorKind::from_errno(net::errno(&e));
                if kind == ErrorKind::FdUnavail {
                    Ok(None)
                } else {
                    self.note_connecting(target);
                    Err(kind)
                }
            }
            Err(SetupError::Connect(e)) => {
                self.note_connecting(target);
                let errno = net::errno(&e);
                if ErrorKind::is_unroutable(errno) {
                    self.stats.unroutable += 1;
                }
                Err(if errno == libc::EADDRINUSE {
                    ErrorKind::AddrUnavail
                } else {
                    ErrorKind::from_errno(errno)
                })
            }
            Ok(c) => {
                self.note_connecting(target);
                let (connected, stream) = match c {
                    Connect::Done(s) => (true, s),
                    Connect::InProgress(s) => (false, s),
                };
                let stream = self
                    .io
                    .add(stream, id.token(), connected)
                    .map_err(|e| ErrorKind::from_errno(net::errno(&e)))?;
                let conn = self.table.get_mut(id).ok_or(ErrorKind::Other)?;
                conn.stream = Some(stream);
                Ok(Some(connected))
            }
        }
    }

    /// The next `--myaddr` source address of the same family as `addr` (round-robin)
    /// and the index of its `--hog` port pool; without `--myaddr`, a loopback source
    /// address once ports are under pressure (`spread`) or None, and pool 0.
    pub(super) fn next_source(&mut self, addr: SocketAddr) -> (Option<std::net::IpAddr>, usize) {
        let local = &self.work.local;
        if local.is_empty() {
            // `--overload=degrade`: a loopback target gets several source addresses.
            let source = self.spread.source(addr, Instant::now());
            if source.is_some() {
                self.stats.pacing.source_addrs = u64::from(super::spread::ADDRS);
            }
            return (source, 0);
        }
        for _ in 0..local.len() {
            let i = self.local_rr % local.len();
            self.local_rr = self.local_rr.wrapping_add(1);
            if local[i].is_ipv4() == addr.is_ipv4() {
                return (Some(local[i]), i);
            }
        }
        (None, 0)
    }

    /// A connection of `target` reached the connecting stage.
    pub(super) fn note_connecting(&mut self, target: usize) {
        self.stats.on_connecting();
        if let Some(srv) = self.stats.servers.get_mut(target) {
            srv.connections += 1;
        }
    }

    /// A connection that never got a socket (full table, EMFILE) failed.
    pub(super) fn fail_setup(&mut self, now: Instant, owner: Owner, kind: ErrorKind) {
        self.stats.on_error(kind);
        self.stats.ends_mut().unopened += 1;
        self.conn_gone();
        self.on_closed(owner, None, Some(kind), 0, now);
    }

    /// A connection object is gone (closed, or never got a socket).
    pub(super) fn conn_gone(&mut self) {
        self.live -= 1;
        self.tally.closed();
    }

    /// Prints the first TLS failure of the run on stderr (later ones are only
    /// counted) and counts the certificates `--ssl-verify` rejected.
    pub(super) fn report_tls_error(&mut self, id: ConnId) {
        static REPORTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let Some(reason) = self.table.get_mut(id).and_then(|c| c.tls_error.take()) else {
            return;
        };
        let rejected = crate::wire::tls::is_certificate_rejection(&reason);
        if rejected {
            self.stats.cert_rejected += 1;
        }
        if !REPORTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
            // TLS 1.3 servers reject client certificates after the client's Finished,
            // so such alerts come as read errors: still a failed handshake to the user.
            let remedy = if rejected {
                "; --ssl-ca-file names the CA that signed it"
            } else {
                ""
            };
            crate::wire::note::note!(
                "rshperf: TLS handshake failed: {reason} (further failures are only counted{remedy})"
            );
        }
    }
}
