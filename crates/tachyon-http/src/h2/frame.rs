//! HTTP/2 frames (RFC 9113 §4, §6): the 9-byte header read from and
//! written to byte buffers, the frame types and flags tachyon uses, and the
//! error codes.
//!
//! Owns the wire layout only; what a frame means for a stream or the
//! connection is [`super::conn`]'s. Invariant: every writer here produces a
//! complete, well-formed frame at the end of the buffer it is given.

/// Bytes of a frame header.
pub const HEADER_LEN: usize = 9;

/// The largest frame payload a peer may send before it has seen our
/// SETTINGS, and the default for what we send (RFC 9113 §4.2).
pub const DEFAULT_MAX_FRAME: u32 = 16_384;
/// The largest value SETTINGS_MAX_FRAME_SIZE may take.
pub const MAX_FRAME_LIMIT: u32 = (1 << 24) - 1;
/// The largest flow-control window (RFC 9113 §6.9.1).
pub const MAX_WINDOW: i64 = (1 << 31) - 1;
/// A window's size before SETTINGS say otherwise (RFC 9113 §6.9.2).
pub const DEFAULT_WINDOW: i64 = 65_535;

/// Frame types (RFC 9113 §6). Unknown types are ignored (§4.1).
pub mod kind {
    pub const DATA: u8 = 0x0;
    pub const HEADERS: u8 = 0x1;
    pub const PRIORITY: u8 = 0x2;
    pub const RST_STREAM: u8 = 0x3;
    pub const SETTINGS: u8 = 0x4;
    pub const PUSH_PROMISE: u8 = 0x5;
    pub const PING: u8 = 0x6;
    pub const GOAWAY: u8 = 0x7;
    pub const WINDOW_UPDATE: u8 = 0x8;
    pub const CONTINUATION: u8 = 0x9;
}

/// Frame flags.
pub mod flag {
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

/// SETTINGS identifiers (RFC 9113 §6.5.2).
pub mod setting {
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    pub const ENABLE_PUSH: u16 = 0x2;
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    pub const MAX_FRAME_SIZE: u16 = 0x5;
    pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;
}

/// Error codes (RFC 9113 §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    NoError = 0x0,
    ProtocolError = 0x1,
    InternalError = 0x2,
    FlowControlError = 0x3,
    SettingsTimeout = 0x4,
    StreamClosed = 0x5,
    FrameSizeError = 0x6,
    RefusedStream = 0x7,
    Cancel = 0x8,
    CompressionError = 0x9,
    ConnectError = 0xa,
    EnhanceYourCalm = 0xb,
    InadequateSecurity = 0xc,
    Http11Required = 0xd,
}

/// A frame header, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub len: u32,
    pub kind: u8,
    pub flags: u8,
    /// The stream identifier, its reserved bit cleared (RFC 9113 §4.1).
    pub stream: u32,
}

impl Head {
    /// The header at the start of `buf`, if 9 bytes are there.
    pub fn parse(buf: &[u8]) -> Option<Head> {
        let b: &[u8; HEADER_LEN] = buf.get(..HEADER_LEN)?.try_into().ok()?;
        Some(Head {
            len: u32::from_be_bytes([0, b[0], b[1], b[2]]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        })
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// Appends a frame header.
pub fn write_head(buf: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    buf.extend_from_slice(&head(len, kind, flags, stream));
}

/// A frame header (RFC 9113 §4.1).
pub fn head(len: usize, kind: u8, flags: u8, stream: u32) -> [u8; HEADER_LEN] {
    debug_assert!(len <= MAX_FRAME_LIMIT as usize);
    let [_, l0, l1, l2] = (len as u32).to_be_bytes();
    let [s0, s1, s2, s3] = stream.to_be_bytes();
    [l0, l1, l2, kind, flags, s0, s1, s2, s3]
}

/// Rewrites the length of the frame whose header starts at `at` (for a
/// HEADERS frame whose block was encoded after its header).
pub fn patch_len(buf: &mut [u8], at: usize, len: usize) {
    let len = (len as u32).to_be_bytes();
    buf[at..at + 3].copy_from_slice(&len[1..]);
}

/// Appends a SETTINGS frame with these (identifier, value) pairs.
pub fn write_settings(buf: &mut Vec<u8>, settings: &[(u16, u32)]) {
    write_head(buf, settings.len() * 6, kind::SETTINGS, 0, 0);
    for (id, value) in settings {
        buf.extend_from_slice(&id.to_be_bytes());
        buf.extend_from_slice(&value.to_be_bytes());
    }
}

pub fn write_settings_ack(buf: &mut Vec<u8>) {
    write_head(buf, 0, kind::SETTINGS, flag::ACK, 0);
}

pub fn write_ping_ack(buf: &mut Vec<u8>, opaque: &[u8]) {
    write_head(buf, 8, kind::PING, flag::ACK, 0);
    buf.extend_from_slice(opaque);
}

pub fn write_goaway(buf: &mut Vec<u8>, last_stream: u32, reason: Reason) {
    write_head(buf, 8, kind::GOAWAY, 0, 0);
    buf.extend_from_slice(&last_stream.to_be_bytes());
    buf.extend_from_slice(&(reason as u32).to_be_bytes());
}

pub fn write_rst_stream(buf: &mut Vec<u8>, stream: u32, reason: Reason) {
    write_head(buf, 4, kind::RST_STREAM, 0, stream);
    buf.extend_from_slice(&(reason as u32).to_be_bytes());
}

pub fn write_window_update(buf: &mut Vec<u8>, stream: u32, increment: u32) {
    write_head(buf, 4, kind::WINDOW_UPDATE, 0, stream);
    buf.extend_from_slice(&increment.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_clears_the_reserved_bit() {
        let mut buf = Vec::new();
        write_head(&mut buf, 0x01_02_03, kind::HEADERS, flag::END_HEADERS, 7);
        buf[5] |= 0x80;
        let head = Head::parse(&buf).unwrap();
        assert_eq!(
            head,
            Head {
                len: 0x01_02_03,
                kind: kind::HEADERS,
                flags: flag::END_HEADERS,
                stream: 7
            }
        );
        assert!(Head::parse(&buf[..8]).is_none());
    }

    #[test]
    fn patched_length_is_read_back() {
        let mut buf = vec![0xaa];
        write_head(&mut buf, 0, kind::HEADERS, 0, 1);
        patch_len(&mut buf, 1, 300);
        assert_eq!(Head::parse(&buf[1..]).unwrap().len, 300);
    }
}
