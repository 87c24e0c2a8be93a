//! HTTPS on rustls: the client configuration built once from `--ssl*` options, the
//! per-session resumption cache, and a non-blocking TLS connection over any socket.
//!
//! Owns option validation for TLS (`--ssl-protocol`, `--ssl-ciphers`, certificates, CA
//! locations), certificate verification policy, SNI and ALPN (`http/1.1`, or `h2` alone
//! with `--http-version 2`). Does not own
//! sockets, readiness registration, timeouts or counting: the engine creates a `TlsConn`
//! per connection after TCP connect, drives `handshake`/`read`/`write`/`flush` when the
//! socket is ready, derives its interest from `wants_read`/`wants_write`, and counts full
//! and resumed handshakes with `resumed`. Nothing here blocks or sleeps; `WouldBlock` from
//! the socket is never an error except where documented (`read`, `write`).
//!
//! Session reuse follows httperf: rustls keys its session store by server name, so each
//! httperf session gets its own `SessionCache` (a store of one entry behind its own
//! `ClientConfig` clone, made once per session); its first connection does a full
//! handshake and the later ones resume it. Connections made without a cache (the
//! request-oriented workload, or `--ssl-no-reuse`) always do a full handshake.

/// The `ServerCertVerifier` methods a wrapping verifier hands to its `inner` one
/// unchanged: the handshake signatures and the schemes they may use (rustls' trait
/// has no default for them). Used inside `impl ServerCertVerifier for …`.
macro_rules! forward_signatures {
    () => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &rustls::pki_types::CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            self.inner.verify_tls12_signature(message, cert, dss)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &rustls::pki_types::CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            self.inner.verify_tls13_signature(message, cert, dss)
        }

        fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
            self.inner.supported_verify_schemes()
        }
    };
}

mod checks;
mod cipher;
mod info;
mod quic;
#[cfg(test)]
mod tests;

pub(crate) use checks::Resumed;
pub(crate) use info::summary;

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ClientSessionMemoryCache, Resumption, WebPkiServerVerifier};
use rustls::crypto::{ring, CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, HandshakeKind, RootCertStore,
    SignatureScheme, SupportedProtocolVersion,
};

use crate::wire::frozen::frozen;

/// The ALPN protocol offered for HTTP/1.x.
const ALPN_HTTP11: &[u8] = b"http/1.1";
/// The ALPN protocol offered, alone, with `--http-version 2` (RFC 9113 §3.2).
pub(crate) const ALPN_H2: &[u8] = b"h2";

/// `--ssl-protocol`: the TLS version pinned (min = max), or `Auto` (negotiate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslProtocol {
    /// Negotiate the highest version both sides support.
    Auto,
    /// TLS 1.0 (`TLSv1`, `TLSv1.0`, `TLSv1_0`).
    Tls10,
    /// TLS 1.1.
    Tls11,
    /// TLS 1.2.
    Tls12,
    /// TLS 1.3.
    Tls13,
}

impl SslProtocol {
    /// The name httperf master echoes (`auto`, `TLSv1.0`, …).
    pub(crate) fn name(self) -> &'static str {
        match self {
            SslProtocol::Auto => "auto",
            SslProtocol::Tls10 => "TLSv1.0",
            SslProtocol::Tls11 => "TLSv1.1",
            SslProtocol::Tls12 => "TLSv1.2",
            SslProtocol::Tls13 => "TLSv1.3",
        }
    }
}

frozen! {
    /// The TLS options of a run (`--ssl`, `--ssl-*`, `--tls-server-name`, or ab's and
    /// lb's letters): everything `TlsSettings::from_options` builds the client from. Held
    /// by `Config` as its `tls` part; the layer above fills `fallback_name` and `alpn_h2`.
    #[derive(Debug, Clone, PartialEq, Default)]
    pub(crate) struct TlsOptions [] {
        /// `--ssl` (or implied by `--ssl-protocol` or an `https://` URL).
        enabled: bool => bool as copy, set_enabled;
        /// `--ssl-protocol` if given; None behaves as `Auto`.
        protocol: Option<SslProtocol> => Option<SslProtocol> as copy, set_protocol;
        /// `--ssl-ciphers`.
        ciphers: Option<String> => Option<&str> as deref, set_ciphers;
        /// `--ssl-no-reuse`: every connection does a full handshake.
        no_reuse: bool => bool as copy, set_no_reuse;
        /// `--tls-server-name` (SNI and verification name).
        server_name: Option<String> => Option<&str> as deref, set_server_name;
        /// The name used without `--tls-server-name`: the option it comes from
        /// (`--server-name` or `--server`) and its value (`--server-name` without a port).
        fallback_name: (&'static str, String) => &(&'static str, String) as borrow, set_fallback_name;
        /// `--ssl-certificate` (client certificate, PEM file).
        certificate: Option<String> => Option<&str> as deref, set_certificate;
        /// `--ssl-key` (client key, PEM file; default the certificate file).
        key: Option<String> => Option<&str> as deref, set_key;
        /// `--ssl-verify`: verify the server certificate.
        verify: bool => bool as copy, set_verify;
        /// `--ssl-ca-file`.
        ca_file: Option<String> => Option<&str> as deref, set_ca_file;
        /// `--ssl-ca-path`.
        ca_path: Option<String> => Option<&str> as deref, set_ca_path;
        /// Offer `h2` alone by ALPN (`--http-version 2`), else `http/1.1`.
        alpn_h2: bool => bool as copy, set_alpn_h2;
        /// HTTP/3 over QUIC (`--http-version 3`): ALPN `h3` alone, TLS 1.3.
        quic: bool => bool as copy, set_quic;
        /// `--quic-0rtt`: send requests as 0-RTT data when a session allows.
        early_data: bool => bool as copy, set_early_data;
        /// `--quic-idle-timeout` in seconds if given (0: none from our side); QUIC
        /// connections otherwise offer `wire::quic::DEFAULT_IDLE`.
        quic_idle_timeout: Option<f64> => Option<f64> as copy, set_quic_idle_timeout;
    }
}

impl TlsOptions {
    /// The SNI / verification name source for a `--server-name` (without its `:port`)
    /// or, without one, a `--server` value.
    pub(crate) fn fallback_for(server_name: Option<&str>, server: &str) -> (&'static str, String) {
        match server_name {
            Some(n) => ("--server-name", strip_port(n).to_string()),
            None => ("--server", server.to_string()),
        }
    }
}

/// A TLS option the client cannot be built from. Each variant names its option(s);
/// the text is the one printed after `rshperf: ` (a front end with other option
/// letters, ab's, words it itself by matching the variant).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsOptionError {
    /// A file of `option` that cannot be used (unreadable, no or bad PEM, no usable
    /// certificate or key): `cause` says why.
    #[error("{option} {path}: {cause}")]
    File {
        /// `--ssl-certificate`, `--ssl-key`, `--ssl-ca-file` or `--ssl-ca-path`.
        option: &'static str,
        /// The file or directory as given.
        path: String,
        /// Why it cannot be used.
        cause: String,
    },
    /// A protocol version rustls does not offer.
    #[error("--ssl-protocol {} is not offered by rustls (use auto, TLSv1.2 or TLSv1.3)", protocol.name())]
    Protocol {
        /// The version asked for.
        protocol: SslProtocol,
    },
    /// rustls refused the version set.
    #[error("--ssl-protocol: {0}")]
    Versions(String),
    /// A cipher list with no supported suite (`cause` says why).
    #[error("--ssl-ciphers: {0}")]
    Ciphers(String),
    /// A cipher list with no suite of the protocol version asked for.
    #[error("--ssl-ciphers: no cipher suite in '{spec}' can be used with --ssl-protocol {}", protocol.name())]
    CiphersForProtocol {
        /// The list as given.
        spec: String,
        /// `--ssl-protocol`.
        protocol: SslProtocol,
    },
    /// A client certificate and key that are not a pair.
    #[error("--ssl-certificate {cert} and --ssl-key {key} do not match (SSL certificate and key failed consistency check)")]
    KeyMismatch {
        /// The certificate file.
        cert: String,
        /// The key file.
        key: String,
    },
    /// `--ssl-key` without `--ssl-certificate`.
    #[error("--ssl-key requires --ssl-certificate")]
    KeyWithoutCertificate,
    /// A server name that is not a DNS name or IP address.
    #[error("{option} {name}: not a valid TLS server name")]
    ServerName {
        /// `--tls-server-name`, `--server-name` or `--server`.
        option: &'static str,
        /// The name as given.
        name: String,
    },
    /// `--ssl-verify` with nothing to trust.
    #[error("--ssl-verify: no trusted CA certificate (none in the system store; give --ssl-ca-file or --ssl-ca-path)")]
    NoTrustedRoots,
    /// rustls refused the verifier.
    #[error("--ssl-verify: {0}")]
    Verifier(String),
}

/// Everything TLS that is decided once per run: the client configuration (resumption
/// disabled), the server name for SNI and verification, and the reuse policy.
#[derive(Debug, Clone)]
pub(crate) struct TlsSettings {
    /// Configuration for connections without a session cache.
    config: Arc<ClientConfig>,
    /// SNI / verification name (an IP literal sends no SNI).
    server_name: ServerName<'static>,
    /// False with `--ssl-no-reuse`.
    reuse: bool,
    /// The certificate verifier of `config` (a session's wraps it: `checks`).
    verifier: Arc<dyn ServerCertVerifier>,
    /// QUIC's transport settings (`--quic-idle-timeout`).
    transport: Arc<quinn_proto::TransportConfig>,
}

/// One httperf session's TLS session store: connections made with it resume the
/// session of the first one. Made by `TlsSettings::session_cache`.
#[derive(Debug, Clone)]
pub(crate) struct SessionCache {
    /// The run's configuration with a private one-entry session store and a
    /// verifier counting into `checks`.
    config: Arc<ClientConfig>,
    /// The server certificates this session's handshakes checked.
    checks: checks::Checks,
}

impl TlsSettings {
    /// Builds the TLS settings of a run; None without `--ssl`. Errors name the option:
    /// a protocol rustls lacks, a cipher list with no usable suite, unreadable or
    /// mismatched certificate/key/CA files, no trusted roots, a bad server name.
    pub(crate) fn from_options(cfg: &TlsOptions) -> Result<Option<TlsSettings>, TlsOptionError> {
        if !cfg.enabled {
            return Ok(None);
        }
        let protocol = cfg.protocol.unwrap_or(SslProtocol::Auto);
        let versions = protocol_versions(protocol)?;
        let mut provider = ring::default_provider();
        if let Some(spec) = &cfg.ciphers {
            let mut suites = cipher::parse_list(spec).map_err(TlsOptionError::Ciphers)?;
            suites.retain(|s| versions.iter().any(|v| s.version() == *v));
            if suites.is_empty() {
                return Err(TlsOptionError::CiphersForProtocol {
                    spec: spec.clone(),
                    protocol,
                });
            }
            provider.cipher_suites = suites;
        }
        let provider = Arc::new(provider);
        let verifier: Arc<dyn ServerCertVerifier> = if cfg.verify {
            webpki_verifier(cfg, &provider)?
        } else {
            Arc::new(AcceptAnyServerCert(
                provider.signature_verification_algorithms,
            ))
        };
        let builder = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)
            .map_err(|e| TlsOptionError::Versions(e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::clone(&verifier));
        let mut config = match client_identity(cfg)? {
            None => builder.with_no_client_auth(),
            Some((chain, key, cert_path, key_path)) => builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| match e {
                    rustls::Error::InconsistentKeys(_) => TlsOptionError::KeyMismatch {
                        cert: cert_path.to_string(),
                        key: key_path.to_string(),
                    },
                    e => file_error("--ssl-key", key_path, e),
                })?,
        };
        config.alpn_protocols = if cfg.quic {
            vec![crate::wire::quic::ALPN_H3.to_vec()]
        } else if cfg.alpn_h2 {
            vec![ALPN_H2.to_vec()]
        } else {
            vec![ALPN_HTTP11.to_vec()]
        };
        config.resumption = Resumption::disabled();
        config.enable_early_data = cfg.quic && cfg.early_data;
        Ok(Some(TlsSettings {
            config: Arc::new(config),
            server_name: server_name(cfg)?,
            reuse: !cfg.no_reuse,
            verifier,
            transport: crate::wire::quic::transport(quic_idle(cfg.quic_idle_timeout)),
        }))
    }

    /// A fresh session store for one httperf session, or None with `--ssl-no-reuse`
    /// (every connection then does a full handshake). Costs one `ClientConfig` clone.
    pub(crate) fn session_cache(&self) -> Option<SessionCache> {
        if !self.reuse {
            return None;
        }
        let mut config = ClientConfig::clone(&self.config);
        config.resumption = Resumption::store(Arc::new(ClientSessionMemoryCache::new(1)));
        let checks = checks::Checks::default();
        config
            .dangerous()
            .set_certificate_verifier(checks.verifier(Arc::clone(&self.verifier)));
        Some(SessionCache {
            config: Arc::new(config),
            checks,
        })
    }

    /// The name sent in SNI and checked by verification (`--tls-server-name`, else
    /// `--server-name`, else `--server`).
    #[cfg(test)]
    pub(crate) fn server_name(&self) -> &ServerName<'static> {
        &self.server_name
    }

    /// A new client connection, its ClientHello queued: resuming from (and storing
    /// into) `cache` when given, a full handshake otherwise. Fails only if rustls cannot
    /// start a handshake at all (a per-connection failure, not a fatal one).
    pub(crate) fn new_connection(&self, cache: Option<&SessionCache>) -> io::Result<TlsConn> {
        let config = cache.map_or(&self.config, |c| &c.config);
        ClientConnection::new(Arc::clone(config), self.server_name.clone())
            .map(|conn| TlsConn { conn })
            .map_err(tls_error)
    }
}

/// The QUIC idle timeout offered: `--quic-idle-timeout` (0: none), else the default.
fn quic_idle(seconds: Option<f64>) -> Option<std::time::Duration> {
    match seconds {
        None => Some(crate::wire::quic::DEFAULT_IDLE),
        Some(s) if s > 0.0 => std::time::Duration::try_from_secs_f64(s).ok(),
        Some(_) => None,
    }
}

/// The rustls versions for `--ssl-protocol`; TLS 1.0/1.1 are option errors.
fn protocol_versions(
    p: SslProtocol,
) -> Result<Vec<&'static SupportedProtocolVersion>, TlsOptionError> {
    match p {
        SslProtocol::Auto => Ok(vec![&rustls::version::TLS13, &rustls::version::TLS12]),
        SslProtocol::Tls12 => Ok(vec![&rustls::version::TLS12]),
        SslProtocol::Tls13 => Ok(vec![&rustls::version::TLS13]),
        SslProtocol::Tls10 | SslProtocol::Tls11 => Err(TlsOptionError::Protocol { protocol: p }),
    }
}

/// The SNI / verification name: `--tls-server-name`, else `--server-name` (without a
/// `:port` suffix or IPv6 brackets), else `--server`. IP literals become
/// `ServerName::IpAddress`, for which rustls sends no SNI.
fn server_name(cfg: &TlsOptions) -> Result<ServerName<'static>, TlsOptionError> {
    let (option, raw) = match &cfg.server_name {
        Some(n) => ("--tls-server-name", n.as_str()),
        None => (cfg.fallback_name.0, cfg.fallback_name.1.as_str()),
    };
    let name = raw
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(raw);
    ServerName::try_from(name.to_string()).map_err(|_| TlsOptionError::ServerName {
        option,
        name: raw.to_string(),
    })
}

/// `host:port` → `host`; `[v6]:port` → `[v6]`; anything else unchanged.
fn strip_port(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((h, port))
            if !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && (!h.contains(':') || h.ends_with(']')) =>
        {
            h
        }
        _ => host,
    }
}

/// The verifier for `--ssl-verify`: system roots plus `--ssl-ca-file`/`--ssl-ca-path`.
fn webpki_verifier(
    cfg: &TlsOptions,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>, TlsOptionError> {
    let mut roots = RootCertStore::empty();
    let mut pinned = Vec::new();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if let Some(file) = &cfg.ca_file {
        let certs = read_certs("--ssl-ca-file", file)?;
        pinned.extend(certs.iter().cloned());
        let (added, _) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(file_error(
                "--ssl-ca-file",
                file,
                "no usable CA certificate",
            ));
        }
    }
    if let Some(dir) = &cfg.ca_path {
        let entries = std::fs::read_dir(dir).map_err(|e| file_error("--ssl-ca-path", dir, e))?;
        for entry in entries.flatten() {
            // Hash links, CRLs and stray files are skipped: only PEM certificates count.
            if let Ok(bytes) = std::fs::read(entry.path()) {
                let certs: Vec<_> = CertificateDer::pem_slice_iter(&bytes)
                    .filter_map(Result::ok)
                    .collect();
                pinned.extend(certs.iter().cloned());
                roots.add_parsable_certificates(certs);
            }
        }
    }
    if roots.is_empty() {
        return Err(TlsOptionError::NoTrustedRoots);
    }
    let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(provider))
        .build()
        .map_err(|e| TlsOptionError::Verifier(e.to_string()))?;
    Ok(Arc::new(TrustedOrWebPki { inner, pinned }))
}

/// `--ssl-verify`: webpki path validation, plus what OpenSSL (and so httperf) also
/// accepts: a server certificate that is itself listed in `--ssl-ca-file` or
/// `--ssl-ca-path` (a self-signed test server's own certificate, which webpki rejects
/// as "CA used as end entity") is trusted directly; its name is still checked.
#[derive(Debug)]
struct TrustedOrWebPki {
    inner: Arc<WebPkiServerVerifier>,
    pinned: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for TrustedOrWebPki {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(v) => Ok(v),
            Err(e)
                if self
                    .pinned
                    .iter()
                    .any(|c| c.as_ref() == end_entity.as_ref()) =>
            {
                let parsed =
                    rustls::server::ParsedCertificate::try_from(end_entity).map_err(|_| e)?;
                rustls::client::verify_server_name(&parsed, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            Err(e) => Err(e),
        }
    }

    forward_signatures!();
}

/// A client certificate chain and key with their file names, from `--ssl-certificate`
/// and `--ssl-key` (the key defaults to the certificate file, which may hold both).
type ClientIdentity<'a> = (
    Vec<CertificateDer<'static>>,
    PrivateKeyDer<'static>,
    &'a str,
    &'a str,
);

/// Loads the client identity, or None when no `--ssl-certificate` is given.
fn client_identity(cfg: &TlsOptions) -> Result<Option<ClientIdentity<'_>>, TlsOptionError> {
    let cert_path = match (&cfg.certificate, &cfg.key) {
        (Some(c), _) => c.as_str(),
        (None, Some(_)) => return Err(TlsOptionError::KeyWithoutCertificate),
        (None, None) => return Ok(None),
    };
    let key_path = cfg.key.as_deref().unwrap_or(cert_path);
    let chain = read_certs("--ssl-certificate", cert_path)?;
    let bytes = read_file("--ssl-key", key_path)?;
    let key = PrivateKeyDer::from_pem_slice(&bytes)
        .map_err(|e| file_error("--ssl-key", key_path, format!("no PEM private key ({e})")))?;
    Ok(Some((chain, key, cert_path, key_path)))
}

/// The PEM certificates of `path`; none is an error naming the option and file.
fn read_certs(
    option: &'static str,
    path: &str,
) -> Result<Vec<CertificateDer<'static>>, TlsOptionError> {
    let bytes = read_file(option, path)?;
    let certs: Vec<_> = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| file_error(option, path, format!("bad PEM ({e})")))?;
    if certs.is_empty() {
        return Err(file_error(option, path, "no PEM certificate in file"));
    }
    Ok(certs)
}

/// Reads a whole file; the error names the option and file.
fn read_file(option: &'static str, path: &str) -> Result<Vec<u8>, TlsOptionError> {
    std::fs::read(Path::new(path)).map_err(|e| file_error(option, path, e))
}

/// A file of `option` that cannot be used, and why.
fn file_error(option: &'static str, path: &str, cause: impl std::fmt::Display) -> TlsOptionError {
    TlsOptionError::File {
        option,
        path: path.to_string(),
        cause: cause.to_string(),
    }
}

/// Verification off (the default, as httperf): any certificate chain and name are
/// accepted, but the handshake signatures are still checked with the provider's
/// algorithms, so the peer must hold the key of the certificate it presents.
#[derive(Debug)]
struct AcceptAnyServerCert(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AcceptAnyServerCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// A rustls error as an `io::Error` whose message is rustls' reason (e.g.
/// `invalid peer certificate: UnknownIssuer`); the rustls error is its source.
fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// Whether a handshake failure's reason (`tls_error`'s message, as the engine keeps
/// it) is the verifier rejecting the server's certificate (`--ssl-verify`): rustls'
/// text for `Error::InvalidCertificate`.
pub(crate) fn is_certificate_rejection(reason: &str) -> bool {
    reason.starts_with("invalid peer certificate")
}

/// One client TLS connection, driven without blocking over a socket the caller owns.
/// Plaintext in and out goes through rustls' own buffers; nothing here allocates per
/// record.
#[derive(Debug)]
pub(crate) struct TlsConn {
    conn: ClientConnection,
}

impl TlsConn {
    /// Advances the handshake as far as the socket allows. Ok(true) once it is complete;
    /// Ok(false) when it waits for the socket (interest from `wants_read` /
    /// `wants_write`). Err: the socket failed, the peer closed (UnexpectedEof), or TLS
    /// failed (InvalidData, message = rustls' reason; the alert is sent if possible).
    ///
    /// On completion the client's last flight (its Finished, in TLS 1.3 and in resumed
    /// TLS 1.2 handshakes) is left queued so that the first `write` sends it in the
    /// same segment as the request; a caller that does not write at once must `flush`
    /// while `wants_write`.
    pub(crate) fn handshake<S: Read + Write>(&mut self, sock: &mut S) -> io::Result<bool> {
        loop {
            if !self.conn.is_handshaking() {
                return Ok(true);
            }
            if self.conn.wants_write() {
                match self.conn.write_tls(sock) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(_) => continue,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                    Err(e) => return Err(e),
                }
            }
            if !self.conn.wants_read() {
                // Handshaking but wanting neither: cannot happen in rustls; treat as
                // waiting rather than spinning.
                return Ok(false);
            }
            match self.conn.read_tls(sock) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "connection closed during TLS handshake",
                    ))
                }
                Ok(_) => self.process(sock)?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads plaintext into `buf`. Ok(0) is end of stream: the server's close_notify, or
    /// TCP EOF without one (HTTP close-delimited bodies end that way). Err(WouldBlock)
    /// when nothing is available yet; other errors as for `handshake`. Pending TLS
    /// output (alerts, key updates) is flushed on the way.
    pub(crate) fn read<S: Read + Write>(
        &mut self,
        sock: &mut S,
        buf: &mut [u8],
    ) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            match self.conn.read_tls(sock) {
                // EOF is recorded by rustls; the reader reports it on the next turn.
                // Replies that processing queued (key updates) go out at once.
                Ok(_) => {
                    self.process(sock)?;
                    self.flush(sock)?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Encrypts as much of `data` as rustls' bounded send buffer (64 KiB) takes and
    /// flushes as far as the socket takes. Returns the plaintext bytes accepted; Err(WouldBlock)
    /// when none were (the socket is full: wait for writable, then `flush` or retry).
    pub(crate) fn write<S: Read + Write>(
        &mut self,
        sock: &mut S,
        data: &[u8],
    ) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        // Queue first, then flush once: a pending last handshake flight and the request
        // leave in one writev (one segment). Only a full send buffer makes us flush
        // before queueing.
        let mut n = self.conn.writer().write(data)?;
        self.flush(sock)?;
        if n == 0 {
            n = self.conn.writer().write(data)?;
            self.flush(sock)?;
        }
        if n == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }

    /// Writes pending TLS bytes until none remain or the socket would block (then
    /// `wants_write` stays true). Errors are the socket's.
    pub(crate) fn flush<S: Write>(&mut self, sock: &mut S) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Processes received records; on a TLS error sends the alert (best effort) and
    /// returns the error with rustls' reason. What processing queued is left for the
    /// caller to write (the handshake loop, or `read`'s flush).
    fn process<S: Write>(&mut self, sock: &mut S) -> io::Result<()> {
        match self.conn.process_new_packets() {
            Ok(_) => Ok(()),
            Err(e) => {
                let _ = self.flush(sock);
                Err(tls_error(e))
            }
        }
    }

    /// Whether TLS bytes wait to be written (keep WRITABLE interest and call `flush`).
    pub(crate) fn wants_write(&self) -> bool {
        self.conn.wants_write()
    }

    /// Whether rustls needs more bytes from the peer (READABLE interest).
    #[cfg(test)]
    pub(crate) fn wants_read(&self) -> bool {
        self.conn.wants_read()
    }

    /// After the handshake: whether it resumed a cached session (else it was full).
    pub(crate) fn resumed(&self) -> bool {
        self.conn.handshake_kind() == Some(HandshakeKind::Resumed)
    }

    /// After the handshake: the protocol the server chose by ALPN, if any.
    pub(crate) fn alpn(&self) -> Option<&[u8]> {
        self.conn.alpn_protocol()
    }

    /// Queues a close_notify alert; the caller flushes it before closing the socket.
    pub(crate) fn send_close_notify(&mut self) {
        self.conn.send_close_notify();
    }

    /// The underlying rustls connection (negotiated version, suite, ALPN, …).
    pub(crate) fn connection(&self) -> &ClientConnection {
        &self.conn
    }
}
