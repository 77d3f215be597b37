//! What answering requests needs from the worker, and nothing more: the
//! output being written, the site, the cached `Date`, the counters and log,
//! and the worker's scratch space. HTTP/1.1 ([`crate::h1`]) and HTTP/2
//! ([`crate::h2`]) both answer through a [`Serving`]; the connection
//! ([`crate::conn`]) lends one for a turn and keeps the rest of the
//! worker's state (budgets, buffers it reads into) to itself.

use tachyon_http::date::DateCache;
use tachyon_http::response::Field;

use std::sync::Arc;

use crate::acme::Challenges;
use crate::limits::Limits;
use crate::live::Generation;
use crate::outbox::Outbox;
use crate::reply::Scratch;
use crate::stats::Observer;

/// What plain and TLS connections answer differently.
#[derive(Debug, Clone, Default)]
pub struct Https {
    /// Plain connections answer every request with a 308 to the same URL
    /// on `https://` at this port.
    pub redirect_port: Option<u16>,
    /// Fields every response on a TLS connection carries
    /// (`Strict-Transport-Security`: RFC 6797 §7.2 forbids it over plain HTTP).
    pub fields: Vec<Field>,
    /// ACME HTTP-01 answers, shown on the plain listeners.
    pub challenges: Option<Arc<Challenges>>,
}

/// The worker's share in answering one connection's requests.
pub struct Serving<'s> {
    pub out: &'s mut Outbox,
    pub scratch: &'s mut Scratch,
    /// Joined values of list fields a request sent in several lines.
    pub combined: &'s mut Vec<u8>,
    pub date: &'s DateCache,
    pub generation: &'s Generation,
    pub limits: &'s Limits,
    pub https: &'s Https,
    pub observer: &'s mut Observer,
    /// Worker-clock seconds now.
    pub now: u32,
    /// The server is draining: responses say the connection ends.
    pub draining: bool,
}
