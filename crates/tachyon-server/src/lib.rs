//! The runtime: listeners, one event loop per core, connections.
//!
//! This is the only crate that touches sockets. Each worker thread owns its
//! own `SO_REUSEPORT` listener per address, its own epoll instance, its own
//! connections and its own scratch buffers. Workers share two things: the
//! [`Live`] (the current generation of snapshots, read-only) and the
//! balancer's counters (`balance`). What is sent is decided by
//! `reply::decide`, a pure function over the request head and the
//! snapshot, and spelled by the protocol's encoder; this crate only moves
//! bytes.
//!
//! # Layout
//! - `sys`: socket setup through rustix's safe wrappers (and `tachyon-sys`
//!   for the one socket option rustix lacks: the workspace's only `unsafe`).
//! - `limits`, `clock`: the bounds the server enforces and the coarse
//!   clocks that time them.
//! - `live`: the generation being served (snapshots and TLS settings),
//!   swapped atomically on reload.
//! - `tls`: certificates by SNI and the rustls settings HTTPS starts from;
//!   `acme`: the challenge answers and certificate facts an ACME client
//!   shares with the server.
//! - `reply`: request head + snapshot -> the reply, protocol-neutral.
//! - `h1`: a reply written as HTTP/1.1 into an outbox.
//! - `outbox`: the bytes a connection still has to send, and sending them;
//!   `pipes`: the pipes that carry frozen bodies to sockets.
//! - `wire`: the socket, or a TLS session in front of it; `record`: TLS
//!   1.3 records once rustls has run the handshake.
//! - `conn`: one connection's state and its read/parse/write cycle.
//! - `balance`: moving connections off a worker the kernel's hash overloads.
//! - `worker`: the epoll loop, accept, timers, shutdown.
//! - `guard`: a panic in one connection's turn closes that connection only.
//! - `stats`, `access`, `admin`: what workers count and log, and the admin
//!   listener that serves the counts (`/metrics`) and health.

pub mod access;
pub mod acme;
pub mod admin;
mod answer;
mod balance;
mod boost;
mod clock;
mod conn;
mod guard;
mod h1;
mod h2;
mod h3;
mod limits;
mod live;
mod outbox;
mod pipes;
mod quic;
mod record;
mod reply;
mod serving;
mod session;
pub mod stats;
mod sys;
pub mod tls;
mod wire;
mod worker;

pub use h3::H3Limits;
pub use limits::Limits;
pub use live::{Generation, Live};
pub use pipes::limit_pipes;
pub use serving::Https;
pub use sys::{
    adopt_listeners, bind_listeners, check_addresses, connection_cap, BindError, Endpoint, Handed,
    ListenOptions, Listeners, QuicSocket, Scheme, LOOPBACK_CONGESTION,
};
pub use worker::{run, Observe, Shutdown};
