//! End-to-end specs: the real binary on an ephemeral loopback port, real
//! clients (a raw socket for exact bytes, ureq, curl, ab). One test binary,
//! one module per area.

mod support;

#[path = "e2e/basic.rs"]
mod basic;
#[path = "e2e/cli.rs"]
mod cli;
#[path = "e2e/clients.rs"]
mod clients;
#[path = "e2e/conditional.rs"]
mod conditional;
#[path = "e2e/encoding.rs"]
mod encoding;
#[path = "e2e/errors.rs"]
mod errors;
#[path = "e2e/faults.rs"]
mod faults;
#[path = "e2e/features.rs"]
mod features;
#[path = "e2e/hosts.rs"]
mod hosts;
#[path = "e2e/limits.rs"]
mod limits;
#[path = "e2e/range.rs"]
mod range;
#[path = "e2e/reload.rs"]
mod reload;
#[path = "e2e/screenshot.rs"]
mod screenshot;
#[path = "e2e/security.rs"]
mod security;
