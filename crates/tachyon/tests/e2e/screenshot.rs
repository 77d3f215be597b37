//! The directory listing as a person sees it: rendered by headless Chromium
//! with JavaScript off, checked for its content and saved as a PNG
//! (`target/tmp/listing.png`) for a human to look at.

use std::path::PathBuf;
use std::process::Command;

use crate::support::{Server, TestSite};

/// Debian's `chromium-headless-shell` (what CI installs), else `chromium`.
pub(crate) fn chromium() -> PathBuf {
    tachyon_testkit::chromium::binary()
        .expect("no headless Chromium: apt-get install -y chromium-headless-shell")
}

fn headless(args: &[&str], url: &str) -> String {
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-javascript",
        ])
        .args(["--window-size=900,600", "--hide-scrollbars"])
        .args(args)
        .arg(url)
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_listing_renders_in_chromium_without_javascript() {
    let site = TestSite::new();
    site.file("docs/guide.html", "g")
        .file("report <2026> & notes.txt", "n")
        .file("video.mp4", vec![0u8; 3 * 1024 * 1024])
        .file("readme.txt", "hello");
    let server = Server::start(&site.root, &["--listing"]);
    let url = server.url("/");

    // The DOM Chromium built, with JavaScript off: every entry is a link in
    // the table, names escaped once (the browser shows `<2026> &`).
    let dom = headless(&["--dump-dom"], &url);
    for needle in [
        "href=\"./docs/\"",
        "href=\"./readme.txt\"",
        "report &lt;2026&gt; &amp; notes.txt",
        "3.0 MiB",
    ] {
        assert!(dom.contains(needle), "DOM lacks {needle:?}:\n{dom}");
    }
    assert!(!dom.contains("<2026>"), "a name reached the DOM unescaped");

    let png = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("listing.png");
    let _ = std::fs::remove_file(&png);
    headless(&[&format!("--screenshot={}", png.display())], &url);
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png).expect("chromium wrote the screenshot"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).expect("PNG pixels");
    assert_eq!((info.width, info.height), (900, 600));
    let channels = info.color_type.samples();
    let background = &pixels[..3];
    let inked = pixels
        .chunks(channels)
        .filter(|p| p[..3] != *background)
        .count();
    let share = inked as f64 / (900.0 * 600.0);
    // A table of text on a plain page: neither blank nor a wall of color
    // (an error page, a missing stylesheet turning everything blue).
    assert!(
        (0.02..0.4).contains(&share),
        "{:.2}% of the pixels differ from the background in {}",
        share * 100.0,
        png.display()
    );
}
