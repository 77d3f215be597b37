//! What a connection still has to send, and sending it with as few syscalls
//! as possible.
//!
//! An outbox is a byte buffer for heads and small bodies plus an ordered list
//! of parts: runs of that buffer, slices of in-memory bodies, and file regions
//! for sendfile. Pipelined responses accumulate in one outbox and leave in one
//! `send`/`writev` (may_minihttp and ntex batch the same way). Invariant: parts
//! are sent strictly in order, and a part is dropped only once fully written.

use std::io;
use std::ops::Range;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use bytes::Bytes;
use rustix::io::{Errno, IoSlice};
use rustix::net::SendFlags;
use tachyon_snapshot::{Body, FileEntry};

/// Most iovecs gathered into one writev.
const MAX_IOVECS: usize = 32;
/// Largest sendfile call (nginx's `sendfile_max_chunk` default is 2 MiB): keeps
/// one fast reader from monopolising the worker.
const SENDFILE_CHUNK: usize = 2 * 1024 * 1024;

enum Part {
    /// A run of `buf`.
    Inline(Range<usize>),
    /// A slice of an in-memory body.
    Memory(Bytes),
    /// A region of a disk-backed body; the entry keeps the file open.
    File {
        entry: Arc<FileEntry>,
        offset: u64,
        end: u64,
    },
}

/// The result of trying to send everything.
#[derive(Debug, PartialEq, Eq)]
pub enum Flushed {
    /// Everything was sent; the outbox is empty again.
    All,
    /// The socket buffer is full; wait for EPOLLOUT.
    Blocked,
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
}

impl Outbox {
    /// The buffer to append heads and small bodies to.
    #[inline]
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// True when nothing is waiting to be sent.
    pub fn is_empty(&self) -> bool {
        self.cursor == self.parts.len() && self.open_run == self.buf.len()
    }

    /// Bytes waiting, counting body parts: used to stop parsing pipelined
    /// requests when a client queues more than it reads.
    pub fn pending_bytes(&self) -> u64 {
        let inline = (self.buf.len() - self.open_run) as u64;
        self.parts[self.cursor..].iter().fold(inline, |sum, part| {
            sum + match part {
                Part::Inline(r) => r.len() as u64,
                Part::Memory(b) => b.len() as u64,
                Part::File { offset, end, .. } => end - offset,
            }
        })
    }

    /// Appends `range` of `entry`'s body as a part after what was written so far.
    pub fn push_body(&mut self, entry: &Arc<FileEntry>, range: Range<u64>) {
        if range.is_empty() {
            return;
        }
        self.seal();
        match &entry.body {
            Body::Memory(bytes) => self.parts.push(Part::Memory(
                bytes.slice(range.start as usize..range.end as usize),
            )),
            Body::Disk(_) => self.parts.push(Part::File {
                entry: Arc::clone(entry),
                offset: range.start,
                end: range.end,
            }),
        }
    }

    /// Records the open inline run as a part.
    fn seal(&mut self) {
        if self.buf.len() > self.open_run {
            self.parts.push(Part::Inline(self.open_run..self.buf.len()));
            self.open_run = self.buf.len();
        }
    }

    /// Sends as much as the socket takes.
    pub fn flush(&mut self, fd: &OwnedFd) -> io::Result<Flushed> {
        self.seal();
        while self.cursor < self.parts.len() {
            let sent = match &mut self.parts[self.cursor] {
                Part::File { entry, offset, end } => {
                    let Body::Disk(file) = &entry.body else {
                        unreachable!("File parts are disk bodies")
                    };
                    let want = (*end - *offset).min(SENDFILE_CHUNK as u64) as usize;
                    match rustix::fs::sendfile(fd, file, Some(offset), want) {
                        // The file shrank since load: the promised length cannot be met.
                        Ok(0) => {
                            return Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                "file truncated",
                            ))
                        }
                        Ok(_) => {
                            if *offset == *end {
                                self.cursor += 1;
                            }
                            continue;
                        }
                        Err(e) => Err(e),
                    }
                }
                _ => self.write_gathered(fd),
            };
            match sent {
                Ok(n) => self.advance(n),
                Err(Errno::AGAIN) => return Ok(Flushed::Blocked),
                Err(Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.clear();
        Ok(Flushed::All)
    }

    /// One send (a single run: lwan measured send ~10% cheaper than writev for
    /// small responses) or one writev over consecutive memory parts.
    fn write_gathered(&self, fd: &OwnedFd) -> rustix::io::Result<usize> {
        let mut slices: [IoSlice<'_>; MAX_IOVECS] = std::array::from_fn(|_| IoSlice::new(&[]));
        let mut count = 0;
        for part in &self.parts[self.cursor..] {
            if count == MAX_IOVECS {
                break;
            }
            slices[count] = match part {
                Part::Inline(r) => IoSlice::new(&self.buf[r.clone()]),
                Part::Memory(b) => IoSlice::new(b),
                Part::File { .. } => break,
            };
            count += 1;
        }
        let next_is_file = matches!(self.parts.get(self.cursor + count), Some(Part::File { .. }));
        if count == 1 {
            // MSG_MORE before a sendfile lets the head share a segment with the
            // body (nginx's tcp_nopush does the same with TCP_CORK).
            let flags = if next_is_file {
                SendFlags::MORE | SendFlags::NOSIGNAL
            } else {
                SendFlags::NOSIGNAL
            };
            rustix::net::send(fd, &slices[0], flags)
        } else {
            rustix::io::writev(fd, &slices[..count])
        }
    }

    /// Marks `n` bytes as sent, from the cursor on.
    fn advance(&mut self, mut n: usize) {
        while n > 0 {
            let part = &mut self.parts[self.cursor];
            let len = match part {
                Part::Inline(r) => r.len(),
                Part::Memory(b) => b.len(),
                Part::File { .. } => return,
            };
            if n < len {
                match part {
                    Part::Inline(r) => r.start += n,
                    Part::Memory(b) => *b = b.slice(n..),
                    Part::File { .. } => {}
                }
                return;
            }
            n -= len;
            self.cursor += 1;
        }
    }

    /// Empties the outbox, keeping the buffer's capacity for the next batch.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.parts.clear();
        self.cursor = 0;
        self.open_run = 0;
    }
}
