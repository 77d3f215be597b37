//! What the end-to-end specs, the server's unit tests and `tachyon-bench`
//! share to talk to a server they started: a plain HTTP/1.1 response reader
//! over any buffered stream (here), a TLS client for a self-made
//! certificate (`tls`), how headless Chromium is run (`chromium`), a
//! test's own temporary folder (`scratch`), and text for a test site
//! ([`random_letters`]).
//!
//! Reads what a server sends, as a client would, and says what went wrong
//! instead of guessing: a response is a status line, a head and a body
//! framed by Content-Length or chunked coding (RFC 9112 §6–7). Sends
//! nothing: each caller writes its own requests, malformed ones included.

use std::io::{BufRead, ErrorKind, Read};

pub mod chromium;
pub mod scratch;
pub mod tls;

pub use scratch::Scratch;

/// `len` lowercase letters drawn by a fixed linear congruential
/// generator: text gzip shrinks by only about a third, so a file of it has
/// a content coding of a known, large size, the same in every run.
pub fn random_letters(len: usize) -> Vec<u8> {
    let mut seed = 0x2545_f491_u32;
    (0..len)
        .map(|_| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            b'a' + (seed >> 24) as u8 % 26
        })
        .collect()
}

/// One response read off the wire.
#[derive(Debug, Clone, Default)]
pub struct Response {
    pub status: u16,
    /// The status line and the field lines, CRLFs included.
    pub head: String,
    pub body: Vec<u8>,
    /// The connection ended before the body did.
    pub short: bool,
}

impl Response {
    /// The first value of a field, its name matched case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Reads one response. `head_only` for an answer to HEAD (or when the
/// body must not be read); 204 and 304 have none either way.
pub fn read_response(conn: &mut impl BufRead, head_only: bool) -> Result<Response, String> {
    let mut response = Response {
        head: read_head(conn)?,
        ..Response::default()
    };
    response.status = response
        .head
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line in {:?}", response.head))?;
    if head_only || matches!(response.status, 204 | 304) {
        return Ok(response);
    }
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    (response.body, response.short) = if chunked {
        read_chunked(conn)?
    } else {
        let len = match response.header("content-length") {
            Some(v) => v
                .parse::<usize>()
                .map_err(|_| format!("bad Content-Length {v:?}"))?,
            None => 0,
        };
        read_exact_or_short(conn, len)?
    };
    Ok(response)
}

/// The head, up to and including its blank line.
fn read_head(conn: &mut impl BufRead) -> Result<String, String> {
    let mut head = String::new();
    loop {
        let before = head.len();
        match conn.read_line(&mut head) {
            Ok(0) if before == 0 => return Err("closed before a response".into()),
            Ok(0) => return Err(format!("closed inside the head {head:?}")),
            Ok(_) => {}
            Err(e) => return Err(format!("reading the head: {e}")),
        }
        if head[before..].trim_end().is_empty() && before > 0 {
            return Ok(head);
        }
    }
}

/// `len` bytes, or what came before the connection ended (`true`).
fn read_exact_or_short(conn: &mut impl Read, len: usize) -> Result<(Vec<u8>, bool), String> {
    let mut body = vec![0u8; len];
    let mut got = 0;
    while got < len {
        match conn.read(&mut body[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("reading the body: {e}")),
        }
    }
    body.truncate(got);
    Ok((body, got < len))
}

/// A chunked body, decoded (extensions and trailer fields skipped); `true`
/// when the connection ended before the last chunk.
pub fn read_chunked(conn: &mut impl BufRead) -> Result<(Vec<u8>, bool), String> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        match conn.read_line(&mut size_line) {
            Ok(0) => return Ok((body, true)),
            Ok(_) => {}
            Err(e) => return Err(format!("reading a chunk size: {e}")),
        }
        let hex = size_line.trim_end().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(hex.trim(), 16)
            .map_err(|_| format!("bad chunk size line {size_line:?}"))?;
        if size == 0 {
            return skip_trailers(conn, body);
        }
        let start = body.len();
        body.resize(start + size + 2, 0);
        if conn.read_exact(&mut body[start..]).is_err() {
            body.truncate(start);
            return Ok((body, true));
        }
        if &body[start + size..] != b"\r\n" {
            return Err("a chunk not followed by CRLF".into());
        }
        body.truncate(start + size);
    }
}

/// Trailer fields, then the blank line that ends a chunked body.
fn skip_trailers(conn: &mut impl BufRead, body: Vec<u8>) -> Result<(Vec<u8>, bool), String> {
    loop {
        let mut line = String::new();
        match conn.read_line(&mut line) {
            Ok(0) => return Ok((body, true)),
            Ok(_) if line.trim_end().is_empty() => return Ok((body, false)),
            Ok(_) => {}
            Err(e) => return Err(format!("reading trailers: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &'static [u8], head_only: bool) -> Result<Response, String> {
        read_response(&mut &bytes[..], head_only)
    }

    #[test]
    fn a_length_framed_body_and_its_fields() {
        let r = read(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"x\"\r\n\r\nhelloEXTRA",
            false,
        )
        .unwrap();
        assert_eq!(
            (r.status, r.body.as_slice(), r.short),
            (200, &b"hello"[..], false)
        );
        assert_eq!(r.header("etag"), Some("\"x\""));
        assert_eq!(r.header("content-type"), None);
    }

    #[test]
    fn head_answers_and_304_have_no_body() {
        let r = read(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true).unwrap();
        assert!(r.body.is_empty() && !r.short);
        let r = read(
            b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
            false,
        )
        .unwrap();
        assert!(r.body.is_empty() && !r.short);
    }

    #[test]
    fn a_body_cut_short_is_said() {
        let r = read(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhal", false).unwrap();
        assert_eq!((r.body.as_slice(), r.short), (&b"hal"[..], true));
        assert!(read(b"", false).unwrap_err().contains("closed before"));
        assert!(read(b"HTTP/1.1 200 OK\r\nX: 1", false)
            .unwrap_err()
            .contains("inside the head"));
    }

    #[test]
    fn chunked_bodies_decode_with_extensions_and_trailers() {
        let r = read(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n",
            false,
        )
        .unwrap();
        assert_eq!((r.body.as_slice(), r.short), (&b"abcde"[..], false));
        let r = read(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
            false,
        )
        .unwrap();
        assert!(r.short);
        for bad in [&b"3\r\nabcXY"[..], b"zz\r\n"] {
            assert!(read_chunked(&mut &bad[..]).is_err(), "{bad:?}");
        }
    }
}
