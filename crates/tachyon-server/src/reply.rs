//! From a parsed request head and a snapshot to a [`Reply`]: what the
//! response is, not how it is spelled. Protocol-neutral, so HTTP/1.1 (in
//! [`crate::h1`]) and any later protocol encode the same decisions.
//!
//! Owns the order of decisions for a static resource: method, target, lookup,
//! preconditions (RFC 9110 §13.2.2), then range (§14). Does not own framing
//! errors (those are decided by the parser and mapped in `tachyon_http::error`)
//! nor connection state. No sockets, no clocks, no allocation; the system
//! calls are a stat of a disk-served file, so that a reply never announces a
//! length and ETag the file no longer has, and the open of a file opened per
//! response ([`open_for_sending`]).

use std::fs::File;
use std::sync::Arc;

use tachyon_http::conditional::{self, Precondition, Validators};
use tachyon_http::encoding::{self, Choice, Coding};
use tachyon_http::multipart::Multipart;
use tachyon_http::range::{self, ByteRange, RangeDecision, Ranges, MAX_RANGES};
use tachyon_http::target::{absolute_form, site_path};
use tachyon_http::{Method, ParseError, RequestHead, Status};
use tachyon_snapshot::{Body, Entry, Representation, Snapshot};

/// The response a request gets.
// `Slices` keeps its ranges inline (264 bytes) so that a range request
// allocates nothing; a reply lives on the stack for one call.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Reply<'a> {
    /// 200 with the whole representation.
    Whole(&'a Arc<Representation>),
    /// 304: the client's copy is current.
    NotModified(&'a Arc<Representation>),
    /// 206 with one range.
    Slice(&'a Arc<Representation>, ByteRange),
    /// 206 `multipart/byteranges`. Boxed: the ranges are most of the
    /// enum's size, and every reply is moved a few times on its way out.
    Slices(&'a Arc<Representation>, Box<Ranges>),
    /// 416 for a representation of this length.
    Unsatisfiable(u64),
    /// A redirect; `query` is the request's, kept when `location` has none.
    Redirect {
        status: Status,
        location: &'a [u8],
        query: &'a [u8],
    },
    /// 308 to the same URL on HTTPS (`--redirect-https`): `host` without
    /// its port, `port` left out when it is 443.
    ToHttps {
        host: &'a [u8],
        port: Option<u16>,
        target: &'a [u8],
    },
    /// 404 with the site's own page.
    NotFoundPage(&'a Arc<Representation>),
    /// 204 with `Allow`.
    Options,
    /// 200 `text/plain` made in memory: an ACME HTTP-01 key authorization
    /// (RFC 8555 §8.3).
    Text(&'a [u8]),
    /// An error page; the connection continues.
    Error(Status),
    /// A request that cannot be trusted; the connection closes after it.
    Rejected(ParseError),
}

// Every reply is moved a few times between deciding and writing it.
const _: () = assert!(std::mem::size_of::<Reply<'static>>() <= 48);

impl Reply<'_> {
    /// Whether the connection must close after this reply, whatever the
    /// client asked for.
    pub fn closes(&self) -> bool {
        matches!(self, Reply::Rejected(_))
    }
}

/// What a reply was, for the access log and the metrics: the status, the
/// body's length as the response announces it (RFC 9110 §8.6; zero for
/// HEAD, 204 and 304) and the content coding of the representation sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub status: Status,
    pub body: u64,
    pub coding: Option<Coding>,
    /// Body bytes a dictionary delta saved against the file's smallest
    /// ordinary representation (0 for everything else).
    pub saved: u64,
}

impl Reply<'_> {
    /// The reply's [`Summary`]; `head_only` for HEAD, whose body is not sent.
    pub fn summary(&self, head_only: bool) -> Summary {
        let (status, body, coding) = match self {
            Reply::Whole(file) => (Status::Ok, file.len, file.coding),
            Reply::NotModified(file) => (Status::NotModified, 0, file.coding),
            Reply::Slice(file, range) => (Status::PartialContent, range.len(), file.coding),
            Reply::Slices(file, ranges) => {
                let len = multipart(file).body_len(ranges.as_slice());
                (Status::PartialContent, len, file.coding)
            }
            Reply::Unsatisfiable(_) => (Status::RangeNotSatisfiable, 0, None),
            Reply::Redirect { status, .. } => (*status, 0, None),
            Reply::ToHttps { .. } => (Status::PermanentRedirect, 0, None),
            Reply::NotFoundPage(page) => (Status::NotFound, page.len, page.coding),
            Reply::Options => (Status::NoContent, 0, None),
            Reply::Text(text) => (Status::Ok, text.len() as u64, None),
            Reply::Error(status) => (*status, error_page_len(*status), None),
            Reply::Rejected(error) => {
                let status = error.status();
                (status, error_page_len(status), None)
            }
        };
        let saved = match self {
            Reply::Whole(file) if !head_only => file.saving,
            _ => 0,
        };
        Summary {
            status,
            body: if head_only { 0 } else { body },
            coding,
            saved,
        }
    }
}

/// Opens the file a reply's body is read from, when it is one opened per
/// response (a disk-served file past the descriptors kept open), before
/// any byte of the head is written: a file that no longer holds the loaded
/// bytes, or no descriptor to open it with (`EMFILE` under load), is then a
/// 503 with `Retry-After`, where an open at send time could only end the
/// connection after a 200 head. Other bodies, and a HEAD's, need nothing.
pub fn open_for_sending(reply: Reply<'_>, head_only: bool) -> (Reply<'_>, Option<Arc<File>>) {
    let file = match &reply {
        Reply::Whole(file) | Reply::Slice(file, _) | Reply::Slices(file, _) => file,
        Reply::NotFoundPage(page) => page,
        _ => return (reply, None),
    };
    match &file.body {
        Body::Disk(disk) if disk.opens_per_response() && !head_only => match disk.open() {
            Ok(opened) => (reply, Some(opened)),
            Err(_) => (Reply::Error(Status::ServiceUnavailable), None),
        },
        _ => (reply, None),
    }
}

/// HTTP/2's check before a head: a file opened per response is only
/// checked to still be the loaded one (a stat), and opened when its DATA
/// can be sent (`h2`), so that streams waiting for a window hold no
/// descriptor. A file that changed is a 503 with `Retry-After`.
pub fn check_for_sending(reply: Reply<'_>, head_only: bool) -> Reply<'_> {
    let file = match &reply {
        Reply::Whole(file) | Reply::Slice(file, _) | Reply::Slices(file, _) => file,
        Reply::NotFoundPage(page) => page,
        _ => return reply,
    };
    match &file.body {
        Body::Disk(disk) if disk.opens_per_response() && !head_only && !disk.unchanged() => {
            Reply::Error(Status::ServiceUnavailable)
        }
        _ => reply,
    }
}

/// The `multipart/byteranges` framing of `file`: its boundary comes from
/// its ETag (unique per representation, unlikely inside it).
pub fn multipart(file: &Representation) -> Multipart<'_> {
    Multipart {
        boundary: &file.etag[1..file.etag.len() - 1],
        content_type: &file.content_type,
        total: file.len,
    }
}

fn error_page_len(status: Status) -> u64 {
    tachyon_http::response::ErrorPage(status).byte_len() as u64
}

/// Per-worker state [`decide`] may reuse between calls.
#[derive(Default)]
pub struct Scratch {
    /// Holds a normalized target when it differs from the raw one.
    path: Vec<u8>,
    /// The last `Accept-Encoding` field this worker read.
    accept: encoding::AcceptMemo,
}

/// Decides the reply to `head` from `site`.
pub fn decide<'a>(head: &RequestHead<'a>, site: &'a Snapshot, scratch: &mut Scratch) -> Reply<'a> {
    crate::guard::note_request(head);
    match head.method {
        Method::Get | Method::Head => {}
        Method::Options => return Reply::Options,
        Method::Other => return Reply::Error(Status::MethodNotAllowed),
    }
    let path = match site_path(head.raw_target, &mut scratch.path) {
        Ok(path) => path,
        Err(error) => return Reply::Rejected(error),
    };
    match site.lookup(path) {
        Some(Entry::File(file)) => representation(head, file, scratch),
        Some(Entry::Redirect { status, location }) => Reply::Redirect {
            status: *status,
            location,
            query: query(head, location),
        },
        Some(Entry::Listing { html, json }) => {
            let wants_json = head
                .accept
                .is_some_and(|a| memchr::memmem::find(a, b"application/json").is_some());
            representation(head, if wants_json { json } else { html }, scratch)
        }
        None => match (site.fallback(), site.not_found_page()) {
            (Some(fallback), _) => representation(head, fallback, scratch),
            (None, Some(page)) => Reply::NotFoundPage(page),
            (None, None) => Reply::Error(Status::NotFound),
        },
    }
}

/// The answer on a plain connection when only HTTPS is served: the same
/// host and target on `https://` at `port`. The Host must be a plain host
/// name or address (it is echoed into `Location`), else 400.
pub fn to_https<'a>(head: &RequestHead<'a>, port: u16) -> Reply<'a> {
    let Some(host) = head
        .host
        .map(crate::live::without_port)
        .filter(|h| is_host_name(h))
    else {
        return Reply::Error(Status::BadRequest);
    };
    let target = match absolute_form(head.raw_target) {
        Ok(Some(form)) => form.path,
        Ok(None) if head.raw_target.starts_with(b"/") => head.raw_target,
        // `OPTIONS *` and the like: the site's root.
        _ => b"/",
    };
    Reply::ToHttps {
        host,
        port: (port != 443).then_some(port),
        target,
    }
}

/// Letters, digits, `-` and `.` (a DNS name or IPv4 address), or an IPv6
/// literal in brackets.
fn is_host_name(host: &[u8]) -> bool {
    match host {
        [b'[', inner @ .., b']'] => inner
            .iter()
            .all(|&b| b.is_ascii_hexdigit() || b == b':' || b == b'.'),
        _ => {
            !host.is_empty()
                && host
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        }
    }
}

/// The request's query carries over a redirect unless the rule's target
/// has its own.
fn query<'a>(head: &RequestHead<'a>, location: &[u8]) -> &'a [u8] {
    if location.contains(&b'?') {
        return b"";
    }
    head.raw_target
        .iter()
        .position(|&b| b == b'?')
        .map_or(b"", |i| &head.raw_target[i..])
}

/// The representation to send: negotiated only when the client sent
/// `Accept-Encoding` (benchmark clients do not, so their path skips this).
/// A request for several ranges gets the identity, because a multipart body
/// cannot say that its parts are slices of an encoded representation.
fn select<'f>(
    head: &RequestHead<'_>,
    file: &'f Arc<Representation>,
    scratch: &mut Scratch,
) -> Option<&'f Arc<Representation>> {
    let Some(accept) = head.accept_encoding else {
        return Some(file);
    };
    let several_ranges = head.range.is_some_and(|r| r.contains(&b','));
    if let Some(delta) = head
        .available_dictionary
        .filter(|_| !file.deltas.is_empty() && !several_ranges)
        .and_then(|field| delta(accept, field, file))
    {
        return Some(delta);
    }
    let mut offered = [Coding::Br; 3];
    let mut n = 0;
    if !several_ranges {
        for coding in file.codings() {
            offered[n] = coding;
            n += 1;
        }
    }
    match scratch.accept.accepted(accept).choose(&offered[..n]) {
        Choice::Identity => Some(file),
        Choice::Encoded(coding) => file.encoding(coding).or(Some(file)),
        Choice::NotAcceptable => None,
    }
}

/// The delta from the dictionary the client holds, when the file has one
/// in a dictionary coding the client accepts (RFC 9842 §6).
fn delta<'f>(
    accept: &[u8],
    available: &[u8],
    file: &'f Arc<Representation>,
) -> Option<&'f Arc<Representation>> {
    let dictionary = encoding::available_dictionary(available)?;
    let mut offered = [Coding::Dcb; 2];
    let mut n = 0;
    for coding in file.delta_codings(&dictionary).take(2) {
        offered[n] = coding;
        n += 1;
    }
    let coding = encoding::delta(accept, &offered[..n])?;
    file.delta(&dictionary, coding)
}

/// Negotiation, then preconditions, then range, for one resource.
fn representation<'a>(
    head: &RequestHead<'_>,
    file: &'a Arc<Representation>,
    scratch: &mut Scratch,
) -> Reply<'a> {
    let Some(file) = select(head, file, scratch) else {
        return Reply::Error(Status::NotAcceptable);
    };
    if let Body::Disk(disk) = &file.body {
        if !disk.unchanged() {
            // Changed on disk since load (an in-place write): the reloader
            // picks the new content up; until then, say so rather than send
            // bytes that do not match the ETag.
            return Reply::Error(Status::ServiceUnavailable);
        }
    }
    // Only evaluate when the client sent a validator: the benchmark hot path
    // skips straight to the 200.
    let has_validators = head.if_none_match.is_some()
        || head.if_modified_since.is_some()
        || head.if_match.is_some()
        || head.if_unmodified_since.is_some()
        || head.if_range.is_some();
    let range_allowed = if has_validators {
        let validators = Validators {
            etag: &file.etag,
            last_modified: file.last_modified,
        };
        match conditional::evaluate(head, validators) {
            Precondition::Proceed { range_allowed } => range_allowed,
            Precondition::NotModified => return Reply::NotModified(file),
            Precondition::Failed => return Reply::Error(Status::PreconditionFailed),
        }
    } else {
        true
    };
    match head.range.filter(|_| range_allowed) {
        None => Reply::Whole(file),
        Some(spec) => match range::decide(spec, file.len, MAX_RANGES) {
            RangeDecision::Full => Reply::Whole(file),
            RangeDecision::Unsatisfiable => Reply::Unsatisfiable(file.len),
            RangeDecision::Partial(ranges) => match ranges.as_slice() {
                [single] => Reply::Slice(file, *single),
                _ => Reply::Slices(file, Box::new(ranges)),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    //! The order of decisions, one request at a time against a small site
    //! loaded from a temporary folder.

    use tachyon_http::request::{parse, HeadLimits, Parsed};
    use tachyon_snapshot::{LoadOptions, RedirectRule};

    use super::*;

    /// A site: `a.txt` (4 KiB of text, so it gets encoded variants),
    /// `d/index.html`, and a redirect `/old` → `/new`.
    struct Site {
        /// Removed with the site.
        _dir: tachyon_testkit::Scratch,
        snapshot: Snapshot,
    }

    impl Site {
        fn new(tweak: impl FnOnce(&mut LoadOptions)) -> Site {
            let dir = tachyon_testkit::Scratch::new("reply");
            std::fs::create_dir_all(dir.join("d")).unwrap();
            std::fs::write(dir.join("a.txt"), "hello text ".repeat(400)).unwrap();
            std::fs::write(dir.join("d/index.html"), "<p>d</p>").unwrap();
            std::fs::write(dir.join("404.html"), "<p>gone</p>").unwrap();
            let mut options = LoadOptions {
                settle: std::time::Duration::ZERO,
                redirects: vec![RedirectRule::new("/old", "/new", 301).unwrap()],
                ..LoadOptions::default()
            };
            tweak(&mut options);
            let snapshot = Snapshot::load(dir.path(), &options).unwrap();
            Site {
                _dir: dir,
                snapshot,
            }
        }

        /// The reply to `request` (a request line and fields, without the
        /// blank line), summarized as its status and coding.
        fn ask(&self, request: &str) -> (u16, Option<&'static str>) {
            let input = format!("{request}\r\n\r\n");
            let mut combined = Vec::new();
            let Ok(Parsed::Complete(head)) =
                parse(input.as_bytes(), &mut combined, &HeadLimits::default())
            else {
                panic!("not a request: {request}");
            };
            let reply = decide(&head, &self.snapshot, &mut Scratch::default());
            let summary = reply.summary(false);
            (summary.status.code(), summary.coding.map(|c| c.token()))
        }
    }

    const HOST: &str = "Host: t";

    #[test]
    fn methods_come_first() {
        let site = Site::new(|_| {});
        assert_eq!(
            site.ask(&format!("OPTIONS /a.txt HTTP/1.1\r\n{HOST}")).0,
            204
        );
        assert_eq!(
            site.ask(&format!(
                "POST /a.txt HTTP/1.1\r\n{HOST}\r\nContent-Length: 0"
            ))
            .0,
            405
        );
        assert_eq!(site.ask(&format!("HEAD /a.txt HTTP/1.1\r\n{HOST}")).0, 200);
    }

    #[test]
    fn targets_that_leave_the_site_are_rejected_before_any_lookup() {
        let site = Site::new(|_| {});
        assert_eq!(
            site.ask(&format!("GET /%2e%2e/etc/passwd HTTP/1.1\r\n{HOST}"))
                .0,
            400
        );
        assert_eq!(
            site.ask(&format!("GET /d/../a.txt HTTP/1.1\r\n{HOST}")).0,
            200
        );
    }

    #[test]
    fn lookups_redirects_and_what_is_missing() {
        let site = Site::new(|_| {});
        assert_eq!(site.ask(&format!("GET /d/ HTTP/1.1\r\n{HOST}")).0, 200);
        assert_eq!(site.ask(&format!("GET /d HTTP/1.1\r\n{HOST}")).0, 301);
        assert_eq!(site.ask(&format!("GET /old?x=1 HTTP/1.1\r\n{HOST}")).0, 301);
        assert_eq!(site.ask(&format!("GET /nope HTTP/1.1\r\n{HOST}")).0, 404);
        let with_page = Site::new(|o| o.not_found_page = Some("/404.html".into()));
        assert_eq!(
            with_page.ask(&format!("GET /nope HTTP/1.1\r\n{HOST}")).0,
            404
        );
        let spa = Site::new(|o| o.fallback = Some("/d/index.html".into()));
        assert_eq!(spa.ask(&format!("GET /route/x HTTP/1.1\r\n{HOST}")).0, 200);
    }

    #[test]
    fn codings_are_negotiated_only_when_asked() {
        let site = Site::new(|_| {});
        assert_eq!(
            site.ask(&format!("GET /a.txt HTTP/1.1\r\n{HOST}")),
            (200, None)
        );
        assert_eq!(
            site.ask(&format!(
                "GET /a.txt HTTP/1.1\r\n{HOST}\r\nAccept-Encoding: gzip, deflate, br, zstd"
            )),
            (200, Some("br"))
        );
        assert_eq!(
            site.ask(&format!(
                "GET /a.txt HTTP/1.1\r\n{HOST}\r\nAccept-Encoding: gzip"
            )),
            (200, Some("gzip"))
        );
        assert_eq!(
            site.ask(&format!(
                "GET /a.txt HTTP/1.1\r\n{HOST}\r\nAccept-Encoding: identity;q=0"
            )),
            (406, None)
        );
        // Several ranges get the identity: multipart parts cannot be
        // slices of an encoded representation.
        assert_eq!(
            site.ask(&format!(
                "GET /a.txt HTTP/1.1\r\n{HOST}\r\nAccept-Encoding: br\r\nRange: bytes=0-1,5-6"
            )),
            (206, None)
        );
    }

    #[test]
    fn preconditions_come_before_ranges() {
        let site = Site::new(|_| {});
        let Some(Entry::File(file)) = site.snapshot.lookup(b"/a.txt") else {
            panic!("a.txt");
        };
        let etag = String::from_utf8(file.etag.to_vec()).unwrap();
        let ask = |fields: &str| {
            site.ask(&format!("GET /a.txt HTTP/1.1\r\n{HOST}\r\n{fields}"))
                .0
        };
        assert_eq!(
            ask(&format!("If-None-Match: {etag}\r\nRange: bytes=0-9")),
            304
        );
        assert_eq!(ask("If-Match: \"other\""), 412);
        assert_eq!(ask("Range: bytes=0-9"), 206);
        assert_eq!(ask("Range: bytes=0-1,10-11"), 206);
        assert_eq!(ask("Range: bytes=999999-"), 416);
        // A stale If-Range sends the whole representation.
        assert_eq!(ask("If-Range: \"stale\"\r\nRange: bytes=0-9"), 200);
        assert_eq!(ask(&format!("If-Range: {etag}\r\nRange: bytes=0-9")), 206);
    }

    #[test]
    fn the_redirect_to_https_keeps_host_and_target() {
        let input = b"GET /a?b HTTP/1.1\r\nHost: example.com:8080\r\n\r\n";
        let mut combined = Vec::new();
        let Ok(Parsed::Complete(head)) = parse(input, &mut combined, &HeadLimits::default()) else {
            panic!("a request");
        };
        let Reply::ToHttps { host, port, target } = to_https(&head, 8443) else {
            panic!("a redirect");
        };
        assert_eq!(
            (host, port, target),
            (&b"example.com"[..], Some(8443), &b"/a?b"[..])
        );
        let Reply::ToHttps { port, .. } = to_https(&head, 443) else {
            panic!("a redirect");
        };
        assert_eq!(port, None);
        let bad = b"GET / HTTP/1.1\r\nHost: a\"b\r\n\r\n";
        if let Ok(Parsed::Complete(head)) = parse(bad, &mut combined, &HeadLimits::default()) {
            assert!(matches!(
                to_https(&head, 443),
                Reply::Error(Status::BadRequest)
            ));
        }
    }
}
