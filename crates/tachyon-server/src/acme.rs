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
//! Replicas behind one load balancer share the ACME folder, and the CA's
//! validator reaches whichever replica the balancer picks, not the one
//! that ordered: an answer is also written to the folder's `challenges/`,
//! and a replica that does not hold it in memory reads it from there.
//!
//! Invariant: a challenge answer is present exactly while the client waits
//! for the CA to validate it; both tables are empty at rest, so the hot path
//! pays one uncontended read lock only for the requests that name the
//! challenge path or offer the `acme-tls/1` protocol (and, with a shared
//! folder, a file lookup for the ones not in memory).

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
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
    /// The folder every replica sharing the ACME folder reads answers from.
    shared: Option<PathBuf>,
}

impl Challenges {
    /// Answers also kept in `folder` (the ACME folder's `challenges/`), for
    /// replicas that share it.
    pub fn shared(folder: PathBuf) -> Challenges {
        Challenges {
            shared: Some(folder),
            ..Challenges::default()
        }
    }

    /// Shows `key` for `name`; `pem` (its certificate and private key) is
    /// what the other replicas read.
    pub fn show_tls_alpn(&self, name: &str, key: Arc<CertifiedKey>, pem: &str) {
        let name = name.to_ascii_lowercase();
        if let Some(path) = self.file("tls-alpn-01", &name) {
            write_private(&path, pem.as_bytes());
        }
        let mut table = self.tls_alpn.write().unwrap_or_else(|e| e.into_inner());
        table.insert(name, key);
    }

    pub fn hide_tls_alpn(&self, name: &str) {
        let name = name.to_ascii_lowercase();
        if let Some(path) = self.file("tls-alpn-01", &name) {
            let _ = fs::remove_file(path);
        }
        let mut table = self.tls_alpn.write().unwrap_or_else(|e| e.into_inner());
        table.remove(&name);
    }

    pub fn show_http(&self, token: &str, key_authorization: &str) {
        if let Some(path) = self.file("http-01", token) {
            write_private(&path, key_authorization.as_bytes());
        }
        let mut table = self.http.write().unwrap_or_else(|e| e.into_inner());
        table.insert(token.to_string(), key_authorization.into());
    }

    pub fn hide_http(&self, token: &str) {
        if let Some(path) = self.file("http-01", token) {
            let _ = fs::remove_file(path);
        }
        let mut table = self.http.write().unwrap_or_else(|e| e.into_inner());
        table.remove(token);
    }

    /// The validation certificate for `name`, while its challenge runs
    /// (here, or in a replica sharing the folder).
    pub fn tls_alpn(&self, name: &str) -> Option<Arc<CertifiedKey>> {
        let name = name.to_ascii_lowercase();
        {
            let table = self.tls_alpn.read().unwrap_or_else(|e| e.into_inner());
            if let Some(key) = table.get(&name) {
                return Some(Arc::clone(key));
            }
        }
        let pem = fs::read(self.file("tls-alpn-01", &name)?).ok()?;
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<_, _>>()
            .ok()?;
        let private = PrivateKeyDer::from_pem_slice(&pem).ok()?;
        crate::tls::from_der_unchecked(chain, private)
            .ok()
            .map(Arc::new)
    }

    /// The key authorization for a request path, if it is the challenge
    /// path of a token on show (here, or in a replica sharing the folder).
    pub fn http_answer(&self, path: &[u8]) -> Option<Arc<str>> {
        let token = path.strip_prefix(CHALLENGE_PATH)?;
        let token = std::str::from_utf8(token).ok()?;
        {
            let table = self.http.read().unwrap_or_else(|e| e.into_inner());
            if let Some(answer) = table.get(token) {
                return Some(Arc::clone(answer));
            }
        }
        let answer = fs::read_to_string(self.file("http-01", token)?).ok()?;
        Some(answer.trim().into())
    }

    /// The shared file of one answer, when there is a shared folder and the
    /// name is one a CA would use (a DNS name; a token is base64url, RFC
    /// 8555 §8.3): never a path out of the folder.
    fn file(&self, kind: &str, name: &str) -> Option<PathBuf> {
        let folder = self.shared.as_ref()?;
        let safe = !name.is_empty()
            && !name.starts_with('.')
            && name.len() <= 255
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        safe.then(|| folder.join(kind).join(name))
    }
}

/// Writes a file readable by its owner only, replacing it by rename so a
/// reader sees all of it or nothing; a failure costs only the replicas'
/// share of this answer.
fn write_private(path: &Path, data: &[u8]) {
    let Some(folder) = path.parent() else { return };
    let temp = path.with_extension(format!("tmp-{}", std::process::id()));
    let written = (|| {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(folder)?;
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(data)?;
        fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
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

    #[test]
    fn a_replica_sharing_the_folder_answers_what_another_shows() {
        let folder = tachyon_testkit::Scratch::new("challenges");
        let ordering = Challenges::shared(folder.path().to_path_buf());
        let other = Challenges::shared(folder.path().to_path_buf());
        ordering.show_http("tok-EN_1", "tok-EN_1.thumb");
        assert_eq!(
            other
                .http_answer(b"/.well-known/acme-challenge/tok-EN_1")
                .as_deref(),
            Some("tok-EN_1.thumb")
        );
        for hostile in ["../../etc/passwd", "..", ".hidden", "a/b", ""] {
            let path = format!("/.well-known/acme-challenge/{hostile}");
            assert!(other.http_answer(path.as_bytes()).is_none(), "{hostile}");
        }
        ordering.hide_http("tok-EN_1");
        assert!(other
            .http_answer(b"/.well-known/acme-challenge/tok-EN_1")
            .is_none());

        let issued = rcgen::generate_simple_self_signed(vec!["site.test".to_string()]).unwrap();
        let pem = format!("{}{}", issued.cert.pem(), issued.key_pair.serialize_pem());
        let key = crate::tls::from_der_unchecked(
            vec![issued.cert.der().clone()],
            PrivateKeyDer::from_pem_slice(pem.as_bytes()).unwrap(),
        )
        .unwrap();
        ordering.show_tls_alpn("Site.Test", Arc::new(key), &pem);
        let read = other.tls_alpn("site.test").expect("read from the folder");
        assert_eq!(read.cert[0], *issued.cert.der());
        assert!(other.tls_alpn("other.test").is_none());
        ordering.hide_tls_alpn("site.test");
        assert!(other.tls_alpn("site.test").is_none());
    }
}
