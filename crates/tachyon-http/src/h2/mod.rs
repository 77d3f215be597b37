//! HTTP/2 without I/O (RFC 9113): frames ([`frame`]), header compression
//! ([`hpack`]) and one connection's state ([`conn`]), beside the HTTP/1.1
//! parser and encoder and sharing their response model and request head.
//!
//! Bytes in, events and control frames out: the server drives a
//! [`conn::Connection`] with what it reads, answers its
//! [`conn::Event::Request`]s through the same `decide` as HTTP/1.1, and
//! writes response frames with [`hpack::Block`] and [`frame`].

pub mod conn;
pub mod frame;
pub mod hpack;

pub use conn::{Buffers, Connection, Event, Limits, Step, PREFACE};
