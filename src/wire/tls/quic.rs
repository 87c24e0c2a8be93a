//! The QUIC side of the TLS settings (`--http-version 3`): the quinn-proto client
//! configuration of a connection, built from the run's rustls configuration (same
//! verification, client certificate, cipher suites, ALPN `h3`) or from a session's
//! (resumption, and 0-RTT with `--quic-0rtt`), the transport settings
//! (`--quic-idle-timeout`), and the server name QUIC verifies.
//! Called by `engine::conn` when it starts a QUIC connection.
//!
//! quinn-proto does not expose rustls' handshake kind: a session's connections tell
//! a resumed handshake by its certificate check count (`checks`).

use std::sync::Arc;

use super::checks::Resumed;
use super::{SessionCache, TlsSettings};

impl TlsSettings {
    /// The QUIC client configuration of a new connection, resuming from (and storing
    /// into) `cache` when given, and what tells whether its handshake resumed. None
    /// when rustls cannot do QUIC with the options (no TLS 1.3, or no
    /// TLS_AES_128_GCM_SHA256 among `--ssl-ciphers`).
    pub(crate) fn quic_config(
        &self,
        cache: Option<&SessionCache>,
    ) -> Option<(quinn_proto::ClientConfig, Resumed)> {
        let config = cache.map_or(&self.config, |c| &c.config);
        let resumed = cache.map_or_else(Resumed::never, |c| c.checks.resumed());
        let quic = crate::wire::quic::client_config(Arc::clone(config), &self.transport)?;
        Some((quic, resumed))
    }

    /// The name QUIC sends in SNI and verifies (an IP address sends no SNI).
    pub(crate) fn server_name_text(&self) -> String {
        self.server_name.to_str().into_owned()
    }
}
