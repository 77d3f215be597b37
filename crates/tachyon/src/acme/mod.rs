//! Automatic certificates (`--acme`): an ACME client (RFC 8555) on a
//! thread of its own orders the certificate for the `--domain` names when
//! none usable is stored, renews it when a third of its lifetime is left or
//! when the CA's renewal information (RFC 9773) says so, and after a
//! failure tries again with exponential backoff, never before the time the
//! CA's `Retry-After` names (noted by `http`, the HTTPS client).
//!
//! Owns when to order and what to keep. It never serves and never swaps a
//! certificate in: it shows challenge answers through
//! `tachyon_server::acme::Challenges`, writes the certificate into the
//! ACME folder and asks the reloader to swap it in like any renewed
//! certificate (connections in flight keep theirs); other processes sharing
//! the folder find it by their reloader's poll of certificate files. instant-acme speaks the protocol; it is async on tokio and
//! hyper, which run here on a current-thread runtime, off the serving path.
//!
//! Invariant: once the server has started, nothing here ends the process;
//! every failure is logged with what failed and when the next attempt is,
//! and the server goes on with what it has.

mod http;
mod order;
pub mod store;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use instant_acme::{Account, CertificateIdentifier, NewAccount};
use tachyon::config::{AcmeSettings, Challenge};
use tachyon_server::acme::{CertificateBoard, CertificateFacts, Challenges};

use store::{Store, Stored};

/// The first retry after a failed order; each failure doubles it.
const FIRST_RETRY: Duration = Duration::from_secs(5);
/// The longest wait between attempts.
const LAST_RETRY: Duration = Duration::from_secs(60 * 60);
/// How often a process that waits (for a renewal, or for another process
/// holding the lock) looks at the folder again.
const LOOK_AGAIN: Duration = Duration::from_secs(2);

/// Starts the client's thread; a failure to start is said, and the
/// server goes on with what it has.
/// `issued` swaps a certificate in once it is written (the reloader's poll
/// of certificate files would find it too, up to a second later).
pub fn start(
    settings: AcmeSettings,
    challenges: Arc<Challenges>,
    board: Arc<CertificateBoard>,
    issued: Box<dyn Fn() + Send>,
) {
    let store = match Store::open(&settings) {
        Ok(store) => store,
        Err(e) => {
            crate::warn(&format!("acme: not ordering certificates: {e:#}"));
            return;
        }
    };
    let started = std::thread::Builder::new()
        .name("tachyon-acme".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            match runtime {
                Ok(runtime) => {
                    let client = Client {
                        challenge: settings.challenge,
                        settings,
                        store,
                        challenges,
                        board,
                        account: None,
                        failures: 0,
                        due: None,
                        retry_after: Arc::default(),
                        issued,
                    };
                    runtime.block_on(client.run());
                }
                Err(e) => crate::warn(&format!("acme: cannot start its runtime: {e}")),
            }
        });
    if let Err(e) = started {
        crate::warn(&format!("acme: cannot start its thread: {e}"));
    }
}

/// What `--check` says about ACME: the names, where they are kept, and
/// what would be ordered.
pub fn describe(settings: &AcmeSettings) -> String {
    let files = settings.files();
    let stored = match store::read(&files.cert) {
        Ok(Some(cert)) if cert.covers(&settings.domains) => format!(
            "a certificate is stored, valid until {} (Unix seconds): nothing to order",
            cert.not_after
        ),
        Ok(Some(_)) => {
            "the stored certificate does not cover every name: it would be ordered again".into()
        }
        Ok(None) => "no certificate is stored: it would be ordered at start".into(),
        Err(e) => {
            format!("the stored certificate cannot be used ({e:#}): it would be ordered again")
        }
    };
    format!(
        "acme: {} from {} by {}, kept in {}; {stored}",
        settings.domains.join(", "),
        settings.directory,
        settings.challenge.name(),
        files.cert.display(),
    )
}

/// What one wait ends in.
enum Next {
    /// Order now, and why.
    Order(String),
    /// Nothing to do for this long; then look again.
    Wait(Duration),
}

struct Client {
    settings: AcmeSettings,
    /// The challenge of the next attempt: the configured one, and after a
    /// validation it failed, the other one (HTTP-01 reaches a plain
    /// listener when port 443 is not reachable, and the other way round).
    challenge: Challenge,
    store: Store,
    challenges: Arc<Challenges>,
    board: Arc<CertificateBoard>,
    account: Option<Account>,
    /// Failed attempts since the last success.
    failures: u32,
    /// The CA's `Retry-After` on its last error response.
    retry_after: Arc<http::RetryAfter>,
    /// Swaps a newly written certificate in.
    issued: Box<dyn Fn() + Send>,
    /// The renewal time of the stored certificate (its leaf), worked out
    /// once: the CA's renewal information is asked for once per
    /// certificate, not at every look.
    due: Option<(Vec<u8>, i64)>,
}

impl Client {
    async fn run(mut self) {
        loop {
            let why = match self.next().await {
                Next::Wait(wait) => {
                    tokio::time::sleep(wait).await;
                    continue;
                }
                Next::Order(why) => why,
            };
            // Another process sharing the folder may be ordering: the one
            // holding the lock orders, the others pick its result up.
            let lock = match self.store.lock() {
                Ok(Some(lock)) => lock,
                Ok(None) => {
                    tokio::time::sleep(LOOK_AGAIN).await;
                    continue;
                }
                Err(e) => {
                    self.failed(&format!("{e:#}")).await;
                    continue;
                }
            };
            // It may have finished just before the lock was ours.
            if let Next::Wait(_) = self.next().await {
                continue;
            }
            crate::say(&format!(
                "acme: ordering a certificate for {} ({why})",
                self.settings.domains.join(", ")
            ));
            let result = self.order().await;
            drop(lock);
            match result {
                Ok(stored) => {
                    self.failures = 0;
                    self.board.order_succeeded();
                    crate::say(&format!(
                        "acme: certificate for {} issued by {}, valid until {}",
                        self.settings.domains.join(", "),
                        stored.issuer,
                        httpdate::fmt_http_date(UNIX_EPOCH + secs(stored.not_after))
                    ));
                    (self.issued)();
                }
                Err(e) => {
                    self.board.order_failed();
                    let text = format!("{e:#}");
                    self.failed(&text).await;
                    if text.contains("could not validate") {
                        self.challenge = match self.challenge {
                            Challenge::TlsAlpn01 => Challenge::Http01,
                            Challenge::Http01 => Challenge::TlsAlpn01,
                        };
                        crate::say(&format!(
                            "acme: the next attempt answers {} instead",
                            self.challenge.name()
                        ));
                    }
                }
            }
        }
    }

    /// Looks at what is stored: order now, or wait until the renewal is
    /// due (looking again every few seconds for a certificate another
    /// process wrote).
    async fn next(&mut self) -> Next {
        let stored = match self.store.certificate() {
            Ok(Some(cert)) if cert.covers(&self.settings.domains) => cert,
            Ok(Some(cert)) => {
                return Next::Order(format!(
                    "the stored certificate names {} only",
                    cert.names.join(", ")
                ))
            }
            Ok(None) => return Next::Order("none is stored yet".into()),
            Err(e) => return Next::Order(format!("the stored one cannot be used: {e:#}")),
        };
        let due = match &self.due {
            Some((leaf, due)) if leaf[..] == stored.leaf[..] => *due,
            _ => {
                let due = self.renewal_due(&stored).await;
                self.due = Some((stored.leaf.to_vec(), due));
                due
            }
        };
        let now = unix_now();
        self.publish(&stored, Some(due), None);
        if now >= due {
            return Next::Order(format!(
                "renewal: it expires {}",
                httpdate::fmt_http_date(UNIX_EPOCH + secs(stored.not_after))
            ));
        }
        Next::Wait(secs(due - now).min(LOOK_AGAIN))
    }

    /// When to renew: at a random point of the CA's suggested window when
    /// it gives one (RFC 9773), else when a third of the lifetime is left,
    /// less a jitter of up to a twentieth of it so replicas and restarts
    /// spread out.
    async fn renewal_due(&mut self, cert: &Stored) -> i64 {
        let lifetime = (cert.not_after - cert.not_before).max(1);
        let third = cert.not_after - lifetime / 3;
        let jitter = pseudo_random(&cert.leaf) % (lifetime / 20).max(1) as u64;
        let fallback = third - jitter as i64;
        let Ok(id) = CertificateIdentifier::try_from(&cert.leaf) else {
            return fallback;
        };
        let Some(account) = self.account().await.ok() else {
            return fallback;
        };
        match account.renewal_info(&id).await {
            Ok((info, _)) => {
                let start = info.suggested_window.start.unix_timestamp();
                let end = info.suggested_window.end.unix_timestamp().max(start + 1);
                start + (pseudo_random(&cert.leaf) % (end - start) as u64) as i64
            }
            Err(_) => fallback,
        }
    }

    /// One order, its result stored. An account the CA no longer knows
    /// (a CA that lost its state, a test CA restarted) is made again once.
    async fn order(&mut self) -> anyhow::Result<Stored> {
        let account = self.account().await?.clone();
        let issued = match order::run(&account, &self.settings, self.challenge, &self.challenges)
            .await
        {
            Err(e) if format!("{e:#}").contains("accountDoesNotExist") => {
                crate::warn("acme: the CA no longer knows the stored account; making a new one");
                self.account = None;
                self.store.forget_account();
                let account = self.account().await?.clone();
                order::run(&account, &self.settings, self.challenge, &self.challenges).await?
            }
            other => other?,
        };
        let leaf = store::leaf_of(&issued.chain_pem)?;
        let stored = store::facts(leaf)?;
        self.store
            .save_certificate(&issued.chain_pem, &issued.key_pem)
            .context("storing the certificate")?;
        self.publish(&stored, None, None);
        Ok(stored)
    }

    /// The account: made once at the CA and kept in the folder.
    async fn account(&mut self) -> anyhow::Result<&Account> {
        if self.account.is_none() {
            let account = self.open_account().await?;
            self.account = Some(account);
        }
        Ok(self.account.as_ref().expect("just set"))
    }

    async fn open_account(&self) -> anyhow::Result<Account> {
        let roots = match &self.settings.ca_root {
            Some(root) => {
                Some(read_root(root).with_context(|| format!("acme.ca_root: {}", root.display()))?)
            }
            None => None,
        };
        let client = http::Noting::new(roots, Arc::clone(&self.retry_after))
            .context("the HTTPS client for the CA")?;
        let builder = Account::builder_with_http(Box::new(client));
        if let Some(credentials) = self.store.account()? {
            return builder
                .from_credentials(credentials)
                .await
                .with_context(|| format!("reaching the CA at {}", self.settings.directory));
        }
        let contact: Vec<String> = self
            .settings
            .email
            .iter()
            .map(|e| format!("mailto:{e}"))
            .collect();
        let contact: Vec<&str> = contact.iter().map(String::as_str).collect();
        let (account, credentials) = builder
            .create(
                &NewAccount {
                    contact: &contact,
                    terms_of_service_agreed: true,
                    only_return_existing: false,
                },
                self.settings.directory.clone(),
                None,
            )
            .await
            .with_context(|| format!("creating an account at {}", self.settings.directory))?;
        self.store.save_account(&credentials)?;
        crate::say(&format!(
            "acme: account created at {}, kept in {}",
            self.settings.directory,
            self.store.dir().display()
        ));
        Ok(account)
    }

    /// Says what failed and when the next attempt is, and waits for it: an
    /// hour at least after the CA's rate limit.
    async fn failed(&mut self, error: &str) {
        self.failures += 1;
        let asked = self
            .retry_after
            .take()
            .and_then(|at| at.duration_since(SystemTime::now()).ok());
        let (wait, hint) = wait_after_failure(self.failures, error.contains("rateLimited"), asked);
        crate::warn(&format!(
            "acme: ordering a certificate for {} failed: {error}{hint}; next attempt in {}s",
            self.settings.domains.join(", "),
            wait.as_secs()
        ));
        let stored = self.store.certificate().ok().flatten();
        let next = unix_now() + wait.as_secs() as i64;
        match stored {
            Some(cert) => self.publish(&cert, Some(next), Some(error.to_string())),
            None => self.board.set(CertificateFacts {
                names: self.settings.domains.clone(),
                next_order: Some(next),
                last_error: Some(error.to_string()),
                ..CertificateFacts::default()
            }),
        }
        tokio::time::sleep(wait).await;
    }

    fn publish(&self, cert: &Stored, next_order: Option<i64>, last_error: Option<String>) {
        self.board.set(CertificateFacts {
            names: self.settings.domains.clone(),
            issuer: Some(cert.issuer.clone()),
            not_after: Some(cert.not_after),
            next_order,
            last_error,
        });
    }
}

/// A number fixed per certificate: the same jitter after every restart.
/// How long to wait after the `failures`-th failure in a row: backoff
/// from [`FIRST_RETRY`] doubling to [`LAST_RETRY`], never less than the
/// CA's `Retry-After` (`asked`, at most a week: Let's Encrypt's longest
/// rate-limit window); a rate limit without one waits [`LAST_RETRY`].
fn wait_after_failure(
    failures: u32,
    rate_limited: bool,
    asked: Option<Duration>,
) -> (Duration, &'static str) {
    const WEEK: Duration = Duration::from_secs(7 * 24 * 60 * 60);
    let backoff = FIRST_RETRY
        .saturating_mul(1 << (failures.clamp(1, 13) - 1))
        .min(LAST_RETRY);
    let hint = match rate_limited {
        true => " (the CA's rate limit: wait for it, and test with --acme-staging)",
        false => "",
    };
    let wait = match (asked, rate_limited) {
        (Some(asked), _) => backoff.max(asked.min(WEEK)),
        (None, true) => LAST_RETRY,
        (None, false) => backoff,
    };
    (wait, hint)
}

/// Reads a root certificate (PEM) to trust for the CA's HTTPS.
fn read_root(path: &std::path::Path) -> anyhow::Result<rustls::RootCertStore> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(path)? {
        roots.add(cert?)?;
    }
    anyhow::ensure!(!roots.is_empty(), "no CERTIFICATE block in it");
    Ok(roots)
}

fn pseudo_random(leaf: &rustls::pki_types::CertificateDer<'_>) -> u64 {
    let digest = ring::digest::digest(&ring::digest::SHA256, leaf.as_ref());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest.as_ref()[..8]);
    u64::from_le_bytes(bytes)
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn secs(seconds: i64) -> Duration {
    Duration::from_secs(seconds.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_to_an_hour_and_never_undercut_the_ca_s_retry_after() {
        let wait = |n, limited, asked: Option<u64>| {
            wait_after_failure(n, limited, asked.map(Duration::from_secs))
                .0
                .as_secs()
        };
        assert_eq!(
            [
                wait(1, false, None),
                wait(2, false, None),
                wait(3, false, None)
            ],
            [5, 10, 20]
        );
        assert_eq!(wait(30, false, None), 3600, "capped at an hour");
        assert_eq!(wait(1, false, Some(120)), 120, "the CA asked for longer");
        assert_eq!(wait(5, false, Some(2)), 80, "backoff is longer than asked");
        assert_eq!(wait(1, true, None), 3600, "a rate limit without a time");
        assert_eq!(wait(1, true, Some(7200)), 7200, "a rate limit's own time");
        assert_eq!(
            wait(1, true, Some(30 * 24 * 3600)),
            7 * 24 * 3600,
            "at most a week"
        );
    }
}
