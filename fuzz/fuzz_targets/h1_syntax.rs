//! Differential: tachyon's HTTP/1.1 head syntax (`request/syntax.rs`)
//! against `httparse`, which it replaced, on arbitrary bytes. Both must
//! find the same request line, the same fields and the same head length,
//! or the same partial head, or refuse alike (malformed, an unsupported
//! version, too many fields). The one difference allowed: a bare LF,
//! which tachyon refuses as soon as it meets it and httparse takes as a
//! line end (tachyon refused it after httparse before).
#![no_main]

use std::mem::MaybeUninit;

use libfuzzer_sys::fuzz_target;
use tachyon_http::request::syntax::{self, FieldLine, Step};
use tachyon_http::request::{Version, MAX_HEADERS};

#[derive(Debug, PartialEq)]
enum Verdict<'a> {
    Head {
        method: &'a [u8],
        target: &'a [u8],
        version: Version,
        fields: Vec<(&'a [u8], &'a [u8])>,
        len: usize,
    },
    Partial,
    Malformed,
    Version,
    TooManyFields,
}

fn ours(data: &[u8]) -> Verdict<'_> {
    let line = match syntax::request_line(data) {
        Ok(Step::Done(line)) => line,
        Ok(Step::Partial) => return Verdict::Partial,
        Err(e) => return refused(e),
    };
    let mut lines = syntax::Fields::new(data, line.len);
    let mut fields = Vec::new();
    loop {
        match lines.next_line() {
            Ok(Step::Done(FieldLine::Field { name, value })) => {
                if fields.len() == MAX_HEADERS {
                    return Verdict::TooManyFields;
                }
                fields.push((name, value));
            }
            Ok(Step::Done(FieldLine::End { head_len })) => {
                return Verdict::Head {
                    method: line.method,
                    target: line.target,
                    version: line.version,
                    fields,
                    len: head_len,
                }
            }
            Ok(Step::Partial) => return Verdict::Partial,
            Err(e) => return refused(e),
        }
    }
}

fn refused(e: tachyon_http::ParseError) -> Verdict<'static> {
    match e {
        tachyon_http::ParseError::Version => Verdict::Version,
        _ => Verdict::Malformed,
    }
}

/// httparse as tachyon called it, then its check for bare LFs.
fn reference(data: &[u8]) -> Verdict<'_> {
    let mut storage = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut []);
    let len = match req.parse_with_uninit_headers(data, &mut storage) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Verdict::Partial,
        Err(httparse::Error::Version) => return Verdict::Version,
        Err(httparse::Error::TooManyHeaders) => return Verdict::TooManyFields,
        Err(_) => return Verdict::Malformed,
    };
    if bare_lf(&data[..len]) {
        return Verdict::Malformed;
    }
    Verdict::Head {
        method: req.method.expect("a method").as_bytes(),
        target: req.path.expect("a target").as_bytes(),
        version: if req.version == Some(1) {
            Version::Http11
        } else {
            Version::Http10
        },
        fields: req
            .headers
            .iter()
            .map(|h| (h.name.as_bytes(), h.value))
            .collect(),
        len,
    }
}

fn bare_lf(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .enumerate()
        .any(|(i, &b)| b == b'\n' && (i == 0 || bytes[i - 1] != b'\r'))
}

fuzz_target!(|data: &[u8]| {
    let (mine, theirs) = (ours(data), reference(data));
    if mine == theirs {
        return;
    }
    let allowed =
        mine == Verdict::Malformed && !matches!(theirs, Verdict::Head { .. }) && bare_lf(data);
    assert!(allowed, "tachyon {mine:?}, httparse {theirs:?}");
});
