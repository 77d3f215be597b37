//! Parses one HTTP/1.1 head N times (default 100,000): Chromium's request
//! for a stylesheet, as `bench/callgrind.sh` sends it, or wrk's minimal
//! request with `minimal`. For counting instructions per parse without a
//! server around it: run it under callgrind for two N and divide the
//! difference (`bench/results/h1-syntax-2026-12-04/README.md`).
//!
//!   cargo run --release -p tachyon-http --example parse_head -- 100000 [minimal]

use tachyon_http::request::{parse, HeadLimits, Parsed};

const CHROMIUM: &[u8] = b"GET /style.css HTTP/1.1\r\nHost: 127.0.0.1:18086\r\n\
sec-ch-ua-platform: \"Linux\"\r\n\
user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.8078.108 Safari/537.36\r\n\
sec-ch-ua: \"Not:A-Brand\";v=\"8\", \"Chromium\";v=\"156\", \"HeadlessChrome\";v=\"156\"\r\n\
sec-ch-ua-mobile: ?0\r\naccept: text/css,*/*;q=0.1\r\nsec-fetch-site: same-origin\r\n\
sec-fetch-mode: no-cors\r\nsec-fetch-dest: style\r\nreferer: /\r\n\
accept-encoding: gzip, deflate, br, zstd\r\naccept-language: en-US,en\r\n\r\n";

const MINIMAL: &[u8] = b"GET /1k HTTP/1.1\r\nHost: 127.0.0.1:18087\r\n\r\n";

fn main() {
    let mut args = std::env::args().skip(1);
    let times: usize = args.next().map_or(100_000, |n| n.parse().expect("a count"));
    let head = if args.next().as_deref() == Some("minimal") {
        MINIMAL
    } else {
        CHROMIUM
    };
    let limits = HeadLimits::default();
    let mut bytes = 0;
    for _ in 0..times {
        let mut combined = Vec::new();
        match parse(std::hint::black_box(head), &mut combined, &limits) {
            Ok(Parsed::Complete(parsed)) => bytes += std::hint::black_box(parsed).head_len,
            other => panic!("the head did not parse: {other:?}"),
        }
    }
    println!("{times} heads, {bytes} bytes");
}
