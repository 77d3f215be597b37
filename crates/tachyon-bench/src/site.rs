//! The document root every server serves: the files each seed's workload
//! fetches, generated deterministically so runs are comparable.

use std::path::Path;

/// File sizes of the Spare Cores matrix (seed 000), in KiB.
pub const SPARECORES_KIB: [u64; 5] = [1, 16, 64, 256, 512];
/// Seed 002's file: 105,165 bytes.
pub const BOA_BYTES: u64 = 105_165;
/// The large-file workloads' size.
pub const LARGE_BYTES: u64 = 10 * 1024 * 1024;
/// Seed 003: 1000 files of 8 KiB.
pub const FAB_FILES: u32 = 1000;
pub const FAB_BYTES: u64 = 8 * 1024;
/// The `compressed` suite's script: 100 KB of JavaScript, with a prebuilt
/// `.gz` beside it (what `gzip -9` makes; nginx's `gzip_static` sends it).
pub const APP_JS_BYTES: u64 = 100_000;
pub const APP_JS: &str = "/assets/app.js";

/// The ~100-byte page of seed 004 (binserve) and seed 001 (linuxconfig).
pub const INDEX_HTML: &str =
    "<!doctype html><html><head><title>tachyon</title></head><body><h1>Hello</h1></body></html>\n";

/// Writes the document root under `root` (idempotent).
pub fn generate(root: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(root.join("fabhttp/randomfiles"))?;
    std::fs::write(root.join("index.html"), INDEX_HTML)?;
    for kib in SPARECORES_KIB {
        // Spare Cores makes them with ftruncate: all zero bytes.
        std::fs::write(
            root.join(format!("{kib}k")),
            vec![0u8; (kib * 1024) as usize],
        )?;
    }
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    std::fs::write(root.join("boa.bin"), rng.bytes(BOA_BYTES as usize))?;
    std::fs::write(root.join("10m.bin"), rng.bytes(LARGE_BYTES as usize))?;
    for i in 1..=FAB_FILES {
        std::fs::write(
            root.join(format!("fabhttp/randomfiles/{i}")),
            rng.bytes(FAB_BYTES as usize),
        )?;
    }
    std::fs::create_dir_all(root.join("assets"))?;
    let js = javascript(&mut rng, APP_JS_BYTES as usize);
    std::fs::write(root.join("assets/app.js"), &js)?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut gz, &js)?;
    std::fs::write(root.join("assets/app.js.gz"), gz.finish()?)?;
    Ok(())
}

/// `len` bytes of plausible JavaScript: functions over a small vocabulary
/// with varying names and numbers, so it compresses about as well as a
/// real bundle (gzip about 4×) rather than as well as zeros.
pub fn javascript(rng: &mut XorShift, len: usize) -> Vec<u8> {
    const WORDS: [&str; 24] = [
        "render", "state", "props", "items", "widget", "label", "visible", "update", "config",
        "handler", "event", "target", "value", "index", "cache", "request", "response", "layout",
        "theme", "router", "session", "token", "filter", "counter",
    ];
    let mut out = String::from("\"use strict\";\n");
    let pick = |rng: &mut XorShift| {
        let n = u64::from_le_bytes(rng.bytes(8).try_into().unwrap_or_default());
        (WORDS[(n % 24) as usize], n % 1000)
    };
    while out.len() < len {
        let (a, n) = pick(rng);
        let (b, m) = pick(rng);
        let (c, k) = pick(rng);
        out.push_str(&format!(
            "export function {a}{b}{n}({c}, opts = {{}}) {{\n  const {b}s = ({c}.{a} || []).filter((x) => x.{b} !== {m} && x.id > opts.{c}Min);\n  if ({b}s.length > {k}) {{ return {b}s.slice(0, {k}).map((x) => `<li class=\"{a}-${{x.kind}}\">${{x.{b}}}</li>`).join(\"\"); }}\n  return {c}.{a}{n} ?? null;\n}}\n"
        ));
    }
    out.truncate(len);
    out.into_bytes()
}

/// A small site (the page and one 1 KiB file) for the footprint cells, so
/// resident memory compares servers, not how much content each caches.
pub fn generate_small(root: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(root)?;
    std::fs::write(root.join("index.html"), INDEX_HTML)?;
    std::fs::write(root.join("1k"), vec![0u8; 1024])?;
    Ok(())
}

/// The size of a generated file, by its URL path.
pub fn size_of(path: &str) -> u64 {
    match path {
        "/" | "/index.html" => INDEX_HTML.len() as u64,
        "/boa.bin" => BOA_BYTES,
        "/10m.bin" => LARGE_BYTES,
        APP_JS => APP_JS_BYTES,
        p if p.starts_with("/fabhttp/") => FAB_BYTES,
        p => p
            .trim_start_matches('/')
            .trim_end_matches('k')
            .parse::<u64>()
            .map_or(0, |k| k * 1024),
    }
}

pub struct XorShift(pub u64);

impl XorShift {
    /// The next 64 bits of the sequence.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            let word = self.next();
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_is_exactly_sized_and_compresses_like_a_real_bundle() {
        let dir = tachyon_testkit::Scratch::new("site");
        generate(dir.path()).unwrap();
        let js = std::fs::read(dir.join("assets/app.js")).unwrap();
        let gz = std::fs::read(dir.join("assets/app.js.gz")).unwrap();
        assert_eq!(js.len() as u64, APP_JS_BYTES);
        assert_eq!(size_of(APP_JS), APP_JS_BYTES);
        let ratio = js.len() as f64 / gz.len() as f64;
        // Real minified bundles gzip 3–6×; zeros would be ~1000×.
        assert!((3.0..8.0).contains(&ratio), "gzip ratio {ratio:.1}");
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut back).unwrap();
        assert_eq!(back, js, "the .gz is the script");
    }
}
