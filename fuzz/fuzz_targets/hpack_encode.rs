//! Differential: a connection's HPACK encoder (`h2/hpack/encode.rs`)
//! rewriting heads as `Hpack` writes them, decoded by `loona-hpack` and by
//! tachyon's decoder, each keeping one table across the blocks as a client
//! does. The input chooses each head's status and fields (names from the
//! static table and new ones, values of any length) and the client's
//! SETTINGS_HEADER_TABLE_SIZE between heads. Asserts: both decoders take
//! every indexed block, to the fields the block had before indexing; an
//! indexed block is at most its size updates longer than the plain one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_http::h2::hpack::decode::BlockDecoder;
use tachyon_http::h2::hpack::{Encoder, Hpack};
use tachyon_http::head::Dialect;
use tachyon_http::response::Name;
use tachyon_http::Status;

const NAMES: [Name; 8] = [
    Name::ETag,
    Name::CacheControl,
    Name::ContentType,
    Name::ContentLength,
    Name::Date,
    Name::Location,
    Name::Vary,
    Name::XContentTypeOptions,
];
const STATUSES: [Status; 5] = [
    Status::Ok,
    Status::NotModified,
    Status::Found,
    Status::NotFound,
    Status::ServiceUnavailable,
];
const LIMITS: [usize; 6] = [0, 1, 64, 256, 4096, 1 << 16];

fuzz_target!(|data: &[u8]| {
    let mut encoder = Encoder::new(4096);
    let mut reference = loona_hpack::Decoder::new();
    reference.set_max_allowed_table_size(1 << 16);
    let mut ours = BlockDecoder::new(1 << 16);
    let custom = Name::Custom("x-custom".into());
    // Heads are separated by 0xff; in each, the first byte picks the
    // status and a table setting, then fields of two bytes (name, value
    // length) whose value is the bytes after them, as far as they go.
    for head in data.split(|&b| b == 0xff) {
        let Some((&first, mut rest)) = head.split_first() else {
            continue;
        };
        if first & 0x80 != 0 {
            encoder.set_limit(LIMITS[(first as usize >> 4) % LIMITS.len()]);
        }
        let mut block = Vec::new();
        Hpack::status(&mut block, STATUSES[first as usize % STATUSES.len()]);
        while let [name, len, tail @ ..] = rest {
            let len = (*len as usize).min(tail.len());
            let (value, after) = tail.split_at(len);
            // Values as a server writes them: visible ASCII.
            let value: Vec<u8> = value.iter().map(|b| b' ' + b % 94).collect();
            let name = NAMES.get(*name as usize % 9).unwrap_or(&custom);
            Hpack::field(&mut block, name, &[&value]);
            rest = after;
        }
        let plain = loona_hpack::Decoder::new()
            .decode(&block)
            .expect("a plain block");
        let before = block.len();
        encoder.index(&mut block);
        assert!(block.len() <= before + 8, "indexing lengthened the block");
        let theirs = reference
            .decode(&block)
            .expect("the reference takes an indexed block");
        assert_eq!(theirs, plain, "the reference decodes other fields");
        let mut mine = Vec::new();
        ours.decode(&block, |n, v, _| mine.push((n.to_vec(), v.to_vec())))
            .expect("tachyon's decoder takes an indexed block");
        assert_eq!(mine, plain, "tachyon's decoder decodes other fields");
    }
});
