//! A TLS client for a server the caller started with a certificate it made
//! itself: signatures are checked, the chain of trust is not. It offers
//! cipher suites in the browsers' order, so what a benchmark negotiates
//! is what real traffic does.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme, SupportedProtocolVersion};

/// A client of `versions` (rustls's safe defaults when empty) that takes
/// any certificate, offering `alpn` in order.
pub fn client_config(
    versions: &[&'static SupportedProtocolVersion],
    alpn: &[&[u8]],
) -> Arc<ClientConfig> {
    let provider = Arc::new(browser_order(rustls::crypto::ring::default_provider()));
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider));
    let builder = match versions {
        [] => builder.with_safe_default_protocol_versions(),
        _ => builder.with_protocol_versions(versions),
    }
    .expect("ring supports these versions");
    let mut config = builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// Takes whatever certificate the server shows, but only with a valid
/// signature over the handshake.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.0.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.0.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `provider` with its TLS 1.3 suites in the order browsers offer them
/// (Chromium, Firefox and Safari put AES-128-GCM first; rustls and
/// OpenSSL put AES-256-GCM first), so that a benchmark negotiates what
/// real traffic does.
pub fn browser_order(mut provider: CryptoProvider) -> CryptoProvider {
    use rustls::crypto::ring::cipher_suite::*;
    let first = [
        TLS13_AES_128_GCM_SHA256,
        TLS13_AES_256_GCM_SHA384,
        TLS13_CHACHA20_POLY1305_SHA256,
    ];
    provider.cipher_suites.retain(|s| !first.contains(s));
    provider.cipher_suites.splice(0..0, first);
    provider
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::CipherSuite;

    #[test]
    fn suites_are_offered_in_the_browsers_order_and_none_is_lost() {
        let default = rustls::crypto::ring::default_provider();
        let ordered = browser_order(rustls::crypto::ring::default_provider());
        let names = |p: &CryptoProvider| {
            p.cipher_suites
                .iter()
                .map(|s| s.suite())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&ordered)[..3],
            [
                CipherSuite::TLS13_AES_128_GCM_SHA256,
                CipherSuite::TLS13_AES_256_GCM_SHA384,
                CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
            ]
        );
        let (mut a, mut b) = (names(&default), names(&ordered));
        a.sort_by_key(|s| u16::from(*s));
        b.sort_by_key(|s| u16::from(*s));
        assert_eq!(a, b);
    }
}
