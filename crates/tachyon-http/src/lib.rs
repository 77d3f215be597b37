//! The HTTP vocabulary of tachyon, without I/O: bytes in, decisions out.
//!
//! This crate owns request-head parsing ([`request`]), turning a request target
//! into a path that cannot leave the site ([`target`]), precondition and range
//! evaluation ([`conditional`], [`range`]), content-coding negotiation ([`encoding`]),
//! the response model every protocol shares ([`response`]), the one head
//! writer every protocol spells in its dialect ([`head`]): HTTP/1.1 text
//! ([`h1`]), HTTP/2 framing, header compression and connection state
//! ([`h2`]), HTTP/3 framing and QPACK ([`h3`]), the request field
//! sections HTTP/2 and HTTP/3 share ([`section`]); and the cached `Date`
//! value ([`date`]).
//! It knows nothing of sockets, files or threads. Every protocol error is a
//! [`ParseError`], and [`ParseError::status`] is the one place that chooses the
//! status code a malformed request gets.

pub mod conditional;
pub mod date;
pub mod encoding;
pub mod error;
pub mod fields;
pub mod h1;
pub mod h2;
pub mod h3;
pub mod head;
pub mod multipart;
pub mod range;
pub mod request;
pub mod response;
pub mod section;
pub mod status;
pub mod target;
mod words;

pub use error::ParseError;
pub use request::{Method, Parsed, RequestHead, Version};
pub use response::{Exchange, Persistence, Status};
