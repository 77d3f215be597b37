//! One writer of response heads for every protocol: [`Head`] writes the
//! response model of [`crate::response`] (a status, fields, the fields of
//! the exchange), and a [`Dialect`] spells it: HTTP/1.1 text
//! ([`crate::h1::Http1`]) or an HPACK block ([`crate::h2::hpack::Hpack`]).
//! The dialect holds only what differs between protocols, as hyper's
//! `Http1Transaction` holds the differences between client and server:
//! how a status and a field are written, and how a head ends.
//!
//! Two layers, as the fast path needs: [`Prepared`] holds a representation's
//! fields encoded once at load (a 200's head is a single copy per request),
//! and [`Head`] writes the per-request rest around them. Does not decide
//! anything: which status and fields a response carries is the caller's.
//!
//! Invariant: every field value written was checked when its [`Field`] was
//! built, or is a number, a token of ours or a checked request value.

use std::marker::PhantomData;
use std::ops::Range;

use crate::encoding::Coding;
use crate::range::ByteRange;
use crate::response::{
    ErrorPage, Exchange, Field, Name, Persistence, Status, ALLOWED_METHODS, NOSNIFF,
    RETRY_AFTER_SECS, SERVER,
};

/// What a protocol spells its own way.
pub trait Dialect {
    /// Writes the status: HTTP/1.1's status line, a `:status` field.
    fn status(buf: &mut Vec<u8>, status: Status);
    /// Writes one field whose value is the concatenation of `parts`.
    fn field(buf: &mut Vec<u8>, name: &Name, parts: &[&[u8]]);
    /// Ends the head: HTTP/1.1 says how the connection goes on and adds
    /// the blank line; HTTP/2 and HTTP/3 have no `Connection` field (RFC
    /// 9113 §8.2.2) and frame the block instead.
    fn end(buf: &mut Vec<u8>, persistence: Persistence);
}

/// A response head being written into a buffer, in dialect `D`.
pub struct Head<'b, D> {
    buf: &'b mut Vec<u8>,
    dialect: PhantomData<D>,
}

impl<'b, D: Dialect> Head<'b, D> {
    /// Starts a head with its status and the fields every response carries.
    pub fn start(buf: &'b mut Vec<u8>, status: Status) -> Head<'b, D> {
        D::status(buf, status);
        let mut head = Head::prepared(buf, &[]);
        head.field(&Name::Server, SERVER.as_bytes());
        head.field(&Name::XContentTypeOptions, NOSNIFF.as_bytes());
        head
    }

    /// Starts a head from a block prepared at load that already holds the
    /// status and the common fields (a representation's 200).
    pub fn prepared(buf: &'b mut Vec<u8>, block: &[u8]) -> Head<'b, D> {
        buf.extend_from_slice(block);
        Head {
            buf,
            dialect: PhantomData,
        }
    }

    /// Appends fields encoded at load (see [`Prepared`]).
    pub fn block(&mut self, block: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(block);
        self
    }

    /// Appends one field.
    pub fn field(&mut self, name: &Name, value: &[u8]) -> &mut Self {
        self.field_parts(name, &[value])
    }

    /// Appends one field whose value is the concatenation of `parts` (a
    /// location and the request's query), without joining them first.
    pub fn field_parts(&mut self, name: &Name, parts: &[&[u8]]) -> &mut Self {
        D::field(self.buf, name, parts);
        self
    }

    pub fn content_length(&mut self, len: u64) -> &mut Self {
        self.field(
            &Name::ContentLength,
            itoa::Buffer::new().format(len).as_bytes(),
        )
    }

    /// `Content-Range: bytes START-END/LEN` (RFC 9110 §14.4).
    pub fn content_range(&mut self, range: ByteRange, len: u64) -> &mut Self {
        let (mut a, mut b, mut c) = (
            itoa::Buffer::new(),
            itoa::Buffer::new(),
            itoa::Buffer::new(),
        );
        self.field_parts(
            &Name::ContentRange,
            &[
                b"bytes ",
                a.format(range.start).as_bytes(),
                b"-",
                b.format(range.end - 1).as_bytes(),
                b"/",
                c.format(len).as_bytes(),
            ],
        )
    }

    /// `Content-Range: bytes */LEN`, sent with a 416.
    pub fn unsatisfied_range(&mut self, len: u64) -> &mut Self {
        let mut n = itoa::Buffer::new();
        self.field_parts(
            &Name::ContentRange,
            &[b"bytes */", n.format(len).as_bytes()],
        )
    }

    /// Ends the head: the connection's fields, `Date`, then the dialect's end.
    pub fn finish(self, exchange: &Exchange<'_>) {
        for field in exchange.fields {
            D::field(self.buf, field.name(), &[field.value().as_bytes()]);
        }
        D::field(self.buf, &Name::Date, &[exchange.date.bytes()]);
        D::end(self.buf, exchange.persistence);
    }

    fn written(&self) -> usize {
        self.buf.len()
    }
}

/// The head of an error response; its page ([`ErrorPage`]) is the body,
/// announced in full even for HEAD (RFC 9110 §9.3.2).
pub fn error<D: Dialect>(buf: &mut Vec<u8>, status: Status, exchange: &Exchange<'_>) {
    let page = ErrorPage(status);
    let mut head = Head::<D>::start(buf, status);
    head.field(&Name::ContentType, b"text/html; charset=utf-8")
        .field(&Name::CacheControl, b"no-store")
        .content_length(page.byte_len() as u64);
    match status {
        Status::MethodNotAllowed => {
            head.field(&Name::Allow, ALLOWED_METHODS.as_bytes());
        }
        // A file that changed under the server: a reload is on its way.
        Status::ServiceUnavailable => {
            head.field(&Name::RetryAfter, RETRY_AFTER_SECS.as_bytes());
        }
        _ => {}
    }
    head.finish(exchange);
}

/// The answer to OPTIONS: what a static site allows.
pub fn options<D: Dialect>(buf: &mut Vec<u8>, exchange: &Exchange<'_>) {
    let mut head = Head::<D>::start(buf, Status::NoContent);
    head.field(&Name::Allow, ALLOWED_METHODS.as_bytes());
    head.finish(exchange);
}

/// A representation's fields, encoded once at load in dialect `D`: one
/// buffer holding the 200's status and common fields, the
/// representation's own fields (validators and the rest, also sent with
/// 206 and 304), then its content fields (`Content-Type`,
/// `Content-Encoding`: 200 and 206 only, RFC 9110 §15.4.5) and
/// `Content-Length`.
#[derive(Debug)]
pub struct Prepared<D> {
    bytes: Box<[u8]>,
    validators: Range<usize>,
    content: Range<usize>,
    dialect: PhantomData<D>,
}

impl<D> Default for Prepared<D> {
    fn default() -> Self {
        Prepared {
            bytes: Box::default(),
            validators: 0..0,
            content: 0..0,
            dialect: PhantomData,
        }
    }
}

impl<D: Dialect> Prepared<D> {
    /// Encodes `fields` (the representation's own, in order), its type,
    /// coding and length.
    pub fn new(fields: &[Field], content_type: &str, coding: Option<Coding>, len: u64) -> Self {
        let mut buf = Vec::with_capacity(256);
        let mut head = Head::<D>::start(&mut buf, Status::Ok);
        let own = head.written();
        for field in fields {
            head.field(field.name(), field.value().as_bytes());
        }
        let content = head.written();
        head.field(&Name::ContentType, content_type.as_bytes());
        if let Some(coding) = coding {
            head.field(&Name::ContentEncoding, coding.token().as_bytes());
        }
        let end = head.written();
        head.content_length(len);
        Prepared {
            bytes: buf.into_boxed_slice(),
            validators: own..content,
            content: content..end,
            dialect: PhantomData,
        }
    }

    /// The whole 200 head without the exchange's fields and the end.
    pub fn ok_head(&self) -> &[u8] {
        &self.bytes
    }

    /// The representation's own fields (validators, caching, configured
    /// headers), without the ones [`Head::start`] writes.
    pub fn validators(&self) -> &[u8] {
        &self.bytes[self.validators.clone()]
    }

    /// `Content-Type`, and `Content-Encoding` for an encoded representation.
    pub fn content(&self) -> &[u8] {
        &self.bytes[self.content.clone()]
    }
}
