//! From a parsed request head and a snapshot to the response, written into an
//! outbox. No sockets, no clocks (the Date comes in), no allocation on a
//! cache hit; the one system call is an fstat of a disk-served file before
//! its head is written, so that a head never announces a length and ETag the
//! file no longer has.
//!
//! Owns the order of decisions for a static resource: method, target, lookup,
//! preconditions (RFC 9110 §13.2.2), then range (§14). Does not own framing
//! errors (those are decided by the parser and mapped in `tachyon_http::error`)
//! nor connection state (the caller says how the connection continues).

use std::sync::Arc;

use tachyon_http::conditional::{self, Precondition, Validators};
use tachyon_http::date::DateCache;
use tachyon_http::encoding::{self, Choice, Coding};
use tachyon_http::range::{self, ByteRange, RangeDecision, MAX_RANGES};
use tachyon_http::response::{self, Persistence, Status, ALLOW, COMMON_HEADERS};
use tachyon_http::target::site_path;
use tachyon_http::{Method, RequestHead};
use tachyon_snapshot::{Body, Entry, Representation, Snapshot};

use crate::outbox::Outbox;

/// Bodies up to this size are copied next to their head so the response
/// leaves in one `send`; larger ones go out by writev or sendfile without a copy.
const INLINE_BODY_MAX: u64 = 16 * 1024;

/// Sent with a 503 for a file that changed under the server: a reload is
/// on its way.
const RETRY_AFTER: &[u8] = b"Retry-After: 1\r\n";

/// What the response did to the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The connection may carry another request.
    Continue,
    /// The response said `Connection: close`.
    Close,
}

/// Per-worker state `respond` may reuse between calls.
#[derive(Default)]
pub struct Scratch {
    /// Holds a normalized target when it differs from the raw one.
    path: Vec<u8>,
}

/// Writes the response to `head` into `out`.
pub fn respond(
    head: &RequestHead<'_>,
    site: &Snapshot,
    date: &DateCache,
    persistence: Persistence,
    scratch: &mut Scratch,
    out: &mut Outbox,
) -> Outcome {
    let outcome = match persistence {
        Persistence::Close => Outcome::Close,
        _ => Outcome::Continue,
    };
    let head_only = head.method == Method::Head;
    match head.method {
        Method::Get | Method::Head => {}
        Method::Options => {
            options(out.buf(), date, persistence);
            return outcome;
        }
        Method::Other => {
            response::write_error(
                out.buf(),
                Status::MethodNotAllowed,
                date,
                persistence,
                ALLOW,
                false,
            );
            return outcome;
        }
    }
    let Ok(path) = site_path(head.raw_target, &mut scratch.path) else {
        response::write_error(
            out.buf(),
            Status::BadRequest,
            date,
            Persistence::Close,
            b"",
            head_only,
        );
        return Outcome::Close;
    };
    match site.lookup(path) {
        Some(Entry::File(file)) => serve_file(head, file, date, persistence, out),
        Some(Entry::Redirect { status, location }) => {
            redirect(head, *status, location, date, persistence, out.buf())
        }
        Some(Entry::Listing { html, json }) => {
            let wants_json = head
                .accept
                .is_some_and(|a| memchr::memmem::find(a, b"application/json").is_some());
            serve_file(
                head,
                if wants_json { json } else { html },
                date,
                persistence,
                out,
            )
        }
        None => match (site.fallback(), site.not_found_page()) {
            (Some(fallback), _) => serve_file(head, fallback, date, persistence, out),
            (None, Some(page)) => not_found_page(page, date, persistence, head_only, out),
            (None, None) => response::write_error(
                out.buf(),
                Status::NotFound,
                date,
                persistence,
                b"",
                head_only,
            ),
        },
    }
    outcome
}

/// The representation to send: negotiated only when the client sent
/// `Accept-Encoding` (benchmark clients do not, so their path skips this).
/// A request for several ranges gets the identity, because a multipart body
/// cannot say that its parts are slices of an encoded representation.
fn select<'f>(
    head: &RequestHead<'_>,
    file: &'f Arc<Representation>,
) -> Option<&'f Arc<Representation>> {
    let Some(accept) = head.accept_encoding else {
        return Some(file);
    };
    let several_ranges = head.range.is_some_and(|r| r.contains(&b','));
    let mut offered = [Coding::Br; 3];
    let mut n = 0;
    if !several_ranges {
        for coding in file.codings() {
            offered[n] = coding;
            n += 1;
        }
    }
    match encoding::choose(Some(accept), &offered[..n]) {
        Choice::Identity => Some(file),
        Choice::Encoded(coding) => file.encoding(coding).or(Some(file)),
        Choice::NotAcceptable => None,
    }
}

fn serve_file(
    head: &RequestHead<'_>,
    file: &Arc<Representation>,
    date: &DateCache,
    persistence: Persistence,
    out: &mut Outbox,
) {
    let head_only = head.method == Method::Head;
    let Some(file) = select(head, file) else {
        response::write_error(
            out.buf(),
            Status::NotAcceptable,
            date,
            persistence,
            b"",
            head_only,
        );
        return;
    };
    if let Body::Disk(disk) = &file.body {
        if !disk.unchanged() {
            // Changed on disk since load (an in-place write): the reloader
            // picks the new content up; until then, say so rather than send
            // bytes that do not match the ETag.
            response::write_error(
                out.buf(),
                Status::ServiceUnavailable,
                date,
                persistence,
                RETRY_AFTER,
                head_only,
            );
            return;
        }
    }
    let validators = Validators {
        etag: &file.etag,
        last_modified: file.last_modified,
    };
    // Only evaluate when the client sent a validator: the benchmark hot path
    // skips straight to the 200.
    let range_allowed = if head.if_none_match.is_some()
        || head.if_modified_since.is_some()
        || head.if_match.is_some()
        || head.if_unmodified_since.is_some()
        || head.if_range.is_some()
    {
        match conditional::evaluate(head, validators) {
            Precondition::Proceed { range_allowed } => range_allowed,
            Precondition::NotModified => {
                let buf = out.buf();
                Status::NotModified.write_line(buf);
                buf.extend_from_slice(&file.validator_fields);
                finish_head(buf, date, persistence);
                return;
            }
            Precondition::Failed => {
                response::write_error(
                    out.buf(),
                    Status::PreconditionFailed,
                    date,
                    persistence,
                    b"",
                    head_only,
                );
                return;
            }
        }
    } else {
        true
    };
    if let (Some(spec), true) = (head.range, range_allowed) {
        match range::decide(spec, file.len, MAX_RANGES) {
            RangeDecision::Full => {}
            RangeDecision::Unsatisfiable => {
                let buf = out.buf();
                Status::RangeNotSatisfiable.write_line(buf);
                buf.extend_from_slice(COMMON_HEADERS);
                buf.extend_from_slice(b"Content-Range: bytes */");
                buf.extend_from_slice(itoa::Buffer::new().format(file.len).as_bytes());
                buf.extend_from_slice(b"\r\nContent-Length: 0\r\n");
                finish_head(buf, date, persistence);
                return;
            }
            RangeDecision::Partial(ranges) => {
                match ranges.as_slice() {
                    [single] => single_range(file, *single, date, persistence, head_only, out),
                    many => multipart(file, many, date, persistence, head_only, out),
                }
                return;
            }
        }
    }
    let buf = out.buf();
    buf.extend_from_slice(&file.head_200);
    finish_head(buf, date, persistence);
    if !head_only {
        body(file, 0..file.len, out);
    }
}

fn single_range(
    file: &Arc<Representation>,
    r: ByteRange,
    date: &DateCache,
    persistence: Persistence,
    head_only: bool,
    out: &mut Outbox,
) {
    let buf = out.buf();
    Status::PartialContent.write_line(buf);
    buf.extend_from_slice(&file.validator_fields);
    buf.extend_from_slice(b"Content-Type: ");
    buf.extend_from_slice(file.content_type.as_bytes());
    buf.extend_from_slice(b"\r\n");
    buf.extend_from_slice(file.encoding_field);
    content_range(buf, r, file.len);
    response::write_content_length(buf, r.len());
    finish_head(buf, date, persistence);
    if !head_only {
        body(file, r.start..r.end, out);
    }
}

/// `multipart/byteranges` (RFC 9110 §14.6), with the length computed up front
/// so the response is not chunked.
fn multipart(
    file: &Arc<Representation>,
    ranges: &[ByteRange],
    date: &DateCache,
    persistence: Persistence,
    head_only: bool,
    out: &mut Outbox,
) {
    // The content hash keeps the boundary stable per representation and
    // vanishingly unlikely to occur inside it.
    let boundary = &file.etag[1..file.etag.len() - 1];
    let part_head = |r: &ByteRange, buf: &mut Vec<u8>| {
        buf.extend_from_slice(b"\r\n--tachyon-");
        buf.extend_from_slice(boundary);
        buf.extend_from_slice(b"\r\nContent-Type: ");
        buf.extend_from_slice(file.content_type.as_bytes());
        buf.extend_from_slice(b"\r\n");
        content_range(buf, *r, file.len);
        buf.extend_from_slice(b"\r\n");
    };
    let closing_len = b"\r\n--tachyon-".len() + boundary.len() + b"--\r\n".len();
    let mut measure = Vec::with_capacity(160);
    let mut total = closing_len as u64;
    for r in ranges {
        measure.clear();
        part_head(r, &mut measure);
        total += measure.len() as u64 + r.len();
    }
    let buf = out.buf();
    Status::PartialContent.write_line(buf);
    buf.extend_from_slice(&file.validator_fields);
    buf.extend_from_slice(b"Content-Type: multipart/byteranges; boundary=tachyon-");
    buf.extend_from_slice(boundary);
    buf.extend_from_slice(b"\r\n");
    response::write_content_length(buf, total);
    finish_head(buf, date, persistence);
    if head_only {
        return;
    }
    for r in ranges {
        part_head(r, out.buf());
        body(file, r.start..r.end, out);
    }
    let buf = out.buf();
    buf.extend_from_slice(b"\r\n--tachyon-");
    buf.extend_from_slice(boundary);
    buf.extend_from_slice(b"--\r\n");
}

fn content_range(buf: &mut Vec<u8>, r: ByteRange, len: u64) {
    let mut num = itoa::Buffer::new();
    buf.extend_from_slice(b"Content-Range: bytes ");
    buf.extend_from_slice(num.format(r.start).as_bytes());
    buf.push(b'-');
    buf.extend_from_slice(num.format(r.end - 1).as_bytes());
    buf.push(b'/');
    buf.extend_from_slice(num.format(len).as_bytes());
    buf.extend_from_slice(b"\r\n");
}

/// Appends a body range: copied inline when small, else as its own part.
fn body(file: &Arc<Representation>, range: std::ops::Range<u64>, out: &mut Outbox) {
    match file.memory() {
        Some(bytes) if range.end - range.start <= INLINE_BODY_MAX => {
            out.buf()
                .extend_from_slice(&bytes[range.start as usize..range.end as usize]);
        }
        _ => out.push_body(file, range),
    }
}

/// A 404 whose body is the site's own page.
fn not_found_page(
    page: &Arc<Representation>,
    date: &DateCache,
    persistence: Persistence,
    head_only: bool,
    out: &mut Outbox,
) {
    let buf = out.buf();
    Status::NotFound.write_line(buf);
    buf.extend_from_slice(COMMON_HEADERS);
    buf.extend_from_slice(b"Cache-Control: no-cache\r\nContent-Type: ");
    buf.extend_from_slice(page.content_type.as_bytes());
    buf.extend_from_slice(b"\r\n");
    response::write_content_length(buf, page.len);
    finish_head(buf, date, persistence);
    if !head_only {
        body(page, 0..page.len, out);
    }
}

fn redirect(
    head: &RequestHead<'_>,
    status: Status,
    location: &[u8],
    date: &DateCache,
    persistence: Persistence,
    buf: &mut Vec<u8>,
) {
    // The request's query carries over unless the rule's target has its own.
    let query = match location.contains(&b'?') {
        true => &b""[..],
        false => head
            .raw_target
            .iter()
            .position(|&b| b == b'?')
            .map_or(&b""[..], |i| &head.raw_target[i..]),
    };
    status.write_line(buf);
    buf.extend_from_slice(COMMON_HEADERS);
    buf.extend_from_slice(b"Location: ");
    buf.extend_from_slice(location);
    buf.extend_from_slice(query);
    buf.extend_from_slice(b"\r\nContent-Length: 0\r\n");
    finish_head(buf, date, persistence);
}

fn options(buf: &mut Vec<u8>, date: &DateCache, persistence: Persistence) {
    Status::NoContent.write_line(buf);
    buf.extend_from_slice(COMMON_HEADERS);
    buf.extend_from_slice(ALLOW);
    finish_head(buf, date, persistence);
}

/// Date, Connection and the blank line that ends every head.
#[inline]
fn finish_head(buf: &mut Vec<u8>, date: &DateCache, persistence: Persistence) {
    response::write_date(buf, date);
    buf.extend_from_slice(persistence.header());
    buf.extend_from_slice(b"\r\n");
}
