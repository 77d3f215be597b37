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
    Ok(())
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
        p if p.starts_with("/fabhttp/") => FAB_BYTES,
        p => p
            .trim_start_matches('/')
            .trim_end_matches('k')
            .parse::<u64>()
            .map_or(0, |k| k * 1024),
    }
}

struct XorShift(u64);

impl XorShift {
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            out.extend_from_slice(&self.0.to_le_bytes());
        }
        out.truncate(n);
        out
    }
}
