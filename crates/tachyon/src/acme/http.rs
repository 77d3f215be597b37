//! The HTTPS client the ACME protocol runs over: the same hyper and rustls
//! client instant-acme builds for itself, wrapped to keep the `Retry-After`
//! a CA sends with an error response (a rate limit's 429, an overloaded
//! 503; RFC 8555 §6.6), which instant-acme reads only while polling and
//! does not hand to its caller.
//!
//! Owns that one note; the wait it leads to is `Client::failed`'s.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use instant_acme::{BodyWrapper, BytesResponse, HttpClient};

/// The last `Retry-After` a CA attached to an error, until taken.
#[derive(Debug, Default)]
pub struct RetryAfter(Mutex<Option<SystemTime>>);

impl RetryAfter {
    /// The time the CA asked not to be called again before, once.
    pub fn take(&self) -> Option<SystemTime> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    fn note(&self, at: SystemTime) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
    }
}

/// An HTTP client that notes `Retry-After` on error responses.
pub struct Noting {
    inner: Box<dyn HttpClient>,
    retry_after: Arc<RetryAfter>,
}

impl Noting {
    /// instant-acme's own client (hyper, rustls with `roots`, or else the
    /// system's verifier), noting into `retry_after`.
    pub fn new(
        roots: Option<rustls::RootCertStore>,
        retry_after: Arc<RetryAfter>,
    ) -> anyhow::Result<Noting> {
        let builder = hyper_rustls::HttpsConnectorBuilder::new();
        let builder = match roots {
            Some(roots) => builder.with_tls_config(
                rustls::ClientConfig::builder()
                    .with_root_certificates(roots)
                    .with_no_client_auth(),
            ),
            None => builder.try_with_platform_verifier()?,
        };
        let connector = builder.https_only().enable_http1().enable_http2().build();
        let client: hyper_util::client::legacy::Client<_, BodyWrapper<Bytes>> =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build(connector);
        Ok(Noting::wrapping(Box::new(client), retry_after))
    }

    fn wrapping(inner: Box<dyn HttpClient>, retry_after: Arc<RetryAfter>) -> Noting {
        Noting { inner, retry_after }
    }
}

impl HttpClient for Noting {
    fn request(
        &self,
        req: http::Request<BodyWrapper<Bytes>>,
    ) -> Pin<Box<dyn Future<Output = Result<BytesResponse, instant_acme::Error>> + Send>> {
        let response = self.inner.request(req);
        let note = Arc::clone(&self.retry_after);
        Box::pin(async move {
            let response = response.await?;
            let status = response.parts.status;
            if status.is_client_error() || status.is_server_error() {
                let header = response.parts.headers.get(http::header::RETRY_AFTER);
                if let Some(at) = header.and_then(|v| parse(v.as_bytes(), SystemTime::now())) {
                    note.note(at);
                }
            }
            Ok(response)
        })
    }
}

/// A `Retry-After` value (RFC 9110 §10.2.3): seconds from `now`, or an
/// HTTP date.
fn parse(value: &[u8], now: SystemTime) -> Option<SystemTime> {
    let value = std::str::from_utf8(value).ok()?.trim();
    match value.parse::<u64>() {
        Ok(seconds) => now.checked_add(Duration::from_secs(seconds)),
        Err(_) => httpdate::parse_http_date(value).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn retry_after_is_seconds_or_a_date() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(parse(b"120", now), Some(now + Duration::from_secs(120)));
        assert_eq!(
            parse(b"Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(UNIX_EPOCH + Duration::from_secs(784_111_777))
        );
        assert_eq!(parse(b"soon", now), None);
        assert_eq!(parse(b"-5", now), None);
    }

    /// A CA that answers every request with `status` and `retry_after`.
    struct Answering(u16, &'static str);

    impl HttpClient for Answering {
        fn request(
            &self,
            _req: http::Request<BodyWrapper<Bytes>>,
        ) -> Pin<Box<dyn Future<Output = Result<BytesResponse, instant_acme::Error>> + Send>>
        {
            let response = http::Response::builder()
                .status(self.0)
                .header("retry-after", self.1)
                .body(())
                .unwrap();
            let (parts, ()) = response.into_parts();
            Box::pin(async move {
                Ok(BytesResponse {
                    parts,
                    body: Box::new(Bytes::new()),
                })
            })
        }
    }

    fn ask(client: &Noting) {
        let request = http::Request::new(BodyWrapper::from(Vec::new()));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(client.request(request)).unwrap();
    }

    #[test]
    fn an_error_s_retry_after_is_noted_once_and_a_success_s_is_not() {
        let note = Arc::new(RetryAfter::default());
        let limited = Noting::wrapping(Box::new(Answering(429, "3600")), Arc::clone(&note));
        ask(&limited);
        let at = note.take().expect("noted");
        let ahead = at.duration_since(SystemTime::now()).unwrap();
        assert!(ahead > Duration::from_secs(3590) && ahead <= Duration::from_secs(3600));
        assert_eq!(note.take(), None, "taken once");
        let polling = Noting::wrapping(Box::new(Answering(200, "5")), Arc::clone(&note));
        ask(&polling);
        assert_eq!(note.take(), None, "a poll's Retry-After is instant-acme's");
    }
}
