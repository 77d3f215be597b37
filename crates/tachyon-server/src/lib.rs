//! The runtime: listeners, one event loop per core, connections.
//!
//! This is the only crate that touches sockets. Each worker thread owns its
//! own `SO_REUSEPORT` listener per address, its own epoll instance, its own
//! connections and its own scratch buffers; the [`Site`] (the current
//! snapshot) is the only thing workers share, read-only. What is sent is
//! decided by [`respond`], a pure function over the request head and the
//! snapshot; this crate only moves bytes.
//!
//! # Layout
//! - `sys`: socket setup (all through rustix's safe wrappers: no `unsafe`).
//! - `outbox`: the bytes a connection still has to send, and sending them.
//! - `respond`: request head + snapshot -> response parts in an outbox.
//! - `conn`: one connection's state and its read/parse/write cycle.
//! - `worker`: the epoll loop, accept, timers, shutdown.

mod balance;
mod clock;
mod conn;
mod ffi;
mod limits;
mod outbox;
pub mod respond;
mod site;
mod sys;
mod worker;

pub use limits::Limits;
pub use site::{Hosts, Site};
pub use sys::{bind_listeners, connection_cap, raise_fd_limit, BindError, Listeners};
pub use worker::{run, Shutdown};
