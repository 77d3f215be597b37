//! End-to-end specs: the real binary on an ephemeral loopback port, real
//! clients (a raw socket for exact bytes, ureq, curl, ab). One test binary,
//! one module per area.

mod support;

mod acme;
mod balance;
mod basic;
mod cli;
mod clients;
mod conditional;
mod dictionary;
mod encoding;
mod errors;
mod faults;
mod features;
mod h2;
mod h3;
mod hosts;
mod limits;
mod observe;
mod range;
mod reload;
mod screenshot;
mod security;
mod tls;
mod upgrade;
