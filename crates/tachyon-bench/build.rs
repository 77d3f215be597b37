//! Stamps the binary with the state of the floor server's sources, the one
//! server it carries (`build/sources_stamp.rs`).

#[allow(dead_code)] // TACHYON is the server's.
#[path = "../../build/sources_stamp.rs"]
mod sources_stamp;

fn main() {
    sources_stamp::stamp("FLOOR_SOURCES", sources_stamp::FLOOR);
}
