//! What a connection still has to send, and sending it with as few syscalls
//! as possible.
//!
//! An outbox is a byte buffer for heads and small bodies plus an ordered list
//! of parts: runs of that buffer, slices of in-memory bodies, and file regions
//! for sendfile. Pipelined responses accumulate in one outbox and leave in one
//! `send`/`writev` (may_minihttp and ntex batch the same way). Invariants:
//! parts are sent strictly in order, a part is dropped only once fully
//! written, and no byte of a disk-served part reaches the socket unless the
//! file was still, after that byte was read, the one whose length and ETag
//! the head announced. By default disk bodies are copied through a bounce
//! buffer: read, check the file's stamp, send. With sendfile (opt-in) the
//! socket holds page-cache references, not copies, so the check can only
//! hold back the last byte until every other byte was queued; a write
//! after that can still reach the client (see `DiskBody::zero_copy`).
//! Frozen in-memory copies, which cannot change, go out through a pipe
//! (`crate::pipes`), or are copied where none can and where they are small
//! enough that the copy costs less than the pipe's two calls; the bytes a
//! pipe holds are the outbox's first, and leave before any part. A pipe
//! carries a run of such parts in one load, and stamps (HTTP/2's frame
//! headers, written once into memory never written again) among them.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::fd::AsFd;
use std::sync::Arc;

use bytes::Bytes;
use rustix::io::{Errno, IoSlice};
use tachyon_snapshot::{read_exact_at, Body, Representation};
use tachyon_sys::{Stamp, Still};

use crate::pipes::{Pipe, Pipes};
use crate::wire::Wire;

/// Stop parsing pipelined requests once this much output is queued: a small
/// multiple of a loopback socket buffer, so pipelining still fills the pipe
/// (16 pipelined 1 KiB responses are 21 KiB) while a client that never reads
/// holds at most this much plus one response.
pub const MAX_QUEUED: u64 = 64 * 1024;

/// Most iovecs gathered into one writev.
const MAX_IOVECS: usize = 32;
/// Largest sendfile call (nginx's `sendfile_max_chunk` default is 2 MiB;
/// lighttpd's 256 KiB made a 512 KiB response two calls and a wake-up:
/// bench/results/large-2026-11-25).
const SENDFILE_CHUNK: u64 = 1024 * 1024;
/// Largest copy of a disk body per send: small enough to stay in L2 between
/// the read and the send, large enough that the two syscalls and the stamp
/// check are a small part of the cost.
const COPY_CHUNK: u64 = 256 * 1024;
/// Frozen bodies (or their rests) up to this size are copied next to their
/// head in one send, not loaded into a pipe: a pipe costs two calls more
/// (`vmsplice`, `splice`), more than copying 16 KiB when the server is the
/// limit (bench/results/trials-2026-12-03e/copy-frozen-32k), less than
/// copying 24 KiB (bench/results/splice-variants-2026-12-06).
pub const COPY_FROZEN_UP_TO: u64 = 16 * 1024;

enum Part {
    /// A run of `buf`.
    Inline(Range<usize>),
    /// A slice of an in-memory body.
    Memory(Bytes),
    /// Bytes never written again (a DATA frame's header between frozen
    /// payloads), which a pipe may carry with them.
    Stamp(Stamp),
    /// A region of a disk-backed body (a file, or a frozen copy), and the
    /// file it is read from: one opened for this response comes with the
    /// part (`reply::open_for_sending`); one the representation keeps open
    /// is taken at the first send.
    File {
        body: Arc<Representation>,
        offset: u64,
        end: u64,
        file: Option<Arc<File>>,
    },
}

/// Where a flush stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flushed {
    /// Everything was sent; the outbox is empty again.
    All,
    /// The socket buffer is full; wait for EPOLLOUT.
    Blocked,
    /// The turn's byte budget is spent and the socket may take more: the
    /// worker must come back to this connection without waiting for an edge.
    Paused,
}

/// The result of one flush: where it stopped and whether it moved anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flush {
    pub state: Flushed,
    /// Bytes handed to the kernel by this flush; the send timeout restarts
    /// only on progress, never on a mere readiness event.
    pub sent: u64,
}

/// What one send of a flush did.
enum Step {
    /// This many bytes went (none after an interrupted call).
    Sent(u64),
    /// The socket is full.
    Blocked,
}

impl Step {
    /// A send's result: a full socket is a step, other errors end the flush.
    fn of(result: rustix::io::Result<u64>) -> Result<Step, SendError> {
        match result {
            Ok(n) => Ok(Step::Sent(n)),
            Err(Errno::AGAIN) => Ok(Step::Blocked),
            Err(Errno::INTR) => Ok(Step::Sent(0)),
            Err(e) => Err(io::Error::from(e).into()),
        }
    }
}

/// Why a flush gave up on the connection.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("sending: {0}")]
    Socket(#[from] io::Error),
    /// A disk-served file no longer matches what its head announced.
    #[error("a disk-served file changed while it was being sent")]
    FileChanged,
}

/// What a worker lends every flush.
#[derive(Default)]
pub struct Carriers {
    /// Scratch for copying disk bodies; it carries nothing from one call to
    /// the next (what a send did not take is read again).
    pub bounce: Vec<u8>,
    /// Empty pipes for frozen bodies.
    pub pipes: Pipes,
}

/// Pending output of one connection (or a worker's scratch for the current batch).
#[derive(Default)]
pub struct Outbox {
    buf: Vec<u8>,
    parts: Vec<Part>,
    /// Index of the first part not fully sent.
    cursor: usize,
    /// Start of the inline run not yet recorded as a part.
    open_run: usize,
    /// A pipe holding the next bytes to send, taken from the parts before
    /// the cursor; `Some` only while it holds any.
    relay: Option<Pipe>,
    /// The connection closes once this is sent: every write says more
    /// follows (MSG_MORE), so the last segment waits for the close and the
    /// FIN leaves in it. One segment instead of two for each response on
    /// a fresh connection: the client (and on loopback, the server that
    /// delivers it) handles one packet and one wake-up less.
    closes: bool,
}

impl Outbox {
    /// The buffer to append heads and small bodies to.
    #[inline]
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Marks what is queued as the connection's last output (see `closes`).
    /// Only for a connection that closes or shuts its side once this is
    /// sent: until then, the tail of the last write is held back.
    pub fn close_after(&mut self) {
        self.closes = true;
    }

    /// True when nothing is waiting to be sent.
    pub fn is_empty(&self) -> bool {
        self.cursor == self.parts.len() && self.open_run == self.buf.len() && self.relay.is_none()
    }

    /// Bytes waiting, counting body parts: used to stop parsing pipelined
    /// requests when a client queues more than it reads.
    pub fn pending_bytes(&self) -> u64 {
        let inline = (self.buf.len() - self.open_run) as u64;
        let relayed = self.relay.as_ref().map_or(0, |pipe| pipe.held() as u64);
        self.parts[self.cursor..]
            .iter()
            .fold(inline + relayed, |sum, part| {
                sum + match part {
                    Part::Inline(r) => r.len() as u64,
                    Part::Memory(b) => b.len() as u64,
                    Part::Stamp(s) => s.bytes().len() as u64,
                    Part::File { offset, end, .. } => end - offset,
                }
            })
    }

    /// Heap bytes this outbox holds itself (bodies it references are shared
    /// with the snapshot and not counted).
    pub fn footprint(&self) -> usize {
        self.buf.capacity() + self.parts.capacity() * std::mem::size_of::<Part>()
    }

    /// Appends `range` of `body` as a part after what was written so far;
    /// `opened` is its file when already opened for this response (else a
    /// disk body's file is opened when its part is reached).
    pub fn push_body(
        &mut self,
        body: &Arc<Representation>,
        range: Range<u64>,
        opened: Option<&Arc<File>>,
    ) {
        if range.is_empty() {
            return;
        }
        self.seal();
        // A small frozen copy goes as its bytes in place, gathered with its
        // head like a heap body (see `COPY_FROZEN_UP_TO`).
        let small = range.end - range.start <= COPY_FROZEN_UP_TO;
        match body.memory() {
            Some(bytes) if small || matches!(body.body, Body::Memory(_)) => self.parts.push(
                Part::Memory(bytes.slice(range.start as usize..range.end as usize)),
            ),
            _ => self.parts.push(Part::File {
                body: Arc::clone(body),
                offset: range.start,
                end: range.end,
                file: opened.cloned(),
            }),
        }
    }

    /// Appends bytes already in memory as their own part (not copied).
    pub fn push_bytes(&mut self, bytes: Bytes) {
        if bytes.is_empty() {
            return;
        }
        self.seal();
        self.parts.push(Part::Memory(bytes));
    }

    /// Appends a stamp: on a plain socket a pipe carries it with the
    /// frozen parts around it, elsewhere it is copied like memory.
    pub fn push_stamp(&mut self, stamp: Stamp) {
        self.seal();
        self.parts.push(Part::Stamp(stamp));
    }

    /// Appends `range` of a frozen copy as a part a pipe may carry, however
    /// short (`push_body` copies short ones): for HTTP/2, whose frames of
    /// one body go into a pipe together, each one's header a stamp. False
    /// when `body` is not a frozen copy (nothing is appended).
    pub fn push_frozen(&mut self, body: &Arc<Representation>, range: Range<u64>) -> bool {
        if body.frozen_copy().is_none() {
            return false;
        }
        if !range.is_empty() {
            self.seal();
            self.parts.push(Part::File {
                body: Arc::clone(body),
                offset: range.start,
                end: range.end,
                file: None,
            });
        }
        true
    }

    /// Moves what is still unsent into a new outbox sized to it, leaving this
    /// one empty with its capacity: a connection whose client stops reading
    /// holds only its own bytes, not the worker's largest batch buffer.
    pub fn take_unsent(&mut self) -> Outbox {
        self.seal();
        let mut rest = Outbox {
            buf: Vec::with_capacity(self.pending_bytes_inline()),
            parts: Vec::with_capacity(self.parts.len() - self.cursor),
            cursor: 0,
            open_run: 0,
            relay: self.relay.take(),
            closes: self.closes,
        };
        for part in self.parts.drain(self.cursor..) {
            rest.parts.push(match part {
                Part::Inline(r) => {
                    let start = rest.buf.len();
                    rest.buf.extend_from_slice(&self.buf[r]);
                    Part::Inline(start..rest.buf.len())
                }
                other => other,
            });
        }
        rest.open_run = rest.buf.len();
        self.clear();
        rest
    }

    fn pending_bytes_inline(&self) -> usize {
        self.parts[self.cursor..]
            .iter()
            .map(|p| match p {
                Part::Inline(r) => r.len(),
                _ => 0,
            })
            .sum()
    }

    /// Records the open inline run as a part.
    fn seal(&mut self) {
        if self.buf.len() > self.open_run {
            self.parts.push(Part::Inline(self.open_run..self.buf.len()));
            self.open_run = self.buf.len();
        }
    }

    /// Sends as much as the socket takes, up to about `budget` bytes (a
    /// fairness bound: one fast reader of a large file must not hold the
    /// worker while other connections wait). A pipe's bytes go first; a
    /// load into a pipe may pass the budget by what the pipe holds.
    pub fn flush(
        &mut self,
        wire: &mut Wire<'_>,
        budget: u64,
        carriers: &mut Carriers,
    ) -> Result<Flush, SendError> {
        self.seal();
        let mut sent = 0u64;
        let stop = |state, sent| Ok(Flush { state, sent });
        loop {
            if self.relay.is_some() {
                match self.unload_relay(wire, carriers)? {
                    Step::Sent(n) => sent += n,
                    Step::Blocked => return stop(Flushed::Blocked, sent),
                }
                if self.relay.is_some() {
                    continue;
                }
            }
            if self.cursor == self.parts.len() {
                break;
            }
            if sent >= budget {
                return stop(Flushed::Paused, sent);
            }
            let can_sendfile = wire.can_sendfile();
            if can_sendfile && self.load_relay(carriers) {
                continue;
            }
            let at_still = still(&self.parts[self.cursor]).is_some();
            let step = match &self.parts[self.cursor] {
                Part::File { .. } if !at_still => {
                    self.send_file(wire, &mut carriers.bounce, budget - sent)?
                }
                // Frozen parts and stamps are copied when no pipe can carry
                // them: on TLS, or when the one at the cursor found none
                // above.
                _ => {
                    let gathered = self.write_gathered(wire, !can_sendfile || at_still);
                    let step = Step::of(gathered.map(|n| n as u64))?;
                    if let Step::Sent(n) = step {
                        self.advance(n as usize);
                    }
                    step
                }
            };
            match step {
                Step::Sent(n) => sent += n,
                Step::Blocked => return stop(Flushed::Blocked, sent),
            }
        }
        // TLS records the socket did not take yet are part of this output.
        match wire.drain() {
            Ok(()) => {}
            Err(Errno::AGAIN) => return stop(Flushed::Blocked, sent),
            Err(e) => return Err(io::Error::from(e).into()),
        }
        self.clear();
        stop(Flushed::All, sent)
    }

    /// Sends from the relay pipe; gives the pipe back once it is empty.
    fn unload_relay(
        &mut self,
        wire: &mut Wire<'_>,
        carriers: &mut Carriers,
    ) -> Result<Step, SendError> {
        let Some(pipe) = &mut self.relay else {
            return Ok(Step::Sent(0));
        };
        // More follows when a part does: the segment that ends a response
        // must not wait for bytes that are not coming, except the close's FIN.
        let more = self.cursor < self.parts.len() || self.closes;
        let n = match pipe.unload(wire.fd().as_fd(), more) {
            // A pipe that holds bytes gives some, or would block.
            Ok(0) => return Err(io::Error::other("a loaded pipe gave nothing").into()),
            Ok(n) => n as u64,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Step::Blocked),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(e) => return Err(e.into()),
        };
        if pipe.held() == 0 {
            if let Some(pipe) = self.relay.take() {
                carriers.pipes.give(pipe);
            }
        }
        Ok(Step::Sent(n))
    }

    /// Loads the run of frozen copies and stamps at the cursor into a
    /// pipe, as much as the pipe holds (past the budget if need be: a
    /// remainder would leave every later load straddling a page, one slot
    /// more each). False when the cursor is at no such part or no pipe
    /// took it (it is copied then).
    fn load_relay(&mut self, carriers: &mut Carriers) -> bool {
        let run = self.parts[self.cursor..]
            .iter()
            .take(tachyon_sys::MAX_PIECES)
            .map_while(still)
            .map(|piece| piece.len())
            .sum();
        if run == 0 {
            return false;
        }
        let Some(mut pipe) = carriers.pipes.take(run) else {
            return false;
        };
        match pipe.load(self.parts[self.cursor..].iter().map_while(still)) {
            Ok(n) if n > 0 => {
                self.advance(n);
                self.relay = Some(pipe);
                true
            }
            _ => {
                carriers.pipes.give(pipe);
                false
            }
        }
    }

    /// Sends from the disk-served file part at the cursor, up to `room`
    /// bytes: copied through `bounce` and checked, or by sendfile.
    fn send_file(
        &mut self,
        wire: &mut Wire<'_>,
        bounce: &mut Vec<u8>,
        room: u64,
    ) -> Result<Step, SendError> {
        let Part::File {
            body,
            offset,
            end,
            file,
        } = &mut self.parts[self.cursor]
        else {
            unreachable!("send_file is called at a file part")
        };
        let Body::Disk(disk) = &body.body else {
            unreachable!("File parts are disk bodies")
        };
        let file: &File = match file {
            Some(file) => file,
            None => file.insert(disk.open().map_err(|_| SendError::FileChanged)?),
        };
        let step = if disk.zero_copy() && wire.can_sendfile() {
            if *end - *offset == 1 {
                // The last byte: read it, check the file, then send it from
                // memory. A write that changed any byte sent so far changed
                // the file's ctime first.
                let mut byte = [0u8];
                read_exact_at(file, &mut byte, *offset)?;
                if !disk.still_loaded(file) {
                    return Err(SendError::FileChanged);
                }
                self.parts[self.cursor] = Part::Memory(Bytes::copy_from_slice(&byte));
                return Ok(Step::Sent(0));
            }
            // All but the last byte (see above).
            let want = (*end - *offset - 1).min(SENDFILE_CHUNK).min(room);
            let before = *offset;
            match rustix::fs::sendfile(wire.fd(), file, Some(offset), want as usize) {
                // The file shrank since load: the promised length cannot be met.
                Ok(0) => return Err(SendError::FileChanged),
                Ok(_) if !disk.still_loaded(file) => return Err(SendError::FileChanged),
                Ok(_) => Step::Sent(*offset - before),
                Err(e) => Step::of(Err(e))?,
            }
        } else {
            let want = (*end - *offset).min(wire.copy_chunk(COPY_CHUNK)).min(room) as usize;
            if bounce.len() < want {
                bounce.resize(COPY_CHUNK as usize, 0);
            }
            let chunk = &mut bounce[..want];
            read_exact_at(file, chunk, *offset).map_err(|_| SendError::FileChanged)?;
            // A write changes the modification time before the data, so a
            // stamp unchanged after the read means the copy holds the loaded
            // bytes.
            if !disk.still_loaded(file) {
                return Err(SendError::FileChanged);
            }
            let step = Step::of(wire.send(&[IoSlice::new(chunk)], false).map(|n| n as u64))?;
            if let Step::Sent(n) = step {
                *offset += n;
            }
            step
        };
        if offset == end {
            self.cursor += 1;
        }
        Ok(step)
    }

    /// One send (a single run: lwan measured send ~10% cheaper than writev for
    /// small responses) or one writev over consecutive memory parts, frozen
    /// copies and stamps among them when `copy_still` (else the gather
    /// stops at one, for a pipe to carry it).
    fn write_gathered(&self, wire: &mut Wire<'_>, copy_still: bool) -> rustix::io::Result<usize> {
        // The usual small response, head and body in one run of the
        // buffer: no array of slices to fill.
        if let [Part::Inline(run)] = &self.parts[self.cursor..] {
            return wire.send(&[IoSlice::new(&self.buf[run.clone()])], self.closes);
        }
        let mut slices: [IoSlice<'_>; MAX_IOVECS] = std::array::from_fn(|_| IoSlice::new(&[]));
        let mut count = 0;
        for part in &self.parts[self.cursor..] {
            if count == MAX_IOVECS {
                break;
            }
            slices[count] = match part {
                Part::Inline(r) => IoSlice::new(&self.buf[r.clone()]),
                Part::Memory(b) => IoSlice::new(b),
                Part::Stamp(s) if copy_still => IoSlice::new(s.bytes()),
                Part::Stamp(_) => break,
                Part::File { .. } => match frozen(part) {
                    Some((copy, range)) if copy_still => match copy.as_ref().get(range) {
                        Some(bytes) => IoSlice::new(bytes),
                        None => break,
                    },
                    _ => break,
                },
            };
            count += 1;
        }
        let next_is_carried = matches!(
            self.parts.get(self.cursor + count),
            Some(Part::File { .. } | Part::Stamp(_))
        );
        // MSG_MORE before a sendfile or a pipe lets the head share a
        // segment with the body (nginx's tcp_nopush does the same with
        // TCP_CORK).
        wire.send(&slices[..count], next_is_carried || self.closes)
    }

    /// Marks `n` bytes as sent, from the cursor on.
    fn advance(&mut self, mut n: usize) {
        while n > 0 {
            let part = &mut self.parts[self.cursor];
            // A file part is in a gathered write or a pipe only when it is
            // a frozen copy (see `write_gathered`, `load_relay`).
            let len = match part {
                Part::Inline(r) => r.len(),
                Part::Memory(b) => b.len(),
                Part::Stamp(s) => s.bytes().len(),
                Part::File { offset, end, .. } => (*end - *offset) as usize,
            };
            if n < len {
                match part {
                    Part::Inline(r) => r.start += n,
                    Part::Memory(b) => *b = b.slice(n..),
                    Part::Stamp(s) => s.skip(n),
                    Part::File { offset, .. } => *offset += n as u64,
                }
                return;
            }
            n -= len;
            self.cursor += 1;
        }
    }

    /// Empties the outbox, keeping the buffer's capacity for the next batch.
    /// A pipe still holding bytes is closed with them: they were this
    /// outbox's, and no other may send them.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.parts.clear();
        self.cursor = 0;
        self.open_run = 0;
        self.relay = None;
        self.closes = false;
    }
}

/// The unsent bytes of a part a pipe may carry: a stamp, or a frozen copy's.
fn still(part: &Part) -> Option<Still<'_>> {
    match part {
        Part::Stamp(stamp) => Some(stamp.still()),
        _ => {
            let (copy, range) = frozen(part)?;
            copy.still(range)
        }
    }
}

/// A file part that is a frozen copy, and the range of it still unsent.
fn frozen(part: &Part) -> Option<(&tachyon_sys::Frozen, Range<usize>)> {
    let Part::File {
        body, offset, end, ..
    } = part
    else {
        return None;
    };
    Some((body.frozen_copy()?, *offset as usize..*end as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(bytes: &'static [u8]) -> Arc<Representation> {
        Arc::new(Representation::in_memory(Bytes::from_static(bytes)))
    }

    #[test]
    fn unsent_output_moves_out_and_leaves_the_outbox_clean() {
        let mut out = Outbox::default();
        out.buf().extend_from_slice(b"HEAD1");
        out.push_body(&memory(b"body-one"), 0..8, None);
        out.buf().extend_from_slice(b"HEAD2");
        out.advance(3);
        let rest = out.take_unsent();
        assert!(out.is_empty());
        assert_eq!(out.pending_bytes(), 0);
        assert_eq!(rest.pending_bytes(), 2 + 8 + 5);
        assert_eq!(rest.buf, b"D1HEAD2");
        assert!(rest.footprint() < 256, "{}", rest.footprint());
    }

    /// The representation of a site's one file, `name` holding `bytes`
    /// (frozen from the snapshot's `FREEZE_FROM` on), and the site's folder.
    fn loaded_file(name: &str, bytes: &[u8]) -> (tachyon_testkit::Scratch, Arc<Representation>) {
        let dir = tachyon_testkit::Scratch::new("outbox");
        std::fs::write(dir.join(name), bytes).unwrap();
        let options = tachyon_snapshot::LoadOptions {
            settle: std::time::Duration::ZERO,
            ..Default::default()
        };
        let site = tachyon_snapshot::Snapshot::load(dir.path(), &options).unwrap();
        let path = format!("/{name}");
        let Some(tachyon_snapshot::Entry::File(file)) = site.lookup(path.as_bytes()) else {
            panic!("{name} is a file");
        };
        (dir, Arc::clone(file))
    }

    fn loaded(len: usize) -> (tachyon_testkit::Scratch, Arc<Representation>) {
        loaded_file("f.bin", &vec![5u8; len])
    }

    /// Flushes `out` whole into a socket pair; what its reader got, and
    /// the carriers the flush was lent.
    fn flushed_whole(out: &mut Outbox) -> (Vec<u8>, Carriers) {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let a: std::os::fd::OwnedFd = a.into();
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            std::io::Read::read_to_end(&mut &b, &mut got).unwrap();
            got
        });
        let mut carriers = Carriers::default();
        let flushed = out.flush(&mut Wire::Plain(&a), u64::MAX, &mut carriers);
        assert_eq!(flushed.unwrap().state, Flushed::All);
        drop(a);
        (reader.join().unwrap(), carriers)
    }

    /// Sends `len` bytes of `file` after a head through a socket pair;
    /// whether a pipe carried them.
    fn sent_through_a_pipe(file: &Arc<Representation>, len: usize) -> bool {
        let mut out = Outbox::default();
        out.buf().extend_from_slice(b"HEAD");
        out.push_body(file, 0..len as u64, None);
        let (got, carriers) = flushed_whole(&mut out);
        assert_eq!(got.len(), 4 + len);
        // A pipe that carried the body comes back to the worker's idle ones.
        carriers.pipes.idle() == 1
    }

    #[test]
    fn a_small_frozen_body_is_copied_with_its_head_and_a_large_one_rides_a_pipe() {
        for (len, piped) in [(16 * 1024, false), (COPY_FROZEN_UP_TO as usize + 1, true)] {
            let (_dir, file) = loaded(len);
            assert!(file.frozen_copy().is_some());
            assert_eq!(sent_through_a_pipe(&file, len), piped, "{len} bytes");
        }
    }

    #[test]
    fn a_large_content_coding_rides_a_pipe_like_a_large_identity_body() {
        // gzip shrinks these by about a third: 96 KiB has a variant well
        // over `COPY_FROZEN_UP_TO`.
        let text = tachyon_testkit::random_letters(96 * 1024);
        let (_dir, file) = loaded_file("app.js", &text);
        let gzip = file
            .encoded
            .iter()
            .find(|e| e.coding == tachyon_http::encoding::Coding::Gzip)
            .expect("a gzip variant");
        let len = gzip.entry.len as usize;
        assert!(len > COPY_FROZEN_UP_TO as usize, "{len} bytes");
        assert!(gzip.entry.frozen_copy().is_some());
        assert!(sent_through_a_pipe(&gzip.entry, len));
    }

    /// HTTP/2's frames of two frozen bodies, interleaved, each header a
    /// stamp, between copied parts: in order, through one pipe.
    #[test]
    fn stamps_ride_a_pipe_with_the_frozen_frames_between_them() {
        let (_one_dir, one) = loaded_file("one.bin", &[1u8; 40_000]);
        let (_two_dir, two) = loaded_file("two.bin", &[2u8; 40_000]);
        let mut out = Outbox::default();
        let mut expected = Vec::new();
        out.buf().extend_from_slice(b"HEADERS");
        expected.extend_from_slice(b"HEADERS");
        for start in [0u64, 16_384, 32_768] {
            let end = (start + 16_384).min(40_000);
            for (file, byte) in [(&one, 1u8), (&two, 2u8)] {
                let head = [byte, start as u8, 0, 0, 0, 0, 0, 0, 9];
                out.push_stamp(Stamp::new(&head).unwrap());
                assert!(out.push_frozen(file, start..end));
                expected.extend_from_slice(&head);
                expected.extend(std::iter::repeat_n(byte, (end - start) as usize));
            }
        }
        out.buf().extend_from_slice(b"PING");
        expected.extend_from_slice(b"PING");
        assert!(!out.push_frozen(&memory(b"heap"), 0..4));
        let (got, carriers) = flushed_whole(&mut out);
        assert!(got == expected);
        assert_eq!(carriers.pipes.idle(), 1);
    }

    #[test]
    fn a_budget_pauses_a_flush_and_a_closed_peer_is_an_error() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let a: std::os::fd::OwnedFd = a.into();
        let mut wire = Wire::Plain(&a);
        let mut out = Outbox::default();
        let body = memory(&[7u8; 100]);
        // More parts than one writev takes: the budget stops the flush
        // after the first.
        for _ in 0..40 {
            out.push_body(&body, 0..100, None);
        }
        let first = out.flush(&mut wire, 1, &mut Carriers::default()).unwrap();
        assert_eq!((first.state, first.sent), (Flushed::Paused, 3200));
        let rest = out
            .flush(&mut wire, u64::MAX, &mut Carriers::default())
            .unwrap();
        assert_eq!((rest.state, rest.sent), (Flushed::All, 800));
        drop(b);
        out.buf().extend_from_slice(b"x");
        assert!(out
            .flush(&mut wire, u64::MAX, &mut Carriers::default())
            .is_err());
    }
}
