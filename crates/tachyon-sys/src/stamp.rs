//! Stamps: a few bytes (an HTTP/2 DATA frame's header) written once into
//! memory that is never written again, so that a pipe may carry them
//! between pieces of frozen copies (see [`crate::Pipe::load`]).
//!
//! Why not the connection's buffer: `vmsplice` hands the pipe references
//! to the pages, not copies, and the socket a pipe is spliced into keeps
//! them until the client has read the bytes; a buffer that is reused or
//! freed meanwhile would change what the client gets. A stamp's page is
//! written at increasing offsets only, by the thread that owns it, and is
//! unmapped (never reused) once the thread has moved on to a new page and
//! the last stamp on it is dropped; pages the kernel still references
//! stay as they were until it lets go.
//!
//! Invariant: the bytes a [`Stamp`] covers were written before it was made
//! and are never written again.

use std::cell::RefCell;
use std::io;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::Still;

/// Bytes of one stamp page: 455 DATA frame headers, about 7 MiB of full
/// frames between two `mmap`s. Small, so that a connection that stops
/// reading with a stamp queued keeps one page alive, not more.
const PAGE: usize = 4096;

/// One mapped page of stamps, unmapped when its last stamp and its writer
/// are gone.
struct Page {
    base: NonNull<u8>,
}

// SAFETY: a `Page` is an address range owned by this value alone (only
// `Drop` unmaps it). Its bytes are read only through stamps, which cover
// bytes written before they were made, and written only by the thread
// whose `WRITER` holds it, at offsets past every stamp made so far; so
// readers on any thread read bytes that are never written again, and
// dropping it on any thread is sound.
unsafe impl Send for Page {}
// SAFETY: see `Send` above.
unsafe impl Sync for Page {}

impl Page {
    fn map() -> io::Result<Page> {
        let raw = crate::map_anonymous(PAGE)?;
        let base =
            NonNull::new(raw.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(Page { base })
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        // SAFETY: the last stamp on this page and its writer are gone (each
        // holds an `Arc` of it), so nothing reads or writes the range.
        // Pages a pipe or socket still references are the kernel's until it
        // lets go; they keep the bytes they had.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), PAGE);
        }
    }
}

/// A thread's current page and the offset of its first unwritten byte.
struct Writer {
    page: Arc<Page>,
    used: usize,
}

thread_local! {
    static WRITER: RefCell<Option<Writer>> = const { RefCell::new(None) };
}

/// Bytes written once, never again (see the module's invariant).
#[derive(Clone)]
pub struct Stamp {
    page: Arc<Page>,
    start: u16,
    len: u16,
}

impl std::fmt::Debug for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stamp({:?})", self.bytes())
    }
}

impl Stamp {
    /// Writes `bytes` (at most a page) into this thread's stamp page, or a
    /// new one when they do not fit its rest. An error only when no page
    /// can be mapped; the caller then copies the bytes instead.
    pub fn new(bytes: &[u8]) -> io::Result<Stamp> {
        if bytes.len() > PAGE {
            return Err(io::Error::other("a stamp longer than a page"));
        }
        WRITER.with_borrow_mut(|writer| {
            let writer = match writer {
                Some(w) if bytes.len() <= PAGE - w.used => w,
                _ => writer.insert(Writer {
                    page: Arc::new(Page::map()?),
                    used: 0,
                }),
            };
            let start = writer.used;
            // SAFETY: [start, start + len) is inside the page (checked
            // above) and past every stamp made on it, so no slice of it
            // exists and none will until this write is done; this thread
            // alone writes the page (it is its `WRITER`'s), through the raw
            // pointer, so the write aliases no reference; `bytes` is the
            // caller's memory, not the page's unwritten rest.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    writer.page.base.as_ptr().add(start),
                    bytes.len(),
                );
            }
            writer.used += bytes.len();
            Ok(Stamp {
                page: Arc::clone(&writer.page),
                start: start as u16,
                len: bytes.len() as u16,
            })
        })
    }

    /// The stamped bytes not yet skipped.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: [start, start + len) is inside the page, which lives as
        // long as the `Arc` this value holds; those bytes were written
        // before this stamp was made, on the thread that made it (another
        // thread only has it through something that synchronizes), and
        // are never written again (`new` writes only past them).
        unsafe {
            std::slice::from_raw_parts(
                self.page.base.as_ptr().add(usize::from(self.start)),
                usize::from(self.len),
            )
        }
    }

    /// Drops the first `n` bytes (sent already).
    pub fn skip(&mut self, n: usize) {
        let n = n.min(usize::from(self.len)) as u16;
        self.start += n;
        self.len -= n;
    }

    /// The bytes, for a pipe to carry.
    pub fn still(&self) -> Still<'_> {
        Still(self.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_keep_their_bytes_across_pages_and_threads() {
        let made: Vec<(Stamp, [u8; 9])> = (0..1000u32)
            .map(|n| {
                let mut head = [0u8; 9];
                head[..4].copy_from_slice(&n.to_be_bytes());
                head[8] = n as u8;
                (Stamp::new(&head).unwrap(), head)
            })
            .collect();
        // 1000 stamps of 9 bytes span three pages.
        let first = &made[0].0.page;
        assert!(!Arc::ptr_eq(first, &made[999].0.page));
        let elsewhere = std::thread::spawn(move || {
            // Another thread's stamps go on its own page.
            let other = Stamp::new(b"other").unwrap();
            assert!(made.iter().all(|(s, _)| !Arc::ptr_eq(&s.page, &other.page)));
            made.iter().all(|(stamp, head)| stamp.bytes() == head)
        });
        assert!(elsewhere.join().unwrap());
    }

    #[test]
    fn a_skipped_stamp_gives_its_rest() {
        let mut stamp = Stamp::new(b"abcdefghi").unwrap();
        stamp.skip(4);
        assert_eq!(stamp.bytes(), b"efghi");
        stamp.skip(100);
        assert_eq!(stamp.bytes(), b"");
        assert!(Stamp::new(&[0u8; PAGE + 1]).is_err());
    }
}
