//! HTTPS configuration: certificates chosen by SNI, the rustls settings
//! every TLS connection starts from, and the session state kept across
//! reloads.
//!
//! Owns which certificate a handshake gets ([`Certificates`], the one
//! resolver; an ACME CA's TLS-ALPN-01 validation gets the challenge's
//! certificate from [`crate::acme::Challenges`] behind it) and
//! the protocol policy (TLS 1.2 and 1.3 only, rustls's suites, which have
//! no weak ones, no renegotiation: rustls never implemented it). Does not
//! move bytes (`wire`) nor read files (the binary loads the PEM and hands
//! over [`CertifiedKey`]s).
//!
//! Invariant: a generation's [`rustls::ServerConfig`] is immutable; a new
//! certificate means a new config in the next generation, and a connection
//! keeps the config it started with until it closes. The ticket keys and the
//! session cache ([`Resumption`]) are shared by every generation, so a
//! reload does not end resumption.
//!
//! The crypto provider is ring: it builds from crates.io alone (aws-lc-rs
//! needs a C toolchain and cmake-sized build time in CI), and the handshake
//! figures measured with `tachyon-bench run --suite tls` are in
//! `bench/results/`.

use std::path::Path;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert, StoresServerSessions};
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;

use crate::acme::{Challenges, ACME_TLS_ALPN};

pub use rustls::pki_types;

/// Resumption sessions remembered per process (TLS 1.2 session IDs and
/// TLS 1.3 stateful resumption): about 200 bytes each.
const SESSION_CACHE: usize = 16 * 1024;

/// Why a certificate or key could not be used; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{path}: {reason}")]
    File { path: String, reason: String },
    #[error("{cert} and {key} do not belong together: {reason}")]
    Mismatch {
        cert: String,
        key: String,
        reason: String,
    },
    #[error("setting up TLS: {0}")]
    Setup(String),
}

/// The crypto provider every config is built with.
#[cfg(not(feature = "aws-lc-rs"))]
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The crypto provider every config is built with (`--features aws-lc-rs`,
/// kept to measure the two side by side).
#[cfg(feature = "aws-lc-rs")]
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

#[cfg(not(feature = "aws-lc-rs"))]
use rustls::crypto::ring::Ticketer;

#[cfg(feature = "aws-lc-rs")]
use rustls::crypto::aws_lc_rs::Ticketer;

/// Loads a PEM certificate chain (leaf first) and its private key (PKCS#8,
/// SEC1 or PKCS#1), and checks that they belong together.
pub fn load_key_pair(cert: &Path, key: &Path) -> Result<CertifiedKey, TlsError> {
    let file_error = |path: &Path, reason: String| TlsError::File {
        path: path.display().to_string(),
        reason,
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| file_error(cert, pem_reason(e)))?;
    if chain.is_empty() {
        return Err(file_error(cert, "no CERTIFICATE block in it".into()));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| file_error(key, pem_reason(e)))?;
    from_der(chain, private).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => TlsError::Mismatch {
            cert: cert.display().to_string(),
            key: key.display().to_string(),
            reason: e.to_string(),
        },
        other => file_error(key, other.to_string()),
    })
}

/// A key pair from DER: the chain (leaf first) and its private key.
pub fn from_der(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<CertifiedKey, rustls::Error> {
    CertifiedKey::from_der(chain, key, &provider())
}

/// A key pair from DER without rustls's check that the two belong
/// together, which parses the certificate with webpki: a TLS-ALPN-01
/// validation certificate carries the critical `acmeIdentifier`
/// extension (RFC 8737 §3) that webpki refuses to parse. Its caller made
/// both halves a moment before.
pub fn from_der_unchecked(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<CertifiedKey, rustls::Error> {
    let signer = provider().key_provider.load_private_key(key)?;
    Ok(CertifiedKey::new(chain, signer))
}

fn pem_reason(e: rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    match e {
        Error::Io(io) => io.to_string(),
        Error::NoItemsFound => "no PEM block of the expected kind in it".into(),
        other => format!("not valid PEM: {other:?}"),
    }
}

/// Which certificate a handshake gets: the one whose names include the
/// client's SNI name (exactly, or by a `*.` wildcard one label deep), else
/// the default.
#[derive(Debug, Default)]
pub struct Certificates {
    default: Option<Arc<CertifiedKey>>,
    /// Lowercase names without trailing dot; `*.example.com` as written.
    named: Vec<(Box<str>, Arc<CertifiedKey>)>,
    /// TLS-ALPN-01 answers, when certificates are ordered by ACME.
    challenges: Option<Arc<Challenges>>,
}

impl Certificates {
    /// Certificates with `default` for unknown and missing names.
    pub fn new(default: Option<Arc<CertifiedKey>>) -> Certificates {
        Certificates {
            default,
            named: Vec::new(),
            challenges: None,
        }
    }

    /// Answers TLS-ALPN-01 validations from `challenges`.
    pub fn with_challenges(mut self, challenges: Arc<Challenges>) -> Certificates {
        self.challenges = Some(challenges);
        self
    }

    /// Adds a certificate for `names` (a virtual host's).
    pub fn with_names(mut self, names: &[String], key: Arc<CertifiedKey>) -> Certificates {
        for name in names {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            self.named.push((name.into(), Arc::clone(&key)));
        }
        self
    }

    /// True when no handshake could succeed (a certificate still to be
    /// ordered does not count).
    pub fn is_empty(&self) -> bool {
        self.default.is_none() && self.named.is_empty() && self.challenges.is_none()
    }

    fn find(&self, sni: Option<&str>) -> Option<Arc<CertifiedKey>> {
        let Some(sni) = sni else {
            return self.default.clone();
        };
        // rustls hands over the name already lowercased and checked.
        let sni = sni.trim_end_matches('.');
        let wildcard_base = sni.split_once('.').map(|(_, rest)| rest);
        self.named
            .iter()
            .find(|(name, _)| &**name == sni)
            .or_else(|| {
                self.named.iter().find(|(name, _)| {
                    name.strip_prefix("*.")
                        .is_some_and(|base| Some(base) == wildcard_base)
                })
            })
            .map(|(_, key)| Arc::clone(key))
            .or_else(|| self.default.clone())
    }
}

impl ResolvesServerCert for Certificates {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        if let Some(challenges) = &self.challenges {
            // RFC 8737 §3: the validator offers `acme-tls/1` alone, and
            // gets the challenge's certificate or no handshake at all.
            let mut offered = hello.alpn().into_iter().flatten();
            if offered.next() == Some(ACME_TLS_ALPN) && offered.next().is_none() {
                return challenges.tls_alpn(hello.server_name()?);
            }
        }
        self.find(hello.server_name())
    }
}

/// What resumption needs to outlive a generation: the ticket keys (rotated
/// every six hours by rustls's ticketer) and the stateful session cache.
#[derive(Debug, Clone)]
pub struct Resumption {
    ticketer: Arc<dyn rustls::server::ProducesTickets>,
    sessions: Arc<dyn StoresServerSessions>,
}

impl Resumption {
    pub fn new() -> Result<Resumption, TlsError> {
        Ok(Resumption {
            ticketer: Ticketer::new().map_err(|e| TlsError::Setup(e.to_string()))?,
            sessions: rustls::server::ServerSessionMemoryCache::new(SESSION_CACHE),
        })
    }

    /// The settings TLS connections of one generation start from.
    /// `h2` offers HTTP/2 in ALPN, preferred over HTTP/1.1 (RFC 9113 §3.2);
    /// `http/1.0` is taken too (what `curl --http1.0` offers alone; nginx
    /// takes it); certificates that answer ACME challenges add
    /// `acme-tls/1`, last (only a validator offers it, and then alone).
    pub fn config(
        &self,
        certificates: Certificates,
        h2: bool,
    ) -> Result<Arc<ServerConfig>, TlsError> {
        let acme = certificates.challenges.is_some();
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| TlsError::Setup(e.to_string()))?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(certificates));
        config.alpn_protocols = match h2 {
            true => vec![b"h2".to_vec(), b"http/1.1".to_vec(), b"http/1.0".to_vec()],
            false => vec![b"http/1.1".to_vec(), b"http/1.0".to_vec()],
        };
        if acme {
            config.alpn_protocols.push(ACME_TLS_ALPN.to_vec());
        }
        config.ticketer = Arc::clone(&self.ticketer);
        config.session_storage = Arc::clone(&self.sessions);
        // The client's cipher order is a better guide to what its hardware
        // does fast (AES-GCM with AES-NI, ChaCha20 without).
        config.ignore_client_order = false;
        // TLS 1.3 records are protected by `record` once the handshake is
        // done: rustls hands over the keys through its kernel-connection
        // API, which then derives the next ones on a key update. The key
        // log stays free for SSLKEYLOGFILE (`KeyLogFile` honours it).
        config.enable_secret_extraction = true;
        config.key_log = Arc::new(rustls::KeyLogFile::new());
        Ok(Arc::new(config))
    }
}
