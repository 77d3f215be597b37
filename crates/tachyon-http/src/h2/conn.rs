//! One HTTP/2 connection's state, without I/O (RFC 9113 §5, §6): frames in,
//! requests and control frames out.
//!
//! Owns the connection preface, SETTINGS in both directions, stream states
//! as far as the peer's frames move them, flow-control windows in both
//! directions, the HPACK decoding state, and the defences: concurrent
//! streams, the budget of streams reset (Rapid Reset, CVE-2023-44487; and
//! resets the client makes us send, MadeYouReset, CVE-2025-8671), the size
//! of a header block across CONTINUATION frames (CVE-2024-27316), and a
//! budget of frames that carry no request (SETTINGS, PING, PRIORITY, empty
//! DATA, WINDOW_UPDATE floods). Does not own responses: the caller decides
//! them, writes their frames, and reports what it sent through
//! [`Connection::sent_data`] and [`Connection::end_stream`].
//!
//! Invariants: the control frames to send are appended to
//! [`Connection::output`] in the order they were decided; once a
//! connection error is returned its GOAWAY is the last thing there, and
//! every later call to [`Connection::receive`] returns the same error.

use super::frame::{self, flag, kind, setting, Head, Reason};
use super::hpack::{encode, DecodeError, DecodeLimits, Decoder, Encoder, Fields};
use crate::response::Status;

/// The client's connection preface (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What a connection allows; each limit is a defence, on by default.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §5.1.2; 100 is what
    /// nginx, h2o and Apache announce).
    pub max_streams: u32,
    /// SETTINGS_MAX_HEADER_LIST_SIZE, and the 431 threshold.
    pub max_header_list: usize,
    /// Longest `:path` before 414.
    pub max_path: usize,
    /// Largest compressed header block, HEADERS and its CONTINUATIONs
    /// together; beyond it the connection ends (CONTINUATION flood).
    pub max_header_block: usize,
    /// Streams reset (by the client, or by us for its errors) allowed per
    /// decay period before the connection ends (Rapid Reset, MadeYouReset).
    pub reset_budget: u32,
    /// Frames that carry no request allowed per decay period (SETTINGS,
    /// PING, PRIORITY, WINDOW_UPDATE, empty DATA/HEADERS/CONTINUATION).
    pub control_budget: u32,
    /// Our receive window for the connection and each stream: request
    /// bodies are read and dropped, so a small one is enough.
    pub receive_window: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_streams: 100,
            max_header_list: 16 * 1024,
            max_path: 8 * 1024,
            max_header_block: 64 * 1024,
            reset_budget: 200,
            control_budget: 2000,
            receive_window: frame::DEFAULT_WINDOW as u32,
        }
    }
}

/// The dynamic table size we allow the client's encoder (the default).
const TABLE_SIZE: usize = 4096;
/// Streams remembered after they closed, so late frames on them are told
/// apart from frames on streams that never existed.
const REMEMBERED: usize = 16;

/// What [`Connection::receive`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A request head on this stream is in the caller's [`Fields`].
    Request { stream: u32 },
    /// A request the caller must answer with this status (its fields were
    /// too large); the stream is open as for a request.
    Refused { stream: u32, status: Status },
    /// The stream is gone (the client reset it, or a stream error closed
    /// it and its RST_STREAM is queued): drop whatever it still had to send.
    Reset { stream: u32 },
}

/// How far one call to [`Connection::receive`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Input bytes used; the rest must be offered again with more.
    pub consumed: usize,
    pub event: Option<Event>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the 24-byte preface.
    Preface,
    /// The preface arrived; the first frame must be SETTINGS.
    FirstSettings,
    Open,
    /// A connection error was sent; nothing more is read.
    Failed(Reason),
}

/// A stream the client opened and we have not finished with.
#[derive(Debug)]
struct Stream {
    id: u32,
    /// What we may still send on it.
    send_window: i64,
    /// The client sent END_STREAM.
    remote_done: bool,
    /// We sent END_STREAM while the client was still sending: the stream
    /// is half-closed (local) until its END_STREAM or RST_STREAM, and
    /// still counts against the concurrency limit (RFC 9113 §5.1.2).
    local_done: bool,
    /// `content-length` the client announced, and DATA bytes seen.
    expected: Option<u64>,
    received: u64,
    /// DATA bytes not yet given back with WINDOW_UPDATE.
    unacked: u32,
}

/// A header block still waiting for CONTINUATION frames.
#[derive(Debug)]
struct Partial {
    stream: u32,
    end_stream: bool,
    block: Vec<u8>,
}

/// Empty buffers a quiet connection lent out ([`Connection::settle`]).
#[derive(Default)]
pub struct Buffers {
    streams: Vec<Stream>,
    output: Vec<u8>,
}

impl Buffers {
    /// Bytes they hold.
    pub fn footprint(&self) -> usize {
        self.streams.capacity() * std::mem::size_of::<Stream>() + self.output.capacity()
    }
}

pub struct Connection {
    phase: Phase,
    limits: Limits,
    decoder: Decoder,
    /// Our side of the client's table: every response head goes through
    /// [`Connection::index_block`].
    encoder: Encoder,
    /// Open streams in the order of their ids (new ones are always
    /// numbered higher: pushed at the end), so finding one is a binary
    /// search: the DATA scheduler asks for every stream's window on each
    /// turn, and a linear scan made that quadratic at 100 streams.
    streams: Vec<Stream>,
    /// Recently closed streams, and whether the client had finished them.
    closed: [(u32, bool); REMEMBERED],
    closed_next: usize,
    /// Highest stream the client opened.
    last_stream: u32,
    partial: Option<Partial>,
    /// The peer's SETTINGS that shape what we send.
    peer_window: i64,
    peer_max_frame: u32,
    /// Connection-level windows: ours to send, and received bytes not yet
    /// given back.
    send_window: i64,
    unacked: u32,
    /// GOAWAY sent (draining): new streams are refused.
    going_away: bool,
    resets: u32,
    controls: u32,
    /// The worker-clock second the budgets were last decayed.
    second: u32,
    output: Vec<u8>,
}

impl Connection {
    /// A connection whose server preface (our SETTINGS) is already queued.
    pub fn new(limits: Limits) -> Connection {
        let mut output = Vec::with_capacity(64);
        frame::write_settings(
            &mut output,
            &[
                (setting::MAX_CONCURRENT_STREAMS, limits.max_streams),
                (setting::INITIAL_WINDOW_SIZE, limits.receive_window),
                (setting::MAX_HEADER_LIST_SIZE, limits.max_header_list as u32),
                (setting::ENABLE_PUSH, 0),
            ],
        );
        Connection {
            phase: Phase::Preface,
            limits,
            decoder: Decoder::new(TABLE_SIZE),
            encoder: Encoder::new(encode::MAX_TABLE),
            streams: Vec::new(),
            closed: [(0, false); REMEMBERED],
            closed_next: 0,
            last_stream: 0,
            partial: None,
            peer_window: frame::DEFAULT_WINDOW,
            peer_max_frame: frame::DEFAULT_MAX_FRAME,
            send_window: frame::DEFAULT_WINDOW,
            unacked: 0,
            going_away: false,
            resets: 0,
            controls: 0,
            second: 0,
            output,
        }
    }

    /// Control frames to send, in order; the caller sends them before any
    /// response frame it writes next, and clears what it took.
    pub fn output(&mut self) -> &mut Vec<u8> {
        &mut self.output
    }

    /// Lends out the buffers a busy connection keeps warm, those that
    /// hold nothing now (no stream open, no frame waiting): an idle
    /// connection then holds its settings, windows and HPACK table only.
    /// The caller drops them or gives them to another connection
    /// ([`Connection::warm`]).
    pub fn settle(&mut self) -> Buffers {
        let mut spare = Buffers::default();
        if self.streams.is_empty() {
            spare.streams = std::mem::take(&mut self.streams);
        }
        if self.output.is_empty() {
            spare.output = std::mem::take(&mut self.output);
        }
        spare
    }

    /// Takes `spare` (another connection's, from [`Connection::settle`])
    /// for each buffer this one gave back; one it still holds is kept.
    pub fn warm(&mut self, spare: Buffers) {
        if self.streams.capacity() == 0 {
            self.streams = spare.streams;
        }
        if self.output.capacity() == 0 {
            self.output = spare.output;
        }
    }

    /// Rewrites a response's header block, written by
    /// [`super::hpack::Hpack`], with this connection's HPACK table; the
    /// blocks must be sent in the order they were indexed.
    pub fn index_block(&mut self, block: &mut Vec<u8>) {
        self.encoder.index(block);
    }

    /// True while a header block is open: HEADERS came without
    /// END_HEADERS and its CONTINUATION frames are awaited (§6.10). The
    /// caller runs the header timeout from the block's first frame.
    pub fn in_header_block(&self) -> bool {
        self.partial.is_some()
    }

    /// Streams still open (requests not yet fully answered).
    pub fn open_streams(&self) -> usize {
        self.streams.iter().filter(|s| !s.local_done).count()
    }

    /// True once the connection failed or, draining, has no response left
    /// to send (a client still sending bodies we already answered does
    /// not hold the drain).
    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Failed(_)) || (self.going_away && self.open_streams() == 0)
    }

    /// Halves the budgets once per second: a legitimate client's
    /// occasional PING or reset never adds up, a flood does.
    pub fn tick(&mut self, now: u32) {
        if now != self.second {
            let halvings = now.wrapping_sub(self.second).min(31);
            self.resets >>= halvings;
            self.controls >>= halvings;
            self.second = now;
        }
    }

    /// Starts draining: GOAWAY with the last stream accepted; streams
    /// already open are answered, new ones refused (RFC 9113 §6.8).
    pub fn go_away(&mut self) {
        if !self.going_away && !matches!(self.phase, Phase::Failed(_)) {
            self.going_away = true;
            frame::write_goaway(&mut self.output, self.last_stream, Reason::NoError);
        }
    }

    /// How many DATA bytes may go out on `stream` now: both windows and
    /// the peer's frame size allow it.
    pub fn data_allowance(&self, stream: u32) -> usize {
        let Some(s) = self.find(stream).map(|i| &self.streams[i]) else {
            return 0;
        };
        s.send_window
            .min(self.send_window)
            .clamp(0, self.peer_max_frame as i64) as usize
    }

    /// The largest frame payload the peer accepts.
    pub fn max_frame(&self) -> usize {
        self.peer_max_frame as usize
    }

    /// Records `n` DATA bytes sent on `stream`.
    pub fn sent_data(&mut self, stream: u32, n: usize) {
        self.send_window -= n as i64;
        if let Some(s) = self.find(stream).map(|i| &mut self.streams[i]) {
            s.send_window -= n as i64;
        }
    }

    /// Our side of `stream` ended (END_STREAM sent). A stream whose client
    /// is still sending stays half-closed (local): its frames are still
    /// checked (a zero WINDOW_UPDATE is still a stream error, §6.9) and its
    /// DATA still read and given back, until the client ends or resets it.
    /// We do not ask it to stop with RST_STREAM(NO_ERROR) (§8.1 allows
    /// it): that would make such errors unobservable, and answered bodies
    /// are small enough to drain.
    pub fn end_stream(&mut self, stream: u32) {
        let Some(i) = self.find(stream) else {
            return;
        };
        if self.streams[i].remote_done {
            self.streams.remove(i);
            self.remember(stream, true);
        } else {
            self.streams[i].local_done = true;
        }
    }

    /// Closes a half-closed (local) stream whose client just ended it.
    fn close_if_done(&mut self, i: usize) {
        let s = &self.streams[i];
        if s.local_done && s.remote_done {
            let id = s.id;
            self.streams.remove(i);
            self.remember(id, true);
        }
    }

    /// The index of open stream `id`.
    fn find(&self, id: u32) -> Option<usize> {
        self.streams.binary_search_by_key(&id, |s| s.id).ok()
    }

    fn remember(&mut self, stream: u32, remote_done: bool) {
        self.closed[self.closed_next] = (stream, remote_done);
        self.closed_next = (self.closed_next + 1) % REMEMBERED;
    }

    fn was_closed(&self, stream: u32) -> Option<bool> {
        self.closed
            .iter()
            .find(|(id, _)| *id == stream && stream != 0)
            .map(|(_, done)| *done)
    }

    /// Ends the connection with `reason`: GOAWAY is queued and the error
    /// returned, now and by every later call.
    fn fail(&mut self, reason: Reason) -> Reason {
        if !matches!(self.phase, Phase::Failed(_)) {
            frame::write_goaway(&mut self.output, self.last_stream, reason);
            self.phase = Phase::Failed(reason);
        }
        reason
    }

    /// Ends one stream with RST_STREAM; counted against the reset budget,
    /// since a client can provoke these at will (MadeYouReset).
    /// Ends a stream from our side with RST_STREAM (a response that cannot
    /// be completed, §8.1); the client's reset budget is not spent.
    pub fn abort_stream(&mut self, stream: u32, reason: Reason) {
        frame::write_rst_stream(&mut self.output, stream, reason);
        if let Some(i) = self.find(stream) {
            self.streams.remove(i);
            self.remember(stream, true);
        }
    }

    fn reset(&mut self, stream: u32, reason: Reason) -> Result<Option<Event>, Reason> {
        frame::write_rst_stream(&mut self.output, stream, reason);
        let event = match self.find(stream) {
            Some(i) => {
                let s = self.streams.remove(i);
                self.remember(stream, true);
                let _ = s;
                Some(Event::Reset { stream })
            }
            None => None,
        };
        self.spend_reset()?;
        Ok(event)
    }

    fn spend_reset(&mut self) -> Result<(), Reason> {
        self.resets += 1;
        if self.resets > self.limits.reset_budget {
            return Err(self.fail(Reason::EnhanceYourCalm));
        }
        Ok(())
    }

    fn spend_control(&mut self) -> Result<(), Reason> {
        self.controls += 1;
        if self.controls > self.limits.control_budget {
            return Err(self.fail(Reason::EnhanceYourCalm));
        }
        Ok(())
    }

    /// Reads frames from `input` until one yields an event or the input
    /// ends mid-frame. A connection error is returned as its reason; its
    /// GOAWAY is queued in the output.
    pub fn receive(&mut self, input: &[u8], fields: &mut Fields) -> Result<Step, Reason> {
        let mut pos = 0;
        loop {
            match self.phase {
                Phase::Failed(reason) => return Err(reason),
                Phase::Preface => {
                    let rest = &input[pos..];
                    let n = rest.len().min(PREFACE.len());
                    if rest[..n] != PREFACE[..n] {
                        return Err(self.fail(Reason::ProtocolError));
                    }
                    if n < PREFACE.len() {
                        return Ok(Step {
                            consumed: pos,
                            event: None,
                        });
                    }
                    pos += n;
                    self.phase = Phase::FirstSettings;
                }
                Phase::FirstSettings | Phase::Open => {
                    let Some(head) = Head::parse(&input[pos..]) else {
                        return Ok(Step {
                            consumed: pos,
                            event: None,
                        });
                    };
                    // We never raise SETTINGS_MAX_FRAME_SIZE (RFC 9113 §4.2).
                    if head.len > frame::DEFAULT_MAX_FRAME {
                        return Err(self.fail(Reason::FrameSizeError));
                    }
                    let end = pos + frame::HEADER_LEN + head.len as usize;
                    if input.len() < end {
                        return Ok(Step {
                            consumed: pos,
                            event: None,
                        });
                    }
                    let payload = &input[pos + frame::HEADER_LEN..end];
                    pos = end;
                    if self.phase == Phase::FirstSettings {
                        if head.kind != kind::SETTINGS || head.has(flag::ACK) {
                            return Err(self.fail(Reason::ProtocolError));
                        }
                        self.phase = Phase::Open;
                    }
                    if let Some(event) = self.frame(head, payload, fields)? {
                        return Ok(Step {
                            consumed: pos,
                            event: Some(event),
                        });
                    }
                }
            }
        }
    }

    fn frame(
        &mut self,
        head: Head,
        payload: &[u8],
        fields: &mut Fields,
    ) -> Result<Option<Event>, Reason> {
        // Between HEADERS and its last CONTINUATION nothing else may come
        // (RFC 9113 §6.10).
        if let Some(partial) = &self.partial {
            if head.kind != kind::CONTINUATION || head.stream != partial.stream {
                return Err(self.fail(Reason::ProtocolError));
            }
        }
        match head.kind {
            kind::DATA => self.data(head, payload),
            kind::HEADERS => self.headers(head, payload, fields),
            kind::CONTINUATION => self.continuation(head, payload, fields),
            kind::PRIORITY => {
                if head.stream == 0 {
                    return Err(self.fail(Reason::ProtocolError));
                }
                self.spend_control()?;
                if payload.len() != 5 {
                    return self.reset(head.stream, Reason::FrameSizeError);
                }
                if dependency(payload) == head.stream {
                    return self.reset(head.stream, Reason::ProtocolError);
                }
                Ok(None)
            }
            kind::RST_STREAM => self.rst_stream(head, payload),
            kind::SETTINGS => self.settings(head, payload).map(|()| None),
            kind::PUSH_PROMISE => Err(self.fail(Reason::ProtocolError)),
            kind::PING => {
                if head.stream != 0 {
                    return Err(self.fail(Reason::ProtocolError));
                }
                if payload.len() != 8 {
                    return Err(self.fail(Reason::FrameSizeError));
                }
                self.spend_control()?;
                if !head.has(flag::ACK) {
                    frame::write_ping_ack(&mut self.output, payload);
                }
                Ok(None)
            }
            kind::GOAWAY => {
                if head.stream != 0 {
                    return Err(self.fail(Reason::ProtocolError));
                }
                // The client is leaving: finish what is open, take no more.
                self.going_away = true;
                Ok(None)
            }
            kind::WINDOW_UPDATE => self.window_update(head, payload),
            // Unknown types are ignored (RFC 9113 §4.1), but cost budget.
            _ => self.spend_control().map(|()| None),
        }
    }

    fn settings(&mut self, head: Head, payload: &[u8]) -> Result<(), Reason> {
        if head.stream != 0 {
            return Err(self.fail(Reason::ProtocolError));
        }
        if head.has(flag::ACK) {
            if !payload.is_empty() {
                return Err(self.fail(Reason::FrameSizeError));
            }
            return Ok(());
        }
        if !payload.len().is_multiple_of(6) {
            return Err(self.fail(Reason::FrameSizeError));
        }
        self.spend_control()?;
        for pair in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([pair[0], pair[1]]);
            let value = u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]);
            match id {
                setting::ENABLE_PUSH if value > 1 => {
                    return Err(self.fail(Reason::ProtocolError));
                }
                setting::INITIAL_WINDOW_SIZE => {
                    let value = value as i64;
                    if value > frame::MAX_WINDOW {
                        return Err(self.fail(Reason::FlowControlError));
                    }
                    // §6.9.2: open streams' windows move by the difference.
                    let delta = value - self.peer_window;
                    for s in &mut self.streams {
                        s.send_window += delta;
                        if s.send_window > frame::MAX_WINDOW {
                            return Err(self.fail(Reason::FlowControlError));
                        }
                    }
                    self.peer_window = value;
                }
                setting::MAX_FRAME_SIZE => {
                    if !(frame::DEFAULT_MAX_FRAME..=frame::MAX_FRAME_LIMIT).contains(&value) {
                        return Err(self.fail(Reason::ProtocolError));
                    }
                    self.peer_max_frame = value;
                }
                setting::HEADER_TABLE_SIZE => self.encoder.set_limit(value as usize),
                // MAX_CONCURRENT_STREAMS: we open none. Unknown: ignored.
                _ => {}
            }
        }
        frame::write_settings_ack(&mut self.output);
        Ok(())
    }

    fn data(&mut self, head: Head, payload: &[u8]) -> Result<Option<Event>, Reason> {
        if head.stream == 0 {
            return Err(self.fail(Reason::ProtocolError));
        }
        let body = unpad(head, payload).ok_or_else(|| self.fail(Reason::ProtocolError))?;
        // Flow control counts the whole payload, padding included (§6.9.1).
        let len = payload.len() as u32;
        if self.unacked + len > self.limits.receive_window {
            return Err(self.fail(Reason::FlowControlError));
        }
        self.unacked += len;
        if self.unacked >= self.limits.receive_window / 2 {
            frame::write_window_update(&mut self.output, 0, self.unacked);
            self.unacked = 0;
        }
        if body.is_empty() && !head.has(flag::END_STREAM) {
            self.spend_control()?;
        }
        let Some(i) = self.find(head.stream) else {
            return match self.was_closed(head.stream) {
                // We ended a stream whose client was still sending: its
                // frames in flight are expected (§5.1, "closed").
                Some(false) => Ok(None),
                _ if head.stream > self.last_stream => Err(self.fail(Reason::ProtocolError)),
                _ => self.reset(head.stream, Reason::StreamClosed),
            };
        };
        let s = &mut self.streams[i];
        if s.remote_done {
            return self.reset(head.stream, Reason::StreamClosed);
        }
        s.received += body.len() as u64;
        s.unacked += len;
        let end = head.has(flag::END_STREAM);
        if end {
            s.remote_done = true;
        }
        // §8.1.1: content-length must match the DATA received.
        let wrong_length = s
            .expected
            .is_some_and(|n| s.received > n || (end && s.received != n));
        if wrong_length {
            return self.reset(head.stream, Reason::ProtocolError);
        }
        let s = &mut self.streams[i];
        if !end && s.unacked >= self.limits.receive_window / 2 {
            frame::write_window_update(&mut self.output, head.stream, s.unacked);
            s.unacked = 0;
        }
        self.close_if_done(i);
        Ok(None)
    }

    fn headers(
        &mut self,
        head: Head,
        payload: &[u8],
        fields: &mut Fields,
    ) -> Result<Option<Event>, Reason> {
        if head.stream == 0 || head.stream.is_multiple_of(2) {
            return Err(self.fail(Reason::ProtocolError));
        }
        let mut block = unpad(head, payload).ok_or_else(|| self.fail(Reason::ProtocolError))?;
        if head.has(flag::PRIORITY) {
            if block.len() < 5 {
                return Err(self.fail(Reason::FrameSizeError));
            }
            if dependency(block) == head.stream {
                // Decode anyway so the table stays in step, then reset.
                let _ = self
                    .decoder
                    .decode(&block[5..], &self.decode_limits(), fields);
                return self.reset(head.stream, Reason::ProtocolError);
            }
            block = &block[5..];
        }
        if block.is_empty() && !head.has(flag::END_HEADERS) {
            self.spend_control()?;
        }
        let partial = Partial {
            stream: head.stream,
            end_stream: head.has(flag::END_STREAM),
            block: Vec::new(),
        };
        if head.has(flag::END_HEADERS) {
            return self.header_block(partial, block, fields);
        }
        if block.len() > self.limits.max_header_block {
            return Err(self.fail(Reason::EnhanceYourCalm));
        }
        let mut partial = partial;
        partial.block.extend_from_slice(block);
        self.partial = Some(partial);
        Ok(None)
    }

    fn continuation(
        &mut self,
        head: Head,
        payload: &[u8],
        fields: &mut Fields,
    ) -> Result<Option<Event>, Reason> {
        let Some(mut partial) = self.partial.take() else {
            return Err(self.fail(Reason::ProtocolError));
        };
        if payload.is_empty() && !head.has(flag::END_HEADERS) {
            self.spend_control()?;
        }
        if partial.block.len() + payload.len() > self.limits.max_header_block {
            return Err(self.fail(Reason::EnhanceYourCalm));
        }
        partial.block.extend_from_slice(payload);
        if !head.has(flag::END_HEADERS) {
            self.partial = Some(partial);
            return Ok(None);
        }
        let block = std::mem::take(&mut partial.block);
        self.header_block(partial, &block, fields)
    }

    fn decode_limits(&self) -> DecodeLimits {
        DecodeLimits {
            max_list_size: self.limits.max_header_list,
            max_path: self.limits.max_path,
        }
    }

    /// A complete header block: a new request, or trailers.
    fn header_block(
        &mut self,
        partial: Partial,
        block: &[u8],
        fields: &mut Fields,
    ) -> Result<Option<Event>, Reason> {
        let stream = partial.stream;
        // Decoded first, whatever happens to the stream: the dynamic
        // table must see every block (RFC 7541 §2.2).
        let decoded = self.decoder.decode(block, &self.decode_limits(), fields);
        if decoded == Err(DecodeError::Compression) {
            return Err(self.fail(Reason::CompressionError));
        }
        if stream <= self.last_stream {
            return match self.find(stream) {
                // Trailers: they must end the stream (§8.1).
                Some(i) if !self.streams[i].remote_done => {
                    if !partial.end_stream {
                        return self.reset(stream, Reason::ProtocolError);
                    }
                    self.streams[i].remote_done = true;
                    self.close_if_done(i);
                    Ok(None)
                }
                Some(_) => self.reset(stream, Reason::StreamClosed),
                None if self.was_closed(stream).is_some() => Err(self.fail(Reason::StreamClosed)),
                // A new stream must be numbered above every earlier one.
                None => Err(self.fail(Reason::ProtocolError)),
            };
        }
        self.last_stream = stream;
        if self.going_away {
            return self.reset(stream, Reason::RefusedStream).map(|_| None);
        }
        if self.streams.len() >= self.limits.max_streams as usize {
            // §5.1.2: refused, and safe for the client to retry.
            return self.reset(stream, Reason::RefusedStream).map(|_| None);
        }
        let event = match decoded {
            Ok(()) => Event::Request { stream },
            Err(DecodeError::TooLarge) => Event::Refused {
                stream,
                status: Status::HeadersTooLarge,
            },
            Err(DecodeError::PathTooLong) => Event::Refused {
                stream,
                status: Status::UriTooLong,
            },
            Err(_) => {
                self.remember(stream, true);
                return self.reset(stream, Reason::ProtocolError).map(|_| None);
            }
        };
        let expected = match decoded {
            Ok(()) => fields.content_length(),
            Err(_) => None,
        };
        if expected.is_some_and(|n| partial.end_stream && n != 0) {
            self.remember(stream, true);
            return self.reset(stream, Reason::ProtocolError).map(|_| None);
        }
        self.streams.push(Stream {
            id: stream,
            send_window: self.peer_window,
            remote_done: partial.end_stream,
            local_done: false,
            expected,
            received: 0,
            unacked: 0,
        });
        Ok(Some(event))
    }

    fn rst_stream(&mut self, head: Head, payload: &[u8]) -> Result<Option<Event>, Reason> {
        if head.stream == 0 {
            return Err(self.fail(Reason::ProtocolError));
        }
        if payload.len() != 4 {
            return Err(self.fail(Reason::FrameSizeError));
        }
        if head.stream > self.last_stream {
            return Err(self.fail(Reason::ProtocolError));
        }
        let Some(i) = self.find(head.stream) else {
            return self.spend_control().map(|()| None);
        };
        self.streams.remove(i);
        self.remember(head.stream, true);
        self.spend_reset()?;
        Ok(Some(Event::Reset {
            stream: head.stream,
        }))
    }

    fn window_update(&mut self, head: Head, payload: &[u8]) -> Result<Option<Event>, Reason> {
        if payload.len() != 4 {
            return Err(self.fail(Reason::FrameSizeError));
        }
        let increment = (u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]])
            & 0x7fff_ffff) as i64;
        self.spend_control()?;
        if head.stream == 0 {
            if increment == 0 {
                return Err(self.fail(Reason::ProtocolError));
            }
            self.send_window += increment;
            if self.send_window > frame::MAX_WINDOW {
                return Err(self.fail(Reason::FlowControlError));
            }
            return Ok(None);
        }
        let Some(i) = self.find(head.stream) else {
            if head.stream > self.last_stream {
                return Err(self.fail(Reason::ProtocolError));
            }
            return Ok(None);
        };
        if increment == 0 {
            return self.reset(head.stream, Reason::ProtocolError);
        }
        let s = &mut self.streams[i];
        s.send_window += increment;
        if s.send_window > frame::MAX_WINDOW {
            return self.reset(head.stream, Reason::FlowControlError);
        }
        Ok(None)
    }
}

/// The payload of a padded frame without its padding, or `None` when the
/// padding is longer than the frame (RFC 9113 §6.1).
fn unpad(head: Head, payload: &[u8]) -> Option<&[u8]> {
    if !head.has(flag::PADDED) {
        return Some(payload);
    }
    let (&pad, rest) = payload.split_first()?;
    rest.len()
        .checked_sub(pad as usize)
        .map(|len| &rest[..len])
        .filter(|_| (pad as usize) < payload.len())
}

/// The stream a PRIORITY field depends on.
fn dependency(field: &[u8]) -> u32 {
    u32::from_be_bytes([field[0], field[1], field[2], field[3]]) & 0x7fff_ffff
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client_preface() -> Vec<u8> {
        let mut buf = PREFACE.to_vec();
        frame::write_settings(&mut buf, &[]);
        buf
    }

    /// `GET /` on `stream` as one HEADERS frame (static-table indices).
    fn get(buf: &mut Vec<u8>, stream: u32, flags: u8) {
        frame::write_head(buf, 3, kind::HEADERS, flags | flag::END_HEADERS, stream);
        buf.extend_from_slice(&[0x82, 0x86, 0x84]);
    }

    fn run(conn: &mut Connection, input: &[u8]) -> Result<Vec<Event>, Reason> {
        let mut fields = Fields::default();
        let mut events = Vec::new();
        let mut pos = 0;
        loop {
            let step = conn.receive(&input[pos..], &mut fields)?;
            pos += step.consumed;
            match step.event {
                Some(e) => events.push(e),
                None => return Ok(events),
            }
        }
    }

    /// Each whole frame in `out`: its head and its payload.
    fn frames(out: &[u8]) -> impl Iterator<Item = (Head, &[u8])> + '_ {
        let mut pos = 0;
        std::iter::from_fn(move || {
            let h = Head::parse(&out[pos..])?;
            let payload = &out[pos + 9..pos + 9 + h.len as usize];
            pos += 9 + h.len as usize;
            Some((h, payload))
        })
    }

    fn goaway_reason(out: &[u8]) -> Option<u32> {
        frames(out)
            .filter(|(h, _)| h.kind == kind::GOAWAY)
            .map(|(_, p)| u32::from_be_bytes([p[4], p[5], p[6], p[7]]))
            .last()
    }

    #[test]
    fn a_request_after_the_preface_is_an_event() {
        let mut conn = Connection::new(Limits::default());
        let mut input = client_preface();
        get(&mut input, 1, flag::END_STREAM);
        assert_eq!(
            run(&mut conn, &input),
            Ok(vec![Event::Request { stream: 1 }])
        );
        assert_eq!(conn.open_streams(), 1);
        conn.end_stream(1);
        assert_eq!(conn.open_streams(), 0);
    }

    /// Stream error codes in RST_STREAM frames in `out`, in order.
    fn resets(out: &[u8]) -> Vec<(u32, u32)> {
        frames(out)
            .filter(|(h, _)| h.kind == kind::RST_STREAM)
            .map(|(h, p)| (h.stream, u32::from_be_bytes([p[0], p[1], p[2], p[3]])))
            .collect()
    }

    #[test]
    fn an_answered_stream_the_client_still_sends_on_stays_half_closed() {
        let mut conn = Connection::new(Limits::default());
        let mut input = client_preface();
        get(&mut input, 1, 0);
        get(&mut input, 3, 0);
        assert_eq!(run(&mut conn, &input).unwrap().len(), 2);
        conn.end_stream(1);
        conn.end_stream(3);
        // No RST_STREAM(NO_ERROR): the streams are half-closed (local).
        assert_eq!(resets(conn.output()), vec![]);
        assert_eq!(conn.open_streams(), 0);
        // A zero increment on one is still its error (RFC 9113 §6.9)...
        let mut input = Vec::new();
        frame::write_window_update(&mut input, 1, 0);
        assert_eq!(run(&mut conn, &input), Ok(vec![Event::Reset { stream: 1 }]));
        assert_eq!(resets(conn.output()), vec![(1, 1)]);
        // ...and DATA with END_STREAM closes the other; later frames on it
        // are on a closed stream.
        let mut input = Vec::new();
        frame::write_head(&mut input, 2, kind::DATA, flag::END_STREAM, 3);
        input.extend_from_slice(b"ok");
        frame::write_head(&mut input, 2, kind::DATA, 0, 3);
        input.extend_from_slice(b"no");
        conn.output().clear();
        assert_eq!(run(&mut conn, &input), Ok(vec![]));
        assert_eq!(resets(conn.output()), vec![(3, 5)]);
    }

    #[test]
    fn a_partial_frame_waits_for_more() {
        let mut conn = Connection::new(Limits::default());
        let mut input = client_preface();
        get(&mut input, 1, flag::END_STREAM);
        let mut fields = Fields::default();
        let step = conn
            .receive(&input[..input.len() - 1], &mut fields)
            .unwrap();
        assert_eq!(step.event, None);
        let step = conn.receive(&input[step.consumed..], &mut fields).unwrap();
        assert_eq!(step.event, Some(Event::Request { stream: 1 }));
    }

    #[test]
    fn a_wrong_preface_is_a_protocol_error() {
        let mut conn = Connection::new(Limits::default());
        assert_eq!(
            run(&mut conn, b"GET / HTTP/1.1\r\n\r\n"),
            Err(Reason::ProtocolError)
        );
        assert_eq!(goaway_reason(conn.output()), Some(1));
    }

    #[test]
    fn rapid_reset_exhausts_the_budget() {
        let limits = Limits::default();
        let mut conn = Connection::new(limits);
        let mut input = client_preface();
        for i in 0..=limits.reset_budget {
            let stream = 1 + 2 * i;
            get(&mut input, stream, 0);
            frame::write_rst_stream(&mut input, stream, Reason::Cancel);
        }
        assert_eq!(run(&mut conn, &input), Err(Reason::EnhanceYourCalm));
        assert_eq!(goaway_reason(conn.output()), Some(0xb));
    }

    #[test]
    fn a_ping_flood_exhausts_the_budget() {
        let limits = Limits::default();
        let mut conn = Connection::new(limits);
        let mut input = client_preface();
        for _ in 0..=limits.control_budget {
            frame::write_head(&mut input, 8, kind::PING, 0, 0);
            input.extend_from_slice(&[0; 8]);
        }
        assert_eq!(run(&mut conn, &input), Err(Reason::EnhanceYourCalm));
    }

    #[test]
    fn the_budgets_decay_with_time() {
        let limits = Limits::default();
        let mut conn = Connection::new(limits);
        run(&mut conn, &client_preface()).unwrap();
        for second in 1..10 {
            conn.tick(second);
            let mut input = Vec::new();
            for _ in 0..limits.control_budget / 2 {
                frame::write_head(&mut input, 8, kind::PING, 0, 0);
                input.extend_from_slice(&[0; 8]);
            }
            assert_eq!(run(&mut conn, &input), Ok(vec![]));
        }
    }

    #[test]
    fn a_continuation_flood_ends_the_connection() {
        let limits = Limits::default();
        let mut conn = Connection::new(limits);
        let mut input = client_preface();
        frame::write_head(&mut input, 0, kind::HEADERS, 0, 1);
        let chunk = [0u8; 16_000];
        for _ in 0..(limits.max_header_block / chunk.len() + 1) {
            frame::write_head(&mut input, chunk.len(), kind::CONTINUATION, 0, 1);
            input.extend_from_slice(&chunk);
        }
        assert_eq!(run(&mut conn, &input), Err(Reason::EnhanceYourCalm));
    }

    #[test]
    fn streams_beyond_the_limit_are_refused() {
        let limits = Limits {
            max_streams: 2,
            ..Limits::default()
        };
        let mut conn = Connection::new(limits);
        let mut input = client_preface();
        for stream in [1, 3, 5] {
            get(&mut input, stream, flag::END_STREAM);
        }
        let events = run(&mut conn, &input).unwrap();
        assert_eq!(
            events,
            [Event::Request { stream: 1 }, Event::Request { stream: 3 }]
        );
        assert_eq!(conn.open_streams(), 2);
    }

    #[test]
    fn window_updates_open_the_allowance() {
        let mut conn = Connection::new(Limits::default());
        let mut input = client_preface();
        get(&mut input, 1, flag::END_STREAM);
        run(&mut conn, &input).unwrap();
        assert_eq!(conn.data_allowance(1), 16_384);
        conn.sent_data(1, 65_535 - 100);
        assert_eq!(conn.data_allowance(1), 100);
        let mut input = Vec::new();
        frame::write_window_update(&mut input, 1, 1000);
        frame::write_window_update(&mut input, 0, 1000);
        run(&mut conn, &input).unwrap();
        assert_eq!(conn.data_allowance(1), 1100);
    }

    #[test]
    fn a_window_overflow_resets_only_its_stream() {
        let mut conn = Connection::new(Limits::default());
        let mut input = client_preface();
        get(&mut input, 1, flag::END_STREAM);
        frame::write_window_update(&mut input, 1, 0x7fff_ffff);
        let events = run(&mut conn, &input).unwrap();
        assert_eq!(events.last(), Some(&Event::Reset { stream: 1 }));
    }
}
