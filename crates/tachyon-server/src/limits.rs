//! The limits that protect a worker from slow or greedy clients.

use std::time::Duration;

use tachyon_http::request::HeadLimits;

/// Every bound the server enforces, built by the binary from CLI and config.
#[derive(Debug, Clone)]
pub struct Limits {
    pub head: HeadLimits,
    /// From the first byte of a request head to its end (slowloris guard; nginx
    /// `client_header_timeout` defaults to 60 s, we use 10 s).
    pub header_timeout: Duration,
    /// How long an idle keep-alive connection is kept (nginx: 75 s).
    pub idle_timeout: Duration,
    /// How long a blocked send may make no progress before the client is dropped
    /// (nginx `send_timeout`: 60 s).
    pub send_timeout: Duration,
    /// Connections across all workers; beyond it new ones are closed at accept.
    pub max_connections: usize,
    /// Largest request body (GET/HEAD/OPTIONS or a rejected method) read and
    /// discarded to keep the connection; larger is 413 and close.
    pub max_discard_body: u64,
    /// How long SIGTERM waits for responses in flight.
    pub drain_timeout: Duration,
    /// Bytes a worker's connections may hold in output their clients have
    /// not read; a connection that would exceed it is closed. Each one holds
    /// at most about 64 KiB plus one response (`conn::MAX_QUEUED_OUTPUT`),
    /// so this caps what a crowd of non-reading clients can pin.
    pub max_queued_output: usize,
    /// HTTP/2's own limits (streams, resets, header blocks, control
    /// frames); `None` when HTTP/2 is off (`--no-h2`).
    pub h2: Option<tachyon_http::h2::Limits>,
    /// HTTP/3's limits; `None` when HTTP/3 is off (`--no-h3`, or no TLS).
    pub h3: Option<crate::h3::H3Limits>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            head: HeadLimits::default(),
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            send_timeout: Duration::from_secs(30),
            max_connections: 65_536,
            max_discard_body: 64 * 1024,
            drain_timeout: Duration::from_secs(10),
            max_queued_output: 64 * 1024 * 1024,
            h2: Some(tachyon_http::h2::Limits::default()),
            h3: None,
        }
    }
}
