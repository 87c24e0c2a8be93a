//! What ab prints about a TLS connection: its `SSL/TLS Protocol:` line (version, cipher
//! in OpenSSL's name, the server key's bits, the cipher's key bits) and its
//! `Server Temp Key:` line (the key exchange group).
//!
//! Owns reading those facts out of an established rustls connection, including the
//! size of the server certificate's public key, for which a few lines of DER reading
//! stand in for an X.509 crate (only the SubjectPublicKeyInfo is looked at). Called by
//! the engine for the first reply of each server of an ab or lb run.

use rustls::{NamedGroup, ProtocolVersion};

use super::cipher::openssl_name;
use super::TlsConn;

/// ab's `SSL/TLS Protocol:` value (`TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256`) and
/// `Server Temp Key:` value (`X25519 253 bits`) of an established connection.
pub(crate) fn summary(tls: &TlsConn) -> (String, Option<String>) {
    let c = tls.connection();
    let version = match c.protocol_version() {
        Some(ProtocolVersion::TLSv1_3) => "TLSv1.3".to_string(),
        Some(ProtocolVersion::TLSv1_2) => "TLSv1.2".to_string(),
        Some(v) => format!("{v:?}"),
        None => "unknown".to_string(),
    };
    let (cipher, sk_bits) = c
        .negotiated_cipher_suite()
        .and_then(|s| openssl_name(s.suite()))
        .unwrap_or(("unknown", 0));
    let pk_bits = c
        .peer_certificates()
        .and_then(|chain| chain.first())
        .and_then(|cert| public_key_bits(cert.as_ref()))
        .unwrap_or(0);
    let key = c.negotiated_key_exchange_group().map(|g| match g.name() {
        NamedGroup::X25519 => "X25519 253 bits".to_string(),
        NamedGroup::secp256r1 => "ECDH P-256 256 bits".to_string(),
        NamedGroup::secp384r1 => "ECDH P-384 384 bits".to_string(),
        NamedGroup::secp521r1 => "ECDH P-521 521 bits".to_string(),
        NamedGroup::X448 => "X448 448 bits".to_string(),
        other => format!("{other:?}"),
    });
    (format!("{version},{cipher},{pk_bits},{sk_bits}"), key)
}

/// One DER element: (tag, contents, the bytes after it).
fn tlv(buf: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = buf.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

const SEQUENCE: u8 = 0x30;
const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const ED25519: &[u8] = &[0x2b, 0x65, 0x70];
const P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const P384: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x22];
const P521: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x23];

/// Bits of the public key of a DER certificate (OpenSSL's `EVP_PKEY_bits`): the RSA
/// modulus length, the EC curve size, 253 for Ed25519. None for anything else.
pub(crate) fn public_key_bits(cert: &[u8]) -> Option<u32> {
    let (_, cert, _) = tlv(cert).filter(|t| t.0 == SEQUENCE)?;
    let (_, tbs, _) = tlv(cert).filter(|t| t.0 == SEQUENCE)?;
    let mut rest = tbs;
    // [0] version (optional), serial, signature, issuer, validity, subject, SPKI.
    if rest.first() == Some(&0xa0) {
        rest = tlv(rest)?.2;
    }
    for _ in 0..5 {
        rest = tlv(rest)?.2;
    }
    let (_, spki, _) = tlv(rest).filter(|t| t.0 == SEQUENCE)?;
    let (_, alg, key) = tlv(spki)?;
    let (_, oid, params) = tlv(alg)?;
    let (_, bits, _) = tlv(key)?;
    match oid {
        RSA => {
            let (_, rsa, _) = tlv(bits.get(1..)?)?;
            let (_, modulus, _) = tlv(rsa)?;
            let start = modulus.iter().position(|&b| b != 0)?;
            let top = 8 - modulus[start].leading_zeros();
            Some((modulus.len() - start - 1) as u32 * 8 + top)
        }
        EC => match tlv(params)?.1 {
            P256 => Some(256),
            P384 => Some(384),
            P521 => Some(521),
            _ => None,
        },
        ED25519 => Some(253),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_bits_of_ec_and_rsa_certificates() {
        let ec = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("cert");
        assert_eq!(public_key_bits(ec.cert.der()), Some(256));
        let p384 = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).expect("key");
        let params = rcgen::CertificateParams::new(vec!["x".into()]).expect("params");
        let cert = params.self_signed(&p384).expect("cert");
        assert_eq!(public_key_bits(cert.der()), Some(384));
        // A hand-made minimal certificate with a 2048-bit RSA key (modulus 0x00 0x80…):
        // SEQ { SEQ { INT serial, SEQ alg, SEQ issuer, SEQ validity, SEQ subject,
        // SEQ { SEQ { OID rsaEncryption }, BIT STRING { 0, SEQ { INT modulus, INT e } } } } }
        let mut modulus = vec![0x02, 0x82, 0x01, 0x01, 0x00, 0x80];
        modulus.extend(std::iter::repeat_n(0x11, 255));
        let mut rsa_key = vec![0x30, 0x82, 0x01, 0x0a];
        rsa_key.extend(&modulus);
        rsa_key.extend([0x02, 0x03, 0x01, 0x00, 0x01]);
        let mut bits = vec![0x03, 0x82, 0x01, 0x0f, 0x00];
        bits.extend(&rsa_key);
        let mut spki_body = vec![0x30, 0x0b, 0x06, 0x09];
        spki_body.extend(RSA);
        spki_body.extend(&bits);
        let mut spki = vec![0x30, 0x82];
        spki.extend((spki_body.len() as u16).to_be_bytes());
        spki.extend(&spki_body);
        let mut tbs_body = vec![
            0x02, 0x01, 0x01, 0x30, 0x00, 0x30, 0x00, 0x30, 0x00, 0x30, 0x00,
        ];
        tbs_body.extend(&spki);
        let mut tbs = vec![0x30, 0x82];
        tbs.extend((tbs_body.len() as u16).to_be_bytes());
        tbs.extend(&tbs_body);
        let mut cert = vec![0x30, 0x82];
        cert.extend((tbs.len() as u16).to_be_bytes());
        cert.extend(&tbs);
        assert_eq!(public_key_bits(&cert), Some(2048));
        assert_eq!(public_key_bits(&cert[..cert.len() - 3]), None);
        assert_eq!(public_key_bits(b"\x30\x03\x02\x01"), None);
    }
}
