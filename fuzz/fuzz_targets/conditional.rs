//! Precondition evaluation with arbitrary validator headers and entity tags:
//! a matching strong tag in If-None-Match on GET is always a 304.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_http::conditional::{self, Precondition, Validators};
use tachyon_http::request::{self, HeadLimits, Parsed};

fuzz_target!(|input: (&[u8], &[u8], &[u8], u32)| {
    let (field, value, etag, modified) = input;
    let names: [&[u8]; 5] = [
        b"If-None-Match",
        b"If-Match",
        b"If-Modified-Since",
        b"If-Unmodified-Since",
        b"If-Range",
    ];
    let name = names[field.first().map_or(0, |b| usize::from(*b) % names.len())];
    let mut text = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
    text.extend_from_slice(name);
    text.extend_from_slice(b": ");
    text.extend_from_slice(value);
    text.extend_from_slice(b"\r\n\r\n");
    let mut combined = Vec::new();
    let Ok(Parsed::Complete(head)) = request::parse(&text, &mut combined, &HeadLimits::default())
    else {
        return;
    };
    let v = Validators {
        etag,
        last_modified: u64::from(modified),
    };
    let decision = conditional::evaluate(&head, v);
    if name == b"If-None-Match"
        && etag.len() >= 2
        && etag.starts_with(b"\"")
        && etag.ends_with(b"\"")
        && !etag[1..etag.len() - 1]
            .iter()
            .any(|&b| b == b'"' || b == b',' || b <= b' ')
        && head.if_none_match == Some(etag)
    {
        assert_eq!(decision, Precondition::NotModified);
    }
    let _ = conditional::parse_date(value);
});
