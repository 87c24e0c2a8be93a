//! `SetupError`: why ab's or lb's command line cannot become a run, in ab's words.
//!
//! Owns the texts `ab::run` prints after `ab: ` (or `lb: `): its own checks (schemes,
//! proxy, resolution) and rshperf's typed configuration and TLS errors reworded by
//! matching their variants (ab's letters `-B`, `-E`, `-f`, `-Z` for the options they
//! set). Made by `ab::setup::build`.

use thiserror::Error as ThisError;

use crate::model::config::ConfigError;
use crate::model::workload::error::WorkloadError;
use crate::wire::tls::TlsOptionError;

/// Why a `Bench` cannot be run.
#[derive(Debug, ThisError)]
pub(crate) enum SetupError {
    /// http and https URLs together.
    #[error("all URLs must use the same scheme (http or https)")]
    MixedSchemes,
    /// `-X` with https URLs.
    #[error("-X (a proxy) is not supported with https URLs")]
    ProxyWithHttps,
    /// A host (or the proxy) that does not resolve.
    #[error("cannot resolve host {host} (port {port})")]
    Resolve {
        /// The host.
        host: String,
        /// The port.
        port: u16,
    },
    /// No URL at all.
    #[error("no URL to benchmark")]
    NoUrl,
    /// The configuration refused a value (in ab's words).
    #[error("{}", ab_config_error(.0))]
    Config(ConfigError),
    /// A TLS option cannot be used (in ab's words).
    #[error("{}", ab_tls_error(.0))]
    Tls(#[from] TlsOptionError),
    /// The workload's files or checks refused it.
    #[error("{0}")]
    Workload(#[from] WorkloadError),
}

/// A refused configuration in ab's words: `-B` for `--myaddr`. ab's own parser has
/// checked the other values it passes.
fn ab_config_error(e: &ConfigError) -> String {
    match e {
        ConfigError::MyaddrBound {
            entry,
            first,
            address,
        } => format!(
            "invalid {} address {address} in -B {entry}",
            if *first { "starting" } else { "ending" }
        ),
        ConfigError::MyaddrTooMany => "-B: more than 65536 addresses".to_string(),
        e => e.to_string(),
    }
}

/// A TLS option error in ab's words: its letters (`-E`, `-Z`, `-f`) for the options
/// they set.
pub(crate) fn ab_tls_error(e: &TlsOptionError) -> String {
    match e {
        TlsOptionError::File {
            option: "--ssl-certificate" | "--ssl-key",
            path,
            cause,
        } => format!("-E {path}: {cause}"),
        TlsOptionError::Protocol { protocol } => format!(
            "-f {} is not offered by rustls (use auto, TLSv1.2 or TLSv1.3)",
            protocol.name()
        ),
        TlsOptionError::Versions(m) => format!("-f: {m}"),
        TlsOptionError::Ciphers(m) => format!("-Z: {m}"),
        TlsOptionError::CiphersForProtocol { spec, protocol } => format!(
            "-Z: no cipher suite in '{spec}' can be used with -f {}",
            protocol.name()
        ),
        TlsOptionError::KeyMismatch { cert, key } => format!(
            "-E {cert} and -E {key} do not match (SSL certificate and key failed \
             consistency check)"
        ),
        e => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::SslProtocol;

    #[test]
    fn own_texts() {
        assert_eq!(
            SetupError::MixedSchemes.to_string(),
            "all URLs must use the same scheme (http or https)"
        );
        assert_eq!(
            SetupError::ProxyWithHttps.to_string(),
            "-X (a proxy) is not supported with https URLs"
        );
        assert_eq!(
            SetupError::Resolve {
                host: "h".into(),
                port: 80
            }
            .to_string(),
            "cannot resolve host h (port 80)"
        );
        assert_eq!(SetupError::NoUrl.to_string(), "no URL to benchmark");
        assert_eq!(
            SetupError::Workload(WorkloadError::NoServerAddress).to_string(),
            "no server address"
        );
    }

    #[test]
    fn rshperf_errors_in_abs_letters() {
        assert_eq!(
            SetupError::Config(ConfigError::MyaddrTooMany).to_string(),
            "-B: more than 65536 addresses"
        );
        assert_eq!(
            SetupError::Config(ConfigError::MyaddrBound {
                entry: "a-b".into(),
                first: false,
                address: "b".into(),
            })
            .to_string(),
            "invalid ending address b in -B a-b"
        );
        assert_eq!(
            SetupError::Config(ConfigError::MyaddrRange { entry: "x".into() }).to_string(),
            ConfigError::MyaddrRange { entry: "x".into() }.to_string()
        );
        assert_eq!(
            SetupError::Tls(TlsOptionError::Protocol {
                protocol: SslProtocol::Tls12
            })
            .to_string(),
            "-f TLSv1.2 is not offered by rustls (use auto, TLSv1.2 or TLSv1.3)"
        );
        assert_eq!(
            SetupError::Tls(TlsOptionError::Ciphers("x".into())).to_string(),
            "-Z: x"
        );
    }
}
