
#[cfg(test)]
mod microbench {
    use super::*;
    use crate::date::DateCache;
    use crate::h2::hpack::tests::ok_head;
    use crate::h2::hpack::Prepared;
    use crate::response::{Field, Name};

    #[test]
    #[ignore]
    fn index_cost() {
        let date = DateCache::new();
        let files: Vec<Prepared> = (0..500u64)
            .map(|n| {
                let fields = [
                    Field::new(Name::ETag, &format!("\"{:016x}\"", n * 7919)).unwrap(),
                    Field::new(Name::LastModified, "Sat, 05 Dec 2026 13:51:27 GMT").unwrap(),
                    Field::new(Name::CacheControl, "max-age=3600").unwrap(),
                    Field::new(Name::AcceptRanges, "bytes").unwrap(),
                    Field::new(Name::Vary, "accept-encoding").unwrap(),
                ];
                let ty = ["text/html", "text/css", "application/javascript", "image/png"][n as usize % 4];
                Prepared::new(&fields, ty, Some(crate::encoding::Coding::Br), 1000 + n * 13)
            })
            .collect();
        for (name, count) in [("one file", 1usize), ("500 files", 500)] {
            let blocks: Vec<Vec<u8>> = files[..count].iter().map(|p| ok_head(p, &date)).collect();
            let mut best = f64::MAX;
            let mut last = 0;
            for _ in 0..5 {
                let mut enc = Encoder::new(MAX_TABLE);
                let mut buf = Vec::with_capacity(512);
                let n = 2_000_000;
                let t = std::time::Instant::now();
                for i in 0..n {
                    buf.clear();
                    buf.extend_from_slice(&blocks[i % count]);
                    enc.index(&mut buf);
                }
                let copy = std::time::Instant::now();
                for i in 0..n {
                    buf.clear();
                    buf.extend_from_slice(&blocks[i % count]);
                    std::hint::black_box(&mut buf);
                }
                let e = ((copy - t).as_nanos() as f64 - copy.elapsed().as_nanos() as f64) / n as f64;
                best = best.min(e);
                last = buf.len();
            }
            println!("{name}: index {best:.1} ns a block (best of 5, less the copy), block {} -> {last}", blocks[0].len());
        }
    }
}
