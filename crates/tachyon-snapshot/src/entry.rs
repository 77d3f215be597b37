//! What one site path resolves to, with everything its responses need
//! computed at load time.

use std::sync::Arc;

use bytes::Bytes;
use tachyon_http::encoding::Coding;
use tachyon_http::h1;
use tachyon_http::h2::hpack;
use tachyon_http::h3::qpack;
use tachyon_http::response::Field;
use tachyon_http::Status;

use crate::disk::DiskBody;

/// A site path's meaning.
#[derive(Debug, Clone)]
pub enum Entry {
    /// A regular file (also used for `/dir/` when it has an index file, and
    /// for `/about` when clean URLs map it to `about.html`).
    File(Arc<Representation>),
    /// A directory named without its trailing slash (301 to `/dir/`, so that
    /// relative links resolve), or a configured redirect rule. `location` is
    /// percent-encoded; the request's query is appended when it has none.
    Redirect { status: Status, location: Box<[u8]> },
    /// A directory without an index file, with listing enabled: the page
    /// for people and the JSON for programs (`Accept: application/json`).
    Listing {
        html: Arc<Representation>,
        json: Arc<Representation>,
    },
}

/// Where a representation's bytes live; cloning shares them.
#[derive(Debug, Clone)]
pub enum Body {
    /// Read (or compressed) at load time; served from memory.
    Memory(Bytes),
    /// Beyond the memory budget: a file on disk, kept open at load time
    /// (or, past the descriptors kept open, opened for each response).
    /// Shared by a precompressed sibling's own entry and the encoding it
    /// provides, so the file is loaded once. A send checks it
    /// against its load-time stamp (see [`DiskBody::unchanged`]). Also a
    /// large body in memory, as a frozen copy ([`DiskBody::frozen_copy`]), which
    /// is sent without a copy the same way and never changes.
    Disk(Arc<DiskBody>),
}

/// One representation of a resource (the identity or one content coding)
/// and its precomputed response parts.
#[derive(Debug)]
pub struct Representation {
    pub body: Body,
    /// Length in bytes, as of load time.
    pub len: u64,
    /// Strong entity-tag with quotes: a hash of this representation's bytes,
    /// so each encoding has its own (RFC 9110 §8.8.3).
    pub etag: Box<[u8]>,
    /// Modification time, seconds since the epoch.
    pub last_modified: u64,
    /// The Content-Type value.
    pub content_type: Box<str>,
    /// The content coding, for an encoded representation.
    pub coding: Option<Coding>,
    /// The representation's own header fields, the same for 200, 206 and
    /// 304: ETag, Last-Modified, Cache-Control, configured headers, Vary,
    /// Accept-Ranges. The model each protocol encodes.
    pub fields: Box<[Field]>,
    /// The fields and the 200 head encoded once for HTTP/1.1.
    pub h1: h1::Prepared,
    /// The same, as an HTTP/2 header block (static-table indices and
    /// literals only, so it is valid on every connection).
    pub h2: hpack::Prepared,
    /// The same, as an HTTP/3 QPACK section (static table and literals).
    pub h3: qpack::Prepared,
    /// The encoded representations, in the server's preference order. Empty
    /// for encoded representations themselves and for files not worth
    /// compressing; when not empty, every representation carries `Vary`.
    pub encoded: Box<[Encoded]>,
    /// The differences from earlier versions a browser may hold (RFC 9842),
    /// newest dictionary first, `dcb` before `dcz` for each. When not empty,
    /// every representation's `Vary` names `Available-Dictionary` too.
    pub deltas: Box<[Delta]>,
    /// For a delta: the bytes it saves against the smallest ordinary
    /// representation of the same file (for `/metrics`); 0 otherwise.
    pub saving: u64,
}

/// A file's representation as the difference from one earlier version.
#[derive(Debug)]
pub struct Delta {
    pub coding: Coding,
    /// The SHA-256 of the version it is the difference from.
    pub dictionary: [u8; 32],
    pub entry: Arc<Representation>,
}

/// A file's representation in one content coding.
#[derive(Debug)]
pub struct Encoded {
    pub coding: Coding,
    pub entry: Arc<Representation>,
}

impl Representation {
    /// A bare in-memory representation with no header fields: for synthetic
    /// bodies and tests, never for site files.
    pub fn in_memory(bytes: Bytes) -> Representation {
        Representation {
            len: bytes.len() as u64,
            body: Body::Memory(bytes),
            etag: Box::from(&b"\"\""[..]),
            last_modified: 0,
            content_type: Box::from("application/octet-stream"),
            coding: None,
            fields: Box::default(),
            h1: h1::Prepared::default(),
            h2: hpack::Prepared::default(),
            h3: qpack::Prepared::default(),
            encoded: Box::default(),
            deltas: Box::default(),
            saving: 0,
        }
    }

    /// The body's bytes in memory, if it has them: a heap body, or a frozen
    /// copy (which plain HTTP/1.1 still splices, through its `body`).
    #[inline]
    pub fn memory(&self) -> Option<&Bytes> {
        match &self.body {
            Body::Memory(bytes) => Some(bytes),
            Body::Disk(disk) => disk.mapped(),
        }
    }

    /// The body's frozen copy, if it is one: memory never written again,
    /// which a pipe may carry to a socket.
    #[inline]
    pub fn frozen_copy(&self) -> Option<&tachyon_sys::Frozen> {
        match &self.body {
            Body::Disk(disk) => disk.frozen_copy(),
            Body::Memory(_) => None,
        }
    }

    /// The codings on offer, for negotiation.
    pub fn codings(&self) -> impl Iterator<Item = Coding> + '_ {
        self.encoded.iter().map(|e| e.coding)
    }

    /// The dictionary codings this file has a delta in for a client holding
    /// `dictionary`, in the server's preference order.
    pub fn delta_codings(&self, dictionary: &[u8; 32]) -> impl Iterator<Item = Coding> + '_ {
        let d = *dictionary;
        self.deltas
            .iter()
            .filter(move |x| x.dictionary == d)
            .map(|x| x.coding)
    }

    /// The delta from `dictionary` in `coding`, if the file has one.
    pub fn delta(&self, dictionary: &[u8; 32], coding: Coding) -> Option<&Arc<Representation>> {
        self.deltas
            .iter()
            .find(|x| x.coding == coding && x.dictionary == *dictionary)
            .map(|x| &x.entry)
    }

    /// The representation in `coding`, if the file has one.
    pub fn encoding(&self, coding: Coding) -> Option<&Arc<Representation>> {
        self.encoded
            .iter()
            .find(|e| e.coding == coding)
            .map(|e| &e.entry)
    }
}
