//! Times HPACK decoding of browser-like request blocks: tachyon's decoder
//! against `loona-hpack`, the one it replaced, on the same blocks.
//! `cargo run --release -p tachyon-http --example hpack_decode`
//!
//! The blocks are encoded as Chromium encodes them: every string
//! Huffman-coded, every field added to the dynamic table on first use, so
//! later requests index the repeated fields and send only a new `:path`.

use std::hint::black_box;
use std::time::Instant;

use tachyon_http::h2::hpack::decode::BlockDecoder;
use tachyon_http::h2::hpack::{huffman, integer};

/// A request's fields as Chromium 131 on Linux sends them for a script.
const FIELDS: &[(&str, &str)] = &[
    (":method", "GET"),
    (":authority", "127.0.0.1:8443"),
    (":scheme", "https"),
    (":path", "/_static/pygments.css"),
    ("sec-ch-ua-platform", "\"Linux\""),
    ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"),
    ("sec-ch-ua", "\"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\""),
    ("sec-ch-ua-mobile", "?0"),
    ("accept", "text/css,*/*;q=0.1"),
    ("sec-fetch-site", "same-origin"),
    ("sec-fetch-mode", "no-cors"),
    ("sec-fetch-dest", "style"),
    ("referer", "https://127.0.0.1:8443/library/index.html"),
    ("accept-encoding", "gzip, deflate, br, zstd"),
    ("accept-language", "en-US,en;q=0.9"),
    ("priority", "u=0"),
];

fn huffman_string(buf: &mut Vec<u8>, s: &str) {
    integer(buf, 0x80, 7, huffman::encoded_len(s.as_bytes()));
    huffman::encode(s.as_bytes(), buf);
}

/// The first block: every field a new-name literal with incremental
/// indexing. The table then holds them newest first.
fn first_block() -> Vec<u8> {
    let mut buf = Vec::new();
    for (name, value) in FIELDS {
        buf.push(0x40);
        huffman_string(&mut buf, name);
        huffman_string(&mut buf, value);
    }
    buf
}

/// A later block: every field indexed from the table but `:path`, a
/// literal naming the `:path` entry, not indexed (the table keeps its
/// size).
fn later_block(path: &str) -> Vec<u8> {
    let mut buf = Vec::new();
    let n = FIELDS.len();
    for (i, (name, _)) in FIELDS.iter().enumerate() {
        let index = 62 + (n - 1 - i);
        if *name == ":path" {
            integer(&mut buf, 0x00, 4, index);
            huffman_string(&mut buf, path);
        } else {
            integer(&mut buf, 0x80, 7, index);
        }
    }
    buf
}

fn main() {
    let paths: Vec<String> = (0..1000)
        .map(|i| format!("/_static/scripts/module-{i}.4f2a9c.js"))
        .collect();
    let first = first_block();
    let later: Vec<Vec<u8>> = paths.iter().map(|p| later_block(p)).collect();
    let rounds = 200;

    let start = Instant::now();
    let mut octets = 0usize;
    for _ in 0..rounds {
        let mut decoder = BlockDecoder::new(4096);
        for block in std::iter::once(&first).chain(&later) {
            decoder
                .decode(block, |n, v, _| octets += black_box(n.len() + v.len()))
                .unwrap();
        }
    }
    let ours = start.elapsed();

    let start = Instant::now();
    let mut reference_octets = 0usize;
    for _ in 0..rounds / 20 {
        let mut decoder = loona_hpack::Decoder::new();
        for block in std::iter::once(&first).chain(&later) {
            decoder
                .decode_with_cb(block, |n, v| {
                    reference_octets += black_box(n.len() + v.len())
                })
                .unwrap();
        }
    }
    let theirs = start.elapsed() * 20;
    assert_eq!(
        octets,
        reference_octets * 20,
        "both decoders saw the same fields"
    );

    let blocks = (rounds * (later.len() + 1)) as f64;
    println!(
        "{} blocks of {} fields ({} octets coded on average, {} decoded)",
        later.len() + 1,
        FIELDS.len(),
        later.iter().map(Vec::len).sum::<usize>() / later.len(),
        octets / (rounds * (later.len() + 1)),
    );
    println!(
        "tachyon      {:8.3} µs per block",
        ours.as_secs_f64() * 1e6 / blocks
    );
    println!(
        "loona-hpack  {:8.3} µs per block",
        theirs.as_secs_f64() * 1e6 / blocks
    );
    let start = Instant::now();
    let mut decoder = BlockDecoder::new(4096);
    for _ in 0..rounds {
        decoder
            .decode(&first, |n, v, _| octets += black_box(n.len() + v.len()))
            .unwrap();
    }
    println!(
        "tachyon, the first block alone (16 Huffman literals indexed): {:.3} µs",
        start.elapsed().as_secs_f64() * 1e6 / rounds as f64
    );
    let ua = FIELDS[5].1.as_bytes();
    let mut coded = Vec::new();
    huffman::encode(ua, &mut coded);
    let mut out = Vec::new();
    let start = Instant::now();
    for _ in 0..100_000 {
        out.clear();
        huffman::decode(black_box(&coded), &mut out).unwrap();
    }
    println!(
        "Huffman alone: {:.2} ns per coded octet",
        start.elapsed().as_secs_f64() * 1e9 / (100_000 * coded.len()) as f64
    );
}
