//! A request's field section as HTTP/2 and HTTP/3 carry it (pseudo-fields
//! and lowercase names, decoded by HPACK or QPACK), checked into the
//! fields a static server acts on.
//!
//! Owns the rules both protocols share (RFC 9113 §8.2–8.3, RFC 9114
//! §4.2–4.3): lowercase names, pseudo-fields first and once each, only
//! the request ones, no connection-specific fields, `:method`, `:scheme`
//! and a non-empty `:path`, and the size limits, counted as fields arrive.
//! Decodes nothing: the codecs hand it one field at a time.
//!
//! Invariant: a [`RequestHead`] handed out here has a method, a scheme and
//! a non-empty path, and no field value in it holds NUL, CR or LF.

use std::ops::Range;

use crate::fields::is_tchar;
use crate::request::{BodyFraming, Method, RequestHead, Version};
use crate::words;

/// How much of a request's fields a decoder accepts.
#[derive(Debug, Clone, Copy)]
pub struct DecodeLimits {
    /// Decoded size in RFC 9113's measure (name + value + 32 per field),
    /// what SETTINGS_MAX_HEADER_LIST_SIZE (HTTP/3: MAX_FIELD_SECTION_SIZE)
    /// announces; beyond it the request gets 431.
    pub max_list_size: usize,
    /// Longest `:path`; beyond it the request gets 414.
    pub max_path: usize,
}

/// Why a header block could not become a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// Not valid HPACK or QPACK: the connection's decoding state is lost
    /// (HTTP/2 COMPRESSION_ERROR, HTTP/3 QPACK_DECOMPRESSION_FAILED).
    Compression,
    /// Decoded, but not a valid request (RFC 9113 §8.1.1, RFC 9114
    /// §4.1.2): a stream error.
    Malformed,
    /// Larger than SETTINGS_MAX_HEADER_LIST_SIZE: answered with 431.
    TooLarge,
    /// `:path` longer than the limit: answered with 414.
    PathTooLong,
}

/// Which request field a decoded value belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Method,
    Scheme,
    Path,
    Authority,
    Host,
    IfNoneMatch,
    IfModifiedSince,
    IfMatch,
    IfUnmodifiedSince,
    Range,
    IfRange,
    AcceptEncoding,
    AvailableDictionary,
    Accept,
    UserAgent,
    Referer,
    Priority,
    ContentLength,
}
const SLOTS: usize = Slot::ContentLength as usize + 1;

impl Slot {
    fn of(name: &[u8]) -> Option<Slot> {
        Some(match name {
            b":method" => Slot::Method,
            b":scheme" => Slot::Scheme,
            b":path" => Slot::Path,
            b":authority" => Slot::Authority,
            b"host" => Slot::Host,
            b"if-none-match" => Slot::IfNoneMatch,
            b"if-modified-since" => Slot::IfModifiedSince,
            b"if-match" => Slot::IfMatch,
            b"if-unmodified-since" => Slot::IfUnmodifiedSince,
            b"range" => Slot::Range,
            b"if-range" => Slot::IfRange,
            b"accept-encoding" => Slot::AcceptEncoding,
            b"available-dictionary" => Slot::AvailableDictionary,
            b"accept" => Slot::Accept,
            b"user-agent" => Slot::UserAgent,
            b"referer" => Slot::Referer,
            b"priority" => Slot::Priority,
            b"content-length" => Slot::ContentLength,
            _ => return None,
        })
    }

    /// Lists whose repeated lines are joined with commas (RFC 9110 §5.3).
    fn is_list(self) -> bool {
        matches!(
            self,
            Slot::IfNoneMatch
                | Slot::IfMatch
                | Slot::AcceptEncoding
                | Slot::Accept
                | Slot::Priority
        )
    }
}

/// The values of one decoded request, kept in one buffer the connection
/// reuses, so decoding allocates nothing once warm.
#[derive(Default)]
pub struct Fields {
    buf: Vec<u8>,
    slots: [Option<Range<usize>>; SLOTS],
    /// The protocol the section came over.
    version: Option<Version>,
}

impl Fields {
    /// Empties them, keeping the buffer's capacity.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.slots = Default::default();
        self.version = None;
    }

    /// Bytes they hold.
    pub fn footprint(&self) -> usize {
        std::mem::size_of::<Fields>() + self.buf.capacity()
    }

    fn get(&self, slot: Slot) -> Option<&[u8]> {
        self.slots[slot as usize].clone().map(|r| &self.buf[r])
    }

    /// The request's `content-length`, if it sent a valid one.
    pub fn content_length(&self) -> Option<u64> {
        let v = self.get(Slot::ContentLength)?;
        std::str::from_utf8(v).ok()?.parse().ok()
    }

    /// The urgency the request asked for in its `priority` field (RFC 9218
    /// §4.1: `u=0` most urgent to `u=7`, 3 when absent or not understood).
    /// The last `u` of the dictionary wins; other members are ignored.
    pub fn urgency(&self) -> u8 {
        const DEFAULT: u8 = 3;
        let Some(value) = self.get(Slot::Priority) else {
            return DEFAULT;
        };
        value
            .split(|&b| b == b',')
            .rev()
            .find_map(|member| {
                let member = member.trim_ascii();
                // A member's parameters follow ';' and do not change it.
                let member = member.split(|&b| b == b';').next().unwrap_or_default();
                match member {
                    [b'u', b'=', digit @ b'0'..=b'7'] => Some(digit - b'0'),
                    _ => None,
                }
            })
            .unwrap_or(DEFAULT)
    }

    fn put(&mut self, slot: Slot, value: &[u8]) -> Result<(), DecodeError> {
        match self.slots[slot as usize].clone() {
            None => {
                let start = self.buf.len();
                self.buf.extend_from_slice(value);
                self.slots[slot as usize] = Some(start..self.buf.len());
            }
            Some(old) if slot.is_list() => {
                // Join repeated lines; move the earlier value to the end
                // first when something was written after it.
                let start = if old.end == self.buf.len() {
                    old.start
                } else {
                    let start = self.buf.len();
                    self.buf.extend_from_within(old);
                    start
                };
                self.buf.extend_from_slice(b", ");
                self.buf.extend_from_slice(value);
                self.slots[slot as usize] = Some(start..self.buf.len());
            }
            // A pseudo-field twice (§8.3), or two different lengths.
            Some(old) => {
                if slot != Slot::ContentLength || self.buf[old] != *value {
                    return Err(DecodeError::Malformed);
                }
            }
        }
        Ok(())
    }

    /// The request these fields describe; `head_len` and `body` are the
    /// HTTP/1.1 framing and mean nothing here.
    pub fn head(&self) -> RequestHead<'_> {
        let raw_method = self.get(Slot::Method).unwrap_or(b"");
        RequestHead {
            method: match raw_method {
                b"GET" => Method::Get,
                b"HEAD" => Method::Head,
                b"OPTIONS" => Method::Options,
                _ => Method::Other,
            },
            raw_method,
            raw_target: self.get(Slot::Path).unwrap_or(b""),
            version: self.version.unwrap_or(Version::Http2),
            head_len: 0,
            keep_alive: true,
            body: BodyFraming::None,
            // RFC 9113 §8.3.1: :authority, else Host.
            host: self.get(Slot::Authority).or_else(|| self.get(Slot::Host)),
            if_none_match: self.get(Slot::IfNoneMatch),
            if_modified_since: self.get(Slot::IfModifiedSince),
            if_match: self.get(Slot::IfMatch),
            if_unmodified_since: self.get(Slot::IfUnmodifiedSince),
            range: self.get(Slot::Range),
            if_range: self.get(Slot::IfRange),
            accept_encoding: self.get(Slot::AcceptEncoding),
            available_dictionary: self.get(Slot::AvailableDictionary),
            accept: self.get(Slot::Accept),
            user_agent: self.get(Slot::UserAgent),
            referer: self.get(Slot::Referer),
        }
    }
}

/// Bytes a field name may not hold (RFC 9113 §8.2.1): uppercase letters,
/// controls, space and DEL; one lookup a byte.
const NOT_IN_NAME: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = b <= 0x20 || b == 0x7f || (b as u8).is_ascii_uppercase();
        b += 1;
    }
    table
};

/// Whether `value` holds NUL, CR or LF, eight bytes at a time
/// (`words.rs`).
fn has_nul_cr_lf(value: &[u8]) -> bool {
    let mut chunks = value.chunks_exact(8);
    for word in &mut chunks {
        if words::nul_cr_lf(u64::from_le_bytes(word.try_into().expect("eight bytes"))) != 0 {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&b| matches!(b, 0 | b'\r' | b'\n'))
}

/// Whether a field's bytes are known to follow §8.2.1's rules: a codec's
/// table entry is checked once, when it is made, and every request that
/// names it again (a browser's repeated fields) skips the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldBytes {
    /// Checked already (a static-table entry, or a dynamic one marked sound).
    Checked,
    /// Still to be checked.
    Unchecked,
}

/// RFC 9113 §8.2.1, RFC 9114 §4.2: a name without uppercase, controls or
/// space; a value without NUL, CR or LF and without whitespace at either
/// end.
pub fn sound_bytes(name: &[u8], value: &[u8]) -> bool {
    !name.is_empty()
        && !name.iter().any(|&b| NOT_IN_NAME[usize::from(b)])
        && !has_nul_cr_lf(value)
        && !value
            .first()
            .into_iter()
            .chain(value.last())
            .any(|b| matches!(b, b' ' | b'\t'))
}

fn check_field(
    name: &[u8],
    value: &[u8],
    bytes: FieldBytes,
    fields: &mut Fields,
    regular_seen: &mut bool,
    pseudo_response: &mut bool,
    limits: &DecodeLimits,
) -> Result<(), DecodeError> {
    if bytes == FieldBytes::Unchecked && !sound_bytes(name, value) {
        return Err(DecodeError::Malformed);
    }
    if name[0] == b':' {
        // §8.3: pseudo-fields come first; only the request ones.
        if *regular_seen {
            return Err(DecodeError::Malformed);
        }
        let slot = match Slot::of(name) {
            Some(slot @ (Slot::Method | Slot::Scheme | Slot::Path | Slot::Authority)) => slot,
            _ if name == b":status" => {
                *pseudo_response = true;
                return Err(DecodeError::Malformed);
            }
            _ => return Err(DecodeError::Malformed),
        };
        match slot {
            Slot::Path if value.is_empty() => return Err(DecodeError::Malformed),
            Slot::Path if value.len() > limits.max_path => return Err(DecodeError::PathTooLong),
            // §8.3.1: `:method` is a method token (RFC 9110 §9.1) and
            // `:scheme` a scheme; neither may be empty (found by the hpack
            // fuzz target: an empty `:method` was taken).
            Slot::Method if value.is_empty() || !value.iter().all(|&b| is_tchar(b)) => {
                return Err(DecodeError::Malformed)
            }
            Slot::Scheme if value.is_empty() => return Err(DecodeError::Malformed),
            _ => {}
        }
        return fields.put(slot, value);
    }
    *regular_seen = true;
    // §8.2.2: connection-specific fields make a request malformed; TE may
    // only say "trailers".
    match name {
        b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding" | b"upgrade" => {
            return Err(DecodeError::Malformed)
        }
        b"te" if value != b"trailers" => return Err(DecodeError::Malformed),
        _ => {}
    }
    match Slot::of(name) {
        Some(slot) => fields.put(slot, value),
        None => Ok(()),
    }
}

/// Checks a field section one field at a time into [`Fields`]: the codec
/// hands it every field it decodes, then asks for the verdict.
pub struct Checker<'f> {
    fields: &'f mut Fields,
    limits: &'f DecodeLimits,
    size: usize,
    verdict: Result<(), DecodeError>,
    regular_seen: bool,
    pseudo_response: bool,
}

impl<'f> Checker<'f> {
    /// Starts a section of `version` in `fields` (emptied first).
    pub fn new(fields: &'f mut Fields, limits: &'f DecodeLimits, version: Version) -> Self {
        fields.clear();
        fields.version = Some(version);
        Checker {
            fields,
            limits,
            size: 0,
            verdict: Ok(()),
            regular_seen: false,
            pseudo_response: false,
        }
    }

    /// One decoded field. After the first problem the rest are only
    /// counted: the codec must still decode the whole section.
    pub fn field(&mut self, name: &[u8], value: &[u8], bytes: FieldBytes) {
        self.size = self.size.saturating_add(name.len() + value.len() + 32);
        if self.verdict.is_err() {
            return;
        }
        if self.size > self.limits.max_list_size {
            self.verdict = Err(DecodeError::TooLarge);
            return;
        }
        self.verdict = check_field(
            name,
            value,
            bytes,
            self.fields,
            &mut self.regular_seen,
            &mut self.pseudo_response,
            self.limits,
        );
    }

    /// The verdict on the whole section. Every request has :method,
    /// :scheme and a non-empty :path (RFC 9113 §8.3.1, RFC 9114 §4.3.1;
    /// CONNECT is not a static server's business: it lacks them and is
    /// answered 405 by its method alone).
    pub fn finish(self) -> Result<(), DecodeError> {
        self.verdict?;
        let method = self.fields.get(Slot::Method);
        if method.is_none() || self.pseudo_response {
            return Err(DecodeError::Malformed);
        }
        if method != Some(b"CONNECT")
            && (self.fields.get(Slot::Scheme).is_none() || self.fields.get(Slot::Path).is_none())
        {
            return Err(DecodeError::Malformed);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_at_every_place_is_judged_as_a_plain_scan_would() {
        for len in 1..=20 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut value = vec![b'v'; len];
                    value[at] = b;
                    let plain = value.iter().any(|&c| c == 0 || c == b'\r' || c == b'\n');
                    assert_eq!(has_nul_cr_lf(&value), plain, "{b:#04x} at {at} of {len}");
                }
            }
        }
        // Bytes that differ from CR or LF by one bit, or borrow into the
        // next byte, must not look like them.
        assert!(!has_nul_cr_lf(&[
            0x0c, 0x0e, 0x0b, 0x09, 0x8d, 0x8a, 0x01, 0xff
        ]));
        for b in 0..=255u8 {
            let plain = b <= 0x20 || b == 0x7f || b.is_ascii_uppercase();
            assert_eq!(NOT_IN_NAME[usize::from(b)], plain, "{b:#04x}");
        }
    }
}
