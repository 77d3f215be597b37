//! Stamps the binary with the state of the sources it is built from
//! (`tachyon --version`; `build/sources_stamp.rs`).

#[allow(dead_code)] // FLOOR is tachyon-bench's.
#[path = "../../build/sources_stamp.rs"]
mod sources_stamp;

fn main() {
    sources_stamp::stamp("TACHYON_SOURCES", sources_stamp::TACHYON);
}
