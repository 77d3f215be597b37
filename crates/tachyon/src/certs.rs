//! Certificates for a generation: read from their PEM files at every build
//! (so a reload picks up renewed ones, an ACME order's included), or made
//! once at start with `--tls-self-signed`; and the files' stamps, which the
//! watcher polls.
//!
//! Owns reading and generating; which certificate a handshake gets is
//! `tachyon_server::tls::Certificates`. A failure names the file.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;
use tachyon::config::{AcmeSettings, Identity, Settings, TlsSettings};
use tachyon_server::acme::Challenges;
use tachyon_server::tls::{self, Certificates, Resumption};

/// The HTTPS state that lives as long as the process.
pub struct Tls {
    resumption: Resumption,
    /// Made at start with `--tls-self-signed`.
    self_signed: Option<Arc<CertifiedKey>>,
    /// With `--acme`: the challenge answers the ACME client puts on show.
    challenges: Option<Arc<Challenges>>,
}

impl Tls {
    /// Sets up resumption and, when asked, makes the self-signed
    /// certificate (printing its fingerprint unless quiet); with `acme`,
    /// the table of challenge answers, shared through its folder.
    pub fn start(
        settings: &TlsSettings,
        acme: Option<&AcmeSettings>,
        quiet: bool,
    ) -> anyhow::Result<Tls> {
        let self_signed = match settings.identity {
            Identity::SelfSigned => {
                let (key, fingerprint) = self_signed()?;
                if !quiet {
                    crate::say(&format!(
                        "self-signed certificate for localhost, 127.0.0.1 and ::1 \
                         (browsers will warn), SHA-256 {fingerprint}"
                    ));
                }
                Some(Arc::new(key))
            }
            _ => None,
        };
        // Answers go to the ACME folder too: replicas sharing it behind a
        // load balancer answer the validations that reach them.
        let challenges = match (&settings.identity, acme) {
            (Identity::Acme(_), Some(acme)) => {
                Some(Arc::new(Challenges::shared(acme.dir.join("challenges"))))
            }
            (Identity::Acme(_), None) => Some(Arc::default()),
            _ => None,
        };
        Ok(Tls {
            resumption: Resumption::new()?,
            self_signed,
            challenges,
        })
    }

    /// The challenge answers, when certificates are ordered by ACME.
    pub fn challenges(&self) -> Option<Arc<Challenges>> {
        self.challenges.clone()
    }

    /// Reads every certificate the settings name and builds the TLS
    /// settings of one generation.
    pub fn config(&self, settings: &Settings) -> anyhow::Result<Arc<ServerConfig>> {
        let Some(tls) = &settings.tls else {
            anyhow::bail!("HTTPS is not configured");
        };
        let default = match &tls.identity {
            Identity::Files(files) => Some(Arc::new(tls::load_key_pair(&files.cert, &files.key)?)),
            Identity::SelfSigned => self.self_signed.clone(),
            Identity::VirtualHostsOnly => None,
            // None until the first order succeeds; a stored pair that does
            // not load is ordered again by the ACME client, which says why.
            Identity::Acme(files) => tls::load_key_pair(&files.cert, &files.key)
                .ok()
                .map(Arc::new),
        };
        let mut certificates = Certificates::new(default);
        if let Some(challenges) = &self.challenges {
            certificates = certificates.with_challenges(Arc::clone(challenges));
        }
        for host in &settings.hosts {
            if let Some(files) = &host.tls {
                let key = tls::load_key_pair(&files.cert, &files.key)
                    .with_context(|| format!("virtual host {}", host.names.join(", ")))?;
                certificates = certificates.with_names(&host.names, Arc::new(key));
            }
        }
        Ok(self
            .resumption
            .config(certificates, settings.limits.h2.is_some())?)
    }
}

/// An ECDSA P-256 certificate for localhost, and its SHA-256 fingerprint.
fn self_signed() -> anyhow::Result<(CertifiedKey, String)> {
    let names = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    let made = rcgen::generate_simple_self_signed(names).context("making a certificate")?;
    let der: CertificateDer<'static> = made.cert.der().clone();
    let fingerprint = ring::digest::digest(&ring::digest::SHA256, &der)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.key_pair.serialize_der()));
    let key = tls::from_der(vec![der], key).context("loading the made certificate")?;
    Ok((key, fingerprint))
}

/// What identifies a certificate file's content: modification time, size
/// and inode (renewal tools replace files by rename, or rewrite them).
pub type Stamp = Option<(i64, i64, u64, u64)>;

/// The stamps of every certificate and key file the settings name.
pub fn stamps(settings: &Settings) -> Vec<Stamp> {
    let Some(tls) = &settings.tls else {
        return Vec::new();
    };
    let default = match &tls.identity {
        Identity::Files(files) | Identity::Acme(files) => Some(files),
        _ => None,
    };
    default
        .into_iter()
        .chain(settings.hosts.iter().filter_map(|h| h.tls.as_ref()))
        .flat_map(|files| [&files.cert, &files.key])
        .map(stamp)
        .collect()
}

fn stamp(path: &PathBuf) -> Stamp {
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.mtime(), m.mtime_nsec(), m.size(), m.ino()))
}
