//! `--ssl-ciphers`: OpenSSL-style cipher lists mapped onto the rustls *ring* suites.
//!
//! Owns the name table and the list grammar; does not build configurations (that is
//! `tls::TlsSettings::from_config`, the only caller). rustls offers nine suites (three
//! TLS 1.3, six TLS 1.2 ECDHE with AES-GCM or ChaCha20-Poly1305), so every other OpenSSL
//! cipher (RC4, 3DES, CBC, static RSA, DHE, PSK, …) is "unsupported".
//!
//! Grammar (a subset of `ciphers(1)`): entries separated by `:`, `,` or spaces. An entry
//! is a suite name — OpenSSL (`ECDHE-RSA-AES128-GCM-SHA256`, `TLS_AES_128_GCM_SHA256`),
//! IANA (`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`) or rustls (`TLS13_AES_128_GCM_SHA256`),
//! case-insensitive — or a keyword (`ALL`, `DEFAULT`, `HIGH`, `SECURE`: every suite;
//! `ECDHE`/`EECDH`/`kECDHE`/`kEECDH`, `ECDSA`/`aECDSA`, `aRSA`, `AES`, `AES128`,
//! `AES256`, `AESGCM`, `CHACHA20`, `SHA256`, `SHA384`, `TLSv1.2`, `TLSv1.3`), or
//! keywords joined by `+` (intersection, e.g. `ECDHE+AESGCM`). `!x` removes x for good,
//! `-x` removes x from what is listed so far, `+x` moves x to the end, and `@STRENGTH` /
//! `@SECLEVEL=n` are accepted and ignored. Unlike OpenSSL, the list also governs TLS 1.3:
//! a list of TLS 1.2 suites only means TLS 1.2 only. Order of first mention is the
//! client's preference order.

use rustls::crypto::ring::cipher_suite as rs;
use rustls::SupportedCipherSuite;

const TLS13: u16 = 1 << 0;
const TLS12: u16 = 1 << 1;
const ECDHE: u16 = 1 << 2;
const ECDSA: u16 = 1 << 3;
const RSA: u16 = 1 << 4;
const AES128: u16 = 1 << 5;
const AES256: u16 = 1 << 6;
const GCM: u16 = 1 << 7;
const CHACHA: u16 = 1 << 8;
const SHA256: u16 = 1 << 9;
const SHA384: u16 = 1 << 10;

/// One rustls suite with its names and the properties keywords select on.
struct Entry {
    suite: SupportedCipherSuite,
    openssl: &'static str,
    iana: &'static str,
    rustls: &'static str,
    tags: u16,
}

/// Every suite of the *ring* provider, in rustls' default preference order.
static TABLE: [Entry; 9] = [
    Entry {
        suite: rs::TLS13_AES_256_GCM_SHA384,
        openssl: "TLS_AES_256_GCM_SHA384",
        iana: "TLS_AES_256_GCM_SHA384",
        rustls: "TLS13_AES_256_GCM_SHA384",
        tags: TLS13 | AES256 | GCM | SHA384,
    },
    Entry {
        suite: rs::TLS13_AES_128_GCM_SHA256,
        openssl: "TLS_AES_128_GCM_SHA256",
        iana: "TLS_AES_128_GCM_SHA256",
        rustls: "TLS13_AES_128_GCM_SHA256",
        tags: TLS13 | AES128 | GCM | SHA256,
    },
    Entry {
        suite: rs::TLS13_CHACHA20_POLY1305_SHA256,
        openssl: "TLS_CHACHA20_POLY1305_SHA256",
        iana: "TLS_CHACHA20_POLY1305_SHA256",
        rustls: "TLS13_CHACHA20_POLY1305_SHA256",
        tags: TLS13 | CHACHA | SHA256,
    },
    Entry {
        suite: rs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        openssl: "ECDHE-ECDSA-AES256-GCM-SHA384",
        iana: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        rustls: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        tags: TLS12 | ECDHE | ECDSA | AES256 | GCM | SHA384,
    },
    Entry {
        suite: rs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        openssl: "ECDHE-ECDSA-AES128-GCM-SHA256",
        iana: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        rustls: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        tags: TLS12 | ECDHE | ECDSA | AES128 | GCM | SHA256,
    },
    Entry {
        suite: rs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        openssl: "ECDHE-ECDSA-CHACHA20-POLY1305",
        iana: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        rustls: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        tags: TLS12 | ECDHE | ECDSA | CHACHA | SHA256,
    },
    Entry {
        suite: rs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        openssl: "ECDHE-RSA-AES256-GCM-SHA384",
        iana: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        rustls: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        tags: TLS12 | ECDHE | RSA | AES256 | GCM | SHA384,
    },
    Entry {
        suite: rs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        openssl: "ECDHE-RSA-AES128-GCM-SHA256",
        iana: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        rustls: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        tags: TLS12 | ECDHE | RSA | AES128 | GCM | SHA256,
    },
    Entry {
        suite: rs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        openssl: "ECDHE-RSA-CHACHA20-POLY1305",
        iana: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        rustls: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        tags: TLS12 | ECDHE | RSA | CHACHA | SHA256,
    },
];

/// The OpenSSL name of a negotiated suite and its symmetric key bits (ab's
/// `SSL/TLS Protocol` line).
pub(crate) fn openssl_name(suite: rustls::CipherSuite) -> Option<(&'static str, u32)> {
    TABLE.iter().find(|e| e.suite.suite() == suite).map(|e| {
        let bits = if e.tags & AES128 != 0 { 128 } else { 256 };
        (e.openssl, bits)
    })
}

/// The set of table indices (bit i = `TABLE[i]`) one name selects; 0 when it selects
/// no rustls suite (unknown name, or a keyword for ciphers rustls lacks).
fn select(name: &str) -> u16 {
    name.split('+')
        .map(select_one)
        .fold(u16::MAX, |acc, set| acc & set)
}

/// `select` for a single name or keyword (no `+`).
fn select_one(name: &str) -> u16 {
    let tags = match name.to_ascii_uppercase().as_str() {
        "ALL" | "DEFAULT" | "HIGH" | "SECURE" => return all(),
        "TLSV1.3" => TLS13,
        "TLSV1.2" => TLS12,
        "ECDHE" | "EECDH" | "KECDHE" | "KEECDH" => ECDHE,
        "ECDSA" | "AECDSA" => ECDSA,
        "ARSA" => RSA,
        "AES" => AES128 | AES256,
        "AES128" => AES128,
        "AES256" => AES256,
        "AESGCM" => GCM,
        "CHACHA20" => CHACHA,
        "SHA256" => SHA256,
        "SHA384" => SHA384,
        _ => {
            return TABLE
                .iter()
                .enumerate()
                .filter(|(_, e)| {
                    [e.openssl, e.iana, e.rustls]
                        .iter()
                        .any(|n| n.eq_ignore_ascii_case(name))
                })
                .fold(0, |acc, (i, _)| acc | 1 << i)
        }
    };
    TABLE
        .iter()
        .enumerate()
        .filter(|(_, e)| e.tags & tags != 0)
        .fold(0, |acc, (i, _)| acc | 1 << i)
}

/// Every table index.
fn all() -> u16 {
    (1 << TABLE.len()) - 1
}

/// Parses an `--ssl-ciphers` list into rustls suites in preference order. Err is the
/// message (without `rshperf: `) when no supported suite remains, naming the entries
/// that selected nothing.
pub(crate) fn parse_list(spec: &str) -> Result<Vec<SupportedCipherSuite>, String> {
    let mut order: Vec<usize> = Vec::with_capacity(TABLE.len());
    let mut banned: u16 = 0;
    let mut unsupported: Vec<&str> = Vec::new();
    let entries = spec
        .split([':', ',', ' '])
        .filter(|t| !t.is_empty() && !t.starts_with('@'));
    for entry in entries {
        let (op, name) = match entry.as_bytes()[0] {
            b'!' | b'-' | b'+' => (entry.as_bytes()[0], &entry[1..]),
            _ => (b'=', entry),
        };
        let set = select(name);
        let has = |i: &usize| set & (1 << *i) != 0;
        match op {
            b'!' => {
                banned |= set;
                order.retain(|i| !has(i));
            }
            b'-' => order.retain(|i| !has(i)),
            b'+' => {
                let (moved, kept): (Vec<usize>, Vec<usize>) = order.iter().partition(|i| has(i));
                order = kept;
                order.extend(moved);
            }
            _ => {
                if set == 0 {
                    unsupported.push(entry);
                }
                for i in 0..TABLE.len() {
                    if has(&i) && banned & (1 << i) == 0 && !order.contains(&i) {
                        order.push(i);
                    }
                }
            }
        }
    }
    if order.is_empty() {
        let why = if unsupported.is_empty() {
            "every suite is excluded".to_string()
        } else {
            format!("unsupported: {}", unsupported.join(", "))
        };
        return Err(format!("no supported cipher suite in '{spec}' ({why})"));
    }
    Ok(order.into_iter().map(|i| TABLE[i].suite).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::CipherSuite as C;

    fn ids(spec: &str) -> Vec<C> {
        parse_list(spec)
            .expect("supported list")
            .iter()
            .map(|s| s.suite())
            .collect()
    }

    #[test]
    fn openssl_iana_and_rustls_names() {
        assert_eq!(
            ids("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384"),
            [
                C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
                C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
            ]
        );
        assert_eq!(
            ids("ECDHE-RSA-CHACHA20-POLY1305, TLS_AES_128_GCM_SHA256"),
            [
                C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
                C::TLS13_AES_128_GCM_SHA256
            ]
        );
        assert_eq!(
            ids("tls13_aes_256_gcm_sha384 TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
            [
                C::TLS13_AES_256_GCM_SHA384,
                C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
            ]
        );
    }

    #[test]
    fn keywords_select_groups() {
        assert_eq!(ids("HIGH").len(), 9);
        assert_eq!(ids("DEFAULT").len(), 9);
        assert_eq!(ids("ALL:!aNULL").len(), 9);
        assert_eq!(ids("ECDHE+AESGCM").len(), 4);
        assert_eq!(
            ids("ECDSA+CHACHA20"),
            [C::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256]
        );
        assert_eq!(ids("TLSv1.3").len(), 3);
        assert_eq!(ids("HIGH:!TLSv1.3:-aRSA").len(), 3);
        assert_eq!(ids("HIGH:!CHACHA20:CHACHA20").len(), 6);
        // `+x` moves x to the end.
        assert_eq!(
            ids("AES128:+TLSv1.3")[0],
            C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
        );
        // Unsupported entries next to supported ones are ignored, as OpenSSL does.
        assert_eq!(
            ids("RC4-MD5:ECDHE-RSA-AES256-GCM-SHA384:@STRENGTH").len(),
            1
        );
    }

    #[test]
    fn no_supported_suite_names_the_unsupported() {
        assert_eq!(
            parse_list("RC4-MD5:DES-CBC3-SHA"),
            Err("no supported cipher suite in 'RC4-MD5:DES-CBC3-SHA' \
                 (unsupported: RC4-MD5, DES-CBC3-SHA)"
                .into())
        );
        assert_eq!(
            parse_list("ALL:!ALL"),
            Err("no supported cipher suite in 'ALL:!ALL' \
                 (every suite is excluded)"
                .into())
        );
        assert!(parse_list("").is_err());
    }
}
