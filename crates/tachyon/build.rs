//! Stamps the binary with the state of the sources it is built from
//! (`tachyon --version`; `build/sources_stamp.rs`).

#[path = "../../build/sources_stamp.rs"]
mod sources_stamp;

fn main() {
    // Every crate the server is built from, and the locked dependencies.
    sources_stamp::stamp(
        "TACHYON_SOURCES",
        &[
            "crates/tachyon",
            "crates/tachyon-http",
            "crates/tachyon-server",
            "crates/tachyon-snapshot",
            "crates/tachyon-sys",
            "Cargo.lock",
        ],
    );
}
