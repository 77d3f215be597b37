//! What one site path resolves to, with everything its responses need
//! computed at load time.

use std::fs::File;
use std::sync::Arc;

use bytes::Bytes;

/// A site path's meaning.
#[derive(Debug, Clone)]
pub enum Entry {
    /// A regular file (also used for `/dir/` when it has an index file).
    File(Arc<FileEntry>),
    /// A directory named without its trailing slash: redirect to `location`
    /// (percent-encoded, ends with `/`) so that relative links resolve.
    Redirect { location: Box<[u8]> },
}

/// Where a file's bytes live.
#[derive(Debug)]
pub enum Body {
    /// Read at load time; served from memory.
    Memory(Bytes),
    /// Beyond the memory budget: a file kept open at load time, served with
    /// sendfile. Its length is fixed at load; if the file shrinks later the
    /// server sees a short sendfile and closes the connection.
    Disk(File),
}

/// A file and its precomputed response parts.
#[derive(Debug)]
pub struct FileEntry {
    pub body: Body,
    /// Length in bytes, as of load time.
    pub len: u64,
    /// Strong entity-tag with quotes: a hash of the content.
    pub etag: Box<[u8]>,
    /// Modification time, seconds since the epoch.
    pub last_modified: u64,
    /// The Content-Type value.
    pub content_type: Box<str>,
    /// Header lines shared by 200, 206 and 304: Server, nosniff, ETag,
    /// Last-Modified, Cache-Control, Accept-Ranges. Each ends in CRLF.
    pub validator_fields: Box<[u8]>,
    /// `HTTP/1.1 200 OK` + validator fields + Content-Type + Content-Length,
    /// without Date, Connection and the final CRLF.
    pub head_200: Box<[u8]>,
}

impl FileEntry {
    /// The in-memory body, if this file has one.
    #[inline]
    pub fn memory(&self) -> Option<&Bytes> {
        match &self.body {
            Body::Memory(bytes) => Some(bytes),
            Body::Disk(_) => None,
        }
    }
}
