//! The response model every protocol shares: a status, header fields named
//! by what they mean, and how the exchange is framed. Bytes are not written
//! here; each protocol's encoder ([`crate::h1`] for HTTP/1.1) spells the
//! model its own way, as hyper keeps head encoding in `role.rs` apart from
//! connection state.
//!
//! Invariant: a [`Field`] can only hold a value that is legal on the wire
//! (no CR, LF, NUL or other control byte), so an encoder never re-checks it.

use crate::date::DateCache;
use crate::fields::is_tchar;
pub use crate::status::Status;

/// A header field name. The ones the server computes are variants, so an
/// encoder can spell each its own way (HTTP/1.1 `Content-Length`, HTTP/2
/// `content-length` or its HPACK static-table index, RFC 7541 Appendix A);
/// configured headers are [`Name::Custom`], checked to be a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Name {
    AcceptRanges,
    Allow,
    CacheControl,
    ContentEncoding,
    ContentLength,
    ContentRange,
    ContentType,
    Date,
    ETag,
    LastModified,
    Location,
    RetryAfter,
    Server,
    StrictTransportSecurity,
    /// RFC 9842 §2.1: offers the body as a compression dictionary.
    UseAsDictionary,
    Vary,
    XContentTypeOptions,
    /// A configured header (CSP, CORS), as the configuration spelled it.
    Custom(Box<str>),
}

impl Name {
    /// The name as HTTP/1.1 writes it (field names are case-insensitive,
    /// RFC 9110 §5.1; these are the spellings every peer sends).
    pub fn as_str(&self) -> &str {
        match self {
            Name::AcceptRanges => "Accept-Ranges",
            Name::Allow => "Allow",
            Name::CacheControl => "Cache-Control",
            Name::ContentEncoding => "Content-Encoding",
            Name::ContentLength => "Content-Length",
            Name::ContentRange => "Content-Range",
            Name::ContentType => "Content-Type",
            Name::Date => "Date",
            Name::ETag => "ETag",
            Name::LastModified => "Last-Modified",
            Name::Location => "Location",
            Name::RetryAfter => "Retry-After",
            Name::Server => "Server",
            Name::StrictTransportSecurity => "Strict-Transport-Security",
            Name::UseAsDictionary => "Use-As-Dictionary",
            Name::Vary => "Vary",
            Name::XContentTypeOptions => "X-Content-Type-Options",
            Name::Custom(name) => name,
        }
    }

    /// A configured name, if it is a token (RFC 9110 §5.1).
    pub fn custom(name: &str) -> Option<Name> {
        let token = !name.is_empty() && name.bytes().all(is_tchar);
        token.then(|| Name::Custom(name.into()))
    }
}

/// One header field of a representation, fixed at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    name: Name,
    value: Box<str>,
}

impl Field {
    /// A field, if `value` is legal on the wire: no control characters
    /// other than tab (RFC 9110 §5.5). Surrounding whitespace is trimmed.
    pub fn new(name: Name, value: &str) -> Option<Field> {
        let value = value.trim();
        let clean = !value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f);
        clean.then(|| Field {
            name,
            value: value.into(),
        })
    }

    pub fn name(&self) -> &Name {
        &self.name
    }

    pub fn value(&self) -> &str {
        &self.value
    }
}

/// The fields every response carries.
pub const SERVER: &str = "tachyon";
pub const NOSNIFF: &str = "nosniff";

/// Methods a static site answers; sent in `Allow` on 405 and OPTIONS (RFC 9110 §15.5.6).
pub const ALLOWED_METHODS: &str = "GET, HEAD, OPTIONS";

/// Sent with a 503 for a file that changed under the server: a reload is
/// on its way.
pub const RETRY_AFTER_SECS: &str = "1";

/// How the connection continues after a response, which decides the
/// `Connection` header (RFC 9112 §9.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistence {
    /// HTTP/1.1 default: no header needed.
    KeepAlive,
    /// An HTTP/1.0 client asked for keep-alive: echo it, or it will close (ab -k relies on this).
    KeepAliveEcho,
    /// The server closes after this response.
    Close,
}

/// What every response of one exchange shares besides its own fields: the
/// `Date`, how the connection continues, whether a body follows the head
/// (not for HEAD, RFC 9110 §9.3.2), and the fields the connection adds to
/// every response (`Strict-Transport-Security` on TLS; usually none).
#[derive(Clone, Copy)]
pub struct Exchange<'d> {
    pub date: &'d DateCache,
    pub persistence: Persistence,
    pub head_only: bool,
    pub fields: &'d [Field],
}

impl Exchange<'_> {
    /// The same exchange, ending the connection after this response.
    pub fn closing(self) -> Self {
        Exchange {
            persistence: Persistence::Close,
            ..self
        }
    }
}

/// The small HTML page sent with an error status, the same in every
/// protocol; written in pieces so an error costs no allocation.
#[derive(Debug, Clone, Copy)]
pub struct ErrorPage(pub Status);

impl ErrorPage {
    fn pieces(self) -> [&'static str; 9] {
        let code = self.0.code_text();
        let reason = self.0.reason();
        [
            "<!doctype html>\n<title>",
            code,
            " ",
            reason,
            "</title>\n<h1>",
            code,
            " ",
            reason,
            "</h1>\n",
        ]
    }

    /// The page's length in bytes.
    pub fn byte_len(self) -> usize {
        self.pieces().iter().map(|p| p.len()).sum()
    }

    /// Appends the page.
    pub fn write(self, out: &mut Vec<u8>) {
        for piece in self.pieces() {
            out.extend_from_slice(piece.as_bytes());
        }
    }
}
