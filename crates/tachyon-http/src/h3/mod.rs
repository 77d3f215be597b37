//! HTTP/3 (RFC 9114) without I/O: the frame layer of request and control
//! streams ([`frame`]) and QPACK (RFC 9204) header compression
//! ([`qpack`]). QUIC itself (streams, flow control, loss recovery) is
//! quinn-proto's, driven by the server crate.
//!
//! Owns the wire format and its errors: what a frame is, which frames a
//! stream may carry, the settings we send and accept, the error codes of
//! RFC 9114 §8.1 and RFC 9204 §6. Decides nothing about responses.
//!
//! Invariant: every error a peer can cause maps to one of those codes, and
//! no input makes a parser hold more than its limit.

pub mod frame;
pub mod qpack;

/// Error codes (RFC 9114 §8.1, RFC 9204 §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    NoError = 0x100,
    GeneralProtocolError = 0x101,
    InternalError = 0x102,
    StreamCreationError = 0x103,
    ClosedCriticalStream = 0x104,
    FrameUnexpected = 0x105,
    FrameError = 0x106,
    ExcessiveLoad = 0x107,
    IdError = 0x108,
    SettingsError = 0x109,
    MissingSettings = 0x10a,
    RequestRejected = 0x10b,
    RequestCancelled = 0x10c,
    RequestIncomplete = 0x10d,
    MessageError = 0x10e,
    ConnectError = 0x10f,
    VersionFallback = 0x110,
    QpackDecompressionFailed = 0x200,
    QpackEncoderStreamError = 0x201,
    QpackDecoderStreamError = 0x202,
}

impl Code {
    pub fn value(self) -> u64 {
        self as u64
    }
}

/// Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2).
pub mod stream_type {
    pub const CONTROL: u64 = 0x00;
    pub const PUSH: u64 = 0x01;
    pub const QPACK_ENCODER: u64 = 0x02;
    pub const QPACK_DECODER: u64 = 0x03;
}

/// Settings identifiers (RFC 9114 §7.2.4.1, RFC 9204 §5).
pub mod setting {
    pub const QPACK_MAX_TABLE_CAPACITY: u64 = 0x01;
    pub const MAX_FIELD_SECTION_SIZE: u64 = 0x06;
    pub const QPACK_BLOCKED_STREAMS: u64 = 0x07;
}

/// The ALPN token of HTTP/3.
pub const ALPN: &[u8] = b"h3";

/// Appends a QUIC variable-length integer (RFC 9000 §16).
pub fn put_varint(buf: &mut Vec<u8>, value: u64) {
    match value {
        0..=0x3f => buf.push(value as u8),
        0x40..=0x3fff => buf.extend_from_slice(&(value as u16 | 0x4000).to_be_bytes()),
        0x4000..=0x3fff_ffff => buf.extend_from_slice(&(value as u32 | 0x8000_0000).to_be_bytes()),
        _ => buf.extend_from_slice(
            &((value & 0x3fff_ffff_ffff_ffff) | 0xc000_0000_0000_0000).to_be_bytes(),
        ),
    }
}

/// How many bytes `put_varint` writes for `value`.
pub fn varint_len(value: u64) -> usize {
    match value {
        0..=0x3f => 1,
        0x40..=0x3fff => 2,
        0x4000..=0x3fff_ffff => 4,
        _ => 8,
    }
}

/// Reads a variable-length integer from the front of `input`: its value
/// and length, or `None` when `input` does not hold all of it yet.
pub fn get_varint(input: &[u8]) -> Option<(u64, usize)> {
    let first = *input.first()?;
    let len = 1usize << (first >> 6);
    let bytes = input.get(..len)?;
    let mut value = u64::from(first & 0x3f);
    for &b in &bytes[1..] {
        value = value << 8 | u64::from(b);
    }
    Some((value, len))
}

/// The control stream we open first on every connection: its type, then
/// our SETTINGS (RFC 9114 §6.2.1): no dynamic table, no blocked streams,
/// and the largest field section we take.
pub fn control_stream_preface(max_field_section_size: u64) -> Vec<u8> {
    let mut settings = Vec::new();
    put_varint(&mut settings, setting::QPACK_MAX_TABLE_CAPACITY);
    put_varint(&mut settings, 0);
    put_varint(&mut settings, setting::MAX_FIELD_SECTION_SIZE);
    put_varint(&mut settings, max_field_section_size);
    put_varint(&mut settings, setting::QPACK_BLOCKED_STREAMS);
    put_varint(&mut settings, 0);
    let mut out = Vec::with_capacity(settings.len() + 4);
    put_varint(&mut out, stream_type::CONTROL);
    frame::put_header(&mut out, frame::kind::SETTINGS, settings.len() as u64);
    out.extend_from_slice(&settings);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9000 Appendix A.1's examples.
    #[test]
    fn varints_follow_rfc9000_a1() {
        for (bytes, value) in [
            (
                &[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c][..],
                151_288_809_941_952_652u64,
            ),
            (&[0x9d, 0x7f, 0x3e, 0x7d], 494_878_333),
            (&[0x7b, 0xbd], 15_293),
            (&[0x25], 37),
        ] {
            assert_eq!(get_varint(bytes), Some((value, bytes.len())));
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(out, bytes);
            assert_eq!(varint_len(value), bytes.len());
        }
        for value in [0, 0x3f, 0x40, 0x3fff, 0x4000, 0x3fff_ffff, 0x4000_0000] {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(varint_len(value), out.len(), "{value:#x}");
        }
        // The two-byte form of 37 decodes too (not minimal, still valid).
        assert_eq!(get_varint(&[0x40, 0x25]), Some((37, 2)));
        assert_eq!(get_varint(&[0x40]), None);
        assert_eq!(get_varint(&[]), None);
    }

    #[test]
    fn the_control_preface_is_a_settings_frame() {
        let preface = control_stream_preface(16 * 1024);
        assert_eq!(preface[0], 0x00, "control stream type");
        assert_eq!(preface[1], 0x04, "SETTINGS");
        let (len, n) = get_varint(&preface[2..]).unwrap();
        assert_eq!(2 + n + len as usize, preface.len());
        let mut seen = Vec::new();
        frame::parse_settings(&preface[2 + n..], |id, value| seen.push((id, value))).unwrap();
        assert_eq!(seen, [(0x01, 0), (0x06, 16 * 1024), (0x07, 0)]);
    }
}
