//! HTTP/3 frames (RFC 9114 §7): a reader that takes a stream's bytes as
//! they arrive, in pieces of any size, and reports whole frames.
//!
//! Owns frame boundaries and payload limits; which frames a stream may
//! carry is the caller's (a control stream and a request stream differ).
//! Payloads a static server has no use for (DATA of a request body,
//! frames of unknown types, RFC 9114 §9) are skipped, not held.
//!
//! Invariant: the reader holds at most `limit` bytes, or the 16 bytes of a
//! frame header, whatever the peer sends.

use super::{get_varint, put_varint, varint_len, Code};

/// Frame types (RFC 9114 §7.2).
pub mod kind {
    pub const DATA: u64 = 0x00;
    pub const HEADERS: u64 = 0x01;
    pub const CANCEL_PUSH: u64 = 0x03;
    pub const SETTINGS: u64 = 0x04;
    pub const PUSH_PROMISE: u64 = 0x05;
    pub const GOAWAY: u64 = 0x07;
    pub const MAX_PUSH_ID: u64 = 0x0d;
}

/// Appends a frame header: its type and payload length.
pub fn put_header(buf: &mut Vec<u8>, kind: u64, len: u64) {
    put_varint(buf, kind);
    put_varint(buf, len);
}

/// How many bytes `put_header` writes.
pub fn header_len(kind: u64, len: u64) -> usize {
    varint_len(kind) + varint_len(len)
}

/// HTTP/2 frame types with no HTTP/3 meaning (§7.2.8): PRIORITY, PING,
/// WINDOW_UPDATE, CONTINUATION.
fn is_http2_only(kind: u64) -> bool {
    matches!(kind, 0x02 | 0x06 | 0x08 | 0x09)
}

/// One frame, or the start of one whose payload is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A whole HEADERS frame: the encoded field section.
    Headers(&'a [u8]),
    /// A HEADERS frame over the limit: its payload is skipped.
    HeadersTooLarge,
    /// The start of a DATA frame of this length; its payload is skipped.
    Data {
        len: u64,
    },
    Settings(&'a [u8]),
    Goaway(u64),
    CancelPush(u64),
    MaxPushId(u64),
    /// The start of a frame of a type we do not know (reserved types
    /// included, §7.2.8), skipped.
    Unknown(u64),
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// Between frames: `buf` holds the start of a frame header.
    Header,
    /// Gathering a payload of `len` bytes into `buf`.
    Collect { kind: u64, len: usize },
    /// Skipping `left` bytes of payload.
    Skip { left: u64 },
}

/// A stream's frames, read incrementally.
#[derive(Debug)]
pub struct FrameReader {
    state: State,
    buf: Vec<u8>,
    limit: usize,
}

/// Longest frame header: two 8-byte varints.
const MAX_HEADER: usize = 16;

impl FrameReader {
    /// A reader that collects payloads of up to `limit` bytes (HEADERS,
    /// SETTINGS); longer HEADERS are reported as too large and skipped.
    pub fn new(limit: usize) -> FrameReader {
        FrameReader {
            state: State::Header,
            buf: Vec::new(),
            limit,
        }
    }

    /// At a frame boundary: a stream may end here (anywhere else, RFC 9114
    /// §7.1 makes it a frame error).
    pub fn at_boundary(&self) -> bool {
        matches!(self.state, State::Header) && self.buf.is_empty()
    }

    /// Bytes held for an unfinished frame.
    pub fn held(&self) -> usize {
        self.buf.capacity()
    }

    /// Reads `input`, calling `on` for every frame completed (or, for
    /// skipped payloads, started) in it. Stops at the first error.
    pub fn feed(
        &mut self,
        mut input: &[u8],
        on: &mut impl FnMut(Frame<'_>) -> Result<(), Code>,
    ) -> Result<(), Code> {
        while !input.is_empty() {
            match self.state {
                State::Header => input = self.header(input, on)?,
                State::Skip { left } => {
                    let n = (left.min(input.len() as u64)) as usize;
                    input = &input[n..];
                    self.state = match left - n as u64 {
                        0 => State::Header,
                        left => State::Skip { left },
                    };
                }
                State::Collect { kind, len } => {
                    if self.buf.is_empty() && input.len() >= len {
                        // The whole payload is here: no copy.
                        let (payload, rest) = input.split_at(len);
                        self.state = State::Header;
                        deliver(kind, payload, on)?;
                        input = rest;
                        continue;
                    }
                    let n = (len - self.buf.len()).min(input.len());
                    self.buf.extend_from_slice(&input[..n]);
                    input = &input[n..];
                    if self.buf.len() == len {
                        self.state = State::Header;
                        let payload = std::mem::take(&mut self.buf);
                        deliver(kind, &payload, on)?;
                        // Keep the allocation only while it is small.
                        if payload.capacity() <= 1024 {
                            self.buf = payload;
                            self.buf.clear();
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads a frame header from `buf` and `input`; returns what is left of
    /// `input` after it.
    fn header<'i>(
        &mut self,
        input: &'i [u8],
        on: &mut impl FnMut(Frame<'_>) -> Result<(), Code>,
    ) -> Result<&'i [u8], Code> {
        let held = self.buf.len();
        let taken = (MAX_HEADER - held).min(input.len());
        let parsed = if held == 0 {
            parse_header(input)
        } else {
            self.buf.extend_from_slice(&input[..taken]);
            let parsed = parse_header(&self.buf);
            self.buf.truncate(held);
            parsed
        };
        let Some((kind, len, n)) = parsed else {
            self.buf.extend_from_slice(&input[..taken]);
            return Ok(&input[taken..]);
        };
        let rest = &input[n - held..];
        self.buf.clear();
        self.start(kind, len, on)?;
        Ok(rest)
    }

    /// What a frame's type and length call for.
    fn start(
        &mut self,
        kind: u64,
        len: u64,
        on: &mut impl FnMut(Frame<'_>) -> Result<(), Code>,
    ) -> Result<(), Code> {
        let skip = |len| match len {
            0 => State::Header,
            left => State::Skip { left },
        };
        self.state = match kind {
            kind::DATA => {
                on(Frame::Data { len })?;
                skip(len)
            }
            kind::HEADERS if len > self.limit as u64 => {
                on(Frame::HeadersTooLarge)?;
                skip(len)
            }
            kind::HEADERS | kind::SETTINGS => collect(kind, len, self.limit)?,
            // One varint each: at most 8 bytes (§7.2.3, §7.2.6, §7.2.7).
            kind::GOAWAY | kind::CANCEL_PUSH | kind::MAX_PUSH_ID => collect(kind, len, 8)?,
            // A client never promises a push (§7.2.5).
            kind::PUSH_PROMISE => return Err(Code::FrameUnexpected),
            kind if is_http2_only(kind) => return Err(Code::FrameUnexpected),
            kind => {
                on(Frame::Unknown(kind))?;
                skip(len)
            }
        };
        if let State::Collect { kind, len: 0 } = self.state {
            self.state = State::Header;
            deliver(kind, &[], on)?;
        }
        Ok(())
    }
}

/// Collects a payload of `len` bytes, at most `limit`.
fn collect(kind: u64, len: u64, limit: usize) -> Result<State, Code> {
    match usize::try_from(len) {
        Ok(len) if len <= limit => Ok(State::Collect { kind, len }),
        // A SETTINGS frame this long is not one we could take, nor a
        // varint frame longer than a varint.
        _ if kind == kind::SETTINGS => Err(Code::ExcessiveLoad),
        _ => Err(Code::FrameError),
    }
}

fn parse_header(input: &[u8]) -> Option<(u64, u64, usize)> {
    let (kind, a) = get_varint(input)?;
    let (len, b) = get_varint(&input[a..])?;
    Some((kind, len, a + b))
}

/// Hands a collected payload over as its frame.
fn deliver(
    kind: u64,
    payload: &[u8],
    on: &mut impl FnMut(Frame<'_>) -> Result<(), Code>,
) -> Result<(), Code> {
    let single = || match get_varint(payload) {
        Some((value, n)) if n == payload.len() => Ok(value),
        _ => Err(Code::FrameError),
    };
    on(match kind {
        kind::HEADERS => Frame::Headers(payload),
        kind::SETTINGS => Frame::Settings(payload),
        kind::GOAWAY => Frame::Goaway(single()?),
        kind::CANCEL_PUSH => Frame::CancelPush(single()?),
        _ => Frame::MaxPushId(single()?),
    })
}

/// Reads a SETTINGS payload (§7.2.4): each identifier once, none of
/// HTTP/2's (§7.2.4.1), calling `on` for each.
pub fn parse_settings(mut payload: &[u8], mut on: impl FnMut(u64, u64)) -> Result<(), Code> {
    let mut seen: Vec<u64> = Vec::new();
    while !payload.is_empty() {
        let (id, a) = get_varint(payload).ok_or(Code::FrameError)?;
        let (value, b) = get_varint(&payload[a..]).ok_or(Code::FrameError)?;
        payload = &payload[a + b..];
        if (0x02..=0x05).contains(&id) || seen.contains(&id) {
            return Err(Code::SettingsError);
        }
        if seen.len() < 64 {
            seen.push(id);
        }
        on(id, value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame `bytes` holds, fed in pieces of `step` bytes.
    fn frames(bytes: &[u8], step: usize, limit: usize) -> Result<Vec<String>, Code> {
        let mut reader = FrameReader::new(limit);
        let mut seen = Vec::new();
        for piece in bytes.chunks(step.max(1)) {
            reader.feed(piece, &mut |f| {
                seen.push(format!("{f:?}"));
                Ok(())
            })?;
        }
        if !reader.at_boundary() {
            seen.push("(mid-frame)".into());
        }
        Ok(seen)
    }

    fn frame(kind: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put_header(&mut out, kind, payload.len() as u64);
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn frames_are_read_whatever_the_pieces() {
        let mut bytes = frame(kind::HEADERS, b"abc");
        bytes.extend(frame(kind::DATA, &[7; 300]));
        bytes.extend(frame(0x21, b"grease"));
        bytes.extend(frame(kind::HEADERS, b""));
        bytes.extend(frame(kind::GOAWAY, &[0x40, 0x08]));
        let expected = [
            "Headers([97, 98, 99])",
            "Data { len: 300 }",
            "Unknown(33)",
            "Headers([])",
            "Goaway(8)",
        ];
        for step in [1, 2, 3, 7, 64, 1000] {
            assert_eq!(frames(&bytes, step, 64).unwrap(), expected, "step {step}");
        }
    }

    #[test]
    fn a_stream_that_ends_mid_frame_is_seen() {
        let bytes = frame(kind::HEADERS, b"abcdef");
        assert_eq!(
            frames(&bytes[..4], 1, 64).unwrap(),
            ["(mid-frame)"],
            "three of six payload bytes"
        );
        assert_eq!(frames(&bytes[..1], 1, 64).unwrap(), ["(mid-frame)"]);
    }

    #[test]
    fn limits_and_forbidden_frames() {
        // A HEADERS frame over the limit is skipped and said.
        let big = frame(kind::HEADERS, &[1; 100]);
        assert_eq!(frames(&big, 10, 64).unwrap(), ["HeadersTooLarge"]);
        // A SETTINGS frame over it ends the connection.
        let settings = frame(kind::SETTINGS, &[1; 100]);
        assert_eq!(frames(&settings, 10, 64), Err(Code::ExcessiveLoad));
        // A GOAWAY longer than a varint, or holding two.
        assert_eq!(
            frames(&frame(kind::GOAWAY, &[1; 9]), 1, 64),
            Err(Code::FrameError)
        );
        assert_eq!(
            frames(&frame(kind::GOAWAY, &[1, 2]), 1, 64),
            Err(Code::FrameError)
        );
        // HTTP/2's frames and a client's PUSH_PROMISE.
        for kind in [0x02, 0x06, 0x08, 0x09, kind::PUSH_PROMISE] {
            assert_eq!(frames(&frame(kind, b""), 1, 64), Err(Code::FrameUnexpected));
        }
    }

    #[test]
    fn settings_refuse_http2_ids_and_repeats() {
        let parse = |bytes: &[u8]| parse_settings(bytes, |_, _| {});
        assert_eq!(parse(&[0x06, 0x44, 0x00, 0x21, 0x01]), Ok(()));
        assert_eq!(parse(&[0x03, 0x01]), Err(Code::SettingsError));
        assert_eq!(parse(&[0x06, 0x01, 0x06, 0x02]), Err(Code::SettingsError));
        assert_eq!(parse(&[0x06]), Err(Code::FrameError));
    }
}
