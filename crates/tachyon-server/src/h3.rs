//! HTTP/3 connections: a quinn-proto `Connection` (QUIC: streams, flow
//! control, loss recovery, TLS) with HTTP/3 on top, its requests answered
//! through the same [`decide`] and [`answer::write`] as HTTP/1.1 and
//! HTTP/2.
//!
//! Owns what is HTTP/3's alone on the server side (RFC 9114): our control
//! stream and its SETTINGS, the peer's control and QPACK streams, request
//! streams read frame by frame, heads written as HEADERS frames of QPACK
//! sections, bodies as DATA frames given to QUIC as its flow control
//! allows, GOAWAY on drain, and the connection and stream errors of §8.
//! Does not own the socket, the endpoint or timers (`crate::quic`).
//!
//! Invariant: a request stream gets one response, HEADERS then its DATA
//! then the stream's end; a stream the peer reset or stopped gets nothing
//! more, and what it held is dropped. Bodies in memory are handed to QUIC
//! as references to the snapshot's bytes, never copied.

use std::collections::VecDeque;
use std::fs::File;
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use quinn_proto::{Connection, Dir, Event, ReadError, StreamEvent, StreamId, VarInt, WriteError};
use tachyon_http::h3::frame::{self, kind, parse_settings, Frame, FrameReader};
use tachyon_http::h3::qpack::{self, Qpack};
use tachyon_http::h3::{self as wire, stream_type, Code};
use tachyon_http::head::Prepared;
use tachyon_http::response::{Exchange, Persistence};
use tachyon_http::section::{DecodeError, DecodeLimits, Fields};
use tachyon_http::{Method, Status};
use tachyon_snapshot::{read_exact_at, Body, Representation};

use crate::access::Client;
use crate::answer::{self, Carrier};
use crate::reply::{decide, open_for_sending, Reply, Summary};
use crate::serving::Serving;
use crate::session::TlsFacts;

/// Stream maps: ids are the peer's, bounded by QUIC's stream limits; a
/// seeded fast hash, as SipHash was 1.8% of a busy worker
/// (bench/results/h3-2026-11-27).
type StreamMap<V> = std::collections::HashMap<StreamId, V, foldhash::fast::RandomState>;

/// Largest piece of a disk-served body read per write: what QUIC takes in
/// one go on a fast connection, small enough to stay in cache.
const DISK_CHUNK: usize = 64 * 1024;

/// HTTP/3's limits.
#[derive(Debug, Clone)]
pub struct H3Limits {
    /// Largest request field section (SETTINGS_MAX_FIELD_SECTION_SIZE),
    /// in RFC 9114's measure; beyond it the request gets 431.
    pub max_field_section: usize,
    /// Longest `:path`; beyond it the request gets 414.
    pub max_path: usize,
    /// Concurrent request streams a client may open.
    pub max_streams: u32,
    /// QUIC handshakes in progress in one worker above which a new client
    /// must first prove its address with a Retry (RFC 9000 §8.1.2), a
    /// round trip more; 0 retries every client.
    pub retry_above: usize,
}

impl Default for H3Limits {
    fn default() -> Self {
        H3Limits {
            max_field_section: 16 * 1024,
            max_path: 8 * 1024,
            max_streams: 100,
            retry_above: 64,
        }
    }
}

/// One connection's HTTP/3 state.
pub struct H3 {
    /// Our control stream, once opened.
    control: Option<StreamId>,
    /// The peer's unidirectional streams.
    uni: StreamMap<Uni>,
    /// Request streams being read.
    reading: StreamMap<FrameReader>,
    /// Responses with something left to write.
    sending: StreamMap<Outgoing>,
    /// Requests answered since the last `settle`.
    answered: u64,
    /// The largest request stream accepted, for GOAWAY.
    last_request: Option<StreamId>,
    /// GOAWAY was sent: later request streams are refused.
    going_away: bool,
    /// Bytes for our control stream that QUIC has not taken yet.
    control_out: Vec<u8>,
    /// When QUIC took the whole GOAWAY.
    goaway_written: Option<Instant>,
    decoder: qpack::Decoder,
    fields: Option<Box<Fields>>,
    /// Scratch for a QPACK section.
    section: Vec<u8>,
    limits: H3Limits,
    remote: SocketAddr,
}

/// A peer's unidirectional stream, by what its first bytes said it is.
enum Uni {
    /// Its type is not read yet (a varint may arrive in pieces).
    Opening(Vec<u8>),
    /// The peer's control stream: SETTINGS seen or not.
    Control { reader: FrameReader, settings: bool },
    /// The peer's QPACK encoder stream (only a zero capacity is allowed).
    Encoder,
    /// The peer's QPACK decoder stream (nothing to act on: no table).
    Decoder,
    /// A type we ignore (reserved, grease): read and dropped.
    Ignored,
}

/// What a response still has to give QUIC, in order.
#[derive(Default)]
struct Outgoing {
    parts: VecDeque<Part>,
}

/// A piece of a response.
enum Part {
    /// Bytes ready to write: frame headers, a section, memory bodies.
    Ready(Bytes),
    /// A range of a disk-served body, read as QUIC takes it; its file once
    /// opened.
    Disk {
        file: Arc<Representation>,
        range: Range<u64>,
        opened: Option<Arc<File>>,
    },
}

/// Most parts handed to QUIC in one call.
const BATCH: usize = 16;

/// Entries a quiet connection's stream maps may keep.
const KEPT_STREAMS: usize = 32;

/// A connection error: its code closes the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failed(pub Code);

impl H3 {
    pub fn new(limits: H3Limits, remote: SocketAddr) -> Box<H3> {
        Box::new(H3 {
            control: None,
            uni: StreamMap::default(),
            reading: StreamMap::default(),
            sending: StreamMap::default(),
            answered: 0,
            last_request: None,
            going_away: false,
            control_out: Vec::new(),
            goaway_written: None,
            decoder: qpack::Decoder::default(),
            fields: None,
            section: Vec::new(),
            limits,
            remote,
        })
    }

    /// The connection went quiet: gives back what is rebuilt cheaply.
    /// Stream maps sized for a few requests stay: a connection goes quiet
    /// between every batch of requests, and growing them again each time
    /// was 1.8% of a busy worker (bench/results/h3-lean-2026-11-27).
    pub fn settle(&mut self) {
        if self.sending.is_empty() && self.sending.capacity() > KEPT_STREAMS {
            self.sending = StreamMap::default();
        }
        if self.reading.is_empty() && self.reading.capacity() > KEPT_STREAMS {
            self.reading = StreamMap::default();
        }
        self.fields = None;
        self.section = Vec::new();
    }

    /// Handles the events QUIC has for us, answering requests into `conn`.
    pub fn on_events(&mut self, conn: &mut Connection, cx: &mut Serving<'_>) -> Result<(), Failed> {
        while let Some(event) = conn.poll() {
            match event {
                Event::Connected => self.open_control(conn)?,
                Event::Stream(StreamEvent::Opened { dir }) => {
                    // A new stream may hold data already, and QUIC says so
                    // only by this event, not by `Readable`.
                    while let Some(id) = self.accept(conn, dir) {
                        self.read(conn, id, cx)?;
                    }
                }
                Event::Stream(StreamEvent::Readable { id }) => self.read(conn, id, cx)?,
                Event::Stream(StreamEvent::Writable { id }) => self.write(conn, id),
                Event::Stream(StreamEvent::Stopped { id, .. }) => {
                    self.sending.remove(&id);
                    let _ = conn
                        .send_stream(id)
                        .reset(Code::RequestCancelled.into_varint());
                }
                Event::Stream(_) | Event::HandshakeDataReady => {}
                Event::ConnectionLost { .. } => {
                    self.sending.clear();
                    self.reading.clear();
                }
                Event::DatagramReceived | Event::DatagramsUnblocked => {}
            }
        }
        Ok(())
    }

    /// Our control stream and its SETTINGS (§6.2.1), first thing.
    fn open_control(&mut self, conn: &mut Connection) -> Result<(), Failed> {
        if self.control.is_some() {
            return Ok(());
        }
        let id = conn
            .streams()
            .open(Dir::Uni)
            .ok_or(Failed(Code::StreamCreationError))?;
        let preface = wire::control_stream_preface(self.limits.max_field_section as u64);
        // A new stream's credit always takes a few dozen bytes.
        let _ = conn.send_stream(id).write(&preface);
        // Ahead of response bodies: a GOAWAY must not wait behind the rest
        // of a large body (nor be dropped with it when a drain closes).
        let _ = conn.send_stream(id).set_priority(1);
        self.control = Some(id);
        Ok(())
    }

    /// Takes the next stream the peer opened that is to be read.
    fn accept(&mut self, conn: &mut Connection, dir: Dir) -> Option<StreamId> {
        while let Some(id) = conn.streams().accept(dir) {
            match dir {
                Dir::Uni => {
                    self.uni.insert(id, Uni::Opening(Vec::new()));
                    return Some(id);
                }
                Dir::Bi if self.going_away => {
                    // §5.2: after GOAWAY, requests are refused unprocessed.
                    let code = Code::RequestRejected.into_varint();
                    let _ = conn.recv_stream(id).stop(code);
                    let _ = conn.send_stream(id).reset(code);
                }
                Dir::Bi => {
                    self.last_request = Some(id);
                    let limit = self.limits.max_field_section;
                    self.reading.insert(id, FrameReader::new(limit));
                    return Some(id);
                }
            }
        }
        None
    }

    /// Reads what arrived on stream `id`.
    fn read(
        &mut self,
        conn: &mut Connection,
        id: StreamId,
        cx: &mut Serving<'_>,
    ) -> Result<(), Failed> {
        if id.dir() == Dir::Uni {
            return self.read_uni(conn, id);
        }
        let Some(mut reader) = self.reading.remove(&id) else {
            // Answered already (a body or trailers still arriving): drained.
            return drain(conn, id);
        };
        let Some(Head { request, finished }) = read_head(&mut reader, conn, id)? else {
            // Not readable any more: nothing to answer, nothing to keep.
            return Ok(());
        };
        match request {
            Some(section) => {
                self.respond(conn, id, section, cx);
                // Anything after the head is read and dropped.
                drain(conn, id)
            }
            // §4.1: a stream that ends before its request is incomplete.
            None if finished => {
                let _ = conn
                    .send_stream(id)
                    .reset(Code::RequestIncomplete.into_varint());
                Ok(())
            }
            None => {
                self.reading.insert(id, reader);
                Ok(())
            }
        }
    }

    /// Answers the request on `id`: its section decoded, or `Err` with the
    /// status its head already earned.
    fn respond(
        &mut self,
        conn: &mut Connection,
        id: StreamId,
        section: Result<Bytes, Status>,
        cx: &mut Serving<'_>,
    ) {
        let started = cx.observer.start();
        let limits = DecodeLimits {
            max_list_size: self.limits.max_field_section,
            max_path: self.limits.max_path,
        };
        let fields = self.fields.get_or_insert_with(Box::default);
        let status = match section {
            Err(status) => Some(status),
            Ok(section) => match self.decoder.decode(&section, &limits, fields) {
                Ok(()) => None,
                Err(DecodeError::TooLarge) => Some(Status::HeadersTooLarge),
                Err(DecodeError::PathTooLong) => Some(Status::UriTooLong),
                // §4.1.2: a malformed request is a stream error.
                Err(DecodeError::Malformed) => {
                    let _ = conn.send_stream(id).reset(Code::MessageError.into_varint());
                    return;
                }
                // §2.2.3 of RFC 9204: a connection error.
                Err(DecodeError::Compression) => {
                    let code = Code::QpackDecompressionFailed.into_varint();
                    conn.close(Instant::now(), code, Bytes::new());
                    return;
                }
            },
        };
        let head = fields.head();
        let https = cx.https;
        let exchange = Exchange {
            date: cx.date,
            persistence: Persistence::KeepAlive,
            head_only: head.method == Method::Head,
            fields: &https.fields,
        };
        let reply = match status {
            Some(status) => Reply::Error(status),
            None => decide(&head, cx.generation.pick(head.host), cx.scratch),
        };
        let (reply, opened) = open_for_sending(reply, exchange.head_only);
        let summary: Summary = reply.summary(exchange.head_only);
        self.section.clear();
        let mut carried = Carried {
            section: &mut self.section,
            first_data: None,
            body: VecDeque::new(),
            opened,
        };
        answer::write(reply, &exchange, &mut carried);
        let parts = carried.into_parts();
        let client = Client {
            addr: Some(self.remote),
            tls: Some(TlsFacts {
                version: u16::from(rustls::ProtocolVersion::TLSv1_3),
                alpn: Some(wire::ALPN),
            }),
        };
        cx.observer.request(&head, &summary, &client, started);
        cx.observer.h3_request();
        self.answered += 1;
        self.sending.insert(id, Outgoing { parts });
        self.write(conn, id);
    }

    /// Gives QUIC as much of `id`'s response as it takes; ends the stream
    /// when all of it is taken.
    fn write(&mut self, conn: &mut Connection, id: StreamId) {
        let Some(out) = self.sending.get_mut(&id) else {
            return;
        };
        let mut stream = conn.send_stream(id);
        let mut batch: [Bytes; BATCH] = Default::default();
        loop {
            if matches!(out.parts.front(), Some(Part::Disk { .. })) && !read_piece(out) {
                // The file is gone or changed after the head went: the
                // response cannot be finished (as over HTTP/2).
                let _ = stream.reset(Code::InternalError.into_varint());
                self.sending.remove(&id);
                return;
            }
            let mut len = 0;
            for part in out.parts.iter().take(BATCH) {
                match part {
                    Part::Ready(bytes) => batch[len] = bytes.clone(),
                    Part::Disk { .. } => break,
                }
                len += 1;
            }
            if len == 0 {
                break;
            }
            let batch = &mut batch[..len];
            match stream.write_chunks(batch) {
                Ok(written) => {
                    out.parts.drain(..written.chunks);
                    if written.chunks < batch.len() {
                        // QUIC took part of one chunk: its credit is spent,
                        // but it promises a Writable event only to a write
                        // it refused, so the loop asks once more.
                        out.parts[0] = Part::Ready(batch[written.chunks].clone());
                    }
                }
                Err(WriteError::Blocked) => return,
                Err(_) => {
                    self.sending.remove(&id);
                    return;
                }
            }
        }
        let _ = stream.finish();
        self.sending.remove(&id);
    }

    /// Reads a peer's unidirectional stream.
    fn read_uni(&mut self, conn: &mut Connection, id: StreamId) -> Result<(), Failed> {
        let Some(mut state) = self.uni.remove(&id) else {
            return drain(conn, id);
        };
        let mut recv = conn.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else {
            return Ok(());
        };
        let mut result = Ok(());
        let mut keep = true;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    if let Err(failed) = uni_bytes(&mut state, &chunk.bytes) {
                        result = Err(failed);
                        break;
                    }
                }
                Ok(None) | Err(ReadError::Reset(_)) => {
                    // §6.2.1: the control stream may never end; RFC 9204
                    // §4.2: nor the QPACK streams.
                    if matches!(state, Uni::Control { .. } | Uni::Encoder | Uni::Decoder) {
                        result = Err(Failed(Code::ClosedCriticalStream));
                    }
                    keep = false;
                    break;
                }
                Err(ReadError::Blocked) => break,
            }
        }
        let _ = chunks.finalize();
        if let Uni::Ignored = state {
            let _ = conn
                .recv_stream(id)
                .stop(Code::StreamCreationError.into_varint());
            keep = false;
        }
        result?;
        if keep {
            if let Uni::Control { .. } = state {
                let dup = self.uni.values().any(|u| matches!(u, Uni::Control { .. }));
                if dup {
                    // §6.2.1: one control stream per peer.
                    return Err(Failed(Code::StreamCreationError));
                }
            }
            self.uni.insert(id, state);
        }
        Ok(())
    }

    /// Sends GOAWAY with the first request stream we will not answer
    /// (§5.2): requests already accepted are answered.
    pub fn go_away(&mut self, conn: &mut Connection) {
        if !self.going_away {
            self.going_away = true;
            let next = self
                .last_request
                .map_or(0, |id| u64::from(VarInt::from(id)) + 4);
            let mut value = Vec::new();
            wire::put_varint(&mut value, next);
            frame::put_header(&mut self.control_out, kind::GOAWAY, value.len() as u64);
            self.control_out.extend_from_slice(&value);
        }
        self.write_control(conn);
    }

    /// Gives QUIC what is waiting for the control stream. QUIC refuses
    /// writes while the connection's flow-control window is spent (a large
    /// body took it), so what it refuses waits here for the next turn.
    fn write_control(&mut self, conn: &mut Connection) {
        let Some(control) = self.control else {
            return;
        };
        while !self.control_out.is_empty() {
            match conn.send_stream(control).write(&self.control_out) {
                Ok(n) => drop(self.control_out.drain(..n)),
                Err(_) => break,
            }
        }
        if self.going_away && self.control_out.is_empty() && self.goaway_written.is_none() {
            self.goaway_written = Some(Instant::now());
        }
    }

    /// Nothing left to answer or to hand to QUIC.
    pub fn is_idle(&self) -> bool {
        self.sending.is_empty() && self.reading.is_empty()
    }

    /// Nothing left to answer, QUIC holds no response bytes the client
    /// has not acknowledged, and the GOAWAY has had time to arrive: a
    /// drain may close the connection now (a close drops whatever QUIC
    /// still buffers: the tail of a large body, a GOAWAY not yet sent).
    pub fn is_done(&self, conn: &mut Connection, now: Instant) -> bool {
        // Our control stream never ends, so QUIC counts it as sending; it
        // has no per-stream acknowledgement to ask, so the GOAWAY gets two
        // round trips (and at least 10 ms) before the close.
        let own = usize::from(self.control.is_some());
        let settle = (conn.rtt() * 2).max(Duration::from_millis(10));
        let told = match self.control {
            None => true,
            Some(_) => self
                .goaway_written
                .is_some_and(|at| now.saturating_duration_since(at) >= settle),
        };
        self.is_idle() && told && conn.streams().send_streams() <= own
    }
}

/// What the bytes of a peer's unidirectional stream mean.
fn uni_bytes(state: &mut Uni, mut bytes: &[u8]) -> Result<(), Failed> {
    while !bytes.is_empty() {
        match state {
            Uni::Opening(start) => {
                let taken = bytes.len().min(8);
                start.extend_from_slice(&bytes[..taken]);
                let Some((kind, n)) = wire::get_varint(start) else {
                    bytes = &bytes[taken..];
                    continue;
                };
                let rest = start[n..].to_vec();
                bytes = &bytes[taken..];
                *state = match kind {
                    stream_type::CONTROL => Uni::Control {
                        reader: FrameReader::new(4096),
                        settings: false,
                    },
                    stream_type::QPACK_ENCODER => Uni::Encoder,
                    stream_type::QPACK_DECODER => Uni::Decoder,
                    // §6.2.2: only a server pushes.
                    stream_type::PUSH => return Err(Failed(Code::StreamCreationError)),
                    _ => Uni::Ignored,
                };
                uni_bytes(state, &rest)?;
            }
            Uni::Control { reader, settings } => {
                let mut seen = *settings;
                reader
                    .feed(bytes, &mut |frame| match (frame, seen) {
                        (Frame::Settings(payload), false) => {
                            seen = true;
                            parse_settings(payload, |_, _| {})
                        }
                        // §6.2.1: SETTINGS first, and once.
                        (_, false) => Err(Code::MissingSettings),
                        (Frame::Settings(_), true) => Err(Code::FrameUnexpected),
                        (Frame::Goaway(_) | Frame::MaxPushId(_) | Frame::CancelPush(_), true) => {
                            Ok(())
                        }
                        (Frame::Unknown(_), true) => Ok(()),
                        // DATA and HEADERS never travel on a control stream.
                        _ => Err(Code::FrameUnexpected),
                    })
                    .map_err(Failed)?;
                *settings = seen;
                return Ok(());
            }
            Uni::Encoder => {
                return qpack::check_encoder_stream(bytes)
                    .map_err(|_| Failed(Code::QpackEncoderStreamError));
            }
            Uni::Decoder | Uni::Ignored => return Ok(()),
        }
    }
    Ok(())
}

/// What a request stream has delivered of its head so far.
struct Head {
    /// The encoded field section, or the status a too-large one earned.
    request: Option<Result<Bytes, Status>>,
    /// The stream ended (or was reset) before more could come.
    finished: bool,
}

/// Feeds what stream `id` received to its frame reader until the request's
/// HEADERS frame is whole, the stream has nothing more for now, or it
/// ended. `None` when the stream cannot be read any more; `Err` when a
/// frame may not appear on a request stream.
fn read_head(
    reader: &mut FrameReader,
    conn: &mut Connection,
    id: StreamId,
) -> Result<Option<Head>, Failed> {
    let mut head = Head {
        request: None,
        finished: false,
    };
    let mut recv = conn.recv_stream(id);
    let Ok(mut chunks) = recv.read(true) else {
        return Ok(None);
    };
    let mut error = None;
    loop {
        match chunks.next(usize::MAX) {
            Ok(Some(chunk)) => {
                let request = &mut head.request;
                let fed = reader.feed(&chunk.bytes, &mut |frame| match frame {
                    Frame::Headers(section) if request.is_none() => {
                        *request = Some(Ok(Bytes::copy_from_slice(section)));
                        Ok(())
                    }
                    Frame::HeadersTooLarge if request.is_none() => {
                        *request = Some(Err(Status::HeadersTooLarge));
                        Ok(())
                    }
                    // A body (discarded, as over HTTP/1.1 and HTTP/2),
                    // trailers, frames of unknown types.
                    Frame::Data { .. } | Frame::Unknown(_) => Ok(()),
                    Frame::Headers(_) | Frame::HeadersTooLarge => Ok(()),
                    // §7.2.4, §7.2.6: control frames on a request stream.
                    _ => Err(Code::FrameUnexpected),
                });
                if let Err(code) = fed {
                    error = Some(code);
                    break;
                }
                if head.request.is_some() {
                    break;
                }
            }
            Ok(None) | Err(ReadError::Reset(_)) => {
                head.finished = true;
                break;
            }
            Err(ReadError::Blocked) => break,
        }
    }
    let _ = chunks.finalize();
    match error {
        Some(code) => Err(Failed(code)),
        None => Ok(Some(head)),
    }
}

/// Reads and drops what is left of a stream.
fn drain(conn: &mut Connection, id: StreamId) -> Result<(), Failed> {
    let mut recv = conn.recv_stream(id);
    if let Ok(mut chunks) = recv.read(false) {
        while let Ok(Some(_)) = chunks.next(usize::MAX) {}
        let _ = chunks.finalize();
    }
    Ok(())
}

/// Reads the next piece of the disk-served part at the front into a
/// ready one before it; false when its file no longer holds the loaded
/// bytes (or cannot be opened).
fn read_piece(out: &mut Outgoing) -> bool {
    let Some(Part::Disk {
        file,
        range,
        opened,
    }) = out.parts.front_mut()
    else {
        return true;
    };
    let Body::Disk(disk) = &file.body else {
        return false;
    };
    let handle = match opened {
        Some(handle) => Arc::clone(handle),
        None => match disk.open() {
            Ok(handle) => {
                *opened = Some(Arc::clone(&handle));
                handle
            }
            Err(_) => return false,
        },
    };
    let len = ((range.end - range.start) as usize).min(DISK_CHUNK);
    let mut piece = vec![0u8; len];
    if read_exact_at(&handle, &mut piece, range.start).is_err() || !disk.still_loaded(&handle) {
        return false;
    }
    range.start += len as u64;
    if range.start == range.end {
        out.parts.pop_front();
    }
    out.parts.push_front(Part::Ready(Bytes::from(piece)));
    true
}

/// HTTP/3's carrier: the QPACK section on its own (framed as HEADERS by
/// [`H3::respond`]), the body as DATA frames of memory slices, or of disk
/// pieces read as QUIC takes them.
struct Carried<'b> {
    section: &'b mut Vec<u8>,
    /// The length of a DATA frame that follows the HEADERS frame at once:
    /// its header goes in the HEADERS frame's buffer.
    first_data: Option<u64>,
    body: VecDeque<Part>,
    opened: Option<Arc<File>>,
}

impl Carried<'_> {
    fn data_header(&mut self, len: u64) {
        if self.body.is_empty() && self.first_data.is_none() {
            self.first_data = Some(len);
            return;
        }
        let mut header = Vec::with_capacity(frame::header_len(kind::DATA, len));
        frame::put_header(&mut header, kind::DATA, len);
        self.body.push_back(Part::Ready(Bytes::from(header)));
    }

    /// The response's parts in order: the HEADERS frame (with the first
    /// DATA frame's header, in one buffer sized exactly: a `Bytes` made
    /// from a `Vec` with spare room allocates again), then the body.
    fn into_parts(self) -> VecDeque<Part> {
        let section = self.section.len() as u64;
        let mut len = frame::header_len(kind::HEADERS, section) + self.section.len();
        if let Some(data) = self.first_data {
            len += frame::header_len(kind::DATA, data);
        }
        let mut head = Vec::with_capacity(len);
        frame::put_header(&mut head, kind::HEADERS, section);
        head.extend_from_slice(self.section);
        if let Some(data) = self.first_data {
            frame::put_header(&mut head, kind::DATA, data);
        }
        let mut parts = self.body;
        parts.push_front(Part::Ready(Bytes::from(head)));
        parts
    }
}

impl Carrier for Carried<'_> {
    type Dialect = Qpack;

    fn prepared(file: &Representation) -> &Prepared<Qpack> {
        &file.h3
    }

    fn head(&mut self) -> &mut Vec<u8> {
        self.section
    }

    fn file(&mut self, file: &Arc<Representation>, range: Range<u64>) {
        if range.end <= range.start {
            return;
        }
        self.data_header(range.end - range.start);
        let part = match file.memory() {
            Some(bytes) => Part::Ready(bytes.slice(range.start as usize..range.end as usize)),
            None => Part::Disk {
                file: Arc::clone(file),
                range,
                opened: self.opened.clone(),
            },
        };
        self.body.push_back(part);
    }

    fn made(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let mut bytes = Vec::new();
        write(&mut bytes);
        if !bytes.is_empty() {
            self.data_header(bytes.len() as u64);
            self.body.push_back(Part::Ready(Bytes::from(bytes)));
        }
    }
}

/// The HTTP/3 error codes as QUIC carries them.
pub(crate) trait IntoVarint {
    fn into_varint(self) -> VarInt;
}

impl IntoVarint for Code {
    fn into_varint(self) -> VarInt {
        VarInt::from_u64(self.value()).unwrap_or(VarInt::from_u32(0x102))
    }
}
