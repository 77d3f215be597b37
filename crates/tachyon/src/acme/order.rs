//! One ACME order (RFC 8555 §7.4), from new order to certificate: each
//! name's challenge put on show for the CA to validate, a new key and its
//! CSR, finalization, the chain downloaded. instant-acme speaks the
//! protocol (JWS, nonces, polling with the CA's `Retry-After`).
//!
//! Owns the challenge answers for the length of the order: they are on
//! show from just before the CA is told to validate until the order ends,
//! whichever way it ends ([`Shown`] takes them down when dropped).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use instant_acme::{
    Account, AuthorizationStatus, ChallengeType, Identifier, KeyAuthorization, NewOrder,
    OrderStatus, RetryPolicy,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tachyon::config::{AcmeSettings, Challenge};
use tachyon_server::acme::Challenges;

/// What an order yields.
pub struct Issued {
    pub chain_pem: String,
    pub key_pem: String,
}

/// How long the CA gets to validate, and then to issue: the first look
/// soon (a CA that validates at once, as pebble and often Let's Encrypt
/// do, is not kept waiting a quarter of a second per step), then less and
/// less often; a `Retry-After` the CA sends takes precedence.
const VALIDATION: RetryPolicy = RetryPolicy::new()
    .initial_delay(Duration::from_millis(50))
    .backoff(2.0)
    .timeout(Duration::from_secs(90));

/// Orders a certificate for every name in `settings`, answering
/// `challenge`.
pub async fn run(
    account: &Account,
    settings: &AcmeSettings,
    challenge_type: Challenge,
    challenges: &Arc<Challenges>,
) -> anyhow::Result<Issued> {
    let identifiers: Vec<Identifier> = settings
        .domains
        .iter()
        .map(|d| Identifier::Dns(d.clone()))
        .collect();
    let mut order = account
        .new_order(&NewOrder::new(&identifiers))
        .await
        .context("creating the order")?;
    let mut shown = Shown {
        challenges: Arc::clone(challenges),
        names: Vec::new(),
        tokens: Vec::new(),
    };
    let wanted = match challenge_type {
        Challenge::TlsAlpn01 => ChallengeType::TlsAlpn01,
        Challenge::Http01 => ChallengeType::Http01,
    };
    let mut authorizations = order.authorizations();
    while let Some(authz) = authorizations.next().await {
        let mut authz = authz.context("reading an authorization")?;
        match authz.status {
            AuthorizationStatus::Pending => {}
            AuthorizationStatus::Valid => continue,
            other => bail!("the CA says the authorization is {other:?}"),
        }
        let mut challenge = authz
            .challenge(wanted.clone())
            .ok_or_else(|| anyhow!("the CA offers no {} challenge", challenge_type.name()))?;
        let name = challenge.identifier().to_string();
        shown.show(
            challenge_type,
            &name,
            &challenge.token,
            &challenge.key_authorization(),
        )?;
        crate::say(&format!(
            "acme: answering the {} challenge for {name}",
            challenge_type.name()
        ));
        challenge
            .set_ready()
            .await
            .with_context(|| format!("asking the CA to validate {name}"))?;
    }
    validated(&mut order, &settings.domains).await?;
    drop(shown);
    let (csr, key_pem) = request(&settings.domains)?;
    order
        .finalize_csr(&csr)
        .await
        .context("finalizing the order")?;
    let chain_pem = order
        .poll_certificate(&VALIDATION)
        .await
        .context("downloading the certificate")?;
    Ok(Issued { chain_pem, key_pem })
}

/// Waits for the CA to validate every name of `order`; an error gives the
/// CA's reason.
async fn validated(order: &mut instant_acme::Order, names: &[String]) -> anyhow::Result<()> {
    let status = match order.poll_ready(&VALIDATION).await {
        Ok(status) => status,
        Err(instant_acme::Error::Api(problem)) => {
            bail!("the CA could not validate {}: {problem}", names.join(", "))
        }
        Err(e) => return Err(e).context("waiting for the CA to validate"),
    };
    if status != OrderStatus::Ready {
        bail!("{}", why_invalid(order).await);
    }
    Ok(())
}

/// The CA's own words on why an order's validation failed: each failed
/// challenge's error.
async fn why_invalid(order: &mut instant_acme::Order) -> String {
    let mut reasons = Vec::new();
    let mut authorizations = order.authorizations();
    while let Some(Ok(authz)) = authorizations.next().await {
        let name = authz.identifier().to_string();
        for challenge in &authz.challenges {
            if let Some(problem) = &challenge.error {
                reasons.push(format!("{name} ({:?}): {problem}", challenge.r#type));
            }
        }
    }
    match reasons.is_empty() {
        true => "the CA did not validate the names and gave no reason".into(),
        false => format!("the CA could not validate {}", reasons.join("; ")),
    }
}

/// A new ECDSA P-256 key and a CSR for `names` (rcgen).
fn request(names: &[String]) -> anyhow::Result<(Vec<u8>, String)> {
    let key = rcgen::KeyPair::generate().context("making a key")?;
    let mut params = rcgen::CertificateParams::new(names.to_vec()).context("the names")?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    let csr = params
        .serialize_request(&key)
        .context("making the request")?;
    Ok((csr.der().to_vec(), key.serialize_pem()))
}

/// The self-signed certificate a TLS-ALPN-01 validator must see for
/// `name`: the key authorization's SHA-256 in the critical
/// `acmeIdentifier` extension (RFC 8737 §3); and the same as PEM
/// (certificate, then key) for the replicas sharing the folder.
fn validation_certificate(
    name: &str,
    digest: &[u8],
) -> anyhow::Result<(Arc<rustls::sign::CertifiedKey>, String)> {
    let key = rcgen::KeyPair::generate().context("making a key")?;
    let mut params = rcgen::CertificateParams::new(vec![name.to_string()]).context("the name")?;
    params.custom_extensions = vec![rcgen::CustomExtension::new_acme_identifier(digest)];
    let cert = params.self_signed(&key).context("signing")?;
    let pem = format!("{}{}", cert.pem(), key.serialize_pem());
    let der: CertificateDer<'static> = cert.der().clone();
    let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let pair = tachyon_server::tls::from_der_unchecked(vec![der], private)?;
    Ok((Arc::new(pair), pem))
}

/// The challenge answers on show for one order; taken down when dropped.
struct Shown {
    challenges: Arc<Challenges>,
    names: Vec<String>,
    tokens: Vec<String>,
}

impl Shown {
    /// Puts the answer to `name`'s challenge of this type on show: a
    /// validation certificate for TLS-ALPN-01, the key authorization at
    /// `token` for HTTP-01.
    fn show(
        &mut self,
        challenge_type: Challenge,
        name: &str,
        token: &str,
        key_authorization: &KeyAuthorization,
    ) -> anyhow::Result<()> {
        match challenge_type {
            Challenge::TlsAlpn01 => {
                let (key, pem) = validation_certificate(name, key_authorization.digest().as_ref())?;
                self.show_tls_alpn(name, key, &pem);
            }
            Challenge::Http01 => self.show_http(token, key_authorization.as_str()),
        }
        Ok(())
    }

    fn show_tls_alpn(&mut self, name: &str, key: Arc<rustls::sign::CertifiedKey>, pem: &str) {
        self.challenges.show_tls_alpn(name, key, pem);
        self.names.push(name.to_string());
    }

    fn show_http(&mut self, token: &str, key_authorization: &str) {
        self.challenges.show_http(token, key_authorization);
        self.tokens.push(token.to_string());
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        for name in &self.names {
            self.challenges.hide_tls_alpn(name);
        }
        for token in &self.tokens {
            self.challenges.hide_http(token);
        }
    }
}
