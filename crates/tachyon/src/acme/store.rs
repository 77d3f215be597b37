//! The ACME folder: the account's credentials, the certificate with its
//! key, and the lock that lets one of several processes sharing the folder
//! order at a time.
//!
//! Layout: `account-<hash of the directory URL>.json` (one account per CA),
//! `<first name>/certificate.pem` (the chain, leaf first, then the key: one
//! file, replaced by one rename, so a reload never pairs a new key with an
//! old certificate) and `<first name>/lock`. The folders are 0700 and the
//! files 0600. Owns the bytes on disk and what they say; never talks to
//! the CA.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use tachyon::config::AcmeSettings;

/// A lock older than this is taken over: its holder died mid-order (an
/// order takes seconds; the CA's own timeouts are minutes).
const LOCK_EXPIRY: Duration = Duration::from_secs(10 * 60);

/// What the stored certificate says about itself.
#[derive(Debug, Clone)]
pub struct Stored {
    pub leaf: CertificateDer<'static>,
    pub names: Vec<String>,
    pub issuer: String,
    /// Unix seconds.
    pub not_before: i64,
    pub not_after: i64,
}

impl Stored {
    /// True when every name in `domains` is on the certificate.
    pub fn covers(&self, domains: &[String]) -> bool {
        domains.iter().all(|d| self.names.iter().any(|n| n == d))
    }
}

/// The ACME folder of one set of settings.
pub struct Store {
    dir: PathBuf,
    certificate_dir: PathBuf,
    certificate: PathBuf,
    account: PathBuf,
}

impl Store {
    /// Makes the folders (0700) if they are missing.
    pub fn open(settings: &AcmeSettings) -> anyhow::Result<Store> {
        let certificate_dir = settings.certificate_dir();
        make_private_dir(&settings.dir)?;
        make_private_dir(&certificate_dir)?;
        let digest = ring::digest::digest(&ring::digest::SHA256, settings.directory.as_bytes());
        let tag: String = digest.as_ref()[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Store {
            account: settings.dir.join(format!("account-{tag}.json")),
            dir: settings.dir.clone(),
            certificate: settings.files().cert,
            certificate_dir,
        })
    }

    pub fn certificate_file(&self) -> PathBuf {
        self.certificate.clone()
    }

    /// The stored certificate, `None` if there is none yet; an error says
    /// why one that is there cannot be used.
    pub fn certificate(&self) -> anyhow::Result<Option<Stored>> {
        read(&self.certificate_file())
    }

    /// Replaces the certificate and its key in one rename.
    pub fn save_certificate(&self, chain_pem: &str, key_pem: &str) -> anyhow::Result<()> {
        let mut text = chain_pem.trim_end().to_string();
        text.push('\n');
        text.push_str(key_pem);
        write_private(&self.certificate_file(), text.as_bytes())
    }

    /// The account's credentials for this CA, if an account was made.
    pub fn account(&self) -> anyhow::Result<Option<instant_acme::AccountCredentials>> {
        match fs::read(&self.account) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .with_context(|| {
                    format!("{}: not an account's credentials", self.account.display())
                })
                .map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", self.account.display())),
        }
    }

    pub fn save_account(
        &self,
        credentials: &instant_acme::AccountCredentials,
    ) -> anyhow::Result<()> {
        let text = serde_json::to_vec_pretty(credentials)?;
        write_private(&self.account, &text)
    }

    /// Drops the stored account (the CA no longer knows it).
    pub fn forget_account(&self) {
        let _ = fs::remove_file(&self.account);
    }

    /// Takes the order lock, unless another process holds a fresh one.
    pub fn lock(&self) -> anyhow::Result<Option<Lock>> {
        let path = self.certificate_dir.join("lock");
        for _ in 0..2 {
            let created = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path);
            match created {
                Ok(mut file) => {
                    let _ = writeln!(file, "{}", std::process::id());
                    return Ok(Some(Lock { path }));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let age = fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok());
                    if age.is_some_and(|age| age < LOCK_EXPIRY) {
                        return Ok(None);
                    }
                    // Its holder died mid-order: take it over.
                    let _ = fs::remove_file(&path);
                }
                Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
            }
        }
        Ok(None)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Hands the folders and what is in them to the user the process
    /// becomes (`--user`), made by root before it drops privileges.
    pub fn give_to(&self, uid: nix::unistd::Uid, gid: nix::unistd::Gid) -> anyhow::Result<()> {
        let mut paths = vec![self.dir.clone(), self.certificate_dir.clone()];
        for dir in [&self.dir, &self.certificate_dir] {
            for entry in fs::read_dir(dir)?.flatten() {
                paths.push(entry.path());
            }
        }
        for path in paths {
            nix::unistd::chown(&path, Some(uid), Some(gid))
                .with_context(|| format!("giving {} to uid {uid}", path.display()))?;
        }
        Ok(())
    }
}

/// The order lock; released when dropped.
pub struct Lock {
    path: PathBuf,
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// The certificate stored at `path` (with its key, which must match it),
/// `None` if there is none yet.
pub fn read(path: &Path) -> anyhow::Result<Option<Stored>> {
    if !path.exists() {
        return Ok(None);
    }
    let pair = tachyon_server::tls::load_key_pair(path, path)?;
    let leaf = pair.cert.first().cloned().context("no certificate in it")?;
    facts(leaf).map(Some)
}

/// What a certificate says: its DNS names, issuer and validity.
pub fn facts(leaf: CertificateDer<'static>) -> anyhow::Result<Stored> {
    use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};
    let (_, cert) = X509Certificate::from_der(leaf.as_ref())
        .map_err(|e| anyhow::anyhow!("not a certificate: {e}"))?;
    let names = match cert.subject_alternative_name() {
        Ok(Some(san)) => san
            .value
            .general_names
            .iter()
            .filter_map(|name| match name {
                GeneralName::DNSName(dns) => Some(dns.to_ascii_lowercase()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let validity = cert.validity();
    let stored = Stored {
        names,
        issuer: cert.issuer().to_string(),
        not_before: validity.not_before.timestamp(),
        not_after: validity.not_after.timestamp(),
        leaf: leaf.clone(),
    };
    Ok(stored)
}

/// Reads a PEM chain's leaf.
pub fn leaf_of(chain_pem: &str) -> anyhow::Result<CertificateDer<'static>> {
    let Some(first) = CertificateDer::pem_slice_iter(chain_pem.as_bytes()).next() else {
        bail!("the CA sent no certificate");
    };
    first.map_err(|e| anyhow::anyhow!("the CA's certificate is not valid PEM: {e:?}"))
}

fn make_private_dir(dir: &Path) -> anyhow::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("making {}", dir.display()))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .with_context(|| format!("making {} private", dir.display()))
}

/// Writes `bytes` beside `path` (0600), syncs, and renames it over `path`.
fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let temp = path.with_extension("new");
    let mut file: File = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .with_context(|| format!("creating {}", temp.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", temp.display()))?;
    fs::rename(&temp, path).with_context(|| format!("replacing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use tachyon_testkit::Scratch;

    use super::*;

    /// A store folder not made yet, in a folder of the test's own.
    fn scratch(name: &str) -> (Scratch, PathBuf) {
        let scratch = Scratch::new(name);
        let dir = scratch.join("acme");
        (scratch, dir)
    }

    fn settings(dir: &Path) -> AcmeSettings {
        AcmeSettings {
            domains: vec!["a.test".into()],
            email: None,
            directory: "https://127.0.0.1:14000/dir".into(),
            ca_root: None,
            dir: dir.to_path_buf(),
            challenge: tachyon::config::Challenge::TlsAlpn01,
        }
    }

    #[test]
    fn one_process_holds_the_lock_until_it_drops_it() {
        let (_scratch, dir) = scratch("acme-lock");
        let store = Store::open(&settings(&dir)).unwrap();
        let held = store.lock().unwrap().expect("free at first");
        assert!(store.lock().unwrap().is_none(), "held by the first");
        drop(held);
        assert!(store.lock().unwrap().is_some(), "free again");
    }

    #[test]
    fn folders_are_private_and_a_missing_certificate_is_none() {
        let (_scratch, dir) = scratch("acme-store");
        let store = Store::open(&settings(&dir)).unwrap();
        let mode = fs::metadata(dir.join("a.test"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(store.certificate().unwrap().is_none());
        fs::write(store.certificate_file(), "not pem").unwrap();
        assert!(
            store.certificate().is_err(),
            "garbage is an error, not None"
        );
    }
}
