//! What automatic certificates need from the server while it serves: the
//! answers to an ACME CA's challenges, and the certificates' facts for
//! `/status` and `/metrics`.
//!
//! Owns the shared tables only. The ACME client (the binary's `acme`
//! module, on a thread of its own) fills them; the TLS resolver reads the
//! TLS-ALPN-01 certificates (RFC 8737) during handshakes, HTTP/1.1 on the
//! plain listeners reads the HTTP-01 key authorizations (RFC 8555 §8.3),
//! and the admin listener reads the facts. Nothing here orders, stores or
//! schedules.
//!
//! Invariant: a challenge answer is present exactly while the client waits
//! for the CA to validate it; both tables are empty at rest, so the hot path
//! pays one uncontended read lock only for the requests that name the
//! challenge path or offer the `acme-tls/1` protocol.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rustls::sign::CertifiedKey;

/// The ALPN protocol of TLS-ALPN-01 validation (RFC 8737 §6.2).
pub const ACME_TLS_ALPN: &[u8] = b"acme-tls/1";

/// Where HTTP-01 tokens are asked for (RFC 8555 §8.3).
pub const CHALLENGE_PATH: &[u8] = b"/.well-known/acme-challenge/";

/// The challenge answers on show.
#[derive(Debug, Default)]
pub struct Challenges {
    /// Lowercase DNS name → its self-signed validation certificate.
    tls_alpn: RwLock<HashMap<String, Arc<CertifiedKey>>>,
    /// Token → key authorization.
    http: RwLock<HashMap<String, Arc<str>>>,
}

impl Challenges {
    pub fn show_tls_alpn(&self, name: &str, key: Arc<CertifiedKey>) {
        let mut table = self.tls_alpn.write().unwrap_or_else(|e| e.into_inner());
        table.insert(name.to_ascii_lowercase(), key);
    }

    pub fn hide_tls_alpn(&self, name: &str) {
        let mut table = self.tls_alpn.write().unwrap_or_else(|e| e.into_inner());
        table.remove(&name.to_ascii_lowercase());
    }

    pub fn show_http(&self, token: &str, key_authorization: &str) {
        let mut table = self.http.write().unwrap_or_else(|e| e.into_inner());
        table.insert(token.to_string(), key_authorization.into());
    }

    pub fn hide_http(&self, token: &str) {
        let mut table = self.http.write().unwrap_or_else(|e| e.into_inner());
        table.remove(token);
    }

    /// The validation certificate for `name`, while its challenge runs.
    pub fn tls_alpn(&self, name: &str) -> Option<Arc<CertifiedKey>> {
        let table = self.tls_alpn.read().unwrap_or_else(|e| e.into_inner());
        table.get(&name.to_ascii_lowercase()).cloned()
    }

    /// The key authorization for a request path, if it is the challenge
    /// path of a token on show.
    pub fn http_answer(&self, path: &[u8]) -> Option<Arc<str>> {
        let token = path.strip_prefix(CHALLENGE_PATH)?;
        let token = std::str::from_utf8(token).ok()?;
        let table = self.http.read().unwrap_or_else(|e| e.into_inner());
        table.get(token).cloned()
    }
}

/// One managed certificate, as `/status` shows it.
#[derive(Debug, Clone, Default)]
pub struct CertificateFacts {
    pub names: Vec<String>,
    pub issuer: Option<String>,
    /// Unix seconds.
    pub not_after: Option<i64>,
    /// Unix seconds of the next order (renewal or retry).
    pub next_order: Option<i64>,
    /// What the last attempt said, when it failed.
    pub last_error: Option<String>,
}

/// What the ACME client reports, for `/status` and `/metrics`.
#[derive(Debug, Default)]
pub struct CertificateBoard {
    certificates: Mutex<Vec<CertificateFacts>>,
    orders_succeeded: AtomicU64,
    orders_failed: AtomicU64,
}

impl CertificateBoard {
    /// Replaces what is known of the certificate for `names`.
    pub fn set(&self, facts: CertificateFacts) {
        let mut all = self.certificates.lock().unwrap_or_else(|e| e.into_inner());
        match all.iter_mut().find(|c| c.names == facts.names) {
            Some(known) => *known = facts,
            None => all.push(facts),
        }
    }

    pub fn order_succeeded(&self) {
        self.orders_succeeded.fetch_add(1, Ordering::Relaxed);
    }

    pub fn order_failed(&self) {
        self.orders_failed.fetch_add(1, Ordering::Relaxed);
    }

    pub fn certificates(&self) -> Vec<CertificateFacts> {
        self.certificates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Orders that ended with a certificate, and those that did not.
    pub fn orders(&self) -> (u64, u64) {
        (
            self.orders_succeeded.load(Ordering::Relaxed),
            self.orders_failed.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_answers_only_tokens_on_show_under_the_challenge_path() {
        let c = Challenges::default();
        assert!(c.http_answer(b"/.well-known/acme-challenge/abc").is_none());
        c.show_http("abc", "abc.thumb");
        assert_eq!(
            c.http_answer(b"/.well-known/acme-challenge/abc").as_deref(),
            Some("abc.thumb")
        );
        assert!(c.http_answer(b"/abc").is_none());
        assert!(c.http_answer(b"/.well-known/acme-challenge/abcd").is_none());
        c.hide_http("abc");
        assert!(c.http_answer(b"/.well-known/acme-challenge/abc").is_none());
    }
}
