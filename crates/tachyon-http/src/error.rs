//! Protocol errors and the single mapping from an error to a status code.
//!
//! Invariant: every way a request can be rejected before it reaches the
//! snapshot is a variant here, and `status()` is the only code that picks the
//! status for it (lwan returns statuses from its parser for the same reason:
//! the error *is* the answer).

use crate::status::Status;

/// Why a request head could not be accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The request line or a header is not valid HTTP/1.x syntax (RFC 9112 §3, §5).
    #[error("malformed request")]
    Malformed,
    /// An HTTP/1.1 request without a Host header (RFC 9112 §3.2: "MUST respond with 400").
    #[error("missing Host header")]
    MissingHost,
    /// More than one Host header (RFC 9112 §3.2).
    #[error("duplicate Host header")]
    DuplicateHost,
    /// Content-Length that is not a number, or several that differ (RFC 9112 §6.3 step 5).
    #[error("invalid Content-Length")]
    BadContentLength,
    /// Both Transfer-Encoding and Content-Length, or a Transfer-Encoding that does
    /// not end in chunked: the framing is ambiguous, the classic smuggling vector
    /// (RFC 9112 §6.1, §6.3 step 3).
    #[error("ambiguous message framing")]
    AmbiguousFraming,
    /// The request target is longer than the limit.
    #[error("request target too long")]
    UriTooLong,
    /// The whole head is larger than the limit, or has too many header fields.
    #[error("request header fields too large")]
    HeadTooLarge,
    /// A body larger than we are willing to read and discard.
    #[error("request body too large")]
    BodyTooLarge,
    /// An HTTP version other than 1.0 or 1.1.
    #[error("HTTP version not supported")]
    Version,
    /// The target is not an origin-form path, has a NUL, or climbs above the root.
    #[error("invalid request target")]
    BadTarget,
}

impl ParseError {
    /// The status a client receives for this error. The connection is always
    /// closed after it: once framing is in doubt, nothing after it can be trusted.
    pub fn status(self) -> Status {
        match self {
            ParseError::Malformed
            | ParseError::MissingHost
            | ParseError::DuplicateHost
            | ParseError::BadContentLength
            | ParseError::AmbiguousFraming
            | ParseError::BadTarget => Status::BadRequest,
            ParseError::UriTooLong => Status::UriTooLong,
            ParseError::HeadTooLarge => Status::HeadersTooLarge,
            ParseError::BodyTooLarge => Status::ContentTooLarge,
            ParseError::Version => Status::VersionNotSupported,
        }
    }
}
