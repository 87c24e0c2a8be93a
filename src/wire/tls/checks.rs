//! Counting the server certificate checks of one httperf session's handshakes: a
//! TLS 1.3 handshake that resumes a session carries no certificate, so a connection
//! during whose handshake the count did not move resumed. This is how HTTP/3
//! connections tell (quinn-proto does not expose rustls' handshake kind); TCP
//! connections ask rustls.
//!
//! The session's `ClientConfig` holds the counting verifier for its whole life:
//! rustls resumes only with the verifier that stored the session.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::DistinguishedName;

/// How many server certificates one session's handshakes have checked.
#[derive(Debug, Clone, Default)]
pub(crate) struct Checks(Arc<AtomicU64>);

impl Checks {
    /// The run's verifier, counting into these checks.
    pub(super) fn verifier(
        &self,
        inner: Arc<dyn ServerCertVerifier>,
    ) -> Arc<dyn ServerCertVerifier> {
        Arc::new(Counting {
            inner,
            checks: self.clone(),
        })
    }

    /// What tells, once a handshake started now has completed, whether it resumed.
    pub(crate) fn resumed(&self) -> Resumed {
        Resumed(Some((self.clone(), self.0.load(Ordering::Relaxed))))
    }
}

/// Whether a handshake resumed: its session's check count when it started (None: a
/// connection without a session store, which never resumes).
#[derive(Debug, Clone, Default)]
pub(crate) struct Resumed(Option<(Checks, u64)>);

impl Resumed {
    /// A connection that cannot resume (no session store).
    pub(crate) fn never() -> Resumed {
        Resumed(None)
    }

    /// True when no certificate was checked since the handshake started. Of two
    /// handshakes of one session at once, a full one makes both count as full.
    pub(crate) fn get(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|(c, at)| c.0.load(Ordering::Relaxed) == *at)
    }
}

/// A verifier that counts its certificate checks and leaves the verdict to `inner`.
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn ServerCertVerifier>,
    checks: Checks,
}

impl ServerCertVerifier for Counting {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.checks.0.fetch_add(1, Ordering::Relaxed);
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    forward_signatures!();

    fn requires_raw_public_keys(&self) -> bool {
        self.inner.requires_raw_public_keys()
    }

    fn root_hint_subjects(&self) -> Option<&[DistinguishedName]> {
        self.inner.root_hint_subjects()
    }
}
