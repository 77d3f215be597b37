//! One connection's bug never takes the others down: a panic while a
//! connection takes its turn (a parser, rustls, any crate it calls) is
//! caught, that connection alone is closed, and the worker goes on with
//! the rest. A worker thread that dies anyway is started again
//! ([`crate::worker::run`]).
//!
//! Owns the catching, the line a panic is logged with (the request being
//! answered, noted by [`note_request`] as each one is decided), and, in
//! debug builds only, the request that panics on purpose so that specs can
//! prove all this through a real socket ([`PANIC_PATH`]).
//!
//! Invariant: nothing of the connection that panicked reaches another: the
//! worker closes it and makes its shared buffers anew (the read buffer, the
//! outbox, the pipes and bounce buffer, the scratch space), since the
//! unwind may have left any of them mid-use; the closed connection's
//! charges are returned as for any close.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use tachyon_http::RequestHead;

/// A request for this path panics while its reply is decided, in debug
/// builds (the ones `cargo test` runs); release builds have no such path.
#[cfg(debug_assertions)]
pub const PANIC_PATH: &[u8] = b"/__tachyon_test_panic__";
/// And this one makes its worker's loop panic once the turn is over,
/// outside any connection's turn: the worker dies and is started again.
#[cfg(debug_assertions)]
pub const WORKER_PANIC_PATH: &[u8] = b"/__tachyon_test_worker_panic__";

/// The longest request line kept for the log.
const NOTED_MAX: usize = 256;

thread_local! {
    /// The request the connection taking its turn is answering.
    static SERVING: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// A request asked for this worker's loop to panic ([`WORKER_PANIC_PATH`]).
    #[cfg(debug_assertions)]
    static WORKER_PANIC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// In debug builds, panics if a request of this loop turn asked for it
/// ([`WORKER_PANIC_PATH`]); the worker's loop calls it between turns.
pub fn worker_panic_asked() {
    #[cfg(debug_assertions)]
    if WORKER_PANIC.replace(false) {
        panic!("the test hook's request asked for its worker to panic");
    }
}

/// Notes the request being answered (its method and target), for the log
/// line if the turn panics; in debug builds, panics for [`PANIC_PATH`].
pub fn note_request(head: &RequestHead<'_>) {
    SERVING.with_borrow_mut(|line| {
        line.clear();
        line.extend_from_slice(head.raw_method);
        line.push(b' ');
        let room = NOTED_MAX.saturating_sub(line.len());
        line.extend_from_slice(&head.raw_target[..head.raw_target.len().min(room)]);
    });
    #[cfg(debug_assertions)]
    if head.raw_target == PANIC_PATH {
        panic!("the test hook's request asked for a panic");
    }
    #[cfg(debug_assertions)]
    if head.raw_target == WORKER_PANIC_PATH {
        WORKER_PANIC.set(true);
    }
}

/// What a caught panic said, and the request it happened on.
#[derive(Debug)]
pub struct Panicked {
    pub message: String,
    /// Empty when no request was being answered (a handshake, a frame).
    pub request: String,
}

impl std::fmt::Display for Panicked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.request.is_empty() {
            true => write!(f, "{}", self.message),
            false => write!(f, "{} (serving {:?})", self.message, self.request),
        }
    }
}

/// Runs one connection's turn; a panic in it comes back as [`Panicked`].
pub fn contain<R>(turn: impl FnOnce() -> R) -> Result<R, Panicked> {
    SERVING.with_borrow_mut(Vec::clear);
    catch_unwind(AssertUnwindSafe(turn)).map_err(|payload| Panicked {
        message: message(payload.as_ref()),
        request: SERVING.with_borrow(|line| String::from_utf8_lossy(line).into_owned()),
    })
}

/// The text a panic was raised with.
pub fn message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

#[cfg(test)]
mod tests {
    use tachyon_http::request::{parse, HeadLimits, Parsed};

    use super::*;

    /// Notes the request `line` as a turn would, then panics.
    fn panic_serving(line: &[u8]) -> Panicked {
        let mut input = line.to_vec();
        input.extend_from_slice(b" HTTP/1.1\r\nHost: t\r\n\r\n");
        let limits = HeadLimits {
            max_head_bytes: 64 * 1024,
            max_target_bytes: 64 * 1024,
        };
        let mut combined = Vec::new();
        let Ok(Parsed::Complete(head)) = parse(&input, &mut combined, &limits) else {
            panic!("not a request");
        };
        contain(|| {
            note_request(&head);
            panic!("boom");
        })
        .unwrap_err()
    }

    #[test]
    fn a_contained_panic_names_its_message_and_request() {
        let caught = panic_serving(b"GET /a/b?c");
        assert_eq!(caught.message, "boom");
        assert_eq!(caught.request, "GET /a/b?c");
        // The next turn starts with nothing noted.
        let caught = contain(|| panic!("{}", 7)).unwrap_err();
        assert_eq!(
            (caught.message.as_str(), caught.request.as_str()),
            ("7", "")
        );
        assert_eq!(contain(|| 5).unwrap(), 5);
    }

    #[test]
    fn a_long_target_is_cut_for_the_log() {
        let mut line = b"GET /".to_vec();
        line.extend(vec![b'x'; 10_000]);
        let caught = panic_serving(&line);
        assert_eq!(caught.request.len(), NOTED_MAX);
    }
}
